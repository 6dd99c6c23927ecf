// torchtpu/ops/factory.hpp — the tensor-creating ops of model graphs (library ops, ops/library.hpp):
// `zeros`, `ones`, `full`, `empty` (a size list), their `new_*` forms (a size list, `self`'s dtype
// and device), their `*_like` forms (`self`'s shape, dtype and device), and the in-place
// `fill_` and `zero_`, and `copy_` (a traced `x[..., :n] = y` writes `y` through a view). Hugging Face models trace `zeros_like(input_ids)` for token types and
// `full`/`ones` for masks; torchvision's Swin traces `new_zeros` + `fill_` for its shift mask.
//
// One rule for all of them (FactoryRule): a shape, a dtype and one fill value. The value is
// kept exactly: an int or bool fill is int64 (exact for every int64; converted as C++ converts),
// a float fill is a double (rounded to the dtype). `empty*` fill zeros: a graph that reads
// uninitialized memory is wrong either way, and zeros make the cpu and every device agree.
// The typed API's `zeros<T>(shape)`, `full`, `ones` (core/factories.hpp) are the static-dtype
// forms; `zeros_like`, `ones_like`, `full_like` below serve typed and AnyTensor code.
#pragma once
#include <cstdint>      // int64_t
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <type_traits>  // std::is_integral_v, std::is_same_v
#include <variant>      // std::get_if
#include <vector>       // std::vector

#include "../core/any_tensor.hpp"  // AnyTensor
#include "../core/errors.hpp"      // ShapeError, TypeError, UnsupportedOperator
#include "library.hpp"             // TensorMeta, DtypeSet, detail::from_torch_dtype, call
#include "schema.hpp"              // Arg
#include "shape.hpp"               // detail::to_dims, detail::vec

namespace torchtpu::ops {

namespace detail {

/// A fill value kept exactly: `integral` for an int or bool Scalar (`i`), else a double (`d`).
struct FillValue {
  double d = 0;           ///< the value (a float fill; an int fill converted, for display)
  int64_t i = 0;          ///< an int or bool fill, exactly
  bool integral = true;   ///< true: `i` is the value
  bool boolean = false;   ///< a bool Scalar (torch.full's dtype inference: bool)

