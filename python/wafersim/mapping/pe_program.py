"""The program of one PE of a mapped layer: assembly text for the CE ISA (docs/isa.md),
generated from a :class:`PeSpec`. docs/training.md describes the dataflow; this module is
its code.

Every PE of layer l's block, PE (r, c), is a *worker*: it holds W[O_c, I_r] (stored
transposed, one row of ``nout`` weights per input, followed by ``slots`` activation
columns) and runs

* ``f_act`` (FP, one task per nonzero activation of its row [0408]): stores a_i in the
  sample's activation slot and adds a_i * W[O_c, i] to its forward partial sums;
* ``f_close`` (the activation closeout [0411]): starts the partial-sum chain toward the
  column's finalizer, an asynchronous operation that adds the sums arriving from one
  neighbour to its own and passes them on [0412];
* ``b_delta`` (DP + CP, one task per nonzero delta of its column [0409]): dpsum[I_r] +=
  delta_j * W[j, I_r] (the delta pass, with the weights before this sample's update), then
  the chain pass for column j: W[j, I_r] -= lr * delta_j * a[I_r] (SGD) or G[j, I_r] +=
  delta_j * a[I_r] (accumulate);
* ``b_close`` (the delta closeout [0420]): starts the delta partial-sum chain west along
  its row.

PE (c, c) is also the *finalizer* F_c of column c: it collects the column's partial sums,
adds the bias, applies the activation [0493], keeps the result for the derivative of the
backward pass, and sends the nonzero activations as sparse wavelets (value, neuron index)
to the next layer's row c, then a closeout [0413]. In the backward pass it receives the
delta partial sums of the next layer's row c (or, in the last layer, the targets), forms
delta = sum * f'(a) (or the delta rule [0645]) and sends the nonzero deltas down its
column.

Two-branch blocks (docs/training.md, "Two-branch blocks") reuse these parts: branch f's
last finalizers send their output densely to the join's FIFO (no sparse send) and receive
dL/dy from the join in place of the next layer's delta sums; the west end of branch g's
first layer sends its delta sums to the east end of f's first layer, which starts its
row's chain with them.

Residual blocks (docs/training.md, "Residual blocks"): the finalizer F_c of the layer
before a block also sends its activations, densely, on the skip color to F_c of the
block's last layer (the *join*), after the sparse sends; the join keeps arriving skip
vectors in a FIFO of ``skip_depth`` slots, adds the oldest to its activations (y = f(x) +
x) and sends y on. Backward, the join sends dL/dy back on a second color to the east end
of the block's first layer's row c, where it starts that row's delta partial-sum chain.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import task_ids as T

__all__ = ["PeSpec", "pe_source", "PASSES"]


@dataclass(frozen=True)
class PeSpec:
    """Everything that makes one PE's program."""

    layer: int
    last: bool              # the output layer
    row: int                # in the block
    col: int
    rows: int
    cols: int
    i0: int                 # first input of I_r
    nin: int
    o0: int                 # first output of O_c
    nout: int
    activation: str
    bias: bool
    dtype: str              # "fp32" or "fp16"
    slots: int              # samples in flight this PE can hold
    n_out_layer: int        # outputs of the whole layer (the loss divides by it)
    qcap: int               # input queue capacity of a CE: the size of a send round
    # colors
    a_in: int               # activations into this row (a task color)
    d_col: int              # deltas down this column (a task color)
    p_out: int | None       # forward partial sums toward the finalizer (None at F)
    p_in: int | None        # forward partial sums from the far neighbour (None at a chain start)
    h_out: int | None       # delta partial sums west (None in layer 0)
    h_in: int | None        # delta partial sums from the east (None at the east end)
    a_out: int | None = None    # F: activations out (None: branch f's last layer, whose
                                # output goes dense to the join on skip_out instead)
    j_in: int | None = None     # F: delta partial sums of the next layer (or targets)
    d_send: bool = False        # F: the column has other PEs to send deltas to
    p_low: int | None = None    # F: partial sums from the rows below (None in row 0)
    p_high: int | None = None   # F: partial sums from the rows above (None in the top row)
    skip_out: int | None = None     # F before a residual block (or ending branch f of a
                                    # two-branch block): its activations to the join
    skip_in: int | None = None      # F of a join: x (residual) or f(x) (two-branch) arrives
    skip_depth: int = 0             # F of a join: skip vectors its FIFO holds
    skip_back: int | None = None    # F of a join: dL/dy back to the block's first layer
                                    # (two-branch: to branch f's last finalizers)
    skip_grad_in: int | None = None  # east end of a residual's first layer: dL/dy arrives
                                     # (two-branch: branch g's dL/dx)

    @property
    def join(self) -> bool:
        return self.skip_in is not None

    @property
    def final(self) -> bool:
        return self.row == self.col

    @property
    def has_dp(self) -> bool:
        return self.layer > 0

    @property
    def esize(self) -> int:
        return 4 if self.dtype == "fp32" else 2

    @property
    def row_bytes(self) -> int:
        return (self.nout + self.slots) * self.esize


def _chain_hop(FX: str, MV: str, sums: str, out: str, inp: str | None, *, reg: int,
               sums_reg: int, sent: str) -> list[str]:
    """One hop of a partial-sum chain [0411], [0412]: an asynchronous operation sends this
    PE's sums (at the chain's start) or adds them to those arriving from the neighbour and
    passes the result on; its completion starts task ``sent``, which clears the sums."""
    L = [f"        lds1wds S1[{sums_reg}], {sums}", f"        lddwds  D[{reg}], {out}"]
    if inp is None:
        L.append(f"        {MV}.t D[{reg}], S1[{sums_reg}]              ; chain start: send my sums")
    else:
        L += [f"        lds0wds S0[{reg}], {inp}",
              f"        fadd{FX}.t D[{reg}], S0[{reg}], S1[{sums_reg}]     ; add mine and pass them on"]
    L += [f"{sent}: lddwds  D[{reg}], {sums}",
          f"        {MV} D[{reg}], #0                    ; clear the sums"]
    return L


def _bump(var: str, by: int) -> list[str]:
    """var += by, a 16-bit counter in memory (through r5)."""
    return [f"        ld16 r5, {var}", f"        addi r5, {by}", f"        st16 r5, {var}"]


def _fp_one(dtype: str) -> list[str]:
    """r2(:r3) = 1.0 (a type-3 operand 0 pairs r2 with D[2] [0585])."""
    if dtype == "fp32":
        return ["        movi r2, 0", "        li r3, 0x3F80"]
    return ["        li r2, 0x3C00"]


