// tests/device_ops/test_device_failed_flush.cpp — the deferred graph after a failed flush
// (issue 18, item 1): statements are type-checked when recorded, and a flush that fails leaves
// every tensor it was to compute in a failed state that rethrows the original error on use,
// never a stale statement index that later reads another statement's value (or out of bounds).
#include <stdexcept>  // std::runtime_error

#include "helpers.hpp"  // host_values, test_device

using namespace torchtpu;

namespace {
/// A device tensor over the array `arr` (dense, float).
Tensor<float> tensor_of(const std::shared_ptr<device::DeviceArray>& arr) {
  Dims dims(arr->dims.begin(), arr->dims.end());
  return Tensor<float>(device::detail::wrap_storage(arr, arr->device, dims, sizeof(float)), dims,
                       contiguous_strides(dims), 0);
}

/// Records on `g` a statement `input * 1` that passes the record-time type check but throws
/// `DeviceError(8, "injected: out of device memory")` when the flush emits it, as a device
/// running out of memory would at the flush.
std::shared_ptr<device::DeviceArray> record_failing(device::PendingGraph& g, const device::DeviceArray& in,
                                                    const std::shared_ptr<bool>& armed) {
  std::lock_guard<std::recursive_mutex> lock(g.mutex());
  device::Statement st;
  st.inputs.push_back(g.ref_for(in));
  st.sig = "test-failing-statement";
  st.op_name = "failing";
  st.emit = [armed](device::Emitter& em) {
    if (*armed) throw DeviceError(8, "injected: out of device memory");
    return em.input(0);
  };
  return g.record(std::move(st), in.dtype, in.dims, false);
}
}  // namespace

TEST_CASE("failed flush: an op the device rejects fails at its statement, pending work survives", "[pjrt]") {
  const Device dev = test_device();
  Tensor<uint8_t> h = {1, 2, 3};
  auto u = h.to(dev);
  // abs on uint8: the cpu allows it, StableHLO's abs needs a signed type. The error comes at
  // the statement (it used to come at a later flush and corrupt the graph).
  CHECK_THROWS_WITH(Tensor<uint8_t>(abs(u)), Catch::Contains("abs") && Catch::Contains("uint8"));
  CHECK_THROWS_AS(Tensor<uint8_t>(abs(u)), TypeError);
  Tensor<uint8_t> c = u * 2;
  Tensor<uint8_t> b = c + u;
  CHECK(host_values(c) == std::vector<double>{2, 4, 6});
  CHECK(host_values(b) == std::vector<double>{3, 6, 9});
  CHECK(device::graph_for(dev)->size() == 0);
}

TEST_CASE("failed flush: every tensor of the failed program rethrows the original error", "[pjrt]") {
  const Device dev = test_device();
  auto g = device::graph_for(dev);
  torchtpu::sync();
  Tensor<float> x = Tensor<float>({1.0f, 2.0f, 3.0f}).to(dev);
  // 40 earlier statements (the case that used to read past the end of the next graph).
  std::vector<Tensor<float>> earlier;
  earlier.push_back(Tensor<float>(x + 1.0f));
  for (int i = 1; i < 40; ++i) earlier.push_back(Tensor<float>(earlier.back() + 1.0f));
  auto armed = std::make_shared<bool>(false);
  auto xarr = std::static_pointer_cast<device::DeviceArray>(x.storage()->device_handle);
  auto bad_arr = record_failing(*g, *xarr, armed);
  Tensor<float> bad = tensor_of(bad_arr);
  REQUIRE(g->size() == 41);
  *armed = true;
  CHECK_THROWS_WITH(g->flush(), Catch::Contains("injected: out of device memory"));
  CHECK(g->size() == 0);
  CHECK(bad_arr->graph == nullptr);
  CHECK(bad_arr->stmt == -1);
  CHECK(bad_arr->error != nullptr);
  // The failed tensor, and the tensors of the same program, rethrow the same DeviceError.
  try {
    bad.cpu();
    FAIL("bad.cpu() did not throw");
  } catch (const DeviceError& e) {
    CHECK(e.code() == 8);
    CHECK(std::string(e.what()).find("injected: out of device memory") != std::string::npos);
  }
  CHECK_THROWS_WITH(earlier[39].cpu(), Catch::Contains("injected: out of device memory"));
  CHECK_THROWS_AS(earlier[0].cpu(), DeviceError);
  // New statements record at index 0 of the emptied graph. Before the fix `bad` still named
  // statement 40 of the old graph: `bad + x` read another statement's value, or out of bounds.
  Tensor<float> c = x * 2.0f;
  CHECK_THROWS_WITH(Tensor<float>(bad + x), Catch::Contains("injected: out of device memory"));
  CHECK_THROWS_AS(Tensor<float>(earlier[5] * 3.0f), DeviceError);
  Tensor<float> d = c + x;
  CHECK(host_values(d) == std::vector<double>{3, 6, 9});
  CHECK(host_values(c) == std::vector<double>{2, 4, 6});
  // Uninvolved data and later work are unaffected.
  CHECK(host_values(x) == std::vector<double>{1, 2, 3});
  Tensor<float> e = x + 0.5f;
  CHECK(host_values(e) == std::vector<double>{1.5, 2.5, 3.5});
}

TEST_CASE("failed flush: results of an earlier flush are unaffected, the failure repeats", "[pjrt]") {
  const Device dev = test_device();
  auto g = device::graph_for(dev);
  torchtpu::sync();
  Tensor<float> x = Tensor<float>({4.0f, 5.0f}).to(dev);
  Tensor<float> kept = x * 2.0f;  // pending
  torchtpu::sync();
  auto armed = std::make_shared<bool>(false);
  auto xarr = std::static_pointer_cast<device::DeviceArray>(x.storage()->device_handle);
  auto bad_arr = record_failing(*g, *xarr, armed);
  Tensor<float> bad = tensor_of(bad_arr);
  *armed = true;
  CHECK_THROWS_AS(bad.cpu(), DeviceError);  // the flush of `bad` fails ...
  CHECK_THROWS_AS(bad.cpu(), DeviceError);  // ... and keeps failing with the same error
  CHECK(host_values(kept) == std::vector<double>{8, 10});  // computed before: unaffected
}
