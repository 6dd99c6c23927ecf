// tests/ops/test_advanced_indexing.cpp — the operator library's advanced indexing on the cpu
// (ops/advanced_indexing.hpp: index, index_put / index_put_, nonzero, masked_select) through the
// typed API for every dtype, AnyTensor and the call by name (as model graphs call them); the
// placement rule, negative and int32 indices, masks, broadcasting, duplicates, errors.
// Expected values: torch 1.13 (/usr/bin/python3) on x = torch.arange(12).reshape(3, 4) and
// y = torch.arange(24).reshape(2, 3, 4), with the call written next to each check, pasted as
// literals (`through<T>` maps them to what each dtype holds: these ops move or add small
// integers, so converting before or after gives the same values). The conformance sweep
// (tests/conformance/make_cases.py) compares random operands with torch; the device path is
// tests/device_ops/test_device_advanced_indexing.cpp.
#include <cmath>     // NAN
#include <cstdint>   // int64_t
#include <optional>  // std::nullopt
#include <string>    // std::string
#include <vector>    // std::vector

#include <torchtpu/ops/all.hpp>  // ops::call_by_name, index, index_put, nonzero, masked_select

#include "testing.hpp"  // check_values, Catch2, torchtpu

using namespace torchtpu;

using Catch::Contains;
using optest::make;
using optest::message_of;
using optest::through;

namespace {

/// An int64 index tensor.
Tensor<int64_t> idx(const std::vector<double>& vals, const Dims& shape) { return make<int64_t>(vals, shape); }
/// A bool mask.
Tensor<bool> mask(const std::vector<double>& vals, const Dims& shape) { return make<bool>(vals, shape); }

std::vector<double> iota(int n) {
  std::vector<double> r;
  for (int i = 0; i < n; ++i) r.push_back(i);
  return r;
}

const std::vector<double> kM = {1, 0, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0};  // the [3, 4] mask m below

}  // namespace

