// torchtpu/fuse/evaluator.hpp — per-node CPU evaluators: the fused elementwise region of an
// expression becomes a tree of evaluators reading operands at loop positions; nodes that are
// not elementwise (reductions, matmul, softmax) are materialized first and read as operands.
#pragma once
#include <concepts>  // std::same_as
#include <cstdint>   // int64_t
#include <tuple>     // std::tuple, std::apply
#include <utility>   // std::index_sequence

#include "../core/tensor.hpp"  // Tensor
#include "../expr/nodes.hpp"   // node types
#include "plan.hpp"            // LoopPlan, plan_strides, OperandLayouts
#include "simd_lane.hpp"       // FloatLane

namespace torchtpu::detail {

/// Precomputed values for nodes, by node address (used by the matmul epilogue: the product is
/// written to the destination tile, and the epilogue reads it from there).
struct EvalContext {
  const void* node = nullptr;
  const void* data = nullptr;
  Dims sizes, strides;
};

template <class E>
struct Evaluator;

/// Reads a strided operand at loop positions.
template <class T>
struct StridedReader {
  using value_type = T;
  const T* base = nullptr;
  const T* row = nullptr;
  int64_t st[max_rank] = {};
  int64_t inner = 0;
  int rank = 0;
  StridedReader() = default;
  StridedReader(const T* b, const Dims& sizes, const Dims& strides, const LoopPlan& p)
      : base(b), row(b), rank(p.rank) {
    plan_strides(p, sizes, strides, st);
    inner = st[rank - 1];
  }
  void set_row(const int64_t* idx) {
    int64_t off = 0;
    for (int j = 0; j + 1 < rank; ++j) off += idx[j] * st[j];
    // An empty tensor may have no storage (base null): no element is read, but null + off is
    // undefined even then (a reduction over a 0-size dim visits its kept rows; fuzz_jit_graph).
    row = base ? base + off : base;
  }
  T at(int64_t i) const { return row[i * inner]; }
};

template <element T, int R>
struct Evaluator<Tensor<T, R>> : StridedReader<T> {
  Evaluator(const Tensor<T, R>& t, const LoopPlan& p, const EvalContext&)
      : StridedReader<T>(t.data_ptr(), t.sizes(), t.strides(), p) {}
};

template <element S>
struct Evaluator<ScalarNode<S>> {
  using value_type = S;
  S v;
  Evaluator(const ScalarNode<S>& n, const LoopPlan&, const EvalContext&) : v(n.value) {}
  void set_row(const int64_t*) {}
  S at(int64_t) const { return v; }
};

/// True when `Op` has a vector form (`simd` member) that takes `FloatLane`s.
template <class Op, class... A>
concept has_lane_simd = requires(const Op& op) { op.simd((void(sizeof(A*)), FloatLane{})...); };

/// `op` on one element's operands `a` (already converted to the op's argument types; `M` is
/// its compute type). An op computing in float with a vector form runs that form on one
/// `FloatLane`, so an element computed here has the bits the vector loops give it (one
/// algorithm per op on every path and instruction set: simd_lane.hpp); any other op runs its
/// scalar kernel `operator()`.
template <class M, class Op, class... A>
inline auto apply_op(const Op& op, A... a) {
  if constexpr (std::same_as<M, float> && op_promote_first<Op>() == 0 && (std::same_as<A, float> && ...) &&
                has_lane_simd<Op, A...>)
    return op.simd(FloatLane{a}...).v;
  else
    return op(a...);
}

template <class Op, class... Args>
struct Evaluator<MapNode<Op, Args...>> {
  using Node = MapNode<Op, Args...>;
  using value_type = typename Node::value_type;
  using M = opmath_t<typename Node::compute_type>;
  std::tuple<Evaluator<Args>...> ch;
  Op op;

