// torchtpu/device/pjrt/client.hpp — non-template C++ wrappers over a PJRT plugin: Client
// (one per plugin per process), its devices, device Buffers and compiled Executables.
#pragma once
#include <cstddef>     // offsetof, size_t
#include <cstdint>     // int64_t
#include <initializer_list>  // std::initializer_list
#include <cstring>     // std::memcpy
#include <map>         // std::map
#include <memory>      // std::shared_ptr, std::make_shared
#include <mutex>       // std::mutex, std::lock_guard
#include <optional>    // std::optional
#include <span>        // std::span
#include <string>      // std::string
#include <string_view> // std::string_view
#include <utility>     // std::exchange
#include <variant>     // std::variant
#include <vector>      // std::vector

#include "../../core/dtype.hpp"   // ScalarType, dtype_size, dtype_name
#include "../../core/errors.hpp"  // DeviceError, TypeError, ValueError
#include "c_api.hpp"              // capi::* declarations
#include "files.hpp"              // detail::dump_stablehlo
#include "plugin.hpp"             // Plugin, load_plugin
#include "program_check.hpp"      // check_program_text

namespace torchtpu::pjrt {


/// PJRT element type for a torchtpu dtype (all eight map).
constexpr capi::PJRT_Buffer_Type to_pjrt_type(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return capi::PJRT_Buffer_Type_PRED;
    case ScalarType::UInt8: return capi::PJRT_Buffer_Type_U8;
    case ScalarType::Int32: return capi::PJRT_Buffer_Type_S32;
    case ScalarType::Int64: return capi::PJRT_Buffer_Type_S64;
    case ScalarType::Half: return capi::PJRT_Buffer_Type_F16;
    case ScalarType::BFloat16: return capi::PJRT_Buffer_Type_BF16;
    case ScalarType::Float: return capi::PJRT_Buffer_Type_F32;
    case ScalarType::Double: return capi::PJRT_Buffer_Type_F64;
  }
  return capi::PJRT_Buffer_Type_INVALID;
}

/// torchtpu dtype for a PJRT element type. **Errors:** `TypeError` for types torchtpu lacks.
inline ScalarType from_pjrt_type(capi::PJRT_Buffer_Type t) {
  switch (t) {
    case capi::PJRT_Buffer_Type_PRED: return ScalarType::Bool;
    case capi::PJRT_Buffer_Type_U8: return ScalarType::UInt8;
    case capi::PJRT_Buffer_Type_S32: return ScalarType::Int32;
    case capi::PJRT_Buffer_Type_S64: return ScalarType::Int64;
    case capi::PJRT_Buffer_Type_F16: return ScalarType::Half;
    case capi::PJRT_Buffer_Type_BF16: return ScalarType::BFloat16;
    case capi::PJRT_Buffer_Type_F32: return ScalarType::Float;
    case capi::PJRT_Buffer_Type_F64: return ScalarType::Double;
    default: break;
  }
  throw TypeError("PJRT buffer element type " + std::to_string(static_cast<int>(t)) +
                  " has no torchtpu dtype");
}

/// Options that change compiled code; part of the compilation-cache key.
struct CompileOptions {
  /// Number of replicas (1: no replication).
  int num_replicas = 1;
  /// Number of partitions (1: no SPMD partitioning).
  int num_partitions = 1;
  /// Portable executables (the default, as go-xla does) run on any device chosen at execute
  /// time (`execute_device`); XLA rejects `execute_device` for non-portable ones.
  bool portable = true;
  /// Pin a non-portable executable to this device id (`DeviceAssignmentProto`); needs
  /// `portable = false`. Unset and non-portable: the plugin's default device.
  std::optional<int> device_id;

  /// Serialized `xla.CompileOptionsProto` (hand-encoded; PJRT-NOTES §4).
  /// **Errors:** `ValueError` for counts or ids outside [0, 127] (single-byte varints only), or
  /// `device_id` together with `portable`.
  std::string serialize() const {
    auto byte = [](int v, const char* what) {
      if (v < 0 || v > 127)
        throw ValueError(std::string("CompileOptions: ") + what + " must be in [0, 127]");
      return static_cast<char>(v);
    };
    if (portable && device_id)
      throw ValueError("CompileOptions: a portable executable cannot be pinned to a device_id");
    if (portable && (num_replicas != 1 || num_partitions != 1))
      throw ValueError("CompileOptions: a portable executable needs one replica and one partition");
    std::string build;  // ExecutableBuildOptionsProto
    build += '\x20';
    build += byte(num_replicas, "num_replicas");
    build += '\x28';
    build += byte(num_partitions, "num_partitions");
    if (device_id) {
      // field 9 { replica_count=1, computation_count=1, computation_devices { ids: [id] } }
      const std::string inner = std::string("\x08\x01\x10\x01\x1a\x03\x0a\x01", 8) +
                                byte(*device_id, "device_id");
      build += '\x4a';
      build += static_cast<char>(inner.size());
      build += inner;
    }
    std::string out;
    out += '\x1a';  // CompileOptionsProto.executable_build_options
    out += static_cast<char>(build.size());
    out += build;
    if (portable) out += std::string("\x20\x01", 2);  // compile_portable_executable = true
    return out;
  }
  /// Equal when every field is equal (part of the cache key).
  bool operator==(const CompileOptions&) const = default;
};

