// torchtpu/ops/attention.hpp — operator library, attention: scaled_dot_product_attention. One
// definition (ops/library.hpp) that the typed API (`torchtpu::scaled_dot_product_attention`),
// the run-time API (`AnyTensor`), the eager PJRT devices and model graphs
// (`aten::scaled_dot_product_attention`) all call; jit/kernels.hpp's multi-head attention calls
// its cpu kernel too. Tests: tests/ops/test_attention.cpp (cpu, every dtype),
// tests/device_ops/test_device_attention.cpp (PJRT devices).
//
// The cpu kernel never holds the whole `L x S` score matrix: for each block of 64 query rows it
// walks the keys in blocks of 256 with an online softmax (Milakov & Gimelshein 2018, "Online
// normalizer calculation for softmax"; the running form of FlashAttention, Dao et al. 2022):
// scores of a block by the GEMM, a running row maximum `m` and sum `l`, the accumulated
// `p · v` rescaled by `exp(m_old - m_new)` when the maximum grows, one division at the end.
//
// Not in the umbrella header (torchtpu.hpp): include <torchtpu/ops/attention.hpp>.
#pragma once
#include <algorithm>    // std::min
#include <cmath>        // std::sqrt, std::exp
#include <cstdint>      // int64_t
#include <limits>       // std::numeric_limits
#include <optional>     // std::optional
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <tuple>        // std::tuple_element_t (the builder's reduction enum)
#include <type_traits>  // std::is_same_v, std::remove_cvref_t
#include <vector>       // std::vector

#include "../fuse/gemm.hpp"     // sgemm_f32, gemm_rows, cpu_has_vector_gemm
#include "../fuse/threads.hpp"  // parallel_chunks, chunks_for
#include "../fuse/vecmath.hpp"  // vexp, vector_entry (the softmax exponentials)
#include "library.hpp"          // TensorMeta, DtypeSet, ops::call, call_mixed

