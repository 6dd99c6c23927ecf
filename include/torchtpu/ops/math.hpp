// torchtpu/ops/math.hpp — operator library, math family: cumsum, cumprod, logsumexp, var, std.
// Each op is one definition (ops/library.hpp) that the typed API (`torchtpu::cumsum(Tensor<T>)`),
// the run-time API (`torchtpu::cumsum(AnyTensor)`), the eager PJRT devices and model graphs
// (`aten::cumprod`, ...) all call. Tests: tests/ops/test_math.cpp (cpu, every dtype),
// tests/device_ops/test_device_library.cpp (PJRT devices), tests/conformance (torch 1.13).
#pragma once
#include <algorithm>    // std::max
#include <cmath>        // std::exp, std::log, std::sqrt, std::isnan, std::isinf
#include <cstdint>      // int64_t
#include <limits>       // std::numeric_limits
#include <optional>     // std::optional
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <type_traits>  // std::conditional_t
#include <utility>      // std::pair
#include <variant>      // std::get_if
#include <vector>       // std::vector

#include "indexing.hpp"  // detail::reduce_op_t (the builder's reduction enum)
#include "library.hpp"   // TensorMeta, DtypeSet, ops::call
#include "shape.hpp"     // detail::to_dims, detail::vec, detail::call1

