"""ws.nn: layers, initialization like PyTorch's defaults, Sequential, torch interop."""

import numpy as np
import pytest

import wafersim as ws


def test_linear_init_matches_pytorch_default_bounds():
    """torch.nn.Linear: kaiming_uniform(a=sqrt(5)) on the weight and U(-1/sqrt(in),
    1/sqrt(in)) on the bias, i.e. both uniform on +-1/sqrt(in_features)."""
    lin = ws.nn.Linear(400, 300, seed=1)
    bound = 1 / np.sqrt(400)
    assert lin.weight.shape == (300, 400) and lin.weight.dtype == np.float32
    assert lin.bias.shape == (300,)
    assert np.abs(lin.weight).max() <= bound
    assert np.abs(lin.weight).max() > 0.99 * bound         # the whole range is used
    # uniform: mean 0, variance bound^2 / 3
    assert abs(lin.weight.mean()) < 0.02 * bound
    assert lin.weight.var() == pytest.approx(bound ** 2 / 3, rel=0.02)


def test_linear_init_distribution_like_torch():
    torch = pytest.importorskip("torch", reason="torch is an optional extra")
    torch.manual_seed(0)
    t = torch.nn.Linear(256, 128)
    ours = ws.nn.Linear(256, 128, seed=0)
    tw = t.weight.detach().numpy()
    assert np.abs(tw).max() == pytest.approx(np.abs(ours.weight).max(), rel=0.01)
    assert tw.std() == pytest.approx(ours.weight.std(), rel=0.03)


def test_initialization_is_seeded():
    a, b = ws.nn.Linear(5, 3, seed=7), ws.nn.Linear(5, 3, seed=7)
    assert np.array_equal(a.weight, b.weight) and np.array_equal(a.bias, b.bias)
    ws.nn.manual_seed(11)
    c = ws.nn.Linear(5, 3)
    ws.nn.manual_seed(11)
    d = ws.nn.Linear(5, 3)
    assert np.array_equal(c.weight, d.weight)
    assert not np.array_equal(a.weight, c.weight)


def test_bias_false_has_no_bias():
    lin = ws.nn.Linear(4, 2, bias=False, seed=0)
    assert lin.bias is None
    y = lin(np.ones(4))
    np.testing.assert_allclose(y, lin.weight.sum(axis=1), rtol=1e-6)


def test_activations_forward():
    x = np.array([-2.0, -0.5, 0.0, 0.5, 2.0], dtype=np.float32)
    np.testing.assert_array_equal(ws.nn.ReLU()(x), [0, 0, 0, 0.5, 2])
    np.testing.assert_allclose(ws.nn.Sigmoid()(x), 1 / (1 + np.exp(-x.astype(np.float64))), rtol=1e-6)
    np.testing.assert_allclose(ws.nn.Tanh()(x), np.tanh(x), rtol=1e-6)
    np.testing.assert_array_equal(ws.nn.Identity()(x), x)


def test_sequential_dense_layers_fuse_linear_and_activation():
    m = ws.nn.Sequential(ws.nn.Linear(6, 5), ws.nn.Tanh(), ws.nn.Linear(5, 4), ws.nn.Linear(4, 2),
                         ws.nn.Sigmoid())
    dense = m.dense_layers()
    assert [(d.n_in, d.n_out, d.activation) for d in dense] == [
        (6, 5, "tanh"), (5, 4, "identity"), (4, 2, "sigmoid")]


@pytest.mark.parametrize("layers,match", [
    ((ws.nn.ReLU(), ws.nn.Linear(3, 2)), "first layer"),
    ((ws.nn.Linear(3, 2), ws.nn.ReLU(), ws.nn.ReLU()), "right after another"),
    ((ws.nn.Linear(3, 2), ws.nn.Linear(4, 2)), "takes 4 inputs"),
    ((), "no Linear"),
])
def test_sequential_rejects_what_cannot_be_mapped(layers, match):
    with pytest.raises(ws.ConfigError, match=match):
        ws.nn.Sequential(*layers).dense_layers()


def test_sequential_rejects_foreign_layers():
    with pytest.raises(ws.ConfigError, match="supported layers"):
        ws.nn.Sequential(ws.nn.Linear(3, 2), "relu")


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "8"])
def test_linear_sizes_must_be_positive_integers(bad):
    with pytest.raises(ws.ConfigError, match="in_features"):
        ws.nn.Linear(bad, 2)


def test_set_parameters_checks_shape_and_values():
    lin = ws.nn.Linear(3, 2, seed=0)
    with pytest.raises(ws.ConfigError, match="shape"):
        lin.set_parameters(np.zeros((3, 2)), np.zeros(2))
    with pytest.raises(ws.ConfigError, match="NaN"):
        lin.set_parameters(np.full((2, 3), np.nan), np.zeros(2))


def test_torch_round_trip():
    torch = pytest.importorskip("torch", reason="torch is an optional extra")
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(8, 6), torch.nn.ReLU(), torch.nn.Linear(6, 3),
                              torch.nn.Sigmoid())
    m = ws.nn.from_torch(net)
    x = np.random.default_rng(0).standard_normal((5, 8)).astype(np.float32)
    with torch.no_grad():
        want = net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(m(x), want, rtol=1e-5, atol=1e-6)
    back = m.to_torch()
    with torch.no_grad():
        np.testing.assert_array_equal(back(torch.from_numpy(x)).numpy(), want)


def test_from_torch_rejects_unsupported_layers():
    torch = pytest.importorskip("torch", reason="torch is an optional extra")
    net = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.1))
    with pytest.raises(ws.ConfigError, match="Dropout"):
        ws.nn.from_torch(net)


def test_map_accepts_a_torch_model():
    torch = pytest.importorskip("torch", reason="torch is an optional extra")
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(6, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    plan = ws.map(net, blocks=[(2, 2), (2, 1)])
    W, b = plan.read_weights()[0]
    np.testing.assert_array_equal(W, net[0].weight.detach().numpy())


def test_mse_loss_value():
    loss = ws.nn.MSELoss()
    assert loss([1.0, 2.0], [0.0, 0.0]) == pytest.approx(2.5)
    with pytest.raises(ws.ConfigError, match="reduction"):
        ws.nn.MSELoss(reduction="sum")
