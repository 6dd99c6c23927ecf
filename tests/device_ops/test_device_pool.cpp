// tests/device_ops/test_device_pool.cpp — the poolings of ops/pool.hpp and ops/pool_indices.hpp
// beyond max_pool2d / avg_pool2d / adaptive_avg_pool2d (tests/device_ops/test_device_conv.cpp)
// on the PJRT device under test, in each execution mode, against the same calls on the cpu
// (tests/ops/test_pool.cpp checks the cpu against torch): max_pool2d_with_indices (ceil_mode,
// padding, dilation, a window with no element inside the input), max_pool1d(_with_indices),
// avg_pool1d, adaptive_avg_pool1d, adaptive_max_pool2d/1d (even, uneven and overlapping
// windows), every floating dtype, integer max pooling (uint8, int32, int64), NaN (the index of
// the last NaN: XLA's CPU plugin's maximum alone would drop it), -inf, ties (the first
// maximum), transposed and unbatched operands, by aten name, both results read in one fused
// statement, errors.
//
// Tolerance: max pooling and its indices are exact (compared bit for bit, NaN with NaN); the
// average poolings sum in another order than the cpu's loops: relative + absolute 2e-5 for
// float32, 1e-12 for float64, 4e-3 for float16 and 3.2e-2 for bfloat16 (as test_device_conv).
#include <cmath>    // std::round
#include <cstdint>  // int64_t, int32_t, uint8_t
#include <limits>   // std::numeric_limits
#include <vector>   // std::vector

#include <torchtpu/ops/all.hpp>           // ops::call_by_name_all
#include <torchtpu/ops/pool.hpp>          // max_pool2d, max_pool1d, avg_pool1d, adaptive_avg_pool1d
#include <torchtpu/ops/pool_indices.hpp>  // max_pool2d_with_indices, max_pool1d_with_indices, adaptive_max_pool2d/1d

#include "helpers.hpp"  // check_close, test_device, input

using namespace torchtpu;