def pe_source(s: PeSpec) -> str:
    """Assembly text of the PE described by ``s``."""
    E = s.esize
    FX = "s" if s.dtype == "fp32" else "h"
    MV = "mov32" if s.dtype == "fp32" else "mov16"
    TY = s.dtype
    K = s.slots
    nin, nout = s.nin, s.nout
    rowb = s.row_bytes
    F = s.final
    L: list[str] = []
    add = L.append

    def fab_in(name, color, length, *, ue=0, ac=0, sc=True, utid=0):
        if sc:
            return (f"{name}: .dsd fabric_in, length={length}, sw=1, sc=1, ch={color >> 3}, "
                    f"utid={color & 7}, ue={ue}, ac={ac}")
        return f"{name}: .dsd fabric_in, length={length}, sw=1, utid={utid}, ue={ue}, ac={ac}"

    def stage_dsds(q, stage, color, utid, ac, closes):
        # the staging queue; the forwarder's input (sparse, ends at a control wavelet:
        # Term activates ac) and output; the two closeouts (fixed indices)
        return "\n".join([
            f"{q}s: .dsd fabric_out, color={stage}, length=1, sw=1, wli=1",
            f"{q}:  .dsd fabric_in, length={s.qcap}, sw=1, sc=1, ch={stage >> 3}, utid={stage & 7}, "
            f"us=1, term=1, ue=1, ac={ac}",
            f"{q}o: .dsd fabric_out, color={color}, length={s.qcap}, sw=1, wli=1, utid={utid}",
            f"{q}c: .dsd fabric_out, color={color}, length=1, sw=1, c=1, index={closes[0]}, ue=1, "
            f"utid={utid}, ac={ac}",
            f"{q}e: .dsd fabric_out, color={color}, length=1, sw=1, c=1, index={closes[1]}, ue=1, "
            f"utid={utid}, ac={ac}"])

    # ------------------------------------------------------------------ data
    add(f"; layer {s.layer} PE ({s.row}, {s.col}) of {s.rows} x {s.cols}: inputs "
        f"[{s.i0}, {s.i0 + nin}), outputs [{s.o0}, {s.o0 + nout}), {TY}, {K} slot(s)"
        + ("; finalizer of its column" if F else ""))
    add(".data")
    add(f"d_wrow:   .dsd mem1d, base=w, length={nout}, stride={E}, wli=1")
    # Column views of W (and of the activation slots beside it) step by a whole row; a 1D
    # descriptor's stride has 9 signed bits [0523], so wider rows use a 4D descriptor
    # with one dimension and the XDSD's 15-bit stride [0550].
    def column(name, base, stride, wli, xdsr):
        w_ = ", wli=1" if wli else ""
        if stride <= 255:
            return f"{name}: .dsd mem1d, base={base}, length={nin}, stride={stride}{w_}"
        return f"{name}: .dsd mem4d, base={base}, dims=({nin},), xdsr={xdsr}{w_}"

    add(f"d_fpsum:  .dsd mem1d, base=fpsum, length={nout}, stride={E}")
    add(f"d_actst:  .dsd mem1d, base=w + {nout * E}, length=1, stride={E}, wli=1")
    add(column("d_wcol", "w", rowb, True, 3))
    add(column("d_actz", f"w + {nout * E}", rowb, True, 3))
    for k in range(K):
        add(column(f"d_actc{k}", f"w + {(nout + k) * E}", rowb, False, 3))
    add(column("d_gcol", "g", nout * E, True, 4))
    add(f"x_col:    .xdsd mem4d, dims=({nin},), strides=({rowb},)")
    add(f"x_gcol:   .xdsd mem4d, dims=({nin},), strides=({nout * E},)")
    add(f"d_gall:   .dsd mem1d, base=g, length={nin * nout}, stride={E}")
    add(f"x_wall:   .xdsd mem4d, dims=({nout}, {nin}), strides=(unit, {rowb})")
    add(f"d_wall:   .dsd mem4d, base=w, dims=({nout}, {nin}), xdsr=2")
    if not F:
        add(f"d_pout:   .dsd fabric_out, color={s.p_out}, length={nout}, sw=1, ue=1, "
            f"utid={T.UT_PCHAIN}, ac={T.F_SENT}")
        if s.p_in is not None:
            add(fab_in("d_pin", s.p_in, nout))
    if s.has_dp:
        add(f"d_dpsum:  .dsd mem1d, base=dpsum, length={nin}, stride={E}")
        add(f"d_hout:   .dsd fabric_out, color={s.h_out}, length={nin}, sw=1, ue=1, "
            f"utid={T.UT_HCHAIN}, ac={T.H_SENT}")
        if s.h_in is not None:
            add(fab_in("d_hin", s.h_in, nin))
    if F:
        add(f"d_z:      .dsd mem1d, base=z, length={nout}, stride={E}")
        if s.row > 0:
            add(fab_in("d_plow", s.p_low, nout, ue=1, ac=T.FIN2))
        if s.row < s.rows - 1:
            add(fab_in("d_phigh", s.p_high, nout, ue=1, ac=T.FIN3))
        if s.bias:
            add(f"d_bias:   .dsd mem1d, base=bias, length={nout}, stride={E}")
            add(f"d_gb:     .dsd mem1d, base=gb, length={nout}, stride={E}")
        add(f"d_aw:     .dsd mem1d, base=aslots, length={nout}, stride={E}, wli=1")
        add("d_flagw:  .dsd mem1d, base=v_flags, length=1, stride=2, wli=1")
        # staged sparse sends (see _staged_sender): a local queue, and one forwarding
        # operation per round from it to the fabric (lengths patched per round)
        if s.a_out is not None:
            add(stage_dsds("d_txq", T.STAGE_TX, s.a_out, T.UT_TX, T.TX, (T.F_CLOSE, T.F_CLOSE_END)))
        add(f"d_tot0:   .dsd mem1d, base=tot, length=1, stride={E}")
        add(f"d_totr:   .dsd mem1d, base=tot + {E}, length={nout - 1}, stride={E}")
        add(fab_in("d_jin", s.j_in, nout - 1, ue=1, ac=T.DFIN))
        add(f"d_tot:    .dsd mem1d, base=tot, length={nout}, stride={E}")
        add(f"d_fpr:    .dsd mem1d, base=fpr, length={nout}, stride={E}")
        add(f"d_delta:  .dsd mem1d, base=delta, length={nout}, stride={E}")
        if s.d_send:
            add(stage_dsds("d_dxq", T.STAGE_DTX, s.d_col, T.UT_DTX, T.DTX, (T.B_CLOSE, T.B_CLOSE_END)))
        if s.last:
            add(f"d_lout:   .dsd fabric_out, color={s.a_out}, length=1, sw=1, wli=1")
        if s.skip_out is not None:
            add(f"d_sko:    .dsd fabric_out, color={s.skip_out}, length={nout}, sw=1, ue=1, "
                f"utid={T.UT_TX}, ac={T.SK_SENT}")
        if s.join:
            add(f"d_skf:    .dsd mem1d, base=skf, length={nout}, stride={E}, wli=1")
            add(f"d_skf0:   .dsd mem1d, base=skf, length=1, stride={E}, wli=1")
            if nout > 1:
                add(f"d_skfr:   .dsd mem1d, base=skf + {E}, length={nout - 1}, stride={E}, wli=1")
                add(fab_in("d_sin", s.skip_in, nout - 1, ue=1, ac=T.SK_IN))
            add(f"d_y:      .dsd mem1d, base=ybuf, length={nout}, stride={E}")
            add(f"d_bo:     .dsd fabric_out, color={s.skip_back}, length={nout}, sw=1, ue=1, "
                f"utid={T.UT_DTX}, ac={T.B_SENT}")
    if s.skip_grad_in is not None:
        add(fab_in("d_bin", s.skip_grad_in, nin))
    # variables: the first 512 bytes, where ld16 / st16 reach [0603]
    add("v_mode:   .u16 0          ; bit 0: keep activations for a backward pass")
    add("v_cpm:    .u16 0          ; chain pass: 0 = update W in place (SGD), 1 = accumulate G")
    add("v_k:      .u16 1          ; samples in flight allowed now (<= slots)")
    add("v_infl:   .u16 0          ; samples forwarded whose backward pass has not ended")
    add("v_fpbusy: .u16 0          ; between the activation closeout and the chain's end")
    add("v_bfull:  .u16 0          ; the mini-batch is complete: wait for its update")
    add("v_flag:   .u16 0          ; the sample being forwarded ends a mini-batch")
    add("v_bflag:  .u16 0          ; the sample being back-propagated ends a mini-batch")
    add("v_gcnt:   .u16 0          ; samples accumulated into G since the last update")
    add("v_fpsl:   .u16 0          ; forward slot index")
    add("v_bpsl:   .u16 0          ; backward slot index")
    add("v_n1:     .u16 1          ; update scale 1 applies to batches of v_n1 samples")
    add("v_fpc:    .u16 0          ; FP control register value, the config task loads it ...")
    add("v_seed:   .u16 1          ; seed of the random-number resource (config task)")
    add(f"c_i0:     .u16 {s.i0}")
    add(f"c_rowb:   .u16 {rowb}")
    add(f"c_o0:     .u16 {s.o0}")
    add(f"c_oend:   .u16 {s.o0 + nout}")
    if F:
        add("v_flags:  .space u16, " + str(K) + "  ; per slot: the sample ends a mini-batch")
        add("v_jcnt:   .u16 0          ; forward passes done whose backward pass has not started")
        add("v_txp:    .u16 0          ; activation sender: next element, resume point, closeout out")
        add("v_txpc:   .u16 0")
        add("v_txs:    .u16 0")
        add("v_dxp:    .u16 0          ; delta sender: the same")
        add("v_dxpc:   .u16 0")
        add("v_dxs:    .u16 0")
        add("v_dflag:  .u16 0          ; the back-propagated sample ends a mini-batch")
        add("v_dpbusy: .u16 0          ; a backward pass is in progress here")
    if s.join:
        add("v_skn:    .u16 0          ; skip vectors in the FIFO")
        add("v_skw:    .u16 0          ; the activations wait for a skip vector")
        add("v_skidle: .u16 0          ; the FIFO is full: the skip color is blocked")
        add("v_skrd:   .u16 0          ; byte offsets of the FIFO slots to read and to write")
        add("v_skwr:   .u16 0")
        add("v_bbusy:  .u16 0          ; dL/dy is being sent back")
    add(".align 4")
    add(f"c_neglr:  .space {TY}, 1     ; -learning rate")
    add(f"c_s1:     .space {TY}, 1     ; update scale for batches of v_n1 samples")
    add(f"c_s2:     .space {TY}, 1     ; update scale for other batch sizes")
    if F and s.last:
        add(f"c_invn:   .space {TY}, 1     ; 1 / outputs (the loss)")
        add(f"c_twon:   .space {TY}, 1     ; 2 / outputs (the delta rule of MSE)")
    add(f"w:        .space {TY}, {nin * (nout + K)}")
    add(f"g:        .space {TY}, {nin * nout}")
    add(f"fpsum:    .space {TY}, {nout}")
    if s.has_dp:
        add(f"dpsum:    .space {TY}, {nin}")
    if F:
        add(f"z:        .space {TY}, {nout}")
        if s.bias:
            add(f"bias:     .space {TY}, {nout}")
            add(f"gb:       .space {TY}, {nout}")
        add(f"aslots:   .space {TY}, {K * nout}")
        add(f"tot:      .space {TY}, {nout}")
        add(f"fpr:      .space {TY}, {nout}")
        add(f"delta:    .space {TY}, {nout}")
        if s.join:
            add(f"skf:      .space {TY}, {s.skip_depth * nout}")
            add(f"ybuf:     .space {TY}, {nout}")
    exports = ["w", "g", "fpsum", "v_mode", "v_cpm", "v_k", "v_infl", "v_gcnt", "v_n1", "v_fpc",
               "v_seed",
               "c_neglr", "c_s1", "c_s2"]
    if s.has_dp:
        exports.append("dpsum")
    if F:
        exports += ["aslots", "tot", "delta", "z"]
        if s.bias:
            exports += ["bias", "gb"]
        if s.last:
            exports += ["c_invn", "c_twon"]
        if s.join:
            exports += ["skf", "ybuf"]
    add(".export " + ", ".join(exports))

    # ------------------------------------------------------------------ code
    add(".code")
    add(f".task main, {T.MAIN}")
    add(f".task f_act, {s.a_in}")
    add(f".task f_close, {T.F_CLOSE}")
    add(f".task f_close_end, {T.F_CLOSE_END}")
    add(f".task b_delta, {s.d_col}")
    add(f".task b_close, {T.B_CLOSE}")
    add(f".task b_close_end, {T.B_CLOSE_END}")
    add(f".task apply, {T.APPLY}")
    add(f".task config, {T.CONFIG}")
    add(f".task setup, {T.SETUP}")
    add(f".task idle, {T.IDLE}")
    if not F:
        add(f".task f_sent, {T.F_SENT}")
    if s.has_dp:
        add(f".task h_sent, {T.H_SENT}")
    if F:
        if s.row > 0:
            add(f".task fin2, {T.FIN2}")
        if s.row < s.rows - 1:
            add(f".task fin3, {T.FIN3}")
        if s.a_out is not None:
            add(f".task tx, {T.TX}")
        if s.d_send:
            add(f".task dx, {T.DTX}")
        add(f".task j_first, {s.j_in}")
        add(f".task j_read, {T.JREAD}")
        add(f".task dfin, {T.DFIN}")
        if s.skip_out is not None:
            add(f".task sk_sent, {T.SK_SENT}")
        if s.join:
            add(f".task sk_first, {s.skip_in}")
            add(f".task sk_read, {T.SK_READ}")
            add(f".task sk_in, {T.SK_IN}")
            add(f".task b_sent, {T.B_SENT}")

    # --- main: constants into registers, the hot descriptors into DSRs ---------------
    add(";@pass control")
    add("main:   ld16 r7, c_i0")
    add("        ld16 r8, c_rowb")
    add("        ld16 r9, c_o0")
    add("        li r10, cps")
    add("        movi r11, 0")
    add(f"        movi r14, {E}")
    add("        lds0wds S0[0], d_fpsum")
    add("        lds1wds S1[0], d_wrow")
    add("        lddwds  D[0], d_actst")
    add("        ldxds   X[3], x_col")
    add("        ldxds   X[4], x_gcol")
    add("        lds1wds S1[1], d_wcol")
    add("        lds0wds S0[2], d_wcol")
    add("        lds1wds S1[2], d_actc0")
    add("        lds0wds S0[3], d_gcol")
    if s.has_dp:
        add("        lds0wds S0[1], d_dpsum")
    # colors read only by asynchronous operations never start tasks
    if F:
        add(f"        block {s.j_in}                    ; until a forward pass is done here")
        add(f"        block {T.STAGE_TX}                    ; staging queues start no task")
        add(f"        block {T.STAGE_DTX}")
    for c in sorted({x for x in (s.p_in, s.h_in, s.skip_grad_in) if x is not None}
                    | ({s.p_low} if F and s.row > 0 else set())
                    | ({s.p_high} if F and s.row < s.rows - 1 else set())):
        add(f"        block {c}")
    add(f"        activate {T.SETUP}")
    add("config: ld16 r0, v_fpc")
    add("        setfpc r0                      ; rounding of every FP result [0680]")
    add("        ld16 r0, v_seed")
    add("        seedrng r0                     ; this PE's random numbers [0668]")
    add("        term")
    add("setup:  ld16 r5, v_cpm                 ; the chain-pass variant (b_delta: jr r10)")
    add("        li r10, cps")
    add("        eq16 r5, #0")
    add("        bt cfv")
    add("        li r10, cpa")
    add("cfv:    li r6, c_neglr")
    add(f"        {MV} r12, [r6]                  ; -lr (b_delta)")
    add("        term")

    # --- FP: f_act ---------------------------------------------------------------------
    add(";@pass forward")
    add("f_act:  sub16 r4, r4, r7               ; a_i in r2, i in r4 [0346]: local input")
    add("        mul16 r4, r4, r8               ; its row of W")
    add(f"        fmac{FX} S0[0], S0[0], S1[0]      ; fpsum += W[O_c, i] * a_i [0402], [0408]")
    if K > 1:
        add("        add16 r4, r4, r11              ; the sample's activation slot")
    add(f"        {MV}.t D[0], r2                   ; keep a_i for the chain pass [0409]")

    # --- FP: f_close -> partial-sum chain ------------------------------------------------
    add("f_close_end:")
    add("        movi r5, 1")
    add("        jmp fc")
    add("f_close:")
    add("        movi r5, 0")
    add("fc:     st16 r5, v_flag")
    add("        movi r5, 1")
    add("        st16 r5, v_fpbusy")
    add(f"        block {s.a_in}                    ; this sample's sums are not sent yet")
    if not F:
        L.extend(_chain_hop(FX, MV, "d_fpsum", "d_pout", "d_pin" if s.p_in is not None else None,
                            reg=4, sums_reg=3, sent="f_sent"))
        add("        li r1, fp_end")
        add("        jmp fp_count")
    else:
        add("        lds1wds S1[3], d_fpsum")
        if s.bias:
            add("        lds0wds S0[11], d_fpsum")
            add("        lds1wds S1[11], d_bias")
            add(f"        fadd{FX} S0[11], S0[11], S1[11]   ; my sums + b, while the chain runs")
        add("        lddwds  D[4], d_z")
        if s.row > 0:
            add("        lds0wds S0[4], d_plow")
            add(f"        fadd{FX}.t D[4], S0[4], S1[3]     ; z = (sums from below) + mine")
        else:
            add(f"        {MV} D[4], S1[3]                 ; z = mine")
            if s.row < s.rows - 1:
                add("        jmp fin2")
            else:
                add("        jmp fin3")
        if s.row > 0:
            add("fin2:")
        if s.row < s.rows - 1:
            if s.row == 0:
                add("fin2:")
            add("        lddwds  D[5], d_z")
            add("        lds0wds S0[5], d_phigh")
            add("        lds1wds S1[5], d_z")
            add(f"        fadd{FX}.t D[5], S0[5], S1[5]     ; z += (sums from above)")
        add("fin3:")
        L.extend(_finalize_forward(s, FX, MV))
    # --- FP end: slot and mini-batch bookkeeping, admission of the next sample ---------
    add(";@pass control")
    L.extend(_fp_count(s))
    L.extend(_fp_end(s, E, MV))

    # --- DP + CP: b_delta -----------------------------------------------------------------
    add(";@pass delta")
    add("b_delta:                                ; delta_j in r2, j in r4")
    L.extend(_delta_body(s, FX))

    # --- b_close -> delta partial-sum chain --------------------------------------------
    add(";@pass delta")
    add("b_close_end:")
    add("        movi r5, 1")
    add("        jmp bc")
    add("b_close:")
    add("        movi r5, 0")
    add("bc:     st16 r5, v_bflag")
    if s.has_dp:
        add(f"        block {s.d_col}                   ; this sample's delta sums are not sent yet")
        # the east end of a residual's first layer starts its row's chain with dL/dy
        h_first = "d_hin" if s.h_in is not None else ("d_bin" if s.skip_grad_in is not None else None)
        L.extend(_chain_hop(FX, MV, "d_dpsum", "d_hout", h_first, reg=6, sums_reg=4, sent="h_sent"))
        add(f"        unblock {s.d_col}")
    if F:
        L.extend(_finalize_later(s, FX, MV))
    add(";@pass control")
    L.extend(_bp_end(s, E, MV, FX))

    # --- apply: W += scale * G (the mean over the mini-batch), G = 0 -------------------
    add(";@pass chain")
    add("apply:  li r1, idle")
    add("ap:     ld16 r5, v_gcnt")
    add("        ld16 r0, v_n1")
    add("        li r6, c_s1")
    add("        eq16 r5, r0")
    add("        bt ap1")
    add("        li r6, c_s2")
    add(f"ap1:    {MV} r2, [r6]")
    add("        lds0wds S0[10], d_wall")
    add("        ldxds   X[2], x_wall")
    add("        lds1wds S1[10], d_gall")
    add(f"        fmac{FX} S0[10], S0[10], S1[10]   ; W += G * scale [0618], [0623]")
    add("        lddwds  D[10], d_gall")
    add(f"        {MV} D[10], #0")
    if F and s.bias:
        add("        lds0wds S0[10], d_bias")
        add("        lds1wds S1[10], d_gb")
        add(f"        fmac{FX} S0[10], S0[10], S1[10]")
        add("        lddwds  D[10], d_gb")
        add(f"        {MV} D[10], #0")
    add("        movi r5, 0")
    add("        st16 r5, v_gcnt")
    add("        jr r1")
    add(";@pass control")
    add("idle:   term")

    if F:
        L.extend(_finalize_backward(s, FX, MV, E))
    return _pass_labels(L)


