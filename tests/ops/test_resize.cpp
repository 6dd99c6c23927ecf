// tests/ops/test_resize.cpp — the resize ops of the operator library (ops/resize.hpp):
// upsample_nearest1d/2d, upsample_linear1d, upsample_bilinear2d and the `interpolate` front end
// on the cpu. References: torch 1.13 values pasted as literals, produced by /usr/bin/python3 with
//   x1 = torch.tensor([[[0.5, -1.25, 2.0, 3.5, 1.0]]])
//   x2 = torch.tensor([[[[0.5, -1.25, 2.0, 3.5, 1.0], [0.0, -2.5, 4.0, -3.0, 1.5],
//                        [0.25, 2.0, 2.0, 2.5, -0.5], [1.0, 0.75, -1.0, 3.0, -2.0]]]])
//   F.interpolate(x, size=... | scale_factor=..., mode=..., align_corners=...) and
//   torch.ops.aten.upsample_nearest2d / upsample_bilinear2d (the plain overloads with scales),
//   printed with [round(v, 6) for v in t.flatten().tolist()]
// (torch.jit.trace of F.interpolate gives the `.vec` overloads, read by ops::call_by_name with
// a float list). Every dtype each op claims (float64 and float16 against the float32 literals
// within their rounding; bfloat16 against torch's bf16 values; uint8 nearest), several
// channels, non-contiguous inputs, an empty batch, errors naming the op and the operand.
#include <catch2/catch.hpp>  // TEMPLATE_TEST_CASE, CHECK, CHECK_THROWS_AS

#include <cmath>   // std::fabs
#include <string>  // std::string
#include <vector>  // std::vector

#include <torchtpu/core/factories.hpp>  // from_data
#include <torchtpu/ops/all.hpp>         // ops::call_by_name, ops::Arg
#include <torchtpu/ops/resize.hpp>      // interpolate, upsample_*

#include "testing.hpp"  // optest: vals, check_near, input, per_dtype

using namespace torchtpu;

using optest::check_near;
using optest::per_dtype;
using optest::vals;

