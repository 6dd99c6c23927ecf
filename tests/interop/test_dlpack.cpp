// DLPack import/export without libtorch: a hand-made producer (strides == NULL, byte_offset,
// bool, bfloat16), deleter counting, round trips, lifetimes and every error case.
// The exchange with libtorch's at::toDLPack / at::fromDLPack is in test_torch.cpp.
#include <catch2/catch.hpp>  // Catch2 v2

#include <cstdint>  // int64_t, uint8_t
#include <cstring>  // std::memcpy
#include <vector>   // std::vector

#include <torchtpu/interop/dlpack.hpp>  // to_dlpack, from_dlpack
#include <torchtpu/torchtpu.hpp>        // the library

using namespace torchtpu;

namespace {

/// A DLPack producer owning a byte buffer; counts how often its deleter runs.
struct Producer {
  std::vector<unsigned char> bytes;
  std::vector<int64_t> shape, strides;
  DLManagedTensor managed{};
  int* deletes = nullptr;
};

void producer_deleter(DLManagedTensor* m) {
  auto* p = static_cast<Producer*>(m->manager_ctx);
  ++*p->deletes;
  delete p;
}

/// A managed tensor of `nbytes` zeroed bytes; `strides` empty means NULL strides.
DLManagedTensor* make_producer(int* deletes, DLDataType dtype, std::vector<int64_t> shape,
                               std::vector<int64_t> strides, size_t nbytes, uint64_t byte_offset = 0) {
  auto* p = new Producer;
  p->bytes.assign(nbytes, 0);
  p->shape = std::move(shape);
  p->strides = std::move(strides);
  p->deletes = deletes;
  DLTensor& d = p->managed.dl_tensor;
  d.data = p->bytes.data();
  d.device = DLDevice{kDLCPU, 0};
  d.ndim = int(p->shape.size());
  d.dtype = dtype;
  d.shape = p->shape.data();
  d.strides = p->strides.empty() ? nullptr : p->strides.data();
  d.byte_offset = byte_offset;
  p->managed.manager_ctx = p;
  p->managed.deleter = &producer_deleter;
  return &p->managed;
}

template <class T>
T* producer_data(DLManagedTensor* m) {
  return reinterpret_cast<T*>(static_cast<char*>(m->dl_tensor.data) + m->dl_tensor.byte_offset);
}

}  // namespace

TEST_CASE("dtype table round-trips through DLPack codes", "[interop][dlpack]") {
  for (ScalarType t : {ScalarType::Bool, ScalarType::UInt8, ScalarType::Int32, ScalarType::Int64,
                       ScalarType::Half, ScalarType::BFloat16, ScalarType::Float, ScalarType::Double})
    CHECK(from_dlpack_dtype(to_dlpack_dtype(t)) == t);
  CHECK(to_dlpack_dtype(ScalarType::BFloat16).code == kDLBfloat);
  CHECK(to_dlpack_dtype(ScalarType::Bool).code == 6);  // kDLBool in DLPack >= 0.8
  CHECK(to_dlpack_dtype(ScalarType::Half).bits == 16);
  CHECK_THROWS_AS(from_dlpack_dtype(DLDataType{kDLInt, 8, 1}), TypeError);
  CHECK_THROWS_AS(from_dlpack_dtype(DLDataType{kDLComplex, 64, 1}), TypeError);
  CHECK_THROWS_AS(from_dlpack_dtype(DLDataType{kDLFloat, 32, 4}), TypeError);
}

TEST_CASE("from_dlpack: strides == NULL is compact row-major; deleter runs once", "[interop][dlpack]") {
  int deletes = 0;
  DLManagedTensor* m = make_producer(&deletes, DLDataType{kDLFloat, 32, 1}, {2, 3}, {}, 6 * sizeof(float));
  float* src = producer_data<float>(m);
  for (int i = 0; i < 6; ++i) src[i] = float(i) + 0.5f;
  {
    Tensor<float> t = from_dlpack<float>(m);
    CHECK(t.data_ptr() == src);
    CHECK(t.sizes() == Dims{2, 3});
    CHECK(t.strides() == Dims{3, 1});
    CHECK(t.at(1, 2) == 5.5f);
    Tensor<float> view = t.t();  // a second handle on the same storage
    t = Tensor<float>();
    CHECK(deletes == 0);
    CHECK(view.at(2, 1) == 5.5f);
    view.at(0, 0) = 42.0f;  // writes reach the producer's memory
    CHECK(src[0] == 42.0f);
  }
  CHECK(deletes == 1);
}

