// tests/device_ops/test_device_norm.cpp — the normalization ops of the operator library
// (ops/norm.hpp: layer_norm, rms_norm, group_norm, instance_norm, batch_norm) on the PJRT device
// under test, in each execution mode, against the same calls on the cpu: every floating dtype,
// with and without weight/bias (absent optional operands are not passed to the device), a
// transposed (non-contiguous) operand, size-1 dims, and between elementwise statements.
//
// Tolerance: the device computes in float32 (float64 for float64) and sums in another order;
// the cpu computes in float64 and rounds once. Relative + absolute tolerance 1e-5 for float32,
// 1e-12 for float64, 4e-3 for float16 and 3.2e-2 for bfloat16 (about 4 ulps of the result:
// a float32 difference can move a 16-bit result across one rounding boundary, and outputs are
// O(1), so the absolute part covers results near 0).
#include <string>  // std::string

#include <torchtpu/ops/norm.hpp>  // layer_norm, rms_norm, group_norm, instance_norm, batch_norm

#include "helpers.hpp"  // check_close, test_device, test_input

using namespace torchtpu;

namespace {

template <class T>
double tol() { return per_dtype<T>(1e-12, 1e-5, 4e-3, 3.2e-2); }

template <class T>
void check_norms() {
  INFO("dtype " << dtype_name(dtype_of<T>()));
  const auto dev = test_device();
  const double e = tol<T>();
  const Tensor<T> x = input<T>({2, 3, 4}, 1), w = input<T>({4}, 2), b = input<T>({4}, 3);
  const auto dx = x.to(dev), dw = w.to(dev), db = b.to(dev);
  // layer_norm: weight and bias, bias only, none; two normalized dims; a transposed input
  check_close(layer_norm(dx, {4}, dw, db), layer_norm(x, {4}, w, b), e, e);
  check_close(layer_norm(dx, {4}, Tensor<T>(), db), layer_norm(x, {4}, Tensor<T>(), b), e, e);
  check_close(layer_norm(dx, {3, 4}), layer_norm(x, {3, 4}), e, e);
  check_close(layer_norm(Tensor<T>(dx.transpose(0, 2)), {2}, Tensor<T>(), Tensor<T>(), 1e-3),
              layer_norm(Tensor<T>(x.transpose(0, 2)), {2}, Tensor<T>(), Tensor<T>(), 1e-3), e, e);
  // rms_norm: default eps, given eps, weight
  check_close(rms_norm(dx, {4}), rms_norm(x, {4}), e, e);
  check_close(rms_norm(dx, {4}, dw, 0.5), rms_norm(x, {4}, w, 0.5), e, e);
  // group_norm over [N, C, H, W] with C = 4 in 2 groups; per-channel weight and bias
  const Tensor<T> g = input<T>({2, 4, 3, 2}, 4), cw = input<T>({4}, 5), cb = input<T>({4}, 6);
  const auto dg = g.to(dev), dcw = cw.to(dev), dcb = cb.to(dev);
  check_close(group_norm(dg, 2, dcw, dcb), group_norm(g, 2, cw, cb), e, e);
  check_close(group_norm(dg, 4), group_norm(g, 4), e, e);
  check_close(group_norm(Tensor<T>(dg.transpose(2, 3)), 1, dcw), group_norm(Tensor<T>(g.transpose(2, 3)), 1, cw), e, e);
  // instance_norm: input statistics; running statistics (use_input_stats=False)
  const Tensor<T> rm = input<T>({4}, 7), rv = input<T>({4}, 8, 0.5, 2.0);
  const auto drm = rm.to(dev), drv = rv.to(dev);
  check_close(instance_norm(dg, {}, {}, dcw, dcb), instance_norm(g, {}, {}, cw, cb), e, e);
  check_close(instance_norm(dg, drm, drv, {}, dcb, false), instance_norm(g, rm, rv, {}, cb, false), e, e);
  // batch_norm: evaluation and training, size-1 spatial dims, no weight
  check_close(batch_norm(dg, drm, drv, dcw, dcb), batch_norm(g, rm, rv, cw, cb), e, e);
  check_close(batch_norm(dg, drm, drv, {}, {}, true), batch_norm(g, rm, rv, {}, {}, true), e, e);
  check_close(batch_norm(Tensor<T>(dg.reshape(Dims{2, 4, 1, 6})), Tensor<T>(), Tensor<T>(), dcw, {}, true),
              batch_norm(Tensor<T>(g.reshape(Dims{2, 4, 1, 6})), Tensor<T>(), Tensor<T>(), cw, {}, true), e, e);
}

}  // namespace

TEST_CASE("normalization ops on the device: every floating dtype, every mode", "[pjrt][library][norm]") {
  for (ExecutionMode m : {ExecutionMode::Fused, ExecutionMode::Strict, ExecutionMode::Debug}) {
    ExecutionModeGuard g(m);
    INFO("mode " << execution_mode_name(m));
    check_norms<float>();
  }
  check_norms<double>();  // the other dtypes in the default mode
  check_norms<half>();
  check_norms<bfloat16>();
}

TEST_CASE("normalization ops on the device: run-time typed, between elementwise statements, errors",
          "[pjrt][library][norm]") {
  const auto dev = test_device();
  const Tensor<float> x = test_input({3, 5}, 11), w = test_input({5}, 12);
  for (ExecutionMode m : {ExecutionMode::Fused, ExecutionMode::Strict, ExecutionMode::Debug}) {
    ExecutionModeGuard g(m);
    INFO("mode " << execution_mode_name(m));
    // y = layer_norm(x * 2 + 1) * 3 in three statements
    auto dx = x.to(dev);
    Tensor<float> dt = dx * 2.0f + 1.0f;
    const Tensor<float> dy = layer_norm(dt, {5}, w.to(dev)) * 3.0f;
    const Tensor<float> ct = x * 2.0f + 1.0f;
    check_close(dy, Tensor<float>(layer_norm(ct, {5}, w) * 3.0f), 1e-5, 1e-5);
    // AnyTensor operands, the result on the device
    const AnyTensor r = batch_norm(AnyTensor(dx), AnyTensor(), AnyTensor(), AnyTensor(w.to(dev)), AnyTensor(), true);
    CHECK(r.device() == dev);
    check_close(r.get<float>(), batch_norm(x, Tensor<float>(), Tensor<float>(), w, {}, true), 1e-5, 1e-5);
  }
  // infer runs before anything is recorded: the cpu's errors
  CHECK_THROWS_AS(layer_norm(x.to(dev), {4}), ShapeError);
  CHECK_THROWS_AS(group_norm(Tensor<float>(x.to(dev)), 2), ValueError);
  CHECK_THROWS_AS(batch_norm(Tensor<float>(x.to(dev)), Tensor<float>(), Tensor<float>()), ValueError);
}
