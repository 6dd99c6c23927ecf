// tests/tolerance.hpp — `per_dtype`: a per-dtype constant (a test tolerance), shared by the
// operator-library suites (tests/ops/testing.hpp) and the device suites (tests/device_ops/helpers.hpp).
#pragma once
#include <type_traits>  // std::is_same_v

#include <torchtpu/core/dtype.hpp>  // half, bfloat16

/// A per-dtype constant (a tolerance): `d` for float64, `f` float32, `h` float16, `b` bfloat16,
/// `i` for the integer and bool dtypes.
template <class T>
constexpr double per_dtype(double d, double f, double h, double b, double i = 0) {
  if constexpr (std::is_same_v<T, double>) return d;
  else if constexpr (std::is_same_v<T, float>) return f;
  else if constexpr (std::is_same_v<T, torchtpu::half>) return h;
  else if constexpr (std::is_same_v<T, torchtpu::bfloat16>) return b;
  else return i;
}
