"""Time to accuracy on the wafer: SGD against mini-batches of n (and whatever other
training algorithms are named), in trained samples and in emulated cycles, to set beside
the seed's claims:

* [0630]: "SGD for n steps is more efficient than MBGD for a mini-batch size n by
  approximately the square root of n": the ratio of samples to the target accuracy,
  mini-batch n over SGD, beside sqrt(n);
* [0613]: continuous propagation "realizes up to a 10x wall clock time improvement, as
  compared to MBGD": emulated cycles to the target (an algorithm ``cpgdN``, window N, is
  run when the Trainer offers ``algo="cpgd"``).

Each configuration trains digits (default 64-32-10, ReLU, MSE on one-hot targets, fp32)
from the same initial weights on the same sample order (one seeded shuffle per epoch,
shared by all), in chunks of ``--eval-every`` samples (a multiple of every batch size), and
evaluates the test set after each chunk. Samples and cycles to the target are those of the
first chunk after which the test accuracy reaches ``--target``. The learning rate of a
mini-batch of n is the best of base x {1, sqrt(n), n} (base: ``--lr``, the SGD rate),
since [0630] compares each at its own good rate. Cycles are the training runs' own
(each chunk's pipeline fill and drain included); evaluation is not counted.

Run: python benchmarks/bench_convergence.py [--algos sgd,minibatch4,minibatch16]
         [--model 64-32-10] [--lr 0.1] [--target 0.95] [--max-epochs 8] [--eval-every 240]
Emulated cycles and samples do not depend on the machine; wall times are noisy.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import wafersim as ws  # noqa: E402
from wafersim.train.cli_train import build_model  # noqa: E402
from wafersim.train.datasets import digits  # noqa: E402


def parse_algo(name: str) -> tuple[str, int]:
    """"sgd" -> ("sgd", 1); "minibatch8" -> ("minibatch", 8); "cpgd4" -> ("cpgd", 4)."""
    m = re.fullmatch(r"(sgd|minibatch|cpgd)(\d*)", name)
    if not m or (m.group(1) == "sgd" and m.group(2)):
        raise SystemExit(f"--algos: {name!r} is not sgd, minibatchN or cpgdN")
    return m.group(1), int(m.group(2) or 1)


def trainer_for(algo: str, n: int, lr: float, model, seed: int) -> ws.Trainer:
    plan = ws.map(model.copy(), optimizer=ws.optim.SGD(lr=lr))
    if algo == "sgd":
        return ws.Trainer(plan, algo="sgd", progress=False, seed=seed)
    if algo == "minibatch":
        return ws.Trainer(plan, algo="minibatch", batch_size=n, progress=False, seed=seed)
    return ws.Trainer(plan, algo="cpgd", window=n, progress=False, seed=seed)


def run(algo: str, n: int, lr: float, model, data, args) -> dict:
    Xtr, ytr, Xte, yte = data
    tr = trainer_for(algo, n, lr, model, args.seed)
    rng = np.random.default_rng(args.seed)
    samples = cycles = 0
    curve = []
    t0 = time.perf_counter()
    for _ in range(args.max_epochs):
        order = rng.permutation(len(Xtr))
        for s in range(0, len(order) - args.eval_every + 1, args.eval_every):
            idx = order[s:s + args.eval_every]
            hist = tr.fit(Xtr[idx], ytr[idx], epochs=1, shuffle=False)
            samples += len(idx)
            cycles += hist.cycles[0]
            acc = tr.evaluate(Xte, yte)["accuracy"]
            curve.append((samples, cycles, acc))
            if acc >= args.target:
                return {"samples": samples, "cycles": cycles, "acc": acc, "curve": curve,
                        "seconds": time.perf_counter() - t0}
    return {"samples": None, "cycles": None, "acc": curve[-1][2], "curve": curve,
            "seconds": time.perf_counter() - t0}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--algos", default="sgd,minibatch4,minibatch16")
    ap.add_argument("--model", default="64-32-10")
    ap.add_argument("--lr", type=float, default=0.1, help="SGD's learning rate (the base)")
    ap.add_argument("--target", type=float, default=0.95)
    ap.add_argument("--max-epochs", type=int, default=8)
    ap.add_argument("--eval-every", type=int, default=240)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    algos = [parse_algo(a) for a in args.algos.split(",")]
    for algo, n in algos:
        if args.eval_every % n:
            raise SystemExit(f"--eval-every {args.eval_every} is not a multiple of {n}")
    data = digits(seed=0)
    model = build_model(args.model, "relu", args.seed)

    print(f"digits {args.model} ReLU, MSE, fp32; target test accuracy {args.target:.0%}; "
          f"evaluated every {args.eval_every} samples, at most {args.max_epochs} epochs")
    print("| algorithm | lr | samples to target | emulated cycles to target | "
          "cycles / sample | final accuracy | wall s |")
    print("|---|---|---|---|---|---|---|")
    best = {}
    for algo, n in algos:
        rates = [args.lr] if algo != "minibatch" else sorted({args.lr, args.lr * math.sqrt(n),
                                                              args.lr * n})
        for lr in rates:
            r = run(algo, n, lr, model, data, args)
            name = algo if algo == "sgd" else f"{algo} {n}"
            cps = r["curve"][-1][1] / r["curve"][-1][0]
            reached = (f"{r['samples']:,}", f"{r['cycles']:,}") if r["samples"] else ("not reached",) * 2
            print(f"| {name} | {lr:.3g} | {reached[0]} | {reached[1]} | {cps:,.0f} | "
                  f"{r['acc']:.3f} | {r['seconds']:.0f} |", flush=True)
            key = (algo, n)
            if r["samples"] and (key not in best or r["samples"] < best[key]["samples"]):
                best[key] = dict(r, lr=lr)
    sgd = best.get(("sgd", 1))
    if sgd:
        print("\nAgainst SGD (each at its best rate): samples ratio beside sqrt(n) [0630], "
              "emulated cycles ratio [0613]")
        for (algo, n), r in best.items():
            if algo == "sgd":
                continue
            print(f"  {algo} {n}: samples {r['samples'] / sgd['samples']:.2f}x SGD's "
                  f"(sqrt(n) = {math.sqrt(n):.2f}); cycles {r['cycles'] / sgd['cycles']:.2f}x SGD's")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
