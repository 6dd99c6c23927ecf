// tests/ops/test_shape.cpp — the operator library's shape family on the cpu (cat, stack) through
// the typed API for every dtype, the run-time typed API (AnyTensor, promotion), the call by
// schema (what model graphs use), and the aten schema parser itself. Expected values are
// worked out by hand; the device path is tests/device_ops/test_device_library.cpp.
#include <cstdint>  // int64_t
#include <string>   // std::string
#include <vector>   // std::vector

#include <torchtpu/ops/all.hpp>  // ops::call_by_name

#include <torchtpu/ops/all.hpp>  // ops::call_args (the call by schema)

#include "testing.hpp"  // check_values, Catch2, torchtpu

using namespace torchtpu;

using optest::make;
using optest::message_of;
using optest::through;

TEMPLATE_TEST_CASE("cat and stack: every dtype, typed API", "[ops][shape]", bool, uint8_t, int32_t, int64_t, half,
                   bfloat16, float, double) {
  using T = TestType;
  const Tensor<T> a = make<T>({0, 1, 2, 3, 4, 5}, Dims{2, 3});
  const Tensor<T> b = make<T>({6, 7, 8}, Dims{1, 3});
  const Tensor<T> c = make<T>({9, 10}, Dims{2, 1});

  const Tensor<T> r0 = cat({a, b}, 0);
  CHECK(r0.sizes() == Dims{3, 3});
  check_values(r0, through<T>({0, 1, 2, 3, 4, 5, 6, 7, 8}));

  const Tensor<T> r1 = cat({a, c}, -1);  // negative dim
  CHECK(r1.sizes() == Dims{2, 4});
  check_values(r1, through<T>({0, 1, 2, 9, 3, 4, 5, 10}));

  // a non-contiguous operand (transposed) and a broadcast one (expanded): values, not memory
  const Tensor<T> at = make<T>({0, 3, 1, 4, 2, 5}, Dims{3, 2}).t();  // == a
  const Tensor<T> bx = make<T>({6, 7, 8}, Dims{3}).expand(Dims{2, 3});
  check_values(cat(std::vector<Tensor<T>>{at, bx}, 0), through<T>({0, 1, 2, 3, 4, 5, 6, 7, 8, 6, 7, 8}));

  // the legacy 1-D empty tensor is skipped whatever the other shapes; size-0 dims concatenate
  const Tensor<T> e = Tensor<T>::empty(Dims{0});
  check_values(cat({e, a, e}, 1), through<T>({0, 1, 2, 3, 4, 5}));
  CHECK(cat({e, a}, 1).sizes() == Dims{2, 3});
  CHECK(cat({e, e}, 0).sizes() == Dims{0});
  CHECK(cat({Tensor<T>::empty(Dims{2, 0}), Tensor<T>::empty(Dims{3, 0})}, 0).sizes() == Dims{5, 0});

  const Tensor<T> s0 = stack({a, a}, 0);
  CHECK(s0.sizes() == Dims{2, 2, 3});
  check_values(s0, through<T>({0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5}));
  const Tensor<T> s2 = stack({a, at}, -1);  // new last dim: pairs (a[i][j], a[i][j])
  CHECK(s2.sizes() == Dims{2, 3, 2});
  check_values(s2, through<T>({0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5}));
  const Tensor<T> s1 = stack({b, b, b}, 1);
  CHECK(s1.sizes() == Dims{1, 3, 3});
  check_values(s1, through<T>({6, 7, 8, 6, 7, 8, 6, 7, 8}));
}

TEST_CASE("cat and stack: operands are never aliased by the result", "[ops][shape]") {
  Tensor<float> a = {{1, 2}, {3, 4}};
  Tensor<float> r = cat({a, a}, 0);
  a.fill_(0.0f);
  check_values(r, {1, 2, 3, 4, 1, 2, 3, 4});
  Tensor<float> one = {5.0f};
  Tensor<float> s = stack({one}, 0);  // a single operand is still a copy
  one.fill_(0.0f);
  check_values(s, {5});
}

TEST_CASE("cat and stack: bad input names the op and every operand", "[ops][shape][errors]") {
  const Tensor<float> a = zeros<float>(Dims{2, 3}), b = zeros<float>(Dims{2, 2});
  const std::string m = message_of<ShapeError>([&] { (void)cat({a, b}, 0); });
  CHECK(m.find("aten::cat") != std::string::npos);
  CHECK(m.find("[2, 3] float32, [2, 2] float32") != std::string::npos);
  CHECK(cat({a, b}, 1).sizes() == Dims{2, 5});  // the same operands fit along dim 1
  CHECK(message_of<IndexError>([&] { (void)cat({a, a}, 2); }).find("aten::cat: dimension 2 out of range") !=
        std::string::npos);
  CHECK_THROWS_AS(cat({a, zeros<float>(Dims{2, 3, 1})}, 0), ShapeError);  // ranks differ
  CHECK(message_of<ShapeError>([&] { (void)cat({a, Tensor<float>::empty(Dims{})}, 0); }).find("zero-dimensional") !=
        std::string::npos);
  CHECK(message_of<ValueError>([&] { (void)cat(std::vector<Tensor<float>>{}, 0); }).find("non-empty") !=
        std::string::npos);
  const std::string s = message_of<ShapeError>([&] { (void)stack({a, b}, 0); });
  CHECK(s.find("aten::stack") != std::string::npos);
  CHECK(s.find("[2, 3] float32, [2, 2] float32") != std::string::npos);
  CHECK_THROWS_AS(stack({a, a}, 3), IndexError);  // new dim in [-3, 2]
  CHECK(stack({a, a}, -3).sizes() == Dims{2, 2, 3});
}

