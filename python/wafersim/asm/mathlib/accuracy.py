"""Measuring the routines' errors against float64 numpy: the inputs (every fp16 value, a
dense fp32 sample) and the error measures of the table in docs/numerics.md."""

from __future__ import annotations

import numpy as np

__all__ = ["EXACT", "all_fp16", "fp32_sample", "ulp_errors", "errors"]

# float64 references of the routines.
EXACT = {
    "exp": np.exp,
    "reciprocal": lambda x: 1.0 / x,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "sqrt": np.sqrt,
    "ln": np.log,
}


def all_fp16() -> np.ndarray:
    """Every fp16 bit pattern (65,536 values, NaNs and infinities included)."""
    return np.arange(1 << 16, dtype=np.uint16).view(np.float16)


def fp32_sample(name: str, size: int = 1_000_000, seed: int = 0) -> np.ndarray:
    """``size`` fp32 inputs for routine ``name``: a third uniform bit patterns (every
    exponent, both signs, NaNs and infinities), a third uniform over the range where the
    result is finite and nonzero (for exp) or over [1/2, 4) (the others), a sixth near the
    routine's hard places (exp's overflow and underflow edges, ln near 1, subnormals for
    the others), a sixth subnormal inputs; plus the boundary values."""
    rng = np.random.default_rng(seed)
    third, sixth = size // 3, size // 6
    bits = rng.integers(0, 1 << 32, third, dtype=np.uint64).astype(np.uint32).view(np.float32)
    sub = rng.integers(1, 1 << 23, sixth, dtype=np.uint32).view(np.float32)
    if name == "exp":
        dense = rng.uniform(-104.0, 89.0, third)
        hard = np.concatenate([rng.uniform(87.0, 89.0, sixth // 2),
                               rng.uniform(-104.0, -86.0, sixth - sixth // 2)])
    else:
        dense = rng.uniform(0.5, 4.0, third)
        hard = (1.0 + rng.uniform(-0.01, 0.01, sixth) if name == "ln"
                else 2.0 ** rng.uniform(-126.0, 128.0, sixth))
    edges = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, 0.5,
                      np.finfo(np.float32).max, -np.finfo(np.float32).max,
                      np.finfo(np.float32).tiny, np.finfo(np.float32).smallest_subnormal,
                      88.72283, 88.72284, 88.7229, -87.33654, -103.27893, -103.97208,
                      -103.9721], dtype=np.float64)
    out = np.concatenate([bits, dense.astype(np.float32), hard.astype(np.float32), sub,
                          edges.astype(np.float32)])
    return np.ascontiguousarray(out[:max(size, edges.size)] if out.size > size else out)


def ulp_errors(got: np.ndarray, exact: np.ndarray, dtype) -> np.ndarray:
    """|got - exact| in ulps of ``dtype`` at ``exact`` (the spacing of the binade of the
    exact result; subnormal results count in the subnormal spacing) for finite ``exact``;
    an infinite result counts as 2^(emax + 1), the value after the largest finite one."""
    fi = np.finfo(dtype)
    got = got.astype(np.float64)
    top = 2.0 ** (fi.maxexp)
    got = np.where(np.isinf(got), np.copysign(top, got), got)
    with np.errstate(all="ignore"):
        mag = np.maximum(np.abs(exact), float(fi.smallest_normal))
        ulp = np.exp2(np.floor(np.log2(mag)) - fi.nmant)
        return np.abs(got - exact) / ulp


def errors(name: str, dtype: str, values: np.ndarray, results: np.ndarray) -> dict:
    """Error measures of ``results`` of routine ``name`` for ``values``:

    ``max_ulp``: the largest ulp error (ulp_errors) over inputs with a finite nonzero exact
    result below 2^(emax + 1), ``worst``: the input where it occurs; ``max_rel``: the
    largest relative error over exact results in the normal range (an infinite result
    counting as 2^(emax + 1)); ``specials``: how many inputs whose exact result is
    infinite, NaN, zero or at least 2^(emax + 1) (so that it rounds to inf) got anything
    else (NaN for NaN, the same infinity, the same signed zero)."""
    npdt = np.float16 if dtype == "fp16" else np.float32
    fi = np.finfo(npdt)
    top = 2.0 ** fi.maxexp
    with np.errstate(all="ignore"):
        x = values.astype(np.float64)
        exact = EXACT[name](x)
        want = np.where(np.abs(exact) >= top, np.copysign(np.inf, exact), exact)
    got = results.astype(np.float64)
    special = ~np.isfinite(want) | (want == 0)
    right = np.where(np.isnan(want), np.isnan(got),
                     (got == want) & (np.signbit(got) == np.signbit(want)))
    ordinary = ~special
    safe = np.where(ordinary, exact, 1.0)
    err = np.where(ordinary, ulp_errors(results, safe, npdt), -1.0)
    i = int(np.argmax(err))
    normal = ordinary & (np.abs(exact) >= float(fi.smallest_normal))
    capped = np.where(np.isinf(got), np.copysign(top, got), got)
    with np.errstate(all="ignore"):
        rel = np.where(normal, np.abs(capped / safe - 1.0), 0.0)
    return {
        "max_ulp": float(max(err[i], 0.0)),
        "worst": float(values[i]),
        "max_rel": float(np.max(rel)),
        "specials": int((special & ~right).sum()),
    }
