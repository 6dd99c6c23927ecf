// torchtpu/ops/pool.hpp — operator library, pooling (the convolution family's second file,
// ops/conv.hpp holds the convolutions): max_pool2d, avg_pool2d, adaptive_avg_pool2d. Each op
// is one definition (ops/library.hpp) that the typed API, `AnyTensor`, the eager PJRT devices
// and model graphs all call. float32 runs fuse/window.hpp's vector kernels (adaptive pooling:
// a float32-accumulating loop); float16 and bfloat16 convert to float32, run the same kernels
// and round once; float64 runs a float64 loop. Tests: tests/ops/test_conv.cpp,
// tests/device_ops/test_device_conv.cpp, tests/jit (models).
//
// Not in the umbrella header (torchtpu.hpp): include <torchtpu/ops/conv.hpp> or this file.
#pragma once
#include <algorithm>    // std::max, std::min
#include <cmath>        // INFINITY
#include <cstdint>      // int64_t
#include <limits>       // std::numeric_limits
#include <optional>     // std::optional (divisor_override)
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <type_traits>  // std::is_same_v
#include <vector>       // std::vector

#include "../fuse/window.hpp"  // Window2dArgs, window2d, window_avg_divisor
#include "conv.hpp"            // detail::ConvInts, conv_ints, conv_ints_str, conv_floor_div, conv_param_t
#include "library.hpp"         // TensorMeta, DtypeSet, ops::call_typed

