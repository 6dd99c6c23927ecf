// tests/device/emulator_fixture.hpp — helpers shared by the device tests: the emulator client,
// host↔device copies as double vectors, and running a Builder program in one call.
#pragma once
#include <cmath>    // std::fabs
#include <cstdlib>  // std::getenv, setenv, unsetenv
#include <algorithm>  // std::max
#include <cstdint>  // int64_t
#include <cstring>  // std::memcpy
#include <memory>   // std::shared_ptr
#include <string>   // std::string
#include <vector>   // std::vector

#include <torchtpu/core/bfloat16.hpp>       // bfloat16 (host data of bf16 buffers)
#include <torchtpu/core/half.hpp>           // half
#include <torchtpu/device/pjrt/cache.hpp>   // CompilationCache
#include <torchtpu/device/pjrt/client.hpp>  // Client, Buffer, Executable
#include <torchtpu/device/stablehlo.hpp>    // stablehlo::Builder

#include "../test_backend.hpp"  // test_kind, on_emulator, default_matmul_tol

namespace ttest {

using torchtpu::ScalarType;
namespace pjrt = torchtpu::pjrt;
namespace shlo = torchtpu::stablehlo;

/// A host tensor for tests: dtype, dims and values as doubles.
struct HostTensor {
  ScalarType dtype = ScalarType::Float;
  std::vector<int64_t> dims;
  std::vector<double> values;
};

/// The `tpu` client; meson test points TORCHTPU_TPU_EMULATOR_PATH at the emulator build.
/// While alive, TORCHTPU_DUMP_STABLEHLO is unset (restored after): for cases that hand the
/// emulator deliberately invalid text it accepts (mangled programs, a result type that is only
/// checked when run), which are not modules torchtpu emits and must stay out of the XLA corpus
/// (tests/xla/stablehlo_corpus.sh).
struct NoStablehloDump {
  NoStablehloDump() {
    if (const char* v = std::getenv("TORCHTPU_DUMP_STABLEHLO")) saved = v, had = true;
    unsetenv("TORCHTPU_DUMP_STABLEHLO");
  }
  ~NoStablehloDump() {
    if (had) setenv("TORCHTPU_DUMP_STABLEHLO", saved.c_str(), 1);
  }
  NoStablehloDump(const NoStablehloDump&) = delete;
  NoStablehloDump& operator=(const NoStablehloDump&) = delete;
  std::string saved;
  bool had = false;
};

/// The client of the backend under test (tests/test_backend.hpp): `tpu` (meson points
/// TORCHTPU_TPU_EMULATOR_PATH at the emulator build) or `xla_cpu` (XLA's CPU plugin).
inline std::shared_ptr<pjrt::Client> device_client() { return pjrt::Client::get(test_kind()); }
/// The same client under its first name (the device tests were written for the emulator's `tpu`).
inline std::shared_ptr<pjrt::Client> tpu() { return device_client(); }

/// Copies a host tensor to the device, packing values into the dtype's bytes.
inline pjrt::Buffer to_device(const std::shared_ptr<pjrt::Client>& c, const HostTensor& t, int device = 0) {
  const size_t n = t.values.size();
  std::vector<unsigned char> bytes(n * torchtpu::dtype_size(t.dtype));
  for (size_t i = 0; i < n; ++i) {
    const double v = t.values[i];
    unsigned char* p = bytes.data() + i * torchtpu::dtype_size(t.dtype);
    switch (t.dtype) {
      case ScalarType::Bool: *p = v != 0; break;
      case ScalarType::UInt8: *p = static_cast<uint8_t>(v); break;
      case ScalarType::Int32: { int32_t x = static_cast<int32_t>(v); std::memcpy(p, &x, 4); break; }
      case ScalarType::Int64: { int64_t x = static_cast<int64_t>(v); std::memcpy(p, &x, 8); break; }
      case ScalarType::Half: { auto x = torchtpu::half(static_cast<float>(v)); std::memcpy(p, &x, 2); break; }
      case ScalarType::BFloat16: { auto x = torchtpu::bfloat16(static_cast<float>(v)); std::memcpy(p, &x, 2); break; }
      case ScalarType::Float: { float x = static_cast<float>(v); std::memcpy(p, &x, 4); break; }
      case ScalarType::Double: std::memcpy(p, &v, 8); break;
    }
  }
  return c->buffer_from_host(bytes.data(), t.dtype, t.dims, device);
}

/// Copies a device buffer back as doubles.
inline HostTensor to_host(const pjrt::Buffer& b) {
  HostTensor t;
  t.dtype = b.dtype();
  t.dims = b.dims();
  std::vector<unsigned char> bytes(b.size_bytes());
  b.to_host(bytes.data(), bytes.size());
  const size_t esz = torchtpu::dtype_size(t.dtype);
  for (size_t i = 0; i < bytes.size() / esz; ++i) {
    const unsigned char* p = bytes.data() + i * esz;
    double v = 0;
    switch (t.dtype) {
      case ScalarType::Bool: v = *p; break;
      case ScalarType::UInt8: v = *p; break;
      case ScalarType::Int32: { int32_t x; std::memcpy(&x, p, 4); v = x; break; }
      case ScalarType::Int64: { int64_t x; std::memcpy(&x, p, 8); v = static_cast<double>(x); break; }
      case ScalarType::Half: { torchtpu::half x; std::memcpy(&x, p, 2); v = static_cast<float>(x); break; }
      case ScalarType::BFloat16: { torchtpu::bfloat16 x; std::memcpy(&x, p, 2); v = static_cast<float>(x); break; }
      case ScalarType::Float: { float x; std::memcpy(&x, p, 4); v = x; break; }
      case ScalarType::Double: std::memcpy(&v, p, 8); break;
    }
    t.values.push_back(v);
  }
  return t;
}

/// Compiles the builder's module (through the global cache) and runs it on `inputs`.
inline std::vector<HostTensor> run(const shlo::Builder& b, const std::vector<HostTensor>& inputs, int device = 0) {
  auto c = device_client();
  auto exe = pjrt::CompilationCache::global().get_or_compile(c, b.str());
  std::vector<pjrt::Buffer> bufs;
  for (const auto& t : inputs) bufs.push_back(to_device(c, t, device));
  std::vector<const pjrt::Buffer*> args;
  for (const auto& x : bufs) args.push_back(&x);
  std::vector<HostTensor> out;
  for (const auto& r : exe->execute(args, device)) out.push_back(to_host(r));
  return out;
}

/// Compiles raw MLIR text (no cache) and runs it.
inline std::vector<HostTensor> run_text(const std::string& text, const std::vector<HostTensor>& inputs) {
  auto c = device_client();
  auto exe = c->compile(text);
  std::vector<pjrt::Buffer> bufs;
  for (const auto& t : inputs) bufs.push_back(to_device(c, t));
  std::vector<const pjrt::Buffer*> args;
  for (const auto& x : bufs) args.push_back(&x);
  std::vector<HostTensor> out;
  for (const auto& r : exe->execute(args)) out.push_back(to_host(r));
  return out;
}

inline double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return 1e300;
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

/// Deterministic pseudo-random values in [-1, 1).
inline std::vector<double> random_values(size_t n, uint32_t seed) {
  std::vector<double> v(n);
  uint32_t s = seed * 2654435761u + 1;
  for (auto& x : v) {
    s ^= s << 13; s ^= s >> 17; s ^= s << 5;
    x = (s % 2000000) / 1000000.0 - 1.0;
  }
  return v;
}

inline double bf16_round(double v) { return static_cast<float>(torchtpu::bfloat16(static_cast<float>(v))); }

}  // namespace ttest
