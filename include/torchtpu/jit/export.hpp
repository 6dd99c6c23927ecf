// torchtpu/jit/export.hpp — `torchtpu::jit::load_exported`: reads a torch.export program
// (`torch.export.save(ep, "m.pt2")`, torch 2.x) without libtorch and maps its graph through the
// operator registry into a run-time `Graph`, as `jit::load` (load.hpp) does for TorchScript.
//
// The archive (a zip of stored entries, read by archive.hpp's zip reader) holds, under one
// top-level folder `<p>/`: `models/model.json` (the serialized ExportedProgram: graph nodes whose
// `target` is an operator such as `torch.ops.aten.conv2d.default`, named arguments `as_tensor`,
// `as_ints`, ...; the graph signature, whose inputs are parameters, buffers, tensor constants
// and user inputs), `data/weights/model_weights_config.json` and
// `data/constants/model_constants_config.json` (each tensor's file, dtype, sizes, strides and
// storage offset) and the raw little-endian bytes of each storage in `data/weights/<file>` and
// `data/constants/<file>` (torch/export/pt2_archive/_package.py, torch/_export/serde/schema.py).
//
// A node passes only the arguments its Python call passed, by schema name; the registry's
// kernels take TorchScript's full positional list (every argument, in schema order, kwarg-only
// ones included). The importer fills the others from the op's aten schema: the operator
// library's own (`Op::schema`, ops/all.hpp) or, for the kinds the registry implements by hand
// (builtin_ops.hpp), the schema text in `detail::exported_schemas` below.
#pragma once
#include <cstdint>        // int64_t
#include <cstring>        // std::memcpy
#include <filesystem>     // std::filesystem::exists
#include <fstream>        // std::ifstream
#include <limits>         // std::numeric_limits (inf, NaN arguments)
#include <map>            // std::map
#include <memory>         // std::shared_ptr
#include <optional>       // std::optional
#include <span>           // std::span
#include <string>         // std::string
#include <string_view>    // std::string_view
#include <type_traits>    // std::type_identity
#include <unordered_map>  // std::unordered_map
#include <utility>        // std::move
#include <variant>        // std::visit
#include <vector>         // std::vector

#include <nlohmann/json.hpp>  // nlohmann::json (Debian's nlohmann-json3-dev)

#include "../core/errors.hpp"     // ValueError, TypeError
#include "../core/factories.hpp"  // from_blob
#include "../ops/all.hpp"         // ops::LibraryOps (their schemas)
#include "../ops/schema.hpp"      // parse_schema, Schema, Arg
#include "archive.hpp"            // detail::read_zip_directory, detail::check_entry
#include "graph.hpp"              // Graph
#include "registry.hpp"           // Mode
#include "value.hpp"              // Value, FloatTensor