/// One `PJRT_NamedValue` create option for `PJRT_Client_Create`.
struct CreateOption {
  /// Option name, as the plugin knows it (e.g. `preallocate`).
  std::string name;
  /// Option value.
  std::variant<std::string, int64_t, bool, float> value;
};

/// Create options torchtpu sends for a device kind. `cuda`: `preallocate = false` (XLA's CUDA
/// plugin otherwise reserves 75% of GPU memory) unless `TORCHTPU_CUDA_PREALLOCATE=1`; nothing
/// else, because the plugin rejects names it does not know. `tpu`: none (libtpu needs none).
/// `xla_cpu`: `cpu_device_count` (int64, the number of devices XLA's CPU client exposes) from
/// `TORCHTPU_XLA_CPU_DEVICES` when set; otherwise none (xla-cpu-pjrt 0.0.1 then makes 4).
/// **Errors:** `ValueError` when `TORCHTPU_XLA_CPU_DEVICES` is not an integer in 1..1024.
inline std::vector<CreateOption> default_create_options(std::string_view kind) {
  std::vector<CreateOption> opts;
  if (kind == "cuda" && detail::env_or_empty("TORCHTPU_CUDA_PREALLOCATE") != "1")
    opts.push_back({"preallocate", false});
  if (kind == "xla_cpu") {
    const std::string n = detail::env_or_empty("TORCHTPU_XLA_CPU_DEVICES");
    if (!n.empty()) {
      int64_t v = 0;
      bool ok = n.size() <= 4;
      for (char ch : n) {
        ok = ok && ch >= '0' && ch <= '9';
        v = v * 10 + (ch - '0');
      }
      if (!ok || v < 1 || v > 1024)
        throw ValueError("xla_cpu: TORCHTPU_XLA_CPU_DEVICES must be an integer in 1..1024, got '" + n + "'");
      opts.push_back({"cpu_device_count", v});
    }
  }
  return opts;
}

/// One device of a client. **Ownership:** `handle` is owned by the client and lives as long as
/// it; never null for devices returned by `Client`.
struct Device {
  /// PJRT device handle: owned by the client, lives as long as it; never null.
  capi::PJRT_Device* handle = nullptr;
  int id = 0;        ///< PJRT device id
  int index = 0;     ///< position in `Client::devices()`
  std::string kind;  ///< vendor string, e.g. "TPU v5 lite" or "TPU emulator"
};

class Buffer;
class Executable;

/// A PJRT client: one per plugin per process (see `Client::get`).
///
/// **Ownership:** the PJRT client handle is owned by this object. Clients obtained from `get`
/// are kept in a process-wide registry and deliberately never destroyed (destroying a PJRT
/// client during static destruction is unsafe for some plugins). Buffers and executables hold
/// a `shared_ptr<Client>`, so a client outlives everything created from it.
/// **Thread safety:** all methods may be called concurrently.
class Client : public std::enable_shared_from_this<Client> {
 public:
  /// The client for device kind `kind` ("tpu", "cuda"), created on first use. Creation is
  /// thread-safe; concurrent callers share one client.
  /// **Errors:** `DeviceUnavailable` (no plugin: the message lists places searched; or the plugin
  /// cannot create a client, see `for_plugin`), `DeviceError`.
  static std::shared_ptr<Client> get(std::string_view kind) {
    // Plugin discovery touches the file system; remember successful lookups per kind and per
    // value of the variables that steer discovery, so hot paths pay one map lookup.
    std::string sig(kind);
    for (const char* v : {"TORCHTPU_TPU_EMULATOR", "TORCHTPU_TPU_EMULATOR_PATH", "TORCHTPU_PJRT_PLUGIN_TPU",
                          "TPU_LIBRARY_PATH", "TORCHTPU_PJRT_PLUGIN_CUDA", "TORCHTPU_PJRT_PLUGIN_XLA_CPU",
                          "TORCHTPU_XLA_CPU_DEVICES", "HOME", "VIRTUAL_ENV"}) {
      sig += '\0';
      sig += detail::env_or_empty(v);
    }
    static std::mutex mu;
    static auto* memo = new std::map<std::string, std::shared_ptr<Client>>();  // leaked, see class doc
    {
      std::lock_guard<std::mutex> lock(mu);
      auto it = memo->find(sig);
      if (it != memo->end()) return it->second;
    }
    const PluginLocation loc = find_plugin(kind);
    std::shared_ptr<Client> c = for_plugin(Plugin::load(loc.path, loc.emulated),
                                           loc.emulated ? std::vector<CreateOption>{} : default_create_options(kind));
    std::lock_guard<std::mutex> lock(mu);
    memo->emplace(sig, c);
    return c;
  }

  /// The client for an already loaded plugin, created on first use (thread-safe) with
  /// `options` (ignored when the plugin's client already exists).
  /// **Errors:** `DeviceUnavailable` naming the plugin, its PJRT API and XLA versions and
  /// PJRT's message when `PJRT_Client_Create` fails (e.g. libtpu without a TPU, XLA's CUDA
  /// plugin without a GPU); `DeviceError` for later failures.
  static std::shared_ptr<Client> for_plugin(const Plugin& plugin, const std::vector<CreateOption>& options = {}) {
    static std::mutex mu;
    static auto* registry = new std::map<const Plugin*, std::shared_ptr<Client>>();  // leaked
    std::lock_guard<std::mutex> lock(mu);
    auto it = registry->find(&plugin);
    if (it != registry->end()) return it->second;
    std::shared_ptr<Client> c(new Client(plugin, options));
    registry->emplace(&plugin, c);
    return c;
  }

