// tests/ops/test_pool.cpp — the poolings added to the operator library beside max_pool2d,
// avg_pool2d and adaptive_avg_pool2d (tests/ops/test_conv.cpp): max_pool2d_with_indices,
// max_pool1d(_with_indices), avg_pool1d, adaptive_avg_pool1d, adaptive_max_pool2d/1d
// (ops/pool.hpp, ops/pool_indices.hpp), and integer max pooling, on the cpu: every dtype each
// op takes, ceil_mode, padding, dilation, unbatched and non-contiguous inputs, NaN, calls by
// aten name, errors naming the op and the operand.
// References: float64 loops written here from torch's definitions (each window scanned in
// row-major order; an element greater than the running maximum, or NaN, takes its place,
// starting from -inf at the window's first in-bounds position: aten/src/ATen/native/cpu/
// MaxPoolKernel.cpp), and torch 1.13 values pasted as literals (produced by /usr/bin/python3
// with torch.nn.functional on `sinus` inputs, `torch.sin(torch.arange(n, dtype=torch.float64)
// * f) * a` as float32, printed with `[round(v, 6) for v in t.flatten().tolist()]`; the
// snippet is above each literal).
#include <catch2/catch.hpp>  // TEMPLATE_TEST_CASE, CHECK, CHECK_THROWS_AS

#include <cmath>    // std::sin, std::isnan
#include <cstdint>  // int64_t, int32_t, uint8_t
#include <limits>   // std::numeric_limits
#include <string>   // std::string
#include <vector>   // std::vector

#include <torchtpu/core/factories.hpp>   // from_data
#include <torchtpu/ops/all.hpp>          // ops::call_by_name, ops::call_by_name_all, ops::Arg
#include <torchtpu/ops/pool.hpp>         // max_pool2d, max_pool1d, avg_pool1d, adaptive_avg_pool1d
#include <torchtpu/ops/pool_indices.hpp> // max_pool2d_with_indices, max_pool1d_with_indices, adaptive_max_pool2d/1d

#include "testing.hpp"  // optest: vals, check_near, per_dtype, input

using namespace torchtpu;

using optest::check_near;
using optest::per_dtype;
using optest::sinus;
using optest::vals;

namespace {

using V = std::vector<int64_t>;

/// Pooling inputs of dtype T: `sinus` for the floating types; small integers with many repeats
/// (ties) for the integer ones (uint8: [0, 40), else [-20, 20)).
template <class T>
Tensor<T> pool_input(const Dims& s, uint64_t seed) {
  if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, half> || std::is_same_v<T, bfloat16>)
    return sinus<T>(s, 0.77 + 0.01 * double(seed));
  else if constexpr (std::is_same_v<T, uint8_t>)
    return optest::input<T>(s, seed, 0.0, 40.0);
  else
    return optest::input<T>(s, seed, -20.0, 20.0);
}

/// A reference max pooling with positions of `x: [P, H, W]` (float64 values): window (oh, ow)
/// covers rows `r0[oh] + i * dr` below `r1[oh]` and columns likewise; scanned as torch scans.
struct MaxRef {
  std::vector<double> v;
  std::vector<int64_t> i;
};
MaxRef ref_max(const std::vector<double>& x, int64_t P, int64_t H, int64_t W, const V& r0, const V& r1, int64_t dr,
               const V& c0, const V& c1, int64_t dc) {
  MaxRef r;
  for (int64_t p = 0; p < P; ++p)
    for (size_t oh = 0; oh < r0.size(); ++oh)
      for (size_t ow = 0; ow < c0.size(); ++ow) {
        double m = -std::numeric_limits<double>::infinity();
        int64_t mi = r0[oh] * W + c0[ow];
        for (int64_t h = r0[oh]; h < r1[oh]; h += dr)
          for (int64_t w = c0[ow]; w < c1[ow]; w += dc) {
            const double v = x[size_t((p * H + h) * W + w)];
            if (v > m || std::isnan(v)) {
              m = v;
              mi = h * W + w;
            }
          }
        r.v.push_back(m);
        r.i.push_back(mi);
      }
  return r;
}

/// torch's pooling output size (pooling_output_shape).
int64_t ref_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  const int64_t num = in + 2 * p - d * (k - 1) - 1;
  int64_t o = (ceil_mode ? (num + s - 1) / s : num / s) + 1;
  if (ceil_mode && (o - 1) * s >= in + p) --o;
  return o;
}