TEMPLATE_TEST_CASE("index: integer indices, masks, the placement rule, every dtype", "[ops][advanced_indexing]", bool,
                   uint8_t, int32_t, int64_t, half, bfloat16, float, double) {
  using T = TestType;
  const Tensor<T> x = make<T>(iota(12), Dims{3, 4});
  const Tensor<T> y = make<T>(iota(24), Dims{2, 3, 4});
  // example-begin index
  // torch: x[[2, 0, -1]] (negative indices wrap), x[:, [3, 1]], x[[0, 2], [1, -1]]
  check_values(index(x, {idx({2, 0, -1}, Dims{3})}), through<T>({8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11}));
  const Tensor<T> cols = index(x, {std::nullopt, idx({3, 1}, Dims{2})});
  CHECK(cols.sizes() == Dims{3, 2});
  check_values(cols, through<T>({3, 1, 7, 5, 11, 9}));
  check_values(index(x, {idx({0, 2}, Dims{2}), idx({1, -1}, Dims{2})}), through<T>({1, 11}));
  // example-end index
  // index tensors broadcast together: x[[[0], [2]], [1, 3]] -> [2, 2]
  const Tensor<T> bc = index(x, {idx({0, 2}, Dims{2, 1}), idx({1, 3}, Dims{2})});
  CHECK(bc.sizes() == Dims{2, 2});
  check_values(bc, through<T>({1, 3, 9, 11}));
  // int32 indices (torch 2.x takes them; 1.13's values for the int64 ones)
  check_values(index(x, {make<int32_t>({1, -3}, Dims{2})}), through<T>({4, 5, 6, 7, 0, 1, 2, 3}));
  // masks: x[m] (row-major order), a row mask, a column mask, a uint8 mask
  const Tensor<bool> m = mask(kM, Dims{3, 4});
  check_values(index(x, {m}), through<T>({0, 2, 7, 8, 9}));
  check_values(index(x, {mask({1, 0, 1}, Dims{3})}), through<T>({0, 1, 2, 3, 8, 9, 10, 11}));
  const Tensor<T> cm = index(x, {std::nullopt, mask({0, 1, 1, 0}, Dims{4})});
  CHECK(cm.sizes() == Dims{3, 2});
  check_values(cm, through<T>({1, 2, 5, 6, 9, 10}));
  check_values(index(x, {make<uint8_t>({1, 0, 1}, Dims{3})}), through<T>({0, 1, 2, 3, 8, 9, 10, 11}));
  // non-adjacent indices go first: y[[1, 0], :, [3, 0]] -> [2, 3]; adjacent stay in place:
  // y[:, [0, 2], [1, 1]] -> [2, 2]; y[[1], :, [[0], [2]]] -> [2, 1, 3]
  const Tensor<T> na = index(y, {idx({1, 0}, Dims{2}), std::nullopt, idx({3, 0}, Dims{2})});
  CHECK(na.sizes() == Dims{2, 3});
  check_values(na, through<T>({15, 19, 23, 0, 4, 8}));
  const Tensor<T> ad = index(y, {std::nullopt, idx({0, 2}, Dims{2}), idx({1, 1}, Dims{2})});
  CHECK(ad.sizes() == Dims{2, 2});
  check_values(ad, through<T>({1, 9, 13, 21}));
  const Tensor<T> nb = index(y, {idx({1}, Dims{1}), std::nullopt, idx({0, 2}, Dims{2, 1})});
  CHECK(nb.sizes() == Dims{2, 1, 3});
  check_values(nb, through<T>({12, 16, 20, 14, 18, 22}));
  // aten.index(y, [None, [2, 1]]) -> [2, 2, 4]; aten.index(y, [None, None, [3]]) -> [2, 3, 1]
  check_values(index(y, {std::nullopt, idx({2, 1}, Dims{2})}),
               through<T>({8, 9, 10, 11, 4, 5, 6, 7, 20, 21, 22, 23, 16, 17, 18, 19}));
  const Tensor<T> last = index(y, {std::nullopt, std::nullopt, idx({3}, Dims{1})});
  CHECK(last.sizes() == Dims{2, 3, 1});
  check_values(last, through<T>({3, 7, 11, 15, 19, 23}));
  // a mask with an integer index: aten.index(y, [[[T, F, F], [F, T, T]], [1, 3, 0]]) -> [1, 19, 20];
  // aten.index(y, [[1], [[T, F, F, F], [F, F, T, F], [F, F, F, T]]]) -> [12, 18, 23]
  check_values(index(y, {mask({1, 0, 0, 0, 1, 1}, Dims{2, 3}), idx({1, 3, 0}, Dims{3})}), through<T>({1, 19, 20}));
  check_values(index(y, {idx({1}, Dims{1}), mask({1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}, Dims{3, 4})}), through<T>({12, 18, 23}));
  // 0-dim indices drop the dim: x[tensor(1)] -> [4], x[:, tensor(2)] -> [3]
  const Tensor<T> r1 = index(x, {idx({1}, Dims{})});
  CHECK(r1.sizes() == Dims{4});
  check_values(r1, through<T>({4, 5, 6, 7}));
  check_values(index(x, {std::nullopt, idx({2}, Dims{})}), through<T>({2, 6, 10}));
  // a non-contiguous self and an expanded index: x.t()[[3, 0]]; x[[1, 1]] by hand
  check_values(index(x.t(), {idx({3, 0}, Dims{2})}), through<T>({3, 7, 11, 0, 4, 8}));
  check_values(index(x, {idx({1}, Dims{1}).expand(Dims{2})}), through<T>({4, 5, 6, 7, 4, 5, 6, 7}));
  // empty: x[tensor([], long)] -> [0, 4]; an all-false mask -> [0]; a size-0 self
  CHECK(index(x, {idx({}, Dims{0})}).sizes() == Dims{0, 4});
  CHECK(index(x, {mask(std::vector<double>(12, 0), Dims{3, 4})}).sizes() == Dims{0});
  CHECK(index(make<T>({}, Dims{0, 3}), {std::nullopt, idx({2, 0}, Dims{2})}).sizes() == Dims{0, 2});
}