namespace torchtpu::jit {

namespace detail {

/// Schemas (PyTorch's native_functions.yaml) of the kinds torch.export's default IR produces
/// whose registry entries are hand-written (builtin_ops.hpp): argument order and defaults only;
/// the computation is the registry's. The operator library's ops bring their own (`Op::schema`).
inline constexpr std::string_view exported_schemas[] = {
    "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
    "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "aten::sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "aten::sub_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "aten::rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
    "aten::mul.Tensor(Tensor self, Tensor other) -> Tensor",
    "aten::mul.Scalar(Tensor self, Scalar other) -> Tensor",
    "aten::mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
    "aten::div.Tensor(Tensor self, Tensor other) -> Tensor",
    "aten::div.Scalar(Tensor self, Scalar other) -> Tensor",
    "aten::div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
    "aten::div_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
    "aten::pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor",
    "aten::pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor",
    "aten::relu(Tensor self) -> Tensor",
    "aten::relu_(Tensor(a!) self) -> Tensor(a!)",
    "aten::relu6(Tensor self) -> Tensor",
    "aten::sigmoid(Tensor self) -> Tensor",
    "aten::sigmoid_(Tensor(a!) self) -> Tensor(a!)",
    "aten::tanh(Tensor self) -> Tensor",
    "aten::silu(Tensor self) -> Tensor",
    "aten::silu_(Tensor(a!) self) -> Tensor(a!)",
    "aten::hardswish(Tensor self) -> Tensor",
    "aten::hardswish_(Tensor(a!) self) -> Tensor(a!)",
    "aten::hardsigmoid(Tensor self) -> Tensor",
    "aten::hardsigmoid_(Tensor(a!) self) -> Tensor(a!)",
    "aten::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor",
    "aten::hardtanh_(Tensor(a!) self, Scalar min_val=-1, Scalar max_val=1) -> Tensor(a!)",
    "aten::gelu(Tensor self, *, str approximate='none') -> Tensor",
    "aten::leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor",
    "aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",
    "aten::softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor",
    "aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",
    "aten::matmul(Tensor self, Tensor other) -> Tensor",
    "aten::bmm(Tensor self, Tensor mat2) -> Tensor",
    "aten::t(Tensor(a) self) -> Tensor(a)",
    "aten::softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
    "aten::mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "aten::flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)",
    "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
    "aten::reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)",
    "aten::permute(Tensor(a) self, int[] dims) -> Tensor(a)",
    "aten::transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
    "aten::select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)",
    "aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)",
    "aten::squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)",
    "aten::unsqueeze(Tensor(a) self, int dim) -> Tensor(a)",
    "aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)",
    "aten::contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)",
    "aten::clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor",
    "aten::split.Tensor(Tensor(a) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
    "aten::split_with_sizes(Tensor(a) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]",
    "aten::chunk(Tensor(a) self, int chunks, int dim=0) -> Tensor(a)[]",
    "aten::unbind.int(Tensor(a) self, int dim=0) -> Tensor(a)[]",
    "aten::to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, "
    "MemoryFormat? memory_format=None) -> Tensor(a)",
    "aten::dropout_(Tensor(a!) self, float p, bool train) -> Tensor(a!)",
    "aten::unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> Tensor(a)",
};

/// The parsed schema of `name` (`aten::conv2d`) with `overload` (`default` is none), or null.
inline const ops::Schema* exported_schema(const std::string& name, const std::string& overload) {
  static const auto table = [] {
    std::map<std::string, ops::Schema> m;
    auto add = [&m](std::string_view text) {
      ops::Schema s = ops::parse_schema(text);
      std::string key = s.name + "." + (s.overload.empty() ? "default" : s.overload);
      m.emplace(std::move(key), std::move(s));  // the library's own schema first
    };
    ops::LibraryOps::for_each([&]<class Op>(std::type_identity<Op>) { add(Op::schema); });
    for (std::string_view s : exported_schemas) add(s);
    return m;
  }();
  auto it = table.find(name + "." + overload);
  return it == table.end() ? nullptr : &it->second;
}

/// An op argument (a schema default) as a graph value.
inline Value arg_value(const ops::Arg& a) {
  return std::visit([](const auto& v) -> Value {
    using V = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<V, std::monostate>) return Value();
    else return Value(v);
  }, a);
}

/// c10's ScalarType code (what TorchScript graphs pass as `dtype`) of torch.export's serialized
/// one (torch/_export/serde/schema.py ScalarType), or -1.
inline int64_t c10_dtype_code(int64_t serde) {
  switch (serde) {
    case 1: return 0;    // uint8
    case 2: return 1;    // int8
    case 3: return 2;    // int16
    case 4: return 3;    // int32
    case 5: return 4;    // int64
    case 6: return 5;    // float16
    case 7: return 6;    // float32
    case 8: return 7;    // float64
    case 12: return 11;  // bool
    case 13: return 15;  // bfloat16
    default: return -1;
  }
}

/// torchtpu's dtype of a serialized ScalarType, or nullopt (complex, int8, int16, float8, ...).
inline std::optional<ScalarType> tensor_dtype(int64_t serde) {
  switch (serde) {
    case 1: return ScalarType::UInt8;
    case 4: return ScalarType::Int32;
    case 5: return ScalarType::Int64;
    case 6: return ScalarType::Half;
    case 7: return ScalarType::Float;
    case 8: return ScalarType::Double;
    case 12: return ScalarType::Bool;
    case 13: return ScalarType::BFloat16;
    default: return std::nullopt;
  }
}

