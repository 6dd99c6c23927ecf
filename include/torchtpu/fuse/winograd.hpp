// torchtpu/fuse/winograd.hpp — the transforms of Winograd's minimal filtering algorithm
// F(m x m, 3x3), m = 2 or 4, for 3x3 stride-1 convolutions (NCHW, f32): each m x m block of
// outputs ("tile") is Aᵀ [(G g Gᵀ) ⊙ (Bᵀ d B)] A, where d is the (m + 2)² block of padded input
// the tile reads and g the 3x3 kernel (Lavin & Gray, "Fast Algorithms for Convolutional Neural
// Networks", CVPR 2016: F(2x2, 3x3) in section 4.1, F(4x4, 3x3) in 4.2 with the interpolation
// points 0, ±1, ±2 and ∞). Summed over input channels, the element-wise products become
// (m + 2)² independent GEMMs, one per transform point ξ: per tile and channel pair 16
// multiply-adds for F(2x2) and 36 for F(4x4) where the direct product takes 36 and 144
// (2.25x and 4x fewer), for three passes over the data (the transforms). F(4x4)'s larger
// constants cost accuracy: its float32 error is about ten times the direct product's,
// F(2x2)'s about the same (docs/cpu-engine.md).
//
// This file holds the three transforms; ops/conv.hpp (conv2d_winograd) runs the GEMMs and the
// epilogue. Layouts (P = (m + 2)² points): weights Uᵀ[ξ][c][o]; input V[ξ][c][t]; products
// Mᵀ[ξ][t][o] = V[ξ]ᵀ · Uᵀ[ξ] (tiles as the GEMM's rows: its 12-row strips waste fewer rows on
// a few tiles than its 32-column panels would), t the tile index (image-major, then tile row,
// then tile column). The input transform is vectorized over the tiles of a tile row (one
// vector: `lanes` tiles side by side): each plane is first split by columns modulo m into m
// "phases" (element l of phase p is padded column m l + p), so a tile's m + 2 columns are
// contiguous loads from the phases (columns m and m + 1 are phases 0 and 1 one tile on). The
// output transform is vectorized over output channels (contiguous in Mᵀ). The scalar path runs
// the same code on one lane (FloatLane).
#pragma once
#include <algorithm>  // std::min, std::fill, std::copy
#include <atomic>     // std::atomic (set_conv_winograd)
#include <cstdint>    // int64_t
#include <cstdlib>    // std::getenv
#include <cstring>    // std::strcmp

#include <string>     // std::string, std::to_string

#include "../core/errors.hpp"  // ValueError
#include "simd.hpp"     // FloatVec, FloatLane, vector_entry, vstore
#include "threads.hpp"  // parallel_chunks, chunks_for, workspace

