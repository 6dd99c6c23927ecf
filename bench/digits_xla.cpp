// bench/digits_xla.cpp — the three digits models (data/models: MLP, CNN, transformer; traced +
// frozen TorchScript, see tools/make_models.py) in one process, three candidates interleaved
// round by round: torchtpu on a PJRT device (the whole graph as one StableHLO program,
// jit::DeviceProgram — meant for XLA's CPU plugin), torchtpu on the cpu (the run-time graph,
// fused mode) and libtorch's own forward. Latency of one forward call, host tensor in, host
// logits out, at batch 1 and batch 360 (the held-out set, data/digits_test_x.npy).
//
// Before timing, each candidate's logits are compared with libtorch's (max abs difference) and
// the argmax predictions of the 360 samples counted equal; a mismatch fails the run (exit 1).
//
// Run: build/bench/bench_digits_xla [--device auto|xla_cpu|tpu] [--rounds R] [--torch-threads N]
//        [--data DIR] [--md FILE]
// `auto` (default) is xla_cpu where this build has that device kind, else tpu. With tpu, point
// TORCHTPU_PJRT_PLUGIN_TPU at xla_cpu_pjrt.so so that "tpu" is real XLA CPU (scripts/bench
// --xla does). Prints `digits <model> <batch> <candidate> <ms>` lines.
#include <algorithm>  // std::sort, std::max, std::rotate
#include <chrono>     // std::chrono::steady_clock
#include <cmath>      // std::abs
#include <cstdio>     // std::printf, std::fprintf, std::FILE
#include <cstdlib>    // std::atoi, std::getenv, setenv
#include <functional>  // std::function
#include <memory>     // std::shared_ptr
#include <string>     // std::string
#include <thread>     // std::thread::hardware_concurrency
#include <vector>     // std::vector

#include <unistd.h>  // execv

#include <ATen/Parallel.h>        // at::set_num_threads, at::get_num_threads
#include <torchtpu/device.hpp>    // the device runtime (pjrt::Client)
#include <torchtpu/io/npy.hpp>    // read_npy
#include <torchtpu/jit/load.hpp>  // jit::load, Module, detail::to_torch_float
#include <torchtpu/jit/lower.hpp>  // jit::DeviceProgram

using torchtpu::jit::FloatTensor;

namespace {

struct Options {
  std::string device = "auto", data = "data", md;
  int rounds = 15;
  int torch_threads = 0;  // 0: the machine's hardware threads
};

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

std::vector<int64_t> argmax_rows(const FloatTensor& y) {
  const FloatTensor c = y.contiguous();
  std::vector<int64_t> r;
  for (int64_t i = 0; i < c.size(0); ++i) {
    const float* row = c.data_ptr() + i * c.size(1);
    r.push_back(std::max_element(row, row + c.size(1)) - row);
  }
  return r;
}

double max_abs_diff(const FloatTensor& a, const FloatTensor& b) {
  const FloatTensor x = a.contiguous(), y = b.contiguous();
  double d = 0;
  for (int64_t i = 0; i < x.numel(); ++i) d = std::max(d, double(std::abs(x.data_ptr()[i] - y.data_ptr()[i])));
  return d;
}

struct Candidate {
  std::string name;
  std::function<FloatTensor()> run;
  std::vector<double> per_call_ms;  // one entry per round
};

}  // namespace

