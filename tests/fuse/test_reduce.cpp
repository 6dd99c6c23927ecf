// tests/fuse/test_reduce.cpp — reductions and softmax on the CPU engine: row and column sums,
// softmax along the last and a leading axis, against float64 references; determinism for a
// given thread count.
#include <catch2/catch.hpp>  // TEST_CASE, CHECK

#include <cmath>    // std::exp, std::log, std::isnan
#include <cstring>  // std::memcmp
#include <limits>   // std::numeric_limits
#include <vector>   // std::vector

#include <torchtpu/torchtpu.hpp>  // Tensor, sum, softmax

#include "count_new.hpp"  // g_news, TORCHTPU_COUNT_NEW (counting operator new)

using torchtpu::Tensor;

namespace {

struct ThreadsGuard {
  int saved = torchtpu::get_num_threads();
  ~ThreadsGuard() { torchtpu::set_num_threads(saved); }
};

/// Checks softmax `s` and log_softmax `ls` of row i of the [r, c] values `x` (row-major,
/// double) against float64 references: relative error for softmax (growing with |x - max|,
/// which float rounds), absolute (scaled by the magnitudes involved) for log_softmax. A row
/// holding NaN or +inf, or only -inf, must be NaN.
void check_softmax_row(const std::vector<double>& x, int64_t c, int64_t i, const float* s, const float* ls) {
  double mx = -std::numeric_limits<double>::infinity();
  bool nan = false;
  for (int64_t j = 0; j < c; ++j) {
    const double v = x[i * c + j];
    nan = nan || std::isnan(v) || v == std::numeric_limits<double>::infinity();
    if (v > mx) mx = v;
  }
  nan = nan || mx == -std::numeric_limits<double>::infinity();
  double sum = 0;
  if (!nan) for (int64_t j = 0; j < c; ++j) sum += std::exp(x[i * c + j] - mx);
  for (int64_t j = 0; j < c; ++j) {
    INFO("row " << i << " of length " << c << ", column " << j);
    if (nan) {
      CHECK(std::isnan(s[j]));
      CHECK(std::isnan(ls[j]));
      continue;
    }
    const double v = x[i * c + j] - mx;
    if (v == -std::numeric_limits<double>::infinity()) {  // probability 0, log -inf
      CHECK(s[j] == 0.0f);
      CHECK(ls[j] == -std::numeric_limits<float>::infinity());
      continue;
    }
    // x - max rounds to float: an absolute error of half an ulp of |v|, relative in exp(v)
    const double want = std::exp(v) / sum;
    CHECK(std::abs(s[j] - want) <= (2e-6 + 6e-8 * std::abs(v)) * want + 1e-37);
    CHECK(std::abs(ls[j] - (v - std::log(sum))) <= 2e-6 * (1 + std::abs(v) + std::log(sum)));
  }
}

}  // namespace

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

