// bench/simd_xsimd.cpp — the xsimd 8.1 candidates of bench/simd_choice.cpp. xsimd picks its
// architecture from the compiler's -m flags (xsimd::default_arch); a batch for an arch that is
// not enabled at compile time does not compile, so this file is built twice: -mavx2 -mfma
// (namespace xs_avx2) and -mavx512f -mavx512dq -mavx512bw -mavx512vl -mfma (xs_avx512).
#include <xsimd/xsimd.hpp>  // xsimd::batch, tanh, exp

#include <cmath>  // std::tanh, std::exp (tails)

#include "simd_choice.hpp"  // the declarations

#ifndef TORCHTPU_BENCH_XSIMD_NS
#error "build with -DTORCHTPU_BENCH_XSIMD_NS=xs_avx2 or xs_avx512"
#endif

namespace simd_choice::TORCHTPU_BENCH_XSIMD_NS {
namespace {
using B = xsimd::batch<float>;  // xsimd::default_arch
using BI = xsimd::batch<int32_t>;

/// The polynomials of include/torchtpu/fuse/vecmath.hpp (2^n from the exponent field, as in
/// simd_hwy.cpp).
inline B exp_nonpositive_ours(B x) {
  x = xsimd::max(x, B(-87.3f));
  const B shifter(12582912.0f);
  const B n = xsimd::fma(x, B(1.44269504088896341f), shifter) - shifter;
  B r = xsimd::fnma(n, B(0.693359375f), x);
  r = xsimd::fnma(n, B(-2.12194440e-4f), r);
  B p(1.381461276e-3f);
  p = xsimd::fma(p, r, B(8.368710056e-3f));
  p = xsimd::fma(p, r, B(4.166838899e-2f));
  p = xsimd::fma(p, r, B(1.666652113e-1f));
  p = xsimd::fma(p, r, B(4.999999404e-1f));
  p = xsimd::fma(p, r, B(1.0f));
  p = xsimd::fma(p, r, B(1.0f));
  const BI e = (xsimd::to_int(n) + BI(127)) << 23;
  return p * xsimd::bitwise_cast<B>(e);
}
inline B tanh_ours(B x) {
  const B c = xsimd::min(B(9.0f), xsimd::max(B(-9.0f), x));
  const B z = c * c;
  B p(-8.488785304e-14f);
  p = xsimd::fma(p, z, B(5.277979442e-11f));
  p = xsimd::fma(p, z, B(-2.022529522e-08f));
  p = xsimd::fma(p, z, B(1.115432588e-05f));
  p = xsimd::fma(p, z, B(3.103957977e-03f));
  p = xsimd::fma(p, z, B(1.308401227e-01f));
  p = xsimd::fma(p, z, B(1.0f));
  B q(2.546147734e-04f);
  q = xsimd::fma(q, z, B(2.449518628e-02f));
  q = xsimd::fma(q, z, B(4.641733766e-01f));
  q = xsimd::fma(q, z, B(1.0f));
  return xsimd::min(B(1.0f), xsimd::max(B(-1.0f), (c * p) / q));
}
inline B sigmoid_ours(B x) {
  const B e = exp_nonpositive_ours(-xsimd::abs(x));
  return xsimd::select(x < B(0.0f), e, B(1.0f)) / (e + B(1.0f));
}

template <bool Ours>
void w1(const float* x, const float* w, const float* b, float* y, int64_t n) {
  constexpr int64_t lanes = int64_t(B::size);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const B xv = B::load_unaligned(x + i);
    const B t = xsimd::fma(xv, B::load_unaligned(w + i), B::load_unaligned(b + i));
    const B th = Ours ? tanh_ours(t) : xsimd::tanh(t);
    const B sg = Ours ? sigmoid_ours(xv) : B(1.0f) / (B(1.0f) + xsimd::exp(-xv));
    xsimd::fma(th, sg, B(0.5f) * xv).store_unaligned(y + i);
  }
  for (; i < n; ++i) y[i] = std::tanh(x[i] * w[i] + b[i]) / (1.0f + std::exp(-x[i])) + 0.5f * x[i];
}

template <int MR>
void micro_impl(int64_t kc, const float* a, const float* b, float* c, int64_t ldc) {
  constexpr int64_t lanes = int64_t(B::size), nr = 2 * lanes;
  B acc0[MR], acc1[MR];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) acc0[i] = acc1[i] = B(0.0f);
#pragma GCC unroll 4
  for (int64_t p = 0; p < kc; ++p) {
    const B b0 = B::load_unaligned(b), b1 = B::load_unaligned(b + lanes);
    __builtin_prefetch(b + 32 * nr, 0, 3);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const B ai(a[i]);
      acc0[i] = xsimd::fma(ai, b0, acc0[i]);
      acc1[i] = xsimd::fma(ai, b1, acc1[i]);
    }
    a += MR;
    b += nr;
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    acc0[i].store_unaligned(c + i * ldc);
    acc1[i].store_unaligned(c + i * ldc + lanes);
  }
}
}  // namespace

const char* arch_name() { return xsimd::default_arch::name(); }
void w1_lib(const float* x, const float* w, const float* b, float* y, int64_t n) { w1<false>(x, w, b, y, n); }
void w1_ours(const float* x, const float* w, const float* b, float* y, int64_t n) { w1<true>(x, w, b, y, n); }
void micro(int64_t kc, const float* a, const float* b, float* c, int64_t ldc) {
  micro_impl<B::size == 8 ? 6 : 12>(kc, a, b, c, ldc);
}

}  // namespace simd_choice::TORCHTPU_BENCH_XSIMD_NS
