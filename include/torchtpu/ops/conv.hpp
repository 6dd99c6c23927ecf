// torchtpu/ops/conv.hpp — operator library, convolution and pooling family: convolution
// (aten::_convolution: 1-, 2- and 3-D, grouped, dilated, transposed), conv1d / conv2d / conv3d
// (integer or 'same' / 'valid' padding), conv_transpose1d / 2d / 3d (the same definition,
// transposed); the poolings are in ops/pool.hpp and ops/pool_indices.hpp. Each op
// is one definition (ops/library.hpp) that the typed API, `AnyTensor`, the eager PJRT devices
// and model graphs all call. Tests: tests/ops/test_conv.cpp (cpu, every floating dtype),
// tests/device_ops/test_device_conv.cpp (PJRT devices), tests/jit (models).
//
// CPU kernels. float32 runs the engine's fast paths: 1-D and 2-D convolutions as one GEMM per
// image and group (1x1 stride-1 ones read the input directly; others unfold the input into the
// GEMM's packed B panels as it packs them, fuse/window.hpp's im2col_pack_b: no im2col buffer; without a vector
// GEMM, an im2col buffer), depthwise ones and pooling through fuse/window.hpp's vector kernels. float16 and bfloat16 convert to float32,
// run the same paths and round once. float64, 3-D and transposed convolutions run a direct loop
// accumulating in float64 (rounded once).
//
// Fused epilogue (model graphs). The convolution ops declare `accepts_epilogue` and a second
// cpu entry `cpu<T>(in, args, out, ep)`: `ep(dest, e)` stores an activation of expression `e`
// into `dest`, so that a following relu/silu/... is computed inside the GEMM's output pass
// (jit/library_ops.hpp passes the graph's Epilogue; the plain entry passes `StoreEpilogue`).
//
// Optional bias. An absent bias is left out of the operand list on every path (as the
// normalizations' optional tensors, ops/norm.hpp): `Args::present` bit 0 says it is there.
//
// Not in the umbrella header (torchtpu.hpp): include <torchtpu/ops/conv.hpp>.
#pragma once
#include <algorithm>    // std::max, std::min
#include <cmath>        // INFINITY
#include <cstdint>      // int64_t, int8_t, uint8_t
#include <cstring>      // std::memmove (conv2d_chain)
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <tuple>        // std::tuple, std::tuple_element_t (the builder's parameter types)
#include <type_traits>  // std::is_same_v, std::remove_cvref_t
#include <variant>      // std::get_if (string padding)
#include <vector>       // std::vector

#include "../fuse/gemm.hpp"    // SgemmArgs, sgemm_f32 (implicit-GEMM convolution)
#include "../fuse/window.hpp"  // window2d (pooling, depthwise convolution), im2col_pack_b
#include "../fuse/winograd.hpp"  // WinogradArgs, winograd_input/output (3x3 stride-1 convolutions)
#include "arith.hpp"           // torchtpu::add (bias in the GEMM's output pass)
#include "library.hpp"         // TensorMeta, DtypeSet, ops::call, call_typed
#include "matmul.hpp"          // torchtpu::matmul (the cpu GEMM)
#include "schema.hpp"          // Arg (string padding)

