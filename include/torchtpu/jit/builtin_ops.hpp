// torchtpu/jit/builtin_ops.hpp — the built-in operators of the run-time graph, each defined
// once here: TorchScript name, CPU kernel (its shape checks included), fusion role.
// Covers what traced + frozen torch 1.13 MLPs, CNNs and transformers contain
// (../shared/MODEL-OPS.md).
#pragma once
#include <algorithm>  // std::min
#include <cmath>    // std::floor, std::fmod, std::pow
#include <functional>  // std::function
#include <optional>   // std::optional
#include <span>     // std::span
#include <string>   // std::string
#include <type_traits>  // std::is_integral_v, std::is_same_v
#include <vector>   // std::vector

#include "../core/errors.hpp"  // ShapeError, ValueError, TypeError
#include "../ops/arith.hpp"    // add, sub, mul, div, floor_divide, remainder, pow, minimum, maximum
#include "../ops/compare.hpp"  // eq ... ge, logical ops, where
#include "../core/factories.hpp"  // arange, zeros
#include "../ops/matmul.hpp"   // matmul
#include "../ops/reduce.hpp"   // mean, sum, softmax, log_softmax
#include "../ops/unary.hpp"    // activations
#include "../ops/norm.hpp"     // layer_norm (the encoder layer's norms)
#include "../ops/region.hpp"   // region_op_id (the roles of elementwise nodes in run-time regions)
#include "kernels.hpp"         // linear, attention, epilogues
#include "library_ops.hpp"     // register_library_ops (the operator library's ops)
#include "registry.hpp"        // Registry, OpDef, OpContext

