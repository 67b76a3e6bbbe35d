"""Checks of the arguments the public API takes: a value of the wrong kind or out of range
raises a wafersim error (ConfigError, a ValueError) naming the parameter, the value and
what it must be, before anything runs; never a bare TypeError, AttributeError or
OverflowError from deep inside, nor pybind11's TypeError with a signature dump.

Integers are Python or numpy integers (never booleans, never floats, even 2.0: nothing is
truncated); real numbers are those plus floats; True/False are Python or numpy booleans.
Each check returns the value as a plain Python object.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Set

import numpy as np

from .errors import ConfigError, MemoryAccessError

__all__ = ["INT_MAX", "int_arg", "c_int", "index_arg", "real_arg", "bool_arg", "choice_arg",
           "str_arg", "items_arg", "mapping_arg", "instance_arg", "show"]

#: The largest value of a C++ ``int``.
INT_MAX = 2**31 - 1


def show(value, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters (a message stays one readable line)."""
    try:
        text = repr(value)
    except Exception:  # a broken __repr__ must not hide the real mistake
        text = f"<{type(value).__name__} object>"
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _is_int(value) -> bool:
    return not isinstance(value, (bool, np.bool_)) and isinstance(value, (int, np.integer))


def _range(lo, hi) -> str:
    if hi is None:
        return f">= {lo}"
    return f"in {lo}..{hi}"


def int_arg(name: str, value, lo: int, hi: int | None = None, *, none_ok: bool = False):
    """``value`` as an int in ``lo..hi`` (no upper limit when ``hi`` is None; None passes
    when ``none_ok``); ConfigError (a ValueError) otherwise."""
    if none_ok and value is None:
        return None
    v = int(value) if _is_int(value) else None  # compared as a Python int: exact
    if v is None or v < lo or (hi is not None and v > hi):
        alt = " or None" if none_ok else ""
        raise ConfigError(f"{name} must be an integer {_range(lo, hi)}{alt}, got {show(value)}")
    return v


def c_int(name: str, value) -> int:
    """An integer a C++ ``int`` holds (the core checks the exact range and names it)."""
    if not _is_int(value):
        raise ConfigError(f"{name} must be an integer, got {show(value)}")
    if not -INT_MAX - 1 <= value <= INT_MAX:
        raise ConfigError(f"{name} = {value} is far out of range (more than 2**31 in size)")
    return int(value)


def index_arg(name: str, value, lo: int, hi: int) -> int:
    """An address, count or register number in ``lo..hi``: MemoryAccessError (an
    IndexError) when out of range, ConfigError when not an integer."""
    if not _is_int(value):
        raise ConfigError(f"{name} must be an integer, got {show(value)}")
    if not lo <= value <= hi:
        raise MemoryAccessError(f"{name} must be in {lo}..{hi}, got {value!r}")
    return int(value)


def real_arg(name: str, value, lo: float | None = None, hi: float | None = None, *,
             lo_open: bool = False, allow_inf: bool = False, unit: str = "") -> float:
    """``value`` (an int or a float, Python's or numpy's; never NaN, inf only when
    ``allow_inf``) as a float in ``lo..hi`` (``lo`` excluded when ``lo_open``)."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
    if ok:
        try:
            v = float(value)
        except OverflowError:  # an int beyond the float range
            v = math.copysign(math.inf, value)
        ok = not math.isnan(v) and (allow_inf or not math.isinf(v))
        if ok and lo is not None:
            ok = v > lo if lo_open else v >= lo
        if ok and hi is not None:
            ok = v <= hi
    if not ok:
        limits = []
        if lo is not None:
            limits.append(f"{'>' if lo_open else '>='} {lo:g}")
        if hi is not None:
            limits.append(f"<= {hi:g}")
        kind = "a number" if allow_inf else "a finite number"
        what = " and ".join([kind] + limits) + (f" ({unit})" if unit else "")
        raise ConfigError(f"{name} must be {what}, got {show(value)}")
    return v


def bool_arg(name: str, value) -> bool:
    """True or False (numpy's too); a string such as "no" or a number is refused rather
    than read by its truth value."""
    if not isinstance(value, (bool, np.bool_)):
        raise ConfigError(f"{name} must be True or False, got {show(value)}")
    return bool(value)


def choice_arg(name: str, value, choices) -> str:
    """One of the strings ``choices`` (exactly)."""
    if not isinstance(value, str) or value not in choices:
        listed = ", ".join(repr(c) for c in choices)
        raise ConfigError(f"{name} must be one of {listed}, got {show(value)}")
    return value


def str_arg(name: str, value, what: str = "a string") -> str:
    """A str (not bytes, not None)."""
    if not isinstance(value, str):
        raise ConfigError(f"{name} must be {what}, got {show(value)}")
    return value


def items_arg(name: str, value, what: str) -> list:
    """An ordered collection (a list, tuple, numpy array, generator...) as a list. A
    string, bytes, a mapping or a set is refused: each would iterate as something else
    (characters, keys, an arbitrary order). ``what`` says what the items are."""
    if isinstance(value, (str, bytes, Mapping, Set)) or (
            isinstance(value, np.ndarray) and value.ndim == 0):
        raise ConfigError(f"{name} must be a list of {what}, got {show(value)}")
    try:
        return list(value)
    except TypeError:
        raise ConfigError(f"{name} must be a list of {what}, got {show(value)}") from None


def mapping_arg(name: str, value, what: str) -> Mapping:
    """A mapping (a dict); ``what`` says what it maps."""
    if not isinstance(value, Mapping):
        raise ConfigError(f"{name} must be a dict of {what}, got {show(value)}")
    return value


def instance_arg(name: str, value, cls: type, what: str | None = None):
    """``value`` itself when it is a ``cls``."""
    if not isinstance(value, cls):
        raise ConfigError(f"{name} must be {what or 'a ' + cls.__name__}, got "
                          f"{type(value).__name__} {show(value, 60)}")
    return value