namespace torchtpu {
namespace ops {

namespace detail {

/// Which dims of a rank-`rank` tensor `dims` reduces (all of them when `all`), checked.
/// **Errors:** IndexError for a dim out of range; ValueError for a repeated dim (naming `op`).
struct Reduced {
  bool on[max_rank] = {};
  static Reduced of(const Dims& dims, bool all, int rank, std::string_view op, const std::string& where) {
    Reduced r;
    if (all || (dims.empty() && rank > 0)) {
      for (int d = 0; d < rank; ++d) r.on[d] = true;
      return r;
    }
    for (int64_t d0 : dims) {
      const int d = wrap_dim(d0, rank, op);
      if (rank == 0) continue;
      if (r.on[d]) throw ValueError(std::string(op) + ": dim " + std::to_string(d) + " appears multiple times in the list of dims" + where);
      r.on[d] = true;
    }
    return r;
  }
  /// The result shape (`keepdim`: size 1 in place of each reduced dim).
  Dims result(const Dims& in, bool keepdim) const {
    Dims o;
    for (int d = 0; d < in.size(); ++d) {
      if (!on[d]) o.push_back(in[d]);
      else if (keepdim) o.push_back(1);
    }
    return o;
  }
  /// The reduced dims as a list.
  std::vector<int64_t> list(int rank) const {
    std::vector<int64_t> l;
    for (int d = 0; d < rank; ++d)
      if (on[d]) l.push_back(d);
    return l;
  }
};

/// `x` as rows: the kept dims first (row index, in order), the reduced dims last (contiguous
/// within a row); `n` the row length. Empty rows have length 0.
template <element T>
Tensor<T> as_rows(const Tensor<T>& x, const Reduced& red, int64_t& n) {
  Dims perm;
  n = 1;
  for (int d = 0; d < x.dim(); ++d)
    if (!red.on[d]) perm.push_back(d);
  for (int d = 0; d < x.dim(); ++d)
    if (red.on[d]) {
      perm.push_back(d);
      n *= x.size(d);
    }
  return x.dim() == 0 ? x.contiguous() : x.permute(perm).contiguous();
}

/// `v` (the reduced result, kept dims only) broadcast back over the reduced dims of `full`.
template <class B, class V>
V back(B& b, const V& v, const std::vector<int64_t>& full, const Reduced& red) {
  std::vector<int64_t> bd;
  for (int d = 0; d < static_cast<int>(full.size()); ++d)
    if (!red.on[d]) bd.push_back(d);
  return b.broadcast_in_dim(v, full, bd);
}

}  // namespace detail

/// Cumulative sum (`Prod` false, torch.cumsum) or product (torch.cumprod) along `dim`:
/// `out[..., i, ...] = self[..., 0, ...] + ... + self[..., i, ...]`.
///
/// **Shapes:** `self: [...]` → the same shape (a 0-dim tensor takes dim 0 or -1).
/// **Dtypes:** all eight. The result has `dtype` when given (`self` converted to it first),
/// else int64 for integer and bool `self`, else `self`'s. float16/bfloat16 accumulate in
/// float32 and each output is rounded (torch 2's cpu kernels; torch 1.13's cpu has no float16
/// cumsum).
/// **Errors:** IndexError for `dim` out of range (naming the op and the operand).
/// **Source:** torch.cumsum / torch.cumprod (aten/src/ATen/native/ReduceOps.cpp,
/// cpu_cum_base_kernel). **Lowering:** stablehlo.reduce_window with a window of the whole dim
/// padded by `n - 1` before (in float32 for float16/bfloat16); the order of the additions may
/// differ from the cpu's sequential one (floating results agree to rounding).
template <bool Prod>
struct CumOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = Prod ? "cumprod" : "cumsum", aten = Prod ? "aten::cumprod" : "aten::cumsum";
  static constexpr std::string_view schema =
      Prod ? "aten::cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor"
           : "aten::cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::all();
  /// Non-tensor arguments.
  struct Args {
    int64_t dim = 0;                     ///< the dim to accumulate along
    bool has_dtype = false;              ///< false: the default result dtype
    ScalarType dtype = ScalarType::Float;  ///< the result dtype when `has_dtype`
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) {
    Args a{r.to_int("dim"), !r.is_none("dtype"), ScalarType::Float};
    if (a.has_dtype) a.dtype = detail::from_torch_dtype(r.to_int("dtype"), aten);
    return a;
  }
  /// The result dtype for `self` of dtype `t`.
  static ScalarType result(ScalarType t, const Args& a) {
    return a.has_dtype ? a.dtype : is_floating(t) ? t : ScalarType::Int64;
  }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    (void)wrap_dim(a.dim, in[0].dim(), aten);
    return TensorMeta{result(in[0].dtype, a), in[0].sizes, Device{}, true};
  }
  /// CPU kernel: one sequential pass per line along `dim`, in opmath (float32 for 16-bit floats).
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    if (out.numel() == 0) return;
    const Tensor<T> x = in[0].contiguous();
    const int r = x.dim();
    const int d = r == 0 ? 0 : wrap_dim(a.dim, r, aten);
    const int64_t n = r == 0 ? 1 : x.size(d);
    int64_t outer = 1, inner = 1;
    for (int e = 0; e < d; ++e) outer *= x.size(e);
    for (int e = d + 1; e < r; ++e) inner *= x.size(e);
    using Acc = opmath_t<T>;
    const T* s = x.data_ptr();
    T* o = out.data_ptr();
    for (int64_t i = 0; i < outer; ++i)
      for (int64_t k = 0; k < inner; ++k) {
        Acc acc = convert<Acc>(Prod ? 1 : 0);
        for (int64_t j = 0; j < n; ++j) {
          const int64_t at = (i * n + j) * inner + k;
          if constexpr (std::is_same_v<T, bool>) acc = Prod ? (acc && s[at]) : (acc || s[at]);
          else acc = static_cast<Acc>(Prod ? acc * static_cast<Acc>(s[at]) : acc + static_cast<Acc>(s[at]));
          o[at] = convert<T>(acc);
        }
      }
  }
  /// StableHLO: see the struct's docstring.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    const V& x = in[0];
    if (out.size() == 0 || numel(out) == 0) return x;
    const int d = wrap_dim(a.dim, out.size(), aten);
    const int64_t n = out[d];
    const ScalarType t = x.dtype;
    const bool narrow = t == ScalarType::Half || t == ScalarType::BFloat16;
    const V w = narrow ? b.convert(x, ScalarType::Float) : x;
    using RO = detail::reduce_op_t<B>;
    const bool is_bool = t == ScalarType::Bool;
    const RO op = is_bool ? (Prod ? RO::And : RO::Or) : (Prod ? RO::Mul : RO::Add);
    std::vector<int64_t> window(out.size(), 1);
    std::vector<std::pair<int64_t, int64_t>> padding(out.size(), {0, 0});
    window[static_cast<size_t>(d)] = n;
    padding[static_cast<size_t>(d)] = {n - 1, 0};
    const V init = b.constant_int(Prod ? 1 : 0, w.dtype);
    const V r = b.reduce_window(w, init, op, window, {}, padding);
    return narrow ? b.convert(r, t) : r;
  }
};
/// torch.cumsum.
using CumsumOp = CumOp<false>;
/// torch.cumprod.
using CumprodOp = CumOp<true>;

