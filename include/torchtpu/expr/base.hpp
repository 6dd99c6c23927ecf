// torchtpu/expr/base.hpp — `ExprBase`, the one thin mixin that gives tensors and lazy nodes
// their method-call forms (`e.sum(1)`, `e.to<double>()`, `e.eval()`); the methods forward
// to the free functions in ops/ (defined out of line in ops/methods.hpp).
#pragma once
#include <cstdint>  // int64_t

#include "../core/forward.hpp"  // Tensor, element
#include "../core/shape.hpp"    // Dims

namespace torchtpu {

/// Method forms shared by `Tensor` and every expression node. Each returns a lazy node except
/// `eval()`, which materializes.
template <class Derived>
class ExprBase {
 public:
  /// Materialize into a new contiguous tensor (fused; one pass per elementwise region).
  auto eval() const;
  /// Evaluate and return the single element (`x.sum().item()`).
  /// **Errors:** ShapeError if the value does not have exactly one element.
  auto item() const;
  /// Cast to element type `U` (lazy).
  template <element U> auto to() const;

  /// Reductions over all elements, or over `dims` (negative dims count from the end).
  auto sum() const;
  /// Sum over `dims` (lazy; **Shapes:** `dims` removed, or kept as size 1 with `keepdim`; `{}` =
  /// all).
  auto sum(const Dims& dims, bool keepdim = false) const;
  /// Mean of all elements (lazy, rank 0; floating point only).
  auto mean() const;
  /// Mean over `dims` (lazy; **Shapes:** `dims` removed, or kept as size 1 with `keepdim`; `{}` =
  /// all).
  auto mean(const Dims& dims, bool keepdim = false) const;
  /// Product of all elements (lazy, rank 0).
  auto prod() const;
  /// Product over `dims` (lazy; **Shapes:** `dims` removed, or kept as size 1 with `keepdim`; `{}`
  /// = all).
  auto prod(const Dims& dims, bool keepdim = false) const;
  /// Maximum of all elements (lazy, rank 0). **Errors:** ShapeError when empty.
  auto max() const;
  /// Maximum over `dims` (lazy; **Shapes:** `dims` removed, or kept as size 1 with `keepdim`; `{}`
  /// = all).
  auto max(const Dims& dims, bool keepdim = false) const;
  /// Minimum of all elements (lazy, rank 0). **Errors:** ShapeError when empty.
  auto min() const;
  /// Minimum over `dims` (lazy; **Shapes:** `dims` removed, or kept as size 1 with `keepdim`; `{}`
  /// = all).
  auto min(const Dims& dims, bool keepdim = false) const;
  /// True if any element is nonzero (lazy, rank 0, bool).
  auto any() const;
  /// Any over `dims` (lazy; **Shapes:** `dims` removed, or kept as size 1 with `keepdim`; `{}` =
  /// all).
  auto any(const Dims& dims, bool keepdim = false) const;
  /// True if every element is nonzero (lazy, rank 0, bool).
  auto all() const;
  /// All over `dims` (lazy; **Shapes:** `dims` removed, or kept as size 1 with `keepdim`; `{}` =
  /// all).
  auto all(const Dims& dims, bool keepdim = false) const;
  /// Index of the maximum of the flattened tensor (lazy, int64; first on ties).
  auto argmax() const;
  /// Indices of the maxima along `dim` (lazy, int64). **Errors:** IndexError for a bad dim.
  auto argmax(int64_t dim, bool keepdim = false) const;
  /// Index of the minimum of the flattened tensor (lazy, int64; first on ties).
  auto argmin() const;
  /// Indices of the minima along `dim` (lazy, int64). **Errors:** IndexError for a bad dim.
  auto argmin(int64_t dim, bool keepdim = false) const;
  /// Softmax along `dim` (lazy; integers compute in float32).
  auto softmax(int64_t dim) const;
  /// Log of the softmax along `dim` (lazy), computed stably.
  auto log_softmax(int64_t dim) const;

 protected:
  /// The expression this mixin belongs to.
  const Derived& derived() const { return static_cast<const Derived&>(*this); }
};

}  // namespace torchtpu
