// tests/ops/test_norm.cpp — the normalization family of the operator library (ops/norm.hpp):
// layer_norm, rms_norm, group_norm, instance_norm, batch_norm on the cpu, every floating dtype.
// References: torch 1.13 values pasted as literals (produced by /usr/bin/python3 with
// torch.layer_norm / group_norm / batch_norm / instance_norm on the tensors written below,
// printed with `[round(v, 6) for v in t.flatten().tolist()]`), and naive float64 loops written
// from the definitions in this file (rms_norm is not in torch 1.13; every dtype). Plus
// non-contiguous inputs, size-1 dims, absent weight/bias, the aten names (ops::call_by_name,
// None for absent optional tensors) and errors naming the op and the operands.
#include <catch2/catch.hpp>  // TEMPLATE_TEST_CASE, CHECK, CHECK_THROWS_AS

#include <cmath>    // std::sqrt, std::fabs
#include <cfloat>   // FLT_EPSILON
#include <string>   // std::string
#include <vector>   // std::vector

#include <torchtpu/core/factories.hpp>  // from_data, rand, Generator
#include <torchtpu/ops/all.hpp>         // ops::call_by_name, ops::Arg
#include <torchtpu/ops/norm.hpp>        // layer_norm, rms_norm, group_norm, instance_norm, batch_norm
#include <torchtpu/ops/operators.hpp>   // * + (test inputs)

#include "testing.hpp"  // optest: vals, check_near, input, per_dtype

using namespace torchtpu;

using optest::check_near;
using optest::input;
using optest::per_dtype;
using optest::vals;

namespace {

/// The relative (and absolute, for results near 0) tolerance of a result of dtype T against a
/// float64 reference computed from the same T inputs: the kernel rounds once, so 1 ulp plus
/// summation-order noise.
template <class T>
double tol() { return per_dtype<T>(1e-12, 1e-6, 1e-3, 8e-3); }

/// Reference: `x` as [rows, n] rows normalized (mean subtracted when `center`), then
/// `* w[j] + b[j]` (empty: absent).
std::vector<double> ref_rows(const std::vector<double>& x, int64_t n, const std::vector<double>& w,
                             const std::vector<double>& b, double eps, bool center = true) {
  std::vector<double> y(x.size());
  for (size_t r = 0; r * n < x.size(); ++r) {
    double mu = 0, ss = 0;
    for (int64_t j = 0; j < n; ++j) mu += x[r * n + j];
    mu = center ? mu / n : 0;
    for (int64_t j = 0; j < n; ++j) ss += (x[r * n + j] - mu) * (x[r * n + j] - mu);
    const double inv = 1 / std::sqrt(ss / n + eps);
    for (int64_t j = 0; j < n; ++j)
      y[r * n + j] = (x[r * n + j] - mu) * inv * (w.empty() ? 1 : w[j]) + (b.empty() ? 0 : b[j]);
  }
  return y;
}

/// Reference: `x: [N, C, S]` normalized per channel with statistics `mean[c]`, `var[c]`, then
/// the per-channel weight and bias.
std::vector<double> ref_channels(const std::vector<double>& x, int64_t N, int64_t C, int64_t S,
                                 const std::vector<double>& mean, const std::vector<double>& var,
                                 const std::vector<double>& w, const std::vector<double>& b, double eps) {
  std::vector<double> y(x.size());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t s = 0; s < S; ++s) {
        const size_t i = size_t((n * C + c) * S + s);
        y[i] = (x[i] - mean[c]) / std::sqrt(var[c] + eps) * (w.empty() ? 1 : w[c]) + (b.empty() ? 0 : b[c]);
      }
  return y;
}

/// Per-channel batch statistics of `x: [N, C, S]` (biased variance).
void batch_stats(const std::vector<double>& x, int64_t N, int64_t C, int64_t S, std::vector<double>& mean,
                 std::vector<double>& var) {
  mean.assign(C, 0);
  var.assign(C, 0);
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t n = 0; n < N; ++n)
      for (int64_t s = 0; s < S; ++s) mean[c] += x[size_t((n * C + c) * S + s)];
    mean[c] /= double(N * S);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t s = 0; s < S; ++s) {
        const double d = x[size_t((n * C + c) * S + s)] - mean[c];
        var[c] += d * d;
      }
    var[c] /= double(N * S);
  }
}