/// The stored entries of one .pt2 archive, read on demand with their CRC-32 checked.
class Pt2Archive {
 public:
  explicit Pt2Archive(std::string path) : path_(std::move(path)), f_(path_, std::ios::binary) {
    if (!f_) throw ValueError("torchtpu::jit::load_exported: cannot open '" + path_ + "'");
    f_.seekg(0, std::ios::end);
    size_ = uint64_t(f_.tellg());
    f_.seekg(0);
    std::string why;
    std::vector<ZipEntry> zs;
    if (!read_zip_directory(f_, size_, zs, why)) fail("", "not a readable zip archive: " + why);
    for (ZipEntry& z : zs) {
      const std::string& n = z.name;
      const size_t at = n.find("/models/model.json");
      if (at != std::string::npos && at + 18 == n.size() && n.find('/') == at) prefix_ = n.substr(0, at + 1);
      entries_[n] = std::move(z);
    }
    if (prefix_.empty())
      fail("", "not a torch.export archive (no <name>/models/model.json entry; write one with "
               "torch.export.save(torch.export.export(model.eval(), (x,)), 'model.pt2'))");
  }
  /// Whether entry `<prefix>rel` exists.
  bool has(const std::string& rel) const { return entries_.count(prefix_ + rel) != 0; }
  /// The bytes of entry `<prefix>rel`. **Errors:** ValueError naming the file and the entry when
  /// it is missing, compressed, cut short or fails its CRC-32 check.
  std::vector<unsigned char> read(const std::string& rel) {
    const std::string name = prefix_ + rel;
    auto it = entries_.find(name);
    if (it == entries_.end()) fail(rel, "the entry is missing");
    if (it->second.method != 0)
      fail(rel, "the entry is compressed (method " + std::to_string(it->second.method) +
                     "); torch.export.save writes stored entries");
    if (it->second.csize > size_) fail(rel, "the entry is larger than the file");
    std::vector<unsigned char> bytes;
    bytes.reserve(size_t(it->second.csize));
    const std::string damage = check_entry(f_, size_, it->second, &bytes);
    if (!damage.empty()) fail(rel, damage);
    return bytes;
  }
  /// Entry `<prefix>rel` parsed as JSON. **Errors:** ValueError as `read`, and for bad JSON.
  nlohmann::json json(const std::string& rel) {
    const std::vector<unsigned char> b = read(rel);
    nlohmann::json j = nlohmann::json::parse(b.begin(), b.end(), nullptr, false);
    if (j.is_discarded()) fail(rel, "the entry is not valid JSON");
    return j;
  }
  /// Throws ValueError naming the file, entry `<prefix>rel` (none when `rel` is empty) and `why`.
  [[noreturn]] void fail(const std::string& rel, const std::string& why) const {
    throw ValueError("torchtpu::jit::load_exported: '" + path_ + "'" +
                     (rel.empty() ? "" : ", entry '" + prefix_ + rel + "'") + ": " + why);
  }
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
  std::ifstream f_;
  uint64_t size_ = 0;
  std::string prefix_;
  std::map<std::string, ZipEntry> entries_;
};

/// `j[key]` as an int64 (a plain number or `{"as_int": n}`). **Errors:** ValueError via `bad`.
template <class Bad>
int64_t json_int(const nlohmann::json& j, const Bad& bad) {
  if (j.is_number_integer()) return j.get<int64_t>();
  if (j.is_object() && j.contains("as_int") && j["as_int"].is_number_integer()) return j["as_int"].get<int64_t>();
  bad("expected an integer, got " + j.dump().substr(0, 80) + " (a symbolic size: export with static shapes)");
  return 0;
}

/// A float argument: a JSON number, or the string torch writes for a value JSON lacks
/// (`"Infinity"`, `"-Infinity"`, `"NaN"`). **Errors:** ValueError for anything else.
inline double json_float(const nlohmann::json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const std::string t = v.get<std::string>();
    if (t == "Infinity" || t == "inf") return std::numeric_limits<double>::infinity();
    if (t == "-Infinity" || t == "-inf") return -std::numeric_limits<double>::infinity();
    if (t == "NaN" || t == "nan") return std::numeric_limits<double>::quiet_NaN();
  }
  throw ValueError("expected a float, got " + v.dump().substr(0, 40));
}

