"""The CE math library's routines per element: emulated cycles and the emulator's wall speed.

For exp, reciprocal, rsqrt, sqrt and ln in fp32, fp16 computed in fp16 and fp16 computed in
fp32, prints: emulated cycles of one call for n = 1, 16, 64 and cycles per element for long vectors
(counted, and checked against the cycle counter of a lone PE for n = 64); the ratio of fp16
to fp32 cycles per element; and the emulator's wall speed running the routine on a lone PE
(M elements/s and M CE cycles/s) against the numpy reference of the same routine (the same
bits, without a PE) and against plain float64 numpy (np.exp, ...), as ratios.

With --accuracy, also the error table of docs/numerics.md ("Math library"): every fp16
input and a 10^6-value fp32 sample against float64.

Run: python benchmarks/bench_mathlib.py [--elements N] [--accuracy]
"""

from __future__ import annotations

import argparse

import numpy as np

from timing import best_of  # benchmarks/timing.py
from wafersim.asm import mathlib
from wafersim.asm.mathlib import accuracy

FORMS = [("fp32", "fp32"), ("fp16", "fp32"), ("fp16", "fp16")]
LABEL = {("fp32", "fp32"): "fp32", ("fp16", "fp32"): "fp16 (in fp32)",
         ("fp16", "fp16"): "fp16 (in fp16)"}


def routine(name, dtype, compute, n):
    return mathlib.ROUTINES[name](dtype, n=n, src="x", dst="y", prefix="b", compute=compute)


def inputs(name: str, dtype: str, size: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    x = rng.uniform(-10, 10, size) if name == "exp" else rng.uniform(0.01, 100, size)
    return x.astype(np.float32 if dtype == "fp32" else np.float16)


def cycles_table() -> None:
    print("emulated cycles (counted = measured on a lone PE)")
    print(f"{'routine':11s}{'data (arithmetic)':17s}{'n=1':>6s}{'n=16':>7s}{'n=64':>7s}"
          f"{'per element':>13s}{'vs fp32':>9s}")
    for name in mathlib.ROUTINES:
        per32 = None
        for dtype, compute in FORMS:
            c = {n: routine(name, dtype, compute, n).cycles for n in (1, 16, 64, 1024)}
            measured = mathlib.run_on_pe(mathlib.ROUTINES[name], dtype,
                                         inputs(name, dtype, 64), compute=compute).cycles[0]
            assert measured == c[64], (name, dtype, compute, measured, c[64])
            per = (c[1024] - c[64]) / 960       # the fixed part cancels
            per32 = per if per32 is None else per32
            print(f"{name:11s}{LABEL[dtype, compute]:17s}{c[1]:6d}{c[16]:7d}{c[64]:7d}"
                  f"{per:13.2f}{per / per32:9.2f}")


def speed_table(elements: int) -> None:
    print(f"\nwall speed, {elements} elements (best of 3)")
    print(f"{'routine':11s}{'data (arithmetic)':17s}{'PE M elem/s':>12s}{'M cycles/s':>11s}"
          f"{'reference M elem/s':>20s}{'PE/reference':>13s}{'PE/float64 numpy':>18s}")
    for name in mathlib.ROUTINES:
        exact = accuracy.EXACT[name]
        for dtype, compute in FORMS:
            x = inputs(name, dtype, elements)
            fn = mathlib.ROUTINES[name]
            t_pe = best_of(lambda: mathlib.run_on_pe(fn, dtype, x, compute=compute))
            run = mathlib.run_on_pe(fn, dtype, x, compute=compute)
            r = routine(name, dtype, compute, 1)
            t_ref = best_of(lambda: r.reference(x))
            xd = x.astype(np.float64)
            t_np = best_of(lambda: exact(xd))
            print(f"{name:11s}{LABEL[dtype, compute]:17s}{elements / t_pe / 1e6:12.2f}"
                  f"{sum(run.cycles) / t_pe / 1e6:11.1f}{elements / t_ref / 1e6:20.1f}"
                  f"{t_ref / t_pe:13.3f}{t_np / t_pe:18.4f}")


def accuracy_table() -> None:
    print("\naccuracy against float64 (docs/numerics.md): every fp16 input; 10^6 fp32 values")
    print(f"{'routine':11s}{'data (arithmetic)':17s}{'max ulp':>9s}{'max rel':>11s}"
          f"{'worst input':>16s}{'specials wrong':>16s}")
    for name in mathlib.ROUTINES:
        for dtype, compute in FORMS:
            x = accuracy.all_fp16() if dtype == "fp16" else accuracy.fp32_sample(name)
            y = mathlib.run_on_pe(mathlib.ROUTINES[name], dtype, x, compute=compute).values
            e = accuracy.errors(name, dtype, x, y)
            print(f"{name:11s}{LABEL[dtype, compute]:17s}{e['max_ulp']:9.3f}"
                  f"{e['max_rel']:11.2e}{e['worst']:16.7g}{e['specials']:16d}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--elements", type=int, default=100_000)
    ap.add_argument("--accuracy", action="store_true", help="also print the error table")
    args = ap.parse_args()
    cycles_table()
    speed_table(args.elements)
    if args.accuracy:
        accuracy_table()


if __name__ == "__main__":
    main()
