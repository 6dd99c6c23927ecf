// torchtpu/core/tensor.hpp — `torchtpu::Tensor<T, Rank>`: a cheap, ref-counted handle to a
// strided view of typed memory, and the views that share its storage.
#pragma once
#include <algorithm>         // std::find, std::sort, std::adjacent_find
#include <cstdint>           // int64_t
#include <cstring>           // std::memcpy
#include <initializer_list>  // std::initializer_list
#include <string>            // std::string
#include <string_view>       // std::string_view
#include <utility>           // std::move
#include <vector>            // std::vector

#include "../expr/base.hpp"  // ExprBase (methods shared by tensors and expressions)
#include "forward.hpp"       // Tensor, expression, detail::materialize
#include "shape.hpp"         // Dims
#include "storage.hpp"       // Storage

namespace torchtpu {
namespace detail {
/// Tag of the Tensor constructor that skips the storage-bounds check (one type for every rank,
/// so a Tensor<T, R> can build a Tensor<T> view).
struct unchecked_view {};

/// Checks that a view (sizes, strides and offset in elements of `elem` bytes) lies inside the
/// bytes of `s`, negative strides included, with every index computed overflow-free.
/// **Errors:** ShapeError naming the sizes, strides, offset, dtype and the storage's size.
inline void check_view_fits(const StorageImpl* s, const Dims& sizes, const Dims& strides, int64_t offset,
                            size_t elem, std::string_view dtype) {
  auto fail = [&](const std::string& why) {
    throw ShapeError("Tensor: a view with sizes " + to_string(sizes) + ", strides " + to_string(strides) +
                     ", storage offset " + std::to_string(offset) + " and dtype " + std::string(dtype) + " " + why);
  };
  if (sizes.size() != strides.size()) fail("has different numbers of sizes and strides");
  bool empty = false;
  for (int64_t v : sizes) {
    if (v < 0) fail("has a negative size");
    empty = empty || v == 0;
  }
  if (offset < 0) fail("has a negative storage offset");
  if (empty) return;  // no element is read (torch checks only the offset then, too)
  int64_t lo = offset, hi = offset;  // lowest and highest element index reached
  for (int i = 0; i < sizes.size(); ++i) {
    int64_t span = 0;
    if (__builtin_mul_overflow(sizes[i] - 1, strides[i], &span) ||
        __builtin_add_overflow(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi))
      fail("overflows int64 element indices");
  }
  const size_t nbytes = s ? s->nbytes : 0;
  int64_t end = 0;  // one past the last byte reached
  if (__builtin_add_overflow(hi, int64_t(1), &end) || __builtin_mul_overflow(end, int64_t(elem), &end))
    fail("overflows int64 byte offsets");
  if (lo < 0 || uint64_t(end) > nbytes)
    fail("reaches bytes [" + std::to_string(lo * int64_t(elem)) + ", " + std::to_string(end) +
         ") outside its storage of " + std::to_string(nbytes) + " bytes" + (s ? "" : " (no storage)"));
}

/// True when two elements of the view `sizes`/`strides` provably share one memory location:
/// a dim of size > 1 with stride 0, or, where the dims (sorted by |stride|) do not nest — a
/// stride smaller than the span of the dims inside it — offsets that collide (enumerated
/// exactly for views up to 2^16 elements; larger non-nesting views, which only `as_strided`
/// -style construction makes, are not refused: torch's "too hard" case). Empty views never
/// overlap. The rule of torch's `has_internal_overlap` (aten/src/ATen/MemoryOverlap.cpp).
inline bool has_internal_overlap(const Dims& sizes, const Dims& strides) {
  int64_t sz[max_rank], st[max_rank];
  int n = 0;
  for (int i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) return false;
    if (sizes[i] == 1) continue;
    if (strides[i] == 0) return true;
    sz[n] = sizes[i];
    st[n] = strides[i] < 0 ? -strides[i] : strides[i];
    ++n;
  }
  for (int i = 1; i < n; ++i)  // insertion sort by |stride| (at most 8 dims)
    for (int j = i; j > 0 && st[j] < st[j - 1]; --j) {
      std::swap(st[j], st[j - 1]);
      std::swap(sz[j], sz[j - 1]);
    }
  int64_t span = 1;  // one past the largest offset of the inner dims (views that fit: no overflow)
  bool nested = true;
  for (int i = 0; i < n; ++i) {
    if (st[i] < span) nested = false;
    span += (sz[i] - 1) * st[i];
  }
  if (nested) return false;
  int64_t count = 1;
  for (int i = 0; i < n; ++i)
    if (__builtin_mul_overflow(count, sz[i], &count) || count > (int64_t(1) << 16)) return false;
  std::vector<int64_t> offs{0};
  offs.reserve(size_t(count));
  for (int i = 0; i < n; ++i) {
    const size_t m = offs.size();
    for (int64_t k = 1; k < sz[i]; ++k)
      for (size_t j = 0; j < m; ++j) offs.push_back(offs[j] + k * st[i]);
  }
  std::sort(offs.begin(), offs.end());
  return std::adjacent_find(offs.begin(), offs.end()) != offs.end();
}

/// Refuses a write by `op` into a destination view whose elements share memory (an expanded
/// dim, or strides that provably overlap: `has_internal_overlap`), before anything is written;
/// as torch's `assert_no_internal_overlap`. **Errors:** ValueError naming the op, the shape and
/// the strides.
inline void check_no_internal_overlap(std::string_view op, const Dims& sizes, const Dims& strides) {
  if (has_internal_overlap(sizes, strides))
    throw ValueError(std::string(op) + ": unsupported operation: more than one element of the written-to tensor "
                     "(shape " + to_string(sizes) + ", strides " + to_string(strides) +
                     ") refers to a single memory location; write into a copy (clone() or contiguous()) instead");
}

}  // namespace detail

