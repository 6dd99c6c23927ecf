// torchtpu/interop/dlpack.hpp — zero-copy exchange of tensors through DLPack's
// `DLManagedTensor` (dlpack/dlpack.h, version 0.6 or later): to_dlpack / from_dlpack.
// Needs only the DLPack header: link `torchtpu_dlpack_dep` (Meson option `dlpack`).
#pragma once
#include <cstdint>  // int64_t, uint8_t, uintptr_t
#include <cstring>  // std::memcpy
#include <limits>   // std::numeric_limits
#include <memory>   // std::make_shared, std::shared_ptr, std::unique_ptr
#include <string>   // std::string, std::to_string
#include <type_traits>  // std::underlying_type_t
#include <utility>  // std::move

#include <dlpack/dlpack.h>  // DLManagedTensor, DLTensor, DLDataType, kDLCPU

#include "../core/any_tensor.hpp"  // AnyTensor
#include "../core/dtype.hpp"       // ScalarType, element, dtype_of, dtype_name, dtype_size
#include "../core/errors.hpp"      // TypeError, ValueError, ShapeError
#include "../core/shape.hpp"       // Dims, max_rank, contiguous_strides
#include "../core/storage.hpp"     // StorageImpl, Storage
#include "../core/tensor.hpp"      // Tensor
#include "../ops/methods.hpp"       // Tensor::clone (defined with the ops)
#include "copy.hpp"                // CopyMode, export_strides

