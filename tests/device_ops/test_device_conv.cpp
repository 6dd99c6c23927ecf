// tests/device_ops/test_device_conv.cpp — the convolution and pooling ops of the operator
// library (ops/conv.hpp, ops/pool.hpp) on the PJRT device under test, in each execution mode,
// against the same calls on the cpu: every floating dtype; dense, grouped, strided, dilated,
// depthwise, 1-D, 3-D, unbatched and transposed (1-, 2-, 3-D) convolutions, 'same' padding by aten name
// (conv2d, _convolution_mode), im2col / col2im;
// max pooling (ceil_mode, dilation, NaN), average pooling (count_include_pad, divisor_override),
// adaptive average pooling (even windows: reduce_window; uneven: the averaging matrices); a
// transposed (non-contiguous) operand; between elementwise statements; errors.
//
// Tolerance: the device convolves in float32 at HIGHEST precision (float64 for float64) and
// sums in another order than the cpu's GEMM or loops. Relative + absolute tolerance 2e-5 for
// float32 (results are sums of up to 54 products of O(1) values), 1e-12 for float64, 4e-3 for
// float16 and 3.2e-2 for bfloat16 (a float32 difference can move a 16-bit result across one
// rounding boundary). Max pooling is exact.
#include <limits>    // std::numeric_limits (NaN)
#include <optional>  // std::optional
#include <string>    // std::string
#include <vector>    // std::vector

#include <torchtpu/ops/all.hpp>   // ops::call_by_name
#include <torchtpu/ops/conv.hpp>  // conv1d, conv2d, conv3d, conv_transpose1d/2d/3d
#include <torchtpu/ops/pool.hpp>  // max_pool2d, avg_pool2d, adaptive_avg_pool2d

#include "helpers.hpp"  // check_close, test_device, test_input

using namespace torchtpu;

