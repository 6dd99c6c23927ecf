// torchtpu/ops/library.hpp — the machinery of the operator library (docs/design.md): the rule
// types an op definition is written against (`TensorMeta`, `DtypeSet`) and `ops::call<Op>`, the
// one generated entry point that the typed API, `AnyTensor` code, the eager PJRT devices and
// model graphs reach for every non-elementwise op.
//
// A library op is one struct in one ops/ file:
//
//   struct CatOp {
//     static constexpr std::string_view name = "cat", aten = "aten::cat";
//     static constexpr std::string_view schema = "aten::cat(Tensor[] tensors, int dim=0) -> Tensor";
//     static constexpr DtypeSet dtypes = DtypeSet::all();     // what libtorch allows
//     struct Args { int64_t dim = 0; };                       // trivially copyable
//     template <class R> static Args args(const R& r);         // from a model node (an ArgReader, schema names)
//     static TensorMeta infer(std::span<const TensorMeta> in, const Args&);  // dtype + shape rule
//     template <element T> static void cpu(std::span<const Tensor<T>> in, const Args&, Tensor<T>& out);
//     template <class B, class V> static V lower(B& b, std::span<const V> in, const Args&, const Dims& out);
//   };
//
// `infer` never sees data: it runs before anything is allocated, on the cpu, on PJRT devices
// and while a model graph is lowered, so its errors (op, every shape, every dtype) are the same
// on every path. `cpu<T>` receives inputs converted to the result dtype and an output of the
// inferred shape. `lower` receives operands already converted to the result dtype.
//
// Operands that keep their own dtype (int64 indices, bool masks) and results of another dtype
// than the data (one_hot: int64). Such an op declares
//
//     static ScalarType operand_dtype(size_t i, ScalarType given, ScalarType result);
//
// (the dtype operand `i` is converted to; `result` is `infer`'s dtype, which may differ from
// every operand's) and takes its operands in the mixed form of the cpu kernel, each already
// converted by that rule, as AnyTensors (`in[1].get<int64_t>()`):
//
//     template <element T> static void cpu(std::span<const AnyTensor> in, const Args&, Tensor<T>& out);
//
// `T` is the result dtype. `lower` receives operands converted by the same rule on every path.
// Typed front ends of such ops call `call_mixed<Op, R>` (operands of any dtypes, result type
// `R` known statically; only `cpu<R>` is instantiated). Two more optional members:
//
//     static Args resolve(std::span<const AnyTensor> in, Args a);  // data-dependent arguments
//     template <class R> static std::vector<AnyTensor> tensors(const R& r);  // operands of an overload
//
// `resolve` runs before `infer` on the cpu and may read data (one_hot's num_classes=-1); on a
// PJRT device it must throw UnsupportedOperator (no data is read there). `tensors` replaces
// `ArgReader::tensors()` in `call_args` when an overload passes a Scalar where the schema has
// a Tensor (scatter.value). `static constexpr std::string_view api = "vector_norm";` names the
// typed/AnyTensor function when it is not `name` ("" when there is none: an aten alias reached
// by name only); tools/ops_table writes it into docs/ops.md. An op whose result dtype is not its
// operand's (argsort: int64) may declare `static constexpr DtypeSet self_dtypes` (what `self`
// may have) for the same table; `dtypes` stays the result's set, which `call` checks. An op
// whose result shape depends on the data (nonzero) declares `static constexpr bool cpu_only =
// true;` (the table's PJRT column; its `resolve` or `lower` throws UnsupportedOperator there).
#pragma once
#include <algorithm>    // std::max
#include <array>        // std::array (multi-result ops)
#include <cstddef>      // std::byte
#include <cstdint>      // int64_t, uint32_t
#include <iterator>     // std::size
#include <memory_resource>  // std::pmr::monotonic_buffer_resource, std::pmr::vector (OperandList)
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <type_traits>  // std::is_trivially_copyable_v, std::type_identity
#include <vector>       // std::vector

