#!/usr/bin/python3
"""Writes the jit tests' generated fixtures into OUTDIR (run by Meson into the build dir, with
Debian's torch 1.13: /usr/bin/python3 tests/jit/make_fixtures.py OUTDIR). Nothing here is
committed.

  gelu_tanh.pt            traced + frozen Linear(8, 16) -> gelu(approximate='tanh') -> Linear(16, 4)
                          -> gelu(approximate='tanh'); gelu_tanh.{input,output}.npy hold an
                          input and torch's output
  dropout_train.pt        Linear -> Dropout(0.5) -> Linear traced in training mode (dropout
                          active: aten::dropout(train=True)), then .eval() and frozen
  feature_dropout_train.pt  the same with Dropout2d (aten::feature_dropout) after a Conv2d
  dropout_p0_train.pt     Dropout(0.0) traced in training mode (as Swin keeps it): exact, loads;
                          dropout_p0_train.{input,output}.npy
  softmax_f64.pt          softmax(x, -1, dtype=torch.float64).float(): a dtype argument
  state_dict.pt           torch.save(model.state_dict())
  pickled_module.pt       torch.save(model) (a pickled nn.Module)
  saved_tensor.pt         torch.save(tensor)
  legacy_pickle.pt        torch.save(model.state_dict(), _use_new_zipfile_serialization=False)
  other.zip               a zip archive that is not from torch (zipfile)
  flipped.pt              gelu_tanh.pt with one byte of its deflated code flipped (libtorch's error
                          is a torch::jit::ErrorReport, whose message starts with a newline)
  bad_code.pt             gelu_tanh.pt rewritten with its code calling torch.gelx
  weights_flipped.pt      gelu_tanh.pt with one bit of a weight flipped (libtorch loads it)
  cd_flipped.pt           gelu_tanh.pt with its last central-directory file name garbled
  not_zip.bin             plain text
  adv_index.pt            traced + frozen AdvIndex (x[idx], x[rows, cols], index_put_, x[mask] = v
                          with constant indices); adv_index.{input,output}.npy
  adv_mask.pt             traced + frozen AdvMask (a bool mask input: x[mask], index_put_ through a
                          view, nonzero, masked_select); adv_mask.mask.npy (the input is
                          adv_index.input.npy), adv_mask.output{0..4}.npy
  adv_data.pt             x[constant mask]: refused by the whole-graph compile
"""
import io
import os
import sys
import zipfile

import numpy as np
import torch

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
torch.manual_seed(0)


