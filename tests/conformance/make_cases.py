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
           | t:TENSOR | tl:TENSOR;TENSOR;...   (il:, fl:, tl: alone are empty lists; a
           `none` element of tl: is None, as a Tensor?[] holds)
  TENSOR   FILE:DTYPE:VIEW, FILE relative to the manifest; VIEW is
             -  the array as stored
             t  stored transposed: the operand is the stored array with its last two dims
                transposed (a non-contiguous view)
             s  stored with the last dim doubled: the operand is every second element of it
                (slice step 2, a non-contiguous view)
           bfloat16 arrays are stored as float32 (NumPy has no bfloat16) holding bf16 values.
  RESULT   out:FILE:DTYPE | outs:FILE:DTYPE;FILE:DTYPE;... (an op with several results,
           in order) | error:PYTHON_EXCEPTION_NAME
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


def sort_cases(g):
    # stable=True is torch's order for repeated keys (ours); bool and bfloat16 repeat keys
    for d in ALL:
        for shape, dim, desc in [((3, 5), 1, False), ((3, 5), 0, True), ((2, 3, 4), -1, True), ((4,), 0, False),
                                 ((0, 3), 1, False), ((3, 1), 1, True), ((), 0, False), ((2, 6), -2, False)]:
            yield Case(g.t(shape, d, '?', specials=False), dim, desc)
        yield Case(g.t((3, 4), d), 2, False, error=True)  # dim out of range
    for d in FLOATING:
        yield Case(g.t((3, 8), d, '?', specials=True), 1, False)  # NaN and infinities placed as torch
        yield Case(g.t((3, 8), d, '?', specials=True), 1, True)


def sort_ref(self, dim, descending):
    return torch.sort(self, dim=dim, descending=descending, stable=True)


def argsort_ref(self, dim, descending):
    return torch.sort(self, dim=dim, descending=descending, stable=True)[1]