TEMPLATE_TEST_CASE("index_put: broadcast values, duplicates, accumulate, masks, every dtype", "[ops][advanced_indexing]",
                   bool, uint8_t, int32_t, int64_t, half, bfloat16, float, double) {
  using T = TestType;
  const Tensor<T> x = make<T>(iota(12), Dims{3, 4});
  const Tensor<T> y = make<T>(iota(24), Dims{2, 3, 4});
  // example-begin index_put
  // torch: x.index_put([[2, 0]], [[100, 101, 102, 103], [200, 201, 202, 203]]) (self is unchanged)
  const Tensor<T> rows = make<T>({100, 101, 102, 103, 200, 201, 202, 203}, Dims{2, 4});
  check_values(index_put(x, {idx({2, 0}, Dims{2})}, rows), through<T>({200, 201, 202, 203, 4, 5, 6, 7, 100, 101, 102, 103}));
  // x[m] = 0 on a copy: a number as the values
  const Tensor<bool> m = mask(kM, Dims{3, 4});
  check_values(index_put(x, {m}, 0), through<T>({0, 1, 0, 3, 4, 5, 6, 0, 0, 0, 10, 11}));
  // example-end index_put
  check_values(x, through<T>(iota(12)));
  // values broadcast to the indexed shape: [7, 8, 9, 10] to [2, 4]; [[5], [6], [7]] to [3, 2]
  check_values(index_put(x, {idx({2, 0}, Dims{2})}, make<T>({7, 8, 9, 10}, Dims{4})),
               through<T>({7, 8, 9, 10, 4, 5, 6, 7, 7, 8, 9, 10}));
  check_values(index_put(x, {std::nullopt, idx({1, -1}, Dims{2})}, make<T>({5, 6, 7}, Dims{3, 1})),
               through<T>({0, 5, 2, 5, 4, 6, 6, 6, 8, 7, 10, 7}));
  // duplicates: the last write wins (torch's cpu); accumulate adds every value
  const Tensor<int64_t> r = idx({0, 0, 1}, Dims{3}), c = idx({1, 1, 2}, Dims{3});
  const Tensor<T> v = make<T>({5, 6, 7}, Dims{3});
  check_values(index_put(x, {r, c}, v), through<T>({0, 6, 2, 3, 4, 5, 7, 7, 8, 9, 10, 11}));
  if constexpr (!std::is_same_v<T, bool>)
    check_values(index_put(x, {r, c}, v, true), through<T>({0, 12, 2, 3, 4, 5, 13, 7, 8, 9, 10, 11}));
  else  // or
    check_values(index_put(x, {r, c}, v, true), {0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1});
  // one value per true mask element; a row mask with accumulate
  check_values(index_put(x, {m}, make<T>({1, 2, 3, 4, 5}, Dims{5})), through<T>({1, 1, 2, 3, 4, 5, 6, 3, 4, 5, 10, 11}));
  check_values(index_put(x, {mask({1, 0, 1}, Dims{3})}, make<T>({1, 2, 3, 4}, Dims{4}), true),
               through<T>({1, 3, 5, 7, 4, 5, 6, 7, 9, 11, 13, 15}));
  // non-adjacent indices: values in [B, rest] order. aten.index_put(y, [[1, 0], None, [3, 0]], [[1, 2, 3], [4, 5, 6]])
  check_values(index_put(y, {idx({1, 0}, Dims{2}), std::nullopt, idx({3, 0}, Dims{2})}, make<T>({1, 2, 3, 4, 5, 6}, Dims{2, 3})),
               through<T>({4, 1, 2, 3, 5, 5, 6, 7, 6, 9, 10, 11, 12, 13, 14, 1, 16, 17, 18, 2, 20, 21, 22, 3}));
  // int32 indices, a transposed self: by hand from the first case
  check_values(index_put(x.t(), {std::nullopt, make<int32_t>({2, 0}, Dims{2})}, rows.t()),
               through<T>({200, 4, 100, 201, 5, 101, 202, 6, 102, 203, 7, 103}));
  // nothing indexed: self back
  check_values(index_put(x, {idx({}, Dims{0})}, make<T>({}, Dims{0, 4})), through<T>(iota(12)));
  // in place: x.index_put_(...) writes through a view into its base
  Tensor<T> base = make<T>(iota(12), Dims{3, 4});
  Tensor<T> col = base.narrow(1, 1, 2);
  index_put_(col, {idx({2}, Dims{1})}, make<T>({0, 0}, Dims{2}));
  check_values(base, through<T>({0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 11}));
}