class GeluTanh(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(8, 16)
        self.b = torch.nn.Linear(16, 4)

    def forward(self, x):
        return torch.nn.functional.gelu(self.b(torch.nn.functional.gelu(self.a(x), approximate="tanh")),
                                        approximate="tanh")


class DropoutNet(torch.nn.Module):
    def __init__(self, p):
        super().__init__()
        self.a = torch.nn.Linear(8, 16)
        self.d = torch.nn.Dropout(p)
        self.b = torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.b(self.d(torch.relu(self.a(x))))


class FeatureDropoutNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c = torch.nn.Conv2d(3, 4, 3)
        self.d = torch.nn.Dropout2d(0.25)

    def forward(self, x):
        return self.d(self.c(x))


class SoftmaxF64(torch.nn.Module):
    def forward(self, x):
        return torch.softmax(x * 3.0, -1, dtype=torch.float64).float()


class IntIds(torch.nn.Module):
    """int64 ids, a bool mask and an int64 buffer: values of three dtypes through cat, stack,
    reshape and aten::to (model graphs carry every dtype, issue 13 step 2)."""
    def __init__(self):
        super().__init__()
        self.register_buffer("offs", torch.tensor([[1, 2, 3], [4, 5, 6]], dtype=torch.int64))
        self.lin = torch.nn.Linear(12, 3)

    def forward(self, ids, mask):
        x = torch.cat([ids, self.offs], 1)                    # [2, 6] int64
        x = torch.stack([x, x.transpose(0, 1).transpose(0, 1) * 1], 2).reshape(2, 12)
        f = x.to(torch.float32) * mask.to(torch.float32)      # [2, 12] float32
        return self.lin(f)


class AdvIndex(torch.nn.Module):
    """Advanced indexing with constant indices (frozen into Tensor?[] constants): x[idx] with a
    repeated index, x[rows, cols] (broadcast, a negative index), x[idx] = v, index_put_ with
    accumulate, x[row_mask] = 0.5; every op has a lowering, so it also compiles whole."""
    def __init__(self):
        super().__init__()
        self.register_buffer("idx", torch.tensor([2, 0, 2]))
        self.register_buffer("rows", torch.tensor([[1], [3]]))
        self.register_buffer("cols", torch.tensor([0, -1]))
        self.register_buffer("m", torch.tensor([True, False, True, True, False]))

    def forward(self, x):
        a = x[self.idx]
        c = x[self.rows, self.cols]
        y = x.clone()
        y[self.idx] = a * 2.0
        y.index_put_((self.idx,), torch.ones(3, 4), accumulate=True)
        y[self.m] = 0.5
        return torch.cat([a.flatten(), c.flatten(), y.flatten()])


class AdvMask(torch.nn.Module):
    """A bool mask input: x[mask], y[mask] = 0, y[:, cols] = 5 (index_put_ through the full
    slice of y that `:` traces to), x[:, cols], nonzero, masked_select (cpu only)."""
    def __init__(self):
        super().__init__()
        self.register_buffer("cols", torch.tensor([3, 1]))

    def forward(self, x, mask):
        y = x.clone()
        y[mask] = 0.0
        y[:, self.cols] = 5.0
        return x[mask], y, x[:, self.cols], torch.nonzero(mask), torch.masked_select(x, mask)


class AdvData(torch.nn.Module):
    """x[m] with a constant bool mask: the result's shape depends on the mask's data."""
    def __init__(self):
        super().__init__()
        self.register_buffer("m", torch.tensor([[True, False, True, False]] * 5))

    def forward(self, x):
        return x[self.m] * 2.0


class EmbedIds(torch.nn.Module):
    """Token ids (int64) through nn.Embedding, a mean over the sequence and a linear head: the
    shape of a bag-of-embeddings text classifier."""
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(10, 4)
        self.head = torch.nn.Linear(4, 3)

    def forward(self, ids):
        return self.head(self.emb(ids).mean(1))


def save_io(name, model, x):
    np.save(os.path.join(out, name + ".input.npy"), x.numpy().astype(np.float32))
    np.save(os.path.join(out, name + ".output.npy"), model(x).detach().numpy().astype(np.float32))


x = torch.randn(5, 8) * 2.0
with torch.no_grad():
    g = GeluTanh().eval()
    torch.jit.freeze(torch.jit.trace(g, x)).save(os.path.join(out, "gelu_tanh.pt"))
    save_io("gelu_tanh", g, x)

    d = DropoutNet(0.5).train()
    t = torch.jit.trace(d, x, check_trace=False)  # random in training mode: the check would fail
    torch.jit.freeze(t.eval()).save(os.path.join(out, "dropout_train.pt"))

    f = FeatureDropoutNet().train()
    t = torch.jit.trace(f, torch.randn(1, 3, 6, 6), check_trace=False)
    torch.jit.freeze(t.eval()).save(os.path.join(out, "feature_dropout_train.pt"))

    z = DropoutNet(0.0).train()
    t = torch.jit.trace(z, x)
    torch.jit.freeze(t.eval()).save(os.path.join(out, "dropout_p0_train.pt"))
    save_io("dropout_p0_train", z.eval(), x)

    s = SoftmaxF64().eval()
    torch.jit.freeze(torch.jit.trace(s, x)).save(os.path.join(out, "softmax_f64.pt"))

    ids = torch.tensor([[7, -3, 2], [0, 11, 5]], dtype=torch.int64)
    mask = torch.tensor([[1, 0, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1], [0, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1]], dtype=torch.bool)
    torch.manual_seed(13)
    ii = IntIds().eval()
    torch.jit.freeze(torch.jit.trace(ii, (ids, mask))).save(os.path.join(out, "int_ids.pt"))
    np.save(os.path.join(out, "int_ids.ids.npy"), ids.numpy())
    np.save(os.path.join(out, "int_ids.mask.npy"), mask.numpy())
    np.save(os.path.join(out, "int_ids.output.npy"), ii(ids, mask).numpy().astype(np.float32))

    torch.manual_seed(14)
    em = EmbedIds().eval()
    eids = torch.tensor([[1, 9, 9, 0, 4], [3, 3, 2, 7, 5]], dtype=torch.int64)
    torch.jit.freeze(torch.jit.trace(em, eids)).save(os.path.join(out, "embed_ids.pt"))
    np.save(os.path.join(out, "embed_ids.ids.npy"), eids.numpy())
    np.save(os.path.join(out, "embed_ids.output.npy"), em(eids).numpy().astype(np.float32))

with torch.no_grad():
    torch.manual_seed(15)
    xa = torch.randn(5, 4)
    ai = AdvIndex().eval()
    torch.jit.freeze(torch.jit.trace(ai, xa)).save(os.path.join(out, "adv_index.pt"))
    np.save(os.path.join(out, "adv_index.input.npy"), xa.numpy())
    np.save(os.path.join(out, "adv_index.output.npy"), ai(xa).numpy())
    am = AdvMask().eval()
    ma = xa > 0
    torch.jit.freeze(torch.jit.trace(am, (xa, ma))).save(os.path.join(out, "adv_mask.pt"))
    np.save(os.path.join(out, "adv_mask.mask.npy"), ma.numpy())
    for k, r in enumerate(am(xa, ma)):
        np.save(os.path.join(out, "adv_mask.output%d.npy" % k), r.contiguous().numpy())  # nonzero's is column-major
    torch.jit.freeze(torch.jit.trace(AdvData().eval(), xa)).save(os.path.join(out, "adv_data.pt"))

torch.save(g.state_dict(), os.path.join(out, "state_dict.pt"))
torch.save(g, os.path.join(out, "pickled_module.pt"))
torch.save(torch.arange(6.0), os.path.join(out, "saved_tensor.pt"))
torch.save(g.state_dict(), os.path.join(out, "legacy_pickle.pt"), _use_new_zipfile_serialization=False)
with zipfile.ZipFile(os.path.join(out, "other.zip"), "w") as z:
    z.writestr("readme.txt", "not a model\n")
    z.writestr("weights/w0.bin", b"\0" * 16)


# Damaged copies of gelu_tanh.pt, as a bad download or disk would leave them (CRCs not fixed up).
raw = open(os.path.join(out, "gelu_tanh.pt"), "rb").read()


def data_range(name):
    with zipfile.ZipFile(os.path.join(out, "gelu_tanh.pt")) as z:
        e = z.getinfo(name)
    hdr = raw[e.header_offset:e.header_offset + 30]
    start = e.header_offset + 30 + int.from_bytes(hdr[26:28], "little") + int.from_bytes(hdr[28:30], "little")
    return start, start + e.compress_size


# One byte of the (deflated) code flipped, chosen so that libtorch's error is a
# torch::jit::ErrorReport, whose message starts with a newline (it once came out as "(libtorch: )").
code = [n for n in zipfile.ZipFile(os.path.join(out, "gelu_tanh.pt")).namelist() if n.endswith(".py")][0]
lo, hi = data_range(code)
probe = os.path.join(out, "probe.pt")
for k in range(lo, hi):
    b = bytearray(raw)
    b[k] ^= 0xFF
    open(probe, "wb").write(bytes(b))
    try:
        torch.jit.load(probe)
    except Exception as e:  # noqa: BLE001 (any libtorch error)
        if str(e).startswith("\n"):
            os.replace(probe, os.path.join(out, "flipped.pt"))
            break
else:
    sys.exit("no byte flip in %s gives an ErrorReport" % code)
if os.path.exists(probe):
    os.remove(probe)
# The code changed from gelu to gelx and the archive rewritten (CRCs consistent): libtorch's
# ErrorReport names the unknown op.
with zipfile.ZipFile(os.path.join(out, "gelu_tanh.pt")) as src, \
        zipfile.ZipFile(os.path.join(out, "bad_code.pt"), "w", zipfile.ZIP_STORED) as dst:
    for e in src.infolist():
        d = src.read(e.filename)
        if e.filename == code:
            d = d.replace(b"torch.gelu(_0", b"torch.gelx(_0", 1)
        dst.writestr(e.filename, d)
start, _ = data_range("gelu_tanh/constants/0")  # one bit of a weight: libtorch loads it
weights = bytearray(raw)
weights[start + 17] ^= 0x40
open(os.path.join(out, "weights_flipped.pt"), "wb").write(bytes(weights))
cd = bytearray(raw)  # the central directory's last file name: libtorch misses the version record
last = cd.rfind(b"PK\x01\x02")
for k in range(last + 46, last + 52):
    cd[k] ^= 0xFF
open(os.path.join(out, "cd_flipped.pt"), "wb").write(bytes(cd))
open(os.path.join(out, "not_zip.bin"), "w").write("this is not a zip archive, nor TorchScript\n")
print("wrote", sorted(os.listdir(out)))