namespace torchtpu {
namespace ops {

namespace detail {

/// The builder's parameter types, so that ops/ needs no device/ include.
template <class R, class C, class... A>
std::tuple<A...> conv_params_of(R (C::*)(A...));
/// Parameter `I` of builder method `M`.
template <auto M, size_t I>
using conv_param_t = std::remove_cvref_t<std::tuple_element_t<I, decltype(conv_params_of(M))>>;

/// The identity epilogue: stores `e` into `dest`.
struct StoreEpilogue {
  static constexpr bool identity = true;  ///< nothing to apply
  /// `dest = e`.
  template <class D, class E>
  void operator()(D dest, const E& e) const { dest.copy_(e); }
};
/// True for `StoreEpilogue`.
template <class Ep>
inline constexpr bool is_store_epilogue = requires { Ep::identity; };

/// Up to three ints of a list argument as passed (`int[]`): one value (repeated) or one per
/// spatial dim. Trivially copyable (an op's Args).
struct ConvInts {
  int8_t n = 0;                 ///< values given (0: the default)
  int64_t v[3] = {0, 0, 0};     ///< the values
};

/// `[a, b]`.
inline std::string conv_ints_str(const int64_t* v, int n) {
  std::string s = "[";
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

/// `l` as ConvInts. **Errors:** ValueError naming `op` and `what` for more than 3 values.
inline ConvInts conv_ints(const std::vector<int64_t>& l, std::string_view op, std::string_view what) {
  if (l.size() > 3)
    throw ValueError(std::string(op) + ": " + std::string(what) + " has " + std::to_string(l.size()) +
                     " values (at most 3 spatial dims)");
  ConvInts r;
  r.n = static_cast<int8_t>(l.size());
  for (size_t i = 0; i < l.size(); ++i) r.v[i] = l[i];
  return r;
}

/// Arguments of every convolution op.
struct ConvArgs {
  ConvInts stride, padding, dilation, output_padding;  ///< as passed
  int64_t groups = 1;                                  ///< feature groups
  bool transposed = false;                             ///< a transposed convolution
  int8_t pad_mode = 0;                                 ///< 0: `padding`, 1: 'valid', 2: 'same'
  int8_t rank = 0;                                     ///< spatial rank required (conv2d: 2), 0: the weight's
  uint8_t present = 0;                                 ///< bit 0: bias
};

/// A convolution's geometry. Spatial sizes sit right-aligned in 3 slots (a 2-D convolution
/// uses slots 1 and 2; unused slots hold size 1, stride 1, no padding).
struct ConvGeom {
  int nsp = 2;                                          ///< spatial rank
  bool batched = true, transposed = false;              ///< input has a batch dim; transposed
  int64_t N = 1, C = 1, OC = 1, G = 1, Cg = 1, OCg = 1;  ///< batch, channels in/out, groups, per group
  int64_t in[3] = {1, 1, 1}, k[3] = {1, 1, 1}, out[3] = {1, 1, 1};  ///< input, kernel, output sizes
  int64_t s[3] = {1, 1, 1}, d[3] = {1, 1, 1};            ///< stride, dilation
  int64_t lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};          ///< padding before / after
  int64_t op[3] = {0, 0, 0};                             ///< output padding (transposed)

  /// The result's shape: `[N, OC, out...]` (or `[OC, out...]` unbatched).
  Dims out_sizes() const {
    Dims r;
    if (batched) r.push_back(N);
    r.push_back(OC);
    for (int j = 3 - nsp; j < 3; ++j) r.push_back(out[j]);
    return r;
  }
};

/// Floor division (`b` > 0).
constexpr int64_t conv_floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/// The geometry of a convolution of `in` (input, weight[, bias]) with `a`, checked as torch
/// checks it. **Errors:** ValueError naming `op` for operands that do not match `present`,
/// lists of the wrong length, non-positive stride/dilation/groups, negative padding, 'same'
/// with a stride; TypeError for a non-floating input or operands of different dtypes;
/// ShapeError (naming every operand) for ranks, channels, bias or a kernel larger than the
/// padded input.
inline ConvGeom conv_geom(std::span<const TensorMeta> in, const ConvArgs& a, std::string_view op) {
  const bool has_bias = a.present & 1u;
  auto ops = [&] { return std::string(" (operands " + describe(in) + ")"); };  // built only for an error
  bool ok = in.size() == (has_bias ? 3u : 2u);
  for (const TensorMeta& m : in) ok = ok && m.defined;
  if (!ok)
    throw ValueError(std::string(op) + ": expected the operands input, weight" + (has_bias ? ", bias" : "") +
                     " (an absent bias is left out)" + ops());
  const TensorMeta &x = in[0], &w = in[1];
  if (!is_floating(x.dtype))
    throw TypeError(std::string(op) + ": expected a floating point input (float16, bfloat16, float32, float64), got " +
                    std::string(dtype_name(x.dtype)) + ops());
  for (const TensorMeta& m : in)
    if (m.dtype != x.dtype)
      throw TypeError(std::string(op) + ": expected the weight and bias to have the input's dtype " +
                      std::string(dtype_name(x.dtype)) + ops());
  auto shape_error = [&](const std::string& why) { return ShapeError(std::string(op) + ": " + why + ops()); };
  if (w.dim() < 3 || w.dim() > 5)
    throw shape_error("expected a weight of 3, 4 or 5 dims [out_channels, in_channels / groups, kernel...]");
  ConvGeom g;
  g.nsp = w.dim() - 2;
  const int nsp = g.nsp, base = 3 - nsp;
  if (a.rank && a.rank != nsp)
    throw shape_error("expected a weight of " + std::to_string(a.rank + 2) + " dims for a " + std::to_string(a.rank) +
                      "-D convolution");
  if (x.dim() == w.dim()) g.batched = true;
  else if (x.dim() == w.dim() - 1) g.batched = false;
  else
    throw shape_error("expected a " + std::to_string(nsp + 1) + "-D (unbatched) or " + std::to_string(nsp + 2) +
                      "-D (batched) input for a " + std::to_string(nsp) + "-D convolution");
  const int off = g.batched ? 1 : 0;
  g.N = g.batched ? x.sizes[0] : 1;
  g.C = x.sizes[off];
  g.G = a.groups;
  g.transposed = a.transposed;
  if (g.G <= 0) throw ValueError(std::string(op) + ": groups must be positive, got " + std::to_string(g.G) + ops());
  for (int j = 0; j < nsp; ++j) {
    g.in[base + j] = x.sizes[off + 1 + j];
    g.k[base + j] = w.sizes[2 + j];
    if (g.k[base + j] <= 0) throw shape_error("expected positive kernel sizes");
  }
  auto expand = [&](const ConvInts& c, int64_t fill, const char* what, int64_t* dst) {
    if (c.n == 0) {
      for (int j = 0; j < nsp; ++j) dst[base + j] = fill;
      return;
    }
    if (c.n != 1 && c.n != nsp)
      throw ValueError(std::string(op) + ": expected " + what + " to have 1 or " + std::to_string(nsp) + " values, got " +
                       conv_ints_str(c.v, c.n) + ops());
    for (int j = 0; j < nsp; ++j) dst[base + j] = c.v[c.n == 1 ? 0 : j];
  };
  int64_t pad[3] = {0, 0, 0};
  expand(a.stride, 1, "stride", g.s);
  expand(a.dilation, 1, "dilation", g.d);
  expand(a.padding, 0, "padding", pad);
  if (a.transposed) expand(a.output_padding, 0, "output_padding", g.op);
  for (int j = base; j < 3; ++j) {
    if (g.s[j] <= 0 || g.d[j] <= 0)
      throw ValueError(std::string(op) + ": stride and dilation must be positive, got stride " + conv_ints_str(g.s + base, nsp) +
                       ", dilation " + conv_ints_str(g.d + base, nsp) + ops());
    if (pad[j] < 0) throw ValueError(std::string(op) + ": negative padding " + conv_ints_str(pad + base, nsp) + ops());
    if (a.pad_mode == 2 && g.s[j] != 1)
      throw ValueError(std::string(op) + ": padding='same' is not supported for strided convolutions" + ops());
    if (a.pad_mode == 2) {
      const int64_t total = g.d[j] * (g.k[j] - 1);
      g.lo[j] = total / 2;
      g.hi[j] = total - g.lo[j];
    } else if (a.pad_mode == 0) {
      g.lo[j] = g.hi[j] = pad[j];
    }
    if (a.transposed && (g.op[j] < 0 || (g.op[j] >= g.s[j] && g.op[j] >= g.d[j])))
      throw ValueError(std::string(op) + ": output padding " + conv_ints_str(g.op + base, nsp) +
                       " must be smaller than either stride or dilation" + ops());
  }
  if (!a.transposed) {
    g.OC = w.sizes[0];
    g.Cg = w.sizes[1];
    if (g.C != g.Cg * g.G)
      throw shape_error("expected an input of " + std::to_string(g.Cg * g.G) + " channels (weight in_channels " +
                        std::to_string(g.Cg) + " x groups " + std::to_string(g.G) + "), got " + std::to_string(g.C));
    if (g.OC % g.G != 0)
      throw shape_error("expected out_channels " + std::to_string(g.OC) + " to be divisible by groups " + std::to_string(g.G));
    g.OCg = g.OC / g.G;
  } else {
    if (w.sizes[0] != g.C)
      throw shape_error("expected an input of " + std::to_string(w.sizes[0]) +
                        " channels (dim 0 of the transposed weight), got " + std::to_string(g.C));
    if (g.C % g.G != 0)
      throw shape_error("expected in_channels " + std::to_string(g.C) + " to be divisible by groups " + std::to_string(g.G));
    g.Cg = g.C / g.G;
    g.OCg = w.sizes[1];
    g.OC = g.OCg * g.G;
  }
  if (has_bias && (in[2].dim() != 1 || in[2].sizes[0] != g.OC))
    throw shape_error("expected a bias of " + std::to_string(g.OC) + " elements (out_channels)");
  for (int j = base; j < 3; ++j) {
    if (!a.transposed) {
      const int64_t span = g.in[j] + g.lo[j] + g.hi[j] - g.d[j] * (g.k[j] - 1) - 1;
      if (span < 0)
        throw shape_error("the padded input size " + std::to_string(g.in[j] + g.lo[j] + g.hi[j]) + " of spatial dim " +
                          std::to_string(j - base) + " is smaller than the dilated kernel size " +
                          std::to_string(g.d[j] * (g.k[j] - 1) + 1));
      g.out[j] = span / g.s[j] + 1;
    } else {
      g.out[j] = (g.in[j] - 1) * g.s[j] - g.lo[j] - g.hi[j] + g.d[j] * (g.k[j] - 1) + g.op[j] + 1;
      if (g.out[j] < 0) throw shape_error("the output size of spatial dim " + std::to_string(j - base) + " is negative");
    }
  }
  return g;
}

/// Metadata of cpu tensors of dtype T.
template <element T>
OperandList<TensorMeta> conv_metas(std::span<const Tensor<T>> in) {
  return OperandList<TensorMeta>(in, [](const Tensor<T>& t) { return TensorMeta{dtype_of<T>(), t.sizes(), Device{}, true}; });
}

/// The GEMM `c[m, n] (ldc apart) = w[m, K] (rows K apart) · B` of a convolution's group,
/// B's panels written by `pack(ctx, ...)` (im2col or the flat phase blocks); the epilogue left
/// to the caller.
inline torchtpu::detail::SgemmArgs conv_weight_gemm(int64_t m, int64_t n, int64_t K, const float* w, float* c,
                                                   int64_t ldc, decltype(torchtpu::detail::SgemmArgs::pack_b_from) pack,
                                                   const void* ctx) {
  torchtpu::detail::SgemmArgs a;
  a.m = m; a.n = n; a.k = K;
  a.a = w; a.sam = K; a.sak = 1;
  a.c = c; a.ldc = ldc;
  a.pack_b_from = pack;
  a.b_ctx = ctx;
  return a;
}

/// Bias and `ep` over output channels [r0, r1) of `dest` ([OCg, ...]), 32 channels at a time,
/// the product read from `src(t, rows)` (channels [t, t + rows), dest's shape); `bias` is
/// [OCg, 1...] or null.
template <class Ep, class Src>
void conv_epilogue_rows(const Tensor<float>& dest, const Tensor<float>* bias, const Ep& ep, int64_t r0, int64_t r1,
                        const Src& src) {
  for (int64_t t = r0; t < r1; t += 32) {
    const int64_t rows = std::min<int64_t>(32, r1 - t);
    const Tensor<float> s = src(t, rows);
    const Tensor<float> d = dest.narrow(0, t, rows);
    if (bias) ep(d, torchtpu::add(s, bias->narrow(0, t, rows)));
    else ep(d, s);
  }
}

/// Images per Winograd pass for `tiles` tiles per image: enough for about 512 tiles (the
/// GEMMs' rows), at most `N`.
inline int64_t winograd_images(int64_t N, int64_t tiles) { return std::min<int64_t>(N, std::max<int64_t>(1, 512 / tiles)); }

/// The output tile (2 or 4) `g` (float32, not transposed) runs Winograd F(tile x tile, 3x3)
/// with on the vector GEMM, or 0. `conv_winograd()` allows none (0), F(2x2) (2) or both (4:
/// F(4x4) first). A tile is taken for a 3x3 window, stride 1, dilation 1, at least 8 channels
/// in and out per group, at least 16 tiles per pass for F(4x4) and 32 for F(2x2), and the
/// GEMMs' tile work (`sgemm_tile_work`, padding included) under 0.55x the direct product's (9
/// taps over the output positions). With fewer tiles the transformed weight (1.8x or 4x the
/// weight) is read for too little work: F(4x4) at 7x7 (4 tiles) with 512 channels ran 2.6 ->
/// 5.2 ms, F(2x2) there (16 tiles) no faster than the direct GEMM with the weight read from
/// memory (1.92 ms both; AVX-512, 1 thread) while keeping 17 MB per layer. F(2x2) also needs
/// 128 output channels per group: its transforms cost more per multiply saved, and with fewer
/// channels they eat the GEMMs' gain (64 channels at 56x56: 1.85 -> 1.76 ms, the transforms
/// 0.84 ms of it).
inline int winograd_tile(const ConvGeom& g, const torchtpu::detail::SgemmKernels& kern) {
  const int allowed = conv_winograd();
  if (allowed == 0 || g.transposed || g.nsp != 2 || g.k[1] != 3 || g.k[2] != 3 || g.s[1] != 1 || g.s[2] != 1 ||
      g.d[1] != 1 || g.d[2] != 1 || g.Cg < 8 || g.OCg < 8)
    return 0;
  for (const int m : {4, 2}) {
    if (m > allowed || (m == 2 && g.OCg < 128)) continue;
    const int64_t tiles = ((g.out[1] + m - 1) / m) * ((g.out[2] + m - 1) / m), nb = winograd_images(g.N, tiles);
    if (nb * tiles < (m == 2 ? 32 : 16)) continue;
    const int64_t wino = (m + 2) * (m + 2) * torchtpu::detail::sgemm_tile_work(nb * tiles, g.OCg, kern);
    const int64_t direct = 9 * torchtpu::detail::sgemm_tile_work(g.OCg, nb * g.out[1] * g.out[2], kern);
    if (100 * wino < 55 * direct) return m;
  }
  return 0;
}

/// Key of a weight's Winograd transform in ConstantPacks (`fn`: this function's address).
inline void winograd_weight_tag() {}

/// `conv2d_fast` as Winograd F(m x m, 3x3), m = `tile` (fuse/winograd.hpp; `winograd_tile(g)`):
/// per group and pass of `winograd_images` images, the input transform V[P][Cg][T] (P =
/// (m + 2)² points), P GEMMs Mᵀ[ξ] = V[ξ]ᵀ · Uᵀ[ξ] ([T x Cg] · [Cg x OCg], split over the thread
/// pool by ξ), the output transform into `out4` with the bias, then `ep` on 32 channels at a
/// time. The weight's transform Uᵀ is computed and packed for the GEMM once for a pinned weight
/// (a loaded model's, ConstantPacks: P / 9 times the weight's memory, kept while it is pinned);
/// per call otherwise. Accuracy: F(2x2)'s error is about the direct product's; F(4x4)'s
/// constants (up to 8 and 1/24) make it about ten times that (tests/ops/test_conv.cpp).
template <class Ep>
void conv2d_winograd(const ConvGeom& g, int tile, const float* xp, const Tensor<float>& wc, const Tensor<float>* b,
                     Tensor<float>& out4, const Ep& ep) {
  using FloatTensor = Tensor<float>;
  namespace td = torchtpu::detail;
  const td::SgemmKernels& kern = td::sgemm_kernels();
  const int64_t N = g.N, C = g.C, H = g.in[1], W = g.in[2], OC = g.OC, Cg = g.Cg, OCg = g.OCg;
  const int64_t OH = g.out[1], OW = g.out[2];
  const int64_t m = tile, P = (m + 2) * (m + 2);
  const int64_t th = (OH + m - 1) / m, tw = (OW + m - 1) / m, tiles = th * tw, nb = winograd_images(N, tiles);
  const FloatTensor bc = b ? b->contiguous() : FloatTensor();
  const FloatTensor vbuf = FloatTensor::empty(Dims{P * Cg * nb * tiles});
  const FloatTensor mbuf = FloatTensor::empty(Dims{P * OCg * nb * tiles});
  const size_t ufloats = size_t(P * Cg * OCg), upacked = td::sgemm_packed_b_floats(Cg, OCg, kern);
  FloatTensor ubuf;
  for (int64_t gi = 0; gi < g.G; ++gi) {
    const float* wg = wc.data_ptr() + gi * OCg * Cg * 9;
    // a pinned weight: each ξ's Uᵀ packed as the GEMM's B, kept (P x the packed [Cg x OCg]);
    // else Uᵀ computed into `ubuf` and packed by the GEMM
    const float* packed = td::ConstantPacks::instance().get(
        td::PackKey{uintptr_t(wg), OCg, Cg, m, 3, kern.blocking.kc, kern.nr, false, uintptr_t(&winograd_weight_tag)},
        P * upacked, [&](float* dst) {
          std::vector<float> ut(ufloats);
          td::winograd_weight_transform(wg, OCg, Cg, ut.data(), tile);
          for (int64_t xi = 0; xi < P; ++xi) {
            td::SgemmArgs s;
            s.k = Cg; s.n = OCg;
            s.b = ut.data() + xi * Cg * OCg; s.sbk = OCg; s.sbn = 1;
            td::sgemm_pack_b_whole(s, kern, dst + size_t(xi) * upacked);
          }
        });
    const float* u = nullptr;
    if (!packed) {
      if (!ubuf.defined()) ubuf = FloatTensor::empty(Dims{int64_t(ufloats)});
      td::winograd_weight_transform(wg, OCg, Cg, ubuf.data_ptr(), tile);
      u = ubuf.data_ptr();
    }
    for (int64_t n0 = 0; n0 < N; n0 += nb) {
      td::WinogradArgs a;
      a.x = xp + (n0 * C + gi * Cg) * H * W;
      a.x_image = C * H * W;
      a.C = Cg; a.H = H; a.W = W; a.ph = g.lo[1]; a.pw = g.lo[2]; a.OH = OH; a.OW = OW;
      a.images = std::min(nb, N - n0);
      a.tile = m; a.th = th; a.tw = tw; a.T = a.images * tiles;
      a.v = vbuf.data_ptr();
      a.m = mbuf.data_ptr();
      a.OC = OCg;
      a.bias = b ? bc.data_ptr() + gi * OCg : nullptr;
      a.y = out4.data_ptr() + (n0 * OC + gi * OCg) * OH * OW;
      a.y_image = OC * OH * OW;
      td::winograd_input(a);
      const int64_t T = a.T;
      td::parallel_chunks(P, td::chunks_for(P * OCg * Cg * T, int64_t(1) << 18), 1, [&](int64_t x0, int64_t x1) {
        for (int64_t xi = x0; xi < x1; ++xi) {
          td::SgemmArgs s;
          s.m = T; s.n = OCg; s.k = Cg;
          s.a = a.v + xi * Cg * T; s.sam = 1; s.sak = T;
          if (packed) s.b_packed = packed + size_t(xi) * upacked;
          else s.b = u + xi * Cg * OCg;
          s.sbk = OCg; s.sbn = 1;
          s.c = mbuf.data_ptr() + xi * T * OCg; s.ldc = OCg;
          td::sgemm_f32(s, kern);
        }
      });
      td::winograd_output(a);
      if constexpr (!is_store_epilogue<Ep>) {
        for (int64_t n = n0; n < n0 + a.images; ++n) {
          const FloatTensor dest = out4.select(0, n).narrow(0, gi * OCg, OCg);
          conv_epilogue_rows(dest, nullptr, ep, 0, OCg, [&dest](int64_t t, int64_t rows) { return dest.narrow(0, t, rows); });
        }
      }
    }
  }
}

/// float32 1-D/2-D convolution (not transposed) on the engine's fast paths, `ep` fused into the
/// GEMM's output pass (applied after the window kernel for depthwise ones). `out` is contiguous.
template <class Ep>
void conv2d_fast(const ConvGeom& g, const Tensor<float>& xin, const Tensor<float>& w, const Tensor<float>* b,
                 Tensor<float>& out, const Ep& ep) {
  using FloatTensor = Tensor<float>;
  const int64_t N = g.N, C = g.C, H = g.in[1], W = g.in[2], OC = g.OC, Cg = g.Cg, KH = g.k[1], KW = g.k[2];
  const int64_t OH = g.out[1], OW = g.out[2], sh = g.s[1], sw = g.s[2], ph = g.lo[1], pw = g.lo[2];
  const int64_t dh = g.d[1], dw = g.d[2], groups = g.G, L = OH * OW, OCg = g.OCg, K = Cg * KH * KW;
  const FloatTensor x = xin.contiguous();
  const FloatTensor wc = w.contiguous();
  FloatTensor out4 = out.view(Dims{N, OC, OH, OW});
  const float* xp = x.data_ptr();
  if (Cg == 1 && OCg == 1) {
    // Depthwise: each output channel reads one input channel (fuse/window.hpp).
    const FloatTensor bc = b ? b->contiguous() : FloatTensor();
    torchtpu::detail::Window2dArgs a;
    a.kind = torchtpu::detail::Window2dArgs::Kind::depthwise;
    a.x = xp;
    a.out = out4.data_ptr();
    a.planes = N * OC;
    a.H = H; a.W = W; a.OH = OH; a.OW = OW;
    a.kh = KH; a.kw = KW; a.sh = sh; a.sw = sw; a.ph = ph; a.pw = pw; a.dh = dh; a.dw = dw;
    a.weight = wc.data_ptr();
    a.bias = b ? bc.data_ptr() : nullptr;
    a.planes_per_item = OC;
    torchtpu::detail::window2d(a);
    if constexpr (!is_store_epilogue<Ep>) ep(out, out);
    return;
  }
#if TORCHTPU_HAS_VECTOR_PATH
  if (torchtpu::detail::cpu_has_vector_gemm()) {
    if (const int tile = winograd_tile(g, torchtpu::detail::sgemm_kernels())) {
      conv2d_winograd(g, tile, xp, wc, b, out4, ep);
      return;
    }
  }
#endif
  const bool direct = KH == 1 && KW == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0 && g.hi[1] == 0 && g.hi[2] == 0;
  const FloatTensor w2 = wc.view(Dims{OC, K});
  FloatTensor bias2;
  if (b) bias2 = b->contiguous().view(Dims{OC, 1});
#if TORCHTPU_HAS_VECTOR_PATH
  const torchtpu::detail::SgemmKernels& kern = torchtpu::detail::sgemm_kernels();
  // The transposed product pays when it saves 15 % of the tile work, or 10 % with K >= 1024 and
  // a window larger than 1x1. Measured (AVX-512, 1 thread, weights pinned, ms normal ->
  // transposed): 3x3 512->512 at 7x7 2.87 -> 2.34, 3x3 256->256 at 14x14 2.46 -> 2.29; but 1x1
  // at 14x14 (10-12 % saved) lost: 576->96 0.22 -> 0.27, 1024->256 1.02 -> 1.05.
  const bool vector_gemm = torchtpu::detail::cpu_has_vector_gemm();
  // A batch of small output planes (under 256 positions: 14x14 and below) runs as one GEMM per
  // `nb` images (about 512 columns), their positions side by side (Im2colArgs::plane): one
  // image's thin [OCg, L] product would fill few of the micro-kernel's columns (a 2x2 plane 4
  // of 32) and pass over the whole weight matrix for each image.
  const int64_t nb = N > 1 && L < 256 ? std::min<int64_t>(N, (512 + L - 1) / L) : 1;
  if (nb > 1 && vector_gemm && kern.nr <= torchtpu::detail::im2col_max_nr) {
    // out[OCg, nb·L] = W[OCg, K] · B, B unfolded from nb images while it is packed; then bias
    // and `ep` from that buffer into each image's output
    const FloatTensor buf = FloatTensor::empty(Dims{OCg, nb * L});
    for (int64_t n0 = 0; n0 < N; n0 += nb) {
      const int64_t cnt = std::min(nb, N - n0);
      for (int64_t gi = 0; gi < groups; ++gi) {
        const torchtpu::detail::Im2colArgs src{xp + (n0 * C + gi * Cg) * H * W, H, W, KH, KW, sh, sw, ph, pw, dh, dw,
                                               OW, cnt * L, L, C * H * W};
        const torchtpu::detail::SgemmArgs a = conv_weight_gemm(OCg, cnt * L, K, wc.data_ptr() + gi * OCg * K, buf.data_ptr(),
                                                               nb * L, &torchtpu::detail::im2col_pack_b, &src);
        torchtpu::detail::sgemm_f32(a);
        for (int64_t i = 0; i < cnt; ++i) {
          const FloatTensor dest = out4.select(0, n0 + i).narrow(0, gi * OCg, OCg).view(Dims{OCg, L});
          const FloatTensor part = buf.narrow(1, i * L, L);
          if (b) ep(dest, torchtpu::add(part, bias2.narrow(0, gi * OCg, OCg)));
          else ep(dest, part);
        }
      }
    }
    return;
  }
  const int64_t work_n = torchtpu::detail::sgemm_tile_work(OCg, L, kern);
  const int64_t work_t = torchtpu::detail::sgemm_tile_work(L, OCg, kern);
  const bool transposed = vector_gemm && kern.mr <= torchtpu::detail::im2col_max_nr && L >= kern.mr &&
                          (20 * work_t < 17 * work_n || (10 * work_t < 9 * work_n && K >= 1024 && KH * KW > 1));
  // Flat implicit GEMM: the input copied once into zero-padded stride-phase blocks
  // (fuse/window.hpp PhaseBlocks, as the depthwise kernel reads), and out over flat positions
  // q = oh · wq + ow = W[OCg, K] · B[K, OH · wq], B's panels plain row copies from the blocks
  // (flat_conv_pack_b) instead of im2col's per-run border, padding and stride work; the
  // epilogue drops the wq - OW positions after each row as it writes bias and `ep` into the
  // output. Taken when those positions add at most 10 % to the tiles' work (3x3 at 56x56: 4 %,
  // 28x28: 8 %, 14x14: 0 %; 7x7 outputs keep the transposed product above).
  torchtpu::detail::Window2dArgs geo;
  geo.H = H; geo.W = W; geo.OH = OH; geo.OW = OW;
  geo.kh = KH; geo.kw = KW; geo.sh = sh; geo.sw = sw; geo.ph = ph; geo.pw = pw; geo.dh = dh; geo.dw = dw;
  torchtpu::detail::PhaseBlocks pb = torchtpu::detail::phase_blocks(geo);
  const int64_t Q = OH * pb.wq;
  const bool flat = vector_gemm && !direct && !transposed && KH * KW <= torchtpu::detail::flat_conv_max_taps &&
                    kern.nr <= torchtpu::detail::im2col_max_nr &&
                    10 * torchtpu::detail::sgemm_tile_work(OCg, Q, kern) <= 11 * work_n;
  if (flat) {
    pb.block = (OH + pb.extra) * pb.wq + torchtpu::detail::flat_conv_slack;
    const int64_t chf = sh * sw * pb.block;
    const FloatTensor blocks = FloatTensor::empty(Dims{Cg * chf});
    const FloatTensor cflat = FloatTensor::empty(Dims{OCg, Q});
    torchtpu::detail::FlatConvArgs src;
    src.x = blocks.data_ptr();
    src.channel_floats = chf;
    src.taps = KH * KW;
    for (int64_t i = 0; i < KH; ++i)
      for (int64_t j = 0; j < KW; ++j) src.tap_off[i * KW + j] = torchtpu::detail::phase_tap_offset(geo, pb, i, j);
    struct EpiF {
      const FloatTensor* dest;  // [OCg, OH, OW] of this image and group
      const FloatTensor* cflat;  // [OCg, OH · wq]
      const FloatTensor* bias;  // [OCg, 1, 1] of this group, or null
      const Ep* ep;
      int64_t OH, OW, wq;
    };
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t gi = 0; gi < groups; ++gi) {
        geo.x = xp + (n * C + gi * Cg) * H * W;
        geo.planes = Cg;
        torchtpu::detail::phase_fill_planes(geo, pb, blocks.data_ptr());
        const FloatTensor dest = out4.select(0, n).narrow(0, gi * OCg, OCg);
        const FloatTensor bg = b ? bias2.narrow(0, gi * OCg, OCg).view(Dims{OCg, 1, 1}) : FloatTensor();
        EpiF epi{&dest, &cflat, b ? &bg : nullptr, &ep, OH, OW, pb.wq};
        torchtpu::detail::SgemmArgs a = conv_weight_gemm(OCg, Q, K, wc.data_ptr() + gi * OCg * K, cflat.data_ptr(), Q,
                                                         &torchtpu::detail::flat_conv_pack_b, &src);
        // on each finished block of channels and flat positions, while it is in cache (a
        // stem's 64 x 12880 product is 3.1 MiB): the output rows the block holds whole as one
        // view, the pieces of the rows it starts and ends inside as two more
        a.epilogue_block = [](void* ctx, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
          const EpiF& e = *static_cast<const EpiF*>(ctx);
          auto rows_cols = [&](int64_t oh0, int64_t oh1, int64_t w0, int64_t w1) {  // rows [oh0, oh1) x columns [w0, w1)
            if (oh1 <= oh0 || w1 <= w0) return;
            const FloatTensor d = e.dest->narrow(1, oh0, oh1 - oh0).narrow(2, w0, w1 - w0);
            conv_epilogue_rows(d, e.bias, *e.ep, r0, r1, [&](int64_t t, int64_t rows) {
              return e.cflat->narrow(0, t, rows).view(Dims{rows, e.OH, e.wq}).narrow(1, oh0, oh1 - oh0).narrow(2, w0, w1 - w0);
            });
          };
          const int64_t first = c0 / e.wq, last = (c1 - 1) / e.wq;  // the output rows the block touches
          if (first == last) {
            rows_cols(first, first + 1, c0 - first * e.wq, std::min(e.OW, c1 - first * e.wq));
            return;
          }
          rows_cols(first, first + 1, c0 - first * e.wq, e.OW);
          rows_cols(first + 1, last, 0, e.OW);
          rows_cols(last, last + 1, 0, std::min(e.OW, c1 - last * e.wq));
        };
        a.epilogue_ctx = &epi;
        torchtpu::detail::sgemm_f32(a);
      }
    }
    return;
  }
  if (transposed) {
    // Small output planes (7x7, 14x14, at least one strip; 1x1 kernels too): outᵀ[L, OCg] = Bᵀ[L, K] · Wᵀ[K, OCg],
    // so output positions fill the kernels' strips of mr rows and channels their panels of nr
    // columns, with less padding than out = W · B (AVX-512, 49 positions: 52 rows computed
    // instead of 64 columns). im2col writes A's strips (the B panel writer, width mr); the
    // product lands in an [L, OCg] buffer that each finished block of rows is transposed from,
    // then bias and `ep` run on those output columns.
    struct EpiT {
      const FloatTensor* dest;  // [OCg, L] of this image and group
      const float* ct;          // [L, OCg]
      int64_t L, OCg;
      const FloatTensor* bias;  // [OCg, 1] of this group, or null
      const Ep* ep;
    };
    const FloatTensor ct = FloatTensor::empty(Dims{L, OCg});
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t gi = 0; gi < groups; ++gi) {
        const torchtpu::detail::Im2colArgs src{xp + (n * C + gi * Cg) * H * W, H, W, KH, KW, sh, sw, ph, pw, dh, dw, OW, L};
        const FloatTensor dest = out4.select(0, n).narrow(0, gi * OCg, OCg).view(Dims{OCg, L});
        const FloatTensor bg = b ? bias2.narrow(0, gi * OCg, OCg) : FloatTensor();
        EpiT epi{&dest, ct.data_ptr(), L, OCg, b ? &bg : nullptr, &ep};
        torchtpu::detail::SgemmArgs a;
        a.m = L; a.n = OCg; a.k = K;
        a.pack_a_from = &torchtpu::detail::im2col_pack_b;
        a.a_ctx = &src;
        a.b = wc.data_ptr() + gi * OCg * K; a.sbk = 1; a.sbn = K;
        a.c = ct.data_ptr(); a.ldc = OCg;
        a.epilogue = [](void* ctx, int64_t r0, int64_t r1) {
          const EpiT& e = *static_cast<const EpiT*>(ctx);
          float* d = e.dest->data_ptr();
          for (int64_t o0 = 0; o0 < e.OCg; o0 += 16)  // 16 x 16 tiles: both sides stay in cache
            for (int64_t l0 = r0; l0 < r1; l0 += 16) {
              const int64_t o1 = std::min(o0 + 16, e.OCg), l1 = std::min(l0 + 16, r1);
              for (int64_t o = o0; o < o1; ++o)
                for (int64_t l = l0; l < l1; ++l) d[o * e.L + l] = e.ct[l * e.OCg + o];
            }
          if (e.bias || !is_store_epilogue<Ep>) {
            const FloatTensor v = e.dest->narrow(1, r0, r1 - r0);
            if (e.bias) (*e.ep)(v, torchtpu::add(v, *e.bias));
            else (*e.ep)(v, v);
          }
        };
        a.epilogue_ctx = &epi;
        torchtpu::detail::sgemm_f32(a);
      }
    }
    return;
  }
  if (!direct && vector_gemm && kern.nr <= torchtpu::detail::im2col_max_nr) {
    // Implicit GEMM: out[OCg, L] = W[OCg, K] · B, B unfolded from the input while it is packed
    // (fuse/window.hpp im2col_pack_b); bias and `ep` on each finished block of rows and
    // columns, 32 rows at a time.
    struct Epi {
      const FloatTensor* dest;
      const FloatTensor* bias;  // [OCg, 1] of this group, or null
      const Ep* ep;
    };
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t gi = 0; gi < groups; ++gi) {
        const torchtpu::detail::Im2colArgs src{xp + (n * C + gi * Cg) * H * W, H, W, KH, KW, sh, sw, ph, pw, dh, dw, OW, L};
        const FloatTensor dest = out4.select(0, n).narrow(0, gi * OCg, OCg).view(Dims{OCg, L});
        const FloatTensor bg = b ? bias2.narrow(0, gi * OCg, OCg) : FloatTensor();
        Epi epi{&dest, b ? &bg : nullptr, &ep};
        torchtpu::detail::SgemmArgs a = conv_weight_gemm(OCg, L, K, wc.data_ptr() + gi * OCg * K, dest.data_ptr(), L,
                                                         &torchtpu::detail::im2col_pack_b, &src);
        if (b || !is_store_epilogue<Ep>) {
          // on each finished block of rows and columns, while it is in cache (a stem's
          // 32 x 12544 output is 1.5 MiB)
          a.epilogue_block = [](void* ctx, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
            const Epi& e = *static_cast<const Epi*>(ctx);
            const FloatTensor d = e.dest->narrow(1, c0, c1 - c0);
            conv_epilogue_rows(d, e.bias, *e.ep, r0, r1, [&d](int64_t t, int64_t rows) { return d.narrow(0, t, rows); });
          };
          a.epilogue_ctx = &epi;
        }
        torchtpu::detail::sgemm_f32(a);
      }
    }
    return;
  }
