// torchtpu/ops/pool_indices.hpp — operator library, the max poolings with indices (the pooling
// family's third file, after ops/conv.hpp and ops/pool.hpp): max_pool2d_with_indices,
// max_pool1d_with_indices, adaptive_max_pool2d, adaptive_max_pool1d. Each has two results (the
// maxima and their int64 positions in the flattened H*W plane of their input channel, torch's
// convention: ops::multi_result) and is one definition (ops/library.hpp) that the typed API,
// `AnyTensor`, the eager PJRT devices and model graphs all call. A 1-D pooling is the 2-D one
// with H = 1 (pool.hpp's geometry), so its positions index the length L.
//
// One rule on every path, torch's (aten/src/ATen/native/cpu/MaxPoolKernel.cpp,
// AdaptiveMaxPoolKernel.cpp): each window is scanned in row-major order from -inf (an integer
// type's lowest value) at its first in-bounds position, and an element that is greater than the
// running maximum or is NaN takes its place. So the position is the first maximum's, or the
// last NaN's when the window holds one; padding never wins. The cpu kernel is that scan
// (max_indices_cpu, in float32 for the 16-bit types: exact); the lowerings compute the same
// from StableHLO ops that XLA and the TPU emulator both run (no variadic reduce_window):
// fixed windows as the same scan over the kh * kw strided slices of the padded input
// (stablehlo.compare/select), adaptive windows, whose sizes vary, in two separable passes
// (columns, then rows) of masked stablehlo.reduce (max, min, or) over a broadcast of the input.
// Tests: tests/ops/test_pool.cpp, tests/device_ops/test_device_pool.cpp, tests/conformance.
//
// Not in the umbrella header (torchtpu.hpp): include this file.
#pragma once
#include <algorithm>    // std::max, std::min
#include <array>        // std::array
#include <cstdint>      // int64_t
#include <limits>       // std::numeric_limits (NaN)
#include <span>         // std::span
#include <string_view>  // std::string_view
#include <type_traits>  // std::conditional_t, std::is_same_v
#include <utility>      // std::pair
#include <vector>       // std::vector

#include "../fuse/threads.hpp"  // parallel_chunks, chunks_for
#include "../fuse/window.hpp"   // window_lowest, window_is_nan
#include "library.hpp"          // TensorMeta, DtypeSet, ops::call_results
#include "pool.hpp"             // detail::PoolGeom, pool_geom, adaptive_geom, pool_lower_input, pool_lowest

