"""Reading and writing one compute element from the host: program images, symbols,
registers, queues, statistics and traces.

Shared by the two drivers of a compute element: the lone-PE bench (:class:`wafersim.pe.LonePE`)
and the PEs of a wafer (``Wafer.pe(r, c)``). Both hold a ``_core.pe.ComputeElement`` (the
same C++ object the cycle loop runs) and inherit the accessors of :class:`CeAccess`.
"""

from __future__ import annotations

import abc
import json
import os
from pathlib import Path

import numpy as np

from ._extension import core
from ._args import index_arg, int_arg
from .asm import Program, assemble, disassemble
from .defaults import DEFAULTS
from .errors import ConfigError, MemoryAccessError
from .layout import as_point
from .values import elements

__all__ = ["CeAccess", "ce_config", "load_program", "write_symbol", "read_symbol",
           "symbol_values", "encode_values", "decode_values", "trace_events",
           "write_chrome_trace", "check_trace_path", "PICKER_POLICIES", "ELEMENT_TYPES"]

_p = core.pe

#: Picker policies [0375]: "round_robin" and "pick_from_last".
PICKER_POLICIES = {"round_robin": _p.PickerPolicy.round_robin,
                   "pick_from_last": _p.PickerPolicy.pick_from_last}

#: Element types of wavelet payloads and their numpy dtypes.
ELEMENT_TYPES = {"fp16": np.float16, "i16": np.int16, "u16": np.uint16,
                 "fp32": np.float32, "i32": np.int32, "u32": np.uint32}


def ids_of(mask: int) -> set[int]:
    return {i for i in range(64) if (mask >> i) & 1}


# ---- configuration -----------------------------------------------------------------------
#: Keyword arguments ce_config() takes (and Wafer(ce={...}) accepts).
CE_OPTIONS = ("fabric_colors", "memory_bytes", "code_bytes", "input_queue_depth",
              "output_queue_depth", "microthreads", "task_start_latency", "picker",
              "rng_seed", "rng_resources", "trace", "profile", "tensor_unit",
              "block_holds_microthreads", "bulk_vector")


def ce_config(*, fabric_colors: int | None = None, memory_bytes: int | None = None,
              code_bytes: int | None = None, input_queue_depth: int | None = None,
              output_queue_depth: int | None = None, microthreads: int | None = None,
              task_start_latency: int | None = None, picker: str = "round_robin",
              rng_seed: int = 0, rng_resources: int | None = None, trace: bool = False,
              profile: bool = False, position: tuple[int, int] = (0, 0), tensor_unit=None,
              block_holds_microthreads: bool = False, bulk_vector: bool = True):
    """A validated ``_core.pe.CeConfig``; unset values come from :data:`wafersim.DEFAULTS`.
    ``tensor_unit``: a :class:`wafersim.TensorUnitConfig` (or True for the default one) to
    attach a tensor unit, created on the PE's first tensor instruction.
    ``block_holds_microthreads``: the literal reading of [0390], where a blocked id's
    microthreads do not resume (default False: blocking gates only what the picker starts).
    ``bulk_vector``: compute a vector operation over memory and registers alone in one loop
    instead of cycle by cycle (same results, cycles and statistics; False: always element by
    element, to compare; docs/compute_element.md)."""
    cfg = _p.CeConfig()
    d = DEFAULTS

    def pick(v, key):
        return d[key] if v is None else v

    cfg.fabric_colors = int_arg("fabric_colors", pick(fabric_colors, "fabric_colors"), 1, 32)
    cfg.memory_bytes = int_arg("memory_bytes", pick(memory_bytes, "pe_memory_bytes"), 16, 1 << 20)
    cfg.code_bytes = int_arg("code_bytes", pick(code_bytes, "pe_code_bytes"), 8, 1 << 20)
    cfg.input_queue_depth = int_arg("input_queue_depth",
                                    pick(input_queue_depth, "ce_input_queue_depth"), 2, 255)
    cfg.output_queue_depth = int_arg("output_queue_depth",
                                     pick(output_queue_depth, "ce_output_queue_depth"), 1, 255)
    cfg.microthreads = int_arg("microthreads", pick(microthreads, "microthreads"), 1, 8)
    cfg.task_start_latency = int_arg("task_start_latency",
                                     pick(task_start_latency, "task_start_latency"), 1, 64)
    cfg.rng_resources = int_arg("rng_resources", pick(rng_resources, "rng_resources"), 1, 7)
    cfg.rng_seed = int_arg("rng_seed", rng_seed, 0, 2**64 - 1)
    if picker not in PICKER_POLICIES:
        raise ConfigError(f"picker must be one of {', '.join(PICKER_POLICIES)}, got {picker!r}")
    cfg.picker = PICKER_POLICIES[picker]
    cfg.trace = bool(trace)
    cfg.profile = bool(profile)
    cfg.block_holds_microthreads = bool(block_holds_microthreads)
    cfg.bulk_vector = bool(bulk_vector)
    row, col = as_point(position, "position")
    cfg.row, cfg.col = int_arg("position row", row, 0, 65535), int_arg("position col", col, 0, 65535)
    if tensor_unit is not None and tensor_unit is not False:
        from .tensor.tensor_unit import TensorUnitConfig, check_config
        t = TensorUnitConfig() if tensor_unit is True else tensor_unit
        if not isinstance(t, TensorUnitConfig):
            raise ConfigError(f"tensor_unit must be a wafersim.TensorUnitConfig (or True), got "
                              f"{type(t).__name__}")
        check_config(t)
        cfg.set_tensor_unit(t.rows, t.cols, t.lanes, t.dtype, t.weight_signed, t.data_signed,
                            t.input_queue_rows, t.sram_bytes, t.pipeline, t.mode)
    cfg.validate()
    return cfg


