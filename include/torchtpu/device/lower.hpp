// torchtpu/device/lower.hpp — the device runtime's lowering: turns an `ExprTree` (the plain-data
// form of an expression, device/frontend.hpp) into a statement of the deferred graph — its
// device inputs, a signature and a closure that emits it as StableHLO — under the execution
// mode (fused: one statement per expression; strict/debug: one per op, run now). Installs the
// `DeviceHooks` table the typed front end calls. Non-template code, compiled only in
// translation units that include <torchtpu/device.hpp>.
//
// Op knowledge stays in the op structs (STYLE.md §4): an op lowers through its `hlo` name
// ("stablehlo.add" → add, "chlo.erf" → erf, "EQ".."GE" → compare, "stablehlo.select",
// "stablehlo.convert"), or through its own hook when the mapping is not 1:1:
//   `template <class B, class V> V lower(B& b, const V* x) const;`
// where `x` are the operands already converted to the op's compute dtype and broadcast to the
// result shape (B = ConstantHoistingBuilder, V = stablehlo::Value). A reduction may add
//   `template <class B, class V> static V lower_finalize(B& b, const V& acc, int64_t count);`
// Hooks are found by op name in tables built here from the list of op structs
// (`ops::ElementwiseOps`, ops/all.hpp): an op struct with a hook must be listed there.
#pragma once
#include <array>          // std::array
#include <bit>            // std::bit_cast
#include <cstdint>        // int64_t
#include <cstring>        // std::memcpy
#include <limits>         // std::numeric_limits
#include <memory>         // std::shared_ptr
#include <string>         // std::string
#include <string_view>    // std::string_view
#include <unordered_map>  // std::unordered_map
#include <vector>         // std::vector

#include "../ops/all.hpp"      // LibraryOps (the operator library's lowerings)
#include "../ops/arith.hpp"    // op structs (hooks)
#include "../ops/compare.hpp"  // op structs (hooks)
#include "../ops/reduce.hpp"   // op structs (hooks); ops::detail::lower_softmax
#include "../ops/unary.hpp"    // op structs (hooks)
#include "frontend.hpp"        // DeviceHooks, NodeInfo
#include "graph.hpp"           // PendingGraph, Statement, Emitter, upload, view_of
#include "tree.hpp"            // ExprTree, assign_tree

