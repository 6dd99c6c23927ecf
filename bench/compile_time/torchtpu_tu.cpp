// Compile-time benchmark TU: torchtpu, a 10-op elementwise expression materialized once.
#include <torchtpu/torchtpu.hpp>  // the library under test

float run(const torchtpu::Tensor<float>& a, const torchtpu::Tensor<float>& b,
          const torchtpu::Tensor<float>& c) {
  using namespace torchtpu;
  Tensor<float> r = relu(exp(a * b + c) - sqrt(abs(a)) / (b + 1.0f) * tanh(c));
  return r.data_ptr()[0];
}