  ~Client() { destroy_handle(); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  /// The plugin this client was created from.
  const Plugin& plugin() const noexcept { return *plugin_; }
  /// The PJRT client handle; owned by this object, never null.
  capi::PJRT_Client* handle() const noexcept { return handle_; }
  /// "tpu", "cuda", ... as the plugin reports it.
  const std::string& platform_name() const noexcept { return platform_name_; }
  /// Plugin-specific version string (the emulator says "torchtpu-emulator ...").
  const std::string& platform_version() const noexcept { return platform_version_; }
  /// True when this is torchtpu's TPU emulator, never a real TPU.
  bool emulated() const noexcept { return plugin_->emulated(); }
  /// All devices, and the ones this process can address (in the plugin's order).
  const std::vector<Device>& devices() const noexcept { return devices_; }
  /// The devices this process can run on (the client's order).
  const std::vector<Device>& addressable_devices() const noexcept { return addressable_; }
  /// Kind string of the first addressable device ("" if there is none).
  std::string device_kind() const { return addressable_.empty() ? "" : addressable_[0].kind; }

  /// An addressable device by position. **Errors:** `IndexError` when out of range.
  const Device& device(int index) const {
    if (index < 0 || index >= static_cast<int>(addressable_.size()))
      throw IndexError("device index " + std::to_string(index) + " out of range: " +
                       platform_name_ + " has " + std::to_string(addressable_.size()) +
                       " addressable device(s)");
    return addressable_[static_cast<size_t>(index)];
  }

  /// Copies dense row-major host data to a new buffer on device `device_index`. The host memory
  /// may be reused as soon as this returns (the transfer is awaited).
  /// **Units:** `dims` in elements; `data` must hold product(dims)·dtype_size(dtype) bytes.
  /// **Errors:** `DeviceError` from the plugin; `IndexError` for a bad device index.
  Buffer buffer_from_host(const void* data, ScalarType dtype, std::span<const int64_t> dims,
                          int device_index = 0);

  /// Compiles StableHLO `mlir` text (format "mlir") without caching (see cache.hpp for that).
  /// Every module compiled here is written to `TORCHTPU_DUMP_STABLEHLO` when it is set
  /// (`detail::dump_stablehlo`): this is the one place programs reach a PJRT compiler.
  /// **Errors:** `DeviceError` carrying the plugin's code and message (bad program, op).
  std::shared_ptr<Executable> compile(std::string_view mlir, const CompileOptions& options = {});

  /// Loads an executable from bytes produced by `Executable::serialize` of the same plugin;
  /// `options` are the ones it was compiled with.
  /// **Errors:** `DeviceError` (code 12 if the plugin cannot deserialize).
  std::shared_ptr<Executable> deserialize(std::string_view bytes, const CompileOptions& options = {});

 private:
  Client(const Plugin& plugin, const std::vector<CreateOption>& options) : plugin_(&plugin) {
    using namespace capi;
    std::vector<PJRT_NamedValue> named(options.size());
    for (size_t i = 0; i < options.size(); ++i) {
      PJRT_NamedValue& nv = named[i];
      nv.struct_size = sizeof(nv);
      nv.name = options[i].name.c_str();
      nv.name_size = options[i].name.size();
      nv.value_size = 1;
      if (const auto* sv = std::get_if<std::string>(&options[i].value)) {
        nv.type = PJRT_NamedValue_kString;
        nv.string_value = sv->c_str();
        nv.value_size = sv->size();
      } else if (const auto* iv = std::get_if<int64_t>(&options[i].value)) {
        nv.type = PJRT_NamedValue_kInt64;
        nv.int64_value = *iv;
      } else if (const auto* bv = std::get_if<bool>(&options[i].value)) {
        nv.type = PJRT_NamedValue_kBool;
        nv.bool_value = *bv;
      } else {
        nv.type = PJRT_NamedValue_kFloat;
        nv.float_value = std::get<float>(options[i].value);
      }
    }
    PJRT_Client_Create_Args c{};
    c.struct_size = sizeof(c);
    c.create_options = named.empty() ? nullptr : named.data();
    c.num_options = named.size();
    try {
      plugin_->call(Slot::Client_Create, &c, "PJRT_Client_Create");
    } catch (const DeviceError& e) {
      // The plugin loaded but refuses to make a client: no TPU/GPU here, a driver or library
      // missing, a device held by another process. That is "this device is not available".
      throw DeviceUnavailable(plugin_->describe() + " cannot create a client: " + e.what());
    }
    handle_ = detail::check_handle(c.client, "PJRT_Client_Create", "client");
    // From here the destructor would not run if we threw: destroy the PJRT client ourselves.
    try {
      describe();
    } catch (...) {
      destroy_handle();
      throw;
    }
  }

  /// Reads the platform name and version and the device lists of the new client.
  void describe() {
    using namespace capi;
    PJRT_Client_PlatformName_Args pn{};
    pn.struct_size = sizeof(pn);
    pn.client = handle_;
    plugin_->call(Slot::Client_PlatformName, &pn, "PJRT_Client_PlatformName");
    if (pn.platform_name_size) detail::check_handle(pn.platform_name, "PJRT_Client_PlatformName", "name");
    platform_name_.assign(pn.platform_name ? pn.platform_name : "", pn.platform_name_size);
    if (plugin_->has(Slot::Client_PlatformVersion)) {
      PJRT_Client_PlatformVersion_Args pv{};
      pv.struct_size = sizeof(pv);
      pv.client = handle_;
      plugin_->call(Slot::Client_PlatformVersion, &pv, "PJRT_Client_PlatformVersion");
      if (pv.platform_version_size) detail::check_handle(pv.platform_version, "PJRT_Client_PlatformVersion", "version");
      platform_version_.assign(pv.platform_version ? pv.platform_version : "", pv.platform_version_size);
    }
    addressable_ = list_devices(Slot::Client_AddressableDevices, "PJRT_Client_AddressableDevices");
    devices_ = plugin_->has(Slot::Client_Devices)
                   ? list_devices(Slot::Client_Devices, "PJRT_Client_Devices")
                   : addressable_;
  }

  void destroy_handle() noexcept {
    if (handle_ && plugin_->has(capi::Slot::Client_Destroy)) {
      capi::PJRT_Client_Destroy_Args a{};
      a.struct_size = sizeof(a);
      a.client = handle_;
      try {
        plugin_->call(capi::Slot::Client_Destroy, &a, "PJRT_Client_Destroy");
      } catch (...) {
      }
    }
    handle_ = nullptr;
  }

  std::vector<Device> list_devices(capi::Slot slot, const char* what) const {
    using namespace capi;
    PJRT_Client_Devices_Args d{};
    d.struct_size = sizeof(d);
    d.client = handle_;
    plugin_->call(slot, &d, what);
    if (d.num_devices) detail::check_handle(d.devices, what, "device list");
    std::vector<Device> out;
    for (size_t i = 0; i < d.num_devices; ++i) {
      Device dev;
      dev.handle = detail::check_handle(d.devices[i], what, "device");
      dev.index = static_cast<int>(i);
      PJRT_Device_GetDescription_Args g{};
      g.struct_size = sizeof(g);
      g.device = dev.handle;
      plugin_->call(Slot::Device_GetDescription, &g, "PJRT_Device_GetDescription");
      detail::check_handle(g.device_description, "PJRT_Device_GetDescription", "description");
      PJRT_DeviceDescription_Id_Args id{};
      id.struct_size = TORCHTPU_PJRT_STRUCT_SIZE(PJRT_DeviceDescription_Id_Args, id);
      id.device_description = g.device_description;
      plugin_->call(Slot::DeviceDescription_Id, &id, "PJRT_DeviceDescription_Id");
      dev.id = id.id;
      PJRT_DeviceDescription_Kind_Args k{};
      k.struct_size = sizeof(k);
      k.device_description = g.device_description;
      plugin_->call(Slot::DeviceDescription_Kind, &k, "PJRT_DeviceDescription_Kind");
      if (k.device_kind_size) detail::check_handle(k.device_kind, "PJRT_DeviceDescription_Kind", "kind");
      dev.kind.assign(k.device_kind ? k.device_kind : "", k.device_kind_size);
      out.push_back(std::move(dev));
    }
    return out;
  }

  const Plugin* plugin_;                   // registry-owned, lives until exit
  capi::PJRT_Client* handle_ = nullptr;    // owned
  std::string platform_name_, platform_version_;
  std::vector<Device> devices_, addressable_;
};

/// A device buffer. **Ownership:** owns its `PJRT_Buffer` (destroyed with the object) and
/// keeps its client alive. Move-only; a moved-from or default Buffer is empty (`handle()` null).
class Buffer {
 public:
  Buffer() = default;
  /// Adopts `handle` (non-null, created by `client`'s plugin).
  Buffer(std::shared_ptr<Client> client, capi::PJRT_Buffer* handle)
      : client_(std::move(client)), handle_(handle) {
    using namespace capi;
    const Plugin& p = client_->plugin();
    PJRT_Buffer_ElementType_Args t{};
    t.struct_size = TORCHTPU_PJRT_STRUCT_SIZE(PJRT_Buffer_ElementType_Args, type);
    t.buffer = handle_;
    PJRT_Buffer_Dimensions_Args d{};
    d.struct_size = sizeof(d);
    d.buffer = handle_;
    try {
      p.call(Slot::Buffer_ElementType, &t, "PJRT_Buffer_ElementType");
      dtype_ = from_pjrt_type(t.type);
      p.call(Slot::Buffer_Dimensions, &d, "PJRT_Buffer_Dimensions");
    } catch (...) {
      reset();
      throw;
    }
    dims_.assign(d.dims, d.dims + d.num_dims);
    try {
      size_bytes_ = checked_size_bytes(dtype_, dims_, "PJRT_Buffer_Dimensions");
    } catch (...) {
      reset();
      throw;
    }
    if (p.has(Slot::Buffer_Device)) {
      PJRT_Buffer_Device_Args dv{};
      dv.struct_size = sizeof(dv);
      dv.buffer = handle_;
      try {
        p.call(Slot::Buffer_Device, &dv, "PJRT_Buffer_Device");
      } catch (...) {
        reset();
        throw;
      }
      for (const Device& x : client_->addressable_devices())
        if (x.handle == dv.device) device_index_ = x.index;
    }
  }
  /// Takes `o`'s buffer; `o` becomes empty (`handle()` is null).
  Buffer(Buffer&& o) noexcept
      : client_(std::move(o.client_)), handle_(std::exchange(o.handle_, nullptr)),
        dtype_(o.dtype_), dims_(std::move(o.dims_)), size_bytes_(o.size_bytes_), device_index_(o.device_index_) {}
  /// Destroys the held buffer and takes `o`'s; `o` becomes empty.
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      reset();
      client_ = std::move(o.client_);
      handle_ = std::exchange(o.handle_, nullptr);
      dtype_ = o.dtype_;
      dims_ = std::move(o.dims_);
      size_bytes_ = o.size_bytes_;
      device_index_ = o.device_index_;
    }
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { reset(); }