def topk_cases(g):
    # distinct values per line: torch's topk picks among equal values in its own order
    for d in ['uint8', 'int32', 'int64', 'bfloat16', 'float32', 'float64']:
        for shape, k, dim, largest in [((3, 6), 2, 1, True), ((3, 6), 3, -1, False), ((5, 2), 5, 0, True), ((4,), 0, 0, True),
                                       ((2, 3, 4), 4, 2, False), ((6,), 6, 0, True)]:
            n = int(np.prod(shape))
            vals = g.rng.permutation(n).astype(np.float64) - (0 if d == 'uint8' else n // 2)
            x = T(torch.from_numpy(vals).reshape(shape).to(DTYPES[d]), g.pick(g.views(len(shape))))
            yield Case(x, k, dim, largest, True)
        yield Case(g.t((3, 4), d), 5, 1, True, True, error=True)  # k past the dim
        yield Case(g.t((3, 4), d), 1, 2, True, True, error=True)  # dim out of range
    yield Case(g.t((3, 4), 'bool'), 1, 1, True, True, error=True)  # no bool topk



def log_softmax_cases(g):
    # torch 1.13's cpu has no float16 log_softmax
    for d in ['bfloat16', 'float32', 'float64']:
        for shape, dim in [((3, 4), 1), ((3, 4), 0), ((2, 3, 4), -1), ((2, 3, 4), 1), ((), 0), ((0, 3), 1), ((5,), 0),
                           ((1, 1), -2)]:
            yield Case(g.t(shape, d, '?', specials=False), dim, None)
        yield Case(g.t((3, 4), d), 2, None, error=True)  # dim out of range
    yield Case(g.t((3, 4), 'int64'), 1, None, error=True)  # integer input without a dtype


def mse_loss_cases(g):
    # torch 1.13's cpu has no bfloat16 mse_loss
    for d in ['float16', 'float32', 'float64']:
        for sa, sb in [((3, 4), (3, 4)), ((2, 1), (3,)), ((0, 3), (0, 3)), ((), ()), ((4,), (2, 4)), ((1, 5), (5,))]:
            for red in (0, 1, 2):
                yield Case(g.t(sa, d, '?', specials=False), g.t(sb, d, '?', specials=False), red)
        yield Case(g.t((3, 4), d), g.t((4, 3), d), 1, error=True)  # shapes that do not broadcast
    yield Case(g.t((3, 4), 'float32', specials=False), g.t((3, 4), 'float64', specials=False), 1)  # promotion
    yield Case(g.t((3, 4), 'float32', specials=False), g.t((3, 4), 'int64', lo=-3, hi=3), 0)
    yield Case(g.t((3, 4), 'int64'), g.t((3, 4), 'int64'), 1, error=True)  # integer result


CLASS_DTYPES = ['bfloat16', 'float32', 'float64']  # torch 1.13's cpu: no float16 nll_loss / log_softmax


def nll_loss_nd_cases(g, nd=True):
    for d in CLASS_DTYPES:
        w = g.t((5,), d, lo=0.25, hi=2.0, specials=False)
        shapes = [((4, 5), (4,)), ((5,), ())] + ([((2, 5, 3), (2, 3)), ((2, 5, 2, 2), (2, 2, 2))] if nd else [])
        for xs, ts in shapes:
            for red in (0, 1, 2):
                x = g.t(xs, d, '?', specials=False)
                yield Case(x, g.index(ts, 4), None, red, -100)
                yield Case(x, g.index(ts, 4), w, red, 1)
        yield Case(g.t((4, 5), d, specials=False), T(torch.tensor([1, -100, 3, 0])), w, 1, -100)
        yield Case(g.t((0, 5), d), g.index((0,), 4), None, 0, -100)
        yield Case(g.t((4, 5), d), T(torch.tensor([1, 5, 3, 0])), None, 1, -100, data_error=True)  # out of range
        yield Case(g.t((4, 5), d), T(torch.tensor([1, -1, 3, 0])), None, 2, -100, data_error=True)  # negative
        yield Case(g.t((4, 5), d), g.index((3,), 4), None, 1, -100, error=True)  # batch sizes differ
        yield Case(g.t((4, 5), d), g.index((4,), 4), g.t((4,), d), 1, -100, error=True)  # weight not [C]
    yield Case(g.t((4, 5), 'float32'), g.index((4,), 4, dtype='int32'), None, 1, -100, error=True)  # int32 target
    if not nd:
        yield Case(g.t((2, 5, 3), 'float32'), g.index((2, 3), 4), None, 1, -100, error=True)  # 3-D input


def nll_loss_cases(g):
    return nll_loss_nd_cases(g, nd=False)


def cross_entropy_loss_cases(g):
    for d in CLASS_DTYPES:
        w = g.t((5,), d, lo=0.25, hi=2.0, specials=False)
        for xs, ts in [((4, 5), (4,)), ((5,), ()), ((2, 5, 3), (2, 3))]:
            for red in (0, 1, 2):
                x = g.t(xs, d, '?', specials=False)
                yield Case(x, g.index(ts, 4), None, red, -100, 0.0)
                yield Case(x, g.index(ts, 4), w, red, 2, 0.0)
                yield Case(x, g.index(ts, 4), None, red, 0, 0.25)
                yield Case(x, g.index(ts, 4), w, red, -100, 0.1)
                # probability targets: the input's shape
                yield Case(x, g.t(xs, d, lo=0.0, hi=1.0, specials=False), None, red, -100, 0.0)
                yield Case(x, g.t(xs, d, lo=0.0, hi=1.0, specials=False), w, red, -100, 0.2)
        yield Case(g.t((4, 5), d, specials=False), T(torch.tensor([1, -100, 3, 0])), w, 1, -100, 0.3)
        yield Case(g.t((4, 5), d), T(torch.tensor([1, 5, 3, 0])), None, 1, -100, 0.0, data_error=True)
        yield Case(g.t((4, 5), d), g.index((3,), 4), None, 1, -100, 0.0, error=True)  # batch sizes differ
        yield Case(g.t((4, 5), d), g.t((4, 5), d), None, 1, 1, 0.0, error=True)  # ignore_index with probabilities
    yield Case(g.t((4, 5), 'float32'), g.index((4, 5), 1), None, 1, -100, 0.0, error=True)  # int probabilities


def dropout_cases(g):
    for d in ALL:
        for shape in [(3, 4), (0, 3), (), (5,)]:
            yield Case(g.t(shape, d, '?'), 0.5, False)
            yield Case(g.t(shape, d, '?'), 0.0, True)
            yield Case(g.t(shape, d, '?'), 1.0, True)  # zeros (torch: x * 0, so -0.0 and NaN stay)


def pixel_shuffle_cases(g):
    for d in ALL:
        for shape, r in [((1, 8, 2, 3), 2), ((2, 4, 3, 3), 2), ((9, 1, 1), 3), ((2, 2, 4, 1, 1), 2), ((0, 4, 2, 2), 2),
                         ((1, 3, 2, 2), 1)]:
            yield Case(g.t(shape, d, '?'), r)
        yield Case(g.t((1, 3, 2, 2), d), 2, error=True)  # channels not divisible by r^2
        yield Case(g.t((4, 2), d), 1, error=True)  # rank 2
        yield Case(g.t((1, 4, 2, 2), d), 0, error=True)  # factor 0


def pixel_unshuffle_cases(g):
    for d in ALL:
        # (no empty input: torch 1.13 returns an empty input unchanged, shape [0, 1, 2, 2] for
        # [0, 1, 2, 2] and factor 2; the library gives torch's rule's [0, 4, 1, 1])
        for shape, r in [((1, 2, 4, 6), 2), ((3, 6, 3), 3), ((2, 1, 2, 2, 2), 2), ((1, 3, 2, 2), 1)]:
            yield Case(g.t(shape, d, '?'), r)
        yield Case(g.t((1, 2, 3, 4), d), 2, error=True)  # height not divisible
        yield Case(g.t((4, 2), d), 1, error=True)  # rank 2


def embedding_bag_cases(g):
    # torch 1.13's cpu: float16, float32, float64 tables
    for d in ['float16', 'float32', 'float64']:
        w = g.t((6, 3), d, specials=False)
        idx = g.index((7,), 5)
        off = T(torch.tensor([0, 2, 2, 5]))
        for mode in (0, 1, 2):
            yield Case(w, idx, off, False, mode, False, None, False, None)
            yield Case(w, idx, off, False, mode, False, None, False, 2)
            yield Case(w, idx, T(torch.tensor([0, 2, 2, 7])), False, mode, False, None, True, None)
            yield Case(w, g.index((0,), 5), T(torch.tensor([0, 0])), False, mode, False, None, False, None)
        yield Case(w, idx, off, False, 0, False, g.t((7,), d, specials=False), False, None)
        yield Case(w, g.index((7,), 5, dtype='int32'), T(torch.tensor([0, 3], dtype=torch.int32)), False, 1, False, None,
                   False, None)
        yield Case(w, idx, off, False, 1, False, g.t((7,), d), False, None, error=True)  # weights need mode sum
        yield Case(w, T(torch.tensor([1, 6])), T(torch.tensor([0])), False, 0, False, None, False, None, data_error=True)
        yield Case(w, idx, T(torch.tensor([1, 3])), False, 0, False, None, False, None, data_error=True)  # offsets[0] != 0


def embedding_bag_ref(*args):
    # aten returns (output, offset2bag, bag_size, max_indices); the library op is the output
    return torch.ops.aten.embedding_bag.padding_idx(*args)[0]


# ---- linear algebra (ops/linalg.hpp) ---------------------------------------------------------
# Products use half-integer (floating) or small integer operands: their sums are exact (or
# within the tolerance for bfloat16) in any order. torch 1.13's cpu has no float16 (and no bool)
# matrix products, lerp or frobenius_norm: those dtypes are left out here.
PRODUCT = ['uint8', 'int32', 'int64', 'bfloat16', 'float32', 'float64']


def small(g, shape, d, view='-'):
    """Operands for products: half-integers in [-3, 3] (floating), integers in [0, 3] (uint8) or [-3, 3]."""
    if d in FLOATING:
        t = g.t(shape, d, view, lo=-3, hi=3, specials=False)
        t.value = (t.value.double() * 2).round().div(2).to(DTYPES[d])
        return t
    return g.t(shape, d, view, lo=0 if d == 'uint8' else -3, hi=3)


# torch 1.13 returns int64 for integer operands when the equation sums a label outside a product
# (its at::sum promotes): the library keeps the operands' dtype, so those are floating-only here
INT64_SUMS = ['ii', 'ij,kj->ik', 'ij->', 'iij->j']


def einsum_cases(g):
    for d in PRODUCT:
        for eq, shapes in [('bij,bjk->bik', [(2, 3, 4), (2, 4, 5)]), ('ii->i', [(3, 3)]), ('ii', [(4, 4)]),
                           ('i,j->ij', [(3,), (4,)]), ('...ij,...jk', [(2, 3, 2, 3), (3, 3, 2)]),
                           ('bhqd,bhkd->bhqk', [(2, 2, 3, 4), (2, 2, 5, 4)]), ('ij,jk,kl->il', [(2, 3), (3, 4), (4, 2)]),
                           ('ij,kj->ik', [(2, 1), (4, 3)]), ('ij->', [(3, 4)]), ('ji', [(2, 3)]), ('iij->j', [(3, 3, 2)]),
                           ('ij,jk->ik', [(2, 0), (0, 3)])]:
            if d in INTEGRAL and eq in INT64_SUMS:
                continue
            yield Case(eq, [small(g, s, d, '?') for s in shapes])
    yield Case('ij,jk', [small(g, (2, 3), 'float32'), small(g, (4, 2), 'float32')], error=True)  # sizes
    yield Case('ii->i', [small(g, (2, 3), 'float32')], error=True)  # repeated label, sizes differ
    yield Case('ij->k', [small(g, (2, 3), 'float32')], error=True)  # unknown output label
    yield Case('ij,jk->ik', [small(g, (2, 3), 'float32')], error=True)  # too few operands
    yield Case('ij,jk', [small(g, (2, 3), 'float32'), small(g, (3, 2), 'float64')], error=True)  # dtypes


def einsum_ref(equation, tensors):
    return torch.einsum(equation, *tensors)


NORM_PS = [2, 1, 0, float('inf'), -float('inf'), 3, 0.5]


def vector_norm_cases(g):
    for d in FLOATING:
        for shape, p, dim, keep in [((3, 4), 2, None, False), ((3, 4), 1, [1], False), ((2, 3, 4), 0, [0, 2], True),
                                    ((3, 4), float('inf'), [-1], False), ((3, 4), -float('inf'), [0], True),
                                    ((2, 5), 3, [1], False), ((2, 5), 0.5, None, False), ((0, 3), 2, [0], False),
                                    ((), 2, None, False), ((1, 5), 1, [0], False)]:
            yield Case(g.t(shape, d, '?', specials=False), p, dim, keep)
    yield Case(g.t((2, 3), 'float32', specials=False), 2, [1], False, 7)  # dtype=torch.float64 (code 7)
    yield Case(g.t((0, 3), 'float32'), float('inf'), None, False, error=True)  # no identity
    yield Case(g.t((3, 4), 'int64'), 2, None, False, error=True)  # floating only
    yield Case(g.t((3, 4), 'float32'), 2, [2], False, error=True)  # dim out of range


def vector_norm_ref(self, ord=2, dim=None, keepdim=False, dtype=None):
    return torch.ops.aten.linalg_vector_norm(self, ord, dim, keepdim, dtype=None if dtype is None else TORCH_DTYPE_CODE[dtype])


def norm_dim_cases(g):
    for d in FLOATING:
        for shape, p, dim, keep in [((3, 4), 2, [1], False), ((3, 4), None, [0], True), ((2, 3, 4), 1, [0, 2], False),
                                    ((3, 4), 0, [0, 1], False), ((3, 4), float('inf'), [-1], True), ((2, 5), 3, [1], False)]:
            yield Case(g.t(shape, d, '?', specials=False), p, dim, keep)
    yield Case(g.t((3, 4), 'int64'), 2, [1], False, error=True)


def norm_scalar_cases(g):
    for d in FLOATING:
        for shape, p in [((3, 4), 2), ((5,), 1), ((2, 3), 0), ((2, 3), float('inf')), ((2, 2, 2), 4)]:
            yield Case(g.t(shape, d, '?', specials=False), p)


def frobenius_cases(g):
    for d in ['bfloat16', 'float32', 'float64']:
        for shape, dim, keep in [((3, 4), [0, 1], False), ((3, 4), [1], True), ((2, 3, 4), [-1, 0], False), ((0, 2), [0], False)]:
            yield Case(g.t(shape, d, '?', specials=False), dim, keep)


def addmm_cases(g):
    for d in PRODUCT:
        for s, a, b in [((2, 4), (2, 3), (3, 4)), ((4,), (2, 3), (3, 4)), ((1, 1), (3, 2), (2, 5)), ((2, 1), (2, 0), (0, 1))]:
            yield Case(small(g, s, d), small(g, a, d, '?'), small(g, b, d, '?'))
        beta, alpha = (2, 3) if d not in FLOATING else (0.5, 1.5)
        yield Case(small(g, (2, 4), d), small(g, (2, 3), d), small(g, (3, 4), d), beta, alpha)
        yield Case(small(g, (2, 4), d), small(g, (2, 3), d), small(g, (3, 4), d), 0, 1)
    yield Case(small(g, (2, 2), 'float32'), small(g, (2, 3), 'float32'), small(g, (4, 2), 'float32'), error=True)
    yield Case(small(g, (3, 3), 'float32'), small(g, (2, 3), 'float32'), small(g, (3, 2), 'float32'), error=True)
    yield Case(small(g, (2, 2), 'float32'), small(g, (2, 3), 'float64'), small(g, (3, 2), 'float32'), error=True)


def baddbmm_cases(g):
    for d in PRODUCT:
        for s, a, b in [((2, 2, 4), (2, 2, 3), (2, 3, 4)), ((4,), (3, 2, 3), (3, 3, 4)), ((1, 2, 1), (1, 2, 5), (1, 5, 3))]:
            yield Case(small(g, s, d), small(g, a, d, '?'), small(g, b, d, '?'))
        beta, alpha = (2, 3) if d not in FLOATING else (0.5, 1.5)
        yield Case(small(g, (2, 2, 4), d), small(g, (2, 2, 3), d), small(g, (2, 3, 4), d), beta, alpha)
    yield Case(small(g, (2, 2, 2), 'float32'), small(g, (2, 2, 3), 'float32'), small(g, (3, 3, 2), 'float32'), error=True)


def scaled_ref(op):
    # beta and alpha are keyword-only in the schema; the manifest passes them in order
    return lambda self, a, b, beta=1, alpha=1: op(self, a, b, beta=beta, alpha=alpha)


def outer_cases(g):
    for d in ALL:
        for n, m in [(3, 4), (1, 5), (0, 2)]:
            yield Case(g.t((n,), d, '?', specials=False, **({} if d in FLOATING else {'lo': 0, 'hi': 9})),
                       g.t((m,), d, '?', specials=False, **({} if d in FLOATING else {'lo': 0, 'hi': 9})))
    yield Case(g.t((3,), 'int32', lo=-3, hi=3), g.t((2,), 'float32'))  # promotion
    yield Case(g.t((2, 2), 'float32'), g.t((2,), 'float32'), error=True)


LERP = ['bfloat16', 'float32', 'float64']


def lerp_scalar_cases(g):
    for d in LERP:
        for shape_s, shape_e, w in [((3, 4), (3, 4), 0.25), ((3, 4), (4,), 0.75), ((2, 1), (3,), -0.5), ((0, 2), (2,), 0.5)]:
            yield Case(g.t(shape_s, d, '?', specials=False), g.t(shape_e, d, '?', specials=False), w)
    yield Case(g.t((3,), 'float32'), g.t((2,), 'float32'), 0.5, error=True)
    yield Case(g.t((3,), 'float32'), g.t((3,), 'float64'), 0.5, error=True)


def lerp_tensor_cases(g):
    for d in LERP:
        for s, e, w in [((3, 4), (3, 4), (3, 4)), ((3, 1), (4,), (3, 4)), ((2, 3), (2, 3), ())]:
            yield Case(g.t(s, d, '?', specials=False), g.t(e, d, '?', specials=False), g.t(w, d, '?', lo=-0.5, hi=1.5, specials=False))
    yield Case(g.t((3,), 'int64'), g.t((3,), 'int64'), g.t((3,), 'int64'), error=True)


def nan_to_num_cases(g):
    for d in ALL:
        for shape, nan, posinf, neginf in [((3, 4), None, None, None), ((2, 5), 1.5, None, -2.0), ((4,), None, 1e39, -1e39),
                                           ((0, 2), 0.0, 1.0, -1.0), ((2, 3), -1.0, 100.0, None)]:
            yield Case(g.t(shape, d, '?'), nan, posinf, neginf)


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
    Spec('aten::sort', 'default', sort_cases, fn=sort_ref, device=10),
    Spec('aten::argsort', 'default', sort_cases, fn=argsort_ref, device=6),
    Spec('aten::topk', 'default', topk_cases, device=8),
    Spec('aten::constant_pad_nd', 'default', constant_pad_nd_cases),
    Spec('aten::cumsum', 'default', cum_cases, exact=False, fn=cum_ref(torch.cumsum)),
    Spec('aten::cumprod', 'default', cum_cases, exact=False, fn=cum_ref(torch.cumprod)),
    Spec('aten::logsumexp', 'default', logsumexp_cases, exact=False),
    Spec('aten::var', 'correction', var_correction_cases, exact=False, fn=correction_ref(torch.ops.aten.var.correction)),
    Spec('aten::std', 'correction', var_correction_cases, exact=False, fn=correction_ref(torch.ops.aten.std.correction)),
    Spec('aten::var', 'dim', var_dim_cases, exact=False, device=3),
    Spec('aten::std', 'dim', var_dim_cases, exact=False, device=3),
    Spec('aten::log_softmax', 'int', log_softmax_cases, exact=False),
    Spec('aten::mse_loss', 'default', mse_loss_cases, exact=False),
    Spec('aten::nll_loss_nd', 'default', nll_loss_nd_cases, exact=False),
    Spec('aten::nll_loss', 'default', nll_loss_cases, exact=False, device=4),
    Spec('aten::cross_entropy_loss', 'default', cross_entropy_loss_cases, exact=False, device=10),
    Spec('aten::dropout', 'default', dropout_cases, device=6),
    Spec('aten::pixel_shuffle', 'default', pixel_shuffle_cases, device=6),
    Spec('aten::pixel_unshuffle', 'default', pixel_unshuffle_cases, device=4),
    Spec('aten::embedding_bag', 'padding_idx', embedding_bag_cases, exact=False, fn=embedding_bag_ref),
    Spec('aten::einsum', 'default', einsum_cases, exact=False, fn=einsum_ref, device=10),
    Spec('aten::linalg_vector_norm', 'default', vector_norm_cases, exact=False, fn=vector_norm_ref, device=8),
    Spec('aten::norm', 'ScalarOpt_dim', norm_dim_cases, exact=False, device=4),
    Spec('aten::norm', 'Scalar', norm_scalar_cases, exact=False, device=3),
    Spec('aten::frobenius_norm', 'dim', frobenius_cases, exact=False, device=3),
    Spec('aten::addmm', 'default', addmm_cases, exact=False, fn=scaled_ref(torch.addmm), device=8),
    Spec('aten::baddbmm', 'default', baddbmm_cases, exact=False, fn=scaled_ref(torch.baddbmm), device=6),
    Spec('aten::outer', 'default', outer_cases, exact=False, device=6),
    Spec('aten::ger', 'default', outer_cases, exact=False, device=2),
    Spec('aten::lerp', 'Scalar', lerp_scalar_cases, exact=False, device=4),
    Spec('aten::lerp', 'Tensor', lerp_tensor_cases, exact=False, device=4),
    Spec('aten::nan_to_num', 'default', nan_to_num_cases, device=6),
]


