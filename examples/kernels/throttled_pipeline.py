"""Conformance program 4: a consumer that throttles its producer with block / unblock.

A producer (the bench, standing for an upstream PE) offers one wavelet per cycle on color
C. The consumer task of C handles a wavelet, then blocks C and activates a slow `work`
task; `work` unblocks C when it is done [0389]. While C is blocked its wavelets stay
queued [0390]; the queue fills to its stall threshold and backpressure holds the
producer back [0329]-[0330]. Nothing is lost, the queue never exceeds its capacity, and
the producer's average rate falls to the consumer's.

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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=200)
    ap.add_argument("--work", type=int, default=20)
    args = ap.parse_args(argv)
    r = run(args.items, args.work)
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
