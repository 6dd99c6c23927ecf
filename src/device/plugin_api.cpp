// src/device/plugin_api.cpp — the TPU emulator's PJRT C API: GetPjrtApi and the functions
// torchtpu's client calls (errors, events, client, devices, compile, execute, buffers).
// Exceptions never cross the C boundary: every entry point converts them to PJRT_Error.
#include <cmath>     // std::isnan
#include <cstdio>    // std::sscanf
#include <cstdlib>   // std::getenv, std::atoi
#include <cstring>   // std::memcpy
#include <limits>    // std::numeric_limits
#include <memory>    // std::unique_ptr, std::shared_ptr
#include <mutex>     // std::once_flag
#include <new>       // std::bad_alloc
#include <stdexcept> // std::logic_error
#include <string>    // std::string
#include <string_view> // std::string_view
#include <vector>    // std::vector

#include "emulator.hpp"                           // parse_program, run_program, Tensor
#include "torchtpu/core/bfloat16.hpp"             // bfloat16 <-> float
#include "torchtpu/core/half.hpp"                 // half <-> float
#include "torchtpu/device/pjrt/c_api.hpp"         // PJRT declarations shared with the client

namespace torchtpu::pjrt::capi {

struct PJRT_Error {
  int code;
  std::string message;
};
struct PJRT_Event {
  std::unique_ptr<PJRT_Error> error;  // null: success (emulator events are always ready)
};
struct PJRT_DeviceDescription {
  int id = 0;
  std::string kind = "TPU emulator";
};
struct PJRT_Device {
  PJRT_DeviceDescription desc;
};
struct PJRT_Client {
  std::vector<std::unique_ptr<PJRT_Device>> devices;
  std::vector<PJRT_Device*> device_ptrs;
  std::string platform_name = "tpu";
  std::string platform_version = "torchtpu-emulator 0.1 (PJRT C API 0.104, host interpreter with TPU numerics)";
};
struct PJRT_Buffer {
  PJRT_Client* client = nullptr;
  PJRT_Device* device = nullptr;
  emulator::TensorPtr tensor;  // null after Buffer_Delete
  std::vector<int64_t> dims;
};
struct PJRT_Executable {
  std::shared_ptr<const emulator::Program> program;
  std::string text;
  bool portable = false;
  int device_id = 0;
};
struct PJRT_LoadedExecutable {
  PJRT_Client* client = nullptr;
  std::shared_ptr<const emulator::Program> program;
  std::string text;
  bool portable = false;            // compile_portable_executable
  int device_id = 0;                // the compile-time device (non-portable)
};
struct PJRT_SerializedExecutable {
  std::string bytes;
};

}  // namespace torchtpu::pjrt::capi

namespace {

using namespace torchtpu::pjrt::capi;
namespace emu = torchtpu::emulator;
using emu::EmuError;
using emu::ET;

constexpr char kSerialMagic[] = "torchtpu-emulator-executable 1\n";

/// Returned when even the error cannot be allocated; never deleted.
PJRT_Error* oom_error() {
  static PJRT_Error oom{PJRT_Error_Code_RESOURCE_EXHAUSTED, "TPU emulator: out of host memory"};
  return &oom;
}

PJRT_Error* make_error(int code, std::string_view msg) noexcept {
  try {
    return new PJRT_Error{code, std::string(msg)};
  } catch (...) {
    return oom_error();
  }
}

/// Runs `f`, turning any exception into a PJRT_Error; never throws (a message that cannot be
/// built gives the static out-of-memory error).
template <class F>
PJRT_Error* guarded(F&& f) noexcept {
  try {
    try {
      f();
      return nullptr;
    } catch (const EmuError& e) {
      return make_error(e.code, e.msg);
    } catch (const std::logic_error& e) {  // std::stoll and friends on malformed numbers
      return make_error(PJRT_Error_Code_INVALID_ARGUMENT, std::string("TPU emulator: malformed program: ") + e.what());
    } catch (const std::bad_alloc&) {
      return make_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "TPU emulator: out of host memory");
    } catch (const std::exception& e) {
      return make_error(PJRT_Error_Code_INTERNAL, std::string("TPU emulator: ") + e.what());
    } catch (...) {
      return make_error(PJRT_Error_Code_INTERNAL, "TPU emulator: unknown failure");
    }
  } catch (...) {
    return oom_error();
  }
}

void require(bool ok, const std::string& what) {
  if (!ok) throw EmuError(PJRT_Error_Code_INVALID_ARGUMENT, "TPU emulator: " + what);
}

template <class Args>
void check_size(const Args* a, size_t needed, const char* name) {
  require(a != nullptr, std::string(name) + ": null arguments");
  if (a->struct_size < needed)
    throw EmuError(PJRT_Error_Code_INVALID_ARGUMENT, std::string("Unexpected ") + name + " size: expected " +
                                                         std::to_string(needed) + ", got " + std::to_string(a->struct_size));
}
#define TORCHTPU_EMU_CHECK(args, type, last) check_size(args, TORCHTPU_PJRT_STRUCT_SIZE(type, last), #type)

