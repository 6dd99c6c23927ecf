// torchtpu/fuse/gemv.hpp — the f32 small-batch matrix products: C[m, n] = A[m, k] · B[k, n] for
// m = 1..4 (batch-1 inference), with B streamed once and never packed, and an optional callback
// on each finished range of columns (the fused epilogue). Written once over the portable vector
// type (fuse/simd.hpp) and compiled for each vector target.
#pragma once
#include <algorithm>  // std::min
#include <cstdint>    // int64_t

#include "simd.hpp"     // FloatVec, vector_entry, hsum
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

#if TORCHTPU_HAS_VECTOR_PATH
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"  // vectors passed between target and generic code

/// Independent accumulator chains along k for a B row-major product with `n` columns on a
/// target of `lanes` lanes: a narrow tile has too few column vectors to hide the FMA latency,
/// so it splits the k loop into several chains summed at the end. Depends on n (and the
/// target) only, never on how columns are split over threads, so every column is summed in the
/// same order whatever the thread count.
inline int gemv_k_chains(int64_t n, int lanes) {
  const int64_t vecs = (n + lanes - 1) / lanes;
  return vecs <= 1 ? 8 : vecs <= 2 ? 4 : vecs <= 4 ? 2 : 1;
}

/// Elements of B one thread reads from which a batch-1 product streams B in memory order
/// (gemv1_stream) instead of by column tiles: 1 MiB, beyond which its share of B no longer
/// stays in a 2 MiB L2 next to the rest of a forward pass. Both kernels sum each column in
/// the same order, so the choice, which depends on the thread's share, never changes a result.
inline constexpr int64_t gemv_stream_elems = int64_t(1) << 18;

/// Columns of vector `q` of a tile `width` wide (0..lanes).
template <class V>
TORCHTPU_VEC int64_t gemv_lanes_of(int64_t width, int q) {
  return std::clamp<int64_t>(width - int64_t(V::lanes) * q, 0, V::lanes);
}

/// Batch 1, B row-major: c[0, NV vectors of columns] = a · b for one tile (`width` columns;
/// lanes past it are neither read nor written), with KS chains along k. `Full`: width is
/// NV · lanes (no partial loads).
template <class V, int NV, int KS, bool Full>
TORCHTPU_VEC void gemv1_tile(const GemvArgs& g, int64_t j, int64_t width) {
  constexpr int L = V::lanes;
  int64_t w[NV];
#pragma GCC unroll 16
  for (int q = 0; q < NV; ++q) w[q] = gemv_lanes_of<V>(width, q);
  V acc[KS][NV];
#pragma GCC unroll 16
  for (int s = 0; s < KS; ++s)
#pragma GCC unroll 16
    for (int q = 0; q < NV; ++q) acc[s][q] = V::zero();
  const float* ap = g.a;
  const float* bp = g.b + j;
  int64_t p = 0;
  for (; p + KS <= g.k; p += KS, ap += KS * g.sak, bp += KS * g.sbk) {
#pragma GCC unroll 16
    for (int s = 0; s < KS; ++s) {
      const V av = V::set1(ap[s * g.sak]);
#pragma GCC unroll 16
      for (int q = 0; q < NV; ++q) acc[s][q] = vfma(av, Full ? V::load(bp + s * g.sbk + L * q) : V::load_n(bp + s * g.sbk + L * q, w[q]), acc[s][q]);
    }
  }
  for (; p < g.k; ++p, ap += g.sak, bp += g.sbk) {
    const V av = V::set1(ap[0]);
#pragma GCC unroll 16
    for (int q = 0; q < NV; ++q) acc[0][q] = vfma(av, Full ? V::load(bp + L * q) : V::load_n(bp + L * q, w[q]), acc[0][q]);
  }
  // chains summed pairwise in a fixed order
  if constexpr (KS >= 8) {
#pragma GCC unroll 16
    for (int q = 0; q < NV; ++q)
      for (int s = 0; s < 4; ++s) acc[s][q] = acc[s][q] + acc[s + 4][q];
  }
  if constexpr (KS >= 4) {
#pragma GCC unroll 16
    for (int q = 0; q < NV; ++q)
      for (int s = 0; s < 2; ++s) acc[s][q] = acc[s][q] + acc[s + 2][q];
  }
  if constexpr (KS >= 2) {
#pragma GCC unroll 16
    for (int q = 0; q < NV; ++q) acc[0][q] = acc[0][q] + acc[1][q];
  }
#pragma GCC unroll 16
  for (int q = 0; q < NV; ++q)
    if (w[q] > 0) vstore(g.c + j + L * q, acc[0][q], w[q]);
}

