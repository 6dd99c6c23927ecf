// tests/jit/test_jit_graph.cpp — the run-time graph without libtorch: CPU kernels against
// values worked out by hand or by a naive float64 loop, the registry (register_op, missing
// ops), activation fusion, and shape arithmetic on int values.
#include <catch2/catch.hpp>  // TEST_CASE, REQUIRE, CHECK

#include <algorithm>  // std::max, std::equal
#include <cmath>   // std::sqrt, std::tanh
#include <cstdint>  // int64_t
#include <limits>  // std::numeric_limits
#include <numbers>  // std::numbers::pi
#include <string>  // std::string
#include <vector>  // std::vector

#include <torchtpu/core/factories.hpp>  // from_data, rand, Generator
#include <torchtpu/jit/graph.hpp>       // Graph, registry, register_op
#include <torchtpu/jit/kernels.hpp>     // kernels:: (called directly below)
#include <torchtpu/ops/conv.hpp>        // conv2d
#include <torchtpu/ops/library.hpp>     // ops::detail::to_dtype
#include <torchtpu/ops/pool.hpp>        // max_pool2d, avg_pool2d, adaptive_avg_pool2d

namespace {

using torchtpu::Dims;
using torchtpu::jit::Epilogue;
using torchtpu::jit::FloatTensor;
using torchtpu::jit::Graph;
using torchtpu::jit::Mode;
using torchtpu::jit::Value;

FloatTensor t(std::vector<float> v, Dims s) { return torchtpu::from_data(v.data(), s); }

std::vector<float> values(const FloatTensor& x) {
  const FloatTensor c = x.contiguous();
  return std::vector<float>(c.data_ptr(), c.data_ptr() + c.numel());
}

/// Naive float64 NCHW convolution, the reference for the im2col and depthwise paths.
std::vector<double> naive_conv(const FloatTensor& x, const FloatTensor& w, const FloatTensor& b, int64_t s,
                               int64_t p, int64_t d, int64_t groups, int64_t& OH, int64_t& OW) {
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t OC = w.size(0), Cg = w.size(1), KH = w.size(2), KW = w.size(3), OCg = OC / groups;
  OH = (H + 2 * p - d * (KH - 1) - 1) / s + 1;
  OW = (W + 2 * p - d * (KW - 1) - 1) / s + 1;
  std::vector<double> out;
  (void)C;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oc = 0; oc < OC; ++oc)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = b.at(oc);
          const int64_t g = oc / OCg;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t i = 0; i < KH; ++i)
              for (int64_t j = 0; j < KW; ++j) {
                const int64_t ih = oh * s - p + i * d, iw = ow * s - p + j * d;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc += double(x.at(n, g * Cg + c, ih, iw)) * double(w.at(oc, c, i, j));
              }
          out.push_back(acc);
        }
  return out;
}

}  // namespace

namespace {
/// Runs registry entry `name` on `args` with `ep` fused; its (single) output.
FloatTensor run_entry(const char* name, std::vector<Value> args, Epilogue ep = {}) {
  const auto op = torchtpu::jit::registry().find(name);
  REQUIRE(op);
  std::vector<const Value*> in;
  for (const Value& v : args) in.push_back(&v);
  std::vector<Value> out(1);
  torchtpu::jit::OpContext ctx{in, out, ep};
  op->kernel(ctx);
  return out[0].tensor();
}
}  // namespace

// Convolution and pooling: the operator library (ops/conv.hpp, ops/pool.hpp), reached by
// model graphs through the registry; tests/ops/test_conv.cpp covers them in every dtype.
TEST_CASE("jit: conv2d by hand, the fused epilogue through the registry", "[jit]") {
  using V = std::vector<int64_t>;
  const FloatTensor x = t({1, 2, 3, 4, 5, 6, 7, 8, 9}, Dims{1, 1, 3, 3});
  const FloatTensor w = t({1, 1, 1, 1}, Dims{1, 1, 2, 2});
  CHECK(values(torchtpu::conv2d(x, w)) == std::vector<float>{12, 16, 24, 28});
  // padding 1, stride 2: windows start at -1 and 1 in both directions.
  CHECK(values(torchtpu::conv2d(x, w, FloatTensor(), {2}, {1})) == std::vector<float>{1, 5, 11, 28});
  // bias and a fused ReLU epilogue (aten::_convolution accepts one)
  const FloatTensor b = t({-20}, Dims{1});
  const auto conv = torchtpu::jit::registry().find("aten::_convolution");
  REQUIRE(conv);
  CHECK(conv->accepts_epilogue);
  CHECK(torchtpu::jit::registry().find("aten::conv2d")->accepts_epilogue);
  CHECK(!torchtpu::jit::registry().find("aten::max_pool2d")->accepts_epilogue);
  auto args = [&](const FloatTensor& wt) {
    return std::vector<Value>{Value(x), Value(wt), Value(b), Value(V{1, 1}), Value(V{0, 0}), Value(V{1, 1}), Value(false),
                              Value(V{0, 0}), Value(int64_t(1)), Value(false), Value(false), Value(true), Value(true)};
  };
  CHECK(values(run_entry("aten::_convolution", args(w))) == std::vector<float>{-8, -4, 4, 8});
  CHECK(values(run_entry("aten::_convolution", args(w), Epilogue{Epilogue::Kind::Relu})) == std::vector<float>{0, 0, 4, 8});
  CHECK(values(run_entry("aten::_convolution", args(w), Epilogue{Epilogue::Kind::Clamp, -5, 5})) ==
        std::vector<float>{-5, -4, 4, 5});
  // depthwise (window kernel) with the epilogue applied after it
  const FloatTensor x2 = t({1, 2, 3, 4, 5, 6, 7, 8, 9, -1, -2, -3, -4, -5, -6, -7, -8, -9}, Dims{1, 2, 3, 3});
  const FloatTensor wd = t({1, 1, 1, 1, 1, 1, 1, 1}, Dims{2, 1, 2, 2});
  const std::vector<Value> dw = {Value(x2), Value(wd), Value(), Value(V{1, 1}), Value(V{0, 0}), Value(V{1, 1}), Value(false),
                                 Value(V{0, 0}), Value(int64_t(2)), Value(false), Value(false), Value(true), Value(true)};
  CHECK(values(run_entry("aten::_convolution", dw, Epilogue{Epilogue::Kind::Relu})) ==
        std::vector<float>{12, 16, 24, 28, 0, 0, 0, 0});
  CHECK_THROWS_AS(torchtpu::conv2d(x, t({1, 1}, Dims{1, 2, 1, 1})), torchtpu::ShapeError);
}

TEST_CASE("jit: grouped, depthwise, strided and dilated conv2d vs a float64 loop", "[jit]") {
  torchtpu::Generator gen(7);
  struct Case { int64_t C, OC, groups, k, s, p, d; };
  for (const Case c : {Case{4, 6, 1, 3, 1, 1, 1}, Case{4, 6, 2, 3, 2, 1, 1}, Case{6, 6, 6, 3, 1, 1, 1},
                       Case{6, 12, 6, 3, 2, 1, 1}, Case{3, 4, 1, 3, 1, 2, 2}, Case{8, 4, 1, 1, 1, 0, 1}}) {
    INFO("C=" << c.C << " OC=" << c.OC << " groups=" << c.groups << " k=" << c.k << " s=" << c.s);
    const FloatTensor x = torchtpu::randn<float>(Dims{2, c.C, 7, 6}, gen);
    const FloatTensor w = torchtpu::randn<float>(Dims{c.OC, c.C / c.groups, c.k, c.k}, gen);
    const FloatTensor b = torchtpu::randn<float>(Dims{c.OC}, gen);
    int64_t OH, OW;
    const auto ref = naive_conv(x, w, b, c.s, c.p, c.d, c.groups, OH, OW);
    const FloatTensor y = torchtpu::conv2d(x, w, b, {c.s}, {c.p}, {c.d}, c.groups);
    REQUIRE(y.sizes() == Dims{2, c.OC, OH, OW});
    const auto got = values(y);
    for (size_t i = 0; i < ref.size(); ++i) CHECK(got[i] == Approx(ref[i]).margin(1e-4));
  }
}

TEST_CASE("jit: pooling by hand", "[jit]") {
  const FloatTensor x = t({1, 2, 3, 4, 5, 6, 7, 8, 9}, Dims{1, 1, 3, 3});
  CHECK(values(torchtpu::max_pool2d(x, {2}, {2}, {0}, {1}, false)) == std::vector<float>{5});
  CHECK(values(torchtpu::max_pool2d(x, {2}, {2}, {0}, {1}, true)) == std::vector<float>{5, 6, 8, 9});
  // kernel 3, stride 3, padding 1: one window over rows/cols -1..1, i.e. {1, 2, 4, 5}
  CHECK(values(torchtpu::max_pool2d(x, {3}, {}, {1}, {1}, false)) == std::vector<float>{5});
  // avg, kernel 2 stride 2 padding 1: the corner window covers one real element.
  CHECK(values(torchtpu::avg_pool2d(x, {2}, {2}, {1}, false, true)) == std::vector<float>{0.25f, 1.25f, 2.75f, 7.0f});
  CHECK(values(torchtpu::avg_pool2d(x, {2}, {2}, {1}, false, false)) == std::vector<float>{1, 2.5f, 5.5f, 7});
  CHECK(values(torchtpu::adaptive_avg_pool2d(x, {2, 2})) == std::vector<float>{3, 4, 6, 7});
  CHECK(values(torchtpu::adaptive_avg_pool2d(x, {1})) == std::vector<float>{5});
  // through the registry: stride [] is the kernel size
  using V = std::vector<int64_t>;
  CHECK(values(run_entry("aten::max_pool2d", {Value(x), Value(V{2}), Value(V{}), Value(V{0}), Value(V{1}), Value(true)})) ==
        std::vector<float>{5, 6, 8, 9});
}

