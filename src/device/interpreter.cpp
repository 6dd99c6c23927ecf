// src/device/interpreter.cpp — executes a parsed StableHLO program on the host with TPU
// numerics (bf16 operands for DEFAULT-precision f32 dot/convolution, f32 accumulation).
#include <algorithm>  // std::fill, std::min, std::copy
#include <cstddef>    // std::ptrdiff_t
#include <cmath>      // std::exp, std::tanh, ...
#include <cstring>    // std::memcpy
#include <cstdlib>    // std::getenv, std::atoi
#include <functional> // std::function
#include <set>        // std::set
#include <limits>     // std::numeric_limits
#include <mutex>      // std::mutex, std::lock_guard
#include <string>     // std::string
#include <unordered_map>  // std::unordered_map
#include <vector>     // std::vector

#include "emulator.hpp"                  // Program, Tensor, EmuError
#include "fusion.hpp"                    // Schedule, make_schedule, run_region, fusion_enabled
#include "kernels.hpp"                   // shared helpers, run_dot_general, run_convolution
#include "torchtpu/core/bfloat16.hpp"    // bfloat16 rounding
#include "torchtpu/core/half.hpp"        // half rounding

namespace torchtpu::emulator {

const char* et_name(ET t) {
  static const char* const kNames[] = {"i1", "i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64", "f16", "bf16", "f32", "f64"};
  return kNames[static_cast<int>(t)];
}
bool et_is_float(ET t) { return t == ET::F16 || t == ET::BF16 || t == ET::F32 || t == ET::F64; }
bool et_is_unsigned(ET t) { return t == ET::PRED || t == ET::U8 || t == ET::U16 || t == ET::U32 || t == ET::U64; }
int et_bytes(ET t) {
  switch (t) {
    case ET::PRED: case ET::S8: case ET::U8: return 1;
    case ET::S16: case ET::U16: case ET::F16: case ET::BF16: return 2;
    case ET::S32: case ET::U32: case ET::F32: return 4;
    default: return 8;
  }
}

namespace {
int64_t to_i64(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
  if (v <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}
double wrap_int(ET t, int64_t x) {
  switch (t) {
    case ET::PRED: return x != 0;
    case ET::S8: return static_cast<int8_t>(x);
    case ET::S16: return static_cast<int16_t>(x);
    case ET::S32: return static_cast<int32_t>(x);
    case ET::U8: return static_cast<uint8_t>(x);
    case ET::U16: return static_cast<uint16_t>(x);
    case ET::U32: return static_cast<uint32_t>(x);
    case ET::U64: return static_cast<double>(static_cast<uint64_t>(x));
    default: return static_cast<double>(x);
  }
}
}  // namespace

double et_round(ET t, double v) {
  switch (t) {
    case ET::F64: return v;
    case ET::F32: return static_cast<float>(v);
    case ET::BF16: return static_cast<float>(bfloat16(static_cast<float>(v)));
    case ET::F16: return static_cast<float>(half(static_cast<float>(v)));
    case ET::PRED: return v != 0 ? 1.0 : 0.0;
    default: return wrap_int(t, to_i64(v));
  }
}

std::string TensorType::str() const {
  std::string s = "tensor<";
  for (int64_t d : dims) s += std::to_string(d) + "x";
  return s + et_name(et) + ">";
}

namespace detail {

[[noreturn]] void op_fail(const Op& op, const std::string& msg, int code) {
  throw EmuError(code, "TPU emulator: line " + std::to_string(op.line) + ": " + op.name + ": " + msg);
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

/// dst[i] = src[offset + sum(idx_k * strides_k)] over the row-major index space `dims`.
void gather_strided(const double* src, int64_t offset, const std::vector<int64_t>& dims,
                    const std::vector<int64_t>& strides, double* dst) {
  const size_t r = dims.size();
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  if (total == 0) return;
  if (r == 0) { dst[0] = src[offset]; return; }
  std::vector<int64_t> idx(r, 0);
  const int64_t inner = dims[r - 1], istride = strides[r - 1];
  int64_t base = offset;
  for (int64_t out = 0; out < total; out += inner) {
    const double* s = src + base;
    if (istride == 1) std::memcpy(dst + out, s, static_cast<size_t>(inner) * sizeof(double));
    else for (int64_t j = 0; j < inner; ++j) dst[out + j] = s[j * istride];
    // odometer over the outer axes
    for (size_t a = r - 1; a-- > 0;) {
      base += strides[a];
      if (++idx[a] < dims[a]) break;
      base -= strides[a] * dims[a];
      idx[a] = 0;
    }
  }
}

std::vector<int64_t> ints(const Op& op, const char* key, bool required) {
  auto it = op.attrs.find(key);
  if (it == op.attrs.end()) {
    if (required) op_fail(op, std::string("missing attribute '") + key + "'");
    return {};
  }
  const Attr& a = it->second;
  std::vector<int64_t> v;
  std::function<void(const Attr&)> flat = [&](const Attr& x) {
    if (x.kind == Attr::List) for (const auto& y : x.items) flat(y);
    else v.push_back(x.i);
  };
  if (a.kind == Attr::List) {
    flat(a);  // nested lists ([[lo, hi], ...]) flatten row-major
  } else if (a.kind == Attr::Dense) {  // dense<[...]> : tensor<Nxi64>
    for (const auto& x : a.items) flat(x);
    if (a.type.numel() != static_cast<int64_t>(v.size())) {  // splat
      const int64_t s = v.empty() ? 0 : v[0];
      v.assign(static_cast<size_t>(a.type.numel()), s);
    }
  } else if (a.kind == Attr::Int || a.kind == Attr::Bool) {
    v.push_back(a.i);
  } else {
    op_fail(op, std::string("attribute '") + key + "' is not a list of integers");
  }
  return v;
}
int64_t int_attr(const Op& op, const char* key, int64_t dflt) {
  auto it = op.attrs.find(key);
  if (it == op.attrs.end()) return dflt;
  return it->second.i;
}

namespace {
/// Freed element buffers of at least kPoolMinElems, kept for reuse: a fresh buffer that large is
/// a new mapping from the kernel, so every execution would otherwise pay a page fault per 4 KiB
/// written (and the unmapping) for each result, which cost more than the ops themselves.
constexpr size_t kPoolMinElems = size_t{1} << 20;   // 8 MiB of doubles
constexpr size_t kPoolMaxBytes = size_t{512} << 20;  // kept at most, in all
struct BufferPool {
  std::mutex mu;
  std::vector<std::vector<double>> free;  // oldest first
  size_t bytes = 0;
};
BufferPool& pool() {
  static BufferPool* p = new BufferPool;  // never destroyed: tensors may be freed during exit
  return *p;
}
}  // namespace

std::vector<double> take_buffer(size_t n, bool zero) {
  if (n >= kPoolMinElems) {
    BufferPool& p = pool();
    std::vector<double> v;
    {
      std::lock_guard<std::mutex> lock(p.mu);
      for (size_t i = p.free.size(); i-- > 0;)
        if (p.free[i].size() == n) {
          v = std::move(p.free[i]);
          p.free.erase(p.free.begin() + static_cast<std::ptrdiff_t>(i));
          p.bytes -= n * sizeof(double);
          break;
        }
    }
    if (!v.empty()) {
      if (zero) std::fill(v.begin(), v.end(), 0.0);
      return v;
    }
  }
  return std::vector<double>(n);
}

void give_buffer(std::vector<double>&& v) {
  const size_t bytes = v.size() * sizeof(double);
  if (v.size() < kPoolMinElems || bytes > kPoolMaxBytes) return;
  std::vector<double> dropped;  // freed outside the lock
  BufferPool& p = pool();
  std::lock_guard<std::mutex> lock(p.mu);
  while (p.bytes + bytes > kPoolMaxBytes) {
    p.bytes -= p.free.front().size() * sizeof(double);
    dropped = std::move(p.free.front());
    p.free.erase(p.free.begin());
  }
  p.bytes += bytes;
  p.free.push_back(std::move(v));
}

TensorPtr share(Tensor&& t) {
  return std::shared_ptr<const Tensor>(new Tensor(std::move(t)), [](Tensor* p) {
    give_buffer(std::move(p->data));
    delete p;
  });
}

Tensor make(const TensorType& t) {
  Tensor r;
  r.type = t;
  r.data = take_buffer(static_cast<size_t>(t.numel()), true);
  return r;
}

Tensor transpose_raw(const Tensor& x, const std::vector<int64_t>& perm) {
  const auto xs = strides_of(x.type.dims);
  std::vector<int64_t> st, dims;
  for (int64_t p : perm) {
    st.push_back(xs[static_cast<size_t>(p)]);
    dims.push_back(x.type.dims[static_cast<size_t>(p)]);
  }
  Tensor r = make({x.type.et, dims});
  gather_strided(x.data.data(), 0, dims, st, r.data.data());
  return r;
}


}  // namespace detail

namespace {

using namespace detail;

// ---------------------------------------------------------------------------- elementwise
using UnaryFn = double (*)(double);

/// The host function of a float unary op, or null for ops handled separately.
UnaryFn unary_fn(const std::string& n) {
  static const std::unordered_map<std::string, UnaryFn> kFns = {
      {"negate", [](double x) { return -x; }},
      {"abs", [](double x) { return std::fabs(x); }},
      {"sign", [](double x) { return std::isnan(x) ? x : static_cast<double>((x > 0) - (x < 0)); }},
      {"exponential", [](double x) { return std::exp(x); }},
      {"exponential_minus_one", [](double x) { return std::expm1(x); }},
      {"log", [](double x) { return std::log(x); }},
      {"log_plus_one", [](double x) { return std::log1p(x); }},
      {"sqrt", [](double x) { return std::sqrt(x); }},
      {"rsqrt", [](double x) { return 1.0 / std::sqrt(x); }},
      {"cbrt", [](double x) { return std::cbrt(x); }},
      {"tanh", [](double x) { return std::tanh(x); }},
      {"logistic", [](double x) { return 1.0 / (1.0 + std::exp(-x)); }},
      {"sine", [](double x) { return std::sin(x); }},
      {"cosine", [](double x) { return std::cos(x); }},
      {"tan", [](double x) { return std::tan(x); }},
      {"floor", [](double x) { return std::floor(x); }},
      {"ceil", [](double x) { return std::ceil(x); }},
      {"round_nearest_even", [](double x) { return std::nearbyint(x); }},
      {"round_nearest_afz", [](double x) { return std::round(x); }},
      {"erf", [](double x) { return std::erf(x); }},
      {"is_finite", [](double x) { return std::isfinite(x) ? 1.0 : 0.0; }},
  };
  auto it = kFns.find(n);
  return it == kFns.end() ? nullptr : it->second;
}

bool float_only_unary(const std::string& n) {
  return n != "negate" && n != "abs" && n != "sign" && n != "not";
}

}  // namespace

// is_elementwise, plan_elementwise and ew_run are shared with the fusion planner (kernels.hpp).
namespace detail {

bool is_elementwise(const std::string& name) {
  static const std::set<std::string> kOps = {
      "add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "power", "atan2", "and", "or",
      "xor", "not", "negate", "abs", "sign", "exponential", "exponential_minus_one", "log", "log_plus_one", "sqrt",
      "rsqrt", "cbrt", "tanh", "logistic", "sine", "cosine", "tan", "floor", "ceil", "round_nearest_even",
      "round_nearest_afz", "erf", "is_finite", "compare", "select", "clamp", "convert"};
  return kOps.count(name.substr(name.find('.') + 1)) > 0;
}

EwPlan plan_elementwise(const Op& op, const std::vector<const TensorType*>& in, const TensorType& out) {
  const std::string n = op.name.substr(op.name.find('.') + 1);
  EwPlan p;
  p.out_et = out.et;
  p.scalar.assign(in.size(), false);
  auto need = [&](size_t count) {
    if (in.size() != count) op_fail(op, "expects " + std::to_string(count) + " operands, got " + std::to_string(in.size()));
  };
  auto same = [&](const TensorType& a, const TensorType& b) {
    if (!(a == b)) op_fail(op, "operand types " + a.str() + " and " + b.str() + " differ");
  };
  const TensorType* shape = nullptr;  // the operand whose shape the result has
  ET want = out.et;
  if (n == "compare") {
    need(2);
    same(*in[0], *in[1]);
    auto it = op.attrs.find("comparison_direction");
    if (it == op.attrs.end()) op_fail(op, "missing comparison_direction");
    static const char* const kDirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
    p.code = -1;
    for (int d = 0; d < 6; ++d)
      if (it->second.s == kDirs[d]) p.code = d;
    if (p.code < 0) op_fail(op, "unknown comparison direction '" + it->second.s + "'");
    p.kind = EwPlan::Compare;
    shape = in[0];
    want = ET::PRED;
  } else if (n == "select") {
    need(3);
    same(*in[1], *in[2]);
    if (in[0]->et != ET::PRED || (!in[0]->dims.empty() && in[0]->dims != in[1]->dims))
      op_fail(op, "predicate " + in[0]->str() + " does not fit " + in[1]->str());
    p.kind = EwPlan::Select;
    p.scalar[0] = in[0]->dims.empty() && !in[1]->dims.empty();
    shape = in[1];
    want = in[1]->et;
  } else if (n == "clamp") {
    need(3);
    for (size_t k : {size_t{0}, size_t{2}}) {
      if (in[k]->et != in[1]->et || (!in[k]->dims.empty() && in[k]->dims != in[1]->dims))
        op_fail(op, "bound " + in[k]->str() + " does not fit operand " + in[1]->str());
      p.scalar[k] = in[k]->dims.empty() && !in[1]->dims.empty();
    }
    p.kind = EwPlan::Clamp;
    shape = in[1];
    want = in[1]->et;
  } else if (n == "convert") {
    need(1);
    p.kind = EwPlan::Convert;
    shape = in[0];
  } else if (n == "not") {
    need(1);
    if (et_is_float(in[0]->et)) op_fail(op, "needs a bool or integer operand");
    p.kind = EwPlan::Not;
    shape = in[0];
    want = in[0]->et;
  } else if (UnaryFn f = unary_fn(n)) {
    need(1);
    if (float_only_unary(n) && !et_is_float(in[0]->et))
      op_fail(op, std::string("needs a floating operand, got ") + et_name(in[0]->et));
    p.kind = EwPlan::Unary;
    p.f = f;
    shape = in[0];
    want = n == "is_finite" ? ET::PRED : in[0]->et;
  } else {
    need(2);
    same(*in[0], *in[1]);
    shape = in[0];
    want = in[0]->et;
    p.in_et = in[0]->et;
    if (et_is_float(in[0]->et)) {
      static const char* const kFloatOps[] = {"add", "subtract", "multiply", "divide", "maximum",
                                              "minimum", "remainder", "power", "atan2"};
      p.kind = EwPlan::BinFloat;
      p.code = -1;
      for (int c = 0; c < 9; ++c)
        if (n == kFloatOps[c]) p.code = c;
    } else {
      static const char* const kIntOps[] = {"add", "subtract", "multiply", "divide", "remainder", "maximum",
                                            "minimum", "and", "or", "xor", "power"};
      p.kind = EwPlan::BinInt;
      p.code = -1;
      for (int c = 0; c < 11; ++c)
        if (n == kIntOps[c]) p.code = c;
    }
    if (p.code < 0) op_fail(op, std::string("not defined for ") + et_name(in[0]->et));
  }
  p.in_et = shape->et;
  if (shape->dims != out.dims || want != out.et)
    op_fail(op, "result type " + out.str() + " does not match the operands (expected " +
                    TensorType{want, shape->dims}.str() + ")");
  return p;
}

}  // namespace detail

namespace {

/// out[i] = round(t, f(i)) with the rounding chosen once.
template <class F>
void store_rounded(ET t, size_t n, double* out, F f) {
  if (t == ET::F32) for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(f(i));
  else if (t == ET::F64) for (size_t i = 0; i < n; ++i) out[i] = f(i);
  else for (size_t i = 0; i < n; ++i) out[i] = et_round(t, f(i));
}

int64_t int_binary(int code, bool uns, int64_t p, int64_t q) {
  const uint64_t up = static_cast<uint64_t>(p), uq = static_cast<uint64_t>(q);
  switch (code) {
    case 0: return static_cast<int64_t>(up + uq);
    case 1: return static_cast<int64_t>(up - uq);
    case 2: return static_cast<int64_t>(up * uq);
    case 3:
    case 4:
      if (q == 0) return code == 3 ? -1 : p;  // XLA: x / 0 is all ones, x % 0 is x
      if (!uns && p == std::numeric_limits<int64_t>::min() && q == -1) return code == 3 ? p : 0;
      return code == 3 ? p / q : p % q;
    case 5: return std::max(p, q);
    case 6: return std::min(p, q);
    case 7: return p & q;
    case 8: return p | q;
    case 9: return p ^ q;
    default:
      if (q < 0) return p == 1 ? 1 : p == -1 ? (q % 2 ? -1 : 1) : 0;
      uint64_t acc = 1, base = up;
      for (int64_t e = q; e > 0; e >>= 1) {
        if (e & 1) acc *= base;
        base *= base;
      }
      return static_cast<int64_t>(acc);
  }
}

}  // namespace

namespace detail {

/// Runs `p` on n elements; in[k] points at operand k's first element (scalars are not advanced).
void ew_run(const EwPlan& p, const double* const* in, double* out, size_t n) {
  const ET t = p.out_et;
  const double* x = in[0];
  switch (p.kind) {
    case EwPlan::Unary: {
      const UnaryFn f = p.f;
      store_rounded(t, n, out, [&](size_t i) { return f(x[i]); });
      return;
    }
    case EwPlan::Not:
      for (size_t i = 0; i < n; ++i) out[i] = t == ET::PRED ? (x[i] == 0) : wrap_int(t, ~to_i64(x[i]));
      return;
    case EwPlan::Convert:
      if (et_is_float(t) || t == ET::PRED) store_rounded(t, n, out, [&](size_t i) { return x[i]; });
      else for (size_t i = 0; i < n; ++i) out[i] = et_round(t, std::isnan(x[i]) ? 0.0 : std::trunc(x[i]));
      return;
    case EwPlan::Compare: {
      const double* y = in[1];
      switch (p.code) {
        case 0: for (size_t i = 0; i < n; ++i) out[i] = x[i] == y[i]; break;
        case 1: for (size_t i = 0; i < n; ++i) out[i] = x[i] != y[i]; break;
        case 2: for (size_t i = 0; i < n; ++i) out[i] = x[i] < y[i]; break;
        case 3: for (size_t i = 0; i < n; ++i) out[i] = x[i] <= y[i]; break;
        case 4: for (size_t i = 0; i < n; ++i) out[i] = x[i] > y[i]; break;
        default: for (size_t i = 0; i < n; ++i) out[i] = x[i] >= y[i]; break;
      }
      return;
    }
    case EwPlan::Select: {
      const double *a = in[1], *b = in[2];
      const bool s = p.scalar[0];
      for (size_t i = 0; i < n; ++i) out[i] = x[s ? 0 : i] != 0 ? a[i] : b[i];
      return;
    }
    case EwPlan::Clamp: {
      const double *v = in[1], *hi = in[2];
      const bool sl = p.scalar[0], sh = p.scalar[2];
      for (size_t i = 0; i < n; ++i) out[i] = std::min(std::max(v[i], x[sl ? 0 : i]), hi[sh ? 0 : i]);
      return;
    }
    case EwPlan::BinFloat: {
      const double* y = in[1];
      switch (p.code) {
        case 0: store_rounded(t, n, out, [&](size_t i) { return x[i] + y[i]; }); break;
        case 1: store_rounded(t, n, out, [&](size_t i) { return x[i] - y[i]; }); break;
        case 2: store_rounded(t, n, out, [&](size_t i) { return x[i] * y[i]; }); break;
        case 3: store_rounded(t, n, out, [&](size_t i) { return x[i] / y[i]; }); break;
        case 4: for (size_t i = 0; i < n; ++i) out[i] = (std::isnan(x[i]) || std::isnan(y[i])) ? NAN : std::max(x[i], y[i]); break;
        case 5: for (size_t i = 0; i < n; ++i) out[i] = (std::isnan(x[i]) || std::isnan(y[i])) ? NAN : std::min(x[i], y[i]); break;
        case 6: store_rounded(t, n, out, [&](size_t i) { return std::fmod(x[i], y[i]); }); break;
        case 7: store_rounded(t, n, out, [&](size_t i) { return std::pow(x[i], y[i]); }); break;
        default: store_rounded(t, n, out, [&](size_t i) { return std::atan2(x[i], y[i]); }); break;
      }
      return;
    }
    case EwPlan::BinInt: {
      const double* y = in[1];
      const bool uns = et_is_unsigned(p.in_et);
      for (size_t i = 0; i < n; ++i) out[i] = wrap_int(t, int_binary(p.code, uns, to_i64(x[i]), to_i64(y[i])));
      return;
    }
  }
}

// ---------------------------------------------------------------------------- structural
std::vector<int64_t> broadcast_strides(const Op& op, const TensorType& x, const TensorType& out) {
  const auto bd = ints(op, "broadcast_dimensions");
  if (bd.size() != x.dims.size()) op_fail(op, "broadcast_dimensions does not match operand rank");
  if (out.et != x.et) op_fail(op, "result element type differs from operand");
  std::vector<int64_t> st(out.dims.size(), 0);
  const auto xs = strides_of(x.dims);
  for (size_t i = 0; i < bd.size(); ++i) {
    if (bd[i] < 0 || bd[i] >= static_cast<int64_t>(out.dims.size())) op_fail(op, "broadcast dimension out of range");
    const int64_t od = out.dims[static_cast<size_t>(bd[i])];
    if (x.dims[i] != od && x.dims[i] != 1)
      op_fail(op, "cannot broadcast " + x.str() + " to " + out.str());
    st[static_cast<size_t>(bd[i])] = x.dims[i] == 1 ? 0 : xs[i];
  }
  return st;
}

}  // namespace detail

namespace {

Tensor run_broadcast(const Op& op, const Tensor& x, const TensorType& out) {
  const auto st = broadcast_strides(op, x.type, out);
  Tensor r = make(out);
  gather_strided(x.data.data(), 0, out.dims, st, r.data.data());
  return r;
}

Tensor run_transpose(const Op& op, const Tensor& x, const TensorType& out) {
  const auto perm = ints(op, "permutation");
  if (perm.size() != x.type.dims.size()) op_fail(op, "permutation does not match operand rank");
  const auto xs = strides_of(x.type.dims);
  std::vector<int64_t> st, dims;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(xs.size())) op_fail(op, "permutation entry out of range");
    st.push_back(xs[static_cast<size_t>(p)]);
    dims.push_back(x.type.dims[static_cast<size_t>(p)]);
  }
  if (dims != out.dims) op_fail(op, "result type " + out.str() + " does not match the permutation");
  Tensor r = make(out);
  gather_strided(x.data.data(), 0, dims, st, r.data.data());
  return r;
}

Tensor run_slice(const Op& op, const Tensor& x, const TensorType& out) {
  const auto start = ints(op, "start_indices"), limit = ints(op, "limit_indices");
  auto strides = ints(op, "strides", false);
  if (strides.empty()) strides.assign(start.size(), 1);
  const size_t r = x.type.dims.size();
  if (start.size() != r || limit.size() != r || strides.size() != r) op_fail(op, "index lists do not match the operand rank");
  const auto xs = strides_of(x.type.dims);
  std::vector<int64_t> st(r), dims(r);
  int64_t off = 0;
  for (size_t i = 0; i < r; ++i) {
    if (start[i] < 0 || limit[i] > x.type.dims[i] || start[i] > limit[i] || strides[i] < 1) op_fail(op, "slice out of bounds");
    dims[i] = (limit[i] - start[i] + strides[i] - 1) / strides[i];
    st[i] = xs[i] * strides[i];
    off += start[i] * xs[i];
  }
  if (dims != out.dims) op_fail(op, "result type " + out.str() + " does not match the slice");
  Tensor t = make(out);
  gather_strided(x.data.data(), off, dims, st, t.data.data());
  return t;
}

Tensor run_reverse(const Op& op, const Tensor& x) {
  const auto dims = ints(op, "dimensions");
  const auto xs = strides_of(x.type.dims);
  std::vector<int64_t> st = xs;
  int64_t off = 0;
  for (int64_t d : dims) {
    if (d < 0 || d >= static_cast<int64_t>(xs.size())) op_fail(op, "dimension out of range");
    st[static_cast<size_t>(d)] = -xs[static_cast<size_t>(d)];
    off += (x.type.dims[static_cast<size_t>(d)] - 1) * xs[static_cast<size_t>(d)];
  }
  Tensor r = make(x.type);
  if (r.data.empty()) return r;
  gather_strided(x.data.data(), off, x.type.dims, st, r.data.data());
  return r;
}

Tensor run_concatenate(const Op& op, const std::vector<const Tensor*>& xs, const TensorType& out) {
  int64_t dim = int_attr(op, "dimension", -1);
  if (dim < 0 || dim >= static_cast<int64_t>(out.dims.size())) op_fail(op, "bad dimension");
  const size_t d = static_cast<size_t>(dim);
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < d; ++i) outer *= out.dims[i];
  for (size_t i = d + 1; i < out.dims.size(); ++i) inner *= out.dims[i];
  int64_t total = 0;
  for (const Tensor* x : xs) {
    if (x->type.et != out.et || x->type.dims.size() != out.dims.size()) op_fail(op, "operand " + x->type.str() + " does not fit " + out.str());
    for (size_t i = 0; i < out.dims.size(); ++i)
      if (i != d && x->type.dims[i] != out.dims[i]) op_fail(op, "operand " + x->type.str() + " does not fit " + out.str());
    total += x->type.dims[d];
  }
  if (total != out.dims[d]) op_fail(op, "result size along dimension does not add up");
  Tensor r = make(out);
  int64_t col = 0;
  for (const Tensor* x : xs) {
    const int64_t w = x->type.dims[d] * inner;
    for (int64_t o = 0; o < outer; ++o)
      std::copy_n(x->data.data() + o * w, w, r.data.data() + o * out.dims[d] * inner + col);
    col += w;
  }
  return r;
}

Tensor run_pad(const Op& op, const Tensor& x, const Tensor& pv, const TensorType& out) {
  const auto lo = ints(op, "edge_padding_low"), hi = ints(op, "edge_padding_high");
  auto in = ints(op, "interior_padding", false);
  const size_t r = x.type.dims.size();
  if (in.empty()) in.assign(r, 0);
  if (lo.size() != r || hi.size() != r || in.size() != r) op_fail(op, "padding lists do not match the operand rank");
  std::vector<int64_t> dims(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t n = x.type.dims[i];
    dims[i] = lo[i] + hi[i] + n + (n > 0 ? (n - 1) * in[i] : 0);
  }
  if (dims != out.dims) op_fail(op, "result type " + out.str() + " does not match the padding");
  Tensor t = make(out);
  std::fill(t.data.begin(), t.data.end(), pv.data.at(0));
  const auto os = strides_of(out.dims);
  const int64_t n = x.type.numel();
  std::vector<int64_t> idx(r, 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t off = 0;
    bool inside = true;
    for (size_t a = 0; a < r; ++a) {
      const int64_t p = lo[a] + idx[a] * (in[a] + 1);
      if (p < 0 || p >= out.dims[a]) { inside = false; break; }
      off += p * os[a];
    }
    if (inside) t.data[static_cast<size_t>(off)] = x.data[static_cast<size_t>(k)];
    for (size_t a = r; a-- > 0;) {
      if (++idx[a] < x.type.dims[a]) break;
      idx[a] = 0;
    }
  }
  return t;
}

Tensor run_iota(const Op& op, const TensorType& out) {
  const int64_t dim = int_attr(op, "iota_dimension", -1);
  if (dim < 0 || dim >= static_cast<int64_t>(out.dims.size())) op_fail(op, "bad iota_dimension");
  Tensor r = make(out);
  const auto st = strides_of(out.dims);
  const int64_t s = st[static_cast<size_t>(dim)], n = out.dims[static_cast<size_t>(dim)];
  for (size_t i = 0; i < r.data.size(); ++i) r.data[i] = et_round(out.et, static_cast<double>((static_cast<int64_t>(i) / s) % n));
  return r;
}

double scalar_value(const Attr& a, ET et) {
  if (a.kind == Attr::Word && a.s.rfind("0x", 0) == 0) {  // bit pattern
    const uint64_t bits = static_cast<uint64_t>(a.i);
    switch (et) {
      case ET::F32: { uint32_t b = static_cast<uint32_t>(bits); float f; std::memcpy(&f, &b, 4); return f; }
      case ET::F64: { double f; std::memcpy(&f, &bits, 8); return f; }
      case ET::BF16: return static_cast<float>(bfloat16::from_bits(static_cast<uint16_t>(bits)));
      case ET::F16: return static_cast<float>(half::from_bits(static_cast<uint16_t>(bits)));
      default: return static_cast<double>(a.i);
    }
  }
  if (a.kind == Attr::Bool || a.kind == Attr::Int) return static_cast<double>(a.i);
  if (a.kind == Attr::Float) return a.f;
  throw EmuError(kInvalidArgument, "TPU emulator: bad constant element '" + a.s + "'");
}

}  // namespace

