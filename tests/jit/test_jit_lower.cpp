// tests/jit/test_jit_lower.cpp — the compiled path: hand-built graphs lowered to StableHLO
// (DeviceProgram) run on the TPU emulator and agree with the cpu run-time graph; shape
// arithmetic folds on the host; ops without a lowering are listed.
#include <catch2/catch.hpp>  // TEST_CASE, REQUIRE, CHECK

#include <cmath>   // std::abs
#include <string>  // std::string
#include <vector>  // std::vector

#include <torchtpu/core/factories.hpp>  // randn, Generator
#include <torchtpu/jit/lower.hpp>       // DeviceProgram

#include "../test_backend.hpp"  // test_kind
#include "compare.hpp"          // jit_test::max_rel

namespace {

using torchtpu::Dims;
using torchtpu::jit::FloatTensor;
using torchtpu::jit::Graph;
using torchtpu::jit::Value;

using jit_test::max_rel;

/// The backend under test: the TPU emulator (`tpu`) or XLA's CPU plugin (tests/test_backend.hpp).
std::shared_ptr<torchtpu::pjrt::Client> emulator() { return torchtpu::pjrt::Client::get(ttest::test_kind()); }

}  // namespace

TEST_CASE("jit lower: a small CNN + MLP head on the TPU emulator matches the cpu graph", "[jit][pjrt]") {
  torchtpu::Generator gen(3);
  Graph g;
  const int x = g.add_input("x");  // [2, 16] -> view [2, 1, 4, 4]
  auto c = [&](Value v) { return g.add_constant(std::move(v)); };
  auto ints = [&](std::vector<int64_t> v) { return c(Value(std::move(v))); };
  const int minus1 = c(Value(int64_t(-1))), one = c(Value(int64_t(1))), four = c(Value(int64_t(4)));
  const int shape = g.add_node("prim::ListConstruct", {minus1, one, four, four}, 1, "n0")[0];
  const int img = g.add_node("aten::reshape", {x, shape}, 1, "n1")[0];
  const int w1 = c(Value(FloatTensor(torchtpu::randn<float>(Dims{6, 1, 3, 3}, gen))));
  const int b1 = c(Value(FloatTensor(torchtpu::randn<float>(Dims{6}, gen))));
  const int f = c(Value(false)), t = c(Value(true)), g1 = c(Value(int64_t(1))), g3 = c(Value(int64_t(3)));
  const int conv = g.add_node("aten::_convolution", {img, w1, b1, ints({1, 1}), ints({1, 1}), ints({1, 1}), f,
                                                     ints({0, 0}), g1, f, f, t, t}, 1, "n2")[0];
  const int r = g.add_node("aten::relu_", {conv}, 1, "n3")[0];
  const int w2 = c(Value(FloatTensor(torchtpu::randn<float>(Dims{6, 2, 3, 3}, gen))));
  const int conv2 = g.add_node("aten::_convolution", {r, w2, c(Value()), ints({1, 1}), ints({1, 1}), ints({1, 1}),
                                                      f, ints({0, 0}), g3, f, f, t, t}, 1, "n4")[0];
  const int hs = g.add_node("aten::hardswish", {conv2}, 1, "n5")[0];
  const int pool = g.add_node("aten::max_pool2d", {hs, ints({2, 2}), ints({2, 2}), ints({0, 0}), ints({1, 1}), f},
                              1, "n6")[0];
  const int flat = g.add_node("aten::flatten", {pool, one, minus1}, 1, "n7")[0];  // [2, 24]
  const int wl = c(Value(FloatTensor(torchtpu::randn<float>(Dims{5, 24}, gen))));
  const int bl = c(Value(FloatTensor(torchtpu::randn<float>(Dims{5}, gen))));
  const int lin = g.add_node("aten::linear", {flat, wl, bl}, 1, "n8")[0];
  const int ln_w = c(Value(FloatTensor(torchtpu::randn<float>(Dims{5}, gen))));
  const int ln = g.add_node("aten::layer_norm", {lin, ints({5}), ln_w, c(Value()), c(Value(1e-5)), t}, 1, "n9")[0];
  const int sm = g.add_node("aten::softmax", {ln, minus1, c(Value())}, 1, "n10")[0];
  g.set_outputs({sm});
  g.finalize();

  const FloatTensor in = torchtpu::randn<float>(Dims{2, 16}, gen);
  const FloatTensor want = g.run({Value(in)})[0].tensor();
  torchtpu::jit::DeviceProgram p(g, {in.sizes()}, emulator());
  CHECK(p.program().find("stablehlo.convolution") != std::string::npos);
  CHECK(p.program().find("stablehlo.reduce_window") != std::string::npos);
  const FloatTensor got = p.run({in})[0];
  CHECK(max_rel(got, want) < 1e-5);
  CHECK(max_rel(p.run({in})[0], want) < 1e-5);  // the weights stay on the device
}

