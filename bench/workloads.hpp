// bench/workloads.hpp — the device benchmarks' workloads, defined once for bench/device_modes.cpp,
// bench/device_vs_jax.cpp and bench/xla_capi.cpp (their jax twins: tools/device_check_jax.py and
// bench/xla_vs_jax.py), and `wait_ready`, which times a device result to completion.
#pragma once
#include <memory>  // std::static_pointer_cast

#include <torchtpu/device.hpp>  // Tensor, the device runtime (DeviceArray, pjrt::Plugin)

namespace torchtpu::bench {

/// The 10-op chain (x*0.5, +0.25, abs, neg, exp, *2, -1, tanh, *0.75, sigmoid(x), +) as one
/// expression.
inline Tensor<float> chain_fused(const Tensor<float>& x) {
  return Tensor<float>(tanh(exp(-abs(x * 0.5f + 0.25f)) * 2.0f - 1.0f) * 0.75f + sigmoid(x));
}
/// The same chain, one statement per op.
inline Tensor<float> chain_per_op(const Tensor<float>& x) {
  Tensor<float> a = x * 0.5f;
  Tensor<float> b = a + 0.25f;
  Tensor<float> c = abs(b);
  Tensor<float> d = -c;
  Tensor<float> e = exp(d);
  Tensor<float> f = e * 2.0f;
  Tensor<float> g = f - 1.0f;
  Tensor<float> h = tanh(g);
  Tensor<float> s = sigmoid(x);
  Tensor<float> r = h * 0.75f;
  return Tensor<float>(r + s);
}
/// 150 one-input ops, one statement each: 15 x (x*0.5, +0.25, abs, neg, exp, *2, -1, tanh,
/// *0.75, +0.5). Values stay in (-0.25, 1.25).
inline Tensor<float> chain150_per_op(Tensor<float> x) {
  for (int i = 0; i < 15; ++i) {
    Tensor<float> a = x * 0.5f;
    Tensor<float> b = a + 0.25f;
    Tensor<float> c = abs(b);
    Tensor<float> d = -c;
    Tensor<float> e = exp(d);
    Tensor<float> f = e * 2.0f;
    Tensor<float> g = f - 1.0f;
    Tensor<float> h = tanh(g);
    Tensor<float> k = h * 0.75f;
    x = Tensor<float>(k + 0.5f);  // a new array each time (rebinds), like the other statements
  }
  return x;
}

/// The 3-layer MLP's weights: `x [m, 512] @ w1 [512, 512] + b1`, ReLU, `@ w2 [512, 512] + b2`,
/// ReLU, `@ w3 [512, 10] + b3`.
struct Mlp {
  Tensor<float> w1, b1, w2, b2, w3, b3;
};
/// The MLP forward, one expression per layer.
inline Tensor<float> mlp_fused(const Mlp& m, const Tensor<float>& x) {
  Tensor<float> h1 = relu(matmul(x, m.w1) + m.b1);
  Tensor<float> h2 = relu(matmul(h1, m.w2) + m.b2);
  return Tensor<float>(matmul(h2, m.w3) + m.b3);
}
/// The MLP forward, one statement per op.
inline Tensor<float> mlp_per_op(const Mlp& m, const Tensor<float>& x) {
  Tensor<float> a1 = matmul(x, m.w1);
  Tensor<float> z1 = a1 + m.b1;
  Tensor<float> h1 = relu(z1);
  Tensor<float> a2 = matmul(h1, m.w2);
  Tensor<float> z2 = a2 + m.b2;
  Tensor<float> h2 = relu(z2);
  Tensor<float> a3 = matmul(h2, m.w3);
  return Tensor<float>(a3 + m.b3);
}

/// Blocks until `t` is computed, like jax's block_until_ready: `torchtpu::sync()` runs the
/// deferred graph and waits for every enqueued execution, then `t`'s buffer is awaited too
/// (`pjrt::Buffer::await_ready`, a no-op once sync has waited). A cpu tensor is ready already.
/// **Errors:** DeviceError from the execution; ValueError for a device tensor without a buffer.
inline void wait_ready(const Tensor<float>& t) {
  torchtpu::sync();
  if (t.device().is_cpu()) return;
  auto arr = std::static_pointer_cast<device::DeviceArray>(t.storage()->device_handle);
  if (!arr) throw ValueError("wait_ready: tensor has no device array");
  arr->check_not_failed();
  if (!arr->buffer) throw ValueError("wait_ready: device array still pending after sync()");
  arr->buffer->await_ready();
}

}  // namespace torchtpu::bench
