#!/usr/bin/python3
"""Whole-model latency on the CPU: torchtpu against libtorch and ONNX Runtime (issue 16).

Run by `scripts/bench --models` (which builds torchtpu-run and installs ONNX Runtime into the
project's virtual environment); by hand, with Debian's interpreter (python3-torch 1.13,
python3-torchvision 0.14):

    /usr/bin/python3 bench/models.py --runner build-bench/tools/torchtpu-run \\
        --ort-python .venv/bin/python [--quick] [--models a,b] [--batches 1,32] \\
        [--threads 1,2] [--rounds 3] [--cache DIR] [--out bench/MODELS.md]

For each torchvision model (random weights made non-degenerate as in
tools/trace_torchvision.py, 224x224 inputs) and batch size it writes, into the cache:
the traced and frozen TorchScript module (what torchtpu-run and libtorch run), the ONNX
export of the eager model (`torch.onnx.export`, opset 17, constant folding; what ONNX Runtime
runs), the input and libtorch's output. Then, per thread count, it times the three runtimes
in rounds, each candidate in its own process, alternated run by run (candidate order rotates
every round), and keeps each candidate's median p50 and p99 over the rounds:

- torchtpu: `torchtpu-run MODEL.pt --bench N` with TORCHTPU_NUM_THREADS=t (its output is
  checked against libtorch's, `--reference`);
- libtorch: `torch.jit.optimize_for_inference` of the frozen module (MKL-DNN convolutions
  where it applies), `torch.set_num_threads(t)` and `openblas_set_num_threads(t)`
  (tools/trace_torchvision.py `set_torch_threads`: Debian's libtorch calls OpenBLAS, which
  ignores torch's setting), ATEN_CPU_CAPABILITY=avx512, OMP_WAIT_POLICY=passive (faster
  here at 2 threads than OpenMP's default);
- ONNX Runtime: every graph optimization (ORT_ENABLE_ALL), intra_op_num_threads=t, one
  inter-op thread, the CPU execution provider; its output is compared with libtorch's too.

Each timed process runs one warm-up call, then N calls (N from --iters, fewer at batch 32),
and reports the 50th and 99th percentiles of the per-call wall time in milliseconds and the
cores it kept busy meanwhile (process CPU time / wall time), so a peer that runs on more
threads than it was given shows.
The report (markdown) lists per model, batch and thread count the three p50/p99 and
torchtpu's speed against each peer (peer ms / torchtpu ms: above 1 is faster), plus a PNG of
those ratios at batch 1 (bench/plots/models.png).
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tools"))

# issue 16's CNNs and vit_b_16 (224x224); --quick keeps the ones a 2-core machine runs in
# minutes
MODELS = ["resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_small", "efficientnet_b0",
          "squeezenet1_1", "shufflenet_v2_x1_0", "convnext_tiny", "vit_b_16",
          "minilm_l6_s16", "minilm_l6_s128", "minilm_l6_s512", "bert_base_s16", "bert_base_s128",
          "bert_base_s512"]
QUICK = ["resnet18", "mobilenet_v2", "mobilenet_v3_small", "efficientnet_b0", "squeezenet1_1",
         "shufflenet_v2_x1_0"]
SIZE = 224
INPUT_SEED = 1
WEIGHT_SEED = 0
# Transformer encoders (BERT's layer: post-norm, GELU, eager attention as Hugging Face's
# BertLayer computes it), on hidden states [batch, seq, hidden] (the embeddings looked up):
# name -> (layers, hidden, heads, feed-forward). BERT-base and all-MiniLM-L6-v2's sizes.
ENCODERS = {"bert_base": (12, 768, 12, 3072), "minilm_l6": (6, 384, 12, 1536)}
ENCODER_SEQS = (16, 128, 512)
ENCODER_MODELS = ["%s_s%d" % (e, n) for e in ENCODERS for n in ENCODER_SEQS]


def log(*a):
    print(*a, flush=True)


def percentiles(ts):
    """p50 and p99 of a list of milliseconds (nearest rank)."""
    s = sorted(ts)
    def rank(q):
        return s[min(len(s) - 1, max(0, int(round(q * len(s) + 0.5)) - 1))]
    return rank(0.50), rank(0.99)


# ---- preparing one model (Debian's torch) -----------------------------------------------

def encoder_spec(name):
    """(layers, hidden, heads, feed-forward, seq) of an encoder name such as bert_base_s128, or None."""
    import re
    m = re.fullmatch(r"(%s)_s(\d+)" % "|".join(ENCODERS), name)
    return ENCODERS[m.group(1)] + (int(m.group(2)),) if m else None


def build_encoder(layers, hidden, heads, ff):
    """A BERT-style encoder stack (random weights from torch's default initialization)."""
    import math
    import torch

    class Layer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.q, self.k, self.v, self.o = (torch.nn.Linear(hidden, hidden) for _ in range(4))
            self.ln1, self.ln2 = torch.nn.LayerNorm(hidden, eps=1e-12), torch.nn.LayerNorm(hidden, eps=1e-12)
            self.f1, self.f2 = torch.nn.Linear(hidden, ff), torch.nn.Linear(ff, hidden)

        def forward(self, x):
            b, n, d = x.shape[0], x.shape[1], hidden // heads

            def split(t):
                return t.view(b, n, heads, d).transpose(1, 2)
            q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
            att = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d), dim=-1)
            a = torch.matmul(att, v).transpose(1, 2).reshape(b, n, hidden)
            x = self.ln1(x + self.o(a))
            return self.ln2(x + self.f2(torch.nn.functional.gelu(self.f1(x))))

    return torch.nn.Sequential(*[Layer() for _ in range(layers)])


