// torchtpu/device.hpp — the umbrella header plus the PJRT device runtime: tensors on TPUs (and
// other PJRT devices, including the TPU emulator), the deferred graph, the compilation cache,
// `accelerator::current()` / `is_available()` / `device_count()`.
//
// Include it in at least one translation unit of a program that uses a PJRT device; the other
// translation units may include only <torchtpu/torchtpu.hpp> and still create, compute with and
// observe device tensors (they reach the runtime through a table this header fills at static
// initialization). Kept out of the umbrella because the runtime is several thousand lines that
// a cpu-only translation unit should not pay to compile (docs/compile-time.md).
#pragma once
#include "device/graph.hpp"  // accelerator, ExecStats, the deferred graph
#include "device/lower.hpp"  // the expression lowering; install_runtime
#include "torchtpu.hpp"      // the library

namespace torchtpu::device::detail {
/// Fills the front end's table when the program starts (once per program; every TU that
/// includes this header shares the one inline variable).
inline const bool runtime_installed = (install_runtime(), true);
}  // namespace torchtpu::device::detail
