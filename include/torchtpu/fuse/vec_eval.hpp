// torchtpu/fuse/vec_eval.hpp — the vectorized form of an elementwise region: a tree of
// evaluators producing 16 lanes at a time, and the row loops (contiguous fast path, strided
// and broadcast operands gathered along the inner axis, masked tail) run on the thread pool.
#pragma once
#include <algorithm>    // std::min
#include <concepts>     // std::same_as
#include <cstdint>      // int64_t
#include <tuple>        // std::tuple, std::apply
#include <type_traits>  // std::decay_t

#include "evaluator.hpp"  // Evaluator, StridedReader
#include "simd.hpp"       // VecF, TORCHTPU_SIMD, cpu_has_avx512
#include "threads.hpp"    // parallel_chunks, chunks_for

namespace torchtpu::detail {

/// Element types the vector loops load and store directly.
template <class T>
inline constexpr bool vec_storage = std::same_as<T, float> || std::same_as<T, bfloat16>;

template <class E> inline constexpr bool is_materialized_node = false;
template <class Op, class E> inline constexpr bool is_materialized_node<ReduceNode<Op, E>> = true;
template <class E, bool L> inline constexpr bool is_materialized_node<SoftmaxNode<E, L>> = true;
template <class A, class B> inline constexpr bool is_materialized_node<ContractNode<A, B>> = true;

template <class E> struct VecEval;

/// Row index → loop indices of the outer dims.
inline void unflatten_row(const LoopPlan& p, int64_t row, int64_t* idx) {
  for (int j = p.rank - 2; j >= 0; --j) {
    idx[j] = row % p.sizes[j];
    row /= p.sizes[j];
  }
}


#if TORCHTPU_HAS_AVX512_PATH
template <class Op, class... Args>
concept has_simd = requires(const Op& op) { op.simd((void(sizeof(Args*)), VecF{})...); };
#else
template <class Op, class... Args>
concept has_simd = false;
#endif

/// True when every node of `E`'s elementwise region has a vector form computing in float.
template <class E>
constexpr bool vectorizable() {
  if constexpr (tensor_handle<E> || is_materialized_node<E>) {
    return vec_storage<typename E::value_type>;
  } else if constexpr (is_weak_scalar<E>) {
    return true;
  } else if constexpr (requires { typename E::compute_type; E::is_torchtpu_expression; }) {
    return [&]<class Op, class... Args>(std::type_identity<MapNode<Op, Args...>>) {
      if constexpr (!std::same_as<opmath_t<typename E::compute_type>, float> ||
                    !vec_storage<typename E::value_type> || op_promote_first<Op>() != 0 ||
                    !has_simd<Op, Args...>) {
        return false;
      } else {
        return ((vectorizable<Args>() && (is_weak_scalar<Args> || vec_storage<typename Args::value_type>)) && ...);
      }
    }(std::type_identity<E>{});
  } else {
    return false;
  }
}

#if TORCHTPU_HAS_AVX512_PATH

/// Loads `n` lanes from a strided row: contiguous, broadcast (stride 0) or gathered.
template <class T>
TORCHTPU_SIMD VecF load_row(const T* row, int64_t inner, int64_t i, int64_t n) {
  if (inner == 1) {
    if constexpr (std::same_as<T, float>) return vload(row + i, n);
    else return vload_bf16(reinterpret_cast<const uint16_t*>(row + i), n);
  }
  if (inner == 0) return vset1(float(row[0]));
  alignas(64) float tmp[16] = {};
  const T* p = row + i * inner;
  for (int64_t l = 0; l < n; ++l) tmp[l] = float(p[l * inner]);
  return vload(tmp, n);
}

template <class T>
TORCHTPU_SIMD void store_row(T* row, int64_t inner, int64_t i, VecF v, int64_t n) {
  if (inner == 1) {
    if constexpr (std::same_as<T, float>) vstore(row + i, v, n);
    else vstore_bf16(reinterpret_cast<uint16_t*>(row + i), v, n);
    return;
  }
  alignas(64) float tmp[16];
  vstore(tmp, v, 16);
  T* p = row + i * inner;
  for (int64_t l = 0; l < n; ++l) p[l * inner] = T(tmp[l]);
}

/// Leaves (tensors) and materialized nodes: a strided reader.
template <class E>
  requires(tensor_handle<E> || is_materialized_node<E>)
struct VecEval<E> {
  Evaluator<E> ev;
  VecEval(const E& e, const LoopPlan& p, const EvalContext& ctx) : ev(e, p, ctx) {}
  void set_row(const int64_t* idx) { ev.set_row(idx); }
  TORCHTPU_SIMD VecF load(int64_t i, int64_t n) const { return load_row(ev.row, ev.inner, i, n); }
};

template <element S>
struct VecEval<ScalarNode<S>> {
  float v;
  VecEval(const ScalarNode<S>& s, const LoopPlan&, const EvalContext&) : v(convert<float>(s.value)) {}
  void set_row(const int64_t*) {}
  TORCHTPU_SIMD VecF load(int64_t, int64_t) const { return vset1(v); }
};

template <class Op, class... Args>
struct VecEval<MapNode<Op, Args...>> {
  using Node = MapNode<Op, Args...>;
  std::tuple<VecEval<Args>...> ch;
  Op op;
  VecEval(const Node& n, const LoopPlan& p, const EvalContext& ctx)
      : ch(std::apply([&](const auto&... a) { return std::tuple<VecEval<Args>...>(VecEval<Args>(a, p, ctx)...); },
                      n.args)),
        op(n.op) {}
  void set_row(const int64_t* idx) {
    std::apply([&](auto&... c) { (c.set_row(idx), ...); }, ch);
  }
  TORCHTPU_SIMD VecF load(int64_t i, int64_t n) const { return load_impl(i, n, std::index_sequence_for<Args...>{}); }

