"""A routine's operations, done by numpy: the same bits as the compute element, for any
number of elements at once, without a PE.

The routines are elementwise sequences of 16-bit integer operations and IEEE fp16/fp32
operations rounded to nearest even; numpy's float32 and float16 arithmetic rounds each
operation once to nearest even (its float16 arithmetic goes through float32, which is wide
enough that the second rounding never changes the result: 24 >= 2 * 11 + 2 bits), and keeps
subnormals, as the CE's data path does at the FP control register's default. Max and min
follow the CE (a NaN operand yields the other one; -0 < +0). tests/test_mathlib.py checks
this reference against the PE bit for bit.
"""

from __future__ import annotations

import numpy as np

from ..ce_isa import isa
from .emitter import View

__all__ = ["evaluate"]

_FLOAT = {"fp16": (np.float16, np.uint16), "fp32": (np.float32, np.uint32)}


class _Memory:
    """The routine's vectors as byte arrays of ``length`` elements."""

    def __init__(self, length: int):
        self.length = length
        self.arrays: dict[str, np.ndarray] = {}

    def add(self, label: str, kind: str, hi_init: int | None = None) -> np.ndarray:
        size = 4 if kind == "fp32" else 2
        mem = np.zeros(self.length * size, dtype=np.uint8)
        if hi_init is not None:
            mem.view(np.uint32)[:] = (hi_init & 0xFFFF) << 16
        self.arrays[label] = mem
        return mem

    def view(self, v: View, bits: int) -> np.ndarray:
        mem = self.arrays[v.label]
        dt = np.uint16 if bits == 16 else np.uint32
        return np.ndarray(shape=(self.length,), dtype=dt, buffer=mem, offset=v.offset,
                          strides=(v.stride,))


def _fmax_min(a: np.ndarray, b: np.ndarray, ub, want_max: bool) -> np.ndarray:
    an, bn = np.isnan(a), np.isnan(b)
    with np.errstate(invalid="ignore"):
        pick_a = (a > b) if want_max else (a < b)
    eq = a == b
    a_neg = np.signbit(a)
    pick_a = np.where(eq, a_neg != want_max, pick_a)
    r = np.where(pick_a, a, b)
    r = np.where(an & ~bn, b, r)
    r = np.where(bn & ~an, a, r)
    bits = r.view(ub).copy()
    quiet = ub(0x0200 if ub is np.uint16 else 0x00400000)
    both = an & bn
    bits[both] = a.view(ub)[both] | quiet
    return bits


def _run(op, a, b, elem):
    """One operation on arrays of bits (uint16 or uint32); returns the result's bits."""
    kind = op.raw["op"]
    if elem == "i16":
        a16 = None if a is None else a.astype(np.uint16)
        b16 = b.astype(np.uint16)
        if kind == "add":
            return a16 + b16
        if kind == "sub":
            return a16 - b16
        if kind == "and":
            return a16 & b16
        if kind == "or":
            return a16 | b16
        if kind == "xor":
            return a16 ^ b16
        if kind == "shl":
            return a16 << (b16 & 15)
        if kind == "shr":
            return a16 >> (b16 & 15)
        if kind == "sar":
            return (a16.view(np.int16) >> (b16 & 15).astype(np.int16)).view(np.uint16)
        if kind == "neg":
            return np.uint16(0) - b16
        if kind == "not":
            return ~b16
        if kind == "mov":
            return b16
        raise AssertionError(f"no reference for {op.mnemonic}")
    ft, ut = _FLOAT[elem]
    fb = b.astype(ut).view(ft)
    if kind == "cvt":
        dt, dut = _FLOAT[op.dst]
        return fb.astype(dt).view(dut)
    fa = a.astype(ut).view(ft)
    if kind in ("fmax", "fmin"):
        return _fmax_min(fa, fb, ut, kind == "fmax")
    f = {"fadd": np.add, "fsub": np.subtract, "fmul": np.multiply}[kind]
    return f(fa, fb).astype(ft).view(ut)


def evaluate(ops, buffers: dict, src: str, dst: str, dtype: str, values) -> np.ndarray:
    """Runs ``ops`` (an Emitter's record) on ``values`` (array of ``dtype``): the results."""
    ft, ut = _FLOAT[dtype]
    x = np.ascontiguousarray(np.asarray(values, dtype=ft).ravel())
    mem = _Memory(x.size)
    mem.add(src, dtype)[:] = x.view(np.uint8)
    if dst != src:
        mem.add(dst, dtype)
    for label, (kind, hi_init) in buffers.items():
        mem.add(label, kind, hi_init)
    table = isa().ops
    with np.errstate(all="ignore"):
        for mnemonic, d, s0, s1 in ops:
            op = table[mnemonic]
            elem = op.src
            bits = 32 if elem == "fp32" else 16
            if isinstance(s1, View):
                b = mem.view(s1, bits)
            elif elem in _FLOAT:
                fdt, udt = _FLOAT[elem]
                b = np.full(x.size, s1, dtype=fdt).view(udt)
            else:
                b = np.full(x.size, int(s1) & 0xFFFF, dtype=np.uint16)
            a = None if s0 is None else mem.view(s0, bits)
            r = _run(op, a, b, elem)
            out_bits = 32 if op.dst == "fp32" else 16
            mem.view(d, out_bits)[:] = r
    return mem.arrays[dst].view(ft).copy()
