"""The forward pass of every PE of a block (FP [0408]-[0412]): ``f_act`` takes one nonzero
activation of its row and adds a_i * W[O_c, i] to the partial sums; the activation
closeout (``f_close``, or ``f_close_end`` when the sample ends a mini-batch) blocks the
activation color and starts the partial-sum chain toward the column's finalizer."""

from __future__ import annotations

from ..registers import FSLOT, I0, ROWB
from . import cpgd, cpgd_snapshot
from .idioms import chain_hop
from .single_weights import single_forward
from .sparse_weights import forward_runs, row_offset
from .spec import PeSpec

__all__ = ["activation_task", "closeout_task", "worker_chain"]


def activation_task(s: PeSpec) -> list[str]:
    """f_act (f_rxact:acc [0410]): a_i in r2, i in r4 [0346]."""
    if s.single:    # single weights: one scatter-add over row i's records
        L = [";@pass forward"] + single_forward(s)
    elif s.sparse:    # weight sparsity: one multiply-add per run of kept outputs
        L = [";@pass forward"] + row_offset() + forward_runs(s)
    else:
        L = [";@pass forward",
             f"f_act:  sub16 r4, r4, {I0}               ; a_i in r2, i in r4 [0346]: local input",
             f"        mul16 r4, r4, {ROWB}               ; its row of W",
             f"        fmac{s.FX} S0[0], S0[0], S1[0]      ; fpsum += W[O_c, i] * a_i [0402], [0408]"]
        L += cpgd_snapshot.row_read(s)
    if s.in_slots > 1:
        L.append(f"        add16 r4, r4, {FSLOT}              ; the sample's activation slot")
    L += cpgd.act_counted(s)
    L.append(f"        {s.MV}.t D[0], r2                   ; keep a_i for the chain pass [0409]")
    return L


def closeout_task(s: PeSpec) -> list[str]:
    """f_close / f_close_end (f_rxact:close [0411]): note whether the sample ends a
    mini-batch, and hold the next sample's activations until this one's sums are sent."""
    return ["f_close_end:",
            "        movi r5, 1",
            "        jmp fc",
            "f_close:",
            "        movi r5, 0",
            "fc:     st16 r5, v_flag",
            "        movi r5, 1",
            "        st16 r5, v_fpbusy",
            f"        block {s.a_in}                    ; this sample's sums are not sent yet"
            ] + cpgd.forward_closed(s)


def worker_chain(s: PeSpec) -> list[str]:
    """A worker's hop of the column's partial-sum chain [0411], [0412]; when its sums have
    left (f_sent), the sample's forward pass is done here (fp_count, then fp_end)."""
    return chain_hop(s, "d_fpsum", "d_pout", "d_pin" if s.p_in is not None else None,
                     reg=4, sums_reg=3, sent="f_sent") + [
        "        li r1, fp_end",
        "        jmp fp_count"]
