// Unary math functions and activations against libtorch fixtures (float32, bfloat16),
// non-contiguous inputs, empty tensors, int inputs (float32 results) and NaN.
#include "testing.hpp"  // Fx, check_fx

using namespace torchtpu;

namespace {
#include "fixtures.inc"  // reference values from libtorch
}

// Each op in float32 (tolerance: a few float ulps; libm and torch's vector code differ) and
// bfloat16 (one bf16 ulp: the float result may round either way near a tie).
#define TORCHTPU_TEST_UNARY(name, expr_of_x)                            \
  SECTION(#name) {                                                      \
    auto f = [](const auto& x) { return expr_of_x; };                   \
    check_fx(f(x32), name##_f32, 4e-6, 2e-6);                           \
    check_fx(f(x16), name##_bf16, 8e-3, 1e-6);                          \
  }

TEST_CASE("unary ops match libtorch in float32 and bfloat16", "[ops][unary]") {
  const Tensor<float> x32 = tensor_of<float>(unary_in);
  const Tensor<bfloat16> x16 = tensor_of<bfloat16>(unary_in);
  TORCHTPU_TEST_UNARY(neg, -x)
  TORCHTPU_TEST_UNARY(abs, abs(x))
  TORCHTPU_TEST_UNARY(exp, exp(x))
  TORCHTPU_TEST_UNARY(log, log(x))
  TORCHTPU_TEST_UNARY(log1p, log1p(x))
  TORCHTPU_TEST_UNARY(expm1, expm1(x))
  TORCHTPU_TEST_UNARY(sqrt, sqrt(x))
  TORCHTPU_TEST_UNARY(rsqrt, rsqrt(x))
  TORCHTPU_TEST_UNARY(sin, sin(x))
  TORCHTPU_TEST_UNARY(cos, cos(x))
  TORCHTPU_TEST_UNARY(tanh, tanh(x))
  TORCHTPU_TEST_UNARY(erf, erf(x))
  TORCHTPU_TEST_UNARY(sigmoid, sigmoid(x))
  TORCHTPU_TEST_UNARY(relu, relu(x))
  TORCHTPU_TEST_UNARY(gelu, gelu(x))
  TORCHTPU_TEST_UNARY(gelu_tanh, gelu(x, "tanh"))
  TORCHTPU_TEST_UNARY(silu, silu(x))
  TORCHTPU_TEST_UNARY(hardswish, hardswish(x))
  TORCHTPU_TEST_UNARY(hardsigmoid, hardsigmoid(x))
  TORCHTPU_TEST_UNARY(clamp, clamp(x, -1.0, 2.0))
  TORCHTPU_TEST_UNARY(hardtanh, hardtanh(x))
}
#undef TORCHTPU_TEST_UNARY

TEST_CASE("unary ops on integer tensors compute in float32", "[ops][unary][dtype]") {
  // example-begin exp-int
  Tensor<int32_t> i = {0, 1, 2};
  auto e = exp(i);  // torch.exp(int tensor) is float32
  // example-end exp-int
  STATIC_REQUIRE(std::same_as<decltype(e)::value_type, float>);
  check_fx(e, exp_int, 1e-6);
  STATIC_REQUIRE(std::same_as<decltype(abs(i))::value_type, int32_t>);
  STATIC_REQUIRE(std::same_as<decltype(relu(i))::value_type, int32_t>);
  STATIC_REQUIRE(std::same_as<decltype(sqrt(Tensor<bool>{}))::value_type, float>);
  STATIC_REQUIRE(std::same_as<decltype(exp(Tensor<double>{}))::value_type, double>);
  STATIC_REQUIRE(std::same_as<decltype(exp(Tensor<half>{}))::value_type, half>);
  check_values(abs(Tensor<int64_t>{-3, 4, 0}), {3, 4, 0});
  check_values(-Tensor<int32_t>{-3, 4, 0}, {3, -4, 0});
}

TEST_CASE("unary ops on non-contiguous and empty inputs", "[ops][unary]") {
  Tensor<float> m = {{1, -2, 3}, {-4, 5, -6}};
  check_values(relu(m.t()), {1, 0, 0, 5, 3, 0});                // transposed
  check_values(abs(m.slice(1, 0, 3, 2)), {1, 3, 4, 6});          // step 2
  check_values(neg(m.select(1, 1)), {2, -5});                     // strided column
  Tensor<float> e = exp(zeros<float>({0, 3}));
  CHECK(e.sizes() == Dims{0, 3});
  CHECK(e.numel() == 0);
}

TEST_CASE("square: floats, wrapping integers, bool, strided", "[ops][unary]") {
  // torch.square: x * x (int64 overflow wraps as torch's multiplication does)
  Tensor<float> m = {{1.5f, -2, 3}, {-4, 0.5f, -6}};
  check_values(square(m.t()), {2.25, 16, 4, 0.25, 9, 36});
  const Tensor<int64_t> big = {int64_t(3037000500), int64_t(-7)};  // 3037000500^2 > INT64_MAX
  const Tensor<int64_t> sq = square(big);
  CHECK(sq.data_ptr()[0] == int64_t(uint64_t(3037000500ull) * uint64_t(3037000500ull)));
  CHECK(sq.data_ptr()[1] == 49);
  check_values(square(Tensor<bool>{true, false}), {1, 0});
}

TEST_CASE("reciprocal and acos: values by hand, integers in float32, edges", "[ops][unary]") {
  // 1/x by hand; 1/0 = inf and 1/-0 = -inf (IEEE, as torch.reciprocal)
  check_values(reciprocal(Tensor<float>{{2, -4}, {0.5f, 8}}), {0.5, -0.25, 2, 0.125});
  const Tensor<float> r0 = reciprocal(Tensor<float>{0.0f, -0.0f});
  CHECK(r0.data_ptr()[0] == std::numeric_limits<float>::infinity());
  CHECK(r0.data_ptr()[1] == -std::numeric_limits<float>::infinity());
  check_values(reciprocal(Tensor<int64_t>{4, -2}), {0.25, -0.5});  // torch: int64 -> float32
  // acos(1) = 0, acos(0) = pi/2, acos(-1) = pi, acos(0.5) = pi/3; |x| > 1 is NaN
  const double pi = 3.14159265358979323846;
  check_values(acos(Tensor<double>{1, 0, -1, 0.5}), {0, pi / 2, pi, pi / 3}, 1e-15);
  check_values(acos(Tensor<float>{2.0f, -1.5f}), {NAN, NAN});
}

TEST_CASE("NaN passes through relu, clamp and abs", "[ops][unary][nan]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor<float> x = {nan, -1.0f, 2.0f};
  check_values(relu(x), {NAN, 0, 2});
  check_values(clamp(x, 0.0, 1.0), {NAN, 0, 1});
  check_values(abs(x), {NAN, 1, 2});
  check_values(clamp(Tensor<float>{-1, 0.5f, 3}, 2.0, 1.0), {1, 1, 1});  // lo > hi: all hi
  check_values(clamp_min(Tensor<float>{-1, 3}, 0.0), {0, 3});
  check_values(clamp_max(Tensor<float>{-1, 3}, 0.0), {-1, 0});
}

TEST_CASE("gelu rejects an unknown approximation", "[ops][unary][errors]") {
  Tensor<float> x = {1.0f};
  CHECK_THROWS_AS(gelu(x, "fast"), ValueError);
  CHECK_THROWS_WITH(gelu(x, "fast"), Catch::Contains("approximate"));
}
