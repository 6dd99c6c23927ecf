// src/jit/builtin_ops.cpp — the model runtime's built-in ops (include/torchtpu/jit/
// builtin_ops.hpp) compiled once, for programs built with TORCHTPU_JIT_SEPARATE_OPS (the
// tests and torchtpu-run here): their other translation units then only declare
// `register_builtin_ops`. No libtorch: the kernels work on torchtpu tensors.
#define TORCHTPU_JIT_BUILTIN_OPS_TU 1
#include <torchtpu/jit/registry.hpp>  // register_builtin_ops (builtin_ops.hpp, included by it)
