"""Checks of the integers the public API passes on to the C++ core: a value out of range (or
too large for the C++ type) raises a wafersim error naming the parameter, not pybind11's
TypeError with a signature dump."""

from __future__ import annotations

import numpy as np

from .errors import ConfigError, MemoryAccessError

__all__ = ["INT_MAX", "int_arg", "c_int", "index_arg"]

#: The largest value of a C++ ``int``.
INT_MAX = 2**31 - 1


def _is_int(value) -> bool:
    return not isinstance(value, (bool, np.bool_)) and isinstance(value, (int, np.integer))


def int_arg(name: str, value, lo: int, hi: int) -> int:
    """``value`` as an int in ``lo..hi``; ConfigError (a ValueError) otherwise."""
    if not _is_int(value) or not lo <= value <= hi:
        raise ConfigError(f"{name} must be an integer in {lo}..{hi}, got {value!r}")
    return int(value)


def c_int(name: str, value) -> int:
    """An integer a C++ ``int`` holds (the core checks the exact range and names it)."""
    if not _is_int(value):
        raise ConfigError(f"{name} must be an integer, got {value!r}")
    if not -INT_MAX - 1 <= value <= INT_MAX:
        raise ConfigError(f"{name} = {value} is far out of range (more than 2**31 in size)")
    return int(value)


def index_arg(name: str, value, lo: int, hi: int) -> int:
    """An address, count or register number in ``lo..hi``: MemoryAccessError (an
    IndexError) when out of range, ConfigError when not an integer."""
    if not _is_int(value):
        raise ConfigError(f"{name} must be an integer, got {value!r}")
    if not lo <= value <= hi:
        raise MemoryAccessError(f"{name} must be in {lo}..{hi}, got {value!r}")
    return int(value)
