// tests/device_ops/test_device_lowering.cpp — the same expressions on the cpu and on the TPU
// emulator: elementwise maps, casts, reductions, argmax, softmax, matmul; and the TPU
// precision of dot_general against float64 references.
//
// Tolerance: the cpu result is the reference. Elementwise float32 results agree within
// 2e-6 relative + 1e-6 absolute (the emulator computes each op in float64 and rounds to
// float32; the cpu uses float32 math); reductions within 1e-5 relative; matmul at highest
// precision within 1e-5 relative + 1e-5 absolute.
#include "helpers.hpp"  // host_values, check_close, test_input

#include <cmath>  // std::exp, std::erf, std::tanh

using namespace torchtpu;

namespace {
constexpr double kRel = 2e-6, kAbs = 1e-6;
}

TEST_CASE("elementwise ops agree on cpu and tpu", "[pjrt]") {
  const std::string dev = GENERATE(as<std::string>{}, "cpu", "pjrt");
  const Device dv = dev == "cpu" ? Device("cpu") : test_device();
  INFO("device " << dev);
  auto ca = test_input({3, 1, 5}, 1), cb = test_input({4, 5}, 2, 0.5, 3.0);
  auto a = ca.to(dv), b = cb.to(dv);  // [3,1,5] and [4,5] broadcast to [3,4,5]
  check_close(Tensor<float>(a + b), Tensor<float>(ca + cb), kRel, kAbs);
  check_close(Tensor<float>(a - b * 2.5), Tensor<float>(ca - cb * 2.5), kRel, kAbs);
  check_close(Tensor<float>(a / b), Tensor<float>(ca / cb), kRel, kAbs);
  check_close(Tensor<float>(-a), Tensor<float>(-ca), 0.0);
  check_close(Tensor<float>(maximum(a, b) + minimum(a, b)), Tensor<float>(maximum(ca, cb) + minimum(ca, cb)), kRel, kAbs);
  check_close(Tensor<float>(pow(b, a)), Tensor<float>(pow(cb, ca)), 1e-5, kAbs);
  check_close(Tensor<float>(remainder(a * 3.0, b)), Tensor<float>(remainder(ca * 3.0, cb)), 1e-5, 1e-5);
  check_close(Tensor<float>(floor_divide(a * 3.0, b)), Tensor<float>(floor_divide(ca * 3.0, cb)), 0.0);
  check_close(Tensor<float>(abs(a) + exp(a) + log(b) + sqrt(b) + rsqrt(b)),
              Tensor<float>(abs(ca) + exp(ca) + log(cb) + sqrt(cb) + rsqrt(cb)), 1e-5, kAbs);
  check_close(Tensor<float>(log1p(b) + expm1(a) + sin(a) + cos(a) + tanh(a) + erf(a)),
              Tensor<float>(log1p(cb) + expm1(ca) + sin(ca) + cos(ca) + tanh(ca) + erf(ca)), 1e-5, kAbs);
  check_close(Tensor<float>(sigmoid(a) + relu(a) + silu(a) + gelu(a) + gelu(a, "tanh")),
              Tensor<float>(sigmoid(ca) + relu(ca) + silu(ca) + gelu(ca) + gelu(ca, "tanh")), 1e-5, kAbs);
  check_close(Tensor<float>(hardswish(a) + hardsigmoid(a) + clamp(a, -0.5, 0.75) + hardtanh(a) + clamp_min(a, 0.1)),
              Tensor<float>(hardswish(ca) + hardsigmoid(ca) + clamp(ca, -0.5, 0.75) + hardtanh(ca) + clamp_min(ca, 0.1)),
              kRel, kAbs);
  check_close(Tensor<float>(where(a > b, a, b * 0.5)), Tensor<float>(where(ca > cb, ca, cb * 0.5)), 0.0);
  check_close(Tensor<bool>((a < 0.0) | (b >= 2.0)), Tensor<bool>((ca < 0.0) | (cb >= 2.0)), 0.0);
  check_close(Tensor<bool>(logical_and(a, b > 1.0) == logical_not(a != 0.0)),
              Tensor<bool>(logical_and(ca, cb > 1.0) == logical_not(ca != 0.0)), 0.0);
}

