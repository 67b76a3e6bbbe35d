"""Mistakes a user makes when training get a clear exception before any cycle runs."""

import numpy as np
import pytest

import wafersim as ws

pytestmark = pytest.mark.nosanitize


@pytest.fixture(scope="module")
def trainer():
    m = ws.nn.Sequential(ws.nn.Linear(8, 4, seed=0), ws.nn.ReLU(), ws.nn.Linear(4, 3, seed=1))
    plan = ws.map(m, blocks=[(2, 2), (2, 1)])
    return ws.Trainer(plan, progress=False)


X = np.random.default_rng(0).uniform(0, 1, (5, 8)).astype(np.float32)
LABELS = np.array([0, 1, 2, 1, 0])


def no_cycles(tr, fn, exc, match):
    before = tr.plan.wafer.cycle
    with pytest.raises(exc, match=match):
        fn()
    assert tr.plan.wafer.cycle == before


@pytest.mark.parametrize("bad,match", [
    (np.zeros((5, 7), np.float32), r"shape \(samples, 8\)"),
    (np.zeros((2, 3, 8), np.float32), r"shape \(samples, 8\)"),
    (np.zeros((0, 8), np.float32), "no samples"),
    (np.array([["a"] * 8] * 5), "numbers"),
])
def test_bad_input_shapes_and_dtypes(trainer, bad, match):
    no_cycles(trainer, lambda: trainer.fit(bad, LABELS[:len(bad)] if len(bad) else LABELS[:0]),
              ws.ConfigError, match)


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_nan_and_inf_inputs(trainer, value):
    bad = X.copy()
    bad[3, 5] = value
    no_cycles(trainer, lambda: trainer.fit(bad, LABELS), ws.ConfigError, r"X\[3, 5\]")


def test_inputs_beyond_fp16_range():
    m = ws.nn.Sequential(ws.nn.Linear(8, 3, seed=0))
    tr = ws.Trainer(ws.map(m, blocks=[(1, 1)], dtype="fp16"), progress=False)
    bad = X.copy()
    bad[0, 0] = 1e6
    no_cycles(tr, lambda: tr.predict(bad), ws.ConfigError, "beyond the range of the plan.s fp16")


@pytest.mark.parametrize("labels,match", [
    (np.array([0, 1, 3, 1, 0]), "label 3 is out of range.*3 outputs"),
    (np.array([0, -1, 2, 1, 0]), "label -1 is out of range"),
    (np.array([0, 1, 2]), "3 labels for 5 samples"),
    (np.zeros((5, 4), np.float32), r"targets of shape \(5, 3\)"),
    (np.full((5, 3), np.nan, np.float32), "is nan: values must be finite"),
])
def test_bad_labels_and_targets(trainer, labels, match):
    no_cycles(trainer, lambda: trainer.fit(X, labels), ws.ConfigError, match)


@pytest.mark.parametrize("kwargs,match", [
    ({"algo": "adam"}, "algo must be one of"),
    ({"lr": 0}, "lr must be a positive number"),
    ({"lr": float("nan")}, "lr must be a positive number"),
    ({"algo": "sgd", "batch_size": 4}, "batch_size=1"),
    ({"algo": "minibatch", "batch_size": 0}, "batch_size must be an integer in 1..65535"),
    ({"numerics": "fp16"}, "needs a plan mapped with dtype=fp16"),
    ({"numerics": "int8"}, "numerics must be one of"),
    ({"loss": "cross_entropy"}, "MSELoss"),
    ({"seed": -1}, "seed must be"),
])
def test_bad_trainer_arguments(trainer, kwargs, match):
    with pytest.raises(ws.ConfigError, match=match):
        ws.Trainer(trainer.plan, progress=False, **kwargs)


def test_trainer_needs_a_plan():
    with pytest.raises(ws.ConfigError, match="Plan"):
        ws.Trainer(object())


def test_epochs_must_be_positive(trainer):
    no_cycles(trainer, lambda: trainer.fit(X, LABELS, epochs=0), ws.ConfigError, "epochs")


def test_debug_passes_in_order(trainer):
    with pytest.raises(ws.ConfigError, match="forward"):
        trainer.delta(0)
    with pytest.raises(ws.ConfigError, match="delta"):
        trainer.chain()
    with pytest.raises(ws.ConfigError, match="one sample"):
        trainer.forward(X)
    trainer.forward(X[0])
    with pytest.raises(ws.ConfigError, match="waiting for its delta"):
        trainer.fit(X, LABELS)
    trainer.delta(1)
    trainer.chain()


def test_a_diverged_run_leaves_its_nan_weights_in_the_model_instead_of_failing_after_it():
    """fp32 lr 1e30 is representable, so the run starts; it overflows. fit returns its NaN
    losses, and the model given to ws.map holds what the PEs hold, as a torch model would."""
    ws.nn.manual_seed(0)
    model = ws.nn.Sequential(ws.nn.Linear(6, 4), ws.nn.ReLU(), ws.nn.Linear(4, 3))
    tr = ws.Trainer(ws.map(model), lr=1e30, progress=False)
    X = np.random.default_rng(0).uniform(0, 1, (8, 6)).astype(np.float32)
    h = tr.fit(X, np.array([0, 1, 2, 1, 0, 1, 2, 0]), epochs=2)
    assert np.isnan(h.loss[-1])
    for (W, b), d in zip(tr.weights(), model.dense_layers()):
        assert not np.isfinite(W).all()
        assert np.array_equal(W, d.linear.weight, equal_nan=True)
        assert np.array_equal(b, d.linear.bias, equal_nan=True)
