// bench/simd_hwy.cpp — the Highway 1.0.3 candidates of bench/simd_choice.cpp: W1 and the GEMM
// micro-kernel as static per-target code. foreach_target.h re-includes this file once per target
// (AVX3, AVX2, and the baseline it cannot drop); HWY_BEFORE_NAMESPACE() puts each copy under
// `#pragma GCC target(...)`, so the file builds without any -m flag and the driver calls
// hwy::N_AVX2 / N_AVX3 code only after a CPU check.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd_hwy.cpp"  // found through the bench/ include directory
#ifndef HWY_DISABLED_TARGETS
#define HWY_DISABLED_TARGETS (HWY_SSSE3 | HWY_SSE4 | HWY_AVX3_DL)  // only AVX3 | AVX2 (+ baseline)
#endif
#include <hwy/foreach_target.h>  // the per-target re-inclusion  // IWYU pragma: keep

#include <hwy/highway.h>                // Highway ops
#include <hwy/contrib/math/math-inl.h>  // hn::Tanh, hn::Exp

#include <cmath>  // std::tanh, std::exp (tails)

#include "simd_choice.hpp"  // the declarations

HWY_BEFORE_NAMESPACE();
namespace simd_choice {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// e^x for x <= 0, torchtpu's reduction and degree-6 polynomial (fuse/vecmath.hpp); 2^n is
/// built in the exponent field, so x is clamped at -87.3 (2^n normal) where torchtpu's
/// vscalefps keeps subnormal results down to -104.
template <class D, class V>
HWY_INLINE V exp_nonpositive_ours(D d, V x) {
  const hn::RebindToSigned<D> di;
  x = hn::Max(x, hn::Set(d, -87.3f));
  const V shifter = hn::Set(d, 12582912.0f);  // 1.5 * 2^23: adding it rounds to an integer
  const V n = hn::Sub(hn::MulAdd(x, hn::Set(d, 1.44269504088896341f), shifter), shifter);
  V r = hn::NegMulAdd(n, hn::Set(d, 0.693359375f), x);
  r = hn::NegMulAdd(n, hn::Set(d, -2.12194440e-4f), r);
  V p = hn::Set(d, 1.381461276e-3f);
  p = hn::MulAdd(p, r, hn::Set(d, 8.368710056e-3f));
  p = hn::MulAdd(p, r, hn::Set(d, 4.166838899e-2f));
  p = hn::MulAdd(p, r, hn::Set(d, 1.666652113e-1f));
  p = hn::MulAdd(p, r, hn::Set(d, 4.999999404e-1f));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0f));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0f));
  const auto e = hn::ShiftLeft<23>(hn::Add(hn::ConvertTo(di, n), hn::Set(di, 127)));
  return hn::Mul(p, hn::BitCast(d, e));
}

/// tanh as torchtpu's x·P(x²)/Q(x²) on [-9, 9] with one division (fuse/vecmath.hpp).
template <class D, class V>
HWY_INLINE V tanh_ours(D d, V x) {
  const V c = hn::Min(hn::Set(d, 9.0f), hn::Max(hn::Set(d, -9.0f), x));
  const V z = hn::Mul(c, c);
  V p = hn::Set(d, -8.488785304e-14f);
  p = hn::MulAdd(p, z, hn::Set(d, 5.277979442e-11f));
  p = hn::MulAdd(p, z, hn::Set(d, -2.022529522e-08f));
  p = hn::MulAdd(p, z, hn::Set(d, 1.115432588e-05f));
  p = hn::MulAdd(p, z, hn::Set(d, 3.103957977e-03f));
  p = hn::MulAdd(p, z, hn::Set(d, 1.308401227e-01f));
  p = hn::MulAdd(p, z, hn::Set(d, 1.0f));
  V q = hn::Set(d, 2.546147734e-04f);
  q = hn::MulAdd(q, z, hn::Set(d, 2.449518628e-02f));
  q = hn::MulAdd(q, z, hn::Set(d, 4.641733766e-01f));
  q = hn::MulAdd(q, z, hn::Set(d, 1.0f));
  const V t = hn::Div(hn::Mul(c, p), q);
  return hn::Min(hn::Set(d, 1.0f), hn::Max(hn::Set(d, -1.0f), t));
}

/// sigmoid as torchtpu's: e = exp(-|x|), (x < 0 ? e : 1) / (1 + e).
template <class D, class V>
HWY_INLINE V sigmoid_ours(D d, V x) {
  const V e = exp_nonpositive_ours(d, hn::Neg(hn::Abs(x)));
  const V num = hn::IfThenElse(hn::Lt(x, hn::Zero(d)), e, hn::Set(d, 1.0f));
  return hn::Div(num, hn::Add(e, hn::Set(d, 1.0f)));
}