TEST_CASE("jit kernels: layer_norm, batch_norm, cat", "[jit]") {
  // aten::layer_norm and aten::batch_norm through the registry: the operator library's
  // LayerNormOp and BatchNormOp (ops/norm.hpp); None for an absent weight or bias
  auto run_op = [](const char* name, std::vector<Value> args) {
    const auto op = torchtpu::jit::registry().find(name);
    REQUIRE(op);
    std::vector<const Value*> in;
    for (const Value& v : args) in.push_back(&v);
    std::vector<Value> out(1);
    torchtpu::jit::OpContext ctx{in, out, {}};
    op->kernel(ctx);
    return out[0].tensor();
  };
  const FloatTensor x = t({1, 2, 3, 4, 2, 2, 2, 2}, Dims{2, 4});
  const auto y = values(run_op("aten::layer_norm", {Value(x), Value(std::vector<int64_t>{4}), Value(), Value(), Value(1e-5),
                                                    Value(true)}));
  const double sd = std::sqrt(1.25 + 1e-5);
  CHECK(y[0] == Approx(-1.5 / sd));
  CHECK(y[3] == Approx(1.5 / sd));
  CHECK(y[4] == 0.0f);
  const FloatTensor mean = t({1, 2}, Dims{2}), var = t({4, 1}, Dims{2}), w = t({2, 1}, Dims{2}), b = t({0, 10}, Dims{2});
  const auto bn = values(run_op("aten::batch_norm", {Value(t({3, 5}, Dims{1, 2})), Value(w), Value(b), Value(mean), Value(var),
                                                     Value(false), Value(0.1), Value(0.0), Value(true)}));
  CHECK(bn[0] == Approx(2.0));   // (3 - 1) / 2 * 2 + 0
  CHECK(bn[1] == Approx(13.0));  // (5 - 2) / 1 * 1 + 10
  // training=True: the batch statistics of each channel (running stats are not updated)
  const auto bt = values(run_op("aten::batch_norm", {Value(t({1, 5, 3, 7}, Dims{2, 2})), Value(), Value(b), Value(mean),
                                                     Value(var), Value(true), Value(0.1), Value(0.0), Value(true)}));
  CHECK(bt == std::vector<float>{-1, 9, 1, 11});  // channel 0: mean 2, var 1; channel 1: mean 6, var 1; + bias
  // aten::cat through the registry: the operator library's CatOp (ops/shape.hpp)
  const auto cat_op = torchtpu::jit::registry().find("aten::cat");
  REQUIRE(cat_op);
  auto run_cat = [&](std::vector<FloatTensor> l, int64_t d) {
    const Value list(std::move(l)), dim(d);
    std::vector<const Value*> in{&list, &dim};
    std::vector<Value> out(1);
    torchtpu::jit::OpContext ctx{in, out, {}};
    cat_op->kernel(ctx);
    return out[0].tensor();
  };
  const FloatTensor c = run_cat({t({1, 2}, Dims{1, 2}), t({3, 4, 5, 6}, Dims{2, 2})}, 0);
  CHECK(c.sizes() == Dims{3, 2});
  CHECK(values(c) == std::vector<float>{1, 2, 3, 4, 5, 6});
  CHECK_THROWS_AS(run_cat({t({1, 2}, Dims{1, 2}), t({3}, Dims{1, 1})}, 0), torchtpu::ShapeError);
}

TEST_CASE("jit graph: linear + relu fuses and gives the strict result", "[jit]") {
  Graph g;
  const int x = g.add_input("x");
  const int w = g.add_constant(Value(t({1, -1, 2, 0}, Dims{2, 2})));
  const int b = g.add_constant(Value(t({0.5f, -10}, Dims{2})));
  const int y = g.add_node("aten::linear", {x, w, b}, 1, "node 0")[0];
  const int r = g.add_node("aten::relu_", {y}, 1, "node 1")[0];
  g.set_outputs({r});
  g.finalize();
  CHECK(g.executed_nodes(Mode::Fused) == 1);
  CHECK(g.executed_nodes(Mode::Strict) == 2);
  // x @ w.T + b: [3, 1] -> [3*1 - 1*1 + 0.5, 2*3 + 0 - 10] = [2.5, -4] -> relu [2.5, 0]
  for (Mode m : {Mode::Fused, Mode::Strict, Mode::Debug}) {
    const auto out = g.run({Value(t({3, 1}, Dims{1, 2}))}, m);
    CHECK(values(out[0].tensor()) == std::vector<float>{2.5f, 0.0f});
  }
}

TEST_CASE("jit graph: a residual add (and the activation after it) fuses into the convolution", "[jit]") {
  // relu(conv2d(x, w, b, padding 1) + r): 3 -> 40 channels, 3x3, on a 5x6 image; r [1, 40, 5, 6]
  // (the epilogue runs on 32 channels, then 8: its second piece reads r at an offset)
  torchtpu::Generator gen(5);
  const FloatTensor x = torchtpu::randn<float>(Dims{1, 3, 5, 6}, gen), w = torchtpu::randn<float>(Dims{40, 3, 3, 3}, gen);
  const FloatTensor b = torchtpu::randn<float>(Dims{40}, gen), r = torchtpu::randn<float>(Dims{1, 40, 5, 6}, gen);
  int64_t OH = 0, OW = 0;
  const std::vector<double> conv = naive_conv(x, w, b, 1, 1, 1, 1, OH, OW);
  REQUIRE((OH == 5 && OW == 6));
  // the other operand: a second convolution's result (weights w2, b2), computed before
  const FloatTensor w2 = torchtpu::randn<float>(Dims{40, 3, 3, 3}, gen), b2 = torchtpu::randn<float>(Dims{40}, gen);
  const std::vector<double> conv2 = naive_conv(x, w2, b2, 1, 1, 1, 1, OH, OW);
  enum class Form { add, add_swapped, add_in_place_self_residual, alpha2, read_between, residual_later, add_in_place_two_convs };
  // a graph of the form; `ops` counts the nodes Fused mode runs
  auto build = [&](Graph& g, Form f) {
    const int xi = g.add_input("x"), ri = g.add_input("r");
    const int wi = g.add_constant(Value(w)), bi = g.add_constant(Value(b));
    const int one = g.add_constant(Value(std::vector<int64_t>{1, 1}));
    const int groups = g.add_constant(Value(int64_t(1)));
    int res = ri;
    if (f == Form::add_in_place_two_convs)
      res = g.add_node("aten::conv2d", {xi, g.add_constant(Value(w2)), g.add_constant(Value(b2)), one, one, one, groups}, 1,
                       "node 0a")[0];
    const int y = g.add_node("aten::conv2d", {xi, wi, bi, one, one, one, groups}, 1, "node 0")[0];
    if (f == Form::read_between) g.add_node("aten::mul", {ri, g.add_constant(Value(2.0))}, 1, "node 1");
    if (f == Form::residual_later)  // the other operand computed after the convolution
      res = g.add_node("aten::mul", {ri, g.add_constant(Value(1.0))}, 1, "node 1")[0];
    const int alpha = g.add_constant(Value(int64_t(f == Form::alpha2 ? 2 : 1)));
    int s;
    if (f == Form::add_swapped) s = g.add_node("aten::add", {res, y, alpha}, 1, "node 2")[0];
    else if (f == Form::add_in_place_self_residual || f == Form::add_in_place_two_convs)
      s = g.add_node("aten::add_", {res, y, alpha}, 1, "node 2")[0];
    else s = g.add_node("aten::add", {y, res, alpha}, 1, "node 2")[0];
    g.set_outputs({g.add_node("aten::relu", {s}, 1, "node 3")[0]});
    g.finalize();
  };
  for (Form f : {Form::add, Form::add_swapped, Form::add_in_place_self_residual, Form::alpha2, Form::read_between,
                 Form::residual_later, Form::add_in_place_two_convs}) {
    CAPTURE(int(f));
    Graph g;
    build(g, f);
    const bool fuses = f == Form::add || f == Form::add_swapped || f == Form::add_in_place_two_convs;
    // fused: the convolution(s) alone; else also the add (relu fused or not) and the mul
    const size_t convs = f == Form::add_in_place_two_convs ? 2 : 1;
    CHECK((g.executed_nodes(Mode::Fused) == convs) == fuses);
    const double alpha = f == Form::alpha2 ? 2.0 : 1.0;
    std::vector<float> want;
    for (size_t i = 0; i < conv.size(); ++i) {
      const double other = f == Form::add_in_place_two_convs ? double(float(conv2[i])) : double(r.data_ptr()[i]);
      want.push_back(float(std::max(0.0, conv[i] + alpha * other)));
    }
    const FloatTensor rc = FloatTensor(r.clone());
    const std::vector<float> strict = values(g.run({Value(x), Value(rc)}, Mode::Strict)[0].tensor());
    const FloatTensor rf = FloatTensor(r.clone());
    const std::vector<float> fused = values(g.run({Value(x), Value(rf)}, Mode::Fused)[0].tensor());
    CHECK(fused == strict);  // the same float32 operations, in the same order
    for (size_t i = 0; i < want.size(); ++i) CHECK(std::abs(fused[i] - want[i]) <= 1e-5f * (1 + std::abs(want[i])));
  }
  // fused at load time, shapes and dtypes seen at run time: a broadcast residual [40, 1, 1] and
  // a float64 one (the sum promoted to float64) take aten::add after the convolution
  Graph g;
  build(g, Form::add);
  REQUIRE(g.executed_nodes(Mode::Fused) == 1u);
  const FloatTensor rb = torchtpu::randn<float>(Dims{40, 1, 1}, gen);
  const std::vector<float> fb = values(g.run({Value(x), Value(rb)}, Mode::Fused)[0].tensor());
  REQUIRE(fb.size() == conv.size());
  for (size_t i = 0; i < conv.size(); ++i) {
    const double v = std::max(0.0, conv[i] + double(rb.data_ptr()[i / 30]));
    CHECK(std::abs(fb[i] - v) <= 1e-5 * (1 + std::abs(v)));
  }
  const torchtpu::Tensor<double> r64 = r.to<double>();
  const torchtpu::AnyTensor o64 = g.run({Value(x), Value(torchtpu::AnyTensor(r64))}, Mode::Fused)[0].any();
  CHECK(o64.dtype() == torchtpu::ScalarType::Double);
  const torchtpu::AnyTensor s64 = g.run({Value(x), Value(torchtpu::AnyTensor(r64))}, Mode::Strict)[0].any();
  const torchtpu::Tensor<double> a64 = o64.get<double>().contiguous(), b64 = s64.get<double>().contiguous();
  CHECK(std::equal(a64.data_ptr(), a64.data_ptr() + a64.numel(), b64.data_ptr()));
}