namespace torchtpu {
namespace detail {

/// The output tile of Winograd's algorithm named by `v` ("0": none, "2", "4"), or -1.
inline int conv_winograd_parse(const char* v) {
  if (!std::strcmp(v, "0")) return 0;
  if (!std::strcmp(v, "2")) return 2;
  if (!std::strcmp(v, "4")) return 4;
  return -1;
}

/// The setting of `set_conv_winograd`: 2, or TORCHTPU_CONV_WINOGRAD at first use.
/// **Errors:** ValueError naming the variable for a value other than 0, 2 or 4.
inline std::atomic<int>& conv_winograd_setting() {
  static std::atomic<int> tile{[] {
    const char* e = std::getenv("TORCHTPU_CONV_WINOGRAD");
    if (!e) return 2;
    const int t = conv_winograd_parse(e);
    if (t < 0)
      throw ValueError(std::string("TORCHTPU_CONV_WINOGRAD is '") + e +
                       "': 0 (no Winograd), 2 (F(2x2, 3x3), the default) or 4 (F(4x4, 3x3))");
    return t;
  }()};
  return tile;
}

}  // namespace detail

/// Chooses how the CPU engine may run float32 convolutions with a 3x3 window, stride 1 and
/// dilation 1 as Winograd's F(m x m, 3x3) (ops/conv.hpp `winograd_tile` takes it where it
/// saves time: large planes, enough channels): `tile` 2 (the default) F(2x2, 3x3), 2.25x fewer
/// multiplies, error about the direct product's; 4 also F(4x4, 3x3) (first, where it pays), 4x
/// fewer, float32 error about ten times the direct product's (deep networks' outputs drift
/// accordingly: wide_resnet101_2 at 3x libtorch's error against float64); 0 none. The environment's `TORCHTPU_CONV_WINOGRAD`
/// (0, 2 or 4) sets the first value. Thread-safe; affects calls that start after it.
/// **Errors:** ValueError for another `tile` (the setting is left).
inline void set_conv_winograd(int tile) {
  if (tile != 0 && tile != 2 && tile != 4)
    throw ValueError("set_conv_winograd: tile is " + std::to_string(tile) +
                     ": 0 (no Winograd), 2 (F(2x2, 3x3)) or 4 (F(4x4, 3x3))");
  detail::conv_winograd_setting().store(tile, std::memory_order_relaxed);
}
/// The output tile convolutions may run Winograd with: 0 (none), 2 or 4 (`set_conv_winograd`).
inline int conv_winograd() { return detail::conv_winograd_setting().load(std::memory_order_relaxed); }

namespace detail {

/// Weight transform U = G g Gᵀ of every (o, c) pair for F(m x m, 3x3), m = 2 or 4: `w` holds
/// OC x C 3x3 kernels (contiguous), Uᵀ[ξ][c][o] is written to `u` ((m + 2)² · C · OC floats),
/// ξ = (m + 2) i + j. Computed in float64, rounded once. G (Lavin & Gray 2016): F(2x2) rows
/// [1, 0, 0], [1/2, 1/2, 1/2], [1/2, -1/2, 1/2], [0, 0, 1]; F(4x4) rows [1/4, 0, 0],
/// [-1/6, -1/6, -1/6], [-1/6, 1/6, -1/6], [1/24, 1/12, 1/6], [1/24, -1/12, 1/6], [0, 0, 1].
inline void winograd_weight_transform(const float* w, int64_t OC, int64_t C, float* u, int m) {
  // G times three values `gs` apart at `g`, to `t` (m + 2 values `ts` apart), G's rows written out
  const auto gmul = [m](const auto* g, int64_t gs, double* t, int64_t ts) {
    const double g0 = g[0], g1 = g[gs], g2 = g[2 * gs], s02 = g0 + g2;
    if (m == 2) {
      t[0] = g0;
      t[ts] = (s02 + g1) * 0.5;
      t[2 * ts] = (s02 - g1) * 0.5;
      t[3 * ts] = g2;
      return;
    }
    t[0] = g0 * 0.25;
    t[ts] = -(s02 + g1) * (1.0 / 6);
    t[2 * ts] = -(s02 - g1) * (1.0 / 6);
    t[3 * ts] = g0 * (1.0 / 24) + g1 * (1.0 / 12) + g2 * (1.0 / 6);
    t[4 * ts] = g0 * (1.0 / 24) - g1 * (1.0 / 12) + g2 * (1.0 / 6);
    t[5 * ts] = g2;
  };
  const int a = m + 2;
  for (int64_t o = 0; o < OC; ++o)
    for (int64_t c = 0; c < C; ++c) {
      const float* g = w + (o * C + c) * 9;
      double t[6][3], r[6];  // t = G g (column j of g to column j of t); r: row i of (G g) Gᵀ
      for (int j = 0; j < 3; ++j) gmul(g + j, 3, &t[0][j], 3);
      for (int i = 0; i < a; ++i) {
        gmul(&t[i][0], 1, r, 1);
        for (int j = 0; j < a; ++j) u[((i * a + j) * C + c) * OC + o] = float(r[j]);
      }
    }
}

/// The input and output transforms' geometry: `images` images of `C` planes (input H x W,
/// padding ph / pw before; output OH x OW, 3x3 window, stride 1), tiled by `th` x `tw` tiles
/// of `tile` x `tile` outputs (2 or 4); T = images · th · tw tiles in all; P = (tile + 2)².
struct WinogradArgs {
  const float* x = nullptr;   ///< input: plane (n, c) at x + n · x_image + c · H · W
  int64_t x_image = 0;        ///< floats between images of `x`
  int64_t C = 0, H = 0, W = 0, ph = 0, pw = 0, OH = 0, OW = 0, images = 0;
  int64_t tile = 4, th = 0, tw = 0, T = 0;
  float* v = nullptr;         ///< input transform's result V[P][C][T]
  const float* m = nullptr;   ///< the GEMMs' products Mᵀ[P][T][OC]
  int64_t OC = 0;             ///< output channels of M
  const float* bias = nullptr;  ///< [OC], added to every output, or null
  float* y = nullptr;         ///< output: plane (n, o) at y + n · y_image + o · OH · OW
  int64_t y_image = 0;        ///< floats between images of `y`
};


/// Plane `x` (H x W), zero-padded, split into M phases at `dst`: phase p's row r, element l
/// is padded (r, M l + p), for r in [0, M th + 2), l in [0, pitch) (zero past the input). The
/// padded plane is first copied row by row to `tmp` (rows of M · pitch floats), then
/// deinterleaved as one flat array (`vload_deinterleave4`, `vload_deinterleave2`: a row's
/// length is a multiple of M, so the flat phases are the phases' rows).
template <int M, class V>
TORCHTPU_VEC void winograd_phases(const WinogradArgs& a, const float* x, int64_t pitch, float* tmp, float* dst) {
  constexpr int64_t L = V::lanes;
  const int64_t rows = a.th * M + 2, width = M * pitch;
  const int64_t c0 = std::min(a.pw, width), c1 = std::min(a.W + a.pw, width);  // padded columns with input
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t ih = r - a.ph;
    float* t = tmp + r * width;
    if (ih < 0 || ih >= a.H) {
      std::fill(t, t + width, 0.0f);
      continue;
    }
    std::fill(t, t + c0, 0.0f);
    std::copy(x + ih * a.W, x + ih * a.W + (c1 - c0), t + c0);
    std::fill(t + c1, t + width, 0.0f);
  }
  const int64_t n = rows * pitch;  // floats per phase
  int64_t e = 0;
  for (; e + L <= n; e += L) {
    V q[M];
    if constexpr (M == 4) vload_deinterleave4(tmp + 4 * e, q);
    else vload_deinterleave2(tmp + 2 * e, q);
    for (int p = 0; p < M; ++p) vstore(dst + p * n + e, q[p], L);
  }
  for (; e < n; ++e)
    for (int p = 0; p < M; ++p) dst[p * n + e] = tmp[M * e + p];
}

/// `o = Bᵀ d` for one column of M + 2 values (Lavin & Gray 2016: F(2, 3)'s Bᵀ rows
/// [1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]; F(4, 3)'s [4, 0, -5, 0, 1, 0],
/// [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0], [0, -2, -1, 2, 1, 0], [0, 2, -1, -2, 1, 0],
/// [0, 4, 0, -5, 0, 1]).
template <int M, class V>
TORCHTPU_VEC void wino_bt(const V* d, V* o) {
  if constexpr (M == 2) {
    o[0] = d[0] - d[2];
    o[1] = d[1] + d[2];
    o[2] = d[2] - d[1];
    o[3] = d[1] - d[3];
    return;
  }
  const V four = V::set1(4.0f), five = V::set1(5.0f), two = V::set1(2.0f);
  const V s34 = d[3] + d[4], s12 = d[1] + d[2];
  const V d43 = d[4] - d[3], d12 = d[1] - d[2];
  const V d42 = d[4] - d[2], d31 = d[3] - d[1];
  o[0] = vfnma(five, d[2], vfma(four, d[0], d[4]));
  o[1] = vfnma(four, s12, s34);
  o[2] = vfma(four, d12, d43);
  o[3] = vfma(two, d31, d42);
  o[4] = vfnma(two, d31, d42);
  o[5] = vfnma(five, d[3], vfma(four, d[1], d[5]));
}

/// `y = Aᵀ m` for one column of M + 2 values (Aᵀ's rows: F(2, 3) [1, 1, 1, 0], [0, 1, -1, -1];
/// F(4, 3) [1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0], [0, 1, -1, 8, -8, 1]).
template <int M, class V>
TORCHTPU_VEC void wino_at(const V* m, V* y) {
  if constexpr (M == 2) {
    y[0] = m[0] + m[1] + m[2];
    y[1] = m[1] - m[2] - m[3];
    return;
  }
  const V s12 = m[1] + m[2], d12 = m[1] - m[2], s34 = m[3] + m[4], d34 = m[3] - m[4];
  y[0] = m[0] + s12 + s34;
  y[1] = vfma(V::set1(2.0f), d34, d12);
  y[2] = vfma(V::set1(4.0f), s34, s12);
  y[3] = vfma(V::set1(8.0f), d34, d12) + m[5];
}

/// Input transform of channels [c0, c1) on vector type V for F(M x M, 3x3): V[ξ][c][t] =
/// (Bᵀ d B)[i][j].
template <int M>
struct WinogradInputBody {
  template <class V>
  TORCHTPU_VEC void operator()(const WinogradArgs& a, int64_t c0, int64_t c1) const {
    constexpr int64_t L = V::lanes;
    constexpr int A = M + 2;
    // each phase row holds a tile row's tw + 1 elements; a vector load at the row's last tiles
    // reads on into the next row (or, after the last one, the zeroed L floats after the
    // phases): lanes past the row's tiles, never stored
    const int64_t pitch = a.tw + 1, rows = a.th * M + 2, phase_floats = M * rows * pitch;
    float* ph = workspace<float>(size_t(2 * phase_floats + L), 4);  // phases, L zeros, the padded plane
    std::fill(ph + phase_floats, ph + phase_floats + L, 0.0f);
    const int64_t tiles = a.th * a.tw;
    for (int64_t c = c0; c < c1; ++c)
      for (int64_t n = 0; n < a.images; ++n) {
        winograd_phases<M, V>(a, a.x + n * a.x_image + c * a.H * a.W, pitch, ph + phase_floats + L, ph);
        float* vc = a.v + c * a.T + n * tiles;
        for (int64_t r = 0; r < a.th; ++r)
          for (int64_t l = 0; l < a.tw; l += L) {
            V e[A][A];  // e[j][i] = (Bᵀ d)[i][j]: column j of the tile transformed
            for (int j = 0; j < A; ++j) {
              const float* src = ph + ((j % M) * rows + r * M) * pitch + l + j / M;
              V d[A];
              for (int i = 0; i < A; ++i) d[i] = V::load(src + i * pitch);
              wino_bt<M>(d, e[j]);
            }
            for (int i = 0; i < A; ++i) {
              V row[A], o[A];
              for (int j = 0; j < A; ++j) row[j] = e[j][i];
              wino_bt<M>(row, o);  // (Bᵀ d B)[i][·]
              for (int j = 0; j < A; ++j) vstore(vc + (i * A + j) * a.C * a.T + r * a.tw + l, o[j], a.tw - l);
            }
          }
      }
  }
};

/// Output transform of channels [o0, o1) on vector type V for F(M x M, 3x3), `lanes` channels
/// at a time: each tile's M x M outputs Aᵀ M A (+ bias), clipped to OH x OW.
template <int M>
struct WinogradOutputBody {
  template <class V>
  TORCHTPU_VEC void operator()(const WinogradArgs& a, int64_t o0, int64_t o1) const {
    constexpr int64_t L = V::lanes;
    constexpr int A = M + 2;
    alignas(64) float buf[M * M * L];  // [output (i, j) of the tile][channel]
    const int64_t tiles = a.th * a.tw, step = a.T * a.OC;
    for (int64_t ob = o0; ob < o1; ob += L) {
      const int64_t cnt = std::min(L, o1 - ob);
      const V bias = a.bias ? V::load_n(a.bias + ob, cnt) : V::zero();
      for (int64_t t = 0; t < a.T; ++t) {
        const int64_t n = t / tiles, r = t % tiles / a.tw, l = t % a.tw;
        const float* mt = a.m + t * a.OC + ob;
        V tm[A][M];  // tm[i][·] = row i of M, transformed: (M A)[i][·]
        for (int i = 0; i < A; ++i) {
          V mv[A];
          for (int j = 0; j < A; ++j) mv[j] = V::load_n(mt + (i * A + j) * step, cnt);
          wino_at<M>(mv, tm[i]);
        }
        for (int j = 0; j < M; ++j) {
          V col[A], y[M];
          for (int i = 0; i < A; ++i) col[i] = tm[i][j];
          wino_at<M>(col, y);  // (Aᵀ M A)[·][j]
          for (int i = 0; i < M; ++i) vstore(buf + (i * M + j) * L, y[i] + bias, L);
        }
        const int64_t rows = std::min<int64_t>(M, a.OH - r * M), cols = std::min<int64_t>(M, a.OW - l * M);
        float* yt = a.y + n * a.y_image + ob * a.OH * a.OW + r * M * a.OW + l * M;
        for (int64_t k = 0; k < cnt; ++k, yt += a.OH * a.OW)
          for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < cols; ++j) yt[i * a.OW + j] = buf[(i * M + j) * L + k];
      }
    }
  }
};