ET et_from_pjrt(PJRT_Buffer_Type t) {
  switch (t) {
    case PJRT_Buffer_Type_PRED: return ET::PRED;
    case PJRT_Buffer_Type_S8: return ET::S8;
    case PJRT_Buffer_Type_S16: return ET::S16;
    case PJRT_Buffer_Type_S32: return ET::S32;
    case PJRT_Buffer_Type_S64: return ET::S64;
    case PJRT_Buffer_Type_U8: return ET::U8;
    case PJRT_Buffer_Type_U16: return ET::U16;
    case PJRT_Buffer_Type_U32: return ET::U32;
    case PJRT_Buffer_Type_U64: return ET::U64;
    case PJRT_Buffer_Type_F16: return ET::F16;
    case PJRT_Buffer_Type_BF16: return ET::BF16;
    case PJRT_Buffer_Type_F32: return ET::F32;
    case PJRT_Buffer_Type_F64: return ET::F64;
    default: break;
  }
  throw EmuError(PJRT_Error_Code_UNIMPLEMENTED, "TPU emulator: buffer element type " + std::to_string(static_cast<int>(t)) + " is not supported");
}
PJRT_Buffer_Type et_to_pjrt(ET t) {
  static const PJRT_Buffer_Type kMap[] = {PJRT_Buffer_Type_PRED, PJRT_Buffer_Type_S8,  PJRT_Buffer_Type_S16,
                                          PJRT_Buffer_Type_S32,  PJRT_Buffer_Type_S64, PJRT_Buffer_Type_U8,
                                          PJRT_Buffer_Type_U16,  PJRT_Buffer_Type_U32, PJRT_Buffer_Type_U64,
                                          PJRT_Buffer_Type_F16,  PJRT_Buffer_Type_BF16, PJRT_Buffer_Type_F32,
                                          PJRT_Buffer_Type_F64};
  return kMap[static_cast<int>(t)];
}