#endif
  // Without a vector GEMM: out = W · B, B unfolded im2col_max_nr columns at a time by
  // fuse/window.hpp's im2col_pack_scalar (the definition the vector paths pack from)
  constexpr int64_t P = torchtpu::detail::im2col_max_nr;
  FloatTensor panel = direct ? FloatTensor() : FloatTensor::empty(Dims{K * P});
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t gi = 0; gi < groups; ++gi) {
      const FloatTensor dest = out4.select(0, n).narrow(0, gi * OCg, OCg).view(Dims{OCg, L});
      const FloatTensor wg = w2.narrow(0, gi * OCg, OCg);
      auto product = [&](const FloatTensor& d, const FloatTensor& src) {
        if (b) ep(d, torchtpu::add(torchtpu::matmul(wg, src), bias2.narrow(0, gi * OCg, OCg)));
        else ep(d, torchtpu::matmul(wg, src));
      };
      if (direct) {
        product(dest, x.view(Dims{N, C, H * W}).select(0, n).narrow(0, gi * Cg, Cg));
        continue;
      }
      const torchtpu::detail::Im2colArgs src{xp + (n * C + gi * Cg) * H * W, H, W, KH, KW, sh, sw, ph, pw, dh, dw, OW, L};
      for (int64_t j0 = 0; j0 < L; j0 += P) {
        const int64_t cols = std::min(P, L - j0);
        torchtpu::detail::im2col_pack_scalar(src, 0, K, j0, cols, panel.data_ptr());
        product(dest.narrow(1, j0, cols), panel.narrow(0, 0, K * cols).view(Dims{K, cols}));
      }
    }
  }
}

