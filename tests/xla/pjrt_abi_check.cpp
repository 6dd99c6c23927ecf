// tests/xla/pjrt_abi_check.cpp — torchtpu's PJRT declarations against real plugin binaries
// (issue 11 item 7): for each plugin given, load it through `Plugin::load` and print its PJRT
// C API version, function table size, the slots torchtpu names (present / missing / null),
// its attributes, then create a client. On a CPU plugin the client runs one program end to end
// (compile, host-to-device, execute, device-to-host, serialize, deserialize, execute again),
// so the plugin checks the struct_size of every argument struct torchtpu passes. A plugin that
// refuses to create a client (libtpu without a TPU, XLA's CUDA plugin without a GPU) must give
// `DeviceUnavailable` naming the plugin, its version and PJRT's message.
//
// Usage: pjrt_abi_check [run:]PLUGIN.so...   Exit status 0 when every plugin either ran the
// program with the right result or refused with DeviceUnavailable (`run:`: must run it); 1
// otherwise (each failure printed).
// libtpu is loaded with TPU_SKIP_MDS_QUERY=1 and TPU_STDERR_LOG_LEVEL / TPU_MIN_LOG_LEVEL = 3
// unless they are set, so that it does not wait on the GCE metadata server or flood stderr.
#include <chrono>     // std::chrono::steady_clock
#include <cmath>      // std::tanh, std::fabs
#include <cstdio>     // std::printf
#include <cstdlib>    // setenv
#include <exception>  // std::exception
#include <string>     // std::string
#include <utility>    // std::pair
#include <vector>     // std::vector

#include <torchtpu/device/pjrt/client.hpp>  // Plugin, Client, Executable, Buffer
#include <torchtpu/device/stablehlo.hpp>    // stablehlo::Builder

