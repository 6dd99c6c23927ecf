// torchtpu/ops/norm.hpp — operator library, normalization family: layer_norm, rms_norm,
// group_norm, instance_norm, batch_norm. Each op is one definition (ops/library.hpp) that the
// typed API (`torchtpu::layer_norm(Tensor<T>, ...)`), the run-time API (`AnyTensor`), the eager
// PJRT devices and model graphs (`aten::layer_norm`, ...) all call. Every op is the same
// computation over `x` viewed as `[outer, channels, inner]` (detail::NormPlan): statistics per
// group of channels, then `(x - mean) * rsqrt(var + eps) * weight[c] + bias[c]`; one cpu kernel
// and one lowering serve all five. Tests: tests/ops/test_norm.cpp (cpu, every dtype),
// tests/device_ops/test_device_norm.cpp (PJRT devices), tests/jit (models).
//
// Optional tensor operands (`Tensor? weight=None`). These ops never receive an undefined
// operand: an absent optional tensor is left out of the operand list on every path (cpu, eager
// PJRT devices, whole-graph compile), and the op's `Args::present` records which optional
// operands are there (bit `i` for the schema's `i`-th optional tensor). `args` reads the bits
// from the schema (`is_none`), `tensors` (detail::present_tensors) drops the absent ones, and
// the typed functions below do both by hand. The whole-graph lowering (jit/lower.hpp) passes
// present operands only, and its ArgReader reads absent ones as None.
//
// Not in the umbrella header (torchtpu.hpp): include <torchtpu/ops/norm.hpp>.
#pragma once
#include <bit>          // std::popcount
#include <cfloat>       // DBL_EPSILON, FLT_EPSILON
#include <cmath>        // std::sqrt
#include <cstdint>      // int64_t, uint8_t
#include <optional>     // std::optional
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <type_traits>  // std::remove_cvref_t
#include <vector>       // std::vector

#include "library.hpp"  // TensorMeta, DtypeSet, ops::call, call_typed

namespace torchtpu {
namespace ops {

namespace detail {

/// The operands an op with optional tensors receives: the reader's tensors, absent optional
/// ones left out (see the file's header).
template <class R>
std::vector<AnyTensor> present_tensors(const R& r) {
  std::vector<AnyTensor> t;
  for (AnyTensor& x : r.tensors())
    if (x.defined()) t.push_back(std::move(x));
  return t;
}

/// `normalized_shape` as Dims. **Errors:** ValueError naming `op` for more than `max_rank` values.
inline Dims norm_shape(const std::vector<int64_t>& v, std::string_view op) {
  if (v.size() > static_cast<size_t>(max_rank))
    throw ValueError(std::string(op) + ": normalized_shape has " + std::to_string(v.size()) + " values (at most " +
                     std::to_string(max_rank) + ")");
  return Dims(v.begin(), v.end());
}

/// Bit `bit` set in `present` when `!r.is_none(name)`.
template <class R>
uint8_t present_bit(const R& r, std::string_view name, int bit) {
  return r.is_none(name) ? uint8_t(0) : static_cast<uint8_t>(1u << bit);
}

/// The index in the operand list of optional operand `bit` (operand 0 is the input), or -1
/// when it is absent.
constexpr int slot(uint8_t present, int bit) {
  if (!((present >> bit) & 1u)) return -1;
  return 1 + std::popcount(static_cast<unsigned>(present & ((1u << bit) - 1u)));
}

/// The optional operands of a normalization op, by role (schema order).
enum NormOperand : int { kWeight = 0, kBias = 1, kMean = 2, kVar = 3 };

/// How a normalization reads its input: `x` as `[outer, channels, inner]`, statistics per
/// group of `channels / groups` channels, for each `outer` index (`per_sample`) or over all of
/// them (batch_norm in training); or the per-channel statistics given as operands (`given`:
/// running_mean, running_var). `center` false: no mean (RMS). Weight and bias are per channel.
struct NormPlan {
  int64_t outer = 1, channels = 1, inner = 1;  ///< the view of `x`
  int64_t groups = 1;                          ///< statistics groups along channels
  bool per_sample = true;                      ///< statistics per outer index
  bool center = true;                          ///< subtract the mean (false: RMS norm)
  bool given = false;                          ///< statistics from operands (per channel)

