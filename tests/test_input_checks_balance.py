"""ws.balance checks its input: a wrong value raises a ConfigError (a ValueError) naming
the parameter and the value before anything is solved or simulated; numpy integers work
wherever Python integers do; an empty graph is refused (docs/balance.md)."""

import math

import numpy as np
import pytest

import wafersim as ws
from wafersim.balance import Buffer, InsertedBuffer, Load, PipelineGraph, Stage, examples

B = ws.balance
G = examples.fig12()
DENSE = ws.nn.Sequential(ws.nn.Linear(4, 3), ws.nn.ReLU(),
                         ws.nn.Residual([ws.nn.Linear(3, 3), ws.nn.ReLU()]),
                         ws.nn.Linear(3, 2)).dense_layers()


def _raises(call, *needles, error=ws.ConfigError):
    """``call()`` raises ``error`` whose message holds every needle."""
    with pytest.raises(error) as e:
        call()
    for n in needles:
        assert n in str(e.value), (n, str(e.value))
    return e.value


@pytest.mark.parametrize("call,param,shown", [
    (lambda: B.balance(G, time_limit="10"), "time_limit", "'10'"),
    (lambda: B.balance(G, time_limit=None), "time_limit", "None"),
    (lambda: B.balance(G, time_limit=math.nan), "time_limit", "nan"),
    (lambda: B.balance(G, time_limit=-1), "time_limit", "-1"),
    (lambda: B.balance(G, block_bytes=2.0), "block_bytes", "2.0"),
    (lambda: B.balance(G, tune="no"), "tune", "'no'"),
    (lambda: B.balance(G, budget="3"), "budget", "'3'"),
    (lambda: B.balance(G, mode=None), "mode", "None"),
    (lambda: B.balance(G, solver=["lp"]), "solver", "['lp']"),
    (lambda: B.balance("fig12"), "graph", "'fig12'"),
    (lambda: B.simulate(G, max_steps="x"), "max_steps", "'x'"),
    (lambda: B.simulate(G, max_steps=0), "max_steps", "0"),
    (lambda: B.simulate(G, batches=2.5), "batches", "2.5"),
    (lambda: B.simulate(G, batches=10**7), "batches", "10000000"),
    (lambda: B.from_text(None), "text", "None"),
    (lambda: B.from_text(b"load a"), "text", "b'load a'"),
    (lambda: B.from_dict(["loads"]), "spec", "['loads']"),
    (lambda: B.from_dict({"loads": 5}), "spec['loads']", "5"),
    (lambda: B.from_dict({"loads": {"a": 5}}), "spec['loads']['a']", "5"),
    (lambda: B.from_stages(None, []), "stages", "None"),
    (lambda: B.from_stages([{"name": "a", "load": "yes"}], []), "load of stage 'a'", "'yes'"),
    (lambda: B.model_graph("x"), "dense", "'x'"),
    (lambda: B.model_graph(["x"]), "dense[0]", "'x'"),
    (lambda: B.model_graph([]), "dense", "empty"),
    (lambda: B.model_graph(DENSE, {0: 2}), "skip_depths", "[0]"),
    (lambda: B.model_graph(DENSE, {1: 2.5}), "skip_depths[1]", "2.5"),
    (lambda: B.model_graph(DENSE, esize=None), "esize", "None"),
    (lambda: B.balanced_skip_depths(DENSE[:1], mode="fast"), "mode", "'fast'"),
    (lambda: B.predicted_cycles(1.0, None), "service_cycles", "None"),
    (lambda: B.predicted_cycles(1.0, ["x"]), "service_cycles[0]", "'x'"),
    (lambda: B.predicted_cycles("1", [3]), "interval_steps", "'1'"),
    (lambda: B.brute_force(G, window=10**6), "window", "1000000"),
    (lambda: B.brute_force(G, window={"dram": 1}), "window", "missing"),
    (lambda: B.brute_force(G, below=-1), "below", "-1"),
    (lambda: B.greedy(G, order=5), "order", "5"),
    (lambda: B.greedy(G, order=["J3"]), "order", "'J3'"),
    (lambda: B.full_rate(G, None), "levels", "None"),
    (lambda: B.full_rate(G, {"dram": 0}), "levels", "'J1'"),
    (lambda: B.blocks(-1, 4, 8), "depth", "-1"),
    (lambda: B.blocks(3, 4, None), "block_bytes", "None"),
    (lambda: B.graph_blocks(G, 0), "block_bytes", "0"),
    (lambda: B.random_graph("5"), "stages", "'5'"),
    (lambda: B.random_graph(5, join_prob=1.5), "join_prob", "1.5"),
    (lambda: B.random_graph(5, bytes_per_batch=[]), "bytes_per_batch", "empty"),
    (lambda: B.random_graph(5, seed=None), "seed", "None"),
    (lambda: examples.fork_join(None, 1), "long", "None"),
    (lambda: examples.fig11(balanced="yes"), "balanced", "'yes'"),
    (lambda: examples.two_loads(shared=1), "shared", "1"),
    (lambda: G.rewritten(depths=5), "depths", "5"),
    (lambda: G.rewritten(offsets={"J1": 2}), "load", "'J1'"),
])
def test_a_wrong_value_raises_a_config_error_naming_parameter_and_value(call, param, shown):
    e = _raises(call, param, shown)
    assert isinstance(e, ValueError) and e.category == "usage"


