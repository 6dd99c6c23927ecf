// tests/fuse/test_cpu_isa.cpp — choosing the CPU engine's instruction set (fuse/simd.hpp):
// what the CPU has, TORCHTPU_CPU_ISA and its errors, and the same fused expression, row and
// column reductions and softmax rows giving float64's values on every vector target this
// machine runs (AVX-512, AVX2, NEON).
#include <catch2/catch.hpp>  // TEST_CASE, CHECK

#include <algorithm>    // std::max, std::min
#include <bit>          // std::bit_cast
#include <cmath>        // std::tanh, std::exp, std::log, std::isnan, std::nanf
#include <limits>       // std::numeric_limits
#include <fstream>      // std::ifstream
#include <string>       // std::string
#include <type_traits>  // std::decay_t
#include <utility>      // std::pair
#include <vector>       // std::vector

#include <torchtpu/fuse/window.hpp>  // Window2dArgs, window2d_kernel_for, Im2colArgs, im2col_kernel_for
#include <torchtpu/fuse/winograd.hpp>  // WinogradArgs, winograd_*_kernel_for, winograd_weight_transform
#include <torchtpu/torchtpu.hpp>     // Tensor, tanh, sigmoid

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

namespace {

/// The vector instruction sets this CPU and build run.
std::vector<CpuIsa> vector_isas() {
  std::vector<CpuIsa> out;
  for (CpuIsa isa : {CpuIsa::avx512, CpuIsa::avx2, CpuIsa::neon})
    if (cpu_supports(isa) && sgemm_kernels_for(isa).block != nullptr) out.push_back(isa);
  return out;
}

/// Deterministic values in [-1, 1) (a 64-bit LCG's high bits).
std::vector<float> lcg_values(size_t n, uint64_t seed) {
  std::vector<float> v(n);
  for (auto& x : v) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    x = float(double(seed >> 40) / double(1ull << 23) - 1.0);
  }
  return v;
}

/// Worst |c - exact| / (sum_k |a b| + 1e-30) over C[m, n] (row-major, leading dim n), exact
/// in float64 from the same strided operands.
double worst_gemm_error(const float* c, int64_t m, int64_t n, int64_t k, const float* a, int64_t sam, int64_t sak,
                        const float* b, int64_t sbk, int64_t sbn) {
  double worst = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0, mag = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double t = double(a[i * sam + p * sak]) * double(b[p * sbk + j * sbn]);
        s += t;
        mag += std::abs(t);
      }
      worst = std::max(worst, std::abs(double(c[i * n + j]) - s) / (mag + 1e-30));
    }
  return worst;
}

}  // namespace

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

TEST_CASE("every vector target's f32 GEMM kernels match float64, on edge tiles and strided operands", "[fuse][isa][gemm]") {
  // Shapes with partial tiles on every target (m not a multiple of 12, 6 or 8; n not of 32,
  // 16 or 12), k over several 384-wide panels, and a tiny one.
  const int64_t shapes[][3] = {{37, 45, 801}, {13, 33, 7}, {5, 100, 390}, {70, 9, 64}};
  for (CpuIsa isa : vector_isas()) {
    const SgemmKernels kern = sgemm_kernels_for(isa);
    for (const auto& sh : shapes) {
      const int64_t m = sh[0], n = sh[1], k = sh[2];
      const std::vector<float> a = lcg_values(size_t(m * k), 11), b = lcg_values(size_t(k * n), 12);
      // layouts: A row-major or column-major, B row-major or column-major
      for (int layout = 0; layout < 4; ++layout) {
        INFO("isa " << cpu_isa_name(isa) << " (" << kern.name << "), m " << m << " n " << n << " k " << k << " layout " << layout);
        SgemmArgs g;
        g.m = m; g.n = n; g.k = k;
        g.a = a.data();
        g.sam = (layout & 1) ? 1 : k;
        g.sak = (layout & 1) ? m : 1;
        g.b = b.data();
        g.sbk = (layout & 2) ? 1 : n;
        g.sbn = (layout & 2) ? k : 1;
        std::vector<float> c(size_t(m * n), -7.0f);
        g.c = c.data(); g.ldc = n;
        sgemm_packed(g, kern.blocking, kern);
        CHECK(worst_gemm_error(c.data(), m, n, k, g.a, g.sam, g.sak, g.b, g.sbk, g.sbn) < 2e-6);
      }
    }
  }
}