TEST_CASE("cat and stack on AnyTensor: dtypes chosen at run time, promoted as torch", "[ops][shape][any]") {
  const AnyTensor i64 = make<int64_t>({1, 2}, Dims{2});
  const AnyTensor f32 = make<float>({0.5, 1.5}, Dims{2});
  const AnyTensor u8 = make<uint8_t>({200, 7}, Dims{2});
  const AnyTensor bl = make<bool>({1, 0}, Dims{2});
  const AnyTensor f16 = make<half>({0.25, 3}, Dims{2});
  const AnyTensor i32 = make<int32_t>({-4, 9}, Dims{2});

  const AnyTensor r = cat(std::vector<AnyTensor>{i64, f32}, 0);  // int64 + float32 -> float32
  CHECK(r.dtype() == ScalarType::Float);
  check_values(r.get<float>(), {1, 2, 0.5, 1.5});
  const AnyTensor r2 = cat(std::vector<AnyTensor>{bl, u8}, 0);  // bool + uint8 -> uint8
  CHECK(r2.dtype() == ScalarType::UInt8);
  check_values(r2.get<uint8_t>(), {1, 0, 200, 7});
  const AnyTensor r3 = stack(std::vector<AnyTensor>{i32, f16}, 1);  // int32 + float16 -> float16
  CHECK(r3.dtype() == ScalarType::Half);
  CHECK(r3.sizes() == Dims{2, 2});
  check_values(r3.get<half>(), {-4, 0.25, 9, 3});
  const AnyTensor r4 = cat(std::vector<AnyTensor>{i32, i64}, 0);  // int32 + int64 -> int64
  CHECK(r4.dtype() == ScalarType::Int64);
  check_values(r4.get<int64_t>(), {-4, 9, 1, 2});
}

TEST_CASE("library ops called by schema, as model graphs call them", "[ops][shape][schema]") {
  const AnyTensor a = make<float>({1, 2}, Dims{1, 2}), b = make<float>({3, 4, 5, 6}, Dims{2, 2});
  // dim given
  std::vector<ops::Arg> args{ops::Arg(std::vector<AnyTensor>{a, b}), ops::Arg(int64_t{0})};
  AnyTensor r = ops::call_args<ops::CatOp>(args).at(0);
  CHECK(r.sizes() == Dims{3, 2});
  check_values(r.get<float>(), {1, 2, 3, 4, 5, 6});
  // dim from the schema's default (0)
  std::vector<ops::Arg> only{ops::Arg(std::vector<AnyTensor>{a, a})};
  CHECK(ops::call_args<ops::StackOp>(only).at(0).sizes() == Dims{2, 1, 2});
  // wrong kinds and counts name the op and the argument
  std::vector<ops::Arg> bad{ops::Arg(std::vector<AnyTensor>{a}), ops::Arg(1.5)};
  CHECK(message_of<TypeError>([&] { (void)ops::call_args<ops::CatOp>(bad); }) ==
        "aten::cat: argument 'dim' must be int, got float");
  std::vector<ops::Arg> none{};
  CHECK(message_of<ValueError>([&] { (void)ops::call_args<ops::CatOp>(none); }) ==
        "aten::cat: expected at least 1 arguments, got 0 (missing 'tensors')");
  std::vector<ops::Arg> not_tensors{ops::Arg(int64_t{3})};
  CHECK(message_of<TypeError>([&] { (void)ops::call_args<ops::CatOp>(not_tensors); }) ==
        "aten::cat: argument 'tensors' must be Tensor[], got int");
}

TEST_CASE("aten schema parser: real schemas, defaults, errors", "[ops][schema]") {
  using B = ops::ArgType::Base;
  const ops::Schema conv = ops::parse_schema(
      "aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, int[2] padding=0, "
      "int[2] dilation=1, int groups=1) -> Tensor");
  CHECK(conv.name == "aten::conv2d");
  REQUIRE(conv.args.size() == 7);
  CHECK(conv.required() == 2);
  CHECK(conv.args[2].type.optional);
  CHECK(std::holds_alternative<std::monostate>(*conv.args[2].default_));
  CHECK(conv.args[3].type.fixed_len == 2);
  CHECK(std::get<std::vector<int64_t>>(*conv.args[3].default_) == std::vector<int64_t>{1, 1});  // int[2] = 1
  CHECK(std::get<int64_t>(*conv.args[6].default_) == 1);

  const ops::Schema ln = ops::parse_schema(
      "aten::layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
      "float eps=1.0000000000000001e-05, bool cudnn_enable=True) -> Tensor");
  CHECK(std::get<double>(*ln.args[4].default_) == 1e-05);
  CHECK(std::get<bool>(*ln.args[5].default_));
  CHECK(ln.args[1].type.base == B::Int);
  CHECK(ln.args[1].type.list);

  const ops::Schema topk = ops::parse_schema(
      "aten::topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> "
      "(Tensor values, Tensor indices)");
  CHECK(topk.returns.size() == 2);
  CHECK(std::get<int64_t>(*topk.args[2].default_) == -1);

  const ops::Schema gelu = ops::parse_schema("aten::gelu(Tensor self, *, str approximate=\"none\") -> Tensor");
  CHECK(gelu.args[1].kwarg_only);
  CHECK(std::get<std::string>(*gelu.args[1].default_) == "none");

  const ops::Schema add = ops::parse_schema("aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)");
  CHECK(add.overload == "Tensor");
  CHECK(add.args[0].type.base == B::Tensor);
  CHECK(add.args[2].type.base == B::Scalar);

  const ops::Schema sum = ops::parse_schema(
      "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor");
  CHECK(sum.args[1].type.optional);
  CHECK(sum.args[1].type.fixed_len == 1);
  CHECK(sum.required() == 2);
  const ops::Schema pad = ops::parse_schema("aten::pad(Tensor self, SymInt[] pad, str mode=\"constant\", float? value=None) -> Tensor");
  CHECK(pad.args[1].type.base == B::Int);
  const ops::Schema split = ops::parse_schema("aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]");
  CHECK(split.returns.at(0).list);
  const ops::Schema empty_list = ops::parse_schema("aten::f(int[] x=[], float[] y=[0.5, 2]) -> ()");
  CHECK(std::get<std::vector<int64_t>>(*empty_list.args[0].default_).empty());
  CHECK(std::get<std::vector<double>>(*empty_list.args[1].default_) == std::vector<double>{0.5, 2.0});
  CHECK(empty_list.returns.empty());

  CHECK(message_of<ValueError>([] { (void)ops::parse_schema("aten::f(Tensor x -> Tensor"); }) ==
        "schema 'aten::f(Tensor x -> Tensor': expected ',' at position 17");
  CHECK_THROWS_AS(ops::parse_schema("aten::f(int x=1x) -> Tensor"), ValueError);
  CHECK_THROWS_AS(ops::parse_schema("aten::f(str x=\"abc) -> Tensor"), ValueError);
  CHECK_THROWS_AS(ops::parse_schema("(Tensor x) -> Tensor"), ValueError);
  CHECK_THROWS_AS(ops::parse_schema("aten::f(Tensor x) -> Tensor trailing"), ValueError);
}

