"""Weight sparsity (beyond the seeds): pruned weights stored compressed per PE (no memory,
no cycles), kept at zero through training, against the device-order numpy reference that
applies the same mask (reference/masked.py) bit for bit in fp32, and against the dense
mapping's memory and cycles."""

import numpy as np
import pytest

import wafersim as ws
from wafersim.reference.masked import MaskedDeviceOrderMLP

from train_models import mlp, sparse_inputs

pytestmark = pytest.mark.nosanitize  # whole training runs: minutes under AddressSanitizer

SIZES = (12, 9, 7, 4)
SHAPES = [(4, 3), (3, 2), (2, 2)]


def make_model(seed=3):
    return mlp(SIZES, seed)


def data(n, seed=0):
    return sparse_inputs(n, SIZES[0], SIZES[-1], seed)


def reference(model, masks, **kw):
    dense = model.dense_layers()
    return MaskedDeviceOrderMLP([(d.linear.weight, d.linear.bias) for d in dense],
                                [d.activation for d in dense], SHAPES, masks=masks, **kw)


def segment_mask(seed=1):
    """Masks constant on each PE column segment (output j, the inputs of one block row)."""
    rng = np.random.default_rng(seed)
    masks = {}
    for l, ((R, _), n_in, n_out) in enumerate(zip(SHAPES, SIZES[:-1], SIZES[1:])):
        m = np.zeros((n_out, n_in), dtype=bool)
        for i0, ni in [(g[0], len(g)) for g in np.array_split(np.arange(n_in), R)]:
            m[:, i0:i0 + ni] = rng.random((n_out, 1)) < 0.6
        masks[l] = m
    return masks


@pytest.mark.parametrize("algo,batch,opt", [
    ("sgd", 1, dict()),
    ("minibatch", 8, dict()),
    ("sgd", 1, dict(momentum=0.9)),
    ("minibatch", 8, dict(momentum=0.5, nesterov=True, weight_decay=0.01))])
def test_pruned_weights_stay_zero_and_equal_masked_reference_bit_for_bit(algo, batch, opt):
    """Magnitude pruning at 50% per layer: after an epoch of SGD or mini-batches (plain, or
    with momentum, Nesterov and weight decay: velocities kept per stored weight only), every
    pruned weight is exactly 0, and every weight, bias and the loss equal the device-order
    reference that applies the same mask, bit for bit in fp32 (same order of additions:
    the pruned terms it adds are exact zeros)."""
    model = make_model()
    X, Y = data(48)
    plan = ws.map(model.copy(), blocks=SHAPES, weight_sparsity=0.5,
                  optimizer=ws.optim.SGD(lr=0.05, **opt))
    masks = plan.weight_masks()
    for m, n in zip(masks, [SIZES[k] * SIZES[k + 1] for k in range(3)]):
        assert 0.3 <= 1 - m.sum() / n <= 0.7            # about half pruned, whole segments
    tr = ws.Trainer(plan, algo=algo, batch_size=batch, progress=False)
    hist = tr.fit(X, Y, epochs=1, shuffle=False)
    ref = reference(model, masks, **opt)
    _, losses = ref.fit(X, Y, 0.05, algo, batch)
    for (W, b), (Wr, br), m in zip(tr.weights(), ref.params(), masks, strict=True):
        assert np.all(W[~m] == 0)
        assert np.array_equal(W, Wr) and np.array_equal(b, br)
    assert hist.loss[0] == pytest.approx(losses.mean(), rel=1e-12)
    # the mask was real: the dense reference trains to other weights
    dense = reference(model, None, **opt)
    dense.fit(X, Y, 0.05, algo, batch)
    assert not np.array_equal(dense.params()[0][0], ref.params()[0][0])