namespace torchtpu {
namespace ops {

namespace detail {

/// The positions of one pooling window along one axis that lie inside the input: `start`,
/// `start + step`, ... below `end` (none when `start >= end`).
struct WindowSpan {
  int64_t start = 0;  ///< first position (torch's: the window's first position >= 0)
  int64_t step = 1;   ///< dilation
  int64_t end = 0;    ///< one past the last position, at most the input size
};

/// The spans of `on` fixed windows over `n` positions: window `o` covers `o s - p + i d` for
/// `i` in [0, k). **Source:** torch's loop bounds (aten/src/ATen/native/cpu/MaxPoolKernel.cpp).
inline std::vector<WindowSpan> fixed_spans(int64_t on, int64_t n, int64_t k, int64_t s, int64_t p, int64_t d) {
  std::vector<WindowSpan> r(static_cast<size_t>(on));
  for (int64_t o = 0; o < on; ++o) {
    WindowSpan& w = r[size_t(o)];
    w.start = o * s - p;
    w.step = d;
    w.end = std::min(w.start + (k - 1) * d + 1, n);
    if (w.start < 0) w.start += (-w.start + d - 1) / d * d;  // the first position >= 0
  }
  return r;
}

/// The spans of `on` adaptive windows over `n` positions (pool.hpp's adaptive_start/_end).
inline std::vector<WindowSpan> adaptive_spans(int64_t on, int64_t n) {
  std::vector<WindowSpan> r(static_cast<size_t>(on));
  for (int64_t o = 0; o < on; ++o) r[size_t(o)] = WindowSpan{adaptive_start(o, n, on), 1, adaptive_end(o, n, on)};
  return r;
}

/// The maximum of every window of `planes` contiguous `[H, W]` planes at `x` and its position
/// (`h W + w`): window `(oh, ow)` covers rows `rows[oh]` and columns `cols[ow]`; written as
/// `[planes, OH, OW]` to `vals` and `idx`. The scan of the file's header, compared in
/// opmath_t<T> (float32 for the 16-bit types, exact); split over the thread pool by planes.
template <element T>
void max_indices_cpu(const T* x, T* vals, int64_t* idx, int64_t planes, int64_t H, int64_t W,
                     std::span<const WindowSpan> rows, std::span<const WindowSpan> cols) {
  using C = opmath_t<T>;
  const int64_t OH = static_cast<int64_t>(rows.size()), OW = static_cast<int64_t>(cols.size());
  int64_t kh = 1, kw = 1;  // the largest window, for the work estimate
  for (const WindowSpan& r : rows) kh = std::max(kh, (r.end - r.start + r.step - 1) / r.step);
  for (const WindowSpan& c : cols) kw = std::max(kw, (c.end - c.start + c.step - 1) / c.step);
  auto run = [&](int64_t p0, int64_t p1) {
    for (int64_t pl = p0; pl < p1; ++pl) {
      const T* xc = x + pl * H * W;
      T* vo = vals + pl * OH * OW;
      int64_t* io = idx + pl * OH * OW;
      for (int64_t oh = 0; oh < OH; ++oh) {
        const WindowSpan& r = rows[size_t(oh)];
        for (int64_t ow = 0; ow < OW; ++ow) {
          const WindowSpan& c = cols[size_t(ow)];
          C m = torchtpu::detail::window_lowest<C>();
          int64_t mi = r.start * W + c.start;
          for (int64_t h = r.start; h < r.end; h += r.step)
            for (int64_t w = c.start; w < c.end; w += c.step) {
              const C v = static_cast<C>(xc[h * W + w]);
              if (v > m || torchtpu::detail::window_is_nan(v)) {
                m = v;
                mi = h * W + w;
              }
            }
          vo[oh * OW + ow] = convert<T>(m);
          io[oh * OW + ow] = mi;
        }
      }
    }
  };
  torchtpu::detail::parallel_chunks(planes, torchtpu::detail::chunks_for(planes * OH * OW * kh * kw, int64_t(1) << 16), 1, run);
}

/// The lowering of max pooling with indices over fixed windows (geometry `g`): the scan of the
/// file's header over the kh * kw strided slices of the input padded with the lowest value
/// (which never wins), each slice's positions from two iotas. {values, int64 positions}.
template <class B, class V>
std::array<V, 2> max_indices_lower_fixed(B& b, const V& x0, const PoolGeom& g) {
  const torchtpu::detail::Window2dArgs& a = g.w;
  const ScalarType I = ScalarType::Int64;
  const V x = pool_lower_input(b, x0, g);  // [N, C, H, W]
  const ScalarType ct = x.dtype;
  const int64_t N = x.dims[0], C = g.C, OH = a.OH, OW = a.OW;
  const int64_t hi_h = std::max(a.ph, (OH - 1) * a.sh + a.dh * (a.kh - 1) + 1 - a.H - a.ph);
  const int64_t hi_w = std::max(a.pw, (OW - 1) * a.sw + a.dw * (a.kw - 1) + 1 - a.W - a.pw);
  const V xp = b.pad(x, pool_lowest(b, ct), {0, 0, a.ph, a.pw}, {0, 0, hi_h, hi_w});
  const std::vector<int64_t> od{N, C, OH, OW}, o2{OH, OW};
  // position of window element (0, 0) of output (oh, ow) without the padding: oh sh W + ow sw
  const V base = b.add(b.multiply(b.iota(I, o2, 0), b.constant_int(a.sh * a.W, I, o2)),
                       b.multiply(b.iota(I, o2, 1), b.constant_int(a.sw, I, o2)));
  // the position before any element wins: each window's first in-bounds row and column
  std::vector<double> r0, c0;
  for (const WindowSpan& s : fixed_spans(OH, a.H, a.kh, a.sh, a.ph, a.dh)) r0.push_back(double(s.start * a.W));
  for (const WindowSpan& s : fixed_spans(OW, a.W, a.kw, a.sw, a.pw, a.dw)) c0.push_back(double(s.start));
  const V first = b.add(b.broadcast_in_dim(b.constant_data(I, {OH}, r0), o2, {0}),
                        b.broadcast_in_dim(b.constant_data(I, {OW}, c0), o2, {1}));
  V idx = b.broadcast_in_dim(first, od, {2, 3});
  V best = pool_lowest(b, ct, od);
  for (int64_t i = 0; i < a.kh; ++i)
    for (int64_t j = 0; j < a.kw; ++j) {
      const V s = b.slice(xp, {0, 0, i * a.dh, j * a.dw}, {N, C, i * a.dh + (OH - 1) * a.sh + 1, j * a.dw + (OW - 1) * a.sw + 1},
                          {1, 1, a.sh, a.sw});
      V take = b.compare("GT", s, best);
      if (is_floating(ct)) take = b.binary("or", take, b.compare("NE", s, s));
      best = b.select(take, s, best);
      const V at = b.add(base, b.constant_int((i * a.dh - a.ph) * a.W + j * a.dw - a.pw, I, o2));
      idx = b.select(take, b.broadcast_in_dim(at, od, {2, 3}), idx);
    }
  return {pool_lower_result(b, best, g, x0.dtype), pool_lower_result(b, idx, g, I)};
}

/// One separable pass of adaptive max pooling with indices: the maximum of `v: [A, L, R]` over
/// each of `on` adaptive windows along axis 1 and its position there (the file's rule: the last
/// NaN, else the first maximum), from masked reductions of `v` broadcast to `[A, on, L, R]`;
/// `carry` (`[A, L, R]` int64, or null) is what a position stands for. {values, positions or
/// the carried values at them}, `[A, on, R]`.
template <class B, class V>
std::array<V, 2> adaptive_max_pass(B& b, const V& v, const V* carry, int64_t on) {
  using RO = conv_param_t<&B::reduce, 2>;
  const ScalarType I = ScalarType::Int64, ct = v.dtype;
  const int64_t A = v.dims[0], L = v.dims[1], R = v.dims[2];
  const std::vector<int64_t> big{A, on, L, R}, win{on, L};
  std::vector<double> lo, hi;
  for (int64_t o = 0; o < on; ++o) {
    lo.push_back(double(adaptive_start(o, L, on)));
    hi.push_back(double(adaptive_end(o, L, on)));
  }
  const V l2 = b.iota(I, win, 1);  // window o holds position l when lo[o] <= l < hi[o]
  const V in2 = b.binary("and", b.compare("GE", l2, b.broadcast_in_dim(b.constant_data(I, {on}, lo), win, {0})),
                         b.compare("LT", l2, b.broadcast_in_dim(b.constant_data(I, {on}, hi), win, {0})));
  const V inside = b.broadcast_in_dim(in2, big, {1, 2});
  const V vb = b.broadcast_in_dim(v, big, {0, 2, 3});
  const V pos = b.iota(I, big, 2);
  const V isnan = b.compare("NE", vb, vb);
  const V nan = b.binary("and", inside, isnan), valid = b.binary("and", inside, b.unary("not", isnan));
  const V lowest = pool_lowest(b, ct, big), lowest0 = pool_lowest(b, ct);
  const V any_nan = b.reduce(nan, b.constant_int(0, ScalarType::Bool), RO::Or, {2});
  const V last_nan = b.reduce(b.select(nan, pos, b.constant_int(-1, I, big)), b.constant_int(-1, I), RO::Max, {2});
  // the maximum without NaN (XLA's CPU plugin's maximum drops NaN), then its first position
  const V mx = b.reduce(b.select(valid, vb, lowest), lowest0, RO::Max, {2});
  const V hit = b.binary("and", valid, b.compare("EQ", vb, b.broadcast_in_dim(mx, big, {0, 1, 3})));
  const V first_max = b.reduce(b.select(hit, pos, b.constant_int(L, I, big)), b.constant_int(L, I), RO::Min, {2});
  const V where = b.select(any_nan, last_nan, first_max);  // [A, on, R]
  const V at = b.compare("EQ", pos, b.broadcast_in_dim(where, big, {0, 1, 3}));
  // the value at that position (its own bits: -0.0 stays -0.0), NaN where the window has one
  V val = b.reduce(b.select(at, vb, lowest), lowest0, RO::Max, {2});
  val = b.select(any_nan, b.constant(std::numeric_limits<double>::quiet_NaN(), ct, val.dims), val);
  if (!carry) return {val, where};
  const V cb = b.broadcast_in_dim(*carry, big, {0, 2, 3});
  return {val, b.reduce(b.select(at, cb, b.constant_int(-1, I, big)), b.constant_int(-1, I), RO::Max, {2})};
}

/// The lowering of adaptive max pooling with indices (geometry `g`): adaptive_max_pass over the
/// columns, then over the rows carrying the column positions (the row-major scan's result:
/// the last NaN of the last row holding one, else the first maximum of the first row reaching
/// it). {values, int64 positions}.
template <class B, class V>
std::array<V, 2> max_indices_lower_adaptive(B& b, const V& x0, const PoolGeom& g) {
  const ScalarType I = ScalarType::Int64;
  const V x = pool_lower_input(b, x0, g);  // [N, C, H, W]
  const int64_t N = x.dims[0], P = N * g.C, H = g.w.H, W = g.w.W, OH = g.w.OH, OW = g.w.OW;
  const auto cols = adaptive_max_pass(b, b.reshape(x, {P * H, W, 1}), static_cast<const V*>(nullptr), OW);
  const V v1 = b.reshape(cols[0], {P, H, OW});
  const V flat = b.add(b.reshape(cols[1], {P, H, OW}), b.multiply(b.iota(I, {P, H, OW}, 1), b.constant_int(W, I, {P, H, OW})));
  const auto rows = adaptive_max_pass(b, v1, &flat, OH);  // [P, OH, OW]
  return {pool_lower_result(b, b.reshape(rows[0], {N, g.C, OH, OW}), g, x0.dtype),
          pool_lower_result(b, b.reshape(rows[1], {N, g.C, OH, OW}), g, I)};
}

/// The members of the max poolings with indices: spatial rank `Nsp`, fixed windows (pool.hpp's
/// PoolArgs; integer inputs too) or adaptive ones (`Adaptive`: AdaptiveArgs; floating only).
/// Names, schema and dtypes are the op's own.
template <class Self, int Nsp, bool Adaptive>
struct MaxIndicesBase {
  /// Two results: the maxima (the input's dtype) and their positions (int64).
  static constexpr size_t results = 2;
  /// Non-tensor arguments.
  using Args = std::conditional_t<Adaptive, AdaptiveArgs, PoolArgs>;
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) {
    if constexpr (Adaptive) return Args{conv_ints(r.to_ints("output_size"), Self::aten, "output_size")};
    else return pool_args(r, Self::aten, true, Nsp);
  }
  /// The geometry (pool.hpp's pool_geom or adaptive_geom; their errors).
  static PoolGeom geom(std::span<const TensorMeta> in, const Args& a) {
    if constexpr (Adaptive) return adaptive_geom(in, a, Self::aten, Nsp);
    else return pool_geom(in, a, true, Self::aten, Nsp, true);
  }
  /// Dtype and shape rule: values of the input's dtype and int64 positions, of one shape.
  static std::array<TensorMeta, 2> infer(std::span<const TensorMeta> in, const Args& a) {
    const Dims s = geom(in, a).out_sizes();
    return {TensorMeta{in[0].dtype, s, Device{}, true}, TensorMeta{ScalarType::Int64, s, Device{}, true}};
  }
  /// CPU kernel (detail::max_indices_cpu).
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, std::span<AnyTensor> out) {
    const TensorMeta m{dtype_of<T>(), in[0].sizes(), Device{}, true};
    const PoolGeom g = geom(std::span<const TensorMeta>(&m, 1), a);
    if (out[0].numel() == 0) return;
    const torchtpu::detail::Window2dArgs& w = g.w;
    const std::vector<WindowSpan> rows = Adaptive ? adaptive_spans(w.OH, w.H) : fixed_spans(w.OH, w.H, w.kh, w.sh, w.ph, w.dh);
    const std::vector<WindowSpan> cols = Adaptive ? adaptive_spans(w.OW, w.W) : fixed_spans(w.OW, w.W, w.kw, w.sw, w.pw, w.dw);
    const Tensor<T> x = in[0].contiguous();
    max_indices_cpu<T>(x.data_ptr(), out[0].get<T>().data_ptr(), out[1].get<int64_t>().data_ptr(), w.planes, w.H, w.W, rows, cols);
  }
  /// StableHLO (detail::max_indices_lower_fixed, max_indices_lower_adaptive).
  template <class B, class V>
  static std::array<V, 2> lower(B& b, std::span<const V> in, const Args& a, std::span<const TensorMeta>) {
    const TensorMeta m{in[0].dtype, Dims(in[0].dims.begin(), in[0].dims.end()), Device{}, true};
    const PoolGeom g = geom(std::span<const TensorMeta>(&m, 1), a);
    if constexpr (Adaptive) return max_indices_lower_adaptive(b, in[0], g);
    else return max_indices_lower_fixed(b, in[0], g);
  }
};

}  // namespace detail

