// tests/fuse/test_cpu_isa.cpp — choosing the CPU engine's instruction set (fuse/simd.hpp):
// what the CPU has, TORCHTPU_CPU_ISA and its errors, and the same fused expression, row and
// column reductions and softmax rows giving float64's values on every vector target this
// machine runs (AVX-512, AVX2, NEON).
#include <catch2/catch.hpp>  // TEST_CASE, CHECK

#include <algorithm>    // std::max
#include <cmath>        // std::tanh, std::exp, std::log, std::isnan, std::nanf
#include <fstream>      // std::ifstream
#include <string>       // std::string
#include <type_traits>  // std::decay_t
#include <vector>       // std::vector

#include <torchtpu/torchtpu.hpp>  // Tensor, tanh, sigmoid

#include "../test_env.hpp"  // EnvGuard

using torchtpu::Tensor;
using namespace torchtpu::detail;

namespace {

/// The CPU flags line of /proc/cpuinfo ("" where there is none).
std::string cpu_flags() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("flags", 0) == 0 || line.rfind("Features", 0) == 0) return line + " ";
  return "";
}
[[maybe_unused]] bool has_flag(const std::string& flags, const char* f) {
  return flags.find(std::string(" ") + f + " ") != std::string::npos;
}

}  // namespace

TEST_CASE("cpu_supports agrees with /proc/cpuinfo", "[fuse][isa]") {
  const std::string flags = cpu_flags();
  CHECK(cpu_supports(CpuIsa::scalar));
#if defined(__x86_64__)
  if (!flags.empty()) {
    const bool avx2 = has_flag(flags, "avx2") && has_flag(flags, "fma") && has_flag(flags, "bmi2") && has_flag(flags, "f16c");
    CHECK(cpu_supports(CpuIsa::avx2) == (TORCHTPU_HAS_AVX2_PATH && avx2));
    const bool avx512 = avx2 && has_flag(flags, "avx512f") && has_flag(flags, "avx512vl") &&
                        has_flag(flags, "avx512dq") && has_flag(flags, "avx512bw");
    CHECK(cpu_supports(CpuIsa::avx512) == (TORCHTPU_HAS_AVX512_PATH && avx512));
  }
  CHECK_FALSE(cpu_supports(CpuIsa::neon));
#elif defined(__aarch64__)
  CHECK(cpu_supports(CpuIsa::neon) == bool(TORCHTPU_HAS_NEON_PATH));
  CHECK_FALSE(cpu_supports(CpuIsa::avx2));
  CHECK_FALSE(cpu_supports(CpuIsa::avx512));
#endif
}

TEST_CASE("TORCHTPU_CPU_ISA picks the instruction set or names what the CPU can run", "[fuse][isa]") {
  {
    ttest::EnvGuard g;
    g.set("TORCHTPU_CPU_ISA", "scalar");
    CHECK(choose_cpu_isa() == CpuIsa::scalar);
  }
  {
    ttest::EnvGuard g;
    g.set("TORCHTPU_CPU_ISA", "avx1024");
    CHECK_THROWS_AS(choose_cpu_isa(), torchtpu::ValueError);
    CHECK_THROWS_WITH(choose_cpu_isa(), Catch::Contains("TORCHTPU_CPU_ISA=avx1024") && Catch::Contains("scalar)"));
  }
  for (CpuIsa isa : {CpuIsa::avx2, CpuIsa::avx512, CpuIsa::neon}) {
    ttest::EnvGuard g;
    g.set("TORCHTPU_CPU_ISA", cpu_isa_name(isa));
    if (cpu_supports(isa)) {
      CHECK(choose_cpu_isa() == isa);
    } else {
      CHECK_THROWS_WITH(choose_cpu_isa(), Catch::Contains(std::string("TORCHTPU_CPU_ISA=") + cpu_isa_name(isa)) &&
                                              Catch::Contains("not an instruction set this CPU"));
    }
  }
  {
    ttest::EnvGuard g;
    g.set("TORCHTPU_CPU_ISA", nullptr);
    g.set("TORCHTPU_DISABLE_SIMD", "1");
    CHECK(choose_cpu_isa() == CpuIsa::scalar);
  }
  {
    // Unset: the best the CPU has.
    ttest::EnvGuard g;
    g.set("TORCHTPU_CPU_ISA", nullptr);
    g.set("TORCHTPU_DISABLE_SIMD", nullptr);
    const CpuIsa best = choose_cpu_isa();
    CHECK(cpu_supports(best));
    if (cpu_supports(CpuIsa::avx512)) CHECK(best == CpuIsa::avx512);
    else if (cpu_supports(CpuIsa::avx2)) CHECK(best == CpuIsa::avx2);
    else if (cpu_supports(CpuIsa::neon)) CHECK(best == CpuIsa::neon);
    else CHECK(best == CpuIsa::scalar);
  }
}

