"""LeakyReLU and GELU (tanh form) lowered onto the finalizers: bit for bit against the
device-order reference, close to float64 numpy and to torch; each added as its own
files (nn/ and mapping/lowering/) plus a registration."""

import numpy as np
import pytest

import wafersim as ws
from wafersim.reference.training import DeviceOrderMLP, train_numpy

pytestmark = pytest.mark.nosanitize  # whole training runs

SHAPES = [(3, 2), (2, 2), (2, 1)]
KINDS = {"leaky0.1": lambda: ws.nn.LeakyReLU(0.1), "leaky-0.3": lambda: ws.nn.LeakyReLU(-0.3),
         "leaky2.5": lambda: ws.nn.LeakyReLU(2.5), "gelu": lambda: ws.nn.GELU()}


def data(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 12)).astype(np.float32)
    X[X < 0] = 0
    return X, rng.uniform(-1, 1, (n, 4)).astype(np.float32)


def model(act, out_act=None):
    layers = [ws.nn.Linear(12, 7, seed=1), act(), ws.nn.Linear(7, 5, seed=2), act(),
              ws.nn.Linear(5, 4, seed=3)]
    return ws.nn.Sequential(*layers + ([out_act()] if out_act else []))


def run(m, algo, batch, X, Y, dtype="fp32"):
    dense = m.dense_layers()
    init = [(d.linear.weight.copy(), d.linear.bias.copy()) for d in dense]
    acts = [d.act_module or d.activation for d in dense]
    tr = ws.Trainer(ws.map(m, blocks=SHAPES, dtype=dtype), algo=algo, batch_size=batch,
                    progress=False)
    tr.fit(X, Y, shuffle=False)
    return tr, init, acts


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("algo,batch", [("sgd", 1), ("minibatch", 8)])
def test_bit_identical_to_device_order_reference(kind, algo, batch):
    """Forward a = f(z) and f' in the delta pass, in the instruction order of the lowering
    (a negative slope keeps z per slot: a > 0 no longer tells z > 0)."""
    X, Y = data(60)
    tr, init, acts = run(model(KINDS[kind]), algo, batch, X, Y)
    ref = DeviceOrderMLP(init, acts, SHAPES)
    _, losses = ref.fit(X, Y, 0.05, algo, batch)
    for (W, b), (Wr, br) in zip(tr.weights(), ref.params()):
        assert np.array_equal(W, Wr) and np.array_equal(b, br)


@pytest.mark.parametrize("kind", ["leaky0.1", "gelu"])
def test_at_the_output_layer_the_delta_rule_uses_its_derivative(kind):
    """MSE's delta (a - y) 2/n f'(a) [0645] with the new f' at the output finalizers."""
    X, Y = data(40)
    tr, init, acts = run(model(KINDS[kind], KINDS[kind]), "sgd", 1, X, Y)
    ref = DeviceOrderMLP(init, acts, SHAPES)
    ref.fit(X, Y, 0.05)
    for (W, b), (Wr, br) in zip(tr.weights(), ref.params()):
        assert np.array_equal(W, Wr) and np.array_equal(b, br)


@pytest.mark.parametrize("kind", KINDS)
def test_close_to_float64_and_torch(kind):
    torch = pytest.importorskip("torch", reason="torch is an optional extra (pip install 'wafersim[torch]')")
    X, Y = data(60)
    m = model(KINDS[kind])
    net = m.to_torch()                      # before training: the same initial weights
    tr, init, acts = run(m, "minibatch", 4, X, Y)
    want = train_numpy(init, acts, X, Y, 0.05, "minibatch", 4)
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    for s in range(0, len(X), 4):
        opt.zero_grad()
        torch.nn.functional.mse_loss(net(torch.from_numpy(X[s:s + 4])),
                                     torch.from_numpy(Y[s:s + 4])).backward()
        opt.step()
    got_t = ws.nn.from_torch(net).dense_layers()
    for (W, b), (Wn, bn), d in zip(tr.weights(), want, got_t):
        scale = np.abs(Wn).max()
        assert np.abs(W - Wn).max() <= 1e-5 * scale and np.abs(b - bn).max() <= 1e-5 * scale
        assert np.abs(W - d.linear.weight).max() <= 1e-5 * scale


def test_fp16_plans_train():
    """fp16 (four elements per cycle [0502]): training lowers the loss."""
    X, Y = data(60)
    for kind in ("leaky0.1", "gelu"):
        m = model(KINDS[kind])
        tr = ws.Trainer(ws.map(m, blocks=SHAPES, dtype="fp16"), lr=0.05, progress=False)
        h = tr.fit(X, Y, epochs=3, shuffle=False)
        assert h.loss[-1] < h.loss[0]


def test_torch_round_trip_keeps_parameters():
    torch = pytest.importorskip("torch", reason="torch is an optional extra (pip install 'wafersim[torch]')")
    net = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.LeakyReLU(0.2),
                              torch.nn.Linear(3, 2), torch.nn.GELU(approximate="tanh"))
    m = ws.nn.from_torch(net)
    assert isinstance(m[1], ws.nn.LeakyReLU) and m[1].negative_slope == pytest.approx(0.2)
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    np.testing.assert_allclose(m(x), net(torch.from_numpy(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    back = m.to_torch()
    assert type(back[3]).__name__ == "GELU" and back[3].approximate == "tanh"


def test_exact_gelu_and_bad_slopes_are_refused():
    torch = pytest.importorskip("torch", reason="torch is an optional extra (pip install 'wafersim[torch]')")
    net = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.GELU())
    with pytest.raises(ws.ConfigError, match=r"model\[1\] is GELU\(approximate='none'\)"):
        ws.nn.from_torch(net)
    with pytest.raises(ws.ConfigError, match="approximate='tanh'"):
        ws.nn.GELU(approximate="none")
    for bad in (float("nan"), "0.1", None, True):
        with pytest.raises(ws.ConfigError, match="negative_slope must be a finite number"):
            ws.nn.LeakyReLU(bad)
