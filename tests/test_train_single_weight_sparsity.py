"""Single-weight sparsity in ws.map and the Trainer (beyond the seeds; the shipped machine
stores pruned weights so that the multiply is skipped): any bool mask, or magnitude pruning
of single weights, stored by row and column records per PE (mapping/single_weights.py) and
trained with the CE's indexed vectors; against the device-order numpy reference that
applies the same mask (reference/masked.py), bit for bit in fp32."""

import numpy as np
import pytest

import wafersim as ws
from wafersim.reference.masked import MaskedDeviceOrderMLP

from train_models import mlp, sparse_inputs

pytestmark = pytest.mark.nosanitize  # whole training runs

SIZES = (12, 9, 7, 4)
SHAPES = [(4, 3), (3, 2), (2, 2)]


def reference(model, masks, shapes, **kw):
    dense = model.dense_layers()
    return MaskedDeviceOrderMLP([(d.linear.weight, d.linear.bias) for d in dense],
                                [d.activation for d in dense], shapes, masks=masks, **kw)


def random_masks(pruned, seed=1):
    """Element masks that prune about ``pruned`` of every layer, not constant on segments."""
    rng = np.random.default_rng(seed)
    return {l: rng.random((o, i)) >= pruned for l, (i, o) in enumerate(zip(SIZES[:-1], SIZES[1:]))}


def train_both(masks_or_entry, shapes=SHAPES, n=24, epochs=1, algo="sgd", batch=1):
    model = mlp(SIZES, 3)
    X, Y = sparse_inputs(n, SIZES[0], SIZES[-1], 0)
    plan = ws.map(model.copy(), blocks=shapes, weight_sparsity=masks_or_entry,
                  optimizer=ws.optim.SGD(lr=0.05))
    masks = plan.weight_masks()
    tr = ws.Trainer(plan, algo=algo, batch_size=batch, progress=False)
    hist = tr.fit(X, Y, epochs=epochs, shuffle=False)
    ref = reference(model, masks, shapes)
    losses = [ref.fit(X, Y, 0.05, algo, batch)[1] for _ in range(epochs)]
    return plan, tr, hist, ref, masks, losses


@pytest.mark.parametrize("pruned", [0.25, 0.5, 0.9])
@pytest.mark.parametrize("shapes", [SHAPES, [(1, 1), (1, 1), (1, 1)]], ids=["blocks", "1x1"])
def test_random_element_masks_train_bit_for_bit(pruned, shapes):
    """Random element masks at 25%, 50% and 90% pruned (not constant on PE column
    segments: single-weight storage), on blocks of several PEs and on 1 x 1 blocks (the
    finalizer's own block pass alone): after an epoch of SGD every pruned weight is exactly
    0 and every weight, bias and the loss equal the masked device-order reference bit for
    bit in fp32 (the wafer adds the kept terms in the reference's order)."""
    masks = random_masks(pruned)
    plan, tr, hist, ref, got_masks, losses = train_both(masks, shapes)
    assert all(m is not None for m in plan.weight_single)
    for l, m in masks.items():
        assert np.array_equal(got_masks[l], m)
    for (W, b), (Wr, br), m in zip(tr.weights(), ref.params(), got_masks, strict=True):
        assert np.all(W[~m] == 0)
        assert np.array_equal(W, Wr) and np.array_equal(b, br)
    assert hist.loss[0] == pytest.approx(losses[0].mean(), rel=1e-12)
    # the mask was real: the dense reference trains to other weights
    model = mlp(SIZES, 3)
    dense = reference(model, None, shapes)
    X, Y = sparse_inputs(24, SIZES[0], SIZES[-1], 0)
    dense.fit(X, Y, 0.05, "sgd", 1)
    assert not np.array_equal(dense.params()[0][0], ref.params()[0][0])


