// torchtpu/fuse/elementwise.hpp — one elementwise region evaluated in one pass: a per-expression
// *block kernel* (the fused arithmetic over n contiguous elements, AVX-512 or scalar) driven by
// non-template code (loop plan, rows, gathering strided or broadcast operands into small
// buffers, threads).
//
// Why split this way: the kernel is the only code generated per expression type — one body,
// one masked loop — while everything about layouts and threads is compiled once per
// translation unit, whatever the number of expressions (issue 2's compile-time goal; see
// docs/compile-time.md). Operands whose inner stride is 1 are read in place; others are
// gathered `block` elements at a time into a per-thread buffer that stays in L1.
#pragma once
#include <cstdint>      // int64_t
#include <cstring>      // std::memcpy
#include <tuple>        // std::tuple_element_t, std::get
#include <type_traits>  // std::integral_constant
#include <utility>      // std::index_sequence
#include <vector>       // std::vector (per-thread gather buffer)

#include "evaluator.hpp"  // EvalContext, evaluate_new, for_each_operand
#include "plan.hpp"       // LoopPlan, plan_strides
#include "simd.hpp"       // FloatVec, vector_entry, cpu_isa
#include "threads.hpp"    // parallel_chunks, chunks_for
#include "vec_eval.hpp"   // vectorizable, vec_storage, unflatten_row, elementwise_grain

namespace torchtpu::detail {

/// Most tensor operands one fused region may read (materialized sub-results included).
inline constexpr int max_region_leaves = 32;

/// Destinations at least this large (bytes, contiguous rows) are written with non-temporal
/// stores: a result this size cannot stay in cache anyway, and streaming it skips the read
/// for ownership of every line (W1 at 2^24: 20 -> 16 bytes of traffic per element).
inline constexpr int64_t stream_store_bytes = int64_t(32) << 20;

/// What a block kernel sees: one pointer per operand (n contiguous elements each, in the
/// operand's own dtype), the destination (n contiguous elements) and the expression (for
/// scalar constants and op parameters).
struct BlockArgs {
  const void* in[max_region_leaves];
  void* out;
  const void* expr;
  bool stream = false;  ///< write full, 64-byte aligned float vectors with non-temporal stores
};
using BlockFn = void (*)(const BlockArgs&, int64_t n);

/// One region ready to run over any rows of its plan (no per-expression code).
struct RegionJob {
  LoopPlan plan;
  int nleaves = 0;
  char* out = nullptr;
  int out_elem = 0;
  int64_t out_st[max_rank] = {};
  const char* leaf[max_region_leaves] = {};
  int elem[max_region_leaves] = {};
  int64_t st[max_region_leaves][max_rank] = {};
  BlockFn fn = nullptr;
  const void* expr = nullptr;
  bool stream = false;  ///< see stream_store_bytes
  int64_t grain = elementwise_grain;  ///< elements per thread below which it stays on one

  void set_out(void* p, int elem_size, const Dims& sizes, const Dims& strides) {
    out = static_cast<char*>(p);
    out_elem = elem_size;
    plan_strides(plan, sizes, strides, out_st);
  }
  void set_leaf(int k, const void* p, int elem_size, const Dims& sizes, const Dims& strides) {
    leaf[k] = static_cast<const char*>(p);
    elem[k] = elem_size;
    plan_strides(plan, sizes, strides, st[k]);
    if (k + 1 > nleaves) nleaves = k + 1;
  }
};

/// The operands of a region as the typed walk finds them, before there is a loop plan.
struct RegionLeaves {
  int n = 0;
  const void* data[max_region_leaves] = {};
  int elem[max_region_leaves] = {};
  const Dims* sizes[max_region_leaves] = {};
  const Dims* strides[max_region_leaves] = {};
  const StorageImpl* storage[max_region_leaves] = {};
  Storage keep[max_region_leaves];  ///< materialized sub-results read by the region
  Dims own_sizes[max_region_leaves], own_strides[max_region_leaves];  ///< their layouts

