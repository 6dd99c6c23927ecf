// torchtpu/device/pjrt/plugin.hpp — loading a PJRT plugin (dlopen, GetPjrtApi, version check,
// PJRT_Plugin_Initialize), finding it for a device kind, and turning PJRT_Error into DeviceError.
#pragma once
#include <dlfcn.h>  // dlopen, dlsym, dlerror, dladdr
#include <sys/stat.h>  // stat

#include <algorithm>   // std::sort
#include <chrono>      // std::chrono::microseconds
#include <cstdlib>     // std::getenv
#include <filesystem>  // std::filesystem::exists, directory_iterator
#include <map>         // std::map
#include <memory>      // std::unique_ptr
#include <mutex>       // std::mutex, std::lock_guard
#include <string>      // std::string
#include <string_view> // std::string_view
#include <system_error> // std::error_code
#include <thread>      // std::this_thread::yield, sleep_for
#include <utility>     // std::pair
#include <vector>      // std::vector

#include "../../core/errors.hpp"  // DeviceError, DeviceUnavailable
#include "c_api.hpp"              // capi::PJRT_Api, capi::Slot, argument structs
#if __has_include("../../installed.hpp")
#include "../../installed.hpp"  // TORCHTPU_INSTALL_LIBDIR[_REL], written by meson install
#endif

namespace torchtpu::pjrt {

namespace detail {

/// Reads an environment variable; an unset or empty variable gives "".
inline std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

/// Turns `err` into a DeviceError carrying PJRT's code and message, destroying `err` first.
/// `err` must be non-null and come from `api`. Never returns.
[[noreturn]] inline void throw_pjrt_error(const capi::PJRT_Api* api, capi::PJRT_Error* err,
                                          std::string_view context) {
  using namespace capi;
  std::string message = "(no message)";
  int code = PJRT_Error_Code_UNKNOWN;
  auto slot_ok = [&](Slot s) {
    return api->struct_size >= api_size_for(s) && api->slots[static_cast<int>(s)] != nullptr;
  };
  if (slot_ok(Slot::Error_Message)) {
    PJRT_Error_Message_Args m{};
    m.struct_size = TORCHTPU_PJRT_STRUCT_SIZE(PJRT_Error_Message_Args, message_size);
    m.error = err;
    reinterpret_cast<void (*)(PJRT_Error_Message_Args*)>(
        api->slots[static_cast<int>(Slot::Error_Message)])(&m);
    if (m.message) message.assign(m.message, m.message_size);
  }
  if (slot_ok(Slot::Error_GetCode)) {
    PJRT_Error_GetCode_Args g{};
    g.struct_size = TORCHTPU_PJRT_STRUCT_SIZE(PJRT_Error_GetCode_Args, code);
    g.error = err;
    PJRT_Error* inner = reinterpret_cast<PJRT_Error* (*)(PJRT_Error_GetCode_Args*)>(
        api->slots[static_cast<int>(Slot::Error_GetCode)])(&g);
    if (inner == nullptr) {
      code = g.code;
    } else if (slot_ok(Slot::Error_Destroy)) {
      PJRT_Error_Destroy_Args d{};
      d.struct_size = TORCHTPU_PJRT_STRUCT_SIZE(PJRT_Error_Destroy_Args, error);
      d.error = inner;
      reinterpret_cast<void (*)(PJRT_Error_Destroy_Args*)>(
          api->slots[static_cast<int>(Slot::Error_Destroy)])(&d);
    }
  }
  if (slot_ok(Slot::Error_Destroy)) {
    PJRT_Error_Destroy_Args d{};
    d.struct_size = TORCHTPU_PJRT_STRUCT_SIZE(PJRT_Error_Destroy_Args, error);
    d.error = err;
    reinterpret_cast<void (*)(PJRT_Error_Destroy_Args*)>(
        api->slots[static_cast<int>(Slot::Error_Destroy)])(&d);
  }
  if (context.empty()) throw DeviceError(code, message);
  throw DeviceError(code, std::string(context) + ": " + message);
}

/// `h` itself; a DeviceError (INTERNAL) naming the PJRT function when a plugin returned no
/// error but a null `what` (a handle torchtpu would otherwise dereference).
template <class T>
T* check_handle(T* h, std::string_view function, std::string_view what) {
  if (h == nullptr)
    throw DeviceError(capi::PJRT_Error_Code_INTERNAL,
                      std::string(function) + ": the plugin returned no error but a null " + std::string(what));
  return h;
}

}  // namespace detail

/// A loaded PJRT plugin: the shared object, its `PJRT_Api` table and its version.
///
/// **Ownership:** plugins are loaded once per path per process by `Plugin::load` and never
/// unloaded (no dlclose: plugin objects may outlive any C++ owner). `Plugin` objects live in a
/// process-wide registry; references returned by `load` stay valid until exit.
class Plugin {
 public:
  /// Loads (or returns the already loaded) plugin at `path`.
  ///
  /// **Errors:** `DeviceUnavailable` if dlopen fails or `GetPjrtApi` is missing;
  /// `DeviceError` (code 9, FAILED_PRECONDITION) if the plugin's PJRT API major version
  /// differs from ours or its minor is below 57 (the message names both versions), or its
  /// table lacks a function torchtpu needs (the message names each missing slot and the
  /// plugin's version), or a DeviceError from `PJRT_Plugin_Initialize`.
  static const Plugin& load(const std::string& path, bool emulated = false) {
    // Leaked, never destroyed: buffers and executables held by objects with static storage
    // duration (a namespace-scope device tensor) call into their plugin after `main` returns.
    struct Registry {
      std::mutex mu;
      std::map<std::string, std::unique_ptr<Plugin>> plugins;
    };
    static Registry* registry = new Registry();
    std::lock_guard<std::mutex> lock(registry->mu);
    auto it = registry->plugins.find(path);
    if (it != registry->plugins.end()) return *it->second;
    std::unique_ptr<Plugin> p(new Plugin(path, emulated));
    return *registry->plugins.emplace(path, std::move(p)).first->second;
  }

