// torchtpu/interop/torch.hpp — zero-copy conversion between torchtpu tensors and libtorch's
// `at::Tensor` (from_torch / to_torch) and the dtype mapping between them. Needs libtorch:
// link `torchtpu_torch_dep` (Meson option `torch`); nothing else in torchtpu includes this.
#pragma once
#include <cstdint>  // int64_t
#include <memory>   // std::unique_ptr, std::get_deleter
#include <sstream>  // std::ostringstream (layout names)
#include <string>   // std::string
#include <utility>  // std::move

#include <ATen/core/Tensor.h>      // at::Tensor, at::TensorOptions
#include <c10/core/Storage.h>      // c10::Storage
#include <c10/core/TensorImpl.h>   // c10::TensorImpl
#include <c10/util/intrusive_ptr.h>  // c10::make_intrusive

#include "../core/any_tensor.hpp"  // AnyTensor
#include "../core/dtype.hpp"       // ScalarType, element, dtype_name
#include "../core/errors.hpp"      // TypeError, ValueError, ShapeError
#include "../core/storage.hpp"     // StorageImpl, Storage
#include "../core/tensor.hpp"      // Tensor
#include "../ops/methods.hpp"       // Tensor::clone (defined with the ops)
#include "copy.hpp"                // CopyMode, export_strides

