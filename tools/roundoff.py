#!/usr/bin/python3
"""Float32 round-off of one torchvision model over several inputs, torchtpu against libtorch.

    /usr/bin/python3 tools/roundoff.py TORCHTPU_RUN CACHE NAME [--inputs N] [--json]

scripts/conformance runs this for a model that misses the fair criterion on its one traced
input: a single input can be ill-conditioned (a logit that nearly cancels), and which of two
float32 summation orders lands closer to the float64 answer there is chance. This rebuilds the
model exactly as tools/trace_torchvision.py did (same builder, seed and non-degenerate weights),
then for the traced input and N-1 more (torch.randn, seeds 101, 102, ...) measures
max|y - y64| / max|y64| for libtorch's frozen float32 module (CACHE/NAME.pt, loaded by torch),
for torchtpu (TORCHTPU_RUN on the same file) and for the eager float32 model, all against the
eager model in float64. Prints one line per input and the geometric means; --json prints
{"inputs", "torchtpu", "libtorch", "eager", "ratio"} (geometric means; ratio = torchtpu /
libtorch) as the last line.
"""

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import trace_torchvision as tv  # noqa: E402  (the builder, seeds and weights the cache was made with)


def rel_err(y, y64):
    import numpy as np
    return float(np.abs(y.astype(np.float64) - y64).max()) / max(float(np.abs(y64).max()), 1e-30)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run")
    ap.add_argument("cache")
    ap.add_argument("name")
    ap.add_argument("--inputs", type=int, default=8)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    import numpy as np
    import torch
    import torchvision.models as tvm

    tv.set_torch_threads(1)
    name, size = args.name, tv.input_size(args.name)
    torch.manual_seed(tv.WEIGHT_SEED)
    model = tvm.get_model(name, weights=None, **tv.builder_kwargs(name)) if hasattr(tvm, "get_model") \
        else getattr(tvm, name)(weights=None, **tv.builder_kwargs(name))
    tv.make_nondegenerate(model, size)
    model.eval()
    model64 = copy.deepcopy(model).double()
    pt = os.path.join(args.cache, name + ".pt")
    frozen = torch.jit.load(pt)
    errs = []
    with tempfile.TemporaryDirectory() as tmp:
        xin, yout = os.path.join(tmp, "x.npy"), os.path.join(tmp, "y.npy")
        for i in range(args.inputs):
            seed = tv.INPUT_SEED if i == 0 else 100 + i
            x = torch.randn([1, 3, size, size], generator=torch.Generator().manual_seed(seed))
            with torch.no_grad():
                y64 = model64(x.double()).numpy()
                eager, lib = model(x).numpy(), frozen(x).numpy()
            np.save(xin, x.numpy())
            subprocess.run([args.run, pt, "--input", xin, "--output", yout], check=True, capture_output=True)
            row = (rel_err(np.load(yout), y64), rel_err(lib, y64), rel_err(eager, y64))
            errs.append(row)
            print("%s input seed %d: torchtpu %.2e, libtorch (frozen) %.2e, eager float32 %.2e" % ((name, seed) + row),
                  flush=True)
    g = np.exp(np.log(np.maximum(np.array(errs), 1e-30)).mean(axis=0))
    res = {"inputs": args.inputs, "torchtpu": float(g[0]), "libtorch": float(g[1]), "eager": float(g[2]),
           "ratio": float(g[0] / g[1])}
    print("%s geometric mean over %d inputs: torchtpu %.2e, libtorch %.2e (ratio %.2f), eager float32 %.2e" %
          (name, args.inputs, res["torchtpu"], res["libtorch"], res["ratio"], res["eager"]))
    if args.json:
        print(json.dumps(res))


if __name__ == "__main__":
    main()