// ArgReader::read(): which passed arguments an op's `args` looked at (a model graph reads a
// node's constant arguments once at load only when the result depends on nothing computed at
// run time, jit/library_ops.hpp). `is_none` does not count; defaults are not passed arguments.
TEST_CASE("aten schema: ArgReader records which passed arguments were read", "[ops][schema]") {
  const ops::Schema s = ops::parse_schema("aten::f(Tensor self, Tensor? bias=None, int[2] stride=1, int dim=0, bool flag=False) -> Tensor");
  const std::vector<ops::Arg> args{ops::Arg(AnyTensor(Tensor<float>::empty(Dims{2}))), ops::Arg(), ops::Arg(std::vector<int64_t>{2, 3}), ops::Arg(int64_t{1})};
  const ops::ArgReader r(s, args);
  CHECK(r.read() == 0);
  CHECK(r.is_none("bias"));
  CHECK(r.read() == 0);  // a None test reads no value
  CHECK(r.to_ints("stride") == std::vector<int64_t>{2, 3});
  CHECK(r.read() == 0b100);
  CHECK_FALSE(r.to_bool("flag"));  // the default: not a passed argument
  CHECK(r.read() == 0b100);
  CHECK(r.to_int("dim") == 1);
  CHECK(r.read() == 0b1100);
  CHECK(r.tensors().size() == 2);  // self and the absent bias (undefined)
  CHECK(r.read() == 0b1111);
}

// ---- roll, tril, triu, repeat, tile, flip, diag ----------------------------------------------
// Expected values: torch 1.13 (/usr/bin/python3) on torch.arange inputs of the same shapes,
// pasted as literals; `through<T>` maps them to what each dtype holds (these ops only move or
// zero elements, so converting before or after gives the same values).

TEMPLATE_TEST_CASE("roll, flip, repeat, tile: every dtype, typed API", "[ops][shape]", bool, uint8_t, int32_t, int64_t,
                   half, bfloat16, float, double) {
  using T = TestType;
  const Tensor<T> a = make<T>({0, 1, 2, 3, 4, 5}, Dims{2, 3});
  const Tensor<T> at = make<T>({0, 1, 2, 3, 4, 5}, Dims{3, 2}).t();  // non-contiguous [2, 3]: 0 2 4 / 1 3 5
  const Tensor<T> v = make<T>({0, 1, 2}, Dims{3});

  // torch.roll(a, 1), torch.roll(a, -7), torch.roll(a, [1, -1], [0, 1]), torch.roll(a, 2, -1)
  check_values(roll(a, 1), through<T>({5, 0, 1, 2, 3, 4}));
  CHECK(roll(a, 1).sizes() == Dims{2, 3});
  check_values(roll(a, -7), through<T>({1, 2, 3, 4, 5, 0}));
  check_values(roll(a, {1, -1}, {0, 1}), through<T>({4, 5, 3, 1, 2, 0}));
  check_values(roll(a, 2, -1), through<T>({1, 2, 0, 4, 5, 3}));
  check_values(roll(a, {1, 1}, {1, 1}), through<T>({1, 2, 0, 4, 5, 3}));  // a repeated dim: shifts add
  check_values(roll(at, 1, 0), through<T>({1, 3, 5, 0, 2, 4}));          // torch.roll(at, 1, 0)
  check_values(roll(v.expand(Dims{2, 3}), 1), through<T>({2, 0, 1, 2, 0, 1}));  // expanded operand, flat
  CHECK(roll(Tensor<T>::empty(Dims{0, 3}), 1, 0).sizes() == Dims{0, 3});
  check_values(roll(make<T>({5}, Dims{}), 3), through<T>({5}));  // 0-dim, flat form
  check_values(roll(a, 0, 0), through<T>({0, 1, 2, 3, 4, 5}));

  // torch.flip(a, [0]), [-1], [0, 1]; torch.flip(at, [1]); flip of a 0-dim tensor
  check_values(flip(a, {0}), through<T>({3, 4, 5, 0, 1, 2}));
  check_values(flip(a, {-1}), through<T>({2, 1, 0, 5, 4, 3}));
  check_values(flip(a, {0, 1}), through<T>({5, 4, 3, 2, 1, 0}));
  check_values(flip(at, {1}), through<T>({4, 2, 0, 5, 3, 1}));
  check_values(flip(make<T>({3}, Dims{}), {0}), through<T>({3}));
  check_values(flip(a, {}), through<T>({0, 1, 2, 3, 4, 5}));
  CHECK(flip(Tensor<T>::empty(Dims{2, 0}), {1}).sizes() == Dims{2, 0});

  // a.repeat(2, 1), a.repeat(2, 1, 2) ([2, 2, 6]), v.repeat(2, 2) ([2, 6]), a.repeat(2, 0, 1)
  check_values(repeat(a, {2, 1}), through<T>({0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5}));
  const Tensor<T> r3 = repeat(a, {2, 1, 2});
  CHECK(r3.sizes() == Dims{2, 2, 6});
  check_values(r3, through<T>({0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5, 0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}));
  check_values(repeat(v, {2, 2}), through<T>({0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2}));
  check_values(repeat(at, {1, 2}), through<T>({0, 2, 4, 0, 2, 4, 1, 3, 5, 1, 3, 5}));
  CHECK(repeat(a, {2, 0, 1}).sizes() == Dims{2, 0, 3});
  CHECK(repeat(make<T>({3}, Dims{}), {}).sizes() == Dims{});
  check_values(repeat(v.expand(Dims{2, 3}), {1, 1}), through<T>({0, 1, 2, 0, 1, 2}));
  // torch.tile(a, (2,)) ([2, 6]: the counts get leading 1s), torch.tile(v, (2, 2))
  const Tensor<T> t1 = tile(a, {2});
  CHECK(t1.sizes() == Dims{2, 6});
  check_values(t1, through<T>({0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}));
  check_values(tile(v, {2, 2}), through<T>({0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2}));
}

