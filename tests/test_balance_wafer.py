"""The balancing pass on the wafer (seed 004 on the mapping of seed 000): a mapped
residual network's pipeline graph, the skip depth ws.map chooses, and the emulated
wafer's steady cycles per sample against the pipeline model's prediction."""

import numpy as np
import pytest

import wafersim as ws
from wafersim.balance.mapped import balanced_skip_depths, model_graph, predicted_cycles
from wafersim.errors import ConfigError

from train_refs import relu_layers, stream_with_depth

pytestmark = pytest.mark.nosanitize  # whole pipelines of samples on the wafer


def deep_residual(layers=4, n=32, seed=0):
    ws.nn.manual_seed(seed)
    return ws.nn.Sequential(ws.nn.Linear(12, n), ws.nn.ReLU(),
                            ws.nn.Residual(relu_layers(layers, n)), ws.nn.Linear(n, 4))


def samples(k, seed=0):
    X = np.random.default_rng(seed).uniform(-1, 1, (k, 12)).astype(np.float32)
    X[X < 0] = 0
    return X


def test_mapped_graph_has_the_skip_as_a_second_path_into_the_join():
    dense = deep_residual().dense_layers()
    g = model_graph(dense, {5 - 1: 1})
    assert g.joins == ("L4",) or list(g.joins) == ["L4"]
    assert ws.balance.unbalanced_joins(g)
    # the seed's throughput law: max(1, long / short) = 4 steps per sample [0157]
    assert ws.balance.simulate(g, batches=40).interval == pytest.approx(4.0, abs=0.05)
    assert ws.balance.steady_interval(g) == pytest.approx(4.0)


@pytest.mark.parametrize("layers", [1, 2, 4])
def test_map_balances_the_skip_by_default(layers):
    """Equal-depth mode [0180]: the skip holds as many samples as the path through the
    block's layers, and the model then runs at one sample per step."""
    model = deep_residual(layers)
    plan = ws.map(model, blocks=[(2, 1)] + [(1, 1)] * (layers + 1))
    join = plan.residuals[0][1]
    assert plan.skip_depths == {join: layers} == balanced_skip_depths(model.dense_layers())
    assert ws.balance.simulate(plan.pipeline_graph(), batches=30).interval == pytest.approx(1.0)
    assert ws.map(model, skip_depth=2).skip_depths == {join: 2}
    assert ws.map(model, skip_depth={join: 3}).skip_depths == {join: 3}


def test_skip_depth_mistakes_name_the_problem():
    model = deep_residual(2)
    with pytest.raises(ConfigError, match="'balanced', an integer"):
        ws.map(model, skip_depth="deep")
    with pytest.raises(ConfigError, match=r"names layer\(s\) \[1\]"):
        ws.map(model, skip_depth={1: 2})
    with pytest.raises(ConfigError, match=r"skip_depth\[2\] must be an integer 1..64"):
        ws.map(model, skip_depth={2: 0})
    with pytest.raises(ConfigError, match="service_cycles"):
        predicted_cycles(1.0, [0, 0])


def test_wafer_steady_interval_after_balancing_matches_the_pipeline_model():
    """Samples stream through a residual block of four one-PE layers. With a skip FIFO of
    one vector the fork waits for the join; after balancing, the wafer's steady cycles per
    sample are within 5% of the model's interval times the slowest block's busy cycles
    per sample. Outputs and stage order are the same either way."""
    model = deep_residual(4)
    X = samples(60)
    blocks = [(2, 1)] + [(1, 1)] * 5
    slow, fast = (stream_with_depth(model, X, blocks, d) for d in (1, "balanced"))
    times1, times = slow["times"], fast["times"]
    assert np.array_equal(slow["out"], fast["out"])
    assert fast["interval"] == pytest.approx(fast["predicted"], rel=0.05)
    assert slow["interval"] > 1.15 * fast["interval"]
    assert sorted(times) == list(range(6))
    for t in (times1, times):
        stack = np.array([t[l] for l in range(6)])
        assert stack.shape == (6, 60) and np.all(np.diff(stack, axis=0) > 0)  # layer by layer
        assert np.all(np.diff(stack, axis=1) > 0)                            # sample by sample


def test_diagonal_channels_change_nothing_when_every_route_is_a_row():
    """The cross-seed experiment (seed 003's diagonals): this placement routes every path,
    the skip included, along a row, so a mesh with diagonal channels runs it cycle for
    cycle as the mesh does."""
    model = deep_residual(2, n=16)
    X = samples(20)
    blocks = [(2, 1)] + [(1, 1)] * 3
    cycles = []
    for topology in ("mesh", "mesh+diag"):
        plan = ws.map(model, ws.Wafer(2, 5, topology), blocks=blocks, skip_depth=1)
        tr = ws.Trainer(plan, progress=False)
        tr.predict(X)
        cycles.append(tr.stats().completions.tolist())
    assert cycles[0] == cycles[1]


def test_stage_timeline_plot():
    from wafersim.viz import plot_stage_timeline

    fig = plot_stage_timeline({0: [10, 20, 30], 1: [15, 25, 35]}, samples=[0, 2])
    assert len(fig.axes[0].lines) == 2
    with pytest.raises(ConfigError, match="timeline=True"):
        plot_stage_timeline({})
    with pytest.raises(ConfigError, match="samples must be in 0..2"):
        plot_stage_timeline({0: [1, 2, 3]}, samples=[5])
