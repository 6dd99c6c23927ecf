// torchtpu/ops/pool.hpp — operator library, pooling (the convolution family's second file,
// ops/conv.hpp holds the convolutions, ops/pool_indices.hpp the max poolings with indices):
// max_pool2d, max_pool1d, avg_pool2d, avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool1d.
// Each op is one definition (ops/library.hpp) that the typed API, `AnyTensor`, the eager PJRT
// devices and model graphs all call. A 1-D pooling is the 2-D one with H = 1 (one geometry,
// one kernel, one lowering). float32 runs fuse/window.hpp's vector kernels (adaptive pooling:
// a float32-accumulating loop); float16 and bfloat16 convert to float32, run the same kernels
// and round once; float64 (and integer max pooling) run fuse/window.hpp's plain loops in their
// own type. Tests: tests/ops/test_conv.cpp, tests/ops/test_pool.cpp,
// tests/device_ops/test_device_conv.cpp, tests/device_ops/test_device_pool.cpp, tests/jit (models).
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

#include "../fuse/window.hpp"  // Window2dArgs, window2d_typed, window_avg_divisor
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
/// A 1-D pooling is a 2-D one with `H = 1` (kernel 1, stride 1, no padding along H).
struct PoolGeom {
  int nsp = 2;                            ///< spatial rank: 2 (`[N, C, H, W]`) or 1 (`[N, C, L]`, H = 1)
  bool batched = true;                    ///< `[N, C, ...]` (else `[C, ...]`)
  int64_t N = 1, C = 1;                   ///< batch, channels
  torchtpu::detail::Window2dArgs w;       ///< geometry (no data pointers)
  /// The result's shape.
  Dims out_sizes() const {
    if (nsp == 1) return batched ? Dims{N, C, w.OW} : Dims{C, w.OW};
    return batched ? Dims{N, C, w.OH, w.OW} : Dims{C, w.OH, w.OW};
  }
  /// The result's shape as a list (a lowering's).
  std::vector<int64_t> out_dims() const {
    const Dims d = out_sizes();
    return std::vector<int64_t>(d.begin(), d.end());
  }
};

/// PyTorch's pooling output size (pooling_output_shape, aten/src/ATen/native/Pool.h).
inline int64_t pool_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  int64_t o = conv_floor_div(in + 2 * p - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0), s) + 1;
  if (ceil_mode && (o - 1) * s >= in + p) --o;  // the last window must start inside the input
  return o;
}

/// Checks the one operand of a pooling of spatial rank `g.nsp` (set by the caller): floating
/// (or, with `integers`, any dtype but bool), `[C, H, W]` or `[N, C, H, W]` (1-D: `[C, L]` or
/// `[N, C, L]`) with non-zero C and spatial sizes. Fills the batch layout and input size of `g`.
/// **Errors:** TypeError, ShapeError naming `op` and the operand.
inline void pool_input(std::span<const TensorMeta> in, std::string_view op, PoolGeom& g, bool integers = false) {
  auto where = [&] { return std::string(" (operands " + describe(in) + ")"); };  // built only for an error
  if (in.size() != 1 || !in[0].defined) throw ValueError(std::string(op) + ": expected one operand" + where());
  const TensorMeta& x = in[0];
  if (integers && x.dtype == ScalarType::Bool)
    throw TypeError(std::string(op) + ": expected a numeric input (not bool), got bool" + where());
  if (!integers && !is_floating(x.dtype))
    throw TypeError(std::string(op) + ": expected a floating point input (float16, bfloat16, float32, float64), got " +
                    std::string(dtype_name(x.dtype)) + where());
  const int r = g.nsp + 1;  // unbatched rank
  if (x.dim() != r && x.dim() != r + 1)
    throw ShapeError(std::string(op) + (g.nsp == 1 ? ": expected a 2-D [C, L] or 3-D [N, C, L] input"
                                                   : ": expected a 3-D [C, H, W] or 4-D [N, C, H, W] input") + where());
  for (int i = x.dim() - r; i < x.dim(); ++i)
    if (x.sizes[i] == 0) throw ShapeError(std::string(op) + ": expected non-zero sizes in every dim but the batch" + where());
  g.batched = x.dim() == r + 1;
  g.N = g.batched ? x.sizes[0] : 1;
  g.C = x.sizes[x.dim() - r];
  g.w.H = g.nsp == 1 ? 1 : x.sizes[x.dim() - 2];
  g.w.W = x.sizes[x.dim() - 1];
  g.w.planes = g.N * g.C;
}

