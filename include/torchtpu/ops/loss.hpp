// torchtpu/ops/loss.hpp — operator library, nn family: log_softmax, the losses (mse_loss,
// nll_loss / nll_loss_nd, cross_entropy_loss), dropout (with its counter-based random stream,
// PhiloxGenerator), pixel_shuffle / pixel_unshuffle and embedding_bag. Each op is one definition
// (ops/library.hpp) that the typed API (`torchtpu::mse_loss(Tensor<T>, ...)`), the run-time API
// (`AnyTensor`), the eager PJRT devices and model graphs (`aten::mse_loss`, ...) all call.
// Tests: tests/ops/test_loss.cpp (cpu, every dtype, torch 1.13 values),
// tests/device_ops/test_device_loss.cpp (PJRT devices), tests/conformance (torch 1.13).
//
// The typed `log_softmax(Tensor<T>, dim)` stays the fused expression node of ops/reduce.hpp
// (softmax likewise); LogSoftmaxOp is what model graphs, `AnyTensor` code and the PJRT devices
// call, and its float kernels evaluate that same node.
//
// Optional tensor operands (`Tensor? weight=None`) follow ops/norm.hpp's rule: an absent one is
// left out of the operand list on every path and `Args::present` records which are there.
//
// Not in the umbrella header (torchtpu.hpp): include <torchtpu/ops/loss.hpp>.
#pragma once
#include <algorithm>    // std::fill_n, std::copy_n
#include <atomic>       // std::atomic (PhiloxGenerator's offset)
#include <bit>          // std::popcount
#include <array>        // std::array (philox blocks)
#include <cmath>        // std::exp, std::log, std::isnan
#include <cstdint>      // int64_t, uint32_t, uint64_t
#include <limits>       // std::numeric_limits
#include <optional>     // std::optional
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <type_traits>  // std::is_same_v
#include <vector>       // std::vector

#include "indexing.hpp"  // detail::check_index, require_index, reduce_op_t, lower_take, check_range
#include "library.hpp"   // TensorMeta, DtypeSet, ops::call, call_typed, call_mixed
#include "norm.hpp"      // detail::present_tensors, present_bit, slot
#include "reduce.hpp"    // log_softmax (the fused expression node)
#include "shape.hpp"     // detail::vec, detail::call1

namespace torchtpu {

/// How a loss reduces its per-element values (torch's `reduction=` strings; aten passes the int).
enum class Reduction : int64_t {
  None = 0,  ///< no reduction: the per-element losses
  Mean = 1,  ///< their (weighted) mean
  Sum = 2,   ///< their sum
};

/// The reduction of each bag of embedding_bag (torch's `mode=` strings; aten passes the int).
enum class EmbeddingBagMode : int64_t {
  Sum = 0,   ///< the rows' sum (optionally weighted by per_sample_weights)
  Mean = 1,  ///< their mean
  Max = 2,   ///< their elementwise maximum
};

namespace ops::detail {

/// Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as 1, 2, 3",
/// SC 2011; constants and round function of its Random123 reference code): the 128-bit block
/// of counter `c` under key `k`.
inline std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> c, std::array<uint32_t, 2> k) {
  constexpr uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u, W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k[0] += W0;
      k[1] += W1;
    }
    const uint64_t p0 = uint64_t(M0) * c[0], p1 = uint64_t(M1) * c[2];
    c = {uint32_t(p1 >> 32) ^ c[1] ^ k[0], uint32_t(p1), uint32_t(p0 >> 32) ^ c[3] ^ k[1], uint32_t(p0)};
  }
  return c;
}

}  // namespace ops::detail

/// A counter-based random stream for dropout: a 64-bit seed (the Philox key) and a 64-bit
/// offset (the subsequence; each dropout call takes the next one). The bits of element `i` of
/// a call depend only on (seed, offset, i), never on threads or on how the work is split.
/// `torchtpu::Generator` (core/factories.hpp) is the sequential stream of rand/randn.
///
/// **Thread safety:** `reserve` may be called concurrently (atomic); `manual_seed` may not race
/// with it.
/// **Source:** Philox4x32-10 (ops::detail::philox4x32_10).
class PhiloxGenerator {
 public:
  /// A stream with seed `seed`, at offset 0.
  explicit PhiloxGenerator(uint64_t seed = 67280421310721ull) : seed_(seed) {}
  /// A copy: the same seed, at `o`'s offset (the copy then draws independently).
  PhiloxGenerator(const PhiloxGenerator& o) : seed_(o.seed_), offset_(o.offset_.load()) {}
  /// Assigns `o`'s seed and offset.
  PhiloxGenerator& operator=(const PhiloxGenerator& o) {
    seed_ = o.seed_;
    offset_ = o.offset_.load();
    return *this;
  }
  /// Restarts the stream with seed `seed` (offset 0): the same calls give the same masks.
  void manual_seed(uint64_t seed) {
    seed_ = seed;
    offset_ = 0;
  }
  /// The seed.
  uint64_t seed() const noexcept { return seed_; }
  /// The next subsequence to be reserved.
  uint64_t offset() const noexcept { return offset_.load(); }
  /// Takes the next subsequence (one per dropout call); its offset.
  uint64_t reserve() noexcept { return offset_.fetch_add(1); }
  /// The 32-bit word `i` of subsequence `offset` under `seed`.
  static uint32_t bits(uint64_t seed, uint64_t offset, uint64_t i) {
    const uint64_t block = i / 4;
    const std::array<uint32_t, 4> r = ops::detail::philox4x32_10(
        {uint32_t(block), uint32_t(block >> 32), uint32_t(offset), uint32_t(offset >> 32)},
        {uint32_t(seed), uint32_t(seed >> 32)});
    return r[i % 4];
  }

 private:
  uint64_t seed_;
  std::atomic<uint64_t> offset_{0};
};

/// The process-wide stream that dropout uses when no generator is given (model graphs' aten::dropout).
inline PhiloxGenerator& default_philox_generator() {
  static PhiloxGenerator g;
  return g;
}
/// Seeds the default dropout stream (torch.manual_seed for dropout).
inline void manual_seed(uint64_t seed) { default_philox_generator().manual_seed(seed); }

namespace ops {
namespace detail {

/// Checks the operands: `required` of them plus one per bit of `present`, every one defined.
/// **Errors:** ValueError naming `op` otherwise (an undefined operand passed to ops::call).
inline void check_operands(std::span<const TensorMeta> in, size_t required, uint8_t present, std::string_view op) {
  bool ok = in.size() == required + static_cast<size_t>(std::popcount(static_cast<unsigned>(present)));
  for (const TensorMeta& m : in) ok = ok && m.defined;
  if (!ok)
    throw ValueError(std::string(op) + ": the operands (" + describe(in) +
                     ") do not match the optional tensors present in the arguments (absent ones are left out)");
}

/// Checks `reduction` (0 none, 1 mean, 2 sum). **Errors:** ValueError naming `op`.
inline void check_reduction(int64_t reduction, std::string_view op) {
  if (reduction < 0 || reduction > 2)
    throw ValueError(std::string(op) + ": reduction " + std::to_string(reduction) +
                     " is not valid (0: none, 1: mean, 2: sum)");
}

/// `x` in the computation type of the lowerings: float32 for float16/bfloat16, else as is.
template <class B, class V>
V widen(B& b, const V& x) {
  return x.dtype == ScalarType::Half || x.dtype == ScalarType::BFloat16 ? b.convert(x, ScalarType::Float) : x;
}

/// The sum of every element of `x` (a 0-dim value).
template <class B, class V>
V lower_sum_all(B& b, const V& x) {
  std::vector<int64_t> all;
  for (size_t d = 0; d < x.dims.size(); ++d) all.push_back(static_cast<int64_t>(d));
  return b.reduce(x, b.constant(0.0, x.dtype), reduce_op_t<B>::Add, all);
}

/// The floating result dtype of a loss, or TypeError naming `op` and the operands.
inline ScalarType floating_result(ScalarType t, std::span<const TensorMeta> in, std::string_view op) {
  if (!is_floating(t))
    throw TypeError(std::string(op) + ": expected a floating point input (float16, bfloat16, float32, float64), got " +
                    std::string(dtype_name(t)) + " (operands " + describe(in) + ")");
  return t;
}

}  // namespace detail

/// `log(softmax(self))` along `dim` (torch.log_softmax / F.log_softmax), computed stably as
/// `x - max - log(sum(exp(x - max)))`.
///
/// **Shapes:** `self: [...]` → the same shape (a 0-dim `self` takes dim 0 or -1 and gives 0).
/// **Dtypes:** float16, bfloat16, float32, float64 (torch 1.13's cpu lacks float16); with
/// `dtype`, `self` is converted to it first and the result has it. float16/bfloat16 compute
/// in float32 and round once. Integer and bool `self` without a floating `dtype`: TypeError.
/// **Errors:** TypeError as above; IndexError for `dim` out of range (naming the op).
/// **Source:** torch.log_softmax (aten/src/ATen/native/SoftMax.cpp). The cpu evaluates the
/// fused `SoftmaxNode` of ops/reduce.hpp (the typed `torchtpu::log_softmax`).
/// **Lowering:** max-reduce, subtract, exp, add-reduce, log, subtract (float32 for 16-bit floats).
struct LogSoftmaxOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "log_softmax", aten = "aten::log_softmax";
  static constexpr std::string_view schema =
      "aten::log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor";
  ///@}
  /// The dtypes of the result.
  static constexpr DtypeSet dtypes = DtypeSet::floating();
  /// Non-tensor arguments.
  struct Args {
    int64_t dim = -1;                      ///< the dim to normalize along
    bool has_dtype = false;                ///< false: `self`'s dtype
    ScalarType dtype = ScalarType::Float;  ///< the result dtype when `has_dtype`
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) {
    Args a{r.to_int("dim"), !r.is_none("dtype"), ScalarType::Float};
    if (a.has_dtype) a.dtype = detail::from_torch_dtype(r.to_int("dtype"), aten);
    return a;
  }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    const ScalarType t = detail::floating_result(a.has_dtype ? a.dtype : in[0].dtype, in, aten);
    (void)wrap_dim(a.dim, in[0].dim(), aten);
    return TensorMeta{t, in[0].sizes, Device{}, true};
  }
  /// CPU kernel: the fused softmax node (ops/reduce.hpp).
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    if (out.numel() == 0) return;
    out.copy_(torchtpu::log_softmax(in[0], a.dim));
  }
  /// StableHLO: see the struct's docstring.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    if (out.size() == 0) return b.constant(0.0, in[0].dtype, {});
    if (numel(out) == 0) return in[0];
    const V x = detail::widen(b, in[0]);
    const V r = detail::lower_softmax(b, x, wrap_dim(a.dim, out.size(), aten), true);
    return r.dtype == in[0].dtype ? r : b.convert(r, in[0].dtype);
  }
};