TEST_CASE("row reductions of every row count and length against float64", "[fuse][reduce]") {
  // rows are read 4 at a time with a leftover group, rows have a 64-lane body and a tail;
  // the result must not depend on the thread count (each row is summed in one fixed order)
  ThreadsGuard guard;
  torchtpu::Generator gen(27);
  for (const int64_t c : {1, 15, 16, 17, 63, 64, 65, 200, 1029}) {
    for (const int64_t r : {1, 2, 3, 4, 5, 7, 9, 130}) {
      INFO(r << " rows of length " << c);
      const Tensor<float> x = torchtpu::randn<float>({r, c}, gen);
      const float* p = x.data_ptr();
      const Tensor<float> s = torchtpu::sum(x, {1}), m = torchtpu::mean(x * 2.0 + 1.0, {1});
      const Tensor<float> mx = torchtpu::max(x, {1});
      for (int64_t i = 0; i < r; ++i) {
        double want = 0, want_m = 0, want_mx = -1e30;
        for (int64_t j = 0; j < c; ++j) {
          want += p[i * c + j];
          want_m += double(p[i * c + j] * 2.0f + 1.0f);
          want_mx = std::max(want_mx, double(p[i * c + j]));
        }
        CHECK(std::abs(s.data_ptr()[i] - want) <= 1e-6 * c + 1e-6);
        CHECK(std::abs(m.data_ptr()[i] - want_m / double(c)) <= 1e-6 * (1 + std::abs(want_m / double(c))));
        CHECK(mx.data_ptr()[i] == float(want_mx));
      }
      torchtpu::set_num_threads(1);
      const Tensor<float> s1 = torchtpu::sum(x * 3.0, {1});
      for (const int threads : {2, 3, 4}) {
        torchtpu::set_num_threads(threads);
        const Tensor<float> st = torchtpu::sum(x * 3.0, {1});
        CHECK(std::memcmp(s1.data_ptr(), st.data_ptr(), sizeof(float) * size_t(r)) == 0);
      }
      torchtpu::set_num_threads(guard.saved);
    }
  }
  // reduced axis last of a 3-d tensor into a strided dest, and a gathered (transposed) row
  const Tensor<float> x3 = torchtpu::randn<float>({5, 6, 70}, gen);
  Tensor<float> d = Tensor<float>::empty({6, 5});
  d.t().copy_(torchtpu::sum(x3, {2}));
  const Tensor<float> xt = torchtpu::randn<float>({70, 30}, gen);
  const Tensor<float> st = torchtpu::sum(xt.t(), {1});
  for (int64_t a = 0; a < 5; ++a) {
    for (int64_t b = 0; b < 6; ++b) {
      double want = 0;
      for (int64_t k = 0; k < 70; ++k) want += x3.data_ptr()[(a * 6 + b) * 70 + k];
      CHECK(std::abs(d.data_ptr()[b * 5 + a] - want) <= 1e-4);
    }
  }
  for (int64_t j = 0; j < 30; ++j) {
    double want = 0;
    for (int64_t k = 0; k < 70; ++k) want += xt.data_ptr()[k * 30 + j];
    CHECK(std::abs(st.data_ptr()[j] - want) <= 1e-4);
  }
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

TEST_CASE("softmax rows of every length class against float64", "[fuse][reduce][softmax]") {
  // lengths around the 16-lane vector and the 32-lane step of the exp pass, and long rows;
  // enough rows that they split over threads (each thread reads its next row ahead)
  torchtpu::Generator gen(24);
  for (const int64_t c : {1, 2, 15, 16, 17, 31, 32, 33, 48, 63, 64, 65, 1000, 1024, 1029}) {
    const int64_t r = c < 64 ? 2000 / c + 3 : 71;
    Tensor<float> x = torchtpu::randn<float>({r, c}, gen) * 4.0;
    std::vector<double> xd(size_t(r * c));
    for (int64_t k = 0; k < r * c; ++k) xd[size_t(k)] = x.data_ptr()[k];
    const Tensor<float> s = torchtpu::softmax(x, 1), ls = torchtpu::log_softmax(x, 1);
    for (int64_t i = 0; i < r; ++i) check_softmax_row(xd, c, i, s.data_ptr() + i * c, ls.data_ptr() + i * c);
    // a fused producer (the float64 reference rounds each step as float does), and a dest
    // whose softmax axis is strided (a column-major result)
    const Tensor<float> sf = torchtpu::softmax(x * 0.5 + 3.0, 1), lsf = torchtpu::log_softmax(x * 0.5 + 3.0, 1);
    Tensor<float> st = Tensor<float>::empty({c, r});
    st.t().copy_(torchtpu::log_softmax(x, 1));
    std::vector<double> xf(xd.size());
    for (size_t k = 0; k < xd.size(); ++k) xf[k] = double(x.data_ptr()[k] * 0.5f + 3.0f);
    std::vector<float> lst(static_cast<size_t>(c));
    for (int64_t i = 0; i < r; ++i) {
      check_softmax_row(xf, c, i, sf.data_ptr() + i * c, lsf.data_ptr() + i * c);
      for (int64_t j = 0; j < c; ++j) lst[size_t(j)] = st.data_ptr()[j * r + i];
      check_softmax_row(xd, c, i, s.data_ptr() + i * c, lst.data());
    }
  }
}

TEST_CASE("softmax rows with -inf, NaN, +inf and large inputs", "[fuse][reduce][softmax]") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (const int64_t c : {1, 15, 17, 100, 1000}) {
    const int64_t r = 12;
    torchtpu::Generator gen(25);
    Tensor<float> x = torchtpu::randn<float>({r, c}, gen) * 30.0;
    float* p = x.data_ptr();
    const int64_t last = c - 1, mid = c / 2;
    p[0 * c + 0] = -inf;                       // row 0: -inf first (probability 0)
    p[1 * c + last] = -inf;                    // row 1: -inf in the tail
    for (int64_t j = 0; j < c; ++j) p[2 * c + j] = -inf;  // row 2: only -inf -> NaN
    p[3 * c + mid] = nan;                      // row 3: NaN -> NaN row
    p[4 * c + last] = nan;                     // row 4: NaN in the tail
    p[5 * c + mid] = inf;                      // row 5: +inf -> NaN row (inf - inf), as torch
    for (int64_t j = 0; j < c; ++j) p[6 * c + j] += 1e4f;   // row 6: large logits
    for (int64_t j = 0; j < c; ++j) p[7 * c + j] -= 3e4f;   // row 7: very negative logits
    p[8 * c + mid] = 200.0f;                   // row 8: one dominant entry, the rest underflow
    for (int64_t j = 0; j < c; ++j) p[9 * c + j] = 7.0f;    // row 9: constant -> 1/c
    std::vector<double> xd(size_t(r * c));
    for (int64_t k = 0; k < r * c; ++k) xd[size_t(k)] = p[k];
    const Tensor<float> s = torchtpu::softmax(x, 1), ls = torchtpu::log_softmax(x, 1);
    for (int64_t i = 0; i < r; ++i) check_softmax_row(xd, c, i, s.data_ptr() + i * c, ls.data_ptr() + i * c);
    CHECK(s.data_ptr()[9 * c] == Approx(1.0 / double(c)).epsilon(1e-6));
  }
}

