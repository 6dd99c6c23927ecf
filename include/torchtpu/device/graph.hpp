// torchtpu/device/graph.hpp — the non-template runtime behind tensors on PJRT devices: device
// arrays (the storage of a device tensor), the deferred graph ("defer and fuse") that collects
// statements until a value is observed, and the PJRT round trip (StableHLO text → compilation
// cache → execute). Execution modes are in device/modes.hpp.
//
// device/lower.hpp turns an expression tree (device/frontend.hpp) into one `Statement`: its
// device inputs, a compact signature and a closure that emits it into a stablehlo::Builder.
// Everything here is ordinary `inline` code, compiled once, never per expression (STYLE.md §3),
// and only in translation units that include <torchtpu/device.hpp>.
#pragma once
#include <algorithm>      // std::sort, std::stable_sort
#include <atomic>         // std::atomic
#include <cstdint>        // int64_t, uint64_t
#include <cstring>        // std::memcpy
#include <exception>      // std::exception_ptr, std::rethrow_exception
#include <functional>     // std::function
#include <map>            // std::map
#include <memory>         // std::shared_ptr, std::weak_ptr
#include <mutex>          // std::mutex, std::lock_guard
#include <optional>       // std::optional
#include <span>           // std::span
#include <string>         // std::string
#include <string_view>    // std::string_view
#include <tuple>          // std::tuple
#include <unordered_map>  // std::unordered_map
#include <utility>        // std::move
#include <vector>         // std::vector

#include "../core/device.hpp"   // Device, DeviceKind
#include "../core/errors.hpp"   // DeviceError, DeviceUnavailable, ValueError, ...
#include "../core/shape.hpp"    // Dims
#include "pjrt/cache.hpp"       // pjrt::CompilationCache, Client, Buffer, Executable
#include "modes.hpp"            // ExecutionMode, matmul_precision, max_deferred_statements
#include "stablehlo.hpp"        // stablehlo::Builder, Value, Precision

namespace torchtpu {

namespace device {

class PendingGraph;

/// The storage of a tensor on a PJRT device (`StorageImpl::device_handle` points to one):
/// a dense row-major array of `dims` on one device, either materialized (`buffer`) or still
/// pending in a deferred graph (`graph`, statement `stmt`), or failed (`error`: the flush that
/// was to compute it threw; every later use rethrows that error).
///
/// **Ownership:** `buffer` is shared with the statements of deferred graphs that read it;
/// it lives until the last of them and the array are gone. Fields are guarded by the owning
/// graph's mutex (`PendingGraph::mutex()`).
struct DeviceArray {
  std::shared_ptr<pjrt::Client> client;  ///< never null
  int device_index = 0;                  ///< addressable-device position in `client`
  Device device;                         ///< "tpu:0", ...
  /// Element type.
  ScalarType dtype = ScalarType::Float;
  /// Sizes of each dim (dense row-major).
  std::vector<int64_t> dims;
  std::shared_ptr<pjrt::Buffer> buffer;  ///< null while pending
  std::shared_ptr<PendingGraph> graph;   ///< non-null while pending
  int stmt = -1;                         ///< producing statement while pending
  std::exception_ptr error;              ///< non-null once failed (then no buffer, no graph)
  /// Rethrows the error of the flush that failed to compute this array, if any.
  void check_not_failed() const {
    if (error) std::rethrow_exception(error);
  }
  /// **Errors:** ShapeError if the element count overflows int64.
  int64_t numel() const { return torchtpu::numel(Dims(dims.begin(), dims.end())); }
};

/// One input of a statement, fixed when the statement is recorded: a materialized buffer (a
/// parameter of the program) or the result of an earlier statement of the same graph.
struct Ref {
  std::shared_ptr<pjrt::Buffer> buffer;  ///< parameter, or null
  int stmt = -1;                         ///< earlier statement, or -1
  /// Element type of the input.
  ScalarType dtype = ScalarType::Float;
  /// Sizes of each dim of the input.
  std::vector<int64_t> dims;
  /// A scalar's one-element buffer (`PendingGraph::scalar_buffer`): always a parameter of its
  /// own, even when another input shares the buffer, so that two scalars that happen to be
  /// equal give the same program as two that differ.
  bool scalar = false;
};

class Emitter;


/// One recorded statement: `out = f(inputs)` where `emit` builds `f` in StableHLO.
struct Statement {
  /// Inputs, in the order `emit` reads them.
  std::vector<Ref> inputs;
  std::string sig;  ///< structure + shapes + constants + input dtypes (not scalar values); equal sigs emit equal text
  /// Builds the statement's value into the emitter's builder.
  std::function<stablehlo::Value(Emitter&)> emit;
  /// The array the statement produces (expired when nothing holds it any more: not computed).
  std::weak_ptr<DeviceArray> out;
  std::string op_name;  ///< for debug-mode errors
  /// `emit` adds run-time checks (stablehlo::Builder::runtime_check): the program returns one
  /// more scalar i32 for this statement. Set by `PendingGraph::record` (its type check).
  bool checks = false;
};

/// A Builder whose splat constants are shared and can be hoisted: the flush emits every
/// constant of the program first, so the elementwise ops of consecutive statements stay
/// adjacent in the text (one fusible region for XLA and for the emulator's loop fusion).
/// Op hooks receive it as their `B`, so their constants are shared too.
class ConstantHoistingBuilder : public stablehlo::Builder {
 public:
  /// Value bits (of the double, or the int64 for integer constants), dtype, dims, integer?
  using Key = std::tuple<uint64_t, int, std::vector<int64_t>, bool>;

