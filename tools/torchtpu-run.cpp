// tools/torchtpu-run.cpp — the main job: load a TorchScript model (or a torch.export program,
// `.pt2`, read without libtorch) into torchtpu, run it on a .npy input or a labelled CSV, print
// predictions / accuracy, latency, the accelerator in use, and (--check, TorchScript only) the
// difference to libtorch's own forward on the same input.
#include <dlfcn.h>   // dlsym (OpenBLAS thread count)
#include <malloc.h>  // malloc_usable_size (glibc)
#include <sys/resource.h>  // getrusage
#include <unistd.h>  // sysconf (valloc's page size)

#include <cerrno>     // EINVAL, ENOMEM
#include <algorithm>  // std::sort, std::max
#include <atomic>     // std::atomic (heap counters)
#include <chrono>     // std::chrono::steady_clock
#include <cmath>      // std::abs
#include <cstdio>     // std::printf, std::fprintf
#include <charconv>   // std::from_chars
#include <cstdlib>    // std::exit
#include <map>        // std::map (--profile per kind)
#include <optional>   // std::optional
#include <string>     // std::string
#include <type_traits>  // std::type_identity
#include <vector>     // std::vector

#include <ATen/Parallel.h>          // at::set_num_threads
#include <torchtpu/core/errors.hpp>  // torchtpu::Error, DeviceUnavailable
#include <torchtpu/io/csv.hpp>       // read_csv
#include <torchtpu/io/npy.hpp>       // read_npy, write_npy
#include <torchtpu/jit/load.hpp>     // torchtpu::jit::load, Module
#include <torchtpu/jit/lower.hpp>    // DeviceProgram (tpu, cuda, the TPU emulator)
#if TORCHTPU_RUN_PT2
#include <torchtpu/jit/export.hpp>   // torchtpu::jit::load_exported (.pt2; needs nlohmann/json)
#endif

// Heap use of a forward pass (--bench): glibc's allocation functions are replaced here by
// ones that count each block and add its usable size to the live total (whose peak is kept),
// then call glibc's own (__libc_malloc, ...). Every allocation of the process goes through them:
// operator new, tensor storage (aligned_alloc), libraries. Not under AddressSanitizer, which
// replaces them itself, nor off glibc.
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
#define TORCHTPU_RUN_COUNTS_HEAP 1
extern "C" {
void* __libc_malloc(size_t);
void __libc_free(void*);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
}
namespace heap {
std::atomic<long> blocks{0};
std::atomic<long> live{0}, peak{0};
void* note(void* p) {
  if (!p) return p;
  blocks.fetch_add(1, std::memory_order_relaxed);
  const long add = long(malloc_usable_size(p));
  const long now = live.fetch_add(add, std::memory_order_relaxed) + add;
  long pk = peak.load(std::memory_order_relaxed);
  while (now > pk && !peak.compare_exchange_weak(pk, now, std::memory_order_relaxed)) {
  }
  return p;
}
void forget(void* p) {
  if (p) live.fetch_sub(long(malloc_usable_size(p)), std::memory_order_relaxed);
}
}  // namespace heap
extern "C" {
void* malloc(size_t n) { return heap::note(__libc_malloc(n)); }
void free(void* p) {
  heap::forget(p);
  __libc_free(p);
}
void* calloc(size_t n, size_t m) { return heap::note(__libc_calloc(n, m)); }
void* realloc(void* p, size_t n) {
  heap::forget(p);
  void* q = __libc_realloc(p, n);
  if (q) return heap::note(q);
  if (p && n) heap::note(p);  // failed: p is still allocated
  return q;
}
void* memalign(size_t a, size_t n) { return heap::note(__libc_memalign(a, n)); }
void* aligned_alloc(size_t a, size_t n) { return heap::note(__libc_memalign(a, n)); }
int posix_memalign(void** out, size_t a, size_t n) {
  if (a < sizeof(void*) || (a & (a - 1)) != 0) return EINVAL;
  void* p = heap::note(__libc_memalign(a, n));
  if (!p && n) return ENOMEM;
  *out = p;
  return 0;
}
void* valloc(size_t n) { return heap::note(__libc_memalign(size_t(sysconf(_SC_PAGESIZE)), n)); }
}
#else
#define TORCHTPU_RUN_COUNTS_HEAP 0
#endif

