"""The recompute pass of a reverse checkpoint on the PEs (seed 000 FIG. 28D-E, [0615],
[0651]-[0653]). The replay of a kept layer:
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
``fp_end`` do not run. A finalizer sets the replay mode word ``v_rcm`` and joins the
forward pass's code at the column's sums (``fsums``): z, a = f(z) into the sample's
*backward* slot, the sparse sends east, then a closeout of its own (``R_CLOSE``) instead
of the forward pass's, and at the end no ``fp_count`` / ``fp_end``; three small hooks in
finalizer_forward.py and sender.py (``replay_slot``, ``replay_finished``, the sender's
``replay_close``) do that, and emit nothing for a PE that does not replay.

The discarding layers' side (``PeSpec.discards``): in training, ``fp_end`` drops the
sample's inputs once its sums are sent ([0651]); ``r_mode`` (the trigger's task) points
``f_act``'s stores at the sample's backward slot and lets the activations in; at the
replayed activations' closeout ``r_close`` restores the forward slot and, inside the
segment ("pass"), goes on exactly as the kept layer after its loop, at its end ("end")
clears the sums.

A discarding worker holds its deltas (D) from ``fp_end`` until ``r_close``.

A discarding layer's finalizer holds its backward pass at ``dfin`` until ``r_close``.

The trigger (recompute_trigger.py routes it on color RC) starts ``rc_go`` at every PE of
the segment; the PE queues it and starts ``r_replay`` / ``r_mode`` when no forward pass
is in progress or to come and the previous recompute's backward pass has ended there
(``trigger_queue``): the replay uses the forward pass's sums, registers, descriptors,
sender and colors. With CPGD's order log, ``rc_try`` logs when each recompute starts
(``rlog``) and ``r_close`` keeps the recompute's ``f_act`` tasks out of the forward-read
count (cpgd.py). docs/training.md, "Reverse checkpoint", describes the whole pass.
"""

from __future__ import annotations

from .. import task_ids as T
from ..registers import FSLOT, ROWB
from . import cpgd
from .idioms import chain_hop
from .sparse_weights import forward_runs
from .spec import PeSpec

__all__ = ["replay_task", "replay_table", "replay_descriptors", "replay_slot",
           "replay_finished", "discard_inputs", "discard_table", "recompute_mode",
           "send_trigger", "trigger_descriptors", "delta_gate", "recompute_done",
           "trigger_admit", "trigger_done", "stream_done", "sample_update"]

#: Registers the loop keeps between iterations. r1 holds a return address only within a
#: task, r15 nothing else (registers.py). Not r13: in fp32 it is the high half of a
#: worker's -lr (r12:r13), which the chain pass reads after the replay.
_ROW, _END = "r1", "r15"


def replay_descriptors(s: PeSpec) -> list[str]:
    """A worker's chain output for the replay: the forward pass's ``d_pout`` with its own
    completion (``R_SENT``), so that the end of the hop does not count a new sample. A
    finalizer's: the closeout of the replayed activations, index ``R_CLOSE``, with the
    completion of the forward pass's closeouts (the sender's task)."""
    if s.final:
        return [f"d_txqr: .dsd fabric_out, color={s.a_out}, length=1, sw=1, c=1, "
                f"index={T.R_CLOSE}, ue=1, utid={T.UT_TX}, ac={T.TX}"]
    return [f"d_rpout:  .dsd fabric_out, color={s.p_out}, length={s.nout}, sw=1, ue=1, "
            f"utid={T.UT_PCHAIN}, ac={T.R_SENT}"]


def replay_slot(s: PeSpec) -> list[str]:
    """At fin3, after ``ld16 r4, v_fpsl``: during a replay the activations go to the
    sample's backward slot instead (``v_bpsl``), where its backward pass reads them."""
    if not s.sends_replay:
        return []
    return ["        ld16 r5, v_rcm",
            "        eq16 r5, #0",
            "        bt rfs",
            "        ld16 r4, v_bpsl                ; a replay: the sample's backward slot",
            "rfs:"]


def replay_finished(s: PeSpec) -> list[str]:
    """At the end of a finalizer's sends, after the sums are cleared: a replay ends there
    (no new sample: no ``fp_count`` / ``fp_end``) and leaves replay mode."""
    if not s.sends_replay:
        return []
    return ["        ld16 r5, v_rcm",
            "        eq16 r5, #0",
            "        bt rfw",
            "        movi r5, 0",
            "        st16 r5, v_rcm",
            "        jmp admit                      ; a replay: no new sample",
            "rfw:"]


def replay_table(s: PeSpec) -> list[str]:
    """The ``.task`` lines of the replay (local ids: a control wavelet or the host starts
    ``r_replay``; a worker's chain operation ends in ``r_sent``)."""
    L = trigger_table(s, "r_replay")
    if not s.final:
        L.append(f".task r_sent, {T.R_SENT}")
    return L


