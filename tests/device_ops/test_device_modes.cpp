// tests/device_ops/test_device_modes.cpp — execution modes (debug / strict / fused) on the cpu
// and the TPU emulator, the deferred graph, and the compilation cache seen from tensors.
//
// Tolerance between modes on the emulator: 1e-6 relative (each op is rounded to its dtype in
// every mode, so results are in fact bit-identical today); on the cpu: bit-identical.
#include "helpers.hpp"  // host_values, check_close, test_input

using namespace torchtpu;
using pjrt::CompilationCache;

namespace {
/// A chain of 20 elementwise ops written as 20 statements.
Tensor<float> chain20(Tensor<float> x) {
  for (int i = 0; i < 5; ++i) {
    x = x * 1.01f;
    x = x + 0.125f;
    x = tanh(x);
    x = x - 0.0625f;
  }
  return x;
}
/// A small MLP forward with a reduction and softmax: several op kinds in each statement.
Tensor<float> mlp(const Tensor<float>& x, const Tensor<float>& w1, const Tensor<float>& b1,
                  const Tensor<float>& w2) {
  Tensor<float> h = relu(matmul(x, w1) + b1);
  Tensor<float> y = softmax(matmul(h, w2) * 0.5f, 1);
  return Tensor<float>(y - y.mean({1}, true));
}
}  // namespace

TEST_CASE("execution mode setter, guard and names", "[pjrt]") {
  CHECK(execution_mode() == ExecutionMode::Fused);  // the default
  {
    ExecutionModeGuard g(ExecutionMode::Debug);
    CHECK(execution_mode() == ExecutionMode::Debug);
    {
      ExecutionModeGuard g2(parse_execution_mode("strict"));
      CHECK(execution_mode() == ExecutionMode::Strict);
    }
    CHECK(execution_mode() == ExecutionMode::Debug);
  }
  CHECK(execution_mode() == ExecutionMode::Fused);
  CHECK(execution_mode_name(ExecutionMode::Strict) == "strict");
  CHECK_THROWS_WITH(parse_execution_mode("eager"), Catch::Contains("\"debug\", \"strict\", \"fused\""));
}

TEST_CASE("all modes agree: bit-identical on the cpu, within 1e-6 on the tpu", "[pjrt]") {
  MatmulPrecisionGuard hp(MatmulPrecision::Highest);
  auto x = test_input({8, 12}, 1), w1 = test_input({12, 16}, 2), b1 = test_input({16}, 3);
  auto w2 = test_input({16, 5}, 4), c = test_input({6, 7}, 5);
  std::vector<double> cpu_ref, chain_ref;
  for (ExecutionMode m : {ExecutionMode::Fused, ExecutionMode::Strict, ExecutionMode::Debug}) {
    ExecutionModeGuard g(m);
    INFO("mode " << execution_mode_name(m));
    auto cpu_out = host_values(mlp(x, w1, b1, w2));
    auto cpu_chain = host_values(chain20(c));
    if (cpu_ref.empty()) {
      cpu_ref = cpu_out;
      chain_ref = cpu_chain;
    }
    CHECK(cpu_out == cpu_ref);
    CHECK(cpu_chain == chain_ref);
    Tensor<float> ref(Tensor<float>::empty({8, 5}));
    std::copy(cpu_ref.begin(), cpu_ref.end(), ref.data_ptr());
    check_close(mlp(x.to(test_device()), w1.to(test_device()), b1.to(test_device()), w2.to(test_device())), ref, 1e-5, 1e-6);
    check_close(chain20(c.to(test_device())), chain20(c), 1e-6, 1e-7);
  }
}

TEST_CASE("fused mode: a 20-op chain over 20 statements is one executable", "[pjrt]") {
  auto c = test_input({7, 13}, 77);  // a shape no other test uses: a fresh program
  auto d = c.to(test_device());
  const auto s0 = device::stats();
  const auto c0 = CompilationCache::global().stats();
  Tensor<float> r = chain20(d);
  CHECK(device::stats().executions == s0.executions);  // nothing ran yet: deferred
  CHECK(device::stats().statements - s0.statements == 20);
  auto got = r.cpu();  // observation: one program
  CHECK(device::stats().executions - s0.executions == 1);
  CHECK(CompilationCache::global().stats().compiles - c0.compiles == 1);
  check_close(got, chain20(c), 1e-6, 1e-7);
  // Second time: text memo hit, executable from the compile cache (memory hit, no compile).
  const auto s1 = device::stats();
  const auto c1 = CompilationCache::global().stats();
  auto again = chain20(d).cpu();
  CHECK(device::stats().executions - s1.executions == 1);
  CHECK(device::stats().texts_built == s1.texts_built);
  CHECK(CompilationCache::global().stats().compiles == c1.compiles);
  CHECK(CompilationCache::global().stats().memory_hits - c1.memory_hits == 1);
  CHECK(host_values(again) == host_values(got));
}