/// `log(sum(exp(self)))` over `dim` (torch.logsumexp), computed stably: with `m` the maximum
/// of each reduced row (0 when it is infinite), `log(sum(exp(self - m))) + m`.
///
/// **Shapes:** `self: [...]` → the reduced dims removed (`keepdim`: kept with size 1). An
/// empty `dim` reduces every dim.
/// **Dtypes:** floating results; integer and bool `self` compute in float32 (as torch). Rows
/// of only -inf give -inf, a +inf gives +inf, NaN propagates; an empty row gives -inf.
/// float16/bfloat16 compute in float32.
/// **Errors:** IndexError for a dim out of range; ValueError for a repeated dim (naming the op
/// and the operand).
/// **Source:** torch.logsumexp (aten/src/ATen/native/ReduceOps.cpp, logsumexp_out_impl).
/// **Lowering:** a max-reduce, the infinite maxima replaced by 0 (stablehlo.select), exp of
/// the shifted operand, an add-reduce, log, add.
struct LogsumexpOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "logsumexp", aten = "aten::logsumexp";
  static constexpr std::string_view schema = "aten::logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor";
  ///@}
  /// The result dtypes (every operand dtype is accepted; integers compute in float32).
  static constexpr DtypeSet dtypes = DtypeSet::floating();
  /// Non-tensor arguments.
  struct Args {
    Dims dim;              ///< the dims to reduce (empty: all)
    bool keepdim = false;  ///< keep reduced dims with size 1
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return Args{detail::to_dims(r.to_ints("dim"), aten, "dim"), r.to_bool("keepdim")}; }
  /// The reduced dims, checked.
  static detail::Reduced reduced(std::span<const TensorMeta> in, const Args& a) {
    return detail::Reduced::of(a.dim, false, in[0].dim(), aten, " (dim " + to_string(a.dim) + "; operands " + describe(in) + ")");
  }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    const ScalarType t = is_floating(in[0].dtype) ? in[0].dtype : ScalarType::Float;
    return TensorMeta{t, reduced(in, a).result(in[0].sizes, a.keepdim), Device{}, true};
  }
  /// CPU kernel: per row, the maximum, then the shifted sum of exponentials (in opmath).
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    if (out.numel() == 0) return;
    const TensorMeta m{dtype_of<T>(), in[0].sizes(), Device{}, true};
    int64_t n = 0;
    const Tensor<T> rows = detail::as_rows(in[0], reduced(std::span<const TensorMeta>(&m, 1), a), n);
    using Acc = opmath_t<T>;
    const T* p = rows.data_ptr();
    T* o = out.data_ptr();
    for (int64_t i = 0; i < out.numel(); ++i) {
      const T* row = p + i * n;
      Acc mx = -std::numeric_limits<Acc>::infinity();
      bool nan = false;
      for (int64_t j = 0; j < n; ++j) {
        const Acc v = static_cast<Acc>(row[j]);
        nan = nan || std::isnan(v);
        mx = v > mx ? v : mx;
      }
      if (nan) {
        o[i] = convert<T>(std::numeric_limits<Acc>::quiet_NaN());
        continue;
      }
      const Acc shift = std::isinf(mx) ? Acc(0) : mx;
      Acc sum = 0;
      for (int64_t j = 0; j < n; ++j) sum += std::exp(static_cast<Acc>(row[j]) - shift);
      o[i] = convert<T>(static_cast<Acc>(std::log(sum) + shift));
    }
  }
  /// StableHLO: see the struct's docstring.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    const ScalarType t = in[0].dtype;
    const bool narrow = t == ScalarType::Half || t == ScalarType::BFloat16;
    const V x = narrow ? b.convert(in[0], ScalarType::Float) : in[0];
    const int r = static_cast<int>(x.dims.size());
    Dims sizes;
    for (int64_t s : x.dims) sizes.push_back(s);
    const TensorMeta m{t, sizes, Device{}, true};
    const detail::Reduced red = reduced(std::span<const TensorMeta>(&m, 1), a);
    if (r == 0) return in[0];
    using RO = detail::reduce_op_t<B>;
    const ScalarType ft = x.dtype;
    const std::vector<int64_t> dims = red.list(r);
    const V mx = b.reduce(x, b.constant(-std::numeric_limits<double>::infinity(), ft), RO::Max, dims);
    const V inf = b.constant(std::numeric_limits<double>::infinity(), ft, mx.dims);
    const V shift = b.select(b.compare("EQ", b.unary("abs", mx), inf), b.constant(0.0, ft, mx.dims), mx);
    const V e = b.exp(b.subtract(x, detail::back(b, shift, x.dims, red)));
    const V sum = b.reduce(e, b.constant(0.0, ft), RO::Add, dims);
    V res = b.add(b.log(sum), shift);
    if (narrow) res = b.convert(res, t);
    return b.reshape(res, detail::vec(out));
  }
};

