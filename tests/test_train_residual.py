"""Residual blocks (y = f(x) + x) trained on the wafer: the skip path from the fork's
finalizers to the join's FIFO and back, against the device-order reference (bit for bit),
plain numpy and torch (to 1e-5); the rules of the layout; the FIFO's depth changes timing
only."""

import numpy as np
import pytest

import wafersim as ws
from wafersim.errors import ConfigError
from wafersim.mapping import task_ids as T
from wafersim.reference.training import graph_of, mlp_forward

from train_refs import (assert_params_close, assert_trains_like, data, device_reference,
                        torch_sgd, wafer_and_numpy_sgd)

pytestmark = pytest.mark.nosanitize  # whole training runs: minutes under AddressSanitizer

A = {"relu": ws.nn.ReLU, "sigmoid": ws.nn.Sigmoid, "tanh": ws.nn.Tanh}


def residual_model(inner=(6,), act="relu", n=8, n_in=12, n_out=4, seed=3):
    """Linear(n_in, n) + act, Residual(Linear(n, h) + act, ..., Linear(., n)), Linear(n, n_out)."""
    sizes = (n,) + tuple(inner) + (n,)
    f = []
    for i in range(len(sizes) - 1):
        f.append(ws.nn.Linear(sizes[i], sizes[i + 1], seed=seed * 10 + i + 1))
        if i < len(sizes) - 2:
            f.append(A[act]())
    return ws.nn.Sequential(ws.nn.Linear(n_in, n, seed=seed * 10), A[act](),
                            ws.nn.Residual(ws.nn.Sequential(*f)),
                            ws.nn.Linear(n, n_out, seed=seed * 10 + 9))


def skips_of(model):
    return graph_of(model.dense_layers())[0]


# ---- the layer ---------------------------------------------------------------------------

def test_residual_forward_is_f_plus_x():
    model = residual_model()
    X, _ = data(5)
    block = model[2]
    h = np.maximum(X @ model[0].weight.T + model[0].bias, 0)
    want = block.f(h) + h
    assert np.allclose(block(h), want, rtol=0, atol=0)
    dense = model.dense_layers()
    assert [d.skip_from for d in dense] == [None, None, 1, None]
    params = [(d.linear.weight, d.linear.bias) for d in dense]
    assert np.allclose(model(X), [mlp_forward(params, [d.activation for d in dense], x,
                                              skips_of(model)) for x in X], rtol=1e-6)


@pytest.mark.parametrize("layers, match", [
    (lambda R: [R], "first"),
    (lambda R: [ws.nn.Linear(4, 4), R], "ends the model"),
    (lambda R: [ws.nn.Linear(4, 4), R, ws.nn.ReLU(), ws.nn.Linear(4, 2)], "follows a Residual"),
    (lambda R: [ws.nn.Linear(4, 4), R, ws.nn.Residual(ws.nn.Linear(4, 4)), ws.nn.Linear(4, 2)],
     "follows another Residual"),
    (lambda R: [ws.nn.Linear(4, 5), R, ws.nn.Linear(4, 2)], "takes 4 inputs"),
])
def test_residual_placement_rules_name_the_layer(layers, match):
    R = ws.nn.Residual(ws.nn.Sequential(ws.nn.Linear(4, 4), ws.nn.ReLU()))
    with pytest.raises(ConfigError, match=match):
        ws.nn.Sequential(*layers(R)).dense_layers()


def test_residual_needs_equal_sizes_and_no_nesting():
    with pytest.raises(ConfigError, match="6 outputs"):
        ws.nn.Residual(ws.nn.Linear(4, 6))
    with pytest.raises(ConfigError, match="no nested Residual"):
        ws.nn.Residual(ws.nn.Sequential(ws.nn.Residual(ws.nn.Linear(4, 4))))
    with pytest.raises(ConfigError, match="Residual: f must be a Linear"):
        ws.nn.Residual("linear")


def test_residual_copy_and_parameters_cover_the_inner_layers():
    model = residual_model()
    assert len(model.parameters()) == 8
    twin = model.copy()
    twin.dense_layers()[1].linear.weight[0, 0] += 1
    assert model.dense_layers()[1].linear.weight[0, 0] != twin.dense_layers()[1].linear.weight[0, 0]


def test_residual_to_torch_and_back():
    torch = pytest.importorskip("torch", reason="the torch extra is not installed")
    model = residual_model()
    X, _ = data(4)
    t = model.to_torch()
    with torch.no_grad():
        out = t(torch.from_numpy(X)).numpy()
    assert np.allclose(out, model(X), rtol=1e-6, atol=1e-7)
    back = ws.nn.from_torch(t)
    assert np.array_equal(back(X), model(X))