TEST_CASE("strict and debug: each op its own executable, run at once", "[pjrt]") {
  auto d = test_input({7, 13}, 78).to(test_device());
  for (ExecutionMode m : {ExecutionMode::Strict, ExecutionMode::Debug}) {
    ExecutionModeGuard g(m);
    const auto s0 = device::stats();
    Tensor<float> r = chain20(d);
    CHECK(device::stats().executions - s0.executions == 20);
    Tensor<float> one = exp(d * 2.0f + 1.0f);  // three ops in one statement: three programs
    CHECK(device::stats().executions - s0.executions == 23);
    // debug waits for each execution at its statement; strict only enqueues it (the host
    // waits when it reads a value)
    const uint64_t waited = device::stats().awaited - s0.awaited;
    CHECK(waited == (m == ExecutionMode::Debug ? 23u : 0u));
    // values read after asynchronous executions are the same as the debug ones
    static std::vector<double> first;
    if (m == ExecutionMode::Strict) first = host_values(r);
    else CHECK(host_values(r) == first);
  }
}

TEST_CASE("deferred graph: sync(), dead results, size bound, in-place updates", "[pjrt]") {
  auto c = test_input({3, 3}, 90);
  auto d = c.to(test_device());
  const auto s0 = device::stats();
  Tensor<float> a = d * 3.0f;
  Tensor<float> b = a + 1.0f;
  { Tensor<float> dead = b * 100.0f; }  // never observed, dropped before it runs
  torchtpu::sync();
  CHECK(device::stats().executions - s0.executions == 1);
  torchtpu::sync();  // nothing pending
  CHECK(device::stats().executions - s0.executions == 1);
  check_close(b, Tensor<float>(c * 3.0f + 1.0f), 1e-6);
  check_close(a, Tensor<float>(c * 3.0f), 1e-6);
  // size bound: at most 4 statements per program
  const int64_t saved = max_deferred_statements();
  set_max_deferred_statements(4);
  const auto s1 = device::stats();
  Tensor<float> x = d;
  for (int i = 0; i < 10; ++i) x = x + 1.0f;
  x.cpu();
  CHECK(device::stats().executions - s1.executions == 3);  // 4 + 4 + 2
  set_max_deferred_statements(saved);
  check_close(x, Tensor<float>(c + 10.0f), 1e-6);
  CHECK_THROWS_AS(set_max_deferred_statements(0), ValueError);
  // An in-place update of a pending tensor, seen through an alias.
  Tensor<float> y = d + 0.0f;
  auto alias = y;
  y += y;
  y *= 2.0f;
  check_close(alias, Tensor<float>(c * 4.0f), 1e-6);
}

TEST_CASE("the compile cache is shared by every statement with the same text", "[pjrt]") {
  auto& cache = CompilationCache::global();
  auto d = test_input({11, 3}, 5).to(test_device());
  device::TextMemo::global().clear();
  const auto c0 = cache.stats();
  const auto t0 = device::stats().texts_built;
  Tensor<float> r1 = sin(d) * 2.0f;
  r1.cpu();
  const auto c1 = cache.stats();
  Tensor<float> r2 = sin(d) * 2.0f;
  r2.cpu();
  const auto c2 = cache.stats();
  CHECK(c1.compiles - c0.compiles <= 1);  // 0 if an earlier test compiled the same text
  CHECK(c2.compiles == c1.compiles);      // second compile of the same program: a cache hit
  CHECK(c2.memory_hits - c1.memory_hits == 1);
  CHECK(device::stats().texts_built - t0 == 1);  // text built once for this signature
  // A different scalar is the same program text (scalars are program inputs), run again.
  Tensor<float> r3 = sin(d) * 3.0f;
  check_close(r3, Tensor<float>(sin(d.cpu()) * 3.0f), 1e-6);
  CHECK(device::stats().texts_built - t0 == 1);
  CHECK(cache.stats().compiles == c1.compiles);
}

namespace {
/// PJRT_Event_IsReady of `t`'s device buffer's ready event, without waiting.
bool buffer_is_ready(const Tensor<float>& t) {
  namespace c = pjrt::capi;
  auto arr = std::static_pointer_cast<device::DeviceArray>(t.storage()->device_handle);
  REQUIRE(arr);
  REQUIRE(arr->buffer);
  const pjrt::Plugin& p = arr->client->plugin();
  c::PJRT_Buffer_ReadyEvent_Args a{};
  a.struct_size = sizeof(a);
  a.buffer = arr->buffer->handle();
  p.call(c::Slot::Buffer_ReadyEvent, &a, "PJRT_Buffer_ReadyEvent");
  c::PJRT_Event_IsReady_Args r{};
  r.struct_size = sizeof(r);
  r.event = a.event;
  p.call(c::Slot::Event_IsReady, &r, "PJRT_Event_IsReady");
  p.destroy_event(a.event);
  return r.is_ready;
}
}  // namespace

TEST_CASE("sync() waits until every enqueued execution has finished", "[pjrt]") {
  // Strict and fused modes return once an execution is enqueued; XLA's CPU plugin runs it on
  // its own threads, so without the wait a large result is still being computed here. After
  // sync() each result's ready event must already be complete (checked without waiting).
  for (const ExecutionMode m : {ExecutionMode::Strict, ExecutionMode::Fused}) {
    ExecutionModeGuard g(m);
    const Tensor<float> xc = test_input({1 << 20}, 7);
    const Tensor<float> x = xc.to(test_device());
    std::vector<Tensor<float>> r;
    for (int i = 0; i < 4; ++i) r.push_back(chain20(x + float(i)));
    torchtpu::sync();
    for (const auto& t : r) CHECK(buffer_is_ready(t));
    // and the values are the chain's (cpu reference, 1e-5 relative: tanh is the cpu's and the
    // device's own approximation)
    const Tensor<float> want = chain20(xc + 3.0f);
    check_close(r[3], want, 1e-5);
  }
}
