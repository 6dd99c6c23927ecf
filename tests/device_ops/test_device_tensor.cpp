// tests/device_ops/test_device_tensor.cpp — tensors on PJRT devices (TPU emulator): to/cpu,
// factories with a device, accelerator queries, device errors, views of device tensors.
#include "helpers.hpp"  // host_values, check_close, test_input

using namespace torchtpu;

namespace {
// Devices 0 and 1 of the backend under test (tpu on the emulator, xla_cpu on XLA's CPU plugin).
const Device D0 = test_device(0), D1 = test_device(1);
}  // namespace

TEST_CASE("accelerator queries report the backend under test", "[pjrt]") {
  const Device dev = test_device(0);
  REQUIRE(accelerator::is_available(dev.kind()));
  const auto info = accelerator::info(dev.kind());
  CHECK(info.device == dev);
  if (on_emulator()) {
    CHECK(info.emulated);
    CHECK(info.platform_name == "tpu");
    CHECK(info.str().find("EMULATED") != std::string::npos);
    CHECK(accelerator::current().device == Device("tpu:0"));
  } else if (dev.kind() == DeviceKind::XLA_CPU) {
    CHECK_FALSE(info.emulated);
    CHECK(info.platform_name == "cpu");  // XLA's CPU plugin
    CHECK(info.str().find("EMULATED") == std::string::npos);
  }
  // TORCHTPU_EMULATOR_DEVICES=2 / TORCHTPU_XLA_CPU_DEVICES=2 in tests/device_ops/meson.build
  CHECK(accelerator::device_count(dev.kind()) == 2);
  CHECK(accelerator::is_available(DeviceKind::CPU));
  CHECK(accelerator::device_count(DeviceKind::CPU) == 1);
  if (accelerator::is_available("cuda")) {
    WARN("skipped: a CUDA PJRT plugin is installed here, the missing-plugin check needs none");
  } else {
    CHECK(accelerator::device_count("cuda") == 0);
    CHECK_THROWS_AS(zeros<float>({2}).to("cuda"), DeviceUnavailable);
  }
}

TEST_CASE("to(device) and cpu() round trip; data stays on the device until observed", "[pjrt]") {
  Tensor<float> a = {{1.5f, -2.0f, 3.25f}, {4.0f, 5.5f, -6.0f}};
  auto d = a.to(D0);
  CHECK(d.device() == D0);
  CHECK(d.data_ptr() == nullptr);  // no host memory behind a device tensor
  CHECK(d.sizes() == a.sizes());
  auto back = d.cpu();
  CHECK(back.device().is_cpu());
  CHECK(host_values(back) == std::vector<double>{1.5, -2.0, 3.25, 4.0, 5.5, -6.0});
  CHECK(d.to(D0).storage() == d.storage());  // same device: the same tensor
  CHECK(d.to(Device("cpu")).device().is_cpu());
  // A non-contiguous cpu view uploads its own values.
  auto t = a.t().to(D0);
  CHECK(host_values(t) == std::vector<double>{1.5, 4.0, -2.0, 5.5, 3.25, -6.0});
  // Other dtypes and a second device.
  Tensor<int64_t> i = {7, -8, 9};
  CHECK(host_values(i.to(D1)) == std::vector<double>{7, -8, 9});
  CHECK(i.to(D1).device().index() == 1);
  Tensor<bfloat16> h = {bfloat16(1.5f), bfloat16(-0.25f)};
  CHECK(host_values(h.to(D0)) == std::vector<double>{1.5, -0.25});
  // item() and printing observe the value.
  CHECK(a.to(D0).sum().eval().item() == Approx(6.25));
  CHECK(fmt::format("{}", i.to(D0)) == "tensor([ 7, -8,  9])");
}

TEST_CASE("factories take a device", "[pjrt]") {
  auto z = zeros<float>({2, 3}, D0);
  CHECK(z.device() == D0);
  CHECK(host_values(z) == std::vector<double>(6, 0.0));
  CHECK(host_values(ones<int32_t>({3}, D1)) == std::vector<double>{1, 1, 1});
  CHECK(host_values(full<double>({2}, 2.5, D0)) == std::vector<double>{2.5, 2.5});
  CHECK(host_values(arange<float>(0, 4, 1, D0)) == std::vector<double>{0, 1, 2, 3});
  Generator g1(7), g2(7);
  check_close(rand<float>({4, 4}, g1, D0), rand<float>({4, 4}, g2), 0.0);
  const float data[] = {1, 2, 3, 4};
  CHECK(host_values(from_data(data, {2, 2}, D0)) == std::vector<double>{1, 2, 3, 4});
  CHECK(empty<float>({0, 3}, D0).numel() == 0);
}

