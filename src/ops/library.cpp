// src/ops/library.cpp — the operator library compiled once, for programs built with
// TORCHTPU_SEPARATE_OPS (this tree's tests, tools and benchmarks; docs/design.md, "Compile
// time"): every library op's entry point (`ops::call` / `ops::call_results`, with its cpu
// kernels for each dtype), the by-name table and the eager devices' lowering tables. The other
// translation units of such a program see only declarations (ops/library.hpp,
// TORCHTPU_LIBRARY_OP), so a test that calls twenty ops no longer compiles sixty ops' kernels
// for eight dtypes. A header-only program (no macro) instantiates what it uses instead.
#define TORCHTPU_OPS_LIBRARY_TU 1
#include <torchtpu/device/lower.hpp>  // op_hooks, library_hooks (and ops/all.hpp: every op)

namespace torchtpu::ops {

// An op listed in LibraryOps without its TORCHTPU_LIBRARY_OP line would be compiled again in
// every translation unit that calls it: a missing line is a build error here instead.
static_assert([] {
  bool all = true;
  LibraryOps::for_each([&all]<class Op>(std::type_identity<Op>) { all = all && compiled_once<Op>; });
  return all;
}());

}  // namespace torchtpu::ops
