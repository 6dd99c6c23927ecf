// Reductions: sum, mean, prod, max (amax), min (amin), any, all, argmax, argmin — one dim,
// several dims, keepdim, all dims; libtorch fixtures, NaN propagation, empty inputs,
// non-contiguous inputs, fused producers and errors.
#include "testing.hpp"  // Fx, check_fx

using namespace torchtpu;

namespace {
#include "fixtures.inc"  // reference values from libtorch
}

TEST_CASE("reductions over one dim, several dims, keepdim and all dims", "[ops][reduce]") {
  const Tensor<float> x = tensor_of<float>(red_x);  // [2, 3, 4]
  // example-begin sum
  auto s_all = x.sum();                   // [] : every element
  auto s_12 = x.sum({1, 2});              // [2]
  auto s_last = sum(x, {-1}, true);       // [2, 3, 1]
  // example-end sum
  check_fx(s_all, sum_all, 1e-6);
  check_fx(x.sum({0}), sum_d0, 1e-6);
  check_fx(s_12, sum_d12, 1e-6);
  check_fx(s_last, sum_dm1_keep, 1e-6);
  check_fx(x.sum({0, 2}, true), sum_d02_keep, 1e-6);
  check_fx(x.mean(), mean_all, 1e-6);
  check_fx(x.mean({0}), mean_d0, 1e-6);
  check_fx(x.mean({1, 2}), mean_d12, 1e-6);
  check_fx(x.mean({-1}, true), mean_dm1_keep, 1e-6);
  check_fx(x.mean({0, 2}, true), mean_d02_keep, 1e-6);
  check_fx(x.prod(), prod_all, 1e-6);
  check_fx(x.prod({0}), prod_d0, 1e-6);
  check_fx(x.prod({1, 2}), prod_d12, 1e-6);
  check_fx(x.prod({-1}, true), prod_dm1_keep, 1e-6);
  check_fx(x.prod({0, 2}, true), prod_d02_keep, 1e-6);
  check_fx(x.max(), amax_all);
  check_fx(x.max({0}), amax_d0);
  check_fx(x.max({1, 2}), amax_d12);
  check_fx(x.max({-1}, true), amax_dm1_keep);
  check_fx(x.max({0, 2}, true), amax_d02_keep);
  check_fx(x.min(), amin_all);
  check_fx(x.min({0}), amin_d0);
  check_fx(x.min({1, 2}), amin_d12);
  check_fx(x.min({-1}, true), amin_dm1_keep);
  check_fx(x.min({0, 2}, true), amin_d02_keep);
}

TEST_CASE("argmax/argmin over all elements and along a dim", "[ops][reduce][arg]") {
  const Tensor<float> x = tensor_of<float>(red_x);
  check_fx(x.argmax(), argmax_all);
  check_fx(x.argmin(), argmin_all);
  check_fx(x.argmax(1), argmax_d1);
  check_fx(argmin(x, 2, true), argmin_d2_keep);
  check_fx(argmax(x, 0), argmax_d0);
  check_fx(argmax(x, -3), argmax_d0);
  // ties: the first index wins; NaN counts as the maximum (and minimum)
  check_values(argmax(Tensor<float>{1, 3, 3, 2}), {1});
  check_values(argmin(Tensor<int32_t>{4, 1, 1}), {1});
  check_values(argmax(Tensor<float>{1, NAN, 5, NAN}), {1});
  check_values(argmin(Tensor<float>{1, -5, NAN}), {2});
  // over the flattened transposed view: row-major order of the view
  Tensor<float> m = {{0, 9}, {5, 1}};
  check_values(argmax(m.t()), {2});  // m.t() = [[0, 5], [9, 1]]: 9 is flat index 2
  check_values(argmax(m.t(), 1), {1, 0});
  STATIC_REQUIRE(std::same_as<decltype(argmax(m))::value_type, int64_t>);
  CHECK(argmax(m, 0, true).shape() == Dims{1, 2});
  CHECK(argmax(m).shape() == Dims{});
}

TEST_CASE("integer and bool reductions accumulate in int64", "[ops][reduce][dtype]") {
  Tensor<uint8_t> u = {200, 100, 250};
  auto s = u.sum();
  STATIC_REQUIRE(std::same_as<decltype(s)::value_type, int64_t>);
  check_values(s, {550});
  Tensor<bool> b = {true, false, true, true};
  check_values(b.sum(), {3});
  STATIC_REQUIRE(std::same_as<decltype(b.sum())::value_type, int64_t>);
  check_values(Tensor<int32_t>{100000, 100000}.prod(), {1e10});
  check_values(Tensor<int32_t>{3, -7, 2}.max(), {3});
  STATIC_REQUIRE(std::same_as<decltype(Tensor<int32_t>{}.max())::value_type, int32_t>);
  check_values(b.any(), {1});
  check_values(b.all(), {0});
  check_values(Tensor<float>{1, NAN}.all(), {1});  // NaN is nonzero
  check_values(Tensor<int32_t>{{0, 1}, {0, 0}}.any({1}), {1, 0});
  check_values(Tensor<int32_t>{{0, 1}, {2, 3}}.all({1}, true), {0, 1});
  // bf16 sums accumulate in float and round once
  Tensor<bfloat16> ones16 = ones<bfloat16>({1000});
  check_values(ones16.sum(), {1000});
}

