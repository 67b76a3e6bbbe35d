"""The backward pass of a column's finalizer F_c: the delta partial sums of the next
layer's row c (or, in the output layer, the targets) arrive on j_in; delta = sum * f'(a)
(the output layer: the loss's lowering forms it); the nonzero deltas go down and up the
column [0409] (sender.py), while F_c does its own block's share of DP and CP; then the
delta closeout [0420]. The loss share and the bias update come after its own delta sums
have left (``finalize_later``, in h_sent)."""

from __future__ import annotations

from .. import task_ids as T
from . import cpgd
from .idioms import bump
from .join import skip_back
from .recompute import delta_gate, send_trigger
from .sender import sender_setup, staged_sender
from .single_weights import single_own_column
from .spec import PeSpec

__all__ = ["finalize_backward", "finalize_later", "own_block_pass"]


def _admission(s: PeSpec) -> list[str]:
    """jadmit: take the next sample's delta sums (or targets) only when no backward pass
    runs here and a forward pass is done (targets may come early). r1 = return."""
    L = [";@pass control",
         "jadmit: ld16 r5, v_dpbusy               ; take the next sample's stream when",
         "        eq16 r5, #0                    ; no backward pass runs here and a forward",
         "        bf jad0                        ; pass is done (targets may come early)",
         "        ld16 r5, v_jcnt",
         "        eq16 r5, #0",
         "        bt jad0"]
    if s.join:
        L += ["        ld16 r5, v_bbusy               ; tot is still being sent back",
              "        eq16 r5, #0",
              "        bf jad0"]
    return L + [f"        unblock {s.j_in}", "jad0:   jr r1"]


def _read_stream(s: PeSpec) -> list[str]:
    """j_first / j_read: the first value starts a task that blocks the color and reads the
    rest with one asynchronous operation; its end starts dfin."""
    L = [";@pass delta",
         f"j_first: block {s.j_in}                 ; the stream is read by one operation",
         "        movi r5, 1",
         "        st16 r5, v_dpbusy"]
    L += bump("v_jcnt", -1)
    return L + ["        lddwds  D[3], d_tot0",
                f"        {s.MV} D[3], r2                   ; the first value started this task"
                ] + send_trigger(s) + [
                f"        activate.t {T.JREAD}",
                "j_read: lddwds  D[3], d_totr",
                "        lds1wds S1[8], d_jin",
                f"        {s.MV}.t D[3], S1[8]              ; the rest, asynchronously"]


def _delta(s: PeSpec) -> list[str]:
    """dfin: delta of the sample in the backward slot (S1[7] = its activations, wli r4)."""
    E, FX, MV = s.esize, s.FX, s.MV
    L = ["dfin:"] + delta_gate(s) + [
         "        movi r4, 0" if s.out_slots == 1 < s.slots else "        ld16 r4, v_bpsl",
         f"        li r5, {s.nout * E}",
         "        mul16 r4, r4, r5               ; the sample's slot of aslots (wli)",
         "        lds1wds S1[7], d_aw"]
    if s.last:
        L += s.loss.output_delta(s)
    elif s.act.has_derivative:
        L += s.act.derivative(s)
        L += ["        lddwds  D[8], d_delta",
              "        lds0wds S0[8], d_tot",
              "        lds1wds S1[8], d_fpr",
              f"        fmul{FX} D[8], S0[8], S1[8]       ; delta = sum * f'(a) [0409]"]
    else:
        L += ["        lddwds  D[8], d_delta",
              "        lds1wds S1[8], d_tot",
              f"        {MV} D[8], S1[8]                 ; delta = sum"]
    return L + ["        ld16 r4, v_bpsl",
                "        add16 r4, r4, r4",
                "        li r6, v_flags",
                "        add16 r6, r6, r4",
                "        mov16 r5, [r6]                 ; does this sample end a mini-batch?",
                "        st16 r5, v_dflag",
                "        li r6, delta"]


def own_block_pass(s: PeSpec, then: list[str]) -> list[str]:
    """The finalizer's own share of DP and CP for every nonzero delta of its column, after
    the deltas are on their way to the other PEs of the column. Unrolled (delta_j's
    column offset is a constant), one copy per chain-pass variant of the optimizer. The
    labels dnz{s,a}_j run once per nonzero delta: the statistics count them."""
    E, FX, MV = s.esize, s.FX, s.MV
    variants = s.optimizer.own_variants(s)
    L = s.optimizer.own_prologue(s)
    for k, (variant, cp) in enumerate(variants):
        if k > 0:
            L.append(f"own{variant}:")
        for j in range(s.nout):
            L += [f"own{variant}_{j}: {MV} r2, [r6]",
                  f"        feq{FX} r2, #0",
                  f"        bt own{variant}z_{j}"]
            pos = s.position(j)
            column = single_own_column(s, j, f"dnz{variant}_{j}") if s.single else None
            if s.single and column is None:     # single weights: column j keeps none
                pos = None
            if pos is None:     # weight sparsity: j's weights are pruned here
                L += [f"dnz{variant}_{j}:                           ; (pruned here: no DP, no CP)",
                      f"own{variant}z_{j}: addi r6, {E}"]
                continue
            if column is not None:
                L += column
            else:
                L.append(f"dnz{variant}_{j}: li r4, {E * pos}               ; column j of W")
            if s.has_dp:
                L.append(f"        fmac{FX} S0[1], S0[1], S1[1]      ; DP: dpsum += W[j, I_r] * delta_j [0409]")
            L += [";@pass chain"] + cp + [";@pass delta",
                                          f"own{variant}z_{j}: addi r6, {E}"]
        L += cpgd.own_logged(s, variant) + then
    return L


def finalize_backward(s: PeSpec) -> list[str]:
    """jadmit, j_first / j_read, dfin, the delta sender and the own block pass."""
    L = _admission(s) + _read_stream(s) + _delta(s)
    back = skip_back(s) if s.join else []
    if s.d_send:
        # the nonzero deltas down the column; then, while they travel, the loss, the bias
        # and this PE's own share of DP and CP
        L += sender_setup("dx")
        L += staged_sender("dx", s, stage=T.STAGE_DTX, q_dsd="d_dxq", flag_var="v_dflag",
                           last_round=["        jmp own"],
                           done=back + ["        ld16 r5, v_dflag",
                                        "        jmp bc                         ; this PE's own delta closeout"])
        L += own_block_pass(s, ["        term"])
    else:
        # alone in its column: its own share, then its own delta closeout
        L += own_block_pass(s, back + ["        ld16 r5, v_dflag", "        jmp bc"])
    if s.join:
        L += [";@pass delta",
              "b_sent: movi r5, 0",
              "        st16 r5, v_bbusy",
              "        li r1, idle",
              "        jmp jadmit                     ; the next sample's dL/dy may come in"]
    return L


def finalize_later(s: PeSpec) -> list[str]:
    """What a finalizer's backward pass can do after its delta sums have left (in h_sent,
    or before bp_end in layer 0): the loss share to the host (output layer) and the bias
    update. Still before the next sample may start here."""
    L = s.loss.loss_share(s) if s.last else []
    if s.bias:
        L += s.optimizer.bias_update(s) + cpgd.bias_done(s)
    return L
