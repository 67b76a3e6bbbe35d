"""CPGD with the delta pass reading the weights of the sample's own forward pass ([0634]:
"historical parameters anchored to when the corresponding forward pass was performed";
``ws.map(..., cpgd=True, dp_weights="forward")``). Every PE with a delta pass keeps a
snapshot of its W per slot, taken by CE instructions row by row as the forward pass reads
it (rows it did not read: at the activation closeout; mapping/program/cpgd_snapshot.py).
Checked against the numpy reference (wafersim.reference.cpgd): window 1 is SGD bit for
bit; replaying the order the PEs logged gives the wafer's weights bit for bit in fp32;
and the option changes the result of a stale run."""

import numpy as np
import pytest

import wafersim as ws
from wafersim.reference.cpgd import CpgdReference, replay_order_log, time_step_schedule
from wafersim.train.cpgd_stats import read_order_log

from test_train_cpgd import LR, data, fit, make_model, names_of, params_of, same_params

pytestmark = pytest.mark.nosanitize  # whole training runs


# ---- the reference alone ------------------------------------------------------------------
def test_reference_forward_weights_in_the_delta_pass_0634():
    """The reference's delta pass with the forward pass's weights: on the window-1
    schedule (no update between a sample's forward and delta passes) it equals the
    current weights' run bit for bit; on a stale schedule (3 layers, full pipeline) it
    differs from it; and in a step whose forward pass read stale weights, the delta pass
    of layer 1 is handed exactly those, not the ones stored then."""
    model = make_model((10, 6, 5, 4), [ws.nn.Tanh, ws.nn.Tanh])
    X, Y = data(12, 10, 4)
    shapes = [(2, 2), (2, 2), (2, 1)]
    runs = {}
    for window in (1, 6):       # 6: a full pipeline, layer 1 two updates behind [0648]
        version = time_step_schedule(len(X), 3, window=window)["version"]
        for dp in ("current", "forward"):
            ref = CpgdReference(params_of(model), names_of(model), shapes, LR, dp_weights=dp)
            ref.train_versions(X, Y, version)
            runs[window, dp] = ref
    assert same_params(runs[1, "current"].params(), runs[1, "forward"].params())
    assert not same_params(runs[6, "current"].params(), runs[6, "forward"].params())
    # by hand: one stale step, the delta sums come from the weights the forward pass read
    ref = CpgdReference(params_of(model), names_of(model), shapes, LR, dp_weights="forward")
    ref.train_sgd(X[:2], Y[:2])
    seen = {}
    orig = ref.mlp._layer_backward

    def spy(l, a_in, d, mode, lr, skip_grad=None):
        if l == 1:
            seen["dp"] = ref.mlp.dp_weights[1].copy()
        return orig(l, a_in, d, mode, lr, skip_grad)
    ref.mlp._layer_backward = spy
    ref.step(X[2], Y[2], lambda rf, l, a: (rf.Wh[l][0], rf.bh[l][0]))
    assert np.array_equal(seen["dp"], ref.Wh[1][0])          # what the forward pass read
    assert not np.array_equal(seen["dp"], ref.Wh[1][2])      # the weights stored then


# ---- on the wafer ------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_window_one_with_forward_weights_equals_sgd_bit_for_bit(dtype):
    """With one sample in flight no update comes between a sample's forward pass and its
    delta pass: dp_weights="forward" is SGD bit for bit (weights, biases, loss), in fp32
    and in fp16 with stochastic rounding (the snapshot copies do not round)."""
    model = make_model((12, 7, 5, 4), [ws.nn.ReLU, ws.nn.Sigmoid])
    X, Y = data(20, 12, 4)
    shapes = [(3, 2), (2, 2), (2, 1)]
    out = []
    for algo, kw in (("cpgd", {"cpgd": True, "slots": 3, "dp_weights": "forward"}), ("sgd", {})):
        plan = ws.map(model.copy(), blocks=shapes, dtype=dtype, **kw)
        tr = ws.Trainer(plan, algo=algo, lr=LR, progress=False,
                        numerics="fp16-sr" if dtype == "fp16" else None,
                        window=1 if algo == "cpgd" else None)
        hist = tr.fit(X, Y, epochs=1, shuffle=False)
        out.append((tr.weights(), hist.loss))
    assert same_params(out[0][0], out[1][0])
    assert out[0][1] == out[1][1]
    if dtype == "fp32":
        ref = CpgdReference(params_of(model), names_of(model), shapes, LR, dp_weights="forward")
        ref.train_sgd(X, Y)
        assert same_params(out[0][0], ref.params())