TEST_CASE("jit graph: pointwise -> depthwise -> pointwise convolutions run as one chain, band by band", "[jit]") {
  // MobileNet's inverted residual block: conv 1x1 (C -> E) + relu6, depthwise 3x3 (stride s) +
  // relu6, conv 1x1 (E -> O) [+ residual]; 60x40 planes with E = 64 make two or three bands of
  // rows (ops/conv.hpp conv_chain_band_bytes), so bands share expanded rows and cut the output
  torchtpu::Generator gen(11);
  const int64_t C = 16, E = 64, O = 16, H = 60, W = 40;
  const FloatTensor w1 = torchtpu::randn<float>(Dims{E, C, 1, 1}, gen), b1 = torchtpu::randn<float>(Dims{E}, gen);
  const FloatTensor w2 = torchtpu::randn<float>(Dims{E, 1, 3, 3}, gen), b2 = torchtpu::randn<float>(Dims{E}, gen);
  const FloatTensor w3 = torchtpu::randn<float>(Dims{O, E, 1, 1}, gen), b3 = torchtpu::randn<float>(Dims{O}, gen);
  enum class Form { full, full_residual, full_stride2, no_expand, no_project, expand_read_twice, residual_input };
  auto build = [&](Graph& g, Form f) {
    const int xi = g.add_input("x"), ri = f == Form::residual_input ? g.add_input("r") : -1;
    const int one = g.add_constant(Value(std::vector<int64_t>{1, 1})), zero = g.add_constant(Value(std::vector<int64_t>{0, 0}));
    const int s = g.add_constant(Value(std::vector<int64_t>{f == Form::full_stride2 ? 2 : 1, f == Form::full_stride2 ? 2 : 1}));
    const int g1 = g.add_constant(Value(int64_t(1))), gE = g.add_constant(Value(int64_t(E)));
    const int lo = g.add_constant(Value(0.0)), hi = g.add_constant(Value(6.0));
    auto relu6 = [&](int v, const char* loc) { return g.add_node("aten::hardtanh", {v, lo, hi}, 1, loc)[0]; };
    int y = xi, expand = -1;
    if (f != Form::no_expand) {
      expand = g.add_node("aten::conv2d", {xi, g.add_constant(Value(w1)), g.add_constant(Value(b1)), one, zero, one, g1}, 1, "node 0")[0];
      y = relu6(expand, "node 1");
    }
    y = relu6(g.add_node("aten::conv2d", {y, g.add_constant(Value(w2)), g.add_constant(Value(b2)), s, one, one, gE}, 1, "node 2")[0],
              "node 3");
    if (f != Form::no_project)
      y = g.add_node("aten::conv2d", {y, g.add_constant(Value(w3)), g.add_constant(Value(b3)), one, zero, one, g1}, 1, "node 4")[0];
    if (f == Form::full_residual) y = g.add_node("aten::add", {y, xi, g.add_constant(Value(int64_t(1)))}, 1, "node 5")[0];
    if (f == Form::residual_input) y = g.add_node("aten::add", {y, ri, g.add_constant(Value(int64_t(1)))}, 1, "node 5")[0];
    if (f == Form::expand_read_twice) g.set_outputs({y, expand});
    else g.set_outputs({y});
    g.finalize();
  };
  auto relu6 = [](std::vector<double> v, Dims shape) {
    std::vector<float> r;
    for (double e : v) r.push_back(float(std::clamp(e, 0.0, 6.0)));
    return torchtpu::from_data(r.data(), shape);
  };
  for (Form f : {Form::full, Form::full_residual, Form::full_stride2, Form::no_expand, Form::no_project, Form::expand_read_twice}) {
    CAPTURE(int(f));
    Graph g;
    build(g, f);
    // the three (or two) convolutions as one node, unless the expanded tensor is read elsewhere
    CHECK(g.executed_nodes(Mode::Fused) == (f == Form::expand_read_twice ? 3u : 1u));
    const int64_t n = 2;
    const FloatTensor x = torchtpu::randn<float>(Dims{n, f == Form::no_expand ? E : C, H, W}, gen);
    // float64 reference, layer by layer (each layer's result rounded to float32 as it is stored)
    int64_t OH = H, OW = W;
    FloatTensor cur = x;
    if (f != Form::no_expand) cur = relu6(naive_conv(cur, w1, b1, 1, 0, 1, 1, OH, OW), Dims{n, E, H, W});
    const int64_t st = f == Form::full_stride2 ? 2 : 1;
    const std::vector<double> d = naive_conv(cur, w2, b2, st, 1, 1, E, OH, OW);
    cur = relu6(d, Dims{n, E, OH, OW});
    std::vector<double> want;
    if (f == Form::no_project) {
      for (float v : values(cur)) want.push_back(v);
    } else {
      want = naive_conv(cur, w3, b3, 1, 0, 1, 1, OH, OW);
      if (f == Form::full_residual)
        for (size_t i = 0; i < want.size(); ++i) want[i] += double(x.data_ptr()[i]);
    }
    const std::vector<Value> strict = g.run({Value(x)}, Mode::Strict), fused = g.run({Value(x)}, Mode::Fused);
    const std::vector<float> fv = values(fused[0].tensor());
    CHECK(fv == values(strict[0].tensor()));  // the same float32 operations, in the same order
    REQUIRE(fv.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) CHECK(std::abs(fv[i] - want[i]) <= 1e-4 * (1 + std::abs(want[i])));
    if (f == Form::expand_read_twice) CHECK(values(fused[1].tensor()) == values(strict[1].tensor()));
  }
  // the chain declines what it does not run (the members run one by one, as the unfused graph):
  // a residual that broadcasts ([O, 1, 1]: aten::add after the last convolution), and an input
  // with fewer channels (the error names the failing member)
  Graph g;
  build(g, Form::residual_input);
  REQUIRE(g.executed_nodes(Mode::Fused) == 1u);
  const FloatTensor x = torchtpu::randn<float>(Dims{1, C, 30, 29}, gen), rb = torchtpu::randn<float>(Dims{O, 1, 1}, gen);
  const FloatTensor yb = g.run({Value(x), Value(rb)}, Mode::Fused)[0].tensor();
  CHECK(yb.sizes() == Dims{1, O, 30, 29});
  CHECK(values(yb) == values(g.run({Value(x), Value(rb)}, Mode::Strict)[0].tensor()));
  const FloatTensor r = torchtpu::randn<float>(Dims{1, O, 30, 29}, gen);  // fused into the chain (30x29: large enough)
  CHECK(values(g.run({Value(x), Value(r)}, Mode::Fused)[0].tensor()) == values(g.run({Value(x), Value(r)}, Mode::Strict)[0].tensor()));
  const FloatTensor bad = torchtpu::randn<float>(Dims{1, C - 1, 30, 29}, gen);
  CHECK_THROWS_WITH(g.run({Value(bad), Value(r)}, Mode::Fused), Catch::Contains("node 0") && Catch::Contains("aten::conv2d"));
  // the profile names the chain node
  const auto prof = g.profile(std::vector<Value>{Value(x), Value(r)}, 1);
  REQUIRE(prof.size() == 1u);
  CHECK(prof[0].kind == "torchtpu::conv_chain");
}

TEST_CASE("jit graph: profile times each node of the plan and names its inputs", "[jit]") {
  // linear + relu (fused into one node in Fused mode), then view: 2 nodes fused, 3 strict
  Graph g;
  const int x = g.add_input("x");
  const int w = g.add_constant(Value(t({1, -1, 2, 0}, Dims{2, 2})));
  const int y = g.add_node("aten::linear", {x, w, g.add_constant(Value())}, 1, "node 0")[0];
  const int r = g.add_node("aten::relu", {y}, 1, "node 1")[0];
  g.set_outputs({g.add_node("aten::view", {r, g.add_constant(Value(std::vector<int64_t>{-1}))}, 1, "node 2")[0]});
  g.finalize();
  const std::vector<Value> in = {Value(t({3, 1, -1, 2}, Dims{2, 2}))};
  const auto fused = g.profile(in, 3);
  REQUIRE(fused.size() == 2);
  CHECK(fused[0].kind == "aten::linear");
  CHECK(fused[0].location == "node 0");
  CHECK(fused[0].inputs == "[2, 2] float32, [2, 2] float32");  // the absent bias is not a tensor
  CHECK(fused[1].kind == "aten::view");
  CHECK(fused[1].inputs == "[2, 2] float32");
  for (const auto& n : fused) CHECK(n.seconds > 0);
  const auto strict = g.profile(in, 1, Mode::Strict);
  REQUIRE(strict.size() == 3);
  CHECK(strict[1].kind == "aten::relu");
  CHECK_THROWS_AS(g.profile(in, 0), torchtpu::ValueError);
  // the profiled passes compute what run computes: [3·1 - 1·1, 3·2] -> relu, [-1 - 2, -2] -> 0
  CHECK(values(g.run(in)[0].tensor()) == std::vector<float>{2, 6, 0, 0});
}

TEST_CASE("jit graph: constant tensors pinned for packing until the last copy of the graph goes", "[jit]") {
  // linear of x [6, 3] (enough rows for the packed GEMM) with w [5, 3]: w is packed on the first
  // run and reused; every run gives x @ w.T, computed here in float64.
  torchtpu::detail::ConstantPacks& cp = torchtpu::detail::ConstantPacks::instance();
  const size_t before = cp.pinned();
  std::vector<float> xv, wv;
  for (int i = 0; i < 18; ++i) xv.push_back(float(i % 7) - 2.5f);
  for (int i = 0; i < 15; ++i) wv.push_back(0.25f * float(i % 5) - float(i % 3));
  std::vector<float> want;
  for (int r = 0; r < 6; ++r)
    for (int c = 0; c < 5; ++c) {
      double acc = 0;
      for (int k = 0; k < 3; ++k) acc += double(xv[size_t(r * 3 + k)]) * double(wv[size_t(c * 3 + k)]);
      want.push_back(float(acc));
    }
  {
    Graph g;
    const int x = g.add_input("x");
    const int w = g.add_constant(Value(t(wv, Dims{5, 3})));
    g.set_outputs({g.add_node("aten::linear", {x, w, g.add_constant(Value())}, 1, "node 0")[0]});
    g.finalize();
    CHECK(cp.pinned() == before + 1);
    {
      const Graph copy = g;
      CHECK(cp.pinned() == before + 1);
      CHECK(values(copy.run({Value(t(xv, Dims{6, 3}))})[0].tensor()) == want);
    }
    CHECK(cp.pinned() == before + 1);  // the copy's going unpins nothing
    for (int rep = 0; rep < 2; ++rep) CHECK(values(g.run({Value(t(xv, Dims{6, 3}))})[0].tensor()) == want);
  }
  CHECK(cp.pinned() == before);
}

TEST_CASE("jit graph: runs reuse their frame and the graph's block pool; a failed run leaves nothing behind", "[jit]") {
  // view(x, [-1, 5]) then relu: an int-list constant (copied per run before frames were kept)
  Graph g;
  const int x = g.add_input("x");
  const int shape = g.add_constant(Value(std::vector<int64_t>{-1, 5}));
  const int v = g.add_node("aten::view", {x, shape}, 1, "node 0")[0];
  const int y = g.add_node("aten::mul", {v, g.add_constant(Value(2.0))}, 1, "node 1")[0];
  g.set_outputs({y});
  g.finalize();
  const std::vector<float> xv{1, -2, 3, -4, 5, 6, -7, 8, 9, -10};
  std::vector<float> want;
  for (float f : xv) want.push_back(2 * f);
  for (int rep = 0; rep < 3; ++rep) {
    const auto out = g.run({Value(t(xv, Dims{10}))});
    CHECK(out[0].tensor().sizes() == Dims{2, 5});
    CHECK(values(out[0].tensor()) == want);
    // 11 elements do not view as [-1, 5]: the error names the node, and the next run (same
    // frame) computes from its own input only
    CHECK_THROWS_WITH(g.run({Value(t(std::vector<float>(11, 1.0f), Dims{11}))}),
                      Catch::StartsWith("forward: aten::view at node 0: "));
  }
  // outputs kept across runs are distinct tensors (a pooled block is reused only once released)
  const auto a = g.run({Value(t(xv, Dims{10}))});
  const auto b = g.run({Value(t(std::vector<float>(10, 1.0f), Dims{10}))});
  CHECK(values(a[0].tensor()) == want);
  CHECK(values(b[0].tensor()) == std::vector<float>(10, 2.0f));
  // a copy runs on frames of its own
  const Graph copy = g;
  CHECK(values(copy.run({Value(t(xv, Dims{10}))})[0].tensor()) == want);
}

