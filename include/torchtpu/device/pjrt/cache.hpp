// torchtpu/device/pjrt/cache.hpp — the compilation cache: executables keyed by program text,
// device kind, plugin platform/version and compile options; in memory, and on disk when
// TORCHTPU_CACHE_DIR is set (PJRT executable serialization); thread-safe; hit/miss counters.
#pragma once
#include <atomic>      // std::atomic
#include <cerrno>      // errno, EINTR
#include <cstdint>     // uint64_t
#include <cstdio>      // std::snprintf
#include <filesystem>  // std::filesystem::create_directories, rename
#include <fstream>     // std::ifstream
#include <future>      // std::promise, std::shared_future
#include <iterator>    // std::istreambuf_iterator
#include <memory>      // std::shared_ptr
#include <mutex>       // std::mutex, std::lock_guard
#include <optional>    // std::optional
#include <string>      // std::string
#include <string_view> // std::string_view
#include <system_error> // std::error_code
#include <unordered_map> // std::unordered_map
#include <fcntl.h>     // open, O_WRONLY, O_CREAT, O_EXCL, O_CLOEXEC, O_DIRECTORY
#include <unistd.h>    // getpid, write, fsync, close

#include "client.hpp"  // Client, Executable, CompileOptions
#include "plugin.hpp"  // detail::env_or_empty

namespace torchtpu::pjrt {

/// Counters of a `CompilationCache`; a snapshot, read with `stats()`.
struct CacheStats {
  uint64_t memory_hits = 0;  ///< found in memory (including waiting on a compile in flight)
  uint64_t disk_hits = 0;    ///< loaded from TORCHTPU_CACHE_DIR
  uint64_t misses = 0;       ///< found neither in memory nor on disk
  uint64_t compiles = 0;     ///< calls to PJRT_Client_Compile
  uint64_t disk_writes = 0;  ///< executables written to TORCHTPU_CACHE_DIR
};

/// Maps (program text, device kind, plugin platform name + version + path, compile options) to
/// loaded executables.
///
/// **Disk format:** one file per key, `<dir>/<32 hex digits>.ttexe`: the line
/// `torchtpu-executable 1\n`, the full key (u64 little-endian length + bytes) and the plugin's
/// `PJRT_Executable_Serialize` bytes (u64 length + bytes). The stored key is compared on load,
/// so hash collisions or files from another plugin version are misses, never wrong programs.
/// Files are written to a temporary name (every write checked, fsynced, closed with its error
/// checked) and renamed, so concurrent processes are safe and a failed write leaves nothing.
/// **Thread safety:** every method may be called concurrently; one program compiles once even
/// when many threads ask for it at the same time.
class CompilationCache {
 public:
  /// The process-wide cache used by the device layer.
  static CompilationCache& global() {
    static CompilationCache* cache = new CompilationCache();  // never destroyed (executables
    return *cache;                                            // hold plugin objects)
  }

  /// Returns the executable for `program` on `client`, compiling it on a miss.
  /// **Errors:** `DeviceError` from compilation (not cached: a later call retries).
  std::shared_ptr<Executable> get_or_compile(const std::shared_ptr<Client>& client,
                                             std::string_view program,
                                             const CompileOptions& options = {}) {
    const std::string key = make_key(*client, program, options);
    std::promise<std::shared_ptr<Executable>> promise;
    std::shared_future<std::shared_ptr<Executable>> existing;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = entries_.find(key);
      if (it != entries_.end()) {
        ++memory_hits_;
        existing = it->second;
      } else {
        entries_.emplace(key, promise.get_future().share());
      }
    }
    if (existing.valid()) return existing.get();  // waits outside the lock if still compiling
    try {
      std::shared_ptr<Executable> exe = load_or_compile(client, key, program, options);
      promise.set_value(exe);
      return exe;
    } catch (...) {
      promise.set_exception(std::current_exception());
      std::lock_guard<std::mutex> lock(mu_);
      entries_.erase(key);
      throw;
    }
  }

  /// Hit, miss and compile counters since the last `reset_stats()`.
  CacheStats stats() const {
    CacheStats s;
    s.memory_hits = memory_hits_.load();
    s.disk_hits = disk_hits_.load();
    s.misses = misses_.load();
    s.compiles = compiles_.load();
    s.disk_writes = disk_writes_.load();
    return s;
  }
  /// Sets every counter to zero.
  void reset_stats() {
    memory_hits_ = disk_hits_ = misses_ = compiles_ = disk_writes_ = 0;
  }
  /// Drops every in-memory entry (executables still in use stay alive through their owners).
  void clear_memory() {
    std::lock_guard<std::mutex> lock(mu_);
    entries_.clear();
  }
  /// Number of executables held in memory.
  size_t memory_entries() const {
    std::lock_guard<std::mutex> lock(mu_);
    return entries_.size();
  }

  /// Overrides the disk directory: a path, "" to disable the disk cache, or nullopt to follow
  /// `TORCHTPU_CACHE_DIR` again (the default; the variable is read on each miss).
  void set_disk_dir(std::optional<std::string> dir) {
    std::lock_guard<std::mutex> lock(mu_);
    disk_override_ = std::move(dir);
  }
  /// The on-disk cache directory in use ("" when disabled).
  std::string disk_dir() const {
    std::lock_guard<std::mutex> lock(mu_);
    return disk_override_ ? *disk_override_ : detail::env_or_empty("TORCHTPU_CACHE_DIR");
  }

