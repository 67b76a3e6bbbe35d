"""Conformance program 5: a FIFO whose pushes and pops activate a task [0384], [0540].

An asynchronous vector move (a microthread, UE [0500]) copies a stream from color X into
a small FIFO in memory: two circular-buffer descriptors over one region, the write
pointer in DDSR8 and the read pointer in S1DSR8 [0541]. Every push and every pop
activates the `drain` task, which pops one element, squares it and sends it on color Y.
When the FIFO is full the move suspends until a pop makes room; when it is empty the pop
waits for the next push (the wrap-bit rule of [0542]).

On a wafer (``run_wafer``) the stream enters PE (0, 0) through the west edge port and the
squares leave through the east one.

    python examples/kernels/fifo_pipeline.py --items 64 --capacity 4
"""

from __future__ import annotations

import argparse

import numpy as np

import wafersim as ws

X, Y, DRAIN, RECEIVED = 3, 7, 45, 46

SOURCE = f"""
.data
xf:   .xdsd circular, start=buf, end=buf + 2 * {{cap}}, fifo=1, push={DRAIN}, pop={DRAIN}
wr:   .dsd circular, base=buf, length={{n}}, xdsr=2
rd:   .dsd circular, base=buf, length=1, xdsr=2
din:  .dsd fabric_in, length={{n}}, sw=1, ue=1, sc=1, utid={X}, ac={RECEIVED}
dout: .dsd fabric_out, color={Y}, length=1, sw=1
buf:  .space fp16, {{cap}}
.code
.task main, 40
.task drain, {DRAIN}
.task received, {RECEIVED}

main:     block {X}                ; X is read by the move, not by a task
          ldxds X[2], xf
          lddwds D[8], wr          ; FIFO write pointer
          lds1wds S1[8], rd        ; FIFO read pointer
          lds1wds S1[0], din
          lddwds D[1], dout
          li r10, {{n}}            ; elements still to drain
          mov16.t D[8], S1[0]      ; fabric -> FIFO, as a microthread

drain:    eq16 r10, #0
          bt nothing
          mov16 r0, S1[8]          ; pop (waits while the FIFO is empty)
          fmulh r0, r0, r0
          mov16 D[1], r0
          addi r10, -1
nothing:  term

received: li r11, 1                ; AC of the move: the whole stream is in
          term
"""


def run(items: int = 64, capacity: int = 4, interval: int = 1, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    x = rng.uniform(-4, 4, items).astype(np.float16)
    pe = ws.pe.LonePE()
    pe.load(SOURCE.format(n=items, cap=capacity))
    pe.launch("main")
    pe.inject(X, x, start=10, interval=interval)
    stats = pe.run()
    return {"y": pe.output_values(Y, "fp16"), "want": x * x, "stats": stats,
            "received": pe.gpr(11) == 1}


def run_wafer(items: int = 64, capacity: int = 4, interval: int = 1, seed: int = 0) -> dict:
    """The same program on PE (0, 0) of a wafer; x arrives from the west edge port, one
    wavelet every ``interval`` cycles, and y leaves through the east one."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-4, 4, items).astype(np.float16)
    w = ws.Wafer(1, 1)
    w.route(X, [(0, -1), (0, 0)])
    w.route(Y, [(0, 0), (0, 1)])
    w.pe(0, 0).load(SOURCE.format(n=items, cap=capacity))
    w.launch("main")
    w.stream((0, -1), X, x, cycle=10 + interval * np.arange(items))
    run = w.run()
    return {"y": w.collect((0, 1)).values("fp16", color=Y), "want": x * x,
            "stats": run.pes[(0, 0)], "received": w.pe(0, 0).gpr(11) == 1}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=64)
    ap.add_argument("--capacity", type=int, default=4)
    ap.add_argument("--wafer", action="store_true", help="on PE (0, 0) of a wafer")
    args = ap.parse_args(argv)
    r = (run_wafer if args.wafer else run)(args.items, args.capacity)
    s = r["stats"]
    ok = np.array_equal(r["y"], r["want"]) and r["received"]
    print(f"{args.items} elements through a {args.capacity}-element FIFO: {s['cycles']} cycles, "
          f"{s['tasks_started'].get(DRAIN, 0)} drain tasks, {s['suspensions']} suspensions")
    print(f"  output equals x*x in order: {ok}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