TEMPLATE_TEST_CASE("tril, triu, diag: every dtype, typed API", "[ops][shape]", bool, uint8_t, int32_t, int64_t, half,
                   bfloat16, float, double) {
  using T = TestType;
  const Tensor<T> b = make<T>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, Dims{3, 4});
  // torch.tril(b, k), torch.triu(b, k) for k = 0, 1, -1, 5, -5
  check_values(tril(b), through<T>({0, 0, 0, 0, 4, 5, 0, 0, 8, 9, 10, 0}));
  check_values(triu(b), through<T>({0, 1, 2, 3, 0, 5, 6, 7, 0, 0, 10, 11}));
  check_values(tril(b, 1), through<T>({0, 1, 0, 0, 4, 5, 6, 0, 8, 9, 10, 11}));
  check_values(triu(b, 1), through<T>({0, 1, 2, 3, 0, 0, 6, 7, 0, 0, 0, 11}));
  check_values(tril(b, -1), through<T>({0, 0, 0, 0, 4, 0, 0, 0, 8, 9, 0, 0}));
  check_values(triu(b, -1), through<T>({0, 1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11}));
  check_values(tril(b, 5), through<T>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  check_values(triu(b, 5), through<T>({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  check_values(tril(b, -5), through<T>({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  check_values(triu(b, -5), through<T>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  check_values(tril(b, INT64_MAX), through<T>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));  // no overflow
  check_values(triu(b, INT64_MIN), through<T>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  // batched: torch.tril(c), torch.triu(c, 1) for c = arange(12).reshape(2, 2, 3)
  const Tensor<T> c = make<T>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, Dims{2, 2, 3});
  check_values(tril(c), through<T>({0, 0, 0, 3, 4, 0, 6, 0, 0, 9, 10, 0}));
  check_values(triu(c, 1), through<T>({0, 1, 2, 0, 0, 5, 0, 7, 8, 0, 0, 11}));
  // non-contiguous (the transposed [4, 3] holds b.t()) and expanded operands; size-0 and -1 dims
  check_values(tril(b.t()), through<T>({0, 0, 0, 1, 5, 0, 2, 6, 10, 3, 7, 11}));  // by hand: b.t() lower part
  check_values(triu(make<T>({1, 2}, Dims{2}).expand(Dims{2, 2})), through<T>({1, 2, 0, 2}));
  CHECK(tril(Tensor<T>::empty(Dims{0, 3})).sizes() == Dims{0, 3});
  check_values(triu(make<T>({7}, Dims{1, 1})), through<T>({7}));

  // torch.diag(torch.tensor([1, 2, 3]), k) for k = 0 ([3, 3]), 1 ([4, 4]), -2 ([5, 5])
  const Tensor<T> x = make<T>({1, 2, 3}, Dims{3});
  check_values(diag(x), through<T>({1, 0, 0, 0, 2, 0, 0, 0, 3}));
  const Tensor<T> d1 = diag(x, 1);
  CHECK(d1.sizes() == Dims{4, 4});
  check_values(d1, through<T>({0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 3, 0, 0, 0, 0}));
  const Tensor<T> dm2 = diag(x, -2);
  CHECK(dm2.sizes() == Dims{5, 5});
  check_values(dm2, through<T>({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 3, 0, 0}));
  check_values(diag(make<T>({1, 2, 3, 4, 5, 6}, Dims{2, 3}).select(1, 1)), through<T>({2, 0, 0, 5}));  // strided
  CHECK(diag(Tensor<T>::empty(Dims{0}), -2).sizes() == Dims{2, 2});
  check_values(diag(Tensor<T>::empty(Dims{0}), -2), through<T>({0, 0, 0, 0}));
  // torch.diag(b, k) for k = 0, 1, 2, -1, -2, 3; k = 4 and -3 (outside): [0] (torch 2's result)
  check_values(diag(b), through<T>({0, 5, 10}));
  check_values(diag(b, 1), through<T>({1, 6, 11}));
  check_values(diag(b, 2), through<T>({2, 7}));
  check_values(diag(b, -1), through<T>({4, 9}));
  check_values(diag(b, -2), through<T>({8}));
  check_values(diag(b, 3), through<T>({3}));
  CHECK(diag(b, 4).sizes() == Dims{0});
  CHECK(diag(b, -3).sizes() == Dims{0});
  check_values(diag(b.t(), -1), through<T>({1, 6, 11}));  // torch.diag(b.t(), -1)
  check_values(diag(x.expand(Dims{3, 3}), 1), through<T>({2, 3}));
}

TEST_CASE("roll, tril, triu, repeat, flip, diag: bad input names the op and the operand", "[ops][shape][errors]") {
  const Tensor<float> a = zeros<float>(Dims{2, 3});
  std::string m = message_of<ValueError>([&] { (void)roll(a, {1, 2}, {0}); });
  CHECK(m.find("aten::roll: shifts and dimensions must align") != std::string::npos);
  CHECK(m.find("[2, 3] float32") != std::string::npos);
  CHECK_THROWS_AS(roll(a, {1, 2}), ValueError);  // two shifts, no dims
  CHECK(message_of<IndexError>([&] { (void)roll(a, 1, 2); }).find("aten::roll: dimension 2 out of range") !=
        std::string::npos);
  CHECK_THROWS_AS(roll(zeros<float>(Dims{}), 1, 0), IndexError);  // as torch: a 0-dim tensor has no dim 0
  m = message_of<ShapeError>([&] { (void)tril(zeros<int64_t>(Dims{3}), 0); });
  CHECK(m == "aten::tril: input tensor must have at least 2 dimensions (operands [3] int64)");
  CHECK_THROWS_AS(triu(zeros<float>(Dims{}), 0), ShapeError);
  m = message_of<ShapeError>([&] { (void)repeat(a, {2}); });
  CHECK(m.find("aten::repeat") != std::string::npos);
  CHECK(m.find("[2, 3] float32") != std::string::npos);
  CHECK(message_of<ValueError>([&] { (void)repeat(a, {-1, 1}); }).find("aten::repeat: negative repeat count") !=
        std::string::npos);
  m = message_of<ShapeError>([&] { (void)flip(a, {0, -2}); });
  CHECK(m == "aten::flip: dim 0 appears multiple times in the list of dims [0, -2] (operands [2, 3] float32)");
  CHECK_THROWS_AS(flip(a, {2}), IndexError);
  m = message_of<ShapeError>([&] { (void)diag(zeros<float>(Dims{1, 2, 3})); });
  CHECK(m == "aten::diag: matrix or a vector expected (operands [1, 2, 3] float32)");
  CHECK_THROWS_AS(diag(zeros<float>(Dims{})), ShapeError);
}

TEST_CASE("roll, tril, triu, repeat, tile, flip, diag on AnyTensor and by schema", "[ops][shape][any][schema]") {
  const AnyTensor a = make<int64_t>({0, 1, 2, 3, 4, 5}, Dims{2, 3});
  CHECK(roll(a, {1}).dtype() == ScalarType::Int64);
  check_values(roll(a, {1}).get<int64_t>(), {5, 0, 1, 2, 3, 4});
  check_values(tril(a).get<int64_t>(), {0, 0, 0, 3, 4, 0});
  check_values(triu(a, 1).get<int64_t>(), {0, 1, 2, 0, 0, 5});
  check_values(repeat(a, {1, 2}).get<int64_t>(), {0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5});
  CHECK(tile(a, {2}).sizes() == Dims{2, 6});
  check_values(flip(a, {1}).get<int64_t>(), {2, 1, 0, 5, 4, 3});
  check_values(diag(a, 1).get<int64_t>(), {1, 5});
  // by schema, as model graphs call them (defaults from the schema)
  using ops::Arg;
  std::vector<Arg> r1{Arg(a), Arg(int64_t{1})};  // int[1] shifts given as one int; dims=[] default
  check_values(ops::call_by_name("aten::roll", r1).get<int64_t>(), {5, 0, 1, 2, 3, 4});
  std::vector<Arg> r2{Arg(a), Arg(std::vector<int64_t>{1, -1}), Arg(std::vector<int64_t>{0, 1})};
  check_values(ops::call_by_name("aten::roll", r2).get<int64_t>(), {4, 5, 3, 1, 2, 0});
  std::vector<Arg> t1{Arg(a)};
  check_values(ops::call_by_name("aten::tril", t1).get<int64_t>(), {0, 0, 0, 3, 4, 0});
  check_values(ops::call_by_name("aten::triu", t1).get<int64_t>(), {0, 1, 2, 0, 4, 5});
  check_values(ops::call_by_name("aten::diag", t1).get<int64_t>(), {0, 4});
  std::vector<Arg> rep{Arg(a), Arg(std::vector<int64_t>{2, 1})};
  CHECK(ops::call_by_name("aten::repeat", rep).sizes() == Dims{4, 3});
  std::vector<Arg> fl{Arg(a), Arg(std::vector<int64_t>{0})};
  check_values(ops::call_by_name("aten::flip", fl).get<int64_t>(), {3, 4, 5, 0, 1, 2});
  std::vector<Arg> long_list{Arg(a), Arg(std::vector<int64_t>(9, 1))};
  CHECK(message_of<ValueError>([&] { (void)ops::call_by_name("aten::repeat", long_list); }) ==
        "aten::repeat: at most 8 values in 'repeats', got 9");
}

// ---- pad, constant_pad_nd -------------------------------------------------------------------
// Expected values: torch 1.13 (/usr/bin/python3), torch.nn.functional.pad on torch.arange
// inputs of the same shapes (float32, then read as each dtype by `through<T>`: these modes only
// move or fill elements), pasted as literals. Circular pads of a 4-D/5-D input ([1, 1, ...]: torch
// 1.13 wants a batch and a channel dim) give the same values as the unbatched calls here.

namespace {
/// 0, 1, 2, ... in `shape`.
template <class T>
Tensor<T> arange_as(const Dims& shape) {
  std::vector<double> v(static_cast<size_t>(numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  return make<T>(v, shape);
}
}  // namespace

TEMPLATE_TEST_CASE("pad (constant, circular), constant_pad_nd: every dtype, typed API", "[ops][shape][pad]", bool,
                   uint8_t, int32_t, int64_t, half, bfloat16, float, double) {
  using T = TestType;
  const Tensor<T> a = arange_as<T>(Dims{3, 4});
  // F.pad(a, [1, -2, 0, 1], value=3): a negative pad crops
  const Tensor<T> c = pad(a, {1, -2, 0, 1}, "constant", 3.0);
  CHECK(c.sizes() == Dims{4, 3});
  check_values(c, through<T>({3, 0, 1, 3, 4, 5, 3, 8, 9, 3, 3, 3}));
  check_values(constant_pad_nd(a, {1, -2, 0, 1}, 3.0), through<T>({3, 0, 1, 3, 4, 5, 3, 8, 9, 3, 3, 3}));
  // F.pad(arange(6).reshape(1, 2, 3), [0, 1, 1, 0, 0, 1]): value omitted (0), three dims
  check_values(pad(arange_as<T>(Dims{1, 2, 3}), {0, 1, 1, 0, 0, 1}),
               through<T>({0, 0, 0, 0, 0, 1, 2, 0, 3, 4, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  // circular: F.pad(a[None, None], [1, 2, -1, 1], mode='circular')
  const Tensor<T> r = pad(a.reshape(Dims{1, 3, 4}), {1, 2, -1, 1}, "circular");
  CHECK(r.sizes() == Dims{1, 3, 7});
  check_values(r, through<T>({7, 4, 5, 6, 7, 4, 5, 11, 8, 9, 10, 11, 8, 9, 7, 4, 5, 6, 7, 4, 5}));
  // F.pad(arange(8).reshape(1, 1, 2, 2, 2), [1, 0, 0, 1, 1, 1], mode='circular')
  check_values(pad(arange_as<T>(Dims{1, 2, 2, 2}), {1, 0, 0, 1, 1, 1}, "circular"),
               through<T>({5, 4, 5, 7, 6, 7, 5, 4, 5, 1, 0, 1, 3, 2, 3, 1, 0, 1,
                           5, 4, 5, 7, 6, 7, 5, 4, 5, 1, 0, 1, 3, 2, 3, 1, 0, 1}));
  // non-contiguous operand: a.t() [4, 3] padded on the last dim
  check_values(pad(a.t(), {1, 0}, "constant", 1.0), through<T>({1, 0, 4, 8, 1, 1, 5, 9, 1, 2, 6, 10, 1, 3, 7, 11}));
  // size-0 and size-1 dims; an empty pad list copies
  CHECK(pad(Tensor<T>::empty(Dims{0, 3}), {1, 1}).sizes() == Dims{0, 5});
  check_values(pad(Tensor<T>::empty(Dims{0, 2}), {0, 0, 1, 1}, "constant", 2.0), through<T>({2, 2, 2, 2}));
  check_values(pad(arange_as<T>(Dims{1, 1}), {0, 1, 1, 0}, "constant", 1.0), through<T>({1, 1, 0, 1}));
  check_values(pad(a, {}), through<T>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  CHECK(pad(a.reshape(Dims{1, 3, 4}), {-4, 0}, "circular").sizes() == Dims{1, 3, 0});
}

TEMPLATE_TEST_CASE("pad (reflect, replicate): floating dtypes, typed API", "[ops][shape][pad]", half, bfloat16, float,
                   double) {
  using T = TestType;
  const Tensor<T> a = arange_as<T>(Dims{1, 3, 4});
  // F.pad(a[None], [2, 1, 1, 2], mode='reflect')
  const Tensor<T> r = pad(a, {2, 1, 1, 2}, "reflect");
  CHECK(r.sizes() == Dims{1, 6, 7});
  check_values(r, through<T>({6, 5, 4, 5, 6, 7, 6, 2, 1, 0, 1, 2, 3, 2, 6, 5, 4, 5, 6, 7, 6, 10, 9, 8, 9, 10, 11, 10,
                              6, 5, 4, 5, 6, 7, 6, 2, 1, 0, 1, 2, 3, 2}));
  check_values(pad(a, {-1, 3}, "reflect"), through<T>({1, 2, 3, 2, 1, 0, 5, 6, 7, 6, 5, 4, 9, 10, 11, 10, 9, 8}));
  check_values(pad(a, {2, 1, 1, -1}, "replicate"),
               through<T>({0, 0, 0, 1, 2, 3, 3, 0, 0, 0, 1, 2, 3, 3, 4, 4, 4, 5, 6, 7, 7}));
  const Tensor<T> b = arange_as<T>(Dims{1, 2, 2, 2});
  check_values(pad(b, {1, 0, 0, 1, 1, 1}, "reflect"),
               through<T>({5, 4, 5, 7, 6, 7, 5, 4, 5, 1, 0, 1, 3, 2, 3, 1, 0, 1,
                           5, 4, 5, 7, 6, 7, 5, 4, 5, 1, 0, 1, 3, 2, 3, 1, 0, 1}));
  check_values(pad(b, {1, 0, 0, 1, 1, 1}, "replicate"),
               through<T>({0, 0, 1, 2, 2, 3, 2, 2, 3, 0, 0, 1, 2, 2, 3, 2, 2, 3,
                           4, 4, 5, 6, 6, 7, 6, 6, 7, 4, 4, 5, 6, 6, 7, 6, 6, 7}));
  // non-contiguous: F.pad(a.t()[None], [1, 1], mode='reflect') with a = arange(12).reshape(3, 4)
  const Tensor<T> at = arange_as<T>(Dims{3, 4}).t().reshape(Dims{1, 4, 3});
  check_values(pad(arange_as<T>(Dims{3, 4}).t(), {1, 1}, "reflect"),
               through<T>({4, 0, 4, 8, 4, 5, 1, 5, 9, 5, 6, 2, 6, 10, 6, 7, 3, 7, 11, 7}));
  check_values(pad(at, {1, 1}, "replicate"),
               through<T>({0, 0, 4, 8, 8, 1, 1, 5, 9, 9, 2, 2, 6, 10, 10, 3, 3, 7, 11, 11}));
  // size-1 dim: replicate repeats it, reflect cannot pad it
  check_values(pad(arange_as<T>(Dims{2, 1}), {2, 0}, "replicate"), through<T>({0, 0, 0, 1, 1, 1}));
  CHECK_THROWS_AS(pad(arange_as<T>(Dims{2, 1}), {1, 0}, "reflect"), ShapeError);
}

TEST_CASE("pad: bad input names the op, the pad and the operand", "[ops][shape][pad][errors]") {
  const Tensor<float> a = arange_as<float>(Dims{2, 3});
  CHECK(message_of<ValueError>([&] { (void)pad(a, {1, 1, 1}); }) ==
        "aten::pad: padding length must be divisible by 2 (pad [1, 1, 1], mode constant; operands [2, 3] float32)");
  CHECK_THROWS_AS(pad(a, {1, 1, 1, 1, 1, 1}), ValueError);  // more pairs than dims
  CHECK(message_of<ShapeError>([&] { (void)pad(a, {-2, -2}); }) ==
        "aten::pad: the input size 3 plus the padding resulted in a negative output size at dimension 1 (pad [-2, "
        "-2], mode constant; operands [2, 3] float32)");
  CHECK_THROWS_AS(pad(a, {1, 1}, "symmetric"), ValueError);
  CHECK_THROWS_AS(pad(a, {1, 1}, "reflect", 1.0), ValueError);  // a value with a non-constant mode
  CHECK_THROWS_AS(pad(a, {3, 0}, "reflect"), ShapeError);       // not less than the dim
  CHECK_THROWS_AS(pad(a, {4, 0}, "circular"), ShapeError);      // wraps more than once
  CHECK_THROWS_AS(pad(a, {-3, 0}, "replicate"), ShapeError);    // empty result
  CHECK_THROWS_AS(pad(Tensor<float>::empty(Dims{2, 0}), {1, 1}, "replicate"), ShapeError);
  CHECK_THROWS_AS(pad(arange_as<float>(Dims{4}), {1, 1}, "reflect"), ShapeError);  // 1-D: rank 2 or 3 wanted
  CHECK_THROWS_AS(pad(arange_as<float>(Dims{1, 1, 1, 1, 2}), {1, 1, 0, 0, 0, 0, 0, 0}, "circular"), ShapeError);
  const std::string m = message_of<TypeError>([] { (void)pad(arange_as<int64_t>(Dims{2, 3}), {1, 1}, "reflect"); });
  CHECK(m.find("aten::pad: padding mode \"reflect\" is not implemented for int64") == 0);
  CHECK(m.find("[2, 3] int64") != std::string::npos);
  CHECK_THROWS_AS(pad(arange_as<bool>(Dims{2, 3}), {1, 1}, "replicate"), TypeError);
  // torch: "value cannot be converted to type uint8_t without overflow"
  CHECK_THROWS_AS(pad(arange_as<uint8_t>(Dims{2, 3}), {1, 1}, "constant", -2.0), ValueError);
  CHECK_THROWS_AS(constant_pad_nd(arange_as<int32_t>(Dims{2, 3}), {1, 1}, 3e9), ValueError);
  CHECK(message_of<ValueError>([&] { (void)constant_pad_nd(a, {1}); }).find("aten::constant_pad_nd: ") == 0);
}

TEST_CASE("pad and constant_pad_nd on AnyTensor and by schema", "[ops][shape][pad][any][schema]") {
  const AnyTensor a(arange_as<int32_t>(Dims{2, 3}));
  const AnyTensor r = pad(a, {1, 0}, "constant", 2.5);  // 2.5 truncates to 2 in int32, as torch's fill_
  CHECK(r.dtype() == ScalarType::Int32);
  check_values(r.get<int32_t>(), {2, 0, 1, 2, 2, 3, 4, 5});
  const std::vector<ops::Arg> args{a, std::vector<int64_t>{0, 1}, std::string("circular"), ops::Arg{}};
  CHECK(ops::call_by_name("aten::pad", args).sizes() == Dims{2, 4});
  const std::vector<ops::Arg> args2{AnyTensor(arange_as<float>(Dims{1, 3})), std::vector<int64_t>{1, 1}};
  check_values(ops::call_by_name("aten::pad", args2).get<float>(), {0, 0, 1, 2, 0});  // defaults: constant, None
  const std::vector<ops::Arg> args3{AnyTensor(arange_as<float>(Dims{1, 3})), std::vector<int64_t>{1, 1}, int64_t{7}};
  check_values(ops::call_by_name("aten::constant_pad_nd", args3).get<float>(), {7, 0, 1, 2, 7});
  const std::vector<ops::Arg> args4{AnyTensor(arange_as<float>(Dims{1, 3})), std::vector<int64_t>{1, 1},
                                    std::string("reflect"), ops::Arg{}};
  check_values(ops::call_by_name("aten::pad", args4).get<float>(), {1, 0, 1, 2, 1});
}

TEST_CASE("call by schema: a tensor list where the schema has one tensor is a TypeError", "[ops][schema]") {
  // (fuzz_jit_graph: an empty Tensor[] passed as take_along_dim's `self` flattened to no operand,
  // and the shape rule read past the operand list)
  const AnyTensor a = make<float>({1, 2}, Dims{2});
  std::vector<ops::Arg> args{ops::Arg(std::vector<AnyTensor>{}), ops::Arg(AnyTensor(make<int64_t>({0}, Dims{1})))};
  CHECK_THROWS_WITH(ops::call_by_name("aten::take_along_dim", args),
                    "aten::take_along_dim: argument 'self' must be Tensor, got Tensor[]");
  std::vector<ops::Arg> one{ops::Arg(a), ops::Arg(int64_t{0})};
  CHECK_THROWS_AS(ops::call_args<ops::CatOp>(one), TypeError);  // cat takes Tensor[]
}

TEMPLATE_TEST_CASE("split, split_with_sizes, chunk, unbind, meshgrid: views, every dtype", "[ops][shape][split]", bool,
                   uint8_t, int32_t, int64_t, half, bfloat16, float, double) {
  using T = TestType;
  std::vector<double> v10;
  for (int i = 0; i < 10; ++i) v10.push_back(i);
  const Tensor<T> x = make<T>(v10, Dims{5, 2});  // torch.arange(10).reshape(5, 2)
  // [t.shape for t in torch.split(x, 2)] -> [2, 2], [2, 2], [1, 2]
  const std::vector<Tensor<T>> s = split(x, 2);
  REQUIRE(s.size() == 3);
  CHECK(s[2].sizes() == Dims{1, 2});
  check_values(s[2], through<T>({8, 9}));
  CHECK(s[1].data_ptr() == x.data_ptr() + 4);  // a view
  const std::vector<Tensor<T>> w = split_with_sizes(x, {1, 4}, 0);
  REQUIRE(w.size() == 2);
  check_values(w[1], through<T>({2, 3, 4, 5, 6, 7, 8, 9}));
  // torch.chunk(x, 4) -> sizes 2, 2, 1 (ceil(5 / 4) = 2)
  const std::vector<Tensor<T>> c = chunk(x, 4);
  REQUIRE(c.size() == 3);
  CHECK(c[2].sizes() == Dims{1, 2});
  // torch.unbind(x, 1) -> [0, 2, 4, 6, 8], [1, 3, 5, 7, 9]
  const std::vector<Tensor<T>> u = unbind(x, 1);
  REQUIRE(u.size() == 2);
  check_values(u[1], through<T>({1, 3, 5, 7, 9}));
  // torch.meshgrid(tensor([1, 2, 3]), tensor([4, 5]), indexing='xy') -> [[1,2,3],[1,2,3]], [[4,4,4],[5,5,5]]
  const std::vector<Tensor<T>> m = meshgrid<Tensor<T>>({make<T>({1, 2, 3}, Dims{3}), make<T>({4, 5}, Dims{2})}, "xy");
  REQUIRE(m.size() == 2);
  CHECK(m[0].sizes() == Dims{2, 3});
  check_values(m[0], through<T>({1, 2, 3, 1, 2, 3}));
  check_values(m[1], through<T>({4, 4, 4, 5, 5, 5}));
  const std::vector<Tensor<T>> mij = meshgrid<Tensor<T>>({make<T>({1, 2, 3}, Dims{3}), make<T>({4, 5}, Dims{2})});
  CHECK(mij[0].sizes() == Dims{3, 2});
  check_values(mij[1], through<T>({4, 5, 4, 5, 4, 5}));
}

TEST_CASE("split, chunk, unbind, meshgrid: AnyTensor, empty dims, errors", "[ops][shape][split]") {
  const AnyTensor x(make<int64_t>({0, 1, 2, 3, 4, 5}, Dims{6}));
  const std::vector<AnyTensor> s = split(x, 4);
  REQUIRE(s.size() == 2);
  CHECK(s[1].dtype() == ScalarType::Int64);
  check_values(s[1].get<int64_t>(), {4, 5});
  // torch.chunk(torch.empty(0), 3) -> three empty tensors; torch.split(torch.empty(0), 2) -> one
  const Tensor<float> e = Tensor<float>::empty(Dims{0});
  CHECK(chunk(e, 3).size() == 3);
  CHECK(split(e, 2).size() == 1);
  CHECK(split(e, 0).size() == 1);
  // torch.split(x, 0) on a non-empty dim: "split_size can only be 0 if dimension size is 0"
  CHECK_THAT(message_of<ValueError>([&] { split(x, 0); }), Catch::Contains("split") && Catch::Contains("[6]"));
  CHECK_THAT(message_of<ValueError>([&] { split_with_sizes(x, {2, 3}); }), Catch::Contains("sum to 5") && Catch::Contains("[6]"));
  CHECK_THAT(message_of<ValueError>([&] { chunk(x, 0); }), Catch::Contains("chunks must be positive"));
  CHECK_THROWS_AS(split(x, 2, 1), IndexError);
  CHECK_THROWS_AS(unbind(AnyTensor(Tensor<float>::empty(Dims{}))), IndexError);
  CHECK_THAT(message_of<ValueError>([&] { meshgrid<AnyTensor>({x, AnyTensor(Tensor<float>::empty(Dims{2}))}); }),
             Catch::Contains("same dtype"));
  CHECK_THAT(message_of<ValueError>([&] { meshgrid<AnyTensor>({AnyTensor(Tensor<float>::empty(Dims{2, 2}))}); }),
             Catch::Contains("[2, 2]"));
}