/// A strided view of typed memory, shared by reference counting (like `at::Tensor`).
///
/// **Shapes:** any rank up to 8; `Rank` fixes it at compile time (default: run time).
/// **Dtypes:** float, double, bfloat16, half, int32_t, int64_t, bool, uint8_t.
/// **Units:** sizes, strides and the storage offset are in elements; all index arithmetic is
/// int64 (tensors over 2^31 elements work).
/// **Semantics:** copying a Tensor copies the handle, not the data (as in libtorch).
/// Assigning an expression to a Tensor variable gives it the expression's value; when the
/// variable is the only handle to storage of the right shape, that storage is reused (no
/// allocation). Assigning to a view temporary (`x.slice(0, 1, 3) = y`) writes into the viewed
/// memory, broadcasting `y`, like `copy_`. `x += e` is in place, like `add_`.
/// **Errors:** ShapeError for shapes that do not fit, IndexError for out-of-range indices.
template <element T, int Rank>
class Tensor : public ExprBase<Tensor<T, Rank>> {
  static_assert(Rank == dynamic_rank || (Rank >= 0 && Rank <= max_rank),
                "torchtpu::Tensor: Rank must be dynamic_rank or in [0, 8]");

 public:
  /// Element type.
  using value_type = T;
  /// Marks Tensor for the `tensor_handle` concept.
  using is_tensor_tag = void;
  /// The static rank (`dynamic_rank` = checked at run time).
  static constexpr int static_rank = Rank;
  /// Marks Tensor as an expression (the `expression` concept).
  static constexpr bool is_torchtpu_expression = true;
  using ExprBase<Tensor<T, Rank>>::to;  // to<U>() (dtype); to(Device) is below

  /// An undefined tensor (no storage); `defined()` is false.
  Tensor() = default;

  /// A view of `storage` with the given sizes, strides (elements) and offset (elements).
  /// **Errors:** ShapeError if a size is negative, the ranks of sizes and strides differ, the
  /// offset is negative, or an element of the view (negative strides included) lies outside
  /// the storage's bytes (torch's "out of bounds for storage" check).
  Tensor(Storage storage, Dims sizes, Dims strides, int64_t offset = 0)
      : storage_(std::move(storage)), sizes_(sizes), strides_(strides), offset_(offset) {
    detail::check_view_fits(storage_.get(), sizes_, strides_, offset_, sizeof(T), dtype_name(dtype_of<T>()));
    check_rank();
  }

  /// Nested initializer lists: `Tensor<float> t = {{1, 2}, {3, 4}};` (shape [2, 2]).
  Tensor(std::initializer_list<T> v) { init_from_list(v, Dims{int64_t(v.size())}); }
  /// A 2-D tensor from nested lists: `{{1, 2}, {3, 4}}`. **Errors:** ShapeError for ragged lists.
  Tensor(std::initializer_list<std::initializer_list<T>> v) { init_nested(v); }
  /// A 3-D tensor from nested lists. **Errors:** ShapeError for ragged lists.
  Tensor(std::initializer_list<std::initializer_list<std::initializer_list<T>>> v) {
    init_nested(v);
  }
  /// A 4-D tensor from nested lists. **Errors:** ShapeError for ragged lists.
  Tensor(std::initializer_list<std::initializer_list<std::initializer_list<std::initializer_list<T>>>> v) {
    init_nested(v);
  }