/// Batch 1, B row-major, columns [j0, j1): tiles of 8 vectors (8 independent FMA chains), then
/// one narrower tile.
template <class V, int KS>
TORCHTPU_VEC void gemv1_rowmajor(const GemvArgs& g, int64_t j0, int64_t j1) {
  constexpr int L = V::lanes;
  int64_t j = j0;
  for (; j + 8 * L <= j1; j += 8 * L) gemv1_tile<V, 8, KS, true>(g, j, 8 * L);
  const int64_t w = j1 - j;
  if (w <= 0) return;
  if (w == L) gemv1_tile<V, 1, KS, true>(g, j, w);
  else if (w <= L) gemv1_tile<V, 1, KS, false>(g, j, w);
  else if (w == 2 * L) gemv1_tile<V, 2, KS, true>(g, j, w);
  else if (w <= 2 * L) gemv1_tile<V, 2, KS, false>(g, j, w);
  else if (w == 4 * L) gemv1_tile<V, 4, KS, true>(g, j, w);
  else if (w <= 4 * L) gemv1_tile<V, 4, KS, false>(g, j, w);
  else gemv1_tile<V, 8, KS, false>(g, j, w);
}

/// Batch 1, B row-major and large (see gemv_stream_elems), columns [j0, j1): B is read in
/// memory order, 8 rows at a time (8 streams the prefetchers follow), and the result row,
/// which stays in L1, is updated once per 8 rows. Column tiles (gemv1_rowmajor) would instead
/// read each row in several passes, a strided pattern that costs about 15 % when B comes from
/// L3 or memory. Each column is one FMA chain over k in order, as in gemv1_tile<V, NV, 1>, so
/// the two kernels give bitwise equal results and may be chosen per thread.
template <class V>
TORCHTPU_VEC void gemv1_stream(const GemvArgs& g, int64_t j0, int64_t j1) {
  constexpr int L = V::lanes;
  float* c = g.c;
  for (int64_t j = j0; j < j1; j += L) vstore(c + j, V::zero(), j1 - j);
  const int64_t sbk = g.sbk;
  int64_t p = 0;
  for (; p + 8 <= g.k; p += 8) {
    V av[8];
#pragma GCC unroll 8
    for (int s = 0; s < 8; ++s) av[s] = V::set1(g.a[(p + s) * g.sak]);
    const float* r = g.b + p * sbk;
    int64_t j = j0;
    for (; j + L <= j1; j += L) {
      V acc = V::load(c + j);
#pragma GCC unroll 8
      for (int s = 0; s < 8; ++s) acc = vfma(av[s], V::load(r + s * sbk + j), acc);
      vstore(c + j, acc, L);
    }
    if (j < j1) {
      const int64_t t = j1 - j;
      V acc = V::load_n(c + j, t);
#pragma GCC unroll 8
      for (int s = 0; s < 8; ++s) acc = vfma(av[s], V::load_n(r + s * sbk + j, t), acc);
      vstore(c + j, acc, t);
    }
  }
  for (; p < g.k; ++p) {
    const V av = V::set1(g.a[p * g.sak]);
    const float* r = g.b + p * sbk;
    for (int64_t j = j0; j < j1; j += L) {
      const int64_t t = j1 - j;
      vstore(c + j, vfma(av, V::load_n(r + j, t), V::load_n(c + j, t)), t);
    }
  }
}

