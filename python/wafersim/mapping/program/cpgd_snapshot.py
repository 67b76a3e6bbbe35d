"""CPGD's delta pass with the weights of the sample's own forward pass ([0634], "historical
parameters"; ``ws.map(..., cpgd=True, dp_weights="forward")``): compiled only into PEs
with a delta pass (layers after the first), all of it CE instructions on PE memory. Not
into a reverse checkpoint's discarding layers: their delta pass uses the recompute's
activations and reads W, unchanged since the recompute read it (``PeSpec.snapshot``).

Under CPGD a PE's forward pass reads W one row at a time, as the sample's activations
arrive (``f_act``), while other samples' updates change W in between. "The weights the
forward pass read" is therefore defined per row, and the snapshot is taken so:

* **a row the forward pass read** (a nonzero activation a_i arrived): ``f_act`` copies row
  i of W into the sample's snapshot slot right after its multiply-add read it, in the same
  task (nothing can update W in between);
* **a row it did not read** (a_i = 0 was never sent [0408]): the activation closeout
  (``f_close``, all of the sample's activations are in) copies row i as stored then. It
  finds those rows by the sample's activation slot: only nonzero activations are written
  there, and the slot is cleared when the previous sample in it finished.

The delta pass (DP, ``fmac S0[1], S0[1], S1[1]`` in ``b_delta`` and a finalizer's own block
pass) reads column j of the backward slot's snapshot instead of W; the chain pass updates
W itself, in place, as before. With one sample in flight no update comes between a
sample's forward pass and its delta pass, so the snapshot equals W and the result is SGD's,
bit for bit.

Layout: each stored row of W grows by one copy of the row per slot, after the activation
slots: row i = [W (ncols) | a per slot (K) | snapshot 0 (ncols) | ... | snapshot K-1]
(``PeSpec.row_bytes``), so that the copy and the DP column use the same row offsets (WLI
r4) as f_act and b_delta. Per slot k two descriptors: ``d_snapw{k}`` (a row of snapshot k)
and ``d_snapc{k}`` (a column of it). ``d_snapf`` is the forward slot's row descriptor,
rewritten (``stdwds``) when the forward slot advances (fp_end); S1[1] is loaded with the
backward slot's column descriptor when the backward slot advances (bp_end).

With the order log, each activation closeout also logs how many updates (order-log
entries) came before it (``flog``), so that a reference can tell which weights the
unread rows held then.
"""

from __future__ import annotations

from .. import runtime_words as W
from ..registers import FSLOT, ROWB
from .idioms import column
from .spec import PeSpec

__all__ = ["descriptors", "dp_column0", "row_read", "closeout_body", "fp_slot", "bp_slot",
           "bodies", "words", "buffers", "V_FCNT", "FLOG"]

V_FCNT = W.add(W.Word("v_fcnt", "u16", "all", "program", "f_close (CPGD order log)",
                      "entries written to flog (dp_weights='forward')"))
FLOG = W.add(W.Word("flog", "buffer", "all", "program", "tests (CPGD order log)",
                    "v_ocnt at each activation closeout (dp_weights='forward')", elem="u16"))


def _base(s: PeSpec, k: int) -> str:
    return f"w + {(s.ncols + s.slots + k * s.ncols) * s.esize}"


def descriptors(s: PeSpec) -> list[str]:
    """Per slot a row (``d_snapw{k}``) and a column (``d_snapc{k}``) of its snapshot; the
    forward slot's row descriptor ``d_snapf`` (starts as slot 0's); the flog entry."""
    if not s.snapshot:
        return []
    E, nc = s.esize, s.ncols
    L = []
    for k in range(s.slots):
        L.append(f"d_snapw{k}: .dsd mem1d, base={_base(s, k)}, length={nc}, stride={E}, wli=1")
        L.append(column(s, f"d_snapc{k}", _base(s, k), s.row_bytes, True, 3))
    L.append(f"d_snapf: .dsd mem1d, base={_base(s, 0)}, length={nc}, stride={E}, wli=1")
    if s.order_log:
        L.append("d_flogw:  .dsd mem1d, base=flog, length=1, stride=2, wli=1")
    return L


