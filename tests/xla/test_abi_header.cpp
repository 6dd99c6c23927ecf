// tests/xla/test_abi_header.cpp — torchtpu's own PJRT declarations (device/pjrt/c_api.hpp,
// written for minor 104) against the PJRT header XLA ships with its CPU plugin (xla-cpu-pjrt
// 0.0.1, minor 81), compiled side by side (issue 11 item 7): every field both declare sits at
// the same offset with the same size, every struct torchtpu passes covers at least the
// header's `*_STRUCT_SIZE` (so an 0.81 plugin never sees a short struct), and each slot
// torchtpu names is the header's function of that name. The field lists were generated from
// the two files (a field the 0.81 header lacks, added later, is left out).
#include <catch2/catch.hpp>  // TEST_CASE, CHECK

#include <cstddef>  // offsetof

#include <torchtpu/device/pjrt/c_api.hpp>  // torchtpu::pjrt::capi
#include <pjrt_c_api.h>                    // the header shipped with xla_cpu_pjrt (global C names)

namespace capi = torchtpu::pjrt::capi;

#define SAME_FIELD(S, f)                                                                  \
  do {                                                                                    \
    INFO(#S "." #f);                                                                      \
    CHECK(offsetof(capi::S, f) == offsetof(::S, f));                                      \
    CHECK(sizeof(capi::S::f) == sizeof(::S::f));                                          \
  } while (0)
#define COVERS(S, last)                                                                   \
  do {                                                                                    \
    INFO(#S " through " #last " vs " #S "_STRUCT_SIZE");                                 \
    CHECK(TORCHTPU_PJRT_STRUCT_SIZE(capi::S, last) >= ::S##_STRUCT_SIZE);                 \
  } while (0)
#define SAME_SLOT(name)                                                                   \
  do {                                                                                    \
    INFO("slot PJRT_" #name);                                                             \
    CHECK(capi::api_size_for(capi::Slot::name) - sizeof(void*) == offsetof(::PJRT_Api, PJRT_##name)); \
  } while (0)

TEST_CASE("abi: argument structs match XLA's 0.81 header field by field", "[pjrt][abi][xla]") {
  CHECK(PJRT_API_MAJOR == capi::kApiMajor);
  CHECK(PJRT_API_MINOR >= capi::kMinSupportedMinor);
  CHECK(PJRT_API_MINOR <= capi::kApiMinor);
  CHECK(offsetof(::PJRT_Api, pjrt_api_version) == offsetof(capi::PJRT_Api, pjrt_api_version));
  CHECK(sizeof(::PJRT_Api_Version) == sizeof(capi::PJRT_Api_Version));
  CHECK(offsetof(::PJRT_Api_Version, minor_version) == offsetof(capi::PJRT_Api_Version, minor_version));
  // PJRT_NamedValue
  SAME_FIELD(PJRT_NamedValue, struct_size);
  SAME_FIELD(PJRT_NamedValue, extension_start);
  SAME_FIELD(PJRT_NamedValue, name);
  SAME_FIELD(PJRT_NamedValue, name_size);
  SAME_FIELD(PJRT_NamedValue, type);
  SAME_FIELD(PJRT_NamedValue, string_value);
  SAME_FIELD(PJRT_NamedValue, int64_value);
  SAME_FIELD(PJRT_NamedValue, int64_array_value);
  SAME_FIELD(PJRT_NamedValue, float_value);
  SAME_FIELD(PJRT_NamedValue, bool_value);
  SAME_FIELD(PJRT_NamedValue, value_size);
  COVERS(PJRT_NamedValue, value_size);
  // PJRT_Error_Destroy_Args
  SAME_FIELD(PJRT_Error_Destroy_Args, struct_size);
  SAME_FIELD(PJRT_Error_Destroy_Args, extension_start);
  SAME_FIELD(PJRT_Error_Destroy_Args, error);
  COVERS(PJRT_Error_Destroy_Args, error);
  // PJRT_Error_Message_Args
  SAME_FIELD(PJRT_Error_Message_Args, struct_size);
  SAME_FIELD(PJRT_Error_Message_Args, extension_start);
  SAME_FIELD(PJRT_Error_Message_Args, error);
  SAME_FIELD(PJRT_Error_Message_Args, message);
  SAME_FIELD(PJRT_Error_Message_Args, message_size);
  COVERS(PJRT_Error_Message_Args, message_size);
  // PJRT_Error_GetCode_Args
  SAME_FIELD(PJRT_Error_GetCode_Args, struct_size);
  SAME_FIELD(PJRT_Error_GetCode_Args, extension_start);
  SAME_FIELD(PJRT_Error_GetCode_Args, error);
  SAME_FIELD(PJRT_Error_GetCode_Args, code);
  COVERS(PJRT_Error_GetCode_Args, code);
  // PJRT_Plugin_Initialize_Args
  SAME_FIELD(PJRT_Plugin_Initialize_Args, struct_size);
  SAME_FIELD(PJRT_Plugin_Initialize_Args, extension_start);
  COVERS(PJRT_Plugin_Initialize_Args, extension_start);
  // PJRT_Plugin_Attributes_Args
  SAME_FIELD(PJRT_Plugin_Attributes_Args, struct_size);
  SAME_FIELD(PJRT_Plugin_Attributes_Args, extension_start);
  SAME_FIELD(PJRT_Plugin_Attributes_Args, attributes);
  SAME_FIELD(PJRT_Plugin_Attributes_Args, num_attributes);
  COVERS(PJRT_Plugin_Attributes_Args, num_attributes);
  // PJRT_Event_Destroy_Args
  SAME_FIELD(PJRT_Event_Destroy_Args, struct_size);
  SAME_FIELD(PJRT_Event_Destroy_Args, extension_start);
  SAME_FIELD(PJRT_Event_Destroy_Args, event);
  COVERS(PJRT_Event_Destroy_Args, event);
  // PJRT_Event_IsReady_Args
  SAME_FIELD(PJRT_Event_IsReady_Args, struct_size);
  SAME_FIELD(PJRT_Event_IsReady_Args, extension_start);
  SAME_FIELD(PJRT_Event_IsReady_Args, event);
  SAME_FIELD(PJRT_Event_IsReady_Args, is_ready);
  COVERS(PJRT_Event_IsReady_Args, is_ready);
  // PJRT_Event_OnReady_Args
  SAME_FIELD(PJRT_Event_OnReady_Args, struct_size);
  SAME_FIELD(PJRT_Event_OnReady_Args, extension_start);
  SAME_FIELD(PJRT_Event_OnReady_Args, event);
  SAME_FIELD(PJRT_Event_OnReady_Args, callback);
  SAME_FIELD(PJRT_Event_OnReady_Args, user_arg);
  COVERS(PJRT_Event_OnReady_Args, user_arg);
  // PJRT_Client_Create_Args
  SAME_FIELD(PJRT_Client_Create_Args, struct_size);
  SAME_FIELD(PJRT_Client_Create_Args, extension_start);
  SAME_FIELD(PJRT_Client_Create_Args, create_options);
  SAME_FIELD(PJRT_Client_Create_Args, num_options);
  SAME_FIELD(PJRT_Client_Create_Args, kv_get_callback);
  SAME_FIELD(PJRT_Client_Create_Args, kv_get_user_arg);
  SAME_FIELD(PJRT_Client_Create_Args, kv_put_callback);
  SAME_FIELD(PJRT_Client_Create_Args, kv_put_user_arg);
  SAME_FIELD(PJRT_Client_Create_Args, client);
  SAME_FIELD(PJRT_Client_Create_Args, kv_try_get_callback);
  SAME_FIELD(PJRT_Client_Create_Args, kv_try_get_user_arg);
  COVERS(PJRT_Client_Create_Args, kv_try_get_user_arg);
  // PJRT_Client_Destroy_Args
  SAME_FIELD(PJRT_Client_Destroy_Args, struct_size);
  SAME_FIELD(PJRT_Client_Destroy_Args, extension_start);
  SAME_FIELD(PJRT_Client_Destroy_Args, client);
  COVERS(PJRT_Client_Destroy_Args, client);
  // PJRT_Client_PlatformName_Args
  SAME_FIELD(PJRT_Client_PlatformName_Args, struct_size);
  SAME_FIELD(PJRT_Client_PlatformName_Args, extension_start);
  SAME_FIELD(PJRT_Client_PlatformName_Args, client);
  SAME_FIELD(PJRT_Client_PlatformName_Args, platform_name);
  SAME_FIELD(PJRT_Client_PlatformName_Args, platform_name_size);
  COVERS(PJRT_Client_PlatformName_Args, platform_name_size);
  // PJRT_Client_PlatformVersion_Args
  SAME_FIELD(PJRT_Client_PlatformVersion_Args, struct_size);
  SAME_FIELD(PJRT_Client_PlatformVersion_Args, extension_start);
  SAME_FIELD(PJRT_Client_PlatformVersion_Args, client);
  SAME_FIELD(PJRT_Client_PlatformVersion_Args, platform_version);
  SAME_FIELD(PJRT_Client_PlatformVersion_Args, platform_version_size);
  COVERS(PJRT_Client_PlatformVersion_Args, platform_version_size);
  // PJRT_Client_Devices_Args
  SAME_FIELD(PJRT_Client_Devices_Args, struct_size);
  SAME_FIELD(PJRT_Client_Devices_Args, extension_start);
  SAME_FIELD(PJRT_Client_Devices_Args, client);
  SAME_FIELD(PJRT_Client_Devices_Args, devices);
  SAME_FIELD(PJRT_Client_Devices_Args, num_devices);
  COVERS(PJRT_Client_Devices_Args, num_devices);
  // PJRT_Program
  SAME_FIELD(PJRT_Program, struct_size);
  SAME_FIELD(PJRT_Program, extension_start);
  SAME_FIELD(PJRT_Program, code);
  SAME_FIELD(PJRT_Program, code_size);
  SAME_FIELD(PJRT_Program, format);
  SAME_FIELD(PJRT_Program, format_size);
  COVERS(PJRT_Program, format_size);
  // PJRT_Client_Compile_Args
  SAME_FIELD(PJRT_Client_Compile_Args, struct_size);
  SAME_FIELD(PJRT_Client_Compile_Args, extension_start);
  SAME_FIELD(PJRT_Client_Compile_Args, client);
  SAME_FIELD(PJRT_Client_Compile_Args, program);
  SAME_FIELD(PJRT_Client_Compile_Args, compile_options);
  SAME_FIELD(PJRT_Client_Compile_Args, compile_options_size);
  SAME_FIELD(PJRT_Client_Compile_Args, executable);
  COVERS(PJRT_Client_Compile_Args, executable);
  // PJRT_Client_BufferFromHostBuffer_Args
  SAME_FIELD(PJRT_Client_BufferFromHostBuffer_Args, struct_size);
  SAME_FIELD(PJRT_Client_BufferFromHostBuffer_Args, extension_start);
  SAME_FIELD(PJRT_Client_BufferFromHostBuffer_Args, client);
  SAME_FIELD(PJRT_Client_BufferFromHostBuffer_Args, data);
  SAME_FIELD(PJRT_Client_BufferFromHostBuffer_Args, type);
  SAME_FIELD(PJRT_Client_BufferFromHostBuffer_Args, dims);
  SAME_FIELD(PJRT_Client_BufferFromHostBuffer_Args, num_dims);
  SAME_FIELD(PJRT_Client_BufferFromHostBuffer_Args, byte_strides);
  SAME_FIELD(PJRT_Client_BufferFromHostBuffer_Args, num_byte_strides);
  SAME_FIELD(PJRT_Client_BufferFromHostBuffer_Args, host_buffer_semantics);
  SAME_FIELD(PJRT_Client_BufferFromHostBuffer_Args, device);
  SAME_FIELD(PJRT_Client_BufferFromHostBuffer_Args, memory);
  SAME_FIELD(PJRT_Client_BufferFromHostBuffer_Args, device_layout);
  SAME_FIELD(PJRT_Client_BufferFromHostBuffer_Args, done_with_host_buffer);
  SAME_FIELD(PJRT_Client_BufferFromHostBuffer_Args, buffer);
  COVERS(PJRT_Client_BufferFromHostBuffer_Args, buffer);
  // PJRT_Device_GetDescription_Args
  SAME_FIELD(PJRT_Device_GetDescription_Args, struct_size);
  SAME_FIELD(PJRT_Device_GetDescription_Args, extension_start);
  SAME_FIELD(PJRT_Device_GetDescription_Args, device);
  SAME_FIELD(PJRT_Device_GetDescription_Args, device_description);
  COVERS(PJRT_Device_GetDescription_Args, device_description);
  // PJRT_DeviceDescription_Id_Args
  SAME_FIELD(PJRT_DeviceDescription_Id_Args, struct_size);
  SAME_FIELD(PJRT_DeviceDescription_Id_Args, extension_start);
  SAME_FIELD(PJRT_DeviceDescription_Id_Args, device_description);
  SAME_FIELD(PJRT_DeviceDescription_Id_Args, id);
  COVERS(PJRT_DeviceDescription_Id_Args, id);
  // PJRT_DeviceDescription_Kind_Args
  SAME_FIELD(PJRT_DeviceDescription_Kind_Args, struct_size);
  SAME_FIELD(PJRT_DeviceDescription_Kind_Args, extension_start);
  SAME_FIELD(PJRT_DeviceDescription_Kind_Args, device_description);
  SAME_FIELD(PJRT_DeviceDescription_Kind_Args, device_kind);
  SAME_FIELD(PJRT_DeviceDescription_Kind_Args, device_kind_size);
  COVERS(PJRT_DeviceDescription_Kind_Args, device_kind_size);
  // PJRT_Executable_Destroy_Args
  SAME_FIELD(PJRT_Executable_Destroy_Args, struct_size);
  SAME_FIELD(PJRT_Executable_Destroy_Args, extension_start);
  SAME_FIELD(PJRT_Executable_Destroy_Args, executable);
  COVERS(PJRT_Executable_Destroy_Args, executable);
  // PJRT_LoadedExecutable_Destroy_Args
  SAME_FIELD(PJRT_LoadedExecutable_Destroy_Args, struct_size);
  SAME_FIELD(PJRT_LoadedExecutable_Destroy_Args, extension_start);
  SAME_FIELD(PJRT_LoadedExecutable_Destroy_Args, executable);
  COVERS(PJRT_LoadedExecutable_Destroy_Args, executable);
  // PJRT_LoadedExecutable_GetExecutable_Args
  SAME_FIELD(PJRT_LoadedExecutable_GetExecutable_Args, struct_size);
  SAME_FIELD(PJRT_LoadedExecutable_GetExecutable_Args, extension_start);
  SAME_FIELD(PJRT_LoadedExecutable_GetExecutable_Args, loaded_executable);
  SAME_FIELD(PJRT_LoadedExecutable_GetExecutable_Args, executable);
  COVERS(PJRT_LoadedExecutable_GetExecutable_Args, executable);
  // PJRT_Executable_NumOutputs_Args
  SAME_FIELD(PJRT_Executable_NumOutputs_Args, struct_size);
  SAME_FIELD(PJRT_Executable_NumOutputs_Args, extension_start);
  SAME_FIELD(PJRT_Executable_NumOutputs_Args, executable);
  SAME_FIELD(PJRT_Executable_NumOutputs_Args, num_outputs);
  COVERS(PJRT_Executable_NumOutputs_Args, num_outputs);
  // PJRT_Executable_Serialize_Args
  SAME_FIELD(PJRT_Executable_Serialize_Args, struct_size);
  SAME_FIELD(PJRT_Executable_Serialize_Args, extension_start);
  SAME_FIELD(PJRT_Executable_Serialize_Args, executable);
  SAME_FIELD(PJRT_Executable_Serialize_Args, serialized_bytes);
  SAME_FIELD(PJRT_Executable_Serialize_Args, serialized_bytes_size);
  SAME_FIELD(PJRT_Executable_Serialize_Args, serialized_executable);
  COVERS(PJRT_Executable_Serialize_Args, serialized_executable_deleter);
  // PJRT_Executable_DeserializeAndLoad_Args
  SAME_FIELD(PJRT_Executable_DeserializeAndLoad_Args, struct_size);
  SAME_FIELD(PJRT_Executable_DeserializeAndLoad_Args, extension_start);
  SAME_FIELD(PJRT_Executable_DeserializeAndLoad_Args, client);
  SAME_FIELD(PJRT_Executable_DeserializeAndLoad_Args, serialized_executable);
  SAME_FIELD(PJRT_Executable_DeserializeAndLoad_Args, serialized_executable_size);
  SAME_FIELD(PJRT_Executable_DeserializeAndLoad_Args, loaded_executable);
  SAME_FIELD(PJRT_Executable_DeserializeAndLoad_Args, overridden_serialized_compile_options);
  SAME_FIELD(PJRT_Executable_DeserializeAndLoad_Args, overridden_serialized_compile_options_size);
  COVERS(PJRT_Executable_DeserializeAndLoad_Args, overridden_serialized_compile_options_size);
  // PJRT_ExecuteOptions
  SAME_FIELD(PJRT_ExecuteOptions, struct_size);
  SAME_FIELD(PJRT_ExecuteOptions, extension_start);
  SAME_FIELD(PJRT_ExecuteOptions, send_callbacks);
  SAME_FIELD(PJRT_ExecuteOptions, recv_callbacks);
  SAME_FIELD(PJRT_ExecuteOptions, num_send_ops);
  SAME_FIELD(PJRT_ExecuteOptions, num_recv_ops);
  SAME_FIELD(PJRT_ExecuteOptions, launch_id);
  SAME_FIELD(PJRT_ExecuteOptions, non_donatable_input_indices);
  SAME_FIELD(PJRT_ExecuteOptions, num_non_donatable_input_indices);
  SAME_FIELD(PJRT_ExecuteOptions, context);
  SAME_FIELD(PJRT_ExecuteOptions, call_location);
  SAME_FIELD(PJRT_ExecuteOptions, num_tasks);
  SAME_FIELD(PJRT_ExecuteOptions, task_ids);
  SAME_FIELD(PJRT_ExecuteOptions, incarnation_ids);
  COVERS(PJRT_ExecuteOptions, num_hlo_output_callbacks);
  // PJRT_LoadedExecutable_Execute_Args
  SAME_FIELD(PJRT_LoadedExecutable_Execute_Args, struct_size);
  SAME_FIELD(PJRT_LoadedExecutable_Execute_Args, extension_start);
  SAME_FIELD(PJRT_LoadedExecutable_Execute_Args, executable);
  SAME_FIELD(PJRT_LoadedExecutable_Execute_Args, options);
  SAME_FIELD(PJRT_LoadedExecutable_Execute_Args, argument_lists);
  SAME_FIELD(PJRT_LoadedExecutable_Execute_Args, num_devices);
  SAME_FIELD(PJRT_LoadedExecutable_Execute_Args, num_args);
  SAME_FIELD(PJRT_LoadedExecutable_Execute_Args, output_lists);
  SAME_FIELD(PJRT_LoadedExecutable_Execute_Args, device_complete_events);
  SAME_FIELD(PJRT_LoadedExecutable_Execute_Args, execute_device);
  COVERS(PJRT_LoadedExecutable_Execute_Args, execute_device);
  // PJRT_Buffer_Destroy_Args
  SAME_FIELD(PJRT_Buffer_Destroy_Args, struct_size);
  SAME_FIELD(PJRT_Buffer_Destroy_Args, extension_start);
  SAME_FIELD(PJRT_Buffer_Destroy_Args, buffer);
  COVERS(PJRT_Buffer_Destroy_Args, buffer);
  // PJRT_Buffer_ElementType_Args
  SAME_FIELD(PJRT_Buffer_ElementType_Args, struct_size);
  SAME_FIELD(PJRT_Buffer_ElementType_Args, extension_start);
  SAME_FIELD(PJRT_Buffer_ElementType_Args, buffer);
  SAME_FIELD(PJRT_Buffer_ElementType_Args, type);
  COVERS(PJRT_Buffer_ElementType_Args, type);
  // PJRT_Buffer_Dimensions_Args
  SAME_FIELD(PJRT_Buffer_Dimensions_Args, struct_size);
  SAME_FIELD(PJRT_Buffer_Dimensions_Args, extension_start);
  SAME_FIELD(PJRT_Buffer_Dimensions_Args, buffer);
  SAME_FIELD(PJRT_Buffer_Dimensions_Args, dims);
  SAME_FIELD(PJRT_Buffer_Dimensions_Args, num_dims);
  COVERS(PJRT_Buffer_Dimensions_Args, num_dims);
  // PJRT_Buffer_OnDeviceSizeInBytes_Args
  SAME_FIELD(PJRT_Buffer_OnDeviceSizeInBytes_Args, struct_size);
  SAME_FIELD(PJRT_Buffer_OnDeviceSizeInBytes_Args, extension_start);
  SAME_FIELD(PJRT_Buffer_OnDeviceSizeInBytes_Args, buffer);
  SAME_FIELD(PJRT_Buffer_OnDeviceSizeInBytes_Args, on_device_size_in_bytes);
  COVERS(PJRT_Buffer_OnDeviceSizeInBytes_Args, on_device_size_in_bytes);
  // PJRT_Buffer_Device_Args
  SAME_FIELD(PJRT_Buffer_Device_Args, struct_size);
  SAME_FIELD(PJRT_Buffer_Device_Args, extension_start);
  SAME_FIELD(PJRT_Buffer_Device_Args, buffer);
  SAME_FIELD(PJRT_Buffer_Device_Args, device);
  COVERS(PJRT_Buffer_Device_Args, device);
  // PJRT_Buffer_CopyToDevice_Args
  SAME_FIELD(PJRT_Buffer_CopyToDevice_Args, struct_size);
  SAME_FIELD(PJRT_Buffer_CopyToDevice_Args, extension_start);
  SAME_FIELD(PJRT_Buffer_CopyToDevice_Args, buffer);
  SAME_FIELD(PJRT_Buffer_CopyToDevice_Args, dst_device);
  SAME_FIELD(PJRT_Buffer_CopyToDevice_Args, dst_buffer);
  COVERS(PJRT_Buffer_CopyToDevice_Args, dst_buffer);
  // PJRT_Buffer_ToHostBuffer_Args
  SAME_FIELD(PJRT_Buffer_ToHostBuffer_Args, struct_size);
  SAME_FIELD(PJRT_Buffer_ToHostBuffer_Args, extension_start);
  SAME_FIELD(PJRT_Buffer_ToHostBuffer_Args, src);
  SAME_FIELD(PJRT_Buffer_ToHostBuffer_Args, host_layout);
  SAME_FIELD(PJRT_Buffer_ToHostBuffer_Args, dst);
  SAME_FIELD(PJRT_Buffer_ToHostBuffer_Args, dst_size);
  SAME_FIELD(PJRT_Buffer_ToHostBuffer_Args, event);
  COVERS(PJRT_Buffer_ToHostBuffer_Args, event);
  // PJRT_Buffer_ReadyEvent_Args
  SAME_FIELD(PJRT_Buffer_ReadyEvent_Args, struct_size);
  SAME_FIELD(PJRT_Buffer_ReadyEvent_Args, extension_start);
  SAME_FIELD(PJRT_Buffer_ReadyEvent_Args, buffer);
  SAME_FIELD(PJRT_Buffer_ReadyEvent_Args, event);
  COVERS(PJRT_Buffer_ReadyEvent_Args, event);
}

TEST_CASE("abi: each slot torchtpu names is that function in XLA's 0.81 table", "[pjrt][abi][xla]") {
  SAME_SLOT(Error_Destroy);
  SAME_SLOT(Error_Message);
  SAME_SLOT(Error_GetCode);
  SAME_SLOT(Plugin_Initialize);
  SAME_SLOT(Plugin_Attributes);
  SAME_SLOT(Event_Destroy);
  SAME_SLOT(Event_IsReady);
  SAME_SLOT(Event_Error);
  SAME_SLOT(Event_Await);
  SAME_SLOT(Event_OnReady);
  SAME_SLOT(Client_Create);
  SAME_SLOT(Client_Destroy);
  SAME_SLOT(Client_PlatformName);
  SAME_SLOT(Client_ProcessIndex);
  SAME_SLOT(Client_PlatformVersion);
  SAME_SLOT(Client_Devices);
  SAME_SLOT(Client_AddressableDevices);
  SAME_SLOT(Client_Compile);
  SAME_SLOT(Client_BufferFromHostBuffer);
  SAME_SLOT(DeviceDescription_Id);
  SAME_SLOT(DeviceDescription_Kind);
  SAME_SLOT(Device_GetDescription);
  SAME_SLOT(Executable_Destroy);
  SAME_SLOT(Executable_Name);
  SAME_SLOT(Executable_NumOutputs);
  SAME_SLOT(Executable_Serialize);
  SAME_SLOT(LoadedExecutable_Destroy);
  SAME_SLOT(LoadedExecutable_GetExecutable);
  SAME_SLOT(LoadedExecutable_Execute);
  SAME_SLOT(Executable_DeserializeAndLoad);
  SAME_SLOT(Buffer_Destroy);
  SAME_SLOT(Buffer_ElementType);
  SAME_SLOT(Buffer_Dimensions);
  SAME_SLOT(Buffer_OnDeviceSizeInBytes);
  SAME_SLOT(Buffer_Device);
  SAME_SLOT(Buffer_Delete);
  SAME_SLOT(Buffer_CopyToDevice);
  SAME_SLOT(Buffer_ToHostBuffer);
  SAME_SLOT(Buffer_ReadyEvent);
  // torchtpu's table (minor 104) is longer than the 0.81 one, never shorter.
  CHECK(sizeof(capi::PJRT_Api) >= sizeof(::PJRT_Api));
}
