// tests/fuse/test_elementwise.cpp — the elementwise driver (fuse/elementwise.hpp): operands read
// in place or gathered in blocks (strided, broadcast along the inner axis, rows longer than one
// block), strided destinations (scattered), bf16 operands and results, the vector and scalar
// kernels (TORCHTPU_DISABLE_SIMD), and splits over threads. Every value is checked against a
// float64 computation done here element by element.
#include <catch2/catch.hpp>  // TEST_CASE, CHECK

#include <cmath>    // std::tanh, std::exp
#include <cstdint>  // int64_t
#include <vector>   // std::vector

#include <torchtpu/torchtpu.hpp>  // Tensor, randn, set_num_threads

using torchtpu::Dims;
using torchtpu::Tensor;

namespace {

struct ThreadsGuard {
  int saved = torchtpu::get_num_threads();
  ~ThreadsGuard() { torchtpu::set_num_threads(saved); }
};

/// Element (i, j) of a rank-2 tensor of any layout, as double.
template <class T>
double at2(const Tensor<T>& t, int64_t i, int64_t j) {
  return double(t.data_ptr()[i * t.strides()[0] + j * t.strides()[1]]);  // data_ptr() includes the offset
}

/// Largest |got - want| / (1 + |want|) over a rank-2 result.
template <class T, class F>
double worst(const Tensor<T>& got, F&& want) {
  double w = 0;
  for (int64_t i = 0; i < got.sizes()[0]; ++i)
    for (int64_t j = 0; j < got.sizes()[1]; ++j) {
      const double e = want(i, j);
      const double d = std::fabs(at2(got, i, j) - e) / (1 + std::fabs(e));
      w = d > w ? d : w;
    }
  return w;
}

}  // namespace

TEST_CASE("strided, transposed and broadcast operands over rows longer than a gather block", "[fuse][elementwise]") {
  ThreadsGuard g;
  torchtpu::Generator gen(11);
  // 700 columns: a transposed operand has inner stride 600, gathered in blocks of 512 + 188
  const Tensor<float> a = torchtpu::randn<float>({700, 600}, gen);
  const Tensor<float> b = torchtpu::randn<float>({600, 700}, gen);
  const Tensor<float> row = torchtpu::randn<float>({700}, gen);     // broadcast over rows
  const Tensor<float> col = torchtpu::randn<float>({600, 1}, gen);  // stride 0 along the inner axis
  const Tensor<float> at = a.t();
  for (int threads : {1, 2, 3}) {
    torchtpu::set_num_threads(threads);
    Tensor<float> r = tanh(at * 0.5f + b) - row * col + 1.0f;
    REQUIRE(r.sizes() == Dims{600, 700});
    const double err = worst(r, [&](int64_t i, int64_t j) {
      const double x = at2(a, j, i), y = at2(b, i, j), u = at2(row.unsqueeze(0), 0, j), v = at2(col, i, 0);
      return std::tanh(x * 0.5 + y) - u * v + 1.0;
    });
    CHECK(err < 2e-6);
  }
}

TEST_CASE("a strided destination receives every element (scatter)", "[fuse][elementwise]") {
  torchtpu::Generator gen(12);
  const Tensor<float> x = torchtpu::randn<float>({300, 520}, gen);
  Tensor<float> buf = torchtpu::zeros<float>({520, 300});
  Tensor<float> dst = buf.t();  // inner stride 300
  dst.copy_(x * 2.0f - 1.0f);
  // float arithmetic, as the kernel does it: exact comparison
  auto want = [&](int64_t i, int64_t j) { return double(float(at2(x, i, j)) * 2.0f - 1.0f); };
  CHECK(worst(dst, want) == 0.0);
  CHECK(at2(buf, 519, 299) == want(299, 519));  // seen through the buffer's own layout
}