TEST_CASE("jit graph: run into a kept output list; size lists held in the Value; more than 8 operands", "[jit]") {
  // y = cat([x] * 10, dim 0).view(size(x) with dim 0 times 10): the ten operands pass the eight
  // an OperandList holds inline, the size list (aten::size, prim::ListConstruct) is an inline
  // int list, and the outputs land in a list the caller keeps
  Graph g;
  const int x = g.add_input("x");
  const int zero = g.add_constant(Value(int64_t(0))), one = g.add_constant(Value(int64_t(1)));
  const int ten = g.add_constant(Value(int64_t(10)));
  std::vector<int> xs(10, x);
  const int l = g.add_node("prim::ListConstruct", xs, 1, "node 0")[0];
  const int c = g.add_node("aten::cat", {l, zero}, 1, "node 1")[0];
  const int rows = g.add_node("aten::size", {x, zero}, 1, "node 2")[0];
  const int cols = g.add_node("aten::size", {x, one}, 1, "node 3")[0];
  const int n = g.add_node("aten::mul", {rows, ten}, 1, "node 4")[0];
  const int shape = g.add_node("prim::ListConstruct", {n, cols}, 1, "node 5")[0];
  const int v = g.add_node("aten::view", {c, shape}, 1, "node 6")[0];
  const int sizes = g.add_node("aten::size", {v}, 1, "node 7")[0];
  g.set_outputs({v, sizes, shape});
  g.finalize();
  std::vector<Value> out;
  for (int rep = 0; rep < 3; ++rep) {
    const std::vector<Value> in{Value(t({1, 2, 3, 4, 5, 6}, Dims{2, 3}))};
    g.run(in, out);
    REQUIRE(out.size() == 3);
    CHECK(out[0].tensor().sizes() == Dims{20, 3});
    std::vector<float> want;
    for (int k = 0; k < 10; ++k)
      for (float f : {1, 2, 3, 4, 5, 6}) want.push_back(f);
    CHECK(values(out[0].tensor()) == want);
    CHECK(out[1].to_ints() == std::vector<int64_t>{20, 3});
    CHECK(out[1].to_dims() == Dims{20, 3});
    CHECK(out[2].to_doubles() == std::vector<double>{20, 3});
    CHECK(in[0].tensor().sizes() == Dims{2, 3});  // the caller's input list is left as it was
  }
  // a ninth entry: a list on the heap, the same values
  Graph h;
  (void)h.add_input("x");
  const std::vector<int> nine(9, h.add_constant(Value(int64_t(1))));
  h.set_outputs({h.add_node("prim::ListConstruct", nine, 1, "node 0")[0]});
  h.finalize();
  CHECK(h.run({Value(t({1}, Dims{1}))})[0].to_ints() == std::vector<int64_t>(9, 1));
  const Value inl = Value::int_list(Dims{4, -1});
  CHECK(inl.kind() == Value::Kind::IntList);
  CHECK(inl.to_ints() == std::vector<int64_t>{4, -1});
  CHECK_THROWS_AS(inl.to_int("x"), torchtpu::TypeError);
}

TEST_CASE("jit graph: shape arithmetic on ints (size, NumToTensor, floor_divide, Int, view)", "[jit]") {
  Graph g;
  const int x = g.add_input("x");
  const int zero = g.add_constant(Value(int64_t(0))), one = g.add_constant(Value(int64_t(1)));
  const int two = g.add_constant(Value(int64_t(2))), minus1 = g.add_constant(Value(int64_t(-1)));
  const int n = g.add_node("aten::size", {x, one}, 1, "node 0")[0];
  const int nt = g.add_node("prim::NumToTensor", {n}, 1, "node 1")[0];
  const int half = g.add_node("aten::floor_divide", {nt, two}, 1, "node 2")[0];
  const int hi = g.add_node("aten::Int", {half}, 1, "node 3")[0];
  const int shape = g.add_node("prim::ListConstruct", {minus1, two, hi}, 1, "node 4")[0];
  const int v = g.add_node("aten::view", {x, shape}, 1, "node 5")[0];
  const int tr = g.add_node("aten::transpose", {v, one, two}, 1, "node 6")[0];
  const int c = g.add_node("aten::contiguous", {tr, zero}, 1, "node 7")[0];
  g.set_outputs({c});
  g.finalize();
  const auto out = g.run({Value(t({0, 1, 2, 3, 4, 5}, Dims{1, 6}))});
  CHECK(out[0].tensor().sizes() == Dims{1, 3, 2});
  CHECK(values(out[0].tensor()) == std::vector<float>{0, 3, 1, 4, 2, 5});  // channel shuffle of 2 groups
}

// Issue 12 item 1: TorchScript ints are int64 and wrap; INT64_MIN // -1 and % -1 never trap
// (Python gives 2^63 and 0; TorchScript's int64 wraps the quotient to INT64_MIN), and division
// by zero is a ValueError, never SIGFPE. Values worked out by hand.
TEST_CASE("jit graph: int scalar arithmetic wraps; MIN // -1 does not trap", "[jit]") {
  const int64_t mn = std::numeric_limits<int64_t>::min(), mx = std::numeric_limits<int64_t>::max();
  auto run = [](const char* op, int64_t a, int64_t b, const char* mode = nullptr) {
    Graph g;
    const int x = g.add_constant(Value(a)), y = g.add_constant(Value(b));
    std::vector<int> args = {x, y};
    if (mode) args.push_back(g.add_constant(Value(std::string(mode))));
    const int r = g.add_node(op, args, 1, "node 0")[0];
    g.set_outputs({r});
    g.finalize();
    return g.run({})[0].to_int();
  };
  CHECK(run("aten::remainder", mn, -1) == 0);
  CHECK(run("aten::floor_divide", mn, -1) == mn);
  CHECK(run("aten::div", mn, -1, "trunc") == mn);
  CHECK(run("aten::div", mn, -1, "floor") == mn);
  CHECK(run("aten::div", -7, 2, "trunc") == -3);
  CHECK(run("aten::div", -7, 2, "floor") == -4);
  CHECK(run("aten::remainder", -7, 2) == 1);
  CHECK(run("aten::remainder", 7, -2) == -1);
  CHECK(run("aten::add", mx, 1) == mn);
  CHECK(run("aten::sub", mn, 1) == mx);
  CHECK(run("aten::mul", mx, 2) == -2);
  CHECK_THROWS_AS(run("aten::floor_divide", 1, 0), torchtpu::ValueError);
  CHECK_THROWS_AS(run("aten::remainder", 1, 0), torchtpu::ValueError);
  CHECK_THROWS_AS(run("aten::div", 1, 0, "trunc"), torchtpu::ValueError);
}

TEST_CASE("jit registry: unknown ops are reported before running; register_op adds one", "[jit]") {
  auto build = [] {
    Graph g;
    const int x = g.add_input("x");
    const int a = g.add_node("test::triple", {x}, 1, "node 0 (a.py:1)")[0];
    const int b = g.add_node("test::unknown", {a}, 1, "node 1 (a.py:2)")[0];
    const int c = g.add_node("test::triple", {b}, 1, "node 2 (a.py:3)")[0];
    g.set_outputs({c});
    return g;
  };
  if (!torchtpu::jit::registry().find("test::triple")) {
    Graph g = build();
    try {
      g.finalize();
      FAIL("expected UnsupportedOperator");
    } catch (const torchtpu::UnsupportedOperator& e) {
      CHECK_THAT(std::string(e.what()), Catch::Contains("test::triple x2, first at node 0 (a.py:1)"));
      CHECK_THAT(std::string(e.what()), Catch::Contains("test::unknown x1, first at node 1 (a.py:2)"));
    }
  }
  torchtpu::register_op("test::triple", [](torchtpu::jit::OpContext& c) {
    c.out[0] = Value(FloatTensor(torchtpu::mul(c.in[0]->tensor(), 3.0f)));
  });
  torchtpu::register_op("test::unknown", [](torchtpu::jit::OpContext& c) { c.out[0] = *c.in[0]; });
  Graph g = build();
  g.finalize();
  CHECK(values(g.run({Value(t({1, 2}, Dims{2}))})[0].tensor()) == std::vector<float>{9, 18});
  CHECK_THROWS_AS(torchtpu::register_op("", [](torchtpu::jit::OpContext&) {}), torchtpu::ValueError);
}

TEST_CASE("jit graph: kernel errors name the node", "[jit]") {
  Graph g;
  const int x = g.add_input("x");
  const int shape = g.add_constant(Value(std::vector<int64_t>{-1, 5}));
  g.set_outputs({g.add_node("aten::view", {x, shape}, 1, "node 3 (m.py:9)")[0]});
  g.finalize();
  CHECK_THROWS_AS(g.run({Value(t({1, 2, 3, 4}, Dims{4}))}), torchtpu::ShapeError);
  CHECK_THROWS_WITH(g.run({Value(t({1, 2, 3, 4}, Dims{4}))}), Catch::StartsWith("forward: aten::view at node 3 (m.py:9): "));
  CHECK_THROWS_AS(g.run({}), torchtpu::ValueError);
  CHECK_THROWS_AS(g.run({Value(int64_t(3))}), torchtpu::TypeError);
}

namespace {

/// A one-node graph `kind(x, args...)`, the args as constants; finalize() not yet called.
Graph one_node(const char* kind, std::vector<Value> args) {
  Graph g;
  std::vector<int> ins{g.add_input("x")};
  for (auto& a : args) ins.push_back(g.add_constant(std::move(a)));
  g.set_outputs({g.add_node(kind, std::move(ins), 1, "node 0 (m.py:1)")[0]});
  return g;
}

}  // namespace