TEST_CASE("from_dlpack honours byte_offset and explicit strides", "[interop][dlpack]") {
  int deletes = 0;
  // A 3 x 2 column-major view starting 2 doubles into the buffer: element (i, j) at 2 + i + 3 j.
  DLManagedTensor* m = make_producer(&deletes, DLDataType{kDLFloat, 64, 1}, {3, 2}, {1, 3},
                                     8 * sizeof(double), 2 * sizeof(double));
  auto* base = reinterpret_cast<double*>(m->dl_tensor.data);
  for (int i = 0; i < 8; ++i) base[i] = 10.0 * i;
  {
    Tensor<double> t = from_dlpack<double>(m);
    CHECK(t.data_ptr() == base + 2);
    CHECK(t.strides() == Dims{1, 3});
    CHECK(t.at(0, 0) == 20.0);
    CHECK(t.at(2, 1) == 70.0);  // 2 + 2 + 3 = 7
    Tensor<double> s = t.sum({0});  // fused reduction over the borrowed view
    CHECK(s.at(0) == 20.0 + 30.0 + 40.0);
    CHECK(s.at(1) == 50.0 + 60.0 + 70.0);
  }
  CHECK(deletes == 1);
}

TEST_CASE("from_dlpack: bool (kDLBool) and bfloat16 (kDLBfloat)", "[interop][dlpack]") {
  int deletes = 0;
  DLManagedTensor* mb = make_producer(&deletes, DLDataType{6, 8, 1}, {4}, {}, 4);
  bool* b = producer_data<bool>(mb);
  b[1] = true;
  b[3] = true;
  AnyTensor any = from_dlpack(mb);
  CHECK(any.dtype() == ScalarType::Bool);
  CHECK(any.get<bool>().at(1));
  CHECK_FALSE(any.get<bool>().at(2));
  CHECK(any.data_ptr() == b);

  DLManagedTensor* mh = make_producer(&deletes, DLDataType{kDLBfloat, 16, 1}, {2}, {1}, 4);
  bfloat16* h = producer_data<bfloat16>(mh);
  h[0] = bfloat16(1.5f);
  h[1] = bfloat16(-2.0f);
  Tensor<bfloat16> tb = from_dlpack<bfloat16>(mh);
  CHECK(float(tb.at(0)) == 1.5f);
  CHECK(float(tb.at(1)) == -2.0f);
  any = AnyTensor();
  tb = Tensor<bfloat16>();
  CHECK(deletes == 2);
}

TEST_CASE("from_dlpack errors leave ownership with the caller", "[interop][dlpack]") {
  int deletes = 0;
  DLManagedTensor* m = make_producer(&deletes, DLDataType{kDLInt, 64, 1}, {2, 2}, {}, 32);
  CHECK_THROWS_AS(from_dlpack<float>(m), TypeError);
  try {
    (void)from_dlpack<float>(m);
  } catch (const TypeError& e) {
    CHECK_THAT(e.what(), Catch::Contains("int64") && Catch::Contains("float32"));
  }
  CHECK_THROWS_AS((from_dlpack<int64_t, 3>(m)), ShapeError);
  m->dl_tensor.device = DLDevice{kDLCUDA, 0};
  CHECK_THROWS_AS(from_dlpack(m), ValueError);
  m->dl_tensor.device = DLDevice{kDLCPU, 0};
  m->dl_tensor.dtype = DLDataType{kDLFloat, 32, 2};
  CHECK_THROWS_AS(from_dlpack(m), TypeError);
  m->dl_tensor.dtype = DLDataType{kDLInt, 64, 1};
  int64_t neg_strides[2] = {-2, 1};
  m->dl_tensor.strides = neg_strides;
  CHECK_THROWS_AS(from_dlpack(m), ValueError);
  m->dl_tensor.strides = nullptr;
  m->dl_tensor.byte_offset = 4;  // not a multiple of 8
  CHECK_THROWS_AS(from_dlpack(m), ValueError);
  m->dl_tensor.byte_offset = 0;
  m->dl_tensor.ndim = 9;
  CHECK_THROWS_AS(from_dlpack(m), ShapeError);
  m->dl_tensor.ndim = 2;
  CHECK_THROWS_AS(from_dlpack(static_cast<DLManagedTensor*>(nullptr)), ValueError);
  CHECK(deletes == 0);
  {
    Tensor<int64_t> ok = from_dlpack<int64_t>(m);  // still intact after the failed attempts
    CHECK(ok.numel() == 4);
  }
  CHECK(deletes == 1);
}

