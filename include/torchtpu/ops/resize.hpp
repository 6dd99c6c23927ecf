// torchtpu/ops/resize.hpp — operator library, resizing: upsample_nearest1d, upsample_nearest2d,
// upsample_linear1d, upsample_bilinear2d (what torch.nn.functional.interpolate calls for modes
// 'nearest', 'linear' and 'bilinear'), and the `torchtpu::interpolate` front end. Each op is one
// definition (ops/library.hpp) that the typed API, the run-time API (`AnyTensor`), the eager
// PJRT devices and model graphs (`aten::upsample_nearest2d`, ...) all call. Tests:
// tests/ops/test_resize.cpp (cpu, every dtype), tests/device_ops/test_device_attention.cpp
// (PJRT devices).
//
// Overloads. A model graph names an op without its overload; each op reads both of torch's:
// the `.vec` form `(input, int[]? output_size, [bool align_corners,] float[]? scale_factors)`
// that F.interpolate traces to (torch 1.13 and 2.x), and the plain form `(self, int[N]
// output_size, [bool align_corners,] float? scales...)` of decompositions and torch.export. The
// declared schema is the plain form (it has the most arguments) with `output_size` optional
// (`int[N]?`: `.vec` passes None there with scale_factors); a float list in the place of the
// first scale is the `.vec` form's scale_factors (ops::detail::upsample_args).
//
// Indices are computed as torch's cpu kernels do (aten/src/ATen/native/UpSample.h and
// cpu/UpSampleKernel.cpp, torch 1.13 / 2.x), in float for 16-bit floats and float32 and in
// double for float64, so that the same source pixels and weights are chosen.
//
// Not in the umbrella header (torchtpu.hpp): include <torchtpu/ops/resize.hpp>.
#pragma once
#include <algorithm>    // std::min, std::max
#include <cmath>        // std::floor
#include <cstdint>      // int64_t
#include <optional>     // std::optional
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <type_traits>  // std::conditional_t
#include <variant>      // std::get_if
#include <vector>       // std::vector

#include "../fuse/threads.hpp"  // parallel_chunks, chunks_for
#include "library.hpp"          // TensorMeta, DtypeSet, ops::call, call_typed
#include "schema.hpp"           // Arg (the .vec form's float list)

