// tests/device/test_emulator_sort.cpp — stablehlo.sort with one or several operands and results
// (the text stablehlo::Builder::sort emits, and hand-written comparators) on the device under
// test, checked against values sorted by hand: NaN placement, stability, every dtype, sorting
// along an inner axis, and malformed sorts that must give an error, never a crash.
#include <catch2/catch.hpp>  // TEST_CASE, CHECK

#include <algorithm>  // std::stable_sort, std::sort
#include <chrono>     // std::chrono::steady_clock
#include <cmath>      // std::isnan, NAN, INFINITY
#include <numeric>    // std::iota
#include <string>     // std::string
#include <vector>     // std::vector

#include "emulator_fixture.hpp"  // ttest::run, run_text, HostTensor, device_client

using namespace ttest;
using torchtpu::DeviceError;

namespace {

/// Compiles `text` and returns the DeviceError it raises (fails the test if it compiles).
DeviceError compile_error(const std::string& text) {
  try {
    device_client()->compile(text);
  } catch (const DeviceError& e) {
    return e;
  }
  FAIL("compilation unexpectedly succeeded");
  return DeviceError(0, "");
}
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

/// `got` equals `want` element by element, NaN matching NaN.
void check_values(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    if (std::isnan(want[i])) CHECK(std::isnan(got[i]));
    else CHECK(got[i] == want[i]);
  }
}

/// The module of the task brief, as Builder::sort prints it: a two-operand float sort with the
/// NaN-last comparator along axis 1 (with an iota payload), and a one-operand descending i32 sort.
const char* const kBuilderModule = R"mlir(module @torchtpu attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%v0: tensor<2x3xf32>, %v5: tensor<4xi32>) -> (tensor<2x3xf32>, tensor<2x3xi64>, tensor<4xi32>) {
    %v1 = stablehlo.iota dim = 1 : tensor<2x3xi64>
    %v2:2 = "stablehlo.sort"(%v0, %v1) ({
    ^bb0(%v2_a0: tensor<f32>, %v2_b0: tensor<f32>, %v2_a1: tensor<i64>, %v2_b1: tensor<i64>):
      %v2_an = stablehlo.compare NE, %v2_a0, %v2_a0, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %v2_bn = stablehlo.compare NE, %v2_b0, %v2_b0, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %v2_c = stablehlo.compare LT, %v2_a0, %v2_b0, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %v2_o = stablehlo.or %v2_bn, %v2_c : tensor<i1>
      %v2_nt = stablehlo.not %v2_an : tensor<i1>
      %v2_r = stablehlo.and %v2_nt, %v2_o : tensor<i1>
      stablehlo.return %v2_r : tensor<i1>
    }) {dimension = 1 : i64, is_stable = true} : (tensor<2x3xf32>, tensor<2x3xi64>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
    %v3 = stablehlo.reshape %v2#0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %v4 = stablehlo.reshape %v2#1 : (tensor<2x3xi64>) -> tensor<2x3xi64>
    %v6:1 = "stablehlo.sort"(%v5) ({
    ^bb0(%v6_a0: tensor<i32>, %v6_b0: tensor<i32>):
      %v6_r = stablehlo.compare GT, %v6_a0, %v6_b0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %v6_r : tensor<i1>
    }) {dimension = 0 : i64, is_stable = true} : (tensor<4xi32>) -> (tensor<4xi32>)
    %v7 = stablehlo.reshape %v6#0 : (tensor<4xi32>) -> tensor<4xi32>
    return %v3, %v4, %v7 : tensor<2x3xf32>, tensor<2x3xi64>, tensor<4xi32>
  }
}
)mlir";

/// A one-operand f32 sort of tensor<4xf32> whose comparator block is `region` (for errors).
std::string sort_module(const std::string& operands, const std::string& region, const std::string& signature,
                        const std::string& params = "%x: tensor<4xf32>, %y: tensor<4xi32>",
                        const std::string& results = "tensor<4xf32>") {
  return "func.func public @main(" + params + ") -> " + results + " {\n"
         "  %s:1 = \"stablehlo.sort\"(" + operands + ") ({\n" + region +
         "  }) {dimension = 0 : i64} : " + signature + "\n"
         "  return %s#0 : " + results + "\n}\n";
}

}  // namespace