TEST_CASE("jit lower: shape arithmetic folds on the host; missing lowerings are listed", "[jit][pjrt]") {
  Graph g;
  const int x = g.add_input("x");
  const int one = g.add_constant(Value(int64_t(1))), two = g.add_constant(Value(int64_t(2)));
  const int n = g.add_node("aten::size", {x, one}, 1, "n0")[0];
  const int h = g.add_node("aten::floor_divide", {g.add_node("prim::NumToTensor", {n}, 1, "n1")[0], two}, 1, "n2")[0];
  const int hi = g.add_node("aten::Int", {h}, 1, "n3")[0];
  const int m1 = g.add_constant(Value(int64_t(-1)));
  const int shape = g.add_node("prim::ListConstruct", {m1, two, hi}, 1, "n4")[0];
  const int v = g.add_node("aten::view", {x, shape}, 1, "n5")[0];
  g.set_outputs({g.add_node("aten::transpose", {v, one, two}, 1, "n6")[0]});
  g.finalize();
  const FloatTensor in = torchtpu::arange<float>(0, 12).reshape(Dims{2, 6});
  torchtpu::jit::DeviceProgram p(g, {in.sizes()}, emulator());
  CHECK(max_rel(p.run({in})[0], g.run({Value(in)})[0].tensor()) == 0.0);

  // an op without a lowering (a user op registered with a cpu kernel only)
  torchtpu::register_op("test::cpu_only", [](torchtpu::jit::OpContext& c) { c.out[0] = *c.in[0]; });
  Graph u;
  const int y = u.add_input("y");
  u.set_outputs({u.add_node("test::cpu_only", {y}, 1, "node 0 (a.py:1)")[0]});
  u.finalize();
  CHECK_THROWS_WITH(torchtpu::jit::DeviceProgram(u, {Dims{3}}, emulator()),
                    Catch::Contains("test::cpu_only x1, first at node 0 (a.py:1)"));
}

TEST_CASE("jit lower: gelu approximate='tanh' lowers to torch's tanh form, not the erf form", "[jit][pjrt]") {
  const FloatTensor in = torchtpu::mul(torchtpu::arange<float>(-40, 40).reshape(Dims{8, 10}), 0.1f);
  for (const char* form : {"tanh", "none"}) {
    INFO(form);
    Graph g;
    const int x = g.add_input("x");
    g.set_outputs({g.add_node("aten::gelu", {x, g.add_constant(Value(std::string(form)))}, 1, "n0")[0]});
    g.finalize();
    const FloatTensor want = g.run({Value(in)})[0].tensor();
    torchtpu::jit::DeviceProgram p(g, {in.sizes()}, emulator());
    CHECK(p.program().find(std::string(form) == "tanh" ? "stablehlo.tanh" : "erf") != std::string::npos);
    CHECK(max_rel(p.run({in})[0], want) < 1e-6);
  }
}

TEST_CASE("jit lower: library ops with int64 constants; run-time index checks of the compiled program", "[jit][pjrt]") {
  // index_select(x, 1, idx) * 1 with an int64 index constant (a weight uploaded as int64), then
  // cat along 0 with x: the library's lowerings; an index out of range fails the run with the
  // cpu's IndexError (a run-time check read after each run), never a silent value.
  auto build = [](std::vector<int64_t> idx) {
    Graph g;
    const int x = g.add_input("x");
    torchtpu::Tensor<int64_t> it = torchtpu::Tensor<int64_t>::empty(Dims{int64_t(idx.size())});
    for (size_t i = 0; i < idx.size(); ++i) it.data_ptr()[i] = idx[i];
    const int sel = g.add_node("aten::index_select", {x, g.add_constant(Value(int64_t(1))), g.add_constant(Value(it))}, 1,
                               "n0")[0];
    const int list = g.add_node("prim::ListConstruct", {sel, x}, 1, "n1")[0];
    g.set_outputs({g.add_node("aten::cat", {list, g.add_constant(Value(int64_t(1)))}, 1, "n2")[0]});
    g.finalize();
    return g;
  };
  const FloatTensor in = torchtpu::arange<float>(0, 6).reshape(Dims{2, 3});
  const Graph ok = build({2, 0});
  torchtpu::jit::DeviceProgram p(ok, {in.sizes()}, emulator());
  const FloatTensor got = p.run({in})[0];
  CHECK(max_rel(got, ok.run({Value(in)})[0].tensor()) == 0.0);
  CHECK(got.sizes() == Dims{2, 5});
  CHECK(got.contiguous().data_ptr()[0] == 2.0f);  // x[0][2]
  const Graph bad = build({2, 3});
  CHECK_THROWS_AS(bad.run({Value(in)}), torchtpu::IndexError);
  torchtpu::jit::DeviceProgram q(bad, {in.sizes()}, emulator());
  CHECK_THROWS_WITH(q.run({in}), Catch::Contains("aten::index_select: an index is out of bounds for dimension 1 with size 3"));
  CHECK_THROWS_AS(q.run({in}), torchtpu::IndexError);
}

