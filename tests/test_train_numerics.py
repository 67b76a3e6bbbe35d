"""fp16 and stochastic rounding while training on the wafer [0660]-[0672]."""

import numpy as np
import pytest

import wafersim as ws
from wafersim.train.datasets import digits

pytestmark = pytest.mark.nosanitize


@pytest.mark.parametrize("numerics", ["fp16", "fp16-sr"])
def test_fp16_training_learns_digits(numerics):
    """fp16 weights, activations, partial sums and deltas (with round-to-nearest-even or
    stochastic rounding of every result): the network learns."""
    Xtr, ytr, Xte, yte = digits()
    ws.nn.manual_seed(0)
    m = ws.nn.Sequential(ws.nn.Linear(64, 32), ws.nn.ReLU(), ws.nn.Linear(32, 10))
    plan = ws.map(m, dtype="fp16")
    tr = ws.Trainer(plan, lr=0.1, numerics=numerics, progress=False)
    h = tr.fit(Xtr[:500], ytr[:500], epochs=2)
    assert h.loss[1] < h.loss[0] < 0.1
    assert tr.evaluate(Xte, yte)["accuracy"] > 0.8
    W, _ = tr.weights()[0]
    assert W.dtype == np.float32 and np.all(np.isfinite(W))


def _tiny_update_run(numerics: str, samples: int):
    """Weights 1.0 and an update of 0.363 units in the last place per sample, the same
    every time: the output (about 4) stays far from the target (996), so the delta
    2 (4 - 996) = -1984 hardly moves, and -lr * delta = 3 * 2^-24 * 1984 = 0.363 * 2^-10.
    The fp16 numbers next to 1 are 1 and 1 + 2^-10."""
    m = ws.nn.Sequential(ws.nn.Linear(4, 1, bias=False, seed=0))
    m[0].set_parameters(np.ones((1, 4), np.float32))
    plan = ws.map(m, blocks=[(2, 1)], dtype="fp16")
    tr = ws.Trainer(plan, lr=3 * 2.0 ** -24, numerics=numerics, seed=5, progress=False)
    X = np.ones((samples, 4), np.float32)
    Y = np.full((samples, 1), 996.0, np.float32)
    tr.fit(X, Y, shuffle=False)
    return tr.weights()[0][0].ravel()


ULP = 2.0 ** -10
FRACTION = 3 * 2.0 ** -24 * 1984 / ULP           # 0.363 ULP per update


def test_tiny_updates_are_lost_with_round_to_nearest_0662():
    """[0662]: updates below half a unit in the last place round to nothing: no learning."""
    w = _tiny_update_run("fp16", 200)
    assert np.all(w == 1.0)


def test_tiny_updates_are_kept_on_average_with_stochastic_rounding_0662():
    """[0662]: with stochastic rounding the update rounds up with the probability its
    fraction of a ULP gives, seen through the N = 3 random bits of [0672]: floor(0.363 *
    8) / 8 = 1/4 per sample. On average the weights learn."""
    n = 200
    w = _tiny_update_run("fp16-sr", n)
    steps = (w - 1.0) / ULP                      # whole ULPs each weight moved
    assert np.all(steps == np.round(steps))
    expected = n * np.floor(FRACTION * 8) / 8    # 50
    assert np.all(steps > 0.6 * expected)
    assert 0.85 * expected < steps.mean() < 1.15 * expected


def test_stochastic_rounding_runs_are_reproducible():
    a = _tiny_update_run("fp16-sr", 60)
    b = _tiny_update_run("fp16-sr", 60)
    assert np.array_equal(a, b)
