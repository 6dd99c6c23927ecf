// tests/fuse/test_pool.cpp — the thread pool's region protocol (fuse/threads.hpp), issue 18:
// no chunk ever runs twice or goes missing when regions of different chunk counts follow each
// other (item 8, a stress loop), and a child forked while another thread is inside a parallel
// region exits and can run regions of its own (item 10).
#include <catch2/catch.hpp>  // TEST_CASE, CHECK

#include <signal.h>    // kill, SIGKILL
#include <sys/wait.h>  // waitpid, WNOHANG
#include <unistd.h>    // fork

#include <atomic>   // std::atomic
#include <chrono>   // std::chrono::steady_clock
#include <cstdlib>  // std::exit, std::getenv
#include <thread>   // std::thread, std::this_thread::sleep_for
#include <vector>   // std::vector

#include <torchtpu/torchtpu.hpp>  // Tensor, set_num_threads, detail::ThreadPool

using torchtpu::Tensor;
using torchtpu::detail::ThreadPool;

namespace {

struct ThreadsGuard {
  int saved = torchtpu::get_num_threads();
  ~ThreadsGuard() { torchtpu::set_num_threads(saved); }
};

/// Per-chunk execution counts of one region, and the count the task saw.
struct Counts {
  std::atomic<int> runs[64];
  std::atomic<int> wrong_n{0};
  int64_t n = 0;
};

void count_chunk(void* ctx, int64_t i, int64_t n) {
  auto& c = *static_cast<Counts*>(ctx);
  if (n != c.n || i < 0 || i >= c.n) {
    c.wrong_n.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  c.runs[i].fetch_add(1, std::memory_order_relaxed);
}

/// Runs `iters` pairs of regions (2 chunks, then 64) and returns how many chunks did not run
/// exactly once, or ran with the wrong region's count.
int64_t region_errors(int64_t iters) {
  static Counts small, big;
  small.n = 2;
  big.n = 64;
  int64_t bad = 0;
  for (int64_t it = 0; it < iters; ++it) {
    for (Counts* c : {&small, &big}) {
      for (int64_t i = 0; i < c->n; ++i) c->runs[i].store(0, std::memory_order_relaxed);
      c->wrong_n.store(0, std::memory_order_relaxed);
      ThreadPool::instance().run(&count_chunk, c, c->n);
    }
    // a late worker of `small` may only touch `small`'s chunks, and only before its region ends
    for (Counts* c : {&small, &big}) {
      for (int64_t i = 0; i < c->n; ++i) bad += c->runs[i].load(std::memory_order_relaxed) != 1;
      bad += c->wrong_n.load(std::memory_order_relaxed);
    }
  }
  return bad;
}

}  // namespace

TEST_CASE("pool: alternating 2- and 64-chunk regions run every chunk exactly once", "[fuse][threads][pool]") {
  ThreadsGuard g;
  // more threads than cores, so workers are often preempted between waking and claiming
  for (int threads : {2, 4, 8}) {
    torchtpu::set_num_threads(threads);
    INFO("threads = " << threads);
    CHECK(region_errors(100000) == 0);
  }
}

TEST_CASE("pool: elementwise results under back-to-back regions of different sizes", "[fuse][threads][pool]") {
  ThreadsGuard g;
  torchtpu::set_num_threads(4);
  // the case: small += 1; big += 1 (a chunk of big run twice adds 2)
  Tensor<float> small = torchtpu::zeros<float>({1 << 14});
  Tensor<float> big = torchtpu::zeros<float>({1 << 20});
  const int iters = 300;
  for (int i = 0; i < iters; ++i) {
    small += 1.0f;
    big += 1.0f;
  }
  int64_t wrong = 0;
  for (int64_t i = 0; i < big.numel(); ++i) wrong += big.data_ptr()[i] != float(iters);
  for (int64_t i = 0; i < small.numel(); ++i) wrong += small.data_ptr()[i] != float(iters);
  CHECK(wrong == 0);
}

TEST_CASE("pool: more chunks than one region word counts", "[fuse][threads][pool]") {
  ThreadsGuard g;
  torchtpu::set_num_threads(3);
  const int64_t n = 3 * 0xffff + 7;  // ThreadPool::max_region_chunks is 0xffff
  std::vector<std::atomic<int>> runs(static_cast<size_t>(n));
  struct Ctx {
    std::vector<std::atomic<int>>* runs;
    int64_t n;
    std::atomic<int> wrong{0};
  } ctx{&runs, n};
  ThreadPool::instance().run(
      [](void* p, int64_t i, int64_t k) {
        auto& c = *static_cast<Ctx*>(p);
        if (k != c.n) c.wrong.fetch_add(1);
        (*c.runs)[size_t(i)].fetch_add(1);
      },
      &ctx, n);
  int64_t bad = 0;
  for (auto& r : runs) bad += r.load() != 1;
  CHECK(bad == 0);
  CHECK(ctx.wrong.load() == 0);
}

namespace {

/// Waits up to `seconds` for `pid`; kills it if still running. Returns its wait status, or -1
/// if it had to be killed.
int wait_or_kill(pid_t pid, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  while (std::chrono::steady_clock::now() < end) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

}  // namespace

TEST_CASE("pool: a child forked while another thread is inside a parallel region exits", "[fuse][threads][pool]") {
  ThreadsGuard g;
  torchtpu::set_num_threads(4);
  // A service thread runs long parallel regions back to back; `inside` is set by its tasks.
  std::atomic<bool> stop{false};
  std::atomic<int> inside{0};
  struct Ctx {
    std::atomic<int>* inside;
  } ctx{&inside};
  std::thread service([&] {
    while (!stop.load()) {
      ThreadPool::instance().run(
          [](void* p, int64_t, int64_t) {
            auto& c = *static_cast<Ctx*>(p);
            c.inside->fetch_add(1);
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
            c.inside->fetch_sub(1);
          },
          &ctx, 4);
    }
  });
  int hung = 0, failed = 0;
  for (int k = 0; k < 20 && hung == 0; ++k) {
    while (inside.load() == 0) std::this_thread::yield();  // fork while a region runs
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      // the child: a parallel region of its own, then a normal exit (static destructors run)
      const Tensor<float> x = torchtpu::ones<float>({1 << 18});
      const Tensor<float> y = x * 2.0f + 1.0f;
      bool ok = torchtpu::get_num_threads() == 4;
      for (int64_t i = 0; i < y.numel(); ++i) ok = ok && y.data_ptr()[i] == 3.0f;
      std::exit(ok ? 0 : 3);
    }
    const int status = wait_or_kill(pid, 10.0);
    if (status == -1) ++hung;
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
  }
  stop.store(true);
  service.join();
  CHECK(hung == 0);
  CHECK(failed == 0);
}
