// torchtpu/fuse/window.hpp — the 2-D sliding-window kernels of the CPU engine: max pooling,
// average pooling and depthwise convolution over one [H, W] plane at a time (NCHW, f32),
// vectorized along output columns on every vector target. Pooling: the scalar loop is the
// definition of each value at the borders and on the scalar path. Depthwise convolution: each
// plane is copied, band by band, into zero-padded blocks split by the strides into phases
// (PhaseBlocks), so every output (borders included) is a chain of vector FMAs over contiguous
// loads; the convolution's GEMM reads its B operand from the same blocks (FlatConvArgs). The scalar
// loop is one template over the element/accumulator type: float64 pooling and integer max
// pooling run it too (window2d_typed).
#pragma once
#include <algorithm>  // std::min, std::max, std::clamp, std::fill
#include <cstdint>    // int64_t
#include <limits>     // std::numeric_limits
#include <type_traits>  // std::is_floating_point_v, std::is_same_v

#include "simd.hpp"     // FloatVec, vector_entry, select, vconcat_even, vconcat_odd, vfma
#include "threads.hpp"  // parallel_chunks, chunks_for, workspace

namespace torchtpu::detail {

/// One window operation over planes of a contiguous NCHW f32 tensor. Geometry as PyTorch's
/// (`kernel kh x kw`, stride, padding, dilation; output `OH x OW` computed by the caller);
/// `planes` planes of `H x W` at `x`, written as `OH x OW` planes at `out` (plane p at
/// `x + p · x_step()` and `out + p · out_step()`: contiguous planes unless `x_plane` /
/// `out_plane` say otherwise, as for a band of rows of each plane).
/// - `max`: maximum over the window's in-bounds elements (padding counts as -inf); a NaN in
///   the window gives NaN (torch.nn.functional.max_pool2d).
/// - `avg`: sum over the in-bounds elements, divided by `divisor_override` (> 0), or by the
///   window's size clipped to the padded input (`count_include_pad`), or by its in-bounds
///   count (torch.nn.functional.avg_pool2d; dilation must be 1).
/// - `depthwise`: sum of x · weight[i, j] over the in-bounds window (weight: `planes_per_item`
///   channels of kh x kw, channel = plane % planes_per_item), plus bias[channel] (or 0).
struct Window2dArgs {
  enum class Kind { max, avg, depthwise } kind = Kind::max;
  const float* x = nullptr;
  float* out = nullptr;
  int64_t planes = 0, H = 0, W = 0, OH = 0, OW = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  bool count_include_pad = true;
  int64_t divisor_override = 0;
  const float* weight = nullptr;
  const float* bias = nullptr;
  int64_t planes_per_item = 1;
  /// Floats from one input plane to the next, and from one output plane to the next (0: H · W
  /// and OH · OW). Rows stay contiguous: a band of rows of larger planes (a convolution chain's
  /// band, ops/conv.hpp `conv2d_chain`) has `x_plane` > H · W.
  int64_t x_plane = 0, out_plane = 0;
  /// Floats from one input plane to the next.
  int64_t x_step() const { return x_plane ? x_plane : H * W; }
  /// Floats from one output plane to the next.
  int64_t out_step() const { return out_plane ? out_plane : OH * OW; }
};

/// The divisor of average pooling's output (oh, ow) (see Window2dArgs).
inline int64_t window_avg_divisor(const Window2dArgs& a, int64_t oh, int64_t ow) {
  if (a.divisor_override > 0) return a.divisor_override;
  int64_t h0 = oh * a.sh - a.ph, w0 = ow * a.sw - a.pw;
  int64_t h1 = std::min(h0 + a.kh, a.H + a.ph), w1 = std::min(w0 + a.kw, a.W + a.pw);
  if (a.count_include_pad) return (h1 - h0) * (w1 - w0);
  h0 = std::max<int64_t>(h0, 0);
  w0 = std::max<int64_t>(w0, 0);
  h1 = std::min(h1, a.H);
  w1 = std::min(w1, a.W);
  return (h1 - h0) * (w1 - w0);
}

/// True for a NaN (never for an integer type).
template <class T>
constexpr bool window_is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return v != v;
  else return false;
}

/// Where a maximum starts: -inf, or an integer type's lowest value.
template <class T>
constexpr T window_lowest() {
  if constexpr (std::numeric_limits<T>::has_infinity) return -std::numeric_limits<T>::infinity();
  else return std::numeric_limits<T>::lowest();
}

/// Output (oh, ow) of plane `plane` of the planes at `x` (not `a.x`) computed by plain loops in
/// element and accumulator type `T`: the definition of every value. `T` float: every kind (the
/// engine's float32 path and its vector kernels' borders); double: max and avg pooling in
/// float64; integer types: max pooling (from the type's lowest value instead of -inf) and
/// int64 average pooling (the sum divided with C++'s truncating `/`, as torch's cpu kernel).
template <class T>
T window_value(const Window2dArgs& a, const T* x, int64_t plane, int64_t oh, int64_t ow) {
  const T* xc = x + plane * a.x_step();
  if (a.kind == Window2dArgs::Kind::avg) {
    const int64_t h0 = std::max<int64_t>(oh * a.sh - a.ph, 0), w0 = std::max<int64_t>(ow * a.sw - a.pw, 0);
    const int64_t h1 = std::min(oh * a.sh - a.ph + a.kh, a.H), w1 = std::min(ow * a.sw - a.pw + a.kw, a.W);
    T s = T(0);
    for (int64_t i = h0; i < h1; ++i)
      for (int64_t j = w0; j < w1; ++j) s += xc[i * a.W + j];
    const int64_t div = window_avg_divisor(a, oh, ow);
    return div > 0 ? T(s / T(div)) : T(0);
  }
  const bool mx = a.kind == Window2dArgs::Kind::max;
  const int64_t ch = plane % a.planes_per_item;
  const float* wk = mx ? nullptr : a.weight + ch * a.kh * a.kw;
  T r = mx ? window_lowest<T>() : T(0);
  for (int64_t i = 0; i < a.kh; ++i) {
    const int64_t ih = oh * a.sh - a.ph + i * a.dh;
    if (ih < 0 || ih >= a.H) continue;
    for (int64_t j = 0; j < a.kw; ++j) {
      const int64_t iw = ow * a.sw - a.pw + j * a.dw;
      if (iw < 0 || iw >= a.W) continue;
      const T v = xc[ih * a.W + iw];
      if (mx) {
        if (v > r || window_is_nan(v)) r = v;
      } else if constexpr (std::is_same_v<T, float>) {  // depthwise: float32 weights
        r += v * wk[i * a.kw + j];
      }
    }
  }
  if constexpr (std::is_same_v<T, float>)
    if (!mx) return r + (a.bias ? a.bias[ch] : 0.0f);
  return r;
}