// The torch 1.13 inputs of the literals below (float32): x [2, 3, 4], w4/b4 [4], w3/b3/rm/rv [3].
const std::vector<float> kx = {0.5f, -1.25f, 2.0f, 3.5f, 1.0f, 0.0f, -2.5f, 4.0f, -3.0f, 1.5f, 0.25f, 2.0f,
                               2.0f, 2.5f, -0.5f, 1.0f, 0.75f, -1.0f, 3.0f, -2.0f, 1.25f, 0.5f, -1.5f, 0.0f};
Tensor<float> lit(std::vector<float> v, Dims s) { return from_data(v.data(), s); }

}  // namespace

TEST_CASE("norm ops: torch 1.13 values (float32)", "[ops][norm]") {
  // example-begin layer-norm
  const Tensor<float> x = lit(kx, Dims{2, 3, 4});
  const Tensor<float> w4 = lit({1.5f, -0.5f, 2.0f, 0.25f}, Dims{4}), b4 = lit({0.1f, 0.2f, -0.3f, 0.4f}, Dims{4});
  const Tensor<float> y = layer_norm(x, {4}, w4, b4, 1e-5);  // torch.layer_norm(x, [4], w4, b4, 1e-5)
  // example-end layer-norm
  const double r = 2e-6, a = 2e-6;
  check_near(vals(y), {-0.485194, 0.891593, 0.622123, 0.728063, 0.341572, 0.334207, -2.984138, 0.762359,
                       -2.354999, -0.136961, -0.235817, 0.632663, 1.081977, -0.345543, -3.355039, 0.345446,
                       0.544357, 0.512696, 2.662382, 0.111991, 1.870895, -0.017478, -3.406833, 0.384466}, r, a);
  check_near(vals(layer_norm(x, {3, 4})),
             {-0.080615, -0.927072, 0.644919, 1.370454, 0.16123, -0.32246, -1.531683, 1.612298, -1.773528, 0.403075,
              -0.201537, 0.644919, 0.997691, 1.330255, -0.665127, 0.332564, 0.166282, -0.997691, 1.662818, -1.662818,
              0.498845, 0.0, -1.330255, -0.332564}, r, a);
  // torch.group_norm(x.reshape(2, 6, 2), 3, None, None, 1e-5)
  check_near(vals(group_norm(Tensor<float>(x.reshape(Dims{2, 6, 2})), 3)),
             {-0.390129, -1.383185, 0.461062, 1.312253, 0.161048, -0.268414, -1.342069, 1.449435, -1.636666, 0.673921,
              0.032091, 0.930653, 0.654651, 1.091085, -1.527519, -0.218217, 0.296238, -0.625392, 1.481191, -1.152038,
              1.180597, 0.434957, -1.553417, -0.062137}, r, a);
  const Tensor<float> w3 = lit({2.0f, -1.0f, 0.5f}, Dims{3}), b3 = lit({0.5f, 0.0f, -1.0f}, Dims{3});
  const Tensor<float> rm = lit({0.5f, -0.25f, 1.0f}, Dims{3}), rv = lit({1.5f, 0.5f, 2.0f}, Dims{3});
  // torch.batch_norm(x, w3, b3, rm, rv, False, 0.1, 1e-5, False)
  check_near(vals(batch_norm(x, rm, rv, w3, b3)),
             {0.5, -2.357728, 2.949481, 5.398963, -1.767749, -0.35355, 3.181949, -6.010347, -2.41421, -0.823224,
              -1.265164, -0.646447, 2.949481, 3.765975, -1.132988, 1.316494, -1.414199, 1.06065, -4.596148, 2.474849,
              -0.911612, -1.176776, -1.883881, -1.353552}, r, a);
  // torch.batch_norm(x, w3, None, None, None, True, 0.1, 1e-5, False)
  check_near(vals(batch_norm(x, Tensor<float>(), Tensor<float>(), w3, {}, true)),
             {-0.966973, -3.321344, 1.051058, 3.06909, -0.278002, 0.190212, 1.360747, -1.682645, -1.007277, 0.443202,
              0.040291, 0.604366, 1.051058, 1.723735, -2.312328, -0.294296, -0.160949, 0.658426, -1.214431, 1.12664,
              0.36262, 0.120873, -0.523784, -0.040291}, r, a);
  // torch.instance_norm(x, w3, b3, None, None, True, 0.1, 1e-5, False)
  check_near(vals(instance_norm(x, {}, {}, w3, b3)),
             {-0.280258, -2.26637, 1.422123, 3.124505, -0.161048, 0.268414, 1.342069, -1.449435, -1.818333, -0.663039,
              -0.983954, -0.534673, 1.809302, 2.682171, -2.555039, 0.063566, -0.296238, 0.625392, -1.481191, 1.152037,
              -0.409702, -0.782522, -1.776708, -1.031068}, r, a);
  // bfloat16: torch.layer_norm(x.bfloat16(), [4], w4.bfloat16(), b4.bfloat16(), 1e-5). torch 1.13's bf16 kernel
  // does not round once (element 2: torch 0.628906; the float64 value rounded once to bf16, ours, is 0.621094):
  // within 2 bf16 ulps, and 4e-3 absolute where `* w + b` cancels (element 21: -0.019043 vs -0.017334)
  const Tensor<bfloat16> yb = layer_norm(Tensor<bfloat16>(x.to<bfloat16>()), {4}, Tensor<bfloat16>(w4.to<bfloat16>()),
                                         Tensor<bfloat16>(b4.to<bfloat16>()), 1e-5);
  check_near(vals(yb), {-0.486328, 0.894531, 0.628906, 0.730469, 0.339844, 0.335938, -2.984375, 0.761719,
                        -2.359375, -0.137695, -0.238281, 0.632812, 1.085938, -0.345703, -3.34375, 0.347656,
                        0.546875, 0.511719, 2.671875, 0.112305, 1.882812, -0.019043, -3.421875, 0.384766}, 1.6e-2, 4e-3);
}

