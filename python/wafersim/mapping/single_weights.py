"""Single-weight (unstructured) sparsity in the training mapping: which weights each PE of
a layer keeps, and how it stores them (program/single_weights.py gives the code).

A layer gets single-weight storage when its entry of ``ws.map(weight_sparsity=...)`` is a
bool mask that is not constant on PE column segments, or ``{"fraction": p, "unit":
"weight"}`` (magnitude pruning of single weights, balanced per input row of every PE's
block: ``kernels.sparse_block.magnitude_mask``). Segment-constant masks keep the cheaper
segment storage (mapping/weight_sparsity.py: no index per weight).

A PE (r, c) stores its block's kept weights W[j, i] twice indexed, as the one-PE kernel
(kernels/sparse_block.py) does, plus one entry the mapping needs (all offsets in bytes,
so that they serve as list entries of the CE's indexed vectors directly):

* ``rec``, by input row i, kept j ascending, 10 bytes a weight: the fp32 value, its
  accumulated gradient G (fp32, mini-batches) and ``4 j`` (output j's offset in
  ``fpsum``); ``rtab``: (first record, count) per row;
* ``crec``, by output column j, kept i ascending, 6 bytes a weight: the value's offset in
  ``rec``, ``4 i`` (input i's offset in ``dpsum``) and ``i rowb`` (the offset of input
  i's activation slots in ``w``); ``ctab``: (first record, count) per column.

``w`` keeps, per input row, one unused column and the activation slots (so that every
descriptor of the dense program stays valid and the slots keep their place).
"""

from __future__ import annotations

import numbers

import numpy as np

from ..errors import ConfigError
from ..kernels.sparse_block import magnitude_mask

__all__ = ["REC", "CREC", "SingleWeightLayout", "single_weight_entry", "block_mask"]

REC = 10      # bytes of a row record: fp32 value, fp32 G, u16 output offset
CREC = 6      # bytes of a column record: u16 value offset, input offset, slot offset


def single_weight_entry(value, layer: int):
    """``{"fraction": p, "unit": "weight" | "segment"}`` checked: ("weight", p), or p for
    the segment unit (the default)."""
    unknown = set(value) - {"fraction", "unit"}
    if unknown or "fraction" not in value:
        raise ConfigError(f"weight_sparsity[{layer}]: a dict entry is {{'fraction': p, 'unit': "
                          f"'weight' or 'segment'}}, got keys {sorted(map(str, value))}")
    unit = value.get("unit", "segment")
    if unit not in ("weight", "segment"):
        raise ConfigError(f"weight_sparsity[{layer}]: unit must be 'weight' (single weights) or "
                          f"'segment' (PE column segments), got {unit!r}")
    p = value["fraction"]
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0.0 <= float(p) < 1.0:
        raise ConfigError(f"weight_sparsity[{layer}] = {value!r}: a pruning fraction must lie "
                          f"in [0, 1) (0 prunes nothing; 1 would prune the whole layer)")
    return ("weight", float(p)) if unit == "weight" else float(p)


def block_mask(block, entry, W: np.ndarray) -> np.ndarray:
    """The layer's mask (n_out, n_in), True = kept, for a single-weight entry: the mask
    given, or magnitude pruning balanced per input row of each PE's block."""
    if isinstance(entry, np.ndarray):
        return entry.copy()
    _, p = entry
    W = np.asarray(W, dtype=np.float32)
    m = np.zeros(W.shape, dtype=bool)
    for i0, ni in block.in_groups:
        for o0, no in block.out_groups:
            m[o0:o0 + no, i0:i0 + ni] = magnitude_mask(W[o0:o0 + no, i0:i0 + ni], p)
    return m


class SingleWeightLayout:
    """The compressed storage of one PE's block: ``mask`` (nout, nin) local, True = kept;
    ``rowb``: bytes of a row of ``w`` (the slot offsets in ``crec``)."""

    def __init__(self, mask, rowb: int):
        self.mask = np.asarray(mask, dtype=bool)
        self.nout, self.nin = self.mask.shape
        self.rowb = int(rowb)
        self.rows = [np.flatnonzero(self.mask[:, i]) for i in range(self.nin)]
        self.cols = [np.flatnonzero(self.mask[j, :]) for j in range(self.nout)]
        self.nnz = int(self.mask.sum())
        self.first_row = np.concatenate([[0], np.cumsum([len(r) for r in self.rows])]).astype(int)
        self.first_col = np.concatenate([[0], np.cumsum([len(c) for c in self.cols])]).astype(int)
        # record number of (j, i) in rec
        self.pos = np.full(self.mask.shape, -1, dtype=np.int64)
        for i, r in enumerate(self.rows):
            self.pos[r, i] = self.first_row[i] + np.arange(len(r))

    def col_first(self, j: int) -> int:
        """Byte offset of column j's first record in ``crec``."""
        return CREC * int(self.first_col[j])

    def col_count(self, j: int) -> int:
        return len(self.cols[j])

    def memory_bytes(self) -> dict:
        """Bytes of the kept values and of their index (records' u16 entries, tables)."""
        return {"weight_values": 4 * self.nnz,
                "weight_index": (REC - 8 + CREC) * self.nnz + 4 * (self.nin + self.nout)}

    def pack(self, W: np.ndarray, esize: int = 4) -> dict[str, np.ndarray]:
        """The u16 arrays rec, rtab, crec, ctab for the block W (nout, nin)."""
        W = np.asarray(W, dtype=np.float32)
        n = max(self.nnz, 1)
        rec = np.zeros((n, REC // 2), np.uint16)
        crec = np.zeros((n, CREC // 2), np.uint16)
        if self.nnz:
            js = np.concatenate([r for r in self.rows])
            iis = np.concatenate([np.full(len(r), i) for i, r in enumerate(self.rows)])
            rec[:self.nnz, 0:2] = W[js, iis].astype(np.float32).view(np.uint16).reshape(-1, 2)
            rec[:self.nnz, REC // 2 - 1] = 4 * js         # (G, words 2 and 3: 0)
            ci = np.concatenate([c for c in self.cols])
            cj = np.concatenate([np.full(len(c), j) for j, c in enumerate(self.cols)])
            crec[:self.nnz, 0] = REC * self.pos[cj, ci]
            crec[:self.nnz, 1] = esize * ci
            crec[:self.nnz, 2] = self.rowb * ci
        rtab = np.stack([REC * self.first_row[:-1], [len(r) for r in self.rows]], axis=1)
        ctab = np.stack([CREC * self.first_col[:-1], [len(c) for c in self.cols]], axis=1)
        return {"rec": rec.ravel(), "crec": crec.ravel(),
                "rtab": rtab.astype(np.uint16).ravel(), "ctab": ctab.astype(np.uint16).ravel()}

    def without_gradients(self, rec: np.ndarray) -> np.ndarray:
        """``rec`` (u16 words) with every G set to 0."""
        raw = np.asarray(rec, dtype=np.uint16).reshape(-1, REC // 2).copy()
        raw[:, 2:4] = 0
        return raw.ravel()

    def unpack(self, rec: np.ndarray) -> np.ndarray:
        """The dense block (nout, nin) from ``rec``; pruned weights are 0."""
        raw = np.asarray(rec, dtype=np.uint16).reshape(-1, REC // 2)
        vals = raw[:self.nnz, 0:2].copy().view(np.float32).ravel()
        W = np.zeros(self.mask.shape, np.float32)
        kept = self.pos >= 0
        W[kept] = vals[self.pos[kept]]
        return W
