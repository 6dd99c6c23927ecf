// torchtpu/ops/traits.hpp — building blocks every op struct uses: result-type policies, and
// `operand()` which turns a C++ number into a wrapped-number node and keeps expressions by value.
#pragma once
#include <tuple>        // std::tuple_element_t (reduce_op_t)
#include <type_traits>  // std::decay_t, std::conditional_t, std::remove_cvref_t
#include <utility>      // std::forward

#include "../core/dtype.hpp"    // floating_element, opmath_t
#include "../core/forward.hpp"  // expression, arithmetic_scalar
#include "../expr/nodes.hpp"    // ScalarNode, scalar_element_t

namespace torchtpu {

/// Result-type policy: computes in the promoted type and returns it (add, mul, abs, ...).
struct same_type_policy {
  /// Type the op computes in, for the promoted operand type `C`.
  template <class C> using compute = C;
  /// Element type of the result, for the promoted operand type (`C` or `T`).
  template <class C> using result = C;
};
/// Result-type policy for math functions: integer and bool inputs compute in float32
/// (PyTorch: `torch.exp(int_tensor)` is float32).
struct floating_policy {
  /// Type the op computes in, for the promoted operand type `C`.
  template <class C> using compute = std::conditional_t<floating_element<C>, C, float>;
  /// Element type of the result, for the promoted operand type (`C` or `T`).
  template <class C> using result = compute<C>;
};
/// Result-type policy for predicates: compute in the promoted type, return bool.
struct predicate_policy {
  /// Type the op computes in, for the promoted operand type `C`.
  template <class C> using compute = C;
  /// Element type of the result, for the promoted operand type (`C` or `T`).
  template <class C> using result = bool;
};

/// An operand as stored in a node: expressions by value, numbers as `ScalarNode`.
/// (Rvalue expressions are moved in: building `f(g(x))` moves `g(x)`'s node into `f`'s rather
/// than copying its tensor handles at every level.)
template <class X>
std::remove_cvref_t<X> operand(X&& x) requires(!arithmetic_scalar<std::remove_cvref_t<X>>) {
  return std::forward<X>(x);
}
template <class X>
auto operand(const X& x) requires arithmetic_scalar<X> {
  return ScalarNode<scalar_element_t<X>>(scalar_element_t<X>(x));
}
template <class X>
using operand_t = decltype(operand(std::declval<const X&>()));
/// `operand` without the intermediate value: expressions pass through as references (the
/// node constructor moves or copies them into place once), numbers become `ScalarNode`.
template <class X>
X&& operand_ref(X&& x) requires(!arithmetic_scalar<std::remove_cvref_t<X>>) {
  return std::forward<X>(x);
}
template <class X>
auto operand_ref(const X& x) requires arithmetic_scalar<X> {
  return operand(x);
}

/// The type of an argument taken by forwarding reference, without reference or const.
template <class X>
using bare = std::remove_cvref_t<X>;

/// Operands of a user-facing op: expressions or numbers.
template <class X>
concept operand_like = expression<X> || arithmetic_scalar<X>;

/// At least one of a binary op's operands is an expression (so `int + int` stays C++).
template <class A, class B>
concept binary_operands = operand_like<A> && operand_like<B> && (expression<A> || expression<B>);

/// Build `MapNode<Op, ...>` from user operands (numbers wrapped). The user-facing functions
/// (`add`, `exp`, ...) are function templates rather than function objects so that ADL finds
/// them and `using namespace torchtpu;` does not clash with `<cmath>`'s `::exp`.
template <class Op, class... X>
auto make_map(Op op, X&&... x) {
  return MapNode<Op, operand_t<bare<X>>...>(op, operand_ref(std::forward<X>(x))...);
}

namespace detail {
template <class M>
constexpr bool is_nan(M x) {
  if constexpr (std::is_floating_point_v<M>) return x != x;
  else return false;
}
}  // namespace detail

namespace ops::detail {
/// The reduction-body enum of builder `B` (`stablehlo::ReduceOp`), named through `B::reduce`'s
/// signature so that ops/ does not include device/ (docs/design.md: `lower` is a template over
/// the builder).
template <class R, class C, class... A>
std::tuple_element_t<2, std::tuple<A...>> reduce_op_of(R (C::*)(A...));
template <class B>
using reduce_op_t = std::remove_cvref_t<decltype(reduce_op_of(&B::reduce))>;
}  // namespace ops::detail

}  // namespace torchtpu