/// The window bounds of fixed pooling along one axis: first in-bounds position (torch's: the
/// window start moved up by whole dilations while negative) and one past the last.
void fixed_bounds(int64_t n, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode, V& lo, V& hi) {
  const int64_t on = ref_out(n, k, s, p, d, ceil_mode);
  for (int64_t o = 0; o < on; ++o) {
    int64_t a = o * s - p;
    const int64_t b = std::min(a + (k - 1) * d + 1, n);
    while (a < 0) a += d;
    lo.push_back(a);
    hi.push_back(b);
  }
}

/// The window bounds of adaptive pooling of `n` to `on`: [floor(o n / on), ceil((o + 1) n / on)).
void adaptive_bounds(int64_t n, int64_t on, V& lo, V& hi) {
  for (int64_t o = 0; o < on; ++o) {
    lo.push_back(o * n / on);
    hi.push_back(((o + 1) * n + on - 1) / on);
  }
}

/// Reference fixed max pooling of `x: [P, H, W]`.
MaxRef ref_max_fixed(const std::vector<double>& x, int64_t P, int64_t H, int64_t W, V k, V s, V p, V d, bool ceil_mode) {
  V r0, r1, c0, c1;
  fixed_bounds(H, k[0], s[0], p[0], d[0], ceil_mode, r0, r1);
  fixed_bounds(W, k[1], s[1], p[1], d[1], ceil_mode, c0, c1);
  return ref_max(x, P, H, W, r0, r1, d[0], c0, c1, d[1]);
}

/// Reference adaptive max pooling of `x: [P, H, W]` to `[P, OH, OW]`.
MaxRef ref_max_adaptive(const std::vector<double>& x, int64_t P, int64_t H, int64_t W, int64_t OH, int64_t OW) {
  V r0, r1, c0, c1;
  adaptive_bounds(H, OH, r0, r1);
  adaptive_bounds(W, OW, c0, c1);
  return ref_max(x, P, H, W, r0, r1, 1, c0, c1, 1);
}

/// Reference average pooling of `x: [P, L]` (1-D, torch's divide_factor).
std::vector<double> ref_avg1d(const std::vector<double>& x, int64_t P, int64_t L, int64_t k, int64_t s, int64_t p,
                              bool ceil_mode, bool count_include_pad) {
  const int64_t OL = ref_out(L, k, s, p, 1, ceil_mode);
  std::vector<double> y;
  for (int64_t pl = 0; pl < P; ++pl)
    for (int64_t o = 0; o < OL; ++o) {
      int64_t a = o * s - p, b = std::min(a + k, L + p);
      const int64_t pool = b - a;
      a = std::max<int64_t>(a, 0);
      b = std::min(b, L);
      double sum = 0;
      for (int64_t i = a; i < b; ++i) sum += x[size_t(pl * L + i)];
      y.push_back(sum / double(count_include_pad ? pool : b - a));
    }
  return y;
}

/// Reference adaptive average pooling of `x: [P, L]` to `[P, OL]`.
std::vector<double> ref_adaptive_avg1d(const std::vector<double>& x, int64_t P, int64_t L, int64_t OL) {
  V lo, hi;
  adaptive_bounds(L, OL, lo, hi);
  std::vector<double> y;
  for (int64_t pl = 0; pl < P; ++pl)
    for (int64_t o = 0; o < OL; ++o) {
      double sum = 0;
      for (int64_t i = lo[size_t(o)]; i < hi[size_t(o)]; ++i) sum += x[size_t(pl * L + i)];
      y.push_back(sum / double(hi[size_t(o)] - lo[size_t(o)]));
    }
  return y;
}

std::vector<double> as_doubles(const std::vector<int64_t>& v) { return std::vector<double>(v.begin(), v.end()); }

/// The geometries of the fixed-window tests: kernel, stride, padding, dilation (per dim), ceil_mode.
struct P {
  V k, s, p, d;
  bool ceil;
};
const std::vector<P> kPools = {P{{2, 2}, {2, 2}, {0, 0}, {1, 1}, false}, P{{3, 3}, {2, 2}, {1, 1}, {1, 1}, true},
                               P{{3, 2}, {1, 3}, {1, 0}, {2, 1}, true},  P{{3, 3}, {2, 2}, {1, 1}, {2, 2}, false},
                               P{{2, 3}, {3, 2}, {1, 1}, {1, 1}, true},  P{{1, 4}, {1, 3}, {0, 2}, {1, 2}, true}};

/// Error message check: `f` throws a torchtpu Error whose text contains `what`.
template <class F>
void throws(F f, const std::string& what) {
  try {
    f();
    FAIL("expected an error containing " + what);
  } catch (const Error& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains(what));
  }
}

}  // namespace

