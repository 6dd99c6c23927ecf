#!/usr/bin/python3
"""Generates the op-conformance sweep's cases (docs/ops.md, "Conformance sweep").

Usage: /usr/bin/python3 tests/conformance/make_cases.py OUTDIR [--list-errors]

For every op in SPECS (keyed by aten name and overload) it draws cases: operands of every
dtype, size-0 and size-1 dims, broadcasting where the op broadcasts, non-contiguous operands,
each value of each argument variant, and calls that torch rejects. It runs each case through
torch (`torch.ops.aten.<name>.<overload>` with positional arguments in schema order, the order
`ops::call_by_name` takes) and writes into OUTDIR:

  manifest.txt   one case per line (format below)
  cases/*.npy    operands and torch's results

Manifest line (space-separated tokens; lines starting with '#' are comments):

  ID ATEN OVERLOAD dev=D tol=RTOL,ATOL args=N ARG_1 ... ARG_N -> RESULT

  D        1: run on the PJRT device too; 0: cpu only
  RTOL,ATOL  |got - want| <= ATOL + RTOL*|want| (floating results); 0,0 means exact
           (bit for bit, -0.0 and NaN included) and is the rule for integer/bool results
  ARG      none | b:0 | b:1 | i:INT | f:FLOAT | s:STR | il:INT,INT,... | fl:FLOAT,...
           | t:TENSOR | tl:TENSOR;TENSOR;...   (il:, fl:, tl: alone are empty lists)
  TENSOR   FILE:DTYPE:VIEW, FILE relative to the manifest; VIEW is
             -  the array as stored
             t  stored transposed: the operand is the stored array with its last two dims
                transposed (a non-contiguous view)
             s  stored with the last dim doubled: the operand is every second element of it
                (slice step 2, a non-contiguous view)
           bfloat16 arrays are stored as float32 (NumPy has no bfloat16) holding bf16 values.
  RESULT   out:FILE:DTYPE | error:PYTHON_EXCEPTION_NAME
           error: torch raised, so the C++ side must throw a torchtpu::Error.

Adding an op = one Spec in SPECS: its aten name, overload, and a generator of cases
(`Case(args...)`, tensors as `g.t(shape, dtype)`); the torch result comes from
`torch.ops.aten` unless the spec gives `fn`.
"""
import argparse
import itertools
import os
import shutil
import sys
import warnings
import zlib

import numpy as np
import torch

DTYPES = {
    'bool': torch.bool, 'uint8': torch.uint8, 'int32': torch.int32, 'int64': torch.int64,
    'float16': torch.float16, 'bfloat16': torch.bfloat16, 'float32': torch.float32, 'float64': torch.float64,
}
DTYPE_NAME = {v: k for k, v in DTYPES.items()}
ALL = list(DTYPES)
FLOATING = ['float16', 'bfloat16', 'float32', 'float64']
INTEGRAL = ['uint8', 'int32', 'int64']
# Tolerances of ops that compute (specs with exact=False), per result dtype: a few ulps of
# each format (results of sums whose order may differ from torch's).
FLOAT_TOL = {'float16': (2e-3, 2e-3), 'bfloat16': (1.6e-2, 1.6e-2), 'float32': (1e-6, 1e-6), 'float64': (1e-12, 1e-12)}


class T:
    """A tensor operand: its logical values (a contiguous torch tensor) and how the C++ side
    views the stored array ('-', 't' or 's')."""

    def __init__(self, value, view='-'):
        self.value = value
        self.view = view
        if view == 't':
            assert value.dim() >= 2
        if view == 's':
            assert value.dim() >= 1

    def stored(self):
        """The array written to disk (as a torch tensor)."""
        v = self.value
        if self.view == 't':
            return v.transpose(-1, -2).contiguous()
        if self.view == 's':
            shape = list(v.shape)
            shape[-1] *= 2
            base = torch.zeros(shape, dtype=v.dtype)
            junk = torch.ones_like(v) if v.dtype == torch.bool else torch.full_like(v, 77)
            base[..., 0::2] = v
            base[..., 1::2] = junk
            return base
        return v

    def operand(self, stored):
        """What torch gets: the same view of the stored array as the C++ side makes."""
        if self.view == 't':
            return stored.transpose(-1, -2)
        if self.view == 's':
            return stored[..., 0::2]
        return stored


class Case:
    """One call: positional arguments in schema order (T, [T], None, bool, int, float, str,
    [int], [float]). `error`: the case is meant to make torch raise (checked); `data_error`:
    the error depends on tensor values (an index out of range), which a PJRT device cannot
    check before running; `cpu_only`: the result's shape depends on tensor values (one_hot
    without num_classes), which a compiled program cannot have. Both stay on the cpu."""

    def __init__(self, *args, error=False, data_error=False, cpu_only=False):
        self.args = list(args)
        self.error = error or data_error
        self.cpu_only = cpu_only or data_error