namespace torchtpu {
namespace ops {

namespace detail {

/// The arguments of every upsample op (both overloads, see the file's header).
struct UpsampleArgs {
  int64_t output_size[2] = {0, 0};  ///< the output's spatial sizes (when `has_size`)
  int size_len = 0;                 ///< how many output sizes were given
  bool has_size = false;            ///< output_size given
  double factors[2] = {0, 0};       ///< `.vec`'s scale_factors (when `has_factors`)
  int factor_len = 0;               ///< how many scale factors were given
  bool has_factors = false;         ///< scale_factors given: output = floor(input * factor)
  double scales[2] = {0, 0};        ///< the plain form's scales (scales_h, scales_w / scales)
  bool has_scales[2] = {false, false};
  bool align_corners = false;  ///< linear modes: corner pixels aligned
};

/// One spatial dim of an upsample: input and output sizes and the scale the kernel reads
/// (torch's `scales`: the scale factor, when one was given).
struct UpsampleDim {
  int64_t in = 1, out = 1;
  bool has_scale = false;
  double scale = 0;
};

/// The checked problem: `[outer = N * C, spatial...]`.
struct UpsamplePlan {
  int dims = 1;            ///< spatial dims (1 or 2)
  int64_t outer = 0;       ///< N * C
  UpsampleDim d[2];        ///< the spatial dims (H, W; or W alone)
  bool align_corners = false;
};

/// The `.vec` or plain arguments of a model node (see the file's header): `scales` names the
/// schema's scale arguments (one per spatial dim).
template <class R>
UpsampleArgs upsample_args(const R& r, std::initializer_list<std::string_view> scales, bool linear) {
  UpsampleArgs a;
  if (linear) a.align_corners = r.to_bool("align_corners");
  if (!r.is_none("output_size")) {
    const std::vector<int64_t> v = r.to_ints("output_size");
    a.has_size = true;
    a.size_len = static_cast<int>(v.size());
    for (size_t i = 0; i < v.size() && i < 2; ++i) a.output_size[i] = v[i];
  }
  const std::string_view first = *scales.begin();
  if (const auto* f = std::get_if<std::vector<double>>(&r.get(first))) {  // .vec: scale_factors
    a.has_factors = true;
    a.factor_len = static_cast<int>(f->size());
    for (size_t i = 0; i < f->size() && i < 2; ++i) a.factors[i] = (*f)[i];
    return a;
  }
  int i = 0;
  for (std::string_view s : scales) {
    if (!r.is_none(s)) {
      a.has_scales[i] = true;
      a.scales[i] = r.to_double(s);
    }
    ++i;
  }
  return a;
}

/// The checked plan of an upsample of `dims` spatial dims. **Errors:** TypeError for a dtype
/// the op lacks; ShapeError for an input not `[N, C, spatial...]` or with an empty spatial
/// dim; ValueError for both or neither of output_size and scale_factors, a count of values
/// other than `dims`, or an output size below 1.
inline UpsamplePlan upsample_plan(std::span<const TensorMeta> in, const UpsampleArgs& a, int dims, bool linear,
                                  std::string_view op) {
  const std::string ops = " (operands " + describe(in) + ")";
  if (in.size() != 1 || !in[0].defined) throw ValueError(std::string(op) + ": expected one input tensor" + ops);
  const TensorMeta& x = in[0];
  if (!is_floating(x.dtype) && (linear || x.dtype != ScalarType::UInt8))
    throw TypeError(std::string(op) + ": expected a floating point input" + (linear ? "" : " or uint8") + ", got " +
                    std::string(dtype_name(x.dtype)) + ops);
  if (x.dim() != dims + 2)
    throw ShapeError(std::string(op) + ": expected a " + std::to_string(dims + 2) + "-D input " +
                     (dims == 1 ? "[N, C, W]" : "[N, C, H, W]") + ops);
  if (a.has_size == a.has_factors)
    throw ValueError(std::string(op) + ": must specify exactly one of output_size and scale_factors" + ops);
  if (a.has_size && a.size_len != dims)
    throw ValueError(std::string(op) + ": expected " + std::to_string(dims) + " output sizes, got " +
                     std::to_string(a.size_len) + ops);
  if (a.has_factors && a.factor_len != dims)
    throw ValueError(std::string(op) + ": expected " + std::to_string(dims) + " scale factors, got " +
                     std::to_string(a.factor_len) + ops);
  UpsamplePlan p;
  p.dims = dims;
  p.align_corners = a.align_corners;
  p.outer = x.sizes[0] * x.sizes[1];
  int64_t rest = x.sizes[1];
  for (int i = 0; i < dims; ++i) {
    UpsampleDim& d = p.d[i];
    d.in = x.sizes[2 + i];
    rest *= d.in;
    if (a.has_factors) {
      d.out = static_cast<int64_t>(static_cast<double>(d.in) * a.factors[i]);  // torch: checked_convert (truncation)
      d.has_scale = true;
      d.scale = a.factors[i];
    } else {
      d.out = a.output_size[i];
      d.has_scale = a.has_scales[i];
      d.scale = a.scales[i];
    }
  }
  bool ok = rest != 0;
  for (int i = 0; i < dims; ++i) ok = ok && p.d[i].in > 0;
  if (!ok) throw ShapeError(std::string(op) + ": expected a non-empty input (only N may be 0)" + ops);
  for (int i = 0; i < dims; ++i)
    if (p.d[i].out <= 0)
      throw ValueError(std::string(op) + ": output sizes must be greater than 0, got " + std::to_string(p.d[i].out) +
                       " for spatial dim " + std::to_string(i) + ops);
  return p;
}

/// The result's metadata.
inline TensorMeta upsample_meta(const TensorMeta& x, const UpsamplePlan& p) {
  Dims s{x.sizes[0], x.sizes[1]};
  for (int i = 0; i < p.dims; ++i) s.push_back(p.d[i].out);
  return TensorMeta{x.dtype, s, Device{}, true};
}

/// torch's `compute_scales_value<O>`: `1 / scale` when a positive scale was given, else
/// `in / out`.
template <class O>
O scales_value(const UpsampleDim& d) {
  return d.has_scale && d.scale > 0. ? static_cast<O>(1.0 / d.scale) : static_cast<O>(d.in) / static_cast<O>(d.out);
}

/// torch's `nearest_idx`: the source index of output index `i` (exact for equal sizes and
/// for 2x; otherwise floor(i * scale) in float, clamped).
inline std::vector<int64_t> nearest_indices(const UpsampleDim& d) {
  std::vector<int64_t> idx(static_cast<size_t>(d.out));
  const float scale = scales_value<float>(d);
  for (int64_t i = 0; i < d.out; ++i) {
    if (d.out == d.in) idx[size_t(i)] = i;
    else if (d.out == 2 * d.in) idx[size_t(i)] = i >> 1;
    else idx[size_t(i)] = std::min(static_cast<int64_t>(std::floor(static_cast<float>(i) * scale)), d.in - 1);
  }
  return idx;
}

/// The two taps of output index `i` of a linear resize and their weights (torch's
/// `compute_source_index_and_lambda` in `O`).
template <class O>
struct LinearTaps {
  std::vector<int64_t> i0, i1;
  std::vector<O> w0, w1;
};
template <class O>
LinearTaps<O> linear_taps(const UpsampleDim& d, bool align_corners) {
  LinearTaps<O> t;
  const size_t n = static_cast<size_t>(d.out);
  t.i0.resize(n);
  t.i1.resize(n);
  t.w0.resize(n);
  t.w1.resize(n);
  // area_pixel_compute_scale: align_corners: (in - 1) / (out - 1), 0 for one output; else as
  // nearest's (the centre of a single output reads the middle of the input)
  const O ratio = align_corners ? (d.out > 1 ? static_cast<O>(d.in - 1) / static_cast<O>(d.out - 1) : O(0))
                                : scales_value<O>(d);
  for (int64_t i = 0; i < d.out; ++i) {
    const size_t k = static_cast<size_t>(i);
    if (d.out == d.in) {
      t.i0[k] = t.i1[k] = i;
      t.w0[k] = O(1);
      t.w1[k] = O(0);
      continue;
    }
    // area_pixel_compute_source_index (cubic = false): negative sources clamp to 0
    O src = align_corners ? ratio * static_cast<O>(i) : ratio * (static_cast<O>(i) + O(0.5)) - O(0.5);
    if (!align_corners && src < O(0)) src = O(0);
    const int64_t i0 = static_cast<int64_t>(src);
    t.i0[k] = i0;
    t.i1[k] = i0 + (i0 < d.in - 1 ? 1 : 0);
    const O l1 = std::min(std::max(src - static_cast<O>(i0), O(0)), O(1));
    t.w1[k] = l1;
    t.w0[k] = O(1) - l1;
  }
  return t;
}

/// The nearest-neighbour cpu kernel (any dtype: elements are copied).
template <element T>
void upsample_nearest_cpu(const UpsamplePlan& p, const Tensor<T>& x0, Tensor<T>& out) {
  if (out.numel() == 0) return;
  const Tensor<T> x = x0.contiguous();
  const UpsampleDim h = p.dims == 2 ? p.d[0] : UpsampleDim{};
  const UpsampleDim w = p.d[p.dims - 1];
  const std::vector<int64_t> ih = nearest_indices(h), iw = nearest_indices(w);
  const T* xp = x.data_ptr();
  T* op = out.data_ptr();
  const int64_t per = h.out * w.out;
  torchtpu::detail::parallel_chunks(p.outer, torchtpu::detail::chunks_for(p.outer * per, int64_t(1) << 16), 1,
                                    [&](int64_t c0, int64_t c1) {
                                      for (int64_t c = c0; c < c1; ++c) {
                                        const T* src = xp + c * h.in * w.in;
                                        T* dst = op + c * per;
                                        for (int64_t i = 0; i < h.out; ++i) {
                                          const T* row = src + ih[size_t(i)] * w.in;
                                          for (int64_t j = 0; j < w.out; ++j) *dst++ = row[iw[size_t(j)]];
                                        }
                                      }
                                    });
}

/// The linear / bilinear cpu kernel: `x0 * w0 + x1 * w1` along W, then the same of the two
/// rows along H (torch's order), in float (double for float64), rounded once.
template <element T>
void upsample_linear_cpu(const UpsamplePlan& p, const Tensor<T>& x0, Tensor<T>& out) {
  if (out.numel() == 0) return;
  using O = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const Tensor<T> x = x0.contiguous();
  const bool two = p.dims == 2;
  const UpsampleDim h = two ? p.d[0] : UpsampleDim{};
  const UpsampleDim w = p.d[p.dims - 1];
  const LinearTaps<O> th = linear_taps<O>(h, p.align_corners), tw = linear_taps<O>(w, p.align_corners);
  const T* xp = x.data_ptr();
  T* op = out.data_ptr();
  const int64_t per = h.out * w.out;
  torchtpu::detail::parallel_chunks(p.outer, torchtpu::detail::chunks_for(p.outer * per * 4, int64_t(1) << 16), 1,
                                    [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      const T* src = xp + c * h.in * w.in;
      T* dst = op + c * per;
      for (int64_t i = 0; i < h.out; ++i) {
        const T* r0 = src + th.i0[size_t(i)] * w.in;
        const T* r1 = src + th.i1[size_t(i)] * w.in;
        const O wh0 = th.w0[size_t(i)], wh1 = th.w1[size_t(i)];
        for (int64_t j = 0; j < w.out; ++j) {
          const size_t k = size_t(j);
          const int64_t a = tw.i0[k], b = tw.i1[k];
          const O t0 = static_cast<O>(r0[a]) * tw.w0[k] + static_cast<O>(r0[b]) * tw.w1[k];
          if (!two) {
            *dst++ = convert<T>(t0);
            continue;
          }
          const O t1 = static_cast<O>(r1[a]) * tw.w0[k] + static_cast<O>(r1[b]) * tw.w1[k];
          *dst++ = convert<T>(t0 * wh0 + t1 * wh1);
        }
      }
    }
  });
}

/// Source `start + step * t` (t < n) of a nearest resize, each repeated `rep` times.
struct NearestPiece {
  int64_t start, step, n, rep;
};

/// A nearest-index table as pieces (one for integer factors: `rep` copies of every element,
/// or a strided slice when downsampling by an integer).
inline std::vector<NearestPiece> nearest_pieces(const std::vector<int64_t>& idx) {
  std::vector<NearestPiece> r;
  const int64_t out = static_cast<int64_t>(idx.size());
  auto group_at = [&](int64_t j, int64_t src, int64_t rep) {  // outputs [j, j + rep) all `src`, then another
    if (j + rep > out) return false;
    for (int64_t k = 0; k < rep; ++k)
      if (idx[size_t(j + k)] != src) return false;
    return j + rep == out || idx[size_t(j + rep)] != src;
  };
  int64_t i = 0;
  while (i < out) {
    const int64_t src = idx[size_t(i)];
    int64_t rep = 1;
    while (i + rep < out && idx[size_t(i + rep)] == src) ++rep;
    int64_t n = 1, step = 1;
    if (i + rep < out && idx[size_t(i + rep)] > src) {
      const int64_t s = idx[size_t(i + rep)] - src;
      while (group_at(i + n * rep, src + n * s, rep)) ++n;
      if (n > 1) step = s;
    }
    r.push_back({src, step, n, rep});
    i += n * rep;
  }
  return r;
}

/// Lowering of a nearest resize: per spatial dim, slices (strided where the sources are) of
/// the input, each broadcast to its repeat count, concatenated. Exact for every dtype.
template <class B, class V>
V upsample_nearest_lower(B& b, const UpsamplePlan& p, const V& x) {
  V y = x;
  for (int s = 0; s < p.dims; ++s) {
    const int64_t d = 2 + s;
    const std::vector<NearestPiece> pieces = nearest_pieces(nearest_indices(p.d[s]));
    std::vector<V> parts;
    for (const NearestPiece& pc : pieces) {
      std::vector<int64_t> st(y.dims.size(), 0), lim = y.dims, str(y.dims.size(), 1);
      st[size_t(d)] = pc.start;
      lim[size_t(d)] = pc.start + (pc.n - 1) * pc.step + 1;
      str[size_t(d)] = pc.step;
      V part = b.slice(y, st, lim, str);
      if (pc.rep > 1) {
        std::vector<int64_t> wide, keep;
        for (int64_t k = 0; k < static_cast<int64_t>(part.dims.size()); ++k) {
          keep.push_back(static_cast<int64_t>(wide.size()));
          wide.push_back(part.dims[size_t(k)]);
          if (k == d) wide.push_back(pc.rep);
        }
        std::vector<int64_t> flat = part.dims;
        flat[size_t(d)] = pc.n * pc.rep;
        part = b.reshape(b.broadcast_in_dim(part, wide, keep), flat);
      }
      parts.push_back(part);
    }
    y = parts.size() == 1 ? parts[0] : b.concatenate(parts, d);
  }
  return y;
}

/// Cubic-convolution taps of one spatial dim: output `i` reads `x[idx[4i + k]] · w[4i + k]`,
/// k = 0..3 (sources clamped to the input; torch's upsample_bicubic2d).
template <class O>
struct CubicTaps {
  std::vector<int64_t> idx;
  std::vector<O> w;
};
/// **Source:** torch's upsample_bicubic2d (aten/src/ATen/native/UpSample.h:
/// area_pixel_compute_source_index with cubic = true, i.e. no clamp of negative sources;
/// get_cubic_upsample_coefficients with A = -0.75, Keys' cubic convolution kernel, R. Keys,
/// "Cubic convolution interpolation for digital image processing", IEEE TASSP 1981).
template <class O>
CubicTaps<O> cubic_taps(const UpsampleDim& d, bool align_corners) {
  CubicTaps<O> t;
  t.idx.resize(static_cast<size_t>(4 * d.out));
  t.w.resize(static_cast<size_t>(4 * d.out));
  const O ratio = align_corners ? (d.out > 1 ? static_cast<O>(d.in - 1) / static_cast<O>(d.out - 1) : O(0))
                                : scales_value<O>(d);
  const O A = O(-0.75);
  auto near = [A](O x) { return ((A + O(2)) * x - (A + O(3))) * x * x + O(1); };        // |x| <= 1
  auto far = [A](O x) { return ((A * x - O(5) * A) * x + O(8) * A) * x - O(4) * A; };  // 1 < |x| < 2
  for (int64_t i = 0; i < d.out; ++i) {
    const O src = align_corners ? ratio * static_cast<O>(i) : ratio * (static_cast<O>(i) + O(0.5)) - O(0.5);
    const int64_t i0 = static_cast<int64_t>(std::floor(src));
    const O l = src - static_cast<O>(i0);
    const O w[4] = {far(l + O(1)), near(l), near(O(1) - l), far(O(2) - l)};
    for (int k = 0; k < 4; ++k) {
      const size_t at = static_cast<size_t>(4 * i + k);
      t.idx[at] = std::min(std::max<int64_t>(i0 - 1 + k, 0), d.in - 1);
      t.w[at] = w[k];
    }
  }
  return t;
}

/// The bicubic cpu kernel: per output, the cubic interpolation along W of the 4 source rows,
/// then along H of those 4 values (torch's order), in float (double for float64), rounded once;
/// equal sizes copy (as torch).
template <element T>
void upsample_cubic_cpu(const UpsamplePlan& p, const Tensor<T>& x0, Tensor<T>& out) {
  if (out.numel() == 0) return;
  using O = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const Tensor<T> x = x0.contiguous();
  const UpsampleDim h = p.d[0], w = p.d[1];
  if (h.in == h.out && w.in == w.out) {
    out.copy_(x);
    return;
  }
  const CubicTaps<O> th = cubic_taps<O>(h, p.align_corners), tw = cubic_taps<O>(w, p.align_corners);
  const T* xp = x.data_ptr();
  T* op = out.data_ptr();
  const int64_t per = h.out * w.out;
  torchtpu::detail::parallel_chunks(p.outer, torchtpu::detail::chunks_for(p.outer * per * 32, int64_t(1) << 16), 1,
                                    [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      const T* src = xp + c * h.in * w.in;
      T* dst = op + c * per;
      for (int64_t i = 0; i < h.out; ++i)
        for (int64_t j = 0; j < w.out; ++j) {
          O acc = O(0);
          for (int r = 0; r < 4; ++r) {
            const T* row = src + th.idx[size_t(4 * i + r)] * w.in;
            O v = O(0);
            for (int k = 0; k < 4; ++k) v += static_cast<O>(row[tw.idx[size_t(4 * j + k)]]) * tw.w[size_t(4 * j + k)];
            acc += v * th.w[size_t(4 * i + r)];
          }
          *dst++ = convert<T>(acc);
        }
    }
  });
}

/// Lowering of a linear or cubic resize: per spatial dim, a product with the `[out, in]` matrix
/// of the taps' weights (at most 2 or 4 nonzeros a row; `stablehlo.dot_general` at the highest
/// precision, as jax.image.resize), in float32 (float64 for float64). An inf or NaN input
/// spreads to the whole output row through the zero weights (jax's behaviour; torch's kernel
/// reads only the taps).
template <class B, class V>
V upsample_matrix_lower(B& b, const UpsamplePlan& p, const V& x0, bool cubic) {
  const ScalarType t = x0.dtype, ct = t == ScalarType::Double ? t : ScalarType::Float;
  V y = t == ct ? x0 : b.convert(x0, ct);
  auto weights = [&](const UpsampleDim& d) {
    std::vector<double> m(static_cast<size_t>(d.out * d.in), 0.0);
    auto fill = [&]<class O>(std::type_identity<O>) {
      if (cubic && d.in == d.out && (p.dims == 1 || (p.d[0].in == p.d[0].out && p.d[1].in == p.d[1].out))) {
        for (int64_t i = 0; i < d.out; ++i) m[size_t(i * d.in + i)] = 1.0;  // the copy of equal sizes
      } else if (cubic) {
        const CubicTaps<O> tp = cubic_taps<O>(d, p.align_corners);
        for (size_t k = 0; k < tp.idx.size(); ++k) m[size_t(int64_t(k / 4) * d.in + tp.idx[k])] += static_cast<double>(tp.w[k]);
      } else {
        const LinearTaps<O> tp = linear_taps<O>(d, p.align_corners);
        for (int64_t i = 0; i < d.out; ++i) {
          m[size_t(i * d.in + tp.i0[size_t(i)])] += static_cast<double>(tp.w0[size_t(i)]);
          m[size_t(i * d.in + tp.i1[size_t(i)])] += static_cast<double>(tp.w1[size_t(i)]);
        }
      }
    };
    if (ct == ScalarType::Double) fill(std::type_identity<double>{});
    else fill(std::type_identity<float>{});
    return b.constant_data(ct, {d.out, d.in}, m);
  };
  const int64_t last = 2 + p.dims - 1;
  // W (the last dim): [..., W] x [OW, W] -> [..., OW]
  y = b.dot_general(y, weights(p.d[p.dims - 1]), {{}, {}, {last}, {1}}, stablehlo::Precision::Highest);
  if (p.dims == 2) {  // H: [N, C, H, OW] x [OH, H] -> [N, C, OW, OH] -> [N, C, OH, OW]
    y = b.dot_general(y, weights(p.d[0]), {{}, {}, {2}, {1}}, stablehlo::Precision::Highest);
    y = b.transpose(y, {0, 1, 3, 2});
  }
  return ct == t ? y : b.convert(y, t);
}

/// The shared body of the four ops.
template <int N, bool Linear>
struct UpsampleImpl {
  static TensorMeta infer(std::span<const TensorMeta> in, const UpsampleArgs& a, std::string_view op) {
    return upsample_meta(in[0], upsample_plan(in, a, N, Linear, op));
  }
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const UpsampleArgs& a, Tensor<T>& out, std::string_view op) {
    const TensorMeta m{dtype_of<T>(), in[0].sizes(), Device{}, true};
    const UpsamplePlan p = upsample_plan(std::span<const TensorMeta>(&m, 1), a, N, Linear, op);
    if constexpr (Linear) upsample_linear_cpu(p, in[0], out);
    else upsample_nearest_cpu(p, in[0], out);
  }
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const UpsampleArgs& a, const torchtpu::Dims& out, std::string_view op) {
    const TensorMeta m{in[0].dtype, torchtpu::Dims(in[0].dims.begin(), in[0].dims.end()), Device{}, true};
    const UpsamplePlan p = upsample_plan(std::span<const TensorMeta>(&m, 1), a, N, Linear, op);
    if (numel(out) == 0) {
      const std::vector<int64_t> o(out.begin(), out.end());
      return is_floating(in[0].dtype) ? b.constant(0.0, in[0].dtype, o) : b.constant_int(0, in[0].dtype, o);
    }
    if constexpr (Linear) return upsample_matrix_lower(b, p, in[0], false);
    else return upsample_nearest_lower(b, p, in[0]);
  }
};

}  // namespace detail

