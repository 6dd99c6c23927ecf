// torchtpu/ops/advanced_indexing.hpp — operator library, advanced indexing and data-dependent
// selection: index (`x[idx]`, `x[:, idx]`, `x[mask]`), index_put (functional, and the in-place
// `index_put_` of model graphs), nonzero and masked_select. Tests: tests/ops/
// test_advanced_indexing.cpp (cpu, every dtype), tests/device_ops/test_device_advanced_indexing.cpp
// (PJRT devices), the conformance sweep (tests/conformance/make_cases.py) and a traced model
// (tests/jit/make_fixtures.py's AdvIndex, tests/jit/test_jit_semantics.cpp).
//
// The index list (`Tensor?[] indices`) follows PyTorch's advanced indexing (the rules of
// aten/src/ATen/native/TensorAdvancedIndexing.cpp and IndexingUtils.h, restated here): entry i
// indexes the next dim(s) of `self` in order; None is a full slice; an int64 or int32 tensor
// indexes one dim (negative indices wrap once); a bool or uint8 mask of k dims indexes k dims
// and stands for the k index tensors of its nonzero positions (row-major). The index tensors
// broadcast together to a shape B; dims past the list are full slices. When the indexed dims
// are adjacent, B replaces them in place in the result; otherwise B comes first and the other
// dims follow in order.
//
// A mask's number of true elements decides the result's shape (index) or the number of values
// consumed (index_put), and so does the data of nonzero and masked_select: these read the data
// on the cpu only. On PJRT devices (eager and the whole-graph compile) they throw
// UnsupportedOperator naming the op and why; index_put with a single mask whose values do not
// depend on that count (`x[mask] = v`, v broadcast along it) runs there as a select.
//
// Lowerings (integer indices): the indexed dims of `self` are moved first and flattened to one
// dim of size N (the rest flattened to R); the index tensors combine into one flat position per
// element of B (M of them); values move with a one-hot mask `position == iota` (select and
// reduce, as ops/indexing.hpp's lowerings: the builder and the TPU emulator have no gather or
// scatter op), at a cost of M x N x R elements. Out-of-range indices are a run-time check
// (IndexError when the result is read), never a read or write outside a buffer.
#pragma once
#include <algorithm>    // std::find
#include <bit>          // std::popcount
#include <cstdint>      // int64_t, uint32_t
#include <optional>     // std::optional (the C++ index list)
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <type_traits>  // std::is_same_v, std::make_unsigned_t
#include <vector>       // std::vector

#include "indexing.hpp"  // detail::Scalar, add_identity, check_range, reduce_op_t, for_each_index, at_index
#include "library.hpp"   // TensorMeta, DtypeSet, ops::call, call_mixed
#include "schema.hpp"    // Arg, arg_kind_name
#include "shape.hpp"     // detail::vec

