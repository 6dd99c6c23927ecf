// torchtpu/io/npy.hpp — reading and writing NumPy `.npy` files (format versions 1.0, 2.0
// and 3.0; C order only) as raw bytes + `ScalarType` + shape, with no tensor type involved.
#pragma once
#include <bit>          // std::endian
#include <cerrno>       // errno
#include <cstddef>      // std::byte, size_t
#include <cstdint>      // int64_t, uint8_t, uint16_t, uint32_t
#include <cstdio>       // std::FILE, std::fopen, std::fread, std::fwrite, std::fclose
#include <cstring>      // std::memcpy, std::strerror
#include <limits>       // std::numeric_limits
#include <span>         // std::span
#include <string>       // std::string, std::to_string
#include <string_view>  // std::string_view
#include <utility>      // std::swap, std::move
#include <vector>       // std::vector

#include "../core/dtype.hpp"   // ScalarType, dtype_of, dtype_name, dtype_size, element
#include "../core/errors.hpp"  // Error, ValueError, TypeError

namespace torchtpu {

/// An array read from (or to be written to) a `.npy` file: its element type, its shape and
/// its elements as raw bytes in C (row-major) order, in the host's byte order.
///
/// **Shapes:** `shape` may be empty (a 0-d array, one element) and may hold zeros (no
/// elements). `data.size() == numel() * dtype_size(dtype)` always holds for arrays that
/// `read_npy` / `parse_npy` return.
/// **Dtypes:** bool, uint8, int32, int64, float16, float32, float64 (`|b1`, `|u1`, `<i4`,
/// `<i8`, `<f2`, `<f4`, `<f8`). NumPy has no bfloat16, so a BFloat16 array cannot be written.
/// **Example:** tests/io/test_npy.cpp, block `npy-read`.
struct NpyArray {
  /// Element type.
  ScalarType dtype = ScalarType::Float;
  /// Sizes of each dim.
  std::vector<int64_t> shape;
  /// The raw data, row-major, little-endian.
  std::vector<std::byte> data;

  /// Number of elements: the product of `shape` (1 for a 0-d array, 0 if any size is 0).
  /// **Errors:** ValueError when the product overflows int64.
  int64_t numel() const {
    for (int64_t d : shape)
      if (d == 0) return 0;
    int64_t n = 1;
    for (int64_t d : shape)
      if (__builtin_mul_overflow(n, d, &n))
        throw ValueError("NpyArray::numel: the element count of a shape with " + std::to_string(shape.size()) +
                         " dimensions overflows int64");
    return n;
  }

  /// The elements viewed as `T`, without a copy.
  ///
  /// **Errors:** `TypeError` if `T` is not the array's dtype (no conversion happens).
  template <element T>
  std::span<const T> values() const {
    check_dtype(dtype_of<T>());
    return {reinterpret_cast<const T*>(data.data()), data.size() / sizeof(T)};
  }

 private:
  void check_dtype(ScalarType wanted) const {
    if (wanted != dtype)
      throw TypeError("NpyArray::values: the array holds " + std::string(dtype_name(dtype)) +
                      ", not " + std::string(dtype_name(wanted)));
  }
};

namespace detail {

/// Parser of the Python-literal header dict of a `.npy` file, e.g.
/// `{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }`.
class NpyHeaderParser {
 public:
  NpyHeaderParser(std::string_view text, std::string_view what) : s_(text), what_(what) {}

