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
  auto sum(const Dims& dims, bool keepdim = false) const;
  auto mean() const;
  auto mean(const Dims& dims, bool keepdim = false) const;
  auto prod() const;
  auto prod(const Dims& dims, bool keepdim = false) const;
  auto max() const;
  auto max(const Dims& dims, bool keepdim = false) const;
  auto min() const;
  auto min(const Dims& dims, bool keepdim = false) const;
  auto any() const;
  auto any(const Dims& dims, bool keepdim = false) const;
  auto all() const;
  auto all(const Dims& dims, bool keepdim = false) const;
  auto argmax() const;
  auto argmax(int64_t dim, bool keepdim = false) const;
  auto argmin() const;
  auto argmin(int64_t dim, bool keepdim = false) const;
  auto softmax(int64_t dim) const;
  auto log_softmax(int64_t dim) const;

 protected:
  const Derived& derived() const { return static_cast<const Derived&>(*this); }
};

}  // namespace torchtpu