  /// The plugin's function table; never null, lives until process exit.
  const capi::PJRT_Api* api() const noexcept { return api_; }
  /// The path it was loaded from.
  const std::string& path() const noexcept { return path_; }
  /// True for torchtpu's TPU emulator (found through TORCHTPU_TPU_EMULATOR[_PATH]).
  bool emulated() const noexcept { return emulated_; }
  /// PJRT C API major version the plugin reports.
  int api_major() const noexcept { return api_->pjrt_api_version.major_version; }
  /// PJRT C API minor version the plugin reports.
  int api_minor() const noexcept { return api_->pjrt_api_version.minor_version; }

  /// What the plugin reports through `PJRT_Plugin_Attributes` (e.g. `xla_version`,
  /// `stablehlo_current_version`), in the plugin's order, each value as text (int64 lists
  /// joined with '.', bools as true/false); empty when the plugin lacks the function or it fails.
  const std::vector<std::pair<std::string, std::string>>& attributes() const noexcept { return attributes_; }
  /// The shared object actually loaded (from `dladdr`, so a bare name found on the loader path
  /// becomes a file), its size in bytes and modification time (ns since the epoch; 0 if unknown).
  const std::string& file() const noexcept { return file_; }
  /// Identity of this plugin build, for the compilation cache key: PJRT API version, the
  /// attributes, and the loaded file's path, size and modification time. A plugin upgraded in
  /// place (same path, another build) has another identity, so its cache entries never match.
  const std::string& build_id() const noexcept { return build_id_; }

  /// "PJRT plugin <path> (PJRT C API 0.N, xla_version=..., ...)": how errors name the plugin.
  std::string describe() const {
    std::string out = "PJRT plugin " + path_ + " (PJRT C API " + std::to_string(api_major()) + "." +
                      std::to_string(api_minor());
    for (const auto& [k, v] : attributes_)
      if (k == "xla_version" || k == "stablehlo_current_version" || k == "cuda_version")
        out += ", " + k + " " + v;
    return out + ")";
  }

