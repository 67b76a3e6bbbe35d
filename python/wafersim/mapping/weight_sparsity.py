"""Weight sparsity (beyond the seeds; the shipped machine stores pruned weights so that the
multiply is skipped): a layer's weights pruned by a mask or by a magnitude fraction, and
stored compressed per PE so that pruned weights cost neither PE memory nor cycles in the
forward, delta and chain passes (program/sparse_weights.py). Training keeps the mask: a
pruned weight is not stored, so it stays exactly zero.

The unit of pruning is a *PE column segment*: the weights W[j, I_r] from the inputs I_r of
one block row r to one output j, which PE (r, c) (j in O_c) holds as column j of its W. A
PE stores the kept columns only; its forward pass adds one vector per run of consecutive
kept outputs, and its delta and chain passes skip a pruned output's delta. The finer
unit, single weights, needs a gather and a scatter with an index per weight (the CE's
indexed 1D vectors): a mask not constant on segments, or {"fraction": p, "unit":
"weight"}, gets that storage (mapping/single_weights.py, program/single_weights.py).

``ws.map(model, weight_sparsity=...)`` takes None (dense), one fraction for every mapped
layer, a list with one entry per mapped layer, or a {layer: entry} dict; an entry is None,
{"fraction": p, "unit": "weight"} (single weights; alone, for every layer), a fraction
p in [0, 1) (magnitude pruning of segments, balanced per PE: each PE prunes p of its
segments, those of smallest mean |w|, in groups of ``GROUP`` consecutive outputs (fewer
when a PE has fewer than 4 x GROUP outputs) so that kept outputs form runs, rounded to
whole groups; an output's last stored segment only where the share cannot be reached
otherwise), or a boolean mask of the layer's weight
shape (n_out, n_in), True = kept (constant on every segment: segments; else single
weights).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..errors import ConfigError
from .single_weights import block_mask, single_weight_entry

__all__ = ["check_weight_sparsity", "kept_outputs", "single_weight_masks", "GROUP"]

_NAME = "weight_sparsity"
#: consecutive outputs of a PE that magnitude pruning keeps or prunes together
GROUP = 4


def _entry(value, layer: int, shape: tuple[int, int]):
    if value is None:
        return None
    if isinstance(value, dict):         # {"fraction": p, "unit": "weight" | "segment"}
        return single_weight_entry(value, layer)
    if isinstance(value, np.ndarray):
        if value.dtype != np.bool_:
            raise ConfigError(f"{_NAME}[{layer}]: a mask must be a numpy array of dtype bool "
                              f"(True = kept), got dtype {value.dtype}")
        if value.shape != shape:
            raise ConfigError(f"{_NAME}[{layer}]: the mask has shape {value.shape}; layer "
                              f"{layer}'s weights have shape {shape} (n_out, n_in)")
        return value.copy()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ConfigError(f"{_NAME}[{layer}] must be a fraction in [0, 1), a bool mask of "
                          f"shape {shape}, {{'fraction': p, 'unit': 'weight'}} or None, got "
                          f"{value!r}")
    p = float(value)
    if math.isnan(p) or not 0.0 <= p < 1.0:
        raise ConfigError(f"{_NAME}[{layer}] = {value!r}: a pruning fraction must lie in "
                          f"[0, 1) (0 prunes nothing; 1 would prune the whole layer)")
    return p


def check_weight_sparsity(value, dense) -> list:
    """Per mapped layer: None, a fraction or a bool mask, checked (ConfigError naming the
    layer, the value and the limit otherwise)."""
    n = len(dense)
    shapes = [(d.n_out, d.n_in) for d in dense]
    if value is None:
        return [None] * n
    if isinstance(value, dict) and any(isinstance(k, str) for k in value):
        return [_entry(value, k, shapes[k]) for k in range(n)]   # one entry for every layer
    if isinstance(value, dict):
        out = [None] * n
        for k, v in value.items():
            if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 0 <= k < n:
                raise ConfigError(f"{_NAME} has an entry for layer {k!r}; this model's mapped "
                                  f"layers are 0..{n - 1}")
            out[int(k)] = _entry(v, int(k), shapes[int(k)])
        return out
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ConfigError(f"{_NAME} has {len(value)} entries; this model has {n} mapped "
                              f"layer(s) (one entry per Linear)")
        return [_entry(v, k, shapes[k]) for k, v in enumerate(value)]
    if isinstance(value, np.ndarray):
        raise ConfigError(f"{_NAME}: give a mask as {{layer: mask}} (or a list with one "
                          f"entry per layer), not alone")
    return [_entry(value, k, shapes[k]) for k in range(n)]


def _segment_mask(block, entry, W: np.ndarray) -> np.ndarray:
    """keep[r, j]: whether the segment W[j, I_r] is kept."""
    R = block.rows
    n_out = W.shape[0]
    if isinstance(entry, np.ndarray):
        keep = np.zeros((R, n_out), dtype=bool)
        for r, (i0, ni) in enumerate(block.in_groups):
            seg = entry[:, i0:i0 + ni]
            allk, anyk = seg.all(axis=1), seg.any(axis=1)
            bad = np.flatnonzero(allk != anyk)
            if bad.size:
                j = int(bad[0])
                raise ConfigError(
                    f"{_NAME}[{block.index}]: the mask prunes some but not all of the weights "
                    f"from inputs {i0}..{i0 + ni - 1} to output {j}; the mapping stores a PE's "
                    f"weights by column segment (one output, the inputs of one block row: here "
                    f"{block.rows} row(s) of inputs), so a mask must be constant on each segment "
                    f"(single-weight storage takes such masks: mapping/single_weights.py)")
            keep[r] = allk
        return keep
    # magnitude, balanced per PE: each PE prunes the same share of its weights, in groups
    # of GROUP consecutive outputs of smallest mean |w| (so that no PE stays dense and
    # sets the pace of its layer, and every PE's memory shrinks alike); first without
    # pruning an output's last stored segment (it would feed the next layer its bias
    # alone), then, where the share needs it (one block row), with
    absW = np.abs(W.astype(np.float64))
    keep = np.ones((R, n_out), dtype=bool)
    for o0, no in block.out_groups:
        size = max(1, min(GROUP, no // 4))          # at least 4 groups a PE where it can
        starts = list(range(o0, o0 + no, size))
        cands = []                                  # (mean |w|, row, first output, n outputs)
        for r, (i0, ni) in enumerate(block.in_groups):
            for g0 in starts:
                gn = min(size, o0 + no - g0)
                cands.append((float(absW[g0:g0 + gn, i0:i0 + ni].mean()), r, g0, gn))
        cands.sort(key=lambda t: (t[0], t[1], t[2]))
        target = entry * no                         # outputs each PE of this column prunes
        pruned = [0] * R
        for last_segment_too in (False, True):
            for _, r, g0, gn in cands:
                if not keep[r, g0] or pruned[r] + gn / 2 > target:   # whole groups, rounded
                    continue
                if not last_segment_too and keep[:, g0].sum() < 2:
                    continue
                keep[r, g0:g0 + gn] = False
                pruned[r] += gn
    return keep


def _segment_constant(block, mask: np.ndarray) -> bool:
    return all((mask[:, i0:i0 + ni].all(axis=1) == mask[:, i0:i0 + ni].any(axis=1)).all()
               for i0, ni in block.in_groups)


def is_single(block, entry) -> bool:
    """Whether a layer's entry needs single-weight storage (mapping/single_weights.py):
    {"fraction": p, "unit": "weight"}, or a mask not constant on PE column segments."""
    if isinstance(entry, tuple):
        return True
    return isinstance(entry, np.ndarray) and not _segment_constant(block, entry)


def single_weight_masks(entries, blocks, params) -> list[np.ndarray | None]:
    """Per layer: its mask (n_out, n_in) when it has single-weight storage, else None."""
    return [block_mask(b, e, np.asarray(W)) if e is not None and is_single(b, e) else None
            for b, e, (W, _) in zip(blocks, entries, params)]


def kept_outputs(entries, blocks, params) -> list[dict | None]:
    """Per layer: None (dense) or {(r, c): tuple of the local outputs PE (r, c) keeps}.
    ``params``: (W, b) per layer, the weights magnitude pruning ranks."""
    out = []
    for b, entry, (W, _) in zip(blocks, entries, params):
        if entry is None or is_single(b, entry):
            out.append(None)
            continue
        keep = _segment_mask(b, entry, np.asarray(W))
        if keep.all():                          # nothing pruned: the dense program
            out.append(None)
            continue
        per_pe = {}
        for r in range(b.rows):
            for c, (o0, no) in enumerate(b.out_groups):
                per_pe[(r, c)] = tuple(int(j) for j in np.flatnonzero(keep[r, o0:o0 + no]))
        out.append(per_pe)
    return out


def mask_of(block, per_pe: dict | None) -> np.ndarray:
    """The layer's weight mask (n_out, n_in), True = kept, from the kept outputs per PE."""
    d = block.dense
    m = np.zeros((d.n_out, d.n_in), dtype=bool)
    for r, (i0, ni) in enumerate(block.in_groups):
        for c, (o0, no) in enumerate(block.out_groups):
            keep = range(no) if per_pe is None else per_pe[(r, c)]
            for j in keep:
                m[o0 + j, i0:i0 + ni] = True
    return m
