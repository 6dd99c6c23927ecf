// torchtpu/ops/linalg.hpp — operator library, linear-algebra family: einsum, vector norms
// (linalg_vector_norm, norm, frobenius_norm), addmm, baddbmm, outer (ger), lerp, nan_to_num.
// Each op is one definition (ops/library.hpp) that the typed API (`torchtpu::einsum(eq, {a, b})`),
// the run-time API (`AnyTensor`), the eager PJRT devices and model graphs (`aten::einsum`, ...)
// all call. Tests: tests/ops/test_linalg.cpp (cpu, every dtype), tests/device_ops/
// test_device_linalg.cpp (PJRT devices), tests/conformance (torch 1.13).
//
// Matrix products on the cpu go through `torchtpu::matmul` (the GEMM with its fused epilogue:
// addmm's `beta * self + alpha * (mat1 @ mat2)` runs per output tile); on PJRT devices through
// `stablehlo.dot_general` at the process-wide `matmul_precision()` (device/modes.hpp).
//
// Not in the umbrella header (torchtpu.hpp): include <torchtpu/ops/linalg.hpp>.
#pragma once
#include <algorithm>    // std::find, std::sort
#include <cmath>        // std::abs, std::pow, std::sqrt, std::isnan, std::isinf
#include <cstdint>      // int64_t
#include <cstring>      // std::memcpy
#include <initializer_list>  // std::initializer_list
#include <limits>       // std::numeric_limits
#include <optional>     // std::optional
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <tuple>        // std::tuple, std::tuple_element_t (the builder's dot_general parameters)
#include <type_traits>  // std::remove_cvref_t, std::is_same_v
#include <variant>      // std::holds_alternative
#include <vector>       // std::vector

#include "indexing.hpp"  // detail::reduce_op_t, detail::Scalar
#include "library.hpp"   // TensorMeta, DtypeSet, ops::call, call_typed
#include "math.hpp"      // detail::Reduced, detail::as_rows, detail::from_torch_dtype
#include "matmul.hpp"    // torchtpu::matmul (the cpu GEMM)
#include "shape.hpp"     // detail::to_dims, detail::vec, detail::call1

