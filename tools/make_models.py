#!/usr/bin/python3
"""Train three small digit classifiers and export them as traced + frozen TorchScript.

Run with Debian's interpreter (it has python3-torch, python3-sklearn and numpy):

    /usr/bin/python3 tools/make_models.py [--out data]

Everything is deterministic: a fixed split seed, torch.manual_seed per model and one
thread. Outputs (all small, committed; see data/README.md):

    data/digits_test.csv              held-out split: p0..p63 (0..16), label
    data/digits_test_x.npy            the same inputs as the models take them: float32 [N, 64] = pixels / 16
    data/digits_test_y.npy            labels, int64 [N]
    data/models/{mlp,cnn,transformer}.pt          traced + frozen TorchScript
    data/reference/{model}_logits.npy libtorch's logits of the frozen model, float32 [N, 10]
    data/reference/{model}_pred.npy   argmax of those logits, int64 [N]
    data/models/summary.json          accuracies, margins, node kinds (machine-readable)
    data/ops_inventory.md             node kinds with counts in each frozen graph

Every model takes one float32 input of shape [batch, 64] (pixels / 16.0, row-major
8x8 image) and returns logits [batch, 10]; the reshape to an image or to tokens happens
inside the model with constant shapes, so any batch size works.
"""

import argparse
import collections
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

SPLIT_SEED = 0        # random_state of train_test_split
TEST_SIZE = 360       # held-out samples (about 20 % of 1,797), stratified by label
TRAIN_SEED = 1234     # torch.manual_seed before building and training each model
PIXEL_SCALE = 16.0    # preprocessing: x = pixel / 16.0 (pixels are integers 0..16)


# ---------------------------------------------------------------------------------------
# Models. Each takes [batch, 64] floats and returns [batch, 10] logits.
# ---------------------------------------------------------------------------------------

class MLP(nn.Module):
    """64 -> 128 (ReLU) -> 64 (GELU) -> 10."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 128)
        self.fc2 = nn.Linear(128, 64)
        self.fc3 = nn.Linear(64, 10)
        self.drop = nn.Dropout(0.1)  # removed by freezing (eval mode)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = self.drop(x)
        x = F.gelu(self.fc2(x))
        return self.fc3(x)


class CNN(nn.Module):
    """Image 1x8x8: conv-BN-ReLU, conv-BN-Hardswish, maxpool 2, depthwise conv-BN-SiLU,
    pointwise conv-BN-ReLU, adaptive average pool to 1x1, flatten, linear."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(32)
        self.pool = nn.MaxPool2d(2)                                        # 8x8 -> 4x4
        self.dw = nn.Conv2d(32, 32, 3, padding=1, groups=32, bias=False)   # depthwise
        self.bn3 = nn.BatchNorm2d(32)
        self.pw = nn.Conv2d(32, 64, 1, bias=False)                         # pointwise
        self.bn4 = nn.BatchNorm2d(64)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        x = x.reshape(-1, 1, 8, 8)
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.hardswish(self.bn2(self.conv2(x)))
        x = self.pool(x)
        x = F.silu(self.bn3(self.dw(x)))
        x = F.relu(self.bn4(self.pw(x)))
        x = torch.flatten(self.gap(x), 1)
        return self.fc(x)


class EncoderLayer(nn.Module):
    """Post-norm transformer encoder layer (the layout of nn.TransformerEncoderLayer with
    batch_first=True, norm_first=False, activation=gelu), with the attention written out
    so the traced graph holds ordinary aten ops instead of torch 1.13's fused
    `_transformer_encoder_layer_fwd` fast path. Shapes are constants except the batch
    axis (-1), so no size arithmetic is traced."""

    def __init__(self, tokens, dim, heads, ffn):
        super().__init__()
        assert dim % heads == 0
        self.tokens, self.dim, self.heads = tokens, dim, heads
        self.head_dim = dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm1 = nn.LayerNorm(dim)
        self.ff1 = nn.Linear(dim, ffn)
        self.ff2 = nn.Linear(ffn, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.drop = nn.Dropout(0.1)  # removed by freezing (eval mode)

    def attention(self, x):
        t, h, d = self.tokens, self.heads, self.head_dim
        q, k, v = self.qkv(x).chunk(3, dim=-1)                     # [b, t, dim] each
        q = q.reshape(-1, t, h, d).transpose(1, 2)                 # [b, h, t, d]
        k = k.reshape(-1, t, h, d).transpose(1, 2)
        v = v.reshape(-1, t, h, d).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(d))  # [b, h, t, t]
        weights = torch.softmax(scores, dim=-1)
        out = torch.matmul(weights, v)                             # [b, h, t, d]
        out = out.transpose(1, 2).reshape(-1, t, self.dim)         # [b, t, dim]
        return self.proj(out)

    def forward(self, x):
        x = self.norm1(x + self.drop(self.attention(x)))
        x = self.norm2(x + self.drop(self.ff2(F.gelu(self.ff1(x)))))
        return x


