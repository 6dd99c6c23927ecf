// tests/device/test_plugin_errors.cpp — clear errors: malformed StableHLO, ops the emulator
// lacks, bad arguments, plugins with an unsupported API version, and missing plugins.
#include <catch2/catch.hpp>  // TEST_CASE, CHECK

#include <cstdlib>   // setenv, unsetenv, std::getenv
#include <optional>  // std::optional
#include <string>    // std::string
#include <vector>    // std::vector

#include "emulator_fixture.hpp"  // ttest::tpu
#include "../test_env.hpp"  // EnvGuard

using namespace ttest;
using torchtpu::DeviceError;
using torchtpu::DeviceUnavailable;

namespace {
using ttest::EnvGuard;

/// Compiles `text` and returns the DeviceError it raises.
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
}  // namespace

TEST_CASE("errors: malformed StableHLO is INVALID_ARGUMENT naming the line", "[pjrt][errors]") {
  // INVALID_ARGUMENT on the emulator, UNKNOWN on XLA (bad_program_code, tests/test_backend.hpp).
  const auto undefined = compile_error(
      "module {\n  func.func public @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
      "    %0 = stablehlo.add %x, %y : tensor<2xf32>\n    return %0 : tensor<2xf32>\n  }\n}\n");
  CHECK(undefined.code() == bad_program_code());
  CHECK(names_line(undefined.what(), 3));
  if (on_emulator()) CHECK(contains(undefined.what(), "%y"));  // XLA: "use of undeclared SSA value name"
  else CHECK(contains(undefined.what(), "undeclared SSA value"));
  const auto unterminated = compile_error("module {\n  func.func public @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n");
  CHECK(unterminated.code() == bad_program_code());
  const auto wrong_return = compile_error(
      "func.func public @main(%x: tensor<2xf32>) -> tensor<3xf32> {\n  return %x : tensor<2xf32>\n}\n");
  CHECK(wrong_return.code() == bad_program_code());
  CHECK(contains(wrong_return.what(), "tensor<3xf32>"));
  CHECK(compile_error("").code() == bad_program_code());
  CHECK(compile_error("this is not mlir").code() == bad_program_code());
}

TEST_CASE("errors: deeply nested attributes and regions are INVALID_ARGUMENT, not a stack overflow", "[pjrt][errors]") {
  // 200,000 '[' used to overflow the emulator's stack in parse_attr (issue 18, item 5).
  const std::string deep(200000, '[');
  const auto e = compile_error(
      "func.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = stablehlo.transpose %x, dims = " + deep + " : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  return %0 : tensor<4xf32>\n}\n");
  // The client refuses it before any plugin sees it (pjrt/program_check.hpp): XLA's CPU plugin
  // overflows its stack on this text (SIGSEGV).
  CHECK(e.code() == 3);
  CHECK(contains(e.what(), "nest deeper than 256"));
  const auto d = compile_error("func.func public @main() -> tensor<f32> {\n  %0 = stablehlo.constant dense<" +
                               deep + "> : tensor<f32>\n  return %0 : tensor<f32>\n}\n");
  CHECK(d.code() == 3);
  // Nesting within the limit still parses: a 2-D dense constant.
  auto exe = device_client()->compile(
      "func.func public @main() -> tensor<2x2xf32> {\n"
      "  %0 = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>\n"
      "  return %0 : tensor<2x2xf32>\n}\n");
  CHECK(exe != nullptr);
}

TEST_CASE("errors: deeply nested attribute dictionaries (a fuzzing find) are INVALID_ARGUMENT naming the line", "[pjrt][errors]") {
  // Found while fuzzing the parser (a long hand-made input run through tests/fuzz/fuzz_stablehlo;
  // tests/fuzz/corpus/stablehlo/deep_nesting_over_limit.mlir is a small one just over the
  // limit): the recursive attribute and region parser overflowed the stack on deep nesting.
  auto nested = [](int depth) {
    std::string s = "func.func @main(%x: tensor<f32>) -> tensor<f32> {\n  %0 = stablehlo.abs %x {a = ";
    for (int i = 0; i < depth; ++i) s += "[";
    s += "1";
    for (int i = 0; i < depth; ++i) s += "]";
    return s + "} : tensor<f32>\n  return %0 : tensor<f32>\n}\n";
  };
  const auto deep = compile_error(nested(200000));
  CHECK(deep.code() == 3);
  CHECK(contains(deep.what(), "nest deeper than 256 levels"));
  CHECK(contains(deep.what(), "line 2"));
  CHECK_NOTHROW(device_client()->compile(nested(200)));  // deep, but within the limit
}