TEST_CASE("gelu and sigmoid match float64 formulas on the device", "[pjrt]") {
  Tensor<float> x = {-3.0f, -1.0f, -0.25f, 0.0f, 0.5f, 2.0f};
  auto got = host_values(Tensor<float>(gelu(x.to(test_device())) + sigmoid(x.to(test_device()))));
  const auto xs = host_values(x);
  for (size_t i = 0; i < xs.size(); ++i) {
    const double v = xs[i];
    const double want = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))) + 1 / (1 + std::exp(-v));
    CHECK(got[i] == Approx(want).epsilon(1e-6).margin(1e-7));
  }
}

TEST_CASE("integer, bool and bf16 dtypes on the device", "[pjrt]") {
  Tensor<int32_t> i = {-7, -3, 0, 4, 9};
  Tensor<int32_t> j = {2, -2, 3, 3, -4};
  auto di = i.to(test_device()), dj = j.to(test_device());
  check_close(Tensor<int32_t>(di * dj - 3), Tensor<int32_t>(i * j - 3), 0.0);
  check_close(Tensor<int32_t>(floor_divide(di, dj)), Tensor<int32_t>(floor_divide(i, j)), 0.0);
  check_close(Tensor<int32_t>(remainder(di, dj)), Tensor<int32_t>(remainder(i, j)), 0.0);
  check_close(Tensor<float>(di / dj), Tensor<float>(i / j), kRel);  // true division → float32
  check_close(Tensor<int64_t>(di + int64_t(1) * 0), Tensor<int64_t>(i + int64_t(1) * 0), 0.0);
  Tensor<bool> bb = {true, false, true, false, true};
  auto db = bb.to(test_device());
  check_close(Tensor<int64_t>(db + db), Tensor<int64_t>(bb + bb), 0.0);  // bool + bool → bool in torch
  check_close(Tensor<int64_t>(db.sum()), Tensor<int64_t>(bb.sum()), 0.0);
  // casts
  Tensor<float> f = {-2.7f, -0.5f, 0.0f, 0.5f, 3.9f};
  auto df = f.to(test_device());
  check_close(Tensor<int32_t>(df.to<int32_t>()), Tensor<int32_t>(f.to<int32_t>()), 0.0);  // trunc
  check_close(Tensor<bool>(df.to<bool>()), Tensor<bool>(f.to<bool>()), 0.0);
  // bf16: computed in float32 and rounded once per op on both devices.
  Tensor<bfloat16> h = test_input({2, 8}, 5).to<bfloat16>().eval();
  auto dh = h.to(test_device());
  check_close(Tensor<bfloat16>(dh * dh + 1.0), Tensor<bfloat16>(h * h + 1.0), 8e-3);
  check_close(Tensor<bfloat16>(exp(dh)), Tensor<bfloat16>(exp(h)), 8e-3);
}

