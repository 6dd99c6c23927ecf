// bench/simd_choice.cpp — issue 14's library-choice measurement: W1 (y = tanh(x*w+b)*sigmoid(x)
// + 0.5x, f32, 2^16 and 2^20 elements, one thread) and the sgemm micro-kernel (packed panels,
// K = 256, B panels in L1 or streaming from L2) for Highway, xsimd, plain AVX2 intrinsics and
// torchtpu's AVX-512 path, in one process, candidates interleaved, medians. torchtpu's scalar
// path runs in a child (TORCHTPU_DISABLE_SIMD is read once per process). Writes Markdown rows.
// Usage: bench_simd_choice [--quick]
#include <algorithm>  // std::sort, std::max
#include <chrono>     // steady_clock
#include <cmath>      // std::tanh, std::exp
#include <cstdio>     // std::printf, popen
#include <cstdlib>    // setenv
#include <cstring>    // std::strcmp
#include <functional> // std::function
#include <unistd.h>    // getpid

#include <memory>     // std::make_shared
#include <random>     // std::mt19937
#include <string>     // std::string
#include <vector>     // std::vector

#include <torchtpu/torchtpu.hpp>  // Tensor, tanh, sigmoid, set_num_threads, detail::sgemm_micro_12x32

#include "simd_choice.hpp"  // the candidates
#include "timing.hpp"       // interleaved_medians