# ---- program images ------------------------------------------------------------------------
# `target` is any object with `base`, `load_code(first, words)`, `write_memory(addr, bytes)`
# and `read_memory(addr, n)`: a compute element, or a group of a wafer's compute elements.

def load_program(target, program: Program | str, data_bytes: int) -> Program:
    """Writes a program's code, initial data and Base register into a compute element."""
    if isinstance(program, str):
        program = assemble(program)
    if not isinstance(program, Program):
        raise ConfigError(f"load() takes a Program or assembly text, got {type(program).__name__}")
    for addr, data in program.data:
        if addr + len(data) > data_bytes:
            raise MemoryAccessError(
                f"program data at bytes {addr}..{addr + len(data)} does not fit the "
                f"{data_bytes} bytes of data memory")
    first, words = program.code_array()
    target.base = program.base
    target.load_code(first, words)
    for addr, data in program.data:
        target.write_memory(addr, np.frombuffer(data, dtype=np.uint8).copy())
    # Load-time task state (.block, .activate, .filter): set before any cycle runs.
    for color, (lo, hi) in sorted(program.filters.items()):
        target.set_filter(color, lo, hi)
    for tid in sorted(program.blocked):
        target.block(tid)
    for tid in sorted(program.activated):
        target.activate(tid)
    return program


def data_symbol(program: Program, name: str):
    sym = program.exported(name)
    if sym.kind != "data":
        raise ConfigError(f"symbol {name!r} is a task, not data")
    return sym


def symbol_values(sym, name: str, values, per: tuple[int, ...] = ()) -> np.ndarray:
    """``values`` (shape ``per + (count,)``, or anything with ``count`` elements when ``per``
    is empty) converted to the symbol's dtype, refusing values it cannot hold exactly."""
    arr = np.asarray(values)
    if per:
        if arr.shape != per + (sym.count,) and not (sym.count == 1 and arr.shape == per):
            raise ConfigError(f"write({name!r}): expected shape {per + (sym.count,)} (one "
                              f"{sym.count}-element {sym.dtype.name} symbol per PE), got "
                              f"{arr.shape}")
    elif arr.size != sym.count:
        raise ConfigError(f"write({name!r}): the symbol holds {sym.count} {sym.dtype.name} "
                          f"elements, got an array of shape {arr.shape}")
    conv = elements(arr, sym.dtype, f"write({name!r}): values")
    return np.ascontiguousarray(conv.reshape(per + (sym.count,)))


