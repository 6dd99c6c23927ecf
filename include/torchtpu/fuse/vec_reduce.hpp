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

#if TORCHTPU_HAS_VECTOR_PATH
template <class Op>
concept simd_reduction = requires(ProbeFloatVec v) { Op::simd_combine(v, v); };
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
/// pairwise tree (`VecCascade`): 2048 = 32 steps of 4 accumulators of 16 lanes (AVX-512; 64
/// steps of 8 lanes on AVX2, 128 of 4 on NEON), so each lane adds at most 32 values (64, 128)
/// in sequence and the tree above is log2(len / 2048) deep.
inline constexpr int64_t reduce_block = 2048;
/// Input rows accumulated in sequence by the column reduction before pairwise combining.
inline constexpr int64_t reduce_block_rows = 32;
/// Elements the scalar path adds in sequence before pairwise combining: 32, as many as
/// one lane of the AVX-512 row path adds per block.
inline constexpr int64_t reduce_scalar_block = 32;

#if TORCHTPU_HAS_VECTOR_PATH
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"  // vectors passed between target and generic code

// Every function below is generic over the vector type `V` (`FloatVec` of one target) and
// always-inline: the kernels run inside the `*Body` function objects at the end, entered
// through `vector_entry` (`TargetCall<Target>::run`, compiled for the target, `flatten`).
// Each value added into an accumulator goes through `vopaque`, so the compiler cannot fuse
// the producer's last product into the add in one copy of a loop and not in another (the
// same element must round the same way whichever loop reads it: thread-count determinism).

/// Row reductions read this many rows side by side: more streams from memory in flight at
/// once (the loop is bound by L3/memory latency, not arithmetic); W6 row sums 5 % faster.
inline constexpr int reduce_rows_together = 4;

/// `v` with each lane l combined with lane l ^ s for s = S, S / 2, ..., 1 (`Op::simd_combine(v,
/// swapped)`): lane 0 then holds the lanes reduced by a fixed tree, halves first.
template <class Op, int S, class V>
TORCHTPU_VEC V lane_tree(V v) {
  if constexpr (S >= 1) return lane_tree<Op, S / 2>(Op::simd_combine(v, vswap_lanes<S>(v)));
  else return v;
}

/// The lanes of a row's combined partial `v` reduced by a fixed lane tree (lane l with
/// l + lanes / 2, then l + lanes / 4, ..., l + 1: on AVX-512 the order of every earlier
/// release), finalized and converted. The tree keeps the combine in vector registers (a
/// lane-by-lane scalar chain costs about 1 % of W6 row sums).
template <class Op, class T, class V>
TORCHTPU_VEC T finish_row(V v, int64_t count) {
  return convert<T>(Op::finalize(vfirst(lane_tree<Op, V::lanes / 2>(v)), count));
}

/// Pairwise combination of block partials in a fixed tree (a binary counter: partials of
/// equal weight merge as soon as both exist), so a reduction of n blocks rounds O(log n)
/// times per element instead of O(n) (Higham, "The accuracy of floating point summation",
/// SIAM J. Sci. Comput. 14(4), 1993, pairwise summation). The tree depends only on the
/// number of blocks, never on the thread split.
template <class V>
struct VecCascade {
  /// Enough for 2^48 blocks (more elements than any memory holds).
  static constexpr int levels = 48;
  V level[levels];
  int64_t n = 0;  ///< blocks pushed; bit l set = level[l] holds the partial of 2^l blocks
  template <class Op>
  TORCHTPU_VEC void push(V v) {
    int l = 0;
    for (int64_t m = n; m & 1; m >>= 1, ++l) v = Op::simd_combine(level[l], v);
    level[l] = v;
    ++n;
  }
  /// The combined partials, earliest blocks first (`id` when none was pushed).
  template <class Op>
  TORCHTPU_VEC V finish(V id) const {
    if (n == 0) return id;
    int l = 63 - __builtin_clzll(uint64_t(n));
    V r = level[l];
    while (--l >= 0)
      if ((n >> l) & 1) r = Op::simd_combine(r, level[l]);
    return r;
  }
};

