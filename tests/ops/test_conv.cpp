// tests/ops/test_conv.cpp — the convolution and pooling family of the operator library
// (ops/conv.hpp, ops/pool.hpp) on the cpu, every floating dtype: aten::_convolution (1-, 2-,
// 3-D, grouped, strided, dilated, depthwise, 1x1, unbatched, transposed), conv1d/2d/3d (with
// 'same' / 'valid' padding), conv_transpose1d/2d/3d, max_pool2d, avg_pool2d, adaptive_avg_pool2d
// (the other poolings: tests/ops/test_pool.cpp).
// References: float64 loops written from the definitions in this file (the transposed
// convolution as a gather: y[o] = sum over k with (o + p - k d) divisible by s), and torch
// 1.13 values pasted as literals (produced by /usr/bin/python3 with torch.nn.functional on
// the inputs `sinus` builds, `torch.sin(torch.arange(n, dtype=torch.float64) * f) * a` as
// float32, printed with `[round(v, 6) for v in t.flatten().tolist()]`; the snippet is above
// each literal). Plus the fused epilogue entry, empty batches, NaN, and errors naming the op
// and the operands.
#include <catch2/catch.hpp>  // TEMPLATE_TEST_CASE, CHECK, CHECK_THROWS_AS

#include <algorithm>  // std::max, std::min
#include <cmath>      // std::sin, std::fabs, std::isnan
#include <limits>     // std::numeric_limits
#include <optional>   // std::optional
#include <string>     // std::string
#include <type_traits>  // std::is_same_v
#include <vector>     // std::vector

#include <torchtpu/core/factories.hpp>  // from_data
#include <torchtpu/ops/all.hpp>         // ops::call_by_name, ops::Arg
#include <torchtpu/ops/conv.hpp>        // conv1d, conv2d, conv3d, conv_transpose1d/2d/3d
#include <torchtpu/ops/operators.hpp>   // - (test inputs)
#include <torchtpu/ops/pool.hpp>        // max_pool2d, avg_pool2d, adaptive_avg_pool2d
#include <torchtpu/ops/unary.hpp>       // relu (the epilogue test)

#include "testing.hpp"  // optest: vals, check_near, input, per_dtype

using namespace torchtpu;

using optest::check_near;
using optest::per_dtype;
using optest::sinus;
using optest::vals;

namespace {

using V = std::vector<int64_t>;

/// Relative and absolute tolerance of a dtype-T result against a float64 reference computed
/// from the same T inputs (rounded once; float32 accumulation for the 16-bit types and float32).
template <class T>
double tol() { return per_dtype<T>(1e-12, 1e-5, 2e-3, 1.6e-2); }

/// One convolution: batched shapes (`x: [N, C, S...]`), per-dim parameters (one per spatial dim).
struct ConvCase {
  Dims x, w;
  bool bias;
  V s, p, d, op;
  int64_t groups;
  bool transposed;
  bool unbatched = false;  ///< pass `x` without its batch dim (N must be 1)
  /// float32 may run Winograd (ops/conv.hpp winograd_tile): checked against the sum of the
  /// terms' magnitudes, as its transforms' error scales with it
  bool winograd = false;
};

/// Reference: the convolution of `c` on `x`, `w`, `b` in float64; its shape in `shape`; each
/// output's |bias| + sum of |x · w| in `*mag` when given.
std::vector<double> ref_conv(const ConvCase& c, const std::vector<double>& x, const std::vector<double>& w,
                             const std::vector<double>& b, Dims& shape, std::vector<double>* mag = nullptr) {
  const int nsp = c.x.size() - 2;
  const int64_t N = c.x[0], C = c.x[1], G = c.groups;
  const int64_t OC = c.transposed ? c.w[1] * G : c.w[0], Cg = C / G, OCg = OC / G;
  std::vector<int64_t> in(3, 1), k(3, 1), out(3, 1), s(3, 1), p(3, 0), d(3, 1);
  for (int j = 0; j < nsp; ++j) {
    in[j] = c.x[2 + j];
    k[j] = c.w[2 + j];
    s[j] = c.s[j];
    p[j] = c.p[j];
    d[j] = c.d[j];
    out[j] = c.transposed ? (in[j] - 1) * s[j] - 2 * p[j] + d[j] * (k[j] - 1) + c.op[j] + 1
                          : (in[j] + 2 * p[j] - d[j] * (k[j] - 1) - 1) / s[j] + 1;
  }
  std::vector<int64_t> sh{N, OC};
  for (int j = 0; j < nsp; ++j) sh.push_back(out[j]);
  shape = Dims(sh.begin(), sh.end());
  const int64_t isz = in[0] * in[1] * in[2], ksz = k[0] * k[1] * k[2], osz = out[0] * out[1] * out[2];
  std::vector<double> y(static_cast<size_t>(N * OC * osz));
  if (mag) mag->assign(y.size(), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oc = 0; oc < OC; ++oc) {
      const int64_t g = oc / OCg;
      for (int64_t o = 0; o < osz; ++o) {
        const int64_t oi[3] = {o / (out[1] * out[2]), (o / out[2]) % out[1], o % out[2]};
        double acc = b.empty() ? 0.0 : b[size_t(oc)], sum_abs = std::abs(acc);
        for (int64_t c2 = 0; c2 < Cg; ++c2)
          for (int64_t kk = 0; kk < ksz; ++kk) {
            const int64_t ki[3] = {kk / (k[1] * k[2]), (kk / k[2]) % k[1], kk % k[2]};
            int64_t ii[3];
            bool inside = true;
            for (int j = 0; j < 3; ++j) {
              if (!c.transposed) {
                ii[j] = oi[j] * s[j] - p[j] + ki[j] * d[j];
              } else {  // o = i s - p + k d  <=>  i = (o + p - k d) / s
                const int64_t t = oi[j] + p[j] - ki[j] * d[j];
                inside = inside && t % s[j] == 0;
                ii[j] = t / s[j];
              }
              inside = inside && ii[j] >= 0 && ii[j] < in[j];
            }
            if (!inside) continue;
            const int64_t ci = g * Cg + c2;
            const double xv = x[size_t((n * C + ci) * isz + (ii[0] * in[1] + ii[1]) * in[2] + ii[2])];
            const double wv = c.transposed ? w[size_t((ci * OCg + oc % OCg) * ksz + kk)] : w[size_t((oc * Cg + c2) * ksz + kk)];
            acc += xv * wv;
            sum_abs += std::abs(xv * wv);
          }
        y[size_t((n * OC + oc) * osz + o)] = acc;
        if (mag) (*mag)[size_t((n * OC + oc) * osz + o)] = sum_abs;
      }
    }
  return y;
}

/// Worst |got - want| / mag over the elements.
double worst_rel(const std::vector<double>& got, const std::vector<double>& want, const std::vector<double>& mag) {
  REQUIRE(got.size() == want.size());
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(got[i] - want[i]) / (mag[i] + 1e-30));
  return worst;
}

/// The `aten::_convolution` arguments of `c`.
std::vector<ops::Arg> conv_args(const ConvCase& c, const AnyTensor& x, const AnyTensor& w, const AnyTensor& b) {
  return {x, w, b.defined() ? ops::Arg(b) : ops::Arg(), c.s, c.p, c.d, c.transposed, c.op.empty() ? V(c.s.size(), 0) : c.op,
          c.groups, false, false, true, true};
}

/// Reference pooling output size (torch's pooling_output_shape).
int64_t ref_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  const int64_t num = in + 2 * p - d * (k - 1) - 1;
  int64_t o = (ceil_mode ? (num + s - 1) / s : num / s) + 1;
  if (ceil_mode && (o - 1) * s >= in + p) --o;
  return o;
}

