// torchtpu/fuse/vecmath.hpp — vectorized float math for the fused loops: exp, log, tanh,
// sigmoid, erf, gelu, silu and the piecewise-linear activations, written once over the
// portable vector operations of simd.hpp (`V` is any `FloatVec<Target>`) and compiled for
// each target. Op structs in ops/ call these from their `simd` members (found by
// argument-dependent lookup).
#pragma once
#include "simd.hpp"  // FloatVec, vfma, vscalef, vmant_exp, ...

namespace torchtpu::detail {

#if TORCHTPU_HAS_VECTOR_PATH
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"  // vectors passed between target and generic code
#endif

/// A float vector type of simd_target-inl.hpp, or `FloatLane` (simd_lane.hpp). Every
/// product that feeds an addition is written as `vfma` / `vfnma`: an implicit `a * b + c`
/// would be contracted on one path and not on another (see simd_lane.hpp).
template <class V>
concept float_vec = is_float_vec<V>;

/// e^r on |r| <= ln2/2: 1 + r + c2 r^2 + ... + c6 r^6 by Horner's rule (6 FMAs), relative
/// error of the polynomial 3.1e-9 (below half an ulp; rounding adds about 1 ulp).
/// **Source:** coefficients fitted by tools/fit_vecmath.py (relative minimax by
/// iteratively reweighted least squares against mpmath), with c0 = c1 = 1 held exact.
template <float_vec V>
TORCHTPU_VEC V exp_reduced_poly(V r) {
  V p = V::set1(1.381461276e-3f);
  p = vfma(p, r, V::set1(8.368710056e-3f));
  p = vfma(p, r, V::set1(4.166838899e-2f));
  p = vfma(p, r, V::set1(1.666652113e-1f));
  p = vfma(p, r, V::set1(4.999999404e-1f));
  p = vfma(p, r, V::set1(1.0f));
  return vfma(p, r, V::set1(1.0f));
}

/// e^x for x already clamped to [-104, 89]: x = n·ln2 + r (ln2 split in two parts, Cody &
/// Waite), e^r by `exp_reduced_poly`, then e^r·2^n with `vscalef` (which gives 0 below the
/// float range and keeps subnormal results). NaN stays NaN. n = round(x·log2 e) by adding
/// and subtracting 1.5·2^23 (exact for |n| < 2^22; one FMA and one subtraction, cheaper
/// than a rounding instruction).
template <float_vec V>
TORCHTPU_VEC V vexp_clamped(V x) {
  const V shifter = V::set1(12582912.0f);  // 1.5 * 2^23
  const V n = vfma(x, V::set1(1.44269504088896341f), shifter) - shifter;
  V r = vfnma(n, V::set1(0.693359375f), x);
  r = vfnma(n, V::set1(-2.12194440e-4f), r);
  return vscalef(exp_reduced_poly(r), n);
}

/// e^x, any float x. About 1 ulp (tests/fuse/test_vecmath.cpp checks against float64);
/// exp(+inf) = inf, exp(-inf) = 0, NaN stays NaN. Arguments beyond [-104, 89] are clamped
/// there first (e^x is already inf / 0 in float at both bounds).
template <float_vec V>
TORCHTPU_VEC V vexp(V x) {
  return vexp_clamped(vmin_keep_nan(V::set1(89.0f), vmax_keep_nan(V::set1(-104.0f), x)));
}

/// e^x for x <= 0 (or NaN): one clamp instead of two. Used by tanh-free sigmoid, softmax
/// (x - max) and erf.
template <float_vec V>
TORCHTPU_VEC V vexp_nonpositive(V x) { return vexp_clamped(vmax_keep_nan(V::set1(-104.0f), x)); }

/// Natural log. x = m·2^e with m in [√½, √2) (`vmant_exp`, denormals exact), log(1+f) by a
/// degree-8 polynomial. log(0) = -inf, log(x<0) = NaN, log(inf) = inf.
/// **Source:** coefficients of Cephes `logf.c`.
template <float_vec V>
TORCHTPU_VEC V vlog(V x) {
  V m, e;
  vmant_exp(x, m, e);
  const auto big = m > V::set1(1.41421356237f);
  m = select(big, m * V::set1(0.5f), m);
  e = select(big, e + V::set1(1.0f), e);
  const V f = m - V::set1(1.0f);
  const V z = f * f;
  V p = V::set1(7.0376836292e-2f);
  p = vfma(p, f, V::set1(-1.1514610310e-1f));
  p = vfma(p, f, V::set1(1.1676998740e-1f));
  p = vfma(p, f, V::set1(-1.2420140846e-1f));
  p = vfma(p, f, V::set1(1.4249322787e-1f));
  p = vfma(p, f, V::set1(-1.6668057665e-1f));
  p = vfma(p, f, V::set1(2.0000714765e-1f));
  p = vfma(p, f, V::set1(-2.4999993993e-1f));
  p = vfma(p, f, V::set1(3.3333331174e-1f));
  V y = (f * z) * p;
  y = vfma(e, V::set1(-2.12194440e-4f), y);
  y = vfnma(z, V::set1(0.5f), y);
  V r = f + y;
  r = vfma(e, V::set1(0.693359375f), r);
  const V zero = V::zero();
  const V inf = V::set1(__builtin_inff());
  r = select(x == inf, inf, r);
  r = select(x == zero, zero - inf, r);
  // x < 0 or NaN: NaN (the complement of x >= 0, which is false for NaN).
  return select(x >= zero, r, V::set1(__builtin_nanf("")));
}

/// Copies the sign of `s` onto |m|.
template <float_vec V>
TORCHTPU_VEC V vcopysign(V m, V s) {
  const V sign = V::set1(-0.0f);
  return vor(vandnot(sign, m), vand(sign, s));
}

/// tanh(x) = x·P(x²)/Q(x²) on |x| <= 9 (P of degree 6, Q of degree 3; the rational form
/// of Eigen's and XLA's float tanh), x clamped to [-9, 9] first (tanh(9) rounds to 1 in
/// float). Relative error of the rational function 6.6e-9; at most 3.1e-7 in float
/// arithmetic (every float checked against float64; worst near |x| = 7). tanh(±0) = ±0, tanh(±inf) = ±1, NaN stays NaN.
/// **Source:** coefficients fitted by tools/fit_vecmath.py (relative minimax on (0, 9]).
template <float_vec V>
TORCHTPU_VEC V vtanh(V x) {
  const V c = vmin_keep_nan(V::set1(9.0f), vmax_keep_nan(V::set1(-9.0f), x));
  const V z = c * c;
  V p = V::set1(-8.488785304e-14f);
  p = vfma(p, z, V::set1(5.277979442e-11f));
  p = vfma(p, z, V::set1(-2.022529522e-08f));
  p = vfma(p, z, V::set1(1.115432588e-05f));
  p = vfma(p, z, V::set1(3.103957977e-03f));
  p = vfma(p, z, V::set1(1.308401227e-01f));
  p = vfma(p, z, V::set1(1.0f));
  V q = V::set1(2.546147734e-04f);
  q = vfma(q, z, V::set1(2.449518628e-02f));
  q = vfma(q, z, V::set1(4.641733766e-01f));
  q = vfma(q, z, V::set1(1.0f));
  const V t = (c * p) / q;
  // |t| can exceed 1 by an ulp for |x| in [8.3, 9]: clamp to [-1, 1] (NaN stays NaN).
  return vmin_keep_nan(V::set1(1.0f), vmax_keep_nan(V::set1(-1.0f), t));
}

/// Logistic sigmoid 1/(1 + e^-x), via e = exp(-|x|) so the denominator stays in [1, 2] and
/// large negative x keeps its relative accuracy: 1/(1 + e) for x >= 0, e/(1 + e) below
/// (one correctly rounded division either way).
template <float_vec V>
TORCHTPU_VEC V vsigmoid(V x) {
  const V e = vexp_nonpositive(vor(x, V::set1(-0.0f)));
  const V num = select(x < V::zero(), e, V::set1(1.0f));
  return num / (e + V::set1(1.0f));
}

/// erf: x·P(x²) for |x| < 1 (Cephes `ndtrf.c` erff coefficients), else
/// 1 - (a1 t + … + a5 t^5) e^{-x²}, t = 1/(1 + 0.3275911|x|) (absolute error <= 1.5e-7).
/// **Source:** Abramowitz & Stegun, Handbook of Mathematical Functions, formula 7.1.26.
template <float_vec V>
TORCHTPU_VEC V verf(V x) {
  const V a = vabs(x);
  const V z = x * x;
  V p = V::set1(7.853861353153693e-5f);
  p = vfma(p, z, V::set1(-8.010193625184903e-4f));
  p = vfma(p, z, V::set1(5.188327685732524e-3f));
  p = vfma(p, z, V::set1(-2.685381193529856e-2f));
  p = vfma(p, z, V::set1(1.128358514861418e-1f));
  p = vfma(p, z, V::set1(-3.761262582423300e-1f));
  p = vfma(p, z, V::set1(1.128379165726710e+0f));
  const V small = x * p;
  const V t = V::set1(1.0f) / vfma(a, V::set1(0.3275911f), V::set1(1.0f));
  V q = V::set1(1.061405429f);
  q = vfma(q, t, V::set1(-1.453152027f));
  q = vfma(q, t, V::set1(1.421413741f));
  q = vfma(q, t, V::set1(-0.284496736f));
  q = vfma(q, t, V::set1(0.254829592f));
  q = q * t;
  const V ex = vexp_nonpositive(-(a * a));
  const V large = vcopysign(vfnma(q, ex, V::set1(1.0f)), x);
  return select(a < V::set1(1.0f), small, large);
}

template <float_vec V>
TORCHTPU_VEC V vrelu(V x) { return vmax_keep_nan(V::zero(), x); }
template <float_vec V>
TORCHTPU_VEC V vclamp(V x, float lo, float hi) {
  return vmin_keep_nan(V::set1(hi), vmax_keep_nan(V::set1(lo), x));
}
template <float_vec V>
TORCHTPU_VEC V vgelu(V x, bool tanh_approx) {
  if (tanh_approx) {
    const V inner = V::set1(0.7978845608028654f) * vfma(V::set1(0.044715f) * x * x, x, x);
    return V::set1(0.5f) * x * (V::set1(1.0f) + vtanh(inner));
  }
  return V::set1(0.5f) * x * (V::set1(1.0f) + verf(x * V::set1(0.7071067811865476f)));
}
template <float_vec V>
TORCHTPU_VEC V vsilu(V x) { return x * vsigmoid(x); }
template <float_vec V>
TORCHTPU_VEC V vhardsigmoid(V x) {
  return vclamp(x + V::set1(3.0f), 0.0f, 6.0f) / V::set1(6.0f);
}
template <float_vec V>
TORCHTPU_VEC V vhardswish(V x) { return x * vclamp(x + V::set1(3.0f), 0.0f, 6.0f) / V::set1(6.0f); }
template <float_vec V>
TORCHTPU_VEC V vrsqrt(V x) { return V::set1(1.0f) / vsqrt(x); }

#if TORCHTPU_HAS_VECTOR_PATH
#pragma GCC diagnostic pop
#endif

}  // namespace torchtpu::detail
