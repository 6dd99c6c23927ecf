// torchtpu/fuse/threads.hpp — the CPU thread pool and its policy: set_num_threads /
// get_num_threads, the TORCHTPU_NUM_THREADS variable, and parallel_for with static chunks.
#pragma once
#include <pthread.h>  // pthread_create, pthread_join (POSIX threads)
#include <unistd.h>   // sysconf(_SC_NPROCESSORS_ONLN)

#include <algorithm>    // std::min
#include <atomic>       // std::atomic (wait / notify_all: C++20)
#include <cstdint>      // int64_t
#include <cstdlib>      // std::getenv, std::atoi
#include <exception>    // std::exception_ptr
#include <type_traits>  // std::remove_reference_t
#include <vector>       // std::vector

namespace torchtpu {
namespace detail {

/// The process-wide pool. Policy (see docs/cpu-engine.md):
/// - size: `TORCHTPU_NUM_THREADS` if set (>= 1), else the number of online processors;
///   `set_num_threads(n)` changes it (n - 1 workers plus the calling thread);
/// - one parallel region at a time: a call from inside a parallel region, or from a second
///   service thread while another region runs, executes serially on its own thread — so
///   torchtpu never runs more than `num_threads` threads of its own plus the callers' threads;
/// - chunks are static (chunk i of `n` always covers the same range), so results that depend
///   on chunking (reductions) are deterministic for a given thread count.
///
/// Built on POSIX threads and C++20 atomic wait/notify rather than <thread>, <mutex> and
/// <condition_variable>, which every translation unit would otherwise parse (compile time).
class ThreadPool {
 public:
  using Task = void (*)(void* ctx, int64_t chunk, int64_t nchunks);

  static ThreadPool& instance() {
    static ThreadPool pool;
    return pool;
  }

  int size() const { return size_.load(std::memory_order_relaxed); }

  void resize(int n) {
    if (n < 1) n = 1;
    lock_busy();
    stop_workers();
    size_.store(n);
    start_workers();
    unlock_busy();
  }

  /// Runs `task(ctx, i, nchunks)` for every i in [0, nchunks) on the calling thread and the
  /// workers; returns when all are done. Serial when nested or while the pool is busy.
  void run(Task task, void* ctx, int64_t nchunks) {
    if (nchunks <= 1 || in_region() || size() <= 1 || busy_.exchange(true, std::memory_order_acquire)) {
      for (int64_t i = 0; i < nchunks; ++i) task(ctx, i, nchunks);
      return;
    }
    dispatch(task, ctx, nchunks);  // does not throw: tasks catch their own exceptions
    unlock_busy();
  }

  ~ThreadPool() {
    lock_busy();
    stop_workers();
  }

  static bool& in_region() {
    thread_local bool flag = false;
    return flag;
  }

 private:
  ThreadPool() {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (const char* env = std::getenv("TORCHTPU_NUM_THREADS")) {
      const int v = std::atoi(env);
      if (v >= 1) n = v;
    }
    size_.store(n < 1 ? 1 : int(n));
    start_workers();
  }

  // `busy_` is held by the thread running a parallel region (a lock that waits by futex).
  void lock_busy() {
    while (busy_.exchange(true, std::memory_order_acquire)) busy_.wait(true, std::memory_order_relaxed);
  }
  void unlock_busy() {
    busy_.store(false, std::memory_order_release);
    busy_.notify_all();
  }

  // Chunks are claimed dynamically (a caller never waits for a worker that has not started:
  // under load it simply runs the chunks itself), but chunk i always covers the same range,
  // so results do not depend on which thread ran it. `state_` = generation << 32 | next chunk,
  // so a worker late from an earlier region can never claim a chunk of a newer one.
  int64_t claim(uint64_t gen, int64_t n) {
    uint64_t s = state_.load(std::memory_order_acquire);
    for (;;) {
      if ((s >> 32) != (gen & 0xffffffffu)) return -1;
      const int64_t i = int64_t(s & 0xffffffffu);
      if (i >= n) return -1;
      if (state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel)) return i;
    }
  }

  void dispatch(Task task, void* ctx, int64_t n) {
    // The region's fields are published before its generation (release); a worker reads the
    // generation (acquire) and then the fields, so it never sees an older task than its gen.
    task_.store(task, std::memory_order_relaxed);
    ctx_.store(ctx, std::memory_order_relaxed);
    nchunks_.store(n, std::memory_order_relaxed);
    done_.store(0, std::memory_order_relaxed);
    const uint64_t gen = gen_.load(std::memory_order_relaxed) + 1;
    state_.store((gen & 0xffffffffu) << 32, std::memory_order_release);
    gen_.store(gen, std::memory_order_release);
    gen_.notify_all();
    in_region() = true;
    for (int64_t i; (i = claim(gen, n)) >= 0;) {
      task(ctx, i, n);
      done_.fetch_add(1, std::memory_order_acq_rel);
    }
    in_region() = false;
    while (done_.load(std::memory_order_acquire) < n) {
      // chunks still running on workers; they are short
#if defined(__x86_64__)
      __builtin_ia32_pause();
#endif
    }
  }

