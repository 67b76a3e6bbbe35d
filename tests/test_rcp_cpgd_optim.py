"""Reverse checkpoint under CPGD with an optimizer that keeps state (momentum, Nesterov,
weight decay, Adam) on the cycle-level wafer (seed 000 FIG. 27C-D, [0615], [0625],
[0653]-[0655]). Each PE ends every sample's backward pass with the optimizer's update
task (a mini-batch of one), and the epoch's last sample carries the stream's end mark
that lets the last recomputes start: the update no longer depends on a per-sample batch
mark (program/recompute.py, ``sample_update``), so the two coexist.

The independent references: window 1 is SGD with the same optimizer, so the run equals
SGD with that optimizer and the same reverse checkpoint (which equals SGD without it,
[0653]) bit for bit; with 2 to 4 samples in flight the numpy CPGD reference replays the
PEs' order log (forward reads, update tasks, when each recompute started) with the
optimizer's rule and ends with the wafer's weights bit for bit in fp32."""

import numpy as np
import pytest

import wafersim as ws
from wafersim.reference.cpgd import CpgdReference, replay_order_log
from wafersim.train.cpgd_stats import read_order_log

from rcp_cpgd_case import BLOCKS, SIZES, rcp_data as _data, same_weights as _same
from train_models import mlp

pytestmark = pytest.mark.nosanitize  # whole training runs

LR = 0.05
OPTIMIZERS = {
    "momentum": (lambda: ws.optim.SGD(lr=LR, momentum=0.9), {"momentum": 0.9}),
    "nesterov-wd": (lambda: ws.optim.SGD(lr=LR, momentum=0.8, nesterov=True, weight_decay=0.01),
                    {"momentum": 0.8, "nesterov": True, "weight_decay": 0.01}),
    "weight-decay": (lambda: ws.optim.SGD(lr=LR, weight_decay=0.02), {"weight_decay": 0.02}),
    "adam": (lambda: ws.optim.Adam(lr=LR), {"adam": {}}),
}


def _fit(name, policy, algo, window=None, epochs=1, n=10, **map_args):
    make, _ = OPTIMIZERS[name]
    plan = ws.map(mlp(SIZES, 4, ws.nn.ReLU), blocks=BLOCKS, checkpoint=policy,
                  optimizer=make(), **map_args)
    tr = ws.Trainer(plan, algo=algo, lr=LR, window=window, progress=False)
    X, Y = _data(n)
    return plan, tr, tr.fit(X, Y, epochs=epochs, shuffle=False)


@pytest.mark.parametrize("name, policy", [("momentum", 2), ("nesterov-wd", [0, 3]),
                                          ("weight-decay", 4), ("adam", 2)])
def test_cpgd_window_1_with_rcp_and_an_optimizer_equals_sgd_with_it_0653(name, policy):
    """One sample in flight: CPGD with momentum / Nesterov and weight decay / weight decay
    / Adam under a reverse checkpoint is SGD with that optimizer and the same checkpoint,
    bit for bit (weights, biases, losses over two epochs: the second epoch is admitted
    after the first one's end mark), and that is SGD without the checkpoint ([0653],
    [0655])."""
    a, tr_a, ha = _fit(name, policy, "cpgd", window=1, epochs=2, cpgd=True)
    b, _, hb = _fit(name, policy, "sgd", epochs=2)
    c, _, hc = _fit(name, None, "sgd", epochs=2)
    assert _same(a.read_weights(), b.read_weights())
    assert _same(a.read_weights(), c.read_weights())
    assert ha.loss == hb.loss == hc.loss
    assert all(s["max"] == 0 for s in tr_a.stats().staleness())
    assert ha.cycles[0] > hc.cycles[0]            # the recompute costs cycles


