// torchtpu/ops/shape.hpp — operator library, shape family: cat, stack, roll, tril, triu, repeat
// (and tile), flip, diag, pad (and constant_pad_nd); and the view functions split, split_with_sizes, chunk,
// unbind, meshgrid (no library op: views of their input, one rule for the cpu and the lowering). Each op is one definition (ops/library.hpp) that the typed API
// (`torchtpu::cat(std::vector<Tensor<T>>)`), the run-time API
// (`torchtpu::cat(std::vector<AnyTensor>)`), the eager PJRT devices and model graphs
// (`aten::cat`) all call. Tests: tests/ops/test_shape.cpp (cpu, every dtype),
// tests/device_ops/test_device_library.cpp (PJRT devices), tests/jit (models). Index and mask
// ops (gather, scatter, ...) are in ops/indexing.hpp.
#pragma once
#include <algorithm>    // std::min, std::max, std::copy, std::clamp
#include <concepts>     // std::same_as
#include <cstdint>      // int64_t
#include <initializer_list>  // std::initializer_list
#include <optional>     // std::optional
#include <tuple>        // std::tie
#include <type_traits>  // std::type_identity
#include <utility>      // std::pair
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include "library.hpp"  // TensorMeta, DtypeSet, ops::call

namespace torchtpu {
namespace ops {

namespace detail {

/// An int list argument as `Dims` (at most `max_rank` values). **Errors:** ValueError naming
/// `op` and the argument when the list is longer.
inline Dims to_dims(const std::vector<int64_t>& v, std::string_view op, std::string_view what) {
  if (v.size() > static_cast<size_t>(max_rank))
    throw ValueError(std::string(op) + ": at most " + std::to_string(max_rank) + " values in '" + std::string(what) +
                     "', got " + std::to_string(v.size()));
  return Dims(v.begin(), v.end());
}

/// The pieces of a dim of size `n` that torch.split / torch.chunk cut (start, length), in
/// order: one rule for the cpu functions (views) and the whole-graph lowering (slices).
struct Piece {
  int64_t start = 0;   ///< first index along the dim
  int64_t length = 0;  ///< number of indices
};

/// Pieces of one length `step` over a dim of `n` (the last one shorter), `count` of them:
/// split's and chunk's rule, computed per piece (a forward pass allocates no list for them).
struct EvenPieces {
  int64_t n = 0;      ///< the dim's size
  int64_t step = 0;   ///< each piece's length (the last one: what is left)
  int64_t count = 0;  ///< number of pieces
  /// Number of pieces.
  size_t size() const noexcept { return size_t(count); }
  /// Piece `i` (< count): from min(i·step, n), of length min(step, what is left).
  Piece operator[](size_t i) const noexcept {
    const int64_t s = std::min(int64_t(i) * step, n);
    return Piece{s, std::min(step, n - s)};
  }
  /// Iterates the pieces in order.
  struct iterator {
    const EvenPieces* r;  ///< the pieces
    size_t i;             ///< the current one
    /// The current piece.
    Piece operator*() const noexcept { return (*r)[i]; }
    /// The next piece.
    iterator& operator++() noexcept {
      ++i;
      return *this;
    }
    /// Equal at the same position.
    bool operator==(const iterator& o) const noexcept { return i == o.i; }
  };
  /// The first piece.
  iterator begin() const noexcept { return {this, 0}; }
  /// Past the last piece.
  iterator end() const noexcept { return {this, size()}; }
  /// The pieces as a list.
  std::vector<Piece> list() const {
    std::vector<Piece> r;
    for (const Piece p : *this) r.push_back(p);
    return r;
  }
};

/// torch.split with an int: pieces of `size` (the last one smaller); one empty piece when
/// `n` is 0 (torch returns the tensor itself). **Errors:** ValueError naming `op` and `shape`
/// when `size` is negative, or 0 for a non-empty dim.
inline EvenPieces split_pieces(int64_t n, int64_t size, std::string_view op, const Dims& shape) {
  if (size < 0 || (size == 0 && n > 0))
    throw ValueError(std::string(op) + ": split_size must be positive for a dim of size " + std::to_string(n) +
                     ", got " + std::to_string(size) + " (self " + to_string(shape) + ")");
  if (n == 0) return EvenPieces{0, 0, 1};
  return EvenPieces{n, size, n / size + (n % size != 0)};
}

/// torch.split with a list (split_with_sizes): consecutive pieces of `sizes`. **Errors:**
/// ValueError naming `op` and `shape` when a size is negative or they do not sum to `n`.
inline std::vector<Piece> split_with_sizes_pieces(int64_t n, const std::vector<int64_t>& sizes, std::string_view op,
                                                  const Dims& shape) {
  std::vector<Piece> r;
  int64_t s = 0;
  for (int64_t len : sizes) {
    if (len < 0)
      throw ValueError(std::string(op) + ": split sizes must be non-negative, got " + to_string(Dims(sizes.begin(), sizes.end())) +
                       " (self " + to_string(shape) + ")");
    r.push_back(Piece{s, len});
    s += len;
  }
  if (s != n)
    throw ValueError(std::string(op) + ": split sizes " + to_string(Dims(sizes.begin(), sizes.end())) + " sum to " +
                     std::to_string(s) + ", but the dim has size " + std::to_string(n) + " (self " + to_string(shape) + ")");
  return r;
}

/// torch.chunk: pieces of ceil(n / chunks) (fewer than `chunks` when they do not divide
/// evenly; `chunks` empty pieces when `n` is 0, as torch). **Errors:** ValueError naming `op`
/// for `chunks` < 1.
inline EvenPieces chunk_pieces(int64_t n, int64_t chunks, std::string_view op, const Dims& shape) {
  if (chunks <= 0)
    throw ValueError(std::string(op) + ": chunks must be positive, got " + std::to_string(chunks) + " (self " +
                     to_string(shape) + ")");
  if (n == 0) return EvenPieces{0, 0, chunks};
  const int64_t step = n / chunks + (n % chunks != 0);  // ceil, no overflow
  return split_pieces(n, step, op, shape);
}

/// The views of `x` (a Tensor<T> or an AnyTensor) along dim `d` for `pieces` (a list of
/// Piece, or EvenPieces), appended to `r`.
template <class X, class Pieces>
void narrow_pieces_into(const X& x, int d, const Pieces& pieces, std::vector<X>& r) {
  r.reserve(r.size() + pieces.size());
  for (const Piece p : pieces) {
    if constexpr (std::is_same_v<X, AnyTensor>) r.push_back(x.visit([&](const auto& t) { return AnyTensor(t.narrow(d, p.start, p.length)); }));
    else r.push_back(x.narrow(d, p.start, p.length));
  }
}
/// The views of `x` along dim `d` for `pieces`, as a new list.
template <class X, class Pieces>
std::vector<X> narrow_pieces(const X& x, int d, const Pieces& pieces) {
  std::vector<X> r;
  narrow_pieces_into(x, d, pieces, r);
  return r;
}

/// `x` mod `n` in [0, n) (n > 0).
constexpr int64_t mod(int64_t x, int64_t n) {
  const int64_t r = x % n;
  return r < 0 ? r + n : r;
}

/// A StableHLO int list from `Dims`.
inline std::vector<int64_t> vec(const Dims& d) { return std::vector<int64_t>(d.begin(), d.end()); }

}  // namespace detail

/// Concatenation along `dim` (torch.cat).
///
/// **Shapes:** operands of equal rank ≥ 1 whose sizes agree except along `dim`; the result's
/// `dim` is the sum of theirs. As in torch, a 1-D operand of size 0 (`torch.empty(0)`, the
/// legacy "empty" tensor) is skipped whatever the others' shapes.
/// **Dtypes:** all eight; operands of different dtypes are promoted (torch.result_type).
/// **Errors:** ValueError for an empty list; ShapeError for a 0-dim operand or sizes that do
/// not match (naming every operand); IndexError for `dim` out of range.
/// **Source:** torch.cat (aten/src/ATen/native/TensorShape.cpp's rules, including the legacy
/// empty-tensor skip). **Lowering:** stablehlo.concatenate.
struct CatOp {
  ///@{
  /// Names and schema (torch 1.13 / 2.x `aten::cat`).
  static constexpr std::string_view name = "cat", aten = "aten::cat";
  static constexpr std::string_view schema = "aten::cat(Tensor[] tensors, int dim=0) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::all();
  /// Non-tensor arguments.
  struct Args {
    int64_t dim = 0;  ///< the dim to concatenate along (negative counts from the end)
  };
  /// Arguments from a model node or a run-time call (schema names).
  template <class R>
  static Args args(const R& r) { return Args{r.to_int("dim")}; }

