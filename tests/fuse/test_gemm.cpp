// tests/fuse/test_gemm.cpp — the CPU matmul paths (fuse/gemm.hpp): packed AVX-512 f32,
// batch-1 kernels, transposed operands, batches, the fused epilogue, and no allocation in a
// materialization into an existing tensor after the first call.
#include <catch2/catch.hpp>  // TEST_CASE, CHECK

#include <algorithm>  // std::equal, std::count
#include <bit>      // std::bit_cast
#include <cmath>    // std::abs
#include <cstdint>  // uint32_t
#include <mutex>    // std::mutex (epilogue_block test)
#include <tuple>    // std::tuple
#include <vector>   // std::vector

#include <torchtpu/torchtpu.hpp>  // Tensor, matmul, relu

using torchtpu::Tensor;

#include "count_new.hpp"  // g_news, TORCHTPU_COUNT_NEW (counting operator new)

namespace {

/// float64 reference of a[m,k] @ b[k,n] (any strides, read with at()).
std::vector<double> ref_matmul(const Tensor<float>& a, const Tensor<float>& b) {
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  const Tensor<float> ac = a.contiguous(), bc = b.contiguous();
  std::vector<double> c(size_t(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) c[size_t(i * n + j)] += double(ac.data_ptr()[i * k + p]) * double(bc.data_ptr()[p * n + j]);
  return c;
}

double max_err(const Tensor<float>& c, const std::vector<double>& r) {
  double e = 0;
  const Tensor<float> cc = c.contiguous();
  for (size_t i = 0; i < r.size(); ++i) e = std::max(e, std::abs(double(cc.data_ptr()[i]) - r[i]) / (1 + std::abs(r[i])));
  return e;
}

}  // namespace

TEST_CASE("f32 matmul matches float64 over shapes and layouts", "[fuse][gemm]") {
  torchtpu::Generator gen(11);
  const std::vector<std::tuple<int64_t, int64_t, int64_t>> shapes = {
      {1, 1, 1}, {1, 64, 128}, {2, 7, 3}, {4, 100, 65}, {5, 33, 31}, {12, 32, 32}, {13, 257, 33},
      {100, 300, 129}, {241, 70, 97}, {64, 520, 64},
      // several k panels (KC 384), column blocks (NC 1024) with a partial last one, row blocks (MC 120)
      {250, 800, 600}, {30, 390, 1100}};
  for (auto [m, k, n] : shapes) {
    CAPTURE(m, k, n);
    const Tensor<float> a = torchtpu::randn<float>({m, k}, gen), b = torchtpu::randn<float>({k, n}, gen);
    const Tensor<float> at = torchtpu::randn<float>({k, m}, gen), bt = torchtpu::randn<float>({n, k}, gen);
    const double tol = 2e-6 * double(k);
    CHECK(max_err(torchtpu::matmul(a, b), ref_matmul(a, b)) < tol);
    CHECK(max_err(torchtpu::matmul(a, bt.t()), ref_matmul(a, bt.t())) < tol);   // B = Wᵀ (linear)
    CHECK(max_err(torchtpu::matmul(at.t(), b), ref_matmul(at.t(), b)) < tol);   // A transposed
    CHECK(max_err(torchtpu::matmul(at.t(), bt.t()), ref_matmul(at.t(), bt.t())) < tol);
  }
}

TEST_CASE("batched matmul and broadcast batch", "[fuse][gemm]") {
  torchtpu::Generator gen(12);
  const Tensor<float> a = torchtpu::randn<float>({3, 40, 50}, gen), b = torchtpu::randn<float>({50, 20}, gen);
  const Tensor<float> c = torchtpu::matmul(a, b);
  for (int64_t t = 0; t < 3; ++t) CHECK(max_err(c.select(0, t), ref_matmul(a.select(0, t), b)) < 1e-4);
}

TEST_CASE("a batch sharing one B is one product of batch x m rows, with its epilogue per row", "[fuse][gemm]") {
  // [2, 3, 5, 7] · [7, 33] (a linear layer on NHWC activations) folds into one 30-row product;
  // a narrowed A (rows not evenly spaced across the batch) and a batched B do not fold.
  // Each result against float64, matrix by matrix, relu applied in the epilogue.
  torchtpu::Generator gen(16);
  const Tensor<float> a = torchtpu::randn<float>({2, 3, 5, 7}, gen), w = torchtpu::randn<float>({7, 33}, gen);
  const Tensor<float> wb = torchtpu::randn<float>({3, 7, 33}, gen);
  const Tensor<float> an = a.narrow(2, 1, 3);
  for (int c = 0; c < 3; ++c) {
    CAPTURE(c);
    const Tensor<float> x = c == 1 ? an : a;
    const Tensor<float> y = c == 2 ? Tensor<float>(torchtpu::relu(torchtpu::matmul(x, wb))) : Tensor<float>(torchtpu::relu(torchtpu::matmul(x, w)));
    REQUIRE(y.sizes() == torchtpu::Dims{2, 3, x.size(2), 33});
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j) {
        std::vector<double> r = ref_matmul(x.select(0, i).select(0, j), c == 2 ? wb.select(0, j) : w);
        for (double& v : r) v = v < 0 ? 0 : v;
        CHECK(max_err(y.select(0, i).select(0, j), r) < 1e-5);
      }
  }
}