def test_user_mask_is_kept_exactly():
    """A mask given per layer (bool arrays, True = kept) is the plan's mask, and the
    trained weights vanish exactly where it is False (the dict form, layers 0 and 1 only)."""
    model = make_model()
    masks = segment_mask()
    X, Y = data(30)
    plan = ws.map(model.copy(), blocks=SHAPES, weight_sparsity={0: masks[0], 1: masks[1]})
    got = plan.weight_masks()
    assert np.array_equal(got[0], masks[0]) and np.array_equal(got[1], masks[1])
    assert got[2].all()
    tr = ws.Trainer(plan, algo="sgd", lr=0.05, progress=False)
    tr.fit(X, Y, epochs=1, shuffle=False)
    ref = reference(model, [masks[0], masks[1], None])
    ref.fit(X, Y, 0.05, "sgd", 1)
    for (W, b), (Wr, br) in zip(tr.weights(), ref.params(), strict=True):
        assert np.array_equal(W, Wr) and np.array_equal(b, br)
    assert np.all(tr.weights()[0][0][~masks[0]] == 0)


def test_fp16_pruned_weights_stay_zero():
    """fp16 programs: pruned weights stay exactly 0; the kept ones train (they move)."""
    model = make_model()
    X, Y = data(30)
    plan = ws.map(model.copy(), blocks=SHAPES, dtype="fp16", weight_sparsity=0.5)
    masks = plan.weight_masks()
    W0 = [W.copy() for W, _ in plan.read_weights()]
    tr = ws.Trainer(plan, algo="sgd", lr=0.05, numerics="fp16", progress=False)
    tr.fit(X, Y, epochs=1, shuffle=False)
    for (W, _), W_0, m in zip(tr.weights(), W0, masks):
        assert np.all(W[~m] == 0) and np.all(W_0[~m] == 0)
        assert not np.array_equal(W[m], W_0[m])


def test_memory_and_cycles_drop_with_the_fraction():
    """Pruned weights cost no PE memory (data bytes of every PE, from the assembled
    programs: W, G and velocities shrink by the stored columns) and no cycles: emulated
    cycles per sample of SGD and of inference fall from dense to 25% to 50% pruned."""
    model = ws.nn.Sequential(ws.nn.Linear(32, 32, seed=1), ws.nn.ReLU(),
                             ws.nn.Linear(32, 32, seed=2), ws.nn.ReLU(),
                             ws.nn.Linear(32, 8, seed=3))
    rng = np.random.default_rng(4)
    X = rng.uniform(0, 1, (12, 32)).astype(np.float32)
    Y = rng.uniform(-1, 1, (12, 8)).astype(np.float32)
    blocks = [(2, 2), (2, 2), (2, 1)]
    mem, train_cyc, inf_cyc = [], [], []
    for p in (None, 0.25, 0.5):
        plan = ws.map(model.copy(), blocks=blocks, weight_sparsity=p,
                      optimizer=ws.optim.SGD(lr=0.01, momentum=0.5))
        m = plan.memory()
        mem.append(sum(v["data_bytes"] for v in m.values()))
        if p is not None:
            pruned = 1 - np.mean([k.mean() for k in plan.weight_masks()[:2]])
            assert abs(pruned - p) < 0.1
        tr = ws.Trainer(plan, algo="sgd", progress=False)
        tr.fit(X, Y, epochs=1, shuffle=False)
        train_cyc.append(tr.stats().cycles)
        tr2 = ws.Trainer(plan, progress=False)
        tr2.predict(X)
        inf_cyc.append(tr2.stats().cycles)
    # 4 bytes of W, 4 of G, 4 of velocity per pruned fp32 weight (64 x 8 x 4 bytes at 25%)
    assert mem[0] > mem[1] > mem[2]
    assert mem[0] - mem[2] >= 0.4 * (2 * 32 * 32) * 12
    assert train_cyc[0] > train_cyc[1] > train_cyc[2]
    assert inf_cyc[0] > inf_cyc[1] > inf_cyc[2]