namespace torchtpu {
namespace ops {

namespace detail {

/// The index list of aten::index / index_put as arguments: which entries are tensors (the
/// tensors themselves are operands 1, 2, ... in order) and each mask entry's number of true
/// elements (read from the data on the cpu, before the shape rule runs).
struct IndexEntries {
  int32_t n = 0;         ///< entries in the list (None entries included), at most 8
  uint32_t present = 0;  ///< bit i set: entry i is a tensor; clear: None (a full slice)
  int64_t count[max_rank] = {-1, -1, -1, -1, -1, -1, -1, -1};  ///< a mask entry's true elements (-1: not read)
  /// True when entry `i` is a tensor.
  bool has(int i) const { return ((present >> i) & 1u) != 0; }
  /// The number of tensor entries.
  int tensors() const { return std::popcount(present); }
};

/// The entries of a list of optional tensors (an undefined tensor is None). **Errors:**
/// IndexError naming `op` for more than 8 entries (no tensor has more dims).
inline IndexEntries entries_of(std::span<const AnyTensor> l, std::string_view op) {
  if (l.size() > static_cast<size_t>(max_rank))
    throw IndexError(std::string(op) + ": too many indices (" + std::to_string(l.size()) + "; a tensor has at most 8 dims)");
  IndexEntries e;
  e.n = static_cast<int32_t>(l.size());
  for (size_t i = 0; i < l.size(); ++i)
    if (l[i].defined()) e.present |= 1u << i;
  return e;
}

/// The entries of a call's `indices` argument (a `Tensor?[]`: None entries are undefined
/// tensors). **Errors:** TypeError naming `op` for another kind; as `entries_of`.
inline IndexEntries entries_of(const Arg& a, std::string_view op) {
  const auto* l = std::get_if<std::vector<AnyTensor>>(&a);
  if (!l) throw TypeError(std::string(op) + ": argument 'indices' must be Tensor?[], got " + arg_kind_name(a));
  return entries_of(std::span<const AnyTensor>(*l), op);
}

/// A C++ index list (std::nullopt or an undefined tensor: None) as entries; appends the
/// tensors to `operands`.
inline IndexEntries entries_of(const std::vector<std::optional<AnyTensor>>& l, std::vector<AnyTensor>& operands,
                               std::string_view op) {
  std::vector<AnyTensor> flat;
  for (const auto& t : l) flat.push_back(t.value_or(AnyTensor()));
  const IndexEntries e = entries_of(std::span<const AnyTensor>(flat), op);
  for (const AnyTensor& t : flat)
    if (t.defined()) operands.push_back(t);
  return e;
}

/// True for a mask dtype (bool; uint8, which torch 1.13 still takes as a mask).
constexpr bool is_mask_dtype(ScalarType t) { return t == ScalarType::Bool || t == ScalarType::UInt8; }

/// How an index list applies to `self`: the shape rule of advanced indexing.
struct IndexPlan {
  std::vector<int> adv;   ///< dims of `self` indexed by a tensor, ascending
  std::vector<int> src;   ///< per entry of `adv`: the operand holding its index tensor
  std::vector<int> comp;  ///< per entry of `adv`: which dim of its mask (-1: an integer index)
  std::vector<int> rest;  ///< dims of `self` not indexed, ascending
  std::vector<int> mask_ops;  ///< the operands that are masks
  bool known = true;      ///< false: a mask's count is unknown, so `b` and `result` are not set
  int before = 0;         ///< result dims (from `rest`) before the indexed block
  Dims b;                 ///< the index tensors' broadcast shape (a mask counts as [its count])
  Dims result;            ///< the indexed shape: index's result, index_put's values target
};

/// The plan of index list `e` on `in[0]` (its tensors are `in[1 .. e.tensors()]`).
/// **Errors:** TypeError for an index tensor of another dtype than int64, int32, bool or
/// uint8; IndexError for more indexed dims than `self` has, a mask whose shape differs from the
/// dims it indexes, a 0-dim mask, a list without tensors, or index shapes that do not
/// broadcast; ShapeError for a result of rank above 8; ValueError (internal) for an operand
/// count that does not match the list.
inline IndexPlan index_plan(std::span<const TensorMeta> in, const IndexEntries& e, std::string_view op) {
  const std::string o(op);
  if (in.size() < static_cast<size_t>(1 + e.tensors()))
    throw ValueError(o + ": internal: " + std::to_string(in.size()) + " operands for " + std::to_string(e.tensors()) + " index tensors");
  const TensorMeta& x = in[0];
  const int r = x.dim();
  IndexPlan p;
  int d = 0, opnd = 1, consumed = 0;
  for (int i = 0, k = 1; i < e.n; ++i) {  // dims the list indexes: a mask its rank, the others one
    const TensorMeta* t = e.has(i) ? &in[static_cast<size_t>(k++)] : nullptr;
    consumed += t && is_mask_dtype(t->dtype) ? t->dim() : 1;
  }
  if (consumed > r)
    throw IndexError(o + ": too many indices for tensor of dimension " + std::to_string(r) + " (got " + std::to_string(consumed) +
                     "), operands " + describe(in));
  std::vector<Dims> shapes;
  for (int i = 0; i < e.n; ++i) {
    if (!e.has(i)) {
      ++d;
      continue;
    }
    const TensorMeta& t = in[static_cast<size_t>(opnd)];
    if (t.dtype == ScalarType::Int64 || t.dtype == ScalarType::Int32) {
      p.adv.push_back(d++);
      p.src.push_back(opnd);
      p.comp.push_back(-1);
      shapes.push_back(t.sizes);
    } else if (is_mask_dtype(t.dtype)) {
      if (t.dim() == 0)
        throw IndexError(o + ": a 0-dim mask is not supported (index with mask.unsqueeze(0) on an unsqueezed self; operands " +
                         describe(in) + ")");
      for (int c = 0; c < t.dim(); ++c) {
        if (t.sizes[c] != x.sizes[d + c])
          throw IndexError(o + ": the shape of the mask " + to_string(t.sizes) + " at index " + std::to_string(c) +
                           " does not match the shape of the indexed tensor " + to_string(x.sizes) + " at index " +
                           std::to_string(d + c));
        p.adv.push_back(d + c);
        p.src.push_back(opnd);
        p.comp.push_back(c);
      }
      d += t.dim();
      p.mask_ops.push_back(opnd);
      if (e.count[i] < 0) p.known = false;
      else shapes.push_back(Dims{e.count[i]});
    } else {
      throw TypeError(o + ": tensors used as indices must be int64, int32, bool or uint8 tensors, got " +
                      std::string(dtype_name(t.dtype)) + " (operands " + describe(in) + ")");
    }
    ++opnd;
  }
  if (p.adv.empty())
    throw IndexError(o + ": at least one index must be a tensor (a list of None selects everything; operands " + describe(in) + ")");
  for (int k = 0; k < r; ++k)
    if (std::find(p.adv.begin(), p.adv.end(), k) == p.adv.end()) p.rest.push_back(k);
  const bool adjacent = p.adv.back() - p.adv.front() + 1 == static_cast<int>(p.adv.size());
  p.before = adjacent ? p.adv.front() : 0;
  if (!p.known) return p;
  for (const Dims& s : shapes) {
    try {
      p.b = broadcast_shapes(p.b, s, op);
    } catch (const ShapeError&) {
      std::string all;
      for (const Dims& t : shapes) all += (all.empty() ? "" : ", ") + to_string(t);
      throw IndexError(o + ": shape mismatch: indexing tensors could not be broadcast together with shapes " + all);
    }
  }
  if (p.b.size() + static_cast<int>(p.rest.size()) > max_rank)
    throw ShapeError(o + ": the result would exceed rank 8 (operands " + describe(in) + ")");
  for (int k = 0; k < p.before; ++k) p.result.push_back(x.sizes[p.rest[static_cast<size_t>(k)]]);
  for (int64_t s : p.b) p.result.push_back(s);
  for (size_t k = static_cast<size_t>(p.before); k < p.rest.size(); ++k) p.result.push_back(x.sizes[p.rest[k]]);
  return p;
}

/// The number of true (nonzero) elements of `m`, any dtype (cpu).
inline int64_t count_true(const AnyTensor& m) {
  return m.visit([]<class T>(const Tensor<T>& t) {
    int64_t n = 0;
    for_each_index(t.sizes(), [&](const int64_t* idx) { n += static_cast<double>(convert<double>(at_index(t, idx))) != 0.0; });
    return n;
  });
}

/// `e` with each mask entry's count read from the operands `in` (cpu; a device operand:
/// UnsupportedOperator naming `op` when `need`, else the count stays unknown).
inline IndexEntries count_masks(std::span<const AnyTensor> in, IndexEntries e, std::string_view op, bool need) {
  int opnd = 1;
  for (int i = 0; i < e.n; ++i) {
    if (!e.has(i)) continue;
    const AnyTensor& t = in[static_cast<size_t>(opnd++)];
    if (!is_mask_dtype(t.dtype())) continue;
    if (!t.device().is_cpu()) {
      if (need)
        throw UnsupportedOperator(std::string(op) + ": indexing with a bool mask gives a result whose shape depends on the "
                                  "data (the number of true elements), which " + t.device().str() +
                                  " does not compute ahead of running; index on the cpu, or use torchtpu::where / "
                                  "masked_fill for a result of fixed shape");
      continue;
    }
    e.count[i] = count_true(t);
  }
  return e;
}

/// Element offsets, row-major over `dims` of a tensor with `sizes` and `strides`.
inline std::vector<int64_t> dim_offsets(const std::vector<int>& dims, const Dims& sizes, const Dims& strides) {
  std::vector<int64_t> r{0};
  for (int d : dims) {
    std::vector<int64_t> next;
    next.reserve(r.size() * static_cast<size_t>(sizes[d]));
    for (int64_t o : r)
      for (int64_t k = 0; k < sizes[d]; ++k) next.push_back(o + k * strides[d]);
    r.swap(next);
  }
  return r;
}

/// For each position of the broadcast index shape (row-major), the offset of the element it
/// selects in a tensor of `sizes` and `strides` (the sum over the indexed dims). **Errors:**
/// IndexError naming `op`, the index, the dim and its size for an index outside `[-size, size)`.
inline std::vector<int64_t> index_offsets(std::span<const AnyTensor> in, const IndexPlan& p, const Dims& sizes,
                                          const Dims& strides, std::string_view op) {
  const int64_t m = numel(p.b);
  std::vector<int64_t> off(static_cast<size_t>(m), 0);
  std::vector<int64_t> coords;  // the current mask's nonzero positions, row-major, `k` per position
  int coords_of = -1;
  for (size_t j = 0; j < p.adv.size(); ++j) {
    const int d = p.adv[j], opnd = p.src[j];
    Tensor<int64_t> idx;
    if (p.comp[j] < 0) {
      idx = as_dtype<int64_t>(in[static_cast<size_t>(opnd)]);
    } else {
      const AnyTensor& mask = in[static_cast<size_t>(opnd)];
      if (coords_of != opnd) {
        const Tensor<bool> bm = as_dtype<bool>(mask);
        coords.clear();
        for_each_index(bm.sizes(), [&](const int64_t* at) {
          if (at_index(bm, at)) coords.insert(coords.end(), at, at + bm.dim());
        });
        coords_of = opnd;
      }
      const int k = mask.dim();
      const int64_t n = static_cast<int64_t>(coords.size()) / k;
      idx = Tensor<int64_t>::empty(Dims{n});
      for (int64_t q = 0; q < n; ++q) idx.data_ptr()[q] = coords[static_cast<size_t>(q * k + p.comp[j])];
    }
    const Tensor<int64_t> full = idx.expand(p.b).contiguous();
    const int64_t size = sizes[d];
    for (int64_t q = 0; q < m; ++q) {
      int64_t v = full.data_ptr()[q];
      if (v < -size || v >= size)
        throw IndexError(std::string(op) + ": index " + std::to_string(v) + " is out of bounds for dimension " +
                         std::to_string(d) + " with size " + std::to_string(size));
      if (v < 0) v += size;
      off[static_cast<size_t>(q)] += v * strides[d];
    }
  }
  return off;
}

/// The three offset lists of an indexed iteration: the rest dims before the indexed block, the
/// indexed positions, the rest dims after it (result order: pre, mid, post).
struct IndexWalk {
  std::vector<int64_t> pre, mid, post;  ///< element offsets
};

/// The walk of plan `p` over a tensor with `sizes` and `strides` (indices checked).
inline IndexWalk index_walk(std::span<const AnyTensor> in, const IndexPlan& p, const Dims& sizes, const Dims& strides,
                            std::string_view op) {
  IndexWalk w;
  const std::vector<int> pre(p.rest.begin(), p.rest.begin() + p.before), post(p.rest.begin() + p.before, p.rest.end());
  w.mid = index_offsets(in, p, sizes, strides, op);
  w.pre = dim_offsets(pre, sizes, strides);
  w.post = dim_offsets(post, sizes, strides);
  return w;
}

/// Reverses `perm` (perm[i] = the source dim of result dim i).
inline std::vector<int64_t> inverse_perm(const std::vector<int64_t>& perm) {
  std::vector<int64_t> r(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) r[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return r;
}

/// `x` transposed by `perm` (the value itself when `perm` is the identity).
template <class B, class V>
V transposed(B& b, const V& x, const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return b.transpose(x, perm);
  return x;
}

/// `x` (rank <= dims' rank) broadcast NumPy-style (right-aligned) to `dims`.
template <class B, class V>
V right_aligned(B& b, const V& x, const std::vector<int64_t>& dims) {
  if (x.dims == dims) return x;
  std::vector<int64_t> bd;
  for (size_t e = 0; e < x.dims.size(); ++e) bd.push_back(static_cast<int64_t>(dims.size() - x.dims.size() + e));
  return b.broadcast_in_dim(x, dims, bd);
}

/// The lowering's view of an indexed `self`: `self` with its indexed dims moved first and
/// flattened (`x2: [N, R]`), and each index position's flat row (`rows: [M]`, int64, wrapped;
/// out-of-range indices become a run-time check naming `op`). Built by `flat_index`, which
/// leaves `rows` unset when M is 0 and `x2` when M, N or R is 0.
template <class V>
struct FlatIndex {
  V x2, rows;                      ///< [N, R] and [M]
  std::vector<int64_t> perm;       ///< self dims in `x2` order (the indexed ones, then the rest)
  std::vector<int64_t> moved;      ///< self's sizes in that order
  int64_t n = 1, r = 1, m = 1;     ///< N, R, M
};

template <class B, class V>
FlatIndex<V> flat_index(B& b, const V& self, std::span<const V> in, const IndexPlan& p, std::string_view op) {
  FlatIndex<V> f;
  const std::vector<int64_t> bd = vec(p.b);
  f.m = numel(p.b);
  for (int d : p.adv) f.perm.push_back(d);
  for (int d : p.rest) f.perm.push_back(d);
  for (int64_t d : f.perm) f.moved.push_back(self.dims[static_cast<size_t>(d)]);
  for (int d : p.adv) f.n *= self.dims[static_cast<size_t>(d)];
  for (int d : p.rest) f.r *= self.dims[static_cast<size_t>(d)];
  if (f.m > 0) {
    V rows;
    for (size_t j = 0; j < p.adv.size(); ++j) {
      const int64_t size = self.dims[static_cast<size_t>(p.adv[j])];
      V i = in[static_cast<size_t>(p.src[j])];
      if (i.dtype != ScalarType::Int64) i = b.convert(i, ScalarType::Int64);
      i = right_aligned(b, i, bd);
      i = b.select(b.compare("LT", i, b.constant_int(0, ScalarType::Int64, bd)),
                   b.add(i, b.constant_int(size, ScalarType::Int64, bd)), i);
      check_range(b, i, size, p.adv[j], op);
      rows = j == 0 ? i : b.add(b.multiply(rows, b.constant_int(size, ScalarType::Int64, bd)), i);
    }
    f.rows = b.reshape(rows, {f.m});
  }
  if (f.m > 0 && f.n > 0 && f.r > 0) f.x2 = b.reshape(transposed(b, self, f.perm), {f.n, f.r});
  return f;
}

/// The permutation from `[B..., rest...]` order to the result's (`before` rest dims first).
inline std::vector<int64_t> placement(const IndexPlan& p) {
  const int64_t nb = p.b.size(), nr = static_cast<int64_t>(p.rest.size());
  std::vector<int64_t> perm;
  for (int64_t k = 0; k < p.before; ++k) perm.push_back(nb + k);
  for (int64_t k = 0; k < nb; ++k) perm.push_back(k);
  for (int64_t k = p.before; k < nr; ++k) perm.push_back(nb + k);
  return perm;
}

/// `[B..., rest...]` sizes of plan `p` on `self`.
template <class V>
std::vector<int64_t> block_dims(const IndexPlan& p, const V& self) {
  std::vector<int64_t> d = vec(p.b);
  for (int k : p.rest) d.push_back(self.dims[static_cast<size_t>(k)]);
  return d;
}

}  // namespace detail

/// Advanced indexing (torch's `x[indices]`, aten::index.Tensor): the elements of `self` at the
/// positions the index list names (rules: this header's comment).
///
/// **Shapes:** `self: [d0, ..., dr-1]`, index tensors broadcasting to `B` → `B` in place of the
/// indexed dims when they are adjacent (`x[:, i]: [d0, *B, d2, ...]`), else `[*B, rest...]`
/// (`x[i, :, j]`); a mask of k dims counts as one index of shape `[its true elements]`.
/// **Dtypes:** `self` all eight (the result's); index tensors int64, int32 (torch 2.x's), bool
/// or uint8 (masks).
/// **Errors:** TypeError for another index dtype; IndexError for an index outside `[-size,
/// size)` (naming the op, the index, the dim and its size; on PJRT devices a run-time check of
/// the program, raised when the result is read), more indexed dims than `self` has, a mask
/// shape that differs from the dims it indexes, a 0-dim mask, a list without tensors, or index
/// shapes that do not broadcast; ShapeError for a result of rank above 8; UnsupportedOperator
/// for a mask on a PJRT device or in a compiled model (the result's shape depends on the data).
/// **Source:** torch.Tensor.__getitem__ / aten::index (TensorAdvancedIndexing.cpp).
/// **Lowering:** detail::flat_index, a one-hot select and reduce (this header's comment).
struct IndexOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "index", aten = "aten::index";
  static constexpr std::string_view schema = "aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor";
  ///@}
  /// The dtypes libtorch allows (of `self` and the result).
  static constexpr DtypeSet dtypes = DtypeSet::all();
  /// Non-tensor arguments: the shape of the index list.
  struct Args {
    detail::IndexEntries entries;  ///< which entries are tensors; mask counts
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return Args{detail::entries_of(r.get("indices"), aten)}; }
  /// The operands: `self`, then the tensors of the list (None entries are in `Args`).
  template <class R>
  static std::vector<AnyTensor> tensors(const R& r) {
    const auto* l = std::get_if<std::vector<AnyTensor>>(&r.get("indices"));
    if (!std::holds_alternative<AnyTensor>(r.get("self")) || !l) return r.tensors();  // its TypeError
    std::vector<AnyTensor> t{std::get<AnyTensor>(r.get("self"))};
    for (const AnyTensor& i : *l)
      if (i.defined()) t.push_back(i);
    return t;
  }
  /// `self` takes the result dtype; index tensors keep theirs (int32 indices and uint8 masks are
  /// read as such).
  static ScalarType operand_dtype(size_t i, ScalarType given, ScalarType result) { return i == 0 ? result : given; }
  /// Each mask's number of true elements (cpu). **Errors:** UnsupportedOperator for a mask on a
  /// PJRT device.
  static Args resolve(std::span<const AnyTensor> in, Args a) {
    a.entries = detail::count_masks(in, a.entries, aten, true);
    return a;
  }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    if (in.size() != static_cast<size_t>(1 + a.entries.tensors()))
      throw ValueError("aten::index: internal: operands " + describe(in) + " do not match the index list");
    const detail::IndexPlan p = detail::index_plan(in, a.entries, aten);
    if (!p.known)
      throw UnsupportedOperator("aten::index: indexing with a bool mask gives a result whose shape depends on the data (the "
                                "number of true elements), which a compiled program cannot have (operands " + describe(in) + ")");
    return TensorMeta{in[0].dtype, p.result, Device{}, true};
  }
  /// CPU kernel: one pass over the result, reading `self` at the offsets of the index walk.
  template <element T>
  static void cpu(std::span<const AnyTensor> in, const Args& a, Tensor<T>& out) {
    const Tensor<T>& x = in[0].get<T>();
    const detail::IndexPlan p = detail::index_plan(detail::metas_of(in), a.entries, aten);
    const detail::IndexWalk w = detail::index_walk(in, p, x.sizes(), x.strides(), aten);
    if (out.numel() == 0) return;
    const T* s = x.data_ptr();
    T* o = out.data_ptr();
    for (int64_t q : w.pre)
      for (int64_t m : w.mid)
        for (int64_t r : w.post) *o++ = s[q + m + r];
  }
  /// StableHLO: detail::flat_index, then per result row the one-hot sum of `self`'s rows.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims&) {
    std::vector<TensorMeta> metas;
    for (const V& v : in) metas.push_back(TensorMeta{v.dtype, Dims(std::span<const int64_t>(v.dims)), Device{}, true});
    const detail::IndexPlan p = detail::index_plan(metas, a.entries, aten);
    if (!p.known) throw UnsupportedOperator("aten::index: a bool mask has no lowering (the result's shape depends on the data)");
    const V& x = in[0];
    const detail::FlatIndex<V> f = detail::flat_index(b, x, in, p, aten);
    V rows;
    if (f.m == 0 || f.n == 0 || f.r == 0) {
      rows = b.constant_int(0, x.dtype, {f.m, f.r});
    } else {
      using RO = detail::reduce_op_t<B>;
      const std::vector<int64_t> wide{f.m, f.n, f.r};
      const V hit = b.compare("EQ", b.broadcast_in_dim(f.rows, {f.m, f.n}, {0}), b.iota(ScalarType::Int64, {f.m, f.n}, 1));
      const V sel = b.select(b.broadcast_in_dim(hit, wide, {0, 1}), b.broadcast_in_dim(f.x2, wide, {1, 2}),
                             detail::add_identity(b, x.dtype, wide));
      rows = b.reduce(sel, detail::add_identity(b, x.dtype, {}), x.dtype == ScalarType::Bool ? RO::Or : RO::Add, {1});
    }
    return detail::transposed(b, b.reshape(rows, detail::block_dims(p, x)), detail::placement(p));
  }
};

