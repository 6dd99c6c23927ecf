// torchtpu/fuse/plan.hpp — loop plans for fused CPU loops: which loop dims run over which
// reference dims, dim coalescing, and the memory-overlap test used for aliasing.
#pragma once
#include <cstdint>  // int64_t

#include "../core/shape.hpp"    // Dims, max_rank
#include "../core/storage.hpp"  // StorageImpl

namespace torchtpu::detail {

/// A loop nest over a reference shape of rank `n_ref`. Loop dim `j` runs `sizes[j]` times and
/// stands for reference dim `ref[j]` (after coalescing: the innermost dim of a merged group).
/// The last loop dim is the inner (row) loop. Rank is at least 1.
struct LoopPlan {
  int rank = 0;
  int n_ref = 0;
  int64_t sizes[max_rank] = {};
  int ref[max_rank] = {};
};

/// Per-loop-dim strides (elements) of an operand with `shape`/`strides`, broadcast against the
/// plan's reference shape (right-aligned; broadcast dims get stride 0).
inline void plan_strides(const LoopPlan& p, const Dims& shape, const Dims& strides, int64_t* out) {
  const int r = shape.size();
  for (int j = 0; j < p.rank; ++j) {
    const int k = p.ref[j] - (p.n_ref - r);
    out[j] = (k < 0 || shape[k] == 1) ? 0 : strides[k];
  }
}

/// Identity plan over `shape` with the dims listed in `order` (all dims, each once).
inline LoopPlan make_plan(const Dims& shape, const int* order = nullptr) {
  LoopPlan p;
  p.n_ref = shape.size();
  if (shape.size() == 0) {
    p.n_ref = 0;
    p.rank = 1;
    p.sizes[0] = 1;
    p.ref[0] = -1;  // rank-0: every operand broadcasts (stride 0)
    return p;
  }
  p.rank = shape.size();
  for (int j = 0; j < p.rank; ++j) {
    p.ref[j] = order ? order[j] : j;
    p.sizes[j] = shape[p.ref[j]];
  }
  return p;
}

/// The operands' layouts, collected before coalescing (at most 16 distinct operands matter;
/// more operands simply disable coalescing).
struct OperandLayouts {
  static constexpr int cap = 16;
  int n = 0;
  bool overflow = false;
  Dims shape[cap];
  Dims strides[cap];
  void add(const Dims& sh, const Dims& st) {
    if (n == cap) { overflow = true; return; }
    shape[n] = sh;
    strides[n] = st;
    ++n;
  }
};

/// Merge adjacent loop dims j, j+1 when every operand has stride[j] == stride[j+1] * size[j+1],
/// and drop size-1 dims. With `barrier` >= 0, dims [0, barrier) and [barrier, rank) are
/// coalesced separately (never merged across); the returned value is the new barrier. The
/// second group (or the only one) keeps at least one dim.
inline int coalesce(LoopPlan& p, const OperandLayouts& ops, int barrier = -1) {
  if (ops.overflow) return barrier;
  int64_t st[OperandLayouts::cap][max_rank];
  for (int o = 0; o < ops.n; ++o) plan_strides(p, ops.shape[o], ops.strides[o], st[o]);
  LoopPlan q;
  q.n_ref = p.n_ref;
  int64_t qst[OperandLayouts::cap][max_rank];
  auto run = [&](int begin, int end, bool keep_one) {
    const int first = q.rank;
    for (int j = begin; j < end; ++j) {
      if (p.sizes[j] == 1) continue;
      bool merge = q.rank > first;
      for (int o = 0; o < ops.n && merge; ++o) merge = qst[o][q.rank - 1] == st[o][j] * p.sizes[j];
      if (merge) {
        q.sizes[q.rank - 1] *= p.sizes[j];
        q.ref[q.rank - 1] = p.ref[j];
        for (int o = 0; o < ops.n; ++o) qst[o][q.rank - 1] = st[o][j];
      } else {
        q.sizes[q.rank] = p.sizes[j];
        q.ref[q.rank] = p.ref[j];
        for (int o = 0; o < ops.n; ++o) qst[o][q.rank] = st[o][j];
        ++q.rank;
      }
    }
    if (keep_one && q.rank == first) {
      q.sizes[q.rank] = 1;
      q.ref[q.rank] = end > begin ? p.ref[end - 1] : -1;
      ++q.rank;
    }
  };
  int nb = -1;
  if (barrier >= 0) {
    run(0, barrier, false);
    nb = q.rank;
    run(barrier, p.rank, true);
  } else {
    run(0, p.rank, true);
  }
  p = q;
  return nb;
}

/// Address range [lo, hi] (bytes) touched by a strided view; false if it touches nothing.
inline bool byte_extent(const void* base, const Dims& shape, const Dims& strides, size_t elem,
                        const char*& lo, const char*& hi) {
  int64_t mn = 0, mx = 0;
  for (int i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) return false;
    const int64_t span = (shape[i] - 1) * strides[i];
    if (span < 0) mn += span; else mx += span;
  }
  lo = static_cast<const char*>(base) + mn * int64_t(elem);
  hi = static_cast<const char*>(base) + (mx + 1) * int64_t(elem) - 1;
  return true;
}

}  // namespace torchtpu::detail