class Gen:
    """Random operands for one spec (seeded from the spec's name, so adding a spec leaves the
    others' cases unchanged)."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def values(self, shape, dtype, lo=None, hi=None, specials=True):
        n = int(np.prod(shape)) if shape else 1
        if dtype == 'bool':
            a = self.rng.integers(0, 2, n).astype(np.bool_)
            return torch.from_numpy(a).reshape(shape)
        if dtype in INTEGRAL:
            info = np.iinfo({'uint8': np.uint8, 'int32': np.int32, 'int64': np.int64}[dtype])
            lo_ = info.min if lo is None else lo
            hi_ = info.max if hi is None else hi
            a = self.rng.integers(lo_, hi_, n, endpoint=True, dtype=np.int64)
            return torch.from_numpy(a).to(DTYPES[dtype]).reshape(shape)
        lo_ = -4.0 if lo is None else lo
        hi_ = 4.0 if hi is None else hi
        a = self.rng.uniform(lo_, hi_, n)
        if specials and n >= 4:
            # NaN, infinities and -0.0 where the op only moves data: they must arrive unchanged
            for v in (np.nan, np.inf, -np.inf, -0.0):
                a[self.rng.integers(0, n)] = v
        return torch.from_numpy(a).to(DTYPES[dtype]).reshape(shape)

    def t(self, shape, dtype, view='-', **kw):
        """A tensor operand of `shape` and `dtype` (random values), viewed as `view`
        ('-', 't', 's', or '?' for a view chosen at random among those the rank allows)."""
        shape = tuple(shape)
        if view == '?':
            view = self.pick(['-', 's', 't'] if len(shape) >= 2 else ['-', 's'] if shape else ['-'])
        return T(self.values(shape, dtype, **kw), view)

    def index(self, shape, hi, view='-', dtype='int64', lo=None):
        """An index tensor (int64 unless `dtype` says otherwise) with values in [lo, hi] (lo: 0
        unless given)."""
        lo = 0 if lo is None else lo
        return T(torch.from_numpy(self.rng.integers(lo, hi, tuple(shape), endpoint=True)).to(DTYPES[dtype]), view)

    def perm_index(self, size, count, other, dim):
        """An int64 index of `count` distinct positions in [0, size) along `dim` for each
        position of the other dims (shape `other` with `count` at `dim`): scatter without
        duplicates (torch leaves the winner of a duplicate unspecified)."""
        shape = list(other)
        shape.insert(dim, count)
        out = np.zeros(shape, dtype=np.int64)
        moved = np.moveaxis(out, dim, -1)
        for pos in np.ndindex(*moved.shape[:-1]):
            moved[pos] = self.rng.permutation(size)[:count]
        return T(torch.from_numpy(np.ascontiguousarray(out)))

    def pick(self, xs):
        return xs[int(self.rng.integers(0, len(xs)))]

    def views(self, rank):
        return ['-', 's', 't'] if rank >= 2 else ['-', 's'] if rank == 1 else ['-']


def scalar_of(dtype, g, lo=-3, hi=3):
    """A Python scalar of the kind that suits `dtype` (bool, int or float)."""
    if dtype == 'bool':
        return bool(g.rng.integers(0, 2))
    if dtype in INTEGRAL:
        return int(g.rng.integers(max(lo, 0) if dtype == 'uint8' else lo, hi, endpoint=True))
    return float(g.rng.integers(-8, 8)) / 4 + 0.125


class Spec:
    """One op's cases. `aten`: 'aten::cat'; `overload`: torch's overload name ('default',
    'src', ...); `cases(g)`: the cases; `exact`: the op only moves data (results must match
    bit for bit) — otherwise FLOAT_TOL applies to floating results; `device`: how many
    non-error cases run on the PJRT device too (each compiles one program: about 30 ms on
    XLA's CPU plugin, so the sum over SPECS stays near 150)."""

    def __init__(self, aten, overload, cases, exact=True, device=8, fn=None):
        self.aten, self.overload, self.cases, self.exact, self.device = aten, overload, cases, exact, device
        name = aten.split('::')[1]
        self.fn = fn or getattr(getattr(torch.ops.aten, name), overload)
        self.key = f'{name}.{overload}'


# ---- cases per op ---------------------------------------------------------------------------

def cat_cases(g):
    for d in ALL:
        for shapes, dim in [([(2, 3), (4, 3)], 0), ([(2, 3), (2, 1), (2, 0)], 1), ([(2, 3), (2, 5)], -1),
                            ([(2, 0, 4), (2, 3, 4), (2, 1, 4)], 1), ([(1, 1, 1)] * 3, 2), ([(3, 2)], 0),
                            ([(5,), (0,), (3,)], 0), ([(0,), (2, 3)], 1), ([(0,), (0,)], 0), ([(0, 3), (0, 3)], 0),
                            ([(2, 3, 4), (2, 3, 4)], -3)]:
            yield Case([g.t(s, d, '?') for s in shapes], dim)
        # every view on every operand position
        for va, vb in itertools.product(['-', 's', 't'], repeat=2):
            yield Case([g.t((3, 4), d, va), g.t((2, 4), d, vb)], 0)
        # errors: dim out of range, sizes that differ, a 0-dim operand, ranks that differ
        yield Case([g.t((2, 3), d), g.t((2, 3), d)], 2, error=True)
        yield Case([g.t((2, 3), d), g.t((2, 3), d)], -3, error=True)
        yield Case([g.t((2, 3), d), g.t((3, 2), d)], 0, error=True)
        yield Case([g.t((), d), g.t((), d)], 0, error=True)
        yield Case([g.t((2, 3), d), g.t((3,), d)], 0, error=True)
    yield Case([], 0, error=True)  # an empty list
    # promotion: every ordered pair of distinct dtypes
    for a, b in itertools.permutations(ALL, 2):
        yield Case([g.t((2, 2), a), g.t((1, 2), b, '?')], 0)
    yield Case([g.t((2,), 'bool'), g.t((1,), 'uint8'), g.t((2,), 'float16')], 0)


def stack_cases(g):
    for d in ALL:
        for dim in range(-3, 3):
            yield Case([g.t((2, 3), d, '?'), g.t((2, 3), d, '?')], dim)
        for shapes, dim in [([(0, 3)] * 2, 1), ([(1, 1)] * 3, 0), ([(4,)], 0), ([()] * 3, 0), ([()], -1),
                            ([(2, 0)] * 2, -1), ([(0,)] * 4, 1), ([(3, 1, 2)] * 2, 3)]:
            yield Case([g.t(s, d, '?') for s in shapes], dim)
        for va, vb in itertools.product(['-', 's', 't'], repeat=2):
            yield Case([g.t((3, 4), d, va), g.t((3, 4), d, vb)], 1)
        yield Case([g.t((2, 3), d), g.t((2, 3), d)], 3, error=True)
        yield Case([g.t((2, 3), d), g.t((2, 3), d)], -4, error=True)
        yield Case([g.t((2, 3), d), g.t((3, 2), d)], 0, error=True)
        yield Case([g.t((2, 3), d), g.t((2, 1), d)], 0, error=True)
    yield Case([], 0, error=True)
    for a, b in itertools.permutations(ALL, 2):
        yield Case([g.t((2,), a), g.t((2,), b, '?')], 1)


def roll_cases(g):
    for d in ALL:
        for shape, shifts, dims in [((3, 4), [1], [0]), ((3, 4), [-1], [1]), ((3, 4), [5], [-1]),
                                    ((3, 4), [2, -3], [0, 1]), ((3, 4), [7], []), ((2, 3, 4), [1, 1], [0, 2]),
                                    ((0, 3), [1], [0]), ((1, 5), [-6], [1]), ((5,), [0], [0]), ((3, 4), [1, 2], [1, 1])]:
            yield Case(g.t(shape, d, '?'), shifts, dims)
        yield Case(g.t((2, 5), d, '?'), [3])  # dims omitted: roll of the flattened tensor
        yield Case(g.t((3, 4), d), [1, 2], [0], error=True)  # lengths differ
        yield Case(g.t((3, 4), d), [1], [2], error=True)  # dim out of range
        yield Case(g.t((3, 4), d), [1, 1], error=True)  # several shifts without dims


def tri_cases(g):
    for d in ALL:
        for shape, k in [((3, 4), 0), ((4, 3), 1), ((4, 3), -1), ((3, 4), 5), ((3, 4), -5),
                         ((2, 3, 4), 0), ((2, 3, 4), -2), ((0, 3), 0), ((3, 0), 1), ((1, 1), 0), ((2, 0, 2), 0)]:
            yield Case(g.t(shape, d, '?'), k)
        yield Case(g.t((3, 3), d, 't'))  # diagonal omitted
        yield Case(g.t((4,), d), 0, error=True)  # fewer than 2 dims


def repeat_cases(g):
    for d in ALL:
        for shape, reps in [((2, 3), [2, 3]), ((2, 3), [1, 1]), ((2, 3), [2, 1, 3]), ((2, 3), [0, 2]),
                            ((0, 3), [2, 2]), ((3,), [2]), ((), [3, 2]), ((2, 1), [1, 4]), ((1, 2, 2), [2, 1, 1])]:
            yield Case(g.t(shape, d, '?'), reps)
        yield Case(g.t((2, 3), d), [2], error=True)  # fewer repeats than dims
        yield Case(g.t((2, 3), d), [2, -1], error=True)  # negative


def flip_cases(g):
    for d in ALL:
        for shape, dims in [((3, 4), [0]), ((3, 4), [1]), ((3, 4), [-1]), ((3, 4), [0, 1]), ((3, 4), []),
                            ((2, 3, 4), [0, 2]), ((0, 3), [0]), ((1, 1), [1]), ((5,), [0])]:
            yield Case(g.t(shape, d, '?'), dims)
        yield Case(g.t((3, 4), d), [0, 0], error=True)  # a dim twice
        yield Case(g.t((3, 4), d), [2], error=True)


def diag_cases(g):
    for d in ALL:
        for shape, k in [((4,), 0), ((3,), 1), ((3,), -2), ((0,), 0), ((1,), 0), ((3, 4), 0), ((3, 4), 2),
                         ((4, 3), -1), ((3, 4), 4), ((0, 3), 0), ((1, 1), 0)]:
            yield Case(g.t(shape, d, '?'), k)
        yield Case(g.t((3, 3), d))  # diagonal omitted
        yield Case(g.t((2, 2, 2), d), 0, error=True)  # 3 dims


def diag_ref(self, diagonal=0):
    # torch 1.13's cpu diag has no float16 kernel (torch 2.x has); the values are those of the
    # float32 call (diag only moves data, so the conversion is exact both ways)
    if self.dtype == torch.float16:
        return torch.ops.aten.diag.default(self.float(), diagonal).half()
    return torch.ops.aten.diag.default(self, diagonal)


def index_select_cases(g):
    for d in ALL:
        for shape, dim, idx_shape in [((4, 3), 0, (5,)), ((4, 3), 1, (2,)), ((4, 3), -1, (3,)), ((2, 3, 4), 2, (6,)),
                                      ((4, 3), 0, (0,)), ((4, 3), 1, ()), ((0, 3), 1, (2,)), ((5,), 0, (3,))]:
            size = shape[dim]
            if size == 0:
                yield Case(g.t(shape, d, '?'), dim, g.index((0,), 0))
                continue
            yield Case(g.t(shape, d, '?'), dim, g.index(idx_shape, size - 1, view=g.pick(['-', 's']) if idx_shape else '-'))
        yield Case(g.t((4, 3), d), 0, g.index((3,), 3, dtype='int32'))  # int32 indices
        yield Case(g.t((4, 3), d), 0, T(torch.tensor([1, 4])), data_error=True)  # out of range
        yield Case(g.t((4, 3), d), 0, T(torch.tensor([-1])), data_error=True)  # negative
        yield Case(g.t((4, 3), d), 2, g.index((2,), 2), error=True)  # dim out of range
        yield Case(g.t((4, 3), d), 0, g.index((2, 2), 2), error=True)  # 2-D index
    for idt in ['float32', 'bool', 'uint8']:
        yield Case(g.t((4, 3), 'float32'), 0, g.t((2,), idt, lo=0, hi=1, specials=False))


def gather_cases(g):
    for d in ALL:
        for shape, dim, ishape in [((4, 3), 0, (2, 3)), ((4, 3), 1, (4, 5)), ((4, 3), -1, (2, 2)),
                                   ((2, 3, 4), 1, (2, 3, 1)), ((4, 3), 0, (0, 3)), ((4, 3), 1, (4, 0)), ((5,), 0, (7,))]:
            size = shape[dim]
            yield Case(g.t(shape, d, '?'), dim, g.index(ishape, size - 1, view=g.pick(g.views(len(ishape)))))
        yield Case(g.t((4, 3), d), 0, T(torch.tensor([[0, 4, 1]])), data_error=True)  # out of range
        yield Case(g.t((4, 3), d), 0, g.index((2,), 2), error=True)  # ranks differ
        yield Case(g.t((4, 3), d), 2, g.index((2, 3), 2), error=True)  # dim out of range
        yield Case(g.t((4, 3), d), 0, g.index((2, 4), 2), error=True)  # index larger than self in dim 1
    yield Case(g.t((4, 3), 'float32'), 0, g.index((2, 3), 3, dtype='int32'))


def scatter_src_cases(g):
    for d in ALL:
        for shape, dim, count, other, sshape in [((4, 3), 0, 2, (3,), (2, 3)), ((4, 3), 1, 3, (4,), (4, 5)),
                                                 ((4, 3), -1, 2, (2,), (3, 4)), ((2, 3, 4), 1, 2, (2, 4), (2, 3, 4)),
                                                 ((4, 3), 0, 0, (3,), (2, 3)), ((5,), 0, 3, (), (5,))]:
            ndim = len(shape)
            wd = dim % ndim
            yield Case(g.t(shape, d, '?'), dim, g.perm_index(shape[wd], count, other, wd), g.t(sshape, d, '?'))
        yield Case(g.t((4, 3), d), 0, T(torch.tensor([[5, 0, 1]])), g.t((1, 3), d), data_error=True)
        yield Case(g.t((4, 3), d), 0, g.index((2,), 2), g.t((2, 3), d), error=True)  # ranks differ
        yield Case(g.t((4, 3), d), 0, g.index((2, 3), 2), g.t((1, 3), d), error=True)  # src smaller than index
    yield Case(g.t((4, 3), 'float32'), 0, g.perm_index(4, 2, (3,), 0), g.t((2, 3), 'int32'), error=True)  # dtypes differ


def scatter_value_cases(g):
    for d in ALL:
        for shape, dim, count, other in [((4, 3), 0, 2, (3,)), ((4, 3), 1, 3, (4,)), ((2, 3, 4), -1, 2, (2, 3)),
                                         ((4, 3), 0, 0, (3,)), ((5,), 0, 3, ())]:
            ndim = len(shape)
            wd = dim % ndim
            yield Case(g.t(shape, d, '?'), dim, g.perm_index(shape[wd], count, other, wd), scalar_of(d, g))
        yield Case(g.t((4, 3), d), 0, T(torch.tensor([[5, 0, 1]])), scalar_of(d, g), data_error=True)


def scatter_add_cases(g):
    for d in ALL:
        for shape, dim, ishape, sshape in [((4, 3), 0, (6, 3), (6, 3)), ((4, 3), 1, (4, 5), (4, 5)),
                                           ((2, 3, 4), -1, (2, 2, 6), (2, 3, 6)), ((4, 3), 0, (0, 3), (2, 3)),
                                           ((5,), 0, (8,), (8,))]:
            size = shape[dim % len(shape)]
            # duplicate indices add up; small values so that integer sums do not wrap
            yield Case(g.t(shape, d, '?', lo=-3, hi=3, specials=False), dim, g.index(ishape, size - 1),
                       g.t(sshape, d, '?', lo=-3, hi=3, specials=False))
        yield Case(g.t((4, 3), d), 0, T(torch.tensor([[4, 0, 1]])), g.t((1, 3), d), data_error=True)
        yield Case(g.t((4, 3), d), 0, g.index((2,), 2), g.t((2, 3), d), error=True)


def take_along_dim_cases(g):
    for d in ALL:
        for shape, ishape, dim in [((4, 3), (2, 3), 0), ((4, 3), (4, 5), 1), ((4, 3), (1, 2), 1), ((4, 1), (4, 3), 0),
                                   ((2, 3, 4), (2, 3, 2), -1), ((4, 3), (0, 3), 0), ((4, 3), (5,), None),
                                   ((2, 3), (2, 2), None)]:
            size = int(np.prod(shape)) if dim is None else shape[dim]
            yield Case(g.t(shape, d, '?'), g.index(ishape, size - 1, view=g.pick(g.views(len(ishape)))), dim)
        yield Case(g.t((4, 3), d), g.index((4,), 11))  # dim omitted: flattened
        yield Case(g.t((4, 3), d), T(torch.tensor([[4, 0, 1]])), 0, data_error=True)
        yield Case(g.t((4, 3), d), g.index((2,), 2), 0, error=True)  # ranks differ
    yield Case(g.t((4, 3), 'float32'), g.index((2, 3), 3, dtype='int32'), 0)


def take_along_dim_ref(self, indices, dim=None):
    # torch 1.13 flattens with .view(-1) when dim is None, which fails for a non-contiguous
    # self (fixed in torch 2.x, which reshapes); the values are those of the contiguous copy.
    if dim is None:
        self, indices = self.contiguous(), indices.contiguous()
    return torch.ops.aten.take_along_dim.default(self, indices, dim)


def masked_fill_scalar_cases(g):
    for d in ALL:
        for shape, mshape in [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 4), (3, 1)), ((3, 4), ()), ((2, 3, 4), (3, 1)),
                              ((0, 4), (1, 4)), ((0, 4), (0, 1)), ((1, 1), (1, 1))]:
            yield Case(g.t(shape, d, '?'), g.t(mshape, 'bool', '?'), scalar_of(d, g))
        yield Case(g.t((3, 4), d), g.t((2, 4), 'bool'), scalar_of(d, g), error=True)  # does not broadcast
        # the out-of-place op broadcasts self to the mask too (torch: expand_outplace)
        yield Case(g.t((3,), d), g.t((2, 3), 'bool'), scalar_of(d, g))
    # (a uint8 mask: deprecated but accepted by torch 1.13, rejected by torch 2.x; not checked)
    # scalars of another kind than the tensor's
    for d, v in [('int32', 2.0), ('float32', 3), ('float64', True), ('uint8', 7), ('int64', -5), ('bool', 1)]:
        yield Case(g.t((2, 3), d), g.t((2, 3), 'bool'), v)


