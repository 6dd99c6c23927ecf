// torchtpu/jit/library_ops.hpp — model graphs' door to the operator library (ops/library.hpp):
// `register_library_ops` makes one registry entry per op of `ops::LibraryOps`, whose kernel
// passes the node's inputs to the op's one definition by its aten schema; `to_arg` converts a
// graph value into an op argument (also for the lowering, jit/lower.hpp). No per-op code here.
#pragma once
#include <string>       // std::string
#include <type_traits>  // std::type_identity, std::is_empty_v
#include <vector>       // std::vector

#include "../ops/all.hpp"  // LibraryOps, ops::call_args, ops::Arg
#include "registry.hpp"    // Registry, OpDef, OpContext
#include "value.hpp"       // Value, FloatTensor

namespace torchtpu::jit {

/// A graph value as an op argument (tensors become AnyTensors sharing their storage).
inline ops::Arg to_arg(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::None: return ops::Arg();
    case Value::Kind::Bool: return ops::Arg(v.to_bool());
    case Value::Kind::Int: return ops::Arg(v.to_int());
    case Value::Kind::Double: return ops::Arg(v.to_double());
    case Value::Kind::String: return ops::Arg(v.str());
    case Value::Kind::IntList: return ops::Arg(v.to_ints());
    case Value::Kind::DoubleList: return ops::Arg(v.to_doubles());
    case Value::Kind::Tensor: return ops::Arg(v.any());
    case Value::Kind::TensorList: return ops::Arg(v.anys());
  }
  return ops::Arg();
}

/// Adds a registry entry for every op of `ops::UnaryOps` (its
/// aten name; kernel: the typed expression on the input's dtype, the result dtype by the op's
/// policy: integers to float32 for math functions, bool for predicates). Ops with hand-written
/// entries (activations that fuse as epilogues) replace these when registered afterwards.
inline void register_elementwise_ops(Registry& r) {
  ops::UnaryOps::for_each([&r]<class Op>(std::type_identity<Op>) {
    {
      OpDef d;
      d.name = std::string(Op::aten);
      d.kernel = [](OpContext& c) {
        const AnyTensor& x = c.arg(0, Op::aten.data()).any(Op::aten.data());
        c.out[0] = Value(x.visit([]<class T>(const Tensor<T>& t) -> AnyTensor {
          using R = typename Op::template result<T>;
          return AnyTensor(Tensor<R>(make_map(Op{}, t)));
        }));
      };
      r.add(std::move(d));
    }
  });
}

/// Adds a registry entry for every op of the operator library (its aten name; kernel: the
/// op's definition via `ops::call_args`).
inline void register_library_ops(Registry& r) {
  ops::LibraryOps::for_each([&r]<class Op>(std::type_identity<Op>) {
    OpDef d;
    d.name = std::string(Op::aten);
    d.kernel = [](OpContext& c) {
      std::vector<ops::Arg> args;
      args.reserve(c.in.size());
      for (const Value* v : c.in) args.push_back(to_arg(*v));
      c.out[0] = Value(ops::call_args<Op>(args));
    };
    r.add(std::move(d));
  });
}

}  // namespace torchtpu::jit
