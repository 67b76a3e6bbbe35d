"""CrossEntropyLoss on the wafer: softmax over a column of head PEs east of the output
layer (the maximum and the sum reduced over the fabric, exp / reciprocal / ln from the CE
math library), delta = p - y back to the output layer's finalizers. Against the
device-order reference bit for bit, float64 numpy and torch."""

import numpy as np
import pytest

import wafersim as ws
from wafersim.reference.training import DeviceOrderMLP, train_numpy

pytestmark = pytest.mark.nosanitize  # whole training runs

CE = ws.nn.CrossEntropyLoss


def data(n, classes=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 12)).astype(np.float32)
    X[X < 0] = 0
    return X, rng.integers(0, classes, n)


def model(classes=5):
    return ws.nn.Sequential(ws.nn.Linear(12, 7, seed=1), ws.nn.ReLU(),
                            ws.nn.Linear(7, classes, seed=2))


def init_of(m):
    return [(d.linear.weight.copy(), d.linear.bias.copy()) for d in m.dense_layers()]


@pytest.mark.parametrize("shapes", [[(3, 2), (2, 1)], [(3, 2), (2, 2)], [(4, 3), (3, 3)]],
                         ids=["1head", "2heads", "3heads"])
@pytest.mark.parametrize("algo,batch", [("sgd", 1), ("minibatch", 8)])
def test_bit_identical_to_device_order_reference(shapes, algo, batch):
    """40 samples: weights, biases and the losses the heads computed equal the reference
    that repeats the heads' order of operations (reductions head by head, the math
    library's bits)."""
    X, y = data(40)
    m = model()
    init = init_of(m)
    tr = ws.Trainer(ws.map(m, blocks=shapes, loss=CE()), algo=algo, batch_size=batch, lr=0.1,
                    progress=False)
    h = tr.fit(X, y, shuffle=False)
    ref = DeviceOrderMLP(init, ["relu", "identity"], shapes, loss="cross_entropy")
    _, losses = ref.fit(X, np.eye(5, dtype=np.float32)[y], 0.1, algo, batch)
    for (W, b), (Wr, br) in zip(tr.weights(), ref.params()):
        assert np.array_equal(W, Wr) and np.array_equal(b, br)
    assert h.loss[0] == pytest.approx(losses.mean(), rel=1e-12)


def test_one_sample_softmax_and_loss_against_float64():
    """One pass at a time: the logits come back, the heads' maximum M and sum S (reduced
    over the head column) and each output's delta p - y equal float64 softmax to fp32
    precision; the loss the heads send is -log p[y]."""
    X, y = data(1)
    m = model()
    plan = ws.map(m, blocks=[(4, 3), (3, 3)], loss=CE())
    tr = ws.Trainer(plan, lr=0.1, progress=False)
    z = tr.forward(X[0]).astype(np.float64)
    np.testing.assert_allclose(z, m(X)[0], rtol=1e-6, atol=1e-6)
    deltas = tr.delta(int(y[0]))
    p = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    np.testing.assert_allclose(deltas[-1], p - np.eye(5)[y[0]], rtol=1e-6, atol=1e-7)
    for head in plan.heads:
        assert plan.wafer.memcpy_d2h("hm", rect=head).ravel()[0] == np.float32(z.max())
        assert plan.wafer.memcpy_d2h("hs", rect=head).ravel()[0] == pytest.approx(
            np.exp(z - z.max()).sum(), rel=1e-6)
    tr.chain()


def test_close_to_float64_numpy_and_torch():
    torch = pytest.importorskip("torch", reason="torch is an optional extra (pip install 'wafersim[torch]')")
    X, y = data(60)
    m = model()
    init = init_of(m)
    net = m.to_torch()
    tr = ws.Trainer(ws.map(m, blocks=[(3, 2), (2, 2)], loss=CE(),
                           optimizer=ws.optim.SGD(lr=0.1, momentum=0.9)),
                    algo="minibatch", batch_size=4, progress=False)
    tr.fit(X, y, shuffle=False)
    want = train_numpy(init, ["relu", "identity"], X, np.eye(5)[y], 0.1, "minibatch", 4,
                       momentum=0.9, loss="cross_entropy")
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    for s in range(0, len(X), 4):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(net(torch.from_numpy(X[s:s + 4])),
                                          torch.from_numpy(y[s:s + 4])).backward()
        opt.step()
    got_t = ws.nn.from_torch(net).dense_layers()
    for (W, b), (Wn, bn), d in zip(tr.weights(), want, got_t):
        scale = np.abs(Wn).max()
        assert np.abs(W - Wn).max() <= 1e-5 * scale and np.abs(b - bn).max() <= 1e-5 * scale
        assert np.abs(W - d.linear.weight).max() <= 1e-5 * scale


