"""Reverse checkpoint under CPGD on the cycle-level wafer (seed 000 FIG. 27C-D, [0615],
[0625], [0653]-[0655]): a plan mapped with ``checkpoint=k`` and ``cpgd=True`` trains with
``ws.Trainer(algo="cpgd", window=W)``; the segments' recomputes queue until no forward
pass can come first at their PEs (every sample in flight forwarded, or the epoch's last
one), and use the weights stored when they run ([0615]: "the most recent weights").

The independent references: window 1 is SGD, so the run equals SGD without RCP bit for
bit; with learning rate 0 the weights never change, so every activation a discarding
PE gets back from the recompute equals, bit for bit, the one it stored in the forward
pass and the one the same PE stores in the run without RCP (read from PE memory, cycle
by cycle, just before each slot is cleared); with lr 0.1 the numpy CPGD reference
replays the PEs' order log (forward reads, updates, and when each recompute started)
and ends with the wafer's weights bit for bit."""

from collections import Counter

import numpy as np
import pytest

import wafersim as ws
from wafersim.reference.cpgd import CpgdReference, replay_order_log
from wafersim.train.cpgd_stats import read_order_log

from rcp_cpgd_case import BLOCKS, SIZES, rcp_data as _data, same_weights as _same
from train_models import mlp

pytestmark = pytest.mark.nosanitize


def _plan(policy=None, act=ws.nn.ReLU):
    return ws.map(mlp(SIZES, 4, act), blocks=BLOCKS, checkpoint=policy, cpgd=True)


def _weights(plan):
    return plan.read_weights()


@pytest.mark.parametrize("policy", [2, [0, 3], 4])
def test_cpgd_window_1_with_rcp_equals_sgd_without_rcp(policy):
    """One sample in flight: CPGD is SGD, and RCP changes no result ([0653], [0655]); the
    epoch's last sample ends the stream (the mark that lets its recompute start), and
    the second epoch is admitted after it."""
    X, Y = _data(10)
    a = _plan(policy)
    ha = ws.Trainer(a, algo="cpgd", window=1, lr=0.1, progress=False).fit(X, Y, epochs=2,
                                                                           shuffle=False)
    b = ws.map(mlp(SIZES, 4, ws.nn.ReLU), blocks=BLOCKS)
    hb = ws.Trainer(b, lr=0.1, progress=False).fit(X, Y, epochs=2, shuffle=False)
    assert _same(_weights(a), _weights(b))
    assert ha.loss == hb.loss
    assert ha.cycles[0] > hb.cycles[0]            # the recompute costs cycles


@pytest.mark.parametrize("policy, window", [(2, 2), (2, 4), ([0, 3], 3), (4, 3)])
def test_cpgd_with_rcp_trains_several_samples_in_flight_without_hanging(policy, window):
    """Several samples in flight: every epoch's samples come back (no deadlock, no
    CycleLimitError), the weights moved, the staleness shows samples really overlapped,
    and inference after training is admitted (each PE cleared the stream's end mark)."""
    X, Y = _data(12)
    plan = _plan(policy)
    before = _weights(plan)
    tr = ws.Trainer(plan, algo="cpgd", window=window, lr=0.1, progress=False)
    hist = tr.fit(X, Y, epochs=2, shuffle=False)
    assert len(hist.loss) == 2 and all(np.isfinite(hist.loss))
    assert not _same(before, _weights(plan))
    st = tr.stats().staleness()
    assert max(v["max"] for v in st) >= 1
    assert all(v["max"] <= window - 1 for v in st)
    assert tr.predict(X).shape == (12, SIZES[-1])


def _watch_slots(plan, points):
    """Runs the plan's wafer one cycle at a time and records, per PE in ``points`` and
    per activation slot, the slot's contents (raw bits) just before a stored value is
    cleared or overwritten: the activations the PE held for one sample (discarded in
    the forward pass, or read by the backward pass and cleared at its end)."""
    w = plan.wafer
    real = w.run
    seen = {p: [] for p in points}
    prev, armed = {}, {}

    def look():
        for p in points:
            s = plan.specs[p]
            m = np.asarray(w.pe(*p).read("w")).reshape(s.nin, s.ncols + s.in_slots)
            for k in range(s.in_slots):
                cur = m[:, s.ncols + k].copy()
                old = prev.get((p, k))
                if old is not None and armed.get((p, k), True) and np.any((old != 0) & (cur != old)):
                    seen[p].append(old.view(np.uint32).tobytes())
                    armed[(p, k)] = False
                if not np.any(cur != 0):
                    armed[(p, k)] = True
                prev[(p, k)] = cur

    def run(max_cycles=None, **kw):
        st = None
        for _ in range(max_cycles or 1_000_000):
            st = real(max_cycles=1)
            look()
            if st.quiescent:
                break
        return st

    w.run = run
    return seen


def _discarding_points(plan):
    return [p for b in plan.layers if not plan.keeps[b.index] for p in b.points()]