TEST_CASE("index_put: integers wrap, floats add in the dtype, 0-dim values of another dtype convert",
          "[ops][advanced_indexing]") {
  // torch.index_put(tensor([0, 0, 0], uint8), ([0, 0],), tensor([200, 100], uint8), True) -> [44, 0, 0]
  check_values(index_put(make<uint8_t>({0, 0, 0}, Dims{3}), {idx({0, 0}, Dims{2})}, make<uint8_t>({200, 100}, Dims{2}), true),
               {44, 0, 0});
  // torch (float16): index_put(zeros(3), ([0, 0, 0],), [1, 2, 3], True) -> [6, 0, 0]
  check_values(index_put(zeros<half>(Dims{3}), {idx({0, 0, 0}, Dims{3})}, make<half>({1, 2, 3}, Dims{3}), true), {6, 0, 0});
  // a 0-dim float64 value into int64 (torch's `x[i] = 2.7` writes 2)
  const AnyTensor xi(make<int64_t>({1, 2, 3}, Dims{3}));
  const AnyTensor got = index_put(xi, {idx({0}, Dims{1})}, AnyTensor(make<double>({2.7}, Dims{})));
  CHECK(got.dtype() == ScalarType::Int64);
  check_values(got.get<int64_t>(), {2, 2, 3});
  check_values(index_put(make<int64_t>({1, 2, 3}, Dims{3}), {idx({0}, Dims{1})}, 2.7), {2, 2, 3});
}

TEMPLATE_TEST_CASE("nonzero and masked_select: every dtype", "[ops][advanced_indexing]", bool, uint8_t, int32_t, int64_t,
                   half, bfloat16, float, double) {
  using T = TestType;
  const Tensor<T> x = make<T>(iota(12), Dims{3, 4});
  // torch.nonzero(x): every position but [0, 0]
  // example-begin nonzero
  const Tensor<int64_t> nz = nonzero(x);
  CHECK(nz.sizes() == Dims{11, 2});
  check_values(nz, {0, 1, 0, 2, 0, 3, 1, 0, 1, 1, 1, 2, 1, 3, 2, 0, 2, 1, 2, 2, 2, 3});
  // torch.masked_select(x, [True, False, False, True]) (the mask broadcasts)
  check_values(masked_select(x, mask({1, 0, 0, 1}, Dims{4})), through<T>({0, 3, 4, 7, 8, 11}));
  // example-end nonzero
  // torch.nonzero(m) (m: the [3, 4] mask above)
  check_values(nonzero(make<T>(kM, Dims{3, 4})), {0, 0, 0, 2, 1, 3, 2, 0, 2, 1});
  // 0-dim: [1, 0] or [0, 0]
  CHECK(nonzero(make<T>({1}, Dims{})).sizes() == Dims{1, 0});
  CHECK(nonzero(make<T>({0}, Dims{})).sizes() == Dims{0, 0});
  CHECK(nonzero(make<T>({}, Dims{2, 0})).sizes() == Dims{0, 2});
  // self broadcast to the mask: masked_select([1, 2, 3], [[T], [F], [T]]) -> [1, 2, 3, 1, 2, 3]
  check_values(masked_select(make<T>({1, 2, 3}, Dims{3}), mask({1, 0, 1}, Dims{3, 1})), through<T>({1, 2, 3, 1, 2, 3}));
  check_values(masked_select(x.t(), make<uint8_t>({1, 0, 0, 1}, Dims{4, 1})), through<T>({0, 4, 8, 3, 7, 11}));  // by hand
  CHECK(masked_select(x, mask(std::vector<double>(12, 0), Dims{3, 4})).sizes() == Dims{0});
  check_values(masked_select(make<T>({5}, Dims{}), mask({1}, Dims{})), through<T>({5}));
}