TEMPLATE_TEST_CASE("max_pool2d_with_indices and max_pool2d against float64 references", "[ops][pool]", half, bfloat16, float,
                   double, uint8_t, int32_t, int64_t) {
  using T = TestType;
  const Tensor<T> x = pool_input<T>(Dims{2, 3, 9, 10}, 1);
  const std::vector<double> xv = vals(x);
  for (const P& c : kPools) {
    INFO("kernel " << c.k[0] << "x" << c.k[1] << " stride " << c.s[0] << "x" << c.s[1] << " dilation " << c.d[0] << "x" << c.d[1]);
    const MaxRef want = ref_max_fixed(xv, 6, 9, 10, c.k, c.s, c.p, c.d, c.ceil);
    const auto [v, i] = max_pool2d_with_indices(x, c.k, c.s, c.p, c.d, c.ceil);
    const int64_t OH = ref_out(9, c.k[0], c.s[0], c.p[0], c.d[0], c.ceil), OW = ref_out(10, c.k[1], c.s[1], c.p[1], c.d[1], c.ceil);
    CHECK(v.sizes() == Dims{2, 3, OH, OW});
    CHECK(i.sizes() == Dims{2, 3, OH, OW});
    check_near(vals(v), want.v, 0, 0);  // exact
    check_near(vals(i), as_doubles(want.i), 0, 0);
    check_near(vals(max_pool2d(x, c.k, c.s, c.p, c.d, c.ceil)), want.v, 0, 0);  // the values-only op agrees
  }
  SECTION("AnyTensor, unbatched, non-contiguous, by name") {
    const auto [v, i] = max_pool2d_with_indices(AnyTensor(x.select(0, 1)), {3}, {2}, {1});
    const MaxRef want = ref_max_fixed(vals(x.select(0, 1)), 3, 9, 10, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false);
    CHECK(v.dtype() == dtype_of<T>());
    CHECK(i.dtype() == ScalarType::Int64);
    CHECK(v.sizes() == Dims{3, 5, 5});
    check_near(vals(v.template get<T>()), want.v, 0, 0);
    check_near(vals(i.template get<int64_t>()), as_doubles(want.i), 0, 0);
    const Tensor<T> xt = x.transpose(2, 3);  // [2, 3, 10, 9], not contiguous
    const auto [vt, it] = max_pool2d_with_indices(xt, {2, 3}, {2, 2}, {1, 0}, {1, 2}, true);
    const MaxRef wt = ref_max_fixed(vals(xt), 6, 10, 9, {2, 3}, {2, 2}, {1, 0}, {1, 2}, true);
    check_near(vals(vt), wt.v, 0, 0);
    check_near(vals(it), as_doubles(wt.i), 0, 0);
    const std::vector<ops::Arg> args = {AnyTensor(x), V{3, 2}, V{}, V{1, 0}, V{2, 1}, true};
    const std::vector<AnyTensor> r = ops::call_by_name_all("aten::max_pool2d_with_indices", args);
    REQUIRE(r.size() == 2);
    const MaxRef wn = ref_max_fixed(xv, 6, 9, 10, {3, 2}, {3, 2}, {1, 0}, {2, 1}, true);
    check_near(vals(r[0].template get<T>()), wn.v, 0, 0);
    check_near(vals(r[1].template get<int64_t>()), as_doubles(wn.i), 0, 0);
    CHECK(ops::call_by_name("aten::max_pool2d", args).sizes() == r[0].sizes());
  }
  SECTION("max_pool1d_with_indices: the 2-D pooling with H = 1") {
    const Tensor<T> x1 = pool_input<T>(Dims{2, 3, 11}, 2);
    for (const P& c : kPools) {
      const auto [v, i] = max_pool1d_with_indices(x1, {c.k[1]}, {c.s[1]}, {c.p[1]}, {c.d[1]}, c.ceil);
      const MaxRef want = ref_max_fixed(vals(x1), 6, 1, 11, {1, c.k[1]}, {1, c.s[1]}, {0, c.p[1]}, {1, c.d[1]}, c.ceil);
      CHECK(v.sizes() == Dims{2, 3, ref_out(11, c.k[1], c.s[1], c.p[1], c.d[1], c.ceil)});
      check_near(vals(v), want.v, 0, 0);
      check_near(vals(i), as_doubles(want.i), 0, 0);
    }
    const std::vector<ops::Arg> args = {AnyTensor(x1.select(0, 0)), V{3}, V{}, V{1}};  // unbatched, defaults
    const std::vector<AnyTensor> r = ops::call_by_name_all("aten::max_pool1d_with_indices", args);
    const MaxRef want = ref_max_fixed(vals(x1.select(0, 0)), 3, 1, 11, {1, 3}, {1, 3}, {0, 1}, {1, 1}, false);
    CHECK(r[0].sizes() == Dims{3, 4});
    check_near(vals(r[0].template get<T>()), want.v, 0, 0);
    check_near(vals(r[1].template get<int64_t>()), as_doubles(want.i), 0, 0);
  }
  SECTION("empty batch") {
    const auto [v, i] = max_pool2d_with_indices(Tensor<T>::empty(Dims{0, 3, 5, 5}), {2});
    CHECK(v.sizes() == Dims{0, 3, 2, 2});
    CHECK(i.sizes() == Dims{0, 3, 2, 2});
  }
}

