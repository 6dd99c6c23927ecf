// tests/device/test_emulator_fusion.cpp — the emulator's loop fusion (src/device/fusion.cpp):
// each program runs fused (default) and op by op (TORCHTPU_EMULATOR_FUSION=0); results must be
// bit-identical, and equal to values computed here in double with the same per-op rounding.
#include <catch2/catch.hpp>  // TEST_CASE, CHECK, WithinRel

#include <cmath>    // std::exp, std::tanh, std::sqrt, std::trunc
#include <cstdlib>  // setenv, unsetenv
#include <cstring>  // std::memcmp
#include <string>   // std::string
#include <utility>  // std::pair
#include <vector>   // std::vector

#include "emulator_fixture.hpp"  // ttest::run_text, random_values, bf16_round

using namespace ttest;
using Catch::Matchers::WithinRel;

namespace {

/// Runs `text` with fusion on, then off (TORCHTPU_EMULATOR_FUSION is read at each execution).
std::pair<std::vector<HostTensor>, std::vector<HostTensor>> run_both(const std::string& text,
                                                                    const std::vector<HostTensor>& inputs) {
  setenv("TORCHTPU_EMULATOR_FUSION", "1", 1);
  auto fused = run_text(text, inputs);
  setenv("TORCHTPU_EMULATOR_FUSION", "0", 1);
  auto unfused = run_text(text, inputs);
  unsetenv("TORCHTPU_EMULATOR_FUSION");
  return {std::move(fused), std::move(unfused)};
}

/// Same dims and the same bits in every element (NaN payloads included).
bool same_bits(const HostTensor& a, const HostTensor& b) {
  return a.dtype == b.dtype && a.dims == b.dims && a.values.size() == b.values.size() &&
         (a.values.empty() || std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(double)) == 0);
}

void check_bit_identical(const std::vector<HostTensor>& fused, const std::vector<HostTensor>& unfused) {
  REQUIRE(fused.size() == unfused.size());
  for (size_t i = 0; i < fused.size(); ++i) {
    INFO("result " << i);
    CHECK(same_bits(fused[i], unfused[i]));
  }
}

double f32(double v) { return static_cast<float>(v); }

}  // namespace

TEST_CASE("emulator fusion: shared and returned intermediates, broadcasts, ragged blocks", "[pjrt][emulator]") {
  // 3 x 2089 = 6267 elements: three 2048-element blocks and a 123-element tail.
  const std::string T = "tensor<3x2089xf32>";
  const std::string text = "module {\n func.func public @main(%x: " + T + ", %b: tensor<2089xf32>) -> (" + T + ", " + T +
                           ", " + T + ") {\n"
                           "  %h = stablehlo.constant dense<5.000000e-01> : " + T + "\n"
                           "  %s = stablehlo.constant dense<2.500000e-01> : tensor<f32>\n"
                           "  %sb = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> " + T + "\n"
                           "  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<2089xf32>) -> " + T + "\n"
                           "  %a = stablehlo.multiply %x, %h : " + T + "\n"
                           "  %a2 = stablehlo.multiply %a, %a : " + T + "\n"
                           "  %c = stablehlo.add %a2, %bb : " + T + "\n"
                           "  %d = stablehlo.subtract %c, %sb : " + T + "\n"
                           "  %e = stablehlo.exponential %d : " + T + "\n"
                           "  %t = stablehlo.tanh %e : " + T + "\n"
                           "  %l = stablehlo.logistic %a : " + T + "\n"
                           "  %m = stablehlo.maximum %t, %l : " + T + "\n"
                           "  %r = stablehlo.rsqrt %e : " + T + "\n"
                           "  %o = stablehlo.add %m, %r : " + T + "\n"
                           "  return %o, %e, %a : " + T + ", " + T + ", " + T + "\n }\n}\n";
  const auto xv = random_values(3 * 2089, 7), bv = random_values(2089, 8);
  auto [fused, unfused] = run_both(text, {{ScalarType::Float, {3, 2089}, xv}, {ScalarType::Float, {2089}, bv}});
  check_bit_identical(fused, unfused);
  REQUIRE(fused.size() == 3);
  CHECK(fused[0].dims == std::vector<int64_t>{3, 2089});
  std::vector<double> want_o, want_e, want_a;
  for (size_t i = 0; i < xv.size(); ++i) {
    const double x = f32(xv[i]), b = f32(bv[i % 2089]);
    const double a = f32(x * 0.5), a2 = f32(a * a), c = f32(a2 + b), d = f32(c - 0.25), e = f32(std::exp(d));
    const double t = f32(std::tanh(e)), l = f32(1.0 / (1.0 + std::exp(-a))), m = t > l ? t : l;
    const double r = f32(1.0 / std::sqrt(e));
    want_o.push_back(f32(m + r));
    want_e.push_back(e);
    want_a.push_back(a);
  }
  CHECK(fused[2].values == want_a);  // exact: products of floats by 0.5
  CHECK(max_abs_diff(fused[1].values, want_e) < 1e-6);
  CHECK(max_abs_diff(fused[0].values, want_o) < 1e-6);
  // a hand-checked element: x = 0, b = 0 → a = 0, e = exp(-0.25), o = max(tanh(e), 0.5) + 1/sqrt(e)
  const std::vector<double> zeros(3 * 2089, 0.0), zb(2089, 0.0);
  auto [z, zu] = run_both(text, {{ScalarType::Float, {3, 2089}, zeros}, {ScalarType::Float, {2089}, zb}});
  check_bit_identical(z, zu);
  const double e0 = std::exp(-0.25);
  CHECK_THAT(z[1].values[6266], WithinRel(e0, 1e-6));
  CHECK_THAT(z[0].values[0], WithinRel(std::max(std::tanh(e0), 0.5) + 1.0 / std::sqrt(e0), 1e-6));
}

