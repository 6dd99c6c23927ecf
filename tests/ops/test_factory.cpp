// tests/ops/test_factory.cpp — the tensor-creating ops of the operator library (ops/factory.hpp):
// zeros/ones/full/empty, their new_* and *_like forms, fill_ and zero_, on the cpu, typed,
// AnyTensor and by aten name as a model graph calls them (TorchScript's dtype codes: 4 int64,
// 6 float32, 11 bool, 15 bfloat16). Expected values are by hand (torch 1.13 agrees: the
// generating Python is beside each), errors by message.
#include <cstdint>  // int64_t
#include <string>   // std::string
#include <vector>   // std::vector

#include <torchtpu/ops/all.hpp>  // ops::call_by_name

#include "testing.hpp"  // check_values, Catch2, torchtpu

using namespace torchtpu;
using optest::make;
using optest::message_of;

namespace {
AnyTensor by_name(std::string_view aten, std::vector<ops::Arg> args) { return ops::call_by_name(aten, args); }
}  // namespace

TEMPLATE_TEST_CASE("zeros_like, ones_like, full_like: every dtype, typed and AnyTensor", "[ops][factory]", bool, uint8_t,
                   int32_t, int64_t, half, bfloat16, float, double) {
  using T = TestType;
  // a non-contiguous self: only its shape and dtype count
  const Tensor<T> x = make<T>({1, 0, 1, 1, 0, 1}, Dims{2, 3}).transpose(0, 1);
  const Tensor<T> z = zeros_like(x);
  CHECK(z.sizes() == Dims{3, 2});
  check_values(z, {0, 0, 0, 0, 0, 0});
  check_values(ones_like(x), {1, 1, 1, 1, 1, 1});
  // torch.full_like(x, 3) for each dtype: bool True, the rest 3
  check_values(full_like(x, 3), std::vector<double>(6, std::is_same_v<T, bool> ? 1.0 : 3.0));
  const AnyTensor a = zeros_like(AnyTensor(x));
  CHECK(a.dtype() == dtype_of<T>());
  CHECK(a.sizes() == Dims{3, 2});
  CHECK(ones_like(AnyTensor(x)).dtype() == dtype_of<T>());
  // an empty self gives an empty result
  CHECK(zeros_like(Tensor<T>::empty(Dims{0, 4})).sizes() == Dims{0, 4});
}

TEST_CASE("full_like: int64 values stay exact, floats round to the dtype", "[ops][factory]") {
  const Tensor<int64_t> i = make<int64_t>({0, 0}, Dims{2});
  // torch.full_like(torch.zeros(2, dtype=torch.long), 2**53 + 1) -> [9007199254740993] * 2
  const Tensor<int64_t> big = full_like(i, int64_t(9007199254740993));
  CHECK(big.data_ptr()[0] == int64_t(9007199254740993));
  CHECK(big.data_ptr()[1] == int64_t(9007199254740993));
  // torch.full_like(torch.zeros(1), 0.1) -> 0.1 rounded to float32
  CHECK(full_like(make<float>({0}, Dims{1}), 0.1).data_ptr()[0] == 0.1f);
  // torch.full_like(torch.zeros(1, dtype=torch.long), 2.7) -> 2 (truncated)
  CHECK(full_like(make<int64_t>({0}, Dims{1}), 2.7).data_ptr()[0] == 2);
}