TEST_CASE("every vector target's f32 GEMM is bitwise independent of the thread count; AVX-512's portable and hand-written kernels agree bitwise", "[fuse][isa][gemm]") {
  const int64_t m = 150, n = 70, k = 900;
  const std::vector<float> a = lcg_values(size_t(m * k), 21), b = lcg_values(size_t(k * n), 22);
  auto run = [&](const SgemmKernels& kern, int threads) {
    torchtpu::set_num_threads(threads);
    SgemmArgs g;
    g.m = m; g.n = n; g.k = k;
    g.a = a.data(); g.sam = k; g.sak = 1;
    g.b = b.data(); g.sbk = n; g.sbn = 1;
    std::vector<float> c(size_t(m * n));
    g.c = c.data(); g.ldc = n;
    sgemm_packed(g, kern.blocking, kern);
    return c;
  };
  const int before = torchtpu::get_num_threads();
  for (CpuIsa isa : vector_isas()) {
    INFO("isa " << cpu_isa_name(isa));
    const SgemmKernels kern = sgemm_kernels_for(isa);
    const std::vector<float> one = run(kern, 1);
    CHECK(worst_gemm_error(one.data(), m, n, k, a.data(), k, 1, b.data(), n, 1) < 2e-6);
    CHECK(run(kern, 3) == one);
    CHECK(run(kern, 4) == one);
    if (isa == CpuIsa::avx512) CHECK(run(sgemm_kernels_for(isa, true), 1) == one);
  }
  torchtpu::set_num_threads(before);
}

TEST_CASE("every vector target's small-batch kernels match float64 and are split-independent", "[fuse][isa][gemv]") {
  const int64_t ns[] = {5, 16, 45, 300}, ks[] = {3, 77, 1000};
  for (CpuIsa isa : vector_isas()) {
    const GemvColumnsFn columns = gemv_columns_kernel_for(isa);
    REQUIRE(columns != nullptr);
    for (int64_t m = 1; m <= gemv_max_m; ++m)
      for (int64_t n : ns)
        for (int64_t k : ks)
          for (int layout = 0; layout < 2; ++layout) {  // B row-major (x · W), column-major (x · Wᵀ)
            INFO("isa " << cpu_isa_name(isa) << " m " << m << " n " << n << " k " << k << " layout " << layout);
            const std::vector<float> a = lcg_values(size_t(m * k), 31 + uint64_t(n)), b = lcg_values(size_t(k * n), 32 + uint64_t(k));
            GemvArgs g;
            g.m = m; g.n = n; g.k = k;
            g.a = a.data(); g.sam = k; g.sak = 1;
            g.b = b.data();
            g.sbk = layout == 0 ? n : 1;
            g.sbn = layout == 0 ? 1 : k;
            REQUIRE(gemv_supported(g));
            // one guard column past n on each row: never written
            std::vector<float> c(size_t(m * (n + 1)), -7.0f), split(size_t(m * (n + 1)), -7.0f);
            g.c = c.data(); g.ldc = n + 1;
            columns(g, 0, n);
            std::vector<float> dense(size_t(m * n));
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j) dense[size_t(i * n + j)] = c[size_t(i * (n + 1) + j)];
            CHECK(worst_gemm_error(dense.data(), m, n, k, g.a, g.sam, g.sak, g.b, g.sbk, g.sbn) < 2e-6);
            for (int64_t i = 0; i < m; ++i) CHECK(c[size_t(i * (n + 1) + n)] == -7.0f);
            // the same product in column ranges split at multiples of 16 (as the pool does)
            g.c = split.data();
            for (int64_t j0 = 0; j0 < n; j0 += 32) columns(g, j0, std::min<int64_t>(n, j0 + 32));
            CHECK(split == c);
          }
  }
}

