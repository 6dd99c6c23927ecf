// torchtpu/ops/region.hpp — run-time elementwise regions on the cpu: a small program of
// float32 elementwise steps over numbered registers (an op struct of `RegionOps`, its operand
// registers, graph inputs or constants), run as ONE pass over cache-sized blocks of the output
// instead of one full materialization per step (docs/design.md, "Run-time fusion on the cpu").
//
// Each step runs its op struct's own vector form (`simd`) on the vector target the engine
// picks (fuse/simd.hpp: avx512 / avx2 / neon), or on `FloatLane` (TORCHTPU_CPU_ISA=scalar),
// and ops without a vector form their scalar kernel: the forms the typed path's fused loops
// use (fuse/elementwise.hpp, fuse/evaluator.hpp), so a region's values equal, bit for bit,
// those of its ops run one at a time. Model graphs find regions (jit/region.hpp); nothing here
// knows about graphs.
#pragma once
#include <algorithm>    // std::min, std::max, std::fill_n, std::find
#include <atomic>       // std::atomic (region_passes)
#include <concepts>     // std::same_as
#include <cstdint>      // int64_t, uintptr_t
#include <cstring>      // std::memcpy
#include <span>         // std::span
#include <string>       // std::string
#include <type_traits>  // std::type_identity
#include <utility>      // std::index_sequence
#include <vector>       // std::vector

#include "../core/errors.hpp"   // ValueError
#include "../core/tensor.hpp"   // Tensor, Dims
#include "../fuse/simd.hpp"     // vector_entry, FloatLane, vbarrier
#include "../fuse/threads.hpp"  // parallel_chunks, chunks_for
#include "../fuse/vec_eval.hpp" // elementwise_grain, elementwise_min_grain
#include "arith.hpp"            // AddOp, SubOp, MulOp, DivOp
#include "unary.hpp"            // the one-operand math ops and activations

namespace torchtpu::ops {

/// A list of the op structs region steps may run; an op is named by its index.
template <class... Ops>
struct RegionOpList {
  /// Number of ops.
  static constexpr int size = int(sizeof...(Ops));
  /// The index of `Op`, or -1 when it is not in the list.
  template <class Op>
  static constexpr int index() {
    int i = 0, r = -1;
    ((std::same_as<Op, Ops> ? (r = i, ++i) : ++i), ...);
    return r;
  }
  /// Calls `f(std::type_identity<Op>{})` for the op with index `id` (nothing for another id).
  template <class F>
  static void visit(int id, F&& f) {
    int i = 0;
    ((id == i++ ? (f(std::type_identity<Ops>{}), true) : false) || ...);
  }
};

/// The float32 → float32 elementwise op structs a region step may run: the binary arithmetic
/// of model graphs (aten::add/sub/rsub/mul/div), the one-operand math ops of `ops::UnaryOps`
/// whose float32 result is float32, and the activations (jit epilogues).
using RegionOps = RegionOpList<AddOp, SubOp, MulOp, DivOp, NegOp, AbsOp, ExpOp, LogOp, Log1pOp, Expm1Op, SqrtOp, RsqrtOp,
                               SinOp, CosOp, ErfOp, FloorOp, CeilOp, TruncOp, RoundOp, SignOp, TanhOp, SigmoidOp, ReluOp,
                               GeluOp, SiluOp, ClampOp, HardswishOp, HardsigmoidOp>;

/// The region op id of `Op` (its index in `RegionOps`), or -1.
template <class Op>
constexpr int region_op_id() {
  return RegionOps::index<Op>();
}

/// One operand of a region step: a register (an earlier step's result), a region input
/// (a float32 tensor that broadcasts to the region's shape) or a float constant.
struct RegionOperand {
  /// Where the operand comes from.
  enum class Kind : uint8_t { None, Reg, Input, Const };
  Kind kind = Kind::None;  ///< None: the step has no such operand
  int index = 0;           ///< the register or input number
  float value = 0;         ///< the constant
  /// Register `r`.
  static RegionOperand reg(int r) { return {Kind::Reg, r, 0}; }
  /// Region input `i`.
  static RegionOperand input(int i) { return {Kind::Input, i, 0}; }
  /// The constant `v` (a model graph's number, already converted to float as the node does).
  static RegionOperand constant(float v) { return {Kind::Const, 0, v}; }
};

/// One step: `out = op(a[, b])`. `lo`/`hi` are ClampOp's bounds, `flag` GeluOp's tanh form.
struct RegionStep {
  int op = -1;  ///< index in `RegionOps`
  RegionOperand a;  ///< the first operand
  RegionOperand b;  ///< the second operand (Kind::None for a one-operand op)
  int out = -1;  ///< result register (after `RegionProgram::allocate`: -1 for the last step, the output)
  double lo = 0;      ///< ClampOp's lower bound
  double hi = 0;      ///< ClampOp's upper bound
  bool flag = false;  ///< GeluOp's tanh approximation
};

/// A region program: steps in order; the last step's result is the region's output.
/// Build it with `unary` / `binary` (each returns the step's result as an operand), then
/// `allocate` (registers reused once their last reader has run).
struct RegionProgram {
  std::vector<RegionStep> steps;  ///< the steps, in order
  int n_regs = 0;  ///< physical registers (block buffers) after `allocate`