/// Batch M (2..4), B row-major, columns [j0, j1): tiles of 4 vectors x M rows.
template <class V, int M>
TORCHTPU_VEC void gemvm_rowmajor(const GemvArgs& g, int64_t j0, int64_t j1) {
  constexpr int L = V::lanes;
  for (int64_t j = j0; j < j1; j += 4 * L) {
    const int64_t width = std::min<int64_t>(4 * L, j1 - j);
    const bool full = width == 4 * L;
    int64_t w[4];
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) w[q] = gemv_lanes_of<V>(width, q);
    V acc[M][4];
#pragma GCC unroll 4
    for (int i = 0; i < M; ++i)
#pragma GCC unroll 4
      for (int q = 0; q < 4; ++q) acc[i][q] = V::zero();
    const float* bp = g.b + j;
    for (int64_t p = 0; p < g.k; ++p, bp += g.sbk) {
      V bv[4];
#pragma GCC unroll 4
      for (int q = 0; q < 4; ++q) bv[q] = full ? V::load(bp + L * q) : V::load_n(bp + L * q, w[q]);
#pragma GCC unroll 4
      for (int i = 0; i < M; ++i) {
        const V av = V::set1(g.a[i * g.sam + p * g.sak]);
#pragma GCC unroll 4
        for (int q = 0; q < 4; ++q) acc[i][q] = vfma(av, bv[q], acc[i][q]);
      }
    }
#pragma GCC unroll 4
    for (int i = 0; i < M; ++i)
#pragma GCC unroll 4
      for (int q = 0; q < 4; ++q)
        if (w[q] > 0) vstore(g.c + i * g.ldc + j + L * q, acc[i][q], w[q]);
  }
}

/// B column-major (B = Wᵀ with W row-major [n, k], as in `linear`), rows of A contiguous:
/// dot products of contiguous rows, 4 columns at a time, columns [j0, j1).
template <class V>
TORCHTPU_VEC void gemv_colmajor(const GemvArgs& g, int64_t j0, int64_t j1) {
  constexpr int L = V::lanes;
  for (int64_t i = 0; i < g.m; ++i) {
    const float* ar = g.a + i * g.sam;
    for (int64_t j = j0; j < j1; j += 4) {
      const int64_t w = std::min<int64_t>(4, j1 - j);
      V acc[4] = {V::zero(), V::zero(), V::zero(), V::zero()};
      int64_t p = 0;
      for (; p + L <= g.k; p += L) {
        const V av = V::load(ar + p);
#pragma GCC unroll 4
        for (int q = 0; q < 4; ++q)
          if (q < w) acc[q] = vfma(av, V::load(g.b + (j + q) * g.sbn + p), acc[q]);
      }
      if (p < g.k) {
        const int64_t t = g.k - p;
        const V av = V::load_n(ar + p, t);
#pragma GCC unroll 4
        for (int q = 0; q < 4; ++q)
          if (q < w) acc[q] = vfma(av, V::load_n(g.b + (j + q) * g.sbn + p, t), acc[q]);
      }
      for (int q = 0; q < w; ++q) g.c[i * g.ldc + j + q] = hsum(acc[q]);
    }
  }
}

