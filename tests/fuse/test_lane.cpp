// tests/fuse/test_lane.cpp — one algorithm per float op on every path (fuse/simd_lane.hpp):
// a region the vector loops cannot take (here: one holding `where`, which has no vector form)
// computes each element through `FloatLane`, and must give the bits the vector loops give for
// the same op; a fused region must give the bits of its ops run one at a time (no product
// contracted into the next op's addition). Run under every TORCHTPU_CPU_ISA scripts/test sets,
// so each instruction set is compared with the scalar form.
#include <catch2/catch.hpp>  // TEST_CASE, CHECK, INFO

#include <bit>      // std::bit_cast
#include <cmath>    // std::isnan
#include <cstdint>  // uint32_t, int64_t
#include <string>   // std::string

#include <torchtpu/torchtpu.hpp>  // Tensor, ops

using torchtpu::Tensor;

namespace {

/// Every 4099th float bit pattern (both signs, zeros, subnormals, infinities, NaNs, about
/// 1.05 M values; 4099 is odd, so every exponent is hit with varied mantissas), then a dense
/// ramp over [-12, 12] where the activations bend. Not a multiple of 16: the masked tail runs.
Tensor<float> sweep() {
  const int64_t sparse = int64_t((uint64_t(1) << 32) / 4099) + 1, dense = 100003;
  Tensor<float> t = Tensor<float>::empty({sparse + dense});
  float* p = t.data_ptr();
  for (int64_t i = 0; i < sparse; ++i) p[i] = std::bit_cast<float>(uint32_t(uint64_t(i) * 4099u));
  for (int64_t i = 0; i < dense; ++i) p[sparse + i] = float(-12.0 + 24.0 * double(i) / double(dense - 1));
  return t;
}

/// Index of the first element where `a` and `b` differ in bits (NaN matches any NaN: payloads
/// of generated NaNs are not compared), or -1.
int64_t first_difference(const Tensor<float>& a, const Tensor<float>& b) {
  for (int64_t i = 0; i < a.numel(); ++i) {
    const float x = a.data_ptr()[i], y = b.data_ptr()[i];
    if (std::isnan(x) && std::isnan(y)) continue;
    if (std::bit_cast<uint32_t>(x) != std::bit_cast<uint32_t>(y)) return i;
  }
  return -1;
}

/// `f(x)` on the vector loops (contiguous float) and on the scalar loop (`where(m, x, x)` is
/// `x` bit for bit, and makes the region scalar), compared bit for bit.
template <class F>
void check_paths_agree(const std::string& name, F f) {
  const Tensor<float> x = sweep();
  const Tensor<bool> m = torchtpu::full<bool>({x.numel()}, true);
  const Tensor<float> vec = f(x);
  const Tensor<float> scal = f(torchtpu::where(m, x, x));
  const int64_t i = first_difference(vec, scal);
  INFO(name << ": first difference at x = " << (i < 0 ? 0.0f : x.data_ptr()[i]) << " (bits 0x" << std::hex
            << (i < 0 ? 0u : std::bit_cast<uint32_t>(x.data_ptr()[i])) << std::dec << "): vector "
            << (i < 0 ? 0.0f : vec.data_ptr()[i]) << ", scalar " << (i < 0 ? 0.0f : scal.data_ptr()[i]));
  CHECK(i == -1);
}

}  // namespace

