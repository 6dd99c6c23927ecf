// torchtpu/device/pjrt/c_api.hpp — torchtpu's own declarations of the subset of the PJRT
// plugin C ABI it calls (slot table by index, argument structs, enums), for minor 104.
//
// Written from the layout facts in shared/PJRT-NOTES.md (x86-64 LP64). Every argument struct
// starts with `struct_size` and `extension_start`; `*_STRUCT_SIZE` is offsetof(last) +
// sizeof(last), which can be smaller than sizeof. Fields marked "out" are written by the
// plugin. Both the client wrappers (client.hpp) and the emulator plugin (src/device) use
// these declarations, so they are tested against each other; the offsets are pinned by
// static_asserts at the end of this file.
#pragma once
#include <cstddef>  // size_t, offsetof
#include <cstdint>  // int64_t

namespace torchtpu::pjrt::capi {

/// The PJRT API version these declarations follow.
inline constexpr int kApiMajor = 0;
inline constexpr int kApiMinor = 104;
/// The oldest minor version whose slot order matches ours (0.57 rearranged the table).
inline constexpr int kMinSupportedMinor = 57;

// Opaque handles. Plugins define them; clients only hold pointers.
struct PJRT_Error;
struct PJRT_Event;
struct PJRT_Client;
struct PJRT_Device;
struct PJRT_DeviceDescription;
struct PJRT_Memory;
struct PJRT_Executable;
struct PJRT_LoadedExecutable;
struct PJRT_Buffer;
struct PJRT_SerializedExecutable;
struct PJRT_Extension_Base;
struct PJRT_ExecuteContext;

/// absl-style status codes carried by a PJRT_Error.
enum PJRT_Error_Code : int {
  PJRT_Error_Code_OK = 0,
  PJRT_Error_Code_CANCELLED = 1,
  PJRT_Error_Code_UNKNOWN = 2,
  PJRT_Error_Code_INVALID_ARGUMENT = 3,
  PJRT_Error_Code_DEADLINE_EXCEEDED = 4,
  PJRT_Error_Code_NOT_FOUND = 5,
  PJRT_Error_Code_ALREADY_EXISTS = 6,
  PJRT_Error_Code_PERMISSION_DENIED = 7,
  PJRT_Error_Code_RESOURCE_EXHAUSTED = 8,
  PJRT_Error_Code_FAILED_PRECONDITION = 9,
  PJRT_Error_Code_ABORTED = 10,
  PJRT_Error_Code_OUT_OF_RANGE = 11,
  PJRT_Error_Code_UNIMPLEMENTED = 12,
  PJRT_Error_Code_INTERNAL = 13,
  PJRT_Error_Code_UNAVAILABLE = 14,
  PJRT_Error_Code_DATA_LOSS = 15,
  PJRT_Error_Code_UNAUTHENTICATED = 16,
};

/// Element types of device buffers (only the ones torchtpu maps are named).
enum PJRT_Buffer_Type : int {
  PJRT_Buffer_Type_INVALID = 0,
  PJRT_Buffer_Type_PRED = 1,
  PJRT_Buffer_Type_S8 = 2,
  PJRT_Buffer_Type_S16 = 3,
  PJRT_Buffer_Type_S32 = 4,
  PJRT_Buffer_Type_S64 = 5,
  PJRT_Buffer_Type_U8 = 6,
  PJRT_Buffer_Type_U16 = 7,
  PJRT_Buffer_Type_U32 = 8,
  PJRT_Buffer_Type_U64 = 9,
  PJRT_Buffer_Type_F16 = 10,
  PJRT_Buffer_Type_F32 = 11,
  PJRT_Buffer_Type_F64 = 12,
  PJRT_Buffer_Type_BF16 = 13,
};

enum PJRT_HostBufferSemantics : int {
  PJRT_HostBufferSemantics_kImmutableOnlyDuringCall = 0,
  PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes = 1,
  PJRT_HostBufferSemantics_kImmutableZeroCopy = 2,
  PJRT_HostBufferSemantics_kMutableZeroCopy = 3,
};

enum PJRT_NamedValue_Type : int {
  PJRT_NamedValue_kString = 0,
  PJRT_NamedValue_kInt64 = 1,
  PJRT_NamedValue_kInt64List = 2,
  PJRT_NamedValue_kFloat = 3,
  PJRT_NamedValue_kBool = 4,
};

/// Size of an argument struct as the PJRT header defines it: up to the end of `field`.
#define TORCHTPU_PJRT_STRUCT_SIZE(type, field) (offsetof(type, field) + sizeof(type::field))

struct PJRT_Api_Version {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  int major_version;
  int minor_version;
};

struct PJRT_NamedValue {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const char* name;
  size_t name_size;
  PJRT_NamedValue_Type type;
  union {
    const char* string_value;
    int64_t int64_value;
    const int64_t* int64_array_value;
    float float_value;
    bool bool_value;
  };
  size_t value_size;
};

// ---- errors -------------------------------------------------------------------------------
struct PJRT_Error_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Error* error;  // may be null
};
struct PJRT_Error_Message_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const PJRT_Error* error;
  const char* message;  // out, not NUL-terminated, lives as long as `error`
  size_t message_size;  // out
};
struct PJRT_Error_GetCode_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const PJRT_Error* error;
  PJRT_Error_Code code;  // out
};

