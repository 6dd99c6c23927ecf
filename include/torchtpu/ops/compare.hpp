// torchtpu/ops/compare.hpp — comparisons (bool results), logical and bitwise ops, `where`,
// and casts (`to<U>`).
#pragma once
#include <string_view>  // std::string_view

#include "traits.hpp"  // make_map, policies

namespace torchtpu {

/// Elementwise `a == b`, a bool result.
struct EqOp : predicate_policy {
  ///@{
  /// Names: `eq`, TorchScript `aten::eq`, StableHLO `EQ`.
  static constexpr std::string_view name = "eq", aten = "aten::eq", hlo = "EQ";
  ///@}
  /// CPU kernel: the op on 2 values of the compute type.
  template <class M> constexpr bool operator()(M a, M b) const { return a == b; }
};
/// Elementwise `a != b`, a bool result.
struct NeOp : predicate_policy {
  ///@{
  /// Names: `ne`, TorchScript `aten::ne`, StableHLO `NE`.
  static constexpr std::string_view name = "ne", aten = "aten::ne", hlo = "NE";
  ///@}
  /// CPU kernel: the op on 2 values of the compute type.
  template <class M> constexpr bool operator()(M a, M b) const { return a != b; }
};
/// Elementwise `a < b`, a bool result.
struct LtOp : predicate_policy {
  ///@{
  /// Names: `lt`, TorchScript `aten::lt`, StableHLO `LT`.
  static constexpr std::string_view name = "lt", aten = "aten::lt", hlo = "LT";
  ///@}
  /// CPU kernel: the op on 2 values of the compute type.
  template <class M> constexpr bool operator()(M a, M b) const { return a < b; }
};
/// Elementwise `a <= b`, a bool result.
struct LeOp : predicate_policy {
  ///@{
  /// Names: `le`, TorchScript `aten::le`, StableHLO `LE`.
  static constexpr std::string_view name = "le", aten = "aten::le", hlo = "LE";
  ///@}
  /// CPU kernel: the op on 2 values of the compute type.
  template <class M> constexpr bool operator()(M a, M b) const { return a <= b; }
};
/// Elementwise `a > b`, a bool result.
struct GtOp : predicate_policy {
  ///@{
  /// Names: `gt`, TorchScript `aten::gt`, StableHLO `GT`.
  static constexpr std::string_view name = "gt", aten = "aten::gt", hlo = "GT";
  ///@}
  /// CPU kernel: the op on 2 values of the compute type.
  template <class M> constexpr bool operator()(M a, M b) const { return a > b; }
};
/// Elementwise `a >= b`, a bool result.
struct GeOp : predicate_policy {
  ///@{
  /// Names: `ge`, TorchScript `aten::ge`, StableHLO `GE`.
  static constexpr std::string_view name = "ge", aten = "aten::ge", hlo = "GE";
  ///@}
  /// CPU kernel: the op on 2 values of the compute type.
  template <class M> constexpr bool operator()(M a, M b) const { return a >= b; }
};
/// Logical ops treat nonzero as true and return bool (torch.logical_and, ...).
struct LogicalAndOp : predicate_policy {
  ///@{
  /// Names: `logical_and`, TorchScript `aten::logical_and`, StableHLO `stablehlo.and`.
  static constexpr std::string_view name = "logical_and", aten = "aten::logical_and", hlo = "stablehlo.and";
  ///@}
  /// CPU kernel: the op on 2 values of the compute type.
  template <class M> constexpr bool operator()(M a, M b) const { return a != M(0) && b != M(0); }
  // StableHLO lowering: operands to i1 (`!= 0`), then and.
  /// StableHLO lowering hook (device/lower.hpp): emits the op on operands `x` into builder `b`.
  template <class B, class V> V lower(B& b, const V* x) const {
    return b.binary("and", b.convert(x[0], ScalarType::Bool), b.convert(x[1], ScalarType::Bool));
  }
};
/// Elementwise logical or (nonzero is true), a bool result.
struct LogicalOrOp : predicate_policy {
  ///@{
  /// Names: `logical_or`, TorchScript `aten::logical_or`, StableHLO `stablehlo.or`.
  static constexpr std::string_view name = "logical_or", aten = "aten::logical_or", hlo = "stablehlo.or";
  ///@}
  /// CPU kernel: the op on 2 values of the compute type.
  template <class M> constexpr bool operator()(M a, M b) const { return a != M(0) || b != M(0); }
  /// StableHLO lowering hook (device/lower.hpp): emits the op on operands `x` into builder `b`.
  template <class B, class V> V lower(B& b, const V* x) const {
    return b.binary("or", b.convert(x[0], ScalarType::Bool), b.convert(x[1], ScalarType::Bool));
  }
};
/// Elementwise logical not (zero becomes true), a bool result.
struct LogicalNotOp : predicate_policy {
  ///@{
  /// Names: `logical_not`, TorchScript `aten::logical_not`, StableHLO `stablehlo.not`.
  static constexpr std::string_view name = "logical_not", aten = "aten::logical_not", hlo = "stablehlo.not";
  ///@}
  /// CPU kernel: the op on one value of the compute type.
  template <class M> constexpr bool operator()(M a) const { return a == M(0); }
  /// StableHLO lowering hook (device/lower.hpp): emits the op on operands `x` into builder `b`.
  template <class B, class V> V lower(B& b, const V* x) const {
    return b.unary("not", b.convert(x[0], ScalarType::Bool));
  }
};
/// Bitwise and / or / not on bool and integer tensors (`&`, `|`, `~`).
struct BitwiseAndOp : same_type_policy {
  ///@{
  /// Names: `bitwise_and`, TorchScript `aten::bitwise_and`, StableHLO `stablehlo.and`.
  static constexpr std::string_view name = "bitwise_and", aten = "aten::bitwise_and", hlo = "stablehlo.and";
  /// The operator form's name in traced graphs (`mask & other`).
  static constexpr std::string_view aten_alias = "aten::__and__";
  ///@}
  /// Defined on bool and the integer dtypes only (dtype-generic callers refuse the others).
  static constexpr bool integral_only = true;
  /// CPU kernel: the op on 2 values of the compute type.
  template <class M> constexpr M operator()(M a, M b) const { return M(a & b); }
};
/// Elementwise bitwise or (integers; logical or on bool).
struct BitwiseOrOp : same_type_policy {
  ///@{
  /// Names: `bitwise_or`, TorchScript `aten::bitwise_or`, StableHLO `stablehlo.or`.
  static constexpr std::string_view name = "bitwise_or", aten = "aten::bitwise_or", hlo = "stablehlo.or";
  /// The operator form's name in traced graphs (`mask & other`).
  static constexpr std::string_view aten_alias = "aten::__or__";
  ///@}
  /// Defined on bool and the integer dtypes only (dtype-generic callers refuse the others).
  static constexpr bool integral_only = true;
  /// CPU kernel: the op on 2 values of the compute type.
  template <class M> constexpr M operator()(M a, M b) const { return M(a | b); }
};
/// Elementwise bitwise not (integers; logical not on bool).
struct BitwiseNotOp : same_type_policy {
  ///@{
  /// Names: `bitwise_not`, TorchScript `aten::bitwise_not`, StableHLO `stablehlo.not`.
  static constexpr std::string_view name = "bitwise_not", aten = "aten::bitwise_not", hlo = "stablehlo.not";
  ///@}
  /// Defined on bool and the integer dtypes only (torch: "bitwise_not_cpu" not implemented for
  /// floating types): dtype-generic callers (model graphs) refuse the others with a TypeError.
  static constexpr bool integral_only = true;
  /// CPU kernel: the op on one value of the compute type.
  template <class M> constexpr M operator()(M a) const {
    if constexpr (std::same_as<M, bool>) return !a;
    else return M(~a);
  }
};
/// `where(cond, a, b)`: `a` where cond is true, else `b`. Only `a` and `b` take part in
/// type promotion; `cond` is read as bool.
struct WhereOp {
  ///@{
  /// Names: `where`, TorchScript `aten::where`, StableHLO `stablehlo.select`.
  static constexpr std::string_view name = "where", aten = "aten::where", hlo = "stablehlo.select";
  ///@}
  /// Operand 0 (the condition) is read as bool; the others are promoted together.
  static constexpr int promote_first = 1;
  /// Type the op computes in, for the promoted operand type `C`.
  template <class C> using compute = C;
  /// Element type of the result, for the promoted operand type (`C` or `T`).
  template <class C> using result = C;
  /// CPU kernel: the op on 3 values of the compute type.
  template <class M> constexpr M operator()(bool c, M a, M b) const { return c ? a : b; }
};
/// Conversion to element type `U` (float → int truncates toward zero; → bool is `!= 0`).
template <element U>
struct CastOp {
  ///@{
  /// Names: `to`, TorchScript `aten::to`, StableHLO `stablehlo.convert`.
  static constexpr std::string_view name = "to", aten = "aten::to", hlo = "stablehlo.convert";
  ///@}
  /// Type the op computes in, for the promoted operand type `C`.
  template <class C> using compute = C;
  /// Element type of the result, for the promoted operand type (`C` or `T`).
  template <class C> using result = U;
  /// CPU kernel: the op on one value of the compute type.
  template <class M> constexpr M operator()(M a) const { return a; }
};

template <class A, class B> requires binary_operands<bare<A>, bare<B>>
auto eq(A&& a, B&& b) { return make_map(EqOp{}, std::forward<A>(a), std::forward<B>(b)); }
template <class A, class B> requires binary_operands<bare<A>, bare<B>>
auto ne(A&& a, B&& b) { return make_map(NeOp{}, std::forward<A>(a), std::forward<B>(b)); }
template <class A, class B> requires binary_operands<bare<A>, bare<B>>
auto lt(A&& a, B&& b) { return make_map(LtOp{}, std::forward<A>(a), std::forward<B>(b)); }
template <class A, class B> requires binary_operands<bare<A>, bare<B>>
auto le(A&& a, B&& b) { return make_map(LeOp{}, std::forward<A>(a), std::forward<B>(b)); }
template <class A, class B> requires binary_operands<bare<A>, bare<B>>
auto gt(A&& a, B&& b) { return make_map(GtOp{}, std::forward<A>(a), std::forward<B>(b)); }
template <class A, class B> requires binary_operands<bare<A>, bare<B>>
auto ge(A&& a, B&& b) { return make_map(GeOp{}, std::forward<A>(a), std::forward<B>(b)); }
template <class A, class B> requires binary_operands<bare<A>, bare<B>>
auto logical_and(A&& a, B&& b) { return make_map(LogicalAndOp{}, std::forward<A>(a), std::forward<B>(b)); }
template <class A, class B> requires binary_operands<bare<A>, bare<B>>
auto logical_or(A&& a, B&& b) { return make_map(LogicalOrOp{}, std::forward<A>(a), std::forward<B>(b)); }
template <class X> requires expression<bare<X>>
auto logical_not(X&& x) { return make_map(LogicalNotOp{}, std::forward<X>(x)); }

/// Element types the bitwise operators accept.
template <class E>
concept bitwise_expression = expression<E> && (std::same_as<typename E::value_type, bool> ||
                                               integral_element<typename E::value_type>);
template <class A, class B> requires binary_operands<bare<A>, bare<B>>
auto bitwise_and(A&& a, B&& b) { return make_map(BitwiseAndOp{}, std::forward<A>(a), std::forward<B>(b)); }
template <class A, class B> requires binary_operands<bare<A>, bare<B>>
auto bitwise_or(A&& a, B&& b) { return make_map(BitwiseOrOp{}, std::forward<A>(a), std::forward<B>(b)); }
template <class X> requires bitwise_expression<bare<X>>
auto bitwise_not(X&& x) { return make_map(BitwiseNotOp{}, std::forward<X>(x)); }

/// `cond ? a : b` elementwise, broadcasting all three.
template <class C, class A, class B>
  requires expression<bare<C>> && operand_like<bare<A>> && operand_like<bare<B>>
auto where(C&& cond, A&& a, B&& b) { return make_map(WhereOp{}, std::forward<C>(cond), std::forward<A>(a), std::forward<B>(b)); }

/// Cast to element type `U` (lazy): `to<double>(x)` or `x.to<double>()`.
template <element U, class X> requires expression<bare<X>>
auto to(X&& x) { return make_map(CastOp<U>{}, std::forward<X>(x)); }

}  // namespace torchtpu