  /// A legacy empty operand: skipped.
  static bool skipped(const TensorMeta& m) { return m.dim() == 1 && m.sizes[0] == 0; }

  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    if (in.empty()) throw ValueError("aten::cat: expected a non-empty list of tensors");
    const TensorMeta* first = nullptr;
    for (const TensorMeta& m : in) {
      if (m.dim() == 0)
        throw ShapeError("aten::cat: zero-dimensional tensor cannot be concatenated (operands " + describe(in) + ")");
      if (!first && !skipped(m)) first = &m;
    }
    TensorMeta out{result_type(in, aten), Dims{0}, Device{}, true};
    if (!first) return out;  // every operand is a legacy empty tensor
    const int d = wrap_dim(a.dim, first->dim(), aten);
    out.sizes = first->sizes;
    int64_t total = 0;
    for (const TensorMeta& m : in) {
      if (skipped(m)) continue;
      bool ok = m.dim() == first->dim();
      for (int i = 0; ok && i < m.dim(); ++i) ok = i == d || m.sizes[i] == first->sizes[i];
      if (!ok)
        throw ShapeError("aten::cat: sizes of tensors must match except in dimension " + std::to_string(d) +
                         " (operands " + describe(in) + ")");
      total += m.sizes[d];
    }
    out.sizes[d] = total;
    return out;
  }

  /// CPU kernel: each operand copied into its slice of `out`.
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    if (out.dim() == 1 && out.size(0) == 0) return;
    const int d = wrap_dim(a.dim, out.dim(), aten);
    int64_t off = 0;
    for (const Tensor<T>& t : in) {
      if (t.dim() == 1 && t.size(0) == 0) continue;
      if (t.size(d)) out.narrow(d, off, t.size(d)).copy_(t);
      off += t.size(d);
    }
  }

  /// StableHLO: one concatenate of the operands that are not skipped.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    std::vector<V> keep;
    for (const V& v : in)
      if (!(v.dims.size() == 1 && v.dims[0] == 0)) keep.push_back(v);
    if (keep.empty()) return in[0];
    if (keep.size() == 1) return keep[0];
    return b.concatenate(keep, wrap_dim(a.dim, out.size(), aten));
  }
};

/// Stacking along a new dim `dim` (torch.stack).
///
/// **Shapes:** operands of one shape `S`; the result is `S` with the operand count inserted at
/// `dim` (in `[-rank-1, rank]`).
/// **Dtypes:** all eight, promoted as torch.result_type.
/// **Errors:** ValueError for an empty list; ShapeError for operands of different shapes;
/// IndexError for `dim` out of range.
/// **Source:** torch.stack. **Lowering:** a reshape of each operand, then stablehlo.concatenate.
struct StackOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "stack", aten = "aten::stack";
  static constexpr std::string_view schema = "aten::stack(Tensor[] tensors, int dim=0) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::all();
  /// Non-tensor arguments.
  struct Args {
    int64_t dim = 0;  ///< where the new dim goes (negative counts from the end of the result)
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return Args{r.to_int("dim")}; }

  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    if (in.empty()) throw ValueError("aten::stack: expected a non-empty list of tensors");
    for (const TensorMeta& m : in)
      if (m.sizes != in[0].sizes)
        throw ShapeError("aten::stack: expects each tensor to be equal size (operands " + describe(in) + ")");
    TensorMeta out{result_type(in, aten), in[0].sizes, Device{}, true};
    out.sizes.insert(wrap_dim(a.dim, in[0].dim() + 1, aten), static_cast<int64_t>(in.size()));
    return out;
  }

  /// CPU kernel: each operand copied into its index along `dim`.
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    const int d = wrap_dim(a.dim, out.dim(), aten);
    if (out.numel() == 0) return;
    for (size_t i = 0; i < in.size(); ++i) out.select(d, static_cast<int64_t>(i)).copy_(in[i]);
  }

  /// StableHLO: each operand reshaped to size 1 along `dim`, then one concatenate.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    const int d = wrap_dim(a.dim, out.size(), aten);
    std::vector<V> parts;
    for (const V& v : in) {
      std::vector<int64_t> dims = v.dims;
      dims.insert(dims.begin() + d, 1);
      parts.push_back(b.reshape(v, dims));
    }
    return parts.size() == 1 ? parts[0] : b.concatenate(parts, d);
  }
};

/// Elements shifted cyclically along dims (torch.roll): `out[(i + shift) mod n] = self[i]`.
///
/// **Shapes:** `self: [...]` → the same shape. With `dims` empty, `self` is rolled as if
/// flattened (one shift) and keeps its shape; otherwise `shifts[k]` rolls along `dims[k]`
/// (a dim may repeat: the shifts add up).
/// **Dtypes:** all eight; the result has `self`'s.
/// **Errors:** ValueError when `shifts` and `dims` do not align (naming both lengths);
/// IndexError for a dim out of range or any dim of a 0-dim tensor.
/// **Source:** torch.roll (aten/src/ATen/native/TensorTransformations.cpp). **Lowering:** a
/// slice of each side and stablehlo.concatenate per dim (reshaped to 1-D for the flat form).
struct RollOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "roll", aten = "aten::roll";
  static constexpr std::string_view schema = "aten::roll(Tensor self, int[1] shifts, int[1] dims=[]) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::all();
  /// Non-tensor arguments.
  struct Args {
    Dims shifts;  ///< shift per entry of `dims` (one shift for the flat form)
    Dims dims;    ///< dims to roll along; empty: the flattened tensor
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) {
    return Args{detail::to_dims(r.to_ints("shifts"), aten, "shifts"), detail::to_dims(r.to_ints("dims"), aten, "dims")};
  }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    const TensorMeta& x = in[0];
    if (a.shifts.size() != a.dims.size() && !(a.dims.empty() && a.shifts.size() == 1))
      throw ValueError("aten::roll: shifts and dimensions must align (shifts " + to_string(a.shifts) + ", dims " +
                       to_string(a.dims) + "; operands " + describe(in) + ")");
    for (int64_t d : a.dims) {
      if (x.dim() == 0)
        throw IndexError("aten::roll: dimension " + std::to_string(d) + " specified but the tensor has no dimensions");
      (void)wrap_dim(d, x.dim(), aten);
    }
    return TensorMeta{x.dtype, x.sizes, Device{}, true};
  }
  /// CPU kernel: two copies per rolled dim (one pass over contiguous memory for the flat form).
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    const int64_t n = out.numel();
    if (n == 0) return;
    if (a.dims.empty()) {
      const Tensor<T> src = in[0].contiguous();
      const int64_t s = detail::mod(a.shifts[0], n);
      std::copy(src.data_ptr(), src.data_ptr() + (n - s), out.data_ptr() + s);
      std::copy(src.data_ptr() + (n - s), src.data_ptr() + n, out.data_ptr());
      return;
    }
    Tensor<T> cur = in[0];
    for (int k = 0; k < a.dims.size(); ++k) {
      const int d = wrap_dim(a.dims[k], out.dim(), aten);
      const int64_t size = out.size(d), s = detail::mod(a.shifts[k], size);
      if (s == 0) continue;
      Tensor<T> next = Tensor<T>::empty(out.sizes());
      next.narrow(d, s, size - s).copy_(cur.narrow(d, 0, size - s));
      next.narrow(d, 0, s).copy_(cur.narrow(d, size - s, s));
      cur = next;
    }
    out.copy_(cur);
  }
  /// StableHLO: per dim, the last `s` elements then the first `size - s` (stablehlo.concatenate).
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    V x = in[0];
    if (numel(out) == 0) return x;
    auto roll1 = [&b](const V& v, int d, int64_t shift) {
      const int64_t size = v.dims[static_cast<size_t>(d)], s = detail::mod(shift, size);
      if (s == 0) return v;
      std::vector<int64_t> lo(v.dims.size(), 0), hi = v.dims;
      std::vector<int64_t> mid_lo = lo, mid_hi = hi;
      lo[static_cast<size_t>(d)] = size - s;
      mid_hi[static_cast<size_t>(d)] = size - s;
      return b.concatenate({b.slice(v, lo, hi), b.slice(v, mid_lo, mid_hi)}, d);
    };
    if (a.dims.empty()) return b.reshape(roll1(b.reshape(x, {numel(out)}), 0, a.shifts[0]), detail::vec(out));
    for (int k = 0; k < a.dims.size(); ++k) x = roll1(x, wrap_dim(a.dims[k], out.size(), aten), a.shifts[k]);
    return x;
  }
};

