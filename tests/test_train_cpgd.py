"""CPGD, continuous propagation gradient descent (seed 000 FIG. 27C, [0624]-[0649]; seed
001 claims 3-4): samples enter while earlier ones are still in their backward passes,
every PE updates its weights in place as each delta arrives, and the next forward pass
reads whatever weights are stored then. Checked against the numpy reference in
wafersim.reference.cpgd: window 1 is SGD bit for bit; replaying the order the PEs logged
gives the wafer's weights bit for bit in fp32; the discrete time-step schedule shows the
staleness pattern of [0648], and so do the counts the PEs keep."""

import numpy as np
import pytest

import wafersim as ws
from wafersim.reference.cpgd import CpgdReference, replay_order_log, time_step_schedule
from wafersim.reference.training import DeviceOrderMLP
from wafersim.train.cpgd_stats import read_order_log

pytestmark = pytest.mark.nosanitize  # whole training runs

LR = 0.05


def make_model(sizes, acts=None, seed=4):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(ws.nn.Linear(sizes[i], sizes[i + 1], seed=seed * 10 + i))
        if i < len(sizes) - 2:
            layers.append((acts[i] if acts else ws.nn.ReLU)())
    return ws.nn.Sequential(*layers)


def data(n, n_in, n_out, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, n_in)).astype(np.float32)
    X[X < -0.4] = 0                       # some zero inputs: never sent [0408]
    return X, rng.uniform(-1, 1, (n, n_out)).astype(np.float32)


def params_of(model):
    return [(d.linear.weight.copy(), d.linear.bias.copy()) for d in model.dense_layers()]


def names_of(model):
    return [d.activation for d in model.dense_layers()]


def same_params(a, b):
    return all(np.array_equal(Wa, Wb) and np.array_equal(ba, bb) for (Wa, ba), (Wb, bb) in zip(a, b))


def fit(model, X, Y, blocks, algo="cpgd", window=None, **map_args):
    plan = ws.map(model.copy(), blocks=blocks, **map_args)
    tr = ws.Trainer(plan, algo=algo, lr=LR, window=window, progress=False)
    hist = tr.fit(X, Y, epochs=1, shuffle=False)
    return tr, hist


# ---- the reference alone ------------------------------------------------------------------
@pytest.mark.parametrize("layers,want", [(2, [2, 0]), (3, [4, 2, 0])])
def test_time_step_schedule_staleness_pattern_0648(layers, want):
    """Digest 5.6 with a full pipeline (window 2L: a sample spends 2L steps in flight):
    one sample enters per step, layer l's forward pass of sample s reads the weights
    after the updates of samples <= s - 2(L - l) + 1 (worked by hand: layer 0 of two runs
    the forward pass of s at step s and the update of s' at s' + 3, so it has s - 2 of
    them), so earlier layers are staler by j = 2 per layer: W_{1,t-k-j} against W_{2,t-k}
    in [0648]."""
    n = 12
    sch = time_step_schedule(n, layers, window=2 * layers)
    np.testing.assert_array_equal(sch["enter"], np.arange(n))
    steady = sch["staleness"][:, 2 * layers:]
    for l in range(layers):
        assert np.all(steady[l] == want[l]), (l, steady[l])
    # the first samples find fewer updates to be behind
    assert sch["staleness"][0, 0] == 0 and sch["staleness"][0, 1] == 1


def test_time_step_schedule_window_limits_samples_in_flight():
    """A window below 2L makes samples wait (not one per step); window 1 is SGD: a
    sample enters when the previous one has left, and no forward pass is behind."""
    sch = time_step_schedule(8, 3, window=1)
    np.testing.assert_array_equal(sch["enter"], 6 * np.arange(8))
    assert np.all(sch["staleness"] == 0)
    sch = time_step_schedule(8, 2, window=2)
    np.testing.assert_array_equal(sch["enter"][:4], [0, 1, 4, 5])
    assert sch["staleness"].max() <= 1


