// torchtpu/core/dtype.hpp — element types (`ScalarType`), their traits, and PyTorch's type
// promotion rules (docs/dtypes.md has the table).
#pragma once
#include <concepts>     // std::same_as
#include <cstddef>      // size_t
#include <cstdint>      // int32_t, int64_t, uint8_t
#include <limits>       // std::numeric_limits (float_to_int)
#include <string_view>  // std::string_view
#include <type_traits>  // std::conditional_t, std::make_unsigned_t

#include "bfloat16.hpp"  // bfloat16
#include "errors.hpp"    // TypeError
#include "half.hpp"      // half

namespace torchtpu {

/// Run-time dtype tag. Values follow no external numbering; use `dtype_name` for text.
enum class ScalarType : uint8_t { Bool, UInt8, Int32, Int64, Half, BFloat16, Float, Double };

/// The element types a `Tensor<T>` may hold.
template <class T>
concept element = std::same_as<T, float> || std::same_as<T, double> ||
                  std::same_as<T, bfloat16> || std::same_as<T, half> ||
                  std::same_as<T, int32_t> || std::same_as<T, int64_t> ||
                  std::same_as<T, bool> || std::same_as<T, uint8_t>;

template <class T>
concept floating_element = std::same_as<T, float> || std::same_as<T, double> ||
                           std::same_as<T, bfloat16> || std::same_as<T, half>;

template <class T>
concept integral_element = std::same_as<T, int32_t> || std::same_as<T, int64_t> ||
                           std::same_as<T, uint8_t>;

/// Element types `matmul` accepts (bool is excluded, as in PyTorch on CPU for matmul).
template <class T>
concept matmul_element = element<T> && !std::same_as<T, bool>;

template <element T>
constexpr ScalarType dtype_of() {
  if constexpr (std::same_as<T, bool>) return ScalarType::Bool;
  else if constexpr (std::same_as<T, uint8_t>) return ScalarType::UInt8;
  else if constexpr (std::same_as<T, int32_t>) return ScalarType::Int32;
  else if constexpr (std::same_as<T, int64_t>) return ScalarType::Int64;
  else if constexpr (std::same_as<T, half>) return ScalarType::Half;
  else if constexpr (std::same_as<T, bfloat16>) return ScalarType::BFloat16;
  else if constexpr (std::same_as<T, float>) return ScalarType::Float;
  else return ScalarType::Double;
}

/// PyTorch-style names: "float32", "bfloat16", "int64", "bool", ...
constexpr std::string_view dtype_name(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return "bool";
    case ScalarType::UInt8: return "uint8";
    case ScalarType::Int32: return "int32";
    case ScalarType::Int64: return "int64";
    case ScalarType::Half: return "float16";
    case ScalarType::BFloat16: return "bfloat16";
    case ScalarType::Float: return "float32";
    case ScalarType::Double: return "float64";
  }
  return "?";
}

/// Size of one element in bytes.
constexpr size_t dtype_size(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: case ScalarType::UInt8: return 1;
    case ScalarType::Half: case ScalarType::BFloat16: return 2;
    case ScalarType::Int32: case ScalarType::Float: return 4;
    case ScalarType::Int64: case ScalarType::Double: return 8;
  }
  return 0;
}

constexpr bool is_floating(ScalarType t) {
  return t == ScalarType::Half || t == ScalarType::BFloat16 || t == ScalarType::Float ||
         t == ScalarType::Double;
}

/// Category used by promotion: 0 bool, 1 integer, 2 floating.
constexpr int dtype_category(ScalarType t) {
  return t == ScalarType::Bool ? 0 : is_floating(t) ? 2 : 1;
}

/// torch.promote_types for two tensor dtypes (PyTorch's `c10::promoteTypes` lattice,
/// restricted to our eight types): bool < uint8 < int32 < int64 < floating;
/// half + bfloat16 = float32; floats widen to the larger.
constexpr ScalarType promote_types(ScalarType a, ScalarType b) {
  if (a == b) return a;
  const int ca = dtype_category(a), cb = dtype_category(b);
  if (ca != cb) return ca > cb ? a : b;
  if (ca == 1) return static_cast<uint8_t>(a) > static_cast<uint8_t>(b) ? a : b;
  // both floating
  if ((a == ScalarType::Half && b == ScalarType::BFloat16) ||
      (a == ScalarType::BFloat16 && b == ScalarType::Half))
    return ScalarType::Float;
  return static_cast<uint8_t>(a) > static_cast<uint8_t>(b) ? a : b;
}

/// The C++ element type of `ScalarType S`, as member `type`
/// (`scalar_type_to<ScalarType::Float>::type`
/// is `float`); defined for every ScalarType.
template <ScalarType S>
struct scalar_type_to;
// The specializations, one per ScalarType: documented by the primary template above.
/// @cond
template <> struct scalar_type_to<ScalarType::Bool> { using type = bool; };
template <> struct scalar_type_to<ScalarType::UInt8> { using type = uint8_t; };
template <> struct scalar_type_to<ScalarType::Int32> { using type = int32_t; };
template <> struct scalar_type_to<ScalarType::Int64> { using type = int64_t; };
template <> struct scalar_type_to<ScalarType::Half> { using type = half; };
template <> struct scalar_type_to<ScalarType::BFloat16> { using type = bfloat16; };
template <> struct scalar_type_to<ScalarType::Float> { using type = float; };
template <> struct scalar_type_to<ScalarType::Double> { using type = double; };
/// @endcond

