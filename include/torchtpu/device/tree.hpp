// torchtpu/device/tree.hpp — the device runtime's form of an expression: `ExprTree`, built from
// the typed walk's `NodeInfo`s (device/frontend.hpp), and the rules for assigning one to a
// destination tensor (device, cpu, undefined; whole-storage writes). Non-template code, compiled
// only in translation units that include <torchtpu/device.hpp>.
#pragma once
#include <cstdint>      // int64_t
#include <cstring>      // std::memcpy
#include <memory>       // std::shared_ptr, std::make_shared
#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include "../core/device.hpp"   // Device
#include "../core/errors.hpp"   // ValueError, ShapeError, UnsupportedOperator
#include "../core/shape.hpp"    // Dims, broadcastable_to, contiguous_strides
#include "../core/storage.hpp"  // StorageImpl
#include "frontend.hpp"         // NodeInfo, DeviceHooks, AssignResult

namespace torchtpu::device {

/// One node of an `ExprTree`. The fields a kind does not use keep their defaults.
struct TreeNode {
  /// Same kinds as NodeInfo.
  using Kind = NodeInfo::Kind;
  /// The node's kind.
  Kind kind = Kind::Leaf;
  ScalarType dtype = ScalarType::Float;    ///< the node's value dtype
  ScalarType compute = ScalarType::Float;  ///< as NodeInfo::compute
  Dims shape;                              ///< the node's (broadcast) shape
  ///@{
  std::string_view name, hlo;              ///< op name and StableHLO name (static strings)
  ///@}
  std::string op_state;                    ///< the bytes of a non-empty op struct
  std::vector<int> children;               ///< node indices, in operand order
  /// Map: operand 0 is read as bool (where's condition).
  bool promote_first_to_bool = false;
  /// Reduce: reduced dims, one bit per dim.
  uint32_t mask = 0;
  /// ArgReduce (-1: all) / Softmax: the dim.
  int dim = 0;
  /// Reduce / ArgReduce: keep reduced dims as size 1.
  bool keepdim = false;
  /// Softmax: log_softmax.
  bool log = false;
  /// Scalar: the value in its opmath type.
  double scalar = 0;
  bool int_scalar = false;  ///< Scalar: an integer value, exactly `iscalar`
  int64_t iscalar = 0;  ///< Scalar: the exact integer value when `int_scalar`
  /// Scalar: the statement input holding the value (a one-element device buffer, set when the
  /// statement is recorded), or -1: then the value is a constant in the program text.
  int input = -1;
  int leaf = -1;  ///< Leaf: index into ExprTree::leaves
  /// Contract: broadcast batch shape.
  Dims batch;
  ///@{
  /// Contract: matrix sizes `[m, k] @ [k, n]`.
  int64_t m = 1, k = 1, n = 1;
  ///@}
};

/// A tensor operand of an ExprTree: its storage (a PJRT device array in `storage->device_handle`,
/// or host memory for a rank-0 cpu tensor joining a device expression) and its view.
struct TreeLeaf {
  /// Storage holding the data (device array or host memory).
  Storage storage;
  /// Element type.
  ScalarType dtype = ScalarType::Float;
  /// Device of the data.
  Device device{};
  ///@{
  /// The view: sizes and strides (elements).
  Dims sizes, strides;
  ///@}
  /// The view's offset (elements).
  int64_t offset = 0;
};

/// An expression as plain data: nodes in creation order (operands before the node using them),
/// leaves in the left-to-right order of the expression's tensor operands.
struct ExprTree {
  /// Nodes, operands before the nodes using them.
  std::vector<TreeNode> nodes;
  /// Tensor operands, left to right.
  std::vector<TreeLeaf> leaves;
  /// Index of the root node (-1 while empty).
  int root = -1;