/// The geometry of max (`max`) or average pooling of `in` with `a`, of spatial rank `nsp` (2,
/// or 1: one value per list, H = 1), checked as torch checks it (`integers`: a max pooling that
/// takes integer inputs). **Errors:** as pool_input; ValueError naming `op` for lists of another
/// length than 1 or 2 (1-D: 1), non-positive kernel/stride/dilation/divisor, padding over half
/// the kernel; ShapeError when the output would be empty.
inline PoolGeom pool_geom(std::span<const TensorMeta> in, const PoolArgs& a, bool max, std::string_view op, int nsp = 2,
                          bool integers = false) {
  PoolGeom g;
  g.nsp = nsp;
  pool_input(in, op, g, integers);
  auto where = [&] { return std::string(" (operands " + describe(in) + ")"); };  // built only for an error
  // v0 (H) and v1 (W) of list `c`; a 1-D pooling takes one value for W (H keeps `v0`'s default)
  auto two = [&](const ConvInts& c, const char* what, int64_t& v0, int64_t& v1) {
    if (nsp == 1) {
      if (c.n != 1) throw ValueError(std::string(op) + ": " + what + " must be a single int, got " + conv_ints_str(c.v, c.n) + where());
      v1 = c.v[0];
      return;
    }
    if (c.n != 1 && c.n != 2)
      throw ValueError(std::string(op) + ": " + what + " must be a single int or two ints, got " + conv_ints_str(c.v, c.n) + where());
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
  auto str = [nsp](const int64_t* v) { return conv_ints_str(v + 2 - nsp, nsp); };  // the spatial dims'
  if (w.kh <= 0 || w.kw <= 0 || w.sh <= 0 || w.sw <= 0 || w.dh <= 0 || w.dw <= 0)
    throw ValueError(std::string(op) + ": kernel_size, stride and dilation must be positive, got kernel_size " + str(k) +
                     ", stride " + str(s) + ", dilation " + str(d) + where());
  if (w.ph < 0 || w.pw < 0 || w.ph > w.kh / 2 || w.pw > w.kw / 2)
    throw ValueError(std::string(op) + ": padding " + str(p) + " must be non-negative and at most half of kernel_size " +
                     str(k) + where());
  if (a.has_divisor && a.divisor_override <= 0)
    throw ValueError(std::string(op) + ": divisor_override must be positive, got " + std::to_string(a.divisor_override) + where());
  w.OH = pool_out(w.H, w.kh, w.sh, w.ph, w.dh, a.ceil_mode);
  w.OW = pool_out(w.W, w.kw, w.sw, w.pw, w.dw, a.ceil_mode);
  if (w.OH < 1 || w.OW < 1) {
    const int64_t o[2] = {w.OH, w.OW};
    throw ShapeError(std::string(op) + ": the output size " + str(o) + " is too small (kernel_size " + str(k) + ", stride " +
                     str(s) + ", padding " + str(p) + ", dilation " + str(d) + ")" + where());
  }
  w.count_include_pad = a.count_include_pad;
  w.divisor_override = a.has_divisor ? a.divisor_override : 0;
  return g;
}

/// The cpu kernel of the max and average poolings (see the file's header): fuse/window.hpp's
/// kernels (window2d_typed: float32's vector kernels, the plain loops in float64 and in an
/// integer type). `out` is contiguous.
template <element T>
void pool_cpu(const PoolGeom& g, const Tensor<T>& xin, Tensor<T>& out) {
  if (out.numel() == 0) return;
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
    const Tensor<float> x = Tensor<float>(xin.template to<float>());
    Tensor<float> r = Tensor<float>::empty(out.sizes());
    torchtpu::detail::window2d_typed<float>(g.w, x.data_ptr(), r.data_ptr());
    out.copy_(r.template to<T>());
  } else {
    const Tensor<T> x = xin.contiguous();
    torchtpu::detail::window2d_typed<T>(g.w, x.data_ptr(), out.data_ptr());
  }
}

/// The dtype a pooling lowering computes in: float32 for the 16-bit types, else the input's.
inline ScalarType pool_compute_dtype(ScalarType t) {
  return t == ScalarType::Half || t == ScalarType::BFloat16 ? ScalarType::Float : t;
}

