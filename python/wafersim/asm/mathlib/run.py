"""Running a math-library routine on a lone PE: for users trying it and for its tests."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...errors import ConfigError
from .routine import DATA_BYTES, Routine

__all__ = ["run_on_pe", "PeRun"]

_PREFIX = "mlrun"
_GPRS = ("r0", "r1")
_DSRS = (9, 10, 11)


class PeRun(NamedTuple):
    """What :func:`run_on_pe` returns: the results (same dtype and length as the input),
    the routine as built for the first (largest) piece, and the cycles measured on the PE
    (cycle counter read before and after the routine's code), one entry per piece."""

    values: np.ndarray
    routine: Routine
    cycles: tuple[int, ...]


def _program(r: Routine) -> str:
    t = "fp32" if r.dtype == "fp32" else "fp16"
    return "\n".join([
        ".data",
        f"{_PREFIX}_x: .space {t}, {r.n}",
        f"{_PREFIX}_y: .space {t}, {r.n}",
        *r.data,
        f".export {_PREFIX}_x, {_PREFIX}_y",
        ".code",
        ".task main, 40",
        "main:   rdcyc r10",
        *r.code,
        "        rdcyc r13",
        "        term",
    ]) + "\n"


def run_on_pe(fn, dtype: str, values, *, compute: str | None = None, in_place: bool = False,
              max_n: int | None = None) -> PeRun:
    """Runs ``fn`` (``mathlib.exp``, ``reciprocal``, ``rsqrt`` or ``ln``) on ``values`` on a
    lone PE (``ws.pe.LonePE``) and returns a :class:`PeRun`.

    ``values`` are rounded to ``dtype`` (an array of that dtype passes bit for bit, NaN
    payloads included). Long inputs run in pieces of at most ``max_n`` elements (by
    default as many as PE data memory holds), one routine per piece length, all on one
    PE. ``in_place=True`` writes the results over the inputs (dst == src).
    """
    from ... import pe as pe_mod
    from ..ce_assembler import assemble

    if dtype not in ("fp16", "fp32"):
        raise ConfigError(f"run_on_pe: dtype must be 'fp16' or 'fp32', got {dtype!r}")
    npdt = np.float32 if dtype == "fp32" else np.float16
    x = np.asarray(values)
    x = x.astype(npdt) if x.dtype != npdt else x
    x = np.ascontiguousarray(x.ravel())
    if x.size == 0:
        raise ConfigError("run_on_pe: values is empty; the routines take n >= 1 elements")
    dst = f"{_PREFIX}_x" if in_place else f"{_PREFIX}_y"

    def routine(n: int) -> Routine:
        return fn(dtype, n=n, src=f"{_PREFIX}_x", dst=dst, prefix=_PREFIX, dsrs=_DSRS,
                  gprs=_GPRS, compute=compute)

    one = routine(1)
    per_element = one.scratch_bytes + 2 * x.itemsize
    fit = (DATA_BYTES - 2048) // per_element
    chunk = min(x.size, fit if max_n is None else max(1, min(int(max_n), fit)))
    out = np.empty_like(x)
    cycles = []
    first = None
    cache: dict[int, tuple] = {}
    for start in range(0, x.size, chunk):
        piece = x[start:start + chunk]
        if piece.size not in cache:
            r = routine(piece.size)
            prog = assemble(_program(r))
            pe = pe_mod.LonePE()
            pe.load(prog)
            cache[piece.size] = (r, pe, prog.symbols[f"{_PREFIX}_x"].address,
                                 prog.symbols[dst].address)
        r, pe, xa, ya = cache[piece.size]
        first = first or r
        pe.write_memory(xa, piece)
        pe.launch("main")
        pe.run()
        t0 = pe.gpr(10) | pe.gpr(11) << 16
        t1 = pe.gpr(13) | pe.gpr(14) << 16
        cycles.append(t1 - t0 - 1)
        out[start:start + piece.size] = pe.read_memory(ya, piece.nbytes).view(npdt)
    return PeRun(out, first, tuple(cycles))
