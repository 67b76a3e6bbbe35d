"""Checks of what a user hands the Trainer: samples, targets, labels, validation data and
options. Each raises ConfigError naming the argument, the value and the limit before any
cycle runs; values are cast to the plan's number format only after they are known to be
finite, and checked again after the cast (fp16 holds magnitudes up to 65504)."""

from __future__ import annotations

import numbers

import numpy as np

from ..errors import ConfigError

__all__ = ["as_inputs", "as_targets", "as_validation", "as_bool", "positive_int",
           "positive_number", "MAX_BATCH"]

#: A mini-batch's sample count lives in a 16-bit word of every PE (v_n1, v_gcnt).
MAX_BATCH = 0xFFFF


def _array(X, what: str) -> np.ndarray:
    try:
        return np.asarray(X)
    except (ValueError, TypeError) as e:   # ragged lists and the like
        raise ConfigError(f"{what} must be an array of numbers with one row per sample "
                          f"({type(e).__name__}: {e})") from None


def _numeric(A: np.ndarray, what: str) -> None:
    if A.dtype == object or not (np.issubdtype(A.dtype, np.floating)
                                 or np.issubdtype(A.dtype, np.integer)
                                 or np.issubdtype(A.dtype, np.bool_)):
        raise ConfigError(f"{what} must hold numbers, got dtype {A.dtype}")


def _cast(A64: np.ndarray, t, dtype_name: str, what: str) -> np.ndarray:
    if not np.all(np.isfinite(A64)):
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(A64))[0])
        raise ConfigError(f"{what}{list(bad)} is {A64[bad]}: values must be finite")
    with np.errstate(over="ignore"):
        At = A64.astype(t)
    if not np.all(np.isfinite(At)):
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(At))[0])
        limit = float(np.finfo(t).max)
        raise ConfigError(f"{what}{list(bad)} = {A64[bad]!r} is beyond the range of the plan's "
                          f"{dtype_name} numbers (largest magnitude {limit:.6g})")
    return At


def as_inputs(X, n_in: int, t, dtype_name: str, what: str = "X") -> np.ndarray:
    """(samples, n_in) in the plan's format."""
    X = _array(X, what)
    if X.ndim == 1:
        X = X[None, :]
    if X.ndim != 2 or X.shape[1] != n_in:
        raise ConfigError(f"{what} must have shape (samples, {n_in}), got {X.shape}")
    _numeric(X, what)
    if X.shape[0] == 0:
        raise ConfigError(f"{what} holds no samples")
    return _cast(X.astype(np.float64), t, dtype_name, what)


def as_targets(y, n: int, n_out: int, t, dtype_name: str, what: str = "y"):
    """(targets (n, n_out) in the plan's format, class labels or None): y holds n integer
    class labels (one-hot targets) or target vectors of shape (n, n_out)."""
    y = _array(y, what)
    if y.ndim == 1 and (np.issubdtype(y.dtype, np.integer) or np.issubdtype(y.dtype, np.bool_)):
        if len(y) != n:
            raise ConfigError(f"{what} has {len(y)} labels for {n} samples")
        if y.size and (y.min() < 0 or y.max() >= n_out):
            bad = int(y[(y < 0) | (y >= n_out)][0])
            raise ConfigError(f"{what}: label {bad} is out of range: the model has {n_out} "
                              f"outputs (labels 0..{n_out - 1})")
        Y = np.zeros((n, n_out), dtype=t)
        Y[np.arange(n), y.astype(np.int64)] = 1
        return Y, y.astype(np.int64)
    if y.ndim == 1 and n_out == 1 and len(y) == n:
        y = y[:, None]
    if y.ndim != 2 or y.shape != (n, n_out):
        raise ConfigError(f"{what} must be {n} integer labels or targets of shape "
                          f"({n}, {n_out}), got shape {y.shape} and dtype {y.dtype}")
    _numeric(y, what)
    return _cast(y.astype(np.float64), t, dtype_name, what), None


def as_validation(validation):
    """``fit(validation=)``: None or a pair (X, y)."""
    if validation is None:
        return None
    if not isinstance(validation, (tuple, list)) or len(validation) != 2:
        raise ConfigError(f"validation must be a pair (X, y), got {type(validation).__name__}"
                          + (f" of length {len(validation)}" if isinstance(validation, (tuple, list))
                             else ""))
    return validation


def as_bool(value, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ConfigError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def positive_int(value, name: str, limit: int | None = None) -> int:
    if (isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral)
            or value <= 0 or (limit is not None and value > limit)):
        rng = f"1..{limit}" if limit is not None else "a positive integer"
        raise ConfigError(f"{name} must be an integer in {rng}, got {value!r}"
                          if limit is not None else f"{name} must be {rng}, got {value!r}")
    return int(value)


def positive_number(value, name: str) -> float:
    if (isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real)
            or not np.isfinite(float(value)) or value <= 0):
        raise ConfigError(f"{name} must be a positive number, got {value!r}")
    return float(value)
