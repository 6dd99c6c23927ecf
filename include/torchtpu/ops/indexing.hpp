// torchtpu/ops/indexing.hpp — operator library, indexing family: index_select, gather,
// take_along_dim, scatter (src and value forms), scatter_add, masked_fill, one_hot. These ops
// have operands that keep their own dtype (int64 indices, bool masks; ops/library.hpp's
// `operand_dtype` and the mixed form of the cpu kernel) and, for one_hot, a result dtype that is
// not the data's. Tests: tests/ops/test_indexing.cpp (cpu, every dtype),
// tests/device_ops/test_device_library.cpp (PJRT devices).
//
// On the cpu an index out of range throws IndexError naming the op, the index and the size;
// nothing is read or written outside a buffer. PJRT devices have no such check yet (a run-time
// check would keep a model from the whole-graph compile): there an out-of-range index selects
// nothing — gathered elements are 0 (false), scattered ones are dropped, one_hot rows are 0.
// The lowerings compare the indices with an iota (one-hot masks, then select and reduce): no
// gather or scatter op is needed, at a cost of `result elements x indexed dim size`.
#pragma once
#include <cstdint>      // int64_t
#include <algorithm>    // std::max
#include <limits>       // std::numeric_limits
#include <optional>     // std::optional (take_along_dim's dim)
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::pair
#include <type_traits>  // std::remove_cvref_t
#include <vector>       // std::vector

#include "../core/factories.hpp"  // full (scatter's value form)
#include "../device/modes.hpp"   // stablehlo::Precision (embedding's one-hot product)
#include "schema.hpp"   // Arg (Scalar::read)
#include "library.hpp"  // TensorMeta, DtypeSet, ops::call, call_mixed
#include "shape.hpp"    // detail::vec, detail::to_dims

