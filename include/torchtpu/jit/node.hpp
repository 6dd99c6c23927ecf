// torchtpu/jit/node.hpp — one node of the run-time graph (jit/graph.hpp): its kind, registry
// op, value slots, location and fused epilogue; a run-time elementwise region (jit/region.hpp)
// is a node too, holding its member nodes.
#pragma once
#include <memory>  // std::shared_ptr
#include <string>  // std::string
#include <vector>  // std::vector

#include "registry.hpp"  // OpDef, Epilogue

namespace torchtpu::jit {

struct Region;  // jit/region.hpp

/// One node of the run-time graph.
struct Node {
  std::string kind;                  ///< TorchScript kind, e.g. `aten::linear`
  std::shared_ptr<const OpDef> op;   ///< null while the kind is unknown (the graph then fails to finalize)
  ///@{
  std::vector<int> inputs, outputs;  ///< value slots
  ///@}
  std::string location;              ///< `node 12 (model.py:30:0)`, for error messages
  Epilogue epilogue{};               ///< activation fused in (fused mode only)
  std::shared_ptr<const void> state; ///< what `op->prepare` computed at finalize (OpContext::state), or null
  /// A run-time elementwise region (kind `torchtpu::region`, fused mode only): its members,
  /// run as one pass over blocks, or one by one when a run-time precondition fails.
  std::shared_ptr<const Region> region;
  /// A convolution chain (kind `torchtpu::conv_chain`, fused mode only: jit/graph.hpp
  /// `find_conv_chains`): its member convolutions, run band by band by their op's
  /// `OpDef::run_chain`, or one by one when it declines.
  std::shared_ptr<const Region> chain;
};

}  // namespace torchtpu::jit
