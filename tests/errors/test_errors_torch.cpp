// tests/errors/test_errors_torch.cpp — bad inputs to libtorch interop, the TorchScript loader
// and torchtpu-run's command line (docs/errors.md, sections "Interop", "Model import",
// "torchtpu-run"). Built only with libtorch. TORCHTPU_DATA_DIR and TORCHTPU_JIT_MODELS hold
// the committed models, TORCHTPU_JIT_FIXTURES the generated ones (tests/jit/make_fixtures.py;
// empty when /usr/bin/python3 has no torch), TORCHTPU_RUN the torchtpu-run binary.
#include <sys/wait.h>  // WEXITSTATUS

#include <cstdio>   // popen, pclose, fgets
#include <string>   // std::string
#include <utility>  // std::pair
#include <vector>   // std::vector

#include <ATen/ATen.h>  // at::Tensor, at::ones, at::quantize_per_tensor

#include <torchtpu/device.hpp>         // Tensor::to("tpu")
#include <torchtpu/interop/torch.hpp>  // from_torch, to_torch
#include <torchtpu/jit/load.hpp>       // torchtpu::jit::load

// Debian's c10 logs through glog, whose CHECK(condition) would replace Catch's CHECK (a false
// condition would abort the process instead of failing the assertion): Catch comes last.
#undef CHECK
#include <catch2/catch.hpp>  // TEST_CASE, REQUIRE_THROWS_MATCHES

#include "error_matchers.hpp"  // terr::has_message

using namespace torchtpu;
using terr::has_message;

namespace {
const std::string data_dir = TORCHTPU_DATA_DIR;
const std::string models_dir = TORCHTPU_JIT_MODELS;
const std::string fixtures_dir = TORCHTPU_JIT_FIXTURES;

/// Exit status and stderr (merged with stdout) of torchtpu-run with `args`.
std::pair<int, std::string> run_cli(const std::string& args) {
  const std::string cmd = std::string(TORCHTPU_RUN) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  const int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}
}  // namespace

TEST_CASE("errors/torch: from_torch of tensors torchtpu cannot share", "[errors][interop]") {
  REQUIRE_THROWS_MATCHES(from_torch(at::Tensor()), ValueError, has_message({"from_torch", "undefined"}));
  REQUIRE_THROWS_MATCHES(from_torch(at::ones({2}, at::kComplexFloat)), TypeError,
                         has_message({"ComplexFloat", "no torchtpu counterpart", "accepted: Float"}));
  REQUIRE_THROWS_MATCHES(from_torch(at::ones({2}, at::kShort)), TypeError, has_message({"Short", "no torchtpu counterpart"}));
  REQUIRE_THROWS_MATCHES(from_torch<float>(at::ones({2}, at::kDouble)), TypeError, has_message({"from_torch", "Double"}));
  REQUIRE_THROWS_MATCHES(from_torch(at::ones({2}, at::TensorOptions().device(at::kMeta))), ValueError,
                         has_message({"from_torch", "on meta", "call .cpu() first"}));
  REQUIRE_THROWS_MATCHES(from_torch(at::eye(3).to_sparse()), ValueError, has_message({"from_torch", "layout Sparse", "to_dense()"}));
  const at::Tensor q = at::quantize_per_tensor(at::ones({2}), 0.1, 0, at::kQUInt8);
  REQUIRE_THROWS_MATCHES(from_torch(q), TypeError, has_message({"quantized", "QUInt8", "dequantize()"}));
  const at::Tensor neg = at::ones({2}, at::kFloat)._neg_view();
  REQUIRE_THROWS_MATCHES(from_torch(neg), ValueError, has_message({"lazy negation", "resolve_neg()"}));
  REQUIRE_THROWS_MATCHES(from_torch(at::ones({1, 1, 1, 1, 1, 1, 1, 1, 1})), ShapeError, has_message({"from_torch", "rank 9"}));
  // A non-contiguous tensor is not an error: it is shared, strides and all.
  const at::Tensor t = at::arange(6, at::kFloat).reshape({2, 3}).t();
  const Tensor<float> v = from_torch<float>(t);
  CHECK(v.data_ptr() == t.data_ptr<float>());
  CHECK(v.strides() == Dims{1, 3});
  CHECK(v.at(2, 1) == 5.0f);
}

TEST_CASE("errors/torch: to_torch of a device tensor without copy_to_host", "[errors][interop][pjrt]") {
  REQUIRE_THROWS_MATCHES(to_torch(Tensor<float>()), ValueError, has_message({"to_torch", "undefined"}));
  const Tensor<float> d = Tensor<float>{1, 2}.to("tpu");
  REQUIRE_THROWS_MATCHES(to_torch(d), ValueError, has_message({"to_torch", "on tpu:0", "copy_to_host = true"}));
  const at::Tensor h = to_torch(d, /*copy_to_host=*/true);
  CHECK(h.data_ptr<float>()[1] == 2.0f);
}

TEST_CASE("errors/negstride: to_torch of a view with a negative stride", "[errors][interop]") {
  const Tensor<float> x = {{0, 1, 2}, {3, 4, 5}};
  const Tensor<float> r = x.flip({0});  // [[3, 4, 5], [0, 1, 2]], strides [-3, 1]
  const std::string refused = "to_torch: the view with sizes [2, 3], strides [-3, 1] and dtype float32 has the "
                              "negative stride -3 on dim 0 of size 2, which libtorch cannot express; pass "
                              "CopyMode::if_needed to export a contiguous copy";
  REQUIRE_THROWS_MATCHES(to_torch(r), ValueError, has_message({refused}));  // the default never copies
  REQUIRE_THROWS_MATCHES(to_torch(r, CopyMode::never), ValueError, has_message({refused}));
  REQUIRE_THROWS_MATCHES(to_torch(AnyTensor(x.flip({1}))), ValueError, has_message({"strides [3, -1]", "stride -1 on dim 1"}));
  CHECK(std::vector<float>(x.data_ptr(), x.data_ptr() + 6) == std::vector<float>{0, 1, 2, 3, 4, 5});
  // CopyMode::if_needed: a new contiguous copy of the reversed rows (not an error).
  const at::Tensor c = to_torch(r, CopyMode::if_needed);
  CHECK(c.data_ptr<float>() != x.data_ptr());
  CHECK(c.is_contiguous());
  CHECK(std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + 6) == std::vector<float>{3, 4, 5, 0, 1, 2});
}

