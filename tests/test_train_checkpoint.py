"""Reverse checkpoint (RCP; seed 000 FIG. 28C-E, [0614]-[0615], [0650]-[0656]): the policy
``ws.map(..., checkpoint=)`` takes and its errors (before any program is loaded), the
activation memory a policy saves in the mapping's layout (hand-worked), and the fp32
reference that discards and recomputes: under SGD and mini-batch it trains bit for bit
as without RCP ([0653], [0655]) with fewer activations stored; with weights changed
between the forward and the backward pass (continuous propagation, [0654]) the
recomputation sees the new weights ([0615])."""

import numpy as np
import pytest

import wafersim as ws
from wafersim.mapping.checkpoint import (activation_memory, check_checkpoint,
                                         checkpoint_memory, recompute_segments)
from wafersim.reference.checkpoint import CheckpointedMLP
from wafersim.reference.training import DeviceOrderMLP, train_numpy

from train_models import mlp

pytestmark = pytest.mark.nosanitize


# ---- the policy --------------------------------------------------------------------------
def test_policy_every_kth_layer_keeps_0615():
    """[0615]: "every even layer" saves (k = 2), "every fourth layer" (k = 4)."""
    assert check_checkpoint(None, 4) == (True, True, True, True)
    assert check_checkpoint(1, 3) == (True, True, True)
    assert check_checkpoint(2, 5) == (True, False, True, False, True)
    assert check_checkpoint(4, 6) == (True, False, False, False, True, False)
    assert check_checkpoint(9, 3) == (True, False, False)
    assert check_checkpoint([0, 3], 4) == (True, False, False, True)
    assert check_checkpoint((2, 0), 3) == (True, False, True)


def test_segments_name_the_recomputing_layer():
    assert recompute_segments((True, False, True, False)) == [(0, [1]), (2, [3])]
    assert recompute_segments((True, False, False, True, True)) == [(0, [1, 2])]
    assert recompute_segments((True, True)) == []


@pytest.mark.parametrize("policy, words", [
    ([0, 5], ["layer 5", "0..3"]),
    ([0, -1], ["layer -1", "0..3"]),
    ([1, 2], ["layer 0"]),
    ([0, 2, 2], ["layer 2", "second"]),
    ([0, 1.5], ["1.5"]),
    (0, ["k must be", ">= 1"]),
    (-3, ["-3"]),
    (True, ["True"]),
    ("2", ["'2'"]),
])
def test_bad_policy_names_the_layer_and_the_limit(policy, words):
    with pytest.raises(ws.ConfigError) as e:
        check_checkpoint(policy, 4)
    for w in words:
        assert w in str(e.value)


def _model(sizes=(8, 6, 5, 3), act=ws.nn.ReLU, seed=1):
    return mlp(sizes, seed, act)


def test_map_refuses_a_bad_policy_before_loading_anything():
    w = ws.Wafer(4, 8, mode="colors", colors=24)
    with pytest.raises(ws.ConfigError, match="layer 7"):
        ws.map(_model(), w, checkpoint=[0, 7])
    assert not any(w.pe(r, c).loaded for r in range(4) for c in range(8))


def test_policy_that_does_not_fit_pe_memory_names_layer_and_limit():
    model = ws.nn.Sequential(ws.nn.Linear(64, 64), ws.nn.ReLU(), ws.nn.Linear(64, 10))
    with pytest.raises(ws.ConfigError) as e:
        ws.map(model, blocks=[(1, 1), (1, 1)], checkpoint=[0])
    msg = str(e.value)
    assert "checkpoint: layer 0" in msg and "32768" in msg and "PE (0, 0)" in msg


def test_residual_blocks_refuse_a_discarding_policy():
    model = ws.nn.Sequential(ws.nn.Linear(6, 4), ws.nn.ReLU(),
                             ws.nn.Residual(ws.nn.Sequential(ws.nn.Linear(4, 4), ws.nn.ReLU())),
                             ws.nn.Linear(4, 2))
    with pytest.raises(ws.ConfigError, match="Residual"):
        ws.map(model, checkpoint=2)


