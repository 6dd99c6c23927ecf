// torchtpu/core/any_tensor.hpp — `torchtpu::AnyTensor`: a tensor whose dtype is known only at
// run time (a std::variant over `Tensor<T>` for the eight element types).
#pragma once
#include <cstdint>      // int64_t
#include <string>       // std::string
#include <type_traits>  // std::remove_cvref_t
#include <utility>      // std::forward, std::move
#include <variant>      // std::variant, std::visit, std::get_if

#include "dtype.hpp"    // ScalarType, element, dtype_name, dtype_size, bfloat16, half
#include "errors.hpp"   // TypeError
#include "storage.hpp"  // Storage
#include "tensor.hpp"   // Tensor

namespace torchtpu {

/// A type-erased tensor handle: one `Tensor<T>` whose element type `T` is chosen at run time.
///
/// It is what run-time graphs (the TorchScript importer) and dtype-agnostic interop
/// (`from_torch(t)`, `from_dlpack(m)`) pass around. It adds no behaviour of its own: read the
/// metadata directly, and get at the typed tensor with `get<T>()` or `visit(f)`.
/// Copying an AnyTensor copies the handle, never the data (like `Tensor`).
///
/// **Shapes:** any rank up to 8 (dynamic rank only).
/// **Dtypes:** the eight of `ScalarType`; the variant's alternatives are listed in the order
/// of `ScalarType`, so `variant().index() == size_t(dtype())`.
/// **Errors:** `get<T>()` throws TypeError naming the requested and the held dtype;
/// `from_storage` throws ShapeError for a rank over 8.
/// **Example:** tests/interop/test_torch.cpp, block `any-tensor`.
class AnyTensor {
 public:
  /// The tensor types an AnyTensor can hold, indexed by `ScalarType`.
  using Variant = std::variant<Tensor<bool>, Tensor<uint8_t>, Tensor<int32_t>, Tensor<int64_t>,
                               Tensor<half>, Tensor<bfloat16>, Tensor<float>, Tensor<double>>;

  /// An undefined tensor (`defined()` is false) whose dtype reads as float32.
  AnyTensor() : v_(std::in_place_type<Tensor<float>>) {}

  /// Wrap a typed tensor (any static rank; the handle is converted to dynamic rank).
  template <element T, int Rank>
  AnyTensor(const Tensor<T, Rank>& t)  // NOLINT: implicit, so a Tensor passes where AnyTensor is asked
      : v_(std::in_place_type<Tensor<T>>, Tensor<T>(t)) {}

  /// Call `f(const Tensor<T>&)` with the held tensor (std::visit); `f` must return the same
  /// type for every `T` (a generic lambda usually does).
  template <class F>
  decltype(auto) visit(F&& f) const { return std::visit(std::forward<F>(f), v_); }
  /// Mutable form of `visit`: `f(Tensor<T>&)` with the held tensor.
  template <class F>
  decltype(auto) visit(F&& f) { return std::visit(std::forward<F>(f), v_); }

  /// Call `f(std::type_identity<T>{})` with the element type of the run-time `dtype`; the
  /// tool for code that creates a tensor of a dtype read at run time.
  template <class F>
  static decltype(auto) dispatch(ScalarType dtype, F&& f) {
    switch (dtype) {
      case ScalarType::Bool: return f(std::type_identity<bool>{});
      case ScalarType::UInt8: return f(std::type_identity<uint8_t>{});
      case ScalarType::Int32: return f(std::type_identity<int32_t>{});
      case ScalarType::Int64: return f(std::type_identity<int64_t>{});
      case ScalarType::Half: return f(std::type_identity<half>{});
      case ScalarType::BFloat16: return f(std::type_identity<bfloat16>{});
      case ScalarType::Float: return f(std::type_identity<float>{});
      case ScalarType::Double: break;
    }
    return f(std::type_identity<double>{});
  }

