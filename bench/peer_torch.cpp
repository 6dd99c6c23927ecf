// bench/peer_torch.cpp — libtorch 1.13 versions of the workloads (ATen's natural calls on
// tensors wrapping the same buffers; the driver sets ATEN_CPU_CAPABILITY=avx512 and
// OMP_WAIT_POLICY=passive, the peer's best settings here).
#include <torch/torch.h>  // torch::Tensor, from_blob, InferenceMode

#include <string>  // std::string

#include "peers.hpp"  // Run, buffers

namespace bench {

namespace {
torch::Tensor wrap(const float* p, std::vector<int64_t> shape) {
  return torch::from_blob(const_cast<float*>(p), shape, torch::TensorOptions().dtype(torch::kFloat32));
}
}  // namespace

void torch_set_threads(int n) {
  torch::set_num_threads(n);
}
std::string torch_config() { return "libtorch " + std::string(TORCH_VERSION) + ", " + std::to_string(torch::get_num_threads()) + " threads at start"; }

Run torch_w1(const W1Buffers& bf) {
  auto x = wrap(bf.x, {bf.n}), w = wrap(bf.w, {bf.n}), b = wrap(bf.b, {bf.n}), y = wrap(bf.y, {bf.n});
  return [x, w, b, y]() mutable {
    c10::InferenceMode guard;
    y.copy_(torch::tanh(x * w + b) * torch::sigmoid(x) + 0.5 * x);
  };
}

Run torch_gemm(const GemmBuffers& g, bool epilogue) {
  auto a = wrap(g.a, {g.m, g.k}), b = wrap(g.b, {g.k, g.n}), c = wrap(g.c, {g.m, g.n});
  torch::Tensor bias = epilogue ? wrap(g.bias, {g.n}) : torch::Tensor();
  return [a, b, c, bias, epilogue]() mutable {
    c10::InferenceMode guard;
    if (epilogue) {
      torch::addmm_out(c, bias, a, b);
      c.relu_();
    } else {
      torch::mm_out(c, a, b);
    }
  };
}

Run torch_mlp(const MlpBuffers& p) {
  auto x = wrap(p.x, {1, p.d[0]});
  std::vector<torch::Tensor> w, b;
  for (int i = 0; i < 3; ++i) {
    w.push_back(wrap(p.w[i], {p.d[i], p.d[i + 1]}));
    b.push_back(wrap(p.b[i], {p.d[i + 1]}));
  }
  auto y = wrap(p.y, {1, p.d[3]});
  return [x, w, b, y]() mutable {
    c10::InferenceMode guard;
    auto h = torch::relu(torch::addmm(b[0], x, w[0]));
    h = torch::relu(torch::addmm(b[1], h, w[1]));
    torch::addmm_out(y, b[2], h, w[2]);
  };
}

Run torch_softmax(const RowsBuffers& r) {
  auto x = wrap(r.x, {r.r, r.c}), y = wrap(r.y, {r.r, r.c});
  return [x, y]() mutable {
    c10::InferenceMode guard;
    torch::softmax_out(y, x, 1);
  };
}

Run torch_sum(const RowsBuffers& r, int axis) {
  auto x = wrap(r.x, {r.r, r.c}), y = wrap(r.y, {axis == 0 ? r.c : r.r});
  return [x, y, axis]() mutable {
    c10::InferenceMode guard;
    torch::sum_out(y, x, {axis});
  };
}

}  // namespace bench