namespace torchtpu {

/// libtorch's dtype for a torchtpu dtype (each of the eight maps one to one):
/// Bool↔kBool, UInt8↔kByte, Int32↔kInt, Int64↔kLong, Half↔kHalf, BFloat16↔kBFloat16,
/// Float↔kFloat, Double↔kDouble.
constexpr c10::ScalarType to_torch_dtype(ScalarType t) noexcept {
  switch (t) {
    case ScalarType::Bool: return c10::ScalarType::Bool;
    case ScalarType::UInt8: return c10::ScalarType::Byte;
    case ScalarType::Int32: return c10::ScalarType::Int;
    case ScalarType::Int64: return c10::ScalarType::Long;
    case ScalarType::Half: return c10::ScalarType::Half;
    case ScalarType::BFloat16: return c10::ScalarType::BFloat16;
    case ScalarType::Float: return c10::ScalarType::Float;
    case ScalarType::Double: break;
  }
  return c10::ScalarType::Double;
}

/// The torchtpu dtype of a libtorch dtype. **Errors:** TypeError naming the libtorch dtype and
/// listing the eight accepted ones (complex, int8, int16, quantized, ... have no counterpart).
inline ScalarType from_torch_dtype(c10::ScalarType t) {
  switch (t) {
    case c10::ScalarType::Bool: return ScalarType::Bool;
    case c10::ScalarType::Byte: return ScalarType::UInt8;
    case c10::ScalarType::Int: return ScalarType::Int32;
    case c10::ScalarType::Long: return ScalarType::Int64;
    case c10::ScalarType::Half: return ScalarType::Half;
    case c10::ScalarType::BFloat16: return ScalarType::BFloat16;
    case c10::ScalarType::Float: return ScalarType::Float;
    case c10::ScalarType::Double: return ScalarType::Double;
    default: break;
  }
  throw TypeError(std::string("torch dtype ") + c10::toString(t) +
                  " has no torchtpu counterpart; accepted: Float, Double, BFloat16, Half, Int, "
                  "Long, Bool, Byte");
}

namespace detail {

/// What a torchtpu storage holds when it views libtorch memory: one reference to the
/// `c10::StorageImpl`, dropped when the last torchtpu tensor goes (the deleter of
/// `StorageImpl::owner`, found again with `std::get_deleter`).
struct TorchStorageRef {
  c10::Storage storage;
  void operator()(void*) noexcept { storage = c10::Storage(); }
};

/// Context deleter of the `c10::DataPtr` that `to_torch` makes: drops the torchtpu storage.
inline void release_torchtpu_storage(void* ctx) { delete static_cast<Storage*>(ctx); }

/// The torchtpu storage behind `st` when `to_torch` made it, else null.
inline const Storage* torchtpu_storage_of(const c10::Storage& st) noexcept {
  if (!st) return nullptr;
  const c10::DataPtr& dp = st.data_ptr();
  if (dp.get_deleter() != &release_torchtpu_storage) return nullptr;
  return static_cast<const Storage*>(dp.get_context());
}

/// Checks everything but the dtype; returns the torchtpu storage viewing `t`'s memory.
inline Storage storage_from_torch(const at::Tensor& t) {
  if (!t.defined()) throw ValueError("from_torch: the torch tensor is undefined");
  if (t.is_quantized())
    throw TypeError(std::string("from_torch: quantized tensors (dtype ") + c10::toString(t.scalar_type()) +
                    ") are not supported; accepted: Float, Double, BFloat16, Half, Int, Long, Bool, "
                    "Byte (call dequantize() first)");
  if (t.layout() != c10::kStrided || t.is_nested()) {
    std::ostringstream layout;
    layout << t.layout();
    throw ValueError("from_torch: layout " + layout.str() + (t.is_nested() ? " (nested)" : "") +
                     " is not supported; only strided (dense) tensors are (call to_dense() first)");
  }
  if (!t.device().is_cpu())
    throw ValueError("from_torch: the torch tensor is on " + t.device().str() +
                     "; only cpu tensors can be shared without a copy (call .cpu() first)");
  if (t.is_neg() || t.is_conj())
    throw ValueError("from_torch: the torch tensor has a lazy negation/conjugation bit; call "
                     "resolve_neg()/resolve_conj() first");
  if (t.dim() > max_rank)
    throw ShapeError("from_torch: rank " + std::to_string(t.dim()) + " exceeds torchtpu's maximum rank 8");
  if (!t.has_storage())
    throw ValueError("from_torch: the torch tensor has no storage (a functional or lazy tensor)");
  const c10::Storage& st = t.storage();
  if (const Storage* mine = torchtpu_storage_of(st)) return *mine;  // made by to_torch: unwrap
  auto s = std::make_shared<StorageImpl>();
  s->data = st.data_ptr().get();
  s->nbytes = st.nbytes();
  s->owner = std::shared_ptr<void>(s->data, TorchStorageRef{st});
  return s;
}

/// A CPU at::Tensor viewing `s` (kept alive by the tensor's DataPtr) with the given geometry.
inline at::Tensor torch_tensor_on(const Storage& s, ScalarType dtype, const Dims& sizes,
                                  const Dims& strides, int64_t offset) {
  const caffe2::TypeMeta meta = c10::scalarTypeToTypeMeta(to_torch_dtype(dtype));
  c10::Storage st;
  if (auto* ref = std::get_deleter<TorchStorageRef>(s->owner); ref && ref->storage) {
    st = ref->storage;  // memory from from_torch: hand back libtorch's own storage
  } else {
    auto keep = std::make_unique<Storage>(s);
    c10::DataPtr dp(s->data, keep.get(), &release_torchtpu_storage, c10::Device(c10::kCPU));
    keep.release();  // owned by `dp` from here on
    st = c10::Storage(c10::Storage::use_byte_size_t(), s->nbytes, std::move(dp),
                      /*allocator=*/nullptr, /*resizable=*/false);
  }
  at::Tensor r = at::detail::make_tensor<c10::TensorImpl>(
      std::move(st), c10::DispatchKeySet(c10::DispatchKey::CPU), meta);
  r.unsafeGetTensorImpl()->set_sizes_and_strides(c10::IntArrayRef(sizes.data(), size_t(sizes.size())),
                                                c10::IntArrayRef(strides.data(), size_t(strides.size())),
                                                offset);
  return r;
}

}  // namespace detail

/// A torchtpu view of a libtorch CPU tensor's memory: same data pointer, sizes, strides and
/// storage offset; nothing is copied. The view holds a reference to the torch storage
/// (`c10::StorageImpl`), so either side may be destroyed first. Writes through either side are
/// visible on the other. Autograd is not tracked (like `t.detach()`). Resizing the torch tensor
/// (`resize_`, `set_`) while a view lives gives the view stale memory, as for torch's own views.
///
/// **Shapes:** any sizes, strides and offset, rank <= 8.
/// **Dtypes:** `T` must match `t.scalar_type()` (table in docs/interop.md); no conversion.
/// **Errors:** TypeError when the dtype is not `T` (naming both) or is quantized/complex;
/// ValueError for an undefined, non-CPU, sparse/mkldnn/nested or neg-bit tensor;
/// ShapeError for rank > 8 (or `Rank` not matching).
/// **Example:** tests/interop/test_torch.cpp, block `from-torch`.
template <element T, int Rank = dynamic_rank>
Tensor<T, Rank> from_torch(const at::Tensor& t) {
  Storage s = detail::storage_from_torch(t);
  if (t.scalar_type() != to_torch_dtype(dtype_of<T>()))
    throw TypeError(std::string("from_torch: the torch tensor has dtype ") + c10::toString(t.scalar_type()) +
                    ", but Tensor<" + std::string(dtype_name(dtype_of<T>())) + "> accepts only " +
                    c10::toString(to_torch_dtype(dtype_of<T>())));
  return Tensor<T, Rank>(std::move(s), Dims(t.sizes().begin(), t.sizes().end()),
                         Dims(t.strides().begin(), t.strides().end()), t.storage_offset());
}

/// `from_torch` with the dtype read at run time. Same sharing and errors as `from_torch<T>`,
/// except that any of the eight dtypes is accepted.
inline AnyTensor from_torch(const at::Tensor& t) {
  Storage s = detail::storage_from_torch(t);
  const ScalarType dt = from_torch_dtype(t.scalar_type());
  return AnyTensor::from_storage(dt, std::move(s), Dims(t.sizes().begin(), t.sizes().end()),
                                 Dims(t.strides().begin(), t.strides().end()), t.storage_offset());
}

/// A libtorch CPU tensor sharing `t`'s memory: same data pointer, sizes, strides and storage
/// offset (the stride of a size-1 dim, never applied, is handed over as the row-major one).
/// The at::Tensor holds the torchtpu storage (its `DataPtr` context), so either side may be
/// destroyed first. A tensor that `from_torch` made is handed back on libtorch's original
/// storage.
///
/// **Copies:** `copy` (interop/copy.hpp) says whether a copy may be made instead. libtorch has
/// no negative strides: a view with a negative stride on a dim of size > 1 (`flip`) is copied
/// into a new contiguous tensor with `CopyMode::if_needed`, refused with `CopyMode::never`.
/// `CopyMode::always` always exports a new contiguous copy. A copy does not share memory.
/// **Devices:** a tensor on a PJRT device (tpu, cuda, emulator) has no host memory to share:
/// an error with `CopyMode::never`, else copied to the host (`t.cpu()`) and exported from there.
/// **Dtypes:** the eight (table in docs/interop.md).
/// **Errors:** ValueError for an undefined tensor, and with `CopyMode::never` for a device
/// tensor or a negative stride (naming the sizes, strides, dtype and the dim).
/// **Example:** tests/interop/test_torch.cpp, blocks `to-torch` and `to-torch-flip`.
template <element T, int Rank>
at::Tensor to_torch(const Tensor<T, Rank>& t, CopyMode copy) {
  if (!t.defined()) throw ValueError("to_torch: the tensor is undefined");
  if (!t.device().is_cpu()) {
    if (copy == CopyMode::never)
      throw ValueError("to_torch: the tensor is on " + t.device().str() +
                       "; only cpu memory is shared without a copy (pass copy_to_host = true or "
                       "CopyMode::if_needed to copy it to the host, or call cpu() first)");
    return to_torch(t.cpu(), CopyMode::if_needed);  // already a copy: never copied twice unless reversed
  }
  if (copy == CopyMode::always) return to_torch(t.clone(), CopyMode::never);
  if (detail::needs_positive_copy(t.sizes(), t.strides())) {
    if (copy == CopyMode::never)
      throw ValueError("to_torch: " + detail::negative_stride_text(t.sizes(), t.strides(), dtype_of<T>()) +
                       ", which libtorch cannot express; pass CopyMode::if_needed to export a contiguous "
                       "copy (or call contiguous() first)");
    return to_torch(t.clone(), CopyMode::never);
  }
  return detail::torch_tensor_on(t.storage(), dtype_of<T>(), t.sizes(), detail::export_strides(t.sizes(), t.strides()),
                                 t.storage_offset());
}

/// `to_torch` sharing memory, never copying a host tensor: `copy_to_host = true` allows the
/// copy of a tensor on a PJRT device to the host (as `CopyMode::if_needed`); otherwise as
/// `CopyMode::never`. **Errors:** as above.
/// **Example:** tests/interop/test_torch.cpp, block `to-torch`.
template <element T, int Rank>
at::Tensor to_torch(const Tensor<T, Rank>& t, bool copy_to_host = false) {
  const bool device = t.defined() && !t.device().is_cpu();
  return to_torch(t, device && copy_to_host ? CopyMode::if_needed : CopyMode::never);
}

/// `to_torch` for a tensor whose dtype is known at run time; same rules.
inline at::Tensor to_torch(const AnyTensor& t, bool copy_to_host = false) {
  return t.visit([copy_to_host](const auto& x) { return to_torch(x, copy_to_host); });
}
/// `to_torch` for a tensor whose dtype is known at run time; same rules.
inline at::Tensor to_torch(const AnyTensor& t, CopyMode copy) {
  return t.visit([copy](const auto& x) { return to_torch(x, copy); });
}

}  // namespace torchtpu