  // Copy, move and destruction out of line: an expression holds its tensors by value, and
  // inlining the shared_ptr reference counting and the two Dims copies at every node of every
  // expression multiplies code size (compile time: docs/compile-time.md) for a gain of a few
  // nanoseconds per tensor handle.
  /// Copies the handle: the copy shares storage (as torch::Tensor).
  [[gnu::noinline]] Tensor(const Tensor& o)
      : storage_(o.storage_), sizes_(o.sizes_), strides_(o.strides_), offset_(o.offset_) {}
  /// Moves the handle; `o` becomes undefined.
  [[gnu::noinline]] Tensor(Tensor&& o) noexcept
      : storage_(std::move(o.storage_)), sizes_(o.sizes_), strides_(o.strides_), offset_(o.offset_) {}
  [[gnu::noinline]] ~Tensor() {}

  /// True when a value of static rank `r` may be stored in a Tensor of static rank `Rank`
  /// (equal, or either unknown at compile time: then checked at run time).
  static constexpr bool accepts_static_rank(int r) {
    return Rank == dynamic_rank || r == dynamic_rank || r == Rank;
  }

  /// Handle conversion between static ranks (checked at run time when one side is dynamic).
  /// Different static ranks do not compile (a constraint, so traits can test it).
  template <int R2>
    requires(R2 != Rank && accepts_static_rank(R2))
  Tensor(const Tensor<T, R2>& o)  // NOLINT: implicit, like a derived-to-base conversion
      : storage_(o.storage()), sizes_(o.sizes()), strides_(o.strides()), offset_(o.storage_offset()) {
    check_rank();
  }

  /// Materialize an expression (evaluates it now, fused; see fuse/). An expression whose
  /// static rank differs from `Rank` does not compile.
  template <expression E>
    requires((!tensor_handle<E> || !std::same_as<typename E::value_type, T>) &&
             accepts_static_rank(E::static_rank))
  Tensor(const E& e) {  // NOLINT: implicit, so `Tensor<float> r = a + b;` works
    detail::materialize(*this, e);
  }
  /// An expression of another static rank: deleted (the compiler's "declared here" note
  /// quotes the parameter name, which says why).
  template <expression E>
    requires(!accepts_static_rank(E::static_rank))
  Tensor(const E& static_rank_of_expression_differs_from_tensor_rank) = delete;

  // ---- assignment --------------------------------------------------------------------
  /// Rebinds this handle to `o`'s storage and view (no data is copied).
  Tensor& operator=(const Tensor& o) & = default;
  /// Rebinds this handle to `o`'s storage and view, taking `o`'s handle.
  Tensor& operator=(Tensor&& o) & noexcept = default;
  /// Writing through a view temporary: copies values (broadcasting), like `copy_`.
  Tensor& operator=(const Tensor& o) && { return copy_(o); }
  /// Writing through a view temporary: copies values (broadcasting), like `copy_`.
  Tensor& operator=(Tensor&& o) && { return copy_(o); }

  /// Gives this tensor the value of `e`: reuses its memory when this handle is the sole, contiguous
  /// owner of `e`'s shape, else rebinds to new memory. **Errors:** ShapeError from `e`.
  template <expression E>
    requires(!std::same_as<E, Tensor> && accepts_static_rank(E::static_rank))
  Tensor& operator=(const E& e) & {
    if constexpr (tensor_handle<E> && std::same_as<typename E::value_type, T>) {
      return *this = Tensor(e);  // a handle of another static rank: rebind (checked), no copy
    }
    if (!(storage_ && storage_.use_count() == 1 && sizes_ == e.shape() && is_contiguous()))
      *this = Tensor();
    detail::materialize(*this, e);
    return *this;
  }
  /// Writing an expression through a view temporary: `x.slice(0, 1, 3) = e` copies like `copy_`.
  template <expression E>
    requires(!std::same_as<E, Tensor>)
  Tensor& operator=(const E& e) && { return copy_(e); }

  /// Filling a view temporary: `x.slice(0, 1, 3) = 0` is `fill_`.
  template <arithmetic_scalar S>
  Tensor& operator=(S v) && { return fill_(v); }

