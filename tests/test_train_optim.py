"""SGD with momentum, Nesterov momentum and weight decay on the wafer (``ws.optim.SGD``,
torch's update rule; velocities in PE memory), against the device-order reference bit for
bit, textbook float64 numpy and torch.optim.SGD."""

import numpy as np
import pytest

import wafersim as ws
from wafersim.reference.training import DeviceOrderMLP, train_numpy
from train_models import SHAPES, data, make_model, params_of

pytestmark = pytest.mark.nosanitize  # whole training runs

OPTIONS = [dict(momentum=0.9), dict(momentum=0.8, nesterov=True),
           dict(momentum=0.9, nesterov=True, weight_decay=0.01), dict(weight_decay=0.02)]


def train(opt, algo, batch, n=100):
    model = make_model()
    init = params_of(model)
    X, Y = data(n)
    plan = ws.map(model, blocks=SHAPES, optimizer=ws.optim.SGD(lr=0.05, **opt))
    tr = ws.Trainer(plan, algo=algo, batch_size=batch, progress=False)
    tr.fit(X, Y, shuffle=False)
    return tr, init, X, Y


@pytest.mark.parametrize("opt", OPTIONS, ids=lambda o: "-".join(f"{k}{v}" for k, v in o.items()))
@pytest.mark.parametrize("algo,batch", [("sgd", 1), ("minibatch", 8)])
def test_bit_identical_to_device_order_reference(opt, algo, batch):
    """100 samples: every weight and bias equals the reference that applies torch's rule
    in the mapping's order (mapping/lowering/sgd.py) with one rounding per instruction."""
    tr, init, X, Y = train(opt, algo, batch)
    acts = [d.activation for d in tr.plan.model.dense_layers()]
    ref = DeviceOrderMLP(init, acts, SHAPES, **opt)
    ref.fit(X, Y, 0.05, algo, batch)
    for (W, b), (Wr, br) in zip(tr.weights(), ref.params()):
        assert np.array_equal(W, Wr) and np.array_equal(b, br)


@pytest.mark.parametrize("opt", OPTIONS[1:3], ids=["nesterov", "nesterov-wd"])
@pytest.mark.parametrize("algo,batch", [("sgd", 1), ("minibatch", 8)])
def test_close_to_float64_numpy_and_torch(opt, algo, batch):
    torch = pytest.importorskip("torch", reason="torch is an optional extra (pip install 'wafersim[torch]')")
    tr, init, X, Y = train(opt, algo, batch)
    acts = [d.activation for d in tr.plan.model.dense_layers()]
    want = train_numpy(init, acts, X, Y, 0.05, algo, batch, **opt)
    net = torch.nn.Sequential(torch.nn.Linear(12, 7), torch.nn.ReLU(), torch.nn.Linear(7, 5),
                              torch.nn.Sigmoid(), torch.nn.Linear(5, 4))
    with torch.no_grad():
        for m, (W, b) in zip([net[0], net[2], net[4]], init):
            m.weight.copy_(torch.from_numpy(W))
            m.bias.copy_(torch.from_numpy(b))
    topt = torch.optim.SGD(net.parameters(), lr=0.05, **opt)
    for s in range(0, len(X), batch):
        topt.zero_grad()
        torch.nn.functional.mse_loss(net(torch.from_numpy(X[s:s + batch])),
                                     torch.from_numpy(Y[s:s + batch])).backward()
        topt.step()
    got_torch = [(m.weight.detach().numpy(), m.bias.detach().numpy()) for m in (net[0], net[2], net[4])]
    for (W, b), (Wn, bn), (Wt, bt) in zip(tr.weights(), want, got_torch):
        scale = np.abs(Wn).max()
        assert np.abs(W - Wn).max() <= 1e-5 * scale and np.abs(b - bn).max() <= 1e-5 * scale
        assert np.abs(W - Wt).max() <= 1e-5 * scale and np.abs(b - bt).max() <= 1e-5 * scale


def test_momentum_matters():
    """The velocity changes the result (a test that would pass with momentum ignored
    would compare equal here)."""
    a, *_ = train(dict(momentum=0.9), "sgd", 1, n=30)
    b, *_ = train(dict(), "sgd", 1, n=30)
    assert not np.array_equal(a.weights()[0][0], b.weights()[0][0])


