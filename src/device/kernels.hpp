// src/device/kernels.hpp — helpers shared by the emulator's interpreter (interpreter.cpp) and
// its matrix-unit kernels (contract.cpp); internal to the plugin.
#pragma once
#include <cstdint>  // int64_t
#include <string>   // std::string
#include <vector>   // std::vector

#include "emulator.hpp"  // Op, Tensor, TensorType, kInvalidArgument

namespace torchtpu::emulator::detail {

/// Throws EmuError naming the op and its line.
[[noreturn]] void op_fail(const Op& op, const std::string& msg, int code = kInvalidArgument);
/// Row-major strides (in elements) of `dims`.
std::vector<int64_t> strides_of(const std::vector<int64_t>& dims);
/// dst[i] = src[offset + Σ idx_k·strides_k] over the row-major index space `dims`.
void gather_strided(const double* src, int64_t offset, const std::vector<int64_t>& dims,
                    const std::vector<int64_t>& strides, double* dst);
/// An integer-list attribute (list, array<i64>, dense, or a single integer).
std::vector<int64_t> ints(const Op& op, const char* key, bool required = true);
/// An integer attribute, or `dflt` when absent.
int64_t int_attr(const Op& op, const char* key, int64_t dflt);
/// A zero-filled tensor of type `t`.
Tensor make(const TensorType& t);
/// The transpose of `x` whose axis i is x's axis perm[i].
Tensor transpose_raw(const Tensor& x, const std::vector<int64_t>& perm);

/// stablehlo.dot_general / stablehlo.dot.
Tensor run_dot_general(const Op& op, const Tensor& lhs, const Tensor& rhs, const TensorType& out);
/// stablehlo.convolution.
Tensor run_convolution(const Op& op, const Tensor& lhs, const Tensor& rhs, const TensorType& out);

}  // namespace torchtpu::emulator::detail
