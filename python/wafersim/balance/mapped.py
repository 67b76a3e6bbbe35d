"""The pipeline graph of a model mapped onto the wafer, and the skip depths the pass
chooses for it.

One section cut per model: the host's input stream is the load, every layer block is a
stage (latency one step: a block takes a sample while its predecessor starts the next),
and every block-to-block edge is a buffer of depth 1 (a block admits the next sample when
it has finished the last: one sample waits at its input). Those are fixed by the mapping.
A residual block adds its skip: a buffer from the fork (the layer before the block) to the
join (the block's last layer) whose depth is the FIFO of the join's finalizers
(``ws.map(..., skip_depth=)``), the one thing the pass may change. Its bytes per batch are
the block's whole input vector: the FIFO slots of all the join's finalizers together.

A two-branch block (y = f(x) + g(x)) is the same cut with two computed branches: branch
g's first layer takes its input from the fork (an edge from the fork's stage), and the
skip buffer runs from branch f's last layer to the join.

Steps are samples: a step lasts as long as the slowest block takes per sample, so the
model's interval in steps times that service time predicts the wafer's steady cycles per
sample (:func:`predicted_cycles`). The model is conservative: on the wafer a block starts
on a sample while its predecessor is still sending it (wavelets stream), and the router
queues along the skip route hold a few more wavelets than the FIFO (docs/balance.md).
"""

from __future__ import annotations

import numbers

from .._args import int_arg, items_arg, mapping_arg, real_arg, show
from ..errors import ConfigError
from ..nn.dense import DenseLayer, branch_split
from .builders import from_stages
from .graph import MAX_COUNT, PipelineGraph
from .options import BalanceOptions
from .solve import balance

__all__ = ["model_graph", "skip_buffer", "balanced_skip_depths", "predicted_cycles",
           "check_skip_depth", "WAFER_BLOCK_BYTES"]

#: Bytes of PE data memory the wafer counts as one block (the seed's PMU) by default.
WAFER_BLOCK_BYTES = 256
#: The largest bytes per value (esize) of a mapped model.
MAX_ESIZE = 8


def skip_buffer(join: int) -> str:
    """Name of the skip buffer of the residual block that joins at layer ``join``."""
    return f"skip{join}"


def model_graph(dense, skip_depths: dict[int, int] | None = None, esize: int = 4) -> PipelineGraph:
    """The pipeline graph of mapped layers ``dense`` (a model's ``dense_layers()``, or a
    Plan's ``[b.dense for b in plan.layers]``). ``skip_depths``: FIFO depth per join layer
    (default 1); ``esize``: bytes per value (4 for fp32, 2 for fp16)."""
    dense = _dense_arg(dense)
    esize = int_arg("esize", esize, 1, MAX_ESIZE)
    joins = [i for i, d in enumerate(dense) if d.skip_from is not None]
    skip_depths = dict(mapping_arg("skip_depths", {} if skip_depths is None else skip_depths,
                                   "join layer -> FIFO depth"))
    unknown = [j for j in skip_depths if j not in joins]
    if unknown:
        raise ConfigError(f"skip_depths names layer(s) {show(unknown)}, which join no residual "
                          f"block (joins: {joins})")
    for j, depth in skip_depths.items():
        int_arg(f"skip_depths[{j}]", depth, 1, MAX_COUNT)
    stages = [{"name": "input", "load": True}]
    buffers = [{"name": "in", "producer": "input", "consumers": ["L0"], "depth": 1,
                "bytes_per_batch": dense[0].n_in * esize, "tunable": False}]
    for i, d in enumerate(dense):
        stages.append({"name": f"L{i}"})
        if i > 0:
            buffers.append({"name": f"a{i}", "producer": f"L{d.source(i)}", "consumers": [f"L{i}"],
                            "depth": 1, "bytes_per_batch": d.n_in * esize, "tunable": False})
        if d.skip_from is not None:
            depth = skip_depths.get(i, 1)
            split = branch_split(dense, i)
            producer = d.skip_from - 1 if split is None else split - 1
            buffers.append({"name": skip_buffer(i), "producer": f"L{producer}",
                            "consumers": [f"L{i}"], "depth": int(depth),
                            "bytes_per_batch": d.n_out * esize, "tunable": True})
    return from_stages(stages, buffers)