/// One convolution of `conv2d_chain`: its geometry (`conv_geom`), contiguous float32 weight
/// and bias, and epilogue (`ep(dest, e)` stores the activation of `e`, as `conv2d_fast`'s).
template <class Ep>
struct ConvChainLayer {
  ConvGeom g;                            ///< the whole layer's geometry
  const Tensor<float>* weight = nullptr;  ///< [OC, C, 1, 1] (pointwise) or [OC, 1, kh, kw] (depthwise), contiguous
  const Tensor<float>* bias = nullptr;    ///< [OC], contiguous, or null
  const Ep* ep = nullptr;                ///< the layer's epilogue
};

/// True for a 2-D convolution `conv2d_chain` takes as pointwise: batched, not transposed, 1x1,
/// stride 1, no padding, one group.
inline bool conv_chain_pointwise(const ConvGeom& g) {
  return g.nsp == 2 && g.batched && !g.transposed && g.G == 1 && g.k[1] == 1 && g.k[2] == 1 && g.s[1] == 1 &&
         g.s[2] == 1 && g.lo[1] == 0 && g.lo[2] == 0 && g.hi[1] == 0 && g.hi[2] == 0;
}

/// True for a 2-D convolution `conv2d_chain` takes as depthwise: batched, not transposed, one
/// input and one output channel per group, row padding at most the window's extent
/// ((kh - 1) · dh before and after: every band of output rows reads an input row).
inline bool conv_chain_depthwise(const ConvGeom& g) {
  const int64_t ext = (g.k[1] - 1) * g.d[1];
  return g.nsp == 2 && g.batched && !g.transposed && g.Cg == 1 && g.OCg == 1 && g.lo[1] <= ext && g.hi[1] <= ext;
}

/// True when `layers` is a chain `conv2d_chain` runs: [pointwise] depthwise [pointwise] (2 or
/// 3 layers, the depthwise one in the middle of three), each layer reading the previous one's
/// output shape.
template <class Ep>
bool conv_chain_fits(std::span<const ConvChainLayer<Ep>> layers) {
  const size_t n = layers.size();
  if (n < 2 || n > 3) return false;
  const size_t dw = conv_chain_depthwise(layers[0].g) ? 0 : 1;
  for (size_t i = 0; i < n; ++i)
    if (i == dw ? !conv_chain_depthwise(layers[i].g) : !conv_chain_pointwise(layers[i].g)) return false;
  if (n == 3 && dw != 1) return false;
  for (size_t i = 1; i < n; ++i) {
    const ConvGeom &a = layers[i - 1].g, &b = layers[i].g;
    if (b.N != a.N || b.C != a.OC || b.in[1] != a.out[1] || b.in[2] != a.out[2]) return false;
  }
  return true;
}

/// True when `conv2d_chain` beats running the layers one by one (`conv_chain_fits` layers):
/// depthwise input planes of at least 28 x 28. Measured on mobilenet_v2 (1 thread, AVX-512,
/// the whole block's ms, layers -> chain): 112x112 1.26 -> 1.09, 56x56 0.95 -> 0.74, 28x28
/// 0.39 -> 0.31; but 14x14 0.49 -> 0.55 and 7x7 0.41 -> 0.42-0.53, where one band is the
/// whole plane and the pointwise layers lose the transposed product `conv2d_fast` takes there.
template <class Ep>
bool conv_chain_pays(std::span<const ConvChainLayer<Ep>> layers) {
  const ConvGeom& d = conv_chain_depthwise(layers[0].g) ? layers[0].g : layers[1].g;
  return d.in[1] * d.in[2] >= 28 * 28;
}

/// Bytes of the band buffers `conv2d_chain` aims for (the expanded rows and the depthwise
/// output rows of one band), so that they stay in L2 (2 MiB per core here) with the weights.
inline constexpr int64_t conv_chain_band_bytes = int64_t(512) << 10;

