// torchtpu/fuse/cpu.hpp — materialization on the CPU: one fused loop per elementwise region,
// reductions and softmax streaming their producers, matmul with its epilogue applied per
// output tile, and overlap detection for aliasing destinations.
#pragma once
#include <cmath>    // std::exp, std::log
#include <cstdint>  // int64_t
#include <string>   // std::string

#include "../core/tensor.hpp"  // Tensor
#include "../expr/nodes.hpp"   // node types
#include "evaluator.hpp"       // Evaluator, for_each_operand
#include "gemm.hpp"            // gemm_rows, sgemm_f32
#include "gemv.hpp"            // GemvArgs, sgemv_small (the lean batch-1..4 path)
#include "plan.hpp"            // LoopPlan
#include "elementwise.hpp"     // RegionJob, block kernels (elementwise regions)
#include "vec_eval.hpp"        // VecEval (reductions, softmax)
#include "vec_reduce.hpp"      // vector reductions and softmax

namespace torchtpu::detail {

// ---- row iteration -------------------------------------------------------------------

/// Calls `f(idx, row)` for each row `row` in [begin, end) of a plan (a row = every loop dim
/// but the last), with `idx` holding the row's loop indices.
template <class F>
void for_rows(const LoopPlan& p, int64_t begin, int64_t end, F&& f) {
  int64_t idx[max_rank] = {};
  int64_t r = begin;
  for (int j = p.rank - 2; j >= 0; --j) {
    idx[j] = r % p.sizes[j];
    r /= p.sizes[j];
  }
  for (int64_t row = begin; row < end; ++row) {
    f(static_cast<const int64_t*>(idx), row);
    for (int j = p.rank - 2; j >= 0; --j) {
      if (++idx[j] < p.sizes[j]) break;
      idx[j] = 0;
    }
  }
}

inline int64_t plan_rows(const LoopPlan& p) {
  int64_t r = 1;
  for (int j = 0; j + 1 < p.rank; ++j) r *= p.sizes[j];
  return r;
}

// ---- aliasing --------------------------------------------------------------------------

/// True when writing `dest` while reading `e`'s elementwise operands could read an element
/// after it was overwritten: an operand shares memory with `dest` but is not read at
/// exactly the position being written. Here and below, overlap is decided on address ranges,
/// never by comparing storages (two `from_blob` tensors over one buffer have two storages).
template <element T, int R, class E>
bool overlaps_unsafely(const Tensor<T, R>& dest, const E& e) {
  const char *dlo, *dhi;
  if (!byte_extent(dest.data_ptr(), dest.sizes(), dest.strides(), sizeof(T), dlo, dhi)) return false;
  bool bad = false;
  for_each_operand(
      e,
      [&](const Dims& sh, const Dims& st, const StorageImpl* s, const void* data, size_t elem) {
        (void)s;
        if (bad) return;
        const char *lo, *hi;
        if (!byte_extent(data, sh, st, elem, lo, hi) || hi < dlo || lo > dhi) return;
        // Same element positions? (same address, same size, and same strides once broadcast)
        if (data == static_cast<const void*>(dest.data_ptr()) && elem == sizeof(T)) {
          LoopPlan p = make_plan(dest.sizes());
          int64_t a[max_rank], b[max_rank];
          plan_strides(p, sh, st, a);
          plan_strides(p, dest.sizes(), dest.strides(), b);
          bool same = true;
          for (int j = 0; j < p.rank; ++j) same = same && (a[j] == b[j] || p.sizes[j] == 1);
          if (same) return;
        }
        bad = true;
      },
      [](const auto&) {});
  return bad;
}

/// True if any tensor read by `e`'s elementwise region shares bytes with `dest`.
template <element T, int R, class E>
bool overlaps_any(const Tensor<T, R>& dest, const E& e) {
  const char *dlo, *dhi;
  if (!byte_extent(dest.data_ptr(), dest.sizes(), dest.strides(), sizeof(T), dlo, dhi)) return false;
  bool hit = false;
  for_each_operand(
      e,
      [&](const Dims& sh, const Dims& st, const StorageImpl* s, const void* data, size_t elem) {
        (void)s;
        const char *lo, *hi;
        if (byte_extent(data, sh, st, elem, lo, hi) && !(hi < dlo || lo > dhi)) hit = true;
      },
      [](const auto&) {});
  return hit;
}

// ---- elementwise -----------------------------------------------------------------------

/// dest[...] = e[...] (e broadcast to dest's shape), one pass, no aliasing check. Vectorized
/// and split over the thread pool when the region allows (fuse/elementwise.hpp).
template <element T, int R, expression E>
void elementwise_into(const Tensor<T, R>& dest, const E& e, const EvalContext& ctx = {}) {
  elementwise_region(dest, e, false, ctx);
}

// ---- reductions ------------------------------------------------------------------------

/// Destination strides expressed over the input's dims (0 at reduced dims).
inline Dims dest_strides_over_input(const Dims& in, uint32_t mask, bool keepdim, const Dims& dst) {
  Dims s = Dims::filled(in.size(), 0);
  int k = 0;
  for (int i = 0; i < in.size(); ++i) {
    if (mask & (1u << i)) {
      if (keepdim) ++k;
    } else {
      s[i] = dst[k++];
    }
  }
  return s;
}

/// Plan over `in` with kept dims first, then the dims in `mask`; returns the barrier.
template <class E>
LoopPlan reduction_plan(const E& arg, uint32_t mask, const Dims& dst_over_in, int& barrier) {
  const Dims& in = arg.shape();
  int order[max_rank];
  int n = 0;
  for (int i = 0; i < in.size(); ++i) if (!(mask & (1u << i))) order[n++] = i;
  barrier = n;
  for (int i = 0; i < in.size(); ++i) if (mask & (1u << i)) order[n++] = i;
  LoopPlan p = make_plan(in, order);
  OperandLayouts ops;
  ops.add(in, dst_over_in);
  collect_layouts(arg, ops);
  if (in.size() == 0) { barrier = 0; return p; }
  barrier = coalesce(p, ops, barrier);
  return p;
}

/// `VecCascade` for one scalar accumulator: partials of equal weight combine as soon as both
/// exist, so `n` block partials meet in a tree of depth log2(n) fixed by `n` alone.
template <class A>
struct Cascade {
  static constexpr int levels = 48;  // 2^48 blocks
  A level[levels];
  int64_t n = 0;  ///< partials pushed; bit l set = level[l] holds 2^l of them
  template <class Op>
  void push(A v) {
    int l = 0;
    for (int64_t m = n; m & 1; m >>= 1, ++l) v = Op::combine(level[l], v);
    level[l] = v;
    ++n;
  }
  /// Every partial combined, earliest first (`id` when none was pushed).
  template <class Op>
  A finish(A id) const {
    A r = id;
    bool any = false;
    for (int l = levels - 1; l >= 0; --l) {
      if (!((n >> l) & 1)) continue;
      r = any ? Op::combine(r, level[l]) : level[l];
      any = true;
    }
    return r;
  }
};

/// dest = the reduction `node`. Sums are accurate over long reductions: blocks (vector rows:
/// `reduce_block` elements; vector columns: `reduce_block_rows` rows; scalar path:
/// `reduce_scalar_block` elements) are summed in
/// sequence and combined pairwise, so the error grows with log2 of the length (Higham 1993),
/// on every path (vector rows, vector columns, scalar); bf16/half accumulate in float. Each
/// output is reduced by one thread in an order fixed by the shapes, so results do not depend
/// on the thread count.
template <class Op, class E, element T, int R>
void reduce_into(const Tensor<T, R>& dest, const ReduceNode<Op, E>& node) {
  using In = typename E::value_type;
  using A = typename Op::template acc<In>;
  const Dims& in = node.arg.shape();
  const Dims dst = dest_strides_over_input(in, node.mask, node.keepdim, dest.strides());
  int barrier = 0;
  LoopPlan p = reduction_plan(node.arg, node.mask, dst, barrier);
  int64_t dst_st[max_rank];
  plan_strides(p, in, dst, dst_st);
  int64_t count = 1;
  for (int i = 0; i < in.size(); ++i) if (node.mask & (1u << i)) count *= in[i];
  // kept loop dims: [0, barrier); reduced: [barrier, rank)
  int64_t kept_total = 1;
  for (int j = 0; j < barrier; ++j) kept_total *= p.sizes[j];
  int64_t red_rows = 1;
  for (int j = barrier; j + 1 < p.rank; ++j) red_rows *= p.sizes[j];
  const int64_t inner = p.sizes[p.rank - 1];
  const bool inner_reduced = barrier < p.rank;
  T* out = dest.data_ptr();
#if TORCHTPU_HAS_VECTOR_PATH
  if constexpr (vec_reducible<Op, E, T>()) {
    if (cpu_isa() != CpuIsa::scalar && in.size() > 0 && numel(in) > 0) {
      // (b) leading dims reduced, trailing dims kept and contiguous in dest: accumulate
      // whole input rows into vector registers (column sums)
      int k = 0;
      while (k < in.size() && (node.mask & (1u << k))) ++k;
      if (k > 0 && k < in.size() && node.mask == (1u << k) - 1u) {
        LoopPlan q = make_plan(in);
        OperandLayouts ops;
        ops.add(in, dst);
        collect_layouts(node.arg, ops);
        const int qb = coalesce(q, ops, k);
        int64_t qst[max_rank];
        plan_strides(q, in, dst, qst);
        const auto cols_fn = vector_kernel<VecReduceColsBody<Op, T, E>, VecEval<E>*, int64_t, T*, int64_t, int64_t, int64_t>();
        if (cols_fn && q.rank == 2 && qb == 1 && qst[1] == 1) {
          const VecEval<E> base(node.arg, q, EvalContext{});
          const int64_t rows = q.sizes[0], cols = q.sizes[1];
          // chunks of columns start at multiples of 256: whole column blocks on every target
          parallel_chunks(cols, chunks_for(rows * cols, reduce_grain), 256, [&](int64_t c0, int64_t c1) {
            VecEval<E> ev = base;
            cols_fn(&ev, rows, out, count, c0, c1);
          });
          return;
        }
      }
      // (a) the reduced dims coalesce into the inner loop: one vector pass per output
      const auto rows_fn = vector_kernel<VecReduceRowsBody<Op, T, E>, const VecEval<E>*, const LoopPlan*, const int64_t*,
                                         T*, int64_t, int64_t, int64_t>();
      if (rows_fn && inner_reduced && barrier == p.rank - 1) {
        const VecEval<E> base(node.arg, p, EvalContext{});
        parallel_chunks(kept_total, chunks_for(kept_total * inner, reduce_grain), 1, [&](int64_t o0, int64_t o1) {
          rows_fn(&base, &p, dst_st, out, count, o0, o1);
        });
        return;
      }
    }
  }
#endif
  // The scalar evaluator only here: building it materializes the sub-nodes that are not
  // elementwise (a matmul), which the vector paths above have evaluated already (issue 18 #14).
  Evaluator<E> ev(node.arg, p, EvalContext{});
  int64_t idx[max_rank] = {};
  for (int64_t o = 0; o < kept_total; ++o) {
    int64_t rem = o, off = 0;
    for (int j = barrier - 1; j >= 0; --j) {
      idx[j] = rem % p.sizes[j];
      rem /= p.sizes[j];
      off += idx[j] * dst_st[j];
    }
    A acc = Op::template init<A>();
    if (!inner_reduced) {  // nothing reduced
      ev.set_row(idx);
      acc = Op::combine(acc, convert<A>(ev.at(0)));
    } else {
      // blocks of reduce_scalar_block elements in sequence, combined pairwise
      Cascade<A> tree;
      int64_t in_block = 0;
      for (int64_t rr = 0; rr < red_rows; ++rr) {
        int64_t rem2 = rr;
        for (int j = p.rank - 2; j >= barrier; --j) {
          idx[j] = rem2 % p.sizes[j];
          rem2 /= p.sizes[j];
        }
        ev.set_row(idx);
        for (int64_t i = 0; i < inner; ++i) {
          acc = Op::combine(acc, convert<A>(ev.at(i)));
          if (++in_block == reduce_scalar_block) {
            tree.template push<Op>(acc);
            acc = Op::template init<A>();
            in_block = 0;
          }
        }
      }
      if (in_block) tree.template push<Op>(acc);
      acc = tree.template finish<Op>(Op::template init<A>());
    }
    out[off] = convert<T>(Op::finalize(acc, count));
  }
}

template <class Op, class E, element T, int R>
void argreduce_into(const Tensor<T, R>& dest, const ArgReduceNode<Op, E>& node) {
  using In = typename E::value_type;
  using A = opmath_t<In>;
  const Dims& in = node.arg.shape();
  const uint32_t mask = node.dim < 0 ? (in.size() ? (1u << in.size()) - 1u : 0u) : (1u << node.dim);
  // Reduce dims in natural order (so flattened indices are row-major): no coalescing.
  int order[max_rank];
  int n = 0;
  for (int i = 0; i < in.size(); ++i) if (!(mask & (1u << i))) order[n++] = i;
  const int barrier = n;
  for (int i = 0; i < in.size(); ++i) if (mask & (1u << i)) order[n++] = i;
  LoopPlan p = make_plan(in, order);
  Evaluator<E> ev(node.arg, p, EvalContext{});
  const bool keep = node.keepdim && node.dim >= 0;
  const Dims dst = dest_strides_over_input(in, mask, keep, node.dim < 0 && node.keepdim ? Dims::filled(in.size(), 0) : dest.strides());
  int64_t dst_st[max_rank];
  plan_strides(p, in, dst, dst_st);
  int64_t kept_total = 1;
  for (int j = 0; j < barrier; ++j) kept_total *= p.sizes[j];
  int64_t red_rows = 1;
  for (int j = barrier; j + 1 < p.rank; ++j) red_rows *= p.sizes[j];
  const int64_t inner = p.sizes[p.rank - 1];
  int64_t idx[max_rank] = {};
  for (int64_t o = 0; o < kept_total; ++o) {
    int64_t rem = o, off = 0;
    for (int j = barrier - 1; j >= 0; --j) {
      idx[j] = rem % p.sizes[j];
      rem /= p.sizes[j];
      off += idx[j] * dst_st[j];
    }
    A best{};
    int64_t best_i = -1, flat = 0;
    for (int64_t rr = 0; rr < red_rows; ++rr) {
      int64_t rem2 = rr;
      for (int j = p.rank - 2; j >= barrier; --j) {
        idx[j] = rem2 % p.sizes[j];
        rem2 /= p.sizes[j];
      }
      ev.set_row(idx);
      for (int64_t i = 0; i < inner; ++i, ++flat) {
        const A v = convert<A>(ev.at(i));
        if (best_i < 0 || Op::better(best, v)) { best = v; best_i = flat; }
      }
    }
    dest.data_ptr()[off] = T(best_i);
  }
}

// ---- softmax ---------------------------------------------------------------------------

template <class E, bool Log, element T, int R>
void softmax_into(const Tensor<T, R>& dest, const SoftmaxNode<E, Log>& node) {
  using M = opmath_t<T>;
  const Dims& in = node.arg.shape();
  if (in.size() == 0) {  // softmax of a scalar: 1 (log: 0); NaN for +-inf and NaN (as torch)
    Evaluator<E> ev(node.arg, make_plan(in), EvalContext{});
    const M v = convert<M>(ev.at(0));
    const M t = v - v;  // x - max: 0, or NaN
    dest.data_ptr()[0] = convert<T>(Log ? t : t + M(1));
    return;
  }
  int order[max_rank];
  int n = 0;
  for (int i = 0; i < in.size(); ++i) if (i != node.dim) order[n++] = i;
  order[n++] = node.dim;
  LoopPlan p = make_plan(in, order);
#if TORCHTPU_HAS_VECTOR_PATH
  if constexpr (std::same_as<T, float> && vectorizable<E>()) {
    const auto fn = vector_kernel<VecSoftmaxRowsBody<Log, T, E>, VecEval<E>*, VecEval<E>*, StridedReader<T>*,
                                  const LoopPlan*, int64_t, int64_t>();
    if (fn) {
      const VecEval<E> base(node.arg, p, EvalContext{});
      const StridedReader<T> out0(dest.data_ptr(), dest.sizes(), dest.strides(), p);
      const int64_t rows = plan_rows(p);
      parallel_chunks(rows, chunks_for(rows * p.sizes[p.rank - 1], reduce_grain / 4), 1, [&](int64_t r0, int64_t r1) {
        VecEval<E> ev = base, next = base;
        StridedReader<T> out = out0;
        fn(&ev, &next, &out, &p, r0, r1);
      });
      return;
    }
  }
#endif
  Evaluator<E> ev(node.arg, p, EvalContext{});
  StridedReader<T> out(dest.data_ptr(), dest.sizes(), dest.strides(), p);
  const int64_t len = p.sizes[p.rank - 1];
  for_rows(p, 0, plan_rows(p), [&](const int64_t* idx, int64_t) {
    ev.set_row(idx);
    out.set_row(idx);
    T* d = const_cast<T*>(out.row);
    // pass 1: running max and rescaled sum (online softmax, Milakov & Gimelshein 2018). The sum
    // is kept in double: in float, a row of 1000 terms drifts ~30 ulp (the vector path sums in
    // float but in blocks, pairwise).
    M mx = -std::numeric_limits<M>::infinity();
    double acc = 0;
    for (int64_t i = 0; i < len; ++i) {
      const M v = convert<M>(ev.at(i));
      if (v > mx) {
        acc = acc * double(std::exp(mx - v)) + 1.0;
        mx = v;
      } else if (v != -std::numeric_limits<M>::infinity()) {  // -inf adds 0 (and -inf - -inf is NaN)
        acc += double(std::exp(v - mx));
      }
    }
    M s = M(acc);
    // A +inf maximum: torch computes exp(x - max) with x - max = inf - inf = NaN, so the whole
    // row is NaN (as the vector path); the running rescale above would have dropped it.
    if (mx == std::numeric_limits<M>::infinity()) s = std::numeric_limits<M>::quiet_NaN();
    // pass 2: write
    if constexpr (Log) {
      const M ls = std::log(s);
      for (int64_t i = 0; i < len; ++i) d[i * out.inner] = convert<T>(convert<M>(ev.at(i)) - mx - ls);
    } else {
      const M inv = M(1) / s;
      for (int64_t i = 0; i < len; ++i) d[i * out.inner] = convert<T>(std::exp(convert<M>(ev.at(i)) - mx) * inv);
    }
  });
}

// ---- matmul ----------------------------------------------------------------------------

/// An operand as a tensor of type C: itself if it already is one, else materialized.
template <element C, expression E>
Tensor<C> as_tensor(const E& e) {
  if constexpr (tensor_handle<E> && std::same_as<typename E::value_type, C>) return Tensor<C>(e);
  else return evaluate_new(to<C>(e));
}

/// Operands of a matmul, as 3-index views: batch (broadcast), rows, columns.
template <element C>
struct MatmulOperands {
  Tensor<C> a, b;  // a: [batch..., m, k], b: [batch..., k, n] (expanded to the batch shape)
};

template <class A, class B>
auto matmul_operands(const ContractNode<A, B>& node) {
  using C = typename ContractNode<A, B>::value_type;
  Tensor<C> a = as_tensor<C>(node.a);
  Tensor<C> b = as_tensor<C>(node.b);
  if (a.dim() == 1) a = a.unsqueeze(0);
  if (b.dim() == 1) b = b.unsqueeze(1);
  Dims sa = node.batch, sb = node.batch;
  sa.push_back(node.m); sa.push_back(node.k);
  sb.push_back(node.k); sb.push_back(node.n);
  return MatmulOperands<C>{a.expand(sa), b.expand(sb)};
}

/// Calls `f(batch_index, a_ptr, b_ptr)` for each matrix of the batch. An operand with no
/// elements (k = 0, or m or n = 0) passes its base pointer unoffset: it may be null, and the
/// kernels never read it (offsetting a null pointer is undefined; found by fuzz_jit_graph).
template <element C, class F>
void for_each_batch(const MatmulOperands<C>& ops, const Dims& batch, F&& f) {
  const int nb = batch.size();
  const int64_t total = numel(batch);
  const bool a_empty = ops.a.numel() == 0, b_empty = ops.b.numel() == 0;
  int64_t idx[max_rank] = {};
  for (int64_t t = 0; t < total; ++t) {
    int64_t rem = t, oa = 0, ob = 0;
    for (int j = nb - 1; j >= 0; --j) {
      idx[j] = rem % batch[j];
      rem /= batch[j];
      oa += idx[j] * ops.a.strides()[j];
      ob += idx[j] * ops.b.strides()[j];
    }
    f(t, a_empty ? ops.a.data_ptr() : ops.a.data_ptr() + oa, b_empty ? ops.b.data_ptr() : ops.b.data_ptr() + ob);
  }
}

/// When every batch index of `ops` reads the same B (batch strides 0) and A's rows continue
/// evenly across the batch (stride of each batch dim = the rows below it · `sam`), the batch is
/// folded into the rows: returns an empty batch and multiplies `m` by the batch size. Else
/// returns `batch` and leaves `m`.
template <element C>
Dims batch_folded(const MatmulOperands<C>& ops, const Dims& batch, int64_t& m, int64_t sam) {
  const int nb = batch.size();
  if (nb == 0 || ops.a.numel() == 0) return batch;
  int64_t rows = m;
  for (int j = nb - 1; j >= 0; --j) {
    if (batch[j] != 1 && (ops.b.strides()[j] != 0 || ops.a.strides()[j] != rows * sam)) return batch;
    rows *= batch[j];
  }
  m = rows;
  return Dims{};
}

/// Rows per tile of the matmul epilogue: the epilogue runs on these rows while in cache.
inline constexpr int64_t epilogue_tile_rows = 32;

/// dest (contiguous, shape = node.shape, type C) = matmul; `after_rows(first_flat_row,
/// end_flat_row, first_column, end_column)` runs on each finished tile (the fused epilogue):
/// every element once; on the f32 vector path a block of rows and columns as the GEMM finishes
/// it (in cache), elsewhere whole rows.
template <class A, class B, class After>
void matmul_into_contiguous(typename ContractNode<A, B>::value_type* dest, const ContractNode<A, B>& node,
                            After&& after_rows) {
  using C = typename ContractNode<A, B>::value_type;
  using Acc = opmath_t<C>;
  const auto ops = matmul_operands(node);
  const int r = ops.a.dim();
  const int64_t sam = ops.a.strides()[r - 2], sak = ops.a.strides()[r - 1];
  const int64_t sbk = ops.b.strides()[r - 2], sbn = ops.b.strides()[r - 1];
  const int64_t n = node.n, k = node.k;
  int64_t m = node.m;
#if TORCHTPU_HAS_VECTOR_PATH
  if constexpr (std::same_as<C, float>) {
    if (cpu_has_vector_gemm()) {
      // One B for the whole batch (a linear layer's weight on [N, H, W, C] activations) and
      // A's batch rows evenly spaced: one product of batch · m rows, B packed once.
      const Dims batch = batch_folded(ops, node.batch, m, sam);
      struct Epi { std::remove_reference_t<After>* f; int64_t base; };
      for_each_batch(ops, batch, [&](int64_t t, const C* pa, const C* pb) {
        Epi epi{&after_rows, t * m};
        SgemmArgs g;
        g.m = m; g.n = n; g.k = k;
        g.a = pa; g.sam = sam; g.sak = sak;
        g.b = pb; g.sbk = sbk; g.sbn = sbn;
        g.c = dest + t * m * n; g.ldc = n;
        g.epilogue_block = [](void* ctx, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
          auto* e = static_cast<Epi*>(ctx);
          (*e->f)(e->base + r0, e->base + r1, c0, c1);
        };
        g.epilogue_ctx = &epi;
        sgemm_f32(g);
      });
      return;
    }
  } else if constexpr (std::same_as<C, bfloat16>) {
    if (cpu_has_vector_gemm()) {
      // bf16 operands, f32 accumulation into a workspace; each finished block of rows is
      // rounded to bf16 into dest, then its epilogue runs
      float* acc = workspace<float>(size_t(m * n), 1);
      struct Epi { std::remove_reference_t<After>* f; int64_t base; const float* acc; C* out; int64_t n; };
      for_each_batch(ops, node.batch, [&](int64_t t, const C* pa, const C* pb) {
        Epi epi{&after_rows, t * m, acc, dest + t * m * n, n};
        SgemmArgs g;
        g.m = m; g.n = n; g.k = k;
        g.a = reinterpret_cast<const float*>(pa); g.sam = sam; g.sak = sak;
        g.b = reinterpret_cast<const float*>(pb); g.sbk = sbk; g.sbn = sbn;
        g.bf16 = true;
        g.c = acc; g.ldc = n;
        g.epilogue = [](void* ctx, int64_t r0, int64_t r1) {
          auto* e = static_cast<Epi*>(ctx);
          for (int64_t i = r0 * e->n; i < r1 * e->n; ++i) e->out[i] = C(e->acc[i]);
          (*e->f)(e->base + r0, e->base + r1, int64_t(0), e->n);
        };
        g.epilogue_ctx = &epi;
        sgemm_f32(g);
      });
      return;
    }
  }
#endif
  for_each_batch(ops, node.batch, [&](int64_t t, const C* pa, const C* pb) {
    C* cbase = dest + t * m * n;
    for (int64_t r0 = 0; r0 < m; r0 += epilogue_tile_rows) {
      const int64_t r1 = std::min(m, r0 + epilogue_tile_rows);
      if constexpr (std::same_as<C, Acc>) {
        gemm_rows<C, Acc>(r0, r1, n, k, pa, sam, sak, pb, sbk, sbn, cbase, n);
      } else {
        Acc* tmp = workspace<Acc>(size_t((r1 - r0) * n), 1);
        gemm_rows<C, Acc>(0, r1 - r0, n, k, pa + r0 * sam, sam, sak, pb, sbk, sbn, tmp, n);
        for (int64_t i = 0; i < (r1 - r0) * n; ++i) cbase[r0 * n + i] = convert<C>(tmp[i]);
      }
      after_rows(t * m + r0, t * m + r1, int64_t(0), n);
    }
  });
}

// ---- dispatch --------------------------------------------------------------------------

template <class E>
inline constexpr bool is_contract = false;
template <class A, class B>
inline constexpr bool is_contract<ContractNode<A, B>> = true;

/// True when `E`'s elementwise region contains a matmul (the epilogue pattern may apply).
template <class E>
constexpr bool contains_contract() {
  if constexpr (is_contract<E>) {
    return true;
  } else if constexpr (is_map_node<E>) {
    return []<class Op, class... Args>(std::type_identity<MapNode<Op, Args...>>) {
      return (contains_contract<Args>() || ...);
    }(std::type_identity<E>{});
  } else {
    return false;
  }
}

/// The first ContractNode in an elementwise region (depth-first), if any.
template <class E>
const void* find_contract(const E& e, const Dims*& shape) {
  if constexpr (is_contract<E>) {
    shape = &e.shape();
    return &e;
  } else if constexpr (requires { e.args; }) {
    const void* found = nullptr;
    for_each_in(e.args, [&](const auto& a) { found = found ? found : find_contract(a, shape); });
    return found;
  } else {
    return nullptr;
  }
}

template <class E, class F>
bool with_contract(const E& e, const void* target, F&& f) {
  if constexpr (is_contract<E>) {
    if (static_cast<const void*>(&e) == target) { f(e); return true; }
    return false;
  } else if constexpr (requires { e.args; }) {
    bool done = false;
    for_each_in(e.args, [&](const auto& a) { done = done || with_contract(a, target, f); });
    return done;
  } else {
    return false;
  }
}

/// Evaluate `e` into `dest` with the fused matmul epilogue: the first matmul in the
/// elementwise region writes each tile of rows straight into `dest`, and the region is then
/// evaluated on that tile while it is in cache, reading the product back from `dest` at the
/// position being written. Applies when the product has dest's shape and type, dest is
/// contiguous with rank >= 2, and nothing the product reads overlaps dest (the caller has
/// checked the region's other operands). Returns false when the pattern does not apply.
template <element T, int R, class E>
bool try_matmul_epilogue(const Tensor<T, R>& dest, const E& e) {
  if constexpr (!requires { e.args; }) {
    return false;
  } else {
    const Dims* cshape = nullptr;
    const void* c = find_contract(e, cshape);
    if (!c || !(*cshape == dest.sizes()) || dest.dim() < 2 || !dest.is_contiguous()) return false;
    // The product overwrites dest before the region reads its other operands: none may
    // share memory with dest, whatever position they are read at.
    if (overlaps_any(dest, e)) return false;
    bool ok = false;
    with_contract(e, c, [&](const auto& node) {
      using C = typename std::decay_t<decltype(node)>::value_type;
      if constexpr (std::same_as<C, T>) {
        // A 1-D rhs drops the n dim: output rows are then not matmul rows (tiles misalign).
        if (node.b.shape().size() < 2) return;
        if (overlaps_any(dest, node.a) || overlaps_any(dest, node.b)) return;
        ok = true;
        const EvalContext ctx{c, dest.data_ptr(), dest.sizes(), dest.strides()};
        RegionLeaves l;
        add_leaves<0>(l, e, ctx);
        RegionJob j;
        plan_region(j, l, dest.data_ptr(), int(sizeof(T)), dest.sizes(), dest.strides(), false);
        j.fn = block_kernel<T, E>();
        j.expr = &e;
        // each finished block of rows and columns, on the thread that computed it, while in cache
        matmul_into_contiguous(dest.data_ptr(), node, [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
          run_region_rows(j, r0, r1, c0, c1);
        });
      }
    });
    return ok;
  }
}

// ---- small-batch matmul with its epilogue: the lean path ---------------------------------

/// Matmul nodes in `E`'s elementwise region (compile time).
template <class E>
constexpr int contract_count() {
  if constexpr (is_contract<E>) {
    return 1;
  } else if constexpr (is_map_node<E>) {
    return []<class Op, class... Args>(std::type_identity<MapNode<Op, Args...>>) {
      return (0 + ... + contract_count<Args>());
    }(std::type_identity<E>{});
  } else {
    return 0;
  }
}

/// True when `E` is a region the lean path takes: map nodes over tensors, numbers and exactly
/// one f32 matmul of two f32 tensors, all with a vector form.
template <class E>
constexpr bool lean_matmul_region() {
  if constexpr (contract_count<E>() != 1 || leaf_count<E>() > max_region_leaves) {
    return false;
  } else if constexpr (is_contract<E>) {
    using A = decltype(E::a);
    using B = decltype(E::b);
    return tensor_handle<A> && tensor_handle<B> && std::same_as<typename A::value_type, float> &&
           std::same_as<typename B::value_type, float>;
  } else if constexpr (is_map_node<E>) {
    if constexpr (!vectorizable<E>()) {
      return false;
    } else {
      return []<class Op, class... Args>(std::type_identity<MapNode<Op, Args...>>) {
        return ((is_weak_scalar<Args> || tensor_handle<Args> || is_map_node<Args> ||
                 (is_contract<Args> && lean_matmul_region<Args>())) && ...) &&
               ((!is_map_node<Args> || contract_count<Args>() == 0 || lean_matmul_region<Args>()) && ...);
      }(std::type_identity<E>{});
    }
  } else {
    return false;
  }
}

/// Where each operand of a lean region is, by row of the [m, n] result: element (r, j) of
/// operand `k` is at `base[k] + r * row[k] + j * elem[k]` (bytes; inner stride 1).
template <int N>
struct RowOperands {
  const char* base[N > 0 ? N : 1];
  int64_t row[N > 0 ? N : 1];
  int elem[N > 0 ? N : 1];
};

/// Fills `l` from `e` (operand numbering as add_leaves). False when an operand cannot be read
/// by rows in place (inner stride not 1, broadcast along the row, or shares memory with the
/// destination `dst`).
template <int K, int N, class E>
bool row_operands(RowOperands<N>& l, const E& e, const char* const (&dst)[2], int64_t m, int64_t n, float* c,
                  int64_t ldc) {
  if constexpr (is_weak_scalar<E>) {
    return true;
  } else if constexpr (tensor_handle<E>) {
    using V = typename E::value_type;
    const Dims& s = e.sizes();
    const Dims& st = e.strides();
    const int r = s.size();
    const char *lo, *hi;  // bytes shared with the destination [dst[0], dst[1]]: not in place
    if (byte_extent(e.data_ptr(), s, st, sizeof(V), lo, hi) && !(hi < dst[0] || lo > dst[1])) return false;
    if (n > 1 && (r == 0 || s[r - 1] != n || st[r - 1] != 1)) return false;
    l.base[K] = reinterpret_cast<const char*>(e.data_ptr());
    l.row[K] = (r >= 2 && m > 1 && s[r - 2] == m) ? st[r - 2] * int64_t(sizeof(V)) : 0;
    l.elem[K] = int(sizeof(V));
    return true;
  } else if constexpr (is_map_node<E>) {
    return [&]<size_t... I>(std::index_sequence<I...>) {
      return (row_operands<K + arg_offset<E, I>()>(l, std::get<I>(e.args), dst, m, n, c, ldc) && ...);
    }(std::make_index_sequence<std::tuple_size_v<decltype(e.args)>>{});
  } else {  // the matmul: its product, in the destination
    l.base[K] = reinterpret_cast<const char*>(c);
    l.row[K] = ldc * int64_t(sizeof(float));
    l.elem[K] = int(sizeof(float));
    return true;
  }
}

/// The one matmul of a lean region.
template <class E>
const auto& lean_contract(const E& e) {
  if constexpr (is_contract<E>) {
    return e;
  } else {
    return [&]<size_t... I>(std::index_sequence<I...>) -> decltype(auto) {
      constexpr size_t which = [] {
        size_t w = 0;
        ((contract_count<std::tuple_element_t<I, decltype(E::args)>>() ? (w = I, 0) : 0), ...);
        return w;
      }();
      return lean_contract(std::get<which>(e.args));
    }(std::make_index_sequence<std::tuple_size_v<decltype(e.args)>>{});
  }
}

/// The lean path for `dest = e` where `e` is a batch-1..4 f32 matmul with an elementwise
/// epilogue (`relu(x @ w + b)`): no loop plan, no thread pool below gemv_grain, no operand
/// tensors built; the product goes straight from the small-batch kernel into `dest` and the
/// epilogue runs on each finished range of columns while it is in L1. Applies when `dest`
/// is contiguous f32 with e's shape, the product's rows are not batched, every tensor the
/// region reads has inner stride 1 and none shares storage with `dest` (so aliasing needs
/// no analysis). Returns false, having written nothing, otherwise.
template <element T, int R, class E>
bool try_small_matmul(const Tensor<T, R>& dest, const E& e) {
#if TORCHTPU_HAS_VECTOR_PATH
  if constexpr (std::same_as<T, float> && lean_matmul_region<E>()) {
    const auto& node = lean_contract(e);
    if (node.m > gemv_max_m || !node.batch.empty() || !cpu_has_vector_gemv()) return false;
    const int ra = node.a.dim(), rb = node.b.dim();
    if (rb != 2 || ra > 2) return false;
    const Dims& ds = dest.sizes();
    const int rd = ds.size();
    if (rd != ra || ds[rd - 1] != node.n || (rd == 2 && ds[0] != node.m) || !dest.is_contiguous()) return false;
    if constexpr (!is_contract<E>) {
      if (e.shape() != ds) return false;
    }
    if (overlaps_any(dest, node.a) || overlaps_any(dest, node.b)) return false;
    const char* dst[2];
    if (!byte_extent(dest.data_ptr(), dest.sizes(), dest.strides(), sizeof(T), dst[0], dst[1])) return false;
    GemvArgs g;
    g.m = node.m; g.n = node.n; g.k = node.k;
    g.a = node.a.data_ptr();
    g.sam = ra == 2 ? node.a.strides()[0] : 0;
    g.sak = node.a.strides()[ra - 1];
    g.b = node.b.data_ptr();
    g.sbk = node.b.strides()[0];
    g.sbn = node.b.strides()[1];
    g.c = dest.data_ptr();
    g.ldc = node.n;
    if (!gemv_supported(g)) return false;
    if constexpr (is_contract<E>) {
      sgemv_small(g);
    } else {
      constexpr int N = leaf_count<E>();
      struct Epi {
        RowOperands<N> l;
        const E* e;
        float* c;
        int64_t m, ldc;
      } epi;
      if (!row_operands<0>(epi.l, e, dst, g.m, g.n, g.c, g.ldc)) return false;
      epi.e = &e;
      epi.c = g.c;
      epi.m = g.m;
      epi.ldc = g.ldc;
      sgemv_small(g, [](void* p, int64_t j0, int64_t j1) {
        const Epi& x = *static_cast<const Epi*>(p);
        BlockArgs a;
        a.expr = x.e;
        for (int64_t r = 0; r < x.m; ++r) {
          for (int k = 0; k < N; ++k) a.in[k] = x.l.base[k] + r * x.l.row[k] + j0 * x.l.elem[k];
          a.out = x.c + r * x.ldc + j0;
          block_kernel<float, E>()(a, j1 - j0);
        }
      }, &epi);
    }
    return true;
  }
#endif
  (void)dest;
  (void)e;
  return false;
}

}  // namespace torchtpu::detail
