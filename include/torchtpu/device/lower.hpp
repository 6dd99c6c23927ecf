// torchtpu/device/lower.hpp — the thin template front end of PJRT devices: walks an expression
// once to collect its device inputs and signature, and records a statement whose closure
// emits it as StableHLO (device/graph.hpp runs it). Also `Tensor::to(Device)`.
//
// The typed walk calls the runtime and the builder helpers only through `runtime()` (the
// table `graph_for` fills, defined at the end of this file): every TU instantiates this front
// end for its expressions, and only TUs that create device tensors emit the runtime itself.
//
// Op knowledge stays in the op structs (STYLE.md §4): an op lowers through its `hlo` name
// ("stablehlo.add" → add, "chlo.erf" → erf, "EQ".."GE" → compare, "stablehlo.select",
// "stablehlo.convert"), or through its own hook when the mapping is not 1:1:
//   `template <class B, class V> V lower(B& b, const V* x) const;`
// where `x` are the operands already converted to the op's compute dtype and broadcast to the
// result shape (B = stablehlo::Builder, V = stablehlo::Value). A reduction may add
//   `template <class B, class V> static V lower_finalize(B& b, const V& acc, int64_t count);`
#pragma once
#include <cstdint>      // int64_t
#include <cstring>      // std::memcpy
#include <limits>       // std::numeric_limits
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <tuple>        // std::apply
#include <type_traits>  // std::is_empty_v
#include <typeinfo>     // typeid
#include <vector>       // std::vector

#include "../core/tensor.hpp"         // Tensor
#include "../expr/nodes.hpp"          // node types
#include "../fuse/materialize.hpp"    // evaluate_new (cpu side of cross-device copies)
#include "../ops/traits.hpp"          // operand, ScalarNode
#include "dispatch.hpp"               // for_each_tensor_leaf, device_materialize
#include "graph.hpp"                  // PendingGraph, Statement, Emitter, upload, view_of

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

/// The identity of a reducer in dtype `t` (-inf for max on floats, lowest for integers, ...).
inline Value reduce_identity(Builder& b, stablehlo::ReduceOp op, ScalarType t) {
  const double inf = std::numeric_limits<double>::infinity();
  double v = 0;
  switch (op) {
    case stablehlo::ReduceOp::Add: case stablehlo::ReduceOp::Or: v = 0; break;
    case stablehlo::ReduceOp::Mul: case stablehlo::ReduceOp::And: v = 1; break;
    case stablehlo::ReduceOp::Max:
      v = is_floating(t) ? -inf : t == ScalarType::Int64 ? -9223372036854775808.0
          : t == ScalarType::Int32 ? -2147483648.0 : 0;
      break;
    case stablehlo::ReduceOp::Min:
      // int64: the largest double below 2^63 (2^63 itself does not fit an i64 literal)
      v = is_floating(t) ? inf : t == ScalarType::Int64 ? 9223372036854774784.0
          : t == ScalarType::Int32 ? 2147483647.0 : t == ScalarType::UInt8 ? 255 : 1;
      break;
  }
  return b.constant(v, t);
}

/// Reduction of `x` over `dims` by the reducer whose `hlo` name is given (identity as init).
inline Value lower_reduce(Builder& b, const Value& x, std::string_view hlo, std::string_view name,
                          const std::vector<int64_t>& dims) {
  const auto rop = reduce_op_for(hlo, name);
  return b.reduce(x, reduce_identity(b, rop, x.dtype), rop, dims);
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
  Value big = b.constant(static_cast<double>(x.dims[static_cast<size_t>(dim)]), ScalarType::Int64, x.dims);
  Value idx = b.select(hit, iota, big);
  return b.reduce(idx, b.constant(static_cast<double>(x.dims[static_cast<size_t>(dim)]), ScalarType::Int64),
                  stablehlo::ReduceOp::Min, {dim});
}

/// softmax / log_softmax of `x` (floating) along `dim`, computed in x's dtype.
inline Value lower_softmax(Builder& b, const Value& x, int dim, bool log) {
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < x.rank(); ++i)
    if (i != dim) keep.push_back(i);
  Value m = b.reduce(x, reduce_identity(b, stablehlo::ReduceOp::Max, x.dtype), stablehlo::ReduceOp::Max, {dim});
  Value z = b.subtract(x, b.broadcast_in_dim(m, x.dims, keep));
  Value ez = b.exp(z);
  Value s = b.reduce(ez, b.constant(0, x.dtype), stablehlo::ReduceOp::Add, {dim});
  Value sb = b.broadcast_in_dim(s, x.dims, keep);
  return log ? b.subtract(z, b.log(sb)) : b.divide(ez, sb);
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

