"""Values of the wrong kind at every public parameter of the training stack (ws.nn,
ws.optim, ws.map, ws.Trainer and its passes) raise only wafersim's errors, naming the
parameter, before any cycle runs. The rows and the strategy are those of
test_fuzz_public_params.py."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import wafersim as ws
from test_fuzz_public_params import WRONG, _arguments, params

pytestmark = pytest.mark.nosanitize   # many small mappings

X = np.random.default_rng(0).uniform(0, 1, (4, 6)).astype(np.float32)
Y = np.array([0, 1, 2, 1])


def _model():
    return ws.nn.Sequential(ws.nn.Linear(6, 4, seed=0), ws.nn.ReLU(), ws.nn.Linear(4, 3, seed=1))


_plans: dict = {}


def _plan():
    """One small plan per test process (a Trainer on it starts from its current weights)."""
    if "p" not in _plans:
        _plans["p"] = ws.map(_model(), blocks=[(2, 2), (2, 1)])
    return _plans["p"]


def _trainer():
    if "t" not in _plans:
        _plans["t"] = ws.Trainer(_plan(), lr=0.05, progress=False)
    return _plans["t"]


def _sequential(layers):
    return ws.nn.Sequential(*layers) if isinstance(layers, (list, tuple)) else ws.nn.Sequential(layers)


def _map(**kw):
    return ws.map(**kw)


def _trainer_new(**kw):
    return ws.Trainer(**kw)


def _fit(**kw):
    return _trainer().fit(**kw)


def _evaluate(**kw):
    return _trainer().evaluate(**kw)


def _predict(**kw):
    return _trainer().predict(**kw)


def _forward(**kw):
    tr = _trainer()
    out = tr.forward(**kw)
    tr.delta(0)
    return out


def _delta(**kw):
    tr = _trainer()
    tr.forward(X[0])
    try:
        return tr.delta(**kw)
    finally:
        if tr._pending is not None:        # a refused target leaves the sample waiting
            tr.delta(0)


NN = [
    *params(ws.nn.Linear, {"in_features": 4, "out_features": 2}, "in_features", "out_features",
            "bias", "seed"),
    *params(ws.nn.LeakyReLU, {}, "negative_slope"),
    *params(ws.nn.GELU, {}, "approximate"),
    *params(_sequential, {"layers": [ws.nn.Linear(4, 2, seed=0)]}, "layers",
            mentions=("layer", "Linear")),
    *params(ws.nn.Residual, {"f": ws.nn.Linear(3, 3, seed=0)}, "f"),
    *params(ws.nn.TwoBranch, {"f": ws.nn.Linear(3, 3, seed=0), "g": ws.nn.Linear(3, 3, seed=1)},
            "f", "g"),
    *params(ws.nn.MSELoss, {}, "reduction"),
    *params(ws.nn.CrossEntropyLoss, {}, "weight", "ignore_index", "reduction", "label_smoothing"),
    *params(ws.nn.manual_seed, {"seed": 0}, "seed"),
    *params(ws.optim.SGD, {"lr": 0.1}, "lr", "momentum", "dampening", "weight_decay", "nesterov"),
]

MAP = [
    *params(_map, lambda: {"model": _model(), "blocks": [(2, 2), (2, 1)]}, "model",
            mentions=("Sequential", "model")),
    *params(_map, lambda: {"model": _model(), "blocks": [(2, 2), (2, 1)]}, "wafer", "blocks",
            "dtype", "origin", "slots", "skip_depth", "loss", "optimizer",
            "activation_threshold"),
]

TRAINER = [
    *params(_trainer_new, lambda: {"plan": _plan()}, "plan", mentions=("Plan", "plan")),
    *params(_trainer_new, lambda: {"plan": _plan()}, "algo", "lr", "batch_size", "loss",
            "numerics", "seed", "progress", "timeline"),
    *params(_fit, {"X": X, "y": Y}, "X", "y", "shuffle", "validation"),
    *params(_evaluate, {"X": X, "y": Y}, "X", "y"),
    *params(_predict, {"X": X}, "X"),
    *params(_forward, {"x": X[0]}, "x"),
    *params(_delta, {"y": 1}, "y", mentions=("target", "label")),
]

ROWS = NN + MAP + TRAINER


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.id)
def test_the_valid_arguments_work(row):
    row.call(**row.valid())


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.id)
@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(value=WRONG)
def test_wrong_values_raise_only_wafersim_errors_naming_the_parameter(row, value):
    checks_cycles = row.call in (_fit, _evaluate, _predict, _forward)
    if checks_cycles:
        _trainer()                      # built (its construction runs cycles) before counting
        before = _plan().wafer.cycle
    try:
        row.call(**_arguments(row, value))
    except ws.WaferError as e:
        message = str(e)
        assert any(m in message for m in row.mentions), (
            f"{row.id}={value!r}: the message does not name {row.mentions}: {message}")
        if checks_cycles:
            assert _plans["p"].wafer.cycle == before, f"{row.id}={value!r} ran cycles"


@pytest.mark.parametrize("epochs", [0, -1, 2.5, "2", None, True, np.float32(1), [1]])
def test_fit_refuses_epochs_that_are_not_a_positive_integer(epochs):
    # not in the fuzz table: a huge positive count is valid and would train for that long
    before = _plan().wafer.cycle
    with pytest.raises(ws.WaferError, match="epochs"):
        _trainer().fit(X, Y, epochs=epochs)
    assert _plan().wafer.cycle == before