namespace detail {

Tensor run_constant(const Op& op, const TensorType& out) {
  const Attr& v = op.attrs.at("value");
  if (!(v.type == out)) op_fail(op, "value type " + v.type.str() + " differs from result " + out.str());
  Tensor r = make(out);
  if (!v.s.empty()) {  // hex blob: little-endian element bytes (one element means a splat)
    const size_t esz = static_cast<size_t>(et_bytes(out.et));
    const size_t nbytes = (v.s.size() - 2) / 2;
    const bool splat = nbytes == esz;
    if (!splat && nbytes != esz * r.data.size())
      op_fail(op, "hex constant has " + std::to_string(nbytes) + " bytes for " + out.str());
    auto hex = [](char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; };
    for (size_t i = 0; i < (splat ? std::min<size_t>(1, r.data.size()) : r.data.size()); ++i) {
      uint64_t bits = 0;
      for (size_t b = 0; b < esz; ++b) {
        const size_t pos = 2 + 2 * (i * esz + b);
        bits |= static_cast<uint64_t>(hex(v.s[pos]) * 16 + hex(v.s[pos + 1])) << (8 * b);
      }
      double value = 0;
      if (et_is_float(out.et)) {
        Attr a;
        a.kind = Attr::Word;
        a.s = "0x";
        a.i = static_cast<int64_t>(bits);
        value = scalar_value(a, out.et);
      } else if (et_is_unsigned(out.et) || esz == 8) {
        value = static_cast<double>(bits);
        if (out.et == ET::S64) value = static_cast<double>(static_cast<int64_t>(bits));
      } else {  // sign-extend narrower signed integers
        const int shift = 64 - static_cast<int>(esz) * 8;
        value = static_cast<double>(static_cast<int64_t>(bits << shift) >> shift);
      }
      r.data[i] = et_round(out.et, value);
    }
    if (splat) std::fill(r.data.begin(), r.data.end(), r.data.empty() ? 0.0 : r.data[0]);
    return r;
  }
  std::vector<double> flat;
  std::function<void(const Attr&)> walk = [&](const Attr& x) {
    if (x.kind == Attr::List) for (const auto& y : x.items) walk(y);
    else flat.push_back(et_round(out.et, scalar_value(x, out.et)));
  };
  for (const auto& x : v.items) walk(x);
  if (flat.size() == 1) std::fill(r.data.begin(), r.data.end(), flat[0]);
  else if (flat.size() == r.data.size()) r.data = std::move(flat);
  else if (!r.data.empty()) op_fail(op, "dense value has " + std::to_string(flat.size()) + " elements for " + out.str());
  return r;
}

}  // namespace detail

