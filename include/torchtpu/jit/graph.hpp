// torchtpu/jit/graph.hpp — the run-time graph: value slots (inputs, constants, node outputs),
// nodes bound to registry ops, the missing-operator check, activation fusion, and `run`.
// Independent of libtorch (the importer in load.hpp builds one from a TorchScript graph).
#pragma once
#include <chrono>     // std::chrono::steady_clock (profile)
#include <cmath>      // std::isfinite
#include <cstdio>     // std::fprintf
#include <map>        // std::map
#include <memory>     // std::shared_ptr, std::unique_ptr
#include <mutex>      // std::mutex (Frames)
#include <optional>   // std::optional
#include <span>       // std::span
#include <string>     // std::string
#include <type_traits>  // std::is_floating_point_v
#include <utility>    // std::move
#include <vector>     // std::vector

#include "../core/errors.hpp"  // UnsupportedOperator, ValueError, ...
#include "../core/storage.hpp"  // HostBlockPool (the blocks a run allocates from)
#include "../fuse/gemm.hpp"    // ConstantPacks (constants pinned for packing)
#include "node.hpp"            // Node
#include "region.hpp"          // Region, find_regions, run_region_fast
#include "registry.hpp"        // registry, OpDef, Mode
#include "value.hpp"           // Value

namespace torchtpu::jit {

/// A straight-line graph of registry ops over value slots.
///
/// Build it with `add_input` / `add_constant` / `add_node` / `set_outputs`, then `finalize()`,
/// which throws UnsupportedOperator listing every unknown kind (count and first location)
/// before anything runs. `run` executes it node by node; in `Mode::Fused` an activation
/// whose input is produced by a linear/conv/elementwise node used nowhere else runs inside
/// that node (the matmul epilogue or the same elementwise pass), and then each maximal tree
/// of elementwise nodes whose intermediate values have one reader runs as one region node:
/// one pass over blocks of the output on the cpu, or its nodes one by one when the values
/// do not allow it (jit/region.hpp).
class Graph {
 public:
  /// Adds an input named `name`; returns its value slot.
  int add_input(std::string name) {
    inputs_.push_back(new_slot(Value()));
    input_names_.push_back(std::move(name));
    return inputs_.back();
  }
  /// Adds constant `v`; returns its value slot. A finalized graph treats its constant tensors as
  /// read-only: the CPU engine keeps packed copies of those it multiplies (fuse/gemm.hpp
  /// ConstantPacks), so they must not be modified in place while the graph exists.
  int add_constant(Value v) {
    const int s = new_slot(std::move(v));
    is_constant_[size_t(s)] = true;
    return s;
  }
  /// Adds a node of `kind` reading the existing slots `inputs`; returns its `n_outputs` new
  /// output slots. Inputs name slots added before (so a graph is acyclic by construction).
  /// **Errors:** ValueError for an input that is not an existing slot or a negative `n_outputs`.
  std::vector<int> add_node(const std::string& kind, std::vector<int> inputs, int n_outputs, std::string location) {
    for (int s : inputs) check_slot(s, "add_node: " + kind + " at " + location + ": input");
    if (n_outputs < 0)
      throw ValueError("add_node: " + kind + " at " + location + ": negative output count " + std::to_string(n_outputs));
    Node n;
    n.kind = kind;
    n.op = registry().find(kind);
    n.inputs = std::move(inputs);
    for (int i = 0; i < n_outputs; ++i) n.outputs.push_back(new_slot(Value()));
    n.location = std::move(location);
    if (!n.op) {
      auto& m = missing_[kind];
      if (m.count++ == 0) {
        m.first = n.location;
        m.why = hint(kind);
      }
    }
    nodes_.push_back(std::move(n));
    return nodes_.back().outputs;
  }
  /// Records a problem that makes the graph unrunnable (e.g. control flow); reported by
  /// `finalize` together with the unknown operators.
  void add_unsupported(const std::string& kind, const std::string& location, const std::string& why = "") {
    auto& m = missing_[kind];
    if (m.count++ == 0) m.first = location;
    if (!why.empty()) m.why = why;
  }
  /// Sets the value slots the graph returns. **Errors:** ValueError for a slot that does not exist.
  void set_outputs(std::vector<int> outs) {
    for (int s : outs) check_slot(s, "set_outputs: output");
    outputs_ = std::move(outs);
  }