  void add(int k, const void* p, int elem_size, const Dims& sz, const Dims& st, const StorageImpl* s) {
    data[k] = p;
    elem[k] = elem_size;
    sizes[k] = &sz;
    strides[k] = &st;
    storage[k] = s;
    if (k + 1 > n) n = k + 1;
  }
};

// ---- per-expression part: operand numbering and the two kernels ----------------------------

template <class E> inline constexpr bool is_map_node = false;
template <class Op, class... Args> inline constexpr bool is_map_node<MapNode<Op, Args...>> = true;

/// Operands of `E`'s elementwise region (tensors and materialized nodes; numbers are not).
template <class E>
constexpr int leaf_count() {
  if constexpr (is_weak_scalar<E>) {
    return 0;
  } else if constexpr (is_map_node<E>) {
    return []<class Op, class... Args>(std::type_identity<MapNode<Op, Args...>>) {
      return (0 + ... + leaf_count<Args>());
    }(std::type_identity<E>{});
  } else {
    return 1;
  }
}
/// Cost of one op per element, in additions: `Op::cost` when the op declares one (the math
/// functions: about 8, measured as ns/element of their vector forms against an add), else 1.
template <class Op>
constexpr int op_cost() {
  if constexpr (requires { Op::cost; }) return Op::cost;
  else return 1;
}
/// Cost of one element of `E`'s region: the sum over its map nodes (at least 1).
template <class E>
constexpr int region_cost() {
  if constexpr (is_map_node<E>) {
    return []<class Op, class... Args>(std::type_identity<MapNode<Op, Args...>>) {
      return op_cost<Op>() + (0 + ... + region_cost<Args>());
    }(std::type_identity<E>{});
  } else {
    return 0;
  }
}

/// The number of the first operand of argument `I` of map node `E`.
template <class E, size_t I>
constexpr int arg_offset() {
  return []<size_t... J>(std::index_sequence<J...>) {
    return (0 + ... + leaf_count<std::tuple_element_t<J, decltype(E::args)>>());
  }(std::make_index_sequence<I>{});
}

/// Operand `K` onwards are `e`'s: records where each one's data is (materializing nodes that
/// are not elementwise, unless `ctx` already holds them). The only per-expression part of
/// setting a region up; planning, overlap checks and the loops are untyped.
template <int K, class E>
void add_leaves(RegionLeaves& l, const E& e, const EvalContext& ctx) {
  if constexpr (is_weak_scalar<E>) {
    // numbers live in the expression
  } else if constexpr (tensor_handle<E>) {
    l.add(K, e.data_ptr(), int(sizeof(typename E::value_type)), e.sizes(), e.strides(), e.storage().get());
  } else if constexpr (is_map_node<E>) {
    [&]<size_t... I>(std::index_sequence<I...>) {
      (add_leaves<K + arg_offset<E, I>()>(l, std::get<I>(e.args), ctx), ...);
    }(std::make_index_sequence<std::tuple_size_v<decltype(e.args)>>{});
  } else {
    using V = typename E::value_type;
    if (ctx.node == static_cast<const void*>(&e)) {
      l.add(K, ctx.data, int(sizeof(V)), ctx.sizes, ctx.strides, nullptr);
    } else {
      Tensor<V> t = evaluate_new(e);  // a fresh result: never shares memory with a destination
      l.keep[K] = t.storage();
      l.own_sizes[K] = t.sizes();
      l.own_strides[K] = t.strides();
      l.add(K, t.data_ptr(), int(sizeof(V)), l.own_sizes[K], l.own_strides[K], nullptr);
    }
  }
}

/// Scalar form: element `i` of `e` (operands from `K`), in e's value type.
template <int K, class E>
inline auto scalar_at(const E& e, const void* const* in, int64_t i) {
  if constexpr (is_weak_scalar<E>) {
    return e.value;
  } else if constexpr (is_map_node<E>) {
    using M = opmath_t<typename E::compute_type>;
    using Op = std::decay_t<decltype(e.op)>;
    return [&]<size_t... I>(std::index_sequence<I...>) {
      auto arg = [](auto v, auto idx) {
        if constexpr (int(decltype(idx)::value) < op_promote_first<Op>()) return convert<bool>(v);
        else return convert<M>(v);
      };
      return convert<typename E::value_type>(apply_op<M>(
          e.op, arg(scalar_at<K + arg_offset<E, I>()>(std::get<I>(e.args), in, i), std::integral_constant<size_t, I>{})...));
    }(std::make_index_sequence<std::tuple_size_v<decltype(e.args)>>{});
  } else {
    return static_cast<const typename E::value_type*>(in[K])[i];
  }
}

template <class T, class E>
void scalar_block(const BlockArgs& a, int64_t n) {
  const E& e = *static_cast<const E*>(a.expr);
  T* out = static_cast<T*>(a.out);
  for (int64_t i = 0; i < n; ++i) out[i] = convert<T>(scalar_at<0>(e, a.in, i));
}

#if TORCHTPU_HAS_VECTOR_PATH
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"  // vectors passed between target and generic code
template <int K, class V, bool Tail, class E>
TORCHTPU_VEC V vector_at(const E& e, const void* const* in, int64_t i, int64_t n);

template <int K, class V, bool Tail, class E, size_t... I>
TORCHTPU_VEC V vector_map(const E& e, const void* const* in, int64_t i, int64_t n, std::index_sequence<I...>) {
  // fenced (vbarrier): the op's result is not contracted into the next op's arithmetic
  return vbarrier(e.op.simd(vector_at<K + arg_offset<E, I>(), V, Tail>(std::get<I>(e.args), in, i, n)...));
}

/// Vector form: lanes [i, i + V::lanes) of `e` as floats; with `Tail`, only the first `n` are
/// read (the others are 0).
template <int K, class V, bool Tail, class E>
TORCHTPU_VEC V vector_at(const E& e, const void* const* in, int64_t i, int64_t n) {
  if constexpr (is_weak_scalar<E>) {
    return V::set1(e.as_float);
  } else if constexpr (is_map_node<E>) {
    const V r = vector_map<K, V, Tail>(e, in, i, n, std::make_index_sequence<std::tuple_size_v<decltype(e.args)>>{});
    return round_to_storage<typename E::value_type>(r);
  } else {  // a leaf of f32, bf16 or half
    using S = typename E::value_type;
    return load_storage<V>(static_cast<const S*>(in[K]) + i, Tail ? n : int64_t(V::lanes));
  }
}

/// Lanes [0, n) of `e` into `out`: full vectors first, then one partial vector (the same
/// instructions per lane, so every element gets the same result whatever the split);
/// `NT`: non-temporal stores (`out` 64-byte aligned, float).
template <class V, class T, class E, bool NT>
TORCHTPU_VEC void vector_run(const E& e, const void* const* in, T* __restrict out, int64_t n) {
  constexpr int L = V::lanes;
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    if constexpr (NT) {
      // A region this large streams from memory: ask for each operand's line 2 KiB ahead
      // (W1 at 2^24 elements, AVX-512: 1.20 -> 0.99 ns/element on one core, 0.60 -> 0.50 on
      // two). Prefetches never fault, so running past an operand's end is harmless.
      if (i % 16 == 0)
        for (int k = 0; k < leaf_count<E>(); ++k)
          hwy::Prefetch(static_cast<const char*>(in[k]) + i * int64_t(sizeof(float)) + 2048);
    }
    const V r = vector_at<0, V, false>(e, in, i, L);
    if constexpr (NT) vstream(out + i, r);
    else store_storage(out + i, r, L);
  }
  if (i < n) store_storage(out + i, vector_at<0, V, true>(e, in, i, n - i), n - i);
}

