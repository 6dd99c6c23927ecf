// tests/errors/test_errors_device.cpp — bad inputs to the device layer (docs/errors.md,
// section "Devices"): device strings, indices past the device count, tensors of two devices
// in one op, missing or broken PJRT plugins. meson test points TORCHTPU_TPU_EMULATOR_PATH at
// the emulator with 2 virtual devices; the missing-plugin cases clear the environment
// variables the plugin search reads, for their scope only.
#include <catch2/catch.hpp>  // TEST_CASE, REQUIRE_THROWS_MATCHES

#include <cstdint>   // int32_t, int64_t, uint8_t
#include <cstdlib>   // setenv, unsetenv, std::getenv
#include <fstream>   // std::ofstream
#include <limits>    // std::numeric_limits
#include <optional>  // std::optional
#include <string>    // std::string
#include <utility>   // std::pair
#include <vector>    // std::vector

#include <torchtpu/device.hpp>  // the library with PJRT devices

#include "error_matchers.hpp"  // terr::has_message
#include "../test_env.hpp"  // EnvGuard

using namespace torchtpu;
using terr::has_message;

namespace {
using ttest::EnvGuard;

/// The values of a tensor of any device, read on the host (an observation: runs what is deferred).
template <class T>
std::vector<T> host(const Tensor<T>& t) {
  const Tensor<T> c = t.cpu().contiguous();
  return std::vector<T>(c.data_ptr(), c.data_ptr() + c.numel());
}

/// Unsets every variable that could lead the plugin search to a real plugin.
void clear_plugin_env(EnvGuard& g) {
  for (const char* v : {"TORCHTPU_TPU_EMULATOR", "TORCHTPU_TPU_EMULATOR_PATH", "TORCHTPU_PJRT_PLUGIN_TPU",
                        "TPU_LIBRARY_PATH", "TORCHTPU_PJRT_PLUGIN_CUDA", "HOME", "VIRTUAL_ENV"})
    g.set(v, nullptr);
}

/// The plugin `pjrt::find_plugin(kind)` finds under the current environment, or nothing when it
/// throws DeviceUnavailable (a plugin installed on this machine makes a "missing" case moot).
std::optional<std::string> found_plugin(const char* kind) {
  try {
    return pjrt::find_plugin(kind).path;
  } catch (const DeviceUnavailable&) {
    return std::nullopt;
  }
}
}  // namespace

// First in the file: once a test has loaded the emulator, the dynamic loader finds it by name,
// so the "emulator requested but missing" case needs a process that has not loaded it yet.
TEST_CASE("errors/device: a missing plugin is DeviceUnavailable listing the places searched", "[errors][pjrt]") {
  {
    EnvGuard g;
    clear_plugin_env(g);
    g.set("TORCHTPU_PJRT_PLUGIN_CUDA", "/nonexistent/xla_cuda_plugin.so");
    if (std::optional<std::string> found = found_plugin("cuda")) {
      WARN("skipped: a CUDA PJRT plugin is installed system-wide here (" << *found << ")");
    } else {
      REQUIRE_THROWS_MATCHES(pjrt::find_plugin("cuda"), DeviceUnavailable,
                             has_message({"no PJRT plugin found for device 'cuda'",
                                          "$TORCHTPU_PJRT_PLUGIN_CUDA (/nonexistent/xla_cuda_plugin.so)",
                                          "jax_plugins/xla_cuda13/xla_cuda_plugin.so"}));
      REQUIRE_THROWS_MATCHES(zeros<float>({2}).to("cuda"), DeviceUnavailable, has_message({"'cuda'", "searched"}));
      CHECK_FALSE(accelerator::is_available("cuda"));
    }
  }
  {
    EnvGuard g;
    clear_plugin_env(g);
    g.set("TORCHTPU_PJRT_PLUGIN_TPU", "/nonexistent/libtpu.so");
    REQUIRE_THROWS_MATCHES(pjrt::find_plugin("tpu"), DeviceUnavailable,
                           has_message({"no PJRT plugin found for device 'tpu'",
                                        "$TORCHTPU_PJRT_PLUGIN_TPU (/nonexistent/libtpu.so)", "$TPU_LIBRARY_PATH (unset)",
                                        "libtpu.so on the dynamic loader path", "TORCHTPU_TPU_EMULATOR=1"}));
  }
  {
    EnvGuard g;
    clear_plugin_env(g);
    g.set("TORCHTPU_TPU_EMULATOR_PATH", "/nonexistent/libtorchtpu_tpu_emulator.so");
    // After the path, find_plugin looks where an installed emulator would be (the libdir that
    // `meson install` records, next to the executable, the loader path): one installed there
    // (scripts/test installs this build into build-install/prefix) is found, as documented.
    if (std::optional<std::string> found = found_plugin("tpu")) {
      CHECK(*found != "/nonexistent/libtorchtpu_tpu_emulator.so");
      WARN("skipped: an installed TPU emulator is found after the missing path (" << *found << ")");
    } else {
      REQUIRE_THROWS_MATCHES(pjrt::find_plugin("tpu"), DeviceUnavailable,
                             has_message({"the TPU emulator was requested", "/nonexistent/libtorchtpu_tpu_emulator.so"}));
    }
  }
}

