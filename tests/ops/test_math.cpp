// tests/ops/test_math.cpp — the operator library's math family on the cpu (cumsum, cumprod,
// logsumexp, var, std) through the typed API for every dtype each allows, the run-time typed
// API (AnyTensor) and the call by schema. Expected values: torch 1.13 (/usr/bin/python3) on the
// same inputs, pasted as literals (the script is quoted above each block); the device path is
// tests/device_ops/test_device_library.cpp.
#include <cmath>    // std::isnan, std::isinf
#include <cstdint>  // int64_t
#include <limits>   // std::numeric_limits
#include <string>   // std::string
#include <vector>   // std::vector

#include <torchtpu/ops/all.hpp>  // ops::call_by_name, torchtpu::cumsum, ...

#include "testing.hpp"  // check_values, Catch2, torchtpu

using namespace torchtpu;

using optest::make;
using optest::message_of;
using optest::per_dtype;

namespace {

/// A tolerance that fits T's precision (a few ulps).
template <class T>
double tol() { return per_dtype<T>(1e-12, 1e-6, 2e-3, 1.6e-2); }

constexpr double inf = std::numeric_limits<double>::infinity();

}  // namespace

// a = torch.arange(12.).reshape(3, 4) - 5; torch.cumsum(a, 1), torch.cumsum(a, -2)
// b = [[1, 2, -1, 3], [0.5, 2, 2, -2], [1, 1, -3, 2]]; torch.cumprod(b, 1), torch.cumprod(b, 0)
// (integer dtypes: the same values, exact; bool and uint8 have their own inputs below)
TEMPLATE_TEST_CASE("cumsum, cumprod: every dtype, typed API", "[ops][math][cum]", int32_t, int64_t, half, bfloat16,
                   float, double) {
  using T = TestType;
  using R = cum_result_t<T>;
  const Tensor<T> a = make<T>({-5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6}, Dims{3, 4});
  const Tensor<R> s1 = cumsum(a, 1);
  CHECK(s1.sizes() == Dims{3, 4});
  check_values(s1, {-5, -9, -12, -14, -1, -1, 0, 2, 3, 7, 12, 18});
  check_values(cumsum(a, -2), {-5, -4, -3, -2, -6, -4, -2, 0, -3, 0, 3, 6});
  // non-contiguous: a.t() [4, 3], cumsum along 1 == cumsum(a, 0).t()
  check_values(cumsum(a.t(), 1), {-5, -6, -3, -4, -4, 0, -3, -2, 3, -2, 0, 6});
  if constexpr (floating_element<T>) {
    const Tensor<T> b = make<T>({1, 2, -1, 3, 0.5, 2, 2, -2, 1, 1, -3, 2}, Dims{3, 4});
    check_values(cumprod(b, 1), {1, 2, -2, -6, 0.5, 1, 2, -4, 1, 1, -3, -6});
    check_values(cumprod(b, 0), {1, 2, -1, 3, 0.5, 4, -2, -6, 0.5, 4, 6, -12});
  } else {
    const Tensor<T> b = make<T>({1, 2, -1, 3, 5, 2, 2, -2, 1, 1, -3, 2}, Dims{3, 4});
    check_values(cumprod(b, 0), {1, 2, -1, 3, 5, 4, -2, -6, 5, 4, 6, -12});
  }
  // size-0 and size-1 dims, 0-dim
  CHECK(cumsum(Tensor<T>::empty(Dims{0, 3}), 0).sizes() == Dims{0, 3});
  check_values(cumprod(make<T>({3, 4}, Dims{1, 2}), 0), {3, 4});
  check_values(cumsum(make<T>({7}, Dims{}), -1), {7});
}

TEST_CASE("cumsum, cumprod: bool and uint8 accumulate in int64, float16 in float32", "[ops][math][cum]") {
  // torch.cumsum(torch.tensor([True, False, True]), 0) -> tensor([1, 1, 2])
  const Tensor<int64_t> b = cumsum(Tensor<bool>{true, false, true}, 0);
  check_values(b, {1, 1, 2});
  // torch.cumsum(torch.tensor([200, 100], dtype=torch.uint8), 0) -> [200, 300] (int64);
  // with dtype=torch.uint8 -> [200, 44]
  check_values(cumsum(Tensor<uint8_t>{200, 100}, 0), {200, 300});
  const AnyTensor w = cumsum(AnyTensor(Tensor<uint8_t>{200, 100}), 0, ScalarType::UInt8);
  CHECK(w.dtype() == ScalarType::UInt8);
  check_values(w.get<uint8_t>(), {200, 44});
  // torch.cumsum(torch.tensor([0.1] * 10).bfloat16(), 0): each output rounded from a float sum
  Tensor<bfloat16> tenth = full<bfloat16>(Dims{10}, bfloat16(0.1f));
  std::vector<double> want;
  float acc = 0;
  for (int i = 0; i < 10; ++i) want.push_back(static_cast<double>(static_cast<float>(bfloat16(acc += float(bfloat16(0.1f))))));
  check_values(cumsum(tenth, 0), want);
  CHECK(cumprod(Tensor<bool>{true, true, false, true}, 0).sizes() == Dims{4});
  check_values(cumprod(Tensor<bool>{true, true, false, true}, 0), {1, 1, 0, 0});
}

