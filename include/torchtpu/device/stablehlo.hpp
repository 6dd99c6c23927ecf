// torchtpu/device/stablehlo.hpp — a small non-template builder that emits one StableHLO module
// (`func.func public @main`) as MLIR text; the lowering target of the expression templates.
//
// Every method checks shapes and dtypes as StableHLO would and infers the result type, so a
// program that builds is well-typed; errors are thrown at build time with the op named.
// Syntax per op is chosen to be accepted by real XLA (PJRT "mlir" format): jax's pretty forms
// for elementwise, compare, select, convert, broadcast_in_dim, reshape, transpose, dot_general,
// reduce, iota, concatenate, pad, clamp and constant; the generic form for slice,
// reduce_window, convolution and chlo.erf. docs/stablehlo-subset.md lists the exact text.
#pragma once
#include <atomic>       // std::atomic (builder ids)
#include <cmath>        // std::isnan, std::isinf
#include <cstdint>      // int64_t
#include <cstdio>       // std::snprintf
#include <initializer_list> // std::initializer_list
#include <limits>       // std::numeric_limits
#include <optional>     // std::optional
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::pair
#include <vector>       // std::vector

#include "../core/bfloat16.hpp"  // bfloat16 (rounding constants to bf16)
#include "../core/dtype.hpp"     // ScalarType, dtype_name, is_floating
#include "../core/errors.hpp"    // ShapeError, TypeError, ValueError
#include "../core/half.hpp"      // half (rounding constants to f16)
#include "modes.hpp"             // Precision

namespace torchtpu::stablehlo {

/// An SSA value of the function being built: its id (`%v<id>`), element type and shape.
/// Values are plain data; they are only meaningful for the Builder that made them.
struct Value {
  /// SSA number (`%id`); -1 for an invalid value.
  int id = -1;
  uint64_t builder = 0;  ///< which Builder made it (values of other builders are rejected)
  /// Element type.
  ScalarType dtype = ScalarType::Float;
  /// Sizes of each dim.
  std::vector<int64_t> dims;
  /// True once the value was produced by a builder.
  bool valid() const noexcept { return id >= 0; }
  /// Number of dims.
  int64_t rank() const noexcept { return static_cast<int64_t>(dims.size()); }
  /// Element count. Never overflows: `Builder` rejects shapes whose size overflows int64.
  int64_t numel() const noexcept {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }
};

// Precision (dot_general operand precision) is declared in device/modes.hpp.
enum class CompareDirection { EQ, NE, LT, LE, GT, GE };
enum class CompareType { Float, TotalOrder, Signed, Unsigned };
/// Reduction bodies: the binary op applied by reduce / reduce_window.
enum class ReduceOp { Add, Max, Min, Mul, And, Or };

/// dot_general dimension numbers (lists of axes of each operand).
struct DotDims {
  ///@{
  /// Batch and contracting dims of each operand (`dot_general` dimension numbers).
  std::vector<int64_t> lhs_batch, rhs_batch, lhs_contract, rhs_contract;
  ///@}
};

/// Convolution configuration. Dimension numbers default to NCHW input, OIHW kernel, NCHW
/// output for any spatial rank (b=0, f=1, spatial 2..). Empty vectors mean "all 1" (strides,
/// dilations) or "all 0" (padding).
struct ConvOptions {
  /// Stride of the window per spatial dim.
  std::vector<int64_t> window_strides;
  std::vector<std::pair<int64_t, int64_t>> padding;  ///< (low, high) per spatial dim
  ///@{
  /// Input (lhs) and kernel (rhs) dilation per spatial dim.
  std::vector<int64_t> lhs_dilation, rhs_dilation;
  ///@}
  /// Number of feature groups (1: a dense convolution).
  int64_t feature_group_count = 1;
  /// Matrix-unit precision of the products.
  Precision precision = Precision::Default;
  std::optional<ScalarType> result_type;  ///< default: the lhs dtype
  // Dimension numbers; unset (-1 / empty) means the NCHW/OIHW default.
  ///@{
  /// Batch and feature dims of the input.
  int64_t input_batch_dim = -1, input_feature_dim = -1;
  ///@}
  /// Spatial dims of the input.
  std::vector<int64_t> input_spatial_dims;
  ///@{
  /// Output- and input-feature dims of the kernel.
  int64_t kernel_output_feature_dim = -1, kernel_input_feature_dim = -1;
  ///@}
  /// Spatial dims of the kernel.
  std::vector<int64_t> kernel_spatial_dims;
  ///@{
  /// Batch and feature dims of the output.
  int64_t output_batch_dim = -1, output_feature_dim = -1;
  ///@}
  /// Spatial dims of the output.
  std::vector<int64_t> output_spatial_dims;
};

/// MLIR element type spelling: f32, bf16, f16, f64, i1, ui8, i32, i64.
constexpr std::string_view element_type_name(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return "i1";
    case ScalarType::UInt8: return "ui8";
    case ScalarType::Int32: return "i32";
    case ScalarType::Int64: return "i64";
    case ScalarType::Half: return "f16";
    case ScalarType::BFloat16: return "bf16";
    case ScalarType::Float: return "f32";
    case ScalarType::Double: return "f64";
  }
  return "?";
}

