// torchtpu/ops/all.hpp — the list of every op of the operator library (ops/library.hpp), the
// one place the other front ends learn which ops exist: the eager PJRT devices build their
// lowering table from it (device/lower.hpp), model graphs their registry entries (jit/
// library_ops.hpp and jit/lower.hpp). Adding an op to the library = its struct in its family
// file + one entry here. Not included by the umbrella header's expression part.
#pragma once
#include <span>           // std::span
#include <string>         // std::string
#include <string_view>    // std::string_view
#include <type_traits>    // std::type_identity
#include <unordered_map>  // std::unordered_map
#include <vector>         // std::vector

#include "advanced_indexing.hpp"  // IndexOp, IndexPutOp, IndexPutInplaceOp, NonzeroOp, MaskedSelectOp
#include "arith.hpp"     // elementwise op structs (ElementwiseOps)
#include "attention.hpp" // ScaledDotProductAttentionOp
#include "compare.hpp"   // elementwise op structs
#include "conv.hpp"      // ConvolutionOp, ConvolutionModeOp, Im2colOp, Col2imOp, Conv1dOp, Conv2dOp, Conv3dOp, ConvTranspose1dOp, ConvTranspose2dOp, ConvTranspose3dOp
#include "pool.hpp"      // MaxPool2dOp, MaxPool1dOp, AvgPool2dOp, AvgPool1dOp, AdaptiveAvgPool2dOp, AdaptiveAvgPool1dOp
#include "pool_indices.hpp"  // MaxPool2dWithIndicesOp, MaxPool1dWithIndicesOp, AdaptiveMaxPool2dOp, AdaptiveMaxPool1dOp
#include "math.hpp"      // CumsumOp, CumprodOp, LogsumexpOp, VarOp, StdOp
#include "norm.hpp"      // LayerNormOp, RmsNormOp, GroupNormOp, InstanceNormOp, BatchNormOp
#include "loss.hpp"      // LogSoftmaxOp, MseLossOp, NllLossOp, NllLossNdOp, CrossEntropyLossOp, DropoutOp, PixelShuffleOp, PixelUnshuffleOp, EmbeddingBagOp
#include "linalg.hpp"    // EinsumOp, LinalgVectorNormOp, NormOp, FrobeniusNormOp, AddmmOp, BaddbmmOp, OuterOp, GerOp, LerpOp, NanToNumOp
#include "factory.hpp"   // ZerosLikeOp, OnesLikeOp, FullLikeOp, EmptyLikeOp, NewZerosOp, NewOnesOp, NewFullOp, NewEmptyOp, ZerosOp, OnesOp, FullOp, EmptyOp, FillOp, ZeroOp, CopyInplaceOp
#include "indexing.hpp"  // IndexSelectOp, GatherOp, TakeAlongDimOp, ScatterOp, ScatterAddOp, ScatterReduceOp, IndexAddOp, IndexAddInplaceOp, MaskedFillOp, MaskedFillInplaceOp, OneHotOp, EmbeddingOp
#include "reduce.hpp"    // reduction op structs
#include "resize.hpp"    // UpsampleNearest1dOp, UpsampleNearest2dOp, UpsampleLinear1dOp, UpsampleBilinear2dOp, UpsampleBicubic2dOp
#include "schema.hpp"    // parse_schema, ArgReader, Arg (call_args)
#include "unary.hpp"     // elementwise op structs
#include "sort.hpp"      // SortOp, ArgsortOp, TopkOp
#include "shape.hpp"     // CatOp, StackOp, RollOp, TrilOp, TriuOp, RepeatOp, FlipOp, DiagOp, PadOp, ConstantPadNdOp