  /// The value as element type `T` (PyTorch's conversion, core/dtype.hpp `convert`).
  template <element T>
  T as() const { return integral ? convert<T>(i) : convert<T>(d); }
};

/// A C++ number as a FillValue (bool and integers exact, floating types as double).
template <class S>
  requires std::is_arithmetic_v<S>
FillValue fill_of(S v) {
  if constexpr (std::is_same_v<S, bool>) return FillValue{double(v), int64_t(v), true, true};
  else if constexpr (std::is_integral_v<S>) return FillValue{double(v), int64_t(v), true, false};
  else return FillValue{double(v), 0, false, false};
}

/// A Scalar argument as a FillValue: an int, bool or float, or a 0-dim cpu tensor holding one
/// (a traced `x[...] = n` passes its value as a tensor). **Errors:** TypeError naming `op` for
/// anything else, or a tensor with more than one element or on a device.
inline FillValue fill_value(const Arg& a, std::string_view op) {
  if (const auto* b = std::get_if<bool>(&a)) return FillValue{double(*b), int64_t(*b), true, true};
  if (const auto* i = std::get_if<int64_t>(&a)) return FillValue{double(*i), *i, true, false};
  if (const auto* d = std::get_if<double>(&a)) return FillValue{*d, 0, false, false};
  if (const auto* t = std::get_if<AnyTensor>(&a)) {
    if (t->defined() && t->numel() == 1 && t->dim() == 0 && t->device().is_cpu())
      return t->visit([]<class T>(const Tensor<T>& x) -> FillValue {
        const T v = x.contiguous().data_ptr()[0];
        if constexpr (std::is_same_v<T, bool>) return FillValue{double(v), int64_t(v), true, true};
        else if constexpr (std::is_integral_v<T>) return FillValue{double(v), int64_t(v), true, false};
        else return FillValue{double(static_cast<float>(v)), 0, false, false};
      });
    throw TypeError(std::string(op) + ": the fill value must be a number or a 0-dim cpu tensor, got a " +
                    (t->defined() ? to_string(t->sizes()) + " " + std::string(dtype_name(t->dtype())) + " tensor on " +
                                        t->device().str()
                                  : std::string("None")));
  }
  throw TypeError(std::string(op) + ": the fill value must be a number, got " + std::string(arg_kind_name(a)));
}

/// The dtype of a `ScalarType? dtype` argument, or `otherwise` when it is None.
template <class R>
ScalarType dtype_arg(const R& r, ScalarType otherwise, std::string_view op) {
  return r.is_none("dtype") ? otherwise : from_torch_dtype(r.to_int("dtype"), op);
}

/// torch.full's dtype for a fill value when none is given: bool for a bool, int64 for an int,
/// float32 (the default dtype) for a float.
inline ScalarType inferred_dtype(const FillValue& v) {
  return v.boolean ? ScalarType::Bool : v.integral ? ScalarType::Int64 : ScalarType::Float;
}

/// The arguments every factory op resolves to.
struct FactoryArgs {
  Dims size;                               ///< result shape (unused by the `_like` ops: `self`'s)
  ScalarType dtype = ScalarType::Float;    ///< result dtype, when `dtype_given`
  bool dtype_given = true;                 ///< false: `self`'s dtype (decided in `infer`, where it is known on every path)
  FillValue value;                         ///< every element's value
};

/// FactoryArgs with the dtype of a `ScalarType? dtype` argument, or `self`'s when it is None.
template <class R>
FactoryArgs self_typed(const R& r, Dims size, FillValue v, std::string_view op) {
  if (r.is_none("dtype")) return FactoryArgs{size, ScalarType::Float, false, v};
  return FactoryArgs{size, from_torch_dtype(r.to_int("dtype"), op), true, v};
}

/// The shared rule: shape (`size`, or `self`'s when `like`), dtype and value; cpu kernel a fill,
/// lowering a splat constant. `Self` is the op struct (its `aten` names errors).
template <class Self, bool like>
struct FactoryRule {
  /// The result's dtypes: all eight.
  static constexpr DtypeSet dtypes = DtypeSet::all();
  /// Non-tensor arguments.
  using Args = FactoryArgs;
  /// `self`, when there is one, is only measured: it keeps its dtype (no conversion).
  static ScalarType operand_dtype(size_t, ScalarType given, ScalarType) { return given; }
  /// Dtype and shape rule. **Errors:** ShapeError for a negative size or a count past int64.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    if (!a.dtype_given && in.empty())
      throw ValueError(std::string(Self::aten) + ": internal: no dtype and no operand to take it from");
    Dims out = a.size;
    if constexpr (like) out = in[0].sizes;
    for (int64_t d : out)
      if (d < 0)
        throw ShapeError(std::string(Self::aten) + ": negative dimension in size " + to_string(out) +
                         (in.empty() ? std::string() : " (operands " + describe(in) + ")"));
    (void)numel(out);
    return TensorMeta{a.dtype_given || in.empty() ? a.dtype : in[0].dtype, out, Device{}, true};
  }
  /// CPU kernel: every element set to the value.
  template <element T>
  static void cpu(std::span<const AnyTensor>, const Args& a, Tensor<T>& out) {
    if (out.numel()) out.fill_(a.value.template as<T>());
  }
  /// StableHLO: a splat constant (an int fill exact through `constant_int`).
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    const ScalarType t = a.dtype_given ? a.dtype : in[0].dtype;
    if (a.value.integral) return b.constant_int(a.value.i, t, vec(out));
    return b.constant(a.value.d, t, vec(out));
  }
};

}  // namespace detail