#include "../core/any_tensor.hpp"   // AnyTensor
#include "../core/errors.hpp"       // TypeError, ValueError
#include "../core/shape.hpp"        // Dims, contiguous_strides
#include "../device/frontend.hpp"   // device_hooks, NodeInfo (the eager PJRT path)
#include "methods.hpp"              // Tensor::to<U>, copy_

namespace torchtpu::ops {

/// A set of dtypes (one bit per `ScalarType`): the dtypes an op accepts, as libtorch's.
struct DtypeSet {
  uint32_t bits = 0;  ///< bit `int(ScalarType)` set for each member
  /// The eight dtypes.
  static constexpr DtypeSet all() { return {0xffu}; }
  /// float16, bfloat16, float32, float64.
  static constexpr DtypeSet floating() {
    return of({ScalarType::Half, ScalarType::BFloat16, ScalarType::Float, ScalarType::Double});
  }
  /// Every dtype but bool.
  static constexpr DtypeSet numeric() { return {0xffu & ~1u}; }
  /// The set of `l`.
  static constexpr DtypeSet of(std::initializer_list<ScalarType> l) {
    DtypeSet s;
    for (ScalarType t : l) s.bits |= 1u << static_cast<int>(t);
    return s;
  }
  /// True when `t` is in the set.
  constexpr bool has(ScalarType t) const { return (bits >> static_cast<int>(t)) & 1u; }
  /// The members' names, comma-separated (`bool, uint8, ...`).
  std::string str() const {
    std::string s;
    for (int i = 0; i < 8; ++i)
      if (has(static_cast<ScalarType>(i))) s += (s.empty() ? "" : ", ") + std::string(dtype_name(static_cast<ScalarType>(i)));
    return s;
  }
};

/// What an op's dtype and shape rule sees of a tensor: dtype, sizes, device (no data).
/// `defined` is false for an absent optional tensor (`Tensor? bias=None`).
struct TensorMeta {
  ScalarType dtype = ScalarType::Float;  ///< element type
  Dims sizes;                            ///< shape
  Device device{};                       ///< where the data lives
  bool defined = true;                   ///< false for an absent optional tensor

  /// The metadata of `t` (`defined` false for an undefined tensor).
  static TensorMeta of(const AnyTensor& t) {
    if (!t.defined()) return TensorMeta{ScalarType::Float, Dims{}, Device{}, false};
    return TensorMeta{t.dtype(), t.sizes(), t.device(), true};
  }
  /// Rank.
  int dim() const noexcept { return sizes.size(); }
};

namespace detail {

/// A short list (an op call's operands, their metadata, their converted copies) whose first
/// `N` elements live inside the object, on the caller's stack; more go to the heap. `call`
/// and the model runtime build several per op: as std::vectors they were most of a model's
/// heap allocations per forward (resnet18: 200 of 205, issue 16). A std::pmr::vector over a
/// monotonic buffer resource that starts with the inline buffer; neither copyable nor movable
/// (the resource points into the object).
template <class T, size_t N = 8>
class OperandList {
 public:
  /// An empty list, its inline room reserved.
  OperandList() { v_.reserve(N); }
  /// `f(x)` of each element `x` of `src`, in order.
  template <class Src, class F>
  OperandList(const Src& src, F f) {
    v_.reserve(std::max<size_t>(N, std::size(src)));
    for (const auto& x : src) v_.push_back(f(x));
  }
  OperandList(const OperandList&) = delete;
  OperandList& operator=(const OperandList&) = delete;