/// Output (oh, ow) of plane `plane` of `a` (float32) by plain loops (window_value).
inline float window_at(const Window2dArgs& a, int64_t plane, int64_t oh, int64_t ow) {
  return window_value<float>(a, a.x, plane, oh, ow);
}

/// Planes [p0, p1) of the planes at `x`, written to `out`, by plain loops in type `T`.
template <class T>
void window2d_planes_scalar(const Window2dArgs& a, const T* x, T* out, int64_t p0, int64_t p1) {
  for (int64_t pl = p0; pl < p1; ++pl) {
    T* o = out + pl * a.out_step();
    for (int64_t oh = 0; oh < a.OH; ++oh)
      for (int64_t ow = 0; ow < a.OW; ++ow) o[oh * a.OW + ow] = window_value<T>(a, x, pl, oh, ow);
  }
}

/// Planes [p0, p1) of `a` (float32) by plain loops.
inline void window2d_scalar(const Window2dArgs& a, int64_t p0, int64_t p1) {
  window2d_planes_scalar<float>(a, a.x, a.out, p0, p1);
}

/// The output columns [lo, hi) whose whole window row lies inside the input (no padding, no
/// clipping): there the vector loop runs; the columns outside are the scalar border.
inline void window_interior(const Window2dArgs& a, int64_t& lo, int64_t& hi) {
  lo = (a.pw + a.sw - 1) / a.sw;  // ow * sw - pw >= 0
  const int64_t last = a.W - 1 - (a.kw - 1) * a.dw + a.pw;  // ow * sw <= last
  hi = last < 0 ? 0 : last / a.sw + 1;
  hi = std::min(hi, a.OW);
  if (hi < lo) hi = lo;
}

/// The most window taps `FlatConvArgs` lists.
inline constexpr int64_t flat_conv_max_taps = 64;

/// One image's group of a 2-D convolution as the B operand of its GEMM over flat positions:
/// B[k, q] with k = (input channel c, window row i, column j) and q = oh · wq + ow is element
/// q + phase_tap_offset(i, j) of channel c's phase blocks (PhaseBlocks: columns ow in [OW, wq)
/// are computed and dropped). `flat_conv_pack_b` packs its panels by plain row copies (no
/// borders, no strides: the blocks hold the padding and the phase split), so the GEMM's B costs
/// one copy of the input (`phase_fill_planes`) and one copy per panel row. Each block is
/// followed by `flat_conv_slack` floats (zeroed) that the last panels read past the outputs.
struct FlatConvArgs {
  const float* x = nullptr;                  ///< the phase blocks of the group's first channel
  int64_t channel_floats = 0;                ///< floats from one channel's blocks to the next's
  int64_t taps = 1;                          ///< kh · kw (at most flat_conv_max_taps)
  int64_t tap_off[flat_conv_max_taps] = {};  ///< phase_tap_offset of tap i · kw + j
};

/// Floats after each phase block's rows that `flat_conv_pack_b` may read (a panel of at most
/// im2col_max_nr columns, and a vector past it).
inline constexpr int64_t flat_conv_slack = 2 * 64;

/// One image's group of a 2-D convolution as the B operand of its GEMM: B[k, l] with k =
/// (input channel, window row i, window column j) and l = output position (oh, ow) is
/// x[channel, oh · sh - ph + i · dh, ow · sw - pw + j · dw], zero outside the input (torch's
/// im2col). `im2col_pack_b` computes it panel by panel while the GEMM packs B
/// (`SgemmArgs::pack_b_from`), so no unfolded [K, L] buffer exists. With `plane` set, the
/// columns are several images' positions one after another (column l is image l / plane,
/// position l % plane; image i's channels start `i · image_stride` floats after `x`): one GEMM
/// for a batch of small output planes instead of one per image.
struct Im2colArgs {
  const float* x = nullptr;  ///< the group's first input channel, [Cg, H, W] contiguous
  int64_t H = 0, W = 0, KH = 1, KW = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  int64_t OW = 1, L = 0;  ///< output width, columns (OH · OW, times the images when `plane` is set)
  int64_t plane = 0;         ///< output positions per image (OH · OW) when the columns span images; 0: one image
  int64_t image_stride = 0;  ///< floats from one image's input to the next's (C · H · W)
};

/// The widest GEMM panel `im2col_pack_b` packs.
inline constexpr int64_t im2col_max_nr = 64;

/// A run of a panel's columns within one output row: dst columns [at, at + len) are output
/// row oh, columns [ow, ow + len) of the image whose input starts `image` floats after `x`.
struct Im2colRun {
  int64_t at, len, oh, ow, image;
};

/// Cuts columns [j0, j0 + cols) into runs within one output row (of one image); returns the
/// count (<= cols).
inline int im2col_runs(const Im2colArgs& g, int64_t j0, int64_t cols, Im2colRun* runs) {
  int n = 0;
  const int64_t plane = g.plane > 0 ? g.plane : g.L;
  for (int64_t c = 0; c < cols;) {
    const int64_t j = j0 + c, img = plane > 0 ? j / plane : 0, pos = j - img * plane;
    const int64_t oh = pos / g.OW, ow = pos % g.OW;
    const int64_t len = std::min(cols - c, g.OW - ow);
    runs[n++] = Im2colRun{c, len, oh, ow, img * g.image_stride};
    c += len;
  }
  return n;
}

