// bench/aarch64_counts.cpp — the workloads whose dynamic instruction counts
// bench/tools/qemu_insn_count.sh measures under qemu-user (issue 14): W1 = tanh(x*w+b) *
// sigmoid(x) + 0.5*x on f32 vectors (bench/cpu_engine.cpp's W1) and an n x n x n sgemm
// (W3), each with torchtpu and with Eigen 3.4, on one thread.
//
// Usage: aarch64_counts {torchtpu|eigen} {w1|gemm} N REPS
//   w1: N elements; gemm: C[N,N] = A[N,N] @ B[N,N] (N^3 FMAs).
// The workload runs once untimed (thread pool, packing buffers and other one-time set-up),
// then REPS times. The counting script runs two REPS values and divides the difference of the
// totals, so start-up and the warm-up run cancel. It prints a checksum of the last result
// (keeps the work observable) and, for `check`, the largest difference torchtpu vs Eigen.
//
// Built by bench/tools/qemu_insn_count.sh with aarch64-linux-gnu-g++ -O2 (NEON is baseline on
// aarch64, so Eigen vectorizes with NEON without -march); it is not a Meson target.
#include <Eigen/Core>  // Map, Array, Matrix
#include <cmath>       // std::fabs
#include <cstdio>      // std::printf, std::fprintf
#include <cstdlib>     // std::atoll
#include <string>
#include <vector>

#include <torchtpu/torchtpu.hpp>  // Tensor, matmul, tanh, sigmoid, set_num_threads

namespace {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// Deterministic values in [-2, 2) (a 32-bit LCG, Numerical Recipes' constants).
std::vector<float> fill(int64_t n, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  uint32_t s = seed;
  for (auto& e : v) {
    s = s * 1664525u + 1013904223u;
    e = float(s >> 8) / float(1u << 24) * 4.0f - 2.0f;
  }
  return v;
}

torchtpu::Tensor<float> to_tensor(const std::vector<float>& v, torchtpu::Dims shape) {
  torchtpu::Tensor<float> t = torchtpu::Tensor<float>::empty(shape);
  float* p = t.data_ptr();
  for (size_t i = 0; i < v.size(); ++i) p[i] = v[i];
  return t;
}

double checksum(const float* p, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += double(p[i]) * double(1 + (i % 7));
  return s;
}

/// Runs `impl` on `work` once, then `reps` times; returns the result (size n or n*n).
std::vector<float> run(const std::string& impl, const std::string& work, int64_t n, int64_t reps) {
  const bool gemm = work == "gemm";
  const int64_t len = gemm ? n * n : n;
  const std::vector<float> a = fill(len, 1), b = fill(len, 2), c = fill(len, 3);
  std::vector<float> out(static_cast<size_t>(len));
  if (impl == "torchtpu") {
    torchtpu::set_num_threads(1);
    const torchtpu::Dims shape = gemm ? torchtpu::Dims{n, n} : torchtpu::Dims{n};
    torchtpu::Tensor<float> x = to_tensor(a, shape), w = to_tensor(b, shape), bb = to_tensor(c, shape);
    torchtpu::Tensor<float> y = torchtpu::Tensor<float>::empty(shape);
    for (int64_t r = 0; r <= reps; ++r) {
      if (gemm) y.copy_(torchtpu::matmul(x, w));
      else y.copy_(torchtpu::tanh(x * w + bb) * torchtpu::sigmoid(x) + 0.5 * x);
    }
    for (int64_t i = 0; i < len; ++i) out[size_t(i)] = y.data_ptr()[i];
  } else {
    if (gemm) {
      Eigen::Map<const RowMat> x(a.data(), n, n), w(b.data(), n, n);
      Eigen::Map<RowMat> y(out.data(), n, n);
      for (int64_t r = 0; r <= reps; ++r) y.noalias() = x * w;
    } else {
      Eigen::Map<const Eigen::ArrayXf> x(a.data(), n), w(b.data(), n), bb(c.data(), n);
      Eigen::Map<Eigen::ArrayXf> y(out.data(), n);
      for (int64_t r = 0; r <= reps; ++r) y = (x * w + bb).tanh() * x.logistic() + 0.5f * x;
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s {torchtpu|eigen|check} {w1|gemm} N REPS\n", argv[0]);
    return 2;
  }
  const std::string impl = argv[1], work = argv[2];
  const int64_t n = std::atoll(argv[3]), reps = std::atoll(argv[4]);
  if ((impl != "torchtpu" && impl != "eigen" && impl != "check") || (work != "w1" && work != "gemm") || n <= 0 ||
      reps < 0) {
    std::fprintf(stderr, "%s: bad arguments\n", argv[0]);
    return 2;
  }
  if (impl == "check") {
    // torchtpu against Eigen: the counts compare the same computation.
    const std::vector<float> t = run("torchtpu", work, n, 0), e = run("eigen", work, n, 0);
    double worst = 0, scale = 0;
    for (size_t i = 0; i < t.size(); ++i) {
      worst = std::fmax(worst, std::fabs(double(t[i]) - double(e[i])));
      scale = std::fmax(scale, std::fabs(double(e[i])));
    }
    std::printf("%s n=%lld: max |torchtpu - eigen| = %.3g (max |eigen| = %.3g)\n", work.c_str(), (long long)n, worst,
                scale);
    const double tol = work == "gemm" ? 1e-5 * scale * std::sqrt(double(n)) : 1e-5;
    return worst <= tol ? 0 : 1;
  }
  const std::vector<float> y = run(impl, work, n, reps);
  std::printf("%s %s n=%lld reps=%lld checksum %.9g\n", impl.c_str(), work.c_str(), (long long)n, (long long)reps,
              checksum(y.data(), int64_t(y.size())));
  return 0;
}
