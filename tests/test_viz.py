"""Plots draw the counters they are given (Agg, no display)."""

import numpy as np

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
