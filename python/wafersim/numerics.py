"""IEEE fp16/bf16/fp32 rounding as the wafer's data path does it.

Conversions and arithmetic run in the C++ core over whole numpy arrays. Rounding follows the
FP Control Register of seed 000 [0674], [0680]-[0681]: five IEEE modes plus stochastic
rounding, which adds an N-bit LFSR random number below the kept mantissa bits [0672]
(N = 3 by default) and rounds up on a carry.
"""

from __future__ import annotations

import numpy as np

from ._extension import core
from ._args import int_arg
from .errors import ConfigError

_n = core.numerics
FpControl = _n.FpControl


def _seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**64:
        raise ConfigError(f"seed must be a non-negative integer below 2**64, got {seed!r}")
    return int(seed)


class LfsrBank(_n.LfsrBank):
    """``count`` (1, 2, 4 or 7 [0682]) random-number resources for stochastic rounding,
    32-bit LFSRs seeded from ``seed`` (0..2**64-1) and the resource index [0668]."""

    def __init__(self, count: int = 4, seed: int = 0):
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or abs(count) > 99:
            raise ConfigError(f"rng count must be 1, 2, 4 or 7 [0682], got {count!r}")
        super().__init__(int(count), _seed(seed))  # the core checks

    def seed(self, seed: int) -> None:
        """Reseeds every resource."""
        super().seed(_seed(seed))

    def state(self, index: int) -> int:
        return super().state(int_arg("index", index, 0, self.count - 1))

    def set_state(self, index: int, state: int) -> None:
        """Sets one resource's 32-bit state (nonzero: 0 is the lock-up state)."""
        super().set_state(int_arg("index", index, 0, self.count - 1),
                          int_arg("state", state, 0, 2**32 - 1))

    def next_bits(self, index: int, n: int) -> int:
        """The next ``n`` (1..32) bits of resource ``index``, oldest bit most significant."""
        return super().next_bits(int_arg("index", index, 0, self.count - 1),
                                 int_arg("n", n, 1, 32))

__all__ = [
    "MODES",
    "SUBNORMALS",
    "LfsrBank",
    "FpControl",
    "fp_control",
    "round_fp16",
    "fp16_to_fp32",
    "fma",
]

#: Rounding-mode names accepted everywhere in wafersim.
MODES = {
    "rne": _n.RoundingMode.nearest_even,  # round to nearest, ties to even (IEEE default)
    "rna": _n.RoundingMode.nearest_away,  # round to nearest, ties away from zero
    "rtz": _n.RoundingMode.toward_zero,
    "rup": _n.RoundingMode.toward_positive,
    "rdn": _n.RoundingMode.toward_negative,
    "stochastic": _n.RoundingMode.stochastic,  # seed 000 [0672]
}

#: What a subnormal result becomes: IEEE gradual underflow (default), FTZ=1 of [0681]
#: ("zero") or FTZ=0 read literally ("min_normal").
SUBNORMALS = {
    "keep": _n.Subnormals.keep,
    "zero": _n.Subnormals.flush_to_zero,
    "min_normal": _n.Subnormals.flush_to_min_normal,
}


def _choice(name: str, value, table: dict):
    try:
        return table[value]
    except (KeyError, TypeError):
        allowed = ", ".join(repr(k) for k in table)
        raise ConfigError(f"{name} must be one of {allowed}, got {value!r}") from None


def fp_control(
    mode: str = "rne",
    *,
    n_bits: int = 3,
    rng_index: int = 0,
    subnormals: str = "keep",
    max_sat: bool = False,
    min_sat: bool = False,
    or_lower: bool = False,
) -> FpControl:
    """Builds an FP control register value.

    ``n_bits`` is N of [0672]; ``rng_index`` picks the random-number resource [0671];
    ``max_sat``/``min_sat`` are the saturation flags of [0681]; ``or_lower`` ORs the bits
    below the N used ones into the lowest of them [0693].
    """
    ctl = FpControl()
    ctl.mode = _choice("mode", mode, MODES)
    ctl.subnormals = _choice("subnormals", subnormals, SUBNORMALS)
    if isinstance(n_bits, bool) or not isinstance(n_bits, (int, np.integer)) or not 1 <= n_bits <= 32:
        raise ConfigError(f"n_bits (N of [0672]) must be an integer in 1..32, got {n_bits!r}")
    if not isinstance(rng_index, (int, np.integer)) or not 0 <= rng_index < 7:
        raise ConfigError(f"rng_index must be an integer in 0..6, got {rng_index!r}")
    ctl.stochastic_bits = int(n_bits)
    ctl.rng = int(rng_index)
    ctl.max_sat = bool(max_sat)
    ctl.min_sat = bool(min_sat)
    ctl.stochastic_or_lower = bool(or_lower)
    return ctl