/// A chain of float32 convolutions ([pointwise] depthwise [pointwise], `conv_chain_fits`:
/// MobileNet's inverted residual block, 1x1 expand -> 3x3 depthwise -> 1x1 project) run band by
/// band of output rows, so that the wide intermediate tensors (mobilenet_v2's 96 x 112 x 112
/// expansion: 4.6 MiB) never leave the cache: per band, the expand product of the input rows
/// the band's depthwise windows read (the rows it shares with the previous band kept, not
/// recomputed), the depthwise rows, and the project product into the output's rows. Each
/// layer's bias and epilogue run as in `conv2d_fast`, so every value equals that of the layers
/// run one by one through `conv2d_fast` (the same GEMM sums, window taps and epilogue order).
/// `x`: the first layer's input [N, C, H, W], contiguous; `out`: the last layer's output
/// [N, OC, OH, OW], contiguous. Without a vector GEMM the 1x1 layers run as `conv2d_fast`'s
/// plain-loop product (matmul) on each band.
template <class Ep>
void conv2d_chain(std::span<const ConvChainLayer<Ep>> layers, const Tensor<float>& x, Tensor<float>& out) {
  using FloatTensor = Tensor<float>;
  namespace td = torchtpu::detail;
  const bool pre = !conv_chain_depthwise(layers[0].g), post = layers.size() == (pre ? 3u : 2u);
  const ConvChainLayer<Ep>& D = layers[pre ? 1 : 0];
  const ConvGeom& dg = D.g;
  const int64_t N = layers[0].g.N, C0 = layers[0].g.C, H = dg.in[1], W = dg.in[2], E = dg.C;
  const int64_t OH = dg.out[1], OW = dg.out[2], kh = dg.k[1], sh = dg.s[1], dh = dg.d[1], ph = dg.lo[1];
  const int64_t OCl = layers.back().g.OC;
  // output rows per band: the band's new expanded rows (sh per output row) and depthwise rows
  // within conv_chain_band_bytes, after the window's shared rows
  const int64_t per_row = E * ((pre ? sh * W : 0) + (post ? OW : 0));
  const int64_t halo = pre ? E * ((kh - 1) * dh + 1) * W : 0;
  const int64_t R = std::clamp<int64_t>((conv_chain_band_bytes / 4 - halo) / std::max<int64_t>(per_row, 1), 1, OH);
  const int64_t capE = (R - 1) * sh + (kh - 1) * dh + 1;  // input rows of a band, at most
  const int64_t xs = capE * W, ds = R * OW;                // band buffers' plane strides
  const FloatTensor bufE = pre ? FloatTensor::empty(Dims{E, xs}) : FloatTensor();
  const FloatTensor bufD = post ? FloatTensor::empty(Dims{E, ds}) : FloatTensor();
  // bias [OC, 1] views of the pointwise layers (conv_epilogue_rows)
  const FloatTensor b_pre = pre && layers[0].bias ? layers[0].bias->view(Dims{E, 1}) : FloatTensor();
  const ConvChainLayer<Ep>* P = post ? &layers.back() : nullptr;
  const FloatTensor b_post = P && P->bias ? P->bias->view(Dims{OCl, 1}) : FloatTensor();
  // one pointwise product dest[m, cols] = W[m, k] · src[k, cols] (views of larger buffers,
  // rows contiguous), bias and epilogue on each finished block
  struct Epi {
    const FloatTensor* dest;
    const FloatTensor* bias;  // [m, 1] or null
    const Ep* ep;
  };
  const bool vector_gemm = td::cpu_has_vector_gemm();
  auto pointwise = [vector_gemm](const ConvChainLayer<Ep>& l, const FloatTensor& src, const FloatTensor& dest,
                                 const FloatTensor* bias) {
    if (!vector_gemm) {
      const FloatTensor wg = l.weight->view(Dims{l.g.OC, l.g.C});
      if (bias) (*l.ep)(dest, torchtpu::add(torchtpu::matmul(wg, src), *bias));
      else (*l.ep)(dest, torchtpu::matmul(wg, src));
      return;
    }
    Epi epi{&dest, bias, l.ep};
    td::SgemmArgs a;
    a.m = dest.size(0); a.n = dest.size(1); a.k = l.g.C;
    a.a = l.weight->data_ptr(); a.sam = l.g.C; a.sak = 1;
    a.b = src.data_ptr(); a.sbk = src.stride(0); a.sbn = 1;
    a.c = dest.data_ptr(); a.ldc = dest.stride(0);
    a.epilogue_block = [](void* ctx, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
      const Epi& e = *static_cast<const Epi*>(ctx);
      const FloatTensor d = e.dest->narrow(1, c0, c1 - c0);
      conv_epilogue_rows(d, e.bias, *e.ep, r0, r1, [&d](int64_t t, int64_t rows) { return d.narrow(0, t, rows); });
    };
    a.epilogue_ctx = &epi;
    td::sgemm_f32(a);
  };
  for (int64_t n = 0; n < N; ++n) {
    const FloatTensor xn = x.select(0, n).view(Dims{C0, H * W});
    const FloatTensor on = out.select(0, n).view(Dims{OCl, OH * OW});
    int64_t p0 = 0, p1 = 0;  // the expanded input rows bufE holds (row p0 first)
    for (int64_t r0 = 0; r0 < OH; r0 += R) {
      const int64_t r1 = std::min(OH, r0 + R);
      const int64_t i0 = std::max<int64_t>(0, r0 * sh - ph), i1 = std::min(H, (r1 - 1) * sh - ph + (kh - 1) * dh + 1);
      td::Window2dArgs a;
      a.kind = td::Window2dArgs::Kind::depthwise;
      if (pre) {
        int64_t start = i0;
        if (i0 < p1) {  // rows the previous band computed: moved to the top of each plane
          if (i0 > p0)
            for (int64_t e = 0; e < E; ++e)
              std::memmove(bufE.data_ptr() + e * xs, bufE.data_ptr() + e * xs + (i0 - p0) * W, size_t((p1 - i0) * W) * 4);
          start = p1;
        }
        if (i1 > start)
          pointwise(layers[0], xn.narrow(1, start * W, (i1 - start) * W),
                    bufE.narrow(1, (start - i0) * W, (i1 - start) * W), layers[0].bias ? &b_pre : nullptr);
        p0 = i0;
        p1 = i1;
        a.x = bufE.data_ptr();
        a.x_plane = xs;
      } else {
        a.x = xn.data_ptr() + i0 * W;
        a.x_plane = H * W;
      }
      a.planes = E;
      a.H = i1 - i0; a.W = W; a.OH = r1 - r0; a.OW = OW;
      a.kh = kh; a.kw = dg.k[2]; a.sh = sh; a.sw = dg.s[2]; a.ph = i0 - (r0 * sh - ph); a.pw = dg.lo[2];
      a.dh = dh; a.dw = dg.d[2];
      a.weight = D.weight->data_ptr();
      a.bias = D.bias ? D.bias->data_ptr() : nullptr;
      a.planes_per_item = E;
      const FloatTensor drows = post ? bufD.narrow(1, 0, (r1 - r0) * OW) : on.narrow(1, r0 * OW, (r1 - r0) * OW);
      a.out = drows.data_ptr();
      a.out_plane = drows.stride(0);
      td::window2d(a);
      if constexpr (!is_store_epilogue<Ep>) (*D.ep)(drows, drows);
      if (post)
        pointwise(*P, bufD.narrow(1, 0, (r1 - r0) * OW), on.narrow(1, r0 * OW, (r1 - r0) * OW), P->bias ? &b_post : nullptr);
    }
  }
}

/// Any convolution (1-3 spatial dims, grouped, dilated, transposed) by direct loops,
/// accumulating in float64 and rounding once. Contiguous operands; `bias` may be null.
template <element T>
void conv_direct(const ConvGeom& g, const T* x, const T* w, const T* bias, T* y) {
  const int64_t I1 = g.in[1], I2 = g.in[2], O1 = g.out[1], O2 = g.out[2], K1 = g.k[1], K2 = g.k[2];
  const int64_t isz = g.in[0] * I1 * I2, osz = g.out[0] * O1 * O2, ksz = g.k[0] * K1 * K2;
  std::vector<double> acc(static_cast<size_t>(osz));
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t oc = 0; oc < g.OC; ++oc) {
      const int64_t gi = oc / g.OCg;
      std::fill(acc.begin(), acc.end(), bias ? static_cast<double>(bias[oc]) : 0.0);
      for (int64_t c = 0; c < g.Cg; ++c) {
        const int64_t ci = gi * g.Cg + c;
        const T* xc = x + (n * g.C + ci) * isz;
        // weight [OC, Cg, k...], or [C, OCg, k...] when transposed
        const T* wc = w + (g.transposed ? ci * g.OCg + oc % g.OCg : oc * g.Cg + c) * ksz;
        for (int64_t k0 = 0; k0 < g.k[0]; ++k0)
          for (int64_t k1 = 0; k1 < K1; ++k1)
            for (int64_t k2 = 0; k2 < K2; ++k2) {
              const double wv = static_cast<double>(wc[(k0 * K1 + k1) * K2 + k2]);
              if (!g.transposed) {  // out[o] += x[o * s - lo + k * d] * w[k]
                for (int64_t o0 = 0; o0 < g.out[0]; ++o0) {
                  const int64_t i0 = o0 * g.s[0] - g.lo[0] + k0 * g.d[0];
                  if (i0 < 0 || i0 >= g.in[0]) continue;
                  for (int64_t o1 = 0; o1 < O1; ++o1) {
                    const int64_t i1 = o1 * g.s[1] - g.lo[1] + k1 * g.d[1];
                    if (i1 < 0 || i1 >= I1) continue;
                    for (int64_t o2 = 0; o2 < O2; ++o2) {
                      const int64_t i2 = o2 * g.s[2] - g.lo[2] + k2 * g.d[2];
                      if (i2 < 0 || i2 >= I2) continue;
                      acc[size_t((o0 * O1 + o1) * O2 + o2)] += static_cast<double>(xc[(i0 * I1 + i1) * I2 + i2]) * wv;
                    }
                  }
                }
              } else {  // out[i * s - lo + k * d] += x[i] * w[k]
                for (int64_t i0 = 0; i0 < g.in[0]; ++i0) {
                  const int64_t o0 = i0 * g.s[0] - g.lo[0] + k0 * g.d[0];
                  if (o0 < 0 || o0 >= g.out[0]) continue;
                  for (int64_t i1 = 0; i1 < I1; ++i1) {
                    const int64_t o1 = i1 * g.s[1] - g.lo[1] + k1 * g.d[1];
                    if (o1 < 0 || o1 >= O1) continue;
                    for (int64_t i2 = 0; i2 < I2; ++i2) {
                      const int64_t o2 = i2 * g.s[2] - g.lo[2] + k2 * g.d[2];
                      if (o2 < 0 || o2 >= O2) continue;
                      acc[size_t((o0 * O1 + o1) * O2 + o2)] += static_cast<double>(xc[(i0 * I1 + i1) * I2 + i2]) * wv;
                    }
                  }
                }
              }
            }
      }
      T* yo = y + (n * g.OC + oc) * osz;
      for (int64_t i = 0; i < osz; ++i) yo[i] = convert<T>(acc[size_t(i)]);
    }
}

/// The cpu kernel of every convolution op (see the file's header), `ep` applied to the result.
template <element T, class Ep>
void conv_cpu(std::span<const Tensor<T>> in, const ConvArgs& a, std::string_view op, Tensor<T>& out, const Ep& ep) {
  const auto metas = conv_metas<T>(in);
  const ConvGeom g = conv_geom(metas, a, op);
  if (out.numel() == 0) return;
  const bool has_bias = a.present & 1u;
  if constexpr (!std::is_same_v<T, double>) {
    if (!g.transposed && g.nsp <= 2) {
      if constexpr (std::is_same_v<T, float>) {
        conv2d_fast(g, in[0], in[1], has_bias ? &in[2] : nullptr, out, ep);
      } else {  // float16, bfloat16: the float32 path, rounded once
        std::vector<Tensor<float>> f;
        for (const Tensor<T>& t : in) f.push_back(Tensor<float>(t.template to<float>()));
        Tensor<float> r = Tensor<float>::empty(out.sizes());
        conv2d_fast(g, f[0], f[1], has_bias ? &f[2] : nullptr, r, StoreEpilogue{});
        out.copy_(r.template to<T>());
        if constexpr (!is_store_epilogue<Ep>) ep(out, out);
      }
      return;
    }
  }
  const Tensor<T> x = in[0].contiguous(), w = in[1].contiguous();
  const Tensor<T> b = has_bias ? in[2].contiguous() : Tensor<T>();
  conv_direct<T>(g, x.data_ptr(), w.data_ptr(), has_bias ? b.data_ptr() : nullptr, out.data_ptr());
  if constexpr (!is_store_epilogue<Ep>) ep(out, out);
}

/// The lowering of every convolution op: stablehlo.convolution (NCHW / OIHW), in float32 for
/// 16-bit types (float64 for float64) at HIGHEST precision, then the bias broadcast along the
/// channels. Transposed: the kernel's in/out channels swapped per group and its window
/// reversed, the input dilated by the stride (lhs_dilation) and padded by `d * (k - 1) - p`
/// (plus output_padding after).
template <class B, class V>
V conv_lower(B& b, std::span<const V> in, const ConvArgs& a, std::string_view op) {
  using Options = conv_param_t<&B::convolution, 2>;
  std::vector<TensorMeta> metas;
  for (const V& v : in) metas.push_back(TensorMeta{v.dtype, Dims(v.dims.begin(), v.dims.end()), Device{}, true});
  const ConvGeom g = conv_geom(metas, a, op);
  const ScalarType t = in[0].dtype, ct = t == ScalarType::Double ? t : ScalarType::Float;
  auto cvt = [&](const V& v) { return v.dtype == ct ? v : b.convert(v, ct); };
  const int nsp = g.nsp, base = 3 - nsp;
  V x = cvt(in[0]), w = cvt(in[1]);
  if (!g.batched) {
    std::vector<int64_t> d{1};
    d.insert(d.end(), x.dims.begin(), x.dims.end());
    x = b.reshape(x, d);
  }
  Options o;
  o.feature_group_count = g.G;
  o.precision = decltype(o.precision)::Highest;
  for (int j = base; j < 3; ++j) o.rhs_dilation.push_back(g.d[j]);
  if (!g.transposed) {
    for (int j = base; j < 3; ++j) {
      o.window_strides.push_back(g.s[j]);
      o.padding.push_back({g.lo[j], g.hi[j]});
    }
  } else {
    // [C, OCg, k...] -> [G, Cg, OCg, k...] -> [G, OCg, Cg, k...] -> [OC, Cg, k...], window reversed
    std::vector<int64_t> split{g.G, g.Cg, g.OCg}, perm{0, 2, 1}, merged{g.OC, g.Cg}, spatial;
    for (int j = 0; j < nsp; ++j) {
      split.push_back(g.k[base + j]);
      perm.push_back(3 + j);
      merged.push_back(g.k[base + j]);
      spatial.push_back(2 + j);
    }
    w = b.reverse(b.reshape(b.transpose(b.reshape(w, split), perm), merged), spatial);
    for (int j = base; j < 3; ++j) {
      const int64_t e = g.d[j] * (g.k[j] - 1);
      o.window_strides.push_back(1);
      o.lhs_dilation.push_back(g.s[j]);
      o.padding.push_back({e - g.lo[j], e - g.hi[j] + g.op[j]});
    }
  }
  V y = b.convolution(x, w, o);
  if (a.present & 1u) y = b.add(y, b.broadcast_in_dim(cvt(in[2]), y.dims, {1}));
  if (!g.batched) y = b.reshape(y, std::vector<int64_t>(y.dims.begin() + 1, y.dims.end()));
  return ct == t ? y : b.convert(y, t);
}