  /// `Builder::constant`, deduplicated; while recording, also remembers the request.
  stablehlo::Value constant(double value, ScalarType dtype, std::vector<int64_t> dims = {}) {
    uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    return cached(Key{bits, static_cast<int>(dtype), std::move(dims), false});
  }
  /// `Builder::constant_int` (exact int64), deduplicated likewise.
  stablehlo::Value constant_int(int64_t value, ScalarType dtype, std::vector<int64_t> dims = {}) {
    return cached(Key{static_cast<uint64_t>(value), static_cast<int>(dtype), std::move(dims), true});
  }
  /// Emits the constants `keys` now (before any op that uses them).
  void hoist(const std::vector<Key>& keys) {
    for (const Key& k : keys) cached(k);
  }

 private:
  stablehlo::Value cached(Key key) {
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    if (recording_) recorded_.push_back(key);
    const auto& [bits, dtype, dims, is_int] = key;
    stablehlo::Value v;
    if (is_int) {
      v = stablehlo::Builder::constant_int(static_cast<int64_t>(bits), static_cast<ScalarType>(dtype), dims);
    } else {
      double d = 0;
      std::memcpy(&d, &bits, sizeof d);
      v = stablehlo::Builder::constant(d, static_cast<ScalarType>(dtype), dims);
    }
    cache_.emplace(std::move(key), v);
    return v;
  }

  friend class PendingGraph;
  bool recording_ = false;
  std::vector<Key> recorded_;
  std::map<Key, stablehlo::Value> cache_;
};

/// Emits statements into one Builder; resolves statement inputs to parameters (one per
/// distinct buffer) or to values of earlier statements.
class Emitter {
 public:
  /// The builder statements are emitted into.
  ConstantHoistingBuilder& builder() noexcept { return b_; }
  /// The k-th input of the statement being emitted (dense, with its base dims).
  stablehlo::Value input(size_t k) const { return inputs_.at(k); }

 private:
  friend class PendingGraph;
  ConstantHoistingBuilder b_;
  std::vector<stablehlo::Value> inputs_;
};

/// Counters for tests and benchmarks (process-wide, monotonically increasing).
struct ExecStats {
  uint64_t statements = 0;  ///< statements recorded
  uint64_t executions = 0;  ///< PJRT executions (one per flushed program)
  uint64_t awaited = 0;     ///< executions the host waited for at once (debug mode only)
  uint64_t texts_built = 0; ///< StableHLO module texts built (misses of the text memo)
  ///@{
  /// Host-to-device and device-to-host copies.
  uint64_t uploads = 0, downloads = 0;
  ///@}
  /// One-element scalar buffers uploaded (misses of `PendingGraph::scalar_buffer`; not in `uploads`).
  uint64_t scalar_uploads = 0;
};

namespace detail {
struct Counters {
  std::atomic<uint64_t> statements{0}, executions{0}, awaited{0}, texts_built{0}, uploads{0}, downloads{0},
      scalar_uploads{0};
};
inline Counters& counters() {
  static Counters c;
  return c;
}
}  // namespace detail

inline ExecStats stats() {
  const auto& c = detail::counters();
  return {c.statements.load(), c.executions.load(), c.awaited.load(), c.texts_built.load(), c.uploads.load(),
          c.downloads.load(), c.scalar_uploads.load()};
}

/// Module text by program signature: a signature seen before reuses its text (the text of an
/// expression type and shape set is built once); the executable then comes from the
/// compilation cache. Thread-safe.
class TextMemo {
 public:
  /// The process-wide memo (never destroyed).
  static TextMemo& global() {
    static TextMemo* m = new TextMemo();  // leaked: outlives static destruction
    return *m;
  }
  /// The text stored for signature `sig`, or null.
  std::shared_ptr<const std::string> find(const std::string& sig) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(sig);
    return it == map_.end() ? nullptr : it->second;
  }
  /// Stores `text` for `sig` (the memo is cleared past 4096 entries).
  void put(const std::string& sig, std::shared_ptr<const std::string> text) {
    std::lock_guard<std::mutex> lock(mu_);
    if (map_.size() > 4096) map_.clear();  // bound memory; texts are cheap to rebuild
    map_[sig] = std::move(text);
  }
  /// Forgets every text.
  void clear() {
    std::lock_guard<std::mutex> lock(mu_);
    map_.clear();
  }

 private:
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const std::string>> map_;
};

/// The deferred graph of one device (one per client and device index): statements recorded
/// in fused mode wait here until `flush()`.
///
/// **Thread safety:** every public method locks `mutex()`; statements from several threads
/// interleave in one graph.
class PendingGraph : public std::enable_shared_from_this<PendingGraph> {
 public:
  /// An empty graph for addressable device `device_index` of `client`, named `device`.
  PendingGraph(std::shared_ptr<pjrt::Client> client, int device_index, Device device)
      : client_(std::move(client)), device_index_(device_index), device_(device) {}

  /// The graph's lock (a recursive mutex; every public method takes it).
  std::recursive_mutex& mutex() noexcept { return mu_; }
  /// The client the graph executes on.
  const std::shared_ptr<pjrt::Client>& client() const noexcept { return client_; }
  /// Addressable-device position in `client()`.
  int device_index() const noexcept { return device_index_; }
  /// The device, e.g. `tpu:0`.
  const Device& device() const noexcept { return device_; }
  /// Number of statements waiting for a flush.
  size_t size() const {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    return stmts_.size();
  }