namespace torchtpu {
namespace ops {

namespace detail {

/// Arguments of max_pool2d and avg_pool2d.
struct PoolArgs {
  ConvInts kernel, stride, padding, dilation;   ///< as passed (stride empty: the kernel size)
  bool ceil_mode = false;                       ///< round the output size up
  bool count_include_pad = true;                ///< avg: padding counts in the divisor
  bool has_divisor = false;                     ///< avg: `divisor_override` given
  int64_t divisor_override = 0;                 ///< avg: the divisor when given
};

/// A pooling's geometry: fuse/window.hpp's arguments (planes = N * C) and the batch layout.
struct PoolGeom {
  bool batched = true;                    ///< `[N, C, H, W]` (else `[C, H, W]`)
  int64_t N = 1, C = 1;                   ///< batch, channels
  torchtpu::detail::Window2dArgs w;       ///< geometry (no data pointers)
  /// The result's shape.
  Dims out_sizes() const { return batched ? Dims{N, C, w.OH, w.OW} : Dims{C, w.OH, w.OW}; }
};

/// PyTorch's pooling output size (pooling_output_shape, aten/src/ATen/native/Pool.h).
inline int64_t pool_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  int64_t o = conv_floor_div(in + 2 * p - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0), s) + 1;
  if (ceil_mode && (o - 1) * s >= in + p) --o;  // the last window must start inside the input
  return o;
}

/// Checks the one operand of a 2-D pooling: floating, `[C, H, W]` or `[N, C, H, W]` with
/// non-zero C, H, W. Fills the batch layout of `g`. **Errors:** TypeError, ShapeError naming `op`.
inline void pool_input(std::span<const TensorMeta> in, std::string_view op, PoolGeom& g) {
  const std::string where = " (operands " + describe(in) + ")";
  if (in.size() != 1 || !in[0].defined) throw ValueError(std::string(op) + ": expected one operand" + where);
  const TensorMeta& x = in[0];
  if (!is_floating(x.dtype))
    throw TypeError(std::string(op) + ": expected a floating point input (float16, bfloat16, float32, float64), got " +
                    std::string(dtype_name(x.dtype)) + where);
  if (x.dim() != 3 && x.dim() != 4)
    throw ShapeError(std::string(op) + ": expected a 3-D [C, H, W] or 4-D [N, C, H, W] input" + where);
  for (int i = x.dim() - 3; i < x.dim(); ++i)
    if (x.sizes[i] == 0) throw ShapeError(std::string(op) + ": expected non-zero sizes in every dim but the batch" + where);
  g.batched = x.dim() == 4;
  g.N = g.batched ? x.sizes[0] : 1;
  g.C = x.sizes[x.dim() - 3];
  g.w.H = x.sizes[x.dim() - 2];
  g.w.W = x.sizes[x.dim() - 1];
  g.w.planes = g.N * g.C;
}

/// The geometry of max (`max`) or average pooling of `in` with `a`, checked as torch checks
/// it. **Errors:** as pool_input; ValueError naming `op` for lists of another length than 1
/// or 2, non-positive kernel/stride/dilation/divisor, padding over half the kernel;
/// ShapeError when the output would be empty.
inline PoolGeom pool_geom(std::span<const TensorMeta> in, const PoolArgs& a, bool max, std::string_view op) {
  PoolGeom g;
  pool_input(in, op, g);
  const std::string where = " (operands " + describe(in) + ")";
  auto two = [&](const ConvInts& c, const char* what, int64_t& v0, int64_t& v1) {
    if (c.n != 1 && c.n != 2)
      throw ValueError(std::string(op) + ": " + what + " must be a single int or two ints, got " + conv_ints_str(c.v, c.n) + where);
    v0 = c.v[0];
    v1 = c.v[c.n == 2 ? 1 : 0];
  };
  torchtpu::detail::Window2dArgs& w = g.w;
  w.kind = max ? torchtpu::detail::Window2dArgs::Kind::max : torchtpu::detail::Window2dArgs::Kind::avg;
  two(a.kernel, "kernel_size", w.kh, w.kw);
  if (a.stride.n == 0) {
    w.sh = w.kh;
    w.sw = w.kw;
  } else {
    two(a.stride, "stride", w.sh, w.sw);
  }
  two(a.padding, "padding", w.ph, w.pw);
  if (max) two(a.dilation, "dilation", w.dh, w.dw);
  const int64_t k[2] = {w.kh, w.kw}, s[2] = {w.sh, w.sw}, p[2] = {w.ph, w.pw}, d[2] = {w.dh, w.dw};
  if (w.kh <= 0 || w.kw <= 0 || w.sh <= 0 || w.sw <= 0 || w.dh <= 0 || w.dw <= 0)
    throw ValueError(std::string(op) + ": kernel_size, stride and dilation must be positive, got kernel_size " +
                     conv_ints_str(k, 2) + ", stride " + conv_ints_str(s, 2) + ", dilation " + conv_ints_str(d, 2) + where);
  if (w.ph < 0 || w.pw < 0 || w.ph > w.kh / 2 || w.pw > w.kw / 2)
    throw ValueError(std::string(op) + ": padding " + conv_ints_str(p, 2) +
                     " must be non-negative and at most half of kernel_size " + conv_ints_str(k, 2) + where);
  if (a.has_divisor && a.divisor_override <= 0)
    throw ValueError(std::string(op) + ": divisor_override must be positive, got " + std::to_string(a.divisor_override) + where);
  w.OH = pool_out(w.H, w.kh, w.sh, w.ph, w.dh, a.ceil_mode);
  w.OW = pool_out(w.W, w.kw, w.sw, w.pw, w.dw, a.ceil_mode);
  if (w.OH < 1 || w.OW < 1) {
    const int64_t o[2] = {w.OH, w.OW};
    throw ShapeError(std::string(op) + ": the output size " + conv_ints_str(o, 2) + " is too small (kernel_size " +
                     conv_ints_str(k, 2) + ", stride " + conv_ints_str(s, 2) + ", padding " + conv_ints_str(p, 2) +
                     ", dilation " + conv_ints_str(d, 2) + ")" + where);
  }
  w.count_include_pad = a.count_include_pad;
  w.divisor_override = a.has_divisor ? a.divisor_override : 0;
  return g;
}

/// Max or average pooling of every plane in float64 (the definitions of window_at, fuse/window.hpp).
inline void pool_direct(const torchtpu::detail::Window2dArgs& a, const double* x, double* y) {
  const bool mx = a.kind == torchtpu::detail::Window2dArgs::Kind::max;
  for (int64_t pl = 0; pl < a.planes; ++pl) {
    const double* xc = x + pl * a.H * a.W;
    for (int64_t oh = 0; oh < a.OH; ++oh)
      for (int64_t ow = 0; ow < a.OW; ++ow) {
        double r = mx ? -std::numeric_limits<double>::infinity() : 0.0;
        for (int64_t i = 0; i < a.kh; ++i) {
          const int64_t ih = oh * a.sh - a.ph + i * a.dh;
          if (ih < 0 || ih >= a.H) continue;
          for (int64_t j = 0; j < a.kw; ++j) {
            const int64_t iw = ow * a.sw - a.pw + j * a.dw;
            if (iw < 0 || iw >= a.W) continue;
            const double v = xc[ih * a.W + iw];
            if (!mx) r += v;
            else if (v > r || v != v) r = v;
          }
        }
        if (!mx) {
          const int64_t div = torchtpu::detail::window_avg_divisor(a, oh, ow);
          r = div > 0 ? r / double(div) : 0.0;
        }
        *y++ = r;
      }
  }
}

/// The cpu kernel of max_pool2d and avg_pool2d (see the file's header). `out` is contiguous.
template <element T>
void pool_cpu(const PoolGeom& g, const Tensor<T>& xin, Tensor<T>& out) {
  if (out.numel() == 0) return;
  torchtpu::detail::Window2dArgs w = g.w;
  if constexpr (std::is_same_v<T, double>) {
    const Tensor<double> x = xin.contiguous();
    pool_direct(w, x.data_ptr(), out.data_ptr());
  } else if constexpr (std::is_same_v<T, float>) {
    const Tensor<float> x = xin.contiguous();
    w.x = x.data_ptr();
    w.out = out.data_ptr();
    torchtpu::detail::window2d(w);
  } else {
    const Tensor<float> x = Tensor<float>(xin.template to<float>());
    Tensor<float> r = Tensor<float>::empty(out.sizes());
    w.x = x.data_ptr();
    w.out = r.data_ptr();
    torchtpu::detail::window2d(w);
    out.copy_(r.template to<T>());
  }
}

/// The input `x` of a pooling lowering in its computation dtype (float32, or float64), 4-D.
template <class B, class V>
V pool_lower_input(B& b, const V& x0, const PoolGeom& g) {
  const ScalarType ct = x0.dtype == ScalarType::Double ? ScalarType::Double : ScalarType::Float;
  const V x = x0.dtype == ct ? x0 : b.convert(x0, ct);
  return g.batched ? x : b.reshape(x, {1, g.C, g.w.H, g.w.W});
}

/// `y: [N, C, OH, OW]` back to the result's layout and dtype `t`.
template <class B, class V>
V pool_lower_result(B& b, V y, const PoolGeom& g, ScalarType t) {
  if (!g.batched) y = b.reshape(y, {g.C, g.w.OH, g.w.OW});
  return y.dtype == t ? y : b.convert(y, t);
}

/// The lowering of max_pool2d and avg_pool2d: stablehlo.reduce_window (max from -inf, NaN
/// selected where a window holds one; or a sum divided by the per-position divisor as a
/// constant), the high padding extended for ceil_mode; a dilated max window as the maximum of
/// strided slices of the padded input.
template <class B, class V>
V pool_lower(B& b, const V& x0, const PoolGeom& g) {
  using RO = conv_param_t<&B::reduce_window, 2>;
  const torchtpu::detail::Window2dArgs& a = g.w;
  const bool mx = a.kind == torchtpu::detail::Window2dArgs::Kind::max;
  const V x = pool_lower_input(b, x0, g);
  const ScalarType ct = x.dtype;
  const int64_t N = x.dims[0], hi_h = std::max(a.ph, (a.OH - 1) * a.sh + a.dh * (a.kh - 1) + 1 - a.H - a.ph);
  const int64_t hi_w = std::max(a.pw, (a.OW - 1) * a.sw + a.dw * (a.kw - 1) + 1 - a.W - a.pw);
  const V init = b.constant(mx ? -INFINITY : 0.0, ct);
  // the maximum of `v` over each window (padding: `pad`)
  auto window_max = [&](const V& v, const V& pad) {
    if (a.dh == 1 && a.dw == 1)
      return b.reduce_window(v, pad, RO::Max, {1, 1, a.kh, a.kw}, {1, 1, a.sh, a.sw},
                             {{0, 0}, {0, 0}, {a.ph, hi_h}, {a.pw, hi_w}});
    const V vp = b.pad(v, pad, {0, 0, a.ph, a.pw}, {0, 0, hi_h, hi_w});
    V m;
    for (int64_t i = 0; i < a.kh; ++i)
      for (int64_t j = 0; j < a.kw; ++j) {
        const V s = b.slice(vp, {0, 0, i * a.dh, j * a.dw},
                            {N, g.C, i * a.dh + (a.OH - 1) * a.sh + 1, j * a.dw + (a.OW - 1) * a.sw + 1}, {1, 1, a.sh, a.sw});
        m = i == 0 && j == 0 ? s : b.maximum(m, s);
      }
    return m;
  };
  V y;
  if (mx) {
    // NaN where the window holds one (torch), found from a 0/1 mask of `x != x`: XLA's CPU
    // plugin's maximum drops NaN (as device/lower.hpp's lower_reduce notes)
    y = window_max(x, init);
    const V nan = b.convert(b.compare("NE", x, x), ct);
    const V any = b.compare("GT", window_max(nan, b.constant(0.0, ct)), b.constant(0.0, ct, y.dims));
    y = b.select(any, b.constant(std::numeric_limits<double>::quiet_NaN(), ct, y.dims), y);
  } else {
    y = b.reduce_window(x, init, RO::Add, {1, 1, a.kh, a.kw}, {1, 1, a.sh, a.sw},
                        {{0, 0}, {0, 0}, {a.ph, hi_h}, {a.pw, hi_w}});
    std::vector<double> div(static_cast<size_t>(a.OH * a.OW));
    for (int64_t oh = 0; oh < a.OH; ++oh)
      for (int64_t ow = 0; ow < a.OW; ++ow)
        div[size_t(oh * a.OW + ow)] = double(std::max<int64_t>(torchtpu::detail::window_avg_divisor(a, oh, ow), 1));
    y = b.divide(y, b.broadcast_in_dim(b.constant_data(ct, {a.OH, a.OW}, div), y.dims, {2, 3}));
  }
  return pool_lower_result(b, y, g, x0.dtype);
}

/// Reads max_pool2d's or avg_pool2d's arguments.
template <class R>
PoolArgs pool_args(const R& r, std::string_view op, bool max) {
  PoolArgs a;
  a.kernel = conv_ints(r.to_ints("kernel_size"), op, "kernel_size");
  a.stride = conv_ints(r.to_ints("stride"), op, "stride");
  a.padding = conv_ints(r.to_ints("padding"), op, "padding");
  a.ceil_mode = r.to_bool("ceil_mode");
  if (max) {
    a.dilation = conv_ints(r.to_ints("dilation"), op, "dilation");
  } else {
    a.count_include_pad = r.to_bool("count_include_pad");
    a.has_divisor = !r.is_none("divisor_override");
    a.divisor_override = a.has_divisor ? r.to_int("divisor_override") : 0;
  }
  return a;
}

}  // namespace detail

