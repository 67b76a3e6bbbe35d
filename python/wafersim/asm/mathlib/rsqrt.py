"""1 / sqrt(x) as CE instructions.

Subnormal x are first scaled by 2^N (N even) into the normal range. Then x = 4^j m with
m in [1, 4): m keeps the mantissa and the lowest exponent bit (flipped: the bias is odd);
rsqrt(m) by Newton-Raphson y <- y (3/2 - (m/2) y^2) from a hi-word magic seed
y0 = C - (m >> 1) (3.8% off at most); rsqrt(x) = y 2^(-j + N/2), one normal factor built
from the exponent field. Zeros, infinities, negative numbers and NaNs put +-inf, 0 or NaN
into that factor instead (y is positive and finite).

fp16 data computed in fp32: fh2s makes every value normal or zero; the factor 2^64 of a zero
and 2^-64 of an infinity overflow and underflow in fs2h by themselves, so only signs and
NaNs are patched, on the fp16 result.
"""

from __future__ import annotations

from .bits import mask_at_least, mask_below, merge, normalize_subnormals, sticky_magnitude
from .coefficients import RSQRT_SEED
from .emitter import Buffer, Emitter
from .fpformat import FP16, FP32, FpFormat

__all__ = ["emit_rsqrt", "reduce_and_iterate", "fp16_signs_and_nans"]

ITERATIONS = {"fp32": 3, "fp16": 2, "fp16_in_fp32": 2}


def emit_rsqrt(e: Emitter, dtype: str, compute: str, x: Buffer, y: Buffer) -> None:
    if dtype == compute:
        _rsqrt(e, FP32 if dtype == "fp32" else FP16, x, y)
    else:
        _rsqrt_fp16_in_fp32(e, x, y)


