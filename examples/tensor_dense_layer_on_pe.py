"""A dense layer on a PE with an attached tensor unit (seed 002 on a PE of seed 000).

PE (0, 0) holds a batch of inputs X (P x K) and the weights W (K x O) in its memory,
described by 4D DSDs, and runs one tensor instruction:

* ``int8``: ``tlayer`` streams X @ W + b through the matrix array, the vector program
  (ReLU + requantization to u8, loaded from PE memory with ``tvprog``) and the
  post-processor, and sends the O x P bytes as wavelets to PE (0, 1), which stores them;
* ``fp16`` (wafersim's training extension): ``tmm`` gives fp32 sums, which the compute
  element finishes with its own vector instructions (+ b, ReLU, to fp16) and sends to
  PE (0, 1).

The pass runs asynchronously: the issuing task ends, and the unit activates the ``done``
task when its results have left (docs/tensor.md, "On a processing element").

    python examples/tensor_dense_layer_on_pe.py --dtype int8 --batch 4 --inputs 64 --outputs 32
"""

from __future__ import annotations

import argparse

import numpy as np

import wafersim as ws
from wafersim.reference import int8_net

Y = 5          # results from PE (0, 0) to PE (0, 1)
DONE = 41      # the unit activates it when the pass is over
SCALE, SHIFT, ZP = 3, 9, 2

INT8_SOURCE = """
; PE (0, 0): y = requant(relu(X @ W + b)) on the tensor unit, sent to PE (0, 1) as bytes
.data
xx:   .xdsd mem4d, dims=({K}, {P}), strides=(unit, {K})        ; X: P rows of K bytes
xw:   .xdsd mem4d, dims=({O}, {K}), strides=(unit, {O})        ; W: K rows of O bytes
dx:   .dsd mem4d, base=x, dims=({K}, {P}), xdsr=2
dw:   .dsd mem4d, base=w, dims=({O}, {K}), xdsr=3
db:   .dsd mem1d, base=b, length={O}, stride=4
dp:   .dsd mem1d, base=prog, length={bundles}, stride=16
dy:   .dsd fabric_out, color={Y}, length={O} * {P}, sw=1
x:    .space u8, {P} * {K}
w:    .space i8, {K} * {O}
b:    .space i32, {O}
prog: .space u32, 4 * {bundles}
.export x, w, b, prog
.code
.task main, 40
.task done, {DONE}
main: ldxds X[2], xx
      ldxds X[3], xw
      lds0wds S0[1], dx
      lds1wds S1[1], dw
      lds1wds S1[2], db
      lds1wds S1[3], dp
      lddwds D[1], dy
      tvprog S1[3]             ; the vector program, from PE memory
      tbias S1[2]
      tdone {DONE}
      tlayer.t D[1], S0[1], S1[1]
done: term
"""

FP16_SOURCE = """
; PE (0, 0): y = fp16(relu(X @ W + b)): the pass in fp32 on the unit, the rest on the CE
.data
xx:   .xdsd mem4d, dims=({K}, {P}), strides=(unit, {K2})
xw:   .xdsd mem4d, dims=({O}, {K}), strides=(unit, {O2})
dx:   .dsd mem4d, base=x, dims=({K}, {P}), xdsr=2
dw:   .dsd mem4d, base=w, dims=({O}, {K}), xdsr=3
dacc: .dsd mem1d, base=acc, length={O} * {P}, stride=4
dbia: .dsd mem1d, base=b, length={O} * {P}, stride=4
dh:   .dsd mem1d, base=h, length={O} * {P}, stride=2
dy:   .dsd fabric_out, color={Y}, length={O} * {P}, sw=1
x:    .space fp16, {P} * {K}
w:    .space fp16, {K} * {O}
acc:  .space fp32, {P} * {O}
b:    .space fp32, {P} * {O}          ; the bias, repeated per position
h:    .space fp16, {P} * {O}
.export x, w, b
.code
.task main, 40
.task done, {DONE}
main: ldxds X[2], xx
      ldxds X[3], xw
      lds0wds S0[1], dx
      lds1wds S1[1], dw
      lddwds D[1], dacc
      tdone {DONE}
      tmm.t D[1], S0[1], S1[1]        ; P x O fp32 sums into acc
done: lds0wds S0[2], dacc
      lddwds D[2], dacc
      lds1wds S1[2], dbia
      fadds D[2], S0[2], S1[2]        ; + b
      lds1wds S1[3], dacc
      lddwds D[3], dacc
      relus D[3], S1[3]
      lds1wds S1[4], dacc
      lddwds D[4], dh
      fs2h D[4], S1[4]                ; to fp16, nearest-even
      lds1wds S1[5], dh
      lddwds D[5], dy
      mov16.t D[5], S1[5]             ; to PE (0, 1)
"""

