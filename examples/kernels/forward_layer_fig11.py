"""Conformance program 6: the forward-pass state machine of seed 000 FIG. 11 on one PE,
computing one dense layer, y = relu(W a + b).

Four tasks, as in [0410]-[0413] and the descriptor table of [0415]:

* ``f_rxact_acc`` (color A): each nonzero activation a_j multiplies column j of W into the
  forward partial sums (``wcol``, ``fpsum``) with one fused multiply-add vector operation;
* ``f_rxact_close`` (started by the closeout on color A, whose index names it [0371]):
  starts the partial-sum ring by sending the ring's starting sums on color P. This PE is
  the whole ring: the starting sums are the bias (the share of a PE that holds b) and the
  ring closes through the on-ramp -> off-ramp loopback [0092]. The send is a microthread
  (UE) so that the ring's own wavelets can drain while it runs, the "additional
  processing to prevent deadlock" of [0412];
* ``f_psum_prop`` (color P): adds the incoming partial sum to the local one; at the end of
  the ring that is the final sum: apply ReLU and queue nonzero outputs (neuron index and
  value) in a FIFO;
* ``f_txact_tx`` (color K, self-triggered by a wavelet the PE sends itself, Wake [0413]):
  dequeues one activation and sends it on color N, reschedules itself while items remain,
  and sends a closeout when everything is out.

Closeouts order the phases [0419]: every activation is accumulated before the ring starts,
and every output is sent before the closeout that ends the wavefront.

On a wafer (``run_wafer``) the same four tasks run on a ring of PEs (a 2 x k block), as
in FIG. 10B / [0419]: the activations are multicast to every PE of the ring and each
accumulates the inputs it holds weights for; each PE starts the ring with its share of the
neurons (its start list, sent as (partial sum, neuron index) pairs in dense wavelets);
f_psum:prop adds its own partial sum and passes the pair on, or, at the end of the ring,
adds the bias, applies ReLU and queues the activation for f_txact:tx. The ring's hops
alternate between two colors; a PE keeps its incoming ring color blocked until its own
activations are all accumulated (its closeout), the ordering [0419] asks for.

    python examples/kernels/forward_layer_fig11.py --inputs 24 --outputs 16
"""

from __future__ import annotations

import argparse
from fractions import Fraction

import numpy as np

import wafersim as ws

A, P, N, K = 1, 2, 3, 4        # activations in, psum ring, activations out, wake
CLOSE, RING_SENT = 33, 34      # local ids: the closeout's task, the ring send's AC
NEXT_CLOSE = 33                # index of the closeout we send (the next layer's close task)