namespace {

// ---------------------------------------------------------------------------- reductions
double reduce_step(int kind, double acc, double x) {
  switch (kind) {
    case 0: return acc + x;
    case 1: return (std::isnan(acc) || std::isnan(x)) ? NAN : std::max(acc, x);
    case 2: return (std::isnan(acc) || std::isnan(x)) ? NAN : std::min(acc, x);
    case 3: return acc * x;
    case 4: return static_cast<double>(to_i64(acc) & to_i64(x));
    default: return static_cast<double>(to_i64(acc) | to_i64(x));
  }
}
int reducer_kind(const Op& op) {
  const std::string& r = op.reducer;
  if (r == "stablehlo.add") return 0;
  if (r == "stablehlo.maximum") return 1;
  if (r == "stablehlo.minimum") return 2;
  if (r == "stablehlo.multiply") return 3;
  if (r == "stablehlo.and") return 4;
  if (r == "stablehlo.or") return 5;
  op_fail(op, "unsupported reduction body '" + r + "'", kUnimplemented);
}

Tensor run_reduce(const Op& op, const Tensor& x, const Tensor& init, const TensorType& out) {
  const auto dims = ints(op, "dimensions");
  const int kind = reducer_kind(op);
  if (!init.type.dims.empty() || init.type.et != x.type.et) op_fail(op, "init must be a scalar of the operand type");
  const size_t r = x.type.dims.size();
  std::vector<bool> red(r, false);
  for (int64_t d : dims) {
    if (d < 0 || d >= static_cast<int64_t>(r) || red[static_cast<size_t>(d)]) op_fail(op, "bad dimensions");
    red[static_cast<size_t>(d)] = true;
  }
  std::vector<int64_t> perm, kept;
  int64_t R = 1;
  for (size_t i = 0; i < r; ++i) if (!red[i]) { perm.push_back(static_cast<int64_t>(i)); kept.push_back(x.type.dims[i]); }
  for (size_t i = 0; i < r; ++i) if (red[i]) { perm.push_back(static_cast<int64_t>(i)); R *= x.type.dims[i]; }
  if (kept != out.dims || out.et != x.type.et) op_fail(op, "result type " + out.str() + " does not match the reduction");
  const Tensor t = transpose_raw(x, perm);
  Tensor o = make(out);
  const double i0 = init.data[0];
  for (size_t k = 0; k < o.data.size(); ++k) {
    const double* p = t.data.data() + static_cast<int64_t>(k) * R;
    double acc = i0;
    if (kind == 0) for (int64_t j = 0; j < R; ++j) acc += p[j];
    else for (int64_t j = 0; j < R; ++j) acc = reduce_step(kind, acc, p[j]);
    o.data[k] = et_round(out.et, acc);
  }
  return o;
}

Tensor run_reduce_window(const Op& op, const Tensor& x, const Tensor& init, const TensorType& out) {
  const int kind = reducer_kind(op);
  const size_t r = x.type.dims.size();
  const auto win = ints(op, "window_dimensions");
  auto st = ints(op, "window_strides", false), bd = ints(op, "base_dilations", false), wd = ints(op, "window_dilations", false);
  auto pad = ints(op, "padding", false);
  if (st.empty()) st.assign(r, 1);
  if (wd.empty()) wd.assign(r, 1);
  if (pad.empty()) pad.assign(2 * r, 0);
  for (int64_t b : bd) if (b != 1) op_fail(op, "base_dilations other than 1 are not supported", kUnimplemented);
  if (win.size() != r || st.size() != r || wd.size() != r || pad.size() != 2 * r) op_fail(op, "window attributes do not match the operand rank");
  for (size_t i = 0; i < r; ++i)
    if (win[i] < 1 || st[i] < 1 || wd[i] < 1) op_fail(op, "window sizes, strides and dilations must be >= 1");
  std::vector<int64_t> dims(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t padded = x.type.dims[i] + pad[2 * i] + pad[2 * i + 1];
    const int64_t w = (win[i] - 1) * wd[i] + 1;
    dims[i] = padded < w ? 0 : (padded - w) / st[i] + 1;
  }
  if (dims != out.dims || out.et != x.type.et) op_fail(op, "result type " + out.str() + " does not match the window");
  Tensor o = make(out);
  const auto xs = strides_of(x.type.dims);
  int64_t wn = 1;
  for (int64_t w : win) wn *= w;
  std::vector<int64_t> oi(r, 0), wi(r, 0);
  const double i0 = init.data.at(0);
  for (size_t k = 0; k < o.data.size(); ++k) {
    double acc = i0;
    std::fill(wi.begin(), wi.end(), 0);
    for (int64_t w = 0; w < wn; ++w) {
      int64_t off = 0;
      bool inside = true;
      for (size_t a = 0; a < r; ++a) {
        const int64_t p = oi[a] * st[a] + wi[a] * wd[a] - pad[2 * a];
        if (p < 0 || p >= x.type.dims[a]) { inside = false; break; }
        off += p * xs[a];
      }
      acc = reduce_step(kind, acc, inside ? x.data[static_cast<size_t>(off)] : i0);
      for (size_t a = r; a-- > 0;) { if (++wi[a] < win[a]) break; wi[a] = 0; }
    }
    o.data[k] = et_round(out.et, acc);
    for (size_t a = r; a-- > 0;) { if (++oi[a] < dims[a]) break; oi[a] = 0; }
  }
  return o;
}

}  // namespace

