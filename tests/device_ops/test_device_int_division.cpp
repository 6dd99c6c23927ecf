// tests/device_ops/test_device_int_division.cpp — integer floor_divide and remainder on PJRT
// devices agree with the cpu (issue 12 item 1): MIN // -1 wraps to MIN and MIN % -1 is 0 without
// relying on the backend's divide (StableHLO leaves x / 0 and MIN / -1 implementation-defined;
// XLA gives -1 and the dividend for x / 0, x % 0), uint8 lowers, and integer division by zero
// raises the cpu's ValueError in every execution mode (a run-time check of the program). Also:
// a write into an overlapping device view is refused as overlap (issue 12 item 2).
#include <cstdint>  // int32_t, int64_t, uint8_t
#include <limits>   // std::numeric_limits
#include <string>   // std::string
#include <vector>   // std::vector

#include "helpers.hpp"  // host_values, test_device

using namespace torchtpu;
using Catch::Matchers::Contains;

namespace {
/// Every pair of `vals` (dividend, divisor), the divisor never 0: flattened [n*n] tensors.
template <class T>
void pairs(const std::vector<T>& vals, Tensor<T>& a, Tensor<T>& b) {
  const int64_t n = int64_t(vals.size());
  a = Tensor<T>::empty({n * n});
  b = Tensor<T>::empty({n * n});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      a.data_ptr()[i * n + j] = vals[size_t(i)];
      b.data_ptr()[i * n + j] = vals[size_t(j)] == T(0) ? T(1) : vals[size_t(j)];
    }
}

/// Python's floor division and modulo in exact int64 arithmetic (the independent reference),
/// with the wrap-around of MIN // -1 in T.
template <class T>
std::vector<double> python_ref(const Tensor<T>& a, const Tensor<T>& b, bool rem) {
  std::vector<double> r;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const int64_t x = a.data_ptr()[i], y = b.data_ptr()[i];
    if (x == int64_t(std::numeric_limits<int64_t>::min()) && y == -1) {
      r.push_back(rem ? 0.0 : double(x));
      continue;
    }
    int64_t q = x / y, m = x % y;
    if (m != 0 && ((m < 0) != (y < 0))) { --q; m += y; }
    r.push_back(rem ? double(T(m)) : double(T(q)));  // T(q): MIN // -1 of int32 wraps to MIN
  }
  return r;
}
}  // namespace

TEMPLATE_TEST_CASE("int division: floor_divide and remainder on the device equal the cpu and Python",
                   "[pjrt]", int32_t, int64_t, uint8_t) {
  using T = TestType;
  const Device dev = test_device();
  const T lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  std::vector<T> vals = {lo, T(lo + 1), T(-7), T(-2), T(-1), T(0), T(1), T(2), T(3), T(7), T(hi - 1), hi};
  if constexpr (std::is_unsigned_v<T>) vals = {T(0), T(1), T(2), T(3), T(7), T(100), T(254), T(255)};
  // The emulator computes in double: int64 is exact there only to 2^53 (docs/devices.md), and
  // MIN = -2^63 is exact; XLA's CPU plugin passes with INT64_MAX too.
  if constexpr (std::is_same_v<T, int64_t>)
    vals = {lo, T(-(int64_t(1) << 53)), T(-7), T(-2), T(-1), T(0), T(1), T(2), T(3), T(7), T(int64_t(1) << 53)};
  Tensor<T> a, b;
  pairs(vals, a, b);
  const auto da = a.to(dev), db = b.to(dev);
  const std::vector<double> fd = python_ref(a, b, false), rm = python_ref(a, b, true);
  CHECK(host_values(Tensor<T>(floor_divide(a, b))) == fd);
  CHECK(host_values(Tensor<T>(remainder(a, b))) == rm);
  CHECK(host_values(Tensor<T>(floor_divide(da, db))) == fd);
  CHECK(host_values(Tensor<T>(remainder(da, db))) == rm);
  // fused inside a larger expression, and with a scalar divisor (x // -1, x % -1; x // 3)
  CHECK(host_values(Tensor<T>(floor_divide(da + T(0), db) * T(1))) == fd);
  for (T s : {T(-1), T(3)}) {
    if (std::is_unsigned_v<T> && s == T(-1)) continue;
    CHECK(host_values(Tensor<T>(floor_divide(da, s))) == host_values(Tensor<T>(floor_divide(a, s))));
    CHECK(host_values(Tensor<T>(remainder(da, s))) == host_values(Tensor<T>(remainder(a, s))));
  }
  if constexpr (std::is_signed_v<T>) {
    const Tensor<T> m = {lo};
    CHECK(host_values(Tensor<T>(floor_divide(m.to(dev), T(-1)))) == std::vector<double>{double(lo)});
    CHECK(host_values(Tensor<T>(remainder(m.to(dev), T(-1)))) == std::vector<double>{0});
  }
}

