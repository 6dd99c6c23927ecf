// torchtpu/fuse/winograd.hpp — the transforms of Winograd's minimal filtering algorithm
// F(4x4, 3x3) for 3x3 stride-1 convolutions (NCHW, f32): each 4x4 block of outputs ("tile")
// is Aᵀ [(G g Gᵀ) ⊙ (Bᵀ d B)] A, where d is the 6x6 block of padded input the tile reads and
// g the 3x3 kernel (Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks",
// CVPR 2016, section 4.2: interpolation points 0, ±1, ±2 and ∞). Summed over input channels,
// the element-wise products become 36 independent GEMMs, [OC x C] · [C x tiles], one per
// point ξ of the 6x6 transform: 36 multiply-adds per tile and channel pair where the direct
// product takes 16 · 9 = 144 (4x fewer), for three passes over the data (the transforms).
//
// This file holds the three transforms; ops/conv.hpp (conv2d_winograd) runs the GEMMs and the
// epilogue. Layouts: weights Uᵀ[ξ][c][o]; input V[ξ][c][t]; products Mᵀ[ξ][t][o] = V[ξ]ᵀ ·
// Uᵀ[ξ] (tiles as the GEMM's rows: its 12-row strips waste fewer rows on a few tiles than its
// 32-column panels would), t the tile index (image-major, then tile row, then tile column).
// The input transform is vectorized over the tiles of a tile row (one vector: `lanes` tiles
// side by side): each plane is first split by columns modulo 4 into four "phases" (element l
// of phase p is padded column 4l + p), so a tile's six columns are contiguous loads from the
// phases (columns 4 and 5 are phases 0 and 1 one tile on). The output transform is vectorized
// over output channels (contiguous in Mᵀ). The scalar path runs the same code on one lane
// (FloatLane).
#pragma once
#include <algorithm>  // std::min, std::fill, std::copy
#include <atomic>     // std::atomic (set_conv_winograd)
#include <cstdint>    // int64_t
#include <cstdlib>    // std::getenv
#include <cstring>    // std::strcmp

#include "simd.hpp"     // FloatVec, FloatLane, vector_entry, vstore
#include "threads.hpp"  // parallel_chunks, chunks_for, workspace