/// The promoted C++ type of two tensor element types.
template <element A, element B>
using promote_t = typename scalar_type_to<promote_types(dtype_of<A>(), dtype_of<B>())>::type;

/// Result type of `tensor op scalar` where the scalar is a plain C++ number: a scalar only
/// promotes a tensor of a lower category (bool < integral < floating), and then to the
/// default type of its category (int64 for integers, float32 for floating point) — PyTorch's
/// "wrapped number" rule. `Tensor<bfloat16> * 2.0` stays bfloat16; `Tensor<int32_t> * 2.5`
/// is float32; `Tensor<bool> + 1` is int64.
template <element T, class S>
using promote_scalar_t = std::conditional_t<
    std::is_floating_point_v<S>, std::conditional_t<floating_element<T>, T, float>,
    std::conditional_t<std::same_as<S, bool>, T,
                       std::conditional_t<std::same_as<T, bool>, int64_t, T>>>;

/// Computation type for an element type: half and bfloat16 compute in float (PyTorch's
/// "opmath" type), everything else in itself.
template <class T>
using opmath_t = std::conditional_t<std::same_as<T, half> || std::same_as<T, bfloat16>, float, T>;

/// Type of `sum`/`prod` results: integers and bool accumulate to int64, as in PyTorch.
template <class T>
using sum_result_t = std::conditional_t<std::same_as<T, bool> || integral_element<T>, int64_t, T>;

namespace detail {

/// Floating point to int32 or int64 without undefined behaviour: truncation toward zero when
/// the value fits, else (NaN, +-inf, out of range) the type's minimum — what x86's cvtt
/// instructions return (the "integer indefinite" value), so torch on x86 and our vector
/// kernels give the same. uint8 takes the int32 result's low 8 bits (wraps, as torch on x86:
/// 300.0 -> 44, -1.0 -> 255, NaN -> 0).
template <class I, class F>
constexpr I float_to_int(F v) {
  using L = std::numeric_limits<I>;
  constexpr F lo = F(L::min());  // -2^31 or -2^63: exact in float and double
  if (!(v >= lo && v < -lo)) return L::min();
  return static_cast<I>(v);
}

/// a + b, a - b, a * b and -a with two's-complement wrap-around for signed integers (computed
/// in unsigned arithmetic, so never undefined), as torch's integer ops on the CPU; the plain
/// operation for every other type.
template <class M>
constexpr M wrap_add(M a, M b) {
  if constexpr (std::is_integral_v<M> && std::is_signed_v<M>)
    return static_cast<M>(static_cast<std::make_unsigned_t<M>>(a) + static_cast<std::make_unsigned_t<M>>(b));
  else return M(a + b);
}
template <class M>
constexpr M wrap_sub(M a, M b) {
  if constexpr (std::is_integral_v<M> && std::is_signed_v<M>)
    return static_cast<M>(static_cast<std::make_unsigned_t<M>>(a) - static_cast<std::make_unsigned_t<M>>(b));
  else return M(a - b);
}
template <class M>
constexpr M wrap_mul(M a, M b) {
  if constexpr (std::is_integral_v<M> && std::is_signed_v<M>)
    return static_cast<M>(static_cast<std::make_unsigned_t<M>>(a) * static_cast<std::make_unsigned_t<M>>(b));
  else return M(a * b);
}
template <class M>
constexpr M wrap_neg(M a) {
  if constexpr (std::is_integral_v<M> && std::is_signed_v<M>)
    return static_cast<M>(std::make_unsigned_t<M>(0) - static_cast<std::make_unsigned_t<M>>(a));
  else return M(-a);
}

}  // namespace detail

/// Convert between element types with PyTorch's semantics (float -> int truncates toward zero,
/// anything -> bool is `!= 0`). Float -> integer of NaN, +-inf or a value out of the integer's
/// range is defined (detail::float_to_int: the minimum for int32/int64, wrapped for uint8).
template <element To, class From>
constexpr To convert(From v) {
  if constexpr (std::same_as<To, From>) return v;
  else if constexpr (std::same_as<To, bool>) return static_cast<opmath_t<From>>(v) != opmath_t<From>(0);
  else if constexpr (std::same_as<To, bfloat16> || std::same_as<To, half>)
    return To(static_cast<float>(v));
  else if constexpr (std::same_as<From, bfloat16> || std::same_as<From, half>)
    return convert<To>(static_cast<float>(v));
  else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if constexpr (sizeof(To) >= 4) return detail::float_to_int<To>(v);
    else return static_cast<To>(detail::float_to_int<int32_t>(v));  // uint8: low 8 bits
  } else return static_cast<To>(v);
}

}  // namespace torchtpu
