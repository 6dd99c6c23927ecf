// bench/interop.cpp — cost of the zero-copy conversions between libtorch and torchtpu
// (from_torch, to_torch, and the pair) for a 1 KiB and a 1 GiB float32 tensor. The cost must
// not depend on the size: nothing is copied, only handles and a reference are made.
//
// Usage: bench_interop [ITERATIONS]   (default 1000000; prints ns per conversion, best of 5)
#include <algorithm>  // std::min
#include <chrono>     // std::chrono::steady_clock
#include <cstdint>    // int64_t, uintptr_t
#include <cstdio>     // std::printf
#include <cstdlib>    // std::atoll

#include <ATen/ATen.h>  // at::empty

#include <torchtpu/interop/torch.hpp>  // from_torch, to_torch
#include <torchtpu/torchtpu.hpp>       // the library

namespace {

volatile uintptr_t sink;  // keeps the measured conversions from being optimised away

/// Best-of-5 nanoseconds per call of `f`, over `iters` calls each.
template <class F>
double ns_per_call(int64_t iters, F&& f) {
  double best = 1e300;
  for (int rep = 0; rep < 5; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < iters; ++i) f();
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::nano>(t1 - t0).count() / double(iters));
  }
  return best;
}

void run(const char* label, int64_t numel, int64_t iters) {
  at::Tensor t = at::empty({numel}, at::kFloat);  // never touched: pages need not be resident
  torchtpu::Tensor<float> own = torchtpu::empty<float>({numel});
  const double from = ns_per_call(iters, [&] {
    torchtpu::Tensor<float> x = torchtpu::from_torch<float>(t);
    sink = uintptr_t(x.data_ptr());
  });
  const double to = ns_per_call(iters, [&] {
    at::Tensor r = torchtpu::to_torch(own);
    sink = uintptr_t(r.data_ptr());
  });
  const double pair = ns_per_call(iters, [&] {
    torchtpu::Tensor<float> x = torchtpu::from_torch<float>(t);
    at::Tensor r = torchtpu::to_torch(x);
    sink = uintptr_t(r.data_ptr());
  });
  std::printf("%-6s from_torch %7.1f ns   to_torch %7.1f ns   from_torch+to_torch %7.1f ns\n", label,
              from, to, pair);
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t iters = argc > 1 ? std::atoll(argv[1]) : 1000000;
  run("1 KiB", 1024 / 4, iters);
  run("1 GiB", (int64_t(1) << 30) / 4, iters);
  return 0;
}