TEST_CASE("factory ops by aten name: dtypes, shapes, fill values as a model graph passes them", "[ops][factory]") {
  const AnyTensor self(make<float>({1, 2, 3, 4, 5, 6}, Dims{2, 3}));
  const ops::Arg none;
  // torch.zeros_like(x, dtype=torch.long)
  AnyTensor r = by_name("aten::zeros_like", {self, int64_t(4), none, none, none, none});
  CHECK(r.dtype() == ScalarType::Int64);
  check_values(r.get<int64_t>(), {0, 0, 0, 0, 0, 0});
  // torch.ones_like(x) keeps float32
  r = by_name("aten::ones_like", {self});
  CHECK(r.dtype() == ScalarType::Float);
  check_values(r.get<float>(), {1, 1, 1, 1, 1, 1});
  // torch.full_like(x, -2.5, dtype=torch.bfloat16)
  r = by_name("aten::full_like", {self, -2.5, int64_t(15)});
  CHECK(r.dtype() == ScalarType::BFloat16);
  check_values(r.get<bfloat16>(), {-2.5, -2.5, -2.5, -2.5, -2.5, -2.5});
  // x.new_zeros([2, 1, 2]) -> float32 zeros; x.new_full([3], 7) -> float32 7s; x.new_ones([2], dtype=torch.bool)
  r = by_name("aten::new_zeros", {self, std::vector<int64_t>{2, 1, 2}, none, none, std::string("cpu"), false});
  CHECK(r.dtype() == ScalarType::Float);
  CHECK(r.sizes() == Dims{2, 1, 2});
  check_values(r.get<float>(), {0, 0, 0, 0});
  r = by_name("aten::new_full", {self, std::vector<int64_t>{3}, int64_t(7)});
  check_values(r.get<float>(), {7, 7, 7});
  r = by_name("aten::new_ones", {self, std::vector<int64_t>{2}, int64_t(11)});
  CHECK(r.dtype() == ScalarType::Bool);
  check_values(r.get<bool>(), {1, 1});
  r = by_name("aten::new_empty", {self, std::vector<int64_t>{0, 5}});
  CHECK(r.sizes() == Dims{0, 5});
  // torch.zeros([2, 2]) float32; torch.ones([3], dtype=torch.int32); torch.empty([2]) (zeros here)
  r = by_name("aten::zeros", {std::vector<int64_t>{2, 2}});
  CHECK(r.dtype() == ScalarType::Float);
  check_values(r.get<float>(), {0, 0, 0, 0});
  r = by_name("aten::ones", {std::vector<int64_t>{3}, int64_t(3)});
  CHECK(r.dtype() == ScalarType::Int32);
  check_values(r.get<int32_t>(), {1, 1, 1});
  check_values(by_name("aten::empty", {std::vector<int64_t>{2}}).get<float>(), {0, 0});
  // torch.full([2], True).dtype == torch.bool; torch.full([2], 3).dtype == torch.int64;
  // torch.full([2], 0.5).dtype == torch.float32; torch.full([1], -1, dtype=torch.uint8) -> 255
  CHECK(by_name("aten::full", {std::vector<int64_t>{2}, true}).dtype() == ScalarType::Bool);
  r = by_name("aten::full", {std::vector<int64_t>{2}, int64_t(3)});
  CHECK(r.dtype() == ScalarType::Int64);
  check_values(r.get<int64_t>(), {3, 3});
  r = by_name("aten::full", {std::vector<int64_t>{2}, 0.5});
  CHECK(r.dtype() == ScalarType::Float);
  check_values(r.get<float>(), {0.5, 0.5});
  check_values(by_name("aten::full", {std::vector<int64_t>{1}, int64_t(-1), int64_t(0)}).get<uint8_t>(), {255});
  // a 0-dim size list gives a 0-dim tensor: torch.full([], 4.0) -> tensor(4.)
  r = by_name("aten::full", {std::vector<int64_t>{}, 4.0});
  CHECK(r.dim() == 0);
  check_values(r.get<float>(), {4});
}

TEST_CASE("fill_ and zero_: in place, through a view into its base", "[ops][factory]") {
  // m = torch.zeros(3, 4); m[:, 1:3].fill_(5); m[2].zero_()  (m was all 5 in columns 1, 2)
  Tensor<float> m = zeros<float>(Dims{3, 4});
  const AnyTensor cols(m.narrow(1, 1, 2));
  const AnyTensor r = by_name("aten::fill_", {cols, int64_t(5)});
  CHECK(r.storage() == cols.storage());
  check_values(m, {0, 5, 5, 0, 0, 5, 5, 0, 0, 5, 5, 0});
  by_name("aten::zero_", {AnyTensor(m.select(0, 2))});
  check_values(m, {0, 5, 5, 0, 0, 5, 5, 0, 0, 0, 0, 0});
  // the Tensor overload as a trace passes it: a 0-dim tensor value; m.fill_(torch.tensor(2.5))
  by_name("aten::fill_", {AnyTensor(m), AnyTensor(make<double>({2.5}, Dims{}))});
  check_values(m, std::vector<double>(12, 2.5));
  // an int64 tensor filled with a float truncates, as torch: torch.zeros(2, dtype=torch.long).fill_(-1.5) -> [-1, -1]
  Tensor<int64_t> i = zeros<int64_t>(Dims{2});
  by_name("aten::fill_", {AnyTensor(i), -1.5});
  check_values(i, {-1, -1});
}

