"""CPGD with mini-batches (seed 000 [0636]: "continuous propagation techniques are usable
in conjunction with mini-batch style processing ... a subsequent batch is started before
an immediately preceding batch is completed ... Parameter inconsistency within the
pipeline is limited to no more than one batch boundary"): ``Trainer(algo="cpgd",
batch_size=B, window=W)``. The chain pass accumulates each sample's gradient into G, and
each PE applies the batch's mean in its update task at its own end of the batch's last
backward pass, while samples of the next batch are already in flight (no drain).

Checked against independent references: batch_size 1 is today's CPGD; window 1 is the
pipelined mini-batch and the device-order numpy mini-batch, bit for bit; with samples of
two batches in flight, the numpy reference replaying the order the PEs logged (one entry
per update task) ends with the wafer's weights bit for bit in fp32; the staleness the
PEs counted, in batches, never exceeds one ([0636]); a window that could let a forward
pass miss two batch updates is refused."""

import numpy as np
import pytest

import wafersim as ws
from wafersim.reference.cpgd import CpgdReference, batch_ends, replay_order_log
from wafersim.reference.training import DeviceOrderMLP
from wafersim.train.cpgd_stats import read_order_log

from test_train_cpgd import (LR, data, make_model, names_of, params_of, same_params,
                             same_with_one_and_two_threads)

pytestmark = pytest.mark.nosanitize  # whole training runs

SHAPES = [(3, 2), (2, 2), (2, 1)]


def run(model, X, Y, algo="cpgd", batch_size=None, window=None, blocks=None, loss=None,
        opt=None, **map_args):
    blocks = blocks or SHAPES[:len(model.dense_layers())]
    kw = {"loss": loss} if loss is not None else {}
    if opt is not None:
        kw["optimizer"] = opt
    plan = ws.map(model.copy(), blocks=blocks, **kw, **map_args)
    tr = ws.Trainer(plan, algo=algo, lr=LR, batch_size=batch_size, window=window,
                    progress=False)
    return tr, tr.fit(X, Y, epochs=1, shuffle=False)


def test_reference_batch_ends_cut_an_epoch_as_the_trainer_does():
    """Every B-th sample and the last one end a batch (the last batch may be shorter)."""
    np.testing.assert_array_equal(np.flatnonzero(batch_ends(10, 4)), [3, 7, 9])
    np.testing.assert_array_equal(np.flatnonzero(batch_ends(8, 4)), [3, 7])
    assert batch_ends(5, 1).all()


def test_reference_with_current_weights_is_the_device_order_minibatch():
    """The CPGD reference with batches whose forward passes all read the current weights
    is the device-order mini-batch reference (G accumulated, the mean applied at each
    batch's end, the last batch shorter), bit for bit."""
    model = make_model((12, 7, 5, 4), [ws.nn.ReLU, ws.nn.Tanh])
    X, Y = data(14, 12, 4, seed=2)
    ref = CpgdReference(params_of(model), names_of(model), SHAPES, LR, batch_size=4)
    losses = ref.train_sgd(X, Y)
    mb = DeviceOrderMLP(params_of(model), names_of(model), SHAPES)
    _, want = mb.fit(X, Y, LR, algo="minibatch", batch_size=4)
    assert same_params(ref.params(), list(zip(mb.W, mb.b)))
    np.testing.assert_array_equal(losses, want)


def test_batch_size_one_is_todays_cpgd_bit_for_bit():
    """batch_size=1 (the default under algo='cpgd') is CPGD with in-place updates:
    the same weights, loss, emulated cycles and staleness as without the option, and the
    staleness counts single updates (samples)."""
    model = make_model((12, 7, 5, 4), [ws.nn.ReLU, ws.nn.Tanh])
    X, Y = data(20, 12, 4, seed=1)
    tr_0, h_0 = run(model, X, Y, window=3, cpgd=True, slots=3)
    tr_1, h_1 = run(model, X, Y, batch_size=1, window=3, cpgd=True, slots=3)
    assert tr_0.batch_size == 1
    assert same_params(tr_0.weights(), tr_1.weights())
    assert h_0.loss == h_1.loss and h_0.cycles == h_1.cycles
    s0, s1 = tr_0.stats().staleness(), tr_1.stats().staleness()
    assert all(np.array_equal(a["histogram"], b["histogram"]) for a, b in zip(s0, s1))
    assert s1[0]["batch_size"] == 1 and s1[0]["max"] >= 1