namespace {

using torchtpu::jit::FloatTensor;
using torchtpu::jit::Mode;

struct Options {
  std::string model, data, reference, output, device = "auto", mode = "fused";
  std::string dtype;                ///< --dtype: the floating inputs converted to it ("": as given)
  std::vector<std::string> inputs;  ///< --input, once per model input, in order
  bool check = false;
  int bench = 0;
  int profile = 0;                  ///< --profile N: passes timed node by node (0: none)
  int torch_threads = 1;
};

[[noreturn]] void usage(const char* msg = nullptr) {
  if (msg) std::fprintf(stderr, "torchtpu-run: %s\n", msg);
  std::fprintf(stderr,
               "usage: torchtpu-run MODEL.pt|MODEL.pt2 [--input FILE.npy ... | --data FILE.csv] [--device auto|cpu|tpu|cuda|xla_cpu]\n"
               "                    [--mode debug|strict|fused] [--check] [--bench N] [--reference FILE.npy]\n"
               "                    [--output FILE.npy] [--torch-threads N] [--dtype float32|float16|bfloat16] [--profile N]\n"
               "  --input FILE.npy    an input tensor of any dtype (float32 images, int64 token ids, masks),\n"
               "                      passed to the model as is; once per model input, in order\n"
               "  --dtype DTYPE       convert the floating inputs to DTYPE first (.npy has no bfloat16: a model\n"
               "                      traced in bfloat16 takes its inputs' float32 values and --dtype bfloat16)\n"
               "  --data FILE.csv     labelled data: every column but the last is a pixel 0..16 (divided by 16),\n"
               "                      the last is the label; prints the accuracy\n"
               "  --check             compare with libtorch's forward on the same input (max abs / rel difference;\n"
               "                      TorchScript only: for a .pt2, compare with --reference)\n"
               "  --bench N           time N runs (after one warm-up) and print p50/p99, and one run's heap\n"
               "                      allocations and peak heap; with --check libtorch's latency too\n"
               "  --profile N         time every node over N runs (after one warm-up; cpu only) and print the\n"
               "                      nodes, slowest first, with their input shapes, and the time per node kind\n"
               "  --reference FILE    compare the output with a saved float32 or float64 .npy (e.g. libtorch's output)\n"
               "  --output FILE       write torchtpu's output as .npy (float32; a float16/bfloat16 output widened,\n"
               "                      which is exact)\n");
  std::exit(2);
}

/// The integer value of `flag`'s argument `text`, at least `min`; anything else (a word, a
/// trailing suffix, a value out of int's range, one below `min`) is a usage error: atoi read
/// "ten" as 0 and "-3" as -3, and --torch-threads 0 reached libtorch.
int parse_count(const std::string& flag, const std::string& text, int min) {
  int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < min)
    usage((flag + " N needs an integer N >= " + std::to_string(min) + ", got '" + text + "'").c_str());
  return v;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value after " + a).c_str());
      return argv[++i];
    };
    if (a == "--input") o.inputs.push_back(next());
    else if (a == "--data") o.data = next();
    else if (a == "--device") o.device = next();
    else if (a == "--mode") o.mode = next();
    else if (a == "--check") o.check = true;
    else if (a == "--bench") o.bench = parse_count(a, next(), 0);
    else if (a == "--profile") o.profile = parse_count(a, next(), 1);
    else if (a == "--reference") o.reference = next();
    else if (a == "--output") o.output = next();
    else if (a == "--torch-threads") o.torch_threads = parse_count(a, next(), 1);
    else if (a == "--dtype") o.dtype = next();
    else if (a == "-h" || a == "--help") usage();
    else if (!a.empty() && a[0] == '-') usage(("unknown option " + a).c_str());
    else if (o.model.empty()) o.model = a;
    else usage(("unexpected argument " + a).c_str());
  }
  if (o.model.empty()) usage("no model given");
  if (o.inputs.empty() == o.data.empty()) usage("give --input FILE.npy (once per model input) or --data FILE.csv");
  if (!o.dtype.empty() && o.dtype != "float32" && o.dtype != "float16" && o.dtype != "bfloat16")
    usage(("--dtype must be float32, float16 or bfloat16, got '" + o.dtype + "'").c_str());
  return o;
}