/// Elements [b0, b1) of the `rows` rows `ev` is set to, reduced into one partial per row
/// (`part`): 4 vector accumulators per row, each fed every 4th vector (the tail into the
/// first), combined in pairs. `b0` is a multiple of 4 · V::lanes.
template <class V, class Op, class E>
TORCHTPU_VEC void vec_reduce_row_block(const VecEval<E>* ev, int rows, int64_t b0, int64_t b1, V* part) {
  constexpr int K = reduce_rows_together;
  constexpr int L = V::lanes;
  const V id = V::set1(Op::template init<float>());
  V a[K][4];
#pragma GCC unroll 16
  for (int k = 0; k < K * 4; ++k) a[k / 4][k % 4] = id;
  int64_t i = b0;
  if (rows == K) {
    for (; i + 4 * L <= b1; i += 4 * L) {
#pragma GCC unroll 16
      for (int k = 0; k < K * 4; ++k)
        a[k / 4][k % 4] = Op::simd_combine(a[k / 4][k % 4], vopaque(ev[k / 4].template load<V>(i + L * (k % 4), L)));
    }
  } else {
    for (int k = 0; k < rows; ++k) {
      for (int64_t j = b0; j + 4 * L <= b1; j += 4 * L) {
#pragma GCC unroll 4
        for (int q = 0; q < 4; ++q) a[k][q] = Op::simd_combine(a[k][q], vopaque(ev[k].template load<V>(j + L * q, L)));
      }
    }
    i = b0 + ((b1 - b0) / (4 * L)) * (4 * L);
  }
  for (; i < b1; i += L) {
    const int64_t n = b1 - i < L ? b1 - i : L;
    for (int k = 0; k < rows; ++k)
      a[k][0] = Op::simd_combine(a[k][0], select(V::first_n(n), vopaque(ev[k].template load<V>(i, n)), id));
  }
  for (int k = 0; k < rows; ++k)
    part[k] = Op::simd_combine(Op::simd_combine(a[k][0], a[k][1]), Op::simd_combine(a[k][2], a[k][3]));
}

/// Outputs [o0, o1) where output o reduces row o of plan `p` (the reduced axis is the plan's
/// last dim, `len` long): each block of `reduce_block` elements reduced by
/// `vec_reduce_row_block`, the blocks' partials combined pairwise (`VecCascade`), the lanes by
/// `finish_row`. Rows go `reduce_rows_together` at a time; each row's order is the same
/// either way, so results do not depend on the thread split.
template <class V, class Op, class T, class E>
TORCHTPU_VEC void vec_reduce_rows(const VecEval<E>& base, const LoopPlan& p, const int64_t* dst_st, T* out,
                                  int64_t count, int64_t o0, int64_t o1) {
  constexpr int K = reduce_rows_together;
  const int64_t len = p.sizes[p.rank - 1];
  const V id = V::set1(Op::template init<float>());
  static_assert(K == 4, "one copy of base below per row read together");
  static_assert(reduce_block % (4 * V::lanes) == 0, "blocks hold whole 4-vector steps");
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
    V part[K];
    if (len <= reduce_block) {
      vec_reduce_row_block<V, Op, E>(ev, rows, 0, len, part);
    } else {
      VecCascade<V> tree[K];
      for (int64_t b0 = 0; b0 < len; b0 += reduce_block) {
        vec_reduce_row_block<V, Op, E>(ev, rows, b0, len - b0 < reduce_block ? len : b0 + reduce_block, part);
        for (int k = 0; k < rows; ++k) tree[k].template push<Op>(part[k]);
      }
      for (int k = 0; k < rows; ++k) part[k] = tree[k].template finish<Op>(id);
    }
    for (int k = 0; k < rows; ++k) out[off[k]] = finish_row<Op, T>(part[k], count);
  }
}

/// Vectors per block of the column reduction (16 · V::lanes columns at a time).
inline constexpr int reduce_col_vectors = 16;