PASSES = ("forward", "delta", "chain", "control")


def _pass_labels(lines: list[str]) -> str:
    """Turns ";@pass NAME" markers into labels ``_pass_<k>_<NAME>`` (they occupy no code):
    the instructions after one, up to the next, belong to that pass (Plan.pass_of_pc)."""
    out = []
    for k, line in enumerate(lines):
        if line.startswith(";@pass "):
            name = line.split()[1]
            assert name in PASSES, name
            out.append(f"_pass_{k}_{name}:")
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def _act(s: PeSpec, FX: str, MV: str, dst: str, src: str) -> list[str]:
    a = s.activation
    if a == "relu":
        return [f"        relu{FX} {dst}, {src}"]
    if a == "sigmoid":
        return [f"        sigmoid{FX} {dst}, {src}"]
    if a == "tanh":
        return [f"        tanh{FX} {dst}, {src}"]
    return [f"        {MV} {dst}, {src}"]


def _finalize_forward(s: PeSpec, FX: str, MV: str) -> list[str]:
    """fin3: every partial sum is in z. Bias, activation into the sample's slot, then the
    nonzero activations and a closeout to the next layer (f_txact:tx [0413])."""
    E = s.esize
    L = []
    add = L.append
    # The activations are kept once computed: count the sample, and let its backward pass
    # start (fp_count). In the output layer that happens as soon as the last activation is
    # staged (the targets may be waiting already); elsewhere after the closeout has gone,
    # which the next layer waits for.
    clear = ["        lddwds  D[11], d_fpsum",
             f"        {MV} D[11], #0                   ; clear the partial sums"]
    finished = clear + ["        li r1, fp_end", "        jmp fp_count"]
    if s.last:
        last_round = clear + ["        li r1, idle", "        jmp fp_count"]
        done = ["        jmp fp_end"]
    elif s.skip_out is not None:
        # before a residual block: the skip goes after the sparse sends; the sample is
        # done here when the skip is out (which waits while the join's FIFO is full)
        last_round = ["        term"]
        done = _skip_send(s, MV)
    else:
        last_round = ["        term"]
        done = finished
    add("        ld16 r4, v_fpsl")
    add(f"        li r5, {s.nout * E}")
    add("        mul16 r4, r4, r5               ; the sample's slot of aslots")
    add("        mov16 r12, r4")
    add("        lddwds  D[11], d_aw")
    add("        lds1wds S1[11], d_z")
    L.extend(_act(s, FX, MV, "D[11]", "S1[11]"))
    if s.a_out is None:
        # branch f's last layer: the sample's output, dense, to the join's FIFO only
        L.extend(_skip_send(s, MV))
        add("sk_sent:")
        L.extend(finished)
        return L
    if s.join:
        L.extend(_skip_add(s, FX, MV))
        add("        li r6, ybuf")
    else:
        add("        li r6, aslots")
        add("        add16 r6, r6, r12")
    # transmit the nonzero activations, each with its neuron index [0408], [0424]
    L.extend(_sender_setup("tx"))
    L.extend(_staged_sender("tx", s, FX, MV, stage=T.STAGE_TX, q_dsd="d_txq",
                            close_ids=(T.F_CLOSE, T.F_CLOSE_END),
                            flag_var="v_flag", last_round=last_round, done=done))
    if s.skip_out is not None:
        add("sk_sent:")
        L.extend(finished)
    if s.join:
        L.extend(_skip_arrival(s, MV))
    return L


