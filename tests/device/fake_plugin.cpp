// tests/device/fake_plugin.cpp — stand-in PJRT plugins for the client's error paths.
//
// Without FAKE_PJRT_FULL: a plugin that only reports an API version
// (FAKE_PJRT_MAJOR.FAKE_PJRT_MINOR), to test torchtpu's version check.
//
// With FAKE_PJRT_FULL: a minimal working plugin (one device, buffers without data that read as
// zeros, programs that return one f32[1] buffer; with FAKE_PJRT_TABLE_SLOTS=N its function
// table ends after N slots, like an older plugin's) whose misbehaviour tests switch on through the exported
// `fake_pjrt_set(key, value)`, and whose counters they read with `fake_pjrt_get(key)`:
//   switches: fail_create, fail_platform_name, fail_dims, null_client, null_buffer, null_executable,
//             null_output, no_event_await, no_event_is_ready, ready_after (polls before an
//             event is ready)
//   counters: live_clients, live_buffers, live_events, events_completed (awaited, or polled
//             until ready), last_options_size (PJRT_ExecuteOptions.struct_size of the last Execute)
#include <torchtpu/device/pjrt/c_api.hpp>  // PJRT_Api, argument structs, Slot

#ifdef FAKE_PJRT_FULL
#include <cstddef>  // offsetof
#include <cstring>  // std::strcmp, std::memset
#include <map>      // std::map
#include <string>   // std::string
#include <vector>   // std::vector

namespace torchtpu::pjrt::capi {
struct PJRT_Error {
  int code;
  std::string message;
};
struct PJRT_Event {
  long polls = 0;
};
struct PJRT_DeviceDescription {
  int id = 0;
};
struct PJRT_Device {
  PJRT_DeviceDescription desc;
};
struct PJRT_Client {
  PJRT_Device device;
  PJRT_Device* devices[1] = {&device};
};
struct PJRT_Buffer {
  PJRT_Buffer_Type type = PJRT_Buffer_Type_F32;
  std::vector<int64_t> dims;
};
struct PJRT_Executable {};
struct PJRT_LoadedExecutable {};
}  // namespace torchtpu::pjrt::capi
#endif

using namespace torchtpu::pjrt::capi;

#ifndef FAKE_PJRT_FULL

extern "C" __attribute__((visibility("default"))) const PJRT_Api* GetPjrtApi() {
  static PJRT_Api api = [] {
    PJRT_Api a{};
    a.struct_size = sizeof(PJRT_Api);
    a.pjrt_api_version.struct_size = sizeof(a.pjrt_api_version);
    a.pjrt_api_version.major_version = FAKE_PJRT_MAJOR;
    a.pjrt_api_version.minor_version = FAKE_PJRT_MINOR;
    return a;
  }();
  return &api;
}

#else