TEMPLATE_TEST_CASE("norm ops: every floating dtype against float64 references", "[ops][norm]", float, double, half,
                   bfloat16) {
  using T = TestType;
  const double e = tol<T>();
  const double eps = 1e-5;
  const Tensor<T> x = input<T>({2, 3, 4}, 1), w = input<T>({4}, 2), b = input<T>({4}, 3);
  const std::vector<double> xv = vals(x), wv = vals(w), bv = vals(b);
  SECTION("layer_norm: weight and bias, each alone, none; two dims; non-contiguous; size-1 dims") {
    check_near(vals(layer_norm(x, {4}, w, b)), ref_rows(xv, 4, wv, bv, eps), e, e);
    check_near(vals(layer_norm(x, {4}, w)), ref_rows(xv, 4, wv, {}, eps), e, e);
    check_near(vals(layer_norm(x, {4}, Tensor<T>(), b)), ref_rows(xv, 4, {}, bv, eps), e, e);
    check_near(vals(layer_norm(x, {3, 4}, Tensor<T>(), Tensor<T>(), 0.25)), ref_rows(xv, 12, {}, {}, 0.25), e, e);
    const Tensor<T> xt = x.transpose(0, 2);  // [4, 3, 2], strided
    REQUIRE(!xt.is_contiguous());
    check_near(vals(layer_norm(xt, {2})), ref_rows(vals(xt), 2, {}, {}, eps), e, e);
    const Tensor<T> one = x.reshape(Dims{24, 1});  // one element per row: (x - x) * rsqrt(eps) = 0, + bias
    check_near(vals(layer_norm(one, {1}, Tensor<T>(), Tensor<T>(b.narrow(0, 0, 1)))),
               std::vector<double>(24, vals(b)[0]), e, e);
    CHECK(layer_norm(x, {4}, w, b).dtype() == dtype_of<T>());
  }
  SECTION("rms_norm: default eps (the computation type's epsilon), given eps, weight") {
    const double def = std::is_same_v<T, double> ? DBL_EPSILON : double(FLT_EPSILON);
    check_near(vals(rms_norm(x, {4})), ref_rows(xv, 4, {}, {}, def, false), e, e);
    check_near(vals(rms_norm(x, {3, 4}, Tensor<T>(), 0.5)), ref_rows(xv, 12, {}, {}, 0.5, false), e, e);
    check_near(vals(rms_norm(x, {4}, w, 1e-6)), ref_rows(xv, 4, wv, {}, 1e-6, false), e, e);
  }
  SECTION("group_norm: groups of channels, per-channel weight and bias; non-contiguous") {
    const Tensor<T> g = input<T>({2, 6, 2, 2}, 4), cw = input<T>({6}, 5), cb = input<T>({6}, 6);
    const std::vector<double> gv = vals(g), cwv = vals(cw), cbv = vals(cb);
    // 3 groups of 2 channels: rows of 8 elements, then the per-channel affine
    std::vector<double> want = ref_rows(gv, 8, {}, {}, eps);
    for (size_t i = 0; i < want.size(); ++i) {
      const size_t c = (i / 4) % 6;
      want[i] = want[i] * cwv[c] + cbv[c];
    }
    check_near(vals(group_norm(g, 3, cw, cb)), want, e, e);
    check_near(vals(group_norm(g, 6)), ref_rows(gv, 4, {}, {}, eps), e, e);  // one channel a group
    check_near(vals(group_norm(g, 1)), ref_rows(gv, 24, {}, {}, eps), e, e);
    const Tensor<T> gt = g.transpose(2, 3);
    check_near(vals(group_norm(gt, 2)), ref_rows(vals(gt), 12, {}, {}, eps), e, e);
    const Tensor<T> nc = g.narrow(2, 0, 1).narrow(3, 0, 1).reshape(Dims{2, 6});  // [N, C]: groups of 2 values
    check_near(vals(group_norm(nc, 3)), ref_rows(vals(nc), 2, {}, {}, eps), e, e);
  }
  SECTION("instance_norm and batch_norm: input, batch and running statistics") {
    const Tensor<T> g = input<T>({2, 3, 5}, 7), cw = input<T>({3}, 8), cb = input<T>({3}, 9);
    const Tensor<T> rm = input<T>({3}, 10), rv = input<T>({3}, 11, 0.5, 2.0);
    const std::vector<double> gv = vals(g), cwv = vals(cw), cbv = vals(cb), rmv = vals(rm), rvv = vals(rv);
    std::vector<double> want = ref_rows(gv, 5, {}, {}, eps);  // instance: per (n, c)
    for (size_t i = 0; i < want.size(); ++i) want[i] = want[i] * cwv[(i / 5) % 3] + cbv[(i / 5) % 3];
    check_near(vals(instance_norm(g, {}, {}, cw, cb)), want, e, e);
    check_near(vals(instance_norm(g, rm, rv, cw, cb)), want, e, e);  // running stats unused (and not updated)
    check_near(vals(instance_norm(g, rm, rv, {}, cb, false)), ref_channels(gv, 2, 3, 5, rmv, rvv, {}, cbv, eps), e, e);
    check_near(vals(batch_norm(g, rm, rv, cw, cb)), ref_channels(gv, 2, 3, 5, rmv, rvv, cwv, cbv, eps), e, e);
    check_near(vals(batch_norm(g, rm, rv)), ref_channels(gv, 2, 3, 5, rmv, rvv, {}, {}, eps), e, e);
    std::vector<double> bm, bvar;
    batch_stats(gv, 2, 3, 5, bm, bvar);
    check_near(vals(batch_norm(g, Tensor<T>(), Tensor<T>(), cw, cb, true)), ref_channels(gv, 2, 3, 5, bm, bvar, cwv, cbv, eps),
               e, e);
    check_near(vals(batch_norm(g, rm, rv, {}, {}, true, 0.1, 0.5)), ref_channels(gv, 2, 3, 5, bm, bvar, {}, {}, 0.5), e, e);
    // non-contiguous: channels read through a transpose ([5, 3, 2] viewed from [2, 3, 5])
    const Tensor<T> gt = g.transpose(0, 2);
    std::vector<double> tm, tv;
    batch_stats(vals(gt), 5, 3, 2, tm, tv);
    check_near(vals(batch_norm(gt, Tensor<T>(), Tensor<T>(), {}, {}, true)), ref_channels(vals(gt), 5, 3, 2, tm, tv, {}, {}, eps),
               e, e);
    // size-1 spatial dims and a 2-D [N, C] input
    const Tensor<T> g2 = g.reshape(Dims{2, 3, 1, 5, 1});
    check_near(vals(batch_norm(g2, rm, rv, cw, cb)), ref_channels(gv, 2, 3, 5, rmv, rvv, cwv, cbv, eps), e, e);
    const Tensor<T> flat = g.narrow(2, 0, 1).reshape(Dims{2, 3});
    std::vector<double> fm, fv;
    batch_stats(vals(flat), 2, 3, 1, fm, fv);
    check_near(vals(batch_norm(flat, Tensor<T>(), Tensor<T>(), {}, {}, true)), ref_channels(vals(flat), 2, 3, 1, fm, fv, {}, {}, eps),
               e, e);
  }
  SECTION("run-time typed (AnyTensor) and by aten name, None for absent tensors") {
    const AnyTensor ax(x), aw(w), ab(b);
    check_near(vals(layer_norm(ax, {4}, AnyTensor(), ab).template get<T>()), ref_rows(xv, 4, {}, bv, eps), e, e);
    const std::vector<ops::Arg> args = {ax, std::vector<int64_t>{4}, ops::Arg(), ab, 1e-5, true};
    check_near(vals(ops::call_by_name("aten::layer_norm", args).template get<T>()), ref_rows(xv, 4, {}, bv, eps), e, e);
    const std::vector<ops::Arg> rms = {ax, std::vector<int64_t>{4}, aw};
    const double def = std::is_same_v<T, double> ? DBL_EPSILON : double(FLT_EPSILON);
    check_near(vals(ops::call_by_name("aten::rms_norm", rms).template get<T>()), ref_rows(xv, 4, wv, {}, def, false), e, e);
    const std::vector<ops::Arg> gn = {ax, int64_t(3), ops::Arg(), ops::Arg()};
    check_near(vals(ops::call_by_name("aten::group_norm", gn).template get<T>()), ref_rows(xv, 4, {}, {}, eps), e, e);
    const std::vector<ops::Arg> bn = {ax, ops::Arg(), ops::Arg(), ops::Arg(), ops::Arg(), true, 0.1, 1e-5, true};
    const AnyTensor bt = ops::call_by_name("aten::batch_norm", bn);
    std::vector<double> m, v;
    batch_stats(xv, 2, 3, 4, m, v);
    check_near(vals(bt.template get<T>()), ref_channels(xv, 2, 3, 4, m, v, {}, {}, eps), e, e);
    const std::vector<ops::Arg> in = {ax, ops::Arg(), ops::Arg(), ops::Arg(), ops::Arg(), true, 0.1, 1e-5, true};
    check_near(vals(ops::call_by_name("aten::instance_norm", in).template get<T>()), ref_rows(xv, 4, {}, {}, eps), e, e);
  }
  SECTION("empty tensors") {
    CHECK(layer_norm(Tensor<T>::empty(Dims{0, 4}), {4}).sizes() == Dims{0, 4});
    CHECK(batch_norm(Tensor<T>::empty(Dims{0, 3}), Tensor<T>(), Tensor<T>(), {}, {}, true).sizes() == Dims{0, 3});
    CHECK(group_norm(Tensor<T>::empty(Dims{2, 4, 0}), 2).sizes() == Dims{2, 4, 0});
  }
}

