// softmax / log_softmax: libtorch fixtures along each dim, stability with large inputs,
// -inf entries, NaN, integer inputs, non-contiguous inputs.
#include "testing.hpp"  // Fx, check_fx

using namespace torchtpu;

namespace {
#include "fixtures.inc"  // reference values from libtorch
}

TEST_CASE("softmax and log_softmax match libtorch", "[ops][softmax]") {
  const Tensor<float> x = tensor_of<float>(red_x);  // [2, 3, 4]
  // example-begin softmax
  auto p = softmax(x, 1);       // along dim 1: each [:, :, k] column sums to 1
  auto lp = x.log_softmax(-1);  // along the last dim
  // example-end softmax
  check_fx(p, softmax_d1, 2e-6, 1e-7);
  check_fx(x.softmax(-1), softmax_dm1, 2e-6, 1e-7);
  check_fx(log_softmax(x, 0), log_softmax_d0, 2e-6, 1e-6);
  check_fx(lp, log_softmax_dm1, 2e-6, 1e-6);
  check_fx(softmax(to<bfloat16>(x), -1), softmax_bf16, 8e-3, 1e-3);
}

TEST_CASE("softmax is stable for large inputs", "[ops][softmax][stability]") {
  const Tensor<float> big = {{1000, 1001, 1002}, {-1000, -1001, -1002}, {88, 89, 90}};
  check_fx(softmax(big, 1), softmax_large, 2e-6, 1e-7);
  check_fx(log_softmax(big, 1), log_softmax_large, 2e-6, 1e-6);
  // by hand: softmax([0, 1, 2]) = e^k / (1 + e + e^2)
  const double z = 1 + std::exp(1.0) + std::exp(2.0);
  check_values(softmax(big, 1).eval().select(0, 0), {1 / z, std::exp(1.0) / z, std::exp(2.0) / z}, 1e-6);
}

TEST_CASE("softmax with -inf, NaN and integer inputs", "[ops][softmax]") {
  // -inf entries get probability 0 (even first in the row); log_softmax gives -inf there
  Tensor<float> x = {-INFINITY, 0.0f, -INFINITY, 0.0f};
  check_values(softmax(x, 0), {0, 0.5, 0, 0.5});
  check_values(log_softmax(x, 0), {-INFINITY, std::log(0.5), -INFINITY, std::log(0.5)}, 1e-7);
  // a row of only -inf is NaN, as in torch
  check_values(softmax(Tensor<float>{-INFINITY, -INFINITY}, 0), {NAN, NAN});
  // NaN anywhere in a row makes the row NaN
  check_values(softmax(Tensor<float>{{1, NAN}, {1, 1}}, 1), {NAN, NAN, 0.5, 0.5});
  // integer input -> float32
  auto pi = softmax(Tensor<int64_t>{0, 0}, 0);
  STATIC_REQUIRE(std::same_as<decltype(pi)::value_type, float>);
  check_values(pi, {0.5, 0.5});
  // non-contiguous: softmax over dim 0 of a transposed view equals dim 1 of the original
  Tensor<float> m = {{1, 2, 3}, {3, 2, 1}};
  check_values(softmax(m.t(), 0), values_of(softmax(m, 1).eval().t()), 1e-7);
  // scalar: 1 (log: 0)
  check_values(softmax(full<float>({}, 5.0f), 0), {1});
  check_values(log_softmax(full<float>({}, 5.0f), -1), {0});
  CHECK_THROWS_AS(softmax(m, 2), IndexError);
}
