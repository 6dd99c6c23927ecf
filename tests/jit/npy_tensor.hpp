// tests/jit/npy_tensor.hpp — the jit tests' reader of float32 .npy fixtures (inputs and torch's
// reference outputs) as the model runtime's FloatTensor.
#pragma once
#include <cstdint>  // int64_t
#include <string>   // std::string

#include <torchtpu/core/factories.hpp>  // from_data
#include <torchtpu/io/npy.hpp>     // read_npy, NpyArray
#include <torchtpu/jit/value.hpp>  // torchtpu::jit::FloatTensor

namespace jit_test {

/// The float32 array in `path` as a contiguous FloatTensor of its shape (a copy).
inline torchtpu::jit::FloatTensor npy_tensor(const std::string& path) {
  const torchtpu::NpyArray a = torchtpu::read_npy(path);
  torchtpu::Dims s;
  for (int64_t d : a.shape) s.push_back(d);
  return torchtpu::from_data(a.values<float>().data(), s);
}

}  // namespace jit_test
