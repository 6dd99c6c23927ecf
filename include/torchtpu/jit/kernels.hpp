// torchtpu/jit/kernels.hpp — float32 CPU kernels of the run-time graph that are not single
// expressions: linear with its fused epilogue, multi-head attention; epilogue application
// (activations on expressions and on tensors of any dtype).
// (Convolution, pooling and normalizations: the operator library, ops/conv.hpp, ops/pool.hpp,
// ops/norm.hpp.)
#pragma once
#include <algorithm>  // std::max, std::min
#include <cmath>      // std::sqrt, std::ceil, std::floor
#include <cstdint>    // int64_t
#include <limits>     // std::numeric_limits
#include <span>       // std::span
#include <string>     // std::string
#include <type_traits>  // std::decay_t
#include <vector>     // std::vector

#include "../core/errors.hpp"  // ShapeError, ValueError
#include "../ops/arith.hpp"    // add, mul
#include "../ops/attention.hpp"  // scaled_dot_product_attention (multi-head attention)
#include "../ops/matmul.hpp"   // matmul
#include "../ops/methods.hpp"  // materialize, clone
#include "../ops/reduce.hpp"   // softmax
#include "../ops/unary.hpp"    // relu, silu, clamp, ...
#include "registry.hpp"        // Epilogue
#include "value.hpp"           // FloatTensor

namespace torchtpu::jit::kernels {

/// Calls `f(expr')` with `expr'` = the epilogue applied to `e` (one fused expression).
template <class E, class F>
void with_epilogue(const Epilogue& ep, const E& e, F&& f) {
  using K = Epilogue::Kind;
  switch (ep.kind) {
    case K::None: f(e); return;
    case K::Relu: f(torchtpu::relu(e)); return;
    case K::Clamp: f(torchtpu::clamp(e, ep.lo, ep.hi)); return;
    case K::Silu: f(torchtpu::silu(e)); return;
    case K::Sigmoid: f(torchtpu::sigmoid(e)); return;
    case K::Gelu: f(torchtpu::gelu(e)); return;
    case K::GeluTanh: f(torchtpu::gelu(e, "tanh")); return;
    case K::Hardswish: f(torchtpu::hardswish(e)); return;
    case K::Hardsigmoid: f(torchtpu::hardsigmoid(e)); return;
    case K::Tanh: f(torchtpu::tanh(e)); return;
  }
}

/// Activation `ep` on `x` of any dtype, as torch computes it: relu and clamp keep the dtype
/// (integer bounds clipped to its range), the others compute in x's floating dtype (float32 for
/// integers and bool).
inline AnyTensor activation_any(const Epilogue& ep, const AnyTensor& x) {
  return x.visit([&]<class U>(const Tensor<U>& t) {
    AnyTensor r;
    with_epilogue(ep, t, [&](const auto& e) { r = AnyTensor(Tensor<typename std::decay_t<decltype(e)>::value_type>(e)); });
    return r;
  });
}

/// A new contiguous tensor holding `ep(e)`.
template <class E>
FloatTensor eval_new(const Epilogue& ep, const E& e) {
  FloatTensor r;
  with_epilogue(ep, e, [&](const auto& x) { r = FloatTensor(x); });
  return r;
}

/// `ep(e)` written into `dest` (same shape; broadcasting `e`).
template <class E>
void eval_into(const FloatTensor& dest, const Epilogue& ep, const E& e) {
  FloatTensor d = dest;
  with_epilogue(ep, e, [&](const auto& x) { d.copy_(x); });
}

inline std::string list_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) { s += i ? ", " : ""; s += std::to_string(v[i]); }
  return s + "]";
}

/// `linear(x, w, b)` with the epilogue fused into the matmul: `x: [..., in]`, `w: [out, in]`,
/// `b: [out]` or undefined → `[..., out]`. **Errors:** ShapeError naming both shapes.
inline FloatTensor linear(const FloatTensor& x, const FloatTensor& w, const FloatTensor* b, const Epilogue& ep) {
  if (w.dim() != 2 || x.dim() < 1 || x.size(-1) != w.size(1))
    throw ShapeError("aten::linear: input " + to_string(x.sizes()) + " and weight " + to_string(w.sizes()) +
                     " do not fit (expected input [..., " + (w.dim() == 2 ? std::to_string(w.size(1)) : "?") + "])");
  if (b && (b->dim() != 1 || b->size(0) != w.size(0)))
    throw ShapeError("aten::linear: bias " + to_string(b->sizes()) + " does not fit weight " + to_string(w.sizes()));
  Dims out_shape = x.sizes();
  out_shape[out_shape.size() - 1] = w.size(0);
  FloatTensor out = FloatTensor::empty(out_shape);
  if (out.numel() == 0) return out;
  const FloatTensor x2 = x.dim() == 2 ? x : x.reshape(Dims{-1, x.size(-1)});
  const FloatTensor o2 = out.view(Dims{x2.size(0), w.size(0)});
  if (b) eval_into(o2, ep, torchtpu::add(torchtpu::matmul(x2, w.t()), *b));
  else eval_into(o2, ep, torchtpu::matmul(x2, w.t()));
  return out;
}