namespace torchtpu::jit {

namespace builtin {

using K = Epilogue::Kind;

inline const FloatTensor* opt_tensor(const Value& v, const char* what) {
  return v.is_none() ? nullptr : &v.tensor(what);
}

enum class Bin { Add, Sub, Mul, Div, FloorDiv, Rem, Pow };

/// Floor or truncating division of two ints (Python `//` and `div(rounding_mode="trunc")`) with
/// TorchScript's int64 wrap-around: INT64_MIN // -1 is INT64_MIN (never a hardware trap).
/// **Errors:** ValueError on division by zero.
inline int64_t int_divide(int64_t x, int64_t y, bool floor) {
  if (y == 0) throw ValueError("integer division by zero in shape arithmetic");
  if (y == -1) return torchtpu::detail::wrap_neg(x);  // x / -1, wrapping for INT64_MIN
  int64_t q = x / y;
  if (floor && (x % y != 0) && ((x < 0) != (y < 0))) --q;
  return q;
}

/// Python semantics for two numbers (ints stay ints except for true division). Int arithmetic
/// is int64 and wraps around on overflow, as TorchScript's; `%` has the divisor's sign.
inline Value scalar_binary(Bin op, const Value& a, const Value& b, double alpha, const std::string& mode) {
  namespace td = torchtpu::detail;
  const bool ints = !a.is_double() && !b.is_double() && alpha == std::floor(alpha) &&
                    std::fabs(alpha) < 9.2e18;  // an int64 alpha
  if (ints && op != Bin::Div && op != Bin::Pow) {
    const int64_t x = a.to_int(), y = b.to_int(), al = int64_t(alpha);
    switch (op) {
      case Bin::Add: return Value(td::wrap_add(x, td::wrap_mul(al, y)));
      case Bin::Sub: return Value(td::wrap_sub(x, td::wrap_mul(al, y)));
      case Bin::Mul: return Value(td::wrap_mul(x, y));
      case Bin::FloorDiv:
      case Bin::Rem: {
        const int64_t q = int_divide(x, y, true);
        return op == Bin::FloorDiv ? Value(q) : Value(td::wrap_sub(x, td::wrap_mul(q, y)));
      }
      default: break;
    }
  }
  if (ints && op == Bin::Div && (mode == "trunc" || mode == "floor"))
    return Value(int_divide(a.to_int(), b.to_int(), mode == "floor"));
  const double x = a.to_double(), y = b.to_double();
  switch (op) {
    case Bin::Add: return Value(x + alpha * y);
    case Bin::Sub: return Value(x - alpha * y);
    case Bin::Mul: return Value(x * y);
    case Bin::Div: {
      const double q = x / y;
      return Value(mode == "trunc" ? std::trunc(q) : mode == "floor" ? std::floor(q) : q);
    }
    case Bin::FloorDiv: return Value(std::floor(x / y));
    case Bin::Rem: return Value(x - std::floor(x / y) * y);
    case Bin::Pow: return Value(std::pow(x, y));
  }
  return Value();
}

inline float scaled(float y, float alpha) { return y * alpha; }
template <class Y>
auto scaled(const Y& y, float alpha) { return torchtpu::mul(y, alpha); }

/// Tensor (or tensor-and-number) binary op as one fused expression, `ep` applied.
/// `dest`, when given, receives the result in place (add_, mul_, ...).
template <class X, class Y>
FloatTensor tensor_binary(Bin op, const X& x, const Y& y, float alpha, const std::string& mode,
                          const Epilogue& ep, const FloatTensor* dest) {
  auto go = [&](const auto& e) -> FloatTensor {
    if (dest) {
      kernels::eval_into(*dest, ep, e);
      return *dest;
    }
    return kernels::eval_new(ep, e);
  };
  switch (op) {
    case Bin::Add:
      if (alpha == 1.0f) return go(torchtpu::add(x, y));
      return go(torchtpu::add(x, scaled(y, alpha)));
    case Bin::Sub:
      if (alpha == 1.0f) return go(torchtpu::sub(x, y));
      return go(torchtpu::sub(x, scaled(y, alpha)));
    case Bin::Mul: return go(torchtpu::mul(x, y));
    case Bin::Div:
      if (mode == "trunc") {
        FloatTensor q = go(torchtpu::div(x, y));  // then round toward zero, in place
        FloatTensor qc = q.contiguous();
        for (int64_t i = 0; i < qc.numel(); ++i) qc.data_ptr()[i] = std::trunc(qc.data_ptr()[i]);
        if (qc.data_ptr() != q.data_ptr()) q.copy_(qc);
        return q;
      }
      if (mode == "floor") return go(torchtpu::floor_divide(x, y));
      return go(torchtpu::div(x, y));
    case Bin::FloorDiv: return go(torchtpu::floor_divide(x, y));
    case Bin::Rem: return go(torchtpu::remainder(x, y));
    case Bin::Pow: return go(torchtpu::pow(x, y));
  }
  throw ValueError("unknown binary op");
}

/// torch's result dtype of a binary op on graph values, at least one a tensor
/// (c10::promoteTypes for two tensors; a Python number promotes a tensor only to a higher
/// category: an int tensor with a float number gives float32, a bool tensor with an int
/// number int64). True division of integers gives float32.
inline ScalarType binary_result_type(Bin op, const Value& a, const Value& b, const std::string& mode) {
  return binary_result_dtype(a.is_tensor() ? a.any().dtype() : number_dtype(a), operand_kind(a),
                             b.is_tensor() ? b.any().dtype() : number_dtype(b), operand_kind(b),
                             op == Bin::Div && mode.empty());
}

/// `v` (a tensor or a number) as a tensor of `dtype` (a number becomes a 0-dim tensor).
inline AnyTensor operand_as(const Value& v, ScalarType dtype, const char* name) {
  if (v.is_tensor()) return ops::detail::to_dtype(v.any(name), dtype);
  if (!v.is_scalar()) throw TypeError(std::string(name) + ": unsupported operand kind " + Value::kind_name(v.kind()));
  return AnyTensor::dispatch(dtype, [&]<class U>(std::type_identity<U>) {
    Tensor<U> t = Tensor<U>::empty(Dims{});
    if constexpr (std::is_integral_v<U>) t.data_ptr()[0] = v.is_double() ? U(v.to_double()) : U(v.to_int());
    else t.data_ptr()[0] = U(v.to_double());
    return AnyTensor(t);
  });
}

/// `v` as a tensor: a tensor as it is, a number (from prim::NumToTensor, which passes numbers
/// through so shape arithmetic stays on the host) as the 0-dim tensor torch made of it.
/// **Errors:** TypeError for any other kind of value.
inline AnyTensor tensor_or_number(const Value& v, const char* name) {
  return v.is_scalar() && !v.is_tensor() ? operand_as(v, number_dtype(v), name) : v.any(name);
}

/// An in-place op's result `res` written into `self`, converted to self's dtype, and `self`
/// as the op's output (the one write-back of the in-place forms: binary_any, binary's rounded
/// float32 results, via_float32). **Errors:** ShapeError naming `name` when `res`'s shape is
/// not self's.
inline Value written_into(const AnyTensor& self, const AnyTensor& res, const char* name) {
  if (!(res.sizes() == self.sizes()))
    throw ShapeError(std::string(name) + ": output with shape " + to_string(self.sizes()) +
                     " doesn't match the broadcast shape " + to_string(res.sizes()));
  const AnyTensor conv = ops::detail::to_dtype(res, self.dtype());
  self.visit([&]<class U>(const Tensor<U>& t) { Tensor<U>(t).copy_(conv.get<U>()); });
  return Value(self);
}

/// A binary node whose result is not float32 (integer arithmetic on ids and shapes, float64,
/// float16, bfloat16), computed in the result dtype. An in-place form (`add_`) writes the result
/// into `a`, converted to its dtype where torch allows the cast (not float into an integer, not
/// a number into bool), and returns `a`; a fused activation runs on the result (`activation_any`).
/// **Errors:** TypeError for a cast torch refuses; ShapeError when the result's shape is not `a`'s.
inline void binary_any(OpContext& ctx, Bin op, const char* name, const Value& a, const Value& b, double alpha,
                       const std::string& mode, ScalarType r, bool in_place) {
  const AnyTensor x = operand_as(a, r, name), y = operand_as(b, r, name);
  AnyTensor res = AnyTensor::dispatch(r, [&]<class U>(std::type_identity<U>) -> AnyTensor {
    const Tensor<U>& tx = x.get<U>();
    Tensor<U> ty = y.get<U>();
    if (alpha != 1.0 && (op == Bin::Add || op == Bin::Sub)) ty = Tensor<U>(torchtpu::mul(ty, Tensor<U>(operand_as(Value(alpha), r, name).get<U>())));
    if constexpr (std::is_same_v<U, bool>) {
      switch (op) {
        case Bin::Add: return Tensor<bool>(torchtpu::add(tx, ty));
        case Bin::Mul: return Tensor<bool>(torchtpu::mul(tx, ty));
        default: throw TypeError(std::string(name) + ": not defined for bool tensors");
      }
    } else {
      switch (op) {
        case Bin::Add: return Tensor<U>(torchtpu::add(tx, ty));
        case Bin::Sub: return Tensor<U>(torchtpu::sub(tx, ty));
        case Bin::Mul: return Tensor<U>(torchtpu::mul(tx, ty));
        case Bin::Div:
          if (mode == "floor" || (mode.empty() && std::is_integral_v<U>)) return Tensor<U>(torchtpu::floor_divide(tx, ty));
          if (mode == "trunc") {
            if constexpr (std::is_integral_v<U>) {  // C++'s integer division truncates
              const Dims shape = broadcast_shapes(tx.sizes(), ty.sizes(), name);
              const Tensor<U> xe = tx.expand(shape).contiguous(), ye = ty.expand(shape).contiguous();
              Tensor<U> q = Tensor<U>::empty(shape);
              for (int64_t i = 0; i < q.numel(); ++i) {
                const U xv = xe.data_ptr()[i], yv = ye.data_ptr()[i];
                if (yv == U(0)) throw ValueError(std::string(name) + ": integer division by zero");
                if constexpr (std::is_signed_v<U>) q.data_ptr()[i] = yv == U(-1) ? torchtpu::detail::wrap_neg(xv) : U(xv / yv);
                else q.data_ptr()[i] = U(xv / yv);
              }
              return q;
            } else {
              Tensor<U> q = Tensor<U>(torchtpu::div(tx, ty)).contiguous();
              for (int64_t i = 0; i < q.numel(); ++i) q.data_ptr()[i] = U(std::trunc(static_cast<double>(convert<double>(q.data_ptr()[i]))));
              return q;
            }
          }
          return Tensor<U>(torchtpu::div(tx, ty));
        case Bin::FloorDiv: return Tensor<U>(torchtpu::floor_divide(tx, ty));
        case Bin::Rem: return Tensor<U>(torchtpu::remainder(tx, ty));
        case Bin::Pow: return Tensor<U>(torchtpu::pow(tx, ty));
      }
      throw ValueError("unknown binary op");
    }
  });
  if (!in_place) {
    // an activation the fusion pass moved into this node runs on the result, as its own node would
    ctx.out[0] = Value(ctx.epilogue.active() ? kernels::activation_any(ctx.epilogue, res) : std::move(res));
    return;
  }
  if (ctx.epilogue.active()) res = kernels::activation_any(ctx.epilogue, res);
  const AnyTensor& self = a.any(name);
  const ScalarType st = self.dtype();
  if ((is_floating(r) && !is_floating(st)) || (r != ScalarType::Bool && st == ScalarType::Bool))
    throw TypeError(std::string(name) + ": result type " + std::string(dtype_name(r)) + " can't be cast to the " +
                    std::string(dtype_name(st)) + " tensor it writes into");
  ctx.out[0] = written_into(self, res, name);
}

/// A binary node: `a op (alpha · b)`; `reverse` swaps the operands (rsub); `in_place` writes
/// into `a` (which must then be a tensor of the result's shape).
inline void binary(OpContext& ctx, Bin op, const char* name, bool reverse, bool in_place, bool has_alpha,
                   bool has_mode) {
  const Value& a0 = ctx.arg(0, name);
  const Value& b0 = ctx.arg(1, name);
  const Value& a = reverse ? b0 : a0;
  const Value& b = reverse ? a0 : b0;
  double alpha = 1.0;
  if (has_alpha && ctx.in.size() > 2 && !ctx.in[2]->is_none()) alpha = ctx.in[2]->to_double(name);
  std::string mode;
  if (has_mode && ctx.in.size() > 2 && !ctx.in[2]->is_none()) mode = ctx.in[2]->str(name);
  if (!a.is_tensor() && !b.is_tensor()) {
    if (!a.is_scalar() || !b.is_scalar())
      throw TypeError(std::string(name) + ": unsupported operand kinds " + Value::kind_name(a.kind()) + " and " +
                      Value::kind_name(b.kind()));
    Value r = scalar_binary(op, a, b, alpha, mode);
    // A fused activation reads a Tensor; unfused, the activation node throws TypeError on
    // this number, so the fused node must too (fuzz_jit_graph: Fused ran, Strict threw).
    if (ctx.epilogue.active())
      throw TypeError(std::string(name) + ": the activation fused into it expects a Tensor, got " +
                      Value::kind_name(r.kind()));
    ctx.out[0] = r;
    return;
  }
  const ScalarType rt = binary_result_type(op, a, b, mode);
  if (rt != ScalarType::Float) {
    binary_any(ctx, op, name, a, b, alpha, mode, rt, in_place);
    return;
  }
  if ((a.is_tensor() && !a.any().is<float>()) || (b.is_tensor() && !b.any().is<float>())) {
    // mixed operands with a float32 result (an int mask times a float32 tensor): promoted as torch
    const Value pa = a.is_tensor() ? Value(ops::detail::to_dtype(a.any(), ScalarType::Float)) : a;
    const Value pb = b.is_tensor() ? Value(ops::detail::to_dtype(b.any(), ScalarType::Float)) : b;
    if (in_place && !a0.any().is<float>() && !is_floating(a0.any().dtype()))
      throw TypeError(std::string(name) + ": in-place result float32 cannot be written into a " +
                      std::string(dtype_name(a0.any().dtype())) + " tensor");
    const Value* args[] = {reverse ? &pb : &pa, reverse ? &pa : &pb};
    std::vector<const Value*> in{args[0], args[1]};
    for (size_t i = 2; i < ctx.in.size(); ++i) in.push_back(ctx.in[i]);
    OpContext sub{in, ctx.out, ctx.epilogue};
    // into a float16/bfloat16/float64 self: computed out of place, then rounded into self as
    // torch's in-place ops cast their result to self's dtype (`x.add_(y)`, x bfloat16, y float32)
    const bool cast_back = in_place && !a0.any().is<float>();
    binary(sub, op, name, reverse, in_place && !cast_back, has_alpha, has_mode);
    if (cast_back) ctx.out[0] = written_into(a0.any(name), ctx.out[0].any(name), name);
    return;
  }
  const FloatTensor* dest = in_place ? &a0.tensor(name) : nullptr;
  if (dest && !reverse) {
    const Dims want = b.is_tensor() ? broadcast_shapes(a.tensor().sizes(), b.tensor().sizes(), name) : a.tensor().sizes();
    if (!(want == dest->sizes()))
      throw ShapeError(std::string(name) + ": output with shape " + to_string(dest->sizes()) +
                       " doesn't match the broadcast shape " + to_string(want));
  }
  const float al = float(alpha);
  FloatTensor r;
  if (a.is_tensor() && b.is_tensor()) r = tensor_binary(op, a.tensor(), b.tensor(), al, mode, ctx.epilogue, dest);
  else if (a.is_tensor()) r = tensor_binary(op, a.tensor(), float(b.to_double(name)), al, mode, ctx.epilogue, dest);
  else r = tensor_binary(op, float(a.to_double(name)), b.tensor(), al, mode, ctx.epilogue, dest);
  ctx.out[0] = Value(std::move(r));
}

/// An activation `kind` applied to argument 0 (in place when `in_place`).
/// An activation node: float32 through the fused cpu kernels, any other dtype through
/// `activation_any`. **Errors:** TypeError when an in-place form's result dtype is not x's
/// (e.g. `sigmoid_` on int64, which torch refuses too).
inline void activation(OpContext& ctx, Epilogue ep, const char* name, bool in_place) {
  const Value& v = ctx.arg(0, name);
  if (v.is_tensor() && v.any(name).dtype() != ScalarType::Float) {
    const AnyTensor& x = v.any(name);
    AnyTensor r = kernels::activation_any(ep, x);
    if (in_place) {
      if (r.dtype() != x.dtype())
        throw TypeError(std::string(name) + ": result type " + std::string(dtype_name(r.dtype())) +
                        " can't be cast to the " + std::string(dtype_name(x.dtype())) + " tensor it writes into");
      x.visit([&]<class U>(const Tensor<U>& t) { Tensor<U>(t).copy_(r.get<U>()); });
      r = x;
    }
    ctx.out[0] = Value(std::move(r));
    return;
  }
  const FloatTensor& x = v.tensor(name);
  if (in_place) {
    kernels::eval_into(x, ep, x);
    ctx.out[0] = Value(x);
  } else {
    ctx.out[0] = Value(kernels::eval_new(ep, x));
  }
}

/// hardtanh's bounds from its arguments (defaults -1, 1).
inline Epilogue hardtanh_epilogue(std::span<const Value* const> in) {
  Epilogue e{K::Clamp, -1.0, 1.0};
  if (in.size() > 1 && !in[1]->is_none()) e.lo = in[1]->to_double("aten::hardtanh");
  if (in.size() > 2 && !in[2]->is_none()) e.hi = in[2]->to_double("aten::hardtanh");
  return e;
}

/// The epilogue of an activation node, when its arguments are known at load time.
inline Epilogue fixed(K k) { return Epilogue{k, 0, 0}; }

/// `f(t)` applied to the tensor `v` holds, whatever its dtype (`f` returns a Tensor of the same
/// element type, e.g. a view): the dtype-generic structural ops.
template <class F>
Value on_any(const Value& v, const char* what, F&& f) {
  return Value(v.any(what).visit([&](const auto& t) { return AnyTensor(f(t)); }));
}

/// Unpack a list/tuple value into exactly `out.size()` outputs.
inline void unpack(OpContext& ctx, const char* name) {
  const Value& v = ctx.arg(0, name);
  if (v.kind() == Value::Kind::TensorList) {
    const auto& l = v.anys(name);
    if (l.size() != ctx.out.size())
      throw ValueError(std::string(name) + ": list of " + std::to_string(l.size()) + " values unpacked into " +
                       std::to_string(ctx.out.size()));
    for (size_t i = 0; i < l.size(); ++i) ctx.out[i] = Value(l[i]);
  } else {
    const auto l = v.to_ints(name);
    if (l.size() != ctx.out.size())
      throw ValueError(std::string(name) + ": list of " + std::to_string(l.size()) + " values unpacked into " +
                       std::to_string(ctx.out.size()));
    for (size_t i = 0; i < l.size(); ++i) ctx.out[i] = Value(l[i]);
  }
}

/// An argument for load-time check messages: `0.5`, `True`, `'tanh'`, `None`, `[1, 2]`, or
/// `<computed at run time>` (null).
inline std::string show(const Value* v) {
  if (!v) return "<computed at run time>";
  switch (v->kind()) {
    case Value::Kind::None: return "None";
    case Value::Kind::Bool: return v->to_bool() ? "True" : "False";
    case Value::Kind::Int: return std::to_string(v->to_int());
    case Value::Kind::Double: {
      std::string t = std::to_string(v->to_double());
      while (t.size() > 3 && t.back() == '0' && t[t.size() - 2] != '.') t.pop_back();
      return t;
    }
    case Value::Kind::String: return "'" + v->str() + "'";
    case Value::Kind::IntList: return kernels::list_str(v->to_ints());
    default: return std::string("<") + Value::kind_name(v->kind()) + ">";
  }
}

/// "" when argument `i` (a `ScalarType? dtype`) is absent, None, float32, float16 or bfloat16
/// (what softmax and mean compute in); else the rejection reason.
inline std::string check_dtype(std::span<const Value* const> in, size_t i) {
  if (i >= in.size() || (in[i] && in[i]->is_none())) return "";
  // torch.float16, torch.float32, torch.bfloat16 (ScalarType codes 5, 6, 15)
  if (in[i] && in[i]->is_int() && (in[i]->to_int() == 5 || in[i]->to_int() == 6 || in[i]->to_int() == 15)) return "";
  return "dtype=" + (in[i] && in[i]->is_int() ? ops::detail::torch_dtype_name(in[i]->to_int()) : show(in[i])) +
         " (torchtpu computes softmax and mean in float32, float16 and bfloat16 only; the result would differ "
         "from torch's)";
}

/// `dropout(x, p, train)` and its variants: exact (the identity) only for train=False or p=0.
inline std::string check_dropout(std::span<const Value* const> in) {
  if (in.size() < 3) return "";
  const Value* p = in[1];
  const Value* train = in[2];
  if (train && train->is_bool() && !train->to_bool()) return "";
  if (p && p->is_scalar() && p->to_double() == 0.0) return "";
  return "train=" + show(train) + ", p=" + show(p) +
         ": dropout is active, as in a module traced in training mode; torchtpu does not compute random "
         "dropout. Trace the model in eval mode: torch.jit.freeze(torch.jit.trace(model.eval(), example))";
}

/// One `nn.TransformerEncoderLayer` (torch 1.13's aten::_transformer_encoder_layer_fwd).
inline FloatTensor encoder_layer(OpContext& ctx) {
  const char* n = "aten::_transformer_encoder_layer_fwd";
  const FloatTensor& src = ctx.arg(0, n).tensor(n);
  const int64_t E = ctx.arg(1, n).to_int(n), H = ctx.arg(2, n).to_int(n);
  auto T = [&](size_t i) -> const FloatTensor& { return ctx.arg(i, n).tensor(n); };
  const bool use_gelu = ctx.arg(7, n).to_bool(n), norm_first = ctx.arg(8, n).to_bool(n);
  const double eps = ctx.arg(9, n).to_double(n);
  if (ctx.in.size() > 18 && !ctx.in[18]->is_none())
    throw ValueError(std::string(n) + ": attention masks are not supported");
  const Dims norm_shape{E};
  const Epilogue none{}, act = fixed(use_gelu ? K::Gelu : K::Relu);
  auto mha = [&](const FloatTensor& x) {
    return kernels::multi_head_attention(x, x, x, E, H, T(3), T(4), T(5), T(6), false, false, nullptr);
  };
  auto ffn = [&](const FloatTensor& x) {
    return kernels::linear(kernels::linear(x, T(14), &T(15), act), T(16), &T(17), none);
  };
  auto norm = [&](const FloatTensor& x, size_t w) { return torchtpu::layer_norm(x, norm_shape, T(w), T(w + 1), eps); };
  FloatTensor x = src;
  if (norm_first) {
    x = FloatTensor(torchtpu::add(x, mha(norm(x, 10))));
    x = FloatTensor(torchtpu::add(x, ffn(norm(x, 12))));
  } else {
    x = norm(FloatTensor(torchtpu::add(x, mha(x))), 10);
    x = norm(FloatTensor(torchtpu::add(x, ffn(x))), 12);
  }
  return x;
}

/// The number `v` as element type `U` (an int exactly, a double converted as torch does).
template <class U>
U number_as(const Value& v) {
  if constexpr (std::is_integral_v<U>) return v.is_double() ? U(v.to_double()) : U(v.to_int());
  else return convert<U>(v.to_double());
}

/// A two-operand elementwise node of op struct `Op` (ops::BinaryGraphOps: comparisons,
/// logical ops, minimum/maximum): operands promoted by torch's rule (binary_result_dtype, the
/// lowering's too), the op's own kernel on that dtype; two numbers give a number (a bool for a
/// predicate), as TorchScript's scalar overloads. **Errors:** TypeError for another operand
/// kind or a dtype the op is not defined on (logical ops on every dtype; minimum/maximum not on
/// bool).
template <class Op>
void binary_elementwise(OpContext& c, const char* name) {
  const Value& a = c.arg(0, name);
  const Value& b = c.arg(1, name);
  if (!a.is_tensor() && !b.is_tensor()) {
    if (!a.is_scalar() || !b.is_scalar())
      throw TypeError(std::string(name) + ": unsupported operand kinds " + Value::kind_name(a.kind()) + " and " +
                      Value::kind_name(b.kind()));
    const bool ints = !a.is_double() && !b.is_double();
    if (ints) {
      const auto r = Op{}(a.to_int(), b.to_int());
      c.out[0] = std::is_same_v<decltype(r), bool> ? Value(bool(r)) : Value(int64_t(r));
    } else if constexpr (requires { Op::integral_only; }) {
      throw TypeError(std::string(name) + ": not defined for float operands (" + Value::kind_name(a.kind()) + ", " +
                      Value::kind_name(b.kind()) + ")");
    } else {
      const auto r = Op{}(a.to_double(), b.to_double());
      if constexpr (std::is_same_v<decltype(r), bool>) c.out[0] = Value(r);
      else c.out[0] = Value(double(r));
    }
    return;
  }
  const ScalarType t = binary_result_dtype(a.is_tensor() ? a.any().dtype() : number_dtype(a), operand_kind(a),
                                           b.is_tensor() ? b.any().dtype() : number_dtype(b), operand_kind(b), false);
  const AnyTensor x = operand_as(a, t, name), y = operand_as(b, t, name);
  c.out[0] = Value(AnyTensor::dispatch(t, [&]<class U>(std::type_identity<U>) -> AnyTensor {
    using R = typename Op::template result<U>;
    if constexpr (requires { Op::integral_only; } && !std::is_integral_v<U>) {
      throw TypeError(std::string(name) + ": not defined for " + std::string(dtype_name(t)) +
                      " tensors (bool and integers only)");
    } else if constexpr (std::is_same_v<R, bool> || !std::is_same_v<U, bool>) {
      return AnyTensor(Tensor<R>(make_map(Op{}, x.get<U>(), y.get<U>())));
    } else {
      throw TypeError(std::string(name) + ": not defined for bool tensors (operands " +
                      std::string(dtype_name(x.dtype())) + " " + to_string(x.sizes()) + " and " +
                      std::string(dtype_name(y.dtype())) + " " + to_string(y.sizes()) + ")");
    }
  }));
}

/// torch.where(condition, self, other) (the `self`/`other` numbers or tensors; the condition a
/// bool tensor, or uint8 as torch 1.13 accepts it): `self` and `other` promoted together by
/// torch's rule, all three broadcast. **Errors:** TypeError for another condition dtype or
/// operand kind; ShapeError for shapes that do not broadcast.
inline void where_node(OpContext& c) {
  const char* n = "aten::where";
  if (c.in.size() == 1) {  // where(condition): nonzero(condition, as_tuple=True), one int64 index per dim
    const AnyTensor nz = torchtpu::nonzero(c.arg(0, n).any(n));  // [k, dims] (ops::NonzeroOp, cpu only)
    const Tensor<int64_t>& t = nz.get<int64_t>();
    std::vector<AnyTensor> cols;
    for (int64_t d = 0; d < t.size(1); ++d) cols.push_back(AnyTensor(Tensor<int64_t>(t.select(1, d).contiguous())));
    c.out[0] = Value(std::move(cols));
    return;
  }
  const AnyTensor& cond = c.arg(0, n).any(n);
  if (cond.dtype() != ScalarType::Bool && cond.dtype() != ScalarType::UInt8)
    throw TypeError(std::string(n) + ": the condition must be a bool tensor, got " + std::string(dtype_name(cond.dtype())) +
                    " " + to_string(cond.sizes()));
  const Value& a = c.arg(1, n);
  const Value& b = c.arg(2, n);
  const ScalarType t = binary_result_dtype(a.is_tensor() ? a.any().dtype() : number_dtype(a), operand_kind(a),
                                           b.is_tensor() ? b.any().dtype() : number_dtype(b), operand_kind(b), false);
  const Tensor<bool> m = ops::detail::to_dtype(cond, ScalarType::Bool).get<bool>();
  const AnyTensor x = operand_as(a, t, n), y = operand_as(b, t, n);
  (void)broadcast_shapes(broadcast_shapes(m.sizes(), x.sizes(), n), y.sizes(), n);
  c.out[0] = Value(AnyTensor::dispatch(t, [&]<class U>(std::type_identity<U>) -> AnyTensor {
    return AnyTensor(Tensor<U>(torchtpu::where(m, x.get<U>(), y.get<U>())));
  }));
}

/// torch.arange's three overloads as traced graphs pass them: (end, dtype, layout, device,
/// pin_memory), (start, end, dtype, ...), (start, end, step, dtype, ...). Without a dtype the
/// result is int64 when every bound is an int, else float32 (torch's default dtype); the values
/// are core/factories.hpp's `arange`. **Errors:** as `arange` (a zero or wrong-signed step, a
/// bound that is not finite); TypeError for a dtype without a counterpart.
inline void arange_node(OpContext& c) {
  const char* n = "aten::arange";
  const size_t k = c.in.size();
  const size_t bounds = k >= 7 ? 3 : k == 6 ? 2 : 1;
  double start = 0, end = 0, step = 1;
  bool ints = true;
  auto read = [&](size_t i) {
    const Value& v = c.arg(i, n);
    if (v.is_tensor()) ints = ints && !is_floating(v.any().dtype());
    else ints = ints && !v.is_double();
    return v.to_double(n);
  };
  if (bounds == 1) end = read(0);
  else {
    start = read(0);
    end = read(1);
    if (bounds == 3) step = read(2);
  }
  ScalarType t = ints ? ScalarType::Int64 : ScalarType::Float;
  if (k > bounds && !c.in[bounds]->is_none()) t = ops::detail::from_torch_dtype(c.in[bounds]->to_int(n), n);
  c.out[0] = Value(AnyTensor::dispatch(t, [&]<class U>(std::type_identity<U>) -> AnyTensor {
    return AnyTensor(torchtpu::arange<U>(start, end, step));
  }));
}

/// aten::max / aten::min, by overload: (self, other) the elementwise maximum/minimum
/// (`Pair`, NaN propagating); (self) the reduction over every element (a 0-dim tensor);
/// (self, dim, keepdim) the values and their indices along `dim` (the first index of the
/// extreme, NaN counting as the extreme, as torch). **Errors:** as the ops; IndexError for a dim
/// out of range.
template <class Pair, bool is_max>
void max_min_node(OpContext& c, const char* n) {
  if (c.in.size() >= 2 && c.in[1]->is_tensor()) {
    binary_elementwise<Pair>(c, n);
    return;
  }
  const AnyTensor& x = c.arg(0, n).any(n);
  if (c.in.size() == 1) {
    if (x.numel() == 0) throw ValueError(std::string(n) + ": the reduction of an empty tensor " + to_string(x.sizes()) + " has no identity");
    c.out[0] = Value(x.visit([&]<class U>(const Tensor<U>& t) -> AnyTensor {
      if constexpr (is_max) return AnyTensor(Tensor<U>(torchtpu::max(t)));
      else return AnyTensor(Tensor<U>(torchtpu::min(t)));
    }));
    return;
  }
  const int64_t d = wrap_dim(c.arg(1, n).to_int(n), x.dim(), n);
  const bool keep = c.in.size() > 2 && c.in[2]->to_bool(n);
  if (x.sizes()[size_t(d)] == 0) throw IndexError(std::string(n) + ": dimension " + std::to_string(d) + " of " + to_string(x.sizes()) + " is empty");
  x.visit([&]<class U>(const Tensor<U>& t) {
    if constexpr (is_max) {
      c.out[0] = Value(AnyTensor(Tensor<U>(torchtpu::max(t, Dims{d}, keep))));
      if (c.out.size() > 1) c.out[1] = Value(AnyTensor(Tensor<int64_t>(torchtpu::argmax(t, d, keep))));
    } else {
      c.out[0] = Value(AnyTensor(Tensor<U>(torchtpu::min(t, Dims{d}, keep))));
      if (c.out.size() > 1) c.out[1] = Value(AnyTensor(Tensor<int64_t>(torchtpu::argmin(t, d, keep))));
    }
  });
}

/// torch.repeat_interleave(self, int repeats, int? dim=None): each element repeated `repeats`
/// times along `dim` (over the flattened tensor when None). The tensor-`repeats` overloads give
/// a shape that depends on the data: refused. **Errors:** ValueError for repeats < 0 or a
/// tensor `repeats` of more than one element; IndexError for a dim out of range.
inline void repeat_interleave_node(OpContext& c) {
  const char* n = "aten::repeat_interleave";
  const Value& rv = c.arg(1, n);
  int64_t r = 0;
  if (rv.is_tensor()) {
    const AnyTensor& t = rv.any();
    if (t.numel() != 1)
      throw ValueError(std::string(n) + ": a repeats tensor of " + to_string(t.sizes()) +
                       " elements gives a data-dependent shape; only one count is supported");
    r = ops::detail::to_dtype(t, ScalarType::Int64).get<int64_t>().contiguous().data_ptr()[0];
  } else {
    r = rv.to_int(n);
  }
  if (r < 0) throw ValueError(std::string(n) + ": repeats must be non-negative, got " + std::to_string(r));
  const AnyTensor& x0 = c.arg(0, n).any(n);
  const bool flat = c.in.size() < 3 || c.in[2]->is_none();
  c.out[0] = Value(x0.visit([&]<class T>(const Tensor<T>& x) -> AnyTensor {
    const Tensor<T> src = flat ? x.reshape(Dims{x.numel()}) : x;
    const int64_t d = wrap_dim(flat ? 0 : c.in[2]->to_int(n), src.dim(), n);
    Dims out = src.sizes();
    Dims with_r;
    for (int64_t i = 0; i < src.dim(); ++i) {
      with_r.push_back(src.sizes()[size_t(i)]);
      if (i == d) with_r.push_back(r);
    }
    out[size_t(d)] *= r;
    return AnyTensor(src.unsqueeze(d + 1).expand(with_r).contiguous().reshape(out));
  }));
}

/// torch.nn.functional.glu(x, dim=-1): the first half of `dim` times the sigmoid of the second.
/// **Errors:** ShapeError when `dim`'s size is odd; TypeError for a non-float32 tensor.
inline void glu_node(OpContext& c) {
  const char* n = "aten::glu";
  const FloatTensor& x = c.arg(0, n).tensor(n);
  const int64_t d = wrap_dim(c.in.size() > 1 ? c.in[1]->to_int(n) : -1, x.dim(), n);
  const int64_t size = x.sizes()[size_t(d)];
  if (size % 2 != 0)
    throw ShapeError(std::string(n) + ": halving dimension " + std::to_string(d) + " of " + to_string(x.sizes()) +
                     " must be even");
  c.out[0] = Value(FloatTensor(torchtpu::mul(x.narrow(d, 0, size / 2), torchtpu::sigmoid(x.narrow(d, size / 2, size / 2)))));
}

/// torch.nn.functional.softplus(x, beta=1, threshold=20): log(1 + e^(βx)) / β, and x itself
/// where βx > threshold (torch's formula, aten/src/ATen/native/Activation.cpp). Float32.
inline void softplus_node(OpContext& c) {
  const char* n = "aten::softplus";
  const FloatTensor& x = c.arg(0, n).tensor(n);
  const float beta = c.in.size() > 1 ? float(c.in[1]->to_double(n)) : 1.0f;
  const float th = c.in.size() > 2 ? float(c.in[2]->to_double(n)) : 20.0f;
  const FloatTensor bx(torchtpu::mul(x, beta));
  c.out[0] = Value(FloatTensor(torchtpu::where(torchtpu::gt(bx, th), x, torchtpu::div(torchtpu::log1p(torchtpu::exp(bx)), beta))));
}

/// torch.eye(n, m=n, dtype=None, ...): ones on the diagonal of an n × m matrix (float32 when no
/// dtype is given). **Errors:** ValueError for a negative size.
inline void eye_node(OpContext& c) {
  const char* n = "aten::eye";
  const int64_t rows = c.arg(0, n).to_int(n);
  // eye(n, dtype, layout, device, pin_memory) or eye(n, m, dtype, ...): m is an int, dtype an int or None
  const bool has_m = c.in.size() >= 6;
  const int64_t cols = has_m ? c.arg(1, n).to_int(n) : rows;
  if (rows < 0 || cols < 0)
    throw ValueError(std::string(n) + ": sizes must be non-negative, got " + std::to_string(rows) + " x " + std::to_string(cols));
  const size_t di = has_m ? 2 : 1;
  const ScalarType t = c.in.size() > di && !c.in[di]->is_none() ? ops::detail::from_torch_dtype(c.in[di]->to_int(n), n)
                                                                : ScalarType::Float;
  c.out[0] = Value(AnyTensor::dispatch(t, [&]<class U>(std::type_identity<U>) -> AnyTensor {
    Tensor<U> e = torchtpu::zeros<U>(Dims{rows, cols});
    for (int64_t i = 0; i < std::min(rows, cols); ++i) e.data_ptr()[i * cols + i] = convert<U>(1);
    return AnyTensor(e);
  }));
}

/// torch.argmax / argmin(self, dim=None, keepdim=False): the first index of the extreme (NaN
/// counts as the extreme), over the flattened tensor when `dim` is None. int64.
template <bool is_max>
void argextreme_node(OpContext& c, const char* n) {
  const AnyTensor& x = c.arg(0, n).any(n);
  const bool all = c.in.size() < 2 || c.in[1]->is_none();
  const bool keep = c.in.size() > 2 && c.in[2]->to_bool(n);
  if (x.numel() == 0) throw ValueError(std::string(n) + ": an empty tensor " + to_string(x.sizes()) + " has no extreme");
  c.out[0] = Value(x.visit([&]<class U>(const Tensor<U>& t) -> AnyTensor {
    if (all) {
      const Tensor<U> f = t.reshape(Dims{t.numel()});
      if constexpr (is_max) return AnyTensor(Tensor<int64_t>(torchtpu::argmax(f, 0, false)));
      else return AnyTensor(Tensor<int64_t>(torchtpu::argmin(f, 0, false)));
    }
    const int64_t d = wrap_dim(c.in[1]->to_int(n), t.dim(), n);
    if constexpr (is_max) return AnyTensor(Tensor<int64_t>(torchtpu::argmax(t, d, keep)));
    else return AnyTensor(Tensor<int64_t>(torchtpu::argmin(t, d, keep)));
  }));
}

/// torch.nn.functional.leaky_relu(x, negative_slope=0.01): x where x > 0, else slope · x (NaN
/// stays NaN); `leaky_relu_` writes the result into x. Float32.
inline void leaky_relu_node(OpContext& c, const char* n, bool in_place) {
  const FloatTensor& x = c.arg(0, n).tensor(n);
  const float slope = c.in.size() > 1 ? float(c.in[1]->to_double(n)) : 0.01f;
  FloatTensor r(torchtpu::where(torchtpu::gt(x, 0.0f), x, torchtpu::mul(x, slope)));
  if (in_place) {
    FloatTensor(x).copy_(r);
    c.out[0] = Value(x);
  } else {
    c.out[0] = Value(std::move(r));
  }
}

/// torch.addcmul(self, tensor1, tensor2, *, value=1): self + value · tensor1 · tensor2, the three
/// broadcast together. Float32. **Errors:** ShapeError for shapes that do not broadcast.
inline void addcmul_node(OpContext& c) {
  const char* n = "aten::addcmul";
  const FloatTensor& s = c.arg(0, n).tensor(n);
  const FloatTensor& a = c.arg(1, n).tensor(n);
  const FloatTensor& b = c.arg(2, n).tensor(n);
  const float v = c.in.size() > 3 ? float(c.in[3]->to_double(n)) : 1.0f;
  (void)broadcast_shapes(broadcast_shapes(s.sizes(), a.sizes(), n), b.sizes(), n);
  c.out[0] = Value(FloatTensor(torchtpu::add(s, torchtpu::mul(torchtpu::mul(a, b), v))));
}

/// torch.nn.LSTM's forward as traced (`aten::lstm.input(input, hx, params, has_biases,
/// num_layers, dropout, train, bidirectional, batch_first) -> (output, h_n, c_n)`), float32
/// (float16/bfloat16 through via_float32). Per layer and direction, with `params` in torch's
/// order (w_ih [4H, I], w_hh [4H, H], then b_ih, b_hh [4H] when has_biases): gates =
/// x·w_ihᵀ + b_ih + h·w_hhᵀ + b_hh split into i, f, g, o; c' = σ(f)·c + σ(i)·tanh(g); h' =
/// σ(o)·tanh(c') (torch.nn.LSTM's documented equations); the reverse direction runs from the
/// last step; layer l + 1 reads layer l's outputs, both directions concatenated.
/// **Shapes:** input [T, B, I] ([B, T, I] with batch_first; [T, I] unbatched), hx = (h0, c0)
/// each [layers · dirs, B, H] ([layers · dirs, H] unbatched) → output [T, B, dirs · H] (batch
/// first likewise), h_n and c_n of h0's shape.
/// **Errors:** ValueError for projections (proj_size: 5 params per layer), active dropout
/// (train=True with dropout > 0), or a params count that does not match; ShapeError for
/// operands whose shapes do not fit, naming the op and the shapes.
inline void lstm_node(OpContext& c) {
  const char* n = "aten::lstm";
  FloatTensor x = c.arg(0, n).tensor(n);
  const std::vector<FloatTensor> hx = c.arg(1, n).tensors(n);
  const std::vector<FloatTensor> params = c.arg(2, n).tensors(n);
  const bool has_biases = c.arg(3, n).to_bool(n);
  const int64_t layers = c.arg(4, n).to_int(n);
  const double dropout = c.arg(5, n).to_double(n);
  const bool train = c.arg(6, n).to_bool(n);
  const bool bidirectional = c.arg(7, n).to_bool(n);
  const bool batch_first = c.arg(8, n).to_bool(n);
  const int64_t dirs = bidirectional ? 2 : 1, per = has_biases ? 4 : 2;
  if (train && dropout > 0)
    throw ValueError(std::string(n) + ": dropout " + std::to_string(dropout) + " with train=True is not supported");
  if (layers < 1 || int64_t(params.size()) != layers * dirs * per)
    throw ValueError(std::string(n) + ": expected " + std::to_string(layers * dirs * per) + " weights for " +
                     std::to_string(layers) + " layer(s), " + std::to_string(dirs) + " direction(s)" +
                     (has_biases ? " with biases" : "") + ", got " + std::to_string(params.size()) +
                     " (LSTMs with proj_size are not supported)");
  if (hx.size() != 2) throw ValueError(std::string(n) + ": expected hx = (h0, c0), got " + std::to_string(hx.size()) + " tensors");
  const bool unbatched = x.dim() == 2;
  if (x.dim() != 2 && x.dim() != 3)
    throw ShapeError(std::string(n) + ": expected a 2-D (unbatched) or 3-D input, got " + to_string(x.sizes()));
  if (unbatched) x = x.unsqueeze(1);
  else if (batch_first) x = x.transpose(0, 1);
  const int64_t T = x.size(0), B = x.size(1), H = params[1].size(1);
  FloatTensor h0 = hx[0], c0 = hx[1];
  if (unbatched) {
    h0 = h0.unsqueeze(1);
    c0 = c0.unsqueeze(1);
  }
  const Dims state{layers * dirs, B, H};
  if (!(h0.sizes() == state) || !(c0.sizes() == state))
    throw ShapeError(std::string(n) + ": expected h0 and c0 of shape " + to_string(state) + ", got " +
                     to_string(hx[0].sizes()) + " and " + to_string(hx[1].sizes()) + " (input " + to_string(x.sizes()) + ")");
  FloatTensor hn = FloatTensor::empty(state), cn = FloatTensor::empty(state);
  FloatTensor in = x.contiguous();
  const Epilogue none{};
  for (int64_t l = 0; l < layers; ++l) {
    FloatTensor out = FloatTensor::empty(Dims{T, B, dirs * H});
    for (int64_t d = 0; d < dirs; ++d) {
      const size_t at = size_t((l * dirs + d) * per);
      const FloatTensor &w_ih = params[at], &w_hh = params[at + 1];
      const FloatTensor* b_ih = has_biases ? &params[at + 2] : nullptr;
      const FloatTensor* b_hh = has_biases ? &params[at + 3] : nullptr;
      if (w_ih.dim() != 2 || w_ih.size(0) != 4 * H || w_ih.size(1) != in.size(2) || !(w_hh.sizes() == Dims{4 * H, H}))
        throw ShapeError(std::string(n) + ": layer " + std::to_string(l) + " weights " + to_string(w_ih.sizes()) + ", " +
                         to_string(w_hh.sizes()) + " do not fit input features " + std::to_string(in.size(2)) +
                         " and hidden size " + std::to_string(H));
      // the input part of every step at once: [T · B, 4H]
      const FloatTensor pre = kernels::linear(in.reshape(Dims{T * B, in.size(2)}), w_ih, b_ih, none).reshape(Dims{T, B, 4 * H});
      FloatTensor h = h0.select(0, l * dirs + d).contiguous(), cell = c0.select(0, l * dirs + d).contiguous();
      for (int64_t s = 0; s < T; ++s) {
        const int64_t t = d == 0 ? s : T - 1 - s;
        const FloatTensor gates(torchtpu::add(pre.select(0, t), kernels::linear(h, w_hh, b_hh, none)));
        const FloatTensor cell2(torchtpu::add(torchtpu::mul(torchtpu::sigmoid(gates.narrow(1, H, H)), cell),
                                              torchtpu::mul(torchtpu::sigmoid(gates.narrow(1, 0, H)),
                                                            torchtpu::tanh(gates.narrow(1, 2 * H, H)))));
        h = FloatTensor(torchtpu::mul(torchtpu::sigmoid(gates.narrow(1, 3 * H, H)), torchtpu::tanh(cell2)));
        cell = cell2;
        out.select(0, t).narrow(1, d * H, H).copy_(h);
      }
      hn.select(0, l * dirs + d).copy_(h);
      cn.select(0, l * dirs + d).copy_(cell);
    }
    in = out;
  }
  FloatTensor y = in;
  if (unbatched) {
    y = y.squeeze(1);
    hn = hn.squeeze(1);
    cn = cn.squeeze(1);
  } else if (batch_first) {
    y = FloatTensor(y.transpose(0, 1).contiguous());
  }
  c.out[0] = Value(y);
  if (c.out.size() > 1) c.out[1] = Value(hn);
  if (c.out.size() > 2) c.out[2] = Value(cn);
}

/// True for the dtypes torch's CPU kernels compute through float32 (float16, bfloat16).
inline bool reduced_float(ScalarType t) { return t == ScalarType::Half || t == ScalarType::BFloat16; }

/// A float32-only kernel made to take float16/bfloat16 operands the way torch's CPU kernels do
/// for those dtypes: each such tensor operand (and tensor-list element) widened to float32
/// (exact), the op computed in float32 (a fused activation included), and each float32 tensor
/// result rounded once to the result dtype. The result dtype follows torch's promotion among the
/// floating tensor operands: one reduced dtype alone (0-dim float32 tensors do not count beside a
/// dimensioned one) gives that dtype; float32 beside it gives float32; float16 beside bfloat16
/// gives float32. An in-place op (`in_place`) writes the rounded result into argument 0 and
/// returns it. Operands without a reduced dtype run the kernel as it is; float64 and others still
/// get the kernel's own TypeError (never a silent conversion).
inline Kernel via_float32(Kernel k, bool in_place = false) {
  return [k = std::move(k), in_place](OpContext& c) {
    bool reduced = false;
    std::optional<ScalarType> dims_dt, scalar_dt;  // promoted so far (dimensioned; 0-dim)
    auto note = [&](const AnyTensor& t) {
      if (!t.defined() || !is_floating(t.dtype())) return;
      reduced = reduced || reduced_float(t.dtype());
      std::optional<ScalarType>& d = t.dim() > 0 ? dims_dt : scalar_dt;
      d = !d || *d == t.dtype() ? t.dtype() : ScalarType::Float;
    };
    for (const Value* v : c.in) {
      if (v->is_tensor()) note(v->any());
      else if (v->kind() == Value::Kind::TensorList)
        for (const AnyTensor& t : v->anys()) note(t);
    }
    if (!reduced) {
      k(c);
      return;
    }
    const ScalarType result = dims_dt ? *dims_dt : *scalar_dt;
    auto widen = [](const AnyTensor& t) {
      return t.defined() && reduced_float(t.dtype()) ? ops::detail::to_dtype(t, ScalarType::Float) : t;
    };
    std::vector<Value> held;
    held.reserve(c.in.size());
    std::vector<const Value*> in;
    for (const Value* v : c.in) {
      if (v->is_tensor() && reduced_float(v->any().dtype())) {
        held.emplace_back(widen(v->any()));
      } else if (v->kind() == Value::Kind::TensorList) {
        std::vector<AnyTensor> l;
        for (const AnyTensor& t : v->anys()) l.push_back(widen(t));
        held.emplace_back(std::move(l));
      } else {
        in.push_back(v);
        continue;
      }
      in.push_back(&held.back());
    }
    OpContext sub{in, c.out, c.epilogue, c.state};
    k(sub);
    if (!reduced_float(result)) return;
    for (Value& o : c.out) {
      if (o.is_tensor() && o.any().is<float>()) {
        o = Value(ops::detail::to_dtype(o.any(), result));
      } else if (o.kind() == Value::Kind::TensorList) {
        std::vector<AnyTensor> l;
        for (const AnyTensor& t : o.anys())
          l.push_back(t.defined() && t.is<float>() ? ops::detail::to_dtype(t, result) : t);
        o = Value(std::move(l));
      }
    }
    if (in_place && !c.out.empty() && c.out[0].is_tensor())
      c.out[0] = written_into(c.arg(0, "in-place op").any(), c.out[0].any(), "in-place op");
  };
}

/// `x` as float32 for a kernel that computes in float32: float32 as it is, float16/bfloat16
/// widened (exact). **Errors:** TypeError naming `n` for any other dtype.
inline FloatTensor float32_of(const AnyTensor& x, const char* n) {
  return reduced_float(x.dtype()) ? ops::detail::to_dtype(x, ScalarType::Float).get<float>() : Value(x).tensor(n);
}

/// A float32 result rounded to `dtype` (float16/bfloat16), or kept as float32.
inline AnyTensor round_to(const FloatTensor& r, ScalarType dtype) {
  return reduced_float(dtype) ? ops::detail::to_dtype(AnyTensor(r), dtype) : AnyTensor(r);
}

/// Argument 0 converted to the op's `dtype=` argument (at `at`) when one is given, as torch
/// converts before softmax/mean.
inline AnyTensor with_dtype_arg(OpContext& c, size_t at, const char* n) {
  AnyTensor x = c.arg(0, n).any(n);
  if (c.in.size() > at && c.in[at]->is_int()) x = ops::detail::to_dtype(x, ops::detail::from_torch_dtype(c.in[at]->to_int(), n));
  return x;
}

}  // namespace builtin

/// Registers every built-in op into `r` (called once, by `registry()`). Inline, unless the
/// program compiles it once (TORCHTPU_JIT_SEPARATE_OPS: src/jit/builtin_ops.cpp).
#ifdef TORCHTPU_JIT_SEPARATE_OPS
void register_builtin_ops(Registry& r) {
#else
inline void register_builtin_ops(Registry& r) {
#endif
  using namespace builtin;
  auto def = [&r](const char* name, Kernel k, bool accepts_epilogue = false, bool in_place = false) {
    OpDef d;
    d.name = name;
    d.kernel = std::move(k);
    d.accepts_epilogue = accepts_epilogue;
    d.in_place = in_place;
    r.add(std::move(d));
  };
  // structure ops, computed once at load when their inputs are constants (OpDef::fold)
  auto def_fold = [&r](const char* name, Kernel k) {
    OpDef d;
    d.name = name;
    d.kernel = std::move(k);
    d.fold = true;
    r.add(std::move(d));
  };
  auto act = [&r](const std::string& name, std::function<Epilogue(std::span<const Value* const>)> ep,
                  bool in_place) {
    OpDef d;
    d.name = name;
    d.in_place = in_place;
    d.epilogue_of = ep;
    d.kernel = [ep, name, in_place](OpContext& c) { activation(c, ep(c.in), name.c_str(), in_place); };
    if (!in_place) d.region.kind = RegionRole::Kind::Activation;  // a member of run-time regions (jit/region.hpp)
    r.add(std::move(d));
  };

  register_elementwise_ops(r);  // floor, sign, isnan, ... (the hand-written entries below replace some)
  register_library_ops(r);      // cat, stack, ... (ops/all.hpp)

  // ---- structure: lists, tuples, numbers ------------------------------------------------
  def_fold("prim::ListConstruct", [](OpContext& c) {
    bool tensors = !c.in.empty(), ints = true, nums = true, opt_tensors = false;
    for (const Value* v : c.in) {
      tensors = tensors && v->is_tensor();
      ints = ints && (v->is_int() || v->is_bool());
      nums = nums && v->is_scalar();
      opt_tensors = opt_tensors || v->is_tensor();
    }
    for (const Value* v : c.in) opt_tensors = opt_tensors && (v->is_tensor() || v->is_none());
    if (tensors || opt_tensors) {  // a Tensor?[] (aten::index's list): None is an undefined tensor
      std::vector<AnyTensor>& l = c.out[0].reset_tensor_list();  // the room of the last pass's list
      for (const Value* v : c.in) l.push_back(v->is_none() ? AnyTensor() : v->any());
    } else if (ints && c.in.size() <= size_t(max_rank)) {  // a size list: held in the Value (no heap)
      Dims l;
      for (const Value* v : c.in) l.push_back(v->to_int());
      c.out[0] = Value::int_list(l);
    } else if (ints) {
      std::vector<int64_t> l;
      for (const Value* v : c.in) l.push_back(v->to_int());
      c.out[0] = Value(std::move(l));
    } else if (nums) {
      std::vector<double> l;
      for (const Value* v : c.in) l.push_back(v->to_double());
      c.out[0] = Value(std::move(l));
    } else {
      throw TypeError("prim::ListConstruct: lists mixing tensors, None and numbers are not supported");
    }
  });
  def_fold("prim::TupleConstruct", [](OpContext& c) {
    std::vector<AnyTensor> l;
    for (const Value* v : c.in) l.push_back(v->any("prim::TupleConstruct (tuples of tensors only)"));
    c.out[0] = Value(std::move(l));
  });
  def_fold("prim::ListUnpack", [](OpContext& c) { unpack(c, "prim::ListUnpack"); });
  def_fold("prim::TupleUnpack", [](OpContext& c) { unpack(c, "prim::TupleUnpack"); });
  def_fold("prim::NumToTensor", [](OpContext& c) { c.out[0] = c.arg(0, "prim::NumToTensor"); });
  def_fold("aten::Int", [](OpContext& c) { c.out[0] = Value(c.arg(0, "aten::Int").to_int("aten::Int")); });
  def_fold("aten::Float", [](OpContext& c) { c.out[0] = Value(c.arg(0, "aten::Float").to_double("aten::Float")); });
  def_fold("aten::ScalarImplicit", [](OpContext& c) { c.out[0] = c.arg(0, "aten::ScalarImplicit"); });
  def("aten::size", [](OpContext& c) {
    const AnyTensor& x = c.arg(0, "aten::size").any("aten::size");
    if (c.in.size() > 1) {
      c.out[0] = Value(x.sizes()[wrap_dim(c.in[1]->to_int("aten::size"), x.dim(), "aten::size")]);
    } else {
      c.out[0] = Value::int_list(x.sizes());
    }
  });
  def("aten::numel", [](OpContext& c) { c.out[0] = Value(c.arg(0, "aten::numel").any("aten::numel").numel()); });
  def("aten::dim", [](OpContext& c) { c.out[0] = Value(int64_t(c.arg(0, "aten::dim").any("aten::dim").dim())); });
  // a tensor's dtype as torch's ScalarType code (GPT-BigCode's `torch.finfo(x.dtype)` masks)
  def("prim::dtype", [](OpContext& c) {
    c.out[0] = Value(ops::detail::to_torch_dtype(c.arg(0, "prim::dtype").any("prim::dtype").dtype()));
  });

  // ---- matrix products, convolution, normalisation -------------------------------------
  // the float32 kernels take float16/bfloat16 operands as torch's CPU does (via_float32)
  def("aten::linear", via_float32([](OpContext& c) {
    const char* n = "aten::linear";
    const FloatTensor* b = c.in.size() > 2 ? opt_tensor(*c.in[2], n) : nullptr;
    c.out[0] = Value(kernels::linear(c.arg(0, n).tensor(n), c.arg(1, n).tensor(n), b, c.epilogue));
  }), true);
  // aten::_convolution, aten::conv1d/2d/3d: the operator library, ops/conv.hpp (epilogue fused)
  def("aten::matmul", via_float32([](OpContext& c) {
    const char* n = "aten::matmul";
    c.out[0] = Value(kernels::eval_new(c.epilogue, torchtpu::matmul(c.arg(0, n).tensor(n), c.arg(1, n).tensor(n))));
  }), true);
  def("aten::bmm", via_float32([](OpContext& c) {
    const char* n = "aten::bmm";
    c.out[0] = Value(kernels::eval_new(c.epilogue, torchtpu::bmm(c.arg(0, n).tensor(n), c.arg(1, n).tensor(n))));
  }), true);
  // aten::addmm, aten::baddbmm: the operator library, ops/linalg.hpp
  // the normalizations (aten::batch_norm, ...): the operator library, ops/norm.hpp
  def("aten::_native_multi_head_attention", via_float32([](OpContext& c) {
    const char* n = "aten::_native_multi_head_attention";
    if (!c.arg(9, n).is_none()) throw ValueError(std::string(n) + ": attention masks are not supported");
    const bool need = c.in.size() > 10 && c.in[10]->to_bool(n);
    const bool avg = c.in.size() > 11 && c.in[11]->to_bool(n);
    FloatTensor w;
    c.out[0] = Value(kernels::multi_head_attention(c.arg(0, n).tensor(n), c.arg(1, n).tensor(n), c.arg(2, n).tensor(n),
                                                   c.arg(3, n).to_int(n), c.arg(4, n).to_int(n), c.arg(5, n).tensor(n),
                                                   c.arg(6, n).tensor(n), c.arg(7, n).tensor(n), c.arg(8, n).tensor(n),
                                                   need, avg, &w));
    if (c.out.size() > 1) c.out[1] = need ? Value(w) : Value(FloatTensor::empty(Dims{0}));
  }));
  def("aten::_transformer_encoder_layer_fwd", via_float32([](OpContext& c) { c.out[0] = Value(encoder_layer(c)); }));

  // ---- pooling, reductions ---------------------------------------------------------------
  // aten::max_pool2d, aten::avg_pool2d, aten::adaptive_avg_pool2d: the operator library, ops/pool.hpp
  auto reduce_dims = [](OpContext& c, const char* n) {  // mean(x, dtype) / mean(x, dim, keepdim, dtype)
    Dims d;
    if (c.in.size() > 2 && !c.in[1]->is_none()) d = c.in[1]->to_dims(n);
    return d;
  };
  def("aten::mean", [reduce_dims](OpContext& c) {
    const char* n = "aten::mean";
    const bool keep = c.in.size() > 2 && c.in[2]->is_bool() && c.in[2]->to_bool();
    const AnyTensor x = with_dtype_arg(c, c.in.size() == 2 ? 1 : 3, n);
    c.out[0] = Value(round_to(FloatTensor(torchtpu::mean(float32_of(x, n), reduce_dims(c, n), keep)), x.dtype()));
  });
  // sum(x, dtype) / sum(x, dims, keepdim, dtype): any dtype, as torch: integers and bool sum in
  // int64, floating types in their own; `dtype` (when given) converts x first
  def("aten::sum", [reduce_dims](OpContext& c) {
    const char* n = "aten::sum";
    const bool keep = c.in.size() > 2 && c.in[2]->is_bool() && c.in[2]->to_bool();
    const size_t dtype_at = c.in.size() > 2 ? 3 : 1;
    AnyTensor x = c.arg(0, n).any(n);
    if (c.in.size() > dtype_at && c.in[dtype_at]->is_int())
      x = ops::detail::to_dtype(x, ops::detail::from_torch_dtype(c.in[dtype_at]->to_int(), n));
    const Dims dims = reduce_dims(c, n);
    c.out[0] = Value(x.visit([&]<class U>(const Tensor<U>& t) {
      return AnyTensor(Tensor<sum_result_t<U>>(torchtpu::sum(t, dims, keep)));
    }));
  });
  // aten::all / aten::any: (self), (self, dim, keepdim), (self, dim[], keepdim); any dtype, bool
  // result (ops::AllOp / ops::AnyOp, ops/reduce.hpp)
  for (const bool is_all : {true, false}) {
    const char* name = is_all ? "aten::all" : "aten::any";
    def(name, [is_all, name](OpContext& c) {
      Dims dims;
      if (c.in.size() > 1 && !c.in[1]->is_none())
        dims = c.in[1]->is_int() ? Dims{c.in[1]->to_int(name)} : c.in[1]->to_dims(name);
      const bool keep = c.in.size() > 2 && c.in[2]->is_bool() && c.in[2]->to_bool();
      c.out[0] = Value(c.arg(0, name).any(name).visit([&]<class U>(const Tensor<U>& t) {
        return AnyTensor(is_all ? Tensor<bool>(torchtpu::all(t, dims, keep)) : Tensor<bool>(torchtpu::any(t, dims, keep)));
      }));
    });
  }
  def("aten::softmax", [](OpContext& c) {
    const char* n = "aten::softmax";
    const AnyTensor x = with_dtype_arg(c, 2, n);
    c.out[0] = Value(round_to(FloatTensor(torchtpu::softmax(float32_of(x, n), c.arg(1, n).to_int(n))), x.dtype()));
  });
  // aten::log_softmax: ops::LogSoftmaxOp (ops/loss.hpp; every floating dtype, its dtype argument)

  // ---- dtype conversion ------------------------------------------------------------------
  // aten::to overloads in traced graphs: (self, dtype, non_blocking, copy, memory_format),
  // (self, device, dtype, non_blocking, copy, memory_format), (self, other, non_blocking, copy,
  // memory_format). A device other than the cpu is refused: graphs run where their inputs are.
  def("aten::to", [](OpContext& c) {
    const char* n = "aten::to";
    // a number: prim::NumToTensor passes numbers through (shape arithmetic stays on the host);
    // here it becomes the 0-dim tensor torch made of it (`torch.tensor(x.size(-1), dtype=...)`)
    const AnyTensor x = tensor_or_number(c.arg(0, n), n);
    const Value& a = c.arg(1, n);
    ScalarType want = x.dtype();
    size_t copy_at = 3;
    if (a.is_tensor()) {
      want = a.any().dtype();
    } else if (a.is_int()) {
      want = ops::detail::from_torch_dtype(a.to_int(), n);
    } else if (a.kind() == Value::Kind::String) {
      if (a.str() != "cpu" && a.str().rfind("cpu:", 0) != 0)
        throw ValueError(std::string(n) + ": moving to device '" + a.str() + "' inside a graph is not supported");
      if (c.in.size() > 2 && c.in[2]->is_int()) want = ops::detail::from_torch_dtype(c.in[2]->to_int(), n);
      copy_at = 4;
    } else if (!a.is_none()) {
      throw TypeError(std::string(n) + ": unsupported argument of kind " + Value::kind_name(a.kind()));
    }
    const bool copy = c.in.size() > copy_at && c.in[copy_at]->is_bool() && c.in[copy_at]->to_bool();
    AnyTensor r = ops::detail::to_dtype(x, want);
    if (copy && r.storage() == x.storage()) r = r.visit([](const auto& t) { return AnyTensor(t.clone()); });
    c.out[0] = Value(std::move(r));
  });
  def("aten::type_as", [](OpContext& c) {
    const char* n = "aten::type_as";
    c.out[0] = Value(ops::detail::to_dtype(tensor_or_number(c.arg(0, n), n), c.arg(1, n).any(n).dtype()));
  });

  // ---- views and copies -------------------------------------------------------------------
  def("aten::tile", [](OpContext& c) {  // torch.tile: ops::RepeatOp after the counts' leading 1s
    const char* n = "aten::tile";
    c.out[0] = Value(torchtpu::tile(c.arg(0, n).any(n), c.arg(1, n).to_dims(n)));
  });
  def("aten::flatten", [](OpContext& c) {
    const char* n = "aten::flatten";
    const int64_t a = c.arg(1, n).to_int(n), b = c.arg(2, n).to_int(n);
    c.out[0] = on_any(c.arg(0, n), n, [&](const auto& x) { return x.flatten(a, b); });
  });
  def("aten::reshape", [](OpContext& c) {
    const char* n = "aten::reshape";
    const Dims d = c.arg(1, n).to_dims(n);
    c.out[0] = on_any(c.arg(0, n), n, [&](const auto& x) { return x.reshape(d); });
  });
  // torch.as_strided(self, size, stride, storage_offset=None): a view of self's storage, as
  // torch's (the strides a trace recorded are torch's layout of self, which the runtime's views
  // and reshapes reproduce: Longformer's overlapping attention chunks); cpu only (the compiled
  // path has values, not storage layouts: it lists the op as not lowered)
  def("aten::as_strided", [](OpContext& c) {
    const char* n = "aten::as_strided";
    const AnyTensor& x = c.arg(0, n).any(n);
    const Dims size = c.arg(1, n).to_dims(n), stride = c.arg(2, n).to_dims(n);
    const bool has_offset = c.in.size() > 3 && !c.in[3]->is_none();
    const int64_t offset = has_offset ? c.in[3]->to_int(n) : x.storage_offset();
    bool ok = size.size() == stride.size() && offset >= 0;
    for (int i = 0; ok && i < size.size(); ++i) ok = size[i] >= 0 && stride[i] >= 0;
    auto refuse = [&](const std::string& why) {
      return ShapeError(std::string(n) + ": size " + to_string(size) + ", stride " + to_string(stride) + " and storage offset " +
                        std::to_string(offset) + " for self " + to_string(x.sizes()) + " " +
                        std::string(dtype_name(x.dtype())) + ": " + why);
    };
    if (!ok) throw refuse("sizes and strides must be non-negative and of one rank, the offset non-negative");
    c.out[0] = Value(x.visit([&]<class U>(const Tensor<U>& t) {
      try {
        return AnyTensor(Tensor<U>(t.storage(), size, stride, offset));
      } catch (const ShapeError& e) {
        throw refuse(std::string("the view reaches outside self's storage (") + e.what() + ")");
      }
    }));
  });
  def("aten::view", [](OpContext& c) {
    const char* n = "aten::view";
    const Dims d = c.arg(1, n).to_dims(n);
    c.out[0] = on_any(c.arg(0, n), n, [&](const auto& x) { return x.view(d); });
  });
  def("aten::transpose", [](OpContext& c) {
    const char* n = "aten::transpose";
    const int64_t a = c.arg(1, n).to_int(n), b = c.arg(2, n).to_int(n);
    c.out[0] = on_any(c.arg(0, n), n, [&](const auto& x) { return x.transpose(a, b); });
  });
  def("aten::swapaxes", [](OpContext& c) {
    const char* n = "aten::swapaxes";
    const int64_t a = c.arg(1, n).to_int(n), b = c.arg(2, n).to_int(n);
    c.out[0] = on_any(c.arg(0, n), n, [&](const auto& x) { return x.transpose(a, b); });
  });
  def("aten::t", [](OpContext& c) { c.out[0] = on_any(c.arg(0, "aten::t"), "aten::t", [](const auto& x) { return x.t(); }); });
  def("aten::permute", [](OpContext& c) {
    const char* n = "aten::permute";
    const Dims d = c.arg(1, n).to_dims(n);
    c.out[0] = on_any(c.arg(0, n), n, [&](const auto& x) { return x.permute(d); });
  });
  def("aten::contiguous", [](OpContext& c) {
    c.out[0] = on_any(c.arg(0, "aten::contiguous"), "aten::contiguous", [](const auto& x) { return x.contiguous(); });
  });
  def("aten::clone", [](OpContext& c) {
    c.out[0] = on_any(c.arg(0, "aten::clone"), "aten::clone", [](const auto& x) { return x.clone(); });
  });
  def("aten::select", [](OpContext& c) {
    const char* n = "aten::select";
    const int64_t d = c.arg(1, n).to_int(n), i = c.arg(2, n).to_int(n);
    c.out[0] = on_any(c.arg(0, n), n, [&](const auto& x) { return x.select(d, i); });
  });
  def("aten::slice", [](OpContext& c) {
    const char* n = "aten::slice";
    const AnyTensor& x = c.arg(0, n).any(n);
    const int64_t dim = c.in.size() > 1 ? c.in[1]->to_int(n) : 0;
    const int64_t start = c.in.size() > 2 && !c.in[2]->is_none() ? c.in[2]->to_int(n) : 0;
    int64_t end = c.in.size() > 3 && !c.in[3]->is_none() ? c.in[3]->to_int(n) : INT64_MAX;
    const int64_t step = c.in.size() > 4 ? c.in[4]->to_int(n) : 1;
    const int64_t sz = x.sizes()[wrap_dim(dim, x.dim(), n)];
    if (end > sz) end = sz;  // torch clamps INT64_MAX ends
    c.out[0] = on_any(c.arg(0, n), n, [&](const auto& t) { return t.slice(dim, start, end, step); });
  });
  def("aten::unsqueeze", [](OpContext& c) {
    const char* n = "aten::unsqueeze";
    const int64_t d = c.arg(1, n).to_int(n);
    c.out[0] = on_any(c.arg(0, n), n, [&](const auto& x) { return x.unsqueeze(d); });
  });
  def("aten::squeeze", [](OpContext& c) {
    const char* n = "aten::squeeze";
    const bool one = c.in.size() > 1;
    const int64_t d = one ? c.in[1]->to_int(n) : 0;
    c.out[0] = on_any(c.arg(0, n), n, [&](const auto& x) { return one ? x.squeeze(d) : x.squeeze(); });
  });
  def("aten::expand", [](OpContext& c) {
    const char* n = "aten::expand";
    const Dims d = c.arg(1, n).to_dims(n);
    c.out[0] = on_any(c.arg(0, n), n, [&](const auto& x) { return x.expand(d); });
  });
  for (const char* id : {"aten::reshape_as", "aten::view_as"})
    def(id, [id](OpContext& c) {
      const Dims d = c.arg(1, id).any(id).sizes();
      c.out[0] = on_any(c.arg(0, id), id, [&](const auto& x) { return x.reshape(d); });
    });
  def("aten::expand_as", [](OpContext& c) {
    const char* n = "aten::expand_as";
    const Dims d = c.arg(1, n).any(n).sizes();
    c.out[0] = on_any(c.arg(0, n), n, [&](const auto& x) { return x.expand(d); });
  });
  // split / chunk / unbind / meshgrid: ops/shape.hpp's view functions (one rule for every path)
  def("aten::chunk", [](OpContext& c) {
    const char* n = "aten::chunk";
    const int64_t k = c.arg(1, n).to_int(n), d = c.in.size() > 2 ? c.arg(2, n).to_int(n) : 0;
    // torchtpu::chunk's views, into the room of the last pass's list
    ops::detail::chunk_into(c.arg(0, n).any(n), k, d, c.out[0].reset_tensor_list());
  });
  for (const char* id : {"aten::split", "aten::split_with_sizes"})
    def(id, [id](OpContext& c) {
      const int64_t d = c.in.size() > 2 ? c.arg(2, id).to_int(id) : 0;
      const AnyTensor& x = c.arg(0, id).any(id);
      const Value& size = c.arg(1, id);
      if (size.is_int())  // torchtpu::split's views, into the room of the last pass's list
        ops::detail::split_into(x, size.to_int(), d, c.out[0].reset_tensor_list());
      else
        c.out[0] = Value(torchtpu::split_with_sizes(x, size.to_ints(id), d));
    });
  def("aten::unbind", [](OpContext& c) {
    const char* n = "aten::unbind";
    c.out[0] = Value(torchtpu::unbind(c.arg(0, n).any(n), c.in.size() > 1 ? c.arg(1, n).to_int(n) : 0));
  });
  def("aten::meshgrid", [](OpContext& c) {
    const char* n = "aten::meshgrid";
    const std::string indexing = c.in.size() > 1 && !c.arg(1, n).is_none() ? c.arg(1, n).str() : "ij";
    c.out[0] = Value(torchtpu::meshgrid(c.arg(0, n).anys(n), indexing));
  });
  // aten::dropout: ops::DropoutOp (ops/loss.hpp); its load check below still rejects train=True, p > 0
  for (const char* id : {"aten::dropout_", "aten::feature_dropout", "aten::alpha_dropout", "aten::detach"})
    def(id, [id](OpContext& c) { c.out[0] = c.arg(0, id); });

  // ---- elementwise -------------------------------------------------------------------------
  // comparisons, logical ops, minimum/maximum: one dtype-generic entry per op struct
  ops::BinaryGraphOps::for_each([&def]<class Op>(std::type_identity<Op>) {
    def(Op::aten.data(), [](OpContext& c) { binary_elementwise<Op>(c, Op::aten.data()); });
    if constexpr (requires { Op::aten_alias; })  // `a & b` traces to aten::__and__
      def(Op::aten_alias.data(), [](OpContext& c) { binary_elementwise<Op>(c, Op::aten_alias.data()); });
  });
  def("aten::argmax", [](OpContext& c) { argextreme_node<true>(c, "aten::argmax"); });
  def("aten::argmin", [](OpContext& c) { argextreme_node<false>(c, "aten::argmin"); });
  def("aten::repeat_interleave", repeat_interleave_node);
  def("aten::leaky_relu", via_float32([](OpContext& c) { leaky_relu_node(c, "aten::leaky_relu", false); }));
  def("aten::leaky_relu_", via_float32([](OpContext& c) { leaky_relu_node(c, "aten::leaky_relu_", true); }, true),
      false, true);
  def("aten::addcmul", via_float32(addcmul_node));
  def("aten::lstm", via_float32(lstm_node));
  def("aten::glu", via_float32(glu_node));
  def("aten::softplus", via_float32(softplus_node));
  def_fold("aten::eye", eye_node);
  def("aten::max", [](OpContext& c) { max_min_node<MaximumOp, true>(c, "aten::max"); });
  def("aten::min", [](OpContext& c) { max_min_node<MinimumOp, false>(c, "aten::min"); });
  def("aten::where", where_node);
  def_fold("aten::arange", arange_node);
  struct BinDef { const char* name; Bin op; bool reverse, in_place, alpha, mode; };
  for (const BinDef& b : {BinDef{"aten::add", Bin::Add, false, false, true, false},
                          BinDef{"aten::add_", Bin::Add, false, true, true, false},
                          BinDef{"aten::sub", Bin::Sub, false, false, true, false},
                          BinDef{"aten::sub_", Bin::Sub, false, true, true, false},
                          BinDef{"aten::rsub", Bin::Sub, true, false, true, false},
                          BinDef{"aten::mul", Bin::Mul, false, false, false, false},
                          BinDef{"aten::mul_", Bin::Mul, false, true, false, false},
                          BinDef{"aten::div", Bin::Div, false, false, false, true},
                          BinDef{"aten::div_", Bin::Div, false, true, false, true},
                          BinDef{"aten::floor_divide", Bin::FloorDiv, false, false, false, false},
                          BinDef{"aten::remainder", Bin::Rem, false, false, false, false},
                          BinDef{"aten::pow", Bin::Pow, false, false, false, false}}) {
    def(b.name, [b](OpContext& c) { binary(c, b.op, b.name, b.reverse, b.in_place, b.alpha, b.mode); }, true,
        b.in_place);
    // add, sub, rsub, mul, div (not the in-place forms): members of run-time regions (jit/region.hpp)
    const int rop = b.op == Bin::Add ? ops::region_op_id<AddOp>() : b.op == Bin::Sub ? ops::region_op_id<SubOp>()
                  : b.op == Bin::Mul ? ops::region_op_id<MulOp>() : b.op == Bin::Div ? ops::region_op_id<DivOp>() : -1;
    if (!b.in_place && rop >= 0) {
      OpDef d = *r.find(b.name);
      d.region = RegionRole{RegionRole::Kind::Binary, rop, b.reverse, b.alpha, b.mode};
      r.add(std::move(d));
    }
  }
  struct ActDef { const char* name; K kind; };
  for (const ActDef& a : {ActDef{"relu", K::Relu}, ActDef{"sigmoid", K::Sigmoid}, ActDef{"silu", K::Silu},
                          ActDef{"hardswish", K::Hardswish}, ActDef{"hardsigmoid", K::Hardsigmoid},
                          ActDef{"tanh", K::Tanh}}) {
    const K k = a.kind;
    act(std::string("aten::") + a.name, [k](std::span<const Value* const>) { return fixed(k); }, false);
    act(std::string("aten::") + a.name + "_", [k](std::span<const Value* const>) { return fixed(k); }, true);
  }
  act("aten::relu6", [](std::span<const Value* const>) { return Epilogue{K::Clamp, 0.0, 6.0}; }, false);
  act("aten::hardtanh", hardtanh_epilogue, false);
  act("aten::hardtanh_", hardtanh_epilogue, true);
  auto gelu_ep = [](std::span<const Value* const> in) {  // approximate: 'none' (erf form) or 'tanh'
    const std::string a = in.size() > 1 && !in[1]->is_none() ? in[1]->str("aten::gelu") : "none";
    if (a != "none" && a != "tanh")
      throw ValueError("aten::gelu: approximate must be 'none' or 'tanh', got '" + a + "'");
    return fixed(a == "tanh" ? K::GeluTanh : K::Gelu);
  };
  act("aten::gelu", gelu_ep, false);
  act("aten::gelu_", gelu_ep, true);
  auto clamp_ep = [](std::span<const Value* const> in) {
    Epilogue e{K::Clamp, -INFINITY, INFINITY};
    if (in.size() > 1 && !in[1]->is_none()) e.lo = in[1]->to_double("aten::clamp");
    if (in.size() > 2 && !in[2]->is_none()) e.hi = in[2]->to_double("aten::clamp");
    return e;
  };
  act("aten::clamp", clamp_ep, false);
  act("aten::clamp_", clamp_ep, true);
  act("aten::clamp_min", [](std::span<const Value* const> in) {
    return Epilogue{K::Clamp, in.size() > 1 ? in[1]->to_double("aten::clamp_min") : 0.0, INFINITY};
  }, false);
  // aten::neg, exp, sqrt, rsqrt, erf, floor, sign, isnan, ...: register_elementwise_ops (every dtype)

  // ---- load-time argument checks (OpDef::check): every argument the kernels or the lowering
  // would ignore or compute differently is either honoured or rejected here, before anything runs.
  using Check = std::function<std::string(std::span<const Value* const>)>;
  auto check = [&r](const char* name, Check fn) {
    OpDef d = *r.find(name);
    d.check = std::move(fn);
    r.add(std::move(d));
  };
  for (const char* n : {"aten::dropout", "aten::dropout_", "aten::feature_dropout", "aten::alpha_dropout"})
    check(n, check_dropout);
  for (const char* n : {"aten::gelu", "aten::gelu_"})
    check(n, [](std::span<const Value* const> in) -> std::string {
      if (in.size() < 2 || (in[1] && in[1]->is_none())) return "";
      if (in[1] && in[1]->kind() == Value::Kind::String && (in[1]->str() == "none" || in[1]->str() == "tanh")) return "";
      return "approximate=" + show(in[1]) + " (torch knows 'none' and 'tanh')";
    });
  check("aten::softmax", [](std::span<const Value* const> in) { return check_dtype(in, 2); });
  check("aten::mean", [](std::span<const Value* const> in) { return check_dtype(in, in.size() == 2 ? 1 : 3); });
  check("aten::_native_multi_head_attention", [](std::span<const Value* const> in) -> std::string {
    if (in.size() > 9 && !(in[9] && in[9]->is_none())) return "mask=" + show(in[9]) + " (attention masks are not supported)";
    return "";
  });
  check("aten::_transformer_encoder_layer_fwd", [](std::span<const Value* const> in) -> std::string {
    if (in.size() > 18 && !(in[18] && in[18]->is_none()))
      return "mask=" + show(in[18]) + " (attention masks are not supported)";
    return "";
  });
}

}  // namespace torchtpu::jit
