"""Turns user arrays into the exact bit patterns the C++ core reads (validated, contiguous)."""

from __future__ import annotations

import numpy as np

from .._args import choice_arg
from ..errors import ConfigError

DTYPES = ("int8", "fp16", "bf16")


def check_dtype(dtype: str) -> str:
    return choice_arg("dtype", dtype, DTYPES)


def bf16_bits(x) -> np.ndarray:
    """float32 values rounded to bfloat16 (nearest even) as uint16 bit patterns."""
    f = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    nan = (f & 0x7FFFFFFF) > 0x7F800000
    rounded = (f + 0x7FFF + ((f >> 16) & 1)) >> 16
    out = np.where(nan, (f >> 16) | 0x40, rounded)
    return out.astype(np.uint16)


def operand_bits(x, dtype: str, is_signed: bool, name: str) -> np.ndarray:
    """A C-contiguous uint8 (int8 dtype) or uint16 (fp16 / bf16) pattern array."""
    a = np.asarray(x)
    if dtype == "int8":
        if a.dtype.kind not in "iub":
            raise ConfigError(f"{name} must hold integers for the int8 array, got dtype {a.dtype}")
        lo, hi = (-128, 127) if is_signed else (0, 255)
        if a.size and (a.min() < lo or a.max() > hi):
            kind = "signed" if is_signed else "unsigned"
            raise ConfigError(f"{name} values must be {kind} 8-bit ({lo}..{hi}), got "
                              f"{a.min()}..{a.max()}")
        return np.ascontiguousarray(a.astype(np.int16).astype(np.uint8) if is_signed else a.astype(np.uint8))
    if dtype == "fp16":
        if a.dtype == np.uint16:
            return np.ascontiguousarray(a)
        if a.dtype.kind != "f":
            raise ConfigError(f"{name} must be floats (or uint16 fp16 bits), got dtype {a.dtype}")
        return np.ascontiguousarray(a.astype(np.float16)).view(np.uint16)
    if a.dtype == np.uint16:
        return np.ascontiguousarray(a)
    if a.dtype.kind != "f":
        raise ConfigError(f"{name} must be floats (or uint16 bf16 bits), got dtype {a.dtype}")
    return bf16_bits(a)


def matrix_pair(a, b, dtype, weight_signed, data_signed):
    """Validated (positions x depth) data and (depth x channels) weights."""
    da = operand_bits(a, dtype, data_signed, "data")
    wb = operand_bits(b, dtype, weight_signed, "weights")
    if da.ndim != 2 or wb.ndim != 2:
        raise ConfigError(f"data must be 2-D (positions, depth) and weights 2-D (depth, channels), "
                          f"got shapes {da.shape} and {wb.shape}")
    if da.shape[1] != wb.shape[0]:
        raise ConfigError(f"mismatched operand sizes: data is {da.shape} (positions, depth) but "
                          f"weights are {wb.shape} (depth, channels); the depths differ")
    if 0 in da.shape or 0 in wb.shape:
        raise ConfigError(f"empty operands: data {da.shape}, weights {wb.shape}")
    return da, wb


def bias_array(bias, channels: int):
    if bias is None:
        return None
    b = np.asarray(bias)
    if b.dtype.kind not in "iu":
        raise ConfigError(f"bias must hold integers (int32), got dtype {b.dtype}")
    if b.shape != (channels,):
        raise ConfigError(f"bias must have shape ({channels},) (one per output channel), got {b.shape}")
    if b.size and (b.min() < -(1 << 31) or b.max() >= (1 << 31)):
        raise ConfigError("bias values must fit int32")
    return np.ascontiguousarray(b, dtype=np.int32)


def result_values(bits: np.ndarray, dtype: str) -> np.ndarray:
    """The core's 32-bit result patterns as int32 or float32 values."""
    return bits.view(np.int32) if dtype == "int8" else bits.view(np.float32)