def replay_chain(s: PeSpec) -> list[str]:
    """A worker's hop of the column's partial-sum chain after the replay [0411], [0412]:
    the same operation as the forward pass's (its sums, plus the far neighbour's when it
    is not the chain's start), ending in ``r_sent``, which clears the sums and ends in
    ``admit`` (which lets the next sample in only if the forward pass's rules allow)."""
    return chain_hop(s, "d_fpsum", "d_rpout", "d_pin" if s.p_in is not None else None,
                     reg=4, sums_reg=3, sent="r_sent") + [
        "        jmp admit                      ; (a discarding layer blocked A meanwhile)"]


def replay_finalize(s: PeSpec) -> list[str]:
    """A finalizer after its replay loop: the forward pass's column sums, z, a = f(z) and
    sparse sends, in replay mode (``v_rcm``: the backward slot, the ``R_CLOSE`` closeout,
    no new sample counted)."""
    if s.a_out is None or s.skip_out is not None or s.join or s.last:
        return ["        term                           ; (no replay mode here)"]
    return ["        movi r5, 1",
            "        st16 r5, v_rcm",
            "        jmp fsums                      ; the forward pass's column sums on"]


def replay_task(s: PeSpec, then: list[str] | None = None) -> list[str]:
    """r_replay: fpsum += W[O_c, i] * a_i (a sparse PE: over its runs of kept outputs) for
    each stored a_i != 0 of the backward slot, i increasing, then ``then`` (default: a
    worker's chain hop, ``replay_chain``; a finalizer's column sums and sends in replay
    mode, ``replay_finalize``). The loop keeps the row's byte offset in r1 and its end in r15; r4 is the WLI offset of ``S1[0]`` (d_wrow), r6 the
    address of a_i, r2(:r3) a_i as ``f_act`` gets it from the wavelet [0346]. Its
    instructions count in the forward pass's statistics (``Plan.pass_of_pc``)."""
    E, MV, FX = s.esize, s.MV, s.FX
    L = [";@pass forward"] + trigger_queue(s, "r_replay") + [
         "r_replay: ld16 r5, v_bpsl",
         f"        li r0, {E}",
         "        mul16 r5, r5, r0",
         f"        li r0, w + {s.ncols * E}",
         "        add16 r5, r5, r0               ; &a_0 in the backward slot",
         f"        movi {_ROW}, 0",
         f"        li {_END}, {s.nin * s.row_bytes}",
         "rpl:    mov16 r6, r5",
         f"        add16 r6, r6, {_ROW}",
         f"        {MV} r2, [r6]                  ; a_i as stored by f_act",
         f"        feq{FX} r2, #0"]
    # weight sparsity: f_act's multiply-adds, one per run of kept outputs (sparse_weights;
    # three instructions a run: a loop beyond a branch's reach is refused at ws.map by the
    # encoder, naming the PE; in a test, 35 runs pushed the PE's words out of reach first)
    macs = forward_runs(s) if s.sparse else [
        f"        fmac{FX} S0[0], S0[0], S1[0]      ; fpsum += W[O_c, i] * a_i, as f_act [0408]"]
    L += ["        bt rpz                         ; zeros were never sent [0408]",
          f"        mov16 r4, {_ROW}                 ; W[O_c, i]: the row at r4 (WLI)"] + macs
    L += [f"rpz:    add16 {_ROW}, {_ROW}, {ROWB}",
          f"        ltu16 {_ROW}, {_END}               ; (unsigned: rows may pass 32 KiB / 2)",
          "        bt rpl"]
    if then is None:
        then = replay_finalize(s) if s.final else replay_chain(s)
    return L + then


# ---- the trigger and the finalizers' gating (recompute_trigger.py) --------------------------
def trigger_table(s: PeSpec, body: str) -> list[str]:
    """The task that starts the recompute at this PE: the trigger's color (RC) starts
    ``rc_go``, which queues it (at F_0 of the segment's last layer, which sends it, the
    local id RECOMPUTE); without a trigger (single-PE tests) ``body`` is started
    directly by the local id."""
    if s.rc is None:
        return [f".task {body}, {T.RECOMPUTE}"]
    return [f".task rc_go, {T.RECOMPUTE if s.rc_source else s.rc}"]


