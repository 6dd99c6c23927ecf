// torchtpu/fuse/simd.hpp — explicit 16-lane float vectors (AVX-512) for the fused CPU loops.
// Functions carry per-function target attributes and run only after a run-time CPU check,
// so users need no -march flag; on other CPUs the scalar loops run.
#pragma once
#include <cstdint>  // int64_t, uint16_t, uint32_t
#include <cstdlib>  // std::getenv

#if defined(__x86_64__) && defined(__GNUC__)
#include "intrin.hpp"  // AVX-512 intrinsics (usable under a target attribute)
#define TORCHTPU_HAS_AVX512_PATH 1
#else
#define TORCHTPU_HAS_AVX512_PATH 0
#endif

/// The instruction sets the vector path is compiled for (and checked at run time).
#define TORCHTPU_SIMD_ISA "avx512f,avx512dq,avx512bw,avx512vl,avx2,fma,bmi2"
#if TORCHTPU_HAS_AVX512_PATH
/// Marks a small vector function: always inlined, compiled for TORCHTPU_SIMD_ISA. Op structs
/// use it on their `simd` members (a call chain under it never crosses a function boundary,
/// so no vector crosses an ABI that lacks AVX-512).
#define TORCHTPU_SIMD [[gnu::always_inline, gnu::target(TORCHTPU_SIMD_ISA)]] inline
/// Marks a loop kernel compiled for TORCHTPU_SIMD_ISA (called only when the CPU has it).
#define TORCHTPU_SIMD_KERNEL [[gnu::target(TORCHTPU_SIMD_ISA)]]
#else
#define TORCHTPU_SIMD inline
#define TORCHTPU_SIMD_KERNEL
#endif

namespace torchtpu::detail {

#if TORCHTPU_HAS_AVX512_PATH
/// True when this CPU runs the AVX-512 vector path (F, DQ, BW, VL and FMA), checked once.
/// `TORCHTPU_DISABLE_SIMD=1` in the environment turns the vector path off (for comparisons).
inline bool cpu_has_avx512() {
  static const bool ok = [] {
    const char* off = std::getenv("TORCHTPU_DISABLE_SIMD");
    if (off && off[0] == '1') return false;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("fma") && __builtin_cpu_supports("avx2");
  }();
  return ok;
}
/// True when the CPU has AVX512-BF16 (`vdpbf16ps`).
inline bool cpu_has_avx512_bf16() {
  static const bool ok = [] {
    if (!cpu_has_avx512()) return false;
    // CPUID leaf 7 subleaf 1, EAX bit 5: AVX512_BF16 (Intel SDM vol. 2A, CPUID).
    unsigned a = 7, b = 0, c = 1, d = 0;
    __asm__("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
    return ((a >> 5) & 1u) != 0;
  }();
  return ok;
}

/// (Intrinsics with an "undefined" source register are called in their zero-masked form with
/// a full mask: GCC 12 warns -Wmaybe-uninitialized about the plain forms once inlined.)
///
/// 16 floats in one zmm register. Arithmetic is IEEE (no fast-math); `/` is exact.
struct VecF {
  __m512 v;
  static constexpr int lanes = 16;
};
using MaskF = __mmask16;

TORCHTPU_SIMD VecF vset1(float x) { return {_mm512_set1_ps(x)}; }
TORCHTPU_SIMD VecF vzero() { return {_mm512_setzero_ps()}; }
TORCHTPU_SIMD MaskF lane_mask(int64_t n) { return n >= 16 ? MaskF(0xffff) : MaskF((1u << n) - 1u); }
/// Loads `n` (<= 16) floats; lanes past `n` are 0 and their memory is not touched.
TORCHTPU_SIMD VecF vload(const float* p, int64_t n) {
  return n >= 16 ? VecF{_mm512_loadu_ps(p)} : VecF{_mm512_maskz_loadu_ps(lane_mask(n), p)};
}
TORCHTPU_SIMD void vstore(float* p, VecF x, int64_t n) {
  if (n >= 16) _mm512_storeu_ps(p, x.v);
  else _mm512_mask_storeu_ps(p, lane_mask(n), x.v);
}
/// bf16 bits → float (exact).
TORCHTPU_SIMD VecF vload_bf16(const uint16_t* p, int64_t n) {
  const __m256i h = n >= 16 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))
                            : _mm256_maskz_loadu_epi16(lane_mask(n), p);
  return {_mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xffff, _mm512_maskz_cvtepu16_epi32(0xffff, h), 16))};
}
/// float → bf16 bits, round to nearest even, NaN kept quiet (as bfloat16::round_from_float).
TORCHTPU_SIMD __m256i to_bf16_bits(VecF x) {
  const __m512i u = _mm512_castps_si512(x.v);
  const __m512i lsb = _mm512_and_si512(_mm512_maskz_srli_epi32(0xffff, u, 16), _mm512_set1_epi32(1));
  __m512i r = _mm512_maskz_srli_epi32(0xffff, _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), lsb), 16);
  const MaskF nan = _mm512_cmp_ps_mask(x.v, x.v, _CMP_UNORD_Q);
  r = _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(_mm512_maskz_srli_epi32(0xffff, u, 16), _mm512_set1_epi32(0x40)));
  return _mm512_maskz_cvtepi32_epi16(0xffff, r);
}
TORCHTPU_SIMD void vstore_bf16(uint16_t* p, VecF x, int64_t n) {
  const __m256i h = to_bf16_bits(x);
  if (n >= 16) _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), h);
  else _mm256_mask_storeu_epi16(p, lane_mask(n), h);
}
/// Rounds each lane to bf16 and back (what storing a bf16 intermediate does).
TORCHTPU_SIMD VecF round_bf16(VecF x) {
  return {_mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xffff, _mm512_maskz_cvtepu16_epi32(0xffff, to_bf16_bits(x)), 16))};
}

