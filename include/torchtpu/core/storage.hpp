// torchtpu/core/storage.hpp — ref-counted storage: a block of memory that knows its device and
// how to free itself (own 64-byte aligned allocation, or borrowed memory with a deleter).
#pragma once
#include <algorithm>  // std::min
#include <cstddef>   // size_t, std::byte
#include <cstdint>   // PTRDIFF_MAX
#include <cstdlib>   // std::aligned_alloc, std::free
#include <cstring>   // std::memset
#include <exception>  // std::uncaught_exceptions
#include <map>       // std::map
#include <memory>    // std::shared_ptr, std::allocate_shared
#include <mutex>     // std::mutex, std::lock_guard
#include <new>       // std::bad_alloc
#include <string>    // std::to_string
#include <utility>   // std::move
#include <vector>    // std::vector (a pass's requests)

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
/// most twice as small) takes it again; a pass follows the previous one's choices request by
/// request (see `take`), so from the second forward pass on with the same shapes the pass
/// allocates nothing from the heap for its tensors and their bookkeeping (storage record,
/// reference counts), and large buffers are not unmapped and page-faulted in again on every
/// call. Memory: the cached blocks never exceed four times the most bytes the pool had handed
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
  /// to `got`. With `planned` (a request of the pass this thread runs, see `Scope`), each
  /// request of a pass takes the block the matching request of the previous complete pass took
  /// (the next one of as many bytes, up to `plan_lookahead` requests on), when that block is
  /// free: a pass repeating the previous one takes exactly its blocks, so it allocates nothing. (Picking among the free blocks afresh,
  /// a request could take the larger block a later one needed, which then missed: the
  /// allocations per forward kept falling for several passes, or settled above zero.)
  /// **Errors:** AllocationError when the heap has no room.
  void* take(size_t bytes, size_t& got, bool exact = false, bool planned = false) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      void* p = nullptr;
      if (planned) {
        // the plan's next request of this size, a few ahead at most: the previous pass may have
        // made requests this one does not (a weight packed once, at the first call)
        size_t i = next_;
        const size_t stop = std::min(plan_.size(), next_ + plan_lookahead);
        while (i < stop && plan_[i].bytes != bytes) ++i;
        if (i < stop) {
          next_ = i + 1;
          if (unlink(plan_[i].block, plan_[i].size)) {
            p = plan_[i].block;
            got = plan_[i].size;
          }
        }
      }
      if (!p) {
        // a block of exactly this size first, then the smallest that is at most twice as large
        auto it = free_.find(bytes);
        if (it == free_.end() || !it->second) it = free_.lower_bound(bytes);
        for (; it != free_.end() && (exact ? it->first == bytes : it->first / 2 <= bytes); ++it) {
          if (!it->second) continue;
          p = it->second;
          it->second = *static_cast<void**>(p);
          got = it->first;
          break;
        }
      }
      if (p) {
        cached_ -= got;
        note_taken(got);
        if (planned) record(bytes, p, got);
        return p;
      }
    }
    void* p = std::aligned_alloc(storage_alignment, bytes);
    if (!p) throw AllocationError(bytes);
    got = bytes;
    std::lock_guard<std::mutex> lock(mu_);
    note_taken(got);
    if (planned) record(bytes, p, got);
    return p;
  }
  /// Returns block `p` of size `bytes` (as `take` reported it): cached while the cache stays
  /// within `cache_factor` times the peak, freed otherwise. (A request takes a block at most
  /// twice its size, and a pass the blocks the previous one took: the blocks of a first pass
  /// reached 2.0x the peak in mobilenet_v3_small, and at a factor of 2 the last ones freed and
  /// allocated again on every pass. Within the factor, a steady state frees and allocates
  /// nothing.)
  void give(void* p, size_t bytes) noexcept {
    bool keep = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      out_ -= bytes;
      if (cached_ + bytes <= cache_factor * peak_) {
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
  /// The outermost scope of a pool on a thread is a *pass* (jit::Graph: one forward): its
  /// requests are numbered, and a pass that ends without an exception becomes the plan the
  /// next pass follows (see `take`). While one thread runs a pass of a pool, another thread's
  /// scope of it takes blocks by size only.
  class Scope {
   public:
    /// Installs `pool` (which must outlive the scope) as this thread's pool.
    explicit Scope(const std::shared_ptr<HostBlockPool>& pool) noexcept
        : prev_(current()), prev_planner_(planner()), exceptions_(std::uncaught_exceptions()) {
      current() = &pool;
      if (!pool || planner() == pool.get()) return;  // nested in this thread's pass of the pool
      planner() = pool->begin_pass() ? pool.get() : nullptr;
      if (planner()) owner_ = pool.get();
    }
    ~Scope() {
      if (owner_) owner_->end_pass(std::uncaught_exceptions() == exceptions_);
      current() = prev_;
      planner() = prev_planner_;
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    const std::shared_ptr<HostBlockPool>* prev_;
    const HostBlockPool* prev_planner_;
    HostBlockPool* owner_ = nullptr;  // the pool whose pass this scope runs
    int exceptions_;
  };
  /// The pool of the innermost live Scope on this thread, or null.
  static const std::shared_ptr<HostBlockPool>*& current() noexcept {
    thread_local const std::shared_ptr<HostBlockPool>* p = nullptr;
    return p;
  }
  /// The pool whose pass this thread runs (its requests are numbered), or null.
  static const HostBlockPool*& planner() noexcept {
    thread_local const HostBlockPool* p = nullptr;
    return p;
  }
  /// True when this thread's requests to `pool` belong to its pass.
  static bool planned(const HostBlockPool& pool) noexcept { return planner() == &pool; }

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
      return static_cast<T*>(pool->take(rounded(n * sizeof(T)), got, true, planned(*pool)));
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
  // one request of a pass: the bytes asked for, the block taken and its size
  struct Taken {
    size_t bytes;
    void* block;
    size_t size;
  };
  // Opens a pass (false when one is running, on another thread).
  bool begin_pass() noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    if (in_pass_) return false;
    in_pass_ = true;
    next_ = 0;
    trace_.clear();  // keeps its capacity: a pass like the last one records without allocating
    trace_ok_ = true;
    return true;
  }
  // Closes the pass; a complete one becomes the plan (copied: both lists keep their capacity).
  void end_pass(bool complete) noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    in_pass_ = false;
    try {
      if (complete && trace_ok_) plan_.assign(trace_.begin(), trace_.end());
      else plan_.clear();
    } catch (...) {  // no room for the plan: the next pass takes blocks by size
      plan_.clear();
    }
  }
  // Notes a request of the pass (under the lock).
  void record(size_t bytes, void* p, size_t got) noexcept {
    try {
      trace_.push_back(Taken{bytes, p, got});
    } catch (...) {  // no room: this pass makes no plan
      trace_ok_ = false;
    }
  }
  // Removes block `p` from the cached blocks of `size`; false when it is not among them.
  bool unlink(void* p, size_t size) noexcept {
    const auto it = free_.find(size);
    if (it == free_.end()) return false;
    for (void** link = &it->second; *link; link = static_cast<void**>(*link))
      if (*link == p) {
        *link = *static_cast<void**>(p);
        return true;
      }
    return false;
  }
  void note_taken(size_t bytes) {
    out_ += bytes;
    if (out_ > peak_) peak_ = out_;
  }
  std::mutex mu_;
  // size -> the cached blocks of that size, a list linked through their first word (so caching
  // a block allocates nothing once its size has been seen)
  std::map<size_t, void*> free_;
  size_t cached_ = 0, out_ = 0, peak_ = 0;
  static constexpr size_t cache_factor = 4;     // the cache's bound, in peaks (see `give`)
  static constexpr size_t plan_lookahead = 64;  // how far `take` looks for a request's match
  bool in_pass_ = false, trace_ok_ = false;
  size_t next_ = 0;                   // the number of the pass's next request
  std::vector<Taken> trace_, plan_;  // this pass's requests; the last complete pass's
};

/// Allocate `nbytes` of host memory, 64-byte aligned. Never returns null for nbytes > 0. Inside
/// a `HostBlockPool::Scope` on this thread, the memory and the storage record come from that
/// pool and go back to it.
/// **Errors:** AllocationError (a std::bad_alloc naming the size) when the memory is not there
/// or `nbytes` exceeds PTRDIFF_MAX.
inline Storage allocate_storage(size_t nbytes) {
  if (nbytes > static_cast<size_t>(PTRDIFF_MAX) - storage_alignment) throw AllocationError(nbytes);
  const size_t rounded = (nbytes + storage_alignment - 1) / storage_alignment * storage_alignment;
  if (const std::shared_ptr<HostBlockPool>* pool = HostBlockPool::current(); pool && *pool) {
    const HostBlockPool::Allocator<StorageImpl> al(*pool);
    auto s = std::allocate_shared<StorageImpl>(al);
    if (!rounded) return s;  // an empty tensor: the record only (no memory, no owner)
    size_t got = 0;
    void* p = (*pool)->take(rounded, got, false, HostBlockPool::planned(**pool));
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