inline ValueError mixed_devices(const Device& a, const Device& b) {
  return ValueError("Expected all tensors to be on the same device, but found at least two devices, " +
                    a.str() + " and " + b.str() + "!");
}

// ---- template front end -------------------------------------------------------------------

template <class E> inline constexpr bool is_scalar_node = false;
template <class E> struct node_op {};
template <class Op, class X> struct node_op<ReduceNode<Op, X>> { using type = Op; };
template <class Op, class X> struct node_op<ArgReduceNode<Op, X>> { using type = Op; };
template <class E> using node_op_t = typename node_op<E>::type;
template <class S> inline constexpr bool is_scalar_node<ScalarNode<S>> = true;

/// The device an expression runs on: its device tensors must agree; rank-0 cpu tensors may
/// join (uploaded, as PyTorch allows cpu scalars); other cpu tensors are an error.
template <expression E>
std::optional<Device> expression_device(const E& e) {
  std::optional<Device> dev, cpu_seen;
  torchtpu::detail::for_each_tensor_leaf(e, [&](const auto& t) {
    if (!t.defined()) throw ValueError("expression has an undefined tensor operand");
    const Device d = t.device();
    if (d.is_cpu()) {
      if (t.dim() == 0) return;
      if (dev) throw mixed_devices(*dev, d);
      cpu_seen = d;
    } else {
      if (cpu_seen) throw mixed_devices(*cpu_seen, d);
      if (dev && *dev != d) throw mixed_devices(*dev, d);
      dev = d;
    }
  });
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

/// Walk 1: device inputs (in leaf order) and the run-time part of the signature.
template <expression E>
void collect(PendingGraph& g, std::vector<Ref>& inputs, std::string& sig, const E& e) {
  if constexpr (tensor_handle<E>) {
    std::shared_ptr<DeviceArray> arr;
    if (e.device().is_cpu()) {  // rank-0 cpu tensor joining a device expression
      auto v = e.contiguous();
      arr = runtime().upload(v.data_ptr(), e.dtype(), {}, g.device());
    } else {
      arr = std::static_pointer_cast<DeviceArray>(e.storage()->device_handle);
    }
    if (!e.device().is_cpu()) runtime().check_view(arr->dtype, arr->dims, e.sizes(), e.strides(), e.storage_offset());
    inputs.push_back(g.ref_for(*arr));
    sig += 'L';
    append_dims(sig, Dims(arr->dims.begin(), arr->dims.end()));
    append_dims(sig, e.sizes());
    append_dims(sig, e.strides());
    sig += std::to_string(e.device().is_cpu() ? 0 : e.storage_offset());
  } else if constexpr (is_scalar_node<E>) {
    sig += 'S';
    append_bytes(sig, e.value);
  } else if constexpr (requires { e.args; }) {
    using Op = std::decay_t<decltype(e.op)>;
    if constexpr (!requires(Builder& b, const Value* x) { std::declval<const Op&>().lower(b, x); })
      if (Op::hlo.empty())  // say so at the statement, not at the flush
        throw UnsupportedOperator("op '" + std::string(Op::name) +
                                  "' has no StableHLO lowering on PJRT devices yet (" + g.device().str() + ")");
    if constexpr (!std::is_empty_v<Op>) append_bytes(sig, e.op);
    std::apply([&](const auto&... a) { (collect(g, inputs, sig, a), ...); }, e.args);
  } else if constexpr (requires { e.arg; }) {
    if constexpr (requires { e.mask; }) {
      append_bytes(sig, e.mask);
      sig += e.keepdim ? 'k' : 'r';
    } else {
      append_bytes(sig, e.dim);
      if constexpr (requires { e.keepdim; }) sig += e.keepdim ? 'k' : 'r';
    }
    collect(g, inputs, sig, e.arg);
  } else {
    collect(g, inputs, sig, e.a);
    collect(g, inputs, sig, e.b);
  }
}

/// Walk 2 (inside the statement's closure): emits `e`; the result has e's dtype and shape.
template <expression E>
Value lower(Emitter& em, size_t& leaf, stablehlo::Precision prec, const E& e) {
  auto& b = em.builder();  // constants through the hoisting builder (also in op hooks)
  const Runtime& k = runtime();
  using V = typename E::value_type;
  const std::vector<int64_t> out = to_vec(e.shape());
  if constexpr (tensor_handle<E>) {
    Value base = em.input(leaf++);
    if (e.device().is_cpu()) return base;  // uploaded rank-0 scalar
    return k.view_of(b, base, e.sizes(), e.strides(), e.storage_offset());
  } else if constexpr (is_scalar_node<E>) {
    return k.constant(em, static_cast<double>(opmath_t<V>(e.value)), dtype_of<V>(), out);
  } else if constexpr (requires { e.args; }) {  // MapNode
    using Op = std::decay_t<decltype(e.op)>;
    constexpr ScalarType c = dtype_of<opmath_t<typename E::compute_type>>();
    constexpr size_t n = std::tuple_size_v<decltype(e.args)>;
    Value x[n];
    size_t i = 0;
    std::apply(
        [&](const auto&... a) {
          auto one = [&](const auto& arg) {
            using A = std::decay_t<decltype(arg)>;
            const ScalarType want = (i == 0 && op_promote_first<Op>() == 1) ? ScalarType::Bool : c;
            if constexpr (is_scalar_node<A>)
              x[i] = k.constant(em, static_cast<double>(opmath_t<typename A::value_type>(arg.value)), want, out);
            else
              x[i] = k.broadcast_to(b, k.convert_to(b, lower(em, leaf, prec, arg), want), out);
            ++i;
          };
          (one(a), ...);
        },
        e.args);
    Value r;
    if constexpr (requires { e.op.lower(b, static_cast<const Value*>(x)); })
      r = e.op.lower(b, static_cast<const Value*>(x));
    else
      r = k.apply_hlo(b, Op::hlo, Op::name, x, n);
    return k.convert_to(b, r, dtype_of<V>());
  } else if constexpr (requires { e.mask; }) {  // ReduceNode
    using Op = node_op_t<E>;
    using In = typename E::input_type;
    using Acc = typename Op::template acc<In>;
    Value x = k.convert_to(b, lower(em, leaf, prec, e.arg), dtype_of<Acc>());
    const auto dims = mask_dims(e.mask, e.arg.shape().size());
    int64_t count = 1;
    for (int64_t d : dims) count *= x.dims[static_cast<size_t>(d)];
    Value r = k.reduce(b, x, Op::hlo, Op::name, dims);
    if constexpr (requires { Op::lower_finalize(b, r, count); }) r = Op::lower_finalize(b, r, count);
    return k.reshape_to(b, k.convert_to(b, r, dtype_of<V>()), out);
  } else if constexpr (requires { e.dim; e.keepdim; }) {  // ArgReduceNode
    using Op = node_op_t<E>;
    Value x = lower(em, leaf, prec, e.arg);
    return k.reshape_to(b, k.argreduce(b, x, e.dim, Op::hlo == "stablehlo.maximum"), out);
  } else if constexpr (requires { e.dim; }) {  // SoftmaxNode
    constexpr ScalarType c = dtype_of<opmath_t<V>>();
    Value x = k.convert_to(b, lower(em, leaf, prec, e.arg), c);
    return k.convert_to(b, k.softmax(b, x, e.dim, E::name == "log_softmax"), dtype_of<V>());
  } else {  // ContractNode
    constexpr ScalarType acc = dtype_of<opmath_t<V>>();
    Value a = k.convert_to(b, lower(em, leaf, prec, e.a), dtype_of<V>());
    Value c = k.convert_to(b, lower(em, leaf, prec, e.b), dtype_of<V>());
    Value r = k.matmul(b, a, c, to_vec(e.batch), e.m, e.k, e.n, out, prec, acc);
    return k.convert_to(b, r, dtype_of<V>());
  }
}

template <expression E>
std::string_view node_name(const E& e) {
  if constexpr (tensor_handle<E>) return "copy";
  else if constexpr (is_scalar_node<E>) return "constant";
  else if constexpr (requires { e.op; }) return std::decay_t<decltype(e.op)>::name;
  else if constexpr (requires { node_op_t<E>::name; }) return node_op_t<E>::name;
  else if constexpr (requires { E::name; }) return E::name;
  else return "matmul";
}

/// The untyped half of `record` (the runtime table's `record`).
inline std::shared_ptr<DeviceArray> record_statement(const std::shared_ptr<PendingGraph>& g, RecordRequest& r) {
  std::lock_guard<std::recursive_mutex> lock(g->mutex());  // make_room → collect → record
  g->make_room();
  Statement st;
  st.sig = r.type_name;
  st.sig += '|';
  st.sig += dtype_name(r.dtype);
  append_dims(st.sig, *r.out);
  st.sig += static_cast<char>('0' + static_cast<int>(r.prec));
  r.walk(r.expr, *g, st.inputs, st.sig);
  st.op_name = r.op_name;
  st.emit = std::move(r.emit);
  return g->record(std::move(st), r.dtype, to_vec(*r.out), r.run_now);
}

/// Records `e`, converted to T and broadcast to `out`, as one statement on graph `g`.
template <element T, expression E>
std::shared_ptr<DeviceArray> record(const std::shared_ptr<PendingGraph>& g, const E& e, const Dims& out,
                                    bool run_now) {
  const stablehlo::Precision prec = matmul_precision();
  RecordRequest r{typeid(E).name(), node_name(e), dtype_of<T>(), &out, prec, run_now,
                  [](const void* x, PendingGraph& pg, std::vector<Ref>& in, std::string& sig) {
                    collect(pg, in, sig, *static_cast<const E*>(x));
                  },
                  &e,
                  [e, out_dims = to_vec(out), prec](Emitter& em) {
                    size_t leaf = 0;
                    Value v = lower(em, leaf, prec, e);
                    const Runtime& k = runtime();
                    return k.broadcast_to(em.builder(), k.convert_to(em.builder(), v, dtype_of<T>()), out_dims);
                  }};
  return runtime().record(g, r);
}

/// A tensor viewing the whole of `arr`.
template <element T>
Tensor<T> wrap(std::shared_ptr<DeviceArray> arr) {
  auto s = std::make_shared<StorageImpl>();
  s->device = arr->device;
  s->nbytes = static_cast<size_t>(arr->numel()) * sizeof(T);
  StorageImpl* raw = s.get();  // the storage owns the callback, so the pointer outlives it
  s->download = [raw](void* dst) {
    runtime().download(std::static_pointer_cast<DeviceArray>(raw->device_handle), dst, raw->nbytes);
  };
  Dims dims;
  for (int64_t d : arr->dims) dims.push_back(d);
  s->device_handle = std::move(arr);
  return Tensor<T>(std::move(s), dims, contiguous_strides(dims), 0);
}

template <expression E>
auto split_eval(const E& e, const std::shared_ptr<PendingGraph>& g);

/// A leaf standing for `a` in strict/debug mode: tensors and scalars as they are, anything
/// else run now as its own statement(s).
template <expression A>
auto leafify(const A& a, const std::shared_ptr<PendingGraph>& g) {
  if constexpr (tensor_handle<A> || is_scalar_node<A>) return a;
  else return split_eval(a, g);
}

/// `e` with every non-leaf child replaced by its (already computed) device tensor.
template <expression E>
auto with_leaf_children(const E& e, const std::shared_ptr<PendingGraph>& g) {
  if constexpr (tensor_handle<E> || is_scalar_node<E>) {
    return e;
  } else if constexpr (requires { e.args; }) {
    return std::apply(
        [&](const auto&... a) {
          return MapNode<std::decay_t<decltype(e.op)>, std::decay_t<decltype(leafify(a, g))>...>(e.op, leafify(a, g)...);
        },
        e.args);
  } else if constexpr (requires { e.mask; }) {
    auto t = leafify(e.arg, g);
    const auto d = mask_dims(e.mask, e.arg.shape().size());
    Dims dims;
    for (int64_t x : d) dims.push_back(x);
    return ReduceNode<node_op_t<E>, decltype(t)>(t, dims, e.keepdim);
  } else if constexpr (requires { e.dim; e.keepdim; }) {
    auto t = leafify(e.arg, g);
    return ArgReduceNode<node_op_t<E>, decltype(t)>(t, e.dim, e.keepdim);
  } else if constexpr (requires { e.dim; }) {
    auto t = leafify(e.arg, g);
    return SoftmaxNode<decltype(t), E::name == "log_softmax">(t, e.dim);
  } else {
    auto ta = leafify(e.a, g);
    auto tb = leafify(e.b, g);
    return ContractNode<decltype(ta), decltype(tb)>(ta, tb);
  }
}

/// Strict/debug evaluation: each op its own program, run now.
template <expression E>
auto split_eval(const E& e, const std::shared_ptr<PendingGraph>& g) {
  using V = typename E::value_type;
  return wrap<V>(record<V>(g, with_leaf_children(e, g), e.shape(), true));
}

/// Records `e` (as T, broadcast to `out`) under the current execution mode.
template <element T, expression E>
std::shared_ptr<DeviceArray> run_expression(const std::shared_ptr<PendingGraph>& g, const E& e, const Dims& out) {
  if (execution_mode() == ExecutionMode::Fused) return record<T>(g, e, out, false);
  return record<T>(g, with_leaf_children(e, g), out, true);
}

}  // namespace device::detail

