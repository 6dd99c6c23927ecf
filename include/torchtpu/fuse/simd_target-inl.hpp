// torchtpu/fuse/simd_target-inl.hpp — the vector types and operations of ONE Highway target
// (HWY_TARGET): included by fuse/simd.hpp through hwy/foreach_target.h, once per target, so
// everything here is compiled for that target's instruction set (HWY_BEFORE_NAMESPACE puts a
// target pragma around it). Only this file and simd_avx512.hpp name instructions; the vector
// math, op structs and loop bodies are written over these operations.
//
// Operations are plain `inline` functions, not always-inline: they are called from templates
// compiled for no particular target (op structs' `simd` members, vecmath.hpp), which GCC may
// not always-inline a target function into. `TargetCall<T>::run` is `flatten`, so inside a
// kernel everything is inlined anyway.
//
// (No include guard of the usual kind: Highway's per-target toggle, as its docs prescribe.)
#if defined(TORCHTPU_FUSE_SIMD_TARGET_INL_) == defined(HWY_TARGET_TOGGLE)
#ifdef TORCHTPU_FUSE_SIMD_TARGET_INL_
#undef TORCHTPU_FUSE_SIMD_TARGET_INL_
#else
#define TORCHTPU_FUSE_SIMD_TARGET_INL_
#endif

#include <hwy/highway.h>  // this target's ops (hwy::HWY_NAMESPACE)

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_NEON
HWY_BEFORE_NAMESPACE();
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"  // vectors passed between target and generic code
namespace torchtpu::detail {
#define TORCHTPU_FV FloatVec<HWY_TARGET>
#define TORCHTPU_FM FloatMask<HWY_TARGET>

template <>
struct FloatMask<HWY_TARGET> {
  using D = hwy::HWY_NAMESPACE::ScalableTag<float>;
  hwy::HWY_NAMESPACE::Mask<D> m;
};

/// HWY_TARGET's float vector: `lanes` floats in one register.
template <>
struct FloatVec<HWY_TARGET> {
  using D = hwy::HWY_NAMESPACE::ScalableTag<float>;
  using H = hwy::HWY_NAMESPACE::Vec<D>;
  using Raw = decltype(H().raw);
  using Mask = FloatMask<HWY_TARGET>;
  static constexpr int lanes = int(HWY_LANES(float));
  Raw v;

