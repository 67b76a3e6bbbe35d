"""Speed of one compute element on the lone-PE bench (the 16 x 16 wafer benchmark,
bench_pe.py, comes with the fabric integration).

Prints simulated cycles per second and vector element operations per second for a few
programs, as ratios to two named baselines: an idle CE cycle (the bench's fixed cost per
cycle) and numpy's fp16 ``a + b * c`` over arrays (what a kernel writer would compare
element throughput against). The "values" rows run the multiply-accumulate loops on
nonzero, inexact values in two rounding modes (the plain rows' operands are zeros).
Run: python benchmarks/bench_ce.py [--cycles N]
"""

from __future__ import annotations

import argparse

import numpy as np

import wafersim as ws
from timing import best_of  # benchmarks/timing.py

VECTOR_LOOP = """
.data
x: .space {t}, 64
dx: .dsd mem1d, base=x, length=64, stride={s}
.code
.task t, 1
t:    lds0wds S0[0], dx
      lds1wds S1[0], dx
      lddwds D[0], dx
loop: {op} D[0], S0[0], S1[0]
      jmp loop
"""

# The same loop on nonzero values: y = x + x * 0.3 (x fixed, uniform in -1..1), so every
# result is inexact, under the FP control value `fpc` (docs/isa.md, setfpc): 0 = round to
# nearest even, 2053 = stochastic with 3 bits.
VALUE_LOOP = """
.data
x: .space {t}, 64
y: .space {t}, 64
dx: .dsd mem1d, base=x, length=64, stride={s}
dy: .dsd mem1d, base=y, length=64, stride={s}
.export x
.code
.task t, 1
t:    li r1, {fpc}
      setfpc r1
      li r2, {lo}
      li r3, {hi}
      lds0wds S0[0], dx
      lds1wds S1[0], dx
      lddwds D[0], dy
loop: {op} D[0], S0[0], S1[0]
      jmp loop
"""
SCALE = {"fp16": (0x34CD, 0), "fp32": (0x999A, 0x3E99)}  # 0.3: r2 (and r3 for fp32)

SCALAR_LOOP = """
.task t, 1
t:    li r1, 30000
loop: addi r1, -1
      eq16 r1, #0
      bf loop
      jmp t
"""


def value_loop(t: str, op: str, fpc: int) -> str:
    lo, hi = SCALE[t]
    return VALUE_LOOP.format(t=t, s=2 if t == "fp16" else 4, op=op, fpc=fpc, lo=lo, hi=hi)


def cycles_per_second(source: str | None, cycles: int) -> tuple[float, float]:
    x = np.random.default_rng(1).uniform(-1, 1, 64)

    def once():
        pe = ws.pe.LonePE()
        if source is not None:
            pe.load(source)
            if "y:" in source:
                dt = np.float16 if ".space fp16" in source else np.float32
                ws.pe.write_symbol(pe._ce, pe.program, "x", x.astype(dt))
            pe.launch("t")
        pe.run(cycles)
        once.ops = pe.stats()["element_ops"]
    t = best_of(once)
    return cycles / t, once.ops / t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cycles", type=int, default=1_000_000)
    args = ap.parse_args()
    n = 1 << 20
    a = np.random.default_rng(0).uniform(-1, 1, (3, n)).astype(np.float16)
    numpy_rate = n / best_of(lambda: a[0] + a[1] * a[2])
    idle, _ = cycles_per_second(None, args.cycles)
    print(f"baseline idle CE cycle:          {idle / 1e6:7.1f} M cycles/s")
    print(f"baseline numpy fp16 a + b * c:   {numpy_rate / 1e6:7.1f} M elements/s")
    rows = [("scalar loop (addi/eq16/bf)", SCALAR_LOOP),
            ("fmach loop, fp16 SIMD 4", VECTOR_LOOP.format(t="fp16", s=2, op="fmach")),
            ("fmacs loop, fp32", VECTOR_LOOP.format(t="fp32", s=4, op="fmacs")),
            ("fmach loop, values, rne", value_loop("fp16", "fmach", 0)),
            ("fmach loop, values, stochastic", value_loop("fp16", "fmach", 2053)),
            ("fmacs loop, values, rne", value_loop("fp32", "fmacs", 0)),
            ("fmacs loop, values, stochastic", value_loop("fp32", "fmacs", 2053))]
    for name, src in rows:
        cps, ops = cycles_per_second(src, args.cycles)
        vector = "loop," in name
        extra = f"   {ops / 1e6:6.1f} M element-ops/s = {ops / numpy_rate:.3f} x numpy" if vector else ""
        print(f"{name:34s} {cps / 1e6:7.2f} M cycles/s = {cps / idle:.2f} x idle{extra}")


if __name__ == "__main__":
    main()