  /// Fills descr, fortran_order and shape; throws ValueError naming the problem.
  void parse(std::string& descr, bool& fortran_order, std::vector<int64_t>& shape) {
    bool have_descr = false, have_order = false, have_shape = false;
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = parse_string();
      expect(':');
      skip_space();
      if (key == "descr") {
        if (peek() == '[')
          fail("structured dtypes (a list 'descr') are not supported; only plain numeric arrays are");
        descr = parse_string();
        have_descr = true;
      } else if (key == "fortran_order") {
        fortran_order = parse_bool();
        have_order = true;
      } else if (key == "shape") {
        shape = parse_shape();
        have_shape = true;
      } else {
        fail("unknown header key '" + key + "'");
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == '}') break;
      fail("expected ',' or '}' after the value of '" + key + "'");
    }
    ++pos_;  // '}'
    skip_space();
    if (pos_ != s_.size()) fail("unexpected text after the header dict");
    if (!have_descr || !have_order || !have_shape)
      fail(std::string("the header lacks '") +
           (!have_descr ? "descr" : !have_order ? "fortran_order" : "shape") + "'");
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const {
    throw ValueError(std::string(what_) + ": bad .npy header (" + msg + ") in " + std::string(s_));
  }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  std::string parse_string() {
    skip_space();
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail("expected a quoted string");
    const size_t end = s_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string out(s_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return out;
  }
  bool parse_bool() {
    if (s_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail("expected True or False");
  }
  std::vector<int64_t> parse_shape() {
    std::vector<int64_t> shape;
    expect('(');
    while (true) {
      skip_space();
      if (peek() == ')') break;
      if (peek() < '0' || peek() > '9') fail("expected a non-negative integer in 'shape'");
      int64_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        const int digit = peek() - '0';
        if (v > (std::numeric_limits<int64_t>::max() - digit) / 10) fail("a dimension in 'shape' overflows int64");
        v = v * 10 + digit;
        ++pos_;
      }
      if (peek() == 'L') ++pos_;  // Python 2 long literal, as old NumPy wrote it
      shape.push_back(v);
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != ')') fail("expected ',' or ')' in 'shape'");
    }
    ++pos_;  // ')'
    return shape;
  }

  std::string_view s_;
  std::string_view what_;
  size_t pos_ = 0;
};

/// dtype and byte order of a `descr` such as `<f4`; throws TypeError for unsupported ones.
/// `swap` is set when the file's byte order differs from the host's.
inline ScalarType npy_parse_descr(std::string_view descr, bool& swap, std::string_view what) {
  auto unsupported = [&](const std::string& why) -> TypeError {
    return TypeError(std::string(what) + ": unsupported .npy dtype '" + std::string(descr) + "'" + why +
                     "; supported: |b1, |u1, <i4, <i8, <f2, <f4, <f8");
  };
  if (descr.size() < 3) throw unsupported("");
  const char order = descr[0];
  const std::string_view kind = descr.substr(1);
  ScalarType t;
  if (kind == "b1") t = ScalarType::Bool;
  else if (kind == "u1") t = ScalarType::UInt8;
  else if (kind == "i4") t = ScalarType::Int32;
  else if (kind == "i8") t = ScalarType::Int64;
  else if (kind == "f2") t = ScalarType::Half;
  else if (kind == "f4") t = ScalarType::Float;
  else if (kind == "f8") t = ScalarType::Double;
  else throw unsupported("");
  bool file_little;
  switch (order) {
    case '<': file_little = true; break;
    case '>': file_little = false; break;
    case '|': case '=': file_little = std::endian::native == std::endian::little; break;
    default: throw unsupported(" (unknown byte-order mark)");
  }
  swap = dtype_size(t) > 1 && file_little != (std::endian::native == std::endian::little);
  return t;
}

/// Reverses the bytes of each `elem`-byte element in place.
inline void npy_swap_bytes(std::byte* p, size_t bytes, size_t elem) {
  for (size_t i = 0; i + elem <= bytes; i += elem)
    for (size_t a = 0, b = elem - 1; a < b; ++a, --b) std::swap(p[i + a], p[i + b]);
}

inline uint32_t npy_read_le(const std::byte* p, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

/// The `descr` text NumPy uses for a dtype in the host's byte order.
inline std::string npy_descr(ScalarType t) {
  const char order = std::endian::native == std::endian::little ? '<' : '>';
  switch (t) {
    case ScalarType::Bool: return "|b1";
    case ScalarType::UInt8: return "|u1";
    case ScalarType::Int32: return std::string(1, order) + "i4";
    case ScalarType::Int64: return std::string(1, order) + "i8";
    case ScalarType::Half: return std::string(1, order) + "f2";
    case ScalarType::Float: return std::string(1, order) + "f4";
    case ScalarType::Double: return std::string(1, order) + "f8";
    case ScalarType::BFloat16: break;
  }
  throw TypeError("write_npy: NumPy has no " + std::string(dtype_name(t)) +
                  " dtype; convert the array to float32 first");
}

/// numel * elem_size, or a ValueError if a dimension is negative or the product overflows.
/// The product of the non-zero dimensions must fit int64 even when one is 0, so that
/// `NpyArray::numel()` (which multiplies in order) cannot overflow.
inline size_t npy_byte_count(const std::vector<int64_t>& shape, size_t elem_size, std::string_view what) {
  int64_t n = 1;  // product of the non-zero dimensions
  bool zero = false;
  for (int64_t d : shape) {
    if (d < 0) throw ValueError(std::string(what) + ": negative dimension " + std::to_string(d) + " in the shape");
    if (d == 0) {
      zero = true;
      continue;
    }
    if (n > std::numeric_limits<int64_t>::max() / d)
      throw ValueError(std::string(what) + ": the shape's element count overflows int64");
    n *= d;
  }
  if (zero) return 0;
  if (static_cast<uint64_t>(n) > std::numeric_limits<size_t>::max() / elem_size)
    throw ValueError(std::string(what) + ": the shape's byte count overflows");
  return static_cast<size_t>(n) * elem_size;
}

inline std::string npy_shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) { s += i ? ", " : ""; s += std::to_string(shape[i]); }
  return s + "]";
}

}  // namespace detail