TEST_CASE("jit lower: index_put_ gives later readers of self the new value; a write through a view is refused",
          "[jit][pjrt]") {
  // y = x.clone(); y.index_put_([None, [3, 0]], 5.0); out = y * 2 (reading y's slot, not the
  // in-place op's output): the compiled program must see the write, as the cpu graph does. With
  // y.select(0, 1) in between, the cpu writes through the view into y; the compiled path, which
  // cannot write a view back to its base, refuses the graph.
  auto build = [](bool through_view) {
    Graph g;
    const int x = g.add_input("x");
    const int none = g.add_constant(Value());
    const int cols = g.add_constant(Value(torchtpu::AnyTensor(torchtpu::Tensor<int64_t>{3, 0})));
    const int y = g.add_node("aten::clone", {x, none}, 1, "n0")[0];
    int self = y, list = -1;
    if (through_view) {
      self = g.add_node("aten::select", {y, g.add_constant(Value(int64_t(0))), g.add_constant(Value(int64_t(1)))}, 1, "n1")[0];
      list = g.add_node("prim::ListConstruct", {cols}, 1, "n2")[0];
    } else {
      list = g.add_node("prim::ListConstruct", {none, cols}, 1, "n2")[0];
    }
    const int five = g.add_constant(Value(FloatTensor(torchtpu::full<float>(Dims{}, 5.0f))));
    (void)g.add_node("aten::index_put_", {self, list, five, g.add_constant(Value(false))}, 1, "n3");
    g.set_outputs({g.add_node("aten::mul", {y, g.add_constant(Value(2.0))}, 1, "n4")[0]});
    g.finalize();
    return g;
  };
  const FloatTensor in = torchtpu::arange<float>(0, 12).reshape(Dims{3, 4});
  const Graph direct = build(false);
  const FloatTensor want = direct.run({Value(in)})[0].tensor();
  // by hand: x * 2 with columns 0 and 3 set to 10
  CHECK(want.contiguous().data_ptr()[0] == 10.0f);
  CHECK(want.contiguous().data_ptr()[1] == 2.0f);
  CHECK(want.contiguous().data_ptr()[7] == 10.0f);
  torchtpu::jit::DeviceProgram p(direct, {in.sizes()}, emulator());
  CHECK(max_rel(p.run({in})[0], want) == 0.0);
  const Graph view = build(true);
  const FloatTensor row = view.run({Value(in)})[0].tensor().contiguous();
  CHECK(row.data_ptr()[4] == 10.0f);  // y[1][0]
  CHECK(row.data_ptr()[0] == 0.0f);   // row 0 untouched
  CHECK_THROWS_WITH(torchtpu::jit::DeviceProgram(view, {in.sizes()}, emulator()),
                    Catch::Contains("aten::index_put_ at n3 writes into a view made by aten::select"));
}

TEST_CASE("jit lower: activations, softmax and mean lower through their op structs, as on the eager devices",
          "[jit][pjrt]") {
  // x in [-4, 4): every piece of hardswish / hardsigmoid / hardtanh is reached
  const FloatTensor in = torchtpu::mul(torchtpu::arange<float>(-40, 40).reshape(Dims{8, 10}), 0.1f);
  struct Case {
    const char* kind;
    int extra;               // 0: no further argument; 1: softmax's dim and dtype; 2: mean's dims, keepdim, dtype
    const char* must_have;   // a StableHLO op of the struct's lowering ("" when not checked)
    const char* must_lack;   // one the replaced formula used ("" when not checked)
  };
  // hardswish's and hardsigmoid's structs clamp (ops/unary.hpp); the model runtime's former
  // formula used maximum/minimum, and rounded hardswish differently (x * hardsigmoid(x))
  const Case cases[] = {{"aten::relu", 0, "", ""},
                        {"aten::sigmoid", 0, "stablehlo.logistic", ""},
                        {"aten::silu", 0, "stablehlo.logistic", ""},
                        {"aten::tanh", 0, "stablehlo.tanh", ""},
                        {"aten::hardswish", 0, "stablehlo.clamp", "stablehlo.minimum"},
                        {"aten::hardsigmoid", 0, "stablehlo.clamp", "stablehlo.minimum"},
                        {"aten::softmax", 1, "stablehlo.exponential", ""},
                        {"aten::mean", 2, "stablehlo.divide", ""}};
  for (const Case& k : cases) {
    INFO(k.kind);
    Graph g;
    const int x = g.add_input("x");
    std::vector<int> args = {x};
    if (k.extra == 1) args = {x, g.add_constant(Value(int64_t(-1))), g.add_constant(Value())};
    if (k.extra == 2)
      args = {x, g.add_constant(Value(std::vector<int64_t>{1})), g.add_constant(Value(true)), g.add_constant(Value())};
    g.set_outputs({g.add_node(k.kind, args, 1, "n0")[0]});
    g.finalize();
    const FloatTensor want = g.run({Value(in)})[0].tensor();
    torchtpu::jit::DeviceProgram p(g, {in.sizes()}, emulator());
    if (*k.must_have) CHECK(p.program().find(k.must_have) != std::string::npos);
    if (*k.must_lack) CHECK(p.program().find(k.must_lack) == std::string::npos);
    const FloatTensor got = p.run({in})[0];
    REQUIRE(got.sizes() == want.sizes());
    CHECK(max_rel(got, want) < 1e-6);
  }
}