TEST_CASE("operands in pinned memory are packed once and multiply bitwise as unpinned ones", "[fuse][gemm]") {
  // A weight w pinned (as a loaded model's): w as B (x · wᵀ, a linear layer) and as A (w · x2,
  // a convolution) give the bits of the unpinned products, on the call that packs it and on
  // the one that reuses the packed copy; both against float64.
  using torchtpu::detail::ConstantPacks;
  torchtpu::Generator gen(17);
  const Tensor<float> x = torchtpu::randn<float>({40, 300}, gen), w = torchtpu::randn<float>({90, 300}, gen);
  const Tensor<float> x2 = torchtpu::randn<float>({300, 50}, gen);
  const Tensor<float> yb0 = torchtpu::matmul(x, w.t()), ya0 = torchtpu::matmul(w, x2);
  CHECK(max_err(yb0, ref_matmul(x, w.t())) < 2e-6 * 300);
  CHECK(max_err(ya0, ref_matmul(w, x2)) < 2e-6 * 300);
  ConstantPacks& cp = ConstantPacks::instance();
  const size_t before = cp.pinned();
  cp.pin(w.data_ptr(), size_t(w.numel()) * sizeof(float), w.storage());
  CHECK(cp.pinned() == before + 1);
  auto same_bits = [](const Tensor<float>& a, const Tensor<float>& b) {
    return std::equal(a.data_ptr(), a.data_ptr() + a.numel(), b.data_ptr(), [](float u, float v) {
      return std::bit_cast<uint32_t>(u) == std::bit_cast<uint32_t>(v);
    });
  };
  for (int rep = 0; rep < 2; ++rep) {
    CAPTURE(rep);
    CHECK(same_bits(torchtpu::matmul(x, w.t()), yb0));
    CHECK(same_bits(torchtpu::matmul(w, x2), ya0));
  }
  cp.unpin(w.data_ptr());
  CHECK(cp.pinned() == before);
  CHECK(same_bits(torchtpu::matmul(x, w.t()), yb0));
}

TEST_CASE("A written while packed (pack_a_from) and the padded tile work of each orientation", "[fuse][gemm]") {
  using torchtpu::detail::SgemmArgs;
  // padded work by hand, for a 12 x 32 tile: 49 rows are 4 strips and a short one of 12 / 4 = 3
  // rows, 512 columns 16 panels; 512 rows are 42 strips and one of 12 (8 > 12 / 2) rows, 49
  // columns 2 panels
  torchtpu::detail::SgemmKernels k12;
  k12.mr = 12;
  k12.nr = 32;
  CHECK(torchtpu::detail::sgemm_tile_work(49, 512, k12) == 51 * 512);
  CHECK(torchtpu::detail::sgemm_tile_work(512, 49, k12) == 516 * 64);
  CHECK(torchtpu::detail::sgemm_tile_work(24, 32, k12) == 24 * 32);
  CHECK(torchtpu::detail::sgemm_tile_work(29, 1, k12) == 30 * 32);  // 5 > 3: a strip of 6
  CHECK(torchtpu::detail::sgemm_tile_work(29, 7, torchtpu::detail::SgemmKernels{}) == 29 * 7);  // no tiles
  if (!torchtpu::detail::cpu_has_vector_gemm()) return;
  // A [m, k] row-major handed to the GEMM only through pack_a_from: m = 53 (a short last
  // strip), k = 500 (two k panels), B strided (a transposed view); against float64
  torchtpu::Generator gen(23);
  const Tensor<float> a = torchtpu::randn<float>({53, 500}, gen), bt = torchtpu::randn<float>({70, 500}, gen);
  const Tensor<float> b = bt.t();
  Tensor<float> c = torchtpu::full<float>({53, 70}, -1.0f);
  struct Src {
    const float* a;
    int64_t m, k;
  } src{a.data_ptr(), 53, 500};
  SgemmArgs g;
  g.m = 53; g.n = 70; g.k = 500;
  g.pack_a_from = [](const void* ctx, int64_t p0, int64_t kb, int64_t i0, int64_t mr, float* dst) {
    const Src& s = *static_cast<const Src*>(ctx);
    for (int64_t kk = 0; kk < kb; ++kk)
      for (int64_t r = 0; r < mr; ++r) dst[kk * mr + r] = i0 + r < s.m ? s.a[(i0 + r) * s.k + p0 + kk] : 0.0f;
  };
  g.a_ctx = &src;
  g.b = b.data_ptr(); g.sbk = b.stride(0); g.sbn = b.stride(1);
  g.c = c.data_ptr(); g.ldc = 70;
  torchtpu::detail::sgemm_f32(g);
  CHECK(max_err(c, ref_matmul(a, b)) < 2e-6 * 500);
}