TEST_CASE("errors/device: bad device strings list the accepted forms", "[errors][pjrt]") {
  for (const char* s : {"foo", "gpu", "TPU", "", "tpu:", "tpu:x", "tpu:-1", "cpu:0", "tpu:1234567"}) {
    INFO(s);
    REQUIRE_THROWS_MATCHES(Device(s), ValueError,
                           has_message({"invalid device string '" + std::string(s) + "'", "\"tpu:N\"", "\"cuda:N\""}));
  }
  Tensor<float> t = {1, 2};
  REQUIRE_THROWS_MATCHES(t.to("foo"), ValueError, has_message({"invalid device string 'foo'"}));
  REQUIRE_THROWS_MATCHES(zeros<float>({2}, "tpu:x"), ValueError, has_message({"'tpu:x'"}));
  REQUIRE_THROWS_MATCHES(accelerator::device_count("npu"), ValueError, has_message({"'npu'"}));
  REQUIRE_THROWS_MATCHES(pjrt::find_plugin("cpu"), ValueError, has_message({"find_plugin", "'cpu'", "\"tpu\", \"cuda\" or \"xla_cpu\""}));
}

TEST_CASE("errors/device: an index past the device count names the count", "[errors][pjrt]") {
  Tensor<float> t = {1, 2};
  REQUIRE_THROWS_MATCHES(t.to("tpu:99"), IndexError, has_message({"device index 99 out of range", "tpu has 2 addressable device"}));
  REQUIRE_THROWS_MATCHES(zeros<float>({2}, "tpu:2"), IndexError, has_message({"device index 2", "tpu has 2 addressable device"}));
  CHECK(t.device().is_cpu());
  CHECK(t.to("tpu:1").device() == Device("tpu:1"));
}

TEST_CASE("errors/device: tensors on two devices in one op name both devices", "[errors][pjrt]") {
  Tensor<float> c = {1, 2, 3};
  Tensor<float> d = c.to("tpu");
  const std::string same = "Expected all tensors to be on the same device";
  REQUIRE_THROWS_MATCHES(Tensor<float>(c + d), ValueError, has_message({same, "cpu and tpu:0"}));
  REQUIRE_THROWS_MATCHES(Tensor<float>(d * c.to("tpu:1")), ValueError, has_message({same, "tpu:0 and tpu:1"}));
  REQUIRE_THROWS_MATCHES(Tensor<float>(matmul(d.unsqueeze(0), c.unsqueeze(1))), ValueError, has_message({same}));
  REQUIRE_THROWS_MATCHES(Tensor<float>(sum(d + c)), ValueError, has_message({same}));
  // The operands are unchanged.
  const Tensor<float> back = d.cpu();
  CHECK(std::vector<float>(back.data_ptr(), back.data_ptr() + 3) == std::vector<float>{1, 2, 3});
  // Shape errors are found on a device as on the cpu, before anything runs.
  REQUIRE_THROWS_MATCHES(d + zeros<float>({2}, "tpu"), ShapeError, has_message({"add", "[3]", "[2]"}));
}

TEST_CASE("errors/device: a file that is not a PJRT plugin is DeviceUnavailable", "[errors][pjrt]") {
  const std::string text = "errors_device_not_a_plugin.so";
  std::ofstream(text) << "not a shared object\n";
  REQUIRE_THROWS_MATCHES(pjrt::Plugin::load(text), DeviceUnavailable, has_message({"cannot load PJRT plugin", text}));
  // A real shared object without GetPjrtApi (the C library).
  REQUIRE_THROWS_MATCHES(pjrt::Plugin::load("libc.so.6"), DeviceUnavailable, has_message({"libc.so.6", "does not export GetPjrtApi"}));
}

