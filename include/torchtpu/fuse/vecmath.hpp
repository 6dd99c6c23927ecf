// torchtpu/fuse/vecmath.hpp — vectorized float math for the fused loops: exp, log, tanh,
// sigmoid, erf, gelu, silu and the piecewise-linear activations, on 16-lane AVX-512 vectors.
// Op structs in ops/ call these from their `simd` members (found by argument-dependent lookup).
#pragma once
#include "simd.hpp"  // VecF, TORCHTPU_SIMD

namespace torchtpu::detail {

#if TORCHTPU_HAS_AVX512_PATH

/// e^r on |r| <= ln2/2: 1 + r + c2 r^2 + ... + c6 r^6 by Horner's rule (6 FMAs), relative
/// error of the polynomial 3.1e-9 (below half an ulp; rounding adds about 1 ulp).
/// **Source:** coefficients fitted by tools/fit_vecmath.py (relative minimax by
/// iteratively reweighted least squares against mpmath), with c0 = c1 = 1 held exact.
TORCHTPU_SIMD __m512 exp_reduced_poly(__m512 r) {
  __m512 p = _mm512_set1_ps(1.381461276e-3f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.368710056e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.166838899e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.666652113e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.999999404e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
}

/// e^x for x already clamped to [-104, 89]: x = n·ln2 + r (ln2 split in two parts, Cody &
/// Waite), e^r by `exp_reduced_poly`, then e^r·2^n with `vscalefps` (which gives 0 below the
/// float range and keeps subnormal results). NaN stays NaN. n = round(x·log2 e) by adding
/// and subtracting 1.5·2^23 (exact for |n| < 2^22; one FMA and one subtraction, cheaper
/// than `vrndscaleps`).
TORCHTPU_SIMD VecF vexp_clamped(VecF x) {
  const __m512 shifter = _mm512_set1_ps(12582912.0f);  // 1.5 * 2^23
  const __m512 n = _mm512_sub_ps(_mm512_fmadd_ps(x.v, _mm512_set1_ps(1.44269504088896341f), shifter), shifter);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x.v);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  return {_mm512_maskz_scalef_ps(0xffff, exp_reduced_poly(r), n)};
}

/// e^x, any float x. About 1 ulp (tests/fuse/test_vecmath.cpp checks against float64);
/// exp(+inf) = inf, exp(-inf) = 0, NaN stays NaN. Arguments beyond [-104, 89] are clamped
/// there first (e^x is already inf / 0 in float at both bounds).
TORCHTPU_SIMD VecF vexp(VecF x) {
  return vexp_clamped(vmin_keep_nan(vset1(89.0f), vmax_keep_nan(vset1(-104.0f), x)));
}

/// e^x for x <= 0 (or NaN): one clamp instead of two. Used by tanh-free sigmoid, softmax
/// (x - max) and erf.
TORCHTPU_SIMD VecF vexp_nonpositive(VecF x) { return vexp_clamped(vmax_keep_nan(vset1(-104.0f), x)); }

/// Natural log. x = m·2^e with m in [√½, √2) (`vgetmantps`/`vgetexpps`, denormals exact),
/// log(1+f) by a degree-8 polynomial. log(0) = -inf, log(x<0) = NaN, log(inf) = inf.
/// **Source:** coefficients of Cephes `logf.c`.
TORCHTPU_SIMD VecF vlog(VecF x) {
  __m512 m = _mm512_maskz_getmant_ps(0xffff, x.v, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero);
  __m512 e = _mm512_maskz_getexp_ps(0xffff, x.v);
  const MaskF big = _mm512_cmp_ps_mask(m, _mm512_set1_ps(1.41421356237f), _CMP_GT_OQ);
  m = _mm512_mask_mul_ps(m, big, m, _mm512_set1_ps(0.5f));
  e = _mm512_mask_add_ps(e, big, e, _mm512_set1_ps(1.0f));
  const __m512 f = _mm512_sub_ps(m, _mm512_set1_ps(1.0f));
  const __m512 z = _mm512_mul_ps(f, f);
  __m512 p = _mm512_set1_ps(7.0376836292e-2f);
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(-1.1514610310e-1f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.1676998740e-1f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(-1.2420140846e-1f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.4249322787e-1f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(-1.6668057665e-1f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(2.0000714765e-1f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(-2.4999993993e-1f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(3.3333331174e-1f));
  __m512 y = _mm512_mul_ps(_mm512_mul_ps(f, z), p);
  y = _mm512_fmadd_ps(e, _mm512_set1_ps(-2.12194440e-4f), y);
  y = _mm512_fnmadd_ps(z, _mm512_set1_ps(0.5f), y);
  __m512 r = _mm512_add_ps(f, y);
  r = _mm512_fmadd_ps(e, _mm512_set1_ps(0.693359375f), r);
  const __m512 zero = _mm512_setzero_ps();
  const __m512 inf = _mm512_set1_ps(__builtin_inff());
  r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(x.v, inf, _CMP_EQ_OQ), inf);
  r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(x.v, zero, _CMP_EQ_OQ), _mm512_sub_ps(zero, inf));
  r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(x.v, zero, _CMP_NGE_UQ), _mm512_set1_ps(__builtin_nanf("")));
  return {r};
}

/// Copies the sign of `s` onto |m|.
TORCHTPU_SIMD VecF vcopysign(VecF m, VecF s) {
  const __m512 sign = _mm512_set1_ps(-0.0f);
  return {_mm512_or_ps(_mm512_andnot_ps(sign, m.v), _mm512_and_ps(sign, s.v))};
}

/// tanh(x) = x·P(x²)/Q(x²) on |x| <= 9 (P of degree 6, Q of degree 3; the rational form
/// of Eigen's and XLA's float tanh), x clamped to [-9, 9] first (tanh(9) rounds to 1 in
/// float). Relative error of the rational function 6.6e-9; at most 3.1e-7 in float
/// arithmetic (every float checked against float64; worst near |x| = 7). tanh(±0) = ±0, tanh(±inf) = ±1, NaN stays NaN.
/// **Source:** coefficients fitted by tools/fit_vecmath.py (relative minimax on (0, 9]).
TORCHTPU_SIMD VecF vtanh(VecF x) {
  const __m512 c = vmin_keep_nan(vset1(9.0f), vmax_keep_nan(vset1(-9.0f), x)).v;
  const __m512 z = _mm512_mul_ps(c, c);
  __m512 p = _mm512_set1_ps(-8.488785304e-14f);
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(5.277979442e-11f));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(-2.022529522e-08f));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(1.115432588e-05f));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(3.103957977e-03f));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(1.308401227e-01f));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(1.0f));
  __m512 q = _mm512_set1_ps(2.546147734e-04f);
  q = _mm512_fmadd_ps(q, z, _mm512_set1_ps(2.449518628e-02f));
  q = _mm512_fmadd_ps(q, z, _mm512_set1_ps(4.641733766e-01f));
  q = _mm512_fmadd_ps(q, z, _mm512_set1_ps(1.0f));
  const __m512 t = _mm512_div_ps(_mm512_mul_ps(c, p), q);
  // |t| can exceed 1 by an ulp for |x| in [8.3, 9]: clamp to [-1, 1] (NaN stays NaN).
  return vmin_keep_nan(vset1(1.0f), vmax_keep_nan(vset1(-1.0f), VecF{t}));
}

