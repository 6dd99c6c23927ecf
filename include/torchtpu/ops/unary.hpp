// torchtpu/ops/unary.hpp — elementwise math functions and activations: neg, abs, exp, log,
// log1p, expm1, sqrt, rsqrt, sin, cos, tanh, erf, sigmoid, relu, gelu, silu, hardtanh,
// hardswish, hardsigmoid, clamp; floor, ceil, trunc, round, sign, isnan, isinf, isfinite.
#pragma once
#include <cmath>        // std::exp, std::log, std::tanh, std::erf, ...
#include <limits>       // std::numeric_limits
#include <string_view>  // std::string_view

#include "traits.hpp"  // make_map, policies
#include "../fuse/vecmath.hpp"  // vector forms used by the `simd` members

namespace torchtpu {

/// Elementwise negation, `-x`.
struct NegOp : same_type_policy {
  ///@{
  /// Names: `neg`, TorchScript `aten::neg`, StableHLO `stablehlo.negate`.
  static constexpr std::string_view name = "neg", aten = "aten::neg", hlo = "stablehlo.negate";
  ///@}
  /// CPU kernel: the op on one value of the compute type.
  template <class M> constexpr M operator()(M x) const { return detail::wrap_neg(x); }  // neg(MIN) = MIN
  /// Vector form of `operator()` for the CPU engine (fuse/vecmath.hpp).
  template <class V> TORCHTPU_VEC V simd(V x) const { return -x; }
};
/// Elementwise square, `x * x` (torch.square). Integers wrap as their multiplication does; a
/// bool stays bool (x·x = x; torch promotes bool to int64, with the same 0/1 values).
struct SquareOp : same_type_policy {
  ///@{
  /// Names: `square`, TorchScript `aten::square`, StableHLO `stablehlo.multiply` (x, x).
  static constexpr std::string_view name = "square", aten = "aten::square", hlo = "stablehlo.multiply";
  ///@}
  /// CPU kernel: the op on one value of the compute type.
  template <class M> constexpr M operator()(M x) const {
    if constexpr (std::is_same_v<M, bool>) return x;
    else if constexpr (std::is_integral_v<M>) return detail::wrap_mul(x, x);
    else return M(x * x);
  }
  /// Vector form of `operator()` for the CPU engine (fuse/vecmath.hpp).
  template <class V> TORCHTPU_VEC V simd(V x) const { return x * x; }
  /// StableHLO lowering hook: `multiply(x, x)`.
  template <class B, class V> V lower(B& b, const V* x) const { return b.multiply(x[0], x[0]); }
};
/// Elementwise absolute value (unsigned values pass through).
struct AbsOp : same_type_policy {
  ///@{
  /// Names: `abs`, TorchScript `aten::abs`, StableHLO `stablehlo.abs`.
  static constexpr std::string_view name = "abs", aten = "aten::abs", hlo = "stablehlo.abs";
  ///@}
  /// CPU kernel: the op on one value of the compute type.
  template <class M> constexpr M operator()(M x) const {
    if constexpr (std::is_unsigned_v<M>) return x;
    else return x < M(0) ? detail::wrap_neg(x) : x;  // abs(MIN) = MIN, as torch
  }
  /// Vector form of `operator()` for the CPU engine (fuse/vecmath.hpp).
  template <class V> TORCHTPU_VEC V simd(V x) const { return vabs(x); }
};
/// Elementwise e^x; integers and bool compute in float32.
struct ExpOp : floating_policy {
  ///@{
  /// Names: `exp`, TorchScript `aten::exp`, StableHLO `stablehlo.exponential`.
  static constexpr std::string_view name = "exp", aten = "aten::exp", hlo = "stablehlo.exponential";
  ///@}
  /// Per-element cost in additions (fuse/: region_cost sizes the threads' grain).
  static constexpr int cost = 8;  // per element, in additions (fuse: region_cost)
  /// CPU kernel: the op on one value of the compute type.
  template <class M> M operator()(M x) const { return std::exp(x); }
  /// Vector form of `operator()` for the CPU engine (fuse/vecmath.hpp).
  template <class V> TORCHTPU_VEC V simd(V x) const { return vexp(x); }
};
/// Elementwise natural logarithm; integers and bool compute in float32.
struct LogOp : floating_policy {
  ///@{
  /// Names: `log`, TorchScript `aten::log`, StableHLO `stablehlo.log`.
  static constexpr std::string_view name = "log", aten = "aten::log", hlo = "stablehlo.log";
  ///@}
  /// Per-element cost in additions (fuse/: region_cost sizes the threads' grain).
  static constexpr int cost = 8;  // per element, in additions (fuse: region_cost)
  /// CPU kernel: the op on one value of the compute type.
  template <class M> M operator()(M x) const { return std::log(x); }
  /// Vector form of `operator()` for the CPU engine (fuse/vecmath.hpp).
  template <class V> TORCHTPU_VEC V simd(V x) const { return vlog(x); }
};
/// Elementwise log(1 + x), accurate for small x.
struct Log1pOp : floating_policy {
  ///@{
  /// Names: `log1p`, TorchScript `aten::log1p`, StableHLO `stablehlo.log_plus_one`.
  static constexpr std::string_view name = "log1p", aten = "aten::log1p", hlo = "stablehlo.log_plus_one";
  ///@}
  /// Per-element cost in additions (fuse/: region_cost sizes the threads' grain).
  static constexpr int cost = 8;  // per element, in additions (fuse: region_cost)
  /// CPU kernel: the op on one value of the compute type.
  template <class M> M operator()(M x) const { return std::log1p(x); }
};
/// Elementwise e^x - 1, accurate for small x.
struct Expm1Op : floating_policy {
  ///@{
  /// Names: `expm1`, TorchScript `aten::expm1`, StableHLO `stablehlo.exponential_minus_one`.
  static constexpr std::string_view name = "expm1", aten = "aten::expm1", hlo = "stablehlo.exponential_minus_one";
  ///@}
  /// Per-element cost in additions (fuse/: region_cost sizes the threads' grain).
  static constexpr int cost = 8;  // per element, in additions (fuse: region_cost)
  /// CPU kernel: the op on one value of the compute type.
  template <class M> M operator()(M x) const { return std::expm1(x); }
};
/// Elementwise square root (NaN for negative x).
struct SqrtOp : floating_policy {
  ///@{
  /// Names: `sqrt`, TorchScript `aten::sqrt`, StableHLO `stablehlo.sqrt`.
  static constexpr std::string_view name = "sqrt", aten = "aten::sqrt", hlo = "stablehlo.sqrt";
  ///@}
  /// CPU kernel: the op on one value of the compute type.
  template <class M> M operator()(M x) const { return std::sqrt(x); }
  /// Vector form of `operator()` for the CPU engine (fuse/vecmath.hpp).
  template <class V> TORCHTPU_VEC V simd(V x) const { return vsqrt(x); }
};
/// Elementwise 1 / sqrt(x).
struct RsqrtOp : floating_policy {
  ///@{
  /// Names: `rsqrt`, TorchScript `aten::rsqrt`, StableHLO `stablehlo.rsqrt`.
  static constexpr std::string_view name = "rsqrt", aten = "aten::rsqrt", hlo = "stablehlo.rsqrt";
  ///@}
  /// CPU kernel: the op on one value of the compute type.
  template <class M> M operator()(M x) const { return M(1) / std::sqrt(x); }
  /// Vector form of `operator()` for the CPU engine (fuse/vecmath.hpp).
  template <class V> TORCHTPU_VEC V simd(V x) const { return vrsqrt(x); }
};
/// Elementwise 1 / x (x = 0 gives ±inf, as IEEE division); integers and bool compute in float32.
struct ReciprocalOp : floating_policy {
  ///@{
  /// Names: `reciprocal`, TorchScript `aten::reciprocal`, StableHLO `stablehlo.divide` (1, x).
  static constexpr std::string_view name = "reciprocal", aten = "aten::reciprocal", hlo = "stablehlo.divide";
  ///@}
  /// CPU kernel: the op on one value of the compute type.
  template <class M> M operator()(M x) const { return M(1) / x; }
  /// StableHLO lowering hook: `divide(1, x)`.
  template <class B, class V> V lower(B& b, const V* x) const {
    return b.divide(b.constant(1, x[0].dtype, x[0].dims), x[0]);
  }
  /// Vector form of `operator()` for the CPU engine (fuse/vecmath.hpp).
  template <class V> TORCHTPU_VEC V simd(V x) const { return V::set1(1.0f) / x; }
};
/// Elementwise arccosine in radians, in [0, π]; NaN outside [-1, 1]. Integers and bool compute
/// in float32.
struct AcosOp : floating_policy {
  ///@{
  /// Names: `acos`, TorchScript `aten::acos`, StableHLO `stablehlo.atan2` (√(1 − x²), x): the
  /// identity acos x = atan2(√(1 − x²), x), which is NaN for |x| > 1 as acos is.
  static constexpr std::string_view name = "acos", aten = "aten::acos", hlo = "stablehlo.atan2";
  ///@}
  /// CPU kernel: the op on one value of the compute type.
  template <class M> M operator()(M x) const { return std::acos(x); }
  /// StableHLO lowering hook: `atan2(sqrt((1 - x)(1 + x)), x)` ((1 − x)(1 + x) keeps precision near ±1).
  template <class B, class V> V lower(B& b, const V* x) const {
    const V one = b.constant(1, x[0].dtype, x[0].dims);
    return b.binary("atan2", b.unary("sqrt", b.multiply(b.subtract(one, x[0]), b.add(one, x[0]))), x[0]);
  }
};
/// Elementwise sine (radians).
struct SinOp : floating_policy {
  ///@{
  /// Names: `sin`, TorchScript `aten::sin`, StableHLO `stablehlo.sine`.
  static constexpr std::string_view name = "sin", aten = "aten::sin", hlo = "stablehlo.sine";
  ///@}
  /// Per-element cost in additions (fuse/: region_cost sizes the threads' grain).
  static constexpr int cost = 8;  // per element, in additions (fuse: region_cost)
  /// CPU kernel: the op on one value of the compute type.
  template <class M> M operator()(M x) const { return std::sin(x); }
};
/// Elementwise cosine (radians).
struct CosOp : floating_policy {
  ///@{
  /// Names: `cos`, TorchScript `aten::cos`, StableHLO `stablehlo.cosine`.
  static constexpr std::string_view name = "cos", aten = "aten::cos", hlo = "stablehlo.cosine";
  ///@}
  /// Per-element cost in additions (fuse/: region_cost sizes the threads' grain).
  static constexpr int cost = 8;  // per element, in additions (fuse: region_cost)
  /// CPU kernel: the op on one value of the compute type.
  template <class M> M operator()(M x) const { return std::cos(x); }
};
/// Elementwise hyperbolic tangent.
struct TanhOp : floating_policy {
  ///@{
  /// Names: `tanh`, TorchScript `aten::tanh`, StableHLO `stablehlo.tanh`.
  static constexpr std::string_view name = "tanh", aten = "aten::tanh", hlo = "stablehlo.tanh";
  ///@}
  /// Per-element cost in additions (fuse/: region_cost sizes the threads' grain).
  static constexpr int cost = 8;  // per element, in additions (fuse: region_cost)
  /// CPU kernel: the op on one value of the compute type.
  template <class M> M operator()(M x) const { return std::tanh(x); }
  /// Vector form of `operator()` for the CPU engine (fuse/vecmath.hpp).
  template <class V> TORCHTPU_VEC V simd(V x) const { return vtanh(x); }
};
/// Elementwise Gauss error function.
struct ErfOp : floating_policy {
  ///@{
  /// Names: `erf`, TorchScript `aten::erf`, StableHLO `chlo.erf`.
  static constexpr std::string_view name = "erf", aten = "aten::erf", hlo = "chlo.erf";
  ///@}
  /// Per-element cost in additions (fuse/: region_cost sizes the threads' grain).
  static constexpr int cost = 8;  // per element, in additions (fuse: region_cost)
  /// CPU kernel: the op on one value of the compute type.
  template <class M> M operator()(M x) const { return std::erf(x); }
  /// Vector form of `operator()` for the CPU engine (fuse/vecmath.hpp).
  template <class V> TORCHTPU_VEC V simd(V x) const { return verf(x); }
};
/// Logistic sigmoid 1 / (1 + exp(-x)).
struct SigmoidOp : floating_policy {
  ///@{
  /// Names: `sigmoid`, TorchScript `aten::sigmoid`, StableHLO `stablehlo.logistic`.
  static constexpr std::string_view name = "sigmoid", aten = "aten::sigmoid", hlo = "stablehlo.logistic";
  ///@}
  /// Per-element cost in additions (fuse/: region_cost sizes the threads' grain).
  static constexpr int cost = 8;  // per element, in additions (fuse: region_cost)
  /// CPU kernel: the op on one value of the compute type.
  template <class M> M operator()(M x) const { return M(1) / (M(1) + std::exp(-x)); }
  /// Vector form of `operator()` for the CPU engine (fuse/vecmath.hpp).
  template <class V> TORCHTPU_VEC V simd(V x) const { return vsigmoid(x); }
};
/// max(x, 0); NaN stays NaN (as torch.relu).
struct ReluOp : same_type_policy {
  ///@{
  /// Names: `relu`, TorchScript `aten::relu`, StableHLO ``.
  static constexpr std::string_view name = "relu", aten = "aten::relu", hlo = "";
  ///@}
  /// CPU kernel: the op on one value of the compute type.
  template <class M> constexpr M operator()(M x) const { return x < M(0) ? M(0) : x; }
  // StableHLO lowering (device/lower.hpp): operands already in the compute dtype, broadcast.
  /// StableHLO lowering hook (device/lower.hpp): emits the op on operands `x` into builder `b`.
  template <class B, class V> V lower(B& b, const V* x) const {
    return b.maximum(x[0], b.constant(0, x[0].dtype, x[0].dims));
  }
  /// Vector form of `operator()` for the CPU engine (fuse/vecmath.hpp).
  template <class V> TORCHTPU_VEC V simd(V x) const { return vrelu(x); }
};
/// GELU. Exact form `x/2 · (1 + erf(x/√2))`; tanh form
/// `x/2 · (1 + tanh(√(2/π) · (x + 0.044715 x³)))`.
/// **Source:** Hendrycks & Gimpel, "Gaussian Error Linear Units", arXiv:1606.08415 (eq. and
/// its tanh approximation); PyTorch's `approximate='tanh'`.
struct GeluOp : floating_policy {
  ///@{
  /// Names: `gelu`, TorchScript `aten::gelu`, StableHLO ``.
  static constexpr std::string_view name = "gelu", aten = "aten::gelu", hlo = "";
  ///@}
  /// Per-element cost in additions (fuse/: region_cost sizes the threads' grain).
  static constexpr int cost = 8;  // per element, in additions (fuse: region_cost)
  /// True for the tanh approximation (`approximate="tanh"`), false for the erf form.
  bool tanh_approx = false;
  /// CPU kernel: the op on one value of the compute type.
  template <class M> M operator()(M x) const {
    if (tanh_approx) {
      const M k = M(0.7978845608028654);  // sqrt(2/pi)
      return M(0.5) * x * (M(1) + std::tanh(k * (x + M(0.044715) * x * x * x)));
    }
    return M(0.5) * x * (M(1) + std::erf(x * M(0.7071067811865476)));  // 1/sqrt(2)
  }
  // StableHLO lowering (device/lower.hpp): operands already in the compute dtype, broadcast.
  /// StableHLO lowering hook (device/lower.hpp): emits the op on operands `x` into builder `b`.
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
  /// Vector form of `operator()` for the CPU engine (fuse/vecmath.hpp).
  template <class V> TORCHTPU_VEC V simd(V x) const { return vgelu(x, tanh_approx); }
};
/// x · sigmoid(x) (a.k.a. swish).
struct SiluOp : floating_policy {
  ///@{
  /// Names: `silu`, TorchScript `aten::silu`, StableHLO ``.
  static constexpr std::string_view name = "silu", aten = "aten::silu", hlo = "";
  ///@}
  /// Per-element cost in additions (fuse/: region_cost sizes the threads' grain).
  static constexpr int cost = 8;  // per element, in additions (fuse: region_cost)
  /// CPU kernel: the op on one value of the compute type.
  template <class M> M operator()(M x) const { return x / (M(1) + std::exp(-x)); }
  // StableHLO lowering (device/lower.hpp): operands already in the compute dtype, broadcast.
  /// StableHLO lowering hook (device/lower.hpp): emits the op on operands `x` into builder `b`.
  template <class B, class V> V lower(B& b, const V* x) const {
    return b.multiply(x[0], b.unary("logistic", x[0]));
  }
  /// Vector form of `operator()` for the CPU engine (fuse/vecmath.hpp).
  template <class V> TORCHTPU_VEC V simd(V x) const { return vsilu(x); }
};
/// Clamp to [lo, hi]; NaN stays NaN (torch.clamp / hardtanh).
struct ClampOp : same_type_policy {
  ///@{
  /// Names: `clamp`, TorchScript `aten::clamp`, StableHLO `stablehlo.clamp`.
  static constexpr std::string_view name = "clamp", aten = "aten::clamp", hlo = "stablehlo.clamp";
  ///@}
  /// Lower bound (-inf: none).
  double lo = -std::numeric_limits<double>::infinity();
  /// Upper bound (+inf: none).
  double hi = std::numeric_limits<double>::infinity();
  /// A bound in M; for integers clipped to M's range first (no undefined float -> int cast).
  template <class M> static constexpr M bound(double v) {
    if constexpr (std::is_integral_v<M> && !std::same_as<M, bool>) {
      using L = std::numeric_limits<M>;
      if (v >= double(L::max())) return L::max();
      if (v <= double(L::min())) return L::min();
      return static_cast<M>(v);
    } else {
      return convert<M>(v);
    }
  }
  /// CPU kernel: the op on one value of the compute type.
  template <class M> constexpr M operator()(M x) const {
    if (detail::is_nan(x)) return x;
    M r = x;
    if (double(r) < lo) r = bound<M>(lo);
    if (double(r) > hi) r = bound<M>(hi);
    return r;
  }
  // StableHLO lowering (device/lower.hpp): operands already in the compute dtype, broadcast.
  /// StableHLO lowering hook (device/lower.hpp): emits the op on operands `x` into builder `b`.
  template <class B, class V> V lower(B& b, const V* x) const {
    V r = x[0];
    if (lo > -std::numeric_limits<double>::infinity()) r = b.maximum(r, b.constant(lo, r.dtype, r.dims));
    if (hi < std::numeric_limits<double>::infinity()) r = b.minimum(r, b.constant(hi, r.dtype, r.dims));
    return r;
  }
  /// Vector form of `operator()` for the CPU engine (fuse/vecmath.hpp).
  template <class V> TORCHTPU_VEC V simd(V x) const { return vclamp(x, float(lo), float(hi)); }
};
/// x · relu6(x + 3) / 6. **Source:** Howard et al., "Searching for MobileNetV3", arXiv:1905.02244.
struct HardswishOp : floating_policy {
  ///@{
  /// Names: `hardswish`, TorchScript `aten::hardswish`, StableHLO ``.
  static constexpr std::string_view name = "hardswish", aten = "aten::hardswish", hlo = "";
  ///@}
  /// CPU kernel: the op on one value of the compute type.
  template <class M> M operator()(M x) const {
    const M r = x + M(3);
    return x * (r < M(0) ? M(0) : (r > M(6) ? M(6) : r)) / M(6);
  }
  // StableHLO lowering (device/lower.hpp): operands already in the compute dtype, broadcast.
  /// StableHLO lowering hook (device/lower.hpp): emits the op on operands `x` into builder `b`.
  template <class B, class V> V lower(B& b, const V* x) const {
    auto c = [&](double v) { return b.constant(v, x[0].dtype, x[0].dims); };
    return b.divide(b.multiply(x[0], b.clamp(c(0), b.add(x[0], c(3)), c(6))), c(6));
  }
  /// Vector form of `operator()` for the CPU engine (fuse/vecmath.hpp).
  template <class V> TORCHTPU_VEC V simd(V x) const { return vhardswish(x); }
};
/// relu6(x + 3) / 6. **Source:** arXiv:1905.02244.
struct HardsigmoidOp : floating_policy {
  ///@{
  /// Names: `hardsigmoid`, TorchScript `aten::hardsigmoid`, StableHLO ``.
  static constexpr std::string_view name = "hardsigmoid", aten = "aten::hardsigmoid", hlo = "";
  ///@}
  /// CPU kernel: the op on one value of the compute type.
  template <class M> M operator()(M x) const {
    const M r = x + M(3);
    return (r < M(0) ? M(0) : (r > M(6) ? M(6) : r)) / M(6);
  }
  // StableHLO lowering (device/lower.hpp): operands already in the compute dtype, broadcast.
  /// StableHLO lowering hook (device/lower.hpp): emits the op on operands `x` into builder `b`.
  template <class B, class V> V lower(B& b, const V* x) const {
    auto c = [&](double v) { return b.constant(v, x[0].dtype, x[0].dims); };
    return b.divide(b.clamp(c(0), b.add(x[0], c(3)), c(6)), c(6));
  }
  /// Vector form of `operator()` for the CPU engine (fuse/vecmath.hpp).
  template <class V> TORCHTPU_VEC V simd(V x) const { return vhardsigmoid(x); }
};

/// Shared parts of floor, ceil, trunc and round: integers pass through unchanged (torch; bool
/// is refused at compile time, as torch refuses it); floats round by `Mode`.
template <int Mode>
struct RoundingOp : same_type_policy {
  /// CPU kernel: the op on one value of the compute type.
  template <class M> M operator()(M x) const {
    if constexpr (std::is_integral_v<M>) {
      return x;
    } else {
      if constexpr (Mode == 0) return std::floor(x);
      else if constexpr (Mode == 1) return std::ceil(x);
      else if constexpr (Mode == 2) return std::trunc(x);
      else return std::nearbyint(x);  // half to even (the default rounding mode), as torch.round
    }
  }
  /// StableHLO lowering hook: floor / ceil / round_nearest_even; trunc as the floor of |x| with
  /// x's sign (select); integers unchanged.
  template <class B, class V> V lower(B& b, const V* x) const {
    if (!is_floating(x[0].dtype)) return x[0];
    if constexpr (Mode == 0) return b.unary("floor", x[0]);
    else if constexpr (Mode == 1) return b.unary("ceil", x[0]);
    else if constexpr (Mode == 3) return b.unary("round_nearest_even", x[0]);
    else return b.select(b.compare("LT", x[0], b.constant(0.0, x[0].dtype, x[0].dims)), b.unary("ceil", x[0]),
                         b.unary("floor", x[0]));
  }
};
/// Elementwise floor (largest integer <= x); integers unchanged.
struct FloorOp : RoundingOp<0> {
  ///@{
  /// Names: `floor`, TorchScript `aten::floor`, StableHLO `stablehlo.floor` (lowered by the hook).
  static constexpr std::string_view name = "floor", aten = "aten::floor", hlo = "";
  ///@}
};
/// Elementwise ceil (smallest integer >= x); integers unchanged.
struct CeilOp : RoundingOp<1> {
  ///@{
  /// Names: `ceil`, TorchScript `aten::ceil`, StableHLO `stablehlo.ceil` (lowered by the hook).
  static constexpr std::string_view name = "ceil", aten = "aten::ceil", hlo = "";
  ///@}
};
/// Elementwise truncation toward zero (-1.5 → -1, keeping -0.0); integers unchanged.
struct TruncOp : RoundingOp<2> {
  ///@{
  /// Names: `trunc`, TorchScript `aten::trunc` (lowered by the hook: floor or ceil by sign).
  static constexpr std::string_view name = "trunc", aten = "aten::trunc", hlo = "";
  ///@}
};
/// Elementwise rounding to the nearest integer, halves to even (0.5 → 0, 1.5 → 2, -2.5 → -2),
/// as torch.round (decimals=0); integers unchanged.
struct RoundOp : RoundingOp<3> {
  ///@{
  /// Names: `round`, TorchScript `aten::round`, StableHLO `stablehlo.round_nearest_even`.
  static constexpr std::string_view name = "round", aten = "aten::round", hlo = "";
  ///@}
};
/// Elementwise sign: 1, 0 or -1 in x's dtype; NaN and ±0.0 give +0.0, as torch 1.13's
/// `(0 < x) - (x < 0)` (StableHLO's sign would keep NaN and -0.0); bool unchanged.
struct SignOp : same_type_policy {
  ///@{
  /// Names: `sign`, TorchScript `aten::sign` (lowered by the hook).
  static constexpr std::string_view name = "sign", aten = "aten::sign", hlo = "";
  ///@}
  /// CPU kernel: the op on one value of the compute type.
  template <class M> constexpr M operator()(M x) const {
    if constexpr (std::is_same_v<M, bool>) return x;
    else return static_cast<M>(static_cast<int>(M(0) < x) - static_cast<int>(x < M(0)));
  }
  /// StableHLO lowering hook: `convert(x > 0) - convert(x < 0)` (bool unchanged).
  template <class B, class V> V lower(B& b, const V* x) const {
    const ScalarType t = x[0].dtype;
    if (t == ScalarType::Bool) return x[0];
    const V zero = b.constant_int(0, t, x[0].dims);
    return b.subtract(b.convert(b.compare("GT", x[0], zero), t), b.convert(b.compare("LT", x[0], zero), t));
  }
};
/// Elementwise test for NaN (bool result; false for integers and bool).
struct IsnanOp : predicate_policy {
  ///@{
  /// Names: `isnan`, TorchScript `aten::isnan` (lowered by the hook: `x != x`).
  static constexpr std::string_view name = "isnan", aten = "aten::isnan", hlo = "";
  ///@}
  /// CPU kernel: the op on one value of the compute type.
  template <class M> constexpr bool operator()(M x) const { return x != x; }  // NOLINT: the NaN test
  /// StableHLO lowering hook: `x != x`.
  template <class B, class V> V lower(B& b, const V* x) const { return b.compare("NE", x[0], x[0]); }
};
/// Elementwise test for ±infinity (bool result; false for integers and bool).
struct IsinfOp : predicate_policy {
  ///@{
  /// Names: `isinf`, TorchScript `aten::isinf` (lowered by the hook: `|x| == inf`).
  static constexpr std::string_view name = "isinf", aten = "aten::isinf", hlo = "";
  ///@}
  /// CPU kernel: the op on one value of the compute type.
  template <class M> constexpr bool operator()(M x) const {
    if constexpr (std::is_integral_v<M>) return false;
    else return x == std::numeric_limits<M>::infinity() || x == -std::numeric_limits<M>::infinity();
  }
  /// StableHLO lowering hook: `|x| == inf` (floats), false otherwise.
  template <class B, class V> V lower(B& b, const V* x) const {
    if (!is_floating(x[0].dtype)) return b.constant_int(0, ScalarType::Bool, x[0].dims);
    return b.compare("EQ", b.unary("abs", x[0]), b.constant(std::numeric_limits<double>::infinity(), x[0].dtype, x[0].dims));
  }
};
/// Elementwise test for a finite value (not NaN, not ±inf; true for integers and bool).
struct IsfiniteOp : predicate_policy {
  ///@{
  /// Names: `isfinite`, TorchScript `aten::isfinite` (lowered by the hook).
  static constexpr std::string_view name = "isfinite", aten = "aten::isfinite", hlo = "";
  ///@}
  /// CPU kernel: the op on one value of the compute type.
  template <class M> constexpr bool operator()(M x) const {
    if constexpr (std::is_integral_v<M>) return true;
    else return x - x == M(0);  // NaN and ±inf give NaN
  }
  /// StableHLO lowering hook: `x - x == 0` (floats: NaN for NaN and ±inf), true otherwise.
  template <class B, class V> V lower(B& b, const V* x) const {
    if (!is_floating(x[0].dtype)) return b.constant_int(1, ScalarType::Bool, x[0].dims);
    return b.compare("EQ", b.subtract(x[0], x[0]), b.constant(0.0, x[0].dtype, x[0].dims));
  }
};

template <class X> requires expression<bare<X>> auto neg(X&& x) { return make_map(NegOp{}, std::forward<X>(x)); }
template <class X> requires expression<bare<X>> auto abs(X&& x) { return make_map(AbsOp{}, std::forward<X>(x)); }
template <class X> requires expression<bare<X>> auto exp(X&& x) { return make_map(ExpOp{}, std::forward<X>(x)); }
template <class X> requires expression<bare<X>> auto square(X&& x) { return make_map(SquareOp{}, std::forward<X>(x)); }
template <class X> requires expression<bare<X>> auto log(X&& x) { return make_map(LogOp{}, std::forward<X>(x)); }
template <class X> requires expression<bare<X>> auto log1p(X&& x) { return make_map(Log1pOp{}, std::forward<X>(x)); }
template <class X> requires expression<bare<X>> auto expm1(X&& x) { return make_map(Expm1Op{}, std::forward<X>(x)); }
template <class X> requires expression<bare<X>> auto sqrt(X&& x) { return make_map(SqrtOp{}, std::forward<X>(x)); }
template <class X> requires expression<bare<X>> auto rsqrt(X&& x) { return make_map(RsqrtOp{}, std::forward<X>(x)); }
template <class X> requires expression<bare<X>> auto reciprocal(X&& x) { return make_map(ReciprocalOp{}, std::forward<X>(x)); }
template <class X> requires expression<bare<X>> auto acos(X&& x) { return make_map(AcosOp{}, std::forward<X>(x)); }
template <class X> requires expression<bare<X>> auto sin(X&& x) { return make_map(SinOp{}, std::forward<X>(x)); }
template <class X> requires expression<bare<X>> auto cos(X&& x) { return make_map(CosOp{}, std::forward<X>(x)); }
template <class X> requires expression<bare<X>> auto tanh(X&& x) { return make_map(TanhOp{}, std::forward<X>(x)); }
template <class X> requires expression<bare<X>> auto erf(X&& x) { return make_map(ErfOp{}, std::forward<X>(x)); }
template <class X> requires expression<bare<X>> auto sigmoid(X&& x) { return make_map(SigmoidOp{}, std::forward<X>(x)); }
template <class X> requires expression<bare<X>> auto relu(X&& x) { return make_map(ReluOp{}, std::forward<X>(x)); }
/// `approximate` is "none" (erf form, default) or "tanh", as in torch.nn.functional.gelu.
/// **Errors:** ValueError for any other string.
template <class X> requires expression<bare<X>>
auto gelu(X&& x, std::string_view approximate = "none") {
  if (approximate != "none" && approximate != "tanh")
    throw ValueError("gelu: approximate must be \"none\" or \"tanh\", got \"" + std::string(approximate) + "\"");
  return make_map(GeluOp{{}, approximate == "tanh"}, std::forward<X>(x));
}
template <class X> requires expression<bare<X>> auto silu(X&& x) { return make_map(SiluOp{}, std::forward<X>(x)); }
template <class X> requires expression<bare<X>> auto hardswish(X&& x) { return make_map(HardswishOp{}, std::forward<X>(x)); }
template <class X> requires expression<bare<X>> auto hardsigmoid(X&& x) { return make_map(HardsigmoidOp{}, std::forward<X>(x)); }
/// Clamp to [lo, hi] (either bound may be ±inf); lo > hi sets every element to hi, as in torch.
template <class X> requires expression<bare<X>>
auto clamp(X&& x, double lo, double hi) { return make_map(ClampOp{{}, lo, hi}, std::forward<X>(x)); }
template <class X> requires expression<bare<X>>
auto clamp_min(X&& x, double lo) { return clamp(std::forward<X>(x), lo, std::numeric_limits<double>::infinity()); }
template <class X> requires expression<bare<X>>
auto clamp_max(X&& x, double hi) { return clamp(std::forward<X>(x), -std::numeric_limits<double>::infinity(), hi); }
/// hardtanh = clamp(x, min_val, max_val); ReLU6 is hardtanh(x, 0, 6).
template <class X> requires expression<bare<X>>
auto hardtanh(X&& x, double min_val = -1.0, double max_val = 1.0) { return clamp(std::forward<X>(x), min_val, max_val); }

/// Rounding functions (torch.floor, ceil, trunc, round with halves to even); integers pass
/// through; bool operands do not compile (torch refuses them too).
template <class X> requires expression<bare<X>> && (!std::same_as<typename bare<X>::value_type, bool>)
auto floor(X&& x) { return make_map(FloorOp{}, std::forward<X>(x)); }
template <class X> requires expression<bare<X>> && (!std::same_as<typename bare<X>::value_type, bool>)
auto ceil(X&& x) { return make_map(CeilOp{}, std::forward<X>(x)); }
template <class X> requires expression<bare<X>> && (!std::same_as<typename bare<X>::value_type, bool>)
auto trunc(X&& x) { return make_map(TruncOp{}, std::forward<X>(x)); }
template <class X> requires expression<bare<X>> && (!std::same_as<typename bare<X>::value_type, bool>)
auto round(X&& x) { return make_map(RoundOp{}, std::forward<X>(x)); }
/// torch.sign: -1, 0 or 1 in x's dtype (NaN → 0).
template <class X> requires expression<bare<X>> auto sign(X&& x) { return make_map(SignOp{}, std::forward<X>(x)); }
/// torch.isnan / isinf / isfinite: bool tensors.
template <class X> requires expression<bare<X>> auto isnan(X&& x) { return make_map(IsnanOp{}, std::forward<X>(x)); }
template <class X> requires expression<bare<X>> auto isinf(X&& x) { return make_map(IsinfOp{}, std::forward<X>(x)); }
template <class X> requires expression<bare<X>> auto isfinite(X&& x) { return make_map(IsfiniteOp{}, std::forward<X>(x)); }

}  // namespace torchtpu
