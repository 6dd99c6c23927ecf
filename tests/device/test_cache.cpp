// tests/device/test_cache.cpp — the compilation cache: memory hits, compile options in
// the key, the disk cache (in process and across processes), and concurrent lookups; entry
// checksums (issue 12 item 5), the plugin build in the key and XLA's own executable
// serialization across processes (issue 11 item 6).
#include <catch2/catch.hpp>  // TEST_CASE, CHECK

#include <fcntl.h>     // open, O_RDWR, O_CREAT, O_TRUNC
#include <unistd.h>    // dup, dup2, close

#include <cstdio>      // popen, fgets, std::fflush
#include <cstdlib>     // std::getenv, mkdtemp
#include <filesystem>  // std::filesystem::directory_iterator
#include <fstream>     // std::ofstream
#include <iterator>    // std::istreambuf_iterator
#include <string>      // std::string
#include <thread>      // std::thread
#include <vector>      // std::vector

#include "emulator_fixture.hpp"  // ttest::tpu, to_device, to_host

using namespace ttest;

namespace {
std::string program(double k) {
  shlo::Builder b;
  auto x = b.parameter(ScalarType::Float, {3});
  b.set_results({b.multiply(x, b.constant(k, ScalarType::Float, {3}))});
  return b.str();
}
std::string temp_dir() {
  char tmpl[] = "/tmp/torchtpu-cache-test-XXXXXX";
  const char* d = mkdtemp(tmpl);
  REQUIRE(d != nullptr);
  return d;
}
/// Runs the helper with TORCHTPU_CACHE_DIR=dir (stderr joined to stdout); `fsize_limit` > 0
/// caps the size of the files it writes (RLIMIT_FSIZE, in bytes); `env` is a prefix of
/// `VAR=value` assignments (or `env -u VAR ...`) for the helper.
std::string run_helper(const std::string& dir, long fsize_limit = 0, const std::string& env = "") {
  const char* helper = std::getenv("TORCHTPU_TEST_CACHE_HELPER");
  REQUIRE(helper != nullptr);
  std::string cmd = env + " TORCHTPU_CACHE_DIR='" + dir + "' ";
  if (fsize_limit > 0) cmd += "TORCHTPU_TEST_FSIZE_LIMIT=" + std::to_string(fsize_limit) + " ";
  cmd += "'" + std::string(helper) + "' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof(buf), p)) out += buf;
  REQUIRE(pclose(p) == 0);
  return out;
}
std::string read_file(const std::filesystem::path& f) {
  std::ifstream in(f, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
void write_file(const std::filesystem::path& f, const std::string& data) {
  std::ofstream(f, std::ios::binary | std::ios::trunc).write(data.data(), static_cast<std::streamsize>(data.size()));
}
std::vector<std::filesystem::path> entries(const std::string& dir) {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path());
  return out;
}
/// Runs `f` with this process's stderr going to a file; returns what was written there.
template <class F>
std::string capture_stderr(F&& f) {
  const std::string path = "/tmp/torchtpu-cache-test-stderr-" + std::to_string(::getpid());
  std::fflush(stderr);
  const int saved = ::dup(2);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  REQUIRE(saved >= 0);
  REQUIRE(fd >= 0);
  ::dup2(fd, 2);
  ::close(fd);
  try {
    f();
  } catch (...) {
    std::fflush(stderr);
    ::dup2(saved, 2);
    ::close(saved);
    throw;
  }
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  const std::string out = read_file(path);
  std::filesystem::remove(path);
  return out;
}
/// x*k + 1 on f32[3], with `k` printed as the builder prints constants.
std::string affine(double k) {
  shlo::Builder b;
  auto x = b.parameter(ScalarType::Float, {3});
  b.set_results({b.add(b.multiply(x, b.constant(k, ScalarType::Float, {3})), b.constant(1.0, ScalarType::Float, {3}))});
  return b.str();
}
size_t count(const std::string& s, const std::string& part) {
  size_t n = 0;
  for (size_t at = s.find(part); at != std::string::npos; at = s.find(part, at + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("cache: the second compilation of a program is a memory hit", "[pjrt][cache]") {
  auto& cache = pjrt::CompilationCache::global();
  cache.set_disk_dir("");
  cache.reset_stats();
  auto c = tpu();
  auto e1 = cache.get_or_compile(c, program(2.0));
  auto e2 = cache.get_or_compile(c, program(2.0));
  CHECK(e1 == e2);
  auto s = cache.stats();
  CHECK(s.compiles == 1);
  CHECK(s.misses == 1);
  CHECK(s.memory_hits == 1);
  // other compile options are another key
  pjrt::CompileOptions pinned;
  pinned.portable = false;
  pinned.device_id = 0;
  auto e3 = cache.get_or_compile(c, program(2.0), pinned);
  CHECK(e3 != e1);
  CHECK(cache.stats().compiles == 2);
  // the key names the plugin's platform and version and the device kind
  const std::string key = pjrt::CompilationCache::make_key(*c, "x", {});
  CHECK(key.find(c->platform_version()) != std::string::npos);
  CHECK(key.find(c->device_kind()) != std::string::npos);  // "TPU emulator", XLA's "cpu"
  cache.set_disk_dir(std::nullopt);
}

TEST_CASE("cache: executables come back from TORCHTPU_CACHE_DIR after the memory cache is cleared", "[pjrt][cache]") {
  auto& cache = pjrt::CompilationCache::global();
  const std::string dir = temp_dir();
  cache.set_disk_dir(dir);
  cache.clear_memory();
  cache.reset_stats();
  auto c = tpu();
  const std::string text = program(3.0);
  cache.get_or_compile(c, text);
  CHECK(cache.stats().disk_writes == 1);
  cache.clear_memory();
  auto exe = cache.get_or_compile(c, text);
  auto s = cache.stats();
  CHECK(s.compiles == 1);
  CHECK(s.disk_hits == 1);
  auto in = to_device(c, {ScalarType::Float, {3}, {1, 2, 3}});
  CHECK(to_host(exe->execute({&in})[0]).values == std::vector<double>{3, 6, 9});
  // a corrupt entry is a miss, recompiled and rewritten
  for (const auto& f : std::filesystem::directory_iterator(dir)) std::ofstream(f.path()) << "garbage";
  cache.clear_memory();
  cache.get_or_compile(c, text);
  CHECK(cache.stats().compiles == 2);
  CHECK(cache.stats().disk_writes == 2);
  cache.set_disk_dir(std::nullopt);
  std::filesystem::remove_all(dir);
}

TEST_CASE("cache: a second process loads the executable from disk", "[pjrt][cache]") {
  const std::string dir = temp_dir();
  const std::string first = run_helper(dir);
  INFO(first);
  CHECK(first.find("disk_hits=0 misses=1 compiles=1 disk_writes=1") != std::string::npos);
  CHECK(first.find("result=0.964028") != std::string::npos);  // tanh(2)
  const std::string second = run_helper(dir);
  INFO(second);
  CHECK(second.find("disk_hits=1 misses=0 compiles=0") != std::string::npos);
  CHECK(second.find("result=0.964028") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("cache: a failed disk write leaves no file behind and is not counted", "[pjrt][cache]") {
  // Files the helper writes stop at 300 bytes (the entry is longer): writes fail with EFBIG.
  // The write used to be unchecked at close, so the truncated entry was renamed into place and
  // counted as written; a failed write left its temporary behind.
  const std::string dir = temp_dir();
  const std::string out = run_helper(dir, 300);
  INFO(out);
  CHECK(out.find("misses=1 compiles=1 disk_writes=0") != std::string::npos);
  CHECK(out.find("result=0.964028") != std::string::npos);  // the executable still runs
  std::vector<std::string> left;
  for (const auto& e : std::filesystem::directory_iterator(dir)) left.push_back(e.path().filename().string());
  INFO("files left: " << left.size());
  CHECK(left.empty());
  // Without the limit the same entry is written, and a later process loads it.
  CHECK(run_helper(dir).find("disk_writes=1") != std::string::npos);
  size_t entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    CHECK(e.path().extension() == ".ttexe");
    CHECK(std::filesystem::file_size(e.path()) > 300);
    ++entries;
  }
  CHECK(entries == 1);
  CHECK(run_helper(dir).find("disk_hits=1 misses=0 compiles=0") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("cache: concurrent requests compile once", "[pjrt][cache]") {
  auto& cache = pjrt::CompilationCache::global();
  cache.set_disk_dir("");
  cache.reset_stats();
  auto c = tpu();
  const std::string text = program(5.0);
  std::vector<std::shared_ptr<pjrt::Executable>> got(8);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < got.size(); ++i)
    threads.emplace_back([&, i] { got[i] = cache.get_or_compile(c, text); });
  for (auto& t : threads) t.join();
  for (const auto& e : got) CHECK(e == got[0]);
  CHECK(cache.stats().compiles == 1);
  CHECK(cache.stats().memory_hits == 7);
  cache.set_disk_dir(std::nullopt);
}

TEST_CASE("cache: a failed compilation is not cached", "[pjrt][cache]") {
  auto& cache = pjrt::CompilationCache::global();
  cache.reset_stats();
  auto c = tpu();
  CHECK_THROWS_AS(cache.get_or_compile(c, "module { garbage"), torchtpu::DeviceError);
  CHECK_THROWS_AS(cache.get_or_compile(c, "module { garbage"), torchtpu::DeviceError);
  CHECK(cache.stats().compiles == 2);
}

TEST_CASE("cache: every single-byte change of an entry is detected", "[pjrt][cache]") {
  const std::string key = "3:tpu;17:some plugin build;";
  const std::string payload = "serialized executable bytes";
  const std::string entry = pjrt::CompilationCache::encode_entry(key, payload);
  std::string got;
  REQUIRE(pjrt::CompilationCache::decode_entry(entry, key, got).empty());
  CHECK(got == payload);
  CHECK(pjrt::CompilationCache::decode_entry(entry, "another", got) == "another key");
  for (size_t i = 0; i < entry.size(); ++i) {
    std::string bad = entry;
    bad[i] = static_cast<char>(bad[i] ^ 0x04);
    INFO("byte " << i);
    CHECK_FALSE(pjrt::CompilationCache::decode_entry(bad, key, got).empty());
  }
  for (size_t n = 0; n < entry.size(); ++n) {
    INFO("truncated to " << n << " bytes");
    CHECK_FALSE(pjrt::CompilationCache::decode_entry(entry.substr(0, n), key, got).empty());
  }
  std::string old_format = entry;
  old_format.replace(0, 22, "torchtpu-executable 1\n");
  CHECK(pjrt::CompilationCache::decode_entry(old_format, key, got) == "written in another entry format version");
}

TEST_CASE("cache: an entry whose program was altered is refused with one warning, then recompiled", "[pjrt][cache]") {
  // Issue 12 item 5: one constant changed in a stored program (same length, key intact) used
  // to make the next process run x*3+1 instead of x*2+1, silently.
  auto& cache = pjrt::CompilationCache::global();
  const std::string dir = temp_dir();
  cache.set_disk_dir(dir);
  cache.clear_memory();
  cache.reset_stats();
  auto c = tpu();
  const std::string text = affine(2.0);
  cache.get_or_compile(c, text);
  REQUIRE(entries(dir).size() == 1);
  const auto file = entries(dir)[0];
  std::string data = read_file(file);
  if (on_emulator()) {
    // The emulator's executable is the program text. The key holds it too; alter the copy
    // inside the payload (the last one).
    const std::string two = shlo::literal(2.0, ScalarType::Float);  // "2.000000000e+00"
    const size_t at = data.rfind(two);
    REQUIRE(at != std::string::npos);
    REQUIRE(at > data.size() / 2);
    data[at] = '3';
  } else {
    // XLA's serialized executable is binary and longer than the key: flip one bit inside it.
    data[data.size() * 3 / 4] ^= 0x04;
  }
  write_file(file, data);
  auto in = to_device(c, {ScalarType::Float, {3}, {1, 2, 3}});
  std::vector<double> values;
  const std::string err = capture_stderr([&] {
    cache.clear_memory();
    auto exe = cache.get_or_compile(c, text);
    values = to_host(exe->execute({&in})[0]).values;
  });
  CHECK(values == std::vector<double>{3, 5, 7});  // x*2+1, not x*3+1 = {4, 7, 10}
  INFO(err);
  CHECK(count(err, "torchtpu warning: compilation cache entry " + file.string() + " is refused (checksum mismatch)") == 1);
  auto s = cache.stats();
  CHECK(s.disk_rejects == 1);
  CHECK(s.disk_hits == 0);
  CHECK(s.compiles == 2);
  CHECK(s.disk_writes == 2);
  // The rewritten entry is good: the next lookup is a disk hit, with no warning.
  const std::string quiet = capture_stderr([&] {
    cache.clear_memory();
    cache.get_or_compile(c, text);
  });
  CHECK(quiet.empty());
  CHECK(cache.stats().disk_hits == 1);
  // A truncated entry: a miss and a recompile; the same file is warned about once per process.
  write_file(file, data.substr(0, data.size() / 2));
  const std::string again = capture_stderr([&] {
    cache.clear_memory();
    auto exe = cache.get_or_compile(c, text);
    CHECK(to_host(exe->execute({&in})[0]).values == std::vector<double>{3, 5, 7});
  });
  CHECK(again.empty());
  CHECK(cache.stats().disk_rejects == 2);
  CHECK(cache.stats().compiles == 3);
  cache.set_disk_dir(std::nullopt);
  std::filesystem::remove_all(dir);
}

TEST_CASE("cache: a truncated entry is refused with a warning in a fresh process", "[pjrt][cache]") {
  const std::string dir = temp_dir();
  REQUIRE(run_helper(dir).find("disk_writes=1") != std::string::npos);
  REQUIRE(entries(dir).size() == 1);
  const auto file = entries(dir)[0];
  const std::string good = read_file(file);
  write_file(file, good.substr(0, good.size() - 1));
  const std::string out = run_helper(dir);
  INFO(out);
  CHECK(out.find("compilation cache entry " + file.string() + " is refused (") != std::string::npos);
  CHECK(out.find("disk_hits=0 misses=1 compiles=1 disk_writes=1") != std::string::npos);
  CHECK(out.find("disk_rejects=1") != std::string::npos);
  CHECK(out.find("result=0.964028") != std::string::npos);
  // Rewritten whole: byte for byte on the emulator (its payload is the program text); XLA's
  // serialization need not repeat itself byte for byte, so there the proof is a clean disk hit.
  if (on_emulator()) CHECK(read_file(file) == good);
  const std::string next = run_helper(dir);
  INFO(next);
  CHECK(next.find("disk_hits=1 misses=0 compiles=0") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("cache: processes writing the same entry at once leave one whole entry", "[pjrt][cache]") {
  const std::string dir = temp_dir();
  const char* helper = std::getenv("TORCHTPU_TEST_CACHE_HELPER");
  REQUIRE(helper != nullptr);
  std::string cmd = "cd '" + dir + "' && for i in 1 2 3 4; do TORCHTPU_CACHE_DIR='" + dir + "' '" + helper +
                    "' > out.$i 2>&1 & done; wait";
  REQUIRE(std::system(cmd.c_str()) == 0);
  size_t ttexe = 0;
  for (const auto& f : entries(dir)) {
    const std::string name = f.filename().string();
    if (name.rfind("out.", 0) == 0) {
      const std::string out = read_file(f);
      INFO(name << ": " << out);
      CHECK(out.find("result=0.964028") != std::string::npos);
      CHECK(out.find("warning") == std::string::npos);
      continue;
    }
    CHECK(f.extension() == ".ttexe");  // no temporary left behind
    ++ttexe;
  }
  CHECK(ttexe == 1);
  const std::string out = run_helper(dir);
  INFO(out);
  CHECK(out.find("disk_hits=1 misses=0 compiles=0") != std::string::npos);
  std::filesystem::remove_all(dir);
}

// Emulator-only: it fakes the upgrade on a copy of the emulator plugin.
TEST_CASE("cache: a plugin replaced at the same path never loads the old plugin's entries", "[pjrt][cache][emulator-only]") {
  // Issue 11 item 6: the key holds the plugin's build (PJRT version, attributes, file size and
  // mtime). Fake an upgrade in place: a copy of the emulator, then the same path rewritten.
  const char* emu = std::getenv("TORCHTPU_TPU_EMULATOR_PATH");
  REQUIRE(emu != nullptr);
  const std::string dir = temp_dir();
  const std::string lib = dir + "/plugin/libtorchtpu_tpu_emulator.so";
  std::filesystem::create_directories(dir + "/plugin");
  std::filesystem::copy_file(emu, lib);
  const std::string cache_dir = dir + "/cache";
  const std::string env = "TORCHTPU_TPU_EMULATOR_PATH='" + lib + "'";
  CHECK(run_helper(cache_dir, 0, env).find("misses=1 compiles=1 disk_writes=1") != std::string::npos);
  CHECK(run_helper(cache_dir, 0, env).find("disk_hits=1 misses=0 compiles=0") != std::string::npos);
  // "Upgrade": one more byte at the end of the ELF file (ignored by the loader), a new mtime.
  { std::ofstream(lib, std::ios::binary | std::ios::app) << '\0'; }
  const std::string after = run_helper(cache_dir, 0, env);
  INFO(after);
  CHECK(after.find("disk_hits=0 misses=1 compiles=1 disk_writes=1 disk_rejects=0") != std::string::npos);
  CHECK(after.find("result=0.964028") != std::string::npos);
  CHECK(entries(cache_dir).size() == 2);  // the old build's entry is another key, not reused
  // The key itself names the build.
  const auto& p = tpu()->plugin();
  CHECK(p.build_id().find("pjrt 0.") == 0);
  CHECK(p.build_id().find(" size " + std::to_string(std::filesystem::file_size(p.file()))) != std::string::npos);
  const std::string key = pjrt::CompilationCache::make_key(*tpu(), "x", {});
  CHECK(key.find(p.build_id()) != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("cache: XLA's CPU plugin executables are stored and loaded by a second process", "[pjrt][cache][xla]") {
  const char* xla = std::getenv("TORCHTPU_TEST_XLA_CPU_PLUGIN");
  if (xla == nullptr || !std::filesystem::exists(xla)) {
    WARN("skipped: XLA's CPU PJRT plugin not found (scripts/deps.sh setup_venv installs it)");
    return;
  }
  const std::string dir = temp_dir();
  const std::string env = "env -u TORCHTPU_TPU_EMULATOR_PATH -u TORCHTPU_TPU_EMULATOR TORCHTPU_PJRT_PLUGIN_TPU='" +
                          std::string(xla) + "'";
  const std::string first = run_helper(dir, 0, env);
  INFO(first);
  CHECK(first.find("platform=cpu") != std::string::npos);
  CHECK(first.find("disk_hits=0 misses=1 compiles=1 disk_writes=1") != std::string::npos);
  CHECK(first.find("result=0.964028") != std::string::npos);
  const std::string second = run_helper(dir, 0, env);
  INFO(second);
  CHECK(second.find("disk_hits=1 misses=0 compiles=0") != std::string::npos);
  CHECK(second.find("result=0.964028") != std::string::npos);
  // A damaged XLA entry is refused by the checksum before XLA sees it.
  REQUIRE(entries(dir).size() == 1);
  const auto file = entries(dir)[0];
  std::string data = read_file(file);
  data[data.size() / 2] = static_cast<char>(data[data.size() / 2] ^ 1);
  write_file(file, data);
  const std::string third = run_helper(dir, 0, env);
  INFO(third);
  CHECK(third.find("is refused (checksum mismatch)") != std::string::npos);
  CHECK(third.find("compiles=1 disk_writes=1 disk_rejects=1") != std::string::npos);
  CHECK(third.find("result=0.964028") != std::string::npos);
  std::filesystem::remove_all(dir);
}
