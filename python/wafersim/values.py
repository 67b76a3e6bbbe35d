"""Checked conversion of the host's numbers into what wavelets and PE memory hold.

Every path that turns user values into wavelet fields or memory words goes through here
(``Wafer.inject`` and ``stream``, ``LonePE.inject`` and ``inject_wavelets``,
``memcpy_h2d`` and ``write``), so a value the target cannot hold raises ``ConfigError``
naming the value, where it sits and the range, instead of wrapping (70000 as i16),
truncating (1.7 as i16) or overflowing to inf (1e6 as fp16).

Bounds are compared as Python numbers: numpy would round 2**64 - 1 to a float when it
compares uint64 values with negative bounds.
"""

from __future__ import annotations

import numbers

import numpy as np

from .errors import ConfigError

__all__ = ["is_integer", "first_outside", "integers", "elements", "OVERFLOW"]

#: What a float conversion does with a finite value beyond the type's range.
OVERFLOW = ("error", "inf")


def is_integer(value) -> bool:
    """True for Python and numpy integers; booleans are not integers here."""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _scalar(x):
    return x.item() if isinstance(x, np.generic) else x


def _where(arr: np.ndarray, k: int) -> str:
    if arr.ndim == 0:
        return ""
    pos = np.unravel_index(k, arr.shape)
    return f" at index {int(pos[0]) if arr.ndim == 1 else tuple(int(p) for p in pos)}"


def first_outside(arr: np.ndarray, lo, hi) -> int | None:
    """Flat index of the first element outside lo..hi (NaN is outside), or None."""
    if arr.size == 0 or lo <= _scalar(arr.min()) and _scalar(arr.max()) <= hi:
        return None
    return next(k for k, v in enumerate(arr.ravel().tolist()) if not lo <= v <= hi)


def _as_numbers(values, name: str) -> np.ndarray:
    """``values`` as an array of numbers: a numeric dtype, or objects when all are integers
    (Python integers beyond 64 bits, or integers numpy would turn into floats, such as
    (uint64, -1)), kept exact."""
    try:
        arr = np.asarray(values)
    except (ValueError, OverflowError, TypeError):
        raise ConfigError(f"{name} must be numbers in an array of one shape, got "
                          f"{values!r:.80}") from None
    if arr.dtype.kind in "fO" and not isinstance(values, np.ndarray):
        objs = np.asarray(values, dtype=object)
        if objs.size and all(is_integer(v) for v in objs.ravel().tolist()):
            return objs
    if arr.dtype == object and arr.size:
        items = arr.ravel().tolist()
        if all(is_integer(v) for v in items):
            return arr
        if all(isinstance(v, numbers.Real) for v in items):  # e.g. (2**70, 0.5)
            try:
                return arr.astype(np.float64)
            except OverflowError:
                raise ConfigError(f"{name} holds a number beyond the float64 range") from None
    if arr.size and arr.dtype.kind not in "fiub":
        raise ConfigError(f"{name} must be numbers, got dtype {arr.dtype}")
    return arr


def integers(values, name: str, lo: int, hi: int, dtype, *, bools: bool = False) -> np.ndarray:
    """``values`` (integers; booleans too when ``bools``) in ``lo..hi`` as a ``dtype`` array:
    the raw fields of a wavelet (data word, index, color, ctrl, release cycle)."""
    arr = _as_numbers(values, name)
    if arr.dtype.kind == "b" and not bools:
        raise ConfigError(f"{name} must be integers, got booleans")
    if arr.size and arr.dtype.kind not in "iubO":
        raise ConfigError(f"{name} must be integers, got dtype {arr.dtype}")
    k = first_outside(arr, lo, hi)
    if k is not None:
        raise ConfigError(f"{name} must be in {lo}..{hi}, got {arr.ravel()[k]}{_where(arr, k)}")
    return arr.astype(dtype)


def elements(values, dtype, name: str, *, exact: bool = True, overflow: str = "error") -> np.ndarray:
    """``values`` as elements of ``dtype`` (a numpy integer or float type).

    Integer types take whole numbers in their range (3.0 is 3; 1.7 and 70000 as int16 are
    errors). Float types round to nearest unless ``exact`` (then every value must be
    representable as it is); a finite value beyond the range is an error unless
    ``overflow="inf"`` (it becomes inf then)."""
    t = np.dtype(dtype)
    if overflow not in OVERFLOW:
        raise ConfigError(f"overflow must be one of {', '.join(OVERFLOW)}, got {overflow!r}")
    arr = _as_numbers(values, name)
    if t.kind in "iu":
        info = np.iinfo(t)
        k = first_outside(arr, info.min, info.max)
        if k is None and arr.dtype.kind == "f":
            whole = np.isfinite(arr) & (np.trunc(arr) == arr)
            k = None if whole.all() else int(np.flatnonzero(~whole.ravel())[0])
        if k is not None:
            raise ConfigError(f"{name}: {arr.ravel()[k]}{_where(arr, k)} is not exactly "
                              f"representable as {t.name}, which holds whole numbers in "
                              f"{info.min}..{info.max}")
        return arr.astype(t)
    try:
        src = arr.astype(np.float64) if arr.dtype == object else arr
    except OverflowError:
        raise ConfigError(f"{name} holds an integer beyond the float64 range") from None
    with np.errstate(all="ignore"):
        conv = src.astype(t)
        if exact:
            back = conv.astype(src.dtype)
            same = (back == src) | (np.isnan(back) & np.isnan(src))
            if arr.dtype == object:  # compare with the integers as given, not as float64
                same = np.array([c == v for c, v in zip(conv.ravel().tolist(), arr.ravel().tolist())])
            bad = ~same.reshape(arr.shape)
        else:
            bad = np.isinf(conv) & np.isfinite(src) & (overflow == "error")
    if bad.any():
        k = int(np.flatnonzero(bad.ravel())[0])
        v, limit = arr.ravel()[k], float(np.finfo(t).max)
        if exact:
            raise ConfigError(f"{name}: {v}{_where(arr, k)} is not exactly representable as "
                              f"{t.name} (finite range -{limit:g}..{limit:g}; convert the values "
                              "first, e.g. with wafersim.numerics.round_fp16)")
        raise ConfigError(f"{name}: {v}{_where(arr, k)} overflows {t.name} (finite range "
                          f"-{limit:g}..{limit:g}); pass overflow='inf' to get inf")
    return conv