/// The input `x` of a pooling lowering in its computation dtype (pool_compute_dtype), 4-D
/// `[N, C, H, W]` (a 1-D pooling's `[N, C, 1, L]`).
template <class B, class V>
V pool_lower_input(B& b, const V& x0, const PoolGeom& g) {
  const ScalarType ct = pool_compute_dtype(x0.dtype);
  const V x = x0.dtype == ct ? x0 : b.convert(x0, ct);
  if (g.batched && g.nsp == 2) return x;
  return b.reshape(x, {g.N, g.C, g.w.H, g.w.W});
}

/// `y: [N, C, OH, OW]` back to the result's layout (pool_geom's out_sizes) and dtype `t`.
template <class B, class V>
V pool_lower_result(B& b, V y, const PoolGeom& g, ScalarType t) {
  if (!g.batched || g.nsp == 1) y = b.reshape(y, g.out_dims());
  return y.dtype == t ? y : b.convert(y, t);
}

/// The scalar a maximum starts from in dtype `t` (shape `dims`): -inf, or an integer type's
/// lowest value (fuse/window.hpp's window_lowest).
template <class B>
auto pool_lowest(B& b, ScalarType t, std::vector<int64_t> dims = {}) {
  if (is_floating(t)) return b.constant(-INFINITY, t, std::move(dims));
  const int64_t lo = t == ScalarType::Int64   ? std::numeric_limits<int64_t>::lowest()
                     : t == ScalarType::Int32 ? int64_t(std::numeric_limits<int32_t>::lowest())
                                              : int64_t(0);  // uint8, bool
  return b.constant_int(lo, t, std::move(dims));
}

/// The lowering of the max and average poolings (1-D: H = 1): stablehlo.reduce_window (max from
/// -inf, or an integer type's lowest value, NaN selected where a window holds one; or a sum
/// divided by the per-position divisor as a constant), the high padding extended for ceil_mode;
/// a dilated max window as the maximum of strided slices of the padded input.
template <class B, class V>
V pool_lower(B& b, const V& x0, const PoolGeom& g) {
  using RO = conv_param_t<&B::reduce_window, 2>;
  const torchtpu::detail::Window2dArgs& a = g.w;
  const bool mx = a.kind == torchtpu::detail::Window2dArgs::Kind::max;
  const V x = pool_lower_input(b, x0, g);
  const ScalarType ct = x.dtype;
  const int64_t N = x.dims[0], hi_h = std::max(a.ph, (a.OH - 1) * a.sh + a.dh * (a.kh - 1) + 1 - a.H - a.ph);
  const int64_t hi_w = std::max(a.pw, (a.OW - 1) * a.sw + a.dw * (a.kw - 1) + 1 - a.W - a.pw);
  const V init = mx ? pool_lowest(b, ct) : b.constant(0.0, ct);
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
    y = window_max(x, init);
    if (is_floating(ct)) {
      // NaN where the window holds one (torch), found from a 0/1 mask of `x != x`: XLA's CPU
      // plugin's maximum drops NaN (as device/lower.hpp's lower_reduce notes)
      const V nan = b.convert(b.compare("NE", x, x), ct);
      const V any = b.compare("GT", window_max(nan, b.constant(0.0, ct)), b.constant(0.0, ct, y.dims));
      y = b.select(any, b.constant(std::numeric_limits<double>::quiet_NaN(), ct, y.dims), y);
    }
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

/// Reads the arguments of a max (`max`) or average pooling of spatial rank `nsp` (avg_pool1d
/// has no divisor_override).
template <class R>
PoolArgs pool_args(const R& r, std::string_view op, bool max, int nsp = 2) {
  PoolArgs a;
  a.kernel = conv_ints(r.to_ints("kernel_size"), op, "kernel_size");
  a.stride = conv_ints(r.to_ints("stride"), op, "stride");
  a.padding = conv_ints(r.to_ints("padding"), op, "padding");
  a.ceil_mode = r.to_bool("ceil_mode");
  if (max) {
    a.dilation = conv_ints(r.to_ints("dilation"), op, "dilation");
  } else {
    a.count_include_pad = r.to_bool("count_include_pad");
    a.has_divisor = nsp == 2 && !r.is_none("divisor_override");
    a.divisor_override = a.has_divisor ? r.to_int("divisor_override") : 0;
  }
  return a;
}

/// The geometry of a pooling op's lowering from its operand `x` (a builder value).
template <class V>
PoolGeom pool_geom_of(const V& x, const PoolArgs& a, bool max, std::string_view op, int nsp, bool integers) {
  const TensorMeta m{x.dtype, Dims(x.dims.begin(), x.dims.end()), Device{}, true};
  return pool_geom(std::span<const TensorMeta>(&m, 1), a, max, op, nsp, integers);
}

/// The geometry of a pooling op's cpu kernel from its operand `x`.
template <element T>
PoolGeom pool_geom_of(const Tensor<T>& x, const PoolArgs& a, bool max, std::string_view op, int nsp, bool integers) {
  const TensorMeta m{dtype_of<T>(), x.sizes(), Device{}, true};
  return pool_geom(std::span<const TensorMeta>(&m, 1), a, max, op, nsp, integers);
}

/// The members of the max and average pooling ops (names, schema and dtypes are the op's own):
/// spatial rank `Nsp`, max (`Max`) or average; integer inputs pass the geometry with `Ints` (the
/// dtype set then says which).
template <class Self, int Nsp, bool Max, bool Ints = false>
struct PoolBase {
  /// Non-tensor arguments.
  using Args = PoolArgs;
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return pool_args(r, Self::aten, Max, Nsp); }
  /// Dtype and shape rule (detail::pool_geom).
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    return TensorMeta{in[0].dtype, pool_geom(in, a, Max, Self::aten, Nsp, Ints).out_sizes(), Device{}, true};
  }
  /// CPU kernel (detail::pool_cpu).
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    pool_cpu(pool_geom_of(in[0], a, Max, Self::aten, Nsp, Ints), in[0], out);
  }
  /// StableHLO (detail::pool_lower).
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims&) {
    return pool_lower(b, in[0], pool_geom_of(in[0], a, Max, Self::aten, Nsp, Ints));
  }
};

}  // namespace detail