  /// The PJRT handle, owned by this object; null when empty.
  capi::PJRT_Buffer* handle() const noexcept { return handle_; }
  /// The owning client; null when empty.
  const std::shared_ptr<Client>& client() const noexcept { return client_; }
  /// Element type.
  ScalarType dtype() const noexcept { return dtype_; }
  /// Sizes of each dim.
  const std::vector<int64_t>& dims() const noexcept { return dims_; }
  /// Element count (checked against overflow when the buffer was adopted).
  int64_t numel() const noexcept { return static_cast<int64_t>(size_bytes_ / dtype_size(dtype_)); }
  /// Position of the buffer's device in `client()->addressable_devices()` (0 if the plugin
  /// cannot tell).
  int device_index() const noexcept { return device_index_; }
  /// Dense host size in bytes.
  size_t size_bytes() const noexcept { return size_bytes_; }

  /// Waits until the buffer's contents are computed: the execution or transfer that produces
  /// it has finished (`PJRT_Buffer_ReadyEvent`, awaited). A plugin without that function runs
  /// everything synchronously, so there is nothing to wait for. **Errors:** `ValueError` for an
  /// empty buffer; `DeviceError` with the error of the execution that failed to compute it.
  void await_ready() const {
    using namespace capi;
    if (handle_ == nullptr) throw ValueError("Buffer::await_ready: the buffer is empty");
    const Plugin& p = client_->plugin();
    if (!p.has(Slot::Buffer_ReadyEvent)) return;
    PJRT_Buffer_ReadyEvent_Args a{};
    a.struct_size = sizeof(a);
    a.buffer = handle_;
    p.call(Slot::Buffer_ReadyEvent, &a, "PJRT_Buffer_ReadyEvent");
    p.await_event(a.event, "PJRT_Buffer_ReadyEvent (await)");
  }

