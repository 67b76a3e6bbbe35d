"""The forward pass of a column's finalizer F_c [0411]-[0413]: the column's partial sums
come in from below (fin2) and above (fin3); z = sums + bias; a = f(z) into the sample's
slot (the activation's lowering); the nonzero activations go to the next layer's row c as
sparse wavelets, then a closeout (sender.py). A fork of a residual or two-branch block
also sends its activations dense to the join (join.py)."""

from __future__ import annotations

from .. import task_ids as T
from .join import skip_add, skip_arrival, skip_send
from .recompute import replay_finished, replay_slot
from .sender import sender_setup, staged_sender
from .spec import PeSpec

__all__ = ["column_sums", "finalize_forward"]


def column_sums(s: PeSpec) -> list[str]:
    """The end of the column's chain at F_c: its own sums (plus the bias, added while the
    chain runs), then the sums from the rows below (fin2) and above (fin3), into z."""
    FX, MV = s.FX, s.MV
    L = ["fsums:"] if s.sends_replay else []      # where a replay joins the forward pass
    L += ["        lds1wds S1[3], d_fpsum"]
    if s.bias:
        L += ["        lds0wds S0[11], d_fpsum",
              "        lds1wds S1[11], d_bias",
              f"        fadd{FX} S0[11], S0[11], S1[11]   ; my sums + b, while the chain runs"]
    L.append("        lddwds  D[4], d_z")
    if s.row > 0:
        L += ["        lds0wds S0[4], d_plow",
              f"        fadd{FX}.t D[4], S0[4], S1[3]     ; z = (sums from below) + mine"]
    else:
        L.append(f"        {MV} D[4], S1[3]                 ; z = mine")
        L.append("        jmp fin2" if s.row < s.rows - 1 else "        jmp fin3")
    if s.row > 0:
        L.append("fin2:")
    if s.row < s.rows - 1:
        if s.row == 0:
            L.append("fin2:")
        L += ["        lddwds  D[5], d_z",
              "        lds0wds S0[5], d_phigh",
              "        lds1wds S1[5], d_z",
              f"        fadd{FX}.t D[5], S0[5], S1[5]     ; z += (sums from above)"]
    L.append("fin3:")
    return L


def finalize_forward(s: PeSpec) -> list[str]:
    """fin3: every partial sum is in z. Activation into the sample's slot, then the
    nonzero activations and a closeout to the next layer (f_txact:tx [0413])."""
    E, MV = s.esize, s.MV
    # The activations are kept once computed: count the sample, and let its backward pass
    # start (fp_count). In the output layer that happens as soon as the last activation is
    # staged (the targets may be waiting already); elsewhere after the closeout has gone,
    # which the next layer waits for.
    clear = ["        lddwds  D[11], d_fpsum",
             f"        {MV} D[11], #0                   ; clear the partial sums"]
    finished = clear + replay_finished(s) + ["        li r1, fp_end", "        jmp fp_count"]
    if s.last:
        last_round = clear + ["        li r1, idle", "        jmp fp_count"]
        done = ["        jmp fp_end"]
    elif s.skip_out is not None:
        # before a residual block: the skip goes after the sparse sends; the sample is
        # done here when the skip is out (which waits while the join's FIFO is full)
        last_round = ["        term"]
        done = skip_send(s)
    else:
        last_round = ["        term"]
        done = finished
    slot = (["        movi r4, 0                     ; one slot of outputs (next layer discards)"]
            if s.out_slots == 1 < s.slots else ["        ld16 r4, v_fpsl"] + replay_slot(s))
    L = slot + [
         f"        li r5, {s.nout * E}",
         "        mul16 r4, r4, r5               ; the sample's slot of aslots",
         "        mov16 r12, r4",
         "        lddwds  D[11], d_aw",
         "        lds1wds S1[11], d_z"]
    L += s.act.forward(s, "D[11]", "S1[11]")
    if s.a_out is None:
        # branch f's last layer: the sample's output, dense, to the join's FIFO only
        return L + skip_send(s) + ["sk_sent:"] + finished
    if s.join:
        L += skip_add(s)
        L.append("        li r6, ybuf")
    else:
        L += ["        li r6, aslots",
              "        add16 r6, r6, r12"]
    # transmit the nonzero activations, each with its neuron index [0408], [0424]
    L += sender_setup("tx")
    L += staged_sender("tx", s, stage=T.STAGE_TX, q_dsd="d_txq", flag_var="v_flag",
                       last_round=last_round, done=done,
                       threshold="d_athr" if s.athr else None,
                       replay_close="d_txqr" if s.sends_replay else None)
    if s.skip_out is not None:
        L += ["sk_sent:"] + finished
    if s.join:
        L += skip_arrival(s)
    return L