  /// `[N, C, *]` with `N` = dim 0, `C` = dim 1, `*` the rest (group, instance, batch norm).
  static NormPlan channels_first(const Dims& x) {
    NormPlan p;
    p.outer = x[0];
    p.channels = x[1];
    for (int d = 2; d < x.size(); ++d) p.inner *= x[d];
    return p;
  }
  /// The trailing `k` dims normalized together (layer_norm, rms_norm): `[rows, n, 1]`.
  static NormPlan trailing(const Dims& x, int k) {
    NormPlan p;
    for (int d = 0; d < x.size(); ++d) (d < x.size() - k ? p.outer : p.channels) *= x[d];
    return p;
  }
  /// The number of elements in one statistics group.
  int64_t count() const { return (per_sample ? 1 : outer) * (channels / groups) * inner; }
};

/// The operands as metadata, checked: `1 + popcount(present)` of them, every one defined.
/// **Errors:** ValueError naming `op` otherwise (an undefined operand passed to ops::call).
inline void check_present(std::span<const TensorMeta> in, uint8_t present, std::string_view op) {
  bool ok = in.size() == static_cast<size_t>(1 + std::popcount(static_cast<unsigned>(present)));
  for (const TensorMeta& m : in) ok = ok && m.defined;
  if (!ok)
    throw ValueError(std::string(op) + ": the operands (" + describe(in) +
                     ") do not match the optional tensors present in the arguments (absent ones are left out)");
}

/// Checks that per-channel operand `bit` (if present) is a vector of `c` elements.
/// **Errors:** ShapeError naming `op`, the operand and every shape.
inline void check_channel(std::span<const TensorMeta> in, uint8_t present, int bit, int64_t c, std::string_view op,
                          std::string_view what) {
  const int s = slot(present, bit);
  if (s < 0) return;
  const TensorMeta& m = in[static_cast<size_t>(s)];
  if (m.dim() != 1 || m.sizes[0] != c)
    throw ShapeError(std::string(op) + ": expected " + std::string(what) + " to be a vector of " + std::to_string(c) +
                     " elements (the channels, dim 1 of the input), got " + to_string(m.sizes) + " (operands " +
                     describe(in) + ")");
}

/// The input's dtype as the result. **Errors:** TypeError naming `op` for a non-floating input.
inline ScalarType floating_input(std::span<const TensorMeta> in, std::string_view op) {
  if (!is_floating(in[0].dtype))
    throw TypeError(std::string(op) + ": expected a floating point input (float16, bfloat16, float32, float64), got " +
                    std::string(dtype_name(in[0].dtype)) + " (operands " + describe(in) + ")");
  return in[0].dtype;
}

/// Σ `f(row[i])` over `n` elements in float64, in four interleaved partial sums (independent
/// additions the CPU overlaps; the order is fixed, so the value does not depend on threads).
template <class T, class F>
double sum4(const T* row, int64_t n, F f) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += f(static_cast<double>(row[i]));
    s1 += f(static_cast<double>(row[i + 1]));
    s2 += f(static_cast<double>(row[i + 2]));
    s3 += f(static_cast<double>(row[i + 3]));
  }
  for (; i < n; ++i) s0 += f(static_cast<double>(row[i]));
  return (s0 + s1) + (s2 + s3);
}

/// norm_cpu for statistics over each contiguous row of `C` elements (layer_norm, rms_norm:
/// `[rows, n, 1]`): per row the mean (when `center`), the squared deviations and the result in
/// float64, rounded once to `T`, as norm_cpu's general loops; `w`, `b` per element of a row
/// (undefined: absent).
template <element T>
void norm_rows_cpu(const T* xp, int64_t rows, int64_t C, double eps, bool center, const Tensor<T>& w,
                   const Tensor<T>& b, T* op) {
  const T* wp = w.defined() ? w.data_ptr() : nullptr;
  const T* bp = b.defined() ? b.data_ptr() : nullptr;
  const double n = static_cast<double>(C);
  for (int64_t o = 0; o < rows; ++o) {
    const T* row = xp + o * C;
    const double mu = center ? sum4(row, C, [](double v) { return v; }) / n : 0.0;
    const double var = sum4(row, C, [mu](double v) { return (v - mu) * (v - mu); }) / n;
    const double inv = 1.0 / std::sqrt(var + eps);
    T* orow = op + o * C;
    for (int64_t c = 0; c < C; ++c) {
      const double scale = inv * (wp ? static_cast<double>(wp[c]) : 1.0);
      const double shift = bp ? static_cast<double>(bp[c]) : 0.0;
      orow[c] = convert<T>((static_cast<double>(row[c]) - mu) * scale + shift);
    }
  }
}

/// The cpu kernel of every normalization op: statistics (two passes: mean, then the squared
/// deviations) and the result in float64, rounded once to `T`. `in` holds the present
/// operands (see the file's header).
template <element T>
void norm_cpu(const NormPlan& p, double eps, uint8_t present, std::span<const Tensor<T>> in, Tensor<T>& out) {
  if (out.numel() == 0) return;
  const Tensor<T> x = in[0].contiguous();
  auto operand = [&](int bit) -> Tensor<T> {
    const int s = slot(present, bit);
    return s < 0 ? Tensor<T>() : in[static_cast<size_t>(s)].contiguous();
  };
  const Tensor<T> w = operand(kWeight), b = operand(kBias);
  const int64_t O = p.outer, C = p.channels, I = p.inner, G = p.groups, cg = C / G;
  if (!p.given && I == 1 && G == 1 && p.per_sample) {
    norm_rows_cpu(x.data_ptr(), O, C, eps, p.center, w, b, out.data_ptr());
    return;
  }
  const int64_t nstats = p.given ? C : p.per_sample ? O * G : G;
  std::vector<double> mean(static_cast<size_t>(nstats), 0.0), inv(static_cast<size_t>(nstats), 0.0);
  const T* xp = x.data_ptr();
  // the statistics index of channel c at outer index o
  auto stat = [&](int64_t o, int64_t c) { return p.given ? c : (p.per_sample ? o * G : 0) + c / cg; };
  if (p.given) {
    const Tensor<T> m = operand(kMean), v = operand(kVar);
    for (int64_t c = 0; c < C; ++c) {
      mean[size_t(c)] = static_cast<double>(m.data_ptr()[c]);
      inv[size_t(c)] = 1.0 / std::sqrt(static_cast<double>(v.data_ptr()[c]) + eps);
    }
  } else {
    const double n = static_cast<double>(p.count());
    if (p.center) {
      for (int64_t o = 0; o < O; ++o)
        for (int64_t c = 0; c < C; ++c) {
          double s = 0;
          const T* row = xp + (o * C + c) * I;
          for (int64_t i = 0; i < I; ++i) s += static_cast<double>(row[i]);
          mean[size_t(stat(o, c))] += s;
        }
      for (double& m : mean) m /= n;
    }
    for (int64_t o = 0; o < O; ++o)
      for (int64_t c = 0; c < C; ++c) {
        const double mu = mean[size_t(stat(o, c))];
        double s = 0;
        const T* row = xp + (o * C + c) * I;
        for (int64_t i = 0; i < I; ++i) {
          const double d = static_cast<double>(row[i]) - mu;
          s += d * d;
        }
        inv[size_t(stat(o, c))] += s;
      }
    for (double& v : inv) v = 1.0 / std::sqrt(v / n + eps);
  }
  T* op = out.data_ptr();
  const T* wp = w.defined() ? w.data_ptr() : nullptr;
  const T* bp = b.defined() ? b.data_ptr() : nullptr;
  for (int64_t o = 0; o < O; ++o)
    for (int64_t c = 0; c < C; ++c) {
      const size_t k = size_t(stat(o, c));
      const double scale = inv[k] * (wp ? static_cast<double>(wp[c]) : 1.0);
      const double shift = bp ? static_cast<double>(bp[c]) : 0.0;
      const int64_t at = (o * C + c) * I;
      for (int64_t i = 0; i < I; ++i) op[at + i] = convert<T>((static_cast<double>(xp[at + i]) - mean[k]) * scale + shift);
    }
}

/// The lowering of every normalization op: in float32 (float64 for float64) — a sum for the
/// mean, the squared deviations summed, stablehlo.rsqrt of `var + eps`, the per-channel weight
/// and bias broadcast along dim 1 of `[outer, channels, inner]` — then rounded to the input's
/// dtype. `in` holds the present operands, converted to the input's dtype.
template <class B, class V>
V norm_lower(B& b, const NormPlan& p, double eps, uint8_t present, std::span<const V> in, const Dims& out) {
  if (numel(out) == 0) return in[0];
  using RO = reduce_op_t<B>;
  const ScalarType t = in[0].dtype, ct = t == ScalarType::Double ? t : ScalarType::Float;
  auto operand = [&](int bit, std::vector<int64_t> dims) {
    const V& v = in[static_cast<size_t>(slot(present, bit))];
    return b.reshape(v.dtype == ct ? v : b.convert(v, ct), std::move(dims));
  };
  const int64_t O = p.outer, C = p.channels, I = p.inner, G = p.groups, cg = C / G;
  const std::vector<int64_t> full{O, C, I};
  const V x0 = in[0].dtype == ct ? in[0] : b.convert(in[0], ct);
  const V x = b.reshape(x0, full);
  auto per_channel = [&](const V& v) { return b.broadcast_in_dim(v, full, {1}); };
  V y;
  if (p.given) {
    const V m = operand(kMean, {C}), v = operand(kVar, {C});
    const V inv = b.unary("rsqrt", b.add(v, b.constant(eps, ct, {C})));
    y = b.multiply(b.subtract(x, per_channel(m)), per_channel(inv));
  } else {
    // statistics over the last dim of `xs`, broadcast back over it (`keep` the other dims)
    const std::vector<int64_t> gs = p.per_sample ? std::vector<int64_t>{O, G, cg * I} : full;
    const std::vector<int64_t> red = p.per_sample ? std::vector<int64_t>{2} : std::vector<int64_t>{0, 2};
    const std::vector<int64_t> keep = p.per_sample ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{1};
    const V xs = b.reshape(x, gs);
    const V zero = b.constant(0.0, ct);
    const double n = static_cast<double>(p.count());
    auto mean_of = [&](const V& v) {
      const V s = b.reduce(v, zero, RO::Add, red);
      return b.multiply(s, b.constant(1.0 / n, ct, s.dims));
    };
    const V d = p.center ? b.subtract(xs, b.broadcast_in_dim(mean_of(xs), gs, keep)) : xs;
    const V var = mean_of(b.multiply(d, d));
    const V inv = b.unary("rsqrt", b.add(var, b.constant(eps, ct, var.dims)));
    y = b.reshape(b.multiply(d, b.broadcast_in_dim(inv, gs, keep)), full);
  }
  if (slot(present, kWeight) >= 0) y = b.multiply(y, per_channel(operand(kWeight, {C})));
  if (slot(present, kBias) >= 0) y = b.add(y, per_channel(operand(kBias, {C})));
  y = b.reshape(y, std::vector<int64_t>(out.begin(), out.end()));
  return ct == t ? y : b.convert(y, t);
}

/// The checks of layer_norm and rms_norm: `normalized_shape` non-empty and the trailing dims of
/// the input; weight (and bias) of that shape. **Errors:** ShapeError naming `op` and every shape.
inline void check_trailing(std::span<const TensorMeta> in, const Dims& shape, uint8_t present, std::string_view op) {
  const TensorMeta& x = in[0];
  const int k = shape.size();
  bool ok = k >= 1 && k <= x.dim();
  for (int i = 0; ok && i < k; ++i) ok = x.sizes[x.dim() - k + i] == shape[i];
  if (!ok)
    throw ShapeError(std::string(op) + ": normalized_shape " + to_string(shape) +
                     " must be non-empty and equal to the trailing dims of the input (operands " + describe(in) + ")");
  for (int bit : {int(kWeight), int(kBias)}) {
    const int s = slot(present, bit);
    if (s >= 0 && in[static_cast<size_t>(s)].sizes != shape)
      throw ShapeError(std::string(op) + ": expected " + (bit == kWeight ? "weight" : "bias") +
                       " of the shape normalized_shape " + to_string(shape) + ", got " +
                       to_string(in[static_cast<size_t>(s)].sizes) + " (operands " + describe(in) + ")");
  }
}

/// The checks of the `[N, C, *]` ops: rank >= 2. **Errors:** ShapeError naming `op`.
inline void check_channels_first(std::span<const TensorMeta> in, std::string_view op) {
  if (in[0].dim() < 2)
    throw ShapeError(std::string(op) + ": expected an input of at least 2 dims [N, C, *], got " + describe(in[0]) +
                     " (operands " + describe(in) + ")");
}

}  // namespace detail