class Transformer(nn.Module):
    """The 8 image rows are 8 tokens of 8 features: linear embedding + learned positional
    embedding, two encoder layers, final layer norm, mean over tokens, linear head."""

    def __init__(self, dim=32, heads=4, ffn=64, layers=2):
        super().__init__()
        self.embed = nn.Linear(8, dim)
        self.pos = nn.Parameter(torch.randn(1, 8, dim) * 0.02)
        self.layers = nn.ModuleList(EncoderLayer(8, dim, heads, ffn) for _ in range(layers))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, 10)

    def forward(self, x):
        x = self.embed(x.reshape(-1, 8, 8)) + self.pos            # [b, 8 tokens, dim]
        for layer in self.layers:
            x = layer(x)
        x = self.norm(x).mean(dim=1)                               # [b, dim]
        return self.head(x)


# name -> (constructor, epochs, learning rate, weight decay)
MODELS = {
    "mlp": (MLP, 60, 3e-3, 1e-4),
    "cnn": (CNN, 40, 3e-3, 1e-4),
    "transformer": (Transformer, 80, 2e-3, 1e-4),
}


# ---------------------------------------------------------------------------------------
# Data, training, export
# ---------------------------------------------------------------------------------------

def load_split():
    digits = load_digits()
    x, y = digits.data, digits.target                    # float64 [1797, 64] in 0..16, int
    x_tr, x_te, y_tr, y_te = train_test_split(
        x, y, test_size=TEST_SIZE, stratify=y, random_state=SPLIT_SEED)
    return x_tr, x_te, y_tr, y_te


def preprocess(pixels):
    """The only preprocessing: divide the 0..16 pixel counts by 16, as float32."""
    return torch.from_numpy((np.asarray(pixels, dtype=np.float64) / PIXEL_SCALE).astype(np.float32))


