// tests/jit/test_jit_pool.cpp — the pooling and transposed-convolution ops of the operator
// library (ops/pool.hpp, ops/pool_indices.hpp, ops/conv.hpp) as model-graph nodes, by their
// aten names: max_pool2d_with_indices and adaptive_max_pool2d/1d, max_pool1d_with_indices (two
// outputs per node), max_pool1d, avg_pool1d, adaptive_avg_pool1d, conv_transpose1d/2d/3d. The
// cpu run-time graph must give what the typed functions give (tests/ops/test_pool.cpp checks
// those against torch), each max's index must point at its value (a gather of the flattened
// input by the indices), and the compiled path (DeviceProgram: the TPU emulator or XLA's CPU
// plugin) must agree with the cpu graph (max pooling exactly; convolutions and averages within
// 1e-5 relative to the largest value).
#include <catch2/catch.hpp>  // TEST_CASE, REQUIRE, CHECK

#include <cmath>    // std::abs
#include <vector>   // std::vector

#include <torchtpu/core/factories.hpp>     // randn, Generator
#include <torchtpu/jit/lower.hpp>          // DeviceProgram, Graph
#include <torchtpu/ops/conv.hpp>           // conv_transpose1d/2d/3d
#include <torchtpu/ops/pool.hpp>           // max_pool1d, avg_pool1d, adaptive_avg_pool1d
#include <torchtpu/ops/pool_indices.hpp>   // max_pool2d_with_indices, adaptive_max_pool2d, ...

#include "../test_backend.hpp"  // test_kind
#include "compare.hpp"          // jit_test::max_rel

namespace {

using torchtpu::Dims;
using torchtpu::jit::FloatTensor;
using torchtpu::jit::Graph;
using torchtpu::jit::Value;

using jit_test::max_rel;

/// The backend under test: the TPU emulator (`tpu`) or XLA's CPU plugin (tests/test_backend.hpp).
std::shared_ptr<torchtpu::pjrt::Client> backend() { return torchtpu::pjrt::Client::get(ttest::test_kind()); }

}  // namespace

