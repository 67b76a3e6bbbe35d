"""Samples in flight at one PE: the bookkeeping between passes and the admission of the
next sample (docs/training.md, "Samples in flight, SGD and mini-batches"; [0622], [0623]).
A PE takes the next sample's activations only when its partial-sum chain has taken this
sample's sums, it has a free activation slot (fewer than ``v_k`` samples between their
forward pass and the end of their backward pass here), and the mini-batch is not
complete."""

from __future__ import annotations

from ..registers import FSLOT
from .cpgd import pipelined
from .cpgd_snapshot import bp_slot, fp_slot
from .idioms import bump
from .recompute import (discard_inputs, sample_update, stream_done, trigger_admit,
                        trigger_done)
from .single_weights import single_slot_copy
from .spec import PeSpec

__all__ = ["fp_count", "fp_end", "bp_end"]


def fp_count(s: PeSpec) -> list[str]:
    """The moment a sample's forward pass is final at this PE (its sums sent; at a
    finalizer, its activations kept): in training, count it in flight and note whether it
    ends a mini-batch; a finalizer may now take its backward pass (which can then end
    before the forward pass's sends do). r1 = where to continue."""
    L = [";@pass control",
         "fp_count: ld16 r5, v_mode",
         "        eq16 r5, #0",
         "        bt fpc0                        ; inference: nothing in flight"]
    L += bump("v_infl", 1)
    L += ["        ld16 r0, v_flag",
          "        st16 r0, v_bfull"] + pipelined(s)
    if s.final:
        L += ["        ld16 r4, v_fpsl",
              "        add16 r4, r4, r4",
              "        lddwds  D[11], d_flagw",
              "        mov16 D[11], r0                ; remember for the delta closeout"]
        L += bump("v_jcnt", 1)
        L.append("        jmp jadmit                     ; its targets / delta sums may come in")
    L.append("fpc0:   jr r1")
    return L


def fp_end(s: PeSpec) -> list[str]:
    """After a sample's forward pass at this PE (fp_count ran): without a backward pass
    (inference), clear its activation slot and take the next sample; with one, keep the
    slot and take the next sample only while slots are free and the mini-batch is not
    complete."""
    E, K = s.esize, s.slots
    L = ["fp_end: movi r5, 0",
         "        st16 r5, v_fpbusy"] + discard_inputs(s) + [
         "        ld16 r5, v_mode",
         "        eq16 r5, #0",
         "        bf fpt",
         f"        mov16 r4, {FSLOT}",
         "        lddwds  D[11], d_actz",
         f"        {s.MV} D[11], #0                   ; inference: clear the slot",
         f"        unblock.t {s.a_in}",
         "fpt:"]
    if K > 1:
        L += ["        ld16 r4, v_fpsl",
              "        addi r4, 1",
              f"        li r0, {K}",
              "        eq16 r4, r0",
              "        bf fps",
              "        movi r4, 0",
              "fps:    st16 r4, v_fpsl"]
        if s.in_slots > 1:      # (one stored slot: FSLOT stays 0; recompute.py)
            L += [f"        li r0, {E}",
                  "        mul16 r4, r4, r0",
                  f"        mov16 {FSLOT}, r4                  ; next forward slot's offset"]
        L += fp_slot(s)
    L += ["        jmp admit",
          # admit: unblock the activations when the next sample may start here
          "admit:"] + trigger_admit(s) + [
          "        ld16 r0, v_fpbusy",
          "        eq16 r0, #0",
          "        bf adm0",
          "        ld16 r0, v_bfull",
          "        eq16 r0, #0",
          "        bf adm0",
          "        ld16 r0, v_infl",
          "        ld16 r5, v_k",
          "        lt16 r0, r5",
          "        bf adm0",
          f"        unblock.t {s.a_in}",
          "adm0:   term"]
    return L


def bp_end(s: PeSpec) -> list[str]:
    """After a sample's backward pass at this PE: clear and free its activation slot,
    apply the mini-batch's update at its end, and admit the next sample."""
    E, K = s.esize, s.slots
    L = [";@pass control",
         "bp_end:"] + trigger_done(s) + [
         "        ld16 r4, v_bpsl" if s.in_slots > 1 else "        movi r4, 0",
         f"        li r0, {E}",
         "        mul16 r4, r4, r0",
         "        lddwds  D[11], d_actz",
         f"        {s.MV} D[11], #0                   ; clear the slot: only nonzeros are written"]
    if K > 1:
        L += ["        ld16 r4, v_bpsl",
              "        addi r4, 1",
              f"        li r0, {K}",
              "        eq16 r4, r0",
              "        bf bps",
              "        movi r4, 0",
              "bps:    st16 r4, v_bpsl",
              # select the descriptor of the new slot: jump into a table of loads
              "        add16 r4, r4, r4",
              "        li r0, bpt",
              "        add16 r4, r4, r0",
              "        jr r4",
              "bpd:"] + bp_slot(s)
    if s.final:
        L += ["        movi r5, 0",
              "        st16 r5, v_dpbusy",
              "        li r1, bpj",
              "        jmp jadmit",
              "bpj:"]
    L += bump("v_infl", -1)
    if not s.stream_end:
        L += ["        ld16 r5, v_cpm",
              "        eq16 r5, #0",
              "        bt admit"] + bump("v_gcnt", 1)
    else:       # CPGD with a reverse checkpoint: the batch mark is the stream's end
        L += ["        ld16 r5, v_cpm",
              "        eq16 r5, #0",
              "        bf bpm",
              "bpsd:"] + stream_done(s) + ["        jmp admit", "bpm:"]
        L += bump("v_gcnt", 1) + sample_update(s, then="bpsd")
    L += ["        ld16 r5, v_bflag",
          "        eq16 r5, #0",
          "        bt admit",
          "        li r1, bpu",
          "        jmp ap                         ; end of the mini-batch: update [0623]",
          "bpu:    movi r5, 0",
          "        st16 r5, v_bfull",
          "        jmp admit"]
    if K > 1:
        # the table at the end, so that it does not put `admit` out of the branches'
        # reach when there are many slots
        L.append("bpt:")
        for k in range(K):
            L += [f"        lds1wds S1[2], d_actc{k}", f"        jmp {f'bpx{k}' if s.single else 'bpd'}"]
        if s.single:    # single weights: the backward slot's activation descriptor
            for k in range(K):
                L += single_slot_copy(s, k)
    return L
