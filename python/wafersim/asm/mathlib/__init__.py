"""The CE math library: exp, reciprocal, rsqrt, sqrt and ln as compute-element instruction
sequences (the ISA has no such instructions), for fp32 and fp16 vectors in PE memory.

Each function returns a :class:`Routine`: ``.data`` lines (descriptors, constants and
scratch vectors, labels prefixed with ``prefix``) and straight-line ``.code`` lines to
paste into any task, plus ``.cycles``. Several calls with different prefixes coexist in one
program; ``dst`` may equal ``src``::

    from wafersim.asm import mathlib
    r = mathlib.exp("fp32", n=10, src="z", dst="ez", prefix="mx0",
                    dsrs=(9, 10, 11), gprs=("r0", "r1"))
    source = "\\n".join([".data", "z: .space fp32, 10", "ez: .space fp32, 10", *r.data,
                        ".code", ".task main, 40", "main:", *r.code, "  term"])

``dsrs``: descriptor-register numbers the code may load (S0, S1 and D of each; 3 numbers
avoid most reloads). ``gprs``: registers it may clobber; they must include an even/odd pair
(32-bit constants). ``compute`` (fp16 data only): do the arithmetic in "fp16" (4 elements
per cycle) or "fp32" (converted, 1 per cycle, more accurate); the defaults were chosen by
measurement (docs/numerics.md, "Math library"). The FP control register must be at its
default (round to nearest even, subnormals kept).

Accuracy, cycles per element and special values of every routine: docs/numerics.md.
:func:`run_on_pe` runs a routine on a lone PE; :func:`on_host` (``Routine.reference``)
computes the same bits in numpy; :mod:`.accuracy` measures errors against float64.
"""

from __future__ import annotations

from . import accuracy
from .exp import emit_exp
from .ln import emit_ln
from .reciprocal import emit_reciprocal
from .routine import Routine, build
from .rsqrt import emit_rsqrt
from .sqrt import emit_sqrt
from .run import PeRun, run_on_pe

__all__ = ["exp", "reciprocal", "rsqrt", "sqrt", "ln", "Routine", "run_on_pe", "on_host", "PeRun",
           "ROUTINES", "DEFAULT_COMPUTE", "accuracy"]

DEFAULT_DSRS = (9, 10, 11)
DEFAULT_GPRS = ("r0", "r1")

# The format fp16 data is computed in when compute=None (docs/numerics.md, "Math library").
DEFAULT_COMPUTE = {
    "exp": {"fp32": "fp32", "fp16": "fp32"},
    "reciprocal": {"fp32": "fp32", "fp16": "fp32"},
    "rsqrt": {"fp32": "fp32", "fp16": "fp32"},
    "sqrt": {"fp32": "fp32", "fp16": "fp32"},
    "ln": {"fp32": "fp32", "fp16": "fp32"},
}


def exp(dtype: str, *, n: int, src: str, dst: str, prefix: str, dsrs=DEFAULT_DSRS,
        gprs=DEFAULT_GPRS, compute: str | None = None) -> Routine:
    """dst = exp(src), elementwise over ``n`` elements of ``dtype`` ("fp32" or "fp16").

    exp(-inf) = +0, exp(+inf) = +inf, NaN -> NaN; results beyond the largest finite value
    are inf, results below half the smallest subnormal are +0, subnormal results are
    rounded once.

    Cycles per element: 26.75 (fp32), 18.75 (fp16 computed in fp32), 7.0 (fp16 in fp16),
    plus 72 to 107 per call; ``Routine.cycles`` has the exact count.
    """
    return build("exp", emit_exp, dtype, n=n, src=src, dst=dst, prefix=prefix, dsrs=dsrs,
                 gprs=gprs, compute=compute, computes=DEFAULT_COMPUTE["exp"])


