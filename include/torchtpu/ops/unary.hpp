// torchtpu/ops/unary.hpp — elementwise math functions and activations: neg, abs, exp, log,
// log1p, expm1, sqrt, rsqrt, sin, cos, tanh, erf, sigmoid, relu, gelu, silu, hardtanh,
// hardswish, hardsigmoid, clamp.
#pragma once
#include <cmath>        // std::exp, std::log, std::tanh, std::erf, ...
#include <limits>       // std::numeric_limits
#include <string_view>  // std::string_view

#include "traits.hpp"  // make_map, policies
#include "../fuse/vecmath.hpp"  // vector forms used by the `simd` members

namespace torchtpu {

struct NegOp : same_type_policy {
  static constexpr std::string_view name = "neg", aten = "aten::neg", hlo = "stablehlo.negate";
  template <class M> constexpr M operator()(M x) const { return M(-x); }
  template <class V> TORCHTPU_SIMD V simd(V x) const { return -x; }
};
struct AbsOp : same_type_policy {
  static constexpr std::string_view name = "abs", aten = "aten::abs", hlo = "stablehlo.abs";
  template <class M> constexpr M operator()(M x) const {
    if constexpr (std::is_unsigned_v<M>) return x;
    else return x < M(0) ? M(-x) : x;
  }
  template <class V> TORCHTPU_SIMD V simd(V x) const { return vabs(x); }
};
struct ExpOp : floating_policy {
  static constexpr std::string_view name = "exp", aten = "aten::exp", hlo = "stablehlo.exponential";
  template <class M> M operator()(M x) const { return std::exp(x); }
  template <class V> TORCHTPU_SIMD V simd(V x) const { return vexp(x); }
};
struct LogOp : floating_policy {
  static constexpr std::string_view name = "log", aten = "aten::log", hlo = "stablehlo.log";
  template <class M> M operator()(M x) const { return std::log(x); }
  template <class V> TORCHTPU_SIMD V simd(V x) const { return vlog(x); }
};
struct Log1pOp : floating_policy {
  static constexpr std::string_view name = "log1p", aten = "aten::log1p", hlo = "stablehlo.log_plus_one";
  template <class M> M operator()(M x) const { return std::log1p(x); }
};
struct Expm1Op : floating_policy {
  static constexpr std::string_view name = "expm1", aten = "aten::expm1", hlo = "stablehlo.exponential_minus_one";
  template <class M> M operator()(M x) const { return std::expm1(x); }
};
struct SqrtOp : floating_policy {
  static constexpr std::string_view name = "sqrt", aten = "aten::sqrt", hlo = "stablehlo.sqrt";
  template <class M> M operator()(M x) const { return std::sqrt(x); }
  template <class V> TORCHTPU_SIMD V simd(V x) const { return vsqrt(x); }
};
struct RsqrtOp : floating_policy {
  static constexpr std::string_view name = "rsqrt", aten = "aten::rsqrt", hlo = "stablehlo.rsqrt";
  template <class M> M operator()(M x) const { return M(1) / std::sqrt(x); }
  template <class V> TORCHTPU_SIMD V simd(V x) const { return vrsqrt(x); }
};
struct SinOp : floating_policy {
  static constexpr std::string_view name = "sin", aten = "aten::sin", hlo = "stablehlo.sine";
  template <class M> M operator()(M x) const { return std::sin(x); }
};
struct CosOp : floating_policy {
  static constexpr std::string_view name = "cos", aten = "aten::cos", hlo = "stablehlo.cosine";
  template <class M> M operator()(M x) const { return std::cos(x); }
};
struct TanhOp : floating_policy {
  static constexpr std::string_view name = "tanh", aten = "aten::tanh", hlo = "stablehlo.tanh";
  template <class M> M operator()(M x) const { return std::tanh(x); }
  template <class V> TORCHTPU_SIMD V simd(V x) const { return vtanh(x); }
};
struct ErfOp : floating_policy {
  static constexpr std::string_view name = "erf", aten = "aten::erf", hlo = "chlo.erf";
  template <class M> M operator()(M x) const { return std::erf(x); }
  template <class V> TORCHTPU_SIMD V simd(V x) const { return verf(x); }
};
/// Logistic sigmoid 1 / (1 + exp(-x)).
struct SigmoidOp : floating_policy {
  static constexpr std::string_view name = "sigmoid", aten = "aten::sigmoid", hlo = "stablehlo.logistic";
  template <class M> M operator()(M x) const { return M(1) / (M(1) + std::exp(-x)); }
  template <class V> TORCHTPU_SIMD V simd(V x) const { return vsigmoid(x); }
};
/// max(x, 0); NaN stays NaN (as torch.relu).
struct ReluOp : same_type_policy {
  static constexpr std::string_view name = "relu", aten = "aten::relu", hlo = "";
  template <class M> constexpr M operator()(M x) const { return x < M(0) ? M(0) : x; }
  // StableHLO lowering (device/lower.hpp): operands already in the compute dtype, broadcast.
  template <class B, class V> V lower(B& b, const V* x) const {
    return b.maximum(x[0], b.constant(0, x[0].dtype, x[0].dims));
  }
  template <class V> TORCHTPU_SIMD V simd(V x) const { return vrelu(x); }
};
/// GELU. Exact form `x/2 · (1 + erf(x/√2))`; tanh form
/// `x/2 · (1 + tanh(√(2/π) · (x + 0.044715 x³)))`.
/// **Source:** Hendrycks & Gimpel, "Gaussian Error Linear Units", arXiv:1606.08415 (eq. and
/// its tanh approximation); PyTorch's `approximate='tanh'`.
struct GeluOp : floating_policy {
  static constexpr std::string_view name = "gelu", aten = "aten::gelu", hlo = "";
  bool tanh_approx = false;
  template <class M> M operator()(M x) const {
    if (tanh_approx) {
      const M k = M(0.7978845608028654);  // sqrt(2/pi)
      return M(0.5) * x * (M(1) + std::tanh(k * (x + M(0.044715) * x * x * x)));
    }
    return M(0.5) * x * (M(1) + std::erf(x * M(0.7071067811865476)));  // 1/sqrt(2)
  }
  // StableHLO lowering (device/lower.hpp): operands already in the compute dtype, broadcast.
  template <class B, class V> V lower(B& b, const V* x) const {
    auto c = [&](double v) { return b.constant(v, x[0].dtype, x[0].dims); };
    V inner;
    if (tanh_approx) {
      V cube = b.multiply(b.multiply(x[0], x[0]), x[0]);
      inner = b.tanh(b.multiply(c(0.7978845608028654), b.add(x[0], b.multiply(c(0.044715), cube))));
    } else {
      inner = b.erf(b.multiply(x[0], c(0.7071067811865476)));
    }
    return b.multiply(b.multiply(c(0.5), x[0]), b.add(c(1), inner));
  }
  template <class V> TORCHTPU_SIMD V simd(V x) const { return vgelu(x, tanh_approx); }
};
/// x · sigmoid(x) (a.k.a. swish).
struct SiluOp : floating_policy {
  static constexpr std::string_view name = "silu", aten = "aten::silu", hlo = "";
  template <class M> M operator()(M x) const { return x / (M(1) + std::exp(-x)); }
  // StableHLO lowering (device/lower.hpp): operands already in the compute dtype, broadcast.
  template <class B, class V> V lower(B& b, const V* x) const {
    return b.multiply(x[0], b.unary("logistic", x[0]));
  }
  template <class V> TORCHTPU_SIMD V simd(V x) const { return vsilu(x); }
};
/// Clamp to [lo, hi]; NaN stays NaN (torch.clamp / hardtanh).
struct ClampOp : same_type_policy {
  static constexpr std::string_view name = "clamp", aten = "aten::clamp", hlo = "stablehlo.clamp";
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  template <class M> constexpr M operator()(M x) const {
    if (detail::is_nan(x)) return x;
    M r = x;
    if (double(r) < lo) r = M(lo);
    if (double(r) > hi) r = M(hi);
    return r;
  }
  // StableHLO lowering (device/lower.hpp): operands already in the compute dtype, broadcast.
  template <class B, class V> V lower(B& b, const V* x) const {
    V r = x[0];
    if (lo > -std::numeric_limits<double>::infinity()) r = b.maximum(r, b.constant(lo, r.dtype, r.dims));
    if (hi < std::numeric_limits<double>::infinity()) r = b.minimum(r, b.constant(hi, r.dtype, r.dims));
    return r;
  }
  template <class V> TORCHTPU_SIMD V simd(V x) const { return vclamp(x, float(lo), float(hi)); }
};
/// x · relu6(x + 3) / 6. **Source:** Howard et al., "Searching for MobileNetV3", arXiv:1905.02244.
struct HardswishOp : floating_policy {
  static constexpr std::string_view name = "hardswish", aten = "aten::hardswish", hlo = "";
  template <class M> M operator()(M x) const {
    const M r = x + M(3);
    return x * (r < M(0) ? M(0) : (r > M(6) ? M(6) : r)) / M(6);
  }
  // StableHLO lowering (device/lower.hpp): operands already in the compute dtype, broadcast.
  template <class B, class V> V lower(B& b, const V* x) const {
    auto c = [&](double v) { return b.constant(v, x[0].dtype, x[0].dims); };
    return b.divide(b.multiply(x[0], b.clamp(c(0), b.add(x[0], c(3)), c(6))), c(6));
  }
  template <class V> TORCHTPU_SIMD V simd(V x) const { return vhardswish(x); }
};
/// relu6(x + 3) / 6. **Source:** arXiv:1905.02244.
struct HardsigmoidOp : floating_policy {
  static constexpr std::string_view name = "hardsigmoid", aten = "aten::hardsigmoid", hlo = "";
  template <class M> M operator()(M x) const {
    const M r = x + M(3);
    return (r < M(0) ? M(0) : (r > M(6) ? M(6) : r)) / M(6);
  }
  // StableHLO lowering (device/lower.hpp): operands already in the compute dtype, broadcast.
  template <class B, class V> V lower(B& b, const V* x) const {
    auto c = [&](double v) { return b.constant(v, x[0].dtype, x[0].dims); };
    return b.divide(b.clamp(c(0), b.add(x[0], c(3)), c(6)), c(6));
  }
  template <class V> TORCHTPU_SIMD V simd(V x) const { return vhardsigmoid(x); }
};

template <expression X> auto neg(const X& x) { return make_map(NegOp{}, x); }
template <expression X> auto abs(const X& x) { return make_map(AbsOp{}, x); }
template <expression X> auto exp(const X& x) { return make_map(ExpOp{}, x); }
template <expression X> auto log(const X& x) { return make_map(LogOp{}, x); }
template <expression X> auto log1p(const X& x) { return make_map(Log1pOp{}, x); }
template <expression X> auto expm1(const X& x) { return make_map(Expm1Op{}, x); }
template <expression X> auto sqrt(const X& x) { return make_map(SqrtOp{}, x); }
template <expression X> auto rsqrt(const X& x) { return make_map(RsqrtOp{}, x); }
template <expression X> auto sin(const X& x) { return make_map(SinOp{}, x); }
template <expression X> auto cos(const X& x) { return make_map(CosOp{}, x); }
template <expression X> auto tanh(const X& x) { return make_map(TanhOp{}, x); }
template <expression X> auto erf(const X& x) { return make_map(ErfOp{}, x); }
template <expression X> auto sigmoid(const X& x) { return make_map(SigmoidOp{}, x); }
template <expression X> auto relu(const X& x) { return make_map(ReluOp{}, x); }
/// `approximate` is "none" (erf form, default) or "tanh", as in torch.nn.functional.gelu.
/// **Errors:** ValueError for any other string.
template <expression X>
auto gelu(const X& x, std::string_view approximate = "none") {
  if (approximate != "none" && approximate != "tanh")
    throw ValueError("gelu: approximate must be \"none\" or \"tanh\", got \"" + std::string(approximate) + "\"");
  return make_map(GeluOp{{}, approximate == "tanh"}, x);
}
template <expression X> auto silu(const X& x) { return make_map(SiluOp{}, x); }
template <expression X> auto hardswish(const X& x) { return make_map(HardswishOp{}, x); }
template <expression X> auto hardsigmoid(const X& x) { return make_map(HardsigmoidOp{}, x); }
/// Clamp to [lo, hi] (either bound may be ±inf); lo > hi sets every element to hi, as in torch.
template <expression X>
auto clamp(const X& x, double lo, double hi) { return make_map(ClampOp{{}, lo, hi}, x); }
template <expression X>
auto clamp_min(const X& x, double lo) { return clamp(x, lo, std::numeric_limits<double>::infinity()); }
template <expression X>
auto clamp_max(const X& x, double hi) { return clamp(x, -std::numeric_limits<double>::infinity(), hi); }
/// hardtanh = clamp(x, min_val, max_val); ReLU6 is hardtanh(x, 0, 6).
template <expression X>
auto hardtanh(const X& x, double min_val = -1.0, double max_val = 1.0) { return clamp(x, min_val, max_val); }

}  // namespace torchtpu
