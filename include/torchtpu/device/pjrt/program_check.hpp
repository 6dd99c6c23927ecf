// torchtpu/device/pjrt/program_check.hpp — checks of StableHLO text that every plugin needs
// before it sees the program: bracket nesting depth and tensor types whose element count
// overflows int64. XLA's CPU plugin (xla-cpu-pjrt 0.0.1) overflows its stack on deeply nested
// text (200,000 '[': SIGSEGV) and lets an absl::BadStatusOrAccess exception escape through the
// C API for `tensor<4611686018427387905x4xf32>`; both are bad input, which must be a clear error.
#pragma once
#include <cctype>       // std::isalnum
#include <cstdint>      // int64_t
#include <limits>       // std::numeric_limits
#include <string>       // std::string
#include <string_view>  // std::string_view

#include "../../core/errors.hpp"  // DeviceError
#include "c_api.hpp"              // capi::PJRT_Error_Code_INVALID_ARGUMENT

namespace torchtpu::pjrt {

/// Most levels of `(`, `[` and `{` that StableHLO text may nest (the TPU emulator's parser
/// has the same limit for attributes and regions).
inline constexpr int kMaxProgramNesting = 256;

/// Throws unless `mlir` nests brackets at most `kMaxProgramNesting` deep and each
/// `tensor<d0xd1x...>` type has dimensions and an element count that fit in int64. Text inside
/// string literals and `//` comments is skipped; nothing else is parsed (the plugin does that).
///
/// **Errors:** `DeviceError` with code 3 (INVALID_ARGUMENT) naming the line: "brackets nest
/// deeper than 256 levels", or "type tensor<...>: its size overflows int64".
inline void check_program_text(std::string_view mlir) {
  int depth = 0, line = 1;
  auto fail = [&](const std::string& what) {
    throw DeviceError(capi::PJRT_Error_Code_INVALID_ARGUMENT,
                      "StableHLO program: line " + std::to_string(line) + ": " + what);
  };
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const size_t n = mlir.size();
  for (size_t i = 0; i < n; ++i) {
    const char c = mlir[i];
    if (c == '\n') {
      ++line;
    } else if (c == '"') {  // a string literal, with backslash escapes
      for (++i; i < n && mlir[i] != '"'; ++i) {
        if (mlir[i] == '\\') ++i;
        else if (mlir[i] == '\n') ++line;
      }
    } else if (c == '/' && i + 1 < n && mlir[i + 1] == '/') {
      while (i + 1 < n && mlir[i + 1] != '\n') ++i;
    } else if (c == '(' || c == '[' || c == '{') {
      if (++depth > kMaxProgramNesting)
        fail("brackets nest deeper than " + std::to_string(kMaxProgramNesting) + " levels");
    } else if (c == ')' || c == ']' || c == '}') {
      if (depth > 0) --depth;
    } else if (c == 't' && mlir.substr(i, 7) == "tensor<" && (i == 0 || !(std::isalnum(static_cast<unsigned char>(mlir[i - 1])) || mlir[i - 1] == '_'))) {
      // dims: digits (or '?') each followed by 'x'; the element type follows the last 'x'.
      size_t j = i + 7;
      int64_t elements = 1;
      bool overflow = false, zero = false, big = false;
      while (j < n) {
        size_t k = j;
        int64_t d = 0;
        bool dim_big = false;  // this dimension does not fit in int64
        while (k < n && mlir[k] >= '0' && mlir[k] <= '9') {
          const int digit = mlir[k] - '0';
          if (d > (kMax - digit) / 10) dim_big = true;
          else if (!dim_big) d = d * 10 + digit;
          ++k;
        }
        if (k == j && k < n && mlir[k] == '?') ++k, d = 1;  // a dynamic dimension
        if (k == j || k >= n || mlir[k] != 'x') break;      // not a dimension: the element type
        if (dim_big) big = true;
        else if (d == 0) zero = true;
        else if (!overflow && elements > kMax / d) overflow = true;
        else if (!overflow) elements *= d;
        j = k + 1;
      }
      if (big || (overflow && !zero)) {
        size_t e = j;
        while (e < n && mlir[e] != '>' && mlir[e] != ',' && mlir[e] != '\n') ++e;
        fail("type " + std::string(mlir.substr(i, e - i)) + ">: its size overflows int64");
      }
      i = j - 1;
    }
  }
}

}  // namespace torchtpu::pjrt