// Emulator-only: XLA implements gather and complex types (and rejects this gather text as malformed).
TEST_CASE("errors: an op the emulator lacks is UNIMPLEMENTED naming the op and line", "[pjrt][errors][emulator-only]") {
  const auto e = compile_error(
      "module {\n  func.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
      "    %0 = stablehlo.gather %x : tensor<4xf32>\n    return %0 : tensor<4xf32>\n  }\n}\n");
  CHECK(e.code() == 12);
  CHECK(contains(e.what(), "stablehlo.gather"));
  CHECK(contains(e.what(), "line 3"));
  const auto t = compile_error("func.func public @main(%x: tensor<4xcomplex<f32>>) -> tensor<4xf32> {\n}\n");
  CHECK(t.code() == 12);
}

TEST_CASE("errors: a custom call nobody implements is refused at compile time", "[pjrt][errors]") {
  const auto g = compile_error(
      "func.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = \"stablehlo.custom_call\"(%x) {call_target_name = \"foo\"} : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  return %0 : tensor<4xf32>\n}\n");
  // The emulator: UNIMPLEMENTED naming the op; XLA: NOT_FOUND, "No registered implementation for
  // untyped custom call to foo" (the PJRT C API does not prescribe a code).
  CHECK(g.code() == (on_emulator() ? 12 : 5));
  CHECK(contains(g.what(), on_emulator() ? "stablehlo.custom_call" : "custom call to foo"));
}

TEST_CASE("errors: a shape mismatch names the op", "[pjrt][errors]") {
  // Declared result type disagrees with the operands: XLA's verifier finds it at compile time
  // (UNKNOWN, "-:2:8: 'stablehlo.transpose' op inferred type(s) ..."); the emulator, which does
  // not infer result types, when the op runs (INVALID_ARGUMENT).
  const NoStablehloDump no_dump;  // invalid on purpose
  auto c = device_client();
  const std::string text =
      "func.func public @main(%x: tensor<2x3xf32>) -> tensor<3x3xf32> {\n"
      "  %0 = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x3xf32>\n"
      "  return %0 : tensor<3x3xf32>\n}\n";
  auto in = to_device(c, {ScalarType::Float, {2, 3}, {1, 2, 3, 4, 5, 6}});
  try {
    auto exe = c->compile(text);
    CHECK(on_emulator());
    exe->execute({&in});
    FAIL("expected an error");
  } catch (const DeviceError& e) {
    CHECK(e.code() == bad_program_code());
    CHECK(contains(e.what(), "stablehlo.transpose"));
    CHECK(names_line(e.what(), 2));
  }
  // wrong argument type / count
  auto good = c->compile("func.func public @main(%x: tensor<3xf32>) -> tensor<3xf32> {\n  return %x : tensor<3xf32>\n}\n");
  CHECK_THROWS_AS(good->execute({&in}), DeviceError);
  CHECK_THROWS_AS(good->execute(std::vector<const pjrt::Buffer*>{}), DeviceError);
}

TEST_CASE("errors: a plugin with another PJRT major version is rejected, naming both versions", "[pjrt][errors]") {
  const char* v1 = std::getenv("TORCHTPU_TEST_FAKE_PLUGIN_V1");
  const char* old = std::getenv("TORCHTPU_TEST_FAKE_PLUGIN_OLD");
  REQUIRE(v1 != nullptr);
  REQUIRE(old != nullptr);
  try {
    pjrt::Plugin::load(v1);
    FAIL("expected a version error");
  } catch (const DeviceError& e) {
    CHECK(e.code() == 9);
    CHECK(contains(e.what(), "1.0"));
    CHECK(contains(e.what(), "0.104"));
  }
  try {
    pjrt::Plugin::load(old);
    FAIL("expected a version error");
  } catch (const DeviceError& e) {
    CHECK(contains(e.what(), "0.50"));
    CHECK(contains(e.what(), ">= 57"));
  }
}

TEST_CASE("errors: an older plugin whose table lacks functions torchtpu needs names each slot", "[pjrt][errors]") {
  const char* short_table = std::getenv("TORCHTPU_TEST_FAKE_PLUGIN_SHORT");
  REQUIRE(short_table != nullptr);
  try {
    pjrt::Plugin::load(short_table);
    FAIL("a plugin without PJRT_Buffer_Dimensions was accepted");
  } catch (const DeviceError& e) {
    INFO(e.what());
    CHECK(e.code() == 9);
    CHECK(contains(e.what(), "PJRT C API 0.60"));
    CHECK(contains(e.what(), "a table of 60 functions"));
    CHECK(contains(e.what(), "PJRT_Buffer_Dimensions (slot 60)"));
    CHECK(contains(e.what(), "PJRT_Buffer_ToHostBuffer (slot 70)"));
    CHECK_FALSE(contains(e.what(), "PJRT_Buffer_ElementType"));  // slot 59 is there
  }
}

