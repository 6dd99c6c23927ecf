// Binary arithmetic: add, sub, mul, div, floor_divide, remainder, pow, minimum, maximum —
// libtorch fixtures with broadcasting, integer semantics by hand (Python signs), size-0 and
// size-1 broadcasting, non-contiguous operands, NaN, and shape errors.
#include "testing.hpp"  // Fx, check_fx

using namespace torchtpu;

namespace {
#include "fixtures.inc"  // reference values from libtorch
const Tensor<float> A = {{1.5f, -2.25f, 0.0f, 3.0f}, {-0.5f, 7.0f, -8.0f, 2.5f}, {4.0f, -1.0f, 0.25f, -3.75f}};
const Tensor<float> B = {2.0f, -3.0f, 0.5f, -1.5f};
// (one-element inner lists like {{1}, {2}} are ambiguous with the 1-D list constructor)
const Tensor<float> C = Tensor<float>{0.75f, -2.0f, 3.0f}.reshape({3, 1});
}  // namespace

TEST_CASE("float32 binary ops broadcast like torch", "[ops][arith]") {
  // example-begin add
  // [3, 4] + [4] broadcasts the row over every row of A; [3, 1] + [4] gives [3, 4].
  auto ab = add(A, B);
  auto cb = C + B;
  // example-end add
  check_fx(ab, add_ab);
  check_fx(cb, add_cb);
  check_fx(sub(A, B), sub_ab);
  check_fx(C - B, sub_cb);
  check_fx(A * B, mul_ab);
  check_fx(mul(C, B), mul_cb);
  check_fx(A / B, div_ab, 1e-6);
  check_fx(div(C, B), div_cb, 1e-6);
  check_fx(floor_divide(A, B), floor_divide_ab);
  check_fx(floor_divide(C, B), floor_divide_cb);
  check_fx(A % B, remainder_ab);
  check_fx(remainder(C, B), remainder_cb);
  check_fx(minimum(A, B), minimum_ab);
  check_fx(minimum(C, B), minimum_cb);
  check_fx(maximum(A, B), maximum_ab);
  check_fx(maximum(C, B), maximum_cb);
  check_fx(pow(abs(A), B), pow_ab, 2e-6);
}

TEST_CASE("bf16 and half arithmetic round like torch", "[ops][arith][dtype]") {
  const Tensor<bfloat16> a16 = to<bfloat16>(A), b16 = to<bfloat16>(B);
  check_fx(a16 * b16, bin_bf16_mul);
  // A double scalar keeps bf16 and is applied in float ("opmath"), as torch >= 2.0 does on CPU
  // (torch 1.13, which made fixtures.inc, first rounds 2.7 to bf16): round(float(a) * 2.7f).
  auto scaled = a16 * 2.7;
  STATIC_REQUIRE(std::same_as<decltype(scaled)::value_type, bfloat16>);
  std::vector<double> want;
  for (int64_t i = 0; i < 12; ++i) want.push_back(float(bfloat16(float(a16.data_ptr()[i]) * 2.7f)));
  check_values(scaled, want);
  CHECK(values_of(scaled)[1] == -6.0625);  // -2.25 * 2.7 = -6.075: nearest bf16 is -6.0625
  const Tensor<half> ah = to<half>(A), bh = to<half>(B);
  check_fx(ah + bh / 3, bin_half_add, 1e-3);
}