  /// The cache key for a program (exposed for tests and tools).
  static std::string make_key(const Client& client, std::string_view program,
                              const CompileOptions& options) {
    std::string key;
    auto field = [&key](std::string_view s) {
      key += std::to_string(s.size());
      key += ':';
      key += s;
      key += ';';
    };
    field(client.platform_name());
    field(client.platform_version());
    field(client.plugin().path());
    field(client.device_kind());
    field(options.serialize());
    field(program);
    return key;
  }

  /// 128-bit hex digest of a key (two FNV-1a passes), used as the file name.
  static std::string key_hash(std::string_view key) {
    auto fnv = [key](uint64_t h) {
      for (unsigned char c : key) {
        h ^= c;
        h *= 0x100000001b3ULL;
      }
      return h;
    };
    char buf[40];
    std::snprintf(buf, sizeof(buf), "%016llx%016llx",
                  static_cast<unsigned long long>(fnv(0xcbf29ce484222325ULL)),
                  static_cast<unsigned long long>(fnv(0x84222325cbf29ce4ULL)));
    return buf;
  }

 private:
  std::shared_ptr<Executable> load_or_compile(const std::shared_ptr<Client>& client,
                                              const std::string& key, std::string_view program,
                                              const CompileOptions& options) {
    const std::string dir = disk_dir();
    std::filesystem::path file;
    if (!dir.empty()) {
      file = std::filesystem::path(dir) / (key_hash(key) + ".ttexe");
      if (auto bytes = read_entry(file, key)) {
        try {
          auto exe = client->deserialize(*bytes, options);
          ++disk_hits_;
          return exe;
        } catch (const DeviceError&) {
          // stale or foreign file: fall through, recompile and overwrite it
        }
      }
    }
    ++misses_;
    ++compiles_;
    std::shared_ptr<Executable> exe = client->compile(program, options);
    if (!dir.empty()) {
      try {
        if (auto bytes = exe->serialize()) {
          if (write_entry(file, key, *bytes)) ++disk_writes_;
        }
      } catch (const DeviceError&) {
        // a plugin that fails to serialize still gives a usable executable
      }
    }
    return exe;
  }

  static constexpr std::string_view kMagic = "torchtpu-executable 1\n";

  static void put_u64(std::string& out, uint64_t v) {
    for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
  }
  static bool get_u64(std::string_view& in, uint64_t& v) {
    if (in.size() < 8) return false;
    v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(in[i])) << (8 * i);
    in.remove_prefix(8);
    return true;
  }

  static std::optional<std::string> read_entry(const std::filesystem::path& file,
                                               const std::string& key) {
    std::ifstream f(file, std::ios::binary);
    if (!f) return std::nullopt;
    const std::string data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::string_view in(data);
    if (in.substr(0, kMagic.size()) != kMagic) return std::nullopt;
    in.remove_prefix(kMagic.size());
    uint64_t n = 0;
    if (!get_u64(in, n) || n > in.size() || in.substr(0, n) != key) return std::nullopt;
    in.remove_prefix(n);
    if (!get_u64(in, n) || n != in.size()) return std::nullopt;
    return std::string(in);
  }

  /// Writes `data` to `fd`, retrying short writes and EINTR. False on any error (EFBIG,
  /// ENOSPC, EIO, ...).
  static bool write_all(int fd, std::string_view data) {
    while (!data.empty()) {
      const ssize_t w = ::write(fd, data.data(), data.size());
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return false;
      data.remove_prefix(static_cast<size_t>(w));
    }
    return true;
  }

  /// Writes the entry to a temporary file next to `file`, checks every write, fsyncs and
  /// closes it (checked too: a failed close can mean lost data), then renames it into place
  /// and fsyncs the directory. On any failure the temporary is removed and nothing is renamed:
  /// a truncated entry never takes the place of a good one, nor counts as written.
  bool write_entry(const std::filesystem::path& file, const std::string& key,
                   const std::string& bytes) {
    std::error_code ec;
    std::filesystem::create_directories(file.parent_path(), ec);
    std::string data(kMagic);
    put_u64(data, key.size());
    data += key;
    put_u64(data, bytes.size());
    data += bytes;
    const std::filesystem::path tmp =
        file.string() + ".tmp." + std::to_string(getpid()) + "." + std::to_string(++tmp_counter_);
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return false;
    bool ok = write_all(fd, data);
    ok = ok && ::fsync(fd) == 0;
    ok = (::close(fd) == 0) && ok;
    if (ok) {
      std::filesystem::rename(tmp, file, ec);
      ok = !ec;
    }
    if (!ok) {
      std::filesystem::remove(tmp, ec);
      return false;
    }
    // The rename itself reaches the disk with the directory (best effort: not every file
    // system lets a directory be fsynced).
    const std::string dir_name = file.parent_path().empty() ? "." : file.parent_path().string();
    const int dir = ::open(dir_name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
      (void)::fsync(dir);
      (void)::close(dir);
    }
    return true;
  }

  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_future<std::shared_ptr<Executable>>> entries_;
  std::optional<std::string> disk_override_;
  std::atomic<uint64_t> memory_hits_{0}, disk_hits_{0}, misses_{0}, compiles_{0}, disk_writes_{0};
  std::atomic<uint64_t> tmp_counter_{0};
};

}  // namespace torchtpu::pjrt
