#!/usr/bin/python3
"""Trace + freeze torchvision 0.14 classification models for scripts/conformance.

Run with Debian's interpreter (python3-torch 1.13, python3-torchvision 0.14):

    /usr/bin/python3 tools/trace_torchvision.py OUT_DIR [NAME ...] [--floor] [--list]

For each model (default: all 80 builders of torchvision.models.list_models), writes

    OUT_DIR/<name>.pt           traced + frozen TorchScript (random weights)
    OUT_DIR/<name>.input.npy    the traced input, float32, e.g. [1, 3, 64, 64]
    OUT_DIR/<name>.output.npy   libtorch's output of the saved frozen module on that input
    OUT_DIR/<name>.output_f64.npy  the eager model's output in float64 (<f8; models up to
                                250M parameters): the exact answer float32 results approximate
    OUT_DIR/<name>.json         {"name", "input_shape", "torch_ms", "status", "error", ...}

Besides those five keys the json holds: params, builder_kwargs, trace_mode, node_kinds
(kind -> count in the frozen graph), tracer_warnings, output_shape, timed_runs,
frozen_vs_eager_rel (max|frozen - eager| / max|eager|, float32), eager_fp32_vs_fp64_rel
and frozen_vs_fp64_rel (against the eager model run in float64; left out above 250M
parameters; eager_fp32_vs_fp64_rel is the float32 round-off a comparison must allow:
resnet152 reaches 3e-4, and 7 of the 80 models exceed 1e-4 between frozen and eager),
and trace_s / total_s (seconds), plus traceback on failure.

`status` is one of "ok", "build-error" (the builder failed), "trace-error" (tracing,
freezing, saving or reloading failed; `error` holds the message) or "run-error" (the
frozen module failed on its own input). `torch_ms` is libtorch's median latency of the
frozen module, one thread. Models whose json already exists are skipped (the cache);
--force redoes them. Each model runs in its own child process (a crash or an
out-of-memory kill is recorded as an error of that model, not the end of the run) unless
--in-process is given.

Weights: `weights=None` with torch.manual_seed(0), then made non-degenerate so that a
comparison means something (as in ../shared/MODEL-OPS.md): parameters that were all
zero get N(0, 0.02); every BatchNorm gets a random affine and running statistics
measured on a batch of random inputs, so conv-BN folding is really exercised. The
input is torch.randn with its own fixed seed.

--batch32 then times each traced model at batch 32 too (the floor models and every model whose
batch-1 `torch_ms` is at most B32_MAX_MS: the large ones would take an hour at batch 32 on two
cores): 32 images from torch.randn with its own seed, OUT_DIR/<name>.b32.input.npy and
<name>.b32.output.npy (libtorch's output), and `torch_ms_b32` in the json (median of 5 runs after
3 warm-up runs, one thread).

Tracing happens in eval mode under torch.no_grad(), as users do, so ViT arrives with
torch 1.13's fused `aten::_native_multi_head_attention`; --grad-trace traces under
torch.enable_grad() instead, which gives the decomposed attention (bmm/softmax/...).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import traceback
import warnings

FLOOR = ["resnet18", "mobilenet_v2", "squeezenet1_1", "shufflenet_v2_x0_5",
         "efficientnet_b0", "convnext_tiny", "vit_b_16"]

DEFAULT_SIZE = 64
# Models that need something other than a 64x64 input, and extra builder arguments.
# Sizes are the smallest of 64/96/.../224 the model accepts (../shared/MODEL-OPS.md).
SPECIAL = {
    "inception_v3": (96, {}),                    # needs at least 75x75
    "vit_b_16": (64, {"image_size": 64}),
    "vit_b_32": (64, {"image_size": 64}),
    "vit_l_16": (64, {"image_size": 64}),
    "vit_l_32": (64, {"image_size": 64}),
    "vit_h_14": (70, {"image_size": 70}),        # multiple of the 14-pixel patch
    "maxvit_t": (224, {"input_size": (224, 224)}),
}
# Builders that would otherwise build an auxiliary classifier; the eval-mode trace only
# returns the main logits anyway, so leave the aux heads out (smaller files).
NO_AUX = {"googlenet", "inception_v3"}

WEIGHT_SEED = 0
INPUT_SEED = 1
CALIB_BATCH = 8
F64_MAX_PARAMS = 250_000_000  # above this, skip the float64 reference run (memory)



def set_torch_threads(n):
    """Limits libtorch to `n` threads for timing: `torch.set_num_threads(n)` bounds ATen's and
    oneDNN's OpenMP pool, but not OpenBLAS, which Debian's libtorch calls for matmul and linear
    layers and which starts one thread per core of its own (measured here: a 1024^3 matmul under
    `torch.set_num_threads(1)` used 2.0 cores). So this also calls `openblas_set_num_threads(n)`
    in every OpenBLAS the process has loaded (found in /proc/self/maps). Returns the number of
    OpenBLAS libraries limited."""
    import ctypes
    import torch
    torch.set_num_threads(n)
    limited = 0
    try:
        paths = {line.split()[-1] for line in open("/proc/self/maps") if "openblas" in line and "/" in line}
    except OSError:
        paths = set()
    for path in sorted(paths):
        try:
            ctypes.CDLL(path).openblas_set_num_threads(ctypes.c_int(n))
            limited += 1
        except (OSError, AttributeError):
            pass
    return limited


def cpu_seconds():
    """User + system CPU time of this process, all threads (s): cpu_seconds() delta over a
    wall-time delta is the number of cores a timed loop kept busy."""
    import resource
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime

def log(*args):
    print(*args, flush=True)


def all_names():
    """The classification builders: list_models (torchvision >= 0.14), else every public
    function of torchvision.models that takes a `weights` argument."""
    import inspect
    import torchvision.models as tvm
    if hasattr(tvm, "list_models"):
        return sorted(tvm.list_models(module=tvm))
    names = []
    for n in dir(tvm):
        f = getattr(tvm, n)
        if n.startswith("_") or not inspect.isfunction(f) or n.startswith("get_"):
            continue
        try:
            if "weights" in inspect.signature(f).parameters:
                names.append(n)
        except (TypeError, ValueError):
            pass
    return sorted(names)


def input_size(name):
    return SPECIAL.get(name, (DEFAULT_SIZE, {}))[0]


def builder_kwargs(name):
    kw = dict(SPECIAL.get(name, (DEFAULT_SIZE, {}))[1])
    if name in NO_AUX:
        kw["aux_logits"] = False
        kw["init_weights"] = True  # silences the "init_weights default" FutureWarning
    return kw


def make_nondegenerate(model, size):
    """Give zero parameters small random values and BatchNorms random affines and real
    running statistics (measured in one forward pass over random inputs)."""
    import torch
    import torch.nn as nn
    with torch.no_grad():
        for p in model.parameters():
            if p.numel() > 0 and bool((p == 0).all()):
                p.normal_(0.0, 0.02)
        bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
        for bn in bns:
            if bn.affine:
                bn.weight.uniform_(0.5, 1.5)
                bn.bias.normal_(0.0, 0.2)
        if bns:
            # In eval mode, a pre-hook sets each BatchNorm's statistics from the input it
            # actually sees (upstream layers already calibrated): the per-channel mean, and
            # the per-layer variance times U(0.5, 1.5) per channel. A per-channel variance
            # would blow up channels that barely vary on random inputs and make the float32
            # output ill-conditioned.
            def calibrate(bn, args):
                x = args[0]
                dims = [d for d in range(x.dim()) if d != 1]
                bn.running_mean.copy_(x.mean(dim=dims))
                var = x.var(dim=dims).mean()
                bn.running_var.copy_(var * torch.empty_like(bn.running_var).uniform_(0.5, 1.5))

            model.eval()
            hooks = [bn.register_forward_pre_hook(calibrate) for bn in bns]
            model(torch.randn(CALIB_BATCH, 3, size, size))
            for h in hooks:
                h.remove()
    model.eval()


def node_kinds(graph):
    counts = {}

    def walk(block):
        for node in block.nodes():
            counts[node.kind()] = counts.get(node.kind(), 0) + 1
            for sub in node.blocks():
                walk(sub)

    walk(graph)
    return dict(sorted(counts.items()))


def median_ms(fn, x, min_runs=3, max_runs=10, budget_s=3.0):
    """Median wall time of fn(x) in ms: one warm-up, then at least min_runs runs and at
    most max_runs, stopping once budget_s is spent."""
    fn(x)
    times = []
    start = time.perf_counter()
    while len(times) < max_runs and (len(times) < min_runs or time.perf_counter() - start < budget_s):
        t0 = time.perf_counter()
        fn(x)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), len(times)


def first_tensor(out):
    import torch
    if isinstance(out, torch.Tensor):
        return out
    if isinstance(out, (tuple, list)) and out and isinstance(out[0], torch.Tensor):
        return out[0]
    if hasattr(out, "logits"):
        return out.logits
    raise TypeError("model output is %s, not a tensor" % type(out).__name__)


def trace_one(name, out_dir, grad_trace=False):
    """Build, trace, freeze, save and time one model; returns the json record."""
    import numpy as np
    import torch
    import torchvision
    import torchvision.models as tvm

    set_torch_threads(1)
    size = input_size(name)
    shape = [1, 3, size, size]
    rec = {"name": name, "input_shape": shape, "torch_ms": None, "status": "ok", "error": None,
           "torch_version": torch.__version__, "torchvision_version": torchvision.__version__,
           "builder_kwargs": {k: list(v) if isinstance(v, tuple) else v
                              for k, v in builder_kwargs(name).items()},
           "trace_mode": "enable_grad" if grad_trace else "no_grad"}
    t_start = time.perf_counter()

    stage = "build"
    try:
        torch.manual_seed(WEIGHT_SEED)
        model = tvm.get_model(name, weights=None, **builder_kwargs(name)) if hasattr(tvm, "get_model") \
            else getattr(tvm, name)(weights=None, **builder_kwargs(name))
        rec["params"] = sum(p.numel() for p in model.parameters())
        make_nondegenerate(model, size)
        x = torch.randn(shape, generator=torch.Generator().manual_seed(INPUT_SEED))

        stage = "trace"
        t0 = time.perf_counter()
        ctx = torch.enable_grad() if grad_trace else torch.no_grad()
        with warnings.catch_warnings(record=True) as caught, ctx:
            warnings.simplefilter("always", torch.jit.TracerWarning)
            traced = torch.jit.trace(model, x, check_trace=False)
        rec["tracer_warnings"] = sorted({str(w.message).split("\n")[0][:200] for w in caught
                                         if issubclass(w.category, torch.jit.TracerWarning)})
        with torch.no_grad():
            frozen = torch.jit.freeze(traced.eval())
        rec["trace_s"] = round(time.perf_counter() - t0, 2)
        pt = os.path.join(out_dir, name + ".pt")
        frozen.save(pt + ".tmp")
        os.replace(pt + ".tmp", pt)
        del traced, frozen
        loaded = torch.jit.load(pt)
        rec["node_kinds"] = node_kinds(loaded.graph)

        stage = "run"
        with torch.no_grad():
            y = first_tensor(loaded(x)).contiguous()
            eager = first_tensor(model(x))
            scale = max(eager.abs().max().item(), 1e-30)
            rec["frozen_vs_eager_rel"] = (y - eager).abs().max().item() / scale
            if rec["params"] <= F64_MAX_PARAMS:
                # How far float32 itself is from float64: a tolerance floor for comparisons.
                e64 = first_tensor(model.double()(x.double()))
                s64 = max(e64.abs().max().item(), 1e-30)
                rec["eager_fp32_vs_fp64_rel"] = (eager.double() - e64).abs().max().item() / s64
                rec["frozen_vs_fp64_rel"] = (y.double() - e64).abs().max().item() / s64
                np.save(os.path.join(out_dir, name + ".output_f64.npy"), e64.numpy().astype(np.float64))
                del e64
            rec["torch_ms"], rec["timed_runs"] = median_ms(loaded, x)
            rec["torch_ms"] = round(rec["torch_ms"], 3)
        rec["output_shape"] = list(y.shape)
        np.save(os.path.join(out_dir, name + ".input.npy"), x.numpy().astype(np.float32))
        np.save(os.path.join(out_dir, name + ".output.npy"), y.numpy().astype(np.float32))
    except Exception as e:  # noqa: BLE001 - every failure is recorded, not raised
        rec["status"] = {"build": "build-error", "trace": "trace-error", "run": "run-error"}[stage]
        rec["error"] = "%s: %s" % (type(e).__name__, str(e).strip().split("\n")[0][:500])
        rec["traceback"] = traceback.format_exc()[-4000:]
    rec["total_s"] = round(time.perf_counter() - t_start, 2)
    return rec


def write_json(out_dir, rec):
    path = os.path.join(out_dir, rec["name"] + ".json")
    with open(path + ".tmp", "w") as f:
        json.dump(rec, f, indent=1)
        f.write("\n")
    os.replace(path + ".tmp", path)


def is_cached(out_dir, name):
    path = os.path.join(out_dir, name + ".json")
    if not os.path.exists(path):
        return False
    try:
        with open(path) as f:
            rec = json.load(f)
    except (OSError, ValueError):
        return False
    if rec.get("status") != "ok":
        return True  # a recorded failure is cached too; --force retries it
    return all(os.path.exists(os.path.join(out_dir, name + ext))
               for ext in (".pt", ".input.npy", ".output.npy"))


def run_child(name, out_dir, grad_trace, timeout_s):
    """Trace one model in a child process; record a crash or timeout as an error."""
    cmd = [sys.executable, os.path.abspath(__file__), out_dir, name, "--worker"]
    if grad_trace:
        cmd.append("--grad-trace")
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=timeout_s)
        if proc.returncode == 0 and is_cached(out_dir, name):
            with open(os.path.join(out_dir, name + ".json")) as f:
                return json.load(f)
        err = "worker exited with code %d: %s" % (proc.returncode, proc.stdout.strip()[-500:])
    except subprocess.TimeoutExpired:
        err = "timed out after %d s" % timeout_s
    rec = {"name": name, "input_shape": [1, 3, input_size(name), input_size(name)],
           "torch_ms": None, "status": "trace-error", "error": err,
           "total_s": round(time.perf_counter() - t0, 2)}
    write_json(out_dir, rec)
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("names", nargs="*", help="model builder names (default: all)")
    ap.add_argument("--floor", action="store_true", help="the 7 floor models: " + ", ".join(FLOOR))
    ap.add_argument("--list", action="store_true", help="print the model names and exit")
    ap.add_argument("--force", action="store_true", help="redo models that are cached")
    ap.add_argument("--grad-trace", action="store_true",
                    help="trace under enable_grad (decomposed attention instead of fused ops)")
    ap.add_argument("--in-process", action="store_true", help="no child process per model")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per model (child mode)")
    ap.add_argument("--batch32", action="store_true",
                    help="also time the floor models and those under %g ms at batch 32" % B32_MAX_MS)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.worker:  # child: one model, always writes its json
        rec = trace_one(args.names[0], args.out_dir, args.grad_trace)
        write_json(args.out_dir, rec)
        return 0

    names = list(args.names) + (FLOOR if args.floor else [])
    known = all_names()
    if not names:
        names = known
    if args.list:
        print("\n".join(names))
        return 0
    unknown = [n for n in names if n not in known]
    if unknown:
        ap.error("unknown model(s): %s (see --list)" % ", ".join(unknown))
    names = list(dict.fromkeys(names))
    os.makedirs(args.out_dir, exist_ok=True)

    t_all = time.perf_counter()
    counts = {}
    for i, name in enumerate(names, 1):
        prefix = "[%*d/%d] %-20s" % (len(str(len(names))), i, len(names), name)
        if not args.force and is_cached(args.out_dir, name):
            with open(os.path.join(args.out_dir, name + ".json")) as f:
                rec = json.load(f)
            log("%s cached   %s" % (prefix, rec.get("status")))
        else:
            log("%s ..." % prefix)
            if args.in_process:
                rec = trace_one(name, args.out_dir, args.grad_trace)
                write_json(args.out_dir, rec)
            else:
                rec = run_child(name, args.out_dir, args.grad_trace, args.timeout)
            if rec["status"] == "ok":
                log("%s ok       %s  torch %.2f ms  %d nodes  (%.1f s)" % (
                    prefix, "x".join(map(str, rec["input_shape"])), rec["torch_ms"],
                    sum(rec["node_kinds"].values()), rec.get("total_s", 0)))
            else:
                log("%s %-8s %s" % (prefix, rec["status"], rec["error"]))
        counts[rec.get("status")] = counts.get(rec.get("status"), 0) + 1
    log("done: %d models in %.1f s: %s" % (len(names), time.perf_counter() - t_all,
                                            ", ".join("%s %d" % kv for kv in sorted(counts.items()))))
    if args.batch32:
        batch32(args.out_dir, names)
    return 0


B32_MAX_MS = 15.0  # batch-32 timing for models whose batch-1 libtorch time is at most this


def cached_records(out_dir, names):
    """(name, json path, record) for each of `names` whose json is in OUT_DIR (trace_hf.py's
    and trace_timm.py's caches too)."""
    for name in names:
        path = os.path.join(out_dir, name + ".json")
        if os.path.exists(path):
            with open(path) as f:
                yield name, path, json.load(f)


def timed_ms(fn, args, runs):
    """Wall time of `fn(*args)` in ms, `runs` times."""
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn(*args)
        ts.append((time.perf_counter() - t0) * 1e3)
    return ts


def batch32(out_dir, names):
    """Batch-32 inputs, libtorch outputs and `torch_ms_b32` (median of 5 runs after 3 warm-up
    runs, one thread) for the floor models and every traced model with torch_ms <= B32_MAX_MS."""
    import numpy as np
    import torch
    set_torch_threads(1)
    for name, path, rec in cached_records(out_dir, names):
        if rec.get("status") != "ok" or "torch_ms_b32" in rec:
            continue
        if name not in FLOOR and not (rec.get("torch_ms") or 1e9) <= B32_MAX_MS:
            continue
        m = torch.jit.load(os.path.join(out_dir, name + ".pt"))
        g = torch.Generator().manual_seed(32)
        x = torch.randn([32] + list(rec["input_shape"][1:]), generator=g)
        with torch.no_grad():
            for _ in range(3):  # the profiling executor specializes on a new shape's first runs
                y = first_tensor(m(x))
            ts = timed_ms(m, (x,), 5)
        np.save(os.path.join(out_dir, name + ".b32.input.npy"), x.numpy())
        np.save(os.path.join(out_dir, name + ".b32.output.npy"), y.numpy().astype(np.float32))
        rec["torch_ms_b32"] = round(statistics.median(ts), 3)
        write_json(out_dir, rec)
        log("batch 32: %-20s torch %.1f ms" % (name, rec["torch_ms_b32"]))


if __name__ == "__main__":
    sys.exit(main())
