// tests/ops/test_sort.cpp — the sorting family of the operator library (ops/sort.hpp): sort,
// argsort, topk on the cpu, every dtype, typed and AnyTensor front ends, the call by aten name,
// errors. Expected values are torch 1.13's (the generating Python is beside each), with
// `stable=True` where keys repeat (torchtpu's order is torch's stable order).
#include <cmath>    // NAN
#include <cstdint>  // int64_t
#include <vector>   // std::vector

#include <torchtpu/ops/all.hpp>  // ops::call_by_name_all

#include "testing.hpp"  // check_values, Catch2, torchtpu

using namespace torchtpu;
using optest::make;
using optest::message_of;
using optest::through;

namespace {
// x = torch.tensor([[3., 1., 2., 1.], [0., 5., -1., 5.], [2., 2., 2., 0.]])
const std::vector<double> kX = {3, 1, 2, 1, 0, 5, -1, 5, 2, 2, 2, 0};
}  // namespace

TEMPLATE_TEST_CASE("sort and argsort: every dtype, typed API, stable order", "[ops][sort]", uint8_t, int32_t, int64_t,
                   half, bfloat16, float, double) {
  using T = TestType;
  std::vector<double> x = kX;
  if constexpr (std::is_same_v<T, uint8_t>) x[6] = 255;  // -1 wraps; the expectations below use it as the largest
  const Tensor<T> t = make<T>(x, Dims{3, 4});
  // torch.sort(x, dim=1, stable=True)
  const auto [v, i] = sort(t, 1);
  CHECK(v.sizes() == Dims{3, 4});
  if constexpr (std::is_same_v<T, uint8_t>) {
    check_values(v, {1, 1, 2, 3, 0, 5, 5, 255, 0, 2, 2, 2});
    check_values(i, {1, 3, 2, 0, 0, 1, 3, 2, 3, 0, 1, 2});
  } else {
    check_values(v, {1, 1, 2, 3, -1, 0, 5, 5, 0, 2, 2, 2});
    check_values(i, {1, 3, 2, 0, 2, 0, 1, 3, 3, 0, 1, 2});
    // torch.sort(x, dim=0, descending=True, stable=True)
    const auto [v0, i0] = sort(t, 0, true);
    check_values(v0, {3, 5, 2, 5, 2, 2, 2, 1, 0, 1, -1, 0});
    check_values(i0, {0, 1, 0, 1, 2, 2, 2, 0, 1, 0, 1, 2});
    check_values(argsort(t, 0, true), {0, 1, 0, 1, 2, 2, 2, 0, 1, 0, 1, 2});
  }
  check_values(argsort(t, -1), std::vector<double>(i.data_ptr(), i.data_ptr() + 12));
}

TEST_CASE("sort: bool, NaN placement, 0-dim and empty operands, non-contiguous input", "[ops][sort]") {
  // torch.sort(torch.tensor([True, False, True, False]), stable=True) -> [F, F, T, T], [1, 3, 0, 2]
  const auto [bv, bi] = sort(make<bool>({1, 0, 1, 0}, Dims{4}));
  check_values(bv, {0, 0, 1, 1});
  check_values(bi, {1, 3, 0, 2});
  // n = nan; torch.sort(torch.tensor([2., n, -1., n, 5.]), stable=True)[1] -> [2, 0, 4, 1, 3]
  // ... descending=True -> [1, 3, 4, 0, 2]
  const Tensor<float> n = make<float>({2, NAN, -1, NAN, 5}, Dims{5});
  const auto [nv, ni] = sort(n);
  check_values(ni, {2, 0, 4, 1, 3});
  check_values(nv, {-1, 2, 5, NAN, NAN});
  check_values(argsort(n, 0, true), {1, 3, 4, 0, 2});
  // 0-dim: torch.sort(torch.tensor(5.)) -> (5., 0)
  const auto [sv, si] = sort(make<double>({5}, Dims{}));
  CHECK(sv.dim() == 0);
  check_values(sv, {5});
  check_values(si, {0});
  const auto [ev, ei] = sort(Tensor<float>::empty(Dims{2, 0}));
  CHECK(ev.sizes() == Dims{2, 0});
  CHECK(ei.sizes() == Dims{2, 0});
  // a transposed view sorts its logical values: x.t() sorted along dim 1 = x sorted along dim 0
  const Tensor<float> x = make<float>(kX, Dims{3, 4});
  const auto [tv, ti] = sort(Tensor<float>(x.transpose(0, 1)), 1);
  check_values(ti, {1, 2, 0, 0, 2, 1, 1, 0, 2, 2, 0, 1});
  (void)tv;
}

