// tests/ops/test_indexing.cpp — the operator library's indexing family on the cpu
// (ops/indexing.hpp: index_select, gather, take_along_dim, scatter, scatter_add, index_add,
// masked_fill, one_hot) through the typed API for every dtype, AnyTensor and the call by schema; index
// errors. Expected values: torch 1.13 (/usr/bin/python3) on x = torch.arange(12).reshape(3, 4)
// and the indices written next to each check, pasted as literals (`through<T>` maps them to
// what each dtype holds: these ops move elements or write constants, so converting before or
// after gives the same values). The device path is tests/device_ops/test_device_library.cpp.
#include <cmath>    // std::isnan, std::nanf
#include <cstdint>  // int64_t
#include <string>   // std::string
#include <vector>   // std::vector

#include <torchtpu/ops/all.hpp>  // ops::call_by_name

#include "testing.hpp"  // check_values, Catch2, torchtpu

using namespace torchtpu;

using optest::make;
using optest::message_of;
using optest::through;

namespace {

/// An int64 index tensor.
Tensor<int64_t> idx(const std::vector<double>& vals, const Dims& shape) { return make<int64_t>(vals, shape); }

const std::vector<double> kX = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};  // torch.arange(12).reshape(3, 4)

}  // namespace

TEMPLATE_TEST_CASE("index_select, gather, take_along_dim: every dtype, typed API", "[ops][indexing]", bool, uint8_t,
                   int32_t, int64_t, half, bfloat16, float, double) {
  using T = TestType;
  const Tensor<T> x = make<T>(kX, Dims{3, 4});
  const Tensor<T> xt = make<T>({0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}, Dims{4, 3}).t();  // == x, non-contiguous

  // torch.index_select(x, 0, [2, 0, 2]), (x, -1, [3, 1]), (x.t(), 0, [1]), (x, 1, tensor(2)) -> [3, 1]
  check_values(index_select(x, 0, idx({2, 0, 2}, Dims{3})), through<T>({8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11}));
  check_values(index_select(xt, -1, idx({3, 1}, Dims{2})), through<T>({3, 1, 7, 5, 11, 9}));
  check_values(index_select(x.t(), 0, idx({1}, Dims{1})), through<T>({1, 5, 9}));
  const Tensor<T> s0 = index_select(x, 1, idx({2}, Dims{}));
  CHECK(s0.sizes() == Dims{3, 1});
  check_values(s0, through<T>({2, 6, 10}));
  check_values(index_select(x, 0, make<int32_t>({2, 0, 2}, Dims{3})),  // int32 indices
               through<T>({8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11}));
  check_values(index_select(x, 0, idx({1}, Dims{1}).expand(Dims{2})), through<T>({4, 5, 6, 7, 4, 5, 6, 7}));  // expanded
  CHECK(index_select(x, 0, idx({}, Dims{0})).sizes() == Dims{0, 4});
  check_values(index_select(make<T>({5}, Dims{}), 0, idx({0}, Dims{1})), through<T>({5}));

  // torch.gather(x, 1, [[3, 0], [1, 1], [2, 2]]), (x, 0, [[2, 1, 0, 0]]), (x.t(), 0, [[2, 1, 0], [0, 0, 0]])
  check_values(gather(x, 1, idx({3, 0, 1, 1, 2, 2}, Dims{3, 2})), through<T>({3, 0, 5, 5, 10, 10}));
  check_values(gather(xt, 0, idx({2, 1, 0, 0}, Dims{1, 4})), through<T>({8, 5, 2, 3}));
  check_values(gather(x.t(), 0, idx({2, 1, 0, 0, 0, 0}, Dims{2, 3})), through<T>({2, 5, 8, 0, 4, 8}));
  check_values(gather(x, -1, idx({3}, Dims{1, 1}).expand(Dims{3, 2})), through<T>({3, 3, 7, 7, 11, 11}));  // by hand
  CHECK(gather(x, 0, idx({}, Dims{0, 4})).sizes() == Dims{0, 4});
  check_values(gather(make<T>({5}, Dims{}), 0, idx({0}, Dims{})), through<T>({5}));

  // torch.take_along_dim(x, [[3], [0], [1]], 1), (x, [11, 0, 5]) (flattened), (x, [[0, 2]], 1) -> [3, 2],
  // (x[:1], [[0], [2], [1]], 1) -> [3, 1]
  check_values(take_along_dim(x, idx({3, 0, 1}, Dims{3, 1}), 1), through<T>({3, 4, 9}));
  check_values(take_along_dim(xt, idx({11, 0, 5}, Dims{3})), through<T>({11, 0, 5}));
  const Tensor<T> tb = take_along_dim(x, idx({0, 2}, Dims{1, 2}), -1);
  CHECK(tb.sizes() == Dims{3, 2});
  check_values(tb, through<T>({0, 2, 4, 6, 8, 10}));
  const Tensor<T> tb2 = take_along_dim(x.narrow(0, 0, 1), idx({0, 2, 1}, Dims{3, 1}), 1);
  CHECK(tb2.sizes() == Dims{3, 1});
  check_values(tb2, through<T>({0, 2, 1}));
  CHECK(take_along_dim(x, idx({}, Dims{3, 0}), 1).sizes() == Dims{3, 0});
}

