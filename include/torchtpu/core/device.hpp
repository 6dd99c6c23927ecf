// torchtpu/core/device.hpp — `torchtpu::Device`: where a tensor lives ("cpu", "tpu:N", "cuda:N",
// "xla_cpu:N").
#pragma once
#include <cstdint>      // uint8_t
#include <string>       // std::string
#include <string_view>  // std::string_view

#include "errors.hpp"  // ValueError

namespace torchtpu {

/// Device kinds. `cpu` is header-only (our engine); `tpu`, `cuda` and `xla_cpu` (XLA's own CPU
/// PJRT plugin, a second PJRT backend on any machine) run through a PJRT plugin.
enum class DeviceKind : uint8_t { CPU, TPU, CUDA, XLA_CPU };

constexpr std::string_view device_kind_name(DeviceKind k) {
  switch (k) {
    case DeviceKind::CPU: return "cpu";
    case DeviceKind::TPU: return "tpu";
    case DeviceKind::CUDA: return "cuda";
    case DeviceKind::XLA_CPU: return "xla_cpu";
  }
  return "?";
}

/// A device: a kind and an index (0 when not given). Parsed from a string, as in PyTorch.
///
/// **Accepted forms:** `"cpu"`, `"tpu"`, `"tpu:N"`, `"cuda"`, `"cuda:N"`, `"xla_cpu"`,
/// `"xla_cpu:N"` (N a non-negative decimal integer). **Errors:** ValueError listing the accepted forms.
class Device {
 public:
  constexpr Device() = default;
  /// A device of `kind` with `index` (0 for the cpu).
  constexpr Device(DeviceKind kind, int index = 0) : kind_(kind), index_(index) {}
  /// Parse `"cpu"`, `"tpu"`, `"tpu:N"`, `"cuda:N"`, `"xla_cpu:N"` (implicit, like torch::Device). **Errors:**
  /// ValueError listing the accepted forms.
  Device(std::string_view spec) { parse(spec); }  // NOLINT: implicit, like torch::Device
  /// Same as the `std::string_view` constructor.
  Device(const char* spec) : Device(std::string_view(spec)) {}  // NOLINT

  /// The device kind (cpu, tpu, cuda, xla_cpu).
  constexpr DeviceKind kind() const noexcept { return kind_; }
  /// The device index within its kind.
  constexpr int index() const noexcept { return index_; }
  /// True for the cpu.
  constexpr bool is_cpu() const noexcept { return kind_ == DeviceKind::CPU; }

  /// "cpu", "tpu:0", "cuda:1", "xla_cpu:0".
  std::string str() const {
    if (kind_ == DeviceKind::CPU) return "cpu";
    return std::string(device_kind_name(kind_)) + ":" + std::to_string(index_);
  }

  friend constexpr bool operator==(const Device&, const Device&) = default;

 private:
  void parse(std::string_view s) {
    const auto colon = s.find(':');
    const std::string_view kind = s.substr(0, colon);
    if (kind == "cpu") kind_ = DeviceKind::CPU;
    else if (kind == "tpu") kind_ = DeviceKind::TPU;
    else if (kind == "cuda") kind_ = DeviceKind::CUDA;
    else if (kind == "xla_cpu") kind_ = DeviceKind::XLA_CPU;
    else fail(s);
    if (colon == std::string_view::npos) return;
    const std::string_view idx = s.substr(colon + 1);
    if (idx.empty() || idx.size() > 6 || kind_ == DeviceKind::CPU) fail(s);
    int v = 0;
    for (char c : idx) {
      if (c < '0' || c > '9') fail(s);
      v = v * 10 + (c - '0');
    }
    index_ = v;
  }
  [[noreturn]] static void fail(std::string_view s) {
    throw ValueError("invalid device string '" + std::string(s) +
                     "': expected one of \"cpu\", \"tpu\", \"tpu:N\", \"cuda\", \"cuda:N\", "
                     "\"xla_cpu\", \"xla_cpu:N\"");
  }
  DeviceKind kind_ = DeviceKind::CPU;
  int index_ = 0;
};

}  // namespace torchtpu