def prepare(name, batch, cache):
    """Traces, freezes and exports `name` for a [batch, 3, 224, 224] input (an encoder: [batch,
    seq, hidden]); returns its paths."""
    import numpy as np
    import torch
    import trace_torchvision as tv

    stem = os.path.join(cache, "%s_b%d" % (name, batch))
    paths = {k: stem + ext for k, ext in (("pt", ".pt"), ("onnx", ".onnx"), ("input", ".input.npy"),
                                           ("output", ".output.npy"), ("meta", ".json"))}
    if all(os.path.exists(p) for p in paths.values()):
        return paths
    torch.set_num_threads(os.cpu_count() or 1)
    torch.manual_seed(WEIGHT_SEED)
    enc = encoder_spec(name)
    if enc:
        model = build_encoder(*enc[:4]).eval()
        x = torch.randn([batch, enc[4], enc[1]], generator=torch.Generator().manual_seed(INPUT_SEED))
    else:
        import torchvision.models as tvm
        kw = {"aux_logits": False, "init_weights": True} if name in tv.NO_AUX else {}
        model = tvm.get_model(name, weights=None, **kw).eval()
        tv.make_nondegenerate(model, SIZE)
        x = torch.randn([batch, 3, SIZE, SIZE], generator=torch.Generator().manual_seed(INPUT_SEED))
    meta = {"name": name, "batch": batch, "torch": torch.__version__, "onnx_error": None}
    with torch.no_grad():
        frozen = torch.jit.freeze(torch.jit.trace(model, x, check_trace=False).eval())
        frozen.save(paths["pt"])
        y = tv.first_tensor(frozen(x)).contiguous()
    try:
        # with gradients enabled: under no_grad torch 1.13's attention takes its fused fast path
        # (aten::_native_multi_head_attention), which its ONNX exporter does not know
        torch.onnx.export(model, x, paths["onnx"] + ".tmp", opset_version=17, do_constant_folding=True,
                          input_names=["x"], output_names=["y"])
        os.replace(paths["onnx"] + ".tmp", paths["onnx"])
    except Exception as e:  # noqa: BLE001 - recorded, the model is timed without ONNX Runtime
        meta["onnx_error"] = "%s: %s" % (type(e).__name__, str(e).split("\n")[0][:300])
        open(paths["onnx"], "wb").close()
    np.save(paths["input"], x.numpy().astype(np.float32))
    np.save(paths["output"], y.numpy().astype(np.float32))
    with open(paths["meta"], "w") as f:
        json.dump(meta, f)
    return paths


# ---- timed children ---------------------------------------------------------------------

def child_torch(pt, inp, threads, iters):
    """Times libtorch (run in a child of Debian's interpreter); prints a json line."""
    import numpy as np
    import torch
    import trace_torchvision as tv
    blas = tv.set_torch_threads(threads)
    m = torch.jit.load(pt).eval()
    how = "optimize_for_inference"
    try:
        m = torch.jit.optimize_for_inference(m)
    except Exception as e:  # noqa: BLE001 - keep the frozen module
        how = "frozen (optimize_for_inference failed: %s)" % type(e).__name__
    x = torch.from_numpy(np.load(inp))
    ts = []
    with torch.no_grad():
        m(x)
        c0, w0 = tv.cpu_seconds(), time.perf_counter()
        for _ in range(iters):
            t0 = time.perf_counter()
            m(x)
            ts.append((time.perf_counter() - t0) * 1e3)
        cores = (tv.cpu_seconds() - c0) / (time.perf_counter() - w0)
    p50, p99 = percentiles(ts)
    print(json.dumps({"p50": p50, "p99": p99, "cores": cores,
                      "how": how + ("" if blas else ", no OpenBLAS found to limit")}))