// ---------------------------------------------------------------------------- sort
namespace detail {

SortPlan plan_sort(const Op& op, const std::vector<const TensorType*>& in) {
  const size_t n = in.size();
  if (n == 0) op_fail(op, "needs at least one operand");
  if (op.result_types.size() != n)
    op_fail(op, "has " + std::to_string(n) + " operands but " + std::to_string(op.result_types.size()) + " results");
  for (size_t k = 0; k < n; ++k) {
    if (in[k]->dims != in[0]->dims) op_fail(op, "operand shapes " + in[0]->str() + " and " + in[k]->str() + " differ");
    if (!(op.result_types[k] == *in[k]))
      op_fail(op, "result " + std::to_string(k) + " has type " + op.result_types[k].str() + " but operand " +
                      std::to_string(k) + " is " + in[k]->str());
  }
  SortPlan sp;
  const int64_t rank = static_cast<int64_t>(in[0]->dims.size());
  sp.dim = -1;  // StableHLO's default: the last axis
  if (const auto it = op.attrs.find("dimension"); it != op.attrs.end()) {
    if (it->second.kind != Attr::Int) op_fail(op, "dimension must be an integer");
    sp.dim = it->second.i;
  }
  if (sp.dim < -rank || sp.dim >= rank)
    op_fail(op, "dimension " + std::to_string(sp.dim) + " is out of range for " + in[0]->str());
  if (sp.dim < 0) sp.dim += rank;
  if (const auto it = op.attrs.find("is_stable"); it != op.attrs.end() && it->second.kind != Attr::Bool)
    op_fail(op, "is_stable must be true or false");
  if (!op.body) op_fail(op, "needs a comparator region");
  const Body& b = *op.body;
  auto body_fail = [&](const std::string& msg) {
    throw EmuError(kInvalidArgument, "TPU emulator: line " + std::to_string(b.line) + ": " + op.name + ": comparator: " + msg);
  };
  if (b.arg_types.size() != 2 * n)
    body_fail("takes " + std::to_string(b.arg_types.size()) + " arguments; " + std::to_string(n) + " operand" +
              (n == 1 ? "" : "s") + " need " + std::to_string(2 * n) + " (two scalars per operand: a0, b0, a1, b1, ...)");
  if (b.num_slots < static_cast<int>(b.arg_types.size())) body_fail("malformed region");
  std::vector<const TensorType*> types(static_cast<size_t>(b.num_slots), nullptr);
  for (size_t i = 0; i < b.arg_types.size(); ++i) {
    const TensorType want{in[i / 2]->et, {}};
    if (!(b.arg_types[i] == want))
      body_fail("argument " + std::to_string(i) + " has type " + b.arg_types[i].str() + " but operand " +
                std::to_string(i / 2) + " needs " + want.str());
    types[i] = &b.arg_types[i];
  }
  sp.init.assign(static_cast<size_t>(b.num_slots), 0.0);
  auto slot_ok = [&](int s) { return s >= 0 && s < b.num_slots; };
  for (const Op& bop : b.ops) {
    if (bop.results.size() != 1 || bop.result_types.size() != 1 || !slot_ok(bop.results[0]))
      op_fail(bop, "a comparator op must have one result");
    const TensorType& out = bop.result_types[0];
    if (!out.dims.empty()) op_fail(bop, "comparator values must be scalars (rank 0), not " + out.str());
    std::vector<const TensorType*> bin;
    for (int s : bop.operands) {
      if (!slot_ok(s) || !types[static_cast<size_t>(s)]) op_fail(bop, "operand is not a value of the comparator");
      bin.push_back(types[static_cast<size_t>(s)]);
    }
    if (bop.name == "stablehlo.constant") {
      if (!bin.empty()) op_fail(bop, "takes no operands");
      sp.init[static_cast<size_t>(bop.results[0])] = run_constant(bop, out).data.at(0);
    } else if (is_elementwise(bop.name)) {
      SortPlan::Step st;
      st.plan = plan_elementwise(bop, bin, out);
      st.in = bop.operands;
      st.out = bop.results[0];
      sp.steps.push_back(std::move(st));
    } else {
      op_fail(bop, "is not supported in a sort comparator (only elementwise ops and constants)", kUnimplemented);
    }
    types[static_cast<size_t>(bop.results[0])] = &out;
  }
  if (!slot_ok(b.result) || !types[static_cast<size_t>(b.result)]) body_fail("must return one value");
  const TensorType i1{ET::PRED, {}};
  if (!(*types[static_cast<size_t>(b.result)] == i1))
    body_fail("returns " + types[static_cast<size_t>(b.result)]->str() + "; it must return tensor<i1>");
  sp.result = b.result;
  return sp;
}

}  // namespace detail