def masked_fill_tensor_cases(g):
    for d in ALL:
        for shape, mshape in [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 3, 4), (3, 1)), ((0, 4), (1, 4))]:
            yield Case(g.t(shape, d, '?'), g.t(mshape, 'bool', '?'), g.t((), d))
        yield Case(g.t((3, 4), d), g.t((3, 4), 'bool'), g.t((1,), d), error=True)  # value not 0-dim
    for d, vd in [('float32', 'float64'), ('int32', 'int64'), ('float16', 'float32'), ('int64', 'float32')]:
        yield Case(g.t((2, 3), d), g.t((2, 3), 'bool'), g.t((), vd, lo=-3, hi=3))


def one_hot_cases(g):
    for shape, hi, n in [((5,), 3, -1), ((5,), 3, 6), ((2, 3), 4, 5), ((2, 3), 0, -1), ((), 2, 4), ((0,), 0, 3),
                         ((1, 1), 0, 1)]:
        yield Case(g.index(shape, hi, view=g.pick(g.views(len(shape)))), n, cpu_only=n < 0)
    yield Case(g.index((4,), 2), cpu_only=True)  # num_classes omitted
    yield Case(T(torch.tensor([0, 3])), 3, data_error=True)  # a class >= num_classes
    yield Case(T(torch.tensor([0, -1])), -1, data_error=True)  # negative
    yield Case(T(torch.zeros(0, dtype=torch.int64)), -1, error=True, cpu_only=True)  # nothing to infer from
    for d in ALL:
        if d != 'int64':
            yield Case(g.t((3,), d, lo=0, hi=2, specials=False), 3)  # not an index tensor