/// 2-D max pooling (torch.nn.functional.max_pool2d): the maximum over each window; padding
/// counts as -inf, a NaN in a window gives NaN.
///
/// **Shapes:** `input: [N, C, H, W]` or `[C, H, W]` → `[N, C, OH, OW]` (or `[C, OH, OW]`) with
/// `OH = (H + 2p - d (k - 1) - 1) / s + 1`, rounded up with `ceil_mode` (the last window must
/// start inside the input). `kernel_size`, `stride` (empty: the kernel size), `padding`,
/// `dilation`: one or two values.
/// **Dtypes:** float16, bfloat16, float32, float64 (exact in every dtype).
/// **Errors:** TypeError for a non-floating input; ShapeError for another rank, a zero C/H/W
/// or an empty output; ValueError for lists of other lengths, non-positive kernel, stride or
/// dilation, padding over half the kernel (naming the op and the operand).
/// **Source:** torch max_pool2d (aten/src/ATen/native/DilatedMaxPool2d.cpp, Pool.h).
/// **Example:** tests/ops/test_conv.cpp, block `max-pool2d`.
struct MaxPool2dOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "max_pool2d", aten = "aten::max_pool2d";
  static constexpr std::string_view schema =
      "aten::max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, "
      "bool ceil_mode=False) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::floating();
  /// Non-tensor arguments.
  using Args = detail::PoolArgs;
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return detail::pool_args(r, aten, true); }
  /// Dtype and shape rule (detail::pool_geom).
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    return TensorMeta{in[0].dtype, detail::pool_geom(in, a, true, aten).out_sizes(), Device{}, true};
  }
  /// CPU kernel (detail::pool_cpu).
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    const TensorMeta m{dtype_of<T>(), in[0].sizes(), Device{}, true};
    detail::pool_cpu(detail::pool_geom(std::span<const TensorMeta>(&m, 1), a, true, aten), in[0], out);
  }
  /// StableHLO (detail::pool_lower).
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims&) {
    const TensorMeta m{in[0].dtype, Dims(in[0].dims.begin(), in[0].dims.end()), Device{}, true};
    return detail::pool_lower(b, in[0], detail::pool_geom(std::span<const TensorMeta>(&m, 1), a, true, aten));
  }
};

