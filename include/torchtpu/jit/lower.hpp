// torchtpu/jit/lower.hpp — the compiled path of the run-time graph: lowers a whole Graph, for
// fixed input shapes, to one StableHLO module (weights as parameters, shape arithmetic folded
// on the host), compiles it once through the PJRT compilation cache and runs it on a PJRT
// device (tpu, the TPU emulator, cuda).
#pragma once
#include <algorithm>   // std::clamp, std::max
#include <cmath>       // INFINITY
#include <functional>  // std::function
#include <map>         // std::map
#include <memory>      // std::shared_ptr
#include <mutex>       // std::mutex
#include <string>      // std::string
#include <string_view> // std::string_view
#include <type_traits> // std::is_base_of_v
#include <utility>     // std::pair
#include <vector>      // std::vector

#include "../core/errors.hpp"           // UnsupportedOperator, ShapeError
#include "../device/pjrt/cache.hpp"     // CompilationCache
#include "../device/pjrt/client.hpp"    // Client, Buffer, Executable
#include "../device/stablehlo.hpp"      // stablehlo::Builder
#include "graph.hpp"                    // Graph, Node
#include "library_ops.hpp"              // to_arg; ops::LibraryOps (the operator library)

namespace torchtpu::jit {

namespace sh = torchtpu::stablehlo;

/// A graph value during lowering: a host value (folded constant: ints, lists, ...), a device
/// tensor (a StableHLO SSA value of known shape) or a list of device tensors.
struct LValue {
  /// Where a value is: on the host, on the device, or a list of device values.
  enum class Kind { Host, Device, DeviceList };
  /// Where the value is.
  Kind kind = Kind::Host;
  /// Host value (Kind::Host).
  Value host;
  /// Device value (Kind::Device).
  sh::Value dev;
  /// Device values (Kind::DeviceList).
  std::vector<sh::Value> list;
  /// A device value.
  static LValue of(sh::Value v) {
    LValue l;
    l.kind = Kind::Device;
    l.dev = std::move(v);
    return l;
  }
};

/// What a lowering sees: the builder, its inputs (device values, or host constants), and its
/// outputs to fill. `device(i)` turns a host tensor/number input into a device value.
struct LowerContext {
  /// The builder the op emits into.
  sh::Builder& b;
  /// The op's inputs.
  std::vector<LValue*> in;
  /// The op's outputs, set by the lowering.
  std::vector<LValue> out;
  /// Uploads or converts a host input to a device value.
  std::function<sh::Value(LValue&)> to_device;
  /// Input `i` as a device value. **Errors:** std::out_of_range for a bad index.
  sh::Value dev(size_t i) { return to_device(*in.at(i)); }
  /// Input `i` as a host value (`what` names it in errors). **Errors:** ValueError when it is not
  /// a host constant.
  const Value& host(size_t i, const char* what) {
    if (in.at(i)->kind != LValue::Kind::Host)
      throw ValueError(std::string(what) + ": argument " + std::to_string(i) + " must be a constant for lowering");
    return in[i]->host;
  }
};

/// A node's lowering into the StableHLO builder (same type as OpDef::lowering).
using GraphLowering = Lowering;

namespace lower {

inline std::vector<int64_t> vec(const Dims& d) { return std::vector<int64_t>(d.begin(), d.end()); }

/// A float32 splat constant of the given shape.
inline sh::Value splat(sh::Builder& b, double v, const std::vector<int64_t>& dims) {
  return b.constant(v, ScalarType::Float, dims);
}

/// NumPy-style broadcast of `x` to `dims`.
inline sh::Value bcast(sh::Builder& b, const sh::Value& x, const std::vector<int64_t>& dims) {
  if (x.dims == dims) return x;
  const size_t off = dims.size() - x.dims.size();
  std::vector<int64_t> map;
  for (size_t i = 0; i < x.dims.size(); ++i) map.push_back(int64_t(off + i));
  // size-1 dims that expand: reshape them away first (broadcast_in_dim needs equal or 1 sizes)
  return b.broadcast_in_dim(x, dims, map);
}

inline std::vector<int64_t> bshape(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> r(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < r.size(); ++i) {
    const int64_t x = i < r.size() - a.size() ? 1 : a[i - (r.size() - a.size())];
    const int64_t y = i < r.size() - b.size() ? 1 : b[i - (r.size() - b.size())];
    if (x != y && x != 1 && y != 1)
      throw ShapeError("lowering: shapes " + sh::shape_str(a) + " and " + sh::shape_str(b) + " do not broadcast");
    r[i] = x == 1 ? y : x;
  }
  return r;
}

/// Elementwise binary op on two device values, broadcasting.
inline sh::Value bin(sh::Builder& b, const char* op, const sh::Value& x, const sh::Value& y) {
  const auto d = bshape(x.dims, y.dims);
  return b.binary(op, bcast(b, x, d), bcast(b, y, d));
}

/// One-operand elementwise op struct `op` on `x`: the struct's own `lower` hook, or its
/// StableHLO name (`hlo`) — the lowering the eager devices use (device/lower.hpp), so a model
/// graph's elementwise node has no second definition. A floating op (floating_policy) computes
/// an integer or bool `x` in float32, as its cpu path does.
/// **Errors:** UnsupportedOperator when the op has neither.
template <class Op>
sh::Value lower_unary(sh::Builder& b, const Op& op, sh::Value x) {
  if constexpr (requires { Op::integral_only; })
    if (is_floating(x.dtype))
      throw TypeError(std::string(Op::aten) + ": not defined for " + std::string(dtype_name(x.dtype)) + " tensors (bool and integers only)");
  if constexpr (std::is_base_of_v<floating_policy, Op>)
    if (!is_floating(x.dtype)) x = b.convert(x, ScalarType::Float);
  if constexpr (requires(sh::Builder& bb, const sh::Value* v) { op.lower(bb, v); }) {
    return op.lower(b, &x);
  } else {
    constexpr std::string_view prefix = "stablehlo.";
    if (Op::hlo == "chlo.erf") return b.unary("erf", x);
    if (Op::hlo.substr(0, prefix.size()) == prefix) return b.unary(Op::hlo.substr(prefix.size()), x);
    throw UnsupportedOperator(std::string(Op::aten) + " has no StableHLO lowering");
  }
}

/// Two-operand elementwise op struct `op` on `x` and `y` (same dtype and shape): the struct's
/// own `lower` hook, else its `hlo` name, a comparison direction ("EQ".."GE") or a StableHLO op
/// ("stablehlo.maximum") — the names the eager devices lower by (device/lower.hpp).
/// **Errors:** UnsupportedOperator when the op has neither.
template <class Op>
sh::Value lower_binary(sh::Builder& b, const Op& op, const sh::Value& x, const sh::Value& y) {
  if constexpr (requires(sh::Builder& bb, const sh::Value* v) { op.lower(bb, v); }) {
    const sh::Value xs[2] = {x, y};
    return op.lower(b, xs);
  } else {
    constexpr std::string_view prefix = "stablehlo.";
    for (std::string_view d : {"EQ", "NE", "LT", "LE", "GT", "GE"})
      if (Op::hlo == d) return b.compare(d, x, y);
    if (Op::hlo.substr(0, prefix.size()) == prefix) return b.binary(Op::hlo.substr(prefix.size()), x, y);
    throw UnsupportedOperator(std::string(Op::aten) + " has no StableHLO lowering");
  }
}

/// Epilogue `ep` (a fused activation) applied to `x`: the activation's op struct lowered by
/// lower_unary, the same struct jit/kernels.hpp's with_epilogue runs on the cpu.
inline sh::Value act(sh::Builder& b, Epilogue ep, const sh::Value& x) {
  using K = Epilogue::Kind;
  switch (ep.kind) {
    case K::None: return x;
    case K::Relu: return lower_unary(b, ReluOp{}, x);
    case K::Clamp: {
      ClampOp op;
      op.lo = ep.lo;
      op.hi = ep.hi;
      return lower_unary(b, op, x);
    }
    case K::Sigmoid: return lower_unary(b, SigmoidOp{}, x);
    case K::Silu: return lower_unary(b, SiluOp{}, x);
    case K::Tanh: return lower_unary(b, TanhOp{}, x);
    case K::Gelu: return lower_unary(b, GeluOp{}, x);
    case K::GeluTanh: {
      GeluOp op;
      op.tanh_approx = true;
      return lower_unary(b, op, x);
    }
    case K::Hardsigmoid: return lower_unary(b, HardsigmoidOp{}, x);
    case K::Hardswish: return lower_unary(b, HardswishOp{}, x);
  }
  return x;
}

inline std::vector<int64_t> infer(const std::vector<int64_t>& want, int64_t numel, const char* op) {
  std::vector<int64_t> r = want;
  int64_t known = 1;
  int infer_at = -1;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r[i] == -1) infer_at = int(i);
    else known *= r[i];
  }
  if (infer_at >= 0) r[size_t(infer_at)] = known ? numel / known : 0;
  int64_t n = 1;
  for (int64_t x : r) n *= x;
  if (n != numel) throw ShapeError(std::string(op) + ": shape " + sh::shape_str(want) + " is invalid for input of size " + std::to_string(numel));
  return r;
}