SOURCE = f"""
.data
; descriptors of [0415]
wcol:   .dsd mem1d, base=w, length={{n}}, stride=2, wli=1     ; DS2: column j at w + GPR4
fpsum:  .dsd mem1d, base=psum, length={{n}}, stride=2          ; DS3
bias_v: .dsd mem1d, base=bias, length={{n}}, stride=2          ; the ring's starting sums
ring:   .dsd fabric_out, color={P}, length={{n}}, sw=1, ue=1, utid=1, ac={RING_SENT}  ; DS5
fact:   .dsd fabric_out, color={N}, length=1, sw=1, wli=1      ; DS7: index = neuron
wake:   .dsd fabric_out, color={K}, length=1, sw=1             ; DS8
fclose: .dsd fabric_out, color={N}, length=1, sw=1, c=1, index={NEXT_CLOSE}   ; DS9
xq:     .xdsd circular, start=queue, end=queue + 4 * {{n}}, fifo=1
qw:     .dsd circular, base=queue, length=1, xdsr=2
qr:     .dsd circular, base=queue, length=1, xdsr=2
w:      .space fp16, {{n}} * {{m}}
psum:   .space fp16, {{n}}
bias:   .space fp16, {{n}}
queue:  .space u16, 2 * {{n}}                                  ; (neuron, value) pairs
.export w, bias, psum

.code
.task main, 40
.task f_rxact_acc, {A}
.task f_rxact_close, {CLOSE}
.task f_psum_prop, {P}
.task f_txact_tx, {K}
.task ring_sent, {RING_SENT}

main:   lds0wds S0[1], fpsum
        lddwds  D[1], fpsum
        lds1wds S1[1], wcol
        lds1wds S1[2], bias_v
        lddwds  D[2], ring
        lddwds  D[3], fact
        lddwds  D[4], wake
        lddwds  D[5], fclose
        ldxds   X[2], xq
        lddwds  D[8], qw
        lds1wds S1[8], qr
        li r10, 2 * {{n}}               ; bytes per column of w
        li r12, {{n}}
        term

f_rxact_acc:                            ; a_j in GPR2, j in GPR4 [0346]
        mul16 r4, r4, r10
        fmach.t D[1], S0[1], S1[1]      ; fpsum += w[:, j] * a_j

f_rxact_close:
        li r6, psum                     ; walks the local partial sums
        movi r11, 0                     ; next neuron
        movi r13, 0                     ; activations queued
        mov16.t D[2], S1[2]             ; start the ring (a microthread)

f_psum_prop:                            ; incoming partial sum in GPR2
        faddh.o3 r0, r2, [r6]           ; + local partial sum: the final sum
        addi r6, 2
        reluh r0, r0
        eq16 r0, #0
        bt next                         ; only nonzero activations go on [0408]
        mov16 D[8], r11                 ; queue (neuron, value)
        mov16 D[8], r0
        addi r13, 1
        eq16 r13, #1
        bf next
        mov16 D[4], r0                  ; first item: wake the transmitter
next:   addi r11, 1
        eq16 r11, r12
        bt last
        term
last:   eq16 r13, #0
        bt.t wake_to_close              ; nothing queued: wake it just to close out
        term
wake_to_close:
        mov16.t D[4], r0

f_txact_tx:
        eq16 r13, #0
        bt close_out
        mov16 r4, S1[8]                 ; dequeue neuron index
        mov16 r5, S1[8]                 ; and value
        mov16 D[3], r5                  ; send it, index = neuron
        addi r13, -1
        eq16 r13, #0
        bt drained
        mov16.t D[4], r5                ; more queued: reschedule myself [0413]
drained:
        eq16 r11, r12                   ; every partial sum seen?
        bt close_out
        term
close_out:
        mov16.t D[5], r5                ; closeout to the next layer [0413]

ring_sent:
        term
"""


RING = (2, 5)  # the ring's colors, alternating by hop

