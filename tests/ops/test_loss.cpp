// tests/ops/test_loss.cpp — the nn family of the operator library (ops/loss.hpp): log_softmax,
// mse_loss, nll_loss / nll_loss_nd, cross_entropy_loss, dropout (and its Philox stream),
// pixel_shuffle / pixel_unshuffle, embedding_bag on the cpu, every dtype each op claims.
// References: torch 1.13 values pasted as literals, produced by /usr/bin/python3 on the float64
// tensors written below (inputs are multiples of 0.25, exact in every floating dtype), printed
// with `[round(v, 9) for v in t.flatten().tolist()]`:
//
//   X = torch.tensor([[0.5, -1.25, 2.0, 0.75, -0.5], [1.5, 0.25, -2.0, 1.0, 3.0],
//                     [-1.0, 0.0, 0.5, -2.5, 1.25]], dtype=torch.float64)
//   t = torch.tensor([1, 0, 4]); w = torch.tensor([0.5, 1.0, 2.0, 1.5, 0.25], dtype=torch.float64)
//   F.nll_loss(X, t, weight=w, reduction=red), F.cross_entropy(X, t, ..., label_smoothing=0.2), ...
//   (each call is written next to its literal). Plus the aten names (ops::call_by_name), empty
// tensors, dropout statistics and reproducibility, and errors naming the op and the operands.
#include <catch2/catch.hpp>  // TEST_CASE, TEMPLATE_TEST_CASE, CHECK, CHECK_THROWS_AS

#include <cmath>    // std::fabs, std::sqrt, std::isnan
#include <string>   // std::string
#include <vector>   // std::vector

#include <torchtpu/core/factories.hpp>  // from_data, rand, Generator
#include <torchtpu/ops/all.hpp>         // ops::call_by_name, ops::Arg
#include <torchtpu/ops/loss.hpp>        // the ops under test
#include <torchtpu/ops/operators.hpp>   // * + (test inputs)

#include "testing.hpp"  // optest: vals, check_near, input, per_dtype

using namespace torchtpu;
using Catch::Matchers::Contains;

using optest::check_near;
using optest::per_dtype;
using optest::vals;

namespace {

/// Relative and absolute tolerance of a result of dtype T against float64 torch values on the
/// same (exact) inputs: the kernels compute in float64 (or float32 for 16-bit log_softmax) and
/// round once.
template <class T>
double tol() { return per_dtype<T>(1e-9, 2e-6, 1e-3, 8e-3); }

/// A tensor of dtype T with values `v` (row-major) and shape `s`.
template <class T>
Tensor<T> lit(std::vector<double> v, Dims s) {
  return Tensor<T>(from_data(v.data(), s).template to<T>());
}
Tensor<int64_t> ilit(std::vector<int64_t> v, Dims s) { return from_data(v.data(), s); }

const std::vector<double> kX = {0.5, -1.25, 2.0, 0.75, -0.5, 1.5, 0.25, -2.0, 1.0, 3.0, -1.0, 0.0, 0.5, -2.5, 1.25};
const std::vector<double> kW = {0.5, 1.0, 2.0, 1.5, 0.25};
// torch.softmax(X.flip(0) * 0.5, 1): the probability targets
const std::vector<double> kP = {0.120216803, 0.198204001, 0.254498975, 0.056786397, 0.370293824,
                                0.217162992, 0.116238973, 0.037737269, 0.169126708, 0.459734057,
                                0.189625903, 0.079047837, 0.401438039, 0.214874298, 0.115013924};

}  // namespace

TEMPLATE_TEST_CASE("log_softmax: torch 1.13 values, every floating dtype", "[ops][loss]", float, double, half, bfloat16) {
  using T = TestType;
  const double e = tol<T>();
  const AnyTensor x(lit<T>(kX, Dims{3, 5}));
  // torch.log_softmax(X, 1), torch.log_softmax(X, 0)
  check_near(vals(log_softmax(x, 1).template get<T>()),
             {-1.988883137, -3.738883137, -0.488883137, -1.738883137, -2.988883137, -1.857066743, -3.107066743,
              -5.357066743, -2.357066743, -0.357066743, -2.885405943, -1.885405943, -1.385405943, -4.385405943,
              -0.635405943}, e, e);
  check_near(vals(log_softmax(x, 0).template get<T>()),
             {-1.371539032, -2.194112186, -0.216276667, -0.842773193, -3.685625532, -0.371539032, -0.694112186,
              -4.216276667, -0.592773193, -0.185625532, -2.871539032, -0.944112186, -1.716276667, -4.092773193,
              -1.935625532}, e, e);
  // the aten name (dtype None), a transposed operand, dtype given
  const std::vector<ops::Arg> args = {AnyTensor(lit<T>(kX, Dims{3, 5}).t()), int64_t(0), ops::Arg()};
  CHECK(vals(ops::call_by_name("aten::log_softmax", args).template get<T>()) ==
        vals(Tensor<T>(Tensor<T>(log_softmax(lit<T>(kX, Dims{3, 5}), 1)).t())));
  const AnyTensor d = log_softmax(x, -1, ScalarType::Double);
  CHECK(d.dtype() == ScalarType::Double);
  // 0-dim and empty
  CHECK(vals(log_softmax(AnyTensor(lit<T>({2.5}, Dims{})), 0).template get<T>()) == std::vector<double>{0.0});
  CHECK(log_softmax(AnyTensor(Tensor<T>::empty(Dims{0, 3})), 1).sizes() == Dims{0, 3});
}