def _factor(e: Emitter, fmt: FpFormat, m: Buffer, s: Buffer, zb: Buffer | None) -> None:
    """s = 2^(-floor((E' - bias) / 2) [+ N/2 where zb]) in its hi word:
    field = (3 bias + 1) / 2 - floor((E' + 1) / 2) (+ N/2); zb is consumed."""
    top = ((3 * fmt.bias + 1) // 2) << fmt.man_hi_bits
    e.vop("and16", s.hi, m.hi, fmt.exp_mask)
    e.vop("add16", s.hi, s.hi, fmt.unit)
    e.vop("shr16", s.hi, s.hi, 1)
    e.vop("and16", s.hi, s.hi, fmt.exp_mask)
    if zb is None:
        e.vop1("neg16", s.hi, s.hi)
        e.vop("add16", s.hi, s.hi, top)
    else:
        e.vop("shr16", zb.f, zb.f, 1)
        e.vop("add16", zb.f, zb.f, top)
        e.vop("sub16", s.hi, zb.f, s.hi)


def reduce_and_iterate(e: Emitter, fmt: FpFormat, m: Buffer, w: Buffer, tmp: Buffer,
                        seed: int, iterations: int, refine: bool) -> None:
    """w = rsqrt(m'), m' = m reduced to [1, 4) (m is overwritten with -m'/2); with
    ``refine`` the last step is y + y (1/2 - (m/2) y^2)."""
    e.comment("m in [1, 4): mantissa and the exponent's low bit, flipped, over the bias")
    e.vop("and16", m.hi, m.hi, fmt.unit | fmt.man_mask)
    e.vop("xor16", m.hi, m.hi, fmt.unit)
    e.vop("add16", m.hi, m.hi, fmt.one)
    e.comment(f"seed y0 = {seed:#06x} - (m >> 1) (hi word), then {iterations} Newton-Raphson steps")
    e.vop("shr16", w.hi, m.hi, 1)
    e.vop1("neg16", w.hi, w.hi)
    e.vop("add16", w.hi, w.hi, seed)
    if fmt is FP32:
        e.vop1("mov16", w.lo, 0)
    f = fmt.op
    e.vop(f("mul"), m.f, m.f, -0.5)
    for i in range(iterations):
        last = refine and i == iterations - 1
        e.vop(f("mul"), tmp.f, w.f, w.f)
        e.vop(f("mul"), tmp.f, tmp.f, m.f)            # -(m/2) y^2
        if last:                                      # exact: m y^2 / 2 is close to 1/2
            e.vop(f("add"), tmp.f, tmp.f, 0.5)
            e.vop(f("mul"), tmp.f, tmp.f, w.f)
            e.vop(f("add"), w.f, w.f, tmp.f)
        else:
            e.vop(f("add"), tmp.f, tmp.f, 1.5)
            e.vop(f("mul"), w.f, w.f, tmp.f)


def _specials(e: Emitter, fin: FpFormat, fout: FpFormat, xhi, a: Buffer, z0: Buffer,
              b: Buffer, c: Buffer, target) -> None:
    """target (a hi-word view of the factor) = +-inf for +-0, 0 for +inf, NaN for NaN and
    negative numbers; unchanged elsewhere. Classes from the sticky magnitude ``a`` and the
    sign of ``xhi`` (format ``fin``); values in format ``fout``. a, z0, b, c: i16 scratch."""
    mask_below(e, z0.f, a.f, 1)                        # +-0
    e.vop("sar16", b.f, xhi, 15)                       # sign
    mask_at_least(e, c.f, a.f, fin.exp_mask)           # inf or NaN
    mask_at_least(e, a.f, a.f, fin.exp_mask + 1)       # NaN
    e.vop("or16", c.f, c.f, b.f)
    e.vop("or16", c.f, c.f, z0.f)                      # every special class
    e.vop("or16", a.f, a.f, b.f)                       # NaN or negative ...
    e.vop1("not16", b.f, z0.f)
    e.vop("and16", a.f, a.f, b.f)                      # ... but not -0
    e.vop("and16", a.f, a.f, fout.qnan)
    e.vop("and16", b.f, xhi, 0x8000)
    e.vop("or16", b.f, b.f, fout.exp_mask)
    e.vop("and16", b.f, b.f, z0.f)                     # +-inf for +-0
    e.vop("or16", a.f, a.f, b.f)
    merge(e, target, c.f, a.f, c.f)


def fp16_signs_and_nans(e: Emitter, x: Buffer, a: Buffer, b: Buffer, c: Buffer) -> None:
    """For fp16 inputs x: a = the quiet NaN where x is NaN or negative and nonzero (else 0),
    c = x's sign bits; b is scratch."""
    e.comment("fp16 inputs: a = quiet NaN where NaN or negative nonzero, c = sign bits")
    e.vop("and16", a.f, x.f, 0x7FFF)
    mask_at_least(e, b.f, a.f, 1)                      # nonzero
    e.vop("sar16", c.f, x.f, 15)
    e.vop("and16", b.f, b.f, c.f)                      # negative nonzero
    mask_at_least(e, a.f, a.f, FP16.exp_mask + 1)      # NaN
    e.vop("or16", a.f, a.f, b.f)
    e.vop("and16", a.f, a.f, FP16.qnan)
    e.vop("and16", c.f, x.f, 0x8000)


def _rsqrt(e: Emitter, fmt: FpFormat, x: Buffer, y: Buffer) -> None:
    a = e.buffer("a", "i16")
    zb = e.buffer("zb", "i16")
    b = e.buffer("b", "i16")
    c = e.buffer("c", "i16")
    z = e.buffer("z", fmt.name)          # lo words stay 0
    m = e.buffer("m", fmt.name)
    s = e.buffer("s", fmt.name)          # lo words stay 0
    w = e.buffer("w", fmt.name)
    e.comment("x' = x, subnormals times 2^N")
    sticky_magnitude(e, fmt, x, a)
    normalize_subnormals(e, fmt, x, a, m, zb, z)
    _factor(e, fmt, m, s, zb)
    e.comment("+-0 -> +-inf, +inf -> 0, negative or NaN -> NaN: in the factor")
    _specials(e, fmt, fmt, x.hi, a, zb, b, c, s.hi)
    reduce_and_iterate(e, fmt, m, w, y, RSQRT_SEED[fmt.name], ITERATIONS[fmt.name], True)
    e.vop(fmt.op("mul"), y.f, w.f, s.f)


def _rsqrt_fp16_in_fp32(e: Emitter, x: Buffer, y: Buffer) -> None:
    a = e.buffer("a", "i16")
    b = e.buffer("b", "i16")
    m = e.buffer("m", "fp32")
    s = e.buffer("s", "fp32")           # lo words stay 0
    w = e.buffer("w", "fp32")
    t = e.buffer("t", "fp32")
    c = e.buffer("c", "i16")
    fp16_signs_and_nans(e, x, a, b, c)
    e.vop1("fh2s", m.f, x.f)
    _factor(e, FP32, m, s, None)
    reduce_and_iterate(e, FP32, m, w, t, RSQRT_SEED["fp32"], ITERATIONS["fp16_in_fp32"], False)
    e.comment("y = fp16(y s) with the sign of a zero, NaN for NaN and negatives")
    e.vop(FP32.op("mul"), w.f, w.f, s.f)
    e.vop1("fs2h", y.f, w.f)
    e.vop("or16", y.f, y.f, c.f)
    e.vop("or16", y.f, y.f, a.f)