/// Mean squared error (torch.nn.functional.mse_loss): `(self - target)^2`, broadcast as torch
/// broadcasts, then reduced.
///
/// **Shapes:** `self`, `target` broadcastable → their broadcast shape (`reduction` none) or `[]`.
/// **Dtypes:** float16, bfloat16, float32, float64 (torch 1.13's cpu lacks bfloat16); the result
/// is `torch.result_type(self, target)` (float32 and int64 give float32), which must be floating.
/// The cpu computes in float64 and rounds once; mean of no elements is NaN.
/// **Errors:** ShapeError for shapes that do not broadcast; ValueError for a `reduction` not in
/// {0, 1, 2}; TypeError for a non-floating result dtype.
/// **Source:** torch.nn.functional.mse_loss (aten/src/ATen/native/Loss.cpp, mse_loss).
/// **Lowering:** broadcast, subtract, multiply, add-reduce (float32 for 16-bit floats), divide.
struct MseLossOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "mse_loss", aten = "aten::mse_loss";
  static constexpr std::string_view schema = "aten::mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor";
  ///@}
  /// The dtypes of the result.
  static constexpr DtypeSet dtypes = DtypeSet::floating();
  /// Non-tensor arguments.
  struct Args {
    int64_t reduction = 1;  ///< 0 none, 1 mean, 2 sum
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return Args{r.to_int("reduction")}; }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    detail::check_reduction(a.reduction, aten);
    const ScalarType t = detail::floating_result(promote_types(in[0].dtype, in[1].dtype), in, aten);
    const Dims s = broadcast_shapes(in[0].sizes, in[1].sizes, aten);
    return TensorMeta{t, a.reduction == 0 ? s : Dims{}, Device{}, true};
  }
  /// CPU kernel: float64 per element, rounded once.
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    const Dims s = broadcast_shapes(in[0].sizes(), in[1].sizes(), aten);
    const Tensor<T> x = in[0].expand(s).contiguous(), y = in[1].expand(s).contiguous();
    const int64_t n = numel(s);
    T* o = out.data_ptr();
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double d = static_cast<double>(x.data_ptr()[i]) - static_cast<double>(y.data_ptr()[i]);
      if (a.reduction == 0) o[i] = convert<T>(d * d);
      else sum += d * d;
    }
    if (a.reduction != 0) o[0] = convert<T>(a.reduction == 1 ? sum / static_cast<double>(n) : sum);
  }
  /// StableHLO: see the struct's docstring.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims&) {
    Dims s = broadcast_shapes(Dims(std::span<const int64_t>(in[0].dims)), Dims(std::span<const int64_t>(in[1].dims)), aten);
    const std::vector<int64_t> sv = detail::vec(s);
    auto bcast = [&](const V& v) {
      std::vector<int64_t> bd;
      const int64_t off = static_cast<int64_t>(sv.size() - v.dims.size());
      for (size_t d = 0; d < v.dims.size(); ++d) bd.push_back(off + static_cast<int64_t>(d));
      return b.broadcast_in_dim(v, sv, bd);
    };
    const V x = detail::widen(b, bcast(in[0])), y = detail::widen(b, bcast(in[1]));
    const V d = b.subtract(x, y);
    V r = b.multiply(d, d);
    if (a.reduction != 0) {
      r = detail::lower_sum_all(b, r);
      if (a.reduction == 1) r = b.divide(r, b.constant(static_cast<double>(numel(s)), r.dtype));
    }
    return r.dtype == in[0].dtype ? r : b.convert(r, in[0].dtype);
  }
};

namespace detail {

/// The view of a classification input and its target: `input: [N, C, d...]` (or `[C]`: N = 1
/// without a batch dim) read as `[N, C, inner]`, `target: [N, d...]` as `[N, inner]`.
struct ClassPlan {
  int64_t n = 1, c = 1, inner = 1;  ///< the view
  bool batched = true;              ///< false for a `[C]` input

  static ClassPlan of(const Dims& x) {
    ClassPlan p;
    if (x.size() == 1) {
      p.batched = false;
      p.c = x[0];
      return p;
    }
    p.n = x[0];
    p.c = x[1];
    for (int d = 2; d < x.size(); ++d) p.inner *= x[d];
    return p;
  }
  /// The shape of the per-element losses (the target's).
  Dims target_shape(const Dims& x) const {
    Dims t;
    for (int d = 0; d < x.size(); ++d)
      if (d != 1 && batched) t.push_back(x[d]);
    return t;
  }
};

/// The shape rule shared by nll_loss, nll_loss_nd and cross_entropy_loss with class-index
/// targets: `target` int64 of the input's shape without dim 1 (`[]` for a `[C]` input),
/// `weight` (if present) `[C]`. **Errors:** ValueError/ShapeError/TypeError naming `op` and the
/// operands.
inline void check_class_target(std::span<const TensorMeta> in, bool has_weight, std::string_view op) {
  const TensorMeta &x = in[0], &t = in[1];
  if (x.dim() < 1)
    throw ValueError(std::string(op) + ": expected 1 or more dimensions for the input, got 0 (operands " + describe(in) + ")");
  if (t.dtype != ScalarType::Int64)
    throw TypeError(std::string(op) + ": expected a target of dtype int64 (class indices), got " +
                    std::string(dtype_name(t.dtype)) + " (operands " + describe(in) + ")");
  if (x.dim() >= 2 && (t.dim() < 1 || t.sizes[0] != x.sizes[0]))
    throw ValueError(std::string(op) + ": expected input batch_size (" + std::to_string(x.sizes[0]) +
                     ") to match target batch_size (" + (t.dim() < 1 ? std::string("none") : std::to_string(t.sizes[0])) +
                     ") (operands " + describe(in) + ")");
  const ClassPlan p = ClassPlan::of(x.sizes);
  if (t.sizes != p.target_shape(x.sizes))
    throw ShapeError(std::string(op) + ": expected a target of shape " + to_string(p.target_shape(x.sizes)) + ", got " +
                     to_string(t.sizes) + " (operands " + describe(in) + ")");
  if (has_weight && (in.size() < 3 || in[2].dim() != 1 || in[2].sizes[0] != p.c))
    throw ShapeError(std::string(op) + ": weight tensor should be defined either for all " + std::to_string(p.c) +
                     " classes or no classes (operands " + describe(in) + ")");
}

/// The cpu loss of class-index targets: `lp: [N, C, inner]` (log-probabilities, contiguous,
/// float64), `t: [N * inner]` int64, `w: [C]` or empty. `smoothing` > 0 adds torch's label
/// smoothing term. Writes the per-element losses (`reduction` 0) or their reduction to `out`.
/// **Errors:** IndexError naming `op` for a target outside `[0, C)` that is not `ignore_index`.
template <element T>
void class_loss_cpu(const ClassPlan& p, const std::vector<double>& lp, const int64_t* t, const std::vector<double>& w,
                    int64_t reduction, int64_t ignore_index, double smoothing, std::string_view op, Tensor<T>& out) {
  const int64_t m = p.n * p.inner;
  const double C = static_cast<double>(p.c);
  double nll_sum = 0, smooth_sum = 0, wsum = 0;
  int64_t count = 0;
  T* o = out.data_ptr();
  for (int64_t k = 0; k < m; ++k) {
    const int64_t n = k / p.inner, i = k % p.inner, cls = t[k];
    if (cls == ignore_index) {
      if (reduction == 0) o[k] = convert<T>(0.0);
      continue;
    }
    if (cls < 0 || cls >= p.c)
      throw IndexError(std::string(op) + ": target " + std::to_string(cls) + " is out of bounds for " +
                       std::to_string(p.c) + " classes");
    const double wt = w.empty() ? 1.0 : w[size_t(cls)];
    const double* row = lp.data() + (n * p.c) * p.inner + i;
    const double nll = -wt * row[cls * p.inner];
    double smooth = 0;  // only with smoothing: 0 * inf would be NaN
    if (smoothing > 0)
      for (int64_t c = 0; c < p.c; ++c) smooth -= row[c * p.inner] * (w.empty() ? 1.0 : w[size_t(c)]);
    if (reduction == 0) o[k] = convert<T>(smoothing > 0 ? (1 - smoothing) * nll + smoothing / C * smooth : nll);
    nll_sum += nll;
    smooth_sum += smooth;
    wsum += wt;
    ++count;
  }
  if (reduction == 0) return;
  double r = reduction == 1 ? nll_sum / wsum : nll_sum;
  if (smoothing > 0) {
    // torch: mean divides the smoothing sum by the counted targets' weights, or their count without weight
    const double sm = reduction == 1 ? smooth_sum / (w.empty() ? static_cast<double>(count) : wsum) : smooth_sum;
    r = (1 - smoothing) * r + smoothing / C * sm;
  }
  o[0] = convert<T>(r);
}

/// Log-probabilities of `x: [N, C, inner]` along C in float64 (`log_softmax` false: `x` as is).
template <element T>
std::vector<double> class_logp(const ClassPlan& p, const Tensor<T>& x, bool log_softmax) {
  const Tensor<T> xc = x.contiguous();
  const T* xp = xc.data_ptr();
  const int64_t total = p.n * p.c * p.inner;
  std::vector<double> lp(static_cast<size_t>(total));
  for (int64_t k = 0; k < total; ++k) lp[size_t(k)] = static_cast<double>(xp[k]);
  if (!log_softmax) return lp;
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t i = 0; i < p.inner; ++i) {
      double* row = lp.data() + n * p.c * p.inner + i;
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t c = 0; c < p.c; ++c) mx = std::isnan(row[c * p.inner]) || row[c * p.inner] > mx ? row[c * p.inner] : mx;
      double s = 0;
      for (int64_t c = 0; c < p.c; ++c) s += std::exp(row[c * p.inner] - mx);
      const double lse = std::log(s);
      for (int64_t c = 0; c < p.c; ++c) row[c * p.inner] = row[c * p.inner] - mx - lse;
    }
  return lp;
}