/// --profile's report: every node, slowest first (time, share, kind, input shapes, location),
/// then the time per node kind.
void print_profile(const std::vector<torchtpu::jit::Graph::NodeProfile>& nodes, int passes) {
  double total = 0;
  for (const auto& n : nodes) total += n.seconds;
  std::vector<size_t> order(nodes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return nodes[a].seconds > nodes[b].seconds; });
  std::printf("profile: %zu nodes, %.3f ms per forward (mean of %d)\n", nodes.size(), total * 1e3, passes);
  std::printf("%9s %6s  %-24s %s\n", "ms", "%", "kind", "inputs (location)");
  for (size_t k = 0; k < order.size(); ++k) {
    const auto& n = nodes[order[k]];
    std::printf("%9.3f %6.2f  %-24s %s (%s)\n", n.seconds * 1e3, 100 * n.seconds / total, n.kind.c_str(),
                n.inputs.c_str(), n.location.c_str());
  }
  std::map<std::string, std::pair<double, int>> kinds;
  for (const auto& n : nodes) {
    kinds[n.kind].first += n.seconds;
    ++kinds[n.kind].second;
  }
  std::vector<std::pair<std::string, std::pair<double, int>>> by(kinds.begin(), kinds.end());
  std::stable_sort(by.begin(), by.end(), [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  std::printf("per kind:\n%9s %6s %6s  %s\n", "ms", "%", "nodes", "kind");
  for (const auto& [kind, t] : by)
    std::printf("%9.3f %6.2f %6d  %s\n", t.first * 1e3, 100 * t.first / total, t.second, kind.c_str());
}

Mode parse_mode(const std::string& m) {
  if (m == "debug") return Mode::Debug;
  if (m == "strict") return Mode::Strict;
  if (m == "fused") return Mode::Fused;
  throw torchtpu::ValueError("--mode must be debug, strict or fused, got '" + m + "'");
}

/// The device kind the graph runs on: cpu (the run-time graph), or a PJRT kind (the whole
/// graph lowered to one StableHLO program). `auto` is cpu: PJRT devices are used only when
/// asked for (the emulator is never picked silently).
std::string pick_device(const std::string& d) {
  if (d == "auto" || d == "cpu") return "cpu";
  if (d == "tpu" || d == "cuda" || d == "xla_cpu") return d;
  throw torchtpu::ValueError("--device must be auto, cpu, tpu, cuda or xla_cpu, got '" + d + "'");
}

FloatTensor load_csv(const Options& o, std::vector<int64_t>& labels);

/// The model's inputs: each --input .npy as a tensor of its dtype, or the --data CSV's features
/// as one float32 [rows, features] tensor (its labels into `labels`).
std::vector<torchtpu::AnyTensor> load_inputs(const Options& o, std::vector<int64_t>& labels) {
  if (!o.inputs.empty()) {
    std::vector<torchtpu::AnyTensor> r;
    for (const std::string& path : o.inputs) {
      const torchtpu::NpyArray a = torchtpu::read_npy(path);
      const torchtpu::Dims shape(a.shape.begin(), a.shape.end());
      torchtpu::AnyTensor x = torchtpu::AnyTensor::dispatch(a.dtype, [&]<class T>(std::type_identity<T>) {
        return torchtpu::AnyTensor(torchtpu::from_data(a.values<T>().data(), shape));
      });
      if (!o.dtype.empty() && torchtpu::is_floating(x.dtype())) {
        const torchtpu::ScalarType want = o.dtype == "bfloat16"  ? torchtpu::ScalarType::BFloat16
                                          : o.dtype == "float16" ? torchtpu::ScalarType::Half
                                                                 : torchtpu::ScalarType::Float;
        x = torchtpu::ops::detail::to_dtype(x, want);
      }
      r.push_back(std::move(x));
    }
    return r;
  }
  return {torchtpu::AnyTensor(load_csv(o, labels))};
}

/// The --data CSV's features (pixels 0..16 scaled to [0, 1]) and labels.
FloatTensor load_csv(const Options& o, std::vector<int64_t>& labels) {
  const torchtpu::CsvTable t = torchtpu::read_csv(o.data);
  if (t.cols < 2) throw torchtpu::ValueError("--data " + o.data + ": needs feature columns and a label column");
  FloatTensor x = FloatTensor::empty(torchtpu::Dims{t.rows, t.cols - 1});
  float* p = x.data_ptr();
  for (int64_t r = 0; r < t.rows; ++r) {
    for (int64_t c = 0; c + 1 < t.cols; ++c) *p++ = float(t.at(r, c) / 16.0);
    labels.push_back(int64_t(t.at(r, t.cols - 1)));
  }
  return x;
}

std::vector<int64_t> argmax_rows(const FloatTensor& y) {
  std::vector<int64_t> r;
  const FloatTensor c = y.contiguous();
  if (c.dim() != 2) return r;
  const int64_t n = c.size(0), k = c.size(1);
  for (int64_t i = 0; i < n; ++i) {
    const float* row = c.data_ptr() + i * k;
    int64_t best = 0;
    for (int64_t j = 1; j < k; ++j)
      if (row[j] > row[best]) best = j;
    r.push_back(best);
  }
  return r;
}

struct Diff {
  double max_abs = 0, max_ref = 0;
  double rel() const { return max_ref > 0 ? max_abs / max_ref : max_abs; }
};

Diff compare(const FloatTensor& a, const float* ref, int64_t n) {
  Diff d;
  const FloatTensor c = a.contiguous();
  for (int64_t i = 0; i < n; ++i) {
    d.max_abs = std::max(d.max_abs, double(std::abs(c.data_ptr()[i] - ref[i])));
    d.max_ref = std::max(d.max_ref, double(std::abs(ref[i])));
  }
  return d;
}

/// User + system CPU time of this process, all threads (s).
double cpu_seconds() {
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  return double(r.ru_utime.tv_sec + r.ru_stime.tv_sec) + 1e-6 * double(r.ru_utime.tv_usec + r.ru_stime.tv_usec);
}

/// Per-run wall times (ms, sorted) of n calls of f, and the cores they kept busy on average
/// (process CPU time over wall time: 1.0 for one busy thread).
struct Timings {
  std::vector<double> ms;
  double cores = 0;
};

template <class F>
Timings time_runs(int n, const char* what, F&& f) {
  std::vector<double> ms;
  const double c0 = cpu_seconds();
  const auto start = std::chrono::steady_clock::now();
  auto last_report = start;
  for (int i = 0; i < n; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    const auto t1 = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    if (t1 - last_report > std::chrono::seconds(2)) {
      std::fprintf(stderr, "  %s: %d/%d runs\n", what, i + 1, n);
      last_report = t1;
    }
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::sort(ms.begin(), ms.end());
  return {ms, wall > 0 ? (cpu_seconds() - c0) / wall : 0.0};
}

/// Limits libtorch to n threads: `at::set_num_threads` bounds ATen's and oneDNN's OpenMP pool,
/// not OpenBLAS, which Debian's libtorch calls for matmul and linear layers with one thread per
/// core of its own (a 1024^3 matmul under set_num_threads(1) kept 2.0 cores busy here); so
/// OpenBLAS's own `openblas_set_num_threads` is called too when the process has it.
void set_torch_threads(int n) {
  at::set_num_threads(n);
  if (void* f = dlsym(RTLD_DEFAULT, "openblas_set_num_threads")) reinterpret_cast<void (*)(int)>(f)(n);
}

double pct(const std::vector<double>& s, double p) {
  if (s.empty()) return 0;
  size_t i = size_t(p * double(s.size() - 1) + 0.5);
  return s[std::min(i, s.size() - 1)];
}

/// The model torchtpu-run runs: a TorchScript module (jit::load, through libtorch) or a
/// torch.export program (jit::load_exported, without libtorch).
struct LoadedModel {
  std::optional<torchtpu::jit::Module> script;
#if TORCHTPU_RUN_PT2
  std::optional<torchtpu::jit::ExportedModule> exported;
#endif
  const torchtpu::jit::Graph& graph() const {
#if TORCHTPU_RUN_PT2
    if (exported) return exported->graph();
#endif
    return script->graph();
  }
  std::vector<torchtpu::jit::Value> forward(std::vector<torchtpu::jit::Value> in, Mode mode) const {
#if TORCHTPU_RUN_PT2
    if (exported) return exported->forward(std::move(in), mode);
#endif
    return script->forward(std::move(in), mode);
  }
  /// `forward` into `out` (its capacity reused: no heap allocation per call for the list).
  void forward(std::span<const torchtpu::jit::Value> in, std::vector<torchtpu::jit::Value>& out, Mode mode) const {
#if TORCHTPU_RUN_PT2
    if (exported) return exported->forward(in, out, mode);
#endif
    script->forward(in, out, mode);
  }
  bool was_frozen_on_load() const { return script && script->was_frozen_on_load(); }
  /// libtorch's forward (TorchScript only; `--check` is refused for a .pt2 before this).
  at::Tensor torch_forward(std::vector<c10::IValue> in) const { return script->torch_forward(std::move(in)); }
};

/// A `.pt2` path, or a zip with the torch.export layout, goes to jit::load_exported; anything
/// else to jit::load. **Errors:** theirs; ValueError for a .pt2 when torchtpu-run was built
/// without nlohmann/json.
LoadedModel load_model(const std::string& path) {
  LoadedModel m;
  const bool pt2_name = path.size() >= 4 && path.compare(path.size() - 4, 4, ".pt2") == 0;
#if TORCHTPU_RUN_PT2
  if (pt2_name || torchtpu::jit::is_exported_archive(path)) {
    m.exported = torchtpu::jit::load_exported(path);
    return m;
  }
#else
  if (pt2_name)
    throw torchtpu::ValueError("'" + path + "' is a torch.export program, and this torchtpu-run was built without "
                               "nlohmann/json (install nlohmann-json3-dev and rebuild)");
#endif
  m.script = torchtpu::jit::load(path);
  return m;
}

int run(const Options& o) {
  const Mode mode = parse_mode(o.mode);
  const std::string device = pick_device(o.device);
  set_torch_threads(o.torch_threads);

  const auto t_load = std::chrono::steady_clock::now();
  const LoadedModel m = load_model(o.model);
  if (o.check && !m.script)
    throw torchtpu::ValueError("--check runs libtorch's forward of a TorchScript model; '" + o.model +
                               "' is a torch.export program: compare with --reference FILE.npy (tools/export_pt2.py "
                               "writes <name>.output.npy)");
  const double load_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_load).count();
  std::printf("model: %s (%zu nodes, %zu run in %s mode; loaded in %.1f ms%s)\n", o.model.c_str(),
              m.graph().nodes().size(), m.graph().executed_nodes(mode), o.mode.c_str(), load_ms,
              m.was_frozen_on_load() ? ", frozen on load" : "");
  std::vector<int64_t> labels;
  const std::vector<torchtpu::AnyTensor> xs = load_inputs(o, labels);
  std::vector<torchtpu::jit::Value> xv(xs.begin(), xs.end());
  std::string in_text;
  for (const torchtpu::AnyTensor& x : xs)
    in_text += (in_text.empty() ? "" : ", ") + torchtpu::to_string(x.sizes()) + " " + std::string(torchtpu::dtype_name(x.dtype()));

  std::shared_ptr<torchtpu::jit::DeviceProgram> prog;
  if (device == "cpu") {
    std::printf("accelerator: cpu (run-time graph, %s mode)\n", o.mode.c_str());
  } else {
    auto client = torchtpu::pjrt::Client::get(device);  // DeviceUnavailable lists the places searched
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<torchtpu::ScalarType> dtypes;
    std::vector<torchtpu::Dims> shapes;
    for (const torchtpu::AnyTensor& x : xs) {
      dtypes.push_back(x.dtype());
      shapes.push_back(x.sizes());
    }
    prog = std::make_shared<torchtpu::jit::DeviceProgram>(m.graph(), dtypes, shapes, client);
    std::printf("accelerator: %s (%s; %s%s), whole graph compiled to one StableHLO program in %.1f ms\n",
                client->platform_name().c_str(), client->device_kind().c_str(), client->platform_version().c_str(),
                client->emulated() ? ", EMULATED" : "",
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("input: %s\n", in_text.c_str());
  // the first output (a tuple's or list's first tensor) as float32: a float16/bfloat16 one widened
  // (exact), a float64 one rounded
  torchtpu::ScalarType out_dtype = torchtpu::ScalarType::Float;
  auto first_float = [&out_dtype](const torchtpu::AnyTensor& t) -> FloatTensor {
    out_dtype = t.dtype();
    if (const FloatTensor* f = t.get_if<float>()) return *f;
    if (torchtpu::is_floating(t.dtype())) return torchtpu::ops::detail::to_dtype(t, torchtpu::ScalarType::Float).get<float>();
    throw torchtpu::TypeError("the model's first output is " + std::string(torchtpu::dtype_name(t.dtype())) +
                              "; torchtpu-run reads a floating output");
  };
  std::vector<torchtpu::jit::Value> out;  // kept from call to call: its capacity reused
  auto forward = [&]() -> FloatTensor {
    if (prog) return first_float(prog->run_any(xs).at(0));
    m.forward(xv, out, mode);
    if (out.empty()) throw torchtpu::TypeError("forward: the model returns nothing");
    if (out[0].kind() == torchtpu::jit::Value::Kind::TensorList && !out[0].anys().empty())
      return first_float(out[0].anys()[0]);
    return first_float(out[0].any("forward: model output"));
  };
  // libtorch's inputs: each input shared with libtorch (a copy, so its forward cannot alter ours)
  auto torch_inputs = [&] {
    std::vector<c10::IValue> r;
    for (const torchtpu::AnyTensor& x : xs)
      r.emplace_back(x.visit([](const auto& t) { return torchtpu::to_torch(t.contiguous(), torchtpu::CopyMode::always); }));
    return r;
  };

  const FloatTensor y = forward();
  std::printf("output: %s %s%s\n", torchtpu::to_string(y.sizes()).c_str(),
              std::string(torchtpu::dtype_name(out_dtype)).c_str(),
              out_dtype == torchtpu::ScalarType::Float ? "" : " (compared and written as float32)");
  const std::vector<int64_t> pred = argmax_rows(y);

  at::Tensor ty;
  if (o.check) {
    ty = m.torch_forward(torch_inputs()).contiguous();
    if (!ty.is_floating_point()) throw torchtpu::TypeError("--check: libtorch returned a non-floating output");
    ty = ty.to(at::kFloat).contiguous();
    std::vector<int64_t> ts(y.sizes().begin(), y.sizes().end());
    if (ty.sizes().vec() != ts)
      throw torchtpu::ShapeError("--check: libtorch's output has shape " + c10::str(ty.sizes()) +
                                 ", torchtpu's " + torchtpu::to_string(y.sizes()));
    const Diff d = compare(y, ty.data_ptr<float>(), ty.numel());
    std::printf("check vs libtorch: max abs diff %.3g, max rel diff %.3g (max|diff| / max|libtorch|)\n", d.max_abs,
                d.rel());
  }
  if (!o.reference.empty()) {
    const torchtpu::NpyArray r = torchtpu::read_npy(o.reference);
    if (r.numel() != y.numel()) throw torchtpu::ShapeError("--reference: element count differs from the output");
    std::vector<float> ref;  // a float64 reference (tools/export_pt2.py's output_f64.npy) as float32
    if (r.dtype == torchtpu::ScalarType::Double)
      for (double v : r.values<double>()) ref.push_back(float(v));
    const Diff d = compare(y, ref.empty() ? r.values<float>().data() : ref.data(), r.numel());
    std::printf("reference: max abs diff %.3g, max rel diff %.3g\n", d.max_abs, d.rel());
  }
  if (!o.output.empty()) {
    const FloatTensor c = y.contiguous();
    std::vector<int64_t> shape(c.sizes().begin(), c.sizes().end());
    torchtpu::write_npy<float>(o.output, shape, std::span<const float>(c.data_ptr(), size_t(c.numel())));
  }

  if (!labels.empty() && pred.size() == labels.size()) {
    int64_t ok = 0;
    for (size_t i = 0; i < pred.size(); ++i) ok += pred[i] == labels[i];
    std::printf("accuracy torchtpu: %.2f %% (%lld/%zu)\n", 100.0 * double(ok) / double(pred.size()), (long long)ok,
                pred.size());
    if (o.check) {
      const FloatTensor tyf = torchtpu::jit::detail::borrow_float(ty, "libtorch output");
      const std::vector<int64_t> tp = argmax_rows(tyf);
      int64_t tok = 0, same = 0;
      for (size_t i = 0; i < tp.size(); ++i) {
        tok += tp[i] == labels[i];
        same += tp[i] == pred[i];
      }
      std::printf("accuracy libtorch: %.2f %% (%lld/%zu)\n", 100.0 * double(tok) / double(tp.size()),
                  (long long)tok, tp.size());
      std::printf("predictions equal to libtorch: %lld/%zu%s\n", (long long)same, tp.size(),
                  same == int64_t(tp.size()) ? "" : "  MISMATCH");
    }
  } else if (!pred.empty()) {
    std::printf("predictions:");
    for (size_t i = 0; i < pred.size() && i < 20; ++i) std::printf(" %lld", (long long)pred[i]);
    std::printf("%s\n", pred.size() > 20 ? " ..." : "");
  }

  if (o.bench > 0) {
#if TORCHTPU_RUN_COUNTS_HEAP
    {  // one forward after the warm-up above: heap blocks allocated, heap peak above the start
      const long n0 = heap::blocks.load(), live0 = heap::live.load();
      heap::peak.store(live0);
      (void)forward();
      std::printf("heap per forward: %ld allocations, peak %.2f MiB above the level before it\n",
                  heap::blocks.load() - n0, double(heap::peak.load() - live0) / (1024.0 * 1024.0));
      // the two passes after it: the steady state. The graph's block pool takes the blocks of the
      // previous pass (core/storage.hpp), but this process still holds earlier results (the
      // checked output, and the last result until the next replaces it): the first two passes
      // allocate their result's blocks (data, storage record, reference count) anew
      long later[2];
      for (long& n : later) {
        const long b0 = heap::blocks.load();
        (void)forward();
        n = heap::blocks.load() - b0;
      }
      std::printf("heap per forward, the next two: %ld, %ld allocations\n", later[0], later[1]);
    }
#endif
    const Timings s = time_runs(o.bench, "torchtpu", [&] { (void)forward(); });
    std::printf("latency torchtpu (%s, %s): p50 %.3f ms, p99 %.3f ms over %d runs, %.2f cores busy\n",
                device.c_str(), prog ? "compiled" : o.mode.c_str(), pct(s.ms, 0.5), pct(s.ms, 0.99), o.bench, s.cores);
    if (o.check) {
      const std::vector<c10::IValue> tx = torch_inputs();
      (void)m.torch_forward(tx);
      const Timings ts = time_runs(o.bench, "libtorch", [&] { (void)m.torch_forward(tx); });
      std::printf("latency libtorch (cpu, %d thread%s): p50 %.3f ms, p99 %.3f ms over %d runs, %.2f cores busy\n",
                  o.torch_threads, o.torch_threads == 1 ? "" : "s", pct(ts.ms, 0.5), pct(ts.ms, 0.99), o.bench,
                  ts.cores);
    }
  }
  if (o.profile > 0) {
    if (prog) throw torchtpu::ValueError("--profile times the run-time graph's nodes: it needs --device cpu");
    print_profile(m.graph().profile(xv, o.profile, mode), o.profile);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  try {
    return run(o);
  } catch (const torchtpu::UnsupportedOperator& e) {
    std::fprintf(stderr, "torchtpu-run: unsupported operators: %s\n", e.what());
    return 3;
  } catch (const torchtpu::DeviceUnavailable& e) {
    std::fprintf(stderr, "torchtpu-run: device unavailable: %s\n", e.what());
    return 4;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "torchtpu-run: error: %s\n", e.what());
    return 1;
  }
}