def _skip_send(s: PeSpec, MV: str) -> list[str]:
    """The fork of a residual block: this sample's activations (its slot of aslots), all
    of them, to the join's FIFO; sk_sent runs when the last has left."""
    return ["        ld16 r4, v_fpsl",
            f"        li r5, {s.nout * s.esize}",
            "        mul16 r4, r4, r5",
            "        lddwds  D[11], d_sko",
            "        lds1wds S1[11], d_aw",
            f"        {MV}.t D[11], S1[11]            ; x on the skip path to the join"]


def _skip_add(s: PeSpec, FX: str, MV: str) -> list[str]:
    """The join: y = a + x with x the oldest skip vector of the FIFO (waiting for it if
    the FIFO is empty: sk_in resumes at sky). Frees the slot and restarts the FIFO's
    reader if it had stopped on a full FIFO."""
    slot = s.nout * s.esize
    L = []
    add = L.append
    add("        ld16 r5, v_skn")
    add("        eq16 r5, #0")
    add("        bf sky")
    add("        movi r5, 1")
    add("        st16 r5, v_skw                 ; wait for the skip vector (sk_in)")
    add("        term")
    # (a WLI operand reads r4 on every iteration: one offset per instruction)
    add("sky:    ld16 r4, v_skrd")
    add("        lds1wds S1[11], d_skf")
    add("        lddwds  D[11], d_y")
    add(f"        {MV} D[11], S1[11]              ; x, from the FIFO")
    add("        ld16 r4, v_fpsl")
    add(f"        li r5, {slot}")
    add("        mul16 r4, r4, r5")
    add("        lds0wds S0[11], d_aw           ; a = f(x) of this sample")
    add("        lds1wds S1[11], d_y")
    add("        lddwds  D[11], d_y")
    add(f"        fadd{FX} D[11], S0[11], S1[11]     ; y = f(x) + x")
    add("        ld16 r4, v_skrd")
    add(f"        addi r4, {slot}")
    add(f"        li r0, {slot * s.skip_depth}")
    add("        eq16 r4, r0")
    add("        bf sky0")
    add("        movi r4, 0")
    add("sky0:   st16 r4, v_skrd")
    L.extend(_bump("v_skn", -1))
    add("        ld16 r5, v_skidle")
    add("        eq16 r5, #0")
    add("        bt sky1")
    add("        movi r5, 0")
    add("        st16 r5, v_skidle")
    add(f"        unblock {s.skip_in}                   ; a slot is free: the skip path moves again")
    add("sky1:")
    return L


