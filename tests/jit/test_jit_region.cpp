// tests/jit/test_jit_region.cpp — run-time elementwise regions of model graphs (Mode::Fused on
// the cpu; jit/region.hpp, ops/region.hpp): chains of elementwise nodes run as one node, give
// Strict's values bit for bit and a float64 reference's within float32 tolerance; regions stop
// at graph outputs, at values with two readers and at in-place nodes; values a region cannot
// take (non-float32) and errors inside a chain give Strict's values and messages.
#include <catch2/catch.hpp>  // TEST_CASE, REQUIRE, CHECK

#include <algorithm>  // std::max
#include <cmath>    // std::erf, std::tanh, std::exp, std::sqrt, std::fabs
#include <cstdint>  // int64_t
#include <cstring>  // std::memcmp
#include <functional>  // std::function
#include <iterator>  // std::size
#include <string>   // std::string
#include <utility>  // std::swap
#include <vector>   // std::vector

#include <torchtpu/core/factories.hpp>  // randn, Generator
#include <torchtpu/jit/graph.hpp>       // Graph, Mode, Value
#include <torchtpu/ops/region.hpp>      // RegionProgram, run_region (the executor alone)

namespace {

using torchtpu::Dims;
using torchtpu::jit::FloatTensor;
using torchtpu::jit::Graph;
using torchtpu::jit::Mode;
using torchtpu::jit::Value;

std::vector<float> values(const FloatTensor& x) {
  const FloatTensor c = x.contiguous();
  return std::vector<float>(c.data_ptr(), c.data_ptr() + c.numel());
}

/// Same shape and the same bits.
bool same_bits(const FloatTensor& a, const FloatTensor& b) {
  if (!(a.sizes() == b.sizes())) return false;
  const std::vector<float> x = values(a), y = values(b);
  return std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

/// max |got - want| / max(|want|, 1) over all elements (want in float64): relative error, absolute below 1.
double max_rel(const FloatTensor& got, const std::vector<double>& want) {
  const std::vector<float> g = values(got);
  REQUIRE(g.size() == want.size());
  double m = 0;
  for (size_t i = 0; i < g.size(); ++i) m = std::max(m, std::fabs(double(g[i]) - want[i]) / std::max(std::fabs(want[i]), 1.0));
  return m;
}

/// Runs `g` in Fused and Strict mode on `in`; checks the outputs are bit-equal and that Fused
/// ran `passes` region passes (0: every region ran its members one by one), and returns
/// Fused's first output.
FloatTensor fused_equals_strict(const Graph& g, const std::vector<Value>& in, int64_t passes) {
  const int64_t before = torchtpu::ops::region_passes().load();
  const auto f = g.run(in, Mode::Fused);
  CHECK(torchtpu::ops::region_passes().load() - before == passes);
  const auto s = g.run(in, Mode::Strict);
  CHECK(torchtpu::ops::region_passes().load() - before == passes);
  REQUIRE(f.size() == s.size());
  for (size_t i = 0; i < f.size(); ++i) CHECK(same_bits(f[i].tensor(), s[i].tensor()));
  return f[0].tensor();
}

/// The message of the error `f` throws ("" if none).
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const torchtpu::Error& e) {
    return e.what();
  }
  return "";
}

