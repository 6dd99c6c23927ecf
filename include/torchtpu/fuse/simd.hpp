// torchtpu/fuse/simd.hpp — the portable vector layer of the CPU engine, on Google Highway
// (hwy/highway.h, header-only use: nothing to link). One source, compiled in one translation
// unit for each vector target (AVX-512 and AVX2+FMA on x86-64, NEON on aarch64) with per-
// function target attributes, and chosen at run time from the CPU: users need no -march flag.
//
// How code is written over it (docs/cpu-engine.md, "Vector targets"):
// - `FloatVec<Target>` is the native float vector of one Highway target (16 lanes on AVX-512,
//   8 on AVX2, 4 on NEON), `FloatMask<Target>` its lane mask. Their operations (`+`, `vfma`,
//   `select`, loads and stores of f32 and bf16, `hsum`, ...) are defined once per target in
//   simd_target-inl.hpp, which Highway's foreach_target.h includes once per target.
// - Everything above them (vector math in vecmath.hpp, op structs' `simd` members, the fused
//   loop bodies) is an ordinary template over the vector type `V`, written once.
// - A loop kernel is entered through `TargetCall<Target>::run`, which is compiled for that
//   target and `flatten`: the whole body, its vector functions and Highway's are inlined into
//   it, so every instruction is of that target and no vector crosses a call.
// - `cpu_isa()` picks the target once: the best the CPU has, or `TORCHTPU_CPU_ISA`.
#pragma once
#include <cstdint>  // int64_t, uint16_t, uint32_t
#include <cstdlib>  // std::getenv
#include <cstring>  // std::strcmp, std::memcpy
#include <string>   // std::string

#include "../core/errors.hpp"  // ValueError
#include "simd_lane.hpp"       // FloatLane: the vector operations on one float

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__aarch64__)) && defined(__has_include)
#if __has_include(<hwy/highway.h>)
#define TORCHTPU_HAS_VECTOR_PATH 1
#endif
#endif
#ifndef TORCHTPU_HAS_VECTOR_PATH
#define TORCHTPU_HAS_VECTOR_PATH 0
#endif

namespace torchtpu::detail {

/// The vector instruction sets the CPU engine has code for.
enum class CpuIsa { scalar, avx2, avx512, neon };

/// The name `TORCHTPU_CPU_ISA` and `cpu_isa_name` use: "scalar", "avx2", "avx512", "neon".
inline const char* cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::avx2: return "avx2";
    case CpuIsa::avx512: return "avx512";
    case CpuIsa::neon: return "neon";
    default: return "scalar";
  }
}

/// True when this CPU (and build) can run `isa`'s vector code.
inline bool cpu_supports(CpuIsa isa) {
  if (isa == CpuIsa::scalar) return true;
#if TORCHTPU_HAS_VECTOR_PATH && defined(__x86_64__)
  __builtin_cpu_init();
  // What Highway's AVX2 target is compiled for (HWY_TARGET_STR_AVX2): SSE4, AVX2, BMI, BMI2,
  // FMA, F16C, PCLMUL, AES; AVX-512 adds F, VL, DQ and BW. (F16C is not tested: Clang 14's
  // __builtin_cpu_supports has no name for it, and every CPU with AVX2 and FMA has it.)
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                    __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") &&
                    __builtin_cpu_supports("pclmul") &&
                    __builtin_cpu_supports("aes") && __builtin_cpu_supports("sse4.2");
  if (isa == CpuIsa::avx2) return avx2;
  if (isa == CpuIsa::avx512)
    return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw");
  return false;
#elif TORCHTPU_HAS_VECTOR_PATH && defined(__aarch64__)
  return isa == CpuIsa::neon;  // NEON (Advanced SIMD) is part of every ARMv8-A core
#else
  return false;
#endif
}