def pad_cases(g):
    for d in ALL:
        for shape, pad, value in [((2, 3), [1, 2], None), ((2, 3), [0, 0, 1, 1], 2.0), ((2, 3), [-1, 1], None),
                                  ((2, 3), [1, 1, -1, 0], 1.0), ((2, 3, 4), [1, 0, 0, 2, 2, 0], None),
                                  ((0, 3), [1, 1], 3.0), ((2, 3), [], None), ((1, 1), [0, 1, 1, 0], -2.0)]:
            yield Case(g.t(shape, d, '?'), pad, 'constant', value)
        yield Case(g.t((2, 3), d), [1, 1])  # mode and value omitted
        yield Case(g.t((2, 3), d), [1, 1, 1], 'constant', None, error=True)  # odd length
        yield Case(g.t((2, 3), d), [1, 1, 1, 1, 1, 1], 'constant', None, error=True)  # too long
        yield Case(g.t((2, 3), d), [-2, -2], 'constant', None, error=True)  # negative size
    yield Case(g.t((2, 3), 'float32'), [1, 1], 'constant', 0.25)
    # non-constant modes: 1 to 3 padded dims, batched (torch 1.13's circular wants a batch and
    # a channel dim); reflect and replicate on float32/float64 (what torch 1.13's cpu kernels
    # take for every rank)
    shapes = [((2, 3, 5), [2, 1]), ((1, 4), [1, 3]), ((2, 2, 3, 4), [1, 2, 2, 0]), ((1, 3, 4), [-1, 2, 1, -1]),
              ((1, 1, 2, 3, 4), [1, 0, 0, 2, 1, 1]), ((2, 1, 3), [0, 0]), ((1, 1, 1, 3), [2, 2, 0, 0])]
    for mode, dtypes in [('reflect', ['float32', 'float64']), ('replicate', ['float32', 'float64']), ('circular', ALL)]:
        for d in dtypes:
            for shape, pad in shapes:
                if mode == 'circular' and len(shape) != len(pad) // 2 + 2:
                    continue
                if mode == 'circular' and min(pad) < 0:
                    continue  # torch 1.13's _pad_circular fails on overlapping memory there
                yield Case(g.t(shape, d, '?'), pad, mode, None)
        if mode != 'replicate':  # reflects / wraps too far
            yield Case(g.t((1, 2, 3), 'float32'), [3 if mode == 'reflect' else 4, 0], mode, None, error=True)
        yield Case(g.t((1, 2, 3), 'float32'), [1, 1], mode, 1.0, error=True)  # value with a non-constant mode
        yield Case(g.t((3,), 'float32'), [1, 1], mode, None, error=True)  # rank 1 for a 1-d pad
    yield Case(g.t((1, 2, 3), 'int64'), [1, 1], 'reflect', None, error=True)
    yield Case(g.t((1, 2, 3), 'bool'), [1, 1], 'replicate', None, error=True)
    yield Case(g.t((1, 2, 3), 'float32'), [1, 1], 'wrap', None, error=True)