TEST_CASE("emulator fusion: bf16 chain with converts rounds every op as op by op", "[pjrt][emulator]") {
  const int64_t n = 5000;  // not a multiple of the block
  const std::string B = "tensor<5000xbf16>", F = "tensor<5000xf32>";
  const std::string text = "module {\n func.func public @main(%x: " + B + ", %y: " + B + ") -> (" + B + ", " + F + ") {\n"
                           "  %k = stablehlo.constant dense<1.500000e+00> : " + B + "\n"
                           "  %p = stablehlo.multiply %x, %k : " + B + "\n"
                           "  %q = stablehlo.add %p, %y : " + B + "\n"
                           "  %r = stablehlo.multiply %q, %q : " + B + "\n"
                           "  %f = stablehlo.convert %r : (" + B + ") -> " + F + "\n"
                           "  %g = stablehlo.exponential %f : " + F + "\n"
                           "  %h = stablehlo.convert %g : (" + F + ") -> " + B + "\n"
                           "  %z = stablehlo.subtract %h, %p : " + B + "\n"
                           "  return %z, %f : " + B + ", " + F + "\n }\n}\n";
  const auto xv = random_values(static_cast<size_t>(n), 31), yv = random_values(static_cast<size_t>(n), 32);
  auto [fused, unfused] = run_both(text, {{ScalarType::BFloat16, {n}, xv}, {ScalarType::BFloat16, {n}, yv}});
  check_bit_identical(fused, unfused);
  REQUIRE(fused.size() == 2);
  std::vector<double> want_z, want_f;
  for (size_t i = 0; i < xv.size(); ++i) {
    const double x = bf16_round(xv[i]), y = bf16_round(yv[i]);
    const double p = bf16_round(x * 1.5), q = bf16_round(p + y), r = bf16_round(q * q);
    const double g = f32(std::exp(r));
    want_z.push_back(bf16_round(bf16_round(g) - p));
    want_f.push_back(r);
  }
  CHECK(fused[1].values == want_f);
  CHECK(max_abs_diff(fused[0].values, want_z) < 1e-6);
  // by hand: x = 1, y = 0.5 → p = 1.5, q = 2, r = 4, z = bf16(bf16(e^4) - 1.5) = bf16(54.5 - 1.5) = 53
  auto [h, hu] = run_both(text, {{ScalarType::BFloat16, {n}, std::vector<double>(5000, 1.0)},
                                 {ScalarType::BFloat16, {n}, std::vector<double>(5000, 0.5)}});
  check_bit_identical(h, hu);
  CHECK(h[1].values[4999] == 4.0);
  CHECK(h[0].values[0] == 53.0);
}