@pytest.mark.parametrize("B,n", [(4, 18), (3, 12), (5, 5)])
def test_window_one_is_the_pipelined_minibatch_bit_for_bit(B, n):
    """One sample in flight per PE: the next batch's first sample reaches a PE only after
    the PE's update of the previous batch, so CPGD with mini-batches is the mini-batch
    algorithm: the same weights, biases and epoch loss as algo='minibatch' on a plain
    plan and as the device-order numpy mini-batch, bit for bit (last batch shorter when B
    does not divide n); every staleness is 0."""
    model = make_model((12, 7, 5, 4), [ws.nn.ReLU, ws.nn.Sigmoid])
    X, Y = data(n, 12, 4, seed=3)
    tr_c, h_c = run(model, X, Y, batch_size=B, window=1, cpgd=True, slots=3)
    tr_m, h_m = run(model, X, Y, algo="minibatch", batch_size=B)
    mb = DeviceOrderMLP(params_of(model), names_of(model), SHAPES)
    _, want = mb.fit(X, Y, LR, algo="minibatch", batch_size=B)
    assert same_params(tr_c.weights(), tr_m.weights())
    assert same_params(tr_c.weights(), list(zip(mb.W, mb.b)))
    assert h_c.loss == h_m.loss and h_c.loss[0] == pytest.approx(float(np.mean(want)), abs=0)
    for s in tr_c.stats().staleness():
        assert s["max"] == 0 and s["batch_size"] == B


@pytest.mark.parametrize("sizes,shapes,B,window,loss", [
    ((12, 7, 5, 4), [(3, 2), (2, 2), (2, 1)], 2, 3, "mse"),
    ((12, 7, 5, 4), [(3, 2), (2, 2), (2, 1)], 4, 5, "mse"),
    ((16, 8, 4), [(2, 2), (2, 2)], 3, 4, "mse"),
    ((12, 7, 4), [(3, 2), (2, 2)], 3, 3, "cross_entropy"),
])
def test_replayed_order_with_batches_equals_the_wafer_bit_for_bit_0636(sizes, shapes, B,
                                                                        window, loss):
    """Samples of two batches in flight [0636]: the reference that accumulates each
    sample's gradient, applies the batch's mean after its last sample, and whose forward
    passes read, element by element, what each PE held when its f_act read it (the order
    log: one entry per update task), ends with the wafer's weights and biases bit for
    bit in fp32 and the same epoch loss. The run overlapped batches (some forward passes
    one batch update behind, counted on the PEs), never two ([0636]), and ended elsewhere
    than the mini-batch that drains at each batch end."""
    acts = [ws.nn.ReLU, ws.nn.Tanh][:len(sizes) - 2]
    model = make_model(sizes, acts)
    X, Y = data(22, sizes[0], sizes[-1], seed=4)
    lkw = {}
    if loss == "cross_entropy":
        Y = np.eye(sizes[-1], dtype=np.float32)[np.argmax(Y, axis=1)]
        lkw = {"loss": ws.nn.CrossEntropyLoss()}
    slots = max(window, 2)
    tr, hist = run(model, X, Y, batch_size=B, window=window, blocks=shapes, cpgd=True,
                   slots=slots, order_log=400, **lkw)
    log = read_order_log(tr.plan)
    assert not log["full"]
    ref = CpgdReference(params_of(model), names_of(model), shapes, LR, batch_size=B,
                        loss=loss)
    losses = replay_order_log(ref, X, Y, tr.plan.layers, log)
    assert same_params(tr.weights(), ref.params())
    assert hist.loss[0] == pytest.approx(float(losses.mean()), abs=0)
    st = tr.stats().staleness()
    assert max(s["max"] for s in st) == 1            # overlapped, at most one boundary
    assert all(s["histogram"][2:].sum() == 0 and s["batch_size"] == B for s in st)
    tr_m, _ = run(model, X, Y, algo="minibatch", batch_size=B, blocks=shapes, slots=slots,
                  **lkw)
    assert not same_params(tr.weights(), tr_m.weights())


