// tests/install: the torchtpu::dlpack component of the installed package.
#include <cstdio>  // std::printf

#include <torchtpu/interop/dlpack.hpp>  // to_dlpack, from_dlpack
#include <torchtpu/torchtpu.hpp>        // torchtpu

int main() {
  torchtpu::Tensor<float> x = {1, 2, 3, 4};
  DLManagedTensor* m = torchtpu::to_dlpack(x);
  torchtpu::Tensor<float> y = torchtpu::from_dlpack<float>(m);  // takes ownership of m
  std::printf("shared %d\nsum %g\n", x.data_ptr() == y.data_ptr() ? 1 : 0,
              static_cast<double>(y.sum().item()));
  return 0;
}
