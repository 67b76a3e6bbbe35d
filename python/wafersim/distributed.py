"""One wafer over several processes with MPI (docs/scale.md): ``mpiexec -n N python
script.py`` runs the same script on N processes, and every :class:`wafersim.Wafer` it
builds is split into N domains of rows, one per process (:mod:`wafersim.domains`). The
per-cycle exchange goes through mpi4py (the optional extra ``mpi``:
``pip install "wafersim[mpi]"``).

A process is one of several when ``mpiexec`` started it with more than one process (MPICH,
Intel MPI and Open MPI set ``PMI_SIZE`` or ``OMPI_COMM_WORLD_SIZE``); then mpi4py is
imported and ``MPI.COMM_WORLD`` is used. ``WAFERSIM_MPI=0`` keeps every process alone
(each simulates its own whole wafer). An uncaught exception on one process ends all of
them (``MPI.COMM_WORLD.Abort``) rather than leaving the others waiting.
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

from .errors import ConfigError

_SIZE_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MPI_LOCALNRANKS")
_world = None  # (link, index, parts), once found



def launched_size() -> int:
    """How many processes the MPI launcher started (1 without one)."""
    if os.environ.get("WAFERSIM_MPI", "1") == "0":
        return 1
    for name in _SIZE_VARIABLES:
        v = os.environ.get(name)
        if v and v.isdigit():
            return int(v)
    return 1


class MpiLink:
    """The transport of :class:`wafersim.domains.RowExchange` over an mpi4py
    communicator: neighbour swaps with nonblocking sends and receives, and allgathers."""

    def __init__(self, comm):
        from mpi4py import MPI  # noqa: PLC0415
        self._mpi = MPI
        self.comm = comm
        self._tag = 24
        self._gathered = {}  # the receive buffer of an allgather, per dtype and size
        self._started = []

    def start_swap(self, pairs) -> None:
        # Nonblocking receives and sends, waited for in finish_swap. (The messages change
        # length from cycle to cycle: cuts that carried nothing send no bytes.)
        comm, tag = self.comm, self._tag
        reqs = [comm.Irecv(recv, source=nb, tag=tag) for nb, _, recv in pairs]
        reqs += [comm.Isend(send, dest=nb, tag=tag) for nb, send, _ in pairs]
        self._started = reqs

    def finish_swap(self, pairs) -> None:
        self._mpi.Request.Waitall(self._started)

    def allgather(self, values: np.ndarray) -> np.ndarray:
        """Every process's ``values`` stacked in rank order (a buffer reused by the next
        call of the same dtype and size)."""
        out = self._gathered.get((values.dtype, values.size))
        if out is None:
            out = np.empty((self.comm.Get_size(), values.size), values.dtype)
            self._gathered[(values.dtype, values.size)] = out
        self.comm.Allgather(values, out)
        return out

    def allgather_array(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every process's 1-D array ``values`` (sizes may differ) laid end to end in rank
        order, and the N + 1 offsets (in elements) where each begins: one Allgatherv of the
        raw bytes (pickling a large array through ``allgather_obj`` costs seconds at a full
        wafer's statistics)."""
        values = np.ascontiguousarray(values)
        raw = values.view(np.uint8)
        sizes = self.comm.allgather(raw.size)
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        out = np.empty(int(offsets[-1]), np.uint8)
        self.comm.Allgatherv(raw, [out, sizes, offsets[:-1].tolist(), self._mpi.BYTE])
        return out.view(values.dtype), offsets // values.dtype.itemsize

    def allgather_obj(self, obj) -> list:
        return self.comm.allgather(obj)


def world_split():
    """(link, rank, size) of this process under ``mpiexec``, or None when it runs alone."""
    global _world
    if _world is not None:
        return _world
    size = launched_size()
    if size <= 1:
        return None
    try:
        from mpi4py import MPI  # noqa: PLC0415
    except ImportError as e:
        raise ConfigError(
            f"this process is one of {size} started by an MPI launcher, but mpi4py is not "
            'installed: pip install "wafersim[mpi]" (or set WAFERSIM_MPI=0 to run each '
            "process alone)") from e
    comm = MPI.COMM_WORLD
    _install_abort(comm)
    link = MpiLink(comm)
    _world = (link, comm.Get_rank(), comm.Get_size())
    return _world


def _install_abort(comm) -> None:
    """An uncaught exception on one process prints its traceback and ends every process:
    the others would otherwise wait for it in the next exchange forever."""
    previous = sys.excepthook

    def hook(kind, value, tb):
        previous(kind, value, tb)
        sys.stderr.flush()
        if comm.Get_size() > 1:
            time.sleep(1.0)  # lets the launcher forward the traceback before the abort
            comm.Abort(1)

    sys.excepthook = hook


def blocks_per_process() -> int | None:
    """How many blocks of rows each process steps (``WAFERSIM_MPI_BLOCKS``; docs/scale.md):
    the wafer's rows are cut into processes x blocks blocks dealt round-robin, so that work
    moving across the rows stays shared. None when not set: each wafer then picks its own
    (:func:`wafersim.domains.auto_blocks`)."""
    v = os.environ.get("WAFERSIM_MPI_BLOCKS", "")
    if not v:
        return None
    if not v.isdigit() or int(v) < 1:
        raise ConfigError(f"WAFERSIM_MPI_BLOCKS must be an integer >= 1, got {v!r}")
    return int(v)


def rank() -> int:
    """This process's rank (0 when it runs alone)."""
    w = world_split()
    return 0 if w is None else w[1]


def size() -> int:
    """How many processes share each wafer (1 when alone)."""
    w = world_split()
    return 1 if w is None else w[2]
