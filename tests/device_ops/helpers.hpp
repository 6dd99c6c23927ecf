// tests/device_ops/helpers.hpp — shared helpers of the device tests: host values of any tensor
// and closeness checks against the cpu reference.
#pragma once
#include <catch2/catch.hpp>  // CHECK, INFO

#include <cmath>    // std::fabs, std::isnan
#include <cstdlib>  // std::getenv
#include <string>   // std::string
#include <vector>   // std::vector

#include <torchtpu/device.hpp>  // Tensor, Device, the device runtime, ...

#include "../test_backend.hpp"  // test_device, on_emulator
#include "../tolerance.hpp"     // per_dtype

namespace tt = torchtpu;

/// Row-major values of `t` as double (copies device tensors to the host: an observation).
template <class T, int R>
std::vector<double> host_values(const tt::Tensor<T, R>& t) {
  tt::Tensor<T> h = tt::Tensor<T>(t.cpu()).contiguous();
  tt::Tensor<double> d = h.template to<double>();
  const double* p = d.data_ptr();
  return std::vector<double>(p, p + d.numel());
}

/// Checks shapes equal and |got - want| <= abs + rel·|want| elementwise (NaN must match NaN).
template <class A, class B>
void check_close(const A& got, const B& want, double rel, double abs = 0.0) {
  REQUIRE(tt::to_string(got.sizes()) == tt::to_string(want.sizes()));
  const auto g = host_values(got), w = host_values(want);
  size_t bad = 0;
  double worst = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(w[i]) || std::isnan(g[i])) {
      if (!(std::isnan(w[i]) && std::isnan(g[i]))) ++bad;
      continue;
    }
    if (w[i] == g[i]) continue;  // also equal infinities
    const double err = std::fabs(g[i] - w[i]);
    if (err > abs + rel * std::fabs(w[i])) {
      ++bad;
      worst = std::max(worst, err);
    }
  }
  INFO("mismatches: " << bad << " of " << g.size() << ", worst abs error " << worst);
  CHECK(bad == 0);
}

/// Deterministic pseudo-random floats in [lo, hi).
inline tt::Tensor<float> test_input(const tt::Dims& shape, uint64_t seed, double lo = -2.0, double hi = 2.0) {
  tt::Generator gen(seed);
  tt::Tensor<float> u = tt::rand<float>(shape, gen);
  tt::Tensor<float> r = u * (hi - lo) + lo;
  return r;
}

/// `test_input` converted to dtype T.
template <class T>
tt::Tensor<T> input(const tt::Dims& shape, uint64_t seed, double lo = -2.0, double hi = 2.0) {
  return tt::Tensor<T>(test_input(shape, seed, lo, hi).template to<T>());
}


// The PJRT device under test (tests/test_backend.hpp): the TPU emulator, XLA's CPU plugin
// (TORCHTPU_TEST_BACKEND=xla_cpu) or $TORCHTPU_TEST_DEVICE (tools/device_check.sh sets "cuda").
using ttest::on_emulator;
using ttest::test_device;
using ttest::test_device_str;
