// torchtpu/fuse/gemm.hpp — the CPU matrix-product kernels: C[m, n] = A[m, k] · B[k, n] in the
// accumulation type, for any operand strides: a scalar packed loop for every type, and the
// vector f32 path (packed panels, an MR x NR register-blocked micro-kernel per vector target,
// threads, a per-block epilogue callback).
#pragma once
#include <algorithm>  // std::min
#include <atomic>     // std::atomic (ConstantPacks)
#include <bit>        // std::bit_cast
#include <compare>    // operator<=> (PackKey)
#include <cstdint>    // int64_t, uintptr_t
#include <map>        // std::map (ConstantPacks)
#include <memory>     // std::shared_ptr, std::unique_ptr
#include <mutex>      // std::mutex
#include <utility>    // std::integer_sequence
#include <vector>     // std::vector

#include "../core/dtype.hpp"  // convert, opmath_t
#include "gemv.hpp"             // GemvArgs, sgemv_small (batch 1–4)
#include "simd.hpp"             // FloatVec, TargetCall, cpu_isa, TORCHTPU_SIMD_KERNEL
#include "threads.hpp"          // parallel_chunks, chunks_for

namespace torchtpu::detail {

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


// ---- f32 GEMM: packed panels, an MR x NR register-blocked micro-kernel per vector target ----

namespace torchtpu::detail {

/// One f32 product C[m, n] = A[m, k] · B[k, n] (A, B strided, C row-major with leading dim
/// `ldc`), with a callback `epilogue(ctx, row_begin, row_end)` run on each block of finished
/// rows (from the thread that computed them, possibly in parallel with other blocks), and
/// before it `epilogue_block(ctx, row_begin, row_end, col_begin, col_end)` on each finished
/// block of rows and columns, while it is in cache (a wide product's rows are not: a 1x1
/// convolution's 96 x 12544 output is 4.6 MiB).
struct SgemmArgs {
  int64_t m = 0, n = 0, k = 0;
  const float* a = nullptr;
  int64_t sam = 0, sak = 0;
  const float* b = nullptr;
  int64_t sbk = 0, sbn = 0;
  float* c = nullptr;
  int64_t ldc = 0;
  void (*epilogue)(void* ctx, int64_t r0, int64_t r1) = nullptr;
  /// When set, called on every element of C once, in blocks [r0, r1) x [c0, c1) as they are
  /// finished (every k panel summed), possibly from several threads; each row's blocks before
  /// `epilogue` on it.
  void (*epilogue_block)(void* ctx, int64_t r0, int64_t r1, int64_t c0, int64_t c1) = nullptr;
  void* epilogue_ctx = nullptr;
  /// A and B hold bf16 bit patterns (uint16) instead of floats: converted exactly to f32
  /// while packing, so the product accumulates in f32 (the TPU's default numerics).
  bool bf16 = false;
  /// When set, B is computed while it is packed instead of read from `b` (a convolution's
  /// im2col: fuse/gemm.hpp never sees the unfolded matrix): `pack_b_from(b_ctx, p0, kb, j0,
  /// nr, dst)` writes rows [p0, p0 + kb) x columns [j0, j0 + nr) of B into dst[kb][nr], zero
  /// past n, for the kernels' panel width nr; called from several threads at once.
  void (*pack_b_from)(const void* ctx, int64_t p0, int64_t kb, int64_t j0, int64_t nr, float* dst) = nullptr;
  const void* b_ctx = nullptr;
  /// When set, A is computed while it is packed instead of read from `a`, one strip of the
  /// kernels' height mr at a time, in the same form as `pack_b_from`: `pack_a_from(a_ctx, p0,
  /// kb, i0, mr, dst)` writes A[i0 + r, p0 + kk] (r < mr, kk < kb) to dst[kk · mr + r], zero for
  /// rows past m. A convolution computed as outᵀ = im2colᵀ · Wᵀ passes its im2col panel writer.
  void (*pack_a_from)(const void* ctx, int64_t p0, int64_t kb, int64_t i0, int64_t mr, float* dst) = nullptr;
  const void* a_ctx = nullptr;
  /// When set, B packed whole by `sgemm_pack_b_whole` (with the kernels this call runs):
  /// a constant operand its owner packed once (a convolution's transformed weight); `b` and
  /// `pack_b_from` are then not read.
  const float* b_packed = nullptr;
  float a_at(int64_t off) const {
    if (!bf16) return a[off];
    return std::bit_cast<float>(uint32_t(reinterpret_cast<const uint16_t*>(a)[off]) << 16);
  }
};

/// Blocking of the packed f32 GEMM (Goto & van de Geijn, "Anatomy of High-Performance Matrix
/// Multiplication", ACM TOMS 2008; BLIS's loop order): an MR x NR register tile; an MR x KC
/// strip of packed A stays in L1 while the KC x NC slab of packed B streams from L2, and the
/// MC x NC block of C stays in L2 across the k panels. Measured on Cooper Lake (48 KiB L1d,
/// 2 MiB L2; GFLOP/s vs OpenBLAS, 1 thread, AVX-512): KC 384 beats 256 at n = 2048 (fewer C
/// reloads); NC 1024 / MC 120 beats NC 512 / MC 240 (0.995x vs 0.94x OpenBLAS at n = 2048,
/// 1.02x vs 1.00x at n = 1024).
inline constexpr int64_t sgemm_kc = 384, sgemm_mc = 120, sgemm_nc = 1024;

/// The blocking of `sgemm_packed` (defaults: `sgemm_kc`, `sgemm_nc`, `sgemm_mc`).
struct SgemmBlocking {
  int64_t kc = sgemm_kc, nc = sgemm_nc, mc = sgemm_mc;
};

/// The kernels of one vector target that `sgemm_packed` drives (each compiled for that
/// target; the driver, its blocking and its threads are target-independent):
/// - `pack_b(g, p0, kb, j0, dst)`: rows [p0, p0 + kb) x columns [j0, j0 + nr) of B into
///   dst[kb][nr] (zero past n; bf16 converted exactly);
/// - `pack_a(g, i0, mb, p0, kb, dst)`: rows [i0, i0 + mb) x columns [p0, p0 + kb) of A into
///   strips of mr rows, each [kb][mr] (zero past mb);
/// - `block(kb, ap, bk, mb, jp0, jp1, c, ldc, n, accumulate)`: the mb rows of C at `c`
///   (columns of panels [jp0, jp1), clipped to n) = (accumulate ? C : 0) + packed A `ap` ·
///   packed B panels (panel jp at bk + jp * kb * nr).
struct SgemmKernels {
  int mr = 0, nr = 0;
  /// The blocking `sgemm_f32` uses with these kernels.
  SgemmBlocking blocking;
  void (*pack_b)(const SgemmArgs&, int64_t, int64_t, int64_t, float*) = nullptr;
  void (*pack_a)(const SgemmArgs&, int64_t, int64_t, int64_t, int64_t, float*) = nullptr;
  void (*block)(int64_t, const float*, const float*, int64_t, int64_t, int64_t, float*, int64_t, int64_t, bool) = nullptr;
  const char* name = "";
};

/// Packs A as `SgemmKernels::pack_a` describes, for an MR-row tile (plain loops: A is packed
/// once per row block, O(m k) against the product's O(m n k)).
template <int MR>
void sgemm_pack_a_strips(const SgemmArgs& g, int64_t i0, int64_t mb, int64_t p0, int64_t kb, float* dst) {
  for (int64_t ir = 0; ir < mb; ir += MR, dst += MR * kb) {
    const int64_t mr = std::min<int64_t>(MR, mb - ir);
    for (int64_t i = 0; i < MR; ++i) {
      float* d = dst + i;
      if (i >= mr) {
        for (int64_t p = 0; p < kb; ++p) d[p * MR] = 0.0f;
      } else if (g.bf16) {
        const int64_t base = (i0 + ir + i) * g.sam + p0 * g.sak;
        for (int64_t p = 0; p < kb; ++p) d[p * MR] = g.a_at(base + p * g.sak);
      } else {
        const float* src = g.a + (i0 + ir + i) * g.sam + p0 * g.sak;
        for (int64_t p = 0; p < kb; ++p) d[p * MR] = src[p * g.sak];
      }
    }
  }
}

#if TORCHTPU_HAS_VECTOR_PATH
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"  // vectors passed between target and generic code

/// The register tile of the portable micro-kernel on vector type V: MR rows of A times NV
/// vectors of B (NR = NV · lanes columns), MR · NV accumulators. AVX-512: 12 x 32 (24 of 32
/// registers); AVX2: 6 x 16 (12 of 16; 2 more for B, 1 for A); NEON: 12 x 8 (24 of 32; 2 for
/// B, 3 for A, loaded four values at a time for `fmla` by element). NEON's 12 x 8 measured
/// 0.398 instructions per FMA at n = 128 under qemu against 0.428 for 8 x 12, whose 12-wide
/// panels also waste columns on power-of-two n (bench/AARCH64_COUNTS.md).
template <class V>
struct SgemmTile {
  static constexpr int lanes = V::lanes;
  static constexpr int mr = lanes >= 16 ? 12 : lanes == 8 ? 6 : 12;
  static constexpr int nv = 2;
  static constexpr int nr = nv * lanes;
};

/// acc[I][q] += bv[q] · (lane I % 4 of ag[I / 4]) for rows I of a tile (V::has_fma_lane).
template <class V, int NV, int... I>
TORCHTPU_VEC void sgemm_fma_rows_lane(V (*acc)[NV], const V* bv, const V* ag, std::integer_sequence<int, I...>) {
  (
      [&] {
#pragma GCC unroll 4
        for (int q = 0; q < NV; ++q) acc[I][q] = V::template fma_lane<I % 4>(bv[q], ag[I / 4], acc[I][q]);
      }(),
      ...);
}

/// C tile (mr x nr, mr <= Rows <= MR, nr <= NR) = (accumulate ? C : 0) + Apanel · Bpanel,
/// Apanel [kc][MR] and Bpanel [kc][NR] packed and zero-padded; only `Rows` rows are computed
/// (a short last strip uses a smaller instantiation). Each element is one FMA chain over k in
/// order, then C added once: the result does not depend on the tile or the strip.
template <class V, int MR, int NV, int Rows>
TORCHTPU_VEC void sgemm_micro(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int mr, int nr,
                              bool accumulate) {
  constexpr int L = V::lanes, NR = NV * L;
  constexpr bool lane_fma = V::has_fma_lane && L == 4 && MR % 4 == 0;
  V acc[Rows][NV];
#pragma GCC unroll 12
  for (int i = 0; i < Rows; ++i)
#pragma GCC unroll 4
    for (int q = 0; q < NV; ++q) acc[i][q] = V::zero();
  // k unrolled by 4 (by the compiler: measured 0.92x of a hand-unrolled loop's speed on AVX2
  // otherwise); B prefetched 32 k steps ahead, one prefetch per k step (the B panel streams
  // from L2; near its end this fetches the start of the next panel, which follows it in
  // memory). AVX-512, n = 2048, 1 thread: 0.90x OpenBLAS without prefetch, 0.96-0.99x with.
#pragma GCC unroll 4
  for (int64_t p = 0; p < kc; ++p, a += MR, b += NR) {
    V bv[NV];
#pragma GCC unroll 4
    for (int q = 0; q < NV; ++q) bv[q] = V::load(b + L * q);
    hwy::Prefetch(b + NR * 32);
    if constexpr (lane_fma) {  // A four values per load, one fmla by element each
      V ag[(Rows + 3) / 4];
#pragma GCC unroll 4
      for (int t = 0; t < (Rows + 3) / 4; ++t) ag[t] = V::load(a + 4 * t);
      sgemm_fma_rows_lane<V, NV>(acc, bv, ag, std::make_integer_sequence<int, Rows>{});
    } else {
#pragma GCC unroll 12
      for (int i = 0; i < Rows; ++i) {
        const V ai = V::set1(a[i]);
#pragma GCC unroll 4
        for (int q = 0; q < NV; ++q) acc[i][q] = vfma(ai, bv[q], acc[i][q]);
      }
    }
  }
  if (mr == Rows && nr == NR) {
#pragma GCC unroll 12
    for (int i = 0; i < Rows; ++i) {
      float* ci = c + i * ldc;
#pragma GCC unroll 4
      for (int q = 0; q < NV; ++q) {
        if (accumulate) acc[i][q] = acc[i][q] + V::load(ci + L * q);
        vstore(ci + L * q, acc[i][q], L);
      }
    }
    return;
  }
#pragma GCC unroll 12
  for (int i = 0; i < Rows; ++i) {
    if (i >= mr) break;
    float* ci = c + i * ldc;
#pragma GCC unroll 4
    for (int q = 0; q < NV; ++q) {
      const int nq = nr - L * q;
      if (nq <= 0) break;
      if (accumulate) acc[i][q] = acc[i][q] + V::load_n(ci + L * q, nq);
      vstore(ci + L * q, acc[i][q], nq);
    }
  }
}

/// `SgemmKernels::pack_b` for vector type V (NR = SgemmTile<V>::nr).
template <class V>
TORCHTPU_VEC void sgemm_pack_b_vec(const SgemmArgs& g, int64_t p0, int64_t kb, int64_t j0, float* dst) {
  constexpr int L = V::lanes, NV = SgemmTile<V>::nv, NR = SgemmTile<V>::nr;
  const int64_t nr = std::min<int64_t>(NR, g.n - j0);
  int64_t nq[NV];
  for (int q = 0; q < NV; ++q) nq[q] = std::clamp<int64_t>(nr - L * q, 0, L);
  if (g.bf16) {
    const uint16_t* hb = reinterpret_cast<const uint16_t*>(g.b) + p0 * g.sbk + j0 * g.sbn;
    for (int64_t p = 0; p < kb; ++p, hb += g.sbk, dst += NR) {
      if (g.sbn == 1) {
#pragma GCC unroll 4
        for (int q = 0; q < NV; ++q) vstore(dst + L * q, nq[q] > 0 ? V::load_bf16(hb + L * q, nq[q]) : V::zero(), L);
      } else {
        int64_t j = 0;
        for (; j < nr; ++j) dst[j] = std::bit_cast<float>(uint32_t(hb[j * g.sbn]) << 16);
        for (; j < NR; ++j) dst[j] = 0.0f;
      }
    }
    return;
  }
  const float* src = g.b + p0 * g.sbk + j0 * g.sbn;
  if (g.sbn == 1) {
    if (nr == NR) {
      for (int64_t p = 0; p < kb; ++p, src += g.sbk, dst += NR)
#pragma GCC unroll 4
        for (int q = 0; q < NV; ++q) vstore(dst + L * q, V::load(src + L * q), L);
    } else {
      for (int64_t p = 0; p < kb; ++p, src += g.sbk, dst += NR)
#pragma GCC unroll 4
        for (int q = 0; q < NV; ++q) vstore(dst + L * q, nq[q] > 0 ? V::load_n(src + L * q, nq[q]) : V::zero(), L);
    }
  } else {
    for (int64_t p = 0; p < kb; ++p, src += g.sbk, dst += NR) {
      int64_t j = 0;
      for (; j < nr; ++j) dst[j] = src[j * g.sbn];
      for (; j < NR; ++j) dst[j] = 0.0f;
    }
  }
}

/// `SgemmKernels::block` for vector type V.
template <class V>
TORCHTPU_VEC void sgemm_block_vec(int64_t kb, const float* ap, const float* bk, int64_t mb, int64_t jp0, int64_t jp1,
                                  float* c, int64_t ldc, int64_t n, bool accumulate) {
  using Tile = SgemmTile<V>;
  constexpr int MR = Tile::mr, NV = Tile::nv, NR = Tile::nr;
  constexpr int half = MR / 2, quarter = MR / 4 > 0 ? MR / 4 : 1;
  for (int64_t ir = 0; ir < mb; ir += MR) {
    const int mr = int(std::min<int64_t>(MR, mb - ir));
    float* crow = c + ir * ldc;
    const float* apanel = ap + ir * kb;
    for (int64_t jp = jp0; jp < jp1; ++jp) {
      const int nr = int(std::min<int64_t>(NR, n - jp * NR));
      const float* bpanel = bk + jp * kb * NR;
      if (mr > half) sgemm_micro<V, MR, NV, MR>(kb, apanel, bpanel, crow + jp * NR, ldc, mr, nr, accumulate);
      else if (mr > quarter) sgemm_micro<V, MR, NV, half>(kb, apanel, bpanel, crow + jp * NR, ldc, mr, nr, accumulate);
      else sgemm_micro<V, MR, NV, quarter>(kb, apanel, bpanel, crow + jp * NR, ldc, mr, nr, accumulate);
    }
  }
}

struct SgemmPackBBody {
  template <class V>
  TORCHTPU_VEC void operator()(const SgemmArgs& g, int64_t p0, int64_t kb, int64_t j0, float* dst) const {
    sgemm_pack_b_vec<V>(g, p0, kb, j0, dst);
  }
};
struct SgemmBlockBody {
  template <class V>
  TORCHTPU_VEC void operator()(int64_t kb, const float* ap, const float* bk, int64_t mb, int64_t jp0, int64_t jp1,
                               float* c, int64_t ldc, int64_t n, bool accumulate) const {
    sgemm_block_vec<V>(kb, ap, bk, mb, jp0, jp1, c, ldc, n, accumulate);
  }
};

/// The portable kernels compiled for Highway target `Target` (HWY_AVX3, HWY_AVX2, HWY_NEON).
template <int64_t Target>
SgemmKernels sgemm_portable_kernels(const char* name) {
  using V = FloatVec<Target>;
  SgemmKernels k;
  k.mr = SgemmTile<V>::mr;
  k.nr = SgemmTile<V>::nr;
  // AVX2 (6 x 16): KC 512, NC 512, MC 96 — a 1 MiB B slab and a 192 KiB C block, inside a
  // 2 MiB L2 with the A block (the defaults' 1.5 MiB slab + 480 KiB block are not). Measured on
  // this machine (Cooper Lake, TORCHTPU_CPU_ISA=avx2, 1 thread, interleaved with OpenBLAS
  // Haswell): 0.95x -> 0.99x OpenBLAS at n = 1024, 0.93x -> 0.97x at n = 2048.
  if constexpr (V::lanes == 8) k.blocking = SgemmBlocking{512, 512, 96};
  k.pack_b = &TargetCall<Target>::template run<SgemmPackBBody, const SgemmArgs&, int64_t, int64_t, int64_t, float*>;
  k.pack_a = &sgemm_pack_a_strips<SgemmTile<V>::mr>;
  k.block = &TargetCall<Target>::template run<SgemmBlockBody, int64_t, const float*, const float*, int64_t, int64_t,
                                                 int64_t, float*, int64_t, int64_t, bool>;
  k.name = name;
  return k;
}
#pragma GCC diagnostic pop
#endif  // TORCHTPU_HAS_VECTOR_PATH

#if TORCHTPU_HAS_AVX512_PATH
// The hand-written AVX-512 kernels (12 x 32 tile, A packed by 16 x 16 register transposes).
// bench/simd_choice.cpp compares them with the portable kernels compiled for AVX-512.


/// C tile (mr x nr, mr <= Rows, nr <= 32) = (accumulate ? C : 0) + Apanel · Bpanel, where
/// Apanel is [kc][12] and Bpanel [kc][32] (packed, zero-padded). Rows (12, 8 or 4) is the
/// number of rows computed: the last strip of a block (m not a multiple of 12) uses fewer.
/// `pf_lines` 64-byte lines from `pf` on (another panel, read later) are prefetched into L2,
/// one per k step from the start.
template <int Rows = 12>
TORCHTPU_SIMD_KERNEL inline void sgemm_micro_12x32(int64_t kc, const float* a, const float* b, float* c,
                                                   int64_t ldc, int mr, int nr, bool accumulate,
                                                   const float* pf = nullptr, int64_t pf_lines = 0) {
  __m512 acc[12][2];
#pragma GCC unroll 12
  for (int i = 0; i < 12; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  if (accumulate) {  // the C tile arrives while the k loop runs
    for (int i = 0; i < mr; ++i) {
      _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + 16), _MM_HINT_T0);
    }
  }
  // k unrolled by 4; one prefetch per k step (a 64 B line of B) 32 k steps ahead, so the
  // B panel, which streams from L2, arrives in L1 in time (near the end of the panel this
  // fetches the start of the next one, which follows it in memory). Measured at n = 2048,
  // 1 thread: 0.90x OpenBLAS without prefetch, 0.93x at 16 steps, 0.96-0.99x at 32-64.
  int64_t p = 0;
  for (; p + 4 <= kc; p += 4) {
#pragma GCC unroll 4
    for (int u = 0; u < 4; ++u) {
      const __m512 b0 = _mm512_loadu_ps(b + 32 * u), b1 = _mm512_loadu_ps(b + 32 * u + 16);
      _mm_prefetch(reinterpret_cast<const char*>(b + 32 * 32 + 16 * u), _MM_HINT_T0);
      if (pf_lines > 0) {
        _mm_prefetch(reinterpret_cast<const char*>(pf), _MM_HINT_T2);
        pf = reinterpret_cast<const float*>(reinterpret_cast<uintptr_t>(pf) + 64);
        --pf_lines;
      }
#pragma GCC unroll 12
      for (int i = 0; i < Rows; ++i) {
        const __m512 ai = _mm512_set1_ps(a[12 * u + i]);
        acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
        acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
      }
    }
    a += 48;
    b += 128;
  }
  for (; p < kc; ++p) {
    const __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
#pragma GCC unroll 12
    for (int i = 0; i < Rows; ++i) {
      const __m512 ai = _mm512_set1_ps(a[i]);
      acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
    }
    a += 12;
    b += 32;
  }
  if (mr == Rows && nr == 32) {
#pragma GCC unroll 12
    for (int i = 0; i < Rows; ++i) {
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
  for (int i = 0; i < Rows; ++i) {
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

/// Writes the transpose of 16 rows r[0..15] of 16 floats: column c (c < cols) as 16 floats at
/// dst + c * ld (by 128-bit lanes, as `sgemm_transpose_12x16` below).
TORCHTPU_SIMD_KERNEL inline void sgemm_transpose_16x16(const __m512 (&r)[16], float* dst, int64_t ld, int cols) {
  __m512 out[16];
  transpose_16x16(r, out);
#pragma GCC unroll 16
  for (int c = 0; c < 16; ++c)
    if (c < cols) _mm512_storeu_ps(dst + c * ld, out[c]);
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
  } else if (g.sbk == 1) {
    // columns contiguous in k (x · Wᵀ, a linear layer's weight): 16 x 16 transposes, 16
    // columns by 16 k steps each (the scalar gather below took 3x the product at batch 17)
    for (int h = 0; h < 2; ++h) {
      const int64_t nh = std::min<int64_t>(16, nr - 16 * h);  // columns of this half (<= 0: zero)
      for (int64_t p = 0; p < kb; p += 16) {
        const int cols = int(std::min<int64_t>(16, kb - p));
        const __mmask16 mk = lane_mask(cols);
        __m512 r[16];
#pragma GCC unroll 16
        for (int i = 0; i < 16; ++i) r[i] = i < nh ? _mm512_maskz_loadu_ps(mk, src + (16 * h + i) * g.sbn + p) : _mm512_setzero_ps();
        sgemm_transpose_16x16(r, dst + p * 32 + 16 * h, 32, cols);
      }
    }
  } else {
    for (int64_t p = 0; p < kb; ++p, src += g.sbk, dst += 32) {
      int64_t j = 0;
      for (; j < nr; ++j) dst[j] = src[j * g.sbn];
      for (; j < 32; ++j) dst[j] = 0.0f;
    }
  }
}

/// Writes 16 columns of a 12-row strip (rows r[0..11], 16 consecutive k each) as 16 packed
/// k-steps of 12 floats at dst (only the first `cols` of them): a 16x16 transpose (rows 12-15
/// zero) by 128-bit lanes. (Masked forms with a full mask: see `simd.hpp` on GCC 12.)
TORCHTPU_SIMD_KERNEL inline void sgemm_transpose_12x16(const __m512 (&r)[12], float* dst, int cols) {
  __m512 u[3][4];
#pragma GCC unroll 3
  for (int g = 0; g < 3; ++g) {
    const __m512 t0 = _mm512_maskz_unpacklo_ps(0xffff, r[4 * g], r[4 * g + 1]), t1 = _mm512_maskz_unpackhi_ps(0xffff, r[4 * g], r[4 * g + 1]);
    const __m512 t2 = _mm512_maskz_unpacklo_ps(0xffff, r[4 * g + 2], r[4 * g + 3]), t3 = _mm512_maskz_unpackhi_ps(0xffff, r[4 * g + 2], r[4 * g + 3]);
    // u[g][j], 128-bit lane L: column 4L + j of rows 4g .. 4g + 3
    u[g][0] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(0xff, _mm512_castps_pd(t0), _mm512_castps_pd(t2)));
    u[g][1] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(0xff, _mm512_castps_pd(t0), _mm512_castps_pd(t2)));
    u[g][2] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(0xff, _mm512_castps_pd(t1), _mm512_castps_pd(t3)));
    u[g][3] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(0xff, _mm512_castps_pd(t1), _mm512_castps_pd(t3)));
  }
  const __m512 zero = _mm512_setzero_ps();
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    const __m512 s01lo = _mm512_maskz_shuffle_f32x4(0xffff, u[0][j], u[1][j], 0x44), s01hi = _mm512_maskz_shuffle_f32x4(0xffff, u[0][j], u[1][j], 0xee);
    const __m512 s2lo = _mm512_maskz_shuffle_f32x4(0xffff, u[2][j], zero, 0x44), s2hi = _mm512_maskz_shuffle_f32x4(0xffff, u[2][j], zero, 0xee);
    const __m512 out[4] = {_mm512_maskz_shuffle_f32x4(0xffff, s01lo, s2lo, 0x88), _mm512_maskz_shuffle_f32x4(0xffff, s01lo, s2lo, 0xdd),
                           _mm512_maskz_shuffle_f32x4(0xffff, s01hi, s2hi, 0x88), _mm512_maskz_shuffle_f32x4(0xffff, s01hi, s2hi, 0xdd)};
#pragma GCC unroll 4
    for (int l = 0; l < 4; ++l)  // out[l] is column 4l + j
      if (4 * l + j < cols) _mm512_mask_storeu_ps(dst + (4 * l + j) * 12, 0x0fff, out[l]);
  }
}

