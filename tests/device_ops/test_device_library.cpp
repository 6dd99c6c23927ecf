// tests/device_ops/test_device_library.cpp — ops of the operator library (ops/library.hpp: cat,
// stack, roll, tril, triu, repeat, tile, flip, diag, and ops/indexing.hpp's) on the PJRT device under test, in each execution mode, against the same calls on the
// cpu: typed operands of every dtype, mixed dtypes through AnyTensor (promoted on the device),
// strided views as operands, a library op between elementwise statements (fused mode keeps it
// in the deferred graph), and errors (mixed devices). Values are small integers or exact
// binary fractions, so the comparison has no tolerance.
#include "helpers.hpp"  // check_close, host_values, test_device, test_input

using namespace torchtpu;

namespace {

/// A [rows, cols] tensor of T holding 0, 1, 2, ... (mod 2 for bool) plus `start`.
template <class T>
Tensor<T> counting(int64_t rows, int64_t cols, int start) {
  Tensor<double> d = Tensor<double>::empty(Dims{rows, cols});
  for (int64_t i = 0; i < rows * cols; ++i) d.data_ptr()[i] = static_cast<double>(start + i);
  return Tensor<T>(d.template to<T>());
}

template <class T>
void check_dtype() {
  INFO("dtype " << dtype_name(dtype_of<T>()));
  const Tensor<T> a = counting<T>(2, 3, 0), b = counting<T>(1, 3, 6), c = counting<T>(2, 1, 9);
  const auto da = a.to(test_device()), db = b.to(test_device()), dc = c.to(test_device());
  check_close(cat({da, db}, 0), cat({a, b}, 0), 0.0);
  check_close(cat({da, dc}, -1), cat({a, c}, -1), 0.0);
  check_close(stack({da, da}, 1), stack({a, a}, 1), 0.0);
}


/// roll, tril, triu, repeat, tile, flip, diag on the device against the same calls on the cpu.
template <class T>
void check_shape_ops() {
  INFO("dtype " << dtype_name(dtype_of<T>()));
  const Tensor<T> a = counting<T>(3, 4, 1), v = counting<T>(1, 3, 2).select(0, 0);
  const auto da = a.to(test_device()), dv = v.to(test_device());
  check_close(roll(da, 5), roll(a, 5), 0.0);
  check_close(roll(da, {1, -1}, {0, 1}), roll(a, {1, -1}, {0, 1}), 0.0);
  check_close(roll(da.t(), 2, 0), roll(a.t(), 2, 0), 0.0);  // a transposed view
  for (int64_t k : {-4, -1, 0, 2, 9}) {
    check_close(tril(da, k), tril(a, k), 0.0);
    check_close(triu(da, k), triu(a, k), 0.0);
  }
  check_close(repeat(da, {2, 1, 3}), repeat(a, {2, 1, 3}), 0.0);
  check_close(repeat(dv, {0, 2}), repeat(v, {0, 2}), 0.0);
  check_close(tile(dv, {2, 2}), tile(v, {2, 2}), 0.0);
  check_close(flip(da, {0, -1}), flip(a, {0, -1}), 0.0);
  check_close(flip(da.slice(1, 0, 4, 2), {1}), flip(a.slice(1, 0, 4, 2), {1}), 0.0);
  for (int64_t k : {-2, 0, 1, 5}) {
    check_close(diag(dv, k), diag(v, k), 0.0);
    check_close(diag(da, k), diag(a, k), 0.0);
  }
  check_close(diag(da.t(), 1), diag(a.t(), 1), 0.0);
}

}  // namespace

TEST_CASE("library ops on the device: every dtype, every mode", "[pjrt][library]") {
  for (ExecutionMode m : {ExecutionMode::Fused, ExecutionMode::Strict, ExecutionMode::Debug}) {
    ExecutionModeGuard g(m);
    INFO("mode " << execution_mode_name(m));
    check_dtype<bool>();
    check_dtype<uint8_t>();
    check_dtype<int32_t>();
    check_dtype<int64_t>();
    check_dtype<half>();
    check_dtype<bfloat16>();
    check_dtype<float>();
    check_dtype<double>();
  }
}

TEST_CASE("shape ops on the device (roll, tril, triu, repeat, tile, flip, diag), every mode", "[pjrt][library]") {
  for (ExecutionMode m : {ExecutionMode::Fused, ExecutionMode::Strict, ExecutionMode::Debug}) {
    ExecutionModeGuard g(m);
    INFO("mode " << execution_mode_name(m));
    check_shape_ops<float>();
    check_shape_ops<int64_t>();
  }
  check_shape_ops<bool>();  // the other dtypes in the default mode
  check_shape_ops<uint8_t>();
  check_shape_ops<int32_t>();
  check_shape_ops<half>();
  check_shape_ops<bfloat16>();
  check_shape_ops<double>();
}

TEST_CASE("library ops on the device: views, promotion, fusion with elementwise statements", "[pjrt][library]") {
  const Tensor<float> x = test_input({4, 6}, 71), y = test_input({6, 4}, 72);
  auto dx = x.to(test_device()), dy = y.to(test_device());
  // strided and transposed views as operands; the legacy empty tensor is skipped
  check_close(cat({dx.slice(1, 0, 6, 2), dy.t().slice(1, 1, 6, 2)}, 0),
              cat({x.slice(1, 0, 6, 2), y.t().slice(1, 1, 6, 2)}, 0), 0.0);
  const Tensor<float> e = Tensor<float>::empty(Dims{0});
  check_close(cat({e.to(test_device()), dx}, 1), x, 0.0);
  // between elementwise statements: y = cat(x * 2, x + 1) * 3 in three statements
  Tensor<float> p = dx * 2.0f;
  Tensor<float> q = cat({p, Tensor<float>(dx + 1.0f)}, 0);
  Tensor<float> r = q * 3.0f;
  check_close(r, Tensor<float>(cat({Tensor<float>(x * 2.0f), Tensor<float>(x + 1.0f)}, 0) * 3.0f), 0.0);
  // mixed dtypes through AnyTensor: int32 + bfloat16 -> bfloat16 on the device
  const Tensor<int32_t> i = counting<int32_t>(2, 2, -2);
  const Tensor<bfloat16> h = counting<bfloat16>(2, 2, 5);
  const AnyTensor dm = stack(std::vector<AnyTensor>{i.to(test_device()), h.to(test_device())}, 0);
  const AnyTensor hm = stack(std::vector<AnyTensor>{i, h}, 0);
  CHECK(dm.dtype() == ScalarType::BFloat16);
  CHECK(dm.device() == test_device());
  check_close(dm.get<bfloat16>(), hm.get<bfloat16>(), 0.0);
}

TEST_CASE("library ops on the device: errors", "[pjrt][library][errors]") {
  const Tensor<float> x = test_input({2, 2}, 73);
  const auto dx = x.to(test_device());
  CHECK_THROWS_AS(cat({dx, x}, 0), ValueError);  // mixed devices
  try {
    (void)cat({dx, Tensor<float>(test_input({3, 3}, 74).to(test_device()))}, 0);
    FAIL("no error");
  } catch (const ShapeError& e) {
    CHECK(std::string(e.what()).find("aten::cat: sizes of tensors must match except in dimension 0 (operands "
                                     "[2, 2] float32, [3, 3] float32)") != std::string::npos);
  }
}
