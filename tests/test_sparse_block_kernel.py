"""Single-weight (unstructured) weight sparsity on one PE (kernels/sparse_block.py): kept
weights stored compressed by input row with u16 output offsets and by output column, the
forward, delta and SGD-update passes as CE programs over indexed 1D vectors (IX). Checked
against numpy with small integers (every product and sum exact in fp32, so any order of
additions gives the same bits), for random element masks at 25%, 50% and 90% pruned; the
cycles against a hand count (a fixed overhead per row or column plus one per kept
weight)."""

import numpy as np
import pytest

import wafersim as ws
from wafersim.kernels.sparse_block import B_DELTA, F_ACT, SparseBlock, magnitude_mask

LR = 0.5


def _problem(n_out, n_in, pruned, seed):
    rng = np.random.default_rng(seed)
    W = rng.integers(-4, 5, (n_out, n_in)).astype(np.float32)
    mask = rng.random((n_out, n_in)) >= pruned
    x = rng.integers(-3, 4, n_in).astype(np.float32)
    d = rng.integers(-3, 4, n_out).astype(np.float32)
    return W, mask, x, d


def _run(block, x, d):
    """Loads the block, streams x then d, then runs the update. Busy cycles per pass."""
    pe = ws.pe.LonePE()
    pe.load(block.source())
    block.write(pe)
    pe.launch("main")
    pe.run()
    busy = []
    for color, v in ((F_ACT, x), (B_DELTA, d)):
        pe.reset_stats()
        pe.inject(color, v, dtype="fp32", index=np.arange(len(v)))
        busy.append(pe.run()["busy_cycles"])
    pe.reset_stats()
    pe.launch("upd")
    busy.append(pe.run()["busy_cycles"])
    return pe, busy


@pytest.mark.parametrize("pruned", [0.25, 0.5, 0.9])
def test_three_passes_equal_numpy_with_the_mask_applied(pruned):
    """A random element mask (no structure: any bool (n_out, n_in)): the forward sums are
    (W*M) x, the delta sums (W*M)^T d, the updated weights W*M - lr d x^T on the kept
    weights, and every pruned weight is exactly 0 (it is not stored: the records hold the
    kept ones only)."""
    W, mask, x, d = _problem(24, 20, pruned, seed=int(pruned * 100))
    block = SparseBlock(W, mask, LR)
    assert block.nnz == mask.sum() and 0 < block.nnz < mask.size
    pe, _ = _run(block, x, d)
    Wm = np.where(mask, W, 0).astype(np.float64)
    assert np.array_equal(pe.read("fpsum"), (Wm @ x).astype(np.float32))
    assert np.array_equal(pe.read("dx"), (Wm.T @ d).astype(np.float32))
    W1 = block.read_weights(pe)
    want = np.where(mask, Wm - LR * np.outer(d, x), 0).astype(np.float32)
    assert np.array_equal(W1, want)
    assert np.all(W1[~mask] == 0)
    assert pe.symbols["rec"].count * 2 == 6 * block.nnz   # 4 value + 2 index bytes a kept weight


def test_two_samples_keep_training_the_kept_weights_only():
    """Two SGD steps on one block (the second sample's forward pass uses the updated
    weights): equal to numpy's masked SGD step by step."""
    W, mask, x, d = _problem(10, 12, 0.5, seed=5)
    rng = np.random.default_rng(6)
    x2 = rng.integers(-3, 4, 12).astype(np.float32)
    d2 = rng.integers(-3, 4, 10).astype(np.float32)
    block = SparseBlock(W, mask, LR)
    pe, _ = _run(block, x, d)
    Wm = np.where(mask, W, 0).astype(np.float64)
    Wm = Wm - LR * np.outer(d, x) * mask
    pe.write("fpsum", np.zeros(10, np.float32))
    pe.write("dx", np.zeros(12, np.float32))
    pe.inject(F_ACT, x2, dtype="fp32", index=np.arange(12))
    pe.run()
    assert np.array_equal(pe.read("fpsum"), (Wm @ x2).astype(np.float32))
    pe.inject(B_DELTA, d2, dtype="fp32", index=np.arange(10))
    pe.run()
    pe.launch("upd")                          # once the deltas are in
    pe.run()
    Wm = Wm - LR * np.outer(d2, x2) * mask
    assert np.array_equal(block.read_weights(pe), Wm.astype(np.float32))