/// Rows [r0, r1) of the column block at `c` (`nv` vectors, `cols` columns) reduced in
/// sequence into `acc` (one block of rows of `vec_reduce_col_rows`).
template <class V, class Op, class E>
TORCHTPU_VEC void vec_reduce_col_block(VecEval<E>& ev, int64_t r0, int64_t r1, int64_t c, int nv, int64_t cols,
                                       V* acc) {
  constexpr int w = reduce_col_vectors;
  constexpr int L = V::lanes;
  const V id = V::set1(Op::template init<float>());
  // local accumulators (stores through `acc` may alias the input: vectors are may_alias types)
  V la[w];
#pragma GCC unroll 16
  for (int v = 0; v < w; ++v) la[v] = id;
  int64_t idx[max_rank] = {};
  for (int64_t r = r0; r < r1; ++r) {
    idx[0] = r;
    ev.set_row(idx);
    if (nv == w && cols == L * w) {
#pragma GCC unroll 16
      for (int v = 0; v < w; ++v) la[v] = Op::simd_combine(la[v], vopaque(ev.template load<V>(c + L * v, L)));
    } else {
      for (int v = 0; v < nv; ++v) {
        const int64_t n = cols - L * v < L ? cols - L * v : L;
        la[v] = Op::simd_combine(la[v], vopaque(ev.template load<V>(c + L * v, n)));
      }
    }
  }
#pragma GCC unroll 16
  for (int v = 0; v < w; ++v) acc[v] = la[v];
}

/// Rows [0, rows) of the column block at `c` reduced into `acc`: blocks of
/// `reduce_block_rows` rows in sequence (`vec_reduce_col_block`), combined in the tree that
/// splits a range of b blocks into its first floor(b / 2) blocks and the rest and combines
/// the two halves' results (pairwise over blocks of rows; the tree depends only on the row
/// count). Walked without recursion (an always-inline function cannot recurse): a stack of
/// pending ranges and one of finished partials, each at most 1 + log2(blocks) deep.
template <class V, class Op, class E>
TORCHTPU_VEC void vec_reduce_col_rows(VecEval<E>& ev, int64_t rows, int64_t c, int nv, int64_t cols, V* acc) {
  constexpr int w = reduce_col_vectors;
  constexpr int depth = 48;  // 1 + log2(blocks) for up to 2^47 blocks of rows
  const int64_t blocks = (rows + reduce_block_rows - 1) / reduce_block_rows;
  if (blocks <= 1) {
    vec_reduce_col_block<V, Op, E>(ev, 0, rows, c, nv, cols, acc);
    return;
  }
  struct Range {
    int64_t b0, b1;  // blocks [b0, b1)
    int stage;       // 0: nothing done; 1: first half reduced; 2: both halves reduced
  };
  Range todo[depth];
  int nt = 0;
  V done[depth][w];
  int nd = 0;
  todo[nt++] = {0, blocks, 0};
  while (nt > 0) {
    Range& t = todo[nt - 1];
    if (t.b1 - t.b0 == 1) {
      const int64_t r1 = t.b1 * reduce_block_rows < rows ? t.b1 * reduce_block_rows : rows;
      vec_reduce_col_block<V, Op, E>(ev, t.b0 * reduce_block_rows, r1, c, nv, cols, done[nd++]);
      --nt;
      continue;
    }
    const int64_t mid = t.b0 + (t.b1 - t.b0) / 2;
    if (t.stage == 0) {
      t.stage = 1;
      todo[nt++] = {t.b0, mid, 0};
    } else if (t.stage == 1) {
      t.stage = 2;
      todo[nt++] = {mid, t.b1, 0};
    } else {
      for (int v = 0; v < nv; ++v) done[nd - 2][v] = Op::simd_combine(done[nd - 2][v], done[nd - 1][v]);
      --nd;
      --nt;
    }
  }
  for (int v = 0; v < nv; ++v) acc[v] = done[0][v];
}

/// Columns [c0, c1) of out[c] = reduce over r of x[r, c] (plan `p` = [rows, cols], rows
/// reduced, out contiguous): 16 · V::lanes columns at a time, input rows in blocks of
/// `reduce_block_rows` combined pairwise (`vec_reduce_col_rows`). Each column's result is
/// the same on every target (its rows are combined in the same order).
template <class V, class Op, class T, class E>
TORCHTPU_VEC void vec_reduce_cols(VecEval<E>& ev, int64_t rows, T* out, int64_t count, int64_t c0, int64_t c1) {
  constexpr int w = reduce_col_vectors;
  constexpr int L = V::lanes;
  for (int64_t c = c0; c < c1; c += L * w) {
    const int64_t cols = c1 - c < L * w ? c1 - c : L * w;
    const int nv = int((cols + L - 1) / L);
    V acc[w];
    vec_reduce_col_rows<V, Op, E>(ev, rows, c, nv, cols, acc);
    for (int v = 0; v < nv; ++v) {
      alignas(64) float lanes[L];
      vstore(lanes, acc[v], L);
      const int64_t n = cols - L * v < L ? cols - L * v : L;
      for (int64_t l = 0; l < n; ++l) out[c + L * v + l] = convert<T>(Op::finalize(lanes[l], count));
    }
  }
}