TEST_CASE("errors: a shared object that is not a PJRT plugin", "[pjrt][errors]") {
  CHECK_THROWS_AS(pjrt::Plugin::load("libm.so.6"), DeviceUnavailable);  // no GetPjrtApi
  CHECK_THROWS_AS(pjrt::Plugin::load("/nonexistent/plugin.so"), DeviceUnavailable);
}

TEST_CASE("errors: a missing plugin is DeviceUnavailable listing every place searched", "[pjrt][errors]") {
  EnvGuard env;
  env.set("TORCHTPU_TPU_EMULATOR", nullptr);
  env.set("TORCHTPU_TPU_EMULATOR_PATH", nullptr);
  env.set("TORCHTPU_PJRT_PLUGIN_TPU", "/nonexistent/torchtpu-test/libtpu.so");
  env.set("TPU_LIBRARY_PATH", "/nonexistent/torchtpu-test/tpu-library-path.so");
  env.set("TORCHTPU_PJRT_PLUGIN_CUDA", "/nonexistent/torchtpu-test/cuda.so");
  env.set("HOME", "/nonexistent/torchtpu-test-home");
  env.set("VIRTUAL_ENV", nullptr);
  try {
    pjrt::Client::get("cuda");
    WARN("skipped: a CUDA PJRT plugin is installed on this machine");
  } catch (const DeviceUnavailable& e) {
    CHECK(contains(e.what(), "/nonexistent/torchtpu-test/cuda.so"));
    CHECK(contains(e.what(), "jax_plugins/xla_cuda13/xla_cuda_plugin.so"));
    CHECK(contains(e.what(), "jax_plugins/xla_cuda12/xla_cuda_plugin.so"));
    CHECK(contains(e.what(), "/nonexistent/torchtpu-test-home/.local/lib"));
  }
  try {
    pjrt::find_plugin("tpu");
    WARN("skipped: libtpu is installed on this machine");
  } catch (const DeviceUnavailable& e) {
    CHECK(contains(e.what(), "TORCHTPU_PJRT_PLUGIN_TPU"));
    CHECK(contains(e.what(), "/nonexistent/torchtpu-test/libtpu.so"));
    CHECK(contains(e.what(), "/nonexistent/torchtpu-test/tpu-library-path.so"));
    CHECK(contains(e.what(), "libtpu/libtpu.so"));
    CHECK(contains(e.what(), "dynamic loader path"));
    CHECK(contains(e.what(), "TORCHTPU_TPU_EMULATOR=1"));  // says how to get the emulator
  }
  CHECK_THROWS_AS(pjrt::find_plugin("gpu"), torchtpu::ValueError);
}

// Emulator-only: the test environment's TORCHTPU_TPU_EMULATOR_PATH is what it checks.
TEST_CASE("errors: the emulator is used only when asked for, and a bad emulator path is reported", "[pjrt][errors][emulator-only]") {
  {
    EnvGuard env;
    env.set("TORCHTPU_TPU_EMULATOR_PATH", "/nonexistent/emulator.so");
    try {
      pjrt::find_plugin("tpu");
      WARN("skipped: the emulator is installed on the loader path");
    } catch (const DeviceUnavailable& e) {
      CHECK(contains(e.what(), "/nonexistent/emulator.so"));
    }
  }
  const auto loc = pjrt::find_plugin("tpu");  // the test environment asks for the emulator
  CHECK(loc.emulated);
}

TEST_CASE("errors: create options torchtpu sends per device kind", "[pjrt][errors]") {
  EnvGuard env;
  env.set("TORCHTPU_CUDA_PREALLOCATE", nullptr);
  const auto cuda = pjrt::default_create_options("cuda");
  REQUIRE(cuda.size() == 1);
  CHECK(cuda[0].name == "preallocate");
  CHECK(std::get<bool>(cuda[0].value) == false);
  CHECK(pjrt::default_create_options("tpu").empty());
  env.set("TORCHTPU_CUDA_PREALLOCATE", "1");
  CHECK(pjrt::default_create_options("cuda").empty());
}
