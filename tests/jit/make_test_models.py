#!/usr/bin/python3
"""Writes the tiny TorchScript files the jit tests load (tests/jit/models/), with
Debian's torch 1.13 (/usr/bin/python3 tests/jit/make_test_models.py):

  unsupported.pt   traced + frozen; uses aten::i0 twice and aten::erfinv once, which the
                   registry lacks (the test expects both kinds, with counts, in the error)
  control_flow.pt  scripted + frozen; keeps a data-dependent prim::If
  not_frozen.pt    traced, NOT frozen: Linear(4, 3) + ReLU; the loader must freeze it.
                   not_frozen.input.npy / not_frozen.output.npy hold an input and libtorch's output.
"""
import os
import numpy as np
import torch

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models")
os.makedirs(out, exist_ok=True)
torch.manual_seed(0)


class Unsupported(torch.nn.Module):
    def forward(self, x):
        return torch.i0(torch.erfinv(torch.i0(x) * 0.01)) + 1.0


class ControlFlow(torch.nn.Module):
    def forward(self, x):
        if bool(x.sum() > 0):
            return x * 2.0
        return x - 1.0


class Small(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x):
        return torch.relu(self.fc(x))


x = torch.randn(2, 4)
with torch.no_grad():
    m = torch.jit.freeze(torch.jit.trace(Unsupported().eval(), x))
    m.save(os.path.join(out, "unsupported.pt"))
    s = torch.jit.freeze(torch.jit.script(ControlFlow().eval()))
    s.save(os.path.join(out, "control_flow.pt"))
    small = Small().eval()
    t = torch.jit.trace(small, x)
    t.save(os.path.join(out, "not_frozen.pt"))
    np.save(os.path.join(out, "not_frozen.input.npy"), x.numpy().astype(np.float32))
    np.save(os.path.join(out, "not_frozen.output.npy"), small(x).numpy().astype(np.float32))
print("wrote", sorted(os.listdir(out)))
