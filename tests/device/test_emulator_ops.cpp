// tests/device/test_emulator_ops.cpp — Builder programs executed on the TPU emulator, checked
// against values computed by hand or in float64 on the host.
#include <catch2/catch.hpp>  // TEST_CASE, CHECK

#include <cmath>   // std::exp, std::tanh, ...
#include <vector>  // std::vector

#include "emulator_fixture.hpp"  // ttest::run, HostTensor

using namespace ttest;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {
HostTensor f32(std::vector<int64_t> dims, std::vector<double> v) { return {ScalarType::Float, std::move(dims), std::move(v)}; }
void check_close(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK_THAT(got[i], WithinAbs(want[i], tol));
  }
}
}  // namespace

TEST_CASE("emulator: client reports an emulated TPU, XLA's CPU plugin its own platform", "[pjrt][emulator]") {
  auto c = device_client();
  if (on_emulator()) {
    CHECK(c->platform_name() == "tpu");
    CHECK(c->emulated());
    CHECK(c->platform_version().find("torchtpu-emulator") != std::string::npos);
    CHECK(c->device_kind() == "TPU emulator");
  } else {
    CHECK(c->platform_name() == "cpu");  // XLA's CPU platform (xla-cpu-pjrt 0.0.1)
    CHECK_FALSE(c->emulated());
    CHECK(c->device_kind() == "cpu");
  }
  REQUIRE(!c->addressable_devices().empty());
  CHECK(c->devices()[0].id == 0);
  CHECK(pjrt::Client::get(test_kind()) == c);  // one client per plugin per process
}

TEST_CASE("emulator: buffers round-trip every dtype", "[pjrt][emulator]") {
  auto c = device_client();
  for (ScalarType t : {ScalarType::Bool, ScalarType::UInt8, ScalarType::Int32, ScalarType::Int64, ScalarType::Half,
                       ScalarType::BFloat16, ScalarType::Float, ScalarType::Double}) {
    HostTensor h{t, {2, 2}, {1, 0, 1, 1}};
    if (t != ScalarType::Bool) h.values = {1, 2, 3, 100};
    auto b = to_device(c, h);
    CHECK(b.dtype() == t);
    CHECK(b.dims() == std::vector<int64_t>{2, 2});
    CHECK(to_host(b).values == h.values);
  }
  HostTensor empty{ScalarType::Float, {0, 3}, {}};
  CHECK(to_host(to_device(c, empty)).values.empty());
}

TEST_CASE("emulator: elementwise binary ops", "[pjrt][emulator]") {
  const std::vector<double> x = {1.5, -2.0, 3.25, 7.0}, y = {0.5, 4.0, -1.25, 2.0};
  for (const char* op : {"add", "subtract", "multiply", "divide", "maximum", "minimum", "remainder", "power", "atan2"}) {
    shlo::Builder b;
    auto a = b.parameter(ScalarType::Float, {4}), c = b.parameter(ScalarType::Float, {4});
    b.set_results({b.binary(op, a, c)});
    auto out = run(b, {f32({4}, x), f32({4}, y)});
    std::vector<double> want;
    for (size_t i = 0; i < 4; ++i) {
      const std::string o = op;
      const double p = x[i], q = y[i];
      const double r = o == "add" ? p + q : o == "subtract" ? p - q : o == "multiply" ? p * q : o == "divide" ? p / q
                     : o == "maximum" ? std::max(p, q) : o == "minimum" ? std::min(p, q) : o == "remainder" ? std::fmod(p, q)
                     : o == "power" ? std::pow(p, q) : std::atan2(p, q);
      want.push_back(static_cast<float>(r));
    }
    INFO(op);
    check_close(out[0].values, want, 1e-6);
  }
}

TEST_CASE("emulator: integer arithmetic wraps like int32 and bitwise ops work", "[pjrt][emulator]") {
  shlo::Builder b;
  auto a = b.parameter(ScalarType::Int32, {3}), c = b.parameter(ScalarType::Int32, {3});
  b.set_results({b.add(a, c), b.divide(a, c), b.binary("remainder", a, c), b.binary("and", a, c)});
  auto out = run(b, {{ScalarType::Int32, {3}, {2147483647, -7, 12}}, {ScalarType::Int32, {3}, {1, 2, 5}}});
  CHECK(out[0].values == std::vector<double>{-2147483648.0, -5, 17});
  CHECK(out[1].values == std::vector<double>{2147483647, -3, 2});  // truncating division
  CHECK(out[2].values == std::vector<double>{0, -1, 2});
  CHECK(out[3].values == std::vector<double>{1, 0, 4});  // -7 & 2 == 0 in two's complement
}