TEST_CASE("log_softmax: dtype argument and errors", "[ops][loss]") {
  const AnyTensor xi(Tensor<int64_t>(ilit({1, 2, 3}, Dims{3})));
  // torch.log_softmax(torch.tensor([1, 2, 3]), 0, dtype=torch.float64)
  check_near(vals(log_softmax(xi, 0, ScalarType::Double).get<double>()), {-2.407605964, -1.407605964, -0.407605964}, 1e-9, 1e-9);
  CHECK_THROWS_AS(log_softmax(xi, 0), TypeError);
  CHECK_THROWS_WITH(log_softmax(xi, 0), Contains("aten::log_softmax") && Contains("int64"));
  CHECK_THROWS_AS(log_softmax(AnyTensor(lit<float>(kX, Dims{3, 5})), 2), IndexError);
  const std::vector<ops::Arg> args = {xi, int64_t(0), int64_t(7)};  // ScalarType code 7: float64
  CHECK(ops::call_by_name("aten::log_softmax", args).dtype() == ScalarType::Double);
}

TEMPLATE_TEST_CASE("mse_loss: torch 1.13 values, broadcasting, every floating dtype", "[ops][loss]", float, double, half,
                   bfloat16) {
  using T = TestType;
  const double e = tol<T>();
  // A = [[0.5], [-1.5]], B = [1.0, 0.25, -2.0]; F.mse_loss(A.expand(2, 3), B.expand(2, 3), reduction=...)
  const Tensor<T> a = lit<T>({0.5, -1.5}, Dims{2, 1}), b = lit<T>({1.0, 0.25, -2.0}, Dims{3});
  check_near(vals(mse_loss(a, b, Reduction::None)), {0.25, 0.0625, 6.25, 6.25, 3.0625, 0.25}, e, e);
  check_near(vals(mse_loss(a, b)), {2.6875}, e, e);
  check_near(vals(mse_loss(a, b, Reduction::Sum)), {16.125}, e, e);
  CHECK(mse_loss(a, b).sizes() == Dims{});
  const std::vector<ops::Arg> args = {AnyTensor(a), AnyTensor(b), int64_t(2)};
  check_near(vals(ops::call_by_name("aten::mse_loss", args).template get<T>()), {16.125}, e, e);
  // empty: none keeps the shape, mean is NaN, sum 0
  const Tensor<T> z = Tensor<T>::empty(Dims{0, 2});
  CHECK(mse_loss(z, z, Reduction::None).sizes() == Dims{0, 2});
  CHECK(std::isnan(vals(mse_loss(z, z))[0]));
  CHECK(vals(mse_loss(z, z, Reduction::Sum))[0] == 0.0);
}

TEST_CASE("mse_loss: result dtypes and errors", "[ops][loss]") {
  const AnyTensor f(lit<float>({1.0, 2.0}, Dims{2})), d(lit<double>({0.5, 0.5}, Dims{2})), i(ilit({1, 1}, Dims{2}));
  CHECK(mse_loss(f, d).dtype() == ScalarType::Double);  // torch.result_type
  CHECK(mse_loss(f, i).dtype() == ScalarType::Float);
  check_near(vals(mse_loss(f, i).get<float>()), {0.5}, 1e-7, 0);
  CHECK_THROWS_AS(mse_loss(i, i), TypeError);
  CHECK_THROWS_AS(mse_loss(f, AnyTensor(lit<float>({1, 2, 3}, Dims{3}))), ShapeError);
  CHECK_THROWS_WITH(mse_loss(f, AnyTensor(lit<float>({1, 2, 3}, Dims{3}))), Contains("aten::mse_loss") && Contains("[3]"));
  const std::vector<ops::Arg> bad = {f, f, int64_t(3)};
  CHECK_THROWS_AS(ops::call_by_name("aten::mse_loss", bad), ValueError);
}