/// 2-D max pooling with the maxima's positions (torch.nn.functional.max_pool2d with
/// `return_indices=True`): values as ops::MaxPool2dOp, and for each the position `h W + w` of
/// the element it came from in its input plane (the first maximum of the window in row-major
/// order, or its last NaN).
///
/// **Shapes:** as max_pool2d; values and indices have the same shape.
/// **Dtypes:** values: float16, bfloat16, float32, float64, uint8, int32, int64 (exact; torch
/// 2's cpu; torch 1.13's takes the floating ones); indices: int64.
/// **Errors:** as max_pool2d (TypeError for bool).
/// **Source:** torch max_pool2d_with_indices (aten/src/ATen/native/DilatedMaxPool2d.cpp,
/// cpu/MaxPoolKernel.cpp). **Lowering:** see the file's header.
/// **Example:** tests/ops/test_pool.cpp, block `max-pool2d-with-indices`.
struct MaxPool2dWithIndicesOp : detail::MaxIndicesBase<MaxPool2dWithIndicesOp, 2, false> {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "max_pool2d_with_indices", aten = "aten::max_pool2d_with_indices";
  static constexpr std::string_view schema =
      "aten::max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
      "int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)";
  ///@}
  /// The dtypes libtorch allows (of `self` and the values; torch 2's cpu).
  static constexpr DtypeSet dtypes = DtypeSet::numeric();
};