TEST_CASE("emulator: elementwise unary ops", "[pjrt][emulator]") {
  const std::vector<double> x = {0.25, 1.5, 2.0, 0.75};
  struct U { const char* name; double (*f)(double); };
  const U ops[] = {{"exponential", [](double v) { return std::exp(v); }},
                   {"exponential_minus_one", [](double v) { return std::expm1(v); }},
                   {"log", [](double v) { return std::log(v); }},
                   {"log_plus_one", [](double v) { return std::log1p(v); }},
                   {"sqrt", [](double v) { return std::sqrt(v); }},
                   {"rsqrt", [](double v) { return 1 / std::sqrt(v); }},
                   {"tanh", [](double v) { return std::tanh(v); }},
                   {"logistic", [](double v) { return 1 / (1 + std::exp(-v)); }},
                   {"sine", [](double v) { return std::sin(v); }},
                   {"cosine", [](double v) { return std::cos(v); }},
                   {"floor", [](double v) { return std::floor(v); }},
                   {"ceil", [](double v) { return std::ceil(v); }},
                   {"negate", [](double v) { return -v; }},
                   {"abs", [](double v) { return std::fabs(v); }},
                   {"sign", [](double v) { return v > 0 ? 1.0 : v < 0 ? -1.0 : 0.0; }},
                   {"erf", [](double v) { return std::erf(v); }}};
  for (const U& u : ops) {
    shlo::Builder b;
    auto a = b.parameter(ScalarType::Float, {4});
    b.set_results({b.unary(u.name, a)});
    auto out = run(b, {f32({4}, x)});
    std::vector<double> want;
    for (double v : x) want.push_back(u.f(v));
    INFO(u.name);
    check_close(out[0].values, want, 1e-6);
  }
}

TEST_CASE("emulator: compare, select, clamp, convert", "[pjrt][emulator]") {
  shlo::Builder b;
  auto a = b.parameter(ScalarType::Float, {4}), c = b.parameter(ScalarType::Float, {4});
  auto gt = b.compare(shlo::CompareDirection::GT, a, c);
  auto sel = b.select(gt, a, c);
  auto lo = b.constant(-1.0, ScalarType::Float), hi = b.constant(1.0, ScalarType::Float);
  auto cl = b.clamp(lo, a, hi);
  auto ci = b.convert(a, ScalarType::Int32);
  auto cb = b.convert(a, ScalarType::BFloat16);
  b.set_results({gt, sel, cl, ci, cb});
  auto out = run(b, {f32({4}, {-2.7, 0.5, 3.9, 1.00390625}), f32({4}, {0, 1, 2, 3})});
  CHECK(out[0].dtype == ScalarType::Bool);
  CHECK(out[0].values == std::vector<double>{0, 0, 1, 0});
  check_close(out[1].values, {0, 1, 3.9000000953674316, 3}, 1e-7);
  check_close(out[2].values, {-1, 0.5, 1, 1}, 0);
  CHECK(out[3].values == std::vector<double>{-2, 0, 3, 1});  // truncation toward zero
  CHECK(out[4].dtype == ScalarType::BFloat16);
  check_close(out[4].values, {bf16_round(-2.7), 0.5, bf16_round(3.9), 1.0}, 0);  // 1+2^-8 ties to even
}

TEST_CASE("emulator: bf16 tensors compute natively and round each result", "[pjrt][emulator]") {
  shlo::Builder b;
  auto a = b.parameter(ScalarType::BFloat16, {3}), c = b.parameter(ScalarType::BFloat16, {3});
  b.set_results({b.add(a, c), b.exp(a)});
  HostTensor x{ScalarType::BFloat16, {3}, {1.0, 256.0, 0.5}}, y{ScalarType::BFloat16, {3}, {0.00390625, 1.0, 0.25}};
  auto out = run(b, {x, y});
  CHECK(out[0].dtype == ScalarType::BFloat16);
  check_close(out[0].values, {1.0, 256.0, 0.75}, 0);  // 1+2^-8 and 257 are not bf16 values
  check_close(out[1].values, {bf16_round(std::exp(1.0)), bf16_round(std::exp(256.0)), bf16_round(std::exp(0.5))}, 0);
}