/// Scaled dot-product self/cross attention as `nn.MultiheadAttention`'s fast path computes it
/// (aten::_native_multi_head_attention, batch_first): `q: [B, Lq, E]`, `k, v: [B, Lk, E]`,
/// packed in-projection `qkv_w: [3E, E]`, `qkv_b: [3E]`, out-projection `[E, E]`, `[E]`.
/// Returns `[B, Lq, E]`; with `need_weights`, `weights` gets `[B, Lq, Lk]` averaged over
/// heads (or `[B, H, Lq, Lk]` when not averaged). No masks.
inline FloatTensor multi_head_attention(const FloatTensor& q, const FloatTensor& k, const FloatTensor& v, int64_t E,
                                        int64_t heads, const FloatTensor& qkv_w, const FloatTensor& qkv_b,
                                        const FloatTensor& proj_w, const FloatTensor& proj_b, bool need_weights,
                                        bool average, FloatTensor* weights) {
  const char* op = "aten::_native_multi_head_attention";
  if (q.dim() != 3 || k.dim() != 3 || v.dim() != 3 || q.size(2) != E || heads <= 0 || E % heads != 0)
    throw ShapeError(std::string(op) + ": query " + to_string(q.sizes()) + " with embed_dim " + std::to_string(E) +
                     " and " + std::to_string(heads) + " heads");
  const int64_t B = q.size(0), Lq = q.size(1), Lk = k.size(1), hd = E / heads;
  const Epilogue none{};
  FloatTensor qp, kp, vp;
  const bool self = q.storage() == k.storage() && q.storage() == v.storage() && q.data_ptr() == k.data_ptr() &&
                    q.data_ptr() == v.data_ptr() && q.sizes() == k.sizes() && q.sizes() == v.sizes();
  if (self) {
    const FloatTensor qkv = linear(q, qkv_w, &qkv_b, none);  // [B, L, 3E]
    qp = qkv.narrow(2, 0, E);
    kp = qkv.narrow(2, E, E);
    vp = qkv.narrow(2, 2 * E, E);
  } else {
    const FloatTensor wq = qkv_w.narrow(0, 0, E), wk = qkv_w.narrow(0, E, E), wv = qkv_w.narrow(0, 2 * E, E);
    const FloatTensor bq = qkv_b.narrow(0, 0, E), bk = qkv_b.narrow(0, E, E), bv = qkv_b.narrow(0, 2 * E, E);
    qp = linear(q, wq, &bq, none);
    kp = linear(k, wk, &bk, none);
    vp = linear(v, wv, &bv, none);
  }
  // [B, L, H, hd] -> [B, H, L, hd]
  const FloatTensor qh = qp.reshape(Dims{B, Lq, heads, hd}).transpose(1, 2);
  const FloatTensor kh = kp.reshape(Dims{B, Lk, heads, hd}).transpose(1, 2);
  const FloatTensor vh = vp.reshape(Dims{B, Lk, heads, hd}).transpose(1, 2);
  FloatTensor ctx;  // [B, H, Lq, hd]
  if (need_weights && weights) {  // the weights too: the whole [B, H, Lq, Lk] matrix
    const float scale = float(1.0 / std::sqrt(double(hd)));
    FloatTensor scores = torchtpu::mul(torchtpu::matmul(qh, kh.transpose(2, 3)), scale);  // [B, H, Lq, Lk]
    FloatTensor attn = torchtpu::softmax(scores, -1);
    ctx = torchtpu::matmul(attn, vh);
    if (average) *weights = FloatTensor(torchtpu::mean(attn, Dims{1}, false));
    else *weights = attn;
  } else {  // the operator library's blockwise kernel (ops/attention.hpp)
    ctx = torchtpu::scaled_dot_product_attention(qh, kh, vh);
  }
  const FloatTensor merged = ctx.transpose(1, 2).reshape(Dims{B, Lq, E});
  return linear(merged, proj_w, &proj_b, none);
}

}  // namespace torchtpu::jit::kernels
