// torchtpu/fuse/simd_lane.hpp — `FloatLane`: one float with the operations of the vector
// types of simd_target-inl.hpp, so that the vector math (vecmath.hpp) and the op structs'
// `simd` members also compute the engine's scalar paths.
//
// Why: a float op is computed by one algorithm wherever it runs. A region the vector engine
// cannot take (it holds an op with no vector form, a strided double, TORCHTPU_CPU_ISA=scalar)
// evaluates each element through `FloatLane`, so `gelu(remainder(x, y))` fused gives the bits
// of `remainder` then `gelu` run one at a time, and every instruction set gives the bits of
// every other (tests/fuse/test_fuse_lane.cpp checks both, op by op, over float bit patterns).
//
// Each operation gives what one lane of the vector instruction gives: IEEE + - * / and sqrt,
// `vfma` with one rounding, `vscalef` with one rounding, the x86 `maxps`/`minps` rule for
// max/min on x86-64 and NEON's `fmax`/`fmin` (+0 above -0) on aarch64. A product is never
// contracted into a later addition (`lane_barrier`): the vector code writes its FMAs
// explicitly and the fused loops fence each op's result (`vbarrier`), so neither side does.
#pragma once
#include <bit>      // std::bit_cast
#include <cmath>    // std::sqrt, std::frexp, std::signbit
#include <cstdint>  // int64_t, uint32_t, uint64_t