def child_ort(onnx, inp, ref, threads, iters):
    """Times ONNX Runtime (run in a child of the virtual environment's interpreter)."""
    import numpy as np
    import onnxruntime as ort
    import trace_torchvision as tv
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    s = ort.InferenceSession(onnx, so, providers=["CPUExecutionProvider"])
    x = np.load(inp)
    y = s.run(None, {"x": x})[0]
    r = np.load(ref)
    rel = float(np.abs(y - r).max() / max(float(np.abs(r).max()), 1e-30))
    ts = []
    c0, w0 = tv.cpu_seconds(), time.perf_counter()
    for _ in range(iters):
        t0 = time.perf_counter()
        s.run(None, {"x": x})
        ts.append((time.perf_counter() - t0) * 1e3)
    cores = (tv.cpu_seconds() - c0) / (time.perf_counter() - w0)
    p50, p99 = percentiles(ts)
    print(json.dumps({"p50": p50, "p99": p99, "rel": rel, "cores": cores, "how": "onnxruntime " + ort.__version__}))


def run_json(cmd, env):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600)
    for line in reversed(p.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    return {"error": (p.stderr or p.stdout).strip().splitlines()[-1][:300] if (p.stderr or p.stdout).strip() else "rc %d" % p.returncode}


def time_torchtpu(runner, paths, threads, iters):
    env = dict(os.environ, TORCHTPU_NUM_THREADS=str(threads))
    p = subprocess.run([runner, paths["pt"], "--input", paths["input"], "--reference", paths["output"],
                        "--bench", str(iters)], capture_output=True, text=True, env=env, timeout=3600)
    import re
    lat = re.search(r"^latency torchtpu.*p50 ([0-9.]+) ms, p99 ([0-9.]+) ms.*?(?:([0-9.]+) cores busy)?$", p.stdout, re.M)
    ref = re.search(r"^reference: max abs diff (\S+), max rel diff (\S+)", p.stdout, re.M)
    heap = re.search(r"^heap per forward: (\d+) allocations.*peak ([0-9.]+) MiB", p.stdout, re.M)
    later = re.search(r"^heap per forward, the next two: (\d+), (\d+) allocations", p.stdout, re.M)
    if not lat:
        tail = (p.stderr or p.stdout).strip().splitlines()
        return {"error": tail[-1][:300] if tail else "rc %d" % p.returncode}
    return {"p50": float(lat.group(1)), "p99": float(lat.group(2)), "rel": float(ref.group(2)) if ref else None,
            "cores": float(lat.group(3)) if lat.group(3) else None,
            "allocs": ", ".join([heap.group(1)] + ([later.group(1), later.group(2)] if later else [])) if heap else None,
            "peak_mib": float(heap.group(2)) if heap else None}


# ---- the report ---------------------------------------------------------------------------

def fmt(v, nd=2):
    return "—" if v is None else ("%.*f" % (nd, v))


def write_report(out, rows, args, versions):
    lines = ["# Whole-model latency: torchtpu vs libtorch vs ONNX Runtime (CPU)", "",
             "Written by `scripts/bench --models` (bench/models.py) on %s. Machine: %s, %d cores (%s)." % (
                 time.strftime("%Y-%m-%d"), platform.processor() or platform.machine(), os.cpu_count() or 0,
                 cpu_model()),
             "Versions: %s." % versions, "",
             "torchvision models with random (non-degenerate) weights, 224x224 inputs; BERT-style encoders",
             "(`bert_base`: 12 layers, hidden 768, 12 heads, FF 3072; `minilm_l6`: 6 layers, 384, 12 heads, 1536;",
             "`_sN`: sequence length N) on random hidden states [batch, N, hidden]. Each candidate runs in its",
             "own process, one warm-up call then N timed calls; the candidates alternate run by run over %d rounds" % args.rounds,
             "and each cell is the median over the rounds of that run's p50 / p99 (ms). `vs libtorch` and",
             "`vs ORT` are the peer's p50 divided by torchtpu's (above 1: torchtpu is faster). `rel` is the",
             "largest difference from libtorch's output over its largest magnitude (torchtpu's, ONNX Runtime's).",
             "libtorch runs `torch.jit.optimize_for_inference` of the frozen module with",
             "ATEN_CPU_CAPABILITY=avx512 and OMP_WAIT_POLICY=passive, its threads limited by `torch.set_num_threads` and,",
             "for the OpenBLAS that Debian's libtorch calls in matmul and linear layers, `openblas_set_num_threads`",
             "(without it OpenBLAS ran on every core). `cores` is the most cores each candidate kept busy over its",
             "timed calls in any round (process CPU time / wall time; torchtpu / libtorch / ORT). ONNX Runtime the `torch.onnx.export` of the eager model (opset 17) with",
             "every graph optimization and `intra_op_num_threads` = the thread count. `allocs / peak` is three",
             "torchtpu forwards after the warm-up: heap blocks allocated in each (malloc, aligned_alloc, operator new, ...;",
             "the first two allocate the result's three blocks anew: torchtpu-run holds the earlier results, as a",
             "caller's loop does) and the heap's peak in the first above its level before the call (MiB), counted by",
             "torchtpu-run.", "",
             "| model | batch | threads | torchtpu p50 / p99 | libtorch p50 / p99 | ORT p50 / p99 | vs libtorch | vs ORT | rel torchtpu | rel ORT | allocs / peak MiB | cores |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        t, l, o = r["torchtpu"], r["libtorch"], r["ort"]
        def cell(c):
            return "%s / %s" % (fmt(c.get("p50")), fmt(c.get("p99"))) if "p50" in c else "error: " + c.get("error", "?")
        vl = l["p50"] / t["p50"] if "p50" in t and "p50" in l else None
        vo = o["p50"] / t["p50"] if "p50" in t and "p50" in o else None
        heap = "%s / %.1f" % (t["allocs"], t["peak_mib"]) if t.get("allocs") is not None else "—"
        cores = " / ".join(fmt(c.get("cores"), 1) for c in (t, l, o))
        lines.append("| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["model"], r["batch"], r["threads"], cell(t), cell(l), cell(o), fmt(vl), fmt(vo),
            "%.1e" % t["rel"] if t.get("rel") is not None else "—", "%.1e" % o["rel"] if o.get("rel") is not None else "—",
            heap, cores))
    notes = sorted({"%s: %s" % (r["model"], r["onnx_error"]) for r in rows if r.get("onnx_error")})
    if notes:
        lines += ["", "ONNX export failures (torch 1.13's exporter): " + "; ".join(notes)]
    lines += ["", "![torchtpu speed vs the peers, batch 1](plots/models.png)", ""]
    with open(out, "w") as f:
        f.write("\n".join(lines))


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown cpu"


def plot(rows, png):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("bench/models.py: no matplotlib, no plot")
        return
    sel = [r for r in rows if r["batch"] == 1 and "p50" in r["torchtpu"]]
    if not sel:
        return
    labels = ["%s, %d thr" % (r["model"], r["threads"]) for r in sel]
    vl = [r["libtorch"]["p50"] / r["torchtpu"]["p50"] if "p50" in r["libtorch"] else 0 for r in sel]
    vo = [r["ort"]["p50"] / r["torchtpu"]["p50"] if "p50" in r["ort"] else 0 for r in sel]
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(sel)), 4))
    xs = range(len(sel))
    ax.bar([x - 0.2 for x in xs], vl, 0.4, label="vs libtorch")
    ax.bar([x + 0.2 for x in xs], vo, 0.4, label="vs ONNX Runtime")
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xticks(list(xs))
    ax.set_xticklabels(labels, fontsize=7, rotation=45, ha="right")
    ax.set_ylabel("peer p50 / torchtpu p50 (>1: torchtpu faster)")
    ax.set_title("batch 1, 224x224")
    ax.legend()
    fig.tight_layout()
    os.makedirs(os.path.dirname(png), exist_ok=True)
    fig.savefig(png, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runner", help="torchtpu-run")
    ap.add_argument("--ort-python", help="an interpreter with onnxruntime")
    ap.add_argument("--quick", action="store_true", help="models: " + ", ".join(QUICK) + "; batch 1")
    ap.add_argument("--models", help="comma-separated torchvision builders (default: %s)" % ", ".join(MODELS))
    ap.add_argument("--batches", default=None, help="comma-separated (default 1,32; --quick: 1)")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iters", type=int, default=30, help="timed calls per run at batch 1")
    ap.add_argument("--cache", default=os.path.join(ROOT, "build", "models-cache"))
    ap.add_argument("--out", default=os.path.join(HERE, "MODELS.md"))
    ap.add_argument("--child", choices=["torch", "ort"], help=argparse.SUPPRESS)
    ap.add_argument("--args", nargs="*", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child == "torch":
        pt, inp, th, it = a.args
        return child_torch(pt, inp, int(th), int(it))
    if a.child == "ort":
        onnx, inp, ref, th, it = a.args
        return child_ort(onnx, inp, ref, int(th), int(it))
    if not a.runner or not a.ort_python:
        ap.error("--runner and --ort-python are required")
    models = a.models.split(",") if a.models else (QUICK if a.quick else MODELS)
    batches = [int(b) for b in (a.batches or ("1" if a.quick else "1,32")).split(",")]
    threads = [int(t) for t in a.threads.split(",")]
    os.makedirs(a.cache, exist_ok=True)
    import torch
    ort_version = subprocess.run([a.ort_python, "-c", "import onnxruntime; print(onnxruntime.__version__)"],
                                 capture_output=True, text=True).stdout.strip() or "?"
    versions = "libtorch %s (Debian), onnxruntime %s (PyPI), torchtpu %s" % (
        torch.__version__, ort_version,
        subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip())
    # OMP_WAIT_POLICY=passive: libtorch's best here. With OpenMP's default (active) policy its
    # 2-thread runs took 1.9-2.9x their passive time on this 2-core machine (vit_b_16 804 vs 273
    # ms, convnext_tiny 223 vs 97), which the report would charge to libtorch
    env_torch = dict(os.environ, ATEN_CPU_CAPABILITY="avx512", OMP_WAIT_POLICY="passive")
    rows = []
    for name in models:
        for batch in batches:
            log("bench/models.py: %s batch %d: preparing" % (name, batch))
            paths = prepare(name, batch, a.cache)
            meta = json.load(open(paths["meta"]))
            iters = a.iters if batch == 1 else max(3, a.iters // 10)
            for th in threads:
                got = {"torchtpu": [], "libtorch": [], "ort": []}
                order = ["torchtpu", "libtorch", "ort"]
                for rnd in range(a.rounds):
                    for who in order[rnd % 3:] + order[:rnd % 3]:
                        if who == "torchtpu":
                            r = time_torchtpu(a.runner, paths, th, iters)
                        elif who == "libtorch":
                            r = run_json([sys.executable, os.path.abspath(__file__), "--child", "torch", "--args",
                                          paths["pt"], paths["input"], str(th), str(iters)], env_torch)
                        elif meta.get("onnx_error"):
                            r = {"error": "export failed"}
                        else:
                            r = run_json([a.ort_python, os.path.abspath(__file__), "--child", "ort", "--args",
                                          paths["onnx"], paths["input"], paths["output"], str(th), str(iters)],
                                         dict(os.environ))
                        got[who].append(r)
                row = {"model": name, "batch": batch, "threads": th, "onnx_error": meta.get("onnx_error")}
                for who, rs in got.items():
                    ok = [r for r in rs if "p50" in r]
                    if not ok:
                        row[who] = {"error": rs[-1].get("error", "?")}
                        continue
                    row[who] = {"p50": statistics.median(r["p50"] for r in ok),
                                "p99": statistics.median(r["p99"] for r in ok),
                                "rel": ok[-1].get("rel"), "allocs": ok[-1].get("allocs"),
                                "cores": max((r["cores"] for r in ok if r.get("cores") is not None), default=None),
                                "peak_mib": ok[-1].get("peak_mib")}
                rows.append(row)
                t, l, o = row["torchtpu"], row["libtorch"], row["ort"]
                log("  threads %d: torchtpu %s, libtorch %s, ort %s (ms, p50)" % (
                    th, fmt(t.get("p50")), fmt(l.get("p50")), fmt(o.get("p50"))))
    with open(os.path.join(a.cache, "models.json"), "w") as f:
        json.dump(rows, f, indent=1)
    write_report(a.out, rows, a, versions)
    plot(rows, os.path.join(HERE, "plots", "models.png"))
    log("bench/models.py: wrote %s" % a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main() or 0)
