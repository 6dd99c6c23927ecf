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
