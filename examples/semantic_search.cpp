// examples/semantic_search.cpp — the main job's semantic search (scripts/demo): a pretrained
// Hugging Face sentence-embedding model (all-MiniLM-L6-v2, traced by tools/prepare_minilm.py)
// embeds a corpus of real sentences (Debian's package synopses) through torchtpu, on the cpu
// or a PJRT device, then answers queries by cosine similarity (a torchtpu matmul + topk).
//
// Every embedding is checked against torch's own (cosine >= 0.99999, computed here in float64)
// and every query's top-10 against torch's (identical indices, in order); the exit status is 1
// when a check fails.
//
// Usage: semantic_search DIR [--device cpu|tpu|xla_cpu] [--batch N] [--show K] [--limit N]
//   DIR: what tools/prepare_minilm.py wrote (minilm.pt, corpus_ids.npy, corpus_mask.npy,
//   query_ids.npy, query_mask.npy, corpus_ref.npy, query_ref.npy, query_top.npy, corpus.txt,
//   queries.txt). Token ids and masks are int64 [N, 128]; each batch of N rows is cut to its
//   longest row (on a PJRT device rounded up to a multiple of 8 tokens, so a handful of
//   programs serve every batch: one is lowered and compiled per shape). `--limit N` embeds and
//   searches the first N corpus sentences only (the TPU emulator interprets every op, so the
//   main job gives it a part of the corpus); torch's top-10 is then recomputed here, in
//   float64 from torch's embeddings of those sentences.
#include <algorithm>  // std::max, std::min
#include <chrono>     // std::chrono::steady_clock
#include <cmath>      // std::sqrt
#include <cstdio>     // std::printf
#include <cstdlib>    // std::atoi
#include <fstream>    // std::ifstream
#include <map>        // std::map
#include <memory>     // std::shared_ptr
#include <string>     // std::string
#include <utility>    // std::pair
#include <vector>     // std::vector

#include <torchtpu/io/npy.hpp>    // read_npy
#include <torchtpu/jit/load.hpp>  // jit::load
#include <torchtpu/jit/lower.hpp> // jit::DeviceProgram
#include <torchtpu/torchtpu.hpp>  // Tensor, matmul, topk

namespace {

using torchtpu::AnyTensor;
using torchtpu::Dims;
using torchtpu::Tensor;

template <class T>
Tensor<T> load(const std::string& path, size_t rank) {
  const torchtpu::NpyArray a = torchtpu::read_npy(path);
  if (a.shape.size() != rank)
    throw torchtpu::ShapeError(path + ": expected " + std::to_string(rank) + " dims, got " + std::to_string(a.shape.size()));
  const auto v = a.values<T>();  // TypeError for another dtype
  return torchtpu::from_data(v.data(), Dims(a.shape.begin(), a.shape.end()));
}

std::vector<std::string> lines(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw torchtpu::ValueError("cannot read " + path);
  std::vector<std::string> r;
  for (std::string l; std::getline(f, l);) r.push_back(l);
  return r;
}

/// Embeds the rows of `ids`/`mask` [N, 128] in batches: on the cpu through the run-time graph,
/// on a PJRT device through one compiled program per batch shape.
class Embedder {
 public:
  Embedder(const torchtpu::jit::Module& m, std::string device, int64_t batch)
      : m_(m), device_(std::move(device)), batch_(batch) {
    if (device_ != "cpu") client_ = torchtpu::pjrt::Client::get(device_);
  }

  Tensor<float> operator()(const Tensor<int64_t>& ids, const Tensor<int64_t>& mask) {
    const int64_t n = ids.size(0);
    Tensor<float> out;
    for (int64_t s = 0; s < n; s += batch_) {
      const int64_t b = std::min(batch_, n - s);
      int64_t len = 1;  // the batch's longest row
      const Tensor<int64_t> mb = mask.narrow(0, s, b);
      const Tensor<int64_t> mc = mb.contiguous();  // the rows read in place (one pass, no per-element views)
      const int64_t* mp = mc.data_ptr();
      for (int64_t i = 0; i < b; ++i)
        for (int64_t j = 0; j < mc.size(1); ++j)
          if (mp[i * mc.size(1) + j] != 0) len = std::max(len, j + 1);
      if (client_) len = std::min<int64_t>(mb.size(1), (len + 7) / 8 * 8);
      const Tensor<int64_t> x = ids.narrow(0, s, b).narrow(1, 0, len).contiguous();
      const Tensor<int64_t> xm = mb.narrow(1, 0, len).contiguous();
      const auto t0 = std::chrono::steady_clock::now();
      const Tensor<float> e = run(x, xm);
      batch_ms_.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      if (!out.defined()) out = Tensor<float>::empty(Dims{n, e.size(1)});
      out.narrow(0, s, b).copy_(e);
    }
    return out;
  }
  /// Milliseconds per batch so far (a device's first batch of a shape includes its compile).
  const std::vector<double>& batch_ms() const { return batch_ms_; }
  /// Milliseconds spent lowering and compiling device programs.
  double compile_ms() const { return compile_ms_; }
  /// Device programs compiled.
  size_t programs() const { return programs_.size(); }