TEST_CASE("jit graph: gelu approximate='tanh' computes torch's tanh form, fused and strict", "[jit]") {
  const FloatTensor x = t({-3.0f, -1.5f, -0.5f, 0.0f, 0.25f, 1.0f, 2.0f, 4.0f}, Dims{8});
  Graph g = one_node("aten::gelu", {Value(std::string("tanh"))});
  g.finalize();
  const auto got = values(g.run({Value(x)}, Mode::Strict)[0].tensor());
  const auto xs = values(x);
  for (size_t i = 0; i < xs.size(); ++i) {
    const double v = xs[i];
    const double want = 0.5 * v * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (v + 0.044715 * v * v * v)));
    CHECK(got[i] == Approx(want).margin(1e-6));
  }
  // fused into a producer (add + gelu in one pass) it is the same form
  Graph f;
  const int in = f.add_input("x");
  const int one = f.add_constant(Value(1.0));
  const int s = f.add_node("aten::add", {in, f.add_constant(Value(0.0)), one}, 1, "n0")[0];
  f.set_outputs({f.add_node("aten::gelu", {s, f.add_constant(Value(std::string("tanh")))}, 1, "n1")[0]});
  f.finalize();
  CHECK(f.executed_nodes(Mode::Fused) == 1);
  const auto fused = values(f.run({Value(x)}, Mode::Fused)[0].tensor());
  for (size_t i = 0; i < xs.size(); ++i) CHECK(fused[i] == Approx(got[i]).margin(1e-6));
}

TEST_CASE("jit graph: arguments an op would not honour are rejected at finalize, with the value", "[jit]") {
  auto rejects = [](Graph g, const std::string& what) {
    try {
      g.finalize();
      FAIL("expected UnsupportedOperator for " + what);
    } catch (const torchtpu::UnsupportedOperator& e) {
      CHECK_THAT(std::string(e.what()), Catch::Contains("with arguments torchtpu does not compute as torch does") &&
                                            Catch::Contains(what));
    }
  };
  rejects(one_node("aten::dropout", {Value(0.1), Value(true)}), "aten::dropout x1, first at node 0 (m.py:1): train=True, p=0.1");
  rejects(one_node("aten::alpha_dropout", {Value(0.2), Value(true)}), "train=True, p=0.2");
  rejects(one_node("aten::gelu", {Value(std::string("sigmoid"))}), "aten::gelu x1, first at node 0 (m.py:1): approximate='sigmoid'");
  rejects(one_node("aten::softmax", {Value(int64_t(-1)), Value(int64_t(7))}), "aten::softmax x1, first at node 0 (m.py:1): dtype=torch.float64");
  rejects(one_node("aten::mean", {Value(std::vector<int64_t>{0}), Value(false), Value(int64_t(7))}), "aten::mean x1, first at node 0 (m.py:1): dtype=torch.float64");
  rejects(one_node("aten::mean", {Value(int64_t(4))}), "aten::mean x1, first at node 0 (m.py:1): dtype=torch.int64");
  // Exact cases load: eval-mode or p=0 dropout (Swin keeps dropout(x, 0.0, train=True)), float32 dtypes.
  for (Graph g : {one_node("aten::dropout", {Value(0.0), Value(true)}), one_node("aten::dropout", {Value(0.5), Value(false)}),
                  one_node("aten::softmax", {Value(int64_t(-1)), Value(int64_t(6))}),
                  one_node("aten::softmax", {Value(int64_t(-1)), Value()}), one_node("aten::sum", {Value()}),
                  one_node("aten::mean", {Value(int64_t(6))}),
                  // log_softmax is a library op (ops/loss.hpp): its dtype argument is honoured
                  one_node("aten::log_softmax", {Value(int64_t(-1)), Value(int64_t(6))})}) {
    CHECK_NOTHROW(g.finalize());
    const auto y = g.run({Value(t({1, 2, 3, 4}, Dims{2, 2}))})[0].tensor();
    CHECK(y.numel() >= 1);
  }
  // mean(x, dtype=float32), the 2-argument form, reduces every dim
  Graph m = one_node("aten::mean", {Value(int64_t(6))});
  m.finalize();
  CHECK(values(m.run({Value(t({1, 2, 3, 6}, Dims{2, 2}))})[0].tensor()) == std::vector<float>{3});
}

// Issue 12: three importer defects fuzz_jit_graph found (commits 8e7a834 and d8f6905). Each
// graph below is one jit::load could be handed by a malformed TorchScript file; before the
// fixes these read or wrote past a buffer instead of throwing.
TEST_CASE("jit graph: add_node and set_outputs refuse slots that do not exist", "[jit][issue12]") {
  Graph g;
  const int x = g.add_input("x");  // slot 0: the graph has 1 slot
  // an input slot below 0, one past the last slot (the node's own first output), one far out
  CHECK_THROWS_AS(g.add_node("aten::relu", {-1}, 1, "node 0 (m.py:1)"), torchtpu::ValueError);
  CHECK_THROWS_WITH(g.add_node("aten::relu", {-1}, 1, "node 0 (m.py:1)"),
                    "add_node: aten::relu at node 0 (m.py:1): input slot -1 does not exist (the graph has 1 slots so far)");
  CHECK_THROWS_WITH(g.add_node("aten::relu", {1}, 1, "node 0 (m.py:1)"),
                    "add_node: aten::relu at node 0 (m.py:1): input slot 1 does not exist (the graph has 1 slots so far)");
  CHECK_THROWS_WITH(g.add_node("aten::add", {x, 1000000}, 1, "node 0 (m.py:1)"),
                    Catch::Contains("aten::add") && Catch::Contains("input slot 1000000 does not exist"));
  CHECK_THROWS_AS(g.add_node("aten::relu", {x}, -1, "node 0 (m.py:1)"), torchtpu::ValueError);
  CHECK_THROWS_WITH(g.add_node("aten::relu", {x}, -1, "node 0 (m.py:1)"),
                    "add_node: aten::relu at node 0 (m.py:1): negative output count -1");
  CHECK_THROWS_AS(g.set_outputs({1}), torchtpu::ValueError);
  CHECK_THROWS_WITH(g.set_outputs({x, 1}), "set_outputs: output slot 1 does not exist (the graph has 1 slots so far)");
  CHECK_THROWS_WITH(g.set_outputs({-2}), "set_outputs: output slot -2 does not exist (the graph has 1 slots so far)");
  // a refused call leaves the graph as it was: no half-added node, no outputs, no new slots
  CHECK(g.nodes().empty());
  CHECK(g.output_slots().empty());
  CHECK(g.initial_slots().size() == 1);
  // and it still builds and runs: relu(x), its output slot 1 now exists
  const int r = g.add_node("aten::relu", {x}, 1, "node 0 (m.py:1)")[0];
  CHECK(r == 1);
  CHECK_NOTHROW(g.set_outputs({r}));
  g.finalize();
  CHECK(values(g.run({Value(t({-1, 2}, Dims{2}))})[0].tensor()) == std::vector<float>{0, 2});
}

TEST_CASE("jit graph: a node with no outputs is rejected at finalize, naming the op and node", "[jit][issue12]") {
  // relu(x) with no output slot: its kernel would write out[0] of an empty span.
  Graph g;
  const int x = g.add_input("x");
  CHECK(g.add_node("aten::relu", {x}, 0, "node 0 (m.py:4)").empty());
  g.set_outputs({x});
  try {
    g.finalize();
    FAIL("expected UnsupportedOperator");
  } catch (const torchtpu::UnsupportedOperator& e) {
    CHECK_THAT(std::string(e.what()),
               Catch::Contains("aten::relu x1, first at node 0 (m.py:4): the node has no outputs (every operator returns a value)"));
  }
  // every such node is counted, per kind, with the first location
  Graph h;
  const int y = h.add_input("y");
  h.add_node("aten::detach", {y}, 0, "node 0 (m.py:1)");
  h.add_node("aten::detach", {y}, 0, "node 1 (m.py:2)");
  h.add_node("prim::NumToTensor", {y}, 0, "node 2 (m.py:3)");
  h.set_outputs({y});
  CHECK_THROWS_AS(h.finalize(), torchtpu::UnsupportedOperator);
  CHECK_THROWS_WITH(h.finalize(), Catch::Contains("aten::detach x2, first at node 0 (m.py:1): the node has no outputs") &&
                                      Catch::Contains("prim::NumToTensor x1, first at node 2 (m.py:3): the node has no outputs"));
  // the same node with one output is fine
  Graph ok;
  const int z = ok.add_input("z");
  ok.set_outputs({ok.add_node("aten::relu", {z}, 1, "node 0 (m.py:4)")[0]});
  CHECK_NOTHROW(ok.finalize());
}

TEST_CASE("jit graph: NumToTensor, ScalarImplicit, dropout and detach without arguments throw, in every mode", "[jit][issue12]") {
  // (aten::dropout is a library op, ops/loss.hpp: its schema's argument errors, tested in tests/ops)
  for (const char* kind : {"prim::NumToTensor", "aten::ScalarImplicit", "aten::dropout_", "aten::feature_dropout",
                           "aten::alpha_dropout", "aten::detach"}) {
    INFO(kind);
    // kind() with no inputs: these kernels read argument 0 (the only graph input is unused, so
    // the kernel's input span is empty)
    Graph g;
    g.add_input("x");
    g.set_outputs({g.add_node(kind, {}, 1, "node 0 (m.py:7)")[0]});
    g.finalize();  // nothing to check: dropout's train/p check needs its arguments
    const std::string want = std::string("forward: ") + kind + " at node 0 (m.py:7): " + kind +
                             ": expected at least 1 arguments, got 0";
    for (Mode mode : {Mode::Fused, Mode::Strict, Mode::Debug}) {
      CHECK_THROWS_AS(g.run({Value(t({1, 2}, Dims{2}))}, mode), torchtpu::ValueError);
      CHECK_THROWS_WITH(g.run({Value(t({1, 2}, Dims{2}))}, mode), want);
    }
    // with its argument the node passes it through unchanged
    Graph p;
    const int x = p.add_input("x");
    p.set_outputs({p.add_node(kind, {x}, 1, "node 0 (m.py:7)")[0]});
    p.finalize();
    CHECK(values(p.run({Value(t({1, -2}, Dims{2}))}, Mode::Strict)[0].tensor()) == std::vector<float>{1, -2});
  }
}

// Issue 12, found by this campaign of fuzz_jit_graph (tests/fuzz/corpus/jit_graph/
// repro_int_of_nan_tensor): aten::Int of a one-element tensor holding NaN converted the float
// to int64 unchecked (undefined behaviour; UBSan's float-cast-overflow). NaN, the infinities
// and values outside [-2^63, 2^63) are now a ValueError naming the op; values in range
// truncate toward 0 as before (worked out by hand).
TEST_CASE("jit graph: aten::Int of a NaN, infinite or out-of-range tensor is a ValueError", "[jit][issue12]") {
  auto to_int = [](float v) {
    Graph g;
    const int x = g.add_input("x");
    g.set_outputs({g.add_node("aten::Int", {x}, 1, "node 0 (m.py:2)")[0]});
    g.finalize();
    return g.run({Value(t({v}, Dims{1}))}, Mode::Strict)[0].to_int();
  };
  const float inf = std::numeric_limits<float>::infinity();
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(), inf, -inf,
                    9223372036854775808.0f /* 2^63 */, 1e30f, -1e30f}) {
    INFO(bad);
    CHECK_THROWS_AS(to_int(bad), torchtpu::ValueError);
    CHECK_THROWS_WITH(to_int(bad), Catch::StartsWith("forward: aten::Int at node 0 (m.py:2): aten::Int: cannot convert the tensor value") &&
                                       Catch::Contains("to int"));
  }
  CHECK(to_int(-9223372036854775808.0f) == std::numeric_limits<int64_t>::min());  // -2^63 is in range
  CHECK(to_int(-2.75f) == -2);
  CHECK(to_int(2.75f) == 2);
  CHECK(to_int(16777216.0f) == 16777216);  // 2^24
  CHECK(to_int(0.0f) == 0);
}