namespace {

/// Stable merge sort of `idx` by `before` (a comes before b when before(a, b)): insertion-sorted
/// runs of 16, then merges that take from the right run only when its head comes strictly
/// before the left one's. Every access is bounded by the index ranges, not by the comparator's
/// answers, so a comparator that is not a strict weak order gives some permutation, never a
/// crash.
template <class Before>
void merge_sort_indices(std::vector<int64_t>& idx, std::vector<int64_t>& tmp, Before before) {
  const size_t n = idx.size();
  constexpr size_t kRun = 16;
  for (size_t s = 0; s < n; s += kRun) {
    const size_t e = std::min(n, s + kRun);
    for (size_t i = s + 1; i < e; ++i) {
      const int64_t v = idx[i];
      size_t j = i;
      for (; j > s && before(v, idx[j - 1]); --j) idx[j] = idx[j - 1];
      idx[j] = v;
    }
  }
  for (size_t w = kRun; w < n; w *= 2) {
    for (size_t s = 0; s < n; s += 2 * w) {
      const size_t m = std::min(n, s + w), e = std::min(n, s + 2 * w);
      if (m >= e || !before(idx[m], idx[m - 1])) {  // one run, or the two already in order
        std::copy(idx.begin() + static_cast<std::ptrdiff_t>(s), idx.begin() + static_cast<std::ptrdiff_t>(e),
                  tmp.begin() + static_cast<std::ptrdiff_t>(s));
        continue;
      }
      size_t i = s, j = m, o = s;
      while (i < m && j < e) tmp[o++] = before(idx[j], idx[i]) ? idx[j++] : idx[i++];
      while (i < m) tmp[o++] = idx[i++];
      while (j < e) tmp[o++] = idx[j++];
    }
    idx.swap(tmp);
  }
}

}  // namespace