/// The best instruction set of this CPU that the engine has code for, or the one named by
/// `TORCHTPU_CPU_ISA` (scalar, avx2, avx512, neon); `TORCHTPU_DISABLE_SIMD=1` is the older
/// spelling of `TORCHTPU_CPU_ISA=scalar`.
///
/// **Errors:** `ValueError` if `TORCHTPU_CPU_ISA` names an unknown set or one this CPU or
/// build cannot run (it lists those it can).
inline CpuIsa choose_cpu_isa() {
  const CpuIsa order[] = {CpuIsa::avx512, CpuIsa::avx2, CpuIsa::neon};
  if (const char* env = std::getenv("TORCHTPU_CPU_ISA"); env && env[0]) {
    for (CpuIsa isa : {CpuIsa::scalar, CpuIsa::avx2, CpuIsa::avx512, CpuIsa::neon}) {
      if (std::strcmp(env, cpu_isa_name(isa)) != 0) continue;
      if (cpu_supports(isa)) return isa;
      break;
    }
    std::string have;
    for (CpuIsa isa : order)
      if (cpu_supports(isa)) have += std::string(cpu_isa_name(isa)) + ", ";
    throw ValueError("TORCHTPU_CPU_ISA=" + std::string(env) + ": not an instruction set this CPU and build can run (they are: " +
                     have + "scalar)");
  }
  if (const char* off = std::getenv("TORCHTPU_DISABLE_SIMD"); off && off[0] == '1') return CpuIsa::scalar;
  for (CpuIsa isa : order)
    if (cpu_supports(isa)) return isa;
  return CpuIsa::scalar;
}

/// The instruction set the CPU engine runs, chosen once per process (`choose_cpu_isa`).
inline CpuIsa cpu_isa() {
  static const CpuIsa isa = choose_cpu_isa();
  return isa;
}

/// True when the engine runs its AVX-512 code (`cpu_isa() == CpuIsa::avx512`).
inline bool cpu_has_avx512() { return cpu_isa() == CpuIsa::avx512; }

/// True when the CPU has AVX512-BF16 (`vdpbf16ps`) and the engine runs its AVX-512 code.
inline bool cpu_has_avx512_bf16() {
#if TORCHTPU_HAS_VECTOR_PATH && defined(__x86_64__)
  static const bool ok = [] {
    if (!cpu_has_avx512()) return false;
    // CPUID leaf 7 subleaf 1, EAX bit 5: AVX512_BF16 (Intel SDM vol. 2A, CPUID).
    unsigned a = 7, b = 0, c = 1, d = 0;
    __asm__("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
    return ((a >> 5) & 1u) != 0;
  }();
  return ok;
#else
  return false;
#endif
}

/// The float vector of one Highway target (`HWY_AVX3`, `HWY_AVX2`, `HWY_NEON`), defined in
/// simd_target-inl.hpp: `v` (the raw register), `lanes`, and static `set1`, `zero`, `load`,
/// `load_n`, `load_bf16`, `iota`.
template <int64_t Target> struct FloatVec;
/// The lane mask of `FloatVec<Target>`.
template <int64_t Target> struct FloatMask;
/// `run(body, args...)`: calls `body.template operator()<FloatVec<Target>>(args...)` from a
/// function compiled for `Target` with everything inlined into it (simd_target-inl.hpp).
template <int64_t Target> struct TargetCall;

}  // namespace torchtpu::detail

#if TORCHTPU_HAS_VECTOR_PATH
// The targets compiled: AVX-512 (Highway's AVX3) and AVX2 on x86-64, NEON on aarch64.
// Highway compiles every target it can that is at least as good as what the compiler flags
// already give; torchtpu disables the x86 ones it has no code for (SSSE3, SSE4, AVX3_DL: each
// would cost parsing time in every translation unit). So a build with plain flags gets the
// AVX-512 and AVX2 paths, one with -mavx2 too, and one with -march=native on an AVX-512 CPU
// only the AVX-512 path. SVE is left out: its sizeless vectors cannot be members of
// `FloatVec` (docs/cpu-engine.md). A program that defines HWY_DISABLED_TARGETS itself
// before including torchtpu gets the paths its setting leaves.
#include <hwy/detect_compiler_arch.h>  // HWY_ARCH_X86, HWY_ARCH_ARM_A64
#if HWY_ARCH_X86 && !defined(HWY_DISABLED_TARGETS)
#define HWY_DISABLED_TARGETS (HWY_SSSE3 | HWY_SSE4 | HWY_AVX3_DL)
#endif
#include <hwy/cache_control.h>  // hwy::Prefetch, hwy::FlushStream
#pragma push_macro("HWY_TARGET_INCLUDE")
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "torchtpu/fuse/simd_target-inl.hpp"
#include <hwy/foreach_target.h>  // includes simd_target-inl.hpp once per non-static target
// The static target (what the compiler flags alone allow) only when it is one of ours (NEON
// on aarch64, AVX2 with -mavx2, ...): on plain x86-64 it would be Highway's emulated 128-bit
// target, which torchtpu never runs and which costs ~0.2 s of parsing per translation unit.
#if HWY_STATIC_TARGET == HWY_AVX3 || HWY_STATIC_TARGET == HWY_AVX2 || HWY_STATIC_TARGET == HWY_NEON
#include <hwy/highway.h>        // the static target's ops
#include "simd_target-inl.hpp"  // the static target's FloatVec
#endif
#pragma pop_macro("HWY_TARGET_INCLUDE")
#endif

