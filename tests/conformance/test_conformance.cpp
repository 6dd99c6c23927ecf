// tests/conformance/test_conformance.cpp — the op-conformance sweep: runs every case of the
// manifest that tests/conformance/make_cases.py wrote (torch's operands and results as .npy)
// through ops::call_by_name_all, on the cpu (--device=cpu) or on the PJRT device under test
// (--device=pjrt: the TPU emulator, or XLA's CPU plugin with TORCHTPU_TEST_BACKEND=xla_cpu;
// tests/test_backend.hpp), and compares with torch: the result's dtype, shape and values
// (bit for bit, NaN and -0.0 included, unless the case states a tolerance), or, where torch
// raised, that a torchtpu::Error is thrown. Cases whose op is not in ops::library_op_names()
// (or whose overload the library's schema does not take) are skipped and counted.
//
// Usage: test_conformance [--device=cpu|pjrt] [MANIFEST]
//   MANIFEST defaults to $TORCHTPU_CONFORMANCE_MANIFEST (set by tests/conformance/meson.build).
// Exit status: 0 all checked cases pass; 1 a mismatch (each printed with its manifest line) or
// nothing checked; 2 bad usage or an unreadable manifest; 77 (skipped) when the PJRT device
// cannot be opened.
#include <cmath>        // std::isnan, std::signbit, std::fabs
#include <cstdint>      // int64_t
#include <cstdlib>      // std::getenv, std::strtod, std::strtoll
#include <cstring>      // std::memcpy
#include <exception>    // std::exception
#include <fstream>      // std::ifstream
#include <iostream>     // std::cout, std::cerr
#include <map>          // std::map
#include <set>          // std::set
#include <sstream>      // std::istringstream, std::ostringstream
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include <torchtpu/device.hpp>     // Tensor, Device, Tensor::to(Device), the device runtime
#include <torchtpu/io/npy.hpp>     // read_npy
#include <torchtpu/ops/all.hpp>    // ops::call_by_name_all, ops::LibraryOps, ops::Arg

#include "../test_backend.hpp"  // test_device

namespace tt = torchtpu;

