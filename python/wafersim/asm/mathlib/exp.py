"""exp(x) as CE instructions.

x is clamped to [lo, hi] (beyond it the result is 0 or inf anyway); k = round(x / ln2)
comes from adding 1.5 * 2^p (p = mantissa bits) to x log2(e), which leaves k in the low
bits of the sum (its lo word for fp32, its word minus 0x6600 for fp16); r = x - k ln2 with
ln2 in two parts (Cody-Waite: k * ln2_hi is exact); exp(r) is a Horner polynomial; the
result is p(r) * 2^k1 * 2^k2 with k1 = floor(k / 2), k2 = k - k1, both factors normal and
built in their hi words from k by integer operations, so results that are subnormal are
rounded once (by the last multiplication) and results that overflow become inf.
NaN inputs (lost by the clamp: fmax/fmin return the other operand) are found from the bits
and their result's hi word ORed with the quiet NaN (the clamped result is +0 there).

fp16 results computed in fp32 (``_exp_fp16_in_fp32``) use 2^x instead: t = x log2(e),
k = round(t), f = t - k exactly, 2^f by a polynomial, one factor 2^k, and one conversion to
fp16 rounds the whole result once.
"""

from __future__ import annotations

from .bits import mask_at_least, sticky_magnitude
from .coefficients import EXP, LOG2E
from .emitter import Buffer, Emitter
from .fpformat import FP16, FP32, FpFormat

__all__ = ["emit_exp"]


def emit_exp(e: Emitter, dtype: str, compute: str, x: Buffer, y: Buffer) -> None:
    if dtype == compute:
        _exp(e, FP32 if dtype == "fp32" else FP16, x, y)
    else:
        _exp_fp16_in_fp32(e, x, y)


def _nan_bits(e: Emitter, fmt: FpFormat, x: Buffer) -> Buffer:
    """An i16 vector: the quiet NaN's hi word where x is NaN, 0 elsewhere."""
    nan = e.buffer("nan", "i16")
    e.comment("NaN inputs: their results' hi word gets the quiet NaN")
    sticky_magnitude(e, fmt, x, nan)
    mask_at_least(e, nan.f, nan.f, fmt.exp_mask + 1)
    e.vop("and16", nan.f, nan.f, fmt.qnan)
    return nan


def _exp(e: Emitter, fmt: FpFormat, x: Buffer, y: Buffer) -> None:
    c = EXP[fmt.name]
    f = fmt.op
    nan = _nan_bits(e, fmt, x)
    t = e.buffer("t", fmt.name)
    k = e.buffer("k", fmt.name)
    s1 = e.buffer("s1", fmt.name)     # for fp32, only hi words are written: lo stays 0
    s2 = e.buffer("s2", fmt.name)
    lo, hi = c["clamp"]
    e.comment(f"t = clamp(x, {lo}, {hi}); k = t log2(e) + 1.5 * 2^p: k in the low bits")
    e.vop(f("max"), t.f, x.f, lo)
    e.vop(f("min"), t.f, t.f, hi)
    e.vop(f("mul"), k.f, t.f, float(fmt.np_dtype(LOG2E)))
    e.vop(f("add"), k.f, k.f, c["magic"])
    # fp32: k.lo = k; fp16: k.f = 0x6600 + k, and 0x6600 / 2 = 0x3300 vanishes when
    # shifted left by 10, so the factors' words come out right without subtracting it.
    kbits = k.lo if fmt is FP32 else k.f
    e.comment("s1 = 2^floor(k/2), s2 = 2^(k - floor(k/2)) in their hi words")
    e.vop("sar16", s1.hi, kbits, 1)
    e.vop("sub16", s2.hi, kbits, s1.hi)
    for s in (s1, s2):
        e.vop("shl16", s.hi, s.hi, fmt.man_hi_bits)
        e.vop("add16", s.hi, s.hi, fmt.one)
    e.comment("k = float(k); r = t - k ln2_hi - k ln2_lo (y as scratch)")
    e.vop(f("sub"), k.f, k.f, c["magic"])
    e.vop(f("mul"), y.f, k.f, c["ln2_hi"])
    e.vop(f("sub"), t.f, t.f, y.f)
    e.vop(f("mul"), y.f, k.f, c["ln2_lo"])
    e.vop(f("sub"), t.f, t.f, y.f)
    _horner(e, fmt, k, t, c["poly"])
    e.comment("y = p(r) s1 s2, NaN where x is NaN")
    e.vop(f("mul"), y.f, k.f, s1.f)
    e.vop(f("mul"), y.f, y.f, s2.f)
    e.vop("or16", y.hi, y.hi, nan.f)


def _horner(e: Emitter, fmt: FpFormat, acc: Buffer, r: Buffer, poly) -> None:
    """acc = sum poly[i] r^i by Horner's rule (poly lowest degree first)."""
    f = fmt.op
    e.comment(f"Horner: degree {len(poly) - 1}")
    e.vop(f("mul"), acc.f, r.f, poly[-1])
    for i, ci in enumerate(reversed(poly[:-1])):
        e.vop(f("add"), acc.f, acc.f, ci)
        if i < len(poly) - 2:
            e.vop(f("mul"), acc.f, acc.f, r.f)


def _exp_fp16_in_fp32(e: Emitter, x: Buffer, y: Buffer) -> None:
    c = EXP["fp16_in_fp32"]
    f = FP32.op
    nan = _nan_bits(e, FP16, x)
    t = e.buffer("t", "fp32")
    k = e.buffer("k", "fp32")
    s = e.buffer("s", "fp32")        # only hi words written: lo stays 0
    lo, hi = c["clamp"]
    e.comment(f"t = clamp(x, {lo}, {hi}) log2(e) in fp32; k = round(t); f = t - k")
    e.vop1("fh2s", t.f, x.f)
    e.vop(f("max"), t.f, t.f, lo)
    e.vop(f("min"), t.f, t.f, hi)
    e.vop(f("mul"), t.f, t.f, float(FP32.np_dtype(LOG2E)))
    e.vop(f("add"), k.f, t.f, c["magic"])
    e.vop("shl16", s.hi, k.lo, FP32.man_hi_bits)      # s = 2^k: |k| <= 26, one factor
    e.vop("add16", s.hi, s.hi, FP32.one)
    e.vop(f("sub"), k.f, k.f, c["magic"])
    e.vop(f("sub"), t.f, t.f, k.f)
    _horner(e, FP32, k, t, c["poly"])
    e.comment("y = fp16(2^f 2^k), NaN where x is NaN")
    e.vop(f("mul"), k.f, k.f, s.f)
    e.vop1("fs2h", y.f, k.f)
    e.vop("or16", y.f, y.f, nan.f)
