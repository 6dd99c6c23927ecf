// tests/fuzz/fuzz_npy.cpp — libFuzzer harness for the .npy reader (torchtpu/io/npy.hpp).
// Any input must either decode or throw a torchtpu Error (ValueError/TypeError). A decoded
// array must keep the documented invariant data.size() == numel() * dtype_size(dtype), and
// writing it back (to_npy_bytes) and decoding again must give the same array.
#include <cstddef>  // size_t, std::byte
#include <cstdint>  // uint8_t
#include <span>     // std::span

#include <torchtpu/io/npy.hpp>  // parse_npy, to_npy_bytes, NpyArray

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace torchtpu;
  NpyArray a;
  try {
    a = parse_npy(std::span<const std::byte>(reinterpret_cast<const std::byte*>(data), size));
  } catch (const Error&) {
    return 0;
  }
  if (a.data.size() != static_cast<size_t>(a.numel()) * dtype_size(a.dtype)) __builtin_trap();
  const std::vector<std::byte> again = to_npy_bytes(a.dtype, a.shape, a.data);
  const NpyArray b = parse_npy(again);
  if (b.dtype != a.dtype || b.shape != a.shape || b.data != a.data) __builtin_trap();
  return 0;
}
