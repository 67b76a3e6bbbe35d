"""A wafer split into domains of rows, one per process (docs/scale.md).

Every process builds the same wafer (the same script runs on every rank); each one steps
only the rows of its domain: one or more blocks of rows (:func:`deal_rows`). Every cycle the core calls the exchange three times
(``wafersim._core.fabric.CutExchange``): after phase A of its border rows each domain
starts handing its neighbours what those rows sent across a cut (the arrival posts and
output registers of the links between the two rows), steps its inner rows, and takes the
neighbours' before phase B of the border rows; after phase B each domain hands each
neighbour the stall bits of its border rows facing it (sparse) and the holds of their
runtime switches (what the neighbour's next phase A reads), and one allgather of four
numbers combines what the cycle loop decides from the whole wafer (work left, progress
for the watchdog, queued wavelets, the first error). The core packs and reads every
message (``wafersim._core.fabric.CutMessages``). A wavelet
on a 2-cycle diagonal link crosses in the cycle it arrives (with the register of the cycle
it was sent in), with loop links the last row and row 0 are neighbours across a cut, and
in packet mode a cut carries the sending row's LinkSends block and registers instead of
arrival posts. This is all that crosses a cut: the simulation is exact, cycle for cycle.

The transport is a *link* with these methods, so that the same exchange runs over MPI
(:mod:`wafersim.distributed`) or over threads in one process (the tests):

* ``start_swap(pairs)``, then ``finish_swap(pairs)``: for each ``(domain, send, recv)``,
  send the array ``send`` (uint8 or uint64) to that domain and receive its array into the
  start of ``recv`` (all pairs at once, no ordering; a message may be shorter than
  ``recv``, and its own first words say how it goes on); between the two calls the domain
  steps its inner rows (or, after phase B, takes part in ``allgather``), and ``recv`` is
  ready only after ``finish_swap``;
* ``allgather(values)``: every domain's ``values`` (a uint64 array), stacked in domain order;
* ``allgather_array(values)``: every domain's 1-D array (sizes may differ) laid end to end
  in domain order, and the offsets where each begins (N + 1 of them, the last the total
  size; large arrays: per-PE statistics);
* ``allgather_obj(obj)``: every domain's ``obj`` (picklable), as a list in domain order.
"""
from __future__ import annotations

import contextlib
import threading
import time

import numpy as np

from ._extension import core
from .errors import ConfigError, DeadlockError, WaferError
from .pe_stats_table import PackedPeStats

_NEVER = 2**64 - 1  # fabric::kNever: no error


def split_rows(rows: int, parts: int) -> list[tuple[int, int]]:
    """Rows [lo, hi) of each of ``parts`` domains: contiguous blocks, the first
    ``rows % parts`` one row larger. ConfigError when there are more parts than rows."""
    if parts < 1 or parts > rows:
        raise ConfigError(f"a wafer of {rows} rows splits into 1..{rows} domains of rows "
                          f"(one per process), got {parts} processes")
    base, extra = divmod(rows, parts)
    out, lo = [], 0
    for i in range(parts):
        hi = lo + base + (1 if i < extra else 0)
        out.append((lo, hi))
        lo = hi
    return out


# Rows per block of a domain when the number of blocks is not given (WAFERSIM_MPI_BLOCKS):
# on the 2-core development machine, 2 processes ran the full wafer (757 rows) fastest
# with blocks of 8 to 12 rows and slower with 24 or more (a wave of work then sits in one
# process's block for many cycles while the other waits); 128 rows ran alike with blocks
# of 6 to 32 rows (docs/scale.md, "Speed, measured").
ROWS_PER_BLOCK = 12