/// The lowering of the class-index losses: `lp: [N, C, inner]` log-probabilities (float32 or
/// float64), `t: [N, inner]` int64, `w: [C]` (or invalid), the result as `out` in dtype `rt`.
/// The target class is picked by a one-hot mask (`t == iota`), targets equal to `ignore_index`
/// pick nothing; a run-time check reports targets out of range as the cpu's IndexError.
template <class B, class V>
V lower_class_loss(B& b, const ClassPlan& p, const V& lp, const V& t, const V* w, int64_t reduction,
                   int64_t ignore_index, double smoothing, ScalarType rt, const Dims& out, std::string_view op) {
  using RO = reduce_op_t<B>;
  const ScalarType ct = lp.dtype;
  const std::vector<int64_t> full{p.n, p.c, p.inner}, nt{p.n, p.inner};
  const V valid = b.compare("NE", t, b.constant_int(ignore_index, ScalarType::Int64, nt));
  if (p.n * p.inner > 0) {
    const V bad = b.binary("or", b.compare("LT", t, b.constant_int(0, ScalarType::Int64, nt)),
                           b.compare("GE", t, b.constant_int(p.c, ScalarType::Int64, nt)));
    b.runtime_check(b.binary("and", valid, bad), "IndexError: " + std::string(op) + ": a target is out of bounds for " +
                                                     std::to_string(p.c) + " classes");
  }
  const V mask = b.binary("and", b.compare("EQ", b.broadcast_in_dim(t, full, {0, 2}), b.iota(ScalarType::Int64, full, 1)),
                          b.broadcast_in_dim(valid, full, {0, 2}));
  const V zero = b.constant(0.0, ct, full);
  const V wb = w ? b.broadcast_in_dim(*w, full, {1}) : b.constant(1.0, ct, full);
  const V picked = b.reduce(b.select(mask, lp, zero), b.constant(0.0, ct), RO::Add, {1});  // [N, inner]
  const V wt = b.reduce(b.select(mask, wb, zero), b.constant(0.0, ct), RO::Add, {1});
  V loss = b.negate(b.multiply(picked, wt));
  V smooth;
  if (smoothing > 0) {
    const V s = b.negate(b.reduce(b.multiply(lp, wb), b.constant(0.0, ct), RO::Add, {1}));
    smooth = b.select(valid, s, b.constant(0.0, ct, nt));
  }
  V r;
  if (reduction == 0) {
    r = loss;
    if (smoothing > 0)
      r = b.add(b.multiply(b.constant(1 - smoothing, ct, nt), r),
                b.multiply(b.constant(smoothing / static_cast<double>(p.c), ct, nt), smooth));
  } else {
    r = lower_sum_all(b, loss);
    const V wsum = lower_sum_all(b, wt);
    if (reduction == 1) r = b.divide(r, wsum);
    if (smoothing > 0) {
      V s = lower_sum_all(b, smooth);
      if (reduction == 1) {
        const V den = w ? wsum : lower_sum_all(b, b.convert(valid, ct));
        s = b.divide(s, den);
      }
      r = b.add(b.multiply(b.constant(1 - smoothing, ct), r), b.multiply(b.constant(smoothing / static_cast<double>(p.c), ct), s));
    }
  }
  if (r.dtype != rt) r = b.convert(r, rt);
  return b.reshape(r, vec(out));
}

}  // namespace detail

/// Negative log likelihood of class indices (torch.nn.functional.nll_loss): for each element,
/// `-weight[t] * input[n, t, d...]` with `t = target[n, d...]`; targets equal to `ignore_index`
/// contribute 0 (and no weight); mean divides by the sum of the weights of the counted targets
/// (NaN when there are none). `Nd` false: `aten::nll_loss` (input `[N, C]` or `[C]`); true:
/// `aten::nll_loss_nd` (what torch 1.13 traces for F.nll_loss: `[N, C, d...]` too).
///
/// **Shapes:** `input: [N, C, d...]` or `[C]`, `target: [N, d...]` (`[]` for `[C]`), `weight: [C]`
/// (optional) → `[N, d...]` (`reduction` none) or `[]`.
/// **Dtypes:** input float16, bfloat16, float32, float64 (torch 1.13's cpu lacks float16), the
/// result's; target int64 (torch: "expected scalar type Long"). The cpu computes in float64.
/// **Errors:** TypeError for a non-floating input or a target not int64; ValueError for a batch
/// size mismatch or a `reduction` not in {0, 1, 2}; ShapeError for other target shapes or a
/// weight not `[C]`; IndexError naming the op for a target outside `[0, C)` that is not
/// `ignore_index` (on PJRT devices a run-time check of the program).
/// **Source:** torch.nn.functional.nll_loss (aten/src/ATen/native/LossNLL.cpp).
/// **Lowering:** the target class picked by a one-hot mask (`target == iota`), select, add-reduce.
template <bool Nd>
struct NllLossBaseOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = Nd ? "nll_loss_nd" : "nll_loss", aten = Nd ? "aten::nll_loss_nd" : "aten::nll_loss";
  /// The C++ function (docs/ops.md): `nll_loss` is the nd form; the 2-D form is reached by its aten name.
  static constexpr std::string_view api = Nd ? "nll_loss" : "";
  static constexpr std::string_view schema =
      Nd ? "aten::nll_loss_nd(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, int ignore_index=-100) -> Tensor"
         : "aten::nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, int ignore_index=-100) -> Tensor";
  ///@}
  /// The dtypes of the input and the result.
  static constexpr DtypeSet dtypes = DtypeSet::floating();
  /// Non-tensor arguments.
  struct Args {
    int64_t reduction = 1;       ///< 0 none, 1 mean, 2 sum
    int64_t ignore_index = -100; ///< targets with this value are skipped
    uint8_t present = 0;         ///< bit 0: weight
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) {
    return Args{r.to_int("reduction"), r.to_int("ignore_index"), detail::present_bit(r, "weight", 0)};
  }
  /// The present operands.
  template <class R>
  static std::vector<AnyTensor> tensors(const R& r) { return detail::present_tensors(r); }
  /// `target` stays int64 (checked by `infer`); the others take the result dtype.
  static ScalarType operand_dtype(size_t i, ScalarType given, ScalarType result) { return i == 1 ? given : result; }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    detail::check_operands(in, 2, a.present & 1u, aten);
    detail::check_reduction(a.reduction, aten);
    const ScalarType t = detail::floating_input(in, aten);
    if (!Nd && in[0].dim() > 2)
      throw ShapeError(std::string(aten) + ": input tensor should be 1D or 2D (operands " + describe(in) + ")");
    detail::check_class_target(in, a.present & 1u, aten);
    return TensorMeta{t, a.reduction == 0 ? in[1].sizes : Dims{}, Device{}, true};
  }
  /// CPU kernel (detail::class_loss_cpu).
  template <element T>
  static void cpu(std::span<const AnyTensor> in, const Args& a, Tensor<T>& out) {
    const detail::ClassPlan p = detail::ClassPlan::of(in[0].sizes());
    const std::vector<double> lp = detail::class_logp(p, in[0].get<T>(), false);
    const Tensor<int64_t> t = in[1].get<int64_t>().contiguous();
    std::vector<double> w;
    if (a.present & 1u) w = detail::class_logp(detail::ClassPlan::of(in[2].sizes()), in[2].get<T>(), false);
    detail::class_loss_cpu(p, lp, t.data_ptr(), w, a.reduction, a.ignore_index, 0.0, aten, out);
  }
  /// StableHLO (detail::lower_class_loss).
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    const detail::ClassPlan p = detail::ClassPlan::of(Dims(std::span<const int64_t>(in[0].dims)));
    const V x = b.reshape(detail::widen(b, in[0]), {p.n, p.c, p.inner});
    const V t = b.reshape(in[1], {p.n, p.inner});
    const V w = (a.present & 1u) ? detail::widen(b, in[2]) : V{};
    return detail::lower_class_loss(b, p, x, t, (a.present & 1u) ? &w : nullptr, a.reduction, a.ignore_index, 0.0,
                                    in[0].dtype, out, aten);
  }
};
/// aten::nll_loss (input `[N, C]` or `[C]`).
using NllLossOp = NllLossBaseOp<false>;
/// aten::nll_loss_nd (any `[N, C, d...]`; torch 1.13's trace of F.nll_loss).
using NllLossNdOp = NllLossBaseOp<true>;

