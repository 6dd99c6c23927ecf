// libtorch interop: from_torch / to_torch pointer identity, every dtype, non-contiguous and
// offset views, writes both ways, lifetimes (either side freed first; run under ASan), every
// error case, AnyTensor, device tensors; and DLPack exchange with at::toDLPack/at::fromDLPack.
// Expected values come from libtorch itself or are written out by hand.
#include <cstdint>      // int64_t, uint8_t
#include <cstring>      // std::memcpy
#include <string>       // std::string
#include <type_traits>  // std::decay_t
#include <vector>       // std::vector

#include <ATen/ATen.h>  // at::arange, at::ones, quantize_per_tensor, ...
#if TORCHTPU_TEST_DLPACK
#include <ATen/DLConvertor.h>           // at::toDLPack, at::fromDLPack
#include <torchtpu/interop/dlpack.hpp>  // to_dlpack, from_dlpack
#endif
#include <torchtpu/core/any_tensor.hpp>  // AnyTensor
#include <torchtpu/interop/torch.hpp>    // from_torch, to_torch
#include <torchtpu/torchtpu.hpp>         // the library

// c10's logging header defines a one-argument CHECK macro; Catch's must win, so Catch comes
// after libtorch and c10's macro is dropped first.
#undef CHECK
#include <catch2/catch.hpp>  // Catch2 v2

using namespace torchtpu;

namespace {

/// 0, 1, 2, ... as a torch tensor of `dtype` (bool: i % 2), shape `sizes`.
at::Tensor torch_iota(at::IntArrayRef sizes, at::ScalarType dtype) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  at::Tensor t = at::arange(n, at::kLong);
  if (dtype == at::kBool) t = t.remainder(2);
  return t.to(dtype).reshape(sizes);
}

/// Value of element `i` of `torch_iota` converted to double.
double iota_value(int64_t i, at::ScalarType dtype) { return dtype == at::kBool ? double(i % 2) : double(i); }

}  // namespace

TEST_CASE("dtype table: the eight dtypes map one to one", "[interop][torch]") {
  CHECK(to_torch_dtype(ScalarType::Float) == at::kFloat);
  CHECK(to_torch_dtype(ScalarType::Double) == at::kDouble);
  CHECK(to_torch_dtype(ScalarType::BFloat16) == at::kBFloat16);
  CHECK(to_torch_dtype(ScalarType::Half) == at::kHalf);
  CHECK(to_torch_dtype(ScalarType::Int32) == at::kInt);
  CHECK(to_torch_dtype(ScalarType::Int64) == at::kLong);
  CHECK(to_torch_dtype(ScalarType::Bool) == at::kBool);
  CHECK(to_torch_dtype(ScalarType::UInt8) == at::kByte);
  for (ScalarType t : {ScalarType::Bool, ScalarType::UInt8, ScalarType::Int32, ScalarType::Int64,
                       ScalarType::Half, ScalarType::BFloat16, ScalarType::Float, ScalarType::Double})
    CHECK(from_torch_dtype(to_torch_dtype(t)) == t);
  CHECK_THROWS_AS(from_torch_dtype(at::kChar), TypeError);
  CHECK_THROWS_AS(from_torch_dtype(at::kComplexFloat), TypeError);
  CHECK_THROWS_AS(from_torch_dtype(at::kShort), TypeError);
}

TEMPLATE_TEST_CASE("from_torch shares memory for every dtype", "[interop][torch]", float, double,
                   bfloat16, half, int32_t, int64_t, bool, uint8_t) {
  const at::ScalarType dt = to_torch_dtype(dtype_of<TestType>());
  at::Tensor t = torch_iota({2, 3}, dt);
  Tensor<TestType> x = from_torch<TestType>(t);
  CHECK(static_cast<void*>(x.data_ptr()) == t.data_ptr());
  CHECK(x.sizes() == Dims{2, 3});
  CHECK(x.strides() == Dims{3, 1});
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) CHECK(double(opmath_t<TestType>(x.at(i, j))) == iota_value(i * 3 + j, dt));

  // back to torch: same pointer, same storage object, same dtype
  at::Tensor r = to_torch(x);
  CHECK(r.data_ptr() == t.data_ptr());
  CHECK(r.scalar_type() == dt);
  CHECK(r.storage().is_alias_of(t.storage()));
  CHECK(at::equal(r, t));

  // torchtpu-owned memory to torch and back: same pointer, same torchtpu storage
  Tensor<TestType> y = ones<TestType>({4});
  at::Tensor ry = to_torch(y);
  CHECK(ry.data_ptr() == static_cast<void*>(y.data_ptr()));
  CHECK(ry.scalar_type() == dt);
  CHECK(at::equal(ry, at::ones({4}, dt)));
  Tensor<TestType> yy = from_torch<TestType>(ry);
  CHECK(yy.storage().get() == y.storage().get());
}