def _bank(rng: LfsrBank | None, seed: int) -> LfsrBank:
    if rng is not None:
        if not isinstance(rng, LfsrBank):
            raise ConfigError(f"rng must be a wafersim.numerics.LfsrBank, got {type(rng).__name__}")
        return rng
    return LfsrBank(4, _seed(seed))


def _as_real_array(x, name: str) -> np.ndarray:
    a = np.asarray(x)
    if a.dtype.kind not in "fiub":
        raise ConfigError(f"{name} must hold real numbers, got dtype {a.dtype}")
    return a


def round_fp16(
    x,
    mode: str = "rne",
    seed: int = 0,
    *,
    rng: LfsrBank | None = None,
    **flags,
) -> np.ndarray:
    """Rounds an array to IEEE half precision; returns a ``numpy.float16`` array.

    ``mode`` is one of :data:`MODES`. Stochastic rounding draws from ``rng`` (a
    :class:`LfsrBank`, whose state advances) or from a fresh bank seeded with ``seed``, so
    the same seed gives the same bits. ``flags`` are the keyword arguments of
    :func:`fp_control` (``n_bits``, ``rng_index``, ``subnormals``, ``max_sat``, ``min_sat``,
    ``or_lower``). float32 and float64 inputs are rounded directly (no double rounding);
    other real dtypes go through float64.
    """
    ctl = fp_control(mode, **flags)
    a = _as_real_array(x, "x")
    bank = _bank(rng, seed)
    if a.dtype == np.float32:
        bits = _n.round_fp16_from_fp32(np.ascontiguousarray(a), ctl, bank)
    elif a.dtype == np.float16:
        bits = _n.round_fp16_from_fp32(np.ascontiguousarray(a, dtype=np.float32), ctl, bank)
    else:
        bits = _n.round_fp16_from_fp64(np.ascontiguousarray(a, dtype=np.float64), ctl, bank)
    return bits.view(np.float16)


def fp16_to_fp32(h) -> np.ndarray:
    """Widens fp16 values (a ``float16`` array, or ``uint16`` bit patterns) to float32, exactly.

    NaN payloads are kept bit for bit, so signalling NaNs stay signalling.
    """
    a = np.asarray(h)
    if a.dtype == np.float16:
        a = a.view(np.uint16)
    if a.dtype != np.uint16:
        raise ConfigError(f"fp16_to_fp32 takes float16 values or uint16 bits, got dtype {a.dtype}")
    return _n.fp16_to_fp32(np.ascontiguousarray(a))


def fma(a, b, c, dtype: str = "fp16", mode: str = "rne", seed: int = 0, *,
        rng: LfsrBank | None = None, **flags) -> np.ndarray:
    """Element-wise ``a * b + c`` with a single rounding, as the data path's fused MAC [0675].

    ``dtype`` is ``"fp16"`` (``float16`` arrays), ``"fp32"`` (``float32`` arrays) or
    ``"bf16"`` (``uint16`` bit patterns). Operands must have the same shape.
    """
    ctl = fp_control(mode, **flags)
    bank = _bank(rng, seed)
    want = {"fp16": np.float16, "fp32": np.float32, "bf16": np.uint16}
    if dtype not in want:
        raise ConfigError(f"dtype must be 'fp16', 'fp32' or 'bf16', got {dtype!r}")
    arrays = []
    for name, v in (("a", a), ("b", b), ("c", c)):
        arr = np.asarray(v)
        if arr.dtype != want[dtype]:
            raise ConfigError(f"{name} must have dtype {np.dtype(want[dtype])} for {dtype}, "
                              f"got {arr.dtype}")
        arrays.append(arr)
    if not (arrays[0].shape == arrays[1].shape == arrays[2].shape):
        raise ConfigError(f"fma operands must have one shape, got "
                          f"{arrays[0].shape}, {arrays[1].shape}, {arrays[2].shape}")
    if dtype == "fp32":
        bits = [np.ascontiguousarray(v).view(np.uint32) for v in arrays]
        return _n.fma32(*bits, ctl, bank).view(np.float32)
    bits = [np.ascontiguousarray(v).view(np.uint16) for v in arrays]
    out = _n.fma16(*bits, dtype, ctl, bank)
    return out.view(np.float16) if dtype == "fp16" else out
