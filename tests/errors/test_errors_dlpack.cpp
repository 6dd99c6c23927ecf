// tests/errors/test_errors_dlpack.cpp — bad DLPack capsules (docs/errors.md, section
// "Interop"). A refused capsule stays the caller's: its deleter has not run (checked for
// every row), so the caller can still free it; the tests free each one afterwards.
#include <catch2/catch.hpp>  // TEST_CASE, REQUIRE_THROWS_MATCHES

#include <cstdint>  // int64_t
#include <string>   // std::string
#include <vector>   // std::vector

#include <torchtpu/interop/dlpack.hpp>  // to_dlpack, from_dlpack, CopyMode
#include <torchtpu/torchtpu.hpp>        // the library

#include "error_matchers.hpp"  // terr::has_message

using namespace torchtpu;
using terr::has_message;

namespace {
/// A DLPack producer: 64 float-aligned bytes, a shape, optional strides, a deleter counter.
struct Capsule {
  alignas(8) unsigned char bytes[64] = {};
  std::vector<int64_t> shape, strides;
  DLManagedTensor m{};
  int deletes = 0;
  Capsule(DLDataType dtype, std::vector<int64_t> sizes, std::vector<int64_t> st = {}) : shape(std::move(sizes)), strides(std::move(st)) {
    DLTensor& d = m.dl_tensor;
    d.data = bytes;
    d.device = DLDevice{kDLCPU, 0};
    d.ndim = int(shape.size());
    d.dtype = dtype;
    d.shape = shape.data();
    d.strides = strides.empty() ? nullptr : strides.data();
    m.manager_ctx = this;
    m.deleter = [](DLManagedTensor* p) { ++static_cast<Capsule*>(p->manager_ctx)->deletes; };
  }
};
constexpr DLDataType f32{kDLFloat, 32, 1};
}  // namespace

TEST_CASE("errors/dlpack: bad capsules are refused and stay the caller's", "[errors]") {
  REQUIRE_THROWS_MATCHES(from_dlpack<float>(nullptr), ValueError, has_message({"from_dlpack", "null DLManagedTensor"}));
  {
    Capsule c(f32, {2});
    c.m.dl_tensor.device = DLDevice{kDLCUDA, 1};
    REQUIRE_THROWS_MATCHES(from_dlpack<float>(&c.m), ValueError, has_message({"from_dlpack", "device type 2", "id 1", "host memory"}));
    CHECK(c.deletes == 0);
  }
  {
    Capsule c(DLDataType{kDLComplex, 64, 1}, {2});
    REQUIRE_THROWS_MATCHES(from_dlpack(&c.m), TypeError, has_message({"from_dlpack", "code 5", "bits 64", "no torchtpu counterpart"}));
    Capsule v(DLDataType{kDLFloat, 32, 4}, {2});
    REQUIRE_THROWS_MATCHES(from_dlpack(&v.m), TypeError, has_message({"lanes 4"}));
    CHECK(c.deletes + v.deletes == 0);
  }
  {
    Capsule c(f32, {2});
    REQUIRE_THROWS_MATCHES(from_dlpack<int64_t>(&c.m), TypeError, has_message({"from_dlpack", "float32", "Tensor<int64>"}));
    REQUIRE_THROWS_MATCHES((from_dlpack<float, 2>(&c.m)), ShapeError, has_message({"Tensor<float32, 2>", "ndim 1"}));
    CHECK(c.deletes == 0);
  }
  {
    Capsule c(f32, {1, 1, 1, 1, 1, 1, 1, 1, 1});
    REQUIRE_THROWS_MATCHES(from_dlpack(&c.m), ShapeError, has_message({"ndim 9", "0..8"}));
    c.m.dl_tensor.ndim = -1;
    REQUIRE_THROWS_MATCHES(from_dlpack(&c.m), ShapeError, has_message({"ndim -1"}));
    c.m.dl_tensor.ndim = 2;
    c.m.dl_tensor.shape = nullptr;
    REQUIRE_THROWS_MATCHES(from_dlpack(&c.m), ValueError, has_message({"shape is null for ndim 2"}));
    CHECK(c.deletes == 0);
  }
  {
    Capsule c(f32, {2, -3});
    REQUIRE_THROWS_MATCHES(from_dlpack(&c.m), ShapeError, has_message({"negative size -3"}));
    Capsule h(f32, {int64_t(1) << 32, int64_t(1) << 32});
    REQUIRE_THROWS_MATCHES(from_dlpack(&h.m), ShapeError, has_message({"more elements than int64"}));
    Capsule s(f32, {2, 2}, {int64_t(1) << 62, 1});
    REQUIRE_THROWS_MATCHES(from_dlpack(&s.m), ValueError, has_message({"span more bytes than the address space"}));
    CHECK(c.deletes + h.deletes + s.deletes == 0);
  }
  {
    Capsule c(f32, {2});
    c.m.dl_tensor.data = nullptr;
    REQUIRE_THROWS_MATCHES(from_dlpack(&c.m), ValueError, has_message({"data is null", "2 elements"}));
    c.m.dl_tensor.data = c.bytes;
    c.m.dl_tensor.byte_offset = 2;
    REQUIRE_THROWS_MATCHES(from_dlpack(&c.m), ValueError, has_message({"byte_offset (2)", "not aligned", "4-byte"}));
    CHECK(c.deletes == 0);
  }
}

