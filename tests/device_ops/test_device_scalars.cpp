// tests/device_ops/test_device_scalars.cpp — scalars of device expressions are program inputs
// (issue 12 item 6): a loop whose scalar changes every step compiles once per program shape,
// not once per value; values against float64 references computed here, and against the cpu.
//
// Each case uses shapes no other case of this file uses, so its compile counts are exact.
// Tolerances: f32 results vs float64 references 1e-6 relative (one or two f32 roundings per
// step, 10 steps); bf16 vs the cpu engine 0 (both compute bf16 * scalar in f32, rounded once).
#include <cstdint>  // int64_t
#include <vector>   // std::vector

#include "helpers.hpp"  // host_values, check_close, test_input, test_device

using namespace torchtpu;
using pjrt::CompilationCache;

namespace {
std::vector<double> host_f64(const Tensor<float>& t) { return host_values(t); }
}  // namespace

TEST_CASE("scalars: p = p - lr * g with a decaying lr compiles at most twice in 10 steps", "[pjrt]") {
  auto& cache = CompilationCache::global();
  const Tensor<float> p0 = test_input({7, 5}, 1), g0 = test_input({7, 5}, 2);
  const Device dev = test_device();
  for (ExecutionMode m : {ExecutionMode::Fused, ExecutionMode::Strict}) {
    ExecutionModeGuard mode(m);
    INFO("mode " << execution_mode_name(m));
    Tensor<float> p = Tensor<float>(p0 * 1.0f).to(dev);  // own storage (not shared with p0)
    const Tensor<float> g = g0.to(dev);
    std::vector<double> ref = host_f64(p0);
    const std::vector<double> gv = host_f64(g0);
    const auto c0 = cache.stats();
    float lr = 0.1f;
    for (int step = 0; step < 10; ++step) {
      p = p - lr * g;
      torchtpu::sync();  // each step runs (observed), as in a training loop
      for (size_t i = 0; i < ref.size(); ++i) ref[i] = double(float(ref[i] - double(float(lr * float(gv[i])))));
      lr *= 0.7f;
    }
    const auto c1 = cache.stats();
    // Fused: one program (the statement p - lr*g); strict: one per op (multiply, subtract).
    CHECK(c1.compiles - c0.compiles <= 2);
    CHECK(c1.memory_hits - c0.memory_hits >= (m == ExecutionMode::Fused ? 9u : 18u));
    const auto got = host_f64(p);
    for (size_t i = 0; i < ref.size(); ++i) CHECK_THAT(got[i], Catch::WithinRel(ref[i], 1e-6) || Catch::WithinAbs(ref[i], 1e-7));
  }
}

TEST_CASE("scalars: y = x * lr observed every step compiles once", "[pjrt]") {
  auto& cache = CompilationCache::global();
  const Tensor<float> xc = test_input({3, 11}, 3);
  const Tensor<float> x = xc.to(test_device());
  const auto xv = host_f64(xc);
  const auto c0 = cache.stats();
  const auto s0 = device::stats();
  for (int step = 0; step < 10; ++step) {
    const float lr = 1.0f / float(step + 3) + 1e-3f;  // values no other case uses
    Tensor<float> y = x * lr;
    const auto got = host_f64(y);  // observed: runs and downloads
    for (size_t i = 0; i < xv.size(); ++i) CHECK(got[i] == double(float(xv[i]) * lr));
  }
  const auto c1 = cache.stats();
  CHECK(c1.compiles - c0.compiles == 1);
  CHECK(c1.memory_hits - c0.memory_hits == 9);
  CHECK(device::stats().texts_built - s0.texts_built == 1);
  CHECK(device::stats().scalar_uploads - s0.scalar_uploads == 10);  // one per new value
  // The same values again: every scalar buffer comes from the cache, nothing is uploaded.
  const auto s1 = device::stats();
  for (int step = 0; step < 10; ++step) Tensor<float>(x * (1.0f / float(step + 3) + 1e-3f)).cpu();
  CHECK(device::stats().scalar_uploads == s1.scalar_uploads);
  CHECK(cache.stats().compiles == c1.compiles);
}

TEST_CASE("scalars: x*0.5 + x*0.5 is one program, compiled once, also for unequal scalars", "[pjrt]") {
  auto& cache = CompilationCache::global();
  const Tensor<float> xc = test_input({2, 13}, 4);
  const Tensor<float> x = xc.to(test_device());
  const auto xv = host_f64(xc);
  const auto c0 = cache.stats();
  const auto s0 = device::stats();
  Tensor<float> y = x * 0.5f + x * 0.5f;
  const auto got = host_f64(y);
  CHECK(device::stats().executions - s0.executions == 1);
  CHECK(cache.stats().compiles - c0.compiles == 1);
  for (size_t i = 0; i < xv.size(); ++i) CHECK(got[i] == double(float(xv[i]) * 0.5f + float(xv[i]) * 0.5f));
  // Two scalars that differ give the same program (each scalar is a parameter of its own).
  Tensor<float> z = x * 0.25f + x * 0.75f;
  const auto gz = host_f64(z);
  CHECK(cache.stats().compiles - c0.compiles == 1);
  for (size_t i = 0; i < xv.size(); ++i) CHECK(gz[i] == double(float(xv[i]) * 0.25f + float(xv[i]) * 0.75f));
}

