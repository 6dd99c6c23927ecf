// tests/device/test_precision.cpp — matmul numerics per backend (docs/devices.md, "Numerics"):
// on the emulator (TPU numerics) DEFAULT precision multiplies f32 operands rounded to bf16 (f32
// accumulation) and HIGHEST is f32-exact; XLA's CPU plugin computes f32 at every precision. Both
// are checked against independent float64 references, with the same f32 tolerance at HIGHEST.
#include <catch2/catch.hpp>  // TEST_CASE, CHECK

#include <cmath>   // std::ldexp
#include <vector>  // std::vector

#include "emulator_fixture.hpp"  // ttest::run, random_values, bf16_round

using namespace ttest;

namespace {
std::vector<double> matmul_ref(const std::vector<double>& a, const std::vector<double>& b, int64_t M, int64_t K,
                               int64_t N, bool bf16) {
  std::vector<double> c(static_cast<size_t>(M * N), 0.0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k) {
        double x = static_cast<float>(a[static_cast<size_t>(i * K + k)]);
        double y = static_cast<float>(b[static_cast<size_t>(k * N + j)]);
        if (bf16) { x = bf16_round(x); y = bf16_round(y); }
        acc += x * y;
      }
      c[static_cast<size_t>(i * N + j)] = acc;
    }
  return c;
}

std::vector<double> run_matmul(shlo::Precision p, const std::vector<double>& a, const std::vector<double>& b, int64_t M,
                               int64_t K, int64_t N) {
  shlo::Builder bld;
  auto x = bld.parameter(ScalarType::Float, {M, K}), w = bld.parameter(ScalarType::Float, {K, N});
  bld.set_results({bld.dot_general(x, w, {{}, {}, {1}, {0}}, p)});
  return run(bld, {{ScalarType::Float, {M, K}, a}, {ScalarType::Float, {K, N}, b}})[0].values;
}
}  // namespace

TEST_CASE("precision: DEFAULT rounds f32 matmul operands to bf16 on the emulator, HIGHEST is f32-exact", "[pjrt][emulator][precision]") {
  const int64_t M = 16, K = 64, N = 24;
  const auto a = random_values(static_cast<size_t>(M * K), 1), b = random_values(static_cast<size_t>(K * N), 2);
  const auto def = run_matmul(shlo::Precision::Default, a, b, M, K, N);
  const auto hi = run_matmul(shlo::Precision::Highest, a, b, M, K, N);
  const auto ref_bf16 = matmul_ref(a, b, M, K, N, true);
  const auto ref_f32 = matmul_ref(a, b, M, K, N, false);
  // Tolerance: f32 accumulation of 64 products of magnitude <= 1 (64 * 2^-24 * 64 < 3e-4,
  // typically ~1e-6); the bf16 operand rounding moves results by ~1e-2.
  CHECK(max_abs_diff(hi, ref_f32) < 5e-5);  // both backends
  if (on_emulator()) {
    CHECK(max_abs_diff(def, ref_bf16) < 5e-5);
    CHECK(max_abs_diff(def, hi) > 1e-3);       // the two precisions differ measurably
    CHECK(max_abs_diff(def, ref_f32) > 1e-3);  // DEFAULT is not f32-exact
  } else {
    // XLA's CPU plugin: f32 at DEFAULT too, so DEFAULT is far from the bf16 reference.
    CHECK(max_abs_diff(def, ref_f32) < 5e-5);
    CHECK(max_abs_diff(def, hi) < 5e-5);
    CHECK(max_abs_diff(def, ref_bf16) > 1e-3);
  }
}

TEST_CASE("precision: one value that bf16 cannot hold", "[pjrt][emulator][precision]") {
  const double x = 1.0 + std::ldexp(1.0, -10);  // 1 + 2^-10 rounds to 1 in bf16
  CHECK(run_matmul(shlo::Precision::Default, {x}, {1.0}, 1, 1, 1)[0] == (on_emulator() ? 1.0 : x));
  CHECK(run_matmul(shlo::Precision::Highest, {x}, {1.0}, 1, 1, 1)[0] == x);
  CHECK(run_matmul(shlo::Precision::High, {x}, {1.0}, 1, 1, 1)[0] == x);  // HIGH is treated as HIGHEST (emulator)
}

TEST_CASE("precision: convolution follows the same rule", "[pjrt][emulator][precision]") {
  const double x = 1.0 + std::ldexp(1.0, -10);
  for (auto p : {shlo::Precision::Default, shlo::Precision::Highest}) {
    shlo::Builder b;
    auto in = b.parameter(ScalarType::Float, {1, 1, 2, 2}), k = b.parameter(ScalarType::Float, {1, 1, 1, 1});
    shlo::ConvOptions o;
    o.precision = p;
    b.set_results({b.convolution(in, k, o)});
    auto out = run(b, {{ScalarType::Float, {1, 1, 2, 2}, {x, 2, 3, 4}}, {ScalarType::Float, {1, 1, 1, 1}, {1}}});
    CHECK(out[0].values[0] == (p == shlo::Precision::Default && on_emulator() ? 1.0 : x));
  }
}

TEST_CASE("precision: bf16 operands with an f32 result accumulate in f32", "[pjrt][emulator][precision]") {
  shlo::Builder b;
  auto x = b.parameter(ScalarType::BFloat16, {1, 3}), w = b.parameter(ScalarType::BFloat16, {3, 1});
  b.set_results({b.dot_general(x, w, {{}, {}, {1}, {0}}, shlo::Precision::Default, ScalarType::Float)});
  // 256 + 1 + 1: not representable in bf16 (257 rounds to 256), exact in f32
  auto out = run(b, {{ScalarType::BFloat16, {1, 3}, {256, 1, 1}}, {ScalarType::BFloat16, {3, 1}, {1, 1, 1}}});
  CHECK(out[0].dtype == ScalarType::Float);
  CHECK(out[0].values[0] == 258.0);
  shlo::Builder b2;
  auto x2 = b2.parameter(ScalarType::BFloat16, {1, 3}), w2 = b2.parameter(ScalarType::BFloat16, {3, 1});
  b2.set_results({b2.dot_general(x2, w2, {{}, {}, {1}, {0}})});
  auto out2 = run(b2, {{ScalarType::BFloat16, {1, 3}, {256, 1, 1}}, {ScalarType::BFloat16, {3, 1}, {1, 1, 1}}});
  CHECK(out2[0].dtype == ScalarType::BFloat16);
  CHECK(out2[0].values[0] == 258.0);  // 258 is a bf16 value; the f32 sum is rounded once
}