/// Reference max (`max`) or average pooling of `x: [P, H, W]` in float64, as torch's loops
/// (avg: torch's divide_factor).
std::vector<double> ref_pool(const std::vector<double>& x, int64_t P, int64_t H, int64_t W, V k, V s, V p, V d, bool ceil_mode,
                             bool max, bool count_include_pad, int64_t div_override, int64_t& OH, int64_t& OW) {
  OH = ref_out(H, k[0], s[0], p[0], d[0], ceil_mode);
  OW = ref_out(W, k[1], s[1], p[1], d[1], ceil_mode);
  std::vector<double> y;
  for (int64_t pl = 0; pl < P; ++pl)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        if (max) {
          double m = -std::numeric_limits<double>::infinity();
          for (int64_t i = 0; i < k[0]; ++i)
            for (int64_t j = 0; j < k[1]; ++j) {
              const int64_t h = oh * s[0] - p[0] + i * d[0], w = ow * s[1] - p[1] + j * d[1];
              if (h < 0 || h >= H || w < 0 || w >= W) continue;
              const double v = x[size_t((pl * H + h) * W + w)];
              if (std::isnan(v) || v > m) m = v;
            }
          y.push_back(m);
        } else {
          int64_t hs = oh * s[0] - p[0], ws = ow * s[1] - p[1];
          int64_t he = std::min(hs + k[0], H + p[0]), we = std::min(ws + k[1], W + p[1]);
          const int64_t pool_size = (he - hs) * (we - ws);
          hs = std::max<int64_t>(hs, 0);
          ws = std::max<int64_t>(ws, 0);
          he = std::min(he, H);
          we = std::min(we, W);
          double sum = 0;
          for (int64_t h = hs; h < he; ++h)
            for (int64_t w = ws; w < we; ++w) sum += x[size_t((pl * H + h) * W + w)];
          const int64_t div = div_override ? div_override : count_include_pad ? pool_size : (he - hs) * (we - ws);
          y.push_back(sum / double(div));
        }
      }
  return y;
}

/// Reference adaptive average pooling of `x: [P, H, W]` to `[P, OH, OW]`.
std::vector<double> ref_adaptive(const std::vector<double>& x, int64_t P, int64_t H, int64_t W, int64_t OH, int64_t OW) {
  std::vector<double> y;
  for (int64_t pl = 0; pl < P; ++pl)
    for (int64_t i = 0; i < OH; ++i)
      for (int64_t j = 0; j < OW; ++j) {
        const int64_t h0 = (i * H) / OH, h1 = ((i + 1) * H + OH - 1) / OH;
        const int64_t w0 = (j * W) / OW, w1 = ((j + 1) * W + OW - 1) / OW;
        double sum = 0;
        for (int64_t h = h0; h < h1; ++h)
          for (int64_t w = w0; w < w1; ++w) sum += x[size_t((pl * H + h) * W + w)];
        y.push_back(sum / double((h1 - h0) * (w1 - w0)));
      }
  return y;
}