TEST_CASE("emulator fusion: compare, select, clamp with scalar bounds, a reduce reading the region", "[pjrt][emulator]") {
  const int64_t n = 4099;
  const std::string T = "tensor<4099xf32>";
  const std::string text =
      "module {\n func.func public @main(%x: " + T + ", %lo: tensor<f32>) -> (" + T + ", tensor<f32>, tensor<4099xi32>) {\n"
      "  %z = stablehlo.constant dense<0.000000e+00> : " + T + "\n"
      "  %hi = stablehlo.constant dense<2.000000e+00> : tensor<f32>\n"
      "  %a = stablehlo.multiply %x, %x : " + T + "\n"
      "  %p = stablehlo.compare GT, %x, %z : (" + T + ", " + T + ") -> tensor<4099xi1>\n"
      "  %s = stablehlo.select %p, %a, %x : (tensor<4099xi1>, " + T + ", " + T + ") -> " + T + "\n"
      "  %c = stablehlo.clamp %lo, %s, %hi : (tensor<f32>, " + T + ", tensor<f32>) -> " + T + "\n"
      "  %init = stablehlo.constant dense<0.000000e+00> : tensor<f32>\n"
      "  %sum = stablehlo.reduce(%c init: %init) applies stablehlo.add across dimensions = [0] : (" + T +
      ", tensor<f32>) -> tensor<f32>\n"
      "  %pn = stablehlo.convert %p : (tensor<4099xi1>) -> " + T + "\n"
      "  %w = stablehlo.add %c, %pn : " + T + "\n"
      "  %i = stablehlo.convert %w : (" + T + ") -> tensor<4099xi32>\n"
      "  return %w, %sum, %i : " + T + ", tensor<f32>, tensor<4099xi32>\n }\n}\n";
  auto xv = random_values(static_cast<size_t>(n), 41);
  for (auto& v : xv) v *= 3;  // some squares above the upper bound
  const double lo = -0.5;
  auto [fused, unfused] = run_both(text, {{ScalarType::Float, {n}, xv}, {ScalarType::Float, {}, {lo}}});
  check_bit_identical(fused, unfused);
  REQUIRE(fused.size() == 3);
  std::vector<double> want_w, want_i;
  double sum = 0;
  for (double v : xv) {
    const double x = f32(v), a = f32(x * x), s = x > 0 ? a : x;
    const double c = std::min(std::max(s, lo), 2.0);
    sum += c;
    const double w = f32(c + (x > 0 ? 1.0 : 0.0));
    want_w.push_back(w);
    want_i.push_back(std::trunc(w));
  }
  CHECK(fused[0].values == want_w);
  CHECK(fused[2].values == want_i);
  CHECK_THAT(fused[1].values[0], WithinRel(sum, 1e-6));
}

TEST_CASE("emulator fusion: interleaved shapes, a region feeding a broadcast, empty regions", "[pjrt][emulator]") {
  // Two shapes alternate; the [7] chain feeds a broadcast into the [5x7] chain, which must see it.
  const std::string text = R"mlir(module {
  func.func public @main(%u: tensor<7xf32>, %m: tensor<5x7xf32>, %e: tensor<0x4xf32>) -> (tensor<5x7xf32>, tensor<7xf32>, tensor<0x4xf32>) {
    %two = stablehlo.constant dense<2.000000e+00> : tensor<7xf32>
    %one = stablehlo.constant dense<1.000000e+00> : tensor<5x7xf32>
    %u1 = stablehlo.multiply %u, %two : tensor<7xf32>
    %m1 = stablehlo.add %m, %one : tensor<5x7xf32>
    %u2 = stablehlo.add %u1, %u : tensor<7xf32>
    %ub = stablehlo.broadcast_in_dim %u2, dims = [1] : (tensor<7xf32>) -> tensor<5x7xf32>
    %m2 = stablehlo.multiply %m1, %ub : tensor<5x7xf32>
    %u3 = stablehlo.negate %u2 : tensor<7xf32>
    %k = stablehlo.constant dense<3.000000e+00> : tensor<0x4xf32>
    %e1 = stablehlo.add %e, %k : tensor<0x4xf32>
    return %m2, %u3, %e1 : tensor<5x7xf32>, tensor<7xf32>, tensor<0x4xf32>
  }
})mlir";
  const std::vector<double> u{1, 2, 3, 4, 5, 6, 7};
  std::vector<double> m;
  for (int i = 0; i < 35; ++i) m.push_back(i);
  auto [fused, unfused] =
      run_both(text, {{ScalarType::Float, {7}, u}, {ScalarType::Float, {5, 7}, m}, {ScalarType::Float, {0, 4}, {}}});
  check_bit_identical(fused, unfused);
  REQUIRE(fused.size() == 3);
  std::vector<double> want_m2, want_u3;
  for (int i = 0; i < 35; ++i) want_m2.push_back((i + 1.0) * 3.0 * u[static_cast<size_t>(i % 7)]);
  for (double v : u) want_u3.push_back(-3.0 * v);
  CHECK(fused[0].values == want_m2);
  CHECK(fused[1].values == want_u3);
  CHECK(fused[2].dims == std::vector<int64_t>{0, 4});
  CHECK(fused[2].values.empty());
}