namespace torchtpu {
namespace ops {

namespace detail {

/// Calls `f(idx)` for every multi-index of `sizes` in row-major order (`idx` has
/// `sizes.size()` entries; nothing for an empty shape).
template <class F>
void for_each_index(const Dims& sizes, F&& f) {
  const int r = sizes.size();
  const int64_t n = numel(sizes);
  int64_t idx[max_rank] = {};
  for (int64_t k = 0; k < n; ++k) {
    f(static_cast<const int64_t*>(idx));
    for (int d = r - 1; d >= 0; --d) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
  }
}

/// The element of `t` at multi-index `idx` (with `idx[dim]` replaced by `at` when dim >= 0).
template <class T>
T& at_index(const Tensor<T>& t, const int64_t* idx, int dim = -1, int64_t at = 0) {
  int64_t off = 0;
  for (int d = 0; d < t.dim(); ++d) off += (d == dim ? at : idx[d]) * t.stride(d);
  return t.data_ptr()[off];
}

/// Throws IndexError unless 0 <= i < size (`op: index 5 is out of bounds for dimension 0 with size 2`).
inline void check_index(int64_t i, int64_t size, int dim, std::string_view op) {
  if (i < 0 || i >= size)
    throw IndexError(std::string(op) + ": index " + std::to_string(i) + " is out of bounds for dimension " +
                     std::to_string(dim) + " with size " + std::to_string(size));
}

/// TypeError unless `m` (operand `what` of `op`) is an index dtype: int64, or int32 where `int32_ok`.
inline void require_index(const TensorMeta& m, std::span<const TensorMeta> in, std::string_view op, std::string_view what,
                          bool int32_ok) {
  if (m.dtype == ScalarType::Int64 || (int32_ok && m.dtype == ScalarType::Int32)) return;
  throw TypeError(std::string(op) + ": expected dtype int64" + (int32_ok ? " or int32" : "") + " for " +
                  std::string(what) + ", got " + std::string(dtype_name(m.dtype)) + " (operands " + describe(in) + ")");
}

/// The exact identity of addition in `dtype` (-0.0 for floats: -0.0 + x is x for every x,
/// +0.0 and NaN included; 0 for integers) as a StableHLO constant. The one-hot lowerings sum
/// the selected element with these, which is exact (XLA's cpu max-reduce drops NaN, so a max
/// over -inf fills would not be).
template <class B>
auto add_identity(B& b, ScalarType dtype, std::vector<int64_t> dims) {
  if (is_floating(dtype)) return b.constant(-0.0, dtype, std::move(dims));
  return b.constant_int(0, dtype, std::move(dims));
}

/// Adds a run-time check (reported after the program ran, as the cpu's IndexError) that every
/// index of `idx` lies in `[0, n)`; the lowerings below never read or write outside an operand
/// either way (an out-of-range index matches no position).
template <class B, class V>
void check_range(B& b, const V& idx, int64_t n, int dim, std::string_view op) {
  if (numel(Dims(std::span<const int64_t>(idx.dims))) == 0) return;
  const V low = b.compare("LT", idx, b.constant_int(0, idx.dtype, idx.dims));
  const V high = b.compare("GE", idx, b.constant_int(n, idx.dtype, idx.dims));
  b.runtime_check(b.binary("or", low, high), "IndexError: " + std::string(op) + ": an index is out of bounds for dimension " +
                                                 std::to_string(dim) + " with size " + std::to_string(n));
}

/// `r` = `x[..., idx[i], ...]` along `dim` for each position `i` of `idx` (torch.gather's
/// rule, `idx` of `x`'s rank, sizes <= `x`'s outside `dim`), in StableHLO: a one-hot mask
/// `idx == iota` over a new last axis of size `x.size(dim)`, select, and a sum with the exact
/// identity `add_identity` (an or-reduce for bool); positions whose index hits nothing (out of
/// range) get 0.
template <class B, class V>
V lower_take(B& b, const V& x, int dim, const V& idx, std::string_view op) {
  const int r = static_cast<int>(x.dims.size());
  const std::vector<int64_t> s = idx.dims;
  const int64_t n = x.dims[static_cast<size_t>(dim)];
  check_range(b, idx, n, dim, op);
  if (numel(Dims(std::span<const int64_t>(s))) == 0 || n == 0) return b.constant_int(0, x.dtype, s);
  std::vector<int64_t> lim = s;
  lim[static_cast<size_t>(dim)] = n;
  const V xs = b.slice(x, std::vector<int64_t>(s.size(), 0), lim);
  std::vector<int64_t> perm;  // dim moved last; the other axes in order
  for (int d = 0; d < r; ++d)
    if (d != dim) perm.push_back(d);
  perm.push_back(dim);
  std::vector<int64_t> wide = s, xdims, idims;
  wide.push_back(n);
  for (int d = 0; d < r; ++d) {
    idims.push_back(d);
    if (d != dim) xdims.push_back(d);
  }
  xdims.push_back(r);
  const V xb = b.broadcast_in_dim(b.transpose(xs, perm), wide, xdims);
  const V mask = b.compare("EQ", b.broadcast_in_dim(idx, wide, idims), b.iota(ScalarType::Int64, wide, r));
  const bool is_bool = x.dtype == ScalarType::Bool;
  const V sel = b.select(mask, xb, add_identity(b, x.dtype, wide));
  using RO = reduce_op_t<B>;
  const V got = b.reduce(sel, add_identity(b, x.dtype, {}), is_bool ? RO::Or : RO::Add, {r});
  if (is_bool) return got;  // no hit: false
  const V hit = b.reduce(mask, b.constant_int(0, ScalarType::Bool), RO::Or, {r});
  return b.select(hit, got, b.constant_int(0, x.dtype, s));
}

/// The lowest and highest value of integer dtype `t` (uint8, int32, int64): amin/amax identities.
inline int64_t int_lowest(ScalarType t) {
  return t == ScalarType::UInt8 ? 0 : t == ScalarType::Int32 ? int64_t(std::numeric_limits<int32_t>::min())
                                                              : std::numeric_limits<int64_t>::min();
}
inline int64_t int_highest(ScalarType t) {
  return t == ScalarType::UInt8 ? 255 : t == ScalarType::Int32 ? int64_t(std::numeric_limits<int32_t>::max())
                                                                : std::numeric_limits<int64_t>::max();
}

/// How a scatter combines the `src` elements that land on one target with each other and with
/// `self` (torch.scatter, scatter_add / index_add, scatter_reduce's `reduce`).
enum class ScatterReduce : uint8_t { Replace, Sum, Prod, Mean, Amax, Amin };

/// The name torch gives `r` in scatter_reduce (`sum`, `prod`, `mean`, `amax`, `amin`).
inline std::string_view scatter_reduce_name(ScatterReduce r) {
  switch (r) {
    case ScatterReduce::Sum: return "sum";
    case ScatterReduce::Prod: return "prod";
    case ScatterReduce::Mean: return "mean";
    case ScatterReduce::Amax: return "amax";
    case ScatterReduce::Amin: return "amin";
    default: return "replace";
  }
}

/// `self` with `src` scattered at `idx` along `dim` (torch.scatter's rule: `idx` of `self`'s
/// rank, sizes <= `src`'s and, outside `dim`, <= `self`'s) and combined by `red`, in StableHLO:
/// the one-hot mask `idx == iota` over a new last axis of size `self.size(dim)`; the selected
/// `src` elements reduced over `dim` (Replace and Sum: summed with the exact `add_identity`, or
/// or-ed for bool; Replace keeps only the last source position along `dim`, as the cpu's
/// row-major order; Prod, Amax, Amin: multiplied, max-ed, min-ed with their identities, a NaN
/// among them giving NaN, which XLA's max/min reductions would drop; Mean: summed and counted),
/// moved back into place, padded to `self`'s shape and combined with `self` where some index hit
/// (with `include_self` false, the reduction alone replaces `self` there).
template <class B, class V>
V lower_scatter(B& b, const V& self, int dim, const V& idx, const V& src, ScatterReduce red, bool include_self,
                std::string_view op) {
  const int r = static_cast<int>(self.dims.size());
  const std::vector<int64_t> s = idx.dims;
  const int64_t n = self.dims[static_cast<size_t>(dim)];
  check_range(b, idx, n, dim, op);
  if (numel(Dims(std::span<const int64_t>(s))) == 0 || n == 0) return self;
  using RO = reduce_op_t<B>;
  const ScalarType t = self.dtype;
  const bool is_bool = t == ScalarType::Bool, fl = is_floating(t);
  std::vector<int64_t> wide = s, idims;
  wide.push_back(n);
  for (int d = 0; d < r; ++d) idims.push_back(d);
  const V sb = b.broadcast_in_dim(b.slice(src, std::vector<int64_t>(s.size(), 0), s), wide, idims);
  V mask = b.compare("EQ", b.broadcast_in_dim(idx, wide, idims), b.iota(ScalarType::Int64, wide, r));
  if (red == ScatterReduce::Replace) {
    // Repeated indices: the last write along `dim` wins, as on the cpu (row-major order): keep,
    // per target, only the source position with the largest coordinate along `dim`.
    const V pos = b.iota(ScalarType::Int64, wide, dim);
    const V cand = b.select(mask, pos, b.constant_int(-1, ScalarType::Int64, wide));
    const V last = b.reduce(cand, b.constant_int(-1, ScalarType::Int64), RO::Max, {dim});
    std::vector<int64_t> keep;
    for (int d = 0; d <= r; ++d)
      if (d != dim) keep.push_back(d);
    mask = b.binary("and", mask, b.compare("EQ", pos, b.broadcast_in_dim(last, wide, keep)));
  }
  // the reduction's identity, as a constant of `dims`
  auto identity = [&](std::vector<int64_t> dims) {
    switch (red) {
      case ScatterReduce::Prod: return fl ? b.constant(1.0, t, dims) : b.constant_int(1, t, dims);
      case ScatterReduce::Amax:
        return fl ? b.constant(-std::numeric_limits<double>::infinity(), t, dims) : b.constant_int(int_lowest(t), t, dims);
      case ScatterReduce::Amin:
        return fl ? b.constant(std::numeric_limits<double>::infinity(), t, dims) : b.constant_int(int_highest(t), t, dims);
      default: return add_identity(b, t, dims);
    }
  };
  const RO rop = is_bool ? RO::Or
                 : red == ScatterReduce::Prod ? RO::Mul
                 : red == ScatterReduce::Amax ? RO::Max
                 : red == ScatterReduce::Amin ? RO::Min
                                              : RO::Add;
  std::vector<int64_t> perm;  // the last axis (self's `dim`) back to `dim`
  for (int d = 0; d < r; ++d) perm.push_back(d < dim ? d : d == dim ? r - 1 : d - 1);
  std::vector<int64_t> zero(static_cast<size_t>(r), 0), high;
  // a reduction over `dim` moved back into place and padded to self's shape
  auto place = [&](const V& v, const V& pad) {
    const V moved = b.transpose(v, perm);
    std::vector<int64_t> hi;
    for (int d = 0; d < r; ++d) hi.push_back(self.dims[static_cast<size_t>(d)] - moved.dims[static_cast<size_t>(d)]);
    return b.pad(moved, pad, zero, hi);
  };
  V vals = b.reduce(b.select(mask, sb, identity(wide)), identity({}), rop, {dim});
  if (fl && (red == ScatterReduce::Amax || red == ScatterReduce::Amin)) {
    const V nan_src = b.binary("and", mask, b.compare("NE", sb, sb));
    const V any_nan = b.reduce(nan_src, b.constant_int(0, ScalarType::Bool), RO::Or, {dim});
    vals = b.select(any_nan, b.constant(std::numeric_limits<double>::quiet_NaN(), t, vals.dims), vals);
  }
  const V hit = place(b.reduce(mask, b.constant_int(0, ScalarType::Bool), RO::Or, {dim}), b.constant_int(0, ScalarType::Bool));
  vals = place(vals, identity({}));
  V combined = vals;
  switch (red) {
    case ScatterReduce::Replace: break;
    case ScatterReduce::Sum: if (include_self) combined = is_bool ? b.binary("or", self, vals) : b.add(self, vals); break;
    case ScatterReduce::Prod: if (include_self) combined = is_bool ? b.binary("and", self, vals) : b.multiply(self, vals); break;
    case ScatterReduce::Amax: if (include_self) combined = b.maximum(self, vals); break;
    case ScatterReduce::Amin: if (include_self) combined = b.minimum(self, vals); break;
    case ScatterReduce::Mean: {
      V cnt = place(b.reduce(b.convert(mask, t), fl ? b.constant(0.0, t) : b.constant_int(0, t), RO::Add, {dim}),
                    fl ? b.constant(1.0, t) : b.constant_int(1, t));
      V sum = vals;
      if (include_self) {
        sum = b.add(self, vals);
        cnt = b.add(cnt, fl ? b.constant(1.0, t, self.dims) : b.constant_int(1, t, self.dims));
      }
      combined = b.divide(sum, cnt);
      if (!fl) {  // floor division, as torch's integer mean: trunc, then one less where a negative sum leaves a remainder
        const V rem = b.binary("remainder", sum, cnt);
        const V adjust = b.binary("and", b.compare("NE", rem, b.constant_int(0, t, self.dims)),
                                  b.compare("LT", sum, b.constant_int(0, t, self.dims)));
        combined = b.select(adjust, b.subtract(combined, b.constant_int(1, t, self.dims)), combined);
      }
      break;
    }
  }
  return b.select(hit, combined, self);
}

/// A Scalar argument (torch's `Scalar`: an int, a float or a bool), kept exactly.
struct Scalar {
  double d = 0;           ///< the value when not `integral`
  int64_t i = 0;          ///< the value when `integral` (ints and bools)
  bool integral = false;  ///< an int or a bool
  /// The value as element type `T`, as torch converts it (float → int truncates).
  template <element T>
  T as() const {
    return integral ? convert<T>(i) : convert<T>(d);
  }
  /// A scalar from a call argument: an int, a float, a bool or a 0-dim tensor (its value,
  /// copied to the host). **Errors:** ShapeError naming `op` for a tensor that is not 0-dim;
  /// TypeError for another kind.
  static Scalar read(const Arg& a, std::string_view op, std::string_view what) {
    if (const auto* v = std::get_if<int64_t>(&a)) return Scalar{0, *v, true};
    if (const auto* v = std::get_if<bool>(&a)) return Scalar{0, *v ? 1 : 0, true};
    if (const auto* v = std::get_if<double>(&a)) return Scalar{*v, 0, false};
    if (const auto* t = std::get_if<AnyTensor>(&a)) return of(*t, op);
    throw TypeError(std::string(op) + ": argument '" + std::string(what) + "' must be a number or a 0-dim tensor, got " +
                    arg_kind_name(a));
  }
  /// The value of a 0-dim tensor (copied to the host when it is on a device).
  static Scalar of(const AnyTensor& t, std::string_view op) {
    if (!t.defined() || t.dim() != 0)
      throw ShapeError(std::string(op) + ": only supports a 0-dimensional value tensor, but got tensor with " +
                       std::to_string(t.defined() ? t.dim() : 0) + " dimension(s) (value " + describe(TensorMeta::of(t)) +
                       ")");
    return t.visit([]<class T>(const Tensor<T>& x) {
      const T v = x.item();
      if constexpr (std::is_floating_point_v<opmath_t<T>>) return Scalar{static_cast<double>(static_cast<opmath_t<T>>(v)), 0, false};
      else return Scalar{0, static_cast<int64_t>(v), true};
    });
  }
  /// The value as a StableHLO constant of `dtype` (the same conversion as `as<T>`).
  template <class B>
  auto constant(B& b, ScalarType dtype, std::vector<int64_t> dims) const {
    return AnyTensor::dispatch(dtype, [&]<class T>(std::type_identity<T>) {
      const T v = as<T>();
      if constexpr (std::is_floating_point_v<opmath_t<T>>)
        return b.constant(static_cast<double>(static_cast<opmath_t<T>>(v)), dtype, std::move(dims));
      else return b.constant_int(static_cast<int64_t>(v), dtype, std::move(dims));
    });
  }
};

}  // namespace detail

/// The slices of `self` at `index` along `dim` (torch.index_select).
///
/// **Shapes:** `self: [..., n, ...]` (`n` at `dim`), `index: [k]` (or 0-dim) → `[..., k, ...]`.
/// **Dtypes:** `self` all eight (the result's); `index` int64 or int32.
/// **Errors:** TypeError for another index dtype; ShapeError for an index of rank > 1;
/// IndexError for `dim` out of range or an index outside `[0, n)` (torch does not wrap
/// negative indices here; on PJRT devices a run-time check of the program, raised when the
/// result is read).
/// **Source:** torch.index_select. **Lowering:** detail::lower_take (one-hot mask, select,
/// reduce).
struct IndexSelectOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "index_select", aten = "aten::index_select";
  static constexpr std::string_view schema = "aten::index_select(Tensor self, int dim, Tensor index) -> Tensor";
  ///@}
  /// The dtypes libtorch allows (of `self` and the result).
  static constexpr DtypeSet dtypes = DtypeSet::all();
  /// Non-tensor arguments.
  struct Args {
    int64_t dim = 0;  ///< the dim to select along
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return Args{r.to_int("dim")}; }
  /// `self` takes the result dtype; `index` is read as int64.
  static ScalarType operand_dtype(size_t i, ScalarType, ScalarType result) { return i == 1 ? ScalarType::Int64 : result; }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    const TensorMeta &x = in[0], &index = in[1];
    detail::require_index(index, in, aten, "index", true);
    if (index.dim() > 1)
      throw ShapeError("aten::index_select: index is supposed to be a vector (operands " + describe(in) + ")");
    const int d = wrap_dim(a.dim, x.dim(), aten);
    TensorMeta out{x.dtype, x.sizes, Device{}, true};
    if (x.dim() > 0) out.sizes[d] = index.dim() == 0 ? 1 : index.sizes[0];
    else if (numel(index.sizes) != 1)
      throw ShapeError("aten::index_select: a 0-dim self takes one index (operands " + describe(in) + ")");
    return out;
  }
  /// CPU kernel: one slice copy per index.
  template <element T>
  static void cpu(std::span<const AnyTensor> in, const Args& a, Tensor<T>& out) {
    const Tensor<T>& x = in[0].get<T>();
    const Tensor<int64_t> index = in[1].get<int64_t>().reshape(Dims{-1});
    const int d = wrap_dim(a.dim, x.dim(), aten);
    const int64_t n = x.dim() == 0 ? 1 : x.size(d);
    for (int64_t k = 0; k < index.numel(); ++k) {
      const int64_t i = index.data_ptr()[k * index.stride(0)];
      detail::check_index(i, n, d, aten);
      if (x.dim() == 0) out.copy_(x);
      else out.select(d, k).copy_(x.select(d, i));
    }
  }
  /// StableHLO: the index broadcast along every other dim, then detail::lower_take.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    const V& x = in[0];
    if (x.dims.empty()) return x;  // the one index must be 0 (checked on the cpu only)
    const int d = wrap_dim(a.dim, static_cast<int>(x.dims.size()), aten);
    const V idx = b.broadcast_in_dim(b.reshape(in[1], {out[d]}), detail::vec(out), {d});
    return detail::lower_take(b, x, d, idx, aten);
  }
};

