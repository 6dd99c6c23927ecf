// Aliasing: a destination that overlaps an input read at other positions gives the same
// result as an unfused evaluation (a = a.t(), x += x.t(), shifted slices of x into x,
// reductions and softmax into their own input).
#include "../ops/testing.hpp"  // check_values, Catch2, torchtpu

using namespace torchtpu;

TEST_CASE("x += x.t() equals the unfused result", "[expr][alias]") {
  // example-begin alias-transpose
  Tensor<float> x = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}};
  x += x.t();  // reads x transposed while writing x: evaluated through a temporary
  // example-end alias-transpose
  check_values(x, {2, 6, 10, 6, 10, 14, 10, 14, 18});
  Tensor<float> y = arange<float>(16).reshape({4, 4});
  y.copy_(y.t() * 2.0f - y);
  check_values(y, {0, 7, 14, 21, -2, 5, 12, 19, -4, 3, 10, 17, -6, 1, 8, 15});  // 7j - 2i
}

TEST_CASE("a = a.t() and expressions of the destination", "[expr][alias]") {
  Tensor<float> a = {{1, 2}, {3, 4}};
  a = a.t();  // handle assignment: a now views the transpose (torch semantics)
  check_values(a, {1, 3, 2, 4});
  Tensor<float> b = {{1, 2}, {3, 4}};
  b = b.t() + b;  // the expression holds b: a new tensor is made, then bound
  check_values(b, {2, 5, 5, 8});
  Tensor<float> c = {{1, 2}, {3, 4}};
  c.copy_(c.t());  // in place: must not read already-written elements
  check_values(c, {1, 3, 2, 4});
  Tensor<float> d = {{1, 2}, {3, 4}};
  d.t().copy_(d + 10.0f);  // writing through a transposed view of the input
  check_values(d, {11, 13, 12, 14});
}

TEST_CASE("assigning a shifted slice of x into x", "[expr][alias]") {
  const int64_t n = 10;
  // example-begin alias-shift
  Tensor<float> x = arange<float>(n);
  x.slice(0, 1, n) = x.slice(0, 0, n - 1);  // shift right by one, like NumPy x[1:] = x[:-1]
  // example-end alias-shift
  check_values(x, {0, 0, 1, 2, 3, 4, 5, 6, 7, 8});
  Tensor<float> y = arange<float>(n);
  y.slice(0, 0, n - 1) = y.slice(0, 1, n);  // shift left
  check_values(y, {1, 2, 3, 4, 5, 6, 7, 8, 9, 9});
  Tensor<float> z = arange<float>(n);
  z.slice(0, 2, n) += z.slice(0, 0, n - 2);  // running update through overlapping views
  check_values(z, {0, 1, 2, 4, 6, 8, 10, 12, 14, 16});
  Tensor<float> w = arange<float>(12).reshape({3, 4});
  w.slice(0, 1, 3) = w.slice(0, 0, 2) * 10.0f;  // rows shifted, as an expression
  check_values(w, {0, 1, 2, 3, 0, 10, 20, 30, 40, 50, 60, 70});
  Tensor<float> r = arange<float>(6);
  r.slice(0, 0, 6, 2) = r.slice(0, 1, 6, 2);  // stepped views interleaved in one buffer
  check_values(r, {1, 1, 3, 3, 5, 5});
  Tensor<float> v = arange<float>(6);
  Tensor<float> rev = v.slice(0, 0, 3);
  v.slice(0, 3, 6) = rev * 1.0f;  // disjoint views of one storage: no temporary needed
  check_values(v, {0, 1, 2, 0, 1, 2});
}

TEST_CASE("in-place ops on the same positions are safe without a temporary", "[expr][alias]") {
  Tensor<float> x = {1, 2, 3};
  const float* p = x.data_ptr();
  x.copy_(x * x + x);
  check_values(x, {2, 6, 12});
  CHECK(x.data_ptr() == p);
  // a broadcast read of the destination is not the same position: still correct
  Tensor<float> m = {{1, 2}, {3, 4}};
  m.copy_(m - m.select(0, 0));  // row 0 is read for every row, and row 0 is overwritten
  check_values(m, {0, 0, 2, 2});
  // a different dtype viewing... (through to<>) and a reduction of the destination
  Tensor<float> s = {{1, 2}, {3, 4}};
  s.copy_(s / s.sum({0}, true));
  check_values(s, {0.25, 2.0 / 6, 0.75, 4.0 / 6}, 1e-7);
  Tensor<float> q = {{1, 2}, {3, 4}};
  q.select(1, 0).copy_(q.sum({1}));  // write a reduction into a column of its input
  check_values(q, {3, 2, 7, 4});
  Tensor<float> sm = {{0, 0}, {1, 1}};
  sm.t().copy_(softmax(sm, 0));  // softmax written transposed into its own input
  const double e = std::exp(1.0);
  check_values(sm, {1 / (1 + e), e / (1 + e), 1 / (1 + e), e / (1 + e)}, 1e-7);
}