TEMPLATE_TEST_CASE("scatter, scatter_add, masked_fill: every dtype, typed API", "[ops][indexing]", bool, uint8_t, int32_t,
                   int64_t, half, bfloat16, float, double) {
  using T = TestType;
  const Tensor<T> x = make<T>(kX, Dims{3, 4});
  const Tensor<T> z = zeros<T>(Dims{3, 4});

  // torch.scatter(zeros(3, 4), 0, [[1, 2, 0, 1]], [[1, 2, 3, 4]])
  check_values(scatter(z, 0, idx({1, 2, 0, 1}, Dims{1, 4}), make<T>({1, 2, 3, 4}, Dims{1, 4})),
               through<T>({0, 0, 3, 0, 1, 0, 0, 4, 0, 2, 0, 0}));
  // torch.scatter(x, 1, [[3, 0], [2, 2]], [[10, 11, 0], [12, 13, 0]]): src larger than index; the
  // repeated index 2 in row 1 keeps the last write (13)
  check_values(scatter(x, 1, idx({3, 0, 2, 2}, Dims{2, 2}), make<T>({10, 11, 0, 12, 13, 0}, Dims{2, 3})),
               through<T>({11, 1, 2, 10, 4, 5, 13, 7, 8, 9, 10, 11}));
  // the value form: torch.scatter(x, 1, [[3, 0], [2, 2]], 7)
  check_values(scatter(x, 1, idx({3, 0, 2, 2}, Dims{2, 2}), 7), through<T>({7, 1, 2, 7, 4, 5, 7, 7, 8, 9, 10, 11}));
  // non-contiguous self and src (transposed), expanded index: by hand from the case above
  const Tensor<T> xt = make<T>({0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}, Dims{4, 3}).t();
  check_values(scatter(xt, -1, idx({3}, Dims{1, 1}).expand(Dims{3, 1}), make<T>({1, 0, 1}, Dims{1, 3}).t()),
               through<T>({0, 1, 2, 1, 4, 5, 6, 0, 8, 9, 10, 1}));
  CHECK(scatter(x, 0, idx({}, Dims{0, 4}), make<T>({}, Dims{0, 4})).sizes() == Dims{3, 4});  // nothing scattered
  check_values(scatter(make<T>({5}, Dims{}), 0, idx({0}, Dims{}), make<T>({1}, Dims{})), through<T>({1}));

  if constexpr (!std::is_same_v<T, bool>) {
    // torch.scatter_add(x, 1, [[0, 0, 1], [3, 3, 3], [2, 1, 0]], [[1, 1, 1], [2, 2, 2], [1, 1, 1]])
    check_values(scatter_add(x, 1, idx({0, 0, 1, 3, 3, 3, 2, 1, 0}, Dims{3, 3}), make<T>({1, 1, 1, 2, 2, 2, 1, 1, 1}, Dims{3, 3})),
                 through<T>({2, 2, 2, 3, 4, 5, 6, 13, 9, 10, 11, 11}));
  } else {
    // torch.scatter_add(zeros(3, 4, bool), 1, same index, [[1, 0, 1], [0, 0, 0], [1, 1, 1]]): or
    check_values(scatter_add(z, 1, idx({0, 0, 1, 3, 3, 3, 2, 1, 0}, Dims{3, 3}), make<T>({1, 0, 1, 0, 0, 0, 1, 1, 1}, Dims{3, 3})),
                 {1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0});
  }
  check_values(scatter_add(x, 0, idx({2, 2, 2, 2}, Dims{1, 4}).expand(Dims{2, 4}), zeros<T>(Dims{2, 4})), through<T>(kX));

  // torch: x.masked_fill([True, False, False, True], -1); x.masked_fill([[True], [False], [True]], 5)
  const Tensor<bool> m = make<bool>({1, 0, 0, 1}, Dims{4});
  check_values(masked_fill(x, m, -1), through<T>({-1, 1, 2, -1, -1, 5, 6, -1, -1, 9, 10, -1}));
  check_values(masked_fill(xt, make<bool>({1, 0, 1}, Dims{3, 1}), 5), through<T>({5, 5, 5, 5, 4, 5, 6, 7, 5, 5, 5, 5}));
  check_values(masked_fill(x, m, make<double>({-1}, Dims{})), through<T>({-1, 1, 2, -1, -1, 5, 6, -1, -1, 9, 10, -1}));
  // torch: torch.tensor([1, 2, 3, 4]).masked_fill([[True], [False]], 0) -> [2, 4] (self broadcast)
  const Tensor<T> mb = masked_fill(make<T>({1, 2, 3, 4}, Dims{4}), make<bool>({1, 0}, Dims{2, 1}), 0);
  CHECK(mb.sizes() == Dims{2, 4});
  check_values(mb, through<T>({0, 0, 0, 0, 1, 2, 3, 4}));
  check_values(masked_fill(x, make<uint8_t>({1, 0, 0, 1}, Dims{4}), true), through<T>({1, 1, 2, 1, 1, 5, 6, 1, 1, 9, 10, 1}));
  CHECK(masked_fill(zeros<T>(Dims{0, 4}), m, 1).sizes() == Dims{0, 4});
}