/// The run's outputs q in [q0, q1) read inside the input row (input column iw0 + q · sw).
inline void im2col_inside(const Im2colArgs& g, const Im2colRun& u, int64_t iw0, int64_t& q0, int64_t& q1) {
  if (g.sw == 1) {
    q0 = std::clamp<int64_t>(-iw0, 0, u.len);
    q1 = std::clamp<int64_t>(g.W - iw0, q0, u.len);
  } else {
    q0 = std::min(u.len, iw0 >= 0 ? 0 : (-iw0 + g.sw - 1) / g.sw);
    q1 = std::max(q0, std::min(u.len, iw0 >= g.W ? 0 : (g.W - iw0 + g.sw - 1) / g.sw));
  }
}

/// Rows [p0, p0 + kb) x columns [j0, j0 + nr) of `g`'s B into dst[kb][nr] (zero past L).
/// `ops.zero(d, n)` zeroes n floats; `ops.copy(g, d, src, q0, q1)` writes d[q] = src[q · sw]
/// for q in [q0, q1) (the part of a run inside the input row). Always inlined (TORCHTPU_VEC),
/// so that a vector kernel's `ops` compile for its target at every optimization level.
template <class Ops>
TORCHTPU_VEC void im2col_pack_with(const Im2colArgs& g, int64_t p0, int64_t kb, int64_t j0, int64_t nr, float* dst,
                                   const Ops& ops) {
  Im2colRun runs[im2col_max_nr];
  const int64_t cols = std::min(nr, g.L - j0);
  const int nruns = im2col_runs(g, j0, cols, runs);
  const int64_t taps = g.KH * g.KW;
  // Per window tap (i, j) and run, the same for every channel: where the run's first output
  // reads in a channel's plane (possibly left of its row: padding), its outputs [q0, q1) inside
  // the input row, and whether the whole input row is padding.
  struct Part {
    int64_t off, q0, q1;
    bool pad_row;
  };
  constexpr int64_t max_parts = 512;
  Part parts[max_parts];
  const bool cached = taps * nruns <= max_parts;
  auto part = [&](int64_t i, int64_t j, const Im2colRun& u) {
    const int64_t ih = u.oh * g.sh - g.ph + i * g.dh;
    if (ih < 0 || ih >= g.H) return Part{0, 0, 0, true};
    const int64_t iw0 = u.ow * g.sw - g.pw + j * g.dw;
    Part pt{u.image + ih * g.W + iw0, 0, 0, false};
    im2col_inside(g, u, iw0, pt.q0, pt.q1);
    return pt;
  };
  if (cached)
    for (int64_t t = 0; t < taps; ++t)
      for (int r = 0; r < nruns; ++r) parts[t * nruns + r] = part(t / g.KW, t % g.KW, runs[r]);
  int64_t ch = p0 / taps, t = p0 % taps;
  for (int64_t kk = 0; kk < kb; ++kk, dst += nr) {
    const float* xc = g.x + ch * g.H * g.W;
    for (int r = 0; r < nruns; ++r) {
      const Im2colRun& u = runs[r];
      const Part pt = cached ? parts[t * nruns + r] : part(t / g.KW, t % g.KW, u);
      float* d = dst + u.at;
      if (pt.pad_row) {
        ops.zero(d, u.len);
        continue;
      }
      if (pt.q0 > 0) ops.zero(d, pt.q0);
      ops.copy(g, d, xc + pt.off, pt.q0, pt.q1);
      if (pt.q1 < u.len) ops.zero(d + pt.q1, u.len - pt.q1);
    }
    if (cols < nr) ops.zero(dst + cols, nr - cols);
    if (++t == taps) {
      t = 0;
      ++ch;
    }
  }
}

/// `im2col_pack_with`'s plain-loop operations.
struct Im2colScalarOps {
  void zero(float* d, int64_t n) const { std::fill(d, d + n, 0.0f); }
  void copy(const Im2colArgs& g, float* d, const float* src, int64_t q0, int64_t q1) const {
    for (int64_t q = q0; q < q1; ++q) d[q] = src[q * g.sw];
  }
};

/// `im2col_pack_with` by plain loops.
inline void im2col_pack_scalar(const Im2colArgs& g, int64_t p0, int64_t kb, int64_t j0, int64_t nr, float* dst) {
  im2col_pack_with(g, p0, kb, j0, nr, dst, Im2colScalarOps{});
}

#if TORCHTPU_HAS_VECTOR_PATH
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"  // vectors passed between target and generic code

/// `lanes` input elements starting at p, `Stride` (1 or 2) apart; reads p[0 .. Stride·(lanes-1)]
/// only.
template <class V, int Stride>
TORCHTPU_VEC V window_load(const float* p) {
  if constexpr (Stride == 1) return V::load(p);
  else return vconcat_even(V::load_n(p + V::lanes, V::lanes - 1), V::load(p));
}

/// Average pooling, planes [p0, p1): interior columns `lanes` at a time (stride 1 or 2),
/// borders by window_at. Each output is summed in window_at's order (window rows, then
/// columns), so the values are bitwise the scalar ones. (Max pooling and depthwise convolution
/// run on phase blocks: `depthwise_planes`.)
template <class V, int Stride>
TORCHTPU_VEC void window2d_planes(const Window2dArgs& a, int64_t p0, int64_t p1) {
  constexpr int L = V::lanes;
  int64_t lo, hi;
  window_interior(a, lo, hi);
  for (int64_t pl = p0; pl < p1; ++pl) {
    const float* xc = a.x + pl * a.x_step();
    float* o = a.out + pl * a.out_step();
    for (int64_t oh = 0; oh < a.OH; ++oh) {
      float* orow = o + oh * a.OW;
      for (int64_t ow = 0; ow < std::min(lo, a.OW); ++ow) orow[ow] = window_at(a, pl, oh, ow);
      // the window rows inside the input for this output row
      int64_t i0 = 0, i1 = a.kh;
      while (i0 < i1 && oh * a.sh - a.ph + i0 < 0) ++i0;
      while (i1 > i0 && oh * a.sh - a.ph + (i1 - 1) >= a.H) --i1;
      const V div = V::set1(hi > lo ? float(window_avg_divisor(a, oh, lo)) : 1.0f);
      const bool div_pos = hi <= lo || window_avg_divisor(a, oh, lo) > 0;
      int64_t ow = lo;
      for (; ow + L <= hi; ow += L) {
        V r = V::zero();
        for (int64_t i = i0; i < i1; ++i) {
          const float* xr = xc + (oh * a.sh - a.ph + i) * a.W + ow * a.sw - a.pw;
          for (int64_t j = 0; j < a.kw; ++j) r = r + window_load<V, Stride>(xr + j);
        }
        vstore(orow + ow, div_pos ? r / div : V::zero(), L);
      }
      for (; ow < a.OW; ++ow) orow[ow] = window_at(a, pl, oh, ow);
    }
  }
}