TEMPLATE_TEST_CASE("max_pool1d, avg_pool1d, adaptive_avg_pool1d against float64 references", "[ops][pool]", half, bfloat16,
                   float, double) {
  using T = TestType;
  const double e = per_dtype<T>(1e-12, 1e-5, 2e-3, 1.6e-2);
  const Tensor<T> x = pool_input<T>(Dims{2, 3, 11}, 3);
  const std::vector<double> xv = vals(x);
  for (const P& c : kPools) {
    INFO("kernel " << c.k[1] << " stride " << c.s[1] << " padding " << c.p[1] << " dilation " << c.d[1]);
    const MaxRef want = ref_max_fixed(xv, 6, 1, 11, {1, c.k[1]}, {1, c.s[1]}, {0, c.p[1]}, {1, c.d[1]}, c.ceil);
    check_near(vals(max_pool1d(x, {c.k[1]}, {c.s[1]}, {c.p[1]}, {c.d[1]}, c.ceil)), want.v, 0, 0);
    for (bool cip : {true, false}) {
      const Tensor<T> a = avg_pool1d(x, {c.k[1]}, {c.s[1]}, {c.p[1]}, c.ceil, cip);
      CHECK(a.sizes() == Dims{2, 3, ref_out(11, c.k[1], c.s[1], c.p[1], 1, c.ceil)});
      check_near(vals(a), ref_avg1d(xv, 6, 11, c.k[1], c.s[1], c.p[1], c.ceil, cip), e, e);
    }
  }
  for (int64_t o : {1, 3, 4, 11, 13, 0}) {
    INFO("output_size " << o);
    const Tensor<T> y = adaptive_avg_pool1d(x, {o});
    CHECK(y.sizes() == Dims{2, 3, o});
    check_near(vals(y), ref_adaptive_avg1d(xv, 6, 11, o), e, e);
  }
  SECTION("AnyTensor, unbatched, non-contiguous, by name") {
    const Tensor<T> u = x.select(0, 1);
    check_near(vals(max_pool1d(AnyTensor(u), {2}).template get<T>()),
               ref_max_fixed(vals(u), 3, 1, 11, {1, 2}, {1, 2}, {0, 0}, {1, 1}, false).v, 0, 0);
    const Tensor<T> xt = pool_input<T>(Dims{2, 9, 3}, 4).transpose(1, 2);  // [2, 3, 9], not contiguous
    check_near(vals(avg_pool1d(xt, {3}, {2}, {1}, true, false)), ref_avg1d(vals(xt), 6, 9, 3, 2, 1, true, false), e, e);
    check_near(vals(adaptive_avg_pool1d(AnyTensor(xt), {4}).template get<T>()), ref_adaptive_avg1d(vals(xt), 6, 9, 4), e, e);
    const std::vector<ops::Arg> mp = {AnyTensor(x), V{3}, V{}, V{1}, V{2}, true};
    check_near(vals(ops::call_by_name("aten::max_pool1d", mp).template get<T>()),
               ref_max_fixed(xv, 6, 1, 11, {1, 3}, {1, 3}, {0, 1}, {1, 2}, true).v, 0, 0);
    const std::vector<ops::Arg> ap = {AnyTensor(x), V{4}, V{3}, V{2}, true, false};
    check_near(vals(ops::call_by_name("aten::avg_pool1d", ap).template get<T>()), ref_avg1d(xv, 6, 11, 4, 3, 2, true, false), e, e);
    const std::vector<ops::Arg> aa = {AnyTensor(u), V{5}};
    check_near(vals(ops::call_by_name("aten::adaptive_avg_pool1d", aa).template get<T>()), ref_adaptive_avg1d(vals(u), 3, 11, 5), e, e);
  }
}