  H h() const { return H{v}; }
  static FloatVec of(H x) { return {x.raw}; }
  static FloatVec set1(float x) { return of(hwy::HWY_NAMESPACE::Set(D(), x)); }
  static FloatVec zero() { return of(hwy::HWY_NAMESPACE::Zero(D())); }
  /// 0, 1, 2, ... in the lanes.
  static FloatVec iota() { return of(hwy::HWY_NAMESPACE::Iota(D(), 0.0f)); }
  /// `lanes` floats from `p` (any alignment).
  static FloatVec load(const float* p) { return of(hwy::HWY_NAMESPACE::LoadU(D(), p)); }
  /// `n` floats from `p` (0 <= n; at most `lanes` are read); lanes at and past `n` are 0, and
  /// no memory past p + n is touched.
  static FloatVec load_n(const float* p, int64_t n) {
    if (n >= lanes) return load(p);
#if HWY_TARGET == HWY_AVX3
    return {_mm512_maskz_loadu_ps(__mmask16((1u << n) - 1u), p)};
#elif HWY_TARGET == HWY_AVX2
    // vmaskmovps: masked-off lanes read as 0 and never fault (Intel SDM vol. 2B, VMASKMOV)
    return {_mm256_maskload_ps(p, avx2_lane_mask(n))};
#else
    alignas(64) float t[lanes] = {};
    if (n > 0) std::memcpy(t, p, size_t(n) * sizeof(float));
    return load(t);
#endif
  }
  /// `n` bf16 values (raw bits) from `p` as floats (exact), lanes past `n` 0, as `load_n`.
  static FloatVec load_bf16(const uint16_t* p, int64_t n) {
    namespace hn = hwy::HWY_NAMESPACE;
    const hn::Rebind<uint32_t, D> d32;
    return of(hn::BitCast(D(), hn::ShiftLeft<16>(hn::PromoteTo(d32, load_u16(p, n)))));
  }
  /// `n` 16-bit values from `p` in the lanes of a u16 vector (one per float lane), lanes past
  /// `n` 0, no memory past p + n touched: the raw load of `load_bf16` and `load_f16`.
  static hwy::HWY_NAMESPACE::Vec<hwy::HWY_NAMESPACE::Rebind<uint16_t, D>> load_u16(const uint16_t* p, int64_t n) {
    namespace hn = hwy::HWY_NAMESPACE;
    const hn::Rebind<uint16_t, D> d16;
    if (n >= lanes) return hn::LoadU(d16, p);
#if HWY_TARGET == HWY_AVX3
    return hn::Vec<decltype(d16)>{_mm256_maskz_loadu_epi16(__mmask16((1u << n) - 1u), p)};
#else
    alignas(64) uint16_t t[lanes] = {};
    if (n > 0) std::memcpy(t, p, size_t(n) * sizeof(uint16_t));
    return hn::LoadU(d16, t);
#endif
  }
#if HWY_TARGET == HWY_AVX2
  /// All-ones in lanes [0, n), zero elsewhere (0 <= n <= 8): vmaskmovps's lane mask.
  static __m256i avx2_lane_mask(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
#endif
  /// True when `fma_lane` is one instruction (NEON's `fmla` by element): the GEMM
  /// micro-kernel then loads A a vector at a time instead of broadcasting every value.
  static constexpr bool has_fma_lane = HWY_TARGET == HWY_NEON;
#if HWY_TARGET == HWY_NEON
  /// c + a · b[L] with one rounding (`fmla v.4s, v.4s, v.s[L]`).
  template <int L>
  static FloatVec fma_lane(FloatVec a, FloatVec b, FloatVec c) {
    return {vfmaq_laneq_f32(c.v, a.v, b.v, L)};
  }
#endif
  /// `n` IEEE binary16 values (raw bits) from `p` as floats (exact: every half is a float),
  /// lanes past `n` 0, as `load_n` (F16C `vcvtph2ps` on x86, `fcvtl` on NEON).
  static FloatVec load_f16(const uint16_t* p, int64_t n) {
    namespace hn = hwy::HWY_NAMESPACE;
    const hn::Rebind<hwy::float16_t, D> df16;
    return of(hn::PromoteTo(D(), hn::BitCast(df16, load_u16(p, n))));
  }
  /// The mask of lanes [0, n).
  static Mask first_n(int64_t n) {
    return {hwy::HWY_NAMESPACE::FirstN(D(), size_t(n < 0 ? 0 : n > lanes ? lanes : n))};
  }
};


/// Stores lanes [0, n) of `x` at `p` (n >= lanes: all); memory past p + n is not touched.
inline void vstore(float* p, TORCHTPU_FV x, int64_t n) {
  namespace hn = hwy::HWY_NAMESPACE;
  if (n >= TORCHTPU_FV::lanes) return hn::StoreU(x.h(), TORCHTPU_FV::D(), p);
#if HWY_TARGET == HWY_AVX3
  _mm512_mask_storeu_ps(p, __mmask16((1u << n) - 1u), x.v);
#elif HWY_TARGET == HWY_AVX2
  _mm256_maskstore_ps(p, TORCHTPU_FV::avx2_lane_mask(n), x.v);  // masked-off lanes untouched
#else
  alignas(64) float t[TORCHTPU_FV::lanes];
  hn::StoreU(x.h(), TORCHTPU_FV::D(), t);
  if (n > 0) std::memcpy(p, t, size_t(n) * sizeof(float));
#endif
}
/// All lanes to `p`, aligned to the vector size, with a non-temporal store (`vstream_fence`
/// orders such stores before later ones).
inline void vstream(float* p, TORCHTPU_FV x) { hwy::HWY_NAMESPACE::Stream(x.h(), TORCHTPU_FV::D(), p); }
inline void vstream_fence(TORCHTPU_FV) { hwy::FlushStream(); }

/// float → bf16 bits, round to nearest even, NaN kept quiet (as bfloat16::round_from_float).
inline hwy::HWY_NAMESPACE::Vec<hwy::HWY_NAMESPACE::Rebind<uint16_t, TORCHTPU_FV::D>> to_bf16_bits(TORCHTPU_FV x) {
  namespace hn = hwy::HWY_NAMESPACE;
  const hn::Rebind<uint32_t, TORCHTPU_FV::D> du;
  const hn::Rebind<int32_t, TORCHTPU_FV::D> di;
  const hn::Rebind<uint16_t, TORCHTPU_FV::D> d16;
  const auto u = hn::BitCast(du, x.h());
  const auto hi = hn::ShiftRight<16>(u);
  const auto rounded = hn::ShiftRight<16>(hn::Add(hn::Add(u, hn::Set(du, 0x7fffu)), hn::And(hi, hn::Set(du, 1u))));
  const auto nan = hn::RebindMask(du, hn::IsNaN(x.h()));
  const auto r = hn::IfThenElse(nan, hn::Or(hi, hn::Set(du, 0x40u)), rounded);
  return hn::DemoteTo(d16, hn::BitCast(di, r));
}
/// Stores lanes [0, n) of the u16 vector `h` at `p` (n >= lanes: all); memory past p + n is
/// not touched: the raw store of `vstore_bf16` and `vstore_f16`.
inline void vstore_u16(uint16_t* p, hwy::HWY_NAMESPACE::Vec<hwy::HWY_NAMESPACE::Rebind<uint16_t, TORCHTPU_FV::D>> h,
                       int64_t n) {
  namespace hn = hwy::HWY_NAMESPACE;
  const hn::Rebind<uint16_t, TORCHTPU_FV::D> d16;
  if (n >= TORCHTPU_FV::lanes) return hn::StoreU(h, d16, p);
#if HWY_TARGET == HWY_AVX3
  _mm256_mask_storeu_epi16(p, __mmask16((1u << n) - 1u), h.raw);
#else
  alignas(64) uint16_t t[TORCHTPU_FV::lanes];
  hn::StoreU(h, d16, t);
  if (n > 0) std::memcpy(p, t, size_t(n) * sizeof(uint16_t));
#endif
}
/// Stores lanes [0, n) of `x` rounded to bf16 at `p`, as `vstore`.
inline void vstore_bf16(uint16_t* p, TORCHTPU_FV x, int64_t n) { vstore_u16(p, to_bf16_bits(x), n); }
/// Rounds each lane to bf16 and back (what storing a bf16 intermediate does).
inline TORCHTPU_FV round_bf16(TORCHTPU_FV x) {
  namespace hn = hwy::HWY_NAMESPACE;
  const hn::Rebind<uint32_t, TORCHTPU_FV::D> du;
  return TORCHTPU_FV::of(hn::BitCast(TORCHTPU_FV::D(), hn::ShiftLeft<16>(hn::PromoteTo(du, to_bf16_bits(x)))));
}

/// float -> binary16 bits, round to nearest even, overflow to ±inf, subnormals kept, NaN
/// quiet with its top payload bits (as half::round_from_float; F16C `vcvtps2ph` / NEON `fcvtn`).
inline hwy::HWY_NAMESPACE::Vec<hwy::HWY_NAMESPACE::Rebind<uint16_t, TORCHTPU_FV::D>> to_f16_bits(TORCHTPU_FV x) {
  namespace hn = hwy::HWY_NAMESPACE;
  const hn::Rebind<uint16_t, TORCHTPU_FV::D> du16;
  const hn::Rebind<hwy::float16_t, TORCHTPU_FV::D> df16;
  return hn::BitCast(du16, hn::DemoteTo(df16, x.h()));
}
/// Stores lanes [0, n) of `x` rounded to binary16 at `p`, as `vstore`.
inline void vstore_f16(uint16_t* p, TORCHTPU_FV x, int64_t n) { vstore_u16(p, to_f16_bits(x), n); }
/// Rounds each lane to binary16 and back (what storing a half intermediate does).
inline TORCHTPU_FV round_f16(TORCHTPU_FV x) {
  namespace hn = hwy::HWY_NAMESPACE;
  const hn::Rebind<hwy::float16_t, TORCHTPU_FV::D> df16;
  return TORCHTPU_FV::of(hn::PromoteTo(TORCHTPU_FV::D(), hn::DemoteTo(df16, x.h())));
}

// Arithmetic is IEEE (no fast-math); `/` is exact.
inline TORCHTPU_FV operator+(TORCHTPU_FV a, TORCHTPU_FV b) { return TORCHTPU_FV::of(hwy::HWY_NAMESPACE::Add(a.h(), b.h())); }
inline TORCHTPU_FV operator-(TORCHTPU_FV a, TORCHTPU_FV b) { return TORCHTPU_FV::of(hwy::HWY_NAMESPACE::Sub(a.h(), b.h())); }
inline TORCHTPU_FV operator*(TORCHTPU_FV a, TORCHTPU_FV b) { return TORCHTPU_FV::of(hwy::HWY_NAMESPACE::Mul(a.h(), b.h())); }
inline TORCHTPU_FV operator/(TORCHTPU_FV a, TORCHTPU_FV b) { return TORCHTPU_FV::of(hwy::HWY_NAMESPACE::Div(a.h(), b.h())); }
inline TORCHTPU_FV operator-(TORCHTPU_FV a) { return TORCHTPU_FV::of(hwy::HWY_NAMESPACE::Neg(a.h())); }
/// a * b + c with one rounding.
inline TORCHTPU_FV vfma(TORCHTPU_FV a, TORCHTPU_FV b, TORCHTPU_FV c) {
  return TORCHTPU_FV::of(hwy::HWY_NAMESPACE::MulAdd(a.h(), b.h(), c.h()));
}
/// c - a * b with one rounding.
inline TORCHTPU_FV vfnma(TORCHTPU_FV a, TORCHTPU_FV b, TORCHTPU_FV c) {
  return TORCHTPU_FV::of(hwy::HWY_NAMESPACE::NegMulAdd(a.h(), b.h(), c.h()));
}
inline TORCHTPU_FV vabs(TORCHTPU_FV a) { return TORCHTPU_FV::of(hwy::HWY_NAMESPACE::Abs(a.h())); }
inline TORCHTPU_FV vsqrt(TORCHTPU_FV a) { return TORCHTPU_FV::of(hwy::HWY_NAMESPACE::Sqrt(a.h())); }
/// Bitwise operations on the float bits (sign manipulation).
inline TORCHTPU_FV vand(TORCHTPU_FV a, TORCHTPU_FV b) { return TORCHTPU_FV::of(hwy::HWY_NAMESPACE::And(a.h(), b.h())); }
inline TORCHTPU_FV vor(TORCHTPU_FV a, TORCHTPU_FV b) { return TORCHTPU_FV::of(hwy::HWY_NAMESPACE::Or(a.h(), b.h())); }
/// ~a & b.
inline TORCHTPU_FV vandnot(TORCHTPU_FV a, TORCHTPU_FV b) { return TORCHTPU_FV::of(hwy::HWY_NAMESPACE::AndNot(a.h(), b.h())); }

inline TORCHTPU_FM is_nan(TORCHTPU_FV a) { return {hwy::HWY_NAMESPACE::IsNaN(a.h())}; }
// Ordered comparisons (false when either lane is NaN).
inline TORCHTPU_FM operator<(TORCHTPU_FV a, TORCHTPU_FV b) { return {hwy::HWY_NAMESPACE::Lt(a.h(), b.h())}; }
inline TORCHTPU_FM operator>(TORCHTPU_FV a, TORCHTPU_FV b) { return {hwy::HWY_NAMESPACE::Gt(a.h(), b.h())}; }
inline TORCHTPU_FM operator<=(TORCHTPU_FV a, TORCHTPU_FV b) { return {hwy::HWY_NAMESPACE::Le(a.h(), b.h())}; }
inline TORCHTPU_FM operator>=(TORCHTPU_FV a, TORCHTPU_FV b) { return {hwy::HWY_NAMESPACE::Ge(a.h(), b.h())}; }
inline TORCHTPU_FM operator==(TORCHTPU_FV a, TORCHTPU_FV b) { return {hwy::HWY_NAMESPACE::Eq(a.h(), b.h())}; }
inline TORCHTPU_FM operator|(TORCHTPU_FM a, TORCHTPU_FM b) { return {hwy::HWY_NAMESPACE::Or(a.m, b.m)}; }
inline TORCHTPU_FM operator&(TORCHTPU_FM a, TORCHTPU_FM b) { return {hwy::HWY_NAMESPACE::And(a.m, b.m)}; }
/// Lane-wise `m ? a : b`.
inline TORCHTPU_FV select(TORCHTPU_FM m, TORCHTPU_FV a, TORCHTPU_FV b) {
  return TORCHTPU_FV::of(hwy::HWY_NAMESPACE::IfThenElse(m.m, a.h(), b.h()));
}
/// max/min where a NaN in `x` is returned as is (`bound` is never NaN): the x86 `maxps`
/// rule (second operand on NaN) and NEON's `fmax` (NaN propagates) agree on that. (Highway's
/// Max/Min on NEON are `fmaxnm`/`fminnm`, which return the number: not used there.)
inline TORCHTPU_FV vmax_keep_nan(TORCHTPU_FV bound, TORCHTPU_FV x) {
#if HWY_TARGET == HWY_NEON
  return {vmaxq_f32(bound.v, x.v)};
#else
  return TORCHTPU_FV::of(hwy::HWY_NAMESPACE::Max(bound.h(), x.h()));
#endif
}
inline TORCHTPU_FV vmin_keep_nan(TORCHTPU_FV bound, TORCHTPU_FV x) {
#if HWY_TARGET == HWY_NEON
  return {vminq_f32(bound.v, x.v)};
#else
  return TORCHTPU_FV::of(hwy::HWY_NAMESPACE::Min(bound.h(), x.h()));
#endif
}
/// NaN-propagating max/min of two vectors (torch.maximum / minimum).
inline TORCHTPU_FV vmaximum(TORCHTPU_FV a, TORCHTPU_FV b) {
  const TORCHTPU_FV r = TORCHTPU_FV::of(hwy::HWY_NAMESPACE::Max(a.h(), b.h()));
  return select(is_nan(a), a, select(is_nan(b), b, r));
}
inline TORCHTPU_FV vminimum(TORCHTPU_FV a, TORCHTPU_FV b) {
  const TORCHTPU_FV r = TORCHTPU_FV::of(hwy::HWY_NAMESPACE::Min(a.h(), b.h()));
  return select(is_nan(a), a, select(is_nan(b), b, r));
}
/// `x` unchanged, as a value the compiler cannot see into, on every target: the fused loops
/// fence each op's result with it, so no op's product is contracted into the next op's
/// addition (a fused region then gives the bits of its ops run one at a time, and of the
/// scalar paths' `FloatLane`, simd_lane.hpp).
inline TORCHTPU_FV vbarrier(TORCHTPU_FV x) {
#if HWY_TARGET == HWY_NEON
  __asm__("" : "+w"(x.v));
#elif HWY_TARGET == HWY_AVX3
  __asm__("" : "+v"(x.v));
#else
  __asm__("" : "+x"(x.v));
#endif
  return x;
}
/// p · 2^n for n integral in [-150, 129] (exp's last step): one rounding, so subnormal
/// results are correctly rounded and results past the float range are inf (`vscalefps` on
/// AVX-512; elsewhere two exact power-of-two factors, each in the normal range).
inline TORCHTPU_FV vscalef(TORCHTPU_FV p, TORCHTPU_FV n) {
#if HWY_TARGET == HWY_AVX3
  return {_mm512_maskz_scalef_ps(0xffff, p.v, n.v)};
#else
  namespace hn = hwy::HWY_NAMESPACE;
  const hn::Rebind<int32_t, TORCHTPU_FV::D> di;
#if HWY_TARGET == HWY_AVX2
  // n is integral and in range: the bare conversion (Highway's ConvertTo adds a saturation
  // fix-up of 4 instructions, a sixth of W1's loop on AVX2)
  const hn::Vec<decltype(di)> ni{_mm256_cvtps_epi32(n.v)};
#else
  const auto ni = hn::ConvertTo(di, n.h());
#endif
  const auto n1 = hn::ShiftRight<1>(ni);  // floor(n / 2): arithmetic shift
  const auto n2 = hn::Sub(ni, n1);
  const auto bias = hn::Set(di, 127);
  const auto f1 = hn::BitCast(TORCHTPU_FV::D(), hn::ShiftLeft<23>(hn::Add(n1, bias)));
  const auto f2 = hn::BitCast(TORCHTPU_FV::D(), hn::ShiftLeft<23>(hn::Add(n2, bias)));
  // fenced: the product is not contracted into a caller's addition (sigmoid's e + 1)
  return vbarrier(TORCHTPU_FV::of(hn::Mul(hn::Mul(p.h(), f1), f2)));
#endif
}
/// x = m · 2^e with m in [1, 2), for x positive and finite (subnormals exact); other lanes
/// give unspecified m and e (callers select their results by value).
inline void vmant_exp(TORCHTPU_FV x, TORCHTPU_FV& m, TORCHTPU_FV& e) {
#if HWY_TARGET == HWY_AVX3
  m = {_mm512_maskz_getmant_ps(0xffff, x.v, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero)};
  e = {_mm512_maskz_getexp_ps(0xffff, x.v)};
#else
  namespace hn = hwy::HWY_NAMESPACE;
  const hn::Rebind<int32_t, TORCHTPU_FV::D> di;
  const TORCHTPU_FV::D d;
  const auto sub = hn::Lt(x.h(), hn::Set(d, 1.17549435e-38f));  // below the normal range
  const auto xs = hn::IfThenElse(sub, hn::Mul(x.h(), hn::Set(d, 8388608.0f)), x.h());  // · 2^23
  const auto bits = hn::BitCast(di, xs);
  const auto ex = hn::Sub(hn::ShiftRight<23>(bits), hn::Set(di, 127));
  e = TORCHTPU_FV::of(hn::Sub(hn::ConvertTo(d, ex), hn::IfThenElseZero(sub, hn::Set(d, 23.0f))));
  m = TORCHTPU_FV::of(hn::BitCast(d, hn::Or(hn::And(bits, hn::Set(di, 0x007fffff)), hn::Set(di, 0x3f800000))));
#endif
}
/// Horizontal sum, in a fixed order (deterministic for a given target).
inline float hsum(TORCHTPU_FV a) {
#if HWY_TARGET == HWY_AVX3
  // The halves added pairwise (the order every earlier release used on AVX-512).
  const __m256 lo = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xff, _mm512_castps_pd(a.v), 0));
  const __m256 hi = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xff, _mm512_castps_pd(a.v), 1));
  const __m256 s8 = _mm256_add_ps(lo, hi);
  __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
  s4 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
  s4 = _mm_add_ss(s4, _mm_shuffle_ps(s4, s4, 1));
  return _mm_cvtss_f32(s4);
