// tests/jit/test_jit_load.cpp — the TorchScript importer (needs libtorch): the three digits
// models against libtorch's saved logits (data/reference), every execution mode, the
// loader freezing a non-frozen module, and the error cases (missing file, corrupt file,
// unsupported ops, control flow, wrong input shape and dtype).
#include <cmath>       // std::abs
#include <cstdio>      // std::fopen
#include <filesystem>  // std::filesystem::temp_directory_path
#include <string>      // std::string
#include <vector>      // std::vector

#include <torchtpu/io/npy.hpp>    // read_npy
#include <torchtpu/jit/load.hpp>  // torchtpu::jit::load

// Debian's c10 logs through glog, whose CHECK(condition) replaced Catch's CHECK here when Catch
// came first (a false CHECK aborted the process instead of failing the assertion): Catch last.
#undef CHECK
#include <catch2/catch.hpp>  // TEST_CASE, REQUIRE, CHECK_THROWS_*

#include "compare.hpp"     // jit_test::max_rel
#include "npy_tensor.hpp"  // npy_tensor

namespace {

using torchtpu::jit::FloatTensor;
using torchtpu::jit::Mode;

const std::string data_dir = TORCHTPU_DATA_DIR;
const std::string models_dir = TORCHTPU_JIT_MODELS;

using jit_test::npy_tensor;

using jit_test::max_rel;

}  // namespace

TEST_CASE("jit: digits models match libtorch's logits", "[jit]") {
  const FloatTensor x = npy_tensor(data_dir + "/digits_test_x.npy");
  for (const char* name : {"mlp", "cnn", "transformer"}) {
    INFO(name);
    const auto m = torchtpu::jit::load(data_dir + "/models/" + name + ".pt");
    const FloatTensor ref = npy_tensor(data_dir + "/reference/" + std::string(name) + "_logits.npy");
    for (Mode mode : {Mode::Fused, Mode::Strict, Mode::Debug}) {
      const FloatTensor y = m.forward(x, mode);
      REQUIRE(y.sizes() == torchtpu::Dims{360, 10});
      CHECK(max_rel(y, ref) < 1e-4);
    }
    // One sample at a time gives the same logits (batch axis is -1 in the reshapes).
    const FloatTensor y1 = m.forward(x.narrow(0, 7, 1));
    CHECK(max_rel(y1, ref.narrow(0, 7, 1)) < 1e-4);
  }
}

TEST_CASE("jit: fused mode runs fewer nodes than strict", "[jit]") {
  const auto m = torchtpu::jit::load(data_dir + "/models/cnn.pt");
  // conv+relu, conv+hardswish, conv+silu, conv+relu: four activations fold into their convs,
  // and the depthwise convolution and the 1x1 one after it form one torchtpu::conv_chain node
  // (jit/graph.hpp find_conv_chains; on 8x8 planes it runs its two members one by one).
  CHECK(m.graph().executed_nodes(Mode::Fused) + 5 == m.graph().executed_nodes(Mode::Strict));
}

TEST_CASE("jit: a traced module that was not frozen is frozen on load", "[jit]") {
  const auto m = torchtpu::jit::load(models_dir + "/not_frozen.pt");
  CHECK(m.was_frozen_on_load());
  const FloatTensor y = m.forward(npy_tensor(models_dir + "/not_frozen.input.npy"));
  CHECK(max_rel(y, npy_tensor(models_dir + "/not_frozen.output.npy")) < 1e-6);
}