# upsample: both overloads (`vec`: what F.interpolate traces to; `default`: the plain form with
# scales). float16/bfloat16 references: torch's float32 result rounded once (torch 1.13 has no
# float16 kernel; its bfloat16 kernel rounds each step), which is what torchtpu computes. Linear
# modes take values in [-1, 1]: torch's vectorized kernel may round a cancelling sum differently
# by an ulp of the inputs, which FLOAT_TOL (relative to the result) covers at that scale.
UPSAMPLE_DTYPES = ['uint8'] + FLOATING


def upsample_ref(op):
    def f(x, *rest):
        if x.dtype in (torch.float16, torch.bfloat16):
            return op(x.float(), *rest).to(x.dtype)
        return op(x, *rest)
    return f


def upsample_nearest_vec_cases(dims):
    def cases(g):
        shapes = [(1, 2, 5), (2, 1, 4), (0, 2, 3)] if dims == 1 else [(1, 2, 4, 5), (2, 1, 3, 3), (0, 2, 3, 3)]
        sizes = [[3], [8], [2], [1], [5]] if dims == 1 else [[3, 7], [8, 10], [2, 2], [1, 1], [4, 5]]
        factors = [[1.5], [2.0], [0.6], [1.0], [1.7]] if dims == 1 else [[1.5, 2.5], [2.0, 2.0], [0.6, 0.5], [1.0, 1.0], [3.0, 1.7]]
        for d in UPSAMPLE_DTYPES:
            for s in shapes:
                for size in sizes:
                    yield Case(g.t(s, d, '?'), size, None)
                for f in factors:
                    yield Case(g.t(s, d, '?'), None, f)
            x = g.t(shapes[0], d)
            yield Case(x, sizes[0], factors[0], error=True)  # both
            yield Case(x, None, None, error=True)  # neither
            yield Case(x, sizes[0] * 2, None, error=True)  # a size too many
            yield Case(x, None, [-1.0] * dims, error=True)  # an output size below 1
            yield Case(g.t(shapes[0][:-1], d), sizes[0][:1] * (dims - 1) if dims > 1 else None,
                       None if dims > 1 else factors[0], error=True)  # a rank too small
        for d in ['bool', 'int32', 'int64']:
            yield Case(g.t(shapes[0], d), sizes[0], None, error=True)
    return cases