TEST_CASE("from_dlpack rejects what tests/fuzz/fuzz_dlpack found (fuzz reproducers)", "[interop][dlpack]") {
  // tests/fuzz/corpus/dlpack/repro_*: each used to be undefined behaviour or an out-of-bounds view.
  int deletes = 0;
  DLManagedTensor* m = make_producer(&deletes, DLDataType{kDLFloat, 32, 1}, {2, 3}, {}, 24);
  int64_t* shape = m->dl_tensor.shape;
  // repro_numel_overflow: sizes whose product overflows int64 (also with a 0 size: strides, numel())
  shape[0] = int64_t(1) << 40;
  shape[1] = int64_t(1) << 40;
  CHECK_THROWS_AS(from_dlpack(m), ShapeError);
  m->dl_tensor.ndim = 2;
  int64_t three[3] = {int64_t(1) << 40, 0, int64_t(1) << 40};
  m->dl_tensor.shape = three;
  m->dl_tensor.ndim = 3;
  CHECK_THROWS_AS(from_dlpack(m), ShapeError);
  m->dl_tensor.shape = shape;
  m->dl_tensor.ndim = 2;
  shape[0] = 2;
  shape[1] = 3;
  // a span (sizes - 1) * strides that overflows
  int64_t huge_strides[2] = {int64_t(1) << 62, 1};
  m->dl_tensor.strides = huge_strides;
  shape[0] = 8;
  CHECK_THROWS_AS(from_dlpack(m), ValueError);
  shape[0] = 2;
  m->dl_tensor.strides = nullptr;
  // repro_null_data_byte_offset: data NULL with elements (and a byte_offset)
  void* data = m->dl_tensor.data;
  m->dl_tensor.data = nullptr;
  m->dl_tensor.byte_offset = 44;
  CHECK_THROWS_AS(from_dlpack(m), ValueError);
  m->dl_tensor.byte_offset = 0;
  m->dl_tensor.data = data;
  // repro_device_type_beyond_enum: a device code newer than this DLPack header's enum
  const int32_t newer_device = 20;
  std::memcpy(&m->dl_tensor.device.device_type, &newer_device, sizeof newer_device);
  CHECK_THROWS_AS(from_dlpack(m), ValueError);
  m->dl_tensor.device = DLDevice{kDLCPU, 0};
  CHECK(deletes == 0);
  {
    Tensor<float> ok = from_dlpack<float>(m);
    CHECK(ok.numel() == 6);
  }
  CHECK(deletes == 1);

  // repro_own_export_outside_storage: a torchtpu export whose fields were edited to reach
  // outside its storage is refused (and stays the caller's); an edit that stays inside works.
  Tensor<float> t = arange<float>(4.0);
  DLManagedTensor* e = to_dlpack(t);
  e->dl_tensor.shape[0] = 5;
  CHECK_THROWS_AS(from_dlpack(e), ValueError);
  e->dl_tensor.shape[0] = 2;
  e->dl_tensor.strides[0] = 4;  // elements 0 and 4 of 4
  CHECK_THROWS_AS(from_dlpack(e), ValueError);
  e->dl_tensor.byte_offset = 8;
  e->dl_tensor.strides[0] = 1;
  Tensor<float> tail = from_dlpack<float>(e);
  CHECK(tail.data_ptr() == t.data_ptr() + 2);
  CHECK(tail.storage_offset() == 2);
  CHECK(tail[1].item() == 3.0f);
}

TEST_CASE("from_dlpack: a view the tensor constructor refuses leaves the capsule the caller's", "[interop][dlpack]") {
  // tests/fuzz/corpus/dlpack/repro_view_check_after_ownership: 6402105296169785560 bf16
  // elements span 1.28e19 bytes, which fits size_t (import_dlpack's own check) but not int64
  // byte offsets (the tensor's view check). The view check ran after the capsule was adopted,
  // so the error path called the deleter although the caller still owned `m`.
  int deletes = 0;
  DLManagedTensor* m = make_producer(&deletes, DLDataType{kDLBfloat, 16, 1}, {4}, {}, 8);
  int64_t* shape = m->dl_tensor.shape;
  shape[0] = 6402105296169785560;
  CHECK_THROWS_WITH(from_dlpack(m), Catch::Contains("overflows int64 byte offsets"));
  CHECK_THROWS_AS(from_dlpack<bfloat16>(m), ShapeError);
  CHECK(deletes == 0);
  shape[0] = 4;
  {
    Tensor<bfloat16> ok = from_dlpack<bfloat16>(m);  // still intact after the failed attempts
    CHECK(ok.numel() == 4);
  }
  CHECK(deletes == 1);
}

