// torchtpu/device/pjrt/cache.hpp — the compilation cache: executables keyed by program text,
// device kind, plugin platform/version and compile options; in memory, and on disk when
// TORCHTPU_CACHE_DIR is set (PJRT executable serialization, checksummed entries); thread-safe;
// hit/miss counters.
#pragma once
#include <atomic>      // std::atomic
#include <cstdint>     // uint64_t
#include <cstdio>      // std::fprintf
#include <filesystem>  // std::filesystem::create_directories, rename
#include <fstream>     // std::ifstream
#include <future>      // std::promise, std::shared_future
#include <iterator>    // std::istreambuf_iterator
#include <memory>      // std::shared_ptr
#include <mutex>       // std::mutex, std::lock_guard
#include <optional>    // std::optional
#include <set>         // std::set
#include <string>      // std::string
#include <string_view> // std::string_view
#include <system_error> // std::error_code
#include <unordered_map> // std::unordered_map
#include <fcntl.h>     // open, O_RDONLY, O_CLOEXEC, O_DIRECTORY
#include <unistd.h>    // fsync, close

#include "client.hpp"  // Client, Executable, CompileOptions
#include "files.hpp"   // detail::digest128, detail::write_file_atomically
#include "plugin.hpp"  // detail::env_or_empty

namespace torchtpu::pjrt {

/// Counters of a `CompilationCache`; a snapshot, read with `stats()`.
struct CacheStats {
  uint64_t memory_hits = 0;  ///< found in memory (including waiting on a compile in flight)
  uint64_t disk_hits = 0;    ///< loaded from TORCHTPU_CACHE_DIR
  uint64_t misses = 0;       ///< found neither in memory nor on disk
  uint64_t compiles = 0;     ///< calls to PJRT_Client_Compile
  uint64_t disk_writes = 0;  ///< executables written to TORCHTPU_CACHE_DIR
  uint64_t disk_rejects = 0; ///< entries found on disk but refused (corrupt, truncated, foreign
                             ///< format, or the plugin could not load them): recompiled
};

/// Maps (program text, device kind, plugin platform name + version, plugin build, compile
/// options) to loaded executables.
///
/// **Key:** the platform name and version the client reports, the plugin's path and
/// `Plugin::build_id()` (PJRT API version, plugin attributes such as `xla_version`, and the
/// loaded file's size and modification time), the device kind, the serialized compile options
/// and the program text. A plugin upgraded in place therefore never loads an executable
/// compiled by the old one.
/// **Disk format (version 2):** one file per key, `<dir>/<32 hex digits of the key's
/// digest>.ttexe`: the line `torchtpu-executable 2\n`, the full key (u64 little-endian length
/// + bytes), the plugin's `PJRT_Executable_Serialize` bytes (u64 length + bytes), and a
/// checksum: the 32 hex digits of `detail::digest128` over everything before it (magic, key
/// and payload). On load the stored key must equal the key asked for and the checksum must
/// match: a file with another key is a plain miss; a truncated, altered or foreign file is a
/// miss plus one warning per file per process on stderr naming it (and `disk_rejects`), then
/// a correct recompile that replaces it. Files are written to a temporary name (every write
/// checked, fsynced, closed with its error checked) and renamed, so concurrent processes never
/// see half an entry and a failed write leaves nothing.
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
    s.disk_rejects = disk_rejects_.load();
    return s;
  }
  /// Sets every counter to zero.
  void reset_stats() {
    memory_hits_ = disk_hits_ = misses_ = compiles_ = disk_writes_ = disk_rejects_ = 0;
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
    field(client.plugin().build_id());
    field(client.device_kind());
    field(options.serialize());
    field(program);
    return key;
  }

  /// 128-bit hex digest of a key (`detail::digest128`), used as the file name.
  static std::string key_hash(std::string_view key) { return detail::digest128(key); }

  /// The bytes of a version-2 disk entry holding `payload` under `key` (see the class doc);
  /// exposed for tests and the fuzzing harness.
  static std::string encode_entry(std::string_view key, std::string_view payload) {
    std::string data(kMagic);
    put_u64(data, key.size());
    data += key;
    put_u64(data, payload.size());
    data += payload;
    data += detail::digest128(data);
    return data;
  }

  /// Why `data` is not a valid entry for `key`: "" when it is one (then `payload` is set),
  /// "another key" for a valid entry stored under a different key, else a description of the
  /// damage ("truncated ...", "checksum mismatch", "not a torchtpu cache entry ...").
  static std::string decode_entry(std::string_view data, std::string_view key, std::string& payload) {
    constexpr size_t kSum = 32;
    if (data.substr(0, kMagic.size()) != kMagic) {
      if (data.substr(0, kMagicPrefix.size()) == kMagicPrefix) return "written in another entry format version";
      return "not a torchtpu cache entry (bad header)";
    }
    if (data.size() < kMagic.size() + 16 + kSum) return "truncated (" + std::to_string(data.size()) + " bytes)";
    const std::string_view body = data.substr(0, data.size() - kSum);
    std::string_view in = body.substr(kMagic.size());
    uint64_t n = 0;
    if (!get_u64(in, n) || n > in.size()) return "truncated (key length past the end)";
    const std::string_view stored_key = in.substr(0, n);
    in.remove_prefix(n);
    if (!get_u64(in, n) || n != in.size())
      return n > in.size() ? "truncated (payload length past the end)" : "payload length does not match the file size";
    if (detail::digest128(body) != data.substr(data.size() - kSum)) return "checksum mismatch";
    if (stored_key != key) return "another key";
    payload.assign(in);
    return "";
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
        } catch (const DeviceError& e) {
          reject(file, std::string("the plugin could not load it: ") + e.what());
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

  /// Counts a refused entry and warns about it once per file per process.
  void reject(const std::filesystem::path& file, const std::string& why) {
    ++disk_rejects_;
    bool first = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      first = warned_.insert(file.string()).second;
    }
    if (first)
      std::fprintf(stderr, "torchtpu warning: compilation cache entry %s is refused (%s); recompiling\n",
                   file.c_str(), why.c_str());
  }

  static constexpr std::string_view kMagicPrefix = "torchtpu-executable ";
  static constexpr std::string_view kMagic = "torchtpu-executable 2\n";

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

  /// The payload of `file` if it is a valid entry for `key`; nullopt for a missing file or
  /// another key (silent misses) and for a damaged one (`reject`: warned about).
  std::optional<std::string> read_entry(const std::filesystem::path& file, const std::string& key) {
    std::ifstream f(file, std::ios::binary);
    if (!f) return std::nullopt;
    const std::string data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (f.bad()) {
      reject(file, "read error");
      return std::nullopt;
    }
    std::string payload;
    const std::string why = decode_entry(data, key, payload);
    if (why.empty()) return payload;
    if (why != "another key") reject(file, why);
    return std::nullopt;
  }

  /// Writes the entry atomically (`detail::write_file_atomically`: temporary file, every write
  /// checked, fsync, checked close, rename), then fsyncs the directory. On any failure nothing
  /// is renamed: a truncated entry never takes the place of a good one, nor counts as written.
  static bool write_entry(const std::filesystem::path& file, const std::string& key,
                          const std::string& bytes) {
    std::error_code ec;
    std::filesystem::create_directories(file.parent_path(), ec);
    if (!detail::write_file_atomically(file, encode_entry(key, bytes))) return false;
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
  std::set<std::string> warned_;  // files already warned about (under mu_)
  std::atomic<uint64_t> memory_hits_{0}, disk_hits_{0}, misses_{0}, compiles_{0}, disk_writes_{0},
      disk_rejects_{0};
};

}  // namespace torchtpu::pjrt
