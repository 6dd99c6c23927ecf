// bench/peer_openblas.cpp — OpenBLAS 0.3.21 sgemm (run with OPENBLAS_CORETYPE=Cooperlake, set
// by the driver for this peer: 0.3.21 does not know this CPU and would pick SSE3 kernels),
// plus a separate bias + relu pass for the epilogue workload, and STREAM / FMA-peak loops.
#include <cblas.h>    // cblas_sgemm, openblas_set_num_threads, openblas_get_config
#include <immintrin.h>  // FMA peak loop (AVX-512, or AVX2 in the AVX2 peer build)

#include <string>     // std::string

#include <torchtpu/fuse/threads.hpp>  // parallel_chunks (STREAM with N threads)

#include "peers.hpp"  // Run, buffers

namespace bench {

void openblas_set_threads(int n) { openblas_set_num_threads(n); }
std::string openblas_config() { return std::string(openblas_get_config()) + ", core " + openblas_get_corename(); }

Run openblas_gemm(const GemmBuffers& g, bool epilogue) {
  return [g, epilogue] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(g.m), int(g.n), int(g.k), 1.0f, g.a, int(g.k), g.b,
                int(g.n), 0.0f, g.c, int(g.n));
    if (epilogue) {
      for (int64_t i = 0; i < g.m; ++i) {
        float* row = g.c + i * g.n;
        for (int64_t j = 0; j < g.n; ++j) {
          const float v = row[j] + g.bias[j];
          row[j] = v > 0.0f ? v : 0.0f;
        }
      }
    }
  };
}

Run stream_triad(float* a, const float* b, const float* c, int64_t n) {
  return [=] {
    torchtpu::detail::parallel_chunks(n, torchtpu::get_num_threads(), 16, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) a[i] = b[i] + 3.0f * c[i];
    });
  };
}
Run stream_copy(float* a, const float* b, int64_t n) {
  return [=] {
    torchtpu::detail::parallel_chunks(n, torchtpu::get_num_threads(), 16, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) a[i] = b[i];
    });
  };
}

#ifdef __AVX512F__
using PeakVec = __m512;  // the peak of the ISA this translation unit is built for
constexpr int peak_lanes = 16, peak_chains = 16;  // 32 zmm registers
inline PeakVec peak_set1(float x) { return _mm512_set1_ps(x); }
inline PeakVec peak_fma(PeakVec a, PeakVec b, PeakVec c) { return _mm512_fmadd_ps(a, b, c); }
inline float peak_sum(PeakVec a) { return _mm512_reduce_add_ps(a); }
#else  // the AVX2 peer build (-mavx2 -mfma): 8 lanes
using PeakVec = __m256;
constexpr int peak_lanes = 8, peak_chains = 12;  // 16 ymm registers: 12 chains + 2 constants
inline PeakVec peak_set1(float x) { return _mm256_set1_ps(x); }
inline PeakVec peak_fma(PeakVec a, PeakVec b, PeakVec c) { return _mm256_fmadd_ps(a, b, c); }
inline float peak_sum(PeakVec a) {
  alignas(32) float v[8];
  _mm256_store_ps(v, a);
  return v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
}
#endif

double fma_peak_gflops() {
  PeakVec acc[peak_chains];  // independent chains (2 FMA ports x 4-cycle latency needs >= 8)
  for (int i = 0; i < peak_chains; ++i) acc[i] = peak_set1(float(i));
  const PeakVec m = peak_set1(0.999999f), ad = peak_set1(1e-7f);
  const int64_t iters = 20000000;
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    struct timespec s, e;
    clock_gettime(CLOCK_MONOTONIC, &s);
    for (int64_t it = 0; it < iters; ++it)
      for (int i = 0; i < peak_chains; ++i) acc[i] = peak_fma(acc[i], m, ad);
    clock_gettime(CLOCK_MONOTONIC, &e);
    const double sec = double(e.tv_sec - s.tv_sec) + 1e-9 * double(e.tv_nsec - s.tv_nsec);
    best = std::max(best, double(iters) * peak_chains * 2 * peak_lanes / sec * 1e-9);
  }
  float sink = 0;
  for (int i = 0; i < peak_chains; ++i) sink += peak_sum(acc[i]);
  if (sink == 12345.0f) best += 1e-9;  // keep the loop alive
  return best;
}

}  // namespace bench
