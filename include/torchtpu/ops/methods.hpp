// torchtpu/ops/methods.hpp — out-of-line definitions of the method forms (ExprBase) and of the
// Tensor members that need the ops and the evaluator (clone, fill_, +=, ...).
#pragma once
#include "../core/tensor.hpp"         // Tensor
#include "../fuse/materialize.hpp"    // evaluate_new, materialize
#include "arith.hpp"                  // add, sub, mul, div
#include "compare.hpp"                // to
#include "reduce.hpp"                 // sum, mean, ...

namespace torchtpu {

template <class D> auto ExprBase<D>::eval() const {
  Tensor<typename D::value_type> out;  // through materialize: cpu or PJRT device
  detail::materialize(out, derived());
  return out;
}
template <class D> template <element U> auto ExprBase<D>::to() const { return torchtpu::to<U>(derived()); }
template <class D> auto ExprBase<D>::item() const { return this->eval().cpu().item(); }
template <class D> auto ExprBase<D>::sum() const { return torchtpu::sum(derived()); }
template <class D> auto ExprBase<D>::sum(const Dims& d, bool k) const { return torchtpu::sum(derived(), d, k); }
template <class D> auto ExprBase<D>::mean() const { return torchtpu::mean(derived()); }
template <class D> auto ExprBase<D>::mean(const Dims& d, bool k) const { return torchtpu::mean(derived(), d, k); }
template <class D> auto ExprBase<D>::prod() const { return torchtpu::prod(derived()); }
template <class D> auto ExprBase<D>::prod(const Dims& d, bool k) const { return torchtpu::prod(derived(), d, k); }
template <class D> auto ExprBase<D>::max() const { return torchtpu::max(derived()); }
template <class D> auto ExprBase<D>::max(const Dims& d, bool k) const { return torchtpu::max(derived(), d, k); }
template <class D> auto ExprBase<D>::min() const { return torchtpu::min(derived()); }
template <class D> auto ExprBase<D>::min(const Dims& d, bool k) const { return torchtpu::min(derived(), d, k); }
template <class D> auto ExprBase<D>::any() const { return torchtpu::any(derived()); }
template <class D> auto ExprBase<D>::any(const Dims& d, bool k) const { return torchtpu::any(derived(), d, k); }
template <class D> auto ExprBase<D>::all() const { return torchtpu::all(derived()); }
template <class D> auto ExprBase<D>::all(const Dims& d, bool k) const { return torchtpu::all(derived(), d, k); }
template <class D> auto ExprBase<D>::argmax() const { return torchtpu::argmax(derived()); }
template <class D> auto ExprBase<D>::argmax(int64_t d, bool k) const { return torchtpu::argmax(derived(), d, k); }
template <class D> auto ExprBase<D>::argmin() const { return torchtpu::argmin(derived()); }
template <class D> auto ExprBase<D>::argmin(int64_t d, bool k) const { return torchtpu::argmin(derived(), d, k); }
template <class D> auto ExprBase<D>::softmax(int64_t d) const { return torchtpu::softmax(derived(), d); }
template <class D> auto ExprBase<D>::log_softmax(int64_t d) const { return torchtpu::log_softmax(derived(), d); }

template <element T, int R>
Tensor<T, R> Tensor<T, R>::clone() const {
  require_defined("clone");
  if (!device().is_cpu()) {  // a copy on the same device (device/lower.hpp)
    Tensor<T> out;
    detail::materialize(out, *this);
    return Tensor<T, R>(out);
  }
  Tensor<T> out = Tensor<T>::empty(sizes_);
  if (out.numel()) detail::copy_into(out, *this);
  return Tensor<T, R>(out);
}

/// Sets every element to `v` (converted to T).
template <element T, int R>
template <arithmetic_scalar S>
Tensor<T, R>& Tensor<T, R>::fill_(S v) {
  require_defined("fill_");
  detail::check_no_internal_overlap("fill_", sizes_, strides_);
  if (!device().is_cpu()) return copy_(ScalarNode<T>(convert<T>(v)));  // uploads the value
  if (numel()) detail::elementwise_into(*this, ScalarNode<T>(convert<T>(v)));
  return *this;
}

/// In place `*this = *this + e`.
template <element T, int R> template <class E>
Tensor<T, R>& Tensor<T, R>::operator+=(const E& e) { return write_checked("add_", add(*this, e)); }
/// In place `*this = *this - e`.
template <element T, int R> template <class E>
Tensor<T, R>& Tensor<T, R>::operator-=(const E& e) { return write_checked("sub_", sub(*this, e)); }
/// In place `*this = *this * e`.
template <element T, int R> template <class E>
Tensor<T, R>& Tensor<T, R>::operator*=(const E& e) { return write_checked("mul_", mul(*this, e)); }
/// In place `*this = *this / e`.
template <element T, int R> template <class E>
Tensor<T, R>& Tensor<T, R>::operator/=(const E& e) { return write_checked("div_", div(*this, e)); }

}  // namespace torchtpu