/// The dtypes of the nearest modes: uint8 and the floating ones (torch's cpu kernels; torch
/// 1.13's lack float16).
inline constexpr DtypeSet upsample_nearest_dtypes =
    DtypeSet::of({ScalarType::UInt8, ScalarType::Half, ScalarType::BFloat16, ScalarType::Float, ScalarType::Double});

/// Nearest-neighbour upsampling of `[N, C, W]` (F.interpolate(mode='nearest') on a 3-D input):
/// output index `i` reads `min(floor(i * scale), W - 1)`, `scale = 1 / scales` when a scale is
/// given (the scale factor), else `W / OW` (float arithmetic; exact for equal sizes and 2x).
///
/// **Shapes:** `[N, C, W]` → `[N, C, OW]`; `OW = output_size[0]` or `floor(W * scale_factors[0])`.
/// **Dtypes:** uint8, float16, bfloat16, float32, float64 (the input's).
/// **Overloads:** `.vec(input, int[]? output_size, float[]? scale_factors)` and the plain form
/// (the schema below); see the file's header.
/// **Errors:** TypeError for another dtype; ShapeError for another rank or an empty C or W;
/// ValueError for both or neither of output_size and scale_factors, a wrong count of values, or
/// an output size below 1. Messages name the op and the operand.
/// **Source:** torch's upsample_nearest1d (aten/src/ATen/native/UpSample.h, nearest_idx).
/// **Lowering:** slices and broadcasts (detail::upsample_nearest_lower). **Example:**
/// tests/ops/test_resize.cpp.
struct UpsampleNearest1dOp {
  ///@{
  /// Names and schema (the plain overload; `.vec` read too).
  static constexpr std::string_view name = "upsample_nearest1d", aten = "aten::upsample_nearest1d";
  static constexpr std::string_view schema =
      "aten::upsample_nearest1d(Tensor self, int[1]? output_size, float? scales=None) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = upsample_nearest_dtypes;
  /// Non-tensor arguments.
  using Args = detail::UpsampleArgs;
  /// Arguments from a model node (either overload).
  template <class R>
  static Args args(const R& r) { return detail::upsample_args(r, {"scales"}, false); }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) { return detail::UpsampleImpl<1, false>::infer(in, a, aten); }
  /// CPU kernel.
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    detail::UpsampleImpl<1, false>::cpu(in, a, out, aten);
  }
  /// StableHLO.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    return detail::UpsampleImpl<1, false>::template lower<B, V>(b, in, a, out, aten);
  }
};

