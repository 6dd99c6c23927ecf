// torchtpu/core/factories.hpp — tensor factories: empty, zeros, ones, full, arange, linspace,
// eye, from_data (copy), from_blob (borrow), and rand/randn with an explicit generator.
#pragma once
#include <cmath>    // std::ceil, std::log, std::sqrt, std::cos, std::isfinite, std::isnan
#include <cstdint>  // int64_t, uint64_t
#include <cstring>  // std::memcpy
#include <limits>   // std::numeric_limits
#include <memory>   // std::make_shared, std::shared_ptr

#include "../ops/methods.hpp"  // fill_
#include "tensor.hpp"          // Tensor

namespace torchtpu {

/// Uninitialised contiguous tensor. **Errors:** ShapeError for negative sizes.
template <element T = float> Tensor<T> empty(const Dims& shape) { return Tensor<T>::empty(shape); }
template <element T = float> Tensor<T> full(const Dims& shape, T value) {
  Tensor<T> t = Tensor<T>::empty(shape);
  t.fill_(value);
  return t;
}
template <element T = float> Tensor<T> zeros(const Dims& shape) { return full<T>(shape, T(0)); }
template <element T = float> Tensor<T> ones(const Dims& shape) { return full<T>(shape, convert<T>(1)); }

/// `start, start+step, ...` below `end` (torch.arange): ceil((end - start) / step) elements.
/// **Errors:** ValueError if step is 0 or NaN or has the wrong sign, if start or end is not
/// finite (torch: "unsupported range"), or if the element count does not fit int64.
template <element T = float> Tensor<T> arange(double start, double end, double step = 1.0) {
  auto args = [&] {
    return "(start " + std::to_string(start) + ", end " + std::to_string(end) + ", step " + std::to_string(step) + ")";
  };
  if (!std::isfinite(start) || !std::isfinite(end))
    throw ValueError("arange: unsupported range " + args() + ": start and end must be finite");
  if (step == 0 || std::isnan(step)) throw ValueError("arange: step must be nonzero and not NaN " + args());
  if ((end - start) * step < 0 && end != start)
    throw ValueError("arange: upper bound and step sign are inconsistent " + args());
  const double count = std::ceil((end - start) / step);  // >= 0 (0 for an infinite step, as torch)
  if (!(count < 9.2233720368547758e18)) throw ValueError("arange: invalid size, possible overflow " + args());
  const int64_t n = int64_t(count);
  Tensor<T> t = Tensor<T>::empty(Dims{n > 0 ? n : 0});
  T* p = t.data_ptr();
  for (int64_t i = 0; i < n; ++i) p[i] = convert<T>(start + double(i) * step);
  return t;
}
template <element T = float> Tensor<T> arange(double end) { return arange<T>(0.0, end, 1.0); }

/// `steps` evenly spaced values from `start` to `end` inclusive (torch.linspace).
/// **Errors:** ValueError if steps < 0.
template <element T = float> Tensor<T> linspace(double start, double end, int64_t steps) {
  if (steps < 0) throw ValueError("linspace: number of steps must be non-negative, got " + std::to_string(steps));
  Tensor<T> t = Tensor<T>::empty(Dims{steps});
  T* p = t.data_ptr();
  const double step = steps > 1 ? (end - start) / double(steps - 1) : 0.0;
  // symmetric evaluation from both ends, as torch does, so the last value is exactly `end`
  // (one step gives `start`, as torch's linspace_out special-cases it)
  for (int64_t i = 0; i < steps; ++i)
    p[i] = convert<T>(steps == 1 || i < steps / 2 ? start + step * double(i) : end - step * double(steps - 1 - i));
  return t;
}

/// n × m identity. **Errors:** ValueError if `n` or `m` is negative (torch.eye's check; an
/// m of -1 used to mean "m = n" silently).
template <element T = float> Tensor<T> eye(int64_t n, int64_t m) {
  if (n < 0) throw ValueError("eye: n must be greater or equal to 0, got " + std::to_string(n));
  if (m < 0) throw ValueError("eye: m must be greater or equal to 0, got " + std::to_string(m));
  Tensor<T> t = zeros<T>(Dims{n, m});
  for (int64_t i = 0; i < std::min(n, m); ++i) t.data_ptr()[i * m + i] = convert<T>(1);
  return t;
}
/// n × n identity. **Errors:** ValueError if `n` is negative.
template <element T = float> Tensor<T> eye(int64_t n) { return eye<T>(n, n); }

/// A contiguous copy of `numel(shape)` elements read from `data` (row-major).
template <element T> Tensor<T> from_data(const T* data, const Dims& shape) {
  Tensor<T> t = Tensor<T>::empty(shape);
  if (t.numel()) std::memcpy(t.data_ptr(), data, size_t(t.numel()) * sizeof(T));
  return t;
}

/// A tensor viewing memory owned elsewhere (no copy). `deleter(data)` runs once when the last
/// tensor using it is gone; `strides` default to row-major and may be negative (`data` is
/// element [0, ..., 0]; the memory the view reaches must exist).
/// **Errors:** ShapeError for a negative size, a strides/sizes rank mismatch, or a view whose
/// extent overflows int64.
template <element T, class Deleter>
Tensor<T> from_blob(T* data, const Dims& shape, Deleter deleter, Dims strides = {}) {
  if (strides.size() == 0 && shape.size() != 0) strides = contiguous_strides(shape);
  if (strides.size() != shape.size())
    throw ShapeError("from_blob: strides " + to_string(strides) + " do not match sizes " + to_string(shape));
  int64_t lo = 0, hi = 0;  // lowest and highest element reached, relative to data
  bool empty = false;
  for (int i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) throw ShapeError("from_blob: negative size in " + to_string(shape));
    empty = empty || shape[i] == 0;
  }
  for (int i = 0; i < shape.size() && !empty; ++i) {
    int64_t span = 0;
    if (__builtin_mul_overflow(shape[i] - 1, strides[i], &span) ||
        __builtin_add_overflow(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi) ||
        __builtin_mul_overflow(hi - lo + 1, int64_t(sizeof(T)), &span))
      throw ShapeError("from_blob: sizes " + to_string(shape) + " with strides " + to_string(strides) +
                       " overflow int64 byte offsets");
  }
  auto s = std::make_shared<StorageImpl>();
  s->data = empty ? static_cast<void*>(data) : static_cast<void*>(data + lo);
  s->nbytes = empty ? 0 : size_t(hi - lo + 1) * sizeof(T);
  s->owner = std::shared_ptr<void>(static_cast<void*>(data), std::move(deleter));
  return Tensor<T>(std::move(s), shape, strides, empty ? 0 : -lo);
}
/// Borrow memory the caller keeps alive for as long as the tensor (no deleter).
template <element T>
Tensor<T> from_blob(T* data, const Dims& shape) { return from_blob(data, shape, [](void*) {}); }

