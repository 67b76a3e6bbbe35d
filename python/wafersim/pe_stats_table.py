"""Per-PE statistics of a run as one compact table, for wafers split over several processes
(docs/scale.md): each process packs the statistics of the PEs of its rows into three arrays
(router ids, end offsets, one buffer of every PE's packed counters), the processes swap
the arrays (a few memory copies instead of pickling a dict entry per PE), and the joined
table serves :class:`wafersim.stats.PeStats` as its mapping from (row, col) to the packed
counters (or, for a PE with trace spans or a profile, the full dict)."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np


class PackedPeStats(Mapping):
    """(row, col) -> packed counters (bytes) or a stats dict, in router-id order."""

    def __init__(self, cols: int, ids: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                 blob: np.ndarray, full: dict):
        self.cols = cols
        self.ids = np.asarray(ids, np.int64)  # ascending router ids
        # PE ids[i]'s packed counters are blob[starts[i]:ends[i]]
        self.starts = np.asarray(starts, np.int64)
        self.ends = np.asarray(ends, np.int64)
        self.blob = np.asarray(blob, np.uint8)  # (an array: joined without a bytes copy)
        self.full = full  # router id -> dict, for the PEs whose stats do not pack

    @classmethod
    def from_rows(cls, cols: int, rows) -> PackedPeStats:
        """From ``Wafer.ce_run_stats(packed=True)``'s (router id, bytes or dict) pairs, in
        ascending router ids."""
        ids = np.fromiter((int(rid) for rid, _ in rows), np.int64, len(rows))
        sizes = np.fromiter((len(s) if isinstance(s, bytes) else 0 for _, s in rows),
                            np.int64, len(rows))
        blob = np.frombuffer(b"".join(s for _, s in rows if isinstance(s, bytes)), np.uint8)
        full = {int(rid): s for rid, s in rows if not isinstance(s, bytes)}
        ends = np.cumsum(sizes)
        return cls(cols, ids, ends - sizes, ends, blob, full)

    @classmethod
    def join(cls, parts: list[PackedPeStats]) -> PackedPeStats:
        """The tables of several processes' rows as one, in router order."""
        at = np.concatenate([[0], np.cumsum([p.blob.size for p in parts])]).astype(np.int64)
        counts = np.concatenate([[0], np.cumsum([len(p.ids) for p in parts])])
        return cls.gathered(parts[0].cols, np.concatenate([p.ids for p in parts]), counts,
                            np.concatenate([p.starts for p in parts]),
                            np.concatenate([p.ends for p in parts]),
                            np.concatenate([p.blob for p in parts]), at, [p.full for p in parts])

    @classmethod
    def gathered(cls, cols: int, ids, id_at, starts, ends, blob, blob_at, fulls) -> PackedPeStats:
        """One table from every process's arrays laid end to end (process k's PEs are
        ``ids[id_at[k]:id_at[k + 1]]``, its packed counters ``blob[blob_at[k]:blob_at[k +
        1]]``, its ``starts`` and ``ends`` counted from there): the blob is kept as it came
        (a full wafer's is over 200 MB), only the offsets are shifted and sorted."""
        shift = np.repeat(np.asarray(blob_at[:-1], np.int64), np.diff(id_at))
        order = np.argsort(ids, kind="stable")
        full = {}
        for f in fulls:
            full.update(f)
        return cls(cols, np.asarray(ids)[order], (starts + shift)[order], (ends + shift)[order],
                   blob, full)

    def parts(self) -> tuple:
        """What another process needs to rebuild this table (picklable, mostly arrays)."""
        return (self.cols, self.ids, self.starts, self.ends, self.blob, self.full)

    def __getitem__(self, pe):
        r, c = pe
        rid = int(r) * self.cols + int(c)
        i = int(np.searchsorted(self.ids, rid))
        if i == len(self.ids) or self.ids[i] != rid or not 0 <= int(c) < self.cols:
            raise KeyError(pe)
        if rid in self.full:
            return self.full[rid]
        return self.blob[int(self.starts[i]):int(self.ends[i])].tobytes()

    def __iter__(self):
        cols = self.cols
        return ((rid // cols, rid % cols) for rid in self.ids.tolist())

    def __len__(self) -> int:
        return len(self.ids)
