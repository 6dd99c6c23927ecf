#!/usr/bin/python3
"""tools/probe_nodes.py — where do torchtpu and libtorch first disagree inside a model?

When a traced model's output differs from torch's, this finds the node: for each node asked
for, it copies the frozen TorchScript module with that node's (first tensor) output as the
module's only output, runs the copy in torch and through `torchtpu-run --output`, and prints
the largest difference over torch's largest magnitude (finite elements; a NaN/inf pattern that
differs is reported as such). The first node whose difference jumps above round-off is where
the two computations part.

Run with Debian's /usr/bin/python3 (torch 1.13; PYTHONPATH=.venv-hf for Hugging Face traces).

Usage: probe_nodes.py TORCHTPU_RUN MODEL.pt --input A.npy [--input B.npy ...]
                      [--nodes N[:M[:STEP]] ...] [--threshold T]
  --nodes     node indices (0-based, the order of `module.graph.nodes()`), single or ranges
              start:stop[:step] (stop excluded); default: every node
  --threshold print only nodes whose difference exceeds T (default 0: every tensor node)

Example (found Longformer's as_strided reading another layout than torch's):
  tools/probe_nodes.py build/tools/torchtpu-run build/conformance-hf-cache/longformer.pt \\
      --input build/conformance-hf-cache/longformer.in0.npy \\
      --input build/conformance-hf-cache/longformer.in1.npy --nodes 120:200:3 --threshold 1e-5
"""
import argparse
import os
import subprocess
import sys
import tempfile


def parse_nodes(specs, count):
    """The node indices the --nodes specs name (every node when there are none)."""
    if not specs:
        return list(range(count))
    out = []
    for spec in specs:
        parts = [int(p) for p in spec.split(":")]
        if len(parts) == 1:
            out.append(parts[0])
        else:
            out.extend(range(*parts))
    return [k for k in out if 0 <= k < count]


def probe(torch, np, model_path, k, inputs, run, tmp):
    """(difference, node text) for node k, or None when its output is not a floating tensor;
    ("error", message) when torchtpu-run fails on the cut model."""
    m = torch.jit.load(model_path)
    g = m.graph
    node = list(g.nodes())[k]
    outs = [o for o in node.outputs() if o.type().kind() == "TensorType"]
    if not outs:
        return None
    while len(list(g.outputs())) > 0:
        g.eraseOutput(0)
    g.registerOutput(outs[0])
    cut = os.path.join(tmp, "cut.pt")
    m.save(cut)
    xs = [torch.from_numpy(np.load(p)) for p in inputs]
    with torch.no_grad():
        ref = torch.jit.load(cut)(*xs)
    if not isinstance(ref, torch.Tensor) or not ref.is_floating_point() or ref.numel() == 0:
        return None
    out = os.path.join(tmp, "out.npy")
    cmd = [run, cut, "--output", out]
    for p in inputs:
        cmd += ["--input", p]
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, TORCHTPU_NUM_THREADS="1"))
    text = str(node).strip().splitlines()[0][:160]
    if p.returncode != 0:
        lines = (p.stderr or p.stdout).strip().splitlines()
        return ("error", (lines[-1] if lines else "exit %d" % p.returncode)[:200], text)
    got = np.load(out).astype(np.float64)
    want = ref.double().numpy()
    if got.shape != want.shape:
        return ("shape", "%s vs torch's %s" % (got.shape, want.shape), text)
    fin = np.isfinite(want)
    if not np.array_equal(fin, np.isfinite(got)):
        return ("non-finite", "NaN/inf at other positions than torch's", text)
    if not fin.any():
        return (0.0, "", text)
    scale = max(float(np.abs(want[fin]).max()), 1e-30)
    return (float(np.abs(got[fin] - want[fin]).max()) / scale, "", text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run", help="a torchtpu-run binary")
    ap.add_argument("model", help="a traced, frozen TorchScript module (.pt)")
    ap.add_argument("--input", action="append", required=True, help=".npy, once per model input, in order")
    ap.add_argument("--nodes", action="append", default=[], help="N or start:stop[:step]")
    ap.add_argument("--threshold", type=float, default=0.0)
    args = ap.parse_args()
    import numpy as np
    import torch
    count = len(list(torch.jit.load(args.model).graph.nodes()))
    with tempfile.TemporaryDirectory() as tmp:
        for k in parse_nodes(args.nodes, count):
            r = probe(torch, np, args.model, k, args.input, args.run, tmp)
            if r is None:
                continue
            diff, why, text = r
            if isinstance(diff, str):
                print("%5d  %-10s %s  | %s" % (k, diff, why, text), flush=True)
            elif diff > args.threshold:
                print("%5d  %.3g  | %s" % (k, diff, text), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
