// torchtpu/jit/region.hpp — run-time elementwise regions of model graphs (Mode::Fused, cpu):
// `find_regions` merges maximal trees of elementwise nodes whose intermediate values have one
// reader (and are not graph outputs) into one `torchtpu::region` node; `run_region_fast` runs
// such a node as one program of region steps over blocks (ops/region.hpp) when every value it
// meets allows it (float32 cpu tensors, numbers, shapes that broadcast to the output's), and
// otherwise says so, and the graph runs the member nodes one by one (jit/graph.hpp), with the
// values and errors of the unfused graph. Which nodes are members is the registry's
// `OpDef::region` (jit/registry.hpp), set by builtin_ops.hpp and library_ops.hpp.
#pragma once
#include <map>       // std::map
#include <memory>    // std::shared_ptr, std::make_shared
#include <optional>  // std::optional
#include <string>    // std::string
#include <utility>   // std::swap, std::move
#include <vector>    // std::vector

#include "../core/errors.hpp"  // Error
#include "../core/shape.hpp"   // broadcast_shapes
#include "../ops/region.hpp"   // RegionProgram, run_region, region_op_id
#include "node.hpp"            // Node
#include "registry.hpp"        // OpDef, RegionRole, Epilogue
#include "value.hpp"           // Value, FloatTensor