/// One weight or constant tensor from its config entry (`tensor_meta` + `path_name`) and the
/// bytes of its storage file in `dir`: a view of one aligned copy of that file, shared by every
/// tensor naming it (`storages`, by file and dtype). **Errors:** ValueError naming the file and
/// the entry for a bad config, a dtype torchtpu lacks, or a view past the entry's bytes.
inline AnyTensor read_tensor(Pt2Archive& ar, const std::string& dir, const std::string& key, const nlohmann::json& cfg,
                             std::map<std::string, AnyTensor>& storages) {
  auto bad = [&](const std::string& why) { ar.fail(dir + "<config>", "tensor '" + key + "': " + why); };
  if (!cfg.is_object() || !cfg.contains("path_name") || !cfg["path_name"].is_string() || !cfg.contains("tensor_meta"))
    bad("the config entry lacks path_name or tensor_meta");
  if (cfg.value("use_pickle", false)) bad("stored as a pickle (a tensor subclass), which torchtpu cannot read");
  const nlohmann::json& m = cfg["tensor_meta"];
  if (!m.is_object() || !m.contains("dtype") || !m.contains("sizes") || !m.contains("strides") ||
      !m["sizes"].is_array() || !m["strides"].is_array())
    bad("tensor_meta lacks dtype, sizes or strides");
  const int64_t code = m["dtype"].is_number_integer() ? m["dtype"].get<int64_t>() : -1;
  const std::optional<ScalarType> dt = tensor_dtype(code);
  if (!dt) bad("dtype code " + std::to_string(code) + " is not one torchtpu holds");
  if (m.contains("layout") && m["layout"] != 7) bad("not a strided (dense) tensor");
  if (m["sizes"].size() != m["strides"].size() || m["sizes"].size() > size_t(max_rank))
    bad("sizes and strides differ in length or exceed rank 8");
  Dims sizes, strides;
  int64_t last = 0;  // the largest element offset the view reads
  bool empty = false;
  for (size_t i = 0; i < m["sizes"].size(); ++i) {
    const int64_t s = json_int(m["sizes"][i], bad), st = json_int(m["strides"][i], bad);
    if (s < 0 || st < 0 || s > (int64_t(1) << 40) || st > (int64_t(1) << 40)) bad("negative or huge size or stride");
    if (s > 0 && double(s - 1) * double(st) + double(last) > double(int64_t(1) << 50)) bad("the view spans over 2^50 elements");
    sizes.push_back(s);
    strides.push_back(st);
    if (s == 0) empty = true;
    else last += (s - 1) * st;
  }
  const int64_t offset = m.contains("storage_offset") ? json_int(m["storage_offset"], bad) : 0;
  if (offset < 0 || offset > (int64_t(1) << 40)) bad("negative or huge storage offset");
  return AnyTensor::dispatch(*dt, [&]<class T>(std::type_identity<T>) -> AnyTensor {
    if (empty) return AnyTensor(Tensor<T>::empty(sizes));
    const std::string file = dir + cfg["path_name"].get<std::string>();
    const std::string id = file + "#" + std::string(dtype_name(*dt));
    auto it = storages.find(id);
    if (it == storages.end()) {
      const std::vector<unsigned char> bytes = ar.read(file);
      Tensor<T> buf = Tensor<T>::empty(Dims{int64_t(bytes.size() / sizeof(T))});
      if (buf.numel() > 0) std::memcpy(static_cast<void*>(buf.data_ptr()), bytes.data(), size_t(buf.numel()) * sizeof(T));
      it = storages.emplace(id, AnyTensor(buf)).first;
    }
    const Tensor<T> buf = it->second.get<T>();
    if (offset + last >= buf.numel())
      ar.fail(file, "tensor '" + key + "' of sizes " + to_string(sizes) + ", strides " + to_string(strides) +
                        " at offset " + std::to_string(offset) + " reads element " + std::to_string(offset + last) +
                        ", the entry holds " + std::to_string(buf.numel()) + " elements of " +
                        std::string(dtype_name(*dt)));
    return AnyTensor(from_blob<T>(buf.data_ptr() + offset, sizes, [keep = buf](void*) {}, strides));
  });
}

/// Builds the run-time graph of one serialized ExportedProgram (`models/model.json`).
class ExportImporter {
 public:
  ExportImporter(Pt2Archive& ar, Graph& g) : ar_(ar), g_(g) {}

  /// Reads the program's inputs (weights, constants, user inputs), nodes and outputs into the
  /// graph; returns the user inputs' names.
  std::vector<std::string> run() {
    const nlohmann::json model = ar_.json("models/model.json");
    const nlohmann::json* gm = find(model, "graph_module");
    const nlohmann::json* graph = gm ? find(*gm, "graph") : nullptr;
    const nlohmann::json* sig = gm ? find(*gm, "signature") : nullptr;
    if (!graph || !sig || !graph->contains("nodes") || !(*graph)["nodes"].is_array() || !sig->contains("input_specs") ||
        !sig->contains("output_specs"))
      bad("lacks graph_module.graph.nodes or its graph_signature");
    tensor_values_ = find(*graph, "tensor_values");
    read_config("data/weights/", "model_weights_config.json", weights_);
    read_config("data/constants/", "model_constants_config.json", constants_);
    std::vector<std::string> user_inputs;
    for (const nlohmann::json& spec : (*sig)["input_specs"]) {
      if (!spec.is_object() || spec.size() != 1) bad("an input spec is not one kind: " + spec.dump().substr(0, 120));
      const std::string kind = spec.begin().key();
      const nlohmann::json& v = spec.begin().value();
      if (kind == "user_input") {
        const nlohmann::json* a = find(v, "arg");
        if (a && a->contains("as_tensor")) {
          const std::string name = str((*a)["as_tensor"], "name");
          slot_[name] = g_.add_input(name);
          user_inputs.push_back(name);
        } else {
          bad("a user input that is not a tensor (" + (a ? a->dump().substr(0, 80) : std::string("?")) +
              "): export with tensor inputs only");
        }
      } else if (kind == "parameter" || kind == "buffer" || kind == "tensor_constant") {
        const std::string name = str(v.value("arg", nlohmann::json::object()), "name");
        const std::string target = str(v, kind == "parameter" ? "parameter_name"
                                          : kind == "buffer"  ? "buffer_name"
                                                              : "tensor_constant_name");
        slot_[name] = g_.add_constant(Value(weight(target)));
      } else if (kind == "constant_input") {
        const std::string name = str(v, "name");
        std::string why;
        Value c = constant(v.value("value", nlohmann::json()), why);
        if (!why.empty()) g_.add_unsupported("constant_input", "input '" + name + "'", why);
        slot_[name] = g_.add_constant(std::move(c));
      } else {
        g_.add_unsupported("input spec '" + kind + "'", "the graph signature",
                           "tokens and custom objects are not supported");
      }
    }
    int index = 0;
    for (const nlohmann::json& n : (*graph)["nodes"]) add_node(n, index++);
    std::vector<int> outs;
    for (const nlohmann::json& spec : (*sig)["output_specs"]) {
      if (!spec.is_object() || spec.size() != 1) bad("an output spec is not one kind");
      if (spec.begin().key() != "user_output") continue;  // buffer mutations: eval-mode programs have none that matter
      const nlohmann::json* a = find(spec.begin().value(), "arg");
      if (!a) bad("a user output without arg");
      std::string why;
      outs.push_back(argument(*a, why));
      if (!why.empty()) g_.add_unsupported("user_output", "the graph outputs", why);
    }
    g_.set_outputs(std::move(outs));
    return user_inputs;
  }