  void worker(uint64_t seen) {
    in_region() = true;
    for (;;) {
      // spin a little before sleeping: back-to-back regions (GEMM panels) wake fast
      uint64_t g = seen;
      for (int spin = 0; spin < 4000; ++spin) {
        g = gen_.load(std::memory_order_acquire);
        if (g != seen || stop_.load(std::memory_order_relaxed)) break;
#if defined(__x86_64__)
        __builtin_ia32_pause();
#endif
      }
      while (g == seen && !stop_.load(std::memory_order_acquire)) {
        gen_.wait(seen, std::memory_order_acquire);
        g = gen_.load(std::memory_order_acquire);
      }
      if (stop_.load(std::memory_order_acquire)) return;
      seen = g;
      const Task t = task_.load(std::memory_order_relaxed);
      void* const c = ctx_.load(std::memory_order_relaxed);
      const int64_t n = nchunks_.load(std::memory_order_relaxed);
      for (int64_t i; (i = claim(seen, n)) >= 0;) {
        t(c, i, n);
        done_.fetch_add(1, std::memory_order_acq_rel);
      }
    }
  }

  struct Start {
    ThreadPool* pool;
    uint64_t gen;
  };
  static void* thread_main(void* arg) {
    const Start s = *static_cast<Start*>(arg);
    delete static_cast<Start*>(arg);
    s.pool->worker(s.gen);
    return nullptr;
  }

  void start_workers() {
    stop_.store(false);
    const uint64_t g = gen_.load();  // read before any region can start
    for (int i = 1; i < size(); ++i) {
      pthread_t tid;
      auto* arg = new Start{this, g};
      if (pthread_create(&tid, nullptr, &thread_main, arg) != 0) {
        delete arg;  // no more threads available: run with the ones we have
        size_.store(i);
        break;
      }
      workers_.push_back(tid);
    }
  }
  void stop_workers() {
    stop_.store(true, std::memory_order_release);
    gen_.fetch_add(1, std::memory_order_acq_rel);  // wakes sleepers; no region runs (busy held)
    gen_.notify_all();
    for (pthread_t w : workers_) pthread_join(w, nullptr);
    workers_.clear();
  }

  std::atomic<int> size_{1};
  std::atomic<bool> busy_{false};
  std::atomic<uint64_t> gen_{0};
  std::atomic<int64_t> done_{0};
  std::atomic<uint64_t> state_{0};
  std::atomic<bool> stop_{false};
  std::atomic<Task> task_{nullptr};
  std::atomic<void*> ctx_{nullptr};
  std::atomic<int64_t> nchunks_{0};
  std::vector<pthread_t> workers_;
};

/// The untyped body of `parallel_chunks` (compiled once, not once per caller's lambda).
inline void parallel_chunks_impl(int64_t n, int64_t nchunks, int64_t align, void (*call)(void*, int64_t, int64_t),
                                 void* fn) {
  struct Ctx {
    void (*call)(void*, int64_t, int64_t);
    void* fn;
    int64_t n, align;
    std::atomic<bool> failed{false};
    std::exception_ptr error;
  };
  Ctx ctx{call, fn, n, align, {false}, nullptr};
  ThreadPool::instance().run(
      [](void* c, int64_t i, int64_t k) {
        auto* x = static_cast<Ctx*>(c);
        const int64_t units = (x->n + x->align - 1) / x->align;
        const int64_t b = std::min(x->n, units * i / k * x->align);
        const int64_t e = std::min(x->n, units * (i + 1) / k * x->align);
        if (b >= e) return;
        try {
          x->call(x->fn, b, e);
        } catch (...) {
          if (!x->failed.exchange(true)) x->error = std::current_exception();
        }
      },
      &ctx, nchunks);
  if (ctx.error) std::rethrow_exception(ctx.error);
}

/// Splits [0, n) into `nchunks` equal ranges (aligned to `align`) and runs
/// `f(begin, end)` for each, in parallel. The first exception thrown by `f` is rethrown
/// on the calling thread once every chunk has finished.
template <class F>
void parallel_chunks(int64_t n, int64_t nchunks, int64_t align, F&& f) {
  if (n <= 0) return;
  if (nchunks <= 1) {
    f(int64_t(0), n);
    return;
  }
  using Fn = std::remove_reference_t<F>;
  parallel_chunks_impl(
      n, nchunks, align, [](void* p, int64_t b, int64_t e) { (*static_cast<Fn*>(p))(b, e); },
      const_cast<void*>(static_cast<const void*>(&f)));
}

/// Number of chunks for `work` units of cost when each thread should get at least `grain`.
inline int64_t chunks_for(int64_t work, int64_t grain) {
  const int64_t t = ThreadPool::instance().size();
  const int64_t c = work / (grain > 0 ? grain : 1);
  return c < 1 ? 1 : (c < t ? c : t);
}

}  // namespace detail

/// Number of threads torchtpu's CPU loops use (the calling thread included).
inline int get_num_threads() { return detail::ThreadPool::instance().size(); }

/// Sets the number of CPU threads (>= 1; values below 1 mean 1). Waits for a running
/// parallel region to finish. Also settable with the environment variable
/// `TORCHTPU_NUM_THREADS` (read once, at first use).
inline void set_num_threads(int n) { detail::ThreadPool::instance().resize(n); }

}  // namespace torchtpu