namespace {

template <class T>
double tol() { return per_dtype<T>(1e-12, 2e-5, 4e-3, 3.2e-2); }

template <class T>
void check_convs() {
  INFO("dtype " << dtype_name(dtype_of<T>()));
  const auto dev = test_device();
  const double e = tol<T>();
  const Tensor<T> x = input<T>({2, 4, 7, 6}, 1), b6 = input<T>({6}, 2);
  const auto dx = x.to(dev), db6 = b6.to(dev);
  // dense 3x3, padding 1
  const Tensor<T> wd = input<T>({6, 4, 3, 3}, 3);
  check_close(conv2d(dx, wd.to(dev), db6, {1}, {1}), conv2d(x, wd, b6, {1}, {1}), e, e);
  // grouped, strided, dilated, asymmetric parameters
  const Tensor<T> wg = input<T>({6, 2, 3, 2}, 4);
  check_close(conv2d(dx, wg.to(dev), db6, {2, 1}, {1, 2}, {2, 1}, 2), conv2d(x, wg, b6, {2, 1}, {1, 2}, {2, 1}, 2), e, e);
  // depthwise, no bias; a 1x1 convolution on a transposed (non-contiguous) input
  const Tensor<T> wdw = input<T>({4, 1, 3, 3}, 5), w11 = input<T>({6, 4, 1, 1}, 6);
  check_close(conv2d(dx, wdw.to(dev), Tensor<T>(), {1}, {1}, {1}, 4), conv2d(x, wdw, Tensor<T>(), {1}, {1}, {1}, 4), e, e);
  check_close(conv2d(Tensor<T>(dx.transpose(2, 3)), w11.to(dev), db6), conv2d(Tensor<T>(x.transpose(2, 3)), w11, b6), e, e);
  // unbatched input
  check_close(conv2d(Tensor<T>(dx.select(0, 1)), wd.to(dev), db6), conv2d(Tensor<T>(x.select(0, 1)), wd, b6), e, e);
  // 1-D and 3-D
  const Tensor<T> x1 = input<T>({2, 3, 11}, 7), w1 = input<T>({4, 3, 3}, 8), b4 = input<T>({4}, 9);
  check_close(conv1d(x1.to(dev), w1.to(dev), b4.to(dev), {2}, {1}, {2}), conv1d(x1, w1, b4, {2}, {1}, {2}), e, e);
  const Tensor<T> x3 = input<T>({1, 2, 4, 5, 4}, 10), w3 = input<T>({3, 2, 2, 3, 2}, 11);
  check_close(conv3d(x3.to(dev), w3.to(dev), Tensor<T>(), {1, 2, 1}, {1, 0, 1}), conv3d(x3, w3, Tensor<T>(), {1, 2, 1}, {1, 0, 1}),
              e, e);
  // transposed: grouped, strided, dilated, output_padding
  const Tensor<T> wt = input<T>({4, 3, 3, 2}, 12);
  check_close(conv_transpose2d(dx, wt.to(dev), db6, {2, 1}, {1, 0}, {1, 0}, 2, {1, 2}),
              conv_transpose2d(x, wt, b6, {2, 1}, {1, 0}, {1, 0}, 2, {1, 2}), e, e);
  // transposed 1-D (grouped, dilated, output_padding; unbatched) and 3-D
  const Tensor<T> xt1 = input<T>({2, 4, 5}, 14), wt1 = input<T>({4, 3, 3}, 15);
  check_close(conv_transpose1d(xt1.to(dev), wt1.to(dev), db6, {2}, {1}, {1}, 2, {2}), conv_transpose1d(xt1, wt1, b6, {2}, {1}, {1}, 2, {2}),
              e, e);
  check_close(conv_transpose1d(Tensor<T>(xt1.to(dev).select(0, 1)), wt1.to(dev)), conv_transpose1d(Tensor<T>(xt1.select(0, 1)), wt1), e,
              e);
  const Tensor<T> xt3 = input<T>({1, 2, 3, 2, 3}, 16), wt3 = input<T>({2, 2, 2, 3, 2}, 17);
  check_close(conv_transpose3d(xt3.to(dev), wt3.to(dev), Tensor<T>(), {2, 1, 2}, {0, 1, 1}, {1, 0, 1}),
              conv_transpose3d(xt3, wt3, Tensor<T>(), {2, 1, 2}, {0, 1, 1}, {1, 0, 1}), e, e);
  // 'same' padding (asymmetric: an even kernel) by aten name, None for the bias
  const Tensor<T> we = input<T>({6, 4, 2, 3}, 13);
  const std::vector<ops::Arg> dev_args = {AnyTensor(dx), AnyTensor(we.to(dev)), ops::Arg(), std::vector<int64_t>{1},
                                          std::string("same"), std::vector<int64_t>{1, 2}, int64_t(1)};
  const std::vector<ops::Arg> cpu_args = {AnyTensor(x), AnyTensor(we), ops::Arg(), std::vector<int64_t>{1}, std::string("same"),
                                          std::vector<int64_t>{1, 2}, int64_t(1)};
  const AnyTensor ds = ops::call_by_name("aten::conv2d", dev_args);
  CHECK(ds.device() == dev);
  check_close(ds.template get<T>(), ops::call_by_name("aten::conv2d", cpu_args).template get<T>(), e, e);
  // the same through aten::_convolution_mode (how torch traces padding='same')
  const std::vector<ops::Arg> mode_args = {AnyTensor(dx), AnyTensor(we.to(dev)), ops::Arg(), std::vector<int64_t>{1, 1},
                                           std::string("same"), std::vector<int64_t>{1, 2}, int64_t(1)};
  check_close(ops::call_by_name("aten::_convolution_mode", mode_args).template get<T>(),
              ops::call_by_name("aten::conv2d", cpu_args).template get<T>(), e, e);
  // im2col (a copy: exact) and col2im (sums of up to 4 values) against the cpu; batched and unbatched
  using VI = std::vector<int64_t>;
  for (const bool batched : {true, false}) {
    const Tensor<T> xi = batched ? x : Tensor<T>(x.select(0, 1));
    const std::vector<ops::Arg> dev_i = {AnyTensor(xi.to(dev)), VI{3, 2}, VI{1, 2}, VI{1, 0}, VI{2, 1}};
    const std::vector<ops::Arg> cpu_i = {AnyTensor(xi), VI{3, 2}, VI{1, 2}, VI{1, 0}, VI{2, 1}};
    const AnyTensor ci = ops::call_by_name("aten::im2col", cpu_i);
    check_close(ops::call_by_name("aten::im2col", dev_i).template get<T>(), ci.template get<T>(), 0, 0);
    const std::vector<ops::Arg> dev_f = {AnyTensor(ci.template get<T>().to(dev)), VI{7, 6}, VI{3, 2}, VI{1, 2}, VI{1, 0}, VI{2, 1}};
    const std::vector<ops::Arg> cpu_f = {ci, VI{7, 6}, VI{3, 2}, VI{1, 2}, VI{1, 0}, VI{2, 1}};
    check_close(ops::call_by_name("aten::col2im", dev_f).template get<T>(),
                ops::call_by_name("aten::col2im", cpu_f).template get<T>(), e, e);
  }
}

template <class T>
void check_pools() {
  INFO("dtype " << dtype_name(dtype_of<T>()));
  const auto dev = test_device();
  const double e = tol<T>();
  const Tensor<T> x = input<T>({2, 3, 9, 10}, 21);
  const auto dx = x.to(dev);
  check_close(max_pool2d(dx, {2}), max_pool2d(x, {2}), 0, 0);
  check_close(max_pool2d(dx, {3}, {2}, {1}, {1}, true), max_pool2d(x, {3}, {2}, {1}, {1}, true), 0, 0);
  check_close(max_pool2d(dx, {3, 2}, {1, 3}, {1, 0}, {2, 1}, true), max_pool2d(x, {3, 2}, {1, 3}, {1, 0}, {2, 1}, true), 0, 0);
  check_close(max_pool2d(Tensor<T>(dx.transpose(2, 3).select(0, 1)), {3}, {2}),
              max_pool2d(Tensor<T>(x.transpose(2, 3).select(0, 1)), {3}, {2}), 0, 0);
  check_close(avg_pool2d(dx, {3}, {2}, {1}, true, false), avg_pool2d(x, {3}, {2}, {1}, true, false), e, e);
  check_close(avg_pool2d(dx, {3}, {2}, {1}, true, true), avg_pool2d(x, {3}, {2}, {1}, true, true), e, e);
  check_close(avg_pool2d(dx, {2, 3}, {1, 2}, {0, 1}, false, true, 5), avg_pool2d(x, {2, 3}, {1, 2}, {0, 1}, false, true, 5), e, e);
  // a NaN in a window gives NaN (XLA's CPU plugin's maximum alone would drop it)
  Tensor<T> xn = Tensor<T>(x.clone());
  xn.data_ptr()[7] = xn.data_ptr()[95] = convert<T>(std::numeric_limits<double>::quiet_NaN());
  check_close(max_pool2d(xn.to(dev), {3}, {2}, {1}, {1}, true), max_pool2d(xn, {3}, {2}, {1}, {1}, true), 0, 0);
  check_close(max_pool2d(xn.to(dev), {2}, {2}, {0}, {2}), max_pool2d(xn, {2}, {2}, {0}, {2}), 0, 0);
  check_close(adaptive_avg_pool2d(dx, {3, 5}), adaptive_avg_pool2d(x, {3, 5}), e, e);  // even windows
  check_close(adaptive_avg_pool2d(dx, {4, 3}), adaptive_avg_pool2d(x, {4, 3}), e, e);  // uneven windows
  check_close(adaptive_avg_pool2d(Tensor<T>(dx.select(0, 0)), {1}), adaptive_avg_pool2d(Tensor<T>(x.select(0, 0)), {1}), e, e);
}

}  // namespace