  /// True if the plugin's table has slot `s` and it is non-null.
  bool has(capi::Slot s) const noexcept {
    return api_->struct_size >= capi::api_size_for(s) &&
           api_->slots[static_cast<int>(s)] != nullptr;
  }

  /// Calls slot `s` with `args`; a non-null PJRT_Error becomes a DeviceError prefixed with
  /// `what` (the PJRT function name is used when empty).
  ///
  /// **Errors:** `DeviceError` with code 12 (UNIMPLEMENTED) if the plugin lacks the slot.
  template <class Args>
  void call(capi::Slot s, Args* args, std::string_view what) const {
    if (!has(s))
      throw DeviceError(capi::PJRT_Error_Code_UNIMPLEMENTED,
                        std::string(what) + ": the plugin " + path_ + " does not implement it");
    auto fn = reinterpret_cast<capi::PJRT_Error* (*)(Args*)>(api_->slots[static_cast<int>(s)]);
    if (capi::PJRT_Error* err = fn(args)) detail::throw_pjrt_error(api_, err, what);
  }

  /// Destroys an event; null is a no-op. Never throws (errors from Destroy are dropped).
  void destroy_event(capi::PJRT_Event* ev) const noexcept {
    if (ev == nullptr || !has(capi::Slot::Event_Destroy)) return;
    capi::PJRT_Event_Destroy_Args a{};
    a.struct_size = TORCHTPU_PJRT_STRUCT_SIZE(capi::PJRT_Event_Destroy_Args, event);
    a.event = ev;
    auto fn = reinterpret_cast<capi::PJRT_Error* (*)(capi::PJRT_Event_Destroy_Args*)>(
        api_->slots[static_cast<int>(capi::Slot::Event_Destroy)]);
    destroy_error(fn(&a));
  }

  /// Awaits and destroys `ev` (null is a no-op); the event's error becomes a DeviceError.
  /// A plugin without PJRT_Event_Await is polled with PJRT_Event_IsReady (then its status read
  /// with PJRT_Event_Error); an event is never taken as complete without asking the plugin.
  /// **Errors:** DeviceError from the event; DeviceError (UNIMPLEMENTED) when the plugin can
  /// neither await nor poll events (the event is destroyed).
  void await_event(capi::PJRT_Event* ev, std::string_view what) const {
    if (ev == nullptr) return;
    capi::PJRT_Error* err = nullptr;
    try {
      err = wait_for(ev);
    } catch (...) {
      destroy_event(ev);
      throw;
    }
    destroy_event(ev);
    if (err) detail::throw_pjrt_error(api_, err, what);
  }

  /// `await_event` that drops the event's error: for cleanup paths that are already throwing.
  /// Returns without waiting only when the plugin can neither await nor poll.
  void await_event_quietly(capi::PJRT_Event* ev) const noexcept {
    if (ev == nullptr) return;
    try {
      destroy_error(wait_for(ev));
    } catch (...) {
    }
    destroy_event(ev);
  }

  /// Destroys a PJRT_Error without reading it; null is a no-op.
  void destroy_error(capi::PJRT_Error* err) const noexcept {
    if (err == nullptr || !has(capi::Slot::Error_Destroy)) return;
    capi::PJRT_Error_Destroy_Args d{};
    d.struct_size = TORCHTPU_PJRT_STRUCT_SIZE(capi::PJRT_Error_Destroy_Args, error);
    d.error = err;
    reinterpret_cast<void (*)(capi::PJRT_Error_Destroy_Args*)>(
        api_->slots[static_cast<int>(capi::Slot::Error_Destroy)])(&d);
  }

  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