namespace torchtpu {
namespace ops {

namespace detail {

/// The builder's `DotDims` (dot_general's third parameter), so that ops/ needs no device/ include.
template <class R, class C, class... A>
std::tuple<A...> linalg_params_of(R (C::*)(A...));
template <class B>
using dot_dims_t = std::remove_cvref_t<std::tuple_element_t<2, decltype(linalg_params_of(&B::dot_general))>>;

/// Matrix-product operand precision on PJRT devices: the process-wide setting for floating
/// operands (integers are exact at any precision).
inline stablehlo::Precision linalg_precision(ScalarType t) {
  return is_floating(t) ? matmul_precision() : stablehlo::Precision::Default;
}

/// True for float16 and bfloat16 (computed in float32 on PJRT devices).
constexpr bool narrow_float(ScalarType t) { return t == ScalarType::Half || t == ScalarType::BFloat16; }

/// `v` as dtype `t` would hold it (rounded; out-of-range values become infinities).
inline double round_to(double v, ScalarType t) {
  switch (t) {
    case ScalarType::Half: return static_cast<double>(static_cast<float>(half(static_cast<float>(v))));
    case ScalarType::BFloat16: return static_cast<double>(static_cast<float>(bfloat16(static_cast<float>(v))));
    case ScalarType::Float: return static_cast<double>(static_cast<float>(v));
    default: return v;
  }
}

/// The largest finite value of floating dtype `t`.
inline double max_finite(ScalarType t) {
  switch (t) {
    case ScalarType::Half: return 65504.0;
    case ScalarType::BFloat16: return 3.3895313892515355e38;
    case ScalarType::Float: return static_cast<double>(std::numeric_limits<float>::max());
    default: return std::numeric_limits<double>::max();
  }
}

/// Right-aligned broadcast of `v` to `dims` (a StableHLO value).
template <class B, class V>
V broadcast_right(B& b, const V& v, const std::vector<int64_t>& dims) {
  if (v.dims == dims) return v;
  std::vector<int64_t> bd;
  const size_t off = dims.size() - v.dims.size();
  for (size_t i = 0; i < v.dims.size(); ++i) bd.push_back(static_cast<int64_t>(off + i));
  return b.broadcast_in_dim(v, dims, bd);
}

/// Checks that every operand has `in[0]`'s dtype. **Errors:** TypeError naming `op`, `what`
/// (the operand names) and the operands.
inline void same_dtypes(std::span<const TensorMeta> in, std::string_view op, std::string_view what) {
  for (const TensorMeta& m : in)
    if (m.dtype != in[0].dtype)
      throw TypeError(std::string(op) + ": expected " + std::string(what) + " to have the same dtype (operands " +
                      describe(in) + ")");
}

// ---- einsum: the equation, its plan, and one execution over a cpu or StableHLO engine ------

/// Label ids: 'A'-'Z' are 0-25, 'a'-'z' 26-51 (ASCII order, torch's implicit output order);
/// the dims an ellipsis stands for are 52, 53, ... (aligned right across operands).
inline constexpr int kEllipsisLabel = 52;
inline constexpr int kLabels = kEllipsisLabel + max_rank;

/// What an einsum equation says for operands of the given shapes: each operand's label per
/// dim (ellipsis expanded), the output labels, and each label's (broadcast) size.
struct EinsumPlan {
  std::vector<std::vector<int>> labels;  ///< per operand, one label per dim
  std::vector<int> out;                  ///< the output's labels
  int64_t size[kLabels] = {};            ///< each label's size (broadcast over operands)
  Dims out_sizes;                        ///< the output's shape
};

/// Parses `eq` against operands `in`. **Errors:** ValueError naming `op`, the equation and the
/// shapes for a bad subscript, an operand count or rank that does not match, a repeated label
/// whose sizes differ, sizes that do not broadcast, an output label missing from the inputs or
/// repeated.
inline EinsumPlan einsum_plan(std::string_view eq, std::span<const TensorMeta> in, std::string_view op) {
  // the error suffix, built only for an error
  auto where = [&] { return std::string(" (equation '" + std::string(eq) + "'; operands " + describe(in) + ")"); };
  auto fail = [&](const std::string& what) -> ValueError { return ValueError(std::string(op) + ": " + what + where()); };
  // split into terms: per operand, the labels and the ellipsis position (-1: none)
  struct Term {
    std::vector<int> labels;
    int ellipsis = -1;
  };
  std::vector<Term> terms(1);
  Term out_term;
  bool arrow = false;
  Term* cur = &terms.back();
  for (size_t i = 0; i < eq.size(); ++i) {
    const char c = eq[i];
    if (c == ' ') continue;
    if (c == ',' && !arrow) {
      terms.emplace_back();
      cur = &terms.back();
    } else if (c == '-' && !arrow && i + 1 < eq.size() && eq[i + 1] == '>') {
      arrow = true;
      cur = &out_term;
      ++i;
    } else if (c == '.') {
      if (i + 2 >= eq.size() || eq[i + 1] != '.' || eq[i + 2] != '.')
        throw fail("found '.' for operand that is not part of any ellipsis at index " + std::to_string(i));
      if (cur->ellipsis >= 0) throw fail("found more than one ellipsis ('...') in one term");
      cur->ellipsis = static_cast<int>(cur->labels.size());
      i += 2;
    } else if (c >= 'A' && c <= 'Z') {
      cur->labels.push_back(c - 'A');
    } else if (c >= 'a' && c <= 'z') {
      cur->labels.push_back(26 + (c - 'a'));
    } else {
      throw fail("invalid subscript given at index " + std::to_string(i) + " in the equation string, subscripts must be in [a-zA-Z]");
    }
  }
  if (terms.size() > in.size()) throw fail("fewer operands were provided than specified in the equation");
  if (terms.size() < in.size()) throw fail("more operands were provided than specified in the equation");
  EinsumPlan p;
  int ell = 0;  // the number of dims the ellipsis stands for (the most over operands)
  for (size_t k = 0; k < in.size(); ++k) {
    const int n = static_cast<int>(terms[k].labels.size()), r = in[k].dim();
    if (terms[k].ellipsis < 0 && n != r)
      throw fail("the number of subscripts in the equation (" + std::to_string(n) +
                 ") does not match the number of dimensions (" + std::to_string(r) + ") for operand " +
                 std::to_string(k) + " and no ellipsis was given");
    if (terms[k].ellipsis >= 0 && n > r)
      throw fail("the number of subscripts in the equation (" + std::to_string(n) +
                 ") is more than the number of dimensions (" + std::to_string(r) + ") for operand " + std::to_string(k));
    ell = std::max(ell, r - n);
  }
  for (int l = 0; l < kLabels; ++l) p.size[l] = -1;
  int count[kLabels] = {};
  for (size_t k = 0; k < in.size(); ++k) {
    const Term& t = terms[k];
    const int e = in[k].dim() - static_cast<int>(t.labels.size());
    std::vector<int> lab;
    for (int i = 0; i <= static_cast<int>(t.labels.size()); ++i) {
      if (i == t.ellipsis)
        for (int j = 0; j < e; ++j) lab.push_back(kEllipsisLabel + ell - e + j);
      if (i < static_cast<int>(t.labels.size())) lab.push_back(t.labels[static_cast<size_t>(i)]);
    }
    for (size_t d = 0; d < lab.size(); ++d) {
      const int l = lab[d];
      const int64_t s = in[k].sizes[static_cast<int>(d)];
      ++count[l];
      for (size_t d2 = 0; d2 < d; ++d2)
        if (lab[d2] == l && in[k].sizes[static_cast<int>(d2)] != s)
          throw fail("subscript " + std::string(1, l < 26 ? char('A' + l) : char('a' + l - 26)) +
                     " is repeated for operand " + std::to_string(k) + " but the sizes don't match, " +
                     std::to_string(s) + " != " + std::to_string(in[k].sizes[static_cast<int>(d2)]));
      if (p.size[l] < 0 || p.size[l] == 1) p.size[l] = s;
      else if (s != p.size[l] && s != 1)
        throw fail("subscript with size " + std::to_string(s) + " for operand " + std::to_string(k) +
                   " does not broadcast with previously seen size " + std::to_string(p.size[l]));
    }
    p.labels.push_back(std::move(lab));
  }
  if (arrow) {
    bool seen[kLabels] = {};
    for (int i = 0; i <= static_cast<int>(out_term.labels.size()); ++i) {
      if (i == out_term.ellipsis)
        for (int j = 0; j < ell; ++j) p.out.push_back(kEllipsisLabel + j);
      if (i == static_cast<int>(out_term.labels.size())) break;
      const int l = out_term.labels[static_cast<size_t>(i)];
      const std::string name(1, l < 26 ? char('A' + l) : char('a' + l - 26));
      if (count[l] == 0) throw fail("output subscript " + name + " does not appear in the equation for any input operand");
      if (seen[l]) throw fail("output subscript " + name + " appears more than once in the output");
      seen[l] = true;
      p.out.push_back(l);
    }
  } else {
    for (int j = 0; j < ell; ++j) p.out.push_back(kEllipsisLabel + j);
    for (int l = 0; l < kEllipsisLabel; ++l)
      if (count[l] == 1) p.out.push_back(l);
  }
  if (static_cast<int>(p.out.size()) > max_rank) throw fail("the output has more than " + std::to_string(max_rank) + " dims");
  for (int l : p.out) p.out_sizes.push_back(p.size[l]);
  return p;
}

/// Runs plan `p` on operands `ops` with engine `e` (the cpu's or the StableHLO builder's):
/// diagonals of repeated labels, sums over labels no other operand and not the output has,
/// then the operands contracted left to right (one batched matrix product each; a label of
/// size 1 on one side broadcasts), then the output's order.
template <class E, class V>
V einsum_run(E& e, std::vector<V> ops, const EinsumPlan& p) {
  struct Term {
    V v;
    std::vector<int> lab;
  };
  auto find = [](const std::vector<int>& l, int x) {
    const auto it = std::find(l.begin(), l.end(), x);
    return it == l.end() ? -1 : static_cast<int>(it - l.begin());
  };
  bool in_out[kLabels] = {};
  for (int l : p.out) in_out[l] = true;
  auto sum_out = [&e](Term& t, std::vector<int64_t> dims) {
    if (dims.empty()) return;
    std::sort(dims.begin(), dims.end());
    t.v = e.sum(t.v, dims);
    for (size_t i = dims.size(); i-- > 0;) t.lab.erase(t.lab.begin() + dims[i]);
  };
  std::vector<Term> ts;
  for (size_t k = 0; k < ops.size(); ++k) {
    Term t{ops[k], p.labels[k]};
    for (int a = 0; a < static_cast<int>(t.lab.size()); ++a)
      for (int b = static_cast<int>(t.lab.size()) - 1; b > a; --b)
        if (t.lab[static_cast<size_t>(a)] == t.lab[static_cast<size_t>(b)]) {
          t.v = e.diag(t.v, a, b);
          t.lab.erase(t.lab.begin() + b);
        }
    ts.push_back(std::move(t));
  }
  // labels used by one operand only and not in the output: summed before any product
  for (size_t k = 0; k < ts.size(); ++k) {
    std::vector<int64_t> dims;
    for (size_t d = 0; d < ts[k].lab.size(); ++d) {
      const int l = ts[k].lab[d];
      bool other = in_out[l];
      for (size_t j = 0; j < ts.size() && !other; ++j) other = j != k && find(ts[j].lab, l) >= 0;
      if (!other) dims.push_back(static_cast<int64_t>(d));
    }
    sum_out(ts[k], dims);
  }
  Term acc = ts[0];
  for (size_t k = 1; k < ts.size(); ++k) {
    Term& b = ts[k];
    bool keep[kLabels] = {};
    for (int l : p.out) keep[l] = true;
    for (size_t j = k + 1; j < ts.size(); ++j)
      for (int l : ts[j].lab) keep[l] = true;
    // a label of size 1 against a larger one (or kept by one side only while not needed
    // later) is summed on its side first
    const std::vector<int64_t> sa = e.dims(acc.v), sb = e.dims(b.v);
    std::vector<int64_t> da, db;
    for (size_t d = 0; d < acc.lab.size(); ++d) {
      const int l = acc.lab[d], pb = find(b.lab, l);
      if (pb < 0 ? !keep[l] : (sa[d] != sb[static_cast<size_t>(pb)] && (sa[d] == 1 || !keep[l]))) da.push_back(static_cast<int64_t>(d));
    }
    for (size_t d = 0; d < b.lab.size(); ++d) {
      const int l = b.lab[d], pa = find(acc.lab, l);
      if (pa < 0 ? !keep[l] : (sb[d] != sa[static_cast<size_t>(pa)] && (sb[d] == 1 || !keep[l]))) db.push_back(static_cast<int64_t>(d));
    }
    sum_out(acc, da);
    sum_out(b, db);
    std::vector<int64_t> ba, bb, ca, cb;
    std::vector<int> batch, fa, fb;
    for (size_t d = 0; d < acc.lab.size(); ++d) {
      const int l = acc.lab[d], pb = find(b.lab, l);
      if (pb < 0) {
        fa.push_back(l);
      } else if (keep[l]) {
        ba.push_back(static_cast<int64_t>(d));
        bb.push_back(pb);
        batch.push_back(l);
      } else {
        ca.push_back(static_cast<int64_t>(d));
        cb.push_back(pb);
      }
    }
    for (int l : b.lab)
      if (find(acc.lab, l) < 0) fb.push_back(l);
    acc.v = e.dot(acc.v, b.v, ba, bb, ca, cb);
    acc.lab = batch;
    acc.lab.insert(acc.lab.end(), fa.begin(), fa.end());
    acc.lab.insert(acc.lab.end(), fb.begin(), fb.end());
  }
  std::vector<int64_t> rest;
  for (size_t d = 0; d < acc.lab.size(); ++d)
    if (!in_out[acc.lab[d]]) rest.push_back(static_cast<int64_t>(d));
  sum_out(acc, rest);
  std::vector<int64_t> perm;
  bool identity = true;
  for (size_t i = 0; i < p.out.size(); ++i) {
    perm.push_back(find(acc.lab, p.out[i]));
    identity = identity && perm.back() == static_cast<int64_t>(i);
  }
  return identity ? acc.v : e.permute(acc.v, perm);
}

/// The einsum engine of the cpu: strided views for diagonals and permutations, the typed
/// reductions, `torchtpu::matmul` for the products.
template <element T>
struct EinsumCpu {
  static std::vector<int64_t> dims(const Tensor<T>& v) { return vec(v.sizes()); }
  static Tensor<T> diag(const Tensor<T>& v, int a, int b) {
    Dims s = v.sizes(), st = v.strides();
    st[a] += st[b];
    s.erase(b);
    st.erase(b);
    return Tensor<T>(v.storage(), s, st, v.storage_offset());
  }
  static Tensor<T> sum(const Tensor<T>& v, const std::vector<int64_t>& d) {
    return Tensor<T>(to<T>(torchtpu::sum(v, Dims(d.begin(), d.end()))));
  }
  static Tensor<T> permute(const Tensor<T>& v, const std::vector<int64_t>& perm) {
    return v.permute(Dims(perm.begin(), perm.end()));
  }
  static Tensor<T> dot(const Tensor<T>& a, const Tensor<T>& b, const std::vector<int64_t>& ba,
                       const std::vector<int64_t>& bb, const std::vector<int64_t>& ca, const std::vector<int64_t>& cb) {
    auto free_of = [](const Tensor<T>& v, const std::vector<int64_t>& x, const std::vector<int64_t>& y) {
      std::vector<int64_t> f;
      for (int64_t d = 0; d < v.dim(); ++d)
        if (std::find(x.begin(), x.end(), d) == x.end() && std::find(y.begin(), y.end(), d) == y.end()) f.push_back(d);
      return f;
    };
    const std::vector<int64_t> fa = free_of(a, ba, ca), fb = free_of(b, bb, cb);
    int64_t nb = 1, m = 1, k = 1, n = 1;
    Dims pa, pb, out;
    for (int64_t d : ba) { pa.push_back(d); nb *= a.size(d); out.push_back(a.size(d)); }
    for (int64_t d : fa) { pa.push_back(d); m *= a.size(d); }
    for (int64_t d : ca) { pa.push_back(d); k *= a.size(d); }
    for (int64_t d : bb) pb.push_back(d);
    for (int64_t d : cb) pb.push_back(d);
    for (int64_t d : fb) { pb.push_back(d); n *= b.size(d); }
    for (int64_t d : fa) out.push_back(a.size(d));
    for (int64_t d : fb) out.push_back(b.size(d));
    const Tensor<T> a3 = a.permute(pa).reshape(nb == 1 ? Dims{m, k} : Dims{nb, m, k});
    const Tensor<T> b3 = b.permute(pb).reshape(nb == 1 ? Dims{k, n} : Dims{nb, k, n});
    Tensor<T> r = matmul(a3, b3);
    return r.reshape(out);
  }
};

/// The einsum engine of PJRT devices: StableHLO values (float16/bfloat16 already in float32).
template <class B, class V>
struct EinsumHlo {
  B& b;
  std::vector<int64_t> dims(const V& v) const { return v.dims; }
  V diag(const V& v, int i, int j) {
    const V eq = b.compare("EQ", b.iota(ScalarType::Int64, v.dims, i), b.iota(ScalarType::Int64, v.dims, j));
    const V z = v.dtype == ScalarType::Bool ? b.constant_int(0, v.dtype, v.dims) : b.constant(0.0, v.dtype, v.dims);
    return sum(b.select(eq, v, z), {j});
  }
  V sum(const V& v, const std::vector<int64_t>& d) {
    using RO = reduce_op_t<B>;
    return b.reduce(v, b.constant_int(0, v.dtype), RO::Add, d);
  }
  V permute(const V& v, const std::vector<int64_t>& perm) { return b.transpose(v, perm); }
  V dot(const V& x, const V& y, const std::vector<int64_t>& ba, const std::vector<int64_t>& bb,
        const std::vector<int64_t>& ca, const std::vector<int64_t>& cb) {
    dot_dims_t<B> dn;
    dn.lhs_batch = ba;
    dn.rhs_batch = bb;
    dn.lhs_contract = ca;
    dn.rhs_contract = cb;
    return b.dot_general(x, y, dn, linalg_precision(x.dtype));
  }
};

// ---- shared pieces of the vector norms ------------------------------------------------------

/// Which aten op a VectorNormOp serves.
enum class NormKind { LinalgVector, Norm, Frobenius };

}  // namespace detail

/// Sum of products over the labels of an Einstein-summation equation (torch.einsum).
///
/// **Shapes:** one subscript (`a-zA-Z`) per dim of each operand, `...` for any number of
/// leading/middle dims (broadcast across operands, right-aligned); `->` and the output's
/// subscripts, or (implicit form) the ellipsis dims then each label that appears once, in
/// ASCII order. A label repeated in one operand takes its diagonal (`ii->i`); a label absent
/// from the output is summed; a size-1 dim broadcasts against the label's other sizes.
/// **Dtypes:** every dtype but bool (torch's cpu also lacks float16 for products; we compute
/// it with float32 accumulation, as bfloat16). Operands of one dtype give that dtype; operands
/// of different dtypes are promoted (torch.result_type: a float32 tensor times a bool mask is
/// float32) when no label is summed, the one case torch 1.13's cpu einsum computes as a
/// broadcast multiply (NLLB-MoE's router: `bm,be->ebm`); with a summed label torch refuses them.
/// **Errors:** ValueError naming the op, the equation and the shapes (bad subscript, operand
/// count or rank mismatch, sizes that do not broadcast, repeated or unknown output labels, an
/// equation over 127 characters); TypeError for a bool result, and for operands of different
/// dtypes when a label is summed.
/// **Source:** torch.einsum (aten/src/ATen/native/Linear.cpp: `einsum`, `sumproduct_pair`):
/// operands contracted left to right, each pair one batched matrix product; `path` (an
/// opt_einsum contraction order) is accepted and ignored: the order changes rounding only.
/// **Lowering:** diagonals as a select against an iota mask and a sum, sums as
/// stablehlo.reduce, each pair as stablehlo.dot_general (batch and contracting dims), a final
/// transpose; float16/bfloat16 in float32.
struct EinsumOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "einsum", aten = "aten::einsum";
  static constexpr std::string_view schema = "aten::einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor";
  ///@}
  /// The dtypes (see the struct's docstring).
  static constexpr DtypeSet dtypes = DtypeSet::numeric();
  /// Non-tensor arguments (the equation, trivially copyable).
  struct Args {
    char equation[128] = {};  ///< NUL-terminated
  };
  /// Args for `equation`. **Errors:** ValueError for an equation over 127 characters.
  static Args make(std::string_view equation) {
    if (equation.size() > 127)
      throw ValueError(std::string(aten) + ": the equation has " + std::to_string(equation.size()) + " characters (at most 127)");
    Args a;
    std::memcpy(a.equation, equation.data(), equation.size());
    return a;
  }
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return make(r.str("equation")); }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    if (in.empty()) throw ValueError(std::string(aten) + ": must provide at least one operand (equation '" + a.equation + "')");
    const detail::EinsumPlan p = detail::einsum_plan(a.equation, in, aten);
    bool mixed = false;
    for (const TensorMeta& m : in) mixed = mixed || m.dtype != in[0].dtype;
    if (mixed) {
      bool summed = false;  // a label of some operand that the output lacks
      for (const std::vector<int>& l : p.labels)
        for (int x : l) summed = summed || std::find(p.out.begin(), p.out.end(), x) == p.out.end();
      if (summed) detail::same_dtypes(in, aten, "all operands (a summed label multiplies them as matrices)");
    }
    const ScalarType t = result_type(in, aten);
    if (t == ScalarType::Bool)
      throw TypeError(std::string(aten) + ": bool operands are not supported (operands " + describe(in) + ")");
    return TensorMeta{t, p.out_sizes, Device{}, true};
  }
  /// The plan for operands of these shapes.
  template <class X>
  static detail::EinsumPlan plan(std::span<const X> in, const Args& a, ScalarType t) {
    std::vector<TensorMeta> m;
    for (const X& x : in) {
      Dims s;
      for (int64_t d : x.sizes()) s.push_back(d);
      m.push_back(TensorMeta{t, s, Device{}, true});
    }
    return detail::einsum_plan(a.equation, m, aten);
  }
  /// CPU kernel: detail::einsum_run over the cpu engine.
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    if constexpr (matmul_element<T>) {  // bool: rejected by `infer`
      const detail::EinsumPlan p = plan(in, a, dtype_of<T>());
      detail::EinsumCpu<T> e;
      const Tensor<T> r = detail::einsum_run(e, std::vector<Tensor<T>>(in.begin(), in.end()), p);
      if (out.numel()) out.copy_(r);
    }
  }
  /// StableHLO: see the struct's docstring.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    std::vector<TensorMeta> m;
    for (const V& x : in) m.push_back(TensorMeta{x.dtype, Dims(x.dims.begin(), x.dims.end()), Device{}, true});
    const detail::EinsumPlan p = detail::einsum_plan(a.equation, m, aten);
    const ScalarType t = in[0].dtype;  // every operand converted to the result dtype (operand_dtype)
    std::vector<V> ops;
    for (const V& x : in) ops.push_back(detail::narrow_float(t) ? b.convert(x, ScalarType::Float) : x);
    detail::EinsumHlo<B, V> e{b};
    V r = detail::einsum_run(e, ops, p);
    if (detail::narrow_float(t)) r = b.convert(r, t);
    return r.dims == detail::vec(out) ? r : b.reshape(r, detail::vec(out));
  }
};