  /// Appends `x`.
  void push_back(T x) { v_.push_back(std::move(x)); }
  /// Reserves room for `n` elements (the heap only beyond `N`).
  void reserve(size_t n) { v_.reserve(n); }
  /// Appends [first, last).
  template <class It>
  void append(It first, It last) { v_.insert(v_.end(), first, last); }
  /// Number of elements.
  size_t size() const noexcept { return v_.size(); }
  /// The i-th element (unchecked).
  const T& operator[](size_t i) const noexcept { return v_[i]; }
  /// The i-th element, writable (unchecked).
  T& operator[](size_t i) noexcept { return v_[i]; }
  /// Pointer to the elements.
  const T* data() const noexcept { return v_.data(); }
  /// Pointer to the elements, writable.
  T* data() noexcept { return v_.data(); }
  /// Iterator to the first element.
  const T* begin() const noexcept { return v_.data(); }
  /// Iterator past the last element.
  const T* end() const noexcept { return v_.data() + v_.size(); }
  /// Iterator to the first element, writable.
  T* begin() noexcept { return v_.data(); }
  /// Iterator past the last element, writable.
  T* end() noexcept { return v_.data() + v_.size(); }
  /// The elements as a writable span.
  std::span<T> span() noexcept { return {v_.data(), v_.size()}; }