/// `self` with `values` written (or, `accumulate`, added) at the positions of an index list
/// (torch's `x[indices] = values` / `index_put`), as a new tensor.
///
/// **Shapes:** `self` and the list as for index; `values` broadcasts to index's result shape
/// (`x[i] = v`: v of that shape, or smaller and broadcast) → `self`'s shape.
/// **Dtypes:** all eight; `values` of `self`'s dtype (a 0-dim `values` of another dtype is
/// converted to it, as torch converts the number of `x[i] = 5`; torch's aten call rejects it);
/// bool accumulates with or, integers wrap.
/// **Duplicates:** positions named twice with `accumulate=False` keep the last write in
/// row-major order of the broadcast index shape (as torch's cpu kernel; torch leaves it
/// unspecified), on the cpu and on PJRT devices; with `accumulate=True` every value is added
/// (float sums on devices may round in another order than the cpu's sequential one).
/// **Errors:** as index; TypeError for `values` of another dtype (not 0-dim); ShapeError when
/// `values` does not broadcast to the indexed shape; UnsupportedOperator on a PJRT device or in
/// a compiled model for a mask combined with other index tensors, or `values` with one entry
/// per true mask element (the count is data).
/// **Source:** torch.Tensor.index_put / __setitem__ (TensorAdvancedIndexing.cpp).
/// **Lowering:** detail::flat_index, a one-hot scatter (last write or sum per row), or for a
/// single mask `select(mask, values, self)`.
struct IndexPutOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "index_put", aten = "aten::index_put";
  static constexpr std::string_view schema =
      "aten::index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::all();
  /// Non-tensor arguments.
  struct Args {
    detail::IndexEntries entries;  ///< which entries are tensors; mask counts
    bool accumulate = false;       ///< add instead of write
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return Args{detail::entries_of(r.get("indices"), aten), r.to_bool("accumulate")}; }
  /// The operands: `self`, the tensors of the list, `values` (a number in its place, as a
  /// model graph's folded constant may be, becomes a 0-dim tensor of `self`'s dtype).
  template <class R>
  static std::vector<AnyTensor> tensors(const R& r) {
    const auto* l = std::get_if<std::vector<AnyTensor>>(&r.get("indices"));
    const auto* s = std::get_if<AnyTensor>(&r.get("self"));
    if (!s || !l) return r.tensors();  // its TypeError
    std::vector<AnyTensor> t{*s};
    for (const AnyTensor& i : *l)
      if (i.defined()) t.push_back(i);
    if (const auto* v = std::get_if<AnyTensor>(&r.get("values"))) t.push_back(*v);
    else t.push_back(value_tensor(*s, detail::Scalar::read(r.get("values"), aten, "values")));
    return t;
  }
  /// `v` as a 0-dim tensor of `self`'s dtype and device.
  static AnyTensor value_tensor(const AnyTensor& self, const detail::Scalar& v) {
    return AnyTensor::dispatch(self.dtype(), [&]<class T>(std::type_identity<T>) {
      Tensor<T> one = full<T>(Dims{}, v.as<T>());
      return AnyTensor(self.device().is_cpu() ? one : Tensor<T>(one.to(self.device())));
    });
  }
  /// `self` takes the result dtype; the others keep theirs (`values` is converted by the
  /// kernels when it is a 0-dim tensor of another dtype).
  static ScalarType operand_dtype(size_t i, ScalarType given, ScalarType result) { return i == 0 ? result : given; }
  /// Each mask's number of true elements (cpu; unknown on a PJRT device).
  static Args resolve(std::span<const AnyTensor> in, Args a) {
    a.entries = detail::count_masks(in, a.entries, aten, false);
    return a;
  }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    if (in.size() != static_cast<size_t>(2 + a.entries.tensors()))
      throw ValueError("aten::index_put: internal: operands " + describe(in) + " do not match the index list");
    const TensorMeta& x = in[0];
    const TensorMeta& v = in.back();
    if (v.dtype != x.dtype && v.dim() != 0)
      throw TypeError("aten::index_put: values must have self's dtype (operands " + describe(in) + ")");
    const detail::IndexPlan p = detail::index_plan(in.first(in.size() - 1), a.entries, aten);
    if (p.known) {
      if (!broadcastable_to(v.sizes, p.result))
        throw ShapeError("aten::index_put: shape mismatch: value tensor of shape " + to_string(v.sizes) +
                         " cannot be broadcast to indexing result of shape " + to_string(p.result) + " (operands " + describe(in) + ")");
    } else {
      single_mask_values(in, p);
    }
    return TensorMeta{x.dtype, x.sizes, Device{}, true};
  }
  /// For a list whose mask count is unknown (a PJRT device): checks that it is one mask and
  /// that `values` does not depend on the count; returns `values`' shape at `self`'s rank (1
  /// at the mask's dims). **Errors:** UnsupportedOperator otherwise; ShapeError for `values`
  /// that does not broadcast.
  static std::vector<int64_t> single_mask_values(std::span<const TensorMeta> in, const detail::IndexPlan& p) {
    const TensorMeta& x = in[0];
    const TensorMeta& v = in.back();
    if (p.mask_ops.size() != 1 || static_cast<int>(p.adv.size()) != in[static_cast<size_t>(p.mask_ops[0])].dim())
      throw UnsupportedOperator("aten::index_put: a bool mask combined with other index tensors needs the number of true "
                                "elements, which a PJRT device does not read (operands " + describe(in) + ")");
    const int k = static_cast<int>(p.adv.size()), p0 = p.adv.front(), r = x.dim(), ir = r - k + 1;
    std::vector<int64_t> want;  // the indexed shape with the count as 1
    for (int d = 0; d < p0; ++d) want.push_back(x.sizes[d]);
    want.push_back(1);
    for (int d = p0 + k; d < r; ++d) want.push_back(x.sizes[d]);
    if (v.dim() > ir) throw ShapeError("aten::index_put: values " + describe(v) + " has more dims than the indexed shape");
    std::vector<int64_t> vd(static_cast<size_t>(ir - v.dim()), 1);
    for (int64_t s : v.sizes) vd.push_back(s);
    if (vd[static_cast<size_t>(p0)] != 1)
      throw UnsupportedOperator("aten::index_put: values with one entry per true mask element need the number of true "
                                "elements, which a PJRT device does not read; broadcast one value along it (operands " +
                                describe(in) + ")");
    for (int d = 0; d < ir; ++d)
      if (vd[static_cast<size_t>(d)] != 1 && vd[static_cast<size_t>(d)] != want[static_cast<size_t>(d)])
        throw ShapeError("aten::index_put: shape mismatch: value tensor of shape " + to_string(v.sizes) +
                         " cannot be broadcast to the indexed shape (operands " + describe(in) + ")");
    std::vector<int64_t> out;
    for (int d = 0; d < ir; ++d) {
      if (d == p0) out.insert(out.end(), static_cast<size_t>(k), 1);
      else out.push_back(vd[static_cast<size_t>(d)]);
    }
    return out;
  }
  /// CPU kernel: a copy of `self`, then each value written (added) in the order of the index
  /// walk (the last write wins where positions repeat).
  template <element T>
  static void cpu(std::span<const AnyTensor> in, const Args& a, Tensor<T>& out) {
    out.copy_(in[0].get<T>());
    const auto metas = detail::metas_of(in);
    const detail::IndexPlan p = detail::index_plan(std::span<const TensorMeta>(metas).first(metas.size() - 1), a.entries, aten);
    const detail::IndexWalk w = detail::index_walk(in, p, out.sizes(), out.strides(), aten);
    const Tensor<T> v = detail::as_dtype<T>(in.back()).expand(p.result).contiguous();
    const T* s = v.data_ptr();
    T* o = out.data_ptr();
    if (v.numel() == 0) return;
    for (int64_t q : w.pre)
      for (int64_t m : w.mid)
        for (int64_t r : w.post) {
          T& dst = o[q + m + r];
          const T x = *s++;
          if (!a.accumulate) dst = x;
          else if constexpr (std::is_same_v<T, bool>) dst = dst || x;
          else if constexpr (std::is_integral_v<T>)
            dst = static_cast<T>(static_cast<std::make_unsigned_t<T>>(dst) + static_cast<std::make_unsigned_t<T>>(x));
          else dst = static_cast<T>(static_cast<opmath_t<T>>(dst) + static_cast<opmath_t<T>>(x));
        }
  }
  /// StableHLO: detail::flat_index, then per row of `self` the last write (or the sum) of the
  /// values whose position names it; a single mask of unknown count: a select.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims&) {
    std::vector<TensorMeta> metas;
    for (const V& v : in) metas.push_back(TensorMeta{v.dtype, Dims(std::span<const int64_t>(v.dims)), Device{}, true});
    const detail::IndexPlan p = detail::index_plan(std::span<const TensorMeta>(metas).first(metas.size() - 1), a.entries, aten);
    const V& x = in[0];
    V v = in.back();
    if (v.dtype != x.dtype) v = b.convert(v, x.dtype);
    const bool is_bool = x.dtype == ScalarType::Bool;
    using RO = detail::reduce_op_t<B>;
    if (!p.known) {  // one mask, values broadcast along its count
      const std::vector<int64_t> vd = single_mask_values(metas, p);
      V m = in[static_cast<size_t>(p.mask_ops[0])];
      if (m.dtype != ScalarType::Bool) m = b.compare("NE", m, b.constant_int(0, m.dtype, m.dims));
      std::vector<int64_t> md;
      for (int d : p.adv) md.push_back(d);
      const V mb = b.broadcast_in_dim(m, x.dims, md);
      std::vector<int64_t> all;
      for (size_t d = 0; d < x.dims.size(); ++d) all.push_back(static_cast<int64_t>(d));
      const V vb = b.broadcast_in_dim(b.reshape(v, vd), x.dims, all);
      if (!a.accumulate) return b.select(mb, vb, x);
      if (is_bool) return b.binary("or", x, b.binary("and", mb, vb));
      return b.add(x, b.select(mb, vb, detail::add_identity(b, x.dtype, x.dims)));
    }
    const detail::FlatIndex<V> f = detail::flat_index(b, x, std::span<const V>(in), p, aten);
    if (f.m == 0 || f.n == 0 || f.r == 0) return x;
    // values in [B..., rest...] order, one row per index position: [M, R]
    const V vr = b.reshape(detail::transposed(b, detail::right_aligned(b, v, detail::vec(p.result)), detail::inverse_perm(detail::placement(p))),
                           {f.m, f.r});
    const std::vector<int64_t> mn{f.m, f.n}, wide{f.m, f.n, f.r};
    V hit = b.compare("EQ", b.broadcast_in_dim(f.rows, mn, {0}), b.iota(ScalarType::Int64, mn, 1));
    V last;
    if (!a.accumulate) {  // the last index position naming each row wins
      const V pos = b.iota(ScalarType::Int64, mn, 0);
      last = b.reduce(b.select(hit, pos, b.constant_int(-1, ScalarType::Int64, mn)), b.constant_int(-1, ScalarType::Int64), RO::Max, {0});
      hit = b.binary("and", hit, b.compare("EQ", pos, b.broadcast_in_dim(last, mn, {1})));
    }
    const V sel = b.select(b.broadcast_in_dim(hit, wide, {0, 1}), b.broadcast_in_dim(vr, wide, {0, 2}),
                           detail::add_identity(b, x.dtype, wide));
    const V sum = b.reduce(sel, detail::add_identity(b, x.dtype, {}), is_bool ? RO::Or : RO::Add, {0});
    V rows;
    if (a.accumulate) {
      rows = is_bool ? b.binary("or", f.x2, sum) : b.add(f.x2, sum);
    } else {
      const V written = b.compare("GE", last, b.constant_int(0, ScalarType::Int64, {f.n}));
      rows = b.select(b.broadcast_in_dim(written, {f.n, f.r}, {0}), sum, f.x2);
    }
    return detail::transposed(b, b.reshape(rows, f.moved), detail::inverse_perm(f.perm));
  }
};