/// The vector block kernel of `e` into a `T` destination, for any target's `V`.
template <class T, class E>
struct VectorBlock {
  template <class V>
  TORCHTPU_VEC void operator()(const BlockArgs& a, int64_t n) const {
    const E& e = *static_cast<const E*>(a.expr);
    T* out = static_cast<T*>(a.out);
    // Leaf pointers in locals (registers), not re-read from `a` after every store.
    constexpr int nl = leaf_count<E>() > 0 ? leaf_count<E>() : 1;
    const void* in[nl];
    for (int k = 0; k < nl; ++k) in[k] = a.in[k];
    if constexpr (std::same_as<T, float>) {
      if (a.stream && (reinterpret_cast<uintptr_t>(out) & 63) == 0) {
        vector_run<V, T, E, true>(e, in, out, n);
        vstream_fence(V::zero());  // order the non-temporal stores before the region's end
        return;
      }
    }
    vector_run<V, T, E, false>(e, in, out, n);
  }
};
#pragma GCC diagnostic pop
#endif

/// The kernel for `e` into a `T` destination: the vector one for the engine's instruction
/// set when the region, the destination type and the CPU allow it.
template <class T, class E>
BlockFn block_kernel() {
#if TORCHTPU_HAS_VECTOR_PATH
  if constexpr (vec_storage<T> && vectorizable<E>())
    return vector_entry<VectorBlock<T, E>, const BlockArgs&, int64_t>(&scalar_block<T, E>);
#endif
  return &scalar_block<T, E>;
}

