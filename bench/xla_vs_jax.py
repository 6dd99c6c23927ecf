"""bench/xla_vs_jax.py — torchtpu against jax.jit of the same functions on XLA's CPU, in one
process, the candidates interleaved round by round (issue 11, "Benchmarks").

torchtpu runs through bench/xla_capi.cpp (libtorchtpu_bench_xla.so, loaded with ctypes) on a
PJRT device: "xla_cpu", or "tpu" with TORCHTPU_PJRT_PLUGIN_TPU pointing at XLA's CPU plugin
(xla-cpu-pjrt's xla_cpu_pjrt.so). jax runs on its built-in CPU backend (jaxlib's XLA) and, with
--jax-plugin (default on), on the very plugin torchtpu loads, registered with jax as
"xla_cpu_plugin". All candidates compute on the same inputs; every result is checked against
the others and against a float64 NumPy reference before anything is timed.

Measured:
  1. fused vs strict: the 10-op chain (2^22 f32), a 150-op chain (2^20 f32, and 2^14 f32 where
     dispatch dominates) and the 3-layer MLP (256x512-512-512-10), torchtpu strict / fused
     against jax.jit and jax op-by-op (no jit);
  2. per-op dispatch: `x + 1` on 2^10 f32 in strict mode, one synchronous call at a time and
     back to back, against a jitted `lambda x: x + 1` (+ block_until_ready);
  3. compile latency: first call of a fresh program (new shape), cached call, executable from
     the disk cache in this process and in a fresh process (TORCHTPU_CACHE_DIR vs jax's
     persistent compilation cache with min compile time 0).

A torchtpu call is timed in C++ (its users are C++ programs); a jax call in Python (its users
are Python programs). Each call waits for its result on the device (block_until_ready and
PJRT_Buffer_ReadyEvent). Figures are medians over rounds of per-call wall time; process CPU time
(all threads) is recorded too and is the steadier figure on a loaded machine.

Run with the venv's interpreter (scripts/bench --xla does all of it):
  JAX_PLATFORMS=cpu .venv/bin/python bench/xla_vs_jax.py --lib build-bench/bench/libtorchtpu_bench_xla.so \
      [--device auto|xla_cpu|tpu] [--rounds 15] [--quick] [--no-jax-plugin] [--md FILE] [--json FILE]
"""
import argparse
import ctypes
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

N_CHAIN = 1 << 22
N_CHAIN150 = 1 << 20
N_CHAIN150_SMALL = 1 << 14  # the same chain where per-op dispatch, not arithmetic, dominates
N_ADD = 1 << 10
MLP = (256, 512, 512, 512, 10)
STRICT, FUSED = 0, 1
W_CHAIN10, W_CHAIN10_EXPR, W_CHAIN150, W_MLP, W_ADD1, W_CHAIN150_SMALL = range(6)
PLUGIN_NAME = "xla_cpu_plugin"


def plugin_path():
    spec = importlib.util.find_spec("xla_plugins.xla_cpu_pjrt")
    if spec is None or not spec.submodule_search_locations:
        return None
    p = os.path.join(list(spec.submodule_search_locations)[0], "xla_cpu_pjrt.so")
    return p if os.path.isfile(p) else None


# ---- the functions, as jax writes them (bench/workloads.hpp has torchtpu's) --------------------

def make_functions(jax, jnp):
    # The 10-op chain and the MLP are tools/device_check_jax.py's (the jax side of
    # tools/device_check.sh); chain150 and add1 are defined here.
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
    from device_check_jax import chain, mlp

    def chain150(x):  # 15 x 10 one-input ops, as chain150_per_op in bench/workloads.hpp
        for _ in range(15):
            x = jnp.tanh(jnp.exp(-jnp.abs(x * 0.5 + 0.25)) * 2.0 - 1.0) * 0.75 + 0.5
        return x

    def add1(x):
        return x + 1.0

    return {"chain10": chain, "chain150": chain150, "chain150s": chain150, "mlp": mlp, "add1": add1}