TEMPLATE_TEST_CASE("adaptive_max_pool2d and adaptive_max_pool1d against float64 references", "[ops][pool]", half, bfloat16,
                   float, double) {
  using T = TestType;
  Tensor<T> x = Tensor<T>(pool_input<T>(Dims{2, 3, 9, 10}, 5).clone());
  // ties: equal values in one window (the first wins)
  x.data_ptr()[1] = x.data_ptr()[0];
  x.data_ptr()[10] = x.data_ptr()[0];
  const std::vector<double> xv = vals(x);
  for (V o : {V{3, 5}, V{4, 3}, V{1, 1}, V{9, 10}, V{7}, V{10, 13}, V{0, 2}}) {
    const int64_t oh = o[0], ow = o.size() > 1 ? o[1] : o[0];
    INFO("output_size " << oh << "x" << ow);
    const auto [v, i] = adaptive_max_pool2d(x, o);
    const MaxRef want = ref_max_adaptive(xv, 6, 9, 10, oh, ow);
    CHECK(v.sizes() == Dims{2, 3, oh, ow});
    CHECK(i.sizes() == Dims{2, 3, oh, ow});
    check_near(vals(v), want.v, 0, 0);
    check_near(vals(i), as_doubles(want.i), 0, 0);
  }
  const Tensor<T> x1 = pool_input<T>(Dims{2, 3, 11}, 6);
  for (int64_t o : {1, 4, 11, 14}) {
    const auto [v, i] = adaptive_max_pool1d(x1, {o});
    const MaxRef want = ref_max_adaptive(vals(x1), 6, 1, 11, 1, o);
    CHECK(v.sizes() == Dims{2, 3, o});
    check_near(vals(v), want.v, 0, 0);
    check_near(vals(i), as_doubles(want.i), 0, 0);
  }
  SECTION("AnyTensor, unbatched, non-contiguous, by name") {
    const Tensor<T> xt = x.transpose(2, 3).select(0, 1);  // [3, 10, 9]
    const auto [v, i] = adaptive_max_pool2d(AnyTensor(xt), {4, 2});
    const MaxRef want = ref_max_adaptive(vals(xt), 3, 10, 9, 4, 2);
    CHECK(v.sizes() == Dims{3, 4, 2});
    check_near(vals(v.template get<T>()), want.v, 0, 0);
    check_near(vals(i.template get<int64_t>()), as_doubles(want.i), 0, 0);
    const std::vector<ops::Arg> a2 = {AnyTensor(x), V{3, 4}};
    const std::vector<AnyTensor> r2 = ops::call_by_name_all("aten::adaptive_max_pool2d", a2);
    const MaxRef w2 = ref_max_adaptive(xv, 6, 9, 10, 3, 4);
    check_near(vals(r2[0].template get<T>()), w2.v, 0, 0);
    check_near(vals(r2[1].template get<int64_t>()), as_doubles(w2.i), 0, 0);
    const std::vector<ops::Arg> a1 = {AnyTensor(x1.select(0, 0)), V{3}};
    const std::vector<AnyTensor> r1 = ops::call_by_name_all("aten::adaptive_max_pool1d", a1);
    const MaxRef w1 = ref_max_adaptive(vals(x1.select(0, 0)), 3, 1, 11, 1, 3);
    CHECK(r1[0].sizes() == Dims{3, 3});
    check_near(vals(r1[0].template get<T>()), w1.v, 0, 0);
    check_near(vals(r1[1].template get<int64_t>()), as_doubles(w1.i), 0, 0);
  }
}