namespace {

/// Tolerance against a float32 literal rounded to 6 decimals: the dtype's rounding of the
/// inputs-exact values (the literal inputs are exact in every floating dtype) and of the result.
template <class T>
double tol() { return per_dtype<T>(2e-6, 2e-6, 2e-3, 1.6e-2); }

const std::vector<float> k1 = {0.5f, -1.25f, 2.0f, 3.5f, 1.0f};
const std::vector<float> k2 = {0.5f, -1.25f, 2.0f, 3.5f, 1.0f, 0.0f, -2.5f, 4.0f, -3.0f, 1.5f,
                               0.25f, 2.0f, 2.0f, 2.5f, -0.5f, 1.0f, 0.75f, -1.0f, 3.0f, -2.0f};

template <class T>
Tensor<T> lit(const std::vector<float>& v, Dims s) {
  const Tensor<float> f = from_data(v.data(), s);
  return Tensor<T>(f.template to<T>());
}

// torch 1.13 results (see the file's header)
const std::vector<double> n1_sf2 = {0.5, 0.5, -1.25, -1.25, 2.0, 2.0, 3.5, 3.5, 1.0, 1.0};
const std::vector<double> n1_sf17 = {0.5, 0.5, -1.25, -1.25, 2.0, 2.0, 3.5, 1.0};
const std::vector<double> n1_size3 = {0.5, -1.25, 3.5};
const std::vector<double> n2_sf = {  // scale_factor=(1.5, 2.5): [6, 12]
    0.5, 0.5, 0.5, -1.25, -1.25, 2.0, 2.0, 2.0, 3.5, 3.5, 1.0, 1.0, 0.5, 0.5, 0.5, -1.25, -1.25, 2.0, 2.0, 2.0,
    3.5, 3.5, 1.0, 1.0, 0.0, 0.0, 0.0, -2.5, -2.5, 4.0, 4.0, 4.0, -3.0, -3.0, 1.5, 1.5, 0.25, 0.25, 0.25, 2.0,
    2.0, 2.0, 2.0, 2.0, 2.5, 2.5, -0.5, -0.5, 0.25, 0.25, 0.25, 2.0, 2.0, 2.0, 2.0, 2.0, 2.5, 2.5, -0.5, -0.5,
    1.0, 1.0, 1.0, 0.75, 0.75, -1.0, -1.0, -1.0, 3.0, 3.0, -2.0, -2.0};
const std::vector<double> n2_size37 = {0.5, 0.5, -1.25, 2.0, 2.0, 3.5, 1.0, 0.0, 0.0, -2.5, 4.0,
                                       4.0, -3.0, 1.5, 0.25, 0.25, 2.0, 2.0, 2.0, 2.5, -0.5};
const std::vector<double> l1_sf17 = {0.5, -0.169118, -1.198529, 0.566177, 2.220588, 3.102941, 2.691176, 1.220588};
const std::vector<double> l1_size8_ac = {0.5, -0.5, -0.785714, 1.071429, 2.428572, 3.285715, 2.428571, 1.0};
const std::vector<double> l1_size3 = {-0.083333, 2.0, 1.833334};
const std::vector<double> b2_sf = {  // scale_factor=(1.5, 1.3), align_corners=False: [6, 6]
    0.5, -0.644231, 0.125, 2.288462, 3.442308, 1.673077, 0.25, -1.139423, 0.1875, 2.471154, 0.355769, 0.980769,
    0.041667, -1.129807, 0.541667, 2.560897, -1.86218, 0.291667, 0.208333, 0.889423, 1.708333, 2.189103, 1.61218,
    0.304487, 0.625, 1.115385, 1.004807, 0.932692, 2.663462, -0.173077, 1.0, 0.836538, 0.009615, -0.230769,
    2.846154, -0.653846};
const std::vector<double> b2_size37_ac = {0.5, -0.666667, -0.166667, 2.0, 3.0, 2.666667, 1.0, 0.125, -0.125, 0.833333, 3.0,
                                          0.833333, 0.0, 0.5, 1.0, 0.833333, 0.166667, -1.0, 1.666667, 1.333333, -2.0};
const std::vector<double> b2_size63 = {-0.083333, 2.0, 1.833334, -0.458333, 3.0, 0.916667, -0.555555, 3.666666, 0.083333,
                                       0.555556, 2.333333, 0.416667, 0.875, 0.5, 0.083334, 0.916667, -1.0, -0.333333};
const std::vector<double> b2_recompute = {  // scale_factor=1.5, recompute_scale_factor=True: [6, 7]
    0.5, -0.5, -0.321428, 2.0, 3.071429, 2.428571, 1.0, 0.25, -0.964286, -0.482143, 3.0, 1.035714, 0.678572, 1.25,
    0.041667, -0.982143, -0.202381, 3.666666, -0.440476, -0.690476, 1.166667, 0.208333, 0.803572, 1.559524, 2.333333,
    1.797619, 0.833333, -0.166667, 0.625, 1.053571, 1.125, 0.5, 2.107143, 1.035714, -1.25, 1.0, 0.857143, 0.25, -1.0,
    1.857143, 0.857142, -2.0};

}  // namespace