/// Decodes the bytes of a whole `.npy` file. `what` names the source in error messages
/// (a path, or "<memory>").
///
/// **Errors:** `ValueError` for a missing magic string, an unknown format version, a
/// malformed header, `fortran_order: True`, or a data section that is shorter or longer
/// than the shape says; `TypeError` for a dtype other than the supported ones.
/// **Example:** tests/io/test_npy.cpp, block `npy-read`.
inline NpyArray parse_npy(std::span<const std::byte> file, std::string_view what = "<memory>") {
  const std::string w(what);
  static constexpr unsigned char magic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (file.size() < 10 || std::memcmp(file.data(), magic, sizeof magic) != 0)
    throw ValueError(w + ": not a .npy file (the \\x93NUMPY magic string is missing)");
  const auto major = static_cast<uint8_t>(file[6]);
  const auto minor = static_cast<uint8_t>(file[7]);
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    throw ValueError(w + ": unsupported .npy format version " + std::to_string(major) + "." +
                     std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
  const size_t len_bytes = major == 1 ? 2 : 4;
  const size_t prefix = 8 + len_bytes;
  if (file.size() < prefix) throw ValueError(w + ": truncated .npy header");
  const size_t header_len = detail::npy_read_le(file.data() + 8, static_cast<int>(len_bytes));
  if (file.size() - prefix < header_len)
    throw ValueError(w + ": truncated .npy header (it says " + std::to_string(header_len) + " bytes, the file has " +
                     std::to_string(file.size() - prefix) + ")");
  const std::string_view header(reinterpret_cast<const char*>(file.data() + prefix), header_len);

  NpyArray out;
  std::string descr;
  bool fortran = false;
  detail::NpyHeaderParser(header, what).parse(descr, fortran, out.shape);
  if (fortran)
    throw ValueError(w + ": the array is stored in Fortran order (fortran_order: True); only C order is "
                     "supported (save np.ascontiguousarray(a) instead)");
  bool swap = false;
  out.dtype = detail::npy_parse_descr(descr, swap, what);
  const size_t elem = dtype_size(out.dtype);
  const size_t bytes = detail::npy_byte_count(out.shape, elem, what);
  const size_t have = file.size() - prefix - header_len;
  if (have != bytes)
    throw ValueError(w + ": the data section has " + std::to_string(have) + " bytes, but shape " +
                     detail::npy_shape_text(out.shape) + " of " + std::string(dtype_name(out.dtype)) + " needs " +
                     std::to_string(bytes));
  const std::byte* first = file.data() + prefix + header_len;
  out.data.assign(first, first + bytes);
  if (swap) detail::npy_swap_bytes(out.data.data(), bytes, elem);
  if (out.dtype == ScalarType::Bool) {
    for (std::byte b : out.data)
      if (static_cast<uint8_t>(b) > 1)
        throw ValueError(w + ": a bool element holds the byte " + std::to_string(static_cast<uint8_t>(b)) +
                         " (only 0 and 1 are valid)");
  }
  return out;
}

/// Reads a `.npy` file.
///
/// **Errors:** `Error` if the file cannot be opened or read (with the OS's reason); the
/// errors of `parse_npy` for its contents. Every message starts with the path.
/// **Example:** tests/io/test_npy.cpp, block `npy-read`.
inline NpyArray read_npy(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw Error(path + ": cannot open for reading: " + std::strerror(errno));
  std::vector<std::byte> bytes;
  std::byte buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) bytes.insert(bytes.end(), buf, buf + n);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) throw Error(path + ": read error");
  return parse_npy(bytes, path);
}