/// 2-D average pooling (torch.nn.functional.avg_pool2d): the sum over each window divided by
/// `divisor_override` when given, else by the window's size clipped to the padded input
/// (`count_include_pad`) or by its in-bounds count.
///
/// **Shapes:** as max_pool2d (no dilation).
/// **Dtypes:** float16, bfloat16, float32, float64 (16-bit types sum in float32 and round
/// once). torch 1.13 also allows int64 on the cpu; not here.
/// **Errors:** as max_pool2d; ValueError for a `divisor_override` that is not positive (torch
/// rejects 0 only).
/// **Source:** torch avg_pool2d (aten/src/ATen/native/AveragePool2d.cpp).
struct AvgPool2dOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "avg_pool2d", aten = "aten::avg_pool2d";
  static constexpr std::string_view schema =
      "aten::avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, "
      "bool count_include_pad=True, int? divisor_override=None) -> Tensor";
  ///@}
  /// The dtypes (floating; see the struct's docstring).
  static constexpr DtypeSet dtypes = DtypeSet::floating();
  /// Non-tensor arguments.
  using Args = detail::PoolArgs;
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return detail::pool_args(r, aten, false); }
  /// Dtype and shape rule (detail::pool_geom).
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    return TensorMeta{in[0].dtype, detail::pool_geom(in, a, false, aten).out_sizes(), Device{}, true};
  }
  /// CPU kernel (detail::pool_cpu).
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    const TensorMeta m{dtype_of<T>(), in[0].sizes(), Device{}, true};
    detail::pool_cpu(detail::pool_geom(std::span<const TensorMeta>(&m, 1), a, false, aten), in[0], out);
  }
  /// StableHLO (detail::pool_lower).
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims&) {
    const TensorMeta m{in[0].dtype, Dims(in[0].dims.begin(), in[0].dims.end()), Device{}, true};
    return detail::pool_lower(b, in[0], detail::pool_geom(std::span<const TensorMeta>(&m, 1), a, false, aten));
  }
};