 private:
  template <size_t... I>
  TORCHTPU_SIMD VecF load_impl(int64_t i, int64_t n, std::index_sequence<I...>) const {
    const VecF r = op.simd(std::get<I>(ch).load(i, n)...);
    if constexpr (std::same_as<typename Node::value_type, bfloat16>) return round_bf16(r);
    else return r;
  }
};

/// dest rows [r0, r1), columns [c0, c1) of the plan = the region, 16 lanes at a time.
template <class T, class E>
TORCHTPU_SIMD_KERNEL void vec_rows(VecEval<E>& ev, StridedReader<T>& out, const LoopPlan& p, int64_t r0,
                                   int64_t r1, int64_t c0, int64_t c1) {
  int64_t idx[max_rank] = {};
  for (int64_t row = r0; row < r1; ++row) {
    unflatten_row(p, row, idx);
    ev.set_row(idx);
    out.set_row(idx);
    T* d = const_cast<T*>(out.row);
    const int64_t ds = out.inner;
    int64_t i = c0;
    for (; i + 16 <= c1; i += 16) store_row(d, ds, i, ev.load(i, 16), 16);
    if (i < c1) store_row(d, ds, i, ev.load(i, c1 - i), c1 - i);
  }
}
#endif

/// Scalar form of the same loop (every other element type, or a CPU without AVX-512).
template <class T, class E>
void scalar_rows(Evaluator<E>& ev, StridedReader<T>& out, const LoopPlan& p, int64_t r0, int64_t r1,
                 int64_t c0, int64_t c1) {
  int64_t idx[max_rank] = {};
  for (int64_t row = r0; row < r1; ++row) {
    unflatten_row(p, row, idx);
    ev.set_row(idx);
    out.set_row(idx);
    T* d = const_cast<T*>(out.row);
    const int64_t ds = out.inner;
    if (ds == 1) {
      for (int64_t i = c0; i < c1; ++i) d[i] = convert<T>(ev.at(i));
    } else {
      for (int64_t i = c0; i < c1; ++i) d[i * ds] = convert<T>(ev.at(i));
    }
  }
}

/// Elements per thread below which a region stays on one thread.
inline constexpr int64_t elementwise_grain = 65536;

/// One elementwise region ready to run over any rows of its plan: the evaluator tree is built
/// (and nested non-elementwise nodes materialized) once; each run works on a copy, so runs
/// may go on in several threads at once. Per-element results do not depend on the split.
template <class T, class E, bool Vec>
struct RegionLoop {
  using Ev = std::conditional_t<Vec, VecEval<E>, Evaluator<E>>;
  Ev base;
  StridedReader<T> out0;
  const LoopPlan& p;
  RegionLoop(T* dest, const Dims& sizes, const Dims& strides, const E& e, const LoopPlan& plan,
             const EvalContext& ctx)
      : base(e, plan, ctx), out0(dest, sizes, strides, plan), p(plan) {}

  /// Rows [r0, r1), columns [c0, c1), on this thread.
  void run(int64_t r0, int64_t r1, int64_t c0, int64_t c1) const {
    Ev ev = base;
    StridedReader<T> out = out0;
#if TORCHTPU_HAS_AVX512_PATH
    if constexpr (Vec) vec_rows<T, E>(ev, out, p, r0, r1, c0, c1);
    else scalar_rows<T, E>(ev, out, p, r0, r1, c0, c1);
#else
    scalar_rows<T, E>(ev, out, p, r0, r1, c0, c1);
#endif
  }
  /// Rows [r0, r1), split over the pool when large enough.
  void run_parallel(int64_t r0, int64_t r1) const {
    const int64_t n = p.sizes[p.rank - 1], rows = r1 - r0;
    const int64_t nchunks = chunks_for(rows * n, elementwise_grain);
    if (nchunks <= 1) run(r0, r1, 0, n);
    else if (rows >= nchunks) parallel_chunks(rows, nchunks, 1, [&](int64_t b, int64_t e) { run(r0 + b, r0 + e, 0, n); });
    else parallel_chunks(n, nchunks, 16, [&](int64_t b, int64_t e) { run(r0, r1, b, e); });
  }
};

/// Calls `f(loop)` with the RegionLoop for `e` into `dest` over plan `p`: the vector form when
/// the region, the destination type and the CPU allow it, else the scalar form.
template <element T, int R, class E, class F>
void with_region_loop(const Tensor<T, R>& dest, const E& e, const LoopPlan& p, const EvalContext& ctx, F&& f) {
#if TORCHTPU_HAS_AVX512_PATH
  if constexpr (vec_storage<T> && vectorizable<E>()) {
    if (cpu_has_avx512()) {
      const RegionLoop<T, E, true> loop(dest.data_ptr(), dest.sizes(), dest.strides(), e, p, ctx);
      f(loop);
      return;
    }
  }
#endif
  const RegionLoop<T, E, false> loop(dest.data_ptr(), dest.sizes(), dest.strides(), e, p, ctx);
  f(loop);
}

}  // namespace torchtpu::detail
