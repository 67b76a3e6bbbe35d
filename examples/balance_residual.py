"""A residual network on the wafer: its join stalls the pipeline, the balancing pass
(seed 004) sizes the skip FIFO, and the emulated wafer runs faster.

The network: Linear(64, 32) + ReLU, then a residual block of four Linear(32, 32) + ReLU
layers (y = f(x) + x), then Linear(32, 10), trained on the digits. Every layer of the block
is one PE (1 x 1 blocks), so a sample's skip vector is 32 wavelets long: more than the
router queues along the skip route hold, so the FIFO at the join decides how far the fork
may run ahead. Samples stream through the wafer (inference); with a FIFO of one vector
the fork waits for the join, and the layers in between idle.

For each skip depth (1, and the pass's choice) on a mesh and on a mesh with diagonal
channels: the pipeline model's interval, the wafer's steady cycles per sample, the
prediction (model interval x the slowest block's busy cycles per sample), the memory of
the FIFO, and a stage timeline.

Run: python examples/balance_residual.py [--train 400] [--test 200] [--plot timeline.png]
"""

import argparse

import numpy as np

import wafersim as ws
from wafersim.balance.mapped import WAFER_BLOCK_BYTES, model_graph, predicted_cycles
from wafersim.train.datasets import digits

LAYERS_IN_BLOCK = 4


def model(seed: int = 0):
    ws.nn.manual_seed(seed)
    f = []
    for _ in range(LAYERS_IN_BLOCK):
        f += [ws.nn.Linear(32, 32), ws.nn.ReLU()]
    return ws.nn.Sequential(ws.nn.Linear(64, 32), ws.nn.ReLU(),
                            ws.nn.Residual(ws.nn.Sequential(*f)), ws.nn.Linear(32, 10))


def run(skip_depth, topology: str, X, y, Xt, yt) -> dict:
    """Trains a fresh copy of the model on (X, y), then streams Xt through the wafer."""
    blocks = [(2, 1)] + [(1, 1)] * (LAYERS_IN_BLOCK + 1)
    wafer = ws.Wafer(2, len(blocks) + 1, topology)
    plan = ws.map(model(), wafer, blocks=blocks, skip_depth=skip_depth)
    ws.Trainer(plan, algo="sgd", lr=0.05, progress=False).fit(X, y, epochs=1, shuffle=False)
    tr = ws.Trainer(plan, progress=False, timeline=True)      # fresh statistics
    out = tr.predict(Xt)
    st = tr.stats()
    busy = st.busy() / len(Xt)
    service = [max(busy[p] for p in b.points()) for b in plan.layers]
    g = plan.pipeline_graph()
    interval = ws.balance.simulate(g, batches=4 * len(plan.layers) + 8).interval
    join = plan.residuals[0][1]
    fifo = plan.skip_depths[join] * plan.layers[join].dense.n_out * 4
    return {"plan": plan, "outputs": out, "accuracy": float(np.mean(out.argmax(1) == yt)),
            "steady": st.steady_interval(), "model_steps": interval,
            "predicted": predicted_cycles(interval, service), "fifo_bytes": fifo,
            "times": st.stage_times(), "graph": g}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--train", type=int, default=400, help="training samples (one epoch, SGD)")
    ap.add_argument("--test", type=int, default=200, help="samples streamed for the timing")
    ap.add_argument("--plot", help="write the stage timelines (before / after) to this image")
    args = ap.parse_args()
    Xtr, ytr, Xte, yte = digits()
    X, y, Xt, yt = Xtr[:args.train], ytr[:args.train], Xte[:args.test], yte[:args.test]

    graph = model_graph(model().dense_layers())          # skip FIFO of one vector
    res = ws.balance.balance(graph, block_bytes=WAFER_BLOCK_BYTES)
    print("the pipeline graph of the mapped model (skip FIFO of one vector):")
    print("  " + ws.balance.to_text(graph).replace("\n", "\n  "))
    print("the balancing pass:\n  " + res.summary().replace("\n", "\n  "))

    rows = []
    runs = {}
    for topology in ("mesh", "mesh+diag"):
        for depth in (1, "balanced"):
            r = run(depth, topology, X, y, Xt, yt)
            runs[(topology, depth)] = r
            d = r["plan"].skip_depths[r["plan"].residuals[0][1]]
            rows.append((topology, d, r["model_steps"], r["steady"], r["predicted"],
                         r["fifo_bytes"], r["accuracy"]))
    print(f"\n{'topology':10} {'skip depth':>10} {'model II':>9} {'wafer cycles/sample':>20} "
          f"{'predicted':>10} {'FIFO bytes':>11} {'accuracy':>9}")
    for t, d, m, s, p, f, a in rows:
        print(f"{t:10} {d:>10} {m:>9.2f} {s:>20.0f} {p:>10.0f} {f:>11} {a:>9.3f}")
    for t in ("mesh", "mesh+diag"):
        before, after = runs[(t, 1)], runs[(t, "balanced")]
        assert np.array_equal(before["outputs"], after["outputs"]), "outputs must not change"
        print(f"{t}: {before['steady'] / after['steady']:.2f}x faster after balancing; after: "
              f"wafer / prediction = {after['steady'] / after['predicted']:.3f}; outputs "
              "bit-identical")
    same = all(runs[("mesh", d)]["steady"] == runs[("mesh+diag", d)]["steady"] for d in (1, "balanced"))
    print("diagonal channels change nothing here: every route of this placement runs along a "
          "row" if same else "diagonal channels changed the timing")

    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from wafersim.viz import plot_stage_timeline

        fig, axs = plt.subplots(1, 2, figsize=(12, 3.6), layout="constrained", sharey=True)
        for ax, depth, name in ((axs[0], 1, "skip FIFO of 1 (before)"),
                                (axs[1], "balanced", "balanced skip FIFO (after)")):
            times = runs[("mesh", depth)]["times"]
            n = min(len(v) for v in times.values())
            plot_stage_timeline(times, ax=ax, samples=range(n // 2, n // 2 + 8), title=name)
        fig.savefig(args.plot, dpi=120)
        print(f"stage timelines written to {args.plot}")


if __name__ == "__main__":
    main()