def trigger_queue(s: PeSpec, body: str) -> list[str]:
    """``rc_go`` counts a trigger (``v_rcq``); ``rc_try`` (also at the top of ``admit``,
    after every event that can make the PE ready) starts ``body`` for the oldest one
    when the PE is ready: no recompute whose backward pass has not ended here
    (``v_rcb``, cleared by ``bp_end``), no forward pass in progress (``v_fpbusy``) and
    none to come before it: the mini-batch's forward passes are done here (``v_bfull``)
    or every sample in flight has been forwarded (``v_infl`` = ``v_k``). Then each PE of
    the segment runs, on the forward pass's colors, first every forward pass it admits
    and then the recomputes, in sample order, the same sequence at every PE of a
    column's chain and a row's stream. r1 = where to go when nothing starts."""
    if s.rc is None:
        return []
    return ["rc_go:  ld16 r5, v_rcq",
            "        addi r5, 1",
            "        st16 r5, v_rcq                 ; a trigger (RC) [0653]",
            "        li r1, idle",
            "rc_try: ld16 r5, v_rcq",
            "        eq16 r5, #0",
            "        bt rct0",
            "        ld16 r5, v_rcb",
            "        eq16 r5, #0",
            "        bf rct0                        ; the last recompute's backward pass runs",
            "        ld16 r5, v_fpbusy",
            "        eq16 r5, #0",
            "        bf rct0                        ; a forward pass is in progress",
            "        ld16 r5, v_bfull",
            "        eq16 r5, #0",
            "        bf rcgo                        ; the batch's forward passes are done",
            "        ld16 r0, v_infl",
            "        ld16 r5, v_k",
            "        lt16 r0, r5",
            "        bt rct0                        ; another forward pass may come first",
            "rcgo:   ld16 r5, v_rcq",
            "        addi r5, -1",
            "        st16 r5, v_rcq",
            "        movi r5, 1",
            "        st16 r5, v_rcb"] + cpgd.recompute_logged(s) + [
            f"        jmp {body}",
            "rct0:   jr r1"]


def trigger_admit(s: PeSpec) -> list[str]:
    """At the top of ``admit``: a queued trigger may start now."""
    if s.rc is None:
        return []
    return ["        li r1, adm1",
            "        jmp rc_try",
            "adm1:"]


def trigger_done(s: PeSpec) -> list[str]:
    """At ``bp_end``: the recompute's backward pass has ended here."""
    if s.rc is None:
        return []
    return ["        movi r5, 0",
            "        st16 r5, v_rcb"]

def stream_done(s: PeSpec) -> list[str]:
    """In ``bp_end`` without a mini-batch update (``v_cpm`` = 0: CPGD in place), or after
    CPGD's per-sample update (``sample_update``), after ``v_infl`` is decremented: the
    host marks a CPGD epoch's last sample as ending a batch, so that
    ``rc_try`` knows no forward pass will come before the last recomputes (``v_bfull``);
    once every sample of the epoch has ended here, the mark is cleared, so that the
    next epoch (or an evaluation) is admitted: at every PE of such a plan, in a segment
    or not (``PeSpec.stream_end``). Falls through to ``admit``."""
    if not s.stream_end:
        return []
    return ["        ld16 r5, v_infl",
            "        eq16 r5, #0",
            "        bf admit",
            "        movi r5, 0",
            "        st16 r5, v_bfull               ; the epoch has ended here (CPGD)"]


def sample_update(s: PeSpec, then: str) -> list[str]:
    """In ``bp_end`` with an update batch (``v_cpm`` = 1), after ``v_gcnt`` is counted, on
    a plan with ``stream_end``: under ``algo="cpgd"`` (``v_pipe`` = 1) an optimizer with
    state updates at the end of every sample's backward pass here (a mini-batch of one,
    as on a CPGD plan without a discarding layer), whatever the sample's mark says: the
    mark is the epoch's end (``v_bfull``, cleared by ``stream_done`` at ``then``), so the
    recompute queue sees it. Otherwise (mini-batches on this plan) falls through to the
    mini-batch's end."""
    if not s.stream_end:
        return []
    return ["        ld16 r5, v_pipe",
            "        eq16 r5, #0",
            "        bt bpb",
            f"        li r1, {then}",
            "        jmp ap                         ; CPGD: this sample's update [0625]",
            "bpb:"]


def send_trigger(s: PeSpec) -> list[str]:
    """In ``j_first`` of F_0 of a segment's last layer, as it takes the sample's delta sums
    (or targets): the backward pass has reached the segment. One wavelet of the trigger
    color starts the replay at the kept layer and recompute mode at every other PE of the
    segment; this PE starts its own ``r_mode`` locally."""
    if not s.rc_source:
        return []
    return ["        lddwds  D[11], d_trig",
            f"        {s.MV} D[11], r2                  ; the recompute trigger (RC) [0653]",
            f"        activate {T.RECOMPUTE}                ; this PE's own r_mode"]


