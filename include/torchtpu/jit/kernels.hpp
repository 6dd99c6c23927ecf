// torchtpu/jit/kernels.hpp — float32 CPU kernels of the run-time graph that are not single
// expressions: convolution (im2col + the fused matmul, direct loop for depthwise), pooling,
// multi-head attention; epilogue application. (Normalizations: the operator library,
// ops/norm.hpp.)
#pragma once
#include <algorithm>  // std::max, std::min
#include <cmath>      // std::sqrt, std::ceil, std::floor
#include <cstdint>    // int64_t
#include <limits>     // std::numeric_limits
#include <string>     // std::string
#include <vector>     // std::vector

#include "../core/errors.hpp"  // ShapeError, ValueError
#include "../fuse/window.hpp"   // window2d (pooling, depthwise convolution)
#include "../ops/arith.hpp"    // add, mul
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

/// Two spatial parameters from a list of 1 or 2 ints (PyTorch's `_pair`).
inline void pair(const std::vector<int64_t>& v, int64_t& a, int64_t& b, const char* op, const char* name) {
  if (v.size() == 1) a = b = v[0];
  else if (v.size() == 2) { a = v[0]; b = v[1]; }
  else throw ValueError(std::string(op) + ": " + name + " must have 1 or 2 entries, got " + list_str(v));
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

/// Output size of a convolution / pooling window along one axis (PyTorch's formula).
inline int64_t window_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  const int64_t span = in + 2 * p - d * (k - 1) - 1;
  int64_t o = (ceil_mode ? (span + s - 1) / s : span / s) + 1;  // span >= 0 checked by the caller
  if (ceil_mode && (o - 1) * s >= in + p) --o;  // the last window must start inside the input
  return o;
}

/// 2-D convolution (NCHW, float32), the epilogue fused: `x: [N, C, H, W]`,
/// `w: [OC, C/groups, KH, KW]`, `b: [OC]` or null. Grouped convolutions run one matmul per
/// group on an im2col buffer (1×1 stride-1 convolutions read the input directly); depthwise
/// ones (one input channel per group) run a direct loop. An unbatched `[C, H, W]` input
/// gives `[OC, OH, OW]`. **Errors:** ShapeError for shapes that do not fit, ValueError for
/// non-positive stride/dilation.
inline FloatTensor conv2d(FloatTensor x, const FloatTensor& w, const FloatTensor* b, std::vector<int64_t> stride_v,
                          std::vector<int64_t> pad_v, std::vector<int64_t> dil_v, int64_t groups,
                          const Epilogue& ep) {
  const char* op = "aten::_convolution";
  const bool unbatched = x.dim() == 3;
  if (unbatched) x = x.unsqueeze(0);
  if (x.dim() != 4 || w.dim() != 4)
    throw ShapeError(std::string(op) + ": only 2-D convolutions are supported: input " + to_string(x.sizes()) +
                     ", weight " + to_string(w.sizes()));
  int64_t sh, sw, ph, pw, dh, dw;
  pair(stride_v, sh, sw, op, "stride");
  pair(pad_v, ph, pw, op, "padding");
  pair(dil_v, dh, dw, op, "dilation");
  if (sh <= 0 || sw <= 0 || dh <= 0 || dw <= 0 || ph < 0 || pw < 0)
    throw ValueError(std::string(op) + ": stride and dilation must be positive, padding non-negative");
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t OC = w.size(0), Cg = w.size(1), KH = w.size(2), KW = w.size(3);
  if (groups <= 0 || C != Cg * groups || OC % groups != 0)
    throw ShapeError(std::string(op) + ": input " + to_string(x.sizes()) + " with weight " + to_string(w.sizes()) +
                     " and groups=" + std::to_string(groups) + ": expected input channels = " +
                     std::to_string(Cg * groups));
  if (b && (b->dim() != 1 || b->size(0) != OC))
    throw ShapeError(std::string(op) + ": bias " + to_string(b->sizes()) + " does not fit weight " + to_string(w.sizes()));
  if (H + 2 * ph < dh * (KH - 1) + 1 || W + 2 * pw < dw * (KW - 1) + 1)
    throw ShapeError(std::string(op) + ": input " + to_string(x.sizes()) + " (padded by " + std::to_string(ph) + "x" +
                     std::to_string(pw) + ") is smaller than the kernel " + to_string(w.sizes()));
  const int64_t OH = window_out(H, KH, sh, ph, dh, false), OW = window_out(W, KW, sw, pw, dw, false);
  const int64_t L = OH * OW, OCg = OC / groups, K = Cg * KH * KW;
  x = x.contiguous();
  const FloatTensor wc = w.contiguous();
  FloatTensor out = FloatTensor::empty(Dims{N, OC, OH, OW});
  const float* xp = x.data_ptr();
  float* op_ = out.data_ptr();

  if (Cg == 1 && OCg == 1) {
    // Depthwise: each output channel reads one input channel (fuse/window.hpp).
    const FloatTensor bc = b ? b->contiguous() : FloatTensor();
    torchtpu::detail::Window2dArgs a;
    a.kind = torchtpu::detail::Window2dArgs::Kind::depthwise;
    a.x = xp;
    a.out = op_;
    a.planes = N * OC;
    a.H = H; a.W = W; a.OH = OH; a.OW = OW;
    a.kh = KH; a.kw = KW; a.sh = sh; a.sw = sw; a.ph = ph; a.pw = pw; a.dh = dh; a.dw = dw;
    a.weight = wc.data_ptr();
    a.bias = b ? bc.data_ptr() : nullptr;
    a.planes_per_item = OC;
    torchtpu::detail::window2d(a);
    if (ep.active()) eval_into(out, ep, out);
    return unbatched ? out.squeeze(0) : out;
  }

  const bool direct = KH == 1 && KW == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0;
  FloatTensor cols = direct ? FloatTensor() : FloatTensor::empty(Dims{K, L});
  const FloatTensor w2 = wc.view(Dims{OC, K});
  FloatTensor bias2;
  if (b) bias2 = b->view(Dims{OC, 1});
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t g = 0; g < groups; ++g) {
      FloatTensor src;
      if (direct) {
        src = x.select(0, n).narrow(0, g * Cg, Cg).view(Dims{Cg, L});
      } else {
        float* cp = cols.data_ptr();
        for (int64_t c = 0; c < Cg; ++c) {
          const float* xc = xp + (n * C + g * Cg + c) * H * W;
          for (int64_t i = 0; i < KH; ++i)
            for (int64_t j = 0; j < KW; ++j) {
              float* row = cp + ((c * KH + i) * KW + j) * L;
              for (int64_t oh = 0; oh < OH; ++oh) {
                const int64_t ih = oh * sh - ph + i * dh;
                float* r = row + oh * OW;
                if (ih < 0 || ih >= H) {
                  for (int64_t ow = 0; ow < OW; ++ow) r[ow] = 0.0f;
                  continue;
                }
                const float* xr = xc + ih * W;
                for (int64_t ow = 0; ow < OW; ++ow) {
                  const int64_t iw = ow * sw - pw + j * dw;
                  r[ow] = (iw >= 0 && iw < W) ? xr[iw] : 0.0f;
                }
              }
            }
        }
        src = cols;
      }
      const FloatTensor dest = out.select(0, n).narrow(0, g * OCg, OCg).view(Dims{OCg, L});
      const FloatTensor wg = w2.narrow(0, g * OCg, OCg);
      if (b) eval_into(dest, ep, torchtpu::add(torchtpu::matmul(wg, src), bias2.narrow(0, g * OCg, OCg)));
      else eval_into(dest, ep, torchtpu::matmul(wg, src));
    }
  }
  return unbatched ? out.squeeze(0) : out;
}

