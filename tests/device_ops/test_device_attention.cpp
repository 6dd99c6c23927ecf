// tests/device_ops/test_device_attention.cpp — scaled_dot_product_attention (ops/attention.hpp)
// and the resize ops (ops/resize.hpp: upsample_nearest1d/2d, upsample_linear1d,
// upsample_bilinear2d, upsample_bicubic2d, interpolate) on the PJRT device under test, in each execution mode,
// against the same calls on the cpu: every dtype each op claims, masks (bool, additive,
// fully masked rows), is_causal, grouped-query heads, broadcast batch dims, both resize
// overload forms' arguments, uint8 nearest, and between elementwise statements.
//
// Tolerance. Attention at the highest matmul precision: 1e-5 (float32; the device sums in
// another order and normalizes after `p · v`, as the cpu does), 1e-12 (float64), 4e-3
// (float16), 3.2e-2 (bfloat16: a float32 difference can move a result across one bf16 rounding
// boundary). At the default precision the emulator multiplies bf16-rounded operands (TPU
// numerics): 3e-2 for float32 there (xla_cpu computes in float32 either way). Nearest resizing
// copies elements: exact on every dtype. Linear resizing multiplies by weights computed in
// double and rounded to float32 (the cpu computes them in float32 as torch does): 1e-5.
#include <algorithm>  // std::copy
#include <optional>  // std::nullopt
#include <string>    // std::string
#include <vector>    // std::vector

#include <torchtpu/ops/attention.hpp>  // scaled_dot_product_attention
#include <torchtpu/ops/resize.hpp>     // interpolate, upsample_*

#include "helpers.hpp"  // check_close, test_device, test_input

using namespace torchtpu;

