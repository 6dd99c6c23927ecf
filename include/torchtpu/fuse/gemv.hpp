// torchtpu/fuse/gemv.hpp — the f32 small-batch matrix products on AVX-512: C[m, n] = A[m, k] ·
// B[k, n] for m = 1..4 (batch-1 inference), with B streamed once and never packed, and an
// optional callback on each finished range of columns (the fused epilogue).
#pragma once
#include <algorithm>  // std::min
#include <cstdint>    // int64_t

#include "simd.hpp"     // TORCHTPU_SIMD_KERNEL, lane_mask, hsum
#include "threads.hpp"  // parallel_chunks, chunks_for

namespace torchtpu::detail {

/// Largest number of rows of A the small-batch kernels take.
inline constexpr int64_t gemv_max_m = 4;

/// One small-batch product: A [m, k] with strides (sam, sak), B [k, n] with strides (sbk,
/// sbn), C row-major with leading dim `ldc`. Plain pointers; the caller owns everything.
struct GemvArgs {
  int64_t m = 0, n = 0, k = 0;
  const float* a = nullptr;
  int64_t sam = 0, sak = 0;
  const float* b = nullptr;
  int64_t sbk = 0, sbn = 0;
  float* c = nullptr;
  int64_t ldc = 0;
};

/// True when the small-batch kernels take `g`: 1 <= m <= 4 and B row-major (sbn == 1, the
/// `x · W` layout) or column-major with contiguous rows of A (sbk == sak == 1, `x · Wᵀ`).
inline bool gemv_supported(const GemvArgs& g) {
  return g.m >= 1 && g.m <= gemv_max_m && (g.sbn == 1 || (g.sbk == 1 && g.sak == 1));
}

/// Work (multiply-adds) per thread below which a small-batch product stays on one thread:
/// below it, waking the pool costs more than the product.
inline constexpr int64_t gemv_grain = int64_t(1) << 17;

#if TORCHTPU_HAS_AVX512_PATH

/// Independent accumulator chains along k for a B row-major product with `n` columns: a
/// narrow tile has too few column vectors to hide the FMA latency, so it splits the k loop
/// into several chains summed at the end. Depends on n only (never on how columns are split
/// over threads), so every column is summed in the same order whatever the thread count.
inline int gemv_k_chains(int64_t n) { return n <= 16 ? 8 : n <= 32 ? 4 : n <= 64 ? 2 : 1; }

/// Elements of B one thread reads from which a batch-1 product streams B in memory order
/// (gemv1_stream) instead of by column tiles: 1 MiB, beyond which its share of B no longer
/// stays in a 2 MiB L2 next to the rest of a forward pass. Both kernels sum each column in
/// the same order, so the choice, which depends on the thread's share, never changes a result.
inline constexpr int64_t gemv_stream_elems = int64_t(1) << 18;

/// Batch 1, B row-major: c[0, NV*16 columns] = a · b for one tile of up to NV vectors
/// (`width` columns; lanes past it are neither read nor written), with KS chains along k.
template <int NV, int KS>
TORCHTPU_SIMD void gemv1_tile(const GemvArgs& g, int64_t j, int64_t width) {
  __mmask16 mk[NV];
#pragma GCC unroll 16
  for (int q = 0; q < NV; ++q) mk[q] = lane_mask(width - 16 * q > 0 ? width - 16 * q : 0);
  __m512 acc[KS][NV];
#pragma GCC unroll 16
  for (int s = 0; s < KS; ++s)
#pragma GCC unroll 16
    for (int q = 0; q < NV; ++q) acc[s][q] = _mm512_setzero_ps();
  const float* ap = g.a;
  const float* bp = g.b + j;
  int64_t p = 0;
  for (; p + KS <= g.k; p += KS, ap += KS * g.sak, bp += KS * g.sbk) {
#pragma GCC unroll 16
    for (int s = 0; s < KS; ++s) {
      const __m512 av = _mm512_set1_ps(ap[s * g.sak]);
#pragma GCC unroll 16
      for (int q = 0; q < NV; ++q)
        acc[s][q] = _mm512_fmadd_ps(av, _mm512_maskz_loadu_ps(mk[q], bp + s * g.sbk + 16 * q), acc[s][q]);
    }
  }
  for (; p < g.k; ++p, ap += g.sak, bp += g.sbk) {
    const __m512 av = _mm512_set1_ps(ap[0]);
#pragma GCC unroll 16
    for (int q = 0; q < NV; ++q) acc[0][q] = _mm512_fmadd_ps(av, _mm512_maskz_loadu_ps(mk[q], bp + 16 * q), acc[0][q]);
  }
  // chains summed pairwise in a fixed order
  if constexpr (KS >= 8) {
#pragma GCC unroll 16
    for (int q = 0; q < NV; ++q)
      for (int s = 0; s < 4; ++s) acc[s][q] = _mm512_add_ps(acc[s][q], acc[s + 4][q]);
  }
  if constexpr (KS >= 4) {
#pragma GCC unroll 16
    for (int q = 0; q < NV; ++q)
      for (int s = 0; s < 2; ++s) acc[s][q] = _mm512_add_ps(acc[s][q], acc[s + 2][q]);
  }
  if constexpr (KS >= 2) {
#pragma GCC unroll 16
    for (int q = 0; q < NV; ++q) acc[0][q] = _mm512_add_ps(acc[0][q], acc[1][q]);
  }
#pragma GCC unroll 16
  for (int q = 0; q < NV; ++q) _mm512_mask_storeu_ps(g.c + j + 16 * q, mk[q], acc[0][q]);
}

/// Batch 1, B row-major, columns [j0, j1): 128-column tiles (8 independent FMA chains), then
/// one narrower tile.
template <int KS>
TORCHTPU_SIMD void gemv1_rowmajor(const GemvArgs& g, int64_t j0, int64_t j1) {
  int64_t j = j0;
  for (; j + 128 <= j1; j += 128) gemv1_tile<8, KS>(g, j, 128);
  const int64_t w = j1 - j;
  if (w <= 0) return;
  if (w <= 16) gemv1_tile<1, KS>(g, j, w);
  else if (w <= 32) gemv1_tile<2, KS>(g, j, w);
  else if (w <= 64) gemv1_tile<4, KS>(g, j, w);
  else gemv1_tile<8, KS>(g, j, w);
}

/// Batch 1, B row-major and large (see gemv_stream_elems), columns [j0, j1): B is read in
/// memory order, 8 rows at a time (8 streams the prefetchers follow), and the result row,
/// which stays in L1, is updated once per 8 rows. Column tiles (gemv1_rowmajor) would instead
/// read each row in several passes, a strided pattern that costs about 15 % when B comes from
/// L3 or memory. Each column is one FMA chain over k in order, as in gemv1_tile<NV, 1>, so the
/// two kernels give bitwise equal results and may be chosen per thread.
TORCHTPU_SIMD void gemv1_stream(const GemvArgs& g, int64_t j0, int64_t j1) {
  float* c = g.c;
  for (int64_t j = j0; j < j1; j += 16) _mm512_mask_storeu_ps(c + j, lane_mask(j1 - j), _mm512_setzero_ps());
  const int64_t sbk = g.sbk;
  int64_t p = 0;
  for (; p + 8 <= g.k; p += 8) {
    __m512 av[8];
#pragma GCC unroll 8
    for (int s = 0; s < 8; ++s) av[s] = _mm512_set1_ps(g.a[(p + s) * g.sak]);
    const float* r = g.b + p * sbk;
    for (int64_t j = j0; j < j1; j += 16) {
      const __mmask16 mk = lane_mask(j1 - j);
      __m512 acc = _mm512_maskz_loadu_ps(mk, c + j);
#pragma GCC unroll 8
      for (int s = 0; s < 8; ++s) acc = _mm512_fmadd_ps(av[s], _mm512_maskz_loadu_ps(mk, r + s * sbk + j), acc);
      _mm512_mask_storeu_ps(c + j, mk, acc);
    }
  }
  for (; p < g.k; ++p) {
    const __m512 av = _mm512_set1_ps(g.a[p * g.sak]);
    const float* r = g.b + p * sbk;
    for (int64_t j = j0; j < j1; j += 16) {
      const __mmask16 mk = lane_mask(j1 - j);
      _mm512_mask_storeu_ps(c + j, mk, _mm512_fmadd_ps(av, _mm512_maskz_loadu_ps(mk, r + j), _mm512_maskz_loadu_ps(mk, c + j)));
    }
  }
}

/// Batch M (2..4), B row-major, columns [j0, j1): tiles of 64 columns x M rows.
template <int M>
TORCHTPU_SIMD void gemvm_rowmajor(const GemvArgs& g, int64_t j0, int64_t j1) {
  for (int64_t j = j0; j < j1; j += 64) {
    const int64_t w = std::min<int64_t>(64, j1 - j);
    __mmask16 mk[4];
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) mk[q] = lane_mask(w - 16 * q > 0 ? w - 16 * q : 0);
    __m512 acc[M][4];
#pragma GCC unroll 4
    for (int i = 0; i < M; ++i)
#pragma GCC unroll 4
      for (int q = 0; q < 4; ++q) acc[i][q] = _mm512_setzero_ps();
    const float* bp = g.b + j;
    for (int64_t p = 0; p < g.k; ++p, bp += g.sbk) {
      __m512 bv[4];
#pragma GCC unroll 4
      for (int q = 0; q < 4; ++q) bv[q] = _mm512_maskz_loadu_ps(mk[q], bp + 16 * q);
#pragma GCC unroll 4
      for (int i = 0; i < M; ++i) {
        const __m512 av = _mm512_set1_ps(g.a[i * g.sam + p * g.sak]);
#pragma GCC unroll 4
        for (int q = 0; q < 4; ++q) acc[i][q] = _mm512_fmadd_ps(av, bv[q], acc[i][q]);
      }
    }
#pragma GCC unroll 4
    for (int i = 0; i < M; ++i)
#pragma GCC unroll 4
      for (int q = 0; q < 4; ++q) _mm512_mask_storeu_ps(g.c + i * g.ldc + j + 16 * q, mk[q], acc[i][q]);
  }
}