@pytest.mark.parametrize("value,match", [
    (1.0, r"weight_sparsity\[0\] = 1.0: a pruning fraction must lie in \[0, 1\)"),
    (-0.1, r"weight_sparsity\[0\] = -0.1"),
    (float("nan"), r"weight_sparsity\[0\] = nan"),
    ({1: 1.5}, r"weight_sparsity\[1\] = 1.5"),
    ({5: 0.5}, r"entry for layer 5; this model's mapped layers are 0..2"),
    ([0.5, 0.5], r"has 2 entries; this model has 3 mapped layer"),
    ({1: np.ones((9, 7))}, r"weight_sparsity\[1\]: a mask must be a numpy array of dtype bool"),
    ({1: np.ones((9, 7), dtype=bool)}, r"weight_sparsity\[1\]: the mask has shape \(9, 7\); "
                                       r"layer 1's weights have shape \(7, 9\)"),
    ("half", r"weight_sparsity\[0\] must be a fraction in \[0, 1\)"),
    (True, r"weight_sparsity\[0\] must be a fraction"),
])
def test_bad_weight_sparsity_is_refused_before_any_cycle(value, match):
    """A fraction outside [0, 1) or NaN, a mask of the wrong shape or dtype, an unknown
    layer or a list of the wrong length: ConfigError naming the layer and the limit, and
    nothing is loaded on the wafer."""
    w = ws.Wafer(4, 8)
    with pytest.raises(ws.ConfigError, match=match):
        ws.map(make_model(), w, blocks=SHAPES, weight_sparsity=value)
    assert not any(w.pe(r, c).loaded for r in range(4) for c in range(8))


def test_mask_not_constant_on_a_segment_gets_single_weight_storage():
    """A mask that prunes part of a PE column segment is no longer refused: the layer
    gets single-weight storage (mapping/single_weights.py;
    tests/test_train_single_weight_sparsity.py trains it)."""
    m = np.ones((7, 9), dtype=bool)
    m[2, 4] = False                   # layer 1: rows of 3 block rows: inputs 3..5
    plan = ws.map(make_model(), blocks=SHAPES, weight_sparsity={1: m})
    assert plan.weight_keep[1] is None and np.array_equal(plan.weight_single[1], m)


def test_adam_with_pruned_weights_equals_masked_reference_bit_for_bit():
    """Adam (m and v stored per kept weight only) in mini-batches of 8: pruned weights stay
    0 and every parameter equals the masked device-order reference with Adam."""
    model = make_model()
    X, Y = data(40)
    plan = ws.map(model.copy(), blocks=SHAPES, weight_sparsity=0.5,
                  optimizer=ws.optim.Adam(lr=0.01))
    masks = plan.weight_masks()
    tr = ws.Trainer(plan, algo="minibatch", batch_size=8, progress=False)
    tr.fit(X, Y, epochs=1, shuffle=False)
    ref = reference(model, masks, adam={})
    ref.fit(X, Y, 0.01, "minibatch", 8)
    for (W, b), (Wr, br), m in zip(tr.weights(), ref.params(), masks, strict=True):
        assert np.all(W[~m] == 0)
        assert np.array_equal(W, Wr) and np.array_equal(b, br)


def test_residual_block_with_pruned_weights_equals_masked_reference():
    """A residual block (its fork, skip path and join unchanged) over layers whose weights
    are pruned at 50%: bit for bit the masked device-order reference after SGD."""
    from wafersim.reference.training import graph_of

    model = ws.nn.Sequential(
        ws.nn.Linear(12, 8, seed=1), ws.nn.ReLU(),
        ws.nn.Residual(ws.nn.Sequential(ws.nn.Linear(8, 6, seed=2), ws.nn.ReLU(),
                                        ws.nn.Linear(6, 8, seed=3))),
        ws.nn.Linear(8, 4, seed=4))
    X, Y = data(30)
    plan = ws.map(model.copy(), weight_sparsity=0.5, slots=2)
    masks = plan.weight_masks()
    assert all(not m.all() for m in masks)
    tr = ws.Trainer(plan, algo="sgd", lr=0.05, progress=False)
    tr.fit(X, Y, epochs=1, shuffle=False)
    dense = model.dense_layers()
    skips, sources = graph_of(dense)
    ref = MaskedDeviceOrderMLP([(d.linear.weight, d.linear.bias) for d in dense],
                               [d.activation for d in dense],
                               [(b.rows, b.cols) for b in plan.layers], skips, sources,
                               masks=masks)
    ref.fit(X, Y, 0.05, "sgd", 1)
    for (W, b), (Wr, br) in zip(tr.weights(), ref.params(), strict=True):
        assert np.array_equal(W, Wr) and np.array_equal(b, br)


