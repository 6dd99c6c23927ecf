// torchtpu/core/shape.hpp — `Dims` (a fixed-capacity list of int64 sizes or strides) and the
// shape arithmetic shared by tensors and expressions: numel, contiguous strides, broadcasting.
#pragma once
#include <array>             // std::array
#include <cstddef>           // size_t
#include <cstdint>           // int64_t
#include <initializer_list>  // std::initializer_list
#include <span>              // std::span
#include <string>            // std::string
#include <string_view>       // std::string_view

#include "errors.hpp"  // ShapeError, IndexError, ValueError

namespace torchtpu {

/// The largest rank a tensor may have (PyTorch allows 64; 8 covers every model we import
/// and keeps shapes allocation-free).
inline constexpr int max_rank = 8;

/// Marks a tensor or expression whose rank is known only at run time.
inline constexpr int dynamic_rank = -1;

/// A list of at most `max_rank` int64 values (sizes or strides, in elements). Never allocates.
class Dims {
 public:
  constexpr Dims() = default;
  /// Dims from a list: `Dims{2, 3}`. At most `max_rank` values.
  constexpr Dims(std::initializer_list<int64_t> v) { assign(v.begin(), v.end()); }
  /// Dims copied from a span of at most `max_rank` values.
  constexpr explicit Dims(std::span<const int64_t> v) { assign(v.begin(), v.end()); }
  /// Dims copied from the iterator range [first, last) of at most `max_rank` values.
  template <class It>
  constexpr Dims(It first, It last) { assign(first, last); }

  /// A list of `n` copies of `value`.
  static constexpr Dims filled(int n, int64_t value) {
    Dims d;
    if (n < 0 || n > max_rank) throw ShapeError("rank " + std::to_string(n) + " exceeds the maximum rank 8");
    d.n_ = n;
    for (int i = 0; i < n; ++i) d.v_[i] = value;
    return d;
  }

  /// Number of values.
  constexpr int size() const noexcept { return n_; }
  /// True when there are no values (rank 0).
  constexpr bool empty() const noexcept { return n_ == 0; }
  /// The i-th value (unchecked).
  constexpr int64_t operator[](int i) const noexcept { return v_[i]; }
  /// The i-th value, writable (unchecked).
  constexpr int64_t& operator[](int i) noexcept { return v_[i]; }
  /// Iterator to the first value.
  constexpr const int64_t* begin() const noexcept { return v_.data(); }
  /// Iterator past the last value.
  constexpr const int64_t* end() const noexcept { return v_.data() + n_; }
  /// Iterator to the first value, writable.
  constexpr int64_t* begin() noexcept { return v_.data(); }
  /// Iterator past the last value, writable.
  constexpr int64_t* end() noexcept { return v_.data() + n_; }
  /// Pointer to the values.
  constexpr const int64_t* data() const noexcept { return v_.data(); }
  /// The last value (size() must be > 0).
  constexpr int64_t back() const noexcept { return v_[n_ - 1]; }

  /// Append `x`. **Errors:** ShapeError past `max_rank` values.
  constexpr void push_back(int64_t x) {
    if (n_ >= max_rank) throw ShapeError("rank exceeds the maximum rank 8");
    v_[n_++] = x;
  }
  /// Insert `x` before position `pos`. **Errors:** ShapeError past `max_rank` values.
  constexpr void insert(int pos, int64_t x) {
    if (n_ >= max_rank) throw ShapeError("rank exceeds the maximum rank 8");
    for (int i = n_; i > pos; --i) v_[i] = v_[i - 1];
    v_[pos] = x;
    ++n_;
  }
  /// Remove the value at position `pos`. **Errors:** ShapeError for `pos` outside [0, size()).
  constexpr void erase(int pos) {
    if (pos < 0 || pos >= n_)
      throw ShapeError("erase: position " + std::to_string(pos) + " out of range for " + std::to_string(n_) + " values");
    for (int i = pos; i + 1 < n_; ++i) v_[i] = v_[i + 1];
    --n_;
  }
  /// Set the number of values to `n`; new values are `fill`.
  constexpr void resize(int n, int64_t fill = 0) {
    if (n > max_rank) throw ShapeError("rank " + std::to_string(n) + " exceeds the maximum rank 8");
    for (int i = n_; i < n; ++i) v_[i] = fill;
    n_ = n;
  }

  // A plain loop: std::equal on int64_t becomes a memcmp call, which costs more than the
  // few sizes compared (it showed in batch-1 profiles, where shapes are compared per call).
  friend constexpr bool operator==(const Dims& a, const Dims& b) {
    if (a.n_ != b.n_) return false;
    for (int i = 0; i < a.n_; ++i)
      if (a.v_[i] != b.v_[i]) return false;
    return true;
  }