/// A tensor of zeros of `self`'s shape (torch.zeros_like).
///
/// **Shapes:** `self: [...]` → the same. **Dtypes:** all eight: `dtype`, else `self`'s.
/// **Errors:** TypeError for a torch dtype without a counterpart (int8, complex).
/// **Source:** torch.zeros_like. `layout`, `device`, `pin_memory`, `memory_format` are
/// accepted and ignored (the result is on `self`'s device, contiguous).
struct ZerosLikeOp : detail::FactoryRule<ZerosLikeOp, true> {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "zeros_like", aten = "aten::zeros_like";
  static constexpr std::string_view schema =
      "aten::zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
      "bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor";
  ///@}
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) {
    return detail::self_typed(r, Dims{}, detail::FillValue{}, aten);
  }
};
TORCHTPU_LIBRARY_OP(ZerosLikeOp);

/// A tensor of ones of `self`'s shape (torch.ones_like). Shapes, dtypes, errors: as ZerosLikeOp.
/// **Source:** torch.ones_like.
struct OnesLikeOp : detail::FactoryRule<OnesLikeOp, true> {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "ones_like", aten = "aten::ones_like";
  static constexpr std::string_view schema =
      "aten::ones_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
      "bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor";
  ///@}
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) {
    return detail::self_typed(r, Dims{}, detail::FillValue{1, 1, true, false}, aten);
  }
};
TORCHTPU_LIBRARY_OP(OnesLikeOp);

/// A tensor of `self`'s shape filled with `fill_value` (torch.full_like). Shapes, dtypes, errors:
/// as ZerosLikeOp; TypeError for a fill value that is not a number. **Source:** torch.full_like.
struct FullLikeOp : detail::FactoryRule<FullLikeOp, true> {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "full_like", aten = "aten::full_like";
  static constexpr std::string_view schema =
      "aten::full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, "
      "Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor";
  ///@}
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) {
    return detail::self_typed(r, Dims{}, detail::fill_value(r.get("fill_value"), aten), aten);
  }
};
TORCHTPU_LIBRARY_OP(FullLikeOp);

/// `empty_like`, zero-filled (see the file comment). Shapes, dtypes, errors: as ZerosLikeOp.
/// **Source:** torch.empty_like.
struct EmptyLikeOp : detail::FactoryRule<EmptyLikeOp, true> {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "empty_like", aten = "aten::empty_like", api = "";
  static constexpr std::string_view schema =
      "aten::empty_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
      "bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor";
  ///@}
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) {
    return detail::self_typed(r, Dims{}, detail::FillValue{}, aten);
  }
};
TORCHTPU_LIBRARY_OP(EmptyLikeOp);

/// Zeros of shape `size` with `self`'s dtype (or `dtype`) on `self`'s device (Tensor.new_zeros).
///
/// **Shapes:** `size` (at most 8 dims) → `size`. **Dtypes:** all eight.
/// **Errors:** ShapeError for a negative size; ValueError for more than 8 dims; TypeError for a
/// torch dtype without a counterpart. **Source:** torch.Tensor.new_zeros.
struct NewZerosOp : detail::FactoryRule<NewZerosOp, false> {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "new_zeros", aten = "aten::new_zeros", api = "";
  static constexpr std::string_view schema =
      "aten::new_zeros(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
      "Device? device=None, bool? pin_memory=None) -> Tensor";
  ///@}
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) {
    return detail::self_typed(r, detail::to_dims(r.to_ints("size"), aten, "size"), detail::FillValue{}, aten);
  }
};
TORCHTPU_LIBRARY_OP(NewZerosOp);