/// `Body<M>` (WinogradInputBody, WinogradOutputBody) on one lane (the scalar path).
template <template <int> class Body, int M>
void winograd_scalar(const WinogradArgs& a, int64_t b, int64_t e) {
  Body<M>{}.template operator()<FloatLane>(a, b, e);
}

/// Channels [c0, c1) or output channels [o0, o1) of a transform on this thread.
using WinogradFn = void (*)(const WinogradArgs&, int64_t, int64_t);

/// `Body<tile>`'s kernel (tile 2 or 4) for instruction set `isa` (the one-lane code for scalar).
template <template <int> class Body>
WinogradFn winograd_kernel_for(CpuIsa isa, int64_t tile) {
#if TORCHTPU_HAS_VECTOR_PATH
  if (tile == 2) return vector_entry_for<Body<2>>(isa, &winograd_scalar<Body, 2>);
  return vector_entry_for<Body<4>>(isa, &winograd_scalar<Body, 4>);
#else
  (void)isa;
  return tile == 2 ? &winograd_scalar<Body, 2> : &winograd_scalar<Body, 4>;
#endif
}
/// The input transform's kernel of F(tile x tile, 3x3) for instruction set `isa`.
inline WinogradFn winograd_input_kernel_for(CpuIsa isa, int64_t tile) { return winograd_kernel_for<WinogradInputBody>(isa, tile); }
/// The output transform's kernel of F(tile x tile, 3x3) for instruction set `isa`.
inline WinogradFn winograd_output_kernel_for(CpuIsa isa, int64_t tile) { return winograd_kernel_for<WinogradOutputBody>(isa, tile); }