TEMPLATE_TEST_CASE("int division: a zero divisor raises the cpu's error on the device, in every mode", "[pjrt]",
                   int32_t, int64_t, uint8_t) {
  using T = TestType;
  const Device dev = test_device();
  const Tensor<T> x = {T(1), T(2), T(3)}, z = {T(0), T(0), T(0)}, some = {T(2), T(0), T(1)};
  // the cpu's messages
  CHECK_THROWS_WITH(Tensor<T>(floor_divide(x, z)), "floor_divide: integer division by zero");
  CHECK_THROWS_WITH(Tensor<T>(remainder(x, z)), "remainder: integer division by zero");
  for (ExecutionMode mode : {ExecutionMode::Debug, ExecutionMode::Strict, ExecutionMode::Fused}) {
    ExecutionModeGuard guard(mode);
    INFO("mode " << int(mode));
    const auto dx = x.to(dev), dz = z.to(dev), ds = some.to(dev);
    // was [-1, -1, -1] and [1, 2, 3] (XLA's results for x / 0 and x % 0)
    CHECK_THROWS_AS(host_values(Tensor<T>(floor_divide(dx, dz))), ValueError);
    CHECK_THROWS_WITH(host_values(Tensor<T>(floor_divide(dx, dz))), "floor_divide: integer division by zero");
    CHECK_THROWS_WITH(host_values(Tensor<T>(remainder(dx, dz))), "remainder: integer division by zero");
    CHECK_THROWS_WITH(host_values(Tensor<T>(floor_divide(dx, T(0)))), "floor_divide: integer division by zero");
    CHECK_THROWS_WITH(host_values(Tensor<T>(remainder(dx * T(2), ds) + T(1))),  // one zero among others
                      "remainder: integer division by zero");
    // the device keeps working afterwards, and a nonzero divisor passes the check
    CHECK(host_values(Tensor<T>(floor_divide(dx, T(2)))) == std::vector<double>{0, 1, 1});
    CHECK(host_values(Tensor<T>(remainder(dx, ds + T(1)))) == std::vector<double>{1, 0, 1});
  }
  // an empty divisor divides nothing: no error
  const auto e = Tensor<T>::empty({0}).to(dev);
  CHECK(Tensor<T>(floor_divide(e, e)).cpu().numel() == 0);
}

TEST_CASE("int division: in fused mode a failed check fails only what is computed from it", "[pjrt]") {
  const Device dev = test_device();
  ExecutionModeGuard guard(ExecutionMode::Fused);
  torchtpu::sync();
  const auto dx = Tensor<int32_t>({1, 2, 3}).to(dev), dz = Tensor<int32_t>({0, 1, 0}).to(dev);
  Tensor<int32_t> before = dx * 2;            // unrelated, recorded earlier
  Tensor<int32_t> q = floor_divide(dx, dz);   // fails its check
  Tensor<int32_t> r = q + 1;                  // computed from q
  Tensor<int32_t> after = dx - 1;             // unrelated, recorded later
  CHECK(device::graph_for(dev)->size() == 4);  // all deferred: one program
  CHECK_NOTHROW(torchtpu::sync());            // the failure belongs to q and r, not to sync
  CHECK(host_values(before) == std::vector<double>{2, 4, 6});
  CHECK(host_values(after) == std::vector<double>{0, 1, 2});
  CHECK_THROWS_WITH(host_values(q), "floor_divide: integer division by zero");
  CHECK_THROWS_WITH(host_values(r), "floor_divide: integer division by zero");
  CHECK_THROWS_WITH(Tensor<int32_t>(r * 2), "floor_divide: integer division by zero");  // using it, too
  CHECK(host_values(Tensor<int32_t>(before + after)) == std::vector<double>{2, 5, 8});
}