TEST_CASE("errors/jit: load of missing, non-model and unsupported files", "[errors][jit]") {
  REQUIRE_THROWS_MATCHES(jit::load(models_dir + "/nope.pt"), ValueError,
                         has_message({"torchtpu::jit::load", "nope.pt", "no such file"}));
  REQUIRE_THROWS_MATCHES(jit::load(data_dir + "/digits_test_x.npy"), ValueError,
                         has_message({"torchtpu::jit::load", "is not a TorchScript module", "not a zip archive"}));
  REQUIRE_THROWS_MATCHES(jit::load(models_dir + "/unsupported.pt"), UnsupportedOperator,
                         has_message({"aten::i0 x2, first at node"}));
  REQUIRE_THROWS_MATCHES(jit::load(models_dir + "/control_flow.pt"), UnsupportedOperator,
                         has_message({"prim::If x1", "control flow"}));
  if (fixtures_dir.empty()) {
    WARN("skipped: no generated fixtures (/usr/bin/python3 without torch): state dict and pickled module rows");
  } else {
    REQUIRE_THROWS_MATCHES(jit::load(fixtures_dir + "/state_dict.pt"), ValueError,
                           has_message({"it is a state dict", "model.load_state_dict", "torch.jit.freeze(torch.jit.trace"}));
    REQUIRE_THROWS_MATCHES(jit::load(fixtures_dir + "/pickled_module.pt"), ValueError,
                           has_message({"a pickled nn.Module", "__main__.GeluTanh"}));
    REQUIRE_THROWS_MATCHES(jit::load(fixtures_dir + "/weights_flipped.pt"), ValueError,
                           has_message({"is damaged", "CRC-32"}));
  }
}

TEST_CASE("errors/jit: forward with a wrong input shape, count or dtype", "[errors][jit]") {
  const auto mlp = jit::load(data_dir + "/models/mlp.pt");
  REQUIRE_THROWS_MATCHES(mlp.forward(jit::FloatTensor::empty(Dims{2, 65})), ShapeError, has_message({"aten::linear", "[2, 65]"}));
  REQUIRE_THROWS_MATCHES(mlp.forward(std::vector<jit::Value>{}), ValueError, has_message({"forward: the model takes 1 input(s), got 0"}));
  const at::Tensor l = at::zeros({2, 64}, at::kLong);
  REQUIRE_THROWS_MATCHES(jit::detail::borrow_float(l, "input 0"), TypeError, has_message({"input 0", "Long", "float32"}));
  // The module still works after the refused calls.
  CHECK(mlp.forward(jit::FloatTensor::empty(Dims{2, 64}).fill_(0.0f)).sizes() == Dims{2, 10});
}

TEST_CASE("errors/torchtpu-run: bad command lines exit 2 with the usage; bad files exit 1", "[errors][cli]") {
  const std::string model = data_dir + "/models/mlp.pt", x = data_dir + "/digits_test_x.npy";
  struct Row {
    std::string args;
    int status;
    std::string says;
  };
  const std::vector<Row> rows = {
      {"", 2, "no model given"},
      {model, 2, "give --input FILE.npy (once per model input) or --data FILE.csv"},
      {model + " --input " + x + " --data " + data_dir + "/digits_test.csv", 2, "give --input FILE.npy (once per model input) or --data"},
      {model + " --input", 2, "missing value after --input"},
      {model + " --input " + x + " --frobnicate", 2, "unknown option --frobnicate"},
      {model + " " + model + " --input " + x, 2, "unexpected argument"},
      {model + " --input " + x + " --bench -3", 2, "--bench N needs an integer N >= 0, got '-3'"},
      {model + " --input " + x + " --bench ten", 2, "--bench N needs an integer N >= 0, got 'ten'"},
      {model + " --input " + x + " --torch-threads 0", 2, "--torch-threads N needs an integer N >= 1, got '0'"},
      {model + " --input " + x + " --device gpu", 1, "--device must be auto, cpu, tpu, cuda or xla_cpu, got 'gpu'"},
      {model + " --input " + x + " --mode lazy", 1, "--mode must be debug, strict or fused, got 'lazy'"},
      {models_dir + "/nope.pt --input " + x, 1, "no such file"},
      {model + " --input " + data_dir + "/nope.npy", 1, "nope.npy: cannot open for reading"},
      {model + " --input " + data_dir + "/digits_test_y.npy", 1, "aten::linear: expected a float32 tensor, got int64"},
      {model + " --input " + x + " --input " + x, 1, "forward: the model takes 1 input(s), got 2"},
      {model + " --data " + data_dir + "/README.md", 1, "README.md:"},
      {models_dir + "/unsupported.pt --input " + x, 3, "unsupported operators"},
  };
  for (const Row& r : rows) {
    INFO("torchtpu-run " << r.args);
    const auto [status, out] = run_cli(r.args);
    INFO(out);
    CHECK(status == r.status);
    CHECK(out.find(r.says) != std::string::npos);
    if (r.status == 2) CHECK(out.find("usage: torchtpu-run MODEL.pt") != std::string::npos);
  }
}