namespace torchtpu {
namespace ops {

namespace detail {

/// The builder's reduction enum (`B::reduce`'s third parameter), so that ops/ needs no device/
/// include.
template <class R, class C, class... A>
std::tuple_element_t<2, std::tuple<A...>> attn_reduce_op_of(R (C::*)(A...));
template <class B>
using attn_reduce_op_t = std::remove_cvref_t<decltype(attn_reduce_op_of(&B::reduce))>;

/// The strides with which a tensor of `sizes` / `strides` is read when broadcast to `target`
/// (right-aligned; 0 where it has size 1 or no dim). Sizes that differ (the key heads of
/// grouped-query attention) keep their stride: the caller maps the index.
inline Dims broadcast_strides(const Dims& target, const Dims& sizes, const Dims& strides) {
  Dims r = Dims::filled(target.size(), 0);
  for (int i = 0; i < sizes.size(); ++i) {
    const int d = target.size() - sizes.size() + i;
    if (d >= 0 && sizes[i] != 1) r[d] = strides[i];
  }
  return r;
}

/// The element offset of each batch matrix of an operand read with `bstrides` (its broadcast
/// strides over the batch dims `batch`, see broadcast_strides); the last batch dim's index is
/// divided by `group` (grouped-query attention: query head h reads key head h / group).
/// Computed per matrix (a few integer divisions), so a call allocates no offset table.
struct BatchOffsets {
  Dims batch;       ///< the result's batch dims
  Dims bstrides;    ///< the operand's strides over them (0 where broadcast)
  int64_t group = 1;  ///< query heads per key head
  /// The offset of batch matrix `t` (row-major over `batch`).
  int64_t operator()(int64_t t) const noexcept {
    int64_t rem = t, o = 0;
    for (int d = batch.size() - 1; d >= 0; --d) {
      const int64_t i = rem % batch[d];
      rem /= batch[d];
      o += (d == batch.size() - 1 ? i / group : i) * bstrides[d];
    }
    return o;
  }
};

/// `e^(row[j] - m)` written back over `row[0, n)`, their sum in `*sum` (scalar form).
inline void sdpa_exp_scalar(float* row, int64_t n, float m, float* sum) {
  float s = 0.0f;
  for (int64_t j = 0; j < n; ++j) {
    row[j] = std::exp(row[j] - m);
    s += row[j];
  }
  *sum = s;
}

#if TORCHTPU_HAS_VECTOR_PATH
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"  // vectors passed between target and generic code
#endif
/// `sdpa_exp_scalar` over the portable vector type `V` (vexp: about 1 ulp).
struct SdpaExpBody {
  template <class V>
  TORCHTPU_VEC void operator()(float* row, int64_t n, float m, float* sum) const {
    constexpr int L = V::lanes;
    const V mv = V::set1(m);
    V s0 = V::zero(), s1 = V::zero();
    int64_t j = 0;
    for (; j + 2 * L <= n; j += 2 * L) {
      const V e0 = vexp(V::load(row + j) - mv), e1 = vexp(V::load(row + j + L) - mv);
      vstore(row + j, e0, L);
      vstore(row + j + L, e1, L);
      s0 = s0 + e0;
      s1 = s1 + e1;
    }
    for (; j < n; j += L) {
      const int64_t k = n - j < L ? n - j : L;
      const V e = vexp(V::load_n(row + j, k) - mv);
      vstore(row + j, e, k);
      s0 = s0 + select(V::first_n(k), e, V::zero());
    }
    *sum = hsum(s0 + s1);
  }
};
#if TORCHTPU_HAS_VECTOR_PATH
#pragma GCC diagnostic pop
#endif

/// The exponentials of one row of scores (the engine's instruction set, or scalar).
inline void sdpa_exp_row(float* row, int64_t n, float m, float* sum) {
  static const auto fn = torchtpu::detail::vector_entry<SdpaExpBody, float*, int64_t, float, float*>(&sdpa_exp_scalar);
  fn(row, n, m, sum);
}
/// float64 rows: scalar.
inline void sdpa_exp_row(double* row, int64_t n, double m, double* sum) {
  double s = 0.0;
  for (int64_t j = 0; j < n; ++j) {
    row[j] = std::exp(row[j] - m);
    s += row[j];
  }
  *sum = s;
}

/// C[m, n] (row-major, leading dim `ldc`) = A · B, A and B strided (the library's GEMM:
/// the packed f32 kernel where the cpu has one, `gemm_rows` otherwise).
template <class Acc>
void sdpa_gemm(int64_t m, int64_t n, int64_t k, const Acc* a, int64_t sam, int64_t sak, const Acc* b, int64_t sbk,
               int64_t sbn, Acc* c, int64_t ldc) {
  if constexpr (std::is_same_v<Acc, float>) {
    if (torchtpu::detail::cpu_has_vector_gemm()) {
      torchtpu::detail::SgemmArgs g;
      g.m = m; g.n = n; g.k = k;
      g.a = a; g.sam = sam; g.sak = sak;
      g.b = b; g.sbk = sbk; g.sbn = sbn;
      g.c = c; g.ldc = ldc;
      torchtpu::detail::sgemm_f32(g);
      return;
    }
  }
  torchtpu::detail::gemm_rows<Acc, Acc>(0, m, n, k, a, sam, sak, b, sbk, sbn, c, ldc);
}

/// The shape of one attention problem, from the operands' metadata (after the checks).
struct SdpaShape {
  Dims batch;                            ///< the result's batch dims
  int64_t L = 0, S = 0, E = 0, Ev = 0;   ///< query and key lengths, head dims of q/k and v
  int64_t group = 1;                     ///< query heads per key head (grouped-query attention)
};

/// The cpu kernel (see the file's header): `q: [..., L, E]`, `k: [..., S, E]`, `v: [..., S,
/// Ev]` in the computation type `Acc` (float for 16-bit floats and float32, double for
/// float64), `bias` (undefined: none) the additive mask in `Acc`, read broadcast; the result
/// rounded once to `T`. A row whose scores are all -inf gives 0 (torch >= 2.5's _safe_softmax).
template <class Acc, element T>
void sdpa_cpu(const SdpaShape& sh, const Tensor<Acc>& q, const Tensor<Acc>& k, const Tensor<Acc>& v,
              const Tensor<Acc>& bias, double scale, bool causal, Tensor<T>& out) {
  const int64_t L = sh.L, S = sh.S, E = sh.E, Ev = sh.Ev;
  const int64_t nb = numel(sh.batch);
  if (nb == 0 || L == 0 || Ev == 0) return;
  Dims bq = sh.batch, bk = sh.batch;
  const auto strip = [](const Dims& full) { return Dims(full.begin(), full.end() - 2); };
  const BatchOffsets qoff{sh.batch, broadcast_strides(bq, strip(q.sizes()), strip(q.strides())), 1};
  const BatchOffsets koff{sh.batch, broadcast_strides(bk, strip(k.sizes()), strip(k.strides())), sh.group};
  const BatchOffsets voff{sh.batch, broadcast_strides(bk, strip(v.sizes()), strip(v.strides())), sh.group};
  BatchOffsets boff;
  int64_t bsl = 0, bss = 0;
  if (bias.defined()) {
    Dims full = sh.batch;
    full.push_back(L);
    full.push_back(S);
    const Dims bs = broadcast_strides(full, bias.sizes(), bias.strides());
    boff = BatchOffsets{sh.batch, Dims(bs.begin(), bs.end() - 2), 1};
    bsl = bs[full.size() - 2];
    bss = bs[full.size() - 1];
  }
  constexpr int64_t LB = 64, SB = 256;
  const int64_t nrb = (L + LB - 1) / LB, units = nb * nrb;
  const Acc sc = E == 0 ? Acc(0) : static_cast<Acc>(scale);  // E = 0: scores 0 (torch scales q and k first)
  const Acc ninf = -std::numeric_limits<Acc>::infinity();
  const Acc* qp0 = q.data_ptr();
  const Acc* kp0 = k.data_ptr();
  const Acc* vp0 = v.data_ptr();
  const Acc* bp0 = bias.defined() ? bias.data_ptr() : nullptr;
  T* op0 = out.data_ptr();
  const int64_t chunks = std::min(units, torchtpu::detail::chunks_for(nb * L * std::max<int64_t>(S, 1) * (E + Ev + 8), int64_t(1) << 20));
  torchtpu::detail::parallel_chunks(units, chunks, 1, [&](int64_t u0, int64_t u1) {
    // the score block, the running output and p · v, the row maxima and sums: this thread's
    // workspace (slot 5), so a call allocates nothing after the first
    Acc* const s = torchtpu::detail::workspace<Acc>(size_t(LB * SB + 2 * LB * Ev + 2 * LB), 5);
    const std::span<Acc> acc(s + LB * SB, size_t(LB * Ev)), pv(acc.data() + LB * Ev, size_t(LB * Ev)),
        m(pv.data() + LB * Ev, size_t(LB)), l(m.data() + LB, size_t(LB));
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t t = u / nrb, r0 = (u % nrb) * LB, lb = std::min(LB, L - r0);
      const Acc* qp = qp0 + qoff(t) + r0 * E;
      const Acc* kp = kp0 + koff(t);
      const Acc* vp = vp0 + voff(t);
      const Acc* bp = bp0 ? bp0 + boff(t) : nullptr;
      std::fill(acc.begin(), acc.end(), Acc(0));
      std::fill(m.begin(), m.end(), ninf);
      std::fill(l.begin(), l.end(), Acc(0));
      const int64_t s_end = causal ? std::min(S, r0 + lb) : S;  // row i sees keys j <= i
      for (int64_t s0 = 0; s0 < s_end; s0 += SB) {
        const int64_t sb = std::min(SB, s_end - s0);
        sdpa_gemm<Acc>(lb, sb, E, qp, E, 1, kp + s0 * E, 1, E, s, SB);  // q · k^T
        for (int64_t i = 0; i < lb; ++i) {
          Acc* row = s + i * SB;
          const int64_t gi = r0 + i;
          Acc mx = ninf;
          for (int64_t j = 0; j < sb; ++j) {
            Acc x = row[j] * sc;
            if (bp) x += bp[gi * bsl + (s0 + j) * bss];
            if (causal && s0 + j > gi) x = ninf;
            row[j] = x;
            mx = x > mx ? x : mx;
          }
          const Acc mnew = m[size_t(i)] > mx ? m[size_t(i)] : mx;
          Acc alpha = 1, sum = 0;
          if (mnew == ninf) {
            std::fill(row, row + sb, Acc(0));  // every score so far -inf: nothing attended yet
          } else {
            alpha = std::exp(m[size_t(i)] - mnew);  // 0 for the first finite maximum
            sdpa_exp_row(row, sb, mnew, &sum);
          }
          l[size_t(i)] = l[size_t(i)] * alpha + sum;
          m[size_t(i)] = mnew;
          if (alpha != Acc(1))
            for (int64_t e = 0; e < Ev; ++e) acc[size_t(i * Ev + e)] *= alpha;
        }
        sdpa_gemm<Acc>(lb, Ev, sb, s, SB, 1, vp + s0 * Ev, Ev, 1, pv.data(), Ev);  // p · v
        for (int64_t i = 0; i < lb * Ev; ++i) acc[size_t(i)] += pv[size_t(i)];
      }
      T* o = op0 + (t * L + r0) * Ev;
      for (int64_t i = 0; i < lb; ++i) {
        const Acc li = l[size_t(i)];
        for (int64_t e = 0; e < Ev; ++e)
          o[i * Ev + e] = li == Acc(0) ? T(0) : convert<T>(acc[size_t(i * Ev + e)] / li);
      }
    }
  });
}

}  // namespace detail

/// Scaled dot-product attention (torch.nn.functional.scaled_dot_product_attention):
/// `softmax(q · kᵀ · scale + mask) · v` over the last two dims, batched over the leading ones.
///
/// **Shapes:** `query: [..., L, E]`, `key: [..., S, E]`, `value: [..., S, Ev]`, `attn_mask`
/// (optional) broadcastable to `[..., L, S]` → `[..., L, Ev]`; the leading dims broadcast. With
/// `enable_gqa`, `key` and `value` may have fewer heads (dim -3) than `query`: query head `h`
/// reads key head `h / (Hq / Hkv)` (torch's repeat_interleave).
/// **Masks:** bool (True = attend; False adds -inf) or of the query's dtype (added to the
/// scores). `is_causal`: key `j` is attended by query `i` when `j <= i` (top-left aligned, as
/// torch's `ones(L, S).tril()`), and `attn_mask` must be None. A query row whose scores are all
/// masked gives 0 (torch >= 2.5's math backend, `_safe_softmax`; torch 2.0-2.4 gave NaN).
/// **Scale:** `scale` or, when None, `1 / sqrt(E)`.
/// **Dtypes:** float16, bfloat16, float32, float64; query, key and value of one dtype, the
/// result the same. 16-bit floats and float32 compute in float32 (the scores and `p · v` by
/// the library's f32 GEMM), float64 in float64; the result is rounded once.
/// **Errors:** TypeError for non-floating operands, operands of different dtypes, or a mask
/// neither bool nor the query's dtype; ShapeError for operands of rank < 2, `E` or `S` that
/// differ, batch dims or a mask that do not broadcast; ValueError for `dropout_p != 0`
/// (dropout is random; not computed), a mask with `is_causal`, or key/value heads that do not
/// divide the query's (`enable_gqa`). Every message names the op and the operands.
/// **Source:** torch's `_scaled_dot_product_attention_math` (aten/src/ATen/native/
/// transformers/attention.cpp); torch 1.13 has only `_scaled_dot_product_attention`, which
/// returns the weights too and is not this op.
/// **Lowering:** `stablehlo.dot_general` for `q · kᵀ` and `p · v` (at the matmul precision of
/// device/modes.hpp), reduce max and sum over the keys, in float32 (float64 for float64).
/// **Example:** tests/ops/test_attention.cpp, block `sdpa`.
struct ScaledDotProductAttentionOp {
  ///@{
  /// Names and schema (torch 2.5+; 2.0-2.4 lack `enable_gqa`, 2.0 lacks `scale`).
  static constexpr std::string_view name = "scaled_dot_product_attention", aten = "aten::scaled_dot_product_attention";
  static constexpr std::string_view schema =
      "aten::scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, "
      "float dropout_p=0.0, bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::floating();
  /// Non-tensor arguments.
  struct Args {
    bool has_mask = false;    ///< the operands include attn_mask (absent: left out)
    double dropout_p = 0.0;   ///< must be 0
    bool is_causal = false;   ///< lower-triangular mask
    bool has_scale = false;   ///< false: 1 / sqrt(E)
    double scale = 0.0;       ///< the scale when `has_scale`
    bool enable_gqa = false;  ///< grouped-query attention
  };
  /// Arguments from a model node or a run-time call.
  template <class R>
  static Args args(const R& r) {
    const bool has_scale = !r.is_none("scale");
    return Args{!r.is_none("attn_mask"), r.to_double("dropout_p"), r.to_bool("is_causal"), has_scale,
                has_scale ? r.to_double("scale") : 0.0, r.to_bool("enable_gqa")};
  }
  /// The present operands (an absent mask left out, as ops/norm.hpp's optional tensors).
  template <class R>
  static std::vector<AnyTensor> tensors(const R& r) {
    std::vector<AnyTensor> t;
    for (AnyTensor& x : r.tensors())
      if (x.defined()) t.push_back(std::move(x));
    return t;
  }
  /// A bool mask stays bool; every other operand has the result's dtype.
  static ScalarType operand_dtype(size_t i, ScalarType given, ScalarType result) {
    return i == 3 && given == ScalarType::Bool ? given : result;
  }
  /// True when key heads are repeated for the query's (`enable_gqa` and different head counts).
  static bool gqa(std::span<const TensorMeta> in, const Args& a) {
    return a.enable_gqa && in[0].dim() >= 3 && in[1].dim() >= 3 && in[0].sizes[in[0].dim() - 3] != in[1].sizes[in[1].dim() - 3];
  }
  /// The checked problem shape. **Errors:** see the struct.
  static detail::SdpaShape shape(std::span<const TensorMeta> in, const Args& a) {
    const auto ops = [&] { return " (operands " + describe(in) + ")"; };  // built only for an error
    const size_t want = a.has_mask ? 4 : 3;
    bool ok = in.size() == want;
    for (const TensorMeta& m : in) ok = ok && m.defined;
    if (!ok)
      throw ValueError(std::string(aten) + ": expected query, key, value" + (a.has_mask ? " and attn_mask" : "") +
                       " (an absent mask is left out)" + ops());
    const TensorMeta &q = in[0], &k = in[1], &v = in[2];
    if (!is_floating(q.dtype) || k.dtype != q.dtype || v.dtype != q.dtype)
      throw TypeError(std::string(aten) + ": expected query, key and value of one floating point dtype" + ops());
    if (q.dim() < 2 || k.dim() < 2 || v.dim() < 2)
      throw ShapeError(std::string(aten) + ": expected query, key and value of at least 2 dims [..., L, E]" + ops());
    detail::SdpaShape s;
    s.L = q.sizes[q.dim() - 2];
    s.E = q.sizes[q.dim() - 1];
    s.S = k.sizes[k.dim() - 2];
    s.Ev = v.sizes[v.dim() - 1];
    if (k.sizes[k.dim() - 1] != s.E)
      throw ShapeError(std::string(aten) + ": expected key's last dim to equal query's (E = " + std::to_string(s.E) + ")" + ops());
    if (v.sizes[v.dim() - 2] != s.S)
      throw ShapeError(std::string(aten) + ": expected value's dim -2 to equal key's (S = " + std::to_string(s.S) + ")" + ops());
    if (a.dropout_p != 0.0)
      throw ValueError(std::string(aten) + ": dropout_p=" + std::to_string(a.dropout_p) +
                       " is not supported (dropout is random and not computed; pass 0, as a model in eval mode does)" + ops());
    if (a.is_causal && a.has_mask)
      throw ValueError(std::string(aten) + ": an explicit attn_mask must not be set when is_causal=True" + ops());
    Dims qb(q.sizes.begin(), q.sizes.end() - 2), kb(k.sizes.begin(), k.sizes.end() - 2),
        vb(v.sizes.begin(), v.sizes.end() - 2);
    if (gqa(in, a)) {
      if (v.dim() < 3 || v.sizes[v.dim() - 3] != k.sizes[k.dim() - 3])
        throw ValueError(std::string(aten) + ": enable_gqa: expected key and value with the same number of heads (dim -3)" + ops());
      const int64_t hq = q.sizes[q.dim() - 3], hk = k.sizes[k.dim() - 3];
      if (hk == 0 || hq % hk != 0)
        throw ValueError(std::string(aten) + ": enable_gqa: the query's " + std::to_string(hq) +
                         " heads (dim -3) must be a multiple of the key's " + std::to_string(hk) + ops());
      s.group = hq / hk;
      kb[kb.size() - 1] = hq;
      vb[vb.size() - 1] = hq;
    }
    try {
      s.batch = broadcast_shapes(broadcast_shapes(qb, kb, aten), vb, aten);
    } catch (const ShapeError& e) {
      throw ShapeError(std::string(e.what()) + ": the batch dims of query, key and value must broadcast" + ops());
    }
    if (a.has_mask) {
      const TensorMeta& mk = in[3];
      if (mk.dtype != ScalarType::Bool && mk.dtype != q.dtype)
        throw TypeError(std::string(aten) + ": expected attn_mask of dtype bool or the query's dtype" + ops());
      Dims full = s.batch;
      full.push_back(s.L);
      full.push_back(s.S);
      if (!broadcastable_to(mk.sizes, full))
        throw ShapeError(std::string(aten) + ": attn_mask " + to_string(mk.sizes) + " does not broadcast to the scores " +
                         to_string(full) + ops());
    }
    return s;
  }
  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    const detail::SdpaShape s = shape(in, a);
    Dims out = s.batch;
    out.push_back(s.L);
    out.push_back(s.Ev);
    return TensorMeta{in[0].dtype, out, Device{}, true};
  }
  /// The scale used.
  static double scale_of(const Args& a, int64_t E) { return a.has_scale ? a.scale : 1.0 / std::sqrt(double(E)); }
  /// CPU kernel (detail::sdpa_cpu; float32 for 16-bit floats).
  template <element T>
  static void cpu(std::span<const AnyTensor> in, const Args& a, Tensor<T>& out) {
    using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const auto metas = detail::metas_of(in);
    const detail::SdpaShape s = shape(std::span<const TensorMeta>(metas.begin(), metas.size()), a);
    const Tensor<Acc> q = detail::as_dtype<Acc>(in[0]).contiguous(), k = detail::as_dtype<Acc>(in[1]).contiguous(),
                      v = detail::as_dtype<Acc>(in[2]).contiguous();
    Tensor<Acc> bias;
    if (a.has_mask) {
      if (in[3].dtype() == ScalarType::Bool) {
        const Tensor<bool> mb = in[3].get<bool>().contiguous();
        bias = Tensor<Acc>::empty(mb.sizes());
        const bool* src = mb.data_ptr();
        Acc* dst = bias.data_ptr();
        for (int64_t i = 0; i < mb.numel(); ++i) dst[i] = src[i] ? Acc(0) : -std::numeric_limits<Acc>::infinity();
      } else {
        bias = detail::as_dtype<Acc>(in[3]);
      }
    }
    detail::sdpa_cpu<Acc, T>(s, q, k, v, bias, scale_of(a, s.E), a.is_causal, out);
  }
  /// StableHLO: the scores by dot_general, the mask, a max-subtracted softmax over the keys (a
  /// row of -inf scores gives 0), `p · v` by dot_general, divided by the row sums.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    using RO = detail::attn_reduce_op_t<B>;
    const ScalarType t = in[0].dtype, ct = t == ScalarType::Double ? t : ScalarType::Float;
    std::vector<TensorMeta> metas;
    for (const V& x : in) metas.push_back(TensorMeta{x.dtype, Dims(x.dims.begin(), x.dims.end()), Device{}, true});
    const detail::SdpaShape s = shape(metas, a);
    const int nbd = s.batch.size();
    const int64_t N = numel(s.batch), L = s.L, S = s.S, E = s.E, Ev = s.Ev;
    if (numel(out) == 0) return b.constant(0.0, t, std::vector<int64_t>(out.begin(), out.end()));
    std::vector<int64_t> bvec(s.batch.begin(), s.batch.end());
    // `x: [b..., R, C]` broadcast to [batch..., R, C] (key heads repeated for GQA), as [N, R, C]
    auto batched = [&](const V& x0, bool kv) {
      const V x = x0.dtype == ct ? x0 : b.convert(x0, ct);
      const int r = static_cast<int>(x.dims.size());
      const int64_t R = x.dims[size_t(r - 2)], C = x.dims[size_t(r - 1)];
      std::vector<int64_t> tgt = bvec;
      if (kv && s.group > 1) tgt[size_t(nbd - 1)] = x.dims[size_t(r - 3)];
      tgt.push_back(R);
      tgt.push_back(C);
      std::vector<int64_t> bd;
      for (int i = 0; i < r; ++i) bd.push_back(nbd + 2 - r + i);
      // dims of size 1 broadcast; broadcast_in_dim needs them mapped onto the target's dims
      V y = b.broadcast_in_dim(x, tgt, bd);
      if (kv && s.group > 1) {  // [..., Hkv, R, C] -> [..., Hkv, g, R, C] -> [..., Hq, R, C]
        std::vector<int64_t> wide(tgt.begin(), tgt.begin() + nbd);
        wide.push_back(s.group);
        wide.push_back(R);
        wide.push_back(C);
        std::vector<int64_t> keep;
        for (int i = 0; i < nbd; ++i) keep.push_back(i);
        keep.push_back(nbd + 1);
        keep.push_back(nbd + 2);
        y = b.broadcast_in_dim(y, wide, keep);
      }
      return b.reshape(y, {N, R, C});
    };
    const V q = batched(in[0], false), k = batched(in[1], true), v = batched(in[2], true);
    const std::vector<int64_t> sd{N, L, S};
    V sc = b.dot_general(q, k, {{0}, {0}, {2}, {2}}, matmul_precision());  // [N, L, S]
    const double scale = E == 0 ? 0.0 : scale_of(a, E);
    sc = b.multiply(sc, b.constant(scale, ct, sd));
    const V ninf = b.constant(-std::numeric_limits<double>::infinity(), ct, sd);
    if (a.has_mask) {
      const V& mk = in[3];
      std::vector<int64_t> full = bvec;
      full.push_back(L);
      full.push_back(S);
      std::vector<int64_t> bd;
      const int r = static_cast<int>(mk.dims.size());
      for (int i = 0; i < r; ++i) bd.push_back(nbd + 2 - r + i);
      if (mk.dtype == ScalarType::Bool) {
        sc = b.select(b.reshape(b.broadcast_in_dim(mk, full, bd), sd), sc, ninf);
      } else {
        const V m = mk.dtype == ct ? mk : b.convert(mk, ct);
        sc = b.add(sc, b.reshape(b.broadcast_in_dim(m, full, bd), sd));
      }
    }
    if (a.is_causal) {
      const V row = b.iota(ScalarType::Int64, {L, S}, 0), col = b.iota(ScalarType::Int64, {L, S}, 1);
      sc = b.select(b.broadcast_in_dim(b.compare("LE", col, row), sd, {1, 2}), sc, ninf);
    }
    const V mx = b.reduce(sc, b.constant(-std::numeric_limits<double>::infinity(), ct), RO::Max, {2});  // [N, L]
    const V mx_safe = b.select(b.compare("EQ", mx, b.constant(-std::numeric_limits<double>::infinity(), ct, {N, L})),
                               b.constant(0.0, ct, {N, L}), mx);
    const V p = b.exp(b.subtract(sc, b.broadcast_in_dim(mx_safe, sd, {0, 1})));
    const V sum = b.reduce(p, b.constant(0.0, ct), RO::Add, {2});                              // [N, L]
    const V pv = b.dot_general(p, v, {{0}, {0}, {2}, {1}}, matmul_precision());             // [N, L, Ev]
    const std::vector<int64_t> od{N, L, Ev};
    const V sumb = b.broadcast_in_dim(sum, od, {0, 1});
    const V zero = b.constant(0.0, ct, od);
    V y = b.select(b.compare("EQ", sumb, zero), zero, b.divide(pv, sumb));
    y = b.reshape(y, std::vector<int64_t>(out.begin(), out.end()));
    return ct == t ? y : b.convert(y, t);
  }
};