/// Packs rows [i0, i0 + mb) x cols [p0, p0 + kb) of A into panels [kb][12] (zero beyond m).
TORCHTPU_SIMD_KERNEL inline void sgemm_pack_a(const SgemmArgs& g, int64_t i0, int64_t mb, int64_t p0, int64_t kb,
                                              float* dst) {
  for (int64_t ir = 0; ir < mb; ir += 12, dst += 12 * kb) {
    const int64_t mr = std::min<int64_t>(12, mb - ir);
    if (!g.bf16 && g.sak == 1) {  // rows contiguous in k: transpose 12 x 16 blocks
      const float* src[12];
      for (int64_t i = 0; i < 12; ++i) src[i] = g.a + (i0 + ir + std::min(i, mr - 1)) * g.sam + p0;
      for (int64_t p = 0; p < kb; p += 16) {
        const int cols = int(std::min<int64_t>(16, kb - p));
        const __mmask16 mk = lane_mask(cols);
        __m512 r[12];
#pragma GCC unroll 12
        for (int i = 0; i < 12; ++i) r[i] = i < mr ? _mm512_maskz_loadu_ps(mk, src[i] + p) : _mm512_setzero_ps();
        sgemm_transpose_12x16(r, dst + p * 12, cols);
      }
      continue;
    }
    if (!g.bf16 && g.sam == 1) {  // columns contiguous in m: one masked copy per k step
      const __mmask16 mk = lane_mask(mr);
      const float* src = g.a + (i0 + ir) + p0 * g.sak;
      for (int64_t p = 0; p < kb; ++p) _mm512_mask_storeu_ps(dst + p * 12, 0x0fff, _mm512_maskz_loadu_ps(mk, src + p * g.sak));
      continue;
    }
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

/// `SgemmKernels::block` on AVX-512: the hand-written 12 x 32 micro-kernel over each strip and
/// panel (12, 8 or 4 rows computed for a short last strip): strip by strip, each over the
/// panels; panel by panel when the block has at most 5 strips.
TORCHTPU_SIMD_KERNEL inline void sgemm_block_avx512(int64_t kb, const float* ap, const float* bk, int64_t mb, int64_t jp0,
                                                    int64_t jp1, float* c, int64_t ldc, int64_t n, bool accumulate) {
  auto micro = [&](int64_t ir, int64_t jp, const float* pf = nullptr, int64_t pfl = 0) {
    const int mr = int(std::min<int64_t>(12, mb - ir));
    const int nr = int(std::min<int64_t>(32, n - jp * 32));
    float* ct = c + ir * ldc + jp * 32;
    const float* apanel = ap + ir * kb;
    if (mr > 8) sgemm_micro_12x32<12>(kb, apanel, bk + jp * kb * 32, ct, ldc, mr, nr, accumulate, pf, pfl);
    else if (mr > 4) sgemm_micro_12x32<8>(kb, apanel, bk + jp * kb * 32, ct, ldc, mr, nr, accumulate, pf, pfl);
    else if (mr > 2) sgemm_micro_12x32<4>(kb, apanel, bk + jp * kb * 32, ct, ldc, mr, nr, accumulate, pf, pfl);
    else if (mr > 1) sgemm_micro_12x32<2>(kb, apanel, bk + jp * kb * 32, ct, ldc, mr, nr, accumulate, pf, pfl);
    else sgemm_micro_12x32<1>(kb, apanel, bk + jp * kb * 32, ct, ldc, mr, nr, accumulate, pf, pfl);
  };
  // Up to 5 strips (a 7x7 convolution's 49 positions as rows, a short sequence's tokens): each
  // B panel, fetched once from memory (a model's packed weights do not stay in cache between
  // forward passes), serves every strip while in L1/L2, instead of every strip sweeping all
  // panels with the first sweep waiting on memory. resnet18's 512->512 3x3 layers at 7x7,
  // 1 thread: 2.70 -> 2.50 ms per layer in the model; 2.46 -> 2.30 ms with 8 weight sets
  // cycled in a harness (1.92 -> 1.89 ms with one, cache-warm). The strips of a panel share
  // the prefetch of the next one into L2 (it follows in memory; past the block's last panel,
  // the next k panel's first), so it streams from memory while this one is computed instead
  // of on the first strip's demand: the same harness 2.35-2.69 -> 2.04-2.20 ms per layer.
  if (mb <= 60 && jp1 - jp0 > 1) {
    const int64_t strips = (mb + 11) / 12, lines = kb * 2, per = (lines + strips - 1) / strips;
    for (int64_t jp = jp0; jp < jp1; ++jp) {
      // (addresses computed as integers: past the last panel they point outside the buffer)
      const uintptr_t next = reinterpret_cast<uintptr_t>(bk) + uintptr_t((jp + 1) * kb * 32) * sizeof(float);
      for (int64_t ir = 0, s = 0; ir < mb; ir += 12, ++s)
        micro(ir, jp, reinterpret_cast<const float*>(next + uintptr_t(s * per) * 64),
              std::max<int64_t>(0, std::min(per, lines - s * per)));
    }
    return;
  }
  for (int64_t ir = 0; ir < mb; ir += 12)
    for (int64_t jp = jp0; jp < jp1; ++jp) micro(ir, jp);
}

/// The hand-written AVX-512 kernels as a kernel table.
inline SgemmKernels sgemm_avx512_kernels() {
  SgemmKernels k;
  k.mr = 12;
  k.nr = 32;
  k.pack_b = &sgemm_pack_b;
  k.pack_a = &sgemm_pack_a;
  k.block = &sgemm_block_avx512;
  k.name = "avx512, hand-written 12x32";
  return k;
}
#endif  // TORCHTPU_HAS_AVX512_PATH

/// The f32 GEMM kernels for instruction set `isa` (all members null for `scalar` or a set
/// this build has no code for). AVX-512 uses the hand-written kernels (`portable_avx512`:
/// the portable ones, for comparison).
inline SgemmKernels sgemm_kernels_for(CpuIsa isa, [[maybe_unused]] bool portable_avx512 = false) {
  switch (isa) {
#if TORCHTPU_HAS_AVX512_PATH
    case CpuIsa::avx512:
      return portable_avx512 ? sgemm_portable_kernels<HWY_AVX3>("avx512, portable 12x32") : sgemm_avx512_kernels();
#endif
#if TORCHTPU_HAS_AVX2_PATH
    case CpuIsa::avx2: return sgemm_portable_kernels<HWY_AVX2>("avx2, portable 6x16");
#endif
#if TORCHTPU_HAS_NEON_PATH
    case CpuIsa::neon: return sgemm_portable_kernels<HWY_NEON>("neon, portable 12x8");
#endif
    default: return {};
  }
}

/// The f32 GEMM kernels of the engine's instruction set (`cpu_isa()`), chosen once.
inline const SgemmKernels& sgemm_kernels() {
  static const SgemmKernels k = sgemm_kernels_for(cpu_isa());
  return k;
}

/// True when the engine runs a vector f32 GEMM (any instruction set but scalar).
inline bool cpu_has_vector_gemm() { return sgemm_kernels().block != nullptr; }

/// Multiply-adds the micro-kernels of `kern` issue for an m x n x 1 product, padding included
/// (an estimate): columns in whole panels of nr; rows in strips of mr, a short last strip
/// counted as mr, mr / 2 or mr / 4 rows as the portable kernels' `block` computes it (the
/// AVX-512 one computes 12, 8 or 4). Compared for C = A·B and Cᵀ = Bᵀ·Aᵀ to pick the
/// orientation that wastes less of each tile.
inline int64_t sgemm_tile_work(int64_t m, int64_t n, const SgemmKernels& kern) {
  if (kern.mr <= 0 || kern.nr <= 0) return m * n;  // no vector kernels (scalar): no tiles
  const int64_t mr = kern.mr, nr = kern.nr, rem = m % mr;
  const int64_t half = mr / 2, quarter = std::max<int64_t>(1, mr / 4);
  const int64_t rows = m / mr * mr + (rem == 0 ? 0 : rem > half ? mr : rem > quarter ? half : quarter);
  return rows * ((n + nr - 1) / nr * nr);
}

/// What a packed operand depends on: where it is read, its shape and strides, the blocking and
/// tile of the kernels packing it, and which pack function (A or B) made it.
struct PackKey {
  uintptr_t p = 0;
  int64_t d0 = 0, d1 = 0, s0 = 0, s1 = 0, kc = 0, tile = 0;
  bool bf16 = false;
  uintptr_t fn = 0;
  auto operator<=>(const PackKey&) const = default;
};

/// Read-only memory whose GEMM operands the engine keeps packed after their first use: a loaded
/// model's weights (jit::Graph pins its constant tensors' storage when it is finalized and
/// unpins it when its last copy goes), so each forward pass packs only its activations.
/// Memory: one packed copy of every weight used as a GEMM operand (about the weight's size).
/// The memory must not change while pinned; a pin keeps it alive. Thread-safe (one mutex; a
/// first use packs under it).
class ConstantPacks {
 public:
  static ConstantPacks& instance() {
    static ConstantPacks* c = new ConstantPacks;  // never destroyed: used by static destructors
    return *c;
  }
  /// Pins [p, p + bytes), kept alive by `keep`; pins of one address are counted.
  void pin(const void* p, size_t bytes, std::shared_ptr<void> keep) {
    if (!p || !bytes) return;
    std::lock_guard<std::mutex> lock(mu_);
    Range& r = ranges_[uintptr_t(p)];
    r.bytes = std::max(r.bytes, bytes);
    r.keep = std::move(keep);
    ++r.pins;
    count_.store(ranges_.size(), std::memory_order_release);
  }
  /// Undoes one `pin(p, ...)`; the last one drops the packed operands read from the range.
  void unpin(const void* p) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = ranges_.find(uintptr_t(p));
    if (it != ranges_.end() && --it->second.pins <= 0) ranges_.erase(it);
    count_.store(ranges_.size(), std::memory_order_release);
  }
  /// The packed operand `key` (`floats` floats) when key.p lies in a pinned range, packed by
  /// `pack(dst)` on its first use; null otherwise.
  template <class Pack>
  const float* get(const PackKey& key, size_t floats, Pack&& pack) {
    // nothing pinned (a program with no loaded model): no lock on the GEMM's path
    if (count_.load(std::memory_order_acquire) == 0) return nullptr;
    std::lock_guard<std::mutex> lock(mu_);
    if (ranges_.empty()) return nullptr;
    auto it = ranges_.upper_bound(key.p);
    if (it == ranges_.begin()) return nullptr;
    --it;
    if (key.p >= it->first + it->second.bytes) return nullptr;
    auto& slot = it->second.packs[key];
    if (!slot) {
      std::unique_ptr<float[]> buf(new float[floats]);
      pack(buf.get());
      slot = std::move(buf);
    }
    return slot.get();
  }
  /// Pinned ranges (for tests).
  size_t pinned() {
    std::lock_guard<std::mutex> lock(mu_);
    return ranges_.size();
  }

 private:
  struct Range {
    size_t bytes = 0;
    int pins = 0;
    std::shared_ptr<void> keep;
    std::map<PackKey, std::unique_ptr<float[]>> packs;
  };
  std::mutex mu_;
  std::map<uintptr_t, Range> ranges_;
  std::atomic<size_t> count_{0};  // ranges_.size(), read without the lock
};

/// `sgemm_packed` for a B computed while it is packed (`pack_b_from`, a convolution's im2col)
/// that would not fit in L2 packed whole: the columns are split into blocks of at most 512
/// (whole panels), at least two per thread; per block and k panel, a thread packs the kc x 512
/// slab into its own buffer (L2-resident, 768 KiB) and runs every row of A over it, so B is
/// packed once and never leaves L2 (packed whole, a 3x3 convolution's B at 56x56 is 7 MiB,
/// written to and read back from memory). Each element is summed in the same order as in
/// `sgemm_packed` (k panels in order, the same micro-kernel), so results match it exactly.
/// `apre`: A packed whole ([k-panel][mp][kb], see `sgemm_packed`), or null to pack A's blocks
/// per slab. `epilogue` runs on blocks of rows once every column is done, `epilogue_block` on
/// each column block's rows as it is finished.
inline void sgemm_streamed_b(const SgemmArgs& g, SgemmBlocking bl, const SgemmKernels& kern, int64_t threads,
                             const float* apre, int64_t mp) {
  const int64_t mr = kern.mr, nr = kern.nr, kc = bl.kc;
  const int64_t mc = std::max<int64_t>(mr, bl.mc / mr * mr);
  const int64_t npanels = (g.n + nr - 1) / nr;
  const int64_t per_block = std::max<int64_t>(1, std::min<int64_t>(512 / nr, (npanels + 2 * threads - 1) / (2 * threads)));
  const int64_t nblocks = (npanels + per_block - 1) / per_block;
  parallel_chunks(nblocks, threads <= 1 ? 1 : std::min(nblocks, 2 * threads), 1, [&](int64_t b0, int64_t b1) {
    float* slab = workspace<float>(size_t(kc * per_block * nr), 2);
    float* apack = apre ? nullptr : workspace<float>(size_t(mc * kc), 3);
    for (int64_t blk = b0; blk < b1; ++blk) {
      const int64_t jp0 = blk * per_block, jp1 = std::min(npanels, jp0 + per_block), j0 = jp0 * nr;
      for (int64_t p0 = 0; p0 < g.k; p0 += kc) {
        const int64_t kb = std::min(kc, g.k - p0);
        for (int64_t jp = jp0; jp < jp1; ++jp) g.pack_b_from(g.b_ctx, p0, kb, jp * nr, nr, slab + (jp - jp0) * kb * nr);
        for (int64_t i0 = 0; i0 < g.m; i0 += mc) {
          const int64_t mb = std::min(mc, g.m - i0);
          const float* ap = apre ? apre + p0 * mp + i0 * kb : apack;
          if (!apre && g.pack_a_from)
            for (int64_t ir = 0; ir < mb; ir += mr) g.pack_a_from(g.a_ctx, p0, kb, i0 + ir, mr, apack + ir * kb);
          else if (!apre)
            kern.pack_a(g, i0, mb, p0, kb, apack);
          kern.block(kb, ap, slab, mb, 0, jp1 - jp0, g.c + i0 * g.ldc + j0, g.ldc, g.n - j0, p0 > 0);
        }
      }
      if (g.epilogue_block)  // this column block's rows, while the block is in cache
        for (int64_t i0 = 0; i0 < g.m; i0 += mc)
          g.epilogue_block(g.epilogue_ctx, i0, std::min(g.m, i0 + mc), j0, std::min(g.n, jp1 * nr));
    }
  });
  if (g.epilogue)
    parallel_chunks(g.m, threads <= 1 ? 1 : std::min<int64_t>(threads, (g.m + mr - 1) / mr), mr,
                    [&](int64_t r0, int64_t r1) {
                      for (int64_t i0 = r0; i0 < r1; i0 += mc) g.epilogue(g.epilogue_ctx, i0, std::min(r1, i0 + mc));
                    });
}

/// The packed path of `sgemm_f32` (any m, n, k >= 1) with kernels `kern`. B is packed once,
/// whole ([k-panel][n-panel][kc][nr], shared by the threads); each chunk of rows (two per
/// thread), per MC-row block and NC-column block, runs the k panels with the MC x NC block of C
/// resident in L2: for every mr-row strip of A (packed [kc][mr], L1-resident), it sweeps the
/// NC / nr packed B panels (the kc x NC slab streams from L2). `epilogue` runs on each block
/// of rows as soon as its last column block is done, `epilogue_block` on each MC x NC block.
inline void sgemm_packed(const SgemmArgs& g, SgemmBlocking bl, const SgemmKernels& kern) {
  const int64_t mr = kern.mr, nr = kern.nr;
  const int64_t kc = bl.kc, nc = std::max<int64_t>(nr, bl.nc / nr * nr), mc = std::max<int64_t>(mr, bl.mc / mr * mr);
  const int64_t npanels = (g.n + nr - 1) / nr;
  const int64_t kpanels = (g.k + kc - 1) / kc;
  const float* bpack = nullptr;
  // Threads worth using, then row chunks: up to 2 per thread, a multiple of the thread count
  // (measured at n = 2048 on 2 threads, AVX-512: 1.00x OpenBLAS, vs 0.95x with 1 and 0.97x
  // with 4 per thread). Chunks are claimed dynamically, so a worker that wakes late still takes
  // a share; chunk i covers fixed rows, and every element is summed in the same order whatever
  // rows a chunk holds, so results never depend on the thread count.
  const int64_t threads = chunks_for(g.m * g.n * g.k, int64_t(1) << 21);
  const int64_t row_chunks =
      threads <= 1 ? 1 : std::min(2 * threads, (std::max(threads, (g.m + mc - 1) / mc) + threads - 1) / threads * threads);
  const int64_t pack_threads = std::min(threads, chunks_for(g.k * g.n, int64_t(1) << 15));
  auto pack_b_all = [&](float* out) {
    parallel_chunks(kpanels * npanels, pack_threads <= 1 ? 1 : std::min(kpanels * npanels, 4 * pack_threads), 1,
                    [&](int64_t u0, int64_t u1) {
                      for (int64_t u = u0; u < u1; ++u) {
                        const int64_t p0 = (u / npanels) * kc, jp = u % npanels;
                        const int64_t kb = std::min(kc, g.k - p0);
                        float* dst = out + p0 * npanels * nr + jp * kb * nr;
                        if (g.pack_b_from) g.pack_b_from(g.b_ctx, p0, kb, jp * nr, nr, dst);
                        else kern.pack_b(g, p0, kb, jp * nr, dst);
                      }
                    });
  };
  const size_t bfloats = size_t(g.k * npanels * nr);
  if (g.b_packed)
    bpack = g.b_packed;
  else if (!g.pack_b_from)  // a model's weight: packed once ([k-panel][n-panel][kb][nr], as below)
    bpack = ConstantPacks::instance().get(PackKey{uintptr_t(g.b), g.k, g.n, g.sbk, g.sbn, kc, nr, g.bf16,
                                                  uintptr_t(kern.pack_b)},
                                          bfloats, pack_b_all);
  // A from pinned memory: packed once, whole ([k-panel][strip of mr rows over all of m][kb][mr],
  // so a block from row i0 of k panel p0 starts at p0 · mp + i0 · kb, as the blocks below read)
  const int64_t mp = (g.m + mr - 1) / mr * mr;
  const float* apre =
      g.pack_a_from ? nullptr
                    : ConstantPacks::instance().get(
                          PackKey{uintptr_t(g.a), g.m, g.k, g.sam, g.sak, kc, mr, g.bf16, uintptr_t(kern.pack_a)},
                          size_t(mp * g.k), [&](float* out) {
                            for (int64_t p0 = 0; p0 < g.k; p0 += kc)
                              kern.pack_a(g, 0, g.m, p0, std::min(kc, g.k - p0), out + p0 * mp);
                          });
  if (!bpack && g.pack_b_from && bfloats > (size_t(1) << 18) && g.n > 2 * nr) {
    sgemm_streamed_b(g, bl, kern, threads, apre, mp);
    return;
  }
  if (!bpack) {
    float* w = workspace<float>(bfloats, 2);
    pack_b_all(w);
    bpack = w;
  }
  parallel_chunks(g.m, row_chunks, mr, [&](int64_t r0, int64_t r1) {
    // A block [k-panel][strip][kb][mr]: packed for the first column block, reused after
    // row blocks of equal size (whole strips), at most MC: no short block re-reading all of B
    const int64_t nblocks = (r1 - r0 + mc - 1) / mc;
    const int64_t mcap = ((r1 - r0 + nblocks - 1) / nblocks + mr - 1) / mr * mr;
    float* apack = apre ? nullptr : workspace<float>(size_t(mcap * g.k), 3);
    for (int64_t i0 = r0; i0 < r1; i0 += mcap) {
      const int64_t mb = std::min(mcap, r1 - i0);
      const int64_t mbp = (mb + mr - 1) / mr * mr;
      for (int64_t j0 = 0; j0 < g.n; j0 += nc) {
        const int64_t jp0 = j0 / nr, jp1 = std::min(npanels, (j0 + nc) / nr);
        for (int64_t p0 = 0; p0 < g.k; p0 += kc) {
          const int64_t kb = std::min(kc, g.k - p0);
          const float* ap;
          if (apre) {
            ap = apre + p0 * mp + i0 * kb;
          } else {
            float* dst = apack + p0 * mbp;
            if (j0 == 0 && g.pack_a_from) {
              for (int64_t ir = 0; ir < mb; ir += mr) g.pack_a_from(g.a_ctx, p0, kb, i0 + ir, mr, dst + ir * kb);
            } else if (j0 == 0) {
              kern.pack_a(g, i0, mb, p0, kb, dst);
            }
            ap = dst;
          }
          kern.block(kb, ap, bpack + p0 * npanels * nr, mb, jp0, jp1, g.c + i0 * g.ldc, g.ldc, g.n, p0 > 0);
        }
        if (g.epilogue_block) g.epilogue_block(g.epilogue_ctx, i0, i0 + mb, j0, std::min(g.n, jp1 * nr));
      }
      if (g.epilogue) g.epilogue(g.epilogue_ctx, i0, i0 + mb);
    }
  });
}

/// Floats of B ([k x n]) packed whole for kernels `kern` (`sgemm_pack_b_whole`).
inline size_t sgemm_packed_b_floats(int64_t k, int64_t n, const SgemmKernels& kern) {
  return size_t(k * ((n + kern.nr - 1) / kern.nr * kern.nr));
}

/// B of `g` (read from `b`) packed whole into `out` (`sgemm_packed_b_floats` floats) as
/// `sgemm_packed` packs it with kernels `kern` ([k-panel][n-panel][kb][nr]), for
/// `SgemmArgs::b_packed`.
inline void sgemm_pack_b_whole(const SgemmArgs& g, const SgemmKernels& kern, float* out) {
  const int64_t nr = kern.nr, kc = kern.blocking.kc, npanels = (g.n + nr - 1) / nr;
  for (int64_t p0 = 0; p0 < g.k; p0 += kc) {
    const int64_t kb = std::min(kc, g.k - p0);
    for (int64_t jp = 0; jp < npanels; ++jp) kern.pack_b(g, p0, kb, jp * nr, out + p0 * npanels * nr + jp * kb * nr);
  }
}

/// `g`'s epilogue over all of C at once (the paths that finish C in one piece).
inline void sgemm_epilogue_all(const SgemmArgs& g) {
  if (g.epilogue_block) g.epilogue_block(g.epilogue_ctx, 0, g.m, 0, g.n);
  if (g.epilogue) g.epilogue(g.epilogue_ctx, 0, g.m);
}

/// The f32 GEMM driver (see SgemmArgs), with the kernels of the engine's instruction set
/// (requires `cpu_has_vector_gemm()`, or `kern` given). Deterministic for a given thread count.
inline void sgemm_f32(const SgemmArgs& g, const SgemmKernels& kern = sgemm_kernels()) {
  if (g.m == 0 || g.n == 0) return;
  if (g.k == 0) {
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) g.c[i * g.ldc + j] = 0.0f;
    sgemm_epilogue_all(g);
    return;
  }
  // Batch 1–4: no packing, B streamed once (fuse/gemv.hpp).
  if (!g.bf16 && !g.pack_b_from && !g.pack_a_from && !g.b_packed) {
    const GemvArgs v{g.m, g.n, g.k, g.a, g.sam, g.sak, g.b, g.sbk, g.sbn, g.c, g.ldc};
    if (gemv_supported(v) && cpu_has_vector_gemv()) {
      sgemv_small(v);
      sgemm_epilogue_all(g);
      return;
    }
  }
  sgemm_packed(g, kern.blocking, kern);
}

}  // namespace torchtpu::detail
