"""Speed of training on the wafer: the digits network (64-32-10, ReLU) trained by ws.Trainer.

Per configuration (default: fp32 SGD lr 0.1; fp32 mini-batch of 8, lr 0.3; fp16 SGD lr 0.1):

1. emulated cycles per trained sample against the analytic per-sample bound of
   ``TrainStats.bound()`` (one sample in flight; the aim is measured / bound within 1.5 x),
   and the wafer's busy cycles per pass (``TrainStats.busy_by_pass()``);
2. wall-clock seconds per 1,000 trained samples and per digits epoch (1437 samples,
   extrapolated unless --full), against a named baseline: the plain numpy reference trainer
   (``wafersim.reference.training.train_numpy``, float32, same initial weights, same sample
   order, same SGD or mini-batch update), as the ratio wafer / numpy.
3. With --to95: the fp32 SGD configuration trained epoch by epoch on the whole training set
   until test accuracy >= 0.95 (at most --max-epochs); prints epochs and wall seconds
   against the aims of 5 minutes on 2 cores (and, longer term, 60 s).
4. With --flat: whether the wall time per sample stays flat in the number of samples
   queued at once. The fp32 SGD configuration trains the same --flat-samples samples
   (10,000: the training set repeated) fed by `fit` calls of each size in --flat-queues
   (100, 1000, 10000 samples queued per call); prints seconds per 1,000 samples per queue
   size and the ratio to the smallest queue (aim: within 1.10), and whether the weights
   came out bit-identical (they must: feeding in calls does not change the SGD updates).
   Only this part runs with --flat.
5. With --kinds: the losses and optimizers of the compiler's plug-ins side by side. The
   digits network trained on the same --samples samples with MSELoss and CrossEntropyLoss
   (softmax head), by plain SGD, SGD with momentum 0.9 and Adam, one sample at a time and as
   mini-batches of 8: emulated cycles per sample, wall seconds per 1,000 samples, and both as
   ratios to MSELoss with plain SGD of the same algorithm. Only this part runs with --kinds.
6. With --cpgd: continuous propagation (``algo="cpgd"``, FIG. 27C) on the digits network
   and on the deeper 64-64-64-10, SGD lr 0.1 against CPGD with windows 1, 2, 4 and 2L (L
   layers): emulated cycles per sample overall and in the steady state of the stream, the
   slowest stage's time (the busiest PE's busy cycles per sample, all passes: a pipeline
   cannot go faster), their ratio (aim: within 1.3 x), the slowest stage's utilization
   (its busy cycles / the steady cycles per sample) and the per-layer mean staleness.
   Only this part runs with --cpgd.

7. With --rcp: reverse checkpoint on the deeper 64-64-64-10 network (ReLU; slots 2 and
   8, the default), trained on the wafer by SGD and by mini-batches of 8 with each policy
   (checkpoint=2, 3, 4) and without: the activation bytes per PE (the programs' layout;
   mean, peak), the emulated cycles per sample, whether the weights are bit for bit the
   same, against the aim (memory per PE at least halved for at most 35% more cycles).
   Only this part runs with --rcp.

Run: python benchmarks/bench_train.py [--samples 400 | --full] [--blocks 4x4,4x2]
                                      [--repeat 3] [--threads N] [--to95 [--max-epochs 10]]
     python benchmarks/bench_train.py --flat [--flat-samples 10000] [--flat-queues 100,1000,10000]
     python benchmarks/bench_train.py --kinds [--samples 400]
     python benchmarks/bench_train.py --rcp [--samples 400] [--rcp-slots 2,8]
     python benchmarks/bench_train.py --cpgd [--samples 400]
Wall times are the best of --repeat runs (the machine may be shared: numbers are noisy).
Emulated cycles do not depend on the machine.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # keep numpy's BLAS threads off the cores

import numpy as np  # noqa: E402

import wafersim as ws  # noqa: E402
from wafersim.reference.training import mlp_forward, train_numpy  # noqa: E402
from wafersim.train.cli_train import parse_blocks  # noqa: E402
from wafersim.train.datasets import digits  # noqa: E402

from timing import best_of  # noqa: E402  (benchmarks/timing.py)

AIM_BOUND = 1.5          # measured cycles per sample / analytic bound
AIM_TO95 = 300.0         # seconds to 95% test accuracy on 2 cores
AIM_TO95_LONG = 60.0     # the longer-term aim
AIM_FLAT = 1.10          # wall time per sample, many queued / 100 queued
AIM_RCP_MEMORY = 0.5     # activation bytes per PE with RCP / without (at most)
AIM_RCP_CYCLES = 1.35    # cycles per sample with RCP / without (at most)
EPOCH = 1437             # digits training samples (the 80% split)

#: (name, dtype, algo, lr, batch_size)
CONFIGS = [
    ("fp32 SGD", "fp32", "sgd", 0.1, 1),
    ("fp32 mini-batch 8", "fp32", "minibatch", 0.3, 8),
    ("fp16 SGD", "fp16", "sgd", 0.1, 1),
]


def build(dtype: str, blocks, threads: int | None):
    """The digits model from seed 0, its initial parameters and activations, and its plan."""
    ws.nn.manual_seed(0)
    model = ws.nn.Sequential(ws.nn.Linear(64, 32), ws.nn.ReLU(), ws.nn.Linear(32, 10))
    dense = model.dense_layers()
    params = [(np.array(d.linear.weight), None if d.linear.bias is None else np.array(d.linear.bias))
              for d in dense]
    acts = [d.activation for d in dense]
    plan = ws.map(model, blocks=blocks, dtype=dtype)
    if threads is not None:
        plan.wafer.threads = threads
    return params, acts, plan


def _threads(plan) -> str:
    t = plan.wafer.threads
    return f"{t} thread(s)" if t else "OpenMP's default threads"


def trainer(plan, algo: str, lr: float, batch: int):
    return ws.Trainer(plan, algo=algo, lr=lr, batch_size=batch, progress=False)


def wafer_run(cfg, blocks, threads, X, y, repeat: int):
    """Best wall time of training once over (X, y) in the given order; the trainer and the
    stats of that run."""
    _, dtype, algo, lr, batch = cfg
    best = None
    for _ in range(repeat):
        _, _, plan = build(dtype, blocks, threads)
        tr = trainer(plan, algo, lr, batch)
        t0 = time.perf_counter()
        tr.fit(X, y, epochs=1, shuffle=False)
        dt = time.perf_counter() - t0
        if best is None or dt < best[0]:
            best = (dt, tr)
    return best


def bench_config(cfg, args, data) -> None:
    name, dtype, algo, lr, batch = cfg
    Xtr, ytr, Xte, yte = data
    n = len(Xtr) if args.full else min(args.samples, len(Xtr))
    order = np.random.default_rng(args.seed).permutation(len(Xtr))[:n]
    X, y = Xtr[order], ytr[order]
    params, acts, plan = build(dtype, args.blocks, args.threads)
    shapes = ", ".join(f"{b.rows}x{b.cols}" for b in plan.layers)
    print(f"\n== {name}: lr {lr}" + (f", batch {batch}" if algo == "minibatch" else "")
          + f"; blocks {shapes} ({'given' if args.blocks else 'automatic'}) on a "
          f"{plan.wafer.rows}x{plan.wafer.cols} wafer, {_threads(plan)}; "
          f"{n} samples" + (" (one epoch)" if n == len(Xtr) else ""))

    dt, tr = wafer_run(cfg, args.blocks, args.threads, X, y, args.repeat)
    st = tr.stats()
    # read everything from the stats before evaluate() adds inference runs to them
    cps = st.cycles_per_sample
    bd = st.bound()
    busy = st.busy_by_pass()
    total = sum(busy.values()) or 1
    ratio = cps / bd["cycles"]
    print(f"  emulated cycles per sample {cps:9.1f}   analytic bound {bd['cycles']:5d} "
          f"(per layer fwd/bwd: {', '.join(f'{f}/{b}' for f, b in bd['layers'])})")
    print(f"  measured / bound {ratio:6.2f} x   (aim {AIM_BOUND}x: "
          f"{'met' if ratio <= AIM_BOUND else f'{ratio / AIM_BOUND:.2f} x over'})")
    print("  busy cycles by pass: " + ", ".join(
        f"{k} {100 * v / total:.0f}%" for k, v in busy.items()) + f"  ({total} PE-cycles)")

    Y = np.eye(10)[y]
    np_order = [np.arange(n)]
    np_dt = best_of(lambda: train_numpy(params, acts, X, Y, lr, algo=algo, batch_size=batch,
                                        epochs=1, order=np_order, dtype=np.float32), args.repeat)
    w_k, n_k = 1000 * dt / n, 1000 * np_dt / n
    print(f"  wall: wafer {w_k:8.3f} s / 1000 samples, {w_k * EPOCH / 1000:8.2f} s / epoch"
          f"   ({n / dt:7.0f} samples/s, {cps * n / dt / 1e6:.2f} M emulated cycles/s)")
    print(f"        numpy {n_k:8.3f} s / 1000 samples, {n_k * EPOCH / 1000:8.2f} s / epoch"
          f"   (baseline: train_numpy float32, same order)")
    print(f"        ratio wafer / numpy {dt / np_dt:8.1f} x")

    P = train_numpy(params, acts, X, Y, lr, algo=algo, batch_size=batch, epochs=1,
                    order=np_order, dtype=np.float32)
    np_acc = float(np.mean(mlp_forward(P, acts, Xte).argmax(1) == yte))
    w_acc = tr.evaluate(Xte, yte)["accuracy"]
    print(f"  test accuracy after these {n} samples: wafer {w_acc:.3f}, numpy {np_acc:.3f}")


def to95(args, data) -> None:
    Xtr, ytr, Xte, yte = data
    name, dtype, algo, lr, batch = CONFIGS[0]
    print(f"\n== time to 95% test accuracy: {name}, lr {lr}, {len(Xtr)} samples per epoch, "
          f"test on {len(Xte)}, at most {args.max_epochs} epochs")
    t_start = time.perf_counter()
    _, _, plan = build(dtype, args.blocks, args.threads)
    tr = trainer(plan, algo, lr, batch)
    t_train = 0.0
    reached = None
    for ep in range(1, args.max_epochs + 1):
        h = tr.fit(Xtr, ytr, epochs=1)
        t_train += h.seconds[-1]
        acc = tr.evaluate(Xte, yte)["accuracy"]
        wall = time.perf_counter() - t_start
        print(f"  epoch {ep:2d}: train loss {h.loss[-1]:.4f}, train acc {h.accuracy[-1]:.3f}, "
              f"test acc {acc:.3f}; {h.seconds[-1]:6.1f} s training, {wall:6.1f} s in all")
        if acc >= 0.95:
            reached = (ep, wall)
            break
    if reached is None:
        wall = time.perf_counter() - t_start
        print(f"  95% not reached in {args.max_epochs} epochs ({wall:.1f} s)")
        return
    ep, wall = reached
    print(f"  time to 95%: {ep} epoch(s), {wall:.1f} s wall (training {t_train:.1f} s, the rest "
          f"mapping and test evaluations)")
    print(f"  ratio to aim {AIM_TO95:.0f} s on 2 cores: {wall / AIM_TO95:.2f}   "
          f"ratio to longer aim {AIM_TO95_LONG:.0f} s: {wall / AIM_TO95_LONG:.2f}")


def flat(args, data) -> None:
    """Wall time per sample against the number of samples queued by one `fit` call."""
    Xtr, ytr, _, _ = data
    name, dtype, algo, lr, batch = CONFIGS[0]
    n = args.flat_samples
    reps = -(-n // len(Xtr))
    X, y = np.concatenate([Xtr] * reps)[:n], np.concatenate([ytr] * reps)[:n]
    queues = sorted(q for q in args.flat_queues if q <= n)
    print(f"\n== flat streams: {name}, lr {lr}; the same {n} samples fed by fit calls of "
          f"q samples each (q queued at once), best of {args.repeat}")
    wall, cpu, weights = {}, {}, {}
    for q in queues:
        wall[q] = cpu[q] = float("inf")
        for _ in range(args.repeat):
            _, _, plan = build(dtype, args.blocks, args.threads)
            tr = trainer(plan, algo, lr, batch)
            t0, c0 = time.perf_counter(), time.process_time()
            for i in range(0, n, q):
                tr.fit(X[i:i + q], y[i:i + q], epochs=1, shuffle=False)
            wall[q] = min(wall[q], 1000 * (time.perf_counter() - t0) / n)
            cpu[q] = min(cpu[q], 1000 * (time.process_time() - c0) / n)
        weights[q] = tr.weights()
        print(f"  q = {q:6d}: {wall[q]:7.3f} s wall, {cpu[q]:7.3f} s CPU / 1000 samples   "
              f"({-(-n // q)} fit calls, {tr.stats().cycles} emulated cycles)")
    base = queues[0]
    for q in queues[1:]:
        r, rc = wall[q] / wall[base], cpu[q] / cpu[base]
        same = all(np.array_equal(a, b) for wa, wb in zip(weights[q], weights[base])
                   for a, b in zip(wa, wb) if a is not None)
        print(f"  ratio q = {q} / q = {base}: wall {r:5.2f}, CPU {rc:5.2f}   (aim <= {AIM_FLAT}: "
              f"{'met' if max(r, rc) <= AIM_FLAT else 'not met'}); weights bit-identical: {same}")
    print("  (CPU: the process's CPU seconds, steadier than wall time on a shared machine)")


#: (name, loss, optimizer) of --kinds; lr as in CONFIGS (Adam: 0.001, its usual rate)
KINDS = [
    ("MSE, SGD", lambda: ws.nn.MSELoss(), lambda lr: ws.optim.SGD(lr=lr)),
    ("cross-entropy, SGD", lambda: ws.nn.CrossEntropyLoss(), lambda lr: ws.optim.SGD(lr=lr)),
    ("MSE, SGD momentum 0.9", lambda: ws.nn.MSELoss(),
     lambda lr: ws.optim.SGD(lr=lr, momentum=0.9)),
    ("cross-entropy, SGD momentum 0.9", lambda: ws.nn.CrossEntropyLoss(),
     lambda lr: ws.optim.SGD(lr=lr, momentum=0.9)),
    ("cross-entropy, Adam", lambda: ws.nn.CrossEntropyLoss(), lambda lr: ws.optim.Adam(lr=1e-3)),
]


def kinds(args, data) -> None:
    """Cycles and wall time per sample of each loss and optimizer, as ratios to MSE + SGD."""
    Xtr, ytr, _, _ = data
    n = min(args.samples, len(Xtr))
    order = np.random.default_rng(args.seed).permutation(len(Xtr))[:n]
    X, y = Xtr[order], ytr[order]
    for _, dtype, algo, lr, batch in CONFIGS[:2]:
        print(f"\n== losses and optimizers: fp32 {algo}" + (f" (batch {batch})" if batch > 1 else "")
              + f", {n} samples, wall best of {args.repeat}")
        base = None
        for name, loss, opt in KINDS:
            best = float("inf")
            for _ in range(args.repeat):
                ws.nn.manual_seed(0)
                model = ws.nn.Sequential(ws.nn.Linear(64, 32), ws.nn.ReLU(), ws.nn.Linear(32, 10))
                plan = ws.map(model, blocks=args.blocks, dtype=dtype, loss=loss(),
                              optimizer=opt(lr))
                if args.threads is not None:
                    plan.wafer.threads = args.threads
                tr = ws.Trainer(plan, algo=algo, batch_size=batch, progress=False)
                t0 = time.perf_counter()
                tr.fit(X, y, epochs=1, shuffle=False)
                best = min(best, time.perf_counter() - t0)
            cps, wall = tr.stats().cycles_per_sample, 1000 * best / n
            base = base or (cps, wall)
            print(f"  {name:32s} {cps:8.1f} cycles/sample ({cps / base[0]:4.2f} x)   "
                  f"{wall:7.3f} s / 1000 samples ({wall / base[1]:4.2f} x)")


def rcp(args, data) -> None:
    """Reverse checkpoint on 64-64-64-10, measured on the wafer: SGD and mini-batches of 8
    with each policy against the same run without RCP (weights must be bit for bit the
    same): activation bytes per PE in the programs' layout, emulated cycles per sample."""
    Xtr, ytr, _, _ = data
    n = min(args.samples, len(Xtr))
    order = np.random.default_rng(args.seed).permutation(len(Xtr))[:n]

    def run(slots, policy, algo, lr, batch):
        ws.nn.manual_seed(0)
        model = ws.nn.Sequential(ws.nn.Linear(64, 64), ws.nn.ReLU(), ws.nn.Linear(64, 64),
                                 ws.nn.ReLU(), ws.nn.Linear(64, 64), ws.nn.ReLU(),
                                 ws.nn.Linear(64, 10))
        plan = ws.map(model, blocks=args.blocks, slots=slots, checkpoint=policy)
        if args.threads is not None:
            plan.wafer.threads = args.threads
        tr = ws.Trainer(plan, algo=algo, lr=lr, batch_size=batch, progress=False)
        tr.fit(Xtr[order], ytr[order], epochs=1, shuffle=False)
        acts = np.array([m["activation_bytes"] for p, m in plan.memory().items()
                         if p in plan.specs])
        return plan, tr, acts

    for slots in args.rcp_slots:
        for algo, lr, batch in (("sgd", 0.1, 1), ("minibatch", 0.3, 8)):
            plan0, tr0, a0 = run(slots, None, algo, lr, batch)
            c0 = tr0.stats().cycles_per_sample
            shapes = ", ".join(f"{b.rows}x{b.cols}" for b in plan0.layers)
            what = "SGD lr 0.1" if algo == "sgd" else f"mini-batch {batch} lr {lr}"
            print(f"\n== reverse checkpoint on the wafer: 64-64-64-10 ReLU, blocks {shapes}, "
                  f"slots={slots}, fp32 {what}, {n} samples; without RCP {c0:.0f} cycles "
                  f"per sample")
            print(f"  {'policy':8s} {'keeps':6s} {'mean B/PE':>15s} {'peak B/PE':>13s} "
                  f"{'ratio':>6s} {'cycles/sample':>17s} {'ratio':>6s} {'same weights':>12s}  aim")
            for policy in (2, 3, 4):
                plan, tr, a1 = run(slots, policy, algo, lr, batch)
                c1 = tr.stats().cycles_per_sample
                same = all(np.array_equal(W, W0) and np.array_equal(b, b0)
                           for (W, b), (W0, b0) in zip(tr.weights(), tr0.weights()))
                keeps = "".join("K" if k else "-" for k in plan.keeps)
                m0, m1 = a0.mean(), a1.mean()
                ok = m1 / m0 <= AIM_RCP_MEMORY and c1 / c0 <= AIM_RCP_CYCLES
                print(f"  {str(policy):8s} {keeps:6s} {m0:6.0f} -> {m1:5.0f} "
                      f"{a0.max():5d} -> {a1.max():4d} {m1 / m0:6.2f} "
                      f"{c0:7.0f} -> {c1:6.0f} {c1 / c0:6.2f} {str(same):>12s}  "
                      f"{'holds' if ok else 'misses'}")
    print(f"  aim: mean activation bytes per PE <= {AIM_RCP_MEMORY} x, cycles <= "
          f"{AIM_RCP_CYCLES} x (both measured: the layout's activation slots, the emulated "
          f"cycles of the same run with and without RCP)")