def upsample_nearest_cases(dims):
    def cases(g):
        shape = (1, 2, 5) if dims == 1 else (2, 1, 4, 5)
        scales = [[None], [1.7], [0.6]] if dims == 1 else [[None, None], [1.5, 2.5], [0.7, None], [2.0, 2.0]]
        for d in UPSAMPLE_DTYPES:
            for sc in scales:
                size = [int(n * (s or 1.0)) for n, s in zip(shape[2:], sc)]
                yield Case(g.t(shape, d, '?'), size, *sc)
            yield Case(g.t(shape, d), [0] * dims, *scales[0], error=True)
    return cases


def upsample_linear_vec_cases(dims):
    def cases(g):
        shapes = [(1, 2, 5), (2, 1, 4)] if dims == 1 else [(1, 2, 4, 5), (2, 1, 3, 3), (0, 2, 3, 3)]
        sizes = [[3], [8], [1], [5]] if dims == 1 else [[3, 7], [8, 10], [1, 1], [4, 5], [2, 9]]
        factors = [[1.5], [2.0], [0.6], [1.7]] if dims == 1 else [[1.5, 2.5], [2.0, 2.0], [0.6, 0.5], [1.5, 1.3]]
        for d in FLOATING:
            for s in shapes:
                for ac in (False, True):
                    for size in sizes:
                        yield Case(g.t(s, d, '?', specials=False, lo=-1.0, hi=1.0), size, ac, None)
                    for f in factors:
                        yield Case(g.t(s, d, '?', specials=False, lo=-1.0, hi=1.0), None, ac, f)
            yield Case(g.t(shapes[0], d), sizes[0], False, factors[0], error=True)
            yield Case(g.t(shapes[0], d), None, False, None, error=True)
        for d in ['uint8', 'bool', 'int32']:
            yield Case(g.t(shapes[0], d), sizes[0], False, None, error=True)
    return cases


