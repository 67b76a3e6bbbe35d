"""``ws.map``: places a model onto a wafer and compiles it (placement, colors, routes, one
program per PE), checking every argument before anything is loaded."""

from __future__ import annotations

import numbers

from ..balance.mapped import balanced_skip_depths, check_skip_depth
from ..errors import ConfigError
from ..nn.dense import DenseLayer
from ..nn.sequential import Sequential
from . import task_ids as T
from .activation_threshold import check_activation_threshold
from .block_shapes import choose_blocks, pe_data_bytes
from .checkpoint import check_checkpoint, check_checkpoint_fits
from .cpgd_options import (check_cpgd, check_dp_weights, cpgd_bytes, recompute_log_bytes,
                           snapshot_bytes)
from .colors import allocate_colors, mapping_roles
from .lowering import activation_for, loss_for, optimizer_for
from .placement import LayerBlock, branch_blocks, check_shapes, residual_blocks
from .plan import DTYPES, Plan
from .routes import mapping_routes
from .smear import check_smear
from .weight_sparsity import check_weight_sparsity, kept_outputs, single_weight_masks

__all__ = ["map_model"]


def _extra_bytes(dense, esize: int, slots: int, loss, optimizer):
    """extra(layer, nin, nout, final): the data bytes the lowerings add to such a PE."""
    acts = [activation_for(d.activation, d.act_module) for d in dense]
    opt, lo = optimizer_for(optimizer), loss_for(loss)

    def extra(i: int, nin: int, nout: int, final: bool) -> int:
        parts = [opt] + ([acts[i]] if final else []) + ([lo] if final and i == len(dense) - 1 else [])
        return sum(p.extra_bytes(nin, nout, esize, slots, final) for p in parts)
    return extra


def _with_cpgd(extra, cpgd: bool, slots: int, order_log: int, esize: int = 4,
               dp_weights: str = "current", keeps=None):
    """``extra`` plus the bytes of CPGD's bookkeeping (cpgd_options.cpgd_bytes) and of
    the delta pass's weight snapshots (cpgd_options.snapshot_bytes; none in a layer that
    ``keeps`` says discards: PeSpec.snapshot)."""
    if not cpgd:
        return extra
    def snap(i: int) -> str:
        return dp_weights if keeps is None or keeps[i] else "current"
    return lambda i, nin, nout, final: (
        extra(i, nin, nout, final)
        + cpgd_bytes(slots, order_log, final, snap(i) == "forward" and i > 0)
        + snapshot_bytes(i, nin, nout, esize, slots, snap(i)))


def _origin(origin) -> tuple[int, int]:
    try:
        r, c = origin
        if any(isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 0 for v in (r, c)):
            raise TypeError
    except (TypeError, ValueError):
        raise ConfigError(f"origin must be a (row, col) pair of non-negative integers, "
                          f"got {origin!r}") from None
    return int(r), int(c)