  /// The input reference for `a` (which must live on this graph's device).
  /// **Errors:** the original error of the flush that failed to compute `a`; ValueError for an
  /// array pending in another graph or one that has no value.
  Ref ref_for(const DeviceArray& a) {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    a.check_not_failed();
    Ref r;
    r.dtype = a.dtype;
    r.dims = a.dims;
    if (a.graph) {
      if (a.graph.get() != this) throw ValueError("internal: device array pending in another graph");
      if (a.stmt < 0 || a.stmt >= static_cast<int>(stmts_.size()) ||
          stmts_[static_cast<size_t>(a.stmt)].out.lock().get() != &a)
        throw ValueError("internal: device array on " + device_.str() +
                         " refers to a statement its graph no longer holds");
      r.stmt = a.stmt;
    } else {
      if (!a.buffer)
        throw ValueError("device tensor on " + device_.str() + " has no value: the program that computed it failed");
      r.buffer = a.buffer;
    }
    return r;
  }

  /// Records `st` producing a new array of `dtype`/`dims`; with `run_now` (debug/strict
  /// mode) runs it at once. Hold `mutex()` from `make_room()` through this call.
  /// The statement is type-checked here (emitted once into a scratch builder per distinct
  /// signature), so an op StableHLO rejects fails at the statement, not at a later flush.
  /// **Errors:** TypeError/ShapeError/ValueError/UnsupportedOperator from the type check (nothing
  /// is recorded); with `run_now`, DeviceError from compilation or execution. A flush that fails
  /// puts every array it was to compute in the failed state (`DeviceArray::error`).
  std::shared_ptr<DeviceArray> record(Statement st, ScalarType dtype, std::vector<int64_t> dims,
                                      bool run_now) {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    type_check(st, dtype, dims);
    auto arr = std::make_shared<DeviceArray>();
    arr->client = client_;
    arr->device_index = device_index_;
    arr->device = device_;
    arr->dtype = dtype;
    arr->dims = std::move(dims);
    arr->graph = shared_from_this();
    arr->stmt = static_cast<int>(stmts_.size());
    st.out = arr;
    stmts_.push_back(std::move(st));
    ++detail::counters().statements;
    if (run_now) {
      flush_locked();
      arr->check_not_failed();  // a failed run-time check throws at the op in debug/strict mode
    }
    return arr;
  }

  /// The one-element (rank-0) buffer of `dtype` on this graph's device holding the value whose
  /// bytes are the first `dtype_size(dtype)` bytes of `bits` (little-endian host order), from
  /// a cache of such buffers, uploading it on a miss. This is how a scalar of an expression
  /// (`x * 0.5`) enters a program: as a parameter, so that a changing value never changes the
  /// program text, and an unchanged one is not uploaded again. Buffers are never written
  /// (PJRT inputs are not donated), so one is shared by every statement using the value.
  /// **Bound:** at most `kScalarCacheSize` buffers; the cache is emptied when full (buffers
  /// in use stay alive through their statements).
  /// **Errors:** DeviceError from the upload.
  std::shared_ptr<pjrt::Buffer> scalar_buffer(ScalarType dtype, uint64_t bits) {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    const auto key = std::make_pair(static_cast<int>(dtype), bits);
    if (auto it = scalars_.find(key); it != scalars_.end()) return it->second;
    unsigned char bytes[sizeof bits];
    std::memcpy(bytes, &bits, sizeof bits);
    auto buf = std::make_shared<pjrt::Buffer>(
        client_->buffer_from_host(bytes, dtype, std::span<const int64_t>(), device_index_));
    ++detail::counters().scalar_uploads;
    if (scalars_.size() >= kScalarCacheSize) scalars_.clear();
    scalars_.emplace(key, buf);
    return buf;
  }
  /// Capacity of the scalar buffer cache, per graph (device).
  static constexpr size_t kScalarCacheSize = 256;

  /// Runs the graph if it holds `max_deferred_statements()` statements. Call with `mutex()`
  /// held, before taking the `Ref`s of the next statement (a flush invalidates them).
  void make_room() {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    if (static_cast<int64_t>(stmts_.size()) >= max_deferred_statements()) flush_locked();
  }

  /// Runs every deferred statement whose result is still referenced, as ONE program.
  void flush() {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    flush_locked();
  }

  /// Waits until every execution this graph has enqueued so far has finished (strict and fused
  /// modes enqueue and return; PJRT runs them asynchronously), by awaiting the ready events of
  /// their outputs that are still referenced. Does not flush: `torchtpu::sync()` flushes, then
  /// waits. **Errors:** DeviceError with the error of the first execution that failed (every
  /// output is still awaited first).
  void wait() {
    std::vector<std::weak_ptr<pjrt::Buffer>> pending;
    {
      std::lock_guard<std::recursive_mutex> lock(mu_);
      pending.swap(enqueued_);
    }
    std::exception_ptr first;
    for (const auto& w : pending) {
      const std::shared_ptr<pjrt::Buffer> b = w.lock();
      if (!b || b->handle() == nullptr) continue;
      try {
        b->await_ready();
      } catch (...) {
        if (!first) first = std::current_exception();
      }
    }
    if (first) std::rethrow_exception(first);
  }