TEST_CASE("from_torch: non-contiguous and offset views keep sizes, strides and offset", "[interop][torch]") {
  // example-begin from-torch
  at::Tensor base = at::arange(24, at::kFloat).reshape({2, 3, 4});
  at::Tensor v = base.permute({2, 0, 1}).slice(0, 1, 3);  // [2, 2, 3], strides [1, 12, 4], offset 1
  Tensor<float> x = from_torch<float>(v);                 // a view: no copy
  CHECK(x.data_ptr() == v.data_ptr());
  // example-end from-torch
  CHECK(x.sizes() == Dims{2, 2, 3});
  CHECK(x.strides() == Dims{1, 12, 4});
  CHECK(x.storage_offset() == 1);
  CHECK_FALSE(x.is_contiguous());
  // x[a][b][c] = base[b][c][a + 1] = 12 b + 4 c + a + 1
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t c = 0; c < 3; ++c) CHECK(x.at(a, b, c) == float(12 * b + 4 * c + a + 1));
  // a fused expression over the strided view gives what libtorch computes
  Tensor<float> y = relu(x * 2.0f - 20.0f);
  at::Tensor ty = at::relu(v * 2.0 - 20.0);
  CHECK(at::equal(to_torch(y), ty));

  // select / narrow / expand views from torch
  at::Tensor e = at::arange(3, at::kDouble).unsqueeze(0).expand({4, 3});  // stride 0
  Tensor<double> xe = from_torch<double>(e);
  CHECK(xe.strides() == Dims{0, 1});
  CHECK(xe.at(3, 2) == 2.0);
  at::Tensor s = base.select(1, 2).narrow(1, 1, 2);  // [2, 2], offset 9
  Tensor<float> xs = from_torch<float>(s);
  CHECK(xs.storage_offset() == 9);
  CHECK(xs.at(1, 1) == 12.0f + 8.0f + 2.0f);
}

TEST_CASE("to_torch keeps strides and storage offset", "[interop][torch]") {
  // example-begin to-torch
  Tensor<float> a = arange<float>(12).reshape({3, 4});
  Tensor<float> v = a.t().slice(0, 1, 4);  // [3, 3], strides [1, 4], offset 1
  at::Tensor t = to_torch(v);              // shares a's memory
  CHECK(t.data_ptr() == v.data_ptr());
  // example-end to-torch
  CHECK(t.sizes().vec() == std::vector<int64_t>{3, 3});
  CHECK(t.strides().vec() == std::vector<int64_t>{1, 4});
  CHECK(t.storage_offset() == 1);
  CHECK(t.storage().nbytes() == 12 * sizeof(float));
  CHECK(at::equal(t, at::arange(12, at::kFloat).reshape({3, 4}).t().slice(0, 1, 4)));
  // torch's own kernels run on the shared view
  CHECK(t.sum().item<float>() == 1 + 2 + 3 + 5 + 6 + 7 + 9 + 10 + 11);
  CHECK(to_torch(v.select(1, 2)).storage_offset() == 9);
}

TEST_CASE("writes are visible both ways", "[interop][torch]") {
  at::Tensor t = at::zeros({2, 3}, at::kFloat);
  Tensor<float> x = from_torch<float>(t);
  x.at(1, 2) = 7.0f;
  CHECK(t[1][2].item<float>() == 7.0f);
  x.slice(1, 0, 2) = Tensor<float>{1.0f, 2.0f};  // fused write through a view (broadcast)
  CHECK(t[0][1].item<float>() == 2.0f);
  CHECK(t[1][0].item<float>() == 1.0f);
  t.mul_(10);
  CHECK(x.at(1, 2) == 70.0f);
  CHECK(x.at(0, 1) == 20.0f);

  Tensor<int64_t> y = zeros<int64_t>({4});
  at::Tensor ty = to_torch(y);
  ty.fill_(5);
  CHECK(y.at(3) == 5);
  y += int64_t(1);
  CHECK(ty[0].item<int64_t>() == 6);
}