def reference(name, a):
    """float64 NumPy reference of each workload."""
    sig = lambda v: 1.0 / (1.0 + np.exp(-v))
    if name == "chain10":
        x = a[0].astype(np.float64)
        return np.tanh(np.exp(-np.abs(x * 0.5 + 0.25)) * 2.0 - 1.0) * 0.75 + sig(x)
    if name in ("chain150", "chain150s"):
        x = a[0].astype(np.float64)
        for _ in range(15):
            x = np.tanh(np.exp(-np.abs(x * 0.5 + 0.25)) * 2.0 - 1.0) * 0.75 + 0.5
        return x
    if name == "mlp":
        x, w1, b1, w2, b2, w3, b3 = (v.astype(np.float64) for v in a)
        h1 = np.maximum(x @ w1 + b1, 0)
        h2 = np.maximum(h1 @ w2 + b2, 0)
        return h2 @ w3 + b3
    return (a[0] + np.float32(1.0)).astype(np.float64)  # x + 1 rounded to f32: must match exactly


# ---- torchtpu through the C ABI ---------------------------------------------------------------

class TorchTPU:
    def __init__(self, lib_path):
        self.lib = ctypes.CDLL(os.path.abspath(lib_path))
        L = self.lib
        L.ttb_last_error.restype = ctypes.c_char_p
        L.ttb_open.argtypes = [ctypes.c_char_p]
        L.ttb_describe.restype = ctypes.c_char_p
        L.ttb_upload.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64), ctypes.c_int]
        L.ttb_run.argtypes = [ctypes.c_int] * 4
        L.ttb_run.restype = ctypes.c_double
        L.ttb_result.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_int64]
        L.ttb_probe.argtypes = [ctypes.c_int64, ctypes.c_int64, ctypes.POINTER(ctypes.c_float)]
        L.ttb_probe.restype = ctypes.c_double
        L.ttb_cache_dir.argtypes = [ctypes.c_char_p]
        L.ttb_cache_stats.argtypes = [ctypes.POINTER(ctypes.c_uint64)]
        L.ttb_disk_roundtrip.restype = ctypes.c_char_p

    def check(self, rc, what):
        if rc < 0:
            raise RuntimeError(f"torchtpu {what}: {self.lib.ttb_last_error().decode()}")
        return rc

    def open(self, device):
        return self.lib.ttb_open(device.encode()) == 0

    def describe(self):
        d = self.lib.ttb_describe()
        if d is None:
            self.check(-1, "describe")
        return d.decode()

    def upload(self, slot, a):
        a = np.ascontiguousarray(a, dtype=np.float32)
        dims = (ctypes.c_int64 * a.ndim)(*a.shape)
        self.check(self.lib.ttb_upload(slot, a.ctypes.data, dims, a.ndim), f"upload slot {slot}")

    def run(self, workload, mode, iters, wait_each=1):
        return self.check(self.lib.ttb_run(workload, mode, iters, wait_each), f"run {workload}/{mode}")

    def result(self, workload, mode, shape):
        out = np.empty(shape, np.float32)
        self.check(self.lib.ttb_result(workload, mode, out.ctypes.data, out.size), f"result {workload}/{mode}")
        return out

    def probe(self, rows, cols):
        first = ctypes.c_float()
        ms = self.check(self.lib.ttb_probe(rows, cols, ctypes.byref(first)), f"probe [{rows}, {cols}]")
        return ms, first.value

    def disk_roundtrip(self):
        r = self.lib.ttb_disk_roundtrip()
        if r is None:
            self.check(-1, "disk_roundtrip")
        return r.decode()

    def cache_dir(self, d):
        self.check(self.lib.ttb_cache_dir(d.encode()), "cache_dir")

    def clear_memory(self):
        self.check(self.lib.ttb_cache_clear_memory(), "cache_clear_memory")

    def stats(self):
        s = (ctypes.c_uint64 * 5)()
        self.check(self.lib.ttb_cache_stats(s), "cache_stats")
        return dict(zip(("memory_hits", "disk_hits", "misses", "compiles", "disk_writes"), list(s)))


