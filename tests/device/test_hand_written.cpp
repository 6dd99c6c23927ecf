// tests/device/test_hand_written.cpp — the emulator on hand-written StableHLO in the forms jax
// prints (pretty syntax, loc() annotations, argument attributes) and in the generic form.
#include <catch2/catch.hpp>  // TEST_CASE, CHECK

#include <string>  // std::string

#include "emulator_fixture.hpp"  // ttest::run_text

using namespace ttest;

TEST_CASE("emulator: jax-style pretty module", "[pjrt][emulator]") {
  const std::string text = R"mlir(#loc = loc(unknown)
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32> {mhlo.layout_mode = "default"} loc(unknown), %arg1: tensor<3xf32>) -> (tensor<2xf32> {jax.result_info = ""}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32> loc(#loc)
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
    %1 = stablehlo.multiply %arg0, %0 : tensor<2x3xf32>
    %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
    return %2 : tensor<2xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc1 = loc("x.py":1:0)
)mlir";
  auto out = run_text(text, {{ScalarType::Float, {2, 3}, {1, 2, 3, 4, 5, 6}}, {ScalarType::Float, {3}, {1, 10, 100}}});
  CHECK(out[0].values == std::vector<double>{321, 654});
}

TEST_CASE("emulator: generic-form module with regions", "[pjrt][emulator]") {
  const std::string text = R"mlir(module {
  func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2xf32> {
    %z = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %0 = "stablehlo.add"(%a, %b) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    %1 = "stablehlo.dot_general"(%0, %b) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    %2 = "stablehlo.compare"(%1, %a) {comparison_direction = #stablehlo<comparison_direction GT>, compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xi1>
    %3 = "stablehlo.select"(%2, %1, %a) : (tensor<2x2xi1>, tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    %4 = "stablehlo.reduce"(%3, %z) ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %s = "stablehlo.maximum"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%s) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 0>} : (tensor<2x2xf32>, tensor<f32>) -> tensor<2xf32>
    "func.return"(%4) : (tensor<2xf32>) -> ()
  }
}
)mlir";
  // a + b = [[2, 2], [3, 5]]; (a + b) @ b = [[8, 12], [18, 26]]; all > a; column max = [18, 26]
  auto out = run_text(text, {{ScalarType::Float, {2, 2}, {1, 0, 0, 1}}, {ScalarType::Float, {2, 2}, {1, 2, 3, 4}}});
  CHECK(out[0].values == std::vector<double>{18, 26});
}

TEST_CASE("emulator: pretty reduce with an explicit reducer block", "[pjrt][emulator]") {
  const std::string text = R"mlir(module {
  func.func public @main(%x: tensor<3xf32>) -> tensor<f32> {
    %c = stablehlo.constant dense<1.0> : tensor<f32>
    %r = stablehlo.reduce(%x init: %c) across dimensions = [0] : (tensor<3xf32>, tensor<f32>) -> tensor<f32>
     reducer(%a: tensor<f32>, %b: tensor<f32>)  {
      %m = stablehlo.multiply %a, %b : tensor<f32>
      stablehlo.return %m : tensor<f32>
    }
    return %r : tensor<f32>
  }
}
)mlir";
  auto out = run_text(text, {{ScalarType::Float, {3}, {2, 3, 4}}});
  CHECK(out[0].values == std::vector<double>{24});
}