  /// Write `e` (broadcast to this shape, converted to T) into this tensor's memory.
  /// Overlap between this tensor and the inputs is detected and handled (as NumPy does).
  /// **Errors:** ShapeError if `e`'s shape does not broadcast to `sizes()`; ValueError if this
  /// view's own elements share memory (an expanded, stride-0 dim: `detail::check_no_internal_overlap`),
  /// before anything is written. The same holds for `fill_`, `+=`, `-=`, `*=`, `/=` and writes
  /// through a view temporary (`x.expand({3}) = y`), on every device.
  template <expression E>
  Tensor& copy_(const E& e) { return write_checked("copy_", e); }
  /// Set every element to `v`. **Errors:** ValueError if this view's elements share memory.
  template <arithmetic_scalar S>
  Tensor& fill_(S v);

  // ---- compound assignment (in place, like add_/sub_/mul_/div_) ------------------------
  /// In place `*this = *this + e` (like add_). **Errors:** ShapeError if `e` does not broadcast to
  /// `sizes()`.
  template <class E> Tensor& operator+=(const E& e);
  /// In place `*this = *this - e` (like sub_).
  template <class E> Tensor& operator-=(const E& e);
  /// In place `*this = *this * e` (like mul_).
  template <class E> Tensor& operator*=(const E& e);
  /// In place `*this = *this / e` (like div_).
  template <class E> Tensor& operator/=(const E& e);

  // ---- metadata -----------------------------------------------------------------------
  /// False for a default-constructed Tensor (no storage).
  bool defined() const noexcept { return storage_ != nullptr; }
  /// Same as `sizes()`.
  const Dims& shape() const noexcept { return sizes_; }
  /// Sizes of each dim.
  const Dims& sizes() const noexcept { return sizes_; }
  /// Strides of each dim, in elements.
  const Dims& strides() const noexcept { return strides_; }
  /// Size of dim `d` (negative counts from the end). **Errors:** IndexError.
  int64_t size(int64_t d) const { return sizes_[wrap_dim(d, dim(), "size")]; }
  /// Stride of dim `d`, in elements (negative counts from the end). **Errors:** IndexError.
  int64_t stride(int64_t d) const { return strides_[wrap_dim(d, dim(), "stride")]; }
  /// Number of dims.
  int dim() const noexcept { return sizes_.size(); }
  /// **Errors:** ShapeError if the product of the sizes overflows int64 (a huge expanded view).
  int64_t numel() const { return torchtpu::numel(sizes_); }
  /// Offset of element [0, ..., 0] in the storage, in elements.
  int64_t storage_offset() const noexcept { return offset_; }
  /// The element type as a run-time value.
  static constexpr ScalarType dtype() noexcept { return dtype_of<T>(); }
  /// Bytes per element.
  static constexpr size_t element_size() noexcept { return sizeof(T); }
  /// Device the data lives on (cpu for an undefined tensor).
  Device device() const noexcept { return storage_ ? storage_->device : Device{}; }
  /// The shared storage (null when undefined).
  const Storage& storage() const noexcept { return storage_; }
  /// Address of element [0, ..., 0] (null for an undefined or device-resident tensor).
  T* data_ptr() const noexcept {
    return storage_ && storage_->data ? static_cast<T*>(storage_->data) + offset_ : nullptr;
  }
  /// True if the strides are row-major dense (size-1 dims ignored).
  bool is_contiguous() const noexcept {
    int64_t expect = 1;
    for (int i = dim() - 1; i >= 0; --i) {
      if (sizes_[i] == 1) continue;
      if (strides_[i] != expect) return false;
      expect *= sizes_[i];
    }
    return true;
  }

  // ---- element access -----------------------------------------------------------------
  /// Checked access: `t.at(i, j)`; negative indices count from the end.
  /// **Errors:** IndexError for a wrong number of indices or an index out of range.
  template <std::integral... I>
  T& at(I... idx) const {
    const int64_t v[] = {int64_t(idx)..., 0};
    return *element_ptr(std::span<const int64_t>(v, sizeof...(I)), "at");
  }
  /// Checked access with the indices in a span. **Errors:** IndexError.
  T& at(std::span<const int64_t> idx) const { return *element_ptr(idx, "at"); }
  /// The value of a one-element tensor. **Errors:** ShapeError if numel() != 1.
  T item() const {
    require_defined("item");
    if (numel() != 1)
      throw ShapeError("item: a tensor with " + std::to_string(numel()) +
                       " elements cannot be converted to a scalar (shape " + to_string(sizes_) + ")");
    if (!device().is_cpu()) return cpu().item();  // observation: copies to the host
    return *data_ptr();
  }

