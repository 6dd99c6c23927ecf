// torchtpu/device/frontend.hpp — the light, typed half of PJRT devices that every translation
// unit sees: an expression with an operand on a PJRT device is described node by node
// (`NodeInfo`: kind, op name, dtypes, shape, operands) to the device runtime, which builds its
// expression tree (device/tree.hpp) and records it, all through the `DeviceHooks` table. Also
// `Tensor::to(Device)` and `sync()`.
//
// Why a table: the runtime (PJRT client, compilation cache, StableHLO lowering, deferred graph;
// device/lower.hpp and below) is several thousand lines that a cpu-only translation unit should
// neither parse nor instantiate (issue 2's compile-time goal). It is compiled in every TU that
// includes <torchtpu/device.hpp>, which fills the table at static initialization. A program in
// which no TU includes it has no way to reach a PJRT device: asking for one throws
// DeviceUnavailable saying so.
//
// The walk that describes the expression is the only per-expression code of the device path;
// every other piece (tree, assignment rules, errors) is compiled in the device translation unit. Op-specific lowering hooks (`Op::lower`) are looked up by op name in
// the runtime (device/lower.hpp registers them), so they are instantiated once per program.
#pragma once
#include <atomic>       // std::atomic
#include <cstdint>      // int64_t
#include <string>       // std::string (error text)
#include <string_view>  // std::string_view
#include <tuple>        // std::tuple_size_v
#include <type_traits>  // std::is_empty_v, std::is_trivially_copyable_v

#include "../core/device.hpp"   // Device
#include "../core/errors.hpp"   // DeviceUnavailable
#include "../core/tensor.hpp"   // Tensor
#include "../expr/nodes.hpp"    // node types
#include "dispatch.hpp"         // for_each_tensor_leaf, device_materialize (declaration)
#include "modes.hpp"            // execution modes, matmul precision