TEST_CASE("copy_ and masked_fill_: in place, through a view into its base, src broadcast and converted", "[ops][factory]") {
  // m = torch.zeros(2, 3); m[:, :2] = torch.tensor([1.5, -2.5])  -> a slice view, then copy_
  Tensor<float> m = zeros<float>(Dims{2, 3});
  const AnyTensor view(m.narrow(1, 0, 2));
  const AnyTensor r = by_name("aten::copy_", {view, AnyTensor(make<double>({1.5, -2.5}, Dims{2})), false});
  CHECK(r.storage() == view.storage());
  check_values(m, {1.5, -2.5, 0, 1.5, -2.5, 0});
  // into an int64 self, a float src truncates: torch.zeros(3, dtype=torch.long).copy_(torch.tensor([1.9, -1.9, 7.0]))
  Tensor<int64_t> i = zeros<int64_t>(Dims{3});
  by_name("aten::copy_", {AnyTensor(i), AnyTensor(make<float>({1.9f, -1.9f, 7.0f}, Dims{3}))});
  check_values(i, {1, -1, 7});
  // src must broadcast to self's shape, never the other way
  CHECK_THAT(message_of<ShapeError>([&] { by_name("aten::copy_", {AnyTensor(i), AnyTensor(zeros<float>(Dims{2, 3}))}); }),
             Catch::Contains("aten::copy_: src [2, 3] does not broadcast to self's shape [3]"));
  // s = torch.arange(4.).reshape(2, 2); s.masked_fill_(torch.tensor([True, False]), -1) -> [[-1, 1], [-1, 3]]
  Tensor<float> s = make<float>({0, 1, 2, 3}, Dims{2, 2});
  const AnyTensor mask(make<bool>({true, false}, Dims{2}));
  const AnyTensor f = by_name("aten::masked_fill_", {AnyTensor(s), mask, int64_t(-1)});
  CHECK(f.storage() == AnyTensor(s).storage());
  check_values(s, {-1, 1, -1, 3});
  CHECK_THAT(message_of<ShapeError>([&] {
               by_name("aten::masked_fill_", {AnyTensor(make<float>({0, 1}, Dims{2})), AnyTensor(make<bool>({true, false, true, false}, Dims{2, 2})), 1.0});
             }),
             Catch::Contains("aten::masked_fill_: mask [2, 2] broadcasts self [2] to [2, 2]"));
}

TEST_CASE("factory ops: errors name the op, the size and the operands", "[ops][factory]") {
  const AnyTensor self(make<float>({1, 2}, Dims{2}));
  CHECK_THAT(message_of<ShapeError>([&] { by_name("aten::zeros", {std::vector<int64_t>{2, -1}}); }),
             Catch::Contains("aten::zeros: negative dimension in size [2, -1]"));
  CHECK_THAT(message_of<ShapeError>([&] { by_name("aten::new_zeros", {self, std::vector<int64_t>{-3}}); }),
             Catch::Contains("aten::new_zeros: negative dimension in size [-3] (operands [2] float32)"));
  // torch.complex64 (code 9) has no counterpart
  CHECK_THAT(message_of<TypeError>([&] { by_name("aten::ones_like", {self, int64_t(9)}); }),
             Catch::Contains("aten::ones_like: torch.complex64 has no torchtpu counterpart"));
  // a fill value that is a tensor of more than one element
  CHECK_THAT(message_of<TypeError>([&] { by_name("aten::fill_", {self, self}); }),
             Catch::Contains("aten::fill_: the fill value must be a number or a 0-dim cpu tensor, got a [2] float32"));
  CHECK_THAT(message_of<TypeError>([&] { by_name("aten::full", {std::vector<int64_t>{2}, std::string("x")}); }),
             Catch::Contains("aten::full: the fill value must be a number, got str"));
  CHECK_THAT(message_of<ValueError>([&] { by_name("aten::zeros", {std::vector<int64_t>(9, 1)}); }),
             Catch::Contains("aten::zeros: at most 8 values in 'size'"));
}