/// `tensor<2x3xf32>`, or `tensor<f32>` for rank 0.
inline std::string tensor_type(ScalarType t, std::span<const int64_t> dims) {
  std::string s = "tensor<";
  for (int64_t d : dims) s += std::to_string(d) + "x";
  s += element_type_name(t);
  s += ">";
  return s;
}
inline std::string tensor_type(const Value& v) { return tensor_type(v.dtype, v.dims); }

/// Shape text for error messages: `[2, 3]`.
inline std::string shape_str(std::span<const int64_t> dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) { s += i ? ", " : ""; s += std::to_string(dims[i]); }
  return s + "]";
}

/// The smallest and largest value of integer dtype `t` (bool: 0 and 1).
constexpr std::pair<int64_t, int64_t> int_range(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return {0, 1};
    case ScalarType::UInt8: return {0, 255};
    case ScalarType::Int32: return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
    default: return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  }
}

/// `v` converted to integer dtype `t` as XLA converts floats to integers: truncated toward
/// zero and saturated to the dtype's range; NaN gives 0. Never an undefined cast.
inline int64_t saturate_to_int(double v, ScalarType t) {
  if (std::isnan(v)) return 0;
  const auto [lo, hi] = int_range(t);
  // double(lo) is exact (-2^k); double(hi) rounds up to 2^k for int64, so `>=` saturates there.
  if (v <= static_cast<double>(lo)) return lo;
  if (v >= static_cast<double>(hi)) return hi;
  return static_cast<int64_t>(v);
}

/// `v` converted to integer dtype `t` as C++ (and torch) convert integers: two's-complement
/// wrap-around to the dtype's width; bool is `v != 0`.
constexpr int64_t wrap_to_int(int64_t v, ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return v != 0;
    case ScalarType::UInt8: return static_cast<uint8_t>(v);
    case ScalarType::Int32: return static_cast<int32_t>(v);
    default: return v;
  }
}

/// Literal text of an integer element of integer dtype `t` (`v` already in its range).
inline std::string int_literal(int64_t v, ScalarType t) {
  if (t == ScalarType::Bool) return v != 0 ? "true" : "false";
  return std::to_string(v);
}

/// Literal text of one element of type `t` (decimal that round-trips, hex for inf/nan).
/// Integer dtypes take `v` truncated and saturated to their range (`saturate_to_int`).
inline std::string literal(double v, ScalarType t) {
  char buf[64];
  switch (t) {
    case ScalarType::Bool: return v != 0 ? "true" : "false";
    case ScalarType::UInt8:
    case ScalarType::Int32:
    case ScalarType::Int64:
      return int_literal(saturate_to_int(v, t), t);
    default: break;
  }
  if (std::isnan(v) || std::isinf(v)) {
    const bool neg = !std::isnan(v) && v < 0;
    switch (t) {
      case ScalarType::Half: return std::isnan(v) ? "0x7E00" : neg ? "0xFC00" : "0x7C00";
      case ScalarType::BFloat16: return std::isnan(v) ? "0x7FC0" : neg ? "0xFF80" : "0x7F80";
      case ScalarType::Double:
        return std::isnan(v) ? "0x7FF8000000000000" : neg ? "0xFFF0000000000000" : "0x7FF0000000000000";
      default: return std::isnan(v) ? "0x7FC00000" : neg ? "0xFF800000" : "0x7F800000";
    }
  }
  double r = v;
  if (t == ScalarType::Float) r = static_cast<float>(v);
  if (t == ScalarType::BFloat16) r = static_cast<float>(bfloat16(static_cast<float>(v)));
  if (t == ScalarType::Half) r = static_cast<float>(half(static_cast<float>(v)));
  std::snprintf(buf, sizeof(buf), t == ScalarType::Double ? "%.17e" : "%.9e", r);
  return buf;
}