/// Writes `e` into `dest` in one pass. With `check_overlap`, first checks that no operand
/// shares memory with `dest` at other positions; returns false (having written nothing) when
/// one does, so the caller can go through a temporary (NumPy's rule).
template <element T, int R, class E>
bool elementwise_region(const Tensor<T, R>& dest, const E& e, bool check_overlap, const EvalContext& ctx = {}) {
  static_assert(leaf_count<E>() <= max_region_leaves,
                "torchtpu: an elementwise expression reads more than 32 tensors; materialize part of it first");
  RegionLeaves l;
  add_leaves<0>(l, e, ctx);
  constexpr int64_t cost = region_cost<E>() > 1 ? region_cost<E>() : 1;
  constexpr int64_t grain = elementwise_grain / cost > elementwise_min_grain ? elementwise_grain / cost : elementwise_min_grain;
  return run_elementwise(l, block_kernel<T, E>(), &e, dest.data_ptr(), int(sizeof(T)), std::same_as<T, float>,
                         dest.sizes(), dest.strides(), check_overlap, grain);
}

// ---- the driver (compiled once per translation unit) ----------------------------------------

/// Elements per gathered block (a strided operand is copied this many at a time).
inline constexpr int64_t region_block = 512;


/// `gather_elems` for elements of E bytes: fixed-size copies the compiler turns into loads and
/// stores (a broadcast operand, stride 0, is one value filled). A copy of run-time size was a
/// libc call per element: 18 % of mobilenet_v2's forward at 224x224, in the bias of every
/// convolution's fused epilogue.
template <int E>
void gather_fixed(char* dst, const char* src, int64_t stride, int64_t n) {
  if (stride == 0) {
    // a 64-byte pattern of the value, stored whole (vector moves): one store per element was
    // 8 % of mobilenet_v2's forward (the bias of each 1x1 convolution's epilogue, 512 per row)
    constexpr int per = 64 / E;
    unsigned char pat[64];
    for (int i = 0; i < per; ++i) std::memcpy(pat + i * E, src, E);
    int64_t i = 0;
    for (; i + per <= n; i += per) std::memcpy(dst + i * E, pat, 64);
    for (; i < n; ++i) std::memcpy(dst + i * E, pat, E);
    return;
  }
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * E, src + i * stride * E, E);
}
/// `scatter_elems` for elements of E bytes.
template <int E>
void scatter_fixed(char* dst, int64_t stride, const char* src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * stride * E, src + i * E, E);
}

/// Calls `f(std::integral_constant<int, E>{})` for element widths E of 1, 2, 4 or 8 bytes and
/// returns true; false (nothing called) for another width.
template <class F>
bool with_fixed_width(int elem, F&& f) {
  switch (elem) {
    case 1: f(std::integral_constant<int, 1>{}); return true;
    case 2: f(std::integral_constant<int, 2>{}); return true;
    case 4: f(std::integral_constant<int, 4>{}); return true;
    case 8: f(std::integral_constant<int, 8>{}); return true;
    default: return false;
  }
}