// Issue 12, found by this campaign (tests/fuzz/corpus/jit_graph/repro_select_0dim):
// select on a 0-dim tensor passed wrap_dim (which accepts dim 0 of a scalar, as torch does
// for most ops), read a stale size and erased from an empty Dims, leaving rank -1; the next
// kernel iterated its shape past the end of the stack (ASan stack-buffer-overflow). torch
// refuses select on a 0-dim tensor ("select() cannot be applied to a 0-dim tensor"); so do we.
TEST_CASE("jit graph: select of a 0-dim tensor is an IndexError; Dims::erase checks its position", "[jit][issue12]") {
  Graph g;
  const int x = g.add_input("x");
  const int zero = g.add_constant(Value(int64_t(0)));
  const int s0 = g.add_node("aten::select", {x, zero, zero}, 1, "node 0 (m.py:1)")[0];  // [3] -> []
  const int s1 = g.add_node("aten::select", {s0, zero, zero}, 1, "node 1 (m.py:2)")[0];  // [] -> error
  g.set_outputs({g.add_node("aten::relu6", {s1}, 1, "node 2 (m.py:3)")[0]});
  g.finalize();
  for (Mode mode : {Mode::Fused, Mode::Strict, Mode::Debug}) {
    CHECK_THROWS_AS(g.run({Value(t({3, 4, 5}, Dims{3}))}, mode), torchtpu::IndexError);
    CHECK_THROWS_WITH(g.run({Value(t({3, 4, 5}, Dims{3}))}, mode),
                      "forward: aten::select at node 1 (m.py:2): select: cannot be applied to a 0-dim tensor (shape [])");
  }
  // the first select alone is fine: x[0] = 3, a 0-dim tensor
  const FloatTensor v = t({3, 4, 5}, Dims{3}).select(0, 0);
  CHECK(v.dim() == 0);
  CHECK(v.item() == 3.0f);
  CHECK_THROWS_AS(v.select(0, 0), torchtpu::IndexError);
  CHECK_THROWS_AS(v.select(-1, 0), torchtpu::IndexError);
  // Dims::erase outside [0, size()) is a ShapeError, never a negative size
  Dims d{2, 3};
  CHECK_THROWS_AS(d.erase(2), torchtpu::ShapeError);
  CHECK_THROWS_AS(d.erase(-1), torchtpu::ShapeError);
  d.erase(0);
  CHECK(d == Dims{3});
  d.erase(0);
  CHECK(d.size() == 0);
  CHECK_THROWS_WITH(d.erase(0), "erase: position 0 out of range for 0 values");
  CHECK(d.size() == 0);
}

// Issue 12, found by this campaign (repro_mean_empty_dim): a reduction over a 0-size dim
// visits the kept rows of an input with no storage, and offset a null pointer (UBSan
// pointer-overflow, no read). Results as torch: mean of no elements is NaN, sum is 0.
TEST_CASE("jit graph: mean and sum over a 0-size dim", "[jit][issue12]") {
  for (const char* kind : {"aten::mean", "aten::sum"}) {
    INFO(kind);
    Graph g = one_node(kind, {Value(std::vector<int64_t>{1}), Value(false), Value()});
    g.finalize();
    for (Mode mode : {Mode::Fused, Mode::Strict}) {
      const FloatTensor y = g.run({Value(FloatTensor::empty(Dims{3, 0}))}, mode)[0].tensor();
      REQUIRE(y.sizes() == Dims{3});
      for (float e : values(y)) {
        if (std::string(kind) == "aten::mean") CHECK(std::isnan(e));
        else CHECK(e == 0.0f);
      }
    }
  }
}

// Issue 12, found by this campaign (repro_fused_scalar_epilogue): an activation fused into
// a binary op whose operands are both numbers ran on a 0-dim tensor made from the number,
// while unfused the activation node throws TypeError on a number: Fused returned a value,
// Strict threw. Now the fused node throws TypeError too.
TEST_CASE("jit graph: an activation fused into a number-valued op throws as the unfused graph does", "[jit][issue12]") {
  Graph g;
  const int a = g.add_constant(Value(int64_t(2))), b = g.add_constant(Value(int64_t(3)));
  const int p = g.add_node("aten::mul", {a, b}, 1, "node 0 (m.py:1)")[0];
  g.set_outputs({g.add_node("aten::relu6", {p}, 1, "node 1 (m.py:2)")[0]});
  g.finalize();
  REQUIRE(g.executed_nodes(Mode::Fused) == 1);  // relu6 runs inside mul
  CHECK_THROWS_AS(g.run({}, Mode::Strict), torchtpu::TypeError);
  CHECK_THROWS_WITH(g.run({}, Mode::Strict), Catch::StartsWith("forward: aten::relu6 at node 1 (m.py:2): "));
  CHECK_THROWS_AS(g.run({}, Mode::Fused), torchtpu::TypeError);
  CHECK_THROWS_WITH(g.run({}, Mode::Fused),
                    "forward: aten::mul at node 0 (m.py:1): aten::mul: the activation fused into it expects a Tensor, got int");
  // the number alone (no activation) is still computed: 2 * 3 = 6
  Graph m;
  m.set_outputs({m.add_node("aten::mul", {m.add_constant(Value(int64_t(2))), m.add_constant(Value(int64_t(3)))}, 1, "n0")[0]});
  m.finalize();
  CHECK(m.run({})[0].to_int() == 6);
}

// Issue 12, found by this campaign (repro_debug_huge_expand): Debug mode's finiteness check
// copied each output whole (contiguous()), so an expand to 2^62 elements, a valid stride-0
// view that Fused and Strict return, threw a size overflow in Debug alone. The check now
// reads each distinct element once.
TEST_CASE("jit graph: Debug mode checks a huge broadcast view without copying it", "[jit][issue12]") {
  // 2^62 elements: a copy's 2^64 bytes overflow int64 (a deterministic "Storage size
  // calculation overflowed" ValueError before the fix, never an attempt to allocate)
  const int64_t big = int64_t(1) << 61;
  Graph g = one_node("aten::expand", {Value(std::vector<int64_t>{big, 2})});
  g.finalize();
  for (Mode mode : {Mode::Fused, Mode::Strict, Mode::Debug}) {
    const FloatTensor y = g.run({Value(t({1.5f, -2.0f}, Dims{1, 2}))}, mode)[0].tensor();
    CHECK(y.sizes() == Dims{big, 2});
    CHECK(y.stride(0) == 0);
    CHECK(y.at(big - 1, 1) == -2.0f);
  }
  // a non-finite value in such a view is still found (reported on stderr; the run succeeds)
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(g.run({Value(t({nan, 1.0f}, Dims{1, 2}))}, Mode::Debug)[0].tensor().sizes() == Dims{big, 2});
}

TEST_CASE("jit registry: one-operand elementwise ops from the op list, every dtype", "[jit]") {
  // aten::round / aten::sign / aten::isnan come from ops::ElementwiseOps (no hand-written
  // entry): the input's dtype is kept (round, sign) or the result is bool (isnan).
  auto run = [](const char* op, const torchtpu::AnyTensor& x) {
    const auto def = torchtpu::jit::registry().find(op);
    REQUIRE(def);
    const Value in(x);
    std::vector<const Value*> args{&in};
    std::vector<Value> out(1);
    torchtpu::jit::OpContext ctx{args, out, {}};
    def->kernel(ctx);
    return out[0].any();
  };
  const torchtpu::AnyTensor f = t({0.5f, 1.5f, -2.5f, NAN}, Dims{4});
  const torchtpu::AnyTensor r = run("aten::round", f);
  REQUIRE(r.dtype() == torchtpu::ScalarType::Float);
  const auto rv = values(r.get<float>());
  CHECK(rv[0] == 0.0f);
  CHECK(rv[1] == 2.0f);
  CHECK(rv[2] == -2.0f);
  CHECK(std::isnan(rv[3]));
  const torchtpu::AnyTensor n = run("aten::isnan", f);
  REQUIRE(n.dtype() == torchtpu::ScalarType::Bool);
  CHECK(n.get<bool>().contiguous().data_ptr()[3]);
  CHECK_FALSE(n.get<bool>().contiguous().data_ptr()[0]);
  const torchtpu::Tensor<int64_t> ids = {-7, 0, 3};
  const torchtpu::AnyTensor s = run("aten::sign", ids);
  REQUIRE(s.dtype() == torchtpu::ScalarType::Int64);
  CHECK(s.get<int64_t>().contiguous().data_ptr()[0] == -1);
  CHECK(s.get<int64_t>().contiguous().data_ptr()[2] == 1);
  // a math function on an int64 tensor computes in float32, as torch
  const torchtpu::AnyTensor e = run("aten::exp", ids);
  CHECK(e.dtype() == torchtpu::ScalarType::Float);
}

// Load-time work (Graph::finalize): structure nodes whose inputs are all constants are computed
// once (OpDef::fold), and a library op reads its constant arguments once (OpDef::prepare,
// jit/library_ops.hpp), keeping where each tensor operand comes from. Every result here must be
// the one the node computes when it reads its arguments on each run (values worked out by hand).
TEST_CASE("jit graph: constant lists fold at finalize; library ops read constant arguments once", "[jit]") {
  Graph g;
  const int x = g.add_input("x");
  const int zero = g.add_constant(Value(int64_t(0))), one = g.add_constant(Value(int64_t(1)));
  const int two = g.add_constant(Value(int64_t(2))), no = g.add_constant(Value(false));
  const int k = g.add_node("prim::ListConstruct", {two, two}, 1, "node 0")[0];
  const int p = g.add_node("prim::ListConstruct", {zero, zero}, 1, "node 1")[0];
  const int d = g.add_node("prim::ListConstruct", {one, one}, 1, "node 2")[0];
  const int y = g.add_node("aten::max_pool2d", {x, k, k, p, d, no}, 1, "node 3")[0];
  g.set_outputs({y});
  g.finalize();
  CHECK(g.nodes().size() == 4);
  CHECK(g.executed_nodes(Mode::Strict) == 1);  // the lists are constants now
  CHECK(g.initial_slots()[size_t(k)].to_ints() == std::vector<int64_t>{2, 2});
  CHECK(g.nodes()[3].state != nullptr);
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[size_t(i)] = float(i);
  for (Mode m : {Mode::Fused, Mode::Strict, Mode::Debug}) {
    const auto out = g.run({Value(t(v, Dims{1, 1, 4, 4}))}, m);
    CHECK(out[0].tensor().sizes() == Dims{1, 1, 2, 2});
    CHECK(values(out[0].tensor()) == std::vector<float>{5, 7, 13, 15});
  }
  // a value of another kind where the node was prepared for a tensor: the general path's error
  CHECK_THROWS_AS(g.run({Value(int64_t(3))}), torchtpu::TypeError);
  CHECK_THROWS_WITH(g.run({Value(int64_t(3))}), Catch::Contains("aten::max_pool2d") && Catch::Contains("'self'"));
}