namespace torchtpu {

/// DLPack's type code for bool (`kDLBool`, added in DLPack 0.8). Debian's dlpack 0.6 header
/// lacks the enumerator, so the value is spelled here; the code is fixed by the DLPack spec.
inline constexpr uint8_t dlpack_bool_code = 6;

/// DLPack's description of a torchtpu dtype (lanes is always 1): float16/32/64 → kDLFloat,
/// bfloat16 → kDLBfloat 16, int32/int64 → kDLInt, uint8 → kDLUInt 8, bool → kDLBool 8.
constexpr DLDataType to_dlpack_dtype(ScalarType t) noexcept {
  const auto bits = static_cast<uint8_t>(dtype_size(t) * 8);
  switch (t) {
    case ScalarType::Bool: return DLDataType{dlpack_bool_code, 8, 1};
    case ScalarType::UInt8: return DLDataType{kDLUInt, 8, 1};
    case ScalarType::Int32: case ScalarType::Int64: return DLDataType{kDLInt, bits, 1};
    case ScalarType::BFloat16: return DLDataType{kDLBfloat, 16, 1};
    case ScalarType::Half: case ScalarType::Float: case ScalarType::Double: break;
  }
  return DLDataType{kDLFloat, bits, 1};
}

/// The torchtpu dtype of a DLPack dtype. **Errors:** TypeError naming code, bits and lanes and
/// listing the accepted ones.
inline ScalarType from_dlpack_dtype(DLDataType d) {
  if (d.lanes == 1) {
    if (d.code == kDLFloat && d.bits == 16) return ScalarType::Half;
    if (d.code == kDLFloat && d.bits == 32) return ScalarType::Float;
    if (d.code == kDLFloat && d.bits == 64) return ScalarType::Double;
    if (d.code == kDLBfloat && d.bits == 16) return ScalarType::BFloat16;
    if (d.code == kDLInt && d.bits == 32) return ScalarType::Int32;
    if (d.code == kDLInt && d.bits == 64) return ScalarType::Int64;
    if (d.code == kDLUInt && d.bits == 8) return ScalarType::UInt8;
    if (d.code == dlpack_bool_code && d.bits == 8) return ScalarType::Bool;
  }
  throw TypeError("from_dlpack: DLPack dtype (code " + std::to_string(d.code) + ", bits " +
                  std::to_string(d.bits) + ", lanes " + std::to_string(d.lanes) +
                  ") has no torchtpu counterpart; accepted (lanes 1): kDLFloat 16/32/64, "
                  "kDLBfloat 16, kDLInt 32/64, kDLUInt 8, kDLBool 8");
}

namespace detail {

/// What `to_dlpack` allocates: the managed tensor, the shape/stride arrays it points to, and
/// the reference that keeps the torchtpu storage alive until the consumer calls `deleter`.
struct DLPackExport {
  DLManagedTensor managed{};
  Storage storage;
  int64_t shape[max_rank] = {};
  int64_t strides[max_rank] = {};
};

inline void delete_dlpack_export(DLManagedTensor* m) {
  delete static_cast<DLPackExport*>(m->manager_ctx);
}

/// Calls the producer's deleter once, when the last torchtpu tensor viewing it goes.
struct DLPackRelease {
  DLManagedTensor* managed;
  void operator()(void*) const noexcept {
    if (managed->deleter) managed->deleter(managed);
  }
};

/// The parts of an imported tensor, before the element type is applied.
struct DLPackImport {
  Storage storage;
  ScalarType dtype;
  Dims sizes, strides;
  int64_t offset = 0;
};

/// Validates `m` and takes ownership of it (only once nothing can fail any more).
/// `expected`, when not null, is the dtype the caller asks for.
inline DLPackImport import_dlpack(DLManagedTensor* m, const ScalarType* expected) {
  if (!m) throw ValueError("from_dlpack: null DLManagedTensor");
  const DLTensor& d = m->dl_tensor;
  // Read the device type as its int: a newer DLPack's device codes lie outside this header's
  // enum, and loading such a value as DLDeviceType is undefined behaviour.
  std::underlying_type_t<DLDeviceType> device_type;
  std::memcpy(&device_type, &d.device.device_type, sizeof device_type);
  if (device_type != kDLCPU && device_type != kDLCUDAHost)
    throw ValueError("from_dlpack: the tensor is on DLPack device type " +
                     std::to_string(device_type) + " (id " + std::to_string(d.device.device_id) +
                     "); only host memory (kDLCPU = 1, kDLCUDAHost = 3) can be shared without a copy");
  DLPackImport r;
  r.dtype = from_dlpack_dtype(d.dtype);
  if (expected && *expected != r.dtype)
    throw TypeError("from_dlpack: the DLPack tensor has dtype " + std::string(dtype_name(r.dtype)) +
                    ", but Tensor<" + std::string(dtype_name(*expected)) + "> accepts only " +
                    std::string(dtype_name(*expected)));
  if (d.ndim < 0 || d.ndim > max_rank)
    throw ShapeError("from_dlpack: ndim " + std::to_string(d.ndim) + " is outside torchtpu's ranks 0..8");
  if (d.ndim > 0 && !d.shape) throw ValueError("from_dlpack: shape is null for ndim " + std::to_string(d.ndim));
  int64_t n = 1, nonzero = 1;  // nonzero: the product of the sizes other than 0
  for (int i = 0; i < d.ndim; ++i) {
    if (d.shape[i] < 0) throw ShapeError("from_dlpack: negative size " + std::to_string(d.shape[i]));
    r.sizes.push_back(d.shape[i]);
    // Every size but the zeros multiplied must fit int64 (numel() and row-major strides)
    if (d.shape[i] > 0 && __builtin_mul_overflow(nonzero, d.shape[i], &nonzero))
      throw ShapeError("from_dlpack: shape " + to_string(Dims(d.shape, d.shape + d.ndim)) +
                       " has more elements than int64 can count");
    n *= d.shape[i];
  }
  r.strides = d.strides ? Dims(d.strides, d.strides + d.ndim) : contiguous_strides(r.sizes);
  const size_t esize = dtype_size(r.dtype);
  int64_t span = n > 0 ? 1 : 0;  // elements from the first to one past the last
  for (int i = 0; i < d.ndim && n > 0; ++i) {
    if (r.strides[i] < 0)
      throw ValueError("from_dlpack: negative stride " + std::to_string(r.strides[i]) +
                       " is not supported (" + to_string(r.strides) + ")");
    int64_t extent = 0;
    if (__builtin_mul_overflow(r.sizes[i] - 1, r.strides[i], &extent) || __builtin_add_overflow(span, extent, &span) ||
        uint64_t(span) > std::numeric_limits<size_t>::max() / esize)
      throw ValueError("from_dlpack: sizes " + to_string(r.sizes) + " with strides " + to_string(r.strides) +
                       " span more bytes than the address space holds");
  }
  if (n > 0 && !d.data) throw ValueError("from_dlpack: data is null for a tensor of " + std::to_string(n) + " elements");
  // (integer arithmetic: a null `data` of an empty tensor plus byte_offset is not a pointer)
  auto* base = reinterpret_cast<char*>(reinterpret_cast<uintptr_t>(d.data) + (d.data ? d.byte_offset : 0));
  if (n > 0 && reinterpret_cast<uintptr_t>(base) % esize != 0)
    throw ValueError("from_dlpack: data + byte_offset (" + std::to_string(d.byte_offset) +
                     ") is not aligned to the " + std::to_string(esize) + "-byte element size");
  if (m->deleter == &delete_dlpack_export) {  // our own export: reuse the torchtpu storage
    const auto* ex = static_cast<const DLPackExport*>(m->manager_ctx);
    // The fields may have been edited since the export: the view must stay inside the storage.
    const auto first = reinterpret_cast<uintptr_t>(base), begin = reinterpret_cast<uintptr_t>(ex->storage->data);
    const size_t nbytes = ex->storage->nbytes;
    const bool inside = first >= begin && first - begin <= nbytes && (first - begin) % esize == 0;
    if (n > 0 && (!inside || uint64_t(span) > (nbytes - (first - begin)) / esize))
      throw ValueError("from_dlpack: a torchtpu export whose data, byte_offset, shape " + to_string(r.sizes) +
                       " or strides " + to_string(r.strides) + " were changed to reach outside its " +
                       std::to_string(nbytes) + "-byte storage");
    r.storage = ex->storage;
    r.offset = inside ? int64_t((first - begin) / esize) : 0;
    // The tensor constructor's own view check, run while `m` is still the caller's: once the
    // deleter has run, nothing may throw (the caller would free `m` a second time).
    check_view_fits(r.storage.get(), r.sizes, r.strides, r.offset, esize, dtype_name(r.dtype));
    m->deleter(m);
    return r;
  }
  auto s = std::make_shared<StorageImpl>();
  s->data = base;
  s->nbytes = size_t(span) * esize;
  check_view_fits(s.get(), r.sizes, r.strides, r.offset, esize, dtype_name(r.dtype));  // as above
  s->owner = std::shared_ptr<void>(base, DLPackRelease{m});  // owns `m` from here on
  r.storage = std::move(s);
  return r;
}

/// A new DLManagedTensor viewing `s` (kept alive until the consumer calls its deleter).
inline DLManagedTensor* export_dlpack(const Storage& s, ScalarType dtype, const Dims& sizes,
                                      const Dims& strides, int64_t offset) {
  auto ex = std::make_unique<DLPackExport>();
  ex->storage = s;
  for (int i = 0; i < sizes.size(); ++i) {
    ex->shape[i] = sizes[i];
    ex->strides[i] = strides[i];
  }
  DLTensor& d = ex->managed.dl_tensor;
  d.data = s->data ? static_cast<char*>(s->data) + offset * int64_t(dtype_size(dtype)) : nullptr;
  d.device = DLDevice{kDLCPU, 0};
  d.ndim = sizes.size();
  d.dtype = to_dlpack_dtype(dtype);
  d.shape = ex->shape;
  d.strides = ex->strides;
  d.byte_offset = 0;
  ex->managed.manager_ctx = ex.get();
  ex->managed.deleter = &delete_dlpack_export;
  return &ex.release()->managed;
}

}  // namespace detail

/// Export a tensor as a DLManagedTensor sharing its memory (no copy). The consumer owns the
/// result and must call its `deleter` exactly once; until then it keeps the torchtpu storage
/// alive, so the tensor may be destroyed first.
///
/// **Layout:** `data` points at element [0, ..., 0], `byte_offset` is 0, `strides` is always
/// set (in elements) and never negative: the stride of a size-1 dim (never applied) is the
/// row-major one; device is kDLCPU 0.
/// **Copies:** `copy` has the meaning of `__dlpack__(copy=...)` in the Python array API
/// (interop/copy.hpp): a view with a negative stride on a dim of size > 1 (`flip`) is exported
/// as a new contiguous copy with `CopyMode::if_needed` and refused with `CopyMode::never`;
/// `CopyMode::always` always exports a new contiguous copy.
/// **Devices:** a tensor on a PJRT device is an error with `CopyMode::never`; otherwise a new
/// host copy (`t.cpu()`) is exported; never a silent copy.
/// **Errors:** ValueError for an undefined tensor, and with `CopyMode::never` for a device
/// tensor or a negative stride (naming the sizes, strides, dtype and the dim).
/// **Example:** tests/interop/test_dlpack.cpp, blocks `dlpack-roundtrip` and `dlpack-flip`.
template <element T, int Rank>
DLManagedTensor* to_dlpack(const Tensor<T, Rank>& t, CopyMode copy) {
  if (!t.defined()) throw ValueError("to_dlpack: the tensor is undefined");
  if (!t.device().is_cpu()) {
    if (copy == CopyMode::never)
      throw ValueError("to_dlpack: the tensor is on " + t.device().str() +
                       "; only cpu memory is shared without a copy (pass copy_to_host = true or "
                       "CopyMode::if_needed to copy it to the host, or call cpu() first)");
    return to_dlpack(t.cpu(), CopyMode::if_needed);
  }
  if (copy == CopyMode::always) return to_dlpack(t.clone(), CopyMode::never);
  if (detail::needs_positive_copy(t.sizes(), t.strides())) {
    if (copy == CopyMode::never)
      throw ValueError("to_dlpack: " + detail::negative_stride_text(t.sizes(), t.strides(), dtype_of<T>()) +
                       ", which from_dlpack and libtorch refuse; pass CopyMode::if_needed to export a "
                       "contiguous copy (or call contiguous() first)");
    return to_dlpack(t.clone(), CopyMode::never);
  }
  return detail::export_dlpack(t.storage(), dtype_of<T>(), t.sizes(), detail::export_strides(t.sizes(), t.strides()),
                               t.storage_offset());
}

/// `to_dlpack` sharing memory, never copying a host tensor: `copy_to_host = true` allows the
/// copy of a tensor on a PJRT device to the host (as `CopyMode::if_needed`); otherwise as
/// `CopyMode::never`. **Errors:** as above.
/// **Example:** tests/interop/test_dlpack.cpp, block `dlpack-roundtrip`.
template <element T, int Rank>
DLManagedTensor* to_dlpack(const Tensor<T, Rank>& t, bool copy_to_host = false) {
  const bool device = t.defined() && !t.device().is_cpu();
  return to_dlpack(t, device && copy_to_host ? CopyMode::if_needed : CopyMode::never);
}

/// `to_dlpack` for a tensor whose dtype is known at run time; same rules.
inline DLManagedTensor* to_dlpack(const AnyTensor& t, bool copy_to_host = false) {
  return t.visit([copy_to_host](const auto& x) { return to_dlpack(x, copy_to_host); });
}
/// `to_dlpack` for a tensor whose dtype is known at run time; same rules.
inline DLManagedTensor* to_dlpack(const AnyTensor& t, CopyMode copy) {
  return t.visit([copy](const auto& x) { return to_dlpack(x, copy); });
}

/// Import a DLManagedTensor without copying. On success torchtpu owns `m` and calls
/// `m->deleter(m)` exactly once, when the last tensor viewing the memory is destroyed; on an
/// error `m` is left untouched and the caller still owns it.
///
/// **Layout:** `strides == NULL` means compact row-major; `byte_offset` is honoured (added to
/// `data`); sizes and strides are in elements. Negative strides are rejected.
/// **Dtypes:** `T` must match the DLPack dtype exactly (see `from_dlpack_dtype`).
/// **Devices:** kDLCPU and kDLCUDAHost (pinned host memory).
/// **Errors:** TypeError for a dtype that is not `T` or has no counterpart (naming both);
/// ValueError for null `m`, another device, negative strides, misaligned data, null data with
/// elements, sizes and strides spanning more than the address space, or a torchtpu export
/// whose fields were edited to reach outside its storage; ShapeError for ndim outside 0..8
/// (or not `Rank`) or sizes whose product (the non-zero ones) overflows int64.
/// **Example:** tests/interop/test_dlpack.cpp, block `dlpack-roundtrip`.
template <element T, int Rank = dynamic_rank>
Tensor<T, Rank> from_dlpack(DLManagedTensor* m) {
  if constexpr (Rank != dynamic_rank)
    if (m && m->dl_tensor.ndim != Rank)
      throw ShapeError("from_dlpack: Tensor<" + std::string(dtype_name(dtype_of<T>())) + ", " +
                       std::to_string(Rank) + "> cannot hold a tensor of ndim " +
                       std::to_string(m->dl_tensor.ndim));
  constexpr ScalarType want = dtype_of<T>();
  detail::DLPackImport r = detail::import_dlpack(m, &want);
  return Tensor<T, Rank>(std::move(r.storage), r.sizes, r.strides, r.offset);
}

/// `from_dlpack` with the dtype read at run time; same ownership rules and errors, except
/// that any of the eight dtypes is accepted.
inline AnyTensor from_dlpack(DLManagedTensor* m) {
  detail::DLPackImport r = detail::import_dlpack(m, nullptr);
  return AnyTensor::from_storage(r.dtype, std::move(r.storage), r.sizes, r.strides, r.offset);
}

}  // namespace torchtpu