namespace detail {

template <element T, int R, expression E>
void device_materialize(Tensor<T, R>& dest, const E& e) {
  namespace dd = device::detail;
  const std::optional<Device> dev = dd::expression_device(e);
  if (!dev) {
    // Only the destination is on a device: compute on the cpu, then upload into it.
    Tensor<T> host = Tensor<T>::empty(dest.sizes());
    host.copy_(e);
    std::vector<int64_t> dims(host.sizes().begin(), host.sizes().end());
    dest.copy_(dd::wrap<T>(dd::runtime().upload(host.data_ptr(), host.dtype(), std::move(dims), dest.device())));
    return;
  }
  if (dest.defined() && dest.device().is_cpu()) {
    // Device result copied into cpu memory: an explicit observation.
    auto g = dd::runtime().graph_for(*dev);
    Tensor<typename E::value_type> r = dd::wrap<typename E::value_type>(dd::run_expression<typename E::value_type>(g, e, e.shape()));
    dest.copy_(r.cpu());
    return;
  }
  if (dest.defined() && dest.device() != *dev) throw dd::mixed_devices(dest.device(), *dev);
  auto g = dd::runtime().graph_for(*dev);
  if (!dest.defined()) {
    dest = Tensor<T, R>(dd::wrap<T>(dd::run_expression<T>(g, e, e.shape())));
    return;
  }
  if (!broadcastable_to(e.shape(), dest.sizes()))
    throw ShapeError("assign: cannot write an expression of shape " + to_string(e.shape()) +
                     " into a tensor of shape " + to_string(dest.sizes()));
  const bool whole = dest.is_contiguous() && dest.storage_offset() == 0 &&
                     static_cast<size_t>(dest.numel()) * sizeof(T) == dest.storage()->nbytes;
  if (!whole)
    throw UnsupportedOperator("writing into a view of a tensor on " + dest.device().str() +
                              " (shape " + to_string(dest.sizes()) + ", offset " +
                              std::to_string(dest.storage_offset()) +
                              ") is not supported yet; write the whole tensor");
  // The storage takes the new value; every view of it sees it (in-place semantics).
  dest.storage()->device_handle = dd::run_expression<T>(g, e, dest.sizes());
}

}  // namespace detail