/// Layer normalization over the trailing dims (torch.nn.functional.layer_norm):
/// `(x - mean) / sqrt(var + eps) * weight + bias`, mean and biased variance over the last
/// `len(normalized_shape)` dims.
///
/// **Shapes:** `input: [*, n...]` with `normalized_shape = [n...]` (non-empty), `weight, bias:
/// [n...]` (each optional) → `[*, n...]`.
/// **Dtypes:** float16, bfloat16, float32, float64; the result has the input's. Weight and bias
/// are converted to it (torch 1.13 requires equal dtypes). The cpu computes in float64 and
/// rounds once (torch: float32 "opmath" for 16-bit floats, float32 for float32: agreement to
/// rounding).
/// **Errors:** TypeError for an integer or bool input; ShapeError when `normalized_shape` is
/// empty or not the input's trailing dims, or weight/bias have another shape (naming every
/// operand).
/// **Source:** torch.layer_norm (aten/src/ATen/native/layer_norm.cpp, LayerNormKernelImpl).
/// **Lowering:** see detail::norm_lower. **Example:** tests/ops/test_norm.cpp, block `layer-norm`.
struct LayerNormOp {
  ///@{
  /// Names and schema (torch 1.13 / 2.x).
  static constexpr std::string_view name = "layer_norm", aten = "aten::layer_norm";
  static constexpr std::string_view schema =
      "aten::layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
      "float eps=1.0000000000000001e-05, bool cudnn_enable=True) -> Tensor";
  ///@}
  /// The dtypes libtorch allows (torch 2's cpu; torch 1.13's lacks float16).
  static constexpr DtypeSet dtypes = DtypeSet::floating();
  /// Non-tensor arguments.
  struct Args {
    Dims normalized_shape;  ///< the trailing dims normalized together
    double eps = 1e-5;      ///< added to the variance
    uint8_t present = 0;    ///< bit 0: weight, bit 1: bias (see the file's header)
  };
  /// Arguments from a model node or a run-time call (`cudnn_enable` has no effect).
  template <class R>
  static Args args(const R& r) {
    return Args{detail::norm_shape(r.to_ints("normalized_shape"), aten), r.to_double("eps"),
                uint8_t(detail::present_bit(r, "weight", 0) | detail::present_bit(r, "bias", 1))};
  }
  /// The present operands (absent optional tensors left out).
  template <class R>
  static std::vector<AnyTensor> tensors(const R& r) { return detail::present_tensors(r); }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    detail::check_present(in, a.present, aten);
    const ScalarType t = detail::floating_input(in, aten);
    detail::check_trailing(in, a.normalized_shape, a.present, aten);
    return TensorMeta{t, in[0].sizes, Device{}, true};
  }
  /// The view of the input.
  static detail::NormPlan plan(const Dims& x, const Args& a) { return detail::NormPlan::trailing(x, a.normalized_shape.size()); }
  /// CPU kernel (detail::norm_cpu).
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    detail::norm_cpu(plan(out.sizes(), a), a.eps, a.present, in, out);
  }
  /// StableHLO (detail::norm_lower).
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    return detail::norm_lower(b, plan(out, a), a.eps, a.present, in, out);
  }
};