@pytest.mark.parametrize("policy", [1, [0, 1, 2]])
def test_keeping_every_layer_trains_as_without_a_policy(policy):
    """checkpoint=1 (every layer keeps) is the plan of today: same weights bit for bit."""
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (6, 8)).astype(np.float32)
    Y = rng.uniform(-1, 1, (6, 3)).astype(np.float32)
    out = []
    for kw in ({}, {"checkpoint": policy}):
        tr = ws.Trainer(ws.map(_model(), blocks=[(2, 2), (2, 2), (2, 1)], **kw), lr=0.05,
                        progress=False)
        tr.fit(X, Y, epochs=1, shuffle=False)
        out.append(tr.weights())
    for (W, b), (W2, b2) in zip(*out, strict=True):
        assert np.array_equal(W, W2) and np.array_equal(b, b2)


# ---- memory in the mapping's layout ----------------------------------------------------------
def test_activation_memory_hand_worked_0656():
    """8-6-4-2 on blocks 2x2, 2x2, 2x1, 3 slots, fp32, checkpoint=2 (layers 0 and 2 keep).
    Layer 0's PEs: 4 inputs x 3 slots x 4 bytes = 48, its finalizers + 3 outputs x 3 x 4
    = 36 without RCP, + 3 x 1 x 4 = 12 with (layer 1 discards: one recompute slot,
    A 2829). Layer 1: 3 inputs x 3 x 4 = 36 without, 3 x 1 x 4 = 12 with; its finalizers
    + 2 x 3 x 4 = 24 (layer 2 keeps). Layer 2 (output, 2 x 1): 2 x 3 x 4 = 24, its
    finalizer + 24, unchanged."""
    plan = ws.map(_model((8, 6, 4, 2)), blocks=[(2, 2), (2, 2), (2, 1)], slots=3)
    mem = checkpoint_memory(plan, 2)
    assert mem["keeps"] == (True, False, True)
    L0, L1, L2 = plan.layers
    want = {(L0, 0, 0): (84, 60), (L0, 1, 0): (48, 48), (L0, 1, 1): (84, 60),
            (L1, 0, 0): (60, 36), (L1, 0, 1): (36, 12), (L1, 1, 0): (36, 12),
            (L1, 1, 1): (60, 36), (L2, 0, 0): (48, 48), (L2, 1, 0): (24, 24)}
    for (b, r, c), (w0, w1) in want.items():
        got = mem["per_pe"][b.at(r, c)]
        assert (got["without"], got["with"]) == (w0, w1), (b.index, r, c)
    assert mem["total_without"] == sum(v["without"] for v in mem["per_pe"].values())
    assert mem["total_with"] < mem["total_without"]
    # the peak was a finalizer of layer 0, whose outputs layer 1 now discards
    assert (mem["peak_without"], mem["peak_with"]) == (84, 60)
    assert mem["saved_per_pe"][L1.at(0, 1)] == 24
    # the plan's own memory statistics give the bytes kept today (every layer keeps)
    kept = plan.memory()
    assert all(kept[p]["activation_bytes"] == v["without"] for p, v in mem["per_pe"].items())
    # every layer kept: nothing changes
    same = activation_memory(plan.layers, 3, 4, (True, True, True))
    assert all(v["with"] == v["without"] for v in same.values())


# ---- the reference: discard, recompute, identical results --------------------------------------
NETS = {
    "relu4": ((10, 8, 8, 7, 3), ["relu", "relu", "relu", "identity"],
              [(2, 2), (2, 2), (2, 2), (2, 1)]),
    "tanh_sigmoid5": ((9, 7, 6, 6, 5, 4), ["tanh", "sigmoid", "tanh", "relu", "identity"],
                      [(3, 2), (2, 2), (2, 1), (1, 1), (1, 1)]),
    "gelu3": ((8, 6, 6, 3), ["gelu", "gelu", "identity"], [(2, 2), (2, 1), (1, 1)]),
}


