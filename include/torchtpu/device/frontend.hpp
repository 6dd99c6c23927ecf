// torchtpu/device/frontend.hpp — the light, typed half of PJRT devices that every translation
// unit sees: an expression with an operand on a PJRT device is flattened into an `ExprTree`
// (plain data: node kinds, op names, dtypes, shapes, leaves) and handed to the device runtime
// through the `DeviceHooks` table. Also `Tensor::to(Device)`, `sync()` and the wrapping of
// device arrays into tensors.
//
// Why a table: the runtime (PJRT client, compilation cache, StableHLO lowering, deferred graph;
// device/lower.hpp and below) is several thousand lines that a cpu-only translation unit should
// neither parse nor instantiate (issue 2's compile-time goal). It is compiled in every TU that
// includes <torchtpu/device.hpp>, which fills the table at static initialization. A program in
// which no TU includes it has no way to reach a PJRT device: asking for one throws
// DeviceUnavailable saying so.
//
// The walk that builds the tree is the only per-expression code of the device path; it knows
// nothing about StableHLO. Op-specific lowering hooks (`Op::lower`) are looked up by op name in
// the runtime (device/lower.hpp registers them), so they are instantiated once per program.
#pragma once
#include <atomic>       // std::atomic
#include <cstdint>      // int64_t
#include <cstring>      // std::memcpy
#include <memory>       // std::shared_ptr, std::make_shared
#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <tuple>        // std::apply
#include <type_traits>  // std::is_empty_v, std::is_trivially_copyable_v
#include <vector>       // std::vector

#include "../core/device.hpp"   // Device
#include "../core/errors.hpp"   // DeviceUnavailable, ValueError, ShapeError, UnsupportedOperator
#include "../core/tensor.hpp"   // Tensor
#include "../expr/nodes.hpp"    // node types
#include "dispatch.hpp"         // for_each_tensor_leaf, device_materialize (declaration)
#include "modes.hpp"            // execution modes, matmul precision

namespace torchtpu {
namespace device {

/// One node of a flattened expression (`ExprTree`). Plain data; the fields a kind does not use
/// keep their defaults.
struct TreeNode {
  enum class Kind : uint8_t { Leaf, Scalar, Map, Reduce, ArgReduce, Softmax, Contract };
  Kind kind = Kind::Leaf;
  ScalarType dtype = ScalarType::Float;    ///< the node's value dtype
  ScalarType compute = ScalarType::Float;  ///< Map: opmath of the compute type; Reduce: accumulator;
                                           ///< Softmax / Contract: opmath of the value type
  Dims shape;                              ///< the node's (broadcast) shape
  std::string_view name, hlo;              ///< op name and StableHLO name (static strings)
  std::string op_state;                    ///< the bytes of a non-empty op struct (e.g. clamp bounds)
  std::vector<int> children;               ///< node indices, in operand order
  bool promote_first_to_bool = false;      ///< Map: operand 0 is read as bool (where's condition)
  uint32_t mask = 0;                       ///< Reduce: reduced dims
  int dim = 0;                             ///< ArgReduce (-1: all) / Softmax
  bool keepdim = false;                    ///< Reduce / ArgReduce
  bool log = false;                        ///< Softmax: log_softmax
  double scalar = 0;                       ///< Scalar: the value in its opmath type, as double
  int leaf = -1;                           ///< Leaf: index into ExprTree::leaves
  Dims batch;                              ///< Contract: broadcast batch shape
  int64_t m = 1, k = 1, n = 1;             ///< Contract: matrix sizes
};

/// A tensor operand of an ExprTree: its storage (a PJRT device array in `storage->device_handle`,
/// or host memory for a rank-0 cpu tensor joining a device expression) and its view.
struct TreeLeaf {
  Storage storage;
  ScalarType dtype = ScalarType::Float;
  Device device{};
  Dims sizes, strides;
  int64_t offset = 0;
};

/// An expression flattened into plain data: nodes in depth-first order of creation (children
/// before parents), leaves in the left-to-right order of the expression's tensor operands.
struct ExprTree {
  std::vector<TreeNode> nodes;
  std::vector<TreeLeaf> leaves;
  int root = -1;