TEST_CASE("reductions, argmax and softmax agree on cpu and tpu", "[pjrt]") {
  auto c = test_input({3, 4, 5}, 9);
  auto d = c.to(test_device());
  check_close(Tensor<float>(d.sum()), Tensor<float>(c.sum()), 1e-5, 1e-5);
  check_close(Tensor<float>(d.sum({1})), Tensor<float>(c.sum({1})), 1e-5, 1e-6);
  check_close(Tensor<float>(d.sum({0, 2}, true)), Tensor<float>(c.sum({0, 2}, true)), 1e-5, 1e-6);
  check_close(Tensor<float>(d.mean({-1})), Tensor<float>(c.mean({-1})), 1e-5, 1e-6);
  check_close(Tensor<float>((d * d).mean()), Tensor<float>((c * c).mean()), 1e-5);
  check_close(Tensor<float>(d.prod({2})), Tensor<float>(c.prod({2})), 1e-5, 1e-6);
  check_close(Tensor<float>(d.max({1})), Tensor<float>(c.max({1})), 0.0);
  check_close(Tensor<float>(d.min({0, 1}, true)), Tensor<float>(c.min({0, 1}, true)), 0.0);
  check_close(Tensor<bool>((d > 1.5).any({2})), Tensor<bool>((c > 1.5).any({2})), 0.0);
  check_close(Tensor<bool>((d > -1.9).all({0})), Tensor<bool>((c > -1.9).all({0})), 0.0);
  check_close(Tensor<int64_t>(d.argmax(1)), Tensor<int64_t>(c.argmax(1)), 0.0);
  check_close(Tensor<int64_t>(d.argmin(2, true)), Tensor<int64_t>(c.argmin(2, true)), 0.0);
  check_close(Tensor<int64_t>(d.argmax()), Tensor<int64_t>(c.argmax()), 0.0);
  check_close(Tensor<float>(softmax(d, 1)), Tensor<float>(softmax(c, 1)), 1e-5, 1e-7);
  check_close(Tensor<float>(log_softmax(d * 3.0, -1)), Tensor<float>(log_softmax(c * 3.0, -1)), 1e-5, 1e-6);
  // reduction of a fused elementwise producer, and an empty reduction (sum = 0, as on the cpu)
  check_close(Tensor<float>((exp(d) - d).sum({0})), Tensor<float>((exp(c) - c).sum({0})), 1e-5, 1e-6);
  check_close(Tensor<float>(d.slice(0, 0, 0).sum({0})), Tensor<float>(c.slice(0, 0, 0).sum({0})), 0.0);
  // NaN: argmax picks the first NaN, max propagates it (torch semantics on both devices)
  Tensor<float> n = {1.0f, NAN, 3.0f, NAN};
  CHECK(Tensor<int64_t>(n.to(test_device()).argmax()).item() == 1);
  CHECK(std::isnan(Tensor<float>(n.to(test_device()).max()).item()));
  CHECK(std::isnan(Tensor<float>(n.to(test_device()).min()).item()));
  // per row: a NaN row gives NaN, the others their extreme (XLA's CPU plugin reduced [1, NaN, 3,
  // NaN] with stablehlo.maximum to 3; the lowering now selects the NaN, device/lower.hpp)
  Tensor<float> rows = {{1.0f, NAN, 3.0f}, {-2.0f, 5.0f, 0.5f}, {NAN, -1.0f, NAN}};
  const auto mx = host_values(Tensor<float>(rows.to(test_device()).max({1})));
  const auto mn = host_values(Tensor<float>(rows.to(test_device()).min({1})));
  REQUIRE(mx.size() == 3);
  REQUIRE(mn.size() == 3);
  CHECK(std::isnan(mx[0]));
  CHECK(mx[1] == 5.0);
  CHECK(std::isnan(mx[2]));
  CHECK(std::isnan(mn[0]));
  CHECK(mn[1] == -2.0);
  CHECK(std::isnan(mn[2]));
  Tensor<double> nd = {0.0, NAN};
  CHECK(std::isnan(Tensor<double>(nd.to(test_device()).max()).item()));
}