RING_SOURCE = f"""
; PE {{k}} of a ring of {{R}}: inputs [{{j0}}, {{j0}} + {{mk}}), start list [{{o0}}, {{o0}} + {{ns}}),
; end of the ring for neurons [{{f0}}, {{f0}} + {{fn}})
.data
wcol:   .dsd mem1d, base=w, length={{n}}, stride=2, wli=1          ; column j at w + GPR4
fpsum:  .dsd mem1d, base=pairs, length={{n}}, stride=4             ; partial sums (pair values)
start:  .dsd mem1d, base=pairs + 4 * {{o0}}, length={{ns}}, stride=4  ; my start list, as pairs
ring:   .dsd fabric_out, color={{pout}}, length={{ns}}, sw=1, ue=1, utid=1, ac={RING_SENT}
pair_i: .dsd mem1d, base=pairs, length=1, stride=4, wli=1         ; pair i at pairs + GPR4
hop:    .dsd fabric_out, color={{pout}}, length=1, sw=1
fact:   .dsd fabric_out, color={N}, length=1, sw=1, wli=1          ; index = neuron
wake:   .dsd fabric_out, color={K}, length=1, sw=1
fclose: .dsd fabric_out, color={N}, length=1, sw=1, c=1, index={NEXT_CLOSE}
xq:     .xdsd circular, start=queue, end=queue + 4 * {{n}}, fifo=1
qw:     .dsd circular, base=queue, length=1, xdsr=2
qr:     .dsd circular, base=queue, length=1, xdsr=2
j0:     .i16 {{j0}}
mk:     .i16 {{mk}}
f0:     .i16 {{f0}}
fn:     .i16 {{fn}}
w:      .space fp16, {{n}} * {{mk_space}}
pairs:  .u16 {{pairs}}                                             ; (partial sum, neuron index)
bias:   .space fp16, {{n}}
queue:  .space u16, 2 * {{n}}
.export w, bias, pairs

.code
.task main, 40
.task f_rxact_acc, {A}
.task f_rxact_close, {CLOSE}
.task f_psum_prop, {{pin}}
.task f_txact_tx, {K}
.task ring_sent, {RING_SENT}

main:   lds0wds S0[1], fpsum
        lddwds  D[1], fpsum
        lds1wds S1[1], wcol
        lds1wds S1[2], start
        lddwds  D[2], ring
        lddwds  D[3], hop
        lds1wds S1[4], pair_i
        lddwds  D[4], wake
        lddwds  D[5], fact
        lddwds  D[6], fclose
        ldxds   X[2], xq
        lddwds  D[8], qw
        lds1wds S1[8], qr
        li r10, 2 * {{n}}               ; bytes per column of w
        ld16 r7, j0
        ld16 r8, mk
        ld16 r9, f0
        ld16 r12, fn
        block {{pin}}                   ; no partial sums before my activations are in [0419]
        term

f_rxact_acc:                            ; a_j in GPR2, j in GPR4 [0346]
        sub16 r4, r4, r7
        ltu16 r4, r8                    ; one of my inputs?
        bt mine
        term
mine:   mul16 r4, r4, r10
        fmach.t D[1], S0[1], S1[1]      ; fpsum += w[:, j] * a_j

f_rxact_close:
        unblock {{pin}}
        mov32.t D[2], S1[2]             ; start the ring: a microthread [0411], [0412]

f_psum_prop:                            ; incoming (sum, neuron i) in GPR2, GPR3
        mov16 r4, r3
        add16 r4, r4, r4
        li r6, bias
        add16 r6, r6, r4                ; r6 = &bias[i]
        add16 r4, r4, r4                ; GPR4 = 4 i: pair i
        faddh r2, r2, S1[4]             ; + my partial sum of neuron i
        mov16 r14, r3
        sub16 r14, r14, r9
        ltu16 r14, r12                  ; does the ring end here for neuron i?
        bt final
        mov32.t D[3], r2                ; no: pass (sum, i) on [0412]
final:  faddh r2, r2, [r6]              ; the final sum + b_i
        reluh r2, r2
        addi r11, 1
        eq16 r2, #0
        bt check                        ; only nonzero activations go on [0408]
        mov16 D[8], r3                  ; queue (neuron, value)
        mov16 D[8], r2
        addi r13, 1
        eq16 r13, #1
        bf check
        mov16 D[4], r2                  ; first item: wake the transmitter
check:  eq16 r11, r12
        bt last
        term
last:   eq16 r13, #0
        bt.t wake_to_close              ; nothing queued: wake it just to close out
wake_to_close:
        mov16.t D[4], r2

f_txact_tx:
        eq16 r13, #0
        bt close_out
        mov16 r4, S1[8]                 ; dequeue neuron index
        mov16 r5, S1[8]                 ; and value
        mov16 D[5], r5                  ; send it, index = neuron
        addi r13, -1
        eq16 r13, #0
        bt drained
        mov16.t D[4], r5                ; more queued: reschedule myself [0413]
drained:
        eq16 r11, r12                   ; every final sum seen?
        bt close_out
        term
close_out:
        mov16.t D[6], r5                ; closeout to the next layer [0413]

ring_sent:
        term
"""


def ring_layout(cols: int) -> list[tuple[int, int]]:
    """The ring of a 2 x cols block: east along row 0, west along row 1."""
    return [(0, c) for c in range(cols)] + [(1, c) for c in reversed(range(cols))]


def exact(v) -> Fraction:
    return Fraction(float(v))


def round16(value: Fraction) -> np.float16:
    guess = np.float16(float(value))
    cands = {guess, np.nextafter(guess, np.float16(np.inf)), np.nextafter(guess, np.float16(-np.inf))}
    return min(cands, key=lambda c: (abs(exact(c) - value), int(np.array(c).view(np.uint16)) & 1))


def reference(w, a, b):
    """Fused multiply-adds rounded once each, in arrival order; then + bias; then ReLU."""
    out = []
    for k in range(w.shape[0]):
        acc = np.float16(0)
        for j in np.flatnonzero(a):
            acc = round16(exact(acc) + exact(w[k, j]) * exact(a[j]))
        y = round16(exact(b[k]) + exact(acc))
        out.append(max(y, np.float16(0)) if not np.isnan(y) else y)
    return np.array(out, dtype=np.float16)