/// Vector p-norm over `dim` (every dim when None or empty): `(sum |x|^p)^(1/p)`; p = 0 counts
/// the nonzero elements, p = inf is `max |x|`, p = -inf `min |x|`.
///
/// **Overloads:** `K` = LinalgVector: `aten::linalg_vector_norm(self, ord=2, dim=None,
/// keepdim=False, *, dtype=None)` (`dtype`: the input is converted to it first). `K` = Norm:
/// `aten::norm` — torch 1.13 traces `torch.norm(x, p, dim)` to `norm.ScalarOpt_dim(self, p,
/// dim, keepdim)` (p None: 2) and `norm.Scalar(self, p=2)` reduces every dim; one struct reads
/// both (its schema gives `dim` the default `[]`). `K` = Frobenius: `aten::frobenius_norm`
/// (`torch.norm(x)`, `torch.norm(x, 'fro')` trace to `frobenius_norm.dim(self, dim, keepdim)`),
/// p = 2.
/// **Shapes:** `self: [...]` → the reduced dims removed (`keepdim`: kept with size 1).
/// **Dtypes:** floating (the result has the input's dtype, or `dtype`). The cpu accumulates in
/// float64 and rounds once. NaN propagates (p = 0 counts a NaN as nonzero).
/// **Errors:** TypeError for an integer or bool input or `dtype`; IndexError for a dim out of
/// range; ValueError for a repeated dim, and for p = inf or p < 0 over an empty reduction
/// (no identity), naming the op and the operand.
/// **Source:** torch.linalg.vector_norm (aten/src/ATen/native/LinearAlgebra.cpp,
/// linalg_vector_norm; ReduceOps norm kernels).
/// **Lowering:** |x|, then a sum (p = 1), sqrt of a sum of squares (p = 2), a max/min (±inf),
/// a count of nonzeros (p = 0), or `power(sum(power(|x|, p)), 1/p)`; float16/bfloat16 in
/// float32.
template <detail::NormKind K>
struct VectorNormOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = K == detail::NormKind::LinalgVector ? "linalg_vector_norm"
                                           : K == detail::NormKind::Norm       ? "norm"
                                                                               : "frobenius_norm";
  static constexpr std::string_view aten = K == detail::NormKind::LinalgVector ? "aten::linalg_vector_norm"
                                           : K == detail::NormKind::Norm       ? "aten::norm"
                                                                               : "aten::frobenius_norm";
  /// The C++ function (one for the three aten names: torch.linalg.vector_norm's arguments).
  static constexpr std::string_view api = "vector_norm";
  static constexpr std::string_view schema =
      K == detail::NormKind::LinalgVector
          ? "aten::linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, "
            "ScalarType? dtype=None) -> Tensor"
      : K == detail::NormKind::Norm
          ? "aten::norm.ScalarOpt_dim(Tensor self, Scalar? p=2, int[1] dim=[], bool keepdim=False) -> Tensor"
          : "aten::frobenius_norm.dim(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::floating();
  /// Non-tensor arguments.
  struct Args {
    double p = 2;                          ///< the order
    Dims dim;                              ///< the dims to reduce (empty: every dim)
    bool keepdim = false;                  ///< keep reduced dims with size 1
    bool has_dtype = false;                ///< `dtype` given (linalg_vector_norm)
    ScalarType dtype = ScalarType::Float;  ///< the result dtype when `has_dtype`
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) {
    Args a;
    if constexpr (K == detail::NormKind::LinalgVector) {
      a.p = r.to_double("ord");
      if (!r.is_none("dim")) a.dim = detail::to_dims(r.to_ints("dim"), aten, "dim");
      a.has_dtype = !r.is_none("dtype");
      if (a.has_dtype) a.dtype = detail::from_torch_dtype(r.to_int("dtype"), aten);
    } else if constexpr (K == detail::NormKind::Norm) {
      a.p = r.is_none("p") ? 2.0 : r.to_double("p");
      a.dim = detail::to_dims(r.to_ints("dim"), aten, "dim");
    } else {
      a.dim = detail::to_dims(r.to_ints("dim"), aten, "dim");
    }
    a.keepdim = r.to_bool("keepdim");
    return a;
  }
  /// The reduced dims, checked.
  static detail::Reduced reduced(const TensorMeta& m, const Args& a) {
    return detail::Reduced::of(a.dim, a.dim.empty(), m.dim(), aten,
                               " (dim " + to_string(a.dim) + "; operand " + describe(m) + ")");
  }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    if (!is_floating(in[0].dtype))
      throw TypeError(std::string(aten) + ": expected a floating point input, got " + describe(in[0]));
    if (a.has_dtype && !is_floating(a.dtype))
      throw TypeError(std::string(aten) + ": dtype should be floating point, but got " + std::string(dtype_name(a.dtype)));
    const detail::Reduced red = reduced(in[0], a);
    int64_t n = 1;
    for (int d = 0; d < in[0].dim(); ++d)
      if (red.on[d]) n *= in[0].sizes[d];
    if (n == 0 && (a.p < 0 || std::isinf(a.p)))
      throw ValueError(std::string(aten) + ": cannot compute the " + (std::isinf(a.p) ? std::string(a.p > 0 ? "inf" : "-inf") : std::to_string(a.p)) +
                       " norm on an empty tensor because the operation does not have an identity (operand " +
                       describe(in[0]) + ", dim " + to_string(a.dim) + ")");
    return TensorMeta{a.has_dtype ? a.dtype : in[0].dtype, red.result(in[0].sizes, a.keepdim), Device{}, true};
  }
  /// CPU kernel: per row, in float64.
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    if (out.numel() == 0) return;
    const TensorMeta m{dtype_of<T>(), in[0].sizes(), Device{}, true};
    int64_t n = 0;
    const Tensor<T> rows = detail::as_rows(in[0], reduced(m, a), n);
    const T* x = rows.data_ptr();
    T* o = out.data_ptr();
    const double p = a.p;
    for (int64_t i = 0; i < out.numel(); ++i) {
      const T* row = x + i * n;
      double acc = p == -std::numeric_limits<double>::infinity() ? std::numeric_limits<double>::infinity() : 0.0;
      bool nan = false;
      for (int64_t j = 0; j < n; ++j) {
        const double v = std::abs(static_cast<double>(row[j]));
        nan = nan || std::isnan(v);
        if (p == 0) acc += v != 0 ? 1.0 : 0.0;
        else if (p == 1) acc += v;
        else if (p == 2) acc += v * v;
        else if (std::isinf(p)) acc = p > 0 ? std::max(acc, v) : std::min(acc, v);
        else acc += std::pow(v, p);
      }
      double r = acc;
      if (nan && p != 0) r = std::numeric_limits<double>::quiet_NaN();
      else if (p == 2) r = std::sqrt(acc);
      else if (p != 0 && p != 1 && !std::isinf(p)) r = std::pow(acc, 1.0 / p);
      o[i] = convert<T>(r);
    }
  }
  /// StableHLO: see the struct's docstring.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    const ScalarType t = in[0].dtype;
    const ScalarType ct = t == ScalarType::Double ? t : ScalarType::Float;
    const V x = t == ct ? in[0] : b.convert(in[0], ct);
    const TensorMeta m{t, Dims(x.dims.begin(), x.dims.end()), Device{}, true};
    const std::vector<int64_t> dims = reduced(m, a).list(static_cast<int>(x.dims.size()));
    using RO = detail::reduce_op_t<B>;
    const V ax = b.unary("abs", x);
    const double p = a.p;
    V r;
    if (p == 0) {
      const V nz = b.convert(b.compare("NE", ax, b.constant(0.0, ct, ax.dims)), ct);
      r = b.reduce(nz, b.constant(0.0, ct), RO::Add, dims);
    } else if (std::isinf(p)) {
      r = b.reduce(ax, b.constant(p > 0 ? 0.0 : std::numeric_limits<double>::infinity(), ct), p > 0 ? RO::Max : RO::Min, dims);
    } else if (p == 1) {
      r = b.reduce(ax, b.constant(0.0, ct), RO::Add, dims);
    } else if (p == 2) {
      r = b.unary("sqrt", b.reduce(b.multiply(ax, ax), b.constant(0.0, ct), RO::Add, dims));
    } else {
      const V s = b.reduce(b.binary("power", ax, b.constant(p, ct, ax.dims)), b.constant(0.0, ct), RO::Add, dims);
      r = b.binary("power", s, b.constant(1.0 / p, ct, s.dims));
    }
    if (t != ct) r = b.convert(r, t);
    return b.reshape(r, detail::vec(out));
  }
};
/// torch.linalg.vector_norm.
using LinalgVectorNormOp = VectorNormOp<detail::NormKind::LinalgVector>;
/// torch.norm with a number p (aten::norm).
using NormOp = VectorNormOp<detail::NormKind::Norm>;
/// torch.norm(x) / torch.norm(x, 'fro') (aten::frobenius_norm).
using FrobeniusNormOp = VectorNormOp<detail::NormKind::Frobenius>;

