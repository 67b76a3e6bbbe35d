"""Reverse checkpoint (RCP; seed 000 FIG. 27D, FIG. 28C-E, [0614]-[0615], [0650]-[0656])
end to end on the cycle-level wafer: ``ws.map(model, checkpoint=...)`` compiles the
recompute pass (the trigger from a segment's last layer, the kept layer's replay, the
discarding layers' recompute mode and gating, one activation slot in a discarding layer)
and ``ws.Trainer(algo="sgd")`` trains with it.

Under SGD the recomputed activations equal the discarded ones ([0653]) and so do the
deltas and updates ([0655]): weights, biases and losses are bit for bit those of the same
run without RCP, and those of the fp32 reference that discards and recomputes
(``CheckpointedMLP``, an independent numpy model of the device's order of operations).
The discarding layers hold one activation slot ([0656], A 2829 of FIG. 28D), so the
activation bytes per PE drop; the recompute costs cycles, which the run measures."""

import numpy as np
import pytest

import wafersim as ws
from wafersim.mapping.checkpoint import activation_memory, check_checkpoint, recompute_segments
from wafersim.reference.checkpoint import CheckpointedMLP

from train_models import mlp

pytestmark = pytest.mark.nosanitize

#: name: (sizes, activation, blocks, loss)
NETS = {
    # the 64-32-10 shape, scaled down (the mapping is the same code at any size)
    "mse4": ((12, 10, 9, 8, 4), ws.nn.ReLU, [(3, 3), (3, 2), (2, 2), (2, 1)], "mse"),
    "deep5_tanh": ((10, 9, 8, 8, 7, 3), ws.nn.Tanh, [(3, 3), (3, 2), (2, 2), (2, 2), (2, 1)], "mse"),
    "deep5_sigmoid_1x1": ((8, 7, 6, 6, 5, 3), ws.nn.Sigmoid, [(1, 1)] * 5, "mse"),
    "ce3": ((16, 12, 9, 5), ws.nn.ReLU, [(3, 2), (2, 2), (2, 2)], "cross_entropy"),
}


def _data(n_in, n_out, n, seed=3, labels=False):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, n_in)).astype(np.float32)
    X[X < -0.4] = 0                         # sparse inputs, as images are
    if labels:
        return X, rng.integers(0, n_out, n)
    return X, rng.uniform(-1, 1, (n, n_out)).astype(np.float32)


def _params(model):
    return [(d.linear.weight.copy(), d.linear.bias.copy()) for d in model.dense_layers()]


def _train(net, policy, n=12, lr=0.1):
    """(trainer, history, initial params, X, Y one-hot or targets) for ``net`` trained one
    epoch of ``n`` samples in order with ``policy``."""
    sizes, act, blocks, loss = NETS[net]
    model = mlp(sizes, 4, act)
    init = _params(model)
    ce = loss == "cross_entropy"
    X, y = _data(sizes[0], sizes[-1], n, labels=ce)
    kw = {"loss": ws.nn.CrossEntropyLoss()} if ce else {}
    plan = ws.map(model, blocks=blocks, checkpoint=policy, **kw)
    tr = ws.Trainer(plan, lr=lr, progress=False)
    hist = tr.fit(X, y, epochs=1, shuffle=False)
    Y = np.eye(sizes[-1], dtype=np.float32)[y] if ce else y
    return tr, hist, init, X, Y