/// x * se + 0.5 x → sigmoid → - 0.25·2 → 1 - · → / z: six nodes (sigmoid fuses into the add
/// first), with a [N, C, 1, 1] operand, alpha, numbers, rsub and a 0-dim tensor.
Graph se_chain() {
  Graph g;
  const int x = g.add_input("x"), se = g.add_input("se"), z = g.add_input("z");
  const int t0 = g.add_node("aten::mul", {x, se}, 1, "node 0 (m.py:1)")[0];
  const int t1 = g.add_node("aten::add", {t0, x, g.add_constant(Value(0.5))}, 1, "node 1 (m.py:2)")[0];
  const int t2 = g.add_node("aten::sigmoid", {t1}, 1, "node 2 (m.py:3)")[0];
  const int t3 = g.add_node("aten::sub", {t2, g.add_constant(Value(0.25)), g.add_constant(Value(int64_t(2)))}, 1,
                            "node 3 (m.py:4)")[0];
  const int t4 = g.add_node("aten::rsub", {t3, g.add_constant(Value(1.0)), g.add_constant(Value(int64_t(1)))}, 1,
                            "node 4 (m.py:5)")[0];
  const int t5 = g.add_node("aten::div", {t4, z}, 1, "node 5 (m.py:6)")[0];
  g.set_outputs({t5});
  g.finalize();
  return g;
}

std::vector<double> se_reference(const FloatTensor& x, const FloatTensor& se, double z) {
  const int64_t N = x.size(0), C = x.size(1), HW = x.size(2) * x.size(3);
  const std::vector<float> xv = values(x), sv = values(se);
  std::vector<double> r(xv.size());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t k = 0; k < HW; ++k) {
        const size_t i = size_t((n * C + c) * HW + k);
        const double t1 = double(xv[i]) * sv[size_t(n * C + c)] + 0.5 * xv[i];
        const double t2 = 1 / (1 + std::exp(-t1));
        r[i] = (1.0 - (t2 - 0.25 * 2)) / z;
      }
  return r;
}

}  // namespace

TEST_CASE("jit region: a six-node chain with [N, C, 1, 1], alpha, numbers, rsub and a 0-dim divisor", "[jit][region]") {
  const Graph g = se_chain();
  CHECK(g.executed_nodes(Mode::Strict) == 6);
  CHECK(g.executed_nodes(Mode::Fused) == 1);  // one region
  torchtpu::Generator gen(11);
  for (const Dims& shape : {Dims{2, 64, 56, 56}, Dims{1, 3, 5, 7}, Dims{1, 1, 1, 1}}) {
    INFO("x " << torchtpu::to_string(shape));
    const FloatTensor x = torchtpu::randn<float>(shape, gen);
    const FloatTensor se = torchtpu::randn<float>(Dims{shape[0], shape[1], 1, 1}, gen);
    FloatTensor z = FloatTensor::empty(Dims{});
    z.data_ptr()[0] = 1.5f;
    const FloatTensor y = fused_equals_strict(g, {Value(x), Value(se), Value(z)}, 1);
    CHECK(y.sizes() == shape);
    CHECK(max_rel(y, se_reference(x, se, 1.5)) < 1e-5);
  }
}

TEST_CASE("jit region: [C] bias, gelu tanh, a non-contiguous operand and one-operand math ops", "[jit][region]") {
  Graph g;
  const int x = g.add_input("x"), bias = g.add_input("bias"), w = g.add_input("w");
  const int wt = g.add_node("aten::transpose", {w, g.add_constant(Value(int64_t(1))), g.add_constant(Value(int64_t(2)))}, 1,
                            "node 0")[0];  // [B, C, T] -> [B, T, C], not contiguous
  const int a = g.add_node("aten::add", {x, bias}, 1, "node 1")[0];
  const int ge = g.add_node("aten::gelu", {a, g.add_constant(Value(std::string("tanh")))}, 1, "node 2")[0];
  const int m = g.add_node("aten::mul", {ge, wt}, 1, "node 3")[0];
  const int th = g.add_node("aten::tanh", {m}, 1, "node 4")[0];
  const int ng = g.add_node("aten::neg", {th}, 1, "node 5")[0];
  const int er = g.add_node("aten::erf", {ng}, 1, "node 6")[0];
  const int sq = g.add_node("aten::sqrt", {g.add_node("aten::exp", {er}, 1, "node 7")[0]}, 1, "node 8")[0];
  g.set_outputs({sq});
  g.finalize();
  CHECK(g.executed_nodes(Mode::Strict) == 9);
  CHECK(g.executed_nodes(Mode::Fused) == 2);  // the transpose, then one region
  torchtpu::Generator gen(5);
  for (const Dims& shape : {Dims{32, 128, 768}, Dims{2, 3, 4}}) {
    INFO("x " << torchtpu::to_string(shape));
    const int64_t B = shape[0], T = shape[1], C = shape[2];
    const FloatTensor xv = torchtpu::randn<float>(shape, gen), bv = torchtpu::randn<float>(Dims{C}, gen);
    const FloatTensor wv = torchtpu::randn<float>(Dims{B, C, T}, gen);
    const FloatTensor y = fused_equals_strict(g, {Value(xv), Value(bv), Value(wv)}, 1);
    std::vector<double> want(size_t(B * T * C));
    const std::vector<float> xs = values(xv), bs = values(bv), ws = values(wv);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t c = 0; c < C; ++c) {
          const double v = double(xs[size_t((b * T + t) * C + c)]) + bs[size_t(c)];
          const double gl = 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
          const double e = std::erf(-std::tanh(gl * ws[size_t((b * C + c) * T + t)]));
          want[size_t((b * T + t) * C + c)] = std::sqrt(std::exp(e));
        }
    CHECK(max_rel(y, want) < 1e-5);
  }
}