/// A plane split by the window's strides into phase blocks, so that every output of a 2-D
/// window (depthwise convolution, fuse/window.hpp; the convolution's flat GEMM operand,
/// `FlatConvArgs`) reads each window tap at one fixed offset from its own position. Padded
/// input element (r, c) (input row r - ph, column c - pw; zero outside the input) is in phase
/// block (r % sh, c % sw), at block row r / sh - (the first output row filled) and block column
/// c / sw. Output (oh, ow) and tap (i, j) read padded (oh·sh + i·dh, ow·sw + j·dw): block
/// ((i·dh) % sh, (j·dw) % sw), row oh + (i·dh) / sh, column ow + (j·dw) / sw. Blocks are `wq`
/// columns wide (every output column's every tap), so with output (oh, ow) at flat position
/// q = oh·wq + ow every tap reads its block's element q + `phase_tap_offset`: the outputs are
/// one run of contiguous positions whatever the plane's width (the wq - OW positions after each
/// row's outputs are computed and dropped). Blocks of phases no tap reads are never filled.
struct PhaseBlocks {
  int64_t wq = 0;     ///< block columns
  int64_t extra = 0;  ///< block rows after the output rows that the windows read: ((kh - 1)·dh) / sh
  int64_t block = 0;  ///< floats from one phase block to the next (rows and slack)
};

/// The block width and extra rows of window `a` (`block` left 0).
inline PhaseBlocks phase_blocks(const Window2dArgs& a) {
  PhaseBlocks b;
  b.wq = a.OW + (a.kw - 1) * a.dw / a.sw;
  b.extra = (a.kh - 1) * a.dh / a.sh;
  return b;
}

/// Where tap (i, j) of window `a` reads in blocks `b`, from an output's flat position.
inline int64_t phase_tap_offset(const Window2dArgs& a, const PhaseBlocks& b, int64_t i, int64_t j) {
  const int64_t ic = i * a.dh, jc = j * a.dw;
  return ((ic % a.sh) * a.sw + jc % a.sw) * b.block + ic / a.sh * b.wq + jc / a.sw;
}

/// True when some tap of window `a` reads phase (ri, rj).
inline bool phase_used(const Window2dArgs& a, int64_t ri, int64_t rj) {
  bool row = false, col = false;
  for (int64_t i = 0; i < a.kh && !row; ++i) row = (i * a.dh) % a.sh == ri;
  for (int64_t j = 0; j < a.kw && !col; ++j) col = (j * a.dw) % a.sw == rj;
  return row && col;
}

/// Sets at least `n` floats from `d` to `v` by whole vectors (n may be 0): up to lanes - 1
/// floats past d + n are set too (phase_fill writes each block row after the one before).
template <class V>
TORCHTPU_VEC void phase_set(float* d, int64_t n, V v) {
  for (int64_t c = 0; c < n; c += V::lanes) vstore(d + c, v, V::lanes);
}
/// `phase_set` to zero.
template <class V>
TORCHTPU_VEC void phase_zero(float* d, int64_t n) {
  phase_set<V>(d, n, V::zero());
}

/// Fills the phase blocks at `blk` (`sh · sw` blocks `b.block` floats apart, each at least
/// (rows + b.extra) · b.wq + lanes floats) for output rows [oh0, oh0 + rows) of plane `xc`
/// (H x W), as PhaseBlocks describes, the padding as `pad` (0 for a convolution, -inf for max
/// pooling, whose padded taps never win). Rows are written in order by whole vectors, each
/// one's overrun (at most lanes - 1 floats) landing where a later store writes or in the block's
/// slack: the only masked accesses are loads of an input row's last vector.
template <class V>
TORCHTPU_VEC void phase_fill(const Window2dArgs& a, const PhaseBlocks& b, const float* xc, int64_t oh0, int64_t rows,
                             float* blk, float pad = 0.0f) {
  constexpr int L = V::lanes;
  const V padv = V::set1(pad);
  const int64_t brows = rows + b.extra;
  for (int64_t ri = 0; ri < a.sh; ++ri)
    for (int64_t rj = 0; rj < a.sw; ++rj) {
      if (!phase_used(a, ri, rj)) continue;
      float* d0 = blk + (ri * a.sw + rj) * b.block;
      // block columns [c0, c1) are inside the input: input column c · sw + rj - pw in [0, W)
      const int64_t c0 = std::min(b.wq, a.pw > rj ? (a.pw - rj + a.sw - 1) / a.sw : 0);
      const int64_t c1 = std::clamp<int64_t>((a.W + a.pw - rj + a.sw - 1) / a.sw, c0, b.wq), n = c1 - c0;
      const int64_t iw0 = c0 * a.sw + rj - a.pw;  // input column of block column c0
      for (int64_t r = 0; r < brows; ++r) {
        float* d = d0 + r * b.wq;
        const int64_t ih = (oh0 + r) * a.sh + ri - a.ph;
        if (ih < 0 || ih >= a.H) {
          phase_set<V>(d, b.wq, padv);
          continue;
        }
        const float* src = xc + ih * a.W + iw0;
        phase_set<V>(d, c0, padv);
        int64_t c = 0;
        if (a.sw == 1) {
          for (; c + L <= n; c += L) vstore(d + c0 + c, V::load(src + c), L);
          if (c < n) vstore(d + c0 + c, select(V::first_n(int(n - c)), V::load_n(src + c, n - c), padv), L);  // pad past the row
        } else if (a.sw == 2) {
          // block column c0 + c reads src[2c]; the row has W - iw0 - 2c floats from there
          for (; c < n; c += L) {
            const int64_t avail = a.W - iw0 - 2 * c;
            const V lo = V::load_n(src + 2 * c, avail), hi = V::load_n(src + 2 * c + L, std::max<int64_t>(avail - L, 0));
            const V v = vconcat_even(hi, lo);
            vstore(d + c0 + c, n - c < L ? select(V::first_n(int(n - c)), v, padv) : v, L);  // pad past the row
          }
        } else {
          for (; c < n; ++c) d[c0 + c] = src[c * a.sw];
        }
        // pad from c1 on, where the last vector's pad lanes did not reach
        const int64_t z = c0 + (a.sw <= 2 ? (n + L - 1) / L * L : n);
        if (z < b.wq) phase_set<V>(d + z, b.wq - z, padv);
      }
    }
}