/// Throws ShapeError naming `op` if an array of `dims` (elements of up to 8 bytes) has more
/// bytes than int64 counts.
inline void check_size(std::string_view op, std::span<const int64_t> dims) {
  for (int64_t d : dims)
    if (d < 0) throw ShapeError(std::string(op) + ": negative dimension in shape " + shape_str(dims));
  for (int64_t d : dims)
    if (d == 0) return;
  int64_t n = 8;
  for (int64_t d : dims)
    if (__builtin_mul_overflow(n, d, &n))
      throw ShapeError(std::string(op) + ": the size of shape " + shape_str(dims) + " overflows int64");
}
constexpr std::string_view precision_name(Precision p) {
  return p == Precision::Default ? "DEFAULT" : p == Precision::High ? "HIGH" : "HIGHEST";
}

/// Builds one `func.func public @main` inside a module. Typical use:
/// `Builder b; auto x = b.parameter(ScalarType::Float, {2, 3}); auto y = b.exp(x);
///  b.set_results({y}); std::string text = b.str();`
///
/// **Errors:** `ShapeError`/`TypeError`/`ValueError` naming the op when operands do not fit;
/// `ValueError` for values from another builder (unknown ids).
class Builder {
 public:
  /// A new parameter of `@main` (parameters are numbered in call order).
  Value parameter(ScalarType dtype, std::vector<int64_t> dims) {
    for (int64_t d : dims)
      if (d < 0) throw ShapeError("parameter: negative dimension in " + shape_str(dims));
    Value v = make(dtype, std::move(dims));
    params_.push_back(v);
    return v;
  }

  /// A splat constant: every element equals `value` (converted to `dtype`).
  Value constant(double value, ScalarType dtype, std::vector<int64_t> dims = {}) {
    Value v = make(dtype, std::move(dims));
    emit(v, "stablehlo.constant dense<" + literal(value, dtype) + "> : " + tensor_type(v));
    return v;
  }

  /// A splat integer constant, exact for every int64 (no trip through double): `value`
  /// wrapped to an integer `dtype` (as C++ converts), rounded to a floating one.
  Value constant_int(int64_t value, ScalarType dtype, std::vector<int64_t> dims = {}) {
    if (is_floating(dtype)) return constant(static_cast<double>(value), dtype, std::move(dims));
    Value v = make(dtype, std::move(dims));
    emit(v, "stablehlo.constant dense<" + int_literal(wrap_to_int(value, dtype), dtype) + "> : " + tensor_type(v));
    return v;
  }

  /// A dense constant from row-major `data` (product(dims) values).
  Value constant_data(ScalarType dtype, std::vector<int64_t> dims, std::span<const double> data) {
    Value v = make(dtype, std::move(dims));
    if (static_cast<int64_t>(data.size()) != v.numel())
      throw ShapeError("constant: " + std::to_string(data.size()) + " values for shape " +
                       shape_str(v.dims));
    size_t pos = 0;
    std::string body = nested_literal(data, v.dtype, v.dims, 0, pos);
    emit(v, "stablehlo.constant dense<" + body + "> : " + tensor_type(v));
    return v;
  }

  /// Elementwise unary op by StableHLO name: negate, abs, sign, not, exponential,
  /// exponential_minus_one, log, log_plus_one, sqrt, rsqrt, cbrt, tanh, logistic, sine, cosine,
  /// tan, floor, ceil, round_nearest_even, round_nearest_afz; and "erf" (emitted as chlo.erf).
  Value unary(std::string_view op, const Value& x) {
    check(x, op);
    const bool float_only = op != "negate" && op != "abs" && op != "sign" && op != "not";
    if (!is_known_unary(op)) throw ValueError("unary: unknown StableHLO op '" + std::string(op) + "'");
    if (float_only && !is_floating(x.dtype))
      throw TypeError(std::string(op) + ": needs a floating dtype, got " + std::string(dtype_name(x.dtype)));
    if (op == "not" && is_floating(x.dtype))
      throw TypeError("not: needs a bool or integer dtype, got " + std::string(dtype_name(x.dtype)));
    if ((op == "negate" || op == "abs" || op == "sign") &&
        (x.dtype == ScalarType::Bool || x.dtype == ScalarType::UInt8))
      throw TypeError(std::string(op) + ": needs a signed dtype, got " + std::string(dtype_name(x.dtype)));
    Value r = make(x.dtype, x.dims);
    if (op == "erf") {
      emit(r, "\"chlo.erf\"(" + name(x) + ") : (" + tensor_type(x) + ") -> " + tensor_type(r));
    } else {
      emit(r, "stablehlo." + std::string(op) + " " + name(x) + " : " + tensor_type(r));
    }
    return r;
  }