TORCHTPU_SIMD VecF operator+(VecF a, VecF b) { return {_mm512_add_ps(a.v, b.v)}; }
TORCHTPU_SIMD VecF operator-(VecF a, VecF b) { return {_mm512_sub_ps(a.v, b.v)}; }
TORCHTPU_SIMD VecF operator*(VecF a, VecF b) { return {_mm512_mul_ps(a.v, b.v)}; }
TORCHTPU_SIMD VecF operator/(VecF a, VecF b) { return {_mm512_div_ps(a.v, b.v)}; }
TORCHTPU_SIMD VecF operator-(VecF a) { return {_mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a.v), _mm512_set1_epi32(int(0x80000000u))))}; }
/// a * b + c with one rounding.
TORCHTPU_SIMD VecF vfma(VecF a, VecF b, VecF c) { return {_mm512_fmadd_ps(a.v, b.v, c.v)}; }
TORCHTPU_SIMD VecF vabs(VecF a) { return {_mm512_abs_ps(a.v)}; }
TORCHTPU_SIMD VecF vsqrt(VecF a) { return {_mm512_maskz_sqrt_ps(0xffff, a.v)}; }
TORCHTPU_SIMD MaskF is_nan(VecF a) { return _mm512_cmp_ps_mask(a.v, a.v, _CMP_UNORD_Q); }
TORCHTPU_SIMD MaskF operator<(VecF a, VecF b) { return _mm512_cmp_ps_mask(a.v, b.v, _CMP_LT_OQ); }
TORCHTPU_SIMD MaskF operator>(VecF a, VecF b) { return _mm512_cmp_ps_mask(a.v, b.v, _CMP_GT_OQ); }
TORCHTPU_SIMD MaskF operator==(VecF a, VecF b) { return _mm512_cmp_ps_mask(a.v, b.v, _CMP_EQ_OQ); }
/// Lane-wise `m ? a : b`.
TORCHTPU_SIMD VecF select(MaskF m, VecF a, VecF b) { return {_mm512_mask_mov_ps(b.v, m, a.v)}; }
/// max/min where a NaN in `x` is returned as is (the bound never is NaN).
TORCHTPU_SIMD VecF vmax_keep_nan(VecF bound, VecF x) { return {_mm512_maskz_max_ps(0xffff, bound.v, x.v)}; }
TORCHTPU_SIMD VecF vmin_keep_nan(VecF bound, VecF x) { return {_mm512_maskz_min_ps(0xffff, bound.v, x.v)}; }
/// NaN-propagating max/min of two vectors (torch.maximum / minimum).
TORCHTPU_SIMD VecF vmaximum(VecF a, VecF b) {
  const VecF r{_mm512_maskz_max_ps(0xffff, a.v, b.v)};
  return select(is_nan(a), a, select(is_nan(b), b, r));
}
TORCHTPU_SIMD VecF vminimum(VecF a, VecF b) {
  const VecF r{_mm512_maskz_min_ps(0xffff, a.v, b.v)};
  return select(is_nan(a), a, select(is_nan(b), b, r));
}
/// 1 / d for normal d (reciprocal estimate + one Newton step, about 1 ulp); the math
/// functions use it for denominators in [1, 2] (sigmoid) and [1, 336] (tanh).
TORCHTPU_SIMD VecF vrecip_1_2(VecF d) {
  const __m512 r = _mm512_maskz_rcp14_ps(0xffff, d.v);
  return {_mm512_mul_ps(r, _mm512_fnmadd_ps(d.v, r, _mm512_set1_ps(2.0f)))};
}
/// Horizontal sum, in a fixed order (deterministic): halves added pairwise.
TORCHTPU_SIMD float hsum(VecF a) {
  const __m256 lo = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xff, _mm512_castps_pd(a.v), 0));
  const __m256 hi = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xff, _mm512_castps_pd(a.v), 1));
  const __m256 s8 = _mm256_add_ps(lo, hi);
  __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
  s4 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
  s4 = _mm_add_ss(s4, _mm_shuffle_ps(s4, s4, 1));
  return _mm_cvtss_f32(s4);
}
/// Horizontal maximum (no NaN handling; callers check NaN separately).
TORCHTPU_SIMD float hmax(VecF a) {
  const __m256 lo = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xff, _mm512_castps_pd(a.v), 0));
  const __m256 hi = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xff, _mm512_castps_pd(a.v), 1));
  const __m256 s8 = _mm256_max_ps(lo, hi);
  __m128 s4 = _mm_max_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
  s4 = _mm_max_ps(s4, _mm_movehl_ps(s4, s4));
  s4 = _mm_max_ss(s4, _mm_shuffle_ps(s4, s4, 1));
  return _mm_cvtss_f32(s4);
}
#else
inline bool cpu_has_avx512() { return false; }
inline bool cpu_has_avx512_bf16() { return false; }
#endif

}  // namespace torchtpu::detail