def write_symbol(target, program: Program, name: str, values) -> None:
    """Copies values into an exported data symbol, refusing wrong sizes and values the
    symbol's type cannot hold exactly."""
    sym = data_symbol(program, name)
    conv = symbol_values(sym, name, values)
    target.write_memory(sym.address, conv.view(np.uint8).ravel().copy())


def read_symbol(target, program: Program, name: str) -> np.ndarray:
    """A copy of an exported data symbol."""
    sym = data_symbol(program, name)
    return target.read_memory(sym.address, sym.nbytes).view(sym.dtype).copy()


# ---- wavelet payloads ----------------------------------------------------------------------

def _element_type(dtype: str):
    if dtype not in ELEMENT_TYPES:
        raise ConfigError(f"dtype must be one of {', '.join(ELEMENT_TYPES)}, got {dtype!r}")
    return ELEMENT_TYPES[dtype]


def encode_values(values, dtype: str = "fp16", sw: int = 1, *,
                  overflow: str = "error") -> np.ndarray:
    """Wavelet data words (uint32) carrying ``values``: 16-bit types one per sparse wavelet
    (``sw=1``) or two per dense wavelet (``sw=2``/``4``) [0502]; 32-bit types one each.

    Integer types take whole numbers in their range; float types round to nearest, and a
    finite value beyond their range is a ``ConfigError`` unless ``overflow="inf"``."""
    t = _element_type(dtype)
    if sw not in (1, 2, 4):
        raise ConfigError(f"sw must be 1, 2 or 4, got {sw!r}")
    elems = elements(values, t, "values", exact=False, overflow=overflow).ravel()
    if np.dtype(t).itemsize == 4:
        return elems.view(np.uint32).astype(np.uint32)
    bits = elems.view(np.uint16).astype(np.uint32)
    if sw == 1:
        return bits
    if bits.size % 2:
        bits = np.append(bits, np.uint32(0))
    return bits[0::2] | (bits[1::2] << 16)


def decode_values(data, dtype: str = "fp16", sw: int = 1) -> np.ndarray:
    """The element values carried by wavelet data words (the inverse of encode_values)."""
    t = _element_type(dtype)
    data = np.asarray(data, dtype=np.uint32)
    if np.dtype(t).itemsize == 4:
        return data.view(t).copy()
    lo = (data & 0xFFFF).astype(np.uint16)
    if sw == 1:
        return lo.view(t)
    hi = (data >> 16).astype(np.uint16)
    return np.stack([lo, hi], axis=1).ravel().view(t)


# ---- traces --------------------------------------------------------------------------------

def _id_label(mask: int, task_names: dict[int, str]) -> str:
    if mask == (1 << 64) - 1:
        return "all"
    return ", ".join(str(task_names.get(i, i)) for i in sorted(ids_of(mask)))


def trace_events(stats: dict, pid: int, name: str, task_names: dict[int, str]) -> list[dict]:
    """Chrome/Perfetto trace events of one PE, one microsecond per cycle: task spans
    (thread 0, category ``data_wavelet``, ``control_wavelet`` or ``activation``: what
    started the task), every microthreaded operation from issue to completion (threads
    1..8, by UT State entry), and block / unblock / activate events (instant events on
    thread 0, category the cause: ``instruction``, ``completion``, ``fifo``, ``tensor``,
    ``host``)."""
    events = [{"name": "process_name", "ph": "M", "pid": pid, "args": {"name": name}},
              {"name": "process_sort_index", "ph": "M", "pid": pid, "args": {"sort_index": pid}},
              {"name": "thread_name", "ph": "M", "pid": pid, "tid": 0, "args": {"name": "tasks"}}]
    for tid, how, start, end in stats["task_spans"]:
        events.append({"name": f"task {task_names.get(tid, tid)}", "cat": how, "ph": "X",
                       "ts": start, "dur": end - start + 1, "pid": pid, "tid": 0,
                       "args": {"id": tid, "start": how}})
    for slot, owner, pc, start, end in stats["microthread_spans"]:
        events.append({"name": f"microthread {slot} (task {task_names.get(owner, owner)})",
                       "ph": "X", "ts": start, "dur": end - start + 1, "pid": pid,
                       "tid": 1 + slot, "args": {"pc": pc}})
    for change, mask, cycle, cause in stats.get("id_events", ()):
        label = _id_label(mask, task_names)
        events.append({"name": f"{change} {label}", "cat": cause, "ph": "i", "s": "t",
                       "ts": cycle, "pid": pid, "tid": 0,
                       "args": {"ids": sorted(ids_of(mask)), "cause": cause}})
    return events