  /// Checks every node has an op whose arguments it honours (OpDef::check), and plans both
  /// execution orders.
  /// **Errors:** UnsupportedOperator listing each missing kind, and each kind called with
  /// arguments it would not compute as torch does (the argument, its value and why), with its
  /// count and first location.
  void finalize() {
    frames_ = Frames();  // frames copied the slots of before
    fold_constants();
    std::map<std::string, Missing> rejected;
    for (const Node& n : nodes_) {
      if (n.op && n.outputs.empty()) {  // every kernel writes out[0]
        auto& m = rejected[n.kind];
        if (m.count++ == 0) {
          m.first = n.location;
          m.why = "the node has no outputs (every operator returns a value)";
        }
        continue;
      }
      if (!n.op || !n.op->check) continue;
      std::vector<const Value*> args;
      for (int s : n.inputs) args.push_back(is_constant_[size_t(s)] ? &slots_[size_t(s)] : nullptr);
      std::string why;
      try {
        why = n.op->check(args);
      } catch (const Error& e) {
        why = std::string("unexpected argument kinds: ") + e.what();
      }
      if (why.empty()) continue;
      auto& m = rejected[n.kind];
      if (m.count++ == 0) {
        m.first = n.location;
        m.why = why;
      }
    }
    if (!missing_.empty() || !rejected.empty()) {
      std::string msg;
      if (!missing_.empty()) {
        msg = "the model uses " + std::to_string(missing_.size()) +
              " operator kind(s) torchtpu does not support (add them with torchtpu::register_op):";
        for (const auto& [k, m] : missing_) {
          msg += "\n  " + k + " x" + std::to_string(m.count) + ", first at " + m.first;
          if (!m.why.empty()) msg += " (" + m.why + ")";
        }
      }
      if (!rejected.empty()) {
        msg += std::string(msg.empty() ? "" : "\n") + "the model calls " + std::to_string(rejected.size()) +
               " operator kind(s) with arguments torchtpu does not compute as torch does:";
        for (const auto& [k, m] : rejected)
          msg += "\n  " + k + " x" + std::to_string(m.count) + ", first at " + m.first + ": " + m.why;
      }
      throw UnsupportedOperator(msg);
    }
    prepare_nodes();
    std::vector<Node> live;  // the nodes left to run: folded ones are constants now
    for (size_t i = 0; i < nodes_.size(); ++i)
      if (!folded_[i]) live.push_back(nodes_[i]);
    plain_ = plan(live);
    fused_ = plan(find_regions(find_conv_chains(fuse(std::move(live))), outputs_, slots_.size()));
    pins_ = pin_constants();
  }

  /// Runs the graph on `inputs` (one per graph input). Returns the graph outputs.
  /// **Errors:** ValueError for a wrong input count or kind; any kernel error is rethrown with
  /// the same type, prefixed by the failing node's kind and location.
  std::vector<Value> run(std::vector<Value> inputs, Mode mode = Mode::Fused) const {
    std::vector<Value> r;
    run(std::span<Value>(inputs), r, mode, true);
    return r;
  }
  /// `run` with the inputs copied (tensors shared, not their data) and the outputs written into
  /// `outputs` (resized to the output count, its capacity reused): with a caller that keeps
  /// `outputs` (and its input list) from call to call, a pass with the shapes of an earlier one
  /// allocates nothing from the heap (issue 16). **Errors:** as `run`.
  void run(std::span<const Value> inputs, std::vector<Value>& outputs, Mode mode = Mode::Fused) const {
    run(std::span<Value>(const_cast<Value*>(inputs.data()), inputs.size()), outputs, mode, false);
  }