TEST_CASE("jit lower: int64 and bool inputs, factory ops, outputs of any dtype (token ids and masks)", "[jit][pjrt]") {
  // A BERT-style input block: embedding(table, ids) + token types from zeros_like(ids), the
  // int64 mask turned into an additive float mask (1 - mask) * -1e4, and a bool input
  // selecting rows; outputs float32, int64 and bool as the cpu graph computes them.
  torchtpu::Generator gen(5);
  Graph g;
  const int ids = g.add_input("ids"), mask = g.add_input("mask"), keep = g.add_input("keep");
  auto c = [&](Value v) { return g.add_constant(std::move(v)); };
  const Value none;
  const int table = c(Value(FloatTensor(torchtpu::randn<float>(Dims{10, 4}, gen))));
  const int types = c(Value(FloatTensor(torchtpu::randn<float>(Dims{2, 4}, gen))));
  const int m1 = c(Value(int64_t(-1))), f = c(Value(false)), one = c(Value(int64_t(1)));
  const int tt = g.add_node("aten::zeros_like", {ids, c(none), c(none), c(none), c(none), c(none)}, 1, "n0")[0];
  const int e = g.add_node("aten::embedding", {table, ids, m1, f, f}, 1, "n1")[0];
  const int te = g.add_node("aten::embedding", {types, tt, m1, f, f}, 1, "n2")[0];
  const int h = g.add_node("aten::add", {e, te, one}, 1, "n3")[0];
  const int mf = g.add_node("aten::to", {mask, c(Value(int64_t(6))), f, f, c(none)}, 1, "n4")[0];
  const int inv = g.add_node("aten::rsub", {mf, c(Value(1.0)), one}, 1, "n5")[0];
  const int add = g.add_node("aten::mul", {inv, c(Value(-10000.0))}, 1, "n6")[0];
  const int ones = g.add_node("aten::new_ones", {ids, c(Value(std::vector<int64_t>{2})), c(none)}, 1, "n7")[0];
  const int full = g.add_node("aten::full", {c(Value(std::vector<int64_t>{3})), c(Value(true))}, 1, "n8")[0];
  const int sel = g.add_node("aten::mul", {keep, c(Value(int64_t(2)))}, 1, "n9")[0];  // bool * 2 -> int64
  g.set_outputs({h, add, ones, full, sel});
  g.finalize();

  torchtpu::Tensor<int64_t> id_t = torchtpu::Tensor<int64_t>::empty(Dims{2, 3});
  torchtpu::Tensor<int64_t> mask_t = torchtpu::Tensor<int64_t>::empty(Dims{2, 3});
  const int64_t idv[] = {1, 7, 9, 0, 3, 3}, mv[] = {1, 1, 0, 1, 0, 0};
  for (int i = 0; i < 6; ++i) id_t.data_ptr()[i] = idv[i], mask_t.data_ptr()[i] = mv[i];
  torchtpu::Tensor<bool> keep_t = torchtpu::Tensor<bool>::empty(Dims{3});
  keep_t.data_ptr()[0] = true, keep_t.data_ptr()[1] = false, keep_t.data_ptr()[2] = true;
  const std::vector<Value> want = g.run({Value(id_t), Value(mask_t), Value(keep_t)});

  using torchtpu::AnyTensor;
  using torchtpu::ScalarType;
  torchtpu::jit::DeviceProgram p(g, {ScalarType::Int64, ScalarType::Int64, ScalarType::Bool},
                                 {Dims{2, 3}, Dims{2, 3}, Dims{3}}, emulator());
  const std::vector<AnyTensor> got = p.run_any({AnyTensor(id_t), AnyTensor(mask_t), AnyTensor(keep_t)});
  REQUIRE(got.size() == 5);
  CHECK(max_rel(got[0].get<float>(), want[0].tensor()) < 1e-6);
  CHECK(max_rel(got[1].get<float>(), want[1].tensor()) == 0.0);
  // by hand: (1 - mask) * -1e4 for mask [1, 1, 0, 1, 0, 0]
  const std::vector<float> add_want = {0, 0, -10000, 0, -10000, -10000};
  for (int i = 0; i < 6; ++i) CHECK(got[1].get<float>().contiguous().data_ptr()[i] == add_want[size_t(i)]);
  REQUIRE(got[2].dtype() == ScalarType::Int64);
  CHECK(got[2].get<int64_t>().data_ptr()[0] == 1);
  CHECK(got[2].sizes() == Dims{2});
  REQUIRE(got[3].dtype() == ScalarType::Bool);
  CHECK(got[3].get<bool>().data_ptr()[2]);
  REQUIRE(got[4].dtype() == ScalarType::Int64);
  CHECK(got[4].get<int64_t>().data_ptr()[0] == 2);
  CHECK(got[4].get<int64_t>().data_ptr()[1] == 0);
  // the float32 form refuses int64 outputs; inputs of another dtype or shape are named
  CHECK_THROWS_WITH(p.run_any({AnyTensor(mask_t), AnyTensor(mask_t), AnyTensor(id_t)}),
                    Catch::Contains("input 2 is [2, 3] int64; the program was lowered for [3] bool"));
  CHECK_THROWS_WITH(p.run_any({AnyTensor(id_t)}), Catch::Contains("lowered for 3 input(s), got 1"));
  CHECK_THROWS_WITH(torchtpu::jit::DeviceProgram(g, {ScalarType::Int64}, {Dims{2, 3}}, emulator()),
                    Catch::Contains("the model takes 3 input(s), got 1 dtype(s) and 1 shape(s)"));
}