def constant_pad_nd_cases(g):
    for d in ALL:
        for shape, pad, value in [((2, 3), [1, 2], 0), ((2, 3), [0, 0, 1, -1], 1), ((2, 3, 4), [1, 0, 0, 2, 2, 0], 2.5),
                                  ((0, 3), [1, 1], 3), ((1, 1), [0, 1, 1, 0], True)]:
            yield Case(g.t(shape, d, '?'), pad, value)
        yield Case(g.t((2, 3), d), [1, 1])  # value omitted
        yield Case(g.t((2, 3), d), [1, 1, 1], 0, error=True)  # odd length
        yield Case(g.t((2, 3), d), [-2, -2], 0, error=True)  # negative size


# torch 1.13's cpu has no float16 cumsum/cumprod/logsumexp (torchtpu computes them in float32)
NO_HALF = [d for d in ALL if d != 'float16']


def cum_cases(g):
    for d in NO_HALF:
        for shape, dim in [((3, 4), 1), ((3, 4), -2), ((2, 3, 4), 2), ((0, 3), 0), ((1, 5), 0), ((), 0), ((4,), -1)]:
            kw = {} if d in FLOATING else {'lo': -3, 'hi': 3}
            yield Case(g.t(shape, d, '?', **kw), dim)
        yield Case(g.t((3, 4), d), 2, error=True)  # dim out of range
    yield Case(g.t((2, 3), 'int32', lo=-3, hi=3), 1, 7)  # dtype=torch.float64 (ScalarType code 7)
    yield Case(g.t((2, 3), 'uint8'), 0, 0)  # dtype=torch.uint8: wraps