def test_reference_window_one_equals_sgd_bit_for_bit():
    """The reference with the window-1 schedule equals the device-order SGD reference bit
    for bit in fp32 (weights, biases and losses)."""
    model = make_model((12, 7, 5, 4), [ws.nn.ReLU, ws.nn.Sigmoid])
    X, Y = data(15, 12, 4)
    shapes = [(3, 2), (2, 2), (2, 1)]
    ref = CpgdReference(params_of(model), names_of(model), shapes, LR)
    sch = time_step_schedule(len(X), 3, window=1)
    losses = ref.train_versions(X, Y, sch["version"])
    sgd = DeviceOrderMLP(params_of(model), names_of(model), shapes)
    want = []
    for x, y in zip(X, Y):
        acts = sgd.forward(x)
        want.append(sgd.backward(acts, y, mode="sgd", lr=LR)[1])
    assert same_params(ref.params(), list(zip(sgd.W, sgd.b)))
    np.testing.assert_array_equal(losses, want)
    # a stale schedule changes the result (the test above could not pass by accident)
    ref2 = CpgdReference(params_of(model), names_of(model), shapes, LR)
    ref2.train_versions(X, Y, time_step_schedule(len(X), 3, window=6)["version"])
    assert not same_params(ref2.params(), ref.params())


# ---- on the wafer ------------------------------------------------------------------------
def test_window_one_equals_sgd_on_the_wafer_bit_for_bit_0646():
    """algo='cpgd' with window 1 is SGD [0622], [0646]: the weights, biases and epoch loss
    of a CPGD plan equal those of SGD on a plain plan and the device-order reference, bit
    for bit; every staleness the PEs counted is 0."""
    model = make_model((12, 7, 5, 4), [ws.nn.ReLU, ws.nn.Sigmoid])
    X, Y = data(20, 12, 4)
    shapes = [(3, 2), (2, 2), (2, 1)]
    tr_c, h_c = fit(model, X, Y, shapes, window=1, cpgd=True, slots=3)
    tr_s, h_s = fit(model, X, Y, shapes, algo="sgd")
    ref = CpgdReference(params_of(model), names_of(model), shapes, LR)
    losses = ref.train_sgd(X, Y)
    assert same_params(tr_c.weights(), tr_s.weights())
    assert same_params(tr_c.weights(), ref.params())
    assert h_c.loss == h_s.loss and h_c.loss[0] == pytest.approx(float(losses.mean()), abs=0)
    for s in tr_c.stats().staleness():
        assert s["max"] == 0 and s["updates"] == len(X) * tr_c.plan.layers[s["layer"]].rows \
            * tr_c.plan.layers[s["layer"]].cols


@pytest.mark.parametrize("sizes,shapes,window,loss", [
    ((12, 7, 5, 4), [(3, 2), (2, 2), (2, 1)], 3, "mse"),
    ((16, 8, 4), [(2, 2), (2, 2)], 4, "mse"),
    ((12, 7, 4), [(3, 2), (2, 2)], 4, "cross_entropy"),
])
def test_replayed_order_equals_the_wafer_bit_for_bit_fp32(sizes, shapes, window, loss):
    """With several samples in flight, the reference that reads, element by element, the
    weights each PE held when its f_act task read them (the PEs' order log: per column
    update, how many rows had been read before) ends with the wafer's weights and biases,
    bit for bit in fp32, and the same epoch loss. The run really was stale (the PEs
    counted updates between forward passes and their own updates) and differs from SGD."""
    acts = [ws.nn.ReLU, ws.nn.Tanh][:len(sizes) - 2]
    model = make_model(sizes, acts)
    X, Y = data(24, sizes[0], sizes[-1], seed=1)
    kw = {"loss": ws.nn.CrossEntropyLoss()} if loss == "cross_entropy" else {}
    if loss == "cross_entropy":
        Y = np.eye(sizes[-1], dtype=np.float32)[np.argmax(Y, axis=1)]
    tr, hist = fit(model, X, Y, shapes, window=window, cpgd=True, slots=window, order_log=400,
                   **kw)
    log = read_order_log(tr.plan)
    assert not log["full"]
    ref = CpgdReference(params_of(model), names_of(model), shapes, LR, loss=loss)
    losses = replay_order_log(ref, X, Y, tr.plan.layers, log)
    assert same_params(tr.weights(), ref.params())
    assert hist.loss[0] == pytest.approx(float(losses.mean()), abs=0)
    st = tr.stats().staleness()
    assert st[0]["max"] >= 1
    sgd = CpgdReference(params_of(model), names_of(model), shapes, LR, loss=loss)
    sgd.train_sgd(X, Y)
    assert not same_params(tr.weights(), sgd.params())