/// Convolution arguments from a model node or a run-time call: `padding` may be a string
/// ('valid', 'same'; aten::conv2d.padding). **Errors:** ValueError for another string.
template <class R>
ConvArgs conv_args(const R& r, std::string_view op, bool full, int8_t rank) {
  ConvArgs a;
  a.rank = rank;
  a.stride = conv_ints(r.to_ints("stride"), op, "stride");
  if (const auto* s = std::get_if<std::string>(&r.get("padding"))) {
    if (*s == "valid") a.pad_mode = 1;
    else if (*s == "same") a.pad_mode = 2;
    else throw ValueError(std::string(op) + ": invalid padding string '" + *s + "', should be one of {'valid', 'same'}");
  } else {
    a.padding = conv_ints(r.to_ints("padding"), op, "padding");
  }
  a.dilation = conv_ints(r.to_ints("dilation"), op, "dilation");
  a.groups = r.to_int("groups");
  if (full) {
    a.transposed = r.to_bool("transposed");
    a.output_padding = conv_ints(r.to_ints("output_padding"), op, "output_padding");
  }
  a.present = r.is_none("bias") ? 0 : 1;
  return a;
}

/// The operands: input, weight and the bias when present.
template <class R>
std::vector<AnyTensor> conv_tensors(const R& r) {
  std::vector<AnyTensor> t;
  for (AnyTensor& x : r.tensors())
    if (x.defined()) t.push_back(std::move(x));
  return t;
}

/// The members every convolution op shares (names and schema are the op's own).
template <class Self>
struct ConvBase {
  /// The dtypes libtorch allows (torch 2's cpu; torch 1.13's lacks float16).
  static constexpr DtypeSet dtypes = DtypeSet::floating();
  /// A following activation fuses into the cpu kernel (jit/library_ops.hpp).
  static constexpr bool accepts_epilogue = true;
  /// Non-tensor arguments.
  using Args = ConvArgs;
  /// The present operands (an absent bias left out).
  template <class R>
  static std::vector<AnyTensor> tensors(const R& r) { return conv_tensors(r); }
  /// Dtype and shape rule (detail::conv_geom).
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    return TensorMeta{in[0].dtype, conv_geom(in, a, Self::aten).out_sizes(), Device{}, true};
  }
  /// CPU kernel with a fused epilogue `ep(dest, e)` (see the file's header).
  template <element T, class Ep>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out, const Ep& ep) {
    conv_cpu<T>(in, a, Self::aten, out, ep);
  }
  /// CPU kernel.
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    conv_cpu<T>(in, a, Self::aten, out, StoreEpilogue{});
  }
  /// StableHLO (detail::conv_lower).
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims&) {
    return conv_lower(b, in, a, Self::aten);
  }
};

}  // namespace detail

/// Convolution as traced models hold it (torch.nn.functional.conv1d/2d/3d and
/// conv_transpose1d/2d/3d all trace to aten::_convolution): cross-correlation of `input` with
/// `weight`, plus `bias`.
///
/// **Shapes:** `input: [N, C, S...]` or unbatched `[C, S...]` (1-3 spatial dims S),
/// `weight: [OC, C / groups, K...]` (transposed: `[C, OC / groups, K...]`), `bias: [OC]`
/// (optional) → `[N, OC, O...]` with `O = (S + 2p - d (K - 1) - 1) / s + 1` (transposed:
/// `(S - 1) s - 2p + d (K - 1) + output_padding + 1`). `stride`, `padding`, `dilation`,
/// `output_padding`: one value or one per spatial dim.
/// **Dtypes:** float16, bfloat16, float32, float64; all operands of the input's dtype. 16-bit
/// types compute in float32 and round once; float64 in float64.
/// **Errors:** TypeError for a non-floating input or mixed dtypes; ShapeError for ranks,
/// channels or bias that do not fit, or a kernel larger than the padded input; ValueError for
/// non-positive stride, dilation or groups, negative padding, output_padding not below stride
/// or dilation (every message names the op and the operands).
/// **Source:** at::_convolution (aten/src/ATen/native/Convolution.cpp; shape checks
/// check_shape_forward). `benchmark`, `deterministic`, `cudnn_enabled`, `allow_tf32` have no effect.
/// **Example:** tests/ops/test_conv.cpp, block `conv2d`.
struct ConvolutionOp : detail::ConvBase<ConvolutionOp> {
  ///@{
  /// Names and schema (torch 1.13; `allow_tf32` defaulted so that the 12-argument
  /// `_convolution.deprecated` reads too).
  static constexpr std::string_view name = "convolution", aten = "aten::_convolution";
  static constexpr std::string_view schema =
      "aten::_convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, "
      "bool transposed, int[] output_padding, int groups, bool benchmark, bool deterministic, bool cudnn_enabled, "
      "bool allow_tf32=True) -> Tensor";
  ///@}
  /// No typed function reaches it (model graphs and `ops::call_by_name` do; the typed
  /// conv_transpose1d/2d/3d reach ConvTranspose1dOp/2d/3d, the same definition).
  static constexpr std::string_view api = "";
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return detail::conv_args(r, aten, true, 0); }
};

/// Convolution with a string padding as traced models hold it (torch.nn.functional.conv1d/2d/3d
/// with `padding='same'` or `'valid'` trace to aten::_convolution_mode): as ConvolutionOp (not
/// transposed), the spatial rank read from the weight; 'same' needs stride 1 and puts the extra
/// element of an odd total padding after, as torch does.
/// **Errors:** as ConvolutionOp; ValueError for another padding string.
/// **Source:** at::_convolution_mode (aten/src/ATen/native/Convolution.cpp).
struct ConvolutionModeOp : detail::ConvBase<ConvolutionModeOp> {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "convolution_mode", aten = "aten::_convolution_mode";
  static constexpr std::string_view schema =
      "aten::_convolution_mode(Tensor input, Tensor weight, Tensor? bias, int[] stride, str padding, int[] dilation, "
      "int groups) -> Tensor";
  ///@}
  /// No typed function reaches it (model graphs and `ops::call_by_name` do; the typed
  /// conv1d/2d/3d take the same string padding).
  static constexpr std::string_view api = "";
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return detail::conv_args(r, aten, false, 0); }
};

/// 1-D convolution (torch.nn.functional.conv1d): as ConvolutionOp with a 3-D weight; `padding`
/// may be 'valid' or 'same' (stride 1; the extra element of an odd total padding goes after).
struct Conv1dOp : detail::ConvBase<Conv1dOp> {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "conv1d", aten = "aten::conv1d";
  static constexpr std::string_view schema =
      "aten::conv1d(Tensor input, Tensor weight, Tensor? bias=None, int[1] stride=1, int[1] padding=0, "
      "int[1] dilation=1, int groups=1) -> Tensor";
  ///@}
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return detail::conv_args(r, aten, false, 1); }
};

/// 2-D convolution (torch.nn.functional.conv2d): as ConvolutionOp with a 4-D weight; `padding`
/// may be 'valid' or 'same' (aten::conv2d.padding). **Example:** tests/ops/test_conv.cpp, block `conv2d`.
struct Conv2dOp : detail::ConvBase<Conv2dOp> {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "conv2d", aten = "aten::conv2d";
  static constexpr std::string_view schema =
      "aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, int[2] padding=0, "
      "int[2] dilation=1, int groups=1) -> Tensor";
  ///@}
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return detail::conv_args(r, aten, false, 2); }
};

/// 3-D convolution (torch.nn.functional.conv3d): as ConvolutionOp with a 5-D weight (the
/// direct float64-accumulating loop on the cpu).
struct Conv3dOp : detail::ConvBase<Conv3dOp> {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "conv3d", aten = "aten::conv3d";
  static constexpr std::string_view schema =
      "aten::conv3d(Tensor input, Tensor weight, Tensor? bias=None, int[3] stride=1, int[3] padding=0, "
      "int[3] dilation=1, int groups=1) -> Tensor";
  ///@}
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return detail::conv_args(r, aten, false, 3); }
};

namespace detail {
/// The arguments of a transposed convolution of spatial rank `rank` from a model node or a
/// run-time call (aten::conv_transpose1d/2d/3d).
template <class R>
ConvArgs conv_transpose_args(const R& r, std::string_view op, int8_t rank) {
  ConvArgs a = conv_args(r, op, false, rank);
  a.transposed = true;
  a.output_padding = conv_ints(r.to_ints("output_padding"), op, "output_padding");
  return a;
}
}  // namespace detail

/// 1-D transposed convolution (torch.nn.functional.conv_transpose1d): as ConvolutionOp with
/// `transposed` and a 3-D weight `[C, OC / groups, K]`.
///
/// **Shapes:** `input: [N, C, L]` or `[C, L]` → `[N, OC, (L - 1) s - 2p + d (K - 1) +
/// output_padding + 1]`. **Dtypes**, **errors:** as ConvolutionOp (naming aten::conv_transpose1d).
/// **Source:** torch conv_transpose1d (aten/src/ATen/native/Convolution.cpp).
struct ConvTranspose1dOp : detail::ConvBase<ConvTranspose1dOp> {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "conv_transpose1d", aten = "aten::conv_transpose1d";
  static constexpr std::string_view schema =
      "aten::conv_transpose1d(Tensor input, Tensor weight, Tensor? bias=None, int[1] stride=[1], int[1] padding=[0], "
      "int[1] output_padding=[0], int groups=1, int[1] dilation=[1]) -> Tensor";
  ///@}
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return detail::conv_transpose_args(r, aten, 1); }
};

/// 2-D transposed convolution (torch.nn.functional.conv_transpose2d): as ConvolutionOp with
/// `transposed` and a 4-D weight `[C, OC / groups, KH, KW]`.
/// **Source:** torch conv_transpose2d (aten/src/ATen/native/Convolution.cpp).
struct ConvTranspose2dOp : detail::ConvBase<ConvTranspose2dOp> {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "conv_transpose2d", aten = "aten::conv_transpose2d";
  static constexpr std::string_view schema =
      "aten::conv_transpose2d.input(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, int[2] padding=0, "
      "int[2] output_padding=0, int groups=1, int[2] dilation=1) -> Tensor";
  ///@}
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return detail::conv_transpose_args(r, aten, 2); }
};

/// 3-D transposed convolution (torch.nn.functional.conv_transpose3d): as ConvolutionOp with
/// `transposed` and a 5-D weight `[C, OC / groups, KD, KH, KW]` (the direct
/// float64-accumulating loop on the cpu).
/// **Source:** torch conv_transpose3d (aten/src/ATen/native/Convolution.cpp).
struct ConvTranspose3dOp : detail::ConvBase<ConvTranspose3dOp> {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "conv_transpose3d", aten = "aten::conv_transpose3d";
  static constexpr std::string_view schema =
      "aten::conv_transpose3d.input(Tensor input, Tensor weight, Tensor? bias=None, int[3] stride=1, int[3] padding=0, "
      "int[3] output_padding=0, int groups=1, int[3] dilation=1) -> Tensor";
  ///@}
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return detail::conv_transpose_args(r, aten, 3); }
};