TEST_CASE("jit region: two nodes on tiny and 0-dim tensors", "[jit][region]") {
  Graph g;
  const int x = g.add_input("x");
  const int a = g.add_node("aten::add", {x, g.add_constant(Value(int64_t(1)))}, 1, "node 0")[0];
  g.set_outputs({g.add_node("aten::exp", {a}, 1, "node 1")[0]});
  g.finalize();
  CHECK(g.executed_nodes(Mode::Fused) == 1);
  for (const Dims& shape : {Dims{3}, Dims{}, Dims{1, 17}}) {
    std::vector<float> v(size_t(torchtpu::numel(shape)));
    for (size_t i = 0; i < v.size(); ++i) v[i] = float(i) * 0.25f - 1;
    const FloatTensor y = fused_equals_strict(g, {Value(torchtpu::from_data(v.data(), shape))}, 1);
    std::vector<double> want;
    for (float f : v) want.push_back(std::exp(double(f) + 1));
    CHECK(y.sizes() == shape);
    CHECK(max_rel(y, want) < 1e-6);
  }
  // an empty tensor runs unfused (and gives an empty result)
  CHECK(fused_equals_strict(g, {Value(FloatTensor::empty(Dims{0, 4}))}, 0).sizes() == Dims{0, 4});
}

TEST_CASE("jit region: a region stops at a graph output, a value with two readers and an in-place node", "[jit][region]") {
  torchtpu::Generator gen(3);
  const FloatTensor xv = torchtpu::randn<float>(Dims{4, 3000}, gen);
  SECTION("an intermediate that is a graph output") {
    Graph g;
    const int x = g.add_input("x");
    const int t0 = g.add_node("aten::mul", {x, g.add_constant(Value(2.0))}, 1, "node 0")[0];
    const int t1 = g.add_node("aten::add", {t0, g.add_constant(Value(1.0))}, 1, "node 1")[0];
    const int t2 = g.add_node("aten::exp", {t1}, 1, "node 2")[0];
    g.set_outputs({t1, t2});
    g.finalize();
    CHECK(g.executed_nodes(Mode::Fused) == 2);  // {mul, add}, exp
    fused_equals_strict(g, {Value(xv)}, 1);
  }
  SECTION("an intermediate with two readers") {
    Graph g;
    const int x = g.add_input("x");
    const int t0 = g.add_node("aten::mul", {x, g.add_constant(Value(2.0))}, 1, "node 0")[0];
    const int t1 = g.add_node("aten::exp", {t0}, 1, "node 1")[0];
    const int t2 = g.add_node("aten::sin", {t0}, 1, "node 2")[0];
    g.set_outputs({g.add_node("aten::add", {t1, t2}, 1, "node 3")[0]});
    g.finalize();
    CHECK(g.executed_nodes(Mode::Fused) == 2);  // mul, {exp, sin, add}
    const FloatTensor y = fused_equals_strict(g, {Value(xv)}, 1);
    std::vector<double> want;
    for (float f : values(xv)) want.push_back(std::exp(2.0 * f) + std::sin(2.0 * f));
    CHECK(max_rel(y, want) < 1e-5);
  }
  SECTION("an in-place node between members") {
    Graph g;
    const int x = g.add_node("aten::clone", {g.add_input("x")}, 1, "node 0")[0];
    const int t0 = g.add_node("aten::mul", {x, g.add_constant(Value(2.0))}, 1, "node 1")[0];
    g.add_node("aten::add_", {x, g.add_constant(Value(1.0))}, 1, "node 2");  // changes x
    g.set_outputs({g.add_node("aten::add", {t0, x}, 1, "node 3")[0]});
    g.finalize();
    CHECK(g.executed_nodes(Mode::Fused) == 4);  // no region across add_
    const FloatTensor y = fused_equals_strict(g, {Value(xv)}, 0);
    std::vector<double> want;
    for (float f : values(xv)) want.push_back(2.0 * f + (double(f) + 1));
    CHECK(max_rel(y, want) < 1e-6);
  }
}

