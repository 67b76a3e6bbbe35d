"""Sending without waiting: a finalizer's sparse sends go in rounds through a local staging
queue (docs/training.md, "Sending without waiting"; [0305]: a scheduled task must
complete, so the foreground never waits for the fabric)."""

from __future__ import annotations

from .. import task_ids as T
from ..registers import ROUND_LIMIT, SENT
from .spec import PeSpec

__all__ = ["staged_sender", "sender_setup"]


def staged_sender(p: str, s: PeSpec, *, stage: int, q_dsd: str, flag_var: str,
                  last_round: list[str], done: list[str],
                  threshold: str | None = None, replay_close: str | None = None) -> list[str]:
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
    while the forwarder works.

    ``threshold``: the descriptor of a one-element threshold t in memory (a runtime word);
    an element is then staged only when |value| > t (EC411): one ``fabs`` more per element
    than the exact-zero test, whose result r0 (r0:r1 in fp32) is this task's scratch. For
    t = 0 the two tests pick the same elements (|a| <= 0 only for +-0; NaN is sent).

    ``replay_close``: the descriptor of a reverse checkpoint's replay closeout, sent
    instead of the others while ``v_rcm`` is set (recompute.py)."""
    E, n, MV, FX = s.esize, s.nout, s.MV, s.FX
    marker = 0xFFC0 | T.IDLE
    L = [f"{p}:     ld16 r5, v_{p}s",
         "        eq16 r5, #0",
         f"        bt {p}g0                        ; (branches reach 128 instructions: jmp beyond)",
         f"        jmp {p}d                        ; the closeout is out",
         f"{p}g0:   ld16 r5, v_{p}pc",
         f"        li r0, {p}_{n}",
         "        eq16 r5, r0",
         f"        bf {p}g",
         f"        jmp {p}cl                       ; every element is out: the closeout",
         f"{p}g:    lddwds  D[1], {q_dsd}s          ; the staging queue (a local color)"]
    if threshold:
        L.append(f"        lds1wds S1[4], {threshold}           ; t, the activation threshold")
    L += [f"        lds1wds S1[6], {q_dsd}",
          f"        lddwds  D[2], {q_dsd}o",
          f"        {MV} D[2], S1[6]                ; the forwarder: waits for what is staged",
          f"        ld16 r6, v_{p}p",
          f"        movi {SENT}, 0",
          f"        li {ROUND_LIMIT}, {s.qcap - 1}",
          "        jr r5                          ; resume the scan"]
    for j in range(n):
        if threshold:
            L += [f"{p}_{j}:  {MV} r2, [r6]",
                  f"        fabs{FX} r0, r2",
                  f"        fle{FX} r0, S1[4]",
                  f"        bt {p}z_{j}                      ; |a| <= t is not sent (EC411)"]
        else:
            L += [f"{p}_{j}:  {MV} r2, [r6]",
                  f"        feq{FX} r2, #0",
                  f"        bt {p}z_{j}                      ; zeros are not sent [0408]"]
        L += [f"        li r4, {s.o0 + j}",
              f"        {MV} D[1], r2                   ; stage (value, index)"]
        if j + 1 < n:  # after the last element the end marker always fits (qcap - 1 + 1)
            L += [f"        addi {SENT}, 1",
                  f"        eq16 {SENT}, {ROUND_LIMIT}",
                  f"        bf {p}z_{j}",
                  f"        addi r6, {E}",
                  f"        li r5, {p}_{j + 1}                ; the round is full: resume after it",
                  f"        jmp {p}f"]
        L.append(f"{p}z_{j}: addi r6, {E}")
    L += [f"{p}_{n}:  li r5, {p}_{n}",
          f"        st16 r6, v_{p}p",
          f"        st16 r5, v_{p}pc",
          f"        li r4, {marker}",
          f"        {MV} D[1], r2                   ; the last round's end marker (Term)"]
    L += last_round
    L += [f"{p}f:    st16 r6, v_{p}p",
          f"        st16 r5, v_{p}pc",
          f"        li r4, {marker}",
          f"        {MV}.t D[1], r2                 ; the round's end marker (Term)",
          f"{p}cl:   movi r5, 1",
          f"        st16 r5, v_{p}s"]
    if replay_close:
        L += ["        ld16 r5, v_rcm",
              "        eq16 r5, #0",
              f"        bt {p}cf",
              f"        lddwds  D[2], {replay_close}",
              f"        {MV}.t D[2], r2                 ; a replay's closeout",
              f"{p}cf:"]
    L += [f"        ld16 r5, {flag_var}",
          "        eq16 r5, #0",
          f"        bt {p}c0",
          f"        lddwds  D[2], {q_dsd}e",
          f"        {MV}.t D[2], r2                 ; the closeout [0413], [0420]: ends a batch",
          f"{p}c0:   lddwds  D[2], {q_dsd}c",
          f"        {MV}.t D[2], r2                 ; the closeout [0413], [0420]",
          f"{p}d:"]
    return L + done


def sender_setup(p: str) -> list[str]:
    """Starts sender ``p`` on the vector whose address is in r6."""
    return [f"        st16 r6, v_{p}p",
            f"        li r5, {p}_0",
            f"        st16 r5, v_{p}pc",
            "        movi r5, 0",
            f"        st16 r5, v_{p}s",
            f"        jmp {p}"]