namespace detail {
/// MT19937-64, the 64-bit Mersenne Twister (Matsumoto & Nishimura 1998; Nishimura 2000), with
/// the parameters and seeding of C++'s `std::mt19937_64` ([rand.predef]), so it produces the
/// same sequence (tests/core/test_factories.cpp checks it against the standard engine). Our
/// own few lines instead of <random>, which costs every translation unit ~0.15 s to parse.
class Mt19937_64 {
 public:
  explicit Mt19937_64(uint64_t seed) {
    s_[0] = seed;
    for (int i = 1; i < n; ++i) s_[i] = 6364136223846793005ULL * (s_[i - 1] ^ (s_[i - 1] >> 62)) + uint64_t(i);
  }
  uint64_t operator()() {
    if (i_ >= n) twist();
    uint64_t z = s_[i_++];
    z ^= (z >> 29) & 0x5555555555555555ULL;
    z ^= (z << 17) & 0x71D67FFFEDA60000ULL;
    z ^= (z << 37) & 0xFFF7EEE000000000ULL;
    return z ^ (z >> 43);
  }

 private:
  static constexpr int n = 312, m = 156;
  void twist() {
    constexpr uint64_t upper = ~uint64_t(0) << 31, lower = ~upper, a = 0xB5026F5AA96619E9ULL;
    for (int k = 0; k < n; ++k) {
      const uint64_t y = (s_[k] & upper) | (s_[(k + 1) % n] & lower);
      s_[k] = s_[(k + m) % n] ^ (y >> 1) ^ ((y & 1) ? a : 0);
    }
    i_ = 0;
  }
  uint64_t s_[n];
  int i_ = n;
};
}  // namespace detail

/// Random number source for rand/randn: a 64-bit Mersenne Twister (MT19937-64, Matsumoto &
/// Nishimura 1998; the same sequence as std::mt19937_64 for a seed) seeded explicitly, so a
/// seed gives the same numbers on every platform.
class Generator {
 public:
  /// A generator seeded with `seed` (same sequence on every platform).
  explicit Generator(uint64_t seed) : eng_(seed) {}
  /// Uniform in [0, 1): the top 53 bits of one draw, scaled by 2^-53.
  double uniform() { return double(eng_() >> 11) * (1.0 / 9007199254740992.0); }
  /// Uniform in [0, 1) on a grid of 2^-bits (bits <= 24: exactly representable in a float
  /// type with that many significand bits, so rounding never reaches 1).
  float uniform_bits(int bits) { return float(eng_() >> (64 - bits)) * std::ldexp(1.0f, -bits); }
  /// Standard normal by the Box–Muller transform (Box & Muller 1958), one value per call
  /// (the second value of each pair is cached).
  double normal() {
    if (has_spare_) { has_spare_ = false; return spare_; }
    double u1 = uniform(), u2 = uniform();
    if (u1 < 1e-300) u1 = 1e-300;
    const double r = std::sqrt(-2.0 * std::log(u1)), th = 6.283185307179586 * u2;
    spare_ = r * std::sin(th);
    has_spare_ = true;
    return r * std::cos(th);
  }

 private:
  detail::Mt19937_64 eng_;
  double spare_ = 0;
  bool has_spare_ = false;
};

/// Uniform [0, 1) values (floating types). Same seed, same values, in row-major order.
template <floating_element T = float> Tensor<T> rand(const Dims& shape, Generator& gen) {
  Tensor<T> t = Tensor<T>::empty(shape);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if constexpr (std::same_as<T, double>) t.data_ptr()[i] = gen.uniform();
    else t.data_ptr()[i] = convert<T>(gen.uniform_bits(std::numeric_limits<T>::digits));
  }
  return t;
}
/// Standard normal values (floating types).
template <floating_element T = float> Tensor<T> randn(const Dims& shape, Generator& gen) {
  Tensor<T> t = Tensor<T>::empty(shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_ptr()[i] = convert<T>(gen.normal());
  return t;
}

}  // namespace torchtpu
