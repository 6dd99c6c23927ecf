// tests/fuse/test_gemv.cpp — the batch-1..4 matmul path (fuse/gemv.hpp) and the lean
// materialization of `relu(x @ w + b)` into an existing tensor (fuse/cpu.hpp,
// try_small_matmul): values against float64 references over batch sizes, odd widths, weight
// layouts (row-major, transposed, strided) and epilogue operand layouts; aliasing falls back to
// the general path; results do not depend on the thread count; no allocation.
#include <catch2/catch.hpp>  // TEST_CASE, CHECK

#include <algorithm>  // std::max
#include <cmath>      // std::abs
#include <cstring>    // std::memcmp
#include <vector>     // std::vector

#include <torchtpu/torchtpu.hpp>  // Tensor, matmul, relu

using torchtpu::Tensor;

#include "count_new.hpp"  // g_news, TORCHTPU_COUNT_NEW (counting operator new)

namespace {

/// a [m, k] (or [k] as one row) read with at(), in float64.
double a_at(const Tensor<float>& a, int64_t i, int64_t p) {
  return a.dim() == 1 ? double(a.at(p)) : double(a.at(i, p));
}

/// float64 reference of relu?(a @ b + bias) for a [m, k] or [k], b [k, n] (any strides);
/// bias is [n], [1, n] or [m, n], or undefined.
std::vector<double> ref(const Tensor<float>& a, const Tensor<float>& b, const Tensor<float>& bias, bool relu) {
  const int64_t m = a.dim() == 1 ? 1 : a.size(0), k = b.size(0), n = b.size(1);
  std::vector<double> c(size_t(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += a_at(a, i, p) * double(b.at(p, j));
      if (bias.defined()) {
        if (bias.dim() == 1) s += double(bias.at(j));
        else s += double(bias.at(bias.size(0) == 1 ? int64_t(0) : i, j));
      }
      if (relu && s < 0) s = 0;
      c[size_t(i * n + j)] = s;
    }
  return c;
}

/// max |c - r| / (1 + |r|) over a contiguous result.
double max_err(const Tensor<float>& c, const std::vector<double>& r) {
  const Tensor<float> cc = c.contiguous();
  double e = 0;
  for (size_t i = 0; i < r.size(); ++i) e = std::max(e, std::abs(double(cc.data_ptr()[i]) - r[i]) / (1 + std::abs(r[i])));
  return e;
}

}  // namespace

TEST_CASE("batch 1..4 matmul with bias and relu into an existing tensor matches float64", "[fuse][gemv]") {
  torchtpu::Generator gen(21);
  const Tensor<float> none;
  for (int64_t m : {1, 2, 3, 4}) {
    for (int64_t k : {1, 7, 64, 129}) {
      for (int64_t n : {1, 10, 16, 33, 128, 130, 300}) {
        CAPTURE(m, k, n);
        const double tol = 2e-6 * double(k + 1);
        const Tensor<float> x = torchtpu::randn<float>({m, k}, gen);
        const Tensor<float> w = torchtpu::randn<float>({k, n}, gen);                   // row-major (x @ w)
        const Tensor<float> wt = torchtpu::randn<float>({n, k}, gen);                  // x @ wt.t() (linear)
        const Tensor<float> ws = torchtpu::randn<float>({k, 2 * n}, gen).narrow(1, 0, n);  // row stride 2n
        const Tensor<float> wg = torchtpu::randn<float>({k, 2 * n}, gen).slice(1, 0, 2 * n, 2);  // column stride 2
        const Tensor<float> b = torchtpu::randn<float>({n}, gen), b2 = torchtpu::randn<float>({m, n}, gen);
        Tensor<float> y = Tensor<float>::empty({m, n});
        y.copy_(torchtpu::relu(torchtpu::matmul(x, w) + b));
        CHECK(max_err(y, ref(x, w, b, true)) < tol);
        y.copy_(torchtpu::matmul(x, wt.t()) + b2);
        CHECK(max_err(y, ref(x, wt.t(), b2, false)) < tol);
        y.copy_(torchtpu::relu(torchtpu::matmul(x, ws) + b));
        CHECK(max_err(y, ref(x, ws, b, true)) < tol);
        y.copy_(torchtpu::matmul(x, wg) + b);  // not a lean layout: the general path
        CHECK(max_err(y, ref(x, wg, b, false)) < tol);
        y.copy_(torchtpu::matmul(x, w));
        CHECK(max_err(y, ref(x, w, none, false)) < tol);
        // x transposed (k-stride m) and a strided row of x
        const Tensor<float> xt = torchtpu::randn<float>({k, m}, gen).t();
        y.copy_(torchtpu::relu(torchtpu::matmul(xt, w) + b));
        CHECK(max_err(y, ref(xt, w, b, true)) < tol);
        // a fresh result (evaluate_new) goes the same way
        const Tensor<float> z = torchtpu::relu(torchtpu::matmul(x, w) + b);
        CHECK(max_err(z, ref(x, w, b, true)) < tol);
      }
    }
  }
}

TEST_CASE("batch-1 vector @ matrix, epilogues with numbers and several operands", "[fuse][gemv]") {
  torchtpu::Generator gen(22);
  for (int64_t n : {1, 10, 33, 512}) {
    CAPTURE(n);
    const int64_t k = 70;
    const Tensor<float> x = torchtpu::randn<float>({k}, gen), w = torchtpu::randn<float>({k, n}, gen);
    const Tensor<float> b = torchtpu::randn<float>({n}, gen), r = torchtpu::randn<float>({1, n}, gen);
    Tensor<float> y = Tensor<float>::empty({n});
    y.copy_(torchtpu::relu(torchtpu::matmul(x, w) + b));  // 1-D result
    const Tensor<float> none;
    CHECK(max_err(y, ref(x, w, b, true)) < 1e-4);
    Tensor<float> y2 = Tensor<float>::empty({1, n});
    const Tensor<float> x2 = x.unsqueeze(0);
    y2.copy_(torchtpu::relu(torchtpu::matmul(x2, w) * 0.5 + b) + r * 2.0);
    const std::vector<double> p = ref(x2, w, none, false);
    double e = 0;
    for (int64_t j = 0; j < n; ++j) {
      double v = p[size_t(j)] * 0.5 + double(b.at(j));
      v = (v < 0 ? 0 : v) + 2.0 * double(r.at(0, j));
      e = std::max(e, std::abs(v - double(y2.at(0, j))) / (1 + std::abs(v)));
    }
    CHECK(e < 1e-4);
  }
}

TEST_CASE("batch-1 matmul whose destination is also an operand goes through the general path", "[fuse][gemv]") {
  torchtpu::Generator gen(23);
  const int64_t n = 48;
  Tensor<float> h = torchtpu::randn<float>({1, n}, gen);
  const Tensor<float> w = torchtpu::randn<float>({n, n}, gen), b = torchtpu::randn<float>({n}, gen);
  const Tensor<float> h0 = h.clone();
  const std::vector<double> r = ref(h0, w, b, true);
  h.copy_(torchtpu::relu(torchtpu::matmul(h, w) + b));  // reads h while writing it
  CHECK(max_err(h, r) < 1e-4);
  Tensor<float> g = h0.clone();
  const std::vector<double> r2 = ref(h0, w, g, false);
  g.copy_(torchtpu::matmul(h0, w) + g);  // the bias is the destination
  CHECK(max_err(g, r2) < 1e-4);
  Tensor<float> w2 = w.clone();
  Tensor<float> row = w2.narrow(0, 0, 1);  // the destination is a row of the weights
  const Tensor<float> none;
  const std::vector<double> r3 = ref(h0, w, none, false);
  row.copy_(torchtpu::matmul(h0, w2));
  CHECK(max_err(row, r3) < 1e-4);
}

TEST_CASE("batch-1 results do not depend on the thread count", "[fuse][gemv]") {
  torchtpu::Generator gen(24);
  const int threads = torchtpu::get_num_threads();
  for (auto [k, n] : std::vector<std::pair<int64_t, int64_t>>{{784, 512}, {512, 10}, {1000, 1000}, {300, 33}}) {
    CAPTURE(k, n);
    for (int64_t m : {1, 3}) {
      const Tensor<float> x = torchtpu::randn<float>({m, k}, gen), w = torchtpu::randn<float>({k, n}, gen);
      const Tensor<float> wt = torchtpu::randn<float>({n, k}, gen), b = torchtpu::randn<float>({n}, gen);
      std::vector<Tensor<float>> ys;
      for (int t : {1, 2, 3, 4}) {
        torchtpu::set_num_threads(t);
        Tensor<float> y = Tensor<float>::empty({m, 2 * n});
        y.narrow(1, 0, n).copy_(torchtpu::relu(torchtpu::matmul(x, w) + b));  // not contiguous: general path
        Tensor<float> y1 = Tensor<float>::empty({m, n}), y2 = Tensor<float>::empty({m, n});
        y1.copy_(torchtpu::relu(torchtpu::matmul(x, w) + b));
        y2.copy_(torchtpu::matmul(x, wt.t()) + b);
        CHECK(max_err(y1, ref(x, w, b, true)) < 2e-6 * double(k));
        CHECK(max_err(y2, ref(x, wt.t(), b, false)) < 2e-6 * double(k));
        ys.push_back(y1);
        ys.push_back(y2);
      }
      for (size_t i = 2; i < ys.size(); ++i)
        CHECK(std::memcmp(ys[i].data_ptr(), ys[i % 2].data_ptr(), size_t(m * n) * sizeof(float)) == 0);
    }
  }
  torchtpu::set_num_threads(threads);
}

TEST_CASE("batch-1 MLP forward into existing tensors allocates nothing after the first call", "[fuse][gemv]") {
  if (!TORCHTPU_COUNT_NEW) {
    WARN("operator new is not counted under AddressSanitizer; this check runs in the normal build");
    return;
  }
  torchtpu::Generator gen(25);
  for (auto d : std::vector<std::vector<int64_t>>{{64, 128, 128, 10}, {784, 512, 512, 10}}) {
    const Tensor<float> x = torchtpu::randn<float>({1, d[0]}, gen);
    const Tensor<float> w0 = torchtpu::randn<float>({d[0], d[1]}, gen), b0 = torchtpu::randn<float>({d[1]}, gen);
    const Tensor<float> w1 = torchtpu::randn<float>({d[1], d[2]}, gen), b1 = torchtpu::randn<float>({d[2]}, gen);
    const Tensor<float> w2 = torchtpu::randn<float>({d[2], d[3]}, gen), b2 = torchtpu::randn<float>({d[3]}, gen);
    Tensor<float> h0 = Tensor<float>::empty({1, d[1]}), h1 = Tensor<float>::empty({1, d[2]}), y = Tensor<float>::empty({1, d[3]});
    auto forward = [&] {
      h0.copy_(torchtpu::relu(torchtpu::matmul(x, w0) + b0));
      h1.copy_(torchtpu::relu(torchtpu::matmul(h0, w1) + b1));
      y.copy_(torchtpu::matmul(h1, w2) + b2);
    };
    forward();
    const long before = g_news.load();
    for (int i = 0; i < 5; ++i) forward();
    CHECK(g_news.load() - before == 0);
    // and the values: the three layers in float64
    const std::vector<double> r0 = ref(x, w0, b0, true);
    CHECK(max_err(h0, r0) < 1e-4);
    const std::vector<double> r1 = ref(h0, w1, b1, true), r2 = ref(h1, w2, b2, false);
    CHECK(max_err(h1, r1) < 1e-4);
    CHECK(max_err(y, r2) < 1e-4);
  }
}