 private:
  [[noreturn]] void bad(const std::string& why) const { ar_.fail("models/model.json", why); }

  static const nlohmann::json* find(const nlohmann::json& j, const char* key) {
    if (!j.is_object()) return nullptr;
    auto it = j.find(key);
    return it == j.end() ? nullptr : &*it;
  }
  std::string str(const nlohmann::json& j, const char* key) const {
    const nlohmann::json* v = find(j, key);
    if (!v || !v->is_string()) bad(std::string("expected a string '") + key + "' in " + j.dump().substr(0, 120));
    return v->get<std::string>();
  }

  void read_config(const std::string& dir, const std::string& file, std::map<std::string, nlohmann::json>& out) {
    if (!ar_.has(dir + file)) return;
    const nlohmann::json j = ar_.json(dir + file);
    const nlohmann::json* c = find(j, "config");
    if (!c || !c->is_object()) ar_.fail(dir + file, "lacks its 'config' object");
    for (auto it = c->begin(); it != c->end(); ++it) out[it.key()] = {{"dir", dir}, {"cfg", it.value()}};
  }

  /// The weight, buffer or constant tensor named `target` (`conv1.weight`).
  AnyTensor weight(const std::string& target) {
    const nlohmann::json* entry = nullptr;
    if (auto w = weights_.find(target); w != weights_.end()) entry = &w->second;
    else if (auto c = constants_.find(target); c != constants_.end()) entry = &c->second;
    if (!entry) bad("the graph reads tensor '" + target + "', which neither the weights nor the constants config lists");
    return read_tensor(ar_, entry->at("dir").get<std::string>(), target, entry->at("cfg"), storages_);
  }

  /// A value that is not a graph value (an `as_int`, `as_ints`, ...); `why` set when unsupported.
  Value constant(const nlohmann::json& a, std::string& why) const {
    if (!a.is_object() || a.size() != 1) {
      why = "an argument that is not one kind: " + a.dump().substr(0, 80);
      return Value();
    }
    const std::string k = a.begin().key();
    const nlohmann::json& v = a.begin().value();
    try {
      if (k == "as_none") return Value();
      if (k == "as_int") return Value(v.get<int64_t>());
      if (k == "as_float") return Value(json_float(v));
      if (k == "as_bool") return Value(v.get<bool>());
      if (k == "as_string") return Value(v.get<std::string>());
      if (k == "as_ints") return Value(v.get<std::vector<int64_t>>());
      if (k == "as_floats") {
        std::vector<double> l;
        for (const auto& e : v) l.push_back(json_float(e));
        return Value(std::move(l));
      }
      if (k == "as_bools") {
        std::vector<int64_t> l;
        for (const auto& b : v) l.push_back(b.get<bool>());
        return Value(std::move(l));
      }
      if (k == "as_sym_int") return Value(json_int(v, [&](const std::string& w) { throw ValueError(w); }));
      if (k == "as_sym_ints") {
        std::vector<int64_t> l;
        for (const auto& e : v) l.push_back(json_int(e, [&](const std::string& w) { throw ValueError(w); }));
        return Value(std::move(l));
      }
      if (k == "as_scalar_type") {
        const int64_t c = c10_dtype_code(v.get<int64_t>());
        if (c < 0) why = "dtype code " + std::to_string(v.get<int64_t>()) + " torchtpu lacks";
        return Value(c);
      }
      if (k == "as_memory_format") {  // serde: 1 contiguous, 2 channels_last, 3 channels_last_3d, 4 preserve
        static const int64_t c10[] = {-1, 0, 2, 3, 1};
        const int64_t s = v.get<int64_t>();
        if (s < 1 || s > 4) why = "memory format code " + std::to_string(s);
        return Value(s >= 1 && s <= 4 ? c10[s] : int64_t(0));
      }
      if (k == "as_layout") {
        if (v.get<int64_t>() != 7) why = "a layout other than strided";
        return Value(int64_t(0));
      }
      if (k == "as_device") {
        std::string d = v.value("type", std::string("cpu"));
        if (v.contains("index") && v["index"].is_number_integer()) d += ":" + std::to_string(v["index"].get<int64_t>());
        return Value(std::move(d));
      }
    } catch (const std::exception& e) {
      why = "argument " + k + ": " + e.what();
      return Value();
    }
    why = "an argument of kind " + k + " (dynamic shapes, subgraphs and custom objects are not supported)";
    return Value();
  }