#if TORCHTPU_HAS_VECTOR_PATH
namespace {

/// Runs W1 = tanh(x·w + 0.25)·sigmoid(x) + 0.5·x over x's elements through the block kernel
/// of target `T` directly (whatever cpu_isa() says), into `out`.
template <int64_t T>
void w1_on(const Tensor<float>& x, const Tensor<float>& w, const Tensor<float>& out) {
  const auto e = torchtpu::tanh(x * w + 0.25f) * torchtpu::sigmoid(x) + 0.5f * x;
  using E = std::decay_t<decltype(e)>;
  static_assert(leaf_count<E>() == 4);
  BlockArgs a;
  a.expr = &e;
  a.in[0] = x.data_ptr();
  a.in[1] = w.data_ptr();
  a.in[2] = x.data_ptr();
  a.in[3] = x.data_ptr();
  a.out = out.data_ptr();
  a.stream = false;
  TargetCall<T>::template run<VectorBlock<float, E>, const BlockArgs&, int64_t>(a, x.numel());
}

}  // namespace

TEST_CASE("every vector target this CPU runs computes W1 to float64 accuracy, and they agree", "[fuse][isa]") {
  // 1003 elements: a partial vector at the end on every target (16, 8 and 4 lanes).
  const int64_t n = 1003;
  Tensor<float> x = Tensor<float>::empty({n}), w = Tensor<float>::empty({n});
  for (int64_t i = 0; i < n; ++i) {
    x.data_ptr()[i] = float(-12.0 + 24.0 * double(i) / double(n - 1));
    w.data_ptr()[i] = float(0.3 + 0.001 * double(i % 17));
  }
  auto ref = [&](int64_t i) {
    const double xv = x.data_ptr()[i], wv = w.data_ptr()[i];
    return std::tanh(xv * wv + 0.25) / (1.0 + std::exp(-xv)) + 0.5 * xv;
  };
  std::vector<Tensor<float>> results;
  [[maybe_unused]] auto check = [&](const Tensor<float>& out, const char* name) {
    INFO("target " << name);
    double worst = 0;
    for (int64_t i = 0; i < n; ++i)
      worst = std::max(worst, std::abs(double(out.data_ptr()[i]) - ref(i)) / (1.0 + std::abs(ref(i))));
    CHECK(worst < 1e-6);
    results.push_back(out);
  };
#if TORCHTPU_HAS_AVX512_PATH
  if (cpu_supports(CpuIsa::avx512)) {
    Tensor<float> out = torchtpu::zeros<float>({n});
    w1_on<HWY_AVX3>(x, w, out);
    check(out, "avx512");
  }
#endif
#if TORCHTPU_HAS_AVX2_PATH
  if (cpu_supports(CpuIsa::avx2)) {
    Tensor<float> out = torchtpu::zeros<float>({n});
    w1_on<HWY_AVX2>(x, w, out);
    check(out, "avx2");
  }
#endif
#if TORCHTPU_HAS_NEON_PATH
  {
    Tensor<float> out = torchtpu::zeros<float>({n});
    w1_on<HWY_NEON>(x, w, out);
    check(out, "neon");
  }
#endif
  // The vector targets use the same polynomials and operation order: equal within ~2 ulp.
  for (size_t r = 1; r < results.size(); ++r)
    for (int64_t i = 0; i < n; ++i)
      CHECK(std::abs(results[r].data_ptr()[i] - results[0].data_ptr()[i]) <=
            2.5e-7f * (1.0f + std::abs(results[0].data_ptr()[i])));
}
#endif

