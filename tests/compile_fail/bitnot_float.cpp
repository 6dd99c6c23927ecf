// Must not compile: `~` on a float tensor (bitwise ops are for bool and integer tensors).
#include <torchtpu/torchtpu.hpp>  // the library

int main() {
  torchtpu::Tensor<float> x = torchtpu::ones<float>({4});
#ifdef TORCHTPU_COMPILE_FAIL
  torchtpu::Tensor<float> y = ~x;
#else
  torchtpu::Tensor<bool> y = ~(x > 0.0f);
#endif
  return int(y.numel()) - 4;
}