TEST_CASE("sort: the Builder's module: NaN last, stable ties, payload permuted alike, descending ints",
          "[pjrt][emulator][sort]") {
  const auto out = run_text(kBuilderModule, {{ScalarType::Float, {2, 3}, {3, NAN, 1, 2, 2, -INFINITY}},
                                             {ScalarType::Int32, {4}, {1, 5, -3, 5}}});
  REQUIRE(out.size() == 3);
  CHECK(out[0].dims == std::vector<int64_t>{2, 3});
  check_values(out[0].values, {1, 3, NAN, -INFINITY, 2, 2});
  CHECK(out[1].dtype == ScalarType::Int64);
  CHECK(out[1].values == std::vector<double>{2, 0, 1, 2, 0, 1});  // the two 2s keep their order
  CHECK(out[2].values == std::vector<double>{5, 5, 1, -3});
}

TEST_CASE("sort: Builder::sort, ascending and descending, every dtype", "[pjrt][emulator][sort]") {
  const std::vector<double> data = {3, 0, 2, 1, 2, 0, 3};
  for (ScalarType t : {ScalarType::Bool, ScalarType::UInt8, ScalarType::Int32, ScalarType::Int64, ScalarType::Half,
                       ScalarType::BFloat16, ScalarType::Float, ScalarType::Double}) {
    for (bool descending : {false, true}) {
      INFO("dtype " << torchtpu::dtype_name(t) << (descending ? ", descending" : ", ascending"));
      std::vector<double> v = data;
      if (t == ScalarType::Bool)
        for (double& x : v) x = x >= 2 ? 1 : 0;
      shlo::Builder b;
      const shlo::Value x = b.parameter(t, {7});
      const shlo::Value i = b.iota(ScalarType::Int32, {7}, 0);
      const auto r = b.sort({x, i}, 0, descending);
      b.set_results({r[0], r[1]});
      std::vector<double> idx(7);
      std::iota(idx.begin(), idx.end(), 0.0);
      std::stable_sort(idx.begin(), idx.end(), [&](double p, double q) {
        const double a = v[static_cast<size_t>(p)], c = v[static_cast<size_t>(q)];
        return descending ? a > c : a < c;
      });
      std::vector<double> want;
      for (double k : idx) want.push_back(v[static_cast<size_t>(k)]);
      const auto out = run(b, {{t, {7}, v}});
      CHECK(out[0].dtype == t);
      CHECK(out[0].values == want);
      CHECK(out[1].values == idx);  // stable: equal keys keep their order
    }
  }
}

TEST_CASE("sort: float NaN placement and signed zeros follow the comparator", "[pjrt][emulator][sort]") {
  const std::vector<double> v = {1, NAN, -INFINITY, 3, NAN, 0.5, INFINITY};
  for (bool descending : {false, true}) {
    shlo::Builder b;
    const shlo::Value x = b.parameter(ScalarType::Float, {7});
    const shlo::Value i = b.iota(ScalarType::Int64, {7}, 0);
    const auto r = b.sort({x, i}, 0, descending);
    b.set_results({r[0], r[1]});
    const auto out = run(b, {{ScalarType::Float, {7}, v}});
    if (!descending) {  // ascending: NaN last, in their original order
      check_values(out[0].values, {-INFINITY, 0.5, 1, 3, INFINITY, NAN, NAN});
      CHECK(out[1].values == std::vector<double>{2, 5, 0, 3, 6, 1, 4});
    } else {  // descending: NaN first
      check_values(out[0].values, {NAN, NAN, INFINITY, 3, 1, 0.5, -INFINITY});
      CHECK(out[1].values == std::vector<double>{1, 4, 6, 3, 0, 5, 2});
    }
  }
}

TEST_CASE("sort: several operands keyed on the first keep equal keys in order", "[pjrt][emulator][sort]") {
  shlo::Builder b;
  const shlo::Value key = b.parameter(ScalarType::Int32, {6});
  const shlo::Value f = b.parameter(ScalarType::Float, {6});
  const shlo::Value p = b.parameter(ScalarType::Bool, {6});
  const auto r = b.sort({key, f, p}, 0, false);
  b.set_results({r[0], r[1], r[2]});
  const auto out = run(b, {{ScalarType::Int32, {6}, {2, 1, 2, 1, 0, 2}},
                           {ScalarType::Float, {6}, {10, 20, 30, 40, 50, 60}},
                           {ScalarType::Bool, {6}, {1, 0, 0, 1, 1, 0}}});
  CHECK(out[0].values == std::vector<double>{0, 1, 1, 2, 2, 2});
  CHECK(out[1].values == std::vector<double>{50, 20, 40, 10, 30, 60});
  CHECK(out[2].values == std::vector<double>{1, 0, 1, 1, 0, 0});
}

