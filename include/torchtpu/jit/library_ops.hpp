// torchtpu/jit/library_ops.hpp — model graphs' door to the operator library (ops/library.hpp):
// `register_library_ops` makes one registry entry per op of `ops::LibraryOps`, whose kernel
// passes the node's inputs to the op's one definition by its aten schema; `to_arg` converts a
// graph value into an op argument (also for the lowering, jit/lower.hpp). No per-op code here.
#pragma once
#include <string>       // std::string
#include <type_traits>  // std::type_identity, std::is_empty_v
#include <vector>       // std::vector

#include "../ops/all.hpp"  // LibraryOps, ops::call_args, ops::Arg
#include "../ops/region.hpp"  // region_op_id (UnaryOps that are region steps)
#include "kernels.hpp"      // with_epilogue (fused activations)
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
      // float32 -> float32 ops are members of run-time regions (jit/region.hpp)
      if constexpr (ops::region_op_id<Op>() >= 0) d.region = RegionRole{RegionRole::Kind::Unary, ops::region_op_id<Op>()};
      r.add(std::move(d));
    }
  });
}

/// True for a library op that fuses a following activation (`static constexpr bool
/// accepts_epilogue = true;`, ops/conv.hpp). Such an op also has the cpu entry
///
///     template <element T, class Ep> static void cpu(std::span<const Tensor<T>> in, const Args&, Tensor<T>& out, const Ep& ep);
///
/// where `ep(dest, e)` stores the activation of expression `e` into `dest` (a Tensor<T> of
/// `e`'s shape; `ep(out, out)` applies it in place).
template <class Op>
concept fuses_epilogue = requires { Op::accepts_epilogue; } && Op::accepts_epilogue;

/// Stores `ep(e)` into `dest` (one fused pass; kernels::with_epilogue).
struct EpilogueStore {
  const Epilogue& ep;  ///< the activation
  /// `dest = ep(e)`.
  template <class D, class E>
  void operator()(D dest, const E& e) const {
    kernels::with_epilogue(ep, e, [&](const auto& x) { dest.copy_(x); });
  }
};

/// Runs library op `Op` (see `fuses_epilogue`) on a node's arguments with activation `ep`
/// fused into its cpu kernel; on a PJRT device, the op, then the activation as an expression.
/// **Errors:** as `ops::call_args`.
template <fuses_epilogue Op>
AnyTensor call_with_epilogue(std::span<const ops::Arg> args, const Epilogue& ep) {
  static const ops::Schema s = ops::parse_schema(Op::schema);
  const ops::ArgReader r(s, args);
  std::vector<AnyTensor> t;
  if constexpr (requires { Op::tensors(r); }) t = Op::tensors(r);
  else t = r.tensors();
  const typename Op::Args a = ops::detail::resolved<Op>(t, Op::args(r));
  const std::vector<ops::TensorMeta> metas = ops::detail::metas_of(t);
  const ops::TensorMeta out = ops::detail::checked_infer<Op>(metas, a);
  return AnyTensor::dispatch(out.dtype, [&]<class T>(std::type_identity<T>) -> AnyTensor {
    if constexpr (Op::dtypes.has(dtype_of<T>())) {
      if (!out.device.is_cpu()) {
        const Tensor<T> y = ops::call<Op>(t, a).template get<T>();
        Tensor<T> z;
        kernels::with_epilogue(ep, y, [&](const auto& x) { z = Tensor<T>(x); });
        return AnyTensor(z);
      }
      std::vector<Tensor<T>> typed;
      for (const AnyTensor& x : t) typed.push_back(ops::detail::as_dtype<T>(x));
      Tensor<T> y = Tensor<T>::empty(out.sizes);
      Op::template cpu<T>(std::span<const Tensor<T>>(typed), a, y, EpilogueStore{ep});
      return AnyTensor(y);
    } else {
      throw TypeError(std::string(Op::aten) + ": internal: no cpu kernel for " + std::string(dtype_name(dtype_of<T>())));
    }
  });
}

/// Adds a registry entry for every op of the operator library (its aten name; kernel: the
/// op's definition via `ops::call_args`; ops that declare `accepts_epilogue` fuse the
/// activation that follows them, `call_with_epilogue`).
inline void register_library_ops(Registry& r) {
  ops::LibraryOps::for_each([&r]<class Op>(std::type_identity<Op>) {
    OpDef d;
    d.name = std::string(Op::aten);
    if constexpr (fuses_epilogue<Op>) d.accepts_epilogue = true;
    if constexpr (requires { Op::in_place; }) d.in_place = Op::in_place;  // index_put_: writes into self (call_args)
    d.kernel = [](OpContext& c) {
      std::vector<ops::Arg> args;
      args.reserve(c.in.size());
      for (const Value* v : c.in) args.push_back(to_arg(*v));
      if constexpr (fuses_epilogue<Op>) {
        if (c.epilogue.active()) {
          if (c.out.size() != 1)
            throw ValueError(std::string(Op::aten) + ": the node has " + std::to_string(c.out.size()) + " outputs, the op 1 result");
          c.out[0] = Value(call_with_epilogue<Op>(args, c.epilogue));
          return;
        }
      }
      std::vector<AnyTensor> r = ops::call_args<Op>(args);
      // a node may have more outputs than the op computes (embedding_bag's offset2bag,
      // bag_size, max_indices: used by gradients only); those stay None, and reading one as a
      // tensor is a TypeError naming None
      if (r.size() > c.out.size())
        throw ValueError(std::string(Op::aten) + ": the node has " + std::to_string(c.out.size()) + " outputs, the op " +
                         std::to_string(r.size()) + " results");
      for (size_t k = 0; k < r.size(); ++k) c.out[k] = Value(std::move(r[k]));
    };
    r.add(std::move(d));
  });
}

}  // namespace torchtpu::jit
