// tests/fuzz/fuzz_dlpack.cpp — libFuzzer harness for DLPack import (torchtpu/interop/dlpack.hpp).
// The fuzz bytes build a DLManagedTensor: random ndim, shape, strides (or NULL), byte_offset,
// dtype (code, bits, lanes), device (type, id) and data alignment, either over a harness buffer
// that covers exactly the memory the description spans (a foreign producer), or as a torchtpu
// export (to_dlpack of a small tensor or view) whose fields are then mutated. from_dlpack must
// either throw a torchtpu Error and leave the tensor untouched (deleter not called), or return a
// tensor whose every element lies in the producer's memory and call the deleter exactly once
// when the last view goes. Element reads go through the library (contiguous()), so ASan sees
// any view that reaches outside the memory.
#include <algorithm>  // std::min
#include <cstddef>  // size_t
#include <cstdint>  // int64_t, uint8_t
#include <cstring>  // std::memset
#include <memory>   // std::unique_ptr
#include <vector>   // std::vector

#include <fuzzer/FuzzedDataProvider.h>  // FuzzedDataProvider (clang's libFuzzer headers)

#include <torchtpu/interop/dlpack.hpp>   // from_dlpack, to_dlpack

namespace {

using namespace torchtpu;

struct Producer {  // a foreign DLPack producer: counts its deleter calls
  DLManagedTensor m{};
  int64_t shape[12] = {};
  int64_t strides[12] = {};
  int deleted = 0;
};
void producer_deleter(DLManagedTensor* m) { static_cast<Producer*>(m->manager_ctx)->deleted++; }

int64_t fuzz_size(FuzzedDataProvider& fdp) {
  switch (fdp.ConsumeIntegralInRange<int>(0, 7)) {
    case 0: return fdp.ConsumeIntegral<int64_t>();
    case 1: return fdp.ConsumeIntegralInRange<int64_t>(-3, 1 << 20);
    default: return fdp.ConsumeIntegralInRange<int64_t>(0, 5);
  }
}
int64_t fuzz_stride(FuzzedDataProvider& fdp) {
  switch (fdp.ConsumeIntegralInRange<int>(0, 7)) {
    case 0: return fdp.ConsumeIntegral<int64_t>();
    case 1: return fdp.ConsumeIntegralInRange<int64_t>(-3, 1 << 20);
    default: return fdp.ConsumeIntegralInRange<int64_t>(0, 12);
  }
}
DLDataType fuzz_dtype(FuzzedDataProvider& fdp) {
  static const DLDataType valid[] = {{kDLFloat, 16, 1}, {kDLFloat, 32, 1}, {kDLFloat, 64, 1}, {kDLBfloat, 16, 1},
                                     {kDLInt, 32, 1},   {kDLInt, 64, 1},   {kDLUInt, 8, 1},   {dlpack_bool_code, 8, 1}};
  if (fdp.ConsumeIntegralInRange<int>(0, 7) == 0)
    return DLDataType{fdp.ConsumeIntegral<uint8_t>(), fdp.ConsumeIntegral<uint8_t>(), fdp.ConsumeIntegral<uint16_t>()};
  return valid[fdp.ConsumeIntegralInRange<size_t>(0, 7)];
}

/// Reads every byte of every element of `t` (when it has at most 2^16 elements), walking its
/// sizes and strides from data_ptr() as any kernel would; ASan reports a view that reaches
/// outside the producer's memory.
void read_all(const AnyTensor& t) {
  t.visit([](const auto& x) {
    const int64_t n = x.numel();
    if (n < 0) __builtin_trap();
    if (n == 0 || n > (1 << 16)) return;
    const auto* base = reinterpret_cast<const volatile unsigned char*>(x.data_ptr());
    const size_t esize = sizeof(*x.data_ptr());
    int64_t idx[max_rank] = {};
    unsigned char sink = 0;
    for (int64_t k = 0; k < n; ++k) {
      int64_t off = 0;
      for (int i = 0; i < x.dim(); ++i) off += idx[i] * x.strides()[i];
      for (size_t b = 0; b < esize; ++b) sink ^= base[off * int64_t(esize) + int64_t(b)];
      for (int i = x.dim() - 1; i >= 0; --i) {
        if (++idx[i] < x.sizes()[i]) break;
        idx[i] = 0;
      }
    }
    if (sink == 0x100) __builtin_trap();  // never: keeps the reads
  });
}

void foreign(FuzzedDataProvider& fdp) {
  Producer pr;
  DLTensor& d = pr.m.dl_tensor;
  pr.m.manager_ctx = &pr;
  pr.m.deleter = fdp.ConsumeBool() ? producer_deleter : nullptr;
  d.ndim = fdp.ConsumeIntegralInRange<int>(0, 15) == 0 ? fdp.ConsumeIntegral<int32_t>()
                                                       : fdp.ConsumeIntegralInRange<int32_t>(-1, 9);
  const int dims = d.ndim < 0 ? 0 : d.ndim > 12 ? 12 : d.ndim;
  for (int i = 0; i < dims; ++i) pr.shape[i] = fuzz_size(fdp);
  const bool has_strides = fdp.ConsumeBool();
  for (int i = 0; i < dims; ++i) pr.strides[i] = fuzz_stride(fdp);
  d.shape = (d.ndim > 12 || fdp.ConsumeIntegralInRange<int>(0, 31) == 0) ? nullptr : pr.shape;
  d.strides = has_strides && d.ndim <= 12 ? pr.strides : nullptr;
  d.dtype = fuzz_dtype(fdp);
  d.device.device_type = static_cast<DLDeviceType>(fdp.ConsumeIntegralInRange<int>(0, 7) == 0
                                                       ? fdp.ConsumeIntegralInRange<int>(0, 20)
                                                       : fdp.PickValueInArray({1, 3}));
  d.device.device_id = fdp.ConsumeIntegral<int32_t>();
  d.byte_offset = fdp.ConsumeIntegralInRange<int>(0, 15) == 0 ? fdp.ConsumeIntegral<uint64_t>()
                                                              : fdp.ConsumeIntegralInRange<uint64_t>(0, 64);
  const size_t misalign = fdp.ConsumeIntegralInRange<size_t>(0, 7);

  // The memory the description spans, computed without overflow: byte_offset + (1 + sum of
  // (size - 1) * stride) * element bytes (nothing when an extent is 0).
  const int64_t esize = (d.dtype.bits + 7) / 8;
  __int128 n = 1, last = 0;
  bool sane = d.ndim >= 0 && d.ndim <= 8 && (d.ndim == 0 || d.shape);
  for (int i = 0; sane && i < d.ndim; ++i) {
    if (pr.shape[i] < 0) { sane = false; break; }
    n *= pr.shape[i];
    if (n > (__int128(1) << 62)) n = __int128(1) << 62;  // saturate: n * size stays < 2^126
  }
  __int128 st[12] = {}, acc = 1;  // the strides import will use (row-major when NULL)
  for (int i = (sane ? d.ndim : 0) - 1; i >= 0; --i) {
    st[i] = d.strides ? pr.strides[i] : acc;
    if (pr.shape[i] > 1) acc = acc * pr.shape[i] > (__int128(1) << 62) ? (__int128(1) << 62) : acc * pr.shape[i];
  }
  const __int128 cap = __int128(1) << 100;  // |(size - 1) * stride| < 2^126: clamped, summed
  for (int i = 0; sane && n > 0 && i < d.ndim; ++i) {
    const __int128 term = __int128(pr.shape[i] - 1) * st[i];
    last += term > cap ? cap : term < -cap ? -cap : term;
  }
  const __int128 bytes = n == 0 ? 0 : __int128(d.byte_offset) + (last + 1) * esize;
  const bool backed = sane && bytes >= 0 && bytes <= (1 << 16);
  // A backed tensor's memory is exactly [data, data + bytes) of its own heap block, so ASan
  // flags any read past it; an unbacked one points at a small buffer (or is NULL) and is
  // only inspected, never read.
  static unsigned char small[64];
  std::unique_ptr<unsigned char[]> block;
  if (backed) {
    block.reset(new unsigned char[size_t(bytes) + misalign]);
    std::memset(block.get(), 0x5a, size_t(bytes) + misalign);
    d.data = block.get() + misalign;
  } else {
    d.data = fdp.ConsumeBool() ? small : nullptr;
  }

  const bool typed = fdp.ConsumeBool();
  try {
    if (typed) {
      Tensor<float> t = from_dlpack<float>(&pr.m);
      if (pr.deleted) __builtin_trap();
      if (!backed) {
        (void)t.numel();
        (void)t.is_contiguous();
      } else {
        read_all(AnyTensor(t));
      }
    } else {
      AnyTensor t = from_dlpack(&pr.m);
      if (pr.deleted) __builtin_trap();
      if (!backed) {
        (void)t.numel();
        (void)t.sizes();
      } else {
        read_all(t);
      }
    }
    if (pr.m.deleter && pr.deleted != 1) __builtin_trap();  // exactly once, when the view went
  } catch (const Error&) {
    if (pr.deleted) __builtin_trap();  // on an error the caller still owns the tensor
  }
}

void own_export(FuzzedDataProvider& fdp) {
  const auto dtype = static_cast<ScalarType>(fdp.ConsumeIntegralInRange<int>(0, 7));
  const int rank = fdp.ConsumeIntegralInRange<int>(0, 4);
  Dims shape;
  for (int i = 0; i < rank; ++i) shape.push_back(fdp.ConsumeIntegralInRange<int64_t>(0, 4));
  AnyTensor src = AnyTensor::dispatch(dtype, [&]<class T>(std::type_identity<T>) {
    Tensor<T> t = Tensor<T>::empty(shape);
    if (t.numel() > 0) std::memset(static_cast<void*>(t.data_ptr()), 1, size_t(t.numel()) * sizeof(T));
    if (t.dim() >= 2 && fdp.ConsumeBool()) t = t.transpose(0, 1);
    if (t.dim() >= 1 && t.size(0) > 1 && fdp.ConsumeBool()) t = t.narrow(0, 1, t.size(0) - 1);
    return AnyTensor(t);
  });
  DLManagedTensor* m = to_dlpack(src);
  src = AnyTensor();  // the export alone keeps the storage alive
  DLTensor& d = m->dl_tensor;
  // Mutations a careless consumer might make before handing the tensor back.
  const int steps = fdp.ConsumeIntegralInRange<int>(0, 4);
  for (int s = 0; s < steps; ++s) {
    switch (fdp.ConsumeIntegralInRange<int>(0, 6)) {
      case 0: if (d.ndim > 0) d.shape[fdp.ConsumeIntegralInRange<int>(0, std::min(d.ndim, max_rank) - 1)] = fuzz_size(fdp); break;
      case 1: if (d.ndim > 0 && d.strides) d.strides[fdp.ConsumeIntegralInRange<int>(0, std::min(d.ndim, max_rank) - 1)] = fuzz_stride(fdp); break;
      case 2: d.byte_offset = fdp.ConsumeIntegralInRange<uint64_t>(0, 64); break;
      case 3: d.ndim = fdp.ConsumeIntegralInRange<int32_t>(-1, 9); break;
      case 4: d.dtype = fuzz_dtype(fdp); break;
      case 5: d.data = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(d.data) + uintptr_t(fdp.ConsumeIntegralInRange<int>(-16, 16))); break;
      case 6: d.strides = nullptr; break;
    }
  }
  try {
    AnyTensor t = from_dlpack(m);  // owns (and already released) `m` from here on
    read_all(t);
  } catch (const Error&) {
    m->deleter(m);  // untouched on error: still ours
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  switch (fdp.ConsumeIntegralInRange<int>(0, 7)) {
    case 0: own_export(fdp); break;
    case 1:
      try {
        (void)from_dlpack(nullptr);
        __builtin_trap();
      } catch (const ValueError&) {
      }
      break;
    default: foreign(fdp); break;
  }
  return 0;
}