TEST_CASE("jit region: values a region cannot take run its members one by one", "[jit][region]") {
  const Graph g = se_chain();
  torchtpu::Generator gen(9);
  SECTION("float64 operands") {
    Graph h;
    const int x = h.add_input("x"), se = h.add_input("se");
    const int a = h.add_node("aten::mul", {x, se}, 1, "node 0")[0];
    const int e = h.add_node("aten::exp", {a}, 1, "node 1")[0];
    h.set_outputs({h.add_node("aten::sub", {e, h.add_constant(Value(0.5))}, 1, "node 2")[0]});
    h.finalize();
    CHECK(h.executed_nodes(Mode::Fused) == 1);
    torchtpu::Tensor<double> xd = torchtpu::randn<double>(Dims{2, 3, 4, 5}, gen);
    torchtpu::Tensor<double> sd = torchtpu::randn<double>(Dims{2, 3, 1, 1}, gen);
    const std::vector<Value> in{Value(xd), Value(sd)};
    const auto f = h.run(in, Mode::Fused), s = h.run(in, Mode::Strict);
    REQUIRE(f[0].any().dtype() == torchtpu::ScalarType::Double);
    REQUIRE(s[0].any().dtype() == torchtpu::ScalarType::Double);
    const auto fd = f[0].any().get<double>().contiguous(), sdd = s[0].any().get<double>().contiguous();
    CHECK(std::memcmp(fd.data_ptr(), sdd.data_ptr(), size_t(fd.numel()) * sizeof(double)) == 0);
  }
  SECTION("an int64 operand of a unary chain") {
    Graph h;
    const int x = h.add_input("x");
    const int a = h.add_node("aten::add", {x, h.add_constant(Value(int64_t(1)))}, 1, "node 0")[0];
    h.set_outputs({h.add_node("aten::exp", {a}, 1, "node 1")[0]});
    h.finalize();
    torchtpu::Tensor<int64_t> xi = torchtpu::Tensor<int64_t>::empty(Dims{5});
    for (int64_t i = 0; i < 5; ++i) xi.data_ptr()[i] = i - 2;
    const FloatTensor y = fused_equals_strict(h, {Value(xi)}, 0);
    CHECK(max_rel(y, {std::exp(-1.0), 1.0, std::exp(1.0), std::exp(2.0), std::exp(3.0)}) < 1e-6);
  }
  SECTION("a divisor given as a number instead of a tensor") {
    const FloatTensor x = torchtpu::randn<float>(Dims{1, 2, 3, 3}, gen);
    const FloatTensor se = torchtpu::randn<float>(Dims{1, 2, 1, 1}, gen);
    const FloatTensor y = fused_equals_strict(g, {Value(x), Value(se), Value(int64_t(4))}, 1);
    CHECK(max_rel(y, se_reference(x, se, 4)) < 1e-5);
  }
  SECTION("a shape mismatch inside the chain: the member's error, as Strict") {
    const FloatTensor x = torchtpu::randn<float>(Dims{2, 4, 3, 3}, gen);
    const FloatTensor se = torchtpu::randn<float>(Dims{2, 5, 1, 1}, gen);
    const std::vector<Value> in{Value(x), Value(se), Value(2.0)};
    const std::string fused = error_of([&] { g.run(in, Mode::Fused); });
    CHECK(fused == error_of([&] { g.run(in, Mode::Strict); }));
    CHECK_THAT(fused, Catch::StartsWith("forward: aten::mul at node 0 (m.py:1): "));
    CHECK_THROWS_AS(g.run(in, Mode::Fused), torchtpu::ShapeError);
  }
  SECTION("an intermediate broadcast later (its shape is not the output's)") {
    const FloatTensor x = torchtpu::randn<float>(Dims{1, 3, 1, 1}, gen);
    const FloatTensor se = torchtpu::randn<float>(Dims{1, 3, 1, 1}, gen);
    FloatTensor z = torchtpu::randn<float>(Dims{2, 1, 4, 1}, gen);
    const FloatTensor y = fused_equals_strict(g, {Value(x), Value(se), Value(z)}, 0);
    CHECK(y.sizes() == Dims{2, 3, 4, 1});
  }
}