/// 2-D max pooling (torch.nn.functional.max_pool2d): the maximum over each window; padding
/// counts as -inf (an integer type's lowest value), a NaN in a window gives NaN.
///
/// **Shapes:** `input: [N, C, H, W]` or `[C, H, W]` → `[N, C, OH, OW]` (or `[C, OH, OW]`) with
/// `OH = (H + 2p - d (k - 1) - 1) / s + 1`, rounded up with `ceil_mode` (the last window must
/// start inside the input). `kernel_size`, `stride` (empty: the kernel size), `padding`,
/// `dilation`: one or two values.
/// **Dtypes:** float16, bfloat16, float32, float64, uint8, int32, int64 (exact in every dtype;
/// torch 2's cpu takes every dtype but bool, torch 1.13's the floating ones).
/// **Errors:** TypeError for a bool input; ShapeError for another rank, a zero C/H/W or an
/// empty output; ValueError for lists of other lengths, non-positive kernel, stride or
/// dilation, padding over half the kernel (naming the op and the operand).
/// **Source:** torch max_pool2d (aten/src/ATen/native/DilatedMaxPool2d.cpp, Pool.h).
/// **Example:** tests/ops/test_pool.cpp, block `max-pool2d`.
struct MaxPool2dOp : detail::PoolBase<MaxPool2dOp, 2, true, true> {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "max_pool2d", aten = "aten::max_pool2d";
  static constexpr std::string_view schema =
      "aten::max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, "
      "bool ceil_mode=False) -> Tensor";
  ///@}
  /// The dtypes libtorch allows (torch 2's cpu).
  static constexpr DtypeSet dtypes = DtypeSet::numeric();
};

/// 1-D max pooling (torch.nn.functional.max_pool1d): max_pool2d of `input` with H = 1.
///
/// **Shapes:** `input: [N, C, L]` or `[C, L]` → `[N, C, OL]` (or `[C, OL]`), OL as max_pool2d's
/// OW; `kernel_size`, `stride` (empty: the kernel size), `padding`, `dilation`: one value each.
/// **Dtypes:** float16, bfloat16, float32, float64 (exact; torch's cpu max_pool1d kernel takes
/// floating inputs only; max_pool1d_with_indices takes integers too).
/// **Errors:** as max_pool2d; TypeError for a non-floating input; ValueError for lists of
/// another length than 1. torch's no-grad cpu kernel returns an empty result where the output
/// size is 0; here that is a ShapeError, as torch's other paths give.
/// **Source:** torch max_pool1d (aten/src/ATen/native/MaxPooling.cpp, Pooling.cpp).
struct MaxPool1dOp : detail::PoolBase<MaxPool1dOp, 1, true> {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "max_pool1d", aten = "aten::max_pool1d";
  static constexpr std::string_view schema =
      "aten::max_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], int[1] dilation=[1], "
      "bool ceil_mode=False) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::floating();
};