TEST_CASE("masked_fill: the value converts to self's dtype as torch converts it", "[ops][indexing]") {
  const Tensor<int64_t> x = make<int64_t>(kX, Dims{3, 4});
  const Tensor<bool> m = make<bool>({1, 0, 0, 1}, Dims{4});
  // torch: x.masked_fill(m, 2.7) truncates to 2
  check_values(masked_fill(x, m, 2.7), {2, 1, 2, 2, 2, 5, 6, 2, 2, 9, 10, 2});
  check_values(masked_fill(make<bool>({0, 0}, Dims{2}), make<bool>({1, 0}, Dims{2}), 2.5), {1, 0});  // torch: True
  check_values(masked_fill(make<float>({1, 2}, Dims{2}), make<bool>({0, 1}, Dims{2}), int64_t{1} << 40), {1, 1099511627776.0});
  check_values(masked_fill(x, m, int64_t{1} << 60).select(0, 0), {1152921504606846976.0, 1, 2, 1152921504606846976.0});
}

TEST_CASE("scatter_add: integers wrap, floats add in the result dtype", "[ops][indexing]") {
  // torch.scatter_add(tensor([250], uint8), 0, [0, 0], tensor([3, 4], uint8)) -> [1]
  check_values(scatter_add(make<uint8_t>({250}, Dims{1}), 0, idx({0, 0}, Dims{2}), make<uint8_t>({3, 4}, Dims{2})), {1});
  check_values(scatter_add(make<int32_t>({2147483647}, Dims{1}), 0, idx({0}, Dims{1}), make<int32_t>({1}, Dims{1})),
               {-2147483648.0});
}