/// Checks a pooling input: `[N, C, H, W]` or `[C, H, W]`; returns it as 4-D contiguous.
inline FloatTensor pool_input(const FloatTensor& x, const char* op, bool& unbatched) {
  unbatched = x.dim() == 3;
  if (x.dim() != 3 && x.dim() != 4)
    throw ShapeError(std::string(op) + ": expected a 3-D or 4-D input, got " + to_string(x.sizes()));
  return (unbatched ? x.unsqueeze(0) : x).contiguous();
}

/// max_pool2d (PyTorch semantics: padding counts as -inf, NaN propagates, ceil_mode).
/// An empty stride means stride = kernel. **Errors:** ShapeError, ValueError.
inline FloatTensor max_pool2d(const FloatTensor& xin, std::vector<int64_t> k_v, std::vector<int64_t> s_v,
                              std::vector<int64_t> p_v, std::vector<int64_t> d_v, bool ceil_mode) {
  const char* op = "aten::max_pool2d";
  bool unb;
  const FloatTensor x = pool_input(xin, op, unb);
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  pair(k_v, kh, kw, op, "kernel_size");
  if (s_v.empty()) s_v = k_v;
  pair(s_v, sh, sw, op, "stride");
  pair(p_v, ph, pw, op, "padding");
  pair(d_v, dh, dw, op, "dilation");
  if (kh <= 0 || kw <= 0 || sh <= 0 || sw <= 0 || dh <= 0 || dw <= 0 || ph > kh / 2 || pw > kw / 2)
    throw ValueError(std::string(op) + ": invalid kernel/stride/padding/dilation");
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  if (H + 2 * ph < dh * (kh - 1) + 1 || W + 2 * pw < dw * (kw - 1) + 1)
    throw ShapeError(std::string(op) + ": input " + to_string(x.sizes()) + " is smaller than the window");
  const int64_t OH = window_out(H, kh, sh, ph, dh, ceil_mode), OW = window_out(W, kw, sw, pw, dw, ceil_mode);
  FloatTensor out = FloatTensor::empty(Dims{N, C, OH, OW});
  torchtpu::detail::Window2dArgs a;  // fuse/window.hpp
  a.kind = torchtpu::detail::Window2dArgs::Kind::max;
  a.x = x.data_ptr();
  a.out = out.data_ptr();
  a.planes = N * C;
  a.H = H; a.W = W; a.OH = OH; a.OW = OW;
  a.kh = kh; a.kw = kw; a.sh = sh; a.sw = sw; a.ph = ph; a.pw = pw; a.dh = dh; a.dw = dw;
  torchtpu::detail::window2d(a);
  return unb ? out.squeeze(0) : out;
}