/// Rows of an embedding table (torch.nn.functional.embedding, forward): `weight[indices]`.
///
/// **Shapes:** `weight: [num, dim]`, `indices: [...]` (any rank) → `[..., dim]`.
/// **Dtypes:** `weight` all eight (the result's); `indices` int64 or int32.
/// **Errors:** ShapeError for a `weight` that is not 2-D; TypeError for another index dtype;
/// IndexError for an index outside `[0, num)` (on PJRT devices a run-time check of the
/// program). `padding_idx`, `scale_grad_by_freq` and `sparse` change only gradients: the forward
/// ignores them, as torch's does.
/// **Source:** torch.nn.functional.embedding / aten::embedding. **Lowering:** a floating table: one-hot rows
/// times the table (dot_general, highest precision; a run-time check that the table is finite);
/// other dtypes: detail::lower_take.
struct EmbeddingOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "embedding", aten = "aten::embedding";
  static constexpr std::string_view schema =
      "aten::embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, "
      "bool sparse=False) -> Tensor";
  ///@}
  /// The dtypes of `weight` (and the result).
  static constexpr DtypeSet dtypes = DtypeSet::all();
  /// Non-tensor arguments (none affects the forward).
  struct Args {
    int64_t padding_idx = -1;  ///< gradient-only (kept for completeness)
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return Args{r.to_int("padding_idx")}; }
  /// `weight` takes the result dtype; `indices` is read as int64.
  static ScalarType operand_dtype(size_t i, ScalarType, ScalarType result) { return i == 1 ? ScalarType::Int64 : result; }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args&) {
    const TensorMeta &w = in[0], &idx = in[1];
    detail::require_index(idx, in, aten, "indices", true);
    if (w.dim() != 2) throw ShapeError("aten::embedding: weight must be 2-D (operands " + describe(in) + ")");
    TensorMeta out{w.dtype, idx.sizes, Device{}, true};
    out.sizes.push_back(w.sizes[1]);
    return out;
  }
  /// CPU kernel: one row copy per index.
  template <element T>
  static void cpu(std::span<const AnyTensor> in, const Args&, Tensor<T>& out) {
    const Tensor<T> w = in[0].get<T>().contiguous();
    const Tensor<int64_t> idx = in[1].get<int64_t>().contiguous();
    const int64_t num = w.size(0), d = w.size(1);
    T* o = out.data_ptr();
    for (int64_t k = 0; k < idx.numel(); ++k) {
      const int64_t i = idx.data_ptr()[k];
      detail::check_index(i, num, 0, aten);
      std::copy_n(w.data_ptr() + i * d, d, o + k * d);
    }
  }
  /// StableHLO: the indices flattened and broadcast along the row, then detail::lower_take.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args&, const Dims& out) {
    const int64_t n = numel(out) / (out.back() == 0 ? 1 : out.back()), d = out.back();
    if (n == 0 || d == 0) return b.constant_int(0, in[0].dtype, detail::vec(out));
    if (is_floating(in[0].dtype)) {
      // one-hot rows [n, num] times the table [num, d] at the highest precision: each result
      // is one table element plus exact zeros (the select-and-sum of lower_take would build
      // an [n, d, num] mask: 45 GB for 32 sentences of 16 tokens and BERT's 30522 rows). A
      // non-finite table element would turn every 0 · x into NaN, so the program checks the
      // table is finite and fails with ValueError otherwise, never returning such values.
      const int64_t num = in[0].dims[0];
      const V idx = b.reshape(in[1], {n});
      detail::check_range(b, idx, num, 0, aten);
      const V hit = b.compare("EQ", b.broadcast_in_dim(idx, {n, num}, {0}), b.iota(ScalarType::Int64, {n, num}, 1));
      const V onehot = b.convert(hit, in[0].dtype);
      const V finite = b.compare("EQ", b.subtract(in[0], in[0]), b.constant(0.0, in[0].dtype, in[0].dims));
      using RO = detail::reduce_op_t<B>;
      const V all_finite = b.reduce(finite, b.constant_int(1, ScalarType::Bool), RO::And, {0, 1});
      b.runtime_check(b.compare("EQ", all_finite, b.constant_int(0, ScalarType::Bool)),
                      "ValueError: aten::embedding: the table holds inf or NaN, which the compiled lookup (one-hot rows "
                      "times the table) cannot return exactly; run the model on the cpu");
      const V rows = b.dot_general(onehot, in[0], {{}, {}, {1}, {0}}, stablehlo::Precision::Highest);
      return b.reshape(rows, detail::vec(out));
    }
    const V idx = b.broadcast_in_dim(b.reshape(in[1], {n}), {n, d}, {0});
    return b.reshape(detail::lower_take(b, in[0], 0, idx, aten), detail::vec(out));
  }
};

/// Values of `self` gathered along `dim` at `index` (torch.gather):
/// `out[i][j][k] = self[index[i][j][k]][j][k]` for dim 0, likewise for the others.
///
/// **Shapes:** `index` of `self`'s rank with `index.size(d) <= self.size(d)` for `d != dim` →
/// `index`'s shape.
/// **Dtypes:** `self` all eight (the result's); `index` int64 only (as torch).
/// **Errors:** TypeError for another index dtype; ShapeError for ranks or sizes that do not
/// fit (naming every operand); IndexError for `dim` out of range or an index (on devices: a run-time check) outside
/// `[0, self.size(dim))`.
/// **Source:** torch.gather. **Lowering:** detail::lower_take.
struct GatherOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "gather", aten = "aten::gather";
  static constexpr std::string_view schema =
      "aten::gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::all();
  /// Non-tensor arguments (`sparse_grad` only concerns autograd).
  struct Args {
    int64_t dim = 0;  ///< the dim to gather along
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return Args{r.to_int("dim")}; }
  /// `index` stays int64.
  static ScalarType operand_dtype(size_t i, ScalarType given, ScalarType result) { return i == 1 ? given : result; }
  /// The shape rule shared with take_along_dim: `index` fits `self` outside `dim`.
  static void check_fit(std::span<const TensorMeta> in, int d, std::string_view op) {
    const TensorMeta &x = in[0], &index = in[1];
    bool ok = index.dim() == x.dim() || (x.dim() <= 1 && index.dim() <= 1);
    for (int e = 0; ok && e < x.dim() && e < index.dim(); ++e) ok = e == d || index.sizes[e] <= x.sizes[e];
    if (!ok)
      throw ShapeError(std::string(op) + ": index must have the rank of self and sizes no larger outside dimension " +
                       std::to_string(d) + " (operands " + describe(in) + ")");
  }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    detail::require_index(in[1], in, aten, "index", false);
    const int d = wrap_dim(a.dim, in[0].dim(), aten);
    check_fit(in, d, aten);
    return TensorMeta{in[0].dtype, in[1].sizes, Device{}, true};
  }
  /// The gather loop shared with take_along_dim (`x` and `index` of one rank, or 0-dim / 1-D).
  template <element T>
  static void gather(const Tensor<T>& x, const Tensor<int64_t>& index, int d, Tensor<T>& out, std::string_view op) {
    const Tensor<T> x1 = x.dim() == 0 ? x.reshape(Dims{1}) : x;
    const Tensor<int64_t> i1 = index.dim() == 0 ? index.reshape(Dims{1}) : index;
    const Tensor<T> o1 = out.dim() == 0 ? out.reshape(Dims{1}) : out;
    const int64_t n = x1.size(d);
    detail::for_each_index(i1.sizes(), [&](const int64_t* idx) {
      const int64_t i = detail::at_index(i1, idx);
      detail::check_index(i, n, d, op);
      detail::at_index(o1, idx) = detail::at_index(x1, idx, d, i);
    });
  }
  /// CPU kernel.
  template <element T>
  static void cpu(std::span<const AnyTensor> in, const Args& a, Tensor<T>& out) {
    gather(in[0].get<T>(), in[1].get<int64_t>(), wrap_dim(a.dim, in[0].dim(), aten), out, aten);
  }
  /// StableHLO: detail::lower_take.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    const int r = static_cast<int>(in[0].dims.size());
    if (r == 0) return b.reshape(detail::lower_take(b, b.reshape(in[0], {1}), 0, b.reshape(in[1], {1}), aten), detail::vec(out));
    return detail::lower_take(b, in[0], wrap_dim(a.dim, r, aten), in[1], aten);
  }
};