// x = torch.arange(12.).reshape(3, 4) - 4; index = [[3, 0, 3], [1, 1, 2], [0, 0, 0]];
// src = [[1, -2, 3], [4, 5, -6], [7, 8, 9]]: torch.scatter_reduce(x, 1, index, src, r, include_self=s)
TEST_CASE("scatter_reduce: every reduction, with and without self, against torch", "[ops][indexing]") {
  const Tensor<int64_t> index = idx({3, 0, 3, 1, 1, 2, 0, 0, 0}, Dims{3, 3});
  const std::vector<double> src = {1, -2, 3, 4, 5, -6, 7, 8, 9};
  struct Row {
    const char* reduce;
    bool include_self;
    std::vector<double> want;
  };
  const std::vector<Row> rows = {
      {"sum", true, {-6, -3, -2, 3, 0, 10, -4, 3, 28, 5, 6, 7}},
      {"sum", false, {-2, -3, -2, 4, 0, 9, -6, 3, 24, 5, 6, 7}},
      {"prod", true, {8, -3, -2, -3, 0, 20, -12, 3, 2016, 5, 6, 7}},
      {"prod", false, {-2, -3, -2, 3, 0, 20, -6, 3, 504, 5, 6, 7}},
      {"mean", true, {-3, -3, -2, 1, 0, 10.0 / 3.0, -2, 3, 7, 5, 6, 7}},
      {"mean", false, {-2, -3, -2, 2, 0, 4.5, -6, 3, 8, 5, 6, 7}},
      {"amax", true, {-2, -3, -2, 3, 0, 5, 2, 3, 9, 5, 6, 7}},
      {"amax", false, {-2, -3, -2, 3, 0, 5, -6, 3, 9, 5, 6, 7}},
      {"amin", true, {-4, -3, -2, -1, 0, 1, -6, 3, 4, 5, 6, 7}},
      {"amin", false, {-2, -3, -2, 1, 0, 4, -6, 3, 7, 5, 6, 7}}};
  std::vector<double> x;
  for (int i = 0; i < 12; ++i) x.push_back(i - 4);
  for (const Row& r : rows) {
    INFO(r.reduce << " include_self=" << r.include_self);
    check_values(scatter_reduce(make<float>(x, Dims{3, 4}), 1, index, make<float>(src, Dims{3, 3}), r.reduce, r.include_self),
                 r.want, 1e-7, 1e-7);
    check_values(scatter_reduce(make<double>(x, Dims{3, 4}), 1, index, make<double>(src, Dims{3, 3}), r.reduce, r.include_self),
                 r.want, 1e-15, 1e-15);
  }
  // integer mean floor-divides: [-3, -3, -2, 1, 0, 3, -2, ...]; torch: tensor([-1]) with -2 scattered: -2
  check_values(scatter_reduce(make<int64_t>(x, Dims{3, 4}), 1, index, make<int64_t>(src, Dims{3, 3}), "mean"),
               {-3, -3, -2, 1, 0, 3, -2, 3, 7, 5, 6, 7});
  check_values(scatter_reduce(make<int64_t>({-1}, Dims{1}), 0, idx({0}, Dims{1}), make<int64_t>({-2}, Dims{1}), "mean"), {-2});
  // uint8 wraps: 250 + 10 = 4, 250 * 3 * 2 = 220 (mod 256)
  check_values(scatter_reduce(make<uint8_t>({250}, Dims{1}), 0, idx({0}, Dims{1}), make<uint8_t>({10}, Dims{1}), "sum"), {4});
  check_values(scatter_reduce(make<uint8_t>({250}, Dims{1}), 0, idx({0, 0}, Dims{2}), make<uint8_t>({3, 2}, Dims{2}), "prod"),
               {220});
  // bfloat16 rounds after each step, as torch's cpu: 1 + 2^-8 is a tie that rounds to 1, three times
  check_values(scatter_reduce(make<bfloat16>({1, 2}, Dims{2}), 0, idx({0, 0, 0}, Dims{3}),
                              make<bfloat16>({0.00390625, 0.00390625, 0.00390625}, Dims{3}), "sum"),
               {1, 2});
  // amax propagates NaN: torch.scatter_reduce(tensor([1., 2, 3]), 0, [0, 0, 2], [nan, 5, -1], 'amax')
  const Tensor<float> m = scatter_reduce(make<float>({1, 2, 3}, Dims{3}), 0, idx({0, 0, 2}, Dims{3}),
                                         make<float>({std::nanf(""), 5, -1}, Dims{3}), "amax");
  CHECK(std::isnan(m.data_ptr()[0]));
  CHECK(m.data_ptr()[1] == 2.0f);
  CHECK(m.data_ptr()[2] == 3.0f);
  // by schema, as a model graph calls it (TAPAS: include_self=False)
  using ops::Arg;
  std::vector<Arg> args{Arg(AnyTensor(make<float>({0, 0}, Dims{2}))), Arg(int64_t{0}), Arg(AnyTensor(idx({1, 1, 0}, Dims{3}))),
                        Arg(AnyTensor(make<float>({2, -3, 4}, Dims{3}))), Arg(std::string("amin")), Arg(false)};
  check_values(ops::call_by_name("aten::scatter_reduce", args).get<float>(), {4, -3});
  // errors: an unknown reduction, a bool self, an index out of range
  CHECK(message_of<ValueError>([&] { (void)scatter_reduce(make<float>({0}, Dims{1}), 0, idx({0}, Dims{1}), make<float>({1}, Dims{1}), "max"); })
            .find("aten::scatter_reduce: reduce argument must be either sum, prod, mean, amax or amin, got 'max'") != std::string::npos);
  CHECK_THROWS_AS(scatter_reduce(make<bool>({0}, Dims{1}), 0, idx({0}, Dims{1}), make<bool>({1}, Dims{1}), "sum"), TypeError);
  CHECK(message_of<IndexError>([&] { (void)scatter_reduce(make<float>({0}, Dims{1}), 0, idx({1}, Dims{1}), make<float>({1}, Dims{1}), "sum"); })
            .find("aten::scatter_reduce") != std::string::npos);
}