  // ---- views (share storage) ----------------------------------------------------------
  /// Elements `start, start+step, ...` below `end` along `dim` (Python slice semantics,
  /// negative and out-of-range bounds clamped as in torch). **Errors:** IndexError, ValueError.
  Tensor<T> slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const {
    const int d = wrap_dim(dim, this->dim(), "slice");
    if (step <= 0) throw ValueError("slice: step must be positive, got " + std::to_string(step));
    const int64_t n = sizes_[d];
    auto clampi = [n](int64_t i) { if (i < 0) i += n; return i < 0 ? 0 : (i > n ? n : i); };
    start = clampi(start);
    end = clampi(end);
    if (end < start) end = start;
    Tensor<T> r(unchecked_view{}, storage_, sizes_, strides_, offset_ + start * strides_[d]);
    r.sizes_[d] = end > start ? (end - start - 1) / step + 1 : 0;  // no overflow for any step
    // with one element or none the stride is never applied: keep it (step * stride may overflow)
    if (r.sizes_[d] > 1 && __builtin_mul_overflow(strides_[d], step, &r.strides_[d]))
      throw ValueError("slice: step " + std::to_string(step) + " times stride " + std::to_string(strides_[d]) +
                       " overflows int64 (shape " + to_string(sizes_) + ")");
    return r;
  }
  /// `length` elements from `start` along `dim`. **Errors:** IndexError if out of range.
  Tensor<T> narrow(int64_t dim, int64_t start, int64_t length) const {
    const int d = wrap_dim(dim, this->dim(), "narrow");
    if (start < 0) start += sizes_[d];
    if (start < 0 || length < 0 || length > sizes_[d] - start)
      throw IndexError("narrow: start " + std::to_string(start) + " + length " +
                       std::to_string(length) + " exceeds size " + std::to_string(sizes_[d]) +
                       " of dim " + std::to_string(d) + " in shape " + to_string(sizes_));
    return slice(d, start, start + length);
  }
  /// Remove `dim` by taking index `index` (negative counts from the end).
  /// **Errors:** IndexError for a 0-dim tensor (as torch), a dim or an index out of range.
  Tensor<T> select(int64_t dim, int64_t index) const {
    if (this->dim() == 0) throw IndexError("select: cannot be applied to a 0-dim tensor (shape [])");
    const int d = wrap_dim(dim, this->dim(), "select");
    const int64_t n = sizes_[d];
    if (index < -n || index >= n)
      throw IndexError("select: index " + std::to_string(index) + " out of range for dim " +
                       std::to_string(d) + " of size " + std::to_string(n) + " (shape " +
                       to_string(sizes_) + ")");
    if (index < 0) index += n;
    Tensor<T> r(unchecked_view{}, storage_, sizes_, strides_, offset_ + index * strides_[d]);
    r.sizes_.erase(d);
    r.strides_.erase(d);
    return r;
  }
  /// `t[i]` is `t.select(0, i)`.
  Tensor<T> operator[](int64_t i) const { return select(0, i); }

