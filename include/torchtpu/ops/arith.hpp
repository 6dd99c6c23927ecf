// torchtpu/ops/arith.hpp — elementwise binary arithmetic: add, sub, mul, div, floor_divide,
// remainder, pow, minimum, maximum (NumPy broadcasting, PyTorch type promotion).
#pragma once
#include <cmath>        // std::pow, std::fmod, std::floor
#include <cstdint>      // int64_t, int32_t
#include <limits>       // std::numeric_limits (lowest int32 / int64)
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <type_traits>  // std::is_integral_v

#include "../core/errors.hpp"  // ValueError
#include "traits.hpp"          // make_map, same_type_policy
#include "../fuse/vecmath.hpp"  // vector forms used by the `simd` members

namespace torchtpu {

namespace detail {
/// StableHLO lowering of an integer divisor (floor_divide, remainder): `d` with 1 where it is 0
/// or where `a` is the dtype's minimum and `d` is -1, so the program never divides in StableHLO's
/// implementation-defined cases; a zero divisor is reported by a run-time check (the cpu's
/// ValueError "<op>: integer division by zero", thrown after the program ran).
template <class B, class V> V lower_safe_divisor(B& b, const V& a, const V& d, std::string_view op) {
  const V by_zero = b.compare("EQ", d, b.constant_int(0, d.dtype, d.dims));
  b.runtime_check(by_zero, std::string(op) + ": integer division by zero");
  V replace = by_zero;
  if (d.dtype == ScalarType::Int32 || d.dtype == ScalarType::Int64) {
    const int64_t lowest = d.dtype == ScalarType::Int32 ? int64_t(std::numeric_limits<int32_t>::min())
                                                         : std::numeric_limits<int64_t>::min();
    const V overflow = b.binary("and", b.compare("EQ", a, b.constant_int(lowest, a.dtype, a.dims)),
                                b.compare("EQ", d, b.constant_int(-1, d.dtype, d.dims)));
    replace = b.binary("or", replace, overflow);
  }
  return b.select(replace, b.constant_int(1, d.dtype, d.dims), d);
}
/// StableHLO: `r != 0 && (r < 0) != (d < 0)` (a truncated remainder that needs the floor fix).
template <class B, class V> V lower_signs_differ(B& b, const V& r, const V& d) {
  const V zero = b.constant(0, r.dtype, r.dims);
  const V differ = b.compare("NE", b.compare("LT", r, zero), b.compare("LT", d, zero));
  return b.binary("and", b.compare("NE", r, zero), differ);
}
}  // namespace detail

/// Elementwise sum with broadcasting. **Dtypes:** all; promoted (core/dtype.hpp). Signed
/// integers wrap around on overflow (two's complement, as torch; never undefined): so do
/// sub, mul, pow, neg and abs.
struct AddOp : same_type_policy {
  ///@{
  /// Names: `add`, TorchScript `aten::add`, StableHLO `stablehlo.add`.
  static constexpr std::string_view name = "add", aten = "aten::add", hlo = "stablehlo.add";
  ///@}
  /// CPU kernel: the op on 2 values of the compute type.
  template <class M> constexpr M operator()(M a, M b) const { return detail::wrap_add(a, b); }
  // StableHLO lowering (device/lower.hpp): operands already in the compute dtype, broadcast.
  /// StableHLO lowering hook (device/lower.hpp): emits the op on operands `x` into builder `b`.
  template <class B, class V> V lower(B& b, const V* x) const {
    return b.binary(x[0].dtype == ScalarType::Bool ? "or" : "add", x[0], x[1]);
  }
  /// Vector form of `operator()` for the CPU engine (fuse/vecmath.hpp).
  template <class V> TORCHTPU_VEC V simd(V a, V b) const { return a + b; }
};
/// Elementwise difference. **Dtypes:** all but bool (as in PyTorch).
struct SubOp : same_type_policy {
  ///@{
  /// Names: `sub`, TorchScript `aten::sub`, StableHLO `stablehlo.subtract`.
  static constexpr std::string_view name = "sub", aten = "aten::sub", hlo = "stablehlo.subtract";
  ///@}
  /// CPU kernel: the op on 2 values of the compute type.
  template <class M> constexpr M operator()(M a, M b) const { return detail::wrap_sub(a, b); }
  /// Vector form of `operator()` for the CPU engine (fuse/vecmath.hpp).
  template <class V> TORCHTPU_VEC V simd(V a, V b) const { return a - b; }
};
/// Elementwise product.
struct MulOp : same_type_policy {
  ///@{
  /// Names: `mul`, TorchScript `aten::mul`, StableHLO `stablehlo.multiply`.
  static constexpr std::string_view name = "mul", aten = "aten::mul", hlo = "stablehlo.multiply";
  ///@}
  /// CPU kernel: the op on 2 values of the compute type.
  template <class M> constexpr M operator()(M a, M b) const {
    if constexpr (std::same_as<M, bool>) return a && b;
    else return detail::wrap_mul(a, b);
  }
  // StableHLO lowering (device/lower.hpp): operands already in the compute dtype, broadcast.
  /// StableHLO lowering hook (device/lower.hpp): emits the op on operands `x` into builder `b`.
  template <class B, class V> V lower(B& b, const V* x) const {
    return b.binary(x[0].dtype == ScalarType::Bool ? "and" : "multiply", x[0], x[1]);
  }
  /// Vector form of `operator()` for the CPU engine (fuse/vecmath.hpp).
  template <class V> TORCHTPU_VEC V simd(V a, V b) const { return a * b; }
};
/// True division: integer and bool operands give float32 (PyTorch's `/`).
struct DivOp : floating_policy {
  ///@{
  /// Names: `div`, TorchScript `aten::div`, StableHLO `stablehlo.divide`.
  static constexpr std::string_view name = "div", aten = "aten::div", hlo = "stablehlo.divide";
  ///@}
  /// CPU kernel: the op on 2 values of the compute type.
  template <class M> constexpr M operator()(M a, M b) const { return a / b; }
  /// Vector form of `operator()` for the CPU engine (fuse/vecmath.hpp).
  template <class V> TORCHTPU_VEC V simd(V a, V b) const { return a / b; }
};
/// Division rounded toward negative infinity (Python's `//`). Signed integers: MIN // -1 wraps
/// to MIN (two's complement, as NumPy), never a hardware trap; the same on every device.
/// **Errors:** ValueError "floor_divide: integer division by zero" ("ZeroDivisionError" in
/// PyTorch); on PJRT devices too, raised when the program runs (at the flush, in fused mode).
struct FloorDivideOp : same_type_policy {
  ///@{
  /// Names: `floor_divide`, TorchScript `aten::floor_divide`, StableHLO ``.
  static constexpr std::string_view name = "floor_divide", aten = "aten::floor_divide", hlo = "";
  ///@}
  /// CPU kernel: the op on 2 values of the compute type.
  template <class M> M operator()(M a, M b) const {
    if constexpr (std::is_floating_point_v<M>) {
      return std::floor(a / b);
    } else {
      if (b == 0) throw ValueError("floor_divide: integer division by zero");
      if constexpr (std::is_signed_v<M>)
        if (b == M(-1)) return detail::wrap_neg(a);  // MIN / -1 wraps to MIN (no trap)
      M q = M(a / b);
      if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
      return q;
    }
  }
  // Lowering: floor(a / b) for floats. Integers never reach StableHLO's implementation-defined
  // cases (x / 0, MIN / -1): the divisor is replaced by 1 there (MIN / 1 is the wrapped MIN / -1,
  // as on the cpu), and a division by zero is a run-time check that throws the cpu's error.
  // The truncated quotient is then lowered by one where the remainder is nonzero and its sign
  // differs from the divisor's (signed dtypes only).
  /// StableHLO lowering hook (device/lower.hpp): emits the op on operands `x` into builder `b`.
  template <class B, class V> V lower(B& b, const V* x) const {
    if (is_floating(x[0].dtype)) return b.unary("floor", b.divide(x[0], x[1]));
    const V d = detail::lower_safe_divisor(b, x[0], x[1], "floor_divide");
    const V q = b.divide(x[0], d);
    if (x[0].dtype == ScalarType::UInt8) return q;
    const V r = b.subtract(x[0], b.multiply(q, d));
    return b.subtract(q, b.select(detail::lower_signs_differ(b, r, d), b.constant_int(1, q.dtype, q.dims),
                                  b.constant_int(0, q.dtype, q.dims)));
  }
};
/// Remainder with the sign of the divisor (Python's `%`, `torch.remainder`). MIN % -1 is 0.
/// **Errors:** ValueError "remainder: integer division by zero", on every device (as floor_divide).
struct RemainderOp : same_type_policy {
  ///@{
  /// Names: `remainder`, TorchScript `aten::remainder`, StableHLO `stablehlo.remainder`.
  static constexpr std::string_view name = "remainder", aten = "aten::remainder", hlo = "stablehlo.remainder";
  ///@}
  /// CPU kernel: the op on 2 values of the compute type.
  template <class M> M operator()(M a, M b) const {
    if constexpr (std::is_floating_point_v<M>) {
      M r = std::fmod(a, b);
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    } else {
      if (b == 0) throw ValueError("remainder: integer division by zero");
      if constexpr (std::is_signed_v<M>)
        if (b == M(-1)) return M(0);  // MIN % -1 would trap
      M r = M(a % b);
      if (r != 0 && ((r < 0) != (b < 0))) r = M(r + b);
      return r;
    }
  }
  // Lowering: stablehlo.remainder has the dividend's sign; add the divisor once where a nonzero
  // remainder's sign differs from it. Integer divisors go through the same safe divisor and
  // division-by-zero check as floor_divide (MIN % 1 = 0, the cpu's MIN % -1).
  /// StableHLO lowering hook (device/lower.hpp): emits the op on operands `x` into builder `b`.
  template <class B, class V> V lower(B& b, const V* x) const {
    const bool integer = !is_floating(x[0].dtype);
    const V d = integer ? detail::lower_safe_divisor(b, x[0], x[1], "remainder") : x[1];
    const V r = b.binary("remainder", x[0], d);
    if (x[0].dtype == ScalarType::UInt8) return r;
    return b.select(detail::lower_signs_differ(b, r, d), b.add(r, d), r);
  }
};
/// `a` to the power `b`. Integer bases with integer exponents stay integers and wrap on
/// overflow; a negative integer exponent gives 1 for base 1, ±1 for base -1 (by the exponent's
/// parity) and 0 otherwise (as torch's tensor pow), on every device.
struct PowOp : same_type_policy {
  ///@{
  /// Names: `pow`, TorchScript `aten::pow`, StableHLO `stablehlo.power`.
  static constexpr std::string_view name = "pow", aten = "aten::pow", hlo = "stablehlo.power";
  ///@}
  /// Per-element cost in additions (fuse/: region_cost sizes the threads' grain).
  static constexpr int cost = 8;  // per element, in additions (fuse: region_cost)
  /// CPU kernel: the op on 2 values of the compute type.
  template <class M> M operator()(M a, M b) const {
    if constexpr (std::is_floating_point_v<M>) {
      return std::pow(a, b);
    } else {
      if (b < 0) return M(a == 1 ? 1 : (a == -1 ? ((b % 2) ? -1 : 1) : 0));
      // square-and-multiply; the base is squared only while bits remain, so a result that
      // fits never overflows on the way (pow(65536, 1)), and one that does not wraps
      M r = 1, base = a;
      for (auto e = b; e > 0; e /= 2) {
        if (e & 1) r = detail::wrap_mul(r, base);
        if (e > 1) base = detail::wrap_mul(base, base);
      }
      return r;
    }
  }
  // Lowering: stablehlo.power for floats. HLO leaves integer powers with a negative exponent
  // undefined, so they are lowered to the cpu's values (1 for base 1, ±1 for base -1 by the
  // exponent's parity, else 0) and the power sees only exponents >= 0.
  /// StableHLO lowering hook (device/lower.hpp): emits the op on operands `x` into builder `b`.
  template <class B, class V> V lower(B& b, const V* x) const {
    if (is_floating(x[0].dtype) || x[0].dtype == ScalarType::UInt8 || x[0].dtype == ScalarType::Bool)
      return b.binary("power", x[0], x[1]);
    auto c = [&](int64_t v) { return b.constant_int(v, x[0].dtype, x[0].dims); };
    const V negative = b.compare("LT", x[1], c(0));
    const V p = b.binary("power", x[0], b.maximum(x[1], c(0)));
    const V odd = b.compare("NE", b.binary("remainder", x[1], c(2)), c(0));
    const V minus_one_power = b.select(odd, c(-1), c(1));
    const V special = b.select(b.compare("EQ", x[0], c(1)), c(1),
                               b.select(b.compare("EQ", x[0], c(-1)), minus_one_power, c(0)));
    return b.select(negative, special, p);
  }
};
/// Elementwise minimum; NaN propagates.
struct MinimumOp : same_type_policy {
  ///@{
  /// Names: `minimum`, TorchScript `aten::minimum`, StableHLO `stablehlo.minimum`.
  static constexpr std::string_view name = "minimum", aten = "aten::minimum", hlo = "stablehlo.minimum";
  ///@}
  /// CPU kernel: the op on 2 values of the compute type.
  template <class M> constexpr M operator()(M a, M b) const {
    if (detail::is_nan(a)) return a;
    if (detail::is_nan(b)) return b;
    return b < a ? b : a;
  }
  /// Vector form of `operator()` for the CPU engine (fuse/vecmath.hpp).
  template <class V> TORCHTPU_VEC V simd(V a, V b) const { return vminimum(a, b); }
};
/// Elementwise maximum; NaN propagates.
struct MaximumOp : same_type_policy {
  ///@{
  /// Names: `maximum`, TorchScript `aten::maximum`, StableHLO `stablehlo.maximum`.
  static constexpr std::string_view name = "maximum", aten = "aten::maximum", hlo = "stablehlo.maximum";
  ///@}
  /// CPU kernel: the op on 2 values of the compute type.
  template <class M> constexpr M operator()(M a, M b) const {
    if (detail::is_nan(a)) return a;
    if (detail::is_nan(b)) return b;
    return a < b ? b : a;
  }
  /// Vector form of `operator()` for the CPU engine (fuse/vecmath.hpp).
  template <class V> TORCHTPU_VEC V simd(V a, V b) const { return vmaximum(a, b); }
};

template <class A, class B>
  requires binary_operands<bare<A>, bare<B>>
auto add(A&& a, B&& b) { return make_map(AddOp{}, std::forward<A>(a), std::forward<B>(b)); }
template <class A, class B>
  requires binary_operands<bare<A>, bare<B>>
auto sub(A&& a, B&& b) { return make_map(SubOp{}, std::forward<A>(a), std::forward<B>(b)); }
template <class A, class B>
  requires binary_operands<bare<A>, bare<B>>
auto mul(A&& a, B&& b) { return make_map(MulOp{}, std::forward<A>(a), std::forward<B>(b)); }
template <class A, class B>
  requires binary_operands<bare<A>, bare<B>>
auto div(A&& a, B&& b) { return make_map(DivOp{}, std::forward<A>(a), std::forward<B>(b)); }
template <class A, class B>
  requires binary_operands<bare<A>, bare<B>>
auto floor_divide(A&& a, B&& b) { return make_map(FloorDivideOp{}, std::forward<A>(a), std::forward<B>(b)); }
template <class A, class B>
  requires binary_operands<bare<A>, bare<B>>
auto remainder(A&& a, B&& b) { return make_map(RemainderOp{}, std::forward<A>(a), std::forward<B>(b)); }
/// `pow(a, b)`. **Errors:** ValueError for an integer tensor `a` and a negative integer number
/// `b`, as torch ("Integers to negative integer powers are not allowed."); a tensor exponent
/// with negative elements gives 0 there (1 and -1 bases excepted), as torch does too.
template <class A, class B>
  requires binary_operands<bare<A>, bare<B>>
auto pow(A&& a, B&& b) {
  if constexpr (std::is_integral_v<bare<B>> && !std::same_as<bare<B>, bool>) {
    if constexpr (requires { typename bare<A>::value_type; }) {
      if constexpr (integral_element<typename bare<A>::value_type>) {
        if (b < 0)
          throw ValueError("pow: integers to negative integer powers are not allowed (a " +
                           std::string(dtype_name(dtype_of<typename bare<A>::value_type>())) +
                           " tensor to the power " + std::to_string(b) + "; use a floating-point base)");
      }
    }
  }
  return make_map(PowOp{}, std::forward<A>(a), std::forward<B>(b));
}
template <class A, class B>
  requires binary_operands<bare<A>, bare<B>>
auto minimum(A&& a, B&& b) { return make_map(MinimumOp{}, std::forward<A>(a), std::forward<B>(b)); }
template <class A, class B>
  requires binary_operands<bare<A>, bare<B>>
auto maximum(A&& a, B&& b) { return make_map(MaximumOp{}, std::forward<A>(a), std::forward<B>(b)); }

}  // namespace torchtpu