 private:
  /// Waits until `ev` completes; returns its error (owned by the caller) or null.
  capi::PJRT_Error* wait_for(capi::PJRT_Event* ev) const {
    using namespace capi;
    PJRT_Event_Await_Args a{};
    a.struct_size = TORCHTPU_PJRT_STRUCT_SIZE(PJRT_Event_Await_Args, event);
    a.event = ev;
    if (has(Slot::Event_Await))
      return reinterpret_cast<PJRT_Error* (*)(PJRT_Event_Await_Args*)>(
          api_->slots[static_cast<int>(Slot::Event_Await)])(&a);
    if (!has(Slot::Event_IsReady))
      throw DeviceError(PJRT_Error_Code_UNIMPLEMENTED,
                        "PJRT plugin " + path_ + " implements neither PJRT_Event_Await nor PJRT_Event_IsReady: "
                        "torchtpu cannot tell when its work completes");
    auto is_ready = reinterpret_cast<PJRT_Error* (*)(PJRT_Event_IsReady_Args*)>(
        api_->slots[static_cast<int>(Slot::Event_IsReady)]);
    for (unsigned spin = 0;; ++spin) {
      PJRT_Event_IsReady_Args r{};
      r.struct_size = TORCHTPU_PJRT_STRUCT_SIZE(PJRT_Event_IsReady_Args, is_ready);
      r.event = ev;
      if (PJRT_Error* e = is_ready(&r)) return e;
      if (r.is_ready) break;
      if (spin < 64) std::this_thread::yield();
      else std::this_thread::sleep_for(std::chrono::microseconds(spin < 1024 ? 10 : 1000));
    }
    if (!has(Slot::Event_Error)) return nullptr;
    return reinterpret_cast<PJRT_Error* (*)(PJRT_Event_Error_Args*)>(
        api_->slots[static_cast<int>(Slot::Event_Error)])(&a);
  }

  Plugin(const std::string& path, bool emulated) : path_(path), emulated_(emulated) {
    // RTLD_LOCAL: plugins carry their own LLVM/protobuf/abseil; never dlclose (see class doc).
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* e = dlerror();
      throw DeviceUnavailable("cannot load PJRT plugin " + path + ": " + (e ? e : "dlopen failed"));
    }
    void* sym = dlsym(handle, "GetPjrtApi");
    if (sym == nullptr)
      throw DeviceUnavailable("PJRT plugin " + path + " does not export GetPjrtApi");
    auto get_api = reinterpret_cast<capi::GetPjrtApiFn>(sym);
    api_ = get_api();
    if (api_ == nullptr)
      throw DeviceUnavailable("PJRT plugin " + path + ": GetPjrtApi returned null");
    const int major = api_->pjrt_api_version.major_version;
    const int minor = api_->pjrt_api_version.minor_version;
    const std::string ours = std::to_string(capi::kApiMajor) + "." + std::to_string(capi::kApiMinor);
    if (major != capi::kApiMajor || minor < capi::kMinSupportedMinor)
      throw DeviceError(capi::PJRT_Error_Code_FAILED_PRECONDITION,
                        "PJRT plugin " + path + " reports PJRT C API version " +
                            std::to_string(major) + "." + std::to_string(minor) +
                            ", but torchtpu was built for " + ours + " and needs major " +
                            std::to_string(capi::kApiMajor) + " with minor >= " +
                            std::to_string(capi::kMinSupportedMinor));
    check_required_slots();
    capi::PJRT_Plugin_Initialize_Args init{};
    init.struct_size = sizeof(init);
    call(capi::Slot::Plugin_Initialize, &init, "PJRT_Plugin_Initialize");
    read_attributes();
    identify(sym);
  }