namespace torchtpu {
namespace detail {

/// The switch of `set_conv_winograd`: on unless TORCHTPU_CONV_WINOGRAD is "0" at first use.
inline std::atomic<bool>& conv_winograd_switch() {
  static std::atomic<bool> on{[] {
    const char* e = std::getenv("TORCHTPU_CONV_WINOGRAD");
    return !(e && std::strcmp(e, "0") == 0);
  }()};
  return on;
}

}  // namespace detail

/// Lets (true) or stops (false) float32 convolutions with a 3x3 window, stride 1 and dilation 1
/// from running as Winograd F(4x4, 3x3) on the CPU engine (ops/conv.hpp picks it where it saves
/// time: large planes, at least 8 channels per group). Winograd's float32 error is about ten
/// times the direct product's (within 2e-6 of the sum of the terms' magnitudes, against 1e-7;
/// resnet18's logits 4.3e-6 from libtorch's instead of 1.5e-6). Default: on, unless the
/// environment sets `TORCHTPU_CONV_WINOGRAD=0`. Thread-safe; affects calls that start after it.
inline void set_conv_winograd(bool enabled) { detail::conv_winograd_switch().store(enabled, std::memory_order_relaxed); }
/// Whether convolutions may run as Winograd F(4x4, 3x3) (`set_conv_winograd`).
inline bool conv_winograd_enabled() { return detail::conv_winograd_switch().load(std::memory_order_relaxed); }

namespace detail {

/// Output tile side (m), input tile side (m + r - 1) and transform points (6 x 6) of F(4x4, 3x3).
inline constexpr int64_t wino_m = 4, wino_a = 6, wino_points = 36;

/// Weight transform U = G g Gᵀ of every (o, c) pair: `w` holds OC x C 3x3 kernels (contiguous),
/// Uᵀ[ξ][c][o] is written to `u` (36 · C · OC floats), ξ = 6 i + j. Computed in float64,
/// rounded once. G (Lavin & Gray 2016): rows [1/4, 0, 0], [-1/6, -1/6, -1/6],
/// [-1/6, 1/6, -1/6], [1/24, 1/12, 1/6], [1/24, -1/12, 1/6], [0, 0, 1].
inline void winograd_weight_transform(const float* w, int64_t OC, int64_t C, float* u) {
  // G times three values 1 apart at `g`, to `t` (6 values `ts` apart), G's rows written out
  const auto gmul = [](const auto* g, int64_t gs, double* t, int64_t ts) {
    const double g0 = g[0], g1 = g[gs], g2 = g[2 * gs], s02 = g0 + g2;
    t[0] = g0 * 0.25;
    t[ts] = -(s02 + g1) * (1.0 / 6);
    t[2 * ts] = -(s02 - g1) * (1.0 / 6);
    t[3 * ts] = g0 * (1.0 / 24) + g1 * (1.0 / 12) + g2 * (1.0 / 6);
    t[4 * ts] = g0 * (1.0 / 24) - g1 * (1.0 / 12) + g2 * (1.0 / 6);
    t[5 * ts] = g2;
  };
  for (int64_t o = 0; o < OC; ++o)
    for (int64_t c = 0; c < C; ++c) {
      const float* g = w + (o * C + c) * 9;
      double t[6][3], r[6];  // t = G g (column j of g to column j of t); r: row i of (G g) Gᵀ
      for (int j = 0; j < 3; ++j) gmul(g + j, 3, &t[0][j], 3);
      for (int i = 0; i < 6; ++i) {
        gmul(&t[i][0], 1, r, 1);
        for (int j = 0; j < 6; ++j) u[((i * 6 + j) * C + c) * OC + o] = float(r[j]);
      }
    }
}

/// The input and output transforms' geometry: `images` images of `C` planes (input H x W,
/// padding ph / pw before; output OH x OW, 3x3 window, stride 1), tiled by `th` x `tw` tiles
/// of 4x4 outputs; T = images · th · tw tiles in all.
struct WinogradArgs {
  const float* x = nullptr;   ///< input: plane (n, c) at x + n · x_image + c · H · W
  int64_t x_image = 0;        ///< floats between images of `x`
  int64_t C = 0, H = 0, W = 0, ph = 0, pw = 0, OH = 0, OW = 0, images = 0;
  int64_t th = 0, tw = 0, T = 0;
  float* v = nullptr;         ///< input transform's result V[36][C][T]
  const float* m = nullptr;   ///< the GEMMs' products Mᵀ[36][T][OC]
  int64_t OC = 0;             ///< output channels of M
  const float* bias = nullptr;  ///< [OC], added to every output, or null
  float* y = nullptr;         ///< output: plane (n, o) at y + n · y_image + o · OH · OW
  int64_t y_image = 0;        ///< floats between images of `y`
};


/// Plane `x` (H x W), zero-padded, split into four phases at `dst`: phase p's row r, element
/// l is padded (r, 4 l + p), for r in [0, 4 th + 2), l in [0, pitch) (zero past the input).
/// The padded plane is first copied row by row to `tmp` (rows of 4 · pitch floats), then
/// deinterleaved as one flat array by `vload_deinterleave4` (a row's length is a multiple of 4,
/// so the flat phases are the phases' rows).
template <class V>
TORCHTPU_VEC void winograd_phases(const WinogradArgs& a, const float* x, int64_t pitch, float* tmp, float* dst) {
  constexpr int64_t L = V::lanes;
  const int64_t rows = a.th * wino_m + 2, width = 4 * pitch;
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
  float* d[4] = {dst, dst + n, dst + 2 * n, dst + 3 * n};
  int64_t e = 0;
  for (; e + L <= n; e += L) {
    V q[4];
    vload_deinterleave4(tmp + 4 * e, q);
    for (int p = 0; p < 4; ++p) vstore(d[p] + e, q[p], L);
  }
  for (; e < n; ++e)
    for (int p = 0; p < 4; ++p) d[p][e] = tmp[4 * e + p];
}

/// `o = Bᵀ d` for one column of six values (Lavin & Gray 2016, F(4, 3)'s Bᵀ: rows
/// [4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0], [0, -2, -1, 2, 1, 0],
/// [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]).
template <class V>
TORCHTPU_VEC void wino_bt(const V* d, V* o) {
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

/// `y = Aᵀ m` for one column of six values (Aᵀ's rows: [1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0],
/// [0, 1, 1, 4, 4, 0], [0, 1, -1, 8, -8, 1]).
template <class V>
TORCHTPU_VEC void wino_at(const V* m, V* y) {
  const V s12 = m[1] + m[2], d12 = m[1] - m[2], s34 = m[3] + m[4], d34 = m[3] - m[4];
  y[0] = m[0] + s12 + s34;
  y[1] = vfma(V::set1(2.0f), d34, d12);
  y[2] = vfma(V::set1(4.0f), s34, s12);
  y[3] = vfma(V::set1(8.0f), d34, d12) + m[5];
}

/// Input transform of channels [c0, c1) on vector type V: V[ξ][c][t] = (Bᵀ d B)[i][j].
struct WinogradInputBody {
  template <class V>
  TORCHTPU_VEC void operator()(const WinogradArgs& a, int64_t c0, int64_t c1) const {
    constexpr int64_t L = V::lanes;
    // each phase row holds a tile row's tw + 1 elements; a vector load at the row's last tiles
    // reads on into the next row (or, after the last one, the zeroed L floats after the
    // phases): lanes past the row's tiles, never stored
    const int64_t pitch = a.tw + 1, rows = a.th * wino_m + 2, phase_floats = 4 * rows * pitch;
    float* ph = workspace<float>(size_t(2 * phase_floats + L), 4);  // phases, L zeros, the padded plane
    std::fill(ph + phase_floats, ph + phase_floats + L, 0.0f);
    const int64_t tiles = a.th * a.tw;
    for (int64_t c = c0; c < c1; ++c)
      for (int64_t n = 0; n < a.images; ++n) {
        winograd_phases<V>(a, a.x + n * a.x_image + c * a.H * a.W, pitch, ph + phase_floats + L, ph);
        float* vc = a.v + c * a.T + n * tiles;
        for (int64_t r = 0; r < a.th; ++r)
          for (int64_t l = 0; l < a.tw; l += L) {
            V e[6][6];  // e[j][i] = (Bᵀ d)[i][j]: column j of the tile transformed
            for (int j = 0; j < 6; ++j) {
              const float* src = ph + ((j & 3) * rows + r * wino_m) * pitch + l + (j >> 2);
              V d[6];
              for (int i = 0; i < 6; ++i) d[i] = V::load(src + i * pitch);
              wino_bt(d, e[j]);
            }
            for (int i = 0; i < 6; ++i) {
              V row[6], o[6];
              for (int j = 0; j < 6; ++j) row[j] = e[j][i];
              wino_bt(row, o);  // (Bᵀ d B)[i][·]
              for (int j = 0; j < 6; ++j) vstore(vc + (i * 6 + j) * a.C * a.T + r * a.tw + l, o[j], a.tw - l);
            }
          }
      }
  }
};

/// Output transform of channels [o0, o1) on vector type V, `lanes` channels at a time: each
/// tile's 4x4 outputs Aᵀ M A (+ bias), clipped to OH x OW.
struct WinogradOutputBody {
  template <class V>
  TORCHTPU_VEC void operator()(const WinogradArgs& a, int64_t o0, int64_t o1) const {
    constexpr int64_t L = V::lanes;
    alignas(64) float buf[16 * L];  // [output (i, j) of the tile][channel]
    const int64_t tiles = a.th * a.tw, step = a.T * a.OC;
    for (int64_t ob = o0; ob < o1; ob += L) {
      const int64_t cnt = std::min(L, o1 - ob);
      const V bias = a.bias ? V::load_n(a.bias + ob, cnt) : V::zero();
      for (int64_t t = 0; t < a.T; ++t) {
        const int64_t n = t / tiles, r = t % tiles / a.tw, l = t % a.tw;
        const float* mt = a.m + t * a.OC + ob;
        V tm[6][4];  // tm[i][·] = row i of M, transformed: (M A)[i][·]
        for (int i = 0; i < 6; ++i) {
          V mv[6];
          for (int j = 0; j < 6; ++j) mv[j] = V::load_n(mt + (i * 6 + j) * step, cnt);
          wino_at(mv, tm[i]);
        }
        for (int j = 0; j < 4; ++j) {
          V col[6], y[4];
          for (int i = 0; i < 6; ++i) col[i] = tm[i][j];
          wino_at(col, y);  // (Aᵀ M A)[·][j]
          for (int i = 0; i < 4; ++i) vstore(buf + (i * 4 + j) * L, y[i] + bias, L);
        }
        const int64_t rows = std::min(wino_m, a.OH - r * wino_m), cols = std::min(wino_m, a.OW - l * wino_m);
        float* yt = a.y + n * a.y_image + ob * a.OH * a.OW + r * wino_m * a.OW + l * wino_m;
        for (int64_t k = 0; k < cnt; ++k, yt += a.OH * a.OW)
          for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < cols; ++j) yt[i * a.OW + j] = buf[(i * 4 + j) * L + k];
      }
    }
  }
};

/// `WinogradInputBody` on one lane (the scalar path).
inline void winograd_input_scalar(const WinogradArgs& a, int64_t c0, int64_t c1) {
  WinogradInputBody{}.template operator()<FloatLane>(a, c0, c1);
}
/// `WinogradOutputBody` on one lane (the scalar path).
inline void winograd_output_scalar(const WinogradArgs& a, int64_t o0, int64_t o1) {
  WinogradOutputBody{}.template operator()<FloatLane>(a, o0, o1);
}

/// Channels [c0, c1) or output channels [o0, o1) of a transform on this thread.
using WinogradFn = void (*)(const WinogradArgs&, int64_t, int64_t);

/// The input transform's kernel for instruction set `isa` (the one-lane code for scalar).
inline WinogradFn winograd_input_kernel_for(CpuIsa isa) {
#if TORCHTPU_HAS_VECTOR_PATH
  return vector_entry_for<WinogradInputBody>(isa, &winograd_input_scalar);
#else
  (void)isa;
  return &winograd_input_scalar;
#endif
}
/// The output transform's kernel for instruction set `isa` (the one-lane code for scalar).
inline WinogradFn winograd_output_kernel_for(CpuIsa isa) {
#if TORCHTPU_HAS_VECTOR_PATH
  return vector_entry_for<WinogradOutputBody>(isa, &winograd_output_scalar);
#else
  (void)isa;
  return &winograd_output_scalar;
#endif
}

/// The input transform of `a` (V[36][C][T] from the input), with the engine's instruction
/// set, split over the thread pool by channels.
inline void winograd_input(const WinogradArgs& a) {
  static const WinogradFn fn = winograd_input_kernel_for(cpu_isa());
  parallel_chunks(a.C, chunks_for(a.C * a.images * a.H * a.W * 8, int64_t(1) << 16), 1,
                  [&](int64_t c0, int64_t c1) { fn(a, c0, c1); });
}

/// The output transform of `a` (y from Mᵀ[36][T][OC], plus bias), with the engine's
/// instruction set, split over the thread pool by blocks of 16 output channels.
inline void winograd_output(const WinogradArgs& a) {
  static const WinogradFn fn = winograd_output_kernel_for(cpu_isa());
  parallel_chunks(a.OC, chunks_for(a.OC * a.T * 36 * 4, int64_t(1) << 16), 16,
                  [&](int64_t o0, int64_t o1) { fn(a, o0, o1); });
}

}  // namespace detail
}  // namespace torchtpu
