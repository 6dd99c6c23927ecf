// torchtpu/core/bfloat16.hpp — `torchtpu::bfloat16`, the 16-bit brain floating-point type.
#pragma once
#include <bit>      // std::bit_cast
#include <cstdint>  // uint16_t, uint32_t
#include <limits>   // std::numeric_limits

namespace torchtpu {

/// bfloat16: 1 sign bit, 8 exponent bits, 7 mantissa bits — the upper half of an IEEE
/// binary32. Arithmetic happens in float; results round back.
///
/// **Rounding:** from float, round to nearest, ties to even; NaN stays NaN (quiet, sign
/// kept); overflow rounds to ±inf as IEEE does.
/// **Source:** the format as defined by Google Brain / TPU (`tensorflow/core/lib/bfloat16`),
/// and `c10/util/BFloat16.h` (`round_to_nearest_even`) for the rounding rule.
struct bfloat16 {
  /// The raw 16 bits (sign, 8 exponent bits, 7 mantissa bits).
  uint16_t bits = 0;

  constexpr bfloat16() = default;
  /// Round-to-nearest-even conversion from float.
  constexpr bfloat16(float f) : bits(round_from_float(f)) {}  // NOLINT: implicit like c10
  /// Conversion from double goes through float (double rounding is what torch does too).
  constexpr explicit bfloat16(double d) : bfloat16(static_cast<float>(d)) {}
  /// Explicit conversion from an integer or bool, through float.
  constexpr explicit bfloat16(int v) : bfloat16(static_cast<float>(v)) {}
  /// Explicit conversion from an integer or bool, through float.
  constexpr explicit bfloat16(long v) : bfloat16(static_cast<float>(v)) {}
  /// Explicit conversion from an integer or bool, through float.
  constexpr explicit bfloat16(long long v) : bfloat16(static_cast<float>(v)) {}
  /// Explicit conversion from an integer or bool, through float.
  constexpr explicit bfloat16(unsigned char v) : bfloat16(static_cast<float>(v)) {}
  /// Explicit conversion from an integer or bool, through float.
  constexpr explicit bfloat16(bool v) : bfloat16(v ? 1.0f : 0.0f) {}

  /// Exact widening to float.
  constexpr operator float() const { return std::bit_cast<float>(uint32_t(bits) << 16); }

  /// Bit pattern constructor: `bfloat16::from_bits(0x3f80) == 1.0f`.
  static constexpr bfloat16 from_bits(uint16_t b) {
    bfloat16 r;
    r.bits = b;
    return r;
  }

  /// Round-to-nearest-even bits of `f` (NaN stays a quiet NaN).
  static constexpr uint16_t round_from_float(float f) {
    const uint32_t u = std::bit_cast<uint32_t>(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x0040u);  // quiet NaN
    const uint32_t lsb = (u >> 16) & 1u;
    return uint16_t((u + 0x7fffu + lsb) >> 16);
  }
};

}  // namespace torchtpu

template <>
class std::numeric_limits<torchtpu::bfloat16> {
  using B = torchtpu::bfloat16;

 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr int digits = 8;
  static constexpr B min() { return B::from_bits(0x0080); }
  static constexpr B lowest() { return B::from_bits(0xff7f); }
  static constexpr B max() { return B::from_bits(0x7f7f); }
  static constexpr B epsilon() { return B::from_bits(0x3c00); }
  static constexpr B infinity() { return B::from_bits(0x7f80); }
  static constexpr B quiet_NaN() { return B::from_bits(0x7fc0); }
};
