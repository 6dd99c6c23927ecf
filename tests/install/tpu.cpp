// tests/install: a downstream program that runs one op on "tpu". With TORCHTPU_TPU_EMULATOR=1
// and no TORCHTPU_TPU_EMULATOR_PATH, the installed emulator must be found by itself (next to
// the installed headers, or at the libdir recorded at install). Prints the plugin it loaded and
// the result; without the opt-in it prints why "tpu" is unavailable (exit 3).
#include <cstdio>  // std::printf

#include <torchtpu/device.hpp>  // torchtpu, the PJRT device runtime

int main() {
  using namespace torchtpu;
  try {
    accelerator::Info info = accelerator::info(DeviceKind::TPU);
    Tensor<float> x = Tensor<float>{{1, 2}, {3, 4}}.to("tpu");
    Tensor<float> y = relu(x * 2.0f - 3.0f);
    std::printf("emulated %d\nplugin %s\nsum %g\n", info.emulated ? 1 : 0,
                info.plugin_path.c_str(), static_cast<double>(y.sum().item()));
    return 0;
  } catch (const DeviceUnavailable& e) {
    std::printf("tpu unavailable: %s\n", e.what());
    return 3;
  }
}