TEST_CASE("sort: along the outer axis of a matrix", "[pjrt][emulator][sort]") {
  shlo::Builder b;
  const shlo::Value x = b.parameter(ScalarType::Float, {3, 2});
  const auto r = b.sort({x}, 0, false);
  b.set_results({r[0]});
  const auto out = run(b, {{ScalarType::Float, {3, 2}, {5, -1, 2, 7, 9, 0}}});
  CHECK(out[0].values == std::vector<double>{2, -1, 5, 0, 9, 7});  // each column sorted
}

TEST_CASE("sort: a hand-written two-key comparator, properties syntax and group names", "[pjrt][emulator][sort]") {
  // Ascending on the i32 key, ties broken by descending f32 (through negate), payload along;
  // default dimension (-1, the last axis); %s is %s#0.
  const std::string text = R"mlir(func.func public @main(%k: tensor<2x4xi32>, %f: tensor<2x4xf32>) -> (tensor<2x4xi32>, tensor<2x4xf32>) {
  %s:2 = "stablehlo.sort"(%k, %f) <{is_stable = true}> ({
  ^bb0(%a0: tensor<i32>, %b0: tensor<i32>, %a1: tensor<f32>, %b1: tensor<f32>):
    %lt = stablehlo.compare LT, %a0, %b0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %eq = stablehlo.compare EQ, %a0, %b0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %na = stablehlo.negate %a1 : tensor<f32>
    %nb = stablehlo.negate %b1 : tensor<f32>
    %gt = "stablehlo.compare"(%na, %nb) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %tie = stablehlo.and %eq, %gt : tensor<i1>
    %f0 = stablehlo.constant dense<false> : tensor<i1>
    %t = stablehlo.select %tie, %tie, %f0 : tensor<i1>, tensor<i1>
    %r = stablehlo.or %lt, %t : tensor<i1>
    "stablehlo.return"(%r) : (tensor<i1>) -> ()
  }) : (tensor<2x4xi32>, tensor<2x4xf32>) -> (tensor<2x4xi32>, tensor<2x4xf32>)
  return %s, %s#1 : tensor<2x4xi32>, tensor<2x4xf32>
}
)mlir";
  const auto out = run_text(text, {{ScalarType::Int32, {2, 4}, {1, 0, 1, 0, 3, 3, 3, -2}},
                                   {ScalarType::Float, {2, 4}, {1, 2, 3, 4, 5, 7, 6, 8}}});
  CHECK(out[0].values == std::vector<double>{0, 0, 1, 1, -2, 3, 3, 3});
  CHECK(out[1].values == std::vector<double>{4, 2, 3, 1, 8, 7, 6, 5});
}

TEST_CASE("sort: 100000 elements sort correctly and quickly", "[pjrt][emulator][sort]") {
  const int64_t n = 100000;
  const std::vector<double> v = random_values(static_cast<size_t>(n), 7);
  shlo::Builder b;
  const shlo::Value x = b.parameter(ScalarType::Float, {n});
  const shlo::Value i = b.iota(ScalarType::Int32, {n}, 0);
  const auto r = b.sort({x, i}, 0, false);
  b.set_results({r[0], r[1]});
  const auto start = std::chrono::steady_clock::now();
  const auto out = run(b, {{ScalarType::Float, {n}, v}});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<double> want;
  for (double e : v) want.push_back(static_cast<float>(e));
  std::stable_sort(want.begin(), want.end());
  CHECK(out[0].values == want);
  for (int64_t k = 0; k < n; ++k)
    if (out[0].values[static_cast<size_t>(k)] != static_cast<float>(v[static_cast<size_t>(out[1].values[static_cast<size_t>(k)])])) {
      FAIL("payload does not follow its key at " << k);
    }
  WARN("sorting 10^5 f32 with an index payload took " << seconds << " s (compile and copies included)");
  CHECK(seconds < 10);  // about 0.1 s on one core; generous for loaded machines
}

