"""One PE's :class:`PeSpec` from its place in its layer's block: its groups of inputs and
outputs, the colors of every stream it takes part in (docs/training.md, "Colors and
routes"), its role in residual and two-branch blocks, and the lowerings it carries."""

from __future__ import annotations

from .lowering import activation_for
from .placement import LayerBlock
from .program import PeSpec
from .recompute_trigger import trigger_roles

__all__ = ["pe_spec"]


def pe_spec(plan, b: LayerBlock, r: int, c: int) -> PeSpec:
    """The spec of block ``b``'s PE (r, c) in ``plan``."""
    col = plan.colors
    L = len(plan.layers)
    d = b.dense
    i0, nin = b.in_groups[r]
    o0, nout = b.out_groups[c]
    if r < c:
        p_out, p_in = col[f"P{r % 2}"], (col[f"P{(r - 1) % 2}"] if r > 0 else None)
    elif r > c:
        p_out = col[f"P{1 - r % 2}"]
        p_in = col[f"P{r % 2}"] if r < b.rows - 1 else None
    else:
        p_out = p_in = None
    if b.index > 0:
        h_out = col[f"H{c % 2}"] if c > 0 else col[f"J{b.index % 2}"]
        h_in = col[f"H{(c + 1) % 2}"] if c < b.cols - 1 else None
    else:
        h_out = h_in = None
    a_in = col[f"A{b.index % 2}"]
    res_only = [(p, j) for p, j in plan.residuals
                if all(j != jj for _, _, jj in plan.branches)]
    forks = {p - 1 for p, _, _ in plan.branches}
    if any(b.index in (p, s) for p, s, _ in plan.branches):
        a_in = col["X"]            # a two-branch block's first layers read the fork
    if c == 0 and any(b.index == s for _, s, _ in plan.branches):
        h_out = col["G"]           # branch g's dL/dx, to the east end of f's first layer
    extra = {}
    if r == c:
        extra = dict(a_out=col["X"] if b.index in forks else col[f"A{(b.index + 1) % 2}"],
                     j_in=col[f"J{(b.index + 1) % 2}"],
                     d_send=b.rows > 1,
                     p_low=col[f"P{(c - 1) % 2}"] if c > 0 else None,
                     p_high=col[f"P{c % 2}"] if c < b.rows - 1 else None)
        if any(p - 1 == b.index for p, _ in res_only):
            extra["skip_out"] = col["S"]
        if any(s - 1 == b.index for _, s, _ in plan.branches):
            # branch f's last layer: its output goes dense to the join, dL/dy comes back
            extra.update(a_out=None, skip_out=col["S"], j_in=col["K"])
        if any(j == b.index for _, j in res_only):
            extra.update(skip_in=col["S"], skip_depth=plan.skip_depths[b.index],
                         skip_back=col["B"])
        if any(j == b.index for _, _, j in plan.branches):
            extra.update(skip_in=col["S"], skip_depth=plan.skip_depths[b.index],
                         skip_back=col["K"])
    if r == c and extra.get("a_out", 0) is not None:
        extra["athr"] = plan.activation_thresholds[b.index] is not None
    if c == b.cols - 1 and any(p == b.index for p, _ in res_only):
        extra["skip_grad_in"] = col["B"]
    if c == b.cols - 1 and any(p == b.index for p, _, _ in plan.branches):
        extra["skip_grad_in"] = col["G"]
    # with a loss head the output layer works as any layer: the head is its next layer
    last = b.index == L - 1 and not plan.loss_lowering.has_head
    # a reverse checkpoint: the kept layer of a segment replays, the others discard and
    # store one slot (a segment recomputes one sample at a time; recompute.py,
    # recompute_trigger.py)
    roles = trigger_roles(plan.keeps)
    role = roles.get(b.index)
    if r == c and roles.get(b.index + 1) in ("pass", "end"):
        extra["one_out_slot"] = True        # layer l + 1 discards what this F sends
    if role is not None:
        extra.update(recomputes=role == "replay",
                     discards=None if role == "replay" else role,
                     rc=col["RC"], rc_source=role == "end" and r == 0 and c == 0)
    return PeSpec(layer=b.index, last=last, row=r, col=c, rows=b.rows,
                  cols=b.cols, i0=i0, nin=nin, o0=o0, nout=nout,
                  act=activation_for(d.activation, d.act_module),
                  bias=d.has_bias, dtype=plan.dtype,
                  slots=plan.slots, one_slot=bool(extra.get("discards")),
                  n_out_layer=d.n_out, qcap=plan.wafer.ce_config.input_queue_depth,
                  optimizer=plan.optimizer_lowering,
                  loss=plan.loss_lowering if last and r == c else None,
                  a_in=a_in, d_col=col["D"],
                  p_out=p_out, p_in=p_in, h_out=h_out, h_in=h_in,
                  cpgd=plan.cpgd, order_log=plan.order_log,
                  dp_snapshot=plan.dp_weights == "forward",
                  stream_end=plan.cpgd and not all(plan.keeps),
                  keep=(None if plan.weight_keep[b.index] is None
                        else plan.weight_keep[b.index][(r, c)]),
                  wmask=_local_mask(plan.weight_single[b.index], o0, nout, i0, nin), **extra)


def _local_mask(mask, o0: int, nout: int, i0: int, nin: int):
    """A PE's block of a single-weight mask, as nested tuples (PeSpec is hashable)."""
    if mask is None:
        return None
    return tuple(tuple(bool(v) for v in row) for row in mask[o0:o0 + nout, i0:i0 + nin])