// Issue 12 item 2: an expanded (stride-0) torch tensor shares one element among many; an
// in-place write into it is refused before anything is written (torch's own mul_ refuses it
// too: "unsupported operation: more than one element of the written-to tensor refers to a
// single memory location"), so torch's data is unchanged. Reading it stays zero-copy.
TEST_CASE("from_torch / from_dlpack: in-place writes into expanded tensors are refused", "[interop][torch]") {
  at::Tensor base = at::arange(3, at::kFloat);           // [0, 1, 2]
  at::Tensor e = base.unsqueeze(0).expand({4, 3});       // strides [0, 1]
  CHECK_THROWS(e.mul_(2));                               // what torch does itself
  Tensor<float> x = from_torch<float>(e);
  CHECK(x.data_ptr() == base.data_ptr());                // zero-copy view
  CHECK_THROWS_AS(x *= 2.0f, ValueError);
  CHECK_THROWS_WITH(x *= 2.0f, Catch::Matchers::Contains("mul_") && Catch::Matchers::Contains("strides [0, 1]"));
  CHECK_THROWS_AS(x.fill_(5), ValueError);
  CHECK_THROWS_AS(x.copy_(Tensor<float>::empty({4, 3}).fill_(1)), ValueError);
  CHECK(at::equal(base, at::arange(3, at::kFloat)));     // unchanged (was [0, 2, 4])
  Tensor<float> y = x * 2.0f;                            // reading is fine
  CHECK(at::equal(to_torch(y), e * 2));
  // every dtype torch shares; through DLPack too
  for (at::ScalarType dt : {at::kDouble, at::kBFloat16, at::kHalf, at::kInt, at::kLong, at::kByte, at::kBool}) {
    at::Tensor b = at::ones({2}, dt);
    at::Tensor ex = b.unsqueeze(1).expand({2, 5});
    AnyTensor a = from_torch(ex);
    CHECK_THROWS_AS(a.visit([](auto t) { t.fill_(0); }), ValueError);
#if TORCHTPU_TEST_DLPACK
    if (dt != at::kBool) {
      AnyTensor d = from_dlpack(at::toDLPack(ex));
      CHECK_THROWS_AS(d.visit([](auto t) { t.fill_(0); }), ValueError);
    }
#endif
    CHECK(at::equal(b, at::ones({2}, dt)));
  }
}

TEST_CASE("lifetimes: either side may be destroyed first", "[interop][torch]") {
  SECTION("torch tensor freed first") {
    Tensor<float> x;
    {
      at::Tensor t = at::arange(1000, at::kFloat);
      x = from_torch<float>(t);
      CHECK(t.storage().use_count() == 2);  // t and the torchtpu storage
    }
    // only the torchtpu view holds the memory now (ASan flags a use after free otherwise)
    CHECK(x.at(999) == 999.0f);
    Tensor<float> sum = x.sum();
    CHECK(sum.item() == 999.0f * 1000.0f / 2.0f);
  }
  SECTION("torchtpu tensor freed first") {
    at::Tensor t;
    {
      Tensor<double> x = arange<double>(100);
      t = to_torch(x);
      CHECK(x.storage().use_count() == 2);  // x and the at::Tensor's DataPtr
    }
    CHECK(t[99].item<double>() == 99.0);
    CHECK(t.sum().item<double>() == 4950.0);
  }
  SECTION("the torchtpu view releases its reference to the torch storage") {
    at::Tensor t = at::ones({8}, at::kInt);
    {
      Tensor<int32_t> x = from_torch<int32_t>(t);
      Tensor<int32_t> x2 = x.slice(0, 2, 6);
      CHECK(t.storage().use_count() == 2);
    }
    CHECK(t.storage().use_count() == 1);
  }
  SECTION("round trips never nest ownership") {
    Tensor<float> x = ones<float>({16});
    at::Tensor t = to_torch(x);
    Tensor<float> x2 = from_torch<float>(t);  // unwraps to x's storage
    at::Tensor t2 = to_torch(x2);
    CHECK(x2.storage().get() == x.storage().get());
    CHECK(t2.data_ptr() == t.data_ptr());
    x = Tensor<float>();
    x2 = Tensor<float>();
    t = at::Tensor();
    CHECK(t2.sum().item<float>() == 16.0f);
  }
}