/// Nearest-neighbour upsampling of `[N, C, H, W]` (F.interpolate(mode='nearest') on a 4-D
/// input), each spatial dim as upsample_nearest1d's.
///
/// **Shapes:** `[N, C, H, W]` → `[N, C, OH, OW]`.
/// **Dtypes:** uint8, float16, bfloat16, float32, float64.
/// **Overloads:** `.vec(input, int[]? output_size, float[]? scale_factors)` and the plain form.
/// **Errors:** as upsample_nearest1d.
/// **Source:** torch's upsample_nearest2d. **Lowering:** detail::upsample_nearest_lower.
struct UpsampleNearest2dOp {
  ///@{
  /// Names and schema (the plain overload; `.vec` read too).
  static constexpr std::string_view name = "upsample_nearest2d", aten = "aten::upsample_nearest2d";
  static constexpr std::string_view schema =
      "aten::upsample_nearest2d(Tensor self, int[2]? output_size, float? scales_h=None, float? scales_w=None) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = upsample_nearest_dtypes;
  /// Non-tensor arguments.
  using Args = detail::UpsampleArgs;
  /// Arguments from a model node (either overload).
  template <class R>
  static Args args(const R& r) { return detail::upsample_args(r, {"scales_h", "scales_w"}, false); }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) { return detail::UpsampleImpl<2, false>::infer(in, a, aten); }
  /// CPU kernel.
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    detail::UpsampleImpl<2, false>::cpu(in, a, out, aten);
  }
  /// StableHLO.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    return detail::UpsampleImpl<2, false>::template lower<B, V>(b, in, a, out, aten);
  }
};

