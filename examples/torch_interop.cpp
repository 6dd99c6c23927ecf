// examples/torch_interop.cpp — libtorch and torchtpu sharing memory: run a TorchScript model
// with libtorch, post-process its logits with a fused torchtpu expression without copying
// them, and hand the result back to libtorch, again without a copy.
//
// Usage: torch_interop [MODEL.pt [INPUTS.npy]]
//   defaults: data/models/mlp.pt and data/digits_test_x.npy (float32 [N, 64], made by
//   tools/make_models.py); the first 8 rows are classified.
#include <cstdio>     // std::printf
#include <exception>  // std::exception
#include <string>     // std::string

#include <torch/script.h>  // torch::jit::load, at::Tensor

#include <torchtpu/interop/torch.hpp>  // from_torch, to_torch
#include <torchtpu/io/npy.hpp>         // read_npy
#include <torchtpu/torchtpu.hpp>       // the library

#ifndef TORCHTPU_DATA_DIR
#define TORCHTPU_DATA_DIR "data"
#endif

int main(int argc, char** argv) try {
  const std::string model_path = argc > 1 ? argv[1] : TORCHTPU_DATA_DIR "/models/mlp.pt";
  const std::string input_path = argc > 2 ? argv[2] : TORCHTPU_DATA_DIR "/digits_test_x.npy";

  // 1. Inputs: the .npy bytes become a torch tensor without a copy (at::from_blob).
  torchtpu::NpyArray npy = torchtpu::read_npy(input_path);
  if (npy.dtype != torchtpu::ScalarType::Float || npy.shape.size() != 2) {
    std::fprintf(stderr, "%s: expected a float32 [N, 64] array\n", input_path.c_str());
    return 1;
  }
  at::Tensor inputs = at::from_blob(npy.data.data(), npy.shape, at::kFloat).narrow(0, 0, 8);

  // 2. libtorch runs the model.
  torch::jit::script::Module model = torch::jit::load(model_path);
  model.eval();
  torch::NoGradGuard no_grad;
  at::Tensor logits = model.forward({inputs}).toTensor();  // [8, 10]

  // 3. torchtpu views the logits (same memory) and post-processes them in fused passes:
  //    temperature-scaled softmax, then the probability margin over 0.5.
  torchtpu::Tensor<float> l = torchtpu::from_torch<float>(logits);
  const float temperature = 2.0f;
  torchtpu::Tensor<float> probs = torchtpu::softmax(l / temperature, 1);
  torchtpu::Tensor<int64_t> pred = torchtpu::argmax(l, 1);

  // 4. Back to libtorch without a copy: the at::Tensor owns a reference to torchtpu's memory.
  at::Tensor probs_t = torchtpu::to_torch(probs);
  at::Tensor expected = at::softmax(logits / temperature, 1);
  const double max_diff = (probs_t - expected).abs().max().item<double>();

  std::printf("model %s, %lld inputs\n", model_path.c_str(), static_cast<long long>(inputs.size(0)));
  std::printf("zero copy: logits %s, probabilities %s\n",
              l.data_ptr() == logits.data_ptr() ? "shared" : "COPIED",
              probs_t.data_ptr() == probs.data_ptr() ? "shared" : "COPIED");
  for (int64_t i = 0; i < pred.numel(); ++i)
    std::printf("  sample %lld: class %lld, p = %.4f\n", static_cast<long long>(i),
                static_cast<long long>(pred.at(i)), static_cast<double>(probs.at(i, pred.at(i))));
  std::printf("max |torchtpu softmax - libtorch softmax| = %.3g\n", max_diff);
  return max_diff < 1e-6 && l.data_ptr() == logits.data_ptr() ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "torch_interop: %s\n", e.what());
  return 1;
}
