// torchtpu/jit/library_ops.hpp — model graphs' door to the operator library (ops/library.hpp):
// `register_library_ops` makes one registry entry per op of `ops::LibraryOps`, whose kernel
// passes the node's inputs to the op's one definition by its aten schema; `to_arg` converts a
// graph value into an op argument (also for the lowering, jit/lower.hpp). No per-op code here.
#pragma once
#include <concepts>     // std::same_as
#include <cstdint>      // uint8_t
#include <optional>     // std::optional (run_conv_chain)
#include <span>         // std::span
#include <memory>       // std::shared_ptr, std::make_shared
#include <string>       // std::string
#include <type_traits>  // std::type_identity, std::is_empty_v
#include <vector>       // std::vector

#include "../core/factories.hpp"  // full (a number as a 0-dim tensor)
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

/// One-operand op struct `Op` (ops::UnaryOps) on a tensor of any dtype: the typed expression,
/// the result dtype by the op's policy. **Errors:** TypeError for an `integral_only` op on a
/// floating tensor.
template <class Op>
AnyTensor unary_any(const AnyTensor& x) {
  return x.visit([]<class T>(const Tensor<T>& t) -> AnyTensor {
    if constexpr (requires { Op::integral_only; } && !(std::is_integral_v<T>)) {
      throw TypeError(std::string(Op::aten) + ": not defined for " + std::string(dtype_name(dtype_of<T>())) +
                      " tensors (bool and integers only); operand " + to_string(t.sizes()));
    } else {
      using R = typename Op::template result<T>;
      return AnyTensor(Tensor<R>(make_map(Op{}, t)));
    }
  });
}