/// Linear upsampling of `[N, C, W]` (F.interpolate(mode='linear')): output `i` is
/// `x[i0] * (1 - l) + x[i1] * l` at source `src = ratio * i` (align_corners, `ratio = (W - 1) /
/// (OW - 1)`) or `max(0, ratio * (i + 0.5) - 0.5)` (`ratio = 1 / scales` or `W / OW`), `i0 =
/// floor(src)`, `i1 = min(i0 + 1, W - 1)`, `l = src - i0`; equal sizes copy.
///
/// **Shapes:** `[N, C, W]` → `[N, C, OW]`.
/// **Dtypes:** float16, bfloat16, float32, float64; computed in float32 (float64), rounded once.
/// **Overloads:** `.vec(input, int[]? output_size, bool align_corners, float[]? scale_factors)`
/// and the plain form.
/// **Errors:** as upsample_nearest1d (TypeError for uint8 too).
/// **Source:** torch's upsample_linear1d (UpSample.h: area_pixel_compute_scale,
/// area_pixel_compute_source_index, compute_source_index_and_lambda).
/// **Lowering:** detail::upsample_matrix_lower.
struct UpsampleLinear1dOp {
  ///@{
  /// Names and schema (the plain overload; `.vec` read too).
  static constexpr std::string_view name = "upsample_linear1d", aten = "aten::upsample_linear1d";
  static constexpr std::string_view schema =
      "aten::upsample_linear1d(Tensor self, int[1]? output_size, bool align_corners, float? scales=None) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::floating();
  /// Non-tensor arguments.
  using Args = detail::UpsampleArgs;
  /// Arguments from a model node (either overload).
  template <class R>
  static Args args(const R& r) { return detail::upsample_args(r, {"scales"}, true); }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) { return detail::UpsampleImpl<1, true>::infer(in, a, aten); }
  /// CPU kernel.
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    detail::UpsampleImpl<1, true>::cpu(in, a, out, aten);
  }
  /// StableHLO.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    return detail::UpsampleImpl<1, true>::template lower<B, V>(b, in, a, out, aten);
  }
};