TEST_CASE("softmax rows are deterministic and independent of the thread count", "[fuse][reduce][softmax]") {
  ThreadsGuard guard;
  torchtpu::Generator gen(26);
  const Tensor<float> x = torchtpu::randn<float>({300, 1000}, gen) * 3.0;
  torchtpu::set_num_threads(1);
  const Tensor<float> a = torchtpu::softmax(x, 1), la = torchtpu::log_softmax(x, 1);
  for (const int threads : {2, 3, 4}) {
    torchtpu::set_num_threads(threads);
    const Tensor<float> b = torchtpu::softmax(x, 1), lb = torchtpu::log_softmax(x, 1);
    CHECK(std::memcmp(a.data_ptr(), b.data_ptr(), sizeof(float) * 300000) == 0);
    CHECK(std::memcmp(la.data_ptr(), lb.data_ptr(), sizeof(float) * 300000) == 0);
  }
}

// Issue 18 item 14: a reduction over a non-elementwise sub-node (a matmul) evaluates it once,
// on the vector path and on the scalar one. Every tensor allocation is one operator new (its
// shared storage), so the reduction allocates what the matmul does plus what the same
// reduction of the product already evaluated does.
TEST_CASE("a reduction over a matmul evaluates the matmul once", "[fuse][reduce]") {
  if (!TORCHTPU_COUNT_NEW) {
    WARN("skipped: allocation counting is off under AddressSanitizer");
    return;
  }
  torchtpu::Generator gen(14);
  const int64_t m = 96, k = 64, n = 80;
  const Tensor<float> a = torchtpu::randn<float>({m, k}, gen), b = torchtpu::randn<float>({k, n}, gen);
  const Tensor<float> c = torchtpu::matmul(a, b);  // warms up per-thread buffers too
  long before = g_news.load();
  const Tensor<float> c2 = torchtpu::matmul(a, b);
  const long mm = g_news.load() - before;
  REQUIRE(mm >= 1);
  auto news = [&](auto&& f) {
    const long b0 = g_news.load();
    f();
    return g_news.load() - b0;
  };
  // the same reductions of the product already evaluated: what the reduction itself allocates
  // (each into a new tensor: assigning an expression to a defined tensor writes in place)
  Tensor<float> rows, cols, sm;
  const long r0 = news([&] { Tensor<float> t = torchtpu::sum(c * 1.0f, {1}); rows = t; });
  const long c0 = news([&] { Tensor<float> t = torchtpu::sum(c * 1.0f, {0}); cols = t; });
  const long s0 = news([&] { Tensor<float> t = torchtpu::softmax(c * 1.0f, 1); sm = t; });
  CHECK(news([&] { Tensor<float> t = torchtpu::sum(torchtpu::matmul(a, b) * 1.0f, {1}); rows = t; }) == mm + r0);
  CHECK(news([&] { Tensor<float> t = torchtpu::sum(torchtpu::matmul(a, b) * 1.0f, {0}); cols = t; }) == mm + c0);
  CHECK(news([&] { Tensor<float> t = torchtpu::softmax(torchtpu::matmul(a, b) * 1.0f, 1); sm = t; }) == mm + s0);
  // the values, from the product evaluated on its own
  for (int64_t i = 0; i < m; ++i) {
    double r = 0;
    for (int64_t j = 0; j < n; ++j) r += c.data_ptr()[i * n + j];
    CHECK(std::abs(rows.data_ptr()[i] - r) <= 1e-4 * (1 + std::abs(r)));
  }
  for (int64_t j = 0; j < n; ++j) {
    double s = 0;
    for (int64_t i = 0; i < m; ++i) s += c.data_ptr()[i * n + j];
    CHECK(std::abs(cols.data_ptr()[j] - s) <= 1e-4 * (1 + std::abs(s)));
  }
  double total = 0;
  for (int64_t j = 0; j < n; ++j) total += sm.data_ptr()[j];
  CHECK(std::abs(total - 1.0) <= 1e-5);
}