TEST_CASE("bf16 operands and results round once per op", "[fuse][elementwise]") {
  torchtpu::Generator gen(13);
  const Tensor<float> xf = torchtpu::randn<float>({37, 515}, gen);
  const Tensor<torchtpu::bfloat16> x = xf.to<torchtpu::bfloat16>();
  const Tensor<torchtpu::bfloat16> xt = Tensor<torchtpu::bfloat16>(x.t().contiguous()).t();  // strided view
  Tensor<torchtpu::bfloat16> r = x * xt + 1.0f;
  auto bf = [](double v) { return double(float(torchtpu::bfloat16(float(v)))); };
  CHECK(worst(r, [&](int64_t i, int64_t j) {
          const double p = bf(at2(x, i, j) * at2(x, i, j));  // the product is a bf16 intermediate
          return bf(p + 1.0);
        }) == 0.0);
}

TEST_CASE("integer and bool regions use the scalar kernel with PyTorch semantics", "[fuse][elementwise]") {
  const Tensor<int64_t> i = torchtpu::arange<int64_t>(0, 1200, 1).reshape({2, 600});
  Tensor<int64_t> r = i.t().contiguous().t() * 3 - 7;  // strided int64 operand
  CHECK(at2(r, 1, 599) == 1199 * 3 - 7);
  CHECK(at2(r, 0, 0) == -7);
  Tensor<bool> m = (i % 3) == 0;
  CHECK(at2(m, 0, 3) == 1.0);
  CHECK(at2(m, 0, 4) == 0.0);
}

TEST_CASE("large float results (non-temporal stores) are written completely, aligned or not", "[fuse][elementwise]") {
  ThreadsGuard g;
  // 2^23 + 21 floats: over the 32 MiB streaming threshold; the destination starts 3 elements
  // into its storage (not 64-byte aligned), so streamed and ordinary stores mix in every row
  const int64_t n = (int64_t(1) << 23) + 21;
  const Tensor<float> x = torchtpu::arange<float>(0, double(n), 1);
  Tensor<float> buf = torchtpu::full<float>({n + 3}, -1.0f);
  Tensor<float> dst = buf.narrow(0, 3, n);
  for (int threads : {1, 2}) {
    torchtpu::set_num_threads(threads);
    dst.copy_(x * 0.5f + 1.0f);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) bad += dst.data_ptr()[i] != float(i) * 0.5f + 1.0f;
    CHECK(bad == 0);
    CHECK(buf.data_ptr()[2] == -1.0f);  // nothing written before the view
    Tensor<float> fresh = x + 2.0f;     // a new, aligned result
    bad = 0;
    for (int64_t i = 0; i < n; ++i) bad += fresh.data_ptr()[i] != float(i) + 2.0f;
    CHECK(bad == 0);
  }
}

TEST_CASE("expensive regions split over threads sooner, with identical results", "[fuse][elementwise]") {
  using namespace torchtpu;
  const Tensor<float> x = Tensor<float>::empty({1}), w = x, b = x;
  // W1's expression: 5 arithmetic ops + tanh + sigmoid (8 each) = 21 element-costs, so its
  // region goes parallel at elementwise_min_grain elements per thread, not 64 Ki.
  using W1 = decltype(tanh(x * w + b) * sigmoid(x) + 0.5 * x);
  STATIC_REQUIRE(detail::region_cost<W1>() == 21);
  STATIC_REQUIRE(detail::region_cost<decltype(x + w)>() == 1);
  ThreadsGuard guard;
  Generator gen(5);
  const int64_t n = 3 * detail::elementwise_min_grain + 77;  // several chunks and a tail
  const Tensor<float> xs = randn<float>({n}, gen), ws = randn<float>({n}, gen), bs = randn<float>({n}, gen);
  std::vector<Tensor<float>> results;
  for (int threads : {1, 2, 3, 4}) {
    set_num_threads(threads);
    results.push_back(tanh(xs * ws + bs) * sigmoid(xs) + 0.5 * xs);
  }
  for (int64_t i = 0; i < n; ++i) {
    const double xv = xs.data_ptr()[i];
    const double want = std::tanh(xv * ws.data_ptr()[i] + bs.data_ptr()[i]) / (1 + std::exp(-xv)) + 0.5 * xv;
    CHECK(std::abs(double(results[0].data_ptr()[i]) - want) < 1e-6 * (1 + std::abs(want)));
    for (size_t t = 1; t < results.size(); ++t) CHECK(results[t].data_ptr()[i] == results[0].data_ptr()[i]);
  }
}