@pytest.mark.parametrize("build,needle", [
    (lambda: PipelineGraph([Load("a"), Stage("s")], [Buffer("b", "a", 5, 1)]), "consumers"),
    (lambda: PipelineGraph([Load("a"), Stage("s")], [Buffer("b", ["a"], ("s",), 1)]),
     "producer of buffer 'b'"),
    (lambda: PipelineGraph([Load("a"), Stage("s")], [Buffer("b", "a", ([1],), 1)]),
     "a consumer of buffer 'b'"),
    (lambda: PipelineGraph([Load("a"), Stage("s")], [Buffer("b", "a", "s", "2")]),
     "depth of buffer 'b'"),
    (lambda: PipelineGraph([Load("a"), Stage("s")], [Buffer("b", "a", "s", 2**40)]),
     "depth of buffer 'b' (batches) must be an integer in 1..2147483647, got 1099511627776"),
    (lambda: PipelineGraph([Load("a"), Stage("s")], [Buffer("b", "a", "s", 1)],
                           [InsertedBuffer(["b"], "s", 1)]), "buffer of an inserted buffer"),
    (lambda: PipelineGraph(None, []), "nodes"),
    (lambda: PipelineGraph([Load("a")], 7), "buffers"),
])
def test_bad_records_name_the_field(build, needle):
    _raises(build, needle)


def test_numpy_integers_are_depths_sizes_and_options_like_python_integers():
    i64, i32, u8 = np.int64, np.int32, np.uint8
    by_numpy = PipelineGraph(
        [Load("dram", offset=u8(0), latency=i32(1)), Stage("J1", latency=i64(1)), Stage("J2")],
        [Buffer("b1", "dram", ("J1",), i64(5), bytes_per_batch=i32(4)),
         Buffer("b2", "dram", np.array(["J1", "J2"]), u8(3), bytes_per_batch=np.int16(4),
                tunable=np.bool_(True)),
         Buffer("b3", "dram", ("J2",), np.uint64(4), bytes_per_batch=4)])
    assert by_numpy == examples.fig12(bytes_per_batch=4)
    assert all(type(b.depth) is int and type(b.bytes_per_batch) is int
               for b in by_numpy.buffers.values())
    assert type(by_numpy.buffers["b2"].tunable) is bool
    got = B.balance(by_numpy, block_bytes=i64(8), budget=np.int32(10), time_limit=np.float32(5))
    want = B.balance(examples.fig12(bytes_per_batch=4), block_bytes=8, budget=10)
    assert got.depths == want.depths and got.blocks_added == want.blocks_added
    assert B.blocks(i64(3), u8(4), i32(8)) == 2 == B.blocks(3, 4, 8)   # ceil(12 / 8)
    assert B.simulate(examples.fig11(), batches=np.int64(5)).completion == [3, 5, 7, 9, 11]
    assert B.from_dict({"loads": ["a"], "buffers": {"b": {"from": "a", "to": "j",
                                                          "depth": np.int64(2)}}}) == \
        B.from_text("load a\nbuffer b a -> j depth=2")
    assert examples.fork_join(np.int64(3), np.int8(1)) == examples.fork_join(3, 1)


def test_an_empty_graph_is_refused_everywhere_it_can_come_from():
    for build in (lambda: PipelineGraph([], []), lambda: B.from_text(""),
                  lambda: B.from_text("# nothing but a comment\n"), lambda: B.from_dict({}),
                  lambda: B.from_stages([], [])):
        _raises(build, "the graph has no nodes", "at least one load")


def test_a_graph_of_one_load_balances_to_nothing():
    g = PipelineGraph([Load("a")], [])
    res = B.balance(g)
    assert res.blocks_added == 0 and res.depths == {} and "nothing to change" in res.summary()


def test_max_steps_too_short_is_a_cycle_limit_of_the_caller_not_an_internal_deadlock():
    # FIG. 11A: batch k leaves the join at step 2k + 1 [0157], so 4 batches need 9 steps
    assert B.simulate(examples.fig11(), batches=4, max_steps=9).completion == [3, 5, 7, 9]
    e = _raises(lambda: B.simulate(examples.fig11(), batches=4, max_steps=8), "max_steps=8",
                "4 batches", error=ws.CycleLimitError)
    assert e.category == "usage"


def test_time_limit_may_be_infinite():
    assert B.balance(G, time_limit=math.inf).blocks_added == \
        B.balance(G).blocks_added
