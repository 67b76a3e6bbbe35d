"""Activation sparsity on the wafer (seed 001, EC410/EC411): a deep fully connected ReLU
network on digits trained dense, with ReLU zero skipping, and with activation thresholds
that drop about 25% and 50% of the activations ReLU leaves nonzero; emulated cycles per
sample and the speed-up against dense, with test accuracy beside each. The published
figures to set beside it (Cerebras, Hot Chips 32, 2020, a 34-layer fully connected network
on CS-1): about 1.7x from ReLU sparsity, 2x at 25% and 2.4x at 50% induced sparsity.

The network: 64 - 64 x (depth - 1) - 10, ReLU after every hidden layer, He-normal initial
weights (std sqrt(2 / fan-in); PyTorch's default uniform init shrinks the signal by about
1/sqrt(3) per layer, and a deep ReLU stack then learns nothing), zero biases, MSE on one-hot
targets, plain SGD. Every configuration maps the same program (``activation_threshold``
given, so every hidden finalizer runs the threshold test) from the same initial weights and
trains on the same samples in the same order; only the runtime word t differs:

* dense: t = -1 written into each hidden finalizer's word by hand (|a| <= -1 never holds,
  so every activation is sent, zeros included; ``ws.map`` refuses negative thresholds).
  Deltas stay sparse: the delta sender skips zero deltas in every configuration, and a
  ReLU's zero activations have zero deltas.
* ReLU: t = 0 (exact zero skipping, bit for bit as without a threshold).
* 25% / 50%: per hidden layer, t = the 25% / 50% quantile of |a| over the nonzero
  activations of the network that ReLU training (t = 0) gave, on the training set
  (numpy, float32, layer by layer through the thresholded network). Trained from the same
  initial weights with these thresholds. (Thresholds taken from the initial network
  dropped 74% and 94% of the hidden activations during training, the activations
  shrinking as the network trained and the drops compounding through the layers.)

Per configuration: emulated cycles per trained sample (SGD, one sample in flight) and per
inferred sample (the test set streamed through ``predict``; forward passes only,
pipelined), each with its speed-up against dense; the share of the hidden layers'
activations that were not sent; test accuracy; wall time. Then inference only: the
ReLU-trained network with the 25% / 50% thresholds written into its runtime words.

Weight pruning (``ws.map(..., weight_sparsity=q)``, mapping/weight_sparsity.py): the
ReLU-trained network pruned by magnitude to 25% / 50% of each layer's weights (whole PE
column segments, groups of 4 outputs, balanced per PE), each output's kept weights
rescaled to the L2 norm its weights had (without it a 16-layer ReLU stack loses its
signal and fine-tuning stays at chance), then fine-tuned with the mask for the same
number of epochs from those weights (ReLU zero skipping on, t = 0); pruned weights are
not stored and cost no cycles. Also printed: the accuracy right after pruning, before
fine-tuning.

Single-weight pruning (``weight_sparsity={"fraction": q, "unit": "weight"}`` or a bool
mask: mapping/single_weights.py): the ReLU-trained network pruned to 25% / 50% of every
layer's single weights, by random masks (seed 0) and by magnitude (balanced per input row
of each PE's block), rescaled and fine-tuned as the segment rows; the kept weights are
stored as records with an index per weight and each pass runs over indexed vectors.
``--single-only`` runs dense, ReLU and these four rows only.

Run: python benchmarks/bench_sparsity.py [--depth 16] [--epochs 2] [--blocks 2x2]
                                          [--lr 0.03] [--samples N] [--single-only]
Emulated cycles do not depend on the machine; wall times are noisy (shared machine).
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import wafersim as ws  # noqa: E402
from wafersim.train.datasets import digits  # noqa: E402

#: Cerebras, Hot Chips 32 (2020): speed against dense, 34-layer FC network on CS-1
PUBLISHED = {"dense": 1.0, "ReLU (t = 0)": 1.7, "25% induced": 2.0, "50% induced": 2.4,
             "25% pruned": 2.0, "50% pruned": 2.4,
             "25% random w": 2.0, "50% random w": 2.4, "25% magn. w": 2.0, "50% magn. w": 2.4}


def make_model(depth: int, seed: int = 0) -> ws.nn.Sequential:
    rng = np.random.default_rng(seed)
    sizes = [64] + [64] * (depth - 1) + [10]
    layers = []
    for i in range(depth):
        lin = ws.nn.Linear(sizes[i], sizes[i + 1])
        lin.weight[...] = rng.normal(0, np.sqrt(2 / sizes[i]), lin.weight.shape).astype(np.float32)
        lin.bias[...] = 0
        layers.append(lin)
        if i < depth - 1:
            layers.append(ws.nn.ReLU())
    return ws.nn.Sequential(*layers)


def quantile_thresholds(params, X, q: float) -> list[float]:
    """Per hidden layer, layer by layer through the thresholded network (so that the
    drops of the layers before are accounted for): t = the q quantile of |a| over the
    nonzero activations of the samples X, float32, with parameters ``params`` [(W, b)]."""
    out, a = [], X.astype(np.float32)
    for W, b in params[:-1]:
        a = np.maximum(a @ W.T + b, 0).astype(np.float32)
        t = float(np.quantile(np.abs(a[a != 0]), q))
        a = np.where(np.abs(a) <= np.float32(t), np.float32(0), a)
        out.append(t)
    return out


def rescale_kept(model, masks) -> None:
    """After pruning: scales each output's kept weights so that its weight vector keeps
    its L2 norm (a deep ReLU stack otherwise loses signal variance layer after layer:
    pruning a share p of every neuron's inputs shrinks its output by about sqrt(1 - p),
    16 times over). Masked weights are left as they are (the plan does not store them)."""
    for d, m in zip(model.dense_layers(), masks):
        W = d.linear.weight
        full = np.sqrt((W.astype(np.float64) ** 2).sum(axis=1))
        kept = np.sqrt((np.where(m, W, 0).astype(np.float64) ** 2).sum(axis=1))
        scale = np.where(kept > 0, full / np.maximum(kept, 1e-30), 1.0)
        W[...] = np.where(m, W * scale[:, None], W).astype(np.float32)


def run(name, model, thresholds, blocks, Xtr, ytr, Xte, yte, epochs, lr, weight_sparsity=None):
    depth = len(model.dense_layers())
    # slots=2: SGD holds one sample per PE; the default (2 per layer) puts a deep
    # network's runtime words beyond ld16 / st16's reach
    plan = ws.map(model.copy(), blocks=blocks, slots=2,
                  activation_threshold=[max(t, 0.0) for t in thresholds],
                  weight_sparsity=weight_sparsity)
    if thresholds[0] < 0:           # dense: |a| <= -1 never holds
        for b in plan.layers[:-1]:
            for c in range(b.cols):
                plan.wafer.memcpy_h2d("c_athr", np.array([-1.0], np.float32), rect=b.finalizer(c))
    tr = ws.Trainer(plan, algo="sgd", lr=lr, progress=False)
    t0 = time.perf_counter()
    tr.fit(Xtr, ytr, epochs=epochs, shuffle=False)
    wall = time.perf_counter() - t0
    st = tr.stats()
    fwd = [s for s in st.sparsity() if s["pass"] == "forward" and s["layer"] > 0]
    dropped = sum(s["not_sent"] for s in fwd) / max(1, sum(s["sent"] + s["not_sent"] for s in fwd))
    saved = sum(s["cycles_saved"] for s in fwd)
    train_cps = st.cycles_per_sample
    t1 = time.perf_counter()
    acc, inf_cps, _ = infer(plan, Xte, yte)
    wall_inf = time.perf_counter() - t1
    busy = {k: v / max(1, st.samples_trained) for k, v in st.busy_by_pass().items()}
    masks = plan.weight_masks()
    pruned = 1 - sum(int(m.sum()) for m in masks) / sum(m.size for m in masks)
    mem = plan.memory()
    return {"name": name, "depth": depth, "train": train_cps, "infer": inf_cps, "acc": acc,
            "pruned": pruned, "mem": max(v["data_bytes"] for v in mem.values()), "busy": busy,
            "dropped": dropped, "saved": saved / max(1, st.samples_forwarded), "wall": wall,
            "wall_inf": wall_inf, "t": thresholds, "plan": plan, "weights": tr.weights()}


def infer(plan, Xte, yte):
    """(test accuracy, emulated cycles per inferred sample) of the test set streamed
    through ``plan`` as it is (its current weights and threshold words)."""
    inf = ws.Trainer(plan, progress=False)
    acc = inf.evaluate(Xte, yte)["accuracy"]
    fwd = [s for s in inf.stats().sparsity() if s["pass"] == "forward" and s["layer"] > 0]
    dropped = sum(s["not_sent"] for s in fwd) / max(1, sum(s["sent"] + s["not_sent"] for s in fwd))
    return acc, inf.stats().cycles / len(Xte), dropped


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--depth", type=int, default=16, help="Linear layers (default 16)")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--blocks", default="2x2", help="rows x cols of every hidden layer's block")
    ap.add_argument("--lr", type=float, default=0.03)
    ap.add_argument("--samples", type=int, default=0, help="train on the first N samples (0: all)")
    ap.add_argument("--single-only", action="store_true",
                    help="dense, ReLU and the single-weight rows only")
    args = ap.parse_args()
    Xtr, ytr, Xte, yte = digits()
    if args.samples:
        Xtr, ytr = Xtr[:args.samples], ytr[:args.samples]
    r, c = (int(v) for v in args.blocks.split("x"))
    blocks = [(r, c)] + [(c, c)] * (args.depth - 1)
    model = make_model(args.depth)
    hidden = args.depth - 1
    print(f"digits, 64-{'64-' * (args.depth - 1)}10 ReLU ({args.depth} Linear layers), blocks "
          f"{blocks[0]} then {blocks[1]}, fp32 SGD lr {args.lr}, {args.epochs} epoch(s) of "
          f"{len(Xtr)} samples, test {len(Xte)}")
    rows = [run(n, model, t, blocks, Xtr, ytr, Xte, yte, args.epochs, args.lr)
            for n, t in (("dense", [-1.0] * hidden), ("ReLU (t = 0)", [0.0] * hidden))]
    # thresholds from the network ReLU training gave (its final activations), so that
    # about 25% / 50% of what ReLU leaves nonzero falls below them
    trained = rows[1]["weights"]
    if args.single_only:
        rows += single_weight_rows(args, model, trained, blocks, Xtr, ytr, Xte, yte)
        table(rows)
        return
    th = {q: quantile_thresholds(trained, Xtr, q) for q in (0.25, 0.5)}
    rows += [run(f"{int(q * 100)}% induced", model, th[q], blocks, Xtr, ytr, Xte, yte,
                 args.epochs, args.lr) for q in (0.25, 0.5)]
    # weight pruning: magnitude pruning of the ReLU-trained network (the 25% / 50% of each
    # layer's weights in the PE column segments of smallest mean |w|, in groups of 4
    # outputs), then fine-tuned with the mask for the same epochs; ReLU zero skipping on
    # (each output's kept weights rescaled to its former L2 norm: rescale_kept)
    pruned_models, masks = {}, {}
    for q in (0.25, 0.5):
        m = make_model(args.depth)
        for d, (W, b) in zip(m.dense_layers(), trained):
            d.linear.weight[...] = W
            d.linear.bias[...] = b
        pruned_models[q] = m
        # accuracy right after pruning, before fine-tuning (inference only)
        p0 = ws.map(m.copy(), blocks=blocks, slots=2, weight_sparsity=q)
        m.acc0 = infer(p0, Xte, yte)[0]
        masks[q] = p0.weight_masks()
        rescale_kept(m, masks[q])
    rows += [run(f"{int(q * 100)}% pruned", pruned_models[q], [0.0] * hidden, blocks, Xtr, ytr,
                 Xte, yte, args.epochs, args.lr, weight_sparsity=masks[q]) for q in (0.25, 0.5)]
    rows += single_weight_rows(args, model, trained, blocks, Xtr, ytr, Xte, yte)
    table(rows)
    for q in (0.25, 0.5):
        print(f"{int(q * 100)}% pruned: test accuracy right after pruning the ReLU-trained "
              f"network, before fine-tuning: {pruned_models[q].acc0:.3f}")
    print("thresholds (25%):", ", ".join(f"{t:.3g}" for t in rows[2]["t"]))
    print("thresholds (50%):", ", ".join(f"{t:.3g}" for t in rows[3]["t"]))
    # inference only: the ReLU-trained network with the thresholds written into its
    # runtime words (no retraining)
    plan = rows[1]["plan"]
    acc0, cps0, _ = infer(plan, Xte, yte)
    dense_inf = rows[0]["infer"]
    print("inference on the ReLU-trained network, thresholds set afterwards "
          "(Plan.set_activation_threshold):")
    print(f"{'thresholds':<14} {'hidden acts not sent':>20} {'infer cyc/sample':>17} "
          f"{'vs dense':>8} {'test acc':>8}")
    for name, t in (("t = 0", [0.0] * hidden), ("25%", th[0.25]), ("50%", th[0.5])):
        plan.set_activation_threshold(t)
        acc, cps, dropped = infer(plan, Xte, yte)
        print(f"{name:<14} {100 * dropped:>19.1f}% {cps:>17,.0f} {dense_inf / cps:>7.2f}x "
              f"{acc:>8.3f}")


def single_weight_rows(args, model, trained, blocks, Xtr, ytr, Xte, yte) -> list[dict]:
    """The ReLU-trained network pruned to 25% / 50% of its single weights (random masks,
    then magnitude per row of each PE's block), rescaled, fine-tuned with the mask."""
    hidden = args.depth - 1
    rng = np.random.default_rng(0)
    rows = []
    for kind in ("random", "magn."):
        for q in (0.25, 0.5):
            m = make_model(args.depth)
            for d, (W, b) in zip(m.dense_layers(), trained):
                d.linear.weight[...] = W
                d.linear.bias[...] = b
            if kind == "random":
                masks = [rng.random(W.shape) >= q for W, _ in trained]
            else:
                p0 = ws.map(m.copy(), blocks=blocks, slots=2,
                            weight_sparsity={"fraction": q, "unit": "weight"})
                masks = p0.weight_masks()
            rescale_kept(m, masks)
            rows.append(run(f"{int(q * 100)}% {kind} w", m, [0.0] * hidden, blocks, Xtr, ytr,
                            Xte, yte, args.epochs, args.lr, weight_sparsity=list(masks)))
    return rows


def table(rows) -> None:
    base = rows[0]
    print(f"{'configuration':<14} {'hidden acts not sent':>20} {'weights pruned':>14} "
          f"{'train cyc/sample':>17} "
          f"{'speed-up':>8} {'infer cyc/sample':>17} {'speed-up':>8} {'f_act cyc saved/sample':>22} "
          f"{'max PE bytes':>12} {'test acc':>8} {'published':>9} {'wall s':>7}")
    for row in rows:
        print(f"{row['name']:<14} {100 * row['dropped']:>19.1f}% {100 * row['pruned']:>13.1f}% "
              f"{row['train']:>17,.0f} "
              f"{base['train'] / row['train']:>7.2f}x {row['infer']:>17,.0f} "
              f"{base['infer'] / row['infer']:>7.2f}x {row['saved']:>22,.0f} {row['mem']:>12,} "
              f"{row['acc']:>8.3f} {PUBLISHED[row['name']]:>8.1f}x {row['wall'] + row['wall_inf']:>7.1f}")
    passes = ("forward", "delta", "chain", "control")
    print("busy cycles of the whole wafer per trained sample, by pass (training):")
    print(f"{'configuration':<14} " + " ".join(f"{p:>9}" for p in passes))
    for row in rows:
        print(f"{row['name']:<14} " + " ".join(f"{row['busy'].get(p, 0):>9,.0f}" for p in passes))


if __name__ == "__main__":
    main()
