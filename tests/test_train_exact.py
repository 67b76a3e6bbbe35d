"""Training on the wafer against independent references: the device-order numpy model
(bit for bit in fp32), plain numpy gradient descent and torch.optim.SGD (to 1e-5)."""

import numpy as np
import pytest

import wafersim as ws
from wafersim.mapping import task_ids as T
from wafersim.reference.fp_exact import fma as fma_fraction
from wafersim.reference.training import DeviceOrderMLP, fma32, mlp_forward, train_numpy

pytestmark = pytest.mark.nosanitize  # whole training runs: minutes under AddressSanitizer

SIZES = (12, 9, 7, 4)
SHAPES = [(4, 3), (3, 2), (2, 2)]


def make_model(seed=3, acts=("relu", "relu"), sizes=SIZES):
    A = {"relu": ws.nn.ReLU, "sigmoid": ws.nn.Sigmoid, "tanh": ws.nn.Tanh}
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(ws.nn.Linear(sizes[i], sizes[i + 1], seed=seed * 10 + i))
        if i < len(sizes) - 2:
            layers.append(A[acts[i]]())
    return ws.nn.Sequential(*layers)


def data(n, n_in=SIZES[0], n_out=SIZES[-1], seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, n_in)).astype(np.float32)
    X[X < 0] = 0                             # sparse inputs, as images are
    Y = rng.uniform(-1, 1, (n, n_out)).astype(np.float32)
    return X, Y


def reference(model, shapes):
    dense = model.dense_layers()
    return DeviceOrderMLP([(d.linear.weight, d.linear.bias) for d in dense],
                          [d.activation for d in dense], shapes)


def test_fma32_reference_is_one_rounding():
    """The reference's vectorized fused multiply-add equals exact rational arithmetic,
    including sums that land exactly halfway between two floats."""
    rng = np.random.default_rng(1)
    a, b, c = (rng.standard_normal(3000).astype(np.float32) for _ in range(3))
    c[::3] = -(a[::3] * b[::3]).astype(np.float32)          # cancellation
    a[1::7] = np.float32(1 + 2 ** -12)
    b[1::7] = np.float32(1 + 2 ** -12)
    c[1::7] = np.float32(0)                                 # product needs 25 bits: a tie
    r = fma32(a, b, c)
    for i in range(0, 3000, 5):
        assert r[i] == fma_fraction(c[i], a[i], b[i], "fp32"), i


