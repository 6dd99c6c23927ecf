// torchtpu/core/storage.hpp — ref-counted storage: a block of memory that knows its device and
// how to free itself (own 64-byte aligned allocation, or borrowed memory with a deleter).
#pragma once
#include <cstddef>   // size_t, std::byte
#include <cstdint>   // PTRDIFF_MAX
#include <cstdlib>   // std::aligned_alloc, std::free
#include <cstring>   // std::memset
#include <memory>    // std::shared_ptr
#include <new>       // std::bad_alloc
#include <string>    // std::to_string
#include <utility>   // std::move

#include "device.hpp"  // Device

namespace torchtpu {

/// Alignment of memory torchtpu allocates itself, in bytes (one cache line, one AVX-512 vector).
inline constexpr size_t storage_alignment = 64;

/// One block of memory. Shared by every tensor view of it through `std::shared_ptr`.
///
/// `data` is the host address (null for memory on a PJRT device, where `device_handle` holds
/// the device-side object instead). `owner` keeps the memory alive and frees it when the last
/// reference goes: our own `aligned_alloc`, a `torch::Tensor`'s storage, a DLPack capsule, a
/// PJRT buffer. Either `owner` or nothing (a view of memory the caller guarantees).
struct StorageImpl {
  /// Host address of the memory (null on a device).
  void* data = nullptr;
  /// Size of the memory in bytes.
  size_t nbytes = 0;
  /// Device the memory is on.
  Device device{};
  std::shared_ptr<void> owner;          ///< frees the memory when the last reference drops
  std::shared_ptr<void> device_handle;  ///< device-side buffer (PJRT), null on the cpu
  /// For device memory: copies the whole buffer (dense, row-major, `nbytes`) to `dst` on the
  /// host; reads `device_handle` (a plain function pointer: storage stays cheap to include).
  void (*download)(const StorageImpl& self, void* dst) = nullptr;
};

using Storage = std::shared_ptr<StorageImpl>;

/// A failed host allocation: a `std::bad_alloc` that says how many bytes were asked for.
class AllocationError : public std::bad_alloc {
 public:
  /// The error for a failed request of `nbytes` bytes.
  explicit AllocationError(size_t nbytes)
      : msg_("cannot allocate " + std::to_string(nbytes) + " bytes of host memory (out of memory)") {}
  /// "cannot allocate N bytes of host memory (out of memory)".
  const char* what() const noexcept override { return msg_.c_str(); }

 private:
  std::string msg_;
};

/// Allocate `nbytes` of host memory, 64-byte aligned. Never returns null for nbytes > 0.
/// **Errors:** AllocationError (a std::bad_alloc naming the size) when the memory is not there
/// or `nbytes` exceeds PTRDIFF_MAX.
inline Storage allocate_storage(size_t nbytes) {
  if (nbytes > static_cast<size_t>(PTRDIFF_MAX) - storage_alignment) throw AllocationError(nbytes);
  auto s = std::make_shared<StorageImpl>();
  const size_t rounded = (nbytes + storage_alignment - 1) / storage_alignment * storage_alignment;
  void* p = rounded ? std::aligned_alloc(storage_alignment, rounded) : nullptr;
  if (rounded && !p) throw AllocationError(nbytes);
  s->data = p;
  s->nbytes = nbytes;
  s->owner = std::shared_ptr<void>(p, [](void* q) { std::free(q); });
  return s;
}

/// Wrap memory owned elsewhere. `deleter(data)` runs exactly once, when the last tensor
/// referring to this storage is destroyed. Pass a no-op deleter for memory that outlives
/// every tensor.
template <class Deleter>
Storage borrow_storage(void* data, size_t nbytes, Deleter deleter, Device device = Device{}) {
  auto s = std::make_shared<StorageImpl>();
  s->data = data;
  s->nbytes = nbytes;
  s->device = device;
  s->owner = std::shared_ptr<void>(data, std::move(deleter));
  return s;
}

}  // namespace torchtpu