/// 1-D max pooling with the maxima's positions (torch.nn.functional.max_pool1d with
/// `return_indices=True`): MaxPool2dWithIndicesOp with H = 1; positions index L.
///
/// **Shapes:** as max_pool1d. **Dtypes:** as max_pool2d_with_indices. **Errors:** as
/// max_pool1d (TypeError for bool only).
/// **Source:** torch max_pool1d_with_indices (aten/src/ATen/native/Pooling.cpp).
struct MaxPool1dWithIndicesOp : detail::MaxIndicesBase<MaxPool1dWithIndicesOp, 1, false> {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "max_pool1d_with_indices", aten = "aten::max_pool1d_with_indices";
  static constexpr std::string_view schema =
      "aten::max_pool1d_with_indices(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], "
      "int[1] dilation=[1], bool ceil_mode=False) -> (Tensor, Tensor)";
  ///@}
  /// The dtypes libtorch allows (of `self` and the values).
  static constexpr DtypeSet dtypes = DtypeSet::numeric();
};

/// 2-D adaptive max pooling (torch.nn.functional.adaptive_max_pool2d): the maximum over each
/// of ops::AdaptiveAvgPool2dOp's windows (rows `[floor(i H / OH), ceil((i + 1) H / OH))`, the
/// columns likewise) and its position `h W + w`, by the file's rule (a NaN gives NaN).
///
/// **Shapes:** `input: [N, C, H, W]` or `[C, H, W]`, `output_size: [OH, OW]` (or one value) →
/// values and indices `[N, C, OH, OW]` (or `[C, OH, OW]`).
/// **Dtypes:** values: float16, bfloat16, float32, float64 (exact); indices: int64.
/// **Errors:** as adaptive_avg_pool2d.
/// **Source:** torch adaptive_max_pool2d (aten/src/ATen/native/AdaptiveMaxPooling2d.cpp,
/// cpu/AdaptiveMaxPoolKernel.cpp). **Lowering:** see the file's header.
struct AdaptiveMaxPool2dOp : detail::MaxIndicesBase<AdaptiveMaxPool2dOp, 2, true> {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "adaptive_max_pool2d", aten = "aten::adaptive_max_pool2d";
  static constexpr std::string_view schema = "aten::adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::floating();
};