/// 2-D average pooling (torch.nn.functional.avg_pool2d): the sum over each window divided by
/// `divisor_override` when given, else by the window's size clipped to the padded input
/// (`count_include_pad`) or by its in-bounds count.
///
/// **Shapes:** as max_pool2d (no dilation).
/// **Dtypes:** float16, bfloat16, float32, float64 (16-bit types sum in float32 and round
/// once) and int64 as torch's cpu kernel: the sum in int64 divided with truncation toward zero
/// (C++ `/`; StableHLO's integer divide), e.g. a window summing to -21 over 6 elements gives -3.
/// **Errors:** as max_pool2d; TypeError for bool, uint8 and int32 inputs (torch: "not
/// implemented for 'Int'"); ValueError for a `divisor_override` that is not positive (torch
/// rejects 0 only).
/// **Source:** torch avg_pool2d (aten/src/ATen/native/AveragePool2d.cpp).
struct AvgPool2dOp : detail::PoolBase<AvgPool2dOp, 2, false, true> {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "avg_pool2d", aten = "aten::avg_pool2d";
  static constexpr std::string_view schema =
      "aten::avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, "
      "bool count_include_pad=True, int? divisor_override=None) -> Tensor";
  ///@}
  /// The dtypes (floating and int64, as torch's cpu kernel; see the struct's docstring).
  static constexpr DtypeSet dtypes = DtypeSet::of({ScalarType::Half, ScalarType::BFloat16, ScalarType::Float,
                                                   ScalarType::Double, ScalarType::Int64});
};

/// 1-D average pooling (torch.nn.functional.avg_pool1d): avg_pool2d of `input` with H = 1.
///
/// **Shapes:** `input: [N, C, L]` or `[C, L]` → `[N, C, OL]` (or `[C, OL]`); `kernel_size`,
/// `stride` (empty: the kernel size), `padding`: one value each.
/// **Dtypes:** float16, bfloat16, float32, float64, int64 (as avg_pool2d: int64 truncates).
/// **Errors:** as avg_pool2d; ValueError for lists of another length than 1.
/// **Source:** torch avg_pool1d (aten/src/ATen/native/Pooling.cpp: avg_pool2d of the input
/// unsqueezed at -2).
struct AvgPool1dOp : detail::PoolBase<AvgPool1dOp, 1, false, true> {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "avg_pool1d", aten = "aten::avg_pool1d";
  static constexpr std::string_view schema =
      "aten::avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], bool ceil_mode=False, "
      "bool count_include_pad=True) -> Tensor";
  ///@}
  /// The dtypes (floating and int64, as torch's cpu kernel; see the struct's docstring).
  static constexpr DtypeSet dtypes = DtypeSet::of({ScalarType::Half, ScalarType::BFloat16, ScalarType::Float,
                                                   ScalarType::Double, ScalarType::Int64});
};

