"""Conformance programs 2 and 3: a matrix-vector product spread over PEs of a wafer.

Program 2 (``--layout row``): y = A x + b across a row of PEs, x streamed in from the west
edge and multicast along the row, partial sums passed east. Program 3 (``--layout grid``):
y = A x on a grid, x broadcast down columns, partial sums reduced along rows. The programs
and their host code live in the package, ``wafersim.kernels.matvec`` (its docstring
explains them); this script runs one and checks it against the exact reference.

    python examples/kernels/matvec_wafer.py --layout row --pes 4
    python examples/kernels/matvec_wafer.py --layout grid --size 4 --block 16
"""

from __future__ import annotations

import argparse

import numpy as np

from wafersim.kernels.matvec import (  # noqa: F401  (the tests and benchmarks use these)
    FINISH, MAIN, PSUM, X, Y, program, run_grid, run_row,
)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layout", choices=["row", "grid"], default="row")
    ap.add_argument("--pes", type=int, default=4, help="row: PEs in the row")
    ap.add_argument("--size", type=int, default=4, help="grid: PEs per side")
    ap.add_argument("--block", type=int, default=16, help="grid: block rows and columns per PE")
    ap.add_argument("--dtype", choices=["fp16", "fp32"], default="fp16")
    args = ap.parse_args(argv)
    if args.layout == "row":
        r = run_row(16, 8 * args.pes, args.pes, args.dtype)
        what = f"y = A x + b, 16 x {8 * args.pes} over a row of {args.pes} PEs"
    else:
        r = run_grid(args.size, args.block, args.dtype)
        n = args.size * args.block
        what = f"y = A x, {n} x {n} over a {args.size} x {args.size} grid"
    s = r["stats"]
    exact = np.array_equal(r["y"], r["reference"])
    err = np.max(np.abs(r["y"].astype(np.float64) - r["numpy"]))
    print(f"{what} ({args.dtype}): {s.cycles} cycles, {s.pes.total('element_ops')} element "
          f"operations, {s.delivered} wavelets delivered")
    print(f"  bit-exact vs. once-rounded reference: {exact}; max |error| vs. float64: {err:.3g}")
    return 0 if exact else 1


if __name__ == "__main__":
    raise SystemExit(main())