/// Root-mean-square normalization over the trailing dims (torch.nn.functional.rms_norm, torch
/// 2.4+): `x / sqrt(mean(x^2) + eps) * weight`.
///
/// **Shapes:** as layer_norm (`weight: [n...]`, optional; no bias).
/// **Dtypes:** float16, bfloat16, float32, float64; the result has the input's. `eps` None is
/// the epsilon of the computation type torch's kernel uses (`std::numeric_limits<opmath>::
/// epsilon()`: float32's 1.19e-7 for float16, bfloat16 and float32, float64's for float64; the
/// docs say torch.finfo(dtype).eps, which differs for the 16-bit types). The cpu computes in
/// float64 and rounds once (torch 2.4's composite kernel rounds each step to the input dtype).
/// **Errors:** as layer_norm.
/// **Source:** torch.rms_norm (aten/src/ATen/native/layer_norm.cpp, rms_norm). Not in torch 1.13.
/// **Lowering:** see detail::norm_lower (no mean).
struct RmsNormOp {
  ///@{
  /// Names and schema (torch 2.x).
  static constexpr std::string_view name = "rms_norm", aten = "aten::rms_norm";
  static constexpr std::string_view schema =
      "aten::rms_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::floating();
  /// Non-tensor arguments.
  struct Args {
    Dims normalized_shape;  ///< the trailing dims normalized together
    bool has_eps = false;   ///< false: the computation type's epsilon
    double eps = 0;         ///< added to the mean square when `has_eps`
    uint8_t present = 0;    ///< bit 0: weight
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) {
    const bool has = !r.is_none("eps");
    return Args{detail::norm_shape(r.to_ints("normalized_shape"), aten), has, has ? r.to_double("eps") : 0.0,
                detail::present_bit(r, "weight", 0)};
  }
  /// The present operands.
  template <class R>
  static std::vector<AnyTensor> tensors(const R& r) { return detail::present_tensors(r); }
  /// `eps`, or the default for dtype `t`.
  static double eps_for(ScalarType t, const Args& a) {
    return a.has_eps ? a.eps : t == ScalarType::Double ? DBL_EPSILON : double(FLT_EPSILON);
  }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    detail::check_present(in, a.present & 1u, aten);
    const ScalarType t = detail::floating_input(in, aten);
    detail::check_trailing(in, a.normalized_shape, a.present & 1u, aten);
    return TensorMeta{t, in[0].sizes, Device{}, true};
  }
  /// The view of the input (no mean).
  static detail::NormPlan plan(const Dims& x, const Args& a) {
    detail::NormPlan p = detail::NormPlan::trailing(x, a.normalized_shape.size());
    p.center = false;
    return p;
  }
  /// CPU kernel (detail::norm_cpu).
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    detail::norm_cpu(plan(out.sizes(), a), eps_for(dtype_of<T>(), a), a.present & 1u, in, out);
  }
  /// StableHLO (detail::norm_lower).
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    return detail::norm_lower(b, plan(out, a), eps_for(in[0].dtype, a), a.present & 1u, in, out);
  }
};