def test_cycles_fall_with_sparsity_one_per_kept_weight():
    """A 32 x 32 block with no weight pruned, 25%, 50% and 90% pruned by random masks:
    through the row and column tables each pass costs
    the same per row (forward, update) or column (delta) and one cycle per kept weight
    (a zero-length vector costs one cycle): the forward pass 2 cycles of task start, the
    entry's jump and 11 instructions a row, the delta pass the same a column, the update
    3 + 4, then 16 a row, then its final `term`. So busy cycles fall strictly with the pruned share."""
    n = 32
    rows = []
    for pruned in (0.0, 0.25, 0.5, 0.9):
        W, mask, x, d = _problem(n, n, pruned, seed=11)
        x[x == 0] = 1                         # every activation is sent and counted
        d[d == 0] = 1
        block = SparseBlock(W, mask, LR)
        _, busy = _run(block, x, d)
        per_row = np.maximum(mask.sum(axis=0), 1)
        per_col = np.maximum(mask.sum(axis=1), 1)
        if pruned == 0:                       # every row full: no table (test below)
            assert busy[0] == n * (8 + n) and busy[2] == 3 + 4 + 3 + n * (9 + n) + 1
        else:
            assert len(set(mask.sum(axis=0))) > 1
            assert busy[0] == n * 14 + per_row.sum()
            assert busy[2] == 3 + 4 + n * 16 + per_row.sum() + 1
        assert busy[1] == n * 14 + per_col.sum()
        rows.append(busy)
    for k in range(3):
        assert rows[0][k] > rows[1][k] > rows[2][k] > rows[3][k]


@pytest.mark.parametrize("pruned", [0.25, 0.5, 0.9])
def test_mini_batch_accumulates_g_and_applies_it_at_the_end(pruned):
    """Mini-batches of 4: each sample's forward pass uses the batch's starting weights,
    G accumulates x_i d_j per kept weight, and ``apply`` runs W += G (-lr / 4), G = 0 (2
    vector operations over the kept weights: 8 + 2 nnz cycles with the task's start);
    equal to numpy's masked mini-batch step, pruned weights exactly 0, G cleared."""
    n_out, n_in, b = 16, 12, 4
    W, mask, _, _ = _problem(n_out, n_in, pruned, seed=int(pruned * 100) + 1)
    rng = np.random.default_rng(9)
    X = rng.integers(-3, 4, (b, n_in)).astype(np.float32)
    D = rng.integers(-3, 4, (b, n_out)).astype(np.float32)
    block = SparseBlock(W, mask, LR, batch=b)
    pe = ws.pe.LonePE()
    pe.load(block.source())
    block.write(pe)
    pe.launch("main")
    pe.run()
    Wm = np.where(mask, W, 0).astype(np.float64)
    for x, d in zip(X, D):
        pe.write("fpsum", np.zeros(n_out, np.float32))
        pe.write("dx", np.zeros(n_in, np.float32))
        pe.inject(F_ACT, x, dtype="fp32", index=np.arange(n_in))
        pe.run()
        assert np.array_equal(pe.read("fpsum"), (Wm @ x).astype(np.float32))
        pe.inject(B_DELTA, d, dtype="fp32", index=np.arange(n_out))
        pe.run()
        assert np.array_equal(pe.read("dx"), (Wm.T @ d).astype(np.float32))
        pe.launch("upd")
        pe.run()
        assert np.array_equal(block.read_weights(pe), Wm.astype(np.float32))  # not yet
    pe.reset_stats()
    pe.launch("apply")
    assert pe.run()["busy_cycles"] == 3 + 5 + 2 * block.nnz
    want = Wm - LR / b * (D.T.astype(np.float64) @ X) * mask
    W1 = block.read_weights(pe)
    assert np.array_equal(W1, want.astype(np.float32)) and np.all(W1[~mask] == 0)
    rec = np.asarray(pe.read("rec"), np.uint16).reshape(-1, 5)
    assert np.all(rec[:block.nnz, 2:4] == 0)                # G = 0 for the next batch
    assert block.memory_bytes()["gradients"] == 4 * block.nnz


