// examples/readme.cpp — the README's example: a fused matmul + bias + relu, and a reduction.
#include <iostream>  // std::cout

#include <torchtpu/torchtpu.hpp>  // the library

using namespace torchtpu;

int main() {
  Tensor<float> x = {{1, 2, 3}, {4, 5, 6}};
  Tensor<float> w = {{1, 0}, {0, 1}, {1, 1}};
  Tensor<float> b = {0.5f, -10.0f};
  Tensor<float> y = relu(matmul(x, w) + b);  // one fused pass: the epilogue runs per tile
  std::cout << y << "\n";
  std::cout << y.sum(Dims{1}) << "\n";
  return 0;
}