TEMPLATE_TEST_CASE("resize ops: torch 1.13 values, every floating dtype", "[ops][resize]", float, double, half, bfloat16) {
  using T = TestType;
  const double e = tol<T>();
  const Tensor<T> x1 = lit<T>(k1, Dims{1, 1, 5}), x2 = lit<T>(k2, Dims{1, 1, 4, 5});
  using V = std::vector<double>;
  SECTION("nearest") {
    // example-begin interpolate
    const Tensor<T> up = interpolate(x2, std::nullopt, V{1.5, 2.5}, "nearest");  // [1, 1, 6, 12]
    // example-end interpolate
    CHECK(up.sizes() == Dims{1, 1, 6, 12});
    check_near(vals(up), n2_sf, 0, 0);
    check_near(vals(interpolate(x1, std::nullopt, V{2.0})), n1_sf2, 0, 0);
    check_near(vals(interpolate(x1, std::nullopt, V{1.7})), n1_sf17, 0, 0);
    check_near(vals(interpolate(x1, Dims{3})), n1_size3, 0, 0);
    check_near(vals(interpolate(x1, std::nullopt, V{0.6})), n1_size3, 0, 0);
    check_near(vals(interpolate(x2, Dims{3, 7})), n2_size37, 0, 0);
    check_near(vals(upsample_nearest2d(x2, {6, 12}, 1.5, 2.5)), n2_sf, 0, 0);  // plain overload with scales
    check_near(vals(upsample_nearest1d(x1, {3})), n1_size3, 0, 0);
  }
  SECTION("linear and bilinear") {
    check_near(vals(interpolate(x1, std::nullopt, V{1.7}, "linear", false)), l1_sf17, e, e);
    check_near(vals(interpolate(x1, Dims{8}, std::nullopt, "linear", true)), l1_size8_ac, e, e);
    check_near(vals(interpolate(x1, Dims{3}, std::nullopt, "linear")), l1_size3, e, e);
    check_near(vals(interpolate(x2, std::nullopt, V{1.5, 1.3}, "bilinear", false)), b2_sf, e, e);
    check_near(vals(interpolate(x2, Dims{3, 7}, std::nullopt, "bilinear", true)), b2_size37_ac, e, e);
    check_near(vals(interpolate(x2, Dims{6, 3}, std::nullopt, "bilinear", false)), b2_size63, e, e);
    check_near(vals(interpolate(x2, std::nullopt, V{1.5}, "bilinear", false, true)), b2_recompute, e, e);
    check_near(vals(interpolate(x2, Dims{1, 1}, std::nullopt, "bilinear", true)), {0.5}, e, e);
    check_near(vals(interpolate(x2, Dims{1, 1}, std::nullopt, "bilinear", false)), {3.0}, e, e);
    check_near(vals(upsample_bilinear2d(x2, {6, 6}, false, 1.5, 1.3)), b2_sf, e, e);  // plain overload
    check_near(vals(upsample_linear1d(x1, {8}, true)), l1_size8_ac, e, e);
    // equal sizes copy
    check_near(vals(interpolate(x2, Dims{4, 5}, std::nullopt, "bilinear", false)), vals(x2), 0, 0);
  }
  SECTION("several channels and a batch; non-contiguous input; empty batch") {
    // [2, 3, 4, 5]: each (n, c) plane is x2 times (1 + n + c)
    std::vector<float> big;
    for (int p = 0; p < 6; ++p)
      for (float v : k2) big.push_back(v * float(1 + p / 3 + p % 3));
    const Tensor<T> xb = lit<T>(big, Dims{2, 3, 4, 5});
    const Tensor<T> yb = interpolate(xb, std::nullopt, V{1.5, 1.3}, "bilinear", false);
    CHECK(yb.sizes() == Dims{2, 3, 6, 6});
    const std::vector<double> got = vals(yb);
    for (int p = 0; p < 6; ++p) {
      std::vector<double> plane(got.begin() + p * 36, got.begin() + (p + 1) * 36), want = b2_sf;
      for (double& w : want) w *= double(1 + p / 3 + p % 3);
      check_near(plane, want, e, 4 * e);
    }
    // a transposed input: [1, 1, 5, 4] viewed from [1, 1, 4, 5]
    const Tensor<T> xt = x2.transpose(2, 3);
    REQUIRE(!xt.is_contiguous());
    const Tensor<T> yt = interpolate(xt, Dims{7, 3}, std::nullopt, "bilinear", true);
    check_near(vals(Tensor<T>(yt.transpose(2, 3))), b2_size37_ac, e, e);
    check_near(vals(Tensor<T>(interpolate(xt, Dims{12, 6}).transpose(2, 3))), n2_sf, 0, 0);
    CHECK(interpolate(Tensor<T>::empty(Dims{0, 2, 3, 3}), std::nullopt, V{2.0}).sizes() == Dims{0, 2, 6, 6});
    CHECK(interpolate(Tensor<T>::empty(Dims{0, 2, 3}), Dims{5}, std::nullopt, "linear").sizes() == Dims{0, 2, 5});
  }
  SECTION("run-time typed and by aten name: both overloads") {
    const AnyTensor a2(x2), a1(x1);
    check_near(vals(interpolate(a2, std::nullopt, V{1.5, 1.3}, "bilinear", false).template get<T>()), b2_sf, e, e);
    // .vec (what F.interpolate traces to): (input, output_size, [align_corners,] scale_factors)
    const std::vector<ops::Arg> nv = {a2, ops::Arg(), V{1.5, 2.5}};
    check_near(vals(ops::call_by_name("aten::upsample_nearest2d", nv).template get<T>()), n2_sf, 0, 0);
    const std::vector<ops::Arg> nvs = {a2, std::vector<int64_t>{3, 7}, ops::Arg()};
    check_near(vals(ops::call_by_name("aten::upsample_nearest2d", nvs).template get<T>()), n2_size37, 0, 0);
    const std::vector<ops::Arg> bv = {a2, ops::Arg(), false, V{1.5, 1.3}};
    check_near(vals(ops::call_by_name("aten::upsample_bilinear2d", bv).template get<T>()), b2_sf, e, e);
    const std::vector<ops::Arg> lv = {a1, std::vector<int64_t>{8}, true, ops::Arg()};
    check_near(vals(ops::call_by_name("aten::upsample_linear1d", lv).template get<T>()), l1_size8_ac, e, e);
    const std::vector<ops::Arg> n1v = {a1, ops::Arg(), V{1.7}};
    check_near(vals(ops::call_by_name("aten::upsample_nearest1d", n1v).template get<T>()), n1_sf17, 0, 0);
    // plain: (self, output_size, [align_corners,] scales...)
    const std::vector<ops::Arg> np = {a2, std::vector<int64_t>{6, 12}, 1.5, 2.5};
    check_near(vals(ops::call_by_name("aten::upsample_nearest2d", np).template get<T>()), n2_sf, 0, 0);
    const std::vector<ops::Arg> bp = {a2, std::vector<int64_t>{6, 6}, false, 1.5, 1.3};
    check_near(vals(ops::call_by_name("aten::upsample_bilinear2d", bp).template get<T>()), b2_sf, e, e);
  }
}

