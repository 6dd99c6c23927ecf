// tests/fuzz/fuzz_cache.cpp — libFuzzer harness for the disk compilation cache reader
// (torchtpu/device/pjrt/cache.hpp: the `.ttexe` entry format) and what it hands the file's
// payload to: the TPU emulator's PJRT_Executable_DeserializeAndLoad (src/device/plugin_api.cpp)
// and its StableHLO parser. Each input becomes the cache file of one fixed program's key;
// get_or_compile must then either load it or treat it as stale and recompile (never throw,
// crash or hang). The first input byte picks how much of the file the harness writes itself,
// so the fuzzer also reaches the payload without guessing the (machine-dependent) key or
// forging the checksum:
//   0: the whole file is the input;  1: magic + input;  2: magic + key + input;
//   3: a valid entry (`encode_entry`: magic, key, payload length, checksum) whose payload is
//      the input (the emulator's serialized executable);
//   4+: no file at all (a plain miss).
// Modes 0-2 almost never carry a valid checksum: they exercise the entry decoder's refusals.
// The emulator plugin is the instrumented build next to this binary (scripts/fuzz), or
// TORCHTPU_TPU_EMULATOR_PATH.
#include <unistd.h>  // getpid, readlink

#include <cstddef>     // size_t
#include <cstdint>     // uint8_t, uint64_t
#include <cstdlib>     // setenv, getenv, mkdtemp, atexit
#include <filesystem>  // std::filesystem
#include <fstream>     // std::ofstream
#include <string>      // std::string

#include <torchtpu/device/pjrt/cache.hpp>  // CompilationCache, Client

namespace {

using namespace torchtpu;

const char kProgram[] =
    "func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {\n"
    "  %0 = stablehlo.add %x, %x : tensor<3xf32>\n"
    "  return %0 : tensor<3xf32>\n"
    "}\n";

std::string put_u64(uint64_t v) {
  std::string s;
  for (int i = 0; i < 8; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

struct State {
  std::shared_ptr<pjrt::Client> client;
  std::string key, file;
};

State& state() {
  static State* s = [] {
    auto* st = new State;
    // tmpfs when there is one: the harness writes and reads a file on every input
    std::string base = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
    std::string tmpl = base + "/torchtpu-fuzz-cache-XXXXXX";
    const char* dir = mkdtemp(tmpl.data());
    if (!dir) __builtin_trap();
    st->client = pjrt::Client::get("tpu");
    st->key = pjrt::CompilationCache::make_key(*st->client, kProgram, {});
    st->file = std::string(dir) + "/" + pjrt::CompilationCache::key_hash(st->key) + ".ttexe";
    pjrt::CompilationCache::global().set_disk_dir(std::string(dir));
    static std::string made = dir;  // removed when libFuzzer exits
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(made, ec);
    });
    return st;
  }();
  return *s;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (!std::getenv("TORCHTPU_TPU_EMULATOR_PATH")) {
    char self[4096];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0) __builtin_trap();
    self[n] = '\0';
    const std::string lib = std::filesystem::path(self).parent_path() / "libtorchtpu_tpu_emulator.so";
    setenv("TORCHTPU_TPU_EMULATOR_PATH", lib.c_str(), 1);
  }
  setenv("TORCHTPU_TPU_EMULATOR", "1", 0);
  (void)state();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  State& st = state();
  auto& cache = pjrt::CompilationCache::global();
  const int mode = size ? data[0] : 4;
  const std::string input(reinterpret_cast<const char*>(data) + (size ? 1 : 0), size ? size - 1 : 0);
  const std::string magic = "torchtpu-executable 2\n";
  std::error_code ec;
  std::filesystem::remove(st.file, ec);
  if (mode < 4) {
    std::string bytes = mode == 0 ? input : magic;
    if (mode == 1) bytes += input;
    if (mode == 2) bytes += put_u64(st.key.size()) + st.key + input;
    if (mode == 3) bytes = pjrt::CompilationCache::encode_entry(st.key, input);
    std::ofstream(st.file, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  cache.clear_memory();
  cache.reset_stats();
  std::shared_ptr<pjrt::Executable> exe;
  try {
    exe = cache.get_or_compile(st.client, kProgram);
  } catch (...) {
    __builtin_trap();  // the program is valid: a bad file must mean "recompile", never an error
  }
  const pjrt::CacheStats s = cache.stats();
  if (!exe || s.disk_hits + s.misses != 1) __builtin_trap();
  return 0;
}
