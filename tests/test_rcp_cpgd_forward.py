"""Reverse checkpoint under CPGD with the delta pass on the weights of the sample's
forward pass (``ws.map(..., cpgd=True, dp_weights="forward")``, [0634]; seed 000 FIG.
27C-D, [0615], [0653]). A discarding layer's inputs come back from the recompute, which
reads the current weights [0615]: the recompute is the forward pass whose activations
the sample's backward pass uses, so the delta pass must read what the recompute read.
No update comes between the two at a PE (the recompute queue starts a recompute after
the previous sample's backward pass has ended there, and the sample's own updates of a
column follow the delta pass's read of it [0645]), so W itself is that snapshot: a
discarding layer keeps none (``PeSpec.snapshot``). Kept layers keep the snapshots of
their real forward passes.

The independent references: window 1 is SGD (every snapshot equals the current W), so
the run equals SGD with the same checkpoint bit for bit; with several samples in flight
the numpy CPGD reference, whose discarding layers' delta passes read, row by row, the
weights each PE held when its recompute started (``rlog``) and whose kept layers' read
their forward passes' weights (``olog``, ``flog``), replays the PEs' order log bit for
bit in fp32."""

import numpy as np
import pytest

import wafersim as ws
from wafersim.reference.cpgd import CpgdReference, replay_order_log
from wafersim.train.cpgd_stats import read_order_log

from rcp_cpgd_case import BLOCKS, SIZES, rcp_data as _data, same_weights as _same
from train_models import mlp

pytestmark = pytest.mark.nosanitize  # whole training runs


@pytest.mark.parametrize("policy", [2, 4])
def test_window_1_with_rcp_and_forward_weights_equals_sgd_0634_0653(policy):
    """One sample in flight: the kept layers' snapshots equal the current W, and the run
    is SGD with the same checkpoint bit for bit (two epochs); a kept layer with a delta
    pass holds a snapshot per slot (``Plan.memory()``: nin x ncols x slots elements), a
    discarding layer none."""
    X, Y = _data(10)
    a = ws.map(mlp(SIZES, 4), blocks=BLOCKS, checkpoint=policy, cpgd=True, slots=3,
               dp_weights="forward")
    ha = ws.Trainer(a, algo="cpgd", window=1, lr=0.1, progress=False).fit(X, Y, epochs=2,
                                                                         shuffle=False)
    b = ws.map(mlp(SIZES, 4), blocks=BLOCKS, checkpoint=policy)
    hb = ws.Trainer(b, lr=0.1, progress=False).fit(X, Y, epochs=2, shuffle=False)
    assert _same(a.read_weights(), b.read_weights()) and ha.loss == hb.loss
    mem = a.memory()
    for blk in a.layers[1:]:
        for p in blk.points():
            s = a.specs[p]
            assert mem[p]["snapshot_bytes"] == s.nin * s.ncols * (3 if a.keeps[blk.index]
                                                                  else 0) * 4, p


@pytest.mark.parametrize("policy, window, loss, momentum", [
    (2, 3, "mse", 0),
    ([0, 3], 2, "mse", 0),
    (4, 4, "mse", 0),
    (2, 3, "cross_entropy", 0),
    ([0, 3], 3, "mse", 0.9),
])
def test_cpgd_with_rcp_and_forward_weights_replayed_bit_for_bit_fp32_0634_0615(policy, window,
                                                                               loss, momentum):
    """Several samples in flight, lr 0.1: the reference whose kept layers' delta passes
    read the weights their forward passes read (rows read as read, unread rows as at the
    activation closeout: ``flog``) and whose discarding layers' delta passes read the
    weights their recompute read (every row at the recompute's start: ``rlog``) ends with
    the wafer's weights and biases bit for bit and the same loss. Where a kept layer has
    a delta pass (checkpoint=2, [0, 3]: layer 2, 3) the snapshots matter: the same run
    with dp_weights="current" ends elsewhere; with checkpoint=4 only layer 0 keeps (no
    delta pass) and the two are the same run. Momentum (an update task per sample) too."""
    X, Y = _data(16)
    kw = {}
    if loss == "cross_entropy":
        kw = {"loss": ws.nn.CrossEntropyLoss()}
        Y = np.eye(SIZES[-1], dtype=np.float32)[np.argmax(Y, axis=1)]
    ref_kw = {"momentum": momentum} if momentum else {}
    model = mlp(SIZES, 4)
    params = [(d.linear.weight.copy(), d.linear.bias.copy()) for d in model.dense_layers()]
    names = [d.activation for d in model.dense_layers()]
    runs = {}
    for dpw in ("forward", "current"):
        plan = ws.map(model.copy(), blocks=BLOCKS, checkpoint=policy, cpgd=True, order_log=300,
                      dp_weights=dpw, optimizer=ws.optim.SGD(lr=0.1, momentum=momentum), **kw)
        tr = ws.Trainer(plan, algo="cpgd", window=window, lr=0.1, progress=False)
        runs[dpw] = (plan, tr, tr.fit(X, Y, epochs=1, shuffle=False))
    plan, tr, hist = runs["forward"]
    log = read_order_log(plan)
    assert not log["full"] and log["rlog"]
    assert bool(log["flog"]) == any(plan.keeps[1:])      # (snapshots only where layers keep)
    assert tr.stats().staleness()[0]["max"] >= 1
    ref = CpgdReference(params, names, BLOCKS, 0.1, loss=loss, dp_weights="forward",
                        keeps=plan.keeps, **ref_kw)
    losses = replay_order_log(ref, X, Y, plan.layers, log)
    assert _same(plan.read_weights(), ref.params())
    assert hist.loss[0] == pytest.approx(float(losses.mean()), abs=0)
    differs = not _same(plan.read_weights(), runs["current"][0].read_weights())
    assert differs == any(plan.keeps[1:])