 private:
  template <class It>
  constexpr void assign(It first, It last) {
    n_ = 0;
    for (; first != last; ++first) push_back(static_cast<int64_t>(*first));
  }
  std::array<int64_t, max_rank> v_{};
  int n_ = 0;
};

inline std::string to_string(const Dims& d);

namespace detail {
[[noreturn]] inline void numel_overflow(const Dims& s) {
  throw ShapeError("the number of elements of shape " + to_string(s) + " overflows int64");
}
[[noreturn]] inline void nbytes_overflow(const Dims& s, size_t elem_size) {
  throw ValueError("Storage size calculation overflowed with sizes=" + to_string(s) + " and " +
                   std::to_string(elem_size) + "-byte elements");
}
}  // namespace detail

/// Number of elements of a shape (1 for rank 0; 0 if any size is 0, however large the others).
/// **Errors:** ShapeError naming the shape when the product does not fit int64.
constexpr int64_t numel(const Dims& s) {
  for (int64_t x : s)
    if (x == 0) return 0;
  int64_t n = 1;
  for (int64_t x : s)
    if (__builtin_mul_overflow(n, x, &n)) detail::numel_overflow(s);
  return n;
}

/// Bytes of a dense array of `shape` with `elem_size`-byte elements (sizes must be >= 0).
/// **Errors:** ValueError "Storage size calculation overflowed ..." (as torch says) when the
/// element count or the byte count does not fit int64; ShapeError as `numel`.
inline size_t storage_nbytes(const Dims& shape, size_t elem_size) {
  int64_t n = 1;
  for (int64_t x : shape)
    if (x == 0) return 0;
  for (int64_t x : shape)
    if (__builtin_mul_overflow(n, x, &n)) detail::nbytes_overflow(shape, elem_size);
  int64_t bytes = 0;
  if (__builtin_mul_overflow(n, static_cast<int64_t>(elem_size), &bytes)) detail::nbytes_overflow(shape, elem_size);
  return static_cast<size_t>(bytes);
}

/// Row-major (C-order) strides for `sizes`, in elements. Meaningful when `numel(sizes)` fits
/// int64 (callers check that); the products are computed without undefined overflow anyway.
constexpr Dims contiguous_strides(const Dims& sizes) {
  Dims st = Dims::filled(sizes.size(), 1);
  uint64_t acc = 1;
  for (int i = sizes.size() - 1; i >= 0; --i) {
    st[i] = static_cast<int64_t>(acc);
    acc *= sizes[i] > 1 ? static_cast<uint64_t>(sizes[i]) : 1;
  }
  return st;
}

/// "[2, 3]" — the notation used in every error message.
inline std::string to_string(const Dims& d) {
  std::string s = "[";
  for (int i = 0; i < d.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(d[i]);
  }
  return s + "]";
}

/// Normalise a possibly negative dim index against `rank`; throws IndexError naming the op.
inline int wrap_dim(int64_t dim, int rank, std::string_view op) {
  const int r = rank == 0 ? 1 : rank;  // like torch: dim 0 / -1 of a scalar are accepted
  if (dim < -r || dim >= r)
    throw IndexError(std::string(op) + ": dimension " + std::to_string(dim) +
                     " out of range (expected to be in range of [" + std::to_string(-r) + ", " +
                     std::to_string(r - 1) + "])");
  return static_cast<int>(dim < 0 ? dim + r : dim);
}

/// NumPy broadcasting of two shapes (right-aligned; sizes must match or be 1).
/// **Errors:** ShapeError `"<op>: shapes [2, 3] and [4] cannot be broadcast"`.
inline Dims broadcast_shapes(const Dims& a, const Dims& b, std::string_view op) {
  const int r = a.size() > b.size() ? a.size() : b.size();
  Dims out = Dims::filled(r, 1);
  for (int i = 0; i < r; ++i) {
    const int ia = a.size() - r + i, ib = b.size() - r + i;
    const int64_t sa = ia >= 0 ? a[ia] : 1, sb = ib >= 0 ? b[ib] : 1;
    if (sa == sb || sb == 1) out[i] = sa;
    else if (sa == 1) out[i] = sb;
    else
      throw ShapeError(std::string(op) + ": shapes " + to_string(a) + " and " + to_string(b) +
                       " cannot be broadcast (size " + std::to_string(sa) + " vs " +
                       std::to_string(sb) + " at dim " + std::to_string(i) + ")");
  }
  return out;
}

/// True when `from` broadcasts to exactly `to`.
constexpr bool broadcastable_to(const Dims& from, const Dims& to) {
  if (from.size() > to.size()) return false;
  for (int i = 0; i < from.size(); ++i) {
    const int64_t f = from[from.size() - 1 - i], t = to[to.size() - 1 - i];
    if (f != t && f != 1) return false;
  }
  return true;
}

}  // namespace torchtpu