/// `beta * self + alpha * (mat1 @ mat2)` (torch.addmm; `Batched`: torch.baddbmm over a leading
/// batch dim).
///
/// **Shapes:** addmm: `self` broadcastable to `[n, p]`, `mat1: [n, m]`, `mat2: [m, p]` → `[n, p]`;
/// baddbmm: `self` broadcastable to `[b, n, p]`, `batch1: [b, n, m]`, `batch2: [b, m, p]` →
/// `[b, n, p]`.
/// **Dtypes:** every dtype but bool (torch 1.13's cpu lacks float16; we accumulate it in
/// float32, as bfloat16); the three operands must have the same dtype. For integer dtypes
/// `alpha` and `beta` are converted to the dtype (truncated), as torch does. `beta = 0` ignores
/// `self` (its NaN and inf do not propagate).
/// **Errors:** ShapeError naming the op and the shapes for non-matrix operands, inner sizes
/// that differ, or `self` that does not broadcast; TypeError for operands of different dtypes
/// or bool.
/// **Source:** torch.addmm / torch.baddbmm (aten/src/ATen/native/LinearAlgebra.cpp).
/// **Devices:** cpu through `torchtpu::matmul` with the scaling and `self` as its fused
/// epilogue (float32, float64; float16/bfloat16 when alpha and beta are exact in the dtype);
/// PJRT devices through stablehlo.dot_general (float16/bfloat16 accumulate in float32).
template <bool Batched>
struct AddmmBase {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = Batched ? "baddbmm" : "addmm", aten = Batched ? "aten::baddbmm" : "aten::addmm";
  static constexpr std::string_view schema =
      Batched ? "aten::baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor"
              : "aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor";
  ///@}
  /// The dtypes (see the struct's docstring).
  static constexpr DtypeSet dtypes = DtypeSet::numeric();
  /// Non-tensor arguments.
  struct Args {
    double beta = 1;   ///< the factor of `self`
    double alpha = 1;  ///< the factor of the product
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return Args{r.to_double("beta"), r.to_double("alpha")}; }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args&) {
    const int r = Batched ? 3 : 2;
    auto shapes = [&] { return " (operands " + describe(in) + ")"; };
    detail::same_dtypes(in, aten, "self, the two matrices");
    if (in[0].dtype == ScalarType::Bool) throw TypeError(std::string(aten) + ": bool operands are not supported" + shapes());
    if (in[1].dim() != r || in[2].dim() != r)
      throw ShapeError(std::string(aten) + ": expected " + std::to_string(r) + "-D " + (Batched ? "batch1 and batch2" : "mat1 and mat2") + shapes());
    const Dims& a = in[1].sizes;
    const Dims& b = in[2].sizes;
    if (a[r - 1] != b[r - 2] || (Batched && a[0] != b[0]))
      throw ShapeError(std::string(aten) + ": the matrices cannot be multiplied" + shapes());
    Dims out = Batched ? Dims{a[0], a[1], b[2]} : Dims{a[0], b[1]};
    if (!broadcastable_to(in[0].sizes, out))
      throw ShapeError(std::string(aten) + ": self " + to_string(in[0].sizes) + " does not broadcast to the result " + to_string(out) + shapes());
    return TensorMeta{in[0].dtype, out, Device{}, true};
  }
  /// CPU kernel: the product through torchtpu::matmul, the scaling and `self` fused after it.
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    if constexpr (matmul_element<T>) cpu_gemm(in, a, out);  // bool: rejected by `infer`
  }
  /// The cpu kernel's work (every dtype but bool).
  template <matmul_element T>
  static void cpu_gemm(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    if (out.numel() == 0) return;
    const Tensor<T>&s = in[0], &m1 = in[1], &m2 = in[2];
    const T alpha = convert<T>(a.alpha), beta = convert<T>(a.beta);
    const bool exact = static_cast<double>(static_cast<opmath_t<T>>(alpha)) == a.alpha &&
                       static_cast<double>(static_cast<opmath_t<T>>(beta)) == a.beta;
    if (exact || !floating_element<T>) {  // the GEMM's fused epilogue, scalars of type T
      if (a.beta == 0) {
        if (a.alpha == 1) out.copy_(matmul(m1, m2));
        else out.copy_(mul(matmul(m1, m2), alpha));
      } else if (a.alpha == 1 && a.beta == 1) {
        out.copy_(add(matmul(m1, m2), s));
      } else {
        out.copy_(add(mul(matmul(m1, m2), alpha), mul(s, beta)));
      }
    } else {  // 16-bit floats with scalars they cannot hold: the epilogue in float32
      const Tensor<T> p = matmul(m1, m2);
      const float fa = static_cast<float>(a.alpha), fb = static_cast<float>(a.beta);
      if (a.beta == 0) out.copy_(to<T>(mul(to<float>(p), fa)));
      else out.copy_(to<T>(add(mul(to<float>(p), fa), mul(to<float>(s), fb))));
    }
  }
  /// StableHLO: stablehlo.dot_general, then the scaling and `self` (see the struct's docstring).
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    const ScalarType t = in[0].dtype;
    const bool narrow = detail::narrow_float(t);
    const ScalarType ct = narrow ? ScalarType::Float : t;
    detail::dot_dims_t<B> dn;
    if (Batched) {
      dn.lhs_batch = {0};
      dn.rhs_batch = {0};
    }
    dn.lhs_contract = {Batched ? 2 : 1};
    dn.rhs_contract = {Batched ? 1 : 0};
    V r = b.dot_general(in[1], in[2], dn, detail::linalg_precision(t), ct);
    auto scalar = [&](double v, const std::vector<int64_t>& d) {
      return is_floating(ct) ? b.constant(v, ct, d) : b.constant_int(static_cast<int64_t>(v), ct, d);
    };
    if (a.alpha != 1) r = b.multiply(r, scalar(a.alpha, r.dims));
    if (a.beta != 0) {
      V s = detail::broadcast_right(b, narrow ? b.convert(in[0], ct) : in[0], r.dims);
      if (a.beta != 1) s = b.multiply(s, scalar(a.beta, r.dims));
      r = b.add(r, s);
    }
    if (narrow) r = b.convert(r, t);
    return b.reshape(r, detail::vec(out));
  }
};
/// torch.addmm.
using AddmmOp = AddmmBase<false>;
/// torch.baddbmm.
using BaddbmmOp = AddmmBase<true>;