/// The in-place form `index_put_` (model graphs: `x[i] = v` traces to it): index_put's result,
/// written into `self` by the callers that run it by name (ops::call_args; a model graph's
/// cpu kernel, so a write through a view reaches its base). The whole-graph compile lowers it
/// as index_put and gives later readers of `self` the new value (jit/lower.hpp).
struct IndexPutInplaceOp : IndexPutOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "index_put_", aten = "aten::index_put_", api = "index_put_";
  static constexpr std::string_view schema =
      "aten::index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor(a!)";
  ///@}
  /// Writes its result into operand 0.
  static constexpr bool in_place = true;
};

/// The positions of the nonzero elements of `self` (torch.nonzero): one row of `self.dim()`
/// coordinates per nonzero element, in row-major order (NaN counts as nonzero, -0.0 as zero).
///
/// **Shapes:** `self: [...]` (rank r) → `[n, r]`, n the number of nonzero elements (`[n, 0]`
/// for a 0-dim self: n is 1 or 0).
/// **Dtypes:** `self` all eight; the result is int64.
/// **Errors:** UnsupportedOperator on a PJRT device or in a compiled model (n is data).
/// **Source:** torch.nonzero.
struct NonzeroOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "nonzero", aten = "aten::nonzero";
  static constexpr std::string_view schema = "aten::nonzero(Tensor self) -> Tensor";
  ///@}
  /// The result's dtype.
  static constexpr DtypeSet dtypes = DtypeSet::of({ScalarType::Int64});
  /// `self`'s dtypes: any of the eight.
  static constexpr DtypeSet self_dtypes = DtypeSet::all();
  /// The result's shape depends on the data: no PJRT device runs it (docs/ops.md's table).
  static constexpr bool cpu_only = true;
  /// Non-tensor arguments: the count, read from the data (cpu).
  struct Args {
    int64_t count = -1;  ///< nonzero elements (-1: not read)
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R&) { return Args{}; }
  /// `self` keeps its dtype.
  static ScalarType operand_dtype(size_t, ScalarType given, ScalarType) { return given; }
  /// The count (cpu). **Errors:** UnsupportedOperator on a PJRT device.
  static Args resolve(std::span<const AnyTensor> in, Args a) {
    if (!in[0].device().is_cpu())
      throw UnsupportedOperator("aten::nonzero: the result's shape depends on the data (the number of nonzero elements), "
                                "which " + in[0].device().str() + " does not compute ahead of running; call it on the cpu");
    a.count = detail::count_true(in[0]);
    return a;
  }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    if (a.count < 0)
      throw UnsupportedOperator("aten::nonzero: the result's shape depends on the data (the number of nonzero elements), "
                                "which a compiled program cannot have (operands " + describe(in) + ")");
    return TensorMeta{ScalarType::Int64, Dims{a.count, in[0].dim()}, Device{}, true};
  }
  /// CPU kernel: the coordinates of each nonzero element.
  template <element T>
  static void cpu(std::span<const AnyTensor> in, const Args& a, Tensor<T>& out) {
    T* o = out.data_ptr();
    int64_t n = 0;
    in[0].visit([&]<class U>(const Tensor<U>& x) {
      detail::for_each_index(x.sizes(), [&](const int64_t* idx) {
        if (static_cast<double>(convert<double>(detail::at_index(x, idx))) == 0.0) return;
        if (n++ >= a.count) return;  // (cannot happen: `a.count` was read from this data)
        for (int d = 0; d < x.dim(); ++d) *o++ = static_cast<T>(idx[d]);
      });
    });
    if (n != a.count) throw ValueError("aten::nonzero: internal: the data changed while it was read");
  }
  /// No lowering: the shape depends on the data. **Errors:** UnsupportedOperator.
  template <class B, class V>
  static V lower(B&, std::span<const V>, const Args&, const Dims&) {
    throw UnsupportedOperator("aten::nonzero has no lowering (the result's shape depends on the data)");
  }
};