def _skip_arrival(s: PeSpec, MV: str) -> list[str]:
    """A skip vector arrives: its first wavelet starts sk_first, which blocks the skip
    color and reads the rest with an operation of a local task (sk_read; like j_first);
    sk_in then counts the vector in the FIFO and unblocks the color while a slot is free
    (a full FIFO leaves it blocked: the skip path backs up to the fork). Resumes the
    activations if they wait for this vector."""
    slot = s.nout * s.esize
    L = []
    add = L.append
    add(f"sk_first: block {s.skip_in}               ; one vector at a time")
    add("        ld16 r4, v_skwr")
    add("        lddwds  D[9], d_skf0")
    add(f"        {MV} D[9], r2                   ; the first value started this task")
    if s.nout > 1:
        add(f"        activate.t {T.SK_READ}")
        add("sk_read: ld16 r4, v_skwr")
        add("        lddwds  D[9], d_skfr")
        add("        lds1wds S1[9], d_sin")
        add(f"        {MV}.t D[9], S1[9]              ; the rest, asynchronously")
    add("sk_in:  ld16 r4, v_skwr")
    add(f"        addi r4, {slot}")
    add(f"        li r0, {slot * s.skip_depth}")
    add("        eq16 r4, r0")
    add("        bf ski0")
    add("        movi r4, 0")
    add("ski0:   st16 r4, v_skwr")
    L.extend(_bump("v_skn", 1))
    add("        ld16 r5, v_skn")
    add(f"        li r0, {s.skip_depth}")
    add("        eq16 r5, r0")
    add("        bt ski1")
    add(f"        unblock {s.skip_in}")
    add("        jmp ski2")
    add("ski1:   movi r5, 1")
    add("        st16 r5, v_skidle              ; full: the skip path backs up to the fork")
    add("ski2:   ld16 r5, v_skw")
    add("        eq16 r5, #0")
    add("        bt ski3")
    add("        movi r5, 0")
    add("        st16 r5, v_skw")
    add("        jmp sky")
    add("ski3:   term")
    return L