/// The lower (tril) or upper (triu) triangle of the last two dims; the other elements are 0.
///
/// **Shapes:** `self: [..., m, n]` → the same shape; batched over the leading dims.
/// `diagonal = k` keeps `j - i <= k` (tril) or `j - i >= k` (triu): 0 the main diagonal,
/// positive above it, negative below.
/// **Dtypes:** all eight (bool: false outside the triangle).
/// **Errors:** ShapeError for fewer than 2 dims (naming the op and the operand).
/// **Source:** torch.tril, torch.triu. **Lowering:** two stablehlo.iota, compare, select.
template <bool Upper>
struct TriangleOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = Upper ? "triu" : "tril", aten = Upper ? "aten::triu" : "aten::tril";
  static constexpr std::string_view schema = Upper ? "aten::triu(Tensor self, int diagonal=0) -> Tensor"
                                                   : "aten::tril(Tensor self, int diagonal=0) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::all();
  /// Non-tensor arguments.
  struct Args {
    int64_t diagonal = 0;  ///< which diagonal bounds the triangle (0: the main one)
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return Args{r.to_int("diagonal")}; }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args&) {
    if (in[0].dim() < 2)
      throw ShapeError(std::string(aten) + ": input tensor must have at least 2 dimensions (operands " + describe(in) + ")");
    return TensorMeta{in[0].dtype, in[0].sizes, Device{}, true};
  }
  /// `diagonal` clamped to where it still changes anything (no overflow in `i + k`).
  static int64_t clamped(int64_t k, int64_t m, int64_t n) { return std::clamp<int64_t>(k, -m - 1, n + 1); }
  /// CPU kernel: a copy, then the other triangle of each matrix zeroed row by row.
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    if (out.numel() == 0) return;
    out.copy_(in[0]);
    const int64_t m = out.size(-2), n = out.size(-1), k = clamped(a.diagonal, m, n);
    const int64_t batch = out.numel() / (m * n);
    T* p = out.data_ptr();
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t i = 0; i < m; ++i) {
        T* row = p + (b * m + i) * n;
        const int64_t lo = Upper ? 0 : std::clamp<int64_t>(i + k + 1, 0, n);
        const int64_t hi = Upper ? std::clamp<int64_t>(i + k, 0, n) : n;
        for (int64_t j = lo; j < hi; ++j) row[j] = convert<T>(0);
      }
  }
  /// StableHLO: `select(col - row <= k, x, 0)` (>= for triu), the mask broadcast over the batch.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    const V& x = in[0];
    const int r = out.size();
    const int64_t m = out[r - 2], n = out[r - 1];
    const V row = b.iota(ScalarType::Int64, {m, n}, 0), col = b.iota(ScalarType::Int64, {m, n}, 1);
    const V k = b.constant_int(clamped(a.diagonal, m, n), ScalarType::Int64, {m, n});
    const V mask = b.compare(Upper ? "GE" : "LE", b.subtract(col, row), k);
    const V full = b.broadcast_in_dim(mask, detail::vec(out), {r - 2, r - 1});
    return b.select(full, x, b.constant_int(0, x.dtype, detail::vec(out)));
  }
};
/// torch.tril.
using TrilOp = TriangleOp<false>;
/// torch.triu.
using TriuOp = TriangleOp<true>;

/// `self` repeated along each dim (torch.Tensor.repeat; numpy.tile with the count given for
/// every dim).
///
/// **Shapes:** `self: [s_1, ..., s_r]`, `repeats: [q_1, ..., q_p]` with `p >= r` → `[q_1 ·
/// t_1, ..., q_p · t_p]` where `t` is `self`'s shape with `p - r` leading 1s. A count of 0
/// gives a size-0 dim.
/// **Dtypes:** all eight.
/// **Errors:** ShapeError for fewer counts than dims; ValueError for a negative count (naming
/// the op, the counts and the operand).
/// **Source:** torch.Tensor.repeat (aten/src/ATen/native/TensorShape.cpp). **Lowering:** per
/// dim, stablehlo.broadcast_in_dim onto a new axis and a reshape that merges it.
struct RepeatOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "repeat", aten = "aten::repeat";
  static constexpr std::string_view schema = "aten::repeat(Tensor self, SymInt[] repeats) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::all();
  /// Non-tensor arguments.
  struct Args {
    Dims repeats;  ///< the count per dim of the result
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return Args{detail::to_dims(r.to_ints("repeats"), aten, "repeats")}; }
  /// `self`'s shape with leading 1s up to the rank of `repeats`.
  static Dims padded(const Dims& s, int rank) {
    Dims p = Dims::filled(rank, 1);
    for (int i = 0; i < s.size(); ++i) p[rank - s.size() + i] = s[i];
    return p;
  }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    const TensorMeta& x = in[0];
    if (a.repeats.size() < x.dim())
      throw ShapeError("aten::repeat: the number of repeats " + to_string(a.repeats) +
                       " can not be smaller than the number of dimensions of the tensor (operands " + describe(in) + ")");
    Dims out = padded(x.sizes, a.repeats.size());
    for (int i = 0; i < out.size(); ++i) {
      if (a.repeats[i] < 0)
        throw ValueError("aten::repeat: negative repeat count in " + to_string(a.repeats) + " (operands " + describe(in) + ")");
      out[i] *= a.repeats[i];
    }
    (void)numel(out);  // throws ShapeError when the count overflows
    return TensorMeta{x.dtype, out, Device{}, true};
  }
  /// CPU kernel: `self` copied into the first block, then each dim's block copied `q - 1` times.
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    if (out.numel() == 0) return;
    const int r = out.dim();
    const Dims t = padded(in[0].sizes(), r);
    Tensor<T> block = out;
    for (int d = 0; d < r; ++d) block = block.narrow(d, 0, t[d]);
    block.copy_(in[0].reshape(t));
    for (int d = 0; d < r; ++d) {
      Tensor<T> first = out;  // dims before d: already repeated; d and after: the first block
      for (int e = d + 1; e < r; ++e) first = first.narrow(e, 0, t[e]);
      for (int64_t j = 1; j < a.repeats[d]; ++j) first.narrow(d, j * t[d], t[d]).copy_(first.narrow(d, 0, t[d]));
    }
  }
  /// StableHLO: each dim `d` as `[..., q, t_d, ...]` (broadcast) reshaped to `[..., q·t_d, ...]`.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    V x = b.reshape(in[0], detail::vec(padded(Dims(std::span<const int64_t>(in[0].dims)), out.size())));
    for (int d = 0; d < out.size(); ++d) {
      const int64_t q = a.repeats[d];
      if (q == 1) continue;
      std::vector<int64_t> wide = x.dims, bdims;
      wide.insert(wide.begin() + d, q);
      for (int e = 0; e < static_cast<int>(x.dims.size()); ++e) bdims.push_back(e < d ? e : e + 1);
      std::vector<int64_t> merged = x.dims;
      merged[static_cast<size_t>(d)] *= q;
      x = b.reshape(b.broadcast_in_dim(x, wide, bdims), merged);
    }
    return x;
  }
};

