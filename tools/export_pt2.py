#!/usr/bin/env python3
"""Export torchvision classification models as torch.export programs (.pt2) for torchtpu.

Run with torch 2.x (the venv scripts/deps.sh makes):

    .venv-torch2/bin/python tools/export_pt2.py OUT_DIR [NAME ...] [--decompose]

For each model (default: trace_torchvision.FLOOR) writes

    OUT_DIR/<name>.pt2          torch.export.save of torch.export.export(model.eval(), (x,))
    OUT_DIR/<name>.input.npy    the input, float32 (the same as tools/trace_torchvision.py's)
    OUT_DIR/<name>.output.npy   the exported program's output on it, float32
    OUT_DIR/<name>.output_f64.npy  the eager model's output in float64
    OUT_DIR/<name>.pt2.json     {"name", "status", "error", "targets": {target: count}, ...}

Weights and inputs are those of tools/trace_torchvision.py (its builder arguments, seeds and
`make_nondegenerate`, imported from it), so a .pt2 and a traced .pt of one model compute the
same function. The program keeps torch.export's default (training) IR — aten::conv2d,
aten::batch_norm, aten::linear, ... — which maps onto torchtpu's registry as TorchScript graphs
do; --decompose saves `ep.run_decompositions()` (core ATen) instead.
"""

import argparse
import json
import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import trace_torchvision as tv  # noqa: E402  (the weights, inputs and sizes of the traced models)


def export_one(name, out_dir, decompose=False):
    """Build, export, save and run one model; returns the json record."""
    import numpy as np
    import torch
    import torchvision.models as tvm

    size = tv.input_size(name)
    shape = [1, 3, size, size]
    rec = {"name": name, "input_shape": shape, "status": "ok", "error": None,
           "torch_version": torch.__version__, "decomposed": decompose}
    stage = "build"
    try:
        torch.manual_seed(tv.WEIGHT_SEED)
        model = tvm.get_model(name, weights=None, **tv.builder_kwargs(name))
        tv.make_nondegenerate(model, size)
        x = torch.randn(shape, generator=torch.Generator().manual_seed(tv.INPUT_SEED))
        stage = "export"
        with torch.no_grad():
            ep = torch.export.export(model.eval(), (x,))
            if decompose:
                ep = ep.run_decompositions()
        path = os.path.join(out_dir, name + ".pt2")
        torch.export.save(ep, path + ".tmp")
        os.replace(path + ".tmp", path)
        targets = {}
        for n in ep.graph.nodes:
            if n.op == "call_function":
                t = str(n.target)
                targets[t] = targets.get(t, 0) + 1
        rec["targets"] = dict(sorted(targets.items()))
        stage = "run"
        with torch.no_grad():
            y = tv.first_tensor(torch.export.load(path).module()(x)).contiguous()
            eager64 = tv.first_tensor(model.double()(x.double())).contiguous()
        np.save(os.path.join(out_dir, name + ".input.npy"), x.numpy())
        np.save(os.path.join(out_dir, name + ".output.npy"), y.numpy())
        np.save(os.path.join(out_dir, name + ".output_f64.npy"), eager64.numpy())
        rec["output_shape"] = list(y.shape)
        rec["fp32_vs_fp64_rel"] = (y.double() - eager64).abs().max().item() / max(eager64.abs().max().item(), 1e-30)
    except Exception as e:  # recorded per model, the others still run
        rec["status"] = stage + "-error"
        rec["error"] = "%s: %s" % (type(e).__name__, str(e).split("\n")[0][:500])
        rec["traceback"] = traceback.format_exc()
    with open(os.path.join(out_dir, name + ".pt2.json"), "w") as f:
        json.dump(rec, f, indent=1)
    return rec


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out_dir")
    p.add_argument("names", nargs="*", help="torchvision builders (default: %s)" % " ".join(tv.FLOOR))
    p.add_argument("--decompose", action="store_true", help="save ep.run_decompositions() (core ATen)")
    a = p.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    tv.set_torch_threads(1)
    bad = 0
    for name in a.names or tv.FLOOR:
        rec = export_one(name, a.out_dir, a.decompose)
        tv.log("%-20s %s%s" % (name, rec["status"], "" if rec["status"] == "ok" else ": " + rec["error"]))
        bad += rec["status"] != "ok"
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