TEST_CASE("bad device strings and indices are clear errors", "[pjrt]") {
  for (const char* s : {"gpu", "tpu:", "tpu:x", "tpu:-1", "cpu:0", "TPU", ""}) {
    INFO(s);
    CHECK_THROWS_AS(Device(s), ValueError);
  }
  CHECK_THROWS_WITH(Device("gpu"), Catch::Contains("\"tpu:N\"") && Catch::Contains("\"cuda:N\""));
  CHECK_THROWS_AS(zeros<float>({2}).to(test_device(5)), IndexError);
  CHECK_THROWS_WITH(zeros<float>({2}).to(test_device(5)), Catch::Contains("2 addressable device"));
}

TEST_CASE("mixing devices in one op names both devices", "[pjrt]") {
  Tensor<float> c = {1, 2, 3};
  auto d = c.to(D0);
  const std::string want = "Expected all tensors to be on the same device, but found at least two devices";
  CHECK_THROWS_AS(Tensor<float>(c + d), ValueError);
  CHECK_THROWS_WITH(Tensor<float>(c + d), Catch::Contains(want) && Catch::Contains("cpu and " + D0.str()));
  CHECK_THROWS_WITH(Tensor<float>(d + c), Catch::Contains(D0.str() + " and cpu"));
  CHECK_THROWS_WITH(Tensor<float>(d * c.to(D1)), Catch::Contains(D0.str() + " and " + D1.str()));
  CHECK_THROWS_WITH(Tensor<float>(matmul(d.unsqueeze(0), c.unsqueeze(1))), Catch::Contains(D0.str() + " and cpu"));
  // A rank-0 cpu tensor may join a device expression (as in PyTorch).
  Tensor<float> s = Tensor<float>::empty({});
  s.fill_(2.0f);
  check_close(Tensor<float>(d * s), Tensor<float>({2, 4, 6}), 0.0);
}

TEST_CASE("views of device tensors lower to slice/transpose/broadcast", "[pjrt]") {
  auto a = test_input({4, 5, 6}, 11);
  auto d = a.to(D0);
  check_close(Tensor<float>(d.transpose(0, 2) * 1.0f), Tensor<float>(a.transpose(0, 2) * 1.0f), 0.0);
  check_close(Tensor<float>(d.slice(1, 1, 5, 2) + 0.0f), Tensor<float>(a.slice(1, 1, 5, 2) + 0.0f), 0.0);
  check_close(Tensor<float>(d.select(2, 3) - 1.0f), Tensor<float>(a.select(2, 3) - 1.0f), 0.0);
  check_close(Tensor<float>(d.narrow(2, 2, 3).permute({2, 0, 1}) * 2.0f),
              Tensor<float>(a.narrow(2, 2, 3).permute({2, 0, 1}) * 2.0f), 0.0);
  check_close(Tensor<float>(d.select(0, 1).unsqueeze(0).expand({3, 5, 6}) + 0.0f),
              Tensor<float>(a.select(0, 1).unsqueeze(0).expand({3, 5, 6}) + 0.0f), 0.0);
  check_close(Tensor<float>(d.reshape({20, 6}) + 0.0f), Tensor<float>(a.reshape({20, 6}) + 0.0f), 0.0);
  check_close(d.slice(2, 4, 6).cpu(), a.slice(2, 4, 6).contiguous(), 0.0);  // cpu() of a view
  check_close(Tensor<float>(d.slice(0, 4, 4) + 1.0f), Tensor<float>(a.slice(0, 4, 4) + 1.0f), 0.0);  // empty
}

TEST_CASE("assignment to device tensors", "[pjrt]") {
  auto a = test_input({3, 4}, 3);
  auto d = a.to(D0);
  auto alias = d;  // shares storage: sees in-place writes
  d += 1.0f;
  check_close(alias, Tensor<float>(a + 1.0f), 0.0);
  d.copy_(d * 2.0f);
  check_close(alias, Tensor<float>((a + 1.0f) * 2.0f), 1e-7);
  Tensor<double> wide = d;  // dtype conversion on the device
  CHECK(wide.device() == D0);
  check_close(wide, Tensor<double>((a + 1.0f) * 2.0f), 1e-7);
  // cpu destination of a device expression: an explicit copy to the host.
  Tensor<float> host = zeros<float>({3, 4});
  host.copy_(d - 1.0f);
  CHECK(host.device().is_cpu());
  check_close(host, Tensor<float>((a + 1.0f) * 2.0f - 1.0f), 1e-6);
  // cpu values into a device tensor (upload).
  d.copy_(a);
  check_close(alias, a, 0.0);
  // Writing into part of a device tensor is not supported yet: a clear error.
  CHECK_THROWS_AS(d.slice(0, 0, 1) = a.slice(0, 0, 1).to(D0), UnsupportedOperator);
  auto cl = d.clone();
  CHECK(cl.device() == D0);
  CHECK(cl.storage() != d.storage());
  check_close(cl, a, 0.0);
}