TEST_CASE("matmul agrees with the cpu at highest precision", "[pjrt]") {
  MatmulPrecisionGuard highest(MatmulPrecision::Highest);
  auto a = test_input({2, 1, 6, 7}, 21), b = test_input({3, 7, 4}, 22), v = test_input({7}, 23);
  auto da = a.to(test_device()), db = b.to(test_device()), dv = v.to(test_device());
  check_close(Tensor<float>(matmul(da, db)), Tensor<float>(matmul(a, b)), 1e-5, 1e-5);  // batch broadcast
  check_close(Tensor<float>(matmul(dv, db)), Tensor<float>(matmul(v, b)), 1e-5, 1e-5);  // 1-D lhs
  check_close(Tensor<float>(matmul(da, dv)), Tensor<float>(matmul(a, v)), 1e-5, 1e-5);  // 1-D rhs
  check_close(Tensor<float>(matmul(dv, dv)), Tensor<float>(matmul(v, v)), 1e-5, 1e-5);  // dot
  // a 2-layer MLP with fused epilogues, in one program
  auto x = test_input({5, 7}, 24), w1 = test_input({16, 7}, 25), b1 = test_input({16}, 26);
  auto w2 = test_input({3, 16}, 27), b2 = test_input({3}, 28);
  auto dx = x.to(test_device()), dw1 = w1.to(test_device()), db1 = b1.to(test_device()), dw2 = w2.to(test_device()), db2 = b2.to(test_device());
  Tensor<float> h = relu(linear(x, w1, b1));
  Tensor<float> dh = relu(linear(dx, dw1, db1));
  check_close(Tensor<float>(softmax(linear(dh, dw2, db2), 1)), Tensor<float>(softmax(linear(h, w2, b2), 1)), 1e-5, 1e-6);
  // bmm and integer matmul
  Tensor<int64_t> ia = {{1, 2}, {3, 4}}, ib = {{5, -6}, {7, 8}};
  check_close(Tensor<int64_t>(matmul(ia.to(test_device()), ib.to(test_device()))), Tensor<int64_t>(matmul(ia, ib)), 0.0);
  auto ba = test_input({2, 3, 4}, 29), bb = test_input({2, 4, 5}, 30);
  check_close(Tensor<float>(bmm(ba.to(test_device()), bb.to(test_device()))), Tensor<float>(bmm(ba, bb)), 1e-5, 1e-5);
}

TEST_CASE("dot_general precision: default rounds operands to bf16 (emulator), highest is f32-exact", "[pjrt][emulator]") {
  // References in float64: exact products of the float32 operands, and of the operands
  // rounded to bfloat16 (TPU default precision: bf16 operands, f32 accumulation). XLA's CPU
  // plugin computes f32 at DEFAULT too (docs/devices.md, "Numerics"): there DEFAULT matches the
  // exact reference with the HIGHEST tolerance.
  const int64_t m = 16, k = 64, n = 8;
  auto a = test_input({m, k}, 41), b = test_input({k, n}, 42);
  const auto av = host_values(a), bv = host_values(b);
  auto bf = [](double x) { return double(float(bfloat16(float(x)))); };
  std::vector<double> exact(m * n, 0.0), rounded(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p) {
        exact[i * n + j] += av[i * k + p] * bv[p * n + j];
        rounded[i * n + j] += bf(av[i * k + p]) * bf(bv[p * n + j]);
      }
  auto da = a.to(test_device()), db = b.to(test_device());
  std::vector<double> def, hi;
  {
    MatmulPrecisionGuard g(MatmulPrecision::Default);
    def = host_values(Tensor<float>(matmul(da, db)));
  }
  {
    MatmulPrecisionGuard g(MatmulPrecision::Highest);
    hi = host_values(Tensor<float>(matmul(da, db)));
  }
  double max_gap = 0;
  for (int64_t i = 0; i < m * n; ++i) {
    CHECK(hi[i] == Approx(exact[i]).epsilon(1e-5).margin(1e-5));
    CHECK(def[i] == Approx(on_emulator() ? rounded[i] : exact[i]).epsilon(1e-5).margin(1e-5));
    max_gap = std::max(max_gap, std::fabs(def[i] - hi[i]));
  }
  INFO("largest |default - highest| = " << max_gap);
  if (on_emulator()) CHECK(max_gap > 1e-3);  // measurably different
  else CHECK(max_gap < 1e-4);                // both f32 on XLA CPU
  // The cpu is always full precision.
  check_close(Tensor<float>(matmul(a, b)), Tensor<float>(matmul(da, db).eval()), 1.0, 1.0);
}

TEST_CASE("unsupported lowering is a clear error, not a crash", "[pjrt]") {
  auto d = test_input({2, 3}, 1).to(test_device());
  // A view layout that needs a gather (overlapping windows via as_strided storage).
  Tensor<float> weird(d.storage(), Dims{2, 2}, Dims{1, 1}, 0);
  CHECK_THROWS_AS(Tensor<float>(weird + 1.0f), UnsupportedOperator);
}
