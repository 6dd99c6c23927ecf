// Element types: bfloat16 rounding (ties to even, NaN kept, overflow), IEEE half conversion
// (normal, subnormal, overflow, exhaustive round trip), PyTorch's promotion table and the
// wrapped-number rule. Bit patterns were produced once with libtorch (Tensor.to + view).
#include <array>    // std::array
#include <bit>      // std::bit_cast
#include <cmath>    // std::isnan
#include <cstdint>  // uint16_t, uint32_t

#include "../ops/testing.hpp"  // Catch2, torchtpu

using namespace torchtpu;

namespace {
// float bit patterns and the bf16 / half bit patterns torch.Tensor.to() gives for them
constexpr std::array<uint32_t, 24> float_bits = {
    0x3f808000, 0x3f818000, 0x3f808001, 0x3f7fffff, 0x7f7fffff, 0x00000001, 0x00400000, 0x80000000,
    0x7f800000, 0xff800000, 0x477fe000, 0x477ff000, 0x477fefff, 0x33000000, 0x33400000, 0x38800000,
    0x387fe000, 0x3f801000, 0x3f803000, 0x40490fdb, 0xc2f6e979, 0x3dcccccd, 0x3a83126f, 0x4b800001};
constexpr std::array<uint16_t, 24> torch_bf16 = {
    0x3f80, 0x3f82, 0x3f81, 0x3f80, 0x7f80, 0x0, 0x40, 0x8000, 0x7f80, 0xff80, 0x4780, 0x4780,
    0x4780, 0x3300, 0x3340, 0x3880, 0x3880, 0x3f80, 0x3f80, 0x4049, 0xc2f7, 0x3dcd, 0x3a83, 0x4b80};
constexpr std::array<uint16_t, 24> torch_half = {
    0x3c04, 0x3c0c, 0x3c04, 0x3c00, 0x7c00, 0x0, 0x0, 0x8000, 0x7c00, 0xfc00, 0x7bff, 0x7c00,
    0x7bff, 0x0, 0x1, 0x400, 0x400, 0x3c00, 0x3c02, 0x4248, 0xd7b7, 0x2e66, 0x1419, 0x7c00};
}  // namespace

TEST_CASE("bfloat16 rounds to nearest, ties to even, like torch", "[core][dtype][bf16]") {
  for (size_t i = 0; i < float_bits.size(); ++i) {
    INFO("float bits 0x" << std::hex << float_bits[i]);
    CHECK(bfloat16(std::bit_cast<float>(float_bits[i])).bits == torch_bf16[i]);
  }
  // by hand: 1 + 2^-8 is halfway between 1 and 1 + 2^-7 -> even (1); 1 + 3 * 2^-8 -> 1 + 2^-6
  CHECK(float(bfloat16(1.00390625f)) == 1.0f);
  CHECK(float(bfloat16(1.01171875f)) == 1.015625f);
  CHECK(float(bfloat16(-1.01171875f)) == -1.015625f);
  static_assert(bfloat16(1.0f).bits == 0x3f80, "constexpr conversion");
}

TEST_CASE("bfloat16 keeps NaN NaN (never inf) and keeps the sign", "[core][dtype][bf16][nan]") {
  // payload only in the low 16 bits: truncation would turn these into +-inf
  for (uint32_t u : {0x7f800001u, 0x7fc00000u, 0xff800001u, 0x7fffffffu, 0xffc00000u}) {
    const bfloat16 b(std::bit_cast<float>(u));
    INFO("float bits 0x" << std::hex << u);
    CHECK(std::isnan(float(b)));
    CHECK((b.bits & 0x8000) == (u >> 16 & 0x8000));
  }
  CHECK(std::isnan(float(std::numeric_limits<bfloat16>::quiet_NaN())));
  CHECK(float(std::numeric_limits<bfloat16>::max()) == std::bit_cast<float>(0x7f7f0000u));
  CHECK(float(std::numeric_limits<bfloat16>::infinity()) == INFINITY);
  CHECK(float(bfloat16(-INFINITY)) == -INFINITY);
}

TEST_CASE("half converts like IEEE binary16 (and torch)", "[core][dtype][half]") {
  for (size_t i = 0; i < float_bits.size(); ++i) {
    INFO("float bits 0x" << std::hex << float_bits[i]);
    CHECK(half(std::bit_cast<float>(float_bits[i])).bits == torch_half[i]);
  }
  CHECK(float(half(65504.0f)) == 65504.0f);
  CHECK(float(half(65520.0f)) == INFINITY);      // halfway to 2^16 rounds up (65504 is odd)
  CHECK(float(half(0x1p-24f)) == 0x1p-24f);      // smallest subnormal
  CHECK(float(half(0x1p-25f)) == 0.0f);          // tie with 0 -> even (0)
  CHECK(float(half(0x1.8p-25f)) == 0x1p-24f);    // above the tie
  CHECK(float(half(0x1.8p-24f)) == 0x1p-23f);    // 1.5 ulp: tie -> even (2 ulp)
  CHECK(float(half(-0.0f)) == 0.0f);
  CHECK(half(-0.0f).bits == 0x8000);
  CHECK(std::isnan(float(half(NAN))));
  CHECK(std::isnan(float(half(std::bit_cast<float>(0x7f800001u)))));  // low payload stays NaN
  CHECK(float(std::numeric_limits<half>::max()) == 65504.0f);
  CHECK(float(std::numeric_limits<half>::epsilon()) == 0x1p-10f);
}