/// Variance (`Std` false, torch.var) or standard deviation (torch.std) over `dim`:
/// `sum((x - mean)^2) / max(0, n - correction)` (its square root for std).
///
/// **Shapes:** `self: [...]` → the reduced dims removed (`keepdim`: kept with size 1); `dim`
/// None or empty reduces every dim.
/// **Dtypes:** floating (float16, bfloat16, float32, float64); the result has `self`'s. The
/// cpu computes in float64 (two passes: the mean, then the squared deviations) and rounds once.
/// `correction > n` or `n = correction` gives inf (0/0: NaN), an empty row NaN, as torch.
/// **Overloads:** one struct serves `aten::var.correction(self, dim, *, correction, keepdim)`
/// (its schema, torch 2), `aten::var.dim(self, dim, unbiased, keepdim)` (what torch 1.13 traces
/// for `torch.var(x, dim)`; `unbiased` reads as correction 1 or 0) and `aten::var(self,
/// unbiased)` (all dims): `args` tells them apart by the kinds of the positional arguments.
/// **Errors:** TypeError for an integer or bool `self`; IndexError for a dim out of range;
/// ValueError for a repeated dim (naming the op and the operand).
/// **Source:** torch.var / torch.std (aten/src/ATen/native/ReduceOps.cpp, std_var_out).
/// **Lowering:** in float32 (float64 for float64): a sum for the mean, the squared deviations
/// summed, divided by `max(0, n - correction)`, stablehlo.sqrt for std.
template <bool Std>
struct VarStdOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = Std ? "std" : "var", aten = Std ? "aten::std" : "aten::var";
  static constexpr std::string_view schema =
      Std ? "aten::std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor"
          : "aten::var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::floating();
  /// Non-tensor arguments.
  struct Args {
    Dims dim;                ///< the dims to reduce
    bool all = true;         ///< reduce every dim (`dim` None)
    double correction = 1;   ///< subtracted from the count in the divisor (1: unbiased)
    bool keepdim = false;    ///< keep reduced dims with size 1
  };
  /// Arguments from a model node or a run-time call (any of the three overloads).
  template <class R>
  static Args args(const R& r) {
    Args a;
    const auto& d = r.get("dim");
    if (const bool* unbiased = std::get_if<bool>(&d)) {  // aten::var(self, bool unbiased)
      a.correction = *unbiased ? 1 : 0;
      return a;
    }
    a.all = r.is_none("dim");
    if (!a.all) a.dim = detail::to_dims(r.to_ints("dim"), aten, "dim");
    if (!r.is_none("correction")) a.correction = r.to_double("correction");  // a bool: var.dim's unbiased
    a.keepdim = r.to_bool("keepdim");
    return a;
  }
  /// The reduced dims, checked.
  static detail::Reduced reduced(std::span<const TensorMeta> in, const Args& a) {
    return detail::Reduced::of(a.dim, a.all, in[0].dim(), aten,
                               " (dim " + (a.all ? std::string("None") : to_string(a.dim)) + "; operands " + describe(in) + ")");
  }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    if (!is_floating(in[0].dtype))
      throw TypeError(std::string(aten) + ": only floating point dtypes are supported (operands " + describe(in) + ")");
    return TensorMeta{in[0].dtype, reduced(in, a).result(in[0].sizes, a.keepdim), Device{}, true};
  }
  /// CPU kernel: per row, two passes in float64.
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    if (out.numel() == 0) return;
    const TensorMeta m{dtype_of<T>(), in[0].sizes(), Device{}, true};
    int64_t n = 0;
    const Tensor<T> rows = detail::as_rows(in[0], reduced(std::span<const TensorMeta>(&m, 1), a), n);
    const double div = std::max(0.0, static_cast<double>(n) - a.correction);
    const T* p = rows.data_ptr();
    T* o = out.data_ptr();
    for (int64_t i = 0; i < out.numel(); ++i) {
      const T* row = p + i * n;
      double sum = 0;
      for (int64_t j = 0; j < n; ++j) sum += static_cast<double>(row[j]);
      const double mean = sum / static_cast<double>(n);
      double ss = 0;
      for (int64_t j = 0; j < n; ++j) {
        const double dv = static_cast<double>(row[j]) - mean;
        ss += dv * dv;
      }
      const double v = ss / div;
      o[i] = convert<T>(Std ? std::sqrt(v) : v);
    }
  }
  /// StableHLO: see the struct's docstring.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    const ScalarType t = in[0].dtype;
    const ScalarType ct = t == ScalarType::Double ? t : ScalarType::Float;
    const V x = t == ct ? in[0] : b.convert(in[0], ct);
    const int r = static_cast<int>(x.dims.size());
    Dims sizes;
    for (int64_t s : x.dims) sizes.push_back(s);
    const TensorMeta m{t, sizes, Device{}, true};
    const detail::Reduced red = reduced(std::span<const TensorMeta>(&m, 1), a);
    using RO = detail::reduce_op_t<B>;
    const std::vector<int64_t> dims = red.list(r);
    int64_t n = 1;
    for (int64_t d : dims) n *= x.dims[static_cast<size_t>(d)];
    const double div = std::max(0.0, static_cast<double>(n) - a.correction);
    const V sum = b.reduce(x, b.constant(0.0, ct), RO::Add, dims);
    const V mean = b.divide(sum, b.constant(static_cast<double>(n), ct, sum.dims));
    const V dv = b.subtract(x, detail::back(b, mean, x.dims, red));
    const V ss = b.reduce(b.multiply(dv, dv), b.constant(0.0, ct), RO::Add, dims);
    V v = b.divide(ss, b.constant(div, ct, ss.dims));
    if (Std) v = b.unary("sqrt", v);
    if (t != ct) v = b.convert(v, t);
    return b.reshape(v, detail::vec(out));
  }
};
/// torch.var.
using VarOp = VarStdOp<false>;
/// torch.std.
using StdOp = VarStdOp<true>;

