// torchtpu/jit/load.hpp — `torchtpu::jit::load`: reads a TorchScript module with libtorch,
// freezes and inlines it, and maps its graph through the operator registry into a run-time
// `Graph` whose weights are the module's own constant tensors (no copy). Needs libtorch.
#pragma once
#include <filesystem>  // std::filesystem::exists
#include <memory>      // std::shared_ptr
#include <span>        // std::span
#include <string>      // std::string
#include <unordered_map>  // std::unordered_map
#include <vector>      // std::vector

#include <torch/csrc/jit/api/module.h>      // torch::jit::freeze
#include <torch/csrc/jit/ir/constants.h>    // torch::jit::toIValue
#include <torch/csrc/jit/passes/inliner.h>  // torch::jit::Inline
#include <torch/script.h>                   // torch::jit::load, torch::jit::Module

// LeakSanitizer's interface, where it is built in (GCC: -fsanitize=address or leak; clang:
// __has_feature): detail::LeakCheckPause.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_LEAK__)
#define TORCHTPU_HAS_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(leak_sanitizer)
#define TORCHTPU_HAS_LSAN 1
#endif
#endif
#ifndef TORCHTPU_HAS_LSAN
#define TORCHTPU_HAS_LSAN 0
#endif
#if TORCHTPU_HAS_LSAN
#include <sanitizer/lsan_interface.h>  // __lsan_disable, __lsan_enable
#endif

#include "../core/errors.hpp"     // ValueError, TypeError, UnsupportedOperator
#include "../core/factories.hpp"  // from_blob
#include "../interop/torch.hpp"   // from_torch (constants of every dtype)
#include "archive.hpp"            // inspect_archive, ArchiveInfo
#include "graph.hpp"              // Graph
#include "registry.hpp"           // Mode

namespace torchtpu::jit {

namespace detail {
/// While alive (and `on`), LeakSanitizer ignores what this thread allocates
/// (`__lsan_disable`/`__lsan_enable`, <sanitizer/lsan_interface.h>); a no-op without it.
class LeakCheckPause {
 public:
  explicit LeakCheckPause(bool on) noexcept : on_(on) {
#if TORCHTPU_HAS_LSAN
    if (on_) __lsan_disable();
#endif
  }
  ~LeakCheckPause() {
#if TORCHTPU_HAS_LSAN
    if (on_) __lsan_enable();
#endif
  }
  LeakCheckPause(const LeakCheckPause&) = delete;
  LeakCheckPause& operator=(const LeakCheckPause&) = delete;

