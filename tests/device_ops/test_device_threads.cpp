// tests/device_ops/test_device_threads.cpp — the device runtime driven from 16 threads at once
// (issue 12, ThreadSanitizer): the compilation cache (hits and misses, same and different
// programs), the deferred graph of one device shared by every thread (docs/devices.md: one
// graph per device; statements of several threads interleave in it), flushes and observations
// from many threads, two devices, strict mode, shared tensors read concurrently and a tensor
// written by one thread then read by all. Run under -Db_sanitize=thread by scripts/test (a
// data race fails the run); the values checked here hold in every build.
//
// References: computed on the cpu from the same inputs (the reference device); tolerance 1e-5
// relative to 1 + |value| (f32 elementwise ops rounded once on both sides; sums in another order).
#include <atomic>   // std::atomic
#include <barrier>  // std::barrier
#include <string>   // std::string
#include <thread>   // std::thread
#include <vector>   // std::vector

#include "helpers.hpp"  // host_values, check_close, test_input, test_device

using namespace torchtpu;
using pjrt::CompilationCache;

namespace {
constexpr int kThreads = 16;

/// Runs `body(i)` on kThreads threads that start together; returns the failures' messages.
template <class F>
std::vector<std::string> on_threads(F body) {
  std::barrier start(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> ts;
  for (int i = 0; i < kThreads; ++i)
    ts.emplace_back([&, i] {
      start.arrive_and_wait();
      try {
        body(i);
      } catch (const std::exception& e) {
        errors[size_t(i)] = e.what();
      }
    });
  for (auto& t : ts) t.join();
  std::vector<std::string> bad;
  for (auto& e : errors)
    if (!e.empty()) bad.push_back(e);
  return bad;
}

/// Largest error of `got` against `want` relative to 1 + |want| (elementwise).
double worst_rel(const std::vector<double>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) return 1e30;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::fabs(got[i] - want[i]) / (1 + std::fabs(want[i])));
  return worst;
}

/// A small text of one elementwise op with a constant `k` (a distinct program per k).
std::string program(int k, const std::string& shape) {
  return "module @m {\n  func.func public @main(%arg0: tensor<" + shape + "xf32>) -> tensor<" + shape +
         "xf32> {\n    %0 = stablehlo.constant dense<" + std::to_string(k) + ".0> : tensor<" + shape +
         "xf32>\n    %1 = stablehlo.add %arg0, %0 : tensor<" + shape + "xf32>\n    return %1 : tensor<" + shape +
         "xf32>\n  }\n}\n";
}
}  // namespace

TEST_CASE("threads: the compilation cache from 16 threads, same and different programs", "[pjrt][threads]") {
  auto& cache = CompilationCache::global();
  const auto c0 = cache.stats();
  std::vector<std::shared_ptr<pjrt::Executable>> shared(kThreads);
  std::vector<std::shared_ptr<pjrt::Client>> clients(kThreads);
  const auto bad = on_threads([&](int i) {
    // The first use of the device in this process: 16 threads load the plugin at once.
    clients[size_t(i)] = device::client_for(test_device().kind());
    (void)device::graph_for(test_device());
    const auto& client = clients[size_t(i)];
    shared[size_t(i)] = cache.get_or_compile(client, program(1000, "3x5"));  // one text for all
    for (int r = 0; r < 3; ++r) cache.get_or_compile(client, program(2000 + i % 4, "3x5"));  // 4 texts
  });
  CHECK(bad.empty());
  for (const auto& e : shared) CHECK(e == shared[0]);
  for (const auto& c : clients) CHECK(c == clients[0]);  // one client per plugin
  const auto& client = clients[0];
  const auto c1 = cache.stats();
  // 1 + 4 programs, each compiled once however many threads asked at the same time.
  CHECK(c1.compiles - c0.compiles == 5);
  CHECK(c1.memory_hits - c0.memory_hits == uint64_t(kThreads - 1 + 3 * kThreads - 4));
  // and the executables run
  float in[15];
  for (int k = 0; k < 15; ++k) in[k] = float(k);
  const std::vector<int64_t> dims = {3, 5};
  const pjrt::Buffer b = client->buffer_from_host(in, ScalarType::Float, dims, 0);
  const pjrt::Buffer* args[] = {&b};
  auto out = shared[0]->execute(std::span<const pjrt::Buffer* const>(args, 1), 0, true);
  float got[15];
  out.at(0).to_host(got, sizeof got);
  for (int k = 0; k < 15; ++k) CHECK(got[k] == float(k) + 1000.0f);
}