# c10::ScalarType codes (a model graph's `ScalarType? dtype`) as torch dtypes
TORCH_DTYPE_CODE = {0: torch.uint8, 3: torch.int32, 4: torch.int64, 5: torch.float16, 6: torch.float32, 7: torch.float64,
                    11: torch.bool, 15: torch.bfloat16}


def cum_ref(op):
    return lambda self, dim, dtype=None: op(self, dim, dtype=None if dtype is None else TORCH_DTYPE_CODE[dtype])


def logsumexp_cases(g):
    for d in NO_HALF:
        for shape, dim, keep in [((3, 4), [1], False), ((3, 4), [0], True), ((2, 3, 4), [0, 2], False), ((0, 3), [1], False),
                                 ((2, 0), [1], True), ((1, 5), [-1], False), ((2, 3), [-2, -1], False)]:
            yield Case(g.t(shape, d, '?'), dim, keep)
        yield Case(g.t((3, 4), d), [2], False, error=True)  # dim out of range


def var_correction_cases(g):
    for d in FLOATING:
        for shape, dim, corr, keep in [((3, 4), [1], None, False), ((3, 4), [0], 0, True), ((2, 3, 4), [0, 2], 2, False),
                                       ((3, 4), None, 1, False), ((1, 5), [0], None, False), ((2, 3), [1], 5, False),
                                       ((0, 3), [0], None, False), ((2, 3), [-1], 1, True)]:
            yield Case(g.t(shape, d, '?', specials=False), dim, corr, keep)
    yield Case(g.t((3, 4), 'int64'), [1], None, False, error=True)  # floating only
    yield Case(g.t((3, 4), 'float32'), [2], None, False, error=True)  # dim out of range