  /// Bytes of a dense array of `dtype`/`dims`. **Errors:** ValueError naming `what` when a
  /// dimension is negative or the element or byte count overflows int64.
  static size_t checked_size_bytes(ScalarType dtype, std::span<const int64_t> dims, std::string_view what) {
    int64_t n = 1;
    bool overflow = false;
    for (int64_t d : dims) {
      if (d < 0) throw ValueError(std::string(what) + ": negative dimension " + std::to_string(d));
      overflow |= __builtin_mul_overflow(n, d, &n);
    }
    int64_t bytes = 0;
    overflow |= __builtin_mul_overflow(n, static_cast<int64_t>(dtype_size(dtype)), &bytes);
    for (int64_t d : dims)
      if (d == 0) return 0;
    if (overflow) {
      std::string shape = "[";
      for (size_t i = 0; i < dims.size(); ++i) shape += (i ? ", " : "") + std::to_string(dims[i]);
      throw ValueError(std::string(what) + ": the size of a " + std::string(dtype_name(dtype)) + " buffer of shape " +
                       shape + "] overflows int64");
    }
    return static_cast<size_t>(bytes);
  }

  /// Copies the buffer into dense row-major host memory and waits for the copy.
  /// **Units:** `dst_bytes` in bytes; must be at least `size_bytes()`.
  /// **Errors:** `ValueError` if empty or too small; `DeviceError` from the plugin.
  void to_host(void* dst, size_t dst_bytes) const {
    using namespace capi;
    if (!handle_) throw ValueError("Buffer::to_host on an empty buffer");
    if (dst_bytes < size_bytes())
      throw ValueError("Buffer::to_host: destination holds " + std::to_string(dst_bytes) +
                       " bytes, the buffer needs " + std::to_string(size_bytes()));
    const Plugin& p = client_->plugin();
    // Ask for dense row-major explicitly (minor_to_major = rank-1 .. 0), as PJRT-NOTES §7 says.
    std::vector<int64_t> m2m(dims_.size());
    for (size_t i = 0; i < m2m.size(); ++i) m2m[i] = static_cast<int64_t>(m2m.size() - 1 - i);
    struct Layout {  // PJRT_Buffer_MemoryLayout with the Tiled member (sizeof 80)
      size_t struct_size;
      void* extension_start;
      size_t tiled_struct_size;
      void* tiled_extension_start;
      const int64_t* minor_to_major;
      size_t minor_to_major_size;
      const int64_t* tile_dims;
      const size_t* tile_dim_sizes;
      size_t num_tiles;
      int type;
    } layout{};
    static_assert(sizeof(Layout) == 80 && offsetof(Layout, type) == 72);
    layout.struct_size = 76;
    layout.tiled_struct_size = 56;
    layout.minor_to_major = m2m.data();
    layout.minor_to_major_size = m2m.size();
    layout.type = 0;  // Tiled
    PJRT_Buffer_ToHostBuffer_Args a{};
    a.struct_size = sizeof(a);
    a.src = handle_;
    a.host_layout = reinterpret_cast<PJRT_Buffer_MemoryLayout*>(&layout);
    a.dst = dst;
    a.dst_size = dst_bytes;
    p.call(Slot::Buffer_ToHostBuffer, &a, "PJRT_Buffer_ToHostBuffer");
    p.await_event(a.event, "PJRT_Buffer_ToHostBuffer (event)");
  }