@pytest.mark.parametrize("sizes,shapes,window,loss", [
    ((12, 7, 5, 4), [(3, 2), (2, 2), (2, 1)], 3, "mse"),
    ((16, 8, 4), [(2, 2), (2, 2)], 4, "mse"),
    ((12, 7, 4), [(3, 2), (2, 2)], 4, "cross_entropy"),
])
def test_replayed_order_with_forward_weights_equals_the_wafer_bit_for_bit(sizes, shapes, window,
                                                                            loss):
    """Several samples in flight, dp_weights="forward": the reference whose forward pass
    reads, element by element, what each PE held when its f_act read it (the order log),
    and whose delta pass reads those same weights, ends with the wafer's weights and
    biases bit for bit in fp32, and the same loss (MSE and cross-entropy, two block
    layouts). The run was stale, and the option changed it: the same run with
    dp_weights="current" ends elsewhere, and so does the current-weights replay of this
    run's log."""
    acts = [ws.nn.ReLU, ws.nn.Tanh][:len(sizes) - 2]
    model = make_model(sizes, acts)
    X, Y = data(24, sizes[0], sizes[-1], seed=1)
    kw = {"loss": ws.nn.CrossEntropyLoss()} if loss == "cross_entropy" else {}
    if loss == "cross_entropy":
        Y = np.eye(sizes[-1], dtype=np.float32)[np.argmax(Y, axis=1)]
    tr, hist = fit(model, X, Y, shapes, window=window, cpgd=True, slots=window, order_log=400,
                   dp_weights="forward", **kw)
    assert tr.dp_weights == "forward"
    log = read_order_log(tr.plan)
    assert not log["full"] and log["flog"]
    ref = CpgdReference(params_of(model), names_of(model), shapes, LR, loss=loss,
                        dp_weights="forward")
    losses = replay_order_log(ref, X, Y, tr.plan.layers, log)
    assert same_params(tr.weights(), ref.params())
    assert hist.loss[0] == pytest.approx(float(losses.mean()), abs=0)
    assert tr.stats().staleness()[0]["max"] >= 1
    cur = CpgdReference(params_of(model), names_of(model), shapes, LR, loss=loss)
    replay_order_log(cur, X, Y, tr.plan.layers, {**log, "flog": {}})
    assert not same_params(tr.weights(), cur.params())
    tr_c, _ = fit(model, X, Y, shapes, window=window, cpgd=True, slots=window, **kw)
    assert not same_params(tr.weights(), tr_c.weights())


def test_rows_the_forward_pass_did_not_read_are_taken_at_the_activation_closeout():
    """Rows whose input was not sent (|a| <= threshold, EC411) are not read by the
    forward pass, yet the delta pass uses them and tanh's f' is not 0 there: the snapshot
    takes them as stored at the sample's activation closeout (the flog says which updates
    came before it). The replay with that rule equals the wafer bit for bit; the same
    replay with those rows at the weights before any update does not."""
    sizes, shapes, window, T = (12, 9, 7, 4), [(3, 3), (3, 2), (2, 2)], 4, 0.25
    model = make_model(sizes, [ws.nn.Tanh, ws.nn.Tanh])
    X, Y = data(24, sizes[0], sizes[-1], seed=1)
    tr, hist = fit(model, X, Y, shapes, window=window, cpgd=True, slots=window, order_log=400,
                   dp_weights="forward", activation_threshold=T)
    log = read_order_log(tr.plan)
    th = [T, T, None]
    ref = CpgdReference(params_of(model), names_of(model), shapes, LR, dp_weights="forward",
                        thresholds=th)
    losses = replay_order_log(ref, X, Y, tr.plan.layers, log)
    assert same_params(tr.weights(), ref.params())
    assert hist.loss[0] == pytest.approx(float(losses.mean()), abs=0)
    early = {p: np.zeros_like(v) for p, v in log["flog"].items()}
    wrong = CpgdReference(params_of(model), names_of(model), shapes, LR, dp_weights="forward",
                          thresholds=th)
    replay_order_log(wrong, X, Y, tr.plan.layers, {**log, "flog": early})
    assert not same_params(tr.weights(), wrong.params())


