// Must not compile: mean of an integer tensor (torch.mean needs a floating dtype).
#include <torchtpu/torchtpu.hpp>  // the library

int main() {
  torchtpu::Tensor<int32_t> x = torchtpu::ones<int32_t>({4});
#ifdef TORCHTPU_COMPILE_FAIL
  float m = x.mean().item();
#else
  float m = x.to<float>().mean().item();
#endif
  return m == 1.0f ? 0 : 1;
}