/// Values of `self` at `indices` along `dim` after broadcasting (torch.take_along_dim); with
/// no `dim`, of the flattened `self` at the flattened `indices`.
///
/// **Shapes:** with `dim`: operands of one rank, broadcast except along `dim` → the broadcast
/// shape with `indices.size(dim)` at `dim`; without: `[indices.numel()]`.
/// **Dtypes:** `self` all eight; `indices` int64 only.
/// **Errors:** TypeError for another index dtype; ShapeError for ranks that differ or sizes
/// that do not broadcast; IndexError for `dim` out of range or an index out of range (on devices: a run-time check).
/// **Source:** torch.take_along_dim. **Lowering:** broadcast_in_dim, detail::lower_take.
struct TakeAlongDimOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "take_along_dim", aten = "aten::take_along_dim";
  static constexpr std::string_view schema = "aten::take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::all();
  /// Non-tensor arguments.
  struct Args {
    int64_t dim = 0;       ///< the dim (when `has_dim`)
    bool has_dim = false;  ///< false: the flattened form
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) {
    return r.is_none("dim") ? Args{0, false} : Args{r.to_int("dim"), true};
  }
  /// `indices` stays int64.
  static ScalarType operand_dtype(size_t i, ScalarType given, ScalarType result) { return i == 1 ? given : result; }
  /// The broadcast shapes of `self` and `indices` (each keeps its size at `d`).
  static std::pair<Dims, Dims> shapes(std::span<const TensorMeta> in, int d) {
    Dims x = in[0].sizes, i = in[1].sizes;
    x[d] = i[d] = 1;
    const Dims both = broadcast_shapes(x, i, aten);
    Dims xs = both, is = both;
    xs[d] = in[0].sizes[d];
    is[d] = in[1].sizes[d];
    return {xs, is};
  }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    detail::require_index(in[1], in, aten, "indices", false);
    if (!a.has_dim) return TensorMeta{in[0].dtype, Dims{numel(in[1].sizes)}, Device{}, true};
    if (in[0].dim() != in[1].dim())
      throw ShapeError("aten::take_along_dim: input and indices should have the same number of dimensions (operands " +
                       describe(in) + ")");
    const int d = wrap_dim(a.dim, in[0].dim(), aten);
    if (in[0].dim() == 0) return TensorMeta{in[0].dtype, Dims{}, Device{}, true};
    return TensorMeta{in[0].dtype, shapes(in, d).second, Device{}, true};
  }
  /// CPU kernel: GatherOp's loop on the broadcast (or flattened) operands.
  template <element T>
  static void cpu(std::span<const AnyTensor> in, const Args& a, Tensor<T>& out) {
    const Tensor<T>& x = in[0].get<T>();
    const Tensor<int64_t>& index = in[1].get<int64_t>();
    if (!a.has_dim) {
      Tensor<T> flat = out;
      GatherOp::gather(x.reshape(Dims{-1}), index.reshape(Dims{-1}), 0, flat, aten);
      return;
    }
    const int d = wrap_dim(a.dim, x.dim(), aten);
    if (x.dim() == 0) return GatherOp::gather(x, index, 0, out, aten);
    const TensorMeta m[2] = {TensorMeta::of(in[0]), TensorMeta::of(in[1])};
    const auto [xs, is] = shapes(m, d);
    GatherOp::gather(x.expand(xs), index.expand(is), d, out, aten);
  }
  /// StableHLO: broadcast_in_dim of both operands (or reshapes to 1-D), then detail::lower_take.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    const V &x = in[0], &i = in[1];
    if (!a.has_dim || x.dims.empty())
      return b.reshape(detail::lower_take(b, b.reshape(x, {x.numel()}), 0, b.reshape(i, {numel(out)}), aten), detail::vec(out));
    const int r = static_cast<int>(x.dims.size());
    const int d = wrap_dim(a.dim, r, aten);
    std::vector<int64_t> xs = detail::vec(out), all;
    xs[static_cast<size_t>(d)] = x.dims[static_cast<size_t>(d)];
    for (int e = 0; e < r; ++e) all.push_back(e);
    return detail::lower_take(b, b.broadcast_in_dim(x, xs, all), d, b.broadcast_in_dim(i, detail::vec(out), all), aten);
  }
};

/// Shared parts of scatter and scatter_add (torch.Tensor.scatter / scatter_add's rules).
template <bool Add>
struct ScatterBase {
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::all();
  /// Non-tensor arguments.
  struct Args {
    int64_t dim = 0;  ///< the dim to scatter along
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return Args{r.to_int("dim")}; }
  /// `index` stays int64.
  static ScalarType operand_dtype(size_t i, ScalarType given, ScalarType result) { return i == 1 ? given : result; }
  /// Dtype and shape rule (`op` names the op in errors).
  static TensorMeta infer_for(std::span<const TensorMeta> in, const Args& a, std::string_view op) {
    const TensorMeta &x = in[0], &index = in[1], &src = in[2];
    detail::require_index(index, in, op, "index", false);
    if (src.dtype != x.dtype)
      throw TypeError(std::string(op) + ": expected self and src of one dtype (operands " + describe(in) + ")");
    const int d = wrap_dim(a.dim, x.dim(), op);
    bool ok = index.dim() == x.dim() && (index.dim() == src.dim() || numel(index.sizes) == 0);
    for (int e = 0; ok && e < index.dim(); ++e)
      ok = (numel(index.sizes) == 0 || index.sizes[e] <= src.sizes[e]) && (e == d || index.sizes[e] <= x.sizes[e]);
    if (!ok && !(x.dim() <= 1 && index.dim() <= 1 && src.dim() <= 1 && numel(index.sizes) <= numel(src.sizes)))
      throw ShapeError(std::string(op) + ": index must have the rank of self and src, sizes no larger than src's, and "
                       "no larger than self's outside dimension " + std::to_string(d) + " (operands " + describe(in) + ")");
    return TensorMeta{x.dtype, x.sizes, Device{}, true};
  }
  /// CPU kernel: a copy of `self`, then each `src` element written (added) at its index, in
  /// row-major order of `index` (the last write wins where indices repeat).
  template <element T>
  static void cpu_for(std::span<const AnyTensor> in, const Args& a, Tensor<T>& out, std::string_view op) {
    out.copy_(in[0].get<T>());
    const Tensor<int64_t>& index = in[1].get<int64_t>();
    const Tensor<T>& src = in[2].get<T>();
    const int d = wrap_dim(a.dim, out.dim(), op);
    const Tensor<T> o1 = out.dim() == 0 ? out.reshape(Dims{1}) : out;
    const Tensor<int64_t> i1 = index.dim() == 0 ? index.reshape(Dims{1}) : index;
    const Tensor<T> s1 = src.dim() == 0 ? src.reshape(Dims{1}) : src;
    const int64_t n = o1.size(d);
    detail::for_each_index(i1.sizes(), [&](const int64_t* idx) {
      const int64_t i = detail::at_index(i1, idx);
      detail::check_index(i, n, d, op);
      T& dst = detail::at_index(o1, idx, d, i);
      const T v = detail::at_index(s1, idx);
      if constexpr (!Add) dst = v;
      else if constexpr (std::is_same_v<T, bool>) dst = dst || v;
      else if constexpr (std::is_integral_v<T>)
        dst = static_cast<T>(static_cast<std::make_unsigned_t<T>>(dst) + static_cast<std::make_unsigned_t<T>>(v));
      else dst = static_cast<T>(static_cast<opmath_t<T>>(dst) + static_cast<opmath_t<T>>(v));
    });
  }
  /// StableHLO: detail::lower_scatter.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims&) {
    const std::string_view op = Add ? "aten::scatter_add" : "aten::scatter";
    const detail::ScatterReduce red = Add ? detail::ScatterReduce::Sum : detail::ScatterReduce::Replace;
    const int r = static_cast<int>(in[0].dims.size());
    if (r == 0) {
      auto one = [&b](const V& v) { return b.reshape(v, {1}); };
      return b.reshape(detail::lower_scatter(b, one(in[0]), 0, one(in[1]), one(in[2]), red, true, op), {});
    }
    return detail::lower_scatter(b, in[0], wrap_dim(a.dim, r, op), in[1], in[2], red, true, op);
  }
};