/// 1-D adaptive max pooling (torch.nn.functional.adaptive_max_pool1d): AdaptiveMaxPool2dOp
/// with H = 1; positions index L.
///
/// **Shapes:** `input: [N, C, L]` or `[C, L]`, `output_size: [OL]` → values and indices
/// `[N, C, OL]` (or `[C, OL]`). **Dtypes**, **errors:** as adaptive_max_pool2d (output_size:
/// one value).
/// **Source:** torch adaptive_max_pool1d (aten/src/ATen/native/Pooling.cpp).
struct AdaptiveMaxPool1dOp : detail::MaxIndicesBase<AdaptiveMaxPool1dOp, 1, true> {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "adaptive_max_pool1d", aten = "aten::adaptive_max_pool1d";
  static constexpr std::string_view schema = "aten::adaptive_max_pool1d(Tensor self, int[1] output_size) -> (Tensor, Tensor)";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::floating();
};

namespace detail {
/// Runs max pooling op `Op` (two results) on `x`: {values, int64 indices}, typed or run-time typed.
template <class Op, class X>
auto pool_results(const X& x, const typename Op::Args& a) {
  const AnyTensor in[] = {AnyTensor(x)};
  const std::array<AnyTensor, 2> r = call_results<Op>(in, a);
  if constexpr (std::is_same_v<X, AnyTensor>) return std::pair<AnyTensor, AnyTensor>(r[0], r[1]);
  else return std::pair<X, Tensor<int64_t>>(r[0].template get<typename X::value_type>(), r[1].template get<int64_t>());
}
}  // namespace detail