TEST_CASE("emulator: broadcast, reshape, transpose, slice, concatenate, pad, iota", "[pjrt][emulator]") {
  shlo::Builder b;
  auto v = b.parameter(ScalarType::Float, {3});
  auto m = b.parameter(ScalarType::Float, {2, 3});
  auto bc = b.broadcast_in_dim(v, {2, 3}, {1});
  auto rs = b.reshape(m, {3, 2});
  auto tr = b.transpose(m, {1, 0});
  auto sl = b.slice(m, {0, 1}, {2, 3});
  auto sl2 = b.slice(m, {0, 0}, {2, 3}, {1, 2});
  auto cc = b.concatenate({m, bc}, 0);
  auto zero = b.constant(0.0, ScalarType::Float);
  auto pd = b.pad(v, zero, {1}, {2}, {1});
  auto io = b.iota(ScalarType::Int32, {2, 3}, 1);
  b.set_results({bc, rs, tr, sl, sl2, cc, pd, io});
  auto out = run(b, {f32({3}, {1, 2, 3}), f32({2, 3}, {1, 2, 3, 4, 5, 6})});
  CHECK(out[0].values == std::vector<double>{1, 2, 3, 1, 2, 3});
  CHECK(out[1].dims == std::vector<int64_t>{3, 2});
  CHECK(out[1].values == std::vector<double>{1, 2, 3, 4, 5, 6});
  CHECK(out[2].values == std::vector<double>{1, 4, 2, 5, 3, 6});
  CHECK(out[3].values == std::vector<double>{2, 3, 5, 6});
  CHECK(out[4].values == std::vector<double>{1, 3, 4, 6});
  CHECK(out[5].dims == std::vector<int64_t>{4, 3});
  CHECK(out[5].values == std::vector<double>{1, 2, 3, 4, 5, 6, 1, 2, 3, 1, 2, 3});
  CHECK(out[6].values == std::vector<double>{0, 1, 0, 2, 0, 3, 0, 0});
  CHECK(out[7].values == std::vector<double>{0, 1, 2, 0, 1, 2});
}

TEST_CASE("emulator: dense constants and multiple results", "[pjrt][emulator]") {
  shlo::Builder b;
  const std::vector<double> data = {1, -2, 3.5, 4};
  auto k = b.constant_data(ScalarType::Float, {2, 2}, data);
  auto x = b.parameter(ScalarType::Float, {2, 2});
  b.set_results({b.add(k, x), k});
  auto out = run(b, {f32({2, 2}, {1, 1, 1, 1})});
  REQUIRE(out.size() == 2);
  CHECK(out[0].values == std::vector<double>{2, -1, 4.5, 5});
  CHECK(out[1].values == data);
}

TEST_CASE("emulator: reductions", "[pjrt][emulator]") {
  shlo::Builder b;
  auto x = b.parameter(ScalarType::Float, {2, 3});
  auto z = b.constant(0.0, ScalarType::Float), one = b.constant(1.0, ScalarType::Float);
  auto ninf = b.constant(-INFINITY, ScalarType::Float), pinf = b.constant(INFINITY, ScalarType::Float);
  auto p = b.parameter(ScalarType::Bool, {4});
  auto t = b.constant(1.0, ScalarType::Bool), f = b.constant(0.0, ScalarType::Bool);
  b.set_results({b.reduce(x, z, shlo::ReduceOp::Add, {1}), b.reduce(x, ninf, shlo::ReduceOp::Max, {0}),
                 b.reduce(x, pinf, shlo::ReduceOp::Min, {0, 1}), b.reduce(x, one, shlo::ReduceOp::Mul, {1}),
                 b.reduce(p, t, shlo::ReduceOp::And, {0}), b.reduce(p, f, shlo::ReduceOp::Or, {0})});
  auto out = run(b, {f32({2, 3}, {1, 5, -2, 4, 0.5, 3}), {ScalarType::Bool, {4}, {1, 0, 1, 1}}});
  CHECK(out[0].values == std::vector<double>{4, 7.5});
  CHECK(out[1].values == std::vector<double>{4, 5, 3});
  CHECK(out[2].dims.empty());
  CHECK(out[2].values == std::vector<double>{-2});
  CHECK(out[3].values == std::vector<double>{-10, 6});
  CHECK(out[4].values == std::vector<double>{0});
  CHECK(out[5].values == std::vector<double>{1});
}