@pytest.mark.parametrize("dp_weights,opt,ref_kw", [
    ("forward", None, {}),
    ("current", lambda: ws.optim.SGD(lr=LR, momentum=0.9), {"momentum": 0.9}),
])
def test_replayed_order_with_batches_forward_weights_and_momentum(dp_weights, opt, ref_kw):
    """The same replay with the delta pass on the weights of the sample's own forward pass
    ([0634], a snapshot per slot) and with SGD momentum (the optimizer's rule on the
    batch's mean in each PE's update task)."""
    model = make_model((12, 7, 5, 4), [ws.nn.ReLU, ws.nn.Tanh])
    X, Y = data(20, 12, 4, seed=6)
    tr, hist = run(model, X, Y, batch_size=3, window=4, cpgd=True, slots=4, order_log=400,
                   dp_weights=dp_weights, opt=None if opt is None else opt())
    ref = CpgdReference(params_of(model), names_of(model), SHAPES, LR, batch_size=3,
                        dp_weights=dp_weights, **ref_kw)
    losses = replay_order_log(ref, X, Y, tr.plan.layers, read_order_log(tr.plan))
    assert same_params(tr.weights(), ref.params())
    assert hist.loss[0] == pytest.approx(float(losses.mean()), abs=0)
    assert max(s["max"] for s in tr.stats().staleness()) == 1


def test_staleness_stays_within_one_batch_and_no_drain_saves_cycles_0636():
    """On a deeper pipeline, counted on the PEs: window 1 never behind; the largest
    window B + 1 puts forward passes one batch update behind, more often in the first
    layer than in the last [0648], and never two [0636]; not draining the pipeline at
    each batch end takes fewer emulated cycles than the mini-batch algorithm with the
    same batches (which holds the next batch until the update)."""
    model = make_model((16, 12, 8, 4))
    X, Y = data(32, 16, 4, seed=3)
    shapes = [(3, 3), (3, 2), (2, 2)]
    means, cycles = {}, {}
    for window in (1, 5):
        tr, h = run(model, X, Y, batch_size=4, window=window, blocks=shapes, cpgd=True,
                    slots=6)
        st = tr.stats().staleness()
        assert all(s["max"] <= 1 and s["histogram"][2:].sum() == 0 for s in st)
        means[window] = [s["mean"] for s in st]
        cycles[window] = h.cycles[0]
    assert max(means[1]) == 0
    assert means[5][0] > 0 and means[5][0] >= means[5][-1]
    _, h_m = run(model, X, Y, algo="minibatch", batch_size=4, blocks=shapes, slots=6)
    assert cycles[5] < h_m.cycles[0] < cycles[1]