def map_model(model, wafer=None, *, blocks=None, dtype: str = "fp32", origin=(0, 0),
              slots: int | None = None, skip_depth="balanced", loss=None,
              optimizer=None, activation_threshold=None, checkpoint=None,
              smear=None, cpgd: bool = False, order_log: int = 0,
              weight_sparsity=None, dp_weights: str = "current") -> Plan:
    """Places ``model`` (a ``ws.nn.Sequential`` or a ``torch.nn.Sequential``) onto a wafer.

    * ``wafer``: None sizes one automatically (rows of the first block, columns of all
      blocks, 24 colors); a given wafer must hold the blocks at ``origin``.
    * ``blocks``: (rows, cols) per Linear layer; None chooses shapes that fit PE memory.
      Rules: cols <= rows, and a layer's rows equal the previous layer's cols.
    * ``dtype``: "fp32" or "fp16" (weights, activations, partial sums, deltas).
    * ``slots``: samples a PE can hold in flight (activation slots), 1..64; default 2 x
      layers, at most 64 (SGD uses one; mini-batches stream up to this many through the pipeline).
    * ``skip_depth``: skip vectors the join of a residual block holds (its FIFO): 1..64,
      a {join layer: depth} dict, or "balanced" (the depth ``ws.balance`` chooses so that
      the join does not stall the pipeline; docs/balance.md, "On the wafer").
    * ``loss``: a ``ws.nn`` loss (default ``MSELoss()``); ``optimizer``: a ``ws.optim``
      optimizer (default ``SGD(lr=0.05)``). Both are compiled into the PE programs.
    * ``activation_threshold``: activation sparsity by threshold (seed 001, EC411): a
      hidden layer sends an activation only when |a| > t (lossy for t > 0; 0 skips exact
      zeros, bit for bit as without it). None (default): no threshold, exact zeros are
      skipped; a number >= 0 for every hidden layer; a list with one entry per hidden
      layer (all but the output layer) or a {layer: t} dict (None: no threshold there).
      ``Plan.set_activation_threshold`` changes the values later (runtime words).
    * ``checkpoint``: reverse checkpoint (RCP, [0614]-[0615], [0650]-[0656]): None (every
      layer keeps its forward activations), an integer k (layers 0, k, 2k, ... keep) or a
      list of the layers that keep (layer 0 among them). The policy is checked (layers,
      PE memory) before anything is loaded. Under a policy where some layer discards, the
      kept layer of each segment replays its forward pass in the backward pass and the
      discarding layers (one activation slot each) take the recomputed activations
      (docs/training.md, "Reverse checkpoint"); such a plan trains with SGD,
      mini-batches or CPGD (``cpgd=True``: the recompute uses the current weights
      [0615]; with ``order_log`` the PEs also log when each recompute read W), with
      activation thresholds and weight sparsity too (the recompute drops and skips what
      the forward pass did).
      ``mapping.checkpoint.checkpoint_memory`` tells what a policy would save on a plan.
    * ``smear``: neuron smearing (FIG. 17-20, [0468]-[0494]): a {layer: portions} dict
      splitting each neuron of the layer into fan-in portions, one per PE row of its
      block, whose partial sums the column chain combines: an integer k (k equal
      portions) or a list of fractions summing to 1 ([0.5, 0.25, 0.25]: unequal). The
      layer gets len(portions) rows and the layer before it as many columns, with output
      groups of the same sizes (mapping/smear.py; docs/training.md, "Neuron smearing").
    * ``cpgd``: compile the bookkeeping of continuous propagation (FIG. 27C; train with
      ``ws.Trainer(plan, algo="cpgd", window=...)``, window <= slots): per PE, how many
      updates each sample's forward pass was behind its own update (``stats().staleness()``).
      Needs plain SGD. ``order_log``: entries per PE of a log of the order of forward reads
      and updates (0: none), for a reference to replay the run bit for bit.
      ``dp_weights``: which weights a sample's delta pass uses [0634]: "current" (those
      stored when its deltas arrive) or "forward" (those its own forward pass read: every
      PE with a delta pass keeps a snapshot of its W per slot, taken row by row by CE
      instructions as the forward pass reads it; program/cpgd_snapshot.py; a discarding
      layer of a reverse checkpoint keeps none: its delta pass reads what its recompute
      read, which W still holds). Needs cpgd=True.
    * ``weight_sparsity``: pruned weights, stored compressed (no memory, no cycles) and kept
      at zero through training: None (dense), a fraction p in [0, 1) for every layer
      (magnitude pruning), a list with one entry per mapped layer, or a {layer: entry}
      dict; an entry is None, a fraction (whole PE column segments), ``{"fraction": p,
      "unit": "weight"}`` (single weights by magnitude, balanced per row of each PE's
      block) or a bool mask of the layer's weight shape (True = kept): one constant on
      each PE column segment keeps the segment storage (mapping/weight_sparsity.py), any
      other mask gets single-weight storage (records with an index per weight, fp32;
      mapping/single_weights.py). ``Plan.weight_masks()`` gives the masks. With
      ``cpgd=True`` segments only (single weights are refused).
    """
    from ..nn.losses import Loss, MSELoss
    from ..optim import OPTIMIZERS, SGD
    from ..wafer import Wafer

    loss = MSELoss() if loss is None else loss
    optimizer = SGD() if optimizer is None else optimizer
    if not isinstance(loss, Loss):
        raise ConfigError(f"loss must be a ws.nn loss (MSELoss, CrossEntropyLoss), got "
                          f"{loss!r}" + (" (a torch loss: use ws.torch.training_model)"
                                         if type(loss).__module__.startswith("torch") else ""))
    if not isinstance(optimizer, OPTIMIZERS):
        names = ", ".join(c.__name__ for c in OPTIMIZERS)
        raise ConfigError(f"optimizer must be a ws.optim optimizer ({names}), got {optimizer!r}"
                          + (" (a torch optimizer: use ws.torch.training_model)"
                             if type(optimizer).__module__.startswith("torch") else ""))
    if wafer is not None and not isinstance(wafer, Wafer):
        raise ConfigError(f"wafer must be a ws.Wafer (an instance) or None, got {wafer!r}")
    source = None
    if not isinstance(model, Sequential):
        if type(model).__module__.startswith("torch"):
            from ..nn.torch_io import from_torch

            source, model = model, from_torch(model)
        else:
            raise ConfigError(f"map() takes a ws.nn.Sequential (or torch.nn.Sequential), got "
                              f"{type(model).__name__}")
    if not isinstance(dtype, str) or dtype not in DTYPES:
        raise ConfigError(f"dtype must be 'fp32' or 'fp16', got {dtype!r}")
    dense: list[DenseLayer] = model.dense_layers()
    thresholds = check_activation_threshold(activation_threshold, len(dense))
    pruning = check_weight_sparsity(weight_sparsity, dense)
    if any(t is not None for t in thresholds) and (residual_blocks(dense) or branch_blocks(dense)):
        raise ConfigError("activation_threshold is not supported with Residual or TwoBranch "
                          "blocks (their skip paths are sent dense; docs/unsupported_functionality.md)")
    keeps = check_checkpoint(checkpoint, len(dense))
    if not all(keeps) and (residual_blocks(dense) or branch_blocks(dense)):
        raise ConfigError("checkpoint is not supported with Residual or TwoBranch blocks "
                          "(their skip paths would need recompute rules of their own; "
                          "docs/unsupported_functionality.md)", category="unsupported")
    smear_sizes = check_smear(smear, dense, (wafer.rows - _origin(origin)[0])
                              if wafer is not None else None)
    if smear_sizes and (residual_blocks(dense) or branch_blocks(dense)):
        raise ConfigError("smear is not supported with Residual or TwoBranch blocks (their "
                          "skip paths need the fork's column groups; "
                          "docs/unsupported_functionality.md)")
    for i, d in enumerate(dense):
        activation_for(d.activation, d.act_module)     # ConfigError if it is not mapped
    loss_for(loss).check_model(dense)
    cpgd, order_log = check_cpgd(cpgd, order_log, dense, optimizer_for(optimizer))
    dp_weights = check_dp_weights(dp_weights, cpgd, pruning)
    if slots is None:
        slots = min(2 * len(dense), 64)
    if isinstance(slots, bool) or not isinstance(slots, numbers.Integral) or not 1 <= slots <= 64:
        raise ConfigError(f"slots must be an integer 1..64, got {slots!r}")
    r0, c0 = _origin(origin)
    esize = 4 if dtype == "fp32" else 2
    skip_depths = check_skip_depth(skip_depth, dense)
    if skip_depths == "balanced":
        skip_depths = balanced_skip_depths(dense, esize)
    deepest = max(skip_depths.values(), default=1)
    data_bytes = (wafer.ce_config.data_bytes if wafer is not None else 32768)
    if blocks is None:
        shapes = choose_blocks(dense, esize, int(slots), data_bytes,
                               max_rows=(wafer.rows - r0) if wafer is not None else None,
                               skip_depth=deepest,
                               extra=_with_cpgd(_extra_bytes(dense, esize, int(slots), loss,
                                                             optimizer), cpgd, int(slots), order_log,
                                                esize, dp_weights),
                               smear=smear_sizes)
    else:
        shapes = check_shapes(dense, blocks)
        for k, sizes in sorted(smear_sizes.items()):
            if shapes[k][0] != len(sizes):
                raise ConfigError(f"layer {k}: smear splits its neurons into {len(sizes)} "
                                  f"portions, one per PE row, but blocks gives it "
                                  f"{shapes[k][0]} rows")
    lowered_loss = loss_for(loss)
    width = sum(c for _, c in shapes) + (1 if lowered_loss.has_head else 0)
    height = shapes[0][0]
    if wafer is None:
        wafer = Wafer(r0 + height, c0 + width)
    else:
        if wafer.mode != "colors":
            raise ConfigError("the mapping routes colors: use a Wafer with mode='colors'")
        if r0 + height > wafer.rows or c0 + width > wafer.cols:
            raise ConfigError(f"the blocks need {height} x {width} PEs at origin {(r0, c0)}; the "
                              f"wafer is {wafer.rows} x {wafer.cols}")
    cfg = wafer.ce_config
    if cfg.microthreads < 8:
        raise ConfigError(f"the mapping uses 8 microthread entries; this wafer's CEs have "
                          f"{cfg.microthreads}")
    if wafer.colors > T.STAGE_DTX:
        raise ConfigError(f"the mapping stages its sends in local queues {T.STAGE_DTX} and "
                          f"{T.STAGE_TX}, which need a wafer with at most {T.STAGE_DTX} routable "
                          f"colors (this one has {wafer.colors})")
    if cfg.input_queue_depth < 2:
        raise ConfigError("the mapping needs CE input queues of at least 2 entries")
    layer_blocks = []
    col = c0
    for i, (d, (r, c)) in enumerate(zip(dense, shapes)):
        layer_blocks.append(LayerBlock(i, d, r, c, r0, col, in_sizes=smear_sizes.get(i),
                                       out_sizes=smear_sizes.get(i + 1)))
        col += c
    recompute = not all(keeps)
    if recompute:
        _check_checkpoint(layer_blocks, keeps, esize, int(slots), data_bytes,
                          _with_cpgd(_extra_bytes(dense, esize, int(slots), loss, optimizer),
                                     cpgd, int(slots), order_log, esize, dp_weights, keeps),
                          order_log=order_log)
    # colors already routed on the routers this mapping will use are not reused
    branch = bool(branch_blocks(dense))
    residual = len(residual_blocks(dense)) > len(branch_blocks(dense))
    roles = mapping_roles(residual, branch, tuple(lowered_loss.head_roles), recompute)
    probe = mapping_routes(layer_blocks, {k: i for i, k in enumerate(roles)}, wafer.cols,
                           lowered_loss, keeps)
    taken = set(wafer.routed_colors(sorted(probe.routers())))
    colors = allocate_colors(wafer.colors, taken, residual, branch, lowered_loss.head_roles,
                             recompute)
    heads = lowered_loss.head_points(layer_blocks[-1]) if lowered_loss.has_head else []
    for p in [p for b in layer_blocks for p in b.points()] + heads:
        if wafer.pe(*p).loaded:
            raise ConfigError(f"PE {p} already has a program; map onto free PEs (origin=)")
    params = [(d.linear.weight, None) for d in dense]
    keep = kept_outputs(pruning, layer_blocks, params)
    single = single_weight_masks(pruning, layer_blocks, params)
    _check_single(single, dtype, keeps, cpgd)
    plan = Plan(model, wafer, layer_blocks, colors, dtype, int(slots), skip_depths,
                loss=loss, optimizer=optimizer, activation_thresholds=thresholds,
                cpgd=cpgd, order_log=order_log, weight_keep=keep, keeps=keeps,
                dp_weights=dp_weights, weight_single=single)
    plan.source_model = source
    plan.load()
    return plan