 private:
  [[maybe_unused]] bool on_;
};

/// True when libtorch's PyTorchStreamReader::init will accept the archive (torch 1.13,
/// caffe2/serialize/inline_container.cc): an undamaged TorchScript archive whose entries all lie
/// under one top-level directory holding a `version` (or `.data/version`) record.
inline bool stream_reader_accepts(const ArchiveInfo& info) {
  if (info.kind != ArchiveInfo::Kind::TorchScript || !info.damage.empty() || info.entries.empty()) return false;
  const std::string& first = info.entries.front();
  const size_t slash = first.find('/');
  if (slash == std::string::npos) return false;
  const std::string prefix = first.substr(0, slash + 1);
  bool version = false;
  for (const std::string& e : info.entries) {
    if (e.compare(0, prefix.size(), prefix) != 0) return false;
    version = version || e == prefix + "version" || e == prefix + ".data/version";
  }
  return version;
}

/// A float32 CPU `at::Tensor` as a torchtpu tensor sharing its memory; the returned tensor
/// keeps `t`'s storage alive. **Errors:** TypeError for other dtypes or devices.
inline FloatTensor borrow_float(const at::Tensor& t, const std::string& what) {
  if (t.scalar_type() != at::kFloat)
    throw TypeError(what + ": has dtype " + std::string(c10::toString(t.scalar_type())) +
                    "; torchtpu's TorchScript runtime computes in float32");
  if (!t.device().is_cpu()) throw TypeError(what + ": is on " + t.device().str() + ", expected a cpu tensor");
  if (t.dim() > max_rank) throw ShapeError(what + ": rank " + std::to_string(t.dim()) + " exceeds 8");
  Dims sizes, strides;
  for (int64_t i = 0; i < t.dim(); ++i) {
    sizes.push_back(t.size(i));
    strides.push_back(t.stride(i));
  }
  if (t.numel() == 0) return FloatTensor::empty(sizes);
  return from_blob<float>(t.data_ptr<float>(), sizes, [keep = t](void*) {}, strides);
}

/// A torchtpu tensor as an `at::Tensor` sharing its memory (keeps the storage alive).
inline at::Tensor to_torch_float(const FloatTensor& t) {
  std::vector<int64_t> sizes(t.sizes().begin(), t.sizes().end()), strides(t.strides().begin(), t.strides().end());
  auto keep = std::make_shared<FloatTensor>(t);
  return torch::from_blob(t.data_ptr(), sizes, strides, [keep](void*) {}, torch::TensorOptions().dtype(at::kFloat));
}

/// libtorch's whole message of `e`: c10::Error's without the backtrace that `what()` appends
/// (the old first-line cut kept nothing of torch::jit::ErrorReport, whose `what()` starts with
/// a newline), surrounding white space trimmed.
inline std::string libtorch_message(const std::exception& e) {
  const auto* c10e = dynamic_cast<const c10::Error*>(&e);
  std::string msg = c10e ? c10e->what_without_backtrace() : e.what();
  const size_t a = msg.find_first_not_of(" \t\r\n");
  if (a == std::string::npos) return "(no message)";
  const size_t b = msg.find_last_not_of(" \t\r\n");
  return msg.substr(a, b - a + 1);
}

/// `node 12 (file.py:30)` for error messages.
inline std::string location(const torch::jit::Node* n, int index) {
  std::string s = "node " + std::to_string(index);
  const auto& r = n->sourceRange();
  if (r.source()) {
    if (auto flc = r.file_line_col()) {
      s += " (" + std::get<0>(*flc) + ":" + std::to_string(std::get<1>(*flc)) + ")";
    }
  }
  return s;
}

/// A TorchScript constant as a graph value; returns false for kinds the runtime lacks.
inline bool to_value(const c10::IValue& v, Value& out, std::string& why) {
  if (v.isNone()) { out = Value(); return true; }
  if (v.isBool()) { out = Value(v.toBool()); return true; }
  if (v.isInt()) { out = Value(int64_t(v.toInt())); return true; }
  if (v.isDouble()) { out = Value(v.toDouble()); return true; }
  if (v.isString()) { out = Value(v.toStringRef()); return true; }
  if (v.isDevice()) { out = Value(v.toDevice().str()); return true; }
  if (v.isIntList()) { out = Value(v.toIntVector()); return true; }
  if (v.isDoubleList()) { out = Value(v.toDoubleVector()); return true; }
  if (v.isBoolList()) {
    std::vector<int64_t> l;
    for (bool b : v.toBoolList()) l.push_back(b);
    out = Value(std::move(l));
    return true;
  }
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    // 0-dim integer and double tensors (shape arithmetic, `prim::NumToTensor`) stay numbers
    if (t.dim() == 0 && (t.scalar_type() == at::kLong || t.scalar_type() == at::kInt)) {
      out = Value(int64_t(t.item<int64_t>()));
      return true;
    }
    if (t.dim() == 0 && t.scalar_type() == at::kDouble) { out = Value(t.item<double>()); return true; }
    if (!t.device().is_cpu()) { why = "tensor constant on " + t.device().str(); return false; }
    try {
      out = Value(torchtpu::from_torch(t));  // shares the module's memory, any of the eight dtypes
    } catch (const Error& e) {
      why = std::string("tensor constant: ") + e.what();
      return false;
    }
    return true;
  }
  if (v.isTensorList()) {
    std::vector<AnyTensor> l;
    for (const at::Tensor& t : v.toTensorVector()) {
      try {
        l.push_back(torchtpu::from_torch(t));
      } catch (const Error& e) {
        why = std::string("tensor list constant: ") + e.what();
        return false;
      }
    }
    out = Value(std::move(l));
    return true;
  }
  if (v.isList()) {  // a folded `Tensor?[]` (aten::index's list): tensors and None (an undefined tensor)
    std::vector<AnyTensor> l;
    for (const c10::IValue& e : v.toListRef()) {
      if (e.isNone()) {
        l.emplace_back();
        continue;
      }
      if (!e.isTensor() || !e.toTensor().device().is_cpu()) {
        why = "constant list of " + std::string(e.tagKind());
        return false;
      }
      try {
        l.push_back(torchtpu::from_torch(e.toTensor()));
      } catch (const Error& err) {
        why = std::string("tensor list constant: ") + err.what();
        return false;
      }
    }
    out = Value(std::move(l));
    return true;
  }
  why = "constant of type " + v.tagKind();
  return false;
}

}  // namespace detail

