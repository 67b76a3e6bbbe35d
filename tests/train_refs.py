"""Shared pieces of the training tests: the same model trained by torch.optim.SGD, and
parameter comparisons."""

import numpy as np
import pytest

import wafersim as ws


def torch_sgd(model, X, Y, lr: float) -> list:
    """(W, b) per layer after one pass of per-sample SGD on the mean squared error in torch
    (skips the test when torch is not installed)."""
    torch = pytest.importorskip("torch", reason="the torch extra is not installed")
    net = model.to_torch()
    opt = torch.optim.SGD(net.parameters(), lr=lr)
    for x, y in zip(torch.from_numpy(X), torch.from_numpy(Y)):
        opt.zero_grad()
        torch.nn.functional.mse_loss(net(x), y).backward()
        opt.step()
    return [(d.linear.weight, d.linear.bias) for d in ws.nn.from_torch(net).dense_layers()]


def wafer_and_numpy_sgd(model, X, Y, lr: float) -> tuple[list, list]:
    """One epoch of SGD in order on the wafer and in the numpy reference, which follows
    the model's graph (residual skips, a two-branch block's sources): both weight lists."""
    from wafersim.reference.training import graph_of, train_numpy

    dense = model.dense_layers()
    params = [(d.linear.weight, d.linear.bias) for d in dense]
    acts = [d.activation for d in dense]
    tr = ws.Trainer(ws.map(model.copy()), algo="sgd", lr=lr, progress=False)
    tr.fit(X, Y, epochs=1, shuffle=False)
    skips, sources = graph_of(dense)
    return tr.weights(), train_numpy(params, acts, X, Y, lr, skips=skips, sources=sources)


def assert_params_close(got, want, rtol=1e-5, atol=1e-6) -> None:
    for (W, b), (Wr, br) in zip(got, want, strict=True):
        assert np.allclose(W, Wr, rtol=rtol, atol=atol)
        assert np.allclose(b, br, rtol=rtol, atol=atol)


def relu_layers(layers: int, n: int) -> list:
    """``layers`` times Linear(n, n) + ReLU (weights from the module generator)."""
    out = []
    for _ in range(layers):
        out += [ws.nn.Linear(n, n), ws.nn.ReLU()]
    return out


def assert_trains_like(ref, model, X, Y, blocks, algo: str, lr: float = 0.05, **map_args) -> None:
    """One epoch of ``model`` mapped with ``blocks`` (SGD, or mini-batches of 4) gives the
    loss and every parameter of the device-order reference ``ref`` bit for bit."""
    _, losses = ref.fit(X, Y, lr, algo, 4)
    plan = ws.map(model, blocks=blocks, **map_args)
    tr = ws.Trainer(plan, algo=algo, lr=lr, batch_size=1 if algo == "sgd" else 4, progress=False)
    hist = tr.fit(X, Y, epochs=1, shuffle=False)
    assert hist.loss[0] == losses.mean()
    for (W, b), (Wr, br) in zip(tr.weights(), ref.params(), strict=True):
        assert np.array_equal(W, Wr) and np.array_equal(b, br)


def stream_with_depth(model, X, blocks, depth) -> dict:
    """``X`` streamed through ``model`` (``predict``) with a skip FIFO of ``depth``: the
    outputs, the wafer's steady cycles per sample, the pipeline model's prediction (its
    interval in steps times the busiest PE's cycles per sample in the slowest block) and
    the stage times."""
    from wafersim.balance.mapped import predicted_cycles

    plan = ws.map(model, blocks=blocks, skip_depth=depth)
    tr = ws.Trainer(plan, progress=False, timeline=True)
    out = tr.predict(X)
    st = tr.stats()
    busy = st.busy() / len(X)
    service = [max(busy[p] for p in b.points()) for b in plan.layers]
    steps = ws.balance.simulate(plan.pipeline_graph(), batches=40).interval
    return {"out": out, "interval": st.steady_interval(),
            "predicted": predicted_cycles(steps, service), "times": st.stage_times()}


def data(n, n_in=12, n_out=4, seed=0):
    """n samples with half their inputs zero (zeros are never sent) and targets in +-1."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, n_in)).astype(np.float32)
    X[X < 0] = 0
    Y = rng.uniform(-1, 1, (n, n_out)).astype(np.float32)
    return X, Y


def device_reference(model, shapes):
    """The device-order fp32 reference of ``model`` mapped with block ``shapes``."""
    from wafersim.reference.training import DeviceOrderMLP, graph_of

    dense = model.dense_layers()
    skips, sources = graph_of(dense)
    return DeviceOrderMLP([(d.linear.weight, d.linear.bias) for d in dense],
                          [d.activation for d in dense], shapes, skips, sources)