TEST_CASE("nonzero: NaN is nonzero, -0.0 is zero", "[ops][advanced_indexing]") {
  // torch.nonzero(tensor([nan, -0.0, 0.0, 1.0])) -> [[0], [3]]
  check_values(nonzero(Tensor<float>({NAN, -0.0f, 0.0f, 1.0f})), {0, 3});
}

TEST_CASE("advanced indexing: bad input names the op, the index and the size", "[ops][advanced_indexing][errors]") {
  const Tensor<float> x = make<float>(iota(12), Dims{3, 4});
  // torch: IndexError: index 5 is out of bounds for dimension 0 with size 3 (and -4 likewise)
  CHECK(message_of<IndexError>([&] { (void)index(x, {idx({0, 5}, Dims{2})}); }) ==
        "aten::index: index 5 is out of bounds for dimension 0 with size 3");
  CHECK_THAT(message_of<IndexError>([&] { (void)index(x, {std::nullopt, idx({-5}, Dims{1})}); }),
             Contains("index -5 is out of bounds for dimension 1 with size 4"));
  CHECK_THAT(message_of<IndexError>([&] { (void)index_put(x, {idx({3}, Dims{1})}, 1.0f); }),
             Contains("aten::index_put: index 3 is out of bounds for dimension 0 with size 3"));
  // index dtypes: float is not an index (torch: IndexError; the library's dtype errors are TypeErrors)
  CHECK_THAT(message_of<TypeError>([&] { (void)index(x, {make<float>({1}, Dims{1})}); }),
             Contains("aten::index: tensors used as indices must be int64, int32, bool or uint8 tensors, got float32"));
  // torch: too many indices for tensor of dimension 2 (got 3)
  CHECK_THAT(message_of<IndexError>([&] { (void)index(x, {idx({0}, Dims{1}), idx({0}, Dims{1}), idx({0}, Dims{1})}); }),
             Contains("too many indices for tensor of dimension 2 (got 3)"));
  CHECK_THROWS_AS(index(x, {mask({1, 0, 1}, Dims{3}), idx({0}, Dims{1}), idx({0}, Dims{1})}), IndexError);
  CHECK_THROWS_AS(index(make<float>({1}, Dims{}), {idx({0}, Dims{})}), IndexError);
  // torch: The shape of the mask [2] at index 0 does not match the shape of the indexed tensor [3, 4] at index 0
  CHECK_THAT(message_of<IndexError>([&] { (void)index(x, {mask({1, 0}, Dims{2})}); }),
             Contains("the shape of the mask [2] at index 0 does not match the shape of the indexed tensor [3, 4] at index 0"));
  // torch: shape mismatch: indexing tensors could not be broadcast together with shapes [1, 2], [3]
  CHECK_THAT(message_of<IndexError>([&] { (void)index(x, {idx({0, 1}, Dims{1, 2}), idx({0, 1, 2}, Dims{3})}); }),
             Contains("could not be broadcast together with shapes [1, 2], [3]"));
  // a list without tensors; a 0-dim mask
  CHECK_THROWS_AS(index(x, {std::nullopt}), IndexError);
  CHECK_THROWS_AS(index(x, {}), IndexError);
  CHECK_THROWS_AS(index(x, {mask({1}, Dims{})}), IndexError);
  // a result above rank 8
  CHECK_THROWS_AS(index(x, {idx({0}, Dims{1, 1, 1, 1, 1, 1, 1, 1})}), ShapeError);
  // index_put: values that do not broadcast (torch: shape mismatch: value tensor of shape [2] cannot be
  // broadcast to indexing result of shape [2, 4]), values of another dtype
  CHECK_THAT(message_of<ShapeError>([&] { (void)index_put(x, {idx({0, 1}, Dims{2})}, make<float>({1, 2}, Dims{2})); }),
             Contains("value tensor of shape [2] cannot be broadcast to indexing result of shape [2, 4]"));
  CHECK_THROWS_AS(index_put(x, {idx({0, 2}, Dims{2})}, make<float>(std::vector<double>(8, 1), Dims{1, 2, 4})), ShapeError);
  CHECK_THROWS_AS(index_put(AnyTensor(x), {idx({0}, Dims{1})}, AnyTensor(make<double>({1, 2, 3, 4}, Dims{4}))), TypeError);
  // masked_select: a mask that is no mask, shapes that do not broadcast
  CHECK_THROWS_AS(masked_select(x, make<int64_t>({1, 0, 1, 0}, Dims{4})), TypeError);
  CHECK_THROWS_AS(masked_select(x, mask({1, 0, 1}, Dims{3})), ShapeError);
  // an expanded self cannot take an in-place write (its elements overlap)
  Tensor<float> row = make<float>({1, 2}, Dims{1, 2}).expand(Dims{3, 2});
  CHECK_THROWS(index_put_(row, {idx({0}, Dims{1})}, 5.0f));
}