/// Bilinear upsampling of `[N, C, H, W]` (F.interpolate(mode='bilinear')): upsample_linear1d's
/// taps along H and W, `(x00 w0 + x01 w1) h0 + (x10 w0 + x11 w1) h1` (torch's order).
///
/// **Shapes:** `[N, C, H, W]` → `[N, C, OH, OW]`.
/// **Dtypes:** float16, bfloat16, float32, float64; computed in float32 (float64), rounded once.
/// **Overloads:** `.vec(input, int[]? output_size, bool align_corners, float[]? scale_factors)`
/// and the plain form.
/// **Errors:** as upsample_linear1d.
/// **Source:** torch's upsample_bilinear2d. **Lowering:** detail::upsample_matrix_lower.
struct UpsampleBilinear2dOp {
  ///@{
  /// Names and schema (the plain overload; `.vec` read too).
  static constexpr std::string_view name = "upsample_bilinear2d", aten = "aten::upsample_bilinear2d";
  static constexpr std::string_view schema =
      "aten::upsample_bilinear2d(Tensor self, int[2]? output_size, bool align_corners, float? scales_h=None, "
      "float? scales_w=None) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::floating();
  /// Non-tensor arguments.
  using Args = detail::UpsampleArgs;
  /// Arguments from a model node (either overload).
  template <class R>
  static Args args(const R& r) { return detail::upsample_args(r, {"scales_h", "scales_w"}, true); }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) { return detail::UpsampleImpl<2, true>::infer(in, a, aten); }
  /// CPU kernel.
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    detail::UpsampleImpl<2, true>::cpu(in, a, out, aten);
  }
  /// StableHLO.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    return detail::UpsampleImpl<2, true>::template lower<B, V>(b, in, a, out, aten);
  }
};

/// Bicubic upsampling of `[N, C, H, W]` (F.interpolate(mode='bicubic')): Keys' cubic
/// convolution (A = -0.75) over 4 taps per dim, the source index `ratio · i` (align_corners) or
/// `ratio · (i + 0.5) − 0.5` (not clamped), taps outside the input read its edge; along W for
/// each of the 4 rows, then along H (torch's order); equal sizes copy.
///
/// **Shapes:** `[N, C, H, W]` → `[N, C, OH, OW]`.
/// **Dtypes:** float16, bfloat16, float32, float64; computed in float32 (float64), rounded once.
/// **Overloads:** `.vec(input, int[]? output_size, bool align_corners, float[]? scale_factors)`
/// and the plain form.
/// **Errors:** as upsample_linear1d.
/// **Source:** torch's upsample_bicubic2d (UpSample.h: get_cubic_upsample_coefficients).
/// **Lowering:** detail::upsample_matrix_lower (4 nonzeros a row).
struct UpsampleBicubic2dOp {
  ///@{
  /// Names and schema (the plain overload; `.vec` read too).
  static constexpr std::string_view name = "upsample_bicubic2d", aten = "aten::upsample_bicubic2d";
  static constexpr std::string_view schema =
      "aten::upsample_bicubic2d(Tensor self, int[2]? output_size, bool align_corners, float? scales_h=None, "
      "float? scales_w=None) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::floating();
  /// Non-tensor arguments.
  using Args = detail::UpsampleArgs;
  /// Arguments from a model node (either overload).
  template <class R>
  static Args args(const R& r) { return detail::upsample_args(r, {"scales_h", "scales_w"}, true); }
  /// The checked problem.
  static detail::UpsamplePlan plan(ScalarType t, const Dims& sizes, const Args& a) {
    const TensorMeta m{t, sizes, Device{}, true};
    return detail::upsample_plan(std::span<const TensorMeta>(&m, 1), a, 2, true, aten);
  }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) { return detail::UpsampleImpl<2, true>::infer(in, a, aten); }
  /// CPU kernel (detail::upsample_cubic_cpu).
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    detail::upsample_cubic_cpu(plan(dtype_of<T>(), in[0].sizes(), a), in[0], out);
  }
  /// StableHLO.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    if (numel(out) == 0) return b.constant(0.0, in[0].dtype, std::vector<int64_t>(out.begin(), out.end()));
    return detail::upsample_matrix_lower(b, plan(in[0].dtype, Dims(in[0].dims.begin(), in[0].dims.end()), a), in[0], true);
  }
};

