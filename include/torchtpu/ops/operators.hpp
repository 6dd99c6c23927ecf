// torchtpu/ops/operators.hpp — C++ operator symbols, each forwarding to the named op.
#pragma once
#include "arith.hpp"    // add, sub, mul, div, remainder
#include "compare.hpp"  // eq, ..., bitwise_*, logical_not
#include "unary.hpp"    // neg

namespace torchtpu {

template <class A, class B> requires binary_operands<A, B>
auto operator+(const A& a, const B& b) { return add(a, b); }
template <class A, class B> requires binary_operands<A, B>
auto operator-(const A& a, const B& b) { return sub(a, b); }
template <class A, class B> requires binary_operands<A, B>
auto operator*(const A& a, const B& b) { return mul(a, b); }
template <class A, class B> requires binary_operands<A, B>
auto operator/(const A& a, const B& b) { return div(a, b); }
template <class A, class B> requires binary_operands<A, B>
auto operator%(const A& a, const B& b) { return remainder(a, b); }
template <expression X>
auto operator-(const X& x) { return neg(x); }

template <class A, class B> requires binary_operands<A, B>
auto operator==(const A& a, const B& b) { return eq(a, b); }
template <class A, class B> requires binary_operands<A, B>
auto operator!=(const A& a, const B& b) { return ne(a, b); }
template <class A, class B> requires binary_operands<A, B>
auto operator<(const A& a, const B& b) { return lt(a, b); }
template <class A, class B> requires binary_operands<A, B>
auto operator<=(const A& a, const B& b) { return le(a, b); }
template <class A, class B> requires binary_operands<A, B>
auto operator>(const A& a, const B& b) { return gt(a, b); }
template <class A, class B> requires binary_operands<A, B>
auto operator>=(const A& a, const B& b) { return ge(a, b); }

template <class A, class B>
  requires binary_operands<A, B> && (bitwise_expression<A> || arithmetic_scalar<A>) &&
           (bitwise_expression<B> || arithmetic_scalar<B>)
auto operator&(const A& a, const B& b) { return bitwise_and(a, b); }
template <class A, class B>
  requires binary_operands<A, B> && (bitwise_expression<A> || arithmetic_scalar<A>) &&
           (bitwise_expression<B> || arithmetic_scalar<B>)
auto operator|(const A& a, const B& b) { return bitwise_or(a, b); }
template <bitwise_expression X>
auto operator~(const X& x) { return bitwise_not(x); }
template <expression X>
auto operator!(const X& x) { return logical_not(x); }

}  // namespace torchtpu