/// Outer product of two vectors: `out[i, j] = self[i] * vec2[j]` (torch.outer; `Ger`: the
/// older name torch.ger, the same op).
///
/// **Shapes:** `self: [n]`, `vec2: [m]` → `[n, m]`.
/// **Dtypes:** all eight; the operands are promoted (torch.result_type); bool gives logical and.
/// **Errors:** ShapeError naming the op and the shapes unless both are 1-D.
/// **Source:** torch.outer (aten/src/ATen/native/LinearAlgebra.cpp: `self.reshape({n, 1}) * vec2`).
/// **Lowering:** two stablehlo.broadcast_in_dim and a multiply (`and` for bool).
template <bool Ger>
struct OuterBase {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = Ger ? "ger" : "outer", aten = Ger ? "aten::ger" : "aten::outer";
  /// The C++ function (torch.ger is torch.outer's old name).
  static constexpr std::string_view api = "outer";
  static constexpr std::string_view schema =
      Ger ? "aten::ger(Tensor self, Tensor vec2) -> Tensor" : "aten::outer(Tensor self, Tensor vec2) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::all();
  /// No non-tensor arguments.
  struct Args {};
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R&) { return {}; }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args&) {
    if (in[0].dim() != 1 || in[1].dim() != 1)
      throw ShapeError(std::string(aten) + ": expected 1-D self and vec2 (operands " + describe(in) + ")");
    return TensorMeta{result_type(in, aten), Dims{in[0].sizes[0], in[1].sizes[0]}, Device{}, true};
  }
  /// CPU kernel: one product per element (logical and for bool).
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args&, Tensor<T>& out) {
    const int64_t n = out.size(0), m = out.size(1);
    const Tensor<T> a = in[0].contiguous(), b = in[1].contiguous();
    const T *x = a.data_ptr(), *y = b.data_ptr();
    T* o = out.data_ptr();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) {
        if constexpr (std::is_same_v<T, bool>) o[i * m + j] = x[i] && y[j];
        else o[i * m + j] = convert<T>(static_cast<opmath_t<T>>(x[i]) * static_cast<opmath_t<T>>(y[j]));
      }
  }
  /// StableHLO: see the struct's docstring.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args&, const Dims& out) {
    const std::vector<int64_t> d = detail::vec(out);
    const V x = b.broadcast_in_dim(in[0], d, {0}), y = b.broadcast_in_dim(in[1], d, {1});
    return in[0].dtype == ScalarType::Bool ? b.binary("and", x, y) : b.multiply(x, y);
  }
};
/// torch.outer.
using OuterOp = OuterBase<false>;
/// torch.ger (torch.outer's older name).
using GerOp = OuterBase<true>;