// Each op's entry point, compiled once in TORCHTPU_SEPARATE_OPS programs (ops/library.hpp).
TORCHTPU_LIBRARY_OP(CumsumOp);
TORCHTPU_LIBRARY_OP(CumprodOp);
TORCHTPU_LIBRARY_OP(LogsumexpOp);
TORCHTPU_LIBRARY_OP(VarOp);
TORCHTPU_LIBRARY_OP(StdOp);

}  // namespace ops

/// The result element type of `cumsum`/`cumprod` of a `Tensor<T>`: int64 for integers and bool.
template <class T>
using cum_result_t = std::conditional_t<floating_element<T>, T, int64_t>;

/// Cumulative sum of `x` along `dim` (torch.cumsum); see ops::CumOp. Integer and bool inputs
/// give int64. **Example:** `cumsum(x, -1)`.
template <element T, int Rank>
Tensor<cum_result_t<T>> cumsum(const Tensor<T, Rank>& x, int64_t dim) {
  const Tensor<T> t(x);
  return ops::call_typed<ops::CumsumOp, cum_result_t<T>>(std::span<const Tensor<T>>(&t, 1), {dim, false, ScalarType::Float});
}
/// Run-time typed `cumsum`; `dtype` (when given) is the result's.
template <std::same_as<AnyTensor> A>
A cumsum(const A& x, int64_t dim, std::optional<ScalarType> dtype = std::nullopt) {
  return ops::detail::call1<ops::CumsumOp>(x, {dim, dtype.has_value(), dtype.value_or(ScalarType::Float)});
}
/// Cumulative product of `x` along `dim` (torch.cumprod); see ops::CumOp.
template <element T, int Rank>
Tensor<cum_result_t<T>> cumprod(const Tensor<T, Rank>& x, int64_t dim) {
  const Tensor<T> t(x);
  return ops::call_typed<ops::CumprodOp, cum_result_t<T>>(std::span<const Tensor<T>>(&t, 1), {dim, false, ScalarType::Float});
}
/// Run-time typed `cumprod`; `dtype` (when given) is the result's.
template <std::same_as<AnyTensor> A>
A cumprod(const A& x, int64_t dim, std::optional<ScalarType> dtype = std::nullopt) {
  return ops::detail::call1<ops::CumprodOp>(x, {dim, dtype.has_value(), dtype.value_or(ScalarType::Float)});
}