/// A TorchScript model imported into torchtpu: the run-time graph plus the libtorch module
/// it came from (which owns the weights the graph reads, and serves `torch_forward`).
class Module {
 public:
  /// Runs the graph. **Errors:** see Graph::run.
  std::vector<Value> forward(std::vector<Value> inputs, Mode mode = Mode::Fused) const {
    return s_->graph.run(std::move(inputs), mode);
  }
  /// Runs the graph on `inputs` (tensors shared, not copied), writing the outputs into
  /// `outputs` (its capacity reused: kept from call to call, a forward pass with the shapes of
  /// an earlier one makes no heap allocation, as `torchtpu-run --bench` counts).
  /// **Errors:** see Graph::run.
  void forward(std::span<const Value> inputs, std::vector<Value>& outputs, Mode mode = Mode::Fused) const {
    s_->graph.run(inputs, outputs, mode);
  }
  /// One float32 tensor in, the first tensor output out. **Errors:** TypeError when the model
  /// does not return a tensor; anything Graph::run throws.
  FloatTensor forward(const FloatTensor& x, Mode mode = Mode::Fused) const {
    auto out = forward(std::vector<Value>{Value(x)}, mode);
    if (out.empty()) throw TypeError("forward: the model returns nothing");
    if (out[0].kind() == Value::Kind::TensorList && !out[0].tensors().empty()) return out[0].tensors()[0];
    return out[0].tensor("forward: model output");
  }
  /// libtorch's own forward on `x` (no grad), first tensor output; for comparisons.
  at::Tensor torch_forward(const at::Tensor& x) const { return torch_forward(std::vector<c10::IValue>{x}); }
  /// libtorch's own forward on `inputs` (no grad), first tensor output; for comparisons.
  at::Tensor torch_forward(std::vector<c10::IValue> inputs) const {
    c10::InferenceMode guard;
    c10::IValue r = s_->module.forward(std::move(inputs));
    if (r.isTuple()) r = r.toTupleRef().elements().at(0);
    if (r.isTensorList()) return r.toTensorVector().at(0);
    return r.toTensor();
  }
  /// The imported graph.
  const Graph& graph() const noexcept { return s_->graph; }
  /// The file it was loaded from.
  const std::string& path() const noexcept { return s_->path; }
  /// Whether `load` had to freeze the module (it was not saved frozen).
  bool was_frozen_on_load() const noexcept { return s_->froze; }

 private:
  friend Module load(const std::string& path);
  struct State {
    torch::jit::Module module;
    Graph graph;
    std::string path;
    bool froze = false;
  };
  std::shared_ptr<State> s_ = std::make_shared<State>();
};