double load_elem(const unsigned char* p, ET t) {
  switch (t) {
    case ET::PRED: return *p != 0;
    case ET::S8: { int8_t v; std::memcpy(&v, p, 1); return v; }
    case ET::U8: return *p;
    case ET::S16: { int16_t v; std::memcpy(&v, p, 2); return v; }
    case ET::U16: { uint16_t v; std::memcpy(&v, p, 2); return v; }
    case ET::S32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case ET::U32: { uint32_t v; std::memcpy(&v, p, 4); return v; }
    case ET::S64: { int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    case ET::U64: { uint64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    case ET::F16: { uint16_t v; std::memcpy(&v, p, 2); return static_cast<float>(torchtpu::half::from_bits(v)); }
    case ET::BF16: { uint16_t v; std::memcpy(&v, p, 2); return static_cast<float>(torchtpu::bfloat16::from_bits(v)); }
    case ET::F32: { float v; std::memcpy(&v, p, 4); return v; }
    case ET::F64: { double v; std::memcpy(&v, p, 8); return v; }
  }
  return 0;
}
/// `v` (an integer value held in a double) as int64, saturated: 2^63 (INT64_MAX rounded to a
/// double) gives INT64_MAX, never an undefined cast.
int64_t saturate_i64(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9223372036854775808.0) return std::numeric_limits<int64_t>::max();
  if (v <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}
uint64_t saturate_u64(double v) {
  if (std::isnan(v) || v <= 0) return v < 0 ? static_cast<uint64_t>(saturate_i64(v)) : 0;
  if (v >= 18446744073709551616.0) return std::numeric_limits<uint64_t>::max();
  return static_cast<uint64_t>(v);
}
void store_elem(unsigned char* p, ET t, double v) {
  switch (t) {
    case ET::PRED: *p = v != 0; break;
    case ET::S8: { int8_t x = static_cast<int8_t>(v); std::memcpy(p, &x, 1); break; }
    case ET::U8: *p = static_cast<uint8_t>(v); break;
    case ET::S16: { int16_t x = static_cast<int16_t>(v); std::memcpy(p, &x, 2); break; }
    case ET::U16: { uint16_t x = static_cast<uint16_t>(v); std::memcpy(p, &x, 2); break; }
    case ET::S32: { int32_t x = static_cast<int32_t>(v); std::memcpy(p, &x, 4); break; }
    case ET::U32: { uint32_t x = static_cast<uint32_t>(v); std::memcpy(p, &x, 4); break; }
    case ET::S64: { int64_t x = saturate_i64(v); std::memcpy(p, &x, 8); break; }
    case ET::U64: { uint64_t x = saturate_u64(v); std::memcpy(p, &x, 8); break; }
    case ET::F16: { uint16_t x = torchtpu::half(static_cast<float>(v)).bits; std::memcpy(p, &x, 2); break; }
    case ET::BF16: { uint16_t x = torchtpu::bfloat16(static_cast<float>(v)).bits; std::memcpy(p, &x, 2); break; }
    case ET::F32: { float x = static_cast<float>(v); std::memcpy(p, &x, 4); break; }
    case ET::F64: std::memcpy(p, &v, 8); break;
  }
}

PJRT_Event* ready_event() { return new PJRT_Event(); }

// ---------------------------------------------------------------------------- errors
void error_destroy(PJRT_Error_Destroy_Args* a) noexcept {
  if (a && a->error != oom_error()) delete a->error;
}
void error_message(PJRT_Error_Message_Args* a) {
  if (!a || !a->error) return;
  a->message = a->error->message.data();
  a->message_size = a->error->message.size();
}
PJRT_Error* error_get_code(PJRT_Error_GetCode_Args* a) {
  if (!a || !a->error) return make_error(PJRT_Error_Code_INVALID_ARGUMENT, "null error");
  a->code = static_cast<PJRT_Error_Code>(a->error->code);
  return nullptr;
}

// ---------------------------------------------------------------------------- plugin, events
PJRT_Error* plugin_initialize(PJRT_Plugin_Initialize_Args*) { return nullptr; }
PJRT_Error* plugin_attributes(PJRT_Plugin_Attributes_Args* a) {
  return guarded([&] {
    TORCHTPU_EMU_CHECK(a, PJRT_Plugin_Attributes_Args, num_attributes);
    static const int64_t kStablehlo[] = {1, 0, 0};
    static PJRT_NamedValue attrs[2] = {};
    static std::once_flag once;
    std::call_once(once, [] {
      attrs[0].struct_size = sizeof(PJRT_NamedValue);
      attrs[0].name = "stablehlo_current_version";
      attrs[0].name_size = std::strlen(attrs[0].name);
      attrs[0].type = PJRT_NamedValue_kInt64List;
      attrs[0].int64_array_value = kStablehlo;
      attrs[0].value_size = 3;
      attrs[1].struct_size = sizeof(PJRT_NamedValue);
      attrs[1].name = "torchtpu_emulator";
      attrs[1].name_size = std::strlen(attrs[1].name);
      attrs[1].type = PJRT_NamedValue_kBool;
      attrs[1].bool_value = true;
      attrs[1].value_size = 1;
    });
    a->attributes = attrs;
    a->num_attributes = 2;
  });
}
PJRT_Error* event_destroy(PJRT_Event_Destroy_Args* a) {
  return guarded([&] { if (a) delete a->event; });
}
PJRT_Error* event_is_ready(PJRT_Event_IsReady_Args* a) {
  return guarded([&] {
    TORCHTPU_EMU_CHECK(a, PJRT_Event_IsReady_Args, is_ready);
    a->is_ready = true;
  });
}
PJRT_Error* copy_event_error(const PJRT_Event* e) {
  if (e && e->error) return make_error(e->error->code, e->error->message);
  return nullptr;
}
PJRT_Error* event_error(PJRT_Event_Error_Args* a) { return a ? copy_event_error(a->event) : nullptr; }
PJRT_Error* event_await(PJRT_Event_Await_Args* a) { return a ? copy_event_error(a->event) : nullptr; }
PJRT_Error* event_on_ready(PJRT_Event_OnReady_Args* a) {
  return guarded([&] {
    TORCHTPU_EMU_CHECK(a, PJRT_Event_OnReady_Args, user_arg);
    require(a->callback != nullptr, "Event_OnReady: null callback");
    a->callback(copy_event_error(a->event), a->user_arg);  // ready now: run synchronously
  });
}

// ---------------------------------------------------------------------------- client, devices
PJRT_Error* client_create(PJRT_Client_Create_Args* a) {
  return guarded([&] {
    TORCHTPU_EMU_CHECK(a, PJRT_Client_Create_Args, client);
    require(a->num_options == 0 || a->create_options != nullptr, "Client_Create: null create_options");
    for (size_t i = 0; i < a->num_options; ++i)  // accepted and ignored, but must be well formed
      require(a->create_options[i].name != nullptr && a->create_options[i].type >= PJRT_NamedValue_kString &&
                  a->create_options[i].type <= PJRT_NamedValue_kBool,
              "Client_Create: malformed create option " + std::to_string(i));
    int n = 1;
    if (const char* v = std::getenv("TORCHTPU_EMULATOR_DEVICES")) {
      n = std::atoi(v);
      require(n >= 1 && n <= 64, "TORCHTPU_EMULATOR_DEVICES must be in [1, 64], got '" + std::string(v) + "'");
    }
    auto c = std::make_unique<PJRT_Client>();
    for (int i = 0; i < n; ++i) {
      auto d = std::make_unique<PJRT_Device>();
      d->desc.id = i;
      c->device_ptrs.push_back(d.get());
      c->devices.push_back(std::move(d));
    }
    a->client = c.release();
  });
}
PJRT_Error* client_destroy(PJRT_Client_Destroy_Args* a) {
  return guarded([&] { if (a) delete a->client; });
}
PJRT_Error* client_platform_name(PJRT_Client_PlatformName_Args* a) {
  return guarded([&] {
    TORCHTPU_EMU_CHECK(a, PJRT_Client_PlatformName_Args, platform_name_size);
    require(a->client != nullptr, "Client_PlatformName: null client");
    a->platform_name = a->client->platform_name.data();
    a->platform_name_size = a->client->platform_name.size();
  });
}
PJRT_Error* client_platform_version(PJRT_Client_PlatformVersion_Args* a) {
  return guarded([&] {
    TORCHTPU_EMU_CHECK(a, PJRT_Client_PlatformVersion_Args, platform_version_size);
    require(a->client != nullptr, "Client_PlatformVersion: null client");
    a->platform_version = a->client->platform_version.data();
    a->platform_version_size = a->client->platform_version.size();
  });
}
PJRT_Error* client_process_index(PJRT_Client_Destroy_Args* a) {
  // PJRT_Client_ProcessIndex_Args: hdr, client, int process_index @24
  return guarded([&] {
    require(a != nullptr && a->struct_size >= 28, "Client_ProcessIndex: bad arguments");
    int zero = 0;
    std::memcpy(reinterpret_cast<char*>(a) + 24, &zero, sizeof(zero));
  });
}
PJRT_Error* client_devices(PJRT_Client_Devices_Args* a) {
  return guarded([&] {
    TORCHTPU_EMU_CHECK(a, PJRT_Client_Devices_Args, num_devices);
    require(a->client != nullptr, "Client_Devices: null client");
    a->devices = a->client->device_ptrs.data();
    a->num_devices = a->client->device_ptrs.size();
  });
}
PJRT_Error* device_get_description(PJRT_Device_GetDescription_Args* a) {
  return guarded([&] {
    TORCHTPU_EMU_CHECK(a, PJRT_Device_GetDescription_Args, device_description);
    require(a->device != nullptr, "Device_GetDescription: null device");
    a->device_description = &a->device->desc;
  });
}
PJRT_Error* description_id(PJRT_DeviceDescription_Id_Args* a) {
  return guarded([&] {
    TORCHTPU_EMU_CHECK(a, PJRT_DeviceDescription_Id_Args, id);
    require(a->device_description != nullptr, "DeviceDescription_Id: null description");
    a->id = a->device_description->id;
  });
}
PJRT_Error* description_kind(PJRT_DeviceDescription_Kind_Args* a) {
  return guarded([&] {
    TORCHTPU_EMU_CHECK(a, PJRT_DeviceDescription_Kind_Args, device_kind_size);
    require(a->device_description != nullptr, "DeviceDescription_Kind: null description");
    a->device_kind = a->device_description->kind.data();
    a->device_kind_size = a->device_description->kind.size();
  });
}

// ---------------------------------------------------------------------------- compile
/// The two settings of a serialized xla.CompileOptionsProto the emulator honours:
/// compile_portable_executable (field 4) and the first device of
/// executable_build_options (3).device_assignment (9).computation_devices (3).replica_device_ids (1).
struct CompileSettings {
  bool portable = false;
  int device_id = 0;
};

class ProtoReader {
 public:
  ProtoReader(const unsigned char* p, size_t n) : p_(p), end_(p + n) {}
  bool done() const { return p_ >= end_; }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      require(p_ < end_, "compile options: truncated varint");
      const unsigned char b = *p_++;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    throw EmuError(PJRT_Error_Code_INVALID_ARGUMENT, "TPU emulator: compile options: bad varint");
  }
  ProtoReader bytes() {
    const uint64_t n = varint();
    require(n <= static_cast<uint64_t>(end_ - p_), "compile options: truncated field");
    ProtoReader r(p_, static_cast<size_t>(n));
    p_ += n;
    return r;
  }
  void skip(int wire) {
    switch (wire) {
      case 0: varint(); break;
      case 1: require(end_ - p_ >= 8, "compile options: truncated field"); p_ += 8; break;
      case 2: bytes(); break;
      case 5: require(end_ - p_ >= 4, "compile options: truncated field"); p_ += 4; break;
      default: throw EmuError(PJRT_Error_Code_INVALID_ARGUMENT, "TPU emulator: compile options: bad wire type");
    }
  }

 private:
  const unsigned char* p_;
  const unsigned char* end_;
};

CompileSettings parse_compile_options(const char* data, size_t size) {
  CompileSettings cs;
  ProtoReader top(reinterpret_cast<const unsigned char*>(data), data ? size : 0);
  while (!top.done()) {
    const uint64_t tag = top.varint();
    const int field = static_cast<int>(tag >> 3), wire = static_cast<int>(tag & 7);
    if (field == 4 && wire == 0) {
      cs.portable = top.varint() != 0;
    } else if (field == 3 && wire == 2) {
      ProtoReader build = top.bytes();
      while (!build.done()) {
        const uint64_t t2 = build.varint();
        if ((t2 >> 3) == 9 && (t2 & 7) == 2) {
          ProtoReader da = build.bytes();
          while (!da.done()) {
            const uint64_t t3 = da.varint();
            if ((t3 >> 3) == 3 && (t3 & 7) == 2) {
              ProtoReader cd = da.bytes();
              while (!cd.done()) {
                const uint64_t t4 = cd.varint();
                if ((t4 >> 3) == 1 && (t4 & 7) == 2) {
                  ProtoReader ids = cd.bytes();
                  if (!ids.done()) cs.device_id = static_cast<int>(ids.varint());
                } else if ((t4 >> 3) == 1 && (t4 & 7) == 0) {
                  cs.device_id = static_cast<int>(cd.varint());
                } else {
                  cd.skip(static_cast<int>(t4 & 7));
                }
              }
            } else {
              da.skip(static_cast<int>(t3 & 7));
            }
          }
        } else {
          build.skip(static_cast<int>(t2 & 7));
        }
      }
    } else {
      top.skip(wire);
    }
  }
  return cs;
}

void apply_settings(PJRT_LoadedExecutable& exe, const CompileSettings& cs) {
  exe.portable = cs.portable;
  exe.device_id = cs.device_id;
  bool found = false;
  for (PJRT_Device* d : exe.client->device_ptrs) found |= d->desc.id == cs.device_id;
  require(found, "compile options name device id " + std::to_string(cs.device_id) + ", which does not exist");
}

PJRT_Error* client_compile(PJRT_Client_Compile_Args* a) {
  return guarded([&] {
    TORCHTPU_EMU_CHECK(a, PJRT_Client_Compile_Args, executable);
    require(a->client != nullptr && a->program != nullptr, "Client_Compile: null client or program");
    const PJRT_Program* p = a->program;
    const std::string format(p->format ? p->format : "", p->format ? p->format_size : 0);
    if (format != "mlir")
      throw EmuError(PJRT_Error_Code_UNIMPLEMENTED, "TPU emulator: program format '" + format + "' is not supported (use \"mlir\" text)");
    auto exe = std::make_unique<PJRT_LoadedExecutable>();
    exe->client = a->client;
    exe->text.assign(p->code ? p->code : "", p->code ? p->code_size : 0);
    apply_settings(*exe, parse_compile_options(a->compile_options, a->compile_options_size));
    exe->program = emu::parse_program(exe->text);
    a->executable = exe.release();
  });
}
PJRT_Error* loaded_destroy(PJRT_LoadedExecutable_Destroy_Args* a) {
  return guarded([&] { if (a) delete a->executable; });
}
PJRT_Error* loaded_get_executable(PJRT_LoadedExecutable_GetExecutable_Args* a) {
  return guarded([&] {
    TORCHTPU_EMU_CHECK(a, PJRT_LoadedExecutable_GetExecutable_Args, executable);
    require(a->loaded_executable != nullptr, "LoadedExecutable_GetExecutable: null executable");
    const PJRT_LoadedExecutable& l = *a->loaded_executable;
    a->executable = new PJRT_Executable{l.program, l.text, l.portable, l.device_id};
  });
}
PJRT_Error* executable_destroy(PJRT_Executable_Destroy_Args* a) {
  return guarded([&] { if (a) delete a->executable; });
}
PJRT_Error* executable_name(PJRT_Client_PlatformName_Args* a) {
  // PJRT_Executable_Name_Args has the same layout: hdr, executable, name, name_size
  return guarded([&] {
    TORCHTPU_EMU_CHECK(a, PJRT_Client_PlatformName_Args, platform_name_size);
    static const char kName[] = "main";
    a->platform_name = kName;
    a->platform_name_size = 4;
  });
}
PJRT_Error* executable_num_outputs(PJRT_Executable_NumOutputs_Args* a) {
  return guarded([&] {
    TORCHTPU_EMU_CHECK(a, PJRT_Executable_NumOutputs_Args, num_outputs);
    require(a->executable != nullptr, "Executable_NumOutputs: null executable");
    a->num_outputs = a->executable->program->results.size();
  });
}
void serialized_deleter(PJRT_SerializedExecutable* s) { delete s; }
PJRT_Error* executable_serialize(PJRT_Executable_Serialize_Args* a) {
  return guarded([&] {
    TORCHTPU_EMU_CHECK(a, PJRT_Executable_Serialize_Args, serialized_executable_deleter);
    require(a->executable != nullptr, "Executable_Serialize: null executable");
    auto s = std::make_unique<PJRT_SerializedExecutable>();
    const PJRT_Executable& e = *a->executable;
    s->bytes = std::string(kSerialMagic) + "options " + (e.portable ? "1 " : "0 ") +
               std::to_string(e.device_id) + "\n" + e.text;
    a->serialized_bytes = s->bytes.data();
    a->serialized_bytes_size = s->bytes.size();
    a->serialized_executable_deleter = serialized_deleter;
    a->serialized_executable = s.release();
  });
}
PJRT_Error* executable_deserialize(PJRT_Executable_DeserializeAndLoad_Args* a) {
  return guarded([&] {
    TORCHTPU_EMU_CHECK(a, PJRT_Executable_DeserializeAndLoad_Args, loaded_executable);
    require(a->client != nullptr, "Executable_DeserializeAndLoad: null client");
    const std::string bytes(a->serialized_executable ? a->serialized_executable : "",
                            a->serialized_executable ? a->serialized_executable_size : 0);
    const std::string magic(kSerialMagic);
    if (bytes.compare(0, magic.size(), magic) != 0)
      throw EmuError(PJRT_Error_Code_INVALID_ARGUMENT, "TPU emulator: not a serialized emulator executable");
    auto exe = std::make_unique<PJRT_LoadedExecutable>();
    exe->client = a->client;
    const size_t eol = bytes.find('\n', magic.size());
    const std::string opts = bytes.substr(magic.size(), eol == std::string::npos ? 0 : eol - magic.size());
    int portable = 0, device_id = 0;
    if (eol == std::string::npos || std::sscanf(opts.c_str(), "options %d %d", &portable, &device_id) != 2)
      throw EmuError(PJRT_Error_Code_INVALID_ARGUMENT, "TPU emulator: corrupt serialized executable");
    CompileSettings cs;
    cs.portable = portable != 0;
    cs.device_id = device_id;
    apply_settings(*exe, cs);
    exe->text = bytes.substr(eol + 1);
    exe->program = emu::parse_program(exe->text);
    a->loaded_executable = exe.release();
  });
}

// ---------------------------------------------------------------------------- buffers
PJRT_Error* buffer_from_host(PJRT_Client_BufferFromHostBuffer_Args* a) {
  return guarded([&] {
    TORCHTPU_EMU_CHECK(a, PJRT_Client_BufferFromHostBuffer_Args, buffer);
    require(a->client != nullptr, "BufferFromHostBuffer: null client");
    require(a->device != nullptr, "BufferFromHostBuffer: device must be set (memory spaces are not supported)");
    const ET et = et_from_pjrt(a->type);
    auto t = std::make_shared<emu::Tensor>();
    t->type.et = et;
    t->type.dims.assign(a->dims, a->dims + a->num_dims);
    for (int64_t d : t->type.dims) require(d >= 0, "BufferFromHostBuffer: negative dimension");
    const int64_t n = t->type.numel();  // EmuError when the element count overflows
    const int64_t esz = emu::et_bytes(et);
    int64_t host_bytes = 0;
    require(!__builtin_mul_overflow(n, esz, &host_bytes),
            "BufferFromHostBuffer: the byte size of " + t->type.str() + " overflows int64");
    t->data.resize(static_cast<size_t>(n));
    require(n == 0 || a->data != nullptr, "BufferFromHostBuffer: null data");
    const auto* src = static_cast<const unsigned char*>(a->data);
    std::vector<int64_t> bstr(a->num_dims);
    if (a->byte_strides && a->num_byte_strides) {
      require(a->num_byte_strides == a->num_dims, "BufferFromHostBuffer: byte_strides rank mismatch");
      bstr.assign(a->byte_strides, a->byte_strides + a->num_byte_strides);
    } else {
      int64_t s = esz;
      for (size_t i = a->num_dims; i-- > 0;) { bstr[i] = s; s *= t->type.dims[i]; }
    }
    std::vector<int64_t> idx(a->num_dims, 0);
    for (int64_t k = 0; k < n; ++k) {
      int64_t off = 0;
      for (size_t i = 0; i < idx.size(); ++i) off += idx[i] * bstr[i];
      t->data[static_cast<size_t>(k)] = emu::et_round(et, load_elem(src + off, et));
      for (size_t i = idx.size(); i-- > 0;) { if (++idx[i] < t->type.dims[i]) break; idx[i] = 0; }
    }
    auto b = std::make_unique<PJRT_Buffer>();
    b->client = a->client;
    b->device = a->device;
    b->dims = t->type.dims;
    b->tensor = std::move(t);
    a->done_with_host_buffer = ready_event();
    a->buffer = b.release();
  });
}
// Every entry point below the C ABI returns its failures as PJRT_Error (through `guarded`):
// an exception must never cross into the caller, destructors included.
PJRT_Error* buffer_destroy(PJRT_Buffer_Destroy_Args* a) {
  return guarded([&] { if (a) delete a->buffer; });
}
PJRT_Error* buffer_delete(PJRT_Buffer_Destroy_Args* a) {
  return guarded([&] { if (a && a->buffer) a->buffer->tensor.reset(); });
}
PJRT_Buffer* live(PJRT_Buffer* b, const char* what) {
  require(b != nullptr, std::string(what) + ": null buffer");
  require(b->tensor != nullptr, std::string(what) + ": Buffer has been deleted or donated");
  return b;
}
PJRT_Error* buffer_element_type(PJRT_Buffer_ElementType_Args* a) {
  return guarded([&] {
    TORCHTPU_EMU_CHECK(a, PJRT_Buffer_ElementType_Args, type);
    require(a->buffer != nullptr, "Buffer_ElementType: null buffer");
    a->type = a->buffer->tensor ? et_to_pjrt(a->buffer->tensor->type.et) : PJRT_Buffer_Type_INVALID;
    require(a->buffer->tensor != nullptr, "Buffer_ElementType: Buffer has been deleted or donated");
  });
}
PJRT_Error* buffer_dimensions(PJRT_Buffer_Dimensions_Args* a) {
  return guarded([&] {
    TORCHTPU_EMU_CHECK(a, PJRT_Buffer_Dimensions_Args, num_dims);
    require(a->buffer != nullptr, "Buffer_Dimensions: null buffer");
    a->dims = a->buffer->dims.data();
    a->num_dims = a->buffer->dims.size();
  });
}
PJRT_Error* buffer_size(PJRT_Buffer_OnDeviceSizeInBytes_Args* a) {
  return guarded([&] {
    TORCHTPU_EMU_CHECK(a, PJRT_Buffer_OnDeviceSizeInBytes_Args, on_device_size_in_bytes);
    const auto& t = *live(a->buffer, "Buffer_OnDeviceSizeInBytes")->tensor;
    a->on_device_size_in_bytes = static_cast<size_t>(t.type.numel() * emu::et_bytes(t.type.et));
  });
}
PJRT_Error* buffer_device(PJRT_Buffer_Device_Args* a) {
  return guarded([&] {
    TORCHTPU_EMU_CHECK(a, PJRT_Buffer_Device_Args, device);
    require(a->buffer != nullptr, "Buffer_Device: null buffer");
    a->device = a->buffer->device;
  });
}
PJRT_Error* buffer_copy_to_device(PJRT_Buffer_CopyToDevice_Args* a) {
  return guarded([&] {
    TORCHTPU_EMU_CHECK(a, PJRT_Buffer_CopyToDevice_Args, dst_buffer);
    PJRT_Buffer* src = live(a->buffer, "Buffer_CopyToDevice");
    require(a->dst_device != nullptr, "Buffer_CopyToDevice: null destination device");
    require(a->dst_device != src->device, "Buffer_CopyToDevice: the buffer is already on that device");
    auto b = std::make_unique<PJRT_Buffer>();
    b->client = src->client;
    b->device = a->dst_device;
    b->dims = src->dims;
    b->tensor = src->tensor;  // tensors are immutable: the copy may share them
    a->dst_buffer = b.release();
  });
}
PJRT_Error* buffer_ready_event(PJRT_Buffer_ReadyEvent_Args* a) {
  return guarded([&] {
    TORCHTPU_EMU_CHECK(a, PJRT_Buffer_ReadyEvent_Args, event);
    live(a->buffer, "Buffer_ReadyEvent");
    a->event = ready_event();
  });
}
PJRT_Error* buffer_to_host(PJRT_Buffer_ToHostBuffer_Args* a) {
  return guarded([&] {
    TORCHTPU_EMU_CHECK(a, PJRT_Buffer_ToHostBuffer_Args, event);
    const emu::Tensor& t = *live(a->src, "Buffer_ToHostBuffer")->tensor;
    const size_t esz = static_cast<size_t>(emu::et_bytes(t.type.et));
    const size_t bytes = static_cast<size_t>(t.type.numel()) * esz;
    if (a->host_layout) {  // only dense row-major is supported: Tiled, no tiles, descending m2m
      const auto* raw = reinterpret_cast<const unsigned char*>(a->host_layout);
      int type = 0;
      std::memcpy(&type, raw + 72, sizeof(int));
      const int64_t* m2m = nullptr;
      size_t m2m_size = 0, num_tiles = 0;
      std::memcpy(&m2m, raw + 32, sizeof(m2m));
      std::memcpy(&m2m_size, raw + 40, sizeof(size_t));
      std::memcpy(&num_tiles, raw + 64, sizeof(size_t));
      bool row_major = type == 0 && num_tiles == 0 && m2m_size == t.type.dims.size();
      for (size_t i = 0; row_major && i < m2m_size; ++i) row_major = m2m[i] == static_cast<int64_t>(m2m_size - 1 - i);
      if (!row_major)
        throw EmuError(PJRT_Error_Code_UNIMPLEMENTED, "TPU emulator: ToHostBuffer supports only a dense row-major host layout");
    }
    if (a->dst == nullptr) {
      a->dst_size = bytes;
      a->event = nullptr;
      return;
    }
    require(a->dst_size >= bytes, "Buffer_ToHostBuffer: destination has " + std::to_string(a->dst_size) +
                                      " bytes, needs " + std::to_string(bytes));
    auto* dst = static_cast<unsigned char*>(a->dst);
    for (size_t i = 0; i < t.data.size(); ++i) store_elem(dst + i * esz, t.type.et, t.data[i]);
    a->event = ready_event();
  });
}

// ---------------------------------------------------------------------------- execute
PJRT_Error* execute(PJRT_LoadedExecutable_Execute_Args* a) {
  return guarded([&] {
    TORCHTPU_EMU_CHECK(a, PJRT_LoadedExecutable_Execute_Args, execute_device);
    require(a->executable != nullptr, "Execute: null executable");
    require(a->options == nullptr || a->options->struct_size >= TORCHTPU_PJRT_STRUCT_SIZE(PJRT_ExecuteOptions, launch_id),
            "Execute: ExecuteOptions too small");
    const PJRT_LoadedExecutable& exe = *a->executable;
    require(a->num_devices >= 1, "Execute: num_devices must be >= 1");
    require(a->execute_device == nullptr || a->num_devices == 1, "Execute: execute_device needs num_devices == 1");
    require(a->num_devices <= exe.client->device_ptrs.size(), "Execute: more argument lists than devices");
    require(a->output_lists != nullptr, "Execute: null output_lists");
    if (a->execute_device && !exe.portable)  // as XLA: execute_device selects ExecutePortable
      throw EmuError(PJRT_Error_Code_INVALID_ARGUMENT,
                     "TPU emulator: ExecutePortable gets a non-portable executable (compile with "
                     "compile_portable_executable to choose the device at execute time)");
    for (size_t d = 0; d < a->num_devices; ++d) {
      PJRT_Device* dev = a->execute_device ? a->execute_device : exe.client->device_ptrs[d];
      if (!a->execute_device && a->num_devices == 1)
        for (PJRT_Device* x : exe.client->device_ptrs)
          if (x->desc.id == exe.device_id) dev = x;
      std::vector<emu::TensorPtr> args;
      for (size_t i = 0; i < a->num_args; ++i) {
        PJRT_Buffer* b = live(a->argument_lists[d][i], "Execute");
        if (b->device != dev)
          throw EmuError(PJRT_Error_Code_INVALID_ARGUMENT,
                         "TPU emulator: Execute: argument " + std::to_string(i) + " is on device " +
                             std::to_string(b->device->desc.id) + " but the program runs on device " +
                             std::to_string(dev->desc.id));
        args.push_back(b->tensor);
      }
      std::vector<emu::TensorPtr> outs = emu::run_program(*exe.program, args);
      for (size_t k = 0; k < outs.size(); ++k) {
        auto b = std::make_unique<PJRT_Buffer>();
        b->client = exe.client;
        b->device = dev;
        b->dims = outs[k]->type.dims;
        b->tensor = outs[k];
        a->output_lists[d][k] = b.release();
      }
      if (a->device_complete_events) a->device_complete_events[d] = ready_event();
    }
  });
}

PJRT_Api make_api() {
  PJRT_Api api{};
  api.struct_size = sizeof(PJRT_Api);
  api.pjrt_api_version.struct_size = sizeof(PJRT_Api_Version);
  api.pjrt_api_version.major_version = kApiMajor;
  api.pjrt_api_version.minor_version = kApiMinor;
  auto set = [&api](Slot s, auto fn) { api.slots[static_cast<int>(s)] = reinterpret_cast<PJRT_AnyFn>(fn); };
  set(Slot::Error_Destroy, &error_destroy);
  set(Slot::Error_Message, &error_message);
  set(Slot::Error_GetCode, &error_get_code);
  set(Slot::Plugin_Initialize, &plugin_initialize);
  set(Slot::Plugin_Attributes, &plugin_attributes);
  set(Slot::Event_Destroy, &event_destroy);
  set(Slot::Event_IsReady, &event_is_ready);
  set(Slot::Event_Error, &event_error);
  set(Slot::Event_Await, &event_await);
  set(Slot::Event_OnReady, &event_on_ready);
  set(Slot::Client_Create, &client_create);
  set(Slot::Client_Destroy, &client_destroy);
  set(Slot::Client_PlatformName, &client_platform_name);
  set(Slot::Client_ProcessIndex, &client_process_index);
  set(Slot::Client_PlatformVersion, &client_platform_version);
  set(Slot::Client_Devices, &client_devices);
  set(Slot::Client_AddressableDevices, &client_devices);
  set(Slot::Client_Compile, &client_compile);
  set(Slot::Client_BufferFromHostBuffer, &buffer_from_host);
  set(Slot::DeviceDescription_Id, &description_id);
  set(Slot::DeviceDescription_Kind, &description_kind);
  set(Slot::Device_GetDescription, &device_get_description);
  set(Slot::Executable_Destroy, &executable_destroy);
  set(Slot::Executable_Name, &executable_name);
  set(Slot::Executable_NumOutputs, &executable_num_outputs);
  set(Slot::Executable_Serialize, &executable_serialize);
  set(Slot::LoadedExecutable_Destroy, &loaded_destroy);
  set(Slot::LoadedExecutable_GetExecutable, &loaded_get_executable);
  set(Slot::LoadedExecutable_Execute, &execute);
  set(Slot::Executable_DeserializeAndLoad, &executable_deserialize);
  set(Slot::Buffer_Destroy, &buffer_destroy);
  set(Slot::Buffer_ElementType, &buffer_element_type);
  set(Slot::Buffer_Dimensions, &buffer_dimensions);
  set(Slot::Buffer_OnDeviceSizeInBytes, &buffer_size);
  set(Slot::Buffer_Device, &buffer_device);
  set(Slot::Buffer_Delete, &buffer_delete);
  set(Slot::Buffer_CopyToDevice, &buffer_copy_to_device);
  set(Slot::Buffer_ToHostBuffer, &buffer_to_host);
  set(Slot::Buffer_ReadyEvent, &buffer_ready_event);
  return api;
}

}  // namespace

/// The plugin entry point (the only exported symbol).
extern "C" __attribute__((visibility("default"))) const PJRT_Api* GetPjrtApi() {
  static const PJRT_Api api = make_api();
  return &api;
}