/// A new tensor with the elements in reverse order along each of `dims` (torch.flip; the
/// `Tensor::flip` method is the view form).
///
/// **Shapes:** `self: [...]` → the same shape. **Dtypes:** all eight.
/// **Errors:** IndexError for a dim out of range; ShapeError for a repeated dim (naming the op,
/// the dims and the operand).
/// **Source:** torch.flip. **Lowering:** stablehlo.reverse.
struct FlipOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "flip", aten = "aten::flip";
  static constexpr std::string_view schema = "aten::flip(Tensor self, int[] dims) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::all();
  /// Non-tensor arguments.
  struct Args {
    Dims dims;  ///< the dims to reverse
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return Args{detail::to_dims(r.to_ints("dims"), aten, "dims")}; }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    bool seen[max_rank] = {};
    for (int64_t d0 : a.dims) {
      const int d = wrap_dim(d0, in[0].dim(), aten);
      if (in[0].dim() == 0) continue;
      if (seen[d])
        throw ShapeError("aten::flip: dim " + std::to_string(d) + " appears multiple times in the list of dims " +
                         to_string(a.dims) + " (operands " + describe(in) + ")");
      seen[d] = true;
    }
    return TensorMeta{in[0].dtype, in[0].sizes, Device{}, true};
  }
  /// CPU kernel: a copy of the flipped view.
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    out.copy_(in[0].flip(a.dims));
  }
  /// StableHLO: one stablehlo.reverse over the dims of size > 1.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    std::vector<int64_t> dims;
    for (int64_t d0 : a.dims) {
      if (out.size() == 0) break;
      const int d = wrap_dim(d0, out.size(), aten);
      if (out[d] > 1) dims.push_back(d);
    }
    return dims.empty() ? in[0] : b.reverse(in[0], dims);
  }
};

/// A diagonal matrix from a vector, or a diagonal of a matrix as a vector (torch.diag).
///
/// **Shapes:** `self: [n]` → `[n + |k|, n + |k|]` with `self` on diagonal `k` (0 the main one,
/// positive above) and 0 elsewhere; `self: [m, n]` → `[L]`, the elements `(i, i + k)` (k ≥ 0)
/// or `(i - k, i)` (k < 0), `L = max(0, min(m, n - k))` resp. `max(0, min(m + k, n))`
/// (torch 1.13 fails on a diagonal wholly outside; torch 2 returns `[0]`, as here).
/// **Dtypes:** all eight.
/// **Errors:** ShapeError for another rank (naming the op and the operand).
/// **Source:** torch.diag. **Lowering:** 1-D: stablehlo.pad with interior padding, reshaped;
/// 2-D: a strided stablehlo.slice of the flattened matrix.
struct DiagOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "diag", aten = "aten::diag";
  static constexpr std::string_view schema = "aten::diag(Tensor self, int diagonal=0) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::all();
  /// Non-tensor arguments.
  struct Args {
    int64_t diagonal = 0;  ///< which diagonal (0: main, > 0 above, < 0 below)
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return Args{r.to_int("diagonal")}; }
  /// The length of diagonal `k` of an `m x n` matrix.
  static int64_t length(int64_t m, int64_t n, int64_t k) {
    return k >= 0 ? std::max<int64_t>(0, std::min(m, n - std::min(k, n))) : std::max<int64_t>(0, std::min(m + std::max(k, -m), n));
  }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    const TensorMeta& x = in[0];
    if (x.dim() == 1) {
      const int64_t n = x.sizes[0];
      if (a.diagonal > (int64_t{1} << 31) || a.diagonal < -(int64_t{1} << 31))
        throw ShapeError("aten::diag: diagonal " + std::to_string(a.diagonal) + " makes the result too large (operands " +
                         describe(in) + ")");
      const int64_t m = n + (a.diagonal < 0 ? -a.diagonal : a.diagonal);
      const Dims out{m, m};
      (void)numel(out);
      return TensorMeta{x.dtype, out, Device{}, true};
    }
    if (x.dim() == 2) return TensorMeta{x.dtype, Dims{length(x.sizes[0], x.sizes[1], a.diagonal)}, Device{}, true};
    throw ShapeError("aten::diag: matrix or a vector expected (operands " + describe(in) + ")");
  }
  /// CPU kernel: element by element along the diagonal (zeros first for the 1-D form).
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    const Tensor<T>& x = in[0];
    const int64_t k = a.diagonal;
    if (x.dim() == 1) {
      T* p = out.data_ptr();
      const int64_t m = out.size(0), n = x.size(0), s = x.stride(0);
      for (int64_t i = 0; i < m * m; ++i) p[i] = convert<T>(0);
      const int64_t r0 = k >= 0 ? 0 : -k, c0 = k >= 0 ? k : 0;
      for (int64_t i = 0; i < n; ++i) p[(r0 + i) * m + c0 + i] = x.data_ptr()[i * s];
      return;
    }
    const int64_t len = out.size(0);
    const int64_t r0 = k >= 0 ? 0 : -k, c0 = k >= 0 ? k : 0;
    for (int64_t i = 0; i < len; ++i) out.data_ptr()[i] = x.data_ptr()[(r0 + i) * x.stride(0) + (c0 + i) * x.stride(1)];
  }
  /// StableHLO: see the struct's docstring.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    const V& x = in[0];
    const int64_t k = a.diagonal;
    if (x.dims.size() == 1) {
      const int64_t n = x.dims[0], m = out[0];
      if (n == 0) return b.constant_int(0, x.dtype, {m, m});
      const int64_t low = k >= 0 ? k : -k * m;       // flat position of the first element
      const int64_t high = m * m - (low + n + (n - 1) * m);
      const V flat = b.pad(x, b.constant_int(0, x.dtype), {low}, {high}, {m});
      return b.reshape(flat, {m, m});
    }
    const int64_t rows = x.dims[0], cols = x.dims[1], len = out[0];
    if (len == 0) return b.constant_int(0, x.dtype, {0});
    const int64_t start = k >= 0 ? k : -k * cols;
    const V flat = b.reshape(x, {rows * cols});
    return b.slice(flat, {start}, {start + (len - 1) * (cols + 1) + 1}, {cols + 1});
  }
};

/// How `pad` fills the new elements (torch.nn.functional.pad's `mode`).
enum class PadMode : uint8_t {
  Constant,   ///< `value` (negative pads crop)
  Reflect,    ///< the mirror image without the edge: `[2, 1 | 0, 1, 2 | 1, 0]`
  Replicate,  ///< the edge repeated: `[0, 0 | 0, 1, 2 | 2, 2]`
  Circular,   ///< wrapped around: `[1, 2 | 0, 1, 2 | 0, 1]`
};