inline int64_t wrap(int64_t d, size_t rank) { return d < 0 ? d + int64_t(rank) : d; }

inline sh::Value reduce_sum(sh::Builder& b, const sh::Value& x, std::vector<int64_t> dims) {
  return b.reduce(x, splat(b, 0, {}), sh::ReduceOp::Add, std::move(dims));
}

/// Keeps `x` (reduced over `dims`) broadcastable against the unreduced shape.
inline sh::Value keep(sh::Builder& b, const sh::Value& x, const std::vector<int64_t>& full,
                      const std::vector<int64_t>& dims) {
  std::vector<int64_t> s = full;
  for (int64_t d : dims) s[size_t(d)] = 1;
  return b.reshape(x, s);
}

/// The dtype of a lowering input: a device value's, a host tensor's, or a number's
/// (number_dtype: bool, int64, float32).
inline ScalarType dtype_of_lvalue(const LValue& v) {
  if (v.kind == LValue::Kind::Device) return v.dev.dtype;
  if (v.host.is_tensor()) return v.host.any().dtype();
  return number_dtype(v.host);
}

/// True for a tensor input (on the device or a host tensor), false for a number.
inline bool is_tensor_lvalue(const LValue& v) { return v.kind != LValue::Kind::Host || v.host.is_tensor(); }

/// A lowering input's part in type promotion (Operand): a number, a 0-dim or a dimensioned
/// tensor (on the device or on the host).
inline Operand operand_kind_of_lvalue(const LValue& v) {
  if (v.kind == LValue::Kind::Host) return operand_kind(v.host);
  if (v.kind == LValue::Kind::Device) return v.dev.dims.empty() ? Operand::ZeroDim : Operand::Dimensioned;
  return Operand::Dimensioned;
}

/// Input `i` of `c` as a device value of dtype `t`: a number as a constant of `t` (an int or
/// bool exactly), a tensor converted when its dtype differs.
inline sh::Value as_dtype(LowerContext& c, size_t i, ScalarType t) {
  const LValue& v = *c.in.at(i);
  if (v.kind == LValue::Kind::Host && v.host.is_scalar())
    return v.host.is_double() ? c.b.constant(v.host.to_double(), t) : c.b.constant_int(v.host.to_int(), t);
  sh::Value x = c.dev(i);
  return x.dtype == t ? x : c.b.convert(x, t);
}

inline sh::Value matmul(sh::Builder& b, sh::Value x, sh::Value y) {
  if (x.dims.size() < 2 || y.dims.size() < 2) throw ShapeError("lowering matmul: operands must be at least 2-D");
  const size_t rx = x.dims.size(), ry = y.dims.size();
  std::vector<int64_t> bx(x.dims.begin(), x.dims.end() - 2), by(y.dims.begin(), y.dims.end() - 2);
  const auto batch = bshape(bx, by);
  auto full = [&](sh::Value v, int64_t r0, int64_t r1) {
    std::vector<int64_t> d = batch;
    d.push_back(r0);
    d.push_back(r1);
    return bcast(b, v, d);
  };
  if (!batch.empty()) {
    x = full(x, x.dims[rx - 2], x.dims[rx - 1]);
    y = full(y, y.dims[ry - 2], y.dims[ry - 1]);
  }
  sh::DotDims dn;
  for (size_t i = 0; i < batch.size(); ++i) {
    dn.lhs_batch.push_back(int64_t(i));
    dn.rhs_batch.push_back(int64_t(i));
  }
  dn.lhs_contract = {int64_t(batch.size() + 1)};
  dn.rhs_contract = {int64_t(batch.size())};
  return b.dot_general(x, y, dn, sh::Precision::Highest);
}

/// True for a node kind that returns a view of its first input (a write into the view changes
/// the input): the whole-graph compile refuses an in-place library op that writes into one.
inline bool is_view_op(const std::string& kind) {
  static const char* const views[] = {
      "aten::slice", "aten::select", "aten::narrow", "aten::view", "aten::reshape", "aten::transpose", "aten::permute",
      "aten::expand", "aten::expand_as", "aten::squeeze", "aten::unsqueeze", "aten::t", "aten::flatten",
      "aten::unflatten", "aten::diagonal", "aten::as_strided", "aten::view_as", "aten::reshape_as", "aten::movedim",
      "aten::swapaxes", "aten::alias", "aten::unfold", "aten::detach", "aten::contiguous", "aten::numpy_T",
      "aten::split", "aten::split_with_sizes", "aten::chunk", "aten::unbind", "prim::ListUnpack", "aten::__getitem__"};
  for (const char* v : views)
    if (kind == v) return true;
  return false;
}

/// True for an in-place op of the operator library (`Op::in_place`: index_put_).
inline bool library_in_place(const std::string& kind) {
  bool r = false;
  ops::LibraryOps::for_each([&]<class Op>(std::type_identity<Op>) {
    if constexpr (requires { Op::in_place; }) r = r || kind == Op::aten;
  });
  return r;
}