def check_trace_path(path) -> Path:
    """``path`` as a Path a trace can be written to, checked before a run spends its time:
    ConfigError when it is not a path, is a folder, or its folder is missing or read-only."""
    try:
        p = Path(path)
    except TypeError:
        raise ConfigError(f"trace must be a file path, got {path!r}") from None
    if p.is_dir():
        raise ConfigError(f"trace={str(p)!r} is a folder; give a file name")
    folder = p.parent
    if not folder.is_dir():
        raise ConfigError(f"trace={str(p)!r}: the folder {str(folder)!r} does not exist")
    if not os.access(folder, os.W_OK):
        raise ConfigError(f"trace={str(p)!r}: the folder {str(folder)!r} is not writable")
    return p


def write_chrome_trace(path: str | Path, events: list[dict]) -> Path:
    """Writes trace events as a JSON file chrome://tracing and Perfetto load."""
    path = Path(path)
    path.write_text(json.dumps({"traceEvents": events, "displayTimeUnit": "ns",
                                "otherData": {"time unit": "1 us = 1 cycle"}}))
    return path


# ---- the accessors both drivers share --------------------------------------------------------

class CeAccess(abc.ABC):
    """State of one compute element. Subclasses provide ``_ce`` (a
    ``_core.pe.ComputeElement``) and ``_program()`` (the loaded :class:`Program`)."""

    _ce = None

    @abc.abstractmethod
    def _program(self) -> Program:
        """The program loaded into this compute element."""

    # ---- symbols and memory ---------------------------------------------------------------
    @property
    def symbols(self) -> dict:
        """The exported symbols of the loaded program (name -> :class:`wafersim.asm.Symbol`)."""
        p = self._program()
        return {n: p.symbols[n] for n in sorted(p.exports) if n in p.symbols}

    def write(self, name: str, values) -> None:
        """Copies ``values`` into the exported data symbol ``name`` (host -> device)."""
        write_symbol(self._ce, self._program(), name, values)

    def read(self, name: str) -> np.ndarray:
        """A copy of the exported data symbol ``name`` (device -> host)."""
        return read_symbol(self._ce, self._program(), name)

    def write_memory(self, address: int, data) -> None:
        """Copies raw bytes (``bytes`` or any array, by its bytes) to ``address``."""
        buf = np.frombuffer(bytes(data), dtype=np.uint8).copy() if isinstance(data, (bytes, bytearray)) \
            else np.ascontiguousarray(data).view(np.uint8).ravel().copy()
        self._ce.write_memory(index_arg("address", address, 0, 2**32 - 1), buf)

    def read_memory(self, address: int, nbytes: int) -> np.ndarray:
        """``nbytes`` raw bytes from ``address`` (MemoryAccessError past the end of memory)."""
        return self._ce.read_memory(index_arg("address", address, 0, 2**32 - 1),
                                    index_arg("nbytes", nbytes, 0, 2**32 - 1))

    def disassemble(self, first: int = 0, count: int | None = None) -> str:
        """A listing of ``count`` instructions (default: 16, or up to the end) from
        instruction index ``first`` in PE memory (what the CE will fetch).
        MemoryAccessError when the range leaves instruction memory."""
        ce = self._ce
        n = ce.config.max_instructions
        first = index_arg("first", first, 0, n)
        count = min(16, n - first) if count is None else count
        count = index_arg("count", count, 0, 2**32 - 1)
        if first + count > n:
            raise MemoryAccessError(f"disassemble({first}, {count}) reads instructions {first}.."
                                    f"{first + count - 1}; instruction memory holds 0..{n - 1}")
        return disassemble([ce.fetch_word(i) for i in range(first, first + count)], first)

    def launch(self, task) -> None:
        """Starts a task: sets the Active bit of its id (a name from the program, or 0..63)."""
        tid = self._program().task_id(task) if isinstance(task, str) else int_arg("task", task, 0, 63)
        self._ce.activate(tid)

    def _task_arg(self, task, what: str) -> int:
        return self._program().task_id(task) if isinstance(task, str) else int_arg(what, task, 0, 63)

    def block(self, task) -> None:
        """Sets the Block bit of a task id (a name from the program, or 0..63): the picker
        starts no task for it until it is unblocked [0390] (see docs/compute_element.md)."""
        self._ce.block(self._task_arg(task, "task"))

    def unblock(self, task) -> None:
        """Clears the Block bit of a task id (a name, or 0..63) [0392]."""
        self._ce.unblock(self._task_arg(task, "task"))

    # ---- input filters (the data filter of [0597]) ------------------------------------------
    def set_filter(self, color: int, lowest: int | None = None, highest: int | None = None) -> None:
        """Keeps only the data wavelets of fabric ``color`` whose index is in ``lowest ..
        highest`` (inclusive): the others are dropped at the compute element's input and
        counted (``stats()["filtered"]``). Control wavelets always pass. With no range, the
        filter is removed."""
        color = int_arg("color", color, 0, 63)
        if lowest is None and highest is None:
            self._ce.clear_filter(color)
            return
        lo = int_arg("lowest", 0 if lowest is None else lowest, 0, 65535)
        hi = int_arg("highest", 65535 if highest is None else highest, 0, 65535)
        if lo > hi:
            raise ConfigError(f"set_filter({color}): lowest {lo} > highest {hi} keeps nothing")
        self._ce.set_filter(color, lo, hi)

    def filter(self, color: int) -> tuple[int, int] | None:
        """The index range the input filter of ``color`` keeps, or None (no filter)."""
        r = self._ce.filter(int_arg("color", color, 0, 63))
        return None if r is None else (int(r[0]), int(r[1]))

    # ---- registers and bits -----------------------------------------------------------------
    def gpr(self, r: int) -> int:
        return self._ce.gpr(index_arg("register", r, 0, 15))

    def set_gpr(self, r: int, value: int) -> None:
        self._ce.set_gpr(index_arg("register", r, 0, 15), int_arg("value", value, 0, 65535))

    def dsr(self, kind: str, n: int) -> int:
        """The raw 48-bit descriptor in DSR ``kind`` ("s0", "s1", "d") number ``n``."""
        if kind not in ("s0", "s1", "d", "S0", "S1", "D"):
            raise ConfigError(f"DSR kind must be 's0', 's1' or 'd', got {kind!r}")
        return self._ce.dsr(kind, index_arg("DSR", n, 0, 11))

    def xdsr(self, n: int) -> int:
        return self._ce.xdsr(index_arg("XDSR", n, 2, 7))

    def stride_register(self, n: int) -> int:
        return self._ce.stride_reg(index_arg("stride register", n, 2, 7))

    @property
    def flag(self) -> bool:
        return self._ce.flag

    @property
    def blocked(self) -> set[int]:
        """Ids whose Block bit is set [0397]."""
        return ids_of(self._ce.blocked_ids)

    @property
    def active(self) -> set[int]:
        """Ids whose Active bit is set [0385]."""
        return ids_of(self._ce.active_ids)

    def input_queue(self, color: int) -> int:
        return self._ce.input_queue_size(int_arg("color", color, 0, 63))

    def output_queue(self, color: int) -> int:
        return self._ce.output_queue_size(int_arg("color", color, 0, 63))

    @property
    def running_task(self) -> int | None:
        t = self._ce.running_task
        return None if t < 0 else t

    @property
    def pc(self) -> int:
        return self._ce.pc

    @property
    def microthreads_in_use(self) -> int:
        return self._ce.microthreads_in_use

    def describe_wait(self) -> str:
        """What the CE is doing and what each waiting part waits on."""
        return self._ce.describe_wait()

    def _task_names(self) -> dict[int, str]:
        try:
            program = self._program()
        except ConfigError:
            return {}
        return {tid: name for name, tid in program.tasks.items()}
