"""The softmax head of ``CrossEntropyLoss``: a column of C PEs east of the output layer, head
c at row c of that layer's block, holding its output group O_c (docs/training.md,
"Cross-entropy"). Per sample, head c

1. takes the logits z[O_c] that F_c sends east (nonzero ones as sparse wavelets [0408],
   then a closeout) and passes them on to the host (the model's outputs);
2. in training: reduces the maximum M of all logits over the head column (a chain from
   head 0 down to head C-1, which broadcasts the result back up), forms e = exp(z - M)
   with the math library, reduces the sum S the same way, and computes p = e / S
   (``mathlib.reciprocal``) and L = M + ln S (``mathlib.ln``);
3. reads the sample's targets y[O_c] (one-hot class labels, or probabilities), sends
   delta = p - y west to F_c as its delta sums (the output layer has no activation: its
   delta is the sum it receives), and sends its share of the loss, sum y (L - z), to the
   host; then takes the next sample.

Every step is a CE instruction on the head's memory. The reductions run the same chain
twice per sample; ``v_hph`` says which (0: the maximum, 1: the sum).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...asm import mathlib
from .. import task_ids as T
from .idioms import fab_in, stage_dsds
from .sender import sender_setup, staged_sender

__all__ = ["HeadSpec", "head_source"]

#: Registers the math library may clobber in a head (r7 and r9 are the logit task's; the
#: sender uses r12 and r14).
MATH_GPRS = ("r0", "r1", "r5", "r6", "r8", "r10", "r12", "r13")
MATH_DSRS = (9, 10, 11)


@dataclass(frozen=True)
class HeadSpec:
    """Head c of C: its output group, colors and number format."""

    index: int
    count: int
    o0: int
    nout: int
    dtype: str
    qcap: int
    a_in: int            # the logits from F_c
    out: int             # logits and loss shares to the host
    targets: int         # the targets from the host
    deltas: int          # delta = p - y back to F_c (its J color)
    r_in: int | None     # the partial maximum / sum from the head above
    r_out: int | None    # ... to the head below
    bcast: int | None    # the result, from the last head up the column

    @property
    def esize(self) -> int:
        return 4 if self.dtype == "fp32" else 2

    @property
    def FX(self) -> str:
        return "s" if self.dtype == "fp32" else "h"

    @property
    def MV(self) -> str:
        return "mov32" if self.dtype == "fp32" else "mov16"

    @property
    def last(self) -> bool:
        return self.index == self.count - 1


def _math(h: HeadSpec):
    kw = dict(dsrs=MATH_DSRS, gprs=MATH_GPRS)
    return (mathlib.exp(h.dtype, n=h.nout, src="ht", dst="he", prefix="mexp", **kw),
            mathlib.reciprocal(h.dtype, n=1, src="hs", dst="hinv", prefix="mrec", **kw),
            mathlib.ln(h.dtype, n=1, src="hs", dst="hln", prefix="mln", **kw))


def _data(h: HeadSpec, routines) -> list[str]:
    E, n, TY = h.esize, h.nout, h.dtype
    vec = lambda name, base: f"d_{name}: .dsd mem1d, base={base}, length={n}, stride={E}"  # noqa: E731
    one = lambda name, base: f"d_{name}: .dsd mem1d, base={base}, length=1, stride={E}"  # noqa: E731
    L = [f"; softmax head {h.index} of {h.count}: outputs [{h.o0}, {h.o0 + n}), {TY}",
         ".data",
         f"d_hz1:   .dsd mem1d, base=hz, length=1, stride={E}, wli=1",
         vec("hz", "hz"), vec("ht", "ht"), vec("he", "he"), vec("hp", "hp"), vec("hy", "hy"),
         vec("hd", "hd"), one("hm", "hm"), one("hs", "hs"), one("hL", "hL"), one("hln", "hln"),
         one("hy0", "hy"), one("hloc1", "hloc"),
         f"d_hdo:   .dsd fabric_out, color={h.deltas}, length={n}, sw=1, ue=1, "
         f"utid={T.UT_DTX}, ac={T.B_SENT}",
         f"d_lout:  .dsd fabric_out, color={h.out}, length=1, sw=1, wli=1"]
    if n > 1:
        L += [f"d_hyr:   .dsd mem1d, base=hy + {E}, length={n - 1}, stride={E}",
              fab_in("d_yin", h.targets, n - 1, ue=1, ac=T.DFIN)]
    if h.r_out is not None:
        L.append(f"d_rout:  .dsd fabric_out, color={h.r_out}, length=1, sw=1")
    if h.last and h.count > 1:
        L.append(f"d_bout:  .dsd fabric_out, color={h.bcast}, length=1, sw=1")
    L += stage_dsds(h, "d_txq", T.STAGE_TX, h.out, T.UT_TX, T.TX, (T.F_CLOSE, T.F_CLOSE_END))
    L += ["v_mode:   .u16 0   ; bit 0: training (softmax, delta, loss) after passing the logits on",
          "v_hph:    .u16 0   ; the reduction under way: 0 the maximum, 1 the sum",
          "v_flag:   .u16 0   ; the sample ends a mini-batch (its closeout says so)",
          "v_txp:    .u16 0   ; logit sender: next element, resume point, closeout out",
          "v_txpc:   .u16 0",
          "v_txs:    .u16 0",
          "v_fpc:    .u16 0   ; (the head keeps round-to-nearest: the math library needs it)",
          "v_seed:   .u16 1",
          f"c_o0:     .u16 {h.o0}",
          ".align 4"]
    L += [f"{name}: .space {TY}, {count}" for name, count in
          (("hz", n), ("ht", n), ("he", n), ("hp", n), ("hy", n), ("hd", n), ("hm", 1),
           ("hs", 1), ("hinv", 1), ("hln", 1), ("hL", 1), ("hloc", 1))]
    for r in routines:
        L += r.data
    L.append(".export hz, hp, hy, hd, hm, hs, hL, v_mode, v_fpc, v_seed")
    return L


def _minus_inf_r0(h: HeadSpec) -> list[str]:
    """r0(:r1) = -inf, where a maximum starts."""
    if h.dtype == "fp32":
        return ["        movi r0, 0", "        li r1, 0xFF80"]
    return ["        li r0, 0xFC00"]


def _reduce(h: HeadSpec) -> list[str]:
    """The local value in r0(:r1) joins the column's reduction of the phase in v_hph; the
    result reaches ``got`` in r2(:r3) (through h_part at the last head, h_bcast at the
    others)."""
    MV = h.MV
    if h.count == 1:
        return ["reduce: " + f"{MV} r2, r0", "        jmp got"]
    if h.index == 0:
        return ["reduce: lddwds  D[9], d_rout",
                f"        {MV} D[9], r0                   ; my value to the head below",
                "        term                           ; (the result comes back: h_bcast)"]
    return ["reduce: lddwds  D[9], d_hloc1",
            f"        {MV} D[9], r0",
            f"        unblock {h.r_in}                   ; now take the partial from above",
            "        term"]


def _part_task(h: HeadSpec) -> list[str]:
    """h_part: the partial value from the head above (r2), combined with this head's."""
    FX, MV = h.FX, h.MV
    L = [f"h_part: block {h.r_in}",
         "        li r6, hloc",
         "        ld16 r5, v_hph",
         "        eq16 r5, #0",
         "        bf hpa",
         f"        fmax{FX} r2, r2, [r6]             ; the maximum so far",
         "        jmp hp1",
         f"hpa:    fadd{FX} r2, r2, [r6]             ; the sum so far",
         "hp1:"]
    if h.last:
        return L + ["        lddwds  D[9], d_bout",
                    f"        {MV} D[9], r2                   ; the result up the column",
                    "        jmp got"]
    return L + ["        lddwds  D[9], d_rout",
                f"        {MV} D[9], r2                   ; on to the head below",
                "        term"]