namespace torchtpu {
namespace device {

/// One node of an expression as the typed walk describes it to the runtime (`DeviceHooks::
/// tree_node`). Plain data with static strings: building one compiles to a few stores.
struct NodeInfo {
  /// What a node is: a tensor operand, a scalar, a map (elementwise op), a reduction, an
  /// argmax/argmin, a softmax, a matrix product, or an op of the operator library
  /// (ops/library.hpp: `name` is the op's, `state` its trivially copyable `Args`, the operands
  /// are converted to `compute`; device/lower.hpp lowers it through the op's `lower`).
  enum class Kind : uint8_t { Leaf, Scalar, Map, Reduce, ArgReduce, Softmax, Contract, Library };
  /// The node's kind.
  Kind kind = Kind::Scalar;
  ScalarType dtype = ScalarType::Float;    ///< the node's value dtype
  ScalarType compute = ScalarType::Float;  ///< Map: opmath of the compute type; Reduce: accumulator;
                                           ///< Softmax / Contract: opmath of the value type
  const Dims* shape = nullptr;             ///< the node's (broadcast) shape
  ///@{
  std::string_view name, hlo;              ///< op name and StableHLO name (static strings)
  ///@}
  const void* state = nullptr;             ///< a non-empty op struct (e.g. clamp bounds) ...
  size_t state_size = 0;                   ///< ... and its size (trivially copyable)
  const int* children = nullptr;           ///< node indices, in operand order
  /// Number of entries in `children`.
  int nchildren = 0;
  bool promote_first_to_bool = false;      ///< Map: operand 0 is read as bool (where's condition)
  uint32_t mask = 0;                       ///< Reduce: reduced dims
  int dim = 0;                             ///< ArgReduce (-1: all) / Softmax
  bool keepdim = false;                    ///< Reduce / ArgReduce
  bool log = false;                        ///< Softmax: log_softmax
  double scalar = 0;                       ///< Scalar: the value in its opmath type, as double
  bool int_scalar = false;                 ///< Scalar: the value is an integer ...
  int64_t iscalar = 0;                     ///< ... exactly this one (double loses bits past 2^53)
  const Dims* batch = nullptr;             ///< Contract: broadcast batch shape
  ///@{
  /// Contract: matrix sizes `[m, k] @ [k, n]`.
  int64_t m = 1, k = 1, n = 1;             ///< Contract: matrix sizes
  ///@}
};

namespace detail {

/// What the typed `device_materialize` still has to do after `DeviceHooks::assign`.
struct AssignResult {
  bool compute_on_cpu = false;  ///< only the destination is on a device: compute, then `upload_into`
  Storage new_storage;          ///< the destination was undefined: its new storage (a device array)
};

/// The device runtime's entry points, filled by device/lower.hpp's `install_runtime`. Trees
/// are opaque (`void*`, a device::ExprTree); device arrays travel as `std::shared_ptr<void>`.
struct DeviceHooks {
  void* (*tree_new)();
  void (*tree_free)(void* tree);
  /// Appends a tensor operand; returns its node index.
  int (*tree_leaf)(void* tree, const Storage& s, ScalarType dtype, const Device& device, const Dims& sizes,
                   const Dims& strides, int64_t offset);
  /// Appends any other node; returns its index.
  int (*tree_node)(void* tree, const NodeInfo& n);
  /// Assigns the tree (root `root`, shape `shape`) to a destination of dtype `dtype` (`dest`
  /// null when undefined; view `sizes`/`strides`/`offset`). **Errors:** ValueError (mixed
  /// devices), ShapeError, UnsupportedOperator (a partial write), DeviceError.
  AssignResult (*assign)(void* tree, int root, StorageImpl* dest, ScalarType dtype, const Dims& sizes,
                         const Dims& strides, int64_t offset, const Dims& shape);
  /// Replaces the value of the device tensor `dest` (whole storage) with dense host data.
  void (*upload_into)(StorageImpl& dest, const void* host, ScalarType dtype, const Dims& sizes,
                      const Dims& strides, int64_t offset);
  /// Dense row-major host data of `dtype`/`dims` copied to `device`, as a tensor storage.
  Storage (*upload)(const void* host, ScalarType dtype, const Dims& dims, const Device& device);
  /// Runs every deferred statement on every device.
  void (*sync)();
  /// Runs the array's pending graph if needed and copies it (dense row-major) to `dst`.
  void (*download)(const std::shared_ptr<void>& array, void* dst, size_t bytes);
};

inline std::atomic<const DeviceHooks*> device_hooks_slot{nullptr};

/// The installed runtime. **Errors:** DeviceUnavailable when no translation unit of the
/// program includes <torchtpu/device.hpp>.
[[gnu::noinline]] inline const DeviceHooks& device_hooks(const Device& wanted) {
  const DeviceHooks* h = device_hooks_slot.load(std::memory_order_acquire);
  if (!h)
    throw DeviceUnavailable("device '" + wanted.str() +
                            "': the PJRT device runtime is not part of this program; include "
                            "<torchtpu/device.hpp> in one of its translation units");
  return *h;
}

template <class E> inline constexpr bool is_scalar_node = false;
template <class S> inline constexpr bool is_scalar_node<ScalarNode<S>> = true;
template <class E> struct node_op {};
template <class Op, class X> struct node_op<ReduceNode<Op, X>> { using type = Op; };
template <class Op, class X> struct node_op<ArgReduceNode<Op, X>> { using type = Op; };
template <class E> using node_op_t = typename node_op<E>::type;

/// Describes `e` (and its operands) to the runtime's tree `t`; returns the index of its node.
template <expression E>
int add_to_tree(const DeviceHooks& h, void* t, const E& e) {
  using V = typename E::value_type;
  if constexpr (tensor_handle<E>) {
    return h.tree_leaf(t, e.storage(), e.dtype(), e.device(), e.sizes(), e.strides(), e.storage_offset());
  } else {
    NodeInfo n;
    n.dtype = dtype_of<V>();
    n.shape = &e.shape();
    if constexpr (is_scalar_node<E>) {
      n.kind = NodeInfo::Kind::Scalar;
      n.scalar = static_cast<double>(opmath_t<V>(e.value));
      if constexpr (std::is_integral_v<opmath_t<V>> && !std::is_same_v<opmath_t<V>, bool>) {
        n.int_scalar = true;
        n.iscalar = static_cast<int64_t>(opmath_t<V>(e.value));
      }
      return h.tree_node(t, n);
    } else if constexpr (requires { e.args; }) {  // MapNode
      using Op = std::decay_t<decltype(e.op)>;
      n.kind = NodeInfo::Kind::Map;
      n.compute = dtype_of<opmath_t<typename E::compute_type>>();
      n.name = Op::name;
      n.hlo = Op::hlo;
      n.promote_first_to_bool = op_promote_first<Op>() == 1;
      if constexpr (!std::is_empty_v<Op>) {
        static_assert(std::is_trivially_copyable_v<Op>, "op structs with state must be trivially copyable");
        n.state = &e.op;
        n.state_size = sizeof(Op);
      }
      int kids[std::tuple_size_v<decltype(e.args)>];
      int k = 0;
      for_each_in(e.args, [&](const auto& a) { kids[k++] = add_to_tree(h, t, a); });
      n.children = kids;
      n.nchildren = k;
      return h.tree_node(t, n);
    } else {
      int kids[2] = {0, 0};
      n.nchildren = 1;
      if constexpr (requires { e.mask; }) {  // ReduceNode
        using Op = node_op_t<E>;
        n.kind = NodeInfo::Kind::Reduce;
        n.compute = dtype_of<typename Op::template acc<typename E::input_type>>();
        n.name = Op::name;
        n.hlo = Op::hlo;
        n.mask = e.mask;
        n.keepdim = e.keepdim;
        kids[0] = add_to_tree(h, t, e.arg);
      } else if constexpr (requires { e.dim; e.keepdim; }) {  // ArgReduceNode
        using Op = node_op_t<E>;
        n.kind = NodeInfo::Kind::ArgReduce;
        n.name = Op::name;
        n.hlo = Op::hlo;
        n.dim = e.dim;
        n.keepdim = e.keepdim;
        kids[0] = add_to_tree(h, t, e.arg);
      } else if constexpr (requires { e.dim; }) {  // SoftmaxNode
        n.kind = NodeInfo::Kind::Softmax;
        n.compute = dtype_of<opmath_t<V>>();
        n.name = E::name;
        n.dim = e.dim;
        n.log = E::name == "log_softmax";
        kids[0] = add_to_tree(h, t, e.arg);
      } else {  // ContractNode
        n.kind = NodeInfo::Kind::Contract;
        n.compute = dtype_of<opmath_t<V>>();
        n.name = "matmul";
        n.batch = &e.batch;
        n.m = e.m;
        n.k = e.k;
        n.n = e.n;
        kids[0] = add_to_tree(h, t, e.a);
        kids[1] = add_to_tree(h, t, e.b);
        n.nchildren = 2;
      }
      n.children = kids;
      return h.tree_node(t, n);
    }
  }
}

/// The device named in an error when the runtime is missing: the first non-cpu one involved.
template <element T, int R, expression E>
Device device_of_assignment(const Tensor<T, R>& dest, const E& e) {
  Device d = dest.defined() ? dest.device() : Device{};
  torchtpu::detail::for_each_tensor_leaf(e, [&d](const auto& t) {
    if (d.is_cpu() && t.defined()) d = t.device();
  });
  return d;
}

/// Owns a runtime tree for the duration of one assignment.
struct TreeHandle {
  const DeviceHooks& h;
  void* tree;
  explicit TreeHandle(const DeviceHooks& hooks) : h(hooks), tree(hooks.tree_new()) {}
  ~TreeHandle() { h.tree_free(tree); }
  TreeHandle(const TreeHandle&) = delete;
  TreeHandle& operator=(const TreeHandle&) = delete;
};

}  // namespace detail
}  // namespace device

/// Runs every deferred statement on every PJRT device now (fused mode's explicit flush), then
/// waits until every execution enqueued so far has finished, as `torch.cuda.synchronize()` and
/// jax's `block_until_ready` do (strict and fused modes otherwise return once an execution is
/// enqueued). Statements whose results are no longer referenced are dropped without running. A
/// no-op in a program without the device runtime. **Errors:** DeviceError from compilation or
/// execution.
inline void sync() {
  if (const auto* h = device::detail::device_hooks_slot.load(std::memory_order_acquire)) h->sync();
}

namespace detail {

template <element T, int R, expression E>
void device_materialize(Tensor<T, R>& dest, const E& e) {
  namespace dd = device::detail;
  const dd::DeviceHooks& h = dd::device_hooks(dd::device_of_assignment(dest, e));
  dd::TreeHandle t(h);
  const int root = dd::add_to_tree(h, t.tree, e);
  const auto r = h.assign(t.tree, root, dest.defined() ? dest.storage().get() : nullptr, dtype_of<T>(),
                          dest.sizes(), dest.strides(), dest.storage_offset(), e.shape());
  if (r.compute_on_cpu) {  // only the destination is on a device
    Tensor<T> host = Tensor<T>::empty(dest.sizes());
    materialize(host, e);
    h.upload_into(*dest.storage(), host.data_ptr(), dtype_of<T>(), dest.sizes(), dest.strides(),
                  dest.storage_offset());
  } else if (r.new_storage) {
    dest = Tensor<T, R>(Tensor<T>(r.new_storage, e.shape(), contiguous_strides(e.shape()), 0));
  }
}

}  // namespace detail

// ---- Tensor::to ------------------------------------------------------

template <element T, int R>
Tensor<T, R> Tensor<T, R>::to(const Device& device) const {
  require_defined("to");
  if (this->device() == device) return *this;
  if (device.is_cpu()) return cpu();
  const Tensor<T> host = this->device().is_cpu() ? Tensor<T>(contiguous()) : Tensor<T>(cpu()).contiguous();
  Storage s = device::detail::device_hooks(device).upload(host.data_ptr(), dtype(), sizes_, device);
  return Tensor<T, R>(Tensor<T>(std::move(s), sizes_, contiguous_strides(sizes_), 0));
}

}  // namespace torchtpu
