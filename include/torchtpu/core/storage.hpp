// torchtpu/core/storage.hpp — ref-counted storage: a block of memory that knows its device and
// how to free itself (own 64-byte aligned allocation, or borrowed memory with a deleter).
#pragma once
#include <cstddef>   // size_t, std::byte
#include <cstdint>   // PTRDIFF_MAX
#include <cstdlib>   // std::aligned_alloc, std::free
#include <cstring>   // std::memset
#include <map>       // std::map
#include <memory>    // std::shared_ptr, std::allocate_shared
#include <mutex>     // std::mutex, std::lock_guard
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

/// A cache of 64-byte aligned host blocks that a loaded model's forward passes allocate from
/// (jit::Graph installs one with `HostBlockPool::Scope` around each run): a block released by
/// the last tensor using it goes back to the pool, and a later request of a size up to it (at
/// most twice as small) takes it again, so from the second forward pass on with the same shapes
/// the pass allocates nothing from the heap for its tensors and their bookkeeping (storage
/// record, reference counts), and large buffers are not unmapped and page-faulted in again on
/// every call. Memory: the cached blocks never exceed twice the most bytes the pool had handed
/// out at once (its peak); the rest go back to the heap. A block released after the pool's owner is
/// gone still returns to the pool (each block keeps it alive); the pool frees its cached blocks
/// when the last reference goes. Thread-safe (one mutex: tensors may be released on any thread).
class HostBlockPool {
 public:
  HostBlockPool() = default;
  HostBlockPool(const HostBlockPool&) = delete;
  HostBlockPool& operator=(const HostBlockPool&) = delete;
  ~HostBlockPool() {
    for (auto& [bytes, head] : free_)
      while (head) {
        void* next = *static_cast<void**>(head);
        std::free(head);
        head = next;
      }
  }