def head_source(h: HeadSpec) -> str:
    """Assembly text of softmax head ``h``."""
    E, FX, MV = h.esize, h.FX, h.MV
    exp_, rec, lnr = _math(h)
    L = _data(h, (exp_, rec, lnr))
    L += [".code",
          f".task main, {T.MAIN}", f".task h_act, {h.a_in}", f".task h_close, {T.F_CLOSE}",
          f".task h_close_end, {T.F_CLOSE_END}", f".task tx, {T.TX}", f".task config, {T.CONFIG}",
          f".task setup, {T.SETUP}", f".task apply, {T.APPLY}", f".task idle, {T.IDLE}",
          f".task y_first, {h.targets}", f".task y_done, {T.DFIN}", f".task d_sent, {T.B_SENT}"]
    if h.nout > 1:
        L.append(f".task y_read, {T.JREAD}")
    if h.r_in is not None:
        L.append(f".task h_part, {h.r_in}")
    if h.count > 1 and not h.last:
        L.append(f".task h_bcast, {h.bcast}")
    L += ["_pass_a_control:",
          "main:   ld16 r9, c_o0",
          f"        movi r7, {E}",
          "        lddwds  D[0], d_hz1",
          f"        block {h.targets}                    ; targets wait until the softmax needs them",
          f"        block {T.STAGE_TX}                    ; the staging queue starts no task"]
    if h.r_in is not None:
        L.append(f"        block {h.r_in}")
    L += ["        term",
          "config: term                           ; FP control stays round-to-nearest",
          "setup:  term",
          "apply:  term",
          "idle:   term",
          "_pass_b_forward:",
          "h_act:  sub16 r4, r4, r9               ; z_j in r2, j in r4 [0346]",
          "        mul16 r4, r4, r7",
          f"        {MV}.t D[0], r2                   ; hz[j] = z_j",
          "h_close_end:",
          "        movi r5, 1",
          "        jmp hc",
          "h_close:",
          "        movi r5, 0",
          "hc:     st16 r5, v_flag",
          f"        block {h.a_in}                    ; one sample at a time",
          "        li r6, hz"]
    L += sender_setup("tx")
    L += staged_sender("tx", h, stage=T.STAGE_TX, q_dsd="d_txq", flag_var="v_flag",
                       last_round=["        term"],
                       done=["        ld16 r5, v_mode",
                             "        eq16 r5, #0",
                             "        bf sm0",
                             "        jmp hend                       ; inference: the next sample"])
    # --- the maximum -------------------------------------------------------------------------
    L += ["_pass_c_delta:",
          "sm0:    movi r5, 0",
          "        st16 r5, v_hph",
          *_minus_inf_r0(h),
          "        lds1wds S1[9], d_hz",
          f"        fmax{FX} r0, r0, S1[9]            ; this head's maximum"]
    L += _reduce(h)
    if h.r_in is not None:
        L += _part_task(h)
    if h.count > 1 and not h.last:
        L += ["h_bcast: jmp got"]
    # --- a reduction's result arrived (r2) ---------------------------------------------------
    L += ["got:    ld16 r5, v_hph",
          "        eq16 r5, #0",
          "        bt gm",
          "        jmp gs",
          "gm:     lddwds  D[10], d_hm",
          f"        {MV} D[10], r2                   ; M, the maximum of every logit",
          "        lddwds  D[10], d_ht",
          "        lds0wds S0[10], d_hz",
          f"        fsub{FX} D[10], S0[10], r2        ; z - M"]
    L += exp_.code
    L += [f"        {MV} r0, #0",
          "        lds1wds S1[9], d_he",
          f"        fadd{FX} r0, r0, S1[9]            ; this head's sum of exp(z - M)",
          "        movi r5, 1",
          "        st16 r5, v_hph",
          "        jmp reduce",
          "gs:     lddwds  D[10], d_hs",
          f"        {MV} D[10], r2                   ; S, the sum over every head"]
    L += rec.code
    L += ["        lddwds  D[10], d_hp",
          "        lds0wds S0[10], d_he",
          "        li r6, hinv",
          f"        fmul{FX} D[10], S0[10], [r6]      ; p = exp(z - M) / S"]
    L += lnr.code
    L += ["        lddwds  D[10], d_hL",
          "        lds0wds S0[10], d_hm",
          "        lds1wds S1[10], d_hln",
          f"        fadd{FX} D[10], S0[10], S1[10]    ; L = M + ln S",
          f"        unblock {h.targets}                  ; the targets may come in",
          "        term"]
    # --- targets, delta, loss ---------------------------------------------------------------
    L += [f"y_first: block {h.targets}",
          "        lddwds  D[3], d_hy0",
          f"        {MV} D[3], r2                   ; the first target started this task"]
    if h.nout > 1:
        L += [f"        activate.t {T.JREAD}",
              "y_read: lddwds  D[3], d_hyr",
              "        lds1wds S1[8], d_yin",
              f"        {MV}.t D[3], S1[8]              ; the rest, asynchronously"]
    L += ["y_done: lddwds  D[10], d_hd",
          "        lds0wds S0[10], d_hp",
          "        lds1wds S1[10], d_hy",
          f"        fsub{FX} D[10], S0[10], S1[10]    ; delta = p - y",
          "        lddwds  D[11], d_hdo",
          "        lds1wds S1[11], d_hd",
          f"        {MV} D[11], S1[11]              ; to F_c, as its delta sums (d_sent when out)",
          "        lddwds  D[10], d_ht",
          "        lds0wds S0[10], d_hz",
          "        li r6, hL",
          f"        fsub{FX} D[10], S0[10], [r6]      ; z - L",
          "        lddwds  D[10], d_ht",
          "        lds0wds S0[10], d_ht",
          "        lds1wds S1[10], d_hy",
          f"        fmul{FX} D[10], S0[10], S1[10]    ; y (z - L)",
          f"        {MV} r0, #0",
          "        lds1wds S1[10], d_ht",
          f"        fadd{FX} r0, r0, S1[10]",
          f"        fneg{FX} r0, r0                   ; this head's share: sum y (L - z)",
          f"        li r4, {T.LOSS_INDEX}",
          "        lddwds  D[10], d_lout",
          f"        {MV} D[10], r0                  ; to the host",
          "        term",
          "d_sent: jmp hend",
          "_pass_d_control:",
          "hend:   lddwds  D[10], d_hz",
          f"        {MV} D[10], #0                   ; zeros are not sent: clear the logits",
          f"        unblock {h.a_in}                    ; the next sample",
          "        term"]
    return "\n".join(L) + "\n"
