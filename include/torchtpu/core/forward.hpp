// torchtpu/core/forward.hpp — forward declarations of torchtpu's class templates and the
// `expression` concept every lazy node and every tensor satisfies.
#pragma once
#include <concepts>  // std::convertible_to, std::same_as

#include "dtype.hpp"  // element
#include "shape.hpp"  // Dims, dynamic_rank

namespace torchtpu {

template <element T, int Rank = dynamic_rank>
class Tensor;

template <class Derived>
class ExprBase;

/// Anything that evaluates to a tensor: a `Tensor` or a lazy node. It names its element type
/// (`value_type`), its rank when known at compile time (`static_rank`, or `dynamic_rank`),
/// and its run-time shape.
template <class E>
concept expression = requires(const E& e) {
  typename E::value_type;
  { E::static_rank } -> std::convertible_to<int>;
  { e.shape() } -> std::same_as<const Dims&>;
  requires E::is_torchtpu_expression;
};

/// A tensor handle (any element type and static rank).
template <class E>
concept tensor_handle = expression<E> && requires { typename E::is_tensor_tag; };

/// Plain C++ numbers that may appear as operands of tensor expressions ("wrapped numbers").
template <class S>
concept arithmetic_scalar = std::is_arithmetic_v<S> || std::same_as<S, bfloat16> ||
                            std::same_as<S, half>;

namespace detail {
template <element T, int R, expression E>
void materialize(Tensor<T, R>& dest, const E& e);
}  // namespace detail

}  // namespace torchtpu