def _params(sizes, seed):
    rng = np.random.default_rng(seed)
    out = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        s = 1 / np.sqrt(n_in)
        out.append((rng.uniform(-s, s, (n_out, n_in)).astype(np.float32),
                    rng.uniform(-s, s, n_out).astype(np.float32)))
    return out


def _acts(names):
    return [ws.nn.GELU() if n == "gelu" else n for n in names]


def _data(sizes, n=16, seed=5):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, sizes[0])).astype(np.float32)
    X[X < -0.5] = 0
    return X, rng.uniform(-1, 1, (n, sizes[-1])).astype(np.float32)


@pytest.mark.parametrize("net", sorted(NETS))
@pytest.mark.parametrize("algo", ["sgd", "minibatch"])
@pytest.mark.parametrize("policy", [2, 3, "first"])
def test_rcp_trains_bit_identically_0653_0655(net, algo, policy):
    """[0653]: under SGD and mini-batch the recomputed activation equals the discarded
    one; [0655]: so the deltas and the weights are identical. Two epochs' worth of
    samples, mini-batches of 4; weights, biases, outputs and losses bit for bit."""
    sizes, names, shapes = NETS[net]
    L = len(shapes)
    keeps = check_checkpoint([0] if policy == "first" else policy, L)
    X, Y = _data(sizes)
    plain = DeviceOrderMLP(_params(sizes, 7), _acts(names), shapes)
    out0, loss0 = plain.fit(X, Y, 0.05, algo, 4)
    rcp = CheckpointedMLP(_params(sizes, 7), _acts(names), shapes, keeps)
    out1, loss1 = rcp.fit(X, Y, 0.05, algo, 4)
    assert np.array_equal(out0, out1) and np.array_equal(loss0, loss1)
    for (W, b), (W1, b1) in zip(plain.params(), rcp.params(), strict=True):
        assert np.array_equal(W, W1) and np.array_equal(b, b1)
    assert rcp.recomputed > 0
    # against the same schedule keeping every layer: activations are held for a shorter
    # time ([0656]); with several samples in flight (mini-batch) fewer at the peak. With
    # one (SGD) the peak can be the same: a segment's recomputed activations are all
    # held while its backward pass runs, as the discarded ones were.
    full = CheckpointedMLP(_params(sizes, 7), _acts(names), shapes, (True,) * L)
    full.fit(X, Y, 0.05, algo, 4)
    assert full.recomputed == 0 and rcp.live == full.live == 0
    assert rcp.held < full.held
    assert rcp.peak < full.peak if algo == "minibatch" else rcp.peak <= full.peak


def test_rcp_against_textbook_float64():
    """The RCP run also agrees with textbook float64 numpy SGD (an independent model)."""
    sizes, names, shapes = NETS["relu4"]
    X, Y = _data(sizes)
    rcp = CheckpointedMLP(_params(sizes, 7), names, shapes, (True, False, False, True))
    rcp.fit(X, Y, 0.05, "sgd")
    want = train_numpy(_params(sizes, 7), names, X, Y, 0.05)
    for (W, b), (Wr, br) in zip(rcp.params(), want, strict=True):
        assert np.allclose(W, Wr, rtol=1e-5, atol=1e-6) and np.allclose(b, br, rtol=1e-5, atol=1e-6)


def test_peak_activation_count_hand_worked():
    """8-8-8-8-3 (four layers), checkpoint=2, mini-batches of 4: per sample in flight the
    stored boundaries are the inputs of layers 0 and 2 and the outputs (8 + 8 + 3 = 19;
    76 for four samples); the first backward pass recomputes layer 3's inputs (+ 8 = 84)
    and releases the outputs (81) and then layer 3's inputs (73) before it recomputes
    layer 1's (81): the peak is 84. Keeping every layer: 4 x (4 x 8 + 3) = 140 at the end
    of the fourth forward pass."""
    sizes = (8, 8, 8, 8, 3)
    shapes = [(2, 2)] * 3 + [(2, 1)]
    X, Y = _data(sizes, n=8)
    names = ["relu"] * 3 + ["identity"]
    rcp = CheckpointedMLP(_params(sizes, 1), names, shapes, check_checkpoint(2, 4))
    rcp.fit(X, Y, 0.05, "minibatch", 4)
    full = CheckpointedMLP(_params(sizes, 1), names, shapes, (True,) * 4)
    full.fit(X, Y, 0.05, "minibatch", 4)
    assert (rcp.peak, full.peak) == (84, 140)
    assert rcp.live == full.live == 0