TEST_CASE("NaN propagates through sum, mean, max and min", "[ops][reduce][nan]") {
  Tensor<float> x = {{1, NAN, 3}, {4, 5, 6}};
  check_values(x.sum({1}), {NAN, 15});
  check_values(x.mean({1}), {NAN, 5});
  check_values(x.max({1}), {NAN, 6});
  check_values(x.min({1}), {NAN, 4});
  check_values(x.max(), {NAN});
  check_values(x.min({0}), {1, NAN, 3});
  Tensor<float> nan_last = {1, 2, NAN};
  check_values(nan_last.max(), {NAN});
  check_values(nan_last.min(), {NAN});
}

TEST_CASE("reductions of empty tensors and zero-size dims", "[ops][reduce][empty]") {
  Tensor<float> e = zeros<float>({0, 3});
  check_values(e.sum(), {0});
  check_values(e.sum({0}), {0, 0, 0});
  check_values(e.prod({0}), {1, 1, 1});
  check_values(e.mean({0}), {NAN, NAN, NAN});  // 0 / 0, as torch.mean
  CHECK(e.sum({1}).shape() == Dims{0});
  check_values(e.any(), {0});
  check_values(e.all(), {1});
  CHECK_THROWS_AS(e.max({0}), ShapeError);
  CHECK_THROWS_AS(e.max(), ShapeError);
  CHECK_THROWS_AS(e.argmax(), ShapeError);
  CHECK_THROWS_AS(e.argmax(0), ShapeError);
  CHECK(e.max({1}).shape() == Dims{0});  // reducing a nonzero dim of an empty tensor is fine
  // rank-0 input
  Tensor<float> s = full<float>({}, 4.0f);
  check_values(s.sum(), {4});
  check_values(s.max(), {4});
  check_values(s.argmax(), {0});
}

TEST_CASE("reductions of non-contiguous inputs and of fused expressions", "[ops][reduce][strided]") {
  Tensor<float> m = arange<float>(12).reshape({3, 4});
  check_values(m.t().sum({1}), {12, 15, 18, 21});
  check_values(m.slice(1, 1, 4, 2).sum({0}), {15, 21});     // columns 1 and 3
  check_values(m.slice(0, 0, 3, 2).max({1}, true), {3, 11});
  // a reduction consumes its elementwise producer: sum((m - 1)^2) over rows
  check_values(((m - 1.0f) * (m - 1.0f)).sum({1}), {1 + 0 + 1 + 4, 9 + 16 + 25 + 36, 49 + 64 + 81 + 100});
  // expanded (stride 0) input
  check_values(Tensor<float>{1, 2}.unsqueeze(0).expand({5, 2}).sum({0}), {5, 10});
  // a reduction used inside an elementwise expression (materialized first)
  check_values(m - m.mean({1}, true), {-1.5, -0.5, 0.5, 1.5, -1.5, -0.5, 0.5, 1.5, -1.5, -0.5, 0.5, 1.5});
}

TEST_CASE("reduction dim errors", "[ops][reduce][errors]") {
  Tensor<float> x = zeros<float>({2, 3});
  CHECK_THROWS_AS(x.sum({2}), IndexError);
  CHECK_THROWS_WITH(x.sum({2}), "sum: dimension 2 out of range (expected to be in range of [-2, 1])");
  CHECK_THROWS_AS(x.sum({0, -2}), ShapeError);
  CHECK_THROWS_AS(x.argmax(-3), IndexError);
}

// Issue 18 item 12: integer sums and products accumulate in int64 and wrap around (torch:
// tensor([2**62] * 3).sum() == -4611686018427387904, tensor([2**40, 2**40]).prod() == 0).
TEST_CASE("integer sums and products wrap around in int64", "[ops][reduce][int]") {
  const int64_t q = int64_t(1) << 62;
  const Tensor<int64_t> s = sum(Tensor<int64_t>{q, q, q});
  CHECK(s.item() == -q);
  const Tensor<int64_t> s2 = sum(Tensor<int64_t>{{q, q}, {q, -q}}, {1});
  CHECK(s2.data_ptr()[0] == std::numeric_limits<int64_t>::min());
  CHECK(s2.data_ptr()[1] == 0);
  const Tensor<int64_t> s32 = sum(Tensor<int32_t>{2147483647, 2147483647, 2147483647});  // no wrap in int64
  CHECK(s32.item() == int64_t(6442450941));
  const Tensor<int64_t> p = prod(Tensor<int64_t>{int64_t(1) << 40, int64_t(1) << 40});
  CHECK(p.item() == 0);
  const Tensor<int64_t> p3 = prod(Tensor<int64_t>{3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
                                                  3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3});
  CHECK(p3.item() == int64_t(-6289078614652622815));  // 3^40 mod 2^64
}