def correction_ref(op):
    # correction and keepdim are keyword-only in the schema; the manifest passes them in order
    return lambda self, dim, correction=None, keepdim=False: op(self, dim, correction=correction, keepdim=keepdim)


def var_dim_cases(g):
    for d in ['float32', 'float64', 'bfloat16']:
        for shape, dim, unbiased, keep in [((3, 4), [1], True, False), ((3, 4), [0, 1], False, True), ((2, 3, 4), [-1], True, False)]:
            yield Case(g.t(shape, d, '?', specials=False), dim, unbiased, keep)
    yield Case(g.t((3,), 'int32'), [0], True, False, error=True)


SPECS = [
    Spec('aten::cat', 'default', cat_cases, device=14),
    Spec('aten::stack', 'default', stack_cases, device=8),
    Spec('aten::roll', 'default', roll_cases),
    Spec('aten::tril', 'default', tri_cases),
    Spec('aten::triu', 'default', tri_cases),
    Spec('aten::repeat', 'default', repeat_cases),
    Spec('aten::flip', 'default', flip_cases),
    Spec('aten::diag', 'default', diag_cases, fn=diag_ref),
    Spec('aten::index_select', 'default', index_select_cases),
    Spec('aten::gather', 'default', gather_cases),
    Spec('aten::scatter', 'src', scatter_src_cases),
    Spec('aten::scatter', 'value', scatter_value_cases),
    Spec('aten::scatter_add', 'default', scatter_add_cases, exact=False),
    Spec('aten::take_along_dim', 'default', take_along_dim_cases, fn=take_along_dim_ref),
    Spec('aten::masked_fill', 'Scalar', masked_fill_scalar_cases),
    Spec('aten::masked_fill', 'Tensor', masked_fill_tensor_cases),
    Spec('aten::one_hot', 'default', one_hot_cases),
    Spec('aten::pad', 'default', pad_cases, device=12),
    Spec('aten::constant_pad_nd', 'default', constant_pad_nd_cases),
    Spec('aten::cumsum', 'default', cum_cases, exact=False, fn=cum_ref(torch.cumsum)),
    Spec('aten::cumprod', 'default', cum_cases, exact=False, fn=cum_ref(torch.cumprod)),
    Spec('aten::logsumexp', 'default', logsumexp_cases, exact=False),
    Spec('aten::var', 'correction', var_correction_cases, exact=False, fn=correction_ref(torch.ops.aten.var.correction)),
    Spec('aten::std', 'correction', var_correction_cases, exact=False, fn=correction_ref(torch.ops.aten.std.correction)),
    Spec('aten::var', 'dim', var_dim_cases, exact=False, device=3),
    Spec('aten::std', 'dim', var_dim_cases, exact=False, device=3),
]

# ---- writing ----------------------------------------------------------------------------------


def np_of(t):
    """A torch tensor as a NumPy array (bfloat16 as float32 values)."""
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        t = t.to(torch.float32)
    return t.numpy()


def fmt_float(x):
    return repr(float(x))


class Writer:
    def __init__(self, outdir):
        self.outdir = outdir
        self.cases = os.path.join(outdir, 'cases')
        if os.path.isdir(self.cases):
            shutil.rmtree(self.cases)
        os.makedirs(self.cases)

    def save(self, name, t):
        np.save(os.path.join(self.cases, name), np_of(t), allow_pickle=False)
        return 'cases/' + name

    def tensor(self, cid, tag, x):
        """Stores operand `x` (a T); returns (manifest text, the operand torch gets)."""
        stored = x.stored()
        path = self.save(f'{cid}.{tag}.npy', stored)
        return f'{path}:{DTYPE_NAME[stored.dtype]}:{x.view}', x.operand(stored.clone())

    def arg(self, cid, i, a):
        if isinstance(a, T):
            text, op = self.tensor(cid, f'a{i}', a)
            return 't:' + text, op
        if isinstance(a, list) and a and all(isinstance(x, T) for x in a):
            texts, ops = zip(*[self.tensor(cid, f'a{i}_{j}', x) for j, x in enumerate(a)])
            return 'tl:' + ';'.join(texts), list(ops)
        if a is None:
            return 'none', None
        if isinstance(a, bool):
            return f'b:{int(a)}', a
        if isinstance(a, int):
            return f'i:{a}', a
        if isinstance(a, float):
            return 'f:' + fmt_float(a), a
        if isinstance(a, str):
            assert ' ' not in a and ':' not in a
            return 's:' + a, a
        if isinstance(a, list) and all(isinstance(x, bool) for x in a) and a:
            raise ValueError('bool lists are not supported')
        if isinstance(a, list) and all(isinstance(x, int) for x in a):
            return 'il:' + ','.join(str(x) for x in a), a
        if isinstance(a, list) and all(isinstance(x, float) for x in a):
            return 'fl:' + ','.join(fmt_float(x) for x in a), a
        raise ValueError(f'cannot write argument {a!r}')