  /// The flush itself (the runtime table's `flush_locked`); call `flush()` instead.
  /// Every live array of the graph leaves it here: computed (`buffer`) on success, failed
  /// (`error`, the exception thrown) otherwise; the graph is empty afterwards either way.
  void flush_locked_now() {
    if (stmts_.empty()) return;
    std::vector<Statement> stmts = std::move(stmts_);
    stmts_.clear();
    // Live results are outputs; walk back from them to find the statements needed.
    std::vector<std::shared_ptr<DeviceArray>> outs;
    std::vector<int> out_stmt;
    for (size_t i = 0; i < stmts.size(); ++i) {
      if (auto a = stmts[i].out.lock(); a && a->graph.get() == this && a->stmt == static_cast<int>(i)) {
        outs.push_back(a);
        out_stmt.push_back(static_cast<int>(i));
      }
    }
    if (outs.empty()) return;
    std::vector<std::shared_ptr<pjrt::Buffer>> buffers;
    std::vector<std::string> failed(stmts.size());
    try {
      buffers = run_program(stmts, out_stmt, failed);
    } catch (...) {
      // One program computes every output, so they all fail with its error; none keeps a
      // statement index into a graph that no longer holds it.
      const std::exception_ptr err = std::current_exception();
      for (auto& a : outs) {
        a->graph.reset();
        a->stmt = -1;
        a->error = err;
      }
      throw;
    }
    // A failed run-time check fails its statement and every statement computed from it (they
    // rethrow its ValueError, or IndexError for a message tagged "IndexError: ", when used);
    // the other outputs of the program are valid.
    for (size_t i = 0; i < stmts.size(); ++i)
      for (const Ref& r : stmts[i].inputs)
        if (failed[i].empty() && r.stmt >= 0) failed[i] = failed[static_cast<size_t>(r.stmt)];
    for (size_t j = 0; j < outs.size(); ++j) {
      const std::string& why = failed[static_cast<size_t>(out_stmt[j])];
      if (why.empty()) outs[j]->buffer = std::move(buffers[j]);
      else if (why.rfind("IndexError: ", 0) == 0) outs[j]->error = std::make_exception_ptr(IndexError(why.substr(12)));
      else outs[j]->error = std::make_exception_ptr(ValueError(why));
      outs[j]->graph.reset();
      outs[j]->stmt = -1;
    }
  }

 private:
  /// Emits `st` alone into a scratch builder (parameters for its inputs), so the Builder's
  /// shape and dtype checks run at record time. Remembers checked signatures (the signature
  /// fixes the emitted text), so a statement seen before costs one set lookup.
  /// Also sets `st.checks` (the value is memoized with the signature: 1 plain, 2 with checks).
  void type_check(Statement& st, ScalarType dtype, const std::vector<int64_t>& dims) const {
    static std::mutex checked_mu;
    static auto* checked = new std::unordered_map<std::string, char>();  // leaked, bounded below
    {
      std::lock_guard<std::mutex> lock(checked_mu);
      if (auto it = checked->find(st.sig); it != checked->end()) {
        st.checks = it->second == 2;
        return;
      }
    }
    Emitter em;
    for (const Ref& r : st.inputs) em.inputs_.push_back(em.b_.parameter(r.dtype, r.dims));
    const stablehlo::Value v = st.emit(em);
    st.checks = em.b_.check_code().valid();
    if (v.dtype != dtype || v.dims != dims)
      throw ValueError("internal: statement '" + st.op_name + "' emits " + stablehlo::tensor_type(v) +
                       ", recorded as " + stablehlo::tensor_type(dtype, dims));
    std::lock_guard<std::mutex> lock(checked_mu);
    if (checked->size() > 4096) checked->clear();
    checked->emplace(st.sig, st.checks ? 2 : 1);
  }