  /// The slot of graph value `name`.
  int value_slot(const std::string& name, std::string& why) {
    auto it = slot_.find(name);
    if (it != slot_.end()) return it->second;
    why = "value '" + name + "' is read before it is computed";
    return g_.add_constant(Value());
  }

  /// The slot holding argument `a` (tensors and tensor lists from the graph, the rest constant).
  int argument(const nlohmann::json& a, std::string& why) {
    if (a.is_object() && a.size() == 1) {
      const std::string k = a.begin().key();
      const nlohmann::json& v = a.begin().value();
      if (k == "as_tensor") return value_slot(str(v, "name"), why);
      if (k == "as_optional_tensor")
        return v.contains("as_tensor") ? value_slot(str(v["as_tensor"], "name"), why) : g_.add_constant(Value());
      if (k == "as_tensors" || k == "as_optional_tensors") {  // a list built as TorchScript builds one
        std::vector<int> items;
        for (const nlohmann::json& e : v) {
          if (k == "as_tensors") items.push_back(value_slot(str(e, "name"), why));
          else items.push_back(e.contains("as_tensor") ? value_slot(str(e["as_tensor"], "name"), why)
                                                       : g_.add_constant(Value()));
        }
        return g_.add_node("prim::ListConstruct", std::move(items), 1, loc_)[0];
      }
    }
    return g_.add_constant(constant(a, why));
  }

  /// `node 12 'conv2d' (conv.py:565)`: its index, name and the innermost frame of its stack trace.
  static std::string location(const nlohmann::json& n, int index) {
    std::string s = "node " + std::to_string(index);
    if (n.contains("name") && n["name"].is_string()) s += " '" + n["name"].get<std::string>() + "'";
    const nlohmann::json* md = find(n, "metadata");
    if (md && md->contains("stack_trace") && (*md)["stack_trace"].is_string()) {
      const std::string t = (*md)["stack_trace"].get<std::string>();
      const size_t f = t.rfind("File \"");
      if (f != std::string::npos) {
        const size_t e = t.find('"', f + 6);
        const size_t l = t.find(", line ", e == std::string::npos ? f : e);
        if (e != std::string::npos && l != std::string::npos) {
          std::string file = t.substr(f + 6, e - f - 6);
          file = file.substr(file.rfind('/') == std::string::npos ? 0 : file.rfind('/') + 1);
          size_t k = l + 7;
          std::string line;
          while (k < t.size() && t[k] >= '0' && t[k] <= '9') line += t[k++];
          s += " (" + file + ":" + line + ")";
        }
      }
    }
    return s;
  }