def view_kinds(row):
    """The views of a manifest row's tensor operands ('-', 's', 't')."""
    return [t.split(':')[-1] for a in row if isinstance(a, str) and a.startswith(('t:', 'tl:')) and len(a) > 3
            for t in a.split(':', 1)[1].split(';')]


def tensor_list_hint(spec):
    """Ops whose first argument is a Tensor[] (an empty Python list there means no tensors)."""
    return spec.aten in ('aten::cat', 'aten::stack')


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('outdir')
    p.add_argument('--list-errors', action='store_true', help="print torch's error for each error case")
    opts = p.parse_args()
    warnings.filterwarnings('ignore')
    torch.manual_seed(0)
    os.makedirs(opts.outdir, exist_ok=True)
    w = Writer(opts.outdir)
    lines = [f'# torchtpu op-conformance manifest, written by tests/conformance/make_cases.py with torch {torch.__version__}',
             '# ID ATEN OVERLOAD dev=D tol=RTOL,ATOL args=N ARG... -> RESULT (format: make_cases.py)']
    totals = []
    for spec in SPECS:
        g = Gen(zlib.crc32(spec.key.encode()))
        cases = list(spec.cases(g))
        device_budget, device_errors = spec.device, 3
        ok_positions = []
        n_ok = n_err = n_dev = 0
        rows = []
        for k, case in enumerate(cases):
            cid = f'{spec.key}.{k:04d}'
            texts, targs = [], []
            for i, a in enumerate(case.args):
                if isinstance(a, list) and not a and i == 0 and tensor_list_hint(spec):
                    texts.append('tl:')
                    targs.append([])
                    continue
                text, op = w.arg(cid, i, a)
                texts.append(text)
                targs.append(op)
            try:
                r = spec.fn(*targs)
                err = None
            except Exception as e:  # torch rejects the call: an "expect error" case
                err = e
            if err is None and case.error:
                sys.exit(f'make_cases.py: {cid}: the case is meant to fail but torch returned {tuple(r.shape)}')
            if err is not None:
                if opts.list_errors:
                    print(f'{cid}: {type(err).__name__}: {str(err).splitlines()[0][:150]}')
                result = 'error:' + type(err).__name__
                rtol = atol = 0
                n_err += 1
            else:
                assert isinstance(r, torch.Tensor), cid
                rd = DTYPE_NAME[r.dtype]
                result = f'out:{w.save(cid + ".out.npy", r)}:{rd}'
                rtol, atol = (0, 0) if spec.exact or rd not in FLOAT_TOL else FLOAT_TOL[rd]
                if not case.cpu_only:
                    ok_positions.append(len(rows))
                n_ok += 1
            rows.append([cid, spec.aten, spec.overload, 0, f'tol={rtol},{atol}', f'args={len(texts)}'] + texts +
                        ['->', result, err is not None and not case.cpu_only])
        if n_ok == 0:  # a spec whose every call fails is a broken spec (wrong argument order?)
            sys.exit(f'make_cases.py: {spec.key}: torch rejected every case')
        # device cases: the first successful case of each result dtype, then of each set of
        # views, then evenly spaced ones up to the budget; and the first few errors that do not
        # depend on values
        chosen = []
        for key in (lambda r: r[-2].split(':')[-1], lambda r: tuple(sorted(set(view_kinds(r))))):
            seen = set()
            for pos in ok_positions:
                k = key(rows[pos])
                if k not in seen and len(chosen) < device_budget:
                    seen.add(k)
                    if pos not in chosen:
                        chosen.append(pos)
        rest = [pos for pos in ok_positions if pos not in chosen]
        left = device_budget - len(chosen)
        if rest and left > 0:
            step = max(1, len(rest) / left)
            chosen += [rest[int(j * step)] for j in range(min(left, len(rest)))]
        for pos in chosen:
            rows[pos][3] = 1
        for row in rows:
            if row[-1] and device_errors:
                row[3] = 1
                device_errors -= 1
        for row in rows:
            n_dev += row[3]
            row[3] = f'dev={row[3]}'
            lines.append(' '.join(str(x) for x in row[:-1]))
        totals.append((spec.key, n_ok, n_err, n_dev))
    with open(os.path.join(opts.outdir, 'manifest.txt'), 'w') as f:
        f.write('\n'.join(lines) + '\n')
    print('make_cases.py: %d cases (%d expect an error), %d also on the device, for %d specs in %s' %
          (sum(t[1] + t[2] for t in totals), sum(t[2] for t in totals), sum(t[3] for t in totals), len(totals),
           opts.outdir))
    for key, n_ok, n_err, n_dev in totals:
        print(f'  {key:28s} {n_ok:4d} results {n_err:4d} errors {n_dev:4d} on the device')


if __name__ == '__main__':
    main()
