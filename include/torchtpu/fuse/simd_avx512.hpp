// torchtpu/fuse/simd_avx512.hpp — names for the hand-written AVX-512 kernels (the packed f32
// GEMM's micro-kernel, packing and transposes in gemm.hpp, the small-batch GEMV in gemv.hpp):
// `VecF` is the AVX-512 `FloatVec`, plus raw-mask helpers. Those kernels run only when
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
#else
#define TORCHTPU_SIMD inline
#define TORCHTPU_SIMD_KERNEL
#endif

}  // namespace torchtpu::detail