  /// A copy on another addressable device of the same client (PJRT_Buffer_CopyToDevice, or a
  /// host round trip when the plugin lacks it). The same device gives a plain copy.
  /// **Errors:** `ValueError` if empty; `IndexError` for a bad index; `DeviceError`.
  Buffer copy_to_device(int device_index) const {
    using namespace capi;
    if (!handle_) throw ValueError("Buffer::copy_to_device on an empty buffer");
    const Device& dst = client_->device(device_index);
    const Plugin& p = client_->plugin();
    if (device_index != device_index_ && p.has(Slot::Buffer_CopyToDevice)) {
      PJRT_Buffer_CopyToDevice_Args a{};
      a.struct_size = sizeof(a);
      a.buffer = handle_;
      a.dst_device = dst.handle;
      p.call(Slot::Buffer_CopyToDevice, &a, "PJRT_Buffer_CopyToDevice");
      return Buffer(client_, detail::check_handle(a.dst_buffer, "PJRT_Buffer_CopyToDevice", "buffer"));
    }
    std::vector<unsigned char> host(size_bytes());
    to_host(host.data(), host.size());
    return client_->buffer_from_host(host.data(), dtype_, dims_, device_index);
  }

  /// Convenience: the whole buffer as a vector of `T` (T must match `dtype()` in size).
  template <class T>
  std::vector<T> to_vector() const {
    if (sizeof(T) != dtype_size(dtype_))
      throw TypeError("Buffer::to_vector: element size does not match " +
                      std::string(dtype_name(dtype_)));
    std::vector<T> out(static_cast<size_t>(numel()));
    to_host(out.data(), out.size() * sizeof(T));
    return out;
  }

 private:
  void reset() noexcept {
    if (handle_ && client_) {
      capi::PJRT_Buffer_Destroy_Args a{};
      a.struct_size = sizeof(a);
      a.buffer = handle_;
      try {
        client_->plugin().call(capi::Slot::Buffer_Destroy, &a, "PJRT_Buffer_Destroy");
      } catch (...) {
      }
    }
    handle_ = nullptr;
    client_.reset();
  }

  std::shared_ptr<Client> client_;       // null when empty
  capi::PJRT_Buffer* handle_ = nullptr;  // owned; null when empty
  ScalarType dtype_ = ScalarType::Float;
  std::vector<int64_t> dims_;
  size_t size_bytes_ = 0;
  int device_index_ = 0;
};

/// A compiled, loaded executable. **Ownership:** owns its `PJRT_LoadedExecutable` and keeps its
/// client alive; shared through `shared_ptr` (the compilation cache hands out shared copies).
/// **Thread safety:** `execute` may run concurrently from several threads.
class Executable {
 public:
  /// Adopts `handle` (non-null, from `client`'s plugin), compiled with `options`.
  Executable(std::shared_ptr<Client> client, capi::PJRT_LoadedExecutable* handle,
             CompileOptions options = {})
      : client_(std::move(client)), handle_(handle), options_(std::move(options)) {
    using namespace capi;
    const Plugin& p = client_->plugin();
    PJRT_LoadedExecutable_GetExecutable_Args g{};
    g.struct_size = sizeof(g);
    g.loaded_executable = handle_;
    try {
      p.call(Slot::LoadedExecutable_GetExecutable, &g, "PJRT_LoadedExecutable_GetExecutable");
      detail::check_handle(g.executable, "PJRT_LoadedExecutable_GetExecutable", "executable");
      PJRT_Executable_NumOutputs_Args n{};
      n.struct_size = sizeof(n);
      n.executable = g.executable;
      PJRT_Executable_Destroy_Args d{};
      d.struct_size = sizeof(d);
      d.executable = g.executable;
      try {
        p.call(Slot::Executable_NumOutputs, &n, "PJRT_Executable_NumOutputs");
      } catch (...) {
        p.call(Slot::Executable_Destroy, &d, "PJRT_Executable_Destroy");
        throw;
      }
      num_outputs_ = n.num_outputs;
      p.call(Slot::Executable_Destroy, &d, "PJRT_Executable_Destroy");
    } catch (...) {
      destroy();
      throw;
    }
  }
  Executable(const Executable&) = delete;
  Executable& operator=(const Executable&) = delete;
  ~Executable() { destroy(); }