def run(inputs: int = 24, outputs: int = 16, density: float = 0.7, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    w = rng.uniform(-1, 1, (outputs, inputs)).astype(np.float16)
    b = rng.uniform(-0.5, 0.5, outputs).astype(np.float16)
    a = rng.uniform(0, 1, inputs).astype(np.float16)
    a[rng.random(inputs) > density] = 0
    pe = ws.pe.LonePE(loopback=[P, K], trace=True)
    pe.load(SOURCE.format(n=outputs, m=inputs))
    pe.write("w", w.T.ravel())
    pe.write("bias", b)
    pe.launch("main")
    nz = np.flatnonzero(a)
    pe.inject(A, a[nz], index=nz, start=10)           # only nonzero activations [0408]
    pe.close(A, CLOSE, start=10 + len(nz))            # the closeout starts the ring
    stats = pe.run()
    out = pe.output(N)
    return {"out": out, "reference": reference(w, a, b), "stats": stats, "pe": pe,
            "nonzero": len(nz)}


def check(r) -> bool:
    out, want = r["out"], r["reference"]
    data = out["data"][~out["ctrl"]].astype(np.uint16).view(np.float16)
    index = out["index"][~out["ctrl"]]
    nz = np.flatnonzero(want)
    closeout_last = bool(out["ctrl"][-1]) and int(out["index"][-1]) == NEXT_CLOSE
    return (list(index) == list(nz) and np.array_equal(data, want[nz]) and closeout_last
            and int(out["ctrl"].sum()) == 1)


def run_wafer(inputs: int = 24, outputs: int = 16, density: float = 0.7, seed: int = 0,
              ring_cols: int = 2, trace=None) -> dict:
    """The layer on a ring of 2 x ``ring_cols`` PEs; see the module docstring. ``trace``:
    a path for a Chrome/Perfetto trace of the run."""
    ring = ring_layout(ring_cols)
    R = len(ring)
    if outputs < R:
        raise ValueError(f"a ring of {R} PEs needs at least {R} outputs (one start list each)")
    rng = np.random.default_rng(seed)
    w_ = rng.uniform(-1, 1, (outputs, inputs)).astype(np.float16)
    b = rng.uniform(-0.5, 0.5, outputs).astype(np.float16)
    a = rng.uniform(0, 1, inputs).astype(np.float16)
    a[rng.random(inputs) > density] = 0
    ins = np.array_split(np.arange(inputs), R)        # the inputs each PE holds weights for
    segs = np.array_split(np.arange(outputs), R)      # each PE's start list [0411]
    wafer = ws.Wafer(2, ring_cols)
    for k, (r, c) in enumerate(ring):
        nxt = ring[(k + 1) % R]
        fin = segs[(k + 1) % R]                        # the ring of the next PE's list ends here
        pairs = ", ".join(f"0, {i}" for i in range(outputs))
        src = RING_SOURCE.format(k=k, R=R, n=outputs, j0=int(ins[k][0]) if len(ins[k]) else 0,
                                 mk=len(ins[k]), mk_space=max(len(ins[k]), 1),
                                 o0=int(segs[k][0]), ns=len(segs[k]), f0=int(fin[0]),
                                 fn=len(fin), pout=RING[k % 2], pin=RING[(k - 1) % 2],
                                 pairs=pairs)
        wafer.pe(r, c).load(src)
        wk = np.zeros((max(len(ins[k]), 1), outputs), dtype=np.float16)
        wk[:len(ins[k])] = w_[:, ins[k]].T             # column-major: input j's column
        wafer.memcpy_h2d("w", wk.ravel(), rect=(r, c))
        wafer.memcpy_h2d("bias", b, rect=(r, c))
        wafer.route(RING[k % 2], [(r, c), nxt])        # the ring's hop k
        wafer.route(K, [(r, c)])                       # wake: the PE's own ramp [0413]
        wafer.route(N, [(r, c), (-1 if r == 0 else 2, c)])  # activations out, to the host
    for c in range(ring_cols):                         # activations in, to every ring PE
        wafer.router(0, c).set_route(A, rx=["W"], tx=["RAMP", "N"] + (["E"] if c + 1 < ring_cols else []))
        wafer.router(1, c).set_route(A, rx=["S"], tx=["RAMP"])
    wafer.launch("main")
    nz = np.flatnonzero(a)
    wafer.stream((0, -1), A, a[nz], index=nz)          # only nonzero activations [0408]
    wafer.close((0, -1), A, CLOSE)                     # the closeout starts the ring
    run = wafer.run(trace=trace)
    got = wafer.collect()
    return {"got": got, "ring": ring, "reference": ring_reference(w_, a, b, ins, segs),
            "stats": run, "wafer": wafer, "nonzero": len(nz)}


def ring_reference(w, a, b, ins, segs):
    """Each PE's partial sums (fused multiply-adds over its inputs in arrival order); neuron
    i's sum travels the ring from the PE whose start list holds it, each PE adding its own;
    the last adds b_i; then ReLU."""
    R = len(ins)
    local = []
    for k in range(R):
        acc = [np.float16(0)] * w.shape[0]
        for j in ins[k]:
            if a[j] == 0:
                continue
            acc = [round16(exact(acc[i]) + exact(w[i, j]) * exact(a[j])) for i in range(w.shape[0])]
        local.append(acc)
    out = np.zeros(w.shape[0], dtype=np.float16)
    for s, seg in enumerate(segs):
        for i in seg:
            acc = local[s][i]
            for h in range(1, R):
                acc = round16(exact(acc) + exact(local[(s + h) % R][i]))
            y = round16(exact(acc) + exact(b[i]))
            out[i] = max(y, np.float16(0)) if not np.isnan(y) else y
    return out


def check_wafer(r) -> bool:
    """Every nonzero activation arrives once with its neuron index; every ring PE sends
    exactly one closeout, after its activations."""
    got, want = r["got"], r["reference"]
    ok = True
    idx, val = [], []
    for (row, col) in r["ring"]:
        mine = got.row == row
        mine &= (got.col == col) & (got.color == N)
        ctrl = got.ctrl[mine]
        ok &= int(ctrl.sum()) == 1 and bool(ctrl[-1]) and int(got.index[mine][-1]) == NEXT_CLOSE
        idx += list(got.index[mine][~ctrl])
        val += list(got.data[mine][~ctrl])
    order = np.argsort(idx)
    idx = np.array(idx, dtype=np.int64)[order]
    val = np.array(val, dtype=np.uint32)[order].astype(np.uint16).view(np.float16)
    nz = np.flatnonzero(want)
    return bool(ok) and list(idx) == list(nz) and np.array_equal(val, want[nz])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--inputs", type=int, default=24)
    ap.add_argument("--outputs", type=int, default=16)
    ap.add_argument("--trace", default=None, help="write a Chrome/Perfetto trace here")
    ap.add_argument("--ring", type=int, default=0,
                    help="run on a ring of 2 x RING PEs of a wafer instead of one PE")
    args = ap.parse_args(argv)
    if args.ring:
        r = run_wafer(args.inputs, args.outputs, ring_cols=args.ring, trace=args.trace)
        ok = check_wafer(r)
        s = r["stats"]
        print(f"dense layer {args.inputs} -> {args.outputs} on a ring of {2 * args.ring} PEs "
              f"(FIG. 10B, 11): {s.cycles} cycles, {s.pes.total('tasks_started')} tasks by id")
        print(f"  outputs (nonzero) + one closeout per PE match the reference: {ok}")
        return 0 if ok else 1
    r = run(args.inputs, args.outputs)
    ok = check(r)
    s = r["stats"]
    names = {A: "f_rxact:acc", CLOSE: "f_rxact:close", P: "f_psum:prop", K: "f_txact:tx"}
    tasks = ", ".join(f"{names[t]} x{s['tasks_started'].get(t, 0)}" for t in names)
    print(f"dense layer {args.inputs} -> {args.outputs} on one PE (FIG. 11): {s['cycles']} cycles")
    print(f"  tasks: {tasks}")
    print(f"  outputs (nonzero, in order) + closeout match the reference: {ok}")
    if args.trace:
        r["pe"].write_trace(args.trace)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
