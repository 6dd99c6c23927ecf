// examples/basic.cpp — a first torchtpu program: a two-layer network's forward pass on the
// CPU (fused: the bias and relu run on each matmul output tile), softmax, argmax, printing.
#include <cstdio>  // std::printf

#include <torchtpu/torchtpu.hpp>  // Tensor, matmul, relu, softmax, printing

int main() {
  using namespace torchtpu;
  Generator gen(2026);                          // explicit seed: same numbers everywhere
  Tensor<float> x = randn<float>({4, 8}, gen);  // a batch of 4 inputs with 8 features
  Tensor<float> w1 = randn<float>({16, 8}, gen) * 0.3f;
  Tensor<float> b1 = zeros<float>({16});
  Tensor<float> w2 = randn<float>({3, 16}, gen) * 0.3f;
  Tensor<float> b2 = Tensor<float>{0.1f, 0.0f, -0.1f};

  auto hidden = relu(linear(x, w1, b1));        // lazy: nothing computed yet
  Tensor<float> logits = linear(hidden, w2, b2);  // evaluated here, [4, 3]
  Tensor<float> probs = softmax(logits, 1);
  Tensor<int64_t> label = argmax(probs, 1);

  fmt::print("logits = {}\nprobs = {}\nlabel = {}\n", logits, probs, label);
  std::printf("row sums of probs: %.6f (all rows sum to 1)\n", double(probs.sum().item()) / 4.0);
  return 0;
}