TEST_CASE("to_dlpack shares memory; the consumer's deleter releases it", "[interop][dlpack]") {
  // example-begin dlpack-roundtrip
  Tensor<float> x = arange<float>(12).reshape({3, 4});
  Tensor<float> v = x.t().slice(0, 1, 3);  // [2, 3] view, strides [1, 4], offset 1
  DLManagedTensor* m = to_dlpack(v);        // no copy: the capsule points at x's memory
  CHECK(m->dl_tensor.data == v.data_ptr());
  CHECK(m->dl_tensor.byte_offset == 0);
  CHECK(m->dl_tensor.ndim == 2);
  CHECK(m->dl_tensor.strides[0] == 1);
  CHECK(m->dl_tensor.strides[1] == 4);
  Tensor<float> back = from_dlpack<float>(m);  // consumes m; same storage again
  CHECK(back.storage().get() == x.storage().get());
  CHECK(back.storage_offset() == 1);
  CHECK(back.at(1, 2) == x.at(2, 2));
  // example-end dlpack-roundtrip
}

TEST_CASE("to_dlpack: the tensor may die before the capsule", "[interop][dlpack]") {
  DLManagedTensor* m = nullptr;
  {
    Tensor<int32_t> x = arange<int32_t>(5);
    m = to_dlpack(x);
    CHECK(x.storage().use_count() == 2);  // x and the capsule
  }
  const auto* p = static_cast<const int32_t*>(m->dl_tensor.data);
  CHECK(p[4] == 4);  // still alive (ASan would flag a use after free)
  CHECK(m->dl_tensor.shape[0] == 5);
  m->deleter(m);  // the last reference: frees the memory
}

TEST_CASE("to_dlpack / from_dlpack: every dtype, AnyTensor, empty and 0-d", "[interop][dlpack]") {
  auto roundtrip = [](const AnyTensor& a) {
    DLManagedTensor* m = to_dlpack(a);
    CHECK(from_dlpack_dtype(m->dl_tensor.dtype) == a.dtype());
    AnyTensor b = from_dlpack(m);
    CHECK(b.dtype() == a.dtype());
    CHECK(b.data_ptr() == a.data_ptr());
    CHECK(b.sizes() == a.sizes());
    CHECK(b.strides() == a.strides());
  };
  roundtrip(ones<bool>({3}));
  roundtrip(ones<uint8_t>({3}));
  roundtrip(ones<int32_t>({3}));
  roundtrip(ones<int64_t>({3}));
  roundtrip(ones<half>({3}));
  roundtrip(ones<bfloat16>({3}));
  roundtrip(ones<float>({3}));
  roundtrip(ones<double>({3}));
  roundtrip(zeros<float>({0, 4}));
  roundtrip(full<double>({}, 2.5));
}

TEST_CASE("to_dlpack: device tensors need copy_to_host", "[interop][dlpack]") {
  // A fake device tensor: no host pointer, a download callback that fills in values.
  auto s = std::make_shared<StorageImpl>();
  s->nbytes = 3 * sizeof(float);
  s->device = Device("tpu:0");
  static int downloads;  // a static: download is a plain function pointer (no captures)
  downloads = 0;
  s->download = [](const StorageImpl&, void* dst) {
    const float v[3] = {1.0f, 2.0f, 3.0f};
    std::memcpy(dst, v, sizeof v);
    ++downloads;
  };
  Tensor<float> d(s, Dims{3}, Dims{1}, 0);
  CHECK_THROWS_AS(to_dlpack(d), ValueError);
  CHECK(downloads == 0);
  DLManagedTensor* m = to_dlpack(d, /*copy_to_host=*/true);
  CHECK(downloads == 1);
  Tensor<float> h = from_dlpack<float>(m);
  CHECK(h.device().is_cpu());
  CHECK(h.at(2) == 3.0f);
  CHECK_THROWS_AS(to_dlpack(d, CopyMode::never), ValueError);
  DLManagedTensor* m2 = to_dlpack(d, CopyMode::if_needed);  // the same as copy_to_host = true
  CHECK(downloads == 2);
  CHECK(static_cast<const float*>(m2->dl_tensor.data)[1] == 2.0f);
  m2->deleter(m2);
  CHECK_THROWS_AS(to_dlpack(Tensor<float>()), ValueError);
}