TEST_CASE("from_torch / to_torch: empty and 0-d tensors", "[interop][torch]") {
  at::Tensor e = at::empty({0, 3}, at::kFloat);
  Tensor<float> xe = from_torch<float>(e);
  CHECK(xe.numel() == 0);
  CHECK(xe.sizes() == Dims{0, 3});
  CHECK(to_torch(zeros<float>({2, 0})).numel() == 0);

  at::Tensor s = at::scalar_tensor(3.5, at::kDouble);
  Tensor<double> xs = from_torch<double>(s);
  CHECK(xs.dim() == 0);
  CHECK(xs.item() == 3.5);
  at::Tensor back = to_torch(full<double>({}, 2.25));
  CHECK(back.dim() == 0);
  CHECK(back.item<double>() == 2.25);
}

TEST_CASE("from_torch: static rank", "[interop][torch]") {
  at::Tensor t = at::ones({2, 2}, at::kFloat);
  Tensor<float, 2> x = from_torch<float, 2>(t);
  CHECK(x.data_ptr() == t.data_ptr());
  CHECK_THROWS_AS((from_torch<float, 3>(t)), ShapeError);
}

TEST_CASE("from_torch errors name what was given and what is accepted", "[interop][torch]") {
  auto message = [](auto&& f) -> std::string {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "(no error)";
  };
  at::Tensor l = at::ones({2}, at::kLong);
  CHECK_THROWS_AS(from_torch<float>(l), TypeError);
  CHECK_THAT(message([&] { (void)from_torch<float>(l); }),
             Catch::Contains("Long") && Catch::Contains("float32") && Catch::Contains("Float"));
  CHECK_THROWS_AS(from_torch<int32_t>(at::ones({2}, at::kShort)), TypeError);
  CHECK_THROWS_AS(from_torch(at::ones({2}, at::kComplexFloat)), TypeError);

  at::Tensor q = at::quantize_per_tensor(at::ones({2}), 0.1, 0, at::kQInt8);
  CHECK_THROWS_AS(from_torch<uint8_t>(q), TypeError);
  CHECK_THROWS_AS(from_torch(q), TypeError);
  CHECK_THAT(message([&] { (void)from_torch(q); }), Catch::Contains("quantized") && Catch::Contains("QInt8"));

  at::Tensor sp = at::eye(3).to_sparse();
  CHECK_THROWS_AS(from_torch<float>(sp), ValueError);
  CHECK_THAT(message([&] { (void)from_torch(sp); }), Catch::Contains("Sparse") && Catch::Contains("strided"));

  at::Tensor meta = at::empty({2}, at::TensorOptions().dtype(at::kFloat).device(at::kMeta));
  CHECK_THROWS_AS(from_torch<float>(meta), ValueError);
  CHECK_THAT(message([&] { (void)from_torch(meta); }), Catch::Contains("meta") && Catch::Contains("cpu"));

  CHECK_THROWS_AS(from_torch<float>(at::Tensor()), ValueError);
  CHECK_THROWS_AS(from_torch<float>(at::ones({1, 1, 1, 1, 1, 1, 1, 1, 1})), ShapeError);
  CHECK_THROWS_AS(from_torch<float>(at::ones({2})._neg_view()), ValueError);

  CHECK_THROWS_AS(to_torch(Tensor<float>()), ValueError);
}

TEST_CASE("AnyTensor: dtype at run time", "[interop][torch][any]") {
  // example-begin any-tensor
  at::Tensor t = at::arange(6, at::kLong).reshape({2, 3});
  AnyTensor a = from_torch(t);  // dtype read at run time
  CHECK(a.dtype() == ScalarType::Int64);
  CHECK(a.sizes() == Dims{2, 3});
  CHECK(a.data_ptr() == t.data_ptr());
  const Tensor<int64_t>& x = a.get<int64_t>();
  CHECK(x.at(1, 2) == 5);
  CHECK_THROWS_AS(a.get<float>(), TypeError);  // "expected a float32 tensor, got int64"
  double total = a.visit([](const auto& v) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    Tensor<sum_result_t<T>> s = v.sum();
    return double(opmath_t<sum_result_t<T>>(s.item()));
  });
  CHECK(total == 15.0);
  // example-end any-tensor
  try {
    (void)a.get<float>();
  } catch (const TypeError& e) {
    CHECK_THAT(e.what(), Catch::Contains("float32") && Catch::Contains("int64"));
  }
  CHECK(a.is<int64_t>());
  CHECK_FALSE(a.is<int32_t>());
  CHECK(a.get_if<float>() == nullptr);
  CHECK(a.strides() == Dims{3, 1});
  CHECK(a.storage_offset() == 0);
  CHECK(a.numel() == 6);
  CHECK(a.dim() == 2);
  CHECK(a.element_size() == 8);
  CHECK(a.device().is_cpu());
  CHECK(a.is_contiguous());
  CHECK(a.variant().index() == size_t(ScalarType::Int64));

  at::Tensor back = to_torch(a);
  CHECK(back.data_ptr() == t.data_ptr());
  CHECK(back.scalar_type() == at::kLong);

  AnyTensor u;
  CHECK_FALSE(u.defined());
  CHECK(u.dtype() == ScalarType::Float);
  for (at::ScalarType dt : {at::kFloat, at::kDouble, at::kBFloat16, at::kHalf, at::kInt, at::kLong,
                            at::kBool, at::kByte}) {
    at::Tensor z = at::zeros({3}, dt);
    AnyTensor az = from_torch(z);
    CHECK(to_torch_dtype(az.dtype()) == dt);
    CHECK(az.data_ptr() == z.data_ptr());
    CHECK(to_torch(az).data_ptr() == z.data_ptr());
  }
}