/// avg_pool2d with PyTorch's divisor rules (count_include_pad counts padding inside the
/// padded input; divisor_override <= 0 means none).
inline FloatTensor avg_pool2d(const FloatTensor& xin, std::vector<int64_t> k_v, std::vector<int64_t> s_v,
                              std::vector<int64_t> p_v, bool ceil_mode, bool count_include_pad,
                              int64_t divisor_override) {
  const char* op = "aten::avg_pool2d";
  bool unb;
  const FloatTensor x = pool_input(xin, op, unb);
  int64_t kh, kw, sh, sw, ph, pw;
  pair(k_v, kh, kw, op, "kernel_size");
  if (s_v.empty()) s_v = k_v;
  pair(s_v, sh, sw, op, "stride");
  pair(p_v, ph, pw, op, "padding");
  if (kh <= 0 || kw <= 0 || sh <= 0 || sw <= 0 || ph > kh / 2 || pw > kw / 2)
    throw ValueError(std::string(op) + ": invalid kernel/stride/padding");
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  if (H + 2 * ph < kh || W + 2 * pw < kw)
    throw ShapeError(std::string(op) + ": input " + to_string(x.sizes()) + " is smaller than the window");
  const int64_t OH = window_out(H, kh, sh, ph, 1, ceil_mode), OW = window_out(W, kw, sw, pw, 1, ceil_mode);
  FloatTensor out = FloatTensor::empty(Dims{N, C, OH, OW});
  torchtpu::detail::Window2dArgs a;  // fuse/window.hpp
  a.kind = torchtpu::detail::Window2dArgs::Kind::avg;
  a.x = x.data_ptr();
  a.out = out.data_ptr();
  a.planes = N * C;
  a.H = H; a.W = W; a.OH = OH; a.OW = OW;
  a.kh = kh; a.kw = kw; a.sh = sh; a.sw = sw; a.ph = ph; a.pw = pw;
  a.count_include_pad = count_include_pad;
  a.divisor_override = divisor_override;
  torchtpu::detail::window2d(a);
  return unb ? out.squeeze(0) : out;
}

/// adaptive_avg_pool2d: output cell (i, j) averages rows [floor(i·H/OH), ceil((i+1)·H/OH)).
inline FloatTensor adaptive_avg_pool2d(const FloatTensor& xin, std::vector<int64_t> size_v) {
  const char* op = "aten::adaptive_avg_pool2d";
  bool unb;
  const FloatTensor x = pool_input(xin, op, unb);
  int64_t OH, OW;
  pair(size_v, OH, OW, op, "output_size");
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  if (OH <= 0 || OW <= 0) throw ValueError(std::string(op) + ": output size must be positive, got " + list_str(size_v));
  FloatTensor out = FloatTensor::empty(Dims{N, C, OH, OW});
  const float* xp = x.data_ptr();
  float* o = out.data_ptr();
  for (int64_t nc = 0; nc < N * C; ++nc) {
    const float* xc = xp + nc * H * W;
    for (int64_t i = 0; i < OH; ++i) {
      const int64_t h0 = i * H / OH, h1 = ((i + 1) * H + OH - 1) / OH;
      for (int64_t j = 0; j < OW; ++j) {
        const int64_t w0 = j * W / OW, w1 = ((j + 1) * W + OW - 1) / OW;
        float s = 0.0f;
        for (int64_t a = h0; a < h1; ++a)
          for (int64_t c = w0; c < w1; ++c) s += xc[a * W + c];
        *o++ = s / float((h1 - h0) * (w1 - w0));
      }
    }
  }
  return unb ? out.squeeze(0) : out;
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
  const float scale = float(1.0 / std::sqrt(double(hd)));
  FloatTensor scores = torchtpu::mul(torchtpu::matmul(qh, kh.transpose(2, 3)), scale);  // [B, H, Lq, Lk]
  FloatTensor attn = torchtpu::softmax(scores, -1);
  FloatTensor ctx = torchtpu::matmul(attn, vh);                            // [B, H, Lq, hd]
  const FloatTensor merged = ctx.transpose(1, 2).reshape(Dims{B, Lq, E});
  if (need_weights && weights) {
    if (average) *weights = FloatTensor(torchtpu::mean(attn, Dims{1}, false));
    else *weights = attn;
  }
  return linear(merged, proj_w, &proj_b, none);
}

}  // namespace torchtpu::jit::kernels