namespace torchtpu {
namespace device::detail {

using stablehlo::Builder;
using stablehlo::Value;

// ---- non-template helpers ----------------------------------------------------------------

inline Value convert_to(Builder& b, const Value& v, ScalarType t) {
  return v.dtype == t ? v : b.convert(v, t);
}

/// NumPy broadcast of `v` to `dims` (trailing axes aligned).
inline Value broadcast_to(Builder& b, const Value& v, const std::vector<int64_t>& dims) {
  if (v.dims == dims) return v;
  std::vector<int64_t> map;
  const int64_t lead = static_cast<int64_t>(dims.size()) - v.rank();
  for (int64_t i = 0; i < v.rank(); ++i) map.push_back(lead + i);
  return b.broadcast_in_dim(v, dims, map);
}

inline std::vector<int64_t> to_vec(const Dims& d) { return std::vector<int64_t>(d.begin(), d.end()); }

/// Applies an op by its `hlo` name to operands of equal dtype and shape.
/// **Errors:** UnsupportedOperator naming the op when it has no StableHLO lowering.
inline Value apply_hlo(Builder& b, std::string_view hlo, std::string_view name, const Value* x, size_t n) {
  constexpr std::string_view prefix = "stablehlo.";
  if (hlo == "chlo.erf" && n == 1) return b.unary("erf", x[0]);
  static constexpr std::string_view kDirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
  for (int d = 0; d < 6; ++d)
    if (hlo == kDirs[d] && n == 2) return b.compare(static_cast<stablehlo::CompareDirection>(d), x[0], x[1]);
  if (hlo.substr(0, prefix.size()) == prefix) {
    const std::string_view op = hlo.substr(prefix.size());
    if (op == "convert" && n == 1) return x[0];  // the front end converts to the result type
    if (op == "select" && n == 3) return b.select(x[0], x[1], x[2]);
    if (n == 1) return b.unary(op, x[0]);
    if (n == 2) return b.binary(op, x[0], x[1]);
  }
  throw UnsupportedOperator("op '" + std::string(name) + "' (" + std::to_string(n) +
                            " operands) has no StableHLO lowering on PJRT devices yet");
}

inline stablehlo::ReduceOp reduce_op_for(std::string_view hlo, std::string_view name) {
  if (hlo == "stablehlo.add") return stablehlo::ReduceOp::Add;
  if (hlo == "stablehlo.multiply") return stablehlo::ReduceOp::Mul;
  if (hlo == "stablehlo.maximum") return stablehlo::ReduceOp::Max;
  if (hlo == "stablehlo.minimum") return stablehlo::ReduceOp::Min;
  if (hlo == "stablehlo.and") return stablehlo::ReduceOp::And;
  if (hlo == "stablehlo.or") return stablehlo::ReduceOp::Or;
  throw UnsupportedOperator("reduction '" + std::string(name) + "' has no StableHLO lowering yet");
}

/// The identity of a reducer in dtype `t` (-inf for max on floats, lowest for integers, ...);
/// integer identities are exact integer literals (INT64_MAX itself, not a nearby double).
inline Value reduce_identity(Builder& b, stablehlo::ReduceOp op, ScalarType t) {
  const double inf = std::numeric_limits<double>::infinity();
  const bool is_int = !is_floating(t);
  const auto [lo, hi] = stablehlo::int_range(t);
  switch (op) {
    case stablehlo::ReduceOp::Add: case stablehlo::ReduceOp::Or: return b.constant_int(0, t);
    case stablehlo::ReduceOp::Mul: case stablehlo::ReduceOp::And: return b.constant_int(1, t);
    case stablehlo::ReduceOp::Max: return is_int ? b.constant_int(lo, t) : b.constant(-inf, t);
    case stablehlo::ReduceOp::Min: return is_int ? b.constant_int(hi, t) : b.constant(inf, t);
  }
  throw DeviceError(13, "internal: unknown reducer");
}

/// Reduction of `x` over `dims` by the reducer whose `hlo` name is given (identity as init).
/// A float max/min is NaN where any reduced element is NaN (torch.max / amax semantics):
/// StableHLO's `maximum` propagates NaN, but XLA's CPU plugin (xla-cpu-pjrt 0.0.1) reduces
/// [1, NaN, 3, NaN] with it to 3, so the NaN is found with its own `or` reduction of `x != x`
/// and selected, on every backend.
inline Value lower_reduce(Builder& b, const Value& x, std::string_view hlo, std::string_view name,
                          const std::vector<int64_t>& dims) {
  const auto rop = reduce_op_for(hlo, name);
  Value r = b.reduce(x, reduce_identity(b, rop, x.dtype), rop, dims);
  if ((rop != stablehlo::ReduceOp::Max && rop != stablehlo::ReduceOp::Min) || !is_floating(x.dtype)) return r;
  Value nan = b.compare(stablehlo::CompareDirection::NE, x, x);
  Value any_nan = b.reduce(nan, b.constant_int(0, ScalarType::Bool), stablehlo::ReduceOp::Or, dims);
  return b.select(any_nan, b.constant(std::numeric_limits<double>::quiet_NaN(), x.dtype, r.dims), r);
}

inline std::vector<int64_t> mask_dims(uint32_t mask, int rank) {
  std::vector<int64_t> d;
  for (int i = 0; i < rank; ++i)
    if (mask & (1u << i)) d.push_back(i);
  return d;
}

/// argmax / argmin of `x` along `dim` (first index of the extreme; NaN counts as extreme).
inline Value lower_argreduce(Builder& b, Value x, int dim, bool is_max) {
  if (dim < 0) {
    x = b.reshape(x, {x.numel()});
    dim = 0;
  }
  const auto op = is_max ? stablehlo::ReduceOp::Max : stablehlo::ReduceOp::Min;
  Value m = b.reduce(x, reduce_identity(b, op, x.dtype), op, {dim});
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < x.rank(); ++i)
    if (i != dim) keep.push_back(i);
  Value mb = b.broadcast_in_dim(m, x.dims, keep);
  Value hit = b.compare(stablehlo::CompareDirection::EQ, x, mb);
  if (is_floating(x.dtype)) hit = b.binary("or", hit, b.compare(stablehlo::CompareDirection::NE, x, x));
  Value iota = b.iota(ScalarType::Int64, x.dims, dim);
  Value big = b.constant_int(x.dims[static_cast<size_t>(dim)], ScalarType::Int64, x.dims);
  Value idx = b.select(hit, iota, big);
  return b.reduce(idx, b.constant_int(x.dims[static_cast<size_t>(dim)], ScalarType::Int64),
                  stablehlo::ReduceOp::Min, {dim});
}

/// torch.matmul on values of dtype `t` (1-D promotion, batch broadcasting), result `out`.
inline Value lower_matmul(Builder& b, Value a, Value c, const std::vector<int64_t>& batch, int64_t m,
                          int64_t k, int64_t n, const std::vector<int64_t>& out, stablehlo::Precision p,
                          ScalarType acc) {
  std::vector<int64_t> ad = batch, cd = batch;
  ad.push_back(m);
  ad.push_back(k);
  cd.push_back(k);
  cd.push_back(n);
  auto fit = [&b](Value v, const std::vector<int64_t>& want, bool is_rhs_vector) {
    if (v.rank() == 1) v = b.reshape(v, is_rhs_vector ? std::vector<int64_t>{v.dims[0], 1}
                                                      : std::vector<int64_t>{1, v.dims[0]});
    return broadcast_to(b, v, want);
  };
  a = fit(a, ad, false);
  c = fit(c, cd, true);
  stablehlo::DotDims dn;
  const int64_t nb = static_cast<int64_t>(batch.size());
  for (int64_t i = 0; i < nb; ++i) {
    dn.lhs_batch.push_back(i);
    dn.rhs_batch.push_back(i);
  }
  dn.lhs_contract = {nb + 1};
  dn.rhs_contract = {nb};
  Value r = b.dot_general(a, c, dn, p, acc);
  return r.dims == out ? r : b.reshape(r, out);
}

// ---- op hooks, by name ---------------------------------------------------------------------

using MapHook = Value (*)(ConstantHoistingBuilder&, const std::string& state, const Value* x);
using FinalizeHook = Value (*)(ConstantHoistingBuilder&, const Value& acc, int64_t count);

/// The op struct back from the bytes `add_to_tree` stored (default-constructed when empty).
template <class Op>
Op op_from_bytes(const std::string& state) {
  if constexpr (std::is_empty_v<Op>) {
    return Op{};
  } else {
    std::array<char, sizeof(Op)> raw{};
    if (state.size() != sizeof(Op))
      throw DeviceError(13, "internal: op '" + std::string(Op::name) + "' state has the wrong size");
    std::memcpy(raw.data(), state.data(), sizeof(Op));
    return std::bit_cast<Op>(raw);
  }
}

template <class Op>
Value map_hook(ConstantHoistingBuilder& b, const std::string& state, const Value* x) {
  return op_from_bytes<Op>(state).lower(b, x);
}
template <class Op>
Value finalize_hook(ConstantHoistingBuilder& b, const Value& acc, int64_t count) {
  return Op::lower_finalize(b, acc, count);
}

struct OpHooks {
  std::unordered_map<std::string_view, MapHook> map;
  std::unordered_map<std::string_view, FinalizeHook> finalize;
};

template <class... Ops>
OpHooks collect_hooks() {
  OpHooks h;
  auto one = [&h]<class Op>(std::type_identity<Op>) {
    if constexpr (requires(ConstantHoistingBuilder& b, const Value* x) { std::declval<const Op&>().lower(b, x); })
      if (!h.map.emplace(Op::name, &map_hook<Op>).second)
        throw DeviceError(13, "internal: two ops named '" + std::string(Op::name) + "' have lowering hooks");
    if constexpr (requires(ConstantHoistingBuilder& b, const Value& v) { Op::lower_finalize(b, v, int64_t{1}); })
      h.finalize.emplace(Op::name, &finalize_hook<Op>);
  };
  (one(std::type_identity<Ops>{}), ...);
  return h;
}

template <class... Ops>
OpHooks collect_hooks_of(ops::OpList<Ops...>) {
  return collect_hooks<Ops...>();
}

/// The hooks of every elementwise and reduction op struct (ops::ElementwiseOps, ops/all.hpp;
/// the ones without hooks are harmless here). Compiled once in a TORCHTPU_SEPARATE_OPS program
/// (src/ops/library.cpp), as the library's lowerings below.
#if defined(TORCHTPU_SEPARATE_OPS) && !defined(TORCHTPU_OPS_LIBRARY_TU)
const OpHooks& op_hooks();
#else
TORCHTPU_OPS_EVERY_OP_ const OpHooks& op_hooks() {
  static const OpHooks h = collect_hooks_of(ops::ElementwiseOps{});
  return h;
}
#endif

/// A library op's lowering (ops/library.hpp): its operands as lowered (converted here by
/// `ops::operand_dtype`), its `Args` as bytes, the result dtype and shape.
using LibraryHook = Value (*)(ConstantHoistingBuilder&, const std::string& state, std::vector<Value> x,
                              ScalarType result, const Dims& out);

template <class Op>
Value library_hook(ConstantHoistingBuilder& b, const std::string& state, std::vector<Value> x, ScalarType result,
                   const Dims& out) {
  using Args = typename Op::Args;
  if constexpr (ops::multi_result<Op>) {
    // one node per result: the state says which (ops::detail::ResultState); the shapes of
    // every result come from the op's rule on the operands as they arrive
    using State = ops::detail::ResultState<Args>;
    std::array<char, sizeof(State)> raw{};
    if (state.size() != sizeof(State))
      throw DeviceError(13, "internal: op '" + std::string(Op::name) + "' arguments have the wrong size");
    std::memcpy(raw.data(), state.data(), sizeof(State));
    const State st = std::bit_cast<State>(raw);
    std::vector<ops::TensorMeta> metas;
    for (const Value& v : x) metas.push_back(ops::TensorMeta{v.dtype, Dims(v.dims.begin(), v.dims.end()), Device{}, true});
    const auto outs = Op::infer(std::span<const ops::TensorMeta>(metas), st.args);
    if (st.result < 0 || static_cast<size_t>(st.result) >= outs.size() || outs[static_cast<size_t>(st.result)].sizes != out)
      throw DeviceError(13, "internal: op '" + std::string(Op::name) + "' result " + std::to_string(st.result) + " does not match its node");
    for (size_t i = 0; i < x.size(); ++i) x[i] = convert_to(b, x[i], ops::operand_dtype<Op>(i, x[i].dtype, result));
    auto r = Op::lower(b, std::span<const Value>(x), st.args, std::span<const ops::TensorMeta>(outs));
    return r[static_cast<size_t>(st.result)];
  } else {
    std::array<char, sizeof(Args)> raw{};
    if (state.size() != sizeof(Args))
      throw DeviceError(13, "internal: op '" + std::string(Op::name) + "' arguments have the wrong size");
    std::memcpy(raw.data(), state.data(), sizeof(Args));
    for (size_t i = 0; i < x.size(); ++i) x[i] = convert_to(b, x[i], ops::operand_dtype<Op>(i, x[i].dtype, result));
    return Op::lower(b, std::span<const Value>(x), std::bit_cast<Args>(raw), out);
  }
}

/// The lowerings of every op of the operator library (ops/all.hpp), by op name.
#if defined(TORCHTPU_SEPARATE_OPS) && !defined(TORCHTPU_OPS_LIBRARY_TU)
const std::unordered_map<std::string_view, LibraryHook>& library_hooks();
#else
TORCHTPU_OPS_EVERY_OP_ const std::unordered_map<std::string_view, LibraryHook>& library_hooks() {
  static const auto m = [] {
    std::unordered_map<std::string_view, LibraryHook> r;
    ops::LibraryOps::for_each([&r]<class Op>(std::type_identity<Op>) {
      if (!r.emplace(Op::name, &library_hook<Op>).second)
        throw DeviceError(13, "internal: two library ops are named '" + std::string(Op::name) + "'");
    });
    return r;
  }();
  return m;
}
#endif

// ---- the tree: device, signature, inputs, lowering ----------------------------------------

/// The device an expression runs on: its device tensors must agree; rank-0 cpu tensors may
/// join (uploaded, as PyTorch allows cpu scalars); other cpu tensors are an error.
inline std::optional<Device> tree_device(const ExprTree& t) {
  std::optional<Device> dev, cpu_seen;
  for (const TreeLeaf& l : t.leaves) {
    if (!l.storage) throw ValueError("expression has an undefined tensor operand");
    if (l.device.is_cpu()) {
      if (l.sizes.size() == 0) continue;
      if (dev) throw mixed_devices(*dev, l.device);
      cpu_seen = l.device;
    } else {
      if (cpu_seen) throw mixed_devices(*cpu_seen, l.device);
      if (dev && *dev != l.device) throw mixed_devices(*dev, l.device);
      dev = l.device;
    }
  }
  return dev;
}

template <class T>
void append_bytes(std::string& s, const T& v) {
  s.append(reinterpret_cast<const char*>(&v), sizeof(T));
}
inline void append_dims(std::string& s, const Dims& d) {
  s += '[';
  for (int64_t x : d) s += std::to_string(x) + ',';
  s += ']';
}

/// The structure of `t` (everything but the leaves' data): equal signatures emit equal text.
inline void append_tree_sig(std::string& s, const ExprTree& t) {
  for (const TreeNode& n : t.nodes) {
    s += static_cast<char>('a' + static_cast<int>(n.kind));
    s += static_cast<char>('0' + static_cast<int>(n.dtype));
    s += static_cast<char>('0' + static_cast<int>(n.compute));
    s.append(n.name);
    s += '/';
    s.append(n.hlo);
    s += '/';
    s += std::to_string(n.op_state.size()) + ':' + n.op_state;
    append_dims(s, n.shape);
    for (int c : n.children) s += std::to_string(c) + ',';
    s += n.promote_first_to_bool ? 'p' : '-';
    s += n.keepdim ? 'k' : 'r';
    s += n.log ? 'l' : '-';
    append_bytes(s, n.mask);
    append_bytes(s, n.dim);
    if (n.kind == TreeNode::Kind::Scalar && n.input >= 0) {
      s += 'S' + std::to_string(n.input);  // a program input: the value is not part of the text
    } else {
      append_bytes(s, n.scalar);
      if (n.int_scalar) {
        s += 'i';
        append_bytes(s, n.iscalar);
      }
    }
    s += std::to_string(n.leaf);
    if (n.kind == TreeNode::Kind::Contract) {
      append_dims(s, n.batch);
      append_bytes(s, n.m);
      append_bytes(s, n.k);
      append_bytes(s, n.n);
    }
    s += ';';
  }
  s += 'R' + std::to_string(t.root);
}

/// The statement's inputs, one per leaf in order, and the leaves' part of the signature. A
/// rank-0 cpu tensor joining a device expression enters like a scalar: its value, read now,
/// as a cached one-element buffer (`PendingGraph::scalar_buffer`).
inline void collect_inputs(PendingGraph& g, const ExprTree& t, std::vector<Ref>& inputs, std::string& sig) {
  for (const TreeLeaf& l : t.leaves) {
    sig += 'L';
    if (l.device.is_cpu()) {  // rank-0 cpu tensor joining a device expression
      const size_t elem = dtype_size(l.dtype);
      uint64_t bits = 0;
      std::memcpy(&bits, static_cast<const char*>(l.storage->data) + l.offset * static_cast<int64_t>(elem), elem);
      Ref r;
      r.buffer = g.scalar_buffer(l.dtype, bits);
      r.dtype = l.dtype;
      r.scalar = true;
      inputs.push_back(std::move(r));
      sig += "[][][]0";
      continue;
    }
    auto arr = std::static_pointer_cast<DeviceArray>(l.storage->device_handle);
    if (!arr) throw ValueError("device tensor on " + l.device.str() + " has no device buffer");
    check_view(arr->dtype, arr->dims, l.sizes, l.strides, l.offset);
    inputs.push_back(g.ref_for(*arr));
    append_dims(sig, Dims(arr->dims.begin(), arr->dims.end()));
    append_dims(sig, l.sizes);
    append_dims(sig, l.strides);
    sig += std::to_string(l.offset);
  }
}

/// The bytes of scalar node `n`'s value in dtype `t` (the first `dtype_size(t)` bytes of the
/// result), converted as `scalar_constant` would write it: integer scalars wrap exactly into
/// integer dtypes, other values saturate (StableHLO's float-to-int convert) or round to `t`.
inline uint64_t scalar_bits(const TreeNode& n, ScalarType t) {
  uint64_t bits = 0;
  auto put = [&bits](auto v) { std::memcpy(&bits, &v, sizeof v); };
  auto int_value = [&] { return n.int_scalar ? stablehlo::wrap_to_int(n.iscalar, t) : stablehlo::saturate_to_int(n.scalar, t); };
  switch (t) {
    case ScalarType::Bool: put(static_cast<uint8_t>(n.int_scalar ? n.iscalar != 0 : n.scalar != 0)); break;
    case ScalarType::UInt8: put(static_cast<uint8_t>(int_value())); break;
    case ScalarType::Int32: put(static_cast<int32_t>(int_value())); break;
    case ScalarType::Int64: put(int_value()); break;
    case ScalarType::Half: put(half(static_cast<float>(n.scalar)).bits); break;
    case ScalarType::BFloat16: put(bfloat16(static_cast<float>(n.scalar)).bits); break;
    case ScalarType::Float: put(static_cast<float>(n.scalar)); break;
    case ScalarType::Double: put(n.scalar); break;
  }
  return bits;
}

/// Makes every scalar node of `t` a program input (DESIGN.md §5: changing a number never
/// recompiles): a cached one-element buffer of the dtype the node is used in — the compute
/// dtype of the elementwise op reading it (after promotion: for `x * 0.5` with x bf16, the
/// op's opmath f32, as torch computes with a wrapped number), bool for where's condition, the
/// node's own dtype elsewhere. Sets `TreeNode::input`; appends the inputs' dtypes to `sig`.
/// Constants that are part of an op's meaning stay constants in the text: op state (clamp
/// bounds), literals of op hooks and of the lowering (reduction identities, integer
/// literals, padding), shapes.
inline void collect_scalar_inputs(PendingGraph& g, ExprTree& t, std::vector<Ref>& inputs, std::string& sig) {
  std::vector<ScalarType> want(t.nodes.size());
  for (size_t i = 0; i < t.nodes.size(); ++i) want[i] = t.nodes[i].dtype;
  for (const TreeNode& n : t.nodes)
    if (n.kind == TreeNode::Kind::Map)
      for (size_t i = 0; i < n.children.size(); ++i)
        want[static_cast<size_t>(n.children[i])] =
            (i == 0 && n.promote_first_to_bool) ? ScalarType::Bool : n.compute;
  for (size_t i = 0; i < t.nodes.size(); ++i) {
    TreeNode& n = t.nodes[i];
    if (n.kind != TreeNode::Kind::Scalar) continue;
    Ref r;
    r.buffer = g.scalar_buffer(want[i], scalar_bits(n, want[i]));
    r.dtype = want[i];
    r.scalar = true;
    n.input = static_cast<int>(inputs.size());
    inputs.push_back(std::move(r));
    sig += 'S';
    sig += static_cast<char>('0' + static_cast<int>(want[i]));
  }
}

/// The value of scalar node `n` as a splat constant of `dtype`: integer scalars stay integers
/// (exact above 2^53), others go through their double value.
inline Value scalar_constant(ConstantHoistingBuilder& b, const TreeNode& n, ScalarType dtype,
                             const std::vector<int64_t>& dims) {
  if (n.int_scalar && !is_floating(dtype)) return b.constant_int(n.iscalar, dtype, dims);
  return b.constant(n.scalar, dtype, dims);
}

/// Scalar node `n` as a value of `dtype` broadcast to `dims`: its program input when it has
/// one, else a splat constant.
inline Value scalar_value(Emitter& em, const TreeNode& n, ScalarType dtype, const std::vector<int64_t>& dims) {
  if (n.input < 0) return scalar_constant(em.builder(), n, dtype, dims);
  auto& b = em.builder();
  return broadcast_to(b, convert_to(b, em.input(static_cast<size_t>(n.input)), dtype), dims);
}

/// Emits node `idx` of `t`; the result has the node's dtype and shape.
inline Value lower_node(Emitter& em, const ExprTree& t, int idx, stablehlo::Precision prec) {
  auto& b = em.builder();  // constants through the hoisting builder (also in op hooks)
  const TreeNode& n = t.nodes[static_cast<size_t>(idx)];
  const std::vector<int64_t> out = to_vec(n.shape);
  auto child = [&](size_t i) { return lower_node(em, t, n.children.at(i), prec); };
  switch (n.kind) {
    case TreeNode::Kind::Leaf: {
      const TreeLeaf& l = t.leaves.at(static_cast<size_t>(n.leaf));
      Value base = em.input(static_cast<size_t>(n.leaf));
      if (l.device.is_cpu()) return base;  // uploaded rank-0 scalar
      return view_of(b, base, l.sizes, l.strides, l.offset);
    }
    case TreeNode::Kind::Scalar:
      return scalar_value(em, n, n.dtype, out);
    case TreeNode::Kind::Map: {
      std::vector<Value> x(n.children.size());
      for (size_t i = 0; i < n.children.size(); ++i) {
        const TreeNode& c = t.nodes[static_cast<size_t>(n.children[i])];
        const ScalarType want = (i == 0 && n.promote_first_to_bool) ? ScalarType::Bool : n.compute;
        if (c.kind == TreeNode::Kind::Scalar) x[i] = scalar_value(em, c, want, out);
        else x[i] = broadcast_to(b, convert_to(b, child(i), want), out);
      }
      const auto& hooks = op_hooks().map;
      const auto it = hooks.find(n.name);
      Value r = it != hooks.end() ? it->second(b, n.op_state, x.data())
                                  : apply_hlo(b, n.hlo, n.name, x.data(), x.size());
      return convert_to(b, r, n.dtype);
    }
    case TreeNode::Kind::Reduce: {
      Value x = convert_to(b, child(0), n.compute);
      const auto dims = mask_dims(n.mask, t.nodes[static_cast<size_t>(n.children[0])].shape.size());
      int64_t count = 1;
      for (int64_t d : dims) count *= x.dims[static_cast<size_t>(d)];
      Value r = lower_reduce(b, x, n.hlo, n.name, dims);
      const auto& fin = op_hooks().finalize;
      if (const auto it = fin.find(n.name); it != fin.end()) r = it->second(b, r, count);
      r = convert_to(b, r, n.dtype);
      return r.dims == out ? r : b.reshape(r, out);
    }
    case TreeNode::Kind::ArgReduce: {
      Value r = lower_argreduce(b, child(0), n.dim, n.hlo == "stablehlo.maximum");
      return r.dims == out ? r : b.reshape(r, out);
    }
    case TreeNode::Kind::Softmax: {
      Value x = convert_to(b, child(0), n.compute);
      return convert_to(b, ops::detail::lower_softmax(b, x, n.dim, n.log), n.dtype);
    }
    case TreeNode::Kind::Contract: {
      Value a = convert_to(b, child(0), n.dtype);
      Value c = convert_to(b, child(1), n.dtype);
      Value r = lower_matmul(b, a, c, to_vec(n.batch), n.m, n.k, n.n, out, prec, n.compute);
      return convert_to(b, r, n.dtype);
    }
    case TreeNode::Kind::Library: {
      const auto& hooks = library_hooks();
      const auto it = hooks.find(n.name);
      if (it == hooks.end())
        throw UnsupportedOperator("op '" + std::string(n.name) + "' has no StableHLO lowering on PJRT devices yet");
      std::vector<Value> x(n.children.size());
      for (size_t i = 0; i < n.children.size(); ++i) x[i] = child(i);
      Value r = it->second(b, n.op_state, std::move(x), n.compute, n.shape);
      if (r.dims != out)
        throw DeviceError(13, "internal: op '" + std::string(n.name) + "' lowered to shape " +
                                  stablehlo::shape_str(r.dims) + ", expected " + stablehlo::shape_str(out));
      return convert_to(b, r, n.dtype);
    }
  }
  throw DeviceError(13, "internal: unknown expression node kind");
}

inline std::string_view node_name(const TreeNode& n) {
  if (n.kind == TreeNode::Kind::Leaf) return "copy";
  if (n.kind == TreeNode::Kind::Scalar) return "constant";
  return n.name;
}

/// Says so at the statement (not at the flush) when an op has no StableHLO lowering.
inline void check_lowerable(const ExprTree& t) {
  for (const TreeNode& n : t.nodes)
    if ((n.kind == TreeNode::Kind::Map && n.hlo.empty() && !op_hooks().map.contains(n.name)) ||
        (n.kind == TreeNode::Kind::Library && !library_hooks().contains(n.name)))
      throw UnsupportedOperator("op '" + std::string(n.name) + "' has no StableHLO lowering on PJRT devices yet");
}

/// Records `t` (a tree built for this statement alone: its leaves are detached from their
/// storage here), converted to `dtype` and broadcast to `out`, as one statement on graph `g`.
inline std::shared_ptr<DeviceArray> record_tree(const std::shared_ptr<PendingGraph>& g,
                                                std::shared_ptr<ExprTree> t, ScalarType dtype, const Dims& out,
                                                bool run_now) {
  check_lowerable(*t);
  const stablehlo::Precision prec = matmul_precision();
  std::lock_guard<std::recursive_mutex> lock(g->mutex());  // make_room → collect → record
  g->make_room();
  Statement st;
  std::string inputs_sig;
  collect_inputs(*g, *t, st.inputs, inputs_sig);
  collect_scalar_inputs(*g, *t, st.inputs, inputs_sig);
  append_tree_sig(st.sig, *t);
  st.sig += '|';
  st.sig += dtype_name(dtype);
  append_dims(st.sig, out);
  st.sig += static_cast<char>('0' + static_cast<int>(prec));
  st.sig += inputs_sig;
  st.op_name = node_name(t->nodes.at(static_cast<size_t>(t->root)));
  // The closure keeps the leaves' views but not their storage: the statement's inputs are
  // its Refs, and a pending intermediate must not stay alive (and become an output of the
  // flushed program) only because a later statement's closure holds it.
  // (Every caller passes a tree built for this statement alone, so it is detached in place.)
  for (TreeLeaf& l : t->leaves) l.storage.reset();
  st.emit = [t, dtype, out_dims = to_vec(out), prec](Emitter& em) {
    Value v = lower_node(em, *t, t->root, prec);
    return broadcast_to(em.builder(), convert_to(em.builder(), v, dtype), out_dims);
  };
  return g->record(std::move(st), dtype, to_vec(out), run_now);
}

inline std::shared_ptr<DeviceArray> run_split(const std::shared_ptr<PendingGraph>& g, const ExprTree& src, int idx,
                                              ScalarType dtype, const Dims& out);

/// Copies node `idx` of `src` into `dst`; below the top node, every non-leaf operand is run
/// now as its own statement(s) and enters as a leaf (strict/debug mode).
inline int copy_leafified(const std::shared_ptr<PendingGraph>& g, const ExprTree& src, int idx, ExprTree& dst,
                          bool top) {
  const TreeNode& n = src.nodes[static_cast<size_t>(idx)];
  if (n.kind == TreeNode::Kind::Leaf) {
    TreeNode c = n;
    c.leaf = static_cast<int>(dst.leaves.size());
    dst.leaves.push_back(src.leaves[static_cast<size_t>(n.leaf)]);
    return dst.add(std::move(c));
  }
  if (n.kind == TreeNode::Kind::Scalar) return dst.add(n);
  if (!top) {
    auto arr = run_split(g, src, idx, n.dtype, n.shape);
    auto s = std::make_shared<StorageImpl>();
    s->device = g->device();
    s->nbytes = storage_nbytes(n.shape, dtype_size(n.dtype));
    s->device_handle = std::move(arr);
    TreeNode c;
    c.kind = TreeNode::Kind::Leaf;
    c.dtype = n.dtype;
    c.shape = n.shape;
    c.leaf = static_cast<int>(dst.leaves.size());
    dst.leaves.push_back(TreeLeaf{std::move(s), n.dtype, g->device(), n.shape, contiguous_strides(n.shape), 0});
    return dst.add(std::move(c));
  }
  TreeNode c = n;
  c.children.clear();
  for (int ch : n.children) c.children.push_back(copy_leafified(g, src, ch, dst, false));
  return dst.add(std::move(c));
}

/// Strict/debug evaluation of node `idx`: each op its own program, run now.
inline std::shared_ptr<DeviceArray> run_split(const std::shared_ptr<PendingGraph>& g, const ExprTree& src, int idx,
                                              ScalarType dtype, const Dims& out) {
  auto dst = std::make_shared<ExprTree>();
  dst->root = copy_leafified(g, src, idx, *dst, true);
  return record_tree(g, std::move(dst), dtype, out, true);
}

/// Records `t` (as `dtype`, broadcast to `out`) on `dev` under the current execution mode.
inline std::shared_ptr<void> run_tree(const Device& dev, const ExprTree& t, ScalarType dtype, const Dims& out) {
  auto g = graph_for(dev);
  if (execution_mode() == ExecutionMode::Fused)
    return record_tree(g, std::make_shared<ExprTree>(t), dtype, out, false);
  return run_split(g, t, t.root, dtype, out);
}

inline void device_download(const std::shared_ptr<void>& a, void* dst, size_t bytes) {
  download(std::static_pointer_cast<DeviceArray>(a), dst, bytes);
}

inline void install_runtime() {
  static const TreeRunner runner{&tree_device, &run_tree, &device_download};
  static const DeviceHooks table{
      [] { return static_cast<void*>(new ExprTree()); },
      [](void* t) { delete static_cast<ExprTree*>(t); },
      [](void* t, const Storage& s, ScalarType dtype, const Device& dev, const Dims& sizes, const Dims& strides,
         int64_t offset) { return static_cast<ExprTree*>(t)->add_leaf(TreeLeaf{s, dtype, dev, sizes, strides, offset}); },
      [](void* t, const NodeInfo& n) { return static_cast<ExprTree*>(t)->add_info(n); },
      [](void* t, int root, StorageImpl* dest, ScalarType dtype, const Dims& sizes, const Dims& strides, int64_t offset,
         const Dims& shape) {
        auto& tree = *static_cast<ExprTree*>(t);
        tree.root = root;
        return assign_tree(runner, tree, dest, dtype, sizes, strides, offset, shape);
      },
      [](StorageImpl& dest, const void* host, ScalarType dtype, const Dims& sizes, const Dims& strides, int64_t offset) {
        if (!covers_storage(dest, dtype, sizes, strides, offset)) partial_device_write(dest, sizes, offset);
        dest.device_handle = upload(host, dtype, to_vec(sizes), dest.device);
      },
      [](const void* host, ScalarType dtype, const Dims& dims, const Device& d) {
        return wrap_storage(upload(host, dtype, to_vec(dims), d), d, dims, dtype_size(dtype));
      },
      [] {
        const auto graphs = all_graphs();
        for (auto& g : graphs) g->flush();
        for (auto& g : graphs) g->wait();
      },
      &device_download,
  };
  device_hooks_slot.store(&table, std::memory_order_release);
}

}  // namespace device::detail
}  // namespace torchtpu
