"""Steps the routines share, done with 16-bit integer operations on the hi words of floats
(fpformat.py): telling special values apart, scaling subnormals into the normal range,
and merging special results in.

A "mask" is an i16 vector of 0 or -1 (all ones) per element, made by shifting a sign bit
down (``sar16 .., 15``): the CE compares only into one flag for a whole vector, so
per-element choices are bit selections.
"""

from __future__ import annotations

from .emitter import Buffer, Emitter, View
from .fpformat import FP32, FpFormat

__all__ = ["sticky_magnitude", "mask_below", "mask_at_least", "normalize_subnormals",
           "merge", "NORMALIZE_SHIFT"]

# Subnormals are multiplied by 2^NORMALIZE_SHIFT: enough to make the smallest one normal.
NORMALIZE_SHIFT = {"fp32": 24, "fp16": 10}


def sticky_magnitude(e: Emitter, fmt: FpFormat, x: Buffer, a: Buffer) -> None:
    """a = the hi word of |x|, with bit 0 set when x's lo word is nonzero (fp32), so that
    a == 0 exactly for +-0, a == exp_mask for +-inf and a > exp_mask for NaN (5 operations
    for fp32, 1 for fp16)."""
    if fmt is FP32:
        e.vop1("neg16", a.f, x.lo)          # lo | -lo has bit 15 set iff lo != 0
        e.vop("or16", a.f, a.f, x.lo)
        e.vop("shr16", a.f, a.f, 15)
        e.vop("or16", a.f, a.f, x.hi)
        e.vop("and16", a.f, a.f, 0x7FFF)
    else:
        e.vop("and16", a.f, x.hi, 0x7FFF)


def mask_below(e: Emitter, dst: View, a: View, limit: int) -> None:
    """dst = -1 where a < limit, else 0 (a and limit in 0..0x7FFF)."""
    e.vop("add16", dst, a, -limit)
    e.vop("sar16", dst, dst, 15)


def mask_at_least(e: Emitter, dst: View, a: View, limit: int) -> None:
    """dst = -1 where a >= limit, else 0 (a in 0..0x7FFF, limit in 1..0x8000)."""
    e.vop("add16", dst, a, 0x8000 - limit)
    e.vop("sar16", dst, dst, 15)


def normalize_subnormals(e: Emitter, fmt: FpFormat, x: Buffer, a: Buffer, xn: Buffer,
                         zb: Buffer, z: Buffer) -> None:
    """xn = x * 2^N where x is subnormal (or zero), x elsewhere (N = NORMALIZE_SHIFT), so
    that later steps see only normal numbers, zeros, infinities and NaNs; zb = N in the
    exponent field (N << mantissa bits of the hi word) there, 0 elsewhere, for the exponent
    arithmetic to take back. ``a`` is the sticky magnitude; ``z`` is a scratch vector whose
    lo words stay zero (4 integer operations and one multiplication, exact)."""
    mask_below(e, zb.f, a.f, fmt.unit)
    e.vop("and16", zb.f, zb.f, NORMALIZE_SHIFT[fmt.name] << fmt.man_hi_bits)
    e.vop("add16", z.hi, zb.f, fmt.one)
    e.vop(fmt.op("mul"), xn.f, x.f, z.f)


def merge(e: Emitter, target: View, mask: View, value: View, scratch: View) -> None:
    """target = target where mask is 0, value where it is -1 (value must be 0 outside the
    mask). ``scratch`` receives ~mask."""
    e.vop1("not16", scratch, mask)
    e.vop("and16", target, target, scratch)
    e.vop("or16", target, target, value)