def open_torchtpu(args, plugin):
    """Opens the torchtpu device: --device, or auto = "xla_cpu" if this build knows that kind, else
    "tpu" with TORCHTPU_PJRT_PLUGIN_TPU set to XLA's CPU plugin. Refuses the TPU emulator."""
    for v in ("TORCHTPU_TPU_EMULATOR", "TORCHTPU_TPU_EMULATOR_PATH"):
        os.environ.pop(v, None)  # else "tpu" would be the emulator
    if plugin:
        os.environ.setdefault("TORCHTPU_PJRT_PLUGIN_XLA_CPU", plugin)
        os.environ.setdefault("TORCHTPU_PJRT_PLUGIN_TPU", plugin)
    tt = TorchTPU(args.lib)
    tried = []
    for dev in (["xla_cpu", "tpu"] if args.device == "auto" else [args.device]):
        if tt.open(dev):
            desc = tt.describe()
            if "EMULATED" in desc:
                sys.exit(f"xla_vs_jax: torchtpu device {dev} is the TPU emulator, not XLA: {desc}")
            return tt, dev, desc
        tried.append(f"{dev}: {tt.lib.ttb_last_error().decode()}")
    sys.exit("xla_vs_jax: cannot open a torchtpu device:\n  " + "\n  ".join(tried))


# ---- timing -----------------------------------------------------------------------------------

class Candidate:
    def __init__(self, name, block):
        self.name, self.block = name, block  # block(iters) -> None, runs `iters` waited calls
        self.wall, self.cpu = [], []

    def timed_block(self, iters):
        c0, t0 = time.process_time(), time.perf_counter()
        self.block(iters)
        t1, c1 = time.perf_counter(), time.process_time()
        self.wall.append((t1 - t0) * 1e3 / iters)
        self.cpu.append((c1 - c0) * 1e3 / iters)

    def median(self):
        return statistics.median(self.wall), statistics.median(self.cpu)


def interleave(cands, rounds, target_ms):
    """Calibrates a call count per candidate (about target_ms of work per block), then runs
    `rounds` rounds; each round runs one block of every candidate, the order rotated by one
    each round so that no candidate always follows the same one."""
    iters = {}
    for c in cands:
        c.block(1)  # warm-up (compiles)
        t0 = time.perf_counter()
        c.block(1)
        one = max(time.perf_counter() - t0, 1e-6) * 1e3
        iters[c.name] = max(1, min(10000, int(target_ms / one)))
    order = list(cands)
    for _ in range(rounds):
        for c in order:
            c.timed_block(iters[c.name])
        order = order[1:] + order[:1]
    return {c.name: c.median() for c in cands}


def jax_block(f, args, wait_each=True):
    def block(iters):
        r = None
        for _ in range(iters):
            r = f(*args)
            if wait_each:
                r.block_until_ready()
        r.block_until_ready()
    return block


def tt_block(tt, workload, mode, wait_each=1):
    return lambda iters: tt.run(workload, mode, iters, wait_each)


# ---- disk-cache probe in a fresh process -------------------------------------------------------

