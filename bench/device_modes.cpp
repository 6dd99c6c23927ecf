// bench/device_modes.cpp — fused vs strict execution on the cpu and on a PJRT device (the TPU
// emulator by default): a 10-op elementwise chain over 2^22 floats and a 3-layer MLP forward;
// and first-call (compile) vs cached-call latency, in memory and from TORCHTPU_CACHE_DIR.
//
// Run (one line): TORCHTPU_TPU_EMULATOR_PATH=build/src/device/libtorchtpu_tpu_emulator.so
//   build/bench/bench_device_modes [device=tpu] [reps=5]
// On the cpu, "strict" is written as one op per statement (the cpu engine fuses within each
// expression in every mode); on PJRT devices it is ExecutionMode::Strict. Times are medians.
#include <algorithm>   // std::sort
#include <chrono>      // std::chrono::steady_clock
#include <cstdio>      // std::printf
#include <cstdlib>     // std::atoi
#include <ctime>       // clock_gettime, CLOCK_PROCESS_CPUTIME_ID
#include <filesystem>  // std::filesystem::temp_directory_path
#include <string>      // std::string
#include <vector>      // std::vector

#include <torchtpu/device.hpp>  // Tensor, modes, accelerator, the device runtime

#include "workloads.hpp"  // chain_fused, chain_per_op, Mlp, mlp_fused, mlp_per_op, wait_ready

using namespace torchtpu;

namespace {

/// Median wall time and median process CPU time (all threads) of `reps` calls, in ms. The CPU
/// time is the robust figure on a shared, loaded machine; wall time is what a user sees.
struct Timing {
  double wall = 0, cpu = 0;
};
inline double process_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}
template <class F>
Timing measure(int reps, F&& f) {
  std::vector<double> w, c;
  for (int i = 0; i < reps; ++i) {
    const double c0 = process_cpu_ms();
    const auto t0 = std::chrono::steady_clock::now();
    f();
    w.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    c.push_back(process_cpu_ms() - c0);
  }
  std::sort(w.begin(), w.end());
  std::sort(c.begin(), c.end());
  return {w[w.size() / 2], c[c.size() / 2]};
}
template <class F>
double median_ms(int reps, F&& f) {
  return measure(reps, f).wall;
}

/// 10 cheap arithmetic ops (memory-bound on the cpu), one expression and one op per statement.
Tensor<float> arith_fused(const Tensor<float>& x) {
  return Tensor<float>(maximum(((x * 0.5f + 0.25f) * x - 1.0f) * 0.75f + x, -x) * 2.0f - 0.5f);
}
Tensor<float> arith_per_op(const Tensor<float>& x) {
  Tensor<float> a = x * 0.5f;
  Tensor<float> b = a + 0.25f;
  Tensor<float> c = b * x;
  Tensor<float> d = c - 1.0f;
  Tensor<float> e = d * 0.75f;
  Tensor<float> f = e + x;
  Tensor<float> n = -x;
  Tensor<float> g = maximum(f, n);
  Tensor<float> h = g * 2.0f;
  return Tensor<float>(h - 0.5f);
}

using bench::chain_fused;  // the workloads shared with bench/xla_capi.cpp (bench/workloads.hpp)
using bench::chain_per_op;
using bench::Mlp;
using bench::mlp_fused;
using bench::mlp_per_op;

void report(const char* what, Timing strict, Timing fused) {
  const double r = strict.cpu / fused.cpu;
  std::printf("%-40s strict %9.3f ms (cpu %9.3f)  fused %9.3f ms (cpu %9.3f)  speed-up wall %5.2fx cpu %5.2fx%s\n",
              what, strict.wall, strict.cpu, fused.wall, fused.cpu, strict.wall / fused.wall, r,
              r >= 1.5 ? "" : "  (below the 1.5x floor)");
}

}  // namespace