def reciprocal(dtype: str, *, n: int, src: str, dst: str, prefix: str, dsrs=DEFAULT_DSRS,
               gprs=DEFAULT_GPRS, compute: str | None = None) -> Routine:
    """dst = 1 / src, elementwise. 1/+-0 = +-inf, 1/+-inf = +-0, NaN -> NaN; subnormal
    inputs are exact (their reciprocals overflow to inf beyond the largest finite value).

    Cycles per element: 21.25 (fp32), 13.0 (fp16 computed in fp32), 9.5 (fp16 in fp16),
    plus 67 to 107 per call; ``Routine.cycles`` has the exact count.
    """
    return build("reciprocal", emit_reciprocal, dtype, n=n, src=src, dst=dst, prefix=prefix,
                 dsrs=dsrs, gprs=gprs, compute=compute,
                 computes=DEFAULT_COMPUTE["reciprocal"])


def rsqrt(dtype: str, *, n: int, src: str, dst: str, prefix: str, dsrs=DEFAULT_DSRS,
          gprs=DEFAULT_GPRS, compute: str | None = None) -> Routine:
    """dst = 1 / sqrt(src), elementwise. rsqrt(+0) = +inf, rsqrt(-0) = -inf, rsqrt(+inf) =
    +0, negative inputs and NaN -> NaN (IEEE 754-2019 rSqrt).

    Cycles per element: 26.75 (fp32), 18.25 (fp16 computed in fp32), 12.5 (fp16 in fp16),
    plus 85 to 124 per call; ``Routine.cycles`` has the exact count.
    """
    return build("rsqrt", emit_rsqrt, dtype, n=n, src=src, dst=dst, prefix=prefix,
                 dsrs=dsrs, gprs=gprs, compute=compute, computes=DEFAULT_COMPUTE["rsqrt"])


def sqrt(dtype: str, *, n: int, src: str, dst: str, prefix: str, dsrs=DEFAULT_DSRS,
         gprs=DEFAULT_GPRS, compute: str | None = None) -> Routine:
    """dst = sqrt(src), elementwise. sqrt(+-0) = +-0, sqrt(+inf) = +inf, negative inputs
    and NaN -> NaN; subnormal inputs are exact (for Adam's sqrt(v) + eps, where v may be 0:
    v * rsqrt(v) would give NaN there).

    Cycles per element: 28.0 (fp32), 19.0 (fp16 computed in fp32), 13.75 (fp16 in fp16),
    plus 84 to 133 per call; ``Routine.cycles`` has the exact count.
    """
    return build("sqrt", emit_sqrt, dtype, n=n, src=src, dst=dst, prefix=prefix, dsrs=dsrs,
                 gprs=gprs, compute=compute, computes=DEFAULT_COMPUTE["sqrt"])


def ln(dtype: str, *, n: int, src: str, dst: str, prefix: str, dsrs=DEFAULT_DSRS,
       gprs=DEFAULT_GPRS, compute: str | None = None) -> Routine:
    """dst = ln(src) (natural logarithm), elementwise. ln(+-0) = -inf, ln(+inf) = +inf,
    ln(1) = +0, negative inputs and NaN -> NaN.

    Cycles per element: 35.25 (fp32), 23.5 (fp16 computed in fp32), 12.0 (fp16 in fp16),
    plus 118 to 167 per call; ``Routine.cycles`` has the exact count.
    """
    return build("ln", emit_ln, dtype, n=n, src=src, dst=dst, prefix=prefix, dsrs=dsrs,
                 gprs=gprs, compute=compute, computes=DEFAULT_COMPUTE["ln"])


ROUTINES = {"exp": exp, "reciprocal": reciprocal, "rsqrt": rsqrt, "sqrt": sqrt, "ln": ln}


def on_host(fn, dtype: str, values, *, compute: str | None = None):
    """What ``fn`` (exp, reciprocal, rsqrt or ln) computes on a PE for ``values`` (any
    number of elements of ``dtype``), computed by numpy: the same bits, without a PE
    (``Routine.reference``). For host-side models that must match the wafer exactly."""
    r = fn(dtype, n=1, src="x", dst="y", prefix="host", compute=compute)
    return r.reference(values)