/// The lowering of library op `Op` (ops/library.hpp): its tensor operands as device values
/// (lists flattened, host tensors uploaded as parameters), its other arguments read by its
/// schema from host constants, its dtype and shape rule, then `Op::lower`. An absent optional
/// tensor (`Tensor? weight=None`) is not an operand: the op's `args` reads it as None and
/// records which are present (ops/norm.hpp's header).
template <class Op>
void lower_library_op(LowerContext& c) {
  static const ops::Schema s = ops::parse_schema(Op::schema);
  std::vector<ops::Arg> args;
  std::vector<sh::Value> xs;
  for (size_t i = 0; i < c.in.size(); ++i) {
    LValue& l = *c.in[i];
    const bool tensor_arg = i < s.args.size() && s.args[i].type.base == ops::ArgType::Base::Tensor;
    if (!tensor_arg) {
      args.push_back(to_arg(c.host(i, s.name.c_str())));
      continue;
    }
    if (l.kind == LValue::Kind::Host && l.host.is_none() && s.args[i].type.optional) {
      args.emplace_back();  // an absent optional tensor: None to the reader, not an operand
      continue;
    }
    if (s.args[i].type.elem_optional) {  // Tensor?[]: the reader sees which elements are None
      std::vector<AnyTensor> marks;
      const AnyTensor mark(Tensor<bool>::empty(Dims{0}));  // a placeholder for a present element
      if (l.kind == LValue::Kind::DeviceList) {
        for (const sh::Value& v : l.list) {
          if (v.valid()) xs.push_back(v);
          marks.push_back(v.valid() ? mark : AnyTensor());
        }
      } else if (l.kind == LValue::Kind::Host && l.host.kind() == Value::Kind::TensorList) {
        for (const AnyTensor& t : l.host.anys()) {
          marks.push_back(t.defined() ? mark : AnyTensor());
          if (!t.defined()) continue;
          LValue one;
          one.host = Value(t);
          xs.push_back(c.to_device(one));
        }
      } else {
        throw ValueError(s.name + ": argument '" + s.args[i].name + "' must be a list of tensors");
      }
      args.emplace_back(std::move(marks));
      continue;
    }
    args.emplace_back(AnyTensor());  // tensors travel in `xs`; the reader sees a (placeholder) tensor
    if (l.kind == LValue::Kind::DeviceList) {
      xs.insert(xs.end(), l.list.begin(), l.list.end());
    } else if (l.kind == LValue::Kind::Host && l.host.kind() == Value::Kind::TensorList) {
      for (const AnyTensor& t : l.host.anys()) {
        LValue one;
        one.host = Value(t);
        xs.push_back(c.to_device(one));
      }
    } else {
      xs.push_back(c.dev(i));
    }
  }
  const ops::ArgReader reader(s, args);
  const typename Op::Args a = Op::args(reader);
  std::vector<ops::TensorMeta> metas;
  for (const sh::Value& x : xs) metas.push_back(ops::TensorMeta{x.dtype, Dims(x.dims.begin(), x.dims.end()), Device{}, true});
  if constexpr (ops::multi_result<Op>) {
    const auto outs = Op::infer(std::span<const ops::TensorMeta>(metas), a);
    ops::detail::check_dtype<Op>(outs[0].dtype, metas);
    for (size_t i = 0; i < xs.size(); ++i) {
      const ScalarType want = ops::operand_dtype<Op>(i, xs[i].dtype, outs[0].dtype);
      if (xs[i].dtype != want) xs[i] = c.b.convert(xs[i], want);
    }
    const auto r = Op::lower(c.b, std::span<const sh::Value>(xs), a, std::span<const ops::TensorMeta>(outs));
    if (c.out.size() < r.size())
      throw ValueError(s.name + ": the node has " + std::to_string(c.out.size()) + " outputs, the op " + std::to_string(r.size()) + " results");
    for (size_t k = 0; k < r.size(); ++k) {
      if (r[k].dims != vec(outs[k].sizes))
        throw ValueError(s.name + ": internal: result " + std::to_string(k) + " lowered to shape " + sh::shape_str(r[k].dims) +
                         ", expected " + to_string(outs[k].sizes));
      c.out[k] = LValue::of(r[k]);
    }
  } else {
    const ops::TensorMeta out = Op::infer(metas, a);
    for (size_t i = 0; i < xs.size(); ++i) {
      const ScalarType want = ops::operand_dtype<Op>(i, xs[i].dtype, out.dtype);
      if (xs[i].dtype != want) xs[i] = c.b.convert(xs[i], want);
    }
    sh::Value r = Op::lower(c.b, std::span<const sh::Value>(xs), a, out.sizes);
    if (r.dims != vec(out.sizes))
      throw ValueError(s.name + ": internal: lowered to shape " + sh::shape_str(r.dims) + ", expected " + to_string(out.sizes));
    c.out[0] = LValue::of(std::move(r));  // further node outputs (embedding_bag's) are not computed
  }
}

}  // namespace lower

