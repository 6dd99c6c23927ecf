// tests/device_ops/test_device_int_literals.cpp — integer constants in lowered programs
// (issue 18, item 4): emitted from integers (exact above 2^53), double-valued bounds saturated
// to the dtype (never an undefined cast), reducer identities exactly INT64_MAX / INT64_MIN.
#include <cmath>   // NAN
#include <limits>  // std::numeric_limits
#include <string>  // std::string

#include "helpers.hpp"  // host_values, test_device

using namespace torchtpu;
namespace shlo = torchtpu::stablehlo;

namespace {
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

/// The module text of one splat constant built by `make`.
template <class F>
std::string text_of(F make) {
  shlo::Builder b;
  b.set_results({make(b)});
  return b.str();
}
}  // namespace

TEST_CASE("int literals: clamp bounds beyond the dtype are saturated, as on the cpu", "[pjrt]") {
  const Device dev = test_device();
  Tensor<int32_t> i = {1, 2, 3};
  auto di = i.to(dev);
  CHECK(host_values(Tensor<int32_t>(clamp(i, 0, 3e10))) == std::vector<double>{1, 2, 3});
  // Was [-64771072, ...]: 3e10 cast to int32 in the literal.
  CHECK(host_values(Tensor<int32_t>(clamp(di, 0, 3e10))) == std::vector<double>{1, 2, 3});
  CHECK(host_values(Tensor<int32_t>(clamp(di, -3e10, 2))) == std::vector<double>{1, 2, 2});
  CHECK(host_values(Tensor<int32_t>(clamp(di, 2, 1e300))) == std::vector<double>{2, 2, 3});
  Tensor<int64_t> l = {-5, 1, 7};
  auto dl = l.to(dev);
  // Was INT64_MIN for the bound (an undefined double → int64 cast): every element became it.
  CHECK(host_values(Tensor<int64_t>(clamp(dl, 0, 1e30))) == std::vector<double>{0, 1, 7});
  CHECK(host_values(Tensor<int64_t>(clamp(dl, -1e30, 3))) == std::vector<double>{-5, 1, 3});
  Tensor<uint8_t> u = {0, 100, 255};
  CHECK(host_values(Tensor<uint8_t>(clamp(u.to(dev), -1e9, 1e9))) == std::vector<double>{0, 100, 255});
}

TEST_CASE("int literals: the Builder's integer constants", "[pjrt][builder]") {
  // Saturated, truncated toward zero; NaN is 0 (XLA's float → int conversion).
  CHECK(contains(text_of([](shlo::Builder& b) { return b.constant(3e10, ScalarType::Int32); }),
                 "dense<2147483647> : tensor<i32>"));
  CHECK(contains(text_of([](shlo::Builder& b) { return b.constant(-3e10, ScalarType::Int32); }),
                 "dense<-2147483648> : tensor<i32>"));
  CHECK(contains(text_of([](shlo::Builder& b) { return b.constant(1e30, ScalarType::Int64); }),
                 "dense<9223372036854775807> : tensor<i64>"));
  CHECK(contains(text_of([](shlo::Builder& b) { return b.constant(-1e30, ScalarType::Int64); }),
                 "dense<-9223372036854775808> : tensor<i64>"));
  CHECK(contains(text_of([](shlo::Builder& b) { return b.constant(-2.75, ScalarType::Int64); }),
                 "dense<-2> : tensor<i64>"));
  CHECK(contains(text_of([](shlo::Builder& b) { return b.constant(NAN, ScalarType::Int32); }),
                 "dense<0> : tensor<i32>"));
  CHECK(contains(text_of([](shlo::Builder& b) { return b.constant(-7, ScalarType::UInt8); }),
                 "dense<0> : tensor<ui8>"));
  // Exact integers: 2^53 + 1 is not a double.
  CHECK(contains(text_of([](shlo::Builder& b) { return b.constant_int((int64_t{1} << 53) + 1, ScalarType::Int64); }),
                 "dense<9007199254740993> : tensor<i64>"));
  CHECK(contains(text_of([](shlo::Builder& b) {
                   return b.constant_int(std::numeric_limits<int64_t>::max(), ScalarType::Int64, {2});
                 }),
                 "dense<9223372036854775807> : tensor<2xi64>"));
  // Integer → integer wraps, as C++ and torch convert.
  CHECK(contains(text_of([](shlo::Builder& b) { return b.constant_int(-1, ScalarType::UInt8); }),
                 "dense<255> : tensor<ui8>"));
  CHECK(contains(text_of([](shlo::Builder& b) { return b.constant_int(int64_t{1} << 32 | 5, ScalarType::Int32); }),
                 "dense<5> : tensor<i32>"));
  CHECK(contains(text_of([](shlo::Builder& b) { return b.constant_int(3, ScalarType::Float); }),
                 "dense<3.000000000e+00> : tensor<f32>"));
}

