"""sqrt(x) as CE instructions, on rsqrt's reduction.

As rsqrt.py: subnormals scaled by 2^N, x = 4^j m with m in [1, 4), y ~ rsqrt(m) by
Newton-Raphson steps on h = -m/2 (one fewer). The last step is the coupled one for
sqrt(m) = m y: u = h y = -(m y)/2, r = 1/2 + u y (= 1/2 - m y^2 / 2, small: one rounding
of u y near -1/2), u <- u + u r, quadratically convergent from y's error; sqrt(x) = u * (-2^(j + 1)) (minus
N/2 for scaled subnormals), the factor built negative so that the -2 costs nothing.
+-0, +inf, negative numbers and NaN put -+0, -inf or NaN into that factor (u < 0 and
finite), giving sqrt(+-0) = +-0, sqrt(+inf) = +inf and NaN.

fp16 data computed in fp32: two plain rsqrt steps, then u = h y and the factor; the factor
of a zero (2^-62) and of an infinity (2^66) round to 0 and inf in fs2h; the sign of -0 and
NaN for NaN and negatives are ORed into the fp16 result.
"""

from __future__ import annotations

from .bits import mask_at_least, mask_below, merge, normalize_subnormals, sticky_magnitude
from .coefficients import RSQRT_SEED
from .emitter import Buffer, Emitter
from .fpformat import FP16, FP32, FpFormat
from .rsqrt import fp16_signs_and_nans, reduce_and_iterate

__all__ = ["emit_sqrt"]

STEPS = {"fp32": 2, "fp16": 1, "fp16_in_fp32": 2}     # plain rsqrt steps before the last


def emit_sqrt(e: Emitter, dtype: str, compute: str, x: Buffer, y: Buffer) -> None:
    if dtype == compute:
        _sqrt(e, FP32 if dtype == "fp32" else FP16, x, y)
    else:
        _sqrt_fp16_in_fp32(e, x, y)


def _factor(e: Emitter, fmt: FpFormat, m: Buffer, s: Buffer, zb: Buffer | None) -> None:
    """s = -2^(floor((E' - bias) / 2) + 1 [- N/2 where zb]) in its hi word: field =
    (bias + 1) / 2 + floor((E' + 1) / 2) (- N/2), sign set. zb is consumed."""
    low = ((fmt.bias + 1) // 2) << fmt.man_hi_bits
    e.vop("and16", s.hi, m.hi, fmt.exp_mask)
    e.vop("add16", s.hi, s.hi, fmt.unit)
    e.vop("shr16", s.hi, s.hi, 1)
    e.vop("and16", s.hi, s.hi, fmt.exp_mask)
    if zb is not None:
        e.vop("shr16", zb.f, zb.f, 1)
        e.vop("sub16", s.hi, s.hi, zb.f)
    e.vop("add16", s.hi, s.hi, 0x8000 | low)


def _specials(e: Emitter, fmt: FpFormat, xhi, a: Buffer, z0: Buffer, b: Buffer, c: Buffer,
              target) -> None:
    """target (the factor's hi word; the result is u * factor with u < 0) = -0 for +0, +0
    for -0, -inf for +inf, NaN for NaN and negative numbers; unchanged elsewhere."""
    mask_below(e, z0.f, a.f, 1)                        # +-0
    e.vop("sar16", b.f, xhi, 15)                       # sign
    mask_at_least(e, c.f, a.f, fmt.exp_mask)           # inf or NaN
    mask_at_least(e, a.f, a.f, fmt.exp_mask + 1)       # NaN
    e.vop("or16", a.f, a.f, b.f)                       # NaN or negative ...
    e.vop1("not16", b.f, b.f)
    e.vop("and16", b.f, b.f, c.f)                      # +inf or +NaN
    e.vop("or16", c.f, c.f, a.f)
    e.vop("or16", c.f, c.f, z0.f)                      # every special class
    e.vop("and16", b.f, b.f, 0x8000 | fmt.exp_mask)    # -inf (with a's NaN: still NaN)
    e.vop1("not16", z0.f, z0.f)
    e.vop("and16", a.f, a.f, z0.f)                     # ... but not -0
    e.vop("and16", a.f, a.f, fmt.qnan)
    e.vop("or16", a.f, a.f, b.f)
    e.vop("xor16", b.f, xhi, 0x8000)                   # -+0 for +-0: the flipped sign
    e.vop1("not16", z0.f, z0.f)
    e.vop("and16", b.f, b.f, z0.f)
    e.vop("and16", b.f, b.f, 0x8000)
    e.vop("or16", a.f, a.f, b.f)
    merge(e, target, c.f, a.f, c.f)


def _last_step(e: Emitter, fmt: FpFormat, h: Buffer, w: Buffer, t: Buffer) -> None:
    """w = u = -sqrt(m)/2 from h = -m/2 and w ~ rsqrt(m): u = h y, r = 1/2 + u y (one
    rounding, of u y near -1/2), u <- u + u r."""
    f = fmt.op
    e.comment("u = h y, r = 1/2 + u y, u <- u + u r")
    e.vop(f("mul"), t.f, w.f, h.f)
    e.vop(f("mul"), w.f, w.f, t.f)
    e.vop(f("add"), w.f, w.f, 0.5)
    e.vop(f("mul"), w.f, w.f, t.f)
    e.vop(f("add"), w.f, w.f, t.f)


def _sqrt(e: Emitter, fmt: FpFormat, x: Buffer, y: Buffer) -> None:
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
    e.comment("+-0 -> +-0, +inf -> +inf, negative or NaN -> NaN: in the factor")
    _specials(e, fmt, x.hi, a, zb, b, c, s.hi)
    reduce_and_iterate(e, fmt, m, w, y, RSQRT_SEED[fmt.name], STEPS[fmt.name], False)
    _last_step(e, fmt, m, w, y)
    e.vop(fmt.op("mul"), y.f, w.f, s.f)


def _sqrt_fp16_in_fp32(e: Emitter, x: Buffer, y: Buffer) -> None:
    a = e.buffer("a", "i16")
    b = e.buffer("b", "i16")
    c = e.buffer("c", "i16")
    m = e.buffer("m", "fp32")
    s = e.buffer("s", "fp32")           # lo words stay 0
    w = e.buffer("w", "fp32")
    t = e.buffer("t", "fp32")
    fp16_signs_and_nans(e, x, a, b, c)
    e.vop1("fh2s", m.f, x.f)
    _factor(e, FP32, m, s, None)
    reduce_and_iterate(e, FP32, m, w, t, RSQRT_SEED["fp32"], STEPS["fp16_in_fp32"], False)
    e.comment("y = fp16((h y) s) with the sign of a zero, NaN for NaN and negatives")
    e.vop(FP32.op("mul"), w.f, w.f, m.f)
    e.vop(FP32.op("mul"), w.f, w.f, s.f)
    e.vop1("fs2h", y.f, w.f)
    e.vop("or16", y.f, y.f, c.f)
    e.vop("or16", y.f, y.f, a.f)