// HLO leaves integer power with a negative exponent undefined: the lowering gives the cpu's
// values itself. Hand-worked: 2^-1 = 0, 1^-5 = 1, (-1)^-3 = -1, (-1)^-2 = 1, 0^-1 = 0 (torch's
// tensor pow; no error), 3^4 = 81, (-2)^3 = -8, 2^31 wraps to MIN in int32.
TEMPLATE_TEST_CASE("int pow: negative exponents give the cpu's values on the device", "[pjrt]", int32_t, int64_t) {
  using T = TestType;
  const Device dev = test_device();
  const Tensor<T> a = {2, 1, -1, -1, 0, 3, -2, 2, 7};
  const Tensor<T> e = {-1, -5, -3, -2, -1, 4, 3, 31, 0};
  const double wrapped = std::is_same_v<T, int32_t> ? -2147483648.0 : 2147483648.0;
  const std::vector<double> want = {0, 1, -1, 1, 0, 81, -8, wrapped, 1};
  CHECK(host_values(Tensor<T>(pow(a, e))) == want);
  CHECK(host_values(Tensor<T>(pow(a.to(dev), e.to(dev)))) == want);
  // A negative *number* exponent is refused, as torch refuses it, on every device alike.
  CHECK_THROWS_WITH(pow(a, T(-1)), Catch::Contains("integers to negative integer powers are not allowed"));
  CHECK_THROWS_WITH(pow(a.to(dev), T(-1)), Catch::Contains("integers to negative integer powers are not allowed"));
}

TEST_CASE("int division: floats keep their semantics (inf, signs) on the device", "[pjrt]") {
  const Device dev = test_device();
  const Tensor<float> a = {7.0f, -7.0f, 7.0f, -7.0f, 1.0f, -1.0f, 0.5f};
  const Tensor<float> b = {2.0f, 2.0f, -2.0f, -2.0f, 0.0f, 3.0f, -0.25f};
  check_close(Tensor<float>(floor_divide(a.to(dev), b.to(dev))), Tensor<float>(floor_divide(a, b)), 0);
  check_close(Tensor<float>(remainder(a.to(dev), b.to(dev))), Tensor<float>(remainder(a, b)), 1e-6);
  // Python: 7 // 2 = 3, -7 // 2 = -4, 7 // -2 = -4, -7 // -2 = 3, 1 // 0 = inf; -1 % 3 = 2
  CHECK(host_values(Tensor<float>(floor_divide(a, b))) ==
        std::vector<double>{3, -4, -4, 3, std::numeric_limits<double>::infinity(), -1, -2});
  CHECK(host_values(Tensor<float>(remainder(a, b))).at(5) == 2.0);
}

TEST_CASE("int division: the run-time check is one extra i32 result of the program", "[pjrt]") {
  stablehlo::Builder b;
  const auto x = b.parameter(ScalarType::Int32, {3});
  const auto zero = b.constant_int(0, ScalarType::Int32, {3});
  CHECK_FALSE(b.check_code().valid());
  b.runtime_check(b.compare("EQ", x, zero), "test: first check");
  b.runtime_check(b.compare("LT", x, zero), "test: second check");
  REQUIRE(b.check_code().valid());
  CHECK(b.check_code().dtype == ScalarType::Int32);
  CHECK(b.check_code().dims.empty());
  const int32_t id = stablehlo::check_message_id("test: first check");
  CHECK(id >= 1);
  CHECK(stablehlo::check_message_id("test: first check") == id);  // stable
  CHECK(stablehlo::check_message(id) == "test: first check");
  CHECK(stablehlo::check_message(stablehlo::check_message_id("test: second check")) == "test: second check");
  CHECK_THROWS_AS(b.runtime_check(x, "not bool"), TypeError);
  CHECK_THROWS_AS(b.compare("XX", x, zero), ValueError);
  b.set_results({x, b.check_code()});
  const std::string text = b.str();
  CHECK(text.find("stablehlo.reduce") != std::string::npos);
  CHECK(text.find("-> (tensor<3xi32>, tensor<i32>)") != std::string::npos);
}

TEST_CASE("overlap: a write into an expanded device view is refused as overlap", "[pjrt]") {
  const Device dev = test_device();
  Tensor<float> base = Tensor<float>({2.0f}).to(dev);
  Tensor<float> v = base.expand({3});
  // the overlap check runs first: the error says overlap, not "writing into a view ... not supported"
  CHECK_THROWS_AS(v *= 2.0f, ValueError);
  CHECK_THROWS_WITH(v *= 2.0f, Contains("mul_") && Contains("strides [0]") && Contains("single memory location"));
  CHECK_THROWS_WITH(v.fill_(1), Contains("fill_"));
  CHECK_THROWS_WITH(v.copy_(Tensor<float>({1.0f, 2.0f, 3.0f}).to(dev)), Contains("copy_"));
  CHECK(host_values(base) == std::vector<double>{2.0});
  // reading the view is fine
  CHECK(host_values(Tensor<float>(v + 1.0f)) == std::vector<double>{3, 3, 3});
  // the whole tensor is still writable in place
  base *= 3.0f;
  CHECK(host_values(base) == std::vector<double>{6.0});
}
