// tests/fuzz/fuzz_jit_graph.cpp — libFuzzer harness for the TorchScript importer's graph mapping
// (torchtpu/jit/graph.hpp, registry.hpp, builtin_ops.hpp, kernels.hpp), without libtorch.
//
// jit::load (load.hpp) turns a torch::jit::Graph into a jit::Graph through add_input /
// add_constant / add_node / add_unsupported / set_outputs / finalize; that mapping is the only
// part that needs libtorch. This harness drives the same calls from a small op program decoded
// from the fuzz bytes: graph inputs of small shapes, constants of every Value kind (None, bool,
// ints incl. negative dims and int64 extremes, doubles incl. NaN/inf, strings, int/float lists,
// small tensors, tensor lists), nodes of every registered kind plus unknown and control-flow
// kinds with any arity and output count, input references that are recent, old, dangling (as
// load.hpp maps them: a None constant) or not a slot at all (raw, out-of-range or forward/self
// references, which add_node must refuse), then finalize and run in all three modes.
//
// Contract (docs/errors.md, docs/jit.md): every input either runs or throws a torchtpu Error
// (UnsupportedOperator from finalize, ValueError from the builder, the kernel's error type
// prefixed with the node from run). AllocationError (a std::bad_alloc) is not reachable: run
// rethrows it as Error. Anything else — another exception, a crash, a sanitizer report — is a
// bug. Oracle: when no node writes in place, Strict and Debug give the same values as Fused
// (activation fusion must not change a result; NaN equals NaN), and a second Fused run gives
// the same values as the first (the graph's constants are not altered by running it).
#include <cmath>    // std::isnan, INFINITY, NAN
#include <cstddef>  // size_t
#include <cstdint>  // uint8_t, int64_t
#include <limits>   // std::numeric_limits
#include <string>   // std::string
#include <vector>   // std::vector

// FuzzedDataProvider (clang's libFuzzer headers); the g++ replay build (tests/fuzz/meson.build)
// names the file, since clang's include directory would shadow g++'s own headers.
#ifdef TORCHTPU_FUZZED_DATA_PROVIDER
#include TORCHTPU_FUZZED_DATA_PROVIDER
#else
#include <fuzzer/FuzzedDataProvider.h>
#endif

#include <torchtpu/core/factories.hpp>  // FloatTensor::empty via Tensor
#include <torchtpu/jit/graph.hpp>       // Graph, registry, Value, Mode

