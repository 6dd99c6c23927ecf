// Compile-time checks written as `static_assert(!requires ...)`-style traits: misuse that must
// not compile (see also tests/compile_fail/ for the cases a trait cannot express).
#include "../ops/testing.hpp"  // Catch2, torchtpu

using namespace torchtpu;

namespace {
template <class D, class E> constexpr bool assignable = requires(D d, E e) { d = e; };
template <class D, class E> constexpr bool constructible = std::is_constructible_v<D, E>;
template <class A, class B> constexpr bool can_matmul = requires(A a, B b) { matmul(a, b); };
template <class A, class B> constexpr bool can_add = requires(A a, B b) { a + b; };
template <class T> constexpr bool can_bitnot = requires(T t) { ~t; };
template <class T> constexpr bool can_and = requires(T t) { t & t; };
template <class T> constexpr bool can_neg = requires(T t) { -t; };

using F2 = Tensor<float, 2>;
using F3 = Tensor<float, 3>;
using F = Tensor<float>;
using Sum3 = decltype(std::declval<F3>() + std::declval<F3>());
}  // namespace

// Static ranks: an expression of rank 3 does not go into a rank-2 tensor.
static_assert(!constructible<F2, Sum3>);
static_assert(!assignable<F2&, Sum3>);
static_assert(!constructible<F2, F3>);
static_assert(constructible<F2, F>);       // dynamic: checked at run time
static_assert(constructible<F, Sum3>);
static_assert(constructible<F3, Sum3>);
static_assert(constructible<Tensor<double, 3>, Sum3>);  // a cast of the same rank
// matmul rejects bool (after promotion)
static_assert(!can_matmul<Tensor<bool>, Tensor<bool>>);
static_assert(can_matmul<Tensor<bool>, Tensor<int32_t>>);
static_assert(can_matmul<F2, F3>);
// bitwise operators are for bool and integer tensors only
static_assert(!can_bitnot<F>);
static_assert(!can_bitnot<Tensor<half>>);
static_assert(!can_and<Tensor<double>>);
static_assert(can_bitnot<Tensor<bool>>);
static_assert(can_and<Tensor<uint8_t>>);
// plain numbers alone are not expressions: int + int stays C++
static_assert(!can_add<int, double> || std::same_as<decltype(1 + 2.0), double>);
static_assert(can_add<F, int>);
static_assert(can_neg<F>);
static_assert(!expression<int>);
static_assert(expression<Sum3>);
static_assert(tensor_handle<F2>);
static_assert(!tensor_handle<Sum3>);
// element types
static_assert(element<bfloat16> && !element<char> && !element<int16_t> && !element<long double>);

TEST_CASE("compile-time checks hold (see static_asserts in this file)", "[expr][static]") {
  STATIC_REQUIRE(Sum3::static_rank == 3);
  STATIC_REQUIRE(decltype(std::declval<F3>().sum())::static_rank == dynamic_rank);
  STATIC_REQUIRE(decltype(softmax(std::declval<F3>(), 1))::static_rank == 3);
}
