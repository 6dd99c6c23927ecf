// torchtpu/fuse/gemm.hpp — the CPU matrix-product kernels: C[m, n] = A[m, k] · B[k, n] in the
// accumulation type, for any operand strides: a portable packed loop for every type, and the
// AVX-512 f32 path (packed panels, 12x32 micro-kernel, threads, per-block epilogue callback).
#pragma once
#include <algorithm>  // std::min
#include <bit>        // std::bit_cast
#include <cstdint>    // int64_t
#include <vector>     // std::vector

#include "../core/dtype.hpp"  // convert, opmath_t
#include "gemv.hpp"             // GemvArgs, sgemv_small (batch 1–4)
#include "simd.hpp"             // TORCHTPU_SIMD_KERNEL, lane_mask, cpu_has_avx512
#include "threads.hpp"          // parallel_chunks, chunks_for

namespace torchtpu::detail {

/// A per-thread scratch buffer that only grows (so repeated materializations do not
/// allocate after the first call). `slot` separates buffers used at the same time.
template <class T>
T* workspace(size_t n, int slot) {
  thread_local std::vector<T> buf[4];
  auto& b = buf[slot];
  if (b.size() < n) b.resize(n);
  return b.data();
}

/// C (row-major, leading dim `ldc`, type Acc) = A · B, where A has strides (sam, sak) and B
/// has strides (sbk, sbn), both of element type T, accumulating in Acc (float for bf16/half).
/// Rows [row_begin, row_end) of C only.
template <class T, class Acc>
void gemm_rows(int64_t row_begin, int64_t row_end, int64_t n, int64_t k, const T* a, int64_t sam,
               int64_t sak, const T* b, int64_t sbk, int64_t sbn, Acc* c, int64_t ldc) {
  constexpr int64_t kc = 256, nc = 512;
  // Pack a [kc, nc] block of B row-major in Acc.
  Acc* bp = workspace<Acc>(size_t(kc * nc), 0);
  for (int64_t i = row_begin; i < row_end; ++i)
    for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = Acc(0);
  for (int64_t j0 = 0; j0 < n; j0 += nc) {
    const int64_t nb = std::min(nc, n - j0);
    for (int64_t p0 = 0; p0 < k; p0 += kc) {
      const int64_t kb = std::min(kc, k - p0);
      for (int64_t p = 0; p < kb; ++p) {
        const T* brow = b + (p0 + p) * sbk + j0 * sbn;
        Acc* dst = bp + p * nb;
        if (sbn == 1 && std::is_same_v<T, Acc>) {
          for (int64_t j = 0; j < nb; ++j) dst[j] = Acc(brow[j]);
        } else {
          for (int64_t j = 0; j < nb; ++j) dst[j] = convert<Acc>(brow[j * sbn]);
        }
      }
      for (int64_t i = row_begin; i < row_end; ++i) {
        Acc* crow = c + i * ldc + j0;
        const T* arow = a + i * sam + p0 * sak;
        for (int64_t p = 0; p < kb; ++p) {
          const Acc av = convert<Acc>(arow[p * sak]);
          const Acc* brow = bp + p * nb;
          for (int64_t j = 0; j < nb; ++j) crow[j] += av * brow[j];
        }
      }
    }
  }
}

}  // namespace torchtpu::detail

// ---- f32 GEMM on AVX-512: packed panels, a 12x32 register-blocked micro-kernel ------------

