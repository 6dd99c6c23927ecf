// torchtpu/ops/reduce.hpp — reductions (sum, mean, prod, max, min, any, all, argmax, argmin)
// and softmax / log_softmax. The reduced operand is streamed, never materialized (fuse/).
#pragma once
#include <cstdint>      // int64_t
#include <limits>       // std::numeric_limits
#include <string_view>  // std::string_view
#include <vector>       // std::vector (lower_softmax)

#include "../fuse/vecmath.hpp"  // vector forms used by the `simd_combine` members
#include "traits.hpp"            // expression, policies

namespace torchtpu {

/// Sum. **Dtypes:** all; bool and integers accumulate and return int64 (as torch.sum);
/// bf16/half accumulate in float. NaN propagates. Integer sums wrap around in int64 (as torch).
struct SumOp {
  ///@{
  /// Names: `sum`, TorchScript `aten::sum`, StableHLO `stablehlo.add`.
  static constexpr std::string_view name = "sum", aten = "aten::sum", hlo = "stablehlo.add";
  ///@}
  /// Element type of the result, for the promoted operand type (`C` or `T`).
  template <class T> using result = sum_result_t<T>;
  /// Accumulator type of the reduction for element type `T`.
  template <class T> using acc = opmath_t<sum_result_t<T>>;
  /// Start value of the accumulator (the reduction's identity).
  template <class A> static constexpr A init() { return A(0); }
  /// Folds two partial accumulators into one.
  template <class A> static constexpr A combine(A a, A b) { return detail::wrap_add(a, b); }
  /// Result from the accumulator of `n` reduced elements.
  template <class A> static constexpr A finalize(A a, int64_t) { return a; }
  /// Vector form of `combine` (fuse/vecmath.hpp).
  template <class V> TORCHTPU_VEC static V simd_combine(V a, V b) { return a + b; }
};
/// Arithmetic mean. **Dtypes:** floating point only (as torch.mean).
struct MeanOp {
  ///@{
  /// Names: `mean`, TorchScript `aten::mean`, StableHLO `stablehlo.add`.
  static constexpr std::string_view name = "mean", aten = "aten::mean", hlo = "stablehlo.add";
  ///@}
  /// Element type of the result, for the promoted operand type (`C` or `T`).
  template <class T> using result = T;
  /// Accumulator type of the reduction for element type `T`.
  template <class T> using acc = opmath_t<T>;
  /// Start value of the accumulator (the reduction's identity).
  template <class A> static constexpr A init() { return A(0); }
  /// Folds two partial accumulators into one.
  template <class A> static constexpr A combine(A a, A b) { return a + b; }
  /// Result from the accumulator of `n` reduced elements.
  template <class A> static constexpr A finalize(A a, int64_t n) {
    return n ? A(a / A(n)) : std::numeric_limits<A>::quiet_NaN();
  }
  // StableHLO lowering of `finalize` (device/lower.hpp); 0/0 gives NaN as above.
  /// StableHLO form of `finalize` (device/lower.hpp): `acc` reduced over `n` elements.
  template <class B, class V> static V lower_finalize(B& b, const V& acc, int64_t n) {
    return b.divide(acc, b.constant(static_cast<double>(n), acc.dtype, acc.dims));
  }
  /// Vector form of `combine` (fuse/vecmath.hpp).
  template <class V> TORCHTPU_VEC static V simd_combine(V a, V b) { return a + b; }
};
/// Product; integers and bool give int64 (wrapping around on overflow, as torch).
struct ProdOp {
  ///@{
  /// Names: `prod`, TorchScript `aten::prod`, StableHLO `stablehlo.multiply`.
  static constexpr std::string_view name = "prod", aten = "aten::prod", hlo = "stablehlo.multiply";
  ///@}
  /// Element type of the result, for the promoted operand type (`C` or `T`).
  template <class T> using result = sum_result_t<T>;
  /// Accumulator type of the reduction for element type `T`.
  template <class T> using acc = opmath_t<sum_result_t<T>>;
  /// Start value of the accumulator (the reduction's identity).
  template <class A> static constexpr A init() { return A(1); }
  /// Folds two partial accumulators into one.
  template <class A> static constexpr A combine(A a, A b) { return detail::wrap_mul(a, b); }
  /// Result from the accumulator of `n` reduced elements.
  template <class A> static constexpr A finalize(A a, int64_t) { return a; }
  /// Vector form of `combine` (fuse/vecmath.hpp).
  template <class V> TORCHTPU_VEC static V simd_combine(V a, V b) { return a * b; }
};
/// Maximum; NaN propagates. **Errors:** ShapeError when reducing a zero-size dim.
struct MaxOp {
  ///@{
  /// Names: `max`, TorchScript `aten::amax`, StableHLO `stablehlo.maximum`.
  static constexpr std::string_view name = "max", aten = "aten::amax", hlo = "stablehlo.maximum";
  ///@}
  /// Reducing a zero-size dim is a ShapeError (no identity exists).
  static constexpr bool needs_nonempty = true;
  /// Element type of the result, for the promoted operand type (`C` or `T`).
  template <class T> using result = T;
  /// Accumulator type of the reduction for element type `T`.
  template <class T> using acc = opmath_t<T>;
  /// Start value of the accumulator (the reduction's identity).
  template <class A> static constexpr A init() {
    if constexpr (std::numeric_limits<A>::has_infinity) return -std::numeric_limits<A>::infinity();
    else return std::numeric_limits<A>::lowest();
  }
  /// Folds two partial accumulators into one.
  template <class A> static constexpr A combine(A a, A b) {
    if (detail::is_nan(a)) return a;
    if (detail::is_nan(b)) return b;
    return a < b ? b : a;
  }
  /// Result from the accumulator of `n` reduced elements.
  template <class A> static constexpr A finalize(A a, int64_t) { return a; }
  /// Vector form of `combine` (fuse/vecmath.hpp).
  template <class V> TORCHTPU_VEC static V simd_combine(V a, V b) { return vmaximum(a, b); }
};
/// Minimum; NaN propagates. **Errors:** ShapeError when reducing a zero-size dim.
struct MinOp {
  ///@{
  /// Names: `min`, TorchScript `aten::amin`, StableHLO `stablehlo.minimum`.
  static constexpr std::string_view name = "min", aten = "aten::amin", hlo = "stablehlo.minimum";
  ///@}
  /// Reducing a zero-size dim is a ShapeError (no identity exists).
  static constexpr bool needs_nonempty = true;
  /// Element type of the result, for the promoted operand type (`C` or `T`).
  template <class T> using result = T;
  /// Accumulator type of the reduction for element type `T`.
  template <class T> using acc = opmath_t<T>;
  /// Start value of the accumulator (the reduction's identity).
  template <class A> static constexpr A init() {
    if constexpr (std::numeric_limits<A>::has_infinity) return std::numeric_limits<A>::infinity();
    else return std::numeric_limits<A>::max();
  }
  /// Folds two partial accumulators into one.
  template <class A> static constexpr A combine(A a, A b) {
    if (detail::is_nan(a)) return a;
    if (detail::is_nan(b)) return b;
    return b < a ? b : a;
  }
  /// Result from the accumulator of `n` reduced elements.
  template <class A> static constexpr A finalize(A a, int64_t) { return a; }
  /// Vector form of `combine` (fuse/vecmath.hpp).
  template <class V> TORCHTPU_VEC static V simd_combine(V a, V b) { return vminimum(a, b); }
};
/// True if any element is nonzero.
struct AnyOp {
  ///@{
  /// Names: `any`, TorchScript `aten::any`, StableHLO `stablehlo.or`.
  static constexpr std::string_view name = "any", aten = "aten::any", hlo = "stablehlo.or";
  ///@}
  /// Element type of the result, for the promoted operand type (`C` or `T`).
  template <class T> using result = bool;
  /// Accumulator type of the reduction for element type `T`.
  template <class T> using acc = bool;
  /// Start value of the accumulator (the reduction's identity).
  template <class A> static constexpr A init() { return false; }
  /// Folds two partial accumulators into one.
  template <class A> static constexpr A combine(A a, A b) { return a || b; }
  /// Result from the accumulator of `n` reduced elements.
  template <class A> static constexpr A finalize(A a, int64_t) { return a; }
};
/// True if every element is nonzero.
struct AllOp {
  ///@{
  /// Names: `all`, TorchScript `aten::all`, StableHLO `stablehlo.and`.
  static constexpr std::string_view name = "all", aten = "aten::all", hlo = "stablehlo.and";
  ///@}
  /// Element type of the result, for the promoted operand type (`C` or `T`).
  template <class T> using result = bool;
  /// Accumulator type of the reduction for element type `T`.
  template <class T> using acc = bool;
  /// Start value of the accumulator (the reduction's identity).
  template <class A> static constexpr A init() { return true; }
  /// Folds two partial accumulators into one.
  template <class A> static constexpr A combine(A a, A b) { return a && b; }
  /// Result from the accumulator of `n` reduced elements.
  template <class A> static constexpr A finalize(A a, int64_t) { return a; }
};
/// Index of the first maximum (NaN counts as the maximum, as in torch.argmax).
struct ArgMaxOp {
  ///@{
  /// Names: `argmax`, TorchScript `aten::argmax`, StableHLO `stablehlo.maximum`.
  static constexpr std::string_view name = "argmax", aten = "aten::argmax", hlo = "stablehlo.maximum";
  ///@}
  /// True if `v` replaces the current best `best` (NaN wins; ties keep the first index).
  template <class A> static constexpr bool better(A best, A v) {
    if (detail::is_nan(best)) return false;
    return detail::is_nan(v) || best < v;
  }
};
/// Index of the first minimum (NaN counts as the minimum, as in torch.argmin).
struct ArgMinOp {
  ///@{
  /// Names: `argmin`, TorchScript `aten::argmin`, StableHLO `stablehlo.minimum`.
  static constexpr std::string_view name = "argmin", aten = "aten::argmin", hlo = "stablehlo.minimum";
  ///@}
  /// True if `v` replaces the current best `best` (NaN wins; ties keep the first index).
  template <class A> static constexpr bool better(A best, A v) {
    if (detail::is_nan(best)) return false;
    return detail::is_nan(v) || v < best;
  }
};

/// Reduce over all dims (`dims` empty) or the listed dims; `keepdim` keeps them as size 1.
/// **Shapes:** `[..]` → `[]` (all), or the input shape without (or with size 1 at) `dims`.
/// **Errors:** IndexError for a dim out of range; ShapeError for a repeated dim, or for
/// max/min over a zero-size dim.
template <expression X> auto sum(const X& x, const Dims& dims = {}, bool keepdim = false) {
  return ReduceNode<SumOp, X>(x, dims, keepdim);
}
template <expression X> auto mean(const X& x, const Dims& dims = {}, bool keepdim = false) {
  static_assert(floating_element<typename X::value_type>,
                "mean: input dtype must be a floating point type (as in torch.mean)");
  return ReduceNode<MeanOp, X>(x, dims, keepdim);
}
template <expression X> auto prod(const X& x, const Dims& dims = {}, bool keepdim = false) {
  return ReduceNode<ProdOp, X>(x, dims, keepdim);
}
/// `amax`: maximum over `dims` (values only; use argmax for indices).
template <expression X> auto max(const X& x, const Dims& dims = {}, bool keepdim = false) {
  return ReduceNode<MaxOp, X>(x, dims, keepdim);
}
template <expression X> auto min(const X& x, const Dims& dims = {}, bool keepdim = false) {
  return ReduceNode<MinOp, X>(x, dims, keepdim);
}
template <expression X> auto any(const X& x, const Dims& dims = {}, bool keepdim = false) {
  return ReduceNode<AnyOp, X>(x, dims, keepdim);
}
template <expression X> auto all(const X& x, const Dims& dims = {}, bool keepdim = false) {
  return ReduceNode<AllOp, X>(x, dims, keepdim);
}
/// Index of the maximum over the flattened input (a rank-0 int64 result).
template <expression X> auto argmax(const X& x) { return ArgReduceNode<ArgMaxOp, X>(x, -1, false); }
/// Index of the maximum along `dim`. **Errors:** IndexError, ShapeError for a zero-size dim.
template <expression X> auto argmax(const X& x, int64_t dim, bool keepdim = false) {
  return ArgReduceNode<ArgMaxOp, X>(x, x.shape().size() ? wrap_dim(dim, x.shape().size(), "argmax") : 0, keepdim);
}
template <expression X> auto argmin(const X& x) { return ArgReduceNode<ArgMinOp, X>(x, -1, false); }
template <expression X> auto argmin(const X& x, int64_t dim, bool keepdim = false) {
  return ArgReduceNode<ArgMinOp, X>(x, x.shape().size() ? wrap_dim(dim, x.shape().size(), "argmin") : 0, keepdim);
}
/// exp(x - max) / Σ exp(x - max) along `dim`. Integer inputs give float32.
template <expression X> auto softmax(const X& x, int64_t dim) { return SoftmaxNode<X, false>(x, dim); }
/// (x - max) - log Σ exp(x - max) along `dim`.
template <expression X> auto log_softmax(const X& x, int64_t dim) { return SoftmaxNode<X, true>(x, dim); }

namespace ops::detail {
/// The StableHLO of softmax (`log` false: exp(x - max) / Σ exp(x - max)) or log_softmax (`log`
/// true: (x - max) - log Σ exp(x - max)) of floating `x` along `axis`, in x's dtype: the one
/// lowering of the softmax expression nodes (device/lower.hpp), the library's log_softmax and
/// losses (ops/loss.hpp) and model graphs' aten::softmax (jit/lower.hpp). A template over the
/// builder (`b.reduce`, `b.exp`, ...), so ops/ does not include device/.
template <class B, class V>
V lower_softmax(B& b, const V& x, int64_t axis, bool log) {
  using RO = reduce_op_t<B>;
  std::vector<int64_t> keep;
  for (int64_t d = 0; d < static_cast<int64_t>(x.dims.size()); ++d)
    if (d != axis) keep.push_back(d);
  const V mx = b.reduce(x, b.constant(-std::numeric_limits<double>::infinity(), x.dtype), RO::Max, {axis});
  const V z = b.subtract(x, b.broadcast_in_dim(mx, x.dims, keep));
  const V ez = b.exp(z);
  const V s = b.reduce(ez, b.constant(0.0, x.dtype), RO::Add, {axis});
  return log ? b.subtract(z, b.broadcast_in_dim(b.log(s), x.dims, keep)) : b.divide(ez, b.broadcast_in_dim(s, x.dims, keep));
}
}  // namespace ops::detail

}  // namespace torchtpu