/// Adds a registry entry for every op of `ops::UnaryOps` (its
/// aten name; kernel: the typed expression on the input's dtype, the result dtype by the op's
/// policy: integers to float32 for math functions, bool for predicates; a number gives a
/// number, as TorchScript's scalar overloads: `-n` on an int). Ops with hand-written
/// entries (activations that fuse as epilogues) replace these when registered afterwards.
inline void register_elementwise_ops(Registry& r) {
  ops::UnaryOps::for_each([&r]<class Op>(std::type_identity<Op>) {
    {
      OpDef d;
      d.name = std::string(Op::aten);
      d.kernel = [](OpContext& c) {
        const Value& v = c.arg(0, Op::aten.data());
        if (v.is_scalar() && !v.is_tensor()) {
          const AnyTensor x = v.is_bool() ? AnyTensor(torchtpu::full<bool>(Dims{}, v.to_bool()))
                              : v.is_int() ? AnyTensor(torchtpu::full<int64_t>(Dims{}, v.to_int()))
                                           : AnyTensor(torchtpu::full<double>(Dims{}, v.to_double()));
          const AnyTensor y = unary_any<Op>(x);
          if (y.dtype() == ScalarType::Bool) c.out[0] = Value(bool(y.get<bool>().contiguous().data_ptr()[0]));
          else if (is_floating(y.dtype()))
            c.out[0] = Value(double(ops::detail::to_dtype(y, ScalarType::Double).get<double>().contiguous().data_ptr()[0]));
          else c.out[0] = Value(int64_t(ops::detail::to_dtype(y, ScalarType::Int64).get<int64_t>().contiguous().data_ptr()[0]));
          return;
        }
        c.out[0] = Value(unary_any<Op>(v.any(Op::aten.data())));
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

/// Stores `ep(e)` into `dest` (one fused pass; kernels::with_epilogue), or with a residual
/// `ep(e + r)`, r the residual's elements at dest's positions.
struct EpilogueStore {
  const Epilogue& ep;  ///< the activation
  /// The op's output (contiguous), which every `dest` is a view of (with `residual`).
  const void* out = nullptr;
  /// A `Tensor<T>` (contiguous, the output's shape and dtype) whose elements at dest's
  /// positions are added before the activation, or null.
  const void* residual = nullptr;
  /// `dest = ep(e)`, or `ep(e + residual)`.
  template <class D, class E>
  void operator()(D dest, const E& e) const {
    if (!residual) {
      kernels::with_epilogue(ep, e, [&](const auto& x) { dest.copy_(x); });
      return;
    }
    using T = typename D::value_type;
    const Tensor<T>& r = *static_cast<const Tensor<T>*>(residual);
    const int64_t off = int64_t(dest.data_ptr() - static_cast<const T*>(out));  // dest's first element in the output
    const Tensor<T> rv(r.storage(), dest.sizes(), dest.strides(), r.storage_offset() + off);
    kernels::with_epilogue(ep, torchtpu::add(e, rv), [&](const auto& x) { dest.copy_(x); });
  }
};

/// `y` (a library op's result) plus `other` by the graph's own `aten::add` (alpha 1:
/// broadcasting, dtype promotion and a number `other` as torch), then activation `act`: the
/// unfused result of a fused residual add, for what `call_with_epilogue` does not fuse.
inline AnyTensor residual_unfused(const AnyTensor& y, const Value& other, const Epilogue& act) {
  static const std::shared_ptr<const OpDef> add = registry().find("aten::add");
  const Value yv(y), alpha(int64_t(1));
  const Value* in[3] = {&yv, &other, &alpha};
  Value out[1];
  OpContext ctx{std::span<const Value* const>(in, 3), std::span<Value>(out, 1), Epilogue{}, nullptr};
  add->kernel(ctx);
  return act.active() ? kernels::activation_any(act, out[0].any()) : out[0].any();
}

/// Runs library op `Op` (see `fuses_epilogue`) on tensor operands `t` (schema order) with
/// arguments `a` and activation `ep` fused into its cpu kernel; on a PJRT device, the op, then
/// the activation as an expression. With `ep.residual`, `residual` (the other operand of the
/// fused `aten::add`) is added before the activation: in the kernel's pass when it is a cpu
/// float32/float64 tensor of the result's shape and dtype, else by `residual_unfused` after the
/// op. **Errors:** as `ops::call`, and as `aten::add` for the residual.
template <fuses_epilogue Op>
AnyTensor call_with_epilogue(std::span<const AnyTensor> t, const typename Op::Args& args, const Epilogue& ep,
                             const Value* residual = nullptr) {
  const typename Op::Args a = ops::detail::resolved<Op>(t, args);
  const auto metas = ops::detail::metas_of(t);
  const ops::TensorMeta out = ops::detail::checked_infer<Op>(metas, a);
  Epilogue act = ep;  // the activation alone (after the residual add)
  act.residual = false;
  if (ep.residual) {
    if (!residual) throw ValueError(std::string(Op::aten) + ": internal: a fused residual add without its operand");
    const bool fused = out.device.is_cpu() && residual->is_tensor() && residual->any().device().is_cpu() &&
                       residual->any().dtype() == out.dtype && residual->any().sizes() == out.sizes &&
                       (out.dtype == ScalarType::Float || out.dtype == ScalarType::Double);
    if (!fused) {
      Epilogue none;
      return residual_unfused(call_with_epilogue<Op>(t, args, none), *residual, act);
    }
  }
  return AnyTensor::dispatch(out.dtype, [&]<class T>(std::type_identity<T>) -> AnyTensor {
    if constexpr (Op::dtypes.has(dtype_of<T>())) {
      if (!out.device.is_cpu()) {
        const Tensor<T> y = ops::call<Op>(t, a).template get<T>();
        Tensor<T> z;
        kernels::with_epilogue(ep, y, [&](const auto& x) { z = Tensor<T>(x); });
        return AnyTensor(z);
      }
      const ops::detail::OperandList<Tensor<T>> typed(
          t, [](const AnyTensor& x) { return x.defined() ? ops::detail::as_dtype<T>(x) : Tensor<T>(); });
      Tensor<T> y = Tensor<T>::empty(out.sizes);
      if (ep.residual) {
        const Tensor<T> r = residual->any().get<T>().contiguous();
        Op::template cpu<T>(std::span<const Tensor<T>>(typed), a, y, EpilogueStore{act, y.data_ptr(), &r});
      } else {
        Op::template cpu<T>(std::span<const Tensor<T>>(typed), a, y, EpilogueStore{ep});
      }
      return AnyTensor(y);
    } else {
      throw TypeError(std::string(Op::aten) + ": internal: no cpu kernel for " + std::string(dtype_name(dtype_of<T>())));
    }
  });
}

namespace detail {

/// A library op's node with its arguments read once, when the graph was finalized
/// (`prepare_library_call`): the op's `Args` and where each tensor operand comes from.
template <class Op>
struct PreparedLibraryCall {
  /// One tensor operand, in the order `Op::tensors` / `ArgReader::tensors` give them.
  struct Operand {
    enum class Kind : uint8_t {
      Fixed,  ///< a constant (or an absent optional tensor): `fixed`
      Input,  ///< the tensor computed at run time into node input `input`
      List    ///< every tensor of the list computed at run time into node input `input`
    };
    Kind kind = Kind::Fixed;
    size_t input = 0;
    AnyTensor fixed;
  };
  typename Op::Args args{};       ///< `Op::args` of the node's constant arguments
  std::vector<Operand> operands;  ///< the tensor operands
};

/// True when `a` and `b` are the same tensor handle (storage, offset, sizes, strides, dtype).
inline bool same_tensor(const AnyTensor& a, const AnyTensor& b) {
  return a.defined() && b.defined() && a.storage() == b.storage() && a.dtype() == b.dtype() &&
         a.storage_offset() == b.storage_offset() && a.sizes() == b.sizes() && a.strides() == b.strides();
}

/// OpDef::prepare of library op `Op`: reads the node's arguments through `Op::args` and
/// `Op::tensors` once, with a placeholder tensor for each tensor computed at run time, and
/// keeps the result when it is the same on every run: null (the kernel reads the arguments on
/// each run) when a non-tensor argument is computed at run time, when `Op::args` reads an
/// argument computed at run time (other than asking whether it is None: a run-time tensor
/// never is, which the kernel checks), or when an operand is not a node input as it is (an
/// overload that makes a tensor from a Scalar).
template <class Op>
std::shared_ptr<const void> prepare_library_call(std::span<const Value* const> in) {
  if constexpr (requires { Op::in_place; }) {
    return nullptr;  // index_put_ writes into its operand: the general path
  } else {
    static const ops::Schema s = ops::parse_schema(Op::schema);
    if (in.size() > s.args.size() || s.args.size() > 64) return nullptr;
    std::vector<ops::Arg> args;
    std::vector<AnyTensor> tags(in.size());  // the placeholders of run-time tensors
    bool runtime_list = false;
    for (size_t i = 0; i < in.size(); ++i) {
      if (in[i]) {
        args.push_back(to_arg(*in[i]));
        continue;
      }
      const ops::ArgType& type = s.args[i].type;
      if (type.base != ops::ArgType::Base::Tensor) return nullptr;  // a number or list computed at run time
      tags[i] = AnyTensor(Tensor<float>::empty(Dims{}));
      if (type.list) {
        runtime_list = true;
        args.push_back(ops::Arg(std::vector<AnyTensor>{tags[i]}));
      } else {
        args.push_back(ops::Arg(tags[i]));
      }
    }
    const ops::ArgReader r(s, args);
    auto p = std::make_shared<PreparedLibraryCall<Op>>();
    p->args = Op::args(r);
    const uint64_t read = r.read();  // before the tensors are gathered (which reads them all)
    for (size_t i = 0; i < in.size(); ++i)
      if (!in[i] && ((read >> i) & 1u)) return nullptr;  // Op::args read a run-time value
    std::vector<AnyTensor> t;
    if constexpr (requires { Op::tensors(r); }) {
      if (runtime_list) return nullptr;  // a list the op reads itself (index's None entries)
      t = Op::tensors(r);
    } else {
      t = r.tensors();
    }
    for (const AnyTensor& x : t) {
      using Kind = typename PreparedLibraryCall<Op>::Operand::Kind;
      typename PreparedLibraryCall<Op>::Operand o;
      if (!x.defined()) {
        p->operands.push_back(o);  // an absent optional tensor
        continue;
      }
      bool found = false;
      for (size_t i = 0; i < in.size() && !found; ++i) {
        if (in[i]) {
          if (in[i]->is_tensor() && same_tensor(x, in[i]->any())) found = true;
          else if (in[i]->kind() == Value::Kind::TensorList)
            for (const AnyTensor& e : in[i]->anys()) found = found || same_tensor(x, e);
          if (found) o.fixed = x;
        } else if (same_tensor(x, tags[i])) {
          found = true;
          o.kind = s.args[i].type.list ? Kind::List : Kind::Input;
          o.input = i;
        }
      }
      if (!found) return nullptr;  // made by Op::tensors (scatter.value's Scalar): per run
      p->operands.push_back(std::move(o));
    }
    return p;
  }
}

/// The tensor operands of a prepared node (`prepare_library_call`) from its inputs `c.in`
/// into `t`; false when an input is not the tensor (or tensor list) the node was prepared for
/// (the kernel then takes the general path, which reports it).
template <class Op>
bool prepared_operands(const PreparedLibraryCall<Op>& p, const OpContext& c, ops::detail::OperandList<AnyTensor>& t) {
  using Kind = typename PreparedLibraryCall<Op>::Operand::Kind;
  t.reserve(p.operands.size());
  for (const auto& o : p.operands) {
    if (o.kind == Kind::Fixed) {
      t.push_back(o.fixed);
      continue;
    }
    if (o.input >= c.in.size()) return false;
    const Value& v = *c.in[o.input];
    if (o.kind == Kind::Input) {
      if (!v.is_tensor()) return false;
      t.push_back(v.any());
    } else {
      if (v.kind() != Value::Kind::TensorList) return false;
      t.append(v.anys().begin(), v.anys().end());
    }
  }
  return true;
}

/// OpDef::chain_role of convolution op `Op` (see there) from its prepared state.
template <class Op>
int conv_chain_role(const void* state) {
  if (!state) return 0;
  const auto& p = *static_cast<const PreparedLibraryCall<Op>*>(state);
  using Kind = typename PreparedLibraryCall<Op>::Operand::Kind;
  if (p.operands.size() < 2 || p.operands.size() > 3 || p.operands[0].kind != Kind::Input) return 0;
  for (size_t i = 1; i < p.operands.size(); ++i)
    if (p.operands[i].kind != Kind::Fixed || (p.operands[i].fixed.defined() && p.operands[i].fixed.dtype() != ScalarType::Float))
      return 0;
  const AnyTensor& w = p.operands[1].fixed;
  if (!w.defined() || w.dim() != 4 || p.args.transposed) return 0;
  const Dims& ws = w.sizes();
  if (p.args.groups == 1 && ws[2] == 1 && ws[3] == 1) return 1;
  if (ws[1] == 1 && p.args.groups == ws[0]) return 2;
  return 0;
}

/// OpDef::run_chain of convolution op `Op`: the nodes' geometries from their prepared
/// arguments and the input's shape (ops/conv.hpp conv_geom), run by `conv2d_chain` when the
/// input is a float32 cpu tensor, every layer fits it (`conv_chain_fits`), the planes are large
/// enough for it to pay (`conv_chain_pays`) and a residual is a
/// float32 cpu tensor of the result's shape; each node's epilogue as `call_with_epilogue`
/// applies it. Nothing otherwise.
template <class Op>
std::optional<Value> run_conv_chain(const ChainCall& c) {
  using Layer = ops::detail::ConvChainLayer<EpilogueStore>;
  const size_t n = c.states.size();
  if (n < 2 || n > 3 || c.epilogues.size() != n || !c.input || !c.input->is_tensor()) return std::nullopt;
  const Tensor<float>* xf = c.input->any().get_if<float>();
  if (!xf || !xf->device().is_cpu() || xf->dim() != 4) return std::nullopt;
  Layer layers[3];
  Tensor<float> weight[3], bias[3];
  ops::TensorMeta cur{ScalarType::Float, xf->sizes(), Device{}, true};
  for (size_t i = 0; i < n; ++i) {
    if (!c.states[i] || conv_chain_role<Op>(c.states[i]) == 0) return std::nullopt;
    if (i + 1 < n && c.epilogues[i].residual) return std::nullopt;
    const auto& p = *static_cast<const PreparedLibraryCall<Op>*>(c.states[i]);
    const AnyTensor& w = p.operands[1].fixed;
    ops::TensorMeta metas[3] = {cur, ops::TensorMeta::of(w), {}};
    size_t count = 2;
    if (p.operands.size() == 3) metas[count++] = ops::TensorMeta::of(p.operands[2].fixed);
    try {
      layers[i].g = ops::detail::conv_geom(std::span<const ops::TensorMeta>(metas, count), p.args, Op::aten);
    } catch (const Error&) {
      return std::nullopt;  // the node, run alone, reports it
    }
    weight[i] = w.template get<float>().contiguous();
    layers[i].weight = &weight[i];
    if (count == 3) {
      bias[i] = p.operands[2].fixed.template get<float>().contiguous();
      layers[i].bias = &bias[i];
    }
    cur.sizes = layers[i].g.out_sizes();
  }
  if (!ops::detail::conv_chain_fits(std::span<const Layer>(layers, n)) ||
      !ops::detail::conv_chain_pays(std::span<const Layer>(layers, n)))
    return std::nullopt;
  Tensor<float> r;
  const Epilogue& last = c.epilogues[n - 1];
  if (last.residual) {
    if (!c.residual || !c.residual->is_tensor()) return std::nullopt;
    const Tensor<float>* rf = c.residual->any().get_if<float>();
    if (!rf || !rf->device().is_cpu() || rf->sizes() != cur.sizes) return std::nullopt;
    r = rf->contiguous();
  }
  Epilogue act = last;  // the activation alone (after the residual add)
  act.residual = false;
  const Tensor<float> x = xf->contiguous();
  Tensor<float> y = Tensor<float>::empty(cur.sizes);
  std::optional<EpilogueStore> eps[3];
  for (size_t i = 0; i < n; ++i) {
    if (i + 1 < n) eps[i].emplace(EpilogueStore{c.epilogues[i]});
    else if (last.residual) eps[i].emplace(EpilogueStore{act, y.data_ptr(), &r});
    else eps[i].emplace(EpilogueStore{last});
    layers[i].ep = &*eps[i];
  }
  ops::detail::conv2d_chain(std::span<const Layer>(layers, n), x, y);
  return Value(AnyTensor(y));
}

/// Writes a library op's results `r` into the node's outputs. **Errors:** ValueError when the
/// op computes more results than the node has outputs.
template <class Op>
void store_results(OpContext& c, std::span<AnyTensor> r) {
  // a node may have more outputs than the op computes (embedding_bag's offset2bag,
  // bag_size, max_indices: used by gradients only); those stay None, and reading one as a
  // tensor is a TypeError naming None
  if (r.size() > c.out.size())
    throw ValueError(std::string(Op::aten) + ": the node has " + std::to_string(c.out.size()) + " outputs, the op " +
                     std::to_string(r.size()) + " results");
  for (size_t k = 0; k < r.size(); ++k) c.out[k] = Value(std::move(r[k]));
}

}  // namespace detail

/// Adds a registry entry for every op of the operator library (its aten name; kernel: the
/// op's definition via `ops::call_all`, its arguments read once at load where they are
/// constants (`detail::prepare_library_call`), otherwise by `ops::call_args` on each run; ops
/// that declare `accepts_epilogue` fuse the activation that follows them,
/// `call_with_epilogue`).
inline void register_library_ops(Registry& r) {
  ops::LibraryOps::for_each([&r]<class Op>(std::type_identity<Op>) {
    OpDef d;
    d.name = std::string(Op::aten);
    if constexpr (fuses_epilogue<Op>) d.accepts_epilogue = d.accepts_residual = true;
    if constexpr (fuses_epilogue<Op> && std::same_as<typename Op::Args, ops::detail::ConvArgs>) {
      d.chain_role = &detail::conv_chain_role<Op>;
      d.run_chain = &detail::run_conv_chain<Op>;
    }
    if constexpr (requires { Op::in_place; }) d.in_place = Op::in_place;  // index_put_: writes into self (call_args)
    d.prepare = &detail::prepare_library_call<Op>;
    d.kernel = [](OpContext& c) {
      // a fused residual add's other operand: the node's last input (Graph::fuse), not the op's
      const Value* residual = nullptr;
      if constexpr (fuses_epilogue<Op>) {
        if (c.epilogue.active() && c.out.size() != 1)
          throw ValueError(std::string(Op::aten) + ": the node has " + std::to_string(c.out.size()) + " outputs, the op 1 result");
        if (c.epilogue.residual) {
          if (c.in.empty()) throw ValueError(std::string(Op::aten) + ": internal: a fused residual add without its operand");
          residual = c.in.back();
          c.in = c.in.first(c.in.size() - 1);
        }
      }
      if (c.state) {
        const auto& p = *static_cast<const detail::PreparedLibraryCall<Op>*>(c.state);
        ops::detail::OperandList<AnyTensor> t;
        if (detail::prepared_operands(p, c, t)) {
          if constexpr (fuses_epilogue<Op>) {
            if (c.epilogue.active()) {
              c.out[0] = Value(call_with_epilogue<Op>(t, p.args, c.epilogue, residual));
              return;
            }
          }
          if constexpr (ops::multi_result<Op>) {  // the results as an array, not a list (no heap)
            auto r = ops::call_results<Op>(t, p.args);
            detail::store_results<Op>(c, std::span<AnyTensor>(r));
          } else {
            AnyTensor r = ops::call<Op>(t, p.args);
            detail::store_results<Op>(c, std::span<AnyTensor>(&r, 1));
          }
          return;
        }
      }
      std::vector<ops::Arg> args;
      args.reserve(c.in.size());
      for (const Value* v : c.in) args.push_back(to_arg(*v));
      if constexpr (fuses_epilogue<Op>) {
        if (c.epilogue.active()) {
          static const ops::Schema s = ops::parse_schema(Op::schema);
          const ops::ArgReader rd(s, args);
          std::vector<AnyTensor> t;
          if constexpr (requires { Op::tensors(rd); }) t = Op::tensors(rd);
          else t = rd.tensors();
          c.out[0] = Value(call_with_epilogue<Op>(t, Op::args(rd), c.epilogue, residual));
          return;
        }
      }
      std::vector<AnyTensor> r = ops::call_args<Op>(args);
      detail::store_results<Op>(c, std::span<AnyTensor>(r));
    };
    r.add(std::move(d));
  });
}

}  // namespace torchtpu::jit
