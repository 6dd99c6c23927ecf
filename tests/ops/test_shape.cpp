// tests/ops/test_shape.cpp — the operator library's shape family on the cpu (cat, stack) through
// the typed API for every dtype, the run-time typed API (AnyTensor, promotion), the call by
// schema (what model graphs use), and the aten schema parser itself. Expected values are
// worked out by hand; the device path is tests/device_ops/test_device_library.cpp.
#include <cstdint>  // int64_t
#include <string>   // std::string
#include <vector>   // std::vector

#include "testing.hpp"  // check_values, Catch2, torchtpu

using namespace torchtpu;

namespace {

/// `vals` (row-major, shape `shape`) as a Tensor<T>.
template <class T>
Tensor<T> make(const std::vector<double>& vals, const Dims& shape) {
  Tensor<double> d = Tensor<double>::empty(shape);
  for (size_t i = 0; i < vals.size(); ++i) d.data_ptr()[i] = vals[i];
  return Tensor<T>(d.template to<T>());
}

/// What `vals` read back as after a round trip through T (bool: 0/1, uint8: wrapped).
template <class T>
std::vector<double> through(const std::vector<double>& vals) {
  std::vector<double> r;
  for (double v : vals) r.push_back(static_cast<double>(convert<double>(convert<T>(v))));
  return r;
}

/// The message of the exception `f` throws as `E` ("" when it throws nothing).
template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

}  // namespace

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
  AnyTensor r = ops::call_args<ops::CatOp>(args);
  CHECK(r.sizes() == Dims{3, 2});
  check_values(r.get<float>(), {1, 2, 3, 4, 5, 6});
  // dim from the schema's default (0)
  std::vector<ops::Arg> only{ops::Arg(std::vector<AnyTensor>{a, a})};
  CHECK(ops::call_args<ops::StackOp>(only).sizes() == Dims{2, 1, 2});
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
