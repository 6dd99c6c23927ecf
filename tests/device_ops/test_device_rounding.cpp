// tests/device_ops/test_device_rounding.cpp — floor, ceil, trunc, round (halves to even), sign,
// isnan, isinf, isfinite on the PJRT device under test against the cpu, in each execution mode,
// for floats (NaN, ±inf, ±0.0, halves) and integers. Exact: no tolerance; the sign of zero is
// compared too.
#include <cmath>   // NAN, INFINITY, std::signbit
#include <vector>  // std::vector

#include "helpers.hpp"  // check_close, host_values, test_device

using namespace torchtpu;

namespace {

template <class T>
void check_float() {
  INFO("dtype " << dtype_name(dtype_of<T>()));
  const Tensor<double> src = {NAN, -0.0, 0.0, -2.5, 2.5, 0.5, 1.5, -1.5, INFINITY, -INFINITY, 3.75, -3.75};
  const Tensor<T> x = Tensor<T>(src.to<T>());
  const auto d = x.to(test_device());
  auto same = [](const auto& got, const auto& want) {
    check_close(got, want, 0.0);
    const auto g = host_values(got), w = host_values(want);
    for (size_t i = 0; i < g.size(); ++i) CHECK(std::signbit(g[i]) == std::signbit(w[i]));
  };
  same(Tensor<T>(floor(d)), Tensor<T>(floor(x)));
  same(Tensor<T>(ceil(d)), Tensor<T>(ceil(x)));
  same(Tensor<T>(trunc(d)), Tensor<T>(trunc(x)));
  same(Tensor<T>(round(d)), Tensor<T>(round(x)));
  same(Tensor<T>(sign(d)), Tensor<T>(sign(x)));
  check_close(Tensor<bool>(isnan(d)), Tensor<bool>(isnan(x)), 0.0);
  check_close(Tensor<bool>(isinf(d)), Tensor<bool>(isinf(x)), 0.0);
  check_close(Tensor<bool>(isfinite(d)), Tensor<bool>(isfinite(x)), 0.0);
  same(Tensor<T>(round(d * 2.0) - floor(d.flip({0}))), Tensor<T>(round(x * 2.0) - floor(x.flip({0}))));
}

template <class T>
void check_int() {
  INFO("dtype " << dtype_name(dtype_of<T>()));
  const Tensor<T> x = Tensor<T>(Tensor<double>{0, 1, 7, 100}.to<T>());
  const auto d = x.to(test_device());
  check_close(Tensor<T>(floor(d)), x, 0.0);
  check_close(Tensor<T>(round(d)), x, 0.0);
  check_close(Tensor<T>(trunc(d)), x, 0.0);
  check_close(Tensor<T>(sign(d)), Tensor<T>(sign(x)), 0.0);
  check_close(Tensor<bool>(isinf(d)), Tensor<bool>(isinf(x)), 0.0);
  check_close(Tensor<bool>(isfinite(d)), Tensor<bool>(isfinite(x)), 0.0);
}

}  // namespace

TEST_CASE("rounding and float predicates on the device agree with the cpu", "[pjrt][rounding]") {
  for (ExecutionMode m : {ExecutionMode::Fused, ExecutionMode::Strict, ExecutionMode::Debug}) {
    ExecutionModeGuard g(m);
    INFO("mode " << execution_mode_name(m));
    check_float<float>();
    check_float<double>();
    check_float<bfloat16>();
    check_float<half>();
    check_int<int32_t>();
    check_int<int64_t>();
    check_int<uint8_t>();
  }
  check_close(Tensor<int64_t>(sign(Tensor<int64_t>{-5, 0, 9}.to(test_device()))), Tensor<int64_t>{-1, 0, 1}, 0.0);
}