/// Cross entropy of unnormalized scores (torch.nn.functional.cross_entropy): `log_softmax`
/// along the class dim (dim 1, dim 0 for a `[C]` input), then either
/// - class-index targets (int64, the input's shape without dim 1): nll_loss_nd's rule, and
///   with `label_smoothing` ε > 0: `(1 - ε) * nll + ε / C * smooth`, `smooth` the (weighted)
///   sum of `-log_softmax` over the classes per element (0 where ignored), reduced by sum, or
///   for mean divided by the sum of the counted targets' weights (their count without weight);
/// - probability targets (floating, the input's shape; chosen when the shapes are equal):
///   `-sum_c(log_softmax * target' * weight[c])` per element, `target' = target * (1 - ε) + ε / C`;
///   mean divides by the number of elements `N * d...` (NaN for none). `ignore_index` must be
///   negative (torch: "ignore_index is not supported for floating point target").
///
/// **Shapes:** `input: [N, C, d...]` or `[C]`; `target: [N, d...]` (class indices) or the
/// input's shape (probabilities); `weight: [C]` (optional) → `[N, d...]` (none) or `[]`.
/// **Dtypes:** input float16, bfloat16, float32, float64 (torch 1.13's cpu lacks float16);
/// probability targets are converted to the input's dtype (their common dtype for two floating
/// dtypes). The cpu computes in float64.
/// **Errors:** as nll_loss_nd; TypeError for probability targets that are not floating;
/// ValueError for `ignore_index` >= 0 with probability targets, `label_smoothing` outside [0, 1].
/// **Source:** torch.nn.functional.cross_entropy (aten/src/ATen/native/LossNLL.cpp,
/// cross_entropy_loss_symint, cross_entropy_loss_label_smoothing, cross_entropy_loss_prob_target).
/// **Lowering:** the log_softmax of LogSoftmaxOp, then detail::lower_class_loss or the
/// probability form (multiply, add-reduce).
struct CrossEntropyLossOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "cross_entropy_loss", aten = "aten::cross_entropy_loss";
  static constexpr std::string_view api = "cross_entropy";  ///< the C++ function (docs/ops.md)
  static constexpr std::string_view schema =
      "aten::cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, "
      "SymInt ignore_index=-100, float label_smoothing=0.) -> Tensor";
  ///@}
  /// The dtypes of the input and the result.
  static constexpr DtypeSet dtypes = DtypeSet::floating();
  /// Non-tensor arguments.
  struct Args {
    int64_t reduction = 1;         ///< 0 none, 1 mean, 2 sum
    int64_t ignore_index = -100;   ///< class-index targets with this value are skipped
    double label_smoothing = 0.0;  ///< ε in [0, 1]
    uint8_t present = 0;           ///< bit 0: weight
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) {
    return Args{r.to_int("reduction"), r.to_int("ignore_index"), r.to_double("label_smoothing"),
                detail::present_bit(r, "weight", 0)};
  }
  /// The present operands.
  template <class R>
  static std::vector<AnyTensor> tensors(const R& r) { return detail::present_tensors(r); }
  /// Class-index targets stay int64; probability targets and the weight take the result dtype.
  static ScalarType operand_dtype(size_t i, ScalarType given, ScalarType result) {
    return i == 1 && !is_floating(given) ? given : result;
  }
  /// True for probability targets (the input's shape).
  static bool probabilities(std::span<const TensorMeta> in) { return in[0].sizes == in[1].sizes; }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    detail::check_operands(in, 2, a.present & 1u, aten);
    detail::check_reduction(a.reduction, aten);
    ScalarType t = detail::floating_input(in, aten);
    if (a.label_smoothing < 0 || a.label_smoothing > 1)
      throw ValueError(std::string(aten) + ": label_smoothing must be between 0.0 and 1.0, got " +
                       std::to_string(a.label_smoothing));
    if (!probabilities(in)) {
      detail::check_class_target(in, a.present & 1u, aten);
      return TensorMeta{t, a.reduction == 0 ? in[1].sizes : Dims{}, Device{}, true};
    }
    if (in[0].dim() < 1)
      throw ValueError(std::string(aten) + ": expected 1 or more dimensions for the input, got 0 (operands " + describe(in) + ")");
    if (!is_floating(in[1].dtype))
      throw TypeError(std::string(aten) + ": expected a floating point target with class probabilities, got " +
                      std::string(dtype_name(in[1].dtype)) + " (operands " + describe(in) + ")");
    if (a.ignore_index >= 0)
      throw ValueError(std::string(aten) + ": ignore_index is not supported for floating point (probability) targets");
    const detail::ClassPlan p = detail::ClassPlan::of(in[0].sizes);
    if ((a.present & 1u) && (in[2].dim() != 1 || in[2].sizes[0] != p.c))
      throw ShapeError(std::string(aten) + ": weight tensor should be defined either for all " + std::to_string(p.c) +
                       " classes or no classes (operands " + describe(in) + ")");
    t = promote_types(t, in[1].dtype);
    return TensorMeta{t, a.reduction == 0 ? p.target_shape(in[0].sizes) : Dims{}, Device{}, true};
  }
  /// CPU kernel: float64 log-probabilities, then detail::class_loss_cpu or the probability form.
  template <element T>
  static void cpu(std::span<const AnyTensor> in, const Args& a, Tensor<T>& out) {
    const detail::ClassPlan p = detail::ClassPlan::of(in[0].sizes());
    const std::vector<double> lp = detail::class_logp(p, in[0].get<T>(), true);
    std::vector<double> w;
    if (a.present & 1u) w = detail::class_logp(detail::ClassPlan::of(in[2].sizes()), in[2].get<T>(), false);
    if (in[1].dtype() == ScalarType::Int64 && in[1].sizes() != in[0].sizes()) {
      const Tensor<int64_t> t = in[1].get<int64_t>().contiguous();
      detail::class_loss_cpu(p, lp, t.data_ptr(), w, a.reduction, a.ignore_index, a.label_smoothing, aten, out);
      return;
    }
    const std::vector<double> tp = detail::class_logp(p, in[1].get<T>(), false);
    const double eps = a.label_smoothing, C = static_cast<double>(p.c);
    const int64_t m = p.n * p.inner;
    T* o = out.data_ptr();
    double sum = 0;
    for (int64_t k = 0; k < m; ++k) {
      const int64_t n = k / p.inner, i = k % p.inner;
      double s = 0;
      for (int64_t c = 0; c < p.c; ++c) {
        const size_t at = size_t((n * p.c + c) * p.inner + i);
        const double tt = eps > 0 ? tp[at] * (1 - eps) + eps / C : tp[at];
        s -= lp[at] * tt * (w.empty() ? 1.0 : w[size_t(c)]);
      }
      if (a.reduction == 0) o[k] = convert<T>(s);
      else sum += s;
    }
    if (a.reduction != 0) o[0] = convert<T>(a.reduction == 1 ? sum / static_cast<double>(m) : sum);
  }
  /// StableHLO: see the struct's docstring.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    const detail::ClassPlan p = detail::ClassPlan::of(Dims(std::span<const int64_t>(in[0].dims)));
    const std::vector<int64_t> full{p.n, p.c, p.inner};
    const V x = b.reshape(detail::widen(b, in[0]), full);
    const V lp = p.c == 0 ? x : detail::lower_softmax(b, x, 1, true);
    const bool has_w = a.present & 1u;
    const V w = has_w ? detail::widen(b, in[2]) : V{};
    if (in[1].dtype == ScalarType::Int64 && in[1].dims != in[0].dims)
      return detail::lower_class_loss(b, p, lp, b.reshape(in[1], {p.n, p.inner}), has_w ? &w : nullptr, a.reduction,
                                      a.ignore_index, a.label_smoothing, in[0].dtype, out, aten);
    using RO = detail::reduce_op_t<B>;
    const ScalarType ct = lp.dtype;
    V tt = b.reshape(detail::widen(b, in[1]), full);
    if (a.label_smoothing > 0)
      tt = b.add(b.multiply(tt, b.constant(1 - a.label_smoothing, ct, full)),
                 b.constant(a.label_smoothing / static_cast<double>(p.c), ct, full));
    V prod = b.multiply(lp, tt);
    if (has_w) prod = b.multiply(prod, b.broadcast_in_dim(w, full, {1}));
    V r = b.negate(b.reduce(prod, b.constant(0.0, ct), RO::Add, {1}));
    if (a.reduction != 0) {
      r = detail::lower_sum_all(b, r);
      if (a.reduction == 1) r = b.divide(r, b.constant(static_cast<double>(p.n * p.inner), ct));
    }
    if (r.dtype != in[0].dtype) r = b.convert(r, in[0].dtype);
    return b.reshape(r, detail::vec(out));
  }
};