/// The input transform of `a` (V[P][C][T] from the input), with the engine's instruction
/// set, split over the thread pool by channels.
inline void winograd_input(const WinogradArgs& a) {
  static const WinogradFn fn2 = winograd_input_kernel_for(cpu_isa(), 2), fn4 = winograd_input_kernel_for(cpu_isa(), 4);
  const WinogradFn fn = a.tile == 2 ? fn2 : fn4;
  parallel_chunks(a.C, chunks_for(a.C * a.images * a.H * a.W * 8, int64_t(1) << 16), 1,
                  [&](int64_t c0, int64_t c1) { fn(a, c0, c1); });
}

/// The output transform of `a` (y from Mᵀ[P][T][OC], plus bias), with the engine's
/// instruction set, split over the thread pool by blocks of 16 output channels.
inline void winograd_output(const WinogradArgs& a) {
  static const WinogradFn fn2 = winograd_output_kernel_for(cpu_isa(), 2), fn4 = winograd_output_kernel_for(cpu_isa(), 4);
  const WinogradFn fn = a.tile == 2 ? fn2 : fn4;
  parallel_chunks(a.OC, chunks_for(a.OC * a.T * (a.tile + 2) * (a.tile + 2) * a.tile, int64_t(1) << 16), 16,
                  [&](int64_t o0, int64_t o1) { fn(a, o0, o1); });
}

}  // namespace detail
}  // namespace torchtpu
