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

// Issue 18 item 11: special values give torch's answers on every dtype and on both paths (this
// file also runs as ops_softmax_scalar, with TORCHTPU_DISABLE_SIMD=1). Expected values are
// torch 2.x's (softmax of a row with +inf or NaN, or of a row of only -inf, is all NaN).
TEMPLATE_TEST_CASE("softmax special values: inf, -inf, NaN, rows of -inf", "[ops][softmax][special]", float, double,
                   bfloat16, half) {
  using T = TestType;
  const double inf = INFINITY, nan = NAN;
  const double tol = std::same_as<T, float> ? 1e-6 : std::same_as<T, double> ? 1e-12 : 1e-2;
  const double e2 = std::exp(2.0);
  struct Row {
    std::vector<double> x, p, lp;  // input, softmax, log_softmax
  };
  const std::vector<Row> rows = {
      {{1, 2, inf}, {nan, nan, nan}, {nan, nan, nan}},
      {{inf, inf}, {nan, nan}, {nan, nan}},
      {{inf, -inf}, {nan, nan}, {nan, nan}},
      {{-inf, -inf}, {nan, nan}, {nan, nan}},
      {{1, nan, 2}, {nan, nan, nan}, {nan, nan, nan}},
      {{nan, 1}, {nan, nan}, {nan, nan}},
      {{-inf, 0}, {0, 1}, {-inf, 0}},
      {{1, -inf, 3}, {1 / (1 + e2), 0, e2 / (1 + e2)}, {-std::log1p(e2), -inf, -std::log1p(1 / e2)}},
  };
  for (const Row& r : rows) {
    std::string name;
    for (double v : r.x) name += fmt::format("{} ", v);
    INFO("row " << name);
    const int64_t n = int64_t(r.x.size());
    Tensor<T> x = empty<T>({n});
    for (int64_t i = 0; i < n; ++i) x.at(i) = T(float(r.x[size_t(i)]));
    check_values(softmax(x, 0), r.p, tol, tol);
    check_values(log_softmax(x, 0), r.lp, tol, tol);
    // the same row inside a longer one (vector body and tail): padding with -inf changes nothing
    for (int64_t at : {int64_t(0), int64_t(20), int64_t(37)}) {
      INFO("padded with -inf, row at " << at);
      Tensor<T> y = full<T>({40 + n}, T(-INFINITY));
      std::vector<double> p(size_t(40 + n), 0.0), lp(size_t(40 + n), -inf);
      for (int64_t i = 0; i < n; ++i) {
        y.at(at + i) = x.at(i);
        p[size_t(at + i)] = r.p[size_t(i)];
        lp[size_t(at + i)] = r.lp[size_t(i)];
      }
      const bool row_nan = std::isnan(r.p[0]);  // a NaN row stays all NaN (the padding too)
      if (row_nan) {
        std::fill(p.begin(), p.end(), nan);
        std::fill(lp.begin(), lp.end(), nan);
      }
      if (!(r.x == std::vector<double>{-inf, -inf})) {  // padding a row of -inf with -inf: still NaN
        check_values(softmax(y, 0), p, tol, tol);
        check_values(log_softmax(y, 0), lp, tol, tol);
      }
      // along dim 0 of a [len, 2] tensor (strided reads), the second column all zeros
      Tensor<T> m = zeros<T>({40 + n, 2});
      m.select(1, 0).copy_(y);
      const Tensor<T> sm = softmax(m, 0);
      const Tensor<T> lsm = log_softmax(m, 0);
      if (!(r.x == std::vector<double>{-inf, -inf})) {
        check_values(sm.select(1, 0), p, tol, tol);
        check_values(lsm.select(1, 0), lp, tol, tol);
      }
      const double u = 1.0 / double(40 + n);
      check_values(sm.select(1, 1), std::vector<double>(size_t(40 + n), u), tol, tol);
    }
  }
  // a scalar: 1 (log: 0) when finite, NaN for inf, -inf and NaN
  for (double v : {inf, -inf, nan}) {
    INFO("scalar " << v);
    check_values(softmax(full<T>({}, T(float(v))), 0), {nan});
    check_values(log_softmax(full<T>({}, T(float(v))), 0), {nan});
  }
  check_values(softmax(full<T>({}, T(3.0f)), 0), {1});
  check_values(log_softmax(full<T>({}, T(3.0f)), 0), {0});
}