TEST_CASE("index_add / index_add_: values, alpha, repeated indices, errors", "[ops][indexing]") {
  // torch.index_add(arange(12.).reshape(3, 4), 1, [3, 0, 3], [[1, 2, 3], [4, 5, 6], [7, 8, 9]], alpha=2)
  const Tensor<float> x = make<float>(kX, Dims{3, 4});
  const Tensor<float> src = make<float>({1, 2, 3, 4, 5, 6, 7, 8, 9}, Dims{3, 3});
  check_values(index_add(x, 1, idx({3, 0, 3}, Dims{3}), src, 2), {4, 1, 2, 11, 14, 5, 6, 27, 24, 9, 10, 43});
  // torch.index_add(arange(12).reshape(3, 4), 0, [2, 2], ones(2, 4, int64)); bool adds as or
  check_values(index_add(make<int64_t>(kX, Dims{3, 4}), 0, idx({2, 2}, Dims{2}), make<int64_t>({1, 1, 1, 1, 1, 1, 1, 1}, Dims{2, 4})),
               {0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13});
  check_values(index_add(make<bool>({0, 0, 0}, Dims{3}), 0, idx({1}, Dims{1}), make<bool>({1}, Dims{1})), {0, 1, 0});
  // the in-place form by schema, as a model graph calls it: torch.zeros(2, 3).index_add_(0, [1, 1, 0], arange(9.).reshape(3, 3))
  const AnyTensor z(make<float>({0, 0, 0, 0, 0, 0}, Dims{2, 3}));
  using ops::Arg;
  std::vector<Arg> args{Arg(z), Arg(int64_t{0}), Arg(AnyTensor(idx({1, 1, 0}, Dims{3}))),
                        Arg(AnyTensor(make<float>({0, 1, 2, 3, 4, 5, 6, 7, 8}, Dims{3, 3})))};
  const AnyTensor r = ops::call_by_name("aten::index_add_", args);
  check_values(r.get<float>(), {6, 7, 8, 3, 5, 7});
  check_values(z.get<float>(), {6, 7, 8, 3, 5, 7});  // written in place
  // errors: source's shape (torch: "The size of tensor a (4) must match ..."), an index out of range
  CHECK(message_of<ShapeError>([&] { (void)index_add(x, 0, idx({0}, Dims{1}), make<float>({0, 0, 0}, Dims{1, 3})); })
            .find("aten::index_add: source must have self's shape") != std::string::npos);
  CHECK(message_of<IndexError>([&] { (void)index_add(x, 0, idx({5}, Dims{1}), make<float>({0, 0, 0, 0}, Dims{1, 4})); })
            .find("aten::index_add") != std::string::npos);
  CHECK(message_of<ShapeError>([&] { (void)index_add(x, 0, idx({0, 1}, Dims{1, 2}), make<float>({0, 0, 0, 0}, Dims{1, 4})); })
            .find("index is supposed to be a vector") != std::string::npos);
}

