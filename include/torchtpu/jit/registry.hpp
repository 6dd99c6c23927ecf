// torchtpu/jit/registry.hpp — the operator registry of the run-time graph: each TorchScript node
// kind (`aten::linear`, `prim::ListConstruct`, ...) maps to one `OpDef` holding its CPU kernel,
// its fusion role and an optional StableHLO lowering; `register_op` adds user ops.
#pragma once
#include <cstdint>        // uint8_t
#include <functional>     // std::function
#include <map>            // std::map
#include <memory>         // std::shared_ptr
#include <mutex>          // std::mutex, std::lock_guard
#include <optional>       // std::optional (OpDef::run_chain)
#include <span>           // std::span
#include <string>         // std::string
#include <utility>        // std::move
#include <vector>         // std::vector

#include "../core/errors.hpp"  // ValueError
#include "value.hpp"           // Value

namespace torchtpu::jit {

/// An elementwise activation fused into the op that produces its input (the matmul/conv
/// epilogue, or one pass of an elementwise op), after a fused residual add when `residual`.
/// `lo`/`hi` are hardtanh's bounds.
struct Epilogue {
  /// The activation fused after the op (None: no epilogue). Gelu is the erf form, GeluTanh
  /// torch's `approximate='tanh'`.
  enum class Kind { None, Relu, Clamp, Silu, Sigmoid, Gelu, GeluTanh, Hardswish, Hardsigmoid, Tanh };
  /// Which activation.
  Kind kind = Kind::None;
  ///@{
  /// Clamp: lower and upper bounds.
  double lo = 0, hi = 0;
  ///@}
  /// A following `aten::add`/`add_` (alpha 1) fused in: the node's last input (the other
  /// operand) is added to the op's result before the activation (`OpDef::accepts_residual`).
  bool residual = false;
  /// True when an epilogue (an activation or a residual add) is set.
  bool active() const noexcept { return kind != Kind::None || residual; }
};

/// Execution modes (DESIGN.md): `debug` runs node by node with each output checked for
/// NaN/Inf; `strict` runs node by node; `fused` (the default) fuses activations into their
/// producers.
enum class Mode { Debug, Strict, Fused };

/// What a kernel sees: its inputs, the slots for its outputs (sized to the node's output
/// count), and the fused epilogue it must apply to its (single) output.
struct OpContext {
  /// The op's inputs.
  std::span<const Value* const> in;
  /// Where the op writes its outputs.
  std::span<Value> out;
  /// Activation to apply to the result, when the op fuses one.
  Epilogue epilogue{};
  /// What `OpDef::prepare` computed for this node when the graph was finalized (null when the
  /// op has no `prepare`, or it returned null: the kernel then reads its arguments itself).
  const void* state = nullptr;
  /// Argument `i`, with a clear error when the node has fewer inputs.
  const Value& arg(size_t i, const char* what) const {
    if (i >= in.size())
      throw ValueError(std::string(what) + ": expected at least " + std::to_string(i + 1) + " arguments, got " +
                       std::to_string(in.size()));
    return *in[i];
  }
};

/// What `OpDef::run_chain` sees: a chain of nodes of one op (jit/graph.hpp `find_conv_chains`),
/// each reading the previous one's result.
struct ChainCall {
  const Value* input = nullptr;             ///< the first node's input (its operand 0)
  std::span<const void* const> states;      ///< each node's prepared state (OpDef::prepare)
  std::span<const Epilogue> epilogues;      ///< each node's fused epilogue
  const Value* residual = nullptr;          ///< the last node's residual operand, or null
};

/// A CPU kernel: reads `ctx.in`, writes every `ctx.out[i]`. Throws torchtpu errors on bad
/// shapes or argument kinds.
using Kernel = std::function<void(OpContext& ctx)>;

/// Lowering slot for the PJRT path (the compiled path, jit/lower.hpp): adds the node's
/// StableHLO to the builder in `LowerContext` and fills its outputs. Ops without one make the
/// graph cpu-only; `DeviceProgram` lists them.
struct LowerContext;
using Lowering = std::function<void(LowerContext&)>;

/// A node's part in the run-time elementwise regions of `Mode::Fused` (jit/region.hpp): how
/// its float32 values are computed by region steps (ops/region.hpp). Registry entries without
/// one (user ops, in-place forms) are never region members.
struct RegionRole {
  /// What the node computes. Binary: `a op (alpha · b)` (aten::add/sub/mul/div, rsub with the
  /// operands swapped); Unary: the one-operand op `op`; Activation: the op's `epilogue_of`.
  enum class Kind : uint8_t { None, Binary, Unary, Activation };
  Kind kind = Kind::None;  ///< the node's role (None: never a member)
  int op = -1;           ///< the region op id (ops::region_op_id) of Binary and Unary roles
  bool reverse = false;  ///< Binary: operands swapped (rsub)
  bool alpha = false;    ///< Binary: input 2 is alpha
  bool mode = false;     ///< Binary: input 2 is a rounding mode (None only joins a region's fast path)
};

/// One operator: its TorchScript name, CPU kernel, optional lowering, and fusion roles.
struct OpDef {
  std::string name;       ///< TorchScript node kind, e.g. `aten::_convolution`
  Kernel kernel;          ///< CPU implementation (shape rule included: it checks and throws)
  Lowering lowering;      ///< optional StableHLO lowering (empty: host fallback on PJRT devices)
  /// Takes an `Epilogue` (linear, conv, add, ...): a following activation can fuse into it.
  bool accepts_epilogue = false;
  /// Takes an `Epilogue` with `residual` (the convolutions): a following `aten::add`/`add_`
  /// with alpha 1 of its result and a tensor computed before it fuses into it, the tensor
  /// passed as the node's last input.
  bool accepts_residual = false;
  /// Is an elementwise activation that can fuse into a producer; `epilogue_of(inputs)` says
  /// which one (returns Kind::None when the constant arguments do not allow it).
  std::function<Epilogue(std::span<const Value* const>)> epilogue_of;
  /// Writes into its first input (`relu_`, `add_`): never fused into a producer that is read
  /// elsewhere.
  bool in_place = false;
  /// Load-time argument check, run by Graph::finalize before anything runs: sees the node's
  /// inputs (the constant value, or null for a value computed at run time) and returns "" when
  /// the kernel and the lowering compute what torch computes for them; otherwise the argument,
  /// its value and why (`train=True, p=0.5: ...`), and the graph is rejected with the op's name.
  std::function<std::string(std::span<const Value* const>)> check;
  /// Its part in run-time elementwise regions (None: never a member).
  RegionRole region{};
  /// Rearranges its inputs without computing on tensor data (prim::ListConstruct, TupleConstruct,
  /// ListUnpack, NumToTensor, aten::Int): a node whose inputs are all constants is computed once
  /// by Graph::finalize and its outputs kept as constants.
  bool fold = false;
  /// Optional per-node state computed once, by Graph::finalize after `check` passed: sees the
  /// node's inputs (the constant value, or null for a value computed at run time) and returns
  /// what its kernel would otherwise derive from them on every run (the library ops: their
  /// `Op::Args` and where each tensor operand comes from), or null when it cannot be known
  /// before the run. The kernel receives it as `OpContext::state` and must give the same
  /// results with it as without it. Errors are not reported here: a throwing `prepare` leaves
  /// the state null and the kernel reports the problem when it runs, with the node's location.
  std::function<std::shared_ptr<const void>(std::span<const Value* const>)> prepare;
  /// Which link of a convolution chain a node of this op can be, from its prepared state
  /// (null: none): 0 none, 1 pointwise (a constant 1x1 float32 weight, one group), 2 depthwise
  /// (a constant float32 weight with one input channel per group, a group per input channel).
  /// The rest (stride, padding, shapes) is checked by `run_chain` when it runs.
  std::function<int(const void* state)> chain_role;
  /// Runs a chain of this op's nodes in one pass (the convolutions: ops/conv.hpp
  /// `conv2d_chain`), or returns nothing when the values do not allow it (then nothing was
  /// computed and the graph runs the nodes one by one, which gives their values or errors).
  std::function<std::optional<Value>(const ChainCall&)> run_chain;
};

/// The registry: node kind → OpDef. Thread-safe for registration; look-ups happen when a
/// model is loaded, never while it runs.
class Registry {
 public:
  /// Add or replace `def.name`. **Errors:** ValueError for an empty name or kernel.
  void add(OpDef def) {
    if (def.name.empty()) throw ValueError("register_op: empty operator name");
    if (!def.kernel) throw ValueError("register_op: '" + def.name + "' has no CPU kernel");
    const std::string name = def.name;  // (the right side of `=` is evaluated first)
    auto op = std::make_shared<const OpDef>(std::move(def));
    std::lock_guard<std::mutex> lock(mu_);
    ops_[name] = std::move(op);
  }
  /// The op named `name`, or null.
  std::shared_ptr<const OpDef> find(const std::string& name) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = ops_.find(name);
    return it == ops_.end() ? nullptr : it->second;
  }
  /// Every registered name, sorted.
  std::vector<std::string> names() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> r;
    for (const auto& [k, v] : ops_) r.push_back(k);
    return r;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<const OpDef>> ops_;
};