/// Group normalization (torch.nn.functional.group_norm): the channels of `[N, C, *]` split
/// into `num_groups` groups, each normalized over its channels and `*` per sample, then the
/// per-channel `weight` and `bias`.
///
/// **Shapes:** `input: [N, C, *]` (rank >= 2), `weight, bias: [C]` (each optional) → the
/// input's shape.
/// **Dtypes:** float16, bfloat16, float32, float64 (as layer_norm).
/// **Errors:** TypeError for an integer or bool input; ShapeError for rank < 2, weight/bias
/// not `[C]`; ValueError when `num_groups` is not positive or does not divide `C`.
/// **Source:** torch.group_norm (aten/src/ATen/native/group_norm.cpp).
/// **Lowering:** see detail::norm_lower.
struct GroupNormOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "group_norm", aten = "aten::group_norm";
  static constexpr std::string_view schema =
      "aten::group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, "
      "float eps=1.0000000000000001e-05, bool cudnn_enabled=True) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::floating();
  /// Non-tensor arguments.
  struct Args {
    int64_t num_groups = 1;  ///< groups of channels
    double eps = 1e-5;       ///< added to the variance
    uint8_t present = 0;     ///< bit 0: weight, bit 1: bias
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) {
    return Args{r.to_int("num_groups"), r.to_double("eps"),
                uint8_t(detail::present_bit(r, "weight", 0) | detail::present_bit(r, "bias", 1))};
  }
  /// The present operands.
  template <class R>
  static std::vector<AnyTensor> tensors(const R& r) { return detail::present_tensors(r); }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    detail::check_present(in, a.present & 3u, aten);
    const ScalarType t = detail::floating_input(in, aten);
    detail::check_channels_first(in, aten);
    const int64_t C = in[0].sizes[1];
    if (a.num_groups <= 0 || C % a.num_groups != 0)
      throw ValueError(std::string(aten) + ": expected the number of channels " + std::to_string(C) +
                       " to be divisible by num_groups " + std::to_string(a.num_groups) + " (operands " + describe(in) + ")");
    detail::check_channel(in, a.present, detail::kWeight, C, aten, "weight");
    detail::check_channel(in, a.present, detail::kBias, C, aten, "bias");
    return TensorMeta{t, in[0].sizes, Device{}, true};
  }
  /// The view of the input.
  static detail::NormPlan plan(const Dims& x, const Args& a) {
    detail::NormPlan p = detail::NormPlan::channels_first(x);
    p.groups = a.num_groups;
    return p;
  }
  /// CPU kernel (detail::norm_cpu).
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    detail::norm_cpu(plan(out.sizes(), a), a.eps, a.present & 3u, in, out);
  }
  /// StableHLO (detail::norm_lower).
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    return detail::norm_lower(b, plan(out, a), a.eps, a.present & 3u, in, out);
  }
};

