"""One processing element's compute element, on a test bench of its own.

:class:`LonePE` runs a program on a single compute element exactly as the fabric runs it
(the same C++ object and cycle contract), with a minimal router around it: you inject
wavelets per color from numpy arrays, choose colors that loop from the CE's output back to
its input (the on-ramp -> off-ramp route of seed 000 [0092]-[0093] that self-waking tasks
use [0413]), and collect what it sends on every other color. It is the kernel writer's
unit-test tool; see docs/compute_element.md. On a wafer, ``Wafer.pe(r, c)`` gives the same
accessors (both inherit :class:`wafersim.ce_access.CeAccess`).

    pe = ws.pe.LonePE(loopback=[5])
    pe.load(ws.asm.assemble(source))
    pe.write("w", weights)
    pe.inject(3, x, dtype="fp16", index=np.arange(len(x)))
    pe.launch("main")
    stats = pe.run()
    y = pe.output_values(7, "fp16")
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ._extension import core
from .asm import Program
from .blas_threads import quiet_blas
from .ce_access import (PICKER_POLICIES, CeAccess, ce_config, check_trace_path, decode_values,
                        encode_values, int_arg, load_program, read_symbol, trace_events,
                        write_chrome_trace, write_symbol)
from .defaults import DEFAULTS
from .errors import ConfigError, CycleLimitError
from .values import integers

__all__ = ["LonePE", "PICKER_POLICIES", "load_program", "write_symbol", "read_symbol"]

_p = core.pe


def _mask(colors, name: str) -> int:
    m = 0
    for c in colors:
        m |= 1 << int_arg(f"{name} color", c, 0, 63)
    return m


class LonePE(CeAccess):
    """A compute element with a loopback/injection/sink bench around it.

    Parameters default to :data:`wafersim.DEFAULTS`. ``loopback`` lists fabric colors
    routed from the CE's on ramp back to its off ramp through a router queue of
    ``router_queue_depth`` entries; every other fabric color the CE sends is collected
    (see :meth:`output`). ``picker`` is ``"round_robin"`` or ``"pick_from_last"``
    [0375]; ``task_start_latency`` is the cycles from a pick to the task's first issue.
    ``trace=True`` records task spans for :meth:`write_trace`; ``profile=True`` counts busy
    cycles per instruction address (``stats()["busy_by_pc"]``). ``tensor_unit`` attaches a
    tensor unit (a :class:`wafersim.TensorUnitConfig`, or True for the default; docs/tensor.md).
    ``block_holds_microthreads=True`` takes [0390] literally: the microthreads of a blocked
    id do not resume (by default blocking gates only what the picker starts).
    ``bulk_vector=False`` runs every vector operation element by element, cycle by cycle
    (by default one over memory and registers alone is computed in one loop, with the same
    results, cycles and statistics; docs/compute_element.md).
    """

    def __init__(self, *, fabric_colors: int | None = None, memory_bytes: int | None = None,
                 code_bytes: int | None = None, input_queue_depth: int | None = None,
                 output_queue_depth: int | None = None, microthreads: int | None = None,
                 task_start_latency: int | None = None, picker: str = "round_robin",
                 loopback=(), router_queue_depth: int | None = None, rng_seed: int = 0,
                 rng_resources: int | None = None, trace: bool = False, profile: bool = False,
                 position: tuple[int, int] = (0, 0), tensor_unit=None,
                 block_holds_microthreads: bool = False, bulk_vector: bool = True):
        cfg = ce_config(fabric_colors=fabric_colors, memory_bytes=memory_bytes,
                        code_bytes=code_bytes, input_queue_depth=input_queue_depth,
                        output_queue_depth=output_queue_depth, microthreads=microthreads,
                        task_start_latency=task_start_latency, picker=picker,
                        rng_seed=rng_seed, rng_resources=rng_resources, trace=trace,
                        profile=profile, position=position, tensor_unit=tensor_unit,
                        block_holds_microthreads=block_holds_microthreads,
                        bulk_vector=bulk_vector)
        depth = int_arg("router_queue_depth",
                        DEFAULTS["router_queue_depth"] if router_queue_depth is None
                        else router_queue_depth, 1, 64)
        self._pe = _p.LonePe(cfg, _mask(loopback, "loopback"), depth)
        self._ce = self._pe.ce
        self.config = cfg
        self.program: Program | None = None

    # ---- program ------------------------------------------------------------------------
    def load(self, program: Program | str) -> Program:
        """Loads code, initial data and the Base register; a string is assembled first."""
        self.program = load_program(self._ce, program, self.config.data_bytes)
        return self.program

    def _program(self) -> Program:
        if self.program is None:
            raise ConfigError("no program loaded: call load() first")
        return self.program

    # ---- wavelets -----------------------------------------------------------------------
    def inject(self, color: int, values, *, dtype: str = "fp16", sw: int = 1, index=None,
               ctrl=None, start: int = 0, interval: int = 1, overflow: str = "error") -> int:
        """Queues wavelets carrying ``values`` on ``color``; returns how many.

        16-bit types with ``sw=1`` send one element per (sparse) wavelet with ``index``;
        ``sw=2``/``4`` pack two elements per (dense) wavelet [0502]; 32-bit types send one
        element per wavelet. The k-th wavelet is due at ``start + k * interval``. Values the
        type cannot hold raise ``ConfigError`` (fp16/fp32 round to nearest; a finite value
        beyond their range becomes inf only with ``overflow="inf"``).
        """
        return self.inject_wavelets(color, encode_values(values, dtype, sw, overflow=overflow),
                                    index=index, ctrl=ctrl, start=start, interval=interval)

    def inject_wavelets(self, color: int, data, *, index=None, ctrl=None, start: int = 0,
                        interval: int = 1) -> int:
        """Queues raw wavelets: 32-bit ``data``, optional 16-bit ``index`` and ``ctrl`` bits
        (scalars or one per wavelet; out-of-range values raise ``ConfigError``)."""
        data = np.ascontiguousarray(integers(data, "data", 0, 2**32 - 1, np.uint32).ravel())
        n = data.size

        def per_wavelet(v, dt, name, hi):
            if v is None:
                return np.zeros(0, dtype=dt)
            a = integers(v, name, 0, hi, dt, bools=name == "ctrl")
            if a.ndim == 0:
                a = np.full(n, a)
            if a.size != n:
                raise ConfigError(f"{name} must be a scalar or have one entry per wavelet ({n}), "
                                  f"got shape {a.shape}")
            return np.ascontiguousarray(a.ravel())

        self._pe.inject(int_arg("color", color, 0, 63), data,
                        per_wavelet(index, np.uint16, "index", 2**16 - 1),
                        per_wavelet(ctrl, np.uint8, "ctrl", 1), int_arg("start", start, 0, 2**63),
                        int_arg("interval", interval, 1, 2**31))
        return n

    def pending_injections(self, color: int) -> int:
        """Injected wavelets on ``color`` the CE has not accepted yet (backpressure holds
        them at the producer)."""
        return self._pe.pending_injections(int_arg("color", color, 0, 63))

    def close(self, color: int, index: int, *, start: int = 0) -> None:
        """Queues a control (closeout) wavelet whose index starts task ``index & 63`` [0371]."""
        self.inject_wavelets(color, [0], index=[int_arg("index", index, 0, 65535)], ctrl=[1],
                             start=start)

    def stall_output(self, color: int, stalled: bool = True) -> None:
        """Makes the sink refuse ``color`` so the CE's output queue fills [0337]."""
        self._pe.set_sink_stalled(int_arg("color", color, 0, 63), bool(stalled))

    def output(self, color: int) -> dict:
        """Everything the CE sent on ``color`` (not looped back): arrays ``cycle``, ``data``,
        ``index``, ``ctrl``."""
        return self._pe.sink(int_arg("color", color, 0, 63))

    def output_values(self, color: int, dtype: str = "fp16", sw: int = 1, *,
                      include_control: bool = False) -> np.ndarray:
        """The element values sent on ``color`` (control wavelets left out by default)."""
        out = self.output(color)
        data = out["data"] if include_control else out["data"][~out["ctrl"]]
        return decode_values(data, dtype, sw)

    # ---- running ------------------------------------------------------------------------
    def run(self, cycles: int | None = None, *, max_cycles: int = 1_000_000,
            watchdog: int = 10_000, trace: str | Path | bool | None = None) -> dict:
        """Runs ``cycles`` cycles, or (by default) until the CE is idle and nothing is in
        flight. Returns :meth:`stats`. Raises :class:`wafersim.DeadlockError` (with a
        report of what waits on what) when nothing moved for ``watchdog`` cycles, and
        :class:`wafersim.CycleLimitError` when ``max_cycles`` pass without finishing.
        On a LonePE created with ``trace=True``, ``run(trace=True)`` also returns the
        recorded trace events (task and microthread spans, block / unblock / activate
        events; docs/compute_element.md) in ``stats["trace"]``, and ``trace="run.json"``
        writes them as a Chrome/Perfetto trace too (its folder is checked before the run).
        Ctrl-C (SIGINT) stops a run with a ``KeyboardInterrupt``."""
        tracing = trace is not None and trace is not False
        if tracing and not self.config.trace:
            raise ConfigError("tracing is off: create the LonePE with trace=True")
        path = None if trace is True or not tracing else check_trace_path(trace)
        if cycles is not None:
            cycles = int_arg("cycles", cycles, 0, 2**63)
            with quiet_blas():
                self._pe.run(cycles)
        else:
            limits = (int_arg("max_cycles", max_cycles, 0, 2**63),
                      int_arg("watchdog", watchdog, 0, 2**63))
            with quiet_blas():
                done = self._pe.run_until_idle(*limits)
            if not done:
                raise CycleLimitError(f"the PE did not finish within {max_cycles} cycles; "
                                      f"pass cycles= to run a fixed number\n"
                                      f"{self.describe_wait()}")
        stats = self.stats()
        if tracing:
            stats["trace"] = self._trace_events(stats)
            if path is not None:
                write_chrome_trace(path, stats["trace"])
        return stats

    @property
    def cycle(self) -> int:
        return self._pe.cycle

    @property
    def idle(self) -> bool:
        return self._ce.idle and not self._pe.in_flight

    def stats(self) -> dict:
        """Cycles busy per task, instructions by opcode, stalls by cause, wavelets in and
        out, vector element operations, microthread activity, queue high-water marks."""
        s = self._ce.stats()
        s["cycle"] = self._pe.cycle
        return s

    def reset_stats(self) -> None:
        self._pe.reset_stats()

    def write_trace(self, path: str | Path) -> Path:
        """Writes the recorded task and microthread spans as a Chrome/Perfetto trace."""
        if not self.config.trace:
            raise ConfigError("tracing is off: create the LonePE with trace=True")
        return write_chrome_trace(path, self._trace_events(self._ce.stats()))

    def _trace_events(self, stats: dict) -> list[dict]:
        name = f"PE({self.config.row},{self.config.col})"
        return trace_events(stats, 0, name, self._task_names())

    def describe_wait(self) -> str:
        """What the CE is doing and waiting on, and what the bench holds for it."""
        return self._pe.describe_wait()