namespace torchtpu::detail {

/// One f32 product C[m, n] = A[m, k] · B[k, n] (A, B strided, C row-major with leading dim
/// `ldc`), with a callback `epilogue(ctx, row_begin, row_end)` run on each block of finished
/// rows (from the thread that computed them, possibly in parallel with other blocks).
struct SgemmArgs {
  int64_t m = 0, n = 0, k = 0;
  const float* a = nullptr;
  int64_t sam = 0, sak = 0;
  const float* b = nullptr;
  int64_t sbk = 0, sbn = 0;
  float* c = nullptr;
  int64_t ldc = 0;
  void (*epilogue)(void* ctx, int64_t r0, int64_t r1) = nullptr;
  void* epilogue_ctx = nullptr;
  /// A and B hold bf16 bit patterns (uint16) instead of floats: converted exactly to f32
  /// while packing, so the product accumulates in f32 (the TPU's default numerics).
  bool bf16 = false;
  float a_at(int64_t off) const {
    if (!bf16) return a[off];
    return std::bit_cast<float>(uint32_t(reinterpret_cast<const uint16_t*>(a)[off]) << 16);
  }
};

/// Blocking of the packed f32 GEMM (Goto & van de Geijn, "Anatomy of High-Performance Matrix
/// Multiplication", ACM TOMS 2008): an MR x NR register tile, KC-deep panels of B (KC x NR
/// fits L1) and MC x KC blocks of A (in L2).
inline constexpr int sgemm_mr = 12, sgemm_nr = 32;
inline constexpr int64_t sgemm_kc = 256, sgemm_mc = 240;

#if TORCHTPU_HAS_AVX512_PATH

/// C tile (mr x nr, mr <= 12, nr <= 32) = (accumulate ? C : 0) + Apanel · Bpanel, where
/// Apanel is [kc][12] and Bpanel [kc][32] (packed, zero-padded).
TORCHTPU_SIMD_KERNEL inline void sgemm_micro_12x32(int64_t kc, const float* a, const float* b, float* c,
                                                   int64_t ldc, int mr, int nr, bool accumulate) {
  __m512 acc[12][2];
#pragma GCC unroll 12
  for (int i = 0; i < 12; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  if (accumulate) {  // the C tile arrives while the k loop runs
    for (int i = 0; i < mr; ++i) {
      _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + 16), _MM_HINT_T0);
    }
  }
  for (int64_t p = 0; p < kc; ++p) {
    const __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
    _mm_prefetch(reinterpret_cast<const char*>(b + 8 * 32), _MM_HINT_T0);
#pragma GCC unroll 12
    for (int i = 0; i < 12; ++i) {
      const __m512 ai = _mm512_set1_ps(a[i]);
      acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
    }
    a += 12;
    b += 32;
  }
  if (mr == 12 && nr == 32) {
#pragma GCC unroll 12
    for (int i = 0; i < 12; ++i) {
      float* ci = c + i * ldc;
      if (accumulate) {
        acc[i][0] = _mm512_add_ps(acc[i][0], _mm512_loadu_ps(ci));
        acc[i][1] = _mm512_add_ps(acc[i][1], _mm512_loadu_ps(ci + 16));
      }
      _mm512_storeu_ps(ci, acc[i][0]);
      _mm512_storeu_ps(ci + 16, acc[i][1]);
    }
    return;
  }
  const __mmask16 m0 = lane_mask(nr), m1 = lane_mask(nr > 16 ? nr - 16 : 0);
#pragma GCC unroll 12
  for (int i = 0; i < 12; ++i) {
    if (i >= mr) break;
    float* ci = c + i * ldc;
    if (accumulate) {
      acc[i][0] = _mm512_add_ps(acc[i][0], _mm512_maskz_loadu_ps(m0, ci));
      acc[i][1] = _mm512_add_ps(acc[i][1], _mm512_maskz_loadu_ps(m1, ci + 16));
    }
    _mm512_mask_storeu_ps(ci, m0, acc[i][0]);
    _mm512_mask_storeu_ps(ci + 16, m1, acc[i][1]);
  }
}

/// Packs columns [j0, j0 + 32) x rows [p0, p0 + kb) of B into [kb][32] (zero beyond n).
TORCHTPU_SIMD_KERNEL inline void sgemm_pack_b(const SgemmArgs& g, int64_t p0, int64_t kb, int64_t j0, float* dst) {
  const int64_t nr = std::min<int64_t>(32, g.n - j0);
  if (g.bf16) {
    const uint16_t* hb = reinterpret_cast<const uint16_t*>(g.b) + p0 * g.sbk + j0 * g.sbn;
    for (int64_t p = 0; p < kb; ++p, hb += g.sbk, dst += 32) {
      if (g.sbn == 1) {
        vstore(dst, vload_bf16(hb, nr), 16);
        vstore(dst + 16, vload_bf16(hb + 16, nr > 16 ? nr - 16 : 0), 16);
      } else {
        int64_t j = 0;
        for (; j < nr; ++j) dst[j] = std::bit_cast<float>(uint32_t(hb[j * g.sbn]) << 16);
        for (; j < 32; ++j) dst[j] = 0.0f;
      }
    }
    return;
  }
  const float* src = g.b + p0 * g.sbk + j0 * g.sbn;
  if (g.sbn == 1) {
    const __mmask16 m0 = lane_mask(nr), m1 = lane_mask(nr > 16 ? nr - 16 : 0);
    for (int64_t p = 0; p < kb; ++p, src += g.sbk, dst += 32) {
      _mm512_storeu_ps(dst, _mm512_maskz_loadu_ps(m0, src));
      _mm512_storeu_ps(dst + 16, _mm512_maskz_loadu_ps(m1, src + 16));
    }
  } else {
    for (int64_t p = 0; p < kb; ++p, src += g.sbk, dst += 32) {
      int64_t j = 0;
      for (; j < nr; ++j) dst[j] = src[j * g.sbn];
      for (; j < 32; ++j) dst[j] = 0.0f;
    }
  }
}