/// The result element type of `logsumexp` of a `Tensor<T>`: float for integers and bool.
template <class T>
using float_result_t = std::conditional_t<floating_element<T>, T, float>;

/// `log(sum(exp(x)))` over `dim` (torch.logsumexp), stable; see ops::LogsumexpOp.
template <element T, int Rank>
Tensor<float_result_t<T>> logsumexp(const Tensor<T, Rank>& x, const Dims& dim, bool keepdim = false) {
  const Tensor<T> t(x);
  return ops::call_typed<ops::LogsumexpOp, float_result_t<T>>(std::span<const Tensor<T>>(&t, 1), {dim, keepdim});
}
/// Run-time typed `logsumexp`.
template <std::same_as<AnyTensor> A>
A logsumexp(const A& x, const Dims& dim, bool keepdim = false) {
  return ops::detail::call1<ops::LogsumexpOp>(x, {dim, keepdim});
}

/// Variance of `x` over `dim` (all dims when `dim` is None) with `correction` (1: unbiased)
/// (torch.var); see ops::VarStdOp.
template <element T, int Rank>
Tensor<T> var(const Tensor<T, Rank>& x, std::optional<Dims> dim = std::nullopt, double correction = 1,
              bool keepdim = false) {
  return ops::detail::call1<ops::VarOp>(x, {dim.value_or(Dims{}), !dim.has_value(), correction, keepdim});
}
/// Run-time typed `var`.
template <std::same_as<AnyTensor> A>
A var(const A& x, std::optional<Dims> dim = std::nullopt, double correction = 1, bool keepdim = false) {
  return ops::detail::call1<ops::VarOp>(x, {dim.value_or(Dims{}), !dim.has_value(), correction, keepdim});
}
/// Standard deviation of `x` over `dim` (torch.std; named `std_dev` here: a function `std`
/// would be ambiguous with namespace std under `using namespace torchtpu`); see ops::VarStdOp.
template <element T, int Rank>
Tensor<T> std_dev(const Tensor<T, Rank>& x, std::optional<Dims> dim = std::nullopt, double correction = 1,
              bool keepdim = false) {
  return ops::detail::call1<ops::StdOp>(x, {dim.value_or(Dims{}), !dim.has_value(), correction, keepdim});
}
/// Run-time typed `std_dev`.
template <std::same_as<AnyTensor> A>
A std_dev(const A& x, std::optional<Dims> dim = std::nullopt, double correction = 1, bool keepdim = false) {
  return ops::detail::call1<ops::StdOp>(x, {dim.value_or(Dims{}), !dim.has_value(), correction, keepdim});
}

}  // namespace torchtpu
