// tests/fuse/count_new.hpp — a counting replacement of the global operator new, for the tests
// that check a materialization allocates nothing. Include it in one translation unit of a
// test program (it defines the replacement). `g_news` counts every operator new call.
//
// AddressSanitizer has its own operator new and reports memory that crosses between its
// allocator and a replacement as a mismatch, so the replacement exists only in builds
// without it (TORCHTPU_COUNT_NEW is 0 there, and allocation tests say so and do not check).
#pragma once
#include <atomic>   // std::atomic
#include <cstddef>  // size_t
#include <cstdlib>  // std::malloc, std::free
#include <new>      // std::bad_alloc

namespace {
std::atomic<long> g_news{0};
}  // namespace

#if defined(__SANITIZE_ADDRESS__)
#define TORCHTPU_COUNT_NEW 0
#else
#define TORCHTPU_COUNT_NEW 1
#endif

#if TORCHTPU_COUNT_NEW
// The replacement pair below is new→malloc / delete→free, which is matched; GCC cannot see
// that across the replacement and warns.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

void* operator new(size_t n) {
  g_news.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
#endif