/// Linear interpolation `self + weight * (end - self)` (torch.lerp), computed as torch does:
/// `|weight| < 0.5 ? self + weight * (end - self) : end - (end - self) * (1 - weight)`.
///
/// **Overloads:** `aten::lerp.Tensor(self, end, weight)` (the schema) and `aten::lerp.Scalar(self,
/// end, Scalar weight)`: a number in weight's place becomes a 0-dim tensor of self's dtype.
/// **Shapes:** the three operands broadcast.
/// **Dtypes:** floating (torch 1.13's cpu lacks float16; we compute it in float32 as
/// bfloat16); `self` and `end` must have the same dtype, and so must a weight with dims (a
/// 0-dim weight is converted).
/// **Errors:** TypeError for integer or bool operands or differing dtypes; ShapeError naming the
/// op and the shapes when they do not broadcast.
/// **Source:** torch.lerp (aten/src/ATen/native/Lerp.h, `lerp`, `is_lerp_weight_small`).
/// **Lowering:** the same formula with stablehlo.select; float16/bfloat16 in float32.
struct LerpOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "lerp", aten = "aten::lerp";
  static constexpr std::string_view schema = "aten::lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor";
  ///@}
  /// The dtypes (see the struct's docstring).
  static constexpr DtypeSet dtypes = DtypeSet::floating();
  /// No non-tensor arguments.
  struct Args {};
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R&) { return {}; }
  /// The operands `self, end, weight`: a number in weight's place (`lerp.Scalar`) becomes a 0-dim
  /// tensor of self's dtype.
  template <class R>
  static std::vector<AnyTensor> tensors(const R& r) {
    const Arg& w = r.get("weight");
    const Arg& s = r.get("self");
    if (std::holds_alternative<AnyTensor>(w) || !std::holds_alternative<AnyTensor>(s)) return r.tensors();
    const detail::Scalar v = detail::Scalar::read(w, aten, "weight");
    const AnyTensor& self = std::get<AnyTensor>(s);
    const AnyTensor wt = AnyTensor::dispatch(self.dtype(), [&]<class T>(std::type_identity<T>) {
      return AnyTensor(full<T>(Dims{}, v.as<T>()));
    });
    return {self, std::get<AnyTensor>(r.get("end")), wt};
  }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args&) {
    if (in.size() != 3) throw ValueError(std::string(aten) + ": expected self, end and weight (operands " + describe(in) + ")");
    if (!is_floating(in[0].dtype) || in[1].dtype != in[0].dtype || (in[2].dim() > 0 && in[2].dtype != in[0].dtype) ||
        !is_floating(in[2].dtype))
      throw TypeError(std::string(aten) + ": expected floating self, end and weight of the same dtype (operands " +
                      describe(in) + ")");
    const Dims s = broadcast_shapes(broadcast_shapes(in[0].sizes, in[1].sizes, aten), in[2].sizes, aten);
    return TensorMeta{in[0].dtype, s, Device{}, true};
  }
  /// CPU kernel: the formula in opmath (float32 for 16-bit floats), broadcast.
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args&, Tensor<T>& out) {
    if constexpr (floating_element<T>) {
      if (out.numel() == 0) return;
      using M = opmath_t<T>;
      const Tensor<T> s = in[0].expand(out.sizes()).contiguous(), e = in[1].expand(out.sizes()).contiguous(),
                      w = in[2].expand(out.sizes()).contiguous();
      const T *ps = s.data_ptr(), *pe = e.data_ptr(), *pw = w.data_ptr();
      T* o = out.data_ptr();
      for (int64_t i = 0; i < out.numel(); ++i) {
        const M a = static_cast<M>(ps[i]), b = static_cast<M>(pe[i]), t = static_cast<M>(pw[i]);
        const M d = b - a;
        o[i] = convert<T>(static_cast<M>(std::abs(t) < M(0.5) ? a + t * d : b - d * (M(1) - t)));
      }
    }
  }
  /// StableHLO: see the struct's docstring.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args&, const Dims& out) {
    const ScalarType t = in[0].dtype;
    const ScalarType ct = detail::narrow_float(t) ? ScalarType::Float : t;
    const std::vector<int64_t> d = detail::vec(out);
    auto op = [&](const V& v) { return detail::broadcast_right(b, v.dtype == ct ? v : b.convert(v, ct), d); };
    const V s = op(in[0]), e = op(in[1]), w = op(in[2]);
    const V diff = b.subtract(e, s);
    const V lo = b.add(s, b.multiply(w, diff));
    const V hi = b.subtract(e, b.multiply(diff, b.subtract(b.constant(1.0, ct, d), w)));
    const V small = b.compare("LT", b.unary("abs", w), b.constant(0.5, ct, d));
    const V r = b.select(small, lo, hi);
    return ct == t ? r : b.convert(r, t);
  }
};

