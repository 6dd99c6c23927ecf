// A downstream program: includes only the umbrella header, computes, prints.
#include <cstdio>  // std::puts

#include <torchtpu/torchtpu.hpp>  // torchtpu, found through dependency('torchtpu')

int main() {
  torchtpu::Tensor<float> x = {{1, 2}, {3, 4}};
  torchtpu::Tensor<float> y = torchtpu::relu(torchtpu::matmul(x, x.t()) - 10.0f);
  std::puts(fmt::format("{}", y).c_str());
  return y.sum().item() == 17.0f ? 0 : 1;  // [[0, 1], [1, 15]]
}
