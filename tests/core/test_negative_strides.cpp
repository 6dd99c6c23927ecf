// Negative strides (issue 12 item 4): `flip` (a view with negated strides), the strided
// constructor and `from_blob` with negative strides (bounds from the lowest and highest
// element reached), and every kind of op reading and writing such views: elementwise maps
// (scalar and vector paths, gathered rows), reductions along and across the reversed dim,
// softmax, matmul operands, contiguous/clone, copy_ into a reversed destination, and writing a
// tensor with its own reversal (aliasing). Expected values are computed here by index.
#include "../ops/testing.hpp"  // check_values, values_of, Catch2, torchtpu

#include <cmath>   // std::exp
#include <vector>  // std::vector

using namespace torchtpu;

namespace {
/// x[i, j] = 10 i + j: every element tells where it came from.
Tensor<float> grid(int64_t r, int64_t c) {
  Tensor<float> t = Tensor<float>::empty({r, c});
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) t.data_ptr()[i * c + j] = float(10 * i + j);
  return t;
}
}  // namespace

TEST_CASE("flip is a view with negated strides, as torch.flip's values", "[core][views][flip]") {
  const Tensor<float> x = {{0, 1, 2}, {3, 4, 5}};
  // example-begin flip
  Tensor<float> rows = x.flip({0});  // [[3, 4, 5], [0, 1, 2]], shares x's storage
  // example-end flip
  CHECK(rows.storage() == x.storage());
  CHECK(rows.strides() == Dims{-3, 1});
  CHECK(rows.storage_offset() == 3);
  CHECK_FALSE(rows.is_contiguous());
  check_values(rows, {3, 4, 5, 0, 1, 2});
  check_values(x.flip({1}), {2, 1, 0, 5, 4, 3});
  check_values(x.flip({0, -1}), {5, 4, 3, 2, 1, 0});
  check_values(x.flip({}), {0, 1, 2, 3, 4, 5});
  check_values(x.flip({0}).flip({0}), {0, 1, 2, 3, 4, 5});
  CHECK(x.flip({0}).flip({0}).strides() == x.strides());
  // a size-1 or size-0 dim keeps its stride; a scalar flips to itself
  const Tensor<float> one = x.slice(0, 0, 1);
  CHECK(one.flip({0}).strides() == one.strides());
  CHECK(one.flip({0}).storage_offset() == 0);
  CHECK(x.slice(0, 0, 0).flip({0, 1}).sizes() == Dims{0, 3});
  CHECK(Tensor<float>(full<float>({}, 7.0f)).flip({0}).item() == 7.0f);
  // contiguous() and clone() are row-major copies in the flipped order
  const Tensor<float> c = x.flip({0, 1}).contiguous();
  CHECK(c.is_contiguous());
  CHECK(c.storage() != x.storage());
  check_values(c, {5, 4, 3, 2, 1, 0});
  check_values(x.flip({1}).clone(), {2, 1, 0, 5, 4, 3});
  // writes through the view land in the original, reversed
  Tensor<float> w = x.clone();
  w.flip({1}).select(0, 0).copy_(Tensor<float>{7, 8, 9});
  check_values(w, {9, 8, 7, 3, 4, 5});
  // errors
  CHECK_THROWS_AS(x.flip({0, 0}), ShapeError);
  CHECK_THROWS_AS(x.flip({1, -1}), ShapeError);
  CHECK_THROWS_WITH(x.flip({0, -2}), "flip: dim 0 appears multiple times in the list of dims [0, -2] (shape [2, 3])");
  CHECK_THROWS_AS(x.flip({2}), IndexError);
}

TEST_CASE("the strided constructor and from_blob accept negative strides inside the storage",
          "[core][views][flip]") {
  // rows of [[0, 1, 2], [3, 4, 5]] reversed: offset 3, strides [-3, 1]
  Tensor<float> x = {0, 1, 2, 3, 4, 5};
  const Tensor<float> r(x.storage(), Dims{2, 3}, Dims{-3, 1}, 3);
  check_values(r, {3, 4, 5, 0, 1, 2});
  check_values(r.contiguous(), {3, 4, 5, 0, 1, 2});
  // the lowest element reached is offset + (size - 1) * stride: -1 is outside
  CHECK_THROWS_AS(Tensor<float>(x.storage(), Dims{2, 3}, Dims{-3, 1}, 2), ShapeError);
  CHECK_THROWS_WITH(Tensor<float>(x.storage(), Dims{3}, Dims{-1}, 1),
                    "Tensor: a view with sizes [3], strides [-1], storage offset 1 and dtype float32 reaches bytes "
                    "[-4, 8) outside its storage of 24 bytes");
  CHECK_NOTHROW(Tensor<float>(x.storage(), Dims{6}, Dims{-1}, 5));
  CHECK_THROWS_AS(Tensor<float>(x.storage(), Dims{6}, Dims{-1}, 6), ShapeError);  // highest is 6
  // from_blob: `data` is element [0]; the view reaches downwards from it
  float buf[2] = {1.0f, 34.0f};
  const Tensor<float> b = from_blob(buf + 1, Dims{2}, [](void*) {}, Dims{-1});
  check_values(b, {34, 1});
  CHECK(b.storage()->nbytes == 8);
  CHECK(b.data_ptr() == buf + 1);
  check_values(b * 2.0, {68, 2});
}