def train(name, x_tr, y_tr):
    ctor, epochs, lr, wd = MODELS[name]
    torch.manual_seed(TRAIN_SEED)
    model = ctor()
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=wd)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    gen = torch.Generator().manual_seed(TRAIN_SEED)
    n, batch = x_tr.shape[0], 64
    model.train()
    for _ in range(epochs):
        order = torch.randperm(n, generator=gen)
        for i in range(0, n, batch):
            idx = order[i:i + batch]
            loss = F.cross_entropy(model(x_tr[idx]), y_tr[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        sched.step()
    model.eval()
    return model


def node_kinds(graph):
    """Counter of node kinds, recursing into sub-blocks."""
    counts = collections.Counter()

    def walk(block):
        for node in block.nodes():
            counts[node.kind()] += 1
            for sub in node.blocks():
                walk(sub)

    walk(graph)
    return counts


def render_value(v):
    """Short text for one node input: constants by value, tensors by shape."""
    node = v.node()
    if node.kind() == "prim::Constant":
        if v.type().kind() == "TensorType":
            t = node.t("value")
            return "CT" + str(list(t.shape))
        if v.type().kind() == "NoneType":
            return "None"
        try:
            return repr(node.output().toIValue())
        except Exception:  # pragma: no cover - unusual constant types
            return "<const %s>" % v.type()
    if node.kind() == "prim::ListConstruct":
        return "[" + ", ".join(render_value(i) for i in node.inputs()) + "]"
    if v.type().kind() == "TensorType":
        return "T"
    return "<%s:%s>" % (v.type(), node.kind())


def node_signatures(graph):
    """kind -> ordered unique list of rendered argument lists (skips prim::Constant)."""
    sigs = collections.OrderedDict()
    for node in graph.nodes():
        if node.kind() == "prim::Constant":
            continue
        s = "(" + ", ".join(render_value(i) for i in node.inputs()) + ")"
        lst = sigs.setdefault(node.kind(), [])
        if s not in lst:
            lst.append(s)
    return sigs


def export(model, example, path):
    with torch.no_grad():
        traced = torch.jit.trace(model, example)
        frozen = torch.jit.freeze(traced)
    frozen.save(path)
    return torch.jit.load(path)  # what a consumer sees


def write_csv(path, x, y):
    with open(path, "w") as f:
        f.write(",".join("p%d" % i for i in range(64)) + ",label\n")
        for row, label in zip(x, y):
            f.write(",".join("%.1f" % v for v in row) + ",%d\n" % int(label))


NOTES = """## What the arguments mean (torch 1.13 schemas)

- `aten::linear(input, weight[out, in], bias[out])`: `input @ weight.T + bias` over the
  last axis; input may be 2-D `[b, in]` or 3-D `[b, t, in]`.
- `aten::_convolution(input, weight[out, in/groups, kh, kw], bias, stride, padding,
  dilation, transposed, output_padding, groups, benchmark, deterministic, cudnn_enabled,
  allow_tf32)`: 13 arguments; the last four are backend hints to ignore. Here: 3x3
  padding 1 stride 1, one depthwise 3x3 (`groups` = 32 = channels) and one 1x1. The
  BatchNorms are already folded into these weights and biases (freezing did it).
- `aten::max_pool2d(input, kernel, stride, padding, dilation, ceil_mode)`;
  `aten::adaptive_avg_pool2d(input, output_size)` (here `[1, 1]`, a mean over H and W);
  `aten::flatten(input, start_dim, end_dim)` (here 1, -1).
- `aten::reshape(input, shape)`: `shape` is a constant list with `-1` for the batch axis.
- `aten::add(self, other, alpha)`: `self + alpha * other`, broadcasting; alpha is 1 here.
  `other` is a run-time tensor (residual) or a constant `[1, 8, 32]` (positional embedding).
- `aten::mul(self, other)`: `other` is a 0-dim float tensor constant (1/sqrt(8)), a
  "wrapped number" that must not change the result dtype.
- `aten::chunk(input, chunks, dim)` returns a `Tensor[]` that `prim::ListUnpack` splits
  into 3 outputs (q, k, v); each chunk is a view of the last axis.
- `aten::transpose(input, dim0, dim1)` (negative dims count from the end) feeds
  `aten::matmul` (4-D batched: `[b, h, t, d] @ [b, h, d, t]`) and `aten::reshape`
  (which must copy when its input is a non-contiguous transpose).
- `aten::softmax(input, dim, dtype)`: dtype is None (keep float32).
- `aten::layer_norm(input, normalized_shape, weight, bias, eps, cudnn_enable)`: over the
  last axis (`[32]`), eps 1e-5; ignore `cudnn_enable`.
- `aten::gelu(input, approximate)`: `'none'` = the exact erf form.
- `aten::mean(input, dims, keepdim, dtype)`: here over the token axis `[1]`, keepdim
  False, dtype None.
- `aten::relu`, `aten::hardswish` (`x * relu6(x + 3) / 6`), `aten::silu` (`x * sigmoid(x)`):
  out of place.
- `prim::Constant` holds ints, floats, bools, strings, None, int lists and the frozen
  weights (tensors); `prim::ListConstruct` builds the int lists.

"""


def write_inventory(path, results):
    names = list(results)
    lines = []
    lines.append("# Node kinds in the frozen digits models\n")
    lines.append("Generated by `tools/make_models.py` (torch %s): `torch.jit.trace` in eval mode "
                 "under `torch.no_grad()`, `torch.jit.freeze`, save, reload, then every node of "
                 "`graph` counted, recursing into sub-blocks (there are none). Counts include "
                 "`prim::` nodes. Every model takes one float32 input `[batch, 64]` and returns "
                 "`[batch, 10]`.\n" % torch.__version__)
    all_kinds = sorted(set().union(*(set(r["kinds"]) for r in results.values())),
                       key=lambda k: (k.startswith("prim::"), k))
    lines.append("## Counts\n")
    lines.append("| node kind | " + " | ".join(names) + " |")
    lines.append("|---|" + "---:|" * len(names))
    for k in all_kinds:
        lines.append("| `%s` | " % k + " | ".join(str(results[n]["kinds"].get(k, "")) for n in names) + " |")
    lines.append("| **total nodes** | " + " | ".join(str(sum(results[n]["kinds"].values())) for n in names) + " |")
    lines.append("")
    lines.append("Union of kinds, %d in all: %s.\n" % (len(all_kinds), ", ".join("`%s`" % k for k in all_kinds)))
    lines.append(NOTES)
    lines.append("## Argument forms\n")
    lines.append("Each distinct argument list per kind (`prim::Constant` omitted). `T` = run-time "
                 "tensor, `CT[shape]` = tensor constant (a frozen weight), `[...]` = a "
                 "`prim::ListConstruct`, other constants by value, `<type:producer>` = a run-time "
                 "non-tensor value.\n")
    for n in names:
        lines.append("### %s\n" % n)
        lines.append("```")
        for k, sigs in results[n]["signatures"].items():
            for s in sigs:
                lines.append("%s%s" % (k, s))
        lines.append("```\n")
    lines.append("## Frozen graphs\n")
    for n in names:
        lines.append("### %s\n" % n)
        lines.append("```")
        lines.append(results[n]["graph"].rstrip())
        lines.append("```\n")
    with open(path, "w") as f:
        f.write("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data"),
                    help="output directory (default: data/ next to tools/)")
    args = ap.parse_args()
    out = os.path.normpath(args.out)
    os.makedirs(os.path.join(out, "models"), exist_ok=True)
    os.makedirs(os.path.join(out, "reference"), exist_ok=True)

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)

    x_tr_px, x_te_px, y_tr_np, y_te_np = load_split()
    x_tr, x_te = preprocess(x_tr_px), preprocess(x_te_px)
    y_tr, y_te = torch.from_numpy(y_tr_np.astype(np.int64)), torch.from_numpy(y_te_np.astype(np.int64))
    print("digits: %d train, %d test (split seed %d)" % (len(y_tr), len(y_te), SPLIT_SEED))

    write_csv(os.path.join(out, "digits_test.csv"), x_te_px, y_te_np)
    np.save(os.path.join(out, "digits_test_x.npy"), x_te.numpy())
    np.save(os.path.join(out, "digits_test_y.npy"), y_te.numpy())

    results = collections.OrderedDict()
    for name in MODELS:
        t0 = time.time()
        model = train(name, x_tr, y_tr)
        t_train = time.time() - t0
        with torch.no_grad():
            eager = model(x_te)
        path = os.path.join(out, "models", name + ".pt")
        frozen = export(model, x_te[:8], path)
        with torch.no_grad():
            logits = frozen(x_te)
            logits_b1 = torch.cat([frozen(x_te[i:i + 1]) for i in range(len(x_te))])
        pred = logits.argmax(dim=1)
        acc = (pred == y_te).float().mean().item()
        eager_acc = (eager.argmax(dim=1) == y_te).float().mean().item()
        top2 = logits.topk(2, dim=1).values
        margin = (top2[:, 0] - top2[:, 1]).min().item()
        max_diff = (logits - eager).abs().max().item()
        b1_diff = (logits - logits_b1).abs().max().item()
        np.save(os.path.join(out, "reference", name + "_logits.npy"), logits.numpy().astype(np.float32))
        np.save(os.path.join(out, "reference", name + "_pred.npy"), pred.numpy().astype(np.int64))
        kinds = node_kinds(frozen.graph)
        results[name] = {
            "test_accuracy": acc,
            "eager_test_accuracy": eager_acc,
            "correct": int((pred == y_te).sum().item()),
            "test_samples": len(y_te),
            "min_top2_margin": margin,
            "max_abs_diff_frozen_vs_eager": max_diff,
            "max_abs_diff_batch1_vs_batch": b1_diff,
            "parameters": sum(p.numel() for p in model.parameters()),
            "file_bytes": os.path.getsize(path),
            "kinds": dict(sorted(kinds.items())),
            "signatures": node_signatures(frozen.graph),
            "graph": str(frozen.graph),
        }
        print("%-12s test acc %.4f (%d/%d)  train %.1fs  params %d  min top-2 margin %.4f  "
              "|frozen-eager| %.2e  |b1-batch| %.2e" % (
                  name, acc, results[name]["correct"], len(y_te), t_train, results[name]["parameters"],
                  margin, max_diff, b1_diff))
        print("  frozen node kinds:", dict(sorted(kinds.items())))
        if acc <= 0.9:
            print("WARNING: %s test accuracy %.4f is not above 0.90" % (name, acc), file=sys.stderr)

    summary = {
        "torch": torch.__version__,
        "split_seed": SPLIT_SEED, "train_seed": TRAIN_SEED, "test_size": TEST_SIZE,
        "train_size": len(y_tr), "preprocessing": "x = pixel / 16.0 (float32), shape [batch, 64]",
        "models": {n: {k: v for k, v in r.items() if k not in ("graph", "signatures")}
                   for n, r in results.items()},
    }
    with open(os.path.join(out, "models", "summary.json"), "w") as f:
        json.dump(summary, f, indent=1, sort_keys=False)
        f.write("\n")
    write_inventory(os.path.join(out, "ops_inventory.md"), results)
    print("wrote", out)


if __name__ == "__main__":
    main()
