// tests/fuse/test_threads_stress.cpp — the CPU thread pool (fuse/threads.hpp) called from 16
// user threads at once (issue 12, ThreadSanitizer): elementwise regions, reductions and GEMM on
// shared read-only inputs, each thread writing its own outputs, while one more thread changes
// the pool size. Run under -Db_sanitize=thread by scripts/test (a data race fails the run).
//
// References: computed once on the main thread before the threads start. Elementwise results
// are bit-identical (each element is computed the same way on any thread); sums and matrix
// products within 1e-4 relative of the f32 reference (their chunking follows the pool size,
// which changes during the test).
#include <catch2/catch.hpp>  // TEST_CASE, CHECK

#include <atomic>   // std::atomic
#include <barrier>  // std::barrier
#include <cmath>    // std::abs
#include <cstring>  // std::memcmp
#include <thread>   // std::thread
#include <vector>   // std::vector

#include <torchtpu/torchtpu.hpp>  // Tensor, set_num_threads

using torchtpu::Tensor;

namespace {
constexpr int kThreads = 16;

bool close_to(const Tensor<float>& got, const Tensor<float>& want, float rel) {
  if (got.numel() != want.numel()) return false;
  for (int64_t k = 0; k < got.numel(); ++k)
    if (std::abs(got.data_ptr()[k] - want.data_ptr()[k]) > rel * (1 + std::abs(want.data_ptr()[k]))) return false;
  return true;
}
}  // namespace

TEST_CASE("pool: 16 user threads at once while the pool is resized", "[fuse][threads]") {
  const int saved = torchtpu::get_num_threads();
  torchtpu::set_num_threads(4);
  torchtpu::Generator gen(12);
  const Tensor<float> x = torchtpu::randn<float>({1 << 16}, gen);
  const Tensor<float> a = torchtpu::randn<float>({64, 48}, gen);
  const Tensor<float> b = torchtpu::randn<float>({48, 40}, gen);
  const Tensor<float> want_ew = torchtpu::exp(torchtpu::tanh(x) * 0.5f) - x;
  const Tensor<float> want_sum = (x * x).sum();
  const Tensor<float> want_mm = torchtpu::relu(torchtpu::matmul(a, b) + 1.0f);
  std::vector<int> ok(kThreads, 0);
  std::atomic<bool> done{false};
  std::barrier start(kThreads + 1);
  std::vector<std::thread> ts;
  for (int i = 0; i < kThreads; ++i)
    ts.emplace_back([&, i] {
      start.arrive_and_wait();
      bool good = true;
      for (int r = 0; r < 8; ++r) {
        const Tensor<float> y = torchtpu::exp(torchtpu::tanh(x) * 0.5f) - x;
        good = good && std::memcmp(y.data_ptr(), want_ew.data_ptr(), sizeof(float) * size_t(y.numel())) == 0;
        const Tensor<float> s = (x * x).sum();
        good = good && close_to(s, want_sum, 1e-4f);
        const Tensor<float> z = torchtpu::relu(torchtpu::matmul(a, b) + 1.0f);
        good = good && close_to(z, want_mm, 1e-4f);
      }
      ok[size_t(i)] = good;
    });
  std::thread resizer([&] {
    start.arrive_and_wait();
    for (int r = 0; !done.load(); ++r) torchtpu::set_num_threads(2 + r % 3);
  });
  for (auto& t : ts) t.join();
  done = true;
  resizer.join();
  torchtpu::set_num_threads(saved);
  for (int v : ok) CHECK(v == 1);
}
