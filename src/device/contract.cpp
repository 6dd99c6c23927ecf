// src/device/contract.cpp — the emulator's matrix-unit kernels: dot_general and convolution
// with TPU numerics (f32 operands rounded to bf16 at DEFAULT precision, f32 accumulation), on a
// blocked, threaded f32 matmul.
#include <algorithm>  // std::fill, std::min, std::clamp, std::is_sorted
#include <cmath>      // std::isnan
#include <cstdlib>    // std::getenv, std::atoi
#include <exception>  // std::exception
#include <string>     // std::string
#include <thread>     // std::thread
#include <vector>     // std::vector

#include "emulator.hpp"                // Op, Tensor, et_round
#include "kernels.hpp"                 // op_fail, ints, transpose_raw, ...
#include "torchtpu/core/bfloat16.hpp"  // bfloat16 rounding of matrix-unit operands

namespace torchtpu::emulator::detail {
namespace {

// ---------------------------------------------------------------------------- matmul
/// Rows [m0, m1) of C = A·B (row-major, f32 accumulation, each element summed in ascending k).
void matmul_rows(const float* A, const float* B, float* C, int64_t m0, int64_t m1, int64_t K, int64_t N) {
  constexpr int64_t kBN = 256, kBK = 128;
  std::fill(C + m0 * N, C + m1 * N, 0.0f);
  for (int64_t n0 = 0; n0 < N; n0 += kBN) {
    const int64_t n1 = std::min(N, n0 + kBN), w = n1 - n0;
    for (int64_t k0 = 0; k0 < K; k0 += kBK) {
      const int64_t k1 = std::min(K, k0 + kBK);
      int64_t i = m0;
      for (; i + 4 <= m1; i += 4) {
        float* __restrict c0 = C + i * N + n0;
        float* __restrict c1 = c0 + N;
        float* __restrict c2 = c1 + N;
        float* __restrict c3 = c2 + N;
        for (int64_t k = k0; k < k1; ++k) {
          const float a0 = A[i * K + k], a1 = A[(i + 1) * K + k], a2 = A[(i + 2) * K + k], a3 = A[(i + 3) * K + k];
          const float* __restrict b = B + k * N + n0;
          for (int64_t j = 0; j < w; ++j) {
            const float bj = b[j];
            c0[j] += a0 * bj;
            c1[j] += a1 * bj;
            c2[j] += a2 * bj;
            c3[j] += a3 * bj;
          }
        }
      }
      for (; i < m1; ++i) {
        float* __restrict c = C + i * N + n0;
        for (int64_t k = k0; k < k1; ++k) {
          const float a = A[i * K + k];
          const float* __restrict b = B + k * N + n0;
          for (int64_t j = 0; j < w; ++j) c[j] += a * b[j];
        }
      }
    }
  }
}

/// Worker threads for large contractions: TORCHTPU_EMULATOR_THREADS, else the hardware count
/// (at most 16). Results do not depend on the thread count.
int num_threads() {
  static const int n = [] {
    if (const char* v = std::getenv("TORCHTPU_EMULATOR_THREADS")) {
      const int t = std::atoi(v);
      if (t >= 1) return std::min(t, 64);
    }
    const unsigned h = std::thread::hardware_concurrency();
    return static_cast<int>(std::clamp(h, 1u, 16u));
  }();
  return n;
}

/// C[M][N] = A[M][K] · B[K][N] in f32, split over threads by rows when the product is large.
void matmul_f32(const float* A, const float* B, float* C, int64_t M, int64_t K, int64_t N) {
  const int threads = num_threads();
  const double work = static_cast<double>(M) * static_cast<double>(K) * static_cast<double>(N);
  if (threads <= 1 || work < (1 << 21) || M < 8) {
    matmul_rows(A, B, C, 0, M, K, N);
    return;
  }
  const int64_t parts = std::min<int64_t>(threads, (M + 3) / 4);
  const int64_t rows = ((M + parts - 1) / parts + 3) / 4 * 4;
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(parts));
  try {
    for (int64_t m0 = rows; m0 < M; m0 += rows)
      pool.emplace_back(matmul_rows, A, B, C, m0, std::min(M, m0 + rows), K, N);
  } catch (const std::exception& e) {
    // A thread that does not start (std::system_error: EAGAIN) must not leave joinable
    // threads to the vector's destructor (std::terminate): join the started ones, then fail
    // this execution with a PJRT error.
    for (auto& t : pool) t.join();
    throw EmuError(kResourceExhausted, std::string("TPU emulator: dot_general: cannot start a worker thread (") +
                                           e.what() + "); set TORCHTPU_EMULATOR_THREADS=1 to run on one thread");
  }
  matmul_rows(A, B, C, 0, std::min(M, rows), K, N);
  for (auto& t : pool) t.join();
}

/// Precision of operand `i` from precision_config (DEFAULT when absent).
std::string precision_of(const Op& op, size_t i) {
  auto it = op.attrs.find("precision_config");
  if (it == op.attrs.end() || it->second.kind != Attr::List || it->second.items.size() <= i) return "DEFAULT";
  const Attr& a = it->second.items[i];
  return a.s.empty() ? "DEFAULT" : a.s;
}

/// Operand values as the matrix unit sees them: f32-family values rounded to bf16 at DEFAULT.
std::vector<float> mxu_operand(const std::vector<double>& v, ET et, const std::string& precision) {
  std::vector<float> out(v.size());
  const bool to_bf16 = precision == "DEFAULT" && (et == ET::F32 || et == ET::F16);
  for (size_t i = 0; i < v.size(); ++i) {
    const float f = static_cast<float>(v[i]);
    out[i] = to_bf16 ? static_cast<float>(bfloat16(f)) : f;
  }
  return out;
}

void matmul_any(const Tensor& a, const Tensor& b, ET et, const std::string& pa, const std::string& pb,
                int64_t batch, int64_t M, int64_t K, int64_t N, std::vector<double>& out) {
  out.assign(static_cast<size_t>(batch * M * N), 0.0);
  if (et == ET::F64 || !et_is_float(et)) {  // exact-ish paths: f64 and integers accumulate in double
    for (int64_t bi = 0; bi < batch; ++bi)
      for (int64_t i = 0; i < M; ++i)
        for (int64_t k = 0; k < K; ++k) {
          const double x = a.data[static_cast<size_t>((bi * M + i) * K + k)];
          const double* y = b.data.data() + (bi * K + k) * N;
          double* z = out.data() + (bi * M + i) * N;
          for (int64_t j = 0; j < N; ++j) z[j] += x * y[j];
        }
    return;
  }
  const auto A = mxu_operand(a.data, et, pa), B = mxu_operand(b.data, et, pb);
  std::vector<float> C(static_cast<size_t>(M * N));
  for (int64_t bi = 0; bi < batch; ++bi) {
    matmul_f32(A.data() + bi * M * K, B.data() + bi * K * N, C.data(), M, K, N);
    for (int64_t i = 0; i < M * N; ++i) out[static_cast<size_t>(bi * M * N + i)] = C[static_cast<size_t>(i)];
  }
}

}  // namespace

