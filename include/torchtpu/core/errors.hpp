// torchtpu/core/errors.hpp — the exception types every part of torchtpu throws.
#pragma once
#include <stdexcept>  // std::runtime_error, std::out_of_range
#include <string>     // std::string

namespace torchtpu {

/// Base of all torchtpu errors; catch this to catch any of them.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Shapes that do not fit an op. The message names the op and every shape involved,
/// e.g. `matmul: [2, 3] @ [4, 5]: contracted sizes 3 and 4 differ`.
struct ShapeError : Error {
  using Error::Error;
};

/// A dtype an op does not support, or a dtype that does not match what was asked for.
struct TypeError : Error {
  using Error::Error;
};

/// An index out of range (`at()`, `select`, `narrow`, a dim argument).
struct IndexError : Error {
  using Error::Error;
};

/// Invalid argument values that are not shapes, dtypes or indices (bad device strings, ...).
struct ValueError : Error {
  using Error::Error;
};

/// An error reported by a device (PJRT): keeps PJRT's error code and message.
struct DeviceError : Error {
  /// `code` mirrors `PJRT_Error_Code` (0 = OK, 3 = INVALID_ARGUMENT, 12 = UNIMPLEMENTED, ...).
  DeviceError(int code, const std::string& message)
      : Error("device error (PJRT code " + std::to_string(code) + "): " + message), code_(code) {}
  /// PJRT error code (`PJRT_Error_Code`, absl numbering).
  int code() const noexcept { return code_; }

 private:
  int code_;
};

/// A requested device kind is not available; the message lists every place searched.
struct DeviceUnavailable : Error {
  using Error::Error;
};

/// A model uses operators the registry lacks; the message lists each kind, its count and
/// the first graph location.
struct UnsupportedOperator : Error {
  using Error::Error;
};

}  // namespace torchtpu