namespace detail {
/// Runs convolution op `Op` on `x`, `w` and `b` (undefined: no bias), typed (`T`) or run-time
/// typed (`AnyTensor`).
template <class Op, class X>
X conv_call(const X& x, const X& w, const X& b, ConvArgs a) {
  std::vector<X> in{x, w};
  a.present = 0;
  if (b.defined()) {
    in.push_back(b);
    a.present = 1;
  }
  if constexpr (std::is_same_v<X, AnyTensor>) return call<Op>(std::span<const AnyTensor>(in), a);
  else return call_typed<Op, typename X::value_type>(std::span<const X>(in), a);
}
/// The arguments of the front-end functions. **Errors:** ValueError for lists of more than 3 values.
inline ConvArgs conv_front(std::string_view op, const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                           const std::vector<int64_t>& dilation, int64_t groups, int8_t rank, bool transposed = false,
                           const std::vector<int64_t>& output_padding = {}) {
  ConvArgs a;
  a.stride = conv_ints(stride, op, "stride");
  a.padding = conv_ints(padding, op, "padding");
  a.dilation = conv_ints(dilation, op, "dilation");
  a.output_padding = conv_ints(output_padding, op, "output_padding");
  a.groups = groups;
  a.rank = rank;
  a.transposed = transposed;
  return a;
}
}  // namespace detail

namespace detail {
/// The arguments im2col and col2im share: 2 values each (one value is repeated).
struct WindowArgs {
  int64_t k[2] = {1, 1}, d[2] = {1, 1}, p[2] = {0, 0}, s[2] = {1, 1};  ///< kernel, dilation, padding, stride
  int64_t out[2] = {0, 0};  ///< col2im's output_size
  /// `l` (1 or 2 values) into `dst`. **Errors:** ValueError naming `op` and `what` otherwise.
  static void read(const std::vector<int64_t>& l, int64_t* dst, std::string_view op, std::string_view what) {
    if (l.size() != 1 && l.size() != 2)
      throw ValueError(std::string(op) + ": " + std::string(what) + " must have 2 values, got " + std::to_string(l.size()));
    dst[0] = l[0];
    dst[1] = l.size() == 2 ? l[1] : l[0];
  }
  /// Sliding-window positions per spatial dim of an `h x w` input. **Errors:** ValueError for a
  /// non-positive kernel, dilation or stride or a negative padding; ShapeError when the window
  /// does not fit (naming `op` and `desc`).
  void blocks(int64_t h, int64_t w, int64_t* nb, std::string_view op, const std::string& desc) const {
    const int64_t in[2] = {h, w};
    for (int j = 0; j < 2; ++j) {
      if (k[j] <= 0 || d[j] <= 0 || s[j] <= 0 || p[j] < 0)
        throw ValueError(std::string(op) + ": kernel_size, dilation and stride must be positive and padding "
                         "non-negative, got kernel_size " + conv_ints_str(k, 2) + ", dilation " + conv_ints_str(d, 2) +
                         ", padding " + conv_ints_str(p, 2) + ", stride " + conv_ints_str(s, 2));
      nb[j] = (in[j] + 2 * p[j] - d[j] * (k[j] - 1) - 1) / s[j] + 1;
      if (in[j] + 2 * p[j] - d[j] * (k[j] - 1) - 1 < 0 || nb[j] <= 0)
        throw ShapeError(std::string(op) + ": the " + conv_ints_str(k, 2) + " window (dilation " + conv_ints_str(d, 2) +
                         ", padding " + conv_ints_str(p, 2) + ") does not fit the spatial size [" + std::to_string(h) +
                         ", " + std::to_string(w) + "] (operands " + desc + ")");
    }
  }
  /// The element of `t` at `idx` (one index per dim, in range).
  template <element T>
  static T& elem(const Tensor<T>& t, std::initializer_list<int64_t> idx) {
    int64_t off = 0, d = 0;
    for (int64_t i : idx) off += i * t.stride(static_cast<int>(d++));
    return t.data_ptr()[off];
  }
  /// The one-hot weight `[C·kh·kw, 1, kh, kw]` that picks window element `k` into channel
  /// `c·kh·kw + k`: im2col is the grouped convolution with it, col2im the transposed one.
  template <class B>
  auto one_hot_weight(B& b, int64_t C, ScalarType t) const {
    const int64_t K = k[0] * k[1];
    std::vector<double> w(static_cast<size_t>(C * K * K), 0.0);
    for (int64_t c = 0; c < C; ++c)
      for (int64_t e = 0; e < K; ++e) w[static_cast<size_t>((c * K + e) * K + e)] = 1.0;
    return b.constant_data(t, {C * K, 1, k[0], k[1]}, w);
  }
  /// The equivalent grouped convolution's arguments (`transposed` for col2im, with the
  /// output_padding `op` that makes its output `out`).
  ConvArgs conv(int64_t C, bool transposed, const int64_t* op = nullptr) const {
    ConvArgs a;
    a.rank = 2;
    a.groups = C;
    a.transposed = transposed;
    for (int j = 0; j < 2; ++j) {
      a.stride.v[j] = s[j];
      a.padding.v[j] = p[j];
      a.dilation.v[j] = d[j];
      a.output_padding.v[j] = op ? op[j] : 0;
    }
    a.stride.n = a.padding.n = a.dilation.n = a.output_padding.n = 2;
    return a;
  }
};
}  // namespace detail

/// Sliding local blocks of a batched image as columns (torch.nn.functional.unfold, which traces
/// to aten::im2col): `out[n, (c·kh + i)·kw + j, l] = x[n, c, oh·sh − ph + i·dh, ow·sw − pw + j·dw]`
/// (0 outside the image) with `l = oh · OW + ow`.
///
/// **Shapes:** `self: [N, C, H, W]` or unbatched `[C, H, W]` → `[N, C·kh·kw, OH·OW]` (or
/// `[C·kh·kw, OH·OW]`), `O = (S + 2p − d (k − 1) − 1) / s + 1` per dim. Each argument: 1 or 2 values.
/// **Dtypes:** float16, bfloat16, float32, float64 (the result's). The values are copied, not
/// computed: every dtype is exact.
/// **Errors:** TypeError for another dtype; ShapeError for another rank or a window that does
/// not fit; ValueError for a non-positive kernel, dilation or stride, a negative padding or an
/// argument of another length (every message names the op and the operand).
/// **Source:** torch.nn.functional.unfold (aten/src/ATen/native/Im2Col.cpp). **Lowering:** the
/// grouped convolution with a one-hot `[C·kh·kw, 1, kh, kw]` weight, reshaped.
struct Im2colOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "im2col", aten = "aten::im2col";
  static constexpr std::string_view schema =
      "aten::im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::floating();
  /// Non-tensor arguments.
  using Args = detail::WindowArgs;
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) {
    Args a;
    Args::read(r.to_ints("kernel_size"), a.k, aten, "kernel_size");
    Args::read(r.to_ints("dilation"), a.d, aten, "dilation");
    Args::read(r.to_ints("padding"), a.p, aten, "padding");
    Args::read(r.to_ints("stride"), a.s, aten, "stride");
    return a;
  }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    const TensorMeta& x = in[0];
    if (!is_floating(x.dtype)) throw TypeError("aten::im2col: expected a floating point input (operands " + describe(in) + ")");
    if (x.dim() != 3 && x.dim() != 4)
      throw ShapeError("aten::im2col: expected a 3-D (unbatched) or 4-D (batched) input (operands " + describe(in) + ")");
    const int o = x.dim() - 3;
    int64_t nb[2];
    a.blocks(x.sizes[o + 1], x.sizes[o + 2], nb, aten, describe(in));
    Dims out = o ? Dims{x.sizes[0], x.sizes[1] * a.k[0] * a.k[1], nb[0] * nb[1]}
                 : Dims{x.sizes[0] * a.k[0] * a.k[1], nb[0] * nb[1]};
    return TensorMeta{x.dtype, out, Device{}, true};
  }
  /// CPU kernel: one copy per (block element, window position).
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    const Tensor<T> x = in[0].dim() == 3 ? in[0].unsqueeze(0) : in[0];
    Tensor<T> o = out.dim() == 2 ? out.unsqueeze(0) : out;
    const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
    int64_t nb[2];
    a.blocks(H, W, nb, aten, "");
    const int64_t K = a.k[0] * a.k[1];
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t i = 0; i < a.k[0]; ++i)
          for (int64_t j = 0; j < a.k[1]; ++j) {
            const int64_t row = c * K + i * a.k[1] + j;
            for (int64_t oh = 0; oh < nb[0]; ++oh) {
              const int64_t h = oh * a.s[0] - a.p[0] + i * a.d[0];
              for (int64_t ow = 0; ow < nb[1]; ++ow) {
                const int64_t w = ow * a.s[1] - a.p[1] + j * a.d[1];
                const bool inside = h >= 0 && h < H && w >= 0 && w < W;
                Args::elem(o, {n, row, oh * nb[1] + ow}) = inside ? Args::elem(x, {n, c, h, w}) : T(0);
              }
            }
          }
  }
  /// StableHLO: Args::one_hot_weight's grouped convolution, reshaped to columns.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    const bool batched = in[0].dims.size() == 4;
    const int64_t C = in[0].dims[batched ? 1 : 0];
    const V w = a.one_hot_weight(b, C, in[0].dtype);
    const V ops[2] = {in[0], w};
    return b.reshape(detail::conv_lower(b, std::span<const V>(ops, 2), a.conv(C, false), aten), std::vector<int64_t>(out.begin(), out.end()));
  }
};

/// Columns summed back into a batched image (torch.nn.functional.fold, which traces to
/// aten::col2im): the adjoint of Im2colOp, `out[n, c, h, w] = Σ self[n, (c·kh + i)·kw + j, l]`
/// over the blocks `l` and window elements `(i, j)` that cover `(h, w)`.
///
/// **Shapes:** `self: [N, C·kh·kw, L]` or unbatched `[C·kh·kw, L]` with `L` the number of
/// blocks Im2colOp gives for `output_size` → `[N, C, H, W]` (or `[C, H, W]`), `[H, W] = output_size`.
/// **Dtypes:** float16, bfloat16, float32, float64; the sums accumulate in float32 (float64 for
/// float64) and round once.
/// **Errors:** TypeError for another dtype; ShapeError for another rank, a channel count not
/// divisible by kh·kw or a block count that does not match; ValueError as Im2colOp's.
/// **Source:** torch.nn.functional.fold (aten/src/ATen/native/Col2Im.cpp). **Lowering:** the
/// transposed grouped convolution with Im2colOp's one-hot weight (sums may round in another order).
struct Col2imOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "col2im", aten = "aten::col2im";
  static constexpr std::string_view schema =
      "aten::col2im(Tensor self, int[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding, "
      "int[2] stride) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::floating();
  /// Non-tensor arguments.
  using Args = detail::WindowArgs;
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) {
    Args a;
    Args::read(r.to_ints("output_size"), a.out, aten, "output_size");
    Args::read(r.to_ints("kernel_size"), a.k, aten, "kernel_size");
    Args::read(r.to_ints("dilation"), a.d, aten, "dilation");
    Args::read(r.to_ints("padding"), a.p, aten, "padding");
    Args::read(r.to_ints("stride"), a.s, aten, "stride");
    return a;
  }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    const TensorMeta& x = in[0];
    if (!is_floating(x.dtype)) throw TypeError("aten::col2im: expected a floating point input (operands " + describe(in) + ")");
    if (x.dim() != 2 && x.dim() != 3)
      throw ShapeError("aten::col2im: expected a 2-D (unbatched) or 3-D (batched) input (operands " + describe(in) + ")");
    const int o = x.dim() - 2;
    const int64_t K = a.k[0] * a.k[1];
    int64_t nb[2];
    a.blocks(a.out[0], a.out[1], nb, aten, describe(in));
    if (K <= 0 || x.sizes[o] % K != 0)
      throw ShapeError("aten::col2im: expected the input's size at dim " + std::to_string(o) +
                       " to be divisible by the product of kernel_size " + detail::conv_ints_str(a.k, 2) + " (operands " +
                       describe(in) + ")");
    if (x.sizes[o + 1] != nb[0] * nb[1])
      throw ShapeError("aten::col2im: given output_size " + detail::conv_ints_str(a.out, 2) + ", kernel_size " +
                       detail::conv_ints_str(a.k, 2) + ", dilation " + detail::conv_ints_str(a.d, 2) + ", padding " +
                       detail::conv_ints_str(a.p, 2) + ", stride " + detail::conv_ints_str(a.s, 2) + ", expected " +
                       std::to_string(nb[0] * nb[1]) + " blocks at dim " + std::to_string(o + 1) + " (operands " +
                       describe(in) + ")");
    const int64_t C = x.sizes[o] / K;
    Dims out = o ? Dims{x.sizes[0], C, a.out[0], a.out[1]} : Dims{C, a.out[0], a.out[1]};
    return TensorMeta{x.dtype, out, Device{}, true};
  }
  /// CPU kernel: the sums accumulated per output element in opmath, written once.
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    const Tensor<T> x = in[0].dim() == 2 ? in[0].unsqueeze(0) : in[0];
    Tensor<T> o = out.dim() == 3 ? out.unsqueeze(0) : out;
    const int64_t N = o.size(0), C = o.size(1), H = o.size(2), W = o.size(3);
    int64_t nb[2];
    a.blocks(H, W, nb, aten, "");
    const int64_t K = a.k[0] * a.k[1];
    using Acc = opmath_t<T>;
    std::vector<Acc> acc(static_cast<size_t>(H * W));
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c) {
        std::fill(acc.begin(), acc.end(), Acc(0));
        for (int64_t i = 0; i < a.k[0]; ++i)
          for (int64_t j = 0; j < a.k[1]; ++j) {
            const int64_t row = c * K + i * a.k[1] + j;
            for (int64_t oh = 0; oh < nb[0]; ++oh) {
              const int64_t h = oh * a.s[0] - a.p[0] + i * a.d[0];
              if (h < 0 || h >= H) continue;
              for (int64_t ow = 0; ow < nb[1]; ++ow) {
                const int64_t w = ow * a.s[1] - a.p[1] + j * a.d[1];
                if (w >= 0 && w < W)
                  acc[static_cast<size_t>(h * W + w)] += static_cast<Acc>(Args::elem(x, {n, row, oh * nb[1] + ow}));
              }
            }
          }
        for (int64_t h = 0; h < H; ++h)
          for (int64_t w = 0; w < W; ++w) Args::elem(o, {n, c, h, w}) = static_cast<T>(acc[static_cast<size_t>(h * W + w)]);
      }
  }
  /// StableHLO: the transposed grouped convolution with Im2colOp's one-hot weight.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims&) {
    const bool batched = in[0].dims.size() == 3;
    const int64_t K = a.k[0] * a.k[1], C = in[0].dims[batched ? 1 : 0] / K;
    int64_t nb[2], op[2];
    a.blocks(a.out[0], a.out[1], nb, aten, "");
    for (int j = 0; j < 2; ++j) op[j] = a.out[j] - ((nb[j] - 1) * a.s[j] - 2 * a.p[j] + a.d[j] * (a.k[j] - 1) + 1);
    std::vector<int64_t> grid = in[0].dims;
    grid.pop_back();
    grid.push_back(nb[0]);
    grid.push_back(nb[1]);
    const V ops[2] = {b.reshape(in[0], grid), a.one_hot_weight(b, C, in[0].dtype)};
    return detail::conv_lower(b, std::span<const V>(ops, 2), a.conv(C, true, op), aten);
  }
};