Tensor run_dot_general(const Op& op, const Tensor& lhs, const Tensor& rhs, const TensorType& out) {
  std::vector<int64_t> lb, rb, lc, rc;
  if (auto it = op.attrs.find("dot_dimension_numbers"); it != op.attrs.end()) {
    auto get = [&](const char* k) {
      std::vector<int64_t> v;
      if (const Attr* a = it->second.get(k)) for (const auto& x : a->items) v.push_back(x.i);
      return v;
    };
    lb = get("lhs_batching_dimensions"); rb = get("rhs_batching_dimensions");
    lc = get("lhs_contracting_dimensions"); rc = get("rhs_contracting_dimensions");
  } else if (op.name == "stablehlo.dot") {
    lc = {static_cast<int64_t>(lhs.type.dims.size()) - 1};
    rc = {0};
  } else {
    lb = ints(op, "lhs_batching_dimensions", false); rb = ints(op, "rhs_batching_dimensions", false);
    lc = ints(op, "lhs_contracting_dimensions"); rc = ints(op, "rhs_contracting_dimensions");
  }
  if (lhs.type.et != rhs.type.et) op_fail(op, "operand element types differ");
  if (lb.size() != rb.size() || lc.size() != rc.size()) op_fail(op, "dimension lists differ in length");
  auto role = [&](const Tensor& t, const std::vector<int64_t>& bat, const std::vector<int64_t>& con, std::vector<int64_t>& fr) {
    std::vector<int> seen(t.type.dims.size(), 0);
    for (const auto* l : {&bat, &con})
      for (int64_t d : *l) {
        if (d < 0 || d >= static_cast<int64_t>(seen.size()) || seen[static_cast<size_t>(d)]++) op_fail(op, "invalid dimension numbers");
      }
    for (size_t d = 0; d < seen.size(); ++d) if (!seen[d]) fr.push_back(static_cast<int64_t>(d));
  };
  std::vector<int64_t> lf, rf;
  role(lhs, lb, lc, lf);
  role(rhs, rb, rc, rf);
  int64_t B = 1, M = 1, K = 1, N = 1;
  std::vector<int64_t> dims;
  for (size_t i = 0; i < lb.size(); ++i) {
    const int64_t s = lhs.type.dims[static_cast<size_t>(lb[i])];
    if (s != rhs.type.dims[static_cast<size_t>(rb[i])]) op_fail(op, "batch sizes differ");
    B *= s;
    dims.push_back(s);
  }
  for (size_t i = 0; i < lc.size(); ++i) {
    const int64_t s = lhs.type.dims[static_cast<size_t>(lc[i])];
    if (s != rhs.type.dims[static_cast<size_t>(rc[i])])
      op_fail(op, "contracting sizes differ: " + lhs.type.str() + " and " + rhs.type.str());
    K *= s;
  }
  for (int64_t d : lf) { M *= lhs.type.dims[static_cast<size_t>(d)]; dims.push_back(lhs.type.dims[static_cast<size_t>(d)]); }
  for (int64_t d : rf) { N *= rhs.type.dims[static_cast<size_t>(d)]; dims.push_back(rhs.type.dims[static_cast<size_t>(d)]); }
  if (dims != out.dims) op_fail(op, "result type " + out.str() + " does not match the operands");
  std::vector<int64_t> lp = lb, rp = rb;
  lp.insert(lp.end(), lf.begin(), lf.end());
  lp.insert(lp.end(), lc.begin(), lc.end());
  rp.insert(rp.end(), rc.begin(), rc.end());
  rp.insert(rp.end(), rf.begin(), rf.end());
  Tensor a_moved, b_moved;
  const bool la = std::is_sorted(lp.begin(), lp.end()), rb_id = std::is_sorted(rp.begin(), rp.end());
  if (!la) a_moved = transpose_raw(lhs, lp);
  if (!rb_id) b_moved = transpose_raw(rhs, rp);
  const Tensor& A = la ? lhs : a_moved;
  const Tensor& Bm = rb_id ? rhs : b_moved;
  Tensor r = make(out);
  matmul_any(A, Bm, lhs.type.et, precision_of(op, 0), precision_of(op, 1), B, M, K, N, r.data);
  for (double& v : r.data) v = et_round(out.et, v);
  return r;
}