/// 2-D adaptive average pooling (torch.nn.functional.adaptive_avg_pool2d): output cell (i, j)
/// averages rows `[floor(i H / OH), ceil((i + 1) H / OH))` and the columns likewise.
///
/// **Shapes:** `input: [N, C, H, W]` or `[C, H, W]`, `output_size: [OH, OW]` (or one value) →
/// `[N, C, OH, OW]` (or `[C, OH, OW]`).
/// **Dtypes:** float16, bfloat16, float32, float64 (16-bit types and float32 sum in float32,
/// float64 in float64; rounded once).
/// **Errors:** TypeError for a non-floating input; ShapeError for another rank or a zero
/// C/H/W; ValueError for an output_size of another length or with negative values.
/// **Source:** torch adaptive_avg_pool2d (aten/src/ATen/native/AdaptiveAveragePooling.cpp).
/// **Lowering:** stablehlo.reduce_window when the windows tile the input evenly, else two
/// stablehlo.dot_general with constant averaging matrices (the windows are rectangles).
struct AdaptiveAvgPool2dOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "adaptive_avg_pool2d", aten = "aten::adaptive_avg_pool2d";
  static constexpr std::string_view schema = "aten::adaptive_avg_pool2d(Tensor self, int[2] output_size) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::floating();
  /// Non-tensor arguments.
  struct Args {
    detail::ConvInts output_size;  ///< one or two values
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return Args{detail::conv_ints(r.to_ints("output_size"), aten, "output_size")}; }
  /// The geometry (output size in `w.OH`, `w.OW`). **Errors:** see the struct.
  static detail::PoolGeom geom(std::span<const TensorMeta> in, const Args& a) {
    detail::PoolGeom g;
    detail::pool_input(in, aten, g);
    const detail::ConvInts& o = a.output_size;
    if ((o.n != 1 && o.n != 2) || o.v[0] < 0 || o.v[o.n == 2 ? 1 : 0] < 0)
      throw ValueError(std::string(aten) + ": output_size must be one or two non-negative ints, got " +
                       detail::conv_ints_str(o.v, o.n) + " (operands " + describe(in) + ")");
    g.w.OH = o.v[0];
    g.w.OW = o.v[o.n == 2 ? 1 : 0];
    return g;
  }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    return TensorMeta{in[0].dtype, geom(in, a).out_sizes(), Device{}, true};
  }
  /// CPU kernel: sums in float32 (float64 for float64), rounded once.
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args&, Tensor<T>& out) {
    using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
    if (out.numel() == 0) return;
    const Tensor<T> x = in[0].contiguous();
    const int64_t H = x.size(-2), W = x.size(-1), OH = out.size(-2), OW = out.size(-1);
    const int64_t planes = x.numel() / (H * W);
    const T* xp = x.data_ptr();
    T* o = out.data_ptr();
    for (int64_t nc = 0; nc < planes; ++nc) {
      const T* xc = xp + nc * H * W;
      for (int64_t i = 0; i < OH; ++i) {
        const int64_t h0 = i * H / OH, h1 = ((i + 1) * H + OH - 1) / OH;
        for (int64_t j = 0; j < OW; ++j) {
          const int64_t w0 = j * W / OW, w1 = ((j + 1) * W + OW - 1) / OW;
          Acc s = 0;
          for (int64_t a = h0; a < h1; ++a)
            for (int64_t c = w0; c < w1; ++c) s += static_cast<Acc>(xc[a * W + c]);
          *o++ = convert<T>(s / Acc((h1 - h0) * (w1 - w0)));
        }
      }
    }
  }
  /// StableHLO (see the struct's docstring).
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims&) {
    using RO = detail::conv_param_t<&B::reduce_window, 2>;
    using DotDims = detail::conv_param_t<&B::dot_general, 2>;
    using Precision = detail::conv_param_t<&B::dot_general, 3>;
    const TensorMeta m{in[0].dtype, Dims(in[0].dims.begin(), in[0].dims.end()), Device{}, true};
    const detail::PoolGeom g = geom(std::span<const TensorMeta>(&m, 1), a);
    const V x = detail::pool_lower_input(b, in[0], g);
    const ScalarType ct = x.dtype;
    const int64_t N = x.dims[0], H = g.w.H, W = g.w.W, OH = g.w.OH, OW = g.w.OW;
    V y;
    if (OH > 0 && OW > 0 && H % OH == 0 && W % OW == 0) {
      const int64_t kh = H / OH, kw = W / OW;
      y = b.reduce_window(x, b.constant(0.0, ct), RO::Add, {1, 1, kh, kw}, {1, 1, kh, kw});
      y = b.divide(y, b.constant(double(kh * kw), ct, y.dims));
    } else {
      // averaging matrices: m[i, h] = 1 / |window i| for h in window i
      auto avg_matrix = [&](int64_t n, int64_t on) {
        std::vector<double> v(static_cast<size_t>(on * n), 0.0);
        for (int64_t i = 0; i < on; ++i) {
          const int64_t lo = i * n / on, hi = ((i + 1) * n + on - 1) / on;
          for (int64_t h = lo; h < hi; ++h) v[size_t(i * n + h)] = 1.0 / double(hi - lo);
        }
        return b.constant_data(ct, {on, n}, v);
      };
      const V x3 = b.reshape(x, {N * g.C, H, W});
      DotDims dw;
      dw.lhs_contract = {2};
      dw.rhs_contract = {1};
      const V t = b.dot_general(x3, avg_matrix(W, OW), dw, Precision::Highest);  // [P, H, OW]
      DotDims dh;
      dh.lhs_contract = {1};
      dh.rhs_contract = {1};
      const V u = b.dot_general(t, avg_matrix(H, OH), dh, Precision::Highest);  // [P, OW, OH]
      y = b.reshape(b.transpose(u, {0, 2, 1}), {N, g.C, OH, OW});
    }
    return detail::pool_lower_result(b, y, g, in[0].dtype);
  }
};

