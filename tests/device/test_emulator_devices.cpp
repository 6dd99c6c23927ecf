// tests/device/test_emulator_devices.cpp — several virtual emulator devices
// (TORCHTPU_EMULATOR_DEVICES=3 in this test's environment; TORCHTPU_XLA_CPU_DEVICES=3 on xla_cpu), thread-safe client creation, and
// a parser fuzz check: mangled programs give DeviceError, never a crash.
#include <catch2/catch.hpp>  // TEST_CASE, CHECK

#include <string>  // std::string
#include <thread>  // std::thread
#include <vector>  // std::vector

#include "emulator_fixture.hpp"  // ttest::tpu, run, to_device

using namespace ttest;

TEST_CASE("devices: concurrent first use creates one client", "[pjrt][devices]") {
  std::vector<std::shared_ptr<pjrt::Client>> got(8);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < got.size(); ++i) threads.emplace_back([&, i] { got[i] = device_client(); });
  for (auto& t : threads) t.join();
  for (const auto& c : got) CHECK(c == got[0]);
}

TEST_CASE("devices: TORCHTPU_EMULATOR_DEVICES virtual devices", "[pjrt][devices]") {
  auto c = device_client();
  REQUIRE(c->addressable_devices().size() == 3);
  for (int i = 0; i < 3; ++i) {
    CHECK(c->device(i).id == i);
    CHECK(c->device(i).kind == (on_emulator() ? "TPU emulator" : "cpu"));
  }
  CHECK_THROWS_AS(c->device(3), torchtpu::IndexError);
  shlo::Builder b;
  auto x = b.parameter(ScalarType::Float, {2});
  b.set_results({b.add(x, x)});
  for (int d = 0; d < 3; ++d) {
    auto out = run(b, {{ScalarType::Float, {2}, {1.0 + d, 2}}}, d);
    CHECK(out[0].values == std::vector<double>{2.0 + 2 * d, 4});
  }
  // an argument on device 1 cannot feed a run on device 2
  auto exe = pjrt::CompilationCache::global().get_or_compile(c, b.str());
  auto on1 = to_device(c, {ScalarType::Float, {2}, {1, 2}}, 1);
  CHECK_THROWS_AS(exe->execute({&on1}, 2), torchtpu::DeviceError);
  auto out = exe->execute({&on1}, 1);
  CHECK(to_host(out[0]).values == std::vector<double>{2, 4});
  CHECK(on1.device_index() == 1);
  CHECK(out[0].device_index() == 1);
  // move it to device 2 and run there
  auto on2 = on1.copy_to_device(2);
  CHECK(on2.device_index() == 2);
  CHECK(to_host(exe->execute({&on2}, 2)[0]).values == std::vector<double>{2, 4});
  auto same = on2.copy_to_device(2);  // same device: a plain copy
  CHECK(to_host(same).values == std::vector<double>{1, 2});
  CHECK_THROWS_AS(on2.copy_to_device(7), torchtpu::IndexError);
}

TEST_CASE("devices: non-portable executables run on their compile-time device only", "[pjrt][devices]") {
  auto c = device_client();
  shlo::Builder b;
  auto x = b.parameter(ScalarType::Float, {2});
  b.set_results({b.negate(x)});
  pjrt::CompileOptions pinned;
  pinned.portable = false;
  pinned.device_id = 1;
  auto exe = pjrt::CompilationCache::global().get_or_compile(c, b.str(), pinned);
  auto in = to_device(c, {ScalarType::Float, {2}, {1, -2}}, 1);
  auto out = exe->execute({&in}, 1);
  CHECK(out[0].device_index() == 1);
  CHECK(to_host(out[0]).values == std::vector<double>{-1, 2});
  CHECK_THROWS_AS(exe->execute({&in}, 0), torchtpu::ValueError);
  // default options are portable: any device at execute time
  auto portable = pjrt::CompilationCache::global().get_or_compile(c, b.str());
  CHECK(portable->options().portable);
  auto in2 = to_device(c, {ScalarType::Float, {2}, {3, 4}}, 2);
  CHECK(portable->execute({&in2}, 2)[0].device_index() == 2);
}

