"""CPGD (seed 000 FIG. 27C, [0624]-[0649]; seed 001 claims 3-4) with weight sparsity by PE
column segments (pruned weights stored compressed, program/sparse_weights.py). The
staleness counters and the order log run unchanged in the segment programs: f_act counts
every row read (also at a PE whose outputs are all pruned), every b_delta of a nonzero
delta logs its update (also of a column pruned at that PE, which then updates nothing),
and a finalizer's own block pass logs one entry per sample. So:

* window 1 is SGD with the same sparsity, bit for bit ([0622], [0646]);
* with several samples in flight, the numpy CPGD reference with the same masks
  (``CpgdReference(masks=...)``: pruned weights 0 from the start and after every update),
  replaying the PEs' order log, ends with the wafer's weights and loss bit for bit in fp32;
* so it does with a reverse checkpoint (the recompute skips the same pruned weights and
  logs when it read W), with an optimizer with state, and with mini-batches;
* pruned weights are exactly 0 after training;
* single-weight storage stays refused under CPGD, and so does dp_weights="forward" with
  any weight sparsity."""

import numpy as np
import pytest

import wafersim as ws
from wafersim.reference.cpgd import CpgdReference, replay_order_log
from wafersim.train.cpgd_stats import read_order_log

from rcp_cpgd_case import BLOCKS, SIZES, rcp_data, same_weights
from train_models import mlp

pytestmark = pytest.mark.nosanitize  # whole training runs

LR = 0.1


def _params(model):
    return [(d.linear.weight.copy(), d.linear.bias.copy()) for d in model.dense_layers()]


def _names(model):
    return [d.activation for d in model.dense_layers()]


def _pruned_zero(weights, masks) -> bool:
    return all(np.all(W[~m] == 0) for (W, _), m in zip(weights, masks, strict=True))


def test_window_one_equals_sgd_with_the_same_sparsity_bit_for_bit_0646():
    """algo='cpgd' with window 1 on a plan with half of each layer's segments pruned:
    weights, biases and loss equal, bit for bit, SGD on a plain plan with the same
    sparsity and the masked reference's SGD; every staleness is 0; pruned weights stay 0."""
    X, Y = rcp_data(16)
    model = mlp(SIZES, 4, ws.nn.ReLU)
    plan = ws.map(model.copy(), blocks=BLOCKS, cpgd=True, slots=3, weight_sparsity=0.5)
    tr = ws.Trainer(plan, algo="cpgd", window=1, lr=LR, progress=False)
    hist = tr.fit(X, Y, epochs=1, shuffle=False)
    sgd = ws.map(model.copy(), blocks=BLOCKS, weight_sparsity=0.5)
    hs = ws.Trainer(sgd, lr=LR, progress=False).fit(X, Y, shuffle=False)
    masks = plan.weight_masks()
    assert not any(m.all() for m in masks)
    assert all(np.array_equal(m, ms) for m, ms in zip(masks, sgd.weight_masks()))
    assert same_weights(plan.read_weights(), sgd.read_weights()) and hist.loss == hs.loss
    ref = CpgdReference(_params(model), _names(model), BLOCKS, LR, masks=masks)
    losses = ref.train_sgd(X, Y)
    assert same_weights(plan.read_weights(), ref.params())
    assert hist.loss[0] == pytest.approx(float(losses.mean()), abs=0)
    assert _pruned_zero(plan.read_weights(), masks)
    for s in tr.stats().staleness():
        assert s["max"] == 0
    dense = CpgdReference(_params(model), _names(model), BLOCKS, LR)
    dense.train_sgd(X, Y)
    assert not same_weights(dense.params(), ref.params())     # the pruning was real


def _segment_mask(n_out, n_in, in_groups, seed=7):
    """A segment-constant mask of a layer whose block rows take the inputs ``in_groups``
    ((first, count) per row): about a third of the segments W[j, I_r] pruned."""
    rng = np.random.default_rng(seed)
    m = np.ones((n_out, n_in), dtype=bool)
    for j in range(n_out):
        for i0, n in in_groups:
            if rng.random() < 0.35:
                m[j, i0:i0 + n] = False
    return m