def disk_probe_main(args):
    """Child process: memory caches empty, disk caches filled by the parent. Times the first call
    of each probe shape for torchtpu and each jax backend; prints one JSON object."""
    plugin = plugin_path()
    tt, dev, _ = open_torchtpu(args, plugin)
    tt.cache_dir(args.tt_cache)
    import jax
    jax.config.update("jax_compilation_cache_dir", args.jax_cache)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    if args.jax_plugin and plugin:
        from jax._src import xla_bridge
        xla_bridge.register_plugin(PLUGIN_NAME, library_path=plugin)
    import jax.numpy as jnp
    hits = count_cache_hits(jax)
    fns = make_functions(jax, jnp)
    backends = jax_backends(jax, args.jax_plugin and plugin)
    # Warm up the clients with another program, so the probes measure loading, not start-up.
    tt.upload(9, np.zeros(N_ADD, np.float32))
    tt.run(W_ADD1, STRICT, 1)
    for _, d in backends:
        jax.jit(fns["add1"])(jax.device_put(np.zeros(7, np.float32), d)).block_until_ready()
    out = {"torchtpu": [], "jax": {name: [] for name, _ in backends}, "tt_stats0": tt.stats()}
    for cols in args.shapes:
        out["torchtpu"].append(tt.probe(8, cols)[0])
        for name, d in backends:
            x = jax.device_put(probe_input(8, cols), d)
            x.block_until_ready()
            f = jax.jit(fns["chain10"])
            h0 = hits[0]
            t0 = time.perf_counter()
            np.asarray(f(x))
            out["jax"][name].append(((time.perf_counter() - t0) * 1e3, hits[0] - h0))
    out["tt_stats1"] = tt.stats()
    print(json.dumps(out))
    return 0


def probe_input(rows, cols):
    return (np.arange(rows * cols) % 17).astype(np.float32).reshape(rows, cols) / 8.0 - 1.0


def count_cache_hits(jax):
    """A one-element list counting jax persistent-cache hits (its monitoring events)."""
    hits = [0]

    def listener(event, **kw):
        if event == "/jax/compilation_cache/cache_hits":
            hits[0] += 1
    jax.monitoring.register_event_listener(listener)
    return hits


def jax_backends(jax, with_plugin):
    b = [("jax cpu", jax.devices("cpu")[0])]
    if with_plugin:
        b.append(("jax plugin", jax.devices(PLUGIN_NAME)[0]))
    return b