/// Ones of shape `size`, `self`'s dtype and device (Tensor.new_ones). As NewZerosOp.
/// **Source:** torch.Tensor.new_ones.
struct NewOnesOp : detail::FactoryRule<NewOnesOp, false> {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "new_ones", aten = "aten::new_ones", api = "";
  static constexpr std::string_view schema =
      "aten::new_ones(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
      "Device? device=None, bool? pin_memory=None) -> Tensor";
  ///@}
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) {
    return detail::self_typed(r, detail::to_dims(r.to_ints("size"), aten, "size"), detail::FillValue{1, 1, true, false},
                              aten);
  }
};
TORCHTPU_LIBRARY_OP(NewOnesOp);

/// `fill_value` in shape `size`, `self`'s dtype and device (Tensor.new_full). As NewZerosOp.
/// **Source:** torch.Tensor.new_full.
struct NewFullOp : detail::FactoryRule<NewFullOp, false> {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "new_full", aten = "aten::new_full", api = "";
  static constexpr std::string_view schema =
      "aten::new_full(Tensor self, SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, "
      "Device? device=None, bool? pin_memory=None) -> Tensor";
  ///@}
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) {
    return detail::self_typed(r, detail::to_dims(r.to_ints("size"), aten, "size"),
                              detail::fill_value(r.get("fill_value"), aten), aten);
  }
};
TORCHTPU_LIBRARY_OP(NewFullOp);

/// `new_empty`, zero-filled (see the file comment). As NewZerosOp. **Source:** Tensor.new_empty.
struct NewEmptyOp : detail::FactoryRule<NewEmptyOp, false> {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "new_empty", aten = "aten::new_empty", api = "";
  static constexpr std::string_view schema =
      "aten::new_empty(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
      "Device? device=None, bool? pin_memory=None) -> Tensor";
  ///@}
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) {
    return detail::self_typed(r, detail::to_dims(r.to_ints("size"), aten, "size"), detail::FillValue{}, aten);
  }
};
TORCHTPU_LIBRARY_OP(NewEmptyOp);

/// Zeros of shape `size` (torch.zeros), on the cpu (a model graph's constant).
///
/// **Shapes:** `size` (at most 8 dims). **Dtypes:** all eight: `dtype`, else float32.
/// **Errors:** as NewZerosOp. **Source:** torch.zeros. The typed API's form is `zeros<T>(shape)`
/// (core/factories.hpp); this op serves model graphs (`api` empty).
struct ZerosOp : detail::FactoryRule<ZerosOp, false> {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "zeros", aten = "aten::zeros", api = "";
  static constexpr std::string_view schema =
      "aten::zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
      "bool? pin_memory=None) -> Tensor";
  ///@}
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) {
    return Args{detail::to_dims(r.to_ints("size"), aten, "size"), detail::dtype_arg(r, ScalarType::Float, aten), true,
                detail::FillValue{}};
  }
};
TORCHTPU_LIBRARY_OP(ZerosOp);

/// Ones of shape `size` (torch.ones). As ZerosOp. **Source:** torch.ones.
struct OnesOp : detail::FactoryRule<OnesOp, false> {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "ones", aten = "aten::ones", api = "";
  static constexpr std::string_view schema =
      "aten::ones(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
      "bool? pin_memory=None) -> Tensor";
  ///@}
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) {
    return Args{detail::to_dims(r.to_ints("size"), aten, "size"), detail::dtype_arg(r, ScalarType::Float, aten), true,
                detail::FillValue{1, 1, true, false}};
  }
};
TORCHTPU_LIBRARY_OP(OnesOp);

/// `fill_value` in shape `size` (torch.full). Without `dtype` the value decides, as torch's:
/// bool → bool, int → int64, float → float32. As ZerosOp otherwise. **Source:** torch.full.
struct FullOp : detail::FactoryRule<FullOp, false> {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "full", aten = "aten::full", api = "";
  static constexpr std::string_view schema =
      "aten::full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, "
      "Device? device=None, bool? pin_memory=None) -> Tensor";
  ///@}
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) {
    const detail::FillValue v = detail::fill_value(r.get("fill_value"), aten);
    return Args{detail::to_dims(r.to_ints("size"), aten, "size"), detail::dtype_arg(r, detail::inferred_dtype(v), aten), true,
                v};
  }
};
TORCHTPU_LIBRARY_OP(FullOp);

