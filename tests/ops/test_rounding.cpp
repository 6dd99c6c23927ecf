// tests/ops/test_rounding.cpp — floor, ceil, trunc, round (halves to even), sign, isnan, isinf,
// isfinite on every dtype they take, fused in expressions. Expected values: torch 1.13
// (/usr/bin/python3: torch.floor(x), ... on the inputs below), pasted; for the 16-bit floats
// every input is exactly representable, so the results are the same numbers.
#include <cmath>   // NAN, INFINITY
#include <vector>  // std::vector

#include "testing.hpp"  // check_values, Catch2, torchtpu

using namespace torchtpu;

namespace {
const std::vector<double> kIn = {NAN, -0.0, 0.0, -2.5, 2.5, 0.5, 1.5, -1.5, INFINITY, -INFINITY, 3.75, -3.75};

template <class T>
Tensor<T> input() {
  Tensor<double> d = Tensor<double>::empty(Dims{int64_t(kIn.size())});
  for (size_t i = 0; i < kIn.size(); ++i) d.data_ptr()[i] = kIn[i];
  return Tensor<T>(d.template to<T>());
}

/// Values and the sign bit of each (check_values compares -0.0 == 0.0).
template <class E>
std::vector<bool> signbits(const E& e) {
  std::vector<bool> r;
  for (double v : values_of(e)) r.push_back(std::signbit(v));
  return r;
}
}  // namespace

TEMPLATE_TEST_CASE("floor, ceil, trunc, round, sign on floats (torch 1.13 values)", "[ops][rounding]", float, double,
                   half, bfloat16) {
  using T = TestType;
  const Tensor<T> x = input<T>();
  check_values(Tensor<T>(floor(x)), {NAN, -0.0, 0.0, -3, 2, 0, 1, -2, INFINITY, -INFINITY, 3, -4});
  check_values(Tensor<T>(ceil(x)), {NAN, -0.0, 0.0, -2, 3, 1, 2, -1, INFINITY, -INFINITY, 4, -3});
  check_values(Tensor<T>(trunc(x)), {NAN, -0.0, 0.0, -2, 2, 0, 1, -1, INFINITY, -INFINITY, 3, -3});
  check_values(Tensor<T>(round(x)), {NAN, -0.0, 0.0, -2, 2, 0, 2, -2, INFINITY, -INFINITY, 4, -4});
  check_values(Tensor<T>(sign(x)), {0, 0, 0, -1, 1, 1, 1, -1, 1, -1, 1, -1});
  // -0.0 stays -0.0 through floor/ceil/trunc/round; sign gives +0.0 for NaN and -0.0 (torch)
  CHECK(signbits(Tensor<T>(trunc(x)))[1]);
  CHECK(signbits(Tensor<T>(round(x)))[1]);
  CHECK_FALSE(signbits(Tensor<T>(sign(x)))[1]);
  CHECK_FALSE(signbits(Tensor<T>(sign(x)))[0]);
  // fused with other ops, strided
  check_values(Tensor<T>(floor(x.slice(0, 3, 8, 2) * 2.0) + 0.5), {-4.5, 1.5, -2.5});
  const Tensor<bool> n = isnan(x), i = isinf(x), f = isfinite(x);
  check_values(n, {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  check_values(i, {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0});
  check_values(f, {0, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1});
}

TEMPLATE_TEST_CASE("rounding ops leave integers unchanged; predicates on integers", "[ops][rounding]", int32_t, int64_t,
                   uint8_t) {
  using T = TestType;
  const Tensor<T> x = Tensor<T>(Tensor<double>{0, 1, 7, 200}.template to<T>());
  for (const Tensor<T>& r : {Tensor<T>(floor(x)), Tensor<T>(ceil(x)), Tensor<T>(trunc(x)), Tensor<T>(round(x))})
    check_values(r, {0, 1, 7, 200});
  check_values(Tensor<T>(sign(x)), {0, 1, 1, 1});
  check_values(Tensor<bool>(isnan(x)), {0, 0, 0, 0});
  check_values(Tensor<bool>(isinf(x)), {0, 0, 0, 0});
  check_values(Tensor<bool>(isfinite(x)), {1, 1, 1, 1});
}

TEST_CASE("sign of negative integers and bool", "[ops][rounding]") {
  check_values(Tensor<int64_t>(sign(Tensor<int64_t>{-5, 0, 9})), {-1, 0, 1});
  check_values(Tensor<bool>(sign(Tensor<bool>{true, false})), {1, 0});
}
