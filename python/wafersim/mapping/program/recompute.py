"""The replay of a reverse checkpoint's kept layer (seed 000 FIG. 28D-E, [0615], [0653]):
when a sample's backward pass reaches the discarding layers east of kept layer k, each PE
of layer k recomputes its forward partial sums of that sample from the inputs it stored
in the sample's backward slot (``v_bpsl``; A 2826 / A 2829), instead of waiting for the
inputs to stream in again: the host streams each sample once.

The replay must give the forward pass's sums bit for bit ([0653], [0655]: under SGD and
mini-batch the weights have not changed since). ``f_act`` adds a_i * W[O_c, i] into
``fpsum`` once per nonzero a_i in the order the inputs arrive, which is increasing i
(the sender scans its outputs in order and skips zeros, or |a| <= t with an activation
threshold: either way what it does not send is stored as 0, the slot having been cleared
after its previous sample). So the replay runs the same fused multiply-add on the same
operands (``S0[0]`` = fpsum, ``S1[0]`` = the WLI row of W, r2(:r3) = a_i) for every
stored a_i that is not +-0, in increasing i: the same sequence of roundings.

After the loop a worker (not a finalizer) passes its sums on along the column's
partial-sum chain as in the forward pass, with an operation of its own whose completion
(``r_sent``) clears the sums and ends: the replay is no new sample, so ``fp_count`` /
``fp_end`` do not run. The trigger that starts the replay, the finalizers' recompute
mode (z, a = f(z), the sends east) and the discarding layers' side are not built yet
(docs/training.md, "Reverse checkpoint", "What the wafer needs"), and ``ws.map`` refuses
discarding policies.
"""

from __future__ import annotations

from .. import task_ids as T
from ..registers import ROWB
from .idioms import chain_hop
from .spec import PeSpec

__all__ = ["replay_task", "replay_table", "replay_descriptors"]

#: Registers the loop keeps between iterations: both "unused" in registers.py, so no other
#: task's state is clobbered.
_ROW, _END = "r13", "r15"


def replay_descriptors(s: PeSpec) -> list[str]:
    """A worker's chain output for the replay: the forward pass's ``d_pout`` with its own
    completion (``R_SENT``), so that the end of the hop does not count a new sample."""
    if s.final:
        return []
    return [f"d_rpout:  .dsd fabric_out, color={s.p_out}, length={s.nout}, sw=1, ue=1, "
            f"utid={T.UT_PCHAIN}, ac={T.R_SENT}"]


def replay_table(s: PeSpec) -> list[str]:
    """The ``.task`` lines of the replay (local ids: a control wavelet or the host starts
    ``r_replay``; a worker's chain operation ends in ``r_sent``)."""
    L = [f".task r_replay, {T.RECOMPUTE}"]
    if not s.final:
        L.append(f".task r_sent, {T.R_SENT}")
    return L


def replay_chain(s: PeSpec) -> list[str]:
    """A worker's hop of the column's partial-sum chain after the replay [0411], [0412]:
    the same operation as the forward pass's (its sums, plus the far neighbour's when it
    is not the chain's start), ending in ``r_sent``, which clears the sums and ends."""
    return chain_hop(s, "d_fpsum", "d_rpout", "d_pin" if s.p_in is not None else None,
                     reg=4, sums_reg=3, sent="r_sent") + ["        term"]


def replay_task(s: PeSpec, then: list[str] | None = None) -> list[str]:
    """r_replay: fpsum += W[O_c, i] * a_i for each stored a_i != 0 of the backward slot, i
    increasing, then ``then`` (default: a worker's chain hop, ``replay_chain``; a
    finalizer ends the task, its recompute mode is not built). The loop keeps the row's byte
    offset in r13 and its end in r15; r4 is the WLI offset of ``S1[0]`` (d_wrow), r6 the
    address of a_i, r2(:r3) a_i as ``f_act`` gets it from the wavelet [0346]. Its
    instructions count in the forward pass's statistics (``Plan.pass_of_pc``)."""
    E, MV, FX = s.esize, s.MV, s.FX
    L = [";@pass forward",
         "r_replay: ld16 r5, v_bpsl",
         f"        li r0, {E}",
         "        mul16 r5, r5, r0",
         f"        li r0, w + {s.nout * E}",
         "        add16 r5, r5, r0               ; &a_0 in the backward slot",
         f"        movi {_ROW}, 0",
         f"        li {_END}, {s.nin * s.row_bytes}",
         "rpl:    mov16 r6, r5",
         f"        add16 r6, r6, {_ROW}",
         f"        {MV} r2, [r6]                  ; a_i as stored by f_act",
         f"        feq{FX} r2, #0",
         "        bt rpz                         ; zeros were never sent [0408]",
         f"        mov16 r4, {_ROW}                 ; W[O_c, i]: the row at r4 (WLI)",
         f"        fmac{FX} S0[0], S0[0], S1[0]      ; fpsum += W[O_c, i] * a_i, as f_act [0408]",
         f"rpz:    add16 {_ROW}, {_ROW}, {ROWB}",
         f"        ltu16 {_ROW}, {_END}               ; (unsigned: rows may pass 32 KiB / 2)",
         "        bt rpl"]
    if then is None:
        then = ["        term"] if s.final else replay_chain(s)
    return L + then