/// `self` with NaN, +inf and -inf replaced (torch.nan_to_num): by `nan` (default 0), `posinf`
/// (default: the dtype's largest finite value) and `neginf` (default: its lowest).
///
/// **Shapes:** `self: [...]` → the same shape.
/// **Dtypes:** all eight; integer and bool inputs are returned unchanged (a copy). Replacement
/// values are converted to the dtype (out of range: ±inf, as torch).
/// **Source:** torch.nan_to_num (aten/src/ATen/native/UnaryOps.cpp, cpu nan_to_num kernel).
/// **Lowering:** three stablehlo.select.
struct NanToNumOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "nan_to_num", aten = "aten::nan_to_num";
  static constexpr std::string_view schema =
      "aten::nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::all();
  /// Non-tensor arguments.
  struct Args {
    bool has_nan = false;     ///< `nan` given
    bool has_posinf = false;  ///< `posinf` given
    bool has_neginf = false;  ///< `neginf` given
    double nan = 0;           ///< the replacement of NaN (when given)
    double posinf = 0;        ///< the replacement of +inf (when given)
    double neginf = 0;        ///< the replacement of -inf (when given)
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) {
    Args a;
    a.has_nan = !r.is_none("nan");
    a.has_posinf = !r.is_none("posinf");
    a.has_neginf = !r.is_none("neginf");
    if (a.has_nan) a.nan = r.to_double("nan");
    if (a.has_posinf) a.posinf = r.to_double("posinf");
    if (a.has_neginf) a.neginf = r.to_double("neginf");
    return a;
  }
  /// The three replacements for dtype `t`, each rounded to it: nan, posinf, neginf.
  static std::tuple<double, double, double> values(const Args& a, ScalarType t) {
    return {detail::round_to(a.has_nan ? a.nan : 0.0, t), detail::round_to(a.has_posinf ? a.posinf : detail::max_finite(t), t),
            detail::round_to(a.has_neginf ? a.neginf : -detail::max_finite(t), t)};
  }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args&) { return TensorMeta{in[0].dtype, in[0].sizes, Device{}, true}; }
  /// CPU kernel: one pass.
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    if (out.numel() == 0) return;
    if constexpr (!floating_element<T>) {
      out.copy_(in[0]);
    } else {
      const auto [vn, vp, vm] = values(a, dtype_of<T>());
      const T rn = convert<T>(vn), rp = convert<T>(vp), rm = convert<T>(vm);
      const Tensor<T> x = in[0].contiguous();
      const T* p = x.data_ptr();
      T* o = out.data_ptr();
      for (int64_t i = 0; i < out.numel(); ++i) {
        const auto v = static_cast<opmath_t<T>>(p[i]);
        o[i] = std::isnan(v) ? rn : std::isinf(v) ? (v > 0 ? rp : rm) : p[i];
      }
    }
  }
  /// StableHLO: see the struct's docstring.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims&) {
    const V& x = in[0];
    if (!is_floating(x.dtype)) return x;
    const auto [vn, vp, vm] = values(a, x.dtype);
    const V inf = b.constant(std::numeric_limits<double>::infinity(), x.dtype, x.dims);
    V r = b.select(b.compare("NE", x, x), b.constant(vn, x.dtype, x.dims), x);
    r = b.select(b.compare("EQ", x, inf), b.constant(vp, x.dtype, x.dims), r);
    return b.select(b.compare("EQ", x, b.negate(inf)), b.constant(vm, x.dtype, x.dims), r);
  }
};