/// `self` with `src[i][j][k]` written at `[index[i][j][k]][j][k]` (dim 0; likewise for the
/// others), or the value `value` written there (the `scatter.value` overload) (torch.scatter).
///
/// **Shapes:** `index` of `self`'s rank, `index.size(d) <= src.size(d)` for every `d` and
/// `<= self.size(d)` for `d != dim` → `self`'s shape.
/// **Dtypes:** all eight (`src` of `self`'s dtype); `index` int64 only.
/// **Errors:** TypeError for another index dtype or a `src` of another dtype; ShapeError for
/// sizes that do not fit (naming every operand); IndexError for `dim` out of range or (cpu) an
/// index outside `[0, self.size(dim))`. Where indices repeat, the last write in row-major order
/// (the largest position along `dim`) wins, on the cpu and on devices (torch: which write
/// wins is unspecified).
/// **Source:** torch.scatter (the `reduce=` forms are not supported). **Lowering:**
/// detail::lower_scatter.
struct ScatterOp : ScatterBase<false> {
  ///@{
  /// Names and schema (the `.src` overload; `.value` passes a Scalar in `src`'s place).
  static constexpr std::string_view name = "scatter", aten = "aten::scatter";
  static constexpr std::string_view schema = "aten::scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor";
  ///@}
  /// The operands `self, index, src`: a Scalar in `src`'s place (`scatter.value`) becomes a
  /// tensor of `self`'s dtype and device, broadcast to `index`'s shape.
  template <class R>
  static std::vector<AnyTensor> tensors(const R& r) {
    const Arg& src = r.get("src");
    if (std::holds_alternative<AnyTensor>(src)) return r.tensors();
    const Arg& s = r.get("self");
    const Arg& i = r.get("index");
    if (!std::holds_alternative<AnyTensor>(s) || !std::holds_alternative<AnyTensor>(i)) return r.tensors();  // its TypeError
    return {std::get<AnyTensor>(s), std::get<AnyTensor>(i),
            value_tensor(std::get<AnyTensor>(s), std::get<AnyTensor>(i), detail::Scalar::read(src, aten, "value"))};
  }
  /// `v` as a tensor of `self`'s dtype and device, expanded to `index`'s shape.
  static AnyTensor value_tensor(const AnyTensor& self, const AnyTensor& index, const detail::Scalar& v) {
    return AnyTensor::dispatch(self.dtype(), [&]<class T>(std::type_identity<T>) {
      Tensor<T> one = full<T>(Dims{}, v.as<T>());
      if (!self.device().is_cpu()) one = one.to(self.device());
      return AnyTensor(one.expand(index.sizes()));
    });
  }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) { return infer_for(in, a, aten); }
  /// CPU kernel.
  template <element T>
  static void cpu(std::span<const AnyTensor> in, const Args& a, Tensor<T>& out) { cpu_for(in, a, out, aten); }
};

/// `self` with `src[i][j][k]` added at `[index[i][j][k]][j][k]` (dim 0; likewise for the
/// others) (torch.scatter_add); repeated indices accumulate.
///
/// **Shapes:** as scatter. **Dtypes:** all eight (bool: or; integers wrap); `index` int64.
/// **Errors:** as scatter.
/// **Source:** torch.scatter_add. **Lowering:** detail::lower_scatter (a sum per target: float
/// sums may round in another order than the cpu's sequential one).
struct ScatterAddOp : ScatterBase<true> {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "scatter_add", aten = "aten::scatter_add";
  static constexpr std::string_view schema = "aten::scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor";
  ///@}
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) { return infer_for(in, a, aten); }
  /// CPU kernel.
  template <element T>
  static void cpu(std::span<const AnyTensor> in, const Args& a, Tensor<T>& out) { cpu_for(in, a, out, aten); }
};

/// `self` with the `src` elements at `index` along `dim` reduced into it by `reduce`
/// (torch.scatter_reduce): `sum`, `prod`, `mean`, `amax` or `amin` of the elements landing on
/// one position, and of `self`'s element there too when `include_self` (the default);
/// positions no index hits keep `self`'s value. Table-QA models (TAPAS) reduce cell tokens
/// into cells with it.
///
/// **Shapes:** as scatter: `index` of `self`'s rank, sizes no larger than `src`'s and, outside
/// `dim`, than `self`'s → `self`'s shape.
/// **Dtypes:** every dtype but bool (`src` of `self`'s dtype); `index` int64. Integers wrap
/// (sum, prod) and `mean` floor-divides them, as torch; float16/bfloat16 combine in float32,
/// rounding after each step, as torch's cpu; amax/amin propagate NaN.
/// **Errors:** TypeError for another index dtype, a `src` of another dtype or a bool `self`;
/// ValueError for another `reduce`; ShapeError for sizes that do not fit (naming every
/// operand); IndexError for `dim` out of range or (cpu) an index outside `[0, self.size(dim))`.
/// **Source:** torch.scatter_reduce (aten/src/ATen/native/TensorAdvancedIndexing.cpp,
/// `scatter_reduce_two`: without `include_self` a hit position starts from the first element
/// scattered to it; `mean` divides by the number of elements combined).
/// **Lowering:** detail::lower_scatter with the reduction (sums and products may round in
/// another order than the cpu's sequential one).
struct ScatterReduceOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "scatter_reduce", aten = "aten::scatter_reduce";
  static constexpr std::string_view schema =
      "aten::scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool include_self=True) "
      "-> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::numeric();
  /// Non-tensor arguments.
  struct Args {
    int64_t dim = 0;                                         ///< the dim to scatter along
    detail::ScatterReduce reduce = detail::ScatterReduce::Sum;  ///< how elements combine
    bool include_self = true;                                ///< combine `self`'s element too
  };
  /// Args for `reduce` given by torch's name. **Errors:** ValueError for another name.
  static Args make(int64_t dim, std::string_view reduce, bool include_self) {
    for (const auto r : {detail::ScatterReduce::Sum, detail::ScatterReduce::Prod, detail::ScatterReduce::Mean,
                         detail::ScatterReduce::Amax, detail::ScatterReduce::Amin})
      if (reduce == detail::scatter_reduce_name(r)) return Args{dim, r, include_self};
    throw ValueError(std::string(aten) + ": reduce argument must be either sum, prod, mean, amax or amin, got '" +
                     std::string(reduce) + "'");
  }
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return make(r.to_int("dim"), r.str("reduce"), r.to_bool("include_self")); }
  /// `index` stays int64.
  static ScalarType operand_dtype(size_t i, ScalarType given, ScalarType result) { return i == 1 ? given : result; }
  /// Dtype and shape rule: scatter's, without bool.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    if (in[0].dtype == ScalarType::Bool)
      throw TypeError(std::string(aten) + ": bool tensors are not supported (operands " + describe(in) + ")");
    return ScatterBase<true>::infer_for(in, ScatterBase<true>::Args{a.dim}, aten);
  }
  /// CPU kernel: a copy of `self`; each `src` element combined into its target in row-major
  /// order of `index` (a target not yet hit starts from it when `include_self` is false); then
  /// `mean` divides each hit target by its count.
  template <element T>
  static void cpu(std::span<const AnyTensor> in, const Args& a, Tensor<T>& out) {
    if constexpr (!std::is_same_v<T, bool>) {
      out.copy_(in[0].get<T>());
      const Tensor<int64_t>& index = in[1].get<int64_t>();
      const Tensor<T>& src = in[2].get<T>();
      const int d = wrap_dim(a.dim, out.dim(), aten);
      const Tensor<T> o1 = out.dim() == 0 ? out.reshape(Dims{1}) : out;
      const Tensor<int64_t> i1 = index.dim() == 0 ? index.reshape(Dims{1}) : index;
      const Tensor<T> s1 = src.dim() == 0 ? src.reshape(Dims{1}) : src;
      const int64_t n = o1.size(d);
      using M = std::conditional_t<std::is_floating_point_v<T> || std::is_integral_v<T>, T, opmath_t<T>>;
      using U = std::make_unsigned_t<std::conditional_t<std::is_integral_v<T>, T, int>>;
      std::vector<int64_t> count(static_cast<size_t>(out.numel()), 0);  // elements combined per target
      const T* base = out.data_ptr();                                  // `out` is contiguous
      detail::for_each_index(i1.sizes(), [&](const int64_t* idx) {
        const int64_t i = detail::at_index(i1, idx);
        detail::check_index(i, n, d, aten);
        T& dst = detail::at_index(o1, idx, d, i);
        const T v = detail::at_index(s1, idx);
        int64_t& c = count[static_cast<size_t>(&dst - base)];
        if (c++ == 0 && !a.include_self) {
          dst = v;
          return;
        }
        const M x = static_cast<M>(dst), y = static_cast<M>(v);
        M r = x;
        switch (a.reduce) {
          case detail::ScatterReduce::Sum:
          case detail::ScatterReduce::Mean:
            if constexpr (std::is_integral_v<T>) r = static_cast<M>(static_cast<U>(x) + static_cast<U>(y));
            else r = x + y;
            break;
          case detail::ScatterReduce::Prod:
            if constexpr (std::is_integral_v<T>) r = static_cast<M>(static_cast<U>(x) * static_cast<U>(y));
            else r = x * y;
            break;
          case detail::ScatterReduce::Amax: r = MaximumOp{}(x, y); break;
          case detail::ScatterReduce::Amin: r = MinimumOp{}(x, y); break;
          default: break;
        }
        dst = static_cast<T>(r);
      });
      if (a.reduce != detail::ScatterReduce::Mean) return;
      T* o = out.data_ptr();
      for (size_t k = 0; k < count.size(); ++k) {
        if (count[k] == 0) continue;
        const int64_t c = count[k] + (a.include_self ? 1 : 0);
        if constexpr (std::is_integral_v<T>) {
          const int64_t x = static_cast<int64_t>(o[k]);
          int64_t q = x / c;
          if (x % c != 0 && x < 0) --q;  // floor, as torch's integer mean
          o[k] = static_cast<T>(q);
        } else {
          o[k] = static_cast<T>(static_cast<M>(o[k]) / static_cast<M>(c));
        }
      }
    }
  }
  /// StableHLO: detail::lower_scatter with `reduce` and `include_self`.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims&) {
    const int r = static_cast<int>(in[0].dims.size());
    if (r == 0) {
      auto one = [&b](const V& v) { return b.reshape(v, {1}); };
      return b.reshape(detail::lower_scatter(b, one(in[0]), 0, one(in[1]), one(in[2]), a.reduce, a.include_self, aten), {});
    }
    return detail::lower_scatter(b, in[0], wrap_dim(a.dim, r, aten), in[1], in[2], a.reduce, a.include_self, aten);
  }
};

