// tests/xla/compile_corpus.cpp — compiles every StableHLO module torchtpu emitted (the
// `<hash>.mlir` files that TORCHTPU_DUMP_STABLEHLO writes) with a real XLA plugin through
// torchtpu's own PJRT client (issue 11 item 4).
//
// Usage: compile_corpus PLUGIN.so DIR...   (each DIR holds .mlir files; subdirectories are not
// read). Prints the corpus size, then for every module XLA rejects its file name and XLA's
// message (the first rejection first). Exit status: 0 when XLA accepts every module and the
// corpus is not empty, 1 otherwise.
#include <algorithm>   // std::sort
#include <chrono>      // std::chrono::steady_clock
#include <cstdio>      // std::printf
#include <cstdlib>     // unsetenv
#include <exception>   // std::exception
#include <filesystem>  // std::filesystem::directory_iterator
#include <fstream>     // std::ifstream
#include <iterator>    // std::istreambuf_iterator
#include <string>      // std::string
#include <vector>      // std::vector

#include <torchtpu/device/pjrt/client.hpp>  // Plugin, Client

int main(int argc, char** argv) {
  using namespace torchtpu;
  if (argc < 3) {
    std::printf("usage: %s PLUGIN.so DIR...\n", argv[0]);
    return 2;
  }
  unsetenv("TORCHTPU_DUMP_STABLEHLO");  // the modules compiled here are not dumped again
  std::vector<std::filesystem::path> files;
  for (int i = 2; i < argc; ++i) {
    std::error_code ec;
    for (std::filesystem::directory_iterator it(argv[i], ec), end; !ec && it != end; it.increment(ec))
      if (it->path().extension() == ".mlir") files.push_back(it->path());
    if (ec) std::printf("compile_corpus: cannot read %s: %s\n", argv[i], ec.message().c_str());
  }
  std::sort(files.begin(), files.end());
  std::shared_ptr<pjrt::Client> client;
  try {
    const pjrt::Plugin& plugin = pjrt::Plugin::load(argv[1]);
    client = pjrt::Client::for_plugin(plugin);
    std::printf("compile_corpus: %zu modules, compiled with %s, platform %s\n", files.size(), plugin.describe().c_str(),
                client->platform_name().c_str());
  } catch (const std::exception& e) {
    std::printf("compile_corpus: cannot use %s: %s\n", argv[1], e.what());
    return 1;
  }
  size_t rejected = 0;
  size_t bytes = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    bytes += text.size();
    try {
      (void)client->compile(text);
    } catch (const std::exception& e) {
      ++rejected;
      std::printf("%s: XLA rejects %s:\n  %s\n", rejected == 1 ? "FIRST REJECTION" : "rejection", f.c_str(), e.what());
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("compile_corpus: %zu modules (%zu bytes of StableHLO), %zu accepted, %zu rejected, %.1f s\n", files.size(),
              bytes, files.size() - rejected, rejected, secs);
  if (files.empty()) std::printf("compile_corpus: FAILED: the corpus is empty (was TORCHTPU_DUMP_STABLEHLO set?)\n");
  return files.empty() || rejected ? 1 : 0;
}