/// Loads a TorchScript file (traced, ideally frozen; frozen here if not) and builds its
/// run-time graph.
///
/// **Errors:** ValueError for a missing file; for one that is not a TorchScript module, saying
/// what it is (state dict, pickled module, torch.save archive, legacy pickle, zip of another
/// kind, not a zip; inspect_archive), how to make a loadable one (trace + freeze + save), and
/// libtorch's whole message; for a damaged file (a zip entry failing its CRC-32 check, which
/// libtorch does not test); for a module without `forward`. UnsupportedOperator listing every
/// node kind the registry lacks, control flow (`prim::If`, `prim::Loop`), and every node whose
/// arguments torchtpu would not honour (OpDef::check: dropout in training mode, a softmax
/// dtype, ...), with its count and first graph location, before anything runs.
inline Module load(const std::string& path) {
  if (!std::filesystem::exists(path)) throw ValueError("torchtpu::jit::load: cannot open '" + path + "': no such file");
  const ArchiveInfo info = inspect_archive(path);
  Module m;
  m.s_->path = path;
  try {
    // libtorch 1.13 never frees the zip reader PyTorchStreamReader::init allocated when init
    // then rejects the file (a zip of another kind, a damaged central directory): ~150 bytes
    // per call. Under LeakSanitizer that leak is not ours to report, so leak checking pauses
    // for a file already known not to be an intact TorchScript archive (it is loaded only to
    // keep libtorch's own message); intact archives are loaded with leak checking on.
    const detail::LeakCheckPause pause(!detail::stream_reader_accepts(info));
    m.s_->module = torch::jit::load(path);
  } catch (const std::exception& e) {
    const std::string lib = " (libtorch: " + detail::libtorch_message(e) + ")";
    if (info.kind == ArchiveInfo::Kind::TorchScript)
      throw ValueError("torchtpu::jit::load: '" + path + "' is a TorchScript archive that libtorch cannot read" +
                       (info.damage.empty() ? "" : ": it is damaged, " + info.damage) + "; " + info.fix + lib);
    throw ValueError("torchtpu::jit::load: '" + path + "' is not a TorchScript module: it is " + info.what +
                     (info.damage.empty() ? "" : " (damaged: " + info.damage + ")") + "; " + info.fix + lib);
  }
  if (!info.damage.empty())  // libtorch does not check CRCs: altered weights or code would load silently
    throw ValueError("torchtpu::jit::load: '" + path + "' is damaged: " + info.damage +
                     " (libtorch read it without noticing; save or download it again)");
  auto& tm = m.s_->module;
  if (!tm.find_method("forward")) throw ValueError("torchtpu::jit::load: '" + path + "' has no forward method");
  tm.eval();
  auto has_attr_reads = [](const torch::jit::Graph& g) {
    for (const auto* n : g.nodes())
      if (n->kind() == c10::prim::GetAttr || n->kind() == c10::prim::CallMethod) return true;
    return false;
  };
  if (has_attr_reads(*tm.get_method("forward").graph())) {
    try {
      tm = torch::jit::freeze(tm);
      m.s_->froze = true;
    } catch (const std::exception& e) {
      throw ValueError("torchtpu::jit::load: '" + path + "' could not be frozen (libtorch: " +
                       detail::libtorch_message(e) + ")");
    }
  }
  std::shared_ptr<torch::jit::Graph> g = tm.get_method("forward").graph()->copy();
  torch::jit::Inline(*g);

  Graph& graph = m.s_->graph;
  std::unordered_map<const torch::jit::Value*, int> slot;
  for (const torch::jit::Value* v : g->inputs()) {
    if (v->type()->kind() == c10::TypeKind::ClassType) continue;  // `self`: unused once frozen
    slot[v] = graph.add_input(v->debugName());
  }
  int index = 0;
  for (const torch::jit::Node* n : g->nodes()) {
    const std::string kind = n->kind().toQualString();
    const std::string loc = detail::location(n, index++);
    if (n->kind() == c10::prim::Constant) {
      Value v;
      std::string why;
      auto iv = torch::jit::toIValue(n->output());
      if (!iv || !detail::to_value(*iv, v, why)) {
        graph.add_unsupported("prim::Constant", loc, why.empty() ? "constant kind" : why);
        slot[n->output()] = graph.add_constant(Value());
      } else {
        slot[n->output()] = graph.add_constant(std::move(v));
      }
      continue;
    }
    if (!n->blocks().empty() || n->kind() == c10::prim::If || n->kind() == c10::prim::Loop) {
      graph.add_unsupported(kind, loc,
                            "data-dependent control flow; trace the model (torch.jit.trace) instead of scripting it");
    } else if (n->kind() == c10::prim::GetAttr || n->kind() == c10::prim::CallMethod ||
               n->kind() == c10::prim::CallFunction) {
      graph.add_unsupported(kind, loc, "module state or calls left after freezing");
    }
    std::vector<int> ins;
    for (const torch::jit::Value* v : n->inputs()) {
      auto it = slot.find(v);
      ins.push_back(it == slot.end() ? graph.add_constant(Value()) : it->second);
    }
    if (!n->blocks().empty() || n->kind() == c10::prim::If || n->kind() == c10::prim::Loop ||
        n->kind() == c10::prim::GetAttr || n->kind() == c10::prim::CallMethod ||
        n->kind() == c10::prim::CallFunction) {
      for (const torch::jit::Value* o : n->outputs()) slot[o] = graph.add_constant(Value());
      continue;
    }
    const auto outs = graph.add_node(kind, std::move(ins), int(n->outputs().size()), loc);
    for (size_t i = 0; i < outs.size(); ++i) slot[n->outputs()[i]] = outs[i];
  }
  std::vector<int> outs;
  for (const torch::jit::Value* v : g->outputs()) outs.push_back(slot.at(v));
  graph.set_outputs(std::move(outs));
  graph.finalize();
  return m;
}

}  // namespace torchtpu::jit
