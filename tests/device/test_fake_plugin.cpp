// tests/device/test_fake_plugin.cpp — the PJRT client against a plugin that misbehaves in the
// ways the C API allows (issue 18, item 7), using the switches of tests/device/fake_plugin.cpp
// built with FAKE_PJRT_FULL: exact ExecuteOptions.struct_size, no client leaked when the
// constructor fails, done_with_host_buffer awaited when a Buffer cannot be adopted, events of a
// plugin without PJRT_Event_Await never taken as complete, null handles refused.
#include <catch2/catch.hpp>  // TEST_CASE, CHECK

#include <dlfcn.h>  // dlopen, dlsym

#include <cstdlib>  // std::getenv
#include <string>   // std::string

#include <torchtpu/device/pjrt/client.hpp>  // Client, Plugin, Buffer, Executable

using namespace torchtpu;
namespace capi = torchtpu::pjrt::capi;

namespace {
const char* fake_path() {
  const char* p = std::getenv("TORCHTPU_TEST_FAKE_PLUGIN_FULL");
  REQUIRE(p != nullptr);
  return p;
}
const pjrt::Plugin& fake() { return pjrt::Plugin::load(fake_path()); }
/// The fake's control functions (the plugin is loaded by `fake()` first).
void set(const char* key, long value) {
  (void)fake();
  void* h = dlopen(fake_path(), RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(h != nullptr);
  auto fn = reinterpret_cast<void (*)(const char*, long)>(dlsym(h, "fake_pjrt_set"));
  REQUIRE(fn != nullptr);
  fn(key, value);
}
long get(const char* key) {
  (void)fake();
  void* h = dlopen(fake_path(), RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(h != nullptr);
  auto fn = reinterpret_cast<long (*)(const char*)>(dlsym(h, "fake_pjrt_get"));
  REQUIRE(fn != nullptr);
  return fn(key);
}
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
}  // namespace

// Runs first: the client is created once per plugin, these cases need it not to exist yet.
TEST_CASE("fake plugin: a failing or null client creation leaks nothing", "[pjrt][errors]") {
  // A plugin that refuses to create a client (libtpu without a TPU) makes the device
  // unavailable; the error names the plugin, its version and PJRT's own message.
  set("fail_create", 1);
  try {
    pjrt::Client::for_plugin(fake());
    FAIL("a refused client creation was accepted");
  } catch (const DeviceUnavailable& e) {
    INFO(e.what());
    CHECK(contains(e.what(), std::string("PJRT plugin ") + fake_path() + " (PJRT C API 0.104)"));
    CHECK(contains(e.what(), "cannot create a client"));
    CHECK(contains(e.what(), "PJRT code 9"));
    CHECK(contains(e.what(), "fake: no fake device attached"));
  }
  CHECK(get("live_clients") == 0);
  set("fail_create", 0);
  set("fail_platform_name", 1);
  CHECK_THROWS_WITH(pjrt::Client::for_plugin(fake()), Catch::Contains("PlatformName fails"));
  CHECK(get("live_clients") == 0);  // was 1: the PJRT client was never destroyed
  set("fail_platform_name", 0);
  set("null_client", 1);
  try {
    pjrt::Client::for_plugin(fake());
    FAIL("a null client was accepted");
  } catch (const DeviceError& e) {
    CHECK(contains(e.what(), "PJRT_Client_Create"));
    CHECK(contains(e.what(), "null client"));
  }
  set("null_client", 0);
  auto c = pjrt::Client::for_plugin(fake());
  CHECK(get("live_clients") == 1);
  CHECK(c->platform_name() == "fake");
  CHECK(c->device_kind() == "fake device");
}

TEST_CASE("fake plugin: ExecuteOptions.struct_size is exactly what the client fills in", "[pjrt][errors]") {
  auto c = pjrt::Client::for_plugin(fake());
  auto exe = c->compile("fake program");
  const float x = 1;
  const int64_t dims[1] = {1};
  auto in = c->buffer_from_host(&x, ScalarType::Float, dims);
  auto out = exe->execute({&in});
  CHECK(out.size() == 1);
  // Was sizeof + 64: a newer plugin would read 64 zero bytes as option values.
  CHECK(get("last_options_size") == static_cast<long>(sizeof(capi::PJRT_ExecuteOptions)));
  CHECK(get("last_options_size") ==
        static_cast<long>(TORCHTPU_PJRT_STRUCT_SIZE(capi::PJRT_ExecuteOptions, num_hlo_output_callbacks)));
}

TEST_CASE("fake plugin: a Buffer that cannot be adopted still waits for done_with_host_buffer", "[pjrt][errors]") {
  auto c = pjrt::Client::for_plugin(fake());
  const float x[2] = {1, 2};
  const int64_t dims[1] = {2};
  const long done0 = get("events_completed"), buffers0 = get("live_buffers");
  set("fail_dims", 1);
  CHECK_THROWS_WITH(c->buffer_from_host(x, ScalarType::Float, dims), Catch::Contains("Dimensions fails"));
  set("fail_dims", 0);
  CHECK(get("events_completed") - done0 == 1);  // was 0: the caller could free `x` too early
  CHECK(get("live_events") == 0);
  CHECK(get("live_buffers") == buffers0);       // the half-adopted buffer is destroyed
}

TEST_CASE("fake plugin: events of a plugin without PJRT_Event_Await are polled, never assumed done", "[pjrt][errors]") {
  auto c = pjrt::Client::for_plugin(fake());
  const float x = 1;
  const int64_t dims[1] = {1};
  set("no_event_await", 1);
  set("ready_after", 3);
  const long done0 = get("events_completed");
  auto b = c->buffer_from_host(&x, ScalarType::Float, dims);  // polls IsReady until ready
  CHECK(get("events_completed") - done0 == 1);
  // Neither Await nor IsReady: an error, not an event taken as complete.
  set("no_event_is_ready", 1);
  try {
    auto b2 = c->buffer_from_host(&x, ScalarType::Float, dims);
    FAIL("an event that cannot be awaited was taken as complete");
  } catch (const DeviceError& e) {
    CHECK(e.code() == 12);
    CHECK(contains(e.what(), "PJRT_Event_Await"));
  }
  set("no_event_is_ready", 0);
  set("no_event_await", 0);
  set("ready_after", 0);
  CHECK(get("live_events") == 0);
}

TEST_CASE("fake plugin: null handles returned without an error are refused", "[pjrt][errors]") {
  auto c = pjrt::Client::for_plugin(fake());
  const float x = 1;
  const int64_t dims[1] = {1};
  set("null_buffer", 1);
  CHECK_THROWS_WITH(c->buffer_from_host(&x, ScalarType::Float, dims),
                    Catch::Contains("PJRT_Client_BufferFromHostBuffer") && Catch::Contains("null buffer"));
  set("null_buffer", 0);
  CHECK(get("live_events") == 0);
  set("null_executable", 1);
  CHECK_THROWS_WITH(c->compile("fake program"), Catch::Contains("PJRT_Client_Compile") && Catch::Contains("null"));
  set("null_executable", 0);
  auto exe = c->compile("fake program");
  auto in = c->buffer_from_host(&x, ScalarType::Float, dims);
  set("null_output", 1);
  CHECK_THROWS_WITH(exe->execute({&in}), Catch::Contains("null output buffer"));
  set("null_output", 0);
  CHECK(exe->execute({&in}).size() == 1);
}
