"""ln(x) (natural logarithm) as CE instructions.

Subnormal x are first scaled by 2^N into the normal range. Adding (one - sqrt_half) to the
hi word carries into the exponent exactly when the mantissa is at least sqrt(2) (to the hi
word's precision), so x = 2^E m with m in [sqrt(1/2), sqrt(2)) comes out of two integer
operations: E = (u >> mantissa bits) - bias, m = (u & mantissa) + sqrt_half. E becomes a
float by the 1.5 * 2^p trick (its integer written into the low mantissa bits of a float
whose exponent is preset); f = m - 1 is exact; ln(1 + f) = f P(f) by Horner; and
ln(x) = (f P(f) + E ln2_lo) + E ln2_hi (E ln2_hi exact). Zeros, negative numbers,
infinities and NaNs are merged into the result's bits at the end.

fp16 data computed in fp32: fh2s makes every value normal or zero, one ln2 constant is
enough (|E| <= 25), one fs2h rounds the result.
"""

from __future__ import annotations

from .bits import mask_at_least, mask_below, merge, normalize_subnormals, sticky_magnitude
from .coefficients import LN
from .emitter import Buffer, Emitter, View
from .fpformat import FP16, FP32, FpFormat

__all__ = ["emit_ln"]

# An integer j in the low mantissa bits of a float with the exponent of 1.5 * 2^p: the
# float is 1.5 * 2^p + j. fp32: hi word 0x4B40, j = E + 0x8000 in the lo word.
# fp16: the word 0x6600 + j, j = E + 256 (0..511).
_MAGIC = {"fp32": (12582912.0, 0x8000), "fp16": (1536.0, 256)}


def emit_ln(e: Emitter, dtype: str, compute: str, x: Buffer, y: Buffer) -> None:
    if dtype == compute:
        _ln(e, FP32 if dtype == "fp32" else FP16, x, y)
    else:
        _ln_fp16_in_fp32(e, x, y)


def _reduce(e: Emitter, fmt: FpFormat, m: Buffer, u: Buffer, ef: Buffer, sqrt_half_hi: int,
            zb: Buffer | None) -> None:
    """m (normal or zero) -> f = m - 1, m in [sqrt(1/2), sqrt(2)); ef = E (minus N where
    zb) in the low mantissa bits of 1.5 * 2^p (``_exponent`` makes it a float). The fp32
    ``ef`` must have 0x4B40 in its hi words (set at load time, never written)."""
    _, offset = _MAGIC[fmt.name]
    e.comment("u = hi + (one - sqrt_half): E = (u >> p) - bias, m = (u & man) + sqrt_half")
    e.vop("add16", u.f, m.hi, fmt.one - sqrt_half_hi)
    e.vop("and16", m.hi, u.f, fmt.man_mask)
    e.vop("add16", m.hi, m.hi, sqrt_half_hi)
    low = ef.lo if fmt is FP32 else ef.f
    e.vop("shr16", low, u.f, fmt.man_hi_bits)
    base = offset - fmt.bias if fmt is FP32 else 0x6600 + offset - fmt.bias
    e.vop("add16", low, low, base)
    if zb is not None:
        e.vop("shr16", zb.f, zb.f, fmt.man_hi_bits)
        e.vop("sub16", low, low, zb.f)
    e.vop(fmt.op("sub"), m.f, m.f, 1.0)                 # f = m - 1, exact


def _exponent(e: Emitter, fmt: FpFormat, dst: Buffer, ef: Buffer) -> None:
    """dst = float(E) from ``_reduce``'s ef."""
    magic, offset = _MAGIC[fmt.name]
    e.vop(fmt.op("sub"), dst.f, ef.f, magic + offset)


def _horner_f(e: Emitter, fmt: FpFormat, acc: Buffer, f: Buffer, poly) -> None:
    """acc = f^2 (poly[2] + poly[3] f + ...) (poly[0] = 0, poly[1] = 1: the caller adds f
    last, so that its rounding errors shrink with f^2)."""
    op = fmt.op
    e.comment(f"ln(1 + f) = f + f^2 Q(f), degree {len(poly) - 1}")
    e.vop(op("mul"), acc.f, f.f, poly[-1])
    for ci in reversed(poly[2:-1]):
        e.vop(op("add"), acc.f, acc.f, ci)
        e.vop(op("mul"), acc.f, acc.f, f.f)
    e.vop(op("mul"), acc.f, acc.f, f.f)