def _check_single(single, dtype: str, keeps, cpgd: bool) -> None:
    """Single-weight sparsity (mapping/single_weights.py) covers fp32 (every optimizer);
    fp16, a reverse checkpoint and CPGD are refused (CPGD takes segment sparsity: its
    counters and order log run unchanged in the segment programs)."""
    layers = [l for l, m in enumerate(single) if m is not None]
    if not layers:
        return
    if cpgd:
        raise ConfigError(f"cpgd=True is not supported with weight_sparsity that prunes "
                          f"single weights (layer(s) {layers}: {{'unit': 'weight'}} or a mask "
                          f"not constant on PE column segments): the staleness counters and the "
                          f"order log are not wired into the single-weight programs; prune "
                          f"segments (a fraction, or a segment-constant mask) instead "
                          f"(docs/unsupported_functionality.md)", category="unsupported")
    if dtype != "fp32":
        raise ConfigError(f"weight_sparsity: layer(s) {layers} prune single weights, which the "
                          f"mapping supports in fp32 only, got dtype={dtype!r} "
                          f"(docs/unsupported_functionality.md)", category="unsupported")
    if not all(keeps):
        gone = [l for l, k in enumerate(keeps) if not k]
        raise ConfigError(f"weight_sparsity: layer(s) {layers} prune single weights; the "
                          f"reverse checkpoint discards layer(s) {gone}, and single-weight "
                          f"sparsity is not supported with it (the recompute pass replays "
                          f"the dense and segment programs only; "
                          f"docs/unsupported_functionality.md)", category="unsupported")


def _check_checkpoint(blocks, keeps, esize: int, slots: int, limit: int, extra, *,
                      order_log: int) -> None:
    """A policy under which some layer discards: PE memory under it (a clear error naming
    the layer and the limit)."""
    def need_of(b, r, c):
        nin, nout = b.in_groups[r][1], b.out_groups[c][1]
        rlog = recompute_log_bytes(order_log)     # (a bound: at every PE, in a segment or not)
        return pe_data_bytes(nin, nout, esize, slots, r == c, b.index == 0, 0,
                             extra(b.index, nin, nout, r == c)) + rlog

    check_checkpoint_fits(blocks, slots, esize, keeps, limit, need_of)
    # (activation thresholds and weight sparsity need no check: the replay skips what was
    # stored as 0, never sent, and runs f_act's multiply-adds, one per run of kept outputs
    # with pruned weights; the replayed sends go through the same thresholded sender)