def test_pe_that_keeps_no_weights():
    """A PE whose every column segment is pruned (layer 1's PE (0, 0): outputs 0..3 from
    inputs 0..2) stores one zero column nothing reads; training equals the reference."""
    model = make_model()
    X, Y = data(30)
    m = np.ones((7, 9), dtype=bool)
    m[0:4, 0:3] = False
    plan = ws.map(model.copy(), blocks=SHAPES, weight_sparsity={1: m})
    assert plan.specs[plan.layers[1].at(0, 0)].keep == ()
    tr = ws.Trainer(plan, algo="minibatch", batch_size=4, lr=0.05, progress=False)
    tr.fit(X, Y, epochs=1, shuffle=False)
    ref = reference(model, [None, m, None])
    ref.fit(X, Y, 0.05, "minibatch", 4)
    for (W, b), (Wr, br) in zip(tr.weights(), ref.params(), strict=True):
        assert np.array_equal(W, Wr) and np.array_equal(b, br)
    assert np.all(tr.weights()[1][0][~m] == 0)


def test_masked_sgd_matches_float64_projected_gradient_descent():
    """Independent of the device order: textbook float64 SGD (MSE, ReLU) whose gradient is
    multiplied by the mask after every step stays within 1e-4 of the wafer's fp32 weights
    after 40 samples, and the plan describes how much is pruned."""
    model = make_model()
    X, Y = data(40)
    plan = ws.map(model.copy(), blocks=SHAPES, weight_sparsity=0.5)
    assert "weights pruned: " in plan.describe()
    masks = plan.weight_masks()
    tr = ws.Trainer(plan, algo="sgd", lr=0.05, progress=False)
    tr.fit(X, Y, epochs=1, shuffle=False)
    P = [(np.where(m, d.linear.weight, 0).astype(np.float64), d.linear.bias.astype(np.float64))
         for d, m in zip(model.dense_layers(), masks)]
    for x, y in zip(X.astype(np.float64), Y.astype(np.float64)):
        acts = [x]
        for k, (W, b) in enumerate(P):
            z = W @ acts[-1] + b
            acts.append(np.maximum(z, 0) if k < len(P) - 1 else z)
        d = 2 * (acts[-1] - y) / y.size
        for k in range(len(P) - 1, -1, -1):
            W, b = P[k]
            d_in = (W.T @ d) * (acts[k] > 0) if k > 0 else None
            P[k] = (W - 0.05 * np.outer(d, acts[k]) * masks[k], b - 0.05 * d)
            d = d_in
    for (W, b), (Wt, bt), m in zip(tr.weights(), P, masks):
        assert np.all(Wt[~m] == 0)
        assert np.allclose(W, Wt, rtol=0, atol=1e-4) and np.allclose(b, bt, rtol=0, atol=1e-4)


def test_magnitude_pruning_is_balanced_per_pe_and_keeps_every_output_fed():
    """Magnitude pruning at 50% on 4 x 2 blocks of a 32 x 16 layer: every PE prunes half
    of its outputs' segments (whole segments: the mask is constant on each), and every
    output keeps at least one segment (no output is left with its bias alone)."""
    rng = np.random.default_rng(7)
    lin = ws.nn.Linear(32, 16, seed=1)
    lin.weight[...] = rng.normal(0, 1, lin.weight.shape).astype(np.float32)
    model = ws.nn.Sequential(lin, ws.nn.ReLU(), ws.nn.Linear(16, 4, seed=2))
    plan = ws.map(model, blocks=[(4, 2), (2, 2)], weight_sparsity={0: 0.5})
    m = plan.weight_masks()[0]
    assert m.any(axis=1).all()
    b = plan.layers[0]
    for r, (i0, ni) in enumerate(b.in_groups):
        for c, (o0, no) in enumerate(b.out_groups):
            keep = plan.specs[b.at(r, c)].keep
            assert len(keep) == no // 2
            kept_out = [o0 + j for j in keep]
            assert m[kept_out, i0:i0 + ni].all()
            assert not np.delete(m[o0:o0 + no, i0:i0 + ni], keep, axis=0).any()
