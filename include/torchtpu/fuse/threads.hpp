// torchtpu/fuse/threads.hpp — the CPU thread pool and its policy: set_num_threads /
// get_num_threads, the TORCHTPU_NUM_THREADS variable, and parallel_for with static chunks.
#pragma once
#include <pthread.h>  // pthread_create, pthread_join, pthread_atfork (POSIX threads)
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
    lock_cfg();
    stop_workers();
    size_.store(n);
    start_workers();
    unlock_cfg();
    unlock_busy();
  }

  /// Most chunks one region's state word counts; `run` splits larger counts into regions of
  /// at most this many (chunk numbering unchanged).
  static constexpr int64_t max_region_chunks = 0xffff;

  /// Runs `task(ctx, i, nchunks)` for every i in [0, nchunks) on the calling thread and the
  /// workers; returns when all are done. Serial when nested or while the pool is busy.
  void run(Task task, void* ctx, int64_t nchunks) {
    if (nchunks > max_region_chunks && !in_region() && size() > 1) {
      struct Part {
        Task task;
        void* ctx;
        int64_t base, total;
      };
      for (int64_t base = 0; base < nchunks; base += max_region_chunks) {
        Part part{task, ctx, base, nchunks};
        run([](void* p, int64_t i, int64_t) {
              const Part& q = *static_cast<const Part*>(p);
              q.task(q.ctx, q.base + i, q.total);
            },
            &part, std::min(max_region_chunks, nchunks - base));
      }
      return;
    }
    if (nchunks <= 1 || in_region() || size() <= 1 || busy_.exchange(true, std::memory_order_acquire)) {
      for (int64_t i = 0; i < nchunks; ++i) task(ctx, i, nchunks);
      return;
    }
    if (!started_) {  // the first region in a forked child (see on_fork_child)
      lock_cfg();
      start_workers();
      unlock_cfg();
    }
    dispatch(task, ctx, nchunks);  // does not throw: tasks catch their own exceptions
    unlock_busy();
  }

  ~ThreadPool() {
    lock_busy();
    lock_cfg();
    stop_workers();
    live_pool() = nullptr;
    unlock_cfg();
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
    // fork(): only the forking thread exists in the child. Without these handlers the child
    // inherits `busy_` held by a region whose threads are gone, and hangs in exit() (the
    // destructor waits for it) or in set_num_threads (issue 18 item 10).
    pthread_atfork(&on_fork_prepare, &on_fork_parent, &on_fork_child);
    lock_cfg();
    live_pool() = this;
    start_workers();
    unlock_cfg();
  }

  static ThreadPool*& live_pool() {
    static ThreadPool* p = nullptr;
    return p;
  }
  // Before fork: wait for a resize (or pool start or stop) in progress, so the child's copy of
  // `workers_` is consistent. Never for a running region: the child does not need it to end
  // (its threads do not exist there), and its tasks may wait on the forking thread.
  static void on_fork_prepare() {
    if (ThreadPool* p = live_pool()) p->lock_cfg();
  }
  static void on_fork_parent() {
    if (ThreadPool* p = live_pool()) p->unlock_cfg();
  }
  // In the child: no worker exists and any region in flight belongs to threads that are gone.
  // Forget both (never join or wait for the parent's threads) and start new workers at the
  // child's first parallel region. Forking from inside a parallel task is not supported: the
  // child would wait for chunks that were running on the parent's other threads.
  static void on_fork_child() {
    ThreadPool* p = live_pool();
    if (p == nullptr) return;
    p->workers_.clear();
    p->started_ = false;
    p->stop_.store(false, std::memory_order_relaxed);
    p->state_.store(0, std::memory_order_relaxed);  // generation 0 never matches a region
    p->gen_.store(0, std::memory_order_relaxed);
    p->busy_.store(false, std::memory_order_relaxed);
    p->cfg_.store(false, std::memory_order_release);
  }

  // `cfg_` guards starting and stopping workers (`workers_`, `started_`) against fork().
  void lock_cfg() {
    while (cfg_.exchange(true, std::memory_order_acquire)) cfg_.wait(true, std::memory_order_relaxed);
  }
  void unlock_cfg() {
    cfg_.store(false, std::memory_order_release);
    cfg_.notify_all();
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
  // so results do not depend on which thread ran it.
  //
  // One atomic word describes the region: `state_` = generation (32 bits) | chunk count
  // (16 bits) | next chunk (16 bits). A claim succeeds only against the word of the region
  // the worker woke for, and takes the count from that same word: a worker late from an
  // earlier region can never claim a chunk of a newer one, nor an index past its own
  // region's count (issue 18 item 8: with the count in a separate field, a late worker read
  // the next region's count before the state was reset and ran its chunks a second time).
  static constexpr uint64_t pack(uint64_t gen, int64_t n) {
    return (gen & 0xffffffffu) << 32 | uint64_t(n) << 16;
  }
  /// Claims a chunk of region `gen`: its index, and the region's count in `n`; -1 when the
  /// region is exhausted or is not the current one.
  int64_t claim(uint64_t gen, int64_t& n) {
    uint64_t s = state_.load(std::memory_order_acquire);
    for (;;) {
      if ((s >> 32) != (gen & 0xffffffffu)) return -1;
      n = int64_t((s >> 16) & 0xffffu);
      const int64_t i = int64_t(s & 0xffffu);
      if (i >= n) return -1;
      if (state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel)) return i;
    }
  }

  void dispatch(Task task, void* ctx, int64_t n) {
    // The region's fields are published before its state word and generation (release); a
    // worker reads the generation (acquire), then the fields. A claim that succeeds proves
    // the fields it read are this region's: the next region cannot store new ones before
    // every chunk of this one has been claimed and has finished.
    task_.store(task, std::memory_order_relaxed);
    ctx_.store(ctx, std::memory_order_relaxed);
    done_.store(0, std::memory_order_relaxed);
    uint64_t gen = gen_.load(std::memory_order_relaxed) + 1;
    if ((gen & 0xffffffffu) == 0) ++gen;  // generation 0 (in the low bits) is never a region
    state_.store(pack(gen, n), std::memory_order_release);
    gen_.store(gen, std::memory_order_release);
    gen_.notify_all();
    in_region() = true;
    for (int64_t i, k; (i = claim(gen, k)) >= 0;) {
      task(ctx, i, k);
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
      for (int64_t i, n; (i = claim(seen, n)) >= 0;) {
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
    started_ = true;
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
  std::atomic<bool> cfg_{false};
  std::atomic<uint64_t> gen_{0};
  std::atomic<int64_t> done_{0};
  std::atomic<uint64_t> state_{0};
  std::atomic<bool> stop_{false};
  std::atomic<Task> task_{nullptr};
  std::atomic<void*> ctx_{nullptr};
  bool started_ = false;  ///< workers exist (false in a forked child until its first region)
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

/// A per-thread scratch buffer of at least `n` elements that only grows, so repeated calls
/// do not allocate after the first. `slot` (0-5) separates buffers in use at the same time:
/// 0 the scalar GEMM's panel, 1 the engine's reduction rows, 2 and 3 the f32 GEMM's packed B
/// and A, 4 the depthwise kernel's padded plane, 5 attention's score block and row state.
template <class T>
T* workspace(size_t n, int slot) {
  thread_local std::vector<T> buf[6];
  auto& b = buf[slot];
  if (b.size() < n) b.resize(n);
  return b.data();
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
