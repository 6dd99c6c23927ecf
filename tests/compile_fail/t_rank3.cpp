// Must not compile: t() of a tensor whose static rank is 3 (t() is for rank <= 2).
#include <torchtpu/torchtpu.hpp>  // the library

int main() {
  torchtpu::Tensor<float, 3> x = torchtpu::zeros<float>({2, 3, 4});
#ifdef TORCHTPU_COMPILE_FAIL
  auto y = x.t();
#else
  auto y = x.transpose(1, 2);
#endif
  return int(y.numel()) - 24;
}