  /// Appends node `n`; returns its index.
  int add(TreeNode n) {
    nodes.push_back(std::move(n));
    return static_cast<int>(nodes.size()) - 1;
  }
  /// Appends a leaf node for tensor operand `l`; returns its node index.
  int add_leaf(TreeLeaf l) {
    TreeNode n;
    n.kind = TreeNode::Kind::Leaf;
    n.dtype = l.dtype;
    n.shape = l.sizes;
    n.leaf = static_cast<int>(leaves.size());
    leaves.push_back(std::move(l));
    return add(std::move(n));
  }
  /// Appends the node `i` describes (children are node indices); returns its index.
  int add_info(const NodeInfo& i) {
    TreeNode n;
    n.kind = i.kind;
    n.dtype = i.dtype;
    n.compute = i.compute;
    if (i.shape) n.shape = *i.shape;
    n.name = i.name;
    n.hlo = i.hlo;
    if (i.state_size) n.op_state.assign(static_cast<const char*>(i.state), i.state_size);
    n.children.assign(i.children, i.children + i.nchildren);
    n.promote_first_to_bool = i.promote_first_to_bool;
    n.mask = i.mask;
    n.dim = i.dim;
    n.keepdim = i.keepdim;
    n.log = i.log;
    n.scalar = i.scalar;
    n.int_scalar = i.int_scalar;
    n.iscalar = i.iscalar;
    if (i.batch) n.batch = *i.batch;
    n.m = i.m;
    n.k = i.k;
    n.n = i.n;
    return add(std::move(n));
  }
};

namespace detail {

inline ValueError mixed_devices(const Device& a, const Device& b) {
  return ValueError("Expected all tensors to be on the same device, but found at least two devices, " +
                    a.str() + " and " + b.str() + "!");
}

/// Copies dense row-major `src` (elements of `elem` bytes, shape `sizes`) into the strided
/// view `dst` (`strides` in elements).
inline void scatter_dense(char* dst, const char* src, const Dims& sizes, const Dims& strides, size_t elem) {
  const int64_t n = numel(sizes);
  int64_t idx[max_rank] = {};
  const int rank = sizes.size();
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (int d = 0; d < rank; ++d) off += idx[d] * strides[d];
    std::memcpy(dst + off * static_cast<int64_t>(elem), src + i * static_cast<int64_t>(elem), elem);
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
  }
}

/// True when a view covers its whole storage densely (only such device tensors can be written).
inline bool covers_storage(const StorageImpl& s, ScalarType dtype, const Dims& sizes, const Dims& strides,
                           int64_t offset) {
  return strides == contiguous_strides(sizes) && offset == 0 &&
         storage_nbytes(sizes, dtype_size(dtype)) == s.nbytes;
}

[[noreturn]] inline void partial_device_write(const StorageImpl& s, const Dims& sizes, int64_t offset) {
  throw UnsupportedOperator("writing into a view of a tensor on " + s.device.str() + " (shape " + to_string(sizes) +
                            ", offset " + std::to_string(offset) + ") is not supported yet; write the whole tensor");
}

/// Storage for the whole of a device array of `numel(dims)` elements of `elem_size` bytes;
/// reading it on the host (`download`, which runs its pending graph first) goes through the
/// installed device hooks.
inline Storage wrap_storage(std::shared_ptr<void> array, const Device& device, const Dims& dims, size_t elem_size) {
  auto s = std::make_shared<StorageImpl>();
  s->device = device;
  s->nbytes = storage_nbytes(dims, elem_size);
  s->download = [](const StorageImpl& self, void* dst) {
    device_hooks(self.device).download(self.device_handle, dst, self.nbytes);
  };
  s->device_handle = std::move(array);
  return s;
}

/// The runtime's operations `assign_tree` needs (device/lower.hpp supplies them).
struct TreeRunner {
  std::optional<Device> (*expression_device)(const ExprTree&);
  std::shared_ptr<void> (*run)(const Device&, const ExprTree&, ScalarType, const Dims&);
  void (*download)(const std::shared_ptr<void>&, void*, size_t);
};

/// `DeviceHooks::assign`: a cpu destination receives the device result converted and
/// broadcast on the device, then copied to the host; a device destination takes the new
/// array as its storage's value (whole-storage writes only); an undefined one gets new storage.
inline AssignResult assign_tree(const TreeRunner& k, ExprTree& t, StorageImpl* dest, ScalarType dtype,
                                const Dims& sizes, const Dims& strides, int64_t offset, const Dims& shape) {
  const std::optional<Device> dev = k.expression_device(t);
  if (!dev) return {true, nullptr};
  if (dest && !broadcastable_to(shape, sizes))
    throw ShapeError("assign: cannot write an expression of shape " + to_string(shape) +
                     " into a tensor of shape " + to_string(sizes));
  if (dest && dest->device.is_cpu()) {  // device result copied into cpu memory: an observation
    const std::shared_ptr<void> arr = k.run(*dev, t, dtype, sizes);
    const size_t elem = dtype_size(dtype), bytes = storage_nbytes(sizes, elem);
    char* base = static_cast<char*>(dest->data) + offset * static_cast<int64_t>(elem);
    if (strides == contiguous_strides(sizes)) {
      k.download(arr, base, bytes);
    } else {
      std::vector<char> tmp(bytes);
      k.download(arr, tmp.data(), bytes);
      scatter_dense(base, tmp.data(), sizes, strides, elem);
    }
    return {};
  }
  if (dest && dest->device != *dev) throw mixed_devices(dest->device, *dev);
  if (!dest) return {false, wrap_storage(k.run(*dev, t, dtype, shape), *dev, shape, dtype_size(dtype))};
  if (!covers_storage(*dest, dtype, sizes, strides, offset)) partial_device_write(*dest, sizes, offset);
  // The storage takes the new value; every view of it sees it (in-place semantics).
  dest->device_handle = k.run(*dev, t, dtype, sizes);
  return {};
}

}  // namespace detail
}  // namespace torchtpu::device
