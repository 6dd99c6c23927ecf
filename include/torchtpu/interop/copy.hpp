// torchtpu/interop/copy.hpp — `CopyMode`, the caller's choice whether an export (to_torch,
// to_dlpack) may copy, and the layout rules shared by both exports: which views a consumer can
// take as they are, and the strides handed over for them.
#pragma once
#include <cstdint>  // int64_t
#include <string>   // std::string

#include "../core/dtype.hpp"  // ScalarType, dtype_name
#include "../core/shape.hpp"  // Dims, contiguous_strides, to_string

namespace torchtpu {

/// Whether `to_torch` / `to_dlpack` may copy, with the meaning of the `copy` keyword of the
/// Python array API's `__dlpack__` (array API standard 2023.12): `if_needed` = `copy=None`,
/// `never` = `copy=False`, `always` = `copy=True`.
///
/// A copy is needed for a view the consumer cannot express, a negative stride on a dim of size
/// > 1 (`flip`, a reversed `from_blob`): libtorch has no negative strides (its tensors index
/// memory from the data pointer upwards), and `from_dlpack` refuses them. A copy is also
/// needed for a tensor on a PJRT device (no host memory to share). A copy is a new contiguous host tensor with the same values; writes to
/// it are not seen by the original.
enum class CopyMode {
  never,      ///< share memory or throw ValueError (the default: an export never copies silently)
  if_needed,  ///< share memory when the consumer can express the view, else copy
  always,     ///< always export a new contiguous copy
};

namespace detail {

/// True when a consumer without negative strides cannot view `sizes`/`strides` as they are: a
/// dim of size > 1 has a negative stride (and the view has elements).
inline bool needs_positive_copy(const Dims& sizes, const Dims& strides) {
  if (numel(sizes) == 0) return false;
  for (int i = 0; i < sizes.size(); ++i)
    if (sizes[i] > 1 && strides[i] < 0) return true;
  return false;
}

/// The strides an export hands over: `strides`, with the stride of each size-1 dim (never
/// applied to an index) replaced by the row-major one; every stride of an empty view is the
/// row-major one. Nothing the view reads changes, and no exported stride is negative once
/// `needs_positive_copy` is false.
inline Dims export_strides(const Dims& sizes, const Dims& strides) {
  const Dims row_major = contiguous_strides(sizes);
  if (numel(sizes) == 0) return row_major;
  Dims s = strides;
  for (int i = 0; i < sizes.size(); ++i)
    if (sizes[i] == 1) s[i] = row_major[i];
  return s;
}

/// "the view with sizes [2, 3], strides [-3, 1] and dtype float32 has the negative stride -3
/// on dim 0 of size 2": the start of an export's refusal.
inline std::string negative_stride_text(const Dims& sizes, const Dims& strides, ScalarType dtype) {
  int d = 0;
  while (d < sizes.size() && !(sizes[d] > 1 && strides[d] < 0)) ++d;
  return "the view with sizes " + to_string(sizes) + ", strides " + to_string(strides) + " and dtype " +
         std::string(dtype_name(dtype)) + " has the negative stride " + std::to_string(strides[d]) + " on dim " +
         std::to_string(d) + " of size " + std::to_string(sizes[d]);
}

}  // namespace detail
}  // namespace torchtpu
