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

#include "../tolerance.hpp"  // per_dtype

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

/// Helpers of the operator-library suites (tests/ops/test_shape.cpp, ...): a file takes them with
/// `using optest::make;` etc.
namespace optest {

/// `vals` (row-major, shape `shape`) as a Tensor<T> (each value converted as `Tensor::to` does).
template <class T>
torchtpu::Tensor<T> make(const std::vector<double>& vals, const torchtpu::Dims& shape) {
  torchtpu::Tensor<double> d = torchtpu::Tensor<double>::empty(shape);
  for (size_t i = 0; i < vals.size(); ++i) d.data_ptr()[i] = vals[i];
  return torchtpu::Tensor<T>(d.template to<T>());
}

/// What `vals` read back as after a round trip through T (bool: 0/1, uint8: wrapped).
template <class T>
std::vector<double> through(const std::vector<double>& vals) {
  std::vector<double> r;
  for (double v : vals) r.push_back(static_cast<double>(torchtpu::convert<double>(torchtpu::convert<T>(v))));
  return r;
}

/// The message of the exception `f` throws as `E` ("" when it throws nothing).
template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

/// Row-major values of `t` as double.
template <class T>
std::vector<double> vals(const torchtpu::Tensor<T>& t) {
  const torchtpu::Tensor<double> d = torchtpu::Tensor<double>(t.contiguous().template to<double>());
  return std::vector<double>(d.data_ptr(), d.data_ptr() + d.numel());
}

/// Checks |got - want| <= abs + rel |want| element by element (a NaN expects a NaN), naming
/// the element of each failure.
inline void check_near(const std::vector<double>& got, const std::vector<double>& want, double rel, double abs) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    if (std::isnan(want[i])) CHECK(std::isnan(got[i]));
    else CHECK(std::fabs(got[i] - want[i]) <= abs + rel * std::fabs(want[i]));
  }
}

/// Pseudo-random values of dtype T in [lo, hi) (uniform float32 from a Generator seeded with
/// `seed`, converted to T).
template <class T>
torchtpu::Tensor<T> input(const torchtpu::Dims& s, uint64_t seed, double lo = -2.0, double hi = 2.0) {
  torchtpu::Generator gen(seed);
  const torchtpu::Tensor<float> u = torchtpu::rand<float>(s, gen);
  return torchtpu::Tensor<T>(torchtpu::Tensor<float>(u * float(hi - lo) + float(lo)).template to<T>());
}

/// `sin(i * f) * a` for the i-th element in row-major order, rounded to float32, then to T
/// (inputs whose torch literals the convolution and pooling tests hold).
template <class T>
torchtpu::Tensor<T> sinus(const torchtpu::Dims& s, double f = 0.37, double a = 2.0) {
  std::vector<float> v(static_cast<size_t>(torchtpu::numel(s)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(std::sin(double(i) * f) * a);
  const torchtpu::Tensor<float> t = torchtpu::from_data(v.data(), s);
  return torchtpu::Tensor<T>(t.template to<T>());
}

/// `per_dtype` (tests/tolerance.hpp), for `using optest::per_dtype;`.
using ::per_dtype;

}  // namespace optest
