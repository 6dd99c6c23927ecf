// torchtpu/ops/all.hpp — the list of every op of the operator library (ops/library.hpp), the
// one place the other front ends learn which ops exist: the eager PJRT devices build their
// lowering table from it (device/lower.hpp), model graphs their registry entries (jit/
// library_ops.hpp and jit/lower.hpp). Adding an op to the library = its struct in its family
// file + one entry here. Not included by the umbrella header's expression part.
#pragma once
#include <type_traits>  // std::type_identity

#include "shape.hpp"  // CatOp, StackOp

namespace torchtpu::ops {

/// A list of op structs.
template <class... Ops>
struct OpList {
  /// Calls `f(std::type_identity<Op>{})` for each op, in order.
  template <class F>
  static void for_each(F&& f) {
    (f(std::type_identity<Ops>{}), ...);
  }
};

/// Every library op.
using LibraryOps = OpList<CatOp, StackOp>;

}  // namespace torchtpu::ops