  /// One node of a profiled pass (`profile`).
  struct NodeProfile {
    std::string kind;      ///< TorchScript kind (`aten::conv2d`), `torchtpu::region` for a fused elementwise region, `torchtpu::conv_chain` for a convolution chain
    std::string location;  ///< as in error messages, e.g. `node 12 (model.py:30:0)`
    std::string inputs;    ///< the input tensors' shapes and dtypes, e.g. `[1, 64, 56, 56] float32, [64, 64, 3, 3] float32`
    double seconds = 0;    ///< wall time of the node's kernel in seconds, mean over the profiled passes
  };
  /// Runs the graph `passes` times on `inputs` (copied, as `run`) with each node timed
  /// (steady_clock around its kernel, one thread's wall time: a node's worker threads inside
  /// it). Returns the nodes of `mode`'s plan in execution order (a fused region is one node;
  /// an activation fused into its producer is in the producer's time). Profile after a warm-up
  /// pass: the first pass packs weights and fills the block pool. **Errors:** ValueError when
  /// `passes` < 1; otherwise as `run`.
  std::vector<NodeProfile> profile(std::span<const Value> inputs, int passes, Mode mode = Mode::Fused) const {
    if (passes < 1) throw ValueError("profile: passes must be at least 1, got " + std::to_string(passes));
    const Plan& p = mode == Mode::Fused ? fused_ : plain_;
    std::vector<double> seconds(p.nodes.size(), 0.0);
    std::vector<std::string> shapes(p.nodes.size());
    std::vector<Value> outputs;
    for (int k = 0; k < passes; ++k)
      run(std::span<Value>(const_cast<Value*>(inputs.data()), inputs.size()), outputs, mode, false, &seconds,
          k == 0 ? &shapes : nullptr);
    std::vector<NodeProfile> r(p.nodes.size());
    for (size_t i = 0; i < r.size(); ++i)
      r[i] = NodeProfile{p.nodes[i].kind, p.nodes[i].location, std::move(shapes[i]), seconds[i] / passes};
    return r;
  }

 private:
  /// `run`'s body: the inputs moved into the slots when `move` (the by-value overload's own
  /// list), copied otherwise.
  /// With `seconds` (one entry per plan node), each node's wall time is added to its entry; with
  /// `shapes`, its input tensors' shapes are written to its entry (`profile`).
  void run(std::span<Value> inputs, std::vector<Value>& outputs, Mode mode, bool move,
           std::vector<double>* seconds = nullptr, std::vector<std::string>* shapes = nullptr) const {
    if (inputs.size() != inputs_.size())
      throw ValueError("forward: the model takes " + std::to_string(inputs_.size()) + " input(s), got " +
                       std::to_string(inputs.size()));
    const Plan& p = mode == Mode::Fused ? fused_ : plain_;
    // every tensor this pass allocates on this thread comes from (and returns to) the graph's
    // pool: after the first pass with these shapes, no heap traffic for tensors
    const HostBlockPool::Scope pooled(pool_);
    // a frame (slots with the constants in place, node scratch) from an earlier run, or a new
    // one: copying the constants (int lists among them) for every run allocated
    const Frames::Lease frame(frames_, slots_, is_constant_);
    std::vector<Value>& slots = frame->slots;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (move) slots[size_t(inputs_[i])] = std::move(inputs[i]);
      else slots[size_t(inputs_[i])] = inputs[i];
    }
    for (size_t ni = 0; ni < p.nodes.size(); ++ni) {
      if (shapes) (*shapes)[ni] = input_shapes(p.nodes[ni], slots);
      const auto t0 = seconds ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
      exec(p.nodes[ni], slots, mode, frame->scratch);
      if (seconds) (*seconds)[ni] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      for (int s : p.frees[ni]) slots[size_t(s)].reset();  // a list's room kept for the next pass
    }
    outputs.resize(outputs_.size());
    for (size_t k = 0; k < outputs_.size(); ++k) outputs[k] = slots[size_t(outputs_[k])];
  }

 public:

  /// The nodes in execution order (those folded into constants at finalize included: they
  /// read constants only, and `initial_slots` holds their outputs).
  const std::vector<Node>& nodes() const noexcept { return nodes_; }
  /// Slot values before a run: constants filled in, everything else None.
  const std::vector<Value>& initial_slots() const noexcept { return slots_; }
  /// Value slots of the graph's inputs.
  const std::vector<int>& input_slots() const noexcept { return inputs_; }
  /// Value slots of the graph's outputs.
  const std::vector<int>& output_slots() const noexcept { return outputs_; }
  /// Number of nodes each mode executes (fused mode runs fewer: activations merged, and a
  /// region counts as one node).
  size_t executed_nodes(Mode mode) const noexcept { return (mode == Mode::Fused ? fused_ : plain_).nodes.size(); }
  /// Number of inputs.
  size_t num_inputs() const noexcept { return inputs_.size(); }
  /// Number of outputs.
  size_t num_outputs() const noexcept { return outputs_.size(); }
  /// Node kinds with their counts (prim::Constant excluded).
  std::map<std::string, int> kind_counts() const {
    std::map<std::string, int> m;
    for (const auto& n : nodes_) ++m[n.kind];
    return m;
  }

