// tests/errors/test_errors_core.cpp — bad inputs to tensor construction, factories, element
// access and views (docs/errors.md, sections "Construction", "Factories", "Views"). Each case
// checks the exception type and the key part of its message, and where a tensor was involved
// that it is unchanged afterwards.
#include <catch2/catch.hpp>  // TEST_CASE, REQUIRE_THROWS_MATCHES

#include <cmath>    // NAN, INFINITY
#include <cstdint>  // int64_t
#include <limits>   // std::numeric_limits
#include <vector>   // std::vector

#include <torchtpu/torchtpu.hpp>  // the library

#include "error_matchers.hpp"  // terr::has_message

using namespace torchtpu;
using terr::has_message;

#if defined(__SANITIZE_ADDRESS__)
// ASan aborts on allocations above its limit unless told to fail them like malloc does (the
// 2^60-byte row), as tests/core/test_size_overflow.cpp.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
#endif

namespace {
/// Values of a float tensor, row-major (for "unchanged" checks).
std::vector<float> values(const Tensor<float>& t) {
  const Tensor<float> c = t.contiguous();
  return std::vector<float>(c.data_ptr(), c.data_ptr() + c.numel());
}
}  // namespace

TEST_CASE("errors/construction: ragged initializer lists name both sizes", "[errors]") {
  REQUIRE_THROWS_MATCHES((Tensor<float>{{1, 2}, {3}}), ShapeError, has_message({"ragged nested initializer list (sizes 2 and 1 at depth 1)"}));
  REQUIRE_THROWS_MATCHES((Tensor<float>{{{1, 2}, {3, 4}}, {{5, 6}}}), ShapeError, has_message({"ragged"}));
}

TEST_CASE("errors/construction: a view outside its storage names sizes, strides, offset, dtype", "[errors]") {
  Storage s = allocate_storage(6 * sizeof(float));  // 6 floats
  REQUIRE_THROWS_MATCHES(Tensor<float>(s, Dims{2, 4}, Dims{4, 1}, 0), ShapeError,
                         has_message({"sizes [2, 4]", "strides [4, 1]", "float32"}));
  REQUIRE_THROWS_MATCHES(Tensor<float>(s, Dims{2, 3}, Dims{3}, 0), ShapeError,
                         has_message({"different numbers of sizes and strides"}));
  REQUIRE_THROWS_MATCHES(Tensor<float>(s, Dims{2}, Dims{1}, -1), ShapeError, has_message({"negative storage offset"}));
  REQUIRE_THROWS_MATCHES(Tensor<float>(s, Dims{-2}, Dims{1}, 0), ShapeError, has_message({"negative size"}));
  REQUIRE_THROWS_MATCHES(Tensor<float>(s, Dims{2}, Dims{1}, 5), ShapeError, has_message({"storage offset 5"}));
  CHECK_NOTHROW(Tensor<float>(s, Dims{2, 3}, Dims{3, 1}, 0));  // exactly fits
}

TEST_CASE("errors/construction: static rank mismatch and rank above 8", "[errors]") {
  Tensor<float> d = zeros<float>({2, 3, 4});
  REQUIRE_THROWS_MATCHES((Tensor<float, 2>(d)), ShapeError, has_message({"Tensor<float32, 2>", "[2, 3, 4]"}));
  REQUIRE_THROWS_MATCHES(zeros<float>(Dims{1, 1, 1, 1, 1, 1, 1, 1, 1}), ShapeError,
                         has_message({"rank exceeds the maximum rank 8"}));
  Tensor<float> r8 = zeros<float>(Dims{1, 1, 1, 1, 1, 1, 1, 1});
  REQUIRE_THROWS_MATCHES(r8.unsqueeze(0), ShapeError, has_message({"maximum rank 8"}));
  CHECK(r8.dim() == 8);
}

TEST_CASE("errors/construction: from_blob", "[errors]") {
  float data[6] = {1, 2, 3, 4, 5, 6};
  REQUIRE_THROWS_MATCHES(from_blob(data, Dims{2, 3}, [](void*) {}, Dims{3}), ShapeError,
                         has_message({"from_blob", "strides [3]", "sizes [2, 3]"}));
  REQUIRE_THROWS_MATCHES(from_blob(data, Dims{-1, 3}), ShapeError, has_message({"from_blob", "negative size", "[-1, 3]"}));
  const int64_t big = std::numeric_limits<int64_t>::max() / 2;
  REQUIRE_THROWS_MATCHES(from_blob(data, Dims{3, 3}, [](void*) {}, Dims{big, 1}), ShapeError,
                         has_message({"from_blob", "overflow int64"}));
  // The deleter of a refused blob never runs (the caller still owns the memory).
  int deleted = 0;
  CHECK_THROWS_AS(from_blob(data, Dims{2}, [&](void*) { ++deleted; }, Dims{1, 1}), ShapeError);
  CHECK(deleted == 0);
}