TEMPLATE_TEST_CASE("nll_loss and cross_entropy (class indices): torch 1.13 values, every floating dtype", "[ops][loss]",
                   float, double, half, bfloat16) {
  using T = TestType;
  const double e = tol<T>();
  const Tensor<T> x = lit<T>(kX, Dims{3, 5}), w = lit<T>(kW, Dims{5});
  const Tensor<int64_t> t = ilit({1, 0, 4}, Dims{3}), tig = ilit({1, -100, 4}, Dims{3}), tls = ilit({1, 2, -100}, Dims{3});
  // F.nll_loss(X, t, reduction=...), with weight=w, with target [1, -100, 4] and weight
  check_near(vals(nll_loss(x, t, {}, Reduction::None)), {1.25, -1.5, -1.25}, e, e);
  check_near(vals(nll_loss(x, t)), {-0.5}, e, e);
  check_near(vals(nll_loss(x, t, {}, Reduction::Sum)), {-1.5}, e, e);
  check_near(vals(nll_loss(x, t, w, Reduction::None)), {1.25, -0.75, -0.3125}, e, e);
  check_near(vals(nll_loss(x, t, w)), {0.107142857}, e, e);
  check_near(vals(nll_loss(x, t, w, Reduction::Sum)), {0.1875}, e, e);
  check_near(vals(nll_loss(x, tig, w, Reduction::None)), {1.25, 0.0, -0.3125}, e, e);
  check_near(vals(nll_loss(x, tig, w)), {0.75}, e, e);
  check_near(vals(nll_loss(x, tig, w, Reduction::Sum)), {0.9375}, e, e);
  // F.cross_entropy(X, t, ...), weight, label_smoothing=0.2 with target [1, 2, -100] (and weight)
  check_near(vals(cross_entropy(x, t, {}, Reduction::None)), {3.738883137, 1.857066743, 0.635405943}, e, e);
  check_near(vals(cross_entropy(x, t)), {2.077118608}, e, e);
  check_near(vals(cross_entropy(x, t, {}, Reduction::Sum)), {6.231355823}, e, e);
  check_near(vals(cross_entropy(x, t, w, Reduction::None)), {3.738883137, 0.928533372, 0.158851486}, e, e);
  check_near(vals(cross_entropy(x, t, w)), {2.757867425}, e, e);
  check_near(vals(cross_entropy(x, t, w, Reduction::Sum)), {4.826267994}, e, e);
  check_near(vals(cross_entropy(x, tls, {}, Reduction::None, -100, 0.2)), {3.428883137, 4.807066743, 0.0}, e, e);
  check_near(vals(cross_entropy(x, tls, {}, Reduction::Mean, -100, 0.2)), {4.11797494}, e, e);
  check_near(vals(cross_entropy(x, tls, {}, Reduction::Sum, -100, 0.2)), {8.23594988}, e, e);
  check_near(vals(cross_entropy(x, tls, w, Reduction::None, -100, 0.2)), {3.353771968, 9.306290805, 0.0}, e, e);
  check_near(vals(cross_entropy(x, tls, w, Reduction::Mean, -100, 0.2)), {4.220020924}, e, e);
  check_near(vals(cross_entropy(x, tls, w, Reduction::Sum, -100, 0.2)), {12.660062773}, e, e);
  // [N, C, d]: X3 = torch.arange(12.).reshape(2, 3, 2) * 0.25 - 1.5, t3 = [[0, 2], [1, -100]]
  const Tensor<T> x3 = lit<T>({-1.5, -1.25, -1.0, -0.75, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0, 1.25}, Dims{2, 3, 2});
  const Tensor<int64_t> t3 = ilit({0, 2, 1, -100}, Dims{2, 2});
  check_near(vals(nll_loss(x3, t3, {}, Reduction::None)), {1.5, 0.25, -0.5, 0.0}, e, e);
  check_near(vals(nll_loss(x3, t3)), {0.416666667}, e, e);
  check_near(vals(cross_entropy(x3, t3, {}, Reduction::None)), {1.680269671, 0.680269671, 1.180269671, 0.0}, e, e);
  check_near(vals(cross_entropy(x3, t3, {}, Reduction::Mean, -100, 0.3)), {1.180269671}, e, e);
  // [C] input, 0-dim target: F.nll_loss(X[0], torch.tensor(3)), F.cross_entropy(X[0], torch.tensor(3))
  const Tensor<T> x1 = lit<T>({0.5, -1.25, 2.0, 0.75, -0.5}, Dims{5});
  check_near(vals(nll_loss(x1, ilit({3}, Dims{}))), {-0.75}, e, e);
  check_near(vals(cross_entropy(x1, ilit({3}, Dims{}))), {1.738883137}, e, e);
  CHECK(cross_entropy(x1, ilit({3}, Dims{}), {}, Reduction::None).sizes() == Dims{});
  // the aten names: nll_loss (2-D), nll_loss_nd, cross_entropy_loss with weight None
  const std::vector<ops::Arg> nl = {AnyTensor(x), AnyTensor(t), AnyTensor(w), int64_t(2), int64_t(-100)};
  check_near(vals(ops::call_by_name("aten::nll_loss", nl).template get<T>()), {0.1875}, e, e);
  check_near(vals(ops::call_by_name("aten::nll_loss_nd", nl).template get<T>()), {0.1875}, e, e);
  const std::vector<ops::Arg> ce = {AnyTensor(x), AnyTensor(t), ops::Arg(), int64_t(1), int64_t(-100), 0.0};
  check_near(vals(ops::call_by_name("aten::cross_entropy_loss", ce).template get<T>()), {2.077118608}, e, e);
  // ignore_index inside [0, C): those targets are skipped
  check_near(vals(nll_loss(x, t, {}, Reduction::Sum, 0)), {1.25 - 1.25}, e, e);
  // every target ignored: mean is 0/0 = NaN, as torch
  CHECK(std::isnan(vals(nll_loss(x, ilit({-100, -100, -100}, Dims{3})))[0]));
  // empty batch: none gives [0], mean NaN
  CHECK(nll_loss(Tensor<T>::empty(Dims{0, 5}), Tensor<int64_t>::empty(Dims{0}), {}, Reduction::None).sizes() == Dims{0});
  CHECK(std::isnan(vals(cross_entropy(Tensor<T>::empty(Dims{0, 5}), Tensor<int64_t>::empty(Dims{0})))[0]));
}

