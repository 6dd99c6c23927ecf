// tests/jit/test_jit_semantics.cpp — an imported op computes what torch computes, on the cpu and
// on the TPU emulator, or the model is rejected at load with the op, the argument and its value
// (gelu approximate='tanh', dropout traced in training mode, a softmax dtype); and load errors
// say what a file that is not TorchScript is, how to make a loadable one, and keep libtorch's
// whole message. Fixtures: tests/jit/make_fixtures.py, generated into the build dir.
#include <algorithm>  // std::max
#include <cmath>      // std::abs, std::erf, std::tanh
#include <numbers>    // std::numbers::pi
#include <string>     // std::string
#include <vector>     // std::vector

#include <torchtpu/io/npy.hpp>     // read_npy
#include <torchtpu/jit/load.hpp>   // torchtpu::jit::load
#include <torchtpu/jit/lower.hpp>  // DeviceProgram

// libtorch's headers bring glog's CHECK, which aborts instead of reporting; Catch's replaces it.
#undef CHECK
#include <catch2/catch.hpp>  // TEST_CASE, CHECK_THROWS_WITH, Catch::Contains

#include "../test_backend.hpp"  // test_kind
#include "npy_tensor.hpp"      // npy_tensor

namespace {

using torchtpu::jit::FloatTensor;
using torchtpu::jit::Mode;
using Catch::Contains;

const std::string fx = TORCHTPU_JIT_FIXTURES;

using jit_test::npy_tensor;

double max_abs(const FloatTensor& a, const FloatTensor& b) {
  REQUIRE(a.sizes() == b.sizes());
  const FloatTensor ac = a.contiguous(), bc = b.contiguous();
  double m = 0;
  for (int64_t i = 0; i < ac.numel(); ++i) m = std::max(m, double(std::abs(ac.data_ptr()[i] - bc.data_ptr()[i])));
  return m;
}

FloatTensor on_emulator(const torchtpu::jit::Module& m, const FloatTensor& x) {
  torchtpu::jit::DeviceProgram p(m.graph(), {x.sizes()}, torchtpu::pjrt::Client::get(ttest::test_kind()));
  return p.run({x})[0];
}

/// The message `load(path)` throws (as ValueError), or "" when it loads.
std::string load_error(const std::string& path) {
  try {
    (void)torchtpu::jit::load(path);
  } catch (const torchtpu::ValueError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("jit semantics: int64 ids, a bool mask and an int64 constant flow through the graph", "[jit]") {
  // tests/jit/make_fixtures.py's IntIds: cat / stack / transpose / reshape / mul on int64, aten::to
  // float32 of int64 and bool, then linear; torch's output stored by the same script.
  const auto m = torchtpu::jit::load(fx + "/int_ids.pt");
  auto any_npy = [](const std::string& path) {
    const torchtpu::NpyArray a = torchtpu::read_npy(path);
    const torchtpu::Dims s(a.shape.begin(), a.shape.end());
    return torchtpu::AnyTensor::dispatch(a.dtype, [&]<class T>(std::type_identity<T>) {
      return torchtpu::AnyTensor(torchtpu::from_data(a.values<T>().data(), s));
    });
  };
  const torchtpu::AnyTensor ids = any_npy(fx + "/int_ids.ids.npy"), mask = any_npy(fx + "/int_ids.mask.npy");
  REQUIRE(ids.dtype() == torchtpu::ScalarType::Int64);
  REQUIRE(mask.dtype() == torchtpu::ScalarType::Bool);
  const FloatTensor want = npy_tensor(fx + "/int_ids.output.npy");
  for (Mode mode : {Mode::Fused, Mode::Strict, Mode::Debug}) {
    const auto out = m.forward(std::vector<torchtpu::jit::Value>{ids, mask}, mode);
    REQUIRE(out.size() == 1);
    CHECK(max_abs(out[0].tensor("output"), want) < 1e-5);
  }
  // nn.Embedding on int64 token ids (aten::embedding, the operator library), mean, linear
  const auto em = torchtpu::jit::load(fx + "/embed_ids.pt");
  const torchtpu::AnyTensor eids = any_npy(fx + "/embed_ids.ids.npy");
  const FloatTensor ewant = npy_tensor(fx + "/embed_ids.output.npy");
  for (Mode mode : {Mode::Fused, Mode::Strict, Mode::Debug})
    CHECK(max_abs(em.forward(std::vector<torchtpu::jit::Value>{eids}, mode)[0].tensor("output"), ewant) < 1e-6);
  // an op that computes in float32 only says so, naming itself and the dtype
  torchtpu::jit::Graph g;
  const int x = g.add_input("x");
  const int y = g.add_node("aten::softmax", {x, g.add_constant(torchtpu::jit::Value(int64_t(-1))),
                                             g.add_constant(torchtpu::jit::Value())}, 1, "test")[0];
  g.set_outputs({y});
  g.finalize();
  try {
    (void)g.run({torchtpu::jit::Value(ids)}, Mode::Strict);
    FAIL("no error");
  } catch (const torchtpu::Error& e) {
    CHECK_THAT(e.what(), Contains("aten::softmax") && Contains("int64"));
  }
}

TEST_CASE("jit semantics: advanced indexing (x[idx], x[mask], index_put_) matches torch; data-dependent shapes stay on the cpu",
          "[jit][pjrt]") {
  // tests/jit/make_fixtures.py's AdvIndex: constant index lists (aten::index, index_put_ with and
  // without accumulate, a row mask with one value), on the cpu in every mode and compiled whole
  const auto m = torchtpu::jit::load(fx + "/adv_index.pt");
  const FloatTensor x = npy_tensor(fx + "/adv_index.input.npy"), want = npy_tensor(fx + "/adv_index.output.npy");
  for (Mode mode : {Mode::Fused, Mode::Strict, Mode::Debug}) CHECK(max_abs(m.forward(x, mode), want) < 1e-6);
  CHECK(max_abs(on_emulator(m, x), want) < 1e-6);
  // AdvMask: a bool mask input (x[mask], y[mask] = 0, an index_put_ through the view `y[:, cols]`
  // traces to, nonzero, masked_select): the cpu, every mode
  const auto mm = torchtpu::jit::load(fx + "/adv_mask.pt");
  const torchtpu::NpyArray ma = torchtpu::read_npy(fx + "/adv_mask.mask.npy");
  const torchtpu::Tensor<bool> mask = torchtpu::from_data(ma.values<bool>().data(), torchtpu::Dims(ma.shape.begin(), ma.shape.end()));
  for (Mode mode : {Mode::Fused, Mode::Strict, Mode::Debug}) {
    INFO("mode " << int(mode));
    const auto out = mm.forward(std::vector<torchtpu::jit::Value>{x.clone(), mask}, mode);
    REQUIRE(out.size() == 1);
    const auto& l = out[0].anys("output");
    REQUIRE(l.size() == 5);
    for (int k : {0, 1, 2, 4})
      CHECK(max_abs(l[size_t(k)].get<float>(), npy_tensor(fx + "/adv_mask.output" + std::to_string(k) + ".npy")) == 0);
    const torchtpu::NpyArray nz = torchtpu::read_npy(fx + "/adv_mask.output3.npy");
    const torchtpu::Tensor<int64_t> got = l[3].get<int64_t>().contiguous();
    REQUIRE(std::vector<int64_t>(got.sizes().begin(), got.sizes().end()) == nz.shape);
    const auto want_nz = nz.values<int64_t>();
    CHECK(std::vector<int64_t>(got.data_ptr(), got.data_ptr() + got.numel()) == std::vector<int64_t>(want_nz.begin(), want_nz.end()));
  }
  // x[constant mask]: the compiled path cannot have a shape that depends on data
  const auto md = torchtpu::jit::load(fx + "/adv_data.pt");
  CHECK(md.forward(x).sizes() == torchtpu::Dims{10});
  try {
    (void)on_emulator(md, x);
    FAIL("no error");
  } catch (const torchtpu::UnsupportedOperator& e) {
    CHECK_THAT(e.what(), Contains("aten::index") && Contains("depends on the data"));
  }
}

TEST_CASE("jit semantics: gelu approximate='tanh' matches torch on the cpu (every mode) and the TPU emulator",
          "[jit][pjrt]") {
  const auto m = torchtpu::jit::load(fx + "/gelu_tanh.pt");
  const FloatTensor x = npy_tensor(fx + "/gelu_tanh.input.npy"), want = npy_tensor(fx + "/gelu_tanh.output.npy");
  for (Mode mode : {Mode::Fused, Mode::Strict, Mode::Debug}) CHECK(max_abs(m.forward(x, mode), want) < 2e-6);
  const FloatTensor dev = on_emulator(m, x);
  CHECK(max_abs(dev, want) < 2e-6);
  // On these inputs the erf form differs from torch's tanh form by far more than that
  // tolerance, so the checks above tell the two apart.
  const FloatTensor wc = x.contiguous();
  double erf_gap = 0;
  for (int64_t i = 0; i < wc.numel(); ++i) {
    const double y = wc.data_ptr()[i];
    erf_gap = std::max(erf_gap, std::abs(0.5 * y * (1 + std::erf(y / std::sqrt(2.0))) -
                                         0.5 * y * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (y + 0.044715 * y * y * y)))));
  }
  CHECK(erf_gap > 1e-4);
}

TEST_CASE("jit semantics: dropout traced in training mode is rejected at load, with its arguments", "[jit]") {
  CHECK_THROWS_AS(torchtpu::jit::load(fx + "/dropout_train.pt"), torchtpu::UnsupportedOperator);
  CHECK_THROWS_WITH(torchtpu::jit::load(fx + "/dropout_train.pt"),
                    Contains("arguments torchtpu does not compute as torch does") && Contains("aten::dropout x1") &&
                        Contains("train=True, p=0.5") && Contains("model.eval()"));
  CHECK_THROWS_WITH(torchtpu::jit::load(fx + "/feature_dropout_train.pt"),
                    Contains("aten::feature_dropout x1") && Contains("train=True, p=0.25"));
}

TEST_CASE("jit semantics: dropout with p=0 in training mode (as Swin keeps it) is exact and loads", "[jit][pjrt]") {
  const auto m = torchtpu::jit::load(fx + "/dropout_p0_train.pt");
  const FloatTensor x = npy_tensor(fx + "/dropout_p0_train.input.npy"), want = npy_tensor(fx + "/dropout_p0_train.output.npy");
  CHECK(max_abs(m.forward(x), want) < 1e-5);
  CHECK(max_abs(on_emulator(m, x), want) < 1e-5);
}

TEST_CASE("jit semantics: a softmax dtype argument is rejected at load with its value", "[jit]") {
  CHECK_THROWS_WITH(torchtpu::jit::load(fx + "/softmax_f64.pt"),
                    Contains("aten::softmax x1") && Contains("dtype=torch.float64"));
}

TEST_CASE("jit semantics: load errors say what the file is and how to make a loadable one", "[jit]") {
  const std::string how = "torch.jit.freeze(torch.jit.trace(model.eval(), example_input)).save('model.pt')";
  SECTION("state dict") {
    const std::string e = load_error(fx + "/state_dict.pt");
    CHECK_THAT(e, Contains("is not a TorchScript module: it is a state dict (torch.save(model.state_dict()))") &&
                      Contains("model.load_state_dict(torch.load(path))") && Contains(how) &&
                      Contains("(libtorch: PytorchStreamReader failed locating file constants.pkl: file not found)"));
  }
  SECTION("pickled module") {
    const std::string e = load_error(fx + "/pickled_module.pt");
    CHECK_THAT(e, Contains("a pickled nn.Module (torch.save(model)) of class __main__.GeluTanh") && Contains(how) &&
                      Contains("(libtorch: PytorchStreamReader failed locating file constants.pkl: file not found)"));
  }
  SECTION("a saved tensor, a legacy pickle") {
    CHECK_THAT(load_error(fx + "/saved_tensor.pt"), Contains("a torch.save archive holding a tensor"));
    CHECK_THAT(load_error(fx + "/legacy_pickle.pt"),
               Contains("a legacy torch.save file (the pre-1.6 pickle format") && Contains("torch.load(path)"));
  }
  SECTION("a zip of another kind") {
    CHECK_THAT(load_error(fx + "/other.zip"),
               Contains("a zip archive of another kind") && Contains("readme.txt, weights/w0.bin") && Contains(how) &&
                   Contains("(libtorch: [enforce fail at inline_container.cc:129] . file in archive is not in a "
                            "subdirectory: readme.txt)"));
  }
  SECTION("not a zip") {
    CHECK_THAT(load_error(fx + "/not_zip.bin"),
               Contains("is not a TorchScript module: it is not a zip archive") && Contains(how) &&
                   Contains("(libtorch: PytorchStreamReader failed reading zip archive: failed finding central "
                            "directory)"));
  }
  SECTION("libtorch's message is kept whole: ErrorReport's starts with a newline") {
    const std::string e = load_error(fx + "/bad_code.pt");
    CHECK_THAT(e, Contains("is a TorchScript archive that libtorch cannot read") &&
                      Contains("(libtorch: Unknown builtin op: aten::gelx.") && Contains("aten::gelu"));
    CHECK_THAT(e, !Contains("(libtorch: )"));
  }
  SECTION("byte-flipped files") {
    const std::string e = load_error(fx + "/flipped.pt");
    CHECK_THAT(e, Contains("is a TorchScript archive that libtorch cannot read") && !Contains("(libtorch: )"));
    CHECK_THAT(load_error(fx + "/cd_flipped.pt"),
               Contains("TorchScript archive that libtorch cannot read") &&
                   Contains("(libtorch: Expected hasRecord(\"version\") to be true"));
    // libtorch reads a flipped weight without noticing; the CRC-32 check does not.
    CHECK_THAT(load_error(fx + "/weights_flipped.pt"),
               Contains("is damaged: entry 'gelu_tanh/constants/0' fails its CRC-32 check") &&
                   Contains("libtorch read it without noticing"));
  }
}

TEST_CASE("jit semantics: inspect_archive classifies without libtorch", "[jit]") {
  using K = torchtpu::jit::ArchiveInfo::Kind;
  CHECK(torchtpu::jit::inspect_archive(fx + "/gelu_tanh.pt").kind == K::TorchScript);
  CHECK(torchtpu::jit::inspect_archive(fx + "/gelu_tanh.pt").damage.empty());
  CHECK(torchtpu::jit::inspect_archive(fx + "/state_dict.pt").kind == K::StateDict);
  CHECK(torchtpu::jit::inspect_archive(fx + "/pickled_module.pt").kind == K::PickledModule);
  CHECK(torchtpu::jit::inspect_archive(fx + "/pickled_module.pt").pickled_class == "__main__.GeluTanh");
  CHECK(torchtpu::jit::inspect_archive(fx + "/saved_tensor.pt").kind == K::TorchSave);
  CHECK(torchtpu::jit::inspect_archive(fx + "/legacy_pickle.pt").kind == K::LegacyPickle);
  CHECK(torchtpu::jit::inspect_archive(fx + "/other.zip").kind == K::OtherZip);
  CHECK(torchtpu::jit::inspect_archive(fx + "/not_zip.bin").kind == K::NotZip);
  CHECK(torchtpu::jit::inspect_archive(fx + "/weights_flipped.pt").kind == K::TorchScript);
  CHECK_FALSE(torchtpu::jit::inspect_archive(fx + "/weights_flipped.pt").damage.empty());
}