#if TORCHTPU_HAS_VECTOR_PATH
namespace {

/// Reductions and softmax through target `T`'s kernels directly (vec_reduce.hpp), whatever
/// cpu_isa() says: row sums of x·0.5 (5 x 3001: two blocks of 2048 and a partial vector on
/// every target), column sums (70 x 300: three blocks of 32 rows, partial column vectors),
/// row maxima of a row with a NaN (3 x 1000), softmax and log_softmax rows (4 x 1003).
struct ReduceResults {
  Tensor<float> row_sum, col_sum, row_max, col_max, softmax, log_softmax;
};

template <int64_t T>
ReduceResults reductions_on(const Tensor<float>& xr, const Tensor<float>& xc, const Tensor<float>& xm,
                            const Tensor<float>& xs) {
  ReduceResults r;
  {
    const auto e = xr * 0.5f;
    using E = std::decay_t<decltype(e)>;
    const LoopPlan p = make_plan(xr.sizes());
    const VecEval<E> ev(e, p, EvalContext{});
    const int64_t dst_st[2] = {1, 0};
    r.row_sum = torchtpu::zeros<float>({xr.sizes()[0]});
    TargetCall<T>::template run<VecReduceRowsBody<torchtpu::SumOp, float, E>, const VecEval<E>*, const LoopPlan*,
                                const int64_t*, float*, int64_t, int64_t, int64_t>(&ev, &p, dst_st, r.row_sum.data_ptr(),
                                                                                    xr.sizes()[1], 0, xr.sizes()[0]);
  }
  {
    using E = Tensor<float>;
    const LoopPlan q = make_plan(xc.sizes());
    VecEval<E> ev(xc, q, EvalContext{});
    r.col_sum = torchtpu::zeros<float>({xc.sizes()[1]});
    TargetCall<T>::template run<VecReduceColsBody<torchtpu::SumOp, float, E>, VecEval<E>*, int64_t, float*, int64_t,
                                int64_t, int64_t>(&ev, xc.sizes()[0], r.col_sum.data_ptr(), xc.sizes()[0], 0,
                                                  xc.sizes()[1]);
  }
  {
    using E = Tensor<float>;
    const LoopPlan p = make_plan(xm.sizes());
    const VecEval<E> ev(xm, p, EvalContext{});
    const int64_t dst_st[2] = {1, 0};
    r.row_max = torchtpu::zeros<float>({xm.sizes()[0]});
    TargetCall<T>::template run<VecReduceRowsBody<torchtpu::MaxOp, float, E>, const VecEval<E>*, const LoopPlan*,
                                const int64_t*, float*, int64_t, int64_t, int64_t>(&ev, &p, dst_st, r.row_max.data_ptr(),
                                                                                    xm.sizes()[1], 0, xm.sizes()[0]);
    // the same rows as columns: xm viewed as [1000, 3] would not be contiguous; reduce the
    // leading axis of xm itself instead (3 rows, one holding the NaN)
    const LoopPlan q = make_plan(xm.sizes());
    VecEval<E> evc(xm, q, EvalContext{});
    r.col_max = torchtpu::zeros<float>({xm.sizes()[1]});
    TargetCall<T>::template run<VecReduceColsBody<torchtpu::MaxOp, float, E>, VecEval<E>*, int64_t, float*, int64_t,
                                int64_t, int64_t>(&evc, xm.sizes()[0], r.col_max.data_ptr(), xm.sizes()[0], 0,
                                                  xm.sizes()[1]);
  }
  auto softmax_on = [&]<bool Log>(Tensor<float>& dst) {
    using E = Tensor<float>;
    dst = torchtpu::zeros<float>({xs.sizes()[0], xs.sizes()[1]});
    const LoopPlan p = make_plan(xs.sizes());
    VecEval<E> ev(xs, p, EvalContext{}), next(xs, p, EvalContext{});
    StridedReader<float> out(dst.data_ptr(), dst.sizes(), dst.strides(), p);
    TargetCall<T>::template run<VecSoftmaxRowsBody<Log, float, E>, VecEval<E>*, VecEval<E>*, StridedReader<float>*,
                                const LoopPlan*, int64_t, int64_t>(&ev, &next, &out, &p, 0, xs.sizes()[0]);
  };
  softmax_on.template operator()<false>(r.softmax);
  softmax_on.template operator()<true>(r.log_softmax);
  return r;
}

}  // namespace

