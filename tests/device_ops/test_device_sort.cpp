// tests/device_ops/test_device_sort.cpp — the sorting family of the operator library
// (ops/sort.hpp: sort, argsort, topk) and the view functions split / chunk / unbind on the PJRT
// device under test, in each execution mode, against the same calls on the cpu (tests/ops/
// test_sort.cpp checks the cpu against torch): every dtype, NaN placement, repeated keys (the
// stable order), a transposed operand, between elementwise statements. Sorting is exact, so
// values and indices must be equal bit for bit.
#include <cmath>  // NAN, std::round

#include <torchtpu/ops/sort.hpp>  // sort, argsort, topk

#include "helpers.hpp"  // check_close, test_device, test_input

using namespace torchtpu;

namespace {

template <class T>
void check_sorts() {
  INFO("dtype " << dtype_name(dtype_of<T>()));
  const auto dev = test_device();
  // values in [-4, 4) rounded: repeated keys, so the stable order is checked too
  const Tensor<float> f = test_input({3, 7}, 21, -4.0, 4.0);
  Tensor<float> rounded = Tensor<float>::empty(f.sizes());
  for (int64_t i = 0; i < f.numel(); ++i) rounded.data_ptr()[i] = std::round(f.data_ptr()[i]);
  const Tensor<T> x(rounded.template to<T>());
  const auto dx = x.to(dev);
  for (int64_t dim : {0, 1, -1})
    for (bool desc : {false, true}) {
      INFO("dim " << dim << " descending " << desc);
      const auto [v, i] = sort(dx, dim, desc);
      const auto [cv, ci] = sort(x, dim, desc);
      check_close(v, cv, 0, 0);
      check_close(i, ci, 0, 0);
      check_close(argsort(dx, dim, desc), argsort(x, dim, desc), 0, 0);
    }
  if constexpr (!std::is_same_v<T, bool>) {
    for (bool largest : {true, false}) {
      const auto [v, i] = topk(dx, 3, 1, largest);
      const auto [cv, ci] = topk(x, 3, 1, largest);
      check_close(v, cv, 0, 0);
      check_close(i, ci, 0, 0);
    }
  }
  const auto [tv, ti] = sort(Tensor<T>(dx.transpose(0, 1)), 1);
  const auto [ctv, cti] = sort(Tensor<T>(x.transpose(0, 1)), 1);
  check_close(ti, cti, 0, 0);
  (void)tv;
  (void)ctv;
}

}  // namespace

TEST_CASE("sort, argsort, topk on the device: every dtype, every mode", "[pjrt][library][sort]") {
  for (ExecutionMode m : {ExecutionMode::Fused, ExecutionMode::Strict, ExecutionMode::Debug}) {
    ExecutionModeGuard g(m);
    INFO("mode " << execution_mode_name(m));
    check_sorts<float>();
  }
  check_sorts<bool>();
  check_sorts<uint8_t>();
  check_sorts<int32_t>();
  check_sorts<int64_t>();
  check_sorts<half>();
  check_sorts<bfloat16>();
  check_sorts<double>();
}

TEST_CASE("sort on the device: NaN placement, AnyTensor, after an elementwise statement, errors", "[pjrt][library][sort]") {
  const auto dev = test_device();
  const Tensor<float> n = Tensor<float>({2.0f, NAN, -1.0f, NAN, 5.0f});
  for (ExecutionMode m : {ExecutionMode::Fused, ExecutionMode::Strict, ExecutionMode::Debug}) {
    ExecutionModeGuard g(m);
    INFO("mode " << execution_mode_name(m));
    // torch.sort(..., stable=True)[1] -> [2, 0, 4, 1, 3]; descending -> [1, 3, 4, 0, 2]
    const auto dn = n.to(dev);
    check_close(std::get<1>(sort(dn)), Tensor<int64_t>({2, 0, 4, 1, 3}), 0, 0);
    check_close(argsort(dn, 0, true), Tensor<int64_t>({1, 3, 4, 0, 2}), 0, 0);
    // torch.topk(torch.tensor([2., nan, -1., nan, 5.]), 2) -> [nan, nan], [1, 3]
    const auto [tv, ti] = topk(AnyTensor(dn), 2);
    CHECK(tv.device() == dev);
    check_close(ti.get<int64_t>(), Tensor<int64_t>({1, 3}), 0, 0);
    // a statement that feeds the sort: (n * -1) sorted
    const Tensor<float> neg = dn * -1.0f;
    check_close(std::get<1>(sort(neg)), std::get<1>(sort(Tensor<float>(n * -1.0f))), 0, 0);
  }
  CHECK_THROWS_AS(topk(n.to(dev), 6), IndexError);
  CHECK_THROWS_AS(sort(n.to(dev), 1), IndexError);
}