TEST_CASE("every vector target's pooling and depthwise kernels match the plain loops and float64", "[fuse][isa][window]") {
  // Geometries: strides 1 and 2 (every vector path) and 3 (plain loops for average pooling),
  // padding, dilation, windows
  // wider than a vector's worth of border, planes narrower than one vector, ceil_mode-like
  // output sizes (windows past the padded input), planes taller than one band of the depthwise
  // kernel, a window as large as the plane (one output).
  struct G { int64_t H, W, kh, kw, sh, sw, ph, pw, dh, dw; };
  const G geoms[] = {{9, 40, 3, 3, 1, 1, 1, 1, 1, 1}, {12, 37, 2, 2, 2, 2, 0, 0, 1, 1}, {11, 53, 3, 3, 2, 2, 1, 1, 1, 1},
                     {7, 29, 3, 5, 1, 1, 2, 2, 2, 2}, {5, 3, 2, 2, 1, 1, 1, 1, 1, 1}, {8, 70, 5, 5, 3, 3, 2, 2, 1, 1},
                     {6, 45, 3, 3, 2, 2, 1, 1, 1, 1}, {14, 14, 7, 7, 1, 1, 3, 3, 1, 1}, {13, 35, 5, 5, 2, 2, 2, 2, 1, 1},
                     // planes the depthwise kernel splits into bands of rows (stride 1, 2, dilated)
                     {41, 150, 3, 3, 1, 1, 1, 1, 1, 1}, {37, 131, 3, 3, 2, 2, 1, 1, 1, 1}, {29, 90, 3, 3, 2, 2, 2, 2, 2, 2},
                     {3, 3, 3, 3, 1, 1, 0, 0, 1, 1},
                     // squeezenet's ceil_mode pools (the last window clipped), one of them in bands
                     {27, 27, 3, 3, 2, 2, 0, 0, 1, 1}, {111, 111, 3, 3, 2, 2, 0, 0, 1, 1}};
  const int64_t planes = 3;
  for (const G& g : geoms) {
    std::vector<float> x = lcg_values(size_t(planes * g.H * g.W), uint64_t(g.W * 7 + g.H));
    x[size_t(g.W + 5) % x.size()] = std::numeric_limits<float>::quiet_NaN();  // one NaN in plane 0
    const std::vector<float> wt = lcg_values(size_t(planes * g.kh * g.kw), 5), bias = lcg_values(size_t(planes), 6);
    for (int kind = 0; kind < 4; ++kind) {  // max, avg (count_include_pad), avg (not), depthwise
      Window2dArgs a;
      a.kind = kind == 0 ? Window2dArgs::Kind::max : kind == 3 ? Window2dArgs::Kind::depthwise : Window2dArgs::Kind::avg;
      const bool avg = a.kind == Window2dArgs::Kind::avg;
      a.x = x.data();
      a.planes = planes;
      a.H = g.H; a.W = g.W;
      a.kh = g.kh; a.kw = g.kw; a.sh = g.sh; a.sw = g.sw; a.ph = g.ph; a.pw = g.pw;
      a.dh = avg ? 1 : g.dh; a.dw = avg ? 1 : g.dw;
      a.count_include_pad = kind == 1;
      a.weight = wt.data();
      a.bias = bias.data();
      a.planes_per_item = planes;
      // one more output column and row than floor mode where the window still starts inside
      // the padded input (as ceil_mode gives)
      a.OH = (g.H + 2 * g.ph - a.dh * (g.kh - 1) - 1 + g.sh - 1) / g.sh + 1;
      a.OW = (g.W + 2 * g.pw - a.dw * (g.kw - 1) - 1 + g.sw - 1) / g.sw + 1;
      if ((a.OH - 1) * g.sh >= g.H + g.ph) --a.OH;
      if ((a.OW - 1) * g.sw >= g.W + g.pw) --a.OW;
      const size_t outn = size_t(planes * a.OH * a.OW);
      std::vector<float> ref(outn);
      a.out = ref.data();
      window2d_scalar(a, 0, planes);
      // the plain loops against float64, computed here independently
      for (int64_t pl = 0; pl < planes; ++pl)
        for (int64_t oh = 0; oh < a.OH; ++oh)
          for (int64_t ow = 0; ow < a.OW; ++ow) {
            double s = 0, mx = -INFINITY;
            bool nan = false;
            int64_t cnt = 0;
            for (int64_t i = 0; i < g.kh; ++i)
              for (int64_t j = 0; j < g.kw; ++j) {
                const int64_t ih = oh * g.sh - g.ph + i * a.dh, iw = ow * g.sw - g.pw + j * a.dw;
                if (ih < 0 || ih >= g.H || iw < 0 || iw >= g.W) continue;
                const double v = x[size_t((pl * g.H + ih) * g.W + iw)];
                nan |= std::isnan(v);
                mx = std::max(mx, v);
                s += avg ? v : v * double(wt[size_t((pl * g.kh + i) * g.kw + j)]);
                ++cnt;
              }
            const int64_t h0 = oh * g.sh - g.ph, w0 = ow * g.sw - g.pw;
            const int64_t padded = (std::min(h0 + g.kh, g.H + g.ph) - h0) * (std::min(w0 + g.kw, g.W + g.pw) - w0);
            const double want = kind == 0 ? (nan ? NAN : mx) : kind == 3 ? (nan ? NAN : s + double(bias[size_t(pl)]))
                                : (nan ? NAN : s / double(kind == 1 ? padded : cnt));
            const float got = ref[size_t((pl * a.OH + oh) * a.OW + ow)];
            INFO("kind " << kind << " H " << g.H << " W " << g.W << " k " << g.kh << "x" << g.kw << " s " << g.sw << " at " << pl << "," << oh << "," << ow);
            if (std::isnan(want)) CHECK(std::isnan(got));
            else CHECK(std::abs(double(got) - want) <= 1e-6 * (1.0 + std::abs(want)));
          }
      for (CpuIsa isa : vector_isas()) {
        INFO("isa " << cpu_isa_name(isa) << " kind " << kind << " H " << g.H << " W " << g.W << " k " << g.kh << "x" << g.kw << " stride " << g.sw);
        std::vector<float> got(outn + 1, -7.0f);  // one guard element: never written
        a.out = got.data();
        window2d_kernel_for(isa, a)(a, 0, planes);
        CHECK(got[outn] == -7.0f);
        for (size_t i = 0; i < outn; ++i) {
          if (std::isnan(ref[i])) {
            CHECK(std::isnan(got[i]));
          } else if (kind == 3) {
            CHECK(std::abs(got[i] - ref[i]) <= 1e-6f * (1.0f + std::abs(ref[i])));
          } else {
            CHECK(got[i] == ref[i]);  // same order of operations: bitwise
          }
        }
      }
    }
  }
}
TEST_CASE("depthwise convolution with channels as lanes: bitwise the phase-block kernel, float64, plane strides", "[fuse][isa][window]") {
  // AVX-512's depthwise_lanes_avx512 (small planes, window2d_kernel_for) against the phase-block
  // kernel (depthwise_planes) and float64: 35 planes (two groups of 16 and 3 more) of 20
  // channels per image (channel = plane % 20: a group spans two images), a NaN, strides 1 and 2, 3x3 and 5x5, dilation 2, no padding; the same planes read and
  // written as bands of larger planes (x_plane, out_plane), with guard elements between.
  if (!cpu_has_avx512()) return;
#if TORCHTPU_HAS_AVX512_PATH
  struct G { int64_t H, W, k, s, p, d; };
  const G geoms[] = {{14, 14, 3, 1, 1, 1}, {14, 14, 3, 2, 1, 1}, {7, 7, 3, 1, 1, 1}, {7, 7, 5, 1, 2, 1}, {9, 11, 3, 1, 1, 1},
                     {13, 6, 5, 2, 2, 1}, {10, 10, 3, 1, 0, 1}, {12, 12, 3, 1, 2, 2}, {1, 1, 3, 1, 1, 1}, {5, 23, 3, 2, 1, 1},
                     {18, 17, 3, 1, 1, 1}};
  const int64_t planes = 35, ppi = 20;
  for (const G& g : geoms) {
    Window2dArgs a;
    a.kind = Window2dArgs::Kind::depthwise;
    a.planes = planes;
    a.H = g.H; a.W = g.W; a.kh = a.kw = g.k; a.sh = a.sw = g.s; a.ph = a.pw = g.p; a.dh = a.dw = g.d;
    a.OH = (g.H + 2 * g.p - g.d * (g.k - 1) - 1) / g.s + 1;
    a.OW = (g.W + 2 * g.p - g.d * (g.k - 1) - 1) / g.s + 1;
    a.planes_per_item = ppi;
    const std::vector<float> wt = lcg_values(size_t(ppi * g.k * g.k), 5), bias = lcg_values(size_t(ppi), 6);
    a.weight = wt.data();
    a.bias = bias.data();
    for (int strided = 0; strided < 2; ++strided) {
      INFO("H " << g.H << " W " << g.W << " k " << g.k << " s " << g.s << " p " << g.p << " d " << g.d << " strided " << strided);
      const int64_t xs = g.H * g.W + (strided ? 7 : 0), os = a.OH * a.OW + (strided ? 5 : 0);
      a.x_plane = strided ? xs : 0;
      a.out_plane = strided ? os : 0;
      std::vector<float> x = lcg_values(size_t(planes * xs), uint64_t(g.W * 3 + g.H));
      x[size_t(17 * xs + g.W + 1)] = std::numeric_limits<float>::quiet_NaN();  // plane 17 (the second group)
      a.x = x.data();
      std::vector<float> lanes(size_t(planes * os + 1), -7.0f), phase(size_t(planes * os + 1), -7.0f);
      a.out = lanes.data();
      depthwise_lanes_avx512(a, 0, planes);
      a.out = phase.data();
      TargetCall<HWY_AVX3>::template run<Window2dBody, const Window2dArgs&, int64_t, int64_t>(a, 0, planes);
      for (int64_t pl = 0; pl < planes; ++pl) {
        for (int64_t q = 0; q < os; ++q) {
          const size_t i = size_t(pl * os + q);
          if (q >= a.OH * a.OW) {  // between the planes: not written
            CHECK(lanes[i] == -7.0f);
            continue;
          }
          CHECK(std::bit_cast<uint32_t>(lanes[i]) == std::bit_cast<uint32_t>(phase[i]));
          const int64_t oh = q / a.OW, ow = q % a.OW, ch = pl % ppi;
          double want = bias[size_t(ch)];
          bool nan = false;
          for (int64_t i2 = 0; i2 < g.k; ++i2)
            for (int64_t j = 0; j < g.k; ++j) {
              const int64_t ih = oh * g.s - g.p + i2 * g.d, iw = ow * g.s - g.p + j * g.d;
              if (ih < 0 || ih >= g.H || iw < 0 || iw >= g.W) continue;
              const double v = x[size_t(pl * xs + ih * g.W + iw)];
              nan |= std::isnan(v);
              want += v * double(wt[size_t((ch * g.k + i2) * g.k + j)]);
            }
          if (nan) CHECK(std::isnan(lanes[i]));
          else CHECK(std::abs(double(lanes[i]) - want) <= 1e-5 * (1.0 + std::abs(want)));
        }
      }
      CHECK(lanes.back() == -7.0f);
      // window2d_kernel_for takes it for these small planes
      CHECK((depthwise_lanes_pays(a) == (a.OH * a.OW <= depthwise_lanes_max_positions)));
    }
  }
#endif
}

