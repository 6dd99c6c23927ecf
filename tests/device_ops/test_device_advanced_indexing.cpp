// tests/device_ops/test_device_advanced_indexing.cpp — advanced indexing of the operator library
// (ops/advanced_indexing.hpp: index, index_put, index_put_) on the PJRT device under test (the
// TPU emulator; XLA's CPU plugin), in each execution mode, against the same calls on the cpu
// (tests/ops/test_advanced_indexing.cpp checks the cpu against torch): every dtype, negative and
// int32 indices, broadcast and non-adjacent indices, duplicates (the last write wins on both),
// accumulate, `x[mask] = v`; NaN, infinities and -0.0 moved unchanged; the data-dependent ops
// (a mask in index, nonzero, masked_select) refused with UnsupportedOperator; an index out of
// range raised as an IndexError when the result is read. Indexing moves values (and accumulate
// adds small integers), so the comparison is exact.
#include <cmath>     // std::signbit
#include <limits>    // std::numeric_limits
#include <optional>  // std::nullopt
#include <vector>    // std::vector

#include <torchtpu/ops/advanced_indexing.hpp>  // index, index_put, index_put_, nonzero, masked_select

#include "helpers.hpp"  // check_close, host_values, test_device, test_input

using namespace torchtpu;

namespace {

/// A tensor of `shape` and dtype T holding `vals` (converted).
template <class T>
Tensor<T> of(const std::vector<double>& vals, const Dims& shape) {
  Tensor<double> d = Tensor<double>::empty(shape);
  for (size_t i = 0; i < vals.size(); ++i) d.data_ptr()[i] = vals[i];
  return Tensor<T>(d.template to<T>());
}

/// [n] values 0, 1, 2, ... (bool: 0, 1, 1, ...), reshaped to `shape`.
template <class T>
Tensor<T> counting(const Dims& shape) {
  std::vector<double> v;
  for (int64_t i = 0; i < numel(shape); ++i) v.push_back(static_cast<double>(i));
  return of<T>(v, shape);
}

Tensor<int64_t> ix(const std::vector<double>& vals, const Dims& shape) { return of<int64_t>(vals, shape); }

template <class T>
void check_index() {
  INFO("dtype " << dtype_name(dtype_of<T>()));
  const auto dev = test_device();
  const Tensor<T> x = counting<T>(Dims{3, 4}), y = counting<T>(Dims{2, 3, 4});
  const auto dx = x.to(dev), dy = y.to(dev);
  auto both = [&](const Tensor<T>& self, const Tensor<T>& dself, const std::vector<std::optional<Tensor<int64_t>>>& l,
                  bool as_int32 = false) {
    IndexList cpu, devl;
    for (const auto& t : l) {
      if (!t) {
        cpu.emplace_back();
        devl.emplace_back();
        continue;
      }
      const AnyTensor c = as_int32 ? AnyTensor(Tensor<int32_t>(t->template to<int32_t>())) : AnyTensor(*t);
      cpu.emplace_back(c);
      devl.emplace_back(c.visit([&](const auto& v) { return AnyTensor(v.to(dev)); }));
    }
    check_close(index(dself, devl), index(self, cpu), 0.0);
  };
  both(x, dx, {ix({2, 0, -1}, Dims{3})});                              // rows, a negative index
  both(x, dx, {std::nullopt, ix({3, 1, 3}, Dims{3})}, true);           // columns, int32
  both(x, dx, {ix({0, 2}, Dims{2, 1}), ix({1, -1}, Dims{2})});         // broadcast together
  both(y, dy, {ix({1, 0}, Dims{2}), std::nullopt, ix({3, 0}, Dims{2})});  // non-adjacent: first
  both(y, dy, {std::nullopt, ix({0, 2}, Dims{2}), ix({1, 1}, Dims{2})});  // adjacent: in place
  both(y, dy, {std::nullopt, ix({2}, Dims{})});                         // 0-dim: the dim goes
  both(x.t(), dx.t(), {ix({3, 0}, Dims{2})});                           // a transposed self
  both(x, dx, {ix({}, Dims{0})});                                       // nothing selected
}

template <class T>
void check_index_put() {
  INFO("dtype " << dtype_name(dtype_of<T>()));
  const auto dev = test_device();
  const Tensor<T> x = counting<T>(Dims{3, 4}), y = counting<T>(Dims{2, 3, 4});
  const auto dx = x.to(dev), dy = y.to(dev);
  const Tensor<int64_t> r = ix({0, 0, 1, -3}, Dims{4}), c = ix({1, 1, 2, 1}, Dims{4});
  const Tensor<T> v = of<T>({5, 6, 7, 8}, Dims{4});
  // duplicates: (0, 1) is named three times (0 and -3 are the same row): the last write wins
  check_close(index_put(dx, {r.to(dev), c.to(dev)}, v.to(dev)), index_put(x, {r, c}, v), 0.0);
  check_close(index_put(dx, {r.to(dev), c.to(dev)}, v.to(dev), true), index_put(x, {r, c}, v, true), 0.0);
  // values broadcast to the indexed shape; non-adjacent indices; int32; a 0-dim value
  const Tensor<T> row = of<T>({1, 2, 3, 4}, Dims{4});
  check_close(index_put(dx, {ix({2, 0}, Dims{2}).to(dev)}, row.to(dev)), index_put(x, {ix({2, 0}, Dims{2})}, row), 0.0);
  const Tensor<int32_t> i32 = Tensor<int32_t>(ix({3, 0}, Dims{2}).to<int32_t>());
  const Tensor<T> v23 = of<T>({1, 2, 3, 4, 5, 6}, Dims{2, 3});
  check_close(index_put(dy, {ix({1, 0}, Dims{2}).to(dev), std::nullopt, i32.to(dev)}, v23.to(dev)),
              index_put(y, {ix({1, 0}, Dims{2}), std::nullopt, i32}, v23), 0.0);
  check_close(index_put(dy, {std::nullopt, ix({2, 2}, Dims{2}).to(dev)}, of<T>({9}, Dims{}).to(dev), true),
              index_put(y, {std::nullopt, ix({2, 2}, Dims{2})}, of<T>({9}, Dims{}), true), 0.0);
  // x[mask] = v with one value broadcast along the mask's elements: a select on the device
  const Tensor<bool> m = Tensor<bool>(of<bool>({1, 0, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0}, Dims{3, 4}));
  check_close(index_put(dx, {m.to(dev)}, 0), index_put(x, {m}, 0), 0.0);
  check_close(index_put(dx, {m.to(dev)}, of<T>({3}, Dims{1}).to(dev), true), index_put(x, {m}, of<T>({3}, Dims{1}), true), 0.0);
  const Tensor<bool> rows = Tensor<bool>(of<bool>({1, 0, 1}, Dims{3}));
  check_close(index_put(dx, {rows.to(dev)}, row.to(dev)), index_put(x, {rows}, row), 0.0);  // [1, 4] per selected row
  check_close(index_put(dy, {std::nullopt, Tensor<uint8_t>(rows.to<uint8_t>()).to(dev)}, of<T>({7}, Dims{}).to(dev)),
              index_put(y, {std::nullopt, Tensor<uint8_t>(rows.to<uint8_t>())}, of<T>({7}, Dims{})), 0.0);
  // in place on the device
  Tensor<T> z = x.to(dev);
  index_put_(z, {ix({1}, Dims{1}).to(dev)}, of<T>({0}, Dims{}).to(dev));
  check_close(z, index_put(x, {ix({1}, Dims{1})}, of<T>({0}, Dims{})), 0.0);
}

}  // namespace

