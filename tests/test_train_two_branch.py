"""Two-branch blocks (y = f(x) + g(x)) trained on the wafer: both branches on the fork's
rows, branch f's output in the join's FIFO, branch g's dL/dx starting the rows of f's
first layer; against the device-order reference (bit for bit), plain numpy and torch (to
1e-5); the layout rules; the balancing pass on the wafer (seed 004 [0157], [0180])."""

import numpy as np
import pytest

import wafersim as ws
from wafersim.balance.mapped import balanced_skip_depths
from wafersim.errors import ConfigError
from wafersim.mapping import task_ids as T
from wafersim.reference.training import graph_of, mlp_forward

from train_refs import (assert_params_close, assert_trains_like, data, device_reference,
                        relu_layers, stream_with_depth, torch_sgd, wafer_and_numpy_sgd)

pytestmark = pytest.mark.nosanitize  # whole training runs: minutes under AddressSanitizer

A = {"relu": ws.nn.ReLU, "sigmoid": ws.nn.Sigmoid, "tanh": ws.nn.Tanh}


def branch(sizes, act, seed):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(ws.nn.Linear(sizes[i], sizes[i + 1], seed=seed + i))
        if i < len(sizes) - 2:
            layers.append(A[act]())
    return ws.nn.Sequential(*layers)


def two_branch_model(f_inner=(), g_inner=(5,), act="relu", n=8, m=None, n_in=12, n_out=4,
                     seed=3):
    """Linear(n_in, n) + act, TwoBranch(f: n -> ... -> m, g: n -> ... -> m), Linear(m, n_out)."""
    m = n if m is None else m
    f = branch((n,) + tuple(f_inner) + (m,), act, seed * 10 + 1)
    g = branch((n,) + tuple(g_inner) + (m,), act, seed * 10 + 5)
    return ws.nn.Sequential(ws.nn.Linear(n_in, n, seed=seed * 10), A[act](),
                            ws.nn.TwoBranch(f, g), ws.nn.Linear(m, n_out, seed=seed * 10 + 9))


# ---- the layer ---------------------------------------------------------------------------

def test_two_branch_forward_is_f_plus_g_and_the_dense_view_names_the_fork():
    model = two_branch_model(f_inner=(6,), g_inner=(5,))
    X, _ = data(5)
    pair = model[2]
    h = np.maximum(X @ model[0].weight.T + model[0].bias, 0)
    assert np.array_equal(pair(h), (pair.f(h) + pair.g(h)).astype(np.float32))
    dense = model.dense_layers()
    # layers: 0 fork, 1-2 branch f, 3-4 branch g (3 reads layer 0), 4 joins (adds f's output)
    assert [d.input_from for d in dense] == [None, None, None, 0, None, None]
    assert [d.skip_from for d in dense] == [None, None, None, None, 1, None]
    assert graph_of(dense) == ({4: 3}, {3: 1})
    skips, sources = graph_of(dense)
    params = [(d.linear.weight, d.linear.bias) for d in dense]
    assert np.allclose(model(X), [mlp_forward(params, [d.activation for d in dense], x, skips,
                                              sources) for x in X], rtol=1e-5, atol=1e-6)
    assert len(model.parameters()) == 12


def test_two_branch_mistakes_name_the_problem():
    with pytest.raises(ConfigError, match="f takes 4 inputs and g 5"):
        ws.nn.TwoBranch(ws.nn.Linear(4, 3), ws.nn.Linear(5, 3))
    with pytest.raises(ConfigError, match="f gives 3 outputs and g 2"):
        ws.nn.TwoBranch(ws.nn.Linear(4, 3), ws.nn.Linear(4, 2))
    with pytest.raises(ConfigError, match="no nested Residual or TwoBranch"):
        ws.nn.TwoBranch(ws.nn.Linear(4, 4), [ws.nn.Residual(ws.nn.Linear(4, 4))])
    with pytest.raises(ConfigError, match="TwoBranch: g must be a Linear"):
        ws.nn.TwoBranch(ws.nn.Linear(4, 4), "linear")
    T2 = ws.nn.TwoBranch(ws.nn.Linear(4, 3), ws.nn.Linear(4, 3))
    for layers, match in [([T2], "is first"), ([ws.nn.Linear(4, 4), T2], "ends the model"),
                          ([ws.nn.Linear(4, 4), T2, ws.nn.ReLU(), ws.nn.Linear(3, 2)],
                           "follows a TwoBranch"),
                          ([ws.nn.Linear(4, 4), ws.nn.Residual(ws.nn.Linear(4, 4)), T2,
                            ws.nn.Linear(3, 2)], "follows another Residual"),
                          ([ws.nn.Linear(4, 4), T2, ws.nn.Linear(4, 2)], "takes 4 inputs")]:
        with pytest.raises(ConfigError, match=match):
            ws.nn.Sequential(*layers).dense_layers()