namespace torchtpu::detail {

/// `x` unchanged, as a value the compiler cannot see into: a product is not fused into a
/// later addition (GCC contracts a * b + c in C++ by default where the target has FMA).
inline float lane_barrier(float x) {
#if defined(__GNUC__) && defined(__x86_64__)
  __asm__("" : "+x"(x));
#elif defined(__GNUC__) && defined(__aarch64__)
  __asm__("" : "+w"(x));
#endif
  return x;
}

/// The lane mask of `FloatLane`.
struct FloatLaneMask {
  bool m;
};

/// One float lane with the operations of `FloatVec<Target>` (simd_target-inl.hpp).
struct FloatLane {
  using Mask = FloatLaneMask;
  static constexpr int lanes = 1;
  static constexpr bool has_fma_lane = false;
  float v;
  static FloatLane set1(float x) { return {x}; }
  static FloatLane zero() { return {0.0f}; }
  static FloatLane iota() { return {0.0f}; }
  static FloatLane load(const float* p) { return {*p}; }
  static FloatLane load_n(const float* p, int64_t n) { return {n > 0 ? *p : 0.0f}; }
  static Mask first_n(int64_t n) { return {n > 0}; }
};

inline FloatLane operator+(FloatLane a, FloatLane b) { return {a.v + b.v}; }
inline FloatLane operator-(FloatLane a, FloatLane b) { return {a.v - b.v}; }
inline FloatLane operator*(FloatLane a, FloatLane b) { return {lane_barrier(a.v * b.v)}; }
inline FloatLane operator/(FloatLane a, FloatLane b) { return {a.v / b.v}; }
inline FloatLane operator-(FloatLane a) { return {-a.v}; }
/// a * b + c with one rounding.
inline FloatLane vfma(FloatLane a, FloatLane b, FloatLane c) { return {__builtin_fmaf(a.v, b.v, c.v)}; }
/// c - a * b with one rounding.
inline FloatLane vfnma(FloatLane a, FloatLane b, FloatLane c) { return {__builtin_fmaf(-a.v, b.v, c.v)}; }
inline FloatLane vabs(FloatLane a) { return {std::bit_cast<float>(std::bit_cast<uint32_t>(a.v) & 0x7fffffffu)}; }
inline FloatLane vsqrt(FloatLane a) { return {std::sqrt(a.v)}; }
inline FloatLane vand(FloatLane a, FloatLane b) {
  return {std::bit_cast<float>(std::bit_cast<uint32_t>(a.v) & std::bit_cast<uint32_t>(b.v))};
}
inline FloatLane vor(FloatLane a, FloatLane b) {
  return {std::bit_cast<float>(std::bit_cast<uint32_t>(a.v) | std::bit_cast<uint32_t>(b.v))};
}
/// ~a & b.
inline FloatLane vandnot(FloatLane a, FloatLane b) {
  return {std::bit_cast<float>(~std::bit_cast<uint32_t>(a.v) & std::bit_cast<uint32_t>(b.v))};
}
inline FloatLaneMask is_nan(FloatLane a) { return {a.v != a.v}; }
// Ordered comparisons (false when either is NaN).
inline FloatLaneMask operator<(FloatLane a, FloatLane b) { return {a.v < b.v}; }
inline FloatLaneMask operator>(FloatLane a, FloatLane b) { return {a.v > b.v}; }
inline FloatLaneMask operator<=(FloatLane a, FloatLane b) { return {a.v <= b.v}; }
inline FloatLaneMask operator>=(FloatLane a, FloatLane b) { return {a.v >= b.v}; }
inline FloatLaneMask operator==(FloatLane a, FloatLane b) { return {a.v == b.v}; }
inline FloatLaneMask operator|(FloatLaneMask a, FloatLaneMask b) { return {a.m || b.m}; }
inline FloatLaneMask operator&(FloatLaneMask a, FloatLaneMask b) { return {a.m && b.m}; }
inline FloatLane select(FloatLaneMask m, FloatLane a, FloatLane b) { return m.m ? a : b; }
/// Stores `x` at `p` when n > 0 (the vector types' masked store, one lane).
inline void vstore(float* p, FloatLane x, int64_t n) {
  if (n > 0) *p = x.v;
}
/// out[k] = p[k], k < 2 (the vector types' deinterleaving load, one lane).
inline void vload_deinterleave2(const float* p, FloatLane* out) {
  for (int k = 0; k < 2; ++k) out[k] = {p[k]};
}
/// out[k] = p[k], k < 4 (the vector types' deinterleaving load, one lane).
inline void vload_deinterleave4(const float* p, FloatLane* out) {
  for (int k = 0; k < 4; ++k) out[k] = {p[k]};
}

/// max / min of two non-NaN floats as one lane of the vector instruction: x86 `maxps(a, b)`
/// gives b unless a > b (so max(+0, -0) is -0); NEON `fmax` orders +0 above -0.
inline float lane_max(float a, float b) {
#if defined(__aarch64__)
  if (a == b) return std::signbit(a) ? b : a;
#endif
  return a > b ? a : b;
}
inline float lane_min(float a, float b) {
#if defined(__aarch64__)
  if (a == b) return std::signbit(a) ? a : b;
#endif
  return a < b ? a : b;
}
/// max / min against a bound that is never NaN; a NaN `x` is returned as is.
inline FloatLane vmax_keep_nan(FloatLane bound, FloatLane x) { return {x.v != x.v ? x.v : lane_max(bound.v, x.v)}; }
inline FloatLane vmin_keep_nan(FloatLane bound, FloatLane x) { return {x.v != x.v ? x.v : lane_min(bound.v, x.v)}; }
/// NaN-propagating max / min (torch.maximum / minimum).
inline FloatLane vmaximum(FloatLane a, FloatLane b) {
  return {a.v != a.v ? a.v : b.v != b.v ? b.v : lane_max(a.v, b.v)};
}
inline FloatLane vminimum(FloatLane a, FloatLane b) {
  return {a.v != a.v ? a.v : b.v != b.v ? b.v : lane_min(a.v, b.v)};
}
/// p · 2^n for n integral in [-150, 129], with one rounding (as AVX-512 `vscalefps`): the
/// product is exact in double, then rounded to float once.
/// A NaN `n` (from a NaN argument, whose `p` is NaN too) counts as 0: converting NaN to an
/// integer is undefined behaviour, and the result is `p`'s NaN as on the vector targets.
inline FloatLane vscalef(FloatLane p, FloatLane n) {
  const int64_t ni = n.v == n.v ? int64_t(n.v) : 0;
  const double two_n = std::bit_cast<double>(uint64_t(ni + 1023) << 52);
  return {float(double(p.v) * two_n)};
}
/// x = m · 2^e with m in [1, 2), for x positive and finite (subnormals exact); other values
/// give unspecified m and e (callers select their results by value).
inline void vmant_exp(FloatLane x, FloatLane& m, FloatLane& e) {
  int ex = 0;
  const float f = std::frexp(x.v, &ex);  // f in [0.5, 1)
  m = {f * 2.0f};
  e = {float(ex - 1)};
}
inline float hsum(FloatLane a) { return a.v; }
inline float hmax(FloatLane a) { return a.v; }
inline FloatLane vopaque(FloatLane x) { return {lane_barrier(x.v)}; }
/// `x` fenced against contraction (the fused loops' per-op fence, as `vbarrier` of the targets).
inline FloatLane vbarrier(FloatLane x) { return {lane_barrier(x.v)}; }
inline float vfirst(FloatLane x) { return x.v; }

}  // namespace torchtpu::detail
