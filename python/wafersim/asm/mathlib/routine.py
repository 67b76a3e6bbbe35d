"""What a math-library call returns (:class:`Routine`) and how one is built: the checks of
its arguments, then the routine's steps written by an :class:`~.emitter.Emitter`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ...errors import ConfigError
from .emitter import Emitter
from .reference import evaluate

__all__ = ["Routine", "build"]

_LABEL = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")
DATA_BYTES = 32 * 1024   # what 15-bit descriptor addresses reach [0522]


@dataclass(frozen=True)
class Routine:
    """One call of a math-library routine on ``n`` elements.

    ``data``: lines for the program's ``.data`` section (descriptors, scratch vectors, all
    labels starting with ``prefix + "_"``). ``code``: straight-line lines for a task's code
    (no labels, no task directives, no terminate): it clobbers the S0/S1/D descriptor
    registers of the numbers in ``dsrs`` and the registers in ``gprs``, and nothing else
    (not the flag). ``cycles``: the cycles the code takes, counted (one per descriptor
    load, one or two per ``li``, one per vector iteration), the same on a lone PE (a test
    measures it). The FP control register must be at its default (round to nearest even,
    subnormals kept): the reductions round to integers by adding 1.5 * 2^p.
    """

    name: str
    dtype: str
    compute: str          # the format the arithmetic is done in
    n: int
    src: str
    dst: str
    prefix: str
    data: tuple[str, ...]
    code: tuple[str, ...]
    cycles: int
    dsrs: tuple[int, ...]
    gprs: tuple[str, ...]
    scratch_bytes: int
    descriptor_bytes: int
    ops: tuple = field(repr=False, default=())
    buffers: dict = field(repr=False, default_factory=dict)

    def reference(self, values) -> np.ndarray:
        """The results the code leaves in ``dst`` for ``values`` (any number of elements of
        ``dtype``), computed by numpy operation by operation: bit for bit what the PE
        computes (reference.py), for host-side models such as a device-order reference."""
        return evaluate(self.ops, self.buffers, self.src, self.dst, self.dtype, values)

    @property
    def cycles_per_element(self) -> float:
        return self.cycles / self.n

    def text(self) -> str:
        """The routine as a ``.data`` and a ``.code`` section (for reading or a listing)."""
        return "\n".join([".data", *self.data, ".code", *self.code]) + "\n"


def _label(what: str, value) -> str:
    if not isinstance(value, str) or not _LABEL.match(value):
        raise ConfigError(f"{what} must be an assembly label (letters, digits, '_', '.'; "
                          f"not starting with a digit), got {value!r}")
    return value


def build(name: str, emit, dtype, *, n, src, dst, prefix, dsrs, gprs, compute,
          computes) -> Routine:
    """Checks the arguments, then lets ``emit(e, dtype, compute, x, y)`` write the steps."""
    if dtype not in ("fp16", "fp32"):
        raise ConfigError(f"mathlib.{name}: dtype must be 'fp16' or 'fp32', got {dtype!r}")
    if compute is None:
        compute = computes[dtype]
    if compute not in ("fp16", "fp32") or (dtype == "fp32" and compute != "fp32"):
        choices = "'fp32'" if dtype == "fp32" else "'fp16' or 'fp32'"
        raise ConfigError(f"mathlib.{name}: compute must be {choices} for {dtype} data, "
                          f"got {compute!r}")
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 32767:
        raise ConfigError(f"mathlib.{name}: n must be an int in 1..32767 (a descriptor's "
                          f"length field), got {n!r}")
    src, dst = _label("src", src), _label("dst", dst)
    prefix = _label("prefix", prefix)
    e = Emitter(prefix, n, dsrs, gprs)
    x = e.external(src, dtype, "src")
    y = x if dst == src else e.external(dst, dtype, "dst")
    emit(e, dtype, compute, x, y)
    if e.scratch_bytes > DATA_BYTES:
        raise ConfigError(f"mathlib.{name}({dtype}, n={n}) needs {e.scratch_bytes} bytes of "
                          f"scratch, more than the {DATA_BYTES} bytes of PE data memory; "
                          f"call it on shorter pieces")
    return Routine(name, dtype, compute, n, src, dst, prefix, tuple(e.data), tuple(e.code),
                   e.cycles, tuple(e.dsrs), tuple(f"r{r}" for r in e.gprs), e.scratch_bytes,
                   e.descriptor_bytes, tuple(e.ops), dict(e.buffers))
