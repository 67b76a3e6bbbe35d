"""Adam on the wafer (``ws.optim.Adam``, torch.optim.Adam's update rule; m and v per
parameter in PE memory, bias corrections kept on the PE, sqrt and division by the CE math
library), against the device-order reference bit for bit, textbook float64 Adam and
torch.optim.Adam."""

import numpy as np
import pytest

import wafersim as ws
from wafersim.mapping.block_shapes import pe_data_bytes
from wafersim.reference.training import DeviceOrderMLP, train_numpy
from train_models import SHAPES, data, make_model, params_of

pytestmark = pytest.mark.nosanitize  # whole training runs

OPTIONS = [dict(), dict(betas=(0.8, 0.99), eps=1e-6, weight_decay=0.01)]


def train(opt, algo, batch, n=100, lr=0.01, X=None, Y=None):
    model = make_model()
    init = params_of(model)
    if X is None:
        X, Y = data(n)
    plan = ws.map(model, blocks=SHAPES, optimizer=ws.optim.Adam(lr=lr, **opt))
    tr = ws.Trainer(plan, algo=algo, batch_size=batch, progress=False)
    tr.fit(X, Y, shuffle=False)
    return tr, init, X, Y


def acts_of(tr):
    return [d.activation for d in tr.plan.model.dense_layers()]


@pytest.mark.parametrize("opt", OPTIONS, ids=["defaults", "betas-eps-wd"])
@pytest.mark.parametrize("algo,batch", [("sgd", 1), ("minibatch", 8)])
def test_bit_identical_to_device_order_reference(opt, algo, batch):
    """100 samples: every weight and bias equals the reference that applies Adam in the
    mapping's order (mapping/lowering/adam.py) with one rounding per instruction and the
    math library's bit-exact rsqrt and reciprocal."""
    tr, init, X, Y = train(opt, algo, batch)
    ref = DeviceOrderMLP(init, acts_of(tr), SHAPES, adam=opt)
    ref.fit(X, Y, 0.01, algo, batch)
    for (W, b), (Wr, br) in zip(tr.weights(), ref.params()):
        assert np.array_equal(W, Wr) and np.array_equal(b, br)


def _torch_adam(torch, init, X, Y, batch, steps, lr, opt):
    net = torch.nn.Sequential(torch.nn.Linear(12, 7), torch.nn.ReLU(), torch.nn.Linear(7, 5),
                              torch.nn.Sigmoid(), torch.nn.Linear(5, 4))
    with torch.no_grad():
        for m, (W, b) in zip([net[0], net[2], net[4]], init):
            m.weight.copy_(torch.from_numpy(W))
            m.bias.copy_(torch.from_numpy(b))
    topt = torch.optim.Adam(net.parameters(), lr=lr, **opt)
    for s in range(steps):
        topt.zero_grad()
        torch.nn.functional.mse_loss(net(torch.from_numpy(X[s * batch:(s + 1) * batch])),
                                     torch.from_numpy(Y[s * batch:(s + 1) * batch])).backward()
        topt.step()
    return [(m.weight.detach().numpy(), m.bias.detach().numpy()) for m in (net[0], net[2], net[4])]


@pytest.mark.parametrize("opt", OPTIONS, ids=["defaults", "betas-eps-wd"])
@pytest.mark.parametrize("steps,tol", [(1, 1e-5), (10, 1e-4)])
@pytest.mark.parametrize("algo,batch", [("sgd", 1), ("minibatch", 8)])
def test_close_to_float64_numpy_and_torch(opt, steps, tol, algo, batch):
    """One update within 1e-5 of the largest weight of each layer, ten within 1e-4, of
    textbook float64 Adam and of torch.optim.Adam from the same weights and batches."""
    torch = pytest.importorskip("torch", reason="torch is an optional extra (pip install 'wafersim[torch]')")
    X, Y = data(steps * batch)
    tr, init, X, Y = train(opt, algo, batch, X=X, Y=Y)
    want = train_numpy(init, acts_of(tr), X, Y, 0.01, algo, batch, adam=opt)
    got_torch = _torch_adam(torch, init, X, Y, batch, steps, 0.01, opt)
    for (W, b), (Wn, bn), (Wt, bt) in zip(tr.weights(), want, got_torch):
        scale = np.abs(Wn).max()
        for x, xn, xt in ((W, Wn, Wt), (b, bn, bt)):
            assert np.abs(x - xn).max() <= tol * scale and np.abs(x - xt).max() <= tol * scale