/// The elements of `self` where `mask` is true, as a 1-D tensor (torch.masked_select); `self`
/// and `mask` broadcast together first.
///
/// **Shapes:** `self`, `mask` broadcasting to `S` → `[n]`, n the true elements of the
/// broadcast mask; row-major order of `S`.
/// **Dtypes:** `self` all eight (the result's); `mask` bool (or uint8).
/// **Errors:** TypeError for another mask dtype; ShapeError for shapes that do not broadcast;
/// UnsupportedOperator on a PJRT device or in a compiled model (n is data).
/// **Source:** torch.masked_select.
struct MaskedSelectOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "masked_select", aten = "aten::masked_select";
  static constexpr std::string_view schema = "aten::masked_select(Tensor self, Tensor mask) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::all();
  /// The result's shape depends on the data: no PJRT device runs it (docs/ops.md's table).
  static constexpr bool cpu_only = true;
  /// Non-tensor arguments: the count, read from the data (cpu).
  struct Args {
    int64_t count = -1;  ///< true elements of the broadcast mask (-1: not read)
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R&) { return Args{}; }
  /// `mask` is read as bool.
  static ScalarType operand_dtype(size_t i, ScalarType, ScalarType result) { return i == 1 ? ScalarType::Bool : result; }
  /// The count (cpu). **Errors:** UnsupportedOperator on a PJRT device; as `infer` for a mask
  /// that is no mask or shapes that do not broadcast.
  static Args resolve(std::span<const AnyTensor> in, Args a) {
    if (!in[0].device().is_cpu() || !in[1].device().is_cpu())
      throw UnsupportedOperator("aten::masked_select: the result's shape depends on the data (the number of true mask "
                                "elements), which " + (in[0].device().is_cpu() ? in[1] : in[0]).device().str() +
                                " does not compute ahead of running; call it on the cpu, or use masked_fill / where");
    check_mask(TensorMeta::of(in[1]), detail::metas_of(in));
    const Dims s = broadcast_shapes(in[0].sizes(), in[1].sizes(), aten);
    a.count = detail::count_true(in[1].visit([&](const auto& m) { return AnyTensor(m.expand(s)); }));
    return a;
  }
  /// TypeError unless `m` is a mask.
  static void check_mask(const TensorMeta& m, std::span<const TensorMeta> in) {
    if (!detail::is_mask_dtype(m.dtype))
      throw TypeError("aten::masked_select: expected a bool (or uint8) mask (operands " + describe(in) + ")");
  }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    check_mask(in[1], in);
    (void)broadcast_shapes(in[0].sizes, in[1].sizes, aten);
    if (a.count < 0)
      throw UnsupportedOperator("aten::masked_select: the result's shape depends on the data (the number of true mask "
                                "elements), which a compiled program cannot have (operands " + describe(in) + ")");
    return TensorMeta{in[0].dtype, Dims{a.count}, Device{}, true};
  }
  /// CPU kernel: the selected elements in row-major order of the broadcast shape.
  template <element T>
  static void cpu(std::span<const AnyTensor> in, const Args& a, Tensor<T>& out) {
    const Dims s = broadcast_shapes(in[0].sizes(), in[1].sizes(), aten);
    const Tensor<T> x = in[0].get<T>().expand(s);
    const Tensor<bool> m = in[1].get<bool>().expand(s);
    T* o = out.data_ptr();
    int64_t n = 0;
    detail::for_each_index(s, [&](const int64_t* idx) {
      if (detail::at_index(m, idx) && n++ < a.count) *o++ = detail::at_index(x, idx);
    });
    if (n != a.count) throw ValueError("aten::masked_select: internal: the data changed while it was read");
  }
  /// No lowering: the shape depends on the data. **Errors:** UnsupportedOperator.
  template <class B, class V>
  static V lower(B&, std::span<const V>, const Args&, const Dims&) {
    throw UnsupportedOperator("aten::masked_select has no lowering (the result's shape depends on the data)");
  }
};

