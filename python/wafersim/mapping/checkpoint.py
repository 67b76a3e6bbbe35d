"""Reverse checkpoint (RCP; seed 000 FIG. 27D, FIG. 28C-E, [0614]-[0615], [0650]-[0656]):
only some layers keep the forward activations their chain pass needs; the others discard
them in the forward pass and get them back in the backward pass from the nearest kept
layer to the west, which recomputes its forward pass from what it stored and sends the
result east through the discarding layers ([0615], [0653]).

This module holds what does not depend on the wafer's recompute dataflow (that is in
program/recompute.py and recompute_trigger.py):

* ``check_checkpoint``: the policy ``ws.map(..., checkpoint=)`` takes, checked before any
  cycle runs: None (every layer keeps), an integer k (layers 0, k, 2k, ... keep, [0615]'s
  "every fourth layer" is k = 4) or a list of the layers that keep;
* ``recompute_segments``: which kept layer recomputes which discarding layers;
* ``activation_memory``: the forward activation bytes each PE holds with and without a
  policy, in the mapping's layout (docs/training.md, "Reverse checkpoint"), and
  ``check_checkpoint_fits``, the PE memory check ``ws.map`` makes with it.

"Layer l keeps" means its PEs keep their inputs a_{l-1} (the activation slots beside the
weight rows, A 2816 / A 2826 of FIG. 28) for every sample in flight, and the finalizers
of layer l - 1 keep the same values as their outputs (for f'). Layer 0 always keeps: its
inputs are the host's samples, and nothing west of it could recompute them.
"""

from __future__ import annotations

import numbers

from ..errors import ConfigError

__all__ = ["check_checkpoint", "recompute_segments", "activation_memory",
           "checkpoint_memory", "check_checkpoint_fits"]


def _layer_index(value, n_layers: int, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ConfigError(f"checkpoint{where} must be a layer index (an integer), got {value!r}")
    if not 0 <= value < n_layers:
        raise ConfigError(f"checkpoint{where} names layer {value}, which does not exist: this "
                          f"model has {n_layers} mapped layer(s), 0..{n_layers - 1}")
    return int(value)


def check_checkpoint(policy, n_layers: int) -> tuple[bool, ...]:
    """Per mapped layer: True when it keeps its forward activations. ConfigError naming
    the entry, the value and the limit for anything else."""
    if policy is None:
        return (True,) * n_layers
    if isinstance(policy, bool):
        raise ConfigError(f"checkpoint must be None, an integer k >= 1 (every k-th layer "
                          f"keeps its activations) or a list of layer indices, got {policy!r}")
    if isinstance(policy, numbers.Integral):
        if policy < 1:
            raise ConfigError(f"checkpoint = {policy}: every k-th layer keeps its activations, "
                              f"k must be an integer >= 1 (1: every layer keeps)")
        return tuple(l % int(policy) == 0 for l in range(n_layers))
    if isinstance(policy, (list, tuple, set, frozenset, range)):
        entries = sorted(policy) if isinstance(policy, (set, frozenset)) else list(policy)
        keep = [False] * n_layers
        for k, v in enumerate(entries):
            l = _layer_index(v, n_layers, f"[{k}]")
            if keep[l]:
                raise ConfigError(f"checkpoint[{k}] names layer {l} a second time")
            keep[l] = True
        if not keep[0]:
            raise ConfigError("checkpoint must keep layer 0: its inputs are the samples the "
                              "host streams in, and no layer west of it can recompute them "
                              f"(got {entries!r})")
        return tuple(keep)
    raise ConfigError(f"checkpoint must be None, an integer k >= 1 or a list of layer "
                      f"indices, got {type(policy).__name__} {policy!r}")


def recompute_segments(keeps) -> list[tuple[int, list[int]]]:
    """(kept layer k, [the discarding layers k+1..m-1 east of it]) for every kept layer
    followed by discarding ones: k recomputes its forward pass from its stored inputs and
    sends it east through them; the last of them, m - 1, does not send further (layer m
    keeps, or m is the output)."""
    out = []
    for k, keep in enumerate(keeps):
        if not keep:
            continue
        m = k + 1
        while m < len(keeps) and not keeps[m]:
            m += 1
        if m > k + 1:
            out.append((k, list(range(k + 1, m))))
    return out


def activation_memory(blocks, slots: int, esize: int, keeps) -> dict[tuple[int, int], dict]:
    """Per PE of the mapped layers (``LayerBlock``s): the bytes of forward activations it
    holds, ``{"without": b0, "with": b1}``.

    Without RCP a PE of layer l holds ``slots`` activation slots of its nin inputs, and a
    finalizer also ``slots`` of its nout outputs (for f'). With RCP a discarding layer holds
    one slot instead (A 2829 of FIG. 28D: the recomputed activations of the sample whose
    backward pass is at this layer [0656]); a finalizer of layer l follows layer l + 1's
    choice (its outputs are l + 1's inputs), and the output layer's keep theirs (the loss
    needs them when the targets come in)."""
    L = len(blocks)
    out = {}
    for b in blocks:
        l = b.index
        k_in = slots if keeps[l] else 1
        k_out = slots if l == L - 1 or keeps[l + 1] else 1
        for r in range(b.rows):
            nin = b.in_groups[r][1]
            for c in range(b.cols):
                nout = b.out_groups[c][1]
                without = nin * slots * esize + (nout * slots * esize if r == c else 0)
                with_ = nin * k_in * esize + (nout * k_out * esize if r == c else 0)
                out[b.at(r, c)] = {"layer": l, "without": without, "with": with_}
    return out


def checkpoint_memory(plan, checkpoint) -> dict:
    """What ``checkpoint`` would save on ``plan``'s layout: the activation bytes per PE
    (``activation_memory``), their maximum and total with and without, and the kept
    layers."""
    keeps = check_checkpoint(checkpoint, len(plan.layers))
    esize = 4 if plan.dtype == "fp32" else 2
    per_pe = activation_memory(plan.layers, plan.slots, esize, keeps)
    w0 = [v["without"] for v in per_pe.values()]
    w1 = [v["with"] for v in per_pe.values()]
    return {"keeps": keeps, "per_pe": per_pe,
            "peak_without": max(w0), "peak_with": max(w1),
            "total_without": sum(w0), "total_with": sum(w1),
            "saved_per_pe": {p: v["without"] - v["with"] for p, v in per_pe.items()}}


def check_checkpoint_fits(blocks, slots: int, esize: int, keeps, limit: int, need_of) -> None:
    """ConfigError naming the layer, the PE, its bytes and the limit when a PE does not fit
    its data memory under the policy ``keeps``; ``need_of(block, r, c)``: the PE's data
    bytes without RCP."""
    mem = activation_memory(blocks, slots, esize, keeps)
    for b in blocks:
        for r in range(b.rows):
            for c in range(b.cols):
                m = mem[b.at(r, c)]
                need = need_of(b, r, c) - m["without"] + m["with"]
                if need > limit:
                    kept = "keeps" if keeps[b.index] else "discards"
                    fewer = " or let this layer discard" if keeps[b.index] and b.index else ""
                    raise ConfigError(
                        f"checkpoint: layer {b.index} (Linear({b.dense.n_in}, "
                        f"{b.dense.n_out}); it {kept} its activations) does not fit: PE "
                        f"({r}, {c}) of its {b.rows} x {b.cols} block needs {need} data "
                        f"bytes, a PE has {limit}; use more PEs (blocks=), fewer slots"
                        f"{fewer}")
