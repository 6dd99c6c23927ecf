// torchtpu/fuse/vec_eval.hpp — the vectorized evaluator tree that reductions and softmax use to
// read their elementwise producers one vector (`V::lanes` floats, any target) at a time (contiguous, broadcast or gathered along
// the inner axis), and the test of whether a region has a vector form. Plain elementwise
// regions use the block kernels of fuse/elementwise.hpp instead.
#pragma once
#include <algorithm>    // std::min
#include <concepts>     // std::same_as
#include <cstdint>      // int64_t
#include <tuple>        // std::tuple, std::apply
#include <type_traits>  // std::decay_t

#include "evaluator.hpp"  // Evaluator, StridedReader
#include "simd.hpp"       // FloatVec operations, TORCHTPU_VEC
#include "threads.hpp"    // parallel_chunks, chunks_for

namespace torchtpu::detail {

/// Element types the vector loops load and store directly.
template <class T>
inline constexpr bool vec_storage = std::same_as<T, float> || std::same_as<T, bfloat16> || std::same_as<T, half>;

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


#if TORCHTPU_HAS_VECTOR_PATH
template <class Op, class... Args>
concept has_simd = requires(const Op& op) { op.simd((void(sizeof(Args*)), ProbeFloatVec{})...); };
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

#if TORCHTPU_HAS_VECTOR_PATH
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"  // vectors passed between target and generic code

/// `n` contiguous elements of storage type `T` (f32, bf16, half; 0 <= n, at most `lanes`
/// read) as floats, lanes past `n` 0; nothing past p + n is read.
template <class V, class T>
TORCHTPU_VEC V load_storage(const T* p, int64_t n) {
  if constexpr (std::same_as<T, float>) return n >= V::lanes ? V::load(p) : V::load_n(p, n);
  else if constexpr (std::same_as<T, bfloat16>) return V::load_bf16(reinterpret_cast<const uint16_t*>(p), n);
  else return V::load_f16(reinterpret_cast<const uint16_t*>(p), n);
}

/// Lanes [0, n) of `v` rounded to storage type `T` at `p`; nothing else is written.
template <class V, class T>
TORCHTPU_VEC void store_storage(T* p, V v, int64_t n) {
  if constexpr (std::same_as<T, float>) vstore(p, v, n);
  else if constexpr (std::same_as<T, bfloat16>) vstore_bf16(reinterpret_cast<uint16_t*>(p), v, n);
  else vstore_f16(reinterpret_cast<uint16_t*>(p), v, n);
}

/// `v` rounded to `T` and back (a `T` intermediate of a fused region); f32 unchanged.
template <class T, class V>
TORCHTPU_VEC V round_to_storage(V v) {
  if constexpr (std::same_as<T, bfloat16>) return round_bf16(v);
  else if constexpr (std::same_as<T, half>) return round_f16(v);
  else return v;
}

/// Lanes [i, i + n) of a strided row as one vector `V` of floats (0 <= n <= V::lanes; lanes
/// past `n` are 0): contiguous (`inner` == 1, f32, bf16 or half), broadcast (`inner` == 0: every
/// lane `row[0]`) or gathered (element l at `row[(i + l) * inner]`). No memory past the `n`
/// elements is read.
template <class V, class T>
TORCHTPU_VEC V load_row(const T* row, int64_t inner, int64_t i, int64_t n) {
  if (inner == 1) return load_storage<V>(row + i, n);
  if (inner == 0) return V::set1(float(row[0]));
  alignas(64) float tmp[V::lanes] = {};
  const T* p = row + i * inner;
  for (int64_t l = 0; l < n; ++l) tmp[l] = float(p[l * inner]);
  return V::load(tmp);
}

/// Lanes [0, n) of `v` to elements [i, i + n) of a strided row (`inner` >= 1), rounded to
/// `T` (f32, bf16 or half); nothing else is written.
template <class V, class T>
TORCHTPU_VEC void store_row(T* row, int64_t inner, int64_t i, V v, int64_t n) {
  if (inner == 1) return store_storage(row + i, v, n);
  alignas(64) float tmp[V::lanes];
  vstore(tmp, v, V::lanes);
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
  /// Lanes [i, i + n) of the current row (n <= V::lanes; lanes past `n` are 0).
  template <class V>
  TORCHTPU_VEC V load(int64_t i, int64_t n) const { return load_row<V>(ev.row, ev.inner, i, n); }
};

template <element S>
struct VecEval<ScalarNode<S>> {
  float v;
  VecEval(const ScalarNode<S>& s, const LoopPlan&, const EvalContext&) : v(convert<float>(s.value)) {}
  void set_row(const int64_t*) {}
  template <class V>
  TORCHTPU_VEC V load(int64_t, int64_t) const { return V::set1(v); }
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
  template <class V>
  TORCHTPU_VEC V load(int64_t i, int64_t n) const { return load_impl<V>(i, n, std::index_sequence_for<Args...>{}); }

 private:
  template <class V, size_t... I>
  TORCHTPU_VEC V load_impl(int64_t i, int64_t n, std::index_sequence<I...>) const {
    // fenced (vbarrier): the op's result is not contracted into the next op's arithmetic
    const V r = vbarrier(op.simd(std::get<I>(ch).template load<V>(i, n)...));
    return round_to_storage<typename Node::value_type>(r);
  }
};

#pragma GCC diagnostic pop
#endif

/// Work per thread below which a region stays on one thread, in element-costs: an element
/// of an expression costs the sum of its ops' `cost` (1 for arithmetic, more for the
/// vectorized math functions; see `region_cost`), so a cheap region splits at 64 Ki elements
/// per thread and an expensive one sooner, but never below `elementwise_min_grain`.
inline constexpr int64_t elementwise_grain = 65536;
inline constexpr int64_t elementwise_min_grain = 8192;

}  // namespace torchtpu::detail
