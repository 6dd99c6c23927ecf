// torchtpu/ops/sort.hpp — operator library, sorting family: sort, argsort, topk. Each op is one
// definition (ops/library.hpp) that the typed API (`torchtpu::sort(Tensor<T>)`), the run-time API
// (`torchtpu::sort(AnyTensor)`), the eager PJRT devices and model graphs (`aten::sort`, ...) all
// call; sort and topk have two results (values, int64 indices: ops::multi_result).
// Tests: tests/ops/test_sort.cpp (cpu, every dtype), tests/device_ops/test_device_sort.cpp (PJRT
// devices), tests/conformance (torch 1.13).
//
// One order for every path: torch's (aten/src/ATen/native/cpu/SortingKernel.cpp): ascending puts
// NaN after every number, descending puts NaN first; equal keys keep their input order (a stable
// sort; torch's `stable=True`, which its cpu kernel also gives by default). The lowering is
// stablehlo.sort with that comparator (device/stablehlo_ops.hpp, Builder::sort).
#pragma once
#include <algorithm>    // std::stable_sort, std::min
#include <array>        // std::array
#include <cmath>        // std::isnan
#include <cstdint>      // int64_t
#include <numeric>      // std::iota
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <type_traits>  // std::conditional_t
#include <vector>       // std::vector

#include "library.hpp"  // TensorMeta, DtypeSet, ops::call_results
#include "shape.hpp"    // detail::vec

namespace torchtpu {
namespace ops {

namespace detail {

/// Sorts every line of `x` along dim `d` in torch's order and writes the first `k` of each
/// line: values into `vals` (when not null) and their input positions into `idx`, both laid out
/// as `x` with dim `d` of size `k` (row-major).
template <element T>
void sort_lines(const Tensor<T>& x0, int d, bool descending, int64_t k, T* vals, int64_t* idx) {
  const Tensor<T> x = x0.contiguous();
  const int r = x.dim();
  const int64_t n = r == 0 ? 1 : x.size(d);
  int64_t outer = 1, inner = 1;
  for (int e = 0; e < d; ++e) outer *= x.size(e);
  for (int e = d + 1; e < r; ++e) inner *= x.size(e);
  using K = std::conditional_t<std::is_same_v<T, bool>, bool, opmath_t<T>>;
  const T* p = x.data_ptr();
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::vector<K> key(static_cast<size_t>(n));
  for (int64_t i = 0; i < outer; ++i)
    for (int64_t j = 0; j < inner; ++j) {
      const T* line = p + i * n * inner + j;
      for (int64_t m = 0; m < n; ++m) key[static_cast<size_t>(m)] = static_cast<K>(line[m * inner]);
      std::iota(order.begin(), order.end(), int64_t{0});
      auto before = [&](int64_t a, int64_t b) {
        const K ka = key[static_cast<size_t>(a)], kb = key[static_cast<size_t>(b)];
        if constexpr (std::is_floating_point_v<K>) {
          const bool na = std::isnan(ka), nb = std::isnan(kb);
          return descending ? (na && !nb) || (!nb && ka > kb) : (!na && (nb || ka < kb));
        } else {
          return descending ? kb < ka : ka < kb;
        }
      };
      std::stable_sort(order.begin(), order.end(), before);
      const int64_t base = i * k * inner + j;
      for (int64_t m = 0; m < k; ++m) {
        const int64_t src = order[static_cast<size_t>(m)];
        if (vals) vals[base + m * inner] = line[src * inner];
        idx[base + m * inner] = src;
      }
    }
}

/// The lowering of a sort of `x` along `d` keeping `k` of each line: {values, int64 indices}.
template <class B, class V>
std::array<V, 2> lower_sort(B& b, const V& x, int d, bool descending, int64_t k) {
  if (x.dims.empty()) return {x, b.constant_int(0, ScalarType::Int64)};
  std::vector<V> s = b.sort({x, b.iota(ScalarType::Int64, x.dims, d)}, d, descending);
  if (k == x.dims[static_cast<size_t>(d)]) return {s[0], s[1]};
  std::vector<int64_t> start(x.dims.size(), 0), limit = x.dims;
  limit[static_cast<size_t>(d)] = k;
  return {b.slice(s[0], start, limit), b.slice(s[1], start, limit)};
}

}  // namespace detail

/// The values of `self` sorted along `dim` and their positions (torch.sort).
///
/// **Shapes:** `self: [...]` → values and indices of `self`'s shape (a 0-dim `self` takes dim
/// 0 or -1).
/// **Dtypes:** all eight; values keep `self`'s dtype, indices are int64.
/// **Order:** ascending (`descending` false) with NaN last, or descending with NaN first; equal
/// values keep their input order (stable).
/// **Errors:** IndexError for `dim` out of range (naming the op and the operand).
/// **Source:** torch.sort (aten/src/ATen/native/Sorting.cpp). **Lowering:** stablehlo.sort of
/// (self, iota) with torch's comparator.
struct SortOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "sort", aten = "aten::sort";
  static constexpr std::string_view schema =
      "aten::sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)";
  ///@}
  /// Two results: values, indices.
  static constexpr size_t results = 2;
  /// The dtypes libtorch allows (of `self` and the values).
  static constexpr DtypeSet dtypes = DtypeSet::all();
  /// Non-tensor arguments.
  struct Args {
    int64_t dim = -1;         ///< the dim to sort along
    bool descending = false;  ///< largest first
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return Args{r.to_int("dim"), r.to_bool("descending")}; }
  /// Dtype and shape rule.
  static std::array<TensorMeta, 2> infer(std::span<const TensorMeta> in, const Args& a) {
    (void)wrap_dim(a.dim, in[0].dim(), aten);
    return {TensorMeta{in[0].dtype, in[0].sizes, Device{}, true}, TensorMeta{ScalarType::Int64, in[0].sizes, Device{}, true}};
  }
  /// CPU kernel: a stable sort of each line.
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, std::span<AnyTensor> out) {
    if (in[0].numel() == 0) return;
    const int d = in[0].dim() == 0 ? 0 : wrap_dim(a.dim, in[0].dim(), aten);
    const int64_t n = in[0].dim() == 0 ? 1 : in[0].size(d);
    detail::sort_lines(in[0], d, a.descending, n, out[0].get<T>().data_ptr(), out[1].get<int64_t>().data_ptr());
  }
  /// StableHLO: see the struct's docstring.
  template <class B, class V>
  static std::array<V, 2> lower(B& b, std::span<const V> in, const Args& a, std::span<const TensorMeta>) {
    const int r = static_cast<int>(in[0].dims.size());
    const int d = r == 0 ? 0 : wrap_dim(a.dim, r, aten);
    return detail::lower_sort(b, in[0], d, a.descending, r == 0 ? 1 : in[0].dims[static_cast<size_t>(d)]);
  }
};