namespace detail {
/// The pooling arguments of the front-end functions.
inline PoolArgs pool_front(std::string_view op, const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
                           const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, bool ceil_mode) {
  PoolArgs a;
  a.kernel = conv_ints(kernel, op, "kernel_size");
  a.stride = conv_ints(stride, op, "stride");
  a.padding = conv_ints(padding, op, "padding");
  a.dilation = conv_ints(dilation, op, "dilation");
  a.ceil_mode = ceil_mode;
  return a;
}
/// Runs one-operand op `Op` on `x`, typed or run-time typed.
template <class Op, class X>
X pool_call(const X& x, const typename Op::Args& a) {
  if constexpr (std::is_same_v<X, AnyTensor>) return call<Op>(std::span<const AnyTensor>(&x, 1), a);
  else return call_typed<Op, typename X::value_type>(std::span<const X>(&x, 1), a);
}
}  // namespace detail

}  // namespace ops

/// 2-D max pooling of `x: [N, C, H, W]` or `[C, H, W]` (torch.nn.functional.max_pool2d's
/// argument order; `stride` empty: the kernel size). See ops::MaxPool2dOp.
template <element T, int Rank>
Tensor<T> max_pool2d(const Tensor<T, Rank>& x, const std::vector<int64_t>& kernel_size,
                     const std::vector<int64_t>& stride = {}, const std::vector<int64_t>& padding = {0},
                     const std::vector<int64_t>& dilation = {1}, bool ceil_mode = false) {
  return ops::detail::pool_call<ops::MaxPool2dOp>(
      Tensor<T>(x), ops::detail::pool_front("aten::max_pool2d", kernel_size, stride, padding, dilation, ceil_mode));
}
/// Run-time typed `max_pool2d`.
template <std::same_as<AnyTensor> A>
A max_pool2d(const A& x, const std::vector<int64_t>& kernel_size, const std::vector<int64_t>& stride = {},
             const std::vector<int64_t>& padding = {0}, const std::vector<int64_t>& dilation = {1}, bool ceil_mode = false) {
  return ops::detail::pool_call<ops::MaxPool2dOp>(
      x, ops::detail::pool_front("aten::max_pool2d", kernel_size, stride, padding, dilation, ceil_mode));
}