TEST_CASE("convolution and pooling on the device: every floating dtype, every mode", "[pjrt][library][conv]") {
  for (ExecutionMode m : {ExecutionMode::Fused, ExecutionMode::Strict, ExecutionMode::Debug}) {
    ExecutionModeGuard g(m);
    INFO("mode " << execution_mode_name(m));
    check_convs<float>();
    check_pools<float>();
  }
  check_convs<double>();  // the other dtypes in the default mode
  check_pools<double>();
  check_convs<half>();
  check_pools<half>();
  check_convs<bfloat16>();
  check_pools<bfloat16>();
}

TEST_CASE("convolution on the device: run-time typed, between elementwise statements, errors", "[pjrt][library][conv]") {
  const auto dev = test_device();
  const Tensor<float> x = test_input({2, 3, 6, 6}, 31), w = test_input({4, 3, 3, 3}, 32);
  for (ExecutionMode m : {ExecutionMode::Fused, ExecutionMode::Strict, ExecutionMode::Debug}) {
    ExecutionModeGuard g(m);
    INFO("mode " << execution_mode_name(m));
    // y = max_pool2d(conv2d(x * 2 + 1, w)) * 3 in three statements
    auto dx = x.to(dev);
    Tensor<float> dt = dx * 2.0f + 1.0f;
    const Tensor<float> dy = max_pool2d(conv2d(dt, w.to(dev)), {2}) * 3.0f;
    const Tensor<float> ct = x * 2.0f + 1.0f;
    check_close(dy, Tensor<float>(max_pool2d(conv2d(ct, w), {2}) * 3.0f), 2e-5, 2e-5);
    const AnyTensor r = conv2d(AnyTensor(dx), AnyTensor(w.to(dev)), AnyTensor(), {1}, {1});
    CHECK(r.device() == dev);
    check_close(r.get<float>(), conv2d(x, w, Tensor<float>(), {1}, {1}), 2e-5, 2e-5);
  }
  // infer runs before anything is recorded: the cpu's errors
  CHECK_THROWS_AS(conv2d(x.to(dev), test_input({4, 2, 3, 3}, 33).to(dev)), ShapeError);
  CHECK_THROWS_AS(max_pool2d(x.to(dev), {3}, {1}, {2}), ValueError);
  CHECK_THROWS_AS(adaptive_avg_pool2d(x.to(dev), {1, 2, 3}), ValueError);
}
