// tests/device/fake_plugin.cpp — a stand-in PJRT plugin that only reports an API version
// (FAKE_PJRT_MAJOR.FAKE_PJRT_MINOR), to test torchtpu's version check.
#include <torchtpu/device/pjrt/c_api.hpp>  // PJRT_Api

using torchtpu::pjrt::capi::PJRT_Api;

extern "C" __attribute__((visibility("default"))) const PJRT_Api* GetPjrtApi() {
  static PJRT_Api api = [] {
    PJRT_Api a{};
    a.struct_size = sizeof(PJRT_Api);
    a.pjrt_api_version.struct_size = sizeof(a.pjrt_api_version);
    a.pjrt_api_version.major_version = FAKE_PJRT_MAJOR;
    a.pjrt_api_version.minor_version = FAKE_PJRT_MINOR;
    return a;
  }();
  return &api;
}