 private:
  alignas(T) std::byte buf_[N * sizeof(T)];
  std::pmr::monotonic_buffer_resource res_{buf_, sizeof buf_};
  std::pmr::vector<T> v_{&res_};
};

}  // namespace detail

/// `[2, 3] float32` — how errors name one operand.
inline std::string describe(const TensorMeta& m) {
  if (!m.defined) return "None";
  return to_string(m.sizes) + " " + std::string(dtype_name(m.dtype));
}
/// `[2, 3] float32, [4] int64` — how errors name an op's operands.
inline std::string describe(std::span<const TensorMeta> in) {
  std::string s;
  for (size_t i = 0; i < in.size(); ++i) s += (i ? ", " : "") + describe(in[i]);
  return s;
}

/// torch.result_type of tensor operands (PyTorch's promotion lattice over `promote_types`).
/// **Errors:** ValueError naming `op` when `in` is empty.
inline ScalarType result_type(std::span<const TensorMeta> in, std::string_view op) {
  bool any = false;
  ScalarType r = ScalarType::Bool;
  for (const TensorMeta& m : in) {
    if (!m.defined) continue;
    r = any ? promote_types(r, m.dtype) : m.dtype;
    any = true;
  }
  if (!any) throw ValueError(std::string(op) + ": expected at least one tensor");
  return r;
}

/// Has an op definition's parts (the library ops of ops/all.hpp satisfy it).
template <class Op>
concept library_op = requires {
  Op::name;
  Op::aten;
  Op::schema;
  Op::dtypes;
  typename Op::Args;
} && std::is_trivially_copyable_v<typename Op::Args>;

/// The dtype operand `i` (of dtype `given`) is converted to before `Op::cpu` and `Op::lower`
/// see it: the result dtype `result`, unless the op declares
/// `static ScalarType operand_dtype(size_t i, ScalarType given, ScalarType result)` (index
/// operands that stay int64, masks that stay bool). Every path (cpu, eager PJRT devices, the
/// whole-graph lowering) converts through this one rule.
template <class Op>
ScalarType operand_dtype(size_t i, ScalarType given, ScalarType result) {
  if constexpr (requires { Op::operand_dtype(i, given, result); }) return Op::operand_dtype(i, given, result);
  else return result;
}

namespace detail {

/// torch's ScalarType code as Python writes it (`torch.float64`; c10/core/ScalarType.h's
/// numbering), or `dtype code N` for a code past that table.
inline std::string torch_dtype_name(int64_t code) {
  static const char* const names[] = {"uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
                                      "complex32", "complex64", "complex128", "bool", "qint8", "quint8", "qint32",
                                      "bfloat16"};
  return code >= 0 && code < 16 ? std::string("torch.") + names[code] : "dtype code " + std::to_string(code);
}

/// Our dtype for torch's ScalarType code (a `ScalarType` argument of a model node: 0 uint8,
/// 3 int32, 4 int64, 5 float16, 6 float32, 7 float64, 11 bool, 15 bfloat16; numbering of
/// c10/core/ScalarType.h). **Errors:** TypeError naming `op` and the torch dtype for a code
/// without a counterpart (int8, int16, complex, quantized).
inline ScalarType from_torch_dtype(int64_t code, std::string_view op) {
  switch (code) {
    case 0: return ScalarType::UInt8;
    case 3: return ScalarType::Int32;
    case 4: return ScalarType::Int64;
    case 5: return ScalarType::Half;
    case 6: return ScalarType::Float;
    case 7: return ScalarType::Double;
    case 11: return ScalarType::Bool;
    case 15: return ScalarType::BFloat16;
    default: break;
  }
  throw TypeError(std::string(op) + ": " + torch_dtype_name(code) + " has no torchtpu counterpart");
}

/// torch's ScalarType code of `t` (the inverse of from_torch_dtype: what `prim::dtype` and
/// `tensor.dtype` give a model graph).
inline int64_t to_torch_dtype(ScalarType t) {
  switch (t) {
    case ScalarType::UInt8: return 0;
    case ScalarType::Int32: return 3;
    case ScalarType::Int64: return 4;
    case ScalarType::Half: return 5;
    case ScalarType::Float: return 6;
    case ScalarType::Double: return 7;
    case ScalarType::Bool: return 11;
    case ScalarType::BFloat16: return 15;
  }
  return 6;
}

/// `t` as dtype `U` (the same handle when it already is; a converted copy otherwise; cpu or
/// device).
template <element U>
Tensor<U> as_dtype(const AnyTensor& t) {
  return t.visit([]<class T>(const Tensor<T>& x) -> Tensor<U> {
    if constexpr (std::is_same_v<T, U>) return x;
    else return Tensor<U>(x.template to<U>());
  });
}

/// `t` converted to dtype `to` (the same handle when it already has it).
template <class = void>  // a template: instantiated (8 x 8 conversions) only where used
AnyTensor to_dtype(const AnyTensor& t, ScalarType to) {
  if (!t.defined() || t.dtype() == to) return t;
  return AnyTensor::dispatch(to, [&]<class U>(std::type_identity<U>) { return AnyTensor(as_dtype<U>(t)); });
}

/// True for an op whose operands keep dtypes of their own (it declares `operand_dtype` and
/// takes the mixed form of the cpu kernel).
template <class Op>
concept mixed_operands = requires(size_t i, ScalarType t) { Op::operand_dtype(i, t, t); };

/// `a`, with `Op::resolve`'s data-dependent arguments filled in when the op has one.
template <class Op>
typename Op::Args resolved(std::span<const AnyTensor> in, const typename Op::Args& a) {
  if constexpr (requires { Op::resolve(in, a); }) return Op::resolve(in, a);
  else return a;
}

/// Runs the cpu kernel of a mixed-operand op: each operand converted by `operand_dtype`.
template <library_op Op, element R>
void cpu_mixed(std::span<const AnyTensor> in, const typename Op::Args& a, Tensor<R>& r) {
  OperandList<AnyTensor> conv;
  conv.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i)
    conv.push_back(in[i].defined() ? to_dtype(in[i], operand_dtype<Op>(i, in[i].dtype(), dtype_of<R>())) : in[i]);
  Op::template cpu<R>(std::span<const AnyTensor>(conv), a, r);
}

/// The device the op runs on: its defined operands' common device. **Errors:** ValueError
/// naming the op and both devices when they differ (rank-0 cpu tensors may join a device, as
/// PyTorch allows cpu scalars).
inline Device common_device(std::span<const TensorMeta> in, std::string_view op) {
  const TensorMeta* first = nullptr;
  for (const TensorMeta& m : in) {
    if (!m.defined || (m.device.is_cpu() && m.dim() == 0)) continue;
    if (!first) first = &m;
    else if (m.device != first->device)
      throw ValueError(std::string(op) + ": expected all tensors to be on the same device, but found " +
                       first->device.str() + " and " + m.device.str());
  }
  return first ? first->device : Device{};
}

/// The state of a multi-result op's device node: its arguments and which result it is.
template <class Args>
struct ResultState {
  Args args;       ///< the op's arguments
  int64_t result;  ///< the result this node stands for
};

/// Records the op on its PJRT device as one node of the deferred graph (device/lower.hpp
/// lowers it through `Op::lower`); the result is a new device tensor. A multi-result op
/// records one node per result (`result` >= 0; operands converted for result dtype
/// `compute`, its first result's); XLA merges their common work when one program holds them.
template <library_op Op>
AnyTensor device_call(std::span<const AnyTensor> in, const typename Op::Args& a, const TensorMeta& out,
                      ScalarType compute, int64_t result = -1) {
  const device::detail::DeviceHooks& h = device::detail::device_hooks(out.device);
  struct Tree {
    const device::detail::DeviceHooks& h;
    void* p;
    ~Tree() { h.tree_free(p); }
  } tree{h, h.tree_new()};
  std::vector<int> kids;
  for (const AnyTensor& t : in) {
    if (!t.defined()) throw ValueError(std::string(Op::aten) + ": optional tensors are not supported on " + out.device.str() + " yet");
    kids.push_back(h.tree_leaf(tree.p, t.storage(), t.dtype(), t.device(), t.sizes(), t.strides(), t.storage_offset()));
  }
  device::NodeInfo n;
  n.kind = device::NodeInfo::Kind::Library;
  n.dtype = out.dtype;
  n.compute = compute;
  n.shape = &out.sizes;
  n.name = Op::name;
  const ResultState<typename Op::Args> st{a, result};
  n.state = result < 0 ? static_cast<const void*>(&a) : static_cast<const void*>(&st);
  n.state_size = result < 0 ? sizeof(a) : sizeof(st);
  n.children = kids.data();
  n.nchildren = static_cast<int>(kids.size());
  const int root = h.tree_node(tree.p, n);
  const Dims strides = contiguous_strides(out.sizes);
  const device::detail::AssignResult r = h.assign(tree.p, root, nullptr, out.dtype, out.sizes, strides, 0, out.sizes);
  if (!r.new_storage) throw ValueError(std::string(Op::aten) + ": internal: the device runtime returned no result");
  return AnyTensor::from_storage(out.dtype, r.new_storage, out.sizes, strides, 0);
}

}  // namespace detail

