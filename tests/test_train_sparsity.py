"""Activation sparsity by threshold (seed 001, EC410/EC411: an activation is sent only when
its magnitude exceeds the threshold), against the device-order numpy reference that drops
the same values, and against today's exact zero skipping ([0400], [0408]) for t = 0."""

import math

import numpy as np
import pytest

import wafersim as ws
from wafersim.reference.training import DeviceOrderMLP

from train_models import mlp, sparse_inputs

pytestmark = pytest.mark.nosanitize  # whole training runs: minutes under AddressSanitizer

SIZES = (12, 9, 7, 4)
SHAPES = [(4, 3), (3, 2), (2, 2)]


def make_model(seed=3, act=ws.nn.ReLU):
    return mlp(SIZES, seed, act)


def data(n, seed=0):
    return sparse_inputs(n, SIZES[0], SIZES[-1], seed)


def reference(model, thresholds=None):
    dense = model.dense_layers()
    return DeviceOrderMLP([(d.linear.weight, d.linear.bias) for d in dense],
                          [d.activation for d in dense], SHAPES, thresholds=thresholds)


def train(model, X, Y, algo="sgd", batch=1, **map_args):
    plan = ws.map(model.copy(), blocks=SHAPES, **map_args)
    tr = ws.Trainer(plan, algo=algo, lr=0.05, batch_size=batch, progress=False)
    hist = tr.fit(X, Y, epochs=1, shuffle=False)
    return tr, hist


@pytest.mark.parametrize("algo,batch,dtype", [("sgd", 1, "fp32"), ("minibatch", 8, "fp32"),
                                               ("sgd", 1, "fp16")])
def test_threshold_zero_equals_no_threshold_bit_for_bit_ec411(algo, batch, dtype):
    """t = 0 sends exactly the nonzero activations (|a| > 0), as the program without a
    threshold does [0408]: weights, biases, losses and outputs are bit-identical, and the
    same activations are sent (fp32 and fp16 programs)."""
    model = make_model()
    X, Y = data(60)
    tr0, h0 = train(model, X, Y, algo, batch, dtype=dtype)
    tr1, h1 = train(model, X, Y, algo, batch, dtype=dtype, activation_threshold=0.0)
    fabs = "fabss" if dtype == "fp32" else "fabsh"
    assert fabs in tr1.plan.listing(0, (0, 0)) and fabs not in tr0.plan.listing(0, (0, 0))
    for (W, b), (W1, b1) in zip(tr0.weights(), tr1.weights(), strict=True):
        assert np.array_equal(W, W1) and np.array_equal(b, b1)
    assert h0.loss[0] == h1.loss[0]
    assert np.array_equal(tr0.predict(X), tr1.predict(X))
    s0 = [(s["layer"], s["pass"], s["sent"]) for s in tr0.stats().sparsity()]
    s1 = [(s["layer"], s["pass"], s["sent"]) for s in tr1.stats().sparsity()]
    assert s0 == s1


@pytest.mark.parametrize("algo,batch,act", [("sgd", 1, ws.nn.ReLU), ("minibatch", 8, ws.nn.ReLU),
                                            ("sgd", 1, ws.nn.Tanh)])
def test_positive_threshold_bit_identical_to_reference_that_drops_the_same_ec411(algo, batch, act):
    """With thresholds 0.05 and 0.12 on the two hidden layers, every weight, bias and the
    loss equal the device-order reference in fp32 bit for bit when it drops |a| <= t
    (the next layer sees 0, the sending layer's f' uses the value it kept), and differ from
    the reference without thresholds: the drop is real. Tanh: negative activations are
    dropped by their magnitude too."""
    model = make_model(act=act)
    X, Y = data(60)
    th = [0.05, 0.12]
    tr, hist = train(model, X, Y, algo, batch, activation_threshold=th)
    ref = reference(model, th + [None])
    _, losses = ref.fit(X, Y, 0.05, algo, batch)
    for (W, b), (Wr, br) in zip(tr.weights(), ref.params(), strict=True):
        assert np.array_equal(W, Wr) and np.array_equal(b, br)
    assert hist.loss[0] == pytest.approx(losses.mean(), rel=1e-12)
    plain = reference(model)
    plain.fit(X, Y, 0.05, algo, batch)
    assert any(not np.array_equal(W, Wp) for (W, _), (Wp, _) in zip(ref.params(), plain.params()))