/// Dropout (torch.nn.functional.dropout): with `train` and `0 < p < 1`, each element is zeroed
/// with probability `p` and the others are scaled by `1 / (1 - p)`; `train` false or `p` 0
/// give the input's values; `p` 1 gives `input * 0` (zeros; -0.0, NaN as torch).
///
/// **Randomness:** element `i` is kept when `u_i < 1 - p`, `u_i` = the 32-bit Philox4x32-10 word
/// `i` of the call's subsequence (PhiloxGenerator::bits) scaled by 2^-32. Each call takes the
/// next subsequence of its generator (the default one: `torchtpu::manual_seed`), so the same
/// seed and the same calls give the same masks, on any number of threads. The numbers are not
/// torch's (torch's cpu uses its own Mersenne Twister stream).
/// **Values:** kept elements are `x * s` with `s = T(1 / (1 - p))` (1 / (1 - p) computed in
/// float32 for 16-bit and 32-bit floats, rounded to `T`), the product in float32 for 16-bit floats.
/// **Shapes:** `input: [...]` → the same shape.
/// **Dtypes:** all eight when `train` is false or `p` is 0 or 1; floating otherwise (as torch).
/// **Errors:** ValueError for `p` outside [0, 1]; TypeError for an active dropout of an
/// integer or bool input; UnsupportedOperator for an active dropout (`train`, 0 < p < 1) on a
/// PJRT device or in a compiled model graph (no random bits on devices yet).
/// **Source:** torch.nn.functional.dropout (aten/src/ATen/native/Dropout.cpp, _dropout_impl).
/// **Lowering:** the identity (inactive) or zeros (`p` 1).
struct DropoutOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "dropout", aten = "aten::dropout";
  static constexpr std::string_view schema = "aten::dropout(Tensor input, float p, bool train) -> Tensor";
  ///@}
  /// The dtypes (see the docstring for an active dropout).
  static constexpr DtypeSet dtypes = DtypeSet::all();
  /// Non-tensor arguments.
  struct Args {
    double p = 0.5;        ///< the probability of zeroing an element
    bool train = true;     ///< false: the identity
    bool seeded = false;   ///< true: `seed`/`offset` are set (else `resolve` draws them)
    uint64_t seed = 0;     ///< the Philox key
    uint64_t offset = 0;   ///< the Philox subsequence
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return Args{r.to_double("p"), r.to_bool("train"), false, 0, 0}; }
  /// True when elements are dropped at random.
  static bool active(const Args& a) { return a.train && a.p > 0 && a.p < 1; }
  /// Draws the call's subsequence from the default generator (an active dropout without one).
  /// **Errors:** UnsupportedOperator for an active dropout on a PJRT device.
  static Args resolve(std::span<const AnyTensor> in, Args a) {
    if (!active(a) || in.empty() || !in[0].defined()) return a;
    if (!in[0].device().is_cpu() && in[0].numel() > 0)
      throw UnsupportedOperator(std::string(aten) + ": dropout with train=True and 0 < p < 1 has no random numbers on " +
                                in[0].device().str() + " yet; run it on the cpu, or pass train=False (model.eval())");
    if (!a.seeded) {
      PhiloxGenerator& g = default_philox_generator();
      a.seed = g.seed();
      a.offset = g.reserve();
      a.seeded = true;
    }
    return a;
  }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    if (!(a.p >= 0 && a.p <= 1))
      throw ValueError(std::string(aten) + ": dropout probability has to be between 0 and 1, but got " + std::to_string(a.p));
    if (active(a) && !is_floating(in[0].dtype))
      throw TypeError(std::string(aten) + ": dropout with train=True needs a floating point input, got " +
                      std::string(dtype_name(in[0].dtype)) + " (operands " + describe(in) + ")");
    return TensorMeta{in[0].dtype, in[0].sizes, Device{}, true};
  }
  /// CPU kernel: see the docstring.
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    if (out.numel() == 0) return;
    if (!a.train || a.p == 0) {
      out.copy_(in[0]);
      return;
    }
    if (a.p == 1) {  // torch: input * 0 (so -0.0 for negative values, NaN for NaN and infinities)
      const Tensor<T> x = in[0].contiguous();
      for (int64_t i = 0; i < out.numel(); ++i) {
        if constexpr (floating_element<T>) out.data_ptr()[i] = convert<T>(static_cast<opmath_t<T>>(x.data_ptr()[i]) * opmath_t<T>(0));
        else out.data_ptr()[i] = convert<T>(0);
      }
      return;
    }
    if constexpr (floating_element<T>) {
      using Acc = opmath_t<T>;
      const Acc s = convert<Acc>(T(static_cast<Acc>(1) / static_cast<Acc>(1 - a.p)));
      const Tensor<T> x = in[0].contiguous();
      const T* xp = x.data_ptr();
      T* o = out.data_ptr();
      const double keep = 1 - a.p;
      for (int64_t i = 0; i < out.numel(); ++i) {
        const double u = static_cast<double>(PhiloxGenerator::bits(a.seed, a.offset, static_cast<uint64_t>(i))) * 0x1p-32;
        o[i] = u < keep ? convert<T>(static_cast<Acc>(static_cast<Acc>(xp[i]) * s)) : convert<T>(0);
      }
    }
  }
  /// StableHLO: the identity or zeros. **Errors:** UnsupportedOperator for an active dropout.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    if (active(a))
      throw UnsupportedOperator(std::string(aten) + ": dropout with train=True and 0 < p < 1 cannot be compiled for a "
                                "PJRT device yet; trace the model after model.eval()");
    if (a.train && a.p == 1)
      return is_floating(in[0].dtype) ? b.multiply(in[0], b.constant(0.0, in[0].dtype, detail::vec(out)))
                                      : b.constant_int(0, in[0].dtype, detail::vec(out));
    return in[0];
  }
};

