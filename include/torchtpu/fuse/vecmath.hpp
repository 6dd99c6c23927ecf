// torchtpu/fuse/vecmath.hpp — vectorized float math for the fused loops: exp, log, tanh,
// sigmoid, erf, gelu, silu and the piecewise-linear activations, on 16-lane AVX-512 vectors.
// Op structs in ops/ call these from their `simd` members (found by argument-dependent lookup).
#pragma once
#include "simd.hpp"  // VecF, TORCHTPU_SIMD

namespace torchtpu::detail {

#if TORCHTPU_HAS_AVX512_PATH

/// e^x. Range reduction x = n·ln2 + r (ln2 split in two parts, Cody & Waite), a degree-6
/// polynomial for e^r on |r| <= ln2/2, then r·2^n with `vscalefps` (which saturates to inf / 0).
/// Max error about 2 ulp; NaN stays NaN; exp(+inf) = inf, exp(-inf) = 0.
/// **Source:** polynomial coefficients of Cephes `expf.c` (S. L. Moshier); the method is
/// the textbook Cody–Waite reduction.
TORCHTPU_SIMD VecF vexp(VecF x) {
  x = vmin_keep_nan(vset1(89.0f), vmax_keep_nan(vset1(-104.0f), x));
  const __m512 n = _mm512_maskz_roundscale_ps(0xffff, _mm512_mul_ps(x.v, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x.v);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  const __m512 y = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return {_mm512_maskz_scalef_ps(0xffff, y, n)};
}

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

/// tanh: odd polynomial for |x| < 0.625 (Cephes `tanhf.c` coefficients), else
/// sign(x)·(1 - e)/(1 + e) with e = exp(-2|x|). About 2 ulp.
TORCHTPU_SIMD VecF vtanh(VecF x) {
  const VecF a = vabs(x);
  const __m512 z = _mm512_mul_ps(x.v, x.v);
  __m512 p = _mm512_set1_ps(-5.70498872745e-3f);
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(2.06390887954e-2f));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(-5.37397155531e-2f));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(1.33314422036e-1f));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(-3.33332819422e-1f));
  const VecF small{_mm512_fmadd_ps(_mm512_mul_ps(p, z), x.v, x.v)};
  const VecF e = vexp(a * vset1(-2.0f));
  const VecF large = vcopysign((vset1(1.0f) - e) * vrecip_1_2(vset1(1.0f) + e), x);
  return select(a < vset1(0.625f), small, large);
}

/// Logistic sigmoid 1/(1 + e^-x), via e = exp(-|x|) so the denominator stays in [1, 2] and
/// large negative x keeps its relative accuracy.
TORCHTPU_SIMD VecF vsigmoid(VecF x) {
  const VecF e = vexp(-vabs(x));
  const VecF s = vrecip_1_2(vset1(1.0f) + e);
  return select(x < vzero(), e * s, s);
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
  const VecF ex = vexp(-(a * a));
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