TEST_CASE("sort: empty tensors and a zero-length axis", "[pjrt][emulator][sort]") {
  shlo::Builder b;
  const shlo::Value x = b.parameter(ScalarType::Float, {2, 0});
  const auto r = b.sort({x}, 1, false);
  b.set_results({r[0]});
  const auto out = run(b, {{ScalarType::Float, {2, 0}, {}}});
  CHECK(out[0].dims == std::vector<int64_t>{2, 0});
  CHECK(out[0].values.empty());
}

TEST_CASE("sort: malformed sorts are errors naming the line", "[pjrt][errors][sort]") {
  const NoStablehloDump no_dump;  // invalid on purpose
  const std::string lt_f32 =
      "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "    %c = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
      "    stablehlo.return %c : tensor<i1>\n";
  // sanity: the well-formed module compiles
  CHECK_NOTHROW(device_client()->compile(sort_module("%x", lt_f32, "(tensor<4xf32>) -> tensor<4xf32>")));

  SECTION("wrong number of comparator arguments") {
    const std::string region =
        "  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<f32>):\n"
        "    %r = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
        "    stablehlo.return %r : tensor<i1>\n";
    const auto e = compile_error(sort_module("%x", region, "(tensor<4xf32>) -> tensor<4xf32>"));
    CHECK(e.code() == bad_program_code());
    if (on_emulator()) {
      CHECK(contains(e.what(), "line 3"));
      CHECK(contains(e.what(), "takes 3 arguments"));
    }
  }
  SECTION("two operands but a one-operand comparator") {
    const auto e = compile_error(
        "func.func public @main(%x: tensor<4xf32>, %y: tensor<4xi32>) -> tensor<4xf32> {\n"
        "  %s:2 = \"stablehlo.sort\"(%x, %y) ({\n" + lt_f32 +
        "  }) {dimension = 0 : i64} : (tensor<4xf32>, tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>)\n"
        "  return %s#0 : tensor<4xf32>\n}\n");
    CHECK(e.code() == bad_program_code());
    if (on_emulator()) CHECK(contains(e.what(), "need 4"));
  }
  SECTION("a comparator argument of the wrong type") {
    const std::string region =
        "  ^bb0(%a: tensor<i32>, %b: tensor<i32>):\n"
        "    %c = stablehlo.compare LT, %a, %b, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
        "    stablehlo.return %c : tensor<i1>\n";
    const auto e = compile_error(sort_module("%x", region, "(tensor<4xf32>) -> tensor<4xf32>"));
    CHECK(e.code() == bad_program_code());
    if (on_emulator()) CHECK(contains(e.what(), "tensor<i32>"));
  }
  SECTION("a comparator returning f32, not i1") {
    const std::string region =
        "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
        "    %c = stablehlo.subtract %a, %b : tensor<f32>\n"
        "    stablehlo.return %c : tensor<f32>\n";
    const auto e = compile_error(sort_module("%x", region, "(tensor<4xf32>) -> tensor<4xf32>"));
    CHECK(e.code() == bad_program_code());
    if (on_emulator()) {
      CHECK(contains(e.what(), "line 3"));
      CHECK(contains(e.what(), "must return tensor<i1>"));
    }
  }
  SECTION("a comparator returning two values") {
    const std::string region =
        "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
        "    %c = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
        "    stablehlo.return %c, %c : tensor<i1>, tensor<i1>\n";
    const auto e = compile_error(sort_module("%x", region, "(tensor<4xf32>) -> tensor<4xf32>"));
    CHECK(e.code() == bad_program_code());
  }
  SECTION("operand shapes differ") {
    const std::string region =
        "  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):\n"
        "    %r = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
        "    stablehlo.return %r : tensor<i1>\n";
    const auto e = compile_error(
        "func.func public @main(%x: tensor<4xf32>, %y: tensor<5xi32>) -> tensor<4xf32> {\n"
        "  %s:2 = \"stablehlo.sort\"(%x, %y) ({\n" + region +
        "  }) {dimension = 0 : i64} : (tensor<4xf32>, tensor<5xi32>) -> (tensor<4xf32>, tensor<5xi32>)\n"
        "  return %s#0 : tensor<4xf32>\n}\n");
    CHECK(e.code() == bad_program_code());
    if (on_emulator()) {
      CHECK(contains(e.what(), "line 2"));
      CHECK(contains(e.what(), "operand shapes tensor<4xf32> and tensor<5xi32> differ"));
    }
  }
  SECTION("a result type that differs from its operand") {
    const auto e = compile_error(sort_module("%x", lt_f32, "(tensor<4xf32>) -> tensor<4xf64>", "%x: tensor<4xf32>",
                                             "tensor<4xf64>"));
    CHECK(e.code() == bad_program_code());
  }
  SECTION("dimension out of range") {
    const auto e = compile_error(
        "func.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %s:1 = \"stablehlo.sort\"(%x) ({\n" + lt_f32 +
        "  }) {dimension = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>\n"
        "  return %s#0 : tensor<4xf32>\n}\n");
    CHECK(e.code() == bad_program_code());
    if (on_emulator()) CHECK(contains(e.what(), "dimension 1 is out of range"));
  }
  SECTION("more result names than results") {
    const auto e = compile_error(
        "func.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %s:2 = \"stablehlo.sort\"(%x) ({\n" + lt_f32 +
        "  }) {dimension = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>\n"
        "  return %s#0 : tensor<4xf32>\n}\n");
    CHECK(e.code() == bad_program_code());
  }
}

