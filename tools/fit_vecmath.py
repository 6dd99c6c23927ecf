#!/usr/bin/python3
"""tools/fit_vecmath.py — fits the polynomial and rational coefficients used by
include/torchtpu/fuse/vecmath.hpp, and prints them as float32 literals.

  exp:  e^r ~ 1 + r + c2 r^2 + ... + c6 r^6 on |r| <= ln2/2 (after Cody-Waite reduction)
  tanh: tanh(x) ~ x P(x^2) / Q(x^2), deg P = 6, deg Q = 3, Q(0) = 1, on 0 < x <= 9

Both minimize the maximum *relative* error: a weighted least-squares fit on ~5000
Chebyshev-spaced points whose weights are re-scaled by the current error after every
solve (Lawson's iteration); the rational fit is linearized as x P - t Q with the previous
Q as weight (Sanathanan-Koerner). References are computed with mpmath at 30 digits.
Run with Debian's python3 (numpy, mpmath): /usr/bin/python3 tools/fit_vecmath.py
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 30


def chebyshev_points(lo, hi, n):
    return lo + (hi - lo) * (np.cos(np.linspace(0.0, np.pi, n)) * 0.5 + 0.5)


def fit_exp(deg=6, n=4000):
    h = float(mp.log(2) / 2)
    r = chebyshev_points(-h, h, n)
    f = np.array([float(mp.exp(v)) for v in r])
    basis = np.stack([r ** i for i in range(2, deg + 1)], 1) / f[:, None]
    rhs = (f - 1.0 - r) / f          # relative residual of 1 + r + sum c_i r^i
    w = np.full(n, 1.0 / n)
    for _ in range(200):
        sw = np.sqrt(w)
        c, *_ = np.linalg.lstsq(basis * sw[:, None], rhs * sw, rcond=None)
        err = basis @ c - rhs
        w = w * np.abs(err)
        w /= w.sum()
    return c, np.abs(err).max()


def fit_tanh(dp=6, dq=3, bound=9.0, n=6000):
    x = chebyshev_points(0.0, bound, n)
    x = x[x > 1e-4]
    t = np.array([float(mp.tanh(v)) for v in x])
    scale = bound * bound            # fit in s = x^2 / bound^2 in [0, 1] for conditioning
    s = x * x / scale
    w = np.ones(len(x))
    q_prev = np.ones(len(x))
    for it in range(300):
        cols = [x * s ** i for i in range(dp + 1)] + [-t * s ** i for i in range(1, dq + 1)]
        a = np.stack(cols, 1) / (t * q_prev)[:, None]
        b = 1.0 / q_prev
        sw = np.sqrt(w)
        sol, *_ = np.linalg.lstsq(a * sw[:, None], b * sw, rcond=None)
        p = sol[: dp + 1]
        q = np.concatenate([[1.0], sol[dp + 1:]])
        pv = sum(p[i] * s ** i for i in range(dp + 1))
        qv = sum(q[i] * s ** i for i in range(dq + 1))
        err = (x * pv / qv - t) / t
        q_prev = qv
        if it > 20:
            w = w * np.sqrt(np.abs(err))
            w /= w.sum()
    # back to powers of z = x^2
    pz = [p[i] / scale ** i for i in range(dp + 1)]
    qz = [q[i] / scale ** i for i in range(dq + 1)]
    return pz, qz, np.abs(err).max()


if __name__ == "__main__":
    c, e = fit_exp()
    print(f"exp: max relative error of the polynomial {e:.3g}")
    for i, ci in enumerate(c):
        print(f"  c{i + 2} = {np.float32(ci):.9e}f")
    pz, qz, e = fit_tanh()
    print(f"tanh: max relative error of the rational function {e:.3g}")
    for i, ci in enumerate(pz):
        print(f"  p{i} = {np.float32(ci):.9e}f")
    for i, ci in enumerate(qz):
        print(f"  q{i} = {np.float32(ci):.9e}f")