// ---- plugin -------------------------------------------------------------------------------
struct PJRT_Plugin_Initialize_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
};
struct PJRT_Plugin_Attributes_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const PJRT_NamedValue* attributes;  // out, owned by the plugin
  size_t num_attributes;              // out
};

// ---- events -------------------------------------------------------------------------------
struct PJRT_Event_Destroy_Args {  // also Event_Await and Event_Error
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Event* event;
};
using PJRT_Event_Await_Args = PJRT_Event_Destroy_Args;
using PJRT_Event_Error_Args = PJRT_Event_Destroy_Args;
struct PJRT_Event_IsReady_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Event* event;
  bool is_ready;  // out
};
using PJRT_Event_OnReadyCallback = void (*)(PJRT_Error* error, void* user_arg);
struct PJRT_Event_OnReady_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Event* event;
  PJRT_Event_OnReadyCallback callback;
  void* user_arg;
};

// ---- client -------------------------------------------------------------------------------
struct PJRT_Client_Create_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const PJRT_NamedValue* create_options;
  size_t num_options;
  void* kv_get_callback;
  void* kv_get_user_arg;
  void* kv_put_callback;
  void* kv_put_user_arg;
  PJRT_Client* client;  // out
  void* kv_try_get_callback;
  void* kv_try_get_user_arg;
};
struct PJRT_Client_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
};
struct PJRT_Client_PlatformName_Args {  // same layout for PlatformVersion
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
  const char* platform_name;  // out, owned by the client, not NUL-terminated
  size_t platform_name_size;  // out
};
struct PJRT_Client_PlatformVersion_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
  const char* platform_version;  // out, owned by the client
  size_t platform_version_size;  // out
};
struct PJRT_Client_Devices_Args {  // same layout for AddressableDevices
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
  PJRT_Device* const* devices;  // out, owned by the client
  size_t num_devices;           // out
};
using PJRT_Client_AddressableDevices_Args = PJRT_Client_Devices_Args;
struct PJRT_Program {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  char* code;  // not NUL-terminated
  size_t code_size;
  const char* format;  // "mlir", "hlo", ...
  size_t format_size;
};
struct PJRT_Client_Compile_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
  const PJRT_Program* program;
  const char* compile_options;  // serialized xla.CompileOptionsProto
  size_t compile_options_size;
  PJRT_LoadedExecutable* executable;  // out, caller destroys
};
struct PJRT_Buffer_MemoryLayout;
struct PJRT_Client_BufferFromHostBuffer_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
  const void* data;
  PJRT_Buffer_Type type;
  const int64_t* dims;
  size_t num_dims;
  const int64_t* byte_strides;  // null: dense row-major
  size_t num_byte_strides;
  PJRT_HostBufferSemantics host_buffer_semantics;
  PJRT_Device* device;  // must be non-null when `memory` is null
  PJRT_Memory* memory;
  PJRT_Buffer_MemoryLayout* device_layout;
  PJRT_Event* done_with_host_buffer;  // out, caller awaits and destroys
  PJRT_Buffer* buffer;                // out, caller destroys
};