/// How `depthwise_planes` cuts a plane into bands of output rows: bands of about 16 KiB of
/// phase blocks (they stay in the L1 cache while their outputs are computed), the whole plane
/// when it is smaller, at least 4 · extra rows (so that re-filled rows stay a small part). Each
/// block holds band + extra + 1 rows and a vector of slack: the last output vector of a band
/// reads up to there (the positions past its outputs are dropped).
inline PhaseBlocks depthwise_bands(const Window2dArgs& a, int64_t lanes, int64_t& band) {
  PhaseBlocks b = phase_blocks(a);
  const int64_t fit = 4096 / (a.sh * a.sw * b.wq) - b.extra;
  band = std::clamp<int64_t>(std::max(fit, 4 * b.extra), 1, a.OH);
  b.block = (band + b.extra + 1) * b.wq + lanes;
  return b;
}

/// U consecutive output vectors at `o` of a band whose first one's taps read `blk` + offs[k]:
/// U independent FMA chains over the taps (weight wk[k]), starting from the bias.
template <class V, int U>
TORCHTPU_VEC void depthwise_vectors(const float* blk, const float* wk, const int64_t* offs, int64_t taps, V bias,
                                    float* o) {
  constexpr int L = V::lanes;
  V acc[U];
#pragma GCC unroll 16
  for (int u = 0; u < U; ++u) acc[u] = bias;
  for (int64_t k = 0; k < taps; ++k) {
    const V w = V::set1(wk[k]);
    const float* p = blk + offs[k];
#pragma GCC unroll 16
    for (int u = 0; u < U; ++u) acc[u] = vfma(V::load(p + u * L), w, acc[u]);
  }
#pragma GCC unroll 16
  for (int u = 0; u < U; ++u) vstore(o + u * L, acc[u], L);
}

/// U consecutive max-pooling output vectors at `o` of a band whose first one's taps read `blk`
/// + offs[k]: the window's maximum in window_value's order (rows, then columns; a NaN wins, the
/// last one seen), so the values are bitwise the plain loops'.
template <class V, int U>
TORCHTPU_VEC void max_pool_vectors(const float* blk, const int64_t* offs, int64_t taps, float* o) {
  constexpr int L = V::lanes;
  V acc[U];
#pragma GCC unroll 16
  for (int u = 0; u < U; ++u) acc[u] = V::set1(-std::numeric_limits<float>::infinity());
  for (int64_t k = 0; k < taps; ++k) {
    const float* p = blk + offs[k];
#pragma GCC unroll 16
    for (int u = 0; u < U; ++u) {
      const V v = V::load(p + u * L);
      acc[u] = select((v > acc[u]) | is_nan(v), v, acc[u]);
    }
  }
#pragma GCC unroll 16
  for (int u = 0; u < U; ++u) vstore(o + u * L, acc[u], L);
}

/// Depthwise convolution or max pooling, planes [p0, p1), any stride, dilation and padding:
/// band by band, the input rows are copied into per-thread phase blocks (phase_fill; padding
/// as zeros for the convolution, -inf for max pooling), every output of the band (borders and
/// ceil_mode's clipped windows included) is a chain of vector FMAs (or maxima) over contiguous
/// loads, 8 vectors at a time (8 chains hide the latency), into a per-thread buffer of wq-wide
/// rows whose first OW columns are the output rows. Padding contributes x = 0 terms to the
/// convolution, as in torch's im2col and XLA's convolution, and never wins a maximum (a window
/// of padding only gives -inf, as the plain loops).
template <class V>
TORCHTPU_VEC void depthwise_planes(const Window2dArgs& a, int64_t p0, int64_t p1) {
  constexpr int L = V::lanes;
  int64_t band = 0;
  const PhaseBlocks b = depthwise_bands(a, L, band);
  const int64_t phases = a.sh * a.sw, taps = a.kh * a.kw;
  // the phase blocks, then the output buffer: the band's vectors and one more (the last row's
  // copy reads up to there)
  const int64_t out_floats = (band * b.wq + L - 1) / L * L + L;
  float* blk = workspace<float>(size_t(phases * b.block + out_floats), 4);
  float* ob = blk + phases * b.block;
  // where tap (i, j) reads, from an output's flat position
  int64_t* offs = workspace<int64_t>(size_t(taps), 4);
  for (int64_t i = 0; i < a.kh; ++i)
    for (int64_t j = 0; j < a.kw; ++j) offs[i * a.kw + j] = phase_tap_offset(a, b, i, j);
  const bool mx = a.kind == Window2dArgs::Kind::max;
  for (int64_t pl = p0; pl < p1; ++pl) {
    const int64_t ch = pl % a.planes_per_item;
    const float* xc = a.x + pl * a.x_step();
    const float* wk = mx ? nullptr : a.weight + ch * taps;
    const V bias = V::set1(!mx && a.bias ? a.bias[ch] : 0.0f);
    float* o = a.out + pl * a.out_step();
    for (int64_t oh0 = 0; oh0 < a.OH; oh0 += band) {
      const int64_t rows = std::min(band, a.OH - oh0), nvec = (rows * b.wq + L - 1) / L;
      phase_fill<V>(a, b, xc, oh0, rows, blk, mx ? -std::numeric_limits<float>::infinity() : 0.0f);
      int64_t t = 0;
      if (mx) {
        for (; t + 8 <= nvec; t += 8) max_pool_vectors<V, 8>(blk + t * L, offs, taps, ob + t * L);
        for (; t < nvec; ++t) max_pool_vectors<V, 1>(blk + t * L, offs, taps, ob + t * L);
      } else {
        for (; t + 8 <= nvec; t += 8) depthwise_vectors<V, 8>(blk + t * L, wk, offs, taps, bias, ob + t * L);
        if (t + 4 <= nvec) {
          depthwise_vectors<V, 4>(blk + t * L, wk, offs, taps, bias, ob + t * L);
          t += 4;
        }
        for (; t < nvec; ++t) depthwise_vectors<V, 1>(blk + t * L, wk, offs, taps, bias, ob + t * L);
      }
      // the output rows, in order by whole vectors (each overrun is rewritten by the rows
      // after it), but masked near the plane's end (the next plane may be another thread's)
      for (int64_t r = 0; r < rows; ++r) {
        const float* s = ob + r * b.wq;
        float* d = o + (oh0 + r) * a.OW;
        const int64_t left = (a.OH - oh0 - r) * a.OW;  // the plane's floats from d on
        for (int64_t c = 0; c < a.OW; c += L) vstore(d + c, V::load(s + c), std::min<int64_t>(L, left - c));
      }
    }
  }
}