// ---------------------------------------------------------------------------- convolution
Tensor run_convolution(const Op& op, const Tensor& lhs, const Tensor& rhs, const TensorType& out) {
  auto it = op.attrs.find("dimension_numbers");
  if (it == op.attrs.end() || it->second.kind != Attr::Conv || it->second.items.size() != 3)
    op_fail(op, "missing or unsupported dimension_numbers");
  const size_t rank = lhs.type.dims.size();
  if (rank < 3 || rhs.type.dims.size() != rank || out.dims.size() != rank) op_fail(op, "operand ranks must match and be >= 3");
  const size_t ns = rank - 2;
  // Decode "[b, f, 0, 1]" style label lists into (batch, feature, spatial...) positions.
  auto decode = [&](const Attr& l, const char* b, const char* f, int64_t& pb, int64_t& pf, std::vector<int64_t>& sp) {
    if (l.kind != Attr::List || l.items.size() != rank) op_fail(op, "dimension_numbers has the wrong rank");
    sp.assign(ns, -1);
    pb = pf = -1;
    for (size_t i = 0; i < rank; ++i) {
      const Attr& e = l.items[i];
      if (e.kind == Attr::Int && e.i >= 0 && e.i < static_cast<int64_t>(ns)) sp[static_cast<size_t>(e.i)] = static_cast<int64_t>(i);
      else if (e.kind == Attr::Word && e.s == b) pb = static_cast<int64_t>(i);
      else if (e.kind == Attr::Word && e.s == f) pf = static_cast<int64_t>(i);
      else op_fail(op, "bad label in dimension_numbers");
    }
    for (int64_t s : sp) if (s < 0) op_fail(op, "dimension_numbers misses a spatial dimension");
    if (pb < 0 || pf < 0) op_fail(op, "dimension_numbers misses a batch/feature dimension");
  };
  int64_t ib, ifd, ko, ki, ob, of;
  std::vector<int64_t> is, ks, os;
  decode(it->second.items[0], "b", "f", ib, ifd, is);
  decode(it->second.items[1], "o", "i", ko, ki, ks);
  decode(it->second.items[2], "b", "f", ob, of, os);
  auto strides = ints(op, "window_strides", false), ld = ints(op, "lhs_dilation", false), rd = ints(op, "rhs_dilation", false);
  auto pad = ints(op, "padding", false);
  if (strides.empty()) strides.assign(ns, 1);
  if (ld.empty()) ld.assign(ns, 1);
  if (rd.empty()) rd.assign(ns, 1);
  if (pad.empty()) pad.assign(2 * ns, 0);
  if (strides.size() != ns || ld.size() != ns || rd.size() != ns || pad.size() != 2 * ns) op_fail(op, "window attributes do not match the spatial rank");
  for (size_t d = 0; d < ns; ++d)
    if (strides[d] < 1 || ld[d] < 1 || rd[d] < 1) op_fail(op, "strides and dilations must be >= 1");
  if (int_attr(op, "batch_group_count", 1) != 1) op_fail(op, "batch_group_count other than 1 is not supported", kUnimplemented);
  if (auto rv = op.attrs.find("window_reversal"); rv != op.attrs.end())
    for (const auto& e : rv->second.items) if (e.i) op_fail(op, "window_reversal is not supported", kUnimplemented);
  const int64_t G = int_attr(op, "feature_group_count", 1);
  if (lhs.type.et != rhs.type.et) op_fail(op, "operand element types differ");
  // Canonical layouts: input [N, C, S...], kernel [O, I, K...].
  std::vector<int64_t> ip = {ib, ifd}, kp = {ko, ki};
  ip.insert(ip.end(), is.begin(), is.end());
  kp.insert(kp.end(), ks.begin(), ks.end());
  auto is_identity = [](const std::vector<int64_t>& p) {
    for (size_t i = 0; i < p.size(); ++i)
      if (p[i] != static_cast<int64_t>(i)) return false;
    return true;
  };
  Tensor x_moved, w_moved;  // only filled when the layout is not already NCHW / OIHW
  if (!is_identity(ip)) x_moved = transpose_raw(lhs, ip);
  if (!is_identity(kp)) w_moved = transpose_raw(rhs, kp);
  const Tensor& X = is_identity(ip) ? lhs : x_moved;
  const Tensor& W = is_identity(kp) ? rhs : w_moved;
  const int64_t Nb = X.type.dims[0], C = X.type.dims[1], O = W.type.dims[0], CI = W.type.dims[1];
  if (G < 1 || C != CI * G || O % G != 0) op_fail(op, "feature counts do not fit feature_group_count");
  std::vector<int64_t> in(ns), kd(ns), od(ns);
  int64_t Sin = 1, Kp = 1, Op_ = 1;
  for (size_t d = 0; d < ns; ++d) {
    in[d] = X.type.dims[2 + d];
    kd[d] = W.type.dims[2 + d];
    const int64_t padded = (in[d] > 0 ? (in[d] - 1) * ld[d] + 1 : 0) + pad[2 * d] + pad[2 * d + 1];
    const int64_t w = (kd[d] - 1) * rd[d] + 1;
    od[d] = padded < w ? 0 : (padded - w) / strides[d] + 1;
    Sin *= in[d];
    Kp *= kd[d];
    Op_ *= od[d];
  }
  std::vector<int64_t> want(rank);
  want[static_cast<size_t>(ob)] = Nb;
  want[static_cast<size_t>(of)] = O;
  for (size_t d = 0; d < ns; ++d) want[static_cast<size_t>(os[d])] = od[d];
  if (want != out.dims) op_fail(op, "result type " + out.str() + " does not match the convolution");
  // off[opos * Kp + kpos] = flat input offset inside one (n, c) plane, or -1 (padding / hole)
  const std::vector<int64_t> ins = strides_of(in);
  std::vector<int64_t> off(static_cast<size_t>(Op_ * Kp), -1);
  {
    std::vector<int64_t> oi(ns, 0), ki(ns, 0);
    for (int64_t opos = 0; opos < Op_; ++opos) {
      std::fill(ki.begin(), ki.end(), 0);
      for (int64_t kpos = 0; kpos < Kp; ++kpos) {
        int64_t o = 0;
        for (size_t d = 0; d < ns && o >= 0; ++d) {
          const int64_t p = oi[d] * strides[d] + ki[d] * rd[d] - pad[2 * d];
          const int64_t span = in[d] > 0 ? (in[d] - 1) * ld[d] + 1 : 0;
          if (p < 0 || p >= span || p % ld[d] != 0) o = -1;
          else o += (p / ld[d]) * ins[d];
        }
        off[static_cast<size_t>(opos * Kp + kpos)] = o;
        for (size_t d = ns; d-- > 0;) { if (++ki[d] < kd[d]) break; ki[d] = 0; }
      }
      for (size_t d = ns; d-- > 0;) { if (++oi[d] < od[d]) break; oi[d] = 0; }
    }
  }
  const ET et = lhs.type.et;
  const bool use_f32 = et_is_float(et) && et != ET::F64;
  const std::string pa = precision_of(op, 0), pb = precision_of(op, 1);
  const int64_t Cg = CI, Og = O / G, Kc = Cg * Kp, Ncol = Nb * Op_;
  std::vector<double> result(static_cast<size_t>(Nb * O * Op_), 0.0);  // [N, O, S_out]
  if (!use_f32) {  // f64 and integers: direct accumulation in double
    for (int64_t n = 0; n < Nb; ++n)
      for (int64_t o = 0; o < O; ++o) {
        const int64_t g = o / Og;
        for (int64_t p = 0; p < Op_; ++p) {
          double acc = 0;
          for (int64_t c = 0; c < Cg; ++c) {
            const double* xp = X.data.data() + (n * C + g * Cg + c) * Sin;
            const double* wp = W.data.data() + (o * Cg + c) * Kp;
            for (int64_t k = 0; k < Kp; ++k) {
              const int64_t q = off[static_cast<size_t>(p * Kp + k)];
              if (q >= 0) acc += wp[k] * xp[q];
            }
          }
          result[static_cast<size_t>((n * O + o) * Op_ + p)] = acc;
        }
      }
  } else {
    const auto Xf = mxu_operand(X.data, et, pa);
    // Orientation: the longer of (output features, output positions) is the inner loop.
    const bool positions_major = Og >= std::min<int64_t>(Ncol, 64);
    const auto Wf = positions_major ? std::vector<float>() : mxu_operand(W.data, et, pb);
    const bool w_bf16 = pb == "DEFAULT" && (et == ET::F32 || et == ET::F16);
    std::vector<float> patches(static_cast<size_t>(Kc * Ncol)), res(static_cast<size_t>(Og * Ncol)), wt;
    if (positions_major) wt.resize(static_cast<size_t>(Kc * Og));
    for (int64_t g = 0; g < G; ++g) {
      // patches: positions-major [Ncol][Kc], else [Kc][Ncol]
      for (int64_t n = 0; n < Nb; ++n)
        for (int64_t c = 0; c < Cg; ++c) {
          const float* xp = Xf.data() + (n * C + g * Cg + c) * Sin;
          for (int64_t p = 0; p < Op_; ++p) {
            const int64_t* op_off = off.data() + p * Kp;
            const int64_t col = n * Op_ + p;
            for (int64_t k = 0; k < Kp; ++k) {
              const float v = op_off[k] >= 0 ? xp[op_off[k]] : 0.0f;
              const int64_t row = c * Kp + k;
              patches[static_cast<size_t>(positions_major ? col * Kc + row : row * Ncol + col)] = v;
            }
          }
        }
      if (positions_major) {
        const double* wg = W.data.data() + g * Og * Kc;  // [Og][Kc] → wt [Kc][Og]
        for (int64_t o = 0; o < Og; ++o)
          for (int64_t k = 0; k < Kc; ++k) {
            const float f = static_cast<float>(wg[o * Kc + k]);
            wt[static_cast<size_t>(k * Og + o)] = w_bf16 ? static_cast<float>(bfloat16(f)) : f;
          }
        matmul_f32(patches.data(), wt.data(), res.data(), Ncol, Kc, Og);  // [Ncol][Og]
        for (int64_t n = 0; n < Nb; ++n)
          for (int64_t o = 0; o < Og; ++o)
            for (int64_t p = 0; p < Op_; ++p)
              result[static_cast<size_t>((n * O + g * Og + o) * Op_ + p)] = res[static_cast<size_t>((n * Op_ + p) * Og + o)];
      } else {
        matmul_f32(Wf.data() + g * Og * Kc, patches.data(), res.data(), Og, Kc, Ncol);  // [Og][Ncol]
        for (int64_t o = 0; o < Og; ++o)
          for (int64_t n = 0; n < Nb; ++n)
            for (int64_t p = 0; p < Op_; ++p)
              result[static_cast<size_t>((n * O + g * Og + o) * Op_ + p)] = res[static_cast<size_t>(o * Ncol + n * Op_ + p)];
      }
    }
  }
  // [N, O, S...] → output layout
  Tensor canon;
  canon.type = {out.et, {}};
  canon.type.dims = {Nb, O};
  canon.type.dims.insert(canon.type.dims.end(), od.begin(), od.end());
  canon.data = std::move(result);
  std::vector<int64_t> back(rank);  // output axis a takes canonical axis back[a]
  back[static_cast<size_t>(ob)] = 0;
  back[static_cast<size_t>(of)] = 1;
  for (size_t d = 0; d < ns; ++d) back[static_cast<size_t>(os[d])] = static_cast<int64_t>(2 + d);
  Tensor r = transpose_raw(canon, back);
  for (double& v : r.data) v = et_round(out.et, v);
  return r;
}


}  // namespace torchtpu::emulator::detail