def test_inputs_that_are_always_zero_leave_their_weights_and_v_at_zero():
    """A blank pixel: its weights get no gradient, so v stays 0; sqrt(v) must be 0 there,
    not 0 * rsqrt(0) = 0 * inf = NaN (mapping/lowering/adam.py takes rsqrt(max(v, 2^-126)))."""
    X, Y = data(24, seed=3)
    X[:, :2] = 0
    tr, init, *_ = train({}, "minibatch", 4, X=X, Y=Y)
    (W, b), *rest = tr.weights()
    assert all(np.isfinite(x).all() for Wl, bl in tr.weights() for x in (Wl, bl))
    assert np.array_equal(W[:, :2], init[0][0][:, :2])
    assert not np.array_equal(W[:, 2:], init[0][0][:, 2:])
    rows = tr.plan.layers[0]
    v = tr.plan.wafer.memcpy_d2h("adam_v", rect=rows.at(0, 0)).ravel()
    spec = tr.plan.specs[rows.at(0, 0)]          # inputs 0..3, a row of nout per input
    assert np.all(v[:2 * spec.nout] == 0) and np.all(v[2 * spec.nout:] >= 0)


def test_bias_corrections_and_step_count_are_kept_on_every_pe():
    """The host writes only constants (a whole epoch is queued at once): each PE counts its
    updates and keeps bc1 = 1 - beta1^t, bc2 = 1 - beta2^t itself."""
    tr, *_ = train(dict(betas=(0.8, 0.99)), "minibatch", 8, n=60)     # 8 updates
    t = 8
    for p in tr.plan.pes():
        read = lambda name: float(tr.plan.wafer.memcpy_d2h(name, rect=p).ravel()[0])  # noqa: E731
        assert read("adam_step") == t
        assert abs(read("adam_bc1") - (1 - 0.8 ** t)) <= 1e-6
        assert abs(read("adam_bc2") - (1 - 0.99 ** t)) <= 1e-6 * (1 - 0.99 ** t) * 10


def test_a_new_trainer_starts_adam_from_zero_state():
    """As a new torch optimizer: m, v, the step count and the bias corrections start at 0
    with every Trainer; the second one trains on from the plan's weights and equals a
    reference started there."""
    tr, init, X, Y = train({}, "minibatch", 4, n=20)
    mid = tr.weights()
    tr2 = ws.Trainer(tr.plan, algo="minibatch", batch_size=4, progress=False)
    w = tr.plan.wafer
    for name in ("adam_m", "adam_v", "adam_step", "adam_bc1", "adam_bc2"):
        assert not np.any(w.memcpy_d2h(name, rect=(0, 0)))
    assert not np.any(w.memcpy_d2h("adam_mb", rect=tr.plan.layers[0].finalizer(0)))
    tr2.fit(X, Y, shuffle=False)
    ref = DeviceOrderMLP([(W.copy(), b.copy()) for W, b in mid], acts_of(tr), SHAPES, adam={})
    ref.fit(X, Y, 0.01, "minibatch", 4)
    for (W, b), (Wr, br) in zip(tr2.weights(), ref.params()):
        assert np.array_equal(W, Wr) and np.array_equal(b, br)


def test_one_pass_at_a_time_applies_adam_in_chain():
    """forward(), delta() accumulate; chain() runs the update task: one Adam step."""
    X, Y = data(1, seed=5)
    model = make_model()
    init = params_of(model)
    tr = ws.Trainer(ws.map(model, blocks=SHAPES, optimizer=ws.optim.Adam(lr=0.01)),
                    progress=False)
    tr.forward(X[0])
    tr.delta(Y[0])
    tr.chain()
    ref = DeviceOrderMLP(init, acts_of(tr), SHAPES, adam={})
    ref.fit(X, Y, 0.01)
    for (W, b), (Wr, br) in zip(tr.weights(), ref.params()):
        assert np.array_equal(W, Wr) and np.array_equal(b, br)


def test_adam_state_in_memory_statistics_and_block_choice():
    """m, v, a scratch vector and the math library's scratch per parameter: each PE's data
    grows by what the lowering declares (extra_bytes, which the automatic block choice
    uses), and never by more."""
    plain = ws.map(make_model(), blocks=SHAPES)
    adam = ws.map(make_model(), blocks=SHAPES, optimizer=ws.optim.Adam())
    lowering = adam.optimizer_lowering
    for p, s in adam.specs.items():
        b = adam.block_of(p)[0]
        extra = lowering.extra_bytes(s.nin, s.nout, 4, s.slots, s.final)
        n = s.nin * s.nout + (s.nout if s.final else 0)
        used = adam.memory()[p]["data_bytes"]
        assert used <= pe_data_bytes(s.nin, s.nout, 4, s.slots, s.final, b.index == 0, 0, extra)
        grow = used - plain.memory()[p]["data_bytes"]
        assert 62 * n <= grow <= extra, (p, grow, extra)   # 3 x 4 + 24 + 26 bytes per parameter
    assert {"adam_m", "adam_v", "adam_bc1"} <= adam.programs[(0, 0)].exports