namespace detail {

/// The metadata of each operand (on the stack for up to 8 operands).
inline OperandList<TensorMeta> metas_of(std::span<const AnyTensor> in) {
  return OperandList<TensorMeta>(in, [](const AnyTensor& t) { return TensorMeta::of(t); });
}

/// Checks that `Op` supports result dtype `t`. **Errors:** TypeError naming the op, the
/// operands and the supported dtypes.
template <library_op Op>
void check_dtype(ScalarType t, std::span<const TensorMeta> metas) {
  if (!Op::dtypes.has(t))
    throw TypeError(std::string(Op::aten) + ": dtype " + std::string(dtype_name(t)) + " is not supported (operands " +
                    describe(metas) + "; supported: " + Op::dtypes.str() + ")");
}

/// Checks that the typed front end's static result type `R` is `t` (an internal error otherwise).
template <library_op Op, element R>
void check_static_dtype(ScalarType t) {
  if (t != dtype_of<R>())
    throw TypeError(std::string(Op::aten) + ": internal: the result dtype is " + std::string(dtype_name(t)) + ", not " +
                    std::string(dtype_name(dtype_of<R>())));
}

/// `Op::infer`'s result for `metas`, its dtype checked, on the operands' common device.
template <library_op Op>
TensorMeta checked_infer(std::span<const TensorMeta> metas, const typename Op::Args& a) {
  TensorMeta out = Op::infer(metas, a);
  check_dtype<Op>(out.dtype, metas);
  out.device = common_device(metas, Op::aten);
  return out;
}

}  // namespace detail