namespace detail {
/// Args of the plain overloads: output sizes and optional scales.
inline UpsampleArgs plain_upsample_args(const Dims& output_size, std::optional<double> s0, std::optional<double> s1,
                                        bool align_corners) {
  UpsampleArgs a;
  a.has_size = true;
  a.size_len = output_size.size();
  for (int i = 0; i < output_size.size() && i < 2; ++i) a.output_size[i] = output_size[i];
  a.has_scales[0] = s0.has_value();
  a.scales[0] = s0.value_or(0.0);
  a.has_scales[1] = s1.has_value();
  a.scales[1] = s1.value_or(0.0);
  a.align_corners = align_corners;
  return a;
}
/// Runs `Op` on one operand, typed (`X` a Tensor) or run-time typed.
template <class Op, class X>
X upsample_call(const X& x, const UpsampleArgs& a) {
  if constexpr (std::is_same_v<X, AnyTensor>) return call<Op>(std::span<const AnyTensor>(&x, 1), a);
  else return call_typed<Op, typename X::value_type>(std::span<const X>(&x, 1), a);
}
/// torch.nn.functional.interpolate's choice of op and arguments (see torchtpu::interpolate).
template <class X>
X interpolate_impl(const X& x, const std::optional<Dims>& size, const std::optional<std::vector<double>>& scale_factor,
                   std::string_view mode, std::optional<bool> align_corners, std::optional<bool> recompute_scale_factor) {
  const int r = x.dim();
  const std::string what = "interpolate: input " + to_string(x.sizes()) + ", mode '" + std::string(mode) + "'";
  const bool cubic = mode == "bicubic", linear = mode == "linear" || mode == "bilinear" || cubic;
  if (!linear && mode != "nearest")
    throw ValueError(what + ": mode is not supported (supported: 'nearest', 'linear', 'bilinear', 'bicubic')");
  if (!linear && align_corners.has_value())
    throw ValueError(what + ": align_corners can only be set with the interpolating modes linear, bilinear and bicubic");
  if ((mode == "linear" && r != 3) || ((mode == "bilinear" || cubic) && r != 4) || (mode == "nearest" && r != 3 && r != 4))
    throw ShapeError(what + ": expected a " + (mode == "linear" ? "3-D" : mode == "nearest" ? "3-D or 4-D" : "4-D") +
                     " input [N, C, ...]");
  const int dims = r - 2;
  if (size.has_value() == scale_factor.has_value())
    throw ValueError(what + ": exactly one of size and scale_factor must be given");
  UpsampleArgs a;
  a.align_corners = align_corners.value_or(false);
  if (size) {
    const Dims s = size->size() == 1 ? Dims::filled(dims, (*size)[0]) : *size;
    a.has_size = true;
    a.size_len = s.size();
    for (int i = 0; i < s.size() && i < 2; ++i) a.output_size[i] = s[i];
  } else {
    std::vector<double> f = *scale_factor;
    if (f.size() == 1) f.assign(static_cast<size_t>(dims), f[0]);
    if (recompute_scale_factor.value_or(false)) {  // the output size from the factor, then no scale
      a.has_size = true;
      a.size_len = static_cast<int>(f.size());
      for (size_t i = 0; i < f.size() && i < 2 && static_cast<int>(i) < dims; ++i)
        a.output_size[i] = static_cast<int64_t>(std::floor(static_cast<double>(x.sizes()[2 + static_cast<int>(i)]) * f[i]));
    } else {
      a.has_factors = true;
      a.factor_len = static_cast<int>(f.size());
      for (size_t i = 0; i < f.size() && i < 2; ++i) a.factors[i] = f[i];
    }
  }
  if (cubic) return upsample_call<UpsampleBicubic2dOp>(x, a);
  if (linear) return dims == 1 ? upsample_call<UpsampleLinear1dOp>(x, a) : upsample_call<UpsampleBilinear2dOp>(x, a);
  return dims == 1 ? upsample_call<UpsampleNearest1dOp>(x, a) : upsample_call<UpsampleNearest2dOp>(x, a);
}
}  // namespace detail

// Each op's entry point, compiled once in TORCHTPU_SEPARATE_OPS programs (ops/library.hpp).
TORCHTPU_LIBRARY_OP(UpsampleNearest1dOp);
TORCHTPU_LIBRARY_OP(UpsampleNearest2dOp);
TORCHTPU_LIBRARY_OP(UpsampleLinear1dOp);
TORCHTPU_LIBRARY_OP(UpsampleBilinear2dOp);
TORCHTPU_LIBRARY_OP(UpsampleBicubic2dOp);

}  // namespace ops