/// Rearranges `[*, C * r^2, H, W]` into `[*, C, H * r, W * r]` (`Un` false, torch.pixel_shuffle:
/// `out[..., c, h * r + i, w * r + j] = in[..., c * r^2 + i * r + j, h, w]`) or back (`Un`
/// true, torch.pixel_unshuffle with downscale factor r).
///
/// **Shapes:** as above; rank >= 3, leading dims `*` kept.
/// **Dtypes:** all eight; values are moved, not computed (exact). An empty input gets the
/// rule's shape (torch 1.13's pixel_unshuffle returns an empty input unchanged).
/// **Errors:** ShapeError for rank < 3, channels not divisible by r^2 (shuffle) or H, W not
/// divisible by r (unshuffle); ValueError for a factor <= 0 (naming the op and the operand).
/// **Source:** torch.pixel_shuffle / pixel_unshuffle (aten/src/ATen/native/PixelShuffle.cpp).
/// **Lowering:** reshape, transpose, reshape.
template <bool Un>
struct PixelShuffleBaseOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = Un ? "pixel_unshuffle" : "pixel_shuffle",
                                    aten = Un ? "aten::pixel_unshuffle" : "aten::pixel_shuffle";
  static constexpr std::string_view schema = Un ? "aten::pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor"
                                                : "aten::pixel_shuffle(Tensor self, int upscale_factor) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::all();
  /// Non-tensor arguments.
  struct Args {
    int64_t factor = 1;  ///< r
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) { return Args{r.to_int(Un ? "downscale_factor" : "upscale_factor")}; }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    const TensorMeta& x = in[0];
    const std::string what = std::string(aten) + " (operand " + describe(x) + ")";
    if (x.dim() < 3) throw ShapeError(what + ": expects input to have at least 3 dimensions");
    if (a.factor <= 0) throw ValueError(what + ": expects a positive factor, but got " + std::to_string(a.factor));
    const int r = x.dim();
    const int64_t f = a.factor;
    Dims o = x.sizes;
    if (!Un) {
      if (x.sizes[r - 3] % (f * f) != 0)
        throw ShapeError(what + ": the channel dimension " + std::to_string(x.sizes[r - 3]) +
                         " is not divisible by the square of upscale_factor " + std::to_string(f * f));
      o[r - 3] /= f * f;
      o[r - 2] *= f;
      o[r - 1] *= f;
    } else {
      if (x.sizes[r - 2] % f != 0 || x.sizes[r - 1] % f != 0)
        throw ShapeError(what + ": height and width must be divisible by downscale_factor " + std::to_string(f));
      o[r - 3] *= f * f;
      o[r - 2] /= f;
      o[r - 1] /= f;
    }
    return TensorMeta{x.dtype, o, Device{}, true};
  }
  /// The 6-D view `[B, C, r, r, H, W]` of the shuffled side and the permutation to the other.
  static void plan(const Dims& in, int64_t f, Dims& src, Dims& perm) {
    const int r = in.size();
    int64_t batch = 1;
    for (int d = 0; d < r - 3; ++d) batch *= in[d];
    const int64_t c = in[r - 3], h = in[r - 2], w = in[r - 1];
    if (!Un) {
      src = Dims{batch, c / (f * f), f, f, h, w};
      perm = Dims{0, 1, 4, 2, 5, 3};
    } else {
      src = Dims{batch, c, h / f, f, w / f, f};
      perm = Dims{0, 1, 3, 5, 2, 4};
    }
  }
  /// CPU kernel: a permuted view copied.
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    if (out.numel() == 0) return;
    Dims src, perm;
    plan(in[0].sizes(), a.factor, src, perm);
    const Tensor<T> v = in[0].reshape(src).permute(perm);
    out.view(v.sizes()).copy_(v);
  }
  /// StableHLO: see the struct's docstring.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    if (numel(out) == 0) return b.constant_int(0, in[0].dtype, detail::vec(out));
    Dims src, perm;
    plan(Dims(std::span<const int64_t>(in[0].dims)), a.factor, src, perm);
    const V v = b.transpose(b.reshape(in[0], detail::vec(src)), detail::vec(perm));
    return b.reshape(v, detail::vec(out));
  }
};
/// torch.pixel_shuffle.
using PixelShuffleOp = PixelShuffleBaseOp<false>;
/// torch.pixel_unshuffle.
using PixelUnshuffleOp = PixelShuffleBaseOp<true>;

/// Sums, means or maxima of bags of embedding rows (torch.nn.functional.embedding_bag,
/// forward): bag `b` holds `weight[indices[offsets[b] : offsets[b + 1]]]` (the last bag runs to
/// the end of `indices`, or to the last offset with `include_last_offset`); indices equal to
/// `padding_idx` are skipped (and not counted by mean); an empty bag gives zeros.
/// `per_sample_weights` (mode sum only) scales each row.
///
/// **Results:** aten returns `(output, offset2bag, bag_size, max_indices)`; this op computes
/// `output` only (the three others are autograd's bookkeeping, with torch-version-dependent
/// contents). In a model graph the node's other outputs are None: reading one as a tensor is a
/// TypeError, never a made-up value.
/// **Shapes:** `weight: [num, D]`, `indices: [L]`, `offsets: [B]` (`B + 1` with
/// `include_last_offset`), `per_sample_weights: [L]` → `[B, D]`. The front ends also take a
/// `[B, n]` `indices` without offsets (bags of `n`, as F.embedding_bag).
/// **Dtypes:** weight float16, bfloat16, float32, float64 (bfloat16: torch 2; 1.13 has float16,
/// float32, float64); indices and offsets int64 or int32. Sums accumulate in float32 for 16-bit
/// floats, in order, as torch's cpu.
/// **Errors:** TypeError for other dtypes; ShapeError for ranks or sizes that do not fit;
/// ValueError for per_sample_weights without mode sum, a mode not in {0, 1, 2}, `offsets[0]`
/// not 0 or offsets decreasing or past L (cpu); IndexError naming the op for an index outside
/// `[0, num)` (on PJRT devices a run-time check) or a `padding_idx` outside `[-num, num)`.
/// **Source:** torch.nn.functional.embedding_bag (aten/src/ATen/native/EmbeddingBag.cpp).
/// **Lowering:** rows gathered by detail::lower_take; each index's bag (the number of offsets
/// <= its position, minus 1); a `[B, L, D]` bag mask, select, add- or max-reduce.
struct EmbeddingBagOp {
  ///@{
  /// Names and schema (torch's `embedding_bag.padding_idx`, its defaults those of the
  /// overload without padding_idx, so that both read).
  static constexpr std::string_view name = "embedding_bag", aten = "aten::embedding_bag";
  static constexpr std::string_view schema =
      "aten::embedding_bag.padding_idx(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, "
      "int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False, "
      "int? padding_idx=None) -> (Tensor, Tensor, Tensor, Tensor)";
  ///@}
  /// The dtypes of weight and the result.
  static constexpr DtypeSet dtypes = DtypeSet::floating();
  /// Non-tensor arguments (`scale_grad_by_freq`, `sparse` concern gradients only).
  struct Args {
    int64_t mode = 0;                  ///< 0 sum, 1 mean, 2 max
    bool include_last_offset = false;  ///< the last offset ends the last bag
    bool has_padding = false;          ///< `padding_idx` given
    int64_t padding_idx = -1;          ///< skipped index (negative: counted from the end)
    uint8_t present = 0;               ///< bit 0: per_sample_weights
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) {
    const bool pad = !r.is_none("padding_idx");
    return Args{r.to_int("mode"), r.to_bool("include_last_offset"), pad, pad ? r.to_int("padding_idx") : -1,
                detail::present_bit(r, "per_sample_weights", 0)};
  }
  /// The present operands.
  template <class R>
  static std::vector<AnyTensor> tensors(const R& r) { return detail::present_tensors(r); }
  /// indices and offsets are read as int64; weight and per_sample_weights take the result dtype.
  static ScalarType operand_dtype(size_t i, ScalarType, ScalarType result) {
    return i == 1 || i == 2 ? ScalarType::Int64 : result;
  }
  /// The number of bags.
  static int64_t bags(const TensorMeta& offsets, const Args& a) {
    return offsets.sizes[0] - (a.include_last_offset && offsets.sizes[0] > 0 ? 1 : 0);
  }
  /// `padding_idx` in `[0, num)`, or -1 for none. **Errors:** IndexError when out of range.
  static int64_t padding(const Args& a, int64_t num) {
    if (!a.has_padding) return -1;
    if (a.padding_idx < -num || a.padding_idx >= num)
      throw IndexError(std::string(aten) + ": padding_idx " + std::to_string(a.padding_idx) +
                       " must be within the number of embeddings " + std::to_string(num));
    return a.padding_idx < 0 ? a.padding_idx + num : a.padding_idx;
  }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    detail::check_operands(in, 3, a.present & 1u, aten);
    const TensorMeta &w = in[0], &idx = in[1], &off = in[2];
    if (!is_floating(w.dtype))
      throw TypeError(std::string(aten) + ": expected weight of a floating point dtype, got " +
                      std::string(dtype_name(w.dtype)) + " (operands " + describe(in) + ")");
    detail::require_index(idx, in, aten, "indices", true);
    detail::require_index(off, in, aten, "offsets", true);
    if (w.dim() != 2) throw ShapeError(std::string(aten) + ": weight must be 2-D (operands " + describe(in) + ")");
    if (idx.dim() != 1 || off.dim() != 1)
      throw ShapeError(std::string(aten) + ": expected 1-D indices and 1-D offsets (operands " + describe(in) + ")");
    if (a.mode < 0 || a.mode > 2)
      throw ValueError(std::string(aten) + ": mode " + std::to_string(a.mode) + " is not valid (0: sum, 1: mean, 2: max)");
    if (a.present & 1u) {
      if (a.mode != 0)
        throw ValueError(std::string(aten) + ": per_sample_weights are only supported for mode sum (operands " + describe(in) + ")");
      if (in[3].sizes != idx.sizes)
        throw ShapeError(std::string(aten) + ": expected per_sample_weights of the indices' shape (operands " + describe(in) + ")");
    }
    if (a.include_last_offset && off.sizes[0] < 1)
      throw ShapeError(std::string(aten) + ": include_last_offset needs at least one offset (operands " + describe(in) + ")");
    (void)padding(a, w.sizes[0]);
    return TensorMeta{w.dtype, Dims{bags(off, a), w.sizes[1]}, Device{}, true};
  }
  /// CPU kernel: per bag, the rows accumulated in order (opmath: float32 for 16-bit floats).
  template <element T>
  static void cpu(std::span<const AnyTensor> in, const Args& a, Tensor<T>& out) {
    const Tensor<T> w = in[0].get<T>().contiguous();
    const Tensor<int64_t> idx = in[1].get<int64_t>().contiguous(), off = in[2].get<int64_t>().contiguous();
    const Tensor<T> psw = (a.present & 1u) ? in[3].get<T>().contiguous() : Tensor<T>();
    const int64_t num = w.size(0), D = w.size(1), L = idx.numel(), nb = out.size(0);
    const int64_t pad = padding(a, num);
    const int64_t* op = off.data_ptr();
    if (off.numel() > 0 && op[0] != 0)
      throw ValueError(std::string(aten) + ": offsets[0] has to be 0, i.e., the first bag starts at position 0, got " +
                       std::to_string(op[0]));
    using Acc = opmath_t<T>;
    std::vector<Acc> acc(static_cast<size_t>(D));
    T* o = out.data_ptr();
    for (int64_t bag = 0; bag < nb; ++bag) {
      const int64_t begin = op[bag], end = bag + 1 < off.numel() ? op[bag + 1] : L;
      if (begin > end || end > L)
        throw ValueError(std::string(aten) + ": offsets must be non-decreasing and at most the number of indices " +
                         std::to_string(L) + " (bag " + std::to_string(bag) + ": [" + std::to_string(begin) + ", " +
                         std::to_string(end) + "))");
      std::fill(acc.begin(), acc.end(), a.mode == 2 ? -std::numeric_limits<Acc>::infinity() : Acc(0));
      int64_t count = 0;
      for (int64_t l = begin; l < end; ++l) {
        const int64_t i = idx.data_ptr()[l];
        detail::check_index(i, num, 0, aten);
        if (i == pad) continue;
        ++count;
        const T* row = w.data_ptr() + i * D;
        const Acc s = psw.defined() ? static_cast<Acc>(psw.data_ptr()[l]) : Acc(1);
        for (int64_t d = 0; d < D; ++d) {
          const Acc v = static_cast<Acc>(row[d]);
          if (a.mode == 2) acc[size_t(d)] = (std::isnan(v) || v > acc[size_t(d)]) ? v : acc[size_t(d)];
          else acc[size_t(d)] = static_cast<Acc>(acc[size_t(d)] + (psw.defined() ? static_cast<Acc>(v * s) : v));
        }
      }
      for (int64_t d = 0; d < D; ++d) {
        Acc v = count == 0 ? Acc(0) : acc[size_t(d)];
        if (a.mode == 1 && count > 0) v = static_cast<Acc>(v / static_cast<Acc>(count));
        o[bag * D + d] = convert<T>(v);
      }
    }
  }
  /// StableHLO: see the struct's docstring.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    using RO = detail::reduce_op_t<B>;
    const int64_t num = in[0].dims[0], D = in[0].dims[1], L = in[1].dims[0], nb = out[0], no = in[2].dims[0];
    const ScalarType rt = in[0].dtype;
    if (nb == 0 || D == 0) return b.constant(0.0, rt, detail::vec(out));
    if (L == 0) return b.constant(0.0, rt, detail::vec(out));
    const int64_t pad = padding(a, num);
    const V w = detail::widen(b, in[0]);
    const ScalarType ct = w.dtype;
    V rows = detail::lower_take(b, w, 0, b.broadcast_in_dim(in[1], {L, D}, {0}), aten);  // [L, D]
    if (a.present & 1u) rows = b.multiply(rows, b.broadcast_in_dim(detail::widen(b, in[3]), {L, D}, {0}));
    // each position's bag: the number of offsets <= l, minus 1 (offsets past the bags ignored)
    const V le = b.compare("LE", b.broadcast_in_dim(in[2], {L, no}, {1}), b.iota(ScalarType::Int64, {L, no}, 0));
    const V bag = b.subtract(b.reduce(b.convert(le, ScalarType::Int64), b.constant_int(0, ScalarType::Int64), RO::Add, {1}),
                             b.constant_int(1, ScalarType::Int64, {L}));
    V member = b.compare("EQ", b.broadcast_in_dim(bag, {nb, L}, {1}), b.iota(ScalarType::Int64, {nb, L}, 0));
    if (pad >= 0)
      member = b.binary("and", member,
                        b.broadcast_in_dim(b.compare("NE", in[1], b.constant_int(pad, ScalarType::Int64, {L})), {nb, L}, {1}));
    const V m3 = b.broadcast_in_dim(member, {nb, L, D}, {0, 1});
    const V r3 = b.broadcast_in_dim(rows, {nb, L, D}, {1, 2});
    const V count = b.reduce(b.convert(member, ct), b.constant(0.0, ct), RO::Add, {1});  // [nb]
    const V nonempty = b.broadcast_in_dim(b.compare("GT", count, b.constant(0.0, ct, {nb})), {nb, D}, {0});
    V r;
    if (a.mode == 2) {
      const double ninf = -std::numeric_limits<double>::infinity();
      r = b.reduce(b.select(m3, r3, b.constant(ninf, ct, {nb, L, D})), b.constant(ninf, ct), RO::Max, {1});
    } else {
      r = b.reduce(b.select(m3, r3, b.constant(0.0, ct, {nb, L, D})), b.constant(0.0, ct), RO::Add, {1});
      if (a.mode == 1)
        r = b.divide(r, b.broadcast_in_dim(b.maximum(count, b.constant(1.0, ct, {nb})), {nb, D}, {0}));
    }
    r = b.select(nonempty, r, b.constant(0.0, ct, {nb, D}));
    return r.dtype == rt ? r : b.convert(r, rt);
  }
};