namespace {

/// A manifest line that cannot be read (a generator/runner mismatch: exit status 2).
struct BadManifest : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// One case of the manifest.
struct Case {
  std::string line;                 ///< as written, for messages
  std::string id, aten, overload;   ///< `cat.default.0001`, `aten::cat`, `default`
  bool device = false;              ///< dev=1: also on the PJRT device
  double rtol = 0, atol = 0;        ///< tolerance (0, 0: exact)
  std::vector<std::string> args;    ///< argument tokens
  std::string result;               ///< `out:FILE:DTYPE`, `outs:FILE:DTYPE;...` or `error:NAME`
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> r;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      r.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  r.push_back(cur);
  return r;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

int64_t to_int(const std::string& s) {
  size_t used = 0;
  const int64_t v = std::stoll(s, &used);
  if (used != s.size()) throw BadManifest("not an integer: '" + s + "'");
  return v;
}

double to_double(const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);  // also reads inf, -inf, nan
  if (s.empty() || *end != '\0') throw BadManifest("not a number: '" + s + "'");
  return v;
}

Case parse_case(const std::string& line) {
  Case c;
  c.line = line;
  std::istringstream in(line);
  std::vector<std::string> tok;
  for (std::string t; in >> t;) tok.push_back(t);
  if (tok.size() < 8 || !starts_with(tok[3], "dev=") || !starts_with(tok[4], "tol=") || !starts_with(tok[5], "args="))
    throw BadManifest("malformed case line");
  c.id = tok[0];
  c.aten = tok[1];
  c.overload = tok[2];
  c.device = tok[3] == "dev=1";
  const auto tol = split(tok[4].substr(4), ',');
  if (tol.size() != 2) throw BadManifest("malformed tol=");
  c.rtol = to_double(tol[0]);
  c.atol = to_double(tol[1]);
  const size_t n = static_cast<size_t>(to_int(tok[5].substr(5)));
  if (tok.size() != 6 + n + 2 || tok[6 + n] != "->") throw BadManifest("argument count does not match args=");
  c.args.assign(tok.begin() + 6, tok.begin() + 6 + static_cast<std::ptrdiff_t>(n));
  c.result = tok.back();
  return c;
}

tt::ScalarType dtype_of_name(const std::string& s) {
  for (int i = 0; i < 8; ++i)
    if (tt::dtype_name(static_cast<tt::ScalarType>(i)) == s) return static_cast<tt::ScalarType>(i);
  throw BadManifest("unknown dtype '" + s + "'");
}

/// A .npy file as a cpu tensor of `dtype` (bfloat16 arrays are stored as float32).
tt::AnyTensor load(const std::string& dir, const std::string& file, tt::ScalarType dtype) {
  const tt::NpyArray a = tt::read_npy(dir + "/" + file);
  const tt::Dims shape{std::span<const int64_t>(a.shape)};
  tt::AnyTensor raw = tt::AnyTensor::dispatch(a.dtype, [&]<class T>(std::type_identity<T>) -> tt::AnyTensor {
    tt::Tensor<T> t = tt::Tensor<T>::empty(shape);
    if (!a.data.empty()) std::memcpy(static_cast<void*>(t.data_ptr()), a.data.data(), a.data.size());
    return tt::AnyTensor(t);
  });
  if (a.dtype == dtype) return raw;
  if (dtype == tt::ScalarType::BFloat16 && a.dtype == tt::ScalarType::Float)
    return tt::AnyTensor(tt::Tensor<tt::bfloat16>(raw.get<float>().template to<tt::bfloat16>()));
  throw BadManifest(file + " holds " + std::string(tt::dtype_name(a.dtype)) + ", the manifest says " +
                    std::string(tt::dtype_name(dtype)));
}

/// How the cases run: on the cpu, or with every operand moved to `device` first.
struct Where {
  bool on_device = false;
  tt::Device device{};
};

/// `FILE:DTYPE:VIEW` as the operand: loaded, moved to the device, then viewed (so a device
/// operand is a real strided view of device memory).
tt::AnyTensor operand(const std::string& dir, const std::string& text, const Where& w) {
  const auto f = split(text, ':');
  if (f.size() != 3) throw BadManifest("malformed tensor '" + text + "'");
  tt::AnyTensor t = load(dir, f[0], dtype_of_name(f[1]));
  if (w.on_device) t = t.visit([&](const auto& x) -> tt::AnyTensor { return tt::AnyTensor(x.to(w.device)); });
  if (f[2] == "-") return t;
  tt::AnyTensor v;
  if (f[2] == "t") v = t.visit([](const auto& x) -> tt::AnyTensor { return tt::AnyTensor(x.transpose(-2, -1)); });
  else if (f[2] == "s")
    v = t.visit([](const auto& x) -> tt::AnyTensor { return tt::AnyTensor(x.slice(-1, 0, x.size(x.dim() - 1), 2)); });
  else throw BadManifest("unknown view '" + f[2] + "'");
  // the point of a view: an operand whose strides are not row-major (when its sizes allow)
  const auto& sz = v.sizes();
  const bool can = f[2] == "t" ? sz[sz.size() - 1] > 1 && sz[sz.size() - 2] > 1 : sz[sz.size() - 1] > 1;
  if (can && v.numel() > 0 && v.is_contiguous()) throw BadManifest("the view of '" + text + "' is contiguous");
  return v;
}

tt::ops::Arg parse_arg(const std::string& dir, const std::string& tok, const Where& w) {
  if (tok == "none") return tt::ops::Arg();
  const size_t colon = tok.find(':');
  if (colon == std::string::npos) throw BadManifest("malformed argument '" + tok + "'");
  const std::string kind = tok.substr(0, colon), v = tok.substr(colon + 1);
  if (kind == "b") return tt::ops::Arg(v == "1");
  if (kind == "i") return tt::ops::Arg(to_int(v));
  if (kind == "f") return tt::ops::Arg(to_double(v));
  if (kind == "s") return tt::ops::Arg(v);
  if (kind == "il") {
    std::vector<int64_t> l;
    if (!v.empty())
      for (const auto& x : split(v, ',')) l.push_back(to_int(x));
    return tt::ops::Arg(std::move(l));
  }
  if (kind == "fl") {
    std::vector<double> l;
    if (!v.empty())
      for (const auto& x : split(v, ',')) l.push_back(to_double(x));
    return tt::ops::Arg(std::move(l));
  }
  if (kind == "t") return tt::ops::Arg(operand(dir, v, w));
  if (kind == "tl") {
    std::vector<tt::AnyTensor> l;
    if (!v.empty())
      for (const auto& x : split(v, ';')) l.push_back(x == "none" ? tt::AnyTensor() : operand(dir, x, w));  // Tensor?[]
    return tt::ops::Arg(std::move(l));
  }
  throw BadManifest("unknown argument kind '" + kind + "'");
}

/// The dtype a case is counted under: its result's, or (error cases) its first tensor's.
std::string case_dtype(const Case& c) {
  if (starts_with(c.result, "out:")) return split(c.result, ':').back();
  if (starts_with(c.result, "outs:")) return split(split(c.result, ';')[0], ':').back();  // the first result's
  for (const auto& a : c.args) {
    if (starts_with(a, "t:") || (starts_with(a, "tl:") && a.size() > 3)) {
      const auto first = split(split(a.substr(a.find(':') + 1), ';')[0], ':');
      if (first.size() == 3) return first[1];
    }
  }
  return "-";
}

/// A library op as the runner calls it: its aten name and parsed schema.
struct LibOp {
  std::string aten;
  tt::ops::Schema schema;
};

/// The library's ops (ops::library_op_names, with each op's schema from ops::LibraryOps) by
/// aten name without overload: `aten::scatter` may have several.
std::map<std::string, std::vector<LibOp>> library() {
  std::map<std::string, tt::ops::Schema> schemas;
  tt::ops::LibraryOps::for_each([&]<class Op>(std::type_identity<Op>) {
    schemas.emplace(std::string(Op::aten), tt::ops::parse_schema(Op::schema));
  });
  std::map<std::string, std::vector<LibOp>> r;
  for (const std::string& n : tt::ops::library_op_names()) {
    const tt::ops::Schema& s = schemas.at(n);
    r[s.name].push_back(LibOp{n, s});
  }
  return r;
}

/// True when `schema` takes the case's argument kinds: a tensor (list) where it has a tensor
/// (list), a non-tensor elsewhere, and no more arguments than it has. Picks the overload
/// (`scatter.src` vs `scatter.value`) without reading values.
bool takes(const tt::ops::Schema& schema, const std::vector<std::string>& args) {
  if (args.size() > schema.args.size()) return false;
  for (size_t i = 0; i < args.size(); ++i) {
    const auto& t = schema.args[i].type;
    const bool tensor = t.base == tt::ops::ArgType::Base::Tensor;
    if (args[i] == "none") {
      if (!t.optional) return false;
      continue;
    }
    if (tensor != (starts_with(args[i], "t:") || starts_with(args[i], "tl:"))) return false;
    if (tensor && t.list != starts_with(args[i], "tl:")) return false;
  }
  return true;
}

/// Compares `got` (any device) with torch's `want` (cpu); empty when they agree, else why not.
std::string compare(const tt::AnyTensor& got_any, const tt::AnyTensor& want, const Case& c, const Where& w) {
  std::ostringstream why;
  if (got_any.dtype() != want.dtype())
    return "dtype " + std::string(tt::dtype_name(got_any.dtype())) + ", torch " + std::string(tt::dtype_name(want.dtype()));
  if (got_any.sizes() != want.sizes()) return "shape " + tt::to_string(got_any.sizes()) + ", torch " + tt::to_string(want.sizes());
  if (w.on_device && got_any.device() != w.device)
    return "the result is on " + got_any.device().str() + ", not " + w.device.str();
  const tt::AnyTensor got = got_any.visit([](const auto& x) -> tt::AnyTensor { return tt::AnyTensor(x.cpu().contiguous()); });
  int64_t bad = 0, first = -1;
  std::string first_got, first_want;
  const auto text = [](auto v) {
    std::ostringstream o;
    o.precision(17);
    o << v;
    return o.str();
  };
  const int64_t n = want.numel();
  if (tt::is_floating(want.dtype())) {
    const tt::Tensor<double> g = got.visit([](const auto& x) { return tt::Tensor<double>(x.template to<double>()); });
    const tt::Tensor<double> e = want.visit([](const auto& x) { return tt::Tensor<double>(x.template to<double>()); });
    const bool exact = c.rtol == 0 && c.atol == 0;
    for (int64_t i = 0; i < n; ++i) {
      const double a = g.data_ptr()[i], b = e.data_ptr()[i];
      bool ok;
      if (std::isnan(a) || std::isnan(b)) ok = std::isnan(a) && std::isnan(b);
      else if (exact) ok = a == b && std::signbit(a) == std::signbit(b);
      else ok = a == b || std::fabs(a - b) <= c.atol + c.rtol * std::fabs(b);
      if (!ok && bad++ == 0) first = i, first_got = text(a), first_want = text(b);
    }
  } else {
    const tt::Tensor<int64_t> g = got.visit([](const auto& x) { return tt::Tensor<int64_t>(x.template to<int64_t>()); });
    const tt::Tensor<int64_t> e = want.visit([](const auto& x) { return tt::Tensor<int64_t>(x.template to<int64_t>()); });
    // The TPU emulator stores elements as doubles (docs/devices.md, "The TPU emulator"): its
    // int64 values are exact up to 2^53 only, so there they compare as doubles.
    const bool as_double = w.on_device && ttest::on_emulator() && want.dtype() == tt::ScalarType::Int64;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t a = g.data_ptr()[i], b = e.data_ptr()[i];
      const bool ok = as_double ? static_cast<double>(a) == static_cast<double>(b) : a == b;
      if (!ok && bad++ == 0) first = i, first_got = text(a), first_want = text(b);
    }
  }
  if (bad == 0) return "";
  why << bad << " of " << n << " elements differ; first at flat index " << first << ": got " << first_got << ", torch "
      << first_want;
  return why.str();
}