// ---- Tensor::to ------------------------------------------------------

template <element T, int R>
Tensor<T, R> Tensor<T, R>::to(const Device& device) const {
  require_defined("to");
  if (this->device() == device) return *this;
  if (device.is_cpu()) return cpu();
  const Tensor<T> host = this->device().is_cpu() ? Tensor<T>(contiguous()) : Tensor<T>(cpu()).contiguous();
  std::vector<int64_t> dims(sizes_.begin(), sizes_.end());
  return Tensor<T, R>(device::detail::wrap<T>(device::upload(host.data_ptr(), dtype(), dims, device)));
}

// ---- the runtime table (device/graph.hpp) ---------------------------------------------------

namespace device::detail {

inline void install_runtime() {
  static const Runtime table{
      &device::graph_for,
      [](PendingGraph& g) { g.flush_locked_now(); },
      &record_statement,
      &device::upload,
      &device::download,
      &device::check_view,
      &device::view_of,
      [](Emitter& em, double v, ScalarType t, std::vector<int64_t> dims) {
        return em.builder().constant(v, t, std::move(dims));
      },
      &convert_to,
      &broadcast_to,
      [](Builder& b, const Value& v, const std::vector<int64_t>& dims) {
        return v.dims == dims ? v : b.reshape(v, dims);
      },
      &apply_hlo,
      &lower_reduce,
      &lower_argreduce,
      &lower_softmax,
      &lower_matmul,
  };
  runtime_slot.store(&table, std::memory_order_release);
}

}  // namespace device::detail
}  // namespace torchtpu