TEST_CASE("threads: deferred statements, flushes and observations from 16 threads", "[pjrt][threads]") {
  const Device dev = test_device();
  const Tensor<float> ac = test_input({6, 9}, 1), bc = test_input({6, 9}, 2);
  const Tensor<float> a = ac.to(dev), b = bc.to(dev);  // shared, read by every thread
  for (int bound : {1024, 5}) {
  // 5: the graph fills up and flushes itself (make_room) in the middle of every thread's work
  set_max_deferred_statements(bound);
  for (ExecutionMode m : {ExecutionMode::Fused, ExecutionMode::Strict, ExecutionMode::Debug}) {
    if (bound != 1024 && m != ExecutionMode::Fused) continue;
    ExecutionModeGuard mode(m);
    INFO("mode " << execution_mode_name(m) << ", max_deferred_statements " << bound);
    std::vector<double> worst(kThreads, 0);
    const auto bad = on_threads([&](int i) {
      const float s = 0.25f * float(i + 1);  // a scalar of this thread (a program input)
      Tensor<float> own = Tensor<float>(ac * float(i)).to(dev);  // written by this thread only
      Tensor<float> ref = ac * float(i);
      for (int r = 0; r < 12; ++r) {
        own = own * 0.5f + tanh(a) * s - b;  // deferred in the shared graph
        ref = ref * 0.5f + tanh(ac) * s - bc;
        if (r % 3 == i % 3) torchtpu::sync();  // flushes of every thread's statements
        if (r % 5 == 4) worst[size_t(i)] = std::max(worst[size_t(i)], worst_rel(host_values(own), host_values(ref)));
      }
      Tensor<float> red = (own * b).sum({1});  // a reduction over a shared input
      Tensor<float> red_ref = (ref * bc).sum({1});
      worst[size_t(i)] = std::max(worst[size_t(i)], worst_rel(host_values(red), host_values(red_ref)));
      worst[size_t(i)] = std::max(worst[size_t(i)], worst_rel(host_values(own), host_values(ref)));
    });
    CHECK(bad.empty());
    for (const auto& e : bad) WARN(e);
    for (int i = 0; i < kThreads; ++i) CHECK(worst[size_t(i)] <= 1e-5);
  }
  }
  set_max_deferred_statements(1024);
}

TEST_CASE("threads: a tensor written by one thread, then read by 16; two devices", "[pjrt][threads]") {
  const Device d0 = test_device();
  const bool two = accelerator::device_count(d0.kind()) >= 2;
  const Device d1 = two ? Device(d0.kind(), 1) : d0;
  const Tensor<float> xc = test_input({4, 7}, 3);
  Tensor<float> w = xc.to(d0);
  std::barrier written(kThreads);
  std::vector<double> worst(kThreads, 0);
  const auto bad = on_threads([&](int i) {
    if (i == 0) w = w * 2.0f + 1.0f;  // the only writer (then everyone reads it)
    written.arrive_and_wait();
    const Device mine = i % 2 ? d1 : d0;
    const Tensor<float> local = w.to(mine);  // device-to-device through the host when needed
    const auto all = host_values(w);          // 16 downloads of one buffer at once
    Tensor<float> y = exp(local * 0.125f) * float(i);
    const Tensor<float> want = exp((xc * 2.0f + 1.0f) * 0.125f) * float(i);
    worst[size_t(i)] = std::max(worst_rel(host_values(y), host_values(want)),
                                worst_rel(all, host_values(Tensor<float>(xc * 2.0f + 1.0f))));
  });
  CHECK(bad.empty());
  for (const auto& e : bad) WARN(e);
  for (int i = 0; i < kThreads; ++i) CHECK(worst[size_t(i)] <= 1e-5);
  check_close(w, Tensor<float>(xc * 2.0f + 1.0f), 1e-6);
}

TEST_CASE("threads: the emulator's threaded products and large buffers from 16 threads", "[pjrt][threads]") {
  // 128^3 multiply-adds: past the emulator's threshold for splitting a product over its own
  // worker threads; 2^20-element arrays: the size its freed buffers are kept for reuse.
  MatmulPrecisionGuard highest(MatmulPrecision::Highest);
  const Device dev = test_device();
  const Tensor<float> ac = test_input({128, 128}, 4), bc = test_input({128, 128}, 5);
  const Tensor<float> big = test_input({1024, 1024}, 6);
  const Tensor<float> a = ac.to(dev), b = bc.to(dev), dbig = big.to(dev);
  const auto want_mm = host_values(Tensor<float>(matmul(ac, bc) * 0.5f));
  const auto want_big = host_values(Tensor<float>(big * 2.0f + 1.0f));
  std::vector<double> worst(kThreads, 0);
  const auto bad = on_threads([&](int i) {
    if (i % 4 == 0) {
      worst[size_t(i)] = worst_rel(host_values(Tensor<float>(dbig * 2.0f + 1.0f)), want_big);
    } else {
      worst[size_t(i)] = worst_rel(host_values(Tensor<float>(matmul(a, b) * 0.5f)), want_mm);
    }
  });
  CHECK(bad.empty());
  for (const auto& e : bad) WARN(e);
  for (int i = 0; i < kThreads; ++i) CHECK(worst[size_t(i)] <= 1e-5);
}
