// tests/device_ops/test_device_flip.cpp — views with negative strides (`flip`, issue 12 item 4)
// on the PJRT device: a reversed host tensor uploaded, a device tensor flipped and read by
// elementwise ops, reductions and matmul (lowered as `stablehlo.reverse` of the view with
// positive strides), against the same expressions on the cpu. Values are exact (small
// integers), so the comparison has no tolerance.
#include "helpers.hpp"  // check_close, test_device, test_input

using namespace torchtpu;

TEST_CASE("flipped views on the device agree with the cpu", "[pjrt][flip]") {
  const Tensor<float> x = {{0, 1, 2}, {3, 4, 5}};
  // a reversed host tensor uploads in its logical order
  check_close(Tensor<float>(x.flip({0}).to(test_device())), Tensor<float>(x.flip({0}).contiguous()), 0.0);
  auto d = x.to(test_device());
  check_close(Tensor<float>(d.flip({0})), Tensor<float>{{3, 4, 5}, {0, 1, 2}}, 0.0);
  check_close(Tensor<float>(d.flip({1}) + 1.0), Tensor<float>{{3, 2, 1}, {6, 5, 4}}, 0.0);
  check_close(Tensor<float>(d.flip({0, 1}) * d), Tensor<float>{{0, 4, 6}, {6, 4, 0}}, 0.0);
  check_close(Tensor<float>(d.flip({0}).sum({1})), Tensor<float>{12, 3}, 0.0);
  check_close(Tensor<float>(d.flip({1}).t().slice(0, 0, 2)), Tensor<float>{{2, 5}, {1, 4}}, 0.0);
  // a strided slice of a flipped view: steps and reversal together
  const Tensor<float> g = test_input({6, 9}, 51);
  auto dg = g.to(test_device());
  check_close(Tensor<float>(dg.flip({1}).slice(1, 1, 9, 3)), Tensor<float>(g.flip({1}).slice(1, 1, 9, 3)), 0.0);
  // small integers: exact in the bf16 operands the TPU (and the emulator) multiply by default
  check_close(Tensor<float>(matmul(d.flip({0}), d.flip({1}).t())), Tensor<float>{{10, 46}, {1, 10}}, 0.0);
}
