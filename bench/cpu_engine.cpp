// bench/cpu_engine.cpp — the CPU engine benchmark (issue 3, workloads W1–W7): torchtpu against
// Eigen, xtensor, OpenBLAS and libtorch on the same buffers in one process, candidates taking
// turns (A B C A B C …) and medians reported, since timings here drift 30–50 % over seconds.
// Usage: bench_cpu_engine [--quick] [--csv FILE]   (scripts/bench runs it and writes RESULTS.md)
// The same file builds bench_cpu_engine_avx2 (TORCHTPU_BENCH_AVX2=1): the peers compiled with
// -mavx2 -mfma, OpenBLAS on its Haswell kernels, torchtpu asked for TORCHTPU_CPU_ISA=avx2, and
// only W1, W3 and W5 (`scripts/bench --isa avx2` writes bench/RESULTS-avx2.md).
#include <unistd.h>  // execv

#include <algorithm>  // std::sort
#include <atomic>     // std::atomic
#include <chrono>     // steady_clock
#include <cstdio>     // std::printf, std::FILE
#include <cstdlib>    // std::getenv, setenv
#include <cstring>    // std::strcmp
#include <string>     // std::string
#include <vector>     // std::vector

#include <torchtpu/torchtpu.hpp>  // Tensor, ops, set_num_threads

#include "peers.hpp"   // the peer libraries, each in its own translation unit
#include "timing.hpp"  // interleaved_medians

// ---- allocation counter (a malloc hook: glibc's malloc interposed) -----------------------
extern "C" void* __libc_malloc(size_t);
extern "C" void* __libc_calloc(size_t, size_t);
extern "C" void* __libc_realloc(void*, size_t);
static std::atomic<long> g_allocs{0};
extern "C" void* malloc(size_t n) {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(n);
}
extern "C" void* calloc(size_t a, size_t b) {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  return __libc_calloc(a, b);
}
extern "C" void* realloc(void* p, size_t n) {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  return __libc_realloc(p, n);
}