  /// Every slot torchtpu calls unconditionally must exist (inside `struct_size`) and be
  /// non-null; optional ones (PlatformVersion, Devices, the event alternatives, serialization,
  /// CopyToDevice, Buffer_Device, ...) are checked where they are used.
  /// **Errors:** `DeviceError` (FAILED_PRECONDITION) naming each missing slot, the plugin's
  /// version and its table size.
  void check_required_slots() const {
    using capi::Slot;
    static constexpr std::pair<Slot, const char*> kRequired[] = {
        {Slot::Error_Destroy, "PJRT_Error_Destroy"},
        {Slot::Error_Message, "PJRT_Error_Message"},
        {Slot::Error_GetCode, "PJRT_Error_GetCode"},
        {Slot::Plugin_Initialize, "PJRT_Plugin_Initialize"},
        {Slot::Event_Destroy, "PJRT_Event_Destroy"},
        {Slot::Client_Create, "PJRT_Client_Create"},
        {Slot::Client_Destroy, "PJRT_Client_Destroy"},
        {Slot::Client_PlatformName, "PJRT_Client_PlatformName"},
        {Slot::Client_AddressableDevices, "PJRT_Client_AddressableDevices"},
        {Slot::Client_Compile, "PJRT_Client_Compile"},
        {Slot::Client_BufferFromHostBuffer, "PJRT_Client_BufferFromHostBuffer"},
        {Slot::DeviceDescription_Id, "PJRT_DeviceDescription_Id"},
        {Slot::DeviceDescription_Kind, "PJRT_DeviceDescription_Kind"},
        {Slot::Device_GetDescription, "PJRT_Device_GetDescription"},
        {Slot::Executable_Destroy, "PJRT_Executable_Destroy"},
        {Slot::Executable_NumOutputs, "PJRT_Executable_NumOutputs"},
        {Slot::LoadedExecutable_Destroy, "PJRT_LoadedExecutable_Destroy"},
        {Slot::LoadedExecutable_GetExecutable, "PJRT_LoadedExecutable_GetExecutable"},
        {Slot::LoadedExecutable_Execute, "PJRT_LoadedExecutable_Execute"},
        {Slot::Buffer_Destroy, "PJRT_Buffer_Destroy"},
        {Slot::Buffer_ElementType, "PJRT_Buffer_ElementType"},
        {Slot::Buffer_Dimensions, "PJRT_Buffer_Dimensions"},
        {Slot::Buffer_ToHostBuffer, "PJRT_Buffer_ToHostBuffer"},
    };
    std::string missing;
    for (const auto& [slot, name] : kRequired) {
      if (has(slot)) continue;
      missing += missing.empty() ? "" : ", ";
      missing += name;
      missing += api_->struct_size < capi::api_size_for(slot) ? " (slot " : " (null, slot ";
      missing += std::to_string(static_cast<int>(slot)) + ")";
    }
    if (!missing.empty())
      throw DeviceError(capi::PJRT_Error_Code_FAILED_PRECONDITION,
                        "PJRT plugin " + path_ + " (PJRT C API " + std::to_string(api_major()) + "." +
                            std::to_string(api_minor()) + ", a table of " +
                            std::to_string(api_->struct_size < 40 ? 0 : (api_->struct_size - 40) / 8) +
                            " functions) lacks functions torchtpu needs: " + missing);
  }

  void read_attributes() {
    using namespace capi;
    if (!has(Slot::Plugin_Attributes)) return;
    PJRT_Plugin_Attributes_Args a{};
    a.struct_size = sizeof(a);
    auto fn = reinterpret_cast<PJRT_Error* (*)(PJRT_Plugin_Attributes_Args*)>(
        api_->slots[static_cast<int>(Slot::Plugin_Attributes)]);
    if (PJRT_Error* err = fn(&a)) {
      destroy_error(err);
      return;
    }
    for (size_t i = 0; a.attributes && i < a.num_attributes; ++i) {
      const PJRT_NamedValue& nv = a.attributes[i];
      std::string value;
      switch (nv.type) {
        case PJRT_NamedValue_kString:
          if (nv.string_value) value.assign(nv.string_value, nv.value_size);
          break;
        case PJRT_NamedValue_kInt64: value = std::to_string(nv.int64_value); break;
        case PJRT_NamedValue_kInt64List:
          for (size_t k = 0; nv.int64_array_value && k < nv.value_size; ++k) {
            // (Appended in two steps: GCC 12 -O3 warns -Wrestrict about `"." + to_string(...)`.)
            if (k) value += '.';
            value += std::to_string(nv.int64_array_value[k]);
          }
          break;
        case PJRT_NamedValue_kFloat: value = std::to_string(nv.float_value); break;
        case PJRT_NamedValue_kBool: value = nv.bool_value ? "true" : "false"; break;
      }
      attributes_.emplace_back(nv.name ? std::string(nv.name, nv.name_size) : std::string(), value);
    }
  }