TEST_CASE("jit lower: comparisons, where, arange, masked_fill_, max/min (a causal mask block)", "[jit][pjrt]") {
  // pos = arange(x.size(1)); causal = pos[None, :] > pos[:, None]; y = x.clone().masked_fill_(causal, -1e9);
  // w = where(ids == 0, 0.5, x); hi = max(x, -x); lo = min(x, -x); k = (ids != 3) & (x > 0)
  Graph g;
  const int x = g.add_input("x"), ids = g.add_input("ids");
  auto c = [&](Value v) { return g.add_constant(std::move(v)); };
  const Value none;
  const int len = g.add_node("aten::size", {x, c(Value(int64_t(1)))}, 1, "n0")[0];
  const int pos = g.add_node("aten::arange", {len, c(none), c(none), c(none), c(none)}, 1, "n1")[0];
  const int row = g.add_node("aten::unsqueeze", {pos, c(Value(int64_t(0)))}, 1, "n2")[0];
  const int col = g.add_node("aten::unsqueeze", {pos, c(Value(int64_t(1)))}, 1, "n3")[0];
  const int causal = g.add_node("aten::gt", {row, col}, 1, "n4")[0];
  const int xc = g.add_node("aten::clone", {x, c(none)}, 1, "n5")[0];
  const int y = g.add_node("aten::masked_fill_", {xc, causal, c(Value(-1e9))}, 1, "n6")[0];
  const int z = g.add_node("aten::eq", {ids, c(Value(int64_t(0)))}, 1, "n7")[0];
  const int w = g.add_node("aten::where", {z, c(Value(0.5)), x}, 1, "n8")[0];
  const int nx = g.add_node("aten::neg", {x}, 1, "n9")[0];
  const int hi = g.add_node("aten::max", {x, nx}, 1, "n10")[0];
  const int lo = g.add_node("aten::min", {x, nx}, 1, "n11")[0];
  const int ne3 = g.add_node("aten::ne", {ids, c(Value(int64_t(3)))}, 1, "n12")[0];
  const int pos_x = g.add_node("aten::gt", {x, c(Value(int64_t(0)))}, 1, "n13")[0];
  const int k = g.add_node("aten::logical_and", {ne3, pos_x}, 1, "n14")[0];
  g.set_outputs({y, w, hi, lo, k});
  g.finalize();

  FloatTensor xt = FloatTensor::empty(Dims{4, 4});
  torchtpu::Tensor<int64_t> it = torchtpu::Tensor<int64_t>::empty(Dims{4, 4});
  const float xv[16] = {1, -2, 3, 0.5f, -1, 0, 2.5f, -4, 7, 8, -9, 1, 0.25f, -0.5f, 6, -3};
  const int64_t iv[16] = {0, 3, 1, 0, 2, 0, 3, 3, 1, 1, 0, 5, 3, 0, 0, 9};
  for (int i = 0; i < 16; ++i) xt.data_ptr()[i] = xv[i], it.data_ptr()[i] = iv[i];
  const std::vector<Value> cpu = g.run({Value(xt), Value(it)});
  // by hand, element (r, q) = index r*4+q
  for (int r = 0; r < 4; ++r)
    for (int q = 0; q < 4; ++q) {
      const int i = r * 4 + q;
      CHECK(cpu[0].tensor().data_ptr()[i] == (q > r ? -1e9f : xv[i]));
      CHECK(cpu[1].tensor().data_ptr()[i] == (iv[i] == 0 ? 0.5f : xv[i]));
      CHECK(cpu[2].tensor().data_ptr()[i] == std::abs(xv[i]));
      CHECK(cpu[3].tensor().data_ptr()[i] == -std::abs(xv[i]));
      CHECK(cpu[4].any().get<bool>().data_ptr()[i] == (iv[i] != 3 && xv[i] > 0));
    }
  CHECK(xt.data_ptr()[1] == -2.0f);  // masked_fill_ wrote into the clone, not the input

  using torchtpu::AnyTensor;
  using torchtpu::ScalarType;
  torchtpu::jit::DeviceProgram p(g, {ScalarType::Float, ScalarType::Int64}, {Dims{4, 4}, Dims{4, 4}}, emulator());
  const std::vector<AnyTensor> got = p.run_any({AnyTensor(xt), AnyTensor(it)});
  REQUIRE(got.size() == 5);
  for (int o = 0; o < 4; ++o) CHECK(max_rel(got[size_t(o)].get<float>(), cpu[size_t(o)].tensor()) == 0.0);
  REQUIRE(got[4].dtype() == ScalarType::Bool);
  for (int i = 0; i < 16; ++i) CHECK(got[4].get<bool>().contiguous().data_ptr()[i] == cpu[4].any().get<bool>().data_ptr()[i]);
}