TEST_CASE("jit graph: a library op's argument computed at run time is read on each run", "[jit]") {
  Graph g;
  const int x = g.add_input("x");
  const int zero = g.add_constant(Value(int64_t(0))), one = g.add_constant(Value(int64_t(1)));
  const int l = g.add_node("prim::ListConstruct", {x, x}, 1, "node 0")[0];     // tensors: at run time
  const int dim = g.add_node("aten::size", {x, zero}, 1, "node 1")[0];          // an int at run time
  const int a = g.add_node("aten::cat", {l, dim}, 1, "node 2")[0];              // dim = size(x, 0)
  const int b = g.add_node("aten::cat", {l, one}, 1, "node 3")[0];              // dim = 1, a constant
  g.set_outputs({a, b});
  g.finalize();
  CHECK(g.nodes()[2].state == nullptr);
  CHECK(g.nodes()[3].state != nullptr);  // the list operand flattened at run time
  for (Mode m : {Mode::Fused, Mode::Strict}) {
    const auto one_row = g.run({Value(t({1, 2}, Dims{1, 2}))}, m);  // size(x, 0) = 1: along dim 1
    CHECK(values(one_row[0].tensor()) == std::vector<float>{1, 2, 1, 2});
    CHECK(one_row[0].tensor().sizes() == Dims{1, 4});
    CHECK(values(one_row[1].tensor()) == std::vector<float>{1, 2, 1, 2});
    const auto no_rows = g.run({Value(FloatTensor::empty(Dims{0, 3}))}, m);  // size(x, 0) = 0: along dim 0
    CHECK(no_rows[0].tensor().sizes() == Dims{0, 3});
    CHECK(no_rows[1].tensor().sizes() == Dims{0, 6});
  }
}

TEST_CASE("jit graph: a prepared convolution takes a run-time bias, or none", "[jit]") {
  // aten::_convolution with the bias a graph input: the arguments are read once (only the
  // bias's presence is asked, and a run-time value must be a tensor); a None bias at run time
  // takes the general path, which computes without one
  Graph g;
  const int x = g.add_input("x"), bias = g.add_input("bias");
  const int w = g.add_constant(Value(t({1, 2, 3, 4}, Dims{1, 1, 2, 2})));
  const int ones = g.add_constant(Value(std::vector<int64_t>{1, 1})), zeros = g.add_constant(Value(std::vector<int64_t>{0, 0}));
  const int no = g.add_constant(Value(false)), one = g.add_constant(Value(int64_t(1)));
  const int y = g.add_node("aten::_convolution", {x, w, bias, ones, zeros, ones, no, zeros, one, no, no, no, no}, 1,
                           "node 0")[0];
  const int r = g.add_node("aten::relu", {y}, 1, "node 1")[0];
  g.set_outputs({r});
  g.finalize();
  CHECK(g.nodes()[0].state != nullptr);
  // x = [[1, -1], [0, 2]] with w = [[1, 2], [3, 4]]: 1 - 2 + 0 + 8 = 7
  const FloatTensor in = t({1, -1, 0, 2}, Dims{1, 1, 2, 2});
  for (Mode m : {Mode::Fused, Mode::Strict}) {
    CHECK(values(g.run({Value(in), Value(t({0.5f}, Dims{1}))}, m)[0].tensor()) == std::vector<float>{7.5f});
    CHECK(values(g.run({Value(in), Value(t({-10}, Dims{1}))}, m)[0].tensor()) == std::vector<float>{0});  // relu(-3)
    CHECK(values(g.run({Value(in), Value()}, m)[0].tensor()) == std::vector<float>{7});
  }
}

// Issue 15: model graphs that meet int64 (Hugging Face: DeBERTa's relative-position buckets, an
// MoE router's counts, ProphetNet's position ids). Values worked out by hand; torch gives the
// same (int64 stays int64 through add/relu/clamp/sum; all() is bool; tile pads its counts).
TEST_CASE("jit graph: int64 through clamp, a fused activation, sum, tile, all and type_as", "[jit]") {
  using torchtpu::AnyTensor;
  using torchtpu::Tensor;
  const Tensor<int64_t> ids = {{-3, 5, 9}, {2, -7, 4}};
  for (const Mode mode : {Mode::Fused, Mode::Strict}) {
    Graph g;
    const int x = g.add_input("ids");
    const int one = g.add_constant(Value(int64_t(1))), four = g.add_constant(Value(int64_t(4)));
    const int none = g.add_constant(Value()), keep = g.add_constant(Value(false));
    // clamp(ids, -2, 4): int64 bounds keep int64
    const int lo = g.add_constant(Value(int64_t(-2)));
    const int cl = g.add_node("aten::clamp", {x, lo, four}, 1, "node 0")[0];
    // relu(ids - 1): the fusion pass moves relu into the int64 sub (Mode::Fused)
    const int sub = g.add_node("aten::sub", {x, one, one}, 1, "node 1")[0];
    const int rl = g.add_node("aten::relu", {sub}, 1, "node 2")[0];
    // sum over dim 1 (int64), and over everything with dtype=float64 (torch dtype code 7)
    const int dims = g.add_node("prim::ListConstruct", {one}, 1, "node 3")[0];
    const int s1 = g.add_node("aten::sum", {x, dims, keep, none}, 1, "node 4")[0];
    const int f64 = g.add_constant(Value(int64_t(7)));
    const int s64 = g.add_node("aten::sum", {x, f64}, 1, "node 5")[0];
    // tile(ids[0..], [2]) pads to [1, 2]; all(ids > -8) and all along dim 1
    const int two = g.add_constant(Value(int64_t(2)));
    const int reps = g.add_node("prim::ListConstruct", {two}, 1, "node 6")[0];
    const int tl = g.add_node("aten::tile", {x, reps}, 1, "node 7")[0];
    const int al = g.add_node("aten::all", {x}, 1, "node 8")[0];
    const int al1 = g.add_node("aten::all", {rl, one, keep}, 1, "node 9")[0];
    // type_as of a number (prim::NumToTensor passes numbers through): 3 as an int64 0-dim tensor
    const int three = g.add_constant(Value(int64_t(3)));
    const int ta = g.add_node("aten::type_as", {three, x}, 1, "node 10")[0];
    // where(relu(ids - 1)) (one argument: nonzero as a tuple, an MoE router's expert rows)
    const int wh = g.add_node("aten::where", {rl}, 1, "node 11")[0];
    const std::vector<int> rc = g.add_node("prim::ListUnpack", {wh}, 2, "node 12");
    g.set_outputs({cl, rl, s1, s64, tl, al, al1, ta, rc[0], rc[1]});
    g.finalize();
    if (mode == Mode::Fused) CHECK(g.executed_nodes(Mode::Fused) < g.executed_nodes(Mode::Strict));  // relu fused
    const auto out = g.run({Value(AnyTensor(ids))}, mode);
    auto ints = [](const Value& v) {
      const Tensor<int64_t> c = v.any().get<int64_t>().contiguous();
      return std::vector<int64_t>(c.data_ptr(), c.data_ptr() + c.numel());
    };
    CHECK(ints(out[0]) == std::vector<int64_t>{-2, 4, 4, 2, -2, 4});
    CHECK(ints(out[1]) == std::vector<int64_t>{0, 4, 8, 1, 0, 3});
    CHECK(ints(out[2]) == std::vector<int64_t>{11, -1});
    REQUIRE(out[3].any().dtype() == torchtpu::ScalarType::Double);
    CHECK(out[3].any().get<double>().data_ptr()[0] == 10.0);
    CHECK(out[4].any().sizes() == Dims{2, 6});
    CHECK(ints(out[4]) == std::vector<int64_t>{-3, 5, 9, -3, 5, 9, 2, -7, 4, 2, -7, 4});
    REQUIRE(out[5].any().dtype() == torchtpu::ScalarType::Bool);
    CHECK(out[5].any().get<bool>().data_ptr()[0] == true);  // no element is 0
    const Tensor<bool> a1 = out[6].any().get<bool>().contiguous();  // rows of relu(ids - 1): [0, 4, 8], [1, 0, 3]
    CHECK((a1.numel() == 2 && !a1.data_ptr()[0] && !a1.data_ptr()[1]));
    CHECK(out[7].any().dtype() == torchtpu::ScalarType::Int64);
    CHECK(ints(out[7]) == std::vector<int64_t>{3});
    CHECK(ints(out[8]) == std::vector<int64_t>{0, 0, 1, 1});  // nonzero of [[0, 4, 8], [1, 0, 3]]
    CHECK(ints(out[9]) == std::vector<int64_t>{1, 2, 0, 2});
  }
}