def test_magnitude_mask_prunes_the_smallest_of_every_row():
    """Each input row of the block (a column of W) keeps its largest |w|: the same count
    per row (round(p n_out) pruned), and no kept weight is smaller than a pruned one of
    its row; trained through the kernel, the pruned ones stay 0."""
    rng = np.random.default_rng(12)
    W = rng.normal(0, 1, (10, 7)).astype(np.float32)
    mask = magnitude_mask(W, 0.25)
    assert (mask.sum(axis=0) == 10 - 2).all()          # round(2.5) = 2 (to even)
    for i in range(7):
        a = np.abs(W[:, i])
        assert a[mask[:, i]].min() > a[~mask[:, i]].max()
    assert magnitude_mask(W, 0.0).all()
    Wi, _, x, d = _problem(10, 7, 0.0, seed=13)
    block = SparseBlock(Wi, magnitude_mask(W, 0.5), LR)
    pe, _ = _run(block, x, d)
    assert np.all(block.read_weights(pe)[~block.mask] == 0)


@pytest.mark.parametrize("p", [1.0, -0.1, float("nan"), True])
def test_bad_pruning_fraction_is_refused(p):
    with pytest.raises(ws.ConfigError, match=r"a pruning fraction must lie in \[0, 1\)"):
        magnitude_mask(np.ones((3, 3)), p)


def test_rows_of_equal_counts_skip_the_table():
    """Magnitude pruning balanced per row (every row keeps c weights): the forward pass
    costs 3 (task start, entry jump) + 5 + c cycles a row, the SGD update 10 + 9 + c a
    row + 1 (against 14 + c and 16 + c through the table); results equal numpy at 25%
    and 50% pruned."""
    n = 32
    for pruned in (0.25, 0.5):
        W, _, x, d = _problem(n, n, 0.0, seed=14)
        x[x == 0] = 1
        d[d == 0] = 1
        mask = magnitude_mask(W + np.arange(n * n).reshape(n, n) * 1e-3, pruned)
        c = n - int(round(pruned * n))
        block = SparseBlock(W, mask, LR)
        pe, busy = _run(block, x, d)
        assert busy[0] == n * (8 + c)
        assert busy[1] == n * 14 + np.maximum(mask.sum(axis=1), 1).sum()
        assert busy[2] == 3 + 4 + 3 + n * (9 + c) + 1
        Wm = np.where(mask, W, 0).astype(np.float64)
        assert np.array_equal(pe.read("fpsum"), (Wm @ x).astype(np.float32))
        assert np.array_equal(pe.read("dx"), (Wm.T @ d).astype(np.float32))
        want = np.where(mask, Wm - LR * np.outer(d, x), 0).astype(np.float32)
        assert np.array_equal(block.read_weights(pe), want)


def test_bad_mask_is_refused():
    W = np.zeros((3, 4), np.float32)
    with pytest.raises(ws.ConfigError, match="bool array of the weights' shape"):
        SparseBlock(W, np.ones((4, 3), bool), LR)
    with pytest.raises(ws.ConfigError, match="bool array"):
        SparseBlock(W, np.ones((3, 4)), LR)
    with pytest.raises(ws.ConfigError, match="batch must be a positive integer, got 0"):
        SparseBlock(W, np.ones((3, 4), bool), LR, batch=0)
