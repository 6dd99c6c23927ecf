// bench/xla_capi.cpp — the torchtpu side of bench/xla_vs_jax.py, as a small C ABI that the
// Python driver loads with ctypes, so that torchtpu and jax.jit run in one process on the same
// inputs, their calls interleaved round by round (issue 11, "Benchmarks").
//
// Workloads (bench/workloads.hpp; inputs are uploaded by the driver, so both sides compute on
// identical data):
//   0 chain10      the 10-op chain, one statement per op (`chain_per_op`) on slot 0 (2^22 f32)
//   1 chain10_expr the same chain as one expression (`chain_fused`) on slot 0
//   2 chain150     150 one-input ops, one statement each (`chain150_per_op`) on slot 1
//   3 mlp          3-layer MLP forward, one statement per op (`mlp_per_op`): x = slot 2
//                  [256, 512], w1 b1 w2 b2 w3 b3 = slots 3..8
//   4 add1         one op, `x + 1` on slot 9 (2^10 f32): per-op dispatch cost
//   5 chain150     the 150-op chain on slot 10 (the driver puts a small, dispatch-bound input there)
// Modes: 0 strict, 1 fused, 2 debug (ExecutionMode).
//
// A call is timed until its result is ready on the device (`bench::wait_ready`), not until
// torchtpu::sync() returns: sync() flushes the deferred graph but does not wait for executions,
// which real XLA runs asynchronously.
// All entry points return a negative value (or null) on error; ttb_last_error() says why.
#include <chrono>     // std::chrono::steady_clock
#include <cstdint>    // int64_t, uint64_t
#include <cstring>    // std::memcpy
#include <exception>  // std::exception
#include <optional>   // std::optional
#include <string>     // std::string
#include <vector>     // std::vector

#include <torchtpu/device.hpp>  // Tensor, modes, the device runtime, pjrt::CompilationCache

#include "workloads.hpp"  // the workloads, wait_ready

using namespace torchtpu;
using bench::wait_ready;

namespace {

std::string g_error;
std::optional<Device> g_device;
std::vector<Tensor<float>> g_slots(11);

Tensor<float> run_workload(int workload) {
  switch (workload) {
    case 0: return bench::chain_per_op(g_slots[0]);
    case 1: return bench::chain_fused(g_slots[0]);
    case 2: return bench::chain150_per_op(g_slots[1]);
    case 3:
      return bench::mlp_per_op({g_slots[3], g_slots[4], g_slots[5], g_slots[6], g_slots[7], g_slots[8]},
                               g_slots[2]);
    case 4: return Tensor<float>(g_slots[9] + 1.0f);
    case 5: return bench::chain150_per_op(g_slots[10]);
    default: throw ValueError("ttb: unknown workload " + std::to_string(workload) + " (expected 0..5)");
  }
}

ExecutionMode mode_of(int mode) {
  if (mode == 0) return ExecutionMode::Strict;
  if (mode == 1) return ExecutionMode::Fused;
  if (mode == 2) return ExecutionMode::Debug;
  throw ValueError("ttb: unknown mode " + std::to_string(mode) + " (0 strict, 1 fused, 2 debug)");
}

const Device& open_device() {
  if (!g_device) throw ValueError("ttb: call ttb_open first");
  return *g_device;
}

template <class F>
auto guarded(F&& f, decltype(f()) on_error) noexcept -> decltype(f()) {
  try {
    return f();
  } catch (const std::exception& e) {
    g_error = e.what();
  } catch (...) {
    g_error = "unknown exception";
  }
  return on_error;
}

std::string g_describe;

}  // namespace

