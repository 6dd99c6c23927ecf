// tests/fuse/test_vecmath.cpp — the vectorized math functions (fuse/vecmath.hpp) against
// double-precision <cmath>, over wide ranges, with special values, via the public ops.
#include <catch2/catch.hpp>  // TEST_CASE, CHECK

#include <cmath>     // std::exp, std::erf, ...
#include <limits>    // std::numeric_limits
#include <vector>    // std::vector

#include <torchtpu/torchtpu.hpp>  // Tensor, exp, log, ...

using torchtpu::Tensor;

namespace {

Tensor<float> ramp(double lo, double hi, int64_t n) {
  Tensor<float> t = Tensor<float>::empty({n});
  for (int64_t i = 0; i < n; ++i) t.data_ptr()[i] = float(lo + (hi - lo) * double(i) / double(n - 1));
  return t;
}

/// Max relative error of `got` against `ref(x)` over a ramp, counting only |ref| >= floor.
template <class Ref>
double max_rel(const Tensor<float>& x, const Tensor<float>& got, Ref ref, double floor = 1e-30) {
  double worst = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double r = ref(double(x.data_ptr()[i]));
    if (std::abs(r) < floor) continue;
    worst = std::max(worst, std::abs(r - double(got.data_ptr()[i])) / std::abs(r));
  }
  return worst;
}

}  // namespace

TEST_CASE("vector exp and log are accurate to a few ulp", "[fuse][vecmath]") {
  // 1003 points: not a multiple of 16, so the masked tail runs too
  const Tensor<float> x = ramp(-87, 88, 1003);
  const Tensor<float> e = torchtpu::exp(x);
  CHECK(max_rel(x, e, [](double v) { return std::exp(v); }) < 4e-7);
  const Tensor<float> p = ramp(1e-30, 1e30, 1003);
  const Tensor<float> l = torchtpu::log(p);
  CHECK(max_rel(p, l, [](double v) { return std::log(v); }, 1e-3) < 4e-7);
  const Tensor<float> q = ramp(0.5, 2.0, 1003);
  const Tensor<float> lq = torchtpu::log(q);
  for (int64_t i = 0; i < q.numel(); ++i)
    CHECK(std::abs(double(lq.data_ptr()[i]) - std::log(double(q.data_ptr()[i]))) < 1.5e-7);
}

TEST_CASE("vector tanh, sigmoid, erf, gelu", "[fuse][vecmath]") {
  const Tensor<float> x = ramp(-10, 10, 4001);
  const Tensor<float> t = torchtpu::tanh(x);
  CHECK(max_rel(x, t, [](double v) { return std::tanh(v); }) < 4e-7);
  const Tensor<float> small = ramp(-1e-3, 1e-3, 999);
  const Tensor<float> ts = torchtpu::tanh(small);
  CHECK(max_rel(small, ts, [](double v) { return std::tanh(v); }) < 4e-7);
  const Tensor<float> s = torchtpu::sigmoid(ramp(-80, 30, 4001));
  CHECK(max_rel(ramp(-80, 30, 4001), s, [](double v) { return 1.0 / (1.0 + std::exp(-v)); }) < 4e-7);
  const Tensor<float> ef = torchtpu::erf(x);
  for (int64_t i = 0; i < x.numel(); ++i)
    CHECK(std::abs(double(ef.data_ptr()[i]) - std::erf(double(x.data_ptr()[i]))) < 3e-7);
  const Tensor<float> es = torchtpu::erf(small);
  CHECK(max_rel(small, es, [](double v) { return std::erf(v); }) < 4e-7);
  const Tensor<float> g = torchtpu::gelu(x);
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double v = x.data_ptr()[i];
    CHECK(std::abs(double(g.data_ptr()[i]) - 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)))) < 2e-6);
  }
  const Tensor<float> gt = torchtpu::gelu(x, "tanh");
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double v = x.data_ptr()[i];
    const double r = 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
    CHECK(std::abs(double(gt.data_ptr()[i]) - r) < 2e-6);
  }
}

