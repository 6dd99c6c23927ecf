// tests/test_backend.hpp — which PJRT backend a device test runs on. Every device suite runs
// twice (tests/*/meson.build registers each test in suite 'pjrt' and again in 'xla_cpu'):
//   TORCHTPU_TEST_BACKEND=emulator (the default): device kind `tpu` resolved to torchtpu's TPU
//     emulator (TORCHTPU_TPU_EMULATOR_PATH), TPU numerics: DEFAULT-precision matmul and
//     convolution take bf16 operands and accumulate in f32;
//   TORCHTPU_TEST_BACKEND=xla_cpu: device kind `xla_cpu`, XLA's CPU plugin, which computes f32
//     at every precision (docs/devices.md, "Numerics").
// TORCHTPU_TEST_DEVICE ("cuda", ...) overrides the device kind (tools/device_check.sh).
// Test cases tagged [emulator-only] check the emulator itself (its identity, its own limits
// and error texts, fault injection); meson leaves them out of the xla_cpu runs ('~[emulator-only]').
#pragma once
#include <cstdlib>      // std::getenv
#include <stdexcept>    // std::runtime_error
#include <string>       // std::string
#include <string_view>  // std::string_view

#include <torchtpu/core/device.hpp>  // Device, DeviceKind

namespace ttest {

/// "emulator" or "xla_cpu" (from TORCHTPU_TEST_BACKEND; unset or empty means "emulator").
/// **Errors:** std::runtime_error for another value.
inline std::string test_backend() {
  const char* e = std::getenv("TORCHTPU_TEST_BACKEND");
  const std::string b = e && *e ? e : "emulator";
  if (b != "emulator" && b != "xla_cpu")
    throw std::runtime_error("TORCHTPU_TEST_BACKEND must be emulator or xla_cpu, got '" + b + "'");
  return b;
}

/// True when the tests run on torchtpu's TPU emulator (bf16 DEFAULT precision).
inline bool on_emulator() {
  const char* d = std::getenv("TORCHTPU_TEST_DEVICE");
  return !(d && *d) && test_backend() == "emulator";
}

/// The device kind string under test: $TORCHTPU_TEST_DEVICE's kind, else "tpu" (emulator) or
/// "xla_cpu".
inline std::string test_kind() {
  const char* d = std::getenv("TORCHTPU_TEST_DEVICE");
  if (d && *d) return std::string(torchtpu::device_kind_name(torchtpu::Device(d).kind()));
  return test_backend() == "xla_cpu" ? "xla_cpu" : "tpu";
}

/// Device `index` of the kind under test ("tpu:1", "xla_cpu:1").
inline torchtpu::Device test_device(int index = 0) {
  return torchtpu::Device(test_kind() + ":" + std::to_string(index));
}

/// `"<kind>:<index>"` of the device under test, for APIs that take a string.
inline std::string test_device_str(int index = 0) { return test_device(index).str(); }

/// Absolute error allowed for an f32 matrix product of `k`-term dot products of values of
/// magnitude <= `scale` at DEFAULT precision on the backend under test. On the emulator
/// (bf16 operands, relative rounding 2^-9 each, so 2^-8 per product) the bound is
/// k·scale²·2^-8; on XLA CPU (f32 products and sums) it is k·scale²·2^-22 (f32 round-off
/// 2^-24 per operation, with a factor 4 for reassociated sums).
inline double default_matmul_tol(int64_t k, double scale = 1.0) {
  const double per_term = on_emulator() ? 1.0 / 256 : 1.0 / (1 << 22);
  return static_cast<double>(k) * scale * scale * per_term;
}

/// PJRT error code of a program that fails to parse or verify. The PJRT C API leaves codes to
/// the plugin: the emulator says INVALID_ARGUMENT (3); XLA's CPU plugin passes MLIR's
/// diagnostics on as UNKNOWN (2).
inline int bad_program_code() { return on_emulator() ? 3 : 2; }

/// True if a plugin's error `message` points at line `n` of the program: the emulator writes
/// "line N", XLA (MLIR diagnostics) "-:N:COL:".
inline bool names_line(std::string_view message, int n) {
  const std::string want = on_emulator() ? "line " + std::to_string(n) : "-:" + std::to_string(n) + ":";
  return message.find(want) != std::string_view::npos;
}

}  // namespace ttest