// Each op's entry point, compiled once in TORCHTPU_SEPARATE_OPS programs (ops/library.hpp).
TORCHTPU_LIBRARY_MULTI_OP(MaxPool2dWithIndicesOp);
TORCHTPU_LIBRARY_MULTI_OP(MaxPool1dWithIndicesOp);
TORCHTPU_LIBRARY_MULTI_OP(AdaptiveMaxPool2dOp);
TORCHTPU_LIBRARY_MULTI_OP(AdaptiveMaxPool1dOp);

}  // namespace ops

// The front-end functions: `(values, indices)` (torch.nn.functional's argument order; `stride`
// empty: the kernel size). Each has a typed form and a run-time typed one (`AnyTensor`); see
// the op structs for shapes, dtypes and errors.

/// 2-D max pooling of `x: [N, C, H, W]` or `[C, H, W]` with the maxima's positions in their
/// `H x W` plane. See ops::MaxPool2dWithIndicesOp.
template <element T, int Rank>
std::pair<Tensor<T>, Tensor<int64_t>> max_pool2d_with_indices(const Tensor<T, Rank>& x, const std::vector<int64_t>& kernel_size,
                                                              const std::vector<int64_t>& stride = {},
                                                              const std::vector<int64_t>& padding = {0},
                                                              const std::vector<int64_t>& dilation = {1}, bool ceil_mode = false) {
  return ops::detail::pool_results<ops::MaxPool2dWithIndicesOp>(
      Tensor<T>(x), ops::detail::pool_front("aten::max_pool2d_with_indices", kernel_size, stride, padding, dilation, ceil_mode));
}
/// Run-time typed `max_pool2d_with_indices`.
template <std::same_as<AnyTensor> A>
std::pair<A, A> max_pool2d_with_indices(const A& x, const std::vector<int64_t>& kernel_size, const std::vector<int64_t>& stride = {},
                                        const std::vector<int64_t>& padding = {0}, const std::vector<int64_t>& dilation = {1},
                                        bool ceil_mode = false) {
  return ops::detail::pool_results<ops::MaxPool2dWithIndicesOp>(
      x, ops::detail::pool_front("aten::max_pool2d_with_indices", kernel_size, stride, padding, dilation, ceil_mode));
}