def test_a_layer_that_does_not_fit_is_refused_and_the_automatic_choice_avoids_it():
    def model():
        return ws.nn.Sequential(ws.nn.Linear(256, 128, seed=1), ws.nn.ReLU(),
                                ws.nn.Linear(128, 10, seed=2))

    sgd_blocks = [(b.rows, b.cols) for b in ws.map(model()).layers]
    with pytest.raises(ws.ConfigError, match=r"layer 0 \(Linear\(256, 128\)\) does not fit: .* "
                                             r"a PE has 32768"):
        ws.map(model(), blocks=sgd_blocks, optimizer=ws.optim.Adam())
    plan = ws.map(model(), optimizer=ws.optim.Adam())
    assert max(m["data_bytes"] for m in plan.memory().values()) <= 32768


def test_fp16_plans_are_refused():
    with pytest.raises(ws.ConfigError, match="Adam is lowered for fp32 plans only"):
        ws.map(make_model(), blocks=SHAPES, dtype="fp16", optimizer=ws.optim.Adam())


@pytest.mark.parametrize("kwargs,match", [
    (dict(lr=0), r"lr must be a number in \(0.0, inf\)"),
    (dict(lr=float("inf")), "lr must be a number"),
    (dict(betas=(1.0, 0.999)), r"betas\[0\] must be a number in \[0.0, 1.0\)"),
    (dict(betas=(0.9, -0.1)), r"betas\[1\] must be a number in \[0.0, 1.0\)"),
    (dict(betas=0.9), r"betas must be a pair"),
    (dict(eps=0), r"eps must be a number in \(0.0, inf\)"),
    (dict(eps=1e-39), r"eps = 1e-39 is below 2\^-126"),
    (dict(weight_decay=-1e-4), r"weight_decay must be a number in \[0.0, inf\)"),
    (dict(amsgrad=True), "amsgrad=True is not mapped"),
    (dict(maximize=True), "maximize=True is not mapped"),
    (dict(decoupled_weight_decay=True), "decoupled_weight_decay=True is not mapped"),
    (dict(fused=True), "fused=True is not mapped"),
    (dict(capturable=True), "capturable=True is not mapped"),
])
def test_bad_adam_arguments(kwargs, match):
    with pytest.raises(ws.ConfigError, match=match):
        ws.optim.Adam(**kwargs)


def test_torch_implementation_switches_at_their_defaults_are_accepted():
    assert ws.optim.Adam(foreach=False, fused=None, capturable=False).betas == (0.9, 0.999)


def test_a_torch_optimizer_is_refused_by_map():
    torch = pytest.importorskip("torch", reason="torch is an optional extra (pip install 'wafersim[torch]')")
    opt = torch.optim.Adam(torch.nn.Linear(2, 2).parameters())
    with pytest.raises(ws.ConfigError, match=r"ws.optim optimizer \(SGD, Adam\)"):
        ws.map(make_model(), blocks=SHAPES, optimizer=opt)


@pytest.mark.slow
def test_digits_with_adam_within_a_point_of_torch():
    """Digits 64-32-10, blocks chosen automatically (4x4, 4x2: Adam fits PE memory), three
    epochs of mini-batches of 8 at lr = 0.01: at least 95% on the test set, within a point
    of torch.optim.Adam from the same weights in the same order."""
    torch = pytest.importorskip("torch", reason="torch is an optional extra (pip install 'wafersim[torch]')")
    from wafersim.train.datasets import digits

    epochs, lr, batch, seed = 3, 0.01, 8, 0
    Xtr, ytr, Xte, yte = digits()
    ws.nn.manual_seed(seed)
    model = ws.nn.Sequential(ws.nn.Linear(64, 32), ws.nn.ReLU(), ws.nn.Linear(32, 10))
    start = params_of(model)
    plan = ws.map(model, optimizer=ws.optim.Adam(lr=lr))
    assert [(b.rows, b.cols) for b in plan.layers] == [(4, 4), (4, 2)]
    tr = ws.Trainer(plan, algo="minibatch", batch_size=batch, seed=seed, progress=False)
    tr.fit(Xtr, ytr, epochs=epochs)
    acc = tr.evaluate(Xte, yte)["accuracy"]
    rng = np.random.default_rng(seed)            # the Trainer's shuffling, epoch by epoch
    net = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10))
    with torch.no_grad():
        for lin, (W, b) in zip((net[0], net[2]), start):
            lin.weight.copy_(torch.from_numpy(W))
            lin.bias.copy_(torch.from_numpy(b))
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    X, Y = torch.from_numpy(Xtr), torch.from_numpy(np.eye(10, dtype=np.float32)[ytr])
    for _ in range(epochs):
        order = rng.permutation(len(Xtr))
        for s in range(0, len(order), batch):
            k = order[s:s + batch]
            opt.zero_grad()
            torch.nn.functional.mse_loss(net(X[k]), Y[k]).backward()
            opt.step()
    with torch.no_grad():
        acc_torch = float((net(torch.from_numpy(Xte)).argmax(1).numpy() == yte).mean())
    assert acc >= 0.95 and abs(acc - acc_torch) <= 0.01