/// Padding of the last dims (torch.nn.functional.pad, `aten::pad`); ops::ConstantPadNdOp is
/// the traced form of the constant mode and shares this definition.
///
/// **Shapes:** `self: [..., s_1, ..., s_k]`, `pad = [lo_k, hi_k, lo_{k-1}, hi_{k-1}, ...]`
/// (pairs from the last dim backwards, `k = len(pad) / 2`) → the same shape with `s_i + lo_i +
/// hi_i` in place of `s_i`. Negative pads crop. `constant`: any `k <= rank`. `reflect`,
/// `replicate`, `circular`: `k` in 1..3 and rank `k + 1` or `k + 2` (unbatched or batched).
/// **Dtypes:** `constant` and `circular`: all eight. `reflect` and `replicate`: floating
/// (torch 1.13's cpu kernels take float32/float64, and float16/bfloat16 for 3-d reflect; here
/// all four). The result has `self`'s dtype; `value` is converted to it as torch's fill_
/// (truncated toward zero for integers, `!= 0` for bool).
/// **Errors:** ValueError for an odd or too long `pad`, an unknown mode, a `value` with a
/// non-constant mode, or a `value` out of an integer dtype's range (torch's "cannot be
/// converted ... without overflow"); ShapeError for a negative (constant, circular) or empty
/// (reflect, replicate) result size, a reflect pad not less than its dim, a circular pad
/// larger than what the negative pads leave of its dim (wrapping more than once), a rank the non-constant modes do not take,
/// or an empty padded dim for reflect/replicate; TypeError for an integer or bool `self` with
/// reflect/replicate. Every message names the op, `pad` and the operand.
/// **Source:** torch.nn.functional.pad / at::pad (aten/src/ATen/native/PadNd.cpp: the mode
/// dispatch, constant_pad_nd, reflection_pad{1,2,3}d, replication_pad{1,2,3}d, _pad_circular).
/// Circular pads of an unbatched input follow torch 2 (torch 1.13 wants a batch dim); they wrap
/// around what the negative pads leave, as torch's _pad_circular.
/// **Lowering:** constant: one stablehlo.pad (negative low/high crop). Other modes, per dim:
/// the border slices (stablehlo.reverse for reflect, broadcast_in_dim of the edge for
/// replicate) concatenated around the operand, then a slice for the negative pads.
struct PadOp {
  ///@{
  /// Names and schema (torch 2.x `aten::pad`).
  static constexpr std::string_view name = "pad", aten = "aten::pad";
  static constexpr std::string_view schema =
      "aten::pad(Tensor self, SymInt[] pad, str mode=\"constant\", float? value=None) -> Tensor";
  ///@}
  /// The dtypes libtorch allows (the constant mode's; infer narrows the others).
  static constexpr DtypeSet dtypes = DtypeSet::all();
  /// Non-tensor arguments.
  struct Args {
    int64_t pad[2 * max_rank] = {};  ///< `[lo, hi]` pairs from the last dim backwards
    int npad = 0;                    ///< how many values of `pad` are used
    PadMode mode = PadMode::Constant;  ///< constant, reflect, replicate or circular
    bool has_value = false;  ///< false: `value` is None (0 for constant)
    double value = 0;        ///< the constant mode's fill value
  };
  /// `Args` from a pad list. **Errors:** ValueError naming `op` for more than 16 values.
  static Args make(const std::vector<int64_t>& pad, PadMode mode, bool has_value, double value, std::string_view op) {
    if (pad.size() > static_cast<size_t>(2 * max_rank))
      throw ValueError(std::string(op) + ": at most " + std::to_string(2 * max_rank) + " values in 'pad', got " +
                       std::to_string(pad.size()));
    Args a;
    for (size_t i = 0; i < pad.size(); ++i) a.pad[i] = pad[i];
    a.npad = static_cast<int>(pad.size());
    a.mode = mode;
    a.has_value = has_value;
    a.value = value;
    return a;
  }
  /// The mode named `s`. **Errors:** ValueError for another name.
  static PadMode mode_of(std::string_view s) {
    if (s == "constant") return PadMode::Constant;
    if (s == "reflect") return PadMode::Reflect;
    if (s == "replicate") return PadMode::Replicate;
    if (s == "circular") return PadMode::Circular;
    throw ValueError("aten::pad: unrecognised padding mode '" + std::string(s) +
                     "' (expected constant, reflect, replicate or circular)");
  }
  /// The name of mode `m`.
  static constexpr std::string_view mode_name(PadMode m) {
    constexpr std::string_view n[] = {"constant", "reflect", "replicate", "circular"};
    return n[static_cast<int>(m)];
  }
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) {
    const bool none = r.is_none("value");
    return make(r.to_ints("pad"), mode_of(r.str("mode")), !none, none ? 0.0 : r.to_double("value"), aten);
  }
  /// `pad` as text (`[1, 2]`).
  static std::string pad_str(const Args& a) {
    std::string s = "[";
    for (int i = 0; i < a.npad; ++i) s += (i ? ", " : "") + std::to_string(a.pad[i]);
    return s + "]";
  }
  /// Low and high pad of dim `d` of a rank-`rank` tensor (0, 0 for dims not padded).
  static std::pair<int64_t, int64_t> pads(const Args& a, int d, int rank) {
    const int k = rank - 1 - d;  // pair index from the end
    if (k < 0 || 2 * k + 1 >= a.npad) return {0, 0};
    return {a.pad[2 * k], a.pad[2 * k + 1]};
  }
  /// The fill value of the constant mode as dtype `t` holds it (as a double).
  static double fill(const Args& a, ScalarType t) {
    return AnyTensor::dispatch(t, [&]<class T>(std::type_identity<T>) { return convert<double>(convert<T>(a.value)); });
  }
  /// Dtype and shape rule (`op`: the aten name errors give).
  static TensorMeta infer_as(std::span<const TensorMeta> in, const Args& a, std::string_view op) {
    const TensorMeta& x = in[0];
    auto where = [&] { return std::string(" (pad " + pad_str(a) + ", mode " + std::string(mode_name(a.mode)) + "; operands " +
                              describe(in) + ")"); };  // built only for an error
    const std::string o(op);
    if (a.npad % 2) throw ValueError(o + ": padding length must be divisible by 2" + where());
    if (a.npad / 2 > x.dim())
      throw ValueError(o + ": padding length should be less than or equal to two times the input dimension" + where());
    const int k = a.npad / 2;
    if (a.mode == PadMode::Constant) {
      if (a.has_value && !is_floating(x.dtype) && x.dtype != ScalarType::Bool) {
        const double lo = x.dtype == ScalarType::UInt8 ? 0.0 : x.dtype == ScalarType::Int32 ? -2147483648.0 : -9.3e18;
        const double hi = x.dtype == ScalarType::UInt8 ? 255.0 : x.dtype == ScalarType::Int32 ? 2147483647.0 : 9.3e18;
        if (!(a.value >= lo && a.value <= hi))  // NaN too
          throw ValueError(o + ": value " + std::to_string(a.value) + " cannot be converted to type " +
                           std::string(dtype_name(x.dtype)) + " without overflow" + where());
      }
    } else {
      if (a.has_value && a.value != 0)
        throw ValueError(o + ": padding mode \"" + std::string(mode_name(a.mode)) + "\" doesn't take in value argument" + where());
      if (k < 1 || k > 3 || (x.dim() != k + 1 && x.dim() != k + 2))
        throw ShapeError(o + ": only 2-D to 5-D inputs with 1 to 3 padded dims (rank = padded dims + 1 or + 2) are "
                             "supported for non-constant padding" + where());
      if ((a.mode == PadMode::Reflect || a.mode == PadMode::Replicate) && !is_floating(x.dtype))
        throw TypeError(o + ": padding mode \"" + std::string(mode_name(a.mode)) + "\" is not implemented for " +
                        std::string(dtype_name(x.dtype)) + where());
    }
    Dims out = x.sizes;
    for (int d = x.dim() - k; d < x.dim(); ++d) {
      const auto [lo, hi] = pads(a, d, x.dim());
      const int64_t n = x.sizes[d], m = n + lo + hi;
      const std::string dim = " at dimension " + std::to_string(d);
      switch (a.mode) {
        case PadMode::Constant:
          if (m < 0) throw ShapeError(o + ": the input size " + std::to_string(n) + " plus the padding resulted in a negative output size" + dim + where());
          break;
        case PadMode::Reflect:
        case PadMode::Replicate:
          if (n == 0) throw ShapeError(o + ": padded dims must be non-empty" + dim + where());
          if (a.mode == PadMode::Reflect && (lo >= n || hi >= n))
            throw ShapeError(o + ": padding size should be less than the corresponding input dimension" + dim + where());
          if (m < 1) throw ShapeError(o + ": the input is too small: the output size would be " + std::to_string(m) + dim + where());
          break;
        case PadMode::Circular:
          // what the negative pads leave is what wraps around (at most once)
          if (const int64_t kept = n + std::min<int64_t>(lo, 0) + std::min<int64_t>(hi, 0); lo > kept || hi > kept || kept < 0)
            throw ShapeError(o + ": padding value causes wrapping around more than once" + dim + where());
          if (m < 0) throw ShapeError(o + ": negative output size " + std::to_string(m) + dim + where());
          break;
      }
      out[d] = m;
    }
    (void)numel(out);
    return TensorMeta{x.dtype, out, Device{}, true};
  }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) { return infer_as(in, a, aten); }

  /// The source index along a padded dim of size `n` for output index `o` (-1: the fill value).
  /// Circular pads wrap around the operand after its negative pads cropped it (as torch).
  static int64_t source(PadMode m, int64_t o, int64_t lo, int64_t hi, int64_t n) {
    const int64_t j = o - lo;
    if (m == PadMode::Circular) {
      const int64_t start = std::max<int64_t>(-lo, 0), kept = n + std::min<int64_t>(lo, 0) + std::min<int64_t>(hi, 0);
      return start + detail::mod(o - std::max<int64_t>(lo, 0), kept);
    }
    switch (m) {
      case PadMode::Constant: return j >= 0 && j < n ? j : -1;
      case PadMode::Reflect: return j < 0 ? -j : j >= n ? 2 * (n - 1) - j : j;
      case PadMode::Replicate: return std::clamp<int64_t>(j, 0, n - 1);
      case PadMode::Circular: break;
    }
    return -1;
  }
  /// CPU kernel: every output element read from its source (a per-dim index map) or filled.
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    const int64_t total = out.numel();
    if (total == 0) return;
    const Tensor<T>& x = in[0];
    const int r = out.dim();
    std::vector<std::vector<int64_t>> map(static_cast<size_t>(r));
    for (int d = 0; d < r; ++d) {
      const auto [lo, hi] = pads(a, d, r);
      for (int64_t o = 0; o < out.size(d); ++o) map[static_cast<size_t>(d)].push_back(source(a.mode, o, lo, hi, x.size(d)));
    }
    const T v = convert<T>(a.value);
    const T* src = x.data_ptr();
    T* dst = out.data_ptr();
    int64_t idx[max_rank] = {};
    for (int64_t i = 0; i < total; ++i) {
      int64_t off = 0;
      bool hit = true;
      for (int d = 0; d < r && hit; ++d) {
        const int64_t s = map[static_cast<size_t>(d)][static_cast<size_t>(idx[d])];
        hit = s >= 0;
        off += s * x.stride(d);
      }
      dst[i] = hit ? src[off] : v;
      for (int d = r - 1; d >= 0 && ++idx[d] == out.size(d); --d) idx[d] = 0;
    }
  }
  /// StableHLO: see the struct's docstring.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    V x = in[0];
    const int r = out.size();
    if (numel(out) == 0) return b.constant_int(0, x.dtype, detail::vec(out));
    if (a.mode == PadMode::Constant) {
      std::vector<int64_t> lo(static_cast<size_t>(r)), hi(static_cast<size_t>(r));
      for (int d = 0; d < r; ++d) std::tie(lo[static_cast<size_t>(d)], hi[static_cast<size_t>(d)]) = pads(a, d, r);
      const V v = is_floating(x.dtype) || x.dtype == ScalarType::Bool
                      ? b.constant(fill(a, x.dtype), x.dtype)
                      : b.constant_int(AnyTensor::dispatch(x.dtype, [&]<class T>(std::type_identity<T>) {
                          return static_cast<int64_t>(convert<T>(a.value));
                        }), x.dtype);
      return b.pad(x, v, lo, hi);
    }
    for (int d = 0; d < r; ++d) {
      const auto [lo, hi] = pads(a, d, r);
      if (lo == 0 && hi == 0) continue;
      auto crop = [&](const V& v, int64_t l, int64_t h) {  // negative pads l, h cut off along d
        const int64_t len = v.dims[static_cast<size_t>(d)];
        std::vector<int64_t> st(v.dims.size(), 0), lim = v.dims;
        st[static_cast<size_t>(d)] = l < 0 ? -l : 0;
        lim[static_cast<size_t>(d)] = h < 0 ? len + h : len;
        return b.slice(v, st, lim);
      };
      if (a.mode == PadMode::Circular && (lo < 0 || hi < 0)) x = crop(x, lo, hi);
      const int64_t n = x.dims[static_cast<size_t>(d)];
      auto part = [&](int64_t s, int64_t e) {  // x[s:e] along d
        std::vector<int64_t> st(x.dims.size(), 0), lim = x.dims;
        st[static_cast<size_t>(d)] = s;
        lim[static_cast<size_t>(d)] = e;
        return b.slice(x, st, lim);
      };
      auto edge = [&](int64_t at, int64_t count) {  // x[at] repeated count times along d
        std::vector<int64_t> dims = x.dims, ids;
        dims[static_cast<size_t>(d)] = count;
        for (size_t e = 0; e < x.dims.size(); ++e) ids.push_back(static_cast<int64_t>(e));
        return b.broadcast_in_dim(part(at, at + 1), dims, ids);
      };
      std::vector<V> parts;
      if (lo > 0) {
        if (a.mode == PadMode::Reflect) parts.push_back(b.reverse(part(1, lo + 1), {d}));
        else if (a.mode == PadMode::Replicate) parts.push_back(edge(0, lo));
        else parts.push_back(part(n - lo, n));
      }
      parts.push_back(x);
      if (hi > 0) {
        if (a.mode == PadMode::Reflect) parts.push_back(b.reverse(part(n - 1 - hi, n - 1), {d}));
        else if (a.mode == PadMode::Replicate) parts.push_back(edge(n - 1, hi));
        else parts.push_back(part(0, hi));
      }
      if (parts.size() > 1) x = b.concatenate(parts, d);
      if (a.mode != PadMode::Circular && (lo < 0 || hi < 0)) x = crop(x, lo, hi);
    }
    return x;
  }
};

