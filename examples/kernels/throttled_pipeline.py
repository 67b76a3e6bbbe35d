"""Conformance program 4: a consumer that throttles its producer with block / unblock.

A producer (the bench, standing for an upstream PE) offers one wavelet per cycle on color
C. The consumer task of C handles a wavelet, then blocks C and activates a slow `work`
task; `work` unblocks C when it is done [0389]. While C is blocked its wavelets stay
queued [0390]; the queue fills to its stall threshold and backpressure holds the
producer back [0329]-[0330]. Nothing is lost, the queue never exceeds its capacity, and
the producer's average rate falls to the consumer's.

On a wafer (``run_wafer``) the producer is a real PE: PE (0, 0) sends the items with one
vector move on color C to PE (0, 1), which runs the consumer above; backpressure crosses
both routers and fills the producer's output queue [0337].

    python examples/kernels/throttled_pipeline.py --items 200 --work 20
"""

from __future__ import annotations

import argparse

import numpy as np

import wafersim as ws

C, OUT, WORK = 5, 9, 41  # input color, output color, local id of the slow part

SOURCE = f"""
.data
dout: .dsd fabric_out, color={OUT}, length=1, sw=1
.code
.task main, 40
.task consume, {C}
.task work, {WORK}

main:    lddwds D[0], dout
         li r5, 3
         li r9, {{work}}
         term

consume: block {C}                 ; throttle: no more wavelets of C until unblocked
         mul16.o3 r0, r2, r5       ; y = 3 x + 1
         add16 r0, r0, #1
         mov16 D[0], r0
         activate.t {WORK}         ; the slow part of the item

work:    mov16 r1, r9
spin:    addi r1, -1
         eq16 r1, #0
         bf spin
         unblock.t {C}             ; ready for the next item
"""


PRODUCER = f"""
.data
x:    .space i16, {{n}}
dx:   .dsd mem1d, base=x, length={{n}}, stride=2
dc:   .dsd fabric_out, color={C}, length={{n}}, sw=1
.export x
.code
.task main, 40
main: lds1wds S1[0], dx
      lddwds D[0], dc
      mov16.t D[0], S1[0]          ; as fast as the fabric takes them
"""


def run(items: int = 200, work: int = 20, depth: int = 6, sample: int = 25) -> dict:
    pe = ws.pe.LonePE(input_queue_depth=depth)
    pe.load(SOURCE.format(work=work))
    pe.launch("main")
    x = np.arange(items, dtype=np.int16)
    pe.inject(C, x, dtype="i16", start=5)  # offered at one wavelet per cycle
    backlog = []  # (cycle, accepted by the CE, consumed)
    while not pe.idle:
        pe.run(sample)
        accepted = items - pe.pending_injections(C)
        backlog.append((pe.cycle, accepted, len(pe.output(OUT)["data"])))
    out = pe.output_values(OUT, "i16")
    return {"out": out, "want": (3 * x + 1).astype(np.int16), "backlog": np.array(backlog),
            "stats": pe.stats(), "depth": depth}


def run_wafer(items: int = 200, work: int = 20, depth: int = 6, sample: int = 25) -> dict:
    """Producer on PE (0, 0), consumer on PE (0, 1), results out of the east edge port.
    ``backlog`` rows: (cycle, items the producer sent, items the consumer finished)."""
    w = ws.Wafer(1, 2, ce={"input_queue_depth": depth})
    w.route(C, [(0, 0), (0, 1)])
    w.route(OUT, [(0, 1), (0, 2)])
    w.pe(0, 0).load(PRODUCER.format(n=items))
    w.pe(0, 1).load(SOURCE.format(work=work))
    x = np.arange(items, dtype=np.int16)
    w.memcpy_h2d("x", x, rect=(0, 0))
    w.launch("main")
    backlog = []
    while True:
        r = w.run(max_cycles=sample)
        backlog.append((w.cycle, w.pe(0, 0).stats()["wavelets_out"],
                        w.pe(0, 1).stats()["wavelets_out"]))
        if r.quiescent:
            break
    out = w.collect((0, 2)).values("i16", color=OUT)
    return {"out": out, "want": (3 * x + 1).astype(np.int16), "backlog": np.array(backlog),
            "stats": w.pe(0, 1).stats(), "producer": w.pe(0, 0).stats(),
            "router_max": w.counters().occupancy_max, "depth": depth, "wafer": w}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=200)
    ap.add_argument("--work", type=int, default=20)
    ap.add_argument("--wafer", action="store_true", help="producer and consumer on two PEs")
    args = ap.parse_args(argv)
    r = (run_wafer if args.wafer else run)(args.items, args.work)
    s, b = r["stats"], r["backlog"]
    ok = np.array_equal(r["out"], r["want"])
    rate_in = b[-1, 1] / b[-1, 0]
    rate_out = b[-1, 2] / b[-1, 0]
    print(f"{args.items} items, {args.work}-iteration work per item: {s['cycles']} cycles")
    print(f"  all items processed in order: {ok}; queue high-water mark "
          f"{s['max_input_occupancy'][C]} of {r['depth']}")
    print(f"  accepted {rate_in:.4f} / consumed {rate_out:.4f} items per cycle; "
          f"largest backlog {int(np.max(b[:, 1] - b[:, 2]))} wavelets")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