TEST_CASE("every half value round-trips through float", "[core][dtype][half]") {
  int bad = 0;
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const float f = half::to_float(uint16_t(b));
    const bool nan = (b & 0x7c00) == 0x7c00 && (b & 0x3ff);
    if (nan ? !std::isnan(f) || !std::isnan(float(half(f))) : half(f).bits != b) ++bad;
  }
  CHECK(bad == 0);
  int bad16 = 0;
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const float f = float(bfloat16::from_bits(uint16_t(b)));
    const bool nan = (b & 0x7f80) == 0x7f80 && (b & 0x7f);
    if (nan ? !std::isnan(f) : bfloat16(f).bits != b) ++bad16;
  }
  CHECK(bad16 == 0);
}

TEST_CASE("promote_types matches torch.promote_types for every pair", "[core][dtype][promotion]") {
  using S = ScalarType;
  const S types[8] = {S::Bool, S::UInt8, S::Int32, S::Int64, S::Half, S::BFloat16, S::Float, S::Double};
  // rows/columns in the order above, from torch.promote_types
  const S table[8][8] = {
      {S::Bool, S::UInt8, S::Int32, S::Int64, S::Half, S::BFloat16, S::Float, S::Double},
      {S::UInt8, S::UInt8, S::Int32, S::Int64, S::Half, S::BFloat16, S::Float, S::Double},
      {S::Int32, S::Int32, S::Int32, S::Int64, S::Half, S::BFloat16, S::Float, S::Double},
      {S::Int64, S::Int64, S::Int64, S::Int64, S::Half, S::BFloat16, S::Float, S::Double},
      {S::Half, S::Half, S::Half, S::Half, S::Half, S::Float, S::Float, S::Double},
      {S::BFloat16, S::BFloat16, S::BFloat16, S::BFloat16, S::Float, S::BFloat16, S::Float, S::Double},
      {S::Float, S::Float, S::Float, S::Float, S::Float, S::Float, S::Float, S::Double},
      {S::Double, S::Double, S::Double, S::Double, S::Double, S::Double, S::Double, S::Double},
  };
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) {
      INFO(dtype_name(types[i]) << " + " << dtype_name(types[j]));
      CHECK(promote_types(types[i], types[j]) == table[i][j]);
    }
  STATIC_REQUIRE(std::same_as<promote_t<half, bfloat16>, float>);
  STATIC_REQUIRE(std::same_as<promote_t<uint8_t, int32_t>, int32_t>);
  STATIC_REQUIRE(std::same_as<promote_t<bool, uint8_t>, uint8_t>);
  STATIC_REQUIRE(std::same_as<promote_t<int64_t, half>, half>);
}

TEST_CASE("wrapped numbers promote only across categories", "[core][dtype][promotion]") {
  // example-begin wrapped-number
  Tensor<bfloat16> h = ones<bfloat16>({2});
  auto a = h * 2.0;                     // bfloat16: a double does not widen a float tensor
  auto b = Tensor<int32_t>{1, 2} * 2.5;  // float32: a float scalar lifts an int tensor
  auto c = Tensor<bool>{true} + 1;       // int64: an int scalar lifts a bool tensor
  // example-end wrapped-number
  STATIC_REQUIRE(std::same_as<decltype(a)::value_type, bfloat16>);
  STATIC_REQUIRE(std::same_as<decltype(b)::value_type, float>);
  STATIC_REQUIRE(std::same_as<decltype(c)::value_type, int64_t>);
  check_values(a, {2, 2});
  check_values(b, {2.5, 5});
  check_values(c, {2});
  // the same rules as torch (x + 1, x + 2.5, x + True for each dtype)
  STATIC_REQUIRE(std::same_as<decltype(Tensor<uint8_t>{} + 1)::value_type, uint8_t>);
  STATIC_REQUIRE(std::same_as<decltype(Tensor<uint8_t>{} + 2.5)::value_type, float>);
  STATIC_REQUIRE(std::same_as<decltype(Tensor<bool>{} + true)::value_type, bool>);
  STATIC_REQUIRE(std::same_as<decltype(Tensor<bool>{} + 2.5)::value_type, float>);
  STATIC_REQUIRE(std::same_as<decltype(Tensor<int32_t>{} + int64_t(1))::value_type, int32_t>);
  STATIC_REQUIRE(std::same_as<decltype(Tensor<int64_t>{} + true)::value_type, int64_t>);
  STATIC_REQUIRE(std::same_as<decltype(Tensor<half>{} + 2.5f)::value_type, half>);
  STATIC_REQUIRE(std::same_as<decltype(Tensor<double>{} * 2.5f)::value_type, double>);
  STATIC_REQUIRE(std::same_as<decltype(2 * Tensor<float>{})::value_type, float>);
  // a tensor operand (even rank 0) promotes normally
  STATIC_REQUIRE(std::same_as<decltype(Tensor<int32_t>{} + Tensor<int64_t>{})::value_type, int64_t>);
  STATIC_REQUIRE(std::same_as<decltype(Tensor<bfloat16>{} * Tensor<float>{})::value_type, float>);
  // an int scalar applied to an int32 tensor is converted to int32
  check_values(Tensor<int32_t>{1, -1} * 3, {3, -3});
}