/// Nearest upsampling of `[N, C, W]` to `output_size` (aten::upsample_nearest1d); `scales` the
/// scale factor the indices use when given. See ops::UpsampleNearest1dOp.
template <element T, int R>
Tensor<T> upsample_nearest1d(const Tensor<T, R>& x, const Dims& output_size, std::optional<double> scales = std::nullopt) {
  return ops::detail::upsample_call<ops::UpsampleNearest1dOp>(Tensor<T>(x), ops::detail::plain_upsample_args(output_size, scales, std::nullopt, false));
}
/// Run-time typed `upsample_nearest1d`.
template <std::same_as<AnyTensor> A>
A upsample_nearest1d(const A& x, const Dims& output_size, std::optional<double> scales = std::nullopt) {
  return ops::detail::upsample_call<ops::UpsampleNearest1dOp>(x, ops::detail::plain_upsample_args(output_size, scales, std::nullopt, false));
}
/// Nearest upsampling of `[N, C, H, W]` to `output_size` (aten::upsample_nearest2d). See
/// ops::UpsampleNearest2dOp.
template <element T, int R>
Tensor<T> upsample_nearest2d(const Tensor<T, R>& x, const Dims& output_size, std::optional<double> scales_h = std::nullopt,
                             std::optional<double> scales_w = std::nullopt) {
  return ops::detail::upsample_call<ops::UpsampleNearest2dOp>(Tensor<T>(x), ops::detail::plain_upsample_args(output_size, scales_h, scales_w, false));
}
/// Run-time typed `upsample_nearest2d`.
template <std::same_as<AnyTensor> A>
A upsample_nearest2d(const A& x, const Dims& output_size, std::optional<double> scales_h = std::nullopt,
                     std::optional<double> scales_w = std::nullopt) {
  return ops::detail::upsample_call<ops::UpsampleNearest2dOp>(x, ops::detail::plain_upsample_args(output_size, scales_h, scales_w, false));
}
/// Linear upsampling of `[N, C, W]` (aten::upsample_linear1d). See ops::UpsampleLinear1dOp.
template <element T, int R>
Tensor<T> upsample_linear1d(const Tensor<T, R>& x, const Dims& output_size, bool align_corners,
                            std::optional<double> scales = std::nullopt) {
  return ops::detail::upsample_call<ops::UpsampleLinear1dOp>(Tensor<T>(x), ops::detail::plain_upsample_args(output_size, scales, std::nullopt, align_corners));
}
/// Run-time typed `upsample_linear1d`.
template <std::same_as<AnyTensor> A>
A upsample_linear1d(const A& x, const Dims& output_size, bool align_corners, std::optional<double> scales = std::nullopt) {
  return ops::detail::upsample_call<ops::UpsampleLinear1dOp>(x, ops::detail::plain_upsample_args(output_size, scales, std::nullopt, align_corners));
}
/// Bilinear upsampling of `[N, C, H, W]` (aten::upsample_bilinear2d). See ops::UpsampleBilinear2dOp.
template <element T, int R>
Tensor<T> upsample_bilinear2d(const Tensor<T, R>& x, const Dims& output_size, bool align_corners,
                              std::optional<double> scales_h = std::nullopt, std::optional<double> scales_w = std::nullopt) {
  return ops::detail::upsample_call<ops::UpsampleBilinear2dOp>(Tensor<T>(x), ops::detail::plain_upsample_args(output_size, scales_h, scales_w, align_corners));
}
/// Run-time typed `upsample_bilinear2d`.
template <std::same_as<AnyTensor> A>
A upsample_bilinear2d(const A& x, const Dims& output_size, bool align_corners, std::optional<double> scales_h = std::nullopt,
                      std::optional<double> scales_w = std::nullopt) {
  return ops::detail::upsample_call<ops::UpsampleBilinear2dOp>(x, ops::detail::plain_upsample_args(output_size, scales_h, scales_w, align_corners));
}

/// Resizes `[N, C, W]` or `[N, C, H, W]` as torch.nn.functional.interpolate: `size` (one value
/// repeats) or `scale_factor` (one value repeats; the output size is `floor(in * factor)` and
/// the factor sets the source indices unless `recompute_scale_factor`), `mode` 'nearest' (3-D
/// or 4-D), 'linear' (3-D), 'bilinear' or 'bicubic' (4-D), `align_corners` for the
/// interpolating modes only (default false). Calls upsample_nearest1d/2d, upsample_linear1d,
/// upsample_bilinear2d or upsample_bicubic2d.
/// **Errors:** ValueError for another mode, both or neither of size and scale_factor, or
/// align_corners with 'nearest'; ShapeError for a rank the mode does not take; the op's errors.
/// **Example:** `interpolate(x, std::nullopt, std::vector<double>{2.0}, "bilinear", false)`.
template <element T, int R>
Tensor<T> interpolate(const Tensor<T, R>& x, std::optional<Dims> size, std::optional<std::vector<double>> scale_factor = std::nullopt,
                      std::string_view mode = "nearest", std::optional<bool> align_corners = std::nullopt,
                      std::optional<bool> recompute_scale_factor = std::nullopt) {
  return ops::detail::interpolate_impl(Tensor<T>(x), size, scale_factor, mode, align_corners, recompute_scale_factor);
}
/// Run-time typed `interpolate`.
template <std::same_as<AnyTensor> A>
A interpolate(const A& x, std::optional<Dims> size, std::optional<std::vector<double>> scale_factor = std::nullopt,
              std::string_view mode = "nearest", std::optional<bool> align_corners = std::nullopt,
              std::optional<bool> recompute_scale_factor = std::nullopt) {
  return ops::detail::interpolate_impl(x, size, scale_factor, mode, align_corners, recompute_scale_factor);
}

}  // namespace torchtpu