TEST_CASE("errors/factories: negative and huge sizes", "[errors]") {
  REQUIRE_THROWS_MATCHES(zeros<float>({2, -1}), ShapeError, has_message({"negative size", "[2, -1]"}));
  REQUIRE_THROWS_MATCHES(ones<float>({-3}), ShapeError, has_message({"negative size", "[-3]"}));
  REQUIRE_THROWS_MATCHES(full<float>({-3}, 1.0f), ShapeError, has_message({"negative size", "[-3]"}));
  REQUIRE_THROWS_MATCHES(Tensor<float>::empty({-1}), ShapeError, has_message({"empty", "negative size"}));
  const int64_t big = int64_t(1) << 40;
  REQUIRE_THROWS_MATCHES(empty<float>({big, big}), ValueError,
                         has_message({"overflowed", "[1099511627776, 1099511627776]", "4-byte elements"}));
  REQUIRE_THROWS_MATCHES(zeros<double>({big, 1 << 22}), ValueError, has_message({"overflowed", "8-byte elements"}));
  // 2^60 bytes fits in size_t but not in memory: AllocationError, a std::bad_alloc naming the size.
  REQUIRE_THROWS_MATCHES(empty<float>({int64_t(1) << 58}), std::bad_alloc,
                         has_message({"cannot allocate", "bytes of host memory"}));
  CHECK(zeros<float>({0, 5}).numel() == 0);  // zero sizes are fine
}

TEST_CASE("errors/factories: arange, linspace, eye", "[errors]") {
  REQUIRE_THROWS_MATCHES(arange<float>(0, 5, 0), ValueError, has_message({"arange", "step must be nonzero"}));
  REQUIRE_THROWS_MATCHES(arange<float>(0, 5, NAN), ValueError, has_message({"arange", "NaN"}));
  REQUIRE_THROWS_MATCHES(arange<float>(0, 5, -1), ValueError, has_message({"arange", "inconsistent", "step -1"}));
  REQUIRE_THROWS_MATCHES(arange<float>(0, INFINITY), ValueError, has_message({"arange", "must be finite"}));
  REQUIRE_THROWS_MATCHES(arange<float>(0, 1e300, 1e-300), ValueError, has_message({"arange", "overflow"}));
  CHECK(arange<float>(5, 5).numel() == 0);  // an empty range is fine, as in torch
  REQUIRE_THROWS_MATCHES(linspace<float>(0, 1, -1), ValueError, has_message({"linspace", "non-negative", "-1"}));
  CHECK(linspace<float>(0, 1, 0).numel() == 0);
  REQUIRE_THROWS_MATCHES(eye<float>(-2), ValueError, has_message({"eye", "n must be", "-2"}));
  REQUIRE_THROWS_MATCHES(eye<float>(3, -5), ValueError, has_message({"eye", "m must be", "-5"}));
  CHECK(eye<float>(2, 3).sizes() == Dims{2, 3});
}