def words(s: PeSpec) -> list[str]:
    return [W.declare(V_FCNT)] if s.snapshot and s.order_log else []


def buffers(s: PeSpec) -> tuple[list[str], list[str]]:
    if not (s.snapshot and s.order_log):
        return [], []
    return [W.declare(FLOG, count=s.order_log)], ["v_fcnt", "flog"]


def dp_column0(s: PeSpec) -> str:
    """The descriptor main loads into S1[1], the delta pass's column of W."""
    return "d_snapc0" if s.snapshot else "d_wcol"


def row_read(s: PeSpec) -> list[str]:
    """In f_act, right after the multiply-add read row i of W (r4 = its offset): the row
    into the sample's snapshot."""
    if not s.snapshot:
        return []
    return ["        lddwds  D[11], d_snapf",
            f"        {s.MV} D[11], S1[0]              ; snapshot: the row this forward pass read [0634]"]


def closeout_body(s: PeSpec, log) -> list[str]:
    """In the activation closeout (cpgd.py's cpfc; FSLOT = the sample's slot): every row
    whose activation slot holds 0 (not read) into the snapshot as stored now; then the
    flog entry (``log``: cpgd._log). Uses r0, r2 (r3), r4, r6."""
    if not s.snapshot:
        return []
    E = s.esize
    L = ["        li r6, w",
         f"        li r0, {s.ncols * E}",
         "        add16 r6, r6, r0",
         f"        add16 r6, r6, {FSLOT}              ; &a[0] of the sample's slot",
         "        movi r4, 0",
         "        lddwds  D[11], d_snapf",
         f"cpsl:   {s.MV} r2, [r6]",
         f"        feq{s.FX} r2, #0",
         "        bf cpsk                        ; read by f_act: already in the snapshot",
         f"        {s.MV} D[11], S1[0]              ; not read: the row as stored now",
         f"cpsk:   add16 r4, r4, {ROWB}",
         f"        add16 r6, r6, {ROWB}",
         f"        li r0, {s.nin * s.row_bytes}",
         "        lt16 r4, r0",
         "        bt cpsl"]
    if s.order_log:
        L += log("v_fcnt", "v_ocnt", "d_flogw", s.order_log, "cpsf0")
    return L


def fp_slot(s: PeSpec) -> list[str]:
    """In fp_end, after the forward slot advanced (v_fpsl): its row descriptor into
    d_snapf."""
    return ["        jmp fsn", "fsnr:"] if s.snapshot and s.slots > 1 else []


def bp_slot(s: PeSpec) -> list[str]:
    """In bp_end, after the backward slot advanced (v_bpsl): its column descriptor into
    S1[1], the delta pass's weights."""
    return ["        jmp bsn", "bsnr:"] if s.snapshot and s.slots > 1 else []


def bodies(s: PeSpec) -> list[str]:
    """The tables fp_slot and bp_slot jump into (two instructions per slot)."""
    if not (s.snapshot and s.slots > 1):
        return []
    L = [";@pass control",
         "fsn:    ld16 r4, v_fpsl",
         "        add16 r4, r4, r4",
         "        li r0, fst",
         "        add16 r4, r4, r0",
         "        jr r4",
         "fsns:   stdwds  D[11], d_snapf         ; the forward slot's snapshot rows",
         "        jmp fsnr",
         "fst:"]
    for k in range(s.slots):
        L += [f"        lddwds  D[11], d_snapw{k}", "        jmp fsns"]
    L += ["bsn:    ld16 r4, v_bpsl",
          "        add16 r4, r4, r4",
          "        li r0, bst",
          "        add16 r4, r4, r0",
          "        jr r4",
          "bst:"]
    for k in range(s.slots):
        L += [f"        lds1wds S1[1], d_snapc{k}    ; DP: the backward slot's snapshot",
              "        jmp bsnr"]
    return L