/// Columns [j0, j1) of a supported product (see gemv_supported), on this thread.
struct GemvColumnsBody {
  template <class V>
  TORCHTPU_VEC void operator()(const GemvArgs& g, int64_t j0, int64_t j1) const {
    if (g.k == 0) {
      for (int64_t i = 0; i < g.m; ++i)
        for (int64_t j = j0; j < j1; ++j) g.c[i * g.ldc + j] = 0.0f;
      return;
    }
    if (g.sbn != 1) return gemv_colmajor<V>(g, j0, j1);
    switch (g.m) {
      case 1: {
        const int ks = gemv_k_chains(g.n, V::lanes);
        if (ks == 1 && g.k * (j1 - j0) >= gemv_stream_elems) return gemv1_stream<V>(g, j0, j1);
        switch (ks) {
          case 8: return gemv1_rowmajor<V, 8>(g, j0, j1);
          case 4: return gemv1_rowmajor<V, 4>(g, j0, j1);
          case 2: return gemv1_rowmajor<V, 2>(g, j0, j1);
          default: return gemv1_rowmajor<V, 1>(g, j0, j1);
        }
      }
      case 2: return gemvm_rowmajor<V, 2>(g, j0, j1);
      case 3: return gemvm_rowmajor<V, 3>(g, j0, j1);
      default: return gemvm_rowmajor<V, 4>(g, j0, j1);
    }
  }
};
#pragma GCC diagnostic pop

/// `columns(g, j0, j1)`: columns [j0, j1) of a supported small-batch product on this thread.
using GemvColumnsFn = void (*)(const GemvArgs&, int64_t, int64_t);

/// The small-batch kernel compiled for instruction set `isa` (null for `scalar` or a set
/// this build has no code for).
inline GemvColumnsFn gemv_columns_kernel_for(CpuIsa isa) {
  switch (isa) {
#if TORCHTPU_HAS_AVX512_PATH
    case CpuIsa::avx512: return &TargetCall<HWY_AVX3>::template run<GemvColumnsBody, const GemvArgs&, int64_t, int64_t>;
#endif
#if TORCHTPU_HAS_AVX2_PATH
    case CpuIsa::avx2: return &TargetCall<HWY_AVX2>::template run<GemvColumnsBody, const GemvArgs&, int64_t, int64_t>;
#endif
#if TORCHTPU_HAS_NEON_PATH
    case CpuIsa::neon: return &TargetCall<HWY_NEON>::template run<GemvColumnsBody, const GemvArgs&, int64_t, int64_t>;
#endif
    default: return nullptr;
  }
}

/// The small-batch kernel of the engine's instruction set (null on the scalar path).
inline GemvColumnsFn gemv_columns_kernel() {
  static const GemvColumnsFn fn = gemv_columns_kernel_for(cpu_isa());
  return fn;
}

/// True when the engine runs the vector small-batch kernels (any instruction set but scalar).
inline bool cpu_has_vector_gemv() { return gemv_columns_kernel() != nullptr; }

/// The small-batch product (requires gemv_supported(g) and cpu_has_vector_gemv()): C = A · B,
/// then `epilogue(ctx, j0, j1)` on each finished range of columns (all m rows), on the thread
/// that computed it. Split over the pool by columns only when the product is large enough.
/// Results do not depend on the thread count.
inline void sgemv_small(const GemvArgs& g, void (*epilogue)(void*, int64_t, int64_t) = nullptr, void* ctx = nullptr) {
  if (g.n == 0) return;
  const auto columns = gemv_columns_kernel();
  const int64_t nchunks = chunks_for(g.k * g.n * g.m, gemv_grain);
  if (nchunks <= 1) {  // the common batch-1 case: no pool, no closure
    columns(g, 0, g.n);
    if (epilogue) epilogue(ctx, 0, g.n);
    return;
  }
  parallel_chunks(g.n, nchunks, g.sbn == 1 ? 16 : 4, [&](int64_t j0, int64_t j1) {
    columns(g, j0, j1);
    if (epilogue) epilogue(ctx, j0, j1);
  });
}

#else
inline bool cpu_has_vector_gemv() { return false; }
inline void sgemv_small(const GemvArgs&, void (*)(void*, int64_t, int64_t) = nullptr, void* = nullptr) {}
#endif

}  // namespace torchtpu::detail