TEST_CASE("jit region: the executor alone reuses registers and matches the typed path", "[jit][region]") {
  namespace o = torchtpu::ops;
  o::RegionProgram p;
  auto x = p.binary(o::region_op_id<torchtpu::AddOp>(), o::RegionOperand::input(0), o::RegionOperand::input(1));
  x = p.unary(o::region_op_id<torchtpu::ClampOp>(), x, -0.5, 0.75);
  x = p.unary(o::region_op_id<torchtpu::SiluOp>(), x);
  x = p.binary(o::region_op_id<torchtpu::MulOp>(), x, o::RegionOperand::constant(3.0f));
  p.allocate();
  CHECK(p.n_regs == 1);  // each step's input dies where its result is born
  torchtpu::Generator gen(1);
  const FloatTensor a = torchtpu::randn<float>(Dims{3, 9001}, gen), b = torchtpu::randn<float>(Dims{9001}, gen);
  const std::vector<FloatTensor> in{a, b};
  const FloatTensor y = o::run_region(p, in, Dims{3, 9001});
  const FloatTensor want(torchtpu::mul(torchtpu::silu(torchtpu::clamp(torchtpu::add(a, b), -0.5, 0.75)), 3.0f));
  CHECK(same_bits(y, want));
  CHECK_THROWS_AS(p.unary(o::region_op_id<torchtpu::AddOp>(), x), torchtpu::ValueError);
}