// x = [[0.5, -1.25, 2.0], [1000, 1000, -3]]: torch.logsumexp(x, 1), (x, 0), (x, [0, 1])
TEMPLATE_TEST_CASE("logsumexp: floating dtypes, typed API", "[ops][math][logsumexp]", half, bfloat16, float, double) {
  using T = TestType;
  const Tensor<T> x = make<T>({0.5, -1.25, 2.0, 1000, 1000, -3}, Dims{2, 3});
  const double t = std::is_same_v<T, double> ? 1e-6 : tol<T>();  // torch's values are float32
  check_values(logsumexp(x, {1}), {2.232621908187866, 1000.6931762695312}, t);
  const Tensor<T> k = logsumexp(x, {-2}, true);  // negative dim, keepdim
  CHECK(k.sizes() == Dims{1, 3});
  check_values(k, {1000.0, 1000.0, 2.0067152976989746}, t);
  check_values(logsumexp(x.t(), {0, 1}), {1000.6931762695312}, t);  // non-contiguous, all dims
  // torch.logsumexp([[-inf, -inf], [inf, 1], [nan, 1], [inf, -inf]], 1) -> [-inf, inf, nan, inf]
  const Tensor<T> s = make<T>({-inf, -inf, inf, 1, std::numeric_limits<double>::quiet_NaN(), 1, inf, -inf}, Dims{4, 2});
  const Tensor<T> r = logsumexp(s, {1});
  CHECK(std::isinf(static_cast<double>(r.at(0))));
  CHECK(static_cast<double>(r.at(0)) < 0);
  CHECK(static_cast<double>(r.at(1)) == inf);
  CHECK(std::isnan(static_cast<double>(r.at(2))));
  CHECK(static_cast<double>(r.at(3)) == inf);
  // size-0 row -> -inf (torch.logsumexp(torch.zeros(2, 0), 1)); size-1 dim -> the value
  check_values(logsumexp(Tensor<T>::empty(Dims{2, 0}), {1}), {-inf, -inf});
  check_values(logsumexp(make<T>({3, 4}, Dims{1, 2}), {0}), {3, 4});
}

TEST_CASE("logsumexp: integer inputs compute in float32", "[ops][math][logsumexp]") {
  // torch.logsumexp(torch.tensor([[1, 2], [3, 4]]), 1) -> float32 [2.3132617473602295, 4.31326150894165]
  const Tensor<float> r = logsumexp(Tensor<int64_t>{{1, 2}, {3, 4}}, {1});
  check_values(r, {2.3132617473602295, 4.31326150894165}, 1e-6);
  const AnyTensor a = logsumexp(AnyTensor(Tensor<int32_t>{{1, 2}, {3, 4}}), {1});
  CHECK(a.dtype() == ScalarType::Float);
  CHECK(logsumexp(Tensor<bool>{true, false}, {0}).sizes() == Dims{});
}