#ifdef TORCHTPU_JIT_SEPARATE_OPS
// The built-in ops compiled once, in src/jit/builtin_ops.cpp (linked by the program), instead
// of in every translation unit that runs a model (each such TU would otherwise compile every
// op's kernels: minutes per TU). A program defines TORCHTPU_JIT_SEPARATE_OPS in all its
// translation units or in none (docs/jit.md, "Compile time").
void register_builtin_ops(Registry& r);
#else
inline void register_builtin_ops(Registry& r);  // defined in builtin_ops.hpp (included below)
#endif

/// The process-wide registry, holding the built-in ops from the first call on.
inline Registry& registry() {
  static Registry r;
  static const bool initialised = [] {
    register_builtin_ops(r);
    return true;
  }();
  (void)initialised;
  return r;
}

}  // namespace torchtpu::jit

namespace torchtpu {

/// Register (or replace) the operator `name` (a TorchScript node kind such as
/// `"mylib::fancy"`) with a CPU kernel and optionally a StableHLO lowering. Models loaded
/// afterwards may use it. **Errors:** ValueError for an empty name or kernel.
inline void register_op(const std::string& name, jit::Kernel kernel, jit::Lowering lowering = {}) {
  jit::OpDef def;
  def.name = name;
  def.kernel = std::move(kernel);
  def.lowering = std::move(lowering);
  jit::registry().add(std::move(def));
}

}  // namespace torchtpu

#if !defined(TORCHTPU_JIT_SEPARATE_OPS) || defined(TORCHTPU_JIT_BUILTIN_OPS_TU)
#include "builtin_ops.hpp"  // register_builtin_ops: the definitions of the built-in ops
#endif