/// Encodes an array as the bytes of a `.npy` file: format 1.0 (2.0 if the header needs
/// more than 65,535 bytes), C order, the host's byte order, header padded to 64 bytes.
///
/// **Shapes:** `data` holds `prod(shape)` elements of `dtype`, in C order.
/// **Errors:** `TypeError` for BFloat16; `ValueError` if `data` has the wrong size or a
/// dimension is negative.
inline std::vector<std::byte> to_npy_bytes(ScalarType dtype, std::span<const int64_t> shape,
                                           std::span<const std::byte> data) {
  const std::vector<int64_t> dims(shape.begin(), shape.end());
  const std::string descr = detail::npy_descr(dtype);
  const size_t bytes = detail::npy_byte_count(dims, dtype_size(dtype), "write_npy");
  if (data.size() != bytes)
    throw ValueError("write_npy: " + std::to_string(data.size()) + " bytes of data, but shape " +
                     detail::npy_shape_text(dims) + " of " + std::string(dtype_name(dtype)) + " needs " +
                     std::to_string(bytes));
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < dims.size(); ++i) { dict += i ? ", " : ""; dict += std::to_string(dims[i]); }
  dict += dims.size() == 1 ? ",), }" : "), }";
  // magic (6) + version (2) + length (2 or 4) + dict + spaces + '\n', a multiple of 64.
  auto padded = [&](size_t prefix) { return (prefix + dict.size() + 1 + 63) / 64 * 64; };
  const int major = padded(10) - 10 <= 65535 ? 1 : 2;  // 1.0 stores the length in 2 bytes
  const size_t prefix = major == 1 ? 10 : 12;
  const size_t total = padded(prefix);
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict.push_back('\n');

  std::vector<std::byte> out;
  out.reserve(total + bytes);
  static constexpr unsigned char magic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  for (unsigned char c : magic) out.push_back(std::byte{c});
  out.push_back(std::byte{static_cast<unsigned char>(major)});
  out.push_back(std::byte{0});
  const size_t hlen = dict.size();
  for (size_t i = 0; i < prefix - 8; ++i) out.push_back(std::byte{static_cast<unsigned char>((hlen >> (8 * i)) & 0xff)});
  for (char c : dict) out.push_back(static_cast<std::byte>(c));
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

/// Writes an array as a `.npy` file (see `to_npy_bytes` for the layout).
///
/// **Errors:** those of `to_npy_bytes`; `Error` if the file cannot be written.
/// **Example:** tests/io/test_npy.cpp, block `npy-write`.
inline void write_npy(const std::string& path, ScalarType dtype, std::span<const int64_t> shape,
                      std::span<const std::byte> data) {
  const std::vector<std::byte> bytes = to_npy_bytes(dtype, shape, data);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw Error(path + ": cannot open for writing: " + std::strerror(errno));
  const size_t n = std::fwrite(bytes.data(), 1, bytes.size(), f);
  const bool closed = std::fclose(f) == 0;
  if (n != bytes.size() || !closed) throw Error(path + ": write error");
}

/// Writes an `NpyArray` as a `.npy` file.
inline void write_npy(const std::string& path, const NpyArray& a) { write_npy(path, a.dtype, a.shape, a.data); }

/// Writes `values` (C order) with the given shape as a `.npy` file of `T`'s dtype.
///
/// **Example:** tests/io/test_npy.cpp, block `npy-write`.
template <element T>
void write_npy(const std::string& path, std::span<const int64_t> shape, std::span<const T> values) {
  write_npy(path, dtype_of<T>(), shape, std::as_bytes(values));
}

}  // namespace torchtpu