TEST_CASE("jit: aten::max/min reductions, arange overloads, masked_fill_ shape rule (cpu graph)", "[jit]") {
  Graph g;
  const int x = g.add_input("x");
  auto c = [&](Value v) { return g.add_constant(std::move(v)); };
  const Value none;
  const auto mx = g.add_node("aten::max", {x, c(Value(int64_t(1))), c(Value(false))}, 2, "n0");
  const int mn = g.add_node("aten::min", {x}, 1, "n1")[0];
  const int ar = g.add_node("aten::arange", {c(Value(1.0)), c(Value(int64_t(2))), c(Value(0.25)), c(none), c(none),
                                              c(none), c(none)}, 1, "n2")[0];
  g.set_outputs({mx[0], mx[1], mn, ar});
  g.finalize();
  FloatTensor xt = FloatTensor::empty(Dims{2, 3});
  const float xv[6] = {1, 5, 5, -2, -7, 0};
  for (int i = 0; i < 6; ++i) xt.data_ptr()[i] = xv[i];
  const std::vector<Value> r = g.run({Value(xt)});
  CHECK(r[0].tensor().data_ptr()[0] == 5.0f);
  CHECK(r[0].tensor().data_ptr()[1] == 0.0f);
  CHECK(r[1].any().get<int64_t>().data_ptr()[0] == 1);  // the first index of the maximum, as torch
  CHECK(r[1].any().get<int64_t>().data_ptr()[1] == 2);
  CHECK(r[2].tensor().dim() == 0);
  CHECK(r[2].tensor().data_ptr()[0] == -7.0f);
  REQUIRE(r[3].any().dtype() == torchtpu::ScalarType::Float);  // a float bound: float32
  CHECK(r[3].tensor().sizes() == Dims{4});
  CHECK(r[3].tensor().data_ptr()[3] == 1.75f);

  Graph q;  // int64 in place (a relative-position bucket: n = ids.clone(); n.add_(3)), bitwise_not of a bool mask
  const int ids = q.add_input("ids");
  const int one = q.add_constant(Value(int64_t(1)));
  const int nc = q.add_node("aten::clone", {ids, q.add_constant(Value())}, 1, "n0")[0];
  const int added = q.add_node("aten::add_", {nc, q.add_constant(Value(int64_t(3))), one}, 1, "n1")[0];
  const int iz = q.add_node("aten::eq", {ids, q.add_constant(Value(int64_t(0)))}, 1, "n2")[0];
  const int nz = q.add_node("aten::bitwise_not", {iz}, 1, "n3")[0];
  const int bad = q.add_node("aten::add_", {nc, q.add_constant(Value(0.5)), one}, 1, "n4")[0];
  q.set_outputs({added, nz, bad});
  q.finalize();
  torchtpu::Tensor<int64_t> idt = torchtpu::Tensor<int64_t>::empty(Dims{3});
  idt.data_ptr()[0] = 0, idt.data_ptr()[1] = 5, idt.data_ptr()[2] = -2;
  // int64 += 0.5: torch refuses ("result type Float can't be cast to the desired output type Long")
  CHECK_THROWS_WITH(q.run({Value(idt)}), Catch::Contains("aten::add_") && Catch::Contains("float32"));
  Graph q2;
  const int ids2 = q2.add_input("ids");
  const int nc2 = q2.add_node("aten::clone", {ids2, q2.add_constant(Value())}, 1, "n0")[0];
  const int added2 = q2.add_node("aten::add_", {nc2, q2.add_constant(Value(int64_t(3))), q2.add_constant(Value(int64_t(1)))}, 1, "n1")[0];
  const int iz2 = q2.add_node("aten::eq", {ids2, q2.add_constant(Value(int64_t(0)))}, 1, "n2")[0];
  const int nz2 = q2.add_node("aten::bitwise_not", {iz2}, 1, "n3")[0];
  // torch.tensor(ids.size(0), dtype=torch.float): aten::size -> prim::NumToTensor -> aten::to
  const int sz = q2.add_node("aten::size", {ids2, q2.add_constant(Value(int64_t(0)))}, 1, "n4")[0];
  const int st = q2.add_node("prim::NumToTensor", {sz}, 1, "n5")[0];
  const int sf = q2.add_node("aten::to", {st, q2.add_constant(Value(int64_t(6))), q2.add_constant(Value(false)),
                                          q2.add_constant(Value(false)), q2.add_constant(Value())}, 1, "n6")[0];
  q2.set_outputs({added2, nz2, sf});
  q2.finalize();
  const std::vector<Value> qr = q2.run({Value(idt)});
  REQUIRE(qr[0].any().dtype() == torchtpu::ScalarType::Int64);
  CHECK(qr[0].any().get<int64_t>().data_ptr()[0] == 3);
  CHECK(qr[0].any().get<int64_t>().data_ptr()[2] == 1);
  CHECK(idt.data_ptr()[1] == 5);  // the clone was written, not the input
  CHECK(!qr[1].any().get<bool>().data_ptr()[0]);
  CHECK(qr[1].any().get<bool>().data_ptr()[1]);
  REQUIRE(qr[2].any().dtype() == torchtpu::ScalarType::Float);
  CHECK(qr[2].tensor().dim() == 0);
  CHECK(qr[2].tensor().data_ptr()[0] == 3.0f);

  Graph h;  // in place, the mask may not grow self: [3] masked by [2, 3]
  const int s = h.add_input("s"), m = h.add_input("m");
  const int o = h.add_node("aten::masked_fill_", {s, m, h.add_constant(Value(1.0))}, 1, "n0")[0];
  h.set_outputs({o});
  h.finalize();
  torchtpu::Tensor<bool> mt = torchtpu::Tensor<bool>::empty(Dims{2, 3});
  for (int i = 0; i < 6; ++i) mt.data_ptr()[i] = i % 2 == 0;
  CHECK_THROWS_WITH(h.run({Value(FloatTensor::empty(Dims{3})), Value(mt)}),
                    Catch::Contains("aten::masked_fill_") && Catch::Contains("[2, 3]"));
}