 private:
  struct Missing {
    int count = 0;
    std::string first, why;
  };
  struct Plan {
    std::vector<Node> nodes;
    std::vector<std::vector<int>> frees;  ///< slots to release after each node
  };
  /// A run's buffers for a node's input pointers and outputs, reused node after node.
  struct Scratch {
    std::vector<const Value*> in;
    std::vector<Value> out;
  };
  /// What one run works in: the slots (constants filled in, the rest None between runs) and
  /// the node scratch.
  struct Frame {
    std::vector<Value> slots;
    Scratch scratch;
  };
  /// The frames of finished runs, reused by later ones (one per run in flight at most; runs
  /// may overlap on several threads). A copied graph starts with none of its own.
  struct Frames {
    std::mutex mu;
    std::vector<std::unique_ptr<Frame>> spare;
    Frames() = default;
    Frames(const Frames&) noexcept {}
    Frames& operator=(const Frames&) {
      const std::lock_guard<std::mutex> lock(mu);
      spare.clear();
      return *this;
    }
    /// A frame for one run: taken from `spare` (or made from `initial`), given back with every
    /// slot that is not a constant reset to None, whether the run returns or throws.
    class Lease {
     public:
      /// Takes a frame of `f` (or copies `initial`); `is_constant` marks the slots kept.
      Lease(Frames& f, const std::vector<Value>& initial, const std::vector<bool>& is_constant)
          : f_(f), is_constant_(is_constant) {
        {
          const std::lock_guard<std::mutex> lock(f.mu);
          if (!f.spare.empty()) {
            frame_ = std::move(f.spare.back());
            f.spare.pop_back();
          }
        }
        if (!frame_) frame_ = std::make_unique<Frame>(Frame{initial, {}});
      }
      ~Lease() {
        for (size_t s = 0; s < frame_->slots.size(); ++s)
          if (!is_constant_[s]) frame_->slots[s].reset();  // a list slot keeps its room
        frame_->scratch.in.clear();
        frame_->scratch.out.clear();
        const std::lock_guard<std::mutex> lock(f_.mu);
        try {
          f_.spare.push_back(std::move(frame_));
        } catch (...) {  // no room to keep it: dropped
        }
      }
      Lease(const Lease&) = delete;
      Lease& operator=(const Lease&) = delete;
      /// The frame.
      Frame* operator->() const noexcept { return frame_.get(); }

     private:
      Frames& f_;
      const std::vector<bool>& is_constant_;
      std::unique_ptr<Frame> frame_;
    };
  };

  /// Computes once each node of an `OpDef::fold` op whose inputs are all constants (the
  /// stride and padding lists a model builds with prim::ListConstruct): its outputs become
  /// constants and the node does not run. A node whose kernel throws is left to run, which
  /// reports the error with its location.
  void fold_constants() {
    folded_.assign(nodes_.size(), false);
    std::vector<const Value*> in;
    for (size_t i = 0; i < nodes_.size(); ++i) {
      const Node& n = nodes_[i];
      if (!n.op || !n.op->fold || n.outputs.empty()) continue;
      bool constant = true;
      for (int s : n.inputs) constant = constant && is_constant_[size_t(s)];
      if (!constant) continue;
      in.clear();
      for (int s : n.inputs) in.push_back(&slots_[size_t(s)]);
      std::vector<Value> out(n.outputs.size());
      OpContext ctx{in, out};
      try {
        n.op->kernel(ctx);
      } catch (const std::exception&) {
        continue;
      }
      for (size_t k = 0; k < out.size(); ++k) {
        slots_[size_t(n.outputs[k])] = std::move(out[k]);
        is_constant_[size_t(n.outputs[k])] = true;
      }
      folded_[i] = true;
    }
  }

  /// Runs each op's `prepare` on its node's constant inputs (OpDef::prepare).
  void prepare_nodes() {
    std::vector<const Value*> args;
    for (Node& n : nodes_) {
      if (!n.op || !n.op->prepare) continue;
      args.clear();
      for (int s : n.inputs) args.push_back(is_constant_[size_t(s)] ? &slots_[size_t(s)] : nullptr);
      try {
        n.state = n.op->prepare(args);
      } catch (const std::exception&) {
        n.state = nullptr;  // the kernel reads the arguments itself and reports the problem
      }
    }
  }

