// bench/peers.hpp — the interface between the benchmark driver and each peer library's
// translation unit (Eigen, xtensor, OpenBLAS, libtorch): every workload is a factory that
// binds to caller-owned buffers once and returns a closure running one iteration.
#pragma once
#include <cstdint>     // int64_t
#include <functional>  // std::function
#include <string>      // std::string

namespace bench {

using Run = std::function<void()>;

/// W1 y = tanh(x*w + b) * sigmoid(x) + 0.5*x over n floats.
struct W1Buffers { const float *x, *w, *b; float* y; int64_t n; };
/// Row-major C[m, n] = A[m, k] B[k, n] (+ bias[n], relu when `epilogue`).
struct GemmBuffers { const float *a, *b, *bias; float* c; int64_t m, k, n; };
/// Batch-1 MLP: x[1, d0] → relu(x W0 + b0) → relu(· W1 + b1) → · W2 + b2; W row-major [in, out].
struct MlpBuffers { const float* x; const float* w[3]; const float* b[3]; float* h[2]; float* y; int64_t d[4]; };
/// Softmax of each row of x[r, c] into y; or the sum over axis 0 / axis 1 of x[r, c] into y.
struct RowsBuffers { const float* x; float* y; int64_t r, c; };

Run eigen_w1(const W1Buffers&);
Run eigen_gemm(const GemmBuffers&, bool epilogue);
Run eigen_mlp(const MlpBuffers&);
Run eigen_softmax(const RowsBuffers&);
Run eigen_sum(const RowsBuffers&, int axis);
void eigen_set_threads(int);

Run xtensor_w1(const W1Buffers&);
Run xtensor_softmax(const RowsBuffers&);
Run xtensor_sum(const RowsBuffers&, int axis);

Run openblas_gemm(const GemmBuffers&, bool epilogue);  // sgemm, then a bias+relu pass
void openblas_set_threads(int);
std::string openblas_config();

Run torch_w1(const W1Buffers&);
Run torch_gemm(const GemmBuffers&, bool epilogue);  // mm_out, or addmm + relu_
Run torch_mlp(const MlpBuffers&);                   // under InferenceMode
Run torch_softmax(const RowsBuffers&);
Run torch_sum(const RowsBuffers&, int axis);
void torch_set_threads(int);
std::string torch_config();

/// STREAM kernels compiled with -march=native: a = b + s*c (triad) and a = b (copy) over
/// n floats, split over `threads` threads of the torchtpu pool.
Run stream_triad(float* a, const float* b, const float* c, int64_t n);
Run stream_copy(float* a, const float* b, int64_t n);
/// Peak FMA rate of one core (GFLOP/s), by a register-only AVX-512 loop.
double fma_peak_gflops();

}  // namespace bench
