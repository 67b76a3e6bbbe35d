"""The backward pass of every PE of a block: ``b_delta`` runs the delta pass and the chain
pass for one nonzero delta of its column ([0409]: DP first, so it uses the weights before
this sample's update [0645]; CP is the optimizer's lowering), and the delta closeout
(``b_close`` / ``b_close_end`` [0420]) starts the row's delta partial-sum chain west."""

from __future__ import annotations

from ..registers import ESIZE, O0
from . import cpgd
from .idioms import chain_hop
from .single_weights import single_delta_column
from .sparse_weights import delta_column, pruned_delta_end
from .spec import PeSpec

__all__ = ["delta_task", "delta_closeout"]


def delta_task(s: PeSpec) -> list[str]:
    """b_delta: delta_j in r2, j in r4 [0346]; ESIZE = element size, CPV = the chain-pass
    variant, NEGLR = -lr (both set by setup; registers.py)."""
    if s.single:    # single weights: column j's records
        L = [";@pass delta"] + single_delta_column(s)
    elif s.sparse:    # weight sparsity: the stored column of j, or nothing to do
        column = delta_column(s)
        L = [";@pass delta"] + column[:1] + cpgd.delta_logged(s) + column[1:]
    else:
        L = [";@pass delta",
             "b_delta:                                ; delta_j in r2, j in r4"]
        L += cpgd.delta_logged(s)
        L += [f"        sub16 r4, r4, {O0}",
              f"        mul16 r4, r4, {ESIZE}              ; column j of W"]
    if s.has_dp:
        L.append(f"        fmac{s.FX} S0[1], S0[1], S1[1]      ; DP: dpsum += W[j, I_r] * delta_j [0409]")
    L.append(";@pass chain")
    L += s.optimizer.delta_chain_pass(s)
    if s.sparse:
        L += [";@pass delta"] + pruned_delta_end()
    return L


def delta_closeout(s: PeSpec) -> list[str]:
    """b_close / b_close_end: note whether the sample ends a mini-batch; in layers after
    the first, send this PE's delta sums west (the east end of a residual's first layer
    starts its row's chain with dL/dy, of a two-branch block's f with g's dL/dx)."""
    L = [";@pass delta",
         "b_close_end:",
         "        movi r5, 1",
         "        jmp bc",
         "b_close:",
         "        movi r5, 0",
         "bc:     st16 r5, v_bflag"]
    L += cpgd.update_done(s)
    if s.has_dp:
        L.append(f"        block {s.d_col}                   ; this sample's delta sums are not sent yet")
        h_first = "d_hin" if s.h_in is not None else ("d_bin" if s.skip_grad_in is not None else None)
        L += chain_hop(s, "d_dpsum", "d_hout", h_first, reg=6, sums_reg=4, sent="h_sent")
        if not s.discards:      # (a discarding layer's r_close lets the next sample's in)
            L.append(f"        unblock {s.d_col}")
    return L
