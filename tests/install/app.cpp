// tests/install: a downstream cpu program built against an installed torchtpu (CMake package,
// pkg-config, Meson through pkg-config, plain g++ -I) and through CMake FetchContent. Prints the
// tensor and its sum; run.sh checks both.
#include <cstdio>  // std::puts

#include <torchtpu/torchtpu.hpp>  // torchtpu (installed headers)

int main() {
  torchtpu::Tensor<float> x = {{1, 2}, {3, 4}};
  torchtpu::Tensor<float> y = torchtpu::relu(torchtpu::matmul(x, x.t()) - 10.0f);
  std::puts(fmt::format("{}\nsum {}", y, y.sum().item()).c_str());
  return y.sum().item() == 17.0f ? 0 : 1;  // [[0, 1], [1, 15]]
}
