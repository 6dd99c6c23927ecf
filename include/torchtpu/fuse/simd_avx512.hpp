// torchtpu/fuse/simd_avx512.hpp — names for the hand-written AVX-512 kernels (the packed f32
// GEMM's micro-kernel, packing and transposes in gemm.hpp, the small-batch GEMV in gemv.hpp,
// the channels-as-lanes depthwise convolution in window.hpp): `VecF` is the AVX-512
// `FloatVec`, plus raw-mask helpers and a 16 x 16 transpose. Those kernels run only when
// `cpu_has_avx512()`; on other CPUs their callers use the portable kernels or the scalar loops. Included by simd.hpp only.
#pragma once

namespace torchtpu::detail {

#if TORCHTPU_HAS_AVX512_PATH
/// The instruction sets the AVX-512 kernels are compiled for: Highway's AVX3 target, so that
/// its operations (and simd_target-inl.hpp's) inline into them.
#define TORCHTPU_SIMD_ISA HWY_TARGET_STR_AVX3
/// Marks a small AVX-512 function: always inlined, compiled for TORCHTPU_SIMD_ISA.
#define TORCHTPU_SIMD [[gnu::always_inline, gnu::target(TORCHTPU_SIMD_ISA)]] inline
/// Marks an AVX-512 loop kernel (called only when `cpu_has_avx512()`); `flatten` inlines
/// the op structs' `simd` members and the vector math, which carry no target of their own.
#define TORCHTPU_SIMD_KERNEL [[gnu::target(TORCHTPU_SIMD_ISA), gnu::flatten]]

using VecF = FloatVec<HWY_AVX3>;
using MaskF = __mmask16;

TORCHTPU_SIMD MaskF lane_mask(int64_t n) { return n >= 16 ? MaskF(0xffff) : MaskF((1u << n) - 1u); }
TORCHTPU_SIMD VecF vload_bf16(const uint16_t* p, int64_t n) { return VecF::load_bf16(p, n); }

/// The transpose of 16 vectors r[0..15] of 16 floats: out[c] holds element c of each r[i], in
/// order (by 128-bit lanes: unpacks within lanes, then lane shuffles).
TORCHTPU_SIMD void transpose_16x16(const __m512 (&r)[16], __m512 (&out)[16]) {
  __m512 u[4][4];
#pragma GCC unroll 4
  for (int g = 0; g < 4; ++g) {
    const __m512 t0 = _mm512_maskz_unpacklo_ps(0xffff, r[4 * g], r[4 * g + 1]), t1 = _mm512_maskz_unpackhi_ps(0xffff, r[4 * g], r[4 * g + 1]);
    const __m512 t2 = _mm512_maskz_unpacklo_ps(0xffff, r[4 * g + 2], r[4 * g + 3]), t3 = _mm512_maskz_unpackhi_ps(0xffff, r[4 * g + 2], r[4 * g + 3]);
    // u[g][j], 128-bit lane L: column 4L + j of rows 4g .. 4g + 3
    u[g][0] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(0xff, _mm512_castps_pd(t0), _mm512_castps_pd(t2)));
    u[g][1] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(0xff, _mm512_castps_pd(t0), _mm512_castps_pd(t2)));
    u[g][2] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(0xff, _mm512_castps_pd(t1), _mm512_castps_pd(t3)));
    u[g][3] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(0xff, _mm512_castps_pd(t1), _mm512_castps_pd(t3)));
  }
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    const __m512 s01lo = _mm512_maskz_shuffle_f32x4(0xffff, u[0][j], u[1][j], 0x44), s01hi = _mm512_maskz_shuffle_f32x4(0xffff, u[0][j], u[1][j], 0xee);
    const __m512 s23lo = _mm512_maskz_shuffle_f32x4(0xffff, u[2][j], u[3][j], 0x44), s23hi = _mm512_maskz_shuffle_f32x4(0xffff, u[2][j], u[3][j], 0xee);
    out[j] = _mm512_maskz_shuffle_f32x4(0xffff, s01lo, s23lo, 0x88);       // column j
    out[4 + j] = _mm512_maskz_shuffle_f32x4(0xffff, s01lo, s23lo, 0xdd);   // column 4 + j
    out[8 + j] = _mm512_maskz_shuffle_f32x4(0xffff, s01hi, s23hi, 0x88);   // column 8 + j
    out[12 + j] = _mm512_maskz_shuffle_f32x4(0xffff, s01hi, s23hi, 0xdd);  // column 12 + j
  }
}
#else
#define TORCHTPU_SIMD inline
#define TORCHTPU_SIMD_KERNEL
#endif

}  // namespace torchtpu::detail