TEST_CASE("one_hot: classes, num_classes = -1, shapes", "[ops][indexing]") {
  // torch.nn.functional.one_hot(tensor([1, 3, 0])), (tensor([[1], [0]]), 3)
  const Tensor<int64_t> o = one_hot(idx({1, 3, 0}, Dims{3}));
  CHECK(o.sizes() == Dims{3, 4});
  check_values(o, {0, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0});
  const Tensor<int64_t> o2 = one_hot(idx({1, 0}, Dims{2, 1}), 3);
  CHECK(o2.sizes() == Dims{2, 1, 3});
  check_values(o2, {0, 1, 0, 1, 0, 0});
  check_values(one_hot(idx({1, 0, 2}, Dims{3, 1}).t(), 3), {0, 1, 0, 1, 0, 0, 0, 0, 1});  // non-contiguous
  check_values(one_hot(idx({2}, Dims{}), 3), {0, 0, 1});                                 // 0-dim -> [3]
  CHECK(one_hot(idx({}, Dims{0}), 3).sizes() == Dims{0, 3});                             // torch: [0, 3]
  CHECK(one_hot(idx({1}, Dims{1}).expand(Dims{4}), 2).sizes() == Dims{4, 2});
  const AnyTensor a = one_hot(AnyTensor(idx({0, 2}, Dims{2})));
  CHECK(a.dtype() == ScalarType::Int64);
  check_values(a.get<int64_t>(), {1, 0, 0, 0, 0, 1});
}

TEST_CASE("indexing ops: bad input names the op, the index and the size", "[ops][indexing][errors]") {
  const Tensor<float> x = make<float>(kX, Dims{3, 4});
  CHECK(message_of<IndexError>([&] { (void)index_select(x, 0, idx({0, 3}, Dims{2})); }) ==
        "aten::index_select: index 3 is out of bounds for dimension 0 with size 3");
  CHECK(message_of<IndexError>([&] { (void)index_select(x, 1, idx({-1}, Dims{1})); }) ==
        "aten::index_select: index -1 is out of bounds for dimension 1 with size 4");
  std::string m = message_of<TypeError>([&] { (void)index_select(x, 0, make<float>({0}, Dims{1})); });
  CHECK(m == "aten::index_select: expected dtype int64 or int32 for index, got float32 (operands [3, 4] float32, [1] float32)");
  CHECK(message_of<ShapeError>([&] { (void)index_select(x, 0, idx({0}, Dims{1, 1})); }).find("index is supposed to be a vector") !=
        std::string::npos);
  CHECK_THROWS_AS(index_select(x, 2, idx({0}, Dims{1})), IndexError);

  CHECK(message_of<IndexError>([&] { (void)gather(x, 1, idx({4}, Dims{1, 1})); }) ==
        "aten::gather: index 4 is out of bounds for dimension 1 with size 4");
  CHECK_THROWS_AS(gather(x, 0, make<int32_t>({0}, Dims{1, 1})), TypeError);  // torch: int64 only
  m = message_of<ShapeError>([&] { (void)gather(x, 0, idx({0, 0, 0, 0, 0}, Dims{1, 5})); });
  CHECK(m.find("aten::gather") != std::string::npos);
  CHECK(m.find("[3, 4] float32, [1, 5] int64") != std::string::npos);
  CHECK_THROWS_AS(gather(x, 0, idx({0}, Dims{1})), ShapeError);  // ranks differ

  CHECK(message_of<IndexError>([&] { (void)take_along_dim(x, idx({12}, Dims{1})); }) ==
        "aten::take_along_dim: index 12 is out of bounds for dimension 0 with size 12");
  CHECK_THROWS_AS(take_along_dim(x, idx({0}, Dims{1, 1, 1}), 1), ShapeError);
  CHECK_THROWS_AS(take_along_dim(x, idx({0, 0}, Dims{2, 1}), 1), ShapeError);  // 3 vs 2 do not broadcast

  CHECK(message_of<IndexError>([&] { (void)scatter(x, 0, idx({3}, Dims{1, 1}), x); }) ==
        "aten::scatter: index 3 is out of bounds for dimension 0 with size 3");
  CHECK(message_of<IndexError>([&] { (void)scatter_add(x, 1, idx({-2}, Dims{1, 1}), x); }) ==
        "aten::scatter_add: index -2 is out of bounds for dimension 1 with size 4");
  CHECK_THROWS_AS(scatter(x, 0, idx({0, 0}, Dims{1, 2}), make<float>({1}, Dims{1, 1})), ShapeError);  // src smaller
  CHECK_THROWS_AS(scatter(AnyTensor(x), 0, AnyTensor(idx({0}, Dims{1, 1})), AnyTensor(make<double>({1}, Dims{1, 1}))),
                  TypeError);  // src of another dtype

  m = message_of<ShapeError>([&] { (void)masked_fill(x, make<bool>({1, 0}, Dims{2}), 0); });
  CHECK(m.find("aten::masked_fill") != std::string::npos);
  CHECK(m.find("[3, 4] and [2]") != std::string::npos);
  CHECK_THROWS_AS(masked_fill(x, make<float>({1}, Dims{1}), 0), TypeError);
  CHECK(message_of<ShapeError>([&] { (void)masked_fill(x, make<bool>({1}, Dims{1}), make<float>({1, 2}, Dims{2})); }) ==
        "aten::masked_fill: only supports a 0-dimensional value tensor, but got tensor with 1 dimension(s) (value [2] float32)");

  CHECK(message_of<IndexError>([&] { (void)one_hot(idx({1, 3}, Dims{2}), 2); }) ==
        "aten::one_hot: class value 3 is out of range for num_classes 2");
  CHECK_THROWS_AS(one_hot(idx({-1, 3}, Dims{2}), 5), IndexError);
  CHECK_THROWS_AS(one_hot(idx({-1}, Dims{1})), IndexError);
  CHECK(message_of<ValueError>([&] { (void)one_hot(idx({}, Dims{0})); }).find("empty") != std::string::npos);
  CHECK(message_of<TypeError>([&] { (void)one_hot(make<int32_t>({1}, Dims{1}), 3); }) ==
        "aten::one_hot: is only applicable to index tensors of dtype int64 (operands [1] int32)");
}