TEST_CASE("jit lower: glu, softplus, repeat_interleave, reshape_as, square, __and__; eye, argmax, neg of an int (cpu)",
          "[jit][pjrt]") {
  // g = glu(x, -1); s = softplus(x[:, :2], 2, 1); r = repeat_interleave(x, 2, 0); v = x.reshape_as(w);
  // q = square(x); a = (x > 0) & (x < 3)
  Graph g;
  const int x = g.add_input("x"), w = g.add_input("w");
  auto c = [&](Value v) { return g.add_constant(std::move(v)); };
  const int glu = g.add_node("aten::glu", {x, c(Value(int64_t(-1)))}, 1, "n0")[0];
  const int sp = g.add_node("aten::softplus", {x, c(Value(2.0)), c(Value(1.0))}, 1, "n1")[0];
  const int rep = g.add_node("aten::repeat_interleave", {x, c(Value(int64_t(2))), c(Value(int64_t(0))), c(Value())}, 1, "n2")[0];
  const int ra = g.add_node("aten::reshape_as", {x, w}, 1, "n3")[0];
  const int sq = g.add_node("aten::square", {x}, 1, "n4")[0];
  const int p = g.add_node("aten::gt", {x, c(Value(int64_t(0)))}, 1, "n5")[0];
  const int l = g.add_node("aten::lt", {x, c(Value(int64_t(3)))}, 1, "n6")[0];
  const int a = g.add_node("aten::__and__", {p, l}, 1, "n7")[0];
  const int lr = g.add_node("aten::leaky_relu", {x, c(Value(0.1))}, 1, "n8")[0];
  const int ac = g.add_node("aten::addcmul", {w, w, w, c(Value(0.5))}, 1, "n9")[0];  // w + 0.5 w^2
  g.set_outputs({glu, sp, rep, ra, sq, a, lr, ac});
  g.finalize();
  FloatTensor xt = FloatTensor::empty(Dims{2, 4});
  const float xv[8] = {1, -2, 0.5f, 4, 3, 0.25f, -1, 2};
  for (int i = 0; i < 8; ++i) xt.data_ptr()[i] = xv[i];
  FloatTensor wt = FloatTensor::empty(Dims{4, 2});
  for (int i = 0; i < 8; ++i) wt.data_ptr()[i] = float(i) - 3.5f;
  const std::vector<Value> cpu = g.run({Value(xt), Value(wt)});
  // by hand (float64 formulas): glu row r = x[r, :2] * sigmoid(x[r, 2:])
  for (int r = 0; r < 2; ++r)
    for (int k = 0; k < 2; ++k) {
      const double want = xv[r * 4 + k] / (1 + std::exp(-double(xv[r * 4 + 2 + k])));
      CHECK(std::abs(cpu[0].tensor().data_ptr()[r * 2 + k] - want) < 1e-6);
    }
  for (int i = 0; i < 8; ++i) {  // softplus(β=2, threshold=1): x where 2x > 1, else log1p(e^(2x)) / 2
    const double want = 2.0 * xv[i] > 1.0 ? xv[i] : std::log1p(std::exp(2.0 * xv[i])) / 2.0;
    CHECK(std::abs(cpu[1].tensor().data_ptr()[i] - want) < 1e-6);
    CHECK(cpu[4].tensor().data_ptr()[i] == xv[i] * xv[i]);
    CHECK(cpu[5].any().get<bool>().data_ptr()[i] == (xv[i] > 0 && xv[i] < 3));
  }
  for (int i = 0; i < 8; ++i) {
    CHECK(cpu[6].tensor().data_ptr()[i] == (xv[i] > 0 ? xv[i] : 0.1f * xv[i]));
    const float wv = float(i) - 3.5f;
    CHECK(std::abs(cpu[7].tensor().data_ptr()[i] - (wv + 0.5 * wv * wv)) < 1e-6);
  }
  REQUIRE(cpu[2].tensor().sizes() == Dims{4, 4});  // rows 0, 0, 1, 1
  CHECK(cpu[2].tensor().data_ptr()[4 + 3] == 4.0f);
  CHECK(cpu[2].tensor().data_ptr()[8] == 3.0f);
  CHECK(cpu[3].tensor().sizes() == Dims{4, 2});

  using torchtpu::AnyTensor;
  using torchtpu::ScalarType;
  torchtpu::jit::DeviceProgram dp(g, {ScalarType::Float, ScalarType::Float}, {Dims{2, 4}, Dims{4, 2}}, emulator());
  const std::vector<AnyTensor> got = dp.run_any({AnyTensor(xt), AnyTensor(wt)});
  REQUIRE(got.size() == 8);
  CHECK(max_rel(got[6].get<float>(), cpu[6].tensor()) == 0.0);
  CHECK(max_rel(got[7].get<float>(), cpu[7].tensor()) < 1e-6);
  CHECK(max_rel(got[0].get<float>(), cpu[0].tensor()) < 1e-6);
  CHECK(max_rel(got[1].get<float>(), cpu[1].tensor()) < 1e-6);
  for (int o = 2; o < 5; ++o) CHECK(max_rel(got[size_t(o)].get<float>(), cpu[size_t(o)].tensor()) == 0.0);
  for (int i = 0; i < 8; ++i) CHECK(got[5].get<bool>().contiguous().data_ptr()[i] == cpu[5].any().get<bool>().data_ptr()[i]);

  // cpu only: eye(2, 3), argmax over all and along dim 1, neg of an int (shape arithmetic)
  Graph h;
  const int y = h.add_input("y");
  auto k = [&](Value v) { return h.add_constant(std::move(v)); };
  const int eye = h.add_node("aten::eye", {k(Value(int64_t(2))), k(Value(int64_t(3))), k(Value()), k(Value()), k(Value()), k(Value())}, 1, "m0")[0];
  const int am = h.add_node("aten::argmax", {y, k(Value()), k(Value(false))}, 1, "m1")[0];
  const int am1 = h.add_node("aten::argmax", {y, k(Value(int64_t(1))), k(Value(true))}, 1, "m2")[0];
  const int sz = h.add_node("aten::size", {y, k(Value(int64_t(1)))}, 1, "m3")[0];
  const int ng = h.add_node("aten::neg", {sz}, 1, "m4")[0];
  const int nt = h.add_node("prim::NumToTensor", {ng}, 1, "m5")[0];
  const int ntf = h.add_node("aten::to", {nt, k(Value(int64_t(6))), k(Value(false)), k(Value(false)), k(Value())}, 1, "m6")[0];
  h.set_outputs({eye, am, am1, ntf});
  h.finalize();
  const std::vector<Value> hr = h.run({Value(xt)});
  REQUIRE(hr[0].any().dtype() == ScalarType::Float);
  CHECK(hr[0].tensor().sizes() == Dims{2, 3});
  const float eye_want[6] = {1, 0, 0, 0, 1, 0};
  for (int i = 0; i < 6; ++i) CHECK(hr[0].tensor().data_ptr()[i] == eye_want[i]);
  CHECK(hr[1].any().get<int64_t>().data_ptr()[0] == 3);  // 4 at flat index 3
  CHECK(hr[2].any().sizes() == Dims{2, 1});
  CHECK(hr[2].any().get<int64_t>().data_ptr()[1] == 0);  // row 1's maximum 3 at column 0
  CHECK(hr[3].tensor().data_ptr()[0] == -4.0f);
}

