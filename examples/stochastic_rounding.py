"""Stochastic vs round-to-nearest accumulation in fp16 (seed 000 [0661]-[0662]).

Adds many increments smaller than an fp16 ULP into one accumulator, the long dependency
chain of [0661], and prints how far each rounding mode drifts from the exact sum.

Run: python examples/stochastic_rounding.py [--steps N] [--plot out.png]
"""

from __future__ import annotations

import argparse

import numpy as np

import wafersim as ws


def accumulate(increments: np.ndarray, mode: str, n_bits: int = 3, seed: int = 0) -> np.ndarray:
    """Returns the accumulator after every step (fp16, starting at 1.0)."""
    bank = ws.numerics.LfsrBank(4, seed)
    one = np.ones(1, np.float16)
    acc = np.ones(1, np.float16)
    trace = np.empty(len(increments), np.float64)
    for i, inc in enumerate(increments.astype(np.float16)):
        acc = ws.numerics.fma(one, np.array([inc], np.float16), acc, "fp16", mode,
                              rng=bank, n_bits=n_bits)
        trace[i] = acc[0]
    return trace


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--plot", help="write a PNG of the three curves")
    args = ap.parse_args()
    inc = np.random.default_rng(3).uniform(0, 4e-4, args.steps).astype(np.float16)
    exact = 1.0 + np.cumsum(inc.astype(np.float64))
    curves = {
        "round to nearest even": accumulate(inc, "rne"),
        "stochastic, N=3": accumulate(inc, "stochastic", 3, seed=1),
        "stochastic, N=7": accumulate(inc, "stochastic", 7, seed=1),
    }
    print(f"exact sum after {args.steps} steps: {exact[-1]:.5f}")
    for name, c in curves.items():
        print(f"  {name:24s} {c[-1]:.5f}  (relative error {(c[-1] - exact[-1]) / exact[-1]:+.2%})")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.plot(exact, "k--", label="exact (float64)")
        for name, c in curves.items():
            ax.plot(c, label=name)
        ax.set_xlabel("step")
        ax.set_ylabel("accumulator")
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=100)
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