TEST_CASE("indexing ops on AnyTensor and by schema, as model graphs call them", "[ops][indexing][any][schema]") {
  using ops::Arg;
  const AnyTensor x = make<int64_t>(kX, Dims{3, 4});
  const AnyTensor i = idx({2, 0}, Dims{2});
  check_values(index_select(x, 0, i).get<int64_t>(), {8, 9, 10, 11, 0, 1, 2, 3});
  check_values(gather(x, 1, AnyTensor(idx({1, 2, 3}, Dims{3, 1}))).get<int64_t>(), {1, 6, 11});
  check_values(take_along_dim(x, i).get<int64_t>(), {2, 0});
  check_values(take_along_dim(x, AnyTensor(idx({1, 2, 3}, Dims{3, 1})), 1).get<int64_t>(), {1, 6, 11});
  const AnyTensor f = make<half>({0.5, 1.5}, Dims{2});
  const AnyTensor sm = masked_fill(f, AnyTensor(make<bool>({0, 1}, Dims{2})), AnyTensor(make<double>({-2.25}, Dims{})));
  CHECK(sm.dtype() == ScalarType::Half);
  check_values(sm.get<half>(), {0.5, -2.25});
  check_values(scatter(f, 0, AnyTensor(idx({1}, Dims{1})), 3).get<half>(), {0.5, 3});

  std::vector<Arg> a1{Arg(x), Arg(int64_t{1}), Arg(AnyTensor(idx({3}, Dims{1})))};
  check_values(ops::call_by_name("aten::index_select", a1).get<int64_t>(), {3, 7, 11});
  std::vector<Arg> a2{Arg(x), Arg(int64_t{0}), Arg(AnyTensor(idx({2, 1, 0, 0}, Dims{1, 4})))};
  check_values(ops::call_by_name("aten::gather", a2).get<int64_t>(), {8, 5, 2, 3});
  std::vector<Arg> a3{Arg(x), Arg(AnyTensor(idx({11, 0}, Dims{2})))};  // dim=None from the schema
  check_values(ops::call_by_name("aten::take_along_dim", a3).get<int64_t>(), {11, 0});
  const AnyTensor si = idx({3, 0, 2, 2}, Dims{2, 2});
  std::vector<Arg> a4{Arg(x), Arg(int64_t{1}), Arg(si), Arg(int64_t{7})};  // scatter.value
  check_values(ops::call_by_name("aten::scatter", a4).get<int64_t>(), {7, 1, 2, 7, 4, 5, 7, 7, 8, 9, 10, 11});
  std::vector<Arg> a5{Arg(x), Arg(int64_t{1}), Arg(si), Arg(AnyTensor(make<int64_t>({10, 11, 12, 13}, Dims{2, 2})))};
  check_values(ops::call_by_name("aten::scatter", a5).get<int64_t>(), {11, 1, 2, 10, 4, 5, 13, 7, 8, 9, 10, 11});
  check_values(ops::call_by_name("aten::scatter_add", a5).get<int64_t>(), {11, 1, 2, 13, 4, 5, 31, 7, 8, 9, 10, 11});
  const AnyTensor mk = make<bool>({1, 0, 0, 1}, Dims{4});
  std::vector<Arg> a6{Arg(x), Arg(mk), Arg(AnyTensor(make<float>({2.5}, Dims{})))};  // masked_fill.Tensor: 0-dim value
  check_values(ops::call_by_name("aten::masked_fill", a6).get<int64_t>(), {2, 1, 2, 2, 2, 5, 6, 2, 2, 9, 10, 2});
  std::vector<Arg> a7{Arg(x), Arg(mk), Arg(-1.0)};
  check_values(ops::call_by_name("aten::masked_fill", a7).get<int64_t>(), {-1, 1, 2, -1, -1, 5, 6, -1, -1, 9, 10, -1});
  std::vector<Arg> a8{Arg(AnyTensor(idx({1, 3, 0}, Dims{3})))};  // num_classes=-1 from the schema
  check_values(ops::call_by_name("aten::one_hot", a8).get<int64_t>(), {0, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0});
  std::vector<Arg> bad{Arg(x), Arg(int64_t{1}), Arg(si), Arg(std::string("x"))};
  CHECK(message_of<TypeError>([&] { (void)ops::call_by_name("aten::scatter", bad); }) ==
        "aten::scatter: argument 'value' must be a number or a 0-dim tensor, got str");
}

