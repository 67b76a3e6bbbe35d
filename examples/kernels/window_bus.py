"""Conformance program 7: a 1D bus that delivers each PE's chunk to the next k PEs, with
runtime route switches (docs/fabric.md, "Switches").

A row of PEs shares one color, B. PE s holds a chunk x_s of n values; in turn, PE 0, 1,
... sends its chunk east, and the fabric delivers it to PEs s+1 .. s+k only. Every PE
adds what it receives: acc_j = sum of x_s for s = j-k .. j-1 (in that order).

No router is reconfigured by the host during the run. Each router's switch on B has the
positions (the route is position 0):

* 0: tx RAMP       (the last PE of the current window)
* 1: tx RAMP, E    (a PE inside the window: take a copy and pass it on)
* 2: tx E          (the sender)

Rx is {W, RAMP} throughout: only one of them is active at a time [0302]. After its chunk
the sender sends a control wavelet on B whose commands advance the switch one hop on
(1 -> 2: the next sender) and k hops on (0 -> 1: the window grows by one PE at the far
end). It is forwarded with the positions in force, so it reaches the same k PEs as the
chunk; there its 16-bit argument (the sender's position) starts the `next` task, and the
PE whose predecessor sent goes next. Data wavelets start `recv`, which adds the element
into acc.

    python examples/kernels/window_bus.py --pes 6 --window 3 --n 8
"""

from __future__ import annotations

import argparse

import numpy as np

import wafersim as ws

B = 5            # the bus color
NEXT = 33        # a local id: the control wavelet's index starts `next`
MAIN = 40

SOURCE = f"""
.data
me:     .i16 0                  ; this PE's position on the bus
sends:  .i16 1                  ; 0: the last PE, which only receives
chunk:  .space fp16, {{n}}
acc:    .space fp16, {{n}}
dacc:   .dsd mem1d, base=acc, length=1, stride=2, wli=1        ; acc + r4 bytes
dchunk: .dsd mem1d, base=chunk, length={{n}}, stride=2
dout:   .dsd fabric_out, color={B}, length={{n}}, sw=1
dctl:   .dsd fabric_out, color={B}, length=1, sw=1, c=1, index={NEXT}
.export me, sends, chunk, acc

.code
.task main, {MAIN}
.task recv, {B}
.task next, {NEXT}

main:   lddwds  D[1], dacc
        lds0wds S0[1], dacc
        lds1wds S1[2], dchunk
        lddwds  D[2], dout
        lddwds  D[3], dctl
        li r5, 0                ; byte offset in acc of the next element received
        ld16 r7, me
        eq16 r7, #0
        bt.t send               ; PE 0 goes first; the others wait
        
recv:   mov16 r4, r5            ; acc[r5 / 2] += the element (r2)
        faddh D[1], S0[1], r2
        addi r5, 2
        term

next:   li r5, 0                ; a chunk ended; r2 = its sender's position
        addi r2, 1
        eq16 r2, r7
        bt.t send               ; my predecessor sent: my turn

send:   ld16 r6, sends
        eq16 r6, #0
        bf.t go
go:     mov16 D[2], S1[2]       ; the chunk
        mov16 r8, r7            ; argument: my position
        li r9, {{cmds}}         ; commands for the routers ahead
        mov32.t D[3], r8        ; the control wavelet
"""


def commands(k: int) -> str:
    """switch_cmds(...) of the sender's control wavelet: advance 1 and k hops on."""
    cmds = ["nop"] * (k + 1)
    cmds[1] = cmds[k] = "adv"
    return "switch_cmds(" + ", ".join(cmds) + ")"


def setup(w: ws.Wafer, k: int, row: int = 0) -> None:
    """Routes and switches of the bus along ``row`` for windows of ``k`` PEs."""
    pes = w.cols
    inside = [{"tx": ["RAMP", "E"]}] if k >= 2 else []
    for j in range(pes):
        rt = w.router(row, j)
        rt.set_route(B, rx=["RAMP"] + (["W"] if j else []), tx=["RAMP"])
        if j == pes - 1:
            continue  # the last PE only receives: its route never changes
        positions = inside + [{"tx": ["E"]}]
        last = len(positions)
        rt.set_switch(B, positions, start=last if j == 0 else 1 if j < k else 0)


def reference(x: np.ndarray, k: int) -> np.ndarray:
    """acc of every PE of one row: its window's chunks added in sending order."""
    acc = np.zeros_like(x)
    for j in range(len(x)):
        for s in range(max(0, j - k), j):
            acc[j] = (acc[j] + x[s]).astype(x.dtype)
    return acc


def run(pes: int = 6, k: int = 3, n: int = 8, seed: int = 0, rows: int = 1,
        threads: int | None = None, parallel_min_routers: int | None = None) -> dict:
    """The bus on each of ``rows`` rows of ``pes`` PEs (independent buses, own chunks)."""
    if not 1 <= k <= ws.switches.HOPS - 1:
        raise ValueError(f"window k must be 1..{ws.switches.HOPS - 1} (commands reach "
                         f"{ws.switches.HOPS} hops), got {k}")
    rng = np.random.default_rng(seed)
    x = rng.integers(-8, 9, (rows, pes, n)).astype(np.float16)  # small integers: exact sums
    w = ws.Wafer(rows, pes, threads=threads)
    everything = (0, 0, rows, pes)
    w.load(SOURCE.format(n=n, cmds=commands(k)), rect=everything)
    if parallel_min_routers is not None:  # after load, which sets the default for CEs
        w.parallel_min_routers = parallel_min_routers
    for r in range(rows):
        setup(w, k, r)
    w.memcpy_h2d("me", np.broadcast_to(np.arange(pes)[None, :, None], (rows, pes, 1)),
                 rect=everything)
    w.memcpy_h2d("sends", np.broadcast_to((np.arange(pes) < pes - 1)[None, :, None],
                                          (rows, pes, 1)), rect=everything)
    w.memcpy_h2d("chunk", x, rect=everything)
    w.launch("main")
    stats = w.run()
    acc = w.memcpy_d2h("acc", rect=everything)
    ramp = w.counters().link_color_counts(B)[:, :, ws.layout.DIR_INDEX["RAMP"]]
    want = np.stack([reference(xr, k) for xr in x])
    if rows == 1:  # one bus: arrays of its PEs
        acc, want, ramp, x = acc[0], want[0], ramp[0], x[0]
    return {"acc": acc, "numpy": want, "stats": stats, "wafer": w, "delivered_per_pe": ramp,
            "x": x}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pes", type=int, default=6)
    ap.add_argument("--window", type=int, default=3)
    ap.add_argument("--n", type=int, default=8)
    args = ap.parse_args(argv)
    r = run(args.pes, args.window, args.n)
    ok = np.array_equal(r["acc"], r["numpy"])
    print(f"{args.pes} PEs, windows of {args.window}, chunks of {args.n}: "
          f"{r['stats'].cycles} cycles; wavelets delivered per PE {r['delivered_per_pe'].tolist()}")
    print(f"  every PE's sum equals numpy's: {ok}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