def test_two_branch_to_torch_and_back():
    torch = pytest.importorskip("torch", reason="the torch extra is not installed")
    model = two_branch_model(f_inner=(6,))
    X, _ = data(4)
    t = model.to_torch()
    with torch.no_grad():
        out = t(torch.from_numpy(X)).numpy()
    assert np.allclose(out, model(X), rtol=1e-6, atol=1e-7)
    assert np.array_equal(ws.nn.from_torch(t)(X), model(X))


# ---- the mapping ---------------------------------------------------------------------------

def test_two_branch_layers_get_square_blocks_of_the_fork_columns():
    model = two_branch_model(n=32, n_in=64, n_out=10, g_inner=(32,))
    plan = ws.map(model)
    shapes = [(b.rows, b.cols) for b in plan.layers]
    k = shapes[0][1]
    assert all(s == (k, k) for s in shapes[1:4])
    assert plan.branches == [(1, 2, 3)]
    with pytest.raises(ConfigError, match=r"two-branch block of layers 1\.\.3.*need 2 x 2"):
        ws.map(model, blocks=[(4, 2), (2, 2), (2, 1), (1, 1), (1, 1)])


def test_two_branch_colors_and_routes():
    plan = ws.map(two_branch_model(f_inner=(6,)), blocks=[(4, 2)] + [(2, 2)] * 5)
    col = plan.colors
    assert len(set(col.values())) == 13 and {"X", "S", "K", "G"} <= set(col)
    assert col["S"] % 8 == T.UT_SKIP and col["K"] % 8 in T.UT_FOR_J
    fork, f0, f1, g0, g1 = plan.layers[:5]
    routes = plan.routes.table
    for c in range(2):
        # one input stream from the fork's F_c through f's blocks into g's first block
        x = routes[col["X"]]
        assert "RAMP" in x[fork.finalizer(c)][0]
        assert all("RAMP" in x[p][1] for p in (f0.at(c, 0), f0.at(c, 1), g0.at(c, 0), g0.at(c, 1)))
        assert all("RAMP" not in x[p][1] for p in (f1.at(c, 0), f1.at(c, 1)))
        # f(x) dense to the join's FIFO, dL/dy back to f's last finalizer
        assert "RAMP" in routes[col["S"]][f1.finalizer(c)][0]
        assert "RAMP" in routes[col["S"]][g1.finalizer(c)][1]
        assert "RAMP" in routes[col["K"]][g1.finalizer(c)][0]
        assert "RAMP" in routes[col["K"]][f1.finalizer(c)][1]
        # g's dL/dx from the west end of its first layer to the east end of f's first layer
        assert "RAMP" in routes[col["G"]][g0.at(c, 0)][0]
        assert "RAMP" in routes[col["G"]][f0.at(c, 1)][1]
    # f's last finalizers send nothing sparse (no A route out of them into g)
    for c in range(2):
        assert all("RAMP" not in routes[col[a]].get(f1.finalizer(c), ((), ()))[0]
                   for a in ("A0", "A1"))
    spec = plan.specs[f1.finalizer(0)]
    assert spec.a_out is None and spec.skip_out == col["S"] and spec.j_in == col["K"]
    assert "two-branch block of layers 1..4" in plan.describe()
    with pytest.raises(ConfigError, match="needs 13 routable colors"):
        ws.map(two_branch_model(), ws.Wafer(2, 10, colors=12), blocks=[(2, 2)] * 5)


