// tests/fuse/test_cpu_isa.cpp — choosing the CPU engine's instruction set (fuse/simd.hpp):
// what the CPU has, TORCHTPU_CPU_ISA and its errors, and the same fused expression giving
// the same values on every vector target this machine runs (AVX-512, AVX2, NEON).
#include <catch2/catch.hpp>  // TEST_CASE, CHECK

#include <cmath>        // std::tanh, std::exp
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
