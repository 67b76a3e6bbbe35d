"""The whole tensor unit of seed 002: matrix array + vector engine + post-processor under a
control unit, so that a layer runs from one call."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

import numpy as np

from .._extension import core
from .._args import INT_MAX, bool_arg, choice_arg, int_arg
from ..errors import ConfigError
from ._operands import bias_array, check_dtype, matrix_pair, result_values
from .formatter import conv_output_size, format_conv_data, format_conv_weights
from .vector_engine import PIPELINES, VectorEngine, program_words

__all__ = ["TensorUnitConfig", "TensorUnit", "quantize_program"]

MODES = ("fast", "cycle")


@dataclass(frozen=True)
class TensorUnitConfig:
    """Parameters of a tensor unit. ``rows`` x ``cols`` is the matrix array (96 x 96 or
    192 x 48 in seed 002 [0024]); ``lanes`` the vector engine's width and the array-to-engine
    channel in 32-bit elements [0030]; ``input_queue_rows`` the engine's input buffer;
    ``pipeline`` "stagger" (Fig. 9) or "parallel" [0115]; ``mode`` "fast" (blocked kernels,
    analytic timing) or "cycle" (every unit clocked; identical results and cycles)."""

    rows: int = 96
    cols: int = 96
    lanes: int = 96
    dtype: str = "int8"
    weight_signed: bool = True
    data_signed: bool = False
    input_queue_rows: int = 4
    sram_bytes: int = 64 * 1024
    pipeline: str = "stagger"
    mode: str = "fast"


def check_config(config: TensorUnitConfig) -> None:
    """The checks Python makes before the core sees a configuration (ConfigError)."""
    check_dtype(config.dtype)
    choice_arg("mode", config.mode, MODES)
    choice_arg("pipeline", config.pipeline, PIPELINES)
    for name in ("weight_signed", "data_signed"):
        bool_arg(f"TensorUnitConfig.{name}", getattr(config, name))
    for name, lo, hi in (("rows", 1, 1024), ("cols", 1, 1024), ("lanes", 1, 1024),
                         ("input_queue_rows", 1, 4096), ("sram_bytes", 0, 2**30)):
        int_arg(f"TensorUnitConfig.{name}", getattr(config, name), lo, hi)


def _pair(value, name: str, default: tuple[int, int]) -> tuple[int, int]:
    """A (a, b) pair of positive ints (``default`` for None)."""
    if value is None:
        return default
    try:
        a, b = value
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be a pair of integers, got {value!r}") from None
    return int_arg(f"{name}[0]", a, 1, INT_MAX), int_arg(f"{name}[1]", b, 1, INT_MAX)


def quantize_program(scale: int, shift: int, zero_point: int = 0, *, relu: bool = True,
                     signed: bool = False) -> str:
    """The one-triad vector program of a quantized layer: dequeue a 32-bit row, (ReLU +)
    quantize it to 8 bits in one instruction [0027], send it to the post-processor."""
    op = ("RELUQ" if relu else "QNT") + (".S8" if signed else ".U8")
    return (f"DEQ.W RD0 | {op} RB4, RD0, scale={scale}, shift={shift}, zp={zero_point} "
            f"| OUT.B RB4\n")


class TensorUnit:
    """Matrix array, vector engine and post-processor driven by one control unit.

    ``ws.TensorUnit(rows=96, cols=96, lanes=96)`` or ``ws.TensorUnit(ws.TensorUnitConfig(...))``.
    :meth:`layer` and :meth:`conv2d` run a whole int8 layer; :meth:`matmul` the array alone.
    :attr:`stats` holds the last call's counters, :attr:`counters` the running totals.
    """

    def __init__(self, config: TensorUnitConfig | None = None, **overrides):
        known = [f.name for f in fields(TensorUnitConfig)]
        unknown = [k for k in overrides if k not in known]
        if unknown:
            raise ConfigError(f"TensorUnit has no parameter {', '.join(unknown)}; its "
                              f"parameters are {', '.join(known)}")
        if config is not None and not isinstance(config, TensorUnitConfig):
            raise ConfigError(f"config must be a TensorUnitConfig, got {type(config).__name__}")
        if config is None:
            config = TensorUnitConfig(**overrides)
        elif overrides:
            config = TensorUnitConfig(**{**asdict(config), **overrides})
        check_config(config)
        self.config = config
        c = config
        self._t = core.tensor.TensorUnit(c.rows, c.cols, c.lanes, c.dtype, c.weight_signed,
                                          c.data_signed, c.input_queue_rows, c.sram_bytes,
                                          c.pipeline, c.mode)
        self.stats: dict = {}
        self._program_text: str | None = None

    @property
    def vector_engine(self) -> VectorEngine:
        """The unit's vector engine (registers, masks, SRAM after a layer)."""
        return VectorEngine.viewing(self._t.vector_engine)

    @property
    def counters(self) -> dict:
        """Totals over every call: cycles, MACs, utilization against peak, stalls by cause."""
        return self._t.counters()

    def reset_counters(self) -> None:
        self._t.reset_counters()

    def load_vector_program(self, program) -> None:
        """The program the control unit issues once per dequeued group of array rows."""
        self._t.load_vector_program(program_words(program))

    def matmul(self, a, b, bias=None) -> np.ndarray:
        """The matrix array alone: ``a`` (positions, depth) @ ``b`` (depth, channels) (+ bias)."""
        c = self.config
        da, wb = matrix_pair(a, b, c.dtype, c.weight_signed, c.data_signed)
        out, self.stats = self._t.run_matmul(da, wb, bias_array(bias, wb.shape[1]))
        return result_values(out, c.dtype)

    def layer(self, data, weights, bias=None, *, extent: tuple[int, int] | None = None,
              pool: tuple[int, int] | None = None, program=None) -> np.ndarray:
        """One layer: ``data`` (positions, depth) x ``weights`` (depth, channels) through the
        array, the vector ``program`` on every drained row, max pooling (``pool`` = (kernel,
        stride)) over ``extent`` = (height, width) positions. Returns (channels, Hp, Wp) uint8.
        """
        c = self.config
        if c.dtype != "int8":
            raise ConfigError("layer() runs the int8 pipeline; use matmul() for fp16/bf16")
        da, wb = matrix_pair(data, weights, c.dtype, c.weight_signed, c.data_signed)
        if program is not None:
            self.load_vector_program(program)
        positions = da.shape[0]
        h, w = _pair(extent, "extent", (1, positions))
        k, s = _pair(pool, "pool", (1, 1))
        out, self.stats = self._t.run_layer(da, wb, bias_array(bias, wb.shape[1]), k, s, h, w)
        return out

    def conv2d(self, x, w, bias=None, *, scale: int, shift: int, zero_point: int = 0,
               relu: bool = True, stride: int = 1, padding: int = 0,
               pool: tuple[int, int] | None = None) -> np.ndarray:
        """A quantized convolution layer: u8 map ``x`` (C, H, W), s8 filters ``w`` (O, C, kh,
        kw), int32 ``bias`` (O,), then ReLU + quantize to u8 in the vector engine and optional
        max pooling. Returns (O, Hp, Wp) uint8."""
        x = np.asarray(x)
        w = np.asarray(w)
        if w.ndim != 4 or x.ndim != 3 or w.shape[1] != x.shape[0]:
            raise ConfigError(f"conv2d needs x (C, H, W) and w (O, C, kh, kw) with equal C, got "
                              f"{x.shape} and {w.shape}")
        data = format_conv_data(x, (w.shape[2], w.shape[3]), stride, padding)
        weights = format_conv_weights(w)
        ho = conv_output_size(x.shape[1], w.shape[2], stride, padding)
        wo = conv_output_size(x.shape[2], w.shape[3], stride, padding)
        prog = quantize_program(scale, shift, zero_point, relu=relu)
        return self.layer(data, weights, bias, extent=(ho, wo), pool=pool, program=prog)

    def __repr__(self) -> str:
        c = self.config
        return f"TensorUnit(rows={c.rows}, cols={c.cols}, lanes={c.lanes}, dtype={c.dtype!r})"
