// torchtpu/ops/compare.hpp — comparisons (bool results), logical and bitwise ops, `where`,
// and casts (`to<U>`).
#pragma once
#include <string_view>  // std::string_view

#include "traits.hpp"  // make_map, policies

namespace torchtpu {

struct EqOp : predicate_policy {
  static constexpr std::string_view name = "eq", aten = "aten::eq", hlo = "EQ";
  template <class M> constexpr bool operator()(M a, M b) const { return a == b; }
};
struct NeOp : predicate_policy {
  static constexpr std::string_view name = "ne", aten = "aten::ne", hlo = "NE";
  template <class M> constexpr bool operator()(M a, M b) const { return a != b; }
};
struct LtOp : predicate_policy {
  static constexpr std::string_view name = "lt", aten = "aten::lt", hlo = "LT";
  template <class M> constexpr bool operator()(M a, M b) const { return a < b; }
};
struct LeOp : predicate_policy {
  static constexpr std::string_view name = "le", aten = "aten::le", hlo = "LE";
  template <class M> constexpr bool operator()(M a, M b) const { return a <= b; }
};
struct GtOp : predicate_policy {
  static constexpr std::string_view name = "gt", aten = "aten::gt", hlo = "GT";
  template <class M> constexpr bool operator()(M a, M b) const { return a > b; }
};
struct GeOp : predicate_policy {
  static constexpr std::string_view name = "ge", aten = "aten::ge", hlo = "GE";
  template <class M> constexpr bool operator()(M a, M b) const { return a >= b; }
};
/// Logical ops treat nonzero as true and return bool (torch.logical_and, ...).
struct LogicalAndOp : predicate_policy {
  static constexpr std::string_view name = "logical_and", aten = "aten::logical_and", hlo = "stablehlo.and";
  template <class M> constexpr bool operator()(M a, M b) const { return a != M(0) && b != M(0); }
  // StableHLO lowering: operands to i1 (`!= 0`), then and.
  template <class B, class V> V lower(B& b, const V* x) const {
    return b.binary("and", b.convert(x[0], ScalarType::Bool), b.convert(x[1], ScalarType::Bool));
  }
};
struct LogicalOrOp : predicate_policy {
  static constexpr std::string_view name = "logical_or", aten = "aten::logical_or", hlo = "stablehlo.or";
  template <class M> constexpr bool operator()(M a, M b) const { return a != M(0) || b != M(0); }
  template <class B, class V> V lower(B& b, const V* x) const {
    return b.binary("or", b.convert(x[0], ScalarType::Bool), b.convert(x[1], ScalarType::Bool));
  }
};
struct LogicalNotOp : predicate_policy {
  static constexpr std::string_view name = "logical_not", aten = "aten::logical_not", hlo = "stablehlo.not";
  template <class M> constexpr bool operator()(M a) const { return a == M(0); }
  template <class B, class V> V lower(B& b, const V* x) const {
    return b.unary("not", b.convert(x[0], ScalarType::Bool));
  }
};
/// Bitwise and / or / not on bool and integer tensors (`&`, `|`, `~`).
struct BitwiseAndOp : same_type_policy {
  static constexpr std::string_view name = "bitwise_and", aten = "aten::bitwise_and", hlo = "stablehlo.and";
  template <class M> constexpr M operator()(M a, M b) const { return M(a & b); }
};
struct BitwiseOrOp : same_type_policy {
  static constexpr std::string_view name = "bitwise_or", aten = "aten::bitwise_or", hlo = "stablehlo.or";
  template <class M> constexpr M operator()(M a, M b) const { return M(a | b); }
};
struct BitwiseNotOp : same_type_policy {
  static constexpr std::string_view name = "bitwise_not", aten = "aten::bitwise_not", hlo = "stablehlo.not";
  template <class M> constexpr M operator()(M a) const {
    if constexpr (std::same_as<M, bool>) return !a;
    else return M(~a);
  }
};
/// `where(cond, a, b)`: `a` where cond is true, else `b`. Only `a` and `b` take part in
/// type promotion; `cond` is read as bool.
struct WhereOp {
  static constexpr std::string_view name = "where", aten = "aten::where", hlo = "stablehlo.select";
  static constexpr int promote_first = 1;
  template <class C> using compute = C;
  template <class C> using result = C;
  template <class M> constexpr M operator()(bool c, M a, M b) const { return c ? a : b; }
};
/// Conversion to element type `U` (float → int truncates toward zero; → bool is `!= 0`).
template <element U>
struct CastOp {
  static constexpr std::string_view name = "to", aten = "aten::to", hlo = "stablehlo.convert";
  template <class C> using compute = C;
  template <class C> using result = U;
  template <class M> constexpr M operator()(M a) const { return a; }
};

template <class A, class B> requires binary_operands<A, B>
auto eq(const A& a, const B& b) { return make_map(EqOp{}, a, b); }
template <class A, class B> requires binary_operands<A, B>
auto ne(const A& a, const B& b) { return make_map(NeOp{}, a, b); }
template <class A, class B> requires binary_operands<A, B>
auto lt(const A& a, const B& b) { return make_map(LtOp{}, a, b); }
template <class A, class B> requires binary_operands<A, B>
auto le(const A& a, const B& b) { return make_map(LeOp{}, a, b); }
template <class A, class B> requires binary_operands<A, B>
auto gt(const A& a, const B& b) { return make_map(GtOp{}, a, b); }
template <class A, class B> requires binary_operands<A, B>
auto ge(const A& a, const B& b) { return make_map(GeOp{}, a, b); }
template <class A, class B> requires binary_operands<A, B>
auto logical_and(const A& a, const B& b) { return make_map(LogicalAndOp{}, a, b); }
template <class A, class B> requires binary_operands<A, B>
auto logical_or(const A& a, const B& b) { return make_map(LogicalOrOp{}, a, b); }
template <expression X>
auto logical_not(const X& x) { return make_map(LogicalNotOp{}, x); }

/// Element types the bitwise operators accept.
template <class E>
concept bitwise_expression = expression<E> && (std::same_as<typename E::value_type, bool> ||
                                               integral_element<typename E::value_type>);
template <class A, class B> requires binary_operands<A, B>
auto bitwise_and(const A& a, const B& b) { return make_map(BitwiseAndOp{}, a, b); }
template <class A, class B> requires binary_operands<A, B>
auto bitwise_or(const A& a, const B& b) { return make_map(BitwiseOrOp{}, a, b); }
template <bitwise_expression X>
auto bitwise_not(const X& x) { return make_map(BitwiseNotOp{}, x); }

/// `cond ? a : b` elementwise, broadcasting all three.
template <class C, class A, class B>
  requires expression<C> && operand_like<A> && operand_like<B>
auto where(const C& cond, const A& a, const B& b) { return make_map(WhereOp{}, cond, a, b); }

/// Cast to element type `U` (lazy): `to<double>(x)` or `x.to<double>()`.
template <element U, expression X>
auto to(const X& x) { return make_map(CastOp<U>{}, x); }

}  // namespace torchtpu