  /// Elementwise binary op by StableHLO name: add, subtract, multiply, divide, remainder,
  /// maximum, minimum, power, atan2, and, or, xor. Operands must have equal dtype and shape
  /// (use broadcast_in_dim first).
  Value binary(std::string_view op, const Value& a, const Value& b) {
    check(a, op);
    check(b, op);
    static constexpr std::string_view kArith[] = {"add", "subtract", "multiply", "divide",
                                                  "remainder", "maximum", "minimum", "power",
                                                  "atan2"};
    static constexpr std::string_view kLogic[] = {"and", "or", "xor"};
    bool arith = false, logic = false;
    for (auto n : kArith) arith |= n == op;
    for (auto n : kLogic) logic |= n == op;
    if (!arith && !logic) throw ValueError("binary: unknown StableHLO op '" + std::string(op) + "'");
    same_type(op, a, b);
    if (logic && is_floating(a.dtype))
      throw TypeError(std::string(op) + ": needs bool or integer operands, got " + std::string(dtype_name(a.dtype)));
    if (arith && a.dtype == ScalarType::Bool && op != "maximum" && op != "minimum")
      throw TypeError(std::string(op) + ": bool operands are not supported");
    if (op == "atan2" && !is_floating(a.dtype)) throw TypeError("atan2: needs floating operands");
    Value r = make(a.dtype, a.dims);
    emit(r, "stablehlo." + std::string(op) + " " + name(a) + ", " + name(b) + " : " + tensor_type(r));
    return r;
  }

  /// Elementwise `stablehlo.add` (operands of equal shape and dtype).
  Value add(const Value& a, const Value& b) { return binary("add", a, b); }
  /// Elementwise `stablehlo.subtract`.
  Value subtract(const Value& a, const Value& b) { return binary("subtract", a, b); }
  /// Elementwise `stablehlo.multiply`.
  Value multiply(const Value& a, const Value& b) { return binary("multiply", a, b); }
  /// Elementwise `stablehlo.divide`.
  Value divide(const Value& a, const Value& b) { return binary("divide", a, b); }
  /// Elementwise `stablehlo.maximum`.
  Value maximum(const Value& a, const Value& b) { return binary("maximum", a, b); }
  /// Elementwise `stablehlo.minimum`.
  Value minimum(const Value& a, const Value& b) { return binary("minimum", a, b); }
  /// Elementwise `stablehlo.negate`.
  Value negate(const Value& x) { return unary("negate", x); }
  /// Elementwise `stablehlo.exponential`.
  Value exp(const Value& x) { return unary("exponential", x); }
  /// Elementwise `stablehlo.log`.
  Value log(const Value& x) { return unary("log", x); }
  /// Elementwise `stablehlo.tanh`.
  Value tanh(const Value& x) { return unary("tanh", x); }
  /// Elementwise `chlo.erf`.
  Value erf(const Value& x) { return unary("erf", x); }