namespace detail {
/// Runs ScaledDotProductAttentionOp on `q, k, v` and `mask` (undefined: none), result type `R`
/// (the typed API) or run-time typed (`R` = void).
template <class R>
auto sdpa_call(const AnyTensor& q, const AnyTensor& k, const AnyTensor& v, const AnyTensor& mask, double dropout_p,
               bool is_causal, std::optional<double> scale, bool enable_gqa) {
  OperandList<AnyTensor, 4> in;  // on the stack
  in.push_back(q);
  in.push_back(k);
  in.push_back(v);
  if (mask.defined()) in.push_back(mask);
  const ScaledDotProductAttentionOp::Args a{mask.defined(), dropout_p, is_causal, scale.has_value(), scale.value_or(0.0),
                                            enable_gqa};
  if constexpr (std::is_void_v<R>) return call<ScaledDotProductAttentionOp>(in.span(), a);
  else return call_mixed<ScaledDotProductAttentionOp, R>(in.span(), a);
}
}  // namespace detail

// Each op's entry point, compiled once in TORCHTPU_SEPARATE_OPS programs (ops/library.hpp).
TORCHTPU_LIBRARY_OP(ScaledDotProductAttentionOp);

}  // namespace ops

/// Scaled dot-product attention (torch.nn.functional.scaled_dot_product_attention):
/// `softmax(q · kᵀ · scale + mask) · v`; `attn_mask` a bool tensor (True = attend) or one of
/// `T` (added), undefined for none. See ops::ScaledDotProductAttentionOp.
/// **Example:** `scaled_dot_product_attention(q, k, v, {}, 0.0, true)` (causal).
template <element T, int R1, int R2, int R3>
Tensor<T> scaled_dot_product_attention(const Tensor<T, R1>& query, const Tensor<T, R2>& key, const Tensor<T, R3>& value,
                                       const AnyTensor& attn_mask = AnyTensor(), double dropout_p = 0.0,
                                       bool is_causal = false, std::optional<double> scale = std::nullopt,
                                       bool enable_gqa = false) {
  return ops::detail::sdpa_call<T>(Tensor<T>(query), Tensor<T>(key), Tensor<T>(value), attn_mask, dropout_p, is_causal,
                                   scale, enable_gqa);
}
/// Run-time typed `scaled_dot_product_attention`.
template <std::same_as<AnyTensor> A>
A scaled_dot_product_attention(const A& query, const A& key, const A& value, const A& attn_mask = A(),
                               double dropout_p = 0.0, bool is_causal = false,
                               std::optional<double> scale = std::nullopt, bool enable_gqa = false) {
  return ops::detail::sdpa_call<void>(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa);
}

}  // namespace torchtpu
