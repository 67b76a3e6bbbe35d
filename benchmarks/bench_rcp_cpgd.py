"""Reverse checkpoint under CPGD on the wafer (docs/training.md, "CPGD with RCP"):
64-64-64-10 ReLU on digits, fp32, MSE, lr 0.1, CPGD with a window of 2L = 6 samples in
flight (slots 6), each policy against the same run without RCP: activation bytes per PE
in the programs' layout (mean and largest over the PEs), emulated cycles per sample
(deterministic), the training loss of the epoch. Ratios, not timed tests. ``--momentum``
trains with SGD with momentum (an update task per sample on every PE).

    python benchmarks/bench_rcp_cpgd.py --samples 200 [--momentum 0.9]
"""

from __future__ import annotations

import argparse

import numpy as np

import wafersim as ws
from wafersim.train.datasets import digits


def run(X, y, policy, window: int, momentum: float = 0.0):
    ws.nn.manual_seed(0)
    model = ws.nn.Sequential(ws.nn.Linear(64, 64), ws.nn.ReLU(), ws.nn.Linear(64, 64),
                             ws.nn.ReLU(), ws.nn.Linear(64, 64), ws.nn.ReLU(),
                             ws.nn.Linear(64, 10))
    plan = ws.map(model, slots=window, checkpoint=policy, cpgd=True,
                  optimizer=ws.optim.SGD(lr=0.1, momentum=momentum))
    tr = ws.Trainer(plan, algo="cpgd", window=window, lr=0.1, progress=False)
    hist = tr.fit(X, y, epochs=1, shuffle=False)
    acts = np.array([m["activation_bytes"] for p, m in plan.memory().items()
                     if p in plan.specs])
    return plan, tr, acts, hist.loss[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=200, help="training samples")
    ap.add_argument("--window", type=int, default=6, help="CPGD's samples in flight")
    ap.add_argument("--seed", type=int, default=0, help="seed of the sample order")
    ap.add_argument("--momentum", type=float, default=0.0, help="SGD's momentum (0: plain)")
    args = ap.parse_args()
    Xtr, ytr, _, _ = digits()
    n = min(args.samples, len(Xtr))
    order = np.random.default_rng(args.seed).permutation(len(Xtr))[:n]
    X, y = Xtr[order], ytr[order]
    plan0, tr0, a0, l0 = run(X, y, None, args.window, args.momentum)
    c0 = tr0.stats().cycles_per_sample
    shapes = ", ".join(f"{b.rows}x{b.cols}" for b in plan0.layers)
    print(f"== CPGD with RCP: 64-64-64-10 ReLU, blocks {shapes}, window {args.window}, fp32 "
          f"lr 0.1, momentum {args.momentum}, {n} samples; without RCP {c0:.0f} cycles per sample, loss {l0:.4f}")
    print(f"  {'policy':8s} {'keeps':6s} {'mean B/PE':>15s} {'peak B/PE':>13s} {'ratio':>6s} "
          f"{'cycles/sample':>17s} {'ratio':>6s} {'loss':>7s}")
    for policy in (2, 3, 4):
        plan, tr, a1, l1 = run(X, y, policy, args.window, args.momentum)
        c1 = tr.stats().cycles_per_sample
        keeps = "".join("K" if k else "-" for k in plan.keeps)
        m0, m1 = a0.mean(), a1.mean()
        print(f"  {str(policy):8s} {keeps:6s} {m0:6.0f} -> {m1:5.0f} {a0.max():5d} -> "
              f"{a1.max():4d} {m1 / m0:6.2f} {c0:7.0f} -> {c1:6.0f} {c1 / c0:6.2f} {l1:7.4f}")


if __name__ == "__main__":
    main()
