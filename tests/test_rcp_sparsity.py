"""Reverse checkpoint (seed 000 FIG. 27D, [0653], [0655]) together with activation sparsity
by threshold (seed 001 EC410/EC411) and with weight sparsity (pruned weights stored
compressed), under SGD and mini-batches on the cycle-level wafer.

The recompute must drop the same activations the forward pass dropped and skip the same
pruned weights: the kept layer's replay skips what it stored as 0 (never sent), the
finalizers' replayed sends go through the same thresholded sender, and a sparse PE's
replay runs the same multiply-adds over its runs of kept outputs. So weights, biases and
losses are bit for bit those of the same run without the checkpoint, and those of the
device-order numpy reference that drops the same values (``DeviceOrderMLP`` with
thresholds) or applies the same mask (``MaskedDeviceOrderMLP``)."""

import numpy as np
import pytest

import wafersim as ws
from wafersim.mapping.checkpoint import recompute_segments
from wafersim.reference.cpgd import CpgdReference, replay_order_log
from wafersim.reference.masked import MaskedDeviceOrderMLP
from wafersim.reference.training import DeviceOrderMLP
from wafersim.train.cpgd_stats import read_order_log

from rcp_cpgd_case import BLOCKS, SIZES, rcp_data as _data, same_weights as _same
from train_models import mlp

pytestmark = pytest.mark.nosanitize  # whole training runs


def _params(model):
    return [(d.linear.weight.copy(), d.linear.bias.copy()) for d in model.dense_layers()]


def _fit(policy, algo, batch, act=ws.nn.ReLU, n=14, **map_args):
    plan = ws.map(mlp(SIZES, 4, act), blocks=BLOCKS, checkpoint=policy, **map_args)
    tr = ws.Trainer(plan, algo=algo, batch_size=batch, lr=0.1, progress=False)
    X, Y = _data(n)
    return tr, tr.fit(X, Y, epochs=1, shuffle=False), X, Y


def _replays(tr, keeps):
    """Per segment: how many times its kept layer replayed (trigger tasks at a worker)."""
    rc = tr.plan.colors["RC"]
    return [tr.plan.wafer.pe(*tr.plan.layers[k].at(1 % tr.plan.layers[k].rows, 0))
            .stats()["tasks_started"].get(rc) for k, _ in recompute_segments(keeps)]


THRESHOLDS = [0.05, 0.12, 0.08]


@pytest.mark.parametrize("policy, algo, batch, act", [
    (2, "sgd", 1, ws.nn.ReLU),
    ([0, 3], "sgd", 1, ws.nn.Tanh),
    (4, "sgd", 1, ws.nn.ReLU),
    (2, "minibatch", 4, ws.nn.ReLU),
    (4, "minibatch", 5, ws.nn.Tanh),
])
def test_rcp_with_an_activation_threshold_is_bit_identical_to_without_ec411_0653(policy, algo,
                                                                                 batch, act):
    """Thresholds 0.05, 0.12, 0.08 on the hidden layers (EC411: |a| <= t is not sent): the
    recompute drops the same activations as the forward pass, so weights, biases and
    losses equal, bit for bit, the same run without the checkpoint ([0653], [0655]) and
    the device-order reference that drops |a| <= t; the drop was real (the reference
    without thresholds ends elsewhere) and the recompute ran once per sample. Every PE of
    a discarding layer received exactly twice the activations it receives without the
    checkpoint (the forward pass's and the recompute's, the same ones dropped)."""
    tr, hist, X, Y = _fit(policy, algo, batch, act, activation_threshold=THRESHOLDS)
    plain, hist0, _, _ = _fit(None, algo, batch, act, activation_threshold=THRESHOLDS)
    assert _same(tr.weights(), plain.weights())
    assert hist.loss == hist0.loss
    assert all(r == len(X) for r in _replays(tr, tr.plan.keeps))
    for b in tr.plan.layers:
        a_in = tr.plan.specs[b.at(0, 0)].a_in
        for p in b.points():
            got, got0 = tr.stats().tasks(p, a_in), plain.stats().tasks(p, a_in)
            assert got == (got0 if tr.plan.keeps[b.index] else 2 * got0) and got0 > 0, p
    model = mlp(SIZES, 4, act)
    names = [d.activation for d in model.dense_layers()]
    ref = DeviceOrderMLP(_params(model), names, BLOCKS, thresholds=THRESHOLDS + [None])
    _, losses = ref.fit(X, Y, 0.1, algo, batch)
    assert _same(tr.weights(), ref.params())
    assert hist.loss[0] == pytest.approx(losses.mean(), rel=1e-12)
    dense = DeviceOrderMLP(_params(model), names, BLOCKS)
    dense.fit(X, Y, 0.1, algo, batch)
    assert not _same(dense.params(), ref.params())


def test_rcp_with_threshold_zero_equals_rcp_without_threshold_ec411():
    """t = 0 skips exactly the zeros, as the program without a threshold: with a reverse
    checkpoint too, the weights are bit for bit those without a threshold."""
    a, ha, _, _ = _fit(2, "minibatch", 4, activation_threshold=0.0)
    b, hb, _, _ = _fit(2, "minibatch", 4)
    assert "fabss" in a.plan.listing(0, (0, 0)) and "fabss" not in b.plan.listing(0, (0, 0))
    assert _same(a.weights(), b.weights()) and ha.loss == hb.loss