TEST_CASE("epilogue_block sees each element once, finished, in cache-sized blocks, before epilogue", "[fuse][gemm]") {
  using torchtpu::detail::SgemmArgs;
  if (!torchtpu::detail::cpu_has_vector_gemm()) return;
  // What the callbacks saw, checked after the product (they may run on several threads):
  // per element the number of epilogue_block visits and whether C held its final value then;
  // per row whether `epilogue` found every element of it visited first.
  struct Seen {
    const std::vector<double>* ref;
    const float* c;
    int64_t n;
    std::vector<int> visits;
    std::vector<char> finished, rows_after;
    int64_t widest = 0;  // widest block (columns)
    std::mutex mu;
  };
  struct Case {
    int64_t m, n, k;
    bool streamed;  // B written while packed (pack_b_from), large enough to stream
  };
  // packed path: two row blocks, three column blocks, two k panels; streamed B (k n > 2^18);
  // batch-2 rows (the gemv path: one block); k = 0
  for (const Case cs : {Case{130, 2100, 400, false}, Case{40, 1500, 300, true}, Case{2, 50, 30, false}, Case{5, 40, 0, false}}) {
    CAPTURE(cs.m, cs.n, cs.k, cs.streamed);
    torchtpu::Generator gen(31);
    const Tensor<float> a = torchtpu::randn<float>({cs.m, cs.k}, gen), b = torchtpu::randn<float>({cs.k, cs.n}, gen);
    Tensor<float> c = torchtpu::full<float>({cs.m, cs.n}, -7.0f);
    const std::vector<double> ref = cs.k ? ref_matmul(a, b) : std::vector<double>(size_t(cs.m * cs.n), 0.0);
    Seen seen;
    seen.ref = &ref;
    seen.c = c.data_ptr();
    seen.n = cs.n;
    seen.visits.assign(size_t(cs.m * cs.n), 0);
    seen.finished.assign(size_t(cs.m * cs.n), 0);
    seen.rows_after.assign(size_t(cs.m), 0);
    SgemmArgs g;
    g.m = cs.m; g.n = cs.n; g.k = cs.k;
    g.a = a.data_ptr(); g.sam = cs.k; g.sak = 1;
    g.b = b.data_ptr(); g.sbk = cs.n; g.sbn = 1;
    struct BSrc {
      const float* b;
      int64_t k, n;
    } bsrc{b.data_ptr(), cs.k, cs.n};
    if (cs.streamed) {
      g.pack_b_from = [](const void* ctx, int64_t p0, int64_t kb, int64_t j0, int64_t nr, float* dst) {
        const BSrc& s = *static_cast<const BSrc*>(ctx);
        for (int64_t kk = 0; kk < kb; ++kk)
          for (int64_t j = 0; j < nr; ++j) dst[kk * nr + j] = j0 + j < s.n ? s.b[(p0 + kk) * s.n + j0 + j] : 0.0f;
      };
      g.b_ctx = &bsrc;
    }
    g.c = c.data_ptr(); g.ldc = cs.n;
    g.epilogue_block = [](void* ctx, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
      Seen& s = *static_cast<Seen*>(ctx);
      {
        const std::lock_guard<std::mutex> lock(s.mu);
        s.widest = std::max(s.widest, c1 - c0);
      }
      for (int64_t i = r0; i < r1; ++i)
        for (int64_t j = c0; j < c1; ++j) {
          const size_t e = size_t(i * s.n + j);
          ++s.visits[e];
          const double r = (*s.ref)[e];
          s.finished[e] = std::abs(double(s.c[e]) - r) <= 1e-5 * 400 * (1 + std::abs(r));
        }
    };
    g.epilogue = [](void* ctx, int64_t r0, int64_t r1) {
      Seen& s = *static_cast<Seen*>(ctx);
      for (int64_t i = r0; i < r1; ++i) {
        bool all = true;
        for (int64_t j = 0; j < s.n; ++j) all = all && s.visits[size_t(i * s.n + j)] == 1;
        s.rows_after[size_t(i)] = all;
      }
    };
    g.epilogue_ctx = &seen;
    torchtpu::detail::sgemm_f32(g);
    CHECK(std::count(seen.visits.begin(), seen.visits.end(), 1) == cs.m * cs.n);
    CHECK(std::count(seen.finished.begin(), seen.finished.end(), 1) == cs.m * cs.n);
    CHECK(std::count(seen.rows_after.begin(), seen.rows_after.end(), 1) == cs.m);
    // a wide product's blocks are column blocks (the packed path's 1024, the streamed one's
    // at most 512), not whole rows
    if (cs.n > 1024) CHECK(seen.widest <= 1024);
    if (cs.streamed) CHECK(seen.widest <= 512);
  }
}