TEMPLATE_TEST_CASE("embedding: rows of the table for every index, any index rank", "[ops][indexing][embedding]", float,
                   bfloat16, int64_t, bool) {
  using T = TestType;
  // table[i][j] = 10 i + j (bool: nonzero), indices [[3, 1, 3], [0, 2, 0]] → rows by hand
  Tensor<double> td = Tensor<double>::empty(Dims{4, 2});
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 2; ++j) td.data_ptr()[i * 2 + j] = double(10 * i + j);
  const Tensor<T> table = Tensor<T>(td.template to<T>());
  const Tensor<int64_t> idx = {{3, 1, 3}, {0, 2, 0}};
  const Tensor<T> e = embedding(table, idx);
  CHECK(e.sizes() == Dims{2, 3, 2});
  const std::vector<double> want = {30, 31, 10, 11, 30, 31, 0, 1, 20, 21, 0, 1};
  std::vector<double> w;
  for (double v : want) w.push_back(static_cast<double>(convert<double>(convert<T>(v))));
  check_values(e, w);
  // int32 indices, a 0-dim index, a transposed (non-contiguous) table, an empty index list
  check_values(embedding(table, Tensor<int32_t>{2}), {w[8], w[9]});
  CHECK(embedding(table, Tensor<int64_t>::empty(Dims{0, 5})).sizes() == Dims{0, 5, 2});
  const Tensor<T> tt = Tensor<T>(table.t().contiguous()).t();  // same values, strides (1, 4)
  check_values(embedding(tt, idx), w);
  // errors: index out of range, a weight that is not 2-D, float indices
  CHECK_THROWS_WITH(embedding(table, Tensor<int64_t>{4}), Catch::Contains("aten::embedding") && Catch::Contains("4"));
  CHECK_THROWS_AS(embedding(table, Tensor<int64_t>{-1}), IndexError);
  CHECK_THROWS_AS(embedding(Tensor<T>(table.reshape(Dims{8})), idx), ShapeError);
  CHECK_THROWS_AS(embedding(table, Tensor<float>{1.0f}), TypeError);
}
