"""Conformance program 8: scatter a stream over a row of PEs with route switches, and
stream the results out of every PE's compute element (docs/fabric.md, "Switches" and
"Host streams").

One color, S, runs along the row from the west edge port. Every router's route (position
0) sends S down its ramp; its switch has one more position, tx E. The host streams chunk
0, then a switch-only control wavelet whose hop-0 command advances router 0's switch,
then chunk 1 and a control wavelet advancing the router one hop on, and so on: chunk i
stops at PE i, the control wavelets never reach a compute element, and no router is
reconfigured by the host during the run. A command list reaches 7 routers, so the row
has at most 7 PEs (longer rows would relay).

Each PE multiplies its chunk by its own weights and sends the products on color Y, which
the host takes straight from the compute elements (``capture`` / ``stream_d2h``), not
through an edge port: y[i] = chunk_i * w_i, checked against numpy.

    python examples/kernels/switch_scatter.py --pes 5 --n 6
"""

from __future__ import annotations

import argparse

import numpy as np

import wafersim as ws

S, Y = 2, 9
MAIN = 40

SOURCE = f"""
.data
buf:    .space fp16, {{n}}
wts:    .space fp16, {{n}}
fin:    .dsd fabric_in, length={{n}}, sw=1, sc=1, ch={S >> 3}, utid={S & 7}
dbuf:   .dsd mem1d, base=buf, length={{n}}, stride=2
dw:     .dsd mem1d, base=wts, length={{n}}, stride=2
yout:   .dsd fabric_out, color={Y}, length={{n}}, sw=1
.export wts

.code
.task main, {MAIN}
main:   block {S}               ; S is read by main, not by a task
        lds1wds S1[1], fin
        lddwds  D[1], dbuf
        mov16   D[1], S1[1]     ; my chunk
        lds0wds S0[2], dbuf
        lds1wds S1[2], dw
        lddwds  D[2], yout
        fmulh.t D[2], S0[2], S1[2]
"""


def setup(w: ws.Wafer, row: int = 0) -> None:
    """Route S along ``row`` from the west edge; every router but the last can pass it on."""
    for j in range(w.cols):
        rt = w.router(row, j)
        rt.set_route(S, rx=["W"], tx=["RAMP"])
        if j < w.cols - 1:
            rt.set_switch(S, [{"tx": ["E"]}])


def run(pes: int = 5, n: int = 6, seed: int = 0) -> dict:
    if not 1 <= pes <= ws.switches.HOPS:
        raise ValueError(f"1..{ws.switches.HOPS} PEs (a command list reaches "
                         f"{ws.switches.HOPS} routers), got {pes}")
    rng = np.random.default_rng(seed)
    x = rng.integers(-6, 7, (pes, n)).astype(np.float16)   # small integers: exact products
    wts = rng.integers(-4, 5, (pes, n)).astype(np.float16)
    w = ws.Wafer(1, pes)
    w.load(SOURCE.format(n=n), rect=(0, 0, 1, pes))
    setup(w)
    w.memcpy_h2d("wts", wts.reshape(1, pes, n), rect=(0, 0, 1, pes))
    w.capture(Y, rect=(0, 0, 1, pes))
    w.launch("main")
    for i in range(pes):
        w.stream((0, -1), S, x[i])
        if i < pes - 1:  # advance router i: the next chunk goes one PE further
            w.send_control((0, -1), S, ["nop"] * i + ["advance"], switch_only=True)
    stats = w.run()
    y = w.stream_d2h(Y, rect=(0, 0, 1, pes))[0]
    positions = [w.router(0, j).switch_position(S) for j in range(pes - 1)]
    return {"y": y, "numpy": x * wts, "stats": stats, "positions": positions, "wafer": w}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pes", type=int, default=5)
    ap.add_argument("--n", type=int, default=6)
    args = ap.parse_args(argv)
    r = run(args.pes, args.n)
    ok = np.array_equal(r["y"], r["numpy"])
    print(f"{args.pes} chunks of {args.n} scattered over {args.pes} PEs in {r['stats'].cycles} "
          f"cycles; switch positions afterwards {r['positions']}")
    print(f"  every PE's products equal numpy's: {ok}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