#else
  return hwy::HWY_NAMESPACE::GetLane(hwy::HWY_NAMESPACE::SumOfLanes(TORCHTPU_FV::D(), a.h()));
#endif
}
/// Horizontal maximum (no NaN handling; callers check NaN separately).
inline float hmax(TORCHTPU_FV a) {
  return hwy::HWY_NAMESPACE::GetLane(hwy::HWY_NAMESPACE::MaxOfLanes(TORCHTPU_FV::D(), a.h()));
}

/// Lanes 0, 2, 4, ... of the 2 · lanes floats `lo` then `hi` (a stride-2 gather of two loads).
inline TORCHTPU_FV vconcat_even(TORCHTPU_FV hi, TORCHTPU_FV lo) {
  return TORCHTPU_FV::of(hwy::HWY_NAMESPACE::ConcatEven(TORCHTPU_FV::D(), hi.h(), lo.h()));
}
/// Lanes 1, 3, 5, ... of the 2 · lanes floats `lo` then `hi` (with `vconcat_even`: a
/// deinterleave of pairs).
inline TORCHTPU_FV vconcat_odd(TORCHTPU_FV hi, TORCHTPU_FV lo) {
  return TORCHTPU_FV::of(hwy::HWY_NAMESPACE::ConcatOdd(TORCHTPU_FV::D(), hi.h(), lo.h()));
}

