// tests/device/test_xla_cpu_plugin.cpp — the `xla_cpu` device kind (XLA's CPU PJRT plugin):
// device strings, discovery (environment variable, venvs, error listing what was searched),
// what the accelerator queries report, and several devices in one client (cpu_device_count).
// meson runs it with TORCHTPU_XLA_CPU_DEVICES=3 (suite xla_cpu).
#include <catch2/catch.hpp>  // TEST_CASE, CHECK

#include <cstdlib>   // setenv, unsetenv, getenv
#include <optional>  // std::optional
#include <string>    // std::string
#include <utility>   // std::pair
#include <vector>    // std::vector

#include <torchtpu/device.hpp>  // Device, accelerator, Tensor on devices, pjrt::find_plugin
#include "../test_env.hpp"  // EnvGuard

using namespace torchtpu;

namespace {
using ttest::EnvGuard;
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}
}  // namespace

TEST_CASE("xla_cpu: device strings", "[xla_cpu]") {
  CHECK(Device("xla_cpu").kind() == DeviceKind::XLA_CPU);
  CHECK(Device("xla_cpu").index() == 0);
  CHECK(Device("xla_cpu:2") == Device(DeviceKind::XLA_CPU, 2));
  CHECK(Device("xla_cpu:2").str() == "xla_cpu:2");
  CHECK(device_kind_name(DeviceKind::XLA_CPU) == "xla_cpu");
  CHECK_FALSE(Device("xla_cpu").is_cpu());  // XLA's plugin, not our engine
  for (const char* bad : {"xla_cpu:", "xla_cpu:-1", "xla_cpu:x", "xla", "xla_cpu0", "XLA_CPU"}) {
    INFO(bad);
    try {
      Device d(bad);
      FAIL("accepted " << bad);
    } catch (const ValueError& e) {
      CHECK(contains(e.what(), "\"xla_cpu:N\""));
      CHECK(contains(e.what(), bad));
    }
  }
}

TEST_CASE("xla_cpu: discovery order and the places searched", "[xla_cpu]") {
  // The variable first: a missing file there is reported and discovery goes on.
  {
    EnvGuard env;
    env.set("TORCHTPU_PJRT_PLUGIN_XLA_CPU", "/nonexistent/torchtpu-test/xla_cpu.so");
    const auto loc = pjrt::find_plugin("xla_cpu");
    REQUIRE(!loc.searched.empty());
    CHECK(contains(loc.searched[0], "$TORCHTPU_PJRT_PLUGIN_XLA_CPU (/nonexistent/torchtpu-test/xla_cpu.so)"));
    CHECK(ends_with(loc.path, "xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so"));
    CHECK_FALSE(loc.emulated);
  }
  // The variable wins when it names a file.
  const std::string found = pjrt::find_plugin("xla_cpu").path;
  {
    EnvGuard env;
    env.set("TORCHTPU_PJRT_PLUGIN_XLA_CPU", found.c_str());
    const auto loc = pjrt::find_plugin("xla_cpu");
    CHECK(loc.path == found);
    CHECK(loc.searched.size() == 1);
  }
  // An activated venv is searched before the checkout's.
  {
    EnvGuard env;
    env.set("TORCHTPU_PJRT_PLUGIN_XLA_CPU", nullptr);
    env.set("VIRTUAL_ENV", "/nonexistent/torchtpu-test-venv");
    const auto loc = pjrt::find_plugin("xla_cpu");
    REQUIRE(loc.searched.size() >= 2);
    CHECK(contains(loc.searched[1],
                   "/nonexistent/torchtpu-test-venv/lib/python3*/site-packages/xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so"));
  }
  // The checkout's venv is recorded at configure time.
  const auto venvs = pjrt::detail::venv_candidates();
  REQUIRE(!venvs.empty());
  CHECK(ends_with(venvs.back(), "/.venv"));
  CHECK(pjrt::detail::venv_site_packages("/nonexistent/v") ==
        std::vector<std::string>{"/nonexistent/v/lib/python3*/site-packages"});
  CHECK_THROWS_AS(pjrt::find_plugin("xla"), ValueError);
}

TEST_CASE("xla_cpu: create options and a bad device count", "[xla_cpu]") {
  EnvGuard env;
  env.set("TORCHTPU_XLA_CPU_DEVICES", nullptr);
  CHECK(pjrt::default_create_options("xla_cpu").empty());
  env.set("TORCHTPU_XLA_CPU_DEVICES", "5");
  const auto opts = pjrt::default_create_options("xla_cpu");
  REQUIRE(opts.size() == 1);
  CHECK(opts[0].name == "cpu_device_count");
  CHECK(std::get<int64_t>(opts[0].value) == 5);
  for (const char* bad : {"0", "-2", "two", "100000", "2048"}) {
    INFO(bad);
    env.set("TORCHTPU_XLA_CPU_DEVICES", bad);
    try {
      pjrt::default_create_options("xla_cpu");
      FAIL("accepted " << bad);
    } catch (const ValueError& e) {
      CHECK(contains(e.what(), "TORCHTPU_XLA_CPU_DEVICES"));
      CHECK(contains(e.what(), bad));
    }
  }
}

TEST_CASE("xla_cpu: accelerator queries report XLA's CPU plugin with three devices", "[xla_cpu]") {
  REQUIRE(accelerator::is_available("xla_cpu"));
  const auto info = accelerator::info(DeviceKind::XLA_CPU);
  CHECK(info.device == Device("xla_cpu:0"));
  CHECK(info.platform_name == "cpu");  // XLA's name for its CPU platform
  CHECK_FALSE(info.platform_version.empty());
  CHECK_FALSE(info.emulated);
  CHECK(ends_with(info.plugin_path, "xla_cpu_pjrt.so"));
  CHECK(info.device_count == 3);  // TORCHTPU_XLA_CPU_DEVICES=3 in tests/device/meson.build
  CHECK(accelerator::device_count("xla_cpu") == 3);
  CHECK(contains(info.str(), "xla_cpu: "));
  CHECK_FALSE(contains(info.str(), "EMULATED"));
  INFO(info.str());
  // Without a TPU or CUDA plugin here, xla_cpu is the current accelerator.
  if (!accelerator::is_available("tpu") && !accelerator::is_available("cuda"))
    CHECK(accelerator::current().device == Device("xla_cpu:0"));
}

TEST_CASE("xla_cpu: tensors on each of the three devices", "[xla_cpu]") {
  Tensor<float> a = {{1.5f, -2.0f}, {3.25f, 4.0f}};
  for (int i = 0; i < 3; ++i) {
    const Device d(DeviceKind::XLA_CPU, i);
    INFO(d.str());
    Tensor<float> x = a.to(d);
    CHECK(x.device() == d);
    Tensor<float> y = x * 2.0f + 1.0f;  // computed on xla_cpu:i
    CHECK(y.device() == d);
    Tensor<float> h = y.cpu();
    CHECK(h.contiguous().data_ptr()[0] == 4.0f);
    CHECK(h.contiguous().data_ptr()[1] == -3.0f);
    CHECK(h.contiguous().data_ptr()[2] == 7.5f);
    CHECK(h.contiguous().data_ptr()[3] == 9.0f);
  }
  CHECK_THROWS_AS(a.to("xla_cpu:3"), IndexError);
}