/// Lowerings of the built-in ops, keyed by node kind.
inline const std::map<std::string, GraphLowering>& builtin_lowerings() {
  using namespace lower;
  static const std::map<std::string, GraphLowering> m = [] {
    std::map<std::string, GraphLowering> r;
    ops::LibraryOps::for_each([&r]<class Op>(std::type_identity<Op>) { r[std::string(Op::aten)] = &lower_library_op<Op>; });
    // one-operand elementwise ops: the struct's lowering (lower_unary); the activations below
    // go through act, which lowers their structs the same way
    ops::UnaryOps::for_each([&r]<class Op>(std::type_identity<Op>) {
      r[std::string(Op::aten)] = [](LowerContext& c) { c.out[0] = LValue::of(lower_unary(c.b, Op{}, c.dev(0))); };
    });
    auto unary_act = [](Epilogue::Kind k) {
      return [k](LowerContext& c) { c.out[0] = LValue::of(act(c.b, Epilogue{k, 0, 0}, c.dev(0))); };
    };
    for (const char* n : {"aten::relu", "aten::relu_"}) r[n] = unary_act(Epilogue::Kind::Relu);
    for (const char* n : {"aten::silu", "aten::silu_"}) r[n] = unary_act(Epilogue::Kind::Silu);
    for (const char* n : {"aten::sigmoid", "aten::sigmoid_"}) r[n] = unary_act(Epilogue::Kind::Sigmoid);
    for (const char* n : {"aten::tanh", "aten::tanh_"}) r[n] = unary_act(Epilogue::Kind::Tanh);
    for (const char* n : {"aten::hardswish", "aten::hardswish_"}) r[n] = unary_act(Epilogue::Kind::Hardswish);
    for (const char* n : {"aten::hardsigmoid", "aten::hardsigmoid_"}) r[n] = unary_act(Epilogue::Kind::Hardsigmoid);
    for (const char* n : {"aten::gelu", "aten::gelu_"})
      r[n] = [](LowerContext& c) {  // approximate: 'none' (erf) or 'tanh'; others are rejected at load
        const bool tanh_form = c.in.size() > 1 && !c.host(1, "gelu").is_none() && c.host(1, "gelu").str() == "tanh";
        c.out[0] = LValue::of(act(c.b, Epilogue{tanh_form ? Epilogue::Kind::GeluTanh : Epilogue::Kind::Gelu, 0, 0}, c.dev(0)));
      };
    for (const char* n : {"aten::hardtanh", "aten::hardtanh_"})
      r[n] = [](LowerContext& c) {
        const double lo = c.in.size() > 1 ? c.host(1, "hardtanh").to_double() : -1.0;
        const double hi = c.in.size() > 2 ? c.host(2, "hardtanh").to_double() : 1.0;
        c.out[0] = LValue::of(act(c.b, Epilogue{Epilogue::Kind::Clamp, lo, hi}, c.dev(0)));
      };
    // dropout's variants: the identity, which OpDef::check (builtin_ops.hpp) allows only for
    // train=False or p=0 (aten::dropout is ops::DropoutOp's lowering)
    for (const char* n : {"aten::dropout_", "aten::feature_dropout", "aten::alpha_dropout",
                          "aten::contiguous", "aten::detach", "aten::clone"})
      r[n] = [](LowerContext& c) { c.out[0] = LValue::of(c.dev(0)); };
    // add, sub, rsub, mul, div: torch's result dtype (binary_result_dtype, jit/value.hpp, the
    // cpu graph's rule); a number operand becomes a constant of that dtype (an int exactly)
    struct B { const char* name; const char* op; bool alpha, reverse, divide; };
    for (B bb : {B{"aten::add", "add", true, false, false}, B{"aten::add_", "add", true, false, false},
                 B{"aten::sub", "subtract", true, false, false}, B{"aten::rsub", "subtract", true, true, false},
                 B{"aten::mul", "multiply", false, false, false}, B{"aten::mul_", "multiply", false, false, false},
                 B{"aten::div", "divide", false, false, true}}) {
      r[bb.name] = [bb](LowerContext& c) {
        if (std::string(bb.name) == "aten::div" && c.in.size() > 2 && !c.in[2]->host.is_none())
          throw ValueError("lowering aten::div: rounding modes are not lowered");
        const size_t ia = bb.reverse ? 1 : 0, ib = bb.reverse ? 0 : 1;
        const ScalarType rt = binary_result_dtype(dtype_of_lvalue(*c.in[ia]), operand_kind_of_lvalue(*c.in[ia]),
                                                  dtype_of_lvalue(*c.in[ib]), operand_kind_of_lvalue(*c.in[ib]), bb.divide);
        sh::Value x = as_dtype(c, ia, rt), y = as_dtype(c, ib, rt);
        if (bb.alpha && c.in.size() > 2) {
          const Value& a = c.host(2, bb.name);
          if (a.to_double() != 1.0)
            y = c.b.multiply(y, a.is_int() ? c.b.constant_int(a.to_int(), rt, y.dims) : c.b.constant(a.to_double(), rt, y.dims));
        }
        c.out[0] = LValue::of(bin(c.b, bb.op, x, y));
      };
    }
    // comparisons, logical ops, minimum/maximum (ops::BinaryGraphOps): the cpu kernel's
    // promotion (binary_result_dtype), broadcast, the op struct's lowering
    auto binary_op = []<class Op>(std::type_identity<Op>) {
      return [](LowerContext& c) {
        const ScalarType t = binary_result_dtype(dtype_of_lvalue(*c.in.at(0)), operand_kind_of_lvalue(*c.in[0]),
                                                 dtype_of_lvalue(*c.in.at(1)), operand_kind_of_lvalue(*c.in[1]), false);
        if (t == ScalarType::Bool && !std::is_same_v<typename Op::template result<bool>, bool>)
          throw TypeError(std::string(Op::aten) + ": not defined for bool tensors");
        if (requires { Op::integral_only; } && is_floating(t))
          throw TypeError(std::string(Op::aten) + ": not defined for " + std::string(dtype_name(t)) + " tensors (bool and integers only)");
        const sh::Value x = as_dtype(c, 0, t), y = as_dtype(c, 1, t);
        const auto d = bshape(x.dims, y.dims);
        c.out[0] = LValue::of(lower_binary(c.b, Op{}, bcast(c.b, x, d), bcast(c.b, y, d)));
      };
    };
    ops::BinaryGraphOps::for_each([&]<class Op>(std::type_identity<Op> id) {
      r[std::string(Op::aten)] = binary_op(id);
      if constexpr (requires { Op::aten_alias; }) r[std::string(Op::aten_alias)] = binary_op(id);
    });
    for (const char* id : {"aten::reshape_as", "aten::view_as"})
      r[id] = [](LowerContext& c) {
        const sh::Value x = c.dev(0);
        const LValue& other = *c.in.at(1);  // only its shape is read (a host tensor is not uploaded)
        const std::vector<int64_t> d = other.kind == LValue::Kind::Device ? other.dev.dims : vec(other.host.any("aten::reshape_as").sizes());
        c.out[0] = LValue::of(x.dims == d ? x : c.b.reshape(x, d));
      };
    // glu: the first half of `dim` times the logistic of the second (the cpu's narrow + sigmoid)
    r["aten::glu"] = [](LowerContext& c) {
      const sh::Value x = c.dev(0);
      const int64_t d = wrap_dim(c.in.size() > 1 ? c.host(1, "aten::glu").to_int() : -1, int(x.dims.size()), "aten::glu");
      const int64_t h = x.dims[size_t(d)] / 2;
      if (x.dims[size_t(d)] % 2 != 0) throw ShapeError("aten::glu: halving dimension " + std::to_string(d) + " of " + sh::shape_str(x.dims) + " must be even");
      std::vector<int64_t> lo(x.dims.size(), 0), hi = x.dims, mid(x.dims.size(), 0);
      hi[size_t(d)] = h;
      mid[size_t(d)] = h;
      const sh::Value a = c.b.slice(x, lo, hi), g = c.b.slice(x, mid, x.dims);
      c.out[0] = LValue::of(c.b.multiply(a, act(c.b, Epilogue{Epilogue::Kind::Sigmoid, 0, 0}, g)));
    };
    // softplus: select(βx > threshold, x, log1p(exp(βx)) / β), the cpu's formula
    r["aten::softplus"] = [](LowerContext& c) {
      const sh::Value x = c.dev(0);
      const double beta = c.in.size() > 1 ? c.host(1, "aten::softplus").to_double() : 1.0;
      const double th = c.in.size() > 2 ? c.host(2, "aten::softplus").to_double() : 20.0;
      const sh::Value bx = c.b.multiply(x, c.b.constant(beta, x.dtype, x.dims));
      const sh::Value soft = c.b.divide(c.b.unary("log_plus_one", c.b.exp(bx)), c.b.constant(beta, x.dtype, x.dims));
      c.out[0] = LValue::of(c.b.select(c.b.compare("GT", bx, c.b.constant(th, x.dtype, x.dims)), x, soft));
    };
    // leaky_relu: select(x > 0, x, slope · x), the cpu's formula
    for (const char* id : {"aten::leaky_relu", "aten::leaky_relu_"})
      r[id] = [id](LowerContext& c) {
        const sh::Value x = c.dev(0);
        const double slope = c.in.size() > 1 ? c.host(1, id).to_double() : 0.01;
        const sh::Value neg = c.b.multiply(x, c.b.constant(slope, x.dtype, x.dims));
        c.out[0] = LValue::of(c.b.select(c.b.compare("GT", x, c.b.constant(0.0, x.dtype, x.dims)), x, neg));
      };
    // addcmul: self + value · t1 · t2, broadcast
    r["aten::addcmul"] = [](LowerContext& c) {
      const sh::Value s = c.dev(0), a = c.dev(1), t = c.dev(2);
      const double v = c.in.size() > 3 ? c.host(3, "aten::addcmul").to_double() : 1.0;
      sh::Value p = bin(c.b, "multiply", a, t);
      if (v != 1.0) p = c.b.multiply(p, c.b.constant(v, p.dtype, p.dims));
      c.out[0] = LValue::of(bin(c.b, "add", s, p));
    };
    // repeat_interleave with an int count: [.., n, ..] -> [.., n, r, ..] (broadcast) -> [.., n*r, ..]
    r["aten::repeat_interleave"] = [](LowerContext& c) {
      const char* n = "aten::repeat_interleave";
      if (!c.host(1, n).is_int()) throw UnsupportedOperator(std::string(n) + ": only an int count is lowered");
      const int64_t rep = c.host(1, n).to_int();
      if (rep < 0) throw ValueError(std::string(n) + ": repeats must be non-negative, got " + std::to_string(rep));
      sh::Value x = c.dev(0);
      const bool flat = c.in.size() < 3 || (c.in[2]->kind == LValue::Kind::Host && c.in[2]->host.is_none());
      if (flat) x = c.b.reshape(x, {x.numel()});
      const size_t d = size_t(wrap_dim(flat ? 0 : c.host(2, n).to_int(), int(x.dims.size()), n));
      std::vector<int64_t> wide, map, out = x.dims;
      for (size_t i = 0; i < x.dims.size(); ++i) {
        map.push_back(int64_t(wide.size()));
        wide.push_back(x.dims[i]);
        if (i == d) wide.push_back(rep);
      }
      out[d] *= rep;
      c.out[0] = LValue::of(c.b.reshape(c.b.broadcast_in_dim(x, wide, map), out));
    };
    // aten::max / aten::min: the (self, other) overload (the reductions run on the cpu only)
    for (const std::pair<const char*, const char*>& p : {std::pair{"aten::max", "aten::maximum"}, std::pair{"aten::min", "aten::minimum"}}) {
      const GraphLowering f = r.at(p.second);
      const char* n = p.first;
      r[n] = [f, n](LowerContext& c) {
        if (c.in.size() != 2 || !is_tensor_lvalue(*c.in[1]))
          throw UnsupportedOperator(std::string(n) + ": only the (self, other) overload is lowered; the reductions run on the cpu");
        f(c);
      };
    }
    r["aten::where"] = [](LowerContext& c) {
      if (c.in.size() == 1)  // where(condition): the result's shape depends on the data
        throw UnsupportedOperator("aten::where(condition) (nonzero): its result's shape depends on the data; it runs on the cpu only");
      const ScalarType t = binary_result_dtype(dtype_of_lvalue(*c.in.at(1)), operand_kind_of_lvalue(*c.in[1]),
                                               dtype_of_lvalue(*c.in.at(2)), operand_kind_of_lvalue(*c.in[2]), false);
      sh::Value m = c.dev(0);
      if (m.dtype != ScalarType::Bool) m = c.b.convert(m, ScalarType::Bool);
      const sh::Value x = as_dtype(c, 1, t), y = as_dtype(c, 2, t);
      const auto d = bshape(bshape(m.dims, x.dims), y.dims);
      c.out[0] = LValue::of(c.b.select(bcast(c.b, m, d), bcast(c.b, x, d), bcast(c.b, y, d)));
    };
    // dtype conversions: aten::to's overloads (self, dtype, ...), (self, device, dtype, ...),
    // (self, other, ...), as the cpu kernel reads them (builtin_ops.hpp); aten::type_as
    r["aten::to"] = [](LowerContext& c) {
      sh::Value x = c.dev(0);
      ScalarType want = x.dtype;
      const LValue& a = *c.in.at(1);
      if (is_tensor_lvalue(a)) want = dtype_of_lvalue(a);
      else if (a.host.is_int()) want = ops::detail::from_torch_dtype(a.host.to_int(), "aten::to");
      else if (a.host.kind() == Value::Kind::String && c.in.size() > 2 && c.in[2]->kind == LValue::Kind::Host &&
               c.in[2]->host.is_int())
        want = ops::detail::from_torch_dtype(c.in[2]->host.to_int(), "aten::to");
      c.out[0] = LValue::of(want == x.dtype ? x : c.b.convert(x, want));
    };
    r["aten::type_as"] = [](LowerContext& c) {
      sh::Value x = c.dev(0);
      const ScalarType want = dtype_of_lvalue(*c.in.at(1));
      c.out[0] = LValue::of(want == x.dtype ? x : c.b.convert(x, want));
    };
    // views as value ops: slice, select, unsqueeze, squeeze, expand, expand_as, t, swapaxes
    r["aten::slice"] = [](LowerContext& c) {
      sh::Value x = c.dev(0);
      const char* n = "aten::slice";
      const size_t d = size_t(wrap_dim(c.in.size() > 1 ? c.host(1, n).to_int() : 0, int(x.dims.size()), n));
      const int64_t size = x.dims[d];
      auto bound = [&](size_t i, int64_t dflt) {  // torch's slice bounds: negative from the end, clamped
        if (c.in.size() <= i || c.host(i, n).is_none()) return dflt;
        int64_t v = c.host(i, n).to_int();
        if (v < 0) v += size;
        return std::clamp<int64_t>(v, 0, size);
      };
      const int64_t step = c.in.size() > 4 ? c.host(4, n).to_int() : 1;
      if (step < 1) throw ValueError("aten::slice: slice step must be positive, got " + std::to_string(step));
      const int64_t start = bound(2, 0), end = std::max(start, bound(3, size));
      std::vector<int64_t> lo(x.dims.size(), 0), hi = x.dims, st(x.dims.size(), 1);
      lo[d] = start;
      hi[d] = end;
      st[d] = step;
      c.out[0] = LValue::of(c.b.slice(x, lo, hi, st));
    };
    r["aten::select"] = [](LowerContext& c) {
      sh::Value x = c.dev(0);
      const char* n = "aten::select";
      const size_t d = size_t(wrap_dim(c.host(1, n).to_int(), int(x.dims.size()), n));
      int64_t i = c.host(2, n).to_int();
      if (i < -x.dims[d] || i >= x.dims[d])
        throw IndexError("aten::select: index " + std::to_string(i) + " is out of range for dimension " +
                         std::to_string(d) + " with size " + std::to_string(x.dims[d]));
      if (i < 0) i += x.dims[d];
      std::vector<int64_t> lo(x.dims.size(), 0), hi = x.dims;
      lo[d] = i;
      hi[d] = i + 1;
      std::vector<int64_t> out = x.dims;
      out.erase(out.begin() + static_cast<std::ptrdiff_t>(d));
      c.out[0] = LValue::of(c.b.reshape(c.b.slice(x, lo, hi), out));
    };
    r["aten::unsqueeze"] = [](LowerContext& c) {
      sh::Value x = c.dev(0);
      const size_t d = size_t(wrap_dim(c.host(1, "aten::unsqueeze").to_int(), int(x.dims.size()) + 1, "aten::unsqueeze"));
      std::vector<int64_t> out = x.dims;
      out.insert(out.begin() + static_cast<std::ptrdiff_t>(d), 1);
      c.out[0] = LValue::of(c.b.reshape(x, out));
    };
    r["aten::squeeze"] = [](LowerContext& c) {
      sh::Value x = c.dev(0);
      std::vector<int64_t> out;
      if (c.in.size() > 1) {
        const size_t d = x.dims.empty() ? 0 : size_t(wrap_dim(c.host(1, "aten::squeeze").to_int(), int(x.dims.size()), "aten::squeeze"));
        for (size_t i = 0; i < x.dims.size(); ++i)
          if (i != d || x.dims[i] != 1) out.push_back(x.dims[i]);
      } else {
        for (int64_t v : x.dims)
          if (v != 1) out.push_back(v);
      }
      c.out[0] = LValue::of(c.b.reshape(x, out));
    };
    auto expand_to = [](LowerContext& c, const sh::Value& x, std::vector<int64_t> want, const char* n) {
      if (want.size() < x.dims.size())
        throw ShapeError(std::string(n) + ": the number of sizes provided (" + std::to_string(want.size()) +
                         ") must be greater or equal to the number of dimensions in the tensor (" +
                         std::to_string(x.dims.size()) + ")");
      const size_t off = want.size() - x.dims.size();
      for (size_t i = 0; i < want.size(); ++i) {
        if (want[i] == -1) {
          if (i < off) throw ShapeError(std::string(n) + ": -1 is not allowed in a leading, non-existing dimension");
          want[i] = x.dims[i - off];
        }
        if (i >= off && x.dims[i - off] != 1 && x.dims[i - off] != want[i])
          throw ShapeError(std::string(n) + ": the expanded size " + std::to_string(want[i]) +
                           " must match the existing size " + std::to_string(x.dims[i - off]) + " at dimension " +
                           std::to_string(i));
      }
      return bcast(c.b, x, want);
    };
    r["aten::expand"] = [expand_to](LowerContext& c) {
      sh::Value x = c.dev(0);
      c.out[0] = LValue::of(expand_to(c, x, c.host(1, "aten::expand").to_ints(), "aten::expand"));
    };
    r["aten::expand_as"] = [expand_to](LowerContext& c) {
      sh::Value x = c.dev(0);
      c.out[0] = LValue::of(expand_to(c, x, c.dev(1).dims, "aten::expand_as"));
    };
    r["aten::t"] = [](LowerContext& c) {
      sh::Value x = c.dev(0);
      if (x.dims.size() > 2) throw ValueError("aten::t: expects a tensor with <= 2 dimensions, got " + std::to_string(x.dims.size()));
      c.out[0] = LValue::of(x.dims.size() == 2 ? c.b.transpose(x, {1, 0}) : x);
    };
    r["aten::numel"] = [](LowerContext& c) { c.out[0].host = Value(c.dev(0).numel()); };
    r["aten::dim"] = [](LowerContext& c) { c.out[0].host = Value(int64_t(c.dev(0).dims.size())); };
    r["prim::dtype"] = [](LowerContext& c) { c.out[0].host = Value(ops::detail::to_torch_dtype(c.dev(0).dtype)); };
    // clamp, clamp_min: the activation epilogue's lowering (bounds from host numbers)
    for (const char* n : {"aten::clamp", "aten::clamp_"})
      r[n] = [n](LowerContext& c) {
        const double lo = c.in.size() > 1 && !c.host(1, n).is_none() ? c.host(1, n).to_double() : -INFINITY;
        const double hi = c.in.size() > 2 && !c.host(2, n).is_none() ? c.host(2, n).to_double() : INFINITY;
        c.out[0] = LValue::of(act(c.b, Epilogue{Epilogue::Kind::Clamp, lo, hi}, c.dev(0)));
      };
    r["aten::clamp_min"] = [](LowerContext& c) {
      c.out[0] = LValue::of(act(c.b, Epilogue{Epilogue::Kind::Clamp, c.host(1, "aten::clamp_min").to_double(), INFINITY}, c.dev(0)));
    };
    r["aten::linear"] = [](LowerContext& c) {
      sh::Value x = c.dev(0), w = c.dev(1);
      const auto xd = x.dims;
      const int64_t in = xd.back(), out = w.dims[0];
      int64_t m = 1;
      for (size_t i = 0; i + 1 < xd.size(); ++i) m *= xd[i];
      sh::Value y = c.b.dot_general(c.b.reshape(x, {m, in}), w, sh::DotDims{{}, {}, {1}, {1}}, sh::Precision::Highest);
      if (c.in.size() > 2 && !(c.in[2]->kind == LValue::Kind::Host && c.in[2]->host.is_none()))
        y = bin(c.b, "add", y, c.dev(2));
      std::vector<int64_t> od = xd;
      od.back() = out;
      c.out[0] = LValue::of(c.b.reshape(y, od));
    };
    r["aten::matmul"] = [](LowerContext& c) { c.out[0] = LValue::of(matmul(c.b, c.dev(0), c.dev(1))); };
    r["aten::bmm"] = r["aten::matmul"];
    auto reshape = [](LowerContext& c) {
      sh::Value x = c.dev(0);
      c.out[0] = LValue::of(c.b.reshape(x, infer(c.host(1, "reshape").to_ints(), x.numel(), "reshape")));
    };
    r["aten::reshape"] = reshape;
    r["aten::view"] = reshape;
    r["aten::flatten"] = [](LowerContext& c) {
      sh::Value x = c.dev(0);
      const size_t rank = x.dims.size();
      const int64_t s = wrap(c.host(1, "flatten").to_int(), rank), e = wrap(c.host(2, "flatten").to_int(), rank);
      std::vector<int64_t> d(x.dims.begin(), x.dims.begin() + s);
      int64_t m = 1;
      for (int64_t i = s; i <= e; ++i) m *= x.dims[size_t(i)];
      d.push_back(m);
      for (size_t i = size_t(e) + 1; i < rank; ++i) d.push_back(x.dims[i]);
      c.out[0] = LValue::of(c.b.reshape(x, d));
    };
    r["aten::transpose"] = [](LowerContext& c) {
      sh::Value x = c.dev(0);
      std::vector<int64_t> perm;
      for (size_t i = 0; i < x.dims.size(); ++i) perm.push_back(int64_t(i));
      std::swap(perm[size_t(wrap(c.host(1, "transpose").to_int(), x.dims.size()))],
                perm[size_t(wrap(c.host(2, "transpose").to_int(), x.dims.size()))]);
      c.out[0] = LValue::of(c.b.transpose(x, perm));
    };
    r["aten::permute"] = [](LowerContext& c) {
      sh::Value x = c.dev(0);
      std::vector<int64_t> perm = c.host(1, "permute").to_ints();
      for (auto& p : perm) p = wrap(p, x.dims.size());
      c.out[0] = LValue::of(c.b.transpose(x, perm));
    };
    // split / chunk / unbind: slices by ops/shape.hpp's piece rules (the cpu views' rules)
    auto pieces = [](LowerContext& c, const sh::Value& x, size_t d, const std::vector<ops::detail::Piece>& ps, bool drop) {
      LValue l;
      l.kind = LValue::Kind::DeviceList;
      for (const ops::detail::Piece& p : ps) {
        std::vector<int64_t> start(x.dims.size(), 0), limit = x.dims;
        start[d] = p.start;
        limit[d] = p.start + p.length;
        sh::Value piece = c.b.slice(x, start, limit);
        if (drop) {
          std::vector<int64_t> dims = piece.dims;
          dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(d));
          piece = c.b.reshape(piece, dims);
        }
        l.list.push_back(piece);
      }
      c.out[0] = l;
    };
    r["aten::chunk"] = [pieces](LowerContext& c) {
      sh::Value x = c.dev(0);
      const size_t d = size_t(wrap_dim(c.in.size() > 2 ? c.host(2, "chunk").to_int() : 0, int(x.dims.size()), "aten::chunk"));
      const Dims shape(x.dims.begin(), x.dims.end());
      pieces(c, x, d, ops::detail::chunk_pieces(x.dims[d], c.host(1, "chunk").to_int(), "aten::chunk", shape).list(), false);
    };
    for (const char* id : {"aten::split", "aten::split_with_sizes"})
      r[id] = [pieces, id](LowerContext& c) {
        sh::Value x = c.dev(0);
        const size_t d = size_t(wrap_dim(c.in.size() > 2 ? c.host(2, id).to_int() : 0, int(x.dims.size()), id));
        const Dims shape(x.dims.begin(), x.dims.end());
        const Value& size = c.host(1, id);
        pieces(c, x, d,
               size.is_int() ? ops::detail::split_pieces(x.dims[d], size.to_int(), id, shape).list()
                             : ops::detail::split_with_sizes_pieces(x.dims[d], size.to_ints(id), id, shape),
               false);
      };
    r["aten::unbind"] = [pieces](LowerContext& c) {
      sh::Value x = c.dev(0);
      if (x.dims.empty()) throw IndexError("aten::unbind: a 0-dim tensor has no dim to unbind");
      const size_t d = size_t(wrap_dim(c.in.size() > 1 ? c.host(1, "unbind").to_int() : 0, int(x.dims.size()), "aten::unbind"));
      std::vector<ops::detail::Piece> ps;
      for (int64_t i = 0; i < x.dims[d]; ++i) ps.push_back(ops::detail::Piece{i, 1});
      pieces(c, x, d, ps, true);
    };
    r["prim::ListUnpack"] = [](LowerContext& c) {
      if (c.in[0]->kind != LValue::Kind::DeviceList) throw ValueError("lowering prim::ListUnpack: not a tensor list");
      if (c.in[0]->list.size() != c.out.size()) throw ValueError("lowering prim::ListUnpack: wrong count");
      for (size_t i = 0; i < c.out.size(); ++i) c.out[i] = LValue::of(c.in[0]->list[i]);
    };
    r["prim::ListConstruct"] = [](LowerContext& c) {  // reached only with a device element
      LValue l;
      l.kind = LValue::Kind::DeviceList;
      for (size_t i = 0; i < c.in.size(); ++i)  // None (a Tensor?[] element): an invalid value
        l.list.push_back(c.in[i]->kind == LValue::Kind::Host && c.in[i]->host.is_none() ? sh::Value() : c.dev(i));
      c.out[0] = l;
    };
    r["aten::size"] = [](LowerContext& c) {
      sh::Value x = c.dev(0);
      if (c.in.size() > 1) c.out[0].host = Value(x.dims[size_t(wrap(c.host(1, "size").to_int(), x.dims.size()))]);
      else c.out[0].host = Value(x.dims);
    };
    r["aten::softmax"] = [](LowerContext& c) {
      sh::Value x = c.dev(0);
      const int64_t d = wrap(c.host(1, "softmax").to_int(), x.dims.size());
      c.out[0] = LValue::of(ops::detail::lower_softmax(c.b, x, d, false));  // the softmax node's (ops/reduce.hpp)
    };
    r["aten::sum"] = [](LowerContext& c) {
      // sum(x, dtype) has 2 arguments; sum(x, dim, keepdim, dtype) 4; None or [] means every
      // dim. Integers and bools sum in int64 (torch's rule), floats in their own dtype.
      sh::Value x = c.dev(0);
      std::vector<int64_t> dims;
      if (c.in.size() > 2 && !c.host(1, "sum").is_none()) dims = c.host(1, "sum").to_ints();
      if (dims.empty())
        for (size_t i = 0; i < x.dims.size(); ++i) dims.push_back(int64_t(i));
      for (auto& d : dims) d = wrap_dim(d, int(x.dims.size()), "aten::sum");
      const size_t dt = c.in.size() > 2 ? 3 : 1;
      ScalarType t = is_floating(x.dtype) ? x.dtype : ScalarType::Int64;
      if (c.in.size() > dt && !c.host(dt, "sum").is_none()) t = ops::detail::from_torch_dtype(c.host(dt, "sum").to_int(), "aten::sum");
      if (t != x.dtype) x = c.b.convert(x, t);
      sh::Value s = c.b.reduce(x, c.b.constant_int(0, t), sh::ReduceOp::Add, dims);
      if (c.in.size() > 2 && c.host(2, "sum").to_bool()) s = keep(c.b, s, x.dims, dims);
      c.out[0] = LValue::of(s);
    };
    r["aten::mean"] = [](LowerContext& c) {
      sh::Value x = c.dev(0);
      // mean(x, dtype) has 2 arguments; mean(x, dim, keepdim, dtype) 4; None or [] means every dim
      std::vector<int64_t> dims;
      if (c.in.size() > 2 && !c.host(1, "mean").is_none()) dims = c.host(1, "mean").to_ints();
      if (dims.empty())
        for (size_t i = 0; i < x.dims.size(); ++i) dims.push_back(int64_t(i));
      int64_t count = 1;
      for (auto& d : dims) {
        d = wrap(d, x.dims.size());
        count *= x.dims[size_t(d)];
      }
      sh::Value s = reduce_sum(c.b, x, dims);
      s = MeanOp::lower_finalize(c.b, s, count);  // the mean reduction's (ops/reduce.hpp)
      if (c.in.size() > 2 && c.host(2, "mean").to_bool()) s = keep(c.b, s, x.dims, dims);
      c.out[0] = LValue::of(s);
    };
    return r;
  }();
  return m;
}

