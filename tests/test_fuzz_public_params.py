"""Values of the wrong kind at every public parameter raise only wafersim's errors.

Hypothesis throws None, strings, floats (NaN, inf), negative and huge integers, numpy
scalars and arrays, booleans, lists, dicts, bytes and bare objects at one parameter at a
time, the others keeping valid values. Whatever comes out must be a ``ws.WaferError``
whose message names the parameter; a TypeError, AttributeError, IndexError, KeyError,
OverflowError or numpy error from inside fails the test with the value that caused it.
A value that happens to be valid (None where None is allowed, a numpy integer for a
depth) must simply work.

Adding entries: one row per parameter, made by :func:`params`::

    *params(callable, valid_arguments, "name1", "name2", ...)

* ``callable`` is called with keyword arguments only: a function, a class, or a small
  function that builds what a method needs (see :func:`_send_control`);
* ``valid_arguments``: a dict of keyword arguments with which the call succeeds, or a
  function returning one (for arguments that must be fresh each time, such as a Wafer);
  ``test_the_valid_arguments_work`` checks that they do;
* the names: the parameters to fuzz, each one replaced in turn by a wrong value;
* ``mentions=``: the words of which an error message must contain one (default: the
  parameter's name), for parameters whose errors name the element at fault instead.

For example ``*params(ws.nn.Linear, {"in_features": 4, "out_features": 2},
"in_features", "out_features", "bias")`` or, for a method,
``*params(_fit, lambda: {"X": X, "y": y, "epochs": 1}, "epochs", "shuffle")`` with
``def _fit(**kw): return ws.Trainer(ws.map(model), lr=0.1).fit(**kw)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import wafersim as ws
from wafersim import switches
from wafersim.balance import Buffer, InsertedBuffer, Load, PipelineGraph, Stage, examples

B = ws.balance


@dataclass(frozen=True)
class Param:
    """One public parameter: ``call(**{**valid(), name: wrong value})``."""

    call: Callable[..., Any]
    name: str
    valid: Callable[[], dict]
    mentions: tuple[str, ...]

    @property
    def id(self) -> str:
        return f"{getattr(self.call, '__qualname__', self.call)}.{self.name}".lstrip("_")


def params(call, valid, *names: str, mentions: tuple[str, ...] | None = None) -> list[Param]:
    """Rows for ``names`` of ``call`` with the valid keyword arguments ``valid`` (a dict or
    a function returning one)."""
    make = valid if callable(valid) else (lambda: dict(valid))
    return [Param(call, n, make, mentions or (n,)) for n in names]


# ---- what the rows call -------------------------------------------------------------------
G = examples.fig12()
LEVELS = B.balance(G).levels
DENSE = ws.nn.Sequential(ws.nn.Linear(4, 3), ws.nn.ReLU(),
                         ws.nn.Residual([ws.nn.Linear(3, 3), ws.nn.ReLU()]),
                         ws.nn.Linear(3, 2)).dense_layers()
JOIN = next(i for i, d in enumerate(DENSE) if d.skip_from is not None)
C = 3  # the switched color


def _graph_with_load(**load):
    return PipelineGraph([Load(**load), Stage("s")], [Buffer("b", "ld", ("s",), 1)])


def _graph_with_stage(**stage):
    return PipelineGraph([Load("ld"), Stage(**stage)], [Buffer("b", "ld", ("s",), 1)])


def _graph_with_buffer(**buffer):
    return PipelineGraph([Load("ld"), Stage("s")], [Buffer(**buffer)])


def _graph_with_insert(**insert):
    return PipelineGraph([Load("ld"), Stage("s")], [Buffer("b", "ld", ("s",), 1)],
                         [InsertedBuffer(**insert)])


def _rewritten(**kw):
    return G.rewritten(**kw)


def _wafer():
    w = ws.Wafer(2, 2)
    w.router(0, 0).set_route(C, rx=["RAMP"], tx=["E"])
    return w


def _send_control(**kw):
    return _wafer().send_control(**kw)


def _set_switch(**kw):
    return _wafer().router(0, 0).set_switch(**kw)


def _set_route(**kw):
    return _wafer().router(0, 0).set_route(**kw)


def _switched(method):
    def call(**kw):
        w = _wafer()
        w.router(0, 0).set_switch(C, [{"tx": ["N"]}])
        return getattr(w.router(0, 0), method)(**kw)
    call.__qualname__ = f"RouterView.{method}"
    return call


OPTIONS = ("mode", "block_bytes", "tune", "insert", "delay_loads")
BALANCE = [
    *params(B.balance, {"graph": G}, "graph", *OPTIONS, "budget", "solver", "time_limit",
            "cross_check"),
    *params(B.BalanceOptions, {}, *OPTIONS, "budget", "solver", "time_limit", "cross_check"),
    *params(B.brute_force, {"graph": G, "window": 2}, "graph", *OPTIONS, "window", "below"),
    *params(B.greedy, {"graph": G}, "graph", "order", "block_bytes"),
    *params(B.simulate, {"graph": G, "batches": 4}, "graph", "batches", "max_steps"),
    *params(B.steady_interval, {"graph": G}, "graph"),
    *params(B.join_intervals, {"graph": G}, "graph"),
    *params(B.full_rate, {"graph": G, "levels": LEVELS}, "graph", "levels"),
    *params(B.path_totals, {"graph": G}, "graph"),
    *params(B.unbalanced_joins, {"graph": G}, "graph"),
    *params(B.to_text, {"graph": G}, "graph"),
    *params(B.blocks, {"depth": 3, "bytes_per_batch": 4, "block_bytes": 8},
            "depth", "bytes_per_batch", "block_bytes"),
    *params(B.graph_blocks, {"graph": G, "block_bytes": 2}, "graph", "block_bytes"),
    *params(B.from_text, {"text": G.to_text()}, "text", mentions=("text", "line", "no nodes")),
    *params(B.from_dict, {"spec": {"loads": ["a"], "buffers": {"b": {"from": "a", "to": "j",
                                                                      "depth": 1}}}},
            "spec", mentions=("spec", "no nodes")),
    *params(B.from_stages, {"stages": [{"name": "a", "load": True}, {"name": "j"}],
                            "buffers": [{"name": "b", "producer": "a", "consumers": ["j"],
                                         "depth": 1}]},
            "stages", "inserts"),
    *params(PipelineGraph, {"nodes": list(G.nodes.values()), "buffers": list(G.buffers.values())},
            "nodes", "inserts"),
    # no buffers at all: "stage 'j' has no input buffer"
    *params(B.from_stages, {"stages": [{"name": "a", "load": True}, {"name": "j"}],
                            "buffers": [{"name": "b", "producer": "a", "consumers": ["j"],
                                         "depth": 1}]}, "buffers", mentions=("buffer",)),
    *params(PipelineGraph, {"nodes": list(G.nodes.values()), "buffers": list(G.buffers.values())},
            "buffers", mentions=("buffer",)),
    *params(_graph_with_load, {"name": "ld"}, "offset", "latency"),
    *params(_graph_with_load, {"name": "ld"}, "name", mentions=("name", "node")),
    *params(_graph_with_stage, {"name": "s"}, "latency"),
    *params(_graph_with_stage, {"name": "s"}, "name", mentions=("name", "node")),
    *params(_graph_with_buffer, {"name": "b", "producer": "ld", "consumers": ("s",), "depth": 1},
            "name", "producer", "depth", "bytes_per_batch", "tunable"),
    *params(_graph_with_buffer, {"name": "b", "producer": "ld", "consumers": ("s",), "depth": 1},
            "consumers", mentions=("consumer",)),
    *params(_graph_with_insert, {"buffer": "b", "consumer": "s", "depth": 1},
            "buffer", "consumer", "depth"),
    *params(_rewritten, {"depths": {"b1": 6}}, "depths", "inserts", "offsets"),
    *params(B.random_graph, {"stages": 5}, "stages", "seed", "loads", "max_depth",
            "bytes_per_batch", "join_prob", "fanout_prob", "reach", "max_latency"),
    *params(examples.fork_join, {"long": 3, "short": 1}, "long", "short"),
    *params(examples.fig11, {}, "balanced"),
    *params(examples.fig12, {}, "bytes_per_batch"),
    *params(examples.two_loads, {}, "depth1", "depth2", "shared"),
    *params(B.model_graph, {"dense": DENSE, "skip_depths": {JOIN: 2}}, "dense", "esize"),
    *params(B.model_graph, {"dense": DENSE, "skip_depths": {JOIN: 2}}, "skip_depths",
            mentions=("skip_depths",)),
    *params(B.balanced_skip_depths, {"dense": DENSE}, "dense", "esize", "mode", "block_bytes"),
    *params(B.predicted_cycles, {"interval_steps": 1.5, "service_cycles": [10, 20]},
            "interval_steps", "service_cycles"),
]

SWITCHES = [
    *params(switches.commands_word, {"commands": ["advance"]}, "commands", "switch_only"),
    *params(switches.control_data, {"commands": ["reset"], "arg": 7}, "commands", "arg",
            "switch_only"),
    *params(switches.decode, {"data": 0x0001_0007}, "data"),
    *params(_send_control, {"at": (0, 0), "color": C, "commands": ["advance"]},
            "at", "color", "commands", "arg", "task", "switch_only", "cycle"),
    *params(_set_switch, {"color": C, "positions": [{"tx": ["N"]}]},
            "color", "positions", "ring", "start"),
    *params(_set_route, {"color": C, "rx": ["W"], "tx": ["E"]}, "color", "rx", "tx"),
    *params(_switched("clear_switch"), {"color": C}, "color"),
    *params(_switched("switch"), {"color": C}, "color"),
    *params(_switched("switch_position"), {"color": C}, "color"),
]

TENSOR = [
    *params(ws.TensorUnit, {"rows": 4, "cols": 4, "lanes": 4}, "rows", "cols", "lanes",
            "dtype", "weight_signed", "data_signed", "input_queue_rows", "sram_bytes",
            "pipeline", "mode", "config"),
]

ROWS = BALANCE + SWITCHES + TENSOR

# ---- the wrong values -----------------------------------------------------------------------
_NUMPY = [np.int64(-1), np.int32(3), np.uint64(2**64 - 1), np.int8(0), np.float64(2.5),
          np.float32("nan"), np.float16("inf"), np.bool_(True), np.array([1, 2]),
          np.array("x"), np.zeros((2, 2)), np.array([], dtype=object)]
_ODD = [b"x", 1j, (), frozenset({1}), range(3), float("nan"), float("inf"), -float("inf")]
WRONG = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from(["", "x", "10", "nan", "yes", "advance", "N", "fig12", "a b"]),
    st.text(max_size=4),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-10**6, -1),
    st.sampled_from([2**31, 2**63, 2**64 + 1, 10**30, -(2**63) - 1]),
    st.sampled_from(_NUMPY),
    st.lists(st.one_of(st.none(), st.integers(-3, 3), st.text(max_size=2)), max_size=3),
    st.dictionaries(st.text(max_size=2), st.one_of(st.integers(-2, 2), st.none()), max_size=2),
    st.builds(object),
    st.sampled_from(_ODD),
)


def _arguments(row: Param, value) -> dict:
    kw = row.valid()
    kw[row.name] = value
    return kw


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.id)
def test_the_valid_arguments_work(row):
    row.call(**row.valid())


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.id)
@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(value=WRONG)
def test_wrong_values_raise_only_wafersim_errors_naming_the_parameter(row, value):
    try:
        row.call(**_arguments(row, value))
    except ws.WaferError as e:
        message = str(e)
        assert any(m in message for m in row.mentions), (
            f"{row.id}={value!r}: the message does not name {row.mentions}: {message}")