TEST_CASE("elementwise ops read and write reversed views", "[core][views][flip]") {
  // long rows reach the vector kernels (gathered: the inner stride is -1)
  for (const int64_t c : {1, 5, 16, 17, 1029}) {
    INFO("rows of " << c);
    const Tensor<float> x = grid(7, c), y = grid(7, c) * 0.5;
    const Tensor<float> e = exp(x.flip({1}) * 0.001) + y.flip({0});
    const Tensor<float> s = x.flip({0, 1}) - x;
    for (int64_t i = 0; i < 7; ++i) {
      for (int64_t j = 0; j < c; ++j) {
        const float want = std::exp(float(10 * i + (c - 1 - j)) * 0.001f) + 0.5f * float(10 * (6 - i) + j);
        REQUIRE(e.data_ptr()[i * c + j] == Approx(want).epsilon(1e-6));
        REQUIRE(s.data_ptr()[i * c + j] == float(10 * (6 - i) + (c - 1 - j)) - float(10 * i + j));
      }
    }
    // writing into a reversed destination
    Tensor<float> d = Tensor<float>::empty({7, c});
    d.flip({1}).copy_(x + 1.0);
    for (int64_t i = 0; i < 7; ++i)
      for (int64_t j = 0; j < c; ++j) REQUIRE(d.data_ptr()[i * c + j] == float(10 * i + (c - 1 - j)) + 1.0f);
  }
}

TEST_CASE("a reversed region large enough for the thread pool", "[core][views][flip]") {
  // 600 x 1000 elements: split over the engine's threads (scripts/test runs 1, 3 and 4)
  const Tensor<float> x = grid(600, 1000);
  const Tensor<float> y = x.flip({0, 1}) + 1.0;
  Tensor<float> z = Tensor<float>::empty({600, 1000});
  z.flip({0}).copy_(x * 2.0);
  int64_t bad_y = 0, bad_z = 0;
  for (int64_t i = 0; i < 600; ++i) {
    for (int64_t j = 0; j < 1000; ++j) {
      bad_y += y.data_ptr()[i * 1000 + j] != float(10 * (599 - i) + (999 - j)) + 1.0f;
      bad_z += z.data_ptr()[i * 1000 + j] != 2.0f * float(10 * (599 - i) + j);
    }
  }
  CHECK(bad_y == 0);
  CHECK(bad_z == 0);
}

TEST_CASE("a tensor written with its own reversal gives torch's result", "[core][views][flip][alias]") {
  // torch.flip returns a copy, so x.copy_(x.flip(0)) reverses x; the view must read the old
  // values, never ones already overwritten
  Tensor<float> x = arange<float>(10);
  x.copy_(x.flip({0}));
  check_values(x, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0});
  Tensor<float> g = grid(3, 40);
  g.copy_(g.flip({1}) + g);  // each element plus its mirror: 20 i + 39 across the row
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 40; ++j) REQUIRE(g.data_ptr()[i * 40 + j] == float(2 * 10 * i + 39));
  Tensor<float> h = grid(4, 3);
  h = h.flip({0}) * 1.0;  // assigning to the variable: a new value, not a write through the view
  check_values(h, {30, 31, 32, 20, 21, 22, 10, 11, 12, 0, 1, 2});
}

TEST_CASE("reductions, softmax and matmul of reversed views", "[core][views][flip]") {
  const Tensor<float> x = grid(6, 300);
  const Tensor<float> f = x.flip({1});
  const Tensor<float> rows = f.sum({1}), cols = x.flip({0}).sum({0}), all = x.flip({0, 1}).sum();
  const Tensor<int64_t> am = f.argmax(1);
  for (int64_t i = 0; i < 6; ++i) {
    CHECK(rows.data_ptr()[i] == float(300 * 10 * i + 299 * 300 / 2));
    CHECK(am.data_ptr()[i] == 0);  // the largest element (j = 299) is first in the flipped row
  }
  for (int64_t j = 0; j < 300; ++j) CHECK(cols.data_ptr()[j] == float(10 * 15 + 6 * j));
  CHECK(all.item() == float(300 * 10 * 15 + 6 * 299 * 300 / 2));
  check_values(f.max({1}), {299, 309, 319, 329, 339, 349});
  // softmax along the reversed dim is the reversed softmax
  const Tensor<float> sm = softmax(f * 0.01, 1), ref = softmax(x * 0.01, 1);
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 300; ++j) REQUIRE(sm.data_ptr()[i * 300 + j] == Approx(ref.data_ptr()[i * 300 + 299 - j]).epsilon(1e-6));
  // matmul with reversed operands: flip(a, 1) @ flip(b, 0) = a @ b (the k order reverses)
  const Tensor<float> a = grid(5, 70) * 0.01, b = grid(70, 9) * 0.01;
  const Tensor<float> p = matmul(a.flip({1}), b.flip({0})), q = matmul(a, b);
  const Tensor<float> pr = matmul(a.flip({0}), b);
  for (int64_t i = 0; i < 5; ++i) {
    for (int64_t j = 0; j < 9; ++j) {
      double want = 0;
      for (int64_t k = 0; k < 70; ++k) want += double(a.data_ptr()[i * 70 + k]) * double(b.data_ptr()[k * 9 + j]);
      REQUIRE(p.data_ptr()[i * 9 + j] == Approx(want).epsilon(1e-5));
      REQUIRE(q.data_ptr()[i * 9 + j] == Approx(want).epsilon(1e-5));
      REQUIRE(pr.data_ptr()[(4 - i) * 9 + j] == Approx(want).epsilon(1e-5));
    }
  }
}
