// bench/device_vs_jax.cpp — torchtpu's side of tools/device_check.sh: the fused 10-op chain over
// 2^22 floats and the 3-layer MLP forward (256x512-512-512-10) on a PJRT device, timed as the
// median of N calls, each run to completion (bench::wait_ready). tools/device_check_jax.py
// times jax.jit of the same functions. Prints `time_ms <case> <ms>` lines.
// Run: build/bench/bench_device_vs_jax [reps=20] [device=cuda]
#include <algorithm>  // std::sort
#include <chrono>     // std::chrono::steady_clock
#include <cstdio>     // std::printf
#include <cstdlib>    // std::atoi
#include <vector>     // std::vector

#include <torchtpu/device.hpp>  // Tensor, sync, accelerator, the device runtime

#include "workloads.hpp"  // chain_fused, Mlp, mlp_fused, wait_ready

using namespace torchtpu;

template <class F>
static double median_ms(int reps, F&& f) {
  f();  // compile + warm up
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
  const Device dev(argc > 2 ? argv[2] : "cuda");
  std::printf("# %s\n", accelerator::info(dev.kind()).str().c_str());
  Generator gen(0);
  auto x = randn<float>({int64_t(1) << 22}, gen, dev);
  auto xb = randn<float>({256, 512}, gen, dev);
  auto w1 = randn<float>({512, 512}, gen, dev), b1 = randn<float>({512}, gen, dev);
  auto w2 = randn<float>({512, 512}, gen, dev), b2 = randn<float>({512}, gen, dev);
  auto w3 = randn<float>({512, 10}, gen, dev), b3 = randn<float>({10}, gen, dev);
  // Each call is timed until its result is computed (bench::wait_ready, jax's block_until_ready):
  // torchtpu::sync() alone returns once the execution is enqueued.
  const double chain = median_ms(reps, [&] { bench::wait_ready(bench::chain_fused(x)); });
  const bench::Mlp m{w1, b1, w2, b2, w3, b3};
  const double mlp = median_ms(reps, [&] { bench::wait_ready(bench::mlp_fused(m, xb)); });
  std::printf("time_ms chain %.4f\ntime_ms mlp %.4f\n", chain, mlp);
  return 0;
}