  void identify(void* sym) {
    Dl_info info{};
    file_ = (dladdr(sym, &info) != 0 && info.dli_fname) ? info.dli_fname : path_;
    struct stat st{};
    const bool known = ::stat(file_.c_str(), &st) == 0;
    const long long bytes = known ? static_cast<long long>(st.st_size) : 0;
    const long long ns = known ? static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec : 0;
    build_id_ = "pjrt " + std::to_string(api_major()) + "." + std::to_string(api_minor());
    for (const auto& [k, v] : attributes_) build_id_ += "; " + k + "=" + v;
    build_id_ += "; file " + file_ + " size " + std::to_string(bytes) + " mtime " + std::to_string(ns);
  }

  std::string path_;
  bool emulated_ = false;
  const capi::PJRT_Api* api_ = nullptr;  // owned by the plugin; valid until exit
  std::vector<std::pair<std::string, std::string>> attributes_;
  std::string file_, build_id_;
};

/// Where a device kind's plugin was found.
struct PluginLocation {
  std::string path;                   ///< shared object to dlopen
  bool emulated = false;              ///< true for torchtpu's TPU emulator
  std::vector<std::string> searched;  ///< every place looked at, in order
};

namespace detail {

inline bool is_file(const std::string& p) {
  std::error_code ec;
  return !p.empty() && std::filesystem::is_regular_file(p, ec);
}

/// Python site-packages directories where pip installs wheels (system, /usr/local, user).
inline std::vector<std::string> site_package_dirs() {
  std::vector<std::string> roots = {"/usr/lib", "/usr/local/lib", "/opt/conda/lib"};
  const std::string home = env_or_empty("HOME");
  if (!home.empty()) roots.push_back(home + "/.local/lib");
  const std::string venv = env_or_empty("VIRTUAL_ENV");
  if (!venv.empty()) roots.insert(roots.begin(), venv + "/lib");
  std::vector<std::string> out;
  for (const auto& root : roots) {
    std::error_code ec;
    std::vector<std::string> found;
    for (std::filesystem::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.rfind("python3", 0) != 0) continue;
      found.push_back(it->path().string() + "/dist-packages");
      found.push_back(it->path().string() + "/site-packages");
    }
    std::sort(found.begin(), found.end());
    if (found.empty()) {  // still report the pattern, so the error says where we looked
      found.push_back(root + "/python3*/dist-packages");
      found.push_back(root + "/python3*/site-packages");
    }
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

/// Where an installed TPU emulator may be, most specific first (docs/devices.md, "Finding a
/// plugin"): next to the headers this program was compiled against (`<prefix>/include/torchtpu/…`
/// → `<prefix>/<libdir>`, when `__FILE__` is absolute), the libdir recorded by `meson install`
/// in `torchtpu/installed.hpp` (absent in the source tree), and next to the running executable
/// (`<exe dir>/../<libdir>`, e.g. an installed `torchtpu-run`). Paths may repeat; none is
/// checked here.
inline std::vector<std::string> emulator_install_candidates() {
  namespace fs = std::filesystem;
  constexpr const char* file = "libtorchtpu_tpu_emulator.so";
#ifdef TORCHTPU_INSTALL_LIBDIR
  const std::string rel = TORCHTPU_INSTALL_LIBDIR_REL;
  const std::string abs = TORCHTPU_INSTALL_LIBDIR;
#else
  const std::string rel, abs;
#endif
  std::vector<std::string> subdirs;  // library directories relative to a prefix
  if (!rel.empty()) subdirs.push_back(rel);
  for (const char* d : {"lib64", "lib"})
    if (rel != d) subdirs.push_back(d);
  std::vector<std::string> out;
  // This header is <prefix>/<includedir>/torchtpu/device/pjrt/plugin.hpp.
  const fs::path self(__FILE__);
  if (self.is_absolute()) {
    const fs::path prefix = self.parent_path().parent_path().parent_path().parent_path().parent_path();
    for (const auto& d : subdirs) out.push_back((prefix / d / file).string());
  }
  if (!abs.empty()) out.push_back((fs::path(abs) / file).string());
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && exe.is_absolute()) {
    const fs::path prefix = exe.parent_path().parent_path();
    for (const auto& d : subdirs) out.push_back((prefix / d / file).string());
  }
  return out;
}

/// Python virtual environments that may hold XLA's CPU plugin, most specific first:
/// `$VIRTUAL_ENV` (an activated venv), the venv of the running executable (`<exe dir>/..` when
/// it has `pyvenv.cfg`, e.g. a program installed into a venv's `bin/`) and the checkout's `.venv`
/// recorded at configure time (`TORCHTPU_CONFIGURED_VENV`: a compile argument of the in-tree
/// `torchtpu_dep`, or `torchtpu/installed.hpp` after `meson install`). Each entry is the venv's
/// root; paths may repeat and none is checked here. Python is never run.
inline std::vector<std::string> venv_candidates() {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  const std::string active = env_or_empty("VIRTUAL_ENV");
  if (!active.empty()) out.push_back(active);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && exe.is_absolute()) {
    const fs::path root = exe.parent_path().parent_path();
    if (fs::is_regular_file(root / "pyvenv.cfg", ec)) out.push_back(root.string());
  }
#ifdef TORCHTPU_CONFIGURED_VENV
  if (std::string_view(TORCHTPU_CONFIGURED_VENV).size() > 0) out.push_back(TORCHTPU_CONFIGURED_VENV);
#endif
  return out;
}