  /// A block of at least `bytes` (a multiple of `storage_alignment`, > 0): a cached one of
  /// size in [bytes, 2 bytes] (exactly `bytes` when `exact`), else a new one. Writes its size
  /// to `got`.
  /// **Errors:** AllocationError when the heap has no room.
  void* take(size_t bytes, size_t& got, bool exact = false) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      // a block of exactly this size first: a smaller request that took the larger block a
      // later request needed made that one miss on every pass (the allocations per forward
      // kept a steady count instead of reaching zero)
      auto it = free_.find(bytes);
      if (it == free_.end() || !it->second) it = free_.lower_bound(bytes);
      for (; it != free_.end() && (exact ? it->first == bytes : it->first / 2 <= bytes); ++it) {
        if (!it->second) continue;
        void* p = it->second;
        it->second = *static_cast<void**>(p);
        got = it->first;
        cached_ -= got;
        note_taken(got);
        return p;
      }
    }
    void* p = std::aligned_alloc(storage_alignment, bytes);
    if (!p) throw AllocationError(bytes);
    got = bytes;
    std::lock_guard<std::mutex> lock(mu_);
    note_taken(got);
    return p;
  }
  /// Returns block `p` of size `bytes` (as `take` reported it): cached while the cache stays
  /// within twice the peak, freed otherwise. (A request takes a block at most twice its size,
  /// so the blocks a repeated sequence of requests needs never exceed twice the peak: in a
  /// steady state nothing is freed and nothing allocated.)
  void give(void* p, size_t bytes) noexcept {
    bool keep = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      out_ -= bytes;
      if (cached_ + bytes <= 2 * peak_) {
        try {
          void*& head = free_[bytes];  // a new node only for a size not seen before
          *static_cast<void**>(p) = head;
          head = p;
          cached_ += bytes;
          keep = true;
        } catch (...) {  // no room for the size's node: free the block instead
        }
      }
    }
    if (!keep) std::free(p);
  }
  /// Bytes cached (free, kept for reuse).
  size_t cached_bytes() {
    std::lock_guard<std::mutex> lock(mu_);
    return cached_;
  }
  /// Bytes handed out and not yet returned.
  size_t bytes_in_use() {
    std::lock_guard<std::mutex> lock(mu_);
    return out_;
  }
  /// The most bytes handed out at once.
  size_t peak_bytes() {
    std::lock_guard<std::mutex> lock(mu_);
    return peak_;
  }

  /// While alive, `allocate_storage` on this thread takes its memory from `pool` (scopes nest;
  /// the innermost wins). Allocations on other threads (the engine's workers) are not affected.
  class Scope {
   public:
    /// Installs `pool` (which must outlive the scope) as this thread's pool.
    explicit Scope(const std::shared_ptr<HostBlockPool>& pool) noexcept : prev_(current()) { current() = &pool; }
    ~Scope() { current() = prev_; }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    const std::shared_ptr<HostBlockPool>* prev_;
  };
  /// The pool of the innermost live Scope on this thread, or null.
  static const std::shared_ptr<HostBlockPool>*& current() noexcept {
    thread_local const std::shared_ptr<HostBlockPool>* p = nullptr;
    return p;
  }

  /// A standard allocator over `pool` (for the storage record and reference counts).
  template <class T>
  struct Allocator {
    using value_type = T;  ///< what it allocates
    std::shared_ptr<HostBlockPool> pool;  ///< where the memory comes from (kept alive)
    /// An allocator over `p`.
    explicit Allocator(std::shared_ptr<HostBlockPool> p) noexcept : pool(std::move(p)) {}
    /// The same pool, another element type.
    template <class U>
    Allocator(const Allocator<U>& o) noexcept : pool(o.pool) {}
    /// Room for `n` objects (a block of that size rounded to 64 bytes). **Errors:** AllocationError.
    T* allocate(size_t n) {
      static_assert(alignof(T) <= storage_alignment);
      size_t got = 0;  // == rounded: `deallocate` knows only n, so records reuse exact sizes
      return static_cast<T*>(pool->take(rounded(n * sizeof(T)), got, true));
    }
    /// Returns what `allocate(n)` gave.
    void deallocate(T* p, size_t n) noexcept { pool->give(p, rounded(n * sizeof(T))); }
    /// Equal when over the same pool.
    template <class U>
    bool operator==(const Allocator<U>& o) const noexcept { return pool == o.pool; }

   private:
    static size_t rounded(size_t b) noexcept {
      return (b + storage_alignment - 1) / storage_alignment * storage_alignment;
    }
  };

 private:
  void note_taken(size_t bytes) {
    out_ += bytes;
    if (out_ > peak_) peak_ = out_;
  }
  std::mutex mu_;
  // size -> the cached blocks of that size, a list linked through their first word (so caching
  // a block allocates nothing once its size has been seen)
  std::map<size_t, void*> free_;
  size_t cached_ = 0, out_ = 0, peak_ = 0;
};

/// Allocate `nbytes` of host memory, 64-byte aligned. Never returns null for nbytes > 0. Inside
/// a `HostBlockPool::Scope` on this thread, the memory and the storage record come from that
/// pool and go back to it.
/// **Errors:** AllocationError (a std::bad_alloc naming the size) when the memory is not there
/// or `nbytes` exceeds PTRDIFF_MAX.
inline Storage allocate_storage(size_t nbytes) {
  if (nbytes > static_cast<size_t>(PTRDIFF_MAX) - storage_alignment) throw AllocationError(nbytes);
  const size_t rounded = (nbytes + storage_alignment - 1) / storage_alignment * storage_alignment;
  if (const std::shared_ptr<HostBlockPool>* pool = HostBlockPool::current(); pool && *pool && rounded) {
    const HostBlockPool::Allocator<StorageImpl> al(*pool);
    auto s = std::allocate_shared<StorageImpl>(al);
    size_t got = 0;
    void* p = (*pool)->take(rounded, got);
    struct Give {
      std::shared_ptr<HostBlockPool> pool;
      size_t bytes;
      void operator()(void* q) const noexcept { pool->give(q, bytes); }
    };
    try {
      s->owner = std::shared_ptr<void>(p, Give{*pool, got}, HostBlockPool::Allocator<char>(*pool));
    } catch (...) {
      (*pool)->give(p, got);
      throw;
    }
    s->data = p;
    s->nbytes = nbytes;
    return s;
  }
  auto s = std::make_shared<StorageImpl>();
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
