"""Small helpers shared by the compute-element tests."""

from __future__ import annotations

import numpy as np

import wafersim as ws
from wafersim.asm import encode_line

SINK = 9  # a fabric color the tests collect output on


def doubling_program(n: int) -> str:
    """Task `t` doubles the n fp16 values of `x` in place (x = x + x): one long vector
    operation over memory alone, which runs in bulk."""
    return f"""
    .data
    x: .space fp16, {n}
    vx: .dsd mem1d, base=x, length={n}, stride=2
    .export x
    .code
    .task t, 1
    t: lds0wds S0[0], vx
       lds1wds S1[0], vx
       lddwds D[0], vx
       faddh.t D[0], S0[0], S1[0]
    """


def run_program(source: str, *, launch=None, inject=(), cycles=None, **pe_args):
    """Assembles and loads `source`, queues injections (color, values, kwargs), launches
    the named tasks, runs, and returns the bench."""
    pe = ws.pe.LonePE(**pe_args)
    pe.load(source)
    for color, values, kw in inject:
        pe.inject(color, values, **kw)
    for t in ([launch] if isinstance(launch, (str, int)) else (launch or [])):
        pe.launch(t)
    pe.run(cycles) if cycles is not None else pe.run()
    return pe


def load_words(pe: ws.pe.LonePE, at: int, lines: list[str]) -> None:
    """Places hand-encoded instructions at instruction index `at` (bypassing the
    assembler's entry table, to test the CE's own address computation)."""
    words = np.array([encode_line(t, pc=at + k) for k, t in enumerate(lines)], dtype=np.uint32)
    pe._ce.load_code(at, words)


def sent(pe: ws.pe.LonePE, color: int = SINK) -> list[int]:
    """The low 16 data bits of every wavelet sent on `color`, in order."""
    return [int(d) & 0xFFFF for d in pe.output(color)["data"]]


# A task body that reports GPR2 (the picked wavelet's data) on the sink color.
REPORT_R2 = f"""
.data
rep: .dsd fabric_out, color={SINK}, length=1, sw=1
.code
"""


def random_bench(words, rng, **pe_args) -> ws.pe.LonePE:
    """A lone PE holding `words` from instruction 0 (task 0's entry), with random memory,
    descriptors, stride registers, GPRs and input wavelets on colors 0 and 3, launched on
    task 0: the start of a random-program run (robustness tests, golden runs)."""
    pe = ws.pe.LonePE(loopback=[2], memory_bytes=8192, code_bytes=2048, **pe_args)
    pe._ce.load_code(0, np.array(words, dtype=np.uint32))
    pe.write_memory(0, rng.integers(0, 256, 6144, dtype=np.uint8))
    for kind in ("s0", "s1", "d"):
        for n in range(12):
            pe._ce.set_dsr(kind, n, int(rng.integers(0, 2**48, dtype=np.uint64)))
    for n in range(2, 8):
        pe._ce.set_xdsr(n, int(rng.integers(0, 2**51, dtype=np.uint64)))
        pe._ce.set_stride_reg(n, int(rng.integers(0, 2**15)))
    for r in range(16):
        pe.set_gpr(r, int(rng.integers(0, 65536)))
    pe.inject_wavelets(0, rng.integers(0, 2**32, 8, dtype=np.uint64), index=rng.integers(0, 65536, 8),
                       ctrl=rng.integers(0, 2, 8))
    pe.inject_wavelets(3, rng.integers(0, 2**32, 8, dtype=np.uint64))
    pe.launch(0)
    return pe