TEST_CASE("matmul epilogue: bias, relu, residual, applied per tile", "[fuse][gemm]") {
  torchtpu::Generator gen(13);
  for (int64_t m : {1, 3, 300}) {
    const Tensor<float> x = torchtpu::randn<float>({m, 96}, gen), w = torchtpu::randn<float>({96, 80}, gen);
    const Tensor<float> bias = torchtpu::randn<float>({80}, gen), res = torchtpu::randn<float>({m, 80}, gen);
    const Tensor<float> y = torchtpu::relu(torchtpu::matmul(x, w) + bias) + res * 0.5;
    const std::vector<double> r = ref_matmul(x, w);
    double e = 0;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < 80; ++j) {
        double v = r[size_t(i * 80 + j)] + bias.data_ptr()[j];
        v = (v < 0 ? 0 : v) + 0.5 * res.data_ptr()[i * 80 + j];
        e = std::max(e, std::abs(v - y.data_ptr()[i * 80 + j]));
      }
    CHECK(e < 1e-3);
  }
}

TEST_CASE("bf16 matmul accumulates in f32", "[fuse][gemm]") {
  torchtpu::Generator gen(14);
  const Tensor<float> a = torchtpu::randn<float>({37, 130}, gen), b = torchtpu::randn<float>({130, 45}, gen);
  const Tensor<torchtpu::bfloat16> ah = a.to<torchtpu::bfloat16>().eval(), bh = b.to<torchtpu::bfloat16>().eval();
  const Tensor<torchtpu::bfloat16> c = torchtpu::matmul(ah, bh);
  const std::vector<double> r = ref_matmul(ah.to<float>().eval(), bh.to<float>().eval());
  for (size_t i = 0; i < r.size(); ++i) {
    // operands exact in f32; the result is rounded once to bf16 (relative 2^-8)
    CHECK(std::abs(double(float(c.data_ptr()[i])) - r[i]) <= 1e-5 * 130 + std::abs(r[i]) * (1.0 / 256));
  }
}

TEST_CASE("no allocation when materializing into an existing tensor after the first call", "[fuse][gemm]") {
  if (!TORCHTPU_COUNT_NEW) {
    WARN("operator new is not counted under AddressSanitizer; this check runs in the normal build");
    return;
  }
  torchtpu::Generator gen(15);
  const Tensor<float> x = torchtpu::randn<float>({1, 64}, gen);
  const Tensor<float> w1 = torchtpu::randn<float>({64, 128}, gen), b1 = torchtpu::randn<float>({128}, gen);
  const Tensor<float> w2 = torchtpu::randn<float>({128, 10}, gen), b2 = torchtpu::randn<float>({10}, gen);
  const Tensor<float> xb = torchtpu::randn<float>({64, 300}, gen), wb = torchtpu::randn<float>({300, 200}, gen);
  Tensor<float> h = Tensor<float>::empty({1, 128}), y = Tensor<float>::empty({1, 10});
  Tensor<float> big = Tensor<float>::empty({64, 200}), h2 = Tensor<float>::empty({1, 128});
  auto forward = [&] {
    h = torchtpu::relu(torchtpu::matmul(x, w1) + b1);
    y = torchtpu::matmul(h, w2) + b2;
    big = torchtpu::relu(torchtpu::matmul(xb, wb));  // the packed path and its workspace
    h2 = torchtpu::tanh(h) * 0.5;                    // elementwise into an existing tensor
    h.copy_(torchtpu::sigmoid(h));                   // in place (reads h where it writes)
  };
  forward();
  const long before = g_news.load();
  for (int i = 0; i < 5; ++i) forward();
  CHECK(g_news.load() - before == 0);
}