/// Copies `n` elements of `elem` bytes from `src` (stride `stride` elements) to `dst`.
inline void gather_elems(char* dst, const char* src, int64_t stride, int64_t n, int elem) {
  if (with_fixed_width(elem, [&](auto e) { gather_fixed<decltype(e)::value>(dst, src, stride, n); })) return;
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * elem, src + i * stride * elem, size_t(elem));
}
/// Copies `n` elements of `elem` bytes from `src` to `dst` (stride `stride` elements).
inline void scatter_elems(char* dst, int64_t stride, const char* src, int64_t n, int elem) {
  if (with_fixed_width(elem, [&](auto e) { scatter_fixed<decltype(e)::value>(dst, stride, src, n); })) return;
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * stride * elem, src + i * elem, size_t(elem));
}

/// Runs rows [r0, r1) and inner positions [c0, c1) of `j` on this thread.
inline void run_region_rows(const RegionJob& j, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  const LoopPlan& p = j.plan;
  const int last = p.rank - 1;
  bool direct = j.out_st[last] == 1;
  for (int k = 0; k < j.nleaves; ++k) direct = direct && j.st[k][last] == 1;
  char* scratch = nullptr;
  if (!direct) {
    thread_local std::vector<char> buf;  // grows once per thread, then reused (no allocation)
    const size_t need = size_t(j.nleaves + 1) * region_block * 8 + 64;
    if (buf.size() < need) buf.resize(need);
    scratch = buf.data() + (64 - reinterpret_cast<uintptr_t>(buf.data()) % 64) % 64;
  }
  BlockArgs a;
  a.expr = j.expr;
  a.stream = j.stream;
  int64_t idx[max_rank] = {};
  for (int64_t row = r0; row < r1; ++row) {
    unflatten_row(p, row, idx);
    const char* base[max_region_leaves];
    for (int k = 0; k < j.nleaves; ++k) {
      int64_t off = 0;
      for (int d = 0; d < last; ++d) off += idx[d] * j.st[k][d];
      base[k] = j.leaf[k] + off * j.elem[k];
    }
    int64_t ooff = 0;
    for (int d = 0; d < last; ++d) ooff += idx[d] * j.out_st[d];
    char* obase = j.out + ooff * j.out_elem;
    if (direct) {
      for (int k = 0; k < j.nleaves; ++k) a.in[k] = base[k] + c0 * j.elem[k];
      a.out = obase + c0 * j.out_elem;
      j.fn(a, c1 - c0);
      continue;
    }
    for (int64_t c = c0; c < c1; c += region_block) {
      const int64_t n = c1 - c < region_block ? c1 - c : region_block;
      for (int k = 0; k < j.nleaves; ++k) {
        const int64_t s = j.st[k][last];
        if (s == 1) {
          a.in[k] = base[k] + c * j.elem[k];
        } else {
          char* dst = scratch + size_t(k) * region_block * 8;
          gather_elems(dst, base[k] + c * s * j.elem[k], s, n, j.elem[k]);
          a.in[k] = dst;
        }
      }
      const int64_t os = j.out_st[last];
      char* od = obase + c * os * j.out_elem;
      char* tmp = scratch + size_t(j.nleaves) * region_block * 8;
      a.out = os == 1 ? od : tmp;
      j.fn(a, n);
      if (os != 1) scatter_elems(od, os, tmp, n, j.out_elem);
    }
  }
}

inline int64_t region_rows(const LoopPlan& p) {
  int64_t r = 1;
  for (int d = 0; d + 1 < p.rank; ++d) r *= p.sizes[d];
  return r;
}

/// Runs all of `j`, split over the thread pool when large enough (by rows, or by inner
/// positions when there are fewer rows than chunks). Results do not depend on the split.
inline void run_region(const RegionJob& j) {
  const LoopPlan& p = j.plan;
  const int64_t n = p.sizes[p.rank - 1], rows = region_rows(p);
  const int64_t nchunks = chunks_for(rows * n, j.grain);
  if (nchunks <= 1) {
    run_region_rows(j, 0, rows, 0, n);
    return;
  }
  const bool by_rows = rows >= nchunks;
  parallel_chunks(by_rows ? rows : n, nchunks, by_rows ? 1 : 16, [&j, n, rows, by_rows](int64_t b, int64_t e) {
    if (by_rows) run_region_rows(j, b, e, 0, n);
    else run_region_rows(j, 0, rows, b, e);
  });
}