TEST_CASE("integer floor_divide and remainder follow Python's signs", "[ops][arith][int]") {
  // 7 // 2 = 3, -7 // 2 = -4, 7 // -2 = -4, -7 // -2 = 3; remainder takes the divisor's sign.
  Tensor<int64_t> a = {7, -7, 7, -7, 0, 6, -6};
  Tensor<int64_t> b = {2, 2, -2, -2, 3, 3, -4};
  check_values(floor_divide(a, b), {3, -4, -4, 3, 0, 2, 1});
  check_values(remainder(a, b), {1, 1, -1, -1, 0, 0, -2});
  check_values(a % b, {1, 1, -1, -1, 0, 0, -2});
  Tensor<int32_t> a32 = {7, -7, 7, -7};
  check_values(floor_divide(a32, 2), {3, -4, 3, -4});
  check_values(remainder(a32, -3), {-2, -1, -2, -1});
  STATIC_REQUIRE(std::same_as<decltype(floor_divide(a32, 2))::value_type, int32_t>);
  // floats: -7.5 // 2 = -4, -7.5 % 2 = 0.5, 7.5 % -2 = -0.5
  check_values(floor_divide(Tensor<float>{-7.5f, 7.5f}, 2.0f), {-4, 3});
  check_values(remainder(Tensor<float>{-7.5f, 7.5f}, Tensor<float>{2.0f, -2.0f}), {0.5, -0.5});
}

TEST_CASE("integer true division gives float32", "[ops][arith][int][dtype]") {
  // example-begin int-div
  Tensor<int64_t> a = {7, -7, 1};
  Tensor<int64_t> b = {2, 2, 3};
  auto q = a / b;  // PyTorch: true division, float32 result
  // example-end int-div
  STATIC_REQUIRE(std::same_as<decltype(q)::value_type, float>);
  check_values(q, {3.5, -3.5, 1.0 / 3.0}, 1e-7);
  check_values(Tensor<int32_t>{1, -1, 0} / 0, {INFINITY, -INFINITY, NAN});
  STATIC_REQUIRE(std::same_as<decltype(Tensor<bool>{} / Tensor<bool>{})::value_type, float>);
  STATIC_REQUIRE(std::same_as<decltype(Tensor<double>{} / Tensor<int32_t>{})::value_type, double>);
}

TEST_CASE("integer division by zero in floor_divide/remainder throws ValueError", "[ops][arith][errors]") {
  Tensor<int64_t> a = {1, 2};
  Tensor<int64_t> z = {1, 0};
  Tensor<int64_t> r;
  CHECK_THROWS_AS(r = floor_divide(a, z), ValueError);
  CHECK_THROWS_AS(r = remainder(a, z), ValueError);
  // floats follow IEEE: x // 0 = ±inf, x % 0 = NaN
  check_values(floor_divide(Tensor<float>{1, -1}, 0.0f), {INFINITY, -INFINITY});
  check_values(remainder(Tensor<float>{1, -1}, 0.0f), {NAN, NAN});
}

TEST_CASE("integer pow stays integral", "[ops][arith][int]") {
  Tensor<int64_t> base = {2, -3, 5, 1, -1, 0};
  Tensor<int64_t> e = {10, 3, 0, -2, -3, 2};
  check_values(pow(base, e), {1024, -27, 1, 1, -1, 0});
  STATIC_REQUIRE(std::same_as<decltype(pow(base, e))::value_type, int64_t>);
  check_values(pow(Tensor<float>{2, 4}, 0.5f), {std::sqrt(2.0f), 2}, 1e-7);
}

TEST_CASE("minimum/maximum propagate NaN from either side", "[ops][arith][nan]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor<float> a = {nan, 1.0f, 3.0f, nan};
  Tensor<float> b = {1.0f, nan, 2.0f, nan};
  check_values(minimum(a, b), {NAN, NAN, 2, NAN});
  check_values(maximum(a, b), {NAN, NAN, 3, NAN});
  check_values(a + b, {NAN, NAN, 5, NAN});
  check_values(minimum(Tensor<int32_t>{3, -2}, Tensor<int32_t>{1, 5}), {1, -2});
}