/// Runs library op `Op` on `in` (its tensor operands in schema order) with arguments `a`:
/// fills data-dependent arguments (`Op::resolve`, if any), checks dtypes and shapes
/// (`Op::infer`), then computes on the cpu (`Op::cpu<T>` on operands converted by
/// `operand_dtype`: to the result dtype unless the op says otherwise) or records the op on the
/// operands' PJRT device.
///
/// **Errors:** what `Op::infer` throws (ShapeError, ValueError naming the op and the operands);
/// TypeError when the result dtype is not one `Op` supports; ValueError for operands on
/// different devices.
template <library_op Op>
AnyTensor call(std::span<const AnyTensor> in, const typename Op::Args& args) {
  const auto metas = detail::metas_of(in);
  const typename Op::Args a = detail::resolved<Op>(in, args);
  const TensorMeta out = detail::checked_infer<Op>(metas, a);
  if (!out.device.is_cpu()) return detail::device_call<Op>(in, a, out, out.dtype);
  return AnyTensor::dispatch(out.dtype, [&]<class T>(std::type_identity<T>) -> AnyTensor {
    if constexpr (Op::dtypes.has(dtype_of<T>()) && detail::mixed_operands<Op>) {
      Tensor<T> r = Tensor<T>::empty(out.sizes);
      detail::cpu_mixed<Op, T>(in, a, r);
      return AnyTensor(r);
    } else if constexpr (Op::dtypes.has(dtype_of<T>())) {
      const detail::OperandList<Tensor<T>> typed(in, [](const AnyTensor& t) { return t.defined() ? detail::as_dtype<T>(t) : Tensor<T>(); });
      Tensor<T> r = Tensor<T>::empty(out.sizes);
      Op::template cpu<T>(std::span<const Tensor<T>>(typed), a, r);
      return AnyTensor(r);
    } else {
      throw TypeError(std::string(Op::aten) + ": internal: no cpu kernel for " + std::string(dtype_name(dtype_of<T>())));
    }
  });
}

/// True for an op whose entry point (`call` or `call_results`) a program compiles once: in
/// programs built with `TORCHTPU_SEPARATE_OPS`, which link the translation unit that
/// instantiates every op (src/ops/library.cpp; docs/design.md, "Compile time"). The
/// `TORCHTPU_LIBRARY_OP(Op)` line after each op's struct sets it; elsewhere it is false and
/// every translation unit instantiates what it calls (header-only).
template <class Op>
inline constexpr bool compiled_once = false;

// TORCHTPU_LIBRARY_OP(Op) / TORCHTPU_LIBRARY_MULTI_OP(Op), written once after each library
// op's struct (inside namespace torchtpu::ops): in a TORCHTPU_SEPARATE_OPS program an explicit
// instantiation declaration of the op's entry point (other translation units call it without
// compiling its kernels for eight dtypes), in src/ops/library.cpp (TORCHTPU_OPS_LIBRARY_TU) the
// explicit instantiation definition; nothing in a header-only program.
#if defined(TORCHTPU_OPS_LIBRARY_TU)
#define TORCHTPU_OPS_INSTANTIATION_ template
#elif defined(TORCHTPU_SEPARATE_OPS)
#define TORCHTPU_OPS_INSTANTIATION_ extern template
#endif
#ifdef TORCHTPU_OPS_INSTANTIATION_
#define TORCHTPU_LIBRARY_OP(Op)                          \
  template <>                                            \
  inline constexpr bool compiled_once<Op> = true;        \
  TORCHTPU_OPS_INSTANTIATION_ AnyTensor call<Op>(std::span<const AnyTensor>, const Op::Args&)