extern "C" {

/// The message of the last failed call ("" if none).
const char* ttb_last_error() { return g_error.c_str(); }

/// Selects the device ("cpu", "tpu", "tpu:0", "xla_cpu" once that kind exists) and creates its
/// PJRT client. Returns 0, or -1 (e.g. an unknown device string, no plugin found).
int ttb_open(const char* device_str) {
  return guarded(
      [&] {
        Device d(device_str);
        if (!d.is_cpu()) (void)pjrt::Client::get(device_kind_name(d.kind()));
        g_device = d;
        return 0;
      },
      -1);
}

/// One line about the open device: platform name and version, plugin path, PJRT API version,
/// whether it is torchtpu's emulator. Null on error.
const char* ttb_describe() {
  return guarded(
      [&]() -> const char* {
        const Device& d = open_device();
        if (d.is_cpu()) {
          g_describe = "device=cpu (torchtpu's CPU engine)";
        } else {
          auto c = pjrt::Client::get(device_kind_name(d.kind()));
          g_describe = "device=" + d.str() + " platform=" + c->platform_name() + " version=" +
                       c->platform_version() + " device_kind=" + c->device_kind() +
                       " plugin=" + c->plugin().path() + " pjrt_api=" + std::to_string(c->plugin().api_major()) +
                       "." + std::to_string(c->plugin().api_minor()) + (c->emulated() ? " EMULATED" : "");
        }
        return g_describe.c_str();
      },
      nullptr);
}

/// Copies `data` (dense row-major f32 of shape `dims[0..rank)`) to slot `slot` (0..10) on the
/// open device. Returns 0 or -1.
int ttb_upload(int slot, const float* data, const int64_t* dims, int rank) {
  return guarded(
      [&] {
        if (slot < 0 || slot >= int(g_slots.size())) throw ValueError("ttb_upload: slot out of range");
        Dims shape(dims, dims + rank);
        Tensor<float> host = Tensor<float>::empty(shape);
        std::memcpy(host.data_ptr(), data, sizeof(float) * size_t(host.numel()));
        g_slots[size_t(slot)] = host.to(open_device());
        wait_ready(g_slots[size_t(slot)]);
        return 0;
      },
      -1);
}

/// Runs `workload` `iters` times in `mode` and returns the total wall time in ms. `wait`: 1,
/// every call waits for its result (a synchronous call); 0, the calls are dispatched back to
/// back and only the last result is waited for; 2, every call ends with torchtpu::sync() alone
/// (what bench/device_modes.cpp times: it does not wait for the execution). -1 on error.
double ttb_run(int workload, int mode, int iters, int wait) {
  return guarded(
      [&] {
        ExecutionModeGuard g(mode_of(mode));
        const auto t0 = std::chrono::steady_clock::now();
        Tensor<float> r;
        for (int i = 0; i < iters; ++i) {
          r = run_workload(workload);
          if (wait == 1) wait_ready(r);
          if (wait == 2) torchtpu::sync();
        }
        if (wait == 0) wait_ready(r);
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      },
      -1.0);
}

/// Runs `workload` once in `mode` and copies its result (`numel` floats) to `out`. 0 or -1.
int ttb_result(int workload, int mode, float* out, int64_t numel) {
  return guarded(
      [&] {
        ExecutionModeGuard g(mode_of(mode));
        const Tensor<float> r = Tensor<float>(run_workload(workload).cpu()).contiguous();
        if (r.numel() != numel)
          throw ShapeError("ttb_result: result has " + std::to_string(r.numel()) + " elements, buffer " +
                           std::to_string(numel));
        std::memcpy(out, r.data_ptr(), sizeof(float) * size_t(numel));
        return 0;
      },
      -1);
}

/// Compile-latency probe: the 10-op chain as one expression (fused mode) on a fresh [rows, cols]
/// input (x[i] = (i % 17) / 8 - 1, uploaded before the clock starts), run and copied to the host.
/// Returns the wall time in ms; `out_first` (if not null) receives the result's first element.
double ttb_probe(int64_t rows, int64_t cols, float* out_first) {
  return guarded(
      [&] {
        ExecutionModeGuard g(ExecutionMode::Fused);
        Tensor<float> host = Tensor<float>::empty({rows, cols});
        for (int64_t i = 0; i < host.numel(); ++i) host.data_ptr()[i] = float(i % 17) / 8.0f - 1.0f;
        const Tensor<float> x = host.to(open_device());
        wait_ready(x);
        const auto t0 = std::chrono::steady_clock::now();
        const Tensor<float> r = bench::chain_fused(x).cpu();
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (out_first) *out_first = r.contiguous().data_ptr()[0];
        return ms;
      },
      -1.0);
}

/// Sets the disk directory of torchtpu's compilation cache ("" disables it). 0 or -1.
int ttb_cache_dir(const char* dir) {
  return guarded(
      [&] {
        pjrt::CompilationCache::global().set_disk_dir(std::string(dir));
        return 0;
      },
      -1);
}

/// Drops the in-memory executables and program texts: the next call of a program finds it on
/// disk (if a disk directory is set) or compiles it. 0 or -1.
int ttb_cache_clear_memory() {
  return guarded(
      [&] {
        pjrt::CompilationCache::global().clear_memory();
        device::TextMemo::global().clear();
        return 0;
      },
      -1);
}

/// Cache counters: out[0..5) = memory_hits, disk_hits, misses, compiles, disk_writes. 0 or -1.
int ttb_cache_stats(uint64_t* out) {
  return guarded(
      [&] {
        const auto s = pjrt::CompilationCache::global().stats();
        out[0] = s.memory_hits;
        out[1] = s.disk_hits;
        out[2] = s.misses;
        out[3] = s.compiles;
        out[4] = s.disk_writes;
        return 0;
      },
      -1);
}

/// Compiles a one-op program on the open device, serializes the executable and loads it back
/// (what TORCHTPU_CACHE_DIR does on a miss, then on a hit). Returns "ok", or the step and the
/// plugin's error where the round trip fails (the disk cache then recompiles silently); null
/// on another error.
const char* ttb_disk_roundtrip() {
  return guarded(
      [&]() -> const char* {
        const Device& d = open_device();
        if (d.is_cpu()) throw ValueError("ttb_disk_roundtrip: the cpu has no executables");
        auto c = pjrt::Client::get(device_kind_name(d.kind()));
        const char* text =
            "func.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
            "  %0 = stablehlo.add %x, %x : tensor<4xf32>\n"
            "  return %0 : tensor<4xf32>\n"
            "}\n";
        auto exe = c->compile(text);
        std::optional<std::string> bytes;
        try {
          bytes = exe->serialize();
        } catch (const std::exception& e) {
          return (g_describe = std::string("serialize: ") + e.what()).c_str();
        }
        if (!bytes) return (g_describe = "serialize: the plugin does not serialize executables").c_str();
        try {
          (void)c->deserialize(*bytes);
        } catch (const std::exception& e) {
          return (g_describe = "deserialize (" + std::to_string(bytes->size()) + " bytes): " + e.what()).c_str();
        }
        return "ok";
      },
      nullptr);
}

}  // extern "C"