/// `im2col_pack_with`'s operations on vector type V: stride-1 runs by (masked) vector copies,
/// stride-2 ones by deinterleaving loads (whole vectors; the last partial one by plain loops).
template <class V>
struct Im2colVectorOps {
  TORCHTPU_VEC void zero(float* d, int64_t n) const {
    for (int64_t q = 0; q < n; q += V::lanes) vstore(d + q, V::zero(), n - q);
  }
  TORCHTPU_VEC void copy(const Im2colArgs& g, float* d, const float* src, int64_t q0, int64_t q1) const {
    constexpr int L = V::lanes;
    if (g.sw == 1) {
      for (int64_t q = q0; q < q1; q += L) vstore(d + q, V::load_n(src + q, q1 - q), q1 - q);
      return;
    }
    int64_t q = q0;
    if (g.sw == 2)
      for (; q + L <= q1; q += L) vstore(d + q, window_load<V, 2>(src + 2 * q), L);
    for (; q < q1; ++q) d[q] = src[q * g.sw];
  }
};

struct Im2colBody {
  template <class V>
  TORCHTPU_VEC void operator()(const Im2colArgs& g, int64_t p0, int64_t kb, int64_t j0, int64_t nr, float* dst) const {
    im2col_pack_with(g, p0, kb, j0, nr, dst, Im2colVectorOps<V>{});
  }
};

/// `flat_conv_pack_b` on vector type V: rows [p0, p0 + kb) x columns [j0, j0 + nr) of the
/// flat B into dst[kb][nr], a plain copy per row (reads up to a vector past column j0 + nr).
struct FlatConvPackBody {
  template <class V>
  TORCHTPU_VEC void operator()(const FlatConvArgs& g, int64_t p0, int64_t kb, int64_t j0, int64_t nr, float* dst) const {
    constexpr int L = V::lanes;
    int64_t t = p0 % g.taps;
    const float* xc = g.x + p0 / g.taps * g.channel_floats + j0;
    for (int64_t kk = 0; kk < kb; ++kk, dst += nr) {
      const float* src = xc + g.tap_off[t];
      for (int64_t q = 0; q < nr; q += L) vstore(dst + q, V::load(src + q), nr - q);
      if (++t == g.taps) {
        t = 0;
        xc += g.channel_floats;
      }
    }
  }
};

/// `phase_fill_planes` on vector type V: planes [p0, p1) of `a.x`, whole, into blocks `b` at
/// `dst` (one plane's blocks `sh · sw · b.block` floats after the previous one's), the slack
/// after each block's rows zeroed.
struct PhaseFillBody {
  template <class V>
  TORCHTPU_VEC void operator()(const Window2dArgs& a, const PhaseBlocks& b, float* dst, int64_t p0, int64_t p1) const {
    const int64_t rows = a.OH + b.extra;
    for (int64_t pl = p0; pl < p1; ++pl) {
      float* d = dst + pl * a.sh * a.sw * b.block;
      phase_fill<V>(a, b, a.x + pl * a.x_step(), 0, a.OH, d);
      for (int64_t ph = 0; ph < a.sh * a.sw; ++ph)
        if (phase_used(a, ph / a.sw, ph % a.sw)) phase_zero<V>(d + ph * b.block + rows * b.wq, b.block - rows * b.wq);
    }
  }
};

struct Window2dBody {
  template <class V>
  TORCHTPU_VEC void operator()(const Window2dArgs& a, int64_t p0, int64_t p1) const {
    if (a.kind != Window2dArgs::Kind::avg) depthwise_planes<V>(a, p0, p1);  // depthwise, max
    else if (a.sw == 1) window2d_planes<V, 1>(a, p0, p1);
    else window2d_planes<V, 2>(a, p0, p1);
  }
};
#pragma GCC diagnostic pop
#endif