  /// Elementwise comparison → i1. `type` defaults to FLOAT / SIGNED / UNSIGNED by dtype.
  Value compare(CompareDirection dir, const Value& a, const Value& b,
                std::optional<CompareType> type = std::nullopt) {
    check(a, "compare");
    check(b, "compare");
    same_type("compare", a, b);
    static constexpr std::string_view kDir[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
    static constexpr std::string_view kType[] = {"FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"};
    CompareType ct = type ? *type
                     : is_floating(a.dtype) ? CompareType::Float
                     : (a.dtype == ScalarType::Bool || a.dtype == ScalarType::UInt8) ? CompareType::Unsigned
                                                                                        : CompareType::Signed;
    Value r = make(ScalarType::Bool, a.dims);
    emit(r, "stablehlo.compare " + std::string(kDir[static_cast<int>(dir)]) + ", " + name(a) + ", " +
                name(b) + ", " + std::string(kType[static_cast<int>(ct)]) + " : (" + tensor_type(a) +
                ", " + tensor_type(b) + ") -> " + tensor_type(r));
    return r;
  }

  /// `compare` by direction name ("EQ", "NE", "LT", "LE", "GT", "GE"), for op lowering hooks
  /// that do not see this header (ops/*.hpp). **Errors:** ValueError for another name.
  Value compare(std::string_view dir, const Value& a, const Value& b) {
    static constexpr std::string_view kDir[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
    for (int i = 0; i < 6; ++i)
      if (dir == kDir[i]) return compare(static_cast<CompareDirection>(i), a, b);
    throw ValueError("compare: unknown direction '" + std::string(dir) + "'");
  }

  /// `pred ? on_true : on_false`; pred is i1 of the same shape, or a scalar i1.
  Value select(const Value& pred, const Value& on_true, const Value& on_false) {
    check(pred, "select");
    check(on_true, "select");
    check(on_false, "select");
    if (pred.dtype != ScalarType::Bool) throw TypeError("select: predicate must be bool");
    same_type("select", on_true, on_false);
    if (pred.rank() != 0 && pred.dims != on_true.dims)
      throw ShapeError("select: predicate shape " + shape_str(pred.dims) + " vs values " +
                       shape_str(on_true.dims));
    Value r = make(on_true.dtype, on_true.dims);
    emit(r, "stablehlo.select " + name(pred) + ", " + name(on_true) + ", " + name(on_false) +
                " : (" + tensor_type(pred) + ", " + tensor_type(on_true) + ", " +
                tensor_type(on_false) + ") -> " + tensor_type(r));
    return r;
  }

  /// Clamp `x` into [lo, hi]; lo and hi are scalars or have x's shape.
  Value clamp(const Value& lo, const Value& x, const Value& hi) {
    check(lo, "clamp");
    check(x, "clamp");
    check(hi, "clamp");
    for (const Value* b : {&lo, &hi}) {
      if (b->dtype != x.dtype) throw TypeError("clamp: bound dtype differs from operand");
      if (b->rank() != 0 && b->dims != x.dims)
        throw ShapeError("clamp: bound shape " + shape_str(b->dims) + " vs operand " + shape_str(x.dims));
    }
    Value r = make(x.dtype, x.dims);
    emit(r, "stablehlo.clamp " + name(lo) + ", " + name(x) + ", " + name(hi) + " : (" +
                tensor_type(lo) + ", " + tensor_type(x) + ", " + tensor_type(hi) + ") -> " + tensor_type(r));
    return r;
  }

  /// Elementwise type conversion (float→int truncates toward zero; →i1 is `!= 0`).
  Value convert(const Value& x, ScalarType to) {
    check(x, "convert");
    Value r = make(to, x.dims);
    emit(r, "stablehlo.convert " + name(x) + " : (" + tensor_type(x) + ") -> " + tensor_type(r));
    return r;
  }

  /// Broadcast `x` to `dims`; operand axis i maps to result axis `broadcast_dims[i]` and must
  /// have size 1 or the result's size there.
  Value broadcast_in_dim(const Value& x, std::vector<int64_t> dims, std::vector<int64_t> broadcast_dims) {
    check(x, "broadcast_in_dim");
    if (static_cast<int64_t>(broadcast_dims.size()) != x.rank())
      throw ShapeError("broadcast_in_dim: " + std::to_string(broadcast_dims.size()) +
                       " broadcast dims for operand " + shape_str(x.dims));
    for (size_t i = 0; i < broadcast_dims.size(); ++i) {
      const int64_t d = broadcast_dims[i];
      if (d < 0 || d >= static_cast<int64_t>(dims.size()) || (i && d <= broadcast_dims[i - 1]) ||
          (x.dims[i] != 1 && x.dims[i] != dims[static_cast<size_t>(d)]))
        throw ShapeError("broadcast_in_dim: cannot broadcast " + shape_str(x.dims) + " to " +
                         shape_str(dims) + " with dims " + shape_str(broadcast_dims));
    }
    Value r = make(x.dtype, std::move(dims));
    emit(r, "stablehlo.broadcast_in_dim " + name(x) + ", dims = " + list(broadcast_dims) + " : (" +
                tensor_type(x) + ") -> " + tensor_type(r));
    return r;
  }

  /// Same elements, new shape (equal element count).
  Value reshape(const Value& x, std::vector<int64_t> dims) {
    check(x, "reshape");
    Value r = make(x.dtype, std::move(dims));
    if (r.numel() != x.numel())
      throw ShapeError("reshape: " + shape_str(x.dims) + " to " + shape_str(r.dims) + " changes the element count");
    emit(r, "stablehlo.reshape " + name(x) + " : (" + tensor_type(x) + ") -> " + tensor_type(r));
    return r;
  }

  /// Result axis i is operand axis `perm[i]`.
  Value transpose(const Value& x, std::vector<int64_t> perm) {
    check(x, "transpose");
    std::vector<int64_t> dims;
    std::vector<bool> seen(x.dims.size(), false);
    if (static_cast<int64_t>(perm.size()) != x.rank())
      throw ShapeError("transpose: permutation " + shape_str(perm) + " for shape " + shape_str(x.dims));
    for (int64_t p : perm) {
      if (p < 0 || p >= x.rank() || seen[static_cast<size_t>(p)])
        throw ShapeError("transpose: invalid permutation " + shape_str(perm));
      seen[static_cast<size_t>(p)] = true;
      dims.push_back(x.dims[static_cast<size_t>(p)]);
    }
    Value r = make(x.dtype, std::move(dims));
    emit(r, "stablehlo.transpose " + name(x) + ", dims = " + list(perm) + " : (" + tensor_type(x) +
                ") -> " + tensor_type(r));
    return r;
  }

  /// `x` with the order of its elements reversed along each of `dims` (`stablehlo.reverse`).
  /// **Errors:** ShapeError for a dim out of range or repeated.
  Value reverse(const Value& x, const std::vector<int64_t>& dims) {
    check(x, "reverse");
    std::vector<bool> seen(x.dims.size(), false);
    for (int64_t d : dims) {
      if (d < 0 || d >= x.rank() || seen[static_cast<size_t>(d)])
        throw ShapeError("reverse: invalid dimensions " + shape_str(dims) + " for shape " + shape_str(x.dims));
      seen[static_cast<size_t>(d)] = true;
    }
    Value r = make(x.dtype, x.dims);
    emit(r, "\"stablehlo.reverse\"(" + name(x) + ") {dimensions = " + array(dims) + "} : (" + tensor_type(x) +
                ") -> " + tensor_type(r));
    return r;
  }

  /// Static slice [start, limit) with `strides` (empty: all 1).
  Value slice(const Value& x, std::vector<int64_t> start, std::vector<int64_t> limit,
              std::vector<int64_t> strides = {}) {
    check(x, "slice");
    if (strides.empty()) strides.assign(x.dims.size(), 1);
    if (static_cast<int64_t>(start.size()) != x.rank() || limit.size() != start.size() ||
        strides.size() != start.size())
      throw ShapeError("slice: index lists do not match the rank of " + shape_str(x.dims));
    std::vector<int64_t> dims;
    for (size_t i = 0; i < start.size(); ++i) {
      if (start[i] < 0 || limit[i] < start[i] || limit[i] > x.dims[i] || strides[i] < 1)
        throw ShapeError("slice: bad range " + std::to_string(start[i]) + ":" + std::to_string(limit[i]) +
                         ":" + std::to_string(strides[i]) + " for axis " + std::to_string(i) + " of " +
                         shape_str(x.dims));
      dims.push_back((limit[i] - start[i] + strides[i] - 1) / strides[i]);
    }
    Value r = make(x.dtype, std::move(dims));
    emit(r, "\"stablehlo.slice\"(" + name(x) + ") {start_indices = " + array(start) +
                ", limit_indices = " + array(limit) + ", strides = " + array(strides) + "} : (" +
                tensor_type(x) + ") -> " + tensor_type(r));
    return r;
  }

  /// Concatenation along `dim`; other axes must match.
  Value concatenate(const std::vector<Value>& xs, int64_t dim) {
    if (xs.empty()) throw ValueError("concatenate: no operands");
    std::vector<int64_t> dims = xs[0].dims;
    if (dim < 0 || dim >= xs[0].rank()) throw ShapeError("concatenate: bad dim " + std::to_string(dim));
    dims[static_cast<size_t>(dim)] = 0;
    std::string ops, types;
    for (size_t i = 0; i < xs.size(); ++i) {
      check(xs[i], "concatenate");
      if (xs[i].dtype != xs[0].dtype || xs[i].rank() != xs[0].rank())
        throw ShapeError("concatenate: operand " + std::to_string(i) + " has another dtype or rank");
      for (size_t a = 0; a < dims.size(); ++a)
        if (static_cast<int64_t>(a) != dim && xs[i].dims[a] != xs[0].dims[a])
          throw ShapeError("concatenate: shapes " + shape_str(xs[0].dims) + " and " +
                           shape_str(xs[i].dims) + " differ outside dim " + std::to_string(dim));
      dims[static_cast<size_t>(dim)] += xs[i].dims[static_cast<size_t>(dim)];
      { ops += i ? ", " : ""; ops += name(xs[i]); }
      { types += i ? ", " : ""; types += tensor_type(xs[i]); }
    }
    Value r = make(xs[0].dtype, std::move(dims));
    emit(r, "stablehlo.concatenate " + ops + ", dim = " + std::to_string(dim) + " : (" + types +
                ") -> " + tensor_type(r));
    return r;
  }

  /// Pads with the scalar `pad_value`: `low`/`high` (may be negative) at each end and
  /// `interior` between elements.
  Value pad(const Value& x, const Value& pad_value, std::vector<int64_t> low, std::vector<int64_t> high,
            std::vector<int64_t> interior = {}) {
    check(x, "pad");
    check(pad_value, "pad");
    if (interior.empty()) interior.assign(x.dims.size(), 0);
    if (pad_value.rank() != 0 || pad_value.dtype != x.dtype)
      throw TypeError("pad: padding value must be a scalar of the operand's dtype");
    if (static_cast<int64_t>(low.size()) != x.rank() || high.size() != low.size() || interior.size() != low.size())
      throw ShapeError("pad: padding lists do not match the rank of " + shape_str(x.dims));
    std::vector<int64_t> dims;
    for (size_t i = 0; i < low.size(); ++i) {
      const int64_t n = x.dims[i];
      const int64_t d = low[i] + high[i] + n + (n > 0 ? (n - 1) * interior[i] : 0);
      if (interior[i] < 0 || d < 0) throw ShapeError("pad: negative result size on axis " + std::to_string(i));
      dims.push_back(d);
    }
    Value r = make(x.dtype, std::move(dims));
    emit(r, "stablehlo.pad " + name(x) + ", " + name(pad_value) + ", low = " + list(low) +
                ", high = " + list(high) + ", interior = " + list(interior) + " : (" + tensor_type(x) +
                ", " + tensor_type(pad_value) + ") -> " + tensor_type(r));
    return r;
  }

  /// 0, 1, 2, ... along `dim` of a new tensor of shape `dims`.
  Value iota(ScalarType dtype, std::vector<int64_t> dims, int64_t dim) {
    if (dim < 0 || dim >= static_cast<int64_t>(dims.size()))
      throw ShapeError("iota: dim " + std::to_string(dim) + " out of range for " + shape_str(dims));
    Value r = make(dtype, std::move(dims));
    emit(r, "stablehlo.iota dim = " + std::to_string(dim) + " : " + tensor_type(r));
    return r;
  }

  /// General contraction. Result axes: batch, lhs free (in order), rhs free (in order).
  /// `result_type` defaults to the operand dtype (e.g. pass Float for bf16 × bf16 → f32).
  Value dot_general(const Value& lhs, const Value& rhs, const DotDims& dn,
                    Precision precision = Precision::Default,
                    std::optional<ScalarType> result_type = std::nullopt);

  /// Reduces `x` over `dims` with `op`, starting from the scalar `init`.
  Value reduce(const Value& x, const Value& init, ReduceOp op, std::vector<int64_t> dims);

  /// Windowed reduction (pooling): window size, stride and (low, high) padding per axis of x.
  Value reduce_window(const Value& x, const Value& init, ReduceOp op, std::vector<int64_t> window,
                      std::vector<int64_t> strides = {},
                      std::vector<std::pair<int64_t, int64_t>> padding = {});

  /// `stablehlo.sort` of `operands` (same shape) along `dim`, stable, ordered by the first
  /// operand in torch's order: ascending (`descending` false) with NaN after every number, or
  /// descending with NaN first (torch.sort's order, aten/src/ATen/native/cpu/SortingKernel.cpp);
  /// the other operands are permuted alike (indices riding along). Returns the sorted operands.
  /// **Errors:** ShapeError for operands of different shapes or `dim` out of range.
  std::vector<Value> sort(const std::vector<Value>& operands, int64_t dim, bool descending);

  /// N-d convolution (cross-correlation, as in PyTorch): NCHW input, OIHW kernel by default.
  Value convolution(const Value& lhs, const Value& rhs, const ConvOptions& opt = {});

  /// Adds a run-time check to the program: where `failed` (bool, any shape) is true anywhere,
  /// the program's results are not to be used and the runtime (device/graph.hpp) throws
  /// `ValueError(message)` after executing it. Used where StableHLO leaves a result
  /// implementation-defined and the cpu reports an error (integer division by zero: XLA gives
  /// -1 for `divide` and the dividend for `remainder`). The checks fold into one scalar i32
  /// (`check_code()`: 0 if all passed, else the largest failed check's `check_message_id`).
  void runtime_check(const Value& failed, std::string_view message);
  /// The combined code of the checks added since the last `take_check_code` (else an invalid Value).
  const Value& check_code() const noexcept { return check_code_; }
  /// Returns `check_code()` and starts a new one (device/graph.hpp: one code per statement).
  Value take_check_code() noexcept {
    Value c = check_code_;
    check_code_ = Value{};
    return c;
  }

  /// Sets `@main`'s results (one or more), in order.
  void set_results(std::vector<Value> results) {
    if (results.empty()) throw ValueError("set_results: @main needs at least one result");
    for (const Value& v : results) check(v, "return");
    results_ = std::move(results);
  }

  /// The module text. **Errors:** `ValueError` if `set_results` was not called.
  std::string str() const {
    if (results_.empty()) throw ValueError("Builder::str: call set_results first");
    std::string s =
        "module @torchtpu attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n"
        "  func.func public @main(";
    for (size_t i = 0; i < params_.size(); ++i)
      { s += i ? ", " : ""; s += name(params_[i]) + ": " + tensor_type(params_[i]); }
    s += ") -> ";
    std::string rtypes, rnames;
    for (size_t i = 0; i < results_.size(); ++i) {
      { rtypes += i ? ", " : ""; rtypes += tensor_type(results_[i]); }
      { rnames += i ? ", " : ""; rnames += name(results_[i]); }
    }
    s += results_.size() == 1 ? rtypes : "(" + rtypes + ")";
    s += " {\n" + body_;
    s += "    return " + rnames + " : " + rtypes + "\n  }\n}\n";
    return s;
  }

  /// The parameters of `main`, in order.
  const std::vector<Value>& parameters() const noexcept { return params_; }
  /// The values `main` returns, in order.
  const std::vector<Value>& results() const noexcept { return results_; }

  /// `%v<id>`, the SSA name of a value.
  static std::string name(const Value& v) { return "%v" + std::to_string(v.id); }

 private:
  Value make(ScalarType dtype, std::vector<int64_t> dims) {
    check_size("StableHLO value", dims);
    Value v;
    v.id = next_id_++;
    v.builder = uid_;
    v.dtype = dtype;
    v.dims = std::move(dims);
    return v;
  }
  void emit(const Value& r, const std::string& rhs) { body_ += "    " + name(r) + " = " + rhs + "\n"; }
  void check(const Value& v, std::string_view op) const {
    if (!v.valid() || v.builder != uid_ || v.id >= next_id_)
      throw ValueError(std::string(op) + ": operand is not a value of this builder");
  }
  static void same_type(std::string_view op, const Value& a, const Value& b) {
    if (a.dtype != b.dtype)
      throw TypeError(std::string(op) + ": dtypes " + std::string(dtype_name(a.dtype)) + " and " +
                      std::string(dtype_name(b.dtype)) + " differ");
    if (a.dims != b.dims)
      throw ShapeError(std::string(op) + ": shapes " + shape_str(a.dims) + " and " + shape_str(b.dims) +
                       " differ (broadcast explicitly with broadcast_in_dim)");
  }
  static bool is_known_unary(std::string_view op) {
    static constexpr std::string_view kOps[] = {
        "negate", "abs", "sign", "not", "exponential", "exponential_minus_one", "log",
        "log_plus_one", "sqrt", "rsqrt", "cbrt", "tanh", "logistic", "sine", "cosine", "tan",
        "floor", "ceil", "round_nearest_even", "round_nearest_afz", "erf"};
    for (auto n : kOps)
      if (n == op) return true;
    return false;
  }
  static std::string list(std::span<const int64_t> xs) { return shape_str(xs); }
  static std::string array(std::span<const int64_t> xs) {
    std::string s = "array<i64";
    for (size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : ": ") + std::to_string(xs[i]);
    return s + ">";
  }
  static std::string nested_literal(std::span<const double> data, ScalarType t,
                                    const std::vector<int64_t>& dims, size_t axis, size_t& pos) {
    if (axis == dims.size()) return literal(data[pos++], t);
    std::string s = "[";
    for (int64_t i = 0; i < dims[axis]; ++i) { s += i ? ", " : ""; s += nested_literal(data, t, dims, axis + 1, pos); }
    return s + "]";
  }
  static std::string reducer_name(ReduceOp op) {
    switch (op) {
      case ReduceOp::Add: return "stablehlo.add";
      case ReduceOp::Max: return "stablehlo.maximum";
      case ReduceOp::Min: return "stablehlo.minimum";
      case ReduceOp::Mul: return "stablehlo.multiply";
      case ReduceOp::And: return "stablehlo.and";
      case ReduceOp::Or: return "stablehlo.or";
    }
    return "?";
  }

  static uint64_t new_uid() {
    static std::atomic<uint64_t> counter{0};
    return ++counter;
  }

  uint64_t uid_ = new_uid();
  int next_id_ = 0;
  std::vector<Value> params_, results_;
  Value check_code_;  // runtime_check's folded i32 (invalid until the first check)
  std::string body_;
};

}  // namespace torchtpu::stablehlo

#define TORCHTPU_STABLEHLO_INTERNAL 1
#include "stablehlo_ops.hpp"  // Builder::dot_general, reduce, reduce_window, convolution, runtime_check
#undef TORCHTPU_STABLEHLO_INTERNAL