/// Instance normalization (torch.nn.functional.instance_norm): each channel of each sample of
/// `[N, C, *]` normalized over `*` (`use_input_stats`), or by the given running statistics
/// (`use_input_stats=False`), then the per-channel `weight` and `bias`.
///
/// **Shapes:** `input: [N, C, *]` (rank >= 2; aten reads dim 0 as N and dim 1 as C whatever
/// the rank), `weight, bias, running_mean, running_var: [C]` (each optional) → the input's shape.
/// **Dtypes:** float16, bfloat16, float32, float64 (as layer_norm).
/// **Values, not state:** with `use_input_stats` and running statistics given, torch also
/// updates them in place (`momentum`); tensors here are values, so they are left unchanged
/// (the result is torch's).
/// **Errors:** TypeError for an integer or bool input; ShapeError for rank < 2 or a per-channel
/// operand not `[C]`; ValueError when `use_input_stats` is false and a running statistic is absent.
/// **Source:** torch.instance_norm (aten/src/ATen/native/Normalization.cpp, instance_norm).
/// **Lowering:** see detail::norm_lower.
struct InstanceNormOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "instance_norm", aten = "aten::instance_norm";
  static constexpr std::string_view schema =
      "aten::instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, "
      "bool use_input_stats, float momentum, float eps, bool cudnn_enabled) -> Tensor";
  ///@}
  /// The dtypes libtorch allows (torch 2's cpu; torch 1.13's lacks float16).
  static constexpr DtypeSet dtypes = DtypeSet::floating();
  /// Non-tensor arguments.
  struct Args {
    bool use_input_stats = true;  ///< false: normalize by running_mean / running_var
    double eps = 1e-5;            ///< added to the variance
    uint8_t present = 0;          ///< bits 0-3: weight, bias, running_mean, running_var
  };
  /// Arguments from a model node or a run-time call (`momentum`, `cudnn_enabled` have no effect).
  template <class R>
  static Args args(const R& r) {
    return Args{r.to_bool("use_input_stats"), r.to_double("eps"),
                uint8_t(detail::present_bit(r, "weight", 0) | detail::present_bit(r, "bias", 1) |
                        detail::present_bit(r, "running_mean", 2) | detail::present_bit(r, "running_var", 3))};
  }
  /// The present operands.
  template <class R>
  static std::vector<AnyTensor> tensors(const R& r) { return detail::present_tensors(r); }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    detail::check_present(in, a.present, aten);
    const ScalarType t = detail::floating_input(in, aten);
    detail::check_channels_first(in, aten);
    if (!a.use_input_stats && (a.present & 12u) != 12u)
      throw ValueError(std::string(aten) + ": expected running_mean and running_var to be defined when use_input_stats "
                       "is false (operands " + describe(in) + ")");
    const int64_t C = in[0].sizes[1];
    const char* what[] = {"weight", "bias", "running_mean", "running_var"};
    for (int bit = 0; bit < 4; ++bit) detail::check_channel(in, a.present, bit, C, aten, what[bit]);
    return TensorMeta{t, in[0].sizes, Device{}, true};
  }
  /// The view of the input; the operands the kernels read (running statistics only without
  /// `use_input_stats`).
  static detail::NormPlan plan(const Dims& x, const Args& a) {
    detail::NormPlan p = detail::NormPlan::channels_first(x);
    if (a.use_input_stats) p.groups = p.channels;
    else p.given = true;
    return p;
  }
  /// CPU kernel (detail::norm_cpu; unused running statistics are ignored).
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    detail::norm_cpu(plan(out.sizes(), a), a.eps, a.present, in, out);
  }
  /// StableHLO (detail::norm_lower).
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    return detail::norm_lower(b, plan(out, a), a.eps, a.present, in, out);
  }
};