TEST_CASE("every float unary op gives the same bits on the vector and the scalar loops", "[fuse][lane]") {
  namespace t = torchtpu;
  check_paths_agree("exp", [](const auto& x) { return Tensor<float>(t::exp(x)); });
  check_paths_agree("log", [](const auto& x) { return Tensor<float>(t::log(x)); });
  check_paths_agree("tanh", [](const auto& x) { return Tensor<float>(t::tanh(x)); });
  check_paths_agree("sigmoid", [](const auto& x) { return Tensor<float>(t::sigmoid(x)); });
  check_paths_agree("erf", [](const auto& x) { return Tensor<float>(t::erf(x)); });
  check_paths_agree("gelu", [](const auto& x) { return Tensor<float>(t::gelu(x)); });
  check_paths_agree("gelu tanh", [](const auto& x) { return Tensor<float>(t::gelu(x, "tanh")); });
  check_paths_agree("silu", [](const auto& x) { return Tensor<float>(t::silu(x)); });
  check_paths_agree("relu", [](const auto& x) { return Tensor<float>(t::relu(x)); });
  check_paths_agree("hardswish", [](const auto& x) { return Tensor<float>(t::hardswish(x)); });
  check_paths_agree("hardsigmoid", [](const auto& x) { return Tensor<float>(t::hardsigmoid(x)); });
  check_paths_agree("clamp", [](const auto& x) { return Tensor<float>(t::clamp(x, -1.5, 2.5)); });
  check_paths_agree("sqrt", [](const auto& x) { return Tensor<float>(t::sqrt(x)); });
  check_paths_agree("rsqrt", [](const auto& x) { return Tensor<float>(t::rsqrt(x)); });
  check_paths_agree("abs", [](const auto& x) { return Tensor<float>(t::abs(x)); });
  check_paths_agree("neg", [](const auto& x) { return Tensor<float>(t::neg(x)); });
}

TEST_CASE("binary float ops give the same bits on the vector and the scalar loops", "[fuse][lane]") {
  namespace t = torchtpu;
  const Tensor<float> y = sweep().flip({0}).contiguous();  // every pairing of magnitudes
  check_paths_agree("add", [&](const auto& x) { return Tensor<float>(x + y); });
  check_paths_agree("sub", [&](const auto& x) { return Tensor<float>(x - y); });
  check_paths_agree("mul", [&](const auto& x) { return Tensor<float>(x * y); });
  check_paths_agree("div", [&](const auto& x) { return Tensor<float>(x / y); });
  check_paths_agree("maximum", [&](const auto& x) { return Tensor<float>(t::maximum(x, y)); });
  check_paths_agree("minimum", [&](const auto& x) { return Tensor<float>(t::minimum(x, y)); });
}

TEST_CASE("a fused region gives the bits of its ops run one at a time", "[fuse][lane]") {
  namespace t = torchtpu;
  // a = b = 1 + 2^-12: a*b = 1 + 2^-11 + 2^-24 rounds to 1 + 2^-11 in float, so a*b - 1 is
  // 2^-11 when the product is rounded first and 2^-11 + 2^-24 when it is contracted into an FMA.
  const int64_t n = 1003;
  const Tensor<float> a = torchtpu::full<float>({n}, 1.0f + 0x1p-12f), c = torchtpu::full<float>({n}, -1.0f);
  const Tensor<float> fused = a * a + c;
  const Tensor<float> prod = a * a;
  const Tensor<float> split = prod + c;
  CHECK(first_difference(fused, split) == -1);
  CHECK(fused.data_ptr()[0] == 0x1p-11f);  // the product rounded, as torch's eager a * a + c
  // The same through an activation that adds to its input (hardswish: x + 3), over every
  // pairing of the sweep's magnitudes, on the vector loop and on the scalar loop.
  const Tensor<float> x = sweep(), y = sweep().flip({0}).contiguous();
  const Tensor<bool> m = torchtpu::full<bool>({x.numel()}, true);
  const Tensor<float> xy = x * y;
  const Tensor<float> one_at_a_time = t::hardswish(xy);
  CHECK(first_difference(Tensor<float>(t::hardswish(x * y)), one_at_a_time) == -1);
  CHECK(first_difference(Tensor<float>(t::hardswish(t::where(m, x, x) * y)), one_at_a_time) == -1);
}

TEST_CASE("gelu(remainder(x, y)) fused equals remainder then gelu (fuzz_jit_graph finding)", "[fuse][lane]") {
  namespace t = torchtpu;
  const Tensor<float> x = sweep();
  const Tensor<float> d = torchtpu::full<float>({x.numel()}, 2.75f);
  const Tensor<float> fused = t::gelu(t::remainder(x, d));  // remainder has no vector form: scalar
  const Tensor<float> r = t::remainder(x, d);
  const Tensor<float> split = t::gelu(r);  // contiguous float: the vector loop
  CHECK(first_difference(fused, split) == -1);
}