TEST_CASE("resize ops: torch's bfloat16 and uint8 values", "[ops][resize]") {
  // torch 1.13: F.interpolate(x2.bfloat16(), scale_factor=(1.5, 1.3), mode='bilinear', align_corners=False). torch's
  // bf16 kernel rounds the weights and each step to bf16; ours computes in float32 and rounds once: within 2 bf16
  // ulps, and 3e-2 absolute where the sum cancels (element 34: torch 2.859375, ours nearer float32's 2.846154)
  const std::vector<double> tb = {
      0.5, -0.648438, 0.125, 2.28125, 3.4375, 1.664062, 0.25, -1.140625, 0.1875, 2.46875, 0.357422, 0.984375,
      0.04248, -1.117188, 0.550781, 2.546875, -1.84375, 0.304688, 0.208984, 0.898438, 1.710938, 2.1875, 1.632812,
      0.298828, 0.632812, 1.109375, 0.992188, 0.917969, 2.671875, -0.195312, 1.0, 0.835938, 0.009033, -0.226562,
      2.859375, -0.675781};
  const Tensor<bfloat16> xb = lit<bfloat16>(k2, Dims{1, 1, 4, 5});
  check_near(vals(interpolate(xb, std::nullopt, std::vector<double>{1.5, 1.3}, "bilinear", false)), tb, 1.6e-2, 3e-2);
  // torch 1.13: F.interpolate(torch.arange(20, dtype=torch.uint8).reshape(1, 1, 4, 5), scale_factor=(1.5, 2.5))
  std::vector<uint8_t> u(20);
  for (int i = 0; i < 20; ++i) u[size_t(i)] = uint8_t(i);
  const Tensor<uint8_t> xu = from_data(u.data(), Dims{1, 1, 4, 5});
  const Tensor<uint8_t> yu = interpolate(xu, std::nullopt, std::vector<double>{1.5, 2.5});
  check_near(vals(yu), {0,  0,  0,  1,  1,  2,  2,  2,  3,  3,  4,  4,  0,  0,  0,  1,  1,  2,  2,  2,  3,  3,  4,  4,
                        5,  5,  5,  6,  6,  7,  7,  7,  8,  8,  9,  9,  10, 10, 10, 11, 11, 12, 12, 12, 13, 13, 14, 14,
                        10, 10, 10, 11, 11, 12, 12, 12, 13, 13, 14, 14, 15, 15, 15, 16, 16, 17, 17, 17, 18, 18, 19, 19},
             0, 0);
  CHECK(upsample_nearest1d(Tensor<uint8_t>(xu.reshape(Dims{1, 4, 5})), {10}).sizes() == Dims{1, 4, 10});
}

