// tests/device/test_stablehlo_builder.cpp — the text the StableHLO Builder emits and the errors
// it raises for ill-typed programs (no plugin needed).
#include <catch2/catch.hpp>  // TEST_CASE, CHECK

#include <string>  // std::string

#include <torchtpu/device/stablehlo.hpp>  // stablehlo::Builder

using namespace torchtpu;
namespace shlo = torchtpu::stablehlo;

namespace {
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
}

TEST_CASE("builder: module skeleton and pretty forms", "[pjrt][builder]") {
  shlo::Builder b;
  auto x = b.parameter(ScalarType::Float, {2, 3});
  auto v = b.parameter(ScalarType::Float, {3});
  auto bv = b.broadcast_in_dim(v, {2, 3}, {1});
  auto s = b.add(x, bv);
  auto e = b.exp(s);
  auto gt = b.compare(shlo::CompareDirection::GT, e, x);
  auto sel = b.select(gt, e, x);
  auto cv = b.convert(sel, ScalarType::BFloat16);
  auto t = b.transpose(x, {1, 0});
  auto mm = b.dot_general(x, t, {{}, {}, {1}, {0}}, shlo::Precision::Highest);
  auto z = b.constant(0.0, ScalarType::Float);
  auto r = b.reduce(mm, z, shlo::ReduceOp::Add, {1});
  b.set_results({cv, r});
  const std::string text = b.str();
  CHECK(contains(text, "func.func public @main(%v0: tensor<2x3xf32>, %v1: tensor<3xf32>) -> (tensor<2x3xbf16>, tensor<2xf32>)"));
  CHECK(contains(text, "stablehlo.broadcast_in_dim %v1, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>"));
  CHECK(contains(text, "stablehlo.add %v0, %v2 : tensor<2x3xf32>"));
  CHECK(contains(text, "stablehlo.exponential %v3 : tensor<2x3xf32>"));
  CHECK(contains(text, "stablehlo.compare GT, %v4, %v0, FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>"));
  CHECK(contains(text, "stablehlo.convert %v6 : (tensor<2x3xf32>) -> tensor<2x3xbf16>"));
  CHECK(contains(text, "stablehlo.transpose %v0, dims = [1, 0]"));
  CHECK(contains(text, "contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>"));
  CHECK(contains(text, "stablehlo.reduce(%v9 init: %v10) applies stablehlo.add across dimensions = [1]"));
  CHECK(contains(text, "return %v7, %v11 : tensor<2x3xbf16>, tensor<2xf32>"));
  CHECK(r.dims == std::vector<int64_t>{2});
}

TEST_CASE("builder: generic forms for slice, reduce_window, convolution and erf", "[pjrt][builder]") {
  shlo::Builder b;
  auto x = b.parameter(ScalarType::Float, {1, 2, 6, 6});
  auto w = b.parameter(ScalarType::Float, {4, 1, 3, 3});
  shlo::ConvOptions o;
  o.window_strides = {2, 2};
  o.padding = {{1, 1}, {1, 1}};
  o.feature_group_count = 2;
  auto y = b.convolution(x, w, o);
  CHECK(y.dims == std::vector<int64_t>{1, 4, 3, 3});
  auto ninf = b.constant(-INFINITY, ScalarType::Float);
  auto p = b.reduce_window(y, ninf, shlo::ReduceOp::Max, {1, 1, 2, 2}, {1, 1, 1, 1});
  CHECK(p.dims == std::vector<int64_t>{1, 4, 2, 2});
  auto sl = b.slice(p, {0, 0, 0, 0}, {1, 4, 2, 2}, {1, 2, 1, 1});
  CHECK(sl.dims == std::vector<int64_t>{1, 2, 2, 2});
  b.set_results({b.erf(sl)});
  const std::string text = b.str();
  CHECK(contains(text, "dimension_numbers = #stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>"));
  CHECK(contains(text, "feature_group_count = 2 : i64"));
  CHECK(contains(text, "padding = dense<[[1, 1], [1, 1]]> : tensor<2x2xi64>"));
  CHECK(contains(text, "window_strides = array<i64: 2, 2>"));
  CHECK(contains(text, "precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]"));
  CHECK(contains(text, "stablehlo.constant dense<0xFF800000> : tensor<f32>"));
  CHECK(contains(text, "\"stablehlo.reduce_window\"("));
  CHECK(contains(text, "stablehlo.return"));
  CHECK(contains(text, "\"stablehlo.slice\"(%v4) {start_indices = array<i64: 0, 0, 0, 0>"));
  CHECK(contains(text, "\"chlo.erf\"(%v5) : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>"));
}

TEST_CASE("builder: constants print exactly", "[pjrt][builder]") {
  CHECK(shlo::literal(0.1, ScalarType::Float) == "1.000000015e-01");
  CHECK(shlo::literal(1.0, ScalarType::BFloat16) == "1.000000000e+00");
  CHECK(shlo::literal(-INFINITY, ScalarType::BFloat16) == "0xFF80");
  CHECK(shlo::literal(NAN, ScalarType::Double) == "0x7FF8000000000000");
  CHECK(shlo::literal(-3, ScalarType::Int64) == "-3");
  CHECK(shlo::literal(1, ScalarType::Bool) == "true");
  shlo::Builder b;
  const double data[] = {1, 2, 3, 4, 5, 6};
  auto c = b.constant_data(ScalarType::Int32, {2, 3}, data);
  b.set_results({c});
  CHECK(contains(b.str(), "stablehlo.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>"));
}

TEST_CASE("builder: ill-typed programs are rejected while building", "[pjrt][builder]") {
  shlo::Builder b;
  auto x = b.parameter(ScalarType::Float, {2, 3});
  auto y = b.parameter(ScalarType::Float, {3, 2});
  auto i = b.parameter(ScalarType::Int32, {2, 3});
  CHECK_THROWS_AS(b.add(x, y), ShapeError);
  CHECK_THROWS_AS(b.add(x, i), TypeError);
  CHECK_THROWS_AS(b.exp(i), TypeError);
  CHECK_THROWS_AS(b.unary("frobnicate", x), ValueError);
  CHECK_THROWS_AS(b.binary("and", x, x), TypeError);
  CHECK_THROWS_AS(b.dot_general(x, x, {{}, {}, {1}, {0}}), ShapeError);
  CHECK_THROWS_AS(b.reshape(x, {4, 2}), ShapeError);
  CHECK_THROWS_AS(b.transpose(x, {0, 0}), ShapeError);
  CHECK_THROWS_AS(b.broadcast_in_dim(x, {2, 4}, {0, 1}), ShapeError);
  CHECK_THROWS_AS(b.slice(x, {0, 0}, {3, 3}), ShapeError);
  CHECK_THROWS_AS(b.reduce(x, x, shlo::ReduceOp::Add, {0}), TypeError);
  CHECK_THROWS_AS(b.select(x, x, x), TypeError);
  shlo::Builder other;
  auto foreign = other.parameter(ScalarType::Float, {5});
  CHECK_THROWS_AS(b.negate(foreign), ValueError);
  CHECK_THROWS_AS(b.str(), ValueError);  // no results yet
  auto img = b.parameter(ScalarType::Float, {1, 3, 4, 4});
  auto k = b.parameter(ScalarType::Float, {8, 2, 3, 3});
  CHECK_THROWS_AS(b.convolution(img, k), ShapeError);  // 3 input features vs 2
}