namespace {

template <class T>
double tol() { return per_dtype<T>(1e-12, 2e-5, 4e-3, 3.2e-2); }

/// Checks both results of a max pooling with indices on the device against the cpu's, exactly.
template <class A, class B>
void check_pair(const A& got, const B& want) {
  check_close(got.first, want.first, 0, 0);
  check_close(got.second, want.second, 0, 0);
}

/// `x` with ties: values rounded to halves (floating types).
template <class T>
Tensor<T> with_ties(const Tensor<float>& f) {
  Tensor<float> r = Tensor<float>::empty(f.sizes());
  for (int64_t i = 0; i < f.numel(); ++i) r.data_ptr()[i] = std::round(f.data_ptr()[i] * 2.0f) / 2.0f;
  return Tensor<T>(r.template to<T>());
}

template <class T>
void check_floating() {
  INFO("dtype " << dtype_name(dtype_of<T>()));
  const auto dev = test_device();
  const double e = tol<T>();
  Tensor<T> x = with_ties<T>(test_input({2, 3, 9, 10}, 41));
  // NaN in two windows, -inf in one
  x.data_ptr()[7] = x.data_ptr()[18] = convert<T>(std::numeric_limits<double>::quiet_NaN());
  x.data_ptr()[95] = convert<T>(-std::numeric_limits<double>::infinity());
  const auto dx = x.to(dev);
  // fixed windows: default stride, ceil_mode + padding, dilation, a window past the input
  check_pair(max_pool2d_with_indices(dx, {2}), max_pool2d_with_indices(x, {2}));
  check_pair(max_pool2d_with_indices(dx, {3}, {2}, {1}, {1}, true), max_pool2d_with_indices(x, {3}, {2}, {1}, {1}, true));
  check_pair(max_pool2d_with_indices(dx, {3, 2}, {1, 3}, {1, 0}, {2, 1}, true),
             max_pool2d_with_indices(x, {3, 2}, {1, 3}, {1, 0}, {2, 1}, true));
  check_pair(max_pool2d_with_indices(dx, {2, 3}, {3, 2}, {1, 1}, {1, 3}, true),
             max_pool2d_with_indices(x, {2, 3}, {3, 2}, {1, 1}, {1, 3}, true));
  // transposed (non-contiguous) and unbatched
  check_pair(max_pool2d_with_indices(Tensor<T>(dx.transpose(2, 3).select(0, 1)), {3}, {2}),
             max_pool2d_with_indices(Tensor<T>(x.transpose(2, 3).select(0, 1)), {3}, {2}));
  // 1-D
  Tensor<T> y1 = Tensor<T>(x.select(2, 4).clone());  // [2, 3, 10], one NaN
  y1.data_ptr()[3] = convert<T>(std::numeric_limits<double>::quiet_NaN());
  const auto dy1 = y1.to(dev);
  check_pair(max_pool1d_with_indices(dy1, {3}, {2}, {1}, {2}, true), max_pool1d_with_indices(y1, {3}, {2}, {1}, {2}, true));
  check_pair(max_pool1d_with_indices(Tensor<T>(dy1.select(0, 1)), {2}), max_pool1d_with_indices(Tensor<T>(y1.select(0, 1)), {2}));
  check_close(max_pool1d(dy1, {3}, {1}, {1}), max_pool1d(y1, {3}, {1}, {1}), 0, 0);
  check_close(max_pool1d(dy1, {2}, {3}, {1}, {2}, true), max_pool1d(y1, {2}, {3}, {1}, {2}, true), 0, 0);
  const Tensor<T> a1 = input<T>({2, 3, 11}, 42);
  const auto da1 = a1.to(dev);
  check_close(avg_pool1d(da1, {3}, {2}, {1}, true, false), avg_pool1d(a1, {3}, {2}, {1}, true, false), e, e);
  check_close(avg_pool1d(da1, {4}, {3}, {2}, true, true), avg_pool1d(a1, {4}, {3}, {2}, true, true), e, e);
  check_close(adaptive_avg_pool1d(da1, {4}), adaptive_avg_pool1d(a1, {4}), e, e);  // uneven windows
  check_close(adaptive_avg_pool1d(Tensor<T>(da1.select(0, 0)), {11}), adaptive_avg_pool1d(Tensor<T>(a1.select(0, 0)), {11}), e, e);
  // adaptive max: even, uneven, overlapping windows (output larger than the input), 1-D
  check_pair(adaptive_max_pool2d(dx, {3, 5}), adaptive_max_pool2d(x, {3, 5}));
  check_pair(adaptive_max_pool2d(dx, {4, 3}), adaptive_max_pool2d(x, {4, 3}));
  check_pair(adaptive_max_pool2d(dx, {10, 13}), adaptive_max_pool2d(x, {10, 13}));
  check_pair(adaptive_max_pool2d(Tensor<T>(dx.transpose(2, 3).select(0, 0)), {1}),
             adaptive_max_pool2d(Tensor<T>(x.transpose(2, 3).select(0, 0)), {1}));
  check_pair(adaptive_max_pool1d(dy1, {4}), adaptive_max_pool1d(y1, {4}));
  check_pair(adaptive_max_pool1d(dy1, {13}), adaptive_max_pool1d(y1, {13}));
}

template <class T>
void check_integers() {
  INFO("dtype " << dtype_name(dtype_of<T>()));
  const auto dev = test_device();
  const Tensor<T> x = Tensor<T>(test_input({2, 3, 7, 8}, 43, std::is_same_v<T, uint8_t> ? 0.0 : -20.0, 20.0).template to<T>());
  const auto dx = x.to(dev);
  check_close(max_pool2d(dx, {2}), max_pool2d(x, {2}), 0, 0);
  check_close(max_pool2d(dx, {3}, {2}, {1}, {2}, true), max_pool2d(x, {3}, {2}, {1}, {2}, true), 0, 0);
  check_pair(max_pool2d_with_indices(dx, {3}, {2}, {1}, {1}, true), max_pool2d_with_indices(x, {3}, {2}, {1}, {1}, true));
  check_pair(max_pool1d_with_indices(Tensor<T>(dx.select(2, 1)), {3}, {1}, {1}), max_pool1d_with_indices(Tensor<T>(x.select(2, 1)), {3}, {1}, {1}));
}

}  // namespace

TEST_CASE("max pooling with indices and the 1-D and adaptive poolings on the device: every dtype, every mode",
          "[pjrt][library][pool]") {
  for (ExecutionMode m : {ExecutionMode::Fused, ExecutionMode::Strict, ExecutionMode::Debug}) {
    ExecutionModeGuard g(m);
    INFO("mode " << execution_mode_name(m));
    check_floating<float>();
  }
  check_floating<double>();  // the other dtypes in the default mode
  check_floating<half>();
  check_floating<bfloat16>();
  check_integers<uint8_t>();
  check_integers<int32_t>();
  check_integers<int64_t>();
}

