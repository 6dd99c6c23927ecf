// torchtpu/device/dispatch.hpp — the small forward header fuse/materialize.hpp uses to send
// expressions with operands on PJRT devices to the device path (defined in device/lower.hpp).
#pragma once
#include <tuple>  // std::apply

#include "../core/forward.hpp"  // Tensor, expression, tensor_handle
#include "../expr/nodes.hpp"    // MapNode, ReduceNode, ArgReduceNode, SoftmaxNode, ContractNode

namespace torchtpu::detail {

/// Calls `f(tensor)` for every tensor leaf of `e`, left to right (scalars are skipped).
template <expression E, class F>
void for_each_tensor_leaf(const E& e, F&& f) {
  if constexpr (tensor_handle<E>) {
    f(e);
  } else if constexpr (requires { e.args; }) {
    for_each_in(e.args, [&](const auto& a) { for_each_tensor_leaf(a, f); });
  } else if constexpr (requires { e.arg; }) {
    for_each_tensor_leaf(e.arg, f);
  } else if constexpr (requires { e.a; e.b; }) {
    for_each_tensor_leaf(e.a, f);
    for_each_tensor_leaf(e.b, f);
  }
}

/// True when `e` (or the destination) involves a PJRT device, so the CPU engine must not run it.
template <element T, int R, expression E>
bool needs_device_path(const Tensor<T, R>& dest, const E& e) {
  if (dest.defined() && !dest.device().is_cpu()) return true;
  bool any = false;
  for_each_tensor_leaf(e, [&any](const auto& t) { any |= t.defined() && !t.device().is_cpu(); });
  return any;
}

/// Materializes `e` into `dest` on a PJRT device (device/lower.hpp).
template <element T, int R, expression E>
void device_materialize(Tensor<T, R>& dest, const E& e);

}  // namespace torchtpu::detail