def test_predict_gives_logits_and_evaluate_the_cross_entropy():
    X, y = data(20)
    m = model()
    tr = ws.Trainer(ws.map(m, blocks=[(3, 2), (2, 2)], loss=CE()), progress=False)
    out = tr.predict(X)
    np.testing.assert_allclose(out, m(X), rtol=1e-5, atol=1e-6)
    ev = tr.evaluate(X, y)
    assert ev["loss"] == pytest.approx(CE()(out, y), rel=1e-9)


def test_fp16_plan_trains():
    X, y = data(60)
    tr = ws.Trainer(ws.map(model(), blocks=[(3, 2), (2, 2)], loss=CE(), dtype="fp16"),
                    lr=0.1, progress=False)
    h = tr.fit(X, y, epochs=3, shuffle=False)
    assert h.loss[-1] < h.loss[0]


def test_soft_targets_are_probabilities():
    """Target vectors (probabilities) work as torch's class-probability targets do:
    delta = p - y."""
    X, _ = data(1)
    tr = ws.Trainer(ws.map(model(), blocks=[(3, 2), (2, 2)], loss=CE()), progress=False)
    z = tr.forward(X[0]).astype(np.float64)
    target = np.array([0.1, 0.2, 0.3, 0.4, 0.0], np.float32)
    deltas = tr.delta(target)
    p = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    np.testing.assert_allclose(deltas[-1], p - target, rtol=1e-6, atol=1e-7)


def test_the_head_column_sits_east_of_the_output_layer():
    plan = ws.map(model(), blocks=[(3, 2), (2, 2)], loss=CE())
    assert plan.heads == [(0, 4), (1, 4)]
    assert plan.wafer.cols == 5
    assert {"Y", "O", "R0", "R1", "RB"} <= set(plan.colors)
    assert "softmax" in plan.describe()


@pytest.mark.parametrize("layers,match", [
    ([ws.nn.Linear(12, 5, seed=0), ws.nn.ReLU()], "end the model with a Linear layer"),
    ([ws.nn.Linear(12, 1, seed=0)], "at least 2 classes"),
])
def test_models_the_loss_does_not_suit_are_refused(layers, match):
    with pytest.raises(ws.ConfigError, match=match):
        ws.map(ws.nn.Sequential(*layers), loss=CE())


@pytest.mark.parametrize("y,match", [
    (np.array([0, 5, 1]), "label 5 is out of range"),
    (np.array([0.0, 1.5, 1.0]), "integer labels or targets of shape"),
    (np.array([-1, 0, 1]), "label -1 is out of range"),
])
def test_bad_labels(y, match):
    X, _ = data(3)
    tr = ws.Trainer(ws.map(model(), blocks=[(3, 2), (2, 2)], loss=CE()), progress=False)
    before = tr.plan.wafer.cycle
    with pytest.raises(ws.ConfigError, match=match):
        tr.fit(X, y)
    assert tr.plan.wafer.cycle == before


@pytest.mark.parametrize("kwargs,match", [
    (dict(reduction="sum"), "only reduction='mean'"), (dict(label_smoothing=0.1), "label_smoothing"),
    (dict(weight=[1.0, 2.0]), "class weights"), (dict(ignore_index=3), "ignore_index=3"),
])
def test_unmapped_options(kwargs, match):
    with pytest.raises(ws.ConfigError, match=match):
        CE(**kwargs)


@pytest.mark.slow
def test_digits_96_percent_within_a_point_of_torch():
    """Digits 64-32-10 with CrossEntropyLoss and SGD (momentum 0.5): at least 96% test
    accuracy on the wafer, within one point of torch trained from the same weights in the
    same order."""
    torch = pytest.importorskip("torch", reason="torch is an optional extra (pip install 'wafersim[torch]')")
    from wafersim.train.datasets import digits

    Xtr, ytr, Xte, yte = digits()
    ws.nn.manual_seed(0)
    m = ws.nn.Sequential(ws.nn.Linear(64, 32), ws.nn.ReLU(), ws.nn.Linear(32, 10))
    net = m.to_torch()
    tr = ws.Trainer(ws.map(m, loss=CE(), optimizer=ws.optim.SGD(lr=0.02, momentum=0.5)),
                    progress=False, seed=0)
    tr.fit(Xtr, ytr, epochs=6)
    acc = tr.evaluate(Xte, yte)["accuracy"]
    rng = np.random.default_rng(0)
    opt = torch.optim.SGD(net.parameters(), lr=0.02, momentum=0.5)
    for _ in range(6):
        for i in rng.permutation(len(Xtr)):
            opt.zero_grad()
            torch.nn.functional.cross_entropy(net(torch.from_numpy(Xtr[i:i + 1])),
                                              torch.from_numpy(ytr[i:i + 1])).backward()
            opt.step()
    tacc = float((net(torch.from_numpy(Xte)).argmax(1).numpy() == yte).mean())
    assert acc >= 0.96 and abs(acc - tacc) <= 0.01, (acc, tacc)
