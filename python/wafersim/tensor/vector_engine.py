"""The 96-lane vector engine of seed 002 (Fig. 4A), standalone."""

from __future__ import annotations

import re

import numpy as np

from .._extension import core
from .._args import INT_MAX, choice_arg, index_arg, int_arg
from ..asm import vector as vasm
from ..errors import ConfigError, MemoryAccessError

__all__ = ["VectorEngine", "program_words"]

#: The vector engine's pipelines: Fig. 9's staggered one, or all stages at once [0115].
PIPELINES = ("stagger", "parallel")
_NAME = re.compile(r"^(RB|RW|RD)(\d+)$", re.IGNORECASE)
_DTYPE = {"RB": np.uint8, "RW": np.uint16, "RD": np.uint32}


def program_words(program) -> np.ndarray:
    """Source text or an (n, 2) uint64 bundle array -> contiguous (n, 2) uint64 words."""
    if isinstance(program, str):
        return vasm.assemble(program)
    w = np.asarray(program)
    if w.dtype != np.uint64 or w.ndim != 2 or w.shape[1] != 2:
        raise ConfigError("a vector program is source text or an (n, 2) uint64 array from "
                          "wafersim.asm.vector.assemble")
    return np.ascontiguousarray(w)


class VectorEngine:
    """``lanes`` processing elements running 128-bit load/ALU/store triads [0087]-[0093].

    Registers RD0-7 (32-bit) alias RW0-15 and RB0-31 [0062]-[0064]; ``reg("RB5")`` reads byte
    1 of RD1 in every lane. Rows pushed with :meth:`push_row` wait in the input queue for DEQ.
    ``pipeline="stagger"`` is Fig. 9; ``"parallel"`` runs L, A and S in one cycle [0115].
    """

    def __init__(self, lanes: int = 96, *, sram_bytes: int = 64 * 1024, pipeline: str = "stagger"):
        self._v = core.tensor.VectorEngine(
            int_arg("lanes", lanes, 1, 1024), int_arg("sram_bytes", sram_bytes, 0, 2**30),
            choice_arg("pipeline", pipeline, PIPELINES))

    @classmethod
    def viewing(cls, engine) -> "VectorEngine":
        """A view of a vector engine that another object of the core owns (the one of a
        :class:`wafersim.TensorUnit`, which returns it as ``vector_engine``)."""
        view = cls.__new__(cls)
        view._v = engine
        return view

    lanes = property(lambda self: self._v.lanes)

    @staticmethod
    def _name(name: str):
        m = _NAME.match(name.strip()) if isinstance(name, str) else None
        if not m:
            raise ConfigError(f"register name must be RB0-31, RW0-15 or RD0-7, got {name!r}")
        return m.group(1).upper(), int(m.group(2))

    def reg(self, name: str) -> np.ndarray:
        """Lane values of a register (uint8 / uint16 / uint32 for RB / RW / RD)."""
        file, idx = self._name(name)
        return self._v.read_reg(file, idx).astype(_DTYPE[file])

    def set_reg(self, name: str, values) -> None:
        """Writes every lane of a register; only that alias's bytes change."""
        file, idx = self._name(name)
        v = np.asarray(values)
        if v.shape == ():
            v = np.full(self.lanes, v)
        if v.dtype.kind not in "iu" and not (file == "RD" and v.dtype == np.float32):
            raise ConfigError(f"{name} takes integers (or float32 for RD), got dtype {v.dtype}")
        if v.dtype == np.float32:
            v = v.view(np.uint32)
        bits = (v.astype(np.int64) & ((1 << (8 * np.dtype(_DTYPE[file]).itemsize)) - 1)).astype(np.uint32)
        self._v.write_reg(file, idx, np.ascontiguousarray(bits))

    def mask(self, index: int) -> np.ndarray:
        return self._v.read_mask(index_arg("mask", index, 0, INT_MAX)).astype(bool)

    def set_mask(self, index: int, bits) -> None:
        self._v.write_mask(index_arg("mask", index, 0, INT_MAX), np.ascontiguousarray(np.asarray(bits, dtype=bool), dtype=np.uint8))

    carry = property(lambda self: self._v.carry.astype(bool), doc="per-lane carry/borrow/overflow [0059]")
    fp_status = property(lambda self: self._v.fp_status, doc="sticky NV/OF/UF/NX [0059]")

    def clear_fp_status(self) -> None:
        self._v.clear_fp_status()

    def push_row(self, values, cycle: int | None = None) -> None:
        """Appends one input-queue row (``lanes`` 32-bit values; int32 wraps). ``cycle`` is
        when it arrives (default: now, no stall)."""
        v = np.asarray(values)
        if v.dtype == np.float32:
            v = v.view(np.uint32)
        if v.dtype.kind not in "iu":
            raise ConfigError(f"queue rows hold integers or float32, got dtype {v.dtype}")
        self._v.push_row(np.ascontiguousarray(v.astype(np.int64) & 0xFFFFFFFF, dtype=np.uint32),
                         -1 if cycle is None else int_arg("cycle", cycle, 0, 2**62))

    queued_rows = property(lambda self: self._v.queued_rows)

    def load(self, program) -> None:
        """Puts a program (source text or assembled words) into the instruction buffer."""
        self._v.load_program(program_words(program))

    def run(self) -> bool:
        """Runs the loaded program with the cycle model until it ends (True) or a DEQ waits
        on an empty queue (False; push rows and call run again)."""
        return self._v.run() == self._v.program_size

    pc = property(lambda self: self._v.pc)

    def execute(self, program) -> None:
        """Executes bundles at once, functionally (no timing)."""
        for lo, hi in program_words(program):
            self._v.execute(int(lo), int(hi))

    def pop_output(self) -> list[np.ndarray]:
        """Rows sent to the output buffer (OUT.B) since the last call, oldest first."""
        return [row for row, _cycle in self._v.pop_output()]

    def read_sram(self, addr: int, n: int) -> np.ndarray:
        return self._v.read_sram(index_arg("addr", addr, 0, 2**62), index_arg("n", n, 0, 2**62))

    def write_sram(self, addr: int, data) -> None:
        d = np.asarray(data)
        if d.dtype != np.uint8:
            raise MemoryAccessError(f"SRAM writes take uint8 bytes, got dtype {d.dtype}")
        self._v.write_sram(index_arg("addr", addr, 0, 2**62), np.ascontiguousarray(d))

    read_pointer = property(lambda self: self._v.read_pointer,
                            lambda self, p: setattr(self._v, "read_pointer",
                                                    index_arg("read_pointer", p, 0, 2**62)))
    write_pointer = property(lambda self: self._v.write_pointer,
                             lambda self, p: setattr(self._v, "write_pointer",
                                                     index_arg("write_pointer", p, 0, 2**62)))
    counters = property(lambda self: self._v.counters, doc="cycles, bundles, stalls by cause")

    def reset(self) -> None:
        self._v.reset()