TEST_CASE("errors/dlpack: an export whose fields were edited to reach outside its storage", "[errors]") {
  Tensor<float> t = {1, 2, 3, 4};
  DLManagedTensor* m = to_dlpack(t);
  m->dl_tensor.shape[0] = 100;  // the export's own shape array
  REQUIRE_THROWS_MATCHES(from_dlpack<float>(m), ValueError, has_message({"torchtpu export", "[100]", "16-byte storage"}));
  m->dl_tensor.shape[0] = 4;
  Tensor<float> back = from_dlpack<float>(m);  // still the caller's: importing it now works
  CHECK(back.data_ptr() == t.data_ptr());
  REQUIRE_THROWS_MATCHES(to_dlpack(Tensor<float>()), ValueError, has_message({"to_dlpack", "undefined"}));
}

TEST_CASE("errors/negstride: negative strides in to_dlpack and from_dlpack", "[errors]") {
  const Tensor<float> x = {{0, 1, 2}, {3, 4, 5}};
  const Tensor<float> r = x.flip({0});  // [[3, 4, 5], [0, 1, 2]], strides [-3, 1]
  const std::string refused = "to_dlpack: the view with sizes [2, 3], strides [-3, 1] and dtype float32 has the "
                              "negative stride -3 on dim 0 of size 2, which from_dlpack and libtorch refuse; pass "
                              "CopyMode::if_needed to export a contiguous copy";
  REQUIRE_THROWS_MATCHES(to_dlpack(r), ValueError, has_message({refused}));  // the default never copies
  REQUIRE_THROWS_MATCHES(to_dlpack(r, CopyMode::never), ValueError, has_message({refused}));
  REQUIRE_THROWS_MATCHES(to_dlpack(x.flip({1})), ValueError, has_message({"strides [3, -1]", "stride -1 on dim 1 of size 3"}));
  CHECK(std::vector<float>(x.data_ptr(), x.data_ptr() + 6) == std::vector<float>{0, 1, 2, 3, 4, 5});
  // CopyMode::if_needed: a new row-major copy of the reversed rows (not an error).
  DLManagedTensor* m = to_dlpack(r, CopyMode::if_needed);
  CHECK(m->dl_tensor.data != static_cast<const void*>(x.data_ptr()));
  CHECK(std::vector<int64_t>(m->dl_tensor.strides, m->dl_tensor.strides + 2) == std::vector<int64_t>{3, 1});
  const float* p = static_cast<const float*>(m->dl_tensor.data);
  CHECK(std::vector<float>(p, p + 6) == std::vector<float>{3, 4, 5, 0, 1, 2});
  m->deleter(m);
  // A negative stride on a size-1 dim is never applied: shared, exported with the row-major stride.
  DLManagedTensor* one = to_dlpack(r.slice(0, 0, 1));  // row [3, 4, 5], strides [-3, 1]
  CHECK(one->dl_tensor.data == static_cast<const void*>(x.data_ptr() + 3));
  CHECK(one->dl_tensor.strides[0] == 3);
  one->deleter(one);

  // from_dlpack: a capsule with a negative stride is refused and stays the caller's.
  Capsule c(f32, {2, 3}, {-3, 1});
  REQUIRE_THROWS_MATCHES(from_dlpack<float>(&c.m), ValueError,
                         has_message({"from_dlpack: negative stride -3 is not supported ([-3, 1])"}));
  REQUIRE_THROWS_MATCHES(from_dlpack(&c.m), ValueError, has_message({"negative stride -3"}));
  CHECK(c.deletes == 0);
  CHECK(c.strides == std::vector<int64_t>{-3, 1});
}