namespace {

using namespace torchtpu;
using pjrt::capi::Slot;

// Every slot torchtpu names in c_api.hpp, with the PJRT function name.
const std::pair<Slot, const char*> kSlots[] = {
    {Slot::Error_Destroy, "PJRT_Error_Destroy"},
    {Slot::Error_Message, "PJRT_Error_Message"},
    {Slot::Error_GetCode, "PJRT_Error_GetCode"},
    {Slot::Plugin_Initialize, "PJRT_Plugin_Initialize"},
    {Slot::Plugin_Attributes, "PJRT_Plugin_Attributes"},
    {Slot::Event_Destroy, "PJRT_Event_Destroy"},
    {Slot::Event_IsReady, "PJRT_Event_IsReady"},
    {Slot::Event_Error, "PJRT_Event_Error"},
    {Slot::Event_Await, "PJRT_Event_Await"},
    {Slot::Event_OnReady, "PJRT_Event_OnReady"},
    {Slot::Client_Create, "PJRT_Client_Create"},
    {Slot::Client_Destroy, "PJRT_Client_Destroy"},
    {Slot::Client_PlatformName, "PJRT_Client_PlatformName"},
    {Slot::Client_ProcessIndex, "PJRT_Client_ProcessIndex"},
    {Slot::Client_PlatformVersion, "PJRT_Client_PlatformVersion"},
    {Slot::Client_Devices, "PJRT_Client_Devices"},
    {Slot::Client_AddressableDevices, "PJRT_Client_AddressableDevices"},
    {Slot::Client_Compile, "PJRT_Client_Compile"},
    {Slot::Client_BufferFromHostBuffer, "PJRT_Client_BufferFromHostBuffer"},
    {Slot::DeviceDescription_Id, "PJRT_DeviceDescription_Id"},
    {Slot::DeviceDescription_Kind, "PJRT_DeviceDescription_Kind"},
    {Slot::Device_GetDescription, "PJRT_Device_GetDescription"},
    {Slot::Executable_Destroy, "PJRT_Executable_Destroy"},
    {Slot::Executable_Name, "PJRT_Executable_Name"},
    {Slot::Executable_NumOutputs, "PJRT_Executable_NumOutputs"},
    {Slot::Executable_Serialize, "PJRT_Executable_Serialize"},
    {Slot::LoadedExecutable_Destroy, "PJRT_LoadedExecutable_Destroy"},
    {Slot::LoadedExecutable_GetExecutable, "PJRT_LoadedExecutable_GetExecutable"},
    {Slot::LoadedExecutable_Execute, "PJRT_LoadedExecutable_Execute"},
    {Slot::Executable_DeserializeAndLoad, "PJRT_Executable_DeserializeAndLoad"},
    {Slot::Buffer_Destroy, "PJRT_Buffer_Destroy"},
    {Slot::Buffer_ElementType, "PJRT_Buffer_ElementType"},
    {Slot::Buffer_Dimensions, "PJRT_Buffer_Dimensions"},
    {Slot::Buffer_OnDeviceSizeInBytes, "PJRT_Buffer_OnDeviceSizeInBytes"},
    {Slot::Buffer_Device, "PJRT_Buffer_Device"},
    {Slot::Buffer_Delete, "PJRT_Buffer_Delete"},
    {Slot::Buffer_CopyToDevice, "PJRT_Buffer_CopyToDevice"},
    {Slot::Buffer_ToHostBuffer, "PJRT_Buffer_ToHostBuffer"},
    {Slot::Buffer_ReadyEvent, "PJRT_Buffer_ReadyEvent"},
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// The device kind whose create options torchtpu would send to this plugin.
std::string kind_of(const std::string& path) {
  if (path.find("cuda") != std::string::npos) return "cuda";
  if (path.find("libtpu") != std::string::npos) return "tpu";
  return "cpu";
}

/// tanh(x + x) on f32[4] through compile, execute, serialize and deserialize; returns "" or
/// what went wrong.
std::string round_trip(const std::shared_ptr<pjrt::Client>& client) {
  stablehlo::Builder b;
  auto x = b.parameter(ScalarType::Float, {4});
  b.set_results({b.tanh(b.add(x, x))});
  const std::string text = b.str();
  auto exe = client->compile(text);
  const float in[4] = {0, 0.25f, 0.5f, 1};
  const int64_t dims[1] = {4};
  auto buf = client->buffer_from_host(in, ScalarType::Float, dims);
  auto check = [&](const pjrt::Executable& e, const char* what) -> std::string {
    auto out = e.execute({&buf});
    if (out.size() != 1) return std::string(what) + ": " + std::to_string(out.size()) + " outputs";
    float res[4];
    out[0].to_host(res, sizeof(res));
    for (int i = 0; i < 4; ++i)
      if (std::fabs(static_cast<double>(res[i]) - std::tanh(2.0 * static_cast<double>(in[i]))) > 1e-6)
        return std::string(what) + ": element " + std::to_string(i) + " is " + std::to_string(res[i]);
    return "";
  };
  if (std::string e = check(*exe, "compiled"); !e.empty()) return e;
  auto bytes = exe->serialize();
  if (!bytes) {
    std::printf("  serialize: not supported by the plugin\n");
    return "";
  }
  std::printf("  serialize: %zu bytes\n", bytes->size());
  auto back = client->deserialize(*bytes);
  return check(*back, "deserialized");
}

bool check_plugin(const std::string& path, bool must_run) {
  std::printf("== %s\n", path.c_str());
  const std::string kind = kind_of(path);
  if (kind == "tpu") {
    setenv("TPU_SKIP_MDS_QUERY", "1", 0);
    setenv("TPU_STDERR_LOG_LEVEL", "3", 0);
    setenv("TPU_MIN_LOG_LEVEL", "3", 0);
  }
  auto t0 = std::chrono::steady_clock::now();
  const pjrt::Plugin* plugin = nullptr;
  try {
    plugin = &pjrt::Plugin::load(path);
  } catch (const std::exception& e) {
    std::printf("  load FAILED after %.2f s: %s\n", seconds_since(t0), e.what());
    return false;
  }
  std::printf("  load (dlopen, GetPjrtApi, PJRT_Plugin_Initialize): %.2f s\n", seconds_since(t0));
  const auto* api = plugin->api();
  std::printf("  PJRT C API %d.%d (torchtpu declares %d.%d, accepts major %d with minor >= %d)\n", plugin->api_major(),
              plugin->api_minor(), pjrt::capi::kApiMajor, pjrt::capi::kApiMinor, pjrt::capi::kApiMajor,
              pjrt::capi::kMinSupportedMinor);
  std::printf("  PJRT_Api.struct_size %zu = %zu function slots (torchtpu's table at 0.%d: %d slots, sizeof %zu)\n",
              api->struct_size, (api->struct_size - 40) / 8, pjrt::capi::kApiMinor, pjrt::capi::kNumSlots,
              sizeof(pjrt::capi::PJRT_Api));
  int present = 0;
  std::string absent;
  for (const auto& [slot, name] : kSlots) {
    if (plugin->has(slot)) {
      ++present;
      continue;
    }
    absent += std::string(absent.empty() ? "" : ", ") + name + " (slot " + std::to_string(static_cast<int>(slot)) +
              (api->struct_size < pjrt::capi::api_size_for(slot) ? ", past the table)" : ", null)");
  }
  std::printf("  slots torchtpu names: %d of %zu present%s%s\n", present, std::size(kSlots),
              absent.empty() ? "" : "; absent: ", absent.c_str());
  std::printf("  attributes (%zu):", plugin->attributes().size());
  for (const auto& [k, v] : plugin->attributes()) std::printf(" %s=%s;", k.c_str(), v.c_str());
  std::printf("\n  build id: %s\n", plugin->build_id().c_str());
  t0 = std::chrono::steady_clock::now();
  std::shared_ptr<pjrt::Client> client;
  try {
    client = pjrt::Client::for_plugin(*plugin, pjrt::default_create_options(kind));
  } catch (const DeviceUnavailable& e) {
    std::printf("  client: DeviceUnavailable after %.2f s: %s\n", seconds_since(t0), e.what());
    if (must_run) std::printf("  FAILED: this plugin must create a client and run the program\n");
    return !must_run;  // else the plugin's own refusal, reported as torchtpu promises
  } catch (const std::exception& e) {
    std::printf("  client FAILED after %.2f s (not DeviceUnavailable): %s\n", seconds_since(t0), e.what());
    return false;
  }
  std::printf("  client: created in %.2f s: platform \"%s\", version \"%s\", %zu addressable device(s), kind \"%s\"\n",
              seconds_since(t0), client->platform_name().c_str(), client->platform_version().c_str(),
              client->addressable_devices().size(), client->device_kind().c_str());
  try {
    const std::string err = round_trip(client);
    if (!err.empty()) {
      std::printf("  round trip FAILED: %s\n", err.c_str());
      return false;
    }
  } catch (const std::exception& e) {
    std::printf("  round trip FAILED: %s\n", e.what());
    return false;
  }
  std::printf("  round trip (Compile, BufferFromHostBuffer, Execute, ToHostBuffer, Serialize, DeserializeAndLoad): OK, "
              "tanh(x + x) exact to 1e-6\n");
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::printf("usage: %s [run:]PLUGIN.so...\n", argv[0]);
    return 2;
  }
  bool ok = true;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool must_run = arg.rfind("run:", 0) == 0;
    ok = check_plugin(must_run ? arg.substr(4) : arg, must_run) && ok;
  }
  std::printf("%s\n", ok ? "pjrt_abi_check: all plugins OK" : "pjrt_abi_check: FAILED");
  return ok ? 0 : 1;
}