/// Constant padding as torch 1.13 traces `F.pad(x, pad)` (`aten::constant_pad_nd`): ops::PadOp
/// in its constant mode, with a Scalar `value` (0 by default). Shapes, dtypes, errors and
/// lowering are PadOp's (errors name `aten::constant_pad_nd`).
/// **Source:** torch.constant_pad_nd (aten/src/ATen/native/PadNd.cpp).
struct ConstantPadNdOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "constant_pad_nd", aten = "aten::constant_pad_nd";
  static constexpr std::string_view schema = "aten::constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::all();
  /// PadOp's arguments (the mode is always constant).
  using Args = PadOp::Args;
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return PadOp::make(r.to_ints("pad"), PadMode::Constant, true, r.to_double("value"), aten); }
  /// Dtype and shape rule: PadOp's.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) { return PadOp::infer_as(in, a, aten); }
  /// CPU kernel: PadOp's.
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) { PadOp::cpu<T>(in, a, out); }
  /// StableHLO: PadOp's.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) { return PadOp::lower<B, V>(b, in, a, out); }
};

// Each op's entry point, compiled once in TORCHTPU_SEPARATE_OPS programs (ops/library.hpp).
TORCHTPU_LIBRARY_OP(CatOp);
TORCHTPU_LIBRARY_OP(StackOp);
TORCHTPU_LIBRARY_OP(RollOp);
TORCHTPU_LIBRARY_OP(TrilOp);
TORCHTPU_LIBRARY_OP(TriuOp);
TORCHTPU_LIBRARY_OP(RepeatOp);
TORCHTPU_LIBRARY_OP(FlipOp);
TORCHTPU_LIBRARY_OP(DiagOp);
TORCHTPU_LIBRARY_OP(PadOp);
TORCHTPU_LIBRARY_OP(ConstantPadNdOp);

}  // namespace ops