TEST_CASE("broadcasting with size-0 and size-1 dims", "[ops][arith][broadcast]") {
  // [2, 1] + [0] -> [2, 0]; [0, 3] * [1, 3] -> [0, 3]; [1] * [] -> [1]
  Tensor<float> x = zeros<float>({2, 1});
  Tensor<float> e0 = zeros<float>({0});
  Tensor<float> r = x + e0;
  CHECK(r.sizes() == Dims{2, 0});
  Tensor<float> r2 = zeros<float>({0, 3}) * ones<float>({1, 3});
  CHECK(r2.sizes() == Dims{0, 3});
  Tensor<float> r3 = Tensor<float>{2.0f} * full<float>({}, 3.0f);
  CHECK(r3.sizes() == Dims{1});
  CHECK(r3.at(0) == 6.0f);
  // size-1 on both sides: [3, 1] - [1, 2] -> [3, 2]
  Tensor<float> c = Tensor<float>{1, 2, 3}.unsqueeze(1);
  Tensor<float> row = {{10, 20}};
  check_values(row - c, {9, 19, 8, 18, 7, 17});
  // rank-0 with rank-0
  Tensor<float> s = full<float>({}, 2.0f) + full<float>({}, 5.0f);
  CHECK(s.dim() == 0);
  CHECK(s.item() == 7.0f);
  // [0] cannot broadcast with [2]
  CHECK_THROWS_AS(zeros<float>({0}) + zeros<float>({2}), ShapeError);
}

TEST_CASE("non-contiguous operands: transposed, stepped slices, expanded", "[ops][arith][strided]") {
  Tensor<float> m = arange<float>(12).reshape({3, 4});
  // m.t() is [4, 3] with strides [1, 4]
  check_values(m.t() + m.t(), {0, 8, 16, 2, 10, 18, 4, 12, 20, 6, 14, 22});
  // every other column: [[0, 2], [4, 6], [8, 10]]
  check_values(m.slice(1, 0, 4, 2) * 10.0f, {0, 20, 40, 60, 80, 100});
  // rows 2, 0 reversed by step? (steps are positive): rows 0 and 2
  check_values(m.slice(0, 0, 3, 2) - m.slice(0, 1, 2), {-4, -4, -4, -4, 4, 4, 4, 4});
  // expanded (stride 0) operand
  check_values(Tensor<float>{1, 2}.unsqueeze(1).expand({2, 3}) * m.slice(0, 0, 2).slice(1, 0, 3),
               {0, 1, 2, 8, 10, 12});
  // a transposed result assigned into a contiguous tensor
  Tensor<float> out = zeros<float>({4, 3});
  out.copy_(m.t() * 2.0f);
  check_values(out, {0, 8, 16, 2, 10, 18, 4, 12, 20, 6, 14, 22});
}

TEST_CASE("shape errors name the op and both shapes", "[ops][arith][errors]") {
  Tensor<float> a = zeros<float>({2, 3});
  Tensor<float> b = zeros<float>({4});
  CHECK_THROWS_AS(a + b, ShapeError);
  CHECK_THROWS_WITH(a + b, "add: shapes [2, 3] and [4] cannot be broadcast (size 3 vs 4 at dim 1)");
  CHECK_THROWS_WITH(a * b, Catch::StartsWith("mul: shapes [2, 3] and [4]"));
  CHECK_THROWS_WITH(maximum(b, a), Catch::StartsWith("maximum: shapes [4] and [2, 3]"));
  // assigning into a destination of another shape
  Tensor<float> dst = zeros<float>({3});
  CHECK_THROWS_AS(dst.copy_(a + 1.0f), ShapeError);
  CHECK_THROWS_WITH(dst.copy_(a), "assign: cannot write an expression of shape [2, 3] into a tensor of shape [3]");
}

TEST_CASE("compound assignment is in place", "[ops][arith]") {
  Tensor<float> x = {1, 2, 3};
  float* p = x.data_ptr();
  Tensor<float> view = x;
  x += 1.0f;
  x *= Tensor<float>{2, 2, 2};
  x -= 1;
  x /= 2.0;
  CHECK(x.data_ptr() == p);
  check_values(view, {1.5, 2.5, 3.5});
  Tensor<int64_t> i = {1, 2};
  i += Tensor<int64_t>{10, 20};
  check_values(i, {11, 22});
}