TEMPLATE_TEST_CASE("max pooling with indices: NaN, -inf, padding, degenerate windows", "[ops][pool]", half, bfloat16, float,
                   double) {
  using T = TestType;
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  // [[1, nan, 3], [nan, 2, 5], [5, 1, 0]]: torch 1.13 gives the last NaN of each window
  // F.max_pool2d(x, 2, 1, return_indices=True) -> [[nan, nan], [nan, 5.]], [[3, 1], [3, 5]]
  const Tensor<T> x = optest::make<T>({1, nan, 3, nan, 2, 5, 5, 1, 0}, Dims{1, 1, 3, 3});
  const auto [v, i] = max_pool2d_with_indices(x, {2}, {1});
  const std::vector<double> vv = vals(v);
  CHECK(std::isnan(vv[0]));
  CHECK(std::isnan(vv[1]));
  CHECK(std::isnan(vv[2]));
  CHECK(vv[3] == 5.0);
  check_near(vals(i), {3, 1, 3, 5}, 0, 0);
  // F.max_pool2d(x, 3, return_indices=True) -> nan, 3; F.adaptive_max_pool2d(x, (2, 2)) as above
  check_near(vals(max_pool2d_with_indices(x, {3}).second), {3}, 0, 0);
  const auto [av, ai] = adaptive_max_pool2d(x, {2, 2});
  check_near(vals(av), vv, 0, 0);
  check_near(vals(ai), {3, 1, 3, 5}, 0, 0);
  // all -inf (padding included): the first in-bounds position of each window
  // F.max_pool2d(torch.full((1, 1, 2, 2), -inf), 2, 1, 1, return_indices=True) -> [[0, 0, 1], [0, 0, 1], [2, 2, 3]]
  const auto [nv, ni] = max_pool2d_with_indices(optest::make<T>({-inf, -inf, -inf, -inf}, Dims{1, 1, 2, 2}), {2}, {1}, {1});
  for (double d : vals(nv)) CHECK(d == -inf);
  check_near(vals(ni), {0, 0, 1, 0, 0, 1, 2, 2, 3}, 0, 0);
  // a window with no element inside the input (dilation jumps over it): -inf at torch's index
  // F.max_pool2d(torch.arange(4.).view(1, 1, 2, 2), (2, 1), 1, (1, 0), (3, 1), return_indices=True) -> -inf, [4, 5]
  const auto [dv, di] = max_pool2d_with_indices(optest::make<T>({0, 1, 2, 3}, Dims{1, 1, 2, 2}), {2, 1}, {1}, {1, 0}, {3, 1});
  CHECK(dv.sizes() == Dims{1, 1, 1, 2});
  for (double d : vals(dv)) CHECK(d == -inf);
  check_near(vals(di), {4, 5}, 0, 0);
}

TEST_CASE("pooling: torch 1.13 values", "[ops][pool]") {
  const Tensor<float> x = sinus<float>(Dims{1, 2, 5, 6}, 0.77), x1 = sinus<float>(Dims{2, 3, 9}, 0.77);
  // example-begin max-pool2d-with-indices
  // v, i = F.max_pool2d(x, 3, 2, 1, 2, ceil_mode=True, return_indices=True)
  const auto [v, i] = max_pool2d_with_indices(x, {3}, {2}, {1}, {2}, true);  // kernel, stride, padding, dilation
  // example-end max-pool2d-with-indices
  check_near(vals(v), {1.761992, 1.761992, 1.632371, 1.761992, 1.761992, 1.632371, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0}, 0, 2e-6);
  check_near(vals(i), {19, 19, 11, 19, 19, 11, 21, 21, 21, 21, 21, 21}, 0, 0);
  // example-begin max-pool2d
  // F.max_pool2d(x, 3, 2, 1, 2, ceil_mode=True)
  const Tensor<float> m = max_pool2d(x, {3}, {2}, {1}, {2}, true);
  // example-end max-pool2d
  check_near(vals(m), vals(v), 0, 0);
  // v, i = F.max_pool1d(x1, 3, 2, 1, 2, ceil_mode=True, return_indices=True)
  const auto [v1, i1] = max_pool1d_with_indices(x1, {3}, {2}, {1}, {2}, true);
  check_near(vals(v1), {1.478011, 1.478011, 1.478011, -1.30125, 1.976336, 1.976336, 0.367457, -0.487772, 1.761992, 1.761992,
                        0.779655, 0.779655, 0.835829, 0.835829, 1.732112, 1.732112, -0.427996, 0.306929, 1.984822, 1.984822,
                        -1.347264, 1.435949, 1.435949, 1.435949},
             0, 2e-6);
  check_near(vals(i1), {3, 3, 3, 5, 1, 1, 3, 7, 1, 1, 7, 7, 1, 1, 7, 7, 1, 5, 7, 7, 3, 5, 5, 5}, 0, 0);
  check_near(vals(max_pool1d(x1, {3}, {2}, {1}, {2}, true)), vals(v1), 0, 0);
  // F.avg_pool1d(x1, 3, 2, 1, ceil_mode=True, count_include_pad=False)
  check_near(vals(avg_pool1d(x1, {3}, {2}, {1}, true, false)),
             {0.696135, 1.623111, 0.099956, -1.616955, -0.901947, 1.590816, 1.325388, -0.897007, -1.380628, 0.256141,
              1.84283, 0.492228, -1.531592, -0.586548, 1.310751, 1.350369, -0.539785, -1.547437, 0.444489, 1.835838,
              0.312379, -1.353732, -0.93814, 1.295959, 1.619273, -0.851808, -1.620792, 0.050151, 1.623881, 0.748546},
             0, 2e-6);
  // F.adaptive_avg_pool1d(x1, 4)
  check_near(vals(adaptive_avg_pool1d(x1, {4})),
             {1.130441, 1.200057, -1.056538, -1.265121, 1.604668, 0.298353, -1.586294, -0.396041, 1.430633, -0.723881,
              -1.475211, 0.633033, 0.678643, -1.453678, -0.768165, 1.406372, -0.347508, -1.59621, 0.249208, 1.611557,
              -1.233271, -1.093898, 1.165905, 1.165698},
             0, 2e-6);
  // v, i = F.adaptive_max_pool2d(x, (3, 4), return_indices=True)
  const auto [v2, i2] = adaptive_max_pool2d(x, {3, 4});
  check_near(vals(v2), {1.39227, 1.999052, 1.976336, 1.976336, 1.923669, 1.761992, 1.976336, 1.976336, 1.923669, 1.841848,
                        1.864909, 0.835829, 1.052754, -0.427996, 1.732112, 1.939563, 1.984822, 1.984822, 2.0, 1.435694,
                        0.061766, 1.435949, 2.0, 1.984867},
             0, 2e-6);
  check_near(vals(i2), {1, 2, 10, 10, 18, 19, 10, 10, 18, 26, 27, 28, 6, 7, 4, 5, 13, 13, 21, 22, 19, 20, 21, 29}, 0, 0);
  // v, i = F.adaptive_max_pool1d(x1, 4, return_indices=True)
  const auto [v3, i3] = adaptive_max_pool1d(x1, {4});
  check_near(vals(v3), {1.999052, 1.999052, 0.123107, -0.245748, 1.976336, 1.632371, -1.104769, 1.000053, 1.923669, 0.606237,
                        -0.722403, 1.841848, 1.864909, -0.664808, 0.54744, 1.939563, 1.052754, -1.15543, 1.596126, 1.984822,
                        -0.184698, 0.061766, 2.0, 2.0},
             0, 2e-6);
  check_near(vals(i3), {2, 2, 4, 8, 1, 2, 4, 8, 0, 2, 6, 8, 0, 2, 6, 8, 0, 4, 6, 7, 0, 4, 6, 6}, 0, 0);
}