/// `empty`, zero-filled (see the file comment). As ZerosOp. **Source:** torch.empty.
struct EmptyOp : detail::FactoryRule<EmptyOp, false> {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "empty", aten = "aten::empty", api = "";
  static constexpr std::string_view schema =
      "aten::empty(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
      "bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor";
  ///@}
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) {
    return Args{detail::to_dims(r.to_ints("size"), aten, "size"), detail::dtype_arg(r, ScalarType::Float, aten), true,
                detail::FillValue{}};
  }
};
TORCHTPU_LIBRARY_OP(EmptyOp);

/// Every element of `self` set to `value`, in place (Tensor.fill_; a traced `x[a:b] = n` writes
/// through the slice view into its base). The value may be a number or a 0-dim cpu tensor.
///
/// **Shapes:** `self` unchanged. **Dtypes:** all eight (`self`'s; the value converted to it).
/// **Errors:** TypeError for a value that is not a number or a one-element 0-dim cpu tensor.
/// **Source:** torch.Tensor.fill_ (both the Scalar and the Tensor overload).
struct FillOp : detail::FactoryRule<FillOp, true> {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "fill_", aten = "aten::fill_", api = "";
  static constexpr std::string_view schema = "aten::fill_(Tensor(a!) self, Scalar value) -> Tensor(a!)";
  ///@}
  /// Writes its result into operand 0.
  static constexpr bool in_place = true;
  /// The operand is `self` only (the Tensor overload's value is read as a number).
  template <class R>
  static std::vector<AnyTensor> tensors(const R& r) { return {r.tensors().at(0)}; }
  /// Arguments from a model node or a run-time call (`self`'s dtype is the result's).
  template <class R>
  static Args args(const R& r) { return Args{Dims{}, ScalarType::Float, false, detail::fill_value(r.get("value"), aten)}; }
};
TORCHTPU_LIBRARY_OP(FillOp);

/// Every element of `self` set to zero, in place (Tensor.zero_). As FillOp.
/// **Source:** torch.Tensor.zero_.
struct ZeroOp : detail::FactoryRule<ZeroOp, true> {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "zero_", aten = "aten::zero_", api = "";
  static constexpr std::string_view schema = "aten::zero_(Tensor(a!) self) -> Tensor(a!)";
  ///@}
  /// Writes its result into operand 0.
  static constexpr bool in_place = true;
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R&) { return Args{Dims{}, ScalarType::Float, false, detail::FillValue{}}; }
};
TORCHTPU_LIBRARY_OP(ZeroOp);

