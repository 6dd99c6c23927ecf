// torchtpu/device/pjrt/files.hpp — files the PJRT layer writes: a 128-bit content digest,
// atomic writes (temporary name, then rename), and the TORCHTPU_DUMP_STABLEHLO module dump.
#pragma once
#include <atomic>       // std::atomic
#include <cerrno>       // errno, EINTR
#include <cstdint>      // uint64_t
#include <cstdio>       // std::snprintf, std::fprintf
#include <filesystem>   // std::filesystem::path, rename, remove, create_directories, exists
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <system_error> // std::error_code
#include <fcntl.h>      // open, O_WRONLY, O_CREAT, O_EXCL, O_CLOEXEC
#include <unistd.h>     // getpid, write, fsync, close

#include "plugin.hpp"  // detail::env_or_empty

namespace torchtpu::pjrt {

namespace detail {

/// 128-bit digest of `bytes` as 32 hex digits: two FNV-1a 64 passes with different offset
/// bases. Not cryptographic; any change of a single byte always changes it (each FNV step is a
/// bijection of the state). Used for cache file names and entry checksums, and dump file names.
/// **Source:** FNV-1a, Fowler/Noll/Vo (http://www.isthe.com/chongo/tech/comp/fnv/), 64-bit
/// prime 0x100000001b3.
inline std::string digest128(std::string_view bytes) {
  auto fnv = [bytes](uint64_t h) {
    for (unsigned char c : bytes) {
      h ^= c;
      h *= 0x100000001b3ULL;
    }
    return h;
  };
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx", static_cast<unsigned long long>(fnv(0xcbf29ce484222325ULL)),
                static_cast<unsigned long long>(fnv(0x84222325cbf29ce4ULL)));
  return buf;
}

/// Writes `data` to `file` atomically: a temporary name in the same directory, then rename.
/// False on any error (the temporary is removed).
inline bool write_file_atomically(const std::filesystem::path& file, std::string_view data) {
  static std::atomic<uint64_t> counter{0};
  const std::filesystem::path tmp =
      file.string() + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(++counter);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok = true;
  while (ok && !data.empty()) {
    const ssize_t w = ::write(fd, data.data(), data.size());
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) ok = false;
    else data.remove_prefix(static_cast<size_t>(w));
  }
  ok = ok && ::fsync(fd) == 0;
  ok = (::close(fd) == 0) && ok;
  std::error_code ec;
  if (ok) {
    std::filesystem::rename(tmp, file, ec);
    ok = !ec;
  }
  if (!ok) std::filesystem::remove(tmp, ec);
  return ok;
}

/// `TORCHTPU_DUMP_STABLEHLO=<dir>`: every StableHLO module a plugin compiled successfully is
/// written to `<dir>/<platform>/<digest128 of the text>.mlir`, `platform` being the client's
/// platform name ("tpu" for libtpu and the emulator, "cpu" for XLA's CPU plugin); once per
/// distinct text, directories created. Modules the plugin rejects are not written (tests hand
/// it invalid text on purpose). A directory that cannot be written gives one warning on
/// stderr; compilation goes on.
inline void dump_stablehlo(std::string_view mlir, const std::string& platform) {
  const std::string root = env_or_empty("TORCHTPU_DUMP_STABLEHLO");
  if (root.empty()) return;
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::path(root) / (platform.empty() ? "unknown" : platform);
  std::filesystem::create_directories(dir, ec);
  const std::filesystem::path file = dir / (digest128(mlir) + ".mlir");
  if (std::filesystem::exists(file, ec)) return;
  if (!write_file_atomically(file, mlir)) {
    static std::atomic<bool> warned{false};
    if (!warned.exchange(true))
      std::fprintf(stderr, "torchtpu warning: TORCHTPU_DUMP_STABLEHLO: cannot write %s; modules are not dumped\n",
                   file.c_str());
  }
}

}  // namespace detail

}  // namespace torchtpu::pjrt