def _staged_sender(p: str, s: PeSpec, FX: str, MV: str, *, stage: int, q_dsd: str,
                   close_ids: tuple[int, int], flag_var: str, last_round: list[str],
                   done: list[str]) -> list[str]:
    """A round-based sender of sparse wavelets (f_txact:tx [0413]) for the ``nout``-element
    vector at v_{p}p. Each round first starts one asynchronous forwarding operation from
    the local queue ``stage`` to the fabric (sparse, US [0506]: the index travels in each
    staged wavelet, not in r4), then scans on from where the last round stopped (the scan
    is unrolled: element j's index o0 + j is a constant, the resume point a code address)
    and stages each nonzero element as (value, index); the forwarder sends each as soon as
    it is staged. A control marker ends the round (the forwarder's Term [0504]), whose end
    starts the next round. A round stages at most ``qcap`` wavelets, so the staging queue
    never fills and the foreground never waits for the fabric. After the last element the
    closeout goes out with an operation of its own (fixed index, no register to re-read),
    and its completion runs ``done``. ``last_round`` runs after the last element is staged,
    while the forwarder works."""
    E, n = s.esize, s.nout
    marker = 0xFFC0 | T.IDLE
    L = []
    add = L.append
    add(f"{p}:     ld16 r5, v_{p}s")
    add("        eq16 r5, #0")
    add(f"        bt {p}g0                        ; (branches reach 128 instructions: jmp beyond)")
    add(f"        jmp {p}d                        ; the closeout is out")
    add(f"{p}g0:   ld16 r5, v_{p}pc")
    add(f"        li r0, {p}_{n}")
    add("        eq16 r5, r0")
    add(f"        bf {p}g")
    add(f"        jmp {p}cl                       ; every element is out: the closeout")
    add(f"{p}g:    lddwds  D[1], {q_dsd}s          ; the staging queue (a local color)")
    add(f"        lds1wds S1[6], {q_dsd}")
    add(f"        lddwds  D[2], {q_dsd}o")
    add(f"        {MV} D[2], S1[6]                ; the forwarder: waits for what is staged")
    add(f"        ld16 r6, v_{p}p")
    add("        movi r12, 0")
    add(f"        li r14, {s.qcap - 1}")
    add("        jr r5                          ; resume the scan")
    for j in range(n):
        add(f"{p}_{j}:  {MV} r2, [r6]")
        add(f"        feq{FX} r2, #0")
        add(f"        bt {p}z_{j}                      ; zeros are not sent [0408]")
        add(f"        li r4, {s.o0 + j}")
        add(f"        {MV} D[1], r2                   ; stage (value, index)")
        if j + 1 < n:  # after the last element the end marker always fits (qcap - 1 + 1)
            add("        addi r12, 1")
            add("        eq16 r12, r14")
            add(f"        bf {p}z_{j}")
            add(f"        addi r6, {E}")
            add(f"        li r5, {p}_{j + 1}                ; the round is full: resume after it")
            add(f"        jmp {p}f")
        add(f"{p}z_{j}: addi r6, {E}")
    add(f"{p}_{n}:  li r5, {p}_{n}")
    add(f"        st16 r6, v_{p}p")
    add(f"        st16 r5, v_{p}pc")
    add(f"        li r4, {marker}")
    add(f"        {MV} D[1], r2                   ; the last round's end marker (Term)")
    L.extend(last_round)
    add(f"{p}f:    st16 r6, v_{p}p")
    add(f"        st16 r5, v_{p}pc")
    add(f"        li r4, {marker}")
    add(f"        {MV}.t D[1], r2                 ; the round's end marker (Term)")
    add(f"{p}cl:   movi r5, 1")
    add(f"        st16 r5, v_{p}s")
    add(f"        ld16 r5, {flag_var}")
    add("        eq16 r5, #0")
    add(f"        bt {p}c0")
    add(f"        lddwds  D[2], {q_dsd}e")
    add(f"        {MV}.t D[2], r2                 ; the closeout [0413], [0420]: ends a batch")
    add(f"{p}c0:   lddwds  D[2], {q_dsd}c")
    add(f"        {MV}.t D[2], r2                 ; the closeout [0413], [0420]")
    add(f"{p}d:")
    L.extend(done)
    return L


def _sender_setup(p: str) -> list[str]:
    """Starts sender ``p`` on the vector whose address is in r6."""
    return [f"        st16 r6, v_{p}p",
            f"        li r5, {p}_0",
            f"        st16 r5, v_{p}pc",
            "        movi r5, 0",
            f"        st16 r5, v_{p}s",
            f"        jmp {p}"]


def _own_block_pass(s: PeSpec, FX: str, MV: str, then: list[str]) -> list[str]:
    """The finalizer's own share of DP and CP for every nonzero delta of its column, after
    the deltas are on their way to the other PEs of the column. Unrolled (delta_j's
    column offset is a constant), one copy per chain-pass variant. The labels dnz{s,a}_j
    run once per nonzero delta: the statistics count them."""
    E = s.esize
    L = []
    add = L.append
    add("own:    li r6, c_neglr")
    add(f"        {MV} r12, [r6]                  ; -lr")
    add("        ld16 r5, v_cpm")
    add("        li r6, delta")
    add("        eq16 r5, #0")
    add("        bt owns                        ; (a branch reaches 128 instructions; the")
    add("        jmp owna                       ;  unrolled passes are longer)")
    add("owns:")
    for variant in ("s", "a"):
        if variant == "a":
            add("owna:")
        for j in range(s.nout):
            add(f"own{variant}_{j}: {MV} r2, [r6]")
            add(f"        feq{FX} r2, #0")
            add(f"        bt own{variant}z_{j}")
            add(f"dnz{variant}_{j}: li r4, {E * j}               ; column j of W")
            if s.has_dp:
                add(f"        fmac{FX} S0[1], S0[1], S1[1]      ; DP: dpsum += W[j, I_r] * delta_j [0409]")
            add(";@pass chain")
            if variant == "s":
                add(f"        fmul{FX} r2, r2, r12              ; -lr * delta_j")
                add(f"        fmac{FX} S0[2], S0[2], S1[2]      ; CP: W[j, I_r] += a * (-lr delta_j) [0617]")
            else:
                add(f"        fmac{FX} S0[3], S0[3], S1[2]      ; CP: G[j, I_r] += a * delta_j [0618]")
            add(";@pass delta")
            add(f"own{variant}z_{j}: addi r6, {E}")
        L.extend(then)
    return L