TEST_CASE("pooling: errors name the op and the operand", "[ops][pool][errors]") {
  const Tensor<float> x = sinus<float>(Dims{1, 3, 5, 5}), x1 = sinus<float>(Dims{1, 3, 5});
  CHECK_THROWS_AS(max_pool2d_with_indices(Tensor<bool>::empty(Dims{1, 3, 5, 5}), {2}), TypeError);
  throws([&] { max_pool2d_with_indices(Tensor<bool>::empty(Dims{1, 3, 5, 5}), {2}); },
         "aten::max_pool2d_with_indices: expected a numeric input (not bool), got bool (operands [1, 3, 5, 5] bool)");
  throws([&] { max_pool2d(AnyTensor(Tensor<bool>::empty(Dims{1, 3, 5, 5})), {2}); }, "aten::max_pool2d: expected a numeric input");
  throws([&] { max_pool2d_with_indices(x, {3}, {1}, {2}); },
         "aten::max_pool2d_with_indices: padding [2, 2] must be non-negative and at most half of kernel_size [3, 3]");
  throws([&] { max_pool2d_with_indices(x, {7}); }, "aten::max_pool2d_with_indices: the output size [0, 0] is too small");
  CHECK_THROWS_AS(max_pool2d_with_indices(sinus<float>(Dims{5, 5}), {2}), ShapeError);
  // 1-D
  CHECK_THROWS_AS(max_pool1d(Tensor<int64_t>::empty(Dims{1, 3, 5}), {2}), TypeError);
  throws([&] { max_pool1d(Tensor<int64_t>::empty(Dims{1, 3, 5}), {2}); },
         "aten::max_pool1d: expected a floating point input (float16, bfloat16, float32, float64), got int64 (operands [1, 3, 5] int64)");
  CHECK_THROWS_AS(max_pool1d(x1, {2, 2}), ValueError);
  throws([&] { max_pool1d(x1, {2, 2}); }, "aten::max_pool1d: kernel_size must be a single int, got [2, 2] (operands [1, 3, 5] float32)");
  throws([&] { max_pool1d_with_indices(x1, {2}, {1, 1}); }, "aten::max_pool1d_with_indices: stride must be a single int, got [1, 1]");
  CHECK_THROWS_AS(max_pool1d(x, {2}), ShapeError);
  throws([&] { max_pool1d(x, {2}); }, "aten::max_pool1d: expected a 2-D [C, L] or 3-D [N, C, L] input (operands [1, 3, 5, 5] float32)");
  throws([&] { avg_pool1d(x1, {3}, {1}, {2}); }, "aten::avg_pool1d: padding [2] must be non-negative and at most half of kernel_size [3]");
  throws([&] { avg_pool1d(x1, {0}); }, "aten::avg_pool1d: kernel_size, stride and dilation must be positive, got kernel_size [0]");
  CHECK_THROWS_AS(max_pool1d(sinus<float>(Dims{1, 3, 1}), {2}), ShapeError);
  throws([&] { max_pool1d(sinus<float>(Dims{1, 3, 1}), {2}); }, "aten::max_pool1d: the output size [0] is too small");
  throws([&] { max_pool1d(sinus<float>(Dims{1, 0, 4}), {2}); }, "aten::max_pool1d: expected non-zero sizes in every dim but the batch");
  // adaptive
  CHECK_THROWS_AS(adaptive_max_pool2d(Tensor<int32_t>::empty(Dims{1, 3, 5, 5}), {2}), TypeError);
  throws([&] { adaptive_max_pool2d(Tensor<int32_t>::empty(Dims{1, 3, 5, 5}), {2}); },
         "aten::adaptive_max_pool2d: expected a floating point input");
  throws([&] { adaptive_max_pool2d(x, {1, 2, 3}); }, "aten::adaptive_max_pool2d: output_size must be one or two non-negative ints, got [1, 2, 3]");
  throws([&] { adaptive_max_pool2d(x, {-1}); }, "aten::adaptive_max_pool2d: output_size must be one or two non-negative ints, got [-1]");
  CHECK_THROWS_AS(adaptive_max_pool1d(x1, {2, 2}), ValueError);
  throws([&] { adaptive_max_pool1d(x1, {2, 2}); }, "aten::adaptive_max_pool1d: output_size must be one non-negative int, got [2, 2]");
  throws([&] { adaptive_avg_pool1d(x1, {2, 2}); }, "aten::adaptive_avg_pool1d: output_size must be one non-negative int, got [2, 2]");
  throws([&] { adaptive_avg_pool1d(sinus<float>(Dims{3, 0}), {2}); },
         "aten::adaptive_avg_pool1d: expected non-zero sizes in every dim but the batch (operands [3, 0] float32)");
  // the dtype set: checked after the shape rule
  throws([&] { avg_pool1d(AnyTensor(Tensor<int32_t>::empty(Dims{1, 3, 5})), {2}); },
         "aten::avg_pool1d: dtype int32 is not supported (operands [1, 3, 5] int32; supported: int64, float16, bfloat16, float32, float64)");
  throws([&] { avg_pool2d(Tensor<bool>::empty(Dims{1, 3, 5, 5}), {2}); }, "aten::avg_pool2d: expected a numeric input");
}

