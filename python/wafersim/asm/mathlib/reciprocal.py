"""1 / x as CE instructions.

Subnormal x are first scaled into the normal range (bits.normalize_subnormals). Then
x = 2^e m with m in [1, 2) (exponent field set to the bias, sign kept): 1/m by Newton-Raphson
y <- y (2 - m y) from a hi-word magic seed y0 = C - m (5.5% off at most), with -m stored so
each step is three operations (p = (-m) y, p + 2, y p); 1/x = y 2^-e, applied as two normal
factors 2^f1 2^f2 built from the exponent field, so that subnormal results round once and
reciprocals of subnormals overflow to inf as they should. Zeros, infinities and NaNs put
inf, 0 or NaN into the second factor instead (the sign comes from y).

fp16 data computed in fp32 (``_reciprocal_fp16_in_fp32``): after fh2s every fp16 value is
normal or zero in fp32 and 1/x fits one factor; 1/0 becomes 2^127 y, which fs2h turns into
inf; infinities and NaNs are patched.
"""

from __future__ import annotations

from .bits import mask_at_least, mask_below, merge, normalize_subnormals, sticky_magnitude
from .coefficients import RECIPROCAL_SEED
from .emitter import Buffer, Emitter
from .fpformat import FP16, FP32, FpFormat

__all__ = ["emit_reciprocal"]

ITERATIONS = {"fp32": 3, "fp16": 2, "fp16_in_fp32": 2}


def emit_reciprocal(e: Emitter, dtype: str, compute: str, x: Buffer, y: Buffer) -> None:
    if dtype == compute:
        fmt = FP32 if dtype == "fp32" else FP16
        _reciprocal(e, fmt, x, y)
    else:
        _reciprocal_fp16_in_fp32(e, x, y)


def _negated_mantissa(e: Emitter, fmt: FpFormat, m: Buffer) -> None:
    """m = -(m with its exponent field set to the bias): in (-2, -1] or [1, 2)."""
    e.vop("and16", m.hi, m.hi, 0x8000 | fmt.man_mask)
    e.vop("xor16", m.hi, m.hi, 0x8000 | fmt.one)


def _newton(e: Emitter, fmt: FpFormat, nm: Buffer, w: Buffer, tmp: Buffer, seed: int,
            iterations: int, refine: bool) -> None:
    """w = 1/m from nm = -m: the seed C - m on the hi word, then y <- y (2 - m y); with
    ``refine`` the last step is y + y (1 - m y)."""
    e.comment(f"seed y0 = {seed:#06x} - m (hi word), then {iterations} Newton-Raphson steps")
    e.vop1("neg16", w.hi, nm.hi)                      # -(-m) ... + C = C - m, sign included
    e.vop("add16", w.hi, w.hi, (seed + 0x8000) & 0xFFFF)
    if fmt is FP32:
        e.vop1("mov16", w.lo, 0)
    f = fmt.op
    for _ in range(iterations - refine):
        e.vop(f("mul"), tmp.f, nm.f, w.f)             # -m y
        e.vop(f("add"), tmp.f, tmp.f, 2.0)            # 2 - m y
        e.vop(f("mul"), w.f, w.f, tmp.f)
    if not refine:
        return
    # The last step as y + y (1 - m y): 1 - m y is exact, so only m y's rounding and the
    # final addition's are left (about 1 ulp, against 2 for y (2 - m y)).
    e.vop(f("mul"), tmp.f, nm.f, w.f)
    e.vop(f("add"), tmp.f, tmp.f, 1.0)
    e.vop(f("mul"), tmp.f, tmp.f, w.f)
    e.vop(f("add"), w.f, w.f, tmp.f)