namespace detail {

/// Arguments of the adaptive poolings.
struct AdaptiveArgs {
  ConvInts output_size;  ///< one or two values (1-D: one)
};

/// The first row of adaptive window `i` of `on` over `n` rows: floor(i n / on).
constexpr int64_t adaptive_start(int64_t i, int64_t n, int64_t on) { return i * n / on; }
/// One past the last row of adaptive window `i`: ceil((i + 1) n / on).
constexpr int64_t adaptive_end(int64_t i, int64_t n, int64_t on) { return ((i + 1) * n + on - 1) / on; }

/// The geometry of an adaptive pooling of spatial rank `nsp` (output size in `w.OH`, `w.OW`;
/// a 1-D pooling's OH is 1). **Errors:** as pool_input; ValueError naming `op` for an
/// output_size of another length (2-D: one or two values; 1-D: one) or with negative values.
inline PoolGeom adaptive_geom(std::span<const TensorMeta> in, const AdaptiveArgs& a, std::string_view op, int nsp) {
  PoolGeom g;
  g.nsp = nsp;
  pool_input(in, op, g);
  const ConvInts& o = a.output_size;
  const bool count_ok = nsp == 1 ? o.n == 1 : o.n == 1 || o.n == 2;
  if (!count_ok || o.v[0] < 0 || o.v[o.n == 2 ? 1 : 0] < 0)
    throw ValueError(std::string(op) + ": output_size must be " + (nsp == 1 ? "one non-negative int" : "one or two non-negative ints") +
                     ", got " + conv_ints_str(o.v, o.n) + " (operands " + describe(in) + ")");
  g.w.OH = nsp == 1 ? 1 : o.v[0];
  g.w.OW = o.v[o.n == 2 ? 1 : 0];
  return g;
}

/// The cpu kernel of adaptive average pooling: sums in float32 (float64 for float64), rounded
/// once. `out` is contiguous.
template <element T>
void adaptive_avg_cpu(const PoolGeom& g, const Tensor<T>& xin, Tensor<T>& out) {
  using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
  if (out.numel() == 0) return;
  const Tensor<T> x = xin.contiguous();
  const int64_t H = g.w.H, W = g.w.W, OH = g.w.OH, OW = g.w.OW;
  const T* xp = x.data_ptr();
  T* o = out.data_ptr();
  for (int64_t nc = 0; nc < g.w.planes; ++nc) {
    const T* xc = xp + nc * H * W;
    for (int64_t i = 0; i < OH; ++i) {
      const int64_t h0 = adaptive_start(i, H, OH), h1 = adaptive_end(i, H, OH);
      for (int64_t j = 0; j < OW; ++j) {
        const int64_t w0 = adaptive_start(j, W, OW), w1 = adaptive_end(j, W, OW);
        Acc s = 0;
        for (int64_t a = h0; a < h1; ++a)
          for (int64_t c = w0; c < w1; ++c) s += static_cast<Acc>(xc[a * W + c]);
        *o++ = convert<T>(s / Acc((h1 - h0) * (w1 - w0)));
      }
    }
  }
}

/// The lowering of adaptive average pooling: stablehlo.reduce_window when the windows tile the
/// input evenly, else two stablehlo.dot_general with constant averaging matrices (the windows
/// are rectangles).
template <class B, class V>
V adaptive_avg_lower(B& b, const V& x0, const PoolGeom& g) {
  using RO = conv_param_t<&B::reduce_window, 2>;
  using DotDims = conv_param_t<&B::dot_general, 2>;
  using Precision = conv_param_t<&B::dot_general, 3>;
  const V x = pool_lower_input(b, x0, g);
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
        const int64_t lo = adaptive_start(i, n, on), hi = adaptive_end(i, n, on);
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
  return pool_lower_result(b, y, g, x0.dtype);
}

/// The members of the adaptive average poolings of spatial rank `Nsp` (names and schema are
/// the op's own).
template <class Self, int Nsp>
struct AdaptiveAvgBase {
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::floating();
  /// Non-tensor arguments.
  using Args = AdaptiveArgs;
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return Args{conv_ints(r.to_ints("output_size"), Self::aten, "output_size")}; }
  /// Dtype and shape rule (detail::adaptive_geom).
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    return TensorMeta{in[0].dtype, adaptive_geom(in, a, Self::aten, Nsp).out_sizes(), Device{}, true};
  }
  /// CPU kernel (detail::adaptive_avg_cpu).
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    const TensorMeta m{dtype_of<T>(), in[0].sizes(), Device{}, true};
    adaptive_avg_cpu(adaptive_geom(std::span<const TensorMeta>(&m, 1), a, Self::aten, Nsp), in[0], out);
  }
  /// StableHLO (detail::adaptive_avg_lower).
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims&) {
    const TensorMeta m{in[0].dtype, Dims(in[0].dims.begin(), in[0].dims.end()), Device{}, true};
    return adaptive_avg_lower(b, in[0], adaptive_geom(std::span<const TensorMeta>(&m, 1), a, Self::aten, Nsp));
  }
};

}  // namespace detail

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
struct AdaptiveAvgPool2dOp : detail::AdaptiveAvgBase<AdaptiveAvgPool2dOp, 2> {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "adaptive_avg_pool2d", aten = "aten::adaptive_avg_pool2d";
  static constexpr std::string_view schema = "aten::adaptive_avg_pool2d(Tensor self, int[2] output_size) -> Tensor";
  ///@}
};

