// tests/device/test_size_overflow.cpp — sizes on the device path are computed with overflow
// checks (issue 18, item 3): the Builder, the client's buffers, and the emulator's parser and
// buffer_from_host give clear errors for shapes whose size overflows int64, never a crash.
#include <catch2/catch.hpp>  // TEST_CASE, CHECK

#include <cstdint>  // int64_t
#include <string>   // std::string

#include "emulator_fixture.hpp"  // ttest::tpu

using namespace ttest;
using torchtpu::DeviceError;

namespace {
constexpr int64_t kBig = int64_t{1} << 62;
}  // namespace

TEST_CASE("size overflow: the Builder rejects shapes whose size overflows", "[pjrt][builder]") {
  shlo::Builder b;
  CHECK_THROWS_AS(b.parameter(ScalarType::Float, {kBig + 1, 4}), torchtpu::ShapeError);
  auto x = b.parameter(ScalarType::Float, {1, 4});
  CHECK_THROWS_WITH(b.broadcast_in_dim(x, {kBig + 1, 4}, {0, 1}),
                    Catch::Contains("[4611686018427387905, 4]") && Catch::Contains("overflows int64"));
  CHECK_NOTHROW(b.broadcast_in_dim(x, {0, 4}, {0, 1}));
}

TEST_CASE("size overflow: program types whose size overflows are rejected", "[pjrt][errors]") {
  // broadcast to 2^62 + 1 rows, then a reduce: this used to crash the emulator (SEGV), and XLA's
  // CPU plugin let an absl::BadStatusOrAccess exception escape; the client now refuses such types
  // before a plugin sees them (pjrt/program_check.hpp).
  const std::string text =
      "func.func public @main(%x: tensor<1x4xf32>) -> tensor<4xf32> {\n"
      "  %0 = stablehlo.broadcast_in_dim %x, dims = [0, 1] : (tensor<1x4xf32>) -> tensor<4611686018427387905x4xf32>\n"
      "  %1 = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %2 = stablehlo.reduce(%0 init: %1) applies stablehlo.add across dimensions = [0] : "
      "(tensor<4611686018427387905x4xf32>, tensor<f32>) -> tensor<4xf32>\n"
      "  return %2 : tensor<4xf32>\n}\n";
  try {
    auto exe = device_client()->compile(text);
    FAIL("compilation unexpectedly succeeded");
  } catch (const DeviceError& e) {
    CHECK(e.code() == 3);  // INVALID_ARGUMENT
    CHECK(std::string(e.what()).find("tensor<4611686018427387905x4xf32>") != std::string::npos);
    CHECK(std::string(e.what()).find("overflows int64") != std::string::npos);
  }
  // A type with a dimension beyond int64 is malformed text, not an exception escaping the plugin.
  try {
    auto exe = device_client()->compile(
        "func.func public @main(%x: tensor<99999999999999999999xf32>) -> tensor<99999999999999999999xf32> {\n"
        "  return %x : tensor<99999999999999999999xf32>\n}\n");
    FAIL("compilation unexpectedly succeeded");
  } catch (const DeviceError& e) {
    CHECK(e.code() == 3);
  }
}

TEST_CASE("size overflow: buffers whose size overflows", "[pjrt][errors]") {
  auto c = device_client();
  const float data[4] = {1, 2, 3, 4};
  const int64_t dims[2] = {kBig + 1, 4};
  // The client checks before calling the plugin ...
  CHECK_THROWS_AS(c->buffer_from_host(data, ScalarType::Float, dims), torchtpu::ValueError);
  CHECK_THROWS_WITH(c->buffer_from_host(data, ScalarType::Float, dims), Catch::Contains("overflows int64"));
  const int64_t dims2[1] = {kBig};  // 2^62 floats: 2^64 bytes
  CHECK_THROWS_AS(c->buffer_from_host(data, ScalarType::Float, dims2), torchtpu::ValueError);
  CHECK(pjrt::Buffer::checked_size_bytes(ScalarType::Float, std::vector<int64_t>{kBig, kBig, 0}, "t") == 0);
  CHECK(pjrt::Buffer::checked_size_bytes(ScalarType::Double, std::vector<int64_t>{3, 5}, "t") == 120);
}

// Emulator-only: calls the plugin directly, past the client's check; XLA's own message differs.
TEST_CASE("size overflow: the emulator rejects an overflowing buffer from a caller that does not check", "[pjrt][errors][emulator-only]") {
  auto c = device_client();
  const float data[4] = {1, 2, 3, 4};
  const int64_t dims[2] = {kBig + 1, 4};
  namespace capi = pjrt::capi;
  capi::PJRT_Client_BufferFromHostBuffer_Args a{};
  a.struct_size = sizeof(a);
  a.client = c->handle();
  a.data = data;
  a.type = capi::PJRT_Buffer_Type_F32;
  a.dims = dims;
  a.num_dims = 2;
  a.host_buffer_semantics = capi::PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes;
  a.device = c->device(0).handle;
  try {
    c->plugin().call(capi::Slot::Client_BufferFromHostBuffer, &a, "PJRT_Client_BufferFromHostBuffer");
    FAIL("the emulator accepted an overflowing buffer");
  } catch (const DeviceError& e) {
    CHECK(e.code() == 3);
    CHECK(std::string(e.what()).find("overflows int64") != std::string::npos);
  }
}

TEST_CASE("size overflow: the client's check of program text before any plugin sees it", "[pjrt][errors]") {
  auto code_of = [](const std::string& text) {
    try {
      pjrt::check_program_text(text);
    } catch (const DeviceError& e) {
      return e.code();
    }
    return 0;
  };
  // 257 levels of brackets: refused, naming the line; 256 pass the check.
  const std::string deep = "a\nb " + std::string(257, '[') + std::string(257, ']');
  CHECK(code_of(deep) == 3);
  CHECK_THROWS_WITH(pjrt::check_program_text(deep), Catch::Contains("line 2") && Catch::Contains("nest deeper than 256"));
  CHECK(code_of(std::string(256, '(') + std::string(256, ')')) == 0);
  // Brackets inside string literals (with escaped quotes) and // comments do not count.
  CHECK(code_of("x = \"" + std::string(300, '{') + "\\\" " + std::string(300, '[') + "\"") == 0);
  CHECK(code_of("// " + std::string(300, '[') + "\n%0 = 1") == 0);
  // Element counts: 2^62 * 4 overflows; a zero dimension makes any product 0; '?' is dynamic.
  CHECK_THROWS_WITH(pjrt::check_program_text("%0 : tensor<4611686018427387904x4xf32>"),
                    Catch::Contains("tensor<4611686018427387904x4xf32>") && Catch::Contains("overflows int64"));
  CHECK(code_of("tensor<4611686018427387904x0x4xf32>") == 0);
  CHECK(code_of("tensor<?x4611686018427387904xf32>") == 0);
  CHECK(code_of("tensor<3037000499x3037000499xf32>") == 0);  // 9.22e18 < 2^63
  CHECK(code_of("tensor<3037000500x3037000500xf32>") == 3);
  CHECK(code_of("tensor<99999999999999999999xf32>") == 3);    // a dimension beyond int64
  CHECK(code_of("tensor<99999999999999999999x0xf32>") == 3);  // malformed even when empty
  CHECK(code_of("mytensor<99999999999999999999xf32>") == 0);  // another word: not a type here
  CHECK(code_of("tensor<f32>") == 0);
}