const std::vector<ConvCase> kCases = {
    {Dims{2, 3, 7, 6}, Dims{4, 3, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, {}, 1, false},          // dense, im2col
    {Dims{1, 6, 9, 8}, Dims{6, 2, 3, 2}, true, {2, 1}, {1, 2}, {2, 1}, {}, 3, false},          // grouped, strided, dilated
    {Dims{2, 4, 7, 7}, Dims{4, 1, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, {}, 4, false},          // depthwise
    {Dims{2, 4, 9, 8}, Dims{4, 1, 3, 3}, false, {2, 2}, {0, 0}, {1, 1}, {}, 4, false},         // depthwise, strided
    {Dims{2, 4, 9, 21}, Dims{4, 1, 3, 3}, true, {1, 3}, {1, 1}, {2, 1}, {}, 4, false},         // depthwise, stride 3
    {Dims{2, 5, 4, 4}, Dims{3, 5, 1, 1}, true, {1, 1}, {0, 0}, {1, 1}, {}, 1, false},          // 1x1, direct
    {Dims{2, 3, 11}, Dims{4, 3, 3}, true, {2}, {1}, {2}, {}, 1, false},                        // 1-D
    {Dims{1, 2, 4, 5, 4}, Dims{3, 2, 2, 3, 2}, true, {1, 2, 1}, {1, 0, 1}, {1, 1, 1}, {}, 1, false},  // 3-D
    {Dims{2, 4, 3, 4}, Dims{4, 3, 3, 2}, true, {2, 1}, {1, 0}, {1, 2}, {1, 0}, 2, true},       // transposed, grouped
    {Dims{1, 2, 5}, Dims{2, 3, 4}, false, {3}, {2}, {1}, {1}, 1, true},                        // transposed 1-D
    {Dims{1, 3, 6, 6}, Dims{2, 3, 2, 2}, true, {1, 1}, {0, 0}, {1, 1}, {}, 1, false, true},    // unbatched
    // implicit GEMM: K = 45 · 9 = 405 > one k panel (384), output rows of 10 cut across
    // 32-column panels, stride 2, a top padding (3) past the window (first output row all zero)
    {Dims{2, 45, 19, 21}, Dims{7, 45, 3, 3}, true, {2, 2}, {3, 1}, {1, 2}, {}, 1, false},
    // small output planes of two images: one GEMM over both images' positions
    // (Im2colArgs::plane) on the vector paths: 3x3 at 7x7, K = 1152, two groups of 64 channels;
    // one image's small plane as outᵀ = im2colᵀ · Wᵀ (fewer padded tile rows): a 1x1 stride-2
    // convolution to 7x7 without bias (transpose only)
    {Dims{2, 256, 7, 7}, Dims{128, 128, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, {}, 2, false},
    {Dims{1, 24, 13, 13}, Dims{64, 24, 1, 1}, false, {2, 2}, {0, 0}, {1, 1}, {}, 1, false},
    // the 3x3 7x7 grouped case of one image: outᵀ = im2colᵀ · Wᵀ, the product buffer reused per group
    {Dims{1, 256, 7, 7}, Dims{128, 128, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, {}, 2, false},
    // batches folded into one GEMM per 3 images (10x20 planes: 512 / 200 rounded up), 5 images:
    // a full chunk then a short one, two groups; and 3 images with stride, dilation and a
    // padding that reads across each image's border (never into the next image)
    {Dims{5, 6, 10, 20}, Dims{4, 3, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, {}, 2, false},
    {Dims{3, 4, 5, 7}, Dims{6, 4, 3, 2}, true, {2, 1}, {1, 0}, {1, 2}, {}, 1, false},
    // a large plane whose packed B (K = 432 over two k panels x 1600 columns) would not fit in
    // L2: packed slab by slab, 16 panels at a time and a short last block (fuse/gemm.hpp
    // sgemm_streamed_b), 20 output channels (a 12-row and an 8-row strip), bias in the epilogue;
    // dilated (1, 2), so not Winograd's
    {Dims{2, 48, 40, 40}, Dims{20, 48, 3, 3}, true, {1, 1}, {1, 1}, {1, 2}, {}, 1, false},    // one image's plane of at least 256 positions: the flat implicit GEMM (B copied from
    // zero-padded stride-phase blocks, the positions past each output row dropped); K = 405
    // over two k panels, 70 output channels, dilated (2, 1) (not Winograd's); then grouped,
    // stride 2, dilated (2, 1), a 5x3 window
    {Dims{1, 45, 23, 30}, Dims{70, 45, 3, 3}, true, {1, 1}, {1, 1}, {2, 1}, {}, 1, false},
    {Dims{1, 6, 40, 37}, Dims{8, 3, 5, 3}, true, {2, 2}, {2, 1}, {2, 1}, {}, 2, false},
    // Winograd (3x3, stride 1; ops/conv.hpp winograd_tile): a 23x30 output (the last tile row
    // and column clipped) over 12 channels, 150 outputs (channel vectors and a part); two
    // groups of 128 outputs with padding (2, 0) and 13x13 images; 130 images of 6x6 (F(4x4): 4
    // tiles each, a pass of 128 and a short pass of 2; 32 outputs: too few for F(2x2)); 8
    // channels in, 128 out, no bias, a 13x11 output (F(2x2) only: 12 tiles of 4x4 are too few).
    // Small enough for CI's ASan build (30 s for the whole file)
    {Dims{1, 12, 23, 30}, Dims{150, 12, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, {}, 1, false, false, true},
    {Dims{2, 16, 13, 13}, Dims{256, 8, 3, 3}, true, {1, 1}, {2, 0}, {1, 1}, {}, 2, false, false, true},
    {Dims{130, 8, 6, 6}, Dims{32, 8, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, {}, 1, false, false, true},
    {Dims{1, 8, 15, 13}, Dims{128, 8, 3, 3}, false, {1, 1}, {0, 0}, {1, 1}, {}, 1, false, false, true},
    // flat implicit GEMMs whose epilogue runs per finished block of flat positions, blocks that
    // end inside an output row (fuse/gemm.hpp epilogue_block): 38 rows of 47 flat positions
    // (45 outputs) in column blocks of 1024 (B packed whole); 58 rows of 72 (70 outputs), B
    // streamed in blocks of at most 512 (K 144 x 4176 columns). Dilated (2, 1): not Winograd's
    {Dims{1, 8, 40, 45}, Dims{16, 8, 3, 3}, true, {1, 1}, {1, 1}, {2, 1}, {}, 1, false},
    {Dims{1, 16, 60, 70}, Dims{8, 16, 3, 3}, true, {1, 1}, {1, 1}, {2, 1}, {}, 1, false},
};

}  // namespace

TEMPLATE_TEST_CASE("aten::_convolution against float64 references", "[ops][conv]", half, bfloat16, float, double) {
  using T = TestType;
  const double e = tol<T>();
  for (size_t ci = 0; ci < kCases.size(); ++ci) {
    const ConvCase& c = kCases[ci];
    INFO("case " << ci);
    const Tensor<T> x = sinus<T>(c.x, 0.37, 2.0), w = sinus<T>(c.w, 0.91, 1.0);
    const Tensor<T> b = c.bias ? sinus<T>(Dims{c.transposed ? c.w[1] * c.groups : c.w[0]}, 1.3, 0.5) : Tensor<T>();
    Dims shape;
    std::vector<double> mag;
    const std::vector<double> want = ref_conv(c, vals(x), vals(w), c.bias ? vals(b) : std::vector<double>{}, shape, &mag);
    const Tensor<T> xin = c.unbatched ? Tensor<T>(x.squeeze(0)) : x;
    const AnyTensor r = ops::call_by_name("aten::_convolution", conv_args(c, AnyTensor(xin), AnyTensor(w), c.bias ? AnyTensor(b) : AnyTensor()));
    CHECK(r.dtype() == dtype_of<T>());
    CHECK(r.sizes() == (c.unbatched ? Dims(shape.begin() + 1, shape.end()) : shape));
    if (c.winograd && std::is_same_v<T, float>) {
      // the default F(2x2, 3x3) (or the direct GEMM): within 4e-7 of the terms' magnitude
      CHECK(worst_rel(vals(r.template get<T>()), want, mag) < 4e-7);
    } else {
      check_near(vals(r.template get<T>()), want, e, 4 * e);
    }
  }
}

TEST_CASE("convolution: Winograd F(2x2, 3x3) and F(4x4, 3x3) against float64; set_conv_winograd", "[ops][conv][winograd]") {
  // Each Winograd case runs with Winograd off, then with each setting, checking which tile
  // ops/conv.hpp takes (so the test cannot pass through the direct GEMM unnoticed). Bounds over the sum of the
  // terms' magnitudes: F(2x2) 4e-7 (measured 1.3e-7, the direct GEMM's 1.2e-7), F(4x4) 5e-6
  // (measured up to 2.9e-6).
  struct Reset {
    ~Reset() { torchtpu::set_conv_winograd(2); }
  } reset;
  REQUIRE(torchtpu::conv_winograd() == 2);
  CHECK_THROWS_AS(torchtpu::set_conv_winograd(3), torchtpu::ValueError);
  CHECK(torchtpu::conv_winograd() == 2);
  for (size_t ci = 20; ci < 24; ++ci) {
    const ConvCase& c = kCases[ci];
    REQUIRE(c.winograd);
    INFO("case " << ci);
    const Tensor<float> x = sinus<float>(c.x, 0.37, 2.0), w = sinus<float>(c.w, 0.91, 1.0);
    const Tensor<float> b = c.bias ? sinus<float>(Dims{c.w[0]}, 1.3, 0.5) : Tensor<float>();
    Dims shape;
    std::vector<double> mag;
    const std::vector<double> want = ref_conv(c, vals(x), vals(w), c.bias ? vals(b) : std::vector<double>{}, shape, &mag);
    auto run = [&] {
      return vals(ops::call_by_name("aten::_convolution", conv_args(c, AnyTensor(x), AnyTensor(w), c.bias ? AnyTensor(b) : AnyTensor()))
                      .get<float>());
    };
    ops::detail::ConvGeom g;  // the geometry conv2d_fast sees
    g.N = c.x[0]; g.C = c.x[1]; g.OC = c.w[0]; g.G = c.groups; g.Cg = c.x[1] / c.groups; g.OCg = c.w[0] / c.groups;
    g.in[1] = c.x[2]; g.in[2] = c.x[3]; g.k[1] = g.k[2] = 3;
    g.out[1] = c.x[2] + 2 * c.p[0] - 2; g.out[2] = c.x[3] + 2 * c.p[1] - 2;
    torchtpu::set_conv_winograd(0);
    const std::vector<double> direct = run();
    check_near(direct, want, 1e-5, 4e-5);  // the direct GEMM's float32 accuracy
    for (int setting : {2, 4}) {
      INFO("setting " << setting);
      torchtpu::set_conv_winograd(setting);
      // setting 2: F(2x2) where it pays (case 22: 32 outputs, too few); 4: F(4x4) first
      // (case 23: 6 tiles of 4x4, too few: F(2x2))
      const int want_tile = !torchtpu::detail::cpu_has_vector_gemm() ? 0
                            : setting == 4                           ? (ci == 23 ? 2 : 4)
                                                                     : (ci == 22 ? 0 : 2);
      const int tile = torchtpu::detail::cpu_has_vector_gemm() ? ops::detail::winograd_tile(g, torchtpu::detail::sgemm_kernels()) : 0;
      CHECK(tile == want_tile);
      const std::vector<double> got = run();
      CHECK(worst_rel(got, want, mag) < (tile == 4 ? 5e-6 : 4e-7));
      double differ = 0;
      for (size_t i = 0; i < got.size(); ++i) differ = std::max(differ, std::fabs(got[i] - direct[i]));
      CHECK((differ > 0) == (tile != 0));  // another rounding exactly when Winograd ran
    }
  }
}

TEMPLATE_TEST_CASE("conv1d/2d/3d and conv_transpose1d/2d/3d front ends", "[ops][conv]", half, bfloat16, float, double) {
  using T = TestType;
  const double e = tol<T>();
  Dims shape;
  SECTION("conv2d, typed and AnyTensor, bias absent") {
    // example-begin conv2d
    const Tensor<T> x = sinus<T>(Dims{1, 6, 9, 8}), w = sinus<T>(Dims{6, 2, 3, 2}, 0.91, 1.0);
    const Tensor<T> y = conv2d(x, w, Tensor<T>(), {2, 1}, {1, 2}, {2, 1}, 3);  // stride, padding, dilation, groups
    // example-end conv2d
    const std::vector<double> want = ref_conv(kCases[1], vals(x), vals(w), {}, shape);
    CHECK(y.sizes() == shape);
    check_near(vals(y), want, e, 4 * e);
    check_near(vals(conv2d(AnyTensor(x), AnyTensor(w), AnyTensor(), {2, 1}, {1, 2}, {2, 1}, 3).template get<T>()), want, e, 4 * e);
  }
  SECTION("conv1d, conv3d, conv_transpose2d") {
    const ConvCase& c1 = kCases[6];
    const Tensor<T> x1 = sinus<T>(c1.x), w1 = sinus<T>(c1.w, 0.91, 1.0), b1 = sinus<T>(Dims{4}, 1.3, 0.5);
    check_near(vals(conv1d(x1, w1, b1, {2}, {1}, {2})), ref_conv(c1, vals(x1), vals(w1), vals(b1), shape), e, 4 * e);
    const ConvCase& c3 = kCases[7];
    const Tensor<T> x3 = sinus<T>(c3.x), w3 = sinus<T>(c3.w, 0.91, 1.0), b3 = sinus<T>(Dims{3}, 1.3, 0.5);
    check_near(vals(conv3d(x3, w3, b3, {1, 2, 1}, {1, 0, 1})), ref_conv(c3, vals(x3), vals(w3), vals(b3), shape), e, 4 * e);
    const ConvCase& ct = kCases[8];
    const Tensor<T> xt = sinus<T>(ct.x), wt = sinus<T>(ct.w, 0.91, 1.0), bt = sinus<T>(Dims{6}, 1.3, 0.5);
    const Tensor<T> yt = conv_transpose2d(xt, wt, bt, {2, 1}, {1, 0}, {1, 0}, 2, {1, 2});
    check_near(vals(yt), ref_conv(ct, vals(xt), vals(wt), vals(bt), shape), e, 4 * e);
    CHECK(yt.sizes() == shape);
  }
  SECTION("conv_transpose1d, conv_transpose3d: typed, AnyTensor, unbatched, by name") {
    const ConvCase c1{Dims{2, 4, 5}, Dims{4, 3, 3}, true, {2}, {1}, {2}, {1}, 2, true};  // grouped, dilated, output_padding
    const Tensor<T> x1 = sinus<T>(c1.x), w1 = sinus<T>(c1.w, 0.91, 1.0), b1 = sinus<T>(Dims{6}, 1.3, 0.5);
    const std::vector<double> want1 = ref_conv(c1, vals(x1), vals(w1), vals(b1), shape);
    const Tensor<T> y1 = conv_transpose1d(x1, w1, b1, {2}, {1}, {1}, 2, {2});
    CHECK(y1.sizes() == shape);
    check_near(vals(y1), want1, e, 4 * e);
    check_near(vals(conv_transpose1d(AnyTensor(x1), AnyTensor(w1), AnyTensor(b1), {2}, {1}, {1}, 2, {2}).template get<T>()), want1, e,
               4 * e);
    const std::vector<ops::Arg> a1 = {AnyTensor(x1), AnyTensor(w1), AnyTensor(b1), V{2}, V{1}, V{1}, int64_t(2), V{2}};
    check_near(vals(ops::call_by_name("aten::conv_transpose1d", a1).template get<T>()), want1, e, 4 * e);
    const ConvCase c3{Dims{1, 2, 3, 2, 3}, Dims{2, 2, 2, 3, 2}, false, {2, 1, 2}, {0, 1, 1}, {1, 1, 1}, {1, 0, 1}, 1, true};
    const Tensor<T> x3 = sinus<T>(c3.x), w3 = sinus<T>(c3.w, 0.91, 1.0);
    const std::vector<double> want3 = ref_conv(c3, vals(x3), vals(w3), {}, shape);
    const Tensor<T> y3 = conv_transpose3d(x3, w3, Tensor<T>(), {2, 1, 2}, {0, 1, 1}, {1, 0, 1});
    CHECK(y3.sizes() == shape);
    check_near(vals(y3), want3, e, 4 * e);
    const Tensor<T> u3 = conv_transpose3d(Tensor<T>(x3.squeeze(0)), w3, Tensor<T>(), {2, 1, 2}, {0, 1, 1}, {1, 0, 1});
    CHECK(u3.sizes() == Dims(shape.begin() + 1, shape.end()));
    check_near(vals(u3), want3, e, 4 * e);
    const std::vector<ops::Arg> a3 = {AnyTensor(x3), AnyTensor(w3), ops::Arg(), V{2, 1, 2}, V{0, 1, 1}, V{1, 0, 1}};
    check_near(vals(ops::call_by_name("aten::conv_transpose3d", a3).template get<T>()), want3, e, 4 * e);
    const ConvCase& ct = kCases[8];
    const Tensor<T> xt = sinus<T>(ct.x), wt = sinus<T>(ct.w, 0.91, 1.0), bt = sinus<T>(Dims{6}, 1.3, 0.5);
    const std::vector<ops::Arg> a2 = {AnyTensor(xt), AnyTensor(wt), AnyTensor(bt), V{2, 1}, V{1, 0}, V{1, 0}, int64_t(2), V{1, 2}};
    check_near(vals(ops::call_by_name("aten::conv_transpose2d", a2).template get<T>()), ref_conv(ct, vals(xt), vals(wt), vals(bt), shape),
               e, 4 * e);
  }
  SECTION("aten::conv2d with 'same' and 'valid' padding, aten::conv1d, aten::conv3d by name") {
    const Tensor<T> x = sinus<T>(Dims{2, 3, 7, 6}), w = sinus<T>(Dims{4, 3, 2, 3}, 0.91, 1.0);
    // 'same' (torch's _convolution_same): total padding d (k - 1) per dim, low = total / 2,
    // high = the rest. Rows: d 1, k 2: low 0, high 1; columns: d 2, k 3: low 2, high 2.
    // Reference: the input padded explicitly, then no padding.
    const int64_t lo_h = 0, hi_h = 1, lo_w = 2, hi_w = 2, PH = 7 + lo_h + hi_h, PW = 6 + lo_w + hi_w;
    const ConvCase same{Dims{2, 3, PH, PW}, Dims{4, 3, 2, 3}, false, {1, 1}, {0, 0}, {1, 2}, {}, 1, false};
    std::vector<double> xp(size_t(2 * 3 * PH * PW), 0.0);
    const std::vector<double> xv = vals(x);
    for (int64_t n = 0; n < 6; ++n)
      for (int64_t h = 0; h < 7; ++h)
        for (int64_t ww = 0; ww < 6; ++ww) xp[size_t((n * PH + h + lo_h) * PW + ww + lo_w)] = xv[size_t((n * 7 + h) * 6 + ww)];
    const std::vector<double> want = ref_conv(same, xp, vals(w), {}, shape);
    const std::vector<ops::Arg> args = {AnyTensor(x), AnyTensor(w), ops::Arg(), V{1, 1}, std::string("same"), V{1, 2}, int64_t(1)};
    const AnyTensor r = ops::call_by_name("aten::conv2d", args);
    CHECK(r.sizes() == Dims{2, 4, 7, 6});
    check_near(vals(r.template get<T>()), want, e, 4 * e);
    const std::vector<ops::Arg> valid = {AnyTensor(x), AnyTensor(w), ops::Arg(), V{1}, std::string("valid")};
    CHECK(ops::call_by_name("aten::conv2d", valid).sizes() == Dims{2, 4, 6, 4});
    const std::vector<ops::Arg> one = {AnyTensor(sinus<T>(Dims{1, 3, 7})), AnyTensor(sinus<T>(Dims{2, 3, 3}))};
    CHECK(ops::call_by_name("aten::conv1d", one).sizes() == Dims{1, 2, 5});
    const std::vector<ops::Arg> three = {AnyTensor(sinus<T>(Dims{3, 4, 4, 4})), AnyTensor(sinus<T>(Dims{2, 3, 3, 3, 3})),
                                         ops::Arg(), V{1}, V{1}};
    CHECK(ops::call_by_name("aten::conv3d", three).sizes() == Dims{2, 4, 4, 4});
  }
  SECTION("empty batch") {
    CHECK(conv2d(Tensor<T>::empty(Dims{0, 3, 5, 5}), sinus<T>(Dims{4, 3, 3, 3})).sizes() == Dims{0, 4, 3, 3});
    CHECK(max_pool2d(Tensor<T>::empty(Dims{0, 3, 5, 5}), {2}).sizes() == Dims{0, 3, 2, 2});
  }
}

TEST_CASE("convolution: torch 1.13 values", "[ops][conv]") {
  // x = inp(1, 2, 5, 5); w = inp(4, 1, 3, 3, f=0.91, a=1.0); b = inp(4, f=1.3, a=0.5)
  // F.conv2d(x, w, b, stride=2, padding=1, groups=2)
  const std::vector<double> grouped = {0.790805, -2.897225, -0.53278, 4.435898, 4.562152, -0.660513, -4.571239, -0.959951,
                                       1.211225, 2.735494, 1.613099, -2.664605, -0.737807, 4.225369, 5.776312, -0.415706,
                                       -3.59326, -0.666344, 3.378609, -0.893066, -2.057796, 3.102205, 7.193105, 3.626385,
                                       -5.115791, -4.347726, -0.080161, 0.131929, 2.534743, -1.126135, -3.980636, -2.083965,
                                       2.701025, 2.510457, -1.559121, -2.049696};
  const Tensor<float> y = conv2d(sinus<float>(Dims{1, 2, 5, 5}), sinus<float>(Dims{4, 1, 3, 3}, 0.91, 1.0),
                                 sinus<float>(Dims{4}, 1.3, 0.5), {2}, {1}, {1}, 2);
  CHECK(y.sizes() == Dims{1, 4, 3, 3});
  check_near(vals(y), grouped, 0, 2e-5);
  // x = inp(1, 2, 2, 3); w = inp(2, 2, 2, 2, f=0.53, a=1.0); b = inp(4, f=1.1, a=0.5)
  // F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1, groups=2)
  const std::vector<double> transposed = {
      0.0, 0.630914, 0.723098, 1.176437, 1.348327, 0.905611, 0.0, 1.006902, 0.0, 0.971913, 1.791067, 1.737524,
      1.991395, 1.677147, 1.922196, 0.445604, 0.417833, 0.056295, 0.393821, -0.280322, 1.291198, 2.144458,
      1.385776, 2.085425, 1.353106, -0.518688, 0.369124, -0.626543, 0.371782, -0.589287, -0.293275, -0.468042,
      -0.054638, 0.103639, 0.246107, 0.778216, 1.347869, 1.462162, 1.83021, 2.002925, 0.568255, 1.286179,
      0.868206, 1.736986, 1.105363, 1.50692, 0.872057, 0.964388, 0.248837, 0.280656, -0.292484, -0.160191,
      -0.683155, -0.201758, -0.992039, -0.451737, -1.040312, -1.133664, -1.531761, -1.67283};
  const Tensor<float> t = conv_transpose2d(sinus<float>(Dims{1, 2, 2, 3}), sinus<float>(Dims{2, 2, 2, 2}, 0.53, 1.0),
                                           sinus<float>(Dims{4}, 1.1, 0.5), {2}, {1}, {1}, 2);
  CHECK(t.sizes() == Dims{1, 4, 3, 5});
  check_near(vals(t), transposed, 0, 2e-5);
  // F.conv_transpose1d(inp(1, 4, 5), inp(4, 3, 3, f=0.53, a=1.0), inp(6, f=1.1, a=0.5), stride=2, padding=1,
  //                    output_padding=1, groups=2)
  const std::vector<double> t1 = {
      -1.600076, -2.432241, -0.960294, -1.112958, -0.19054,  0.356958,  0.605002,  1.778562,  1.31866,   1.901531,
      1.541945,  3.035284,  1.970965,  3.661193,  2.193535,  3.851887,  2.17953,   3.581556,  1.930847,  1.045912,
      1.962219,  2.737033,  1.30596,   1.393712,  0.527659,  -0.083528, -0.267346, -1.49475,  -0.971453, -1.520338,
      -0.46289,  -0.060649, 0.342004,  1.398102,  1.089934,  2.65695,   1.679672,  3.545518,  2.031399,  2.019023,
      1.243069,  2.907226,  1.254467,  2.693763,  1.031681,  2.051315,  0.604865,  1.066833,  0.031786,  -1.109789,
      -0.034766, -0.500919, -0.840098, -1.951472, -1.579472, -3.185647, -2.152817, -4.036406, -2.482536, -2.426317};
  const Tensor<float> y1 = conv_transpose1d(sinus<float>(Dims{1, 4, 5}), sinus<float>(Dims{4, 3, 3}, 0.53, 1.0),
                                            sinus<float>(Dims{6}, 1.1, 0.5), {2}, {1}, {1}, 2);
  CHECK(y1.sizes() == Dims{1, 6, 10});
  check_near(vals(y1), t1, 0, 2e-5);
  // F.conv_transpose3d(inp(1, 2, 2, 3, 2), inp(2, 2, 2, 2, 2, f=0.53, a=1.0), None, stride=(2, 1, 1), padding=(0, 1, 0),
  //                    output_padding=(1, 0, 0))
  const std::vector<double> t3 = {
      -1.225287, 0.895802,  2.286345,  0.805917,  4.870199,  3.573402,  4.314172,  7.4161,    2.514287,  3.708221,
      4.18673,   0.421659,  2.761736,  4.430334,  0.844626,  1.663335,  0.246148,  -1.743885, -1.991078, -6.007147,
      -3.215319, -4.103335, -7.639616, -2.857301, 0.0,       0.0,       0.0,       0.0,       0.0,       0.0,
      -3.278779, -8.638331, -4.911302, -4.677361, -9.241213, -4.013621, -0.891073, 1.602459,  2.613193,  1.17502,
      5.461248,  3.768627,  -0.683018, 1.841226,  2.51222,   2.620614,  7.729735,  4.726954,  2.70416,   4.084877,
      0.592521,  1.367372,  -0.430354, -2.077717, 0.0,       0.0,       0.0,       0.0,       0.0,       0.0};
  const Tensor<float> y3 = conv_transpose3d(sinus<float>(Dims{1, 2, 2, 3, 2}), sinus<float>(Dims{2, 2, 2, 2, 2}, 0.53, 1.0),
                                            Tensor<float>(), {2, 1, 1}, {0, 1, 0}, {1, 0, 0});
  CHECK(y3.sizes() == Dims{1, 2, 5, 2, 3});
  check_near(vals(y3), t3, 0, 2e-5);
  // x = inp(1, 3, 7); w = inp(2, 3, 3, f=0.71, a=1.0); F.conv1d(x, w, None, padding='same', dilation=2)
  const std::vector<double> same = {3.922796, 4.057211, 6.136647, 4.244806, 1.778451, -1.543292, -3.310209,
                                    3.741121, 4.153006, 6.50665, 4.931292, 2.688505, -0.895781, -2.642467};
  const std::vector<ops::Arg> args = {AnyTensor(sinus<float>(Dims{1, 3, 7})), AnyTensor(sinus<float>(Dims{2, 3, 3}, 0.71, 1.0)),
                                      ops::Arg(), V{1}, std::string("same"), V{2}, int64_t(1)};
  check_near(vals(ops::call_by_name("aten::conv1d", args).get<float>()), same, 0, 2e-5);
}

TEMPLATE_TEST_CASE("pooling against float64 references", "[ops][pool]", half, bfloat16, float, double) {
  using T = TestType;
  const double e = tol<T>();
  const Tensor<T> x = sinus<T>(Dims{2, 3, 9, 10}, 0.77);
  const std::vector<double> xv = vals(x);
  int64_t OH, OW;
  struct P { V k, s, p, d; bool ceil; };
  for (const P& c : {P{{2, 2}, {2, 2}, {0, 0}, {1, 1}, false}, P{{3, 3}, {2, 2}, {1, 1}, {1, 1}, true},
                     P{{3, 2}, {1, 3}, {1, 0}, {2, 1}, true}, P{{3, 3}, {2, 2}, {1, 1}, {2, 2}, false},
                     P{{2, 3}, {3, 2}, {1, 1}, {1, 1}, true}}) {
    INFO("kernel " << c.k[0] << "x" << c.k[1] << " stride " << c.s[0] << "x" << c.s[1]);
    const Tensor<T> m = max_pool2d(x, c.k, c.s, c.p, c.d, c.ceil);
    const std::vector<double> wm = ref_pool(xv, 6, 9, 10, c.k, c.s, c.p, c.d, c.ceil, true, true, 0, OH, OW);
    CHECK(m.sizes() == Dims{2, 3, OH, OW});
    check_near(vals(m), wm, 0, 0);  // exact
    for (bool cip : {true, false})
      for (int64_t div : {int64_t(0), int64_t(5)}) {
        const Tensor<T> a = avg_pool2d(x, c.k, c.s, c.p, c.ceil, cip, div ? std::optional<int64_t>(div) : std::nullopt);
        check_near(vals(a), ref_pool(xv, 6, 9, 10, c.k, c.s, c.p, {1, 1}, c.ceil, false, cip, div, OH, OW), e, e);
      }
  }
  SECTION("adaptive_avg_pool2d: even and uneven windows, unbatched, by name") {
    for (V o : {V{3, 5}, V{4, 3}, V{1, 1}, V{9, 10}, V{7}}) {
      const int64_t oh = o[0], ow = o.size() > 1 ? o[1] : o[0];
      const Tensor<T> y = adaptive_avg_pool2d(x, o);
      CHECK(y.sizes() == Dims{2, 3, oh, ow});
      check_near(vals(y), ref_adaptive(xv, 6, 9, 10, oh, ow), e, e);
    }
    const Tensor<T> u = adaptive_avg_pool2d(AnyTensor(x.select(0, 1)), {2, 3}).template get<T>();
    CHECK(u.sizes() == Dims{3, 2, 3});
    check_near(vals(u), ref_adaptive(vals(x.select(0, 1)), 3, 9, 10, 2, 3), e, e);
    const std::vector<ops::Arg> args = {AnyTensor(x), V{4, 3}};
    check_near(vals(ops::call_by_name("aten::adaptive_avg_pool2d", args).template get<T>()), ref_adaptive(xv, 6, 9, 10, 4, 3), e, e);
  }
  SECTION("by name (stride [] is the kernel size), unbatched, non-contiguous input") {
    const std::vector<ops::Arg> mp = {AnyTensor(x), V{3, 3}, V{}, V{1, 1}, V{1, 1}, false};
    check_near(vals(ops::call_by_name("aten::max_pool2d", mp).template get<T>()),
               ref_pool(xv, 6, 9, 10, {3, 3}, {3, 3}, {1, 1}, {1, 1}, false, true, true, 0, OH, OW), 0, 0);
    const std::vector<ops::Arg> ap = {AnyTensor(x), V{2}, V{}, V{0}, true, false, ops::Arg()};
    check_near(vals(ops::call_by_name("aten::avg_pool2d", ap).template get<T>()),
               ref_pool(xv, 6, 9, 10, {2, 2}, {2, 2}, {0, 0}, {1, 1}, true, false, false, 0, OH, OW), e, e);
    const Tensor<T> xt = x.transpose(2, 3);  // [2, 3, 10, 9], not contiguous
    check_near(vals(max_pool2d(xt.select(0, 0), {2})),
               ref_pool(vals(xt.select(0, 0)), 3, 10, 9, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false, true, true, 0, OH, OW), 0, 0);
  }
}

TEST_CASE("_convolution_mode: string padding as traced models hold it (torch 1.13 values)", "[ops][conv]") {
  // x = arange(16.).reshape(1, 1, 4, 4) / 4, w = [[[[1, 0], [0, -1]]]]:
  // torch._convolution_mode(x, w, None, [1, 1], 'same', [1, 1], 1) (the extra padding row and
  // column go after) and with bias 0.5 and 'valid'
  std::vector<double> xv;
  for (int i = 0; i < 16; ++i) xv.push_back(i / 4.0);
  const AnyTensor x(optest::make<float>(xv, Dims{1, 1, 4, 4})), w(optest::make<float>({1, 0, 0, -1}, Dims{1, 1, 2, 2}));
  using VI = std::vector<int64_t>;
  const std::vector<ops::Arg> same = {x, w, ops::Arg(), VI{1, 1}, std::string("same"), VI{1, 1}, int64_t(1)};
  const AnyTensor ys = ops::call_by_name("aten::_convolution_mode", same);
  CHECK(ys.sizes() == Dims{1, 1, 4, 4});
  check_values(ys.get<float>(), {-1.25, -1.25, -1.25, 0.75, -1.25, -1.25, -1.25, 1.75, -1.25, -1.25, -1.25, 2.75, 3.0, 3.25,
                                 3.5, 3.75});
  const std::vector<ops::Arg> valid = {x, w, AnyTensor(optest::make<float>({0.5}, Dims{1})), VI{1}, std::string("valid"),
                                       VI{1}, int64_t(1)};
  check_values(ops::call_by_name("aten::_convolution_mode", valid).get<float>(), std::vector<double>(9, -0.75));
  const std::vector<ops::Arg> bad = {x, w, ops::Arg(), VI{1, 1}, std::string("full"), VI{1, 1}, int64_t(1)};
  CHECK_THROWS_AS(ops::call_by_name("aten::_convolution_mode", bad), ValueError);
}

TEST_CASE("im2col / col2im (unfold / fold): torch 1.13 values, unbatched, errors", "[ops][conv]") {
  // x = arange(24.).reshape(1, 2, 3, 4); c = F.unfold(x, (2, 2), dilation=1, padding=(1, 0),
  // stride=(1, 2)) -> [1, 8, 8]; F.fold(c, (3, 4), same arguments) = 2 x (each pixel is covered twice)
  std::vector<double> xv;
  for (int i = 0; i < 24; ++i) xv.push_back(i);
  using VI = std::vector<int64_t>;
  const AnyTensor x(optest::make<float>(xv, Dims{1, 2, 3, 4}));
  const std::vector<ops::Arg> a = {x, VI{2, 2}, VI{1}, VI{1, 0}, VI{1, 2}};
  const AnyTensor c = ops::call_by_name("aten::im2col", a);
  CHECK(c.sizes() == Dims{1, 8, 8});
  check_values(c.get<float>(), {0,  0,  0,  2,  4,  6,  8,  10, 0,  0,  1,  3,  5,  7,  9,  11, 0,  2,  4,  6,  8,  10,
                                0,  0,  1,  3,  5,  7,  9,  11, 0,  0,  0,  0,  12, 14, 16, 18, 20, 22, 0,  0,  13, 15,
                                17, 19, 21, 23, 12, 14, 16, 18, 20, 22, 0,  0,  13, 15, 17, 19, 21, 23, 0,  0});
  const std::vector<ops::Arg> f = {c, VI{3, 4}, VI{2, 2}, VI{1, 1}, VI{1, 0}, VI{1, 2}};
  std::vector<double> twice;
  for (double v : xv) twice.push_back(2 * v);
  check_values(ops::call_by_name("aten::col2im", f).get<float>(), twice);
  // unbatched: [C, H, W] -> [C·kh·kw, L] and back; float64
  const AnyTensor x3(optest::make<double>(xv, Dims{2, 3, 4}));
  const std::vector<ops::Arg> a3 = {x3, VI{3, 4}, VI{1, 1}, VI{0, 0}, VI{1, 1}};
  const AnyTensor c3 = ops::call_by_name("aten::im2col", a3);  // one block: the whole image
  CHECK(c3.sizes() == Dims{24, 1});
  check_values(c3.get<double>(), xv);
  const std::vector<ops::Arg> f3 = {c3, VI{3, 4}, VI{3, 4}, VI{1, 1}, VI{0, 0}, VI{1, 1}};
  check_values(ops::call_by_name("aten::col2im", f3).get<double>(), xv);
  // errors: a window larger than the image, a block count that does not match, an int input
  const std::vector<ops::Arg> big = {x, VI{5, 5}, VI{1, 1}, VI{0, 0}, VI{1, 1}};
  CHECK_THROWS_AS(ops::call_by_name("aten::im2col", big), ShapeError);
  const std::vector<ops::Arg> wrong = {c, VI{4, 4}, VI{2, 2}, VI{1, 1}, VI{1, 0}, VI{1, 2}};
  CHECK_THROWS_AS(ops::call_by_name("aten::col2im", wrong), ShapeError);
  const std::vector<ops::Arg> ints = {AnyTensor(optest::make<int64_t>(xv, Dims{1, 2, 3, 4})), VI{2, 2}, VI{1, 1}, VI{0, 0}, VI{1, 1}};
  CHECK_THROWS_AS(ops::call_by_name("aten::im2col", ints), TypeError);
}

TEST_CASE("pooling: torch 1.13 values, NaN", "[ops][pool]") {
  const Tensor<float> x = sinus<float>(Dims{1, 2, 5, 6}, 0.77);
  // F.max_pool2d(x, 3, 2, 1, 2, ceil_mode=True)
  check_near(vals(max_pool2d(x, {3}, {2}, {1}, {2}, true)),
             {1.761992, 1.761992, 1.632371, 1.761992, 1.761992, 1.632371, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0}, 0, 2e-6);
  // F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False)
  check_near(vals(avg_pool2d(x, {3}, {2}, {1}, true, false)),
             {-0.539336, 0.711789, 0.852312, 0.16556, -0.100211, -0.4312, -0.107655, 0.271843, 0.935728, 0.993849, -0.426474,
              -1.240852, -0.767867, -1.060949, 0.234116, 1.123246, 0.486701, 0.276707, -0.335238, -0.542623, -1.157313,
              -0.033586, 1.09194, 1.023133},
             0, 2e-6);
  // F.avg_pool2d(x, 2, 1, 0, divisor_override=3)
  check_near(vals(avg_pool2d(x, {2}, {1}, {0}, false, true, 3)),
             {-0.719115, 0.529143, 1.47887, 1.59425, 0.810188, -1.428976, -1.62079, -0.898189, 0.331151, 1.373663,
              0.982783, -0.230083, -1.31314, -1.655352, -1.06365, 1.247638, 1.663244, 1.140483, -0.025714, -1.177403,
              -1.023822, -1.649071, -1.343949, -0.280599, 0.941058, 1.401902, 0.38109, -0.854725, -1.608322, -1.454538,
              0.76515, 1.578754, 1.501658, 0.577359, -0.672674, -1.543084, -0.672394, 0.577646, 1.501791, 1.578657},
             0, 2e-6);
  // F.adaptive_avg_pool2d(x, (3, 4))
  check_near(vals(adaptive_avg_pool2d(x, {3, 4})),
             {-0.539336, 0.396857, 1.195687, 0.607641, -0.100211, -0.41569, -0.297404, 0.069626, 0.935728, 1.247433,
              -0.019285, -0.883053, -0.767867, -1.236803, -0.210449, 0.705794, 0.486701, 0.440164, -0.231545, -0.477754,
              -1.157313, -0.504295, 1.126343, 1.183993},
             0, 2e-6);
  // a NaN in a window gives NaN (torch.nn.functional.max_pool2d); -inf padding never wins
  Tensor<float> n = sinus<float>(Dims{1, 1, 4, 4});
  n.data_ptr()[5] = std::numeric_limits<float>::quiet_NaN();
  const std::vector<double> r = vals(max_pool2d(n, {2}));
  CHECK(std::isnan(r[0]));
  CHECK(!std::isnan(r[1]));
  CHECK(!std::isnan(r[3]));
  const std::vector<double> neg = vals(max_pool2d(Tensor<float>(sinus<float>(Dims{1, 1, 3, 3}) - 5.0f), {3}, {1}, {1}));
  for (double v : neg) CHECK(v < -2.9);
}

TEMPLATE_TEST_CASE("convolution: the fused epilogue entry", "[ops][conv]", float, double, bfloat16) {
  using T = TestType;
  const auto relu_ep = [](Tensor<T> dest, const auto& e) { dest.copy_(torchtpu::relu(e)); };
  // im2col, depthwise, 1x1, transposed convolution, batch-folded GEMMs, outᵀ product, flat GEMM,
  // Winograd, flat GEMMs with blocks ending inside output rows
  for (size_t ci : {size_t(0), size_t(2), size_t(5), size_t(8), size_t(12), size_t(13), size_t(14), size_t(15), size_t(16),
                    size_t(18), size_t(19), size_t(20), size_t(21), size_t(22), size_t(24), size_t(25)}) {
    REQUIRE(ci < kCases.size());
    const ConvCase& c = kCases[ci];
    INFO("case " << ci);
    const Tensor<T> x = sinus<T>(c.x), w = sinus<T>(c.w, 0.91, 1.0);
    const Tensor<T> b = sinus<T>(Dims{c.transposed ? c.w[1] * c.groups : c.w[0]}, 1.3, 0.5);
    ops::detail::ConvArgs a = ops::detail::conv_front("aten::_convolution", c.s, c.p, c.d, c.groups, 0, c.transposed, c.op);
    a.present = 1;
    const std::vector<Tensor<T>> in = {x, w, b};
    const Tensor<T> plain = Tensor<T>(ops::call<ops::ConvolutionOp>(std::vector<AnyTensor>{x, w, b}, a).template get<T>());
    Tensor<T> fused = Tensor<T>::empty(plain.sizes());
    ops::ConvolutionOp::cpu<T>(std::span<const Tensor<T>>(in), a, fused, relu_ep);
    std::vector<double> want = vals(plain);
    for (double& v : want) v = std::max(v, 0.0);
    check_near(vals(fused), want, 1e-6, 1e-6);
  }
}

/// The epilogue of the conv2d_chain test: relu6 (hardtanh(0, 6)).
struct Relu6 {
  template <class D, class E>
  void operator()(D dest, const E& e) const { dest.copy_(torchtpu::clamp(e, 0.0, 6.0)); }
};

TEST_CASE("convolution: conv2d_chain equals its layers run one by one (bitwise) and float64", "[ops][conv]") {
  // [pointwise] depthwise [pointwise] chains: mobilenet_v2's blocks (several bands of rows at
  // 112x112 and 56x56), stride 2, a 5x5 window, dilation 2, no padding, padding 2, no bias, two
  // images, no expansion, no projection
  using ops::detail::ConvGeom;
  struct Case { int64_t N, C, E, O, H, W, k, s, p, d; bool pre, post, bias; };
  const Case cases[] = {{1, 16, 96, 24, 112, 112, 3, 2, 1, 1, true, true, true}, {1, 24, 144, 24, 56, 56, 3, 1, 1, 1, true, true, true},
                        {1, 32, 32, 16, 112, 112, 3, 1, 1, 1, false, true, true}, {2, 5, 13, 7, 23, 19, 3, 1, 1, 1, true, true, false},
                        {1, 5, 13, 7, 23, 19, 5, 2, 2, 1, true, true, true},      {1, 6, 11, 0, 31, 17, 3, 1, 1, 2, true, false, true},
                        {1, 6, 11, 4, 30, 17, 3, 2, 0, 1, false, true, true},    {1, 3, 9, 5, 40, 9, 3, 1, 2, 1, true, true, true},
                        {2, 4, 8, 0, 9, 9, 3, 2, 1, 1, true, false, false}};
  Generator gen(7);
  const Relu6 ep;
  for (const Case& c : cases) {
    INFO("N " << c.N << " C " << c.C << " E " << c.E << " O " << c.O << " " << c.H << "x" << c.W << " k " << c.k << " s " << c.s
              << " p " << c.p << " d " << c.d << " pre " << c.pre << " post " << c.post);
    ConvGeom dw;
    dw.N = c.N; dw.C = dw.OC = dw.G = c.E; dw.Cg = dw.OCg = 1;
    dw.in[1] = c.H; dw.in[2] = c.W; dw.k[1] = dw.k[2] = c.k; dw.s[1] = dw.s[2] = c.s; dw.d[1] = dw.d[2] = c.d;
    dw.lo[1] = dw.lo[2] = dw.hi[1] = dw.hi[2] = c.p;
    dw.out[1] = (c.H + 2 * c.p - c.d * (c.k - 1) - 1) / c.s + 1;
    dw.out[2] = (c.W + 2 * c.p - c.d * (c.k - 1) - 1) / c.s + 1;
    auto pointwise = [&](int64_t C, int64_t OC, int64_t H, int64_t W) {
      ConvGeom g;
      g.N = c.N; g.C = g.Cg = C; g.OC = g.OCg = OC; g.in[1] = g.out[1] = H; g.in[2] = g.out[2] = W;
      return g;
    };
    std::vector<ConvGeom> gs;
    if (c.pre) gs.push_back(pointwise(c.C, c.E, c.H, c.W));
    gs.push_back(dw);
    if (c.post) gs.push_back(pointwise(c.E, c.O, dw.out[1], dw.out[2]));
    std::vector<Tensor<float>> ws, bs;
    for (const ConvGeom& g : gs) {
      ws.push_back(randn<float>(Dims{g.OC, g.Cg, g.k[1], g.k[2]}, gen));
      bs.push_back(randn<float>(Dims{g.OC}, gen));
    }
    std::vector<ops::detail::ConvChainLayer<Relu6>> layers;
    for (size_t i = 0; i < gs.size(); ++i) layers.push_back({gs[i], &ws[i], c.bias ? &bs[i] : nullptr, &ep});
    const std::span<const ops::detail::ConvChainLayer<Relu6>> span(layers);
    REQUIRE(ops::detail::conv_chain_fits(span));
    const Tensor<float> x = randn<float>(Dims{c.N, gs[0].C, c.H, c.W}, gen);
    Tensor<float> out = Tensor<float>::empty(gs.back().out_sizes());
    ops::detail::conv2d_chain(span, x, out);
    Tensor<float> seq = x;  // the layers one by one (conv2d_fast), and in float64
    Tensor<double> ref = Tensor<double>(x.to<double>());
    for (size_t i = 0; i < gs.size(); ++i) {
      Tensor<float> o = Tensor<float>::empty(gs[i].out_sizes());
      ops::detail::conv2d_fast(gs[i], seq, ws[i], c.bias ? &bs[i] : nullptr, o, ep);
      seq = o;
      const int64_t pad = i == (c.pre ? 1u : 0u) ? c.p : 0, st = i == (c.pre ? 1u : 0u) ? c.s : 1;
      const int64_t dil = i == (c.pre ? 1u : 0u) ? c.d : 1;
      const Tensor<double> b64 = c.bias ? Tensor<double>(bs[i].to<double>()) : Tensor<double>();
      ref = Tensor<double>(torchtpu::clamp(conv2d(ref, Tensor<double>(ws[i].to<double>()), b64, {st}, {pad}, {dil}, gs[i].G), 0.0, 6.0));
    }
    REQUIRE(out.sizes() == seq.sizes());
    int64_t differ = 0;
    for (int64_t i = 0; i < out.numel(); ++i) differ += out.data_ptr()[i] != seq.data_ptr()[i];
    CHECK(differ == 0);
    check_near(vals(out), vals(ref), 1e-4, 1e-4);
  }
  // what conv_chain_fits refuses: a 1x1 layer with stride 2 as the expansion, two depthwise layers
  std::vector<ops::detail::ConvChainLayer<Relu6>> bad(2);
  bad[0].g.C = bad[0].g.OC = bad[0].g.Cg = bad[0].g.OCg = 4;
  bad[0].g.s[1] = bad[0].g.s[2] = 2;
  bad[1].g.C = bad[1].g.OC = bad[1].g.G = 4;
  CHECK_FALSE(ops::detail::conv_chain_fits(std::span<const ops::detail::ConvChainLayer<Relu6>>(bad)));
  bad[0].g = bad[1].g;
  CHECK_FALSE(ops::detail::conv_chain_fits(std::span<const ops::detail::ConvChainLayer<Relu6>>(bad)));
}

TEST_CASE("convolution and pooling: errors name the op and the operands", "[ops][conv][errors]") {
  const Tensor<float> x = sinus<float>(Dims{1, 3, 5, 5}), w = sinus<float>(Dims{4, 3, 3, 3});
  auto throws = [](auto f, const std::string& what) {
    try {
      f();
      FAIL("expected an error containing " + what);
    } catch (const Error& e) {
      CHECK_THAT(std::string(e.what()), Catch::Contains(what));
    }
  };
  CHECK_THROWS_AS(conv2d(x, sinus<float>(Dims{4, 2, 3, 3})), ShapeError);
  throws([&] { conv2d(x, sinus<float>(Dims{4, 2, 3, 3})); },
         "aten::conv2d: expected an input of 2 channels (weight in_channels 2 x groups 1), got 3 (operands [1, 3, 5, 5] "
         "float32, [4, 2, 3, 3] float32)");
  throws([&] { conv2d(x, w, sinus<float>(Dims{3})); }, "aten::conv2d: expected a bias of 4 elements (out_channels) (operands "
                                                       "[1, 3, 5, 5] float32, [4, 3, 3, 3] float32, [3] float32)");
  CHECK_THROWS_AS(conv2d(sinus<float>(Dims{3, 5}), w), ShapeError);
  throws([&] { conv2d(sinus<float>(Dims{3, 5}), w); }, "aten::conv2d: expected a 3-D (unbatched) or 4-D (batched) input");
  throws([&] { conv2d(x, sinus<float>(Dims{4, 3, 3})); }, "aten::conv2d: expected a weight of 4 dims for a 2-D convolution");
  CHECK_THROWS_AS(conv2d(x, sinus<float>(Dims{4, 3, 7, 3})), ShapeError);
  throws([&] { conv2d(x, sinus<float>(Dims{4, 3, 7, 3})); },
         "aten::conv2d: the padded input size 5 of spatial dim 0 is smaller than the dilated kernel size 7");
  CHECK_THROWS_AS(conv2d(x, w, Tensor<float>(), {0}), ValueError);
  throws([&] { conv2d(x, w, Tensor<float>(), {1}, {-1}); }, "aten::conv2d: negative padding [-1, -1]");
  throws([&] { conv2d(x, w, Tensor<float>(), {1, 1, 1}); }, "aten::conv2d: expected stride to have 1 or 2 values, got [1, 1, 1]");
  throws([&] { conv2d(x, w, Tensor<float>(), {1}, {0}, {1}, 0); }, "aten::conv2d: groups must be positive, got 0");
  throws([&] { conv2d(x, sinus<float>(Dims{4, 1, 3, 3}), Tensor<float>(), {1}, {0}, {1}, 3); }, "divisible by groups 3");
  CHECK_THROWS_AS(conv2d(AnyTensor(x), AnyTensor(Tensor<double>(w.to<double>()))), TypeError);
  throws([&] { conv2d(AnyTensor(x), AnyTensor(Tensor<double>(w.to<double>()))); },
         "aten::conv2d: expected the weight and bias to have the input's dtype float32 (operands [1, 3, 5, 5] float32, "
         "[4, 3, 3, 3] float64)");
  throws([&] { conv2d(AnyTensor(Tensor<int64_t>::empty(Dims{1, 3, 5, 5})), AnyTensor(Tensor<int64_t>::empty(Dims{4, 3, 3, 3}))); },
         "aten::conv2d: expected a floating point input");
  throws([&] { conv_transpose2d(x, sinus<float>(Dims{3, 2, 3, 3}), Tensor<float>(), {2}, {0}, {2}); },
         "aten::conv_transpose2d: output padding [2, 2] must be smaller than either stride or dilation");
  throws([&] { conv_transpose2d(x, w); }, "aten::conv_transpose2d: expected an input of 4 channels (dim 0 of the transposed weight), got 3");
  throws([&] { conv_transpose1d(x, w); }, "aten::conv_transpose1d: expected a weight of 3 dims for a 1-D convolution");
  throws([&] { conv_transpose3d(sinus<float>(Dims{1, 2, 3, 3, 3}), sinus<float>(Dims{2, 2, 2, 2, 2}), Tensor<float>(), {1}, {3}); },
         "aten::conv_transpose3d: the output size of spatial dim 0 is negative");
  const std::vector<ops::Arg> same = {AnyTensor(x), AnyTensor(w), ops::Arg(), V{2}, std::string("same")};
  CHECK_THROWS_AS(ops::call_by_name("aten::conv2d", same), ValueError);
  throws([&] { ops::call_by_name("aten::conv2d", same); }, "aten::conv2d: padding='same' is not supported for strided convolutions");
  const std::vector<ops::Arg> bad = {AnyTensor(x), AnyTensor(w), ops::Arg(), V{1}, std::string("full")};
  throws([&] { ops::call_by_name("aten::conv2d", bad); }, "aten::conv2d: invalid padding string 'full'");
  // pooling
  CHECK_THROWS_AS(max_pool2d(sinus<float>(Dims{5, 5}), {2}), ShapeError);
  throws([&] { max_pool2d(sinus<float>(Dims{5, 5}), {2}); },
         "aten::max_pool2d: expected a 3-D [C, H, W] or 4-D [N, C, H, W] input (operands [5, 5] float32)");
  CHECK_THROWS_AS(max_pool2d(x, {3}, {1}, {2}), ValueError);
  throws([&] { max_pool2d(x, {3}, {1}, {2}); },
         "aten::max_pool2d: padding [2, 2] must be non-negative and at most half of kernel_size [3, 3] (operands [1, 3, 5, 5] float32)");
  throws([&] { max_pool2d(x, {0}); }, "aten::max_pool2d: kernel_size, stride and dilation must be positive");
  throws([&] { max_pool2d(x, {2, 2, 2}); }, "aten::max_pool2d: kernel_size must be a single int or two ints, got [2, 2, 2]");
  CHECK_THROWS_AS(max_pool2d(x, {7}), ShapeError);
  throws([&] { avg_pool2d(x, {7}); }, "aten::avg_pool2d: the output size [0, 0] is too small");
  throws([&] { avg_pool2d(x, {2}, {}, {0}, false, true, 0); }, "aten::avg_pool2d: divisor_override must be positive, got 0");
  throws([&] { max_pool2d(AnyTensor(Tensor<bool>::empty(Dims{1, 3, 5, 5})), {2}); }, "aten::max_pool2d: expected a numeric input (not bool)");
  throws([&] { avg_pool2d(AnyTensor(Tensor<uint8_t>::empty(Dims{1, 3, 5, 5})), {2}); },
         "aten::avg_pool2d: dtype uint8 is not supported (operands [1, 3, 5, 5] uint8; supported: int64, float16, bfloat16, "
         "float32, float64)");
  throws([&] { adaptive_avg_pool2d(x, {2, 2, 2}); }, "aten::adaptive_avg_pool2d: output_size must be one or two non-negative ints");
  throws([&] { adaptive_avg_pool2d(sinus<float>(Dims{1, 3, 0, 5}), {2}); },
         "aten::adaptive_avg_pool2d: expected non-zero sizes in every dim but the batch (operands [1, 3, 0, 5] float32)");
}