 private:
  Tensor<float> run(const Tensor<int64_t>& x, const Tensor<int64_t>& xm) {
    using torchtpu::jit::Value;
    if (!client_) return m_.forward({Value(x), Value(xm)})[0].tensor("semantic_search: embeddings");
    auto key = std::make_pair(x.size(0), x.size(1));
    auto it = programs_.find(key);
    if (it == programs_.end()) {
      const auto t0 = std::chrono::steady_clock::now();
      auto p = std::make_shared<torchtpu::jit::DeviceProgram>(
          m_.graph(), std::vector<torchtpu::ScalarType>{torchtpu::ScalarType::Int64, torchtpu::ScalarType::Int64},
          std::vector<Dims>{x.sizes(), xm.sizes()}, client_);
      compile_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      it = programs_.emplace(key, std::move(p)).first;
    }
    return it->second->run_any({AnyTensor(x), AnyTensor(xm)}).at(0).get<float>();
  }

  const torchtpu::jit::Module& m_;
  std::string device_;
  int64_t batch_;
  std::shared_ptr<torchtpu::pjrt::Client> client_;
  std::map<std::pair<int64_t, int64_t>, std::shared_ptr<torchtpu::jit::DeviceProgram>> programs_;
  std::vector<double> batch_ms_;
  double compile_ms_ = 0;
};

/// Smallest cosine similarity between matching rows of `a` and `ref` (float64 sums), and the
/// largest absolute element difference.
std::pair<double, double> agreement(const Tensor<float>& a, const Tensor<float>& ref) {
  if (a.sizes() != ref.sizes())
    throw torchtpu::ShapeError("semantic_search: embeddings " + torchtpu::to_string(a.sizes()) + " vs torch's " +
                               torchtpu::to_string(ref.sizes()));
  const Tensor<float> x = a.contiguous(), y = ref.contiguous();
  const int64_t n = x.size(0), d = x.size(1);
  double min_cos = 1, max_abs = 0;
  for (int64_t i = 0; i < n; ++i) {
    double xy = 0, xx = 0, yy = 0;
    for (int64_t j = 0; j < d; ++j) {
      const double p = x.data_ptr()[i * d + j], q = y.data_ptr()[i * d + j];
      xy += p * q;
      xx += p * p;
      yy += q * q;
      max_abs = std::max(max_abs, std::abs(p - q));
    }
    min_cos = std::min(min_cos, xy / std::sqrt(xx * yy));
  }
  return {min_cos, max_abs};
}

/// True when `a` and `b` have the same shape and elements.
bool same_values(const Tensor<int64_t>& a, const Tensor<int64_t>& b) {
  if (a.sizes() != b.sizes()) return false;
  const Tensor<int64_t> x = a.contiguous(), y = b.contiguous();
  return std::equal(x.data_ptr(), x.data_ptr() + x.numel(), y.data_ptr());
}

/// The `k` best rows of `corpus` for each row of `queries` by dot product (float64 sums over
/// float32 embeddings), best first, ties in index order: torch's ranking, computed apart from
/// torchtpu's ops.
Tensor<int64_t> reference_top(const Tensor<float>& queries, const Tensor<float>& corpus, int64_t k) {
  const Tensor<float> q = queries.contiguous(), c = corpus.contiguous();
  const int64_t nq = q.size(0), nc = c.size(0), d = q.size(1);
  k = std::min(k, nc);
  Tensor<int64_t> r = Tensor<int64_t>::empty(Dims{nq, k});
  std::vector<std::pair<double, int64_t>> s(static_cast<size_t>(nc));
  for (int64_t i = 0; i < nq; ++i) {
    for (int64_t j = 0; j < nc; ++j) {
      double v = 0;
      for (int64_t e = 0; e < d; ++e) v += double(q.data_ptr()[i * d + e]) * double(c.data_ptr()[j * d + e]);
      s[size_t(j)] = {-v, j};
    }
    std::partial_sort(s.begin(), s.begin() + k, s.end());
    for (int64_t e = 0; e < k; ++e) r.data_ptr()[i * k + e] = s[size_t(e)].second;
  }
  return r;
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 2) {
    std::fprintf(stderr, "usage: semantic_search DIR [--device cpu|tpu|xla_cpu] [--batch N] [--show K] [--limit N]\n");
    return 2;
  }
  const std::string dir = argv[1];
  constexpr int64_t top = 10;
  std::string device = "cpu";
  int64_t batch = 32, show = 3, limit = -1;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--device") device = argv[i + 1];
    else if (a == "--batch") batch = std::max(1, std::atoi(argv[i + 1]));
    else if (a == "--show") show = std::max(0, std::atoi(argv[i + 1]));
    else if (a == "--limit") limit = std::max(1, std::atoi(argv[i + 1]));
    else throw torchtpu::ValueError("unknown option " + a);
  }
  const torchtpu::jit::Module m = torchtpu::jit::load(dir + "/minilm.pt");
  const auto corpus = lines(dir + "/corpus.txt"), queries = lines(dir + "/queries.txt");
  Tensor<int64_t> cids = load<int64_t>(dir + "/corpus_ids.npy", 2), cmask = load<int64_t>(dir + "/corpus_mask.npy", 2);
  const Tensor<int64_t> qids = load<int64_t>(dir + "/query_ids.npy", 2), qmask = load<int64_t>(dir + "/query_mask.npy", 2);
  Tensor<float> cref = load<float>(dir + "/corpus_ref.npy", 2);
  const Tensor<float> qref = load<float>(dir + "/query_ref.npy", 2);
  if (cids.size(0) != int64_t(corpus.size()) || qids.size(0) != int64_t(queries.size()) || cref.size(0) != cids.size(0))
    throw torchtpu::ValueError("semantic_search: " + dir + ": the texts and the token arrays differ in length");
  const bool whole = limit < 0 || limit >= cids.size(0);
  if (!whole) {
    cids = cids.narrow(0, 0, limit);
    cmask = cmask.narrow(0, 0, limit);
    cref = cref.narrow(0, 0, limit);
  }
  // torch's top-10: from its embeddings in float64 (ties in index order), and for the whole
  // corpus also the one tools/prepare_minilm.py computed with numpy, which must agree
  const Tensor<int64_t> ref_top = reference_top(qref, cref, top);
  if (whole && !same_values(ref_top, load<int64_t>(dir + "/query_top.npy", 2)))
    throw torchtpu::ValueError("semantic_search: torch's top-10 from numpy (query_top.npy) and from this program differ");

  Embedder embed(m, device, batch);
  const auto t0 = std::chrono::steady_clock::now();
  const Tensor<float> ce = embed(cids, cmask);
  const double corpus_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::vector<double> corpus_batches = embed.batch_ms();
  const Tensor<float> qe = embed(qids, qmask);

  // search: cosine similarity of unit vectors = one matmul; the best `top` per query
  const Tensor<float> scores = torchtpu::matmul(qe, ce.transpose(0, 1));
  const auto [best, where] = torchtpu::topk(scores, std::min(top, ce.size(0)), 1);

  std::printf("device: %s; model: all-MiniLM-L6-v2 (%s)\n", device.c_str(), (dir + "/minilm.pt").c_str());
  std::printf("corpus: %lld sentences in %.2f s (%.0f sentences/s; batch %lld: p50 %.2f ms, p99 %.2f ms%s)\n",
              static_cast<long long>(ce.size(0)), corpus_s, double(ce.size(0)) / corpus_s, static_cast<long long>(batch),
              percentile(corpus_batches, 0.5), percentile(corpus_batches, 0.99),
              device == "cpu" ? "" : (", " + std::to_string(embed.programs()) + " programs compiled in " +
                                      std::to_string(int(embed.compile_ms())) + " ms").c_str());
  const auto [ccos, cabs] = agreement(ce, cref);
  const auto [qcos, qabs] = agreement(qe, qref);
  const double min_cos = std::min(ccos, qcos);
  std::printf("embeddings vs torch: min cosine %.8f, max abs difference %.2e (%lld corpus + %lld queries)\n", min_cos,
              std::max(cabs, qabs), static_cast<long long>(ce.size(0)), static_cast<long long>(qe.size(0)));

  int64_t same = 0;
  for (int64_t q = 0; q < qe.size(0); ++q) {
    bool eq = true;
    for (int64_t k = 0; k < ref_top.size(1); ++k) eq = eq && where[q][k].item() == ref_top[q][k].item();
    same += eq;
    std::printf("query: %s%s\n", queries[size_t(q)].c_str(), eq ? "" : "   [top-10 differs from torch's]");
    for (int64_t k = 0; k < std::min(show, ref_top.size(1)); ++k)
      std::printf("  %.3f  %s\n", double(best[q][k].item()), corpus[size_t(where[q][k].item())].c_str());
  }
  std::printf("top-%lld identical to torch's: %lld/%lld queries (over %s)\n", static_cast<long long>(top),
              static_cast<long long>(same), static_cast<long long>(qe.size(0)),
              whole ? "the whole corpus" : ("the first " + std::to_string(limit) + " sentences").c_str());
  const bool ok = min_cos >= 0.99999 && same == qe.size(0);
  std::printf("%s\n", ok ? "semantic search: OK" : "semantic search: FAILED (cosine < 0.99999 or a top-10 differs)");
  return ok ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "semantic_search: %s\n", e.what());
  return 1;
}