  /// View with dims `d0` and `d1` swapped (shares storage). **Errors:** IndexError.
  Tensor transpose(int64_t d0, int64_t d1) const {
    const int a = wrap_dim(d0, dim(), "transpose"), b = wrap_dim(d1, dim(), "transpose");
    Tensor r = *this;
    if (dim() == 0) return r;
    std::swap(r.sizes_[a], r.sizes_[b]);
    std::swap(r.strides_[a], r.strides_[b]);
    return r;
  }
  /// Transpose of a tensor of rank <= 2 (torch's `t()`). **Errors:** ShapeError for rank > 2.
  Tensor t() const {
    static_assert(Rank == dynamic_rank || Rank <= 2, "t(): expects a tensor with <= 2 dimensions");
    if (dim() > 2)
      throw ShapeError("t: expects a tensor with <= 2 dimensions, got shape " + to_string(sizes_));
    return dim() < 2 ? *this : transpose(0, 1);
  }
  /// Reorder dims: result dim i is input dim `dims[i]`. **Errors:** ShapeError if not a permutation.
  Tensor permute(const Dims& dims) const {
    if (dims.size() != dim())
      throw ShapeError("permute: got " + to_string(dims) + " for a tensor of shape " + to_string(sizes_));
    Tensor r = *this;
    bool seen[max_rank] = {};
    for (int i = 0; i < dim(); ++i) {
      const int d = wrap_dim(dims[i], dim(), "permute");
      if (seen[d]) throw ShapeError("permute: repeated dim in " + to_string(dims));
      seen[d] = true;
      r.sizes_[i] = sizes_[d];
      r.strides_[i] = strides_[d];
    }
    return r;
  }
  /// The elements in reverse order along each dim in `dims` (as `torch.flip`), as a view: the
  /// storage offset moves to the last element of each flipped dim and its stride is negated
  /// (torch.flip returns a copy; call `contiguous()` for one). Every torchtpu op reads and
  /// writes such views; `to_torch`/`to_dlpack` copy them or refuse (interop/). A dim of size
  /// 0 or 1 keeps its stride.
  /// **Shapes:** `[...]` → the same shape. **Dtypes:** all.
  /// **Errors:** IndexError for a dim out of range; ShapeError for a repeated dim (torch:
  /// "dims has duplicates").
  Tensor flip(const Dims& dims) const {
    Tensor r = *this;
    bool seen[max_rank] = {};
    for (int64_t d0 : dims) {
      const int d = wrap_dim(d0, dim(), "flip");
      if (dim() == 0) continue;  // a scalar has nothing to reverse (dim 0 / -1 accepted, as torch)
      if (seen[d]) throw ShapeError("flip: dim " + std::to_string(d) + " appears multiple times in the list of dims " +
                                    to_string(dims) + " (shape " + to_string(sizes_) + ")");
      seen[d] = true;
      if (sizes_[d] <= 1) continue;
      r.offset_ += (sizes_[d] - 1) * strides_[d];  // fits: the view's elements are in its storage
      r.strides_[d] = -strides_[d];
    }
    return r;
  }
  /// A view with new sizes; one size may be -1. **Errors:** ShapeError if the element count
  /// differs or the strides do not allow a view (use `reshape`).
  Tensor<T> view(const Dims& shape) const {
    const Dims s = infer_size(shape, "view");
    Dims st;
    if (!view_strides(s, st))
      throw ShapeError("view: size " + to_string(s) + " is not compatible with input strides " +
                       to_string(strides_) + " of shape " + to_string(sizes_) +
                       " (at least one dimension spans across two contiguous subspaces); use reshape");
    return Tensor<T>(unchecked_view{}, storage_, s, st, offset_);
  }
  /// Like `view` when possible, else a contiguous copy (torch semantics).
  Tensor<T> reshape(const Dims& shape) const {
    const Dims s = infer_size(shape, "reshape");
    Dims st;
    if (view_strides(s, st)) return Tensor<T>(unchecked_view{}, storage_, s, st, offset_);
    return contiguous().view(s);
  }
  /// Merge dims `start..end` into one.
  Tensor<T> flatten(int64_t start = 0, int64_t end = -1) const {
    if (dim() == 0) return reshape(Dims{1});
    const int a = wrap_dim(start, dim(), "flatten"), b = wrap_dim(end, dim(), "flatten");
    if (a > b) throw IndexError("flatten: start_dim cannot come after end_dim");
    Dims s;
    for (int i = 0; i < a; ++i) s.push_back(sizes_[i]);
    int64_t m = 1;
    for (int i = a; i <= b; ++i) m *= sizes_[i];
    s.push_back(m);
    for (int i = b + 1; i < dim(); ++i) s.push_back(sizes_[i]);
    return reshape(s);
  }
  /// Remove every size-1 dim.
  Tensor<T> squeeze() const {
    Tensor<T> r(unchecked_view{}, storage_, {}, {}, offset_);
    for (int i = 0; i < dim(); ++i)
      if (sizes_[i] != 1) { r.sizes_.push_back(sizes_[i]); r.strides_.push_back(strides_[i]); }
    return r;
  }
  /// Remove `dim` if its size is 1 (else return the same view, as torch does).
  Tensor<T> squeeze(int64_t dim) const {
    if (this->dim() == 0) return *this;
    const int d = wrap_dim(dim, this->dim(), "squeeze");
    Tensor<T> r = *this;
    if (sizes_[d] == 1) { r.sizes_.erase(d); r.strides_.erase(d); }
    return r;
  }
  /// Insert a size-1 dim at `dim` (in [-dim()-1, dim()]).
  Tensor<T> unsqueeze(int64_t dim) const {
    const int d = wrap_dim(dim, this->dim() + 1, "unsqueeze");
    Tensor<T> r = *this;
    const int64_t st = d < this->dim() ? sizes_[d] * strides_[d] : 1;
    r.sizes_.insert(d, 1);
    r.strides_.insert(d, st);
    return r;
  }
  /// Broadcast view to `shape` (size -1 keeps a dim); stride 0 along expanded dims.
  /// **Errors:** ShapeError if a non-1 size would change.
  Tensor<T> expand(const Dims& shape) const {
    if (shape.size() < dim())
      throw ShapeError("expand: the number of sizes provided " + to_string(shape) +
                       " must be at least the number of dims of shape " + to_string(sizes_));
    Tensor<T> r(unchecked_view{}, storage_, shape, Dims::filled(shape.size(), 0), offset_);
    const int lead = shape.size() - dim();
    for (int i = 0; i < shape.size(); ++i) {
      const int j = i - lead;
      if (j < 0) {
        if (shape[i] < 0) throw ShapeError("expand: -1 not allowed in a new leading dim of " + to_string(shape));
        continue;
      }
      if (shape[i] < -1)
        throw ShapeError("expand: size " + std::to_string(shape[i]) + " at dim " + std::to_string(i) + " of " +
                         to_string(shape) + " is negative (-1 keeps the size of shape " + to_string(sizes_) + ")");
      const int64_t want = shape[i] == -1 ? sizes_[j] : shape[i];
      r.sizes_[i] = want;
      if (sizes_[j] == want) r.strides_[i] = strides_[j];
      else if (sizes_[j] == 1) r.strides_[i] = 0;
      else
        throw ShapeError("expand: shape " + to_string(sizes_) + " cannot be expanded to " +
                         to_string(shape) + " (size " + std::to_string(sizes_[j]) + " at dim " +
                         std::to_string(j) + ")");
    }
    return r;
  }
  /// Same as `expand(shape)` (NumPy's name). **Errors:** ShapeError.
  Tensor<T> broadcast_to(const Dims& shape) const { return expand(shape); }
  /// This tensor if contiguous, else a contiguous copy.
  Tensor contiguous() const {
    if (is_contiguous()) return *this;
    return clone();
  }
  /// A contiguous copy with its own storage.
  Tensor clone() const;
  /// This tensor if it is on the cpu, else a host copy (dense, row-major) of the device data.
  /// The copy happens only when asked for: data never leaves a device silently.
  Tensor cpu() const {
    if (!storage_ || device().is_cpu()) return *this;
    Tensor r(allocate_storage(storage_->nbytes), sizes_, strides_, offset_);
    if (storage_->download) storage_->download(*storage_, r.storage_->data);
    return r;
  }