TEST_CASE("emulator: reduce_window max and average pooling with padding", "[pjrt][emulator]") {
  shlo::Builder b;
  auto x = b.parameter(ScalarType::Float, {1, 1, 4, 4});
  auto ninf = b.constant(-INFINITY, ScalarType::Float), z = b.constant(0.0, ScalarType::Float);
  auto mx = b.reduce_window(x, ninf, shlo::ReduceOp::Max, {1, 1, 2, 2}, {1, 1, 2, 2});
  auto sm = b.reduce_window(x, z, shlo::ReduceOp::Add, {1, 1, 3, 3}, {1, 1, 2, 2}, {{0, 0}, {0, 0}, {1, 1}, {1, 1}});
  b.set_results({mx, sm});
  std::vector<double> v(16);
  for (int i = 0; i < 16; ++i) v[static_cast<size_t>(i)] = i;
  auto out = run(b, {f32({1, 1, 4, 4}, v)});
  CHECK(out[0].values == std::vector<double>{5, 7, 13, 15});
  // window centred on (0,0),(0,2),(2,0),(2,2) with zero padding
  CHECK(out[1].values == std::vector<double>{0 + 1 + 4 + 5, 1 + 2 + 3 + 5 + 6 + 7, 4 + 5 + 8 + 9 + 12 + 13,
                                             5 + 6 + 7 + 9 + 10 + 11 + 13 + 14 + 15});
}

namespace {
/// float64 reference convolution, NCHW / OIHW, with bf16-rounded operands when `bf16`.
std::vector<double> conv_ref(const std::vector<double>& x, const std::vector<double>& w, int64_t N, int64_t C, int64_t H,
                             int64_t W, int64_t O, int64_t KH, int64_t KW, int64_t stride, int64_t pad, int64_t dil,
                             int64_t groups, int64_t OH, int64_t OW, bool bf16) {
  std::vector<double> out(static_cast<size_t>(N * O * OH * OW), 0.0);
  const int64_t Cg = C / groups, Og = O / groups;
  auto rd = [bf16](double v) { return bf16 ? bf16_round(v) : static_cast<double>(static_cast<float>(v)); };
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = 0;
          const int64_t g = o / Og;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw) {
                const int64_t ih = oh * stride + kh * dil - pad, iw = ow * stride + kw * dil - pad;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc += rd(x[static_cast<size_t>(((n * C + g * Cg + c) * H + ih) * W + iw)]) *
                       rd(w[static_cast<size_t>(((o * Cg + c) * KH + kh) * KW + kw)]);
              }
          out[static_cast<size_t>(((n * O + o) * OH + oh) * OW + ow)] = acc;
        }
  return out;
}
}  // namespace

TEST_CASE("emulator: convolution matches a float64 reference", "[pjrt][emulator]") {
  struct Case { int64_t N, C, H, W, O, K, stride, pad, dil, groups; };
  for (const Case& k : {Case{2, 3, 8, 8, 4, 3, 1, 1, 1, 1}, Case{1, 4, 9, 7, 6, 3, 2, 0, 1, 2},
                        Case{1, 2, 8, 8, 2, 3, 1, 2, 2, 2}, Case{2, 3, 5, 5, 5, 1, 1, 0, 1, 1}}) {
    shlo::Builder b;
    auto x = b.parameter(ScalarType::Float, {k.N, k.C, k.H, k.W});
    auto w = b.parameter(ScalarType::Float, {k.O, k.C / k.groups, k.K, k.K});
    shlo::ConvOptions o;
    o.window_strides = {k.stride, k.stride};
    o.padding = {{k.pad, k.pad}, {k.pad, k.pad}};
    o.rhs_dilation = {k.dil, k.dil};
    o.feature_group_count = k.groups;
    o.precision = shlo::Precision::Highest;
    auto y = b.convolution(x, w, o);
    b.set_results({y});
    const auto xv = random_values(static_cast<size_t>(k.N * k.C * k.H * k.W), 7);
    const auto wv = random_values(static_cast<size_t>(k.O * (k.C / k.groups) * k.K * k.K), 11);
    auto out = run(b, {f32(x.dims, xv), f32(w.dims, wv)});
    REQUIRE(out[0].dims == y.dims);
    const auto want = conv_ref(xv, wv, k.N, k.C, k.H, k.W, k.O, k.K, k.K, k.stride, k.pad, k.dil, k.groups, y.dims[2],
                               y.dims[3], false);
    INFO("conv case C=" << k.C << " groups=" << k.groups << " stride=" << k.stride);
    CHECK(max_abs_diff(out[0].values, want) < 1e-5);
  }
}