TEST_CASE("norm ops: errors name the op and the operands", "[ops][norm][errors]") {
  const Tensor<float> x = lit(kx, Dims{2, 3, 4});
  auto throws = [](auto f, const std::string& what) {
    try {
      f();
      FAIL("expected an error containing " + what);
    } catch (const Error& e) {
      CHECK_THAT(std::string(e.what()), Catch::Contains(what));
    }
  };
  CHECK_THROWS_AS(layer_norm(x, {3}), ShapeError);
  throws([&] { layer_norm(x, {3}); }, "aten::layer_norm: normalized_shape [3] must be non-empty and equal to the trailing "
                                      "dims of the input (operands [2, 3, 4] float32)");
  throws([&] { layer_norm(x, {}); }, "aten::layer_norm: normalized_shape []");
  throws([&] { layer_norm(x, {2, 3, 4, 5}); }, "normalized_shape [2, 3, 4, 5]");
  CHECK_THROWS_AS(layer_norm(x, {4}, lit({1, 2, 3}, Dims{3})), ShapeError);
  throws([&] { layer_norm(x, {4}, lit({1, 2, 3}, Dims{3})); },
         "aten::layer_norm: expected weight of the shape normalized_shape [4], got [3] (operands [2, 3, 4] float32, [3] float32)");
  throws([&] { rms_norm(x, {3, 4}, lit({1, 2, 3, 4}, Dims{4})); }, "aten::rms_norm: expected weight");
  CHECK_THROWS_AS(group_norm(x, 2), ValueError);
  throws([&] { group_norm(x, 2); }, "aten::group_norm: expected the number of channels 3 to be divisible by num_groups 2 "
                                    "(operands [2, 3, 4] float32)");
  CHECK_THROWS_AS(group_norm(x, 0), ValueError);
  throws([&] { group_norm(x, 3, lit({1, 2}, Dims{2})); }, "aten::group_norm: expected weight to be a vector of 3 elements");
  CHECK_THROWS_AS(group_norm(lit({1, 2}, Dims{2}), 1), ShapeError);
  throws([&] { batch_norm(lit({1, 2}, Dims{2}), Tensor<float>(), Tensor<float>(), {}, {}, true); },
         "aten::batch_norm: expected an input of at least 2 dims [N, C, *], got [2] float32");
  CHECK_THROWS_AS(batch_norm(x, Tensor<float>(), Tensor<float>()), ValueError);
  throws([&] { batch_norm(x, Tensor<float>(), Tensor<float>()); },
         "aten::batch_norm: running_mean and running_var must be defined in evaluation mode");
  throws([&] { batch_norm(x, lit({0, 0, 0, 0}, Dims{4}), lit({1, 1, 1}, Dims{3})); },
         "aten::batch_norm: expected running_mean to be a vector of 3 elements (the channels, dim 1 of the input), got [4]");
  throws([&] { instance_norm(x, {}, {}, {}, {}, false); },
         "aten::instance_norm: expected running_mean and running_var to be defined when use_input_stats is false");
  // integer inputs: torch has no integer normalization
  const Tensor<int32_t> xi = Tensor<int32_t>(x.to<int32_t>());
  CHECK_THROWS_AS(layer_norm(xi, {4}), TypeError);
  throws([&] { layer_norm(AnyTensor(xi), {4}); }, "aten::layer_norm: expected a floating point input");
  throws([&] { batch_norm(AnyTensor(xi), AnyTensor(), AnyTensor(), AnyTensor(), AnyTensor(), true); }, "int32");
  // by name: a missing required argument, an undefined operand passed where None belongs
  CHECK_THROWS_AS(ops::call_by_name("aten::batch_norm", std::vector<ops::Arg>{AnyTensor(x)}), ValueError);
  const std::vector<AnyTensor> bad = {AnyTensor(x), AnyTensor()};
  CHECK_THROWS_AS(ops::call<ops::LayerNormOp>(bad, ops::LayerNormOp::Args{Dims{4}, 1e-5, 1}), ValueError);
}