def upsample_linear_cases(dims):
    def cases(g):
        shape = (1, 2, 5) if dims == 1 else (2, 1, 4, 5)
        scales = [[None], [1.7]] if dims == 1 else [[None, None], [1.5, 1.3], [None, 2.0]]
        for d in FLOATING:
            for ac in (False, True):
                for sc in scales:
                    size = [int(n * (s or 1.5)) for n, s in zip(shape[2:], sc)]
                    yield Case(g.t(shape, d, '?', specials=False, lo=-1.0, hi=1.0), size, ac, *sc)
    return cases


SPECS += [
    Spec('aten::upsample_nearest1d', 'vec', upsample_nearest_vec_cases(1), fn=upsample_ref(torch.ops.aten.upsample_nearest1d.vec), device=4),
    Spec('aten::upsample_nearest1d', 'default', upsample_nearest_cases(1), fn=upsample_ref(torch.ops.aten.upsample_nearest1d.default), device=2),
    Spec('aten::upsample_nearest2d', 'vec', upsample_nearest_vec_cases(2), fn=upsample_ref(torch.ops.aten.upsample_nearest2d.vec), device=6),
    Spec('aten::upsample_nearest2d', 'default', upsample_nearest_cases(2), fn=upsample_ref(torch.ops.aten.upsample_nearest2d.default), device=3),
    Spec('aten::upsample_linear1d', 'vec', upsample_linear_vec_cases(1), exact=False, fn=upsample_ref(torch.ops.aten.upsample_linear1d.vec), device=3),
    Spec('aten::upsample_linear1d', 'default', upsample_linear_cases(1), exact=False, fn=upsample_ref(torch.ops.aten.upsample_linear1d.default), device=2),
    Spec('aten::upsample_bilinear2d', 'vec', upsample_linear_vec_cases(2), exact=False, fn=upsample_ref(torch.ops.aten.upsample_bilinear2d.vec), device=6),
    Spec('aten::upsample_bilinear2d', 'default', upsample_linear_cases(2), exact=False, fn=upsample_ref(torch.ops.aten.upsample_bilinear2d.default), device=3),
]


# convolution and pooling (ops/conv.hpp, ops/pool.hpp). float16/bfloat16 references: torch's
# float32 result rounded once (torch 1.13's cpu has no float16 convolution or pooling; its
# bfloat16 kernels round differently), which is what torchtpu computes. Convolution operands
# in [-1, 1] without specials, so that float32 summation order stays within FLOAT_TOL.
def f32_ref(op):
    def f(*args):
        if args[0].dtype in (torch.float16, torch.bfloat16):
            conv = [a.float() if isinstance(a, torch.Tensor) else a for a in args]
            return op(*conv).to(args[0].dtype)
        return op(*args)
    return f


def convolution_cases(g):
    # input, weight, bias?, stride, padding, dilation, transposed, output_padding, groups
    configs = [((1, 2, 5, 5), (3, 2, 3, 3), True, [1, 1], [1, 1], [1, 1], False, [0, 0], 1),
               ((2, 4, 6, 5), (4, 2, 2, 3), False, [2, 1], [0, 1], [1, 2], False, [0, 0], 2),
               ((1, 3, 5, 6), (3, 1, 3, 3), True, [1, 2], [1, 1], [1, 1], False, [0, 0], 3),  # depthwise
               ((2, 2, 7), (3, 2, 3), True, [2], [1], [1], False, [0], 1),  # 1-D
               ((1, 2, 3, 4), (2, 2, 3, 2), True, [2, 1], [1, 0], [1, 1], True, [1, 0], 1),  # transposed
               ((0, 2, 4, 4), (3, 2, 3, 3), True, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)]  # empty batch
    flags = [False, False, True, True]  # benchmark, deterministic, cudnn_enabled, allow_tf32
    for d in FLOATING:
        for xs, ws, bias, s, p, dl, tr, op, gr in configs:
            oc = ws[1] * gr if tr else ws[0]
            b = g.t((oc,), d, lo=-1, hi=1, specials=False) if bias else None
            yield Case(g.t(xs, d, '?', lo=-1, hi=1, specials=False), g.t(ws, d, lo=-1, hi=1, specials=False), b, s, p, dl, tr,
                       op, gr, *flags)
        x = g.t((1, 2, 5, 5), d)
        yield Case(x, g.t((3, 3, 3, 3), d), None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1, *flags, error=True)  # channels
        yield Case(x, g.t((3, 2, 7, 3), d), None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1, *flags, error=True)  # kernel
    # mixed dtypes (torch 1.13's cpu also convolves int64 in its slow kernel; torchtpu does not)
    yield Case(g.t((1, 2, 5, 5), 'float32'), g.t((3, 2, 3, 3), 'float64'), None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1,
               *flags, error=True)