def _fp_count(s: PeSpec) -> list[str]:
    """The moment a sample's forward pass is final at this PE (its sums sent; at a
    finalizer, its activations kept): in training, count it in flight and note whether it
    ends a mini-batch; a finalizer may now take its backward pass (which can then end
    before the forward pass's sends do). r1 = where to continue."""
    L = []
    add = L.append
    add("fp_count: ld16 r5, v_mode")
    add("        eq16 r5, #0")
    add("        bt fpc0                        ; inference: nothing in flight")
    L.extend(_bump("v_infl", 1))
    add("        ld16 r0, v_flag")
    add("        st16 r0, v_bfull")
    if s.final:
        add("        ld16 r4, v_fpsl")
        add("        add16 r4, r4, r4")
        add("        lddwds  D[11], d_flagw")
        add("        mov16 D[11], r0                ; remember for the delta closeout")
        L.extend(_bump("v_jcnt", 1))
        add("        jmp jadmit                     ; its targets / delta sums may come in")
    add("fpc0:   jr r1")
    return L


def _fp_end(s: PeSpec, E: int, MV: str) -> list[str]:
    """After a sample's forward pass at this PE (fp_count ran): without a backward pass
    (inference), clear its activation slot and take the next sample; with one, keep the
    slot and take the next sample only while slots are free and the mini-batch is not
    complete."""
    K = s.slots
    L = []
    add = L.append
    add("fp_end: movi r5, 0")
    add("        st16 r5, v_fpbusy")
    add("        ld16 r5, v_mode")
    add("        eq16 r5, #0")
    add("        bf fpt")
    add("        mov16 r4, r11")
    add("        lddwds  D[11], d_actz")
    add(f"        {MV} D[11], #0                   ; inference: clear the slot")
    add(f"        unblock.t {s.a_in}")
    add("fpt:")
    if K > 1:
        add("        ld16 r4, v_fpsl")
        add("        addi r4, 1")
        add(f"        li r0, {K}")
        add("        eq16 r4, r0")
        add("        bf fps")
        add("        movi r4, 0")
        add("fps:    st16 r4, v_fpsl")
        add(f"        li r0, {E}")
        add("        mul16 r4, r4, r0")
        add("        mov16 r11, r4                  ; next forward slot's offset")
    add("        jmp admit")
    # admit: unblock the activations when the next sample may start here
    add("admit:  ld16 r0, v_fpbusy")
    add("        eq16 r0, #0")
    add("        bf adm0")
    add("        ld16 r0, v_bfull")
    add("        eq16 r0, #0")
    add("        bf adm0")
    add("        ld16 r0, v_infl")
    add("        ld16 r5, v_k")
    add("        lt16 r0, r5")
    add("        bf adm0")
    add(f"        unblock.t {s.a_in}")
    add("adm0:   term")
    return L


def _delta_body(s: PeSpec, FX: str) -> list[str]:
    """b_delta: DP and CP for one delta delta_j (r2, index j in r4): r14 = element size,
    r10 = the code address of the chain-pass variant, r12 = -lr (set by fp_end)."""
    L = []
    add = L.append
    add("        sub16 r4, r4, r9")
    add("        mul16 r4, r4, r14              ; column j of W")
    if s.has_dp:
        add(f"        fmac{FX} S0[1], S0[1], S1[1]      ; DP: dpsum += W[j, I_r] * delta_j [0409]")
    add(";@pass chain")
    add("        jr r10                         ; in place (SGD) or accumulate")
    add(f"cps:    fmul{FX} r2, r2, r12              ; -lr * delta_j")
    add(f"        fmac{FX}.t S0[2], S0[2], S1[2]    ; CP: W[j, I_r] += a * (-lr delta_j) [0617]")
    add(f"cpa:    fmac{FX}.t S0[3], S0[3], S1[2]    ; CP: G[j, I_r] += a * delta_j [0618]")
    return L


def _bp_end(s: PeSpec, E: int, MV: str, FX: str) -> list[str]:
    """After a sample's backward pass at this PE: clear and free its activation slot,
    apply the mini-batch's update at its end, and admit the next sample."""
    K = s.slots
    L = []
    add = L.append
    add("bp_end: ld16 r4, v_bpsl")
    add(f"        li r0, {E}")
    add("        mul16 r4, r4, r0")
    add("        lddwds  D[11], d_actz")
    add(f"        {MV} D[11], #0                   ; clear the slot: only nonzeros are written")
    if K > 1:
        add("        ld16 r4, v_bpsl")
        add("        addi r4, 1")
        add(f"        li r0, {K}")
        add("        eq16 r4, r0")
        add("        bf bps")
        add("        movi r4, 0")
        add("bps:    st16 r4, v_bpsl")
        # select the descriptor of the new slot: jump into a table of loads
        add("        add16 r4, r4, r4")
        add("        li r0, bpt")
        add("        add16 r4, r4, r0")
        add("        jr r4")
        add("bpt:")
        for k in range(K):
            add(f"        lds1wds S1[2], d_actc{k}")
            add("        jmp bpd")
        add("bpd:")
    if s.final:
        add("        movi r5, 0")
        add("        st16 r5, v_dpbusy")
        add("        li r1, bpj")
        add("        jmp jadmit")
        add("bpj:")
    L.extend(_bump("v_infl", -1))
    add("        ld16 r5, v_cpm")
    add("        eq16 r5, #0")
    add("        bt admit")
    L.extend(_bump("v_gcnt", 1))
    add("        ld16 r5, v_bflag")
    add("        eq16 r5, #0")
    add("        bt admit")
    add("        li r1, bpu")
    add("        jmp ap                         ; end of the mini-batch: update [0623]")
    add("bpu:    movi r5, 0")
    add("        st16 r5, v_bfull")
    add("        jmp admit")
    return L


def _fprime(s: PeSpec, FX: str, MV: str) -> list[str]:
    """fpr = f'(a) of the sample's stored activations (S1[7] = a, wli r4 = its slot)."""
    a = s.activation
    L = []
    add = L.append
    if a == "relu":
        add("        lddwds  D[7], d_fpr")
        add(f"        drelu{FX} D[7], S1[7]             ; f' = 1 where a > 0 [0493]")
    elif a == "sigmoid":
        add("        lddwds  D[2], d_fpr")
        L.extend(_fp_one(s.dtype))
        add(f"        fsub{FX} D[2], r2, S1[7]            ; 1 - a")
        add("        lds0wds S0[7], d_fpr")
        add(f"        fmul{FX} S0[7], S0[7], S1[7]      ; f' = a (1 - a)")
    elif a == "tanh":
        add("        lddwds  D[7], d_fpr")
        add("        lds0wds S0[7], d_aw")
        add(f"        fmul{FX} D[7], S0[7], S1[7]       ; a^2")
        L.extend(_fp_one(s.dtype))
        add("        lddwds  D[2], d_fpr")
        add("        lds1wds S1[8], d_fpr")
        add(f"        fsub{FX} D[2], r2, S1[8]            ; f' = 1 - a^2")
    return L