/// `<root>/lib/python3*/site-packages` of a venv root (the pattern itself when none exists, so
/// that an error message says where we looked).
inline std::vector<std::string> venv_site_packages(const std::string& root) {
  std::vector<std::string> found;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(root + "/lib", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind("python3", 0) == 0) found.push_back(it->path().string() + "/site-packages");
  }
  std::sort(found.begin(), found.end());
  if (found.empty()) found.push_back(root + "/lib/python3*/site-packages");
  return found;
}

/// True if `name` can be dlopen'ed through the loader search path (LD_LIBRARY_PATH, ld.so.cache).
inline bool loadable_by_name(const std::string& name) {
  void* h = dlopen(name.c_str(), RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  if (h) return true;
  // Probe without keeping it: RTLD_LAZY then never close (loading libtpu twice is harmless,
  // closing it is not); only done when nothing else was found.
  h = dlopen(name.c_str(), RTLD_LAZY | RTLD_LOCAL);
  return h != nullptr;
}

}  // namespace detail

/// Finds the plugin for a device kind ("tpu", "cuda" or "xla_cpu").
///
/// **Order:** `tpu`: `TORCHTPU_TPU_EMULATOR_PATH` or `TORCHTPU_TPU_EMULATOR=1` select the
/// emulator (explicit request only); otherwise `TORCHTPU_PJRT_PLUGIN_TPU`, `TPU_LIBRARY_PATH`,
/// `libtpu/libtpu.so` in Python site-packages, `/usr/lib`, `/usr/local/lib`, `/lib`
/// `libtpu.so`, then `libtpu.so` on the loader path. `cuda`: `TORCHTPU_PJRT_PLUGIN_CUDA`, then
/// `jax_plugins/xla_cuda13/xla_cuda_plugin.so` and `xla_cuda12` in site-packages. `xla_cpu`:
/// `TORCHTPU_PJRT_PLUGIN_XLA_CPU`, then `xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so` (PyPI package
/// `xla-cpu-pjrt`) in the venvs of `venv_candidates` and then in the Python site-packages
/// directories, then `xla_cpu_pjrt.so` on the loader path (docs/devices.md, "Finding a plugin").
/// **Errors:** `DeviceUnavailable` listing every place searched; `ValueError` for another kind.
inline PluginLocation find_plugin(std::string_view kind) {
  PluginLocation loc;
  auto try_path = [&](const std::string& p, std::string label) {
    loc.searched.push_back(label.empty() ? p : label + " (" + (p.empty() ? "unset" : p) + ")");
    if (detail::is_file(p)) {
      loc.path = p;
      return true;
    }
    return false;
  };
  if (kind == "tpu") {
    const std::string emu_path = detail::env_or_empty("TORCHTPU_TPU_EMULATOR_PATH");
    const std::string emu_flag = detail::env_or_empty("TORCHTPU_TPU_EMULATOR");
    if (!emu_path.empty() || (!emu_flag.empty() && emu_flag != "0")) {
      loc.emulated = true;
      if (try_path(emu_path, "$TORCHTPU_TPU_EMULATOR_PATH")) return loc;
      for (const auto& p : detail::emulator_install_candidates())
        if (try_path(p, "")) return loc;
      loc.searched.push_back("libtorchtpu_tpu_emulator.so on the dynamic loader path");
      if (detail::loadable_by_name("libtorchtpu_tpu_emulator.so")) {
        loc.path = "libtorchtpu_tpu_emulator.so";
        return loc;
      }
      std::string msg =
          "tpu: the TPU emulator was requested (TORCHTPU_TPU_EMULATOR / "
          "TORCHTPU_TPU_EMULATOR_PATH) but no emulator plugin was found; searched:";
      for (const auto& s : loc.searched) msg += "\n  " + s;
      throw DeviceUnavailable(msg);
    }
    if (try_path(detail::env_or_empty("TORCHTPU_PJRT_PLUGIN_TPU"), "$TORCHTPU_PJRT_PLUGIN_TPU"))
      return loc;
    if (try_path(detail::env_or_empty("TPU_LIBRARY_PATH"), "$TPU_LIBRARY_PATH")) return loc;
    for (const auto& d : detail::site_package_dirs())
      if (try_path(d + "/libtpu/libtpu.so", "")) return loc;
    for (const char* d : {"/usr/local/lib", "/usr/lib", "/lib"})
      if (try_path(std::string(d) + "/libtpu.so", "")) return loc;
    loc.searched.push_back("libtpu.so on the dynamic loader path");
    if (detail::loadable_by_name("libtpu.so")) {
      loc.path = "libtpu.so";
      return loc;
    }
  } else if (kind == "cuda") {
    if (try_path(detail::env_or_empty("TORCHTPU_PJRT_PLUGIN_CUDA"), "$TORCHTPU_PJRT_PLUGIN_CUDA"))
      return loc;
    for (const auto& d : detail::site_package_dirs())
      for (const char* sub : {"xla_cuda13", "xla_cuda12"})
        if (try_path(d + "/jax_plugins/" + sub + "/xla_cuda_plugin.so", "")) return loc;
  } else if (kind == "xla_cpu") {
    if (try_path(detail::env_or_empty("TORCHTPU_PJRT_PLUGIN_XLA_CPU"), "$TORCHTPU_PJRT_PLUGIN_XLA_CPU"))
      return loc;
    constexpr const char* rel = "/xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so";
    for (const auto& v : detail::venv_candidates())
      for (const auto& d : detail::venv_site_packages(v))
        if (try_path(d + rel, "")) return loc;
    for (const auto& d : detail::site_package_dirs())
      if (try_path(d + rel, "")) return loc;
    loc.searched.push_back("xla_cpu_pjrt.so on the dynamic loader path");
    if (detail::loadable_by_name("xla_cpu_pjrt.so")) {
      loc.path = "xla_cpu_pjrt.so";
      return loc;
    }
  } else {
    throw ValueError("find_plugin: unknown PJRT device kind '" + std::string(kind) +
                     "' (expected \"tpu\", \"cuda\" or \"xla_cpu\")");
  }
  std::string msg = "no PJRT plugin found for device '" + std::string(kind) + "'; searched:";
  for (const auto& s : loc.searched) msg += "\n  " + s;
  if (kind == "tpu")
    msg += "\n(set TORCHTPU_TPU_EMULATOR=1 to use torchtpu's TPU emulator for development)";
  if (kind == "xla_cpu")
    msg += "\n(install it with `pip install xla-cpu-pjrt`, or run scripts/deps.sh setup_venv in a checkout)";
  throw DeviceUnavailable(msg);
}

/// Finds and loads the plugin for `kind` ("tpu", "cuda", "xla_cpu"). See `find_plugin` and `Plugin::load`.
inline const Plugin& load_plugin(std::string_view kind) {
  PluginLocation loc = find_plugin(kind);
  return Plugin::load(loc.path, loc.emulated);
}

}  // namespace torchtpu::pjrt
