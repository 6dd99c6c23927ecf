// tests/ops/testing.hpp — helpers shared by the test suites: the fixture type and a
// NaN-aware element-by-element comparison that also checks shape and dtype.
#pragma once
#include <cmath>    // std::isnan, std::fabs
#include <cstdint>  // int64_t
#include <source_location>  // std::source_location (caller line in failure messages)
#include <string>   // std::string
#include <vector>   // std::vector

#include <fmt/format.h>      // fmt::format (failure messages)
#include <catch2/catch.hpp>        // Catch2 v2
#include <torchtpu/torchtpu.hpp>   // the library

/// A reference result: shape, row-major values (as double) and the torch dtype name.
struct Fx {
  std::vector<int64_t> shape;
  std::vector<double> data;
  const char* dtype;
};

/// The values of `e` (any expression), converted to double, row-major.
template <class E>
std::vector<double> values_of(const E& e) {
  torchtpu::Tensor<double> t = torchtpu::to<double>(e);
  return std::vector<double>(t.data_ptr(), t.data_ptr() + t.numel());
}

inline torchtpu::Dims dims_of(const std::vector<int64_t>& v) { return torchtpu::Dims(v.begin(), v.end()); }

/// Mismatches between `got` and `want` (NaN equals NaN; |got - want| <= atol + rtol |want|).
inline std::string compare_values(const std::vector<double>& got, const std::vector<double>& want,
                                  double rtol, double atol) {
  std::string bad;
  if (got.size() != want.size())
    return fmt::format("size {} != {}", got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const bool ok = std::isnan(want[i]) ? std::isnan(got[i])
                    : std::isinf(want[i]) ? got[i] == want[i]
                                          : std::fabs(got[i] - want[i]) <= atol + rtol * std::fabs(want[i]);
    if (!ok)
      bad += fmt::format("[{}] got {} want {}; ", i, got[i], want[i]);  // (GCC 12 -O3 -Wrestrict misfires on string +)
  }
  return bad;
}

/// Checks shape, dtype and values of `e` against a fixture.
template <class E>
void check_fx(const E& e, const Fx& fx, double rtol = 1e-6, double atol = 1e-7,
              std::source_location loc = std::source_location::current()) {
  INFO("checked at line " << loc.line());
  CHECK(torchtpu::to_string(e.shape()) == torchtpu::to_string(dims_of(fx.shape)));
  CHECK(std::string(torchtpu::dtype_name(torchtpu::dtype_of<typename E::value_type>())) == fx.dtype);
  CHECK(compare_values(values_of(e), fx.data, rtol, atol) == "");
}

/// Checks values (and numel) of `e` against a list.
template <class E>
void check_values(const E& e, const std::vector<double>& want, double rtol = 0, double atol = 0,
                  std::source_location loc = std::source_location::current()) {
  INFO("checked at line " << loc.line());
  CHECK(compare_values(values_of(e), want, rtol, atol) == "");
}

/// A tensor of type T from a fixture's values.
template <class T>
torchtpu::Tensor<T> tensor_of(const Fx& fx) {
  torchtpu::Tensor<double> d = torchtpu::from_data(fx.data.data(), dims_of(fx.shape));
  return torchtpu::to<T>(d);
}