namespace {

using namespace torchtpu;
using jit::FloatTensor;
using jit::Value;

int64_t fuzz_int(FuzzedDataProvider& fdp) {
  // Extremes are chosen so that no product of them is a mid-size allocation: as sizes they
  // either overflow or exceed PTRDIFF_MAX (checked before malloc), never allocate gigabytes.
  static const int64_t extremes[] = {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                                     std::numeric_limits<int64_t>::min() + 1, -9, 9, 64, -64};
  switch (fdp.ConsumeIntegralInRange<int>(0, 9)) {
    case 0: return extremes[fdp.ConsumeIntegralInRange<size_t>(0, std::size(extremes) - 1)];
    case 1: return fdp.ConsumeIntegralInRange<int64_t>(-10, 16);
    default: return fdp.ConsumeIntegralInRange<int64_t>(-2, 4);
  }
}

double fuzz_double(FuzzedDataProvider& fdp) {
  static const double special[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e-7, 0.5, 1.0, -1.0, 6.0, 1e30};
  if (fdp.ConsumeBool()) return special[fdp.ConsumeIntegralInRange<size_t>(0, std::size(special) - 1)];
  return double(fdp.ConsumeIntegralInRange<int>(-40, 40)) / 8.0;
}

Dims fuzz_shape(FuzzedDataProvider& fdp) {
  Dims d;
  const int rank = fdp.ConsumeIntegralInRange<int>(0, 4);
  for (int i = 0; i < rank; ++i) d.push_back(fdp.ConsumeIntegralInRange<int64_t>(0, 4));
  return d;
}

FloatTensor fuzz_tensor(FuzzedDataProvider& fdp) {
  FloatTensor t = FloatTensor::empty(fuzz_shape(fdp));
  const int seed = fdp.ConsumeIntegralInRange<int>(0, 7);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_ptr()[i] = float((i * 5 + seed) % 11 - 5) * 0.25f;
  if (t.numel() > 0 && seed == 7) t.data_ptr()[0] = NAN;
  return t;
}

Value fuzz_constant(FuzzedDataProvider& fdp) {
  static const char* const strings[] = {"none", "tanh", "trunc", "floor", "same", "valid", "cpu", "", "tanhh"};
  switch (fdp.ConsumeIntegralInRange<int>(0, 9)) {
    case 0: return Value();
    case 1: return Value(fdp.ConsumeBool());
    case 2: case 3: return Value(fuzz_int(fdp));
    case 4: return Value(fuzz_double(fdp));
    case 5: return Value(std::string(strings[fdp.ConsumeIntegralInRange<size_t>(0, std::size(strings) - 1)]));
    case 6: {
      std::vector<int64_t> l(fdp.ConsumeIntegralInRange<size_t>(0, 9));  // up to 9: over rank 8
      for (auto& x : l) x = fuzz_int(fdp);
      return Value(std::move(l));
    }
    case 7: {
      std::vector<double> l(fdp.ConsumeIntegralInRange<size_t>(0, 4));
      for (auto& x : l) x = fuzz_double(fdp);
      return Value(std::move(l));
    }
    case 8: return Value(fuzz_tensor(fdp));
    default: {
      std::vector<FloatTensor> l(fdp.ConsumeIntegralInRange<size_t>(0, 3));
      for (auto& x : l) x = fuzz_tensor(fdp);
      return Value(std::move(l));
    }
  }
}

/// Registered kinds (sorted, so a byte means the same kind in every run) plus kinds the
/// registry lacks and the control-flow / module-state kinds load.hpp reports as unsupported.
const std::vector<std::string>& kinds() {
  static const std::vector<std::string> k = [] {
    std::vector<std::string> r = jit::registry().names();
    for (const char* u : {"aten::lstm", "aten::bernoulli", "mylib::fancy", "", "aten::", "prim::Constant"})
      r.push_back(u);
    return r;
  }();
  return k;
}
const char* const unsupported_kinds[] = {"prim::If", "prim::Loop", "prim::GetAttr", "prim::CallMethod",
                                         "prim::CallFunction"};

/// Bit-exact comparison of run results (NaN equals NaN; kinds, dtypes and shapes must match).
bool same(const std::vector<Value>& a, const std::vector<Value>& b) {
  if (a.size() != b.size()) return false;
  auto same_tensor = [](const torchtpu::AnyTensor& ax, const torchtpu::AnyTensor& ay) {
    // a list may hold None (prim::ListConstruct of a Tensor?[] argument such as aten::index's)
    if (ax.defined() != ay.defined()) return false;
    if (!ax.defined()) return true;
    if (ax.dtype() != ay.dtype() || !(ax.sizes() == ay.sizes())) return false;
    return ax.visit([&]<class T>(const torchtpu::Tensor<T>& x) {
      const torchtpu::Tensor<T>& y = ay.get<T>();
      // A dim broadcast (stride 0) in both repeats its first entry: compare that entry only, so
      // a valid expand to 2^62 elements is compared without copying it.
      torchtpu::Tensor<T> vx = x, vy = y;
      for (int d = 0; d < x.dim(); ++d)
        if (vx.stride(d) == 0 && vy.stride(d) == 0 && vx.size(d) > 1) {
          vx = vx.narrow(d, 0, 1);
          vy = vy.narrow(d, 0, 1);
        }
      const torchtpu::Tensor<T> cx = vx.contiguous(), cy = vy.contiguous();
      for (int64_t i = 0; i < cx.numel(); ++i) {
        const double p = static_cast<double>(torchtpu::convert<double>(cx.data_ptr()[i]));
        const double q = static_cast<double>(torchtpu::convert<double>(cy.data_ptr()[i]));
        if (!(p == q || (std::isnan(p) && std::isnan(q)))) return false;
      }
      return true;
    });
  };
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].kind() != b[i].kind()) return false;
    if (a[i].is_tensor() && !same_tensor(a[i].any(), b[i].any())) return false;
    if (a[i].kind() == Value::Kind::TensorList) {
      const auto& la = a[i].anys();
      const auto& lb = b[i].anys();
      if (la.size() != lb.size()) return false;
      for (size_t j = 0; j < la.size(); ++j)
        if (!same_tensor(la[j], lb[j])) return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  jit::Graph g;
  std::vector<int> slots;  // every slot added so far, in order
  std::vector<Dims> input_shapes;
  bool in_place = false;
  try {
    const int n_inputs = fdp.ConsumeIntegralInRange<int>(0, 3);
    for (int i = 0; i < n_inputs; ++i) {
      slots.push_back(g.add_input("x" + std::to_string(i)));
      input_shapes.push_back(fuzz_shape(fdp));
    }
    const int n_steps = fdp.ConsumeIntegralInRange<int>(0, 24);
    for (int step = 0; step < n_steps && fdp.remaining_bytes() > 0; ++step) {
      const std::string loc = "node " + std::to_string(step);
      const int what = fdp.ConsumeIntegralInRange<int>(0, 15);
      if (what < 5) {  // prim::Constant
        slots.push_back(g.add_constant(fuzz_constant(fdp)));
        continue;
      }
      if (what == 5) {  // control flow / module state, mapped as load.hpp does
        const char* k = unsupported_kinds[fdp.ConsumeIntegralInRange<size_t>(0, std::size(unsupported_kinds) - 1)];
        g.add_unsupported(k, loc, fdp.ConsumeBool() ? "data-dependent control flow" : "");
        for (int o = fdp.ConsumeIntegralInRange<int>(0, 2); o > 0; --o) slots.push_back(g.add_constant(Value()));
        continue;
      }
      const auto& ks = kinds();
      const std::string& kind = ks[fdp.ConsumeIntegralInRange<size_t>(0, ks.size() - 1)];
      const auto op = jit::registry().find(kind);
      in_place = in_place || (op && op->in_place);
      std::vector<int> ins;
      const int arity = fdp.ConsumeIntegralInRange<int>(0, 12);
      for (int a = 0; a < arity; ++a) {
        const int ref = fdp.ConsumeIntegralInRange<int>(0, 15);
        if (slots.empty() || ref == 15) {
          ins.push_back(g.add_constant(Value()));  // a dangling reference, as load.hpp maps it
        } else if (ref == 14) {
          ins.push_back(fdp.ConsumeIntegralInRange<int>(-2, int(slots.size()) + 3));  // raw: maybe no slot
        } else if (ref < 10) {  // recent values
          ins.push_back(slots[slots.size() - 1 - std::min<size_t>(size_t(ref % 3), slots.size() - 1)]);
        } else {
          ins.push_back(slots[fdp.ConsumeIntegralInRange<size_t>(0, slots.size() - 1)]);
        }
      }
      const int n_out = fdp.ConsumeIntegralInRange<int>(0, 9) == 0 ? fdp.ConsumeIntegralInRange<int>(-1, 3) : 1;
      for (int s : g.add_node(kind, std::move(ins), n_out, loc)) slots.push_back(s);
    }
    std::vector<int> outs;
    for (int o = fdp.ConsumeIntegralInRange<int>(0, 3); o > 0 && !slots.empty(); --o)
      outs.push_back(fdp.ConsumeIntegralInRange<int>(0, 19) == 0
                         ? fdp.ConsumeIntegralInRange<int>(-1, int(slots.size()))  // raw: maybe no slot
                         : slots[slots.size() - 1 - fdp.ConsumeIntegralInRange<size_t>(0, std::min<size_t>(3, slots.size() - 1))]);
    g.set_outputs(std::move(outs));
    g.finalize();
  } catch (const Error&) {
    return 0;  // refused before anything runs
  }

  auto make_inputs = [&] {
    std::vector<Value> in;
    for (const Dims& d : input_shapes) {
      FloatTensor t = FloatTensor::empty(d);
      for (int64_t i = 0; i < t.numel(); ++i) t.data_ptr()[i] = float(i % 7 - 3) * 0.5f;
      in.push_back(Value(t));
    }
    return in;
  };
  std::vector<Value> results[4];
  bool ok[4] = {};
  const jit::Mode modes[4] = {jit::Mode::Fused, jit::Mode::Strict, jit::Mode::Debug, jit::Mode::Fused};
  for (int m = 0; m < 4; ++m) {
    try {
      results[m] = g.run(make_inputs(), modes[m]);
      ok[m] = true;
    } catch (const Error&) {
    }
  }
  if (!in_place) {
    for (int m = 1; m < 4; ++m) {
      if (ok[m] != ok[0]) __builtin_trap();            // one mode ran, another threw
      if (ok[m] && !same(results[0], results[m])) __builtin_trap();  // fusion changed a value
    }
  }
  return 0;
}