// Issue 18 item 9: overlap is decided on address ranges. Two from_blob tensors over one buffer
// (or two imports of one torch tensor) have different storages but the same memory; they must
// give the same answers as two views of one storage.
TEMPLATE_TEST_CASE("views of one buffer through different storages alias correctly", "[expr][alias]", float, double,
                   int32_t, int64_t, torchtpu::bfloat16) {
  using T = TestType;
  const int64_t n = 100;
  std::vector<T> buf(static_cast<size_t>(n));
  auto reset = [&] {
    for (int64_t i = 0; i < n; ++i) buf[size_t(i)] = T(float(i));
  };
  std::vector<double> shifted(static_cast<size_t>(n));  // x[1:] = x[:-1], computed here
  shifted[0] = 0;
  for (int64_t i = 1; i < n; ++i) shifted[size_t(i)] = double(i - 1);
  Tensor<T> a = from_blob(buf.data(), {n});
  Tensor<T> b = from_blob(buf.data(), {n});
  REQUIRE(a.storage().get() != b.storage().get());
  SECTION("an expression") {
    reset();
    b.slice(0, 1, n).copy_(a.slice(0, 0, n - 1) * T(1.0f));
    check_values(b, shifted);
  }
  SECTION("a plain copy (no memcpy of overlapping ranges)") {
    reset();
    b.slice(0, 1, n).copy_(a.slice(0, 0, n - 1));
    check_values(b, shifted);
    reset();
    b.slice(0, 0, n - 1).copy_(a.slice(0, 1, n));  // shift left
    std::vector<double> left(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) left[size_t(i)] = double(i + 1 < n ? i + 1 : n - 1);
    check_values(b, left);
  }
  SECTION("a copy onto itself through the other storage") {
    reset();
    b.copy_(a);
    b.slice(0, 10, 20).copy_(a.slice(0, 10, 20));
    std::vector<double> same(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) same[size_t(i)] = double(i);
    check_values(b, same);
  }
  SECTION("a reduction into a column of its input") {
    reset();
    const Tensor<T> m = a.reshape({10, 10});
    b.reshape({10, 10}).select(1, 0).copy_(m.sum({1}));  // row sums of 10i + j: 100i + 45
    for (int64_t i = 0; i < 10; ++i) {
      INFO("row " << i);
      CHECK(double(buf[size_t(i * 10)]) == double(T(float(100 * i + 45))));
      CHECK(double(buf[size_t(i * 10 + 1)]) == double(10 * i + 1));
    }
  }
}

TEST_CASE("a matmul epilogue into a different storage over its operand's memory", "[expr][alias]") {
  // out[i][j] = x[i][n-1-j] + x[i][j] (the product with the anti-diagonal matrix, plus x):
  // writing rows of the product in place would read columns already overwritten.
  for (int64_t m : {2, 3, 8, 64}) {
    const int64_t n = 16;
    INFO("m = " << m);
    std::vector<float> buf(static_cast<size_t>(m * n));
    for (size_t i = 0; i < buf.size(); ++i) buf[i] = float(i % 97);
    const std::vector<float> orig = buf;
    Tensor<float> w = zeros<float>({n, n});
    for (int64_t j = 0; j < n; ++j) w.at(n - 1 - j, j) = 1.0f;
    Tensor<float> x = from_blob(buf.data(), {m, n});
    Tensor<float> d = from_blob(buf.data(), {m, n});
    d.copy_(matmul(x, w) + x);
    std::vector<double> want(static_cast<size_t>(m * n));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        want[size_t(i * n + j)] = double(orig[size_t(i * n + n - 1 - j)]) + double(orig[size_t(i * n + j)]);
    check_values(d, want);
    buf = orig;
    d.copy_(matmul(x, w));  // the product alone, into its operand's memory
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) want[size_t(i * n + j)] = double(orig[size_t(i * n + n - 1 - j)]);
    check_values(d, want);
  }
}
