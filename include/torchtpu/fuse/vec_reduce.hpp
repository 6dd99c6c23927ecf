// torchtpu/fuse/vec_reduce.hpp — vectorized reductions and softmax on the CPU: reducing the
// inner axis (row sums), reducing leading axes (column sums, accumulated a row at a time) and
// row softmax, each streaming its fused elementwise producer and split over the thread pool.
#pragma once
#include <cstdint>  // int64_t
#include <limits>   // std::numeric_limits

#include "plan.hpp"      // LoopPlan
#include "vec_eval.hpp"  // VecEval, unflatten_row, parallel_chunks

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

#if TORCHTPU_HAS_AVX512_PATH

/// Outputs [o0, o1) where output o reduces row o of plan `p` (the reduced axis is the plan's
/// last dim, `len` long): 4 vector accumulators, then the 16 lanes combined in lane order.
template <class Op, class T, class E>
TORCHTPU_SIMD_KERNEL void vec_reduce_rows(VecEval<E>& ev, const LoopPlan& p, const int64_t* dst_st, T* out,
                                          int64_t count, int64_t o0, int64_t o1) {
  const int64_t len = p.sizes[p.rank - 1];
  const VecF id = vset1(Op::template init<float>());
  int64_t idx[max_rank] = {};
  for (int64_t o = o0; o < o1; ++o) {
    unflatten_row(p, o, idx);
    int64_t off = 0;
    for (int j = 0; j + 1 < p.rank; ++j) off += idx[j] * dst_st[j];
    ev.set_row(idx);
    VecF a0 = id, a1 = id, a2 = id, a3 = id;
    int64_t i = 0;
    for (; i + 64 <= len; i += 64) {
      a0 = Op::simd_combine(a0, ev.load(i, 16));
      a1 = Op::simd_combine(a1, ev.load(i + 16, 16));
      a2 = Op::simd_combine(a2, ev.load(i + 32, 16));
      a3 = Op::simd_combine(a3, ev.load(i + 48, 16));
    }
    for (; i < len; i += 16) {
      const int64_t n = len - i < 16 ? len - i : 16;
      a0 = Op::simd_combine(a0, select(lane_mask(n), ev.load(i, n), id));
    }
    a0 = Op::simd_combine(Op::simd_combine(a0, a1), Op::simd_combine(a2, a3));
    alignas(64) float lanes[16];
    vstore(lanes, a0, 16);
    float acc = lanes[0];
    for (int l = 1; l < 16; ++l) acc = Op::combine(acc, lanes[l]);
    out[off] = convert<T>(Op::finalize(acc, count));
  }
}

/// Columns [c0, c1) of out[c] = reduce over r of x[r, c] (plan `p` = [rows, cols], rows
/// reduced, out contiguous): 256 columns at a time, one input row after another.
template <class Op, class T, class E>
TORCHTPU_SIMD_KERNEL void vec_reduce_cols(VecEval<E>& ev, int64_t rows, T* out, int64_t count, int64_t c0,
                                          int64_t c1) {
  const VecF id = vset1(Op::template init<float>());
  constexpr int w = 16;  // vectors per block
  int64_t idx[max_rank] = {};
  for (int64_t c = c0; c < c1; c += 16 * w) {
    const int64_t cols = c1 - c < 16 * w ? c1 - c : 16 * w;
    const int nv = int((cols + 15) / 16);
    VecF acc[w];
#pragma GCC unroll 16
    for (int v = 0; v < w; ++v) acc[v] = id;
    for (int64_t r = 0; r < rows; ++r) {
      idx[0] = r;
      ev.set_row(idx);
      if (nv == w && cols == 16 * w) {
#pragma GCC unroll 16
        for (int v = 0; v < w; ++v) acc[v] = Op::simd_combine(acc[v], ev.load(c + 16 * v, 16));
      } else {
        for (int v = 0; v < nv; ++v) {
          const int64_t n = cols - 16 * v < 16 ? cols - 16 * v : 16;
          acc[v] = Op::simd_combine(acc[v], ev.load(c + 16 * v, n));
        }
      }
    }
    for (int v = 0; v < nv; ++v) {
      alignas(64) float lanes[16];
      vstore(lanes, acc[v], 16);
      const int64_t n = cols - 16 * v < 16 ? cols - 16 * v : 16;
      for (int64_t l = 0; l < n; ++l) out[c + 16 * v + l] = convert<T>(Op::finalize(lanes[l], count));
    }
  }
}

/// Softmax rows [r0, r1) of plan `p` (softmax axis = last plan dim) into contiguous dest rows:
/// pass 1 the maximum, pass 2 exp(x - max) written and summed, then a scale of the written
/// row while it is in cache (log_softmax: pass 2 sums, pass 3 writes x - max - log(sum)).
template <bool Log, class T, class E>
TORCHTPU_SIMD_KERNEL void vec_softmax_rows(VecEval<E>& ev, StridedReader<T>& out, const LoopPlan& p, int64_t r0,
                                           int64_t r1) {
  const int64_t len = p.sizes[p.rank - 1];
  const VecF ninf = vset1(-std::numeric_limits<float>::infinity());
  int64_t idx[max_rank] = {};
  for (int64_t row = r0; row < r1; ++row) {
    unflatten_row(p, row, idx);
    ev.set_row(idx);
    out.set_row(idx);
    T* d = const_cast<T*>(out.row);
    VecF m = ninf;
    for (int64_t i = 0; i < len; i += 16) {
      const int64_t n = len - i < 16 ? len - i : 16;
      m = vmaximum(m, select(lane_mask(n), ev.load(i, n), ninf));
    }
    alignas(64) float lanes[16];
    vstore(lanes, m, 16);
    float mx = lanes[0];
    for (int l = 1; l < 16; ++l) mx = (mx != mx || lanes[l] != lanes[l]) ? (mx != mx ? mx : lanes[l]) : (lanes[l] > mx ? lanes[l] : mx);
    const VecF mv = vset1(mx);
    VecF s = vzero();
    for (int64_t i = 0; i < len; i += 16) {
      const int64_t n = len - i < 16 ? len - i : 16;
      const VecF e = vexp(ev.load(i, n) - mv);
      s = s + select(lane_mask(n), e, vzero());
      if constexpr (!Log) store_row(d, out.inner, i, e, n);
    }
    const float sum = hsum(s);
    if constexpr (Log) {
      // (x - max) - log(sum), in that order: max + log(sum) would round away up to half an
      // ulp of max (1.5e-5 for inputs near 1000), which torch's order does not lose.
      const VecF lse = vset1(std::log(sum));
      for (int64_t i = 0; i < len; i += 16) {
        const int64_t n = len - i < 16 ? len - i : 16;
        store_row(d, out.inner, i, (ev.load(i, n) - mv) - lse, n);
      }
    } else {
      const VecF inv = vset1(1.0f / sum);
      for (int64_t i = 0; i < len; i += 16) {
        const int64_t n = len - i < 16 ? len - i : 16;
        store_row(d, out.inner, i, load_row(d, out.inner, i, n) * inv, n);
      }
    }
  }
}

#endif

}  // namespace torchtpu::detail