# ---- the mapping ---------------------------------------------------------------------------

def test_residual_layers_get_square_blocks_of_the_fork_columns():
    model = residual_model(n=32, n_in=64, n_out=10, inner=(32,))
    plan = ws.map(model)
    shapes = [(b.rows, b.cols) for b in plan.layers]
    k = shapes[0][1]
    assert shapes[1] == (k, k) and shapes[2] == (k, k)
    with pytest.raises(ConfigError, match=r"residual block of layers 1\.\.2.*need 2 x 2"):
        ws.map(model, blocks=[(4, 2), (2, 2), (2, 1), (1, 1)])


def test_residual_colors_and_routes():
    plan = ws.map(residual_model(), blocks=[(4, 2), (2, 2), (2, 2), (2, 2)])
    S, B = plan.colors["S"], plan.colors["B"]
    assert S % 8 == T.UT_SKIP and len(set(plan.colors.values())) == 11
    fork, join, first = plan.layers[0], plan.layers[2], plan.layers[1]
    routes = plan.routes.table
    for c in range(2):
        # the skip runs along row c from the fork's F_c to the join's F_c ...
        assert (fork.finalizer(c)) in routes[S] and "RAMP" in routes[S][fork.finalizer(c)][0]
        assert "RAMP" in routes[S][join.finalizer(c)][1]
        # ... and dL/dy from the join's F_c back to the east end of the first layer's row c
        assert "RAMP" in routes[B][join.finalizer(c)][0]
        assert "RAMP" in routes[B][first.at(c, first.cols - 1)][1]
    with pytest.raises(ConfigError, match="needs 11 routable colors"):
        ws.map(residual_model(), ws.Wafer(2, 8, colors=10), blocks=[(2, 2)] * 4)


def test_skip_fifo_memory_grows_with_depth():
    model = residual_model()
    p1 = ws.map(model, blocks=[(2, 2)] * 4, skip_depth=1)
    p4 = ws.map(model, blocks=[(2, 2)] * 4, skip_depth=4)
    F = p1.layers[2].finalizer(0)
    nout = p1.specs[F].nout
    assert p4.memory()[F]["data_bytes"] - p1.memory()[F]["data_bytes"] == 3 * nout * 4
    with pytest.raises(ConfigError, match="skip_depth"):
        ws.map(model, skip_depth=0)


# ---- training, bit for bit ----------------------------------------------------------------

@pytest.mark.parametrize("inner, blocks, algo, depth, act", [
    ((6,), [(2, 2), (2, 2), (2, 2), (2, 2)], "sgd", 1, "relu"),
    ((6,), [(3, 2), (2, 2), (2, 2), (2, 1)], "minibatch", 2, "tanh"),
    ((), [(4, 2), (2, 2), (2, 2)], "minibatch", 1, "relu"),          # f is one layer
    ((6, 5), [(1, 1)] * 5, "minibatch", 3, "sigmoid"),
])
def test_residual_training_bit_identical_to_device_order_reference(inner, blocks, algo, depth, act):
    """Every weight and the loss after 24 samples equal the reference that adds the skip
    at the join and starts each row of the first layer's delta sums with dL/dy."""
    model = residual_model(inner=inner, act=act)
    X, Y = data(24)
    assert_trains_like(device_reference(model, blocks), model, X, Y, blocks, algo, skip_depth=depth)


def test_residual_training_close_to_numpy_and_torch():
    model = residual_model()
    X, Y = data(40, seed=2)
    got, want = wafer_and_numpy_sgd(model, X, Y, 0.05)
    assert_params_close(got, want)
    assert_params_close(got, torch_sgd(model, X, Y, 0.05))


def test_skip_depth_changes_timing_not_results():
    """A deep residual block streamed through the wafer: with one skip vector the fork
    waits for the join (the skip path backs up), with four it does not; the outputs are
    bit-identical either way."""
    model = residual_model(inner=(32, 32, 32), n=32)
    X, _ = data(40)
    runs = {}
    for depth in (1, 4):
        plan = ws.map(model, blocks=[(2, 1)] + [(1, 1)] * 5, skip_depth=depth)
        tr = ws.Trainer(plan, progress=False)
        c0 = plan.wafer.cycle
        out = tr.predict(X)
        runs[depth] = (out, plan.wafer.cycle - c0)
    assert np.array_equal(runs[1][0], runs[4][0])
    assert runs[1][1] > 1.1 * runs[4][1]