  /// The PJRT handle; owned by this object, never null.
  capi::PJRT_LoadedExecutable* handle() const noexcept { return handle_; }
  /// The client that compiled the executable.
  const std::shared_ptr<Client>& client() const noexcept { return client_; }
  /// Number of results of one execution.
  size_t num_outputs() const noexcept { return num_outputs_; }
  /// The options it was compiled with.
  const CompileOptions& options() const noexcept { return options_; }

  /// Runs on device `device_index` with `args` (in the order of `@main`'s parameters) and waits
  /// for completion. Inputs are not donated and stay valid. Portable executables run on any
  /// device (`execute_device`); a non-portable one only on the device it was compiled for.
  /// **Errors:** `ValueError` for empty or foreign buffers or a device a non-portable
  /// executable was not compiled for; `DeviceError` from the plugin.
  ///
  /// With `await_completion` (the default) the host waits for the execution to finish and
  /// its errors are thrown here. Without it the call returns once the execution is enqueued:
  /// the output buffers may be passed to further executions at once (PJRT orders them) and
  /// the host waits only when it reads one (`Buffer::to_host` awaits its transfer); an
  /// execution error then surfaces there.
  std::vector<Buffer> execute(std::span<const Buffer* const> args, int device_index = 0,
                              bool await_completion = true) const {
    using namespace capi;
    const Plugin& p = client_->plugin();
    std::vector<PJRT_Buffer*> in;
    in.reserve(args.size());
    for (const Buffer* b : args) {
      if (b == nullptr || b->handle() == nullptr)
        throw ValueError("Executable::execute: argument " + std::to_string(in.size()) + " is empty");
      if (b->client() != client_)
        throw ValueError("Executable::execute: argument " + std::to_string(in.size()) +
                         " lives on another PJRT client");
      in.push_back(b->handle());
    }
    std::vector<PJRT_Buffer*> out(num_outputs_, nullptr);
    PJRT_Buffer* const* arg_list = in.data();
    PJRT_Buffer** out_list = out.data();
    PJRT_Event* done = nullptr;
    // ExecuteOptions keeps growing (PJRT-NOTES §3). struct_size says exactly how much of it we
    // filled in: a newer plugin treats the fields past it as unset, whereas a struct_size
    // covering zeroed bytes we do not know would make it read those zeros as real values.
    PJRT_ExecuteOptions opts{};
    opts.struct_size = TORCHTPU_PJRT_STRUCT_SIZE(PJRT_ExecuteOptions, num_hlo_output_callbacks);
    PJRT_LoadedExecutable_Execute_Args a{};
    a.struct_size = sizeof(a);
    a.executable = handle_;
    a.options = &opts;
    a.argument_lists = &arg_list;
    a.num_devices = 1;
    a.num_args = in.size();
    a.output_lists = &out_list;
    a.device_complete_events = &done;
    const Device& dev = client_->device(device_index);
    if (options_.portable) {
      a.execute_device = dev.handle;
    } else {
      const int pinned = options_.device_id.value_or(client_->addressable_devices().front().id);
      if (dev.id != pinned)
        throw ValueError("Executable::execute: compiled for device id " + std::to_string(pinned) +
                         " (non-portable), asked to run on device id " + std::to_string(dev.id));
      a.execute_device = nullptr;  // the compile-time assignment
    }
    p.call(Slot::LoadedExecutable_Execute, &a, "PJRT_LoadedExecutable_Execute");
    std::vector<Buffer> result;
    result.reserve(out.size());
    size_t i = 0;
    try {
      // the event is handed over first: await_event destroys it even when it throws, so the
      // cleanup below must not destroy it again (a failed execution crashed XLA's CPU plugin
      // in PJRT_Event_Destroy)
      PJRT_Event* ev = std::exchange(done, nullptr);
      if (await_completion) p.await_event(ev, "PJRT_LoadedExecutable_Execute (completion)");
      else p.destroy_event(ev);  // not waited for: the outputs' own readiness orders later uses
      for (const PJRT_Buffer* o : out) detail::check_handle(o, "PJRT_LoadedExecutable_Execute", "output buffer");
      for (; i < out.size(); ++i) result.emplace_back(client_, std::exchange(out[i], nullptr));
    } catch (...) {
      p.destroy_event(done);
      for (; i < out.size(); ++i) {
        if (!out[i]) continue;
        PJRT_Buffer_Destroy_Args d{};
        d.struct_size = sizeof(d);
        d.buffer = out[i];
        try {
          p.call(Slot::Buffer_Destroy, &d, "PJRT_Buffer_Destroy");
        } catch (...) {
        }
      }
      throw;
    }
    return result;
  }
  /// Same as the span form, for a braced list of inputs.
  std::vector<Buffer> execute(std::initializer_list<const Buffer*> args, int device_index = 0) const {
    return execute(std::span<const Buffer* const>(args.begin(), args.size()), device_index);
  }