  /// A tensor of run-time dtype `dtype` viewing `storage` (sizes, strides and offset in
  /// elements, as for `Tensor`). Nothing is copied or checked against `storage->nbytes`.
  static AnyTensor from_storage(ScalarType dtype, Storage storage, const Dims& sizes,
                                const Dims& strides, int64_t offset) {
    return dispatch(dtype, [&]<class T>(std::type_identity<T>) {
      return AnyTensor(Tensor<T>(std::move(storage), sizes, strides, offset));
    });
  }

  // ---- metadata (the same meaning as on Tensor) ----------------------------------------
  /// The held tensor's element type.
  ScalarType dtype() const noexcept { return static_cast<ScalarType>(v_.index()); }
  /// Bytes per element.
  size_t element_size() const noexcept { return dtype_size(dtype()); }
  /// False for a default-constructed AnyTensor.
  bool defined() const noexcept { return visit([](const auto& t) { return t.defined(); }); }
  /// Sizes of each dim, as `Tensor::sizes()`.
  const Dims& sizes() const noexcept { return visit([](const auto& t) -> const Dims& { return t.sizes(); }); }
  /// Same as `sizes()`.
  const Dims& shape() const noexcept { return sizes(); }
  /// Strides of each dim, in elements.
  const Dims& strides() const noexcept {
    return visit([](const auto& t) -> const Dims& { return t.strides(); });
  }
  /// Number of dims.
  int dim() const noexcept { return sizes().size(); }
  int64_t numel() const { return torchtpu::numel(sizes()); }  ///< **Errors:** as Tensor::numel
  /// Offset of element [0, ..., 0] in the storage, in elements.
  int64_t storage_offset() const noexcept {
    return visit([](const auto& t) { return t.storage_offset(); });
  }
  /// Device the data lives on.
  Device device() const noexcept { return visit([](const auto& t) { return t.device(); }); }
  /// The shared storage.
  const Storage& storage() const noexcept {
    return visit([](const auto& t) -> const Storage& { return t.storage(); });
  }
  /// Address of element [0, ..., 0] as untyped memory (null when undefined or on a device).
  void* data_ptr() const noexcept {
    return visit([](const auto& t) -> void* { return static_cast<void*>(t.data_ptr()); });
  }
  /// True if the strides are row-major dense (size-1 dims ignored).
  bool is_contiguous() const noexcept { return visit([](const auto& t) { return t.is_contiguous(); }); }

  // ---- typed access ------------------------------------------------------------------
  /// True when the held element type is `T`.
  template <element T>
  bool is() const noexcept { return std::holds_alternative<Tensor<T>>(v_); }

  /// The typed tensor. **Errors:** TypeError ("expected a float32 tensor, got int64") when
  /// the held dtype is not `T`; no conversion is made (use `visit` and a cast for that).
  template <element T>
  const Tensor<T>& get() const {
    if (const auto* p = std::get_if<Tensor<T>>(&v_)) return *p;
    throw TypeError("AnyTensor::get: expected a " + std::string(dtype_name(dtype_of<T>())) +
                    " tensor, got " + std::string(dtype_name(dtype())));
  }
  /// Mutable form of `get`. **Errors:** TypeError when the held dtype is not `T`.
  template <element T>
  Tensor<T>& get() {
    if (auto* p = std::get_if<Tensor<T>>(&v_)) return *p;
    throw TypeError("AnyTensor::get: expected a " + std::string(dtype_name(dtype_of<T>())) +
                    " tensor, got " + std::string(dtype_name(dtype())));
  }
  /// The typed tensor, or null when the held dtype is not `T`.
  template <element T>
  const Tensor<T>* get_if() const noexcept { return std::get_if<Tensor<T>>(&v_); }

  /// The underlying `std::variant` of typed tensors.
  const Variant& variant() const noexcept { return v_; }

 private:
  Variant v_;
};

}  // namespace torchtpu
