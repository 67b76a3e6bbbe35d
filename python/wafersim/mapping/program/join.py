"""Forks and joins of residual and two-branch blocks (docs/training.md, "Residual blocks",
"Two-branch blocks"): the fork sends its activations dense on the skip color; the join
keeps arriving skip vectors in a FIFO of ``skip_depth`` slots, adds the oldest to its
activations (y = f(x) + x, or f(x) + g(x)), and in the backward pass sends dL/dy back."""

from __future__ import annotations

from .. import task_ids as T
from .idioms import bump
from .spec import PeSpec

__all__ = ["skip_send", "skip_add", "skip_arrival", "skip_back"]


def skip_send(s: PeSpec) -> list[str]:
    """The fork of a residual block: this sample's activations (its slot of aslots), all
    of them, to the join's FIFO; sk_sent runs when the last has left."""
    return ["        ld16 r4, v_fpsl",
            f"        li r5, {s.nout * s.esize}",
            "        mul16 r4, r4, r5",
            "        lddwds  D[11], d_sko",
            "        lds1wds S1[11], d_aw",
            f"        {s.MV}.t D[11], S1[11]            ; x on the skip path to the join"]


def skip_add(s: PeSpec) -> list[str]:
    """The join: y = a + x with x the oldest skip vector of the FIFO (waiting for it if
    the FIFO is empty: sk_in resumes at sky). Frees the slot and restarts the FIFO's
    reader if it had stopped on a full FIFO."""
    slot = s.nout * s.esize
    MV, FX = s.MV, s.FX
    return (["        ld16 r5, v_skn",
             "        eq16 r5, #0",
             "        bf sky",
             "        movi r5, 1",
             "        st16 r5, v_skw                 ; wait for the skip vector (sk_in)",
             "        term",
             # (a WLI operand reads r4 on every iteration: one offset per instruction)
             "sky:    ld16 r4, v_skrd",
             "        lds1wds S1[11], d_skf",
             "        lddwds  D[11], d_y",
             f"        {MV} D[11], S1[11]              ; x, from the FIFO",
             "        ld16 r4, v_fpsl",
             f"        li r5, {slot}",
             "        mul16 r4, r4, r5",
             "        lds0wds S0[11], d_aw           ; a = f(x) of this sample",
             "        lds1wds S1[11], d_y",
             "        lddwds  D[11], d_y",
             f"        fadd{FX} D[11], S0[11], S1[11]     ; y = f(x) + x",
             "        ld16 r4, v_skrd",
             f"        addi r4, {slot}",
             f"        li r0, {slot * s.skip_depth}",
             "        eq16 r4, r0",
             "        bf sky0",
             "        movi r4, 0",
             "sky0:   st16 r4, v_skrd"]
            + bump("v_skn", -1)
            + ["        ld16 r5, v_skidle",
               "        eq16 r5, #0",
               "        bt sky1",
               "        movi r5, 0",
               "        st16 r5, v_skidle",
               f"        unblock {s.skip_in}                   ; a slot is free: the skip path moves again",
               "sky1:"])


def skip_arrival(s: PeSpec) -> list[str]:
    """A skip vector arrives: its first wavelet starts sk_first, which blocks the skip
    color and reads the rest with an operation of a local task (sk_read; like j_first);
    sk_in then counts the vector in the FIFO and unblocks the color while a slot is free
    (a full FIFO leaves it blocked: the skip path backs up to the fork). Resumes the
    activations if they wait for this vector."""
    slot = s.nout * s.esize
    MV = s.MV
    L = [f"sk_first: block {s.skip_in}               ; one vector at a time",
         "        ld16 r4, v_skwr",
         "        lddwds  D[9], d_skf0",
         f"        {MV} D[9], r2                   ; the first value started this task"]
    if s.nout > 1:
        L += [f"        activate.t {T.SK_READ}",
              "sk_read: ld16 r4, v_skwr",
              "        lddwds  D[9], d_skfr",
              "        lds1wds S1[9], d_sin",
              f"        {MV}.t D[9], S1[9]              ; the rest, asynchronously"]
    L += ["sk_in:  ld16 r4, v_skwr",
          f"        addi r4, {slot}",
          f"        li r0, {slot * s.skip_depth}",
          "        eq16 r4, r0",
          "        bf ski0",
          "        movi r4, 0",
          "ski0:   st16 r4, v_skwr"]
    L += bump("v_skn", 1)
    L += ["        ld16 r5, v_skn",
          f"        li r0, {s.skip_depth}",
          "        eq16 r5, r0",
          "        bt ski1",
          f"        unblock {s.skip_in}",
          "        jmp ski2",
          "ski1:   movi r5, 1",
          "        st16 r5, v_skidle              ; full: the skip path backs up to the fork",
          "ski2:   ld16 r5, v_skw",
          "        eq16 r5, #0",
          "        bt ski3",
          "        movi r5, 0",
          "        st16 r5, v_skw",
          "        jmp sky",
          "ski3:   term"]
    return L


def skip_back(s: PeSpec) -> list[str]:
    """The join, after its deltas are out: dL/dy (the delta sums it received, in tot)
    back along the skip, all of them; b_sent runs when the last has left."""
    return ["        movi r5, 1",
            "        st16 r5, v_bbusy",
            "        lddwds  D[10], d_bo",
            "        lds1wds S1[10], d_tot",
            f"        {s.MV} D[10], S1[10]              ; dL/dy back to the residual's first layer"]