namespace torchtpu::jit {

/// A run-time elementwise region: its member nodes in execution order (as in the fused plan,
/// activation epilogues kept) and the slots only its members write and read.
struct Region {
  std::vector<Node> members;      ///< the member nodes, in execution order
  std::vector<int> intermediates;  ///< slots written and read only inside the region
};

/// Appends the steps of activation `ep` applied to `x` (then `x` is their result); false for
/// no activation.
inline bool region_epilogue(const Epilogue& ep, ops::RegionProgram& p, ops::RegionOperand& x) {
  using K = Epilogue::Kind;
  switch (ep.kind) {
    case K::None: return false;
    case K::Relu: x = p.unary(ops::region_op_id<ReluOp>(), x); return true;
    case K::Clamp: x = p.unary(ops::region_op_id<ClampOp>(), x, ep.lo, ep.hi); return true;
    case K::Silu: x = p.unary(ops::region_op_id<SiluOp>(), x); return true;
    case K::Sigmoid: x = p.unary(ops::region_op_id<SigmoidOp>(), x); return true;
    case K::Gelu: x = p.unary(ops::region_op_id<GeluOp>(), x, 0, 0, false); return true;
    case K::GeluTanh: x = p.unary(ops::region_op_id<GeluOp>(), x, 0, 0, true); return true;
    case K::Hardswish: x = p.unary(ops::region_op_id<HardswishOp>(), x); return true;
    case K::Hardsigmoid: x = p.unary(ops::region_op_id<HardsigmoidOp>(), x); return true;
    case K::Tanh: x = p.unary(ops::region_op_id<TanhOp>(), x); return true;
  }
  return false;
}

/// Runs region `r` in one pass when the values in `slots` allow it: every tensor a member
/// reads is a float32 cpu tensor, every number a number, alpha a number, no rounding mode,
/// every member's result has the region's output shape (its operands broadcast to it), and
/// the output is not empty. Returns the region's output, or nothing (then nothing was
/// computed: the caller runs the members one by one, which gives the unfused values or error).
/// Each member computes what its kernel computes (jit/builtin_ops.hpp: `binary`, `activation`;
/// jit/library_ops.hpp: `register_elementwise_ops`): numbers converted to float, `alpha · b`
/// as a step of its own (or the float product for a number `b`), the fused epilogue after.
inline std::optional<Value> run_region_fast(const Region& r, const std::vector<Value>& slots) {
  struct Operand {
    ops::RegionOperand o;
    Dims shape;
    bool number = false;
  };
  ops::RegionProgram p;
  std::vector<FloatTensor> inputs;
  std::vector<int> input_slots;
  std::map<int, size_t> member_of;  // slot -> the member that writes it
  std::vector<Operand> result(r.members.size());
  auto operand = [&](int slot, Operand& out) -> bool {
    if (auto it = member_of.find(slot); it != member_of.end()) {
      out = result[it->second];
      return true;
    }
    const Value& v = slots[size_t(slot)];
    if (v.is_tensor()) {
      const FloatTensor* f = v.any().get_if<float>();
      if (!f || !f->device().is_cpu()) return false;
      size_t k = 0;
      while (k < input_slots.size() && input_slots[k] != slot) ++k;
      if (k == input_slots.size()) {
        input_slots.push_back(slot);
        inputs.push_back(*f);
      }
      out = Operand{ops::RegionOperand::input(int(k)), f->sizes(), false};
      return true;
    }
    if (v.is_scalar()) {
      out = Operand{ops::RegionOperand::constant(float(v.to_double())), Dims{}, true};
      return true;
    }
    return false;
  };
  for (size_t k = 0; k < r.members.size(); ++k) {
    const Node& m = r.members[k];
    const RegionRole& role = m.op->region;
    if (m.outputs.size() != 1 || m.inputs.empty()) return std::nullopt;
    Operand x;
    if (role.kind == RegionRole::Kind::Binary) {
      Operand a, b;
      if (m.inputs.size() < 2 || !operand(m.inputs[0], a) || !operand(m.inputs[1], b)) return std::nullopt;
      if (role.reverse) std::swap(a, b);
      if (a.number && b.number) return std::nullopt;  // a number result: the node's own rules
      double alpha = 1.0;
      if (m.inputs.size() > 2) {
        const Value& v = slots[size_t(m.inputs[2])];
        if (role.mode && !v.is_none()) return std::nullopt;  // trunc / floor division
        if (role.alpha && !v.is_none()) {
          if (!v.is_scalar()) return std::nullopt;
          alpha = v.to_double();
        }
      }
      try {
        x.shape = broadcast_shapes(a.shape, b.shape, "region");
      } catch (const Error&) {
        return std::nullopt;  // the member reports it
      }
      const float al = float(alpha);
      if (al != 1.0f) {  // add / sub / rsub: a op (b · alpha), as builtin::tensor_binary
        if (b.number) b.o.value = b.o.value * al;
        else b.o = p.binary(ops::region_op_id<MulOp>(), b.o, ops::RegionOperand::constant(al));
      }
      x.o = p.binary(role.op, a.o, b.o);
    } else if (role.kind == RegionRole::Kind::Unary || role.kind == RegionRole::Kind::Activation) {
      Operand a;
      if (!operand(m.inputs[0], a) || a.number) return std::nullopt;
      x.shape = a.shape;
      x.o = a.o;
      if (role.kind == RegionRole::Kind::Unary) {
        x.o = p.unary(role.op, a.o);
      } else {
        std::vector<const Value*> in;
        for (int s : m.inputs) in.push_back(&slots[size_t(s)]);
        Epilogue ep;
        try {
          ep = m.op->epilogue_of(in);
        } catch (const Error&) {
          return std::nullopt;
        }
        if (!region_epilogue(ep, p, x.o)) return std::nullopt;
      }
    } else {
      return std::nullopt;
    }
    if (m.epilogue.active() && !region_epilogue(m.epilogue, p, x.o)) return std::nullopt;
    result[k] = x;
    member_of[m.outputs[0]] = k;
  }
  const Dims shape = result.back().shape;
  for (const Operand& x : result)
    if (!(x.shape == shape)) return std::nullopt;  // an intermediate broadcast later: run unfused
  if (numel(shape) == 0) return std::nullopt;
  p.allocate();
  return Value(ops::run_region(p, inputs, shape));
}

/// The registry entry of region nodes (never run as a kernel: jit/graph.hpp runs regions).
inline std::shared_ptr<const OpDef> region_opdef() {
  static const std::shared_ptr<const OpDef> d = [] {
    OpDef o;
    o.name = "torchtpu::region";
    o.kernel = [](OpContext&) { throw Error("torchtpu::region: internal: a region node run as a kernel"); };
    return std::make_shared<const OpDef>(std::move(o));
  }();
  return d;
}

/// `nodes` (a fused plan, activations already merged) with each maximal tree of two or more
/// region members merged into one `torchtpu::region` node at the place of its last member.
/// A member's value joins the node that reads it when it is read once, by that node, as an
/// operand (input 0, or input 1 of a binary node), and is not a graph output. No region spans
/// an in-place node (its members run at the last member's place). `n_slots`: the graph's slot
/// count; `outputs`: its output slots.
inline std::vector<Node> find_regions(std::vector<Node> nodes, const std::vector<int>& outputs, size_t n_slots) {
  const size_t N = nodes.size();
  std::vector<int> uses(n_slots, 0), reader(n_slots, -1), reader_pos(n_slots, -1);
  for (size_t i = 0; i < N; ++i)
    for (size_t k = 0; k < nodes[i].inputs.size(); ++k) {
      const size_t s = size_t(nodes[i].inputs[k]);
      ++uses[s];
      reader[s] = int(i);
      reader_pos[s] = int(k);
    }
  for (int s : outputs) ++uses[size_t(s)];
  auto member = [](const Node& n) {
    return n.op && n.op->region.kind != RegionRole::Kind::None && !n.op->in_place && n.outputs.size() == 1 &&
           !n.inputs.empty() && !n.region;
  };
  std::vector<int> in_place_before(N + 1, 0);
  for (size_t i = 0; i < N; ++i) in_place_before[i + 1] = in_place_before[i] + (nodes[i].op && nodes[i].op->in_place ? 1 : 0);
  // parent[i]: the member reading node i's value into its region; root[i]: the region's last
  // member. One allocation for both, sized like in_place_before (GCC 12 -O3 reports a false
  // -Walloc-size-larger-than= on two vectors of N built here)
  std::vector<int> tree(2 * (N + 1), -1);
  int* const parent = tree.data();
  int* const root = tree.data() + (N + 1);
  for (size_t i = 0; i < N; ++i) {
    if (!member(nodes[i])) continue;
    const size_t s = size_t(nodes[i].outputs[0]);
    if (uses[s] != 1 || reader[s] <= int(i)) continue;
    const Node& j = nodes[size_t(reader[s])];
    if (!member(j)) continue;
    if (reader_pos[s] == 0 || (reader_pos[s] == 1 && j.op->region.kind == RegionRole::Kind::Binary)) parent[i] = reader[s];
  }
  for (size_t i = N; i-- > 0;) {
    if (!member(nodes[i])) continue;
    root[i] = int(i);
    if (parent[i] < 0) continue;
    const int rt = root[size_t(parent[i])];
    if (in_place_before[size_t(rt)] - in_place_before[i + 1] == 0) root[i] = rt;  // no in-place node in between
  }
  std::vector<std::vector<size_t>> members(N);
  for (size_t i = 0; i < N; ++i)
    if (root[i] >= 0) members[size_t(root[i])].push_back(i);
  std::vector<Node> out;
  for (size_t i = 0; i < N; ++i) {
    if (root[i] < 0 || (root[i] == int(i) && members[i].size() == 1)) {
      out.push_back(std::move(nodes[i]));
      continue;
    }
    if (root[i] != int(i)) continue;  // merged into its root's region
    auto reg = std::make_shared<Region>();
    std::vector<bool> written(n_slots, false);
    for (size_t k : members[i]) written[size_t(nodes[k].outputs[0])] = true;
    Node rn;
    rn.kind = "torchtpu::region";
    rn.op = region_opdef();
    rn.location = nodes[members[i].front()].location;
    rn.outputs = {nodes[i].outputs[0]};
    for (size_t k : members[i]) {
      for (int s : nodes[k].inputs) {
        if (written[size_t(s)]) continue;
        bool seen = false;
        for (int t : rn.inputs) seen = seen || t == s;
        if (!seen) rn.inputs.push_back(s);
      }
      if (k != i) reg->intermediates.push_back(nodes[k].outputs[0]);
    }
    for (size_t k : members[i]) reg->members.push_back(std::move(nodes[k]));
    rn.region = std::move(reg);
    out.push_back(std::move(rn));
  }
  return out;
}

}  // namespace torchtpu::jit