TEST_CASE("every vector target this CPU runs reduces rows and columns and computes softmax to float64 accuracy",
          "[fuse][isa][reduce]") {
  auto fill = [](Tensor<float>& t, int64_t r, int64_t c, uint32_t seed) {
    t = Tensor<float>::empty({r, c});
    for (int64_t i = 0; i < r * c; ++i) {
      seed = seed * 1664525u + 1013904223u;
      t.data_ptr()[i] = float(double(seed >> 8) / 16777216.0 * 6.0 - 3.0);
    }
  };
  Tensor<float> xr, xc, xm, xs;
  fill(xr, 5, 3001, 1u);
  fill(xc, 70, 300, 2u);
  fill(xm, 3, 1000, 3u);
  fill(xs, 4, 1003, 4u);
  xm.data_ptr()[1 * 1000 + 517] = std::nanf("");
  xm.data_ptr()[2 * 1000 + 999] = 7.5f;  // the maximum of row 2 in the last (partial) vector
  const float* pr = xr.data_ptr();
  const float* pc = xc.data_ptr();
  const float* pm = xm.data_ptr();
  const float* ps = xs.data_ptr();

  std::vector<ReduceResults> all;
  [[maybe_unused]] auto check = [&](const ReduceResults& r, const char* name) {
    INFO("target " << name);
    for (int64_t i = 0; i < 5; ++i) {
      double want = 0, mag = 0;
      for (int64_t j = 0; j < 3001; ++j) want += 0.5 * double(pr[i * 3001 + j]), mag += std::abs(0.5 * pr[i * 3001 + j]);
      CHECK(std::abs(double(r.row_sum.data_ptr()[i]) - want) <= 1e-6 * mag);
    }
    for (int64_t j = 0; j < 300; ++j) {
      double want = 0, mag = 0;
      for (int64_t i = 0; i < 70; ++i) want += double(pc[i * 300 + j]), mag += std::abs(double(pc[i * 300 + j]));
      CHECK(std::abs(double(r.col_sum.data_ptr()[j]) - want) <= 1e-6 * mag);
    }
    for (int64_t i = 0; i < 3; ++i) {
      double want = -INFINITY;
      for (int64_t j = 0; j < 1000; ++j) want = std::max(want, double(pm[i * 1000 + j]));
      if (i == 1) CHECK(std::isnan(r.row_max.data_ptr()[i]));  // NaN propagates
      else CHECK(double(r.row_max.data_ptr()[i]) == want);
    }
    CHECK(r.row_max.data_ptr()[2] == 7.5f);
    for (int64_t j = 0; j < 1000; ++j) {
      const double want = std::max({double(pm[j]), double(pm[1000 + j]), double(pm[2000 + j])});
      if (j == 517) CHECK(std::isnan(r.col_max.data_ptr()[j]));
      else CHECK(double(r.col_max.data_ptr()[j]) == want);
    }
    double worst = 0, worst_log = 0;
    for (int64_t i = 0; i < 4; ++i) {
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < 1003; ++j) mx = std::max(mx, double(ps[i * 1003 + j]));
      for (int64_t j = 0; j < 1003; ++j) sum += std::exp(double(ps[i * 1003 + j]) - mx);
      for (int64_t j = 0; j < 1003; ++j) {
        const double t = double(ps[i * 1003 + j]) - mx;
        const double want = std::exp(t) / sum, want_log = t - std::log(sum);
        worst = std::max(worst, std::abs(double(r.softmax.data_ptr()[i * 1003 + j]) - want) / want);
        worst_log = std::max(worst_log, std::abs(double(r.log_softmax.data_ptr()[i * 1003 + j]) - want_log) /
                                            (1.0 + std::abs(want_log)));
      }
    }
    CHECK(worst < 4e-6);
    CHECK(worst_log < 2e-6);
    all.push_back(r);
  };
#if TORCHTPU_HAS_AVX512_PATH
  if (cpu_supports(CpuIsa::avx512)) check(reductions_on<HWY_AVX3>(xr, xc, xm, xs), "avx512");
#endif
#if TORCHTPU_HAS_AVX2_PATH
  if (cpu_supports(CpuIsa::avx2)) check(reductions_on<HWY_AVX2>(xr, xc, xm, xs), "avx2");
#endif
#if TORCHTPU_HAS_NEON_PATH
  check(reductions_on<HWY_NEON>(xr, xc, xm, xs), "neon");
#endif
  // Column reductions combine each column's rows in the same order on every target: equal bits.
  for (size_t t = 1; t < all.size(); ++t)
    for (int64_t j = 0; j < 300; ++j) CHECK(all[t].col_sum.data_ptr()[j] == all[0].col_sum.data_ptr()[j]);
}
#endif