TEST_CASE("convert follows PyTorch's conversions", "[core][dtype]") {
  CHECK(convert<int32_t>(-2.7f) == -2);
  CHECK(convert<bool>(0.5f) == true);
  CHECK(convert<bool>(bfloat16(0.0f)) == false);
  CHECK(convert<bool>(NAN) == true);
  CHECK(convert<float>(bfloat16::from_bits(0x3fc0)) == 1.5f);
  CHECK(convert<half>(int64_t(2049)).bits == half(2048.0f).bits);  // 2049 -> even 2048
  CHECK(convert<uint8_t>(bfloat16(200.0f)) == 200);
  CHECK(dtype_name(dtype_of<half>()) == "float16");
  CHECK(dtype_size(ScalarType::BFloat16) == 2);
  STATIC_REQUIRE(Tensor<bfloat16>::dtype() == ScalarType::BFloat16);
}

// Issue 18 item 12: float -> integer conversion of NaN, +-inf and out-of-range values is
// defined (no undefined behaviour): the integer minimum for int32 and int64, and for uint8 the
// low 8 bits of the int32 result. These are torch's values on x86 (checked with torch 2.x:
// torch.tensor([nan, inf, -inf, 3e9]).to(torch.int32) is all -2147483648, and
// torch.tensor([300., -1., nan, 1e10, 256.5, -255.5, 3e9]).to(torch.uint8) is
// [44, 255, 0, 0, 0, 1, 0]).
TEMPLATE_TEST_CASE("convert of NaN, inf and out-of-range floats to integers", "[core][dtype]", float, double,
                   bfloat16, half) {
  using F = TestType;
  const int32_t i32min = std::numeric_limits<int32_t>::min();
  const int64_t i64min = std::numeric_limits<int64_t>::min();
  auto f = [](double v) { return convert<F>(v); };
  for (double v : {double(NAN), double(INFINITY), -double(INFINITY)}) {
    INFO("value " << v);
    CHECK(convert<int32_t>(f(v)) == i32min);
    CHECK(convert<int64_t>(f(v)) == i64min);
    CHECK(convert<uint8_t>(f(v)) == 0);
  }
  CHECK(convert<int32_t>(f(-2.75)) == -2);
  CHECK(convert<int64_t>(f(2.75)) == 2);
  CHECK(convert<uint8_t>(f(300.0)) == 44);
  CHECK(convert<uint8_t>(f(-1.0)) == 255);
  if constexpr (!std::same_as<F, half>) {  // beyond half's range (65504)
    CHECK(convert<int32_t>(f(3e9)) == i32min);
    CHECK(convert<int32_t>(f(-3e9)) == i32min);
    CHECK(convert<int64_t>(f(1e19)) == i64min);
    CHECK(convert<int64_t>(f(-1e19)) == i64min);
    CHECK(convert<int64_t>(f(-9223372036854775808.0)) == i64min);  // -2^63 fits
    CHECK(convert<uint8_t>(f(1e10)) == 0);
    CHECK(convert<int32_t>(f(-2147483648.0)) == i32min);  // -2^31 fits
    CHECK(convert<int32_t>(f(2147483648.0)) == i32min);   // 2^31 does not
  }
  if constexpr (std::same_as<F, double>) {
    CHECK(convert<int64_t>(3e9) == 3000000000);
    CHECK(convert<int32_t>(2147483647.9) == 2147483647);
    CHECK(convert<int32_t>(-2147483648.9) == i32min);
    CHECK(convert<int64_t>(9.2e18) == int64_t(9200000000000000000));
  }
  // through a tensor (the elementwise kernels, vector or scalar)
  const Tensor<F> x = {f(NAN), f(INFINITY), f(-INFINITY), f(1.5), f(300.0), f(-1.0)};
  check_values(x.template to<int32_t>(), {double(i32min), double(i32min), double(i32min), 1, 300, -1});
  check_values(x.template to<uint8_t>(), {0, 0, 0, 1, 44, 255});
  const Tensor<int64_t> y = x.template to<int64_t>();
  CHECK(y.data_ptr()[0] == i64min);
  CHECK(y.data_ptr()[1] == i64min);
  CHECK(y.data_ptr()[5] == -1);
}
