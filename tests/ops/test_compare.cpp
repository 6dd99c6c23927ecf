// Comparisons (bool results), logical and bitwise ops, where, and casts to<U> — by hand,
// with broadcasting, promotion of mixed operands and NaN.
#include "testing.hpp"  // check_values

using namespace torchtpu;

namespace {
template <class T> constexpr bool has_bitwise_not = requires(T t) { ~t; };
template <class T> constexpr bool has_bitwise_and = requires(T t) { t & t; };
template <class T> constexpr bool has_logical_not = requires(T t) { !t; };
}  // namespace

TEST_CASE("comparisons give bool tensors and promote their operands", "[ops][compare]") {
  // example-begin compare
  Tensor<float> a = {1.0f, 2.5f, -3.0f};
  Tensor<int32_t> b = {1, 2, -4};
  auto lt_ab = a < b;  // compared as float32; result dtype bool
  // example-end compare
  STATIC_REQUIRE(std::same_as<decltype(lt_ab)::value_type, bool>);
  check_values(lt_ab, {0, 0, 0});
  check_values(a > b, {0, 1, 1});
  check_values(a == b, {1, 0, 0});
  check_values(a != b, {0, 1, 1});
  check_values(a <= 1, {1, 0, 1});
  check_values(a >= 2.5, {0, 1, 0});
  check_values(eq(b, 2), {0, 1, 0});
  // 2.5 vs int tensor: the int tensor is promoted to float, so 2 < 2.5
  check_values(lt(b, 2.5), {1, 1, 1});
  // broadcasting: [3, 1] vs [3]
  check_values(b.unsqueeze(1) < b, {0, 1, 0, 0, 0, 0, 1, 1, 0});  // [i][j] = b[i] < b[j]
}

TEST_CASE("NaN compares unequal to everything", "[ops][compare][nan]") {
  Tensor<float> x = {NAN, 1.0f};
  check_values(x == x, {0, 1});
  check_values(x != x, {1, 0});
  check_values(x < INFINITY, {0, 1});
}

TEST_CASE("logical ops treat nonzero as true", "[ops][compare][logical]") {
  Tensor<float> a = {0.0f, 2.0f, -1.0f, 0.0f};
  Tensor<int64_t> b = {0, 0, 3, 5};
  check_values(logical_and(a, b), {0, 0, 1, 0});
  check_values(logical_or(a, b), {0, 1, 1, 1});
  check_values(logical_not(a), {1, 0, 0, 1});
  check_values(!b, {1, 1, 0, 0});
  STATIC_REQUIRE(std::same_as<decltype(logical_and(a, b))::value_type, bool>);
}

TEST_CASE("bitwise & | ~ on bool and integer tensors", "[ops][compare][bitwise]") {
  Tensor<bool> p = {true, true, false, false};
  Tensor<bool> q = {true, false, true, false};
  check_values(p & q, {1, 0, 0, 0});
  check_values(p | q, {1, 1, 1, 0});
  check_values(~p, {0, 0, 1, 1});
  STATIC_REQUIRE(std::same_as<decltype(~p)::value_type, bool>);
  STATIC_REQUIRE(std::same_as<decltype(p & q)::value_type, bool>);
  Tensor<int32_t> i = {12, -1, 0};
  check_values(i & 10, {8, 10, 0});
  check_values(i | 3, {15, -1, 3});
  check_values(~i, {-13, 0, -1});
  Tensor<uint8_t> u = {0, 255, 15};
  check_values(~u, {255, 0, 240});
  // `~` and `&` do not exist for floating tensors (see tests/compile_fail/)
  STATIC_REQUIRE(!has_bitwise_not<Tensor<float>>);
  STATIC_REQUIRE(!has_bitwise_and<Tensor<float>>);
  STATIC_REQUIRE(!has_bitwise_not<Tensor<bfloat16>>);
  STATIC_REQUIRE(has_bitwise_not<Tensor<int64_t>>);
  STATIC_REQUIRE(has_logical_not<Tensor<float>>);
}

TEST_CASE("where broadcasts and promotes only its value operands", "[ops][compare][where]") {
  // example-begin where
  Tensor<float> x = {-2.0f, 0.5f, 3.0f};
  Tensor<float> y = where(x > 0, x, 0.0);  // relu, written with where
  // example-end where
  check_values(y, {0, 0.5, 3});
  STATIC_REQUIRE(std::same_as<decltype(where(x > 0, x, 0.0))::value_type, float>);
  // int values, bool condition: int32 stays int32 with an int scalar
  Tensor<int32_t> i = {1, 2, 3};
  auto w = where(Tensor<bool>{true, false, true}, i, -1);
  STATIC_REQUIRE(std::same_as<decltype(w)::value_type, int32_t>);
  check_values(w, {1, -1, 3});
  // int tensor vs float scalar -> float32
  STATIC_REQUIRE(std::same_as<decltype(where(x > 0, i, 0.5))::value_type, float>);
  check_values(where(x > 0, i, 0.5), {0.5, 2, 3});
  // broadcast condition [3, 1] against values [3]
  check_values(where(Tensor<bool>{true, false}.unsqueeze(1), i, i * 10), {1, 2, 3, 10, 20, 30});
  // a non-bool condition is read as "!= 0"
  check_values(where(Tensor<float>{0.0f, 2.0f, NAN}, 1, 0), {0, 1, 1});
  CHECK_THROWS_AS(where(Tensor<bool>{true, false}, i, i), ShapeError);
}

TEST_CASE("casts follow PyTorch conversion rules", "[ops][compare][cast]") {
  Tensor<float> f = {2.7f, -2.7f, 0.0f, 0.4f, 300.0f};
  check_values(to<int32_t>(f), {2, -2, 0, 0, 300});  // truncation toward zero
  check_values(f.to<bool>(), {1, 1, 0, 1, 1});       // != 0
  check_values(to<double>(Tensor<bool>{true, false}), {1, 0});
  check_values(to<bfloat16>(Tensor<float>{1.00390625f, 1.01171875f}), {1.0, 1.015625});  // RNE ties
  check_values(to<half>(Tensor<float>{65520.0f, 65519.0f, 1e-8f}), {INFINITY, 65504.0, 0.0});
  check_values(to<float>(Tensor<int64_t>{16777217}), {16777216.0});
  Tensor<uint8_t> u = to<uint8_t>(Tensor<int32_t>{255, 256, 257});
  check_values(u, {255, 0, 1});  // wraps modulo 256, as torch does for in-range ints
  STATIC_REQUIRE(std::same_as<decltype(f.to<half>())::value_type, half>);
}