#define TORCHTPU_LIBRARY_MULTI_OP(Op)                                                                         \
  template <>                                                                                                 \
  inline constexpr bool compiled_once<Op> = true;                                                             \
  TORCHTPU_OPS_INSTANTIATION_ std::array<AnyTensor, Op::results> call_results<Op>(std::span<const AnyTensor>, \
                                                                                  const Op::Args&)
#else
#define TORCHTPU_LIBRARY_OP(Op) static_assert(true)
#define TORCHTPU_LIBRARY_MULTI_OP(Op) static_assert(true)
#endif

/// `call` for operands of any dtypes whose result type `R` is known statically (the typed API
/// of ops with index or mask operands, ops/indexing.hpp): the same rules, `resolve`, device path
/// and operand conversions (`operand_dtype`), with only `cpu<R>` instantiated.
/// **Errors:** as `call`; TypeError (internal) when `Op::infer`'s dtype is not `R`.
template <library_op Op, element R>
Tensor<R> call_mixed(std::span<const AnyTensor> in, const typename Op::Args& args) {
  if constexpr (compiled_once<Op>) {  // the kernels are compiled once, in `call<Op>`
    const AnyTensor r = call<Op>(in, args);
    detail::check_static_dtype<Op, R>(r.dtype());
    return r.template get<R>();
  } else {
    const auto metas = detail::metas_of(in);
    const typename Op::Args a = detail::resolved<Op>(in, args);
    const TensorMeta out = detail::checked_infer<Op>(metas, a);
    detail::check_static_dtype<Op, R>(out.dtype);
    if (!out.device.is_cpu()) return detail::device_call<Op>(in, a, out, out.dtype).template get<R>();
    Tensor<R> r = Tensor<R>::empty(out.sizes);
    if constexpr (detail::mixed_operands<Op>) {
      detail::cpu_mixed<Op, R>(in, a, r);
    } else {
      const detail::OperandList<Tensor<R>> conv(in, [](const AnyTensor& t) { return t.defined() ? detail::as_dtype<R>(t) : Tensor<R>(); });
      Op::template cpu<R>(std::span<const Tensor<R>>(conv), a, r);
    }
    return r;
  }
}

/// `call` for operands that all have element type `T` and a result of type `R` (the typed
/// API): the same rules and device path, without the run-time dtype dispatch (only `cpu<R>`
/// is instantiated). **Errors:** as `call`.
template <library_op Op, element R, element T>
Tensor<R> call_typed(std::span<const Tensor<T>> in, const typename Op::Args& a) {
  if constexpr (compiled_once<Op> || detail::mixed_operands<Op> || requires { Op::resolve(std::span<const AnyTensor>{}, a); }) {
    const detail::OperandList<AnyTensor> any(in, [](const Tensor<T>& t) { return AnyTensor(t); });  // operand conversions, `resolve`
    return call_mixed<Op, R>(any, a);
  } else {
    const detail::OperandList<TensorMeta> metas(in, [](const Tensor<T>& t) {
      return t.defined() ? TensorMeta{dtype_of<T>(), t.sizes(), t.device(), true} : TensorMeta{dtype_of<T>(), Dims{}, Device{}, false};
    });
    const TensorMeta out = detail::checked_infer<Op>(metas, a);
    detail::check_static_dtype<Op, R>(out.dtype);
    if (!out.device.is_cpu()) {
      const detail::OperandList<AnyTensor> any(in, [](const Tensor<T>& t) { return AnyTensor(t); });
      return detail::device_call<Op>(any, a, out, out.dtype).template get<R>();
    }
    Tensor<R> r = Tensor<R>::empty(out.sizes);
    if constexpr (std::is_same_v<R, T>) {
      Op::template cpu<R>(in, a, r);
    } else {
      const detail::OperandList<Tensor<R>> conv(in, [](const Tensor<T>& t) { return t.defined() ? Tensor<R>(t.template to<R>()) : Tensor<R>(); });
      Op::template cpu<R>(std::span<const Tensor<R>>(conv), a, r);
    }
    return r;
  }
}

