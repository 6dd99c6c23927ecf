// Must not compile: matmul of bool tensors (bool is not a matmul dtype, as in PyTorch).
#include <torchtpu/torchtpu.hpp>  // the library

int main() {
  torchtpu::Tensor<bool> a = torchtpu::ones<bool>({2, 2});
#ifdef TORCHTPU_COMPILE_FAIL
  torchtpu::Tensor<bool> p = torchtpu::matmul(a, a);
#else
  torchtpu::Tensor<int64_t> p = torchtpu::matmul(a.to<int64_t>(), a.to<int64_t>());
#endif
  return int(p.numel()) - 4;
}