TEMPLATE_TEST_CASE("cross_entropy (probability targets): torch 1.13 values", "[ops][loss]", float, double) {
  using T = TestType;
  const double e = std::is_same_v<T, double> ? 1e-8 : 2e-6;  // kP has 9 decimals
  const Tensor<T> x = lit<T>(kX, Dims{3, 5}), w = lit<T>(kW, Dims{5}), p = lit<T>(kP, Dims{3, 5});
  // P = torch.softmax(X.flip(0) * 0.5, 1); F.cross_entropy(X, P, reduction=...),
  // F.cross_entropy(X, P, weight=w, reduction=..., label_smoothing=0.1)
  check_near(vals(cross_entropy(x, p, {}, Reduction::None)), {2.3100889, 1.529408171, 2.267731167}, e, e);
  check_near(vals(cross_entropy(x, p)), {2.035742746}, e, e);
  check_near(vals(cross_entropy(x, p, {}, Reduction::Sum)), {6.107228238}, e, e);
  check_near(vals(cross_entropy(x, p, w, Reduction::None, -100, 0.1)), {1.5621661, 1.813009746, 2.926708989}, e, e);
  check_near(vals(cross_entropy(x, p, w, Reduction::Mean, -100, 0.1)), {2.100628278}, e, e);
  check_near(vals(cross_entropy(x, p, w, Reduction::Sum, -100, 0.1)), {6.301884835}, e, e);
  // run-time typed, float32 scores with float64 probabilities: their common dtype
  const AnyTensor r = cross_entropy(AnyTensor(lit<float>(kX, Dims{3, 5})), AnyTensor(lit<double>(kP, Dims{3, 5})));
  CHECK(r.dtype() == ScalarType::Double);
}

TEMPLATE_TEST_CASE("cross_entropy (probability targets): 16-bit dtypes against float64 on the same rounded inputs",
                   "[ops][loss]", half, bfloat16) {
  using T = TestType;
  const Tensor<T> x = lit<T>(kX, Dims{3, 5}), w = lit<T>(kW, Dims{5}), p = lit<T>(kP, Dims{3, 5});
  const Tensor<double> xd(x.template to<double>()), wd(w.template to<double>()), pd(p.template to<double>());
  const double e = tol<T>();
  check_near(vals(cross_entropy(x, p, w, Reduction::None, -100, 0.1)), vals(cross_entropy(xd, pd, wd, Reduction::None, -100, 0.1)), e, e);
  check_near(vals(cross_entropy(x, p)), vals(cross_entropy(xd, pd)), e, e);
}