TEST_CASE("every vector target's im2col panels are the unfolded input, exactly", "[fuse][isa][conv]") {
  // B[k, l] = x[c, oh·sh - ph + i·dh, ow·sw - pw + j·dw] (k = (c, i, j), l = (oh, ow)), zero
  // outside the input, written here from the definition; every panel width and strip height a
  // target uses (and 64), k panels starting mid-channel, last panels past L. Strides 1, 2 (vector paths) and 3.
  struct G { int64_t C, H, W, KH, KW, sh, sw, ph, pw, dh, dw; };
  const G geoms[] = {{3, 9, 40, 3, 3, 1, 1, 1, 1, 1, 1}, {2, 11, 53, 3, 3, 2, 2, 1, 1, 1, 1}, {2, 7, 29, 3, 5, 1, 2, 2, 4, 2, 2},
                     {4, 5, 6, 2, 2, 3, 3, 0, 2, 1, 1}, {1, 30, 70, 7, 7, 2, 2, 3, 3, 1, 1}};
  for (const G& g : geoms) {
    const std::vector<float> x = lcg_values(size_t(g.C * g.H * g.W), uint64_t(g.W + g.H));
    Im2colArgs a{x.data(), g.H, g.W, g.KH, g.KW, g.sh, g.sw, g.ph, g.pw, g.dh, g.dw, 0, 0};
    const int64_t OH = (g.H + 2 * g.ph - g.dh * (g.KH - 1) - 1) / g.sh + 1;
    a.OW = (g.W + 2 * g.pw - g.dw * (g.KW - 1) - 1) / g.sw + 1;
    a.L = OH * a.OW;
    const int64_t K = g.C * g.KH * g.KW;
    auto want = [&](int64_t k, int64_t l) -> float {
      const int64_t c = k / (g.KH * g.KW), i = k / g.KW % g.KH, j = k % g.KW, oh = l / a.OW, ow = l % a.OW;
      const int64_t ih = oh * g.sh - g.ph + i * g.dh, iw = ow * g.sw - g.pw + j * g.dw;
      if (l >= a.L || ih < 0 || ih >= g.H || iw < 0 || iw >= g.W) return 0.0f;
      return x[size_t((c * g.H + ih) * g.W + iw)];
    };
    std::vector<std::pair<CpuIsa, Im2colFn>> fns = {{CpuIsa::scalar, &im2col_pack_scalar}};
    for (CpuIsa isa : vector_isas()) fns.push_back({isa, im2col_kernel_for(isa)});
    for (const auto& [isa, fn] : fns)
      for (int64_t nr : {6, 8, 12, 16, 32, 64})  // 6, 12: A strips (SgemmArgs::pack_a_from)
        for (int64_t p0 : {int64_t(0), K / 3}) {
          const int64_t kb = std::min<int64_t>(K - p0, 11);
          for (int64_t j0 = 0; j0 < a.L; j0 += nr) {
            INFO("isa " << cpu_isa_name(isa) << " W " << g.W << " stride " << g.sw << " nr " << nr << " p0 " << p0 << " j0 " << j0);
            std::vector<float> got(size_t(kb * nr + 1), -7.0f);  // one guard element: never written
            fn(a, p0, kb, j0, nr, got.data());
            CHECK(got.back() == -7.0f);
            int64_t bad = 0;
            for (int64_t kk = 0; kk < kb; ++kk)
              for (int64_t c = 0; c < nr; ++c) bad += got[size_t(kk * nr + c)] != want(p0 + kk, j0 + c);
            CHECK(bad == 0);
          }
        }
  }
}