  void add_node(const nlohmann::json& n, int index) {
    const std::string loc = location(n, index);
    loc_ = loc;
    if (!n.is_object() || !n.contains("target") || !n["target"].is_string() || !n.contains("inputs") ||
        !n["inputs"].is_array() || !n.contains("outputs") || !n["outputs"].is_array())
      bad("node " + std::to_string(index) + " lacks target, inputs or outputs");
    // `torch.ops.aten.conv2d.default` -> kind `aten::conv2d`, overload `default`
    std::string target = n["target"].get<std::string>();
    std::string kind = target, overload = "default";
    if (target.rfind("torch.ops.", 0) == 0) {
      const std::string rest = target.substr(10);
      const size_t a = rest.find('.'), b = rest.rfind('.');
      if (a != std::string::npos && b != a) {
        kind = rest.substr(0, a) + "::" + rest.substr(a + 1, b - a - 1);
        overload = rest.substr(b + 1);
      } else if (a != std::string::npos) {
        kind = rest.substr(0, a) + "::" + rest.substr(a + 1);
      }
    }
    // run-time assertions of the exported program: checked by torch when it exported
    if (kind == "aten::_assert_tensor_metadata" || kind == "aten::_assert_scalar" ||
        kind == "aten::_assert_async" || kind == "aten::sym_constrain_range_for_size")
      return;
    std::string why;
    const ops::Schema* schema = exported_schema(kind, overload);
    std::vector<int> ins;
    if (schema) {
      std::vector<std::optional<int>> by_pos(schema->args.size());
      for (const nlohmann::json& a : n["inputs"]) {
        const std::string name = a.is_object() && a.contains("name") && a["name"].is_string() ? a["name"].get<std::string>() : "";
        const int i = schema->index_of(name);
        if (i < 0) {
          why = "argument '" + name + "' is not in the schema " + kind + "." + overload;
          continue;
        }
        by_pos[size_t(i)] = argument(a.contains("arg") ? a["arg"] : nlohmann::json(), why);
      }
      // the arguments the call left out: their schema defaults (TorchScript passes every one)
      size_t used = by_pos.size();
      for (size_t i = 0; i < by_pos.size(); ++i) {
        if (by_pos[i]) continue;
        const ops::SchemaArg& sa = schema->args[i];
        if (sa.default_) by_pos[i] = g_.add_constant(arg_value(*sa.default_));
        else if (sa.type.optional) by_pos[i] = g_.add_constant(Value());
        else {
          why = "required argument '" + sa.name + "' is missing";
          used = i;
          break;
        }
      }
      for (size_t i = 0; i < used; ++i) ins.push_back(*by_pos[i]);
    } else {
      // no schema known: positional arguments as given (keyword ones would need their place)
      for (const nlohmann::json& a : n["inputs"]) {
        if (a.value("kind", 1) == 2)
          why = "keyword argument '" + a.value("name", std::string()) + "' of an op whose schema torchtpu does not know";
        ins.push_back(argument(a.contains("arg") ? a["arg"] : nlohmann::json(), why));
      }
    }
    if (kind == "aten::unflatten" && ins.size() == 3) {
      // unflatten(x, dim, sizes) is a reshape to its output's shape; the program's tensor
      // metadata holds that shape (static, as exported without dynamic shapes).
      ins.pop_back();
      ins.pop_back();
      ins.push_back(g_.add_constant(Value(output_shape(n, why))));
      kind = "aten::reshape";
    }
    // outputs: one slot per tensor; a tensor list is one list slot, unpacked as TorchScript does
    std::vector<std::vector<std::string>> names;  // per output: its value name(s); a list has several
    std::vector<bool> is_list;
    for (const nlohmann::json& o : n["outputs"]) {
      std::vector<std::string> v;
      bool list = false;
      if (o.contains("as_tensor")) v.push_back(str(o["as_tensor"], "name"));
      else if (o.contains("as_tensors")) {
        list = true;
        for (const nlohmann::json& e : o["as_tensors"]) v.push_back(str(e, "name"));
      } else if (o.contains("as_none")) {
      } else {
        why = "an output of kind " + (o.is_object() && !o.empty() ? o.begin().key() : std::string("?"));
      }
      names.push_back(std::move(v));
      is_list.push_back(list);
    }
    if (!why.empty()) g_.add_unsupported(kind, loc, why);
    const std::vector<int> outs = g_.add_node(kind, std::move(ins), int(names.size()), loc);
    for (size_t i = 0; i < names.size(); ++i) {
      if (!is_list[i]) {
        if (!names[i].empty()) slot_[names[i][0]] = outs[i];
        continue;
      }
      const std::vector<int> items = g_.add_node("prim::ListUnpack", {outs[i]}, int(names[i].size()), loc);
      for (size_t k = 0; k < items.size(); ++k) slot_[names[i][k]] = items[k];
    }
  }

  /// The static sizes of node `n`'s first output (graph.tensor_values).
  std::vector<int64_t> output_shape(const nlohmann::json& n, std::string& why) {
    try {
      if (!tensor_values_) throw ValueError("the program has no tensor_values");
      const std::string name = n.at("outputs").at(0).at("as_tensor").at("name").get<std::string>();
      const nlohmann::json& meta = (*tensor_values_).at(name);
      std::vector<int64_t> r;
      for (const nlohmann::json& s : meta.at("sizes"))
        r.push_back(json_int(s, [](const std::string& w) { throw ValueError(w); }));
      return r;
    } catch (const std::exception& e) {
      why = std::string("the output's static shape is unknown (") + e.what() + ")";
      return {};
    }
  }

  Pt2Archive& ar_;
  Graph& g_;
  std::unordered_map<std::string, int> slot_;
  std::map<std::string, nlohmann::json> weights_, constants_;
  std::map<std::string, AnyTensor> storages_;
  const nlohmann::json* tensor_values_ = nullptr;  ///< graph.tensor_values (static shapes), for aten::unflatten
  std::string loc_ = "the graph signature";         ///< the location of the node being read
};

}  // namespace detail