def _reciprocal(e: Emitter, fmt: FpFormat, x: Buffer, y: Buffer) -> None:
    a = e.buffer("a", "i16")
    zb = e.buffer("zb", "i16")
    b = e.buffer("b", "i16")
    z = e.buffer("z", fmt.name)          # lo words stay 0
    m = e.buffer("m", fmt.name)
    s1 = e.buffer("s1", fmt.name)        # lo words stay 0
    s2 = e.buffer("s2", fmt.name)
    w = e.buffer("w", fmt.name)
    e.comment("x' = x, subnormals times 2^N")
    sticky_magnitude(e, fmt, x, a)
    normalize_subnormals(e, fmt, x, a, m, zb, z)
    # 1/x = (1/m) 2^(bias - E' + N): field sum F = 3 bias - E' + N, split f1 = F // 2 (s2)
    # and f2 = F - f1 (s1), both in 1..254 for every finite nonzero x.
    e.comment("s2 s1 = 2^(bias - E' + N) as two normal factors")
    e.vop("and16", s1.hi, m.hi, fmt.exp_mask)
    e.vop("sub16", s1.hi, zb.f, s1.hi)
    e.vop("add16", s1.hi, s1.hi, (3 * fmt.bias) << fmt.man_hi_bits)
    e.vop("shr16", s2.hi, s1.hi, 1)
    e.vop("and16", s2.hi, s2.hi, fmt.exp_mask)
    e.vop("sub16", s1.hi, s1.hi, s2.hi)
    e.comment("+-0 -> s1 = inf, +-inf -> s1 = 0, NaN -> s1 = NaN")
    mask_below(e, zb.f, a.f, 1)                        # zero
    mask_at_least(e, b.f, a.f, fmt.exp_mask)           # inf or NaN
    mask_at_least(e, a.f, a.f, fmt.exp_mask + 1)       # NaN
    e.vop("or16", b.f, b.f, zb.f)
    e.vop("and16", zb.f, zb.f, fmt.exp_mask)
    e.vop("and16", a.f, a.f, fmt.qnan)
    e.vop("or16", zb.f, zb.f, a.f)
    merge(e, s1.hi, b.f, zb.f, b.f)
    _negated_mantissa(e, fmt, m)
    _newton(e, fmt, m, w, y, RECIPROCAL_SEED[fmt.name], ITERATIONS[fmt.name], True)
    e.comment("y = (1/m) s2 s1")
    e.vop(fmt.op("mul"), y.f, w.f, s2.f)
    e.vop(fmt.op("mul"), y.f, y.f, s1.f)


def _reciprocal_fp16_in_fp32(e: Emitter, x: Buffer, y: Buffer) -> None:
    a = e.buffer("a", "i16")
    b = e.buffer("b", "i16")
    m = e.buffer("m", "fp32")
    s = e.buffer("s", "fp32")           # lo words stay 0
    w = e.buffer("w", "fp32")
    t = e.buffer("t", "fp32")
    e.comment("fp16 -> fp32 (exact, all normal); s = 2^(254 - E) in its hi word")
    e.vop("and16", a.f, x.f, 0x7FFF)
    e.vop1("fh2s", m.f, x.f)
    e.vop("and16", s.hi, m.hi, FP32.exp_mask)
    e.vop1("neg16", s.hi, s.hi)
    e.vop("add16", s.hi, s.hi, (2 * FP32.bias) << FP32.man_hi_bits)
    e.comment("+-inf and NaN: s = 0 (NaN patched at the end); +-0 overflow to inf in fs2h")
    mask_below(e, b.f, a.f, FP16.exp_mask)
    e.vop("and16", s.hi, s.hi, b.f)
    mask_at_least(e, a.f, a.f, FP16.exp_mask + 1)
    e.vop("and16", a.f, a.f, FP16.qnan)
    _negated_mantissa(e, FP32, m)
    _newton(e, FP32, m, w, t, RECIPROCAL_SEED["fp32"], ITERATIONS["fp16_in_fp32"], False)
    e.comment("y = fp16((1/m) s), NaN where x is NaN")
    e.vop(FP32.op("mul"), w.f, w.f, s.f)
    e.vop1("fs2h", y.f, w.f)
    e.vop("or16", y.f, y.f, a.f)