TEST_CASE("to_torch: device tensors copy to the host only when asked", "[interop][torch]") {
  auto s = std::make_shared<StorageImpl>();
  s->nbytes = 4 * sizeof(float);
  s->device = Device("tpu:1");
  static int downloads;  // a static: download is a plain function pointer (no captures)
  downloads = 0;
  s->download = [](const StorageImpl&, void* dst) {
    const float v[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    std::memcpy(dst, v, sizeof v);
    ++downloads;
  };
  Tensor<float> d(s, Dims{2, 2}, Dims{2, 1}, 0);
  CHECK_THROWS_AS(to_torch(d), ValueError);
  try {
    (void)to_torch(d);
  } catch (const ValueError& e) {
    CHECK_THAT(e.what(), Catch::Contains("tpu:1") && Catch::Contains("copy_to_host"));
  }
  CHECK(downloads == 0);
  at::Tensor h = to_torch(d, /*copy_to_host=*/true);
  CHECK(downloads == 1);
  CHECK(at::equal(h, at::arange(1, 5, at::kFloat).reshape({2, 2})));
  CHECK_THROWS_AS(to_torch(AnyTensor(d)), ValueError);
  CHECK_THROWS_AS(to_torch(d, CopyMode::never), ValueError);
  CHECK(at::equal(to_torch(d, CopyMode::if_needed), at::arange(1, 5, at::kFloat).reshape({2, 2})));
  CHECK(downloads == 2);
  // a reversed view of the device tensor: copied to the host, then made contiguous
  CHECK(at::equal(to_torch(d.flip({0}), CopyMode::if_needed), at::flip(at::arange(1, 5, at::kFloat).reshape({2, 2}), {0})));
}

TEST_CASE("to_torch of a view with a negative stride copies only when allowed", "[interop][torch][flip]") {
  // The cases: [1, 34] reversed read [34, 0] (past the 8-byte storage) and
  // [[0, 1, 2], [3, 4, 5]] with rows reversed read [3, 4, 5, 0, 0, 0]. torch computes the
  // expected values (torch.flip).
  float buf[2] = {1.0f, 34.0f};
  const Tensor<float> b = from_blob(buf + 1, Dims{2}, [](void*) {}, Dims{-1});
  CHECK_THROWS_AS(to_torch(b), ValueError);  // the default never copies
  const at::Tensor tb = to_torch(b, CopyMode::if_needed);
  CHECK(at::equal(tb, at::flip(at::tensor({1.0f, 34.0f}), {0})));
  CHECK(tb.data_ptr() != static_cast<void*>(buf + 1));
  const Tensor<float> x = from_torch<float>(at::arange(6, at::kFloat).reshape({2, 3}));
  CHECK_THROWS_WITH(to_torch(x.flip({0}), CopyMode::never),
                    "to_torch: the view with sizes [2, 3], strides [-3, 1] and dtype float32 has the negative "
                    "stride -3 on dim 0 of size 2, which libtorch cannot express; pass CopyMode::if_needed to "
                    "export a contiguous copy (or call contiguous() first)");
  const at::Tensor want = at::arange(6, at::kFloat).reshape({2, 3});
  // example-begin to-torch-flip
  at::Tensor rows = to_torch(x.flip({0}), CopyMode::if_needed);  // a contiguous copy
  // example-end to-torch-flip
  CHECK(rows.is_contiguous());
  CHECK(at::equal(rows, at::flip(want, {0})));
  CHECK(at::equal(to_torch(x.flip({1}), CopyMode::if_needed), at::flip(want, {1})));
  CHECK(at::equal(to_torch(x.flip({0, 1}).t(), CopyMode::if_needed), at::flip(want, {0, 1}).t()));
  CHECK(at::equal(to_torch(AnyTensor(x.flip({1})), CopyMode::if_needed), at::flip(want, {1})));
  CHECK_THROWS_AS(to_torch(AnyTensor(x.flip({1}))), ValueError);
  // a size-1 dim's negative stride is never applied: normalized, still zero-copy
  const Tensor<float> row = x.flip({0}).slice(0, 1, 2);  // [1, 3], strides [-3, 1]
  REQUIRE(row.strides() == Dims{-3, 1});
  const at::Tensor tr = to_torch(row);
  CHECK(tr.data_ptr() == row.data_ptr());
  CHECK(tr.strides().vec() == std::vector<int64_t>{3, 1});
  CHECK(at::equal(tr, at::flip(want, {0}).slice(0, 1, 2)));
  // always: a copy even where sharing is possible; if_needed shares when it can
  const at::Tensor ta = to_torch(x, CopyMode::always);
  CHECK(ta.data_ptr() != x.data_ptr());
  CHECK(at::equal(ta, want));
  CHECK(to_torch(x.t(), CopyMode::if_needed).data_ptr() == x.data_ptr());
}

#if TORCHTPU_TEST_DLPACK
TEST_CASE("DLPack exchange with libtorch", "[interop][torch][dlpack]") {
  SECTION("to_dlpack of a reversed view -> at::fromDLPack: a copy torch reads as torch.flip") {
    const Tensor<float> x = from_torch<float>(at::arange(6, at::kFloat).reshape({2, 3}));
    CHECK_THROWS_AS(to_dlpack(x.flip({0})), ValueError);
    at::Tensor t = at::fromDLPack(to_dlpack(x.flip({0}), CopyMode::if_needed));
    CHECK(at::equal(t, at::flip(at::arange(6, at::kFloat).reshape({2, 3}), {0})));
  }
  SECTION("at::toDLPack -> from_dlpack: same memory, torch's deleter runs once") {
    at::Tensor t = at::arange(12, at::kFloat).reshape({3, 4}).t();  // non-contiguous
    const auto refs = t.storage().use_count();  // t and its view base
    {
      Tensor<float> x = from_dlpack<float>(at::toDLPack(t));
      CHECK(x.data_ptr() == t.data_ptr());
      CHECK(x.strides() == Dims{1, 4});
      CHECK(x.at(3, 2) == 11.0f);
      CHECK(t.storage().use_count() == refs + 1);  // torch's DLPack context holds one more
      x.at(0, 0) = -1.0f;
    }
    CHECK(t.storage().use_count() == refs);  // released exactly once (twice: a double free)
    CHECK(t[0][0].item<float>() == -1.0f);
  }
  SECTION("to_dlpack -> at::fromDLPack: same memory; the torchtpu side may die first") {
    at::Tensor t;
    const void* p = nullptr;
    {
      Tensor<bfloat16> x = arange<bfloat16>(6).reshape({2, 3});
      p = x.data_ptr();
      t = at::fromDLPack(to_dlpack(x.t()));
    }
    CHECK(t.data_ptr() == p);
    CHECK(t.scalar_type() == at::kBFloat16);
    CHECK(t.strides().vec() == std::vector<int64_t>{1, 3});
    CHECK(at::equal(t, at::arange(6, at::kBFloat16).reshape({2, 3}).t()));
  }
  SECTION("every dtype libtorch 1.13 exports (it has no DLPack bool)") {
    for (at::ScalarType dt : {at::kFloat, at::kDouble, at::kBFloat16, at::kHalf, at::kInt, at::kLong, at::kByte}) {
      at::Tensor t = torch_iota({5}, dt);
      AnyTensor a = from_dlpack(at::toDLPack(t));
      CHECK(to_torch_dtype(a.dtype()) == dt);
      CHECK(a.data_ptr() == t.data_ptr());
      at::Tensor back = at::fromDLPack(to_dlpack(a));
      CHECK(back.data_ptr() == t.data_ptr());
      CHECK(at::equal(back, t));
    }
  }
}
#endif