TEMPLATE_TEST_CASE("topk: every dtype but bool, typed API", "[ops][sort][topk]", uint8_t, int32_t, int64_t, half,
                   bfloat16, float, double) {
  using T = TestType;
  const Tensor<T> t = make<T>({3, 1, 7, 4, 0, 9, 2, 5}, Dims{2, 4});
  // torch.topk(torch.tensor([[3., 1., 7., 4.], [0., 9., 2., 5.]]), 2) -> [[7, 4], [9, 5]], [[2, 3], [1, 3]]
  const auto [v, i] = topk(t, 2);
  CHECK(v.sizes() == Dims{2, 2});
  check_values(v, {7, 4, 9, 5});
  check_values(i, {2, 3, 1, 3});
  // torch.topk(..., 3, dim=1, largest=False) -> [[1, 3, 4], [0, 2, 5]], [[1, 0, 3], [0, 2, 3]]
  const auto [sv, si] = topk(t, 3, 1, false);
  check_values(sv, {1, 3, 4, 0, 2, 5});
  check_values(si, {1, 0, 3, 0, 2, 3});
  // along dim 0: torch.topk(x, 1, dim=0) -> [[3, 9, 7, 5]], [[0, 1, 0, 1]]
  const auto [dv, di] = topk(t, 1, 0);
  CHECK(dv.sizes() == Dims{1, 4});
  check_values(di, {0, 1, 0, 1});
  const auto [zv, zi] = topk(t, 0);
  CHECK(zv.sizes() == Dims{2, 0});
  (void)zi;
}

TEST_CASE("sort, argsort, topk: AnyTensor, call by aten name, NaN as the largest", "[ops][sort]") {
  const AnyTensor x(make<float>({1, NAN, 3}, Dims{3}));
  // torch.topk(torch.tensor([1., nan, 3.]), 2) -> [nan, 3.], [1, 2]
  const auto [v, i] = topk(x, 2);
  CHECK(v.dtype() == ScalarType::Float);
  CHECK(i.dtype() == ScalarType::Int64);
  check_values(v.get<float>(), {NAN, 3});
  check_values(i.get<int64_t>(), {1, 2});
  const std::vector<ops::Arg> args = {ops::Arg(x), ops::Arg(int64_t{0}), ops::Arg(true)};
  const std::vector<AnyTensor> r = ops::call_by_name_all("aten::sort", args);
  REQUIRE(r.size() == 2);
  check_values(r[1].get<int64_t>(), {1, 2, 0});
  CHECK_THAT(message_of<ValueError>([&] { ops::call_by_name("aten::sort", args); }), Catch::Contains("call_by_name_all"));
  CHECK(argsort(AnyTensor(make<int32_t>({5, 2, 9}, Dims{3}))).get<int64_t>().data_ptr()[0] == 1);
}

TEST_CASE("sort, argsort, topk: errors name the op and the operand", "[ops][sort][errors]") {
  const Tensor<float> x = make<float>(kX, Dims{3, 4});
  CHECK_THAT(message_of<IndexError>([&] { sort(x, 2); }), Catch::Contains("sort"));
  CHECK_THAT(message_of<IndexError>([&] { argsort(x, -3); }), Catch::Contains("argsort"));
  CHECK_THAT(message_of<IndexError>([&] { topk(x, 5); }),
             Catch::Contains("aten::topk") && Catch::Contains("k = 5") && Catch::Contains("[3, 4] float32"));
  CHECK_THAT(message_of<IndexError>([&] { topk(x, -1); }), Catch::Contains("k = -1"));
  CHECK_THAT(message_of<TypeError>([&] { topk(make<bool>({1, 0}, Dims{2}), 1); }),
             Catch::Contains("aten::topk") && Catch::Contains("bool"));
}
