// torchtpu/fuse/materialize.hpp — the one entry point that turns an expression into values in
// a tensor on the CPU: picks the plan for the root node (elementwise region, matmul with
// epilogue, reduction, softmax) and handles destinations that overlap the inputs.
#pragma once
#include <string>  // std::string

#include "../core/errors.hpp"  // ShapeError, DeviceError
#include "../device/dispatch.hpp"  // needs_device_path, device_materialize (PJRT devices)
#include "cpu.hpp"             // elementwise_into, reduce_into, ...

namespace torchtpu::detail {

template <class E> inline constexpr bool is_reduce = false;
template <class Op, class E> inline constexpr bool is_reduce<ReduceNode<Op, E>> = true;
template <class E> inline constexpr bool is_argreduce = false;
template <class Op, class E> inline constexpr bool is_argreduce<ArgReduceNode<Op, E>> = true;
template <class E> inline constexpr bool is_softmax = false;
template <class E, bool L> inline constexpr bool is_softmax<SoftmaxNode<E, L>> = true;

template <element T, int R, int R2>
void copy_into(const Tensor<T, R>& dest, const Tensor<T, R2>& src);

/// Write `e` into `dest` (shape already checked). `fresh`: dest was just allocated, so
/// nothing can alias it.
template <element T, int R, expression E>
void write_into(const Tensor<T, R>& dest, const E& e, bool fresh) {
  const bool same_shape = e.shape() == dest.sizes();
  if constexpr (is_reduce<E> || is_argreduce<E> || is_softmax<E>) {
    if (same_shape && (fresh || !overlaps_any(dest, e.arg))) {
      if constexpr (is_reduce<E>) reduce_into(dest, e);
      else if constexpr (is_argreduce<E>) argreduce_into(dest, e);
      else softmax_into(dest, e);
      return;
    }
    elementwise_into(dest, evaluate_new(e));
  } else if constexpr (is_contract<E>) {
    if (try_small_matmul(dest, e)) return;  // batch 1..4: the lean path (no aliasing possible)
    if constexpr (std::same_as<typename E::value_type, T>) {
      if (same_shape && dest.is_contiguous() &&
          (fresh || (!overlaps_any(dest, e.a) && !overlaps_any(dest, e.b)))) {
        matmul_into_contiguous(dest.data_ptr(), e, [](int64_t, int64_t, int64_t, int64_t) {});
        return;
      }
    }
    elementwise_into(dest, evaluate_new(e));
  } else if constexpr (tensor_handle<E> && std::same_as<typename E::value_type, T>) {
    // A copy between tensors of one dtype: untyped (fuse/elementwise.hpp, copy_elements).
    if (!fresh && overlaps_unsafely(dest, e)) {
      const Tensor<T> tmp = e.clone();  // NumPy's rule: through a temporary (a copy, never a view)
      copy_into(dest, tmp);
      return;
    }
    copy_into(dest, e);
  } else {
    if constexpr (contains_contract<E>()) {
      if (same_shape && try_small_matmul(dest, e)) return;  // batch 1..4: the lean path
      if (fresh || !overlaps_unsafely(dest, e)) {
        if (same_shape && try_matmul_epilogue(dest, e)) return;
        elementwise_into(dest, e);
        return;
      }
    } else {
      if (elementwise_region(dest, e, !fresh)) return;  // false: an operand overlaps dest
    }
    // NumPy's rule: evaluate into a temporary first
    if constexpr (std::same_as<typename E::value_type, T>) copy_into(dest, evaluate_new(e));
    else elementwise_into(dest, evaluate_new(e));
  }
}

template <element T, int R, int R2>
void copy_into(const Tensor<T, R>& dest, const Tensor<T, R2>& src) {
  copy_elements(dest.data_ptr(), dest.sizes(), dest.strides(), src.data_ptr(), src.sizes(), src.strides(),
                int(sizeof(T)));
}

template <expression E>
Tensor<typename E::value_type> evaluate_new(const E& e) {
  using V = typename E::value_type;
  Tensor<V> out = Tensor<V>::empty(e.shape());
  if (out.numel() != 0) write_into(out, e, true);
  return out;
}

template <element T, int R, expression E>
void materialize(Tensor<T, R>& dest, const E& e) {
  if (needs_device_path(dest, e)) return device_materialize(dest, e);  // device/frontend.hpp
  bool fresh = false;
  if (!dest.defined()) {
    dest = Tensor<T, R>(Tensor<T>::empty(e.shape()));
    fresh = true;
  } else if (!broadcastable_to(e.shape(), dest.sizes())) {
    throw ShapeError("assign: cannot write an expression of shape " + to_string(e.shape()) +
                     " into a tensor of shape " + to_string(dest.sizes()));
  }
  if (!dest.device().is_cpu())
    throw ValueError("assign: destination is on " + dest.device().str() +
                     "; CPU materialization needs a cpu tensor (use .cpu() or the device API)");
  if (dest.numel() == 0) return;
  write_into(dest, e, fresh);
}

}  // namespace torchtpu::detail

#include "../device/frontend.hpp"  // device_materialize (after the cpu path it falls back on)