/// `src` written into `self`, in place (Tensor.copy_): `src` broadcast to `self`'s shape and
/// converted to its dtype (float → int truncates, as torch). A traced slice assignment
/// `mask[..., :n] = y` is an aten::slice view of the base, then copy_ into it: on the cpu the
/// view shares the base's storage; a compiled model takes it where the view covers the whole
/// base, and refuses a write through a narrower view (jit/lower.hpp).
///
/// **Shapes:** `self: [...]`, `src` broadcastable to it → `self`'s shape. **Dtypes:** all eight,
/// in any combination (the result is `self`'s). **Errors:** ShapeError when `src` does not
/// broadcast to `self`'s shape. **Source:** torch.Tensor.copy_. **Lowering:** convert,
/// broadcast_in_dim.
struct CopyInplaceOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "copy_", aten = "aten::copy_", api = "";
  static constexpr std::string_view schema = "aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)";
  ///@}
  /// Writes its result into operand 0.
  static constexpr bool in_place = true;
  /// The result's dtypes: all eight.
  static constexpr DtypeSet dtypes = DtypeSet::all();
  /// Non-tensor arguments: none (`non_blocking` has no meaning on the cpu).
  struct Args {};
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R&) { return Args{}; }
  /// `src` is converted to `self`'s dtype.
  static ScalarType operand_dtype(size_t, ScalarType, ScalarType result) { return result; }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args&) {
    if (broadcast_shapes(in[0].sizes, in[1].sizes, aten) != in[0].sizes)
      throw ShapeError("aten::copy_: src " + to_string(in[1].sizes) + " does not broadcast to self's shape " +
                       to_string(in[0].sizes) + " (operands " + describe(in) + ")");
    return TensorMeta{in[0].dtype, in[0].sizes, Device{}, true};
  }
  /// CPU kernel: `src` broadcast into the result.
  template <element T>
  static void cpu(std::span<const AnyTensor> in, const Args&, Tensor<T>& out) {
    if (out.numel()) out.copy_(in[1].get<T>().expand(out.sizes()));
  }
  /// StableHLO: `src` (converted by the caller) broadcast to `self`'s shape.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args&, const Dims& out) {
    if (in[1].dims == detail::vec(out)) return in[1];
    std::vector<int64_t> bd;
    for (size_t e = 0; e < in[1].dims.size(); ++e) bd.push_back(static_cast<int64_t>(out.size() - in[1].dims.size() + e));
    return b.broadcast_in_dim(in[1], detail::vec(out), bd);
  }
};
TORCHTPU_LIBRARY_OP(CopyInplaceOp);

}  // namespace torchtpu::ops

namespace torchtpu {

/// Zeros of `self`'s shape and dtype, on its device (torch.zeros_like); see ops::ZerosLikeOp.
template <element T, int R>
Tensor<T> zeros_like(const Tensor<T, R>& self) {
  const std::vector<AnyTensor> in{self};
  return ops::call_mixed<ops::ZerosLikeOp, T>(in, {Dims{}, dtype_of<T>(), true, ops::detail::FillValue{}});
}
/// Run-time typed `zeros_like`.
template <std::same_as<AnyTensor> A>
A zeros_like(const A& self) {
  const std::vector<AnyTensor> in{self};
  return ops::call<ops::ZerosLikeOp>(in, {Dims{}, self.dtype(), true, ops::detail::FillValue{}});
}
/// Ones of `self`'s shape and dtype, on its device (torch.ones_like); see ops::OnesLikeOp.
template <element T, int R>
Tensor<T> ones_like(const Tensor<T, R>& self) {
  const std::vector<AnyTensor> in{self};
  return ops::call_mixed<ops::OnesLikeOp, T>(in, {Dims{}, dtype_of<T>(), true, ops::detail::FillValue{1, 1, true, false}});
}
/// Run-time typed `ones_like`.
template <std::same_as<AnyTensor> A>
A ones_like(const A& self) {
  const std::vector<AnyTensor> in{self};
  return ops::call<ops::OnesLikeOp>(in, {Dims{}, self.dtype(), true, ops::detail::FillValue{1, 1, true, false}});
}
/// `value` in `self`'s shape and dtype, on its device (torch.full_like; an integer value is
/// exact for int64); see ops::FullLikeOp.
template <element T, int R, class S>
  requires std::is_arithmetic_v<S>
Tensor<T> full_like(const Tensor<T, R>& self, S value) {
  const std::vector<AnyTensor> in{self};
  return ops::call_mixed<ops::FullLikeOp, T>(in, {Dims{}, dtype_of<T>(), true, ops::detail::fill_of(value)});
}
/// Run-time typed `full_like`.
template <std::same_as<AnyTensor> A, class S>
  requires std::is_arithmetic_v<S>
A full_like(const A& self, S value) {
  const std::vector<AnyTensor> in{self};
  return ops::call<ops::FullLikeOp>(in, {Dims{}, self.dtype(), true, ops::detail::fill_of(value)});
}

}  // namespace torchtpu