/// Batch normalization (torch.nn.functional.batch_norm) over dim 1 of `[N, C, *]`: in
/// evaluation (`training=False`) by `running_mean` and `running_var`; in training by the batch
/// statistics of each channel over `N` and `*` (biased variance); then the per-channel `weight`
/// and `bias`.
///
/// **Shapes:** `input: [N, C, *]` (rank >= 2), `weight, bias, running_mean, running_var: [C]`
/// (each optional) → the input's shape.
/// **Dtypes:** float16, bfloat16, float32, float64 (as layer_norm; torch 1.13's cpu lacks
/// float16).
/// **Values, not state:** in training, torch also updates running_mean and running_var in
/// place (`momentum`, unbiased variance); tensors here are values, so they are left unchanged
/// (the result is torch's).
/// **Errors:** TypeError for an integer or bool input; ShapeError for rank < 2 or a per-channel
/// operand not `[C]`; ValueError in evaluation without running_mean or running_var.
/// **Source:** torch.batch_norm (aten/src/ATen/native/Normalization.cpp, batch_norm_cpu).
/// **Lowering:** see detail::norm_lower.
struct BatchNormOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "batch_norm", aten = "aten::batch_norm";
  static constexpr std::string_view schema =
      "aten::batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, "
      "bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::floating();
  /// Non-tensor arguments.
  struct Args {
    bool training = false;  ///< batch statistics instead of the running ones
    double eps = 1e-5;      ///< added to the variance
    uint8_t present = 0;    ///< bits 0-3: weight, bias, running_mean, running_var
  };
  /// Arguments from a model node or a run-time call (`momentum`, `cudnn_enabled` have no effect).
  template <class R>
  static Args args(const R& r) {
    return Args{r.to_bool("training"), r.to_double("eps"),
                uint8_t(detail::present_bit(r, "weight", 0) | detail::present_bit(r, "bias", 1) |
                        detail::present_bit(r, "running_mean", 2) | detail::present_bit(r, "running_var", 3))};
  }
  /// The present operands.
  template <class R>
  static std::vector<AnyTensor> tensors(const R& r) { return detail::present_tensors(r); }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    detail::check_present(in, a.present, aten);
    const ScalarType t = detail::floating_input(in, aten);
    detail::check_channels_first(in, aten);
    if (!a.training && (a.present & 12u) != 12u)
      throw ValueError(std::string(aten) + ": running_mean and running_var must be defined in evaluation mode "
                       "(training=False; operands " + describe(in) + ")");
    const int64_t C = in[0].sizes[1];
    const char* what[] = {"weight", "bias", "running_mean", "running_var"};
    for (int bit = 0; bit < 4; ++bit) detail::check_channel(in, a.present, bit, C, aten, what[bit]);
    return TensorMeta{t, in[0].sizes, Device{}, true};
  }
  /// The view of the input.
  static detail::NormPlan plan(const Dims& x, const Args& a) {
    detail::NormPlan p = detail::NormPlan::channels_first(x);
    p.groups = p.channels;
    if (a.training) p.per_sample = false;
    else p.given = true;
    return p;
  }
  /// CPU kernel (detail::norm_cpu).
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    detail::norm_cpu(plan(out.sizes(), a), a.eps, a.present, in, out);
  }
  /// StableHLO (detail::norm_lower).
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    return detail::norm_lower(b, plan(out, a), a.eps, a.present, in, out);
  }
};

namespace detail {
/// Runs `Op` on `x` and the defined tensors of `opt` (in schema order), `a.present` set from
/// them; typed (`T`) or run-time typed (`AnyTensor`).
template <class Op, class X>
X norm_call(const X& x, std::initializer_list<const X*> opt, typename Op::Args a) {
  std::vector<X> in{x};
  a.present = 0;
  int bit = 0;
  for (const X* t : opt) {
    if (t->defined()) {
      in.push_back(*t);
      a.present = static_cast<uint8_t>(a.present | (1u << bit));
    }
    ++bit;
  }
  if constexpr (std::is_same_v<X, AnyTensor>) return call<Op>(std::span<const AnyTensor>(in), a);
  else return call_typed<Op, typename X::value_type>(std::span<const X>(in), a);
}
}  // namespace detail

// Each op's entry point, compiled once in TORCHTPU_SEPARATE_OPS programs (ops/library.hpp).
TORCHTPU_LIBRARY_OP(LayerNormOp);
TORCHTPU_LIBRARY_OP(RmsNormOp);
TORCHTPU_LIBRARY_OP(GroupNormOp);
TORCHTPU_LIBRARY_OP(InstanceNormOp);
TORCHTPU_LIBRARY_OP(BatchNormOp);

}  // namespace ops

