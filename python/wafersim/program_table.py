"""Which program each PE of a wafer has, as the host knows it: one small integer per PE
(an index into a short list of programs) instead of a dict entry per PE. On the whole
wafer a dict keyed by (row, col) cost about 150 bytes per PE (0.1 GiB), on every process
of a split wafer; this table costs 4 (docs/scale.md)."""
from __future__ import annotations

import numpy as np

from .errors import ConfigError
from .layout import Rect


class ProgramTable:
    """``index[rid]``: 0 for a PE without a program, else k for ``programs[k]``."""

    def __init__(self, rows: int, cols: int):
        self.cols = cols
        self.index = np.zeros(rows * cols, np.int32)
        self.programs: list = [None]
        self._slot: dict[int, int] = {}  # id(program) -> k

    def at(self, rid: int):
        """The program of PE ``rid`` (router id), or None."""
        return self.programs[self.index[rid]]

    def has(self, rid: int) -> bool:
        return bool(self.index[rid])

    def clear(self, ids: np.ndarray) -> None:
        self.index[ids] = 0

    def set(self, ids: np.ndarray, program) -> None:
        k = self._slot.get(id(program))
        if k is None:
            self._drop_unused()
            k = len(self.programs)
            self.programs.append(program)
            self._slot[id(program)] = k
        self.index[ids] = k

    def _drop_unused(self) -> None:
        """Forgets programs no PE has any more (when the list has grown), renumbering the
        rest in their order, so that reloading many programs does not keep them all."""
        if len(self.programs) < 16:
            return
        used = np.zeros(len(self.programs), bool)
        used[np.unique(self.index)] = True
        used[0] = True
        if used.sum() * 2 > len(self.programs):
            return
        new_k = np.cumsum(used) - 1
        self.index = new_k[self.index].astype(np.int32)
        self.programs = [p for p, u in zip(self.programs, used) if u]
        self._slot = {id(p): k for k, p in enumerate(self.programs) if k}

    def loaded_ids(self) -> np.ndarray:
        """Router ids of the PEs with a program, ascending."""
        return np.flatnonzero(self.index)

    def ids_with(self, keep) -> list[tuple[object, np.ndarray]]:
        """(program, router ids ascending) for every program for which ``keep(program)``
        holds and that some PE has."""
        out = []
        loaded = self.loaded_ids()
        ks = self.index[loaded]
        for k in np.unique(ks).tolist():
            if keep(self.programs[k]):
                out.append((self.programs[k], loaded[ks == k]))
        return out

    def first_missing(self, rect: Rect) -> tuple[int, int] | None:
        """The first PE of ``rect`` (row by row) without a program, or None."""
        missing = np.flatnonzero(self.index[rect.ids(self.cols)] == 0)
        if not missing.size:
            return None
        i = int(missing[0])
        return (rect.row + i // rect.width, rect.col + i % rect.width)

    def groups(self, rect: Rect) -> list[tuple[object, np.ndarray]]:
        """The programs over ``rect``: (program, positions in rect order), programs in the
        order they first appear there. Every PE there must have one (first_missing)."""
        ks = self.index[rect.ids(self.cols)]
        uniq, first = np.unique(ks, return_index=True)
        out = []
        for k in uniq[np.argsort(first)].tolist():
            if k == 0:
                raise ConfigError("ProgramTable.groups: a PE of the rectangle has no program")
            out.append((self.programs[k], np.flatnonzero(ks == k)))
        return out