// ---- devices ------------------------------------------------------------------------------
struct PJRT_Device_GetDescription_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Device* device;
  PJRT_DeviceDescription* device_description;  // out, owned by the device
};
struct PJRT_DeviceDescription_Id_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_DeviceDescription* device_description;
  int id;  // out
};
struct PJRT_DeviceDescription_Kind_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_DeviceDescription* device_description;
  const char* device_kind;  // out, owned by the description
  size_t device_kind_size;  // out
};

// ---- executables --------------------------------------------------------------------------
struct PJRT_Executable_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Executable* executable;
};
struct PJRT_LoadedExecutable_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_LoadedExecutable* executable;
};
struct PJRT_LoadedExecutable_GetExecutable_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_LoadedExecutable* loaded_executable;
  PJRT_Executable* executable;  // out, caller destroys with Executable_Destroy
};
struct PJRT_Executable_NumOutputs_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Executable* executable;
  size_t num_outputs;  // out
};
struct PJRT_Executable_Serialize_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const PJRT_Executable* executable;
  const char* serialized_bytes;  // out, lives as long as `serialized_executable`
  size_t serialized_bytes_size;  // out
  PJRT_SerializedExecutable* serialized_executable;                        // out
  void (*serialized_executable_deleter)(PJRT_SerializedExecutable* exec);  // out, call once
};
struct PJRT_Executable_DeserializeAndLoad_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
  const char* serialized_executable;
  size_t serialized_executable_size;
  PJRT_LoadedExecutable* loaded_executable;  // out, caller destroys
  const char* overridden_serialized_compile_options;  // null: the executable's own options
  size_t overridden_serialized_compile_options_size;
};
struct PJRT_ExecuteOptions {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  void* send_callbacks;
  void* recv_callbacks;
  size_t num_send_ops;
  size_t num_recv_ops;
  int launch_id;
  const int64_t* non_donatable_input_indices;
  size_t num_non_donatable_input_indices;
  PJRT_ExecuteContext* context;
  const char* call_location;
  size_t num_tasks;
  int* task_ids;
  int64_t* incarnation_ids;
  void* multi_slice_config;
  bool use_major_to_minor_data_layout_for_callbacks;
  void* hlo_output_callbacks;
  size_t num_hlo_output_callbacks;
};
struct PJRT_LoadedExecutable_Execute_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_LoadedExecutable* executable;
  PJRT_ExecuteOptions* options;
  PJRT_Buffer* const* const* argument_lists;  // [num_devices][num_args]
  size_t num_devices;
  size_t num_args;
  PJRT_Buffer** const* output_lists;  // [num_devices][num_outputs], filled by the plugin
  PJRT_Event** device_complete_events;  // [num_devices] or null
  PJRT_Device* execute_device;          // null: the compile-time assignment
};

// ---- buffers ------------------------------------------------------------------------------
struct PJRT_Buffer_Destroy_Args {  // also Buffer_Delete
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* buffer;
};
struct PJRT_Buffer_ElementType_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* buffer;
  PJRT_Buffer_Type type;  // out
};
struct PJRT_Buffer_Dimensions_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* buffer;
  const int64_t* dims;  // out, owned by the buffer
  size_t num_dims;      // out
};
struct PJRT_Buffer_OnDeviceSizeInBytes_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* buffer;
  size_t on_device_size_in_bytes;  // out
};
struct PJRT_Buffer_Device_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* buffer;
  PJRT_Device* device;  // out, owned by the client
};
struct PJRT_Buffer_CopyToDevice_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* buffer;
  PJRT_Device* dst_device;
  PJRT_Buffer* dst_buffer;  // out, caller destroys
};
struct PJRT_Buffer_ToHostBuffer_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* src;
  PJRT_Buffer_MemoryLayout* host_layout;  // null: the buffer's own layout
  void* dst;                              // null: query `dst_size`
  size_t dst_size;                        // in/out
  PJRT_Event* event;                      // out, caller awaits and destroys
};
struct PJRT_Buffer_ReadyEvent_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* buffer;
  PJRT_Event* event;  // out, caller destroys
};

