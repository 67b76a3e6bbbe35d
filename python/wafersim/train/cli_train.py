"""``wafersim train``: train a network on scikit-learn's digits, on the emulated wafer.

    wafersim train                                   # 64-32-10 MLP, SGD, fp32, 6 epochs
    wafersim train --algo minibatch --batch-size 8 --lr 0.3
    wafersim train --numerics fp16-sr --model 64-48-10 --blocks 4x4,4x2
    wafersim train --loss cross-entropy --lr 0.02 --momentum 0.5 --activation gelu
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ..errors import ConfigError

ACTIVATIONS = ("relu", "sigmoid", "tanh", "leaky_relu", "gelu")
LOSSES = ("mse", "cross-entropy")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default="64-32-10",
                   help="layer sizes, input first (default 64-32-10; the input must be 64)")
    p.add_argument("--activation", default="relu", choices=ACTIVATIONS,
                   help="hidden-layer activation (the output layer is linear)")
    p.add_argument("--loss", default="mse", choices=LOSSES,
                   help="mse (targets one-hot) or cross-entropy (softmax on a head column)")
    p.add_argument("--momentum", type=float, default=0.0, help="SGD momentum (0 <= m < 1)")
    p.add_argument("--nesterov", action="store_true", help="Nesterov momentum")
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--algo", default="sgd", choices=("sgd", "minibatch", "cpgd"))
    p.add_argument("--window", type=int, default=None,
                   help="CPGD: samples in flight per PE (default: 2 x layers)")
    p.add_argument("--dp-weights", default="current", choices=("current", "forward"),
                   help="CPGD: the delta pass uses the current weights or those of the "
                   "sample's own forward pass (a snapshot per sample in flight)")
    p.add_argument("--batch-size", type=int, default=None,
                   help="mini-batch size (minibatch: default 8; cpgd: default 1, more is CPGD "
                   "with mini-batches [0636], window <= batch size + 1)")
    p.add_argument("--lr", type=float, default=None, help="learning rate (0.1 for SGD, 0.3 "
                   "for mini-batches)")
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument("--numerics", default="fp32", choices=("fp32", "fp16", "fp16-sr"))
    p.add_argument("--blocks", default=None,
                   help="PE block per layer, e.g. 4x4,4x2 (default: chosen automatically)")
    p.add_argument("--seed", type=int, default=0, help="weights, shuffling and PE RNG seeds")
    p.add_argument("--samples", type=int, default=None,
                   help="train on the first N training samples only (quick runs)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")


def parse_blocks(text: str | None):
    if text is None:
        return None
    try:
        return [tuple(int(v) for v in part.lower().split("x")) for part in text.split(",")]
    except ValueError:
        raise ConfigError(f"--blocks must look like 4x4,4x2; got {text!r}") from None


def build_model(sizes: str, activation: str, seed: int):
    from .. import nn  # the model layers load only when a job runs

    try:
        dims = [int(v) for v in sizes.split("-")]
    except ValueError:
        raise ConfigError(f"--model must look like 64-32-10; got {sizes!r}") from None
    if len(dims) < 2:
        raise ConfigError("--model needs at least an input and an output size")
    if dims[0] != 64 or dims[-1] != 10:
        raise ConfigError(f"digits has 64 inputs and 10 classes; --model {sizes} does not fit")
    nn.manual_seed(seed)
    act = {"relu": nn.ReLU, "sigmoid": nn.Sigmoid, "tanh": nn.Tanh,
           "leaky_relu": nn.LeakyReLU, "gelu": nn.GELU}[activation]
    layers = []
    for i in range(len(dims) - 1):
        layers.append(nn.Linear(dims[i], dims[i + 1]))
        if i < len(dims) - 2:
            layers.append(act())
    return nn.Sequential(*layers)


def train_digits(args) -> dict:
    """Runs the job ``args`` describes; returns the trainer, history and test accuracy."""
    from .. import nn, optim
    from ..mapping.compile import map_model
    from .datasets import digits
    from .trainer import Trainer

    Xtr, ytr, Xte, yte = digits(seed=0)
    if args.samples:
        Xtr, ytr = Xtr[:args.samples], ytr[:args.samples]
    model = build_model(args.model, args.activation, args.seed)
    dtype = "fp32" if args.numerics == "fp32" else "fp16"
    batched = args.algo == "minibatch" or (args.algo == "cpgd" and (args.batch_size or 1) > 1)
    lr = args.lr if args.lr is not None else (0.3 if batched else 0.1)
    loss = nn.CrossEntropyLoss() if args.loss == "cross-entropy" else nn.MSELoss()
    opt = optim.SGD(lr=lr, momentum=args.momentum, nesterov=args.nesterov,
                       weight_decay=args.weight_decay)
    cpgd = args.algo == "cpgd"
    plan = map_model(model, blocks=parse_blocks(args.blocks), dtype=dtype, loss=loss, optimizer=opt,
                     **({"cpgd": True, "dp_weights": args.dp_weights} if cpgd else {}))
    tr = Trainer(plan, algo=args.algo, **({"window": args.window} if cpgd else {}),
                    batch_size=args.batch_size if args.algo in ("minibatch", "cpgd") else None,
                    numerics=args.numerics, seed=args.seed, progress=not args.no_progress)
    t0 = time.perf_counter()
    hist = tr.fit(Xtr, ytr, epochs=args.epochs, validation=(Xte, yte))
    seconds = time.perf_counter() - t0
    test = tr.evaluate(Xte, yte)
    return {"plan": plan, "trainer": tr, "history": hist, "test": test, "seconds": seconds}


def report(r: dict, out=print) -> None:
    plan, tr, hist, test = r["plan"], r["trainer"], r["history"], r["test"]
    out(plan.describe())
    for k, (loss, acc, va, cyc, sec) in enumerate(zip(hist.loss, hist.accuracy, hist.val_accuracy,
                                                       hist.cycles, hist.seconds)):
        out(f"epoch {k + 1}: loss {loss:.4f}, train accuracy {acc:.3f}, test accuracy {va:.3f}, "
            f"{cyc} cycles, {sec:.1f} s")
    out(tr.stats().summary())
    n = tr.stats().samples_trained
    out(f"wall clock: {r['seconds']:.1f} s for {n} training samples "
        f"({1000 * r['seconds'] / max(n, 1):.2f} ms per sample)")
    out(f"test accuracy: {test['accuracy']:.3f}")


def main(args) -> int:
    r = train_digits(args)
    report(r)
    return 0 if np.isfinite(r["test"]["loss"]) else 1
