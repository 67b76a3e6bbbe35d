"""Constants of the math library's routines: clamps, reduction constants, polynomial
coefficients (lowest degree first) and Newton-Raphson seeds.

The polynomials and seeds were fitted by ``scripts/fit_mathlib.py`` (minimax in relative
error by a linear program, then rounded to the format the routine computes in; seeds by
exhaustive search); its output lists the same numbers and the error of each fit. Every value
here is exact in the format it is used in.
"""

from __future__ import annotations

import math

# ---- exp ------------------------------------------------------------------------------------
# exp(x) = 2^k exp(r), k = round(x / ln2), r = x - k ln2 (ln2 split in two: k * LN2_HI is
# exact, so r loses nothing to the product [Cody and Waite's reduction]).
LOG2E = math.log2(math.e)
EXP = {
    "fp32": dict(
        clamp=(-104.0, 89.0),            # exp(-104) < 2^-150 rounds to 0; exp(89) > max
        magic=12582912.0,                # 1.5 * 2^23: adding it rounds to an integer
        ln2_hi=0.693145751953125,        # 16 significant bits: k * LN2_HI exact for |k| <= 255
        ln2_lo=1.4286067653301870e-06,
        # degree 6 on [-0.3467, 0.3467], relative error 1.8e-8 after rounding
        poly=(1.0, 1.0, 0.4999999403953552, 0.16666430234909058, 0.04166800528764725,
              0.008374184370040894, 0.0013843618799000978),
    ),
    "fp16": dict(
        clamp=(-18.0, 12.0),             # exp(-18) < 2^-25 rounds to 0; exp(12) > 65504
        magic=1536.0,                    # 1.5 * 2^10
        ln2_hi=0.6875,                   # 6 bits: k * LN2_HI exact in fp16 for |k| <= 31
        ln2_lo=0.005645751953125,          # fp16(ln2 - 0.6875)
        # degree 3 on [-0.357, 0.357], relative error 1.6e-4 after rounding
        poly=(1.0, 1.0, 0.50439453125, 0.1666259765625),
    ),
    # fp16 results computed in fp32: 2^x = 2^k 2^f, f = t - round(t), t = x log2(e) in fp32
    # (its rounding costs 1e-6 relative at most: far below an fp16 ulp).
    "fp16_in_fp32": dict(
        clamp=(-18.0, 12.0),
        magic=12582912.0,
        # degree 4 on [-0.5, 0.5], relative error 2.8e-6
        poly=(1.0, 0.6931241750717163, 0.24024099111557007, 0.055906426161527634,
              0.009582852944731712),
    ),
}

# ---- ln -------------------------------------------------------------------------------------
# ln(x) = E ln2 + ln(1 + f), x = 2^E m, m in [sqrt(1/2), sqrt(2)) (to the hi word), f = m - 1.
LN = {
    "fp32": dict(
        sqrt_half_hi=0x3F35,             # hi word of 0.70703125
        ln2_hi=0.693145751953125,
        ln2_lo=1.4286067653301870e-06,
        # degree 10 on [-0.293, 0.415], relative error 6.6e-9 after rounding
        poly=(0.0, 1.0, -0.49999988079071045, 0.33333325386047363, -0.25001582503318787,
              0.20002004504203796, -0.1660909652709961, 0.1418120414018631,
              -0.1324215978384018, 0.12908338010311127, -0.07628985494375229),
    ),
    "fp16": dict(
        sqrt_half_hi=0x39A8,             # 0.70703125 in fp16
        ln2_hi=0.6875,
        ln2_lo=0.005645751953125,
        # degree 5, relative error 6.6e-5 after rounding
        poly=(0.0, 1.0, -0.49951171875, 0.335693359375, -0.27001953125, 0.178466796875),
    ),
    "fp16_in_fp32": dict(
        sqrt_half_hi=0x3F35,
        ln2=0.6931471824645996,          # fp32(ln2): |E| <= 25, error far below an fp16 ulp
        # degree 6, relative error 8.5e-6
        poly=(0.0, 1.0, -0.49991756677627563, 0.3327381908893585, -0.25387054681777954,
              0.21931876242160797, -0.14227892458438873),
    ),
}

# ---- Newton-Raphson seeds: hi-word magic constants ---------------------------------------------
# reciprocal: y0 = C - m on the hi word, m in [1, 2): max relative error 5.5% (fp32), 5.1% (fp16)
RECIPROCAL_SEED = {"fp32": 0x7EF2, "fp16": 0x7798}
# rsqrt: y0 = C - (m >> 1), m in [1, 4): max relative error 3.8% (fp32), 3.5% (fp16)
RSQRT_SEED = {"fp32": 0x5F37, "fp16": 0x59BB}