@pytest.mark.parametrize("shapes", [SHAPES, [(1, 1), (1, 1), (1, 1)]], ids=["blocks", "1x1"])
def test_mini_batches_with_single_weights_bit_for_bit(shapes):
    """Mini-batches of 8 (and a last batch of 4: 28 samples) at 50% pruned by random
    element masks: G accumulates per kept weight in its record and the update at each
    batch's end (W += G (-lr / b), G = 0 over the records) gives the masked reference's
    weights bit for bit, pruned ones exactly 0, over two epochs."""
    masks = random_masks(0.5, seed=7)
    plan, tr, hist, ref, got, losses = train_both(masks, shapes, n=28, epochs=2,
                                                  algo="minibatch", batch=8)
    for (W, b), (Wr, br), m in zip(tr.weights(), ref.params(), got, strict=True):
        assert np.all(W[~m] == 0)
        assert np.array_equal(W, Wr) and np.array_equal(b, br)
    assert hist.loss[1] == pytest.approx(losses[1].mean(), rel=1e-12)


@pytest.mark.parametrize("algo,batch,opt,ref_kw", [
    ("sgd", 1, dict(momentum=0.9), dict(momentum=0.9)),
    ("minibatch", 8, dict(momentum=0.5, nesterov=True, weight_decay=0.01),
     dict(momentum=0.5, nesterov=True, weight_decay=0.01)),
    ("minibatch", 8, "adam", dict(adam={}))])
def test_optimizers_with_state_per_kept_weight_bit_for_bit(algo, batch, opt, ref_kw):
    """Momentum (SGD), momentum with Nesterov and weight decay (mini-batches) and Adam
    (mini-batches): velocities and moments stored per kept weight, in record order; every
    weight and bias equals the masked device-order reference bit for bit, pruned ones 0."""
    lr = 0.01 if opt == "adam" else 0.05
    optimizer = ws.optim.Adam(lr=lr) if opt == "adam" else ws.optim.SGD(lr=lr, **opt)
    masks = random_masks(0.5, seed=9)
    model = mlp(SIZES, 3)
    X, Y = sparse_inputs(32, SIZES[0], SIZES[-1], 0)
    plan = ws.map(model.copy(), blocks=SHAPES, weight_sparsity=masks, optimizer=optimizer)
    assert all(m is not None for m in plan.weight_single)
    tr = ws.Trainer(plan, algo=algo, batch_size=batch, progress=False)
    tr.fit(X, Y, epochs=1, shuffle=False)
    ref = reference(model, plan.weight_masks(), SHAPES, **ref_kw)
    ref.fit(X, Y, lr, algo, batch)
    for (W, b), (Wr, br), m in zip(tr.weights(), ref.params(), plan.weight_masks(), strict=True):
        assert np.all(W[~m] == 0)
        assert np.array_equal(W, Wr) and np.array_equal(b, br)


def test_magnitude_pruning_of_single_weights_is_balanced_per_row_of_each_pe():
    """{"fraction": p, "unit": "weight"}: every input row of every PE's block keeps
    n_out - round(p n_out) of its weights, those of largest |w| (kernels/sparse_block.py's
    magnitude_mask), and trains bit for bit as the masked reference."""
    plan, tr, hist, ref, masks, losses = train_both({"fraction": 0.5, "unit": "weight"})
    model = mlp(SIZES, 3)
    for b, m, d in zip(plan.layers, masks, model.dense_layers()):
        W = np.abs(d.linear.weight)
        for i0, ni in b.in_groups:
            for o0, no in b.out_groups:
                blk = m[o0:o0 + no, i0:i0 + ni]
                assert np.all(blk.sum(axis=0) == no - round(0.5 * no))
                for i in range(ni):      # the kept ones are the largest of the column
                    col = W[o0:o0 + no, i0 + i]
                    kept, gone = col[blk[:, i]], col[~blk[:, i]]
                    assert gone.size == 0 or kept.min() >= gone.max()
    for (W, b), (Wr, br) in zip(tr.weights(), ref.params(), strict=True):
        assert np.array_equal(W, Wr) and np.array_equal(b, br)


def test_busy_cycles_and_weight_bytes_fall_with_sparsity():
    """Pruned weights cost no cycles and no value bytes: the run's busy cycles (forward,
    delta and chain passes, from the CE profile) fall strictly from 25% to 50% to 90%
    pruned, and plan.memory() counts 4 bytes of value and 6 + 2 of index per kept weight
    and 4 per row and column of each block (against a hand count)."""
    busy, values = [], []
    for pruned in (0.25, 0.5, 0.9):
        masks = random_masks(pruned, seed=5)
        plan, tr, *_ = train_both(masks)
        st = tr.stats()
        busy.append(sum(int(st.busy(p).sum()) for p in ("forward", "delta", "chain")))
        mem = plan.memory()
        total_vals = sum(v["weight_values"] for v in mem.values())
        total_index = sum(v["weight_index"] for v in mem.values())
        nnz = sum(int(m.sum()) for m in masks.values())
        tables = sum(4 * (s.nin + s.nout) for s in plan.specs.values() if s.single)
        assert total_vals == 4 * nnz
        assert total_index == 8 * nnz + tables
        values.append(total_vals)
    assert busy[0] > busy[1] > busy[2]
    assert values[0] > values[1] > values[2]