// Each op's entry point, compiled once in TORCHTPU_SEPARATE_OPS programs (ops/library.hpp).
TORCHTPU_LIBRARY_OP(IndexOp);
TORCHTPU_LIBRARY_OP(IndexPutOp);
TORCHTPU_LIBRARY_OP(IndexPutInplaceOp);
TORCHTPU_LIBRARY_OP(NonzeroOp);
TORCHTPU_LIBRARY_OP(MaskedSelectOp);

}  // namespace ops

/// The index list of `torchtpu::index` / `index_put`: one entry per indexed dim, a tensor
/// (int64 / int32 indices, a bool / uint8 mask) or `std::nullopt` (None: a full slice), as
/// libtorch's `c10::List<c10::optional<at::Tensor>>`.
using IndexList = std::vector<std::optional<AnyTensor>>;

/// Advanced indexing (torch's `x[indices]`); see ops::IndexOp.
/// **Example:** `index(x, {idx})` is `x[idx]`; `index(x, {std::nullopt, idx})` is `x[:, idx]`;
/// `index(x, {mask})` is `x[mask]` (tests/ops/test_advanced_indexing.cpp).
template <element T, int R>
Tensor<T> index(const Tensor<T, R>& self, const IndexList& indices) {
  std::vector<AnyTensor> in{self};
  const ops::detail::IndexEntries e = ops::detail::entries_of(indices, in, ops::IndexOp::aten);
  return ops::call_mixed<ops::IndexOp, T>(in, {e});
}
/// Run-time typed `index`.
template <std::same_as<AnyTensor> A>
A index(const A& self, const IndexList& indices) {
  std::vector<AnyTensor> in{self};
  const ops::detail::IndexEntries e = ops::detail::entries_of(indices, in, ops::IndexOp::aten);
  return ops::call<ops::IndexOp>(in, {e});
}

