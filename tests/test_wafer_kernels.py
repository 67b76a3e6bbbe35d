"""The conformance programs of the compute element on a wafer (examples/kernels/), each
checked against exact once-rounded arithmetic and numpy: y = A x + b on one PE and across a
row of PEs, y = A x on a grid, a throttled producer/consumer pair of PEs, a FIFO fed through
an edge port, and the FIG. 11 forward state machine on a ring of PEs."""

import numpy as np
import pytest
from repo_scripts import load_script

def _load(name):
    return load_script(f"examples/kernels/{name}.py")


@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
def test_program_1_on_a_wafer_pe_is_bit_exact(dtype):
    r = _load("dense_matvec").run_wafer(12, 20, dtype, seed=4)
    assert np.array_equal(r["y"], r["reference"])
    assert np.allclose(r["y"].astype(np.float64), r["numpy"], atol=0.05 if dtype == "fp16" else 1e-5)
    assert r["stats"]["tasks_started"] == {40: 1, 3: r["nonzero"], 33: 1}


@pytest.mark.parametrize("m,n,pes,dtype", [(16, 32, 4, "fp16"), (7, 12, 3, "fp16"),
                                           (10, 9, 2, "fp32"), (5, 6, 1, "fp16"),
                                           (9, 20, 5, "fp32")])
def test_program_2_row_of_pes_streams_x_and_passes_partial_sums_0402_0408(m, n, pes, dtype):
    mod = _load("matvec_wafer")
    r = mod.run_row(m, n, pes, dtype, density=0.7, seed=m + n)
    assert np.array_equal(r["y"], r["reference"])
    assert np.allclose(r["y"].astype(np.float64), r["numpy"], atol=0.05 if dtype == "fp16" else 1e-5)
    s = r["stats"].pes
    for c in range(pes):
        # x is multicast to every PE of the row; each ends the task at once for columns it
        # does not hold, so every PE starts one task per nonzero x_j, plus main and finish.
        assert s[(0, c)]["tasks_started"] == {mod.MAIN: 1, mod.X: r["nonzero"], mod.FINISH: 1}
    assert s.total("element_ops") >= m * r["nonzero"]


@pytest.mark.parametrize("rows,size,block,dtype", [(2, 2, 4, "fp16"), (3, 3, 5, "fp32"),
                                                   (4, 4, 8, "fp16"), (2, 5, 3, "fp16")])
def test_program_3_grid_broadcasts_x_down_columns_and_reduces_along_rows(rows, size, block, dtype):
    r = _load("matvec_wafer").run_grid(size, block, dtype, density=0.8, rows=rows, seed=size)
    assert np.array_equal(r["y"], r["reference"])
    assert np.allclose(r["y"].astype(np.float64), r["numpy"], atol=0.05 if dtype == "fp16" else 1e-5)
    assert len(r["stats"].pes) == rows * size


@pytest.mark.parametrize("threshold", [None, 0])  # the default, and every phase in parallel
def test_program_3_is_bit_identical_with_one_and_two_threads(threshold):
    mod = _load("matvec_wafer")
    one = mod.run_grid(16, 8, threads=1, check=False, seed=9, parallel_min_routers=threshold)
    two = mod.run_grid(16, 8, threads=2, check=False, seed=9, parallel_min_routers=threshold)
    assert one["stats"].parallel_phases == 0 and two["stats"].parallel_phases > 0
    assert np.array_equal(one["y"].view(np.uint16), two["y"].view(np.uint16))
    assert one["stats"].cycles == two["stats"].cycles and one["stats"].moves == two["stats"].moves
    for pe in one["stats"].pes:
        a, b = one["stats"].pes[pe], two["stats"].pes[pe]
        assert (a["cycles"], a["busy_cycles"], a["instructions"]) == \
               (b["cycles"], b["busy_cycles"], b["instructions"])


@pytest.mark.parametrize("work,depth", [(12, 6), (3, 8)])
def test_program_4_consumer_pe_throttles_producer_pe_through_the_fabric_0389_0337(work, depth):
    r = _load("throttled_pipeline").run_wafer(items=80, work=work, depth=depth)
    assert np.array_equal(r["out"], r["want"])  # nothing lost, order kept
    s, p, b = r["stats"], r["producer"], r["backlog"]
    assert s["max_input_occupancy"][5] == depth - 1  # backpressure engaged [0329]
    # Router queues never beyond capacity: (0, 0) carries color C only, (0, 1) C and OUT.
    assert r["router_max"][0, 0] == 2 and r["router_max"][0, 1] <= 4
    assert p["stalls"]["output_full"] > 0           # the producer was held back [0337]
    # Equal average rates: the producer never runs ahead of the consumer by more than the
    # buffering between them (two router queues, the CE queue, the item in progress).
    assert np.all(b[:, 1] - b[:, 2] <= 2 + 2 + depth + 1)
    assert b[-1, 1] == b[-1, 2] == 80


@pytest.mark.parametrize("capacity,interval", [(4, 1), (16, 20)])
def test_program_5_fifo_on_a_wafer_pe_fed_through_an_edge_port_0384_0540(capacity, interval):
    r = _load("fifo_pipeline").run_wafer(items=32, capacity=capacity, interval=interval)
    assert np.array_equal(r["y"], r["want"]) and r["received"]
    assert r["stats"]["tasks_started"][45] >= 32
    if interval > 1:
        assert r["stats"]["stalls"].get("fifo_empty", 0) > 0


@pytest.mark.parametrize("inputs,outputs,density,cols", [(24, 16, 0.7, 1), (24, 16, 0.7, 2),
                                                         (30, 40, 0.5, 3), (7, 8, 1.0, 2)])
def test_program_6_fig11_state_machine_on_a_ring_of_pes_0410_0419(inputs, outputs, density, cols):
    mod = _load("forward_layer_fig11")
    r = mod.run_wafer(inputs, outputs, density=density, seed=outputs, ring_cols=cols)
    assert mod.check_wafer(r)
    pes = r["stats"].pes
    for k, pe in enumerate(r["ring"]):
        s = pes[pe]
        assert s["tasks_started"][mod.CLOSE] == 1                   # one closeout each
        assert s["tasks_started"].get(mod.A, 0) == r["nonzero"]     # the multicast activations
        # f_psum:prop runs once per neuron of the other PEs' start lists [0412].
        assert s["tasks_started"].get(mod.RING[(k - 1) % 2], 0) == outputs - len(
            np.array_split(np.arange(outputs), len(r["ring"]))[k])


def test_program_6_ring_accumulates_every_activation_before_adding_partial_sums_0419(tmp_path):
    mod = _load("forward_layer_fig11")
    r = mod.run_wafer(24, 16, density=0.9, seed=2, ring_cols=2, trace=tmp_path / "ring.json")
    assert mod.check_wafer(r)
    for k, pe in enumerate(r["ring"]):
        spans = r["stats"].pes[pe]["task_spans"]  # (id, how, start, end)
        last_acc = max(t[3] for t in spans if t[0] == mod.A)
        first_prop = min(t[2] for t in spans if t[0] == mod.RING[(k - 1) % 2])
        close = next(t for t in spans if t[0] == mod.CLOSE)
        assert last_acc < close[2] < first_prop
    assert (tmp_path / "ring.json").stat().st_size > 0