  /// Appends `op(x)`; `lo`, `hi`, `flag` are the op's parameters (ClampOp, GeluOp).
  /// **Errors:** ValueError for an op id that is not a one-operand region op.
  RegionOperand unary(int op, RegionOperand x, double lo = 0, double hi = 0, bool flag = false) {
    if (op < 0 || op >= RegionOps::size || arity(op) != 1)
      throw ValueError("region: op " + std::to_string(op) + " is not a one-operand region op");
    steps.push_back(RegionStep{op, x, RegionOperand{}, int(steps.size()), lo, hi, flag});
    return RegionOperand::reg(int(steps.size()) - 1);
  }
  /// Appends `op(x, y)`. **Errors:** ValueError for an op id that is not a binary region op.
  RegionOperand binary(int op, RegionOperand x, RegionOperand y) {
    if (op < 0 || op >= RegionOps::size || arity(op) != 2)
      throw ValueError("region: op " + std::to_string(op) + " is not a two-operand region op");
    steps.push_back(RegionStep{op, x, y, int(steps.size()), 0, 0, false});
    return RegionOperand::reg(int(steps.size()) - 1);
  }
  /// Maps each step's result to a physical register, reusing one after its last reader; the
  /// last step writes the output (out = -1). Call once, after the last step.
  void allocate() {
    const int n = int(steps.size());
    std::vector<int> last(size_t(n), -1), phys(size_t(n), -1);
    for (int i = 0; i < n; ++i)
      for (const RegionOperand* o : {&steps[size_t(i)].a, &steps[size_t(i)].b})
        if (o->kind == RegionOperand::Kind::Reg) last[size_t(o->index)] = i;
    std::vector<int> free_regs;
    n_regs = 0;
    for (int i = 0; i < n; ++i) {
      RegionStep& s = steps[size_t(i)];
      // a register whose last reader is this step is free for its result (elementwise: the
      // step reads element k before it writes element k, so its output may be its input)
      for (RegionOperand* o : {&s.a, &s.b}) {
        if (o->kind != RegionOperand::Kind::Reg) continue;
        const int v = o->index;
        o->index = phys[size_t(v)];
        if (last[size_t(v)] == i && std::find(free_regs.begin(), free_regs.end(), o->index) == free_regs.end())
          free_regs.push_back(o->index);
      }
      if (i == n - 1) {
        s.out = -1;
      } else if (!free_regs.empty()) {
        s.out = phys[size_t(i)] = free_regs.back();
        free_regs.pop_back();
      } else {
        s.out = phys[size_t(i)] = n_regs++;
      }
    }
  }
  /// Per-element cost in additions (the sum of the ops' `cost`, at least 1), which sizes the
  /// threads' grain as the typed path's `region_cost` does.
  int64_t cost() const {
    int64_t c = 0;
    for (const RegionStep& s : steps)
      RegionOps::visit(s.op, [&]<class Op>(std::type_identity<Op>) {
        if constexpr (requires { Op::cost; }) c += Op::cost;
        else c += 1;
      });
    return c > 1 ? c : 1;
  }
  /// 1 or 2: the operand count of region op `op`.
  static int arity(int op) {
    int r = 0;
    RegionOps::visit(op, [&]<class Op>(std::type_identity<Op>) {
      if constexpr (requires(const Op& o, float x) { o(x, x); }) r = 2;
      else r = 1;
    });
    return r;
  }
};

namespace detail {

/// Elements per block: one block buffer per live register (16 KiB of floats) stays in L1/L2.
inline constexpr int64_t region_block_elems = 4096;

/// How one region input is read for a block of the output: directly (contiguous with the
/// output's shape), as a constant (one element), or expanded into a block buffer through its
/// strides over the output's (coalesced) dims.
struct RegionInputLayout {
  const float* data = nullptr;
  bool direct = false, scalar = false;
  float value = 0;
  int rank = 0;
  int64_t size[max_rank] = {}, stride[max_rank] = {};
};

/// The layout of `x` (which broadcasts to `shape`) over `shape`'s row-major order.
inline RegionInputLayout region_layout(const Tensor<float>& x, const Dims& shape) {
  RegionInputLayout l;
  l.data = x.data_ptr();
  if (x.numel() == 1) {
    l.scalar = true;
    l.value = x.data_ptr()[0];
    return l;
  }
  const int R = int(shape.size()), off = R - int(x.dim());
  int64_t sz[max_rank], st[max_rank];
  int n = 0;
  bool direct = true;
  int64_t contig = 1;
  for (int d = R - 1; d >= 0; --d) {
    const int64_t s = d >= off && x.size(d - off) != 1 ? x.stride(d - off) : 0;
    if (shape[size_t(d)] != 1 && s != contig) direct = false;
    contig *= shape[size_t(d)];
  }
  l.direct = direct;
  if (direct) return l;
  for (int d = 0; d < R; ++d) {  // drop size-1 dims, merge dims that step like one
    if (shape[size_t(d)] == 1) continue;
    const int64_t s = d >= off && x.size(d - off) != 1 ? x.stride(d - off) : 0;
    if (n > 0 && st[n - 1] == s * shape[size_t(d)]) {
      sz[n - 1] *= shape[size_t(d)];
      st[n - 1] = s;
    } else {
      sz[n] = shape[size_t(d)];
      st[n] = s;
      ++n;
    }
  }
  l.rank = n;
  for (int d = 0; d < n; ++d) {
    l.size[d] = sz[d];
    l.stride[d] = st[d];
  }
  return l;
}

/// Elements [i0, i0 + n) of the output's row-major order, read from input `l`, into `dst`.
inline void region_expand(const RegionInputLayout& l, int64_t i0, int64_t n, float* dst) {
  int64_t idx[max_rank] = {};
  int64_t r = i0, off = 0;
  const int last = l.rank - 1;
  for (int d = last; d >= 0; --d) {
    idx[d] = r % l.size[d];
    r /= l.size[d];
    off += idx[d] * l.stride[d];
  }
  while (n > 0) {
    const int64_t run = std::min(l.size[last] - idx[last], n), s = l.stride[last];
    const float* p = l.data + off;
    if (s == 0) std::fill_n(dst, run, *p);
    else if (s == 1) std::memcpy(dst, p, size_t(run) * sizeof(float));
    else
      for (int64_t k = 0; k < run; ++k) dst[k] = p[k * s];
    dst += run;
    n -= run;
    idx[last] += run;
    off += run * s;
    for (int d = last; d > 0 && idx[d] == l.size[d]; --d) {
      off -= idx[d] * l.stride[d];
      idx[d] = 0;
      ++idx[d - 1];
      off += l.stride[d - 1];
    }
  }
}

/// What the block body sees: the program, each input's data for this block (null: the
/// constant in `in_value`), the register buffers and the output, `n` elements each.
struct RegionBlockArgs {
  const RegionProgram* prog = nullptr;
  const float* const* in = nullptr;
  const float* in_value = nullptr;
  float* const* reg = nullptr;
  float* out = nullptr;
  int64_t n = 0;
};

/// The op struct of step `s` with its parameters.
template <class Op>
Op region_op(const RegionStep& s) {
  if constexpr (std::same_as<Op, ClampOp>) return ClampOp{{}, s.lo, s.hi};
  else if constexpr (std::same_as<Op, GeluOp>) return GeluOp{{}, s.flag};
  else return Op{};
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"  // vectors passed between target and generic code

/// Lanes [i, i + m) of an operand (m <= lanes; lanes past m are 0), or the constant `c`.
template <class V>
TORCHTPU_VEC V region_load(const float* p, float c, int64_t i, int64_t m) {
  if (!p) return V::set1(c);
  if constexpr (std::same_as<V, torchtpu::detail::FloatLane>) return V::load(p + i);
  else return m >= V::lanes ? V::load(p + i) : V::load_n(p + i, m);
}
/// Lanes [0, m) of `v` to `d` (nothing else written).
template <class V>
TORCHTPU_VEC void region_store(float* d, V v, int64_t m) {
  if constexpr (std::same_as<V, torchtpu::detail::FloatLane>) *d = v.v;
  else vstore(d, v, m);
}

/// One step over the block: the op's vector form on `V` (full vectors, then one partial
/// vector, as the typed path's block kernels), or its scalar kernel when it has none.
template <class V, class Op>
TORCHTPU_VEC void region_step(const Op& op, const float* pa, float ca, const float* pb, float cb, float* d, int64_t n) {
  constexpr bool binary = requires(const Op& o, float x) { o(x, x); };
  if constexpr (binary) {
    if constexpr (requires(const Op& o, V v) { o.simd(v, v); }) {
      for (int64_t i = 0; i < n; i += V::lanes) {
        const int64_t m = n - i < V::lanes ? n - i : V::lanes;
        region_store(d + i, vbarrier(op.simd(region_load<V>(pa, ca, i, m), region_load<V>(pb, cb, i, m))), m);
      }
    } else {
      for (int64_t i = 0; i < n; ++i) d[i] = op(pa ? pa[i] : ca, pb ? pb[i] : cb);
    }
  } else {
    if constexpr (requires(const Op& o, V v) { o.simd(v); }) {
      for (int64_t i = 0; i < n; i += V::lanes) {
        const int64_t m = n - i < V::lanes ? n - i : V::lanes;
        region_store(d + i, vbarrier(op.simd(region_load<V>(pa, ca, i, m))), m);
      }
    } else {
      for (int64_t i = 0; i < n; ++i) d[i] = op(pa ? pa[i] : ca);
    }
  }
}

/// Step `s` (op index `s.op` of `Ops...`) over `n` elements.
template <class V, class... Ops>
TORCHTPU_VEC void region_dispatch(RegionOpList<Ops...>*, const RegionStep& s, const float* pa, float ca, const float* pb,
                                  float cb, float* d, int64_t n) {
  int i = 0;
  (void)((s.op == i++ ? (region_step<V>(region_op<Ops>(s), pa, ca, pb, cb, d, n), true) : false) || ...);
}

/// Operand `o` of a step in the current block: a pointer to `n` floats, or null and the constant.
inline void region_source(const RegionBlockArgs& a, const RegionOperand& o, const float*& p, float& c) {
  p = nullptr;
  c = o.value;
  if (o.kind == RegionOperand::Kind::Reg) {
    p = a.reg[o.index];
  } else if (o.kind == RegionOperand::Kind::Input) {
    p = a.in[o.index];
    c = a.in_value[o.index];
  }
}

/// The block body: every step of the program over `a.n` elements, for any target's `V`.
struct RegionBody {
  template <class V>
  TORCHTPU_VEC void operator()(const RegionBlockArgs& a) const {
    for (const RegionStep& s : a.prog->steps) {
      const float *pa, *pb;
      float ca, cb;
      region_source(a, s.a, pa, ca);
      region_source(a, s.b, pb, cb);
      float* d = s.out < 0 ? a.out : a.reg[s.out];
      region_dispatch<V>(static_cast<RegionOps*>(nullptr), s, pa, ca, pb, cb, d, a.n);
    }
  }
};

#pragma GCC diagnostic pop

inline void region_block_scalar(const RegionBlockArgs& a) { RegionBody{}.template operator()<torchtpu::detail::FloatLane>(a); }

}  // namespace detail

/// Number of region passes run by this process (`run_region` calls with a non-empty output):
/// lets tests and tools tell a region's one pass from its members run one by one.
inline std::atomic<int64_t>& region_passes() {
  static std::atomic<int64_t> n{0};
  return n;
}

/// Runs `prog` (after `allocate`) over `inputs` into a new contiguous float32 tensor of
/// `shape`, in one pass over blocks of the output (split over the thread pool like the typed
/// path's elementwise loops).
///
/// **Shapes:** every input broadcasts to `shape` (NumPy rules); the caller checks that.
/// **Dtypes:** float32 only; cpu tensors only.
/// **Errors:** ValueError for an operand naming an input or register that does not exist, or
/// an input that is not a cpu tensor (internal errors: the caller checks before).
inline Tensor<float> run_region(const RegionProgram& prog, std::span<const Tensor<float>> inputs, const Dims& shape) {
  for (const RegionStep& s : prog.steps)
    for (const RegionOperand* o : {&s.a, &s.b})
      if ((o->kind == RegionOperand::Kind::Input && (o->index < 0 || size_t(o->index) >= inputs.size())) ||
          (o->kind == RegionOperand::Kind::Reg && (o->index < 0 || o->index >= prog.n_regs)))
        throw ValueError("run_region: a step reads operand " + std::to_string(o->index) + " that does not exist");
  std::vector<detail::RegionInputLayout> lay;
  for (const Tensor<float>& x : inputs) {
    if (!x.device().is_cpu()) throw ValueError("run_region: inputs must be cpu tensors");
    lay.push_back(detail::region_layout(x, shape));
  }
  Tensor<float> out = Tensor<float>::empty(shape);
  const int64_t total = out.numel();
  if (total == 0 || prog.steps.empty()) return out;
  region_passes().fetch_add(1, std::memory_order_relaxed);
  using BlockFn = void (*)(const detail::RegionBlockArgs&);
  const BlockFn fn = torchtpu::detail::vector_entry<detail::RegionBody, const detail::RegionBlockArgs&>(&detail::region_block_scalar);
  float* const obase = out.data_ptr();
  const size_t nin = inputs.size(), nreg = size_t(prog.n_regs);
  auto run_range = [&](int64_t b, int64_t e) {
    // per-thread block buffers: one per register and per expanded input, 64-byte aligned
    thread_local std::vector<float> buf;
    const size_t need = (nreg + nin) * size_t(detail::region_block_elems) + 16;
    if (buf.size() < need) buf.resize(need);
    float* base = buf.data() + (16 - (reinterpret_cast<uintptr_t>(buf.data()) / sizeof(float)) % 16) % 16;
    std::vector<float*> reg(nreg + 1);
    for (size_t r = 0; r < nreg; ++r) reg[r] = base + r * size_t(detail::region_block_elems);
    std::vector<const float*> in(nin + 1);
    std::vector<float> in_value(nin + 1);
    for (int64_t i0 = b; i0 < e; i0 += detail::region_block_elems) {
      const int64_t n = std::min(detail::region_block_elems, e - i0);
      for (size_t k = 0; k < nin; ++k) {
        const detail::RegionInputLayout& l = lay[k];
        in_value[k] = l.value;
        if (l.scalar) {
          in[k] = nullptr;
        } else if (l.direct) {
          in[k] = l.data + i0;
        } else {
          float* dst = base + (nreg + k) * size_t(detail::region_block_elems);
          detail::region_expand(l, i0, n, dst);
          in[k] = dst;
        }
      }
      detail::RegionBlockArgs a{&prog, in.data(), in_value.data(), reg.data(), obase + i0, n};
      fn(a);
    }
  };
  const int64_t grain = std::max(torchtpu::detail::elementwise_grain / prog.cost(), torchtpu::detail::elementwise_min_grain);
  torchtpu::detail::parallel_chunks(total, torchtpu::detail::chunks_for(total, grain), 64, run_range);
  return out;
}

}  // namespace torchtpu::ops