/// B column-major (B = Wᵀ with W row-major [n, k], as in `linear`), rows of A contiguous:
/// dot products of contiguous rows, 4 columns at a time, columns [j0, j1).
TORCHTPU_SIMD void gemv_colmajor(const GemvArgs& g, int64_t j0, int64_t j1) {
  for (int64_t i = 0; i < g.m; ++i) {
    const float* ar = g.a + i * g.sam;
    for (int64_t j = j0; j < j1; j += 4) {
      const int64_t w = std::min<int64_t>(4, j1 - j);
      __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
      for (int64_t p = 0; p < g.k; p += 16) {
        const __mmask16 mk = lane_mask(g.k - p);
        const __m512 av = _mm512_maskz_loadu_ps(mk, ar + p);
#pragma GCC unroll 4
        for (int q = 0; q < 4; ++q)
          if (q < w) acc[q] = _mm512_fmadd_ps(av, _mm512_maskz_loadu_ps(mk, g.b + (j + q) * g.sbn + p), acc[q]);
      }
      for (int q = 0; q < w; ++q) g.c[i * g.ldc + j + q] = hsum(VecF{acc[q]});
    }
  }
}

/// Columns [j0, j1) of a supported product (see gemv_supported), on this thread.
TORCHTPU_SIMD_KERNEL inline void gemv_columns(const GemvArgs& g, int64_t j0, int64_t j1) {
  if (g.k == 0) {
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = j0; j < j1; ++j) g.c[i * g.ldc + j] = 0.0f;
    return;
  }
  if (g.sbn != 1) return gemv_colmajor(g, j0, j1);
  switch (g.m) {
    case 1:
      if (gemv_k_chains(g.n) == 1 && g.k * (j1 - j0) >= gemv_stream_elems) return gemv1_stream(g, j0, j1);
      switch (gemv_k_chains(g.n)) {
        case 8: return gemv1_rowmajor<8>(g, j0, j1);
        case 4: return gemv1_rowmajor<4>(g, j0, j1);
        case 2: return gemv1_rowmajor<2>(g, j0, j1);
        default: return gemv1_rowmajor<1>(g, j0, j1);
      }
    case 2: return gemvm_rowmajor<2>(g, j0, j1);
    case 3: return gemvm_rowmajor<3>(g, j0, j1);
    default: return gemvm_rowmajor<4>(g, j0, j1);
  }
}

/// The small-batch product (requires gemv_supported(g) and the AVX-512 path): C = A · B, then
/// `epilogue(ctx, j0, j1)` on each finished range of columns (all m rows), on the thread that
/// computed it. Split over the pool by columns only when the product is large enough.
/// Results do not depend on the thread count.
inline void sgemv_small(const GemvArgs& g, void (*epilogue)(void*, int64_t, int64_t) = nullptr, void* ctx = nullptr) {
  if (g.n == 0) return;
  const int64_t nchunks = chunks_for(g.k * g.n * g.m, gemv_grain);
  if (nchunks <= 1) {  // the common batch-1 case: no pool, no closure
    gemv_columns(g, 0, g.n);
    if (epilogue) epilogue(ctx, 0, g.n);
    return;
  }
  parallel_chunks(g.n, nchunks, g.sbn == 1 ? 16 : 4, [&](int64_t j0, int64_t j1) {
    gemv_columns(g, j0, j1);
    if (epilogue) epilogue(ctx, j0, j1);
  });
}

#endif

}  // namespace torchtpu::detail
