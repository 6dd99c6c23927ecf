// Must not compile: a static-rank-3 expression stored in a Tensor<float, 2>.
#include <torchtpu/torchtpu.hpp>  // the library

int main() {
  torchtpu::Tensor<float, 3> a = torchtpu::zeros<float>({1, 2, 3});
#ifdef TORCHTPU_COMPILE_FAIL
  torchtpu::Tensor<float, 2> b = a + a;
#else
  torchtpu::Tensor<float, 3> b = a + a;
#endif
  return int(b.numel()) - 6;
}