TEST_CASE("errors/intdiv: integer division on the device gives the cpu's error and values", "[errors][pjrt]") {
  // Fused mode (the default) defers the program: the error comes when the result is read.
  const std::string fd = "floor_divide: integer division by zero", rm = "remainder: integer division by zero";
  const Tensor<int32_t> dx = Tensor<int32_t>{1, 2, 3}.to("tpu"), dz = Tensor<int32_t>{2, 0, 1}.to("tpu");
  REQUIRE(dx.device() == Device("tpu:0"));
  REQUIRE_THROWS_MATCHES(host(Tensor<int32_t>(floor_divide(dx, dz))), ValueError, has_message({fd}));
  REQUIRE_THROWS_MATCHES(host(Tensor<int32_t>(remainder(dx, dz))), ValueError, has_message({rm}));
  REQUIRE_THROWS_MATCHES(host(Tensor<int32_t>(floor_divide(dx, 0))), ValueError, has_message({fd}));
  const Tensor<int64_t> lx = Tensor<int64_t>{5, 6}.to("tpu"), lz = Tensor<int64_t>{0, 3}.to("tpu");
  REQUIRE_THROWS_MATCHES(host(Tensor<int64_t>(floor_divide(lx, lz))), ValueError, has_message({fd}));
  REQUIRE_THROWS_MATCHES(host(Tensor<int64_t>(remainder(lx, lz))), ValueError, has_message({rm}));
  const Tensor<uint8_t> ux = Tensor<uint8_t>{7, 200}.to("tpu"), uz = Tensor<uint8_t>{2, 0}.to("tpu");
  REQUIRE_THROWS_MATCHES(host(Tensor<uint8_t>(floor_divide(ux, uz))), ValueError, has_message({fd}));
  REQUIRE_THROWS_MATCHES(host(Tensor<uint8_t>(remainder(ux, uz))), ValueError, has_message({rm}));
  // The operands are unchanged, and the device keeps working.
  CHECK(host(dx) == std::vector<int32_t>{1, 2, 3});
  CHECK(host(dz) == std::vector<int32_t>{2, 0, 1});
  CHECK(host(uz) == std::vector<uint8_t>{2, 0});
  // MIN // -1 wraps to MIN and MIN % -1 is 0, as on the cpu (hand-worked, as in errors/intdiv of
  // test_errors_ops.cpp): -7 // 2 = -4, -7 % 2 = 1; 7 // -2 = -4, 7 % -2 = -1.
  const int32_t lo = std::numeric_limits<int32_t>::min();
  const Tensor<int32_t> a = Tensor<int32_t>{lo, -7, 7}.to("tpu"), b = Tensor<int32_t>{-1, 2, -2}.to("tpu");
  CHECK(host(Tensor<int32_t>(floor_divide(a, b))) == std::vector<int32_t>{-2147483647 - 1, -4, -4});
  CHECK(host(Tensor<int32_t>(remainder(a, b))) == std::vector<int32_t>{0, 1, -1});
  const int64_t llo = std::numeric_limits<int64_t>::min();  // -2^63: exact in the emulator's doubles
  const Tensor<int64_t> la = Tensor<int64_t>{llo, -7, 7}.to("tpu"), lb = Tensor<int64_t>{-1, 2, -2}.to("tpu");
  CHECK(host(Tensor<int64_t>(floor_divide(la, lb))) == std::vector<int64_t>{-9223372036854775807LL - 1, -4, -4});
  CHECK(host(Tensor<int64_t>(remainder(la, lb))) == std::vector<int64_t>{0, 1, -1});
  CHECK(host(Tensor<uint8_t>(floor_divide(ux, Tensor<uint8_t>{2, 3}.to("tpu")))) == std::vector<uint8_t>{3, 66});
}

TEST_CASE("errors/partial-write: writing into part of a device tensor is UnsupportedOperator", "[errors][pjrt]") {
  Tensor<float> d = Tensor<float>{{1, 2}, {3, 4}}.to("tpu");
  REQUIRE_THROWS_MATCHES(d.slice(0, 0, 1) += 1.0f, UnsupportedOperator,
                         has_message({"writing into a view of a tensor on tpu:0 (shape [1, 2], offset 0) is not "
                                      "supported yet; write the whole tensor"}));
  REQUIRE_THROWS_MATCHES((d.slice(0, 1, 2) = Tensor<float>{{5, 6}}), UnsupportedOperator,
                         has_message({"tpu:0 (shape [1, 2], offset 2)"}));
  CHECK(host(d) == std::vector<float>{1, 2, 3, 4});
  d += 1.0f;  // the whole tensor is writable
  CHECK(host(d) == std::vector<float>{2, 3, 4, 5});
}