TEST_CASE("jit graph: bfloat16 through linear, matmul, softmax and mean: float32 compute, one rounding", "[jit]") {
  using torchtpu::AnyTensor;
  using torchtpu::ScalarType;
  namespace od = torchtpu::ops::detail;
  const auto bf = [](std::vector<float> v, Dims s) { return od::to_dtype(AnyTensor(t(std::move(v), s)), ScalarType::BFloat16); };
  const auto floats = [](const Value& v) { return values(od::to_dtype(v.any(), ScalarType::Float).get<float>()); };
  for (const Mode mode : {Mode::Fused, Mode::Strict}) {
    Graph g;
    const int x = g.add_input("x");  // [1, 3] bfloat16: [1, 1, 1]
    // w = [[1, 2^-8, 2^-9], [1, -1, 2]]: row 0's float32 sum 1 + 2^-8 + 2^-9 rounds once to the
    // bfloat16 1 + 2^-7 (its 8 significant bits); adding in bfloat16 step by step would give 1
    // (1 + 2^-8 is a tie that rounds to even, then 1 + 2^-9 rounds down), as would no rounding
    // of 1 + 2^-8 + 2^-9 = 1.005859375 read back as float32 (it is not a bfloat16)
    const int w = g.add_constant(Value(bf({1, 0.00390625f, 0.001953125f, 1, -1, 2}, Dims{2, 3})));
    const int b = g.add_constant(Value(bf({0, 0.5f}, Dims{2})));
    const int y = g.add_node("aten::linear", {x, w, b}, 1, "node 0")[0];
    const int r = g.add_node("aten::relu", {y}, 1, "node 1")[0];  // fused into linear in Mode::Fused
    // matmul of [1, 2] by w[:, :2] ([2, 2] here, a constant): [1.0078125, 2.5] @ [[1, 2], [3, 4]]
    const int m = g.add_constant(Value(bf({1, 2, 3, 4}, Dims{2, 2})));
    const int mm = g.add_node("aten::matmul", {r, m}, 1, "node 2")[0];
    // softmax over [0, 0] with dtype=float32 (torch code 6): float32 [0.5, 0.5]; without dtype: bfloat16
    const int z = g.add_constant(Value(bf({0, 0}, Dims{1, 2})));
    const int dim = g.add_constant(Value(int64_t(-1))), f32 = g.add_constant(Value(int64_t(6)));
    const int none = g.add_constant(Value());
    const int sm32 = g.add_node("aten::softmax", {z, dim, f32}, 1, "node 3")[0];
    const int sm16 = g.add_node("aten::softmax", {z, dim, none}, 1, "node 4")[0];
    // mean of [1, 2, 3, 4]: 2.5, bfloat16
    const int mn = g.add_node("aten::mean", {m, none}, 1, "node 5")[0];
    g.set_outputs({r, mm, sm32, sm16, mn});
    g.finalize();
    const auto out = g.run({Value(bf({1, 1, 1}, Dims{1, 3}))}, mode);
    CHECK(out[0].any().dtype() == ScalarType::BFloat16);
    CHECK(floats(out[0]) == std::vector<float>{1.0078125f, 2.5f});
    // [1.0078125 + 7.5, 2.015625 + 10] = [8.5078125, 12.015625] in float32, rounded: bfloat16
    // spacing is 2^-4 in [8, 16): 8.5 and 12.0
    CHECK(out[1].any().dtype() == ScalarType::BFloat16);
    CHECK(floats(out[1]) == std::vector<float>{8.5f, 12.0f});
    CHECK(out[2].any().dtype() == ScalarType::Float);
    CHECK(floats(out[2]) == std::vector<float>{0.5f, 0.5f});
    CHECK(out[3].any().dtype() == ScalarType::BFloat16);
    CHECK(floats(out[3]) == std::vector<float>{0.5f, 0.5f});
    CHECK(out[4].any().dtype() == ScalarType::BFloat16);
    CHECK(floats(out[4]) == std::vector<float>{2.5f});
  }
  // float64 is not widened or narrowed: the kernel's own TypeError, naming the op
  Graph g;
  const int x = g.add_input("x");
  const int w = g.add_constant(Value(t({1, 2}, Dims{1, 2})));
  g.set_outputs({g.add_node("aten::linear", {x, w}, 1, "node 0")[0]});
  g.finalize();
  const AnyTensor x64 = od::to_dtype(AnyTensor(t({1, 1}, Dims{1, 2})), ScalarType::Double);
  CHECK_THROWS_WITH(g.run({Value(x64)}, Mode::Strict), Catch::Contains("aten::linear") && Catch::Contains("float64"));
}

TEST_CASE("jit graph: 0-dim tensors promote as torch's; in-place into bfloat16; prim::dtype", "[jit]") {
  using torchtpu::AnyTensor;
  using torchtpu::ScalarType;
  namespace od = torchtpu::ops::detail;
  const auto as = [](std::vector<float> v, Dims s, ScalarType d) { return od::to_dtype(AnyTensor(t(std::move(v), s)), d); };
  const auto floats = [](const Value& v) { return values(od::to_dtype(v.any(), ScalarType::Float).get<float>()); };
  for (const Mode mode : {Mode::Fused, Mode::Strict}) {
    Graph g;
    const int x = g.add_input("x");  // [2] bfloat16 [1, 2]
    // x * 0-dim float32 3: bfloat16 (a 0-dim tensor of the same category does not promote)
    const int three = g.add_constant(Value(as({3}, Dims{}, ScalarType::Float)));
    const int m = g.add_node("aten::mul", {x, three}, 1, "node 0")[0];
    // [2] int32 + 0-dim float64 0.5: float64 (a 0-dim tensor of a higher category does)
    const int i = g.add_constant(Value(as({1, 2}, Dims{2}, ScalarType::Int32)));
    const int half = g.add_constant(Value(as({0.5f}, Dims{}, ScalarType::Double)));
    const int one = g.add_constant(Value(int64_t(1)));
    const int s = g.add_node("aten::add", {i, half, one}, 1, "node 1")[0];
    // clone(x).add_([2] float32 [2^-8, 0.25]): the float32 result rounded into the bfloat16
    // tensor, as torch: 1 + 2^-8 is a tie that rounds to 1; 2.25 is exact
    const int cl = g.add_node("aten::clone", {x}, 1, "node 2")[0];
    const int f = g.add_constant(Value(as({0.00390625f, 0.25f}, Dims{2}, ScalarType::Float)));
    const int a = g.add_node("aten::add_", {cl, f, one}, 1, "node 3")[0];
    const int dt = g.add_node("prim::dtype", {x}, 1, "node 4")[0];
    g.set_outputs({m, s, a, dt});
    g.finalize();
    const auto out = g.run({Value(as({1, 2}, Dims{2}, ScalarType::BFloat16))}, mode);
    CHECK(out[0].any().dtype() == ScalarType::BFloat16);
    CHECK(floats(out[0]) == std::vector<float>{3, 6});
    CHECK(out[1].any().dtype() == ScalarType::Double);
    CHECK(floats(out[1]) == std::vector<float>{1.5f, 2.5f});
    CHECK(out[2].any().dtype() == ScalarType::BFloat16);
    CHECK(floats(out[2]) == std::vector<float>{1, 2.25f});
    CHECK(out[3].to_int() == 15);  // torch.bfloat16
  }
}

// torch.nn.LSTM(2, 2, num_layers=2, bidirectional=True, batch_first=True), parameter i (in
// m.parameters() order) element k = (k·0.37 + i·0.11) mod 1 − 0.5, x[k] = (k·0.29 mod 1) − 0.4
// ([2, 3, 2]), h0[k] = (k·0.13 mod 1) − 0.5, c0[k] = (k·0.21 mod 1) − 0.5 ([4, 2, 2]), all
// rounded to float32; the expected values are torch's float64 run of those float32 numbers.
TEST_CASE("jit graph: aten::lstm (two layers, bidirectional, batch_first) against torch's float64", "[jit]") {
  auto fill = [](Dims s, double step, double shift, double sub) {
    FloatTensor r = FloatTensor::empty(s);
    for (int64_t k = 0; k < r.numel(); ++k) r.data_ptr()[k] = float(std::fmod(double(k) * step + shift, 1.0) - sub);
    return r;
  };
  std::vector<FloatTensor> params;
  int i = 0;
  for (int layer = 0; layer < 2; ++layer)
    for (int dir = 0; dir < 2; ++dir) {
      const int64_t in = layer == 0 ? 2 : 4;
      params.push_back(fill(Dims{8, in}, 0.37, 0.11 * i++, 0.5));
      params.push_back(fill(Dims{8, 2}, 0.37, 0.11 * i++, 0.5));
      params.push_back(fill(Dims{8}, 0.37, 0.11 * i++, 0.5));
      params.push_back(fill(Dims{8}, 0.37, 0.11 * i++, 0.5));
    }
  const FloatTensor x = fill(Dims{2, 3, 2}, 0.29, 0, 0.4);
  const std::vector<FloatTensor> hx{fill(Dims{4, 2, 2}, 0.13, 0, 0.5), fill(Dims{4, 2, 2}, 0.21, 0, 0.5)};
  Graph g;
  const int xi = g.add_input("x");
  const std::vector<int> args{xi, g.add_constant(Value(hx)), g.add_constant(Value(params)), g.add_constant(Value(true)),
                              g.add_constant(Value(int64_t(2))), g.add_constant(Value(0.0)), g.add_constant(Value(false)),
                              g.add_constant(Value(true)), g.add_constant(Value(true))};
  const std::vector<int> outs = g.add_node("aten::lstm", args, 3, "node 0");
  g.set_outputs(outs);
  g.finalize();
  const auto out = g.run({Value(x)});
  const std::vector<double> y = {0.0864046, 0.14915143, -0.34120921, 0.07108819, 0.12714926, 0.05921625, -0.31089273,
                                 0.06279244, 0.15553077, 0.01824177, -0.23214352, 0.06123998, -0.08786467, -0.00011321,
                                 -0.34522757, -0.00043691, -0.00820727, 0.02050799, -0.29897987, -0.03692457, 0.0523546,
                                 0.03274191, -0.14820452, -0.10830168};
  const std::vector<double> h = {0.10857105, -0.3649143, 0.13967839, -0.2587072, -0.30502296, 0.01523729, -0.41484622,
                                 0.02113455, 0.15553077, 0.01824177, 0.0523546, 0.03274191, -0.34120921, 0.07108819,
                                 -0.34522757, -0.00043691};
  const std::vector<double> cc = {0.23531795, -0.60411572, 0.32565737, -0.44535998, -0.50663773, 0.04113367, -0.65928027,
                                  0.06016608, 0.34144777, 0.0311508, 0.1116525, 0.05756406, -0.67090667, 0.18513655,
                                  -0.6943277, -0.00119333};
  auto close = [](const FloatTensor& got, const std::vector<double>& want) {
    const std::vector<float> v = values(got);
    REQUIRE(v.size() == want.size());
    for (size_t k = 0; k < v.size(); ++k) CHECK(std::abs(double(v[k]) - want[k]) < 2e-6);
  };
  CHECK(out[0].tensor().sizes() == Dims{2, 3, 4});
  close(out[0].tensor(), y);
  close(out[1].tensor(), h);
  close(out[2].tensor(), cc);
  // a params list of the wrong length (an LSTM with proj_size has 5 per layer): ValueError
  Graph bad;
  const int bx = bad.add_input("x");
  std::vector<FloatTensor> short_params(params.begin(), params.begin() + 7);
  bad.set_outputs(bad.add_node("aten::lstm", {bx, bad.add_constant(Value(hx)), bad.add_constant(Value(short_params)),
                                               bad.add_constant(Value(true)), bad.add_constant(Value(int64_t(2))),
                                               bad.add_constant(Value(0.0)), bad.add_constant(Value(false)),
                                               bad.add_constant(Value(true)), bad.add_constant(Value(true))},
                                3, "node 0"));
  bad.finalize();
  CHECK_THROWS_WITH(bad.run({Value(x)}), Catch::Contains("aten::lstm: expected 16 weights"));
}