def test_velocity_in_memory_statistics():
    """The velocity is stored per weight (and per bias at the finalizers): each PE's data
    grows by its weights' count (+ its biases') times the element size."""
    plain = ws.map(make_model(), blocks=SHAPES)
    mom = ws.map(make_model(), blocks=SHAPES, optimizer=ws.optim.SGD(momentum=0.9))
    for p, s in mom.specs.items():
        grow = mom.memory()[p]["data_bytes"] - plain.memory()[p]["data_bytes"]
        want = (s.nin * s.nout + (s.nout if s.final else 0) + 2) * 4
        assert want <= grow <= want + 16, (p, grow, want)
    assert "vel" in mom.programs[(0, 0)].exports


def test_a_new_trainer_starts_with_zero_velocity():
    """Optimizer state belongs to the Trainer (as to a torch optimizer): a second Trainer
    on the same plan trains on from the plan's weights with a fresh velocity, which equals
    a reference started from those weights."""
    tr, init, X, Y = train(dict(momentum=0.9), "sgd", 1, n=20)
    mid = tr.weights()
    tr2 = ws.Trainer(tr.plan, progress=False)
    assert not np.any(tr.plan.wafer.memcpy_d2h("vel", rect=(0, 0)))
    tr2.fit(X, Y, shuffle=False)
    acts = [d.activation for d in tr.plan.model.dense_layers()]
    ref = DeviceOrderMLP([(W.copy(), b.copy()) for W, b in mid], acts, SHAPES, momentum=0.9)
    ref.fit(X, Y, 0.05)
    for (W, b), (Wr, br) in zip(tr2.weights(), ref.params()):
        assert np.array_equal(W, Wr) and np.array_equal(b, br)


def test_after_fit_the_model_holds_the_trained_weights():
    """As a torch model does: the model given to ws.map (and a torch model it came from)."""
    tr, init, X, Y = train(dict(momentum=0.5), "minibatch", 4, n=16)
    for d, (W, b) in zip(tr.plan.model.dense_layers(), tr.weights()):
        assert np.array_equal(d.linear.weight, W) and np.array_equal(d.linear.bias, b)
    assert not np.array_equal(tr.plan.model.dense_layers()[0].linear.weight, init[0][0])


@pytest.mark.parametrize("kwargs,match", [
    (dict(momentum=1.0), r"momentum must be a number in \[0.0, 1.0\)"),
    (dict(momentum=-0.1), r"momentum must be a number in \[0.0, 1.0\)"),
    (dict(momentum=float("nan")), "momentum"),
    (dict(weight_decay=-1e-4), r"weight_decay must be a number in \[0.0, inf\)"),
    (dict(lr=0), r"lr must be a number in \(0.0, inf\)"),
    (dict(lr="0.1"), "lr must be a number"),
    (dict(nesterov=True), "nesterov=True needs momentum > 0"),
    (dict(momentum=0.9, nesterov="yes"), "nesterov must be True or False"),
    (dict(dampening=0.1), "dampening=0.1 is not mapped"),
])
def test_bad_optimizer_arguments(kwargs, match):
    with pytest.raises(ws.ConfigError, match=match):
        ws.optim.SGD(**kwargs)


@pytest.mark.parametrize("dtype,lr,algo,match", [
    ("fp16", 1e6, "sgd", r"-lr = -1000000.0 cannot be held by this plan's fp16"),
    ("fp16", 1e-9, "sgd", r"-lr = -1e-09 cannot be held by this plan's fp16"),
    ("fp32", 1e39, "sgd", r"-lr = -1e\+39 cannot be held by this plan's fp32"),
    ("fp16", 1e-7, "minibatch", r"-lr / batch_size = .* cannot be held"),
])
def test_learning_rates_the_format_cannot_hold(dtype, lr, algo, match):
    """Refused before any cycle runs, naming the parameter and the format's limits."""
    plan = ws.map(make_model(), blocks=SHAPES, dtype=dtype)
    before = plan.wafer.cycle
    with pytest.raises(ws.ConfigError, match=match):
        ws.Trainer(plan, algo=algo, lr=lr, numerics=dtype, progress=False)
    assert plan.wafer.cycle == before


def test_a_different_loss_in_the_trainer_is_refused():
    plan = ws.map(make_model(), blocks=SHAPES)
    ws.Trainer(plan, loss=ws.nn.MSELoss(), progress=False)     # the plan's own: fine
    with pytest.raises(ws.ConfigError, match="pass it to ws.map"):
        ws.Trainer(plan, loss=ws.nn.CrossEntropyLoss(), progress=False)