// Issue 18 item 12: signed integer overflow wraps around (two's complement, as torch on the
// CPU), computed without undefined behaviour (UBSan's signed-integer-overflow stays quiet).
// Values from torch 2.x: int32 2147483647 + 1 == -2147483648, * 2 == -2, -x - 2 == 2147483647,
// pow(int32 65536, 1) == 65536, pow(65536, 2) == 0, pow(3, 21) == 1870418611.
TEST_CASE("integer overflow wraps around", "[ops][arith][int]") {
  const int32_t mx = std::numeric_limits<int32_t>::max(), mn = std::numeric_limits<int32_t>::min();
  const Tensor<int32_t> a = {mx, mn, 7};
  check_values(a + 1, {double(mn), double(mn) + 1, 8});
  check_values(a - 1, {double(mx) - 1, double(mx), 6});
  check_values(a * 2, {-2, 0, 14});
  check_values(-a, {double(mn) + 1, double(mn), -7});       // neg(MIN) == MIN
  check_values(abs(a), {double(mx), double(mn), 7});         // abs(MIN) == MIN, as torch
  check_values(a + a, {-2, 0, 14});
  check_values(floor_divide(a, Tensor<int32_t>{-1, -1, -1}), {double(mn) + 1, double(mn), -7});  // MIN // -1 wraps
  check_values(remainder(a, Tensor<int32_t>{-1, -1, -1}), {0, 0, 0});
  // issue 12 item 1: the scalar forms (x // -1, x % -1), fused, and int64: never SIGFPE
  check_values(floor_divide(a, -1), {double(mn) + 1, double(mn), -7});
  check_values(remainder(a, -1), {0, 0, 0});
  check_values(floor_divide(a * 1, -1) + 0, {double(mn) + 1, double(mn), -7});
  const int64_t l_min = std::numeric_limits<int64_t>::min();
  const Tensor<int64_t> lm = {l_min, -7};
  const Tensor<int64_t> lq = floor_divide(lm, int64_t(-1)), lr = remainder(lm, Tensor<int64_t>{-1, -1});
  CHECK(lq.data_ptr()[0] == l_min);
  CHECK(lq.data_ptr()[1] == 7);
  CHECK(lr.data_ptr()[0] == 0);
  CHECK_THROWS_WITH(Tensor<int64_t>(floor_divide(lm, int64_t(0))), "floor_divide: integer division by zero");
  CHECK_THROWS_WITH(Tensor<uint8_t>(remainder(Tensor<uint8_t>{1}, Tensor<uint8_t>{0})),
                    "remainder: integer division by zero");
  const int64_t lmx = std::numeric_limits<int64_t>::max(), lmn = std::numeric_limits<int64_t>::min();
  const Tensor<int64_t> b = {lmx, lmn};
  const Tensor<int64_t> b1 = b + 1, b2 = b * 3, bn = -b;
  CHECK(b1.data_ptr()[0] == lmn);
  CHECK(b1.data_ptr()[1] == lmn + 1);
  CHECK(b2.data_ptr()[0] == lmx - 2);  // (2^63 - 1) * 3 mod 2^64
  CHECK(b2.data_ptr()[1] == lmn);
  CHECK(bn.data_ptr()[1] == lmn);
  // pow squares the base only while exponent bits remain: no overflow for a result that fits
  const Tensor<int32_t> base = {65536, 65536, 3, -2, 46341};
  check_values(pow(base, Tensor<int32_t>{1, 2, 21, 31, 2}), {65536, 0, 1870418611, double(mn), -2147479015});
  const Tensor<int64_t> big = {int64_t(1) << 32, 3};
  const Tensor<int64_t> p = pow(big, Tensor<int64_t>{1, 40});
  CHECK(p.data_ptr()[0] == int64_t(1) << 32);
  CHECK(p.data_ptr()[1] == int64_t(-6289078614652622815));  // 3^40 mod 2^64, as int64
  // uint8 wraps too (it always did: arithmetic in int, then truncated)
  check_values(Tensor<uint8_t>{250, 3} + Tensor<uint8_t>{10, 255}, {4, 2});
}