/// Layer normalization over the trailing `normalized_shape` dims (torch.nn.functional.layer_norm);
/// `weight` and `bias` optional (undefined tensors: absent). See ops::LayerNormOp.
/// **Example:** `layer_norm(x, {4}, w, b, 1e-5)`.
template <element T, int Rank>
Tensor<T> layer_norm(const Tensor<T, Rank>& x, const Dims& normalized_shape, const Tensor<T>& weight = {},
                     const Tensor<T>& bias = {}, double eps = 1e-5) {
  return ops::detail::norm_call<ops::LayerNormOp>(Tensor<T>(x), {&weight, &bias}, {normalized_shape, eps, 0});
}
/// Run-time typed `layer_norm`.
template <std::same_as<AnyTensor> A>
A layer_norm(const A& x, const Dims& normalized_shape, const A& weight = {}, const A& bias = {}, double eps = 1e-5) {
  return ops::detail::norm_call<ops::LayerNormOp>(x, {&weight, &bias}, {normalized_shape, eps, 0});
}

/// RMS normalization over the trailing `normalized_shape` dims (torch.nn.functional.rms_norm);
/// `eps` absent: the default of ops::RmsNormOp.
template <element T, int Rank>
Tensor<T> rms_norm(const Tensor<T, Rank>& x, const Dims& normalized_shape, const Tensor<T>& weight = {},
                   std::optional<double> eps = std::nullopt) {
  return ops::detail::norm_call<ops::RmsNormOp>(Tensor<T>(x), {&weight},
                                                {normalized_shape, eps.has_value(), eps.value_or(0.0), 0});
}
/// Run-time typed `rms_norm`.
template <std::same_as<AnyTensor> A>
A rms_norm(const A& x, const Dims& normalized_shape, const A& weight = {}, std::optional<double> eps = std::nullopt) {
  return ops::detail::norm_call<ops::RmsNormOp>(x, {&weight}, {normalized_shape, eps.has_value(), eps.value_or(0.0), 0});
}

/// Group normalization of `[N, C, *]` in `num_groups` groups of channels
/// (torch.nn.functional.group_norm). See ops::GroupNormOp.
template <element T, int Rank>
Tensor<T> group_norm(const Tensor<T, Rank>& x, int64_t num_groups, const Tensor<T>& weight = {},
                     const Tensor<T>& bias = {}, double eps = 1e-5) {
  return ops::detail::norm_call<ops::GroupNormOp>(Tensor<T>(x), {&weight, &bias}, {num_groups, eps, 0});
}
/// Run-time typed `group_norm`.
template <std::same_as<AnyTensor> A>
A group_norm(const A& x, int64_t num_groups, const A& weight = {}, const A& bias = {}, double eps = 1e-5) {
  return ops::detail::norm_call<ops::GroupNormOp>(x, {&weight, &bias}, {num_groups, eps, 0});
}

/// Instance normalization of `[N, C, *]` (torch.nn.functional.instance_norm's argument order;
/// `momentum` has no effect: running statistics are not updated). See ops::InstanceNormOp.
template <element T, int Rank>
Tensor<T> instance_norm(const Tensor<T, Rank>& x, const Tensor<T>& running_mean = {}, const Tensor<T>& running_var = {},
                        const Tensor<T>& weight = {}, const Tensor<T>& bias = {}, bool use_input_stats = true,
                        double momentum = 0.1, double eps = 1e-5) {
  (void)momentum;
  return ops::detail::norm_call<ops::InstanceNormOp>(Tensor<T>(x), {&weight, &bias, &running_mean, &running_var},
                                                     {use_input_stats, eps, 0});
}
/// Run-time typed `instance_norm`.
template <std::same_as<AnyTensor> A>
A instance_norm(const A& x, const A& running_mean = {}, const A& running_var = {}, const A& weight = {},
                const A& bias = {}, bool use_input_stats = true, double momentum = 0.1, double eps = 1e-5) {
  (void)momentum;
  return ops::detail::norm_call<ops::InstanceNormOp>(x, {&weight, &bias, &running_mean, &running_var},
                                                     {use_input_stats, eps, 0});
}

/// Batch normalization over dim 1 of `[N, C, *]` (torch.nn.functional.batch_norm's argument
/// order; `momentum` has no effect: running statistics are not updated). See ops::BatchNormOp.
template <element T, int Rank>
Tensor<T> batch_norm(const Tensor<T, Rank>& x, const Tensor<T>& running_mean, const Tensor<T>& running_var,
                     const Tensor<T>& weight = {}, const Tensor<T>& bias = {}, bool training = false,
                     double momentum = 0.1, double eps = 1e-5) {
  (void)momentum;
  return ops::detail::norm_call<ops::BatchNormOp>(Tensor<T>(x), {&weight, &bias, &running_mean, &running_var},
                                                  {training, eps, 0});
}
/// Run-time typed `batch_norm`.
template <std::same_as<AnyTensor> A>
A batch_norm(const A& x, const A& running_mean, const A& running_var, const A& weight = {}, const A& bias = {},
             bool training = false, double momentum = 0.1, double eps = 1e-5) {
  (void)momentum;
  return ops::detail::norm_call<ops::BatchNormOp>(x, {&weight, &bias, &running_mean, &running_var}, {training, eps, 0});
}

}  // namespace torchtpu