TEST_CASE("index on the device: every dtype, every mode", "[pjrt][library][advanced_indexing]") {
  for (ExecutionMode m : {ExecutionMode::Fused, ExecutionMode::Strict, ExecutionMode::Debug}) {
    ExecutionModeGuard g(m);
    INFO("mode " << execution_mode_name(m));
    check_index<float>();
    check_index<int64_t>();
  }
  check_index<bool>();  // the other dtypes in the default mode
  check_index<uint8_t>();
  check_index<int32_t>();
  check_index<half>();
  check_index<bfloat16>();
  check_index<double>();
}

TEST_CASE("index_put on the device: every dtype, every mode", "[pjrt][library][advanced_indexing]") {
  for (ExecutionMode m : {ExecutionMode::Fused, ExecutionMode::Strict, ExecutionMode::Debug}) {
    ExecutionModeGuard g(m);
    INFO("mode " << execution_mode_name(m));
    check_index_put<float>();
    check_index_put<int64_t>();
  }
  check_index_put<bool>();
  check_index_put<uint8_t>();
  check_index_put<int32_t>();
  check_index_put<half>();
  check_index_put<bfloat16>();
  check_index_put<double>();
}

TEST_CASE("advanced indexing on the device: special values, errors, data-dependent shapes",
          "[pjrt][library][advanced_indexing][errors]") {
  const auto dev = test_device();
  // NaN, infinities and -0.0 arrive unchanged (the one-hot lowerings sum with -0.0)
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor<float> sp = {std::numeric_limits<float>::quiet_NaN(), -inf, -0.0f, inf};
  const Tensor<int64_t> si = ix({0, 3, 2, 1, 2}, Dims{5});
  const Tensor<float> got = Tensor<float>(index(sp.to(dev), {si.to(dev)}).cpu());
  check_close(got, index(sp, {si}), 0.0);
  CHECK(std::signbit(got.at(2)));
  const Tensor<float> put = Tensor<float>(index_put(zeros<float>(Dims{4}).to(dev), {ix({3, 2, 1, 0}, Dims{4}).to(dev)}, sp.to(dev)).cpu());
  check_close(put, index_put(zeros<float>(Dims{4}), {ix({3, 2, 1, 0}, Dims{4})}, sp), 0.0);
  CHECK(std::signbit(put.at(1)));
  // an out-of-range index: a run-time check of the program, raised when the result is read
  const Tensor<float> x = test_input({3, 4}, 91);
  const Tensor<float> bad = index(x.to(dev), {std::nullopt, ix({1, 4}, Dims{2}).to(dev)});
  CHECK_THROWS_WITH(Tensor<float>(bad.cpu()), Catch::Contains("aten::index: an index is out of bounds for dimension 1 with size 4"));
  CHECK_THROWS_AS(Tensor<float>(bad.cpu()), IndexError);
  CHECK_THROWS_AS(Tensor<float>(index_put(x.to(dev), {ix({-4}, Dims{1}).to(dev)}, 1.0f).cpu()), IndexError);
  check_close(index(x.to(dev), {ix({-3}, Dims{1}).to(dev)}), index(x, {ix({-3}, Dims{1})}), 0.0);  // -3 is in range
  // the shape depends on the data: refused at the call, naming the op and the reason
  const Tensor<bool> m = Tensor<bool>(x > 0.0f);
  CHECK_THROWS_AS(index(x.to(dev), {m.to(dev)}), UnsupportedOperator);
  CHECK_THROWS_WITH(nonzero(m.to(dev)), Catch::Contains("aten::nonzero") && Catch::Contains("depends on the data"));
  CHECK_THROWS_AS(masked_select(x.to(dev), m.to(dev)), UnsupportedOperator);
  CHECK_THROWS_WITH(index(x.to(dev), {m.to(dev)}), Catch::Contains("aten::index") && Catch::Contains("bool mask"));
  // index_put with one value per true element, or a mask with other indices, needs the count
  CHECK_THROWS_AS(index_put(x.to(dev), {m.to(dev)}, Tensor<float>(test_input({5}, 92)).to(dev)), UnsupportedOperator);
  CHECK_THROWS_AS(index_put(x.to(dev), {ix({0}, Dims{1}).to(dev), Tensor<bool>(of<bool>({1, 0, 0, 1}, Dims{4})).to(dev)}, 1.0f),
                  UnsupportedOperator);
  // the same calls on the cpu run
  CHECK(nonzero(m).dim() == 2);
  CHECK(masked_select(x, m).dim() == 1);
}
