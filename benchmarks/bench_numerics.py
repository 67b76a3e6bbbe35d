"""Throughput of the numerics layer against numpy's own fp32 -> fp16 cast.

Prints elements per second and the ratio to numpy (baseline: ``ndarray.astype(float16)``).
Run: python benchmarks/bench_numerics.py [--n N]
"""

from __future__ import annotations

import argparse

import numpy as np

import wafersim as ws
from timing import best_of  # benchmarks/timing.py


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=4_000_000)
    args = ap.parse_args()
    x32 = np.random.default_rng(0).normal(size=args.n).astype(np.float32)
    a = np.random.default_rng(1).normal(size=args.n // 4).astype(np.float16)

    base = best_of(lambda: x32.astype(np.float16), 5)
    rows = [
        ("round_fp16 rne (fp32 in)", best_of(lambda: ws.numerics.round_fp16(x32), 5), args.n),
        ("round_fp16 rtz (general path)", best_of(lambda: ws.numerics.round_fp16(x32, "rtz"), 5), args.n),
        ("round_fp16 stochastic N=3", best_of(lambda: ws.numerics.round_fp16(x32, "stochastic", 1), 5), args.n),
        ("fma fp16 rne", best_of(lambda: ws.numerics.fma(a, a, a), 5), a.size),
        ("fma fp16 stochastic", best_of(lambda: ws.numerics.fma(a, a, a, "fp16", "stochastic"), 5), a.size),
    ]
    print(f"baseline numpy astype(float16): {args.n / base / 1e6:8.1f} M elements/s")
    for name, t, n in rows:
        rate = n / t
        print(f"{name:32s} {rate / 1e6:8.1f} M elements/s   ratio to numpy cast {rate / (args.n / base):6.2f}")


if __name__ == "__main__":
    main()