  void check_slot(int s, const std::string& what) const {
    if (s < 0 || size_t(s) >= slots_.size())
      throw ValueError(what + " slot " + std::to_string(s) + " does not exist (the graph has " +
                       std::to_string(slots_.size()) + " slots so far)");
  }

  int new_slot(Value v) {
    frames_ = Frames();
    slots_.push_back(std::move(v));
    is_constant_.push_back(false);
    return int(slots_.size()) - 1;
  }

  /// Why an unknown kind is likely there: random ops come from a module traced in training mode.
  static std::string hint(const std::string& kind) {
    for (const char* r : {"aten::bernoulli", "aten::bernoulli_", "aten::native_dropout", "aten::feature_alpha_dropout",
                          "aten::rand", "aten::rand_like", "aten::randn", "aten::randn_like", "aten::randint",
                          "aten::randint_like", "aten::normal", "aten::normal_", "aten::uniform_", "aten::multinomial",
                          "aten::randperm", "aten::rrelu", "aten::rrelu_with_noise"})
      if (kind == r)
        return "random sampling, e.g. dropout in a module traced in training mode; trace the model after model.eval()";
    return "";
  }

  /// Runs node `n` on `slots` (its outputs written there). A region node runs in one pass
  /// when its values allow it (jit/region.hpp), otherwise member by member, each as the
  /// unfused graph runs it (its errors name the member).
  void exec(const Node& n, std::vector<Value>& slots, Mode mode, Scratch& scratch) const {
    if (n.chain) {
      if (std::optional<Value> v = run_chain(n, slots)) {
        slots[size_t(n.outputs[0])] = std::move(*v);
        return;
      }
      for (const Node& m : n.chain->members) exec(m, slots, mode, scratch);
      for (int s : n.chain->intermediates) slots[size_t(s)].reset();
      return;
    }
    if (n.region) {
      if (std::optional<Value> v = run_region_fast(*n.region, slots)) {
        slots[size_t(n.outputs[0])] = std::move(*v);
        return;
      }
      for (const Node& m : n.region->members) exec(m, slots, mode, scratch);
      for (int s : n.region->intermediates) slots[size_t(s)].reset();
      return;
    }
    std::vector<const Value*>& in = scratch.in;
    in.clear();
    for (int s : n.inputs) in.push_back(&slots[size_t(s)]);
    std::vector<Value>& out = scratch.out;
    out.clear();
    out.resize(n.outputs.size());
    // a list this node wrote in an earlier pass left its room in the slot: the new list reuses it
    for (size_t i = 0; i < out.size(); ++i) out[i].take_list_room(slots[size_t(n.outputs[i])]);
    OpContext ctx{in, out, n.epilogue, n.state.get()};
    try {
      n.op->kernel(ctx);
    } catch (const ShapeError& e) { throw ShapeError(context(n) + e.what());
    } catch (const TypeError& e) { throw TypeError(context(n) + e.what());
    } catch (const IndexError& e) { throw IndexError(context(n) + e.what());
    } catch (const ValueError& e) { throw ValueError(context(n) + e.what());
    } catch (const UnsupportedOperator& e) { throw UnsupportedOperator(context(n) + e.what());
    } catch (const Error& e) { throw Error(context(n) + e.what());
    } catch (const std::exception& e) { throw Error(context(n) + e.what()); }
    if (mode == Mode::Debug) check_finite(n, out);
    for (size_t i = 0; i < out.size(); ++i) slots[size_t(n.outputs[i])] = std::move(out[i]);
  }

  /// `[1, 64, 56, 56] float32, [64] float32` for a node's tensor inputs (lists: `list of N`).
  static std::string input_shapes(const Node& n, const std::vector<Value>& slots) {
    std::string r;
    for (int s : n.inputs) {
      const Value& v = slots[size_t(s)];
      std::string one;
      if (v.is_tensor()) {
        one = to_string(v.any().sizes()) + " " + std::string(dtype_name(v.any().dtype()));
      } else if (v.kind() == Value::Kind::TensorList) {
        one = "list of " + std::to_string(v.anys().size());
      } else {
        continue;
      }
      r += (r.empty() ? "" : ", ") + one;
    }
    return r;
  }

  static std::string context(const Node& n) { return "forward: " + n.kind + " at " + n.location + ": "; }

