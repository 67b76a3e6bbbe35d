"""Plots draw the counters they are given (Agg, no display)."""

import numpy as np
import pytest
from matplotlib.figure import Figure

import wafersim as ws
import wafersim.viz as viz


def busy_wafer():
    w = ws.Wafer(4, 5)
    w.route(1, path=[(0, 0), (0, 1), (0, 2), (1, 2)])
    w.inject((0, 0), 1, data=np.arange(6))
    w.run()
    return w.counters()


def test_link_heatmap_draws_link_counts_per_cycle_with_row_0_at_the_bottom():
    c = busy_wafer()
    fig = viz.link_heatmap(c)
    image = fig.axes[0].images[0]
    expected = c.link_counts[:, :, :10].sum(axis=2) / c.cycles
    assert np.allclose(image.get_array(), expected)
    assert image.origin == "lower"
    east = viz.link_heatmap(c, "E", per_cycle=False).axes[0].images[0].get_array()
    assert east[0, 0] == 6 and east[0, 1] == 6 and east.sum() == 12


def test_occupancy_heatmap_and_load_curves_plot_their_data():
    c = busy_wafer()
    img = viz.occupancy_heatmap(c, maximum=True).axes[0].images[0].get_array()
    assert np.array_equal(img, c.occupancy_max)
    curve = ws.noc.load_sweep("uniform", 4, 4, rates=(0.05, 0.1), window=100, drain=100)
    line = viz.latency_vs_load([curve]).axes[0].lines[0]
    assert np.allclose(line.get_xdata(), curve.offered)
    assert np.allclose(line.get_ydata(), curve.latency)


def trained_plan():
    """An 8-4-3 MLP on 2 x 2 + 2 x 1 PEs, trained for two epochs on six random samples."""
    ws.nn.manual_seed(0)
    model = ws.nn.Sequential(ws.nn.Linear(8, 4), ws.nn.ReLU(), ws.nn.Linear(4, 3))
    plan = ws.map(model, blocks=[(2, 2), (2, 1)])
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(6, 8)).astype(np.float32), rng.integers(0, 3, 6)
    tr = ws.Trainer(plan, algo="sgd", lr=0.1, progress=False)
    hist = tr.fit(X, y, epochs=2, validation=(X, y))
    return plan, tr.stats(), hist


def test_placement_draws_each_layer_block_its_finalizers_and_every_routed_color():
    plan, _, _ = trained_plan()
    ax = plan.picture().axes[0]
    blocks = [p for p in ax.patches if p.get_label().startswith("layer")]
    assert [p.get_label() for p in blocks] == ["layer 0: Linear(8, 4) + relu",
                                               "layer 1: Linear(4, 3) + identity"]
    assert [(p.get_x(), p.get_y(), p.get_width(), p.get_height()) for p in blocks] == [
        (-0.5, -0.5, 2, 2), (1.5, -0.5, 1, 2)]
    finalizers = next(c for c in ax.collections if c.get_label() == "finalizer")
    assert sorted(map(tuple, finalizers.get_offsets().tolist())) == [(0, 0), (1, 1), (2, 0)]
    # one legend entry per role whose color is routed: this plan has no H colors and one P
    entries = [t.get_text() for t in ax.get_legend().get_texts()]
    roles = [e.split()[0] for e in entries if "(color" in e]
    assert sorted(roles) == ["A0", "A1", "D", "J0", "J1", "P0"]
    # one arrow per hop: every link a route sends on, plus the hops in from edge ports
    hops = sum(len(tx & {"E", "W", "N", "S"}) + (("W" in rx and c == 0) or
                                                 ("E" in rx and c == plan.wafer.cols - 1))
               for routers in plan.routes.table.values() for (_, c), (rx, tx) in routers.items())
    assert len(ax.texts) == hops > 0


def test_busy_heatmaps_show_each_pass_of_the_training_stats():
    _, st, _ = trained_plan()
    fig = viz.plot_busy(st)
    heatmaps = [a for a in fig.axes if a.images]
    assert [a.get_title() for a in heatmaps] == ["forward pass", "delta pass", "chain pass"]
    for a, pass_ in zip(heatmaps, ("forward", "delta", "chain")):
        assert np.array_equal(a.images[0].get_array(), st.busy(pass_))
        assert a.images[0].origin == "lower"
    assert len(fig.axes) == 6  # a colorbar each
    mine = Figure().subplots(1, 2)
    viz.plot_busy(st, ax=mine, passes=("control", None))
    assert np.array_equal(mine[1].images[0].get_array(), st.busy())
    with pytest.raises(ws.ConfigError):
        viz.plot_busy(st, ax=mine[0])


def test_link_traffic_and_history_plot_their_data():
    plan, _, hist = trained_plan()
    image = viz.plot_link_traffic(plan).axes[0].images[0]
    sent = plan.wafer.counters().link_counts[:, :, :10].sum(axis=2)
    assert np.array_equal(image.get_array(), sent)
    assert image.get_array().sum() > 0
    fig = viz.plot_history(hist)
    loss_ax, acc_ax = fig.axes
    assert [list(line.get_ydata()) for line in loss_ax.lines] == [hist.loss, hist.val_loss]
    assert [list(line.get_ydata()) for line in acc_ax.lines] == [hist.accuracy, hist.val_accuracy]
    assert list(loss_ax.lines[0].get_xdata()) == [1, 2]