/// A torch.export program imported into torchtpu: its run-time graph (whose constants hold the
/// archive's weights) and the names of its inputs. Runs as a TorchScript `Module` does.
class ExportedModule {
 public:
  /// Runs the graph on the program's user inputs, in order. **Errors:** see Graph::run.
  std::vector<Value> forward(std::vector<Value> inputs, Mode mode = Mode::Fused) const {
    return s_->graph.run(std::move(inputs), mode);
  }
  /// Runs the program on `inputs` (tensors shared, not copied), writing the outputs into
  /// `outputs` (its capacity reused: kept from call to call, a forward pass with the shapes of
  /// an earlier one makes no heap allocation). **Errors:** see Graph::run.
  void forward(std::span<const Value> inputs, std::vector<Value>& outputs, Mode mode = Mode::Fused) const {
    s_->graph.run(inputs, outputs, mode);
  }
  /// One float32 tensor in, the first tensor output out. **Errors:** TypeError when the program
  /// does not return a tensor; anything Graph::run throws.
  FloatTensor forward(const FloatTensor& x, Mode mode = Mode::Fused) const {
    auto out = forward(std::vector<Value>{Value(x)}, mode);
    if (out.empty()) throw TypeError("forward: the program returns nothing");
    if (out[0].kind() == Value::Kind::TensorList && !out[0].tensors().empty()) return out[0].tensors()[0];
    return out[0].tensor("forward: program output");
  }
  /// The imported graph.
  const Graph& graph() const noexcept { return s_->graph; }
  /// The file it was loaded from.
  const std::string& path() const noexcept { return s_->path; }
  /// The names of the program's user inputs (forward's arguments, in order).
  const std::vector<std::string>& input_names() const noexcept { return s_->inputs; }

 private:
  friend ExportedModule load_exported(const std::string& path);
  struct State {
    Graph graph;
    std::string path;
    std::vector<std::string> inputs;
  };
  std::shared_ptr<State> s_ = std::make_shared<State>();
};

/// Whether `path` is a torch.export archive (a zip with an entry `<name>/models/model.json`),
/// judged from its zip directory only. **Errors:** none (false for anything unreadable).
inline bool is_exported_archive(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  f.seekg(0, std::ios::end);
  const uint64_t size = uint64_t(f.tellg());
  f.seekg(0);
  std::vector<detail::ZipEntry> zs;
  std::string why;
  if (!detail::read_zip_directory(f, size, zs, why)) return false;
  for (const detail::ZipEntry& z : zs) {
    const size_t at = z.name.find("/models/model.json");
    if (at != std::string::npos && at + 18 == z.name.size() && z.name.find('/') == at) return true;
  }
  return false;
}

/// Loads a torch.export program (`torch.export.save(torch.export.export(model.eval(), (x,)),
/// "m.pt2")`, torch 2.x; the default IR or core ATen) and builds its run-time graph. Needs no
/// libtorch.
///
/// **Shapes, dtypes:** those the program was exported with; weights keep their dtype, sizes and
/// strides (one aligned copy of each storage in the archive).
/// **Errors:** ValueError naming the file (and the entry) for a missing file, a file that is not
/// a torch.export archive, a damaged one (an entry cut short or failing its CRC-32 check, bad
/// JSON, a weight whose view reads past its entry's bytes, a dtype torchtpu lacks), a big-endian
/// archive. UnsupportedOperator listing every op kind the registry lacks and every construct
/// the importer does not map (dynamic shapes, subgraphs, non-tensor inputs), with its count and
/// first node (`node 12 'conv2d' (conv.py:565)`), before anything runs.
/// **Example:** tests/jit/test_export.cpp.
inline ExportedModule load_exported(const std::string& path) {
  if (!std::filesystem::exists(path))
    throw ValueError("torchtpu::jit::load_exported: cannot open '" + path + "': no such file");
  detail::Pt2Archive ar(path);
  if (ar.has("byteorder")) {
    const std::vector<unsigned char> b = ar.read("byteorder");
    if (std::string(b.begin(), b.end()) != "little") ar.fail("byteorder", "only little-endian archives are supported");
  }
  ExportedModule m;
  m.s_->path = path;
  detail::ExportImporter imp(ar, m.s_->graph);
  try {
    m.s_->inputs = imp.run();
  } catch (const nlohmann::json::exception& e) {  // a value of an unexpected JSON type
    ar.fail("models/model.json", std::string("unexpected content: ") + e.what());
  }
  m.s_->graph.finalize();
  return m;
}

}  // namespace torchtpu::jit