// Each op's entry point, compiled once in TORCHTPU_SEPARATE_OPS programs (ops/library.hpp).
TORCHTPU_LIBRARY_OP(EinsumOp);
TORCHTPU_LIBRARY_OP(LinalgVectorNormOp);
TORCHTPU_LIBRARY_OP(NormOp);
TORCHTPU_LIBRARY_OP(FrobeniusNormOp);
TORCHTPU_LIBRARY_OP(AddmmOp);
TORCHTPU_LIBRARY_OP(BaddbmmOp);
TORCHTPU_LIBRARY_OP(OuterOp);
TORCHTPU_LIBRARY_OP(GerOp);
TORCHTPU_LIBRARY_OP(LerpOp);
TORCHTPU_LIBRARY_OP(NanToNumOp);

}  // namespace ops

/// Einstein summation over `operands` (torch.einsum); see ops::EinsumOp.
/// **Example:** `einsum("bij,bjk->bik", {a, b})`.
template <element T>
Tensor<T> einsum(std::string_view equation, const std::vector<Tensor<T>>& operands) {
  return ops::call_typed<ops::EinsumOp, T>(std::span<const Tensor<T>>(operands), ops::EinsumOp::make(equation));
}
/// `einsum` of a braced list of operands.
template <element T>
Tensor<T> einsum(std::string_view equation, std::initializer_list<Tensor<T>> operands) {
  return einsum(equation, std::vector<Tensor<T>>(operands));
}
/// Run-time typed `einsum`.
template <std::same_as<AnyTensor> A>
A einsum(std::string_view equation, const std::vector<A>& operands) {
  return ops::call<ops::EinsumOp>(std::span<const AnyTensor>(operands), ops::EinsumOp::make(equation));
}

/// Vector `ord`-norm of `x` over `dim` (every dim when None), torch.linalg.vector_norm; see
/// ops::VectorNormOp.
template <element T, int Rank>
Tensor<T> vector_norm(const Tensor<T, Rank>& x, double ord = 2, std::optional<Dims> dim = std::nullopt,
                      bool keepdim = false) {
  return ops::detail::call1<ops::LinalgVectorNormOp>(x, {ord, dim.value_or(Dims{}), keepdim, false, ScalarType::Float});
}
/// Run-time typed `vector_norm`; `dtype` (when given) is the result's (the input converted first).
template <std::same_as<AnyTensor> A>
A vector_norm(const A& x, double ord = 2, std::optional<Dims> dim = std::nullopt, bool keepdim = false,
              std::optional<ScalarType> dtype = std::nullopt) {
  return ops::detail::call1<ops::LinalgVectorNormOp>(
      x, {ord, dim.value_or(Dims{}), keepdim, dtype.has_value(), dtype.value_or(ScalarType::Float)});
}

/// `beta * self + alpha * (mat1 @ mat2)` (torch.addmm); see ops::AddmmBase.
template <element T>
Tensor<T> addmm(const Tensor<T>& self, const Tensor<T>& mat1, const Tensor<T>& mat2, double beta = 1, double alpha = 1) {
  const Tensor<T> in[] = {self, mat1, mat2};
  return ops::call_typed<ops::AddmmOp, T>(std::span<const Tensor<T>>(in), {beta, alpha});
}
/// Run-time typed `addmm`.
template <std::same_as<AnyTensor> A>
A addmm(const A& self, const A& mat1, const A& mat2, double beta = 1, double alpha = 1) {
  const AnyTensor in[] = {self, mat1, mat2};
  return ops::call<ops::AddmmOp>(std::span<const AnyTensor>(in), {beta, alpha});
}
/// `beta * self + alpha * (batch1 @ batch2)` per batch (torch.baddbmm); see ops::AddmmBase.
template <element T>
Tensor<T> baddbmm(const Tensor<T>& self, const Tensor<T>& batch1, const Tensor<T>& batch2, double beta = 1,
                  double alpha = 1) {
  const Tensor<T> in[] = {self, batch1, batch2};
  return ops::call_typed<ops::BaddbmmOp, T>(std::span<const Tensor<T>>(in), {beta, alpha});
}
/// Run-time typed `baddbmm`.
template <std::same_as<AnyTensor> A>
A baddbmm(const A& self, const A& batch1, const A& batch2, double beta = 1, double alpha = 1) {
  const AnyTensor in[] = {self, batch1, batch2};
  return ops::call<ops::BaddbmmOp>(std::span<const AnyTensor>(in), {beta, alpha});
}

/// Outer product of two vectors (torch.outer); see ops::OuterBase.
template <element T>
Tensor<T> outer(const Tensor<T>& self, const Tensor<T>& vec2) {
  const Tensor<T> in[] = {self, vec2};
  return ops::call_typed<ops::OuterOp, T>(std::span<const Tensor<T>>(in), {});
}
/// Run-time typed `outer` (the operands promoted).
template <std::same_as<AnyTensor> A>
A outer(const A& self, const A& vec2) {
  const AnyTensor in[] = {self, vec2};
  return ops::call<ops::OuterOp>(std::span<const AnyTensor>(in), {});
}

/// `self + weight * (end - self)` (torch.lerp) with a tensor weight; see ops::LerpOp.
template <element T>
Tensor<T> lerp(const Tensor<T>& self, const Tensor<T>& end, const Tensor<T>& weight) {
  const Tensor<T> in[] = {self, end, weight};
  return ops::call_typed<ops::LerpOp, T>(std::span<const Tensor<T>>(in), {});
}
/// torch.lerp with a number weight (lerp.Scalar: the weight as a 0-dim tensor of T).
template <element T>
Tensor<T> lerp(const Tensor<T>& self, const Tensor<T>& end, double weight) {
  return lerp(self, end, full<T>(Dims{}, convert<T>(weight)));
}
/// Run-time typed `lerp`.
template <std::same_as<AnyTensor> A>
A lerp(const A& self, const A& end, const A& weight) {
  const AnyTensor in[] = {self, end, weight};
  return ops::call<ops::LerpOp>(std::span<const AnyTensor>(in), {});
}

/// `x` with NaN, +inf and -inf replaced (torch.nan_to_num); see ops::NanToNumOp.
template <element T, int Rank>
Tensor<T> nan_to_num(const Tensor<T, Rank>& x, std::optional<double> nan = std::nullopt,
                     std::optional<double> posinf = std::nullopt, std::optional<double> neginf = std::nullopt) {
  return ops::detail::call1<ops::NanToNumOp>(x, {nan.has_value(), posinf.has_value(), neginf.has_value(), nan.value_or(0),
                                                 posinf.value_or(0), neginf.value_or(0)});
}
/// Run-time typed `nan_to_num`.
template <std::same_as<AnyTensor> A>
A nan_to_num(const A& x, std::optional<double> nan = std::nullopt, std::optional<double> posinf = std::nullopt,
             std::optional<double> neginf = std::nullopt) {
  return ops::detail::call1<ops::NanToNumOp>(x, {nan.has_value(), posinf.has_value(), neginf.has_value(), nan.value_or(0),
                                                 posinf.value_or(0), neginf.value_or(0)});
}

}  // namespace torchtpu
