// torchtpu/fuse/vec_reduce.hpp — vectorized reductions and softmax on the CPU: reducing the
// inner axis (row sums), reducing leading axes (column sums, accumulated a row at a time) and
// row softmax, each streaming its fused elementwise producer and split over the thread pool.
#pragma once
#include <cmath>    // std::log
#include <cstdint>  // int64_t
#include <limits>   // std::numeric_limits

#include "plan.hpp"      // LoopPlan
#include "vec_eval.hpp"  // VecEval, unflatten_row, parallel_chunks
#include "vecmath.hpp"   // vexp

namespace torchtpu::detail {

#if TORCHTPU_HAS_AVX512_PATH
template <class Op>
concept simd_reduction = requires(VecF v) { Op::simd_combine(v, v); };
#else
template <class Op>
concept simd_reduction = false;
#endif

/// True when reduce_into's vector paths apply: a float accumulator, an op with a vector
/// combine, and a vectorizable producer.
template <class Op, class E, class T>
constexpr bool vec_reducible() {
  if constexpr (!simd_reduction<Op> || !vec_storage<T>) return false;
  else return std::same_as<typename Op::template acc<typename E::value_type>, float> && vectorizable<E>();
}

/// Elements per thread below which a reduction stays on one thread.
inline constexpr int64_t reduce_grain = 65536;

/// Elements of a row summed into fresh accumulators before the block's partial joins the
/// pairwise tree (`VecCascade`): 2048 = 32 vector steps of 4 accumulators, so each lane adds
/// at most 32 values in sequence and the tree above is log2(len / 2048) deep.
inline constexpr int64_t reduce_block = 2048;
/// Input rows accumulated in sequence by the column reduction before pairwise combining.
inline constexpr int64_t reduce_block_rows = 32;
/// Elements the scalar path adds in sequence before pairwise combining: 32, as many as
/// one lane of the vector row path adds per block.
inline constexpr int64_t reduce_scalar_block = 32;

#if TORCHTPU_HAS_AVX512_PATH

/// Row reductions read this many rows side by side: more streams from memory in flight at
/// once (the loop is bound by L3/memory latency, not arithmetic); W6 row sums 5 % faster.
inline constexpr int reduce_rows_together = 4;

/// The lanes of a row's combined partial `v` reduced by a fixed lane tree (lane l with
/// l + 8, l + 4, l + 2, l + 1), finalized and converted. The tree keeps the combine in
/// vector registers (a lane-by-lane scalar chain costs about 1 % of W6 row sums).
template <class Op, class T>
TORCHTPU_SIMD T finish_row(VecF v, int64_t count) {
  v = Op::simd_combine(v, VecF{_mm512_maskz_shuffle_f32x4(0xffff, v.v, v.v, _MM_SHUFFLE(1, 0, 3, 2))});
  v = Op::simd_combine(v, VecF{_mm512_maskz_shuffle_f32x4(0xffff, v.v, v.v, _MM_SHUFFLE(2, 3, 0, 1))});
  v = Op::simd_combine(v, VecF{_mm512_maskz_permute_ps(0xffff, v.v, _MM_SHUFFLE(1, 0, 3, 2))});
  v = Op::simd_combine(v, VecF{_mm512_maskz_permute_ps(0xffff, v.v, _MM_SHUFFLE(2, 3, 0, 1))});
  return convert<T>(Op::finalize(_mm512_cvtss_f32(v.v), count));
}

/// Pairwise combination of block partials in a fixed tree (a binary counter: partials of
/// equal weight merge as soon as both exist), so a reduction of n blocks rounds O(log n)
/// times per element instead of O(n) (Higham, "The accuracy of floating point summation",
/// SIAM J. Sci. Comput. 14(4), 1993, pairwise summation). The tree depends only on the
/// number of blocks, never on the thread split.
struct VecCascade {
  /// Enough for 2^48 blocks (more elements than any memory holds).
  static constexpr int levels = 48;
  VecF level[levels];
  int64_t n = 0;  ///< blocks pushed; bit l set = level[l] holds the partial of 2^l blocks
  template <class Op>
  TORCHTPU_SIMD void push(VecF v) {
    int l = 0;
    for (int64_t m = n; m & 1; m >>= 1, ++l) v = Op::simd_combine(level[l], v);
    level[l] = v;
    ++n;
  }
  /// The combined partials, earliest blocks first (`id` when none was pushed).
  template <class Op>
  TORCHTPU_SIMD VecF finish(VecF id) const {
    if (n == 0) return id;
    int l = 63 - __builtin_clzll(uint64_t(n));
    VecF r = level[l];
    while (--l >= 0)
      if ((n >> l) & 1) r = Op::simd_combine(r, level[l]);
    return r;
  }
};

/// Elements [b0, b1) of the `rows` rows `ev` is set to, reduced into one partial per row
/// (`part`): 4 vector accumulators per row, each fed every 4th vector (the tail into the
/// first), combined in pairs. `b0` is a multiple of 64. Out of line: inlined into the block
/// loop, GCC 12 kept fewer accumulators in registers (measured slower).
template <class Op, class E>
[[gnu::noinline]] TORCHTPU_SIMD_KERNEL void vec_reduce_row_block(const VecEval<E>* ev, int rows, int64_t b0, int64_t b1,
                                                                 VecF* part) {
  constexpr int K = reduce_rows_together;
  const VecF id = vset1(Op::template init<float>());
  VecF a[K][4];
#pragma GCC unroll 16
  for (int k = 0; k < K * 4; ++k) a[k / 4][k % 4] = id;
  int64_t i = b0;
  if (rows == K) {
    for (; i + 64 <= b1; i += 64) {
#pragma GCC unroll 16
      for (int k = 0; k < K * 4; ++k) a[k / 4][k % 4] = Op::simd_combine(a[k / 4][k % 4], ev[k / 4].load(i + 16 * (k % 4), 16));
    }
  } else {
    for (int k = 0; k < rows; ++k) {
      for (int64_t j = b0; j + 64 <= b1; j += 64) {
#pragma GCC unroll 4
        for (int q = 0; q < 4; ++q) a[k][q] = Op::simd_combine(a[k][q], ev[k].load(j + 16 * q, 16));
      }
    }
    i = b0 + ((b1 - b0) & ~int64_t(63));
  }
  for (; i < b1; i += 16) {
    const int64_t n = b1 - i < 16 ? b1 - i : 16;
    for (int k = 0; k < rows; ++k) a[k][0] = Op::simd_combine(a[k][0], select(lane_mask(n), ev[k].load(i, n), id));
  }
  for (int k = 0; k < rows; ++k)
    part[k] = Op::simd_combine(Op::simd_combine(a[k][0], a[k][1]), Op::simd_combine(a[k][2], a[k][3]));
}

/// Outputs [o0, o1) where output o reduces row o of plan `p` (the reduced axis is the plan's
/// last dim, `len` long): each block of `reduce_block` elements reduced by
/// `vec_reduce_row_block`, the blocks' partials combined pairwise (`VecCascade`), the lanes by
/// `finish_row`. Rows go `reduce_rows_together` at a time; each row's order is the same
/// either way, so results do not depend on the thread split.
template <class Op, class T, class E>
TORCHTPU_SIMD_KERNEL void vec_reduce_rows(const VecEval<E>& base, const LoopPlan& p, const int64_t* dst_st, T* out,
                                          int64_t count, int64_t o0, int64_t o1) {
  constexpr int K = reduce_rows_together;
  const int64_t len = p.sizes[p.rank - 1];
  const VecF id = vset1(Op::template init<float>());
  static_assert(K == 4, "one copy of base below per row read together");
  static_assert(reduce_block % 64 == 0, "blocks hold whole 64-element steps");
  VecEval<E> ev[K] = {base, base, base, base};
  int64_t off[K];
  int64_t idx[max_rank] = {};
  for (int64_t o = o0; o < o1; o += K) {
    const int rows = o1 - o < K ? int(o1 - o) : K;
    for (int k = 0; k < rows; ++k) {
      unflatten_row(p, o + k, idx);
      off[k] = 0;
      for (int j = 0; j + 1 < p.rank; ++j) off[k] += idx[j] * dst_st[j];
      ev[k].set_row(idx);
    }
    VecF part[K];
    if (len <= reduce_block) {
      vec_reduce_row_block<Op, E>(ev, rows, 0, len, part);
    } else {
      VecCascade tree[K];
      for (int64_t b0 = 0; b0 < len; b0 += reduce_block) {
        vec_reduce_row_block<Op, E>(ev, rows, b0, len - b0 < reduce_block ? len : b0 + reduce_block, part);
        for (int k = 0; k < rows; ++k) tree[k].template push<Op>(part[k]);
      }
      for (int k = 0; k < rows; ++k) part[k] = tree[k].template finish<Op>(id);
    }
    for (int k = 0; k < rows; ++k) out[off[k]] = finish_row<Op, T>(part[k], count);
  }
}

/// Rows [r0, r1) of the column block at `c` (`nv` vectors, `cols` columns) reduced in
/// sequence into `acc` (one block of rows of `vec_reduce_col_rows`). Out of line: inside the
/// recursive function GCC 12 spilled all 16 accumulators to the stack (W6 column sums 40 %
/// slower).
template <class Op, class E>
[[gnu::noinline]] TORCHTPU_SIMD_KERNEL void vec_reduce_col_block(VecEval<E>& ev, int64_t r0, int64_t r1, int64_t c,
                                                                 int nv, int64_t cols, VecF* acc) {
  constexpr int w = 16;  // vectors per block
  const VecF id = vset1(Op::template init<float>());
  // local accumulators (stores through `acc` may alias the input: __m512 is a may_alias type)
  VecF la[w];
#pragma GCC unroll 16
  for (int v = 0; v < w; ++v) la[v] = id;
  int64_t idx[max_rank] = {};
  for (int64_t r = r0; r < r1; ++r) {
    idx[0] = r;
    ev.set_row(idx);
    if (nv == w && cols == 16 * w) {
#pragma GCC unroll 16
      for (int v = 0; v < w; ++v) la[v] = Op::simd_combine(la[v], ev.load(c + 16 * v, 16));
    } else {
      for (int v = 0; v < nv; ++v) {
        const int64_t n = cols - 16 * v < 16 ? cols - 16 * v : 16;
        la[v] = Op::simd_combine(la[v], ev.load(c + 16 * v, n));
      }
    }
  }
#pragma GCC unroll 16
  for (int v = 0; v < w; ++v) acc[v] = la[v];
}

/// Rows [r0, r1) of the column block at `c` reduced into `acc`: `reduce_block_rows` rows in
/// sequence (`vec_reduce_col_block`), longer ranges split in two at a multiple of it and
/// combined (pairwise over blocks of rows; the split depends only on the row count).
template <class Op, class E>
TORCHTPU_SIMD_KERNEL void vec_reduce_col_rows(VecEval<E>& ev, int64_t r0, int64_t r1, int64_t c, int nv, int64_t cols,
                                              VecF* acc) {
  constexpr int w = 16;  // vectors per block
  if (r1 - r0 <= reduce_block_rows) {
    vec_reduce_col_block<Op, E>(ev, r0, r1, c, nv, cols, acc);
    return;
  }
  const int64_t blocks = (r1 - r0 + reduce_block_rows - 1) / reduce_block_rows;
  const int64_t mid = r0 + (blocks / 2) * reduce_block_rows;
  VecF rest[w];
  vec_reduce_col_rows<Op, E>(ev, r0, mid, c, nv, cols, acc);
  vec_reduce_col_rows<Op, E>(ev, mid, r1, c, nv, cols, rest);
  for (int v = 0; v < nv; ++v) acc[v] = Op::simd_combine(acc[v], rest[v]);
}

/// Columns [c0, c1) of out[c] = reduce over r of x[r, c] (plan `p` = [rows, cols], rows
/// reduced, out contiguous): 256 columns at a time, input rows in blocks of
/// `reduce_block_rows` combined pairwise (`vec_reduce_col_rows`).
template <class Op, class T, class E>
TORCHTPU_SIMD_KERNEL void vec_reduce_cols(VecEval<E>& ev, int64_t rows, T* out, int64_t count, int64_t c0,
                                          int64_t c1) {
  constexpr int w = 16;  // vectors per block
  for (int64_t c = c0; c < c1; c += 16 * w) {
    const int64_t cols = c1 - c < 16 * w ? c1 - c : 16 * w;
    const int nv = int((cols + 15) / 16);
    VecF acc[w];
    vec_reduce_col_rows<Op, E>(ev, 0, rows, c, nv, cols, acc);
    for (int v = 0; v < nv; ++v) {
      alignas(64) float lanes[16];
      vstore(lanes, acc[v], 16);
      const int64_t n = cols - 16 * v < 16 ? cols - 16 * v : 16;
      for (int64_t l = 0; l < n; ++l) out[c + 16 * v + l] = convert<T>(Op::finalize(lanes[l], count));
    }
  }
}

/// Maximum of lanes [0, len) of the row `ev` is set to, NaN lanes skipped (`vmaxps` returns
/// its second operand when the first is NaN): a NaN still reaches every output through the
/// sum. 4 accumulators, so the loop runs at load speed rather than at `vmaxps` latency.
template <class E>
TORCHTPU_SIMD float softmax_row_max(const VecEval<E>& ev, int64_t full, int64_t tail) {
  const __m512 ninf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  __m512 m0 = ninf, m1 = ninf, m2 = ninf, m3 = ninf;
  int64_t i = 0;
  for (; i + 64 <= full; i += 64) {
    m0 = _mm512_maskz_max_ps(0xffff, ev.load(i, 16).v, m0);
    m1 = _mm512_maskz_max_ps(0xffff, ev.load(i + 16, 16).v, m1);
    m2 = _mm512_maskz_max_ps(0xffff, ev.load(i + 32, 16).v, m2);
    m3 = _mm512_maskz_max_ps(0xffff, ev.load(i + 48, 16).v, m3);
  }
  for (; i < full; i += 16) m0 = _mm512_maskz_max_ps(0xffff, ev.load(i, 16).v, m0);
  if (tail) m1 = _mm512_maskz_max_ps(0xffff, _mm512_mask_mov_ps(ninf, lane_mask(tail), ev.load(full, tail).v), m1);
  return hmax(VecF{_mm512_maskz_max_ps(0xffff, _mm512_maskz_max_ps(0xffff, m0, m1), _mm512_maskz_max_ps(0xffff, m2, m3))});
}

/// 16 lanes of softmax pass 2 at `i`: t = x - max, s += exp(t), exp(t) (log_softmax: t) stored.
template <bool Log, class T, class E>
TORCHTPU_SIMD void softmax_step(const VecEval<E>& ev, T* d, int64_t inner, int64_t i, VecF mv, VecF& s) {
  const VecF t = ev.load(i, 16) - mv;
  const VecF e = vexp(t);
  s = s + e;
  store_row(d, inner, i, Log ? t : e, 16);
}

/// Softmax rows [r0, r1) of plan `p` (softmax axis = last plan dim) into the dest rows `out`
/// reads, two passes over each input row: pass 1 the maximum, pass 2 t = x - max written and
/// exp(t) summed (softmax writes exp(t)), then a pass over the written row while it is in L1
/// (softmax: times 1/sum; log_softmax: t - log(sum)). Pass 1 of row r + 1 runs inside pass 2
/// of row r (`next` reads it), so its loads from memory overlap the exp arithmetic instead of
/// stalling alone; the next dest row is prefetched for writing the same way. Each row is
/// summed in a fixed order (even vectors, odd vectors and tail, then `hsum`), whatever the
/// split over threads.
template <bool Log, class T, class E>
TORCHTPU_SIMD_KERNEL void vec_softmax_rows(VecEval<E>& ev, VecEval<E>& next, StridedReader<T>& out,
                                           const LoopPlan& p, int64_t r0, int64_t r1) {
  const int64_t len = p.sizes[p.rank - 1];
  const int64_t full = len & ~int64_t(15), tail = len - full;
  const int64_t inner = out.inner;
  const __m512 ninf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  int64_t idx[max_rank] = {};
  unflatten_row(p, r0, idx);
  ev.set_row(idx);
  float mx = softmax_row_max(ev, full, tail);
  for (int64_t row = r0; row < r1; ++row) {
    unflatten_row(p, row, idx);
    ev.set_row(idx);
    out.set_row(idx);
    T* d = const_cast<T*>(out.row);
    const bool has_next = row + 1 < r1;
    const char* dn = nullptr;  // the next dest row, when contiguous (for prefetching)
    if (has_next) {
      unflatten_row(p, row + 1, idx);
      next.set_row(idx);
      out.set_row(idx);
      if (inner == 1) dn = reinterpret_cast<const char*>(out.row);
    }
    const VecF mv = vset1(mx);
    VecF s0 = vzero(), s1 = vzero();
    __m512 m0 = ninf, m1 = ninf;  // pass 1 of the next row
    int64_t i = 0;
    if (has_next) {
      for (; i + 32 <= full; i += 32) {
        if (dn) {
          _mm_prefetch(dn + 4 * i, _MM_HINT_ET0);
          _mm_prefetch(dn + 4 * i + 64, _MM_HINT_ET0);
        }
        m0 = _mm512_maskz_max_ps(0xffff, next.load(i, 16).v, m0);
        m1 = _mm512_maskz_max_ps(0xffff, next.load(i + 16, 16).v, m1);
        softmax_step<Log>(ev, d, inner, i, mv, s0);
        softmax_step<Log>(ev, d, inner, i + 16, mv, s1);
      }
      for (int64_t j = i; j < full; j += 16) m0 = _mm512_maskz_max_ps(0xffff, next.load(j, 16).v, m0);
      if (tail) m1 = _mm512_maskz_max_ps(0xffff, _mm512_mask_mov_ps(ninf, lane_mask(tail), next.load(full, tail).v), m1);
    } else {
      for (; i + 32 <= full; i += 32) {
        softmax_step<Log>(ev, d, inner, i, mv, s0);
        softmax_step<Log>(ev, d, inner, i + 16, mv, s1);
      }
    }
    if (i < full) softmax_step<Log>(ev, d, inner, i, mv, s0);
    if (tail) {
      const VecF t = ev.load(full, tail) - mv;
      const VecF e = vexp(t);
      s1 = s1 + select(lane_mask(tail), e, vzero());
      store_row(d, inner, full, Log ? t : e, tail);
    }
    const float sum = hsum(s0 + s1);
    // log_softmax: (x - max) - log(sum), in that order: max + log(sum) would round away up to
    // half an ulp of max (1.5e-5 for inputs near 1000), which torch's order does not lose.
    const VecF k = vset1(Log ? std::log(sum) : 1.0f / sum);
    for (i = 0; i < full; i += 16) {
      const VecF v = load_row(d, inner, i, 16);
      store_row(d, inner, i, Log ? v - k : v * k, 16);
    }
    if (tail) {
      const VecF v = load_row(d, inner, full, tail);
      store_row(d, inner, full, Log ? v - k : v * k, tail);
    }
    mx = hmax(VecF{_mm512_maskz_max_ps(0xffff, m0, m1)});
  }
}

#endif

}  // namespace torchtpu::detail
