"""Fits the polynomials and seeds of the CE math library (wafersim.asm.mathlib).

Prints the coefficients that python/wafersim/asm/mathlib/coefficients.py holds, so anyone
can check where they come from:

    python scripts/fit_mathlib.py

Polynomials: minimax in relative error over the reduced interval, by a linear program
(scipy's HiGHS) over 4,000 Chebyshev-spaced points, refined three times around a least-squares
start so the solver sees errors of order one; some low coefficients are held fixed (1 for
exp's constant term, 0 and 1 for ln's), then every coefficient is rounded to the format the
routine computes in. Seeds: the 16-bit magic constants C of y0 = C - m (reciprocal) and
y0 = C - (m >> 1) (rsqrt) on the hi word of the reduced argument m, searched exhaustively
for the smallest maximum relative error.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog

LN2 = float(np.log(2.0))


def minimax(f, lo: float, hi: float, degree: int, fixed: dict[int, float],
            npts: int = 4000) -> tuple[list[float], float]:
    """Coefficients c_0..c_degree minimising max |p(x) - f(x)| / |f(x)| on [lo, hi]."""
    x = np.cos(np.linspace(0.0, np.pi, npts)) * (hi - lo) / 2 + (hi + lo) / 2
    y = f(x)
    w = np.abs(y)
    sc = max(abs(lo), abs(hi))
    free = [k for k in range(degree + 1) if k not in fixed]
    base = sum(v * x**k for k, v in fixed.items())
    a = np.stack([(x / sc) ** k for k in free], 1) / w[:, None]
    b = (y - base) / w
    c = np.linalg.lstsq(a, b, rcond=None)[0]
    nf = len(free)
    for _ in range(3):
        r0 = a @ c - b
        eps = float(np.max(np.abs(r0)))
        obj = np.zeros(nf + 1)
        obj[-1] = 1.0
        a_ub = np.vstack([np.hstack([a, -np.ones((npts, 1))]),
                          np.hstack([-a, -np.ones((npts, 1))])])
        sol = linprog(obj, A_ub=a_ub, b_ub=np.concatenate([-r0 / eps, r0 / eps]),
                      bounds=[(None, None)] * nf + [(0, None)], method="highs")
        if sol.status != 0:
            raise RuntimeError(sol.message)
        c = c + eps * sol.x[:nf]
    coef = dict(fixed)
    for k, v in zip(free, c):
        coef[k] = float(v / sc**k)
    return [coef[k] for k in range(degree + 1)], float(np.max(np.abs(a @ c - b)))


def rounded(coefs: list[float], dtype) -> list[float]:
    return [float(dtype(v)) for v in coefs]


def error_after_rounding(f, lo, hi, coefs) -> float:
    x = np.linspace(lo, hi, 200001)
    p = np.polyval(coefs[::-1], x)
    return float(np.max(np.abs(p / f(x) - 1)))


def report(name, f, lo, hi, degree, fixed, dtype):
    c, e = minimax(f, lo, hi, degree, fixed)
    cr = rounded(c, dtype)
    er = error_after_rounding(f, lo, hi, cr)
    print(f"{name}: degree {degree} on [{lo:.6g}, {hi:.6g}], minimax rel. error {e:.3g} "
          f"(2^{np.log2(e):.1f}), after rounding to {dtype.__name__} {er:.3g}")
    print("    " + repr(tuple(cr)))


def seeds():
    def f32_hi(hi):
        return ((np.asarray(hi, np.int64) & 0xFFFF).astype(np.uint32) << 16).view(np.float32)

    def f16_word(w):
        return (np.asarray(w, np.int64) & 0xFFFF).astype(np.uint16).view(np.float16)

    m32 = np.linspace(1, 2, 100001)[:-1]
    h32 = (m32.astype(np.float32).view(np.uint32) >> 16).astype(np.int64)
    m16 = np.arange(0x3C00, 0x4000).astype(np.uint16)
    v16 = m16.view(np.float16).astype(np.float64)
    q32 = np.linspace(1, 4, 100001)[:-1]
    g32 = (q32.astype(np.float32).view(np.uint32) >> 16).astype(np.int64)
    q16 = np.arange(0x3C00, 0x4400).astype(np.uint16)
    w16 = q16.view(np.float16).astype(np.float64)
    cases = [
        ("reciprocal fp32", range(0x7E00, 0x7F80), lambda c: f32_hi(c - h32) * m32 - 1),
        ("reciprocal fp16", range(0x7000, 0x7C00),
         lambda c: f16_word(c - m16.astype(np.int64)) * v16 - 1),
        ("rsqrt fp32", range(0x5E00, 0x6000), lambda c: f32_hi(c - (g32 >> 1)) * np.sqrt(q32) - 1),
        ("rsqrt fp16", range(0x5800, 0x6000),
         lambda c: f16_word(c - (q16.astype(np.int64) >> 1)) * np.sqrt(w16) - 1),
    ]
    for name, rng, err in cases:
        best = min(rng, key=lambda c: float(np.max(np.abs(err(c)))))
        print(f"{name} seed: C = {best:#06x}, max rel. error {np.max(np.abs(err(best))):.4f}")


def main():
    # exp(r) = 1 + r + ..., r = x - k ln2 in [-ln2/2, ln2/2] (wider in fp16: k from an
    # fp16 product is sometimes the neighbour of round(x / ln2)).
    report("exp fp32", np.exp, -0.3467, 0.3467, 6, {0: 1.0}, np.float32)
    report("exp fp16", np.exp, -0.357, 0.357, 3, {0: 1.0, 1: 1.0}, np.float16)
    report("exp fp16", np.exp, -0.357, 0.357, 4, {0: 1.0, 1: 1.0}, np.float16)
    # 2^f, f = t - round(t) in [-1/2, 1/2]: fp16 results computed in fp32.
    report("exp2 fp32 (for fp16)", lambda f: 2.0**f, -0.5, 0.5, 4, {0: 1.0}, np.float32)
    # ln(1 + f) = f (1 + ...), f = m - 1, m in [0x3F35 << 16, 0x3FB5 << 16) ~ [sqrt(1/2), sqrt(2)).
    lo, hi = 0.70703125 - 1, 1.4140625 - 1
    report("ln fp32", np.log1p, lo, hi, 10, {0: 0.0, 1: 1.0}, np.float32)
    report("ln fp16", np.log1p, lo - 1e-4, hi, 5, {0: 0.0, 1: 1.0}, np.float16)
    report("ln fp32 (for fp16)", np.log1p, lo - 1e-4, hi, 6, {0: 0.0, 1: 1.0}, np.float32)
    seeds()


if __name__ == "__main__":
    main()