@pytest.mark.parametrize("net, policy", [
    ("mse4", 2), ("mse4", [0, 3]), ("mse4", 4),
    ("deep5_tanh", 2), ("deep5_tanh", [0, 1, 4]), ("deep5_tanh", 3),
    ("deep5_sigmoid_1x1", [0, 3]),
    ("ce3", 2), ("ce3", [0, 1]),
])
def test_sgd_with_rcp_is_bit_identical_to_without_and_to_the_reference_0653_0655(net, policy):
    """[0653]: under SGD the kept layer's recompute gives the discarded activations again;
    [0655]: the backward pass uses them, so deltas and updates are the same. Weights,
    biases and the losses the wafer computed equal, bit for bit, the run without RCP and
    ``CheckpointedMLP`` with the same policy (MSE and cross-entropy; blocks with rows, so
    that finalizers take the rows' sums in the replay; segments of one and of several
    discarding layers, ending inside the network and at the output layer)."""
    sizes, act, blocks, loss = NETS[net]
    tr, hist, init, X, Y = _train(net, policy)
    keeps = check_checkpoint(policy, len(blocks))
    assert not all(keeps)
    plain, hist0, _, _, _ = _train(net, None)
    for (W, b), (W0, b0) in zip(tr.weights(), plain.weights(), strict=True):
        assert np.array_equal(W, W0) and np.array_equal(b, b0)
    assert hist.loss == hist0.loss
    names = [d.activation for d in tr.plan.model.dense_layers()]
    ref = CheckpointedMLP(init, names, blocks, keeps, loss=loss)
    _, losses = ref.fit(X, Y, 0.1, "sgd")
    assert ref.recomputed > 0
    for (W, b), (Wr, br) in zip(tr.weights(), ref.params(), strict=True):
        assert np.array_equal(W, Wr) and np.array_equal(b, br)
    assert hist.loss[0] == pytest.approx(losses.mean(), rel=1e-12)
    # the recompute ran: every kept layer of a segment replayed each sample (its
    # finalizers' replays are tasks of the trigger color RC)
    rc = tr.plan.colors["RC"]
    for k, _ in recompute_segments(keeps):
        b = tr.plan.layers[k]
        started = tr.plan.wafer.pe(*b.at(1 % b.rows, 0)).stats()["tasks_started"]
        assert started.get(rc) == len(X)


@pytest.mark.parametrize("net, policy, batch, slots", [
    ("mse4", 2, 4, 8), ("mse4", 2, 8, 8), ("mse4", [0, 3], 8, 4), ("mse4", 4, 3, 8),
    ("deep5_tanh", 2, 5, 10), ("deep5_tanh", [0, 1, 4], 4, 3),
    ("deep5_sigmoid_1x1", [0, 3], 4, 10),
    ("ce3", 2, 4, 6), ("ce3", [0, 1], 6, 6),
])
def test_minibatch_with_rcp_is_bit_identical_0653_0655(net, policy, batch, slots):
    """Several samples in flight: a mini-batch's forward passes run through the pipeline,
    their backward passes one by one. A segment recomputes each sample when its backward
    pass reaches it, once its PEs have no forward pass in progress or to come and the
    previous sample's backward pass has left them ([0653]; mini-batches larger and smaller
    than the slots). Weights, biases and losses: bit for bit the run without RCP and
    ``CheckpointedMLP`` (mini-batch mode: all forward passes of a batch, then the backward
    passes in order, recomputing with the unchanged weights [0655])."""
    sizes, act, blocks, loss = NETS[net]
    model = mlp(sizes, 4, act)
    init = _params(model)
    ce = loss == "cross_entropy"
    X, y = _data(sizes[0], sizes[-1], 14, labels=ce)
    kw = {"loss": ws.nn.CrossEntropyLoss()} if ce else {}
    runs = []
    for p in (None, policy):
        plan = ws.map(mlp(sizes, 4, act), blocks=blocks, checkpoint=p, slots=slots, **kw)
        tr = ws.Trainer(plan, algo="minibatch", batch_size=batch, lr=0.1, progress=False)
        runs.append((tr, tr.fit(X, y, epochs=1, shuffle=False)))
    (tr0, h0), (tr1, h1) = runs
    assert h1.loss == h0.loss
    Y = np.eye(sizes[-1], dtype=np.float32)[y] if ce else y
    ref = CheckpointedMLP(init, [d.activation for d in model.dense_layers()], blocks,
                          check_checkpoint(policy, len(blocks)), loss=loss)
    ref.fit(X, Y, 0.1, "minibatch", batch)
    for (W, b), (W0, b0), (Wr, br) in zip(tr1.weights(), tr0.weights(), ref.params(), strict=True):
        assert np.array_equal(W, W0) and np.array_equal(b, b0)
        assert np.array_equal(W, Wr) and np.array_equal(b, br)


def test_step_with_rcp_is_one_minibatch_as_without():
    """step(X, y): one mini-batch of all of X, its mean gradient applied once."""
    sizes, act, blocks, _ = NETS["mse4"]
    X, Y = _data(sizes[0], sizes[-1], 5)
    out = []
    for policy in (None, [0, 2]):
        tr = ws.Trainer(ws.map(mlp(sizes, 4, act), blocks=blocks, checkpoint=policy),
                        lr=0.1, progress=False)
        o, ls = tr.step(X, Y)
        out.append((o, ls, tr.weights()))
    assert np.array_equal(out[0][0], out[1][0]) and np.array_equal(out[0][1], out[1][1])
    for (W, b), (W1, b1) in zip(out[0][2], out[1][2], strict=True):
        assert np.array_equal(W, W1) and np.array_equal(b, b1)


