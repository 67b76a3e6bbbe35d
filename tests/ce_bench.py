"""Small helpers shared by the compute-element tests."""

from __future__ import annotations

import numpy as np

import wafersim as ws
from wafersim.asm import encode_line

SINK = 9  # a fabric color the tests collect output on


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
