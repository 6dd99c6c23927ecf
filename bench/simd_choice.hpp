// bench/simd_choice.hpp — the candidates of bench/simd_choice.cpp (issue 14: which portable SIMD
// library the CPU engine moves to), each written in its own translation unit: Highway static
// per-target code (simd_hwy.cpp, no -m flags), xsimd 8.1 (simd_xsimd.cpp, built twice: -mavx2
// -mfma and -mavx512f...), plain AVX2 intrinsics under a target attribute (simd_intrin.cpp).
// Every W1 kernel computes y = tanh(x*w + b) * sigmoid(x) + 0.5*x over n floats; every GEMM
// micro-kernel computes one MR x NR tile C = Apanel · Bpanel from packed panels (A [kc][MR],
// B [kc][NR], both contiguous), storing C (row-major, leading dimension ldc) without reading it.
#pragma once
#include <cstdint>  // int64_t

namespace simd_choice {

using W1Fn = void (*)(const float* x, const float* w, const float* b, float* y, int64_t n);
using MicroFn = void (*)(int64_t kc, const float* a, const float* b, float* c, int64_t ldc);

// ---- Highway 1.0.3 (simd_hwy.cpp): hwy::N_AVX2 / hwy::N_AVX3 code called directly --------
// "contrib": tanh and exp of hwy/contrib/math/math-inl.h; "ours": the polynomials of
// include/torchtpu/fuse/vecmath.hpp written over Highway ops.
void hwy_avx2_w1_contrib(const float*, const float*, const float*, float*, int64_t);
void hwy_avx2_w1_ours(const float*, const float*, const float*, float*, int64_t);
void hwy_avx3_w1_contrib(const float*, const float*, const float*, float*, int64_t);
void hwy_avx3_w1_ours(const float*, const float*, const float*, float*, int64_t);
void hwy_avx2_micro_6x16(int64_t, const float*, const float*, float*, int64_t);
void hwy_avx3_micro_12x32(int64_t, const float*, const float*, float*, int64_t);
/// The best target HWY_DYNAMIC_DISPATCH would pick for the W1 kernel here, e.g. "AVX3".
const char* hwy_dispatch_target();
/// W1 "ours" through HWY_EXPORT / HWY_DYNAMIC_DISPATCH (the table of function pointers).
void hwy_dyn_w1_ours(const float*, const float*, const float*, float*, int64_t);

// ---- xsimd 8.1 (simd_xsimd.cpp), one namespace per build ------------------------------------
// "lib": xsimd::tanh and xsimd::exp; "ours": the same polynomials as above over xsimd batches.
namespace xs_avx2 {
const char* arch_name();
void w1_lib(const float*, const float*, const float*, float*, int64_t);
void w1_ours(const float*, const float*, const float*, float*, int64_t);
void micro(int64_t, const float*, const float*, float*, int64_t);  // 6 x 16
}  // namespace xs_avx2
namespace xs_avx512 {
const char* arch_name();
void w1_lib(const float*, const float*, const float*, float*, int64_t);
void w1_ours(const float*, const float*, const float*, float*, int64_t);
void micro(int64_t, const float*, const float*, float*, int64_t);  // 12 x 32
}  // namespace xs_avx512

// ---- plain intrinsics (simd_intrin.cpp), [[gnu::target]] functions, no -m flags -------------
void intrin_avx2_w1_ours(const float*, const float*, const float*, float*, int64_t);
void intrin_avx2_micro_6x16(int64_t, const float*, const float*, float*, int64_t);
/// Register-only FMA loops: one core's peak in GFLOP/s at 256 and 512 bits.
double fma_peak_avx2();
double fma_peak_avx512();
bool cpu_has_avx2_fma();
bool cpu_has_avx512_skx();  // F, DQ, BW, VL (Highway's AVX3, torchtpu's AVX-512 path)

}  // namespace simd_choice