def auto_blocks(rows: int, parts: int) -> int:
    """Blocks of rows per domain for a wafer of ``rows`` rows over ``parts`` domains: blocks
    of about :data:`ROWS_PER_BLOCK` rows, at least one per domain."""
    return max(1, rows // (parts * ROWS_PER_BLOCK))


def deal_rows(rows: int, parts: int, blocks: int = 1) -> list[list[tuple[int, int]]]:
    """The blocks of rows of each of ``parts`` domains: the wafer cut into ``parts x
    blocks`` near-equal blocks (split_rows), dealt round-robin (block k to domain k mod
    parts), so that work moving across the rows (a wave) is shared by the domains
    throughout. ``blocks`` is lowered where the rows do not fill that many blocks."""
    if not isinstance(blocks, int) or blocks < 1:
        raise ConfigError(f"blocks of rows per process must be an integer >= 1, got {blocks!r}")
    cut = split_rows(rows, parts * min(blocks, max(1, rows // parts)))
    return [cut[i::parts] for i in range(parts)]


class RowExchange(core.fabric.CutExchange):
    """The per-cycle exchange of domain ``index`` of ``domains`` (each a list of blocks of
    rows) over ``link``."""

    def __init__(self, wafer_core, cols: int, domains: list, index: int, link, *,
                 loop: bool = False):
        super().__init__()
        self._w = wafer_core
        self.index = index
        self._link = link
        rows = max(hi for blocks in domains for _, hi in blocks)
        owner = np.empty(rows, np.int64)
        for d, blocks in enumerate(domains):
            for lo, hi in blocks:
                owner[lo:hi] = d

        def neighbours(r):  # the rows joined to row r by links (loop: the N/S wrap too)
            near = [q for q in (r - 1, r + 1) if 0 <= q < rows]
            if loop and rows >= 3 and r in (0, rows - 1):
                near.append(rows - 1 - r)
            return near

        # The cuts, grouped by neighbour domain, each cut's pair of rows ascending and the
        # cuts in that order on both sides (so the neighbour's k-th cut is the same cut
        # as this domain's k-th): neighbour -> [(my border row, its border row)].
        cuts: dict[int, list] = {}
        for r in np.flatnonzero(owner == index).tolist():
            for theirs in neighbours(r):
                if owner[theirs] != index:
                    cuts.setdefault(int(owner[theirs]), []).append((r, theirs))
        self._cuts = sorted((nb, sorted(pairs, key=lambda p: (min(p), max(p))))
                            for nb, pairs in cuts.items())
        # One message per neighbour and meeting point, packed and read by the core
        # (sim/cut_messages.hpp): after phase A the sends across the cuts, after phase B
        # the stall bits (sparse) and switch holds of the rows facing the neighbour.
        self._msgs = core.fabric.CutMessages(wafer_core, [pairs for _, pairs in self._cuts])
        self._send = [np.zeros(self._msgs.sends_capacity(k), np.uint8)
                      for k in range(len(self._cuts))]
        self._recv = [np.zeros_like(b) for b in self._send]
        self._routes_version = None
        self._size_border_buffers()
        self.failed_domain = -1  # set when a cycle ends in an error somewhere
        self.seconds = 0.0  # wall time spent in the exchange (benchmarks/bench_mpi.py)
        self.cpu_seconds = 0.0  # CPU time of this process in it (MPICH's waits spin)
        # After phase B one allgather combines four numbers for the cycle loop.
        self._mine = np.zeros(4, np.uint64)
        self._flags = core.fabric.DomainFlags()
        self._pairs = []  # (neighbour, this meeting's message, receive buffer)

    def _size_border_buffers(self) -> None:
        """Buffers for the messages after phase B; their size follows the routes (the
        holds of switched slots ride in them), which change between runs only."""
        self._routes_version = self._w.routes_version
        self._bsend = [np.zeros(self._msgs.border_capacity(k), np.uint64)
                       for k in range(len(self._cuts))]
        self._brecv = [np.zeros_like(b) for b in self._bsend]

    def send_cuts(self, cycle: int) -> None:
        t0, c0 = time.perf_counter(), time.process_time()
        msgs, pairs = self._msgs, self._pairs
        pairs.clear()
        for k, ((nb, _), buf, recv) in enumerate(zip(self._cuts, self._send, self._recv)):
            pairs.append((nb, buf[:msgs.write_sends(k, cycle, buf)], recv))
        self._link.start_swap(pairs)
        self.seconds += time.perf_counter() - t0
        self.cpu_seconds += time.process_time() - c0

    def receive_cuts(self, cycle: int) -> None:
        t0, c0 = time.perf_counter(), time.process_time()
        self._link.finish_swap(self._pairs)
        for k, recv in enumerate(self._recv):
            self._msgs.read_sends(k, cycle, recv)
        self.seconds += time.perf_counter() - t0
        self.cpu_seconds += time.process_time() - c0

    def after_phase_b(self, cycle: int, local):
        t0, c0 = time.perf_counter(), time.process_time()
        if self._w.routes_version != self._routes_version:  # (between runs only)
            self._size_border_buffers()
        msgs, pairs = self._msgs, self._pairs
        pairs.clear()
        for k, ((nb, _), buf, recv) in enumerate(zip(self._cuts, self._bsend, self._brecv)):
            pairs.append((nb, buf[:msgs.write_borders(k, buf)], recv))
        self._link.start_swap(pairs)
        mine = self._mine
        mine[0], mine[1], mine[3] = local.work, local.progress, local.error_step
        mine[2] = local.queued % 2**64
        every = self._link.allgather(mine)
        self._link.finish_swap(pairs)
        for k, recv in enumerate(self._brecv):
            msgs.read_borders(k, recv)
        work, progress, queued, step = every.T.tolist()
        out = self._flags
        out.work = sum(work) % 2**64
        out.progress = sum(progress) % 2**64
        q = sum(queued) % 2**64
        out.queued = q - 2**64 if q >= 2**63 else q
        first = min(range(len(step)), key=step.__getitem__)
        out.error_step = step[first]
        out.error_domain = first if step[first] != _NEVER else -1
        if step[first] != _NEVER:
            self.failed_domain = first
        self.seconds += time.perf_counter() - t0
        self.cpu_seconds += time.process_time() - c0
        return out


def attach(wafer_core, cols: int, domains: list, index: int, link, *,
           loop: bool = False) -> RowExchange:
    """Makes a wafer's core (``wafersim._core.fabric.Wafer``) step only the rows of domain
    ``index`` (``domains``: each domain's blocks of rows, deal_rows), exchanging with the
    others over ``link`` every cycle (``loop``: the wafer has loop links, so its last row
    and row 0 are neighbours)."""
    ex = RowExchange(wafer_core, cols, domains, index, link, loop=loop)
    wafer_core.set_domain(domains[index], index, ex)
    return ex


# --- which wafers are split: a link per process (MPI) or per thread (tests) ----------------
_local = threading.local()


@contextlib.contextmanager
def split_over(link, index: int, parts: int, blocks: int | None = 1):
    """Every :class:`wafersim.Wafer` built in this thread inside the ``with`` is domain
    ``index`` of ``parts`` (``blocks`` blocks of rows each: deal_rows; None: auto_blocks),
    joined to the others over ``link``. (Under ``mpiexec`` :mod:`wafersim.distributed`
    does this for the whole process.)"""
    old = getattr(_local, "split", None)
    _local.split = (link, index, parts, blocks)
    try:
        yield
    finally:
        _local.split = old


def _current():
    split = getattr(_local, "split", None)
    if split is not None:
        return split
    from . import distributed  # noqa: PLC0415 (imports mpi4py only under mpiexec)
    world = distributed.world_split()
    return None if world is None else (*world, distributed.blocks_per_process())


class Domain:
    """What a split wafer keeps of its split: the link, its rows, and how results merge."""

    def __init__(self, wafer, wafer_core, link, index: int, parts: int,
                 blocks: int | None = 1):
        # blocks: of rows per domain (deal_rows); None picks them from the rows (auto_blocks)
        self.link, self.index, self.parts = link, index, parts
        shape = (wafer.rows, wafer.cols, wafer.topology_name, wafer.mode, blocks)
        every = link.allgather_obj(shape)
        if any(s != shape for s in every):
            lines = "; ".join(f"process {i}: {s[0]} x {s[1]} {s[2]!r} {s[3]!r}, "
                              f"{'automatic' if s[4] is None else s[4]} blocks of rows"
                              for i, s in enumerate(every))
            raise ConfigError("the processes built different wafers (the same script must run "
                              f"on every process, with the same WAFERSIM_MPI_BLOCKS): {lines}")
        if blocks is None:
            blocks = auto_blocks(wafer.rows, parts)
        self.domains = deal_rows(wafer.rows, parts, blocks)
        self.blocks = self.domains[index]
        self._owner = np.empty(wafer.rows, np.int64)
        for d, bl in enumerate(self.domains):
            for lo, hi in bl:
                self._owner[lo:hi] = d
        self.cols = wafer.cols
        self._core = wafer_core
        self.exchange = attach(wafer_core, wafer.cols, self.domains, index, link,
                               loop=wafer.topology.loop)

    def owns(self, row: int) -> bool:
        return self._owner[row] == self.index

    def owner(self, row: int) -> int:
        """The domain (process) whose rows hold ``row``."""
        return int(self._owner[row])

    def mine(self, ids) -> np.ndarray:
        """Which of the router ids ``ids`` lie in this domain's rows (a boolean mask): the
        PEs whose compute elements, memory and host streams this process holds."""
        return self._owner[np.asarray(ids, np.int64) // self.cols] == self.index

    def merge_rows(self, raw: dict) -> dict:
        """Per-wavelet arrays (a dict of equal-length arrays, with ``router``) of every
        process, joined in router order (each process's in router order already)."""
        every = self.link.allgather_obj(raw)
        out = {k: np.concatenate([np.asarray(p[k]) for p in every]) for k in raw}
        order = np.argsort(out["router"], kind="stable")
        return {k: v[order] for k, v in out.items()}

    def gather_rows(self, mine: np.ndarray, values: np.ndarray, out: np.ndarray) -> np.ndarray:
        """Fills ``out[k]`` for every k that some process holds (``mine`` is its mask over
        ``out``'s first axis, ``values`` its ``out[mine]``), on every process."""
        for mask, vals in self.link.allgather_obj((mine, values)):
            out[mask] = vals
        return out

    def run(self, step):
        """Calls ``step()`` (the core's run) on every process; returns its result merged
        over all domains, or raises on every process the error of the domain that met the
        first failing step (the one a single process would raise)."""
        self.exchange.failed_domain = -1
        try:
            r, err = step(), None
        except Exception as e:  # noqa: BLE001 (re-raised below, on every process)
            r, err = None, e
        failed = self.exchange.failed_domain
        if failed >= 0:
            mine = _portable(err) if self.index == failed else None
            theirs = self.link.allgather_obj(mine)[failed]
            if self.index == failed:
                raise err
            raise _rebuild(theirs)
        if err is None or isinstance(err, DeadlockError):
            self.share_switches()
        if isinstance(err, DeadlockError):  # raised in the same cycle everywhere
            err.report = self.deadlock_report()
        if err is not None:
            raise err  # raised alike everywhere (the watchdog, an exchange's own failure)
        keys = ("moves", "injected", "delivered", "router_cycles", "parallel_phases",
                "slept_cycles", "latency", "queue_delay", "hop_hist")
        every = self.link.allgather_obj({k: r[k] for k in keys})
        out = dict(r)
        for k in ("moves", "injected", "delivered", "router_cycles", "parallel_phases",
                  "slept_cycles"):
            out[k] = sum(int(p[k]) for p in every)
        for k in ("latency", "queue_delay"):
            merged = type(r[k])()
            for p in every:
                merged.merge(p[k])
            out[k] = merged
        hops = [np.asarray(p["hop_hist"], np.uint64) for p in every]
        total = np.zeros(max(len(h) for h in hops), np.uint64)
        for h in hops:
            total[:len(h)] += h
        out["hop_hist"] = total
        return out

    def raise_first(self, key: int, fails) -> None:
        """Collective: where some process gives ``fails`` (a call that raises its error; None
        elsewhere), raises on every process the error of the one with the smallest
        ``key`` (one process's order: e.g. the first router id), the same class and
        message; returns on every process when none does."""
        mine = None
        if fails is not None:
            try:
                fails()
            except Exception as e:  # noqa: BLE001 (raised below, on every process)
                mine = e
            else:
                raise WaferError(f"internal: the call for key {key} did not fail")
        every = self.link.allgather_obj(None if mine is None else (key, _portable(mine)))
        failed = [(got[0], k) for k, got in enumerate(every) if got is not None]
        if not failed:
            return
        _, k = min(failed)
        if k == self.index:
            raise mine
        raise _rebuild(every[k][1])

    def share_switches(self) -> None:
        """Writes the state of every runtime switch (its positions and counts), as the
        domain holding its row left it, into every domain's copy (collective; once per
        run): a switch then reads the same on every process, and the deadlock report of
        rows next to another domain's switch sees where that switch stands."""
        for k, words in enumerate(self.link.allgather_obj(self._core.export_switch_states())):
            if k != self.index:
                self._core.import_switch_states(words)

    def deadlock_report(self) -> str:
        """The whole wafer's deadlock report, the text one process gives, on every process
        (collective; docs/scale.md, "What each rank reports on a deadlock"): each domain
        tells the others its non-empty queues, waiting PEs and busy host ports, renders the
        report's part of its own rows (its stuck queues, PEs and wait-graph nodes with their
        edges) and every domain merges the parts in router order."""
        core, link = self._core, self.link
        facts = link.allgather_obj(core.deadlock_facts())
        parts = link.allgather_obj(core.deadlock_part(facts))
        return core.merge_deadlock_report(parts, int(core.cycle))

    def merge_collected(self, raw: dict) -> dict:
        """Host-port arrivals of every domain, in the order one process gives them (by
        arrival cycle, then by router; one router's arrivals come from one domain, in
        its order)."""
        every = self.link.allgather_obj(raw)
        out = {k: np.concatenate([np.asarray(p[k]) for p in every]) for k in raw}
        order = np.lexsort((out["router"], out["arrived"]))  # stable
        return {k: v[order] for k, v in out.items()}

    def merge_pe_stats(self, table) -> PackedPeStats:
        """The per-PE statistics of every domain's PEs (``table``: this process's
        ``ce_run_stats_table()``), on every process, as one compact table."""
        ids, ends, blob, full = table
        link = self.link
        every_ids, id_at = link.allgather_array(ids)
        every_ends, _ = link.allgather_array(ends)
        every_blob, blob_at = link.allgather_array(blob)
        fulls = link.allgather_obj(full)  # (PEs with trace spans or a profile only)
        # Each process's ends count from its own blob; its first PE starts at 0.
        starts = np.empty_like(every_ends)
        starts[1:] = every_ends[:-1]
        starts[id_at[:-1][np.diff(id_at) > 0]] = 0
        return PackedPeStats.gathered(self.cols, every_ids, id_at, starts, every_ends,
                                      every_blob, blob_at, fulls)


def _portable(err):
    message = err.args[0] if err.args else str(err)
    return (type(err), message, getattr(err, "report", None))


def _rebuild(state):
    cls, message, report = state
    try:
        e = cls(message)
    except Exception:  # noqa: BLE001 (a class with another signature)
        e = WaferError(message)
    if report is not None:
        try:
            e.report = report
        except AttributeError:
            pass
    return e


def join(wafer, wafer_core) -> Domain | None:
    """The domain of a new wafer when this process (or thread) is one of several; None
    when it runs alone."""
    split = _current()
    if split is None or split[2] == 1:
        return None
    link, index, parts, blocks = split
    return Domain(wafer, wafer_core, link, index, parts, blocks)