/// `self` with `value` where `mask` is true (torch.masked_fill).
///
/// **Shapes:** `self` and `mask` broadcast together → the broadcast shape (torch 1.13's
/// out-of-place form). **Dtypes:** `self` all eight (the result's); `mask` bool (uint8 is
/// accepted, as torch does with a deprecation warning); `value` an int, float or bool, or a
/// 0-dim tensor (its value is read, as torch does), converted to `self`'s dtype as torch does
/// (float → int truncates).
/// **Errors:** TypeError for another mask dtype; ShapeError for shapes that do not broadcast
/// or a value tensor that is not 0-dim.
/// **Source:** torch.Tensor.masked_fill. **Lowering:** broadcast_in_dim, stablehlo.select.
struct MaskedFillOp {
  ///@{
  /// Names and schema (the `.Scalar` overload; `.Tensor` passes a 0-dim tensor as `value`).
  static constexpr std::string_view name = "masked_fill", aten = "aten::masked_fill";
  static constexpr std::string_view schema = "aten::masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::all();
  /// Non-tensor arguments.
  struct Args {
    detail::Scalar value;  ///< the fill value
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return Args{detail::Scalar::read(r.get("value"), aten, "value")}; }
  /// `mask` is read as bool.
  static ScalarType operand_dtype(size_t i, ScalarType, ScalarType result) { return i == 1 ? ScalarType::Bool : result; }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args&) {
    if (in[1].dtype != ScalarType::Bool && in[1].dtype != ScalarType::UInt8)
      throw TypeError("aten::masked_fill: expected a bool mask (operands " + describe(in) + ")");
    return TensorMeta{in[0].dtype, broadcast_shapes(in[0].sizes, in[1].sizes, aten), Device{}, true};
  }
  /// CPU kernel: a broadcast copy of `self`, then `value` where the broadcast mask is true.
  template <element T>
  static void cpu(std::span<const AnyTensor> in, const Args& a, Tensor<T>& out) {
    if (out.numel() == 0) return;
    out.copy_(in[0].get<T>().expand(out.sizes()));
    const Tensor<bool> mask = in[1].get<bool>().expand(out.sizes());
    const T v = a.value.as<T>();
    detail::for_each_index(out.sizes(), [&](const int64_t* idx) {
      if (detail::at_index(mask, idx)) detail::at_index(out, idx) = v;
    });
  }
  /// StableHLO: `select(mask, value, self)` on the broadcast operands.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    auto widen = [&](const V& v) {
      if (v.dims == detail::vec(out)) return v;
      std::vector<int64_t> bd;
      for (size_t e = 0; e < v.dims.size(); ++e) bd.push_back(static_cast<int64_t>(out.size() - v.dims.size() + e));
      return b.broadcast_in_dim(v, detail::vec(out), bd);
    };
    return b.select(widen(in[1]), a.value.constant(b, in[0].dtype, detail::vec(out)), widen(in[0]));
  }
};

/// `self` with `alpha · source.select(dim, i)` added to `self.select(dim, index[i])` for every
/// `i` (torch.index_add); repeated indices accumulate. Mixture-of-experts layers trace to its
/// in-place form (IndexAddInplaceOp) to gather each expert's rows back.
///
/// **Shapes:** `self: [..., n, ...]` (`n` at `dim`), `index: [k]` (or 0-dim, k = 1), `source`
/// of `self`'s shape with `k` at `dim` → `self`'s shape.
/// **Dtypes:** all eight (`source` of `self`'s dtype; bool adds as or, integers wrap); `index`
/// int64 or int32; `alpha` a number converted to `self`'s dtype.
/// **Errors:** TypeError for another index dtype or a `source` of another dtype; ShapeError for
/// an index of rank > 1 or a `source` whose shape does not fit (naming every operand);
/// IndexError for `dim` out of range or (cpu) an index outside `[0, n)` (torch does not wrap
/// negative indices here; on PJRT devices a run-time check of the program).
/// **Source:** torch.index_add. **Lowering:** the index broadcast to `source`'s shape along
/// `dim`, then detail::lower_scatter with addition (float sums may round in another order than
/// the cpu's sequential one).
struct IndexAddOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "index_add", aten = "aten::index_add";
  static constexpr std::string_view schema =
      "aten::index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::all();
  /// Non-tensor arguments.
  struct Args {
    int64_t dim = 0;        ///< the dim to add along
    detail::Scalar alpha{0, 1, true};  ///< the factor of `source`
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return Args{r.to_int("dim"), detail::Scalar::read(r.get("alpha"), aten, "alpha")}; }
  /// `index` is read as int64; `self` and `source` take the result dtype.
  static ScalarType operand_dtype(size_t i, ScalarType, ScalarType result) { return i == 1 ? ScalarType::Int64 : result; }
  /// Dtype and shape rule (`op` names the op in errors).
  static TensorMeta infer_for(std::span<const TensorMeta> in, const Args& a, std::string_view op) {
    const TensorMeta &x = in[0], &index = in[1], &src = in[2];
    detail::require_index(index, in, op, "index", true);
    if (index.dim() > 1)
      throw ShapeError(std::string(op) + ": index is supposed to be a vector (operands " + describe(in) + ")");
    if (src.dtype != x.dtype)
      throw TypeError(std::string(op) + ": expected self and source of one dtype (operands " + describe(in) + ")");
    const int d = wrap_dim(a.dim, x.dim(), op);
    const int64_t k = numel(index.sizes);
    bool ok = src.dim() == x.dim() || (x.dim() == 0 && src.dim() <= 1);
    for (int e = 0; ok && e < x.dim(); ++e) ok = src.sizes[e] == (e == d ? k : x.sizes[e]);
    if (!ok || (x.dim() == 0 && numel(src.sizes) != k))
      throw ShapeError(std::string(op) + ": source must have self's shape with the index's length at dim " +
                       std::to_string(d) + " (operands " + describe(in) + ")");
    return TensorMeta{x.dtype, x.sizes, Device{}, true};
  }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) { return infer_for(in, a, aten); }
  /// CPU kernel (`op` names the op in errors): a copy of `self`, then each source slice times
  /// alpha added to its target slice, in index order.
  template <element T>
  static void cpu_for(std::span<const AnyTensor> in, const Args& a, Tensor<T>& out, std::string_view op) {
    if (out.data_ptr() != in[0].get<T>().data_ptr()) out.copy_(in[0].get<T>());
    const Tensor<int64_t> index = in[1].get<int64_t>().reshape(Dims{-1});
    const Tensor<T>& src = in[2].get<T>();
    const Tensor<T> o1 = out.dim() == 0 ? out.reshape(Dims{1}) : out;
    const Tensor<T> s1 = src.dim() == 0 ? src.reshape(Dims{1}) : src;
    const int d = wrap_dim(a.dim, o1.dim(), op);
    const int64_t n = o1.size(d);
    const T alpha = a.alpha.as<T>();
    for (int64_t k = 0; k < index.numel(); ++k) {
      const int64_t i = index.data_ptr()[k * index.stride(0)];
      detail::check_index(i, n, d, op);
      Tensor<T> dst = o1.select(d, i);
      const Tensor<T> add = s1.select(d, k);
      detail::for_each_index(dst.sizes(), [&](const int64_t* idx) {
        T& t = detail::at_index(dst, idx);
        const T v = detail::at_index(add, idx);
        if constexpr (std::is_same_v<T, bool>) t = t || (v && alpha);
        else if constexpr (std::is_integral_v<T>) {
          using UT = std::make_unsigned_t<T>;
          t = static_cast<T>(static_cast<UT>(t) + static_cast<UT>(v) * static_cast<UT>(alpha));
        } else {
          t = static_cast<T>(static_cast<opmath_t<T>>(t) + static_cast<opmath_t<T>>(alpha) * static_cast<opmath_t<T>>(v));
        }
      });
    }
  }
  /// CPU kernel.
  template <element T>
  static void cpu(std::span<const AnyTensor> in, const Args& a, Tensor<T>& out) { cpu_for(in, a, out, aten); }
  /// StableHLO: `alpha · source`, the index broadcast along `dim` to its shape, detail::lower_scatter.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims&) {
    const V& x = in[0];
    const bool scalar = x.dims.empty();
    const V self = scalar ? b.reshape(x, {1}) : x;
    V src = scalar ? b.reshape(in[2], {1}) : in[2];
    const int d = scalar ? 0 : wrap_dim(a.dim, static_cast<int>(x.dims.size()), aten);
    if (!(a.alpha.integral && a.alpha.i == 1)) src = b.multiply(src, a.alpha.constant(b, src.dtype, src.dims));
    const V idx = b.broadcast_in_dim(b.reshape(in[1], {src.dims[static_cast<size_t>(d)]}), src.dims, {d});
    const V r = detail::lower_scatter(b, self, d, idx, src, detail::ScatterReduce::Sum, true, aten);
    return scalar ? b.reshape(r, {}) : r;
  }
};

