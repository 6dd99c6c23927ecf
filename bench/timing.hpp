// bench/timing.hpp — the benchmarks' one timing loop: candidates measured in interleaved turns
// (so drift of the machine's speed hits them alike), medians reported.
#pragma once
#include <algorithm>   // std::sort, std::max
#include <chrono>      // steady_clock
#include <functional>  // std::function
#include <vector>      // std::vector

namespace bench {

/// Median seconds per call of each of `runs`: each is called once to warm up and once to size
/// a turn to about `turn_s` seconds, then the candidates run in `turns` interleaved turns.
inline std::vector<double> interleaved_medians(const std::vector<std::function<void()>>& runs, double turn_s, int turns) {
  std::vector<int> iters(runs.size(), 1);
  for (size_t c = 0; c < runs.size(); ++c) {
    runs[c]();
    const auto t0 = std::chrono::steady_clock::now();
    runs[c]();
    const double one = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    iters[c] = std::max(1, int(turn_s / std::max(one, 1e-9)));
  }
  std::vector<std::vector<double>> t(runs.size());
  for (int r = 0; r < turns; ++r)
    for (size_t c = 0; c < runs.size(); ++c) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < iters[c]; ++i) runs[c]();
      t[c].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iters[c]);
    }
  std::vector<double> med;
  for (auto& v : t) {
    std::sort(v.begin(), v.end());
    med.push_back(v[v.size() / 2]);
  }
  return med;
}

}  // namespace bench