namespace {

std::map<std::string, long>& state() {
  static std::map<std::string, long> s;
  return s;
}
long get(const char* k) { return state()[k]; }
void add(const char* k, long d) { state()[k] += d; }

PJRT_Error* fail(const std::string& msg) { return new PJRT_Error{PJRT_Error_Code_INTERNAL, "fake: " + msg}; }
PJRT_Event* new_event() {
  add("live_events", 1);
  return new PJRT_Event{};
}

void error_destroy(PJRT_Error_Destroy_Args* a) { delete a->error; }
void error_message(PJRT_Error_Message_Args* a) {
  a->message = a->error->message.data();
  a->message_size = a->error->message.size();
}
PJRT_Error* error_get_code(PJRT_Error_GetCode_Args* a) {
  a->code = static_cast<PJRT_Error_Code>(a->error->code);
  return nullptr;
}
PJRT_Error* plugin_initialize(PJRT_Plugin_Initialize_Args*) { return nullptr; }

PJRT_Error* event_destroy(PJRT_Event_Destroy_Args* a) {
  if (a->event) add("live_events", -1);
  delete a->event;
  return nullptr;
}
PJRT_Error* event_await(PJRT_Event_Await_Args*) {
  add("events_completed", 1);
  return nullptr;
}
PJRT_Error* event_is_ready(PJRT_Event_IsReady_Args* a) {
  a->is_ready = ++a->event->polls > get("ready_after");
  if (a->is_ready) add("events_completed", 1);
  return nullptr;
}
PJRT_Error* event_error(PJRT_Event_Error_Args*) { return nullptr; }

PJRT_Error* client_create(PJRT_Client_Create_Args* a) {
  if (get("fail_create")) return new PJRT_Error{PJRT_Error_Code_FAILED_PRECONDITION, "fake: no fake device attached"};
  if (get("null_client")) {
    a->client = nullptr;
    return nullptr;
  }
  a->client = new PJRT_Client();
  add("live_clients", 1);
  return nullptr;
}
PJRT_Error* client_destroy(PJRT_Client_Destroy_Args* a) {
  if (a->client) add("live_clients", -1);
  delete a->client;
  return nullptr;
}
PJRT_Error* client_platform_name(PJRT_Client_PlatformName_Args* a) {
  if (get("fail_platform_name")) return fail("PlatformName fails");
  a->platform_name = "fake";
  a->platform_name_size = 4;
  return nullptr;
}
PJRT_Error* client_devices(PJRT_Client_Devices_Args* a) {
  a->devices = a->client->devices;
  a->num_devices = 1;
  return nullptr;
}
PJRT_Error* device_get_description(PJRT_Device_GetDescription_Args* a) {
  a->device_description = &a->device->desc;
  return nullptr;
}
PJRT_Error* description_id(PJRT_DeviceDescription_Id_Args* a) {
  a->id = a->device_description->id;
  return nullptr;
}
PJRT_Error* description_kind(PJRT_DeviceDescription_Kind_Args* a) {
  a->device_kind = "fake device";
  a->device_kind_size = 11;
  return nullptr;
}

PJRT_Error* buffer_from_host(PJRT_Client_BufferFromHostBuffer_Args* a) {
  a->done_with_host_buffer = new_event();
  if (get("null_buffer")) {
    a->buffer = nullptr;
    return nullptr;
  }
  auto* b = new PJRT_Buffer();
  b->type = a->type;
  b->dims.assign(a->dims, a->dims + a->num_dims);
  add("live_buffers", 1);
  a->buffer = b;
  return nullptr;
}
PJRT_Error* buffer_destroy(PJRT_Buffer_Destroy_Args* a) {
  if (a->buffer) add("live_buffers", -1);
  delete a->buffer;
  return nullptr;
}
PJRT_Error* buffer_element_type(PJRT_Buffer_ElementType_Args* a) {
  a->type = a->buffer->type;
  return nullptr;
}
PJRT_Error* buffer_dimensions(PJRT_Buffer_Dimensions_Args* a) {
  if (get("fail_dims")) return fail("Dimensions fails");
  a->dims = a->buffer->dims.data();
  a->num_dims = a->buffer->dims.size();
  return nullptr;
}

PJRT_Error* buffer_to_host(PJRT_Buffer_ToHostBuffer_Args* a) {
  size_t n = 4;  // f32 elements (the fake's buffers hold no data: they read as zeros)
  for (int64_t d : a->src->dims) n *= static_cast<size_t>(d);
  if (a->dst == nullptr) {
    a->dst_size = n;
    return nullptr;
  }
  if (a->dst_size < n) return fail("ToHostBuffer: destination too small");
  std::memset(a->dst, 0, n);
  a->event = new_event();
  return nullptr;
}

PJRT_Error* client_compile(PJRT_Client_Compile_Args* a) {
  a->executable = get("null_executable") ? nullptr : new PJRT_LoadedExecutable();
  return nullptr;
}
PJRT_Error* loaded_destroy(PJRT_LoadedExecutable_Destroy_Args* a) {
  delete a->executable;
  return nullptr;
}
PJRT_Error* loaded_get_executable(PJRT_LoadedExecutable_GetExecutable_Args* a) {
  a->executable = new PJRT_Executable();
  return nullptr;
}
PJRT_Error* executable_destroy(PJRT_Executable_Destroy_Args* a) {
  delete a->executable;
  return nullptr;
}
PJRT_Error* executable_num_outputs(PJRT_Executable_NumOutputs_Args* a) {
  a->num_outputs = 1;
  return nullptr;
}
PJRT_Error* execute(PJRT_LoadedExecutable_Execute_Args* a) {
  state()["last_options_size"] = a->options ? static_cast<long>(a->options->struct_size) : -1;
  if (get("null_output")) {
    a->output_lists[0][0] = nullptr;
  } else {
    auto* b = new PJRT_Buffer();
    b->dims = {1};
    add("live_buffers", 1);
    a->output_lists[0][0] = b;
  }
  if (a->device_complete_events) a->device_complete_events[0] = new_event();
  return nullptr;
}

template <class F>
void put(PJRT_Api& api, Slot s, F* f) {
  api.slots[static_cast<int>(s)] = reinterpret_cast<PJRT_AnyFn>(f);
}

PJRT_Api& api() {
  static PJRT_Api a = [] {
    PJRT_Api x{};
#ifdef FAKE_PJRT_TABLE_SLOTS
    // An older plugin: its table ends after FAKE_PJRT_TABLE_SLOTS functions.
    x.struct_size = offsetof(PJRT_Api, slots) + sizeof(PJRT_AnyFn) * FAKE_PJRT_TABLE_SLOTS;
#else
    x.struct_size = sizeof(PJRT_Api);
#endif
    x.pjrt_api_version.struct_size = sizeof(x.pjrt_api_version);
    x.pjrt_api_version.major_version = FAKE_PJRT_MAJOR;
    x.pjrt_api_version.minor_version = FAKE_PJRT_MINOR;
    put(x, Slot::Error_Destroy, &error_destroy);
    put(x, Slot::Error_Message, &error_message);
    put(x, Slot::Error_GetCode, &error_get_code);
    put(x, Slot::Plugin_Initialize, &plugin_initialize);
    put(x, Slot::Event_Destroy, &event_destroy);
    put(x, Slot::Event_Await, &event_await);
    put(x, Slot::Event_IsReady, &event_is_ready);
    put(x, Slot::Event_Error, &event_error);
    put(x, Slot::Client_Create, &client_create);
    put(x, Slot::Client_Destroy, &client_destroy);
    put(x, Slot::Client_PlatformName, &client_platform_name);
    put(x, Slot::Client_AddressableDevices, &client_devices);
    put(x, Slot::Device_GetDescription, &device_get_description);
    put(x, Slot::DeviceDescription_Id, &description_id);
    put(x, Slot::DeviceDescription_Kind, &description_kind);
    put(x, Slot::Client_BufferFromHostBuffer, &buffer_from_host);
    put(x, Slot::Buffer_Destroy, &buffer_destroy);
    put(x, Slot::Buffer_ElementType, &buffer_element_type);
    put(x, Slot::Buffer_Dimensions, &buffer_dimensions);
    put(x, Slot::Buffer_ToHostBuffer, &buffer_to_host);
    put(x, Slot::Client_Compile, &client_compile);
    put(x, Slot::LoadedExecutable_Destroy, &loaded_destroy);
    put(x, Slot::LoadedExecutable_GetExecutable, &loaded_get_executable);
    put(x, Slot::Executable_Destroy, &executable_destroy);
    put(x, Slot::Executable_NumOutputs, &executable_num_outputs);
    put(x, Slot::LoadedExecutable_Execute, &execute);
    return x;
  }();
  return a;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const PJRT_Api* GetPjrtApi() { return &api(); }

/// Sets a switch (see the file comment); "no_event_await" / "no_event_is_ready" remove those
/// functions from the table.
extern "C" __attribute__((visibility("default"))) void fake_pjrt_set(const char* key, long value) {
  state()[key] = value;
  if (std::strcmp(key, "no_event_await") == 0)
    api().slots[static_cast<int>(Slot::Event_Await)] = value ? nullptr : reinterpret_cast<PJRT_AnyFn>(&event_await);
  if (std::strcmp(key, "no_event_is_ready") == 0)
    api().slots[static_cast<int>(Slot::Event_IsReady)] =
        value ? nullptr : reinterpret_cast<PJRT_AnyFn>(&event_is_ready);
}
extern "C" __attribute__((visibility("default"))) long fake_pjrt_get(const char* key) { return get(key); }

#endif
