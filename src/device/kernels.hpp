// src/device/kernels.hpp — helpers shared by the emulator's interpreter (interpreter.cpp), its
// matrix-unit kernels (contract.cpp), its fusion planner and its parser (which checks sorts with
// plan_sort); internal to the plugin.
#pragma once
#include <cstddef>  // size_t
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
/// A buffer of n elements: zero-filled, or (zero = false) with unspecified contents for a
/// caller that writes every element. Large buffers come from a pool of freed ones.
std::vector<double> take_buffer(size_t n, bool zero);
/// Returns a buffer to the pool (kept only if large, up to a total of 512 MiB).
void give_buffer(std::vector<double>&& v);
/// `t` as a shared tensor whose buffer goes back to the pool when the last reference goes.
TensorPtr share(Tensor&& t);
/// A zero-filled tensor of type `t`.
Tensor make(const TensorType& t);
/// The transpose of `x` whose axis i is x's axis perm[i].
Tensor transpose_raw(const Tensor& x, const std::vector<int64_t>& perm);

/// A checked elementwise op, ready to run on any range of elements (whole tensors, or blocks of
/// a fused elementwise region).
struct EwPlan {
  enum Kind { Unary, Not, BinFloat, BinInt, Compare, Select, Clamp, Convert } kind = Unary;
  double (*f)(double) = nullptr;  // Unary: the host function
  int code = 0;                   // binary op or comparison direction
  ET in_et = ET::F32, out_et = ET::F32;
  std::vector<bool> scalar;       // operand read from its single element
};
/// Whether `name` (e.g. "stablehlo.add") is an elementwise op that plan_elementwise knows.
bool is_elementwise(const std::string& name);
/// Checks elementwise `op` on operand types `in` and result `out`. Throws EmuError (naming the op)
/// on a mismatch.
EwPlan plan_elementwise(const Op& op, const std::vector<const TensorType*>& in, const TensorType& out);
/// Runs `p` on n elements; in[k] points at operand k's first element (scalars are not advanced).
/// Every result is rounded to `p.out_et`, as the op does on whole tensors.
void ew_run(const EwPlan& p, const double* const* in, double* out, size_t n);
/// stablehlo.constant.
Tensor run_constant(const Op& op, const TensorType& out);
/// Checks stablehlo.broadcast_in_dim of an `x` to `out`; per result axis, the operand's
/// element stride (0 along broadcast axes).
std::vector<int64_t> broadcast_strides(const Op& op, const TensorType& x, const TensorType& out);

/// A checked stablehlo.sort: its axis and its comparator compiled to scalar steps over a small
/// register file (one value per comparator slot).
struct SortPlan {
  struct Step {
    EwPlan plan;
    std::vector<int> in;  ///< comparator slots read, in operand order
    int out = 0;          ///< comparator slot written
  };
  int64_t dim = 0;           ///< the axis sorted along (non-negative)
  std::vector<Step> steps;   ///< the comparator's elementwise ops, in order
  std::vector<double> init;  ///< per comparator slot: its value for constants, else 0
  int result = 0;            ///< the slot the comparator returns (an i1)
};
/// Checks stablehlo.sort `op` on operand types `in`: equal shapes, result types equal to the
/// operand types, `dimension` in range, a comparator whose block arguments are two scalars per
/// operand (a0, b0, a1, b1, ...) of the operands' element types, whose ops are elementwise ops or
/// constants on scalars, and which returns one tensor<i1>. Throws EmuError (INVALID_ARGUMENT;
/// UNIMPLEMENTED for an op the comparator may not use) naming the op and its line.
SortPlan plan_sort(const Op& op, const std::vector<const TensorType*>& in);
/// stablehlo.sort: every operand permuted alike along the axis, by a stable merge sort that
/// asks the comparator "does a come before b"; safe (no out-of-bounds access) for any comparator,
/// even one that is not a strict weak order.
std::vector<Tensor> run_sort(const Op& op, const std::vector<const Tensor*>& in);

/// stablehlo.dot_general / stablehlo.dot.
Tensor run_dot_general(const Op& op, const Tensor& lhs, const Tensor& rhs, const TensorType& out);
/// stablehlo.convolution.
Tensor run_convolution(const Op& op, const Tensor& lhs, const Tensor& rhs, const TensorType& out);

}  // namespace torchtpu::emulator::detail