  int add(TreeNode n) {
    nodes.push_back(std::move(n));
    return static_cast<int>(nodes.size()) - 1;
  }
};

namespace detail {

template <class E> inline constexpr bool is_scalar_node = false;
template <class S> inline constexpr bool is_scalar_node<ScalarNode<S>> = true;
template <class E> struct node_op {};
template <class Op, class X> struct node_op<ReduceNode<Op, X>> { using type = Op; };
template <class Op, class X> struct node_op<ArgReduceNode<Op, X>> { using type = Op; };
template <class E> using node_op_t = typename node_op<E>::type;

template <class Op>
std::string op_bytes(const Op& op) {
  if constexpr (std::is_empty_v<Op>) {
    return {};
  } else {
    static_assert(std::is_trivially_copyable_v<Op>, "op structs with state must be trivially copyable");
    std::string s(sizeof(Op), '\0');
    std::memcpy(s.data(), &op, sizeof(Op));
    return s;
  }
}

/// Appends `e` (and its operands) to `t`; returns the index of its node.
template <expression E>
int add_to_tree(ExprTree& t, const E& e) {
  using V = typename E::value_type;
  TreeNode n;
  n.dtype = dtype_of<V>();
  n.shape = e.shape();
  if constexpr (tensor_handle<E>) {
    n.kind = TreeNode::Kind::Leaf;
    n.leaf = static_cast<int>(t.leaves.size());
    t.leaves.push_back(TreeLeaf{e.storage(), e.dtype(), e.device(), e.sizes(), e.strides(), e.storage_offset()});
  } else if constexpr (is_scalar_node<E>) {
    n.kind = TreeNode::Kind::Scalar;
    n.scalar = static_cast<double>(opmath_t<V>(e.value));
  } else if constexpr (requires { e.args; }) {  // MapNode
    using Op = std::decay_t<decltype(e.op)>;
    n.kind = TreeNode::Kind::Map;
    n.compute = dtype_of<opmath_t<typename E::compute_type>>();
    n.name = Op::name;
    n.hlo = Op::hlo;
    n.op_state = op_bytes(e.op);
    n.promote_first_to_bool = op_promote_first<Op>() == 1;
    std::apply([&](const auto&... a) { (n.children.push_back(add_to_tree(t, a)), ...); }, e.args);
  } else if constexpr (requires { e.mask; }) {  // ReduceNode
    using Op = node_op_t<E>;
    n.kind = TreeNode::Kind::Reduce;
    n.compute = dtype_of<typename Op::template acc<typename E::input_type>>();
    n.name = Op::name;
    n.hlo = Op::hlo;
    n.mask = e.mask;
    n.keepdim = e.keepdim;
    n.children.push_back(add_to_tree(t, e.arg));
  } else if constexpr (requires { e.dim; e.keepdim; }) {  // ArgReduceNode
    using Op = node_op_t<E>;
    n.kind = TreeNode::Kind::ArgReduce;
    n.name = Op::name;
    n.hlo = Op::hlo;
    n.dim = e.dim;
    n.keepdim = e.keepdim;
    n.children.push_back(add_to_tree(t, e.arg));
  } else if constexpr (requires { e.dim; }) {  // SoftmaxNode
    n.kind = TreeNode::Kind::Softmax;
    n.compute = dtype_of<opmath_t<V>>();
    n.name = E::name;
    n.dim = e.dim;
    n.log = E::name == "log_softmax";
    n.children.push_back(add_to_tree(t, e.arg));
  } else {  // ContractNode
    n.kind = TreeNode::Kind::Contract;
    n.compute = dtype_of<opmath_t<V>>();
    n.name = "matmul";
    n.batch = e.batch;
    n.m = e.m;
    n.k = e.k;
    n.n = e.n;
    n.children.push_back(add_to_tree(t, e.a));
    n.children.push_back(add_to_tree(t, e.b));
  }
  return t.add(std::move(n));
}

/// The device runtime's entry points (filled by device/lower.hpp's `install_runtime`).
/// Device arrays travel as `std::shared_ptr<void>` (a `device::DeviceArray`).
struct DeviceHooks {
  /// The PJRT device `t` runs on (none when every tensor is on the cpu). **Errors:**
  /// ValueError naming both devices when they are mixed.
  std::optional<Device> (*expression_device)(const ExprTree& t);
  /// Records `t`, converted to `dtype` and broadcast to `out`, on `device` under the current
  /// execution mode; the result array (pending in fused mode).
  std::shared_ptr<void> (*run)(const Device& device, const ExprTree& t, ScalarType dtype, const Dims& out);
  /// Copies dense row-major host data to `device` (awaited).
  std::shared_ptr<void> (*upload)(const void* host, ScalarType dtype, const Dims& dims, const Device& device);
  /// Runs the array's pending graph if needed and copies it (dense row-major) to `dst`.
  void (*download)(const std::shared_ptr<void>& array, void* dst, size_t bytes);
  /// Runs every deferred statement on every device.
  void (*sync)();
};

inline std::atomic<const DeviceHooks*> device_hooks_slot{nullptr};

/// The installed runtime. **Errors:** DeviceUnavailable when no translation unit of the
/// program includes <torchtpu/device.hpp>.
inline const DeviceHooks& device_hooks(const Device& wanted) {
  const DeviceHooks* h = device_hooks_slot.load(std::memory_order_acquire);
  if (!h)
    throw DeviceUnavailable("device '" + wanted.str() +
                            "': the PJRT device runtime is not part of this program; include "
                            "<torchtpu/device.hpp> in one of its translation units");
  return *h;
}

inline ValueError mixed_devices(const Device& a, const Device& b) {
  return ValueError("Expected all tensors to be on the same device, but found at least two devices, " +
                    a.str() + " and " + b.str() + "!");
}

/// A tensor viewing the whole of a device array of `dtype`/`dims` on `device`.
template <element T>
Tensor<T> wrap(std::shared_ptr<void> array, const Device& device, const Dims& dims) {
  auto s = std::make_shared<StorageImpl>();
  s->device = device;
  s->nbytes = static_cast<size_t>(numel(dims)) * sizeof(T);
  StorageImpl* raw = s.get();  // the storage owns the callback, so the pointer outlives it
  s->download = [raw](void* dst) { device_hooks(raw->device).download(raw->device_handle, dst, raw->nbytes); };
  s->device_handle = std::move(array);
  return Tensor<T>(std::move(s), dims, contiguous_strides(dims), 0);
}

}  // namespace detail
}  // namespace device

/// Runs every deferred statement on every PJRT device now (fused mode's explicit flush).
/// Statements whose results are no longer referenced are dropped without running. A no-op
/// in a program without the device runtime. **Errors:** DeviceError from compilation or
/// execution.
inline void sync() {
  if (const auto* h = device::detail::device_hooks_slot.load(std::memory_order_acquire)) h->sync();
}

namespace detail {

template <element T, int R, expression E>
void device_materialize(Tensor<T, R>& dest, const E& e) {
  namespace dd = device::detail;
  using V = typename E::value_type;
  const Device want = dest.defined() && !dest.device().is_cpu() ? dest.device() : Device("tpu");
  device::ExprTree tree;
  tree.root = dd::add_to_tree(tree, e);
  std::optional<Device> dev;
  for (const auto& l : tree.leaves)
    if (!l.device.is_cpu()) dev = l.device;
  const dd::DeviceHooks& h = dd::device_hooks(dev ? *dev : want);
  dev = h.expression_device(tree);
  if (!dev) {
    // Only the destination is on a device: compute on the cpu, then upload into it.
    Tensor<T> host = Tensor<T>::empty(dest.sizes());
    materialize(host, e);
    dest.copy_(dd::wrap<T>(h.upload(host.data_ptr(), host.dtype(), host.sizes(), dest.device()), dest.device(),
                           host.sizes()));
    return;
  }
  if (dest.defined() && dest.device().is_cpu()) {
    // Device result copied into cpu memory: an explicit observation.
    Tensor<V> r = dd::wrap<V>(h.run(*dev, tree, dtype_of<V>(), e.shape()), *dev, e.shape());
    dest.copy_(r.cpu());
    return;
  }
  if (dest.defined() && dest.device() != *dev) throw dd::mixed_devices(dest.device(), *dev);
  if (!dest.defined()) {
    dest = Tensor<T, R>(dd::wrap<T>(h.run(*dev, tree, dtype_of<T>(), e.shape()), *dev, e.shape()));
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
  dest.storage()->device_handle = h.run(*dev, tree, dtype_of<T>(), dest.sizes());
}

}  // namespace detail

// ---- Tensor::to ------------------------------------------------------

template <element T, int R>
Tensor<T, R> Tensor<T, R>::to(const Device& device) const {
  require_defined("to");
  if (this->device() == device) return *this;
  if (device.is_cpu()) return cpu();
  const Tensor<T> host = this->device().is_cpu() ? Tensor<T>(contiguous()) : Tensor<T>(cpu()).contiguous();
  const auto& h = device::detail::device_hooks(device);
  return Tensor<T, R>(device::detail::wrap<T>(h.upload(host.data_ptr(), dtype(), sizes_, device), device, sizes_));
}

}  // namespace torchtpu