/// Concatenates `tensors` along `dim` (torch.cat); see ops::CatOp for shapes, dtypes and errors.
/// Typed form: every operand has element type `T`; the result is a new `Tensor<T>` on their
/// device. **Example:** `Tensor<float> c = cat({a, b}, 1);`
template <element T>
Tensor<T> cat(const std::vector<Tensor<T>>& tensors, int64_t dim = 0) {
  return ops::call_typed<ops::CatOp, T>(std::span<const Tensor<T>>(tensors), {dim});
}
/// `cat` of a braced list of tensors of one element type.
template <element T, int Rank>
Tensor<T> cat(std::initializer_list<Tensor<T, Rank>> tensors, int64_t dim = 0) {
  return cat(std::vector<Tensor<T>>(tensors.begin(), tensors.end()), dim);
}
/// Run-time typed `cat`: operands of any dtypes (promoted as torch.result_type).
template <std::same_as<AnyTensor> A>
A cat(const std::vector<A>& tensors, int64_t dim = 0) {
  return ops::call<ops::CatOp>(std::span<const AnyTensor>(tensors), {dim});
}

/// Stacks `tensors` (one shape) along a new dim `dim` (torch.stack); see ops::StackOp.
/// **Example:** `Tensor<float> s = stack({a, b}, 0);`
template <element T>
Tensor<T> stack(const std::vector<Tensor<T>>& tensors, int64_t dim = 0) {
  return ops::call_typed<ops::StackOp, T>(std::span<const Tensor<T>>(tensors), {dim});
}
/// `stack` of a braced list of tensors of one element type.
template <element T, int Rank>
Tensor<T> stack(std::initializer_list<Tensor<T, Rank>> tensors, int64_t dim = 0) {
  return stack(std::vector<Tensor<T>>(tensors.begin(), tensors.end()), dim);
}
/// Run-time typed `stack`: operands of any dtypes (promoted).
template <std::same_as<AnyTensor> A>
A stack(const std::vector<A>& tensors, int64_t dim = 0) {
  return ops::call<ops::StackOp>(std::span<const AnyTensor>(tensors), {dim});
}

namespace ops::detail {
/// `Op` on the one operand `x` (typed: the result has `x`'s element type).
template <class Op, element T, int Rank>
Tensor<T> call1(const Tensor<T, Rank>& x, const typename Op::Args& a) {
  const Tensor<T> t(x);
  return call_typed<Op, T>(std::span<const Tensor<T>>(&t, 1), a);
}
/// `Op` on the one run-time typed operand `x`.
template <class Op>
AnyTensor call1(const AnyTensor& x, const typename Op::Args& a) {
  return call<Op>(std::span<const AnyTensor>(&x, 1), a);
}
}  // namespace ops::detail

/// `x` rolled by `shifts[k]` along `dims[k]`, or flattened and rolled by `shifts[0]` when
/// `dims` is empty (torch.roll); see ops::RollOp. **Example:** `roll(x, {1, -1}, {0, 1})`.
template <element T, int Rank>
Tensor<T> roll(const Tensor<T, Rank>& x, const Dims& shifts, const Dims& dims = {}) {
  return ops::detail::call1<ops::RollOp>(x, {shifts, dims});
}
/// `roll` of the flattened `x` by `shift` (shape kept).
template <element T, int Rank>
Tensor<T> roll(const Tensor<T, Rank>& x, int64_t shift) { return roll(x, Dims{shift}); }
/// `roll` along one dim.
template <element T, int Rank>
Tensor<T> roll(const Tensor<T, Rank>& x, int64_t shift, int64_t dim) { return roll(x, Dims{shift}, Dims{dim}); }
/// Run-time typed `roll`.
template <std::same_as<AnyTensor> A>
A roll(const A& x, const Dims& shifts, const Dims& dims = {}) {
  return ops::detail::call1<ops::RollOp>(x, {shifts, dims});
}

/// The lower triangle of the last two dims of `x`, diagonal `diagonal` included (torch.tril);
/// see ops::TriangleOp.
template <element T, int Rank>
Tensor<T> tril(const Tensor<T, Rank>& x, int64_t diagonal = 0) { return ops::detail::call1<ops::TrilOp>(x, {diagonal}); }
/// Run-time typed `tril`.
template <std::same_as<AnyTensor> A>
A tril(const A& x, int64_t diagonal = 0) { return ops::detail::call1<ops::TrilOp>(x, {diagonal}); }
/// The upper triangle of the last two dims of `x` (torch.triu); see ops::TriangleOp.
template <element T, int Rank>
Tensor<T> triu(const Tensor<T, Rank>& x, int64_t diagonal = 0) { return ops::detail::call1<ops::TriuOp>(x, {diagonal}); }
/// Run-time typed `triu`.
template <std::same_as<AnyTensor> A>
A triu(const A& x, int64_t diagonal = 0) { return ops::detail::call1<ops::TriuOp>(x, {diagonal}); }

/// `x` repeated `repeats[i]` times along dim `i` (torch.Tensor.repeat); see ops::RepeatOp.
/// **Example:** `repeat(x, {2, 1})`.
template <element T, int Rank>
Tensor<T> repeat(const Tensor<T, Rank>& x, const Dims& repeats) { return ops::detail::call1<ops::RepeatOp>(x, {repeats}); }
/// Run-time typed `repeat`.
template <std::same_as<AnyTensor> A>
A repeat(const A& x, const Dims& repeats) { return ops::detail::call1<ops::RepeatOp>(x, {repeats}); }

/// numpy-style tiling (torch.tile): `repeat` after 1s are prepended to `reps` up to `x`'s rank.
/// Not a library op of its own: a function over ops::RepeatOp (torch.tile forwards to repeat
/// the same way). **Errors:** as ops::RepeatOp; ValueError for more than 8 counts.
template <element T, int Rank>
Tensor<T> tile(const Tensor<T, Rank>& x, const Dims& reps) {
  return repeat(x, ops::RepeatOp::padded(reps, std::max(reps.size(), x.dim())));
}
/// Run-time typed `tile`.
template <std::same_as<AnyTensor> A>
A tile(const A& x, const Dims& reps) {
  return repeat(x, ops::RepeatOp::padded(reps, std::max(reps.size(), x.dim())));
}

/// A new tensor: `x` reversed along each of `dims` (torch.flip); see ops::FlipOp. (The
/// `x.flip(dims)` method returns a view instead.)
template <element T, int Rank>
Tensor<T> flip(const Tensor<T, Rank>& x, const Dims& dims) { return ops::detail::call1<ops::FlipOp>(x, {dims}); }
/// Run-time typed `flip`.
template <std::same_as<AnyTensor> A>
A flip(const A& x, const Dims& dims) { return ops::detail::call1<ops::FlipOp>(x, {dims}); }

/// The diagonal matrix of vector `x`, or diagonal `diagonal` of matrix `x` (torch.diag); see
/// ops::DiagOp.
template <element T, int Rank>
Tensor<T> diag(const Tensor<T, Rank>& x, int64_t diagonal = 0) { return ops::detail::call1<ops::DiagOp>(x, {diagonal}); }
/// Run-time typed `diag`.
template <std::same_as<AnyTensor> A>
A diag(const A& x, int64_t diagonal = 0) { return ops::detail::call1<ops::DiagOp>(x, {diagonal}); }