namespace torchtpu::ops {

/// `call_all` with the arguments of a model-graph node or a run-time call by name: tensors and
/// `Op::Args` read from `args` by `Op::schema` (parsed once); the tensors by `Op::tensors`
/// when the op has one (an overload with a Scalar in a Tensor's place). Every result, in order.
/// An op that declares `static constexpr bool in_place = true;` (an aten `_` form such as
/// `index_put_`) writes its result into its first operand and returns that operand.
template <library_op Op>
std::vector<AnyTensor> call_args(std::span<const Arg> args) {
  static const Schema s = parse_schema(Op::schema);
  const ArgReader r(s, args);
  std::vector<AnyTensor> t;
  if constexpr (requires { Op::tensors(r); }) t = Op::tensors(r);
  else t = r.tensors();
  std::vector<AnyTensor> out = call_all<Op>(t, Op::args(r));
  if constexpr (requires { Op::in_place; }) {
    t[0].visit([&]<class T>(const Tensor<T>& self) { Tensor<T>(self).copy_(out[0].get<T>()); });
    return {t[0]};
  }
  return out;
}

/// A list of op structs.
template <class... Ops>
struct OpList {
  /// Calls `f(std::type_identity<Op>{})` for each op, in order.
  template <class F>
  static constexpr void for_each(F&& f) {
    (f(std::type_identity<Ops>{}), ...);
  }
};

/// Every elementwise and reduction op struct (the typed API's expression nodes): the eager
/// PJRT devices build their table of lowering hooks from it (device/lower.hpp), model graphs
/// register the unary ones that have no hand-written entry (jit/library_ops.hpp).
using ElementwiseOps = OpList<
    AddOp, SubOp, MulOp, DivOp, FloorDivideOp, RemainderOp, PowOp, MinimumOp, MaximumOp, EqOp, NeOp, LtOp, LeOp,
    GtOp, GeOp, LogicalAndOp, LogicalOrOp, LogicalNotOp, BitwiseAndOp, BitwiseOrOp, BitwiseNotOp, WhereOp, SumOp,
    MeanOp, ProdOp, MaxOp, MinOp, AnyOp, AllOp, ArgMaxOp, ArgMinOp, NegOp, SquareOp, AbsOp, ExpOp, LogOp, Log1pOp, Expm1Op,
    SqrtOp, RsqrtOp, SinOp, CosOp, TanhOp, ErfOp, SigmoidOp, ReluOp, GeluOp, SiluOp, ClampOp, HardswishOp,
    HardsigmoidOp, FloorOp, CeilOp, TruncOp, RoundOp, SignOp, IsnanOp, IsinfOp, IsfiniteOp>;

/// The one-operand elementwise ops defined on every dtype (integers compute math functions in
/// float32, predicates give bool): model graphs register these by their aten names with a
/// dtype-generic kernel and lowering (jit/library_ops.hpp, jit/lower.hpp).
/// (`BitwiseNotOp` is `integral_only`: bool and integers, the others refused.)
using UnaryOps = OpList<NegOp, SquareOp, AbsOp, ExpOp, LogOp, Log1pOp, Expm1Op, SqrtOp, RsqrtOp, ReciprocalOp, SinOp, CosOp,
                        AcosOp, ErfOp,
                        LogicalNotOp, BitwiseNotOp, FloorOp, CeilOp, TruncOp, RoundOp, SignOp, IsnanOp, IsinfOp,
                        IsfiniteOp>;

/// The two-operand elementwise ops model graphs register by their aten names with a
/// dtype-generic kernel and lowering (jit/builtin_ops.hpp, jit/lower.hpp): comparisons and
/// logical ops (bool results), bitwise and/or (bool and integers; also by their operator names
/// `aten::__and__`, `aten::__or__`), minimum and maximum (the promoted dtype).
using BinaryGraphOps = OpList<EqOp, NeOp, LtOp, LeOp, GtOp, GeOp, LogicalAndOp, LogicalOrOp, BitwiseAndOp, BitwiseOrOp,
                              MinimumOp, MaximumOp>;

/// Every library op.
using LibraryOps = OpList<CatOp, StackOp, RollOp, TrilOp, TriuOp, RepeatOp, FlipOp, DiagOp, IndexSelectOp, GatherOp,
                          TakeAlongDimOp, ScatterOp, ScatterAddOp, ScatterReduceOp, IndexAddOp, IndexAddInplaceOp, MaskedFillOp, MaskedFillInplaceOp,
                          OneHotOp, EmbeddingOp, PadOp,
                          ConstantPadNdOp, CumsumOp, CumprodOp, LogsumexpOp, VarOp, StdOp, LayerNormOp,
                          RmsNormOp, GroupNormOp, InstanceNormOp, BatchNormOp, LogSoftmaxOp, MseLossOp,
                          NllLossOp, NllLossNdOp, CrossEntropyLossOp, DropoutOp, PixelShuffleOp, PixelUnshuffleOp,
                          EmbeddingBagOp, ScaledDotProductAttentionOp, SortOp, ArgsortOp, TopkOp,
                          EinsumOp, LinalgVectorNormOp, NormOp, FrobeniusNormOp, AddmmOp, BaddbmmOp, OuterOp, GerOp,
                          LerpOp, NanToNumOp, UpsampleNearest1dOp, UpsampleNearest2dOp, UpsampleLinear1dOp,
                          UpsampleBilinear2dOp, UpsampleBicubic2dOp, ConvolutionOp, ConvolutionModeOp, Im2colOp, Col2imOp, Conv1dOp, Conv2dOp, Conv3dOp, MaxPool2dOp,
                          AvgPool2dOp, AdaptiveAvgPool2dOp, IndexOp, IndexPutOp, IndexPutInplaceOp, NonzeroOp,
                          MaskedSelectOp, ConvTranspose1dOp, ConvTranspose2dOp, ConvTranspose3dOp, MaxPool1dOp,
                          AvgPool1dOp, AdaptiveAvgPool1dOp, MaxPool2dWithIndicesOp, MaxPool1dWithIndicesOp,
                          AdaptiveMaxPool2dOp, AdaptiveMaxPool1dOp, ZerosLikeOp, OnesLikeOp, FullLikeOp,
                          EmptyLikeOp, NewZerosOp, NewOnesOp, NewFullOp, NewEmptyOp, ZerosOp, OnesOp, FullOp,
                          EmptyOp, FillOp, ZeroOp, CopyInplaceOp>;

// Definitions that walk every op: inline in a header-only program; in a TORCHTPU_SEPARATE_OPS
// program declared here and defined once, in src/ops/library.cpp (TORCHTPU_OPS_LIBRARY_TU).
#if defined(TORCHTPU_OPS_LIBRARY_TU)
#define TORCHTPU_OPS_EVERY_OP_
#else
#define TORCHTPU_OPS_EVERY_OP_ inline
#endif

namespace detail {
using ByNameFn = std::vector<AnyTensor> (*)(std::span<const Arg>);
/// Every library op's `call_args`, by aten name.
#if defined(TORCHTPU_SEPARATE_OPS) && !defined(TORCHTPU_OPS_LIBRARY_TU)
const std::unordered_map<std::string_view, ByNameFn>& by_name_table();
#else
TORCHTPU_OPS_EVERY_OP_ const std::unordered_map<std::string_view, ByNameFn>& by_name_table() {
  static const auto m = [] {
    std::unordered_map<std::string_view, ByNameFn> r;
    LibraryOps::for_each([&r]<class Op>(std::type_identity<Op>) { r.emplace(Op::aten, &call_args<Op>); });
    return r;
  }();
  return m;
}
#endif
}  // namespace detail

/// Runs the library op named `aten` (`"aten::topk"`) on `args`, positional in its schema's
/// order (what a model node or a test sweep passes); every result, in order.
/// **Errors:** UnsupportedOperator for a name that is not a library op; otherwise what the op
/// throws (see its struct).
inline std::vector<AnyTensor> call_by_name_all(std::string_view aten, std::span<const Arg> args) {
  const auto& t = detail::by_name_table();
  const auto it = t.find(aten);
  if (it == t.end()) throw UnsupportedOperator("'" + std::string(aten) + "' is not an op of the operator library");
  return it->second(args);
}

/// `call_by_name_all` for an op with one result (`"aten::cat"`): that result.
/// **Errors:** as `call_by_name_all`; ValueError for an op with several results.
inline AnyTensor call_by_name(std::string_view aten, std::span<const Arg> args) {
  std::vector<AnyTensor> r = call_by_name_all(aten, args);
  if (r.size() != 1)
    throw ValueError("'" + std::string(aten) + "' returns " + std::to_string(r.size()) + " tensors: use call_by_name_all");
  return std::move(r[0]);
}

/// The aten names of every library op, in list order.
inline std::vector<std::string> library_op_names() {
  std::vector<std::string> r;
  LibraryOps::for_each([&r]<class Op>(std::type_identity<Op>) { r.emplace_back(Op::aten); });
  return r;
}

}  // namespace torchtpu::ops
