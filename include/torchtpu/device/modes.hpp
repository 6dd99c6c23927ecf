// torchtpu/device/modes.hpp — the process-wide settings of PJRT devices: execution mode
// (debug / strict / fused), matmul operand precision and the deferred graph's size bound.
// Light on purpose: every translation unit sees it through the umbrella header.
#pragma once
#include <atomic>       // std::atomic
#include <cstdint>      // int64_t
#include <string>       // std::string
#include <string_view>  // std::string_view

#include "../core/errors.hpp"  // ValueError

namespace torchtpu {

namespace stablehlo {
/// Operand precision of dot_general / convolution (StableHLO's `precision_config`). On TPU,
/// `Default` multiplies f32 operands rounded to bf16 (f32 accumulation); `Highest` is
/// f32-exact. `High` is bf16x3 on TPU (the emulator treats it like `Highest`).
enum class Precision { Default, High, Highest };
}  // namespace stablehlo

// ---- execution modes ------------------------------------------------------------------

/// How expressions on PJRT devices execute (DESIGN.md §5).
///
/// - `Debug`: every op is its own executable, run and awaited at the statement that contains
///   it; a device error names the op.
/// - `Strict`: every op is its own executable, dispatched at its statement and not waited
///   for: the host waits only when a value is observed (an execution error surfaces there).
/// - `Fused` (default): a whole expression is one program, and statements are deferred into
///   one graph that is compiled once (cached) and run when a value is observed (`.cpu()`,
///   `item()`, printing), at `torchtpu::sync()`, or when the graph reaches
///   `max_deferred_statements()`.
///
/// **Devices:** on the cpu every mode uses compile-time fusion within each expression (the
/// CPU engine is eager per statement), so all modes give bit-identical cpu results. On PJRT
/// devices the modes agree within the tolerance of the device's arithmetic (docs/devices.md).
enum class ExecutionMode { Debug, Strict, Fused };

constexpr std::string_view execution_mode_name(ExecutionMode m) {
  return m == ExecutionMode::Debug ? "debug" : m == ExecutionMode::Strict ? "strict" : "fused";
}

/// "debug", "strict" or "fused". **Errors:** ValueError listing the accepted names.
inline ExecutionMode parse_execution_mode(std::string_view s) {
  if (s == "debug") return ExecutionMode::Debug;
  if (s == "strict") return ExecutionMode::Strict;
  if (s == "fused") return ExecutionMode::Fused;
  throw ValueError("invalid execution mode '" + std::string(s) +
                   "': expected one of \"debug\", \"strict\", \"fused\"");
}

namespace detail {
inline std::atomic<int>& execution_mode_slot() {
  static std::atomic<int> mode{static_cast<int>(ExecutionMode::Fused)};
  return mode;
}
inline std::atomic<int>& matmul_precision_slot() {
  static std::atomic<int> p{static_cast<int>(stablehlo::Precision::Default)};
  return p;
}
inline std::atomic<int64_t>& max_deferred_slot() {
  static std::atomic<int64_t> n{1024};
  return n;
}
}  // namespace detail

/// The process-wide execution mode (default `Fused`).
inline ExecutionMode execution_mode() noexcept {
  return static_cast<ExecutionMode>(detail::execution_mode_slot().load());
}
/// Sets the process-wide mode. Statements already deferred stay deferred until observed;
/// call `sync()` first to run them under the old mode.
inline void set_execution_mode(ExecutionMode m) noexcept {
  detail::execution_mode_slot().store(static_cast<int>(m));
}

/// Sets a mode for the lifetime of the guard and restores the previous one. Not a
/// per-thread setting: guards on several threads at once interleave.
class ExecutionModeGuard {
 public:
  /// Sets the execution mode to `m` until the guard is destroyed.
  explicit ExecutionModeGuard(ExecutionMode m) : saved_(execution_mode()) { set_execution_mode(m); }
  ~ExecutionModeGuard() { set_execution_mode(saved_); }
  ExecutionModeGuard(const ExecutionModeGuard&) = delete;
  ExecutionModeGuard& operator=(const ExecutionModeGuard&) = delete;

 private:
  ExecutionMode saved_;
};

/// Operand precision of matrix products on PJRT devices (`stablehlo.dot_general`). On TPU,
/// `Default` multiplies f32 operands rounded to bf16 with f32 accumulation; `Highest` is
/// f32-exact. Not used on the cpu (always full precision there).
using MatmulPrecision = stablehlo::Precision;

inline MatmulPrecision matmul_precision() noexcept {
  return static_cast<MatmulPrecision>(detail::matmul_precision_slot().load());
}
inline void set_matmul_precision(MatmulPrecision p) noexcept {
  detail::matmul_precision_slot().store(static_cast<int>(p));
}
/// Scoped `set_matmul_precision`.
class MatmulPrecisionGuard {
 public:
  /// Sets the matmul precision to `p` until the guard is destroyed.
  explicit MatmulPrecisionGuard(MatmulPrecision p) : saved_(matmul_precision()) { set_matmul_precision(p); }
  ~MatmulPrecisionGuard() { set_matmul_precision(saved_); }
  MatmulPrecisionGuard(const MatmulPrecisionGuard&) = delete;
  MatmulPrecisionGuard& operator=(const MatmulPrecisionGuard&) = delete;

 private:
  MatmulPrecision saved_;
};

/// The size bound of the deferred graph, in statements (default 1024): recording one more
/// runs the graph first. **Errors:** ValueError for n < 1.
inline int64_t max_deferred_statements() noexcept { return detail::max_deferred_slot().load(); }
inline void set_max_deferred_statements(int64_t n) {
  if (n < 1) throw ValueError("set_max_deferred_statements: n must be >= 1, got " + std::to_string(n));
  detail::max_deferred_slot().store(n);
}

}  // namespace torchtpu