@pytest.mark.parametrize("window,loss,sparsity", [
    (2, "mse", 0.5),
    (3, "cross_entropy", 0.25),
    (4, "mse", "mask"),
    (4, "cross_entropy", 0.5),
])
def test_replayed_order_with_pruned_segments_equals_the_wafer_bit_for_bit(window, loss,
                                                                          sparsity):
    """Several samples in flight (window 2-4), pruned segments (a magnitude fraction, or
    a segment-constant mask on layer 1): the masked CPGD reference replaying the PEs'
    order log ends with the wafer's weights and biases bit for bit in fp32 and the same
    epoch loss; the run was stale (the PEs counted updates between a forward pass and
    its own update) and differs from masked SGD; pruned weights are exactly 0."""
    X, Y = rcp_data(20, seed=5)
    model = mlp(SIZES, 4, ws.nn.ReLU)
    kw = {}
    if loss == "cross_entropy":
        kw["loss"] = ws.nn.CrossEntropyLoss()
        Y = np.eye(SIZES[-1], dtype=np.float32)[np.argmax(Y, axis=1)]
    if sparsity == "mask":
        groups = ws.map(model.copy(), blocks=BLOCKS).layers[1].in_groups
        sparsity = {1: _segment_mask(SIZES[2], SIZES[1], groups)}
    plan = ws.map(model.copy(), blocks=BLOCKS, cpgd=True, slots=window, order_log=400,
                  weight_sparsity=sparsity, **kw)
    assert all(m is None for m in plan.weight_single)       # the segment storage
    tr = ws.Trainer(plan, algo="cpgd", window=window, lr=LR, progress=False)
    hist = tr.fit(X, Y, epochs=1, shuffle=False)
    log = read_order_log(plan)
    assert not log["full"]
    masks = plan.weight_masks()
    assert any(not m.all() for m in masks)
    ref = CpgdReference(_params(model), _names(model), BLOCKS, LR, loss=loss, masks=masks)
    losses = replay_order_log(ref, X, Y, plan.layers, log)
    assert same_weights(plan.read_weights(), ref.params())
    assert hist.loss[0] == pytest.approx(float(losses.mean()), abs=0)
    assert _pruned_zero(plan.read_weights(), masks)
    assert tr.stats().staleness()[0]["max"] >= 1
    sgd = CpgdReference(_params(model), _names(model), BLOCKS, LR, loss=loss, masks=masks)
    sgd.train_sgd(X, Y)
    assert not same_weights(plan.read_weights(), sgd.params())


@pytest.mark.parametrize("checkpoint,opt,batch", [
    (2, {}, 1),                     # reverse checkpoint: the recompute's reads in rlog
    (2, {"momentum": 0.9}, 1),      # an optimizer with state: the update task per sample
    (None, {}, 4),                  # CPGD with mini-batches [0636]
])
def test_replay_with_pruned_segments_under_rcp_an_optimizer_or_batches_0615_0636(checkpoint,
                                                                                  opt, batch):
    """Half of each layer's segments pruned, 3 samples in flight, with a reverse
    checkpoint (the recompute skips the same pruned weights and reads the current ones
    [0615]), momentum (one update task per sample) or mini-batches of 4: the masked
    replay of the order log equals the wafer bit for bit; pruned weights exactly 0."""
    X, Y = rcp_data(16)
    model = mlp(SIZES, 4, ws.nn.ReLU)
    plan = ws.map(model.copy(), blocks=BLOCKS, checkpoint=checkpoint, cpgd=True, slots=3,
                  order_log=300, weight_sparsity=0.5, optimizer=ws.optim.SGD(lr=LR, **opt))
    tr = ws.Trainer(plan, algo="cpgd", window=3, batch_size=batch, lr=LR, progress=False)
    hist = tr.fit(X, Y, epochs=1, shuffle=False)
    masks = plan.weight_masks()
    ref = CpgdReference(_params(model), _names(model), BLOCKS, LR, keeps=plan.keeps,
                        masks=masks, batch_size=batch, **opt)
    losses = replay_order_log(ref, X, Y, plan.layers, read_order_log(plan))
    assert same_weights(plan.read_weights(), ref.params())
    assert hist.loss[0] == pytest.approx(float(losses.mean()), abs=0)
    assert _pruned_zero(plan.read_weights(), masks) and not any(m.all() for m in masks)
    assert tr.stats().staleness()[0]["max"] >= 1
    assert (checkpoint is None) == all(plan.keeps)


@pytest.mark.parametrize("entry", ["unit", "mask"])
def test_cpgd_with_single_weight_sparsity_is_refused(entry):
    """Single-weight storage ({"unit": "weight"}, or a mask not constant on segments)
    stays refused under CPGD: a ConfigError of category "unsupported" naming the layers."""
    if entry == "unit":
        value = {"fraction": 0.5, "unit": "weight"}
        layers = r"\[0, 1, 2, 3\]"
    else:
        m = np.ones((SIZES[2], SIZES[1]), dtype=bool)
        m[3, 4] = False                           # one single weight
        value = {1: m}
        layers = r"\[1\]"
    with pytest.raises(ws.ConfigError, match=r"cpgd=True is not supported with weight_sparsity "
                                             r"that prunes single weights \(layer\(s\) "
                                             + layers) as e:
        ws.map(mlp(SIZES, 4, ws.nn.ReLU), blocks=BLOCKS, cpgd=True, weight_sparsity=value)
    assert e.value.category == "unsupported"


def test_cpgd_forward_weights_with_sparsity_is_refused_0634():
    """dp_weights="forward" (the snapshot of the forward pass's rows [0634]) is not wired
    into the compressed programs: refused with pruned segments too."""
    with pytest.raises(ws.ConfigError, match="dp_weights='forward' is not supported with "
                                             "weight_sparsity") as e:
        ws.map(mlp(SIZES, 4, ws.nn.ReLU), blocks=BLOCKS, cpgd=True, dp_weights="forward",
               weight_sparsity=0.5)
    assert e.value.category == "unsupported"
