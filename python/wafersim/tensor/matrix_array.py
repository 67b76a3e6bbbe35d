"""The matrix (computational) array of seed 002: units, shadow chains, FIFO mode, passes."""

from __future__ import annotations

import numpy as np

from .._extension import core
from .._args import bool_arg, c_int
from ..errors import ConfigError
from ._operands import bias_array, check_dtype, matrix_pair, operand_bits, result_values

__all__ = ["MatrixArray", "FIFO_FORMATS", "fifo_row"]

#: Input-queue element formats of [0045]: name -> (elements, bits per element).
FIFO_FORMATS = {"96x1B": (96, 8), "48x2B": (48, 16), "96x2B": (96, 16), "192x4b": (192, 4)}


def fifo_row(values, fmt: str, lanes: int) -> np.ndarray:
    """Packs one vector of the input queue's element format [0045] into `lanes` 32-bit lanes.

    96x1B, 48x2B and 96x2B put one element per lane (zero-extended); 192x4b packs two 4-bit
    elements per lane (element 2i in bits 3:0 of lane i, element 2i+1 in bits 7:4).
    """
    if fmt not in FIFO_FORMATS:
        raise ConfigError(f"fifo format must be one of {', '.join(FIFO_FORMATS)}, got {fmt!r}")
    n, bits = FIFO_FORMATS[fmt]
    v = np.asarray(values)
    if v.shape != (n,) or v.dtype.kind not in "iu":
        raise ConfigError(f"a {fmt} row is {n} integers, got shape {v.shape} dtype {v.dtype}")
    if v.min() < 0 or v.max() >= (1 << bits):
        raise ConfigError(f"{fmt} elements must be in 0..{(1 << bits) - 1}")
    per_lane = 2 if bits == 4 else 1
    if n // per_lane > lanes:
        raise ConfigError(f"a {fmt} row needs {n // per_lane} lanes, the array has {lanes}")
    out = np.zeros(lanes, dtype=np.uint32)
    if per_lane == 2:
        out[: n // 2] = v[0::2].astype(np.uint32) | (v[1::2].astype(np.uint32) << 4)
    else:
        out[:n] = v
    return out


class MatrixArray:
    """``rows`` x ``cols`` computation units (default 96 x 96; 192 x 48 also per [0024]).

    Each cycle a data vector (``cols`` operands) is broadcast down the columns and a weight
    vector (``rows`` operands) along the rows [0118]. Unit (row j, column i) computes
    ``acc = (clear ? 0 : acc) + w_j * d_i`` in 32 bits [0120], [0127]. ``dtype="int8"``
    takes signed weights and unsigned data by default [0127]; ``"fp16"`` / ``"bf16"`` are
    wafersim's training extension with fp32 accumulators.
    """

    def __init__(self, rows: int = 96, cols: int = 96, *, lanes: int = 96, dtype: str = "int8",
                 weight_signed: bool = True, data_signed: bool = False):
        self.dtype = check_dtype(dtype)
        rows, cols, lanes = (c_int(name, v)  # the core names the exact range
                             for name, v in (("rows", rows), ("cols", cols), ("lanes", lanes)))
        self.weight_signed = bool_arg("weight_signed", weight_signed)
        self.data_signed = bool_arg("data_signed", data_signed)
        self.lanes = lanes
        self._a = core.tensor.MatrixArray(rows, cols, lanes, dtype,
                                           self.weight_signed, self.data_signed)
        #: Statistics of the last :meth:`matmul`.
        self.stats: dict = {}

    rows = property(lambda self: self._a.rows)
    cols = property(lambda self: self._a.cols)
    cycle = property(lambda self: self._a.cycle, doc="clock cycles stepped since reset")

    def _vector(self, v, n, name, is_signed):
        if v is None:
            return np.zeros(n, dtype=np.uint32)
        bits = operand_bits(v, self.dtype, is_signed, name)
        if bits.shape != (n,):
            raise ConfigError(f"{name} must have {n} operands, got shape {bits.shape}")
        return bits.astype(np.uint32)

    def step(self, data=None, weights=None, *, enable: bool | None = None, clear: bool = False,
             capture: bool = False, shift: bool = False):
        """One clock of every unit (Fig. 10). ``enable`` defaults to "operands given".

        ``capture`` copies each accumulator's value from before this cycle's MAC into its
        shadow register; ``shift`` moves the shadows one row towards the vector engine and
        returns the row that leaves (row 0, ``cols`` values), else None [0123].
        """
        if enable is None:
            enable = data is not None or weights is not None
        d = self._vector(data, self.cols, "data", self.data_signed)
        w = self._vector(weights, self.rows, "weights", self.weight_signed)
        out = self._a.step(d, w, bool(enable), bool(clear), bool(capture), bool(shift))
        return None if out is None else result_values(out, self.dtype)

    def accumulators(self) -> np.ndarray:
        """(rows, cols) accumulator values: int32, or float32 for fp16/bf16."""
        return result_values(self._a.accumulators(), self.dtype)

    def shadows(self) -> np.ndarray:
        """(rows, cols) shadow-register values; row 0 is next to the vector engine."""
        return result_values(self._a.shadows(), self.dtype)

    def fifo_step(self, row=None, fmt: str | None = None):
        """FIFO mode [0036]-[0038]: shifts every stage; ``row`` (``cols`` 32-bit lane values,
        or a vector of the [0045] format ``fmt``) enters the first stage. Returns the row
        leaving the last stage (pushed ``rows`` steps earlier) or None."""
        if row is None:
            return self._a.fifo_step(None)
        lanes = fifo_row(row, fmt, self.cols) if fmt else np.ascontiguousarray(row, dtype=np.uint32)
        if lanes.shape != (self.cols,):
            raise ConfigError(f"a FIFO row has {self.cols} lanes, got shape {lanes.shape}")
        return self._a.fifo_step(lanes)

    def reset(self) -> None:
        self._a.reset()

    def matmul(self, a, b, bias=None, *, mode: str = "fast") -> np.ndarray:
        """``a @ b`` through the array: ``a`` is (positions, depth) data, ``b`` (depth,
        channels) weights; optional int32 ``bias`` per channel enters through a constant-1
        data operand [0130]. Returns int32 (or float32) (positions, channels); the cycle
        counts are in :attr:`stats`. ``mode="cycle"`` clocks every unit (slow, for checks)."""
        da, wb = matrix_pair(a, b, self.dtype, self.weight_signed, self.data_signed)
        bias32 = bias_array(bias, wb.shape[1])
        if mode not in ("fast", "cycle"):
            raise ConfigError(f"mode must be 'fast' or 'cycle', got {mode!r}")
        out, self.stats = self._a.matmul(da, wb, bias32, mode)
        return result_values(out, self.dtype)

    def __repr__(self) -> str:
        return f"MatrixArray(rows={self.rows}, cols={self.cols}, dtype={self.dtype!r})"