def test_segment_constant_masks_keep_the_segment_storage():
    """A mask constant on every PE column segment keeps the cheaper segment storage (no
    index per weight); only the others get records."""
    m = np.ones((7, 9), dtype=bool)
    m[2, :] = False                               # a whole output: constant on segments
    plan = ws.map(mlp(SIZES, 3), blocks=SHAPES, weight_sparsity={1: m})
    assert plan.weight_single[1] is None and plan.weight_keep[1] is not None
    m[3, 4] = False                               # and one single weight
    plan = ws.map(mlp(SIZES, 3), blocks=SHAPES, weight_sparsity={1: m})
    assert plan.weight_keep[1] is None and np.array_equal(plan.weight_single[1], m)


@pytest.mark.parametrize("kw,trainer,match", [
    (dict(dtype="fp16"), None, r"layer\(s\) \[0, 1, 2\] prune single weights.*fp32 only"),
    (dict(cpgd=True), None, r"cpgd=True is not supported with weight_sparsity"),
    (dict(checkpoint=2), None, r"single-weight sparsity is not supported with it"),
])
def test_what_single_weights_do_not_cover_is_refused(kw, trainer, match):
    """fp16, CPGD and a reverse checkpoint are refused with a ConfigError of category
    "unsupported" naming the layers."""
    entry = {"fraction": 0.5, "unit": "weight"}
    with pytest.raises(ws.ConfigError, match=match) as e:
        plan = ws.map(mlp(SIZES, 3), blocks=SHAPES, weight_sparsity=entry, **kw)
        ws.Trainer(plan, progress=False, **trainer)
    assert e.value.category == "unsupported"


@pytest.mark.parametrize("value,match", [
    ({"fraction": 1.0, "unit": "weight"}, r"weight_sparsity\[0\] = .*must lie in \[0, 1\)"),
    ({"fraction": 0.5, "unit": "neuron"}, r"unit must be 'weight'"),
    ({"fraction": 0.5, "units": "weight"}, r"a dict entry is"),
    ({1: {"fraction": float("nan"), "unit": "weight"}}, r"weight_sparsity\[1\] = "),
])
def test_bad_single_weight_entries_are_refused(value, match):
    w = ws.Wafer(4, 8)
    with pytest.raises(ws.ConfigError, match=match):
        ws.map(mlp(SIZES, 3), w, blocks=SHAPES, weight_sparsity=value)
    assert not any(w.pe(r, c).loaded for r in range(4) for c in range(8))


def test_weights_round_trip_and_a_pe_that_keeps_nothing():
    """Plan.read_weights gives back what was written, masked (numpy W * mask), and a PE
    whose whole block is pruned (plus an input row and an output column pruned in
    another) trains bit for bit as the masked reference."""
    masks = random_masks(0.3, seed=11)
    masks[0][0:3, 0:3] = False        # layer 0 on 4 x 3 PEs: PE (0, 0) holds W[0:3, 0:3]
    masks[1][:, 5] = False            # an input row of layer 1
    masks[2][1, :] = False            # an output of layer 2
    model = mlp(SIZES, 3)
    plan = ws.map(model.copy(), blocks=SHAPES, weight_sparsity=masks)
    assert plan.specs[plan.layers[0].at(0, 0)].layout().nnz == 0
    for (W, _), d, m in zip(plan.read_weights(), model.dense_layers(), plan.weight_masks()):
        assert np.array_equal(W, np.where(m, d.linear.weight, np.float32(0)))
    plan, tr, hist, ref, got, losses = train_both(masks)
    for (W, b), (Wr, br), m in zip(tr.weights(), ref.params(), got, strict=True):
        assert np.all(W[~m] == 0)
        assert np.array_equal(W, Wr) and np.array_equal(b, br)