/// 2-D average pooling (torch.nn.functional.avg_pool2d's argument order). See ops::AvgPool2dOp.
template <element T, int Rank>
Tensor<T> avg_pool2d(const Tensor<T, Rank>& x, const std::vector<int64_t>& kernel_size,
                     const std::vector<int64_t>& stride = {}, const std::vector<int64_t>& padding = {0},
                     bool ceil_mode = false, bool count_include_pad = true,
                     std::optional<int64_t> divisor_override = std::nullopt) {
  ops::detail::PoolArgs a = ops::detail::pool_front("aten::avg_pool2d", kernel_size, stride, padding, {1}, ceil_mode);
  a.count_include_pad = count_include_pad;
  a.has_divisor = divisor_override.has_value();
  a.divisor_override = divisor_override.value_or(0);
  return ops::detail::pool_call<ops::AvgPool2dOp>(Tensor<T>(x), a);
}
/// Run-time typed `avg_pool2d`.
template <std::same_as<AnyTensor> A>
A avg_pool2d(const A& x, const std::vector<int64_t>& kernel_size, const std::vector<int64_t>& stride = {},
             const std::vector<int64_t>& padding = {0}, bool ceil_mode = false, bool count_include_pad = true,
             std::optional<int64_t> divisor_override = std::nullopt) {
  ops::detail::PoolArgs a = ops::detail::pool_front("aten::avg_pool2d", kernel_size, stride, padding, {1}, ceil_mode);
  a.count_include_pad = count_include_pad;
  a.has_divisor = divisor_override.has_value();
  a.divisor_override = divisor_override.value_or(0);
  return ops::detail::pool_call<ops::AvgPool2dOp>(x, a);
}

/// 2-D adaptive average pooling to `output_size` (`[OH, OW]` or one value). See
/// ops::AdaptiveAvgPool2dOp.
template <element T, int Rank>
Tensor<T> adaptive_avg_pool2d(const Tensor<T, Rank>& x, const std::vector<int64_t>& output_size) {
  return ops::detail::pool_call<ops::AdaptiveAvgPool2dOp>(
      Tensor<T>(x), ops::AdaptiveAvgPool2dOp::Args{ops::detail::conv_ints(output_size, "aten::adaptive_avg_pool2d", "output_size")});
}
/// Run-time typed `adaptive_avg_pool2d`.
template <std::same_as<AnyTensor> A>
A adaptive_avg_pool2d(const A& x, const std::vector<int64_t>& output_size) {
  return ops::detail::pool_call<ops::AdaptiveAvgPool2dOp>(
      x, ops::AdaptiveAvgPool2dOp::Args{ops::detail::conv_ints(output_size, "aten::adaptive_avg_pool2d", "output_size")});
}

}  // namespace torchtpu
