// Accuracy of long float reductions (issue 12 item 3): sum and mean of 10^7 elements, along one
// dim of long rows and long columns, over several dims, over fused producers and over a matmul,
// bf16/half inputs, all against float64 references computed here from the float inputs. Each
// path (vector rows, vector columns, scalar) sums blocks and combines them pairwise, so the
// relative error must stay below 1e-6 (a sequential float loop gives 1.5e-3 on 10^7 x 0.1f).
// Runs on the vector kernels and again with TORCHTPU_DISABLE_SIMD=1 (tests/ops/meson.build).
#include <cmath>    // std::fabs
#include <cstring>  // std::memcmp
#include <vector>   // std::vector

#include "testing.hpp"  // Catch2, torchtpu

using namespace torchtpu;

namespace {

struct ThreadsGuard {
  int saved = get_num_threads();
  ~ThreadsGuard() { set_num_threads(saved); }
};

/// Relative error of `got` against the float64 value `want`.
double rel_err(double got, double want) { return std::fabs(got - want) / std::fabs(want); }

/// Uniform values in [0.5, 1.5) (no cancellation: the relative error of a sum is meaningful).
Tensor<float> positive_input(const Dims& shape, uint64_t seed) {
  Generator gen(seed);
  Tensor<float> u = rand<float>(shape, gen);
  return Tensor<float>(u + 0.5);
}

}  // namespace

TEST_CASE("sum and mean of 10^7 float32 values 0.1f", "[ops][reduce][accuracy]") {
  const int64_t n = 10'000'000;
  const Tensor<float> x = full<float>({n}, 0.1f);
  const double exact = double(n) * double(0.1f);  // 1,000,000.0149...: the exact sum of the inputs
  // The figure before the fix: 998,501.375 (relative error 1.5e-3).
  const float s = Tensor<float>(x.sum()).item();
  INFO("sum " << s);
  CHECK(rel_err(s, exact) <= 1e-6);
  CHECK(rel_err(Tensor<float>(x.mean()).item(), double(0.1f)) <= 1e-6);
  // fused producers: the multiply streams into the reduction
  CHECK(rel_err(Tensor<float>((x * 1.0).sum()).item(), exact) <= 1e-6);
  CHECK(rel_err(Tensor<float>((x * 2.0).mean()).item(), 2 * double(0.1f)) <= 1e-6);
  // keepdim over the only dim, and the same values as a 2-d tensor summed over both dims
  CHECK(rel_err(Tensor<float>(x.sum({0}, true)).item(), exact) <= 1e-6);
  CHECK(rel_err(Tensor<float>(x.reshape({2500, 4000}).sum({0, 1})).item(), exact) <= 1e-6);
}