/// Logistic sigmoid 1/(1 + e^-x), via e = exp(-|x|) so the denominator stays in [1, 2] and
/// large negative x keeps its relative accuracy: 1/(1 + e) for x >= 0, e/(1 + e) below
/// (one correctly rounded division either way).
TORCHTPU_SIMD VecF vsigmoid(VecF x) {
  const VecF e = vexp_nonpositive(VecF{_mm512_or_ps(x.v, _mm512_set1_ps(-0.0f))});
  const __m512 num = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x.v, _mm512_setzero_ps(), _CMP_LT_OQ),
                                          _mm512_set1_ps(1.0f), e.v);
  return {_mm512_div_ps(num, _mm512_add_ps(e.v, _mm512_set1_ps(1.0f)))};
}

/// erf: x·P(x²) for |x| < 1 (Cephes `ndtrf.c` erff coefficients), else
/// 1 - (a1 t + … + a5 t^5) e^{-x²}, t = 1/(1 + 0.3275911|x|) (absolute error <= 1.5e-7).
/// **Source:** Abramowitz & Stegun, Handbook of Mathematical Functions, formula 7.1.26.
TORCHTPU_SIMD VecF verf(VecF x) {
  const VecF a = vabs(x);
  const __m512 z = _mm512_mul_ps(x.v, x.v);
  __m512 p = _mm512_set1_ps(7.853861353153693e-5f);
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(-8.010193625184903e-4f));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(5.188327685732524e-3f));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(-2.685381193529856e-2f));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(1.128358514861418e-1f));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(-3.761262582423300e-1f));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(1.128379165726710e+0f));
  const VecF small{_mm512_mul_ps(x.v, p)};
  const VecF t = vset1(1.0f) / vfma(a, vset1(0.3275911f), vset1(1.0f));
  __m512 q = _mm512_set1_ps(1.061405429f);
  q = _mm512_fmadd_ps(q, t.v, _mm512_set1_ps(-1.453152027f));
  q = _mm512_fmadd_ps(q, t.v, _mm512_set1_ps(1.421413741f));
  q = _mm512_fmadd_ps(q, t.v, _mm512_set1_ps(-0.284496736f));
  q = _mm512_fmadd_ps(q, t.v, _mm512_set1_ps(0.254829592f));
  q = _mm512_mul_ps(q, t.v);
  const VecF ex = vexp_nonpositive(-(a * a));
  const VecF large = vcopysign(vset1(1.0f) - VecF{q} * ex, x);
  return select(a < vset1(1.0f), small, large);
}

TORCHTPU_SIMD VecF vrelu(VecF x) { return vmax_keep_nan(vzero(), x); }
TORCHTPU_SIMD VecF vclamp(VecF x, float lo, float hi) {
  return vmin_keep_nan(vset1(hi), vmax_keep_nan(vset1(lo), x));
}
TORCHTPU_SIMD VecF vgelu(VecF x, bool tanh_approx) {
  if (tanh_approx) {
    const VecF inner = vset1(0.7978845608028654f) * (x + vset1(0.044715f) * x * x * x);
    return vset1(0.5f) * x * (vset1(1.0f) + vtanh(inner));
  }
  return vset1(0.5f) * x * (vset1(1.0f) + verf(x * vset1(0.7071067811865476f)));
}
TORCHTPU_SIMD VecF vsilu(VecF x) { return x * vsigmoid(x); }
TORCHTPU_SIMD VecF vhardsigmoid(VecF x) {
  return vclamp(x + vset1(3.0f), 0.0f, 6.0f) / vset1(6.0f);
}
TORCHTPU_SIMD VecF vhardswish(VecF x) { return x * vclamp(x + vset1(3.0f), 0.0f, 6.0f) / vset1(6.0f); }
TORCHTPU_SIMD VecF vrsqrt(VecF x) { return vset1(1.0f) / vsqrt(x); }

#endif

}  // namespace torchtpu::detail