def _finalize_later(s: PeSpec, FX: str, MV: str) -> list[str]:
    """What a finalizer's backward pass can do after its delta sums have left (in h_sent,
    or before bp_end in layer 0): the loss share to the host (output layer) and the bias
    update. Still before the next sample may start here."""
    later = []
    if s.last:
        later += ["        lddwds  D[8], d_fpr",
                  "        lds0wds S0[8], d_tot",
                  "        lds1wds S1[8], d_tot",
                  f"        fmul{FX} D[8], S0[8], S1[8]       ; e^2",
                  "        movi r0, 0",
                  "        movi r1, 0",
                  "        lds1wds S1[9], d_fpr",
                  f"        fadd{FX} r0, r0, S1[9]            ; sum",
                  "        li r6, c_invn",
                  f"        fmul{FX} r0, r0, [r6]             ; / n: this column's share of the loss",
                  f"        li r4, {T.LOSS_INDEX}",
                  "        lddwds  D[10], d_lout",
                  f"        {MV} D[10], r0                  ; to the host"]
    if s.bias:
        later += [";@pass chain",
                  "        ld16 r5, v_cpm",
                  "        eq16 r5, #0",
                  "        bf dba",
                  "        li r6, c_neglr",
                  f"        {MV} r2, [r6]",
                  "        lds0wds S0[9], d_bias",
                  "        lds1wds S1[9], d_delta",
                  f"        fmac{FX} S0[9], S0[9], S1[9]      ; b += delta * (-lr)",
                  "        jmp dbd",
                  "dba:    lds0wds S0[9], d_gb",
                  "        lds1wds S1[9], d_delta",
                  f"        fadd{FX} S0[9], S0[9], S1[9]      ; Gb += delta",
                  "dbd:",
                  ";@pass delta"]
    return later


def _finalize_backward(s: PeSpec, FX: str, MV: str, E: int) -> list[str]:
    """The finalizer's backward pass: the delta partial sums of the next layer's row (or
    the targets) arrive on j_in; delta = sum * f'(a) (last layer: (a - y) * 2/n * f'(a),
    the delta rule [0645]); bias update; the nonzero deltas down the column [0409], each
    also applied to this PE's own block; then the delta closeout [0420]."""
    nout = s.nout
    L = []
    add = L.append
    add(";@pass control")
    add("jadmit: ld16 r5, v_dpbusy               ; take the next sample's stream when")
    add("        eq16 r5, #0                    ; no backward pass runs here and a forward")
    add("        bf jad0                        ; pass is done (targets may come early)")
    add("        ld16 r5, v_jcnt")
    add("        eq16 r5, #0")
    add("        bt jad0")
    if s.join:
        add("        ld16 r5, v_bbusy               ; tot is still being sent back")
        add("        eq16 r5, #0")
        add("        bf jad0")
    add(f"        unblock {s.j_in}")
    add("jad0:   jr r1")
    add(";@pass delta")
    add(f"j_first: block {s.j_in}                 ; the stream is read by one operation")
    add("        movi r5, 1")
    add("        st16 r5, v_dpbusy")
    L.extend(_bump("v_jcnt", -1))
    add("        lddwds  D[3], d_tot0")
    add(f"        {MV} D[3], r2                   ; the first value started this task")
    add(f"        activate.t {T.JREAD}")
    add("j_read: lddwds  D[3], d_totr")
    add("        lds1wds S1[8], d_jin")
    add(f"        {MV}.t D[3], S1[8]              ; the rest, asynchronously")
    add("dfin:   ld16 r4, v_bpsl")
    add(f"        li r5, {nout * E}")
    add("        mul16 r4, r4, r5               ; the sample's slot of aslots (wli)")
    add("        lds1wds S1[7], d_aw")
    has_fp = s.activation != "identity"
    if s.last:
        # e = a - y into tot; delta = e * 2/n [* f'] (the loss waits until the deltas go)
        add("        lddwds  D[7], d_tot")
        add("        lds0wds S0[7], d_aw")
        add("        lds1wds S1[8], d_tot")
        add(f"        fsub{FX} D[7], S0[7], S1[8]       ; e = a - y [0645]")
        add("        lddwds  D[8], d_delta")
        add("        lds0wds S0[8], d_tot")
        add("        li r6, c_twon")
        add(f"        fmul{FX} D[8], S0[8], [r6]        ; delta = e * 2/n")
        if has_fp:
            L.extend(_fprime(s, FX, MV))
            add("        lds0wds S0[8], d_delta")
            add("        lds1wds S1[8], d_fpr")
            add(f"        fmul{FX} S0[8], S0[8], S1[8]      ; * f'(a)")
    else:
        if has_fp:
            L.extend(_fprime(s, FX, MV))
            add("        lddwds  D[8], d_delta")
            add("        lds0wds S0[8], d_tot")
            add("        lds1wds S1[8], d_fpr")
            add(f"        fmul{FX} D[8], S0[8], S1[8]       ; delta = sum * f'(a) [0409]")
        else:
            add("        lddwds  D[8], d_delta")
            add("        lds1wds S1[8], d_tot")
            add(f"        {MV} D[8], S1[8]                 ; delta = sum")
    add("        ld16 r4, v_bpsl")
    add("        add16 r4, r4, r4")
    add("        li r6, v_flags")
    add("        add16 r6, r6, r4")
    add("        mov16 r5, [r6]                 ; does this sample end a mini-batch?")
    add("        st16 r5, v_dflag")
    add("        li r6, delta")
    back = _skip_back(MV) if s.join else []
    if s.d_send:
        # the nonzero deltas down the column; then, while they travel, the loss, the bias
        # and this PE's own share of DP and CP
        L.extend(_sender_setup("dx"))
        L.extend(_staged_sender("dx", s, FX, MV, stage=T.STAGE_DTX, q_dsd="d_dxq",
                                close_ids=(T.B_CLOSE, T.B_CLOSE_END),
                                flag_var="v_dflag", last_round=["        jmp own"],
                                done=back + ["        ld16 r5, v_dflag",
                                             "        jmp bc                         ; this PE's own delta closeout"]))
        L.extend(_own_block_pass(s, FX, MV, ["        term"]))
    else:
        # alone in its column: its own share, then its own delta closeout
        L.extend(_own_block_pass(s, FX, MV, back + ["        ld16 r5, v_dflag", "        jmp bc"]))
    if s.join:
        add(";@pass delta")
        add("b_sent: movi r5, 0")
        add("        st16 r5, v_bbusy")
        add("        li r1, idle")
        add("        jmp jadmit                     ; the next sample's dL/dy may come in")
    return L


def _skip_back(MV: str) -> list[str]:
    """The join, after its deltas are out: dL/dy (the delta sums it received, in tot)
    back along the skip, all of them; b_sent runs when the last has left."""
    return ["        movi r5, 1",
            "        st16 r5, v_bbusy",
            "        lddwds  D[10], d_bo",
            "        lds1wds S1[10], d_tot",
            f"        {MV} D[10], S1[10]              ; dL/dy back to the residual's first layer"]