  static void check_finite(const Node& n, const std::vector<Value>& out) {
    for (const Value& v : out) {
      if (!v.is_tensor()) continue;
      // Only the distinct elements: a broadcast (stride-0) dim repeats its first entry. Copying
      // the whole view could need more memory than exists (an expand to 2^40 elements is a
      // valid view) and made Debug throw where Fused and Strict run (fuzz_jit_graph).
      const bool bad = v.any().visit([]<class T>(const Tensor<T>& x) {
        if constexpr (!std::is_floating_point_v<T> && !std::is_same_v<T, half> && !std::is_same_v<T, bfloat16>) {
          return false;  // integers and bool are always finite
        } else {
          if (!x.device().is_cpu()) return false;  // device values are checked by the device's debug mode
          Tensor<T> d = x;
          for (int i = 0; i < d.dim(); ++i)
            if (d.stride(i) == 0 && d.size(i) > 1) d = d.narrow(i, 0, 1);
          const Tensor<T> t = d.contiguous();
          for (int64_t i = 0; i < t.numel(); ++i)
            if (!std::isfinite(static_cast<double>(convert<double>(t.data_ptr()[i])))) return true;
          return false;
        }
      });
      if (bad) {
        std::fprintf(stderr, "torchtpu debug: %s at %s produced a non-finite value (shape %s)\n", n.kind.c_str(),
                     n.location.c_str(), to_string(v.any().sizes()).c_str());
        return;
      }
    }
  }

  /// True when node `a` is `aten::add`/`add_` of two tensors with alpha a constant 1.
  bool unit_add(const Node& a) const {
    if ((a.kind != "aten::add" && a.kind != "aten::add_") || a.inputs.size() != 3 || a.outputs.size() != 1) return false;
    const Value& alpha = slots_[size_t(a.inputs[2])];
    return is_constant_[size_t(a.inputs[2])] &&
           ((alpha.is_int() && alpha.to_int() == 1) || (alpha.is_double() && alpha.to_double() == 1.0));
  }

  /// Merges single-use activations into their producers, and residual adds (`unit_add`) into
  /// a convolution that produces one operand (used only there) when the other is computed
  /// before that convolution and read by no node in between (add_, which overwrites its first
  /// operand: the convolution's result is that operand, or the first operand is another
  /// convolution's result read nowhere else).
  std::vector<Node> fuse(std::vector<Node> nodes) const {
    std::vector<int> uses(slots_.size(), 0), producer(slots_.size(), -1);
    for (const auto& n : nodes)
      for (int s : n.inputs) ++uses[size_t(s)];
    for (int s : outputs_) ++uses[size_t(s)];
    std::vector<bool> dead(nodes.size(), false);
    for (size_t i = 0; i < nodes.size(); ++i) {
      Node& a = nodes[i];
      for (int s : a.outputs) producer[size_t(s)] = int(i);
      if (unit_add(a)) {
        // add_ writes its sum into its first operand: the sum may come from the second
        // operand's convolution only when the first is a convolution's fresh result that
        // nothing else reads (no view of another tensor, not a graph input)
        const int self = a.inputs[0], ps = producer[size_t(self)];
        const bool swap_ok = a.kind == "aten::add" ||
                             (uses[size_t(self)] == 1 && ps >= 0 && nodes[size_t(ps)].op->accepts_residual &&
                              nodes[size_t(ps)].outputs.size() == 1 && nodes[size_t(ps)].outputs[0] == self);
        for (int q = 0; q < (swap_ok ? 2 : 1); ++q) {
          const int src = a.inputs[size_t(q)], other = a.inputs[size_t(1 - q)];
          const int pi = producer[size_t(src)];
          if (pi < 0 || uses[size_t(src)] != 1 || other == src || producer[size_t(other)] >= pi) continue;
          if (is_constant_[size_t(other)] && !slots_[size_t(other)].is_tensor()) continue;  // add(x, 2.0)
          Node& p = nodes[size_t(pi)];
          if (dead[size_t(pi)] || !p.op->accepts_residual || p.epilogue.active() || p.outputs.size() != 1 ||
              p.outputs[0] != src)
            continue;
          bool read_between = false;
          for (size_t k = size_t(pi) + 1; k < i && !read_between; ++k)
            for (int s : nodes[k].inputs) read_between = read_between || (!dead[k] && s == other);
          if (read_between) continue;
          p.inputs.push_back(other);
          p.epilogue.residual = true;
          p.outputs[0] = a.outputs[0];
          producer[size_t(a.outputs[0])] = pi;
          dead[i] = true;
          break;
        }
        if (dead[i]) continue;
      }
      if (!a.op->epilogue_of || a.inputs.empty()) continue;
      const int src = a.inputs[0];
      const int pi = producer[size_t(src)];
      if (pi < 0 || uses[size_t(src)] != 1) continue;
      Node& p = nodes[size_t(pi)];
      if (!p.op->accepts_epilogue || p.epilogue.kind != Epilogue::Kind::None || p.outputs.size() != 1 ||
          p.outputs[0] != src)
        continue;
      bool const_args = true;
      for (size_t k = 1; k < a.inputs.size(); ++k) const_args = const_args && is_constant_[size_t(a.inputs[k])];
      if (!const_args) continue;
      std::vector<const Value*> args;
      for (int s : a.inputs) args.push_back(&slots_[size_t(s)]);
      Epilogue ep;
      try {
        ep = a.op->epilogue_of(args);
      } catch (const Error&) {
        continue;  // left to the kernel, which reports the problem with its location
      }
      if (!ep.active()) continue;
      ep.residual = p.epilogue.residual;  // a residual add fused before it stays
      p.epilogue = ep;
      p.outputs[0] = a.outputs[0];
      producer[size_t(a.outputs[0])] = pi;
      dead[i] = true;
    }
    std::vector<Node> r;
    for (size_t i = 0; i < nodes.size(); ++i)
      if (!dead[i]) r.push_back(std::move(nodes[i]));
    return r;
  }