#if TORCHTPU_HAS_AVX512_PATH
/// Depthwise convolution, planes [p0, p1), with 16 channels as the 16 lanes of each vector
/// (AVX-512; taken by `window2d_kernel_for` for small output planes, `depthwise_lanes_pays`):
/// per group of 16 planes, the input rows the windows read are transposed (16 x 16 register
/// transposes) into a zero-padded grid of [row][column][16 channels], each output is a chain
/// of FMAs over its taps in `depthwise_vectors`' order (the bias, then tap i · kw + j, padding
/// as zero terms), so the values are bitwise `depthwise_planes`', and the outputs are transposed
/// back into the planes. On 14x14 and 7x7 planes the phase blocks' per-plane copies cost
/// several times the FMAs; here they are shared by 16 channels.
TORCHTPU_SIMD_KERNEL inline void depthwise_lanes_avx512(const Window2dArgs& a, int64_t p0, int64_t p1) {
  const int64_t taps = a.kh * a.kw, Q = a.OH * a.OW;
  const int64_t Hp = (a.OH - 1) * a.sh + (a.kh - 1) * a.dh + 1, Wp = (a.OW - 1) * a.sw + (a.kw - 1) * a.dw + 1;
  float* grid = workspace<float>(size_t((Hp * Wp + taps) * 16), 4);
  float* wv = grid + Hp * Wp * 16;  // the weights, [tap][16 channels]
  for (int64_t g0 = p0; g0 < p1; g0 += 16) {
    const int nc = int(std::min<int64_t>(16, p1 - g0));
    alignas(64) float bb[16];
    for (int64_t l = 0, ch = g0 % a.planes_per_item; l < 16; ++l, ch = ch + 1 == a.planes_per_item ? 0 : ch + 1) {
      for (int64_t k = 0; k < taps; ++k) wv[k * 16 + l] = l < nc ? a.weight[ch * taps + k] : 0.0f;
      bb[l] = l < nc && a.bias ? a.bias[ch] : 0.0f;
    }
    const __m512 bias = _mm512_load_ps(bb);
    for (int64_t i = 0; i < Hp * Wp; ++i) _mm512_storeu_ps(grid + i * 16, _mm512_setzero_ps());
    // grid row r, column c: input (r - ph, c - pw)
    for (int64_t ih = 0; ih < a.H && ih + a.ph < Hp; ++ih) {
      const int64_t r = ih + a.ph;
      for (int64_t w0 = 0; w0 < a.W; w0 += 16) {
        const int64_t c0 = w0 + a.pw;
        const int64_t cols = std::min({int64_t(16), a.W - w0, Wp - c0});
        if (cols <= 0) break;
        const __mmask16 m = lane_mask(cols);
        __m512 rows[16], t[16];
#pragma GCC unroll 16
        for (int l = 0; l < 16; ++l)
          rows[l] = l < nc ? _mm512_maskz_loadu_ps(m, a.x + (g0 + l) * a.x_step() + ih * a.W + w0) : _mm512_setzero_ps();
        transpose_16x16(rows, t);
#pragma GCC unroll 16
        for (int c = 0; c < 16; ++c)
          if (c < cols) _mm512_storeu_ps(grid + (r * Wp + c0 + c) * 16, t[c]);
      }
    }
    // 16 outputs at a time (16 independent FMA chains; output q's window starts at grid offset
    // base(q), the last output repeated past Q), transposed back in registers: lane l of
    // acc[u] is channel l's output t0 + u
    int64_t oh = 0, ow = 0;
    for (int64_t t0 = 0; t0 < Q; t0 += 16) {
      int64_t base[16];
      __m512 acc[16], t[16];
#pragma GCC unroll 16
      for (int u = 0; u < 16; ++u) {
        base[u] = (oh * a.sh * Wp + ow * a.sw) * 16;
        acc[u] = bias;
        if (t0 + u + 1 < Q && ++ow == a.OW) {
          ow = 0;
          ++oh;
        }
      }
      for (int64_t i = 0; i < a.kh; ++i)
        for (int64_t j = 0; j < a.kw; ++j) {
          const float* g = grid + (i * a.dh * Wp + j * a.dw) * 16;
          const __m512 w = _mm512_loadu_ps(wv + (i * a.kw + j) * 16);
#pragma GCC unroll 16
          for (int u = 0; u < 16; ++u) acc[u] = _mm512_fmadd_ps(_mm512_loadu_ps(g + base[u]), w, acc[u]);
        }
      transpose_16x16(acc, t);  // t[l]: channel l's outputs t0 .. t0 + 15
      const __mmask16 m = lane_mask(Q - t0);
#pragma GCC unroll 16
      for (int l = 0; l < 16; ++l)
        if (l < nc) _mm512_mask_storeu_ps(a.out + (g0 + l) * a.out_step() + t0, m, t[l]);
    }
  }
}
#endif

/// The largest output plane (positions) `depthwise_lanes_pays` takes.
inline constexpr int64_t depthwise_lanes_max_positions = 196;

/// True when `window2d_kernel_for` runs depthwise convolution `a` with channels as lanes
/// (AVX-512, `depthwise_lanes_avx512`): at least 16 planes of at most
/// `depthwise_lanes_max_positions` outputs each. Measured (one thread, a harness alternating
/// the two kernels on the same planes in cache, us, phase blocks -> lanes): 576 x 14x14 3x3
/// 80 -> 62, stride 2 109 -> 29; 960 x 7x7 63 -> 37; 672 x 14x14 5x5 158 -> 138; 1152 x 7x7 5x5
/// 131 -> 82; 192 x 28x28 stride 2 63 -> 40; but 192 x 28x28 stride 1 (784 outputs) 68 -> 72
/// and 144 x 56x56 266 -> 313.
inline bool depthwise_lanes_pays(const Window2dArgs& a) {
  return a.kind == Window2dArgs::Kind::depthwise && a.planes >= 16 && a.OH * a.OW <= depthwise_lanes_max_positions;
}

/// Planes [p0, p1) of `a` on this thread.
using Window2dFn = void (*)(const Window2dArgs&, int64_t, int64_t);

/// The window kernel of instruction set `isa` for `a`: the vector one when this build has it
/// and `a` is depthwise, max pooling, or average pooling with horizontal stride 1 or 2, else
/// the plain loops.
inline Window2dFn window2d_kernel_for(CpuIsa isa, const Window2dArgs& a) {
  if (a.kind == Window2dArgs::Kind::avg && a.sw > 2) return &window2d_scalar;
  switch (isa) {
#if TORCHTPU_HAS_AVX512_PATH
    case CpuIsa::avx512:
      if (depthwise_lanes_pays(a)) return &depthwise_lanes_avx512;
      return &TargetCall<HWY_AVX3>::template run<Window2dBody, const Window2dArgs&, int64_t, int64_t>;
#endif
#if TORCHTPU_HAS_AVX2_PATH
    case CpuIsa::avx2: return &TargetCall<HWY_AVX2>::template run<Window2dBody, const Window2dArgs&, int64_t, int64_t>;
#endif
#if TORCHTPU_HAS_NEON_PATH
    case CpuIsa::neon: return &TargetCall<HWY_NEON>::template run<Window2dBody, const Window2dArgs&, int64_t, int64_t>;
#endif
    default: return &window2d_scalar;
  }
}