namespace {

struct Cand {
  std::string name;
  std::function<void()> run;
};
int g_turns = 15;

std::vector<double> measure(std::vector<Cand>& c, double turn_s = 0.02) {
  std::vector<std::function<void()>> runs;
  for (auto& x : c) runs.push_back(x.run);
  return bench::interleaved_medians(runs, turn_s, g_turns);
}

struct W1Data {
  std::vector<float> x, w, b, y;
  std::vector<double> ref;
};
W1Data make_w1(int64_t n) {
  W1Data d{std::vector<float>(size_t(n)), std::vector<float>(size_t(n)), std::vector<float>(size_t(n)),
           std::vector<float>(size_t(n)), std::vector<double>(size_t(n))};
  std::mt19937 g(42);
  std::normal_distribution<float> nd(0.0f, 2.0f);
  for (int64_t i = 0; i < n; ++i) {
    d.x[size_t(i)] = nd(g), d.w[size_t(i)] = nd(g), d.b[size_t(i)] = nd(g);
    const double x = d.x[size_t(i)], t = x * double(d.w[size_t(i)]) + double(d.b[size_t(i)]);
    d.ref[size_t(i)] = std::tanh(t) / (1.0 + std::exp(-x)) + 0.5 * x;  // float64 reference
  }
  return d;
}
double max_err(const W1Data& d) {
  double e = 0;
  for (size_t i = 0; i < d.y.size(); ++i) e = std::max(e, std::abs(double(d.y[i]) - d.ref[i]) / std::max(1.0, std::abs(d.ref[i])));
  return e;
}

using torchtpu::Tensor;
std::function<void()> torchtpu_w1(W1Data& d) {
  const int64_t n = int64_t(d.x.size());
  Tensor<float> x = Tensor<float>::empty({n}), w = Tensor<float>::empty({n}), b = Tensor<float>::empty({n}), y = Tensor<float>::empty({n});
  std::copy(d.x.begin(), d.x.end(), x.data_ptr());
  std::copy(d.w.begin(), d.w.end(), w.data_ptr());
  std::copy(d.b.begin(), d.b.end(), b.data_ptr());
  float* out = d.y.data();
  return [=]() mutable {
    y.copy_(torchtpu::tanh(x * w + b) * torchtpu::sigmoid(x) + 0.5 * x);
    std::copy(y.data_ptr(), y.data_ptr() + n, out);  // (outside the timing in spirit: see SIMD_CHOICE.md)
  };
}

void w1_table(bool scalar_child) {
  for (int64_t n : {int64_t(1) << 16, int64_t(1) << 20}) {
    W1Data d = make_w1(n);
    auto fn = [&d](simd_choice::W1Fn f) {
      return std::function<void()>([&d, f] { f(d.x.data(), d.w.data(), d.b.data(), d.y.data(), int64_t(d.y.size())); });
    };
    std::vector<Cand> c;
    if (scalar_child) {
      c.push_back({"torchtpu scalar path (TORCHTPU_DISABLE_SIMD=1, child process)", torchtpu_w1(d)});
    } else {
      c.push_back({"torchtpu AVX-512 path (today)", torchtpu_w1(d)});
      c.push_back({"Highway N_AVX3, contrib Tanh/Exp", fn(simd_choice::hwy_avx3_w1_contrib)});
      c.push_back({"Highway N_AVX3, our polynomials", fn(simd_choice::hwy_avx3_w1_ours)});
      c.push_back({std::string("Highway HWY_DYNAMIC_DISPATCH (") + simd_choice::hwy_dispatch_target() + "), ours", fn(simd_choice::hwy_dyn_w1_ours)});
      c.push_back({"xsimd avx512 (-mavx512*), xsimd tanh/exp", fn(simd_choice::xs_avx512::w1_lib)});
      c.push_back({"xsimd avx512 (-mavx512*), our polynomials", fn(simd_choice::xs_avx512::w1_ours)});
      c.push_back({"intrinsics AVX2, our polynomials (upper bound)", fn(simd_choice::intrin_avx2_w1_ours)});
      c.push_back({"Highway N_AVX2, contrib Tanh/Exp", fn(simd_choice::hwy_avx2_w1_contrib)});
      c.push_back({"Highway N_AVX2, our polynomials", fn(simd_choice::hwy_avx2_w1_ours)});
      c.push_back({"xsimd fma3<avx2> (-mavx2 -mfma), xsimd tanh/exp", fn(simd_choice::xs_avx2::w1_lib)});
      c.push_back({"xsimd fma3<avx2> (-mavx2 -mfma), our polynomials", fn(simd_choice::xs_avx2::w1_ours)});
    }
    std::vector<double> err;
    for (auto& k : c) {
      std::fill(d.y.begin(), d.y.end(), -7.0f);
      k.run();
      err.push_back(max_err(d));
    }
    const std::vector<double> med = measure(c);
    if (!scalar_child) std::printf("\n**W1, n = 2^%d, 1 thread**\n\n| candidate | ns/elem | vs AVX2 intrinsics | max rel. error vs float64 |\n|---|---|---|---|\n", n == (1 << 16) ? 16 : 20);
    for (size_t i = 0; i < c.size(); ++i) {
      const double ns = med[i] * 1e9 / double(n);
      if (scalar_child) std::printf("| %s | %.3f | | %.2g |\n", c[i].name.c_str(), ns, err[i]);
      else std::printf("| %s | %.3f | %.2f | %.2g |\n", c[i].name.c_str(), ns, med[i] / med[6], err[i]);
    }
    if (!scalar_child) {  // torchtpu's scalar path, same sizes, in a child process
      std::fflush(stdout);
      std::string cmd = "TORCHTPU_DISABLE_SIMD=1 /proc/" + std::to_string(getpid()) + "/exe --scalar-child " + std::to_string(n);
      std::FILE* p = popen(cmd.c_str(), "r");
      char line[512];
      while (p && std::fgets(line, sizeof line, p)) std::fputs(line, stdout);
      if (p) pclose(p);
    }
  }
}

void gemm_table(double peak2, double peak5) {
  const int64_t kc = 256;
  struct M { std::string name; simd_choice::MicroFn fn; int mr, nr; bool wide; };
  auto tt = [](int64_t k, const float* a, const float* b, float* c, int64_t ldc) {
    torchtpu::detail::sgemm_micro_12x32<12>(k, a, b, c, ldc, 12, 32, false);
  };
  // torchtpu's portable kernels through their block entry (one strip x one panel = one tile)
  static const torchtpu::detail::SgemmKernels k2 = torchtpu::detail::sgemm_kernels_for(torchtpu::detail::CpuIsa::avx2);
  static const torchtpu::detail::SgemmKernels k5 = torchtpu::detail::sgemm_kernels_for(torchtpu::detail::CpuIsa::avx512, true);
  auto tp2 = [](int64_t k, const float* a, const float* b, float* c, int64_t ldc) { k2.block(k, a, b, 6, 0, 1, c, ldc, 16, false); };
  auto tp5 = [](int64_t k, const float* a, const float* b, float* c, int64_t ldc) { k5.block(k, a, b, 12, 0, 1, c, ldc, 32, false); };
  std::vector<M> ms = {{"intrinsics AVX2 6x16 (upper bound)", simd_choice::intrin_avx2_micro_6x16, 6, 16, false},
                       {"torchtpu portable 6x16 (AVX2 path)", +tp2, 6, 16, false},
                       {"torchtpu portable 12x32 (compiled for AVX-512)", +tp5, 12, 32, true},
                       {"Highway N_AVX2 6x16", simd_choice::hwy_avx2_micro_6x16, 6, 16, false},
                       {"xsimd fma3<avx2> 6x16", simd_choice::xs_avx2::micro, 6, 16, false},
                       {"torchtpu sgemm_micro_12x32 (AVX-512 today)", +tt, 12, 32, true},
                       {"Highway N_AVX3 12x32", simd_choice::hwy_avx3_micro_12x32, 12, 32, true},
                       {"xsimd avx512bw 12x32", simd_choice::xs_avx512::micro, 12, 32, true}};
  for (int64_t cols : {int64_t(0), int64_t(512)}) {  // 0: one B panel (L1); 512: a K x 512 slab (512 KiB, L2)
    std::vector<Cand> c;
    std::vector<std::vector<float>> bufs;
    std::vector<double> flops, errs;
    for (auto& m : ms) {
      const int64_t np = cols ? cols / m.nr : 1, ldc = m.nr * np;
      auto a = std::make_shared<std::vector<float>>(size_t(kc * m.mr));
      auto b = std::make_shared<std::vector<float>>(size_t(kc * m.nr * np + 64 * 32));
      auto cc = std::make_shared<std::vector<float>>(size_t(m.mr * ldc));
      std::mt19937 g(7);
      std::uniform_real_distribution<float> u(-1, 1);
      for (auto& v : *a) v = u(g);
      for (auto& v : *b) v = u(g);
      auto fn = m.fn;
      const int mr = m.mr, nr = m.nr;
      c.push_back({m.name, [=] {
                     for (int64_t j = 0; j < np; ++j) fn(kc, a->data(), b->data() + j * kc * nr, cc->data() + j * nr, ldc);
                   }});
      c.back().run();
      double e = 0;  // tile 0 against float64
      for (int i = 0; i < mr; ++i)
        for (int j = 0; j < nr; ++j) {
          double s = 0;
          for (int64_t p = 0; p < kc; ++p) s += double((*a)[size_t(p * mr + i)]) * double((*b)[size_t(p * nr + j)]);
          e = std::max(e, std::abs(s - double((*cc)[size_t(i * ldc + j)])));
        }
      errs.push_back(e);
      flops.push_back(2.0 * double(mr) * double(nr) * double(kc) * double(np));
    }
    const std::vector<double> med = measure(c);
    std::printf("\n**sgemm micro-kernel, K = 256, %s, 1 thread** (FMA peak: AVX2 %.1f, AVX-512 %.1f GFLOP/s)\n\n"
                "| candidate | GFLOP/s | %% of peak (own width) | vs AVX2 intrinsics | max abs error |\n|---|---|---|---|---|\n",
                cols ? "A panel in L1, B = K x 512 slab streaming from L2" : "A and B panels in L1", peak2, peak5);
    for (size_t i = 0; i < c.size(); ++i) {
      const double gf = flops[i] / med[i] * 1e-9;
      std::printf("| %s | %.1f | %.0f %% | %.2f | %.1g |\n", c[i].name.c_str(), gf, 100 * gf / (ms[i].wide ? peak5 : peak2),
                  gf / (flops[0] / med[0] * 1e-9), errs[i]);
    }
  }
}

/// The whole f32 GEMM (sgemm_packed: packing, blocking, micro-kernel; 1 thread) with each
/// kernel table: AVX-512 hand-written vs the portable kernels compiled for AVX-512 and AVX2.
void full_gemm_table(bool quick) {
  using namespace torchtpu::detail;
  const std::vector<SgemmKernels> ks = {sgemm_kernels_for(CpuIsa::avx512), sgemm_kernels_for(CpuIsa::avx512, true),
                                        sgemm_kernels_for(CpuIsa::avx2)};
  for (int64_t n : quick ? std::vector<int64_t>{256, 1024} : std::vector<int64_t>{256, 512, 1024, 2048}) {
    auto a = std::make_shared<std::vector<float>>(size_t(n * n)), b = std::make_shared<std::vector<float>>(size_t(n * n));
    std::mt19937 g(9);
    std::uniform_real_distribution<float> u(-1, 1);
    for (auto& v : *a) v = u(g);
    for (auto& v : *b) v = u(g);
    std::vector<Cand> c;
    std::vector<std::shared_ptr<std::vector<float>>> outs;
    for (const auto& k : ks) {
      auto out = std::make_shared<std::vector<float>>(size_t(n * n));
      outs.push_back(out);
      c.push_back({k.name, [=] {
                     SgemmArgs ga;
                     ga.m = ga.n = ga.k = n;
                     ga.a = a->data(); ga.sam = n; ga.sak = 1;
                     ga.b = b->data(); ga.sbk = n; ga.sbn = 1;
                     ga.c = out->data(); ga.ldc = n;
                     sgemm_packed(ga, k.blocking, k);
                   }});
    }
    const std::vector<double> med = measure(c, 0.05);
    std::printf("\n**whole f32 GEMM, n = %lld, 1 thread** (portable AVX-512 bitwise equal to hand-written: %s)\n\n"
                "| kernels | GFLOP/s | vs AVX-512 hand-written |\n|---|---|---|\n",
                (long long)n, *outs[0] == *outs[1] ? "yes" : "NO");
    for (size_t i = 0; i < c.size(); ++i)
      std::printf("| %s | %.1f | %.2f |\n", c[i].name.c_str(), 2.0 * double(n * n * n) / med[i] * 1e-9, med[0] / med[i]);
  }
}

}  // namespace