TEST_CASE("advanced indexing on AnyTensor and by name, as model graphs call them", "[ops][advanced_indexing][any][schema]") {
  const AnyTensor x(make<float>(iota(12), Dims{3, 4}));
  const AnyTensor i(idx({3, 1}, Dims{2}));
  const AnyTensor got = index(x, {std::nullopt, i});
  CHECK(got.dtype() == ScalarType::Float);
  check_values(got.get<float>(), {3, 1, 7, 5, 11, 9});
  // by name: the list holds undefined tensors for None (prim::ListConstruct of `x[:, i]`)
  const std::vector<ops::Arg> args{x, std::vector<AnyTensor>{AnyTensor(), i}};
  check_values(ops::call_by_name("aten::index", args).get<float>(), {3, 1, 7, 5, 11, 9});
  const std::vector<ops::Arg> put{x, std::vector<AnyTensor>{AnyTensor(), i}, AnyTensor(make<float>({0}, Dims{})), true};
  check_values(ops::call_by_name("aten::index_put", put).get<float>(), {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  // a number as the values (a folded int/double constant of a model graph)
  const AnyTensor row(idx({1}, Dims{1}));
  const std::vector<ops::Arg> num{x, std::vector<AnyTensor>{row}, int64_t{7}, false};
  check_values(ops::call_by_name("aten::index_put", num).get<float>(), {0, 1, 2, 3, 7, 7, 7, 7, 8, 9, 10, 11});
  // index_put_ by name writes into self and returns it
  const AnyTensor self(make<float>(iota(12), Dims{3, 4}));
  const std::vector<ops::Arg> inpl{self, std::vector<AnyTensor>{row}, AnyTensor(make<float>({-1}, Dims{})), false};
  const AnyTensor back = ops::call_by_name("aten::index_put_", inpl);
  CHECK(back.data_ptr() == self.data_ptr());
  check_values(self.get<float>(), {0, 1, 2, 3, -1, -1, -1, -1, 8, 9, 10, 11});
  const std::vector<ops::Arg> nz{AnyTensor(mask({0, 1, 1}, Dims{3}))};
  check_values(ops::call_by_name("aten::nonzero", nz).get<int64_t>(), {1, 2});
  const std::vector<ops::Arg> ms{x, AnyTensor(mask({0, 1, 0, 0}, Dims{4}))};
  check_values(ops::call_by_name("aten::masked_select", ms).get<float>(), {1, 5, 9});
  CHECK(nonzero(AnyTensor(mask({0, 1}, Dims{2}))).dtype() == ScalarType::Int64);
  check_values(masked_select(x, AnyTensor(mask({1, 0, 0, 0}, Dims{4}))).get<float>(), {0, 4, 8});
  // the wrong kind for the list: a TypeError naming the argument
  const std::vector<ops::Arg> bad{x, i};
  CHECK_THROWS_AS(ops::call_by_name("aten::index", bad), TypeError);
  // the schema parser reads Tensor?[] (optional elements, a list that is not itself optional)
  const ops::Schema s = ops::parse_schema(ops::IndexOp::schema);
  REQUIRE(s.args.size() == 2);
  CHECK(s.overload == "Tensor");
  CHECK(s.args[1].type.list);
  CHECK(s.args[1].type.elem_optional);
  CHECK(!s.args[1].type.optional);
  CHECK(s.args[1].type.text == "Tensor?[]");
  CHECK(ops::parse_schema("f(Tensor?[]? x) -> Tensor").args[0].type.optional);
}
