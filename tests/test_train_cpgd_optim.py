"""CPGD with an optimizer that keeps state (momentum, Nesterov, weight decay, Adam): each
PE ends every sample's backward pass with the optimizer's update task on all of its
weights and biases (a mini-batch of one, the rule the SGD run uses), as soon as its own
backward pass is done, while later samples are in flight [0625] (program/cpgd.py). The
velocity (or Adam's moments) lives in PE memory beside W. Checked bit for bit in fp32
against the numpy reference (wafersim.reference.cpgd) replaying the order the PEs logged,
and against SGD with the same optimizer at window 1."""

import numpy as np
import pytest

import wafersim as ws
from wafersim.reference.cpgd import CpgdReference, replay_order_log
from wafersim.train.cpgd_stats import read_order_log

from test_train_cpgd import LR, data, make_model, names_of, params_of, same_params

pytestmark = pytest.mark.nosanitize  # whole training runs

SHAPES = [(3, 2), (2, 2), (2, 1)]
OPTIMIZERS = {
    "momentum": (lambda: ws.optim.SGD(lr=LR, momentum=0.9), {"momentum": 0.9}),
    "nesterov-wd": (lambda: ws.optim.SGD(lr=LR, momentum=0.8, nesterov=True, weight_decay=0.01),
                    {"momentum": 0.8, "nesterov": True, "weight_decay": 0.01}),
    "adam": (lambda: ws.optim.Adam(lr=LR), {"adam": {}}),
}


def run(model, X, Y, opt, algo="cpgd", window=None, loss=None, **map_args):
    plan = ws.map(model.copy(), blocks=SHAPES[:len(model.dense_layers())], optimizer=opt,
                  **({"loss": loss} if loss is not None else {}), **map_args)
    tr = ws.Trainer(plan, algo=algo, lr=LR, window=window, progress=False)
    return tr, tr.fit(X, Y, epochs=1, shuffle=False)


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_window_one_equals_sgd_with_the_same_optimizer_bit_for_bit(name):
    """One sample in flight: CPGD with momentum / Nesterov and weight decay / Adam is SGD
    with that optimizer (torch's rule, velocity per weight on the PE), bit for bit."""
    model = make_model((12, 7, 5, 4), [ws.nn.ReLU, ws.nn.Tanh])
    X, Y = data(16, 12, 4, seed=1)
    make, _ = OPTIMIZERS[name]
    tr_c, h_c = run(model, X, Y, make(), window=1, cpgd=True, slots=3)
    tr_s, h_s = run(model, X, Y, make(), algo="sgd")
    assert same_params(tr_c.weights(), tr_s.weights())
    assert h_c.loss == h_s.loss
    assert all(s["max"] == 0 for s in tr_c.stats().staleness())


@pytest.mark.parametrize("name,dp_weights", [("momentum", "current"), ("momentum", "forward"),
                                             ("nesterov-wd", "current"), ("adam", "forward")])
def test_replayed_order_with_an_optimizer_equals_the_wafer_bit_for_bit(name, dp_weights):
    """Three samples in flight: the reference that applies the optimizer's step after
    every sample, and whose forward passes read, element by element, what each PE held
    when its f_act read it (the order log: one entry per update task), ends with the
    wafer's weights and biases bit for bit in fp32 and the same loss. The run was
    pipelined (stale updates, fewer cycles than one sample at a time) and differs from
    SGD with the same optimizer."""
    model = make_model((12, 7, 5, 4), [ws.nn.ReLU, ws.nn.Tanh])
    X, Y = data(20, 12, 4, seed=1)
    make, ref_kw = OPTIMIZERS[name]
    tr, hist = run(model, X, Y, make(), window=3, cpgd=True, slots=3, order_log=400,
                   dp_weights=dp_weights)
    log = read_order_log(tr.plan)
    assert not log["full"]
    ref = CpgdReference(params_of(model), names_of(model), SHAPES, LR, dp_weights=dp_weights,
                        **ref_kw)
    losses = replay_order_log(ref, X, Y, tr.plan.layers, log)
    assert same_params(tr.weights(), ref.params())
    assert hist.loss[0] == pytest.approx(float(losses.mean()), abs=0)
    assert tr.stats().staleness()[0]["max"] >= 1
    tr_1, h_1 = run(model, X, Y, make(), window=1, cpgd=True, slots=3)
    assert hist.cycles[0] < 0.8 * h_1.cycles[0]
    assert not same_params(tr.weights(), tr_1.weights())


def test_replayed_order_with_momentum_and_cross_entropy():
    """The same with the cross-entropy head and momentum on a two-layer network."""
    model = make_model((12, 7, 4), [ws.nn.ReLU])
    X, Y = data(20, 12, 4, seed=3)
    Y = np.eye(4, dtype=np.float32)[np.argmax(Y, axis=1)]
    make, ref_kw = OPTIMIZERS["momentum"]
    tr, hist = run(model, X, Y, make(), window=4, loss=ws.nn.CrossEntropyLoss(), cpgd=True,
                   slots=4, order_log=400)
    ref = CpgdReference(params_of(model), names_of(model), SHAPES[:2], LR,
                        loss="cross_entropy", **ref_kw)
    losses = replay_order_log(ref, X, Y, tr.plan.layers, read_order_log(tr.plan))
    assert same_params(tr.weights(), ref.params())
    assert hist.loss[0] == pytest.approx(float(losses.mean()), abs=0)
    assert tr.stats().staleness()[0]["max"] >= 1