# ---- main ----------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", required=True, help="libtorchtpu_bench_xla.so")
    ap.add_argument("--device", default="auto", help="torchtpu device: auto (xla_cpu, else tpu + plugin), xla_cpu, tpu")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--quick", action="store_true", help="3 rounds, short blocks, small sizes: checks the harness")
    ap.add_argument("--no-jax-plugin", dest="jax_plugin", action="store_false",
                    help="do not run jax on xla_cpu_pjrt.so (only on jaxlib's built-in CPU)")
    ap.add_argument("--md", help="write the markdown tables here")
    ap.add_argument("--json", help="write all figures here")
    ap.add_argument("--disk-probe", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--tt-cache", help=argparse.SUPPRESS)
    ap.add_argument("--jax-cache", help=argparse.SUPPRESS)
    ap.add_argument("--shapes", type=int, nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args()
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    if args.jax_plugin and PLUGIN_NAME not in os.environ["JAX_PLATFORMS"]:
        os.environ["JAX_PLATFORMS"] += "," + PLUGIN_NAME
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # the plugin's "Unsupported fusion type" noise
    if args.disk_probe:
        return disk_probe_main(args)

    global N_CHAIN, N_CHAIN150, N_CHAIN150_SMALL
    rounds, target = (3, 5.0) if args.quick else (args.rounds, 60.0)
    if args.quick:
        N_CHAIN, N_CHAIN150, N_CHAIN150_SMALL = 1 << 16, 1 << 14, 1 << 10

    plugin = plugin_path()
    if args.jax_plugin and not plugin:
        print("xla_vs_jax: xla_plugins.xla_cpu_pjrt not installed; jax runs on its built-in CPU only")
        args.jax_plugin = False
    tt, dev, desc = open_torchtpu(args, plugin)
    tmp = tempfile.mkdtemp(prefix="xla_vs_jax_")
    tt_cache, jax_cache = os.path.join(tmp, "torchtpu"), os.path.join(tmp, "jax")
    tt.cache_dir(tt_cache)

    import jax
    import jaxlib
    jax.config.update("jax_compilation_cache_dir", jax_cache)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    if args.jax_plugin:
        from jax._src import xla_bridge
        xla_bridge.register_plugin(PLUGIN_NAME, library_path=plugin)
    import jax.numpy as jnp
    hits = count_cache_hits(jax)
    fns = make_functions(jax, jnp)
    backends = jax_backends(jax, args.jax_plugin)
    info = {
        "command": " ".join([os.path.basename(sys.executable)] + sys.argv),
        "torchtpu": f"{dev}: {desc}",
        "jax": f"jax {jax.__version__}, jaxlib {jaxlib.__version__}",
        "jax backends": "; ".join(f"{n}: {d.client.platform} {' '.join(d.client.platform_version.split())} ({d.device_kind}, "
                                  f"{len(jax.devices(d.platform if n == 'jax cpu' else PLUGIN_NAME))} devices)"
                                  for n, d in backends),
        "torchtpu executable serialize + load": tt.disk_roundtrip(),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}",
        "python": platform.python_version(),
        "rounds": rounds,
    }
    sizes = {"chain10": N_CHAIN, "chain150": N_CHAIN150, "chain150s": N_CHAIN150_SMALL, "add1": N_ADD}
    for k, v in info.items():
        print(f"# {k}: {v}")

    # Inputs: the same host arrays on every side.
    rng = np.random.default_rng(0)
    x22 = rng.standard_normal(N_CHAIN, dtype=np.float32)
    x20 = rng.standard_normal(N_CHAIN150, dtype=np.float32)
    x14 = rng.standard_normal(N_CHAIN150_SMALL, dtype=np.float32)
    m, k1, k2, k3, n = MLP
    mlp_in = [rng.standard_normal((m, k1), dtype=np.float32)]
    for fan_in, fan_out in ((k1, k2), (k2, k3), (k3, n)):
        mlp_in.append((rng.standard_normal((fan_in, fan_out), dtype=np.float32) / np.sqrt(fan_in)).astype(np.float32))
        mlp_in.append(rng.standard_normal(fan_out, dtype=np.float32) * np.float32(0.1))
    xs = rng.standard_normal(N_ADD, dtype=np.float32)
    tt.upload(0, x22)
    tt.upload(1, x20)
    for i, a in enumerate(mlp_in):
        tt.upload(2 + i, a)
    tt.upload(9, xs)
    tt.upload(10, x14)
    host = {"chain10": [x22], "chain150": [x20], "chain150s": [x14], "mlp": mlp_in, "add1": [xs]}
    dev_in = {b: {w: [jax.device_put(a, d) for a in arrs] for w, arrs in host.items()} for b, d in backends}
    for b in dev_in.values():
        for arrs in b.values():
            for a in arrs:
                a.block_until_ready()
    tt_workloads = {"chain10": [(W_CHAIN10, STRICT, "strict"), (W_CHAIN10, FUSED, "fused"),
                                (W_CHAIN10_EXPR, FUSED, "fused, one expression")],
                    "chain150": [(W_CHAIN150, STRICT, "strict"), (W_CHAIN150, FUSED, "fused")],
                    "chain150s": [(W_CHAIN150_SMALL, STRICT, "strict"), (W_CHAIN150_SMALL, FUSED, "fused")],
                    "mlp": [(W_MLP, STRICT, "strict"), (W_MLP, FUSED, "fused")],
                    "add1": [(W_ADD1, STRICT, "strict")]}

    # ---- 0. correctness: every candidate against float64 and against each other ----
    tol = {"chain10": 2e-6, "chain150": 2e-5, "chain150s": 2e-5, "mlp": 2e-5, "add1": 0.0}  # max |diff| / max |ref|
    failures = []
    checks = []
    for w, arrs in host.items():
        ref = reference(w, arrs)
        scale = float(np.max(np.abs(ref))) or 1.0
        got = {}
        for wid, mode, label in tt_workloads[w]:
            got[f"torchtpu {label}"] = tt.result(wid, mode, ref.shape)
        for b, _ in backends:
            got[f"{b} jit"] = np.asarray(jax.jit(fns[w])(*dev_in[b][w]))
            got[f"{b} op-by-op"] = np.asarray(fns[w](*dev_in[b][w]))
        for name, v in got.items():
            err = float(np.max(np.abs(v.astype(np.float64) - ref))) / scale
            checks.append((w, name, err))
            if not err <= tol[w]:
                failures.append(f"{w}: {name}: max rel error {err:.3g} > {tol[w]:.1g}")
    print("# correctness (max |x - float64 reference| / max |reference|):")
    for w, name, err in checks:
        print(f"#   {w:9s} {name:32s} {err:.2e}")
    if failures:
        print("xla_vs_jax: results disagree:\n  " + "\n  ".join(failures), file=sys.stderr)
        return 1

    results = {"info": dict(info, sizes=sizes), "checks": checks}

    # ---- 1. fused vs strict, torchtpu vs jax ----
    modes = {}
    for w in ("chain10", "chain150", "chain150s", "mlp"):
        cands = [Candidate(f"torchtpu {label}", tt_block(tt, wid, mode)) for wid, mode, label in tt_workloads[w]]
        for b, _ in backends:
            cands.append(Candidate(f"{b} jit", jax_block(jax.jit(fns[w]), dev_in[b][w])))
        cands.append(Candidate(f"{backends[0][0]} op-by-op", jax_block(fns[w], dev_in[backends[0][0]][w])))
        modes[w] = interleave(cands, rounds, target)
        print(f"# {w}: " + ", ".join(f"{k} {v[0]:.3f} ms" for k, v in modes[w].items()))
    results["modes"] = modes

    # ---- 2. per-op dispatch ----
    cands = [Candidate("torchtpu strict, wait each call", tt_block(tt, W_ADD1, STRICT, 1)),
             Candidate("torchtpu strict, back to back", tt_block(tt, W_ADD1, STRICT, 0))]
    for b, _ in backends:
        f = jax.jit(fns["add1"])
        cands.append(Candidate(f"{b} jit, wait each call", jax_block(f, dev_in[b]["add1"], True)))
        cands.append(Candidate(f"{b} jit, back to back", jax_block(f, dev_in[b]["add1"], False)))
    dispatch = interleave(cands, rounds, target / 2)
    print("# dispatch: " + ", ".join(f"{k} {v[0] * 1e3:.1f} us" for k, v in dispatch.items()))
    results["dispatch"] = dispatch

    # ---- 3. compile latency ----
    nprobe = 3 if args.quick else 8
    shapes = [101 + i for i in range(nprobe)]  # fresh programs: no earlier call used these shapes
    lat = {"torchtpu": {"first": [], "cached": [], "disk": []}}
    for b, _ in backends:
        lat[b] = {"first": [], "cached": [], "disk": [], "disk_hit": []}
    s0 = tt.stats()
    ncached = 5 if args.quick else 20
    for i, cols in enumerate(shapes):
        def tt_side():
            lat["torchtpu"]["first"].append(tt.probe(8, cols)[0])
            lat["torchtpu"]["cached"].append(statistics.median(tt.probe(8, cols)[0] for _ in range(ncached)))

        def jax_side():
            for b, d in backends:
                x = jax.device_put(probe_input(8, cols), d)
                x.block_until_ready()
                f = jax.jit(fns["chain10"])
                t0 = time.perf_counter()
                np.asarray(f(x))
                lat[b]["first"].append((time.perf_counter() - t0) * 1e3)
                ts = []
                for _ in range(ncached):
                    t0 = time.perf_counter()
                    np.asarray(f(x))
                    ts.append((time.perf_counter() - t0) * 1e3)
                lat[b]["cached"].append(statistics.median(ts))
        for side in ((tt_side, jax_side) if i % 2 == 0 else (jax_side, tt_side)):
            side()
    s1 = tt.stats()
    # From disk, in this process: memory caches dropped, executables reloaded from disk.
    for i, cols in enumerate(shapes):
        tt.clear_memory()
        lat["torchtpu"]["disk"].append(tt.probe(8, cols)[0])
        for b, d in backends:
            jax.clear_caches()
            x = jax.device_put(probe_input(8, cols), d)
            x.block_until_ready()
            f = jax.jit(fns["chain10"])
            h0 = hits[0]
            t0 = time.perf_counter()
            np.asarray(f(x))
            lat[b]["disk"].append((time.perf_counter() - t0) * 1e3)
            lat[b]["disk_hit"].append(hits[0] - h0)
    s2 = tt.stats()
    tt_counts = {k: (s1[k] - s0[k], s2[k] - s1[k]) for k in s0}
    # From disk, in a fresh process.
    child = [sys.executable, os.path.abspath(__file__), "--disk-probe", "--lib", args.lib, "--device", dev,
             "--tt-cache", tt_cache, "--jax-cache", jax_cache, "--shapes", *map(str, shapes)]
    if not args.jax_plugin:
        child.append("--no-jax-plugin")
    cp = subprocess.run(child, capture_output=True, text=True)
    if cp.returncode != 0:
        print(cp.stdout + cp.stderr, file=sys.stderr)
        print("xla_vs_jax: the fresh-process disk probe failed", file=sys.stderr)
        return 1
    fresh = json.loads(cp.stdout.strip().splitlines()[-1])
    results["compile"] = {"lat": lat, "tt_counts": tt_counts, "fresh": fresh, "shapes": shapes}
    fresh_tt_disk = fresh["tt_stats1"]["disk_hits"] - fresh["tt_stats0"]["disk_hits"]
    fresh_tt_compiles = fresh["tt_stats1"]["compiles"] - fresh["tt_stats0"]["compiles"]
    print(f"# compile: torchtpu counters (probes, in-process disk): {tt_counts}; fresh process: "
          f"{fresh_tt_disk} disk hits, {fresh_tt_compiles} compiles")
    problems = []
    if tt_counts["compiles"][0] != len(shapes) or tt_counts["disk_hits"][1] != len(shapes):
        problems.append(f"torchtpu: expected {len(shapes)} compiles then {len(shapes)} disk hits, got {tt_counts}")
    if fresh_tt_disk != len(shapes) or fresh_tt_compiles != 0:
        problems.append(f"torchtpu fresh process: {fresh_tt_disk} disk hits, {fresh_tt_compiles} compiles")
    for b, _ in backends:
        if sum(lat[b]["disk_hit"]) != len(shapes):
            problems.append(f"{b}: {sum(lat[b]['disk_hit'])}/{len(shapes)} persistent-cache hits in process")
        if sum(h for _, h in fresh["jax"][b]) != len(shapes):
            problems.append(f"{b}: {sum(h for _, h in fresh['jax'][b])}/{len(shapes)} persistent-cache hits "
                            "in the fresh process")
    results["compile"]["problems"] = problems
    for p in problems:
        print(f"# WARNING: {p}")

    md = render(results, backends)
    print(md)
    if args.md:
        with open(args.md, "w") as f:
            f.write(md)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1, default=str)
    return 0