// v = [[1, 2, 4, 7], [0.5, -1, 3, 3], [2, 2, 2, 2]]: torch.var(v, 1), torch.var(v, 0,
// unbiased=False), torch.std(v, 1), torch.std(v), torch.var(v, 1, correction=2)
TEMPLATE_TEST_CASE("var, std: floating dtypes, typed API", "[ops][math][var]", half, bfloat16, float, double) {
  using T = TestType;
  const Tensor<T> v = make<T>({1, 2, 4, 7, 0.5, -1, 3, 3, 2, 2, 2, 2}, Dims{3, 4});
  const double t = std::is_same_v<T, double> ? 1e-6 : tol<T>();
  check_values(var(v, Dims{1}), {7.0, 3.8958332538604736, 0.0}, t);
  check_values(var(v, Dims{0}, 0), {0.3888888955116272, 2.0, 0.6666666865348816, 4.666666507720947}, t);
  check_values(std_dev(v, Dims{-1}), {2.6457512378692627, 1.9737865924835205, 0.0}, t);
  check_values(std_dev(v), {1.9593404531478882}, t);
  check_values(var(v.t(), Dims{0}, 2), {10.5, 5.84375, 0.0}, t);  // non-contiguous
  const Tensor<T> k = var(v, Dims{1}, 1, true);
  CHECK(k.sizes() == Dims{3, 1});
  // torch.var([[3.]], 1) -> nan; torch.var([[3., 4.]], 1, correction=3) -> inf; an empty row -> nan
  CHECK(std::isnan(static_cast<double>(var(make<T>({3}, Dims{1, 1}), Dims{1}).at(0))));
  CHECK(static_cast<double>(var(make<T>({3, 4}, Dims{1, 2}), Dims{1}, 3).at(0)) == inf);
  CHECK(std::isnan(static_cast<double>(var(Tensor<T>::empty(Dims{2, 0}), Dims{1}).at(1))));
  check_values(var(make<T>({3, 4}, Dims{1, 2}), Dims{0}, 0), {0, 0});  // size-1 dim
}

TEST_CASE("math ops: bad input names the op and the operand", "[ops][math][errors]") {
  const Tensor<float> a = make<float>({1, 2, 3, 4, 5, 6}, Dims{2, 3});
  CHECK_THROWS_AS(cumsum(a, 2), IndexError);
  CHECK_THROWS_AS(cumprod(a, -3), IndexError);
  CHECK_THROWS_AS(logsumexp(a, {2}), IndexError);
  CHECK(message_of<ValueError>([&] { (void)logsumexp(a, {1, -1}); }) ==
        "aten::logsumexp: dim 1 appears multiple times in the list of dims (dim [1, -1]; operands [2, 3] float32)");
  CHECK(message_of<TypeError>([] { (void)var(Tensor<int64_t>{1, 2}, Dims{0}); }) ==
        "aten::var: only floating point dtypes are supported (operands [2] int64)");
  CHECK_THROWS_AS(std_dev(AnyTensor(Tensor<bool>{true}), Dims{0}), TypeError);
  CHECK_THROWS_AS(var(a, Dims{0, 0}), ValueError);
  CHECK_THROWS_AS(std_dev(a, Dims{-3}), IndexError);
}

TEST_CASE("math ops by schema, as model graphs call them (torch 1.13's traced overloads)", "[ops][math][schema]") {
  const AnyTensor v(make<float>({1, 2, 4, 7, 0.5, -1, 3, 3, 2, 2, 2, 2}, Dims{3, 4}));
  // aten::var.dim(self, dim, unbiased, keepdim), as torch 1.13 traces torch.var(v, 1)
  const std::vector<ops::Arg> dim_form{v, std::vector<int64_t>{1}, true, false};
  check_values(ops::call_by_name("aten::var", dim_form).get<float>(), {7.0, 3.8958332538604736, 0.0}, 1e-6);
  // aten::std.dim with unbiased=False, keepdim=True
  const std::vector<ops::Arg> std_form{v, std::vector<int64_t>{0}, false, true};
  const AnyTensor s = ops::call_by_name("aten::std", std_form);
  CHECK(s.sizes() == Dims{1, 4});
  // aten::var(self, unbiased): every dim; torch.std(v) = 1.9593404531478882
  const std::vector<ops::Arg> all_form{v, true};
  check_values(ops::call_by_name("aten::std", all_form).get<float>(), {1.9593404531478882}, 1e-6);
  // aten::var.correction(self, dim=None, *, correction=0)
  const std::vector<ops::Arg> corr{v, ops::Arg{}, int64_t{0}, false};
  check_values(ops::call_by_name("aten::var", corr).get<float>(), {3.519097328186035}, 1e-6);  // torch.var(v, None, correction=0)
  // aten::logsumexp, aten::cumprod with dtype=torch.float64 (ScalarType code 7)
  const std::vector<ops::Arg> lse{v, std::vector<int64_t>{1}, false};
  CHECK(ops::call_by_name("aten::logsumexp", lse).sizes() == Dims{3});
  const std::vector<ops::Arg> cp{AnyTensor(Tensor<int32_t>{2, 3}), int64_t{0}, int64_t{7}};
  const AnyTensor c = ops::call_by_name("aten::cumprod", cp);
  CHECK(c.dtype() == ScalarType::Double);
  check_values(c.get<double>(), {2, 6});
}