TEST_CASE("scalars: dtypes follow promotion (bf16 opmath, integers exact, where, cpu rank-0)", "[pjrt]") {
  auto& cache = CompilationCache::global();
  const Device dev = test_device();
  SECTION("bf16 tensor times a changing scalar: computed in f32, as on the cpu") {
    const Tensor<bfloat16> h = test_input({5, 3}, 5).to<bfloat16>().eval();
    const Tensor<bfloat16> dh = h.to(dev);
    const auto c0 = cache.stats();
    for (double s : {0.1, 0.3, 3.7}) check_close(Tensor<bfloat16>(dh * s), Tensor<bfloat16>(h * s), 0.0);
    CHECK(cache.stats().compiles - c0.compiles <= 1);
  }
  SECTION("int64 tensor plus a changing integer scalar: an exact int64 input") {
    // Past 2^24 (a float trip would round them); below 2^53, the emulator's exact range
    // (docs/devices.md); on real XLA the values past 2^53 are exact too.
    const bool emulated = accelerator::info(dev.kind()).emulated;
    const Tensor<int64_t> l = {1, 2, -3};
    const Tensor<int64_t> dl = l.to(dev);
    const auto c0 = cache.stats();
    std::vector<int64_t> ks = {(int64_t{1} << 40) + 1, (int64_t{1} << 40) + 3, int64_t{-7}};
    if (!emulated) ks.push_back((int64_t{1} << 53) + 1);
    for (int64_t k : ks) {
      // Compared as int64 (host_values' doubles would round these).
      const Tensor<int64_t> back = Tensor<int64_t>(dl + k).cpu();
      for (int i = 0; i < 3; ++i) CHECK(back.data_ptr()[i] == l.data_ptr()[i] + k);
    }
    CHECK(cache.stats().compiles - c0.compiles <= 1);
  }
  SECTION("a scalar as where's value operand") {
    const Tensor<float> xc = test_input({4, 9}, 6);
    const Tensor<float> x = xc.to(dev);
    const auto c0 = cache.stats();
    for (float v : {0.25f, -1.5f}) {
      const auto got = host_f64(Tensor<float>(where(x > 0.0f, x, v)));
      const auto xv = host_f64(xc);
      for (size_t i = 0; i < xv.size(); ++i) CHECK(got[i] == (xv[i] > 0 ? xv[i] : double(v)));
    }
    CHECK(cache.stats().compiles - c0.compiles <= 1);
  }
  SECTION("pow with a scalar exponent as a parameter: negative bases, integral exponents") {
    const Tensor<float> xc = test_input({3, 8}, 9);  // values in [-2, 2)
    const Tensor<float> x = xc.to(dev);
    const auto c0 = cache.stats();
    for (double e : {2.0, 3.0, 0.5}) {
      // 0.5 gives NaN for the negative bases on both sides (check_close matches NaN with NaN)
      check_close(Tensor<float>(pow(x, e)), Tensor<float>(pow(xc, e)), 1e-6);
    }
    CHECK(cache.stats().compiles - c0.compiles <= 1);
  }
  SECTION("a rank-0 cpu tensor joining a device expression: a cached scalar buffer too") {
    const Tensor<float> xc = test_input({6, 2}, 7);
    const Tensor<float> x = xc.to(dev);
    Tensor<float> s = Tensor<float>::empty({});
    const auto c0 = cache.stats();
    const auto s0 = device::stats();
    for (float v : {2.0f, -0.5f, 2.0f}) {
      s.fill_(v);
      check_close(Tensor<float>(x * s), Tensor<float>(xc * v), 0.0);
    }
    CHECK(cache.stats().compiles - c0.compiles == 1);
    CHECK(device::stats().scalar_uploads - s0.scalar_uploads <= 2);  // 2.0 once (then cached)
  }
}

TEST_CASE("scalars: the scalar buffer cache is bounded and stays correct past its size", "[pjrt]") {
  const Tensor<float> xc = test_input({1, 17}, 8);
  const Tensor<float> x = xc.to(test_device());
  const auto xv = host_f64(xc);
  const size_t n = device::PendingGraph::kScalarCacheSize + 40;
  std::vector<Tensor<float>> ys;
  for (size_t k = 0; k < n; ++k) ys.push_back(Tensor<float>(x + float(k)));  // deferred together
  for (size_t k = 0; k < n; k += 37) {
    const auto got = host_f64(ys[k]);
    for (size_t i = 0; i < xv.size(); ++i) CHECK(got[i] == double(float(xv[i]) + float(k)));
  }
  const auto s0 = device::stats();
  Tensor<float>(x + 1e6f).cpu();  // a value not seen before: uploaded
  CHECK(device::stats().scalar_uploads - s0.scalar_uploads == 1);
}