/// True for an op with several results (`static constexpr size_t results = N;`): topk, sort,
/// max_pool2d_with_indices. Such an op's `infer` returns `std::array<TensorMeta, N>`; its cpu
/// kernel fills outputs allocated from them,
///
///     template <element T> static void cpu(std::span<const Tensor<T>> in, const Args&, std::span<AnyTensor> out);
///
/// (`T` the first result's dtype, operands converted to it; the mixed form takes
/// `std::span<const AnyTensor> in` as for single-result ops), and its lowering returns every
/// result: `template <class B, class V> static std::array<V, N> lower(B&, std::span<const V> in,
/// const Args&, std::span<const TensorMeta> out)`.
template <class Op>
concept multi_result = library_op<Op> && requires { Op::results; };

/// Runs multi-result op `Op` (see `multi_result`): `call`'s rules, its dtype set checked on the
/// first result; on a PJRT device one node per result. **Errors:** as `call`.
template <multi_result Op>
std::array<AnyTensor, Op::results> call_results(std::span<const AnyTensor> in, const typename Op::Args& args) {
  constexpr size_t N = Op::results;
  const auto metas = detail::metas_of(in);
  const typename Op::Args a = detail::resolved<Op>(in, args);
  std::array<TensorMeta, N> outs = Op::infer(std::span<const TensorMeta>(metas), a);
  detail::check_dtype<Op>(outs[0].dtype, metas);
  const Device dev = detail::common_device(metas, Op::aten);
  std::array<AnyTensor, N> r;
  if (!dev.is_cpu()) {
    for (size_t k = 0; k < N; ++k) {
      outs[k].device = dev;
      r[k] = detail::device_call<Op>(in, a, outs[k], outs[0].dtype, static_cast<int64_t>(k));
    }
    return r;
  }
  for (size_t k = 0; k < N; ++k)
    r[k] = AnyTensor::dispatch(outs[k].dtype, [&]<class U>(std::type_identity<U>) { return AnyTensor(Tensor<U>::empty(outs[k].sizes)); });
  AnyTensor::dispatch(outs[0].dtype, [&]<class T>(std::type_identity<T>) {
    if constexpr (!Op::dtypes.has(dtype_of<T>())) {
      throw TypeError(std::string(Op::aten) + ": internal: no cpu kernel for " + std::string(dtype_name(dtype_of<T>())));
    } else if constexpr (detail::mixed_operands<Op>) {
      detail::OperandList<AnyTensor> conv;
      conv.reserve(in.size());
      for (size_t i = 0; i < in.size(); ++i)
        conv.push_back(in[i].defined() ? detail::to_dtype(in[i], operand_dtype<Op>(i, in[i].dtype(), dtype_of<T>())) : in[i]);
      Op::template cpu<T>(std::span<const AnyTensor>(conv), a, std::span<AnyTensor>(r));
    } else {
      const detail::OperandList<Tensor<T>> typed(in, [](const AnyTensor& t) { return t.defined() ? detail::as_dtype<T>(t) : Tensor<T>(); });
      Op::template cpu<T>(std::span<const Tensor<T>>(typed), a, std::span<AnyTensor>(r));
    }
  });
  return r;
}

/// Every result of library op `Op` as a list (one element for a single-result op).
template <library_op Op>
std::vector<AnyTensor> call_all(std::span<const AnyTensor> in, const typename Op::Args& a) {
  if constexpr (multi_result<Op>) {
    const auto r = call_results<Op>(in, a);
    return std::vector<AnyTensor>(r.begin(), r.end());
  } else {
    return {call<Op>(in, a)};
  }
}

}  // namespace torchtpu::ops