  /// `nodes` (the fused plan) with each run of consecutive convolutions of one op that form
  /// a chain (OpDef::chain_role: [pointwise] depthwise [pointwise], each reading the previous
  /// one's result, read nowhere else and not a graph output; a residual add fused into the last
  /// only) merged into one `torchtpu::conv_chain` node: MobileNet's inverted residual blocks,
  /// run band by band of rows (ops/conv.hpp `conv2d_chain`) so that their expanded tensors stay
  /// in cache. The node's inputs are its members' inputs (the intermediates left out).
  std::vector<Node> find_conv_chains(std::vector<Node> nodes) const {
    std::vector<int> uses(slots_.size(), 0);
    for (const auto& n : nodes)
      for (int s : n.inputs) ++uses[size_t(s)];
    for (int s : outputs_) ++uses[size_t(s)];
    auto role = [](const Node& n) { return n.op && n.op->chain_role && n.op->run_chain ? n.op->chain_role(n.state.get()) : 0; };
    // node b reads node a's result as its operand 0, and only b reads it
    auto links = [&](const Node& a, const Node& b) {
      return a.op == b.op && a.outputs.size() == 1 && !a.epilogue.residual && !b.inputs.empty() &&
             b.inputs[0] == a.outputs[0] && uses[size_t(a.outputs[0])] == 1;
    };
    std::vector<Node> r;
    for (size_t i = 0; i < nodes.size();) {
      size_t len = 0;  // members from node i on: pointwise, depthwise, pointwise (the first or last may be absent)
      const int r0 = role(nodes[i]);
      if (r0 == 1 && i + 1 < nodes.size() && role(nodes[i + 1]) == 2 && links(nodes[i], nodes[i + 1])) {
        len = 2;
        if (i + 2 < nodes.size() && role(nodes[i + 2]) == 1 && links(nodes[i + 1], nodes[i + 2])) len = 3;
      } else if (r0 == 2 && i + 1 < nodes.size() && role(nodes[i + 1]) == 1 && links(nodes[i], nodes[i + 1])) {
        len = 2;
      }
      if (len == 0) {
        r.push_back(std::move(nodes[i++]));
        continue;
      }
      auto chain = std::make_shared<Region>();
      Node cn;
      cn.kind = "torchtpu::conv_chain";
      cn.op = conv_chain_opdef();
      cn.location = nodes[i].location;
      cn.outputs = nodes[i + len - 1].outputs;
      for (size_t k = i; k < i + len; ++k) {
        for (size_t q = 0; q < nodes[k].inputs.size(); ++q) {
          const int s = nodes[k].inputs[q];
          if (k > i && q == 0) continue;  // the previous member's result
          bool seen = false;
          for (int t : cn.inputs) seen = seen || t == s;
          if (!seen) cn.inputs.push_back(s);
        }
        if (k + 1 < i + len) chain->intermediates.push_back(nodes[k].outputs[0]);
        chain->members.push_back(std::move(nodes[k]));
      }
      cn.chain = std::move(chain);
      r.push_back(std::move(cn));
      i += len;
    }
    return r;
  }