def test_bad_batch_and_window_combinations_are_refused_before_any_cycle():
    """A window above B + 1 could let a sample of batch b + 2 read weights from before
    batch b's update (two boundaries, against [0636]); a reverse checkpoint's stream-end
    mark is the mark that ends a batch: both refused, naming the values and the limit,
    before any cycle runs."""
    model = make_model((12, 7, 4))
    shapes = [(3, 2), (2, 2)]
    plan = ws.map(model.copy(), blocks=shapes, cpgd=True, slots=4)
    cycles = plan.wafer.cycle
    with pytest.raises(ws.ConfigError, match=r"window=4 with batch_size=2.*one batch update "
                                             r"behind \(\[0636\]\).*batch_size \+ 1 = 3"):
        ws.Trainer(plan, algo="cpgd", batch_size=2, window=4)
    with pytest.raises(ws.ConfigError, match=r"window=4 with batch_size=2"):
        ws.Trainer(plan, algo="cpgd", batch_size=2)       # the default window: slots
    with pytest.raises(ws.ConfigError, match=r"batch_size must be"):
        ws.Trainer(plan, algo="cpgd", batch_size=0)
    assert plan.wafer.cycle == cycles
    assert ws.Trainer(plan, algo="cpgd", batch_size=3).window == 4
    rcp = ws.map(make_model((12, 7, 5, 4)), blocks=SHAPES, cpgd=True, slots=3, checkpoint=[0])
    with pytest.raises(ws.ConfigError, match=r"batch_size=2.*reverse checkpoint") as e:
        ws.Trainer(rcp, algo="cpgd", batch_size=2, window=2)
    assert e.value.category == "unsupported"
    ws.Trainer(rcp, algo="cpgd", window=2)                # batch_size 1 stays allowed


def test_deterministic_for_any_thread_count_and_fp16_window_one_is_the_minibatch():
    """The interleaving emerges from the fabric, which the simulator steps
    deterministically: 1 and 2 threads give bit-identical weights and staleness. In fp16,
    window 1 is the mini-batch algorithm bit for bit: with rounding to nearest against
    the pipelined mini-batch; with stochastic rounding against the mini-batch with one
    slot (each PE draws its random numbers in the order of its operations, and only one
    sample at a time per PE gives the same order)."""
    model, X, Y, shapes = same_with_one_and_two_threads(batch_size=4, window=4)
    for numerics, mb_slots in (("fp16", 2), ("fp16-sr", 1)):
        out = []
        for algo, kw in (("cpgd", {"cpgd": True, "slots": 2}), ("minibatch", {"slots": mb_slots})):
            plan = ws.map(model.copy(), blocks=shapes, dtype="fp16", **kw)
            tr = ws.Trainer(plan, algo=algo, lr=LR, numerics=numerics, batch_size=4,
                            progress=False, window=1 if algo == "cpgd" else None)
            tr.fit(X, Y, epochs=1, shuffle=False)
            out.append(tr.weights())
        assert same_params(out[0], out[1]), numerics


def test_command_line_trains_cpgd_with_mini_batches():
    """`wafersim train --algo cpgd --batch-size 4 --window 3` runs CPGD with mini-batches
    and reports the staleness in batches."""
    import argparse

    from wafersim.train.cli_train import add_arguments, report, train_digits

    ap = argparse.ArgumentParser()
    add_arguments(ap)
    args = ap.parse_args(["--algo", "cpgd", "--batch-size", "4", "--window", "3",
                          "--samples", "48", "--epochs", "1", "--no-progress"])
    r = train_digits(args)
    assert r["trainer"].batch_size == 4 and r["trainer"].window == 3
    lines = []
    report(r, out=lines.append)
    assert any("CPGD staleness" in line and "batches behind" in line for line in lines)


def test_example_runs_cpgd_with_mini_batches(tmp_path):
    """examples/train_cpgd.py --algos minibatch,cpgd-mb prints a row for each, the
    CPGD one with its staleness per layer."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "examples" / "train_cpgd.py"
    out = subprocess.run([sys.executable, str(script), "--algos", "minibatch,cpgd-mb",
                          "--batch", "4", "--samples", "60", "--epochs", "1", "--nets",
                          "64-16-10"], cwd=tmp_path, env=dict(os.environ, MPLBACKEND="Agg"),
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    rows = [line.split() for line in out.stdout.splitlines() if "cpgd-mb" in line]
    assert len(rows) == 1
    assert all(0 <= float(v) <= 1 for v in rows[0][-2:])   # 2 layers' staleness, in batches