/// `self` with `values` written (added, `accumulate`) at `indices`, as a new tensor (torch's
/// `index_put`); see ops::IndexPutOp.
/// **Example:** `index_put(x, {mask}, 0.0f)` is `x[mask] = 0` on a copy.
template <element T, int R, int RV>
Tensor<T> index_put(const Tensor<T, R>& self, const IndexList& indices, const Tensor<T, RV>& values, bool accumulate = false) {
  std::vector<AnyTensor> in{self};
  const ops::detail::IndexEntries e = ops::detail::entries_of(indices, in, ops::IndexPutOp::aten);
  in.push_back(values);
  return ops::call_mixed<ops::IndexPutOp, T>(in, {e, accumulate});
}
/// `index_put` of the number `value` (converted to `T`).
template <element T, int R, class S>
  requires std::is_arithmetic_v<S>
Tensor<T> index_put(const Tensor<T, R>& self, const IndexList& indices, S value, bool accumulate = false) {
  std::vector<AnyTensor> in{self};
  const ops::detail::IndexEntries e = ops::detail::entries_of(indices, in, ops::IndexPutOp::aten);
  in.push_back(ops::IndexPutOp::value_tensor(self, ops::detail::scalar_of(value)));
  return ops::call_mixed<ops::IndexPutOp, T>(in, {e, accumulate});
}
/// Run-time typed `index_put` (`values` of `self`'s dtype, or 0-dim).
template <std::same_as<AnyTensor> A>
A index_put(const A& self, const IndexList& indices, const AnyTensor& values, bool accumulate = false) {
  std::vector<AnyTensor> in{self};
  const ops::detail::IndexEntries e = ops::detail::entries_of(indices, in, ops::IndexPutOp::aten);
  in.push_back(values);
  return ops::call<ops::IndexPutOp>(in, {e, accumulate});
}