TEST_CASE("int literals: reducer identities are the exact integer extremes", "[pjrt][builder]") {
  using shlo::ReduceOp;
  auto ident = [](ReduceOp op, ScalarType t) {
    return text_of([&](shlo::Builder& b) { return device::detail::reduce_identity(b, op, t); });
  };
  // Was 9223372036854774784 (the largest double below 2^63).
  CHECK(contains(ident(ReduceOp::Min, ScalarType::Int64), "dense<9223372036854775807> : tensor<i64>"));
  CHECK(contains(ident(ReduceOp::Max, ScalarType::Int64), "dense<-9223372036854775808> : tensor<i64>"));
  CHECK(contains(ident(ReduceOp::Min, ScalarType::Int32), "dense<2147483647> : tensor<i32>"));
  CHECK(contains(ident(ReduceOp::Max, ScalarType::UInt8), "dense<0> : tensor<ui8>"));
  CHECK(contains(ident(ReduceOp::Min, ScalarType::UInt8), "dense<255> : tensor<ui8>"));
  CHECK(contains(ident(ReduceOp::Max, ScalarType::Float), "dense<0xFF800000> : tensor<f32>"));
  // And they run: min / max of int64 values near the extremes on the device.
  const Device dev = test_device();
  Tensor<int64_t> l = {5, -3, 9};
  CHECK(Tensor<int64_t>(l.to(dev).min()).cpu().item() == -3);
  CHECK(Tensor<int64_t>(l.to(dev).max()).cpu().item() == 9);
}

TEST_CASE("int literals: integer scalars of an expression stay exact", "[pjrt]") {
  // A scalar node carries its integer value; the signature tells 2^53 and 2^53 + 1 apart
  // (equal as doubles: with one signature both would share one program text).
  device::TreeNode a, b;
  a.kind = b.kind = device::TreeNode::Kind::Scalar;
  a.dtype = b.dtype = ScalarType::Int64;
  a.int_scalar = b.int_scalar = true;
  a.iscalar = int64_t{1} << 53;
  b.iscalar = (int64_t{1} << 53) + 1;
  a.scalar = b.scalar = static_cast<double>(a.iscalar);
  device::ExprTree ta, tb;
  ta.root = ta.add(a);
  tb.root = tb.add(b);
  std::string sa, sb;
  device::detail::append_tree_sig(sa, ta);
  device::detail::append_tree_sig(sb, tb);
  CHECK(sa != sb);
  device::ConstantHoistingBuilder hb;
  hb.set_results({device::detail::scalar_constant(hb, b, ScalarType::Int64, {3})});
  CHECK(contains(hb.str(), "dense<9007199254740993> : tensor<3xi64>"));
  // The front end records integer scalars as integers (int64 tensor + int64 scalar).
  const Device dev = test_device();
  Tensor<int64_t> l = {1, 2};
  CHECK(host_values(Tensor<int64_t>(l.to(dev) + int64_t{1000000007})) == std::vector<double>{1000000008, 1000000009});
}