@pytest.mark.parametrize("policy, algo, batch, opt", [
    (2, "sgd", 1, {}),
    ([0, 3], "sgd", 1, {"momentum": 0.9}),
    (4, "sgd", 1, {}),
    (2, "minibatch", 4, {}),
    (4, "minibatch", 5, {"momentum": 0.5, "nesterov": True, "weight_decay": 0.01}),
])
def test_rcp_with_weight_sparsity_is_bit_identical_to_without_0653(policy, algo, batch, opt):
    """Half of each layer's weights pruned by magnitude (stored compressed: the replay of a
    sparse PE runs one multiply-add per run of kept outputs, as its forward pass does):
    weights, biases and losses equal, bit for bit, the same sparse run without the
    checkpoint and the device-order reference with the same mask; pruned weights stay
    exactly 0; the recompute ran once per sample."""
    sgd = ws.optim.SGD(lr=0.1, **opt)
    tr, hist, X, Y = _fit(policy, algo, batch, weight_sparsity=0.5, optimizer=sgd)
    plain, hist0, _, _ = _fit(None, algo, batch, weight_sparsity=0.5,
                              optimizer=ws.optim.SGD(lr=0.1, **opt))
    masks = tr.plan.weight_masks()
    assert all(m is not None and not m.all() for m in masks)
    assert all(np.array_equal(m, m0) for m, m0 in zip(masks, plain.plan.weight_masks()))
    assert any(tr.plan.specs[p].sparse and len(tr.plan.specs[p].runs()) > 1
               for b in tr.plan.layers if b.index in [k for k, _ in
                                                      recompute_segments(tr.plan.keeps)]
               for p in b.points())     # a replay with several runs of kept outputs
    assert _same(tr.weights(), plain.weights())
    assert hist.loss == hist0.loss
    assert all(r == len(X) for r in _replays(tr, tr.plan.keeps))
    model = mlp(SIZES, 4, ws.nn.ReLU)
    ref = MaskedDeviceOrderMLP(_params(model), [d.activation for d in model.dense_layers()],
                               BLOCKS, masks=masks, **opt)
    _, losses = ref.fit(X, Y, 0.1, algo, batch)
    for (W, b), (Wr, br), m in zip(tr.weights(), ref.params(), masks, strict=True):
        assert np.all(W[~m] == 0)
        assert np.array_equal(W, Wr) and np.array_equal(b, br)
    assert hist.loss[0] == pytest.approx(losses.mean(), rel=1e-12)


def test_rcp_with_both_sparsities_is_bit_identical_to_without():
    """Thresholds and pruned weights together, mini-batches of 4, checkpoint=2."""
    kw = {"activation_threshold": THRESHOLDS, "weight_sparsity": 0.25}
    a, ha, _, _ = _fit(2, "minibatch", 4, **kw)
    b, hb, _, _ = _fit(None, "minibatch", 4, **kw)
    assert _same(a.weights(), b.weights()) and ha.loss == hb.loss


def test_cpgd_with_rcp_and_an_activation_threshold_replayed_bit_for_bit_ec411_0615():
    """Under CPGD (3 samples in flight, lr 0.1) the recompute reads the current weights
    ([0615]) and drops |a| <= t of what it recomputes: the numpy CPGD reference that
    drops the same values in the forward pass and in the recompute, replaying the PEs'
    order log, ends with the wafer's weights bit for bit and the same loss; window 1
    equals SGD with the thresholds and without the checkpoint bit for bit."""
    X, Y = _data(16)
    model = mlp(SIZES, 4, ws.nn.ReLU)
    plan = ws.map(model.copy(), blocks=BLOCKS, checkpoint=2, cpgd=True, order_log=300,
                  activation_threshold=THRESHOLDS)
    tr = ws.Trainer(plan, algo="cpgd", window=3, lr=0.1, progress=False)
    hist = tr.fit(X, Y, epochs=1, shuffle=False)
    assert tr.stats().staleness()[0]["max"] >= 1
    ref = CpgdReference(_params(model), [d.activation for d in model.dense_layers()], BLOCKS,
                        0.1, keeps=plan.keeps, thresholds=THRESHOLDS + [None])
    losses = replay_order_log(ref, X, Y, plan.layers, read_order_log(plan))
    assert _same(plan.read_weights(), ref.params())
    assert hist.loss[0] == pytest.approx(float(losses.mean()), abs=0)
    loose = ws.map(model.copy(), blocks=BLOCKS, checkpoint=2, cpgd=True)
    ws.Trainer(loose, algo="cpgd", window=3, lr=0.1, progress=False).fit(X, Y, shuffle=False)
    assert not _same(loose.read_weights(), plan.read_weights())     # the drop was real
    one = ws.map(model.copy(), blocks=BLOCKS, checkpoint=2, cpgd=True,
                 activation_threshold=THRESHOLDS)
    h1 = ws.Trainer(one, algo="cpgd", window=1, lr=0.1, progress=False).fit(X, Y, shuffle=False)
    sgd = ws.map(model.copy(), blocks=BLOCKS, activation_threshold=THRESHOLDS)
    hs = ws.Trainer(sgd, lr=0.1, progress=False).fit(X, Y, shuffle=False)
    assert _same(one.read_weights(), sgd.read_weights()) and h1.loss == hs.loss