@pytest.mark.parametrize("policy, window", [
    (2, 3),
    pytest.param([0, 3], 2, marks=pytest.mark.slow),   # (about 20 s: one cycle at a time)
])
def test_cpgd_lr_0_recomputed_activations_equal_the_stored_ones_0615_0653(policy, window):
    """Issue 23: "Under CPGD with learning rate 0: recomputed activations equal the stored
    ones". With lr 0 the weights never change, so the recompute with the current weights
    ([0615]) gives, at every discarding PE, each sample's activations once more: what it
    held at the end of the forward pass (before discarding them, [0651]) and again at the
    end of the backward pass (the recomputed ones, [0653]) are the same bits, and are
    those the same PE holds in the run without RCP. With lr 0.1 the recompute reads
    weights other samples updated since ([0654]), and the pairs break: the check can
    fail."""
    X, Y = _data(8)
    rcp = _plan(policy)
    points = _discarding_points(rcp)
    plain = _plan(None)
    runs = {}
    for name, plan in (("rcp", rcp), ("plain", plain)):
        tr = ws.Trainer(plan, algo="cpgd", window=window, lr=0.1, progress=False)
        tr.lr = 0.0     # the public API refuses lr 0; the words it writes are -lr = -0
        seen = _watch_slots(plan, points)
        tr.fit(X, Y, epochs=1, shuffle=False)
        runs[name] = seen
        assert _same(_weights(plan), [(d.linear.weight, d.linear.bias) for d in
                                      mlp(SIZES, 4, ws.nn.ReLU).dense_layers()])
    held = 0
    for p in points:
        once = Counter(runs["plain"][p])
        assert Counter(runs["rcp"][p]) == Counter({k: 2 * v for k, v in once.items()}), p
        held += sum(once.values())
    assert held >= len(points)       # most PEs saw samples with nonzero activations

    drift = _plan(policy)
    tr = ws.Trainer(drift, algo="cpgd", window=window, lr=0.1, progress=False)
    seen = _watch_slots(drift, points)
    tr.fit(X, Y, epochs=1, shuffle=False)
    assert any(any(v % 2 for v in Counter(seen[p]).values()) for p in points)


@pytest.mark.parametrize("policy, window, loss", [
    (2, 2, "mse"),
    ([0, 3], 3, "mse"),
    (4, 4, "mse"),
    (2, 3, "cross_entropy"),
])
def test_cpgd_with_rcp_replayed_order_equals_the_wafer_bit_for_bit_fp32_0615(policy, window,
                                                                             loss):
    """Issue 23: CPGD with a reverse checkpoint at lr 0.1, replayed by the numpy reference
    from the PEs' order log: each forward pass reads, element by element, the weights
    its PE held then (``olog``, forward reads only: a discarding layer's recompute reads
    are not counted), and each recompute the weights its PE held when it started
    (``rlog``: [0615], the most recent weights). Weights, biases and the epoch loss are
    the wafer's bit for bit; the same run without RCP ends elsewhere (the recompute read
    weights other samples had updated since the forward pass: [0654], [0655]). The log
    also shows what the recompute queue implies: every PE recomputed sample s after
    exactly its updates of samples 0 .. s-1 (a finalizer: s updates), so the reference
    that recomputes with the weights current at the sample's backward pass (no log) ends
    the same."""
    X, Y = _data(16)
    kw = {}
    if loss == "cross_entropy":
        kw = {"loss": ws.nn.CrossEntropyLoss()}
        Y = np.eye(SIZES[-1], dtype=np.float32)[np.argmax(Y, axis=1)]
    model = mlp(SIZES, 4, ws.nn.ReLU)
    params = [(d.linear.weight.copy(), d.linear.bias.copy()) for d in model.dense_layers()]
    names = [d.activation for d in model.dense_layers()]
    runs = {}
    for name, pol in (("rcp", policy), ("plain", None)):
        plan = ws.map(model.copy(), blocks=BLOCKS, checkpoint=pol, cpgd=True, order_log=300,
                      **kw)
        tr = ws.Trainer(plan, algo="cpgd", window=window, lr=0.1, progress=False)
        hist = tr.fit(X, Y, epochs=1, shuffle=False)
        runs[name] = (plan, tr, hist, read_order_log(plan))
    plan, tr, hist, log = runs["rcp"]
    assert not log["full"] and log["rlog"]
    assert tr.stats().staleness()[0]["max"] >= 1
    ref = CpgdReference(params, names, BLOCKS, 0.1, loss=loss, keeps=plan.keeps)
    losses = replay_order_log(ref, X, Y, plan.layers, log)
    assert _same(_weights(plan), ref.params())
    assert hist.loss[0] == pytest.approx(float(losses.mean()), abs=0)
    assert not _same(_weights(plan), _weights(runs["plain"][0]))
    for p, entries in log["rlog"].items():
        if plan.specs[p].final:
            assert list(entries) == list(range(len(X))), p
    current = CpgdReference(params, names, BLOCKS, 0.1, loss=loss, keeps=plan.keeps)
    step = current.step
    current.step = lambda x, y, fw, uw, rw, **kw: step(x, y, fw, uw, None, **kw)  # current W
    replay_order_log(current, X, Y, plan.layers, log)
    assert _same(_weights(plan), current.params())
    plain = CpgdReference(params, names, BLOCKS, 0.1, loss=loss)
    replay_order_log(plain, X, Y, runs["plain"][0].layers, runs["plain"][3])
    assert _same(_weights(runs["plain"][0]), plain.params())