TEST_CASE("to_dlpack of a view with a negative stride copies only when allowed", "[interop][dlpack][flip]") {
  // rows of [[0, 1, 2], [3, 4, 5]] reversed (the case): exporting the stride -3 as is
  // would make every consumer that indexes upwards from `data` read past the storage
  const Tensor<float> x = {{0, 1, 2}, {3, 4, 5}};
  const Tensor<float> r = x.flip({0});
  CHECK_THROWS_AS(to_dlpack(r), ValueError);  // the default never copies
  CHECK_THROWS_WITH(to_dlpack(r, CopyMode::never),
                    "to_dlpack: the view with sizes [2, 3], strides [-3, 1] and dtype float32 has the negative "
                    "stride -3 on dim 0 of size 2, which from_dlpack and libtorch refuse; pass "
                    "CopyMode::if_needed to export a contiguous copy (or call contiguous() first)");
  // example-begin dlpack-flip
  DLManagedTensor* m = to_dlpack(r, CopyMode::if_needed);  // a new contiguous copy
  // example-end dlpack-flip
  CHECK(m->dl_tensor.data != x.data_ptr());
  CHECK(m->dl_tensor.strides[0] == 3);
  CHECK(m->dl_tensor.strides[1] == 1);
  const float* p = static_cast<const float*>(m->dl_tensor.data);
  CHECK(std::vector<float>(p, p + 6) == std::vector<float>{3, 4, 5, 0, 1, 2});
  Tensor<float> back = from_dlpack<float>(m);
  CHECK(back.at(0, 2) == 5.0f);
  CHECK(back.storage() != x.storage());
  // [1, 34] reversed, as from_blob made it: the data pointer is element [0] (34)
  float buf[2] = {1.0f, 34.0f};
  const Tensor<float> b = from_blob(buf + 1, Dims{2}, [](void*) {}, Dims{-1});
  DLManagedTensor* mb = to_dlpack(b, CopyMode::if_needed);
  const float* pb = static_cast<const float*>(mb->dl_tensor.data);
  CHECK(pb != buf + 1);
  CHECK(pb[0] == 34.0f);
  CHECK(pb[1] == 1.0f);
  mb->deleter(mb);
  // AnyTensor: same rules
  CHECK_THROWS_AS(to_dlpack(AnyTensor(r)), ValueError);
  DLManagedTensor* ma = to_dlpack(AnyTensor(r), CopyMode::if_needed);
  CHECK(static_cast<const float*>(ma->dl_tensor.data)[0] == 3.0f);
  ma->deleter(ma);
}

TEST_CASE("to_dlpack: size-1 strides are normalized and stay zero-copy; CopyMode::always copies",
          "[interop][dlpack][flip]") {
  Tensor<float> x = arange<float>(12).reshape({3, 4});
  // one row of a reversed tensor: the size-1 dim's stride is -4, never applied
  const Tensor<float> one = x.flip({0}).slice(0, 0, 1);
  REQUIRE(one.strides() == Dims{-4, 1});
  DLManagedTensor* m = to_dlpack(one, CopyMode::never);  // no copy needed
  CHECK(m->dl_tensor.data == x.data_ptr() + 8);
  CHECK(m->dl_tensor.strides[0] == 4);  // the row-major stride
  CHECK(m->dl_tensor.strides[1] == 1);
  Tensor<float> back = from_dlpack<float>(m);
  CHECK(back.storage() == x.storage());
  CHECK(back.at(0, 3) == 11.0f);
  // an empty view with a negative stride: nothing is read, row-major strides, no copy
  DLManagedTensor* e = to_dlpack(x.flip({1}).slice(0, 0, 0), CopyMode::never);
  CHECK(e->dl_tensor.strides[0] == 4);
  CHECK(e->dl_tensor.strides[1] == 1);
  e->deleter(e);
  // always: a copy even of a contiguous tensor (the Python array API's copy=True)
  DLManagedTensor* c = to_dlpack(x, CopyMode::always);
  CHECK(c->dl_tensor.data != x.data_ptr());
  CHECK(static_cast<const float*>(c->dl_tensor.data)[11] == 11.0f);
  c->deleter(c);
  // if_needed on a view that needs none: shared
  DLManagedTensor* s = to_dlpack(x.t(), CopyMode::if_needed);
  CHECK(s->dl_tensor.data == x.data_ptr());
  s->deleter(s);
}