def conv2d_padding_cases(g):
    for d in FLOATING:
        for pad, dl in [('same', [1, 1]), ('same', [2, 1]), ('valid', [1, 1])]:
            yield Case(g.t((2, 2, 6, 5), d, '?', lo=-1, hi=1, specials=False), g.t((3, 2, 2, 3), d, lo=-1, hi=1, specials=False),
                       g.t((3,), d, lo=-1, hi=1, specials=False), [1, 1], pad, dl, 1)
        yield Case(g.t((2, 2, 6, 5), d), g.t((3, 2, 2, 3), d), None, [2, 2], 'same', [1, 1], 1, error=True)  # strided 'same'


def max_pool2d_cases(g):
    for d in FLOATING:
        for shape, k, s, p, dl, ceil in [((1, 2, 6, 7), [2, 2], [], [0, 0], [1, 1], False),
                                         ((2, 1, 7, 7), [3, 3], [2, 2], [1, 1], [1, 1], True),
                                         ((1, 2, 9, 8), [3, 2], [1, 3], [1, 0], [2, 1], True),
                                         ((2, 5, 5), [2, 2], [1, 1], [1, 0], [1, 1], False)]:
            yield Case(g.t(shape, d, '?'), k, s, p, dl, ceil)
        x = g.t((1, 2, 5, 5), d)
        yield Case(x, [3, 3], [1, 1], [2, 2], [1, 1], False, error=True)  # padding over half the kernel
        yield Case(g.t((5, 5), d), [2, 2], [], [0, 0], [1, 1], False, error=True)  # rank


def pool_range(d):
    """Value bounds for an average pooling's operand: int64 windows sum without overflow."""
    return {'lo': -1000, 'hi': 1000} if d == 'int64' else {}


def avg_pool2d_cases(g):
    for d in FLOATING + ['int64']:  # int64: torch's cpu kernel divides with truncation
        for shape, k, s, p, ceil, cip, div in [((1, 2, 6, 7), [2, 2], [], [0, 0], False, True, None),
                                               ((2, 1, 7, 7), [3, 3], [2, 2], [1, 1], True, False, None),
                                               ((1, 2, 7, 8), [3, 2], [2, 1], [1, 1], True, True, None),
                                               ((2, 5, 5), [2, 3], [1, 2], [0, 1], False, True, 5)]:
            yield Case(g.t(shape, d, '?', specials=False, **pool_range(d)), k, s, p, ceil, cip, div)
        yield Case(g.t((1, 2, 5, 5), d), [3, 3], [1, 1], [2, 2], False, True, None, error=True)


def adaptive_avg_pool2d_cases(g):
    for d in FLOATING:
        for shape, o in [((1, 2, 6, 8), [3, 4]), ((2, 1, 7, 5), [3, 2]), ((2, 5, 5), [1, 1]), ((1, 2, 4, 4), [4, 4])]:
            yield Case(g.t(shape, d, '?', specials=False), o)
        yield Case(g.t((1, 2, 0, 4), d), [2, 2], error=True)


SPECS += [
    Spec('aten::_convolution', 'default', convolution_cases, exact=False, fn=f32_ref(torch.ops.aten._convolution.default), device=6),
    Spec('aten::conv2d', 'padding', conv2d_padding_cases, exact=False, fn=f32_ref(torch.ops.aten.conv2d.padding), device=4),
    Spec('aten::max_pool2d', 'default', max_pool2d_cases, fn=f32_ref(torch.ops.aten.max_pool2d.default), device=5),
    Spec('aten::avg_pool2d', 'default', avg_pool2d_cases, exact=False, fn=f32_ref(torch.ops.aten.avg_pool2d.default), device=5),
    Spec('aten::adaptive_avg_pool2d', 'default', adaptive_avg_pool2d_cases, exact=False,
         fn=f32_ref(torch.ops.aten.adaptive_avg_pool2d.default), device=4),
]


# max pooling with indices, the 1-D poolings and the transposed convolutions (ops/pool.hpp,
# ops/pool_indices.hpp, ops/conv.hpp). float16/bfloat16 references as f32_ref (max pooling is
# exact either way). Only floating inputs: torch 1.13's cpu has no integer max pooling (torch
# 2's has; tests/ops/test_pool.cpp checks torchtpu's). Max pooling operands keep the specials
# (NaN: the index of the last NaN in the window; infinities; -0.0).
def f32_ref_values(op):
    """f32_ref for an op with (values, indices) results: the values rounded once."""
    def f(*args):
        if args[0].dtype in (torch.float16, torch.bfloat16):
            conv = [a.float() if isinstance(a, torch.Tensor) else a for a in args]
            v, i = op(*conv)
            return v.to(args[0].dtype), i
        return op(*args)
    return f


def max_pool1d_cases(g):
    for d in FLOATING:
        for shape, k, s, p, dl, ceil in [((1, 2, 9), [2], [], [0], [1], False), ((2, 3, 10), [3], [2], [1], [1], True),
                                         ((1, 2, 11), [3], [1], [1], [2], True), ((3, 7), [2], [3], [1], [1], True)]:
            yield Case(g.t(shape, d, '?'), k, s, p, dl, ceil)
        yield Case(g.t((1, 2, 5), d), [3], [1], [2], [1], False, error=True)  # padding over half the kernel
        yield Case(g.t((1, 2, 5, 5), d), [2], [], [0], [1], False, error=True)  # rank


def avg_pool1d_cases(g):
    for d in FLOATING + ['int64']:
        for shape, k, s, p, ceil, cip in [((1, 2, 9), [2], [], [0], False, True), ((2, 3, 10), [3], [2], [1], True, False),
                                          ((1, 2, 11), [4], [3], [2], True, True), ((3, 7), [3], [1], [1], False, False)]:
            yield Case(g.t(shape, d, '?', specials=False, **pool_range(d)), k, s, p, ceil, cip)
        yield Case(g.t((1, 2, 5), d), [3], [1], [2], False, True, error=True)