int main(int argc, char** argv) {
  // libtorch's OpenMP workers spin after each parallel region by default, taking the cores the
  // next candidate (torchtpu's own thread pool, XLA's) needs: interleaved, that made libtorch's
  // MLP 100x slower and torchtpu's cpu figures 10x. Re-run with passive waiting, as
  // bench/cpu_engine.cpp does, unless the caller chose a policy.
  if (!std::getenv("OMP_WAIT_POLICY")) {
    setenv("OMP_WAIT_POLICY", "passive", 1);
    execv("/proc/self/exe", argv);
    std::perror("bench_digits_xla: re-exec with OMP_WAIT_POLICY=passive");  // then run as is
  }
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bench_digits_xla: missing value after %s\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--device") o.device = next();
    else if (a == "--rounds") o.rounds = std::max(1, std::atoi(next().c_str()));
    else if (a == "--torch-threads") o.torch_threads = std::atoi(next().c_str());
    else if (a == "--data") o.data = next();
    else if (a == "--md") o.md = next();
    else {
      std::fprintf(stderr,
                   "usage: bench_digits_xla [--device auto|xla_cpu|tpu] [--rounds R] [--torch-threads N] [--data DIR] "
                   "[--md FILE]\n");
      return 2;
    }
  }
  try {
    const int threads = o.torch_threads > 0 ? o.torch_threads : int(std::max(1u, std::thread::hardware_concurrency()));
    at::set_num_threads(threads);
    if (o.device == "auto") {  // "xla_cpu" where this build knows that kind, else "tpu"
      try {
        (void)torchtpu::Device("xla_cpu");
        o.device = "xla_cpu";
      } catch (const torchtpu::Error&) {
        o.device = "tpu";
      }
    }
    const torchtpu::Device dev(o.device);
    if (dev.is_cpu()) throw torchtpu::ValueError("--device must be a PJRT device (xla_cpu, tpu), got cpu");
    auto client = torchtpu::pjrt::Client::get(torchtpu::device_kind_name(dev.kind()));
    std::printf("# pjrt device %s: platform %s, version %s, plugin %s%s\n", dev.str().c_str(),
                client->platform_name().c_str(), client->platform_version().c_str(), client->plugin().path().c_str(),
                client->emulated() ? " (EMULATED)" : "");
    std::printf("# libtorch threads %d, OMP_WAIT_POLICY=%s; torchtpu cpu engine threads %d\n",
                at::get_num_threads(), std::getenv("OMP_WAIT_POLICY") ? std::getenv("OMP_WAIT_POLICY") : "unset",
                torchtpu::get_num_threads());

    const torchtpu::NpyArray xa = torchtpu::read_npy(o.data + "/digits_test_x.npy");
    torchtpu::Dims xshape(xa.shape.begin(), xa.shape.end());
    const FloatTensor x_all = torchtpu::from_data(xa.values<float>().data(), xshape);

    struct Row {
      std::string model;
      int64_t batch;
      double ms[3];
      double diff[2];
    };
    std::vector<Row> rows;
    bool ok = true;
    for (const char* model : {"mlp", "cnn", "transformer"}) {
      const torchtpu::jit::Module m = torchtpu::jit::load(o.data + "/models/" + model + ".pt");
      for (int64_t batch : {int64_t(1), x_all.size(0)}) {
        const FloatTensor x = FloatTensor(x_all.slice(0, 0, batch)).contiguous();
        const at::Tensor tx = torchtpu::jit::detail::to_torch_float(x).clone();
        auto prog = std::make_shared<torchtpu::jit::DeviceProgram>(m.graph(), std::vector<torchtpu::Dims>{x.sizes()},
                                                                    client);
        std::vector<Candidate> c;
        c.push_back({"torchtpu " + o.device, [&] { return prog->run({x}).at(0); }, {}});
        c.push_back({"torchtpu cpu", [&] { return m.forward(x, torchtpu::jit::Mode::Fused); }, {}});
        c.push_back({"libtorch", [&] {
                       at::Tensor t = m.torch_forward(tx).contiguous();
                       FloatTensor r = FloatTensor::empty({t.size(0), t.size(1)});
                       std::copy(t.data_ptr<float>(), t.data_ptr<float>() + t.numel(), r.data_ptr());
                       return r;
                     }, {}});
        // Correctness first: every candidate against libtorch.
        const FloatTensor ref = c[2].run();
        Row row{model, batch, {0, 0, 0}, {0, 0}};
        for (int k = 0; k < 2; ++k) {
          const FloatTensor y = c[size_t(k)].run();
          row.diff[k] = max_abs_diff(y, ref);
          const auto p = argmax_rows(y), pr = argmax_rows(ref);
          int64_t same = 0;
          for (size_t i = 0; i < p.size(); ++i) same += p[i] == pr[i];
          if (row.diff[k] > 1e-3 || same != int64_t(p.size())) {
            std::fprintf(stderr, "bench_digits_xla: %s batch %lld: %s differs from libtorch (max abs %.3g, %lld/%zu equal predictions)\n",
                         model, (long long)batch, c[size_t(k)].name.c_str(), row.diff[k], (long long)same, p.size());
            ok = false;
          }
        }
        // Calls per round: about 20 ms of the slowest candidate's work, at least 1.
        double slowest = 0;
        for (auto& cand : c) {
          const double t0 = now_ms();
          (void)cand.run();
          slowest = std::max(slowest, now_ms() - t0);
        }
        const int iters = std::max(1, int(20.0 / std::max(slowest, 1e-3)));
        std::vector<size_t> order{0, 1, 2};
        for (int r = 0; r < o.rounds; ++r) {
          for (size_t k : order) {
            const double t0 = now_ms();
            for (int i = 0; i < iters; ++i) (void)c[k].run();
            c[k].per_call_ms.push_back((now_ms() - t0) / iters);
          }
          std::rotate(order.begin(), order.begin() + 1, order.end());  // no candidate always goes first
        }
        for (size_t k = 0; k < 3; ++k) {
          row.ms[k] = median(c[k].per_call_ms);
          std::printf("digits %s %lld %s %.4f\n", model, (long long)batch, c[k].name.c_str(), row.ms[k]);
        }
        std::fflush(stdout);
        rows.push_back(row);
      }
    }
    if (!o.md.empty()) {
      std::FILE* f = std::fopen(o.md.c_str(), "w");
      if (!f) throw torchtpu::Error("--md " + o.md + ": cannot open for writing");
      std::fprintf(f, "| model | batch | torchtpu %s (ms) | torchtpu cpu (ms) | libtorch (ms) | %s / libtorch | cpu / libtorch | max abs diff to libtorch (%s, cpu) |\n",
                   o.device.c_str(), o.device.c_str(), o.device.c_str());
      std::fprintf(f, "|---|---:|---:|---:|---:|---:|---:|---|\n");
      for (const Row& r : rows)
        std::fprintf(f, "| %s | %lld | %.3f | %.3f | %.3f | %.2f | %.2f | %.1e, %.1e |\n", r.model.c_str(),
                     (long long)r.batch, r.ms[0], r.ms[1], r.ms[2], r.ms[0] / r.ms[2], r.ms[1] / r.ms[2], r.diff[0],
                     r.diff[1]);
      std::fclose(f);
    }
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_digits_xla: error: %s\n", e.what());
    return 1;
  }
}