/// One step of softmax's running maximum: max(x, m) with the x86 `maxps` rule, a NaN in `x`
/// returns `m` (skipped); on NEON (`fmax`) it propagates. Either way a NaN in the row makes
/// every output NaN (through the sum), as torch's.
template <class V>
TORCHTPU_VEC V softmax_max_step(V m, V x) {
  return vmax_keep_nan(x, m);
}

/// Maximum of lanes [0, full + tail) of the row `ev` is set to (`full` a multiple of
/// V::lanes, `tail` < V::lanes); NaN lanes as `softmax_max_step`. 4 accumulators, so the
/// loop runs at load speed rather than at max latency.
template <class V, class E>
TORCHTPU_VEC float softmax_row_max(const VecEval<E>& ev, int64_t full, int64_t tail) {
  constexpr int L = V::lanes;
  const V ninf = V::set1(-std::numeric_limits<float>::infinity());
  V m0 = ninf, m1 = ninf, m2 = ninf, m3 = ninf;
  int64_t i = 0;
  for (; i + 4 * L <= full; i += 4 * L) {
    m0 = softmax_max_step(m0, ev.template load<V>(i, L));
    m1 = softmax_max_step(m1, ev.template load<V>(i + L, L));
    m2 = softmax_max_step(m2, ev.template load<V>(i + 2 * L, L));
    m3 = softmax_max_step(m3, ev.template load<V>(i + 3 * L, L));
  }
  for (; i < full; i += L) m0 = softmax_max_step(m0, ev.template load<V>(i, L));
  if (tail) m1 = softmax_max_step(m1, select(V::first_n(tail), ev.template load<V>(full, tail), ninf));
  return hmax(vmax_keep_nan(vmax_keep_nan(m0, m1), vmax_keep_nan(m2, m3)));
}

/// One vector of softmax pass 2 at `i`: t = x - max, s += exp(t), exp(t) (log_softmax: t) stored.
template <bool Log, class V, class T, class E>
TORCHTPU_VEC void softmax_step(const VecEval<E>& ev, T* d, int64_t inner, int64_t i, V mv, V& s) {
  const V t = ev.template load<V>(i, V::lanes) - mv;
  const V e = vexp(t);
  s = s + vopaque(e);
  store_row(d, inner, i, Log ? t : e, V::lanes);
}