def test_forward_outputs_bit_identical_to_device_order_reference():
    """FP outputs of a 3-layer net equal the numpy model that sums in the mapping's order
    ([0402], [0408]: per-PE accumulation in arrival order, then the column chain)."""
    model = make_model()
    X, _ = data(10)
    plan = ws.map(model, blocks=SHAPES)
    tr = ws.Trainer(plan, progress=False)
    out = tr.predict(X)
    ref = reference(model, SHAPES)
    want = np.array([ref.forward(x)[-1] for x in X])
    assert np.array_equal(out, want)
    np.testing.assert_allclose(out, mlp_forward(ref.params(), ref.act, X), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("algo,batch", [("sgd", 1), ("minibatch", 8)])
def test_100_samples_bit_identical_weights(algo, batch):
    """After 100 samples of SGD [0617], [0622] and of mini-batch 8 [0618], [0623] every
    weight and bias equals the device-order reference bit for bit, and so do the losses
    the wafer computed."""
    model = make_model()
    X, Y = data(100)
    plan = ws.map(model.copy(), blocks=SHAPES)
    tr = ws.Trainer(plan, algo=algo, lr=0.05, batch_size=batch, progress=False)
    hist = tr.fit(X, Y, epochs=1, shuffle=False)
    ref = reference(model, SHAPES)
    _, losses = ref.fit(X, Y, 0.05, algo, batch)
    for (W, b), (Wr, br) in zip(tr.weights(), ref.params()):
        assert np.array_equal(W, Wr)
        assert np.array_equal(b, br)
    assert hist.loss[0] == pytest.approx(losses.mean(), rel=1e-12)


@pytest.mark.parametrize("act", ["sigmoid", "tanh"])
def test_sigmoid_and_tanh_layers_bit_identical(act):
    """The activation instructions [0493] and their derivatives (a(1-a), 1-a^2) in the
    delta pass."""
    model = make_model(acts=(act, act))
    X, Y = data(30)
    plan = ws.map(model.copy(), blocks=SHAPES)
    tr = ws.Trainer(plan, algo="sgd", lr=0.05, progress=False)
    tr.fit(X, Y, shuffle=False)
    ref = reference(model, SHAPES)
    ref.fit(X, Y, 0.05)
    for (W, b), (Wr, br) in zip(tr.weights(), ref.params()):
        assert np.array_equal(W, Wr) and np.array_equal(b, br)


@pytest.mark.parametrize("algo,batch", [("sgd", 1), ("minibatch", 8)])
def test_close_to_plain_numpy_gradient_descent(algo, batch):
    """The same training in textbook float64 order: within 1e-5 (relative to each layer's
    largest weight)."""
    model = make_model()
    X, Y = data(100)
    plan = ws.map(model.copy(), blocks=SHAPES)
    tr = ws.Trainer(plan, algo=algo, lr=0.05, batch_size=batch, progress=False)
    tr.fit(X, Y, shuffle=False)
    dense = model.dense_layers()
    want = train_numpy([(d.linear.weight, d.linear.bias) for d in dense],
                       [d.activation for d in dense], X, Y, 0.05, algo, batch)
    for (W, b), (Wr, br) in zip(tr.weights(), want):
        scale = np.abs(Wr).max()
        assert np.abs(W - Wr).max() <= 1e-5 * scale
        assert np.abs(b - br).max() <= 1e-5 * scale


@pytest.mark.parametrize("algo,batch", [("sgd", 1), ("minibatch", 8)])
def test_close_to_torch_sgd(algo, batch):
    torch = pytest.importorskip("torch", reason="torch is an optional extra (pip install 'wafersim[torch]')")
    model = make_model()
    X, Y = data(100)
    plan = ws.map(model.copy(), blocks=SHAPES)
    tr = ws.Trainer(plan, algo=algo, lr=0.05, batch_size=batch, progress=False)
    tr.fit(X, Y, shuffle=False)
    net = model.to_torch()
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    loss = torch.nn.MSELoss()
    for s in range(0, len(X), batch):
        opt.zero_grad()
        loss(net(torch.from_numpy(X[s:s + batch])), torch.from_numpy(Y[s:s + batch])).backward()
        opt.step()
    got = ws.nn.from_torch(net)
    for (W, b), d in zip(tr.weights(), got.dense_layers()):
        scale = np.abs(d.linear.weight).max()
        assert np.abs(W - d.linear.weight).max() <= 1e-5 * scale
        assert np.abs(b - d.linear.bias).max() <= 1e-5 * scale


def test_three_block_shapes_agree():
    """The result does not depend on the placement beyond summation order."""
    results = []
    for shapes in ([(4, 3), (3, 2), (2, 2)], [(1, 1), (1, 1), (1, 1)], [(12, 9), (9, 7), (7, 4)]):
        model = make_model()
        X, Y = data(40)
        plan = ws.map(model, blocks=shapes)
        tr = ws.Trainer(plan, algo="sgd", lr=0.05, progress=False)
        tr.fit(X, Y, shuffle=False)
        results.append(tr.weights())
    for other in results[1:]:
        for (W, b), (W0, b0) in zip(other, results[0]):
            np.testing.assert_allclose(W, W0, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(b, b0, rtol=1e-5, atol=1e-6)


def test_writing_one_weight_changes_the_output_as_predicted():
    """The math really happens in PE memory: change W[2][1, 3] of the output layer with
    memcpy_h2d into the one PE that holds it; the output changes exactly as the reference
    with that weight predicts."""
    model = make_model()
    X, _ = data(4)
    plan = ws.map(model, blocks=SHAPES)
    tr = ws.Trainer(plan, progress=False)
    before = tr.predict(X)
    b = plan.layers[2]
    j, i = 1, 3                                    # output 1, input 3 of the last layer
    r = next(k for k, (i0, n) in enumerate(b.in_groups) if i0 <= i < i0 + n)
    c = next(k for k, (o0, n) in enumerate(b.out_groups) if o0 <= j < o0 + n)
    spec = plan.specs[b.at(r, c)]
    blk = plan.wafer.memcpy_d2h("w", rect=b.at(r, c)).reshape(spec.nin, spec.nout + spec.slots)
    blk[i - spec.i0, j - spec.o0] = np.float32(0.75)
    plan.wafer.memcpy_h2d("w", blk.ravel(), rect=b.at(r, c))
    after = tr.predict(X)
    ref = reference(model, SHAPES)
    ref.W[2][j, i] = np.float32(0.75)
    want = np.array([ref.forward(x)[-1] for x in X])
    assert np.array_equal(after, want)
    assert not np.array_equal(after, before)


def test_activation_task_runs_equal_nonzero_inputs_of_the_row():
    """f_rxact runs once per nonzero activation a PE's row receives, on every PE of the
    row [0400], [0408], [0410]: zeros are never sent."""
    model = make_model()
    X, _ = data(20)
    plan = ws.map(model, blocks=SHAPES)
    tr = ws.Trainer(plan, progress=False)
    tr.predict(X)
    st = tr.stats()
    b = plan.layers[0]
    for r, (i0, n) in enumerate(b.in_groups):
        want = int((X[:, i0:i0 + n] != 0).sum())
        for c in range(b.cols):
            spec = plan.specs[b.at(r, c)]
            assert st.tasks(b.at(r, c), spec.a_in) == want
    assert st.skipped()[0]["activations_skipped"] == int((X == 0).sum())


def test_a_broken_route_fails_loudly():
    """Remove the deltas' route from one finalizer: training must end in an error naming
    where, not train silently."""
    model = make_model()
    X, Y = data(4)
    plan = ws.map(model, blocks=SHAPES)
    tr = ws.Trainer(plan, algo="sgd", lr=0.05, progress=False)
    fr, fc = plan.layers[1].finalizer(1)
    plan.wafer.router(fr, fc).set_route(plan.colors["D"], rx=[], tx=[])
    with pytest.raises((ws.RouteError, ws.DeadlockError)) as err:
        tr.fit(X, Y, shuffle=False)
    assert f"({fr}, {fc})" in str(err.value) or f"({fr + 1}, {fc})" in str(err.value)


def test_one_and_two_threads_give_identical_weights_and_cycles():
    out = []
    for threads in (1, 2):
        model = make_model()
        X, Y = data(30)
        w = ws.Wafer(4, 7, threads=threads)
        w.parallel_min_routers = 0          # run every phase in parallel
        plan = ws.map(model, w, blocks=SHAPES)
        tr = ws.Trainer(plan, algo="minibatch", batch_size=4, lr=0.05, progress=False)
        h = tr.fit(X, Y, shuffle=False)
        out.append((tr.weights(), h.cycles))
    (w1, c1), (w2, c2) = out
    assert c1 == c2
    for (W, b), (W2, b2) in zip(w1, w2):
        assert np.array_equal(W, W2) and np.array_equal(b, b2)


def test_debug_passes_equal_one_accumulated_step():
    """forward(x), delta(y), chain(): the passes one at a time; the deltas equal the
    reference's, and after chain() the weights equal one step of accumulate-then-apply."""
    model = make_model()
    X, Y = data(1)
    plan = ws.map(model, blocks=SHAPES)
    tr = ws.Trainer(plan, lr=0.05, progress=False)
    out = tr.forward(X[0])
    ref = reference(model, SHAPES)
    acts = ref.forward(X[0])
    assert np.array_equal(out, acts[-1])
    deltas = tr.delta(Y[0])
    want, _ = ref.backward(acts, Y[0], mode="acc")
    for d, dr in zip(deltas, want):
        assert np.array_equal(d, dr)
    tr.chain()
    ref.apply(-0.05)
    for (W, b), (Wr, br) in zip(tr.weights(), ref.params()):
        assert np.array_equal(W, Wr) and np.array_equal(b, br)
    assert set(tr.stats().pass_cycles) == {"forward", "delta", "chain"}


def test_closeouts_name_tasks_by_index_0371():
    """Every activation stream ends with a control wavelet whose index picks f_close on the
    receiving PEs [0371], [0411]; the output layer's closeouts reach the host."""
    model = make_model()
    X, _ = data(3)
    plan = ws.map(model, blocks=SHAPES)
    w = plan.wafer
    ws.Trainer(plan, progress=False)
    plan.write_word("v_mode", 0)
    from wafersim.train.streams import input_streams
    for (d, i, c), port in zip(input_streams(X, plan.layers[0].in_groups, "fp32"), plan.input_ports):
        w.inject(port, plan.colors["A0"], d, index=i, ctrl=c)
    w.run()
    got = w.collect()
    closes = got.index[got.ctrl] & 63
    assert len(closes) == 3 * plan.layers[-1].cols
    assert set(closes.tolist()) == {T.F_CLOSE}


def test_deep_network_with_default_slots_trains_bit_identical():
    """34 layers (the depth of the Hot Chips 32 network) with the default slots, 64 per PE:
    the slot descriptors and the slot table must not push the runtime words or `admit` out
    of the 10-bit immediates' and the branches' reach [0603]; a mini-batch of 32 fills most
    of the slots, and every parameter equals the device-order reference bit for bit."""
    sizes = (6,) + (4,) * 33 + (3,)
    model = make_model(seed=5, acts=("relu",) * 33, sizes=sizes)
    shapes = [(1, 1)] * 34
    X, Y = data(40, n_in=6, n_out=3)
    plan = ws.map(model.copy(), blocks=shapes)
    assert plan.slots == 64
    tr = ws.Trainer(plan, algo="minibatch", lr=0.05, batch_size=32, progress=False)
    tr.fit(X, Y, epochs=1, shuffle=False)
    ref = reference(model, shapes)
    ref.fit(X, Y, 0.05, "minibatch", 32)
    for (W, b), (Wr, br) in zip(tr.weights(), ref.params(), strict=True):
        assert np.array_equal(W, Wr) and np.array_equal(b, br)