AIM_CPGD = 1.3           # CPGD steady cycles per sample / slowest stage's busy cycles


def cpgd(args, data) -> None:
    """SGD against CPGD windows: steady cycles per sample against the slowest stage."""
    Xtr, ytr, _, _ = data
    n = min(args.samples, len(Xtr))
    order = np.random.default_rng(args.seed).permutation(len(Xtr))[:n]
    X, y = Xtr[order], ytr[order]
    for sizes in ((64, 32, 10), (64, 64, 64, 10)):
        L = len(sizes) - 1
        print(f"\n== CPGD: {'-'.join(map(str, sizes))} (ReLU, MSE), fp32, lr 0.1, {n} samples; "
              f"slots {2 * L}")
        print(f"  {'run':12s} {'cycles/sample':>13s} {'steady':>8s} {'slowest stage':>13s} "
              f"{'ratio':>6s} {'utilization':>11s}  mean staleness per layer")
        runs = [("sgd", None)] + [("cpgd", w) for w in sorted({1, 2, 4, 2 * L})]
        for algo, window in runs:
            ws.nn.manual_seed(0)
            layers = []
            for a, b in zip(sizes[:-1], sizes[1:]):
                layers += [ws.nn.Linear(a, b), ws.nn.ReLU()]
            plan = ws.map(ws.nn.Sequential(*layers[:-1]), blocks=args.blocks,
                          cpgd=algo == "cpgd", slots=2 * L)
            if args.threads is not None:
                plan.wafer.threads = args.threads
            tr = ws.Trainer(plan, algo=algo, lr=0.1, window=window, progress=False)
            tr.fit(X, y, epochs=1, shuffle=False)
            st = tr.stats()
            steady = st.steady_interval()
            slowest = st.busy().max() / n
            stale = " ".join(f"{s['mean']:.2f}" for s in st.staleness())
            name = algo if window is None else f"cpgd w={window}"
            print(f"  {name:12s} {st.cycles_per_sample:13.0f} {steady:8.0f} {slowest:13.0f} "
                  f"{steady / slowest:5.2f}x {slowest / steady:10.0%}   {stale}")
    print(f"aim: CPGD steady cycles per sample within {AIM_CPGD} x the slowest stage's time")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=400, help="training samples per timed run")
    ap.add_argument("--full", action="store_true", help="train a whole epoch (1437 samples)")
    ap.add_argument("--blocks", type=parse_blocks, default=None,
                    help="block shapes per layer, e.g. 4x4,4x2 (default: automatic)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs; the best is kept")
    ap.add_argument("--threads", type=int, default=None,
                    help="OpenMP threads of the wafer (default: OpenMP's default)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the sample order")
    ap.add_argument("--to95", action="store_true", help="also time training to 95%% test accuracy")
    ap.add_argument("--max-epochs", type=int, default=10, help="epoch limit of --to95")
    ap.add_argument("--kinds", action="store_true",
                    help="only the losses and optimizers side by side (cycles, wall time)")
    ap.add_argument("--flat", action="store_true",
                    help="only time the wall time per sample against the samples queued")
    ap.add_argument("--rcp", action="store_true",
                    help="only reverse checkpoint on 64-64-64-10 (bytes per PE, estimated cycles)")
    ap.add_argument("--rcp-slots", type=lambda t: [int(v) for v in t.split(",")],
                    default=[2, 8], help="slots of the --rcp plans (8: the default, 2 x layers)")
    ap.add_argument("--flat-samples", type=int, default=10_000, help="samples of --flat")
    ap.add_argument("--flat-queues", type=lambda t: [int(v) for v in t.split(",")],
                    default=[100, 1000, 10_000], help="samples per fit call in --flat")
    ap.add_argument("--cpgd", action="store_true",
                    help="only SGD against CPGD windows (steady cycles / slowest stage)")
    args = ap.parse_args()

    data = digits()
    print(f"wafersim {ws.__version__}: training digits 64-32-10 (ReLU, MSE loss) on the "
          f"emulated wafer; wall times best of {args.repeat}, {os.cpu_count()} CPU(s)")
    print(f"baselines: cycles against TrainStats.bound() (aim {AIM_BOUND}x); wall time against "
          f"numpy train_numpy(dtype=float32)")
    if args.flat:
        flat(args, data)
        return
    if args.kinds:
        kinds(args, data)
        return
    if args.rcp:
        rcp(args, data)
        return
    if args.cpgd:
        cpgd(args, data)
        return
    for cfg in CONFIGS:
        bench_config(cfg, args, data)
    if args.to95:
        to95(args, data)


if __name__ == "__main__":
    main()