/// Softmax rows [r0, r1) of plan `p` (softmax axis = last plan dim) into the dest rows `out`
/// reads, two passes over each input row: pass 1 the maximum, pass 2 t = x - max written and
/// exp(t) summed (softmax writes exp(t)), then a pass over the written row while it is in L1
/// (softmax: times 1/sum; log_softmax: t - log(sum)). Pass 1 of row r + 1 runs inside pass 2
/// of row r (`next` reads it), so its loads from memory overlap the exp arithmetic instead of
/// stalling alone; the next dest row is prefetched for writing the same way. Each row is
/// summed in a fixed order (even vectors, odd vectors and tail, then `hsum`), whatever the
/// split over threads.
template <bool Log, class V, class T, class E>
TORCHTPU_VEC void vec_softmax_rows(VecEval<E>& ev, VecEval<E>& next, StridedReader<T>& out, const LoopPlan& p,
                                   int64_t r0, int64_t r1) {
  constexpr int L = V::lanes;
  const int64_t len = p.sizes[p.rank - 1];
  const int64_t full = len / L * L, tail = len - full;
  const int64_t inner = out.inner;
  const V ninf = V::set1(-std::numeric_limits<float>::infinity());
  int64_t idx[max_rank] = {};
  unflatten_row(p, r0, idx);
  ev.set_row(idx);
  float mx = softmax_row_max<V>(ev, full, tail);
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
    const V mv = V::set1(mx);
    V s0 = V::zero(), s1 = V::zero();
    V m0 = ninf, m1 = ninf;  // pass 1 of the next row
    int64_t i = 0;
    if (has_next) {
      for (; i + 2 * L <= full; i += 2 * L) {
        if (dn) {
          // the cache lines of the next dest row that this step's elements map to, for writing
          for (int64_t b = 0; b < 2 * L * int64_t(sizeof(T)); b += 64)
            __builtin_prefetch(dn + int64_t(sizeof(T)) * i + b, 1, 3);
        }
        m0 = softmax_max_step(m0, next.template load<V>(i, L));
        m1 = softmax_max_step(m1, next.template load<V>(i + L, L));
        softmax_step<Log>(ev, d, inner, i, mv, s0);
        softmax_step<Log>(ev, d, inner, i + L, mv, s1);
      }
      for (int64_t j = i; j < full; j += L) m0 = softmax_max_step(m0, next.template load<V>(j, L));
      if (tail) m1 = softmax_max_step(m1, select(V::first_n(tail), next.template load<V>(full, tail), ninf));
    } else {
      for (; i + 2 * L <= full; i += 2 * L) {
        softmax_step<Log>(ev, d, inner, i, mv, s0);
        softmax_step<Log>(ev, d, inner, i + L, mv, s1);
      }
    }
    if (i < full) softmax_step<Log>(ev, d, inner, i, mv, s0);
    if (tail) {
      const V t = ev.template load<V>(full, tail) - mv;
      const V e = vexp(t);
      s1 = s1 + select(V::first_n(tail), vopaque(e), V::zero());
      store_row(d, inner, full, Log ? t : e, tail);
    }
    const float sum = hsum(s0 + s1);
    // log_softmax: (x - max) - log(sum), in that order: max + log(sum) would round away up to
    // half an ulp of max (1.5e-5 for inputs near 1000), which torch's order does not lose.
    const V k = V::set1(Log ? std::log(sum) : 1.0f / sum);
    for (i = 0; i < full; i += L) {
      const V v = load_row<V>(d, inner, i, L);
      store_row(d, inner, i, Log ? v - k : v * k, L);
    }
    if (tail) {
      const V v = load_row<V>(d, inner, full, tail);
      store_row(d, inner, full, Log ? v - k : v * k, tail);
    }
    mx = hmax(vmax_keep_nan(m0, m1));
  }
}

// ---- entry points: one function per target, through vector_entry ------------------------

/// `vec_reduce_rows` (arguments by pointer: no vector crosses the entry).
template <class Op, class T, class E>
struct VecReduceRowsBody {
  template <class V>
  TORCHTPU_VEC void operator()(const VecEval<E>* base, const LoopPlan* p, const int64_t* dst_st, T* out,
                               int64_t count, int64_t o0, int64_t o1) const {
    vec_reduce_rows<V, Op, T, E>(*base, *p, dst_st, out, count, o0, o1);
  }
};

/// `vec_reduce_cols`.
template <class Op, class T, class E>
struct VecReduceColsBody {
  template <class V>
  TORCHTPU_VEC void operator()(VecEval<E>* ev, int64_t rows, T* out, int64_t count, int64_t c0, int64_t c1) const {
    vec_reduce_cols<V, Op, T, E>(*ev, rows, out, count, c0, c1);
  }
};

/// `vec_softmax_rows`.
template <bool Log, class T, class E>
struct VecSoftmaxRowsBody {
  template <class V>
  TORCHTPU_VEC void operator()(VecEval<E>* ev, VecEval<E>* next, StridedReader<T>* out, const LoopPlan* p,
                               int64_t r0, int64_t r1) const {
    vec_softmax_rows<Log, V, T, E>(*ev, *next, *out, *p, r0, r1);
  }
};

/// The engine's instruction set's entry point of `Body` (`vector_entry`), or null when the
/// engine runs scalar code or this build has no code for its instruction set.
template <class Body, class... Args>
auto vector_kernel() -> void (*)(Args...) {
  return vector_entry<Body, Args...>(static_cast<void (*)(Args...)>(nullptr));
}

#pragma GCC diagnostic pop
#endif

}  // namespace torchtpu::detail