TEST_CASE("jit: pooling with indices, 1-D poolings and transposed convolutions as graph nodes, cpu and compiled",
          "[jit][pjrt][pool]") {
  torchtpu::Generator gen(11);
  const FloatTensor w2 = torchtpu::randn<float>(Dims{3, 2, 3, 2}, gen), b2 = torchtpu::randn<float>(Dims{2}, gen);
  const FloatTensor w1 = torchtpu::randn<float>(Dims{3, 2, 3}, gen), w3 = torchtpu::randn<float>(Dims{2, 1, 2, 2, 2}, gen);
  Graph g;
  const int x = g.add_input("x");  // [2, 3, 7, 8]
  auto c = [&](Value v) { return g.add_constant(std::move(v)); };
  auto ints = [&](std::vector<int64_t> v) { return c(Value(std::move(v))); };
  const int t = c(Value(true)), f = c(Value(false)), two = c(Value(int64_t(2))), m1 = c(Value(int64_t(-1)));
  const int one = c(Value(int64_t(1)));
  int k = 0;
  auto node = [&](const char* kind, std::vector<int> in, int outs = 1) {
    return g.add_node(kind, std::move(in), outs, "n" + std::to_string(k++));
  };
  // the maxima and a gather of the flattened input by their indices (`xf` of rank 3)
  auto gathered = [&](int xf, int idx) { return node("aten::gather", {xf, two, node("aten::flatten", {idx, two, m1})[0], f})[0]; };
  const int xf = node("aten::flatten", {x, two, m1})[0];  // [2, 3, 56]
  const auto mp = node("aten::max_pool2d_with_indices", {x, ints({3, 3}), ints({2, 2}), ints({1, 1}), ints({1, 1}), t}, 2);
  const auto am = node("aten::adaptive_max_pool2d", {x, ints({3, 5})}, 2);
  const auto m1d = node("aten::max_pool1d_with_indices", {xf, ints({3}), ints({2}), ints({0}), ints({2}), f}, 2);
  const auto a1d = node("aten::adaptive_max_pool1d", {xf, ints({6})}, 2);
  const int ct2 = node("aten::conv_transpose2d", {x, c(Value(w2)), c(Value(b2)), ints({2, 1}), ints({1, 0}), ints({1, 0}), one,
                                                  ints({1, 1})})[0];
  const int ct1 = node("aten::conv_transpose1d", {xf, c(Value(w1)), c(Value()), ints({2}), ints({1}), ints({1}), one, ints({1})})[0];
  const int ct3 = node("aten::conv_transpose3d", {x, c(Value(w3)), c(Value()), ints({1}), ints({0}), ints({0}), one, ints({1})})[0];
  const int mx1 = node("aten::max_pool1d", {xf, ints({3}), ints({}), ints({1}), ints({1}), f})[0];
  const int av1 = node("aten::avg_pool1d", {xf, ints({4}), ints({3}), ints({2}), t, f})[0];
  const int aa1 = node("aten::adaptive_avg_pool1d", {xf, ints({5})})[0];
  g.set_outputs({mp[0], gathered(xf, mp[1]), am[0], gathered(xf, am[1]), m1d[0], node("aten::gather", {xf, two, m1d[1], f})[0],
                 a1d[0], node("aten::gather", {xf, two, a1d[1], f})[0], ct2, ct1, ct3, mx1, av1, aa1});
  g.finalize();

  const FloatTensor in = torchtpu::randn<float>(Dims{2, 3, 7, 8}, gen);
  const FloatTensor inf = in.reshape(Dims{2, 3, 56});
  const std::vector<Value> got = g.run({Value(in)});
  REQUIRE(got.size() == 14);
  auto flat = [](const FloatTensor& v) { return FloatTensor(v.reshape(Dims{v.size(0), v.size(1), v.numel() / (v.size(0) * v.size(1))})); };
  // the cpu graph gives the typed functions' values; each index points at its maximum
  const auto [cv, ci] = torchtpu::max_pool2d_with_indices(in, {3}, {2}, {1}, {1}, true);
  CHECK(max_rel(got[0].tensor(), cv) == 0.0);
  CHECK(max_rel(got[1].tensor(), flat(cv)) == 0.0);
  const auto [av, ai] = torchtpu::adaptive_max_pool2d(in, {3, 5});
  CHECK(max_rel(got[2].tensor(), av) == 0.0);
  CHECK(max_rel(got[3].tensor(), flat(av)) == 0.0);
  const auto [v1, i1] = torchtpu::max_pool1d_with_indices(inf, {3}, {2}, {0}, {2});
  CHECK(max_rel(got[4].tensor(), v1) == 0.0);
  CHECK(max_rel(got[5].tensor(), v1) == 0.0);
  const auto [v2, i2] = torchtpu::adaptive_max_pool1d(inf, {6});
  CHECK(max_rel(got[6].tensor(), v2) == 0.0);
  CHECK(max_rel(got[7].tensor(), v2) == 0.0);
  CHECK(max_rel(got[8].tensor(), torchtpu::conv_transpose2d(in, w2, b2, {2, 1}, {1, 0}, {1, 0})) == 0.0);
  CHECK(max_rel(got[9].tensor(), torchtpu::conv_transpose1d(inf, w1, FloatTensor(), {2}, {1}, {1})) == 0.0);
  CHECK(max_rel(got[10].tensor(), torchtpu::conv_transpose3d(in, w3)) == 0.0);
  CHECK(got[10].tensor().sizes() == Dims{1, 4, 8, 9});  // unbatched [C=2, D=3, H=7, W=8]
  CHECK(max_rel(got[11].tensor(), torchtpu::max_pool1d(inf, {3}, {}, {1})) == 0.0);
  CHECK(max_rel(got[12].tensor(), torchtpu::avg_pool1d(inf, {4}, {3}, {2}, true, false)) == 0.0);
  CHECK(max_rel(got[13].tensor(), torchtpu::adaptive_avg_pool1d(inf, {5})) == 0.0);

  // the compiled path agrees with the cpu graph
  torchtpu::jit::DeviceProgram p(g, {in.sizes()}, backend());
  const std::vector<FloatTensor> dev = p.run({in});
  REQUIRE(dev.size() == got.size());
  for (size_t i = 0; i < dev.size(); ++i) {
    INFO("output " << i);
    const bool exact = i < 8 || i == 11;  // max pooling and gathers
    CHECK(max_rel(dev[i], got[i].tensor()) <= (exact ? 0.0 : 1e-5));
  }
}