/// `index_add` in place (Tensor.index_add_): the sums written into `self`, which is returned.
///
/// **Shapes, dtypes, errors:** as IndexAddOp. **Source:** torch.Tensor.index_add_.
/// **Lowering:** IndexAddOp's; the graph rebinds `self`.
struct IndexAddInplaceOp : IndexAddOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "index_add_", aten = "aten::index_add_";
  static constexpr std::string_view schema =
      "aten::index_add_(Tensor(a!) self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor(a!)";
  ///@}
  /// Writes its result into operand 0.
  static constexpr bool in_place = true;
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) { return infer_for(in, a, aten); }
  /// CPU kernel.
  template <element T>
  static void cpu(std::span<const AnyTensor> in, const Args& a, Tensor<T>& out) { cpu_for(in, a, out, aten); }
};

/// `masked_fill` in place (Tensor.masked_fill_): `value` written into `self` where `mask` is
/// true; `self` is returned. Attention code traces to it (`scores.masked_fill_(mask, min)`).
///
/// **Shapes:** `mask` broadcasts to `self`'s shape; `self` keeps its shape. **Dtypes:** as
/// MaskedFillOp. **Errors:** as MaskedFillOp; ShapeError when the broadcast shape is not
/// `self`'s (torch: "output with shape ... doesn't match the broadcast shape").
/// **Source:** torch.Tensor.masked_fill_. **Lowering:** MaskedFillOp's; the graph rebinds `self`.
struct MaskedFillInplaceOp : MaskedFillOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "masked_fill_", aten = "aten::masked_fill_";
  static constexpr std::string_view schema =
      "aten::masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)";
  ///@}
  /// Writes its result into operand 0.
  static constexpr bool in_place = true;
  /// Dtype and shape rule: MaskedFillOp's, the result keeping `self`'s shape.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    TensorMeta m = MaskedFillOp::infer(in, a);
    if (m.sizes != in[0].sizes)
      throw ShapeError("aten::masked_fill_: mask " + to_string(in[1].sizes) + " broadcasts self " +
                       to_string(in[0].sizes) + " to " + to_string(m.sizes) + "; in place, self's shape cannot change");
    return m;
  }
};

/// One-hot rows of the class indices in `self` (torch.nn.functional.one_hot).
///
/// **Shapes:** `self: [...]` → `[..., num_classes]`; `num_classes = -1` uses `max(self) + 1`
/// (read from the data: the cpu only).
/// **Dtypes:** `self` int64 only; the result is int64.
/// **Errors:** TypeError for another dtype; IndexError (cpu) for a class outside
/// `[0, num_classes)`; ValueError for `num_classes = -1` with an empty `self` or
/// `num_classes < -1`; UnsupportedOperator for `num_classes = -1` on a PJRT device or in a
/// compiled model (the shape would depend on the data).
/// **Source:** torch.nn.functional.one_hot. **Lowering:** compare with an iota, convert.
struct OneHotOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "one_hot", aten = "aten::one_hot";
  static constexpr std::string_view schema = "aten::one_hot(Tensor self, int num_classes=-1) -> Tensor";
  ///@}
  /// The result's dtype.
  static constexpr DtypeSet dtypes = DtypeSet::of({ScalarType::Int64});
  /// Non-tensor arguments.
  struct Args {
    int64_t num_classes = -1;  ///< -1: max(self) + 1
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return Args{r.to_int("num_classes")}; }
  /// `self` keeps its dtype (checked by `infer`).
  static ScalarType operand_dtype(size_t, ScalarType given, ScalarType) { return given; }
  /// `num_classes = -1` → `max(self) + 1`, read from the data (cpu only).
  static Args resolve(std::span<const AnyTensor> in, Args a) {
    if (a.num_classes != -1 || in[0].dtype() != ScalarType::Int64) return a;
    if (!in[0].device().is_cpu())
      throw UnsupportedOperator("aten::one_hot: num_classes=-1 reads the data to find the number of classes, which " +
                                in[0].device().str() + " does not do; pass num_classes");
    const Tensor<int64_t>& x = in[0].get<int64_t>();
    if (x.numel() == 0) throw ValueError("aten::one_hot: can not infer the total number of classes from an empty tensor");
    int64_t m = std::numeric_limits<int64_t>::min();
    detail::for_each_index(x.sizes(), [&](const int64_t* idx) { m = std::max(m, detail::at_index(x, idx)); });
    return Args{m < 0 ? 0 : m + 1};  // a negative class fails in `cpu`
  }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    if (in[0].dtype != ScalarType::Int64)
      throw TypeError("aten::one_hot: is only applicable to index tensors of dtype int64 (operands " + describe(in) + ")");
    if (a.num_classes == -1)
      throw UnsupportedOperator("aten::one_hot: num_classes=-1 depends on the data; pass num_classes (operands " +
                                describe(in) + ")");
    if (a.num_classes < -1)
      throw ValueError("aten::one_hot: num_classes must be -1 or non-negative, got " + std::to_string(a.num_classes));
    if (in[0].dim() >= max_rank) throw ShapeError("aten::one_hot: the result would exceed rank 8 (operands " + describe(in) + ")");
    Dims out = in[0].sizes;
    out.insert(out.size(), a.num_classes);
    (void)numel(out);
    return TensorMeta{ScalarType::Int64, out, Device{}, true};
  }
  /// CPU kernel: zeros, then a 1 per row.
  template <element T>
  static void cpu(std::span<const AnyTensor> in, const Args& a, Tensor<T>& out) {
    const Tensor<int64_t>& x = in[0].get<int64_t>();
    T* p = out.data_ptr();
    for (int64_t k = 0; k < out.numel(); ++k) p[k] = T(0);
    int64_t row = 0;
    detail::for_each_index(x.sizes(), [&](const int64_t* idx) {
      const int64_t c = detail::at_index(x, idx);
      if (c < 0 || c >= a.num_classes)
        throw IndexError("aten::one_hot: class value " + std::to_string(c) + " is out of range for num_classes " +
                         std::to_string(a.num_classes));
      p[row++ * a.num_classes + c] = T(1);
    });
  }
  /// StableHLO: `convert(broadcast(self) == iota)`.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args&, const Dims& out) {
    const V& x = in[0];
    detail::check_range(b, x, out.back(), static_cast<int>(x.dims.size()), aten);  // class values in [0, num_classes)
    std::vector<int64_t> bd;
    for (size_t e = 0; e < x.dims.size(); ++e) bd.push_back(static_cast<int64_t>(e));
    const V mask = b.compare("EQ", b.broadcast_in_dim(x, detail::vec(out), bd),
                             b.iota(ScalarType::Int64, detail::vec(out), out.size() - 1));
    return b.convert(mask, ScalarType::Int64);
  }
};

// Each op's entry point, compiled once in TORCHTPU_SEPARATE_OPS programs (ops/library.hpp).
TORCHTPU_LIBRARY_OP(IndexSelectOp);
TORCHTPU_LIBRARY_OP(GatherOp);
TORCHTPU_LIBRARY_OP(TakeAlongDimOp);
TORCHTPU_LIBRARY_OP(ScatterOp);
TORCHTPU_LIBRARY_OP(ScatterAddOp);
TORCHTPU_LIBRARY_OP(ScatterReduceOp);
TORCHTPU_LIBRARY_OP(IndexAddOp);
TORCHTPU_LIBRARY_OP(IndexAddInplaceOp);
TORCHTPU_LIBRARY_OP(MaskedFillOp);
TORCHTPU_LIBRARY_OP(MaskedFillInplaceOp);
TORCHTPU_LIBRARY_OP(OneHotOp);
TORCHTPU_LIBRARY_OP(EmbeddingOp);

}  // namespace ops

namespace ops::detail {
/// A C++ number as a Scalar argument.
template <class S>
  requires std::is_arithmetic_v<S>
Scalar scalar_of(S v) {
  if constexpr (std::is_integral_v<S>) return Scalar{0, static_cast<int64_t>(v), true};
  else return Scalar{static_cast<double>(v), 0, false};
}
}  // namespace ops::detail

/// The slices of `self` at `index` along `dim` (torch.index_select); see ops::IndexSelectOp.
/// **Example:** `index_select(x, 0, Tensor<int64_t>{2, 0})`.
template <element T, int R, element I, int RI>
Tensor<T> index_select(const Tensor<T, R>& self, int64_t dim, const Tensor<I, RI>& index) {
  const std::vector<AnyTensor> in{self, index};
  return ops::call_mixed<ops::IndexSelectOp, T>(in, {dim});
}
/// Run-time typed `index_select`.
template <std::same_as<AnyTensor> A>
A index_select(const A& self, int64_t dim, const AnyTensor& index) {
  const std::vector<AnyTensor> in{self, index};
  return ops::call<ops::IndexSelectOp>(in, {dim});
}

/// Rows `weight[indices]` (torch.nn.functional.embedding); see ops::EmbeddingOp.
/// **Example:** `embedding(table, Tensor<int64_t>{{3, 1}, {0, 0}})` → `[2, 2, dim]`.
template <element T, int R, element I, int RI>
Tensor<T> embedding(const Tensor<T, R>& weight, const Tensor<I, RI>& indices) {
  const std::vector<AnyTensor> in{weight, indices};
  return ops::call_mixed<ops::EmbeddingOp, T>(in, {});
}
/// Run-time typed `embedding`.
template <std::same_as<AnyTensor> A>
A embedding(const A& weight, const AnyTensor& indices) {
  const std::vector<AnyTensor> in{weight, indices};
  return ops::call<ops::EmbeddingOp>(in, {});
}