/// Two vectors from the 2 · lanes floats at `p`, deinterleaved: lane l of out[k] is
/// p[2 l + k] (Highway's LoadInterleaved2).
inline void vload_deinterleave2(const float* p, TORCHTPU_FV* out) {
  typename TORCHTPU_FV::H a, b;
  hwy::HWY_NAMESPACE::LoadInterleaved2(TORCHTPU_FV::D(), p, a, b);
  out[0] = TORCHTPU_FV::of(a); out[1] = TORCHTPU_FV::of(b);
}
/// Four vectors from the 4 · lanes floats at `p`, deinterleaved: lane l of out[k] is
/// p[4 l + k] (Highway's LoadInterleaved4).
inline void vload_deinterleave4(const float* p, TORCHTPU_FV* out) {
  typename TORCHTPU_FV::H a, b, c, d;
  hwy::HWY_NAMESPACE::LoadInterleaved4(TORCHTPU_FV::D(), p, a, b, c, d);
  out[0] = TORCHTPU_FV::of(a); out[1] = TORCHTPU_FV::of(b); out[2] = TORCHTPU_FV::of(c); out[3] = TORCHTPU_FV::of(d);
}

// ---- lane permutations and lane 0: the fixed lane trees of the reductions (vec_reduce.hpp) ----
/// `x` with lanes l and l ^ S exchanged, for S a power of two below `lanes`: S = 1 swaps
/// neighbouring lanes, S = 2 pairs of lanes, S = 4 groups of four (128-bit blocks), S = 8
/// (AVX-512) the 256-bit halves. Combining `x` with `vswap_lanes<S>(x)` for S = lanes / 2,
/// ..., 2, 1 reduces the lanes in the tree every release used on AVX-512 (halves first).
template <int S>
inline TORCHTPU_FV vswap_lanes(TORCHTPU_FV x) {
  namespace hn = hwy::HWY_NAMESPACE;
  static_assert(S >= 1 && S < TORCHTPU_FV::lanes && (S & (S - 1)) == 0, "vswap_lanes: S is a power of two below lanes");
  if constexpr (S == 1) return TORCHTPU_FV::of(hn::Shuffle2301(x.h()));
  else if constexpr (S == 2) return TORCHTPU_FV::of(hn::Shuffle1032(x.h()));
  else if constexpr (S == 4) return TORCHTPU_FV::of(hn::SwapAdjacentBlocks(x.h()));
  else return TORCHTPU_FV::of(hn::ConcatLowerUpper(TORCHTPU_FV::D(), x.h(), x.h()));
}
/// `x` unchanged, as a value the compiler cannot see into: the product that computed `x` is
/// not fused into a later add (GCC contracts a * b + c to an FMA by default in C++, and may do
/// so in one copy of a loop and not in another, which made NEON row sums depend on which
/// loop, hence on the thread split). On AVX-512 the identity: its kernels' results are the
/// bit-exact ones of earlier releases, and its loops contract alike.
inline TORCHTPU_FV vopaque(TORCHTPU_FV x) {
#if HWY_TARGET == HWY_AVX3
  return x;
#else
  return vbarrier(x);
#endif
}
/// Lane 0 of `x`.
inline float vfirst(TORCHTPU_FV x) { return hwy::HWY_NAMESPACE::GetLane(x.h()); }


/// Entry points compiled for HWY_TARGET: `Body`'s call operator, instantiated for this
/// target's vector type, and everything it calls inlined into one function.
template <>
struct TargetCall<HWY_TARGET> {
  template <class Body, class... Args>
  [[gnu::flatten]] static void run(Args... args) {
    Body{}.template operator()<FloatVec<HWY_TARGET>>(args...);
  }
};

#undef TORCHTPU_FV
#undef TORCHTPU_FM
}  // namespace torchtpu::detail
#pragma GCC diagnostic pop
HWY_AFTER_NAMESPACE();
#endif  // a target torchtpu has code for

#endif  // per-target toggle
