// Catch2 v2 main, compiled once for all test executables. A test run for the xla_cpu backend
// (TORCHTPU_TEST_BACKEND=xla_cpu, set by meson for suite 'xla_cpu') first checks that XLA's CPU
// plugin can be found: without it the run reports itself skipped (exit code 77, which meson
// counts as SKIP) with the places searched, or fails when TORCHTPU_TEST_REQUIRE_XLA_CPU=1
// (scripts/test, CI: the venv is always created there, so a missing plugin is an error).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>  // Catch2 v2 single header

#include <cstdio>       // std::fprintf
#include <cstdlib>      // std::getenv
#include <string_view>  // std::string_view

#include <torchtpu/device/pjrt/plugin.hpp>  // pjrt::find_plugin, DeviceUnavailable

int main(int argc, char** argv) {
  const char* backend = std::getenv("TORCHTPU_TEST_BACKEND");
  if (backend && std::string_view(backend) == "xla_cpu") {
    try {
      (void)torchtpu::pjrt::find_plugin("xla_cpu");
    } catch (const torchtpu::DeviceUnavailable& e) {
      const char* req = std::getenv("TORCHTPU_TEST_REQUIRE_XLA_CPU");
      const bool required = req && std::string_view(req) == "1";
      std::fprintf(stderr, "%s: XLA's CPU plugin is missing (run scripts/deps.sh setup_venv): %s\n",
                   required ? "FAILED (TORCHTPU_TEST_REQUIRE_XLA_CPU=1)" : "SKIPPED", e.what());
      return required ? 1 : 77;
    }
  }
  return Catch::Session().run(argc, argv);
}