TEST_CASE("jit region: random chains give Strict's bits or Strict's error", "[jit][region]") {
  // A small generator of chains over the region kinds: operands from the last values, the
  // inputs (shapes that broadcast to the base shape, sometimes not), numbers; alpha sometimes.
  uint64_t state = 12345;
  auto next = [&](uint64_t n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (state >> 33) % n;
  };
  const char* binary[] = {"aten::add", "aten::sub", "aten::rsub", "aten::mul", "aten::div"};
  const char* unary[] = {"aten::relu", "aten::sigmoid", "aten::tanh", "aten::gelu", "aten::silu", "aten::hardtanh",
                         "aten::relu6", "aten::hardswish", "aten::hardsigmoid", "aten::exp", "aten::neg",
                         "aten::abs", "aten::sqrt", "aten::rsqrt", "aten::erf", "aten::sin", "aten::floor",
                         "aten::log", "aten::log1p", "aten::sign", "aten::round", "aten::clamp"};
  const int64_t before = torchtpu::ops::region_passes().load();
  int ran = 0, threw = 0;
  torchtpu::Generator gen(21);
  for (int iter = 0; iter < 300; ++iter) {
    INFO("iteration " << iter);
    const int rank = int(next(4)) + 1;
    Dims base;
    for (int d = 0; d < rank; ++d) base.push_back(int64_t(next(6)) + 1);
    if (next(8) == 0) base[0] = 3000;  // several blocks, maybe several threads
    Graph g;
    std::vector<int> vals;
    std::vector<Value> in;
    for (int k = 0; k < 3; ++k) {
      Dims s;
      const int drop = int(next(uint64_t(rank) + 1));  // leading dims dropped
      for (int d = drop; d < rank; ++d) s.push_back(next(3) == 0 ? 1 : base[size_t(d)]);
      if (next(25) == 0 && !s.empty()) s[0] += 1;  // sometimes does not broadcast
      vals.push_back(g.add_input("x" + std::to_string(k)));
      FloatTensor t = torchtpu::randn<float>(s, gen);
      if (next(6) == 0 && t.dim() >= 2) t = t.transpose(0, 1).contiguous().transpose(0, 1);  // non-contiguous
      in.push_back(Value(t));
    }
    const int len = int(next(6)) + 2;
    for (int n = 0; n < len; ++n) {
      auto pick = [&]() -> int {
        const uint64_t r = next(10);
        if (r < 5) return vals.back();
        if (r < 8) return vals[size_t(next(vals.size()))];
        return g.add_constant(next(2) ? Value(double(next(7)) * 0.5 - 1.0) : Value(int64_t(next(5)) - 2));
      };
      const std::string loc = "node " + std::to_string(n);
      if (next(2) == 0) {
        const char* k = binary[next(5)];
        std::vector<int> ins{next(2) ? vals.back() : vals[size_t(next(vals.size()))], pick()};  // one tensor at least
        if (next(2) == 0) std::swap(ins[0], ins[1]);
        if (std::string(k) != "aten::mul" && std::string(k) != "aten::div" && next(3) == 0)
          ins.push_back(g.add_constant(Value(double(next(5)) - 1.5)));
        vals.push_back(g.add_node(k, ins, 1, loc)[0]);
      } else {
        const std::string k = unary[next(std::size(unary))];
        std::vector<int> ins{vals.back()};
        if (k == "aten::hardtanh" || k == "aten::clamp") {
          ins.push_back(g.add_constant(Value(-0.5)));
          ins.push_back(g.add_constant(Value(0.75)));
        }
        vals.push_back(g.add_node(k, ins, 1, loc)[0]);
      }
    }
    std::vector<int> outs{vals.back()};
    if (next(4) == 0) outs.push_back(vals[vals.size() - 2]);  // an intermediate as an output too
    g.set_outputs(outs);
    g.finalize();
    std::string ef, es;
    std::vector<Value> f, s;
    try { f = g.run(in, Mode::Fused); } catch (const torchtpu::Error& e) { ef = e.what(); }
    try { s = g.run(in, Mode::Strict); } catch (const torchtpu::Error& e) { es = e.what(); }
    CHECK(ef == es);
    if (!ef.empty()) {
      ++threw;
      continue;
    }
    ++ran;
    REQUIRE(f.size() == s.size());
    for (size_t i = 0; i < f.size(); ++i) {
      if (f[i].is_tensor() && s[i].is_tensor()) CHECK(same_bits(f[i].tensor(), s[i].tensor()));
      else CHECK(f[i].kind() == s[i].kind());
    }
  }
  CHECK(ran > 100);
  CHECK(threw > 0);
  CHECK(torchtpu::ops::region_passes().load() - before > 100);
}