/// `x` padded on its last `len(p) / 2` dims (torch.nn.functional.pad): `p = [lo_last, hi_last,
/// lo_second_last, ...]`, `mode` one of constant (fill `value`, 0 when absent; negative pads
/// crop), reflect, replicate, circular; see ops::PadOp for shapes, dtypes and errors.
/// **Example:** `pad(x, {1, 1, 0, 2}, "reflect")`.
template <element T, int Rank>
Tensor<T> pad(const Tensor<T, Rank>& x, const std::vector<int64_t>& p, std::string_view mode = "constant",
              std::optional<double> value = std::nullopt) {
  return ops::detail::call1<ops::PadOp>(x, ops::PadOp::make(p, ops::PadOp::mode_of(mode), value.has_value(),
                                                            value.value_or(0.0), ops::PadOp::aten));
}
/// Run-time typed `pad`.
template <std::same_as<AnyTensor> A>
A pad(const A& x, const std::vector<int64_t>& p, std::string_view mode = "constant", std::optional<double> value = std::nullopt) {
  return ops::detail::call1<ops::PadOp>(x, ops::PadOp::make(p, ops::PadOp::mode_of(mode), value.has_value(),
                                                            value.value_or(0.0), ops::PadOp::aten));
}
/// Constant padding with `value` (torch.constant_pad_nd; `pad` in its constant mode); see
/// ops::ConstantPadNdOp.
template <element T, int Rank>
Tensor<T> constant_pad_nd(const Tensor<T, Rank>& x, const std::vector<int64_t>& p, double value = 0) {
  return ops::detail::call1<ops::ConstantPadNdOp>(
      x, ops::PadOp::make(p, ops::PadMode::Constant, true, value, ops::ConstantPadNdOp::aten));
}
/// Run-time typed `constant_pad_nd`.
template <std::same_as<AnyTensor> A>
A constant_pad_nd(const A& x, const std::vector<int64_t>& p, double value = 0) {
  return ops::detail::call1<ops::ConstantPadNdOp>(
      x, ops::PadOp::make(p, ops::PadMode::Constant, true, value, ops::ConstantPadNdOp::aten));
}

namespace ops::detail {
/// `torchtpu::split`'s views appended to `out` (the model runtime writes them into the room
/// of its last list: no allocation per call).
template <class X>
void split_into(const X& x, int64_t split_size, int64_t dim, std::vector<X>& out) {
  const int d = wrap_dim(dim, x.dim(), "split");
  narrow_pieces_into(x, d, split_pieces(x.sizes()[d], split_size, "split", x.sizes()), out);
}
/// `torchtpu::chunk`'s views appended to `out`.
template <class X>
void chunk_into(const X& x, int64_t chunks, int64_t dim, std::vector<X>& out) {
  const int d = wrap_dim(dim, x.dim(), "chunk");
  narrow_pieces_into(x, d, chunk_pieces(x.sizes()[d], chunks, "chunk", x.sizes()), out);
}
}  // namespace ops::detail

/// `x` split into views along `dim` (torch.split with an int; torch.Tensor.split): pieces of
/// `split_size`, the last one smaller when it does not divide the dim. Views share `x`'s
/// storage (writes through them change `x`), on every device.
/// **Shapes:** `x: [..., n, ...]` → ceil(n / split_size) tensors `[..., split_size, ...]`; a
/// dim of size 0 gives one empty view.
/// **Dtypes:** all eight. **Errors:** IndexError for `dim` out of range; ValueError for
/// `split_size` < 1 on a non-empty dim (naming the op and `x`'s shape).
/// **Source:** torch.split (aten/src/ATen/native/TensorShape.cpp, split).
template <class X>
  requires std::same_as<X, AnyTensor> || requires(const X& x) { x.narrow(0, 0, 0); }
std::vector<X> split(const X& x, int64_t split_size, int64_t dim = 0) {
  std::vector<X> r;
  ops::detail::split_into(x, split_size, dim, r);
  return r;
}
/// `x` split into views of the given sizes along `dim` (torch.split with a list;
/// torch.split_with_sizes). **Errors:** IndexError for `dim` out of range; ValueError when a
/// size is negative or the sizes do not sum to the dim's size.
template <class X>
  requires std::same_as<X, AnyTensor> || requires(const X& x) { x.narrow(0, 0, 0); }
std::vector<X> split_with_sizes(const X& x, const std::vector<int64_t>& sizes, int64_t dim = 0) {
  const int d = wrap_dim(dim, x.dim(), "split_with_sizes");
  return ops::detail::narrow_pieces(x, d, ops::detail::split_with_sizes_pieces(x.sizes()[d], sizes, "split_with_sizes", x.sizes()));
}
/// `x` split into at most `chunks` views along `dim` (torch.chunk): pieces of
/// ceil(n / chunks), so fewer than `chunks` pieces when they do not divide evenly (torch.chunk's
/// rule; `chunk(x[5], 4)` gives sizes 2, 2, 1; a dim of size 0 gives `chunks` empty views). **Errors:** IndexError for `dim` out of range;
/// ValueError for `chunks` < 1.
template <class X>
  requires std::same_as<X, AnyTensor> || requires(const X& x) { x.narrow(0, 0, 0); }
std::vector<X> chunk(const X& x, int64_t chunks, int64_t dim = 0) {
  std::vector<X> r;
  ops::detail::chunk_into(x, chunks, dim, r);
  return r;
}
/// The views `x.select(dim, i)` for every `i` (torch.unbind): `n` tensors of `x`'s shape
/// without `dim`. **Errors:** IndexError for `dim` out of range or a 0-dim `x`.
template <class X>
  requires std::same_as<X, AnyTensor> || requires(const X& x) { x.narrow(0, 0, 0); }
std::vector<X> unbind(const X& x, int64_t dim = 0) {
  if (x.dim() == 0) throw IndexError("unbind: a 0-dim tensor has no dim to unbind");
  const int d = wrap_dim(dim, x.dim(), "unbind");
  std::vector<X> r;
  for (int64_t i = 0; i < x.sizes()[d]; ++i) {
    if constexpr (std::is_same_v<X, AnyTensor>) r.push_back(x.visit([&](const auto& t) { return AnyTensor(t.select(d, i)); }));
    else r.push_back(x.select(d, i));
  }
  return r;
}
/// Coordinate grids of 0-dim or 1-D tensors (torch.meshgrid): with sizes `n_1, ..., n_k`,
/// result `i` is `xs[i]` expanded to `[n_1, ..., n_k]` (`indexing` "ij") or with the first
/// two dims swapped (`"xy"`, Cartesian: `[n_2, n_1, n_3, ...]`). Results are expanded views
/// (stride 0) of the inputs, as torch's. **Dtypes:** all eight; all inputs one dtype and one
/// device. **Errors:** ValueError for no inputs, an input of rank > 1, mixed dtypes or
/// devices, or another `indexing` (naming the op and the shapes).
/// **Source:** torch.meshgrid (aten/src/ATen/native/TensorShape.cpp, meshgrid).
template <class X>
  requires std::same_as<X, AnyTensor> || requires(const X& x) { x.narrow(0, 0, 0); }
std::vector<X> meshgrid(const std::vector<X>& xs, std::string_view indexing = "ij") {
  if (xs.empty()) throw ValueError("meshgrid: expects a non-empty list of tensors");
  if (indexing != "ij" && indexing != "xy")
    throw ValueError("meshgrid: indexing must be 'ij' or 'xy', got '" + std::string(indexing) + "'");
  std::string shapes;
  for (const X& x : xs) shapes += (shapes.empty() ? "" : ", ") + to_string(x.sizes());
  Dims grid;
  for (const X& x : xs) {
    if (x.dim() > 1) throw ValueError("meshgrid: expects 0-dim or 1-D tensors (shapes " + shapes + ")");
    if constexpr (std::is_same_v<X, AnyTensor>)
      if (x.dtype() != xs[0].dtype())
        throw ValueError("meshgrid: expects all tensors to have the same dtype (shapes " + shapes + ")");
    if (x.device() != xs[0].device()) throw ValueError("meshgrid: expects all tensors on the same device (shapes " + shapes + ")");
    grid.push_back(x.numel());
  }
  const bool swap = indexing == "xy" && xs.size() >= 2;
  if (swap) std::swap(grid[0], grid[1]);
  std::vector<X> r;
  for (size_t i = 0; i < xs.size(); ++i) {
    Dims shape = Dims::filled(grid.size(), 1);
    const size_t at = swap && i < 2 ? 1 - i : i;
    shape[static_cast<int>(at)] = grid[static_cast<int>(at)];
    auto one = [&](const auto& t) { return t.reshape(shape).expand(grid); };
    if constexpr (std::is_same_v<X, AnyTensor>) r.push_back(xs[i].visit([&](const auto& t) { return AnyTensor(one(t)); }));
    else r.push_back(one(xs[i]));
  }
  return r;
}

}  // namespace torchtpu