TEST_CASE("emulator: jax-style NHWC convolution and pretty slice/compare/iota", "[pjrt][emulator]") {
  const std::string text = R"mlir(module @jit_conv {
  func.func public @main(%arg0: tensor<1x3x3x1xf32>, %arg1: tensor<2x2x1x1xf32>) -> (tensor<1x2x2x1xf32>, tensor<2xf32>, tensor<3xi1>, tensor<3xi32>) {
    %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[0, 0], [0, 0]], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]} : (tensor<1x3x3x1xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x2x1xf32>
    %1 = stablehlo.reshape %arg0 : (tensor<1x3x3x1xf32>) -> tensor<9xf32>
    %2 = stablehlo.slice %1 [1:5:3] : (tensor<9xf32>) -> tensor<2xf32>
    %3 = stablehlo.iota dim = 0 : tensor<3xi32>
    %4 = stablehlo.constant dense<1> : tensor<3xi32>
    %5 = stablehlo.compare  GE, %3, %4,  SIGNED : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
    return %0, %2, %5, %3 : tensor<1x2x2x1xf32>, tensor<2xf32>, tensor<3xi1>, tensor<3xi32>
  }
}
)mlir";
  auto out = run_text(text, {{ScalarType::Float, {1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9}},
                             {ScalarType::Float, {2, 2, 1, 1}, {1, 0, 0, 1}}});
  CHECK(out[0].values == std::vector<double>{6, 8, 12, 14});
  CHECK(out[1].values == std::vector<double>{2, 5});
  CHECK(out[2].values == std::vector<double>{0, 1, 1});
  CHECK(out[3].values == std::vector<double>{0, 1, 2});
}

TEST_CASE("emulator: calls to private functions, as jax emits them", "[pjrt][emulator]") {
  const std::string text = R"mlir(module @jit_mlp attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x2xf32> loc("x"), %arg1: tensor<2x2xf32> loc("w")) -> (tensor<2x2xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    %1 = call @relu(%0) : (tensor<2x2xf32>) -> tensor<2x2xf32>
    %2 = "func.call"(%1) {callee = @double} : (tensor<2x2xf32>) -> tensor<2x2xf32>
    return %2 : tensor<2x2xf32>
  }
  func.func private @relu(%arg0: tensor<2x2xf32>) -> tensor<2x2xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x2xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<2x2xf32>
    return %1 : tensor<2x2xf32>
  }
  func.func private @double(%arg0: tensor<2x2xf32>) -> tensor<2x2xf32> {
    %0 = func.call @add_self(%arg0) : (tensor<2x2xf32>) -> tensor<2x2xf32>
    return %0 : tensor<2x2xf32>
  }
  func.func private @add_self(%arg0: tensor<2x2xf32>) -> tensor<2x2xf32> {
    %0 = stablehlo.add %arg0, %arg0 : tensor<2x2xf32>
    return %0 : tensor<2x2xf32>
  }
}
)mlir";
  auto out = run_text(text, {{ScalarType::Float, {2, 2}, {1, -2, 3, 4}}, {ScalarType::Float, {2, 2}, {1, 0, 0, 1}}});
  CHECK(out[0].values == std::vector<double>{2, 0, 6, 8});
  // an unknown callee is a clear error
  try {
    device_client()->compile("func.func public @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                   "  %0 = call @nowhere(%x) : (tensor<2xf32>) -> tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n");
    FAIL("expected an error");
  } catch (const torchtpu::DeviceError& e) {
    CHECK(e.code() == bad_program_code());  // INVALID_ARGUMENT on the emulator, UNKNOWN on XLA
    CHECK(std::string(e.what()).find("@nowhere") != std::string::npos);
  }
}

TEST_CASE("emulator: hex-blob dense constants, as jax prints large arrays", "[pjrt][emulator]") {
  // [1.0, 2.0, -0.5] as little-endian f32 bytes; [7, -3] as i32; a bf16 splat of 1.0
  const std::string text = R"mlir(module {
  func.func public @main() -> (tensor<3xf32>, tensor<2xi32>, tensor<2x2xbf16>) {
    %0 = stablehlo.constant dense<"0x0000803F00000040000000BF"> : tensor<3xf32>
    %1 = stablehlo.constant dense<"0x07000000FDFFFFFF"> : tensor<2xi32>
    %2 = stablehlo.constant dense<"0x803F"> : tensor<2x2xbf16>
    return %0, %1, %2 : tensor<3xf32>, tensor<2xi32>, tensor<2x2xbf16>
  }
}
)mlir";
  auto out = run_text(text, {});
  CHECK(out[0].values == std::vector<double>{1.0, 2.0, -0.5});
  CHECK(out[1].values == std::vector<double>{7, -3});
  CHECK(out[2].values == std::vector<double>{1, 1, 1, 1});
}