TEST_CASE("resize ops: errors name the op and the operand", "[ops][resize][errors]") {
  const Tensor<float> x2 = lit<float>(k2, Dims{1, 1, 4, 5}), x1 = lit<float>(k1, Dims{1, 1, 5});
  auto throws = [](auto f, const std::string& what) {
    try {
      f();
      FAIL("expected an error containing " + what);
    } catch (const Error& e) {
      CHECK_THAT(std::string(e.what()), Catch::Contains(what));
    }
  };
  using V = std::vector<double>;
  // the ops
  CHECK_THROWS_AS(upsample_nearest2d(x1, {3, 3}), ShapeError);
  throws([&] { upsample_nearest2d(x1, {3, 3}); }, "aten::upsample_nearest2d: expected a 4-D input [N, C, H, W] (operands [1, 1, 5] float32)");
  CHECK_THROWS_AS(upsample_nearest2d(x2, {3}), ValueError);
  throws([&] { upsample_nearest2d(x2, {3}); }, "aten::upsample_nearest2d: expected 2 output sizes, got 1");
  CHECK_THROWS_AS(upsample_bilinear2d(x2, {0, 3}, false), ValueError);
  throws([&] { upsample_bilinear2d(x2, {0, 3}, false); }, "aten::upsample_bilinear2d: output sizes must be greater than 0, got 0");
  throws([&] { upsample_linear1d(Tensor<float>::empty(Dims{1, 2, 0}), {3}, false); },
         "aten::upsample_linear1d: expected a non-empty input (only N may be 0) (operands [1, 2, 0] float32)");
  const Tensor<uint8_t> xu = Tensor<uint8_t>(x2.to<uint8_t>());
  CHECK_THROWS_AS(upsample_bilinear2d(xu, {3, 3}, false), TypeError);
  throws([&] { upsample_bilinear2d(AnyTensor(xu), {3, 3}, false); }, "aten::upsample_bilinear2d: expected a floating point input, got uint8");
  const Tensor<int32_t> xi = Tensor<int32_t>(x2.to<int32_t>());
  CHECK_THROWS_AS(upsample_nearest2d(xi, {3, 3}), TypeError);
  throws([&] { upsample_nearest2d(xi, {3, 3}); }, "expected a floating point input or uint8, got int32");
  // the .vec overload by name: exactly one of output_size and scale_factors, their lengths
  const std::vector<ops::Arg> both = {AnyTensor(x2), std::vector<int64_t>{3, 3}, V{2.0, 2.0}};
  CHECK_THROWS_AS(ops::call_by_name("aten::upsample_nearest2d", both), ValueError);
  throws([&] { ops::call_by_name("aten::upsample_nearest2d", both); },
         "aten::upsample_nearest2d: must specify exactly one of output_size and scale_factors");
  const std::vector<ops::Arg> neither = {AnyTensor(x2), ops::Arg(), ops::Arg()};
  CHECK_THROWS_AS(ops::call_by_name("aten::upsample_nearest2d", neither), ValueError);
  const std::vector<ops::Arg> one = {AnyTensor(x2), ops::Arg(), false, V{2.0}};
  throws([&] { ops::call_by_name("aten::upsample_bilinear2d", one); }, "expected 2 scale factors, got 1");
  const std::vector<ops::Arg> neg = {AnyTensor(x1), ops::Arg(), V{-1.0}};
  CHECK_THROWS_AS(ops::call_by_name("aten::upsample_nearest1d", neg), ValueError);
  // interpolate
  CHECK_THROWS_AS(interpolate(x2, Dims{3, 3}, std::nullopt, "area"), ValueError);
  throws([&] { interpolate(x2, Dims{3, 3}, std::nullopt, "area"); }, "interpolate: input [1, 1, 4, 5], mode 'area': mode is not supported");
  CHECK_THROWS_AS(interpolate(x1, Dims{3}, std::nullopt, "bicubic"), ShapeError);
  CHECK_THROWS_AS(interpolate(x2, Dims{3, 3}, V{2.0}), ValueError);
  CHECK_THROWS_AS(interpolate(x2, std::nullopt), ValueError);
  CHECK_THROWS_AS(interpolate(x2, Dims{3, 3}, std::nullopt, "nearest", true), ValueError);
  CHECK_THROWS_AS(interpolate(x1, Dims{3, 3}, std::nullopt, "bilinear"), ShapeError);
  throws([&] { interpolate(x2, Dims{3}, std::nullopt, "linear"); }, "expected a 3-D input");
}