  /// This tensor on `device` ("cpu", "tpu", "tpu:1", ...): itself if already there, else a
  /// dense copy. Defined in device/lower.hpp. **Errors:** DeviceUnavailable, IndexError.
  Tensor to(const Device& device) const;

  // ---- factories that need the type ----------------------------------------------------
  /// Uninitialised contiguous tensor on the cpu.
  static Tensor empty(const Dims& shape) {
    for (int64_t s : shape)
      if (s < 0) throw ShapeError("empty: negative size in " + to_string(shape));
    const size_t nbytes = storage_nbytes(shape, sizeof(T));  // checked before the strides
    Tensor r(unchecked_view{}, allocate_storage(nbytes), shape,
             contiguous_strides(shape), 0);
    return r;
  }

 private:
  template <element, int> friend class Tensor;

  /// Views made from a valid view (slice, select, view, expand, ...) fit by construction and
  /// skip `check_view_fits`; so does `empty`, which allocates exactly the view's bytes.
  using unchecked_view = detail::unchecked_view;
  Tensor(unchecked_view, Storage storage, Dims sizes, Dims strides, int64_t offset)
      : storage_(std::move(storage)), sizes_(sizes), strides_(strides), offset_(offset) {
    check_rank();
  }

  void check_rank() const {
    if constexpr (Rank != dynamic_rank)
      if (sizes_.size() != Rank)
        throw ShapeError("Tensor<" + std::string(dtype_name(dtype_of<T>())) + ", " +
                         std::to_string(Rank) + ">: got a tensor of shape " + to_string(sizes_));
  }
  void require_defined(const char* op) const {
    if (!storage_) throw ValueError(std::string(op) + ": tensor is undefined");
  }
  /// Every in-place write (`copy_`, `+=`, ...) goes through here: defined, no internal overlap.
  template <expression E>
  Tensor& write_checked(const char* op, const E& e) {
    require_defined(op);
    detail::check_no_internal_overlap(op, sizes_, strides_);
    detail::materialize(*this, e);
    return *this;
  }
  T* element_ptr(std::span<const int64_t> idx, const char* op) const {
    require_defined(op);
    if (int(idx.size()) != dim())
      throw IndexError(std::string(op) + ": got " + std::to_string(idx.size()) +
                       " indices for a tensor of shape " + to_string(sizes_));
    int64_t off = offset_;
    for (int i = 0; i < dim(); ++i) {
      int64_t k = idx[i];
      if (k < -sizes_[i] || k >= sizes_[i])
        throw IndexError(std::string(op) + ": index " + std::to_string(k) + " is out of bounds for dim " +
                         std::to_string(i) + " with size " + std::to_string(sizes_[i]) + " (shape " +
                         to_string(sizes_) + ")");
      if (k < 0) k += sizes_[i];
      off += k * strides_[i];
    }
    return static_cast<T*>(storage_->data) + off;
  }
  Dims infer_size(const Dims& shape, const char* op) const {
    Dims s = shape;
    int infer = -1;
    int64_t known = 1;
    for (int i = 0; i < s.size(); ++i) {
      if (s[i] == -1) {
        if (infer >= 0) throw ShapeError(std::string(op) + ": only one dimension can be inferred in " + to_string(shape));
        infer = i;
      } else if (s[i] < 0) {
        throw ShapeError(std::string(op) + ": invalid shape " + to_string(shape));
      } else if (__builtin_mul_overflow(known, s[i], &known)) {
        throw ShapeError(std::string(op) + ": shape " + to_string(shape) + " overflows int64 element counts");
      }
    }
    const int64_t n = numel();
    if (infer >= 0) {
      if (known == 0 || n % known != 0)
        throw ShapeError(std::string(op) + ": shape " + to_string(shape) + " is invalid for input of size " + std::to_string(n));
      s[infer] = n / known;
    } else if (known != n) {
      throw ShapeError(std::string(op) + ": shape " + to_string(shape) + " is invalid for input of size " +
                       std::to_string(n) + " (shape " + to_string(sizes_) + ")");
    }
    return s;
  }
  // Strides for viewing this tensor with sizes `s` without copying, if possible
  // (the algorithm of torch's computeStride: match chunks of contiguous dims).
  bool view_strides(const Dims& s, Dims& out) const {
    out = Dims::filled(s.size(), 1);
    if (numel() == 0 || dim() == 0) { out = contiguous_strides(s); return true; }  // rank 0: s is all 1s
    int view_d = s.size() - 1;
    int64_t chunk_base_stride = dim() ? strides_.back() : 1;
    int64_t tensor_numel = 1, view_numel = 1;
    for (int d = dim() - 1; d >= 0; --d) {
      tensor_numel *= sizes_[d];
      if (d == 0 || (sizes_[d - 1] != 1 && strides_[d - 1] != tensor_numel * chunk_base_stride)) {
        while (view_d >= 0 && (view_numel < tensor_numel || s[view_d] == 1)) {
          out[view_d] = view_numel * chunk_base_stride;
          view_numel *= s[view_d];
          --view_d;
        }
        if (view_numel != tensor_numel) return false;
        if (d > 0) {
          chunk_base_stride = strides_[d - 1];
          tensor_numel = 1;
          view_numel = 1;
        }
      }
    }
    return view_d == -1;
  }
  template <class List>
  static void collect_shape(const List& l, Dims& s, int depth) {
    if constexpr (requires { l.begin()->begin(); }) {
      if (s.size() <= depth) s.push_back(int64_t(l.size()));
      else if (s[depth] != int64_t(l.size()))
        throw ShapeError("Tensor: ragged nested initializer list (sizes " + std::to_string(s[depth]) +
                         " and " + std::to_string(l.size()) + " at depth " + std::to_string(depth) + ")");
      for (const auto& sub : l) collect_shape(sub, s, depth + 1);
    } else {
      if (s.size() <= depth) s.push_back(int64_t(l.size()));
      else if (s[depth] != int64_t(l.size()))
        throw ShapeError("Tensor: ragged nested initializer list (sizes " + std::to_string(s[depth]) +
                         " and " + std::to_string(l.size()) + " at depth " + std::to_string(depth) + ")");
    }
  }
  template <class List>
  static void copy_flat(const List& l, T*& out) {
    if constexpr (requires { l.begin()->begin(); }) {
      for (const auto& sub : l) copy_flat(sub, out);
    } else {
      for (const T& v : l) *out++ = v;
    }
  }
  template <class List>
  void init_nested(const List& l) {
    Dims s;
    collect_shape(l, s, 0);
    *this = empty(s);
    T* p = data_ptr();
    copy_flat(l, p);
    check_rank();
  }
  void init_from_list(std::initializer_list<T> v, Dims s) {
    *this = empty(s);
    T* p = data_ptr();
    for (const T& x : v) *p++ = x;
    check_rank();
  }

  Storage storage_;
  Dims sizes_;
  Dims strides_;
  int64_t offset_ = 0;
};

}  // namespace torchtpu