def test_residual_and_two_branch_together_use_fourteen_colors():
    model = ws.nn.Sequential(ws.nn.Linear(12, 8, seed=1), ws.nn.ReLU(),
                             ws.nn.Residual(ws.nn.Linear(8, 8, seed=2)), ws.nn.Linear(8, 8, seed=3),
                             ws.nn.TwoBranch(ws.nn.Linear(8, 8, seed=4), ws.nn.Linear(8, 8, seed=5)),
                             ws.nn.Linear(8, 4, seed=6))
    plan = ws.map(model, blocks=[(4, 2)] + [(2, 2)] * 4 + [(2, 1)])
    assert len(set(plan.colors.values())) == 14
    X, Y = data(12)
    ref = device_reference(model, [(4, 2)] + [(2, 2)] * 4 + [(2, 1)])
    _, losses = ref.fit(X, Y, 0.05, "sgd")
    tr = ws.Trainer(plan, algo="sgd", lr=0.05, progress=False)
    assert tr.fit(X, Y, epochs=1, shuffle=False).loss[0] == losses.mean()
    for (W, b), (Wr, br) in zip(tr.weights(), ref.params()):
        assert np.array_equal(W, Wr) and np.array_equal(b, br)


# ---- training, bit for bit ----------------------------------------------------------------

@pytest.mark.parametrize("f_inner, g_inner, blocks, algo, act", [
    ((), (5,), [(4, 2), (2, 2), (2, 2), (2, 2), (2, 1)], "sgd", "relu"),
    ((6,), (), [(4, 2), (2, 2), (2, 2), (2, 2), (2, 1)], "minibatch", "tanh"),
    ((), (), [(3, 2), (2, 2), (2, 2), (2, 2)], "minibatch", "relu"),        # one layer each
    ((6,), (5, 4), [(1, 1)] * 7, "sgd", "sigmoid"),
])
def test_two_branch_training_bit_identical_to_device_order_reference(f_inner, g_inner, blocks,
                                                                     algo, act):
    """Every weight and the loss after 24 samples equal the reference that adds f(x) at
    the join, gives dL/dy to f's last layer and starts each row of f's first layer's delta
    sums with g's dL/dx."""
    model = two_branch_model(f_inner=f_inner, g_inner=g_inner, act=act)
    X, Y = data(24)
    assert_trains_like(device_reference(model, blocks), model, X, Y, blocks, algo)


def test_two_branch_training_close_to_numpy_and_torch():
    model = two_branch_model(f_inner=(6,), m=6)
    X, Y = data(40, seed=2)
    got, want = wafer_and_numpy_sgd(model, X, Y, 0.05)
    assert_params_close(got, want)
    assert_params_close(got, torch_sgd(model, X, Y, 0.05))


# ---- balancing on the wafer ---------------------------------------------------------------

def long_g(layers=4, n=48, seed=0):
    """Branch f one layer, branch g ``layers`` layers: f(x) waits at the join."""
    ws.nn.manual_seed(seed)
    return ws.nn.Sequential(ws.nn.Linear(12, n), ws.nn.ReLU(),
                            ws.nn.TwoBranch(ws.nn.Linear(n, n), relu_layers(layers, n)),
                            ws.nn.Linear(n, 4))


def test_two_branch_graph_and_balanced_depth():
    """The fork feeds both branches; the short branch (f) holds as many samples as g's
    extra stages in equal-depth mode [0180], and the model then runs at one sample per step."""
    model = long_g(4)
    g = ws.map(model, blocks=[(2, 1)] + [(1, 1)] * 6, skip_depth=1).pipeline_graph()
    assert sorted(g.buffers["a2"].consumers) == ["L2"] and g.buffers["a2"].producer == "L0"
    assert g.buffers["skip5"].producer == "L1"
    # the seed's law [0157]: max(1, long / short) steps per sample with a FIFO of one
    assert ws.balance.steady_interval(g) > 1.5
    assert balanced_skip_depths(model.dense_layers()) == {5: 3}
    plan = ws.map(model, blocks=[(2, 1)] + [(1, 1)] * 6)
    assert plan.skip_depths == {5: 3}
    assert ws.balance.simulate(plan.pipeline_graph(), batches=30).interval == pytest.approx(1.0)


def test_two_branch_wafer_interval_after_balancing_matches_the_pipeline_model():
    """Samples stream through the block: with a FIFO of one f(x) the fork waits for g;
    after balancing the wafer's steady cycles per sample are within 5% of the pipeline
    model's prediction, and the outputs are bit-identical."""
    model = long_g(4)
    X = data(60)[0]
    blocks = [(2, 1)] + [(1, 1)] * 6
    slow, fast = (stream_with_depth(model, X, blocks, d) for d in (1, "balanced"))
    assert np.array_equal(slow["out"], fast["out"])
    assert np.allclose(fast["out"], model(X), rtol=1e-5, atol=1e-6)
    assert fast["interval"] == pytest.approx(fast["predicted"], rel=0.05)
    assert slow["interval"] > 1.15 * fast["interval"]