namespace {

using bench::Run;
using torchtpu::Tensor;

struct Cand {
  std::string name;
  Run run;
};

#ifndef TORCHTPU_BENCH_AVX2
#define TORCHTPU_BENCH_AVX2 0
#endif
constexpr bool g_avx2 = TORCHTPU_BENCH_AVX2 != 0;

bool g_quick = false;
std::FILE* g_csv = nullptr;

/// Median seconds per call of each candidate, measured in interleaved turns.
std::vector<double> measure(std::vector<Cand>& cands, double turn_s = 0.01, int turns = 11) {
  if (g_quick) turns = 5;
  std::vector<bench::Run> runs;
  for (auto& c : cands) runs.push_back(c.run);
  return bench::interleaved_medians(runs, turn_s, turns);
}

/// Prints and records one workload: times, a per-call metric, ratio peer/torchtpu (the first
/// candidate is torchtpu; ratio > 1 means torchtpu is faster).
void report(const std::string& workload, const std::string& config, std::vector<Cand>& cands,
            const char* metric_name, double metric_num) {
  const std::vector<double> med = measure(cands);
  std::printf("%-4s %-28s\n", workload.c_str(), config.c_str());
  for (size_t c = 0; c < cands.size(); ++c) {
    // GFLOP/s: metric_num is GFLOP per call; ns/elem: elements per call; us: per call
    const std::string mn = metric_name;
    const double metric = mn == "GFLOP/s" ? metric_num / med[c] : mn == "ns/elem" ? med[c] * 1e9 / metric_num : med[c] * 1e6;
    std::printf("     %-26s %12.3f us  %10.3f %-9s  x%.2f\n", cands[c].name.c_str(), med[c] * 1e6, metric, metric_name,
                med[c] / med[0]);
    if (g_csv)
      std::fprintf(g_csv, "%s,%s,%s,%.9g,%.6g,%s\n", workload.c_str(), config.c_str(), cands[c].name.c_str(), med[c], metric,
                   metric_name);
  }
  std::fflush(stdout);
}

void info(const std::string& key, const std::string& value) {
  std::printf("# %s: %s\n", key.c_str(), value.c_str());
  if (g_csv) std::fprintf(g_csv, "#%s,%s\n", key.c_str(), value.c_str());
}

/// The 1, 5 and 15-minute load averages (/proc/loadavg), to record how busy the machine was.
std::string loadavg() {
  std::FILE* f = std::fopen("/proc/loadavg", "r");
  if (!f) return "?";
  double a = 0, b = 0, c = 0;
  const int got = std::fscanf(f, "%lf %lf %lf", &a, &b, &c);
  std::fclose(f);
  if (got != 3) return "?";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f %.2f %.2f", a, b, c);
  return buf;
}

Tensor<float> randn(torchtpu::Dims shape, torchtpu::Generator& g) { return torchtpu::randn<float>(shape, g); }

void set_threads(int t) {
  torchtpu::set_num_threads(t);
  bench::eigen_set_threads(t);
  bench::openblas_set_threads(t);
  bench::torch_set_threads(t);
}

// ---- W1 / W2 ---------------------------------------------------------------------------
void w1_w2(torchtpu::Generator& g) {
  const int64_t big = g_quick ? (int64_t(1) << 22) : (int64_t(1) << 24);
  Tensor<float> X = randn({big}, g), W = randn({big}, g), B = randn({big}, g), Y = Tensor<float>::empty({big});
  std::vector<Tensor<float>> tmp;
  for (int i = 0; i < 6; ++i) tmp.push_back(Tensor<float>::empty({big}));
  for (int threads : {1, 2}) {
    set_threads(threads);
    // W2: the bandwidth limit
    std::vector<Cand> s = {{"stream triad", bench::stream_triad(Y.data_ptr(), X.data_ptr(), W.data_ptr(), big)},
                           {"stream copy", bench::stream_copy(Y.data_ptr(), X.data_ptr(), big)}};
    const std::vector<double> sm = measure(s);
    const double triad_gbs = 12.0 * double(big) / sm[0] * 1e-9, copy_gbs = 8.0 * double(big) / sm[1] * 1e-9;
    std::printf("W2   %d thread(s): triad %.1f GB/s, copy %.1f GB/s (STREAM byte counting)\n", threads, triad_gbs, copy_gbs);
    if (g_csv) {
      std::fprintf(g_csv, "W2,threads=%d,stream triad,%.9g,%.6g,GB/s\n", threads, sm[0], triad_gbs);
      std::fprintf(g_csv, "W2,threads=%d,stream copy,%.9g,%.6g,GB/s\n", threads, sm[1], copy_gbs);
    }
    for (int64_t n : {int64_t(1) << 16, big}) {
      Tensor<float> x = X.narrow(0, 0, n), w = W.narrow(0, 0, n), b = B.narrow(0, 0, n);
      Tensor<float> y = Tensor<float>(Y.narrow(0, 0, n));
      std::vector<Tensor<float>> t;
      for (auto& tt : tmp) t.push_back(tt.narrow(0, 0, n));
      const bench::W1Buffers bf{x.data_ptr(), w.data_ptr(), b.data_ptr(), y.data_ptr(), n};
      std::vector<Cand> c = {
          {"torchtpu", [=]() mutable { y.copy_(torchtpu::tanh(x * w + b) * torchtpu::sigmoid(x) + 0.5 * x); }},
          {"torchtpu strict (op/pass)", [=]() mutable {
             t[0].copy_(x * w);
             t[1].copy_(t[0] + b);
             t[2].copy_(torchtpu::tanh(t[1]));
             t[3].copy_(torchtpu::sigmoid(x));
             t[4].copy_(t[2] * t[3]);
             t[5].copy_(0.5 * x);
             y.copy_(t[4] + t[5]);
           }},
          {"Eigen", bench::eigen_w1(bf)},
          {"xtensor+xsimd", bench::xtensor_w1(bf)},
          {"libtorch", bench::torch_w1(bf)}};
      const std::string cfg = "n=2^" + std::to_string(n == big ? (g_quick ? 22 : 24) : 16) + " threads=" + std::to_string(threads);
      report("W1", cfg, c, "ns/elem", double(n));
      if (n == big) {
        // memory floor: W1 reads x, w, b and writes y (16 B/elem; +4 B/elem for the write
        // allocate, as STREAM's triad counting excludes it too)
        const double floor_ns = 16.0 / triad_gbs;
        std::printf("     memory floor at triad bandwidth: %.3f ns/elem\n", floor_ns);
        if (g_csv) std::fprintf(g_csv, "W1floor,%s,floor,%.6g,%.6g,ns/elem\n", cfg.c_str(), floor_ns * 1e-9 * double(n), floor_ns);
      }
    }
  }
}

// ---- W3 / W4 / W7 ------------------------------------------------------------------------
void w3_w4_w7(torchtpu::Generator& g) {
  std::vector<int64_t> sizes = g_quick ? std::vector<int64_t>{256, 512} : std::vector<int64_t>{256, 512, 1024, 2048};
  for (int threads : {1, 2}) {
    set_threads(threads);
    for (int64_t n : sizes) {
      Tensor<float> a = randn({n, n}, g), b = randn({n, n}, g), c = Tensor<float>::empty({n, n});
      const bench::GemmBuffers gb{a.data_ptr(), b.data_ptr(), nullptr, c.data_ptr(), n, n, n};
      std::vector<Cand> cs = {{"torchtpu", [=]() mutable { c.copy_(torchtpu::matmul(a, b)); }},
                              {"OpenBLAS sgemm", bench::openblas_gemm(gb, false)},
                              {"Eigen", bench::eigen_gemm(gb, false)},
                              {"libtorch mm", bench::torch_gemm(gb, false)}};
      report("W3", "n=" + std::to_string(n) + " threads=" + std::to_string(threads), cs, "GFLOP/s", 2.0 * double(n * n * n) * 1e-9);
    }
    if (g_avx2) continue;  // the AVX2 table (issue 14) has W1, W3 and W5 only
    {
      const int64_t m = 512, k = 1024, n = 1024;
      Tensor<float> x = randn({m, k}, g), w = randn({k, n}, g), bias = randn({n}, g), c = Tensor<float>::empty({m, n});
      const bench::GemmBuffers gb{x.data_ptr(), w.data_ptr(), bias.data_ptr(), c.data_ptr(), m, k, n};
      std::vector<Cand> cs = {{"torchtpu fused", [=]() mutable { c.copy_(torchtpu::relu(torchtpu::matmul(x, w) + bias)); }},
                              {"OpenBLAS sgemm + pass", bench::openblas_gemm(gb, true)},
                              {"libtorch addmm+relu_", bench::torch_gemm(gb, true)},
                              {"Eigen", bench::eigen_gemm(gb, true)}};
      report("W4", "512x1024@1024x1024 threads=" + std::to_string(threads), cs, "GFLOP/s", 2.0 * double(m * n * k) * 1e-9);
    }
    {
      const int64_t n = 1024;
      Tensor<float> a = randn({n, n}, g), b = randn({n, n}, g), c = Tensor<float>::empty({n, n});
      Tensor<torchtpu::bfloat16> ah = a.to<torchtpu::bfloat16>().eval(), bh = b.to<torchtpu::bfloat16>().eval();
      Tensor<torchtpu::bfloat16> ch = Tensor<torchtpu::bfloat16>::empty({n, n});
      std::vector<Cand> cs = {{"torchtpu bf16 (f32 acc)", [=]() mutable { ch.copy_(torchtpu::matmul(ah, bh)); }},
                              {"torchtpu f32", [=]() mutable { c.copy_(torchtpu::matmul(a, b)); }}};
      report("W7", "n=1024 threads=" + std::to_string(threads), cs, "GFLOP/s", 2.0 * double(n * n * n) * 1e-9);
    }
  }
}

// ---- W5 ----------------------------------------------------------------------------------
void w5(torchtpu::Generator& g) {
  for (int threads : {1, 2}) {
    set_threads(threads);
    for (auto dims : {std::vector<int64_t>{64, 128, 128, 10}, std::vector<int64_t>{784, 512, 512, 10}}) {
      Tensor<float> x = randn({1, dims[0]}, g);
      std::vector<Tensor<float>> w, b;
      for (int i = 0; i < 3; ++i) {
        w.push_back(randn({dims[size_t(i)], dims[size_t(i) + 1]}, g) * (1.0 / std::sqrt(double(dims[size_t(i)]))));
        b.push_back(randn({dims[size_t(i) + 1]}, g));
      }
      Tensor<float> h0 = Tensor<float>::empty({1, dims[1]}), h1 = Tensor<float>::empty({1, dims[2]});
      Tensor<float> y = Tensor<float>::empty({1, dims[3]});
      Tensor<float> eh0 = Tensor<float>::empty({1, dims[1]}), eh1 = Tensor<float>::empty({1, dims[2]});
      Tensor<float> ey = Tensor<float>::empty({1, dims[3]}), ty = Tensor<float>::empty({1, dims[3]});
      bench::MlpBuffers eb{x.data_ptr(), {w[0].data_ptr(), w[1].data_ptr(), w[2].data_ptr()},
                           {b[0].data_ptr(), b[1].data_ptr(), b[2].data_ptr()}, {eh0.data_ptr(), eh1.data_ptr()}, ey.data_ptr(),
                           {dims[0], dims[1], dims[2], dims[3]}};
      bench::MlpBuffers tb = eb;
      tb.y = ty.data_ptr();
      auto ours = [=]() mutable {
        // copy_: write into the preallocated outputs this closure shares with the caller
        h0.copy_(torchtpu::relu(torchtpu::matmul(x, w[0]) + b[0]));
        h1.copy_(torchtpu::relu(torchtpu::matmul(h0, w[1]) + b[1]));
        y.copy_(torchtpu::matmul(h1, w[2]) + b[2]);
      };
      std::vector<Cand> cs = {{"torchtpu", ours}, {"Eigen", bench::eigen_mlp(eb)}, {"libtorch (InferenceMode)", bench::torch_mlp(tb)}};
      std::string cfg = std::to_string(dims[0]) + "-" + std::to_string(dims[1]) + "-" + std::to_string(dims[2]) + "-" +
                        std::to_string(dims[3]) + " threads=" + std::to_string(threads);
      report("W5", cfg, cs, "us", 1e-6);
      // allocations per forward after the first call (the malloc hook above)
      ours();
      const long before = g_allocs.load();
      for (int i = 0; i < 1000; ++i) ours();
      const double per_call = double(g_allocs.load() - before) / 1000.0;
      const long tb0 = g_allocs.load();
      for (int i = 0; i < 100; ++i) cs[2].run();
      const double torch_per_call = double(g_allocs.load() - tb0) / 100.0;
      double maxdiff = 0;
      for (int64_t i = 0; i < dims[3]; ++i) maxdiff = std::max(maxdiff, double(std::abs(y.data_ptr()[i] - ey.data_ptr()[i])));
      std::printf("     allocations per forward: torchtpu %.2f, libtorch %.1f; |torchtpu - Eigen| = %.2g\n", per_call,
                  torch_per_call, maxdiff);
      if (g_csv) std::fprintf(g_csv, "W5alloc,%s,torchtpu,%.3f,%.3f,allocs/call\nW5alloc,%s,libtorch,%.3f,%.3f,allocs/call\n",
                              cfg.c_str(), per_call, per_call, cfg.c_str(), torch_per_call, torch_per_call);
    }
  }
}

// ---- W6 ----------------------------------------------------------------------------------
void w6(torchtpu::Generator& g) {
  for (int threads : {1, 2}) {
    set_threads(threads);
    {
      const int64_t r = 4096, c = 1024;
      Tensor<float> x = randn({r, c}, g) * 3.0;
      Tensor<float> y = Tensor<float>::empty({r, c});
      Tensor<float> y2 = Tensor<float>::empty({r, c});
      const bench::RowsBuffers rb{x.data_ptr(), y2.data_ptr(), r, c};
      std::vector<Cand> cs = {{"torchtpu", [=]() mutable { y.copy_(torchtpu::softmax(x, 1)); }},
                              {"Eigen", bench::eigen_softmax(rb)},
                              {"xtensor+xsimd", bench::xtensor_softmax(rb)},
                              {"libtorch", bench::torch_softmax(rb)}};
      report("W6", "softmax rows 4096x1024 threads=" + std::to_string(threads), cs, "ns/elem", double(r * c));
    }
    const int64_t n = 4096;
    Tensor<float> x = randn({n, n}, g);
    for (int axis : {0, 1}) {
      Tensor<float> y = Tensor<float>::empty({n}), y2 = Tensor<float>::empty({n});
      const bench::RowsBuffers rb{x.data_ptr(), y2.data_ptr(), n, n};
      std::vector<Cand> cs = {{"torchtpu", [=]() mutable { y.copy_(torchtpu::sum(x, {axis})); }},
                              {"Eigen", bench::eigen_sum(rb, axis)},
                              {"xtensor+xsimd", bench::xtensor_sum(rb, axis)},
                              {"libtorch", bench::torch_sum(rb, axis)}};
      report("W6", std::string("sum axis ") + std::to_string(axis) + " 4096x4096 threads=" + std::to_string(threads), cs,
             "ns/elem", double(n * n));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Peers at their best: OpenBLAS 0.3.21 needs its core type named on this CPU, libtorch its
  // AVX-512 kernels and passive OpenMP waiting. Set them for this process (re-exec once);
  // torchtpu reads none of them. OpenBLAS reads OPENBLAS_CORETYPE once, in its load-time
  // constructor, and 0.3.21 has no API to set the core type (cblas.h: only getters), so the
  // environment of this process, set before the re-exec, is the only supported way.
  if (!std::getenv("TORCHTPU_BENCH_CHILD")) {
    setenv("TORCHTPU_BENCH_CHILD", "1", 1);
    setenv("OPENBLAS_CORETYPE", g_avx2 ? "Haswell" : "Cooperlake", 0);
    // OpenBLAS's idle threads otherwise spin for 2^28 cycles (~0.1 s) after each call and
    // take a core from whichever candidate runs next (W4 at 2 threads measured 0.5-0.64x
    // for the candidate after OpenBLAS); 2^4 cycles lets them sleep at once. Calls here last
    // milliseconds, so the wake-up costs OpenBLAS nothing measurable.
    setenv("OPENBLAS_THREAD_TIMEOUT", "4", 0);
    setenv("ATEN_CPU_CAPABILITY", g_avx2 ? "avx2" : "avx512", 0);
    setenv("OMP_WAIT_POLICY", "passive", 0);
    if (g_avx2) {
      setenv("TORCHTPU_CPU_ISA", "avx2", 0);
      // A torchtpu that does not know TORCHTPU_CPU_ISA (before the Highway port) still runs
      // its AVX-512 path; its AVX2 column would then be AVX-512 under the wrong name, so
      // the scalar path runs instead and the report says so.
      if (torchtpu::detail::cpu_has_avx512()) setenv("TORCHTPU_DISABLE_SIMD", "1", 1);
    }
    execv("/proc/self/exe", argv);
  }
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) g_quick = true;
    else if (!std::strcmp(argv[i], "--csv") && i + 1 < argc) g_csv = std::fopen(argv[++i], "w");
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
  }
  info("openblas", bench::openblas_config() + " (OPENBLAS_CORETYPE=" + std::getenv("OPENBLAS_CORETYPE") +
                       ", OPENBLAS_THREAD_TIMEOUT=" + std::getenv("OPENBLAS_THREAD_TIMEOUT") + ")");
  info("libtorch", bench::torch_config() + " (ATEN_CPU_CAPABILITY=" + std::getenv("ATEN_CPU_CAPABILITY") + ", OMP_WAIT_POLICY=passive)");
  if (g_avx2) {
    const char* isa = std::getenv("TORCHTPU_CPU_ISA");
    const char* off = std::getenv("TORCHTPU_DISABLE_SIMD");
    info("isa", "avx2");
    info("torchtpu isa", std::string("TORCHTPU_CPU_ISA=") + (isa ? isa : "") +
                             (off ? std::string(", TORCHTPU_DISABLE_SIMD=") + off +
                                        " (this torchtpu ignores TORCHTPU_CPU_ISA: scalar path)"
                                  : std::string("")));
  }
  info("torchtpu", std::string("instruction set ") + torchtpu::detail::cpu_isa_name(torchtpu::detail::cpu_isa()) +
                       ", f32 GEMM kernels " + (torchtpu::detail::cpu_has_vector_gemm() ? torchtpu::detail::sgemm_kernels().name : "scalar") +
                       ", AVX512-BF16 " +
                       (torchtpu::detail::cpu_has_avx512_bf16() ? "yes" : "no") + ", default threads " +
                       std::to_string(torchtpu::get_num_threads()));
  info("loadavg at start", loadavg());
  const double peak = bench::fma_peak_gflops();
  std::printf("# FMA peak (1 core, %s): %.1f GFLOP/s\n", g_avx2 ? "AVX2" : "AVX-512", peak);
  if (g_csv) std::fprintf(g_csv, "peak,1 core,fma,%.6g,%.6g,GFLOP/s\n", peak, peak);
  torchtpu::Generator g(42);
  if (only.empty() || only == "W1") w1_w2(g);
  if (only.empty() || only == "W3") w3_w4_w7(g);
  if (only.empty() || only == "W5") w5(g);
  if ((only.empty() && !g_avx2) || only == "W6") w6(g);
  info("loadavg at end", loadavg());
  if (g_csv) std::fclose(g_csv);
  return 0;
}