TEST_CASE("upsample_bicubic2d / interpolate(mode='bicubic'): torch 1.13 values", "[ops][resize]") {
  // x = (arange(12.) ** 2 % 7).reshape(1, 1, 3, 4); F.interpolate(x, (5, 6), mode='bicubic',
  // align_corners=False / True) and (2, 3) (downsampling), printed with 7 digits
  std::vector<double> xv;
  for (int i = 0; i < 12; ++i) xv.push_back((i * i) % 7);
  const Tensor<float> x = optest::make<float>(xv, Dims{1, 1, 3, 4});
  const std::vector<double> up = {-0.2704722, -0.07524984, 1.340083, 3.972417, 3.57525, 2.010056, 0.7337644, 1.449751, 2.393584,
                                  2.846916, 1.978249, 0.9338197, 1.826389, 3.28125, 3.760417, 1.552084, 0.21875, -0.08680522,
                                  1.299014, 3.138375, 4.04975, 1.874751, 0.9736257, 1.05257, 0.6352503, 2.6305, 3.993825, 2.414676,
                                  1.9655, 2.200334};
  const std::vector<double> up_ac = {0, 0.2879999, 1.672001, 3.688001, 3.548, 2.000001, 1.09375, 1.9645, 2.65675, 2.6095,
                                     1.777749, 0.8125005, 2, 3.548, 3.688, 1.671999, 0.2879988, 2.384186e-07, 1.6875, 3.605625,
                                     4.001, 1.859, 0.730374, 0.8125002, 1, 3.052, 3.936, 2.424, 1.783999, 2};
  const std::vector<double> down = {0.6313974, 2.763672, 1.764002, 1.742278, 3.167969, 1.461717};
  const double e = 4e-6;
  check_near(vals(interpolate(x, Dims{5, 6}, std::nullopt, "bicubic", false)), up, e, e);
  check_near(vals(interpolate(x, Dims{5, 6}, std::nullopt, "bicubic", true)), up_ac, e, e);
  check_near(vals(interpolate(x, Dims{2, 3}, std::nullopt, "bicubic")), down, e, e);
  const std::vector<ops::Arg> a = {AnyTensor(Tensor<double>(x.to<double>())), std::vector<int64_t>{5, 6}, false, ops::Arg(),
                                   ops::Arg()};
  check_near(vals(ops::call_by_name("aten::upsample_bicubic2d", a).get<double>()), up, e, e);
  check_near(vals(interpolate(x, Dims{3, 4}, std::nullopt, "bicubic")), xv, 0, 0);  // equal sizes copy
}
