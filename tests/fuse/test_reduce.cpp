// tests/fuse/test_reduce.cpp — reductions and softmax on the CPU engine: row and column sums,
// softmax along the last and a leading axis, against float64 references; determinism for a
// given thread count.
#include <catch2/catch.hpp>  // TEST_CASE, CHECK

#include <cmath>    // std::exp, std::log
#include <cstring>  // std::memcmp
#include <vector>   // std::vector

#include <torchtpu/torchtpu.hpp>  // Tensor, sum, softmax

using torchtpu::Tensor;

TEST_CASE("row and column sums of a large matrix", "[fuse][reduce]") {
  torchtpu::Generator gen(21);
  const int64_t r = 300, c = 517;
  const Tensor<float> x = torchtpu::randn<float>({r, c}, gen);
  const Tensor<float> rows = torchtpu::sum(x, {1}), cols = torchtpu::sum(x, {0});
  const Tensor<float> mean_rows = torchtpu::mean(torchtpu::exp(x) * 2.0, {1});
  for (int64_t i = 0; i < r; ++i) {
    double s = 0, se = 0;
    for (int64_t j = 0; j < c; ++j) { s += x.data_ptr()[i * c + j]; se += 2 * std::exp(double(x.data_ptr()[i * c + j])); }
    CHECK(std::abs(rows.data_ptr()[i] - s) < 1e-4 * c);
    CHECK(std::abs(mean_rows.data_ptr()[i] - se / c) < 1e-5 * (se / c));
  }
  for (int64_t j = 0; j < c; ++j) {
    double s = 0;
    for (int64_t i = 0; i < r; ++i) s += x.data_ptr()[i * c + j];
    CHECK(std::abs(cols.data_ptr()[j] - s) < 1e-4 * r);
  }
  const Tensor<float> all = torchtpu::sum(x);
  double s = 0;
  for (int64_t i = 0; i < r * c; ++i) s += x.data_ptr()[i];
  CHECK(std::abs(all.item() - s) < 1e-3 * std::sqrt(double(r * c)));
}

TEST_CASE("reductions are deterministic for a given thread count", "[fuse][reduce]") {
  torchtpu::Generator gen(22);
  const Tensor<float> x = torchtpu::randn<float>({1000, 1000}, gen);
  const Tensor<float> a = torchtpu::sum(x, {0}), b = torchtpu::sum(x, {0});
  const Tensor<float> c = torchtpu::sum(x * 2.0, {1}), d = torchtpu::sum(x * 2.0, {1});
  CHECK(std::memcmp(a.data_ptr(), b.data_ptr(), 4000) == 0);
  CHECK(std::memcmp(c.data_ptr(), d.data_ptr(), 4000) == 0);
  const Tensor<float> t1 = torchtpu::sum(x), t2 = torchtpu::sum(x);
  CHECK(t1.item() == t2.item());
}

TEST_CASE("softmax and log_softmax along rows and columns", "[fuse][reduce]") {
  torchtpu::Generator gen(23);
  const int64_t r = 37, c = 1029;
  const Tensor<float> x = torchtpu::randn<float>({r, c}, gen) * 5.0;
  const Tensor<float> s = torchtpu::softmax(x, 1), ls = torchtpu::log_softmax(x, 1);
  const Tensor<float> s0 = torchtpu::softmax(x, 0);
  for (int64_t i = 0; i < r; ++i) {
    double mx = -1e30, sum = 0;
    for (int64_t j = 0; j < c; ++j) mx = std::max(mx, double(x.data_ptr()[i * c + j]));
    for (int64_t j = 0; j < c; ++j) sum += std::exp(double(x.data_ptr()[i * c + j]) - mx);
    for (int64_t j = 0; j < c; ++j) {
      const double v = double(x.data_ptr()[i * c + j]) - mx;
      CHECK(std::abs(s.data_ptr()[i * c + j] - std::exp(v) / sum) < 1e-6);
      CHECK(std::abs(ls.data_ptr()[i * c + j] - (v - std::log(sum))) < 2e-5 * (1 + std::abs(v)));
    }
  }
  for (int64_t j = 0; j < c; j += 97) {
    double mx = -1e30, sum = 0;
    for (int64_t i = 0; i < r; ++i) mx = std::max(mx, double(x.data_ptr()[i * c + j]));
    for (int64_t i = 0; i < r; ++i) sum += std::exp(double(x.data_ptr()[i * c + j]) - mx);
    for (int64_t i = 0; i < r; ++i)
      CHECK(std::abs(s0.data_ptr()[i * c + j] - std::exp(double(x.data_ptr()[i * c + j]) - mx) / sum) < 1e-6);
  }
  // huge logits stay finite (max subtracted)
  const Tensor<float> big = torchtpu::softmax(Tensor<float>{1000.0f, 1000.0f, -1000.0f}, 0);
  CHECK(std::abs(big.data_ptr()[0] - 0.5f) < 1e-6f);
  CHECK(big.data_ptr()[2] == 0.0f);
}