TEST_CASE("jit: as_strided views self's storage as torch's (cpu); the compiled path lists it", "[jit][pjrt]") {
  // x = torch.arange(8.).reshape(2, 4); x.as_strided([3, 4], [2, 1]) = rows [0..3], [2..5],
  // [4..7] (overlapping); x.as_strided([2, 2], [3, 1], 1) = [[1, 2], [4, 5]]; on x.t() (the same
  // storage, another layout) torch gives the same: as_strided reads the storage
  auto ints = [](std::vector<int64_t> v) { return Value(std::move(v)); };
  Graph g;
  const int x = g.add_input("x");
  const int a = g.add_node("aten::as_strided", {x, g.add_constant(ints({3, 4})), g.add_constant(ints({2, 1})),
                                                g.add_constant(Value())}, 1, "n0")[0];
  const int b = g.add_node("aten::as_strided", {x, g.add_constant(ints({2, 2})), g.add_constant(ints({3, 1})),
                                                g.add_constant(Value(int64_t(1)))}, 1, "n1")[0];
  g.set_outputs({a, b});
  g.finalize();
  const FloatTensor in = torchtpu::arange<float>(0, 8).reshape(Dims{2, 4});
  auto vals = [](const FloatTensor& t) {
    const FloatTensor c = t.contiguous();
    return std::vector<float>(c.data_ptr(), c.data_ptr() + c.numel());
  };
  for (const FloatTensor& self : {in, FloatTensor(in.t())}) {
    const auto cpu = g.run({Value(self)});
    CHECK(cpu[0].tensor().sizes() == Dims{3, 4});
    CHECK(vals(cpu[0].tensor()) == std::vector<float>{0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7});
    CHECK(vals(cpu[1].tensor()) == std::vector<float>{1, 2, 4, 5});
    CHECK(cpu[0].tensor().storage() == in.storage());  // a view, as torch's
  }
  // a view of a view: the offset defaults to self's (torch: x[1].as_strided([2], [1]) = [4, 5])
  Graph h;
  const int y = h.add_input("x");
  const int row = h.add_node("aten::select", {y, h.add_constant(Value(int64_t(0))), h.add_constant(Value(int64_t(1)))}, 1,
                             "n0")[0];
  h.set_outputs({h.add_node("aten::as_strided", {row, h.add_constant(ints({2})), h.add_constant(ints({1}))}, 1, "n1")[0]});
  h.finalize();
  CHECK(vals(h.run({Value(in)})[0].tensor()) == std::vector<float>{4, 5});
  // the compiled path has values, not storage layouts: the op is listed as not lowered
  CHECK_THROWS_WITH(torchtpu::jit::DeviceProgram(g, {in.sizes()}, emulator()), Catch::Contains("aten::as_strided x2"));
  // a view reaching past the storage's 8 elements: ShapeError naming the op, sizes and strides
  Graph bad;
  const int z = bad.add_input("x");
  bad.set_outputs({bad.add_node("aten::as_strided", {z, bad.add_constant(ints({3, 4})), bad.add_constant(ints({3, 1}))},
                                1, "n0")[0]});
  bad.finalize();
  CHECK_THROWS_WITH(bad.run({Value(in)}), Catch::Contains("aten::as_strided: size [3, 4], stride [3, 1] and storage offset 0 "
                                                          "for self [2, 4] float32: the view reaches outside self's storage"));
}
