// In-place writes into a destination whose own elements share memory (issue 12 item 2): an
// expanded (stride-0) dim of size > 1, or strides that provably collide, are refused by every
// write path (copy_, fill_, +=, -=, *=, /=, writes through a view temporary) before anything is
// written, as torch's assert_no_internal_overlap; read-only broadcast views stay zero-copy, and
// non-overlapping strided views (transposed, stepped, negative, interleaved) stay writable.
#include "../ops/testing.hpp"  // check_values, values_of, Catch2, torchtpu

#include <cstring>  // std::memcmp
#include <vector>   // std::vector

using namespace torchtpu;
using Catch::Matchers::Contains;

TEST_CASE("overlap: the inputs of issue 12 are refused and change nothing", "[core][overlap]") {
  Tensor<float> base = {2.0f};
  Tensor<float> v = base.broadcast_to({1, 3});  // strides [0, 0]
  CHECK(v.strides() == Dims{0, 0});
  CHECK_THROWS_AS(v *= 2, ValueError);
  CHECK_THROWS_WITH(v *= 2, Contains("mul_") && Contains("shape [1, 3]") && Contains("strides [0, 0]") &&
                                Contains("single memory location"));
  CHECK(base.at(0) == 2.0f);  // was 4.0

  Tensor<float> half_base = {0.5f};
  Tensor<float> w = half_base.broadcast_to({4});
  const Tensor<float> r4 = {1, 2, 3, 4};
  CHECK_THROWS_AS(w += r4, ValueError);
  CHECK_THROWS_WITH(w += r4, Contains("add_") && Contains("shape [4]") && Contains("strides [0]"));
  CHECK(half_base.at(0) == 0.5f);  // was 4.5
  CHECK_THROWS_WITH(w -= 1.0f, Contains("sub_"));
  CHECK_THROWS_WITH(w /= 2.0f, Contains("div_"));
  CHECK_THROWS_WITH(w.copy_(r4), Contains("copy_"));
  CHECK_THROWS_WITH(w.fill_(7), Contains("fill_") && Contains("strides [0]"));
  CHECK_THROWS_WITH(half_base.expand({4}) = r4, Contains("copy_"));
  CHECK_THROWS_WITH(half_base.expand({4}) = 3.0f, Contains("fill_"));
  CHECK_THROWS_WITH(half_base.expand({2, 2}) = half_base + 1, Contains("copy_") && Contains("[2, 2]"));
  CHECK(half_base.at(0) == 0.5f);
}

TEST_CASE("overlap: read-only broadcast views stay zero-copy and usable", "[core][overlap]") {
  Tensor<float> base = {2.0f, -1.0f};
  Tensor<float> v = base.unsqueeze(0).expand({3, 2});
  CHECK(v.data_ptr() == base.data_ptr());  // a view, no copy
  Tensor<float> r = v * 2 + 1;
  check_values(r, {5, -1, 5, -1, 5, -1});
  Tensor<float> c = v.clone();  // a copy of an overlapping view is an ordinary tensor
  c += 1;
  check_values(c, {3, 0, 3, 0, 3, 0});
  // a size-1 dim may have stride 0: nothing overlaps
  Tensor<float> one(base.storage(), Dims{1, 2}, Dims{0, 1});
  one *= 3;
  check_values(base, {6, -3});
  // writing an overlapping view INTO another tensor is fine (only the destination matters)
  Tensor<float> dst = Tensor<float>::empty({3, 2});
  dst.copy_(v);
  check_values(dst, {6, -3, 6, -3, 6, -3});
  // an empty expanded view writes nothing and is not refused
  Tensor<float> none = base.unsqueeze(0).expand({0, 2});
  CHECK_NOTHROW(none += 1);
}

TEMPLATE_TEST_CASE("overlap: every dtype is checked, and the failed write changes nothing", "[core][overlap]",
                   float, double, bfloat16, half, int32_t, int64_t, uint8_t, bool) {
  using T = TestType;
  Tensor<T> base = Tensor<T>::empty({2});
  base.data_ptr()[0] = T(1.0f);
  base.data_ptr()[1] = T(0.0f);
  Tensor<T> e = base.unsqueeze(1).expand({2, 3});  // [2, 3], strides [1, 0]
  const std::vector<double> before = values_of(base);
  Tensor<T> src = Tensor<T>::empty({2, 3});
  for (int i = 0; i < 6; ++i) src.data_ptr()[i] = T(float(i % 2));
  CHECK_THROWS_WITH(e.copy_(src), Contains("copy_") && Contains("shape [2, 3]") && Contains("strides [1, 0]"));
  CHECK_THROWS_AS(e.fill_(1), ValueError);
  CHECK_THROWS_AS(Tensor<T>(e) = src, ValueError);  // through a view temporary
  if constexpr (!std::is_same_v<T, bool>) {
    CHECK_THROWS_AS(e += src, ValueError);
    CHECK_THROWS_AS(e *= src, ValueError);
  }
  CHECK(values_of(base) == before);
  // the same destination without the stride-0 dim is writable
  Tensor<T> ok = base.unsqueeze(1);
  ok.copy_(Tensor<T>::empty({2, 1}).fill_(0));
  check_values(base, {0, 0});
}

TEST_CASE("overlap: strides that collide without a zero", "[core][overlap]") {
  Tensor<float> buf = arange<float>(8);
  // offsets {0, 1, 1, 2}: elements [0, 1] and [1, 0] are one location
  Tensor<float> diag(buf.storage(), Dims{2, 2}, Dims{1, 1});
  CHECK(detail::has_internal_overlap(diag.sizes(), diag.strides()));
  CHECK_THROWS_WITH(diag += 1, Contains("add_") && Contains("strides [1, 1]"));
  // sliding windows of 3 over 8 elements, step 2 (torch's unfold): offsets repeat
  Tensor<float> win(buf.storage(), Dims{3, 3}, Dims{2, 1});
  CHECK_THROWS_AS(win.fill_(0), ValueError);
  check_values(buf, {0, 1, 2, 3, 4, 5, 6, 7});
  // interleaved but disjoint: offsets {0, 2, 4} + {0, 3} = {0, 2, 3, 4, 5, 7}; not refused
  Tensor<float> inter(buf.storage(), Dims{3, 2}, Dims{2, 3});
  CHECK_FALSE(detail::has_internal_overlap(inter.sizes(), inter.strides()));
  inter += 10;
  check_values(buf, {10, 1, 12, 13, 14, 15, 6, 17});
  // negative, transposed and stepped views of dense memory are disjoint
  Tensor<float> rev(buf.storage(), Dims{4}, Dims{-2}, 6);  // offsets 6, 4, 2, 0
  rev.copy_(Tensor<float>{1, 2, 3, 4});
  check_values(buf, {4, 1, 3, 13, 2, 15, 1, 17});
  Tensor<float> m = arange<float>(6).reshape({2, 3});
  m.t() *= 2;
  m.slice(1, 0, 3, 2) -= 1;
  check_values(m, {-1, 2, 3, 5, 8, 9});
  CHECK_FALSE(detail::has_internal_overlap(Dims{3, 4, 5}, Dims{1, 15, 3}));  // a permuted dense tensor
  CHECK(detail::has_internal_overlap(Dims{2, 3}, Dims{1, -1}));               // offsets {0, 1} - {0, 1, 2}
  CHECK_FALSE(detail::has_internal_overlap(Dims{0, 3}, Dims{0, 0}));          // empty
  CHECK_FALSE(detail::has_internal_overlap(Dims{}, Dims{}));                  // a scalar
}