TEST_CASE("nll_loss and cross_entropy: errors name the op and the operands", "[ops][loss]") {
  const Tensor<float> x = lit<float>(kX, Dims{3, 5});
  const Tensor<int64_t> t = ilit({1, 0, 4}, Dims{3});
  // a target out of range (torch: IndexError "Target 5 is out of bounds.")
  CHECK_THROWS_AS(nll_loss(x, ilit({1, 5, 0}, Dims{3})), IndexError);
  CHECK_THROWS_WITH(nll_loss(x, ilit({1, 5, 0}, Dims{3})), Contains("aten::nll_loss_nd") && Contains("target 5"));
  CHECK_THROWS_AS(cross_entropy(x, ilit({1, -1, 0}, Dims{3})), IndexError);
  CHECK_THROWS_WITH(cross_entropy(x, ilit({1, -1, 0}, Dims{3}), {}, Reduction::Mean, -100, 0.1),
                    Contains("aten::cross_entropy_loss"));
  // target dtype: int32 (torch: "expected scalar type Long but found Int")
  const AnyTensor ax(x), t32(Tensor<int32_t>(t.to<int32_t>()));
  CHECK_THROWS_AS(nll_loss(ax, t32), TypeError);
  CHECK_THROWS_WITH(nll_loss(ax, t32), Contains("int32") && Contains("[3, 5] float32"));
  // batch size, target shape, weight size
  CHECK_THROWS_AS(nll_loss(x, ilit({1, 0, 4, 1}, Dims{4})), ValueError);
  CHECK_THROWS_AS(nll_loss(Tensor<float>(x.reshape(Dims{3, 5, 1})), ilit({1, 0, 4}, Dims{3})), ShapeError);
  CHECK_THROWS_AS(nll_loss(x, t, lit<float>({1, 1, 1, 1}, Dims{4})), ShapeError);
  CHECK_THROWS_WITH(cross_entropy(x, t, lit<float>({1, 1, 1, 1}, Dims{4})), Contains("weight") && Contains("[4] float32"));
  // integer scores; probability targets that are not floating; ignore_index with probabilities
  CHECK_THROWS_AS(nll_loss(AnyTensor(Tensor<int64_t>(x.to<int64_t>())), AnyTensor(t)), TypeError);
  CHECK_THROWS_AS(cross_entropy(ax, AnyTensor(Tensor<int64_t>(x.to<int64_t>()))), TypeError);
  CHECK_THROWS_AS(cross_entropy(x, x, {}, Reduction::Mean, 0), ValueError);
  CHECK_THROWS_AS(cross_entropy(x, t, {}, Reduction::Mean, -100, 1.5), ValueError);
  // aten::nll_loss takes 1-D or 2-D inputs only; a bad reduction
  const std::vector<ops::Arg> nl = {AnyTensor(Tensor<float>(x.reshape(Dims{3, 5, 1}))), AnyTensor(Tensor<int64_t>(t.reshape(Dims{3, 1}))),
                                    ops::Arg(), int64_t(1), int64_t(-100)};
  CHECK_THROWS_AS(ops::call_by_name("aten::nll_loss", nl), ShapeError);
  CHECK_NOTHROW(ops::call_by_name("aten::nll_loss_nd", nl));
  CHECK_THROWS_AS(nll_loss(x, t, {}, static_cast<Reduction>(5)), ValueError);
  CHECK_THROWS_AS(nll_loss(Tensor<float>(lit<float>({1}, Dims{})), ilit({0}, Dims{})), ValueError);
}

