"""Continuous propagation (CPGD, FIG. 27C) against SGD and mini-batches on scikit-learn's
digits, all on the emulated wafer (docs/training.md, "CPGD").

For each network (64-32-10 and the deeper 64-64-64-10, ReLU, MSE loss, fp32) and each
algorithm (SGD lr 0.1; mini-batches of 8, lr 0.3; CPGD with 2L samples in flight, lr 0.1;
with ``--algos ...,cpgd-mb`` also CPGD with mini-batches of 8 [0636], lr 0.3, min(2L, 9)
samples in flight and no drain between batches), trains epoch by epoch and prints: test
accuracy, emulated cycles (training only) until the test accuracy first reached 95% (at
an epoch's end), emulated training cycles per sample, samples in flight per PE, the peak
data bytes of a PE, the mean activation bytes per PE, the mean staleness per layer
(CPGD: in updates; cpgd-mb: in batches) and the wall time. With ``--checkpoint K`` each
algorithm runs again under reverse checkpoint (docs/training.md, "Reverse checkpoint").

    python examples/train_cpgd.py                    # both networks, up to 8 epochs
    python examples/train_cpgd.py --epochs 3 --nets 64-32-10
    python examples/train_cpgd.py --epochs 1 --nets 64-16-10 --samples 200   # quick
    python examples/train_cpgd.py --checkpoint 2     # each also with reverse checkpoint
    python examples/train_cpgd.py --algos minibatch,cpgd-mb --batch 8   # CPGD with batches
    python examples/train_cpgd.py --plot cpgd.png    # accuracy against emulated cycles,
                                                     # and the pipeline of the first samples
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import wafersim as ws
from wafersim.train.datasets import digits


def build(sizes, cpgd: bool, slots: int, checkpoint=None, dp_weights="current"):
    ws.nn.manual_seed(0)
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [ws.nn.Linear(a, b), ws.nn.ReLU()]
    extra = {"dp_weights": dp_weights} if cpgd else {}
    return ws.map(ws.nn.Sequential(*layers[:-1]), cpgd=cpgd, slots=slots,
                  checkpoint=checkpoint, **extra)


def run(sizes, algo: str, epochs: int, data, seed: int = 0, checkpoint=None,
        dp_weights="current", batch: int = 8):
    """``algo``: "sgd", "minibatch", "cpgd" or "cpgd-mb" (CPGD with mini-batches of
    ``batch``, window min(2L, batch + 1))."""
    Xtr, ytr, Xte, yte = data
    L = len(sizes) - 1
    cpgd = algo.startswith("cpgd")
    plan = build(sizes, cpgd, 2 * L, checkpoint, dp_weights)
    if algo == "minibatch":
        kw = {"batch_size": batch, "lr": 0.3}
    elif algo == "cpgd-mb":
        kw = {"batch_size": batch, "lr": 0.3, "window": min(2 * L, batch + 1)}
    else:
        kw = {"lr": 0.1}
    tr = ws.Trainer(plan, algo="cpgd" if cpgd else algo, seed=seed, progress=False, **kw)
    t0 = time.perf_counter()
    curve, cycles, to95 = [], 0, None
    for _ in range(epochs):
        h = tr.fit(Xtr, ytr, epochs=1, validation=(Xte, yte))
        cycles += h.cycles[0]
        curve.append((cycles, h.val_accuracy[0]))
        if to95 is None and h.val_accuracy[0] >= 0.95:
            to95 = cycles
    inflight = tr.window if cpgd else {"sgd": 1, "minibatch": min(batch, plan.slots)}[algo]
    stale = [s["mean"] for s in tr.stats().staleness()]
    memory = plan.memory().values()
    return {"algo": algo, "accuracy": curve[-1][1], "to95": to95, "inflight": inflight,
            "per_sample": cycles / (epochs * len(Xtr)),
            "memory": int(max(m["data_bytes"] for m in memory)),
            "activations": float(np.mean([m["activation_bytes"] for m in memory])),
            "stale": stale, "wall": time.perf_counter() - t0, "curve": curve}


def pipeline_picture(ax, sizes, data, samples: int = 12):
    """Which sample each layer starts, over emulated time (Trainer(timeline=True))."""
    Xtr, ytr, _, _ = data
    L = len(sizes) - 1
    for algo, style in (("sgd", "o"), ("cpgd", "s")):
        plan = build(sizes, algo == "cpgd", 2 * L)
        tr = ws.Trainer(plan, algo=algo, lr=0.1, progress=False, timeline=True)
        tr.fit(Xtr[:samples], ytr[:samples], epochs=1, shuffle=False)
        starts = tr.stats().stage_times()
        first = min(int(t[-samples:].min()) for t in starts.values())
        for layer, t in starts.items():
            t = t[-samples:] - first
            ax.plot(t, np.full(len(t), layer + (0.15 if algo == "cpgd" else 0)), style,
                    label=f"{algo}, layer {layer}")
            for k, x in enumerate(t):
                ax.annotate(str(k), (x, layer + (0.15 if algo == "cpgd" else 0)), fontsize=6)
    ax.set_xlabel("emulated cycle"); ax.set_ylabel("layer")
    ax.set_title("when each layer starts each sample's forward pass")
    ax.legend(fontsize=6)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--nets", default="64-32-10,64-64-64-10")
    ap.add_argument("--algos", default="sgd,minibatch,cpgd",
                    help="comma-separated: sgd, minibatch, cpgd, cpgd-mb (CPGD with "
                         "mini-batches of --batch, [0636])")
    ap.add_argument("--batch", type=int, default=8,
                    help="batch size of minibatch and cpgd-mb")
    ap.add_argument("--plot", default=None, help="save a figure to this file")
    ap.add_argument("--checkpoint", type=int, default=None,
                    help="also run each algorithm with reverse checkpoint: every K-th layer "
                         "keeps its activations, the others recompute them")
    ap.add_argument("--dp-weights", default="current", choices=("current", "forward"),
                    help="CPGD's delta pass: the weights stored now, or those the sample's "
                         "own forward pass read [0634]")
    ap.add_argument("--samples", type=int, default=None,
                    help="train on the first N training samples only (quick runs)")
    args = ap.parse_args(argv)
    data = digits()
    if args.samples:
        data = (data[0][:args.samples], data[1][:args.samples]) + tuple(data[2:])
    nets = [tuple(int(v) for v in n.split("-")) for n in args.nets.split(",")]
    results = {}
    for sizes in nets:
        name = "-".join(map(str, sizes))
        print(f"\n{name}, {args.epochs} epochs (test accuracy at each epoch's end)")
        print(f"  {'algo':16s} {'test acc':>8s} {'cycles to 95%':>14s} {'cyc/sample':>10s} "
              f"{'in flight':>9s} "
              f"{'peak PE bytes':>13s} {'act B/PE':>8s} {'wall s':>7s}  staleness per layer")
        policies = [None] + ([args.checkpoint] if args.checkpoint else [])
        for algo in args.algos.split(","):
            for policy in policies:
                label = algo + (f" rcp={policy}" if policy else "")
                try:
                    r = run(sizes, algo, args.epochs, data, checkpoint=policy,
                            dp_weights=args.dp_weights, batch=args.batch)
                except ws.WaferError as e:       # a combination the wafer refuses
                    print(f"  {label:16s} refused: {e}")
                    continue
                results[(name, label)] = r
                to95 = f"{r['to95']:,}" if r["to95"] is not None else "not reached"
                print(f"  {label:16s} {r['accuracy']:8.3f} {to95:>14s} {r['per_sample']:10.0f} "
                      f"{r['inflight']:9d} "
                      f"{r['memory']:13,d} {r['activations']:8.0f} {r['wall']:7.0f}  "
                      + " ".join(f"{s:.2f}" for s in r["stale"]), flush=True)
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 2, figsize=(12, 4))
        for (name, algo), r in results.items():
            c, a = zip(*r["curve"])
            axes[0].plot(c, a, marker=".", label=f"{name} {algo}")
        axes[0].set_xlabel("emulated training cycles"); axes[0].set_ylabel("test accuracy")
        axes[0].legend(fontsize=7)
        pipeline_picture(axes[1], nets[0], data)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        print(f"figure: {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
