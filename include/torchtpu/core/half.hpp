// torchtpu/core/half.hpp — `torchtpu::half`, IEEE 754 binary16.
#pragma once
#include <bit>      // std::bit_cast
#include <cstdint>  // uint16_t, uint32_t
#include <limits>   // std::numeric_limits

namespace torchtpu {

/// IEEE 754 binary16: 1 sign bit, 5 exponent bits (bias 15), 10 mantissa bits.
/// Arithmetic happens in float; results round back.
///
/// **Rounding:** from float, round to nearest, ties to even, with subnormals and overflow
/// to ±inf; NaN stays NaN (quiet).
/// **Source:** IEEE 754-2008 §3.6 (binary16 parameters).
struct half {
  /// The raw 16 bits (IEEE binary16: sign, 5 exponent bits, 10 mantissa bits).
  uint16_t bits = 0;

  constexpr half() = default;
  /// Round-to-nearest-even conversion from float (implicit, like c10::Half).
  constexpr half(float f) : bits(round_from_float(f)) {}  // NOLINT: implicit like c10::Half
  /// Conversion from double, through float.
  constexpr explicit half(double d) : half(static_cast<float>(d)) {}
  /// Explicit conversion from an integer or bool, through float.
  constexpr explicit half(int v) : half(static_cast<float>(v)) {}
  /// Explicit conversion from an integer or bool, through float.
  constexpr explicit half(long v) : half(static_cast<float>(v)) {}
  /// Explicit conversion from an integer or bool, through float.
  constexpr explicit half(long long v) : half(static_cast<float>(v)) {}
  /// Explicit conversion from an integer or bool, through float.
  constexpr explicit half(unsigned char v) : half(static_cast<float>(v)) {}
  /// Explicit conversion from an integer or bool, through float.
  constexpr explicit half(bool v) : half(v ? 1.0f : 0.0f) {}

  /// Exact widening to float.
  constexpr operator float() const { return to_float(bits); }

  /// The half with bit pattern `b`: `half::from_bits(0x3c00) == 1.0f`.
  static constexpr half from_bits(uint16_t b) {
    half r;
    r.bits = b;
    return r;
  }

  /// The float value of the binary16 bits `h` (subnormals, infinities and NaN included).
  static constexpr float to_float(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (man << 13));
    if (exp != 0) return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (man << 13));
    if (man == 0) return std::bit_cast<float>(sign);
    // subnormal: value = man * 2^-24
    float v = float(man) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }

  /// Round-to-nearest-even binary16 bits of `f` (overflow gives infinity, NaN stays NaN).
  static constexpr uint16_t round_from_float(float f) {
    const uint32_t u = std::bit_cast<uint32_t>(f);
    const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
    const uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return uint16_t(sign | 0x7e00u | ((a >> 13) & 0x3ffu));  // NaN
    if (a >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds to >= 65520 -> inf
    if (a >= 0x38800000u) {                                  // normal half range
      const uint32_t lsb = (a >> 13) & 1u;
      const uint32_t r = a + 0xfffu + lsb;
      return uint16_t(sign | ((r - 0x38000000u) >> 13));
    }
    if (a < 0x33000000u) return sign;  // below half of the smallest subnormal (2^-25)
    // subnormal half: shift the full mantissa into place with RNE
    const uint32_t e = a >> 23;
    const uint32_t m = (a & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - e;  // 14 + (112 - e) + ... : maps 2^-15..2^-25
    const uint32_t q = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u);
    const uint32_t halfway = 1u << (shift - 1u);
    uint32_t out = q;
    if (rem > halfway || (rem == halfway && (q & 1u))) ++out;
    return uint16_t(sign | out);
  }
};

}  // namespace torchtpu

template <>
class std::numeric_limits<torchtpu::half> {
  using H = torchtpu::half;

 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr int digits = 11;
  static constexpr H min() { return H::from_bits(0x0400); }
  static constexpr H lowest() { return H::from_bits(0xfbff); }
  static constexpr H max() { return H::from_bits(0x7bff); }
  static constexpr H epsilon() { return H::from_bits(0x1400); }
  static constexpr H infinity() { return H::from_bits(0x7c00); }
  static constexpr H quiet_NaN() { return H::from_bits(0x7e00); }
};