/// `im2col_pack_with` kernel of instruction set `isa` (the plain loops when this build has no
/// vector code for it).
using Im2colFn = void (*)(const Im2colArgs&, int64_t, int64_t, int64_t, int64_t, float*);
inline Im2colFn im2col_kernel_for(CpuIsa isa) {
  switch (isa) {
#if TORCHTPU_HAS_AVX512_PATH
    case CpuIsa::avx512: return &TargetCall<HWY_AVX3>::template run<Im2colBody, const Im2colArgs&, int64_t, int64_t, int64_t, int64_t, float*>;
#endif
#if TORCHTPU_HAS_AVX2_PATH
    case CpuIsa::avx2: return &TargetCall<HWY_AVX2>::template run<Im2colBody, const Im2colArgs&, int64_t, int64_t, int64_t, int64_t, float*>;
#endif
#if TORCHTPU_HAS_NEON_PATH
    case CpuIsa::neon: return &TargetCall<HWY_NEON>::template run<Im2colBody, const Im2colArgs&, int64_t, int64_t, int64_t, int64_t, float*>;
#endif
    default: return &im2col_pack_scalar;
  }
}

/// `SgemmArgs::pack_b_from` for a convolution: `ctx` is an `Im2colArgs`; rows [p0, p0 + kb) x
/// columns [j0, j0 + nr) of its B into dst[kb][nr] (nr <= im2col_max_nr), with the engine's
/// instruction set.
inline void im2col_pack_b(const void* ctx, int64_t p0, int64_t kb, int64_t j0, int64_t nr, float* dst) {
  static const Im2colFn fn = im2col_kernel_for(cpu_isa());
  fn(*static_cast<const Im2colArgs*>(ctx), p0, kb, j0, nr, dst);
}

/// `FlatConvPackBody` by plain loops.
inline void flat_conv_pack_scalar(const FlatConvArgs& g, int64_t p0, int64_t kb, int64_t j0, int64_t nr, float* dst) {
  for (int64_t k = p0; k < p0 + kb; ++k, dst += nr) {
    const float* src = g.x + k / g.taps * g.channel_floats + g.tap_off[k % g.taps] + j0;
    for (int64_t q = 0; q < nr; ++q) dst[q] = src[q];
  }
}

/// `SgemmArgs::pack_b_from` (or `pack_a_from`, the same layout) for a convolution over flat
/// positions: `ctx` is a `FlatConvArgs`; rows [p0, p0 + kb) x columns [j0, j0 + nr) of its B
/// into dst[kb][nr] (nr <= im2col_max_nr), with the engine's instruction set.
inline void flat_conv_pack_b(const void* ctx, int64_t p0, int64_t kb, int64_t j0, int64_t nr, float* dst) {
#if TORCHTPU_HAS_VECTOR_PATH
  static const auto fn = vector_entry<FlatConvPackBody>(&flat_conv_pack_scalar);
#else
  static const auto fn = &flat_conv_pack_scalar;
#endif
  fn(*static_cast<const FlatConvArgs*>(ctx), p0, kb, j0, nr, dst);
}

/// `PhaseFillBody` by plain loops: element (r, c) of phase (ri, rj) is padded input (r · sh + ri,
/// c · sw + rj).
inline void phase_fill_scalar(const Window2dArgs& a, const PhaseBlocks& b, float* dst, int64_t p0, int64_t p1) {
  const int64_t rows = a.OH + b.extra;
  for (int64_t pl = p0; pl < p1; ++pl)
    for (int64_t ri = 0; ri < a.sh; ++ri)
      for (int64_t rj = 0; rj < a.sw; ++rj) {
        if (!phase_used(a, ri, rj)) continue;
        float* d = dst + (pl * a.sh * a.sw + ri * a.sw + rj) * b.block;
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < b.wq; ++c) {
            const int64_t ih = r * a.sh + ri - a.ph, iw = c * a.sw + rj - a.pw;
            d[r * b.wq + c] = ih >= 0 && ih < a.H && iw >= 0 && iw < a.W ? a.x[pl * a.x_step() + ih * a.W + iw] : 0.0f;
          }
        std::fill(d + rows * b.wq, d + b.block, 0.0f);
      }
}

/// The phase blocks of all `a.planes` planes at `a.x` (whole planes: OH + extra rows each) into
/// `dst`: plane p's blocks start `p · sh · sw · b.block` floats in; `b.block` must be at least
/// (OH + extra) · wq + the vector width (each block's slack after its rows is zeroed). Split
/// over the thread pool by planes when large enough. Blocks of phases no tap reads are left.
inline void phase_fill_planes(const Window2dArgs& a, const PhaseBlocks& b, float* dst) {
#if TORCHTPU_HAS_VECTOR_PATH
  static const auto fn = vector_entry<PhaseFillBody>(&phase_fill_scalar);
#else
  static const auto fn = &phase_fill_scalar;
#endif
  if (a.planes <= 0) return;
  parallel_chunks(a.planes, chunks_for(a.planes * a.H * a.W, int64_t(1) << 15), 1,
                  [&](int64_t p0, int64_t p1) { fn(a, b, dst, p0, p1); });
}

/// Runs `a` over all its planes with the engine's instruction set, split over the thread pool
/// by planes when the work is large enough (each plane is computed the same way on any
/// thread: results do not depend on the thread count).
inline void window2d(const Window2dArgs& a) {
  if (a.planes <= 0 || a.OH <= 0 || a.OW <= 0) return;
  const Window2dFn fn = window2d_kernel_for(cpu_isa(), a);
  const int64_t work = a.planes * a.OH * a.OW * a.kh * a.kw;
  parallel_chunks(a.planes, chunks_for(work, int64_t(1) << 16), 1, [&](int64_t p0, int64_t p1) { fn(a, p0, p1); });
}

/// `window2d` on planes of element type `T` at `x`, written to `out` (`a.x`, `a.out` unused):
/// float32 runs `window2d`'s kernels; another `T` (double: max and avg pooling; integers: max
/// pooling, and int64 avg pooling) the plain loops of window_value, split over the thread pool the same way.
template <class T>
void window2d_typed(const Window2dArgs& a, const T* x, T* out) {
  if constexpr (std::is_same_v<T, float>) {
    Window2dArgs f = a;
    f.x = x;
    f.out = out;
    window2d(f);
  } else {
    if (a.planes <= 0 || a.OH <= 0 || a.OW <= 0) return;
    const int64_t work = a.planes * a.OH * a.OW * a.kh * a.kw;
    parallel_chunks(a.planes, chunks_for(work, int64_t(1) << 16), 1,
                    [&](int64_t p0, int64_t p1) { window2d_planes_scalar<T>(a, x, out, p0, p1); });
  }
}

}  // namespace torchtpu::detail