TEST_CASE("emulator: batched dot_general", "[pjrt][emulator]") {
  shlo::Builder b;
  auto p = b.parameter(ScalarType::Float, {2, 2, 3}), q = b.parameter(ScalarType::Float, {2, 3, 2});
  b.set_results({b.dot_general(p, q, {{0}, {0}, {2}, {1}}, shlo::Precision::Highest)});
  auto out = run(b, {f32({2, 2, 3}, {1, 2, 3, 4, 5, 6, 1, 0, 0, 0, 1, 0}), f32({2, 3, 2}, {1, 0, 0, 1, 1, 1, 2, 3, 4, 5, 6, 7})});
  CHECK(out[0].dims == std::vector<int64_t>{2, 2, 2});
  CHECK(out[0].values == std::vector<double>{4, 5, 10, 11, 2, 3, 4, 5});
}

TEST_CASE("emulator: integer dot_general is exact", "[pjrt][emulator]") {
  shlo::Builder b;
  auto p = b.parameter(ScalarType::Int32, {1, 2}), q = b.parameter(ScalarType::Int32, {2, 1});
  b.set_results({b.dot_general(p, q, {{}, {}, {1}, {0}})});
  auto out = run(b, {{ScalarType::Int32, {1, 2}, {100000, 3}}, {ScalarType::Int32, {2, 1}, {20000, 7}}});
  CHECK(out[0].values == std::vector<double>{2000000021.0});
}

TEST_CASE("emulator: fused elementwise regions over many chunks match op-by-op results", "[pjrt][emulator]") {
  const int64_t n = 5003;  // several 2048-element chunks and a ragged tail
  shlo::Builder b;
  auto x = b.parameter(ScalarType::Float, {n}), y = b.parameter(ScalarType::Float, {n});
  auto a = b.add(x, y);
  auto e = b.exp(a);
  auto m = b.multiply(e, x);
  auto one = b.constant(1.0, ScalarType::Float, {n});
  auto sel = b.select(b.compare(shlo::CompareDirection::GT, m, one), m, a);
  auto t = b.tanh(sel);
  auto z = b.constant(0.0, ScalarType::Float);
  auto total = b.reduce(e, z, shlo::ReduceOp::Add, {0});  // `e` is also needed outside the region
  b.set_results({t, a, total});
  const auto xv = random_values(static_cast<size_t>(n), 21), yv = random_values(static_cast<size_t>(n), 22);
  auto out = run(b, {f32({n}, xv), f32({n}, yv)});
  std::vector<double> want_t, want_a;
  double want_total = 0;
  auto f = [](double v) { return static_cast<double>(static_cast<float>(v)); };
  for (size_t i = 0; i < xv.size(); ++i) {
    const double xa = f(xv[i]), ya = f(yv[i]);
    const double av = f(xa + ya), ev = f(std::exp(av)), mv = f(ev * xa);
    const double sv = mv > 1 ? mv : av;
    want_t.push_back(f(std::tanh(sv)));
    want_a.push_back(av);
    want_total += ev;
  }
  CHECK(max_abs_diff(out[0].values, want_t) < 1e-6);
  CHECK(out[1].values == want_a);
  CHECK_THAT(out[2].values[0], WithinRel(want_total, 1e-6));
}

TEST_CASE("emulator: empty tensors", "[pjrt][emulator]") {
  shlo::Builder b;
  auto x = b.parameter(ScalarType::Float, {0, 3});
  auto w = b.parameter(ScalarType::Float, {3, 2});
  auto z = b.constant(0.0, ScalarType::Float);
  b.set_results({b.exp(b.add(x, x)), b.reduce(x, z, shlo::ReduceOp::Add, {0}), b.dot_general(x, w, {{}, {}, {1}, {0}}),
                 b.dot_general(b.transpose(x, {1, 0}), b.constant(1.0, ScalarType::Float, {0, 2}), {{}, {}, {1}, {0}})});
  auto out = run(b, {f32({0, 3}, {}), f32({3, 2}, {1, 2, 3, 4, 5, 6})});
  CHECK(out[0].dims == std::vector<int64_t>{0, 3});
  CHECK(out[0].values.empty());
  CHECK(out[1].values == std::vector<double>{0, 0, 0});
  CHECK(out[2].dims == std::vector<int64_t>{0, 2});
  CHECK(out[3].values == std::vector<double>{0, 0, 0, 0, 0, 0});  // contraction over an empty axis
}