  /// The plugin's serialization of this executable, or nullopt if the plugin cannot serialize.
  /// **Errors:** `DeviceError` for failures other than UNIMPLEMENTED.
  std::optional<std::string> serialize() const {
    using namespace capi;
    const Plugin& p = client_->plugin();
    if (!p.has(Slot::Executable_Serialize) || !p.has(Slot::Executable_DeserializeAndLoad))
      return std::nullopt;
    PJRT_LoadedExecutable_GetExecutable_Args g{};
    g.struct_size = sizeof(g);
    g.loaded_executable = handle_;
    p.call(Slot::LoadedExecutable_GetExecutable, &g, "PJRT_LoadedExecutable_GetExecutable");
    detail::check_handle(g.executable, "PJRT_LoadedExecutable_GetExecutable", "executable");
    PJRT_Executable_Destroy_Args d{};
    d.struct_size = sizeof(d);
    d.executable = g.executable;
    PJRT_Executable_Serialize_Args s{};
    s.struct_size = sizeof(s);
    s.executable = g.executable;
    std::optional<std::string> out;
    try {
      p.call(Slot::Executable_Serialize, &s, "PJRT_Executable_Serialize");
      out.emplace(s.serialized_bytes, s.serialized_bytes_size);
      if (s.serialized_executable_deleter) s.serialized_executable_deleter(s.serialized_executable);
    } catch (const DeviceError& e) {
      p.call(Slot::Executable_Destroy, &d, "PJRT_Executable_Destroy");
      if (e.code() == PJRT_Error_Code_UNIMPLEMENTED) return std::nullopt;
      throw;
    }
    p.call(Slot::Executable_Destroy, &d, "PJRT_Executable_Destroy");
    return out;
  }

 private:
  void destroy() noexcept {
    if (!handle_) return;
    capi::PJRT_LoadedExecutable_Destroy_Args a{};
    a.struct_size = sizeof(a);
    a.executable = handle_;
    try {
      client_->plugin().call(capi::Slot::LoadedExecutable_Destroy, &a,
                             "PJRT_LoadedExecutable_Destroy");
    } catch (...) {
    }
    handle_ = nullptr;
  }

  std::shared_ptr<Client> client_;                 // never null
  capi::PJRT_LoadedExecutable* handle_ = nullptr;  // owned
  CompileOptions options_;
  size_t num_outputs_ = 0;
};

inline Buffer Client::buffer_from_host(const void* data, ScalarType dtype,
                                       std::span<const int64_t> dims, int device_index) {
  using namespace capi;
  (void)Buffer::checked_size_bytes(dtype, dims, "buffer_from_host");  // negative or overflowing dims
  PJRT_Client_BufferFromHostBuffer_Args a{};
  a.struct_size = sizeof(a);
  a.client = handle_;
  a.data = data;
  a.type = to_pjrt_type(dtype);
  a.dims = dims.data();
  a.num_dims = dims.size();
  a.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes;
  a.device = device(device_index).handle;
  plugin_->call(Slot::Client_BufferFromHostBuffer, &a, "PJRT_Client_BufferFromHostBuffer");
  // Whatever happens next, the plugin may still read `data` until done_with_host_buffer
  // completes: wait for it before returning or throwing (the caller then frees `data`).
  std::optional<Buffer> b;
  try {
    b.emplace(shared_from_this(), detail::check_handle(a.buffer, "PJRT_Client_BufferFromHostBuffer", "buffer"));
  } catch (...) {
    if (!a.buffer) plugin_->destroy_event(a.done_with_host_buffer);  // nothing reads `data`
    else plugin_->await_event_quietly(a.done_with_host_buffer);
    throw;
  }
  plugin_->await_event(a.done_with_host_buffer, "PJRT_Client_BufferFromHostBuffer (transfer)");
  return std::move(*b);
}

inline std::shared_ptr<Executable> Client::compile(std::string_view mlir,
                                                   const CompileOptions& options) {
  using namespace capi;
  check_program_text(mlir);  // what some plugins crash on (program_check.hpp)
  const std::string opts = options.serialize();
  std::string code(mlir);
  static const char kFormat[] = "mlir";
  PJRT_Program prog{};
  prog.struct_size = sizeof(prog);
  prog.code = code.data();
  prog.code_size = code.size();
  prog.format = kFormat;
  prog.format_size = 4;
  PJRT_Client_Compile_Args a{};
  a.struct_size = sizeof(a);
  a.client = handle_;
  a.program = &prog;
  a.compile_options = opts.data();
  a.compile_options_size = opts.size();
  plugin_->call(Slot::Client_Compile, &a, "PJRT_Client_Compile");
  auto exe = std::make_shared<Executable>(shared_from_this(),
                                          detail::check_handle(a.executable, "PJRT_Client_Compile", "executable"), options);
  detail::dump_stablehlo(mlir, platform_name_);
  return exe;
}

inline std::shared_ptr<Executable> Client::deserialize(std::string_view bytes,
                                                       const CompileOptions& options) {
  using namespace capi;
  PJRT_Executable_DeserializeAndLoad_Args a{};
  a.struct_size = sizeof(a);
  a.client = handle_;
  a.serialized_executable = bytes.data();
  a.serialized_executable_size = bytes.size();
  plugin_->call(Slot::Executable_DeserializeAndLoad, &a, "PJRT_Executable_DeserializeAndLoad");
  return std::make_shared<Executable>(
      shared_from_this(),
      detail::check_handle(a.loaded_executable, "PJRT_Executable_DeserializeAndLoad", "executable"), options);
}

}  // namespace torchtpu::pjrt
