// Printing: the text of fmt::format("{}", t) and operator<< against torch's repr (strings
// produced once with libtorch 1.13 `print(t)`), for every dtype, empty and summarised tensors.
#include <sstream>  // std::ostringstream

#include "../ops/testing.hpp"  // Catch2, torchtpu

using namespace torchtpu;

namespace {
template <class E>
std::string text(const E& e) { return fmt::format("{}", e); }
}  // namespace

TEST_CASE("small tensors print like torch", "[core][format]") {
  CHECK(text(Tensor<float>{{1, 2}, {3, 4}}) == "tensor([[1., 2.],\n        [3., 4.]])");
  CHECK(text(Tensor<float>{1.5f, -2.25f, 3.0f}) == "tensor([ 1.5000, -2.2500,  3.0000])");
  CHECK(text(Tensor<float>{1e-5f, 1.0f}) == "tensor([1.0000e-05, 1.0000e+00])");
  CHECK(text(Tensor<float>{1e9f, 1.0f}) == "tensor([1.0000e+09, 1.0000e+00])");
  CHECK(text(Tensor<int64_t>{1, -20, 300}) == "tensor([  1, -20, 300])");
  CHECK(text(Tensor<int32_t>{1, 2}) == "tensor([1, 2], dtype=torch.int32)");
  CHECK(text(Tensor<bool>{true, false}) == "tensor([ True, False])");
  CHECK(text(Tensor<bfloat16>{bfloat16(1.5f), bfloat16(2.0f)}) == "tensor([1.5000, 2.0000], dtype=torch.bfloat16)");
  CHECK(text(Tensor<half>{half(1.5f), half(2.0f)}) == "tensor([1.5000, 2.0000], dtype=torch.float16)");
  CHECK(text(Tensor<double>{1.5, 2.0}) == "tensor([1.5000, 2.0000], dtype=torch.float64)");
  CHECK(text(Tensor<uint8_t>{1, 255}) == "tensor([  1, 255], dtype=torch.uint8)");
  CHECK(text(full<float>({}, 3.5f)) == "tensor(3.5000)");
  CHECK(text(Tensor<float>{NAN, INFINITY, -1.0f}) == "tensor([nan, inf, -1.])");
  CHECK(text(arange<float>(8).reshape({2, 2, 2})) ==
        "tensor([[[0., 1.],\n         [2., 3.]],\n\n        [[4., 5.],\n         [6., 7.]]])");
}

TEST_CASE("empty tensors print their size and dtype", "[core][format][empty]") {
  CHECK(text(zeros<float>({0, 3})) == "tensor([], size=(0, 3))");
  CHECK(text(zeros<float>({0})) == "tensor([])");
  CHECK(text(zeros<int32_t>({2, 0})) == "tensor([], size=(2, 0), dtype=torch.int32)");
  CHECK(text(zeros<int64_t>({0})) == "tensor([], dtype=torch.int64)");
  CHECK(text(Tensor<float>()) == "tensor(undefined)");
}

TEST_CASE("long rows wrap at 80 columns; large tensors are summarised", "[core][format]") {
  CHECK(text(arange<float>(1001)) == "tensor([   0.,    1.,    2.,  ...,  998.,  999., 1000.])");
  CHECK(text(arange<float>(30) / 7.0f) ==
        "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n"
        "        1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429, 2.2857, 2.4286,\n"
        "        2.5714, 2.7143, 2.8571, 3.0000, 3.1429, 3.2857, 3.4286, 3.5714, 3.7143,\n"
        "        3.8571, 4.0000, 4.1429])");
  CHECK(text(arange<float>(2000).reshape({2, 1000})) ==
        "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 9.9700e+02, 9.9800e+02,\n"
        "         9.9900e+02],\n"
        "        [1.0000e+03, 1.0010e+03, 1.0020e+03,  ..., 1.9970e+03, 1.9980e+03,\n"
        "         1.9990e+03]])");
  CHECK(text(arange<float>(3000).reshape({1000, 3})).find("        ...,\n") != std::string::npos);
}

TEST_CASE("expressions print their value; operator<< matches fmt", "[core][format]") {
  Tensor<float> a = {1, 2};
  CHECK(text(a * 2.0f + 1.0f) == "tensor([3., 5.])");
  CHECK(text(a.sum()) == "tensor(3.)");
  CHECK(text(a > 1.5f) == "tensor([False,  True])");
  std::ostringstream os;
  os << a.t() << ' ' << (a - 1.0f);
  CHECK(os.str() == "tensor([1., 2.]) tensor([0., 1.])");
}

TEST_CASE("devices print as torch::Device does", "[core][format]") {
  std::ostringstream os;
  os << torchtpu::Device("cpu") << " " << torchtpu::Device("tpu:1") << " " << torchtpu::Tensor<float>{1.0f}.device();
  CHECK(os.str() == "cpu tpu:1 cpu");
}