@pytest.mark.parametrize("loss", ["mse", "cross_entropy"])
def test_digits_64_32_10_with_the_output_layer_discarding(loss):
    """The issue's 64-32-10 digits network (blocks chosen by ws.map), checkpoint=2: layer
    1, the output layer, discards its inputs and layer 0 recomputes them when the targets
    (MSE) or the softmax head's deltas (cross-entropy) arrive. 30 samples: bit for bit
    the run without RCP and CheckpointedMLP."""
    pytest.importorskip("sklearn")
    from wafersim.train.datasets import digits

    Xtr, ytr, _, _ = digits()
    X, y = Xtr[:30], ytr[:30]
    ce = loss == "cross_entropy"
    runs = []
    for policy in (None, 2):
        model = mlp((64, 32, 10), 2)
        init = _params(model)
        kw = {"loss": ws.nn.CrossEntropyLoss()} if ce else {}
        plan = ws.map(model, checkpoint=policy, **kw)
        tr = ws.Trainer(plan, lr=0.1, progress=False)
        h = tr.fit(X, y, epochs=1, shuffle=False)
        runs.append((tr, h))
    (tr0, h0), (tr1, h1) = runs
    assert tr1.plan.keeps == (True, False) and h1.loss == h0.loss
    shapes = [(b.rows, b.cols) for b in tr1.plan.layers]
    ref = CheckpointedMLP(init, ["relu", "identity"], shapes, (True, False), loss=loss)
    ref.fit(X, np.eye(10, dtype=np.float32)[y], 0.1, "sgd")
    for (W, b), (W0, b0), (Wr, br) in zip(tr1.weights(), tr0.weights(), ref.params(), strict=True):
        assert np.array_equal(W, W0) and np.array_equal(b, b0)
        assert np.array_equal(W, Wr) and np.array_equal(b, br)


@pytest.mark.parametrize("kw", [
    {"optimizer": ws.optim.SGD(lr=0.1, momentum=0.9)},
    {"optimizer": ws.optim.SGD(lr=0.1, weight_decay=0.01)},
    {"optimizer": ws.optim.Adam(lr=0.01)},
    {"dtype": "fp16"},
    {"smear": {2: [0.5, 0.5]}},
], ids=["momentum", "weight_decay", "adam", "fp16", "smear"])
def test_sgd_with_rcp_other_optimizers_fp16_and_smearing_as_without_0655(kw):
    """One sample at a time with an optimizer that accumulates and updates per sample
    (momentum, weight decay, Adam), in fp16, and with a smeared discarding layer: the
    weights and losses are bit for bit those of the same plan without RCP (each of which
    the device-order reference checks in its own test file)."""
    sizes, act, blocks, _ = NETS["mse4"]
    X, Y = _data(sizes[0], sizes[-1], 8)
    out = []
    for policy in (None, 2):
        tr = ws.Trainer(ws.map(mlp(sizes, 4, act), blocks=blocks, checkpoint=policy, **kw),
                        progress=False)
        h = tr.fit(X, Y, epochs=1, shuffle=False)
        out.append((tr.weights(), h.loss, h.cycles[0]))
    for (W, b), (W1, b1) in zip(out[0][0], out[1][0], strict=True):
        assert np.array_equal(W, W1) and np.array_equal(b, b1)
    assert out[0][1] == out[1][1] and out[1][2] > out[0][2]