int main(int argc, char** argv) {
  const Device dev(argc > 1 ? argv[1] : "tpu");
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  std::printf("device: %s\n", accelerator::info(dev.kind()).str().c_str());
  Generator gen(1);
  const int64_t n = int64_t(1) << 22;
  Tensor<float> x = randn<float>({n}, gen);
  Mlp m{randn<float>({512, 512}, gen), randn<float>({512}, gen), randn<float>({512, 512}, gen),
        randn<float>({512}, gen),      randn<float>({512, 10}, gen), randn<float>({10}, gen)};
  Tensor<float> xb = randn<float>({256, 512}, gen);

  std::printf("\n-- cpu (strict = one op per statement; fused = one expression) --\n");
  report("10-op arith chain, 2^22 f32", measure(reps, [&] { arith_per_op(x); }),
         measure(reps, [&] { arith_fused(x); }));
  Tensor<float> xs = randn<float>({1024}, gen);
  report("10-op arith chain, 2^10 f32", measure(reps * 20, [&] { arith_per_op(xs); }),
         measure(reps * 20, [&] { arith_fused(xs); }));
  report("10-op exp/tanh/sigmoid chain, 2^22 f32", measure(reps, [&] { chain_per_op(x); }),
         measure(reps, [&] { chain_fused(x); }));
  report("3-layer MLP 256x512-512-512-10", measure(reps, [&] { mlp_per_op(m, xb); }),
         measure(reps, [&] { mlp_fused(m, xb); }));

  if (!dev.is_cpu()) {
    std::printf("\n-- %s (ExecutionMode::Strict vs ::Fused; until the result is computed, no host copy) --\n",
                dev.str().c_str());
    auto dx = x.to(dev), dxb = xb.to(dev);
    Mlp dm{m.w1.to(dev), m.b1.to(dev), m.w2.to(dev), m.b2.to(dev), m.w3.to(dev), m.b3.to(dev)};
    auto timed = [&](ExecutionMode mode, auto&& f, int n = 0) {
      ExecutionModeGuard g(mode);
      bench::wait_ready(f());  // compiles
      return measure(n ? n : reps, [&] {
        bench::wait_ready(f());  // until computed: sync() alone does not wait for the execution
      });
    };
    report("10-op arith chain (per-op statements)", timed(ExecutionMode::Strict, [&] { return arith_per_op(dx); }),
           timed(ExecutionMode::Fused, [&] { return arith_per_op(dx); }));
    auto dxs = xs.to(dev);
    report("10-op arith chain, 2^10 f32 (dispatch-bound)",
           timed(ExecutionMode::Strict, [&] { return arith_per_op(dxs); }, reps * 20),
           timed(ExecutionMode::Fused, [&] { return arith_per_op(dxs); }, reps * 20));
    report("10-op exp/tanh/sigmoid chain", timed(ExecutionMode::Strict, [&] { return chain_per_op(dx); }),
           timed(ExecutionMode::Fused, [&] { return chain_per_op(dx); }));
    report("3-layer MLP 256x512-512-512-10", timed(ExecutionMode::Strict, [&] { return mlp_per_op(dm, dxb); }),
           timed(ExecutionMode::Fused, [&] { return mlp_per_op(dm, dxb); }));

    std::printf("\n-- compile latency on %s (10-op chain on [8, 8]) --\n", dev.str().c_str());
    auto& cache = pjrt::CompilationCache::global();
    const auto dir = std::filesystem::temp_directory_path() / "torchtpu_bench_cache";
    std::filesystem::remove_all(dir);
    cache.set_disk_dir(dir.string());
    auto small = randn<float>({8, 8}, gen).to(dev);
    auto run_small = [&] { chain_fused(small).cpu(); };
    const auto c0 = cache.stats();
    const double first = median_ms(1, run_small);
    const double cached = median_ms(reps * 4, run_small);
    cache.clear_memory();
    device::TextMemo::global().clear();
    const double from_disk = median_ms(1, run_small);
    const auto c1 = cache.stats();
    std::printf("first call (text + compile + run) %8.3f ms\n", first);
    std::printf("cached call (memory)              %8.3f ms   (%.1fx faster)\n", cached, first / cached);
    std::printf("fresh memory, executable from disk %7.3f ms   (%.1fx faster than compiling)\n", from_disk,
                first / from_disk);
    std::printf("cache: %llu compiles, %llu memory hits, %llu disk hits, %llu disk writes\n",
                static_cast<unsigned long long>(c1.compiles - c0.compiles),
                static_cast<unsigned long long>(c1.memory_hits - c0.memory_hits),
                static_cast<unsigned long long>(c1.disk_hits - c0.disk_hits),
                static_cast<unsigned long long>(c1.disk_writes - c0.disk_writes));
    cache.set_disk_dir(std::nullopt);
    std::filesystem::remove_all(dir);
  }
  return 0;
}
