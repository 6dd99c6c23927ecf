// tests/fuzz/replay.cpp — a main() for a libFuzzer harness built without libFuzzer (g++, the
// normal build): CI's short run of a harness whose instrumented build is too slow for it
// (fuzz_jit_graph compiles every built-in op; here it links the ops compiled once,
// TORCHTPU_JIT_SEPARATE_OPS). It feeds LLVMFuzzerTestOneInput
//   1. every file of the directories (or the files) named on the command line: the committed
//      seeds and reproducers, so a fixed bug stays fixed;
//   2. `--random N` inputs of 1..`--max-len` (default 256) bytes drawn from std::mt19937_64
//      seeded with `--seed S` (default 1): the same inputs on every machine and run.
// A finding is what it is under libFuzzer: the harness traps (its oracle) or a sanitizer
// reports. What this cannot do is follow coverage; open-ended campaigns are scripts/fuzz.
// Exit status 0 after every input ran; 2 on a usage error or an unreadable file.
#include <cstddef>     // size_t
#include <cstdint>     // uint8_t, uint64_t
#include <cstdio>      // std::fprintf, std::printf
#include <cstdlib>     // std::strtoull
#include <cstring>     // std::strcmp
#include <filesystem>  // std::filesystem::directory_iterator
#include <fstream>     // std::ifstream
#include <iterator>    // std::istreambuf_iterator
#include <random>      // std::mt19937_64
#include <string>      // std::string
#include <vector>      // std::vector
#include <algorithm>   // std::sort

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

bool run_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "replay: cannot read %s\n", p.c_str());
    return false;
  }
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::printf("replay: %s (%zu bytes)\n", p.c_str(), bytes.size());
  std::fflush(stdout);  // the last name printed is the input that crashed
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t n_random = 0, seed = 1, max_len = 256;
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    auto number = [&](const char* flag) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "replay: %s needs a number\n", flag);
        std::exit(2);
      }
      return std::strtoull(argv[++i], nullptr, 10);
    };
    if (std::strcmp(argv[i], "--random") == 0) {
      n_random = number("--random");
    } else if (std::strcmp(argv[i], "--seed") == 0) {
      seed = number("--seed");
    } else if (std::strcmp(argv[i], "--max-len") == 0) {
      max_len = number("--max-len");
      if (max_len == 0) max_len = 1;
    } else if (std::filesystem::is_directory(argv[i])) {
      std::vector<std::filesystem::path> in_dir;
      for (const auto& e : std::filesystem::directory_iterator(argv[i]))
        if (e.is_regular_file()) in_dir.push_back(e.path());
      std::sort(in_dir.begin(), in_dir.end());  // a fixed order on every file system
      files.insert(files.end(), in_dir.begin(), in_dir.end());
    } else {
      files.emplace_back(argv[i]);
    }
  }
  for (const auto& f : files)
    if (!run_file(f)) return 2;
  std::mt19937_64 gen(seed);
  std::vector<uint8_t> buf;
  for (uint64_t r = 0; r < n_random; ++r) {
    buf.resize(1 + gen() % max_len);
    for (auto& b : buf) b = static_cast<uint8_t>(gen());
    LLVMFuzzerTestOneInput(buf.data(), buf.size());
  }
  std::printf("replay: %zu files and %llu random inputs (seed %llu) ran\n", files.size(),
              static_cast<unsigned long long>(n_random), static_cast<unsigned long long>(seed));
  return 0;
}