def test_discarding_layers_hold_one_slot_and_the_peak_drops_0656():
    """[0656]: the discarding layers store fewer activations: one slot of inputs (the
    sample whose recompute and backward pass are there) instead of ``slots``, and the
    finalizers that feed them one slot of outputs (the replay rewrites it). Hand-worked
    for 12-10-9-8-4, blocks 3x3, 3x2, 2x2, 2x1, 8 slots, fp32, checkpoint=2 (layers 1 and
    3 discard), bytes = elements x slots x 4:

    * layer 1's F_0: 4 inputs x 1 + 5 outputs x 8 (layer 2 keeps them) = 176 bytes
      instead of (4 + 5) x 8 = 288;
    * layer 1's worker (1, 0): 3 inputs x 1 = 12 instead of 96;
    * layer 0's F_0: 4 inputs x 8 + 4 outputs x 1 = 144 instead of (4 + 4) x 8 = 256;
    * layer 2's F_0 (kept inputs, its outputs go to layer 3, which discards): 5 x 8 + 4 x 1
      = 176 instead of (5 + 4) x 8 = 288: the peak over all PEs is 176 with RCP, 288
      without."""
    sizes, act, blocks, _ = NETS["mse4"]
    with_ = ws.map(mlp(sizes, 4, act), blocks=blocks, checkpoint=2).memory()
    without = ws.map(mlp(sizes, 4, act), blocks=blocks).memory()
    want = {(0, 3): (176, 288), (1, 3): (12, 96), (0, 0): (144, 256), (0, 5): (176, 288)}
    for pe, (w1, w0) in want.items():
        assert (with_[pe]["activation_bytes"], without[pe]["activation_bytes"]) == (w1, w0), pe
    # the data memory of the discarding worker shrinks by as much, less the recompute's
    # two words (v_rcq, v_rcb)
    assert without[(1, 3)]["data_bytes"] - with_[(1, 3)]["data_bytes"] == 96 - 12 - 4
    a1 = np.array([with_[p]["activation_bytes"] for p in sorted(with_)])
    a0 = np.array([without[p]["activation_bytes"] for p in sorted(without)])
    assert (a1 <= a0).all() and a1.sum() < a0.sum()
    assert (a1.max(), a0.max()) == (176, 288)
    # and the layout is what the policy's memory model says (mapping/checkpoint.py)
    model = activation_memory(ws.map(mlp(sizes, 4, act), blocks=blocks).layers, 8, 4,
                              check_checkpoint(2, 4))
    assert all(with_[p]["activation_bytes"] == m["with"] for p, m in model.items())


def test_stats_report_the_layout_and_the_measured_cycles():
    """``tr.stats().checkpoint()`` on a plan mapped with a policy: the bytes of its
    programs' layout (as Plan.memory) and the cycles per sample measured with the
    recompute, which exceed those of the same run without it (the replay lies on the
    backward pass's path with one sample in flight)."""
    tr, _, _, _, _ = _train("mse4", 2, n=4)
    plain, _, _, _, _ = _train("mse4", None, n=4)
    r = tr.stats().checkpoint()
    mem = tr.plan.memory()
    assert r["recomputes"] and r["layout_peak"] == 176
    assert r["layout_total"] == sum(mem[p]["activation_bytes"] for p in tr.plan.specs)
    assert r["cycles_per_sample"] > plain.stats().cycles_per_sample
    assert not plain.stats().checkpoint()["recomputes"]


def test_manual_passes_with_rcp_give_the_same_deltas():
    """forward(), delta() and chain() (one sample at a time): delta() triggers the
    recompute; the deltas it reads back and the weights after chain() equal the plan
    without RCP bit for bit."""
    sizes, act, blocks, _ = NETS["mse4"]
    X, Y = _data(sizes[0], sizes[-1], 2)
    out = []
    for policy in (None, 2):
        tr = ws.Trainer(ws.map(mlp(sizes, 4, act), blocks=blocks, checkpoint=policy),
                        lr=0.1, progress=False)
        runs = []
        for k in range(2):
            tr.forward(X[k])
            runs.append(tr.delta(Y[k]))
            tr.chain()
        out.append((runs, tr.weights()))
    for d0, d1 in zip(out[0][0], out[1][0]):
        for a, b in zip(d0, d1, strict=True):
            assert np.array_equal(a, b)
    for (W, b), (W1, b1) in zip(out[0][1], out[1][1], strict=True):
        assert np.array_equal(W, W1) and np.array_equal(b, b1)


def test_prediction_after_rcp_training_is_the_forward_pass():
    """Inference on a plan with RCP (nothing is discarded there: no backward pass) gives
    the outputs of the plan without RCP."""
    sizes, act, blocks, _ = NETS["mse4"]
    X, _ = _data(sizes[0], sizes[-1], 5)
    a = ws.Trainer(ws.map(mlp(sizes, 4, act), blocks=blocks, checkpoint=2), progress=False)
    b = ws.Trainer(ws.map(mlp(sizes, 4, act), blocks=blocks), progress=False)
    assert np.array_equal(a.predict(X), b.predict(X))