/// 1-D max pooling of `x: [N, C, L]` or `[C, L]` with the maxima's positions in L. See
/// ops::MaxPool1dWithIndicesOp.
template <element T, int Rank>
std::pair<Tensor<T>, Tensor<int64_t>> max_pool1d_with_indices(const Tensor<T, Rank>& x, const std::vector<int64_t>& kernel_size,
                                                              const std::vector<int64_t>& stride = {},
                                                              const std::vector<int64_t>& padding = {0},
                                                              const std::vector<int64_t>& dilation = {1}, bool ceil_mode = false) {
  return ops::detail::pool_results<ops::MaxPool1dWithIndicesOp>(
      Tensor<T>(x), ops::detail::pool_front("aten::max_pool1d_with_indices", kernel_size, stride, padding, dilation, ceil_mode));
}
/// Run-time typed `max_pool1d_with_indices`.
template <std::same_as<AnyTensor> A>
std::pair<A, A> max_pool1d_with_indices(const A& x, const std::vector<int64_t>& kernel_size, const std::vector<int64_t>& stride = {},
                                        const std::vector<int64_t>& padding = {0}, const std::vector<int64_t>& dilation = {1},
                                        bool ceil_mode = false) {
  return ops::detail::pool_results<ops::MaxPool1dWithIndicesOp>(
      x, ops::detail::pool_front("aten::max_pool1d_with_indices", kernel_size, stride, padding, dilation, ceil_mode));
}

/// 2-D adaptive max pooling of `x: [N, C, H, W]` or `[C, H, W]` to `output_size` (`[OH, OW]` or
/// one value), with the maxima's positions. See ops::AdaptiveMaxPool2dOp.
template <element T, int Rank>
std::pair<Tensor<T>, Tensor<int64_t>> adaptive_max_pool2d(const Tensor<T, Rank>& x, const std::vector<int64_t>& output_size) {
  return ops::detail::pool_results<ops::AdaptiveMaxPool2dOp>(Tensor<T>(x),
                                                             ops::detail::adaptive_front("aten::adaptive_max_pool2d", output_size));
}
/// Run-time typed `adaptive_max_pool2d`.
template <std::same_as<AnyTensor> A>
std::pair<A, A> adaptive_max_pool2d(const A& x, const std::vector<int64_t>& output_size) {
  return ops::detail::pool_results<ops::AdaptiveMaxPool2dOp>(x, ops::detail::adaptive_front("aten::adaptive_max_pool2d", output_size));
}

/// 1-D adaptive max pooling of `x: [N, C, L]` or `[C, L]` to `output_size` (`[OL]`), with the
/// maxima's positions. See ops::AdaptiveMaxPool1dOp.
template <element T, int Rank>
std::pair<Tensor<T>, Tensor<int64_t>> adaptive_max_pool1d(const Tensor<T, Rank>& x, const std::vector<int64_t>& output_size) {
  return ops::detail::pool_results<ops::AdaptiveMaxPool1dOp>(Tensor<T>(x),
                                                             ops::detail::adaptive_front("aten::adaptive_max_pool1d", output_size));
}
/// Run-time typed `adaptive_max_pool1d`.
template <std::same_as<AnyTensor> A>
std::pair<A, A> adaptive_max_pool1d(const A& x, const std::vector<int64_t>& output_size) {
  return ops::detail::pool_results<ops::AdaptiveMaxPool1dOp>(x, ops::detail::adaptive_front("aten::adaptive_max_pool1d", output_size));
}

}  // namespace torchtpu
