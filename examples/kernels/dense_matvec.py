"""Conformance program 1: y = A x + b on one PE.

The entries of x arrive as sparse wavelets (value + index j) on color X; only nonzero
entries are sent, the activation sparsity of seed 000 [0408]. Each one starts the task of
color X [0371], which gets x_j in GPR2 and j in GPR4 [0346] and accumulates column j of A
into the partial sums with one fused multiply-add vector instruction (the weight
descriptor adds GPR4 to its base, WLI [0524]). A closeout wavelet on X, whose index names
the `finish` task [0371], ends the stream: `finish` adds b and sends y on color Y.

On a wafer (``run_wafer``) the same program runs on PE (0, 0); x arrives through the west
edge port and y leaves through the east one.

    python examples/kernels/dense_matvec.py --rows 16 --cols 16
"""

from __future__ import annotations

import argparse
from fractions import Fraction

import numpy as np

import wafersim as ws

X, Y = 3, 7          # input and output colors
FINISH = 33          # a local id: the closeout's index starts this task

SOURCE = """
; y = A x + b, A stored column by column ({rows} x {cols}, {dtype})
.data
psum:  .space {dtype}, {rows}
bias:  .space {dtype}, {rows}
a:     .space {dtype}, {rows} * {cols}
dpsum: .dsd mem1d, base=psum, length={rows}, stride={esize}
dcol:  .dsd mem1d, base=a, length={rows}, stride={esize}, wli=1   ; column j at a + GPR4
dbias: .dsd mem1d, base=bias, length={rows}, stride={esize}
dy:    .dsd fabric_out, color={Y}, length={rows}, sw=1
.export a, bias, psum

.code
.task main, 40
.task acc, {X}
.task finish, {FINISH}

main:   lds0wds S0[1], dpsum       ; psum is both source 0 and destination
        lddwds  D[1], dpsum
        lds1wds S1[1], dcol
        lds1wds S1[2], dbias
        lddwds  D[2], dy
        li r10, {col_bytes}        ; bytes per column of a
        term

acc:    mul16 r4, r4, r10          ; GPR4 = j -> byte offset of column j
        {fmac}.t D[1], S0[1], S1[1]    ; psum += a[:, j] * x_j (x_j in GPR2{pair})

finish: {add} D[1], S0[1], S1[2]   ; psum += b
        lds1wds S1[3], dpsum
        {mov}.t D[2], S1[3]        ; y -> color {Y}
"""


def program(rows: int, cols: int, dtype: str = "fp16") -> str:
    esize = 2 if dtype == "fp16" else 4
    return SOURCE.format(
        rows=rows, cols=cols, dtype=dtype, esize=esize, col_bytes=rows * esize, X=X, Y=Y,
        FINISH=FINISH, fmac="fmach" if dtype == "fp16" else "fmacs",
        add="faddh" if dtype == "fp16" else "fadds", mov="mov16" if dtype == "fp16" else "mov32",
        pair="" if dtype == "fp16" else ":GPR3")


def reference(a, x, b, dtype):
    """Exact arithmetic rounded once per fused multiply-add, in the kernel's order."""
    t = np.dtype(np.float16 if dtype == "fp16" else np.float32)
    y = []
    for i in range(a.shape[0]):
        acc = t.type(0)
        for j in np.flatnonzero(x):
            acc = round_exact(exact(acc) + exact(a[i, j]) * exact(x[j]), t)
        y.append(round_exact(exact(acc) + exact(b[i]), t))
    return np.array(y, dtype=t)


def exact(v) -> Fraction:
    return Fraction(float(v))


def round_exact(value: Fraction, t: np.dtype):
    """Round-to-nearest-even of an exact rational to dtype t (finite results)."""
    guess = t.type(float(value))
    cands = {guess, np.nextafter(guess, t.type(np.inf)), np.nextafter(guess, t.type(-np.inf))}
    bits = np.uint16 if t.itemsize == 2 else np.uint32
    return min(cands, key=lambda c: (abs(exact(c) - value), int(np.array(c).view(bits)) & 1))


def _problem(rows: int, cols: int, dtype: str, density: float, seed: int):
    rng = np.random.default_rng(seed)
    npdt = np.float16 if dtype == "fp16" else np.float32
    a = rng.uniform(-1, 1, (rows, cols)).astype(npdt)
    b = rng.uniform(-1, 1, rows).astype(npdt)
    x = rng.uniform(-1, 1, cols).astype(npdt)
    x[rng.random(cols) > density] = 0
    return a, b, x


def run(rows: int = 16, cols: int = 16, dtype: str = "fp16", density: float = 0.6,
        seed: int = 0) -> dict:
    a, b, x = _problem(rows, cols, dtype, density, seed)
    pe = ws.pe.LonePE()
    pe.load(program(rows, cols, dtype))
    pe.write("a", a.T.ravel())  # column-major: column j is contiguous
    pe.write("bias", b)
    pe.launch("main")
    nz = np.flatnonzero(x)
    pe.inject(X, x[nz], dtype=dtype, index=nz, start=10)
    pe.close(X, FINISH, start=10 + len(nz))
    stats = pe.run()
    y = pe.output_values(Y, dtype)
    return {"y": y, "reference": reference(a, x, b, dtype), "numpy": (a.astype(np.float64) @ x + b),
            "stats": stats, "nonzero": len(nz)}


def run_wafer(rows: int = 16, cols: int = 16, dtype: str = "fp16", density: float = 0.6,
              seed: int = 0) -> dict:
    """The same on PE (0, 0) of a 1 x 1 wafer: x streamed in through the west edge port,
    y out through the east one. ``stats`` are PE (0, 0)'s."""
    a, b, x = _problem(rows, cols, dtype, density, seed)
    w = ws.Wafer(1, 1)
    w.route(X, [(0, -1), (0, 0)])
    w.route(Y, [(0, 0), (0, 1)])
    w.pe(0, 0).load(program(rows, cols, dtype))
    w.memcpy_h2d("a", a.T.ravel(), rect=(0, 0))
    w.memcpy_h2d("bias", b, rect=(0, 0))
    w.launch("main")
    nz = np.flatnonzero(x)
    w.stream((0, -1), X, x[nz], dtype=dtype, index=nz)
    w.close((0, -1), X, FINISH)
    run = w.run()
    y = w.collect((0, 1)).values(dtype, color=Y)
    return {"y": y, "reference": reference(a, x, b, dtype), "numpy": (a.astype(np.float64) @ x + b),
            "stats": run.pes[(0, 0)], "run": run, "nonzero": len(nz)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=32)
    ap.add_argument("--cols", type=int, default=32)
    ap.add_argument("--dtype", choices=["fp16", "fp32"], default="fp16")
    ap.add_argument("--wafer", action="store_true", help="run on PE (0, 0) of a wafer")
    args = ap.parse_args(argv)
    r = (run_wafer if args.wafer else run)(args.rows, args.cols, args.dtype)
    exact = np.array_equal(r["y"], r["reference"])
    err = np.max(np.abs(r["y"].astype(np.float64) - r["numpy"]))
    s = r["stats"]
    where = "PE (0, 0) of a wafer" if args.wafer else "one PE"
    print(f"y = A x + b, {args.rows} x {args.cols} {args.dtype} on {where}: "
          f"{s['cycles']} cycles, {s['tasks_started'].get(X, 0)} column tasks, "
          f"{s['element_ops']} element operations")
    print(f"  bit-exact vs. once-rounded reference: {exact}; max |error| vs. float64: {err:.3g}")
    return 0 if exact else 1


if __name__ == "__main__":
    raise SystemExit(main())