TEST_CASE("devices: compile options bytes", "[pjrt][devices]") {
  CHECK(pjrt::CompileOptions{}.serialize() == std::string("\x1a\x04\x20\x01\x28\x01\x20\x01", 8));
  pjrt::CompileOptions pinned;
  pinned.portable = false;
  pinned.device_id = 3;
  CHECK(pinned.serialize() ==
        std::string("\x1a\x0f\x20\x01\x28\x01\x4a\x09\x08\x01\x10\x01\x1a\x03\x0a\x01\x03", 17));
  pjrt::CompileOptions bad;
  bad.device_id = 1;  // portable and pinned
  CHECK_THROWS_AS(bad.serialize(), torchtpu::ValueError);
}

TEST_CASE("devices: mangled programs are rejected cleanly", "[pjrt][devices][fuzz]") {
  shlo::Builder b;
  auto x = b.parameter(ScalarType::Float, {1, 2, 4, 4});
  auto w = b.parameter(ScalarType::Float, {2, 2, 3, 3});
  shlo::ConvOptions o;
  o.padding = {{1, 1}, {1, 1}};
  auto y = b.convolution(x, w, o);
  auto z = b.constant(0.0, ScalarType::Float);
  auto r = b.reduce(y, z, shlo::ReduceOp::Add, {2, 3});
  auto p = b.reduce_window(y, b.constant(-INFINITY, ScalarType::Float), shlo::ReduceOp::Max, {1, 1, 2, 2}, {1, 1, 2, 2});
  auto t = b.transpose(b.reshape(r, {2, 1}), {1, 0});
  auto m = b.dot_general(t, b.broadcast_in_dim(b.slice(r, {0, 0}, {1, 1}), {1, 3}, {0, 1}), {{}, {}, {0}, {0}});
  b.set_results({b.tanh(m), p});
  const std::string text = b.str();
  const NoStablehloDump no_dump;  // the mangled texts the emulator accepts are not ours
  auto c = device_client();
  const auto xv = random_values(32, 3), wv = random_values(36, 4);
  auto bx = to_device(c, {ScalarType::Float, {1, 2, 4, 4}, xv});
  auto bw = to_device(c, {ScalarType::Float, {2, 2, 3, 3}, wv});
  uint32_t s = 12345;
  auto rnd = [&s](size_t n) {
    s ^= s << 13; s ^= s >> 17; s ^= s << 5;
    return n ? s % n : 0;
  };
  int rejected = 0, accepted = 0;
  for (int iter = 0; iter < 1500; ++iter) {
    std::string m2 = text;
    const int edits = 1 + static_cast<int>(rnd(3));
    for (int e = 0; e < edits; ++e) {
      const size_t pos = rnd(m2.size());
      switch (rnd(4)) {
        case 0: m2.erase(pos, 1 + rnd(8)); break;                         // delete
        case 1: m2.insert(pos, 1, "%[]{}<>(),:=x0-9\"#"[rnd(18)]); break;  // insert a punctuation char
        case 2: m2[pos] = static_cast<char>('0' + rnd(10)); break;        // change to a digit
        default: m2.resize(pos); break;                                   // truncate
      }
    }
    try {
      auto exe = c->compile(m2);
      exe->execute({&bx, &bw});
      ++accepted;
    } catch (const torchtpu::DeviceError& e) {
      // The emulator: INVALID_ARGUMENT, UNIMPLEMENTED or RESOURCE_EXHAUSTED; XLA: UNKNOWN (MLIR
      // diagnostics), INVALID_ARGUMENT (its verifier) or NOT_FOUND.
      if (on_emulator()) CHECK((e.code() == 3 || e.code() == 12 || e.code() == 8));
      else CHECK((e.code() == 2 || e.code() == 3 || e.code() == 5));
      ++rejected;
    }
  }
  CHECK(rejected > 1000);
  INFO("accepted " << accepted);
}
