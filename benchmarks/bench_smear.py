"""Neuron smearing (seed 000, FIG. 17-20, [0468]-[0494]): the FIG. 18 example on the wafer,
the load per PE and the emulated cycles per sample of three placements of one layer.

Linear(12, 2), inputs 10 and 11 always zero (never sent [0408]), so the forward pass's
multiply-adds per PE follow the live inputs of its fan-in portion:

* 3 x 2 PEs, equal thirds (FIG. 18A: four PEs loaded M, two M/2);
* 2 x 2 PEs, equal halves;
* 2 x 2 PEs, portions from ``balanced_portions`` of the measured load (FIG. 18B: four
  PEs loaded 1.25 M each, two PEs free).

Per placement: PEs, busy cycles of the multiply-accumulate task per PE
(``TrainStats.mac_busy``), all busy cycles per PE, emulated cycles per trained sample (SGD),
and the ratios against the six-PE placement. Emulated cycles are deterministic.

Run: python benchmarks/bench_smear.py [--samples 40]
"""

from __future__ import annotations

import argparse

import numpy as np

import wafersim as ws
from wafersim.mapping.smear import balanced_portions


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=40)
    args = ap.parse_args()
    rng = np.random.default_rng(1)
    X = rng.uniform(0.1, 1.0, (args.samples, 12)).astype(np.float32)
    X[:, 10:] = 0
    Y = rng.uniform(-1, 1, (args.samples, 2)).astype(np.float32)
    portions = balanced_portions((X != 0).mean(axis=0), 2)
    runs = [("3 x 2, equal thirds (FIG. 18A)", dict(blocks=[(3, 2)])),
            ("2 x 2, equal halves", dict(smear={0: 2})),
            (f"2 x 2, balanced portions {[round(p, 4) for p in portions]} (FIG. 18B)",
             dict(smear={0: portions}))]
    base = None
    for name, kw in runs:
        plan = ws.map(ws.nn.Sequential(ws.nn.Linear(12, 2, seed=7)), **kw)
        tr = ws.Trainer(plan, algo="sgd", lr=0.05, progress=False)
        tr.fit(X, Y, epochs=1, shuffle=False)
        st = tr.stats()
        b = plan.layers[0]
        mac = np.array([[st.mac_busy()[b.at(r, c)] for c in range(b.cols)]
                        for r in range(b.rows)])
        busy = np.array([[st.busy()[b.at(r, c)] for c in range(b.cols)]
                         for r in range(b.rows)])
        cps = st.cycles_per_sample
        base = base or (mac.max(), cps, mac.sum())
        print(f"{name}: {b.rows * b.cols} PEs")
        print(f"  multiply-accumulate busy cycles per PE (rows): {mac.tolist()}; most loaded "
              f"/ six-PE placement's: {mac.max() / base[0]:.2f}; total / six-PE total: "
              f"{mac.sum() / base[2]:.2f}")
        print(f"  all busy cycles per PE: {busy.tolist()}")
        print(f"  emulated cycles per sample: {cps:.1f} ({cps / base[1]:.3f} x the six-PE "
              "placement's)")


if __name__ == "__main__":
    main()