TEST_CASE("jit: errors", "[jit]") {
  SECTION("missing file") {
    CHECK_THROWS_WITH(torchtpu::jit::load(models_dir + "/nope.pt"), Catch::Contains("no such file"));
    CHECK_THROWS_AS(torchtpu::jit::load(models_dir + "/nope.pt"), torchtpu::ValueError);
  }
  SECTION("corrupt file") {
    const auto path = std::filesystem::temp_directory_path() / "torchtpu_jit_corrupt.pt";
    {
      std::FILE* f = std::fopen(path.c_str(), "wb");
      REQUIRE(f);
      std::fputs("this is not a zip archive, nor TorchScript", f);
      std::fclose(f);
    }
    CHECK_THROWS_AS(torchtpu::jit::load(path.string()), torchtpu::ValueError);
    CHECK_THROWS_WITH(torchtpu::jit::load(path.string()), Catch::Contains("is not a TorchScript module"));
    std::filesystem::remove(path);
  }
  SECTION("a .npy file is not a model") {
    CHECK_THROWS_AS(torchtpu::jit::load(data_dir + "/digits_test_x.npy"), torchtpu::ValueError);
  }
  SECTION("unsupported operators are all listed, with counts and locations") {
    try {
      (void)torchtpu::jit::load(models_dir + "/unsupported.pt");
      FAIL("expected UnsupportedOperator");
    } catch (const torchtpu::UnsupportedOperator& e) {
      const std::string msg = e.what();
      CHECK_THAT(msg, Catch::Contains("2 operator kind(s)"));
      CHECK_THAT(msg, Catch::Contains("aten::i0 x2, first at node"));
      CHECK_THAT(msg, Catch::Contains("aten::erfinv x1, first at node"));
      CHECK_THAT(msg, Catch::Contains("first at node 3 (code/"));  // the serialized code's line
    }
  }
  SECTION("data-dependent control flow") {
    try {
      (void)torchtpu::jit::load(models_dir + "/control_flow.pt");
      FAIL("expected UnsupportedOperator");
    } catch (const torchtpu::UnsupportedOperator& e) {
      CHECK_THAT(std::string(e.what()), Catch::Contains("prim::If x1"));
      CHECK_THAT(std::string(e.what()), Catch::Contains("control flow"));
    }
  }
  SECTION("wrong input shape") {
    const auto m = torchtpu::jit::load(data_dir + "/models/cnn.pt");
    const FloatTensor bad = FloatTensor::empty(torchtpu::Dims{2, 63});
    CHECK_THROWS_AS(m.forward(bad), torchtpu::ShapeError);
    CHECK_THROWS_WITH(m.forward(bad), Catch::Contains("aten::reshape at node") && Catch::Contains("[-1, 1, 8, 8]"));
    const auto mlp = torchtpu::jit::load(data_dir + "/models/mlp.pt");
    CHECK_THROWS_WITH(mlp.forward(FloatTensor::empty(torchtpu::Dims{2, 65})),
                      Catch::Contains("aten::linear") && Catch::Contains("[2, 65]"));
  }
  SECTION("wrong input count and dtype") {
    const auto m = torchtpu::jit::load(data_dir + "/models/mlp.pt");
    CHECK_THROWS_AS(m.forward(std::vector<torchtpu::jit::Value>{}), torchtpu::ValueError);
    std::vector<int64_t> longs(2 * 64, 0);
    const at::Tensor l = torch::from_blob(longs.data(), {2, 64}, torch::TensorOptions().dtype(torch::kLong));
    CHECK_THROWS_AS(torchtpu::jit::detail::borrow_float(l, "input 0"), torchtpu::TypeError);
    CHECK_THROWS_WITH(torchtpu::jit::detail::borrow_float(l, "input 0"), Catch::Contains("Long"));
  }
}

TEST_CASE("jit: constant weights are shared with the libtorch module, not copied", "[jit]") {
  const auto m = torchtpu::jit::load(models_dir + "/not_frozen.pt");
  // The graph's constant slots hold tensors borrowed from libtorch: running twice gives the
  // same answer and the module stays usable after the first forward.
  const FloatTensor x = npy_tensor(models_dir + "/not_frozen.input.npy");
  const FloatTensor a = m.forward(x), b = m.forward(x);
  CHECK(max_rel(a, b) == 0.0);
  const at::Tensor t = m.torch_forward(torchtpu::jit::detail::to_torch_float(x));
  CHECK(max_rel(a, torchtpu::jit::detail::borrow_float(t.contiguous(), "out")) < 1e-6);
}