/// In place `index_put` (torch's `x.index_put_(indices, values)`, `x[indices] = values`):
/// computes index_put and copies it into `self` (a view writes through to its base); returns
/// `self`. **Errors:** as index_put; as `copy_` for a `self` whose elements overlap.
template <element T, int R, class V>
Tensor<T, R>& index_put_(Tensor<T, R>& self, const IndexList& indices, const V& values, bool accumulate = false) {
  const Tensor<T> r = index_put(self, indices, values, accumulate);
  self.copy_(r);
  return self;
}

/// The coordinates of the nonzero elements of `self` (torch.nonzero; cpu only); see
/// ops::NonzeroOp.
template <element T, int R>
Tensor<int64_t> nonzero(const Tensor<T, R>& self) {
  const std::vector<AnyTensor> in{self};
  return ops::call_mixed<ops::NonzeroOp, int64_t>(in, {});
}
/// Run-time typed `nonzero`.
template <std::same_as<AnyTensor> A>
A nonzero(const A& self) {
  return ops::call<ops::NonzeroOp>(std::span<const AnyTensor>(&self, 1), {});
}

/// The elements of `self` where `mask` is true, 1-D (torch.masked_select; cpu only); see
/// ops::MaskedSelectOp.
template <element T, int R, element M, int RM>
Tensor<T> masked_select(const Tensor<T, R>& self, const Tensor<M, RM>& mask) {
  const std::vector<AnyTensor> in{self, mask};
  return ops::call_mixed<ops::MaskedSelectOp, T>(in, {});
}
/// Run-time typed `masked_select`.
template <std::same_as<AnyTensor> A>
A masked_select(const A& self, const AnyTensor& mask) {
  const std::vector<AnyTensor> in{self, mask};
  return ops::call<ops::MaskedSelectOp>(in, {});
}

}  // namespace torchtpu