/// 1-D adaptive average pooling (torch.nn.functional.adaptive_avg_pool1d): adaptive_avg_pool2d
/// of `input` with H = 1.
///
/// **Shapes:** `input: [N, C, L]` or `[C, L]`, `output_size: [OL]` → `[N, C, OL]` (or `[C, OL]`).
/// **Dtypes**, **lowering:** as adaptive_avg_pool2d. **Errors:** as adaptive_avg_pool2d;
/// ValueError for an output_size of another length than 1.
/// **Source:** torch adaptive_avg_pool1d (aten/src/ATen/native/Pooling.cpp).
struct AdaptiveAvgPool1dOp : detail::AdaptiveAvgBase<AdaptiveAvgPool1dOp, 1> {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "adaptive_avg_pool1d", aten = "aten::adaptive_avg_pool1d";
  static constexpr std::string_view schema = "aten::adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor";
  ///@}
};

namespace detail {
/// The pooling arguments of the front-end functions.
inline PoolArgs pool_front(std::string_view op, const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
                           const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, bool ceil_mode,
                           bool count_include_pad = true, std::optional<int64_t> divisor_override = std::nullopt) {
  PoolArgs a;
  a.kernel = conv_ints(kernel, op, "kernel_size");
  a.stride = conv_ints(stride, op, "stride");
  a.padding = conv_ints(padding, op, "padding");
  a.dilation = conv_ints(dilation, op, "dilation");
  a.ceil_mode = ceil_mode;
  a.count_include_pad = count_include_pad;
  a.has_divisor = divisor_override.has_value();
  a.divisor_override = divisor_override.value_or(0);
  return a;
}
/// The adaptive pooling arguments of the front-end functions.
inline AdaptiveArgs adaptive_front(std::string_view op, const std::vector<int64_t>& output_size) {
  return AdaptiveArgs{conv_ints(output_size, op, "output_size")};
}
/// Runs one-operand op `Op` on `x`, typed or run-time typed.
template <class Op, class X>
X pool_call(const X& x, const typename Op::Args& a) {
  if constexpr (std::is_same_v<X, AnyTensor>) return call<Op>(std::span<const AnyTensor>(&x, 1), a);
  else return call_typed<Op, typename X::value_type>(std::span<const X>(&x, 1), a);
}
}  // namespace detail

// Each op's entry point, compiled once in TORCHTPU_SEPARATE_OPS programs (ops/library.hpp).
TORCHTPU_LIBRARY_OP(MaxPool2dOp);
TORCHTPU_LIBRARY_OP(MaxPool1dOp);
TORCHTPU_LIBRARY_OP(AvgPool2dOp);
TORCHTPU_LIBRARY_OP(AvgPool1dOp);
TORCHTPU_LIBRARY_OP(AdaptiveAvgPool2dOp);
TORCHTPU_LIBRARY_OP(AdaptiveAvgPool1dOp);

}  // namespace ops

// The front-end functions (torch.nn.functional's argument order; `stride` empty: the kernel
// size; list arguments: one value or one per spatial dim). Each has a typed form (`Tensor<T>`)
// and a run-time typed one (`AnyTensor`); see the op structs for shapes, dtypes and errors.

/// 2-D max pooling of `x: [N, C, H, W]` or `[C, H, W]`. See ops::MaxPool2dOp.
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

/// 1-D max pooling of `x: [N, C, L]` or `[C, L]`. See ops::MaxPool1dOp.
template <element T, int Rank>
Tensor<T> max_pool1d(const Tensor<T, Rank>& x, const std::vector<int64_t>& kernel_size,
                     const std::vector<int64_t>& stride = {}, const std::vector<int64_t>& padding = {0},
                     const std::vector<int64_t>& dilation = {1}, bool ceil_mode = false) {
  return ops::detail::pool_call<ops::MaxPool1dOp>(
      Tensor<T>(x), ops::detail::pool_front("aten::max_pool1d", kernel_size, stride, padding, dilation, ceil_mode));
}
/// Run-time typed `max_pool1d`.
template <std::same_as<AnyTensor> A>
A max_pool1d(const A& x, const std::vector<int64_t>& kernel_size, const std::vector<int64_t>& stride = {},
             const std::vector<int64_t>& padding = {0}, const std::vector<int64_t>& dilation = {1}, bool ceil_mode = false) {
  return ops::detail::pool_call<ops::MaxPool1dOp>(
      x, ops::detail::pool_front("aten::max_pool1d", kernel_size, stride, padding, dilation, ceil_mode));
}