namespace {

template <class T>
double tol() { return per_dtype<T>(1e-12, 1e-5, 4e-3, 3.2e-2); }

Tensor<bool> mask_of(const Dims& s, uint64_t seed, int masked_row = -1) {
  const Tensor<float> u = test_input(s, seed, 0.0, 1.0);
  const int64_t S = s[s.size() - 1], L = s[s.size() - 2];
  std::vector<char> b(static_cast<size_t>(u.numel()));
  for (int64_t i = 0; i < u.numel(); ++i)  // every key masked for query row `masked_row`
    b[size_t(i)] = u.data_ptr()[i] < 0.7f && (i / S) % L != masked_row;
  Tensor<bool> m = Tensor<bool>::empty(s);
  std::copy(b.begin(), b.end(), m.data_ptr());
  return m;
}

template <class T>
void check_attention(double e) {
  INFO("dtype " << dtype_name(dtype_of<T>()));
  const auto dev = test_device();
  const Tensor<T> q = input<T>({2, 3, 5, 4}, 1), k = input<T>({3, 7, 4}, 2), v = input<T>({1, 1, 7, 3}, 3);
  const auto dq = q.to(dev), dk = k.to(dev), dv = v.to(dev);
  // broadcast batch dims; a given scale
  check_close(scaled_dot_product_attention(dq, dk, dv), scaled_dot_product_attention(q, k, v), e, e);
  check_close(scaled_dot_product_attention(dq, dk, dv, {}, 0.0, false, 1.5),
              scaled_dot_product_attention(q, k, v, {}, 0.0, false, 1.5), e, e);
  // a bool mask with a fully masked row (0), broadcast over the batch; an additive mask
  const Tensor<bool> m = mask_of({5, 7}, 4, 2);
  check_close(scaled_dot_product_attention(dq, dk, dv, AnyTensor(m.to(dev))), scaled_dot_product_attention(q, k, v, m), e, e);
  const Tensor<T> fm = input<T>({3, 1, 7}, 5, -3.0, 1.0);
  check_close(scaled_dot_product_attention(dq, dk, dv, AnyTensor(fm.to(dev))), scaled_dot_product_attention(q, k, v, fm), e, e);
  // is_causal with L > S and L < S
  const Tensor<T> q2 = input<T>({2, 9, 4}, 6), k2 = input<T>({2, 6, 4}, 7), v2 = input<T>({2, 6, 5}, 8);
  check_close(scaled_dot_product_attention(q2.to(dev), k2.to(dev), v2.to(dev), {}, 0.0, true),
              scaled_dot_product_attention(q2, k2, v2, {}, 0.0, true), e, e);
  check_close(scaled_dot_product_attention(k2.to(dev), q2.to(dev), Tensor<T>(q2.narrow(2, 0, 3)).to(dev), {}, 0.0, true),
              scaled_dot_product_attention(k2, q2, Tensor<T>(q2.narrow(2, 0, 3)), {}, 0.0, true), e, e);
  // grouped-query attention: 4 query heads on 2 key heads
  const Tensor<T> qg = input<T>({2, 4, 3, 4}, 9), kg = input<T>({2, 2, 5, 4}, 10), vg = input<T>({2, 2, 5, 3}, 11);
  check_close(scaled_dot_product_attention(qg.to(dev), kg.to(dev), vg.to(dev), {}, 0.0, false, std::nullopt, true),
              scaled_dot_product_attention(qg, kg, vg, {}, 0.0, false, std::nullopt, true), e, e);
}

template <class T>
void check_resize(double e) {
  INFO("dtype " << dtype_name(dtype_of<T>()));
  using V = std::vector<double>;
  const auto dev = test_device();
  const Tensor<T> x2 = input<T>({2, 3, 4, 5}, 21), x1 = input<T>({2, 3, 5}, 22);
  const auto d2 = x2.to(dev), d1 = x1.to(dev);
  // nearest: fractional, integer, downsampling factors; sizes; the plain form's scales
  check_close(interpolate(d2, std::nullopt, V{1.5, 2.5}), interpolate(x2, std::nullopt, V{1.5, 2.5}), 0, 0);
  check_close(interpolate(d2, std::nullopt, V{2.0}), interpolate(x2, std::nullopt, V{2.0}), 0, 0);
  check_close(interpolate(d2, Dims{3, 7}), interpolate(x2, Dims{3, 7}), 0, 0);
  check_close(interpolate(d2, Dims{2, 2}), interpolate(x2, Dims{2, 2}), 0, 0);
  check_close(upsample_nearest2d(d2, {6, 12}, 1.5, 2.5), upsample_nearest2d(x2, {6, 12}, 1.5, 2.5), 0, 0);
  check_close(interpolate(d1, std::nullopt, V{1.7}), interpolate(x1, std::nullopt, V{1.7}), 0, 0);
  check_close(upsample_nearest1d(d1, {3}), upsample_nearest1d(x1, {3}), 0, 0);
  if constexpr (std::is_same_v<T, bfloat16>) {
    // uint8 nearest (run once, with the bf16 pass)
    const Tensor<uint8_t> u = Tensor<uint8_t>(input<float>({1, 2, 4, 5}, 23, 0.0, 250.0).to<uint8_t>());
    check_close(interpolate(u.to(dev), std::nullopt, V{1.5, 2.5}), interpolate(u, std::nullopt, V{1.5, 2.5}), 0, 0);
  }
  // linear: align_corners both ways, factors and sizes, down and up, a transposed input
  check_close(interpolate(d1, std::nullopt, V{1.7}, "linear", false), interpolate(x1, std::nullopt, V{1.7}, "linear", false), e, e);
  check_close(interpolate(d1, Dims{8}, std::nullopt, "linear", true), interpolate(x1, Dims{8}, std::nullopt, "linear", true), e, e);
  check_close(interpolate(d2, std::nullopt, V{1.5, 1.3}, "bilinear", false),
              interpolate(x2, std::nullopt, V{1.5, 1.3}, "bilinear", false), e, e);
  check_close(interpolate(d2, Dims{3, 7}, std::nullopt, "bilinear", true),
              interpolate(x2, Dims{3, 7}, std::nullopt, "bilinear", true), e, e);
  check_close(interpolate(d2, Dims{1, 1}, std::nullopt, "bilinear", false),
              interpolate(x2, Dims{1, 1}, std::nullopt, "bilinear", false), e, e);
  check_close(upsample_bilinear2d(d2, {6, 6}, false, 1.5, 1.3), upsample_bilinear2d(x2, {6, 6}, false, 1.5, 1.3), e, e);
  // bicubic: up and down, align_corners both ways, a scale factor
  check_close(interpolate(d2, Dims{7, 9}, std::nullopt, "bicubic", false), interpolate(x2, Dims{7, 9}, std::nullopt, "bicubic", false),
              2 * e, 2 * e);
  check_close(interpolate(d2, Dims{3, 3}, std::nullopt, "bicubic", true), interpolate(x2, Dims{3, 3}, std::nullopt, "bicubic", true),
              2 * e, 2 * e);
  check_close(interpolate(d2, std::nullopt, V{1.5, 2.0}, "bicubic", false),
              interpolate(x2, std::nullopt, V{1.5, 2.0}, "bicubic", false), 2 * e, 2 * e);
  check_close(interpolate(Tensor<T>(d2.transpose(2, 3)), Dims{7, 3}, std::nullopt, "bilinear", true),
              interpolate(Tensor<T>(x2.transpose(2, 3)), Dims{7, 3}, std::nullopt, "bilinear", true), e, e);
}

}  // namespace

