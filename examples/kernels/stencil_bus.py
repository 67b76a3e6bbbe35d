"""Conformance program 10: a 2D five-point stencil whose data moves over switched buses in
both directions of both axes; route switches hold every sender until its receiver's
router takes it (docs/fabric.md, "Switches").

Each PE (r, c) holds n values u[r, c] and computes y = u + u(west) + u(east) + u(south)
+ u(north) (zero beyond the border), element by element. Four colors carry the values:
EB east, WB west, NB north, SB south (north is +row). On EB, router c's route sends its
own PE's values east (rx RAMP, tx E, position 0); its switch has two more positions,
{tx: RAMP} and {rx: W}, so it ends up taking the west neighbour's values down its ramp
(rx W, tx RAMP). Every PE sends its values on EB, then two switch-only control wavelets
that advance its own router (hop 0) twice: the first leaves east with the values, the
second comes back down its own ramp (position 1) and is taken by no CE. The west
neighbour's values wait, held on the link by the switch, until the router reaches
position 2. WB, NB and SB are the same, mirrored and turned. The last router of a bus
only receives: it has the plain route rx W, tx RAMP (on EB).

A PE sends on EB, WB, NB, SB in that order (each send waits while its receiver holds
it) and receives from its neighbours with four microthreads (UE [0500]), one per input
color, each adding an incoming vector into y, so receiving never waits for sending.

    python examples/kernels/stencil_bus.py --rows 3 --cols 4 --n 6
"""

from __future__ import annotations

import argparse

import numpy as np

import wafersim as ws

EB, WB, NB, SB = 1, 2, 3, 4   # the buses: each color's input uses microthread (color & 7)
MAIN = 40
# Per bus: the direction its values go, where they come from, and the PE flag that says
# whether there is a neighbour that way.
BUSES = {EB: ("E", "W"), WB: ("W", "E"), NB: ("N", "S"), SB: ("S", "N")}

SOURCE = f"""
.data
to:     .i16 0, 0, 0, 0         ; 1: a neighbour to the E, W, N, S (send on EB, WB, NB, SB)
u:      .space fp16, {{n}}
y:      .space fp16, {{n}}
du:     .dsd mem1d, base=u, length={{n}}, stride=2
dy:     .dsd mem1d, base=y, length={{n}}, stride=2
{{descriptors}}
.export to, u, y

.code
.task main, {MAIN}
main:   block {EB}              ; the buses are read by microthreads, not by tasks
        block {WB}
        block {NB}
        block {SB}
        lddwds  D[1], dy
        lds1wds S1[1], du
        mov16   D[1], S1[1]     ; y = u
        li r9, switch_cmds(adv, switch_only=1)
        li r8, 0
{{receives}}
{{sends}}
        term
"""


def program(n: int) -> str:
    flag = {"E": 0, "W": 1, "N": 2, "S": 3}  # index in `to`
    desc, receives, sends = [], [], []
    for k, (color, (to, frm)) in enumerate(BUSES.items()):
        desc += [f"in{color}:  .dsd fabric_in, length={n}, sw=1, ue=1, sc=1, ch={color >> 3}, "
                 f"utid={color & 7}, ac=none",
                 f"out{color}: .dsd fabric_out, color={color}, length={n}, sw=1",
                 f"ctl{color}: .dsd fabric_out, color={color}, length=1, sw=1, c=1, index=0"]
        # the bus brings values from `frm` when this PE has a neighbour there; each
        # microthread keeps descriptor registers of its own (2..5)
        d = 2 + k
        receives += [f"        ld16 r10, to + {2 * flag[frm]}    ; a neighbour to the {frm}?",
                     "        eq16 r10, #0",
                     f"        bt skip_in{color}",
                     f"        lddwds  D[{d}], dy",
                     f"        lds0wds S0[{d}], dy",
                     f"        lds1wds S1[{d}], in{color}",
                     f"        faddh   D[{d}], S0[{d}], S1[{d}]    ; y += what comes (UE)",
                     f"skip_in{color}:"]
        # sends finish before the next starts: they share registers 6 and 7
        sends += [f"        ld16 r10, to + {2 * flag[to]}    ; a neighbour to the {to}?",
                  "        eq16 r10, #0",
                  f"        bt skip_out{color}",
                  f"        lddwds  D[6], out{color}",
                  "        lds1wds S1[6], du",
                  "        mov16   D[6], S1[6]     ; u on the bus (held until taken)",
                  f"        lddwds  D[7], ctl{color}",
                  "        mov32   D[7], r8        ; advance my router's switch ...",
                  "        mov32   D[7], r8        ; ... twice",
                  f"skip_out{color}:"]
    return SOURCE.format(n=n, descriptors="\n".join(desc), receives="\n".join(receives),
                         sends="\n".join(sends))


def setup(w: ws.Wafer) -> None:
    """Routes and switches of the four buses over the whole wafer."""
    size = {"E": w.cols, "W": w.cols, "N": w.rows, "S": w.rows}
    for color, (to, frm) in BUSES.items():
        for r in range(w.rows):
            for c in range(w.cols):
                # position along the bus: 0 for the first sender, size - 1 for the last receiver
                i = {"E": c, "W": w.cols - 1 - c, "N": r, "S": w.rows - 1 - r}[to]
                if size[to] == 1:
                    continue
                rt = w.router(r, c)
                if i == size[to] - 1:
                    rt.set_route(color, rx=[frm], tx=["RAMP"])  # the last only receives
                    continue
                rt.set_route(color, rx=["RAMP"], tx=[to])
                # the first sender's last position takes an edge port that brings nothing
                rt.set_switch(color, [{"tx": ["RAMP"]}, {"rx": [frm]}])


def reference(u: np.ndarray) -> np.ndarray:
    """y = u + its four neighbours, zero beyond the border (u: rows x cols x n)."""
    p = np.pad(u.astype(np.float64), ((1, 1), (1, 1), (0, 0)))
    y = p[1:-1, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] + p[:-2, 1:-1] + p[2:, 1:-1]
    return y.astype(np.float16)


def run(rows: int = 3, cols: int = 4, n: int = 6, seed: int = 0, threads: int | None = None,
        parallel_min_routers: int | None = None) -> dict:
    rng = np.random.default_rng(seed)
    u = rng.integers(-8, 9, (rows, cols, n)).astype(np.float16)  # small integers: exact sums
    w = ws.Wafer(rows, cols, threads=threads)
    everything = (0, 0, rows, cols)
    w.load(program(n), rect=everything)
    if parallel_min_routers is not None:  # after load, which sets the default for CEs
        w.parallel_min_routers = parallel_min_routers
    setup(w)
    r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    to = np.stack([c < cols - 1, c > 0, r < rows - 1, r > 0], axis=-1)  # E, W, N, S
    w.memcpy_h2d("to", to.astype(np.int16), rect=everything)
    w.memcpy_h2d("u", u, rect=everything)
    w.launch("main")
    stats = w.run()
    return {"y": w.memcpy_d2h("y", rect=everything), "numpy": reference(u), "stats": stats,
            "wafer": w}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=3)
    ap.add_argument("--cols", type=int, default=4)
    ap.add_argument("--n", type=int, default=6)
    args = ap.parse_args(argv)
    r = run(args.rows, args.cols, args.n)
    ok = np.array_equal(r["y"], r["numpy"])
    print(f"{args.rows} x {args.cols} PEs, {args.n} values each: {r['stats'].cycles} cycles")
    print(f"  y = u + its four neighbours on every PE, as numpy says: {ok}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