def test_snapshot_bytes_in_plan_memory():
    """plan.memory() counts the snapshots: a copy of the PE's W per slot on every PE with
    a delta pass (layers after the first), none in layer 0; the programs' data grow by at
    least that much against dp_weights="current"."""
    model = make_model((16, 8, 4))
    shapes = [(2, 2), (2, 2)]
    cur = ws.map(model.copy(), blocks=shapes, cpgd=True, slots=3).memory()
    plan = ws.map(model.copy(), blocks=shapes, cpgd=True, slots=3, dp_weights="forward")
    mem = plan.memory()
    for b in plan.layers:
        for p in b.points():
            s = plan.specs[p]
            want = 0 if b.index == 0 else s.nin * s.nout * 3 * 4
            assert mem[p]["snapshot_bytes"] == want
            assert mem[p]["data_bytes"] - cur[p]["data_bytes"] >= want
            assert cur[p]["snapshot_bytes"] == 0
    assert mem[plan.layers[1].at(0, 0)]["snapshot_bytes"] == 4 * 2 * 3 * 4


def test_snapshots_that_do_not_fit_pe_memory_are_refused_naming_layer_bytes_and_limit():
    """A window whose snapshots do not fit a PE is refused at ws.map, before any cycle:
    the layer, the bytes, the limit, the snapshots' share and how many slots would fit.
    The same slots fit without snapshots."""
    model = make_model((64, 64, 10))
    blocks = [(2, 1), (1, 1)]
    ws.map(model.copy(), blocks=blocks, cpgd=True, slots=12)
    wafer = ws.Wafer(2, 2, mode="colors", colors=24)
    with pytest.raises(ws.ConfigError, match=r"layer 1 \(Linear\(64, 10\)\) does not fit: .* needs "
                                             r"\d+ data bytes, a PE has 32768, of which 30720 are "
                                             r"the delta pass's weight snapshots.*about \d+ fit"):
        ws.map(model.copy(), wafer, blocks=blocks, cpgd=True, slots=12, dp_weights="forward")
    assert wafer.cycle == 0


def test_bad_dp_weights_are_refused_before_any_cycle():
    model = make_model((12, 7, 4))
    shapes = [(3, 2), (2, 2)]
    with pytest.raises(ws.ConfigError, match=r"dp_weights must be one of current, forward"):
        ws.map(model.copy(), blocks=shapes, cpgd=True, dp_weights="old")
    with pytest.raises(ws.ConfigError, match=r"dp_weights='forward'.*needs cpgd=True"):
        ws.map(model.copy(), blocks=shapes, dp_weights="forward")
    cur = ws.map(model.copy(), blocks=shapes, cpgd=True, slots=3)
    fwd = ws.map(model.copy(), blocks=shapes, cpgd=True, slots=3, dp_weights="forward")
    cycles = cur.wafer.cycle, fwd.wafer.cycle
    with pytest.raises(ws.ConfigError, match=r"mapped with dp_weights='current'.*\[0634\]"):
        ws.Trainer(cur, algo="cpgd", dp_weights="forward")
    with pytest.raises(ws.ConfigError, match=r"mapped with dp_weights='forward'"):
        ws.Trainer(fwd, algo="cpgd", dp_weights="current")
    assert (cur.wafer.cycle, fwd.wafer.cycle) == cycles
    assert ws.Trainer(fwd, algo="cpgd").dp_weights == "forward"
    assert ws.Trainer(cur, algo="cpgd").dp_weights == "current"


def test_command_line_trains_with_forward_weights():
    """`wafersim train --algo cpgd --dp-weights forward` maps with the snapshots."""
    import argparse

    from wafersim.train.cli_train import add_arguments, train_digits

    ap = argparse.ArgumentParser()
    add_arguments(ap)
    args = ap.parse_args(["--algo", "cpgd", "--window", "2", "--dp-weights", "forward",
                          "--samples", "40", "--epochs", "1", "--no-progress"])
    r = train_digits(args)
    assert r["plan"].dp_weights == "forward" and r["trainer"].dp_weights == "forward"
    assert any(m["snapshot_bytes"] > 0 for m in r["plan"].memory().values())