int main(int argc, char** argv) {
  torchtpu::set_num_threads(1);
  if (argc >= 3 && !std::strcmp(argv[1], "--scalar-child")) {
    g_turns = 5;
    const int64_t n = std::atoll(argv[2]);
    W1Data d = make_w1(n);
    std::vector<Cand> c = {{"torchtpu scalar path (TORCHTPU_DISABLE_SIMD=1, child process)", torchtpu_w1(d)}};
    c[0].run();
    const double e = max_err(d);
    const std::vector<double> med = measure(c);
    std::printf("| %s | %.3f | | %.2g |\n", c[0].name.c_str(), med[0] * 1e9 / double(n), e);
    return 0;
  }
  if (argc >= 2 && !std::strcmp(argv[1], "--quick")) g_turns = 5;
  if (!simd_choice::cpu_has_avx512_skx()) {
    std::fprintf(stderr, "bench_simd_choice: needs a CPU with AVX-512 F/DQ/BW/VL (it compares both widths)\n");
    return 1;
  }
  std::printf("xsimd archs: %s, %s; Highway dispatch target: %s\n", simd_choice::xs_avx2::arch_name(),
              simd_choice::xs_avx512::arch_name(), simd_choice::hwy_dispatch_target());
  const double p2 = simd_choice::fma_peak_avx2(), p5 = simd_choice::fma_peak_avx512();
  w1_table(false);
  gemm_table(p2, p5);
  full_gemm_table(g_turns < 15);
  return 0;
}