def test_replayed_order_with_smeared_layers_equals_the_wafer():
    """CPGD on a plan whose layers are smeared in unequal portions ([0488]-[0490]): the
    replay takes the plan's input and output groups, and equals the wafer bit for bit."""
    model = make_model((12, 7, 4))
    X, Y = data(24, 12, 4, seed=2)
    tr, hist = fit(model, X, Y, None, window=3, cpgd=True, slots=3, order_log=400,
                   smear={0: [0.25, 0.25, 0.5], 1: [0.5, 0.25, 0.25]})
    groups = [([n for _, n in b.in_groups], [n for _, n in b.out_groups])
              for b in tr.plan.layers]
    assert groups[0][0] == [3, 3, 6] and groups[1][0] == [3, 2, 2]
    ref = CpgdReference(params_of(model), names_of(model), groups, LR)
    losses = replay_order_log(ref, X, Y, tr.plan.layers, read_order_log(tr.plan))
    assert same_params(tr.weights(), ref.params())
    assert hist.loss[0] == pytest.approx(float(losses.mean()), abs=0)
    assert tr.stats().staleness()[0]["max"] >= 1


@pytest.mark.parametrize("sizes,shapes", [((16, 8, 4), [(2, 2), (2, 2)]),
                                          ((16, 12, 8, 4), [(3, 3), (3, 2), (2, 2)])])
def test_wafer_staleness_pattern_0648(sizes, shapes):
    """The staleness the PEs count (updates at a PE between a sample's forward pass and
    its own update there) follows [0648] on 2- and 3-layer networks: earlier layers read
    staler weights (W_{1,t-k-j} against W_{2,t-k}), the output layer is least stale,
    nothing is more than window - 1 updates behind, every PE counts every sample, and
    the first layer's mean staleness grows with the window."""
    model = make_model(sizes)
    X, Y = data(30, sizes[0], sizes[-1], seed=2)
    means = {}
    for window in (2, 2 * len(shapes)):
        tr, _ = fit(model, X, Y, shapes, window=window, cpgd=True, slots=2 * len(shapes))
        st = tr.stats().staleness()
        for s, b in zip(st, tr.plan.layers):
            assert s["updates"] == len(X) * b.rows * b.cols
            assert s["max"] <= window - 1
        m = [s["mean"] for s in st]
        assert all(a >= b for a, b in zip(m, m[1:])), m
        assert m[0] > m[-1]
        means[window] = m
    assert means[2 * len(shapes)][0] > means[2][0]


def test_cpgd_pipelines_faster_than_sgd():
    """With samples in flight the layers work on different samples at once (FIG. 27C):
    fewer emulated cycles per epoch than SGD's one sample at a time."""
    model = make_model((16, 12, 8, 4))
    X, Y = data(30, 16, 4, seed=3)
    shapes = [(3, 3), (3, 2), (2, 2)]
    _, h_s = fit(model, X, Y, shapes, algo="sgd")
    _, h_c = fit(model, X, Y, shapes, window=6, cpgd=True, slots=6)
    assert h_c.cycles[0] < 0.8 * h_s.cycles[0]


# ---- bad input ----------------------------------------------------------------------------
def test_bad_cpgd_options_are_refused_before_any_cycle():
    model = make_model((12, 7, 4))
    shapes = [(3, 2), (2, 2)]
    plain = ws.map(model.copy(), blocks=shapes)
    with pytest.raises(ws.ConfigError, match=r"cpgd=True"):
        ws.Trainer(plain, algo="cpgd")
    plan = ws.map(model.copy(), blocks=shapes, cpgd=True, slots=3)
    cycles = plan.wafer.cycle
    for bad in (0, 4, True, 2.0):
        with pytest.raises(ws.ConfigError, match=r"window must be an integer 1\.\.3.*slots=3"):
            ws.Trainer(plan, algo="cpgd", window=bad)
    with pytest.raises(ws.ConfigError, match=r"needs algo='cpgd'"):
        ws.Trainer(plan, algo="sgd", window=2)
    with pytest.raises(ws.ConfigError, match=r"mapped with dp_weights='current'.*\[0634\]"):
        ws.Trainer(plan, algo="cpgd", dp_weights="forward")
    with pytest.raises(ws.ConfigError, match=r"dp_weights must be one of"):
        ws.Trainer(plan, algo="cpgd", dp_weights="old")
    assert plan.wafer.cycle == cycles
    assert ws.Trainer(plan, algo="cpgd").window == 3       # default: the plan's slots
    with pytest.raises(ws.ConfigError, match=r"order_log.*needs cpgd=True"):
        ws.map(model.copy(), blocks=shapes, order_log=10)
    with pytest.raises(ws.ConfigError, match=r"order_log must be an integer 0\.\.4096"):
        ws.map(model.copy(), blocks=shapes, cpgd=True, order_log=-1)
    with pytest.raises(ws.ConfigError, match=r"cpgd must be True or False"):
        ws.map(model.copy(), blocks=shapes, cpgd=1)
    res = ws.nn.Sequential(ws.nn.Linear(8, 6), ws.nn.ReLU(),
                           ws.nn.Residual(ws.nn.Linear(6, 6)), ws.nn.Linear(6, 3))
    with pytest.raises(ws.ConfigError, match=r"Residual or TwoBranch"):
        ws.map(res, cpgd=True)