/// 2-D average pooling of `x: [N, C, H, W]` or `[C, H, W]`. See ops::AvgPool2dOp.
template <element T, int Rank>
Tensor<T> avg_pool2d(const Tensor<T, Rank>& x, const std::vector<int64_t>& kernel_size,
                     const std::vector<int64_t>& stride = {}, const std::vector<int64_t>& padding = {0},
                     bool ceil_mode = false, bool count_include_pad = true,
                     std::optional<int64_t> divisor_override = std::nullopt) {
  return ops::detail::pool_call<ops::AvgPool2dOp>(
      Tensor<T>(x), ops::detail::pool_front("aten::avg_pool2d", kernel_size, stride, padding, {1}, ceil_mode,
                                            count_include_pad, divisor_override));
}
/// Run-time typed `avg_pool2d`.
template <std::same_as<AnyTensor> A>
A avg_pool2d(const A& x, const std::vector<int64_t>& kernel_size, const std::vector<int64_t>& stride = {},
             const std::vector<int64_t>& padding = {0}, bool ceil_mode = false, bool count_include_pad = true,
             std::optional<int64_t> divisor_override = std::nullopt) {
  return ops::detail::pool_call<ops::AvgPool2dOp>(
      x, ops::detail::pool_front("aten::avg_pool2d", kernel_size, stride, padding, {1}, ceil_mode, count_include_pad,
                                 divisor_override));
}

/// 1-D average pooling of `x: [N, C, L]` or `[C, L]`. See ops::AvgPool1dOp.
template <element T, int Rank>
Tensor<T> avg_pool1d(const Tensor<T, Rank>& x, const std::vector<int64_t>& kernel_size,
                     const std::vector<int64_t>& stride = {}, const std::vector<int64_t>& padding = {0},
                     bool ceil_mode = false, bool count_include_pad = true) {
  return ops::detail::pool_call<ops::AvgPool1dOp>(
      Tensor<T>(x), ops::detail::pool_front("aten::avg_pool1d", kernel_size, stride, padding, {1}, ceil_mode, count_include_pad));
}
/// Run-time typed `avg_pool1d`.
template <std::same_as<AnyTensor> A>
A avg_pool1d(const A& x, const std::vector<int64_t>& kernel_size, const std::vector<int64_t>& stride = {},
             const std::vector<int64_t>& padding = {0}, bool ceil_mode = false, bool count_include_pad = true) {
  return ops::detail::pool_call<ops::AvgPool1dOp>(
      x, ops::detail::pool_front("aten::avg_pool1d", kernel_size, stride, padding, {1}, ceil_mode, count_include_pad));
}

/// 2-D adaptive average pooling to `output_size` (`[OH, OW]` or one value). See
/// ops::AdaptiveAvgPool2dOp.
template <element T, int Rank>
Tensor<T> adaptive_avg_pool2d(const Tensor<T, Rank>& x, const std::vector<int64_t>& output_size) {
  return ops::detail::pool_call<ops::AdaptiveAvgPool2dOp>(Tensor<T>(x),
                                                          ops::detail::adaptive_front("aten::adaptive_avg_pool2d", output_size));
}
/// Run-time typed `adaptive_avg_pool2d`.
template <std::same_as<AnyTensor> A>
A adaptive_avg_pool2d(const A& x, const std::vector<int64_t>& output_size) {
  return ops::detail::pool_call<ops::AdaptiveAvgPool2dOp>(x, ops::detail::adaptive_front("aten::adaptive_avg_pool2d", output_size));
}

/// 1-D adaptive average pooling of `x: [N, C, L]` or `[C, L]` to `output_size` (`[OL]`). See
/// ops::AdaptiveAvgPool1dOp.
template <element T, int Rank>
Tensor<T> adaptive_avg_pool1d(const Tensor<T, Rank>& x, const std::vector<int64_t>& output_size) {
  return ops::detail::pool_call<ops::AdaptiveAvgPool1dOp>(Tensor<T>(x),
                                                          ops::detail::adaptive_front("aten::adaptive_avg_pool1d", output_size));
}
/// Run-time typed `adaptive_avg_pool1d`.
template <std::same_as<AnyTensor> A>
A adaptive_avg_pool1d(const A& x, const std::vector<int64_t>& output_size) {
  return ops::detail::pool_call<ops::AdaptiveAvgPool1dOp>(x, ops::detail::adaptive_front("aten::adaptive_avg_pool1d", output_size));
}

}  // namespace torchtpu