def balanced_skip_depths(dense, esize: int = 4, *, mode: str = "equal",
                         block_bytes: int = WAFER_BLOCK_BYTES) -> dict[int, int]:
    """Join layer -> the skip FIFO depth the balancing pass chooses (tuned depth plus any
    buffer it inserts on the skip edge)."""
    dense = _dense_arg(dense)
    esize = int_arg("esize", esize, 1, MAX_ESIZE)
    BalanceOptions(mode=mode, block_bytes=block_bytes)  # checked even with no join
    joins = [i for i, d in enumerate(dense) if d.skip_from is not None]
    if not joins:
        return {}
    res = balance(model_graph(dense, esize=esize), mode=mode, block_bytes=block_bytes)
    out = {}
    for j in joins:
        # the wafer holds the samples of the short path in the join's FIFO: what the pass
        # inserts on the skip edge, and for a two-branch block on the edges of branch f
        # (a chain, so buffering anywhere along it is the same), goes there
        names = {skip_buffer(j)}
        split = branch_split(dense, j)
        if split is not None:
            names |= {f"a{k}" for k in range(dense[j].skip_from, split)}
        extra = sum(ins.depth for ins in res.inserted if ins.buffer in names)
        out[j] = res.depths[skip_buffer(j)] + extra
    return out


def predicted_cycles(interval_steps: float, service_cycles) -> float:
    """The wafer's steady cycles per sample the model predicts: its interval in steps
    times the longest per-sample service time of a block (``service_cycles``: per block,
    the busy cycles per sample of its busiest PE, e.g. from ``TrainStats.busy()``)."""
    interval_steps = real_arg("interval_steps", interval_steps, 0, lo_open=True)
    what = "busy cycles per sample of every block"
    cycles = items_arg("service_cycles", service_cycles, what)
    if not cycles:
        raise ConfigError(f"service_cycles must hold the {what}, got an empty list")
    worst = max(real_arg(f"service_cycles[{i}]", c, 0) for i, c in enumerate(cycles))
    if not worst > 0:
        raise ConfigError(f"service_cycles must hold the {what}, got all zero: "
                          f"{show(cycles)}")
    return interval_steps * worst


def _dense_arg(dense) -> list:
    """The mapped layers: a non-empty list of DenseLayer (a model's ``dense_layers()``)."""
    what = "DenseLayer (a model's dense_layers())"
    layers = items_arg("dense", dense, what)
    if not layers:
        raise ConfigError(f"dense must be a non-empty list of {what}, got an empty list")
    for i, d in enumerate(layers):
        if not isinstance(d, DenseLayer):
            raise ConfigError(f"dense[{i}] must be a DenseLayer (a model's dense_layers()), "
                              f"got {type(d).__name__} {show(d, 60)}")
    return layers


def check_skip_depth(value, dense) -> dict[int, int] | str:
    """``ws.map``'s skip_depth: an integer 1..64 for every join, a {join layer: depth}
    dict, or "balanced"."""
    joins = [i for i, d in enumerate(dense) if d.skip_from is not None]
    if isinstance(value, str):
        if value != "balanced":
            raise ConfigError(f"skip_depth must be 'balanced', an integer 1..64 or a dict "
                              f"{{join layer: depth}}, got {value!r}")
        return value

    def one(v, what):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or not 1 <= v <= 64:
            raise ConfigError(f"{what} must be an integer 1..64, got {v!r}")
        return int(v)

    if isinstance(value, dict):
        unknown = sorted(set(value) - set(joins), key=str)
        if unknown:
            raise ConfigError(f"skip_depth names layer(s) {unknown}, which join no residual "
                              f"block (joins: {joins})")
        return {j: one(value.get(j, 1), f"skip_depth[{j}]") for j in joins}
    depth = one(value, "skip_depth")
    return {j: depth for j in joins}