/// A Graph compiled for one set of input shapes on one PJRT client. Weights are uploaded once.
class DeviceProgram {
 public:
  /// Lowers `g` for float32 inputs of `shapes`. **Errors:** as the constructor below.
  DeviceProgram(const Graph& g, const std::vector<Dims>& shapes, std::shared_ptr<pjrt::Client> client)
      : DeviceProgram(g, std::vector<ScalarType>(shapes.size(), ScalarType::Float), shapes, std::move(client)) {}

  /// Lowers `g` for inputs of `dtypes` and `shapes` (one of each per graph input: int64 token
  /// ids, bool masks, float32 images). **Errors:** ValueError when the counts differ from the
  /// graph's inputs; UnsupportedOperator listing the node kinds without a lowering;
  /// DeviceError / DeviceUnavailable from PJRT.
  DeviceProgram(const Graph& g, const std::vector<ScalarType>& dtypes, const std::vector<Dims>& shapes,
                std::shared_ptr<pjrt::Client> client)
      : client_(std::move(client)) {
    if (dtypes.size() != g.input_slots().size() || shapes.size() != g.input_slots().size())
      throw ValueError("DeviceProgram: the model takes " + std::to_string(g.input_slots().size()) + " input(s), got " +
                       std::to_string(dtypes.size()) + " dtype(s) and " + std::to_string(shapes.size()) + " shape(s)");
    sh::Builder b;
    const auto& slots = g.initial_slots();
    std::vector<LValue> lv(slots.size());
    for (size_t i = 0; i < slots.size(); ++i) lv[i].host = slots[i];
    for (size_t i = 0; i < g.input_slots().size(); ++i) {
      const int s = g.input_slots()[i];
      lv[size_t(s)] = LValue::of(b.parameter(dtypes[i], lower::vec(shapes[i])));
      params_.push_back(Param{int(i), AnyTensor()});
      in_dtypes_.push_back(dtypes[i]);
      in_dims_.push_back(shapes[i]);
    }
    auto to_device = [&](LValue& v) -> sh::Value {
      if (v.kind == LValue::Kind::Device) return v.dev;
      if (v.kind == LValue::Kind::Host && v.host.is_tensor()) {  // a weight: becomes a parameter
        const AnyTensor t = v.host.any();  // a copy: `v` is overwritten next
        if (!t.device().is_cpu())
          throw ValueError("lowering: a weight on " + t.device().str() + " (weights are read from the host)");
        v = LValue::of(b.parameter(t.dtype(), lower::vec(t.sizes())));
        params_.push_back(Param{-1, t.visit([](const auto& x) { return AnyTensor(x.contiguous()); })});
        return v.dev;
      }
      if (v.kind == LValue::Kind::Host && v.host.is_scalar()) return lower::splat(b, v.host.to_double(), {});
      throw ValueError("lowering: expected a tensor, got " + std::string(Value::kind_name(v.host.kind())));
    };
    std::map<std::string, int> missing;
    std::map<std::string, std::string> first;
    // In-place library ops (index_put_): later readers of `self` get the result, and so does the
    // base of an identity view of it (`x[:, i] = v` traces to a full aten::slice, then
    // index_put_); a write through another view is refused rather than lost.
    std::map<int, int> identity_view;     // slot -> the slot it is a full-range slice of
    std::map<int, std::string> other_view;  // slot -> the view op that made it
    for (const Node& n : g.nodes()) {
      if (!n.inputs.empty() && lower::is_view_op(n.kind))
        for (int o : n.outputs) other_view[o] = n.kind;
      if (n.op->in_place && lower::library_in_place(n.kind) && !n.inputs.empty()) {
        for (int v = n.inputs[0];;) {
          if (const auto o = other_view.find(v); o != other_view.end())
            throw UnsupportedOperator(n.kind + " at " + n.location + " writes into a view made by " + o->second +
                                      ", which the compiled path does not write back to its base; run the model on the "
                                      "cpu or in an eager mode");
          const auto it = identity_view.find(v);
          if (it == identity_view.end()) break;
          v = it->second;
        }
      }
      bool any_device = false;
      for (int s : n.inputs) any_device = any_device || lv[size_t(s)].kind != LValue::Kind::Host;
      if (!any_device) {  // fold on the host with the CPU kernel
        std::vector<const Value*> in;
        for (int s : n.inputs) in.push_back(&lv[size_t(s)].host);
        std::vector<Value> out(n.outputs.size());
        OpContext ctx{in, out, {}};
        n.op->kernel(ctx);
        for (size_t i = 0; i < out.size(); ++i) lv[size_t(n.outputs[i])].host = std::move(out[i]);
        continue;
      }
      const auto& table = builtin_lowerings();
      auto it = table.find(n.kind);
      const GraphLowering* fn = n.op->lowering ? &n.op->lowering : it != table.end() ? &it->second : nullptr;
      // a node reading the result of a node without a lowering is skipped too: the error lists
      // the missing kinds, not a symptom further down
      bool after_missing = false;
      for (int s : n.inputs) {
        const LValue& v = lv[size_t(s)];
        after_missing = after_missing || (v.kind == LValue::Kind::Device && !v.dev.valid());
      }
      if (!fn || after_missing) {
        if (!fn && missing[n.kind]++ == 0) first[n.kind] = n.location;
        for (int s : n.outputs) lv[size_t(s)] = LValue::of(sh::Value());
        continue;
      }
      LowerContext ctx{b, {}, std::vector<LValue>(n.outputs.size()), to_device};
      for (int s : n.inputs) ctx.in.push_back(&lv[size_t(s)]);
      try {
        (*fn)(ctx);
      } catch (const UnsupportedOperator& e) {  // data-dependent shapes (aten::nonzero, a bool mask)
        throw UnsupportedOperator("lowering " + n.kind + " at " + n.location + ": " + e.what());
      } catch (const Error& e) {
        throw ValueError("lowering " + n.kind + " at " + n.location + ": " + e.what());
      }
      for (size_t i = 0; i < ctx.out.size(); ++i) lv[size_t(n.outputs[i])] = std::move(ctx.out[i]);
      if (n.kind == "aten::slice" && n.outputs.size() == 1 && lv[size_t(n.inputs[0])].kind == LValue::Kind::Device &&
          lv[size_t(n.outputs[0])].dev.dims == lv[size_t(n.inputs[0])].dev.dims) {
        other_view.erase(n.outputs[0]);
        identity_view[n.outputs[0]] = n.inputs[0];
      }
      if (n.op->in_place && lower::library_in_place(n.kind) && !n.inputs.empty() && !n.outputs.empty())
        for (int v = n.inputs[0];;) {  // `self` (and what it is a full view of) now holds the result
          lv[size_t(v)] = lv[size_t(n.outputs[0])];
          const auto it = identity_view.find(v);
          if (it == identity_view.end()) break;
          v = it->second;
        }
    }
    if (!missing.empty()) {
      std::string msg = "the model uses " + std::to_string(missing.size()) +
                        " operator kind(s) without a StableHLO lowering (it runs on the cpu only):";
      for (const auto& [k, c] : missing) msg += "\n  " + k + " x" + std::to_string(c) + ", first at " + first[k];
      throw UnsupportedOperator(msg);
    }
    std::vector<sh::Value> results;
    for (int s : g.output_slots()) results.push_back(to_device(lv[size_t(s)]));
    for (const auto& r : results) {
      out_dims_.push_back(r.dims);
      out_dtypes_.push_back(r.dtype);
    }
    // Run-time checks of the lowerings (an index out of range, an integer division by zero):
    // one more i32 result, read after each run (`run` throws the failed check's error).
    if (b.check_code().valid()) {
      results.push_back(b.take_check_code());
      checked_ = true;
    }
    b.set_results(results);
    text_ = b.str();
    exe_ = pjrt::CompilationCache::global().get_or_compile(client_, text_);
    for (const Param& p : params_)
      if (p.input < 0) {
        const auto dims = lower::vec(p.weight.sizes());
        weights_.push_back(client_->buffer_from_host(p.weight.data_ptr(), p.weight.dtype(), dims));
      }
  }

