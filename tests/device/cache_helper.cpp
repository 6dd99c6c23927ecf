// tests/device/cache_helper.cpp — compiles one fixed program through the compilation cache and
// prints the counters, so tests can check the disk cache across processes
// (TORCHTPU_CACHE_DIR must be set by the caller).
#include <sys/resource.h>  // setrlimit, RLIMIT_FSIZE

#include <csignal>  // std::signal, SIGXFSZ
#include <cstdio>   // std::printf
#include <cstdlib>  // std::getenv, std::strtoull

#include <torchtpu/device/pjrt/cache.hpp>  // CompilationCache
#include <torchtpu/device/stablehlo.hpp>   // stablehlo::Builder

#include "../test_backend.hpp"  // test_kind

int main() {
  using namespace torchtpu;
  // TORCHTPU_TEST_FSIZE_LIMIT=<bytes>: files this process writes cannot grow past that size
  // (writes fail with EFBIG; SIGXFSZ ignored), to test failed disk-cache writes.
  if (const char* lim = std::getenv("TORCHTPU_TEST_FSIZE_LIMIT")) {
    std::signal(SIGXFSZ, SIG_IGN);
    const rlim_t n = std::strtoull(lim, nullptr, 10);
    const rlimit r{n, n};
    if (setrlimit(RLIMIT_FSIZE, &r) != 0) {
      std::printf("error: setrlimit failed\n");
      return 1;
    }
  }
  try {
    stablehlo::Builder b;
    auto x = b.parameter(ScalarType::Float, {4});
    b.set_results({b.tanh(b.add(x, x))});
    auto client = pjrt::Client::get(ttest::test_kind());  // the backend of the calling test
    auto exe = pjrt::CompilationCache::global().get_or_compile(client, b.str());
    const float in[4] = {0, 0.25f, 0.5f, 1};
    const int64_t dims[1] = {4};
    auto buf = client->buffer_from_host(in, ScalarType::Float, dims);
    auto out = exe->execute({&buf});
    float res[4];
    out[0].to_host(res, sizeof(res));
    const auto s = pjrt::CompilationCache::global().stats();
    std::printf("platform=%s memory_hits=%llu disk_hits=%llu misses=%llu compiles=%llu disk_writes=%llu "
                "disk_rejects=%llu result=%.6f\n",
                client->platform_name().c_str(), static_cast<unsigned long long>(s.memory_hits),
                static_cast<unsigned long long>(s.disk_hits), static_cast<unsigned long long>(s.misses),
                static_cast<unsigned long long>(s.compiles), static_cast<unsigned long long>(s.disk_writes),
                static_cast<unsigned long long>(s.disk_rejects), static_cast<double>(res[3]));
    return 0;
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 1;
  }
}