/// Values of `self` at `index` along `dim` (torch.gather); see ops::GatherOp.
template <element T, int R, element I, int RI>
Tensor<T> gather(const Tensor<T, R>& self, int64_t dim, const Tensor<I, RI>& index) {
  const std::vector<AnyTensor> in{self, index};
  return ops::call_mixed<ops::GatherOp, T>(in, {dim});
}
/// Run-time typed `gather`.
template <std::same_as<AnyTensor> A>
A gather(const A& self, int64_t dim, const AnyTensor& index) {
  const std::vector<AnyTensor> in{self, index};
  return ops::call<ops::GatherOp>(in, {dim});
}

/// Values of `self` at `indices` along `dim` after broadcasting (torch.take_along_dim); see
/// ops::TakeAlongDimOp.
template <element T, int R, element I, int RI>
Tensor<T> take_along_dim(const Tensor<T, R>& self, const Tensor<I, RI>& indices, int64_t dim) {
  const std::vector<AnyTensor> in{self, indices};
  return ops::call_mixed<ops::TakeAlongDimOp, T>(in, {dim, true});
}
/// `take_along_dim` of the flattened operands (no dim).
template <element T, int R, element I, int RI>
Tensor<T> take_along_dim(const Tensor<T, R>& self, const Tensor<I, RI>& indices) {
  const std::vector<AnyTensor> in{self, indices};
  return ops::call_mixed<ops::TakeAlongDimOp, T>(in, {0, false});
}
/// Run-time typed `take_along_dim` (`dim` absent: the flattened form).
template <std::same_as<AnyTensor> A>
A take_along_dim(const A& self, const AnyTensor& indices, std::optional<int64_t> dim = std::nullopt) {
  const std::vector<AnyTensor> in{self, indices};
  return ops::call<ops::TakeAlongDimOp>(in, {dim.value_or(0), dim.has_value()});
}

/// `self` with `src` written at `index` along `dim` (torch.scatter); see ops::ScatterOp.
template <element T, int R, element I, int RI, int RS>
Tensor<T> scatter(const Tensor<T, R>& self, int64_t dim, const Tensor<I, RI>& index, const Tensor<T, RS>& src) {
  const std::vector<AnyTensor> in{self, index, src};
  return ops::call_mixed<ops::ScatterOp, T>(in, {dim});
}
/// `scatter` of the number `value` (torch.scatter's value form), converted to `T`.
template <element T, int R, element I, int RI, class S>
  requires std::is_arithmetic_v<S>
Tensor<T> scatter(const Tensor<T, R>& self, int64_t dim, const Tensor<I, RI>& index, S value) {
  const std::vector<AnyTensor> in{self, index, ops::ScatterOp::value_tensor(self, index, ops::detail::scalar_of(value))};
  return ops::call_mixed<ops::ScatterOp, T>(in, {dim});
}
/// Run-time typed `scatter` (a `src` of `self`'s dtype).
template <std::same_as<AnyTensor> A>
A scatter(const A& self, int64_t dim, const AnyTensor& index, const AnyTensor& src) {
  const std::vector<AnyTensor> in{self, index, src};
  return ops::call<ops::ScatterOp>(in, {dim});
}
/// Run-time typed `scatter` of a number.
template <std::same_as<AnyTensor> A, class S>
  requires std::is_arithmetic_v<S>
A scatter(const A& self, int64_t dim, const AnyTensor& index, S value) {
  const std::vector<AnyTensor> in{self, index, ops::ScatterOp::value_tensor(self, index, ops::detail::scalar_of(value))};
  return ops::call<ops::ScatterOp>(in, {dim});
}

/// `self` with `src` added at `index` along `dim` (torch.scatter_add); see ops::ScatterAddOp.
template <element T, int R, element I, int RI, int RS>
Tensor<T> scatter_add(const Tensor<T, R>& self, int64_t dim, const Tensor<I, RI>& index, const Tensor<T, RS>& src) {
  const std::vector<AnyTensor> in{self, index, src};
  return ops::call_mixed<ops::ScatterAddOp, T>(in, {dim});
}
/// Run-time typed `scatter_add`.
template <std::same_as<AnyTensor> A>
A scatter_add(const A& self, int64_t dim, const AnyTensor& index, const AnyTensor& src) {
  const std::vector<AnyTensor> in{self, index, src};
  return ops::call<ops::ScatterAddOp>(in, {dim});
}

/// `self` with `src` reduced in at `index` along `dim` by `reduce` ("sum", "prod", "mean",
/// "amax", "amin"), `self`'s elements included unless `include_self` is false
/// (torch.scatter_reduce); see ops::ScatterReduceOp.
/// **Example:** `scatter_reduce(zeros<float>({3}), 0, index, values, "amax", false)`.
template <element T, int R, element I, int RI, int RS>
Tensor<T> scatter_reduce(const Tensor<T, R>& self, int64_t dim, const Tensor<I, RI>& index, const Tensor<T, RS>& src,
                         std::string_view reduce, bool include_self = true) {
  const std::vector<AnyTensor> in{self, index, src};
  return ops::call_mixed<ops::ScatterReduceOp, T>(in, ops::ScatterReduceOp::make(dim, reduce, include_self));
}
/// Run-time typed `scatter_reduce`.
template <std::same_as<AnyTensor> A>
A scatter_reduce(const A& self, int64_t dim, const AnyTensor& index, const AnyTensor& src, std::string_view reduce,
                 bool include_self = true) {
  const std::vector<AnyTensor> in{self, index, src};
  return ops::call<ops::ScatterReduceOp>(in, ops::ScatterReduceOp::make(dim, reduce, include_self));
}

/// `self` with `alpha · source` slices added at `index` along `dim` (torch.index_add); see
/// ops::IndexAddOp.
template <element T, int R, element I, int RI, int RS, class S = int64_t>
  requires std::is_arithmetic_v<S>
Tensor<T> index_add(const Tensor<T, R>& self, int64_t dim, const Tensor<I, RI>& index, const Tensor<T, RS>& source,
                    S alpha = 1) {
  const std::vector<AnyTensor> in{self, index, source};
  return ops::call_mixed<ops::IndexAddOp, T>(in, {dim, ops::detail::scalar_of(alpha)});
}
/// Run-time typed `index_add`.
template <std::same_as<AnyTensor> A, class S = int64_t>
  requires std::is_arithmetic_v<S>
A index_add(const A& self, int64_t dim, const AnyTensor& index, const AnyTensor& source, S alpha = 1) {
  const std::vector<AnyTensor> in{self, index, source};
  return ops::call<ops::IndexAddOp>(in, {dim, ops::detail::scalar_of(alpha)});
}

/// `self` with `value` where `mask` is true (torch.masked_fill); see ops::MaskedFillOp.
/// **Example:** `masked_fill(x, x > 0.0f, 0.0f)`.
template <element T, int R, element M, int RM, class S>
  requires std::is_arithmetic_v<S>
Tensor<T> masked_fill(const Tensor<T, R>& self, const Tensor<M, RM>& mask, S value) {
  const std::vector<AnyTensor> in{self, mask};
  return ops::call_mixed<ops::MaskedFillOp, T>(in, {ops::detail::scalar_of(value)});
}
/// `masked_fill` with the value of a 0-dim tensor (copied to the host when on a device).
template <element T, int R, element M, int RM, element U, int RU>
Tensor<T> masked_fill(const Tensor<T, R>& self, const Tensor<M, RM>& mask, const Tensor<U, RU>& value) {
  const std::vector<AnyTensor> in{self, mask};
  return ops::call_mixed<ops::MaskedFillOp, T>(in, {ops::detail::Scalar::of(value, ops::MaskedFillOp::aten)});
}
/// Run-time typed `masked_fill` of a number.
template <std::same_as<AnyTensor> A, class S>
  requires std::is_arithmetic_v<S>
A masked_fill(const A& self, const AnyTensor& mask, S value) {
  const std::vector<AnyTensor> in{self, mask};
  return ops::call<ops::MaskedFillOp>(in, {ops::detail::scalar_of(value)});
}
/// Run-time typed `masked_fill` with the value of a 0-dim tensor.
template <std::same_as<AnyTensor> A>
A masked_fill(const A& self, const AnyTensor& mask, const AnyTensor& value) {
  const std::vector<AnyTensor> in{self, mask};
  return ops::call<ops::MaskedFillOp>(in, {ops::detail::Scalar::of(value, ops::MaskedFillOp::aten)});
}

/// One-hot int64 rows of the classes in `self` (torch.nn.functional.one_hot); see
/// ops::OneHotOp. `num_classes = -1`: `max(self) + 1` (cpu only).
template <element I, int R>
Tensor<int64_t> one_hot(const Tensor<I, R>& self, int64_t num_classes = -1) {
  const std::vector<AnyTensor> in{self};
  return ops::call_mixed<ops::OneHotOp, int64_t>(in, {num_classes});
}
/// Run-time typed `one_hot`.
template <std::same_as<AnyTensor> A>
A one_hot(const A& self, int64_t num_classes = -1) {
  return ops::call<ops::OneHotOp>(std::span<const AnyTensor>(&self, 1), {num_classes});
}

}  // namespace torchtpu
