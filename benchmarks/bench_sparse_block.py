"""Single-weight (unstructured) weight sparsity on one PE: emulated cycles of the three SGD
passes (forward, delta, update) of one block stored compressed (kernels/sparse_block.py,
indexed 1D vectors) at 0% to 90% pruned by a random element mask, and by magnitude
balanced per row (``magnitude_mask``: every row keeps the same count, so the row passes
need no table), against the same passes
over the block stored dense (the program below: one fused multiply-add per row or column,
as the training mapping's dense program). Printed beside Cerebras' Hot Chips 32 (2020)
figures for induced sparsity on CS-1 (about 2x at 25%, 2.4x at 50%), which combine
activation and weight sparsity over a whole network; here one block's passes only.

    python benchmarks/bench_sparse_block.py [--n 32]

Counts are emulated cycles (busy cycles of the PE), identical on every run; no timings.
"""

from __future__ import annotations

import argparse

import numpy as np

import wafersim as ws
from wafersim.kernels.sparse_block import B_DELTA, F_ACT, SparseBlock, magnitude_mask

DENSE = """
.data
d_fw:  .dsd mem1d, base=w, length={n}, stride=4, wli=1          ; row i of W^T (W[:, i])
d_fy:  .dsd mem1d, base=fpsum, length={n}, stride=4
d_bw:  .dsd mem1d, base=w, length={n}, stride={rowb}, wli=1     ; W[j, :]
d_bx:  .dsd mem1d, base=dx, length={n}, stride=4
d_ud:  .dsd mem1d, base=ds, length={n}, stride=4
d_xs:  .dsd mem1d, base=xs, length=1, stride=4, wli=1
d_ds:  .dsd mem1d, base=ds, length=1, stride=4, wli=1
nlr:   .fp32 -0.5
nin4:  .u16 {nin4}
xs:    .space fp32, {n}
fpsum: .space fp32, {n}
dx:    .space fp32, {n}
ds:    .space fp32, {n}
w:     .space fp32, {nn}
.export w
.code
.task main, 20
.task f_act, {F_ACT}
.task b_delta, {B_DELTA}
.task upd, 40
main:   lds0wds S0[0], d_fy
        lds1wds S1[0], d_fw
        lds0wds S0[1], d_bx
        lds1wds S1[1], d_bw
        lds1wds S1[2], d_ud
        lddwds D[5], d_xs
        lddwds D[6], d_ds
        movi r11, {n}                  ; outputs a row (a register: the row's stride)
        term
f_act:  mul16 r4, r4, #4
        mov32 D[5], r2
        mul16 r4, r4, r11
        fmacs.t S0[0], S0[0], S1[0]
b_delta: mul16 r4, r4, #4
        mov32 D[6], r2
        fmacs.t S0[1], S0[1], S1[1]
upd:    movi r7, 0
        ld16 r8, nlr
        ld16 r9, nlr + 2
        ld16 r10, nin4
uloop:  li r6, xs
        add16 r6, r6, r7
        mov32 r2, [r6]
        fmuls r2, r2, r8
        mov16 r4, r7
        mul16 r4, r4, r11
        lds0wds S0[2], d_fw
        fmacs S0[2], S0[2], S1[2]
        add16 r7, r7, #4
        lt16 r7, r10
        bt uloop
        term
"""


def passes(pe, x, d) -> list[int]:
    pe.launch("main")
    pe.run()
    out = []
    for color, v in ((F_ACT, x), (B_DELTA, d)):
        pe.reset_stats()
        pe.inject(color, v, dtype="fp32", index=np.arange(len(v)))
        out.append(pe.run()["busy_cycles"])
    pe.reset_stats()
    pe.launch("upd")
    out.append(pe.run()["busy_cycles"])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=32, help="block size n x n (fp32; at most 63)")
    n = ap.parse_args().n
    rng = np.random.default_rng(0)
    W = rng.normal(0, 1, (n, n)).astype(np.float32)
    x = rng.uniform(0.5, 1, n).astype(np.float32)
    d = rng.uniform(0.5, 1, n).astype(np.float32)
    pe = ws.pe.LonePE()
    pe.load(DENSE.format(n=n, nn=n * n, rowb=4 * n, nin4=4 * n, F_ACT=F_ACT, B_DELTA=B_DELTA))
    pe.write("w", W.T.ravel())
    dense = passes(pe, x, d)
    print(f"one {n} x {n} fp32 block, busy cycles: forward / delta / update (total); "
          f"speed-up against the dense storage")
    print(f"{'mask':<25}{'forward':>9}{'delta':>9}{'update':>9}{'total':>9}{'speed-up':>10}"
          f"{'bytes':>8}")
    print(f"{'dense storage':<25}{dense[0]:>9}{dense[1]:>9}{dense[2]:>9}{sum(dense):>9}{1.0:>9.2f}x"
          f"{4 * n * n:>8}")
    published = {0.25: "  (Hot Chips 32: ~2x)", 0.5: "  (Hot Chips 32: ~2.4x)"}
    runs = [(f"random, {int(p * 100)}% pruned", p, rng.random((n, n)) >= p)
            for p in (0.0, 0.25, 0.5, 0.75, 0.9)]
    runs += [(f"magnitude, {int(p * 100)}% pruned", p, magnitude_mask(W, p))
             for p in (0.25, 0.5, 0.75)]
    for name, pruned, mask in runs:
        block = SparseBlock(W, mask, 0.5)
        pe = ws.pe.LonePE()
        pe.load(block.source())
        block.write(pe)
        c = passes(pe, x, d)
        mem = sum(block.memory_bytes().values())
        print(f"{name:<25}{c[0]:>9}{c[1]:>9}{c[2]:>9}{sum(c):>9}{sum(dense) / sum(c):>9.2f}x"
              f"{mem:>8}{published.get(pruned, '')}")


if __name__ == "__main__":
    main()