TEST_CASE("errors/access: at, item, undefined tensors", "[errors]") {
  Tensor<float> t = {{1, 2, 3}, {4, 5, 6}};
  REQUIRE_THROWS_MATCHES(t.at(2, 0), IndexError, has_message({"at", "index 2", "dim 0", "size 2", "[2, 3]"}));
  REQUIRE_THROWS_MATCHES(t.at(0, -4), IndexError, has_message({"index -4", "dim 1"}));
  REQUIRE_THROWS_MATCHES(t.at(0), IndexError, has_message({"1 indices", "[2, 3]"}));
  REQUIRE_THROWS_MATCHES(t.item(), ShapeError, has_message({"item: a tensor with 6 elements cannot be converted to a scalar"}));
  REQUIRE_THROWS_MATCHES(zeros<float>({0}).item(), ShapeError, has_message({"item: a tensor with 0 elements"}));
  Tensor<float> u;
  REQUIRE_THROWS_MATCHES(u.at(0), ValueError, has_message({"undefined"}));
  CHECK(values(t) == std::vector<float>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("errors/views: bad dims, indices and shapes leave the tensor unchanged", "[errors]") {
  Tensor<float> t = {{1, 2, 3}, {4, 5, 6}};
  const std::vector<float> before = values(t);
  REQUIRE_THROWS_MATCHES(t.select(0, 2), IndexError, has_message({"select", "index 2", "size 2", "[2, 3]"}));
  REQUIRE_THROWS_MATCHES(t.select(2, 0), IndexError, has_message({"select", "dimension 2", "range"}));
  REQUIRE_THROWS_MATCHES(t[-3], IndexError, has_message({"select", "index -3"}));
  REQUIRE_THROWS_MATCHES(t.slice(0, 0, 2, 0), ValueError, has_message({"slice", "step must be positive", "0"}));
  REQUIRE_THROWS_MATCHES(t.slice(0, 0, 2, -1), ValueError, has_message({"slice", "got -1"}));
  REQUIRE_THROWS_MATCHES(t.slice(-3, 0, 1), IndexError, has_message({"slice", "dimension -3"}));
  CHECK(t.slice(1, 5, 9).numel() == 0);  // out-of-range bounds clamp, as Python slices
  REQUIRE_THROWS_MATCHES(t.narrow(1, 2, 2), IndexError, has_message({"narrow", "start 2", "length 2", "size 3", "[2, 3]"}));
  REQUIRE_THROWS_MATCHES(t.transpose(0, 2), IndexError, has_message({"transpose", "dimension 2"}));
  REQUIRE_THROWS_MATCHES(t.permute({0}), ShapeError, has_message({"permute", "[0]", "[2, 3]"}));
  REQUIRE_THROWS_MATCHES(t.permute({1, 1}), ShapeError, has_message({"permute", "repeated dim", "[1, 1]"}));
  REQUIRE_THROWS_MATCHES(t.permute({0, 2}), IndexError, has_message({"permute", "dimension 2"}));
  REQUIRE_THROWS_MATCHES(zeros<float>({2, 2, 2}).t(), ShapeError, has_message({"t:", "<= 2 dimensions", "[2, 2, 2]"}));
  REQUIRE_THROWS_MATCHES(t.view({4, 2}), ShapeError, has_message({"view", "[4, 2]", "size 6"}));
  REQUIRE_THROWS_MATCHES(t.view({-1, -1}), ShapeError, has_message({"view", "only one dimension can be inferred"}));
  REQUIRE_THROWS_MATCHES(t.view({-2, 3}), ShapeError, has_message({"view", "invalid shape [-2, 3]"}));
  REQUIRE_THROWS_MATCHES(t.view({-1, 4}), ShapeError, has_message({"view", "[-1, 4]", "size 6"}));
  REQUIRE_THROWS_MATCHES(t.t().view({6}), ShapeError, has_message({"view", "not compatible with input strides", "reshape"}));
  CHECK(t.t().reshape({6}).sizes() == Dims{6});  // reshape copies where view cannot
  REQUIRE_THROWS_MATCHES(t.reshape({5}), ShapeError, has_message({"reshape", "[5]", "size 6"}));
  REQUIRE_THROWS_MATCHES(t.flatten(1, 0), IndexError, has_message({"flatten", "start_dim"}));
  REQUIRE_THROWS_MATCHES(t.size(2), IndexError, has_message({"size: dimension 2 out of range"}));
  REQUIRE_THROWS_MATCHES(t.squeeze(2), IndexError, has_message({"squeeze", "dimension 2"}));
  REQUIRE_THROWS_MATCHES(t.unsqueeze(4), IndexError, has_message({"unsqueeze", "dimension 4"}));
  REQUIRE_THROWS_MATCHES(t.unsqueeze(-4), IndexError, has_message({"unsqueeze", "dimension -4"}));
  REQUIRE_THROWS_MATCHES(t.expand({3}), ShapeError, has_message({"expand", "[3]", "[2, 3]"}));
  REQUIRE_THROWS_MATCHES(t.expand({2, 4}), ShapeError, has_message({"expand", "[2, 3]", "[2, 4]"}));
  REQUIRE_THROWS_MATCHES(t.expand({-1, 2, 3}), ShapeError, has_message({"expand", "-1 not allowed"}));
  REQUIRE_THROWS_MATCHES(t.expand({2, -2}), ShapeError, has_message({"expand", "size -2", "negative"}));
  CHECK(t.sizes() == Dims{2, 3});
  CHECK(t.strides() == Dims{3, 1});
  CHECK(values(t) == before);
}
