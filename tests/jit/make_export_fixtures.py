#!/usr/bin/env python3
"""Writes the small torch.export fixtures of tests/jit/test_export.cpp into tests/data/export/.

Run with torch 2.x (CI has none: the outputs are committed):

    .venv-torch2/bin/python tests/jit/make_export_fixtures.py

For each model NAME: NAME.pt2 (torch.export.save of the default IR), NAME.input.npy (float32)
and NAME.expected<k>.npy (output k of the eager model in float64, on the float32 input and
weights: the exact answer a float32 run approximates). Weights come from fixed seeds.
"""

import os

import numpy as np
import torch
import torch.nn as nn

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "export")


class Mlp(nn.Module):
    """linear + relu, a split whose halves are added, unflatten, and a keepdim mean: two outputs."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 6)

    def forward(self, x):
        y = torch.relu(self.fc(x))
        a, b = y.split([3, 3], dim=1)
        s = a + b
        return s.unflatten(1, (3, 1)), y.mean(dim=[1], keepdim=True)


class ConvNet(nn.Module):
    """conv + batch norm (running statistics) + relu + max pool + global average pool + linear."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4, 5)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        y = nn.functional.max_pool2d(y, 2)
        y = nn.functional.adaptive_avg_pool2d(y, 1).flatten(1)
        return self.fc(y)


class Unsupported(nn.Module):
    """two aten::erfinv nodes (an op the registry lacks) and a softmax in float64 (an argument
    torchtpu refuses): load_exported must list both before anything runs."""

    def forward(self, x):
        return torch.softmax(x.erfinv().erfinv(), dim=-1, dtype=torch.float64)


def write(name, model, x, run=True):
    model.eval()
    with torch.no_grad():
        ep = torch.export.export(model, (x,))
        torch.export.save(ep, os.path.join(OUT, name + ".pt2"))
        if not run:
            return
        outs = model.double()(x.double())
    np.save(os.path.join(OUT, name + ".input.npy"), x.numpy())
    for k, o in enumerate(outs if isinstance(outs, tuple) else (outs,)):
        np.save(os.path.join(OUT, "%s.expected%d.npy" % (name, k)), o.numpy())


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(0)
    write("mlp", Mlp(), torch.randn(2, 4))
    torch.manual_seed(1)
    net = ConvNet()
    with torch.no_grad():
        net.bn.weight.uniform_(0.5, 1.5)
        net.bn.bias.normal_(0.0, 0.2)
        net.bn.running_mean.normal_(0.0, 0.3)
        net.bn.running_var.uniform_(0.5, 1.5)
    write("conv_bn", net, torch.randn(1, 3, 8, 8))
    write("unsupported", Unsupported(), torch.rand(2, 3) - 0.5, run=False)


if __name__ == "__main__":
    main()
