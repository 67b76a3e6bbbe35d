"""The tasks the host launches before a run: ``main`` (constants into registers, the hot
descriptors into DSRs, the colors only asynchronous operations read blocked), ``config``
(FP control register and random-number seed from their words) and ``setup`` (the
chain-pass variant and -lr into registers)."""

from __future__ import annotations

from .. import task_ids as T
from ..registers import CPV, ESIZE, FSLOT, I0, NEGLR, O0, ROWB
from .cpgd import setup_counting
from .cpgd_snapshot import dp_column0
from .single_weights import single_main
from .spec import PeSpec

__all__ = ["task_table", "main_task", "config_and_setup"]


def task_table(s: PeSpec) -> list[str]:
    """The ``.task`` lines: which entry each task id jumps to [0371]."""
    F = s.final
    L = [f".task main, {T.MAIN}", f".task f_act, {s.a_in}", f".task f_close, {T.F_CLOSE}",
         f".task f_close_end, {T.F_CLOSE_END}", f".task b_delta, {s.d_col}",
         f".task b_close, {T.B_CLOSE}", f".task b_close_end, {T.B_CLOSE_END}",
         f".task apply, {T.APPLY}", f".task config, {T.CONFIG}", f".task setup, {T.SETUP}",
         f".task idle, {T.IDLE}"]
    if not F:
        L.append(f".task f_sent, {T.F_SENT}")
    if s.has_dp:
        L.append(f".task h_sent, {T.H_SENT}")
    if F:
        if s.row > 0:
            L.append(f".task fin2, {T.FIN2}")
        if s.row < s.rows - 1:
            L.append(f".task fin3, {T.FIN3}")
        if s.a_out is not None:
            L.append(f".task tx, {T.TX}")
        if s.d_send:
            L.append(f".task dx, {T.DTX}")
        L += [f".task j_first, {s.j_in}", f".task j_read, {T.JREAD}", f".task dfin, {T.DFIN}"]
        if s.skip_out is not None:
            L.append(f".task sk_sent, {T.SK_SENT}")
        if s.join:
            L += [f".task sk_first, {s.skip_in}", f".task sk_read, {T.SK_READ}",
                  f".task sk_in, {T.SK_IN}", f".task b_sent, {T.B_SENT}"]
    return L


def main_task(s: PeSpec) -> list[str]:
    """main: constants into registers (registers.py), the descriptors the per-wavelet tasks
    use into DSRs; the colors read only by asynchronous operations never start tasks."""
    L = [";@pass control",
         f"main:   ld16 {I0}, c_i0",
         f"        ld16 {ROWB}, c_rowb",
         f"        ld16 {O0}, c_o0",
         f"        li {CPV}, cps",
         f"        movi {FSLOT}, 0",
         f"        movi {ESIZE}, {s.esize}",
         "        lds0wds S0[0], " + ("d_frun0" if s.sparse and s.runs() else "d_fpsum"),
         "        lds1wds S1[0], d_wrow",
         "        lddwds  D[0], d_actst",
         "        ldxds   X[3], x_col",
         "        ldxds   X[4], x_gcol",
         f"        lds1wds S1[1], {dp_column0(s)}",
         "        lds0wds S0[2], d_wcol",
         "        lds1wds S1[2], d_actc0",
         "        lds0wds S0[3], d_gcol"]
    if s.has_dp:
        L.append("        lds0wds S0[1], d_dpsum")
    L += single_main(s)
    if s.final:
        L += [f"        block {s.j_in}                    ; until a forward pass is done here",
              f"        block {T.STAGE_TX}                    ; staging queues start no task",
              f"        block {T.STAGE_DTX}"]
    quiet = {x for x in (s.p_in, s.h_in, s.skip_grad_in) if x is not None}
    if s.final and s.row > 0:
        quiet.add(s.p_low)
    if s.final and s.row < s.rows - 1:
        quiet.add(s.p_high)
    L += [f"        block {c}" for c in sorted(quiet)]
    L.append(f"        activate {T.SETUP}")
    return L


def config_and_setup(s: PeSpec) -> list[str]:
    return (["config: ld16 r0, v_fpc",
            "        setfpc r0                      ; rounding of every FP result [0680]",
            "        ld16 r0, v_seed",
            "        seedrng r0                     ; this PE's random numbers [0668]",
            "        term",
            "setup:  ld16 r5, v_cpm                 ; the chain-pass variant (b_delta: jr CPV)"]
            + setup_counting(s) + [
            f"        li {CPV}, cps",
            "        eq16 r5, #0",
            "        bt cfv",
            f"        li {CPV}, cpa",
            "cfv:    li r6, c_neglr",
            f"        {s.MV} {NEGLR}, [r6]                  ; -lr (b_delta)",
            "        term"])