TEST_CASE("scaled_dot_product_attention on the device: every floating dtype, every mode", "[pjrt][library][attention]") {
  {
    MatmulPrecisionGuard g(MatmulPrecision::Highest);
    for (ExecutionMode m : {ExecutionMode::Fused, ExecutionMode::Strict, ExecutionMode::Debug}) {
      ExecutionModeGuard mg(m);
      INFO("mode " << execution_mode_name(m));
      check_attention<float>(tol<float>());
    }
    check_attention<double>(tol<double>());  // the other dtypes in the default mode
    check_attention<half>(tol<half>());
    check_attention<bfloat16>(tol<bfloat16>());
  }
  // the default matmul precision: bf16 operands on the emulator (TPU numerics)
  MatmulPrecisionGuard g(MatmulPrecision::Default);
  check_attention<float>(3e-2);
}

TEST_CASE("resize ops on the device: every dtype, every mode", "[pjrt][library][resize]") {
  for (ExecutionMode m : {ExecutionMode::Fused, ExecutionMode::Strict, ExecutionMode::Debug}) {
    ExecutionModeGuard mg(m);
    INFO("mode " << execution_mode_name(m));
    check_resize<float>(1e-5);
  }
  check_resize<double>(1e-12);
  check_resize<half>(4e-3);
  check_resize<bfloat16>(3.2e-2);
}

TEST_CASE("attention and resize on the device: run-time typed, between elementwise statements, errors",
          "[pjrt][library][attention][resize]") {
  const auto dev = test_device();
  MatmulPrecisionGuard pg(MatmulPrecision::Highest);
  const Tensor<float> q = test_input({2, 4, 8}, 31), k = test_input({2, 6, 8}, 32), v = test_input({2, 6, 8}, 33);
  const Tensor<float> img = test_input({1, 2, 3, 4}, 34);
  for (ExecutionMode m : {ExecutionMode::Fused, ExecutionMode::Strict, ExecutionMode::Debug}) {
    ExecutionModeGuard g(m);
    INFO("mode " << execution_mode_name(m));
    // y = interpolate(sdpa(q * 2, k, v) + 1) * 3 in statements
    const auto dq = q.to(dev);
    Tensor<float> dt = dq * 2.0f;
    const Tensor<float> da = scaled_dot_product_attention(dt, k.to(dev), v.to(dev)) + 1.0f;
    const Tensor<float> dy = interpolate(Tensor<float>(da.reshape(Dims{1, 2, 4, 8})), std::nullopt,
                                         std::vector<double>{2.0, 1.5}, "bilinear", false) * 3.0f;
    const Tensor<float> ca = scaled_dot_product_attention(Tensor<float>(q * 2.0f), k, v) + 1.0f;
    const Tensor<float> cy = interpolate(Tensor<float>(ca.reshape(Dims{1, 2, 4, 8})), std::nullopt,
                                         std::vector<double>{2.0, 1.5}, "bilinear", false) * 3.0f;
    check_close(dy, cy, 1e-5, 1e-5);
    // AnyTensor operands, the result on the device
    const AnyTensor r = scaled_dot_product_attention(AnyTensor(dq), AnyTensor(k.to(dev)), AnyTensor(v.to(dev)), AnyTensor(),
                                                     0.0, true);
    CHECK(r.device() == dev);
    check_close(r.get<float>(), scaled_dot_product_attention(q, k, v, {}, 0.0, true), 1e-5, 1e-5);
    const AnyTensor ri = interpolate(AnyTensor(img.to(dev)), Dims{5, 7}, std::nullopt, "nearest");
    CHECK(ri.device() == dev);
    check_close(ri.get<float>(), interpolate(img, Dims{5, 7}), 0, 0);
  }
  // infer runs before anything is recorded: the cpu's errors
  CHECK_THROWS_AS(scaled_dot_product_attention(q.to(dev), Tensor<float>(k.narrow(2, 0, 4)).to(dev), v.to(dev)), ShapeError);
  CHECK_THROWS_AS(scaled_dot_product_attention(q.to(dev), k.to(dev), v.to(dev), {}, 0.5), ValueError);
  CHECK_THROWS_AS(interpolate(img.to(dev), Dims{3}, std::nullopt, "linear"), ShapeError);
  CHECK_THROWS_AS(upsample_nearest2d(img.to(dev), {0, 3}), ValueError);
}