TEST_CASE("philox4x32-10: known-answer vectors of Random123", "[ops][loss][dropout]") {
  // Random123's kat_vectors, philox4x32 with 10 rounds
  CHECK(ops::detail::philox4x32_10({0, 0, 0, 0}, {0, 0}) ==
        std::array<uint32_t, 4>{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u});
  CHECK(ops::detail::philox4x32_10({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu}) ==
        std::array<uint32_t, 4>{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu});
  CHECK(ops::detail::philox4x32_10({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, {0xa4093822u, 0x299f31d0u}) ==
        std::array<uint32_t, 4>{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u});
}

TEMPLATE_TEST_CASE("dropout: statistics, exact scale, reproducible masks", "[ops][loss][dropout]", float, double, half,
                   bfloat16) {
  using T = TestType;
  const int64_t n = 20000;
  const Tensor<T> x = lit<T>(std::vector<double>(size_t(n), 1.5), Dims{100, 200});
  for (double p : {0.1, 0.5, 0.8}) {
    INFO("p " << p);
    PhiloxGenerator g(1234);
    const std::vector<double> y = vals(dropout(x, p, true, g));
    using Acc = opmath_t<T>;  // torch: bernoulli_(1 - p).div_(1 - p) in T, then x * noise
    const T scale = convert<T>(static_cast<Acc>(Acc(1) / static_cast<Acc>(1.0 - p)));
    const double kept = double(convert<T>(static_cast<Acc>(static_cast<Acc>(T(1.5)) * static_cast<Acc>(scale))));
    int64_t zeros = 0;
    for (double v : y) {
      if (v == 0) ++zeros;
      else CHECK(v == kept);  // every kept element is x * T(1 / (1 - p)), exactly
    }
    // the fraction zeroed lies within 5 standard deviations of p (binomial)
    const double sd = std::sqrt(p * (1 - p) / double(n));
    CHECK(std::fabs(double(zeros) / double(n) - p) < 5 * sd);
    // the same seed gives the same mask; the next call (next subsequence) another one
    PhiloxGenerator g2(1234);
    CHECK(vals(dropout(x, p, true, g2)) == y);
    CHECK(vals(dropout(x, p, true, g2)) != y);
    CHECK(g2.offset() == 2);
  }
  // p = 0 and train = false: the input's values; p = 1: zeros
  PhiloxGenerator g(7);
  const Tensor<T> small = lit<T>({1.0, -2.0, 3.5}, Dims{3});
  CHECK(vals(dropout(small, 0.0, true, g)) == vals(small));
  CHECK(vals(dropout(small, 0.7, false, g)) == vals(small));
  CHECK(vals(dropout(small, 1.0, true, g)) == std::vector<double>{0, 0, 0});
  CHECK(g.offset() == 0);  // inactive calls take no subsequence
}

TEST_CASE("dropout: the default stream, other dtypes, the aten name and errors", "[ops][loss][dropout]") {
  const Tensor<float> x = lit<float>(std::vector<double>(64, 1.0), Dims{8, 8});
  manual_seed(99);
  const std::vector<double> a = vals(dropout(x, 0.5));
  manual_seed(99);
  CHECK(vals(dropout(x, 0.5)) == a);
  manual_seed(99);
  const std::vector<ops::Arg> args = {AnyTensor(x), 0.5, true};
  CHECK(vals(ops::call_by_name("aten::dropout", args).get<float>()) == a);  // the same stream
  // a non-contiguous input: the mask follows the logical (row-major) order
  PhiloxGenerator g1(5), g2(5);
  CHECK(vals(dropout(Tensor<float>(x.t()), 0.5, true, g1)) == vals(dropout(Tensor<float>(x.t().contiguous()), 0.5, true, g2)));
  // integer and bool inputs: inactive dropout keeps them; active dropout is a TypeError
  const Tensor<int64_t> xi = ilit({1, 2, 3}, Dims{3});
  CHECK(dropout(xi, 0.5, false).sizes() == Dims{3});
  CHECK(vals(dropout(xi, 0.5, false)) == std::vector<double>{1, 2, 3});
  CHECK(vals(dropout(xi, 1.0, true)) == std::vector<double>{0, 0, 0});
  CHECK_THROWS_AS(dropout(xi, 0.5, true), TypeError);
  CHECK_THROWS_WITH(dropout(xi, 0.5, true), Contains("aten::dropout") && Contains("int64"));
  CHECK_THROWS_AS(dropout(x, 1.5), ValueError);
  CHECK_THROWS_AS(dropout(x, -0.1), ValueError);
  CHECK(dropout(Tensor<float>::empty(Dims{0, 3}), 0.5).sizes() == Dims{0, 3});
}

TEMPLATE_TEST_CASE("pixel_shuffle and pixel_unshuffle: torch 1.13 values, every dtype", "[ops][loss]", float, double, half,
                   bfloat16, int64_t, int32_t, uint8_t, bool) {
  using T = TestType;
  std::vector<double> v(96);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::is_same_v<T, bool> ? double(i % 3 == 0) : double(i % 90);
  const Tensor<T> x = lit<T>(v, Dims{2, 8, 2, 3});
  // F.pixel_shuffle(torch.arange(96).reshape(2, 8, 2, 3), 2): the source index of each element
  const std::vector<int> src = {0,  6,  1,  7,  2,  8,  12, 18, 13, 19, 14, 20, 3,  9,  4,  10, 5,  11, 15, 21,
                                16, 22, 17, 23, 24, 30, 25, 31, 26, 32, 36, 42, 37, 43, 38, 44, 27, 33, 28, 34,
                                29, 35, 39, 45, 40, 46, 41, 47, 48, 54, 49, 55, 50, 56, 60, 66, 61, 67, 62, 68,
                                51, 57, 52, 58, 53, 59, 63, 69, 64, 70, 65, 71, 72, 78, 73, 79, 74, 80, 84, 90,
                                85, 91, 86, 92, 75, 81, 76, 82, 77, 83, 87, 93, 88, 94, 89, 95};
  const Tensor<T> y = pixel_shuffle(x, 2);
  REQUIRE(y.sizes() == Dims{2, 2, 4, 6});
  const std::vector<double> got = vals(y);
  std::vector<double> want;
  for (int s : src) want.push_back(vals(lit<T>({v[size_t(s)]}, Dims{}))[0]);
  CHECK(got == want);
  // unshuffle inverts it; F.pixel_unshuffle(torch.arange(48).reshape(1, 2, 4, 6), 2)
  CHECK(vals(pixel_unshuffle(y, 2)) == vals(x));
  std::vector<double> u(48);
  for (size_t i = 0; i < u.size(); ++i) u[i] = std::is_same_v<T, bool> ? double(i % 2) : double(i);
  const std::vector<int> usrc = {0,  2,  4,  12, 14, 16, 1,  3,  5,  13, 15, 17, 6,  8,  10, 18,
                                 20, 22, 7,  9,  11, 19, 21, 23, 24, 26, 28, 36, 38, 40, 25, 27,
                                 29, 37, 39, 41, 30, 32, 34, 42, 44, 46, 31, 33, 35, 43, 45, 47};
  std::vector<double> uwant;
  for (int s : usrc) uwant.push_back(u[size_t(s)]);
  const AnyTensor uy = pixel_unshuffle(AnyTensor(lit<T>(u, Dims{1, 2, 4, 6})), 2);
  CHECK(uy.sizes() == Dims{1, 8, 2, 3});
  CHECK(vals(uy.template get<T>()) == uwant);
  // rank 3 and 5, a transposed (non-contiguous) operand, the aten name
  CHECK(pixel_shuffle(Tensor<T>(x.select(0, 1)), 2).sizes() == Dims{2, 4, 6});
  CHECK(pixel_shuffle(Tensor<T>(x.reshape(Dims{1, 2, 8, 2, 3})), 2).sizes() == Dims{1, 2, 2, 4, 6});
  const Tensor<T> xt(x.transpose(2, 3).contiguous().transpose(2, 3));
  CHECK(vals(pixel_shuffle(xt, 2)) == got);
  const std::vector<ops::Arg> args = {AnyTensor(x), int64_t(2)};
  CHECK(vals(ops::call_by_name("aten::pixel_shuffle", args).template get<T>()) == got);
  CHECK(pixel_shuffle(Tensor<T>::empty(Dims{0, 4, 1, 1}), 2).sizes() == Dims{0, 1, 2, 2});
}

TEST_CASE("pixel_shuffle and pixel_unshuffle: errors", "[ops][loss]") {
  const Tensor<float> x = lit<float>(std::vector<double>(12, 1.0), Dims{1, 3, 2, 2});
  CHECK_THROWS_AS(pixel_shuffle(x, 2), ShapeError);  // 3 channels, not divisible by 4
  CHECK_THROWS_WITH(pixel_shuffle(x, 2), Contains("aten::pixel_shuffle") && Contains("[1, 3, 2, 2] float32"));
  CHECK_THROWS_AS(pixel_shuffle(x, 0), ValueError);
  CHECK_THROWS_AS(pixel_shuffle(Tensor<float>(x.reshape(Dims{3, 4})), 1), ShapeError);
  CHECK_THROWS_AS(pixel_unshuffle(Tensor<float>(x.reshape(Dims{1, 1, 3, 4})), 2), ShapeError);
  CHECK_THROWS_AS(pixel_unshuffle(x, -1), ValueError);
}

TEMPLATE_TEST_CASE("embedding_bag: torch 1.13 values, every floating dtype", "[ops][loss]", float, double, half, bfloat16) {
  using T = TestType;
  const double e = tol<T>();
  // W [5, 2], idx = [1, 2, 4, 0, 3, 3, 2], offsets [0, 3, 3, 5] (bag 1 empty)
  const Tensor<T> w = lit<T>({0.5, -1.0, 1.5, 2.0, -0.25, 0.75, 3.0, -2.5, 1.0, 1.0}, Dims{5, 2});
  const Tensor<int64_t> idx = ilit({1, 2, 4, 0, 3, 3, 2}, Dims{7}), off = ilit({0, 3, 3, 5}, Dims{4});
  using M = EmbeddingBagMode;
  // F.embedding_bag(idx, W, off, mode=m); padding_idx=3; offsets [0, 3, 3, 7] with include_last_offset
  check_near(vals(embedding_bag(w, idx, off, M::Sum)), {2.25, 3.75, 0.0, 0.0, 3.5, -3.5, 2.75, -1.75}, e, e);
  check_near(vals(embedding_bag(w, idx, off, M::Mean)), {0.75, 1.25, 0.0, 0.0, 1.75, -1.75, 1.375, -0.875}, e, e);
  check_near(vals(embedding_bag(w, idx, off, M::Max)), {1.5, 2.0, 0.0, 0.0, 3.0, -1.0, 3.0, 0.75}, e, e);
  check_near(vals(embedding_bag(w, idx, off, M::Sum, {}, false, 3)), {2.25, 3.75, 0.0, 0.0, 0.5, -1.0, -0.25, 0.75}, e, e);
  check_near(vals(embedding_bag(w, idx, off, M::Mean, {}, false, 3)), {0.75, 1.25, 0.0, 0.0, 0.5, -1.0, -0.25, 0.75}, e, e);
  check_near(vals(embedding_bag(w, idx, off, M::Max, {}, false, -2)), {1.5, 2.0, 0.0, 0.0, 0.5, -1.0, -0.25, 0.75}, e, e);
  const Tensor<int64_t> last = ilit({0, 3, 3, 7}, Dims{4});
  check_near(vals(embedding_bag(w, idx, last, M::Sum, {}, true)), {2.25, 3.75, 0.0, 0.0, 6.25, -5.25}, e, e);
  check_near(vals(embedding_bag(w, idx, last, M::Mean, {}, true)), {0.75, 1.25, 0.0, 0.0, 1.5625, -1.3125}, e, e);
  check_near(vals(embedding_bag(w, idx, last, M::Max, {}, true)), {1.5, 2.0, 0.0, 0.0, 3.0, 0.75}, e, e);
  // per_sample_weights = [0.5, 2.0, -1.0, 1.0, 0.25, 4.0, 1.5] (mode sum)
  const Tensor<T> psw = lit<T>({0.5, 2.0, -1.0, 1.0, 0.25, 4.0, 1.5}, Dims{7});
  check_near(vals(embedding_bag(w, idx, off, M::Sum, psw)), {-0.75, 1.5, 0.0, 0.0, 1.25, -1.625, 11.625, -8.875}, e, e);
  // 2-D indices without offsets: F.embedding_bag([[1, 2], [4, 0], [3, 3]], W, mode='mean'), and max with padding_idx=-2
  const Tensor<int32_t> i2(ilit({1, 2, 4, 0, 3, 3}, Dims{3, 2}).to<int32_t>());
  check_near(vals(embedding_bag(w, i2, M::Mean)), {0.625, 1.375, 0.75, 0.0, 3.0, -2.5}, e, e);
  check_near(vals(embedding_bag(w, i2, M::Max, {}, -2)), {1.5, 2.0, 1.0, 1.0, 0.0, 0.0}, e, e);
  // run-time typed, int32 offsets; the aten name (both overloads' argument counts)
  const AnyTensor r = embedding_bag(AnyTensor(w), AnyTensor(idx), AnyTensor(Tensor<int32_t>(off.to<int32_t>())), M::Sum);
  check_near(vals(r.template get<T>()), {2.25, 3.75, 0.0, 0.0, 3.5, -3.5, 2.75, -1.75}, e, e);
  const std::vector<ops::Arg> a8 = {AnyTensor(w), AnyTensor(idx), AnyTensor(off), false, int64_t(1), false, ops::Arg(), false};
  check_near(vals(ops::call_by_name("aten::embedding_bag", a8).template get<T>()),
             {0.75, 1.25, 0.0, 0.0, 1.75, -1.75, 1.375, -0.875}, e, e);
  // a8 with padding_idx 3 (one list, not a push_back of a temporary Arg: GCC 12 -O2 warns
  // -Wmaybe-uninitialized through std::variant's move there)
  const std::vector<ops::Arg> a9 = {AnyTensor(w), AnyTensor(idx), AnyTensor(off), false, int64_t(1), false, ops::Arg(), false, int64_t(3)};
  check_near(vals(ops::call_by_name("aten::embedding_bag", a9).template get<T>()),
             {0.75, 1.25, 0.0, 0.0, 0.5, -1.0, -0.25, 0.75}, e, e);
  // no indices: every bag empty
  CHECK(vals(embedding_bag(w, Tensor<int64_t>::empty(Dims{0}), ilit({0, 0}, Dims{2}), M::Max)) ==
        std::vector<double>{0, 0, 0, 0});
}

TEST_CASE("embedding_bag: errors", "[ops][loss]") {
  const Tensor<float> w = lit<float>(std::vector<double>(10, 1.0), Dims{5, 2});
  const Tensor<int64_t> idx = ilit({1, 2, 4}, Dims{3}), off = ilit({0, 2}, Dims{2});
  using M = EmbeddingBagMode;
  CHECK_THROWS_AS(embedding_bag(w, ilit({1, 5, 0}, Dims{3}), off, M::Sum), IndexError);
  CHECK_THROWS_WITH(embedding_bag(w, ilit({1, 5, 0}, Dims{3}), off, M::Sum), Contains("aten::embedding_bag") && Contains("5"));
  CHECK_THROWS_AS(embedding_bag(w, idx, ilit({1, 2}, Dims{2}), M::Sum), ValueError);  // offsets[0] != 0
  CHECK_THROWS_AS(embedding_bag(w, idx, ilit({0, 4}, Dims{2}), M::Sum), ValueError);  // past the indices
  CHECK_THROWS_AS(embedding_bag(w, idx, off, M::Mean, lit<float>({1, 1, 1}, Dims{3})), ValueError);
  CHECK_THROWS_AS(embedding_bag(w, idx, off, M::Sum, lit<float>({1, 1}, Dims{2})), ShapeError);
  CHECK_THROWS_AS(embedding_bag(w, idx, off, M::Sum, {}, false, 5), IndexError);
  CHECK_THROWS_AS(embedding_bag(w, idx, off, static_cast<M>(3)), ValueError);
  CHECK_THROWS_AS(embedding_bag(w, Tensor<float>(idx.to<float>()), off, M::Sum), TypeError);
  CHECK_THROWS_AS(embedding_bag(Tensor<int64_t>(w.to<int64_t>()), idx, off, M::Sum), TypeError);
  CHECK_THROWS_AS(embedding_bag(Tensor<float>(w.reshape(Dims{10})), idx, off, M::Sum), ShapeError);
  CHECK_THROWS_AS(embedding_bag(w, idx, M::Sum), ShapeError);  // 1-D indices need offsets
  CHECK_THROWS_WITH(embedding_bag(w, ilit({1, 5, 0}, Dims{3}), off, M::Sum), Contains("out of bounds"));
}