/// Per-op counts of one run.
struct OpStats {
  int64_t results = 0, errors = 0;     ///< cases checked: values / expected errors
  std::set<std::string> dtypes;        ///< dtypes checked
};

}  // namespace

int main(int argc, char** argv) {
  std::string mode = "cpu", path;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (starts_with(a, "--device=")) mode = a.substr(9);
    else path = a;
  }
  if (path.empty()) {
    const char* e = std::getenv("TORCHTPU_CONFORMANCE_MANIFEST");
    if (e && *e) path = e;
  }
  if (path.empty() || (mode != "cpu" && mode != "pjrt")) {
    std::cerr << "usage: test_conformance [--device=cpu|pjrt] MANIFEST (or $TORCHTPU_CONFORMANCE_MANIFEST)\n";
    return 2;
  }
  std::ifstream in(path);
  if (!in) {
    std::cerr << "test_conformance: cannot read the manifest " << path << "\n";
    return 2;
  }
  const std::string dir = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/'));

  Where w;
  if (mode == "pjrt") {
    w.on_device = true;
    try {
      w.device = ttest::test_device();
      (void)tt::zeros<float>(tt::Dims{1}).to(w.device).cpu();
    } catch (const tt::DeviceUnavailable& e) {
      std::cout << "test_conformance: SKIPPED: no PJRT device (" << e.what() << ")\n";
      return 77;
    }
  }
  const std::string where = w.on_device ? w.device.str() : "cpu";

  const auto lib = library();
  std::map<std::string, OpStats> stats;                    // key: aten.overload
  std::map<std::string, int64_t> not_in_library, no_overload;
  std::vector<std::string> failures;
  int64_t lines = 0, cpu_only = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    ++lines;
    Case c;
    try {
      c = parse_case(line);
    } catch (const std::exception& e) {
      std::cerr << "test_conformance: " << path << ": " << e.what() << ":\n  " << line << "\n";
      return 2;
    }
    const std::string key = c.aten + "." + c.overload;
    const auto it = lib.find(c.aten);
    if (it == lib.end()) {
      ++not_in_library[c.aten];
      continue;
    }
    if (w.on_device && !c.device) {
      ++cpu_only;
      continue;
    }
    const LibOp* op = nullptr;
    for (const LibOp& l : it->second)
      if (takes(l.schema, c.args)) op = &l;
    if (!op) {
      ++no_overload[key];
      continue;
    }
    const bool expect_error = starts_with(c.result, "error:");
    std::string fail;
    try {
      std::vector<tt::ops::Arg> args;
      for (const auto& a : c.args) args.push_back(parse_arg(dir, a, w));
      std::vector<tt::AnyTensor> want;  // torch's results, in order
      if (!expect_error) {
        const bool several = starts_with(c.result, "outs:");
        if (!several && !starts_with(c.result, "out:")) throw BadManifest("malformed result '" + c.result + "'");
        for (const auto& one : split(c.result.substr(several ? 5 : 4), ';')) {
          const auto r = split(one, ':');
          if (r.size() != 2) throw BadManifest("malformed result '" + c.result + "'");
          want.push_back(load(dir, r[0], dtype_of_name(r[1])));
        }
      }
      try {
        const std::vector<tt::AnyTensor> got = tt::ops::call_by_name_all(op->aten, args);
        if (expect_error) {
          // on a device, an error may surface only when the result is read
          const tt::AnyTensor host = got.at(0).visit([](const auto& x) -> tt::AnyTensor { return tt::AnyTensor(x.cpu()); });
          fail = "torch raised " + c.result.substr(6) + ", torchtpu returned a " + tt::to_string(host.sizes()) + " " +
                 std::string(tt::dtype_name(host.dtype())) + " tensor";
        } else if (got.size() != want.size()) {
          fail = std::to_string(got.size()) + " results, torch " + std::to_string(want.size());
        } else {
          for (size_t k = 0; k < got.size() && fail.empty(); ++k) {
            fail = compare(got[k], want[k], c, w);
            if (!fail.empty() && got.size() > 1) fail = "result " + std::to_string(k) + ": " + fail;
          }
        }
      } catch (const tt::Error& e) {
        if (!expect_error) fail = std::string("torchtpu threw: ") + e.what();
      }
    } catch (const BadManifest& e) {
      std::cerr << "test_conformance: " << path << ": " << e.what() << ":\n  " << line << "\n";
      return 2;
    } catch (const std::exception& e) {  // not a torchtpu::Error: always a failure
      fail = std::string("threw a non-torchtpu exception: ") + e.what();
    }
    if (!fail.empty()) {
      failures.push_back("MISMATCH on " + where + ": " + fail + "\n  " + line);
      continue;
    }
    OpStats& s = stats[key];
    (expect_error ? s.errors : s.results) += 1;
    if (const std::string d = case_dtype(c); d != "-") s.dtypes.insert(d);  // "-": an empty tensor list
  }

  std::cout << "op-conformance sweep on " << where << " (" << path << ", " << lines << " cases)\n";
  int64_t combos = 0, checked = 0;
  for (const auto& [key, s] : stats) {
    std::string ds;
    for (const auto& d : s.dtypes) ds += (ds.empty() ? "" : " ") + d;
    std::cout << "  " << key << ": " << s.results << " results, " << s.errors << " expected errors; " << s.dtypes.size()
              << " dtypes (" << ds << ")\n";
    combos += static_cast<int64_t>(s.dtypes.size());
    checked += s.results + s.errors;
  }
  for (const auto& [name, n] : not_in_library) std::cout << "  skipped, not in the library: " << name << " (" << n << " cases)\n";
  for (const auto& [key, n] : no_overload)
    std::cout << "  skipped, the library's schema does not take this overload: " << key << " (" << n << " cases)\n";
  if (w.on_device) std::cout << "  cpu-only cases (dev=0) not run on the device: " << cpu_only << "\n";
  std::cout << "(op, dtype, device) combinations checked: " << combos << " on " << where << "; cases passed: " << checked
            << "; mismatches: " << failures.size() << "\n";
  for (const auto& f : failures) std::cout << f << "\n";
  if (!failures.empty()) return 1;
  if (checked == 0) {
    std::cout << "test_conformance: no case was checked\n";
    return 1;
  }
  return 0;
}
