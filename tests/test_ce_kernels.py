"""Conformance programs of the compute element that fit on one PE (examples/kernels/),
each checked against numpy or exact arithmetic."""

import numpy as np
import pytest
from repo_scripts import load_script

def _load(name):
    return load_script(f"examples/kernels/{name}.py")


@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
@pytest.mark.parametrize("rows,cols", [(16, 16), (8, 40), (33, 5)])
def test_program_1_dense_matvec_is_bit_exact(rows, cols, dtype):
    r = _load("dense_matvec").run(rows, cols, dtype, seed=rows + cols)
    assert np.array_equal(r["y"], r["reference"])
    tol = 0.05 if dtype == "fp16" else 1e-5
    assert np.allclose(r["y"].astype(np.float64), r["numpy"], atol=tol)
    # one task per nonzero x_j [0408], plus main and finish
    assert r["stats"]["tasks_started"] == {40: 1, 3: r["nonzero"], 33: 1}


def test_program_1_skips_zero_activations_0408():
    mod = _load("dense_matvec")
    dense = mod.run(16, 16, density=1.0, seed=3)
    sparse = mod.run(16, 16, density=0.25, seed=3)
    assert sparse["stats"]["tasks_started"][3] < dense["stats"]["tasks_started"][3]
    assert sparse["stats"]["cycles"] < dense["stats"]["cycles"]
    assert np.array_equal(sparse["y"], sparse["reference"])


@pytest.mark.parametrize("work,depth", [(20, 6), (5, 6), (40, 8)])
def test_program_4_consumer_throttles_producer_with_block_unblock_0389(work, depth):
    r = _load("throttled_pipeline").run(items=120, work=work, depth=depth)
    assert np.array_equal(r["out"], r["want"])  # nothing lost, order kept
    s, b = r["stats"], r["backlog"]
    assert s["max_input_occupancy"][5] <= depth  # never beyond capacity
    assert s["max_input_occupancy"][5] == depth - 1  # backpressure engaged [0329]
    # Equal average rates: what the CE accepted never runs ahead of what it consumed by
    # more than the queue plus the item in progress.
    assert np.all(b[:, 1] - b[:, 2] <= depth)
    assert b[-1, 1] == b[-1, 2] == 120
    # The producer was held to the consumer's pace (it offered one per cycle).
    assert s["cycles"] > 120 * 3 * work


@pytest.mark.parametrize("capacity,interval", [(4, 1), (2, 1), (16, 25)])
def test_program_5_fifo_push_and_pop_activate_the_drain_task_0384_0540(capacity, interval):
    r = _load("fifo_pipeline").run(items=48, capacity=capacity, interval=interval)
    assert np.array_equal(r["y"], r["want"]) and r["received"]
    s = r["stats"]
    assert s["tasks_started"][45] >= 48  # activated by pushes and pops
    if capacity <= 4 and interval == 1:  # the move out-paces the drain: it waits on a full FIFO
        assert s["microthread_waits"].get("fifo_full", 0) > 0
    if interval > 1:  # the drain out-paces the stream: it waits on an empty FIFO
        assert s["stalls"].get("fifo_empty", 0) > 0


@pytest.mark.parametrize("inputs,outputs,density", [(24, 16, 0.7), (5, 40, 1.0), (12, 8, 0.0),
                                                    (30, 3, 0.3)])
def test_program_6_forward_state_machine_of_fig_11_0410_0419(inputs, outputs, density):
    mod = _load("forward_layer_fig11")
    r = mod.run(inputs, outputs, density=density, seed=inputs)
    assert mod.check(r)
    s = r["stats"]
    assert s["tasks_started"].get(mod.A, 0) == r["nonzero"]
    assert s["tasks_started"][mod.CLOSE] == 1 and s["tasks_started"][mod.P] == outputs
    # Ordering by closeouts [0419]: every accumulate ran before the ring started.
    spans = s["task_spans"]
    last_acc = max((t[3] for t in spans if t[0] == mod.A), default=-1)
    first_close = min(t[2] for t in spans if t[0] == mod.CLOSE)
    assert last_acc < first_close