TEST_CASE("avg_pool2d and avg_pool1d on int64: the sum divided with truncation toward zero (torch 1.13)", "[ops][pool]") {
  // x = torch.arange(-8, 17).view(1, 1, 5, 5); values printed by torch 1.13's cpu kernel
  const Tensor<int64_t> x = arange<int64_t>(-8, 17).view({1, 1, 5, 5});
  // F.avg_pool2d(x, 2): [-20, -12, 20, 28] / 4
  check_near(vals(avg_pool2d(x, {2})), {-5, -3, 5, 7}, 0, 0);
  // F.avg_pool2d(x, 3, stride=2, padding=1): the corner window sums to -20, / 9 -> -2
  check_near(vals(avg_pool2d(x, {3}, {2}, {1})), {-2, -2, 0, 1, 4, 3, 4, 7, 5}, 0, 0);
  // count_include_pad=False: -20 / 4 = -5, -21 / 6 = -3 (not floor's -4)
  check_near(vals(avg_pool2d(x, {3}, {2}, {1}, false, false)), {-5, -3, -2, 2, 4, 5, 10, 11, 13}, 0, 0);
  // F.avg_pool2d(x, [2, 3], stride=[1, 2], padding=[0, 1], divisor_override=5)
  check_near(vals(avg_pool2d(AnyTensor(x), {2, 3}, {1, 2}, {0, 1}, false, true, 5).get<int64_t>()),
             {-4, -4, -1, 0, 1, 2, 4, 7, 6, 8, 13, 10}, 0, 0);
  // F.avg_pool1d(x[0], 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)
  check_near(vals(avg_pool1d(x.view({1, 5, 5}), {3}, {2}, {1}, true, false)),
             {-7, -6, -4, -2, -1, 0, 2, 4, 5, 7, 9, 10, 12, 14, 15}, 0, 0);
  const std::vector<ops::Arg> a = {AnyTensor(x), V{2}, V{}, V{0}, false, true, ops::Arg()};
  CHECK(ops::call_by_name("aten::avg_pool2d", a).dtype() == ScalarType::Int64);
}