// Emulator-only: the emulator's own limits and texts, and comparators XLA leaves undefined.
TEST_CASE("sort: emulator limits and odd comparators", "[pjrt][errors][sort][emulator-only]") {
  const NoStablehloDump no_dump;
  SECTION("a comparator using a value from outside its region") {
    const auto e = compile_error(
        "func.func public @main(%x: tensor<4xf32>, %t: tensor<f32>) -> tensor<4xf32> {\n"
        "  %s:1 = \"stablehlo.sort\"(%x) ({\n"
        "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
        "    %c = stablehlo.compare LT, %a, %t, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
        "    stablehlo.return %c : tensor<i1>\n"
        "  }) {dimension = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>\n"
        "  return %s#0 : tensor<4xf32>\n}\n");
    CHECK(e.code() == 3);
    CHECK(contains(e.what(), "line 4"));
    CHECK(contains(e.what(), "only its block arguments"));
  }
  SECTION("a non-elementwise op in a comparator") {
    const auto e = compile_error(
        "func.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %s:1 = \"stablehlo.sort\"(%x) ({\n"
        "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
        "    %r = stablehlo.reshape %a : (tensor<f32>) -> tensor<1xf32>\n"
        "    %c = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
        "    stablehlo.return %c : tensor<i1>\n"
        "  }) {dimension = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>\n"
        "  return %s#0 : tensor<4xf32>\n}\n");
    CHECK(e.code() == 3);  // a non-scalar value
    CHECK(contains(e.what(), "line 4"));
  }
  SECTION("several results on another op stay UNIMPLEMENTED") {
    const auto e = compile_error(
        "func.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %s:2 = stablehlo.add %x, %x : tensor<4xf32>\n"
        "  return %s#0 : tensor<4xf32>\n}\n");
    CHECK(e.code() == 12);
    CHECK(contains(e.what(), "line 2"));
    CHECK(contains(e.what(), "several results"));
  }
  SECTION("a bad result count") {
    const auto e = compile_error(
        "func.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %s:99999999999999999999 = \"stablehlo.sort\"(%x) ({\n  }) : (tensor<4xf32>) -> tensor<4xf32>\n"
        "  return %s#0 : tensor<4xf32>\n}\n");
    CHECK(e.code() == 3);
  }
  SECTION("a comparator that is not a strict weak order gives a permutation, not a crash") {
    for (const char* body : {"    %c = stablehlo.constant dense<true> : tensor<i1>\n",
                             "    %c = stablehlo.compare LE, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n",
                             "    %c = stablehlo.compare NE, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"}) {
      const std::string text =
          "func.func public @main(%x: tensor<100xf32>) -> tensor<100xf32> {\n"
          "  %s:1 = \"stablehlo.sort\"(%x) ({\n"
          "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n" + std::string(body) +
          "    stablehlo.return %c : tensor<i1>\n"
          "  }) {dimension = 0 : i64} : (tensor<100xf32>) -> tensor<100xf32>\n"
          "  return %s#0 : tensor<100xf32>\n}\n";
      std::vector<double> v = random_values(100, 3);
      for (double& e : v) e = static_cast<float>(e);
      auto out = run_text(text, {{ScalarType::Float, {100}, v}});
      std::sort(v.begin(), v.end());
      std::sort(out[0].values.begin(), out[0].values.end());
      CHECK(out[0].values == v);
    }
  }
}