/// Slot indices in the PJRT_Api function table (offset = 40 + 8·slot). Only the slots torchtpu
/// names are listed; the table itself has `kNumSlots` entries at minor 104.
enum class Slot : int {
  Error_Destroy = 0,
  Error_Message = 1,
  Error_GetCode = 2,
  Plugin_Initialize = 3,
  Plugin_Attributes = 4,
  Event_Destroy = 5,
  Event_IsReady = 6,
  Event_Error = 7,
  Event_Await = 8,
  Event_OnReady = 9,
  Client_Create = 10,
  Client_Destroy = 11,
  Client_PlatformName = 12,
  Client_ProcessIndex = 13,
  Client_PlatformVersion = 14,
  Client_Devices = 15,
  Client_AddressableDevices = 16,
  Client_Compile = 20,
  Client_BufferFromHostBuffer = 22,
  DeviceDescription_Id = 23,
  DeviceDescription_Kind = 26,
  Device_GetDescription = 29,
  Executable_Destroy = 40,
  Executable_Name = 41,
  Executable_NumOutputs = 44,
  Executable_Serialize = 49,
  LoadedExecutable_Destroy = 50,
  LoadedExecutable_GetExecutable = 51,
  LoadedExecutable_Execute = 55,
  Executable_DeserializeAndLoad = 56,
  Buffer_Destroy = 58,
  Buffer_ElementType = 59,
  Buffer_Dimensions = 60,
  Buffer_OnDeviceSizeInBytes = 64,
  Buffer_Device = 65,
  Buffer_Delete = 67,
  Buffer_CopyToDevice = 69,
  Buffer_ToHostBuffer = 70,
  Buffer_ReadyEvent = 72,
};
inline constexpr int kNumSlots = 135;  // at minor 104

/// Generic function-pointer type stored in the table; cast to the typed form before calling.
using PJRT_AnyFn = void (*)();

/// The table a plugin's `GetPjrtApi` returns. Check `struct_size` before reading a slot:
/// slot k exists iff struct_size >= 40 + 8·(k+1); a present slot may still be null.
struct PJRT_Api {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Api_Version pjrt_api_version;
  PJRT_AnyFn slots[kNumSlots];
};

/// Byte size a plugin's table needs for `slot` to exist.
constexpr size_t api_size_for(Slot slot) {
  return offsetof(PJRT_Api, slots) + sizeof(PJRT_AnyFn) * (static_cast<size_t>(slot) + 1);
}

/// Signature of the plugin entry point.
using GetPjrtApiFn = const PJRT_Api* (*)();

// Layout pins (PJRT-NOTES.md §1–§3). A failure here means the declarations drifted.
static_assert(sizeof(PJRT_Api_Version) == 24);
static_assert(offsetof(PJRT_Api, slots) == 40);
static_assert(sizeof(PJRT_Api) == 1120);
static_assert(sizeof(PJRT_NamedValue) == 56 && offsetof(PJRT_NamedValue, value_size) == 48);
static_assert(TORCHTPU_PJRT_STRUCT_SIZE(PJRT_Error_GetCode_Args, code) == 28);
static_assert(sizeof(PJRT_Client_Create_Args) == 88 && offsetof(PJRT_Client_Create_Args, client) == 64);
static_assert(sizeof(PJRT_Client_Compile_Args) == 56);
static_assert(sizeof(PJRT_Client_BufferFromHostBuffer_Args) == 120);
static_assert(offsetof(PJRT_Client_BufferFromHostBuffer_Args, done_with_host_buffer) == 104);
static_assert(sizeof(PJRT_ExecuteOptions) == 144 && offsetof(PJRT_ExecuteOptions, multi_slice_config) == 112);
static_assert(sizeof(PJRT_LoadedExecutable_Execute_Args) == 80);
static_assert(sizeof(PJRT_Buffer_ToHostBuffer_Args) == 56);
static_assert(sizeof(PJRT_Executable_Serialize_Args) == 56);
static_assert(sizeof(PJRT_Executable_DeserializeAndLoad_Args) == 64);  // XLA checks 64 at 0.81
static_assert(TORCHTPU_PJRT_STRUCT_SIZE(PJRT_Buffer_ElementType_Args, type) == 28);
static_assert(TORCHTPU_PJRT_STRUCT_SIZE(PJRT_DeviceDescription_Id_Args, id) == 28);
static_assert(api_size_for(Slot::Buffer_ToHostBuffer) == 608);

}  // namespace torchtpu::pjrt::capi