  /// Builds (or finds) the program computing statements `out_stmt` of `stmts`, runs it and
  /// returns one buffer per output. Throws whatever building, compiling or running throws.
  /// `failed[i]` receives the message of statement i's failed run-time check (else stays empty).
  std::vector<std::shared_ptr<pjrt::Buffer>> run_program(const std::vector<Statement>& stmts,
                                                         const std::vector<int>& out_stmt,
                                                         std::vector<std::string>& failed) {
    std::vector<char> needed(stmts.size(), 0);
    for (int s : out_stmt) needed[static_cast<size_t>(s)] = 1;
    for (size_t i = stmts.size(); i-- > 0;)
      if (needed[i])
        for (const Ref& r : stmts[i].inputs)
          if (r.stmt >= 0) needed[static_cast<size_t>(r.stmt)] = 1;
    // Parameters: distinct buffers in order of first use. Signature: statement sigs with
    // their input wiring, and which statements are outputs.
    std::vector<const pjrt::Buffer*> params;
    std::map<const pjrt::Buffer*, int> param_of;
    std::unordered_map<const Ref*, int> scalar_param;  // scalar inputs: their parameter positions
    std::vector<int> stmt_pos(stmts.size(), -1);
    std::string sig;
    int pos = 0;
    std::string op_names;
    for (size_t i = 0; i < stmts.size(); ++i) {
      if (!needed[i]) continue;
      stmt_pos[i] = pos++;
      sig += stmts[i].sig;
      sig += '(';
      for (const Ref& r : stmts[i].inputs) {
        if (r.buffer && r.scalar) {  // a parameter of its own (see Ref::scalar)
          scalar_param.emplace(&r, static_cast<int>(params.size()));
          sig += 'p' + std::to_string(params.size()) + ',';
          params.push_back(r.buffer.get());
        } else if (r.buffer) {
          auto [it, inserted] = param_of.emplace(r.buffer.get(), static_cast<int>(params.size()));
          if (inserted) params.push_back(r.buffer.get());
          sig += 'p' + std::to_string(it->second) + ',';
        } else {
          sig += 's' + std::to_string(stmt_pos[static_cast<size_t>(r.stmt)]) + ',';
        }
      }
      sig += ")\n";
      if (!op_names.empty()) op_names += ", ";
      op_names += stmts[i].op_name;
    }
    sig += "->";
    for (int s : out_stmt) sig += std::to_string(stmt_pos[static_cast<size_t>(s)]) + ',';
    auto param_index = [&](const Ref& r) { return r.scalar ? scalar_param.at(&r) : param_of.at(r.buffer.get()); };
    std::shared_ptr<const std::string> text = TextMemo::global().find(sig);
    std::vector<ConstantHoistingBuilder::Key> hoisted;
    if (!text) {
      // Pass 1 records the constants the program uses; pass 2 emits them first, then the ops.
      std::vector<stablehlo::Value> check_values;  // one per needed statement with checks
      auto emit_all = [&](Emitter& em, std::vector<stablehlo::Value>& values) {
        check_values.clear();
        std::vector<stablehlo::Value> param_values;
        for (const pjrt::Buffer* b : params) param_values.push_back(em.b_.parameter(b->dtype(), b->dims()));
        if (!em.b_.recording_) em.b_.hoist(hoisted);
        values.assign(stmts.size(), stablehlo::Value{});
        for (size_t i = 0; i < stmts.size(); ++i) {
          if (!needed[i]) continue;
          em.inputs_.clear();
          for (const Ref& r : stmts[i].inputs)
            em.inputs_.push_back(r.buffer ? param_values[static_cast<size_t>(param_index(r))]
                                          : values[static_cast<size_t>(r.stmt)]);
          values[i] = stmts[i].emit(em);
          const stablehlo::Value code = em.b_.take_check_code();
          if (stmts[i].checks != code.valid())
            throw ValueError("internal: statement '" + stmts[i].op_name + "' emitted run-time checks differently");
          if (code.valid()) check_values.push_back(code);
        }
      };
      std::vector<stablehlo::Value> values;
      {
        Emitter scratch;
        scratch.b_.recording_ = true;
        emit_all(scratch, values);
        hoisted = std::move(scratch.b_.recorded_);
      }
      Emitter em;
      emit_all(em, values);
      std::vector<stablehlo::Value> results;
      for (int s : out_stmt) results.push_back(values[static_cast<size_t>(s)]);
      results.insert(results.end(), check_values.begin(), check_values.end());  // see below
      em.b_.set_results(std::move(results));
      text = std::make_shared<const std::string>(em.b_.str());
      ++detail::counters().texts_built;
      TextMemo::global().put(sig, text);
    }
    std::vector<pjrt::Buffer> results;
    try {
      auto exe = pjrt::CompilationCache::global().get_or_compile(client_, *text);
      // Debug mode waits for each execution (its error surfaces at the op); strict and fused
      // return once it is enqueued — the host waits only when it reads a result.
      const bool await_now = execution_mode() == ExecutionMode::Debug;
      results = exe->execute(std::span<const pjrt::Buffer* const>(params.data(), params.size()),
                             device_index_, await_now);
      ++detail::counters().executions;
      if (await_now) ++detail::counters().awaited;
    } catch (const DeviceError& e) {
      if (execution_mode() == ExecutionMode::Debug)
        throw DeviceError(e.code(), "debug mode: op '" + op_names + "' on " + device_.str() +
                                        " failed: " + e.what());
      throw;
    }
    // After the outputs, one scalar i32 per statement with run-time checks (Builder::runtime_check,
    // e.g. integer division by zero): 0 when they passed, else the failed check's message id.
    // Reading one waits for the execution.
    size_t n_checks = 0;
    for (size_t i = 0; i < stmts.size(); ++i) n_checks += needed[i] && stmts[i].checks;
    if (n_checks && results.size() == out_stmt.size() + n_checks) {
      size_t k = out_stmt.size();
      for (size_t i = 0; i < stmts.size(); ++i) {
        if (!needed[i] || !stmts[i].checks) continue;
        int32_t code = 0;
        results[k++].to_host(&code, sizeof code);
        if (code != 0) failed[i] = stablehlo::check_message(code);
      }
      results.resize(out_stmt.size());
    }
    if (results.size() != out_stmt.size())
      throw DeviceError(13, "internal: program returned " + std::to_string(results.size()) +
                                " results for " + std::to_string(out_stmt.size()) + " outputs");
    std::vector<std::shared_ptr<pjrt::Buffer>> out;
    out.reserve(results.size());
    for (auto& r : results) out.push_back(std::make_shared<pjrt::Buffer>(std::move(r)));
    // Enqueued, not awaited: `wait()` (torchtpu::sync) waits for these outputs. Results nobody
    // holds any more are skipped there (nothing can observe them).
    for (const auto& b : out) enqueued_.push_back(b);
    if (enqueued_.size() > 4096) prune_enqueued();
    return out;
  }

  /// Drops the entries of `enqueued_` whose buffers are gone (caller holds `mu_`).
  void prune_enqueued() {
    std::erase_if(enqueued_, [](const std::weak_ptr<pjrt::Buffer>& w) { return w.expired(); });
  }

  void flush_locked() { flush_locked_now(); }