RECEIVER = """
; PE (0, 1): stores what arrives on color {Y}
.data
din:  .dsd fabric_in, length={n}, sw=1, sc=1, ch={ch}, utid={ut}
dy:   .dsd mem1d, base=y, length={n}, stride=2
y:    .space u16, {n}
.export y
.code
.task main, 40
main: block {Y}                  ; read by the move, not by tasks
      lds1wds S1[0], din
      lddwds D[0], dy
      mov16.t D[0], S1[0]
"""


def _wafer(tensor_unit) -> ws.Wafer:
    w = ws.Wafer(1, 2, tensor_unit=tensor_unit)
    w.route(Y, [(0, 0), (0, 1)])
    return w


def run_int8(batch: int = 4, inputs: int = 64, outputs: int = 32, seed: int = 0,
             config: ws.TensorUnitConfig | None = None) -> dict:
    """The int8 layer; ``y`` (O x P bytes as received by PE (0, 1)) against int8_net."""
    P, K, O = batch, inputs, outputs
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 256, (P, K), dtype=np.uint8)
    wt = rng.integers(-128, 128, (K, O), dtype=np.int8)
    b = rng.integers(-2000, 2000, O, dtype=np.int32)
    words = ws.asm.vector.assemble(ws.tensor.quantize_program(SCALE, SHIFT, ZP))
    w = _wafer(config or ws.TensorUnitConfig())
    w.pe(0, 0).load(INT8_SOURCE.format(P=P, K=K, O=O, Y=Y, DONE=DONE, bundles=len(words)))
    w.pe(0, 1).load(RECEIVER.format(n=O * P, Y=Y, ch=Y >> 3, ut=Y & 7))
    w.memcpy_h2d("x", x.ravel(), rect=(0, 0))
    w.memcpy_h2d("w", wt.ravel(), rect=(0, 0))
    w.memcpy_h2d("b", b, rect=(0, 0))
    w.memcpy_h2d("prog", words.view(np.uint32).ravel(), rect=(0, 0))
    w.launch("main")
    stats = w.run()
    y = w.memcpy_d2h("y", rect=(0, 1))[0, 0].astype(np.uint8).reshape(O, P)
    acc = x.astype(np.int64) @ wt.astype(np.int64) + b  # P x O
    want = int8_net.requantize(acc.T, SCALE, SHIFT, ZP)
    return {"y": y, "want": want, "stats": stats, "wafer": w}


def run_fp16(batch: int = 4, inputs: int = 64, outputs: int = 32, seed: int = 0,
             config: ws.TensorUnitConfig | None = None) -> dict:
    """The fp16 layer; ``y`` (P x O fp16 as received) against numpy in float32."""
    P, K, O = batch, inputs, outputs
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (P, K)).astype(np.float16)
    wt = rng.uniform(-1, 1, (K, O)).astype(np.float16)
    b = rng.uniform(-1, 1, O).astype(np.float32)
    w = _wafer(config or ws.TensorUnitConfig(dtype="fp16"))
    w.pe(0, 0).load(FP16_SOURCE.format(P=P, K=K, O=O, K2=2 * K, O2=2 * O, Y=Y, DONE=DONE))
    w.pe(0, 1).load(RECEIVER.format(n=O * P, Y=Y, ch=Y >> 3, ut=Y & 7))
    w.memcpy_h2d("x", x.ravel(), rect=(0, 0))
    w.memcpy_h2d("w", wt.ravel(), rect=(0, 0))
    w.memcpy_h2d("b", np.tile(b, P), rect=(0, 0))
    w.launch("main")
    stats = w.run()
    y = w.memcpy_d2h("y", rect=(0, 1))[0, 0].view(np.float16).reshape(P, O)
    # Each array unit adds the exact fp16 product to an fp32 accumulator, rounding once per
    # step, in depth order (docs/tensor.md); numpy's float32 does the same.
    acc = np.zeros((P, O), np.float32)
    for k in range(K):
        acc = (acc + x[:, k:k + 1].astype(np.float32) * wt[k].astype(np.float32)).astype(np.float32)
    want = np.maximum(acc + b, np.float32(0)).astype(np.float16)
    return {"y": y, "want": want, "numpy": np.maximum(x.astype(np.float64) @ wt + b, 0),
            "stats": stats, "wafer": w}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtype", choices=["int8", "fp16"], default="int8")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--inputs", type=int, default=64)
    ap.add_argument("--outputs", type=int, default=32)
    args = ap.parse_args(argv)
    run = run_int8 if args.dtype == "int8" else run_fp16
    r = run(args.batch, args.inputs, args.outputs)
    s = r["stats"].pes[(0, 0)]
    ok = np.array_equal(r["y"], r["want"])
    print(f"dense layer {args.inputs} -> {args.outputs}, batch {args.batch}, {args.dtype}, on a "
          f"PE's tensor unit: {s['tensor_passes']} pass, {s['tensor_cycles']} unit cycles, "
          f"{s['tensor_macs']} MACs; the run took {r['stats'].cycles} cycles")
    print(f"  the results PE (0, 1) received equal the reference: {ok}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
