// Compile-time benchmark TU: xtensor 0.24, the same 10-op elementwise expression.
#include <xtensor/xarray.hpp>  // xt::xarray
#include <xtensor/xmath.hpp>   // xt::exp, xt::sqrt, ...

float run(const xt::xarray<float>& a, const xt::xarray<float>& b, const xt::xarray<float>& c) {
  xt::xarray<float> r = xt::maximum(xt::exp(a * b + c) - xt::sqrt(xt::abs(a)) / (b + 1.0f) * xt::tanh(c), 0.0f);
  return r.data()[0];
}