namespace detail {
/// Runs a loss op `Op` on (`x`, `target`, `weight` if defined): typed (`X` = Tensor<T>) or run-time typed.
template <class Op, class X, class Y>
X loss_call(const X& x, const Y& target, const X& weight, typename Op::Args a) {
  std::vector<AnyTensor> in{AnyTensor(x), AnyTensor(target)};
  a.present = 0;
  if (weight.defined()) {
    in.push_back(AnyTensor(weight));
    a.present = 1;
  }
  if constexpr (std::is_same_v<X, AnyTensor>) return call<Op>(std::span<const AnyTensor>(in), a);
  else return call_mixed<Op, typename X::value_type>(std::span<const AnyTensor>(in), a);
}

/// embedding_bag on `[B, n]` indices: flattened, with offsets `0, n, 2n, ...`.
inline void bags_of_rows(AnyTensor& indices, AnyTensor& offsets, AnyTensor& psw) {
  const int64_t nb = indices.sizes()[0], n = indices.sizes()[1];
  Tensor<int64_t> off = Tensor<int64_t>::empty(Dims{nb});
  for (int64_t i = 0; i < nb; ++i) off.data_ptr()[i] = i * n;
  offsets = AnyTensor(off);
  indices = indices.visit([](const auto& t) { return AnyTensor(t.reshape(Dims{-1})); });
  if (psw.defined()) psw = psw.visit([](const auto& t) { return AnyTensor(t.reshape(Dims{-1})); });
}

/// Runs EmbeddingBagOp (typed result `R`, or run-time typed when `R` is AnyTensor).
template <class R>
R embedding_bag_call(const AnyTensor& weight, AnyTensor indices, AnyTensor offsets, EmbeddingBagMode mode,
                     AnyTensor psw, bool include_last_offset, std::optional<int64_t> padding_idx) {
  if (!offsets.defined()) {
    if (indices.dim() != 2)
      throw ShapeError("aten::embedding_bag: indices without offsets must be 2-D (bags of equal size), got " +
                       describe(TensorMeta::of(indices)));
    if (include_last_offset)
      throw ValueError("aten::embedding_bag: include_last_offset needs offsets (2-D indices have none)");
    bags_of_rows(indices, offsets, psw);
  }
  EmbeddingBagOp::Args a{static_cast<int64_t>(mode), include_last_offset, padding_idx.has_value(), padding_idx.value_or(-1),
                         uint8_t(psw.defined() ? 1 : 0)};
  std::vector<AnyTensor> in{weight, indices, offsets};
  if (psw.defined()) in.push_back(psw);
  if constexpr (std::is_same_v<R, AnyTensor>) return call<EmbeddingBagOp>(std::span<const AnyTensor>(in), a);
  else return call_mixed<EmbeddingBagOp, typename R::value_type>(std::span<const AnyTensor>(in), a);
}
}  // namespace detail

// Each op's entry point, compiled once in TORCHTPU_SEPARATE_OPS programs (ops/library.hpp).
TORCHTPU_LIBRARY_OP(LogSoftmaxOp);
TORCHTPU_LIBRARY_OP(MseLossOp);
TORCHTPU_LIBRARY_OP(NllLossOp);
TORCHTPU_LIBRARY_OP(NllLossNdOp);
TORCHTPU_LIBRARY_OP(CrossEntropyLossOp);
TORCHTPU_LIBRARY_OP(DropoutOp);
TORCHTPU_LIBRARY_OP(PixelShuffleOp);
TORCHTPU_LIBRARY_OP(PixelUnshuffleOp);
TORCHTPU_LIBRARY_OP(EmbeddingBagOp);

}  // namespace ops