TEST_CASE("sums along one dim of long rows and long columns against float64", "[ops][reduce][accuracy]") {
  ThreadsGuard guard;
  // 3 rows of 3,000,017 (fewer rows than read together, a ragged tail) and 4 rows of 2^21
  for (const Dims& shape : {Dims{3, 3'000'017}, Dims{4, 1 << 21}}) {
    const Tensor<float> x = positive_input(shape, 31);
    const int64_t r = shape[0], c = shape[1];
    const Tensor<float> s = x.sum({1}), m = x.mean({1}), f = (x * 3.0).sum({1});
    for (int64_t i = 0; i < r; ++i) {
      double want = 0;
      for (int64_t j = 0; j < c; ++j) want += x.data_ptr()[i * c + j];
      INFO(r << " rows of " << c << ", row " << i);
      CHECK(rel_err(s.data_ptr()[i], want) <= 1e-6);
      CHECK(rel_err(m.data_ptr()[i], want / double(c)) <= 1e-6);
      CHECK(rel_err(f.data_ptr()[i], 3 * want) <= 1e-6);
    }
    // one thread per output row in a fixed order: the same bits for every thread count
    set_num_threads(1);
    const Tensor<float> s1 = x.sum({1});
    for (const int threads : {3, 4}) {
      set_num_threads(threads);
      const Tensor<float> st = x.sum({1});
      CHECK(std::memcmp(s1.data_ptr(), st.data_ptr(), sizeof(float) * size_t(r)) == 0);
    }
    set_num_threads(guard.saved);
  }
  // long columns: 2,000,003 rows of 5 columns (the column kernel), of 300 (two column blocks)
  for (const Dims& shape : {Dims{2'000'003, 5}, Dims{40'000, 300}}) {
    const Tensor<float> x = positive_input(shape, 32);
    const int64_t r = shape[0], c = shape[1];
    const Tensor<float> s = x.sum({0}), m = x.mean({0}, true);
    std::vector<double> want(size_t(c), 0.0);
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < c; ++j) want[size_t(j)] += x.data_ptr()[i * c + j];
    for (int64_t j = 0; j < c; ++j) {
      INFO(r << " rows of " << c << ", column " << j);
      CHECK(rel_err(s.data_ptr()[j], want[size_t(j)]) <= 1e-6);
      CHECK(rel_err(m.data_ptr()[j], want[size_t(j)] / double(r)) <= 1e-6);
    }
    set_num_threads(1);
    const Tensor<float> s1 = x.sum({0});
    for (const int threads : {3, 4}) {
      set_num_threads(threads);
      const Tensor<float> st = x.sum({0});
      CHECK(std::memcmp(s1.data_ptr(), st.data_ptr(), sizeof(float) * size_t(c)) == 0);
    }
    set_num_threads(guard.saved);
  }
}

TEST_CASE("sums over several dims and over a transposed input against float64", "[ops][reduce][accuracy]") {
  // dims 0 and 2 of [400, 6, 5000]: the reduced dims do not coalesce (the general loop)
  const Tensor<float> x = positive_input({400, 6, 5000}, 33);
  const Tensor<float> s = x.sum({0, 2}), m = x.mean({0, 2});
  for (int64_t b = 0; b < 6; ++b) {
    double want = 0;
    for (int64_t a = 0; a < 400; ++a)
      for (int64_t k = 0; k < 5000; ++k) want += x.data_ptr()[(a * 6 + b) * 5000 + k];
    INFO("output " << b);
    CHECK(rel_err(s.data_ptr()[b], want) <= 1e-6);
    CHECK(rel_err(m.data_ptr()[b], want / 2e6) <= 1e-6);
  }
  // rows of a transposed [3, 2^20] input: strided (gathered) rows
  const Tensor<float> y = positive_input({1 << 20, 3}, 34);
  const Tensor<float> st = y.t().sum({1});
  for (int64_t j = 0; j < 3; ++j) {
    double want = 0;
    for (int64_t i = 0; i < (1 << 20); ++i) want += y.data_ptr()[i * 3 + j];
    CHECK(rel_err(st.data_ptr()[j], want) <= 1e-6);
  }
}

TEST_CASE("the sum of a matmul's 10^7 outputs against float64", "[ops][reduce][accuracy]") {
  // [4000, 1] @ [1, 2500]: every product is exactly 0.1f (a k = 1 product rounds once)
  const Tensor<float> a = ones<float>({4000, 1}), b = full<float>({1, 2500}, 0.1f);
  const double exact = 1e7 * double(0.1f);
  CHECK(rel_err(Tensor<float>(matmul(a, b).sum()).item(), exact) <= 1e-6);
  CHECK(rel_err(Tensor<float>((matmul(a, b) + 0.0).sum({0})).data_ptr()[7], 4000 * double(0.1f)) <= 1e-6);
}

TEST_CASE("bf16 and half sums accumulate in float32", "[ops][reduce][accuracy][dtype]") {
  // 10^6 x 0.1: a bf16 accumulator would stop growing at 32 (0.1 is below half its ulp)
  const int64_t n = 1'000'000;
  const double bv = double(float(bfloat16(0.1f))), hv = double(float(half(0.1f)));
  const Tensor<bfloat16> xb = full<bfloat16>({n}, bfloat16(0.1f));
  const Tensor<half> xh = full<half>({n}, half(0.1f));
  // the float sum (relative error <= 1e-6) rounds once to the result type: within half an
  // ulp, 2^-8 relative for bf16 (8 significand bits), 2^-11 for half (11 bits). Half's
  // largest value is 65,504, so its sum takes 5 x 10^5 values (about 49,988).
  const float sb = float(Tensor<bfloat16>(xb.sum()).item());
  CHECK(rel_err(sb, double(n) * bv) <= 1.0 / 256 + 1e-6);
  CHECK(rel_err(float(Tensor<bfloat16>(xb.mean()).item()), bv) <= 1.0 / 256 + 1e-6);
  const Tensor<half> xh5 = xh.slice(0, 0, n / 2);
  CHECK(rel_err(float(Tensor<half>(xh5.sum()).item()), double(n / 2) * hv) <= 1.0 / 2048 + 1e-6);
  CHECK(rel_err(float(Tensor<half>(xh.mean()).item()), hv) <= 1.0 / 2048 + 1e-6);
  // along a dim, fused with a cast-free producer
  const Tensor<bfloat16> rows = (xb.reshape({4, n / 4}) * 1.0).sum({1});
  for (int64_t i = 0; i < 4; ++i) CHECK(rel_err(float(rows.data_ptr()[i]), double(n / 4) * bv) <= 1.0 / 256 + 1e-6);
}
