"""Conformance program 9: a row bus that its PEs take in turn without a token; route
switches hold the senders whose turn has not come (docs/fabric.md, "Switches").

A row of PEs shares one color, B, running east to the host at the east edge port. Every
PE scales its chunks by its own weights and sends them on B, one chunk per round, each
followed by a control wavelet. All PEs start sending at once; nothing tells a PE when its
turn comes. The routers' switches decide: router j takes B from the west (the PEs before
it) or from its ramp (its own PE), and a PE whose turn has not come is simply held, its
wavelets waiting in its output queue (backpressure), until a control wavelet moves its
router's switch to the ramp. The host receives, in every round, PE 0's chunk, PE 1's, ...,
in order: y = concat over rounds r, PEs j of x[j, r] * w[j].

Router j > 0 has the route rx W, tx E (position 0) and one more position, {rx: RAMP}
(positions accumulate: it keeps tx E), in ring mode; router 0 has only the route rx
RAMP, tx E. Each control wavelet carries `advance` for hop 0 (its own router goes back to
taking the west) and hop 1 (the next router takes its ramp); its argument is the
sender's position, and the host receives it after the chunk.

    python examples/kernels/gather_bus.py --pes 4 --rounds 3 --n 5
"""

from __future__ import annotations

import argparse

import numpy as np

import wafersim as ws

B = 5            # the bus color
END = 33         # control wavelets' task index (no PE receives them here)
MAIN = 40

SOURCE = f"""
.data
me:     .i16 0                  ; this PE's position on the bus: the control argument
x:      .space fp16, {{total}}  ; rounds x n values
wts:    .space fp16, {{n}}
y:      .space fp16, {{n}}
dx:     .dsd mem1d, base=x, length={{n}}, stride=2, sa=1     ; the next round's chunk
dw:     .dsd mem1d, base=wts, length={{n}}, stride=2
dy:     .dsd mem1d, base=y, length={{n}}, stride=2
dout:   .dsd fabric_out, color={B}, length={{n}}, sw=1
dctl:   .dsd fabric_out, color={B}, length=1, sw=1, c=1, index={END}
.export me, x, wts

.code
.task main, {MAIN}
main:   lds0wds S0[1], dx
        lds1wds S1[1], dw
        lddwds  D[1], dy
        lds1wds S1[2], dy
        lddwds  D[2], dout
        lddwds  D[3], dctl
        ld16 r7, me
        li r9, switch_cmds(adv, adv)    ; hop 0: back to the west; hop 1: next PE's turn
        li r10, {{rounds}}
round:  fmulh D[1], S0[1], S1[1]        ; y = chunk * weights (S0[1] moves on: SA)
        mov16 D[2], S1[2]               ; y on the bus: held until the switch takes the ramp
        mov16 r8, r7
        mov32 D[3], r8                  ; then the control wavelet
        addi r10, -1
        eq16 r10, #0
        bf round
        term
"""


def setup(w: ws.Wafer, row: int = 0) -> None:
    """The bus along ``row``: from the west or the ramp, east to the edge port."""
    for j in range(w.cols):
        rt = w.router(row, j)
        if j == 0:
            rt.set_route(B, rx=["RAMP"], tx=["E"])  # nothing comes from the west
        else:
            rt.set_route(B, rx=["W"], tx=["E"])
            rt.set_switch(B, [{"rx": ["RAMP"]}], ring=True)


def run(pes: int = 4, rounds: int = 3, n: int = 5, seed: int = 0,
        threads: int | None = None) -> dict:
    rng = np.random.default_rng(seed)
    x = rng.integers(-8, 9, (pes, rounds, n)).astype(np.float16)  # small integers: exact
    wts = rng.integers(-4, 5, (pes, n)).astype(np.float16)
    w = ws.Wafer(1, pes, threads=threads)
    row = (0, 0, 1, pes)
    w.load(SOURCE.format(n=n, rounds=rounds, total=rounds * n), rect=row)
    setup(w)
    w.memcpy_h2d("me", np.arange(pes).reshape(1, pes, 1), rect=row)
    w.memcpy_h2d("x", x.reshape(1, pes, rounds * n), rect=row)
    w.memcpy_h2d("wts", wts.reshape(1, pes, n), rect=row)
    w.launch("main")
    stats = w.run()
    got = w.collect((0, pes))  # the east edge port
    data = got.values("fp16", color=B)
    # the numpy model: rounds in order, PEs in bus order within a round
    want = np.concatenate([x[j, r] * wts[j] for r in range(rounds) for j in range(pes)])
    senders = (got.data[got.ctrl] & 0xFFFF).tolist()
    return {"y": data, "numpy": want, "senders": senders,
            "want_senders": [j for _ in range(rounds) for j in range(pes)],
            "arrivals": got, "stats": stats, "wafer": w}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pes", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--n", type=int, default=5)
    args = ap.parse_args(argv)
    r = run(args.pes, args.rounds, args.n)
    ok = np.array_equal(r["y"], r["numpy"]) and r["senders"] == r["want_senders"]
    print(f"{args.pes} PEs, {args.rounds} rounds of {args.n} values: {r['stats'].cycles} cycles; "
          f"senders in arrival order {r['senders']}")
    print(f"  the bus carried every PE's chunk in turn, as numpy says: {ok}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