/// sigmoid from the contrib library's exp: 1 / (1 + e^-x).
template <class D, class V>
HWY_INLINE V sigmoid_contrib(D d, V x) {
  return hn::Div(hn::Set(d, 1.0f), hn::Add(hn::Set(d, 1.0f), hn::Exp(d, hn::Neg(x))));
}

template <bool Ours>
HWY_INLINE void w1(const float* x, const float* w, const float* b, float* y, int64_t n) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = int64_t(hn::Lanes(d));
  const auto half = hn::Set(d, 0.5f);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto xv = hn::LoadU(d, x + i);
    const auto t = hn::MulAdd(xv, hn::LoadU(d, w + i), hn::LoadU(d, b + i));
    const auto th = Ours ? tanh_ours(d, t) : hn::Tanh(d, t);
    const auto sg = Ours ? sigmoid_ours(d, xv) : sigmoid_contrib(d, xv);
    hn::StoreU(hn::MulAdd(th, sg, hn::Mul(half, xv)), d, y + i);
  }
  for (; i < n; ++i) y[i] = std::tanh(x[i] * w[i] + b[i]) / (1.0f + std::exp(-x[i])) + 0.5f * x[i];
}

HWY_NOINLINE void w1_contrib(const float* x, const float* w, const float* b, float* y, int64_t n) {
  w1<false>(x, w, b, y, n);
}
HWY_NOINLINE void w1_ours(const float* x, const float* w, const float* b, float* y, int64_t n) {
  w1<true>(x, w, b, y, n);
}

/// MR x (2 vectors) tile from packed panels, k unrolled by 4, one prefetch of B per k step 32
/// steps ahead (as torchtpu's sgemm_micro_12x32).
template <int MR>
HWY_INLINE void micro(int64_t kc, const float* a, const float* b, float* c, int64_t ldc) {
  const hn::ScalableTag<float> d;
  using V = decltype(hn::Zero(d));
  const int64_t lanes = int64_t(hn::Lanes(d)), nr = 2 * lanes;
  V acc0[MR], acc1[MR];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) acc0[i] = acc1[i] = hn::Zero(d);
#pragma GCC unroll 4
  for (int64_t p = 0; p < kc; ++p) {
    const V b0 = hn::LoadU(d, b), b1 = hn::LoadU(d, b + lanes);
    __builtin_prefetch(b + 32 * nr, 0, 3);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const V ai = hn::Set(d, a[i]);
      acc0[i] = hn::MulAdd(ai, b0, acc0[i]);
      acc1[i] = hn::MulAdd(ai, b1, acc1[i]);
    }
    a += MR;
    b += nr;
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    hn::StoreU(acc0[i], d, c + i * ldc);
    hn::StoreU(acc1[i], d, c + i * ldc + lanes);
  }
}

// 6 x 16 at 256 bits (12 accumulators + 2 B vectors + 1 broadcast of 16 ymm), 12 x 32 at 512
// bits (24 + 2 + 1 of 32 zmm); the baseline copy is compiled but never called.
HWY_NOINLINE void micro_main(int64_t kc, const float* a, const float* b, float* c, int64_t ldc) {
#if HWY_TARGET == HWY_AVX2
  micro<6>(kc, a, b, c, ldc);
#else
  micro<12>(kc, a, b, c, ldc);
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace simd_choice
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace simd_choice {

HWY_EXPORT(w1_ours);

void hwy_avx2_w1_contrib(const float* x, const float* w, const float* b, float* y, int64_t n) {
  N_AVX2::w1_contrib(x, w, b, y, n);
}
void hwy_avx2_w1_ours(const float* x, const float* w, const float* b, float* y, int64_t n) {
  N_AVX2::w1_ours(x, w, b, y, n);
}
void hwy_avx3_w1_contrib(const float* x, const float* w, const float* b, float* y, int64_t n) {
  N_AVX3::w1_contrib(x, w, b, y, n);
}
void hwy_avx3_w1_ours(const float* x, const float* w, const float* b, float* y, int64_t n) {
  N_AVX3::w1_ours(x, w, b, y, n);
}
void hwy_avx2_micro_6x16(int64_t kc, const float* a, const float* b, float* c, int64_t ldc) {
  N_AVX2::micro_main(kc, a, b, c, ldc);
}
void hwy_avx3_micro_12x32(int64_t kc, const float* a, const float* b, float* c, int64_t ldc) {
  N_AVX3::micro_main(kc, a, b, c, ldc);
}
void hwy_dyn_w1_ours(const float* x, const float* w, const float* b, float* y, int64_t n) {
  HWY_DYNAMIC_DISPATCH(w1_ours)(x, w, b, y, n);
}
const char* hwy_dispatch_target() {
  const int64_t best = hwy::SupportedTargets() & HWY_TARGETS;
  return hwy::TargetName(best & -best);
}

}  // namespace simd_choice
#endif  // HWY_ONCE