def trigger_descriptors(s: PeSpec) -> list[str]:
    if not s.rc_source:
        return []
    return [f"d_trig:   .dsd fabric_out, color={s.rc}, length=1, sw=1"]


def delta_gate(s: PeSpec) -> list[str]:
    """At ``dfin`` of a discarding layer's finalizer: its backward pass of the sample
    needs the recomputed activations (its own block pass reads its inputs; in a "pass"
    layer f' reads its outputs): unless ``r_close`` has run (``v_rcd``), note that it
    waits (``v_rcw``) and end; ``r_close`` starts ``dfin`` again."""
    if not s.rc_gate:
        return []
    return ["        ld16 r5, v_rcd",
            "        eq16 r5, #0",
            "        bf dfg",
            "        movi r5, 1",
            "        st16 r5, v_rcw",
            "        term                           ; wait for the recompute's closeout",
            "dfg:    movi r5, 0",
            "        st16 r5, v_rcd"]


def recompute_done(s: PeSpec) -> list[str]:
    """In ``r_close`` of a discarding layer's finalizer: the recomputed activations are
    in; a backward pass that waits for them at ``dfin`` starts again."""
    if not s.rc_gate:
        return []
    return ["        movi r5, 1",
            "        st16 r5, v_rcd",
            "        ld16 r5, v_rcw",
            "        eq16 r5, #0",
            "        bt rcd0",
            "        movi r5, 0",
            "        st16 r5, v_rcw",
            f"        activate {T.DFIN}                ; the delta pass waited: go on",
            "rcd0:"]


# ---- the discarding layers (k+1 .. m-1 of a segment) ----------------------------------------
def discard_inputs(s: PeSpec) -> list[str]:
    """At ``fp_end`` of a discarding layer's PE, in training: its inputs of the sample are
    dropped once its sums are sent ([0651]); the recompute brings them back ([0653]). A
    worker also holds its deltas (D) until then: its chain pass needs the inputs."""
    if not s.discards:
        return []
    gate = [] if s.final else [f"        block {s.d_col}                    ; deltas wait for the recompute"]
    return ["        ld16 r5, v_mode",
            "        eq16 r5, #0",
            "        bt dsc0",
            f"        mov16 r4, {FSLOT}",
            "        lddwds  D[11], d_actz",
            f"        {s.MV} D[11], #0                   ; discard the sample's inputs [0651]"
            ] + gate + ["dsc0:"]


def discard_table(s: PeSpec) -> list[str]:
    """``r_mode`` (the trigger's task: the recompute is coming) and ``r_close`` (the
    replayed activations' closeout, ``R_CLOSE``)."""
    L = trigger_table(s, "r_mode") + [f".task r_close, {T.R_CLOSE}"]
    if s.discards == "pass" and not s.final:
        L.append(f".task r_sent, {T.R_SENT}")
    return L


def recompute_mode(s: PeSpec) -> list[str]:
    """A discarding layer's side of the recompute. ``r_mode``: ``f_act`` stores what
    arrives into the sample's backward slot (FSLOT <- v_bpsl), and the activations are let
    in. ``r_close``: the activations are blocked again and FSLOT restored; then in a
    "pass" layer the recompute goes on as after the kept layer's loop (a worker's chain
    hop, a finalizer's sums and sends), in the segment's last layer ("end") the sums
    are cleared: nothing east needs them. Either way it ends in ``admit``, which lets the
    next sample's activations in only if the forward pass's rules allow."""
    E = s.esize
    L = [";@pass forward"] + trigger_queue(s, "r_mode") + ["r_mode:"]
    if s.in_slots > 1:          # (one stored slot: FSLOT is 0 for both)
        L += ["        ld16 r5, v_bpsl",
              f"        li r0, {E}",
              "        mul16 r5, r5, r0",
              f"        mov16 {FSLOT}, r5                  ; store the replayed inputs in the backward slot"]
    if s.sends_replay:
        L += ["        movi r5, 1", "        st16 r5, v_rcm"]
    L += [f"        unblock.t {s.a_in}",
          f"r_close: block {s.a_in}"] + cpgd.recompute_uncounted(s)
    if s.in_slots > 1:
        L += ["        ld16 r5, v_fpsl",
              f"        li r0, {E}",
              "        mul16 r5, r5, r0",
              f"        mov16 {FSLOT}, r5                  ; the forward slot again"]
    L += recompute_done(s)
    if not s.final:
        L.append(f"        unblock {s.d_col}                  ; the inputs are back: the deltas may run")
    if s.discards == "pass":
        return L + (["        jmp fsums                      ; the forward pass's column sums on"]
                    if s.final else replay_chain(s))
    return L + ["        lddwds  D[11], d_fpsum",
                f"        {s.MV} D[11], #0                   ; the segment's end: clear the sums",
                "        jmp admit"]