def _special_bits(e: Emitter, fin: FpFormat, fout: FpFormat, xhi: View, a: Buffer,
                  z0: Buffer, b: Buffer, c: Buffer) -> None:
    """c = -1 where x is +-0, negative, inf or NaN; a = the hi word of ln(x) there: -inf for
    +-0, +inf for +inf, the quiet NaN for NaN and negative numbers. ``a`` holds the sticky
    magnitude on entry."""
    mask_below(e, z0.f, a.f, 1)                        # +-0
    e.vop("sar16", b.f, xhi, 15)                       # sign
    mask_at_least(e, c.f, a.f, fin.exp_mask)           # inf or NaN
    mask_at_least(e, a.f, a.f, fin.exp_mask + 1)       # NaN
    e.vop("or16", c.f, c.f, b.f)
    e.vop("or16", c.f, c.f, z0.f)
    e.vop("or16", a.f, a.f, b.f)                       # NaN or negative ...
    e.vop1("not16", b.f, z0.f)
    e.vop("and16", a.f, a.f, b.f)                      # ... and not +-0
    e.vop("and16", a.f, a.f, fout.unit >> 1)           # the quiet bit
    e.vop("and16", z0.f, z0.f, 0x8000)                 # -inf for +-0
    e.vop("or16", a.f, a.f, z0.f)
    e.vop("or16", a.f, a.f, fout.exp_mask)
    e.vop("and16", a.f, a.f, c.f)


def _ln(e: Emitter, fmt: FpFormat, x: Buffer, y: Buffer) -> None:
    c = LN[fmt.name]
    op = fmt.op
    a = e.buffer("a", "i16")
    zb = e.buffer("zb", "i16")
    b = e.buffer("b", "i16")
    cm = e.buffer("c", "i16")
    u = e.buffer("u", "i16")
    z = e.buffer("z", fmt.name)          # lo words stay 0
    m = e.buffer("m", fmt.name)
    ef = e.buffer("ef", fmt.name, hi_init=0x4B40 if fmt is FP32 else None)
    acc = e.buffer("p", fmt.name)
    e.comment("x' = x, subnormals times 2^N")
    sticky_magnitude(e, fmt, x, a)
    normalize_subnormals(e, fmt, x, a, m, zb, z)
    _reduce(e, fmt, m, u, ef, c["sqrt_half_hi"], zb)
    e.comment("specials: -inf for +-0, +inf for +inf, NaN for NaN and negatives")
    _special_bits(e, fmt, fmt, x.hi, a, zb, b, cm)
    _exponent(e, fmt, y, ef)                           # x is not read any more
    _horner_f(e, fmt, acc, m, c["poly"])
    e.comment("y = ((f^2 Q(f) + E ln2_lo) + f) + E ln2_hi, then the specials")
    e.vop(op("add"), acc.f, acc.f, m.f)
    e.vop(op("mul"), m.f, y.f, c["ln2_lo"])
    e.vop(op("add"), acc.f, acc.f, m.f)
    e.vop(op("mul"), m.f, y.f, c["ln2_hi"])
    e.vop(op("add"), y.f, acc.f, m.f)
    merge(e, y.hi, cm.f, a.f, cm.f)
    if fmt is FP32:
        e.vop("and16", y.lo, y.lo, cm.f)


def _ln_fp16_in_fp32(e: Emitter, x: Buffer, y: Buffer) -> None:
    c = LN["fp16_in_fp32"]
    op = FP32.op
    a = e.buffer("a", "i16")
    z0 = e.buffer("zb", "i16")
    b = e.buffer("b", "i16")
    cm = e.buffer("c", "i16")
    u = e.buffer("u", "i16")
    m = e.buffer("m", "fp32")
    ef = e.buffer("ef", "fp32", hi_init=0x4B40)
    acc = e.buffer("p", "fp32")
    eln2 = e.buffer("q", "fp32")
    e.comment("specials of the fp16 inputs")
    e.vop("and16", a.f, x.f, 0x7FFF)
    _special_bits(e, FP16, FP16, x.f, a, z0, b, cm)
    e.vop1("fh2s", m.f, x.f)
    _reduce(e, FP32, m, u, ef, c["sqrt_half_hi"], None)
    _exponent(e, FP32, eln2, ef)
    e.vop(op("mul"), eln2.f, eln2.f, c["ln2"])
    _horner_f(e, FP32, acc, m, c["poly"])
    e.comment("y = fp16((f^2 Q(f) + f) + E ln2), then the specials")
    e.vop(op("add"), acc.f, acc.f, m.f)
    e.vop(op("add"), acc.f, acc.f, eln2.f)
    e.vop1("fs2h", y.f, acc.f)
    merge(e, y.f, cm.f, a.f, cm.f)