/// The positions that sort `self` along `dim` (torch.argsort): SortOp's indices.
///
/// **Shapes:** `self: [...]` → int64 of `self`'s shape. **Dtypes:** `self` any of the eight;
/// the result int64. **Order**, **errors:** as ops::SortOp.
/// **Source:** torch.argsort (aten/src/ATen/native/Sorting.cpp: the indices of sort).
/// **Lowering:** as ops::SortOp, the values dropped.
struct ArgsortOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "argsort", aten = "aten::argsort";
  static constexpr std::string_view schema = "aten::argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor";
  ///@}
  /// The result's dtype.
  static constexpr DtypeSet dtypes = DtypeSet::of({ScalarType::Int64});
  /// `self`'s dtypes: any of the eight.
  static constexpr DtypeSet self_dtypes = DtypeSet::all();
  /// Non-tensor arguments.
  using Args = SortOp::Args;
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return SortOp::args(r); }
  /// `self` keeps its dtype.
  static ScalarType operand_dtype(size_t, ScalarType given, ScalarType) { return given; }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    (void)wrap_dim(a.dim, in[0].dim(), aten);
    return TensorMeta{ScalarType::Int64, in[0].sizes, Device{}, true};
  }
  /// CPU kernel: SortOp's, indices only.
  template <element T>
  static void cpu(std::span<const AnyTensor> in, const Args& a, Tensor<T>& out) {
    if constexpr (std::is_same_v<T, int64_t>) {
      if (out.numel() == 0) return;
      in[0].visit([&]<class U>(const Tensor<U>& x) {
        const int d = x.dim() == 0 ? 0 : wrap_dim(a.dim, x.dim(), aten);
        detail::sort_lines<U>(x, d, a.descending, x.dim() == 0 ? 1 : x.size(d), nullptr, out.data_ptr());
      });
    }
  }
  /// StableHLO: see the struct's docstring.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims&) {
    const int r = static_cast<int>(in[0].dims.size());
    const int d = r == 0 ? 0 : wrap_dim(a.dim, r, aten);
    return detail::lower_sort(b, in[0], d, a.descending, r == 0 ? 1 : in[0].dims[static_cast<size_t>(d)])[1];
  }
};