TEST_CASE("vector math keeps special values", "[fuse][vecmath]") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor<float> x = {0.0f, -1.0f, inf, -inf, nan, 1e-40f};
  const Tensor<float> l = torchtpu::log(x), e = torchtpu::exp(x), t = torchtpu::tanh(x), s = torchtpu::sigmoid(x);
  const Tensor<float> r = torchtpu::relu(x);
  CHECK(l.data_ptr()[0] == -inf);
  CHECK(std::isnan(l.data_ptr()[1]));
  CHECK(l.data_ptr()[2] == inf);
  CHECK(std::isnan(l.data_ptr()[4]));
  CHECK(std::abs(l.data_ptr()[5] - std::log(1e-40)) < 1e-4);  // denormal input
  CHECK(e.data_ptr()[0] == 1.0f);
  CHECK(e.data_ptr()[2] == inf);
  CHECK(e.data_ptr()[3] == 0.0f);
  CHECK(std::isnan(e.data_ptr()[4]));
  CHECK(t.data_ptr()[2] == 1.0f);
  CHECK(t.data_ptr()[3] == -1.0f);
  CHECK(std::isnan(t.data_ptr()[4]));
  CHECK(s.data_ptr()[2] == 1.0f);
  CHECK(s.data_ptr()[3] == 0.0f);
  CHECK(std::isnan(s.data_ptr()[4]));
  CHECK(std::isnan(r.data_ptr()[4]));  // relu(NaN) = NaN, as torch.relu
  CHECK(r.data_ptr()[1] == 0.0f);
  const Tensor<float> big = torchtpu::exp(Tensor<float>{89.0f, -104.0f, 88.5f});
  CHECK(big.data_ptr()[0] == inf);
  CHECK(big.data_ptr()[1] == 0.0f);
  CHECK(std::abs(big.data_ptr()[2] / std::exp(88.5) - 1) < 1e-6);
}

TEST_CASE("vector path handles strided, broadcast and bf16 operands", "[fuse][vecmath]") {
  torchtpu::Generator gen(7);
  const Tensor<float> a = torchtpu::randn<float>({37, 53}, gen);
  const Tensor<float> b = torchtpu::randn<float>({53}, gen);
  // transposed (gathered) operand, broadcast row, scalar
  const Tensor<float> y = torchtpu::tanh(a.t() * 2.0) + b.unsqueeze(1).expand({53, 37}) * torchtpu::sigmoid(a.t());
  for (int64_t i = 0; i < 53; ++i)
    for (int64_t j = 0; j < 37; ++j) {
      const double av = a.data_ptr()[j * 53 + i];
      const double r = std::tanh(av * 2) + b.data_ptr()[i] / (1 + std::exp(-av));
      CHECK(std::abs(y.data_ptr()[i * 37 + j] - r) < 1e-5 * (1 + std::abs(r)));
    }
  // strided destination
  Tensor<float> d = torchtpu::zeros<float>({53, 74});
  d.slice(1, 0, 74, 2) = torchtpu::exp(a.t());
  CHECK(std::abs(d.data_ptr()[2] - std::exp(a.data_ptr()[53])) < 1e-5f * std::exp(a.data_ptr()[53]));
  CHECK(d.data_ptr()[1] == 0.0f);
  // bf16: each op rounds to bf16 like the scalar path
  const Tensor<torchtpu::bfloat16> h = a.to<torchtpu::bfloat16>().eval();
  const Tensor<torchtpu::bfloat16> hy = h * h + h;
  for (int64_t i = 0; i < h.numel(); ++i) {
    const float hv = float(h.data_ptr()[i]);
    const torchtpu::bfloat16 sq(hv * hv);
    const torchtpu::bfloat16 r(float(sq) + hv);
    CHECK(hy.data_ptr()[i].bits == r.bits);
  }
}

TEST_CASE("vector tanh: every float in [7, 10] stays within [-1, 1] and accurate; odd; signed zero", "[fuse][vecmath]") {
  // The rational form x·P(x²)/Q(x²) can round above 1 where tanh(x) is within an ulp of 1
  // (|x| in [8.3, 9] before the final clamp): walk every float there, both signs.
  std::vector<float> v;
  for (float f = 7.0f; f <= 10.0f; f = std::nextafter(f, 11.0f)) v.push_back(f);
  const int64_t n = int64_t(v.size());
  Tensor<float> x = Tensor<float>::empty({2 * n});
  for (int64_t i = 0; i < n; ++i) {
    x.data_ptr()[i] = v[size_t(i)];
    x.data_ptr()[n + i] = -v[size_t(i)];
  }
  const Tensor<float> t = torchtpu::tanh(x);
  double worst = 0;
  int64_t above = 0, not_odd = 0;
  for (int64_t i = 0; i < 2 * n; ++i) {
    const double r = std::tanh(double(x.data_ptr()[i]));
    worst = std::max(worst, std::abs(double(t.data_ptr()[i]) - r) / std::abs(r));
    above += std::abs(t.data_ptr()[i]) > 1.0f;
  }
  for (int64_t i = 0; i < n; ++i) not_odd += t.data_ptr()[i] != -t.data_ptr()[n + i];
  CHECK(above == 0);
  CHECK(not_odd == 0);
  CHECK(worst < 4e-7);
  const Tensor<float> z = torchtpu::tanh(Tensor<float>{0.0f, -0.0f, 1e-30f, 9.0f, 50.0f});
  CHECK(z.data_ptr()[0] == 0.0f);
  CHECK(std::signbit(z.data_ptr()[1]));
  CHECK(z.data_ptr()[2] == 1e-30f);  // tanh(x) = x below 2^-12 in float
  CHECK(std::abs(double(z.data_ptr()[3]) - std::tanh(9.0)) < 1e-7);
  CHECK(z.data_ptr()[4] == 1.0f);
}