namespace torchtpu::detail {

#if TORCHTPU_HAS_VECTOR_PATH && HWY_ARCH_X86 && (HWY_TARGETS & HWY_AVX3)
#define TORCHTPU_HAS_AVX512_PATH 1
#else
#define TORCHTPU_HAS_AVX512_PATH 0
#endif
#if TORCHTPU_HAS_VECTOR_PATH && HWY_ARCH_X86 && (HWY_TARGETS & HWY_AVX2)
#define TORCHTPU_HAS_AVX2_PATH 1
#else
#define TORCHTPU_HAS_AVX2_PATH 0
#endif
#if TORCHTPU_HAS_VECTOR_PATH && HWY_ARCH_ARM_A64
#define TORCHTPU_HAS_NEON_PATH 1
#else
#define TORCHTPU_HAS_NEON_PATH 0
#endif

/// `Body`'s entry point for instruction set `isa`, or `scalar` for the scalar set (or one this
/// build has no code for). `Body` is an empty function object whose call operator is a
/// template over the vector type: `template <class V> void operator()(Args...) const`. The
/// pointer is to a function compiled for that instruction set with the body inlined into it.
template <class Body, class... Args>
auto vector_entry_for(CpuIsa isa, void (*scalar)(Args...)) -> void (*)(Args...) {
  switch (isa) {
#if TORCHTPU_HAS_AVX512_PATH
    case CpuIsa::avx512: return &TargetCall<HWY_AVX3>::template run<Body, Args...>;
#endif
#if TORCHTPU_HAS_AVX2_PATH
    case CpuIsa::avx2: return &TargetCall<HWY_AVX2>::template run<Body, Args...>;
#endif
#if TORCHTPU_HAS_NEON_PATH
    case CpuIsa::neon: return &TargetCall<HWY_NEON>::template run<Body, Args...>;
#endif
    default: return scalar;
  }
}

/// `vector_entry_for` the engine's instruction set (`cpu_isa()`), or `scalar` when `enabled`
/// is false.
template <class Body, class... Args>
auto vector_entry(void (*scalar)(Args...), bool enabled = true) -> void (*)(Args...) {
  return enabled ? vector_entry_for<Body>(cpu_isa(), scalar) : scalar;
}

#if TORCHTPU_HAS_AVX512_PATH
/// One vector type of this build, to test whether an op has a vector form (`has_simd`).
using ProbeFloatVec = FloatVec<HWY_AVX3>;
#elif TORCHTPU_HAS_AVX2_PATH
using ProbeFloatVec = FloatVec<HWY_AVX2>;
#elif TORCHTPU_HAS_NEON_PATH
using ProbeFloatVec = FloatVec<HWY_NEON>;
#endif

/// Marks a function written over the portable vector type `V` (vector math, op structs'
/// `simd` members, loop bodies): always inlined, with no target of its own, so it becomes
/// part of the target-compiled kernel that calls it. (Were such a function called out of
/// line, a vector argument would cross between code compiled for a target and code compiled
/// for none, whose calling conventions for vectors differ; always-inline rules that out.)
#define TORCHTPU_VEC [[gnu::always_inline]] inline

/// True for the vector types of simd_target-inl.hpp.
template <class V> inline constexpr bool is_float_vec = false;
template <int64_t T> inline constexpr bool is_float_vec<FloatVec<T>> = true;
/// The scalar paths' one-lane type (simd_lane.hpp) has the same operations.
template <> inline constexpr bool is_float_vec<FloatLane> = true;

}  // namespace torchtpu::detail

#include "simd_avx512.hpp"  // the AVX-512-only kernels' names (VecF, vset1, lane_mask, ...)