/// The `k` largest (or smallest) values of `self` along `dim` and their positions (torch.topk).
///
/// **Shapes:** `self: [..., n, ...]` → values and indices `[..., k, ...]`.
/// **Dtypes:** every dtype but bool (libtorch's cpu has no bool topk); values keep `self`'s
/// dtype, indices are int64.
/// **Order:** the results are sorted (largest first when `largest`), NaN counting as the
/// largest value; equal values keep their input order. `sorted=False` gives the same (sorted)
/// results, which torch allows.
/// **Errors:** IndexError for `dim` out of range or `k` outside `[0, n]` (naming the op and the
/// operand); TypeError for bool.
/// **Source:** torch.topk (aten/src/ATen/native/TopKImpl.h). **Lowering:** ops::SortOp's sort,
/// then the first `k` of each line (stablehlo.slice).
struct TopkOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "topk", aten = "aten::topk";
  static constexpr std::string_view schema =
      "aten::topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)";
  ///@}
  /// Two results: values, indices.
  static constexpr size_t results = 2;
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::numeric();
  /// Non-tensor arguments.
  struct Args {
    int64_t k = 1;        ///< how many
    int64_t dim = -1;     ///< the dim to select along
    bool largest = true;  ///< the largest (else the smallest)
    bool sorted = true;   ///< (results are always sorted)
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return Args{r.to_int("k"), r.to_int("dim"), r.to_bool("largest"), r.to_bool("sorted")}; }
  /// Dtype and shape rule.
  static std::array<TensorMeta, 2> infer(std::span<const TensorMeta> in, const Args& a) {
    const int r = in[0].dim();
    const int d = r == 0 ? 0 : wrap_dim(a.dim, r, aten);
    const int64_t n = r == 0 ? 1 : in[0].sizes[d];
    if (a.k < 0 || a.k > n)
      throw IndexError(std::string(aten) + ": k = " + std::to_string(a.k) + " is out of range for a dim of size " +
                       std::to_string(n) + " (operands " + describe(in) + ")");
    Dims s = in[0].sizes;
    if (r > 0) s[d] = a.k;
    return {TensorMeta{in[0].dtype, s, Device{}, true}, TensorMeta{ScalarType::Int64, s, Device{}, true}};
  }
  /// CPU kernel: a stable sort of each line, the first `k` kept.
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, std::span<AnyTensor> out) {
    if (out[0].numel() == 0) return;
    const int d = in[0].dim() == 0 ? 0 : wrap_dim(a.dim, in[0].dim(), aten);
    detail::sort_lines(in[0], d, a.largest, a.k, out[0].get<T>().data_ptr(), out[1].get<int64_t>().data_ptr());
  }
  /// StableHLO: see the struct's docstring.
  template <class B, class V>
  static std::array<V, 2> lower(B& b, std::span<const V> in, const Args& a, std::span<const TensorMeta>) {
    const int r = static_cast<int>(in[0].dims.size());
    const int d = r == 0 ? 0 : wrap_dim(a.dim, r, aten);
    return detail::lower_sort(b, in[0], d, a.largest, a.k);
  }
};

// Each op's entry point, compiled once in TORCHTPU_SEPARATE_OPS programs (ops/library.hpp).
TORCHTPU_LIBRARY_MULTI_OP(SortOp);
TORCHTPU_LIBRARY_OP(ArgsortOp);
TORCHTPU_LIBRARY_MULTI_OP(TopkOp);

}  // namespace ops

/// `(values, indices)` of `x` sorted along `dim` (torch.sort); see ops::SortOp.
template <element T, int Rank>
std::pair<Tensor<T>, Tensor<int64_t>> sort(const Tensor<T, Rank>& x, int64_t dim = -1, bool descending = false) {
  const AnyTensor in[] = {AnyTensor(Tensor<T>(x))};
  auto r = ops::call_results<ops::SortOp>(in, {dim, descending});
  return {r[0].get<T>(), r[1].get<int64_t>()};
}
/// Run-time typed `sort`.
template <std::same_as<AnyTensor> A>
std::pair<A, A> sort(const A& x, int64_t dim = -1, bool descending = false) {
  const AnyTensor in[] = {x};
  auto r = ops::call_results<ops::SortOp>(in, {dim, descending});
  return {r[0], r[1]};
}

/// The positions that sort `x` along `dim` (torch.argsort); see ops::ArgsortOp.
template <element T, int Rank>
Tensor<int64_t> argsort(const Tensor<T, Rank>& x, int64_t dim = -1, bool descending = false) {
  const AnyTensor in[] = {AnyTensor(Tensor<T>(x))};
  return ops::call_mixed<ops::ArgsortOp, int64_t>(in, {dim, descending});
}
/// Run-time typed `argsort`.
template <std::same_as<AnyTensor> A>
A argsort(const A& x, int64_t dim = -1, bool descending = false) {
  const AnyTensor in[] = {x};
  return ops::call<ops::ArgsortOp>(in, {dim, descending});
}

/// `(values, indices)`: the `k` largest (`largest`) or smallest values of `x` along `dim`, sorted
/// (torch.topk); see ops::TopkOp.
template <element T, int Rank>
std::pair<Tensor<T>, Tensor<int64_t>> topk(const Tensor<T, Rank>& x, int64_t k, int64_t dim = -1, bool largest = true,
                                           bool sorted = true) {
  const AnyTensor in[] = {AnyTensor(Tensor<T>(x))};
  auto r = ops::call_results<ops::TopkOp>(in, {k, dim, largest, sorted});
  return {r[0].get<T>(), r[1].get<int64_t>()};
}
/// Run-time typed `topk`.
template <std::same_as<AnyTensor> A>
std::pair<A, A> topk(const A& x, int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true) {
  const AnyTensor in[] = {x};
  auto r = ops::call_results<ops::TopkOp>(in, {k, dim, largest, sorted});
  return {r[0], r[1]};
}

}  // namespace torchtpu