namespace detail {

std::vector<Tensor> run_sort(const Op& op, const std::vector<const Tensor*>& in) {
  std::vector<const TensorType*> types;
  for (const Tensor* t : in) types.push_back(&t->type);
  const SortPlan sp = plan_sort(op, types);
  const size_t n = in.size();
  std::vector<Tensor> out;
  for (size_t k = 0; k < n; ++k) out.push_back(make(op.result_types[k]));
  const auto& dims = in[0]->type.dims;
  const size_t d = static_cast<size_t>(sp.dim);
  int64_t outer = 1, inner = 1;
  for (size_t a = 0; a < d; ++a) outer *= dims[a];
  for (size_t a = d + 1; a < dims.size(); ++a) inner *= dims[a];
  const int64_t len = dims[d];
  if (in[0]->type.numel() == 0) return out;

  // The comparator: block arguments in slots 0..2n-1, then one slot per op, in a register file.
  std::vector<double> regs = sp.init;
  std::vector<std::vector<const double*>> step_in;
  std::vector<double*> step_out;
  for (const SortPlan::Step& st : sp.steps) {
    std::vector<const double*> ptrs;
    for (int s : st.in) ptrs.push_back(regs.data() + s);
    step_in.push_back(std::move(ptrs));
    step_out.push_back(regs.data() + st.out);
  }
  std::vector<const double*> src(n);
  const double* const result = regs.data() + sp.result;
  int64_t base = 0;
  auto before = [&](int64_t i, int64_t j) {
    const int64_t oi = base + i * inner, oj = base + j * inner;
    for (size_t k = 0; k < n; ++k) {
      regs[2 * k] = src[k][oi];
      regs[2 * k + 1] = src[k][oj];
    }
    for (size_t s = 0; s < sp.steps.size(); ++s) ew_run(sp.steps[s].plan, step_in[s].data(), step_out[s], 1);
    return *result != 0;
  };
  for (size_t k = 0; k < n; ++k) src[k] = in[k]->data.data();
  std::vector<int64_t> idx(static_cast<size_t>(len)), tmp(static_cast<size_t>(len));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t q = 0; q < inner; ++q) {
      base = o * len * inner + q;
      for (int64_t t = 0; t < len; ++t) idx[static_cast<size_t>(t)] = t;
      merge_sort_indices(idx, tmp, before);
      for (size_t k = 0; k < n; ++k) {
        double* dst = out[k].data.data() + base;
        for (int64_t t = 0; t < len; ++t) dst[t * inner] = src[k][base + idx[static_cast<size_t>(t)] * inner];
      }
    }
  }
  return out;
}

}  // namespace detail