  mutable std::recursive_mutex mu_;
  std::shared_ptr<pjrt::Client> client_;
  int device_index_;
  Device device_;
  std::vector<Statement> stmts_;
  std::map<std::pair<int, uint64_t>, std::shared_ptr<pjrt::Buffer>> scalars_;  // (dtype, bits)
  std::vector<std::weak_ptr<pjrt::Buffer>> enqueued_;  // outputs of executions not yet awaited
};

/// The PJRT client for a device kind (cached; one per plugin per process).
/// **Errors:** DeviceUnavailable listing the places searched; ValueError for "cpu".
inline std::shared_ptr<pjrt::Client> client_for(DeviceKind kind) {
  if (kind == DeviceKind::CPU) throw ValueError("client_for: the cpu is not a PJRT device");
  static std::mutex mu;
  static auto* clients = new std::map<DeviceKind, std::shared_ptr<pjrt::Client>>();  // leaked
  std::lock_guard<std::mutex> lock(mu);
  auto it = clients->find(kind);
  if (it != clients->end()) return it->second;
  auto c = pjrt::Client::get(device_kind_name(kind));
  clients->emplace(kind, c);
  return c;
}

namespace detail {
struct GraphRegistry {
  std::mutex mu;
  std::map<std::pair<int, int>, std::shared_ptr<PendingGraph>> graphs;
};
inline GraphRegistry& graph_registry() {
  static auto* r = new GraphRegistry();  // leaked: graphs hold plugin objects
  return *r;
}
}  // namespace detail

inline std::shared_ptr<DeviceArray> upload(const void* host, ScalarType dtype, std::vector<int64_t> dims,
                                           const Device& d);
inline void download(const std::shared_ptr<DeviceArray>& a, void* dst, size_t bytes);
inline std::shared_ptr<PendingGraph> graph_for(const Device& d);

namespace detail {
/// Fills the front end's `device_hooks_slot` (idempotent; defined at the end of device/lower.hpp).
inline void install_runtime();
}  // namespace detail

/// The deferred graph of device `d` (created on first use).
/// **Errors:** DeviceUnavailable; IndexError if the index exceeds the device count.
inline std::shared_ptr<PendingGraph> graph_for(const Device& d) {
  detail::install_runtime();
  auto& reg = detail::graph_registry();
  const auto key = std::make_pair(static_cast<int>(d.kind()), d.index());
  {
    std::lock_guard<std::mutex> lock(reg.mu);
    auto it = reg.graphs.find(key);
    if (it != reg.graphs.end()) return it->second;
  }
  auto client = client_for(d.kind());
  client->device(d.index());  // IndexError naming the count
  std::lock_guard<std::mutex> lock(reg.mu);
  auto it = reg.graphs.find(key);
  if (it != reg.graphs.end()) return it->second;
  auto g = std::make_shared<PendingGraph>(client, d.index(), d);
  reg.graphs.emplace(key, g);
  return g;
}

/// Every deferred graph created so far.
inline std::vector<std::shared_ptr<PendingGraph>> all_graphs() {
  auto& reg = detail::graph_registry();
  std::lock_guard<std::mutex> lock(reg.mu);
  std::vector<std::shared_ptr<PendingGraph>> out;
  for (auto& kv : reg.graphs) out.push_back(kv.second);
  return out;
}

/// Copies dense row-major host data of `dtype`/`dims` to device `d` (awaited).
/// **Errors:** DeviceUnavailable, IndexError, DeviceError.
inline std::shared_ptr<DeviceArray> upload(const void* host, ScalarType dtype,
                                           std::vector<int64_t> dims, const Device& d) {
  auto g = graph_for(d);
  auto arr = std::make_shared<DeviceArray>();
  arr->client = g->client();
  arr->device_index = d.index();
  arr->device = d;
  arr->dtype = dtype;
  arr->dims = std::move(dims);
  arr->buffer = std::make_shared<pjrt::Buffer>(
      g->client()->buffer_from_host(host, dtype, arr->dims, d.index()));
  ++detail::counters().uploads;
  return arr;
}

/// Runs `a`'s pending graph if needed, then copies it to `dst` (dense row-major, `bytes`).
/// **Errors:** DeviceError; ValueError if `a` failed to compute earlier.
inline void download(const std::shared_ptr<DeviceArray>& a, void* dst, size_t bytes) {
  std::shared_ptr<pjrt::Buffer> buf;
  {
    auto g = graph_for(a->device);
    std::lock_guard<std::recursive_mutex> lock(g->mutex());
    if (a->graph) a->graph->flush();
    a->check_not_failed();
    if (!a->buffer)
      throw ValueError("device tensor on " + a->device.str() +
                       " has no value: the program that computed it failed");
    buf = a->buffer;
  }
  buf->to_host(dst, bytes);
  ++detail::counters().downloads;
}

/// The value of a strided view (`sizes`, `strides`, `offset` in elements) of the dense
/// array `base`, as StableHLO ops (slice, pad, reshape, transpose, broadcast_in_dim).
/// **Errors:** UnsupportedOperator for views whose strides do not nest (arbitrary
/// as_strided layouts; every torchtpu view op gives nesting strides).

/// A view as a strided slice of `base`'s own axes (each view axis walks one base axis with a
/// step), then reshape, transpose and broadcast; nullopt when the view merges base axes.
// GCC 12 at -O3 reports a false -Wfree-nonheap-object inside this function (vector<int64_t>
// destructors after interprocedural propagation); silenced here only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wfree-nonheap-object"
#endif
inline std::optional<stablehlo::Value> view_by_base_axes(stablehlo::Builder& b, const stablehlo::Value& base,
                                                         const Dims& sizes, const Dims& strides,
                                                         int64_t offset) {
  const size_t nb = base.dims.size();
  std::vector<int64_t> c(nb, 1), start(nb, 0), limit(nb, 0), step(nb, 1);
  for (size_t i = nb; i-- > 1;) c[i - 1] = c[i] * base.dims[i];
  for (size_t i = 0; i < nb; ++i) {
    if (base.dims[i] == 0) return std::nullopt;
    start[i] = (offset / c[i]) % base.dims[i];
    limit[i] = start[i] + 1;
  }
  std::vector<int> axis_of(static_cast<size_t>(sizes.size()), -1);
  std::vector<bool> used(nb, false);
  for (int j = 0; j < sizes.size(); ++j) {
    if (sizes[j] == 1 || strides[j] == 0) continue;
    int found = -1;
    for (size_t i = 0; i < nb && found < 0; ++i) {
      if (used[i] || base.dims[i] == 1 || strides[j] < c[i] || strides[j] % c[i] != 0) continue;
      const int64_t st = strides[j] / c[i];
      if (start[i] + (sizes[j] - 1) * st < base.dims[i]) found = static_cast<int>(i);
    }
    if (found < 0) return std::nullopt;
    const size_t i = static_cast<size_t>(found);
    used[i] = true;
    axis_of[static_cast<size_t>(j)] = found;
    step[i] = strides[j] / c[i];
    limit[i] = start[i] + (sizes[j] - 1) * step[i] + 1;
  }
  stablehlo::Value v = base;
  bool full = true;
  for (size_t i = 0; i < nb; ++i) full &= start[i] == 0 && limit[i] == base.dims[i] && step[i] == 1;
  if (!full) v = b.slice(v, start, limit, step);
  std::vector<int64_t> kept_dims, kept_base;  // used base axes, in base order
  for (size_t i = 0; i < nb; ++i)
    if (used[i]) {
      kept_dims.push_back(v.dims[i]);
      kept_base.push_back(static_cast<int64_t>(i));
    }
  if (v.dims != kept_dims) v = b.reshape(v, kept_dims);
  // View axes that walk a base axis, in view order; the transpose puts v in that order.
  std::vector<int64_t> view_axes, perm;
  for (int j = 0; j < sizes.size(); ++j)
    if (axis_of[static_cast<size_t>(j)] >= 0) {
      view_axes.push_back(j);
      const auto it = std::find(kept_base.begin(), kept_base.end(), axis_of[static_cast<size_t>(j)]);
      perm.push_back(it - kept_base.begin());
    }
  bool identity = true;
  for (size_t r = 0; r < perm.size(); ++r) identity &= perm[r] == static_cast<int64_t>(r);
  if (!identity) v = b.transpose(v, perm);
  const std::vector<int64_t> out(sizes.begin(), sizes.end());
  if (v.dims == out) return v;
  return b.broadcast_in_dim(v, out, view_axes);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif


inline stablehlo::Value view_of(stablehlo::Builder& b, const stablehlo::Value& base, const Dims& sizes,
                                const Dims& strides, int64_t offset) {
  const std::vector<int64_t> out(sizes.begin(), sizes.end());
  const int64_t n = base.numel();
  const int64_t total = numel(sizes);  // ShapeError when a (broadcast) view's size overflows
  {  // negative strides (flip): the view with those strides positive, reversed along them
    Dims pos = strides;
    int64_t first = offset;  // the lowest element the view reaches
    std::vector<int64_t> reversed;
    for (int i = 0; i < sizes.size(); ++i)
      if (sizes[i] > 1 && strides[i] < 0) {
        first += (sizes[i] - 1) * strides[i];
        pos[i] = -strides[i];
        reversed.push_back(i);
      }
    if (!reversed.empty() && total > 0) return b.reverse(view_of(b, base, sizes, pos, first), reversed);
  }
  {  // dense identity view: only a reshape (or nothing)
    bool dense = offset == 0 && total == n;
    int64_t expect = 1;
    for (int i = sizes.size() - 1; dense && i >= 0; --i) {
      if (sizes[i] == 1) continue;
      dense = strides[i] == expect;
      expect *= sizes[i];
    }
    if (dense) return out == base.dims ? base : b.reshape(base, out);
  }
  if (total == 0) return b.constant(0, base.dtype, out);
  if (auto v = view_by_base_axes(b, base, sizes, strides, offset)) return *v;
  struct Axis { int64_t size, stride; int orig; };
  std::vector<Axis> ax;
  for (int i = 0; i < sizes.size(); ++i)
    if (sizes[i] > 1 && strides[i] != 0) ax.push_back({sizes[i], strides[i], i});
  std::stable_sort(ax.begin(), ax.end(), [](const Axis& x, const Axis& y) { return x.stride > y.stride; });
  auto unsupported = [&] {
    throw UnsupportedOperator("device view with sizes " + to_string(sizes) + ", strides " +
                              to_string(strides) + " and offset " + std::to_string(offset) +
                              " cannot be expressed without a gather; call .contiguous() on the cpu first");
  };
  for (size_t j = 0; j < ax.size(); ++j) {
    if (ax[j].stride < 0) unsupported();
    if (j + 1 < ax.size() && (ax[j].stride % ax[j + 1].stride != 0 ||
                              ax[j + 1].size * ax[j + 1].stride > ax[j].stride))
      unsupported();
  }
  stablehlo::Value flat = base.rank() == 1 ? base : b.reshape(base, {n});
  stablehlo::Value v;
  std::vector<int64_t> kept_axes;  // original positions of the axes of `v`, ascending
  if (ax.empty()) {
    v = b.reshape(b.slice(flat, {offset}, {offset + 1}), {});
  } else {
    const int64_t span = ax[0].size * ax[0].stride;
    const int64_t avail = std::min(span, n - offset);
    v = b.slice(flat, {offset}, {offset + avail});
    if (avail < span) v = b.pad(v, b.constant(0, base.dtype), {0}, {span - avail});
    std::vector<int64_t> chain = {ax[0].size};
    for (size_t j = 1; j < ax.size(); ++j) chain.push_back(ax[j - 1].stride / ax[j].stride);
    chain.push_back(ax.back().stride);
    v = b.reshape(v, chain);
    std::vector<int64_t> lim, start(chain.size(), 0);
    for (size_t j = 0; j < ax.size(); ++j) lim.push_back(ax[j].size);
    lim.push_back(1);
    if (lim != chain) v = b.slice(v, start, lim);
    std::vector<int64_t> kept;
    for (const Axis& a : ax) kept.push_back(a.size);
    v = b.reshape(v, kept);
    // Back to the view's axis order.
    std::vector<int64_t> perm(ax.size());
    for (size_t r = 0; r < perm.size(); ++r) perm[r] = static_cast<int64_t>(r);
    std::sort(perm.begin(), perm.end(), [&](int64_t x, int64_t y) { return ax[x].orig < ax[y].orig; });
    bool identity = true;
    for (size_t r = 0; r < perm.size(); ++r) identity &= perm[r] == static_cast<int64_t>(r);
    if (!identity) v = b.transpose(v, perm);
    for (int64_t p : perm) kept_axes.push_back(ax[static_cast<size_t>(p)].orig);
  }
  if (v.dims == out) return v;
  return b.broadcast_in_dim(v, out, kept_axes);
}

/// Throws `view_of`'s UnsupportedOperator now (at record time) rather than at the flush.
inline void check_view(ScalarType dtype, const std::vector<int64_t>& base_dims, const Dims& sizes,
                       const Dims& strides, int64_t offset) {
  stablehlo::Builder scratch;
  view_of(scratch, scratch.parameter(dtype, base_dims), sizes, strides, offset);
}

}  // namespace device

// ---- accelerator queries -----------------------------------------------------------------

namespace accelerator {

/// What an accelerator is. `emulated` is true for torchtpu's TPU emulator (never a real TPU).
struct Info {
  Device device{};               ///< kind and index 0; cpu when no accelerator is available
  std::string platform_name;     ///< PJRT platform name ("tpu", "cuda", "cpu" for xla_cpu); "cpu" for the cpu
  std::string platform_version;  ///< plugin version string
  std::string device_kind;       ///< PJRT device kind ("TPU v5 lite", "TPU emulator", ...)
  std::string plugin_path;       ///< shared object loaded ("" for the cpu)
  /// True for torchtpu's TPU emulator (never a real TPU).
  bool emulated = false;
  /// Number of addressable devices.
  int device_count = 0;
  /// One line, e.g. `tpu: TPU emulator (platform tpu, torchtpu-emulator 0.1; EMULATED, not a
  /// real TPU), 1 device(s), plugin /path/libtorchtpu_tpu_emulator.so`.
  std::string str() const {
    if (device.is_cpu()) return "cpu (no PJRT accelerator available)";
    std::string s = std::string(device_kind_name(device.kind())) + ": " + device_kind + " (platform " +
                    platform_name + ", " + platform_version;
    if (emulated) s += "; EMULATED, not a real TPU";
    return s + "), " + std::to_string(device_count) + " device(s), plugin " + plugin_path;
  }
};

/// Information about the accelerator of `kind`. **Errors:** DeviceUnavailable (listing the
/// places searched) when its plugin is missing.
inline Info info(DeviceKind kind) {
  Info i;
  if (kind == DeviceKind::CPU) {
    i.platform_name = "cpu";
    i.device_count = 1;
    return i;
  }
  auto c = device::client_for(kind);
  i.device = Device(kind, 0);
  i.platform_name = c->platform_name();
  i.platform_version = c->platform_version();
  i.device_kind = c->device_kind();
  i.plugin_path = c->plugin().path();
  i.emulated = c->emulated();
  i.device_count = static_cast<int>(c->addressable_devices().size());
  return i;
}

/// True if a PJRT plugin for `kind` loads and has at least one device (always true for cpu).
/// The TPU emulator counts only when requested (TORCHTPU_TPU_EMULATOR=1 or
/// TORCHTPU_TPU_EMULATOR_PATH), and then `info(...).emulated` says so.
inline bool is_available(DeviceKind kind) {
  if (kind == DeviceKind::CPU) return true;
  try {
    return !device::client_for(kind)->addressable_devices().empty();
  } catch (const Error&) {
    return false;
  }
}
inline bool is_available(std::string_view kind) { return is_available(Device(kind).kind()); }

/// Number of addressable devices of `kind` (0 when unavailable; 1 for the cpu).
inline int device_count(DeviceKind kind) {
  if (kind == DeviceKind::CPU) return 1;
  try {
    return static_cast<int>(device::client_for(kind)->addressable_devices().size());
  } catch (const Error&) {
    return 0;
  }
}
inline int device_count(std::string_view kind) { return device_count(Device(kind).kind()); }

/// The active accelerator: tpu if available, else cuda, else xla_cpu (XLA's CPU plugin, when
/// installed), else the cpu (`device.is_cpu()`).
inline Info current() {
  for (DeviceKind k : {DeviceKind::TPU, DeviceKind::CUDA, DeviceKind::XLA_CPU})
    if (is_available(k)) return info(k);
  return info(DeviceKind::CPU);
}

}  // namespace accelerator
}  // namespace torchtpu