def test_recompute_uses_the_current_weights_0615_0654():
    """Continuous propagation changes weights between a sample's forward and backward
    passes: the recomputation uses the weights held then ([0615], [0654]), so layer 1's
    recomputed input is relu(W0' x + b0) with the changed W0' (textbook float64 to 1e-6),
    not the discarded forward value; with unchanged weights it is the discarded value,
    bit for bit."""
    sizes, names, shapes = NETS["relu4"]
    X, Y = _data(sizes, n=1)
    P = _params(sizes, 7)
    seen = {}

    class Spy(CheckpointedMLP):
        def _recompute(self, stored, upto, buf):
            super()._recompute(stored, upto, buf)
            seen.update({k: v.copy() for k, v in buf["a"].items()})

    def bump(net, k):
        net.W[0] += np.float32(0.25)

    fwd = DeviceOrderMLP(P, names, shapes).forward(X[0])
    Spy(P, names, shapes, (True, False, True, True)).fit(X, Y, 0.0, "sgd")
    assert np.array_equal(seen[1], fwd[1])
    seen.clear()
    Spy(P, names, shapes, (True, False, True, True)).fit(X, Y, 0.0, "sgd", between=bump)
    W0, b0 = P[0]
    want = np.maximum((W0.astype(np.float64) + 0.25) @ X[0] + b0, 0)
    assert np.allclose(seen[1], want, rtol=1e-6, atol=1e-6)
    assert not np.array_equal(seen[1], fwd[1])


# ---- statistics: what a policy would save and cost on a trained plan ---------------------------
def test_train_stats_report_bytes_saved_and_estimated_cycles():
    """tr.stats().checkpoint(policy): the layout's bytes (as checkpoint_memory) and the
    cycle estimates from the run: for checkpoint=2 on three layers (segment: layer 0
    recomputes for layer 1) the added latency is the mean gap between layer 0 and layer 1
    receiving a sample's inputs (stage_times, one sample in flight), and the replayed busy
    cycles are layer 0's forward-pass busy cycles per sample; keeping every layer costs
    nothing."""
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 1, (5, 8)).astype(np.float32)
    Y = rng.uniform(-1, 1, (5, 3)).astype(np.float32)
    plan = ws.map(_model(), blocks=[(2, 2), (2, 2), (2, 1)], slots=4)
    tr = ws.Trainer(plan, lr=0.05, progress=False, timeline=True)
    tr.fit(X, Y, epochs=1, shuffle=False)
    st = tr.stats()
    r = st.checkpoint(2)
    assert r["per_pe"] == checkpoint_memory(plan, 2)["per_pe"]
    assert r["segments"] == [(0, [1])]
    t = st.stage_times()
    assert len(t[0]) == len(t[1]) == 5
    assert r["extra_latency_per_sample"] == pytest.approx(np.mean(t[1] - t[0]))
    assert 0 < r["extra_latency_per_sample"] < st.cycles_per_sample
    b0 = plan.layers[0]
    fwd = st.busy("forward")
    layer0 = sum(fwd[b0.at(i, j)] for i in range(b0.rows) for j in range(b0.cols))
    assert r["extra_busy_per_sample"] == pytest.approx(layer0 / 5) and layer0 > 0
    none = st.checkpoint(None)
    assert none["extra_latency_per_sample"] == 0 and none["extra_busy_per_sample"] == 0
    assert none["total_with"] == none["total_without"]