def adaptive_pool1d_cases(specials):
    def cases(g):
        for d in FLOATING:
            for shape, o in [((1, 2, 9), [4]), ((2, 1, 7), [7]), ((3, 5), [2]), ((1, 2, 4), [6])]:
                yield Case(g.t(shape, d, '?', specials=specials), o)
            yield Case(g.t((1, 2, 0), d), [2], error=True)
    return cases


def adaptive_max_pool2d_cases(g):
    for d in FLOATING:
        for shape, o in [((1, 2, 6, 8), [3, 4]), ((2, 1, 7, 5), [3, 2]), ((2, 5, 5), [1, 1]), ((1, 2, 4, 4), [5, 6])]:
            yield Case(g.t(shape, d, '?'), o)
        yield Case(g.t((1, 2, 0, 4), d), [2, 2], error=True)


def conv_transpose_cases(nsp):
    # input, weight, bias?, stride, padding, output_padding, groups, dilation
    configs = {1: [((1, 4, 5), (4, 3, 3), True, [2], [1], [1], 2, [1]), ((2, 2, 6), (2, 3, 2), False, [1], [0], [0], 1, [2]),
                   ((3, 5), (3, 2, 3), True, [3], [1], [2], 1, [1])],  # unbatched
               2: [((1, 2, 3, 4), (2, 2, 3, 2), True, [2, 1], [1, 0], [1, 0], 1, [1, 1]),
                   ((2, 4, 3, 3), (4, 1, 2, 2), False, [1, 2], [0, 1], [0, 1], 2, [2, 1])],
               3: [((1, 2, 2, 3, 2), (2, 2, 2, 2, 2), False, [2, 1, 1], [0, 1, 0], [1, 0, 0], 1, [1, 1, 1]),
                   ((2, 3, 3, 2), (2, 1, 2, 1, 2), True, [1, 1, 1], [0, 0, 0], [0, 0, 0], 1, [1, 1, 1])]}[nsp]  # unbatched

    def cases(g):
        for d in FLOATING:
            for xs, ws, bias, s, p, op, gr, dl in configs:
                b = g.t((ws[1] * gr,), d, lo=-1, hi=1, specials=False) if bias else None
                yield Case(g.t(xs, d, '?', lo=-1, hi=1, specials=False), g.t(ws, d, lo=-1, hi=1, specials=False), b, s, p, op, gr, dl)
            xs, ws = configs[0][0], configs[0][1]
            bad = (ws[0] + 1,) + tuple(ws[1:])  # dim 0 of the weight is not the input's channels
            yield Case(g.t(xs, d), g.t(bad, d), None, [1] * nsp, [0] * nsp, [0] * nsp, 1, [1] * nsp, error=True)
    return cases


SPECS += [
    Spec('aten::max_pool2d_with_indices', 'default', max_pool2d_cases,
         fn=f32_ref_values(torch.ops.aten.max_pool2d_with_indices.default), device=4),
    Spec('aten::max_pool1d', 'default', max_pool1d_cases, fn=f32_ref(torch.ops.aten.max_pool1d.default), device=2),
    Spec('aten::max_pool1d_with_indices', 'default', max_pool1d_cases,
         fn=f32_ref_values(torch.ops.aten.max_pool1d_with_indices.default), device=3),
    Spec('aten::avg_pool1d', 'default', avg_pool1d_cases, exact=False, fn=f32_ref(torch.ops.aten.avg_pool1d.default), device=2),
    Spec('aten::adaptive_avg_pool1d', 'default', adaptive_pool1d_cases(False), exact=False,
         fn=f32_ref(torch.ops.aten.adaptive_avg_pool1d.default), device=2),
    Spec('aten::adaptive_max_pool2d', 'default', adaptive_max_pool2d_cases,
         fn=f32_ref_values(torch.ops.aten.adaptive_max_pool2d.default), device=4),
    Spec('aten::adaptive_max_pool1d', 'default', adaptive_pool1d_cases(True),
         fn=f32_ref_values(torch.ops.aten.adaptive_max_pool1d.default), device=2),
    Spec('aten::conv_transpose1d', 'default', conv_transpose_cases(1), exact=False,
         fn=f32_ref(torch.ops.aten.conv_transpose1d.default), device=3),
    Spec('aten::conv_transpose2d', 'input', conv_transpose_cases(2), exact=False,
         fn=f32_ref(torch.ops.aten.conv_transpose2d.input), device=2),
    Spec('aten::conv_transpose3d', 'input', conv_transpose_cases(3), exact=False,
         fn=f32_ref(torch.ops.aten.conv_transpose3d.input), device=2),
]


# advanced indexing (ops/advanced_indexing.hpp): a `Tensor?[]` argument is a list of T and None.
# int32 index tensors: torch 1.13 rejects them (torch 2.x takes them), so the reference indexes
# with their int64 copies. A mask makes the result's shape depend on the data: cpu only.
def index_ref(op):
    def f(self, indices, *rest):
        l = [i.long() if isinstance(i, torch.Tensor) and i.dtype == torch.int32 else i for i in indices]
        return op(self, l, *rest)
    return f


def index_list(g, shape, spec, views):
    """aten::index's / index_put's `Tensor?[] indices` for `self` of `shape`: one entry per
    element of `spec`, for dims 0, 1, ... in order. None: a full slice; ('i', index shape): an
    index in [-size, size) (any view of it when `views`; an empty one for a size-0 dim);
    ('p', n): n distinct positions (torch leaves the winner of a duplicate write unspecified)."""
    l = []
    for k, s in enumerate(spec):
        size = shape[k]
        if s is None:
            l.append(None)
        elif s[0] == 'p':
            l.append(T(torch.from_numpy(g.rng.permutation(size)[:s[1]] - size * g.rng.integers(0, 2))))
        elif views:
            view = g.pick(g.views(len(s[1])))
            l.append(g.index(s[1], size - 1, lo=-size, view=view) if size else g.index((0,), 0))
        else:
            l.append(g.index(s[1], size - 1, lo=-size))
    return l