@pytest.mark.parametrize("name, policy, window, loss", [
    ("momentum", 2, 2, "mse"),
    ("nesterov-wd", [0, 3], 3, "mse"),
    ("adam", 4, 4, "mse"),
    ("momentum", 2, 3, "cross_entropy"),
])
def test_cpgd_with_rcp_and_an_optimizer_replayed_bit_for_bit_fp32_0615(name, policy, window,
                                                                       loss):
    """Several samples in flight under a reverse checkpoint with an optimizer with state:
    the numpy reference, applying the optimizer's step after every sample and reading,
    element by element, the weights each PE held at each forward read (``olog``: one
    entry per update task) and at each recompute's start (``rlog``, [0615]: the most
    recent weights), ends with the wafer's weights and biases bit for bit and the same
    epoch loss. The run overlapped samples (staleness >= 1), and the same run without the
    checkpoint ends elsewhere (the recompute read weights other samples had updated since
    the forward pass: [0654]); every PE recomputed sample s after exactly s update tasks
    of its own (the queue waits for the previous sample's backward pass, whose end runs
    the update); inference afterwards is admitted (the end mark was cleared)."""
    X, Y = _data(16)
    kw = {}
    if loss == "cross_entropy":
        kw = {"loss": ws.nn.CrossEntropyLoss()}
        Y = np.eye(SIZES[-1], dtype=np.float32)[np.argmax(Y, axis=1)]
    make, ref_kw = OPTIMIZERS[name]
    model = mlp(SIZES, 4, ws.nn.ReLU)
    params = [(d.linear.weight.copy(), d.linear.bias.copy()) for d in model.dense_layers()]
    names = [d.activation for d in model.dense_layers()]
    runs = {}
    for key, pol in (("rcp", policy), ("plain", None)):
        plan = ws.map(model.copy(), blocks=BLOCKS, checkpoint=pol, cpgd=True, order_log=300,
                      optimizer=make(), **kw)
        tr = ws.Trainer(plan, algo="cpgd", window=window, lr=LR, progress=False)
        hist = tr.fit(X, Y, epochs=1, shuffle=False)
        runs[key] = (plan, tr, hist, read_order_log(plan))
    plan, tr, hist, log = runs["rcp"]
    assert not log["full"] and log["rlog"]
    assert tr.stats().staleness()[0]["max"] >= 1
    ref = CpgdReference(params, names, BLOCKS, LR, loss=loss, keeps=plan.keeps, **ref_kw)
    losses = replay_order_log(ref, X, Y, plan.layers, log)
    assert _same(plan.read_weights(), ref.params())
    assert hist.loss[0] == pytest.approx(float(losses.mean()), abs=0)
    assert not _same(plan.read_weights(), runs["plain"][0].read_weights())
    for p, entries in log["rlog"].items():
        assert list(entries) == list(range(len(X))), p
    plain = CpgdReference(params, names, BLOCKS, LR, loss=loss, **ref_kw)
    replay_order_log(plain, X, Y, runs["plain"][0].layers, runs["plain"][3])
    assert _same(runs["plain"][0].read_weights(), plain.params())
    assert tr.predict(X).shape == (16, SIZES[-1])


def test_cpgd_with_rcp_and_momentum_then_minibatches_on_the_same_plan():
    """The plan CPGD trained with momentum and a reverse checkpoint then trains
    mini-batches (``v_pipe`` = 0: the batch mark ends each mini-batch again) and ends as
    the same mini-batches on a plan without the checkpoint that CPGD trained the same
    way before."""
    X, Y = _data(12)
    out = []
    for policy in (2, None):
        plan = ws.map(mlp(SIZES, 4, ws.nn.ReLU), blocks=BLOCKS, checkpoint=policy, cpgd=True,
                      optimizer=OPTIMIZERS["momentum"][0]())
        ws.Trainer(plan, algo="cpgd", window=1, lr=LR, progress=False).fit(X, Y, shuffle=False)
        tr = ws.Trainer(plan, algo="minibatch", batch_size=4, lr=LR, progress=False)
        out.append((plan, tr.fit(X, Y, epochs=1, shuffle=False)))
    assert _same(out[0][0].read_weights(), out[1][0].read_weights())
    assert out[0][1].loss == out[1][1].loss
