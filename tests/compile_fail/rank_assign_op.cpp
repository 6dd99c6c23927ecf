// Must not compile: assigning a static-rank-3 expression to an existing Tensor<float, 2>.
#include <torchtpu/torchtpu.hpp>  // the library

int main() {
  torchtpu::Tensor<float, 3> a = torchtpu::zeros<float>({1, 2, 3});
  torchtpu::Tensor<float, 2> b = torchtpu::zeros<float>({2, 3});
#ifdef TORCHTPU_COMPILE_FAIL
  b = a * 2.0f;
#else
  b = a.select(0, 0) * 2.0f;
#endif
  return int(b.numel()) - 6;
}