def index_cases(g):
    for d in ALL:
        # (self shape, list spec): ('i', index shape, dim size) an index in [-size, size); None;
        # ('m', mask shape) a bool mask
        for shape, spec in [((4, 3), [('i', (5,))]), ((4, 3), [None, ('i', (2,))]), ((4, 3), [('i', (2, 1)), ('i', (3,))]),
                            ((2, 3, 4), [('i', (2,)), None, ('i', (2,))]), ((2, 3, 4), [None, ('i', (2, 2)), ('i', (2,))]),
                            ((2, 3, 4), [None, None, ('i', (3,))]), ((4, 3), [('i', ())]), ((4, 3), [None, ('i', ())]),
                            ((4, 3), [('i', (0,))]), ((0, 3), [None, ('i', (2,))]), ((5,), [('i', (2, 3))])]:
            l = index_list(g, shape, spec, views=True)
            yield Case(g.t(shape, d, '?'), l)
        yield Case(g.t((4, 3), d), [g.index((3,), 3, dtype='int32', lo=-4)])  # int32 indices
        for shape, l in [((4, 3), [g.t((4, 3), 'bool')]), ((2, 3, 4), [None, g.t((3, 4), 'bool')]),
                         ((4, 3), [g.t((4,), 'bool')]), ((4, 3), [g.t((4,), 'uint8', lo=0, hi=1)]),
                         ((2, 3, 4), [g.t((2, 3), 'bool'), g.index((1,), 3)])]:
            yield Case(g.t(shape, d, '?'), l, cpu_only=True)
        yield Case(g.t((4, 3), d), [T(torch.tensor([0, 4]))], data_error=True)  # out of range
        yield Case(g.t((4, 3), d), [None, T(torch.tensor([-4]))], data_error=True)
        yield Case(g.t((4, 3), d), [g.index((1,), 2)] * 3, error=True)  # too many indices
        yield Case(g.t((4, 3), d), [g.index((2,), 2), g.index((3,), 2)], error=True)  # shapes do not broadcast
        yield Case(g.t((4, 3), d), [g.t((3,), 'bool')], error=True, cpu_only=True)  # a mask of the wrong shape
    yield Case(g.t((4, 3), 'float32'), [g.t((2,), 'float32', lo=0, hi=2, specials=False)], error=True)  # a float index


def index_put_cases(g):
    for d in ALL:
        small = {} if d == 'bool' else {'lo': -3, 'hi': 3}
        for shape, spec, vshape, acc in [((4, 3), [('p', 3)], (3, 3), False), ((4, 3), [('i', (6,))], (6, 3), True),
                                         ((4, 3), [None, ('p', 2)], (2,), False), ((4, 3), [('i', (3, 1)), ('i', (2,))], (3, 2), True),
                                         ((2, 3, 4), [('p', 2), None, ('i', (2,))], (2, 3), False),
                                         ((2, 3, 4), [None, ('i', (5,))], (), True), ((4, 3), [('i', (0,))], (3,), False),
                                         ((4, 3), [('i', (2, 2))], (1, 3), True)]:
            l = index_list(g, shape, spec, views=False)
            yield Case(g.t(shape, d, '?', specials=not acc, **(small if acc else {})), l,
                       g.t(vshape, d, '?', specials=not acc, **(small if acc else {})), acc)
        # x[mask] = v: one value (runs on devices as a select); one value per true element (cpu)
        yield Case(g.t((4, 3), d), [g.t((4, 3), 'bool')], g.t((), d), False)
        yield Case(g.t((2, 3, 4), d), [None, g.t((3,), 'bool')], g.t((4,), d), False)
        m = g.t((4, 3), 'bool')
        yield Case(g.t((4, 3), d), [m], g.t((int(m.value.sum()),), d), False, cpu_only=True)
        yield Case(g.t((4, 3), d, **small), [g.t((4,), 'bool')], g.t((3,), d, **small), True, cpu_only=True)
        yield Case(g.t((4, 3), d), [T(torch.tensor([4]))], g.t((3,), d), False, data_error=True)  # out of range
        yield Case(g.t((4, 3), d), [g.index((2,), 3)], g.t((3,), d), False)
        yield Case(g.t((4, 3), d), [g.index((2,), 3)], g.t((2,), d), False, error=True)  # values do not broadcast
    yield Case(g.t((4, 3), 'float32'), [g.index((2,), 3)], g.t((2, 3), 'float64'), False, error=True)  # dtypes differ


def nonzero_cases(g):
    for d in ALL:
        for shape in [(3, 4), (7,), (), (0, 3), (2, 3, 4), (1, 1)]:
            # a third zeros: NaN and -0.0 among the specials check what counts as nonzero
            x = g.t(shape, d, '?')
            if x.value.dim() and x.value.numel() and d != 'bool':
                x.value[torch.from_numpy(g.rng.random(tuple(shape)) < 0.3)] = 0
            yield Case(x, cpu_only=True)


def masked_select_cases(g):
    for d in ALL:
        for shape, mshape in [((3, 4), (3, 4)), ((3, 4), (4,)), ((3,), (2, 3)), ((3, 1), (1, 4)), ((), ()),
                              ((0, 4), (1, 4)), ((2, 3, 4), (3, 1))]:
            yield Case(g.t(shape, d, '?'), g.t(mshape, 'bool', '?'), cpu_only=True)
        yield Case(g.t((3, 4), d), g.t((2, 4), 'bool'), error=True, cpu_only=True)  # does not broadcast
    yield Case(g.t((3, 4), 'float32'), g.t((3, 4), 'uint8', lo=0, hi=1), cpu_only=True)
    yield Case(g.t((3, 4), 'float32'), g.t((3, 4), 'int64', lo=0, hi=1), error=True, cpu_only=True)


SPECS += [
    Spec('aten::index', 'Tensor', index_cases, fn=index_ref(torch.ops.aten.index.Tensor), device=12),
    Spec('aten::index_put', 'default', index_put_cases, exact=False, fn=index_ref(torch.ops.aten.index_put.default), device=12),
    Spec('aten::nonzero', 'default', nonzero_cases),
    Spec('aten::masked_select', 'default', masked_select_cases),
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
        if isinstance(a, list) and any(isinstance(x, T) for x in a) and all(isinstance(x, T) or x is None for x in a):
            # a Tensor[] (or a Tensor?[], whose None elements are written `none`)
            texts, ops = zip(*[self.tensor(cid, f'a{i}_{j}', x) if x is not None else ('none', None) for j, x in enumerate(a)])
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
            elif isinstance(r, (tuple, list)):  # several results: outs:FILE:DTYPE;FILE:DTYPE
                assert all(isinstance(x, torch.Tensor) for x in r), cid
                rd = DTYPE_NAME[r[0].dtype]
                result = 'outs:' + ';'.join(f'{w.save(f"{cid}.out{j}.npy", x)}:{DTYPE_NAME[x.dtype]}' for j, x in enumerate(r))
                rtol, atol = (0, 0) if spec.exact or rd not in FLOAT_TOL else FLOAT_TOL[rd]
                if not case.cpu_only:
                    ok_positions.append(len(rows))
                n_ok += 1
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
