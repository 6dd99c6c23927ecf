// tests/install: the torchtpu::torch component (libtorch interop) of the installed package.
#include <cstdio>  // std::printf

#include <ATen/ATen.h>                 // at::arange
#include <torchtpu/interop/torch.hpp>  // from_torch, to_torch
#include <torchtpu/torchtpu.hpp>       // torchtpu

int main() {
  at::Tensor t = at::arange(6, at::kFloat).reshape({2, 3});
  torchtpu::Tensor<float> x = torchtpu::from_torch<float>(t);  // shares t's memory
  torchtpu::Tensor<float> y = x * 2.0f;
  std::printf("shared %d\nsum %g\n", x.data_ptr() == t.data_ptr<float>() ? 1 : 0,
              static_cast<double>(y.sum().item()));
  return 0;
}