  /// The registry entry of `torchtpu::conv_chain` nodes (run by `exec`, never as a kernel).
  static std::shared_ptr<const OpDef> conv_chain_opdef() {
    static const std::shared_ptr<const OpDef> d = [] {
      OpDef o;
      o.name = "torchtpu::conv_chain";
      o.kernel = [](OpContext&) { throw Error("torchtpu::conv_chain: internal: a chain node run as a kernel"); };
      return std::make_shared<const OpDef>(std::move(o));
    }();
    return d;
  }

  /// Chain node `n` run by its members' `OpDef::run_chain` on `slots`, or nothing.
  static std::optional<Value> run_chain(const Node& n, const std::vector<Value>& slots) {
    const std::vector<Node>& m = n.chain->members;
    const void* states[3] = {};
    Epilogue eps[3];
    if (m.size() > 3) return std::nullopt;
    for (size_t k = 0; k < m.size(); ++k) {
      states[k] = m[k].state.get();
      eps[k] = m[k].epilogue;
    }
    const Node& last = m.back();
    ChainCall c;
    c.input = &slots[size_t(m.front().inputs[0])];
    c.states = std::span<const void* const>(states, m.size());
    c.epilogues = std::span<const Epilogue>(eps, m.size());
    c.residual = last.epilogue.residual ? &slots[size_t(last.inputs.back())] : nullptr;
    return m.front().op->run_chain(c);
  }

  /// Computes which slots die after each node (not inputs to later nodes, not outputs,
  /// not constants).
  Plan plan(std::vector<Node> nodes) const {
    Plan p;
    std::vector<int> last(slots_.size(), -1);
    for (size_t i = 0; i < nodes.size(); ++i) {
      for (int s : nodes[i].inputs) last[size_t(s)] = int(i);
      for (int s : nodes[i].outputs) last[size_t(s)] = std::max(last[size_t(s)], int(i));
    }
    for (int s : outputs_) last[size_t(s)] = int(nodes.size());
    p.frees.resize(nodes.size());
    for (size_t s = 0; s < slots_.size(); ++s)
      if (!is_constant_[s] && last[s] >= 0 && last[s] < int(nodes.size())) p.frees[size_t(last[s])].push_back(int(s));
    p.nodes = std::move(nodes);
    return p;
  }

  /// Pins the host storage of every constant tensor (ConstantPacks) until the last copy of
  /// this graph goes.
  std::shared_ptr<std::vector<const void*>> pin_constants() const {
    auto pins = std::make_unique<std::vector<const void*>>();
    for (size_t s = 0; s < slots_.size(); ++s) {
      if (!is_constant_[s] || !slots_[s].is_tensor()) continue;
      const AnyTensor& t = slots_[s].any();
      if (!t.defined() || !t.device().is_cpu() || !t.storage() || !t.storage()->data) continue;
      const Storage& st = t.storage();
      torchtpu::detail::ConstantPacks::instance().pin(st->data, st->nbytes, st);
      pins->push_back(st->data);
    }
    return std::shared_ptr<std::vector<const void*>>(pins.release(), [](std::vector<const void*>* v) {
      for (const void* p : *v) torchtpu::detail::ConstantPacks::instance().unpin(p);
      delete v;
    });
  }

  std::vector<Value> slots_;        ///< initial slot values: constants filled, the rest None
  std::vector<bool> is_constant_;
  std::vector<int> inputs_, outputs_;
  std::vector<std::string> input_names_;
  std::vector<Node> nodes_;
  std::vector<bool> folded_;  ///< per node of nodes_: computed at finalize (fold_constants)
  std::map<std::string, Missing> missing_;
  Plan plain_, fused_;
  std::shared_ptr<std::vector<const void*>> pins_;  ///< constants pinned for packing (shared by copies)
  mutable Frames frames_;  ///< frames of finished runs (`run`)
  /// The blocks `run`'s tensors are allocated from (shared by copies; thread-safe).
  std::shared_ptr<HostBlockPool> pool_ = std::make_shared<HostBlockPool>();
};

}  // namespace torchtpu::jit