// Each op's entry point, compiled once in TORCHTPU_SEPARATE_OPS programs (ops/library.hpp).
TORCHTPU_LIBRARY_OP(ConvolutionOp);
TORCHTPU_LIBRARY_OP(ConvolutionModeOp);
TORCHTPU_LIBRARY_OP(Im2colOp);
TORCHTPU_LIBRARY_OP(Col2imOp);
TORCHTPU_LIBRARY_OP(Conv1dOp);
TORCHTPU_LIBRARY_OP(Conv2dOp);
TORCHTPU_LIBRARY_OP(Conv3dOp);
TORCHTPU_LIBRARY_OP(ConvTranspose1dOp);
TORCHTPU_LIBRARY_OP(ConvTranspose2dOp);
TORCHTPU_LIBRARY_OP(ConvTranspose3dOp);

}  // namespace ops

// The front-end functions (torch.nn.functional's argument order; `bias` undefined: none;
// list arguments: one value or one per spatial dim). See ops::ConvolutionOp for shapes,
// dtypes and errors.

/// 1-D convolution of `x: [N, C, L]` (or `[C, L]`) with `weight: [OC, C / groups, K]`.
template <element T, int Rank>
Tensor<T> conv1d(const Tensor<T, Rank>& x, const Tensor<T>& weight, const Tensor<T>& bias = {},
                 const std::vector<int64_t>& stride = {1}, const std::vector<int64_t>& padding = {0},
                 const std::vector<int64_t>& dilation = {1}, int64_t groups = 1) {
  return ops::detail::conv_call<ops::Conv1dOp>(Tensor<T>(x), weight, bias,
                                               ops::detail::conv_front("aten::conv1d", stride, padding, dilation, groups, 1));
}
/// Run-time typed `conv1d`.
template <std::same_as<AnyTensor> A>
A conv1d(const A& x, const A& weight, const A& bias = {}, const std::vector<int64_t>& stride = {1},
         const std::vector<int64_t>& padding = {0}, const std::vector<int64_t>& dilation = {1}, int64_t groups = 1) {
  return ops::detail::conv_call<ops::Conv1dOp>(x, weight, bias,
                                               ops::detail::conv_front("aten::conv1d", stride, padding, dilation, groups, 1));
}

/// 2-D convolution of `x: [N, C, H, W]` (or `[C, H, W]`) with `weight: [OC, C / groups, KH, KW]`.
/// **Example:** tests/ops/test_conv.cpp, block `conv2d`.
template <element T, int Rank>
Tensor<T> conv2d(const Tensor<T, Rank>& x, const Tensor<T>& weight, const Tensor<T>& bias = {},
                 const std::vector<int64_t>& stride = {1}, const std::vector<int64_t>& padding = {0},
                 const std::vector<int64_t>& dilation = {1}, int64_t groups = 1) {
  return ops::detail::conv_call<ops::Conv2dOp>(Tensor<T>(x), weight, bias,
                                               ops::detail::conv_front("aten::conv2d", stride, padding, dilation, groups, 2));
}
/// Run-time typed `conv2d`.
template <std::same_as<AnyTensor> A>
A conv2d(const A& x, const A& weight, const A& bias = {}, const std::vector<int64_t>& stride = {1},
         const std::vector<int64_t>& padding = {0}, const std::vector<int64_t>& dilation = {1}, int64_t groups = 1) {
  return ops::detail::conv_call<ops::Conv2dOp>(x, weight, bias,
                                               ops::detail::conv_front("aten::conv2d", stride, padding, dilation, groups, 2));
}

/// 3-D convolution of `x: [N, C, D, H, W]` (or unbatched) with `weight: [OC, C / groups, KD, KH, KW]`.
template <element T, int Rank>
Tensor<T> conv3d(const Tensor<T, Rank>& x, const Tensor<T>& weight, const Tensor<T>& bias = {},
                 const std::vector<int64_t>& stride = {1}, const std::vector<int64_t>& padding = {0},
                 const std::vector<int64_t>& dilation = {1}, int64_t groups = 1) {
  return ops::detail::conv_call<ops::Conv3dOp>(Tensor<T>(x), weight, bias,
                                               ops::detail::conv_front("aten::conv3d", stride, padding, dilation, groups, 3));
}
/// Run-time typed `conv3d`.
template <std::same_as<AnyTensor> A>
A conv3d(const A& x, const A& weight, const A& bias = {}, const std::vector<int64_t>& stride = {1},
         const std::vector<int64_t>& padding = {0}, const std::vector<int64_t>& dilation = {1}, int64_t groups = 1) {
  return ops::detail::conv_call<ops::Conv3dOp>(x, weight, bias,
                                               ops::detail::conv_front("aten::conv3d", stride, padding, dilation, groups, 3));
}

/// 1-D transposed convolution (torch.nn.functional.conv_transpose1d's argument order) of
/// `x: [N, C, L]` (or `[C, L]`) with `weight: [C, OC / groups, K]`. See ops::ConvTranspose1dOp.
template <element T, int Rank>
Tensor<T> conv_transpose1d(const Tensor<T, Rank>& x, const Tensor<T>& weight, const Tensor<T>& bias = {},
                           const std::vector<int64_t>& stride = {1}, const std::vector<int64_t>& padding = {0},
                           const std::vector<int64_t>& output_padding = {0}, int64_t groups = 1,
                           const std::vector<int64_t>& dilation = {1}) {
  return ops::detail::conv_call<ops::ConvTranspose1dOp>(
      Tensor<T>(x), weight, bias,
      ops::detail::conv_front("aten::conv_transpose1d", stride, padding, dilation, groups, 1, true, output_padding));
}
/// Run-time typed `conv_transpose1d`.
template <std::same_as<AnyTensor> A>
A conv_transpose1d(const A& x, const A& weight, const A& bias = {}, const std::vector<int64_t>& stride = {1},
                   const std::vector<int64_t>& padding = {0}, const std::vector<int64_t>& output_padding = {0},
                   int64_t groups = 1, const std::vector<int64_t>& dilation = {1}) {
  return ops::detail::conv_call<ops::ConvTranspose1dOp>(
      x, weight, bias, ops::detail::conv_front("aten::conv_transpose1d", stride, padding, dilation, groups, 1, true, output_padding));
}

/// 2-D transposed convolution (torch.nn.functional.conv_transpose2d's argument order) of
/// `x: [N, C, H, W]` (or `[C, H, W]`) with `weight: [C, OC / groups, KH, KW]`. See
/// ops::ConvTranspose2dOp.
template <element T, int Rank>
Tensor<T> conv_transpose2d(const Tensor<T, Rank>& x, const Tensor<T>& weight, const Tensor<T>& bias = {},
                           const std::vector<int64_t>& stride = {1}, const std::vector<int64_t>& padding = {0},
                           const std::vector<int64_t>& output_padding = {0}, int64_t groups = 1,
                           const std::vector<int64_t>& dilation = {1}) {
  return ops::detail::conv_call<ops::ConvTranspose2dOp>(
      Tensor<T>(x), weight, bias,
      ops::detail::conv_front("aten::conv_transpose2d", stride, padding, dilation, groups, 2, true, output_padding));
}
/// Run-time typed `conv_transpose2d`.
template <std::same_as<AnyTensor> A>
A conv_transpose2d(const A& x, const A& weight, const A& bias = {}, const std::vector<int64_t>& stride = {1},
                   const std::vector<int64_t>& padding = {0}, const std::vector<int64_t>& output_padding = {0},
                   int64_t groups = 1, const std::vector<int64_t>& dilation = {1}) {
  return ops::detail::conv_call<ops::ConvTranspose2dOp>(
      x, weight, bias, ops::detail::conv_front("aten::conv_transpose2d", stride, padding, dilation, groups, 2, true, output_padding));
}

/// 3-D transposed convolution (torch.nn.functional.conv_transpose3d's argument order) of
/// `x: [N, C, D, H, W]` (or unbatched) with `weight: [C, OC / groups, KD, KH, KW]`. See
/// ops::ConvTranspose3dOp.
template <element T, int Rank>
Tensor<T> conv_transpose3d(const Tensor<T, Rank>& x, const Tensor<T>& weight, const Tensor<T>& bias = {},
                           const std::vector<int64_t>& stride = {1}, const std::vector<int64_t>& padding = {0},
                           const std::vector<int64_t>& output_padding = {0}, int64_t groups = 1,
                           const std::vector<int64_t>& dilation = {1}) {
  return ops::detail::conv_call<ops::ConvTranspose3dOp>(
      Tensor<T>(x), weight, bias,
      ops::detail::conv_front("aten::conv_transpose3d", stride, padding, dilation, groups, 3, true, output_padding));
}
/// Run-time typed `conv_transpose3d`.
template <std::same_as<AnyTensor> A>
A conv_transpose3d(const A& x, const A& weight, const A& bias = {}, const std::vector<int64_t>& stride = {1},
                   const std::vector<int64_t>& padding = {0}, const std::vector<int64_t>& output_padding = {0},
                   int64_t groups = 1, const std::vector<int64_t>& dilation = {1}) {
  return ops::detail::conv_call<ops::ConvTranspose3dOp>(
      x, weight, bias, ops::detail::conv_front("aten::conv_transpose3d", stride, padding, dilation, groups, 3, true, output_padding));
}

}  // namespace torchtpu