def test_larger_thresholds_send_fewer_wavelets_counted_against_numpy_ec411():
    """Inference on 40 samples with t = 0, 0.1, 0.3 written into the runtime word between
    runs (``Plan.set_activation_threshold``, no recompilation): per hidden layer, the
    activations the next layer received equal the count of |a| > t over the reference's
    activations, fall as t grows, and the emulated cycles fall with them."""
    model = make_model()
    X, _ = data(40, seed=5)
    plan = ws.map(model, blocks=SHAPES, activation_threshold=0.0)
    sent_by_t, cycles = [], []
    for t in (0.0, 0.1, 0.3):
        plan.set_activation_threshold(t)
        tr = ws.Trainer(plan, progress=False)
        out = tr.predict(X)
        st = tr.stats()
        fwd = {s["layer"]: s for s in st.sparsity() if s["pass"] == "forward"}
        ref = reference(model, [t, t, None])
        kept = []                             # per sample: what layers 0 and 1 computed
        for x in X:
            ref.forward(x)
            kept.append([ref.kept[0], ref.kept[1]])
        sent = []
        for l in (1, 2):                      # the activations layers 0 and 1 send
            want = int(sum((np.abs(k[l - 1]) > np.float32(t)).sum() for k in kept))
            assert fwd[l]["sent"] == want
            assert fwd[l]["not_sent"] == len(X) * SIZES[l] - want
            assert fwd[l]["threshold"] == t
            sent.append(want)
        assert np.array_equal(out, np.array([ref.forward(x)[-1] for x in X]))
        sent_by_t.append(sent)
        cycles.append(st.cycles)
    for a, b in zip(sent_by_t, sent_by_t[1:]):
        assert all(y < x for x, y in zip(a, b))
    assert cycles[0] > cycles[1] > cycles[2]
    assert fwd[1]["cycles_saved"] > 0


def test_statistics_per_layer_and_pass_and_summary_ec411():
    """sparsity() lists, per layer, the forward (activations) and delta passes; the
    summary names the threshold."""
    model = make_model()
    X, Y = data(20)
    tr, _ = train(model, X, Y, activation_threshold={1: 0.1})
    st = tr.stats()
    rows = st.sparsity()
    assert [(s["layer"], s["pass"]) for s in rows] == [
        (l, p) for l in range(3) for p in ("forward", "delta")]
    assert [s["threshold"] for s in rows if s["pass"] == "forward"] == [None, None, 0.1]
    for s in rows:
        assert s["sent"] + s["not_sent"] == 20 * (SIZES[s["layer"]] if s["pass"] == "forward"
                                                  else SIZES[s["layer"] + 1])
    assert "|a| <= 0.1" in st.summary()
    assert tr.plan.activation_thresholds == [None, 0.1, None]


@pytest.mark.parametrize("value,words", [
    (-0.1, ["activation_threshold", "-0.1"]),
    (math.nan, ["activation_threshold", "nan"]),
    (math.inf, ["activation_threshold", "inf"]),
    ("0.1", ["activation_threshold", "'0.1'"]),
    (True, ["activation_threshold", "True"]),
    ([0.1], ["1 entries", "2 hidden layer"]),
    ([0.1, 0.2, 0.3], ["3 entries", "2 hidden layer"]),
    ([0.1, -1.0], ["activation_threshold[1]", "-1.0"]),
    ({2: 0.1}, ["layer 2", "0..1"]),
    ({0: math.nan}, ["activation_threshold[0]", "nan"]),
    (1e39, ["activation_threshold of layer 0", "1e+39"]),
    ({0: 7e4, 1: 0.1}, ["activation_threshold of layer 0", "70000", "fp16"]),
])
def test_bad_thresholds_raise_config_error_naming_layer_and_value(value, words):
    """A negative, NaN, infinite or non-numeric threshold, a list of the wrong length, a
    dict naming no hidden layer, or one the plan's format cannot hold: ConfigError before
    any cycle runs."""
    w = ws.Wafer(4, 7)
    dtype = "fp16" if isinstance(value, dict) and value.get(0) == 7e4 else "fp32"
    with pytest.raises(ws.ConfigError) as e:
        ws.map(make_model(), w, blocks=SHAPES, dtype=dtype, activation_threshold=value)
    for word in words:
        assert word in str(e.value)
    assert w.cycle == 0


def test_threshold_refused_where_it_cannot_apply():
    """Residual blocks are refused; a layer mapped without a threshold cannot take one
    later, nor can a layer mapped with one lose it."""
    res = ws.nn.Sequential(ws.nn.Linear(6, 4), ws.nn.ReLU(),
                           ws.nn.Residual(ws.nn.Sequential(ws.nn.Linear(4, 4), ws.nn.ReLU())),
                           ws.nn.Linear(4, 2))
    with pytest.raises(ws.ConfigError, match="Residual"):
        ws.map(res, activation_threshold=0.1)
    plan = ws.map(make_model(), blocks=SHAPES, activation_threshold={0: 0.1})
    with pytest.raises(ws.ConfigError, match="layer 1: the layer was mapped without"):
        plan.set_activation_threshold(0.2)
    with pytest.raises(ws.ConfigError, match="layer 0: the layer was mapped with one"):
        plan.set_activation_threshold(None)