TEST_CASE("every target's Winograd F(2x2, 3x3) and F(4x4, 3x3) transforms match float64, clipped tiles and padding included",
          "[fuse][isa][conv][winograd]") {
  // The matrices of Lavin & Gray 2016 (F(2, 3); F(4, 3) with points 0, ±1, ±2, ∞), applied
  // here by plain float64 products: V[ξ][c][t] = Bᵀ d B on the zero-padded input, y = Aᵀ M A +
  // bias from Mᵀ[ξ][t][o], Uᵀ[ξ][c][o] = G g Gᵀ.
  const double BT4[6][6] = {{4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0},
                            {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
  const double AT4[4][6] = {{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};
  const double G4[6][3] = {{0.25, 0, 0}, {-1.0 / 6, -1.0 / 6, -1.0 / 6}, {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                           {1.0 / 24, 1.0 / 12, 1.0 / 6}, {1.0 / 24, -1.0 / 12, 1.0 / 6}, {0, 0, 1}};
  const double BT2[6][6] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
  const double AT2[4][6] = {{1, 1, 1, 0}, {0, 1, -1, -1}};
  const double G2[6][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  for (const int m : {2, 4}) {
  const int A = m + 2;
  const auto& BT = m == 2 ? BT2 : BT4;
  const auto& AT = m == 2 ? AT2 : AT4;
  const auto& G = m == 2 ? G2 : G4;
  // H, W, padding before (ph, pw) and after: planes narrower and wider than one vector of tiles
  // (AVX-512: 16 tiles, 64 columns), outputs not a multiple of 4, padding past a whole tile
  struct Geo { int64_t H, W, ph, pw, phi, pwi; };
  const Geo geos[] = {{9, 13, 1, 2, 0, 1}, {56, 56, 1, 1, 1, 1}, {6, 70, 0, 1, 2, 1}, {3, 3, 1, 1, 1, 1}, {11, 130, 5, 0, 0, 6}};
  std::vector<CpuIsa> isas = {CpuIsa::scalar};
  for (CpuIsa isa : vector_isas()) isas.push_back(isa);
  for (const Geo& g : geos) {
    WinogradArgs a;
    a.C = 3; a.H = g.H; a.W = g.W; a.ph = g.ph; a.pw = g.pw; a.OH = g.H + g.ph + g.phi - 2; a.OW = g.W + g.pw + g.pwi - 2;
    a.images = 2; a.tile = m; a.th = (a.OH + m - 1) / m; a.tw = (a.OW + m - 1) / m; a.T = a.images * a.th * a.tw;
    a.x_image = a.C * g.H * g.W + 5;  // a gap between images: never read
    const std::vector<float> x = lcg_values(size_t(2 * a.x_image), uint64_t(g.W));
    a.x = x.data();
    auto padded = [&](int64_t n, int64_t c, int64_t r, int64_t col) -> double {
      const int64_t ih = r - g.ph, iw = col - g.pw;
      return ih < 0 || ih >= g.H || iw < 0 || iw >= g.W ? 0.0 : x[size_t(n * a.x_image + (c * g.H + ih) * g.W + iw)];
    };
    // the input transform, exactly as defined
    std::vector<double> vwant(size_t(A * A * a.C * a.T)), vscale(vwant.size());
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t c = 0; c < a.C; ++c)
        for (int64_t r = 0; r < a.th; ++r)
          for (int64_t l = 0; l < a.tw; ++l)
            for (int i = 0; i < A; ++i)
              for (int j = 0; j < A; ++j) {
                double v = 0, sc = 0;
                for (int p = 0; p < A; ++p)
                  for (int q = 0; q < A; ++q) {
                    const double t = BT[i][p] * padded(n, c, m * r + p, m * l + q) * BT[j][q];
                    v += t;
                    sc += std::abs(t);
                  }
                const size_t at = size_t(((i * A + j) * a.C + c) * a.T + (n * a.th + r) * a.tw + l);
                vwant[at] = v;
                vscale[at] = sc;
              }
    // the output transform's operands: Mᵀ[ξ][t][o] and bias over 21 output channels (whole
    // vectors and a part), planes with a gap
    a.OC = 21;
    const std::vector<float> mt = lcg_values(size_t(A * A * a.OC * a.T), 7), bias = lcg_values(size_t(a.OC), 8);
    a.m = mt.data();
    a.bias = bias.data();
    a.y_image = a.OC * a.OH * a.OW + 3;
    for (CpuIsa isa : isas) {
      INFO("F(" << m << ") isa " << cpu_isa_name(isa) << " H " << g.H << " W " << g.W);
      std::vector<float> v(vwant.size() + 1, -7.0f);  // one guard element
      a.v = v.data();
      winograd_input_kernel_for(isa, m)(a, 0, a.C);
      CHECK(v.back() == -7.0f);
      double worst = 0;
      for (size_t i = 0; i < vwant.size(); ++i) worst = std::max(worst, std::abs(v[i] - vwant[i]) / (vscale[i] + 1e-30));
      CHECK(worst < 1e-6);
      std::vector<float> y(size_t(2 * a.y_image), -7.0f);
      a.y = y.data();
      winograd_output_kernel_for(isa, m)(a, 0, a.OC);
      double worst_y = 0;
      int64_t bad = 0;
      for (int64_t n = 0; n < 2; ++n)
        for (int64_t o = 0; o < a.OC; ++o)
          for (int64_t oh = 0; oh < a.OH; ++oh)
            for (int64_t ow = 0; ow < a.OW; ++ow) {
              const int64_t r = oh / m, l = ow / m, i = oh % m, j = ow % m;
              double want = bias[size_t(o)], sc = std::abs(want);
              for (int p = 0; p < A; ++p)
                for (int q = 0; q < A; ++q) {
                  const double t = AT[i][p] * mt[size_t(((p * A + q) * a.T + (n * a.th + r) * a.tw + l) * a.OC + o)] * AT[j][q];
                  want += t;
                  sc += std::abs(t);
                }
              worst_y = std::max(worst_y, std::abs(y[size_t(n * a.y_image + (o * a.OH + oh) * a.OW + ow)] - want) / sc);
            }
      for (int64_t n = 0; n < 2; ++n)
        for (int64_t k = a.OC * a.OH * a.OW; k < a.y_image; ++k) bad += y[size_t(n * a.y_image + k)] != -7.0f;
      CHECK(worst_y < 1e-6);
      CHECK(bad == 0);  // nothing written past an image's planes (the gap)
    }
  }
  // the weight transform, in float64 then rounded once: within half an ulp of G g Gᵀ
  const int64_t OC = 3, C = 4;
  const std::vector<float> w = lcg_values(size_t(OC * C * 9), 9);
  std::vector<float> u(size_t(A * A * OC * C));
  winograd_weight_transform(w.data(), OC, C, u.data(), m);
  int64_t bad = 0;
  for (int64_t o = 0; o < OC; ++o)
    for (int64_t c = 0; c < C; ++c)
      for (int i = 0; i < A; ++i)
        for (int j = 0; j < A; ++j) {
          double want = 0;
          for (int p = 0; p < 3; ++p)
            for (int q = 0; q < 3; ++q) want += G[i][p] * w[size_t((o * C + c) * 9 + p * 3 + q)] * G[j][q];
          bad += std::abs(u[size_t(((i * A + j) * C + c) * OC + o)] - want) > std::abs(want) * 6e-8 + 1e-12;
        }
  CHECK(bad == 0);
  }
}

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

#if TORCHTPU_HAS_VECTOR_PATH
namespace {

/// Through target T's vector layer: every binary16 pattern loaded as float (`widened`), and
/// `floats` rounded to binary16 by vstore_f16 (`narrowed`) and by round_f16 (`rounded`).
struct F16Body {
  template <class V>
  TORCHTPU_VEC void operator()(const uint16_t* all, float* widened, const float* floats, uint16_t* narrowed,
                               float* rounded, int64_t nf) const {
    for (int64_t i = 0; i < 65536; i += V::lanes) vstore(widened + i, V::load_f16(all + i, V::lanes), V::lanes);
    for (int64_t i = 0; i < nf; i += V::lanes) {
      const int64_t n = std::min<int64_t>(V::lanes, nf - i);
      const V x = V::load_n(floats + i, n);
      vstore_f16(narrowed + i, x, n);
      vstore(rounded + i, round_f16(x), n);
    }
  }
};

}  // namespace

TEST_CASE("every vector target converts binary16 exactly as the scalar half type does", "[fuse][isa][half]") {
  std::vector<uint16_t> all(65536);
  for (size_t i = 0; i < all.size(); ++i) all[i] = uint16_t(i);
  // floats: every half value, the midpoints between neighbours (ties to even), values just
  // above and below them, overflow (65504, 65519.99, 65520, 1e30, inf), subnormal and below,
  // NaNs with payloads; an odd count, so the last vector is partial on every target.
  std::vector<float> floats;
  for (uint32_t h = 0; h < 0x7c00u; h += 7) {
    const float a = torchtpu::half::to_float(uint16_t(h)), b = torchtpu::half::to_float(uint16_t(h + 1));
    for (float v : {a, (a + b) / 2, std::nextafter((a + b) / 2, 0.0f), std::nextafter((a + b) / 2, 1e9f)}) {
      floats.push_back(v);
      floats.push_back(-v);
    }
  }
  for (float v : {65504.0f, 65519.99f, 65520.0f, 1e30f, INFINITY, -INFINITY, 1e-8f, 3e-8f, 1e-40f, 0.0f, -0.0f,
                  std::bit_cast<float>(0x7fc00001u), std::bit_cast<float>(0xffa12345u), std::bit_cast<float>(0x7f812345u)})
    floats.push_back(v);
  if (floats.size() % 2 == 0) floats.push_back(1.0f);
  const int64_t nf = int64_t(floats.size());
  auto check = [&](auto run, const char* name) {
    INFO("target " << name);
    std::vector<float> widened(65536), rounded(floats.size());
    std::vector<uint16_t> narrowed(floats.size() + 1, 0xabcd);  // one guard element
    run(all.data(), widened.data(), floats.data(), narrowed.data(), rounded.data(), nf);
    int64_t bad_widen = 0, bad_narrow = 0, bad_round = 0;
    for (uint32_t h = 0; h < 65536; ++h) {
      const float want = torchtpu::half::to_float(uint16_t(h));
      if (std::bit_cast<uint32_t>(widened[h]) != std::bit_cast<uint32_t>(want) && !(std::isnan(want) && std::isnan(widened[h])))
        ++bad_widen;
    }
    for (int64_t i = 0; i < nf; ++i) {
      const uint16_t want = torchtpu::half::round_from_float(floats[size_t(i)]);
      if (narrowed[size_t(i)] != want) ++bad_narrow;
      if (std::bit_cast<uint32_t>(rounded[size_t(i)]) != std::bit_cast<uint32_t>(torchtpu::half::to_float(want)) &&
          !(std::isnan(rounded[size_t(i)]) && std::isnan(floats[size_t(i)])))
        ++bad_round;
    }
    CHECK(bad_widen == 0);
    CHECK(bad_narrow == 0);
    CHECK(bad_round == 0);
    CHECK(narrowed[floats.size()] == 0xabcd);
  };
#if TORCHTPU_HAS_AVX512_PATH
  if (cpu_supports(CpuIsa::avx512))
    check(&TargetCall<HWY_AVX3>::template run<F16Body, const uint16_t*, float*, const float*, uint16_t*, float*, int64_t>, "avx512");
#endif
#if TORCHTPU_HAS_AVX2_PATH
  if (cpu_supports(CpuIsa::avx2))
    check(&TargetCall<HWY_AVX2>::template run<F16Body, const uint16_t*, float*, const float*, uint16_t*, float*, int64_t>, "avx2");
#endif
#if TORCHTPU_HAS_NEON_PATH
  check(&TargetCall<HWY_NEON>::template run<F16Body, const uint16_t*, float*, const float*, uint16_t*, float*, int64_t>, "neon");
#endif
}
#endif