TEST_CASE("max pooling with indices on the device: degenerate windows, by name, in one statement, errors", "[pjrt][library][pool]") {
  const auto dev = test_device();
  const double inf = std::numeric_limits<double>::infinity();
  // a window with no element inside the input (dilation jumps over it): -inf at torch's index
  // F.max_pool2d(torch.arange(4.).view(1, 1, 2, 2), (2, 1), 1, (1, 0), (3, 1), return_indices=True) -> -inf, [4, 5]
  const Tensor<float> a = Tensor<float>({0.0f, 1.0f, 2.0f, 3.0f}).reshape(Dims{1, 1, 2, 2});
  const auto [dv, di] = max_pool2d_with_indices(a.to(dev), {2, 1}, {1}, {1, 0}, {3, 1});
  check_close(dv, Tensor<float>({float(-inf), float(-inf)}).reshape(Dims{1, 1, 1, 2}), 0, 0);
  check_close(di, Tensor<int64_t>({4, 5}).reshape(Dims{1, 1, 1, 2}), 0, 0);
  // all -inf with padding: each window's first in-bounds position
  const Tensor<float> n = Tensor<float>({float(-inf), float(-inf), float(-inf), float(-inf)}).reshape(Dims{1, 1, 2, 2});
  check_close(max_pool2d_with_indices(n.to(dev), {2}, {1}, {1}).second,
              Tensor<int64_t>({0, 0, 1, 0, 0, 1, 2, 2, 3}).reshape(Dims{1, 1, 3, 3}), 0, 0);
  const Tensor<float> x = test_input({2, 3, 6, 7}, 44);
  for (ExecutionMode m : {ExecutionMode::Fused, ExecutionMode::Strict, ExecutionMode::Debug}) {
    ExecutionModeGuard g(m);
    INFO("mode " << execution_mode_name(m));
    const auto dx = x.to(dev);
    // by aten name (AnyTensor on the device)
    const std::vector<ops::Arg> args = {AnyTensor(dx), std::vector<int64_t>{3}, std::vector<int64_t>{2},
                                        std::vector<int64_t>{1}, std::vector<int64_t>{1}, true};
    const std::vector<AnyTensor> r = ops::call_by_name_all("aten::max_pool2d_with_indices", args);
    REQUIRE(r.size() == 2);
    CHECK(r[0].device() == dev);
    CHECK(r[1].device() == dev);
    const auto c = max_pool2d_with_indices(x, {3}, {2}, {1}, {1}, true);
    check_close(r[0].get<float>(), c.first, 0, 0);
    check_close(r[1].get<int64_t>(), c.second, 0, 0);
    const std::vector<ops::Arg> aargs = {AnyTensor(dx), std::vector<int64_t>{4, 3}};
    const std::vector<AnyTensor> ra = ops::call_by_name_all("aten::adaptive_max_pool2d", aargs);
    const auto ca = adaptive_max_pool2d(x, {4, 3});
    check_close(ra[0].get<float>(), ca.first, 0, 0);
    check_close(ra[1].get<int64_t>(), ca.second, 0, 0);
    // both results after an elementwise statement, read in one later statement
    const Tensor<float> dt = dx * 2.0f - 1.0f;
    const auto [v, i] = max_pool2d_with_indices(dt, {2});
    const Tensor<float> dz = v + i.to<float>();
    const Tensor<float> ct = x * 2.0f - 1.0f;
    const auto [cv, ci] = max_pool2d_with_indices(ct, {2});
    check_close(dz, Tensor<float>(cv + ci.to<float>()), 0, 0);
  }
  // empty results: an empty batch, an output size of 0
  const auto [ev, ei] = max_pool2d_with_indices(Tensor<float>::empty(Dims{0, 3, 5, 5}).to(dev), {2});
  CHECK(ev.sizes() == Dims{0, 3, 2, 2});
  CHECK(ei.cpu().sizes() == Dims{0, 3, 2, 2});
  const auto [zv, zi] = adaptive_max_pool2d(x.to(dev), {0, 2});
  CHECK(zv.cpu().sizes() == Dims{2, 3, 0, 2});
  CHECK(zi.cpu().sizes() == Dims{2, 3, 0, 2});
  // infer runs before anything is recorded: the cpu's errors
  CHECK_THROWS_AS(max_pool2d_with_indices(x.to(dev), {3}, {1}, {2}), ValueError);
  CHECK_THROWS_AS(max_pool1d(x.to(dev), {2}), ShapeError);
  CHECK_THROWS_AS(adaptive_max_pool1d(Tensor<float>(x.select(0, 0)).to(dev), {1, 2}), ValueError);
  CHECK_THROWS_AS(adaptive_max_pool2d(Tensor<int32_t>(x.to<int32_t>()).to(dev), {2}), TypeError);
}