/// Packs rows [i0, i0 + mb) x cols [p0, p0 + kb) of A into panels [kb][12] (zero beyond m).
inline void sgemm_pack_a(const SgemmArgs& g, int64_t i0, int64_t mb, int64_t p0, int64_t kb, float* dst) {
  for (int64_t ir = 0; ir < mb; ir += 12, dst += 12 * kb) {
    const int64_t mr = std::min<int64_t>(12, mb - ir);
    for (int64_t i = 0; i < 12; ++i) {
      if (i < mr && g.bf16) {
        const int64_t base = (i0 + ir + i) * g.sam + p0 * g.sak;
        for (int64_t p = 0; p < kb; ++p) dst[p * 12 + i] = g.a_at(base + p * g.sak);
      } else if (i < mr) {
        const float* src = g.a + (i0 + ir + i) * g.sam + p0 * g.sak;
        for (int64_t p = 0; p < kb; ++p) dst[p * 12 + i] = src[p * g.sak];
      } else {
        for (int64_t p = 0; p < kb; ++p) dst[p * 12 + i] = 0.0f;
      }
    }
  }
}

/// The f32 GEMM driver (see SgemmArgs). Deterministic for a given thread count.
inline void sgemm_avx512(const SgemmArgs& g) {
  if (g.m == 0 || g.n == 0) return;
  if (g.k == 0) {
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) g.c[i * g.ldc + j] = 0.0f;
    if (g.epilogue) g.epilogue(g.epilogue_ctx, 0, g.m);
    return;
  }
  // Batch 1–4: no packing, B streamed once (fuse/gemv.hpp).
  if (!g.bf16) {
    const GemvArgs v{g.m, g.n, g.k, g.a, g.sam, g.sak, g.b, g.sbk, g.sbn, g.c, g.ldc};
    if (gemv_supported(v)) {
      sgemv_small(v);
      if (g.epilogue) g.epilogue(g.epilogue_ctx, 0, g.m);
      return;
    }
  }
  // B is packed once, whole ([k-panel][n-panel][kc][32]); each thread then takes a range of
  // rows and, per MC-row block, runs every k panel while that block of C stays in L2, and
  // applies the epilogue to the finished block right away.
  const int64_t npanels = (g.n + 31) / 32;
  const int64_t kpanels = (g.k + sgemm_kc - 1) / sgemm_kc;
  float* bpack = workspace<float>(size_t(g.k * npanels * 32), 2);
  const int64_t row_chunks = chunks_for(g.m * g.n * g.k, int64_t(1) << 21);
  parallel_chunks(kpanels * npanels, std::min(row_chunks, chunks_for(g.k * g.n, int64_t(1) << 15)), 1,
                  [&](int64_t u0, int64_t u1) {
                    for (int64_t u = u0; u < u1; ++u) {
                      const int64_t p0 = (u / npanels) * sgemm_kc, jp = u % npanels;
                      const int64_t kb = std::min(sgemm_kc, g.k - p0);
                      sgemm_pack_b(g, p0, kb, jp * 32, bpack + p0 * npanels * 32 + jp * kb * 32);
                    }
                  });
  parallel_chunks(g.m, row_chunks, sgemm_mr, [&](int64_t r0, int64_t r1) {
    float* apack = workspace<float>(size_t(sgemm_mc * sgemm_kc), 3);
    for (int64_t i0 = r0; i0 < r1; i0 += sgemm_mc) {
      const int64_t mb = std::min(sgemm_mc, r1 - i0);
      for (int64_t p0 = 0; p0 < g.k; p0 += sgemm_kc) {
        const int64_t kb = std::min(sgemm_kc, g.k - p0);
        sgemm_pack_a(g, i0, mb, p0, kb, apack);
        const float* bk = bpack + p0 * npanels * 32;
        for (int64_t jp = 0; jp < npanels; ++jp) {
          const int nr = int(std::min<int64_t>(32, g.n - jp * 32));
          const float* bp = bk + jp * kb * 32;
          for (int64_t ir = 0; ir < mb; ir += 12) {
            const int mr = int(std::min<int64_t>(12, mb - ir));
            sgemm_micro_12x32(kb, apack + ir * kb, bp, g.c + (i0 + ir) * g.ldc + jp * 32, g.ldc, mr, nr, p0 > 0);
          }
        }
      }
      if (g.epilogue) g.epilogue(g.epilogue_ctx, i0, i0 + mb);
    }
  });
}
#endif

}  // namespace torchtpu::detail