def render(r, backends):
    med = statistics.median
    out = []
    out.append("### Fused vs strict, torchtpu vs jax.jit\n")
    out.append("Per-call time, median over rounds (wall ms; process CPU ms of all threads in brackets). "
               "**fused/strict** = torchtpu strict ÷ fused (floor 1.5×; 2.3× is TorchTPU's figure for a "
               "150-op chain); **jax/torchtpu** = jax.jit ÷ torchtpu fused (> 1: torchtpu is faster).\n")
    sz = r["info"]["sizes"]
    names = {"chain10": f"10-op chain, 2^{sz['chain10'].bit_length() - 1} f32",
             "chain150": f"150-op chain, 2^{sz['chain150'].bit_length() - 1} f32",
             "chain150s": f"150-op chain, 2^{sz['chain150s'].bit_length() - 1} f32",
             "mlp": "3-layer MLP 256×512-512-512-10"}
    head = ["workload", "torchtpu strict", "torchtpu fused"] + [f"{b} jit" for b, _ in backends] + \
           [f"{backends[0][0]} op-by-op", "fused/strict"] + [f"{b} / torchtpu" for b, _ in backends]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    for w, v in r["modes"].items():
        f = v["torchtpu fused"]
        cells = [names[w], fmt(v["torchtpu strict"]), fmt(f)]
        cells += [fmt(v[f"{b} jit"]) for b, _ in backends]
        cells += [fmt(v[f"{backends[0][0]} op-by-op"]), f"**{v['torchtpu strict'][0] / f[0]:.2f}×** "
                  f"({v['torchtpu strict'][1] / f[1]:.2f}×)"]
        cells += [f"{v[f'{b} jit'][0] / f[0]:.2f}" for b, _ in backends]
        out.append("| " + " | ".join(cells) + " |")
    if "torchtpu fused, one expression" in r["modes"].get("chain10", {}):
        v = r["modes"]["chain10"]["torchtpu fused, one expression"]
        out.append(f"\n10-op chain written as one expression (fused): {fmt(v)} ms.\n")

    out.append("### Per-op dispatch (`x + 1`, 2^10 f32)\n")
    out.append("Per-call time in µs, median over rounds. Floor: torchtpu strict no slower than jax.jit.\n")
    out.append("| candidate | µs per call (wall) | µs per call (CPU) |")
    out.append("|---|---:|---:|")
    for k, v in r["dispatch"].items():
        out.append(f"| {k} | {v[0] * 1e3:.1f} | {v[1] * 1e3:.1f} |")
    d = r["dispatch"]
    for b, _ in backends:
        out.append(f"\njax.jit on {b} ÷ torchtpu strict, waiting each call: "
                   f"**{d[f'{b} jit, wait each call'][0] / d['torchtpu strict, wait each call'][0]:.2f}**; "
                   f"back to back: **{d[f'{b} jit, back to back'][0] / d['torchtpu strict, back to back'][0]:.2f}**")

    c = r["compile"]
    out.append("\n### Compile latency (10-op chain as one program on a fresh [8, n] input)\n")
    out.append(f"Median over {len(c['shapes'])} fresh shapes, ms per call including the host copy of the "
               "result. *first*: trace/lower + compile + run; *cached*: the same program again (memory); "
               "*disk, same process*: memory caches dropped (torchtpu: `clear_memory` + program texts; jax: "
               "`jax.clear_caches()`), executable from the disk cache; *disk, fresh process*: a new process "
               "with the disk cache of this one (TORCHTPU_CACHE_DIR vs jax's persistent compilation cache, "
               "min compile time 0).\n")
    out.append("| candidate | first | cached | disk, same process | disk, fresh process | first ÷ cached | first ÷ disk (fresh) |")
    out.append("|---|---:|---:|---:|---:|---:|---:|")
    rows = [("torchtpu", c["lat"]["torchtpu"], c["fresh"]["torchtpu"])]
    rows += [(b, c["lat"][b], [t for t, _ in c["fresh"]["jax"][b]]) for b, _ in backends]
    for name, l, fr in rows:
        first, cached, disk, fdisk = med(l["first"]), med(l["cached"]), med(l["disk"]), med(fr)
        out.append(f"| {name} | {first:.3f} | {cached:.3f} | {disk:.3f} | {fdisk:.3f} | {first / cached:.0f}× | "
                   f"{first / fdisk:.1f}× |")
    if c["problems"]:
        out.append("\nCache counters disagree with what was measured: " + "; ".join(c["problems"]))
    out.append(f"\ntorchtpu executable serialize + load on this plugin: {r['info']['torchtpu executable serialize + load']}")
    return "\n".join(out) + "\n"


def fmt(v):
    return f"{v[0]:.3f} ({v[1]:.3f})"


if __name__ == "__main__":
    sys.exit(main())
