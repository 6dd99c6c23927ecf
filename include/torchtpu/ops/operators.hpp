// torchtpu/ops/operators.hpp — C++ operator symbols, each forwarding to the named op.
#pragma once
#include "arith.hpp"    // add, sub, mul, div, remainder
#include "compare.hpp"  // eq, ..., bitwise_*, logical_not
#include "unary.hpp"    // neg

namespace torchtpu {

template <class A, class B> requires binary_operands<bare<A>, bare<B>>
auto operator+(A&& a, B&& b) { return add(std::forward<A>(a), std::forward<B>(b)); }
template <class A, class B> requires binary_operands<bare<A>, bare<B>>
auto operator-(A&& a, B&& b) { return sub(std::forward<A>(a), std::forward<B>(b)); }
template <class A, class B> requires binary_operands<bare<A>, bare<B>>
auto operator*(A&& a, B&& b) { return mul(std::forward<A>(a), std::forward<B>(b)); }
template <class A, class B> requires binary_operands<bare<A>, bare<B>>
auto operator/(A&& a, B&& b) { return div(std::forward<A>(a), std::forward<B>(b)); }
template <class A, class B> requires binary_operands<bare<A>, bare<B>>
auto operator%(A&& a, B&& b) { return remainder(std::forward<A>(a), std::forward<B>(b)); }
template <class X> requires expression<bare<X>>
auto operator-(X&& x) { return neg(std::forward<X>(x)); }

template <class A, class B> requires binary_operands<bare<A>, bare<B>>
auto operator==(A&& a, B&& b) { return eq(std::forward<A>(a), std::forward<B>(b)); }
template <class A, class B> requires binary_operands<bare<A>, bare<B>>
auto operator!=(A&& a, B&& b) { return ne(std::forward<A>(a), std::forward<B>(b)); }
template <class A, class B> requires binary_operands<bare<A>, bare<B>>
auto operator<(A&& a, B&& b) { return lt(std::forward<A>(a), std::forward<B>(b)); }
template <class A, class B> requires binary_operands<bare<A>, bare<B>>
auto operator<=(A&& a, B&& b) { return le(std::forward<A>(a), std::forward<B>(b)); }
template <class A, class B> requires binary_operands<bare<A>, bare<B>>
auto operator>(A&& a, B&& b) { return gt(std::forward<A>(a), std::forward<B>(b)); }
template <class A, class B> requires binary_operands<bare<A>, bare<B>>
auto operator>=(A&& a, B&& b) { return ge(std::forward<A>(a), std::forward<B>(b)); }

template <class A, class B>
  requires binary_operands<bare<A>, bare<B>> && (bitwise_expression<bare<A>> || arithmetic_scalar<bare<A>>) &&
           (bitwise_expression<bare<B>> || arithmetic_scalar<bare<B>>)
auto operator&(A&& a, B&& b) { return bitwise_and(std::forward<A>(a), std::forward<B>(b)); }
template <class A, class B>
  requires binary_operands<bare<A>, bare<B>> && (bitwise_expression<bare<A>> || arithmetic_scalar<bare<A>>) &&
           (bitwise_expression<bare<B>> || arithmetic_scalar<bare<B>>)
auto operator|(A&& a, B&& b) { return bitwise_or(std::forward<A>(a), std::forward<B>(b)); }
template <class X> requires bitwise_expression<bare<X>>
auto operator~(X&& x) { return bitwise_not(std::forward<X>(x)); }
template <class X> requires expression<bare<X>>
auto operator!(X&& x) { return logical_not(std::forward<X>(x)); }

}  // namespace torchtpu
