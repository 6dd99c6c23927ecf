// torchtpu/device/factories.hpp — factory overloads taking a device: `zeros<float>({2, 3},
// "tpu")`. Each makes the tensor on the cpu, then copies it to the device (one upload).
#pragma once
#include "../core/device.hpp"     // Device
#include "../core/factories.hpp"  // the cpu factories, Generator
#include "../ops/methods.hpp"     // Tensor::to (via fuse/materialize.hpp → device/frontend.hpp)

namespace torchtpu {

/// Factories on a device: made on the cpu, then copied to `device` (one upload). A PJRT
/// device needs the device runtime (`#include <torchtpu/device.hpp>` in one translation unit).
/// **Errors:** as the cpu factory; DeviceUnavailable (no plugin, or no device runtime) or
/// IndexError (no such device index) for the device. **Devices:** any.
template <element T = float> Tensor<T> empty(const Dims& shape, const Device& device) {
  return Tensor<T>::empty(shape).to(device);
}
template <element T = float> Tensor<T> full(const Dims& shape, T value, const Device& device) {
  return full<T>(shape, value).to(device);
}
template <element T = float> Tensor<T> zeros(const Dims& shape, const Device& device) {
  return zeros<T>(shape).to(device);
}
template <element T = float> Tensor<T> ones(const Dims& shape, const Device& device) {
  return ones<T>(shape).to(device);
}
template <element T = float> Tensor<T> arange(double start, double end, double step, const Device& device) {
  return arange<T>(start, end, step).to(device);
}
template <floating_element T = float> Tensor<T> rand(const Dims& shape, Generator& gen, const Device& device) {
  return rand<T>(shape, gen).to(device);
}
template <floating_element T = float> Tensor<T> randn(const Dims& shape, Generator& gen, const Device& device) {
  return randn<T>(shape, gen).to(device);
}
template <element T> Tensor<T> from_data(const T* data, const Dims& shape, const Device& device) {
  return from_data<T>(data, shape).to(device);
}

}  // namespace torchtpu
