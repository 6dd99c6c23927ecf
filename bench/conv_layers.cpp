// bench/conv_layers.cpp — resnet18's and resnet50's 3x3 stride-1 convolution layers at batch 1
// (224x224 model input), one thread: torchtpu as it chooses by default (Winograd F(2x2, 3x3)
// where it pays, `set_conv_winograd(2)`), with F(4x4, 3x3) allowed (`set_conv_winograd(4)`), on
// the direct GEMM (`set_conv_winograd(0)`), and libtorch's `torch::conv2d` (its default CPU
// backend), interleaved in one process (bench/timing.hpp). Weights are pinned as a loaded
// model pins them (ConstantPacks: packed and transformed once) and a block pool serves the
// buffers, as in a model's forward. Each candidate's result is checked against float64: the
// worst |error| over the sum of the terms' magnitudes is printed beside its time; "(tile)" is
// the Winograd tile the setting ran (0: the direct GEMM).
//
// Usage: build/bench/bench_conv_layers [--quick]   (results: docs/cpu-engine.md, Winograd)
#include <torch/torch.h>  // torch::conv2d, torch::from_blob, torch::set_num_threads

#include <algorithm>  // std::max
#include <cmath>      // std::abs
#include <cstdio>     // std::printf
#include <cstring>    // std::strcmp
#include <memory>     // std::make_shared
#include <vector>     // std::vector

#include <torchtpu/ops/conv.hpp>  // torchtpu::conv2d, set_conv_winograd, winograd_tile
#include <torchtpu/torchtpu.hpp>  // Tensor, randn, Generator, set_num_threads

#include "timing.hpp"  // bench::interleaved_medians

namespace {

/// Worst |y - exact| / (|bias| + sum |x w|) over every `stride`-th output of a padding-1 3x3
/// convolution (float64 reference).
double worst_error(const float* x, const float* w, const float* b, const float* y, int64_t C, int64_t OC, int64_t H,
                   int64_t stride) {
  double worst = 0;
  for (int64_t o = 0; o < OC; o += stride)
    for (int64_t i = 0; i < H; ++i)
      for (int64_t j = 0; j < H; ++j) {
        double s = b[o], m = std::abs(double(b[o]));
        for (int64_t c = 0; c < C; ++c)
          for (int64_t p = 0; p < 3; ++p)
            for (int64_t q = 0; q < 3; ++q) {
              const int64_t ih = i + p - 1, iw = j + q - 1;
              if (ih < 0 || ih >= H || iw < 0 || iw >= H) continue;
              const double t = double(x[(c * H + ih) * H + iw]) * w[((o * C + c) * 3 + p) * 3 + q];
              s += t;
              m += std::abs(t);
            }
        worst = std::max(worst, std::abs(y[(o * H + i) * H + j] - s) / m);
      }
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && !std::strcmp(argv[1], "--quick");
  torchtpu::set_num_threads(1);
  torch::set_num_threads(1);
  torch::InferenceMode inference;
  struct Layer { int64_t C, H; const char* where; };
  const Layer layers[] = {{64, 56, "resnet18/50 stage 1"}, {128, 28, "resnet18/50 stage 2"},
                          {256, 14, "resnet18/50 stage 3"}, {512, 7, "resnet18/50 stage 4"}};
  std::printf("| layer (C -> C, H x W) | default ms (tile) | F(4x4) allowed ms (tile) | direct ms | libtorch ms | "
              "default vs direct | default vs libtorch | F(4x4) vs direct | error default / F(4x4) / direct / libtorch |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
  torchtpu::Generator gen(7);
  for (const Layer& l : layers) {
    const int64_t C = l.C, H = l.H;
    const torchtpu::Tensor<float> x = torchtpu::randn<float>(torchtpu::Dims{1, C, H, H}, gen);
    const torchtpu::Tensor<float> w = torchtpu::randn<float>(torchtpu::Dims{C, C, 3, 3}, gen);
    const torchtpu::Tensor<float> b = torchtpu::randn<float>(torchtpu::Dims{C}, gen);
    torchtpu::detail::ConstantPacks::instance().pin(w.data_ptr(), size_t(w.numel()) * sizeof(float), nullptr);
    const auto pool = std::make_shared<torchtpu::HostBlockPool>();
    torchtpu::Tensor<float> y[3];  // default (2), 4, direct (0)
    const int settings[3] = {2, 4, 0};
    auto run_tt = [&](int k) {
      const torchtpu::HostBlockPool::Scope scope(pool);
      torchtpu::set_conv_winograd(settings[k]);
      y[k] = torchtpu::conv2d(x, w, b, {1, 1}, {1, 1});
    };
    const torch::Tensor tx = torch::from_blob(x.data_ptr(), {1, C, H, H});
    const torch::Tensor tw = torch::from_blob(w.data_ptr(), {C, C, 3, 3});
    const torch::Tensor tb = torch::from_blob(b.data_ptr(), {C});
    torch::Tensor ty;
    const std::vector<double> t = bench::interleaved_medians(
        {[&] { run_tt(0); }, [&] { run_tt(1); }, [&] { run_tt(2); }, [&] { ty = torch::conv2d(tx, tw, tb, {1, 1}, {1, 1}); }},
        quick ? 0.02 : 0.2, quick ? 3 : 9);
    int tiles[2];  // the tile each setting ran (0: the direct GEMM)
    torchtpu::ops::detail::ConvGeom g;
    g.C = g.OC = g.Cg = g.OCg = C;
    g.in[1] = g.in[2] = g.out[1] = g.out[2] = H;
    g.k[1] = g.k[2] = 3;
    for (int k = 0; k < 2; ++k) {
      torchtpu::set_conv_winograd(settings[k]);
      tiles[k] = torchtpu::ops::detail::winograd_tile(g, torchtpu::detail::sgemm_kernels());
    }
    torchtpu::set_conv_winograd(2);
    const int64_t every = quick ? 7 : 1;
    double err[4];
    for (int k = 0; k < 3; ++k) err[k] = worst_error(x.data_ptr(), w.data_ptr(), b.data_ptr(), y[k].data_ptr(), C, C, H, every);
    const torch::Tensor tyc = ty.contiguous();
    err[3] = worst_error(x.data_ptr(), w.data_ptr(), b.data_ptr(), tyc.data_ptr<float>(), C, C, H, every);
    std::printf("| %ld -> %ld, %ldx%ld (%s) | %.3f (%d) | %.3f (%d) | %.3f | %.3f | %.2fx | %.2fx | %.2fx | %.1e / %.1e / %.1e / %.1e |\n",
                long(C), long(C), long(H), long(H), l.where, t[0] * 1e3, tiles[0], t[1] * 1e3, tiles[1], t[2] * 1e3,
                t[3] * 1e3, t[2] / t[0], t[3] / t[0], t[2] / t[1], err[0], err[1], err[2], err[3]);
    torchtpu::detail::ConstantPacks::instance().unpin(w.data_ptr());
  }
  return 0;
}
