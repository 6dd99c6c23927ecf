// tests/device_ops/test_device_sums.cpp — long float sums on the PJRT device (issue 12 item 3):
// sum and mean of 10^7 float32 values, along one dim of long rows and columns, over several
// dims, over a fused producer, bf16 inputs; against float64 references computed from the float
// inputs, as on the cpu (tests/ops/test_reduce_accuracy.cpp).
//
// Tolerance: 1e-6 relative on every backend this file runs on (the bound). Measured
// for the 10^7 x 0.1f sum (exact sum of the inputs 1,000,000.0149): the emulator gives
// 1,000,000.0 (relative error 1.5e-8: it accumulates `stablehlo.reduce` in float64,
// src/device/interpreter.cpp, and rounds once); XLA's CPU plugin (xla-cpu-pjrt 0.0.1, run
// with TORCHTPU_PJRT_PLUGIN_TPU=.venv/.../xla_cpu_pjrt/xla_cpu_pjrt.so) gives 999,999.125
// (relative error 8.9e-7, inside the bound with little room; the mean: 8.9e-7 too). bf16
// inputs are converted to float32 before the reduce by the lowering (device/lower.hpp: the
// Reduce node's accumulator type), so their sums do not stall as a bf16 accumulator would.
#include "helpers.hpp"  // test_device, test_input

#include <cmath>   // std::fabs
#include <iomanip> // std::setprecision
#include <vector>  // std::vector

using namespace torchtpu;

namespace {
double rel_err(double got, double want) { return std::fabs(got - want) / std::fabs(want); }
}  // namespace

TEST_CASE("sum and mean of 10^7 float32 values 0.1f on the device", "[pjrt][reduce][accuracy]") {
  const int64_t n = 10'000'000;
  const Tensor<float> x = full<float>({n}, 0.1f);
  const double exact = double(n) * double(0.1f);
  auto d = x.to(test_device());
  const float s = Tensor<float>(d.sum()).item();
  INFO("device sum " << std::setprecision(10) << s);
  CHECK(rel_err(s, exact) <= 1e-6);
  CHECK(rel_err(Tensor<float>(d.mean()).item(), double(0.1f)) <= 1e-6);
  CHECK(rel_err(Tensor<float>((d * 1.0).sum()).item(), exact) <= 1e-6);
}

TEST_CASE("device sums along long rows, long columns and several dims against float64",
          "[pjrt][reduce][accuracy]") {
  // [4, 2^20] rows, [2^20, 4] columns, and dims {0, 2} of [64, 3, 8192]
  const Tensor<float> x = test_input({4, 1 << 20}, 41, 0.5, 1.5);
  auto dx = x.to(test_device());
  const Tensor<float> rows = dx.sum({1}), cols = dx.reshape({1 << 20, 4}).sum({0});
  const Tensor<float> rows_c = rows.cpu(), cols_c = cols.cpu();
  const float* p = x.data_ptr();
  for (int64_t i = 0; i < 4; ++i) {
    double want = 0, want_c = 0;
    for (int64_t j = 0; j < (1 << 20); ++j) {
      want += p[i * (1 << 20) + j];
      want_c += p[j * 4 + i];
    }
    CHECK(rel_err(rows_c.data_ptr()[i], want) <= 1e-6);
    CHECK(rel_err(cols_c.data_ptr()[i], want_c) <= 1e-6);
  }
  const Tensor<float> y = test_input({64, 3, 8192}, 42, 0.5, 1.5);
  const Tensor<float> s = Tensor<float>(y.to(test_device()).mean({0, 2})).cpu();
  for (int64_t b = 0; b < 3; ++b) {
    double want = 0;
    for (int64_t a = 0; a < 64; ++a)
      for (int64_t k = 0; k < 8192; ++k) want += y.data_ptr()[(a * 3 + b) * 8192 + k];
    CHECK(rel_err(s.data_ptr()[b], want / (64.0 * 8192.0)) <= 1e-6);
  }
}

TEST_CASE("device bf16 sums accumulate in float32", "[pjrt][reduce][accuracy][dtype]") {
  const int64_t n = 1'000'000;
  const Tensor<bfloat16> x = full<bfloat16>({n}, bfloat16(0.1f));
  const double v = double(float(bfloat16(0.1f)));
  // one rounding of the float32 sum to bf16: within half an ulp, 2^-8 relative
  const float s = float(Tensor<bfloat16>(x.to(test_device()).sum()).item());
  CHECK(rel_err(s, double(n) * v) <= 1.0 / 256 + 1e-6);
  CHECK(rel_err(float(Tensor<bfloat16>(x.to(test_device()).mean()).item()), v) <= 1.0 / 256 + 1e-6);
}