/// Sets `j`'s loop plan (dims coalesced when `merge`), destination and operands.
inline void plan_region(RegionJob& j, const RegionLeaves& l, void* out, int out_elem, const Dims& dsizes,
                        const Dims& dstrides, bool merge) {
  j.plan = make_plan(dsizes);
  if (merge) {
    OperandLayouts ops;
    ops.add(dsizes, dstrides);
    for (int k = 0; k < l.n; ++k) ops.add(*l.sizes[k], *l.strides[k]);
    coalesce(j.plan, ops);
  }
  j.set_out(out, out_elem, dsizes, dstrides);
  for (int k = 0; k < l.n; ++k) j.set_leaf(k, l.data[k], l.elem[k], *l.sizes[k], *l.strides[k]);
}

/// True when writing `out` while reading the operands could read an element after it was
/// overwritten: an operand's bytes intersect the destination's but it is not read at exactly
/// the position being written. Decided on address ranges, never on storages: two `from_blob`
/// tensors (or two imports of one torch tensor) have different storages over the same memory.
inline bool region_overlaps(const RegionLeaves& l, const void* out, int out_elem, const Dims& dsizes,
                            const Dims& dstrides) {
  const char *dlo, *dhi;
  if (!byte_extent(out, dsizes, dstrides, size_t(out_elem), dlo, dhi)) return false;
  for (int k = 0; k < l.n; ++k) {
    const char *lo, *hi;
    if (!byte_extent(l.data[k], *l.sizes[k], *l.strides[k], size_t(l.elem[k]), lo, hi) || hi < dlo || lo > dhi)
      continue;
    // Same element positions? (same address, same size, and same strides once broadcast)
    if (l.data[k] == out && l.elem[k] == out_elem) {
      const LoopPlan p = make_plan(dsizes);
      int64_t a[max_rank], b[max_rank];
      plan_strides(p, *l.sizes[k], *l.strides[k], a);
      plan_strides(p, dsizes, dstrides, b);
      bool same = true;
      for (int d = 0; d < p.rank; ++d) same = same && (a[d] == b[d] || p.sizes[d] == 1);
      if (same) continue;
    }
    return true;
  }
  return false;
}

/// The untyped body of `elementwise_region`.
inline bool run_elementwise(const RegionLeaves& l, BlockFn fn, const void* expr, void* out, int out_elem,
                            bool out_float, const Dims& dsizes, const Dims& dstrides, bool check_overlap,
                            int64_t grain = elementwise_grain) {
  if (check_overlap && region_overlaps(l, out, out_elem, dsizes, dstrides)) return false;
  RegionJob j;
  plan_region(j, l, out, out_elem, dsizes, dstrides, true);
  j.fn = fn;
  j.expr = expr;
  j.stream = out_float && numel(dsizes) * out_elem >= stream_store_bytes && j.out_st[j.plan.rank - 1] == 1;
  j.grain = grain;
  run_region(j);
  return true;
}

template <int Size>
void copy_block(const BlockArgs& a, int64_t n) {
  // the same block (x.copy_(x), or two handles of one memory): nothing to copy, and memcpy
  // of overlapping ranges is undefined; other overlaps went through a temporary (write_into)
  if (a.out != a.in[0]) std::memcpy(a.out, a.in[0], size_t(n) * Size);
}

/// dst = src (same element size `elem`, src broadcast to dst's shape), through the driver:
/// no per-type code, so every copy between tensors of one dtype shares it.
inline void copy_elements(void* dst, const Dims& dsizes, const Dims& dstrides, const void* src, const Dims& ssizes,
                          const Dims& sstrides, int elem) {
  RegionJob j;
  j.plan = make_plan(dsizes);
  OperandLayouts ops;
  ops.add(dsizes, dstrides);
  ops.add(ssizes, sstrides);
  coalesce(j.plan, ops);
  j.set_out(dst, elem, dsizes, dstrides);
  j.set_leaf(0, src, elem, ssizes, sstrides);
  j.fn = elem == 1 ? &copy_block<1> : elem == 2 ? &copy_block<2> : elem == 4 ? &copy_block<4> : &copy_block<8>;
  run_region(j);
}

}  // namespace torchtpu::detail
