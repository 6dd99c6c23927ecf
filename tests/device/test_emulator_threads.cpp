// tests/device/test_emulator_threads.cpp — the emulator when a worker thread does not start
// (issue 18, item 5): the execution fails with a PJRT error and the process lives on (it used
// to be terminated: a vector of joinable std::threads destroyed while unwinding).
//
// This executable defines pthread_create (exported, see meson.build), so the emulator's
// std::thread starts go through it: `g_fail_after` lets that many threads start, then fails
// the next ones with EAGAIN as a process at its thread limit would.
#include <catch2/catch.hpp>  // TEST_CASE, CHECK

#include <dlfcn.h>    // dlsym, RTLD_NEXT
#include <pthread.h>  // pthread_create

#include <atomic>   // std::atomic
#include <cerrno>   // EAGAIN
#include <cstdlib>  // setenv
#include <string>   // std::string
#include <vector>   // std::vector

#include "emulator_fixture.hpp"  // ttest::tpu, to_device, to_host

namespace {
std::atomic<int> g_fail_after{-1};  // -1: never fail
std::atomic<int> g_started{0};
}  // namespace

extern "C" int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*), void* arg) {
  using Fn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  static const Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "pthread_create"));
  const int limit = g_fail_after.load();
  if (limit >= 0 && g_started.load() >= limit) return EAGAIN;
  ++g_started;
  return real(thread, attr, start, arg);
}

using namespace ttest;

TEST_CASE("emulator threads: a worker that fails to start is a PJRT error, not a crash", "[pjrt]") {
  setenv("TORCHTPU_EMULATOR_THREADS", "4", 1);  // read once, at the first large matmul
  auto c = tpu();
  constexpr int64_t M = 64, K = 256, N = 256;  // 4M multiply-adds: split over 4 threads
  shlo::Builder b;
  auto x = b.parameter(ScalarType::Float, {M, K});
  auto y = b.parameter(ScalarType::Float, {K, N});
  b.set_results({b.dot_general(x, y, {{}, {}, {1}, {0}}, shlo::Precision::Highest)});
  auto exe = c->compile(b.str());
  HostTensor hx{ScalarType::Float, {M, K}, std::vector<double>(M * K, 0.5)};
  HostTensor hy{ScalarType::Float, {K, N}, std::vector<double>(K * N, 2.0)};
  auto bx = to_device(c, hx), by = to_device(c, hy);
  {  // all threads start: the right answer
    auto out = exe->execute({&bx, &by});
    const auto r = to_host(out[0]);
    CHECK(r.values.front() == 256.0);
    CHECK(r.values.back() == 256.0);
  }
  g_started = 0;
  g_fail_after = 1;  // the first worker starts, the second does not
  try {
    exe->execute({&bx, &by});
    FAIL("execute succeeded although a worker thread could not start");
  } catch (const torchtpu::DeviceError& e) {
    CHECK(e.code() == 8);  // RESOURCE_EXHAUSTED
    CHECK(std::string(e.what()).find("cannot start a worker thread") != std::string::npos);
  }
  CHECK(g_started.load() == 1);
  g_fail_after = 0;  // no worker starts at all
  CHECK_THROWS_AS(exe->execute({&bx, &by}), torchtpu::DeviceError);
  g_fail_after = -1;  // and the emulator still works afterwards
  auto out = exe->execute({&bx, &by});
  CHECK(to_host(out[0]).values[5] == 256.0);
}
