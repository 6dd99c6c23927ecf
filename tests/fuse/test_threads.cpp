// tests/fuse/test_threads.cpp — the thread pool policy (fuse/threads.hpp): set_num_threads,
// bit-identical elementwise results for every thread count, exceptions from workers,
// concurrent callers (service threads) and nested regions.
#include <catch2/catch.hpp>  // TEST_CASE, CHECK

#include <cstring>  // std::memcmp
#include <thread>   // std::thread
#include <vector>   // std::vector

#include <torchtpu/torchtpu.hpp>  // Tensor, set_num_threads

using torchtpu::Tensor;

namespace {

/// Restores the thread count a test changed.
struct ThreadsGuard {
  int saved = torchtpu::get_num_threads();
  ~ThreadsGuard() { torchtpu::set_num_threads(saved); }
};

bool same_bits(const Tensor<float>& a, const Tensor<float>& b) {
  return a.numel() == b.numel() && std::memcmp(a.data_ptr(), b.data_ptr(), size_t(a.numel()) * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("set_num_threads / get_num_threads", "[fuse][threads]") {
  ThreadsGuard g;
  torchtpu::set_num_threads(3);
  CHECK(torchtpu::get_num_threads() == 3);
  torchtpu::set_num_threads(0);  // below 1 means 1
  CHECK(torchtpu::get_num_threads() == 1);
}

TEST_CASE("elementwise results are bit-identical for 1..4 threads", "[fuse][threads]") {
  ThreadsGuard g;
  torchtpu::Generator gen(3);
  // 2^18 + 5: chunk boundaries and the masked tail fall in different places per thread count
  const Tensor<float> x = torchtpu::randn<float>({(1 << 18) + 5}, gen);
  const Tensor<float> w = torchtpu::randn<float>({(1 << 18) + 5}, gen);
  const Tensor<float> m = torchtpu::randn<float>({3, 70001}, gen);
  std::vector<Tensor<float>> r1, r2, r3;
  for (int t = 1; t <= 4; ++t) {
    torchtpu::set_num_threads(t);
    r1.push_back(torchtpu::tanh(x * w + 0.25) * torchtpu::sigmoid(x) + 0.5 * x);
    r2.push_back(torchtpu::gelu(m.t() * 1.5).eval());            // strided reads
    r3.push_back((torchtpu::exp(m) / (1.0 + torchtpu::log(m * m + 1.0))).eval());  // 3 long rows
  }
  for (int t = 1; t < 4; ++t) {
    CHECK(same_bits(r1[0], r1[size_t(t)]));
    CHECK(same_bits(r2[0], r2[size_t(t)]));
    CHECK(same_bits(r3[0], r3[size_t(t)]));
  }
}

TEST_CASE("an exception thrown in a worker reaches the caller", "[fuse][threads]") {
  ThreadsGuard g;
  torchtpu::set_num_threads(4);
  Tensor<int64_t> a = torchtpu::ones<int64_t>({1 << 18});
  Tensor<int64_t> b = torchtpu::ones<int64_t>({1 << 18});
  b.data_ptr()[(1 << 18) - 3] = 0;  // in the last chunk
  CHECK_THROWS_AS(Tensor<int64_t>(torchtpu::floor_divide(a, b)), torchtpu::ValueError);
  // the pool still works afterwards
  const Tensor<float> x = torchtpu::ones<float>({1 << 18});
  const Tensor<float> y = x + x;
  CHECK(y.data_ptr()[(1 << 18) - 1] == 2.0f);
}

TEST_CASE("many service threads calling at once get the same answers", "[fuse][threads]") {
  ThreadsGuard g;
  torchtpu::set_num_threads(2);
  torchtpu::Generator gen(5);
  const Tensor<float> x = torchtpu::randn<float>({1 << 17}, gen);
  const Tensor<float> a = torchtpu::randn<float>({96, 80}, gen);
  const Tensor<float> b = torchtpu::randn<float>({80, 72}, gen);
  const Tensor<float> want = torchtpu::tanh(x) * 3.0;
  const Tensor<float> want_mm = torchtpu::matmul(a, b);
  std::vector<int> ok(6, 0);
  std::vector<std::thread> ts;
  for (int i = 0; i < 6; ++i)
    ts.emplace_back([&, i] {
      bool good = true;
      for (int r = 0; r < 20; ++r) {
        const Tensor<float> y = torchtpu::tanh(x) * 3.0;
        const Tensor<float> z = torchtpu::matmul(a, b);
        good = good && same_bits(y, want);
        // GEMM: the serial fallback splits rows differently only at block edges; values agree
        for (int64_t k = 0; k < z.numel(); ++k)
          good = good && std::abs(z.data_ptr()[k] - want_mm.data_ptr()[k]) <= 1e-4f * (1 + std::abs(want_mm.data_ptr()[k]));
      }
      ok[size_t(i)] = good;
    });
  for (auto& t : ts) t.join();
  for (int v : ok) CHECK(v == 1);
}