/// Run-time typed `log_softmax` along `dim` (torch.log_softmax; `dtype`: the result dtype, the
/// input converted first). The typed form is the fused expression of ops/reduce.hpp. See
/// ops::LogSoftmaxOp.
template <std::same_as<AnyTensor> A>
A log_softmax(const A& x, int64_t dim, std::optional<ScalarType> dtype = std::nullopt) {
  return ops::detail::call1<ops::LogSoftmaxOp>(x, {dim, dtype.has_value(), dtype.value_or(ScalarType::Float)});
}

/// Mean squared error of `x` and `target`, broadcast (F.mse_loss); see ops::MseLossOp.
/// **Example:** `mse_loss(x, y, Reduction::Sum)`.
template <element T, int R, int RT>
Tensor<T> mse_loss(const Tensor<T, R>& x, const Tensor<T, RT>& target, Reduction reduction = Reduction::Mean) {
  const Tensor<T> in[2] = {Tensor<T>(x), Tensor<T>(target)};
  return ops::call_typed<ops::MseLossOp, T>(std::span<const Tensor<T>>(in, 2), {static_cast<int64_t>(reduction)});
}
/// Run-time typed `mse_loss` (the result dtype is the operands' common dtype).
template <std::same_as<AnyTensor> A>
A mse_loss(const A& x, const AnyTensor& target, Reduction reduction = Reduction::Mean) {
  const std::vector<AnyTensor> in{x, target};
  return ops::call<ops::MseLossOp>(in, {static_cast<int64_t>(reduction)});
}

/// Negative log likelihood of int64 class indices `target` under log-probabilities `x`
/// (F.nll_loss, any `[N, C, d...]`); `weight` undefined: absent. See ops::NllLossBaseOp.
template <element T, int R, int RT>
Tensor<T> nll_loss(const Tensor<T, R>& x, const Tensor<int64_t, RT>& target, const Tensor<T>& weight = {},
                   Reduction reduction = Reduction::Mean, int64_t ignore_index = -100) {
  return ops::detail::loss_call<ops::NllLossNdOp>(Tensor<T>(x), Tensor<int64_t>(target), weight,
                                                  {static_cast<int64_t>(reduction), ignore_index, 0});
}
/// Run-time typed `nll_loss`.
template <std::same_as<AnyTensor> A>
A nll_loss(const A& x, const AnyTensor& target, const AnyTensor& weight = {}, Reduction reduction = Reduction::Mean,
           int64_t ignore_index = -100) {
  return ops::detail::loss_call<ops::NllLossNdOp>(x, target, weight, {static_cast<int64_t>(reduction), ignore_index, 0});
}

/// Cross entropy of scores `x` and `target`: int64 class indices or, with `x`'s shape,
/// probabilities (F.cross_entropy); see ops::CrossEntropyLossOp.
/// **Example:** `cross_entropy(logits, labels, {}, Reduction::Mean, -100, 0.1)`.
template <element T, int R, element U, int RT>
Tensor<T> cross_entropy(const Tensor<T, R>& x, const Tensor<U, RT>& target, const Tensor<T>& weight = {},
                        Reduction reduction = Reduction::Mean, int64_t ignore_index = -100, double label_smoothing = 0.0) {
  return ops::detail::loss_call<ops::CrossEntropyLossOp>(Tensor<T>(x), Tensor<U>(target), weight,
                                                         {static_cast<int64_t>(reduction), ignore_index, label_smoothing, 0});
}
/// Run-time typed `cross_entropy`.
template <std::same_as<AnyTensor> A>
A cross_entropy(const A& x, const AnyTensor& target, const AnyTensor& weight = {}, Reduction reduction = Reduction::Mean,
                int64_t ignore_index = -100, double label_smoothing = 0.0) {
  return ops::detail::loss_call<ops::CrossEntropyLossOp>(x, target, weight,
                                                         {static_cast<int64_t>(reduction), ignore_index, label_smoothing, 0});
}

/// Dropout of `x` with probability `p` (F.dropout; `train` false: the values of `x`), the mask
/// from the next subsequence of `gen`; see ops::DropoutOp.
template <element T, int R>
Tensor<T> dropout(const Tensor<T, R>& x, double p, bool train, PhiloxGenerator& gen) {
  ops::DropoutOp::Args a{p, train, false, 0, 0};
  if (ops::DropoutOp::active(a)) a = {p, train, true, gen.seed(), gen.reserve()};
  return ops::detail::call1<ops::DropoutOp>(x, a);
}
/// Dropout from the default stream (torchtpu::manual_seed).
template <element T, int R>
Tensor<T> dropout(const Tensor<T, R>& x, double p = 0.5, bool train = true) {
  return ops::detail::call1<ops::DropoutOp>(x, {p, train, false, 0, 0});
}
/// Run-time typed `dropout` from `gen`.
template <std::same_as<AnyTensor> A>
A dropout(const A& x, double p, bool train, PhiloxGenerator& gen) {
  ops::DropoutOp::Args a{p, train, false, 0, 0};
  if (ops::DropoutOp::active(a)) a = {p, train, true, gen.seed(), gen.reserve()};
  return ops::detail::call1<ops::DropoutOp>(x, a);
}
/// Run-time typed `dropout` from the default stream.
template <std::same_as<AnyTensor> A>
A dropout(const A& x, double p = 0.5, bool train = true) {
  return ops::detail::call1<ops::DropoutOp>(x, {p, train, false, 0, 0});
}

/// `[*, C * r^2, H, W]` → `[*, C, H * r, W * r]` (torch.pixel_shuffle); see ops::PixelShuffleBaseOp.
template <element T, int R>
Tensor<T> pixel_shuffle(const Tensor<T, R>& x, int64_t upscale_factor) {
  return ops::detail::call1<ops::PixelShuffleOp>(x, {upscale_factor});
}
/// Run-time typed `pixel_shuffle`.
template <std::same_as<AnyTensor> A>
A pixel_shuffle(const A& x, int64_t upscale_factor) {
  return ops::detail::call1<ops::PixelShuffleOp>(x, {upscale_factor});
}
/// `[*, C, H * r, W * r]` → `[*, C * r^2, H, W]` (torch.pixel_unshuffle).
template <element T, int R>
Tensor<T> pixel_unshuffle(const Tensor<T, R>& x, int64_t downscale_factor) {
  return ops::detail::call1<ops::PixelUnshuffleOp>(x, {downscale_factor});
}
/// Run-time typed `pixel_unshuffle`.
template <std::same_as<AnyTensor> A>
A pixel_unshuffle(const A& x, int64_t downscale_factor) {
  return ops::detail::call1<ops::PixelUnshuffleOp>(x, {downscale_factor});
}

/// Bags of rows of `weight` (F.embedding_bag): `indices: [L]` split by `offsets: [B]`;
/// `per_sample_weights` undefined: absent. See ops::EmbeddingBagOp.
template <element T, int R, element I, int RI, element O, int RO>
Tensor<T> embedding_bag(const Tensor<T, R>& weight, const Tensor<I, RI>& indices, const Tensor<O, RO>& offsets,
                        EmbeddingBagMode mode = EmbeddingBagMode::Mean, const Tensor<T>& per_sample_weights = {},
                        bool include_last_offset = false, std::optional<int64_t> padding_idx = std::nullopt) {
  return ops::detail::embedding_bag_call<Tensor<T>>(weight, indices, offsets, mode,
                                                    per_sample_weights.defined() ? AnyTensor(per_sample_weights) : AnyTensor(),
                                                    include_last_offset, padding_idx);
}
/// `embedding_bag` of `[B, n]` indices (bags of `n` rows; no offsets).
template <element T, int R, element I, int RI>
Tensor<T> embedding_bag(const Tensor<T, R>& weight, const Tensor<I, RI>& indices, EmbeddingBagMode mode = EmbeddingBagMode::Mean,
                        const Tensor<T>& per_sample_weights = {}, std::optional<int64_t> padding_idx = std::nullopt) {
  return ops::detail::embedding_bag_call<Tensor<T>>(weight, indices, AnyTensor(), mode,
                                                    per_sample_weights.defined() ? AnyTensor(per_sample_weights) : AnyTensor(),
                                                    false, padding_idx);
}
/// Run-time typed `embedding_bag` (`offsets` undefined: `[B, n]` indices).
template <std::same_as<AnyTensor> A>
A embedding_bag(const A& weight, const AnyTensor& indices, const AnyTensor& offsets = {},
                EmbeddingBagMode mode = EmbeddingBagMode::Mean, const AnyTensor& per_sample_weights = {},
                bool include_last_offset = false, std::optional<int64_t> padding_idx = std::nullopt) {
  return ops::detail::embedding_bag_call<AnyTensor>(weight, indices, offsets, mode, per_sample_weights, include_last_offset,
                                                    padding_idx);
}

}  // namespace torchtpu
