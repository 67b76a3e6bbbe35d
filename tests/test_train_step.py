"""``Trainer.step``: one optimizer step over a batch (what ``ws.torch`` calls), against the
device-order reference bit for bit; and where the trained parameters go afterwards (the
model given to ``ws.map``, and a torch model it was converted from)."""

import numpy as np
import pytest

import wafersim as ws
from wafersim.reference.training import DeviceOrderMLP
from train_models import SHAPES, data, make_model

pytestmark = pytest.mark.nosanitize  # whole training runs


@pytest.mark.parametrize("opt", [dict(), dict(momentum=0.9, nesterov=True, weight_decay=0.01)],
                         ids=["plain", "nesterov-wd"])
def test_step_is_one_minibatch_bit_identical_to_reference(opt):
    """Steps of 5, 3, 1 and 8 samples: each a mini-batch of all its samples (the mean
    gradient applied once; velocities carried over), whatever the Trainer's algo says."""
    model = make_model()
    init = [(d.linear.weight.copy(), d.linear.bias.copy()) for d in model.dense_layers()]
    plan = ws.map(model, blocks=SHAPES, optimizer=ws.optim.SGD(lr=0.05, **opt))
    tr = ws.Trainer(plan, algo="sgd", progress=False)
    ref = DeviceOrderMLP(init, [d.activation for d in plan.model.dense_layers()], SHAPES, **opt)
    X, Y = data(17)
    start = 0
    for n in (5, 3, 1, 8):
        x, y = X[start:start + n], Y[start:start + n]
        start += n
        out, losses = tr.step(x, y)
        want_out, want_losses = ref.fit(x, y, 0.05, "minibatch", n)
        assert np.array_equal(out, want_out)
        assert np.allclose(losses, want_losses, rtol=1e-12, atol=0)
        for (W, b), (Wr, br) in zip(tr.weights(), ref.params()):
            assert np.array_equal(W, Wr) and np.array_equal(b, br)
    assert tr.stats().samples_trained == 17


def test_step_syncs_the_model_unless_told_not_to():
    model = make_model()
    plan = ws.map(model, blocks=SHAPES)
    tr = ws.Trainer(plan, progress=False)
    X, Y = data(4)
    before = model.dense_layers()[0].linear.weight.copy()
    tr.step(X, Y, sync=False)
    assert np.array_equal(model.dense_layers()[0].linear.weight, before)
    plan.sync_model()
    assert np.array_equal(model.dense_layers()[0].linear.weight, tr.weights()[0][0])
    tr.step(X, Y)
    assert np.array_equal(model.dense_layers()[0].linear.weight, tr.weights()[0][0])


def test_step_refuses_bad_batches_before_any_cycle():
    plan = ws.map(make_model(), blocks=SHAPES)
    tr = ws.Trainer(plan, progress=False)
    X, Y = data(3)
    start = plan.wafer.cycle
    with pytest.raises(ws.ConfigError, match=r"y must be 3 integer labels or targets of shape"):
        tr.step(X, Y[:2])
    with pytest.raises(ws.ConfigError, match="sync must be True or False"):
        tr.step(X, Y, sync="no")
    assert plan.wafer.cycle == start


def test_a_torch_model_given_to_map_holds_the_trained_weights():
    """As a torch model trained on the CPU would: after fit (and after chain()) the torch
    model ws.map converted holds the parameters the PEs hold."""
    torch = pytest.importorskip("torch", reason="torch is an optional extra (pip install 'wafersim[torch]')")
    net = make_model().to_torch()
    plan = ws.map(net, blocks=SHAPES)
    tr = ws.Trainer(plan, progress=False)
    X, Y = data(10)
    before = net[0].weight.detach().clone()
    tr.fit(X, Y, shuffle=False)
    for m, (W, b) in zip([net[0], net[2], net[4]], tr.weights()):
        assert np.array_equal(m.weight.detach().numpy(), W)
        assert np.array_equal(m.bias.detach().numpy(), b)
    assert not torch.equal(net[0].weight.detach(), before)
    tr.forward(X[0])
    tr.delta(Y[0])
    tr.chain()
    assert np.array_equal(net[4].weight.detach().numpy(), tr.weights()[2][0])