  Evaluator(const Node& n, const LoopPlan& p, const EvalContext& ctx)
      : ch(std::apply([&](const auto&... a) { return std::tuple<Evaluator<Args>...>(Evaluator<Args>(a, p, ctx)...); },
                      n.args)),
        op(n.op) {}
  void set_row(const int64_t* idx) {
    std::apply([&](auto&... c) { (c.set_row(idx), ...); }, ch);
  }
  value_type at(int64_t i) const { return at_impl(i, std::index_sequence_for<Args...>{}); }

 private:
  template <size_t... I>
  value_type at_impl(int64_t i, std::index_sequence<I...>) const {
    return convert<value_type>(apply_op<M>(op, arg<I>(std::get<I>(ch).at(i))...));
  }
  template <size_t I, class V>
  static auto arg(V v) {
    if constexpr (int(I) < op_promote_first<Op>()) return convert<bool>(v);
    else return convert<M>(v);
  }
};

/// Materialize a node into a new contiguous tensor (defined in cpu.hpp).
template <expression E>
Tensor<typename E::value_type> evaluate_new(const E& e);

/// Non-elementwise nodes inside an elementwise region: materialized once, then read.
template <class Node>
struct MaterializedEvaluator : StridedReader<typename Node::value_type> {
  using T = typename Node::value_type;
  Tensor<T> tmp;
  MaterializedEvaluator(const Node& n, const LoopPlan& p, const EvalContext& ctx) {
    if (ctx.node == static_cast<const void*>(&n)) {
      static_cast<StridedReader<T>&>(*this) =
          StridedReader<T>(static_cast<const T*>(ctx.data), ctx.sizes, ctx.strides, p);
    } else {
      tmp = evaluate_new(n);
      static_cast<StridedReader<T>&>(*this) = StridedReader<T>(tmp.data_ptr(), tmp.sizes(), tmp.strides(), p);
    }
  }
};
template <class Op, class E>
struct Evaluator<ReduceNode<Op, E>> : MaterializedEvaluator<ReduceNode<Op, E>> {
  using MaterializedEvaluator<ReduceNode<Op, E>>::MaterializedEvaluator;
};
template <class Op, class E>
struct Evaluator<ArgReduceNode<Op, E>> : MaterializedEvaluator<ArgReduceNode<Op, E>> {
  using MaterializedEvaluator<ArgReduceNode<Op, E>>::MaterializedEvaluator;
};
template <class E, bool L>
struct Evaluator<SoftmaxNode<E, L>> : MaterializedEvaluator<SoftmaxNode<E, L>> {
  using MaterializedEvaluator<SoftmaxNode<E, L>>::MaterializedEvaluator;
};
template <class A, class B>
struct Evaluator<ContractNode<A, B>> : MaterializedEvaluator<ContractNode<A, B>> {
  using MaterializedEvaluator<ContractNode<A, B>>::MaterializedEvaluator;
};

// ---- walking the elementwise region's operands ---------------------------------------

/// Calls `f(shape, strides, storage, data, elem_size)` for every tensor read directly by the
/// elementwise region of `e` (not inside materialized nodes, which read nothing during the
/// loop), and `g(shape)` for each materialized node (read contiguously).
template <class E, class F, class G>
void for_each_operand(const E& e, F&& f, G&& g) {
  if constexpr (tensor_handle<E>) {
    f(e.sizes(), e.strides(), e.storage().get(), static_cast<const void*>(e.data_ptr()),
      sizeof(typename E::value_type));
  } else if constexpr (is_weak_scalar<E>) {
    // numbers occupy no memory
  } else if constexpr (requires { e.args; }) {
    for_each_in(e.args, [&](const auto& a) { for_each_operand(a, f, g); });
  } else {
    g(e);
  }
}

/// Layouts of all operands of the elementwise region (for coalescing).
template <class E>
void collect_layouts(const E& e, OperandLayouts& out) {
  for_each_operand(
      e, [&](const Dims& sh, const Dims& st, const StorageImpl*, const void*, size_t) { out.add(sh, st); },
      [&](const auto& node) { out.add(node.shape(), contiguous_strides(node.shape())); });
}

}  // namespace torchtpu::detail