  /// Runs on `inputs` (the lowered dtypes and shapes, any layout, on the host); returns the
  /// outputs on the host. **Errors:** ValueError naming the input when its count, dtype or
  /// shape differs from the lowered ones; IndexError / ValueError when a run-time check of the
  /// program failed (an index out of range, an integer division by zero), as the cpu kernels
  /// report them; DeviceError.
  std::vector<AnyTensor> run_any(const std::vector<AnyTensor>& inputs) const {
    if (inputs.size() != in_dtypes_.size())
      throw ValueError("DeviceProgram::run_any: the program was lowered for " + std::to_string(in_dtypes_.size()) +
                       " input(s), got " + std::to_string(inputs.size()));
    std::vector<pjrt::Buffer> in;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const AnyTensor& x = inputs[i];
      if (!x.defined() || x.dtype() != in_dtypes_[i] || x.sizes() != in_dims_[i])
        throw ValueError("DeviceProgram::run_any: input " + std::to_string(i) + " is " +
                         (x.defined() ? to_string(x.sizes()) + " " + std::string(dtype_name(x.dtype())) : "undefined") +
                         "; the program was lowered for " + to_string(in_dims_[i]) + " " +
                         std::string(dtype_name(in_dtypes_[i])) + " (lower another program for other shapes)");
      if (!x.device().is_cpu())
        throw ValueError("DeviceProgram::run_any: input " + std::to_string(i) + " is on " + x.device().str() +
                         "; inputs are read from the host");
      const AnyTensor c = x.visit([](const auto& t) { return AnyTensor(t.contiguous()); });
      in.push_back(client_->buffer_from_host(c.data_ptr(), c.dtype(), lower::vec(c.sizes())));
    }
    std::vector<const pjrt::Buffer*> args;
    size_t wi = 0;
    for (const Param& p : params_) args.push_back(p.input >= 0 ? &in.at(size_t(p.input)) : &weights_.at(wi++));
    std::vector<pjrt::Buffer> out = exe_->execute(std::span<const pjrt::Buffer* const>(args.data(), args.size()));
    if (checked_) {
      int32_t code = 0;
      out.back().to_host(&code, sizeof code);
      out.pop_back();
      if (code != 0) {
        const std::string why = sh::check_message(code);
        if (why.rfind("IndexError: ", 0) == 0) throw IndexError(why.substr(12));
        throw ValueError(why);
      }
    }
    std::vector<AnyTensor> r;
    for (size_t i = 0; i < out.size(); ++i) {
      Dims d;
      for (int64_t x : out_dims_[i]) d.push_back(x);
      r.push_back(AnyTensor::dispatch(out_dtypes_[i], [&]<class T>(std::type_identity<T>) {
        Tensor<T> t = Tensor<T>::empty(d);
        out[i].to_host(t.data_ptr(), size_t(t.numel()) * sizeof(T));
        return AnyTensor(t);
      }));
    }
    return r;
  }
  /// `run_any` for float32 inputs and outputs. **Errors:** as `run_any`; TypeError for an
  /// output of another dtype (call `run_any`).
  std::vector<FloatTensor> run(const std::vector<FloatTensor>& inputs) const {
    const std::vector<AnyTensor> r = run_any(std::vector<AnyTensor>(inputs.begin(), inputs.end()));
    std::vector<FloatTensor> f;
    for (size_t i = 0; i < r.size(); ++i) {
      if (r[i].dtype() != ScalarType::Float)
        throw TypeError("DeviceProgram::run_any: output " + std::to_string(i) + " is " +
                        std::string(dtype_name(r[i].dtype())) + "; call run_any for outputs of any dtype");
      f.push_back(r[i].get<float>());
    }
    return f;
  }
  /// The StableHLO text of the program.
  const std::string& program() const noexcept { return text_; }
  /// The client it runs on.
  const std::shared_ptr<pjrt::Client>& client() const noexcept { return client_; }

 private:
  struct Param {
    int input;         ///< graph input index, or -1 for a weight
    AnyTensor weight;  ///< the weight (host, contiguous), kept for the upload
  };
  std::shared_ptr<pjrt::Client> client_;
  std::vector<Param> params_;
  std::vector<pjrt::Buffer> weights_;
  std::vector<std::vector<int64_t>> out_dims_;
  std::vector<ScalarType> out_dtypes_;  ///< each output's dtype
  std::vector<ScalarType> in_dtypes_;   ///< each input's lowered dtype
  std::vector<Dims> in_dims_;           ///< each input's lowered shape
  bool checked_ = false;  ///< the program returns a run-time check code after the outputs
  std::string text_;
  std::shared_ptr<pjrt::Executable> exe_;
};

}  // namespace torchtpu::jit