namespace {

/// An elementwise op alone, on whole tensors.
Tensor run_elementwise(const Op& op, const std::vector<const Tensor*>& in, const TensorType& out) {
  std::vector<const TensorType*> types;
  std::vector<const double*> ptrs;
  for (const Tensor* t : in) {
    types.push_back(&t->type);
    ptrs.push_back(t->data.data());
  }
  const EwPlan plan = plan_elementwise(op, types, out);
  Tensor r = make(out);
  ew_run(plan, ptrs.data(), r.data.data(), r.data.size());
  return r;
}

/// Runs one op of `p` alone, on whole tensors; its result goes into `env`.
void run_op(const Program& root, const Op& op, std::vector<TensorPtr>& env) {
  for (int s : op.operands)
    if (!env[static_cast<size_t>(s)]) op_fail(op, "operand is not available", kInternal);
  std::vector<const Tensor*> in;
  for (int s : op.operands) in.push_back(env[static_cast<size_t>(s)].get());
  const TensorType& out = op.result_types[0];
  const std::string n = op.name.substr(op.name.find('.') + 1);
  auto need = [&](size_t count) {
    if (in.size() != count) op_fail(op, "expects " + std::to_string(count) + " operands, got " + std::to_string(in.size()));
  };
  if (op.name == "func.call") {
    const auto it = root.functions.find(op.attrs.at("callee").s);
    if (it == root.functions.end()) op_fail(op, "unknown callee");
    std::vector<TensorPtr> call_args;
    for (int s : op.operands) call_args.push_back(env[static_cast<size_t>(s)]);
    auto res = run_function(root, *it->second, call_args);
    if (res.size() != 1 || !(res[0]->type == out)) op_fail(op, "callee result does not match the call");
    env[static_cast<size_t>(op.results[0])] = res[0];
    return;
  }
  if (n == "sort") {
    if (op.results.size() != op.result_types.size()) op_fail(op, "result count does not match its types", kInternal);
    auto sorted = run_sort(op, in);
    for (size_t k = 0; k < sorted.size(); ++k) env[static_cast<size_t>(op.results[k])] = share(std::move(sorted[k]));
    return;
  }
  Tensor r;
  if (is_elementwise(op.name)) r = run_elementwise(op, in, out);
  else if (n == "constant") { need(0); r = run_constant(op, out); }
  else if (n == "iota") { need(0); r = run_iota(op, out); }
  else if (n == "broadcast_in_dim") { need(1); r = run_broadcast(op, *in[0], out); }
  else if (n == "reshape") {
    need(1);
    if (in[0]->type.numel() != out.numel() || in[0]->type.et != out.et) op_fail(op, "cannot reshape " + in[0]->type.str() + " to " + out.str());
    r.type = out;
    r.data = in[0]->data;
  } else if (n == "transpose") { need(1); r = run_transpose(op, *in[0], out); }
  else if (n == "slice") { need(1); r = run_slice(op, *in[0], out); }
  else if (n == "reverse") { need(1); r = run_reverse(op, *in[0]); }
  else if (n == "concatenate") { r = run_concatenate(op, in, out); }
  else if (n == "pad") { need(2); r = run_pad(op, *in[0], *in[1], out); }
  else if (n == "dot_general" || n == "dot") { need(2); r = run_dot_general(op, *in[0], *in[1], out); }
  else if (n == "reduce") { need(2); r = run_reduce(op, *in[0], *in[1], out); }
  else if (n == "reduce_window") { need(2); r = run_reduce_window(op, *in[0], *in[1], out); }
  else if (n == "convolution") { need(2); r = run_convolution(op, *in[0], *in[1], out); }
  else op_fail(op, "is not supported by the TPU emulator", kUnimplemented);
  if (!(r.type == out)) op_fail(op, "computed type " + r.type.str() + " differs from declared " + out.str());
  env[static_cast<size_t>(op.results[0])] = share(std::move(r));
}

}  // namespace