def test_window_that_does_not_fit_pe_memory_names_layer_and_limit():
    """Each sample in flight needs an activation slot per stored input row on every PE:
    a window (slots) too large for a layer's blocks is refused at ws.map, naming the layer,
    the bytes and the limit, and how many slots would fit."""
    model = make_model((64, 64, 10))
    with pytest.raises(ws.ConfigError, match=r"layer 0 \(Linear\(64, 64\)\) does not fit.*"
                                             r"a PE has 32768 \(cpgd=True with slots=64: CPGD's "
                                             r"window.*about \d+ fit this layer\)"):
        ws.map(model, blocks=[(2, 1), (1, 1)], cpgd=True, slots=64)


def same_with_one_and_two_threads(**trainer_args):
    """CPGD of a 16-8-4 network on 2 x 2 blocks with 1 and then 2 threads: asserts the
    weights and staleness histograms are bit-identical; returns (model, X, Y, shapes)."""
    model = make_model((16, 8, 4))
    X, Y = data(20, 16, 4, seed=5)
    shapes = [(2, 2), (2, 2)]
    runs = []
    for threads in (1, 2):
        plan = ws.map(model.copy(), blocks=shapes, cpgd=True, slots=4)
        plan.wafer.threads = threads
        tr = ws.Trainer(plan, algo="cpgd", lr=LR, progress=False, **trainer_args)
        tr.fit(X, Y, epochs=1, shuffle=False)
        runs.append((tr.weights(), [s["histogram"] for s in tr.stats().staleness()]))
    assert same_params(runs[0][0], runs[1][0])
    assert all(np.array_equal(a, b) for a, b in zip(runs[0][1], runs[1][1]))
    return model, X, Y, shapes


def test_cpgd_is_deterministic_for_any_thread_count_and_fp16_window_one_is_sgd():
    """The order of forward reads and updates emerges from the fabric, which the
    simulator steps deterministically: 1 and 2 threads give bit-identical weights and
    staleness. In fp16 (stochastic rounding) window 1 is SGD bit for bit as well."""
    model, X, Y, shapes = same_with_one_and_two_threads()
    out = []
    for algo, kw in (("cpgd", {"cpgd": True, "slots": 2}), ("sgd", {})):
        plan = ws.map(model.copy(), blocks=shapes, dtype="fp16", **kw)
        tr = ws.Trainer(plan, algo=algo, lr=LR, numerics="fp16-sr", progress=False,
                        window=1 if algo == "cpgd" else None)
        tr.fit(X, Y, epochs=1, shuffle=False)
        out.append(tr.weights())
    assert same_params(out[0], out[1])


def test_command_line_trains_with_cpgd():
    """`wafersim train --algo cpgd --window 2` maps with cpgd=True and reports the
    staleness per layer."""
    import argparse

    from wafersim.train.cli_train import add_arguments, report, train_digits

    ap = argparse.ArgumentParser()
    add_arguments(ap)
    args = ap.parse_args(["--algo", "cpgd", "--window", "2", "--samples", "60", "--epochs", "1",
                          "--no-progress"])
    r = train_digits(args)
    assert r["plan"].cpgd and r["trainer"].window == 2
    lines = []
    report(r, out=lines.append)
    assert any("CPGD staleness" in line for line in lines)