std::vector<TensorPtr> run_program(const Program& p, const std::vector<TensorPtr>& args) {
  return run_function(p, p, args);
}

std::vector<TensorPtr> run_function(const Program& root, const Program& p, const std::vector<TensorPtr>& args) {
  if (args.size() != p.params.size())
    throw EmuError(kInvalidArgument, "TPU emulator: @main takes " + std::to_string(p.params.size()) +
                                         " arguments, got " + std::to_string(args.size()));
  std::vector<TensorPtr> env(static_cast<size_t>(p.num_slots));
  for (size_t i = 0; i < args.size(); ++i) {
    if (!(args[i]->type == p.params[i]))
      throw EmuError(kInvalidArgument, "TPU emulator: argument " + std::to_string(i) + " has type " +
                                           args[i]->type.str() + " but @main expects " + p.params[i].str());
    env[static_cast<size_t>(p.param_slots[i])] = args[i];
  }
  std::shared_ptr<const Schedule> planned = p.schedule;
  if (!planned) planned = std::make_shared<const Schedule>(make_schedule(p));
  // Intermediates are freed after their last reader.
  for (const Step& st : fusion_enabled() ? planned->fused : planned->unfused) {
    if (st.region) run_region(p, planned->regions[st.index], env);
    else run_op(root, p.ops[st.index], env);
    for (int s : st.release) env[static_cast<size_t>(s)].reset();
  }
  std::vector<TensorPtr> outs;
  for (int s : p.result_slots) outs.push_back(env[static_cast<size_t>(s)]);
  return outs;
}

}  // namespace torchtpu::emulator
