"""The compute elements of a wafer from the host: loading programs over rectangles,
symbols, memory copies, launches, streams through edge ports, per-PE statistics, traces,
and the errors of each (docs/compute_element.md, "On the wafer")."""

import json

import numpy as np
import pytest

import wafersim as ws

COPY = """
; sends its `x` on color 3 when `main` runs; `y` is a second symbol to copy to and from
.data
x:    .space fp16, 4
y:    .space i16, 6
one:  .space u32, 1
dx:   .dsd mem1d, base=x, length=4, stride=2
dout: .dsd fabric_out, color=3, length=4, sw=1
.export x, y, one
.code
.task main, 40
.task other, 41
main:  lds1wds S1[0], dx
       lddwds D[0], dout
       mov16.t D[0], S1[0]
other: term
"""


def test_programs_create_compute_elements_lazily_and_only_where_loaded():
    w = ws.Wafer(256, 256)
    assert w.loaded_pes == [] and not w.pe(3, 4).loaded
    w.load(COPY, rect=(10, 20, 1, 2))
    assert w.loaded_pes == [(10, 20), (10, 21)]
    assert w.pe(10, 21).loaded and not w.pe(10, 22).loaded
    with pytest.raises(ws.ConfigError, match=r"PE \(10, 22\) has no program"):
        w.pe(10, 22).gpr(0)


def test_memcpy_round_trips_per_pe_and_broadcast_arrays():
    w = ws.Wafer(3, 4)
    w.load(COPY, rect=(1, 1, 2, 3))
    per_pe = np.arange(2 * 3 * 6, dtype=np.int16).reshape(2, 3, 6) - 20
    w.memcpy_h2d("y", per_pe, rect=(1, 1, 2, 3))
    assert np.array_equal(w.memcpy_d2h("y", rect=(1, 1, 2, 3)), per_pe)
    assert np.array_equal(w.pe(2, 3).read("y"), per_pe[1, 2])
    w.memcpy_h2d("x", np.array([0.5, -2, 3, 1e4]), rect=(1, 1, 2, 3))  # one array for every PE
    got = w.memcpy_d2h("x", rect=(1, 2, 1, 2))
    assert got.shape == (1, 2, 4) and got.dtype == np.float16
    assert np.array_equal(got[0, 1], np.array([0.5, -2, 3, 1e4], np.float16))
    w.memcpy_h2d("one", np.array([[7, 8, 9], [10, 11, 2**32 - 1]]), rect=(1, 1, 2, 3))  # n = 1
    assert w.memcpy_d2h("one", rect=(1, 1, 2, 3))[:, :, 0].tolist() == [[7, 8, 9], [10, 11, 2**32 - 1]]
    # A single PE as (row, col), and a Rect object.
    w.memcpy_h2d("y", np.full(6, 5), rect=(2, 1))
    assert w.memcpy_d2h("y", rect=ws.Rect(2, 1)).tolist() == [[[5] * 6]]


def test_memcpy_refuses_bad_shapes_dtypes_symbols_and_rectangles():
    w = ws.Wafer(2, 2)
    w.load(COPY, rect=(0, 0, 2, 1))
    with pytest.raises(ws.ConfigError, match=r"expected shape \(2, 1, 6\).*got \(2, 6\)"):
        w.memcpy_h2d("y", np.zeros((2, 6)), rect=(0, 0, 2, 1))
    with pytest.raises(ws.ConfigError, match=r"expected shape \(2, 1, 6\).*got \(5,\)"):
        w.memcpy_h2d("y", np.zeros(5), rect=(0, 0, 2, 1))
    with pytest.raises(ws.ConfigError, match="values must be numbers"):
        w.memcpy_h2d("y", np.array(["a"] * 6), rect=(0, 0, 2, 1))
    with pytest.raises(ws.ConfigError, match="not exactly representable as float16"):
        w.memcpy_h2d("x", np.full(4, 0.1), rect=(0, 0, 2, 1))
    with pytest.raises(ws.ConfigError, match="not exactly representable as int16"):
        w.memcpy_h2d("y", np.full(6, 40000), rect=(0, 0, 2, 1))
    with pytest.raises(ws.ConfigError, match=r"PE \(0, 0\): unknown symbol 'z' \(exported: main, one, other, x, y\)"):
        w.memcpy_d2h("z", rect=(0, 0, 2, 1))
    with pytest.raises(ws.ConfigError, match="'main' is a task, not data"):
        w.memcpy_d2h("main", rect=(0, 0))
    with pytest.raises(ws.ConfigError, match=r"rect \(1, 0\) \+ 2x1 reaches outside the 2x2 wafer"):
        w.memcpy_d2h("y", rect=(1, 0, 2, 1))
    with pytest.raises(ws.ConfigError, match=r"PE \(0, 1\) in rect \(0, 0\) \+ 2x2 has no program"):
        w.memcpy_d2h("y")
    with pytest.raises(ws.ConfigError, match="rect must be"):
        w.memcpy_d2h("y", rect=(0, 0.5))


def test_memcpy_across_different_programs_uses_each_programs_address():
    w = ws.Wafer(1, 2)
    w.pe(0, 0).load(COPY)
    w.pe(0, 1).load(".data\npad: .space u16, 9\n" + COPY.split(".data", 1)[1])  # y elsewhere
    assert w.pe(0, 0).symbols["y"].address != w.pe(0, 1).symbols["y"].address
    vals = np.array([[[1, 2, 3, 4, 5, 6], [7, 8, 9, 10, 11, 12]]], np.int16)
    w.memcpy_h2d("y", vals, rect=(0, 0, 1, 2))
    assert np.array_equal(w.memcpy_d2h("y", rect=(0, 0, 1, 2)), vals)
    w.pe(0, 1).load(COPY.replace("y:    .space i16, 6", "y:    .space i16, 5"))
    with pytest.raises(ws.ConfigError, match="different shapes"):
        w.memcpy_d2h("y", rect=(0, 0, 1, 2))


def test_launch_starts_a_task_in_a_rectangle_or_wherever_the_program_has_it():
    w = ws.Wafer(2, 3)
    w.load(COPY, rect=(0, 0, 2, 2))
    w.route(3, [(0, 0), (0, -1)])
    w.route(3, [(1, 0), (1, -1)])
    w.memcpy_h2d("x", np.arange(4), rect=(0, 0, 2, 2))
    assert w.launch("main", rect=(0, 0, 2, 1)) == 2
    assert w.pe(1, 0).active == {40} and w.pe(0, 1).active == set()
    assert w.launch("other") == 4
    assert w.pe(0, 1).active == {41}
    w.run()
    got = w.collect()
    assert len(got) == 8 and np.array_equal(got.values("fp16")[got.row[~got.ctrl] == 1], [0, 1, 2, 3])
    with pytest.raises(ws.ConfigError, match=r"launch: PE \(0, 0\): unknown task 'nope'"):
        w.launch("nope", rect=(0, 0))
    with pytest.raises(ws.ConfigError, match="no loaded program has a task 'nope'"):
        w.launch("nope")
    with pytest.raises(ws.ConfigError, match=r"PE \(0, 2\) in rect \(0, 0\) \+ 1x3 has no program"):
        w.launch("main", rect=(0, 0, 1, 3))


def test_pe_handle_shares_the_lone_pe_accessors():
    w = ws.Wafer(1, 1)
    pe = w.pe(0, 0)
    prog = pe.load(COPY)
    assert pe.program is prog and set(pe.symbols) == {"x", "y", "one", "main", "other"}
    pe.write("x", [1, 2, 3, 4])
    assert pe.read("x").tolist() == [1, 2, 3, 4]
    pe.set_gpr(5, 77)
    assert pe.gpr(5) == 77 and pe.running_task is None and pe.blocked == set()
    pe.launch("main")
    assert pe.active == {40}
    assert "jmp" in pe.disassemble(4 * 40, 1)
    assert "active ids: 40" in pe.describe_wait()


def test_run_reports_each_runs_pe_statistics_and_the_handle_keeps_totals():
    w = ws.Wafer(1, 2)
    w.load(COPY, rect=(0, 0, 1, 2))
    w.route(3, [(0, 0), (0, 1), (0, 2)])  # through (0, 1) to the east edge port
    w.memcpy_h2d("x", np.arange(4), rect=(0, 0, 1, 2))
    w.launch("main", rect=(0, 0))
    w.launch("other", rect=(0, 1))
    first = w.run()
    s = first.pes[(0, 0)]
    assert s["instructions"] == {"jmp": 1, "lds1wds": 1, "lddwds": 1, "mov16": 1}
    assert s["tasks_started"] == {40: 1} and s["wavelets_out"] == 4 and s["element_ops"] == 4
    assert first.pes[(0, 1)]["tasks_started"] == {41: 1} and set(first.pes) == {(0, 0), (0, 1)}
    assert first.pes.total("instructions") == {"jmp": 2, "lddwds": 1, "lds1wds": 1, "mov16": 1,
                                               "nop": 1}
    assert first.pes.array("wavelets_out").tolist() == [[4, 0]]
    w.launch("main", rect=(0, 0))
    second = w.run()
    assert second.pes[(0, 0)]["instructions"]["mov16"] == 1      # this run's share
    assert w.pe(0, 0).stats()["instructions"]["mov16"] == 2       # since the load
    w.pe(0, 0).reset_stats()
    assert w.pe(0, 0).stats()["instructions"] == {}
    assert w.collect().values("fp16").tolist() == [0, 1, 2, 3] * 2


def test_run_writes_a_chrome_trace_with_task_spans_per_pe(tmp_path):
    w = ws.Wafer(1, 2)
    w.load(COPY, rect=(0, 0, 1, 2))
    w.route(3, [(0, 0), (0, 1), (0, 2)])
    w.launch("main", rect=(0, 0))
    w.launch("other")
    stats = w.run(trace=tmp_path / "run.json")
    doc = json.loads((tmp_path / "run.json").read_text())
    events = doc["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert names == {0: "PE(0,0)", 1: "PE(0,1)"}
    spans = [e for e in events if e["ph"] == "X"]
    for e in spans:
        assert {"name", "ts", "dur", "pid", "tid"} <= set(e) and e["dur"] >= 1
    by_pe = {pid: sorted(e["name"] for e in spans if e["pid"] == pid) for pid in names}
    assert by_pe == {0: ["task main", "task other"], 1: ["task other"]}
    main = next(e for e in spans if e["name"] == "task main")
    assert main["ts"] + main["dur"] <= stats.end_cycle and main["args"]["start"] == "activation"
    # Tracing is only on for that run.
    w.launch("other")
    assert w.run().pes[(0, 0)]["task_spans"] == []


def test_streams_through_edge_ports_carry_numpy_values_both_ways():
    w = ws.Wafer(1, 1)
    w.pe(0, 0).load("""
.data
din:  .dsd fabric_in, length=6, sw=2, sc=1, utid=5
dout: .dsd fabric_out, color=6, length=6, sw=2
.code
.task main, 40
main: lds1wds S1[0], din
      lddwds D[0], dout
      block 5
      fnegh.t D[0], S1[0]
""")
    w.route(5, [(0, -1), (0, 0)])
    w.route(6, [(0, 0), (1, 0)])
    w.launch("main")
    x = np.array([1, -2.5, 3, 0.25, 8, -1], np.float16)
    assert w.stream((0, -1), 5, x, sw=2) == 3  # two fp16 per dense wavelet [0427]
    w.run()
    assert np.array_equal(w.collect((1, 0)).values("fp16", sw=2, color=6), -x)


def test_reloading_replaces_an_idle_pe_and_refuses_a_busy_one():
    w = ws.Wafer(1, 2, watchdog=50)
    w.pe(0, 0).load(COPY)
    w.pe(0, 0).write("y", np.arange(6))
    w.pe(0, 0).load(COPY)
    assert w.pe(0, 0).read("y").tolist() == [0] * 6  # a fresh compute element
    w.pe(0, 0).launch("main")  # color 3 has no route: the run stops with the PE mid-send
    with pytest.raises(ws.RouteError, match="color 3 has no route"):
        w.run()
    with pytest.raises(ws.ConfigError, match=r"PE \(0, 0\) is still busy"):
        w.pe(0, 0).load(COPY)


def test_a_ramp_belongs_to_the_compute_element_once_a_program_is_loaded():
    w = ws.Wafer(1, 2)
    w.route(3, [(0, 1), (0, 0)])
    w.check_routes()  # a host port stands in on both ramps until programs arrive
    w.pe(0, 0).load(COPY)  # ...and an unused one gives way
    w.pe(0, 1).load(COPY)
    with pytest.raises(ws.ConfigError, match=r"PE \(0, 1\) has a compute element on its ramp"):
        w.inject((0, 1), 3, 1)
    w2 = ws.Wafer(1, 1)
    w2.route(3, [(0, 0), (0, 1)])
    w2.route(4, [(0, -1), (0, 0)])
    w2.inject((0, 0), 3, [1, 2])
    with pytest.raises(ws.ConfigError, match="host port holding 2 wavelet"):
        w2.pe(0, 0).load(COPY)
    w3 = ws.Wafer(2, 2, mode="packets")
    with pytest.raises(ws.ConfigError, match="packet mode"):
        w3.pe(0, 0).load(COPY)


def test_ce_options_of_the_wafer_reach_every_compute_element():
    w = ws.Wafer(1, 2, colors=16, ce={"input_queue_depth": 9, "memory_bytes": 32 * 1024,
                                      "rng_seed": 5})
    w.load(COPY, rect=(0, 0, 1, 2))
    cfg = w.pe(0, 1).config
    assert (cfg.input_queue_depth, cfg.memory_bytes, cfg.fabric_colors) == (9, 32 * 1024, 16)
    assert (cfg.row, cfg.col, cfg.rng_seed) == (0, 1, 6)  # seed + router id
    with pytest.raises(ws.ConfigError, match="unknown option.*queue_dept"):
        ws.Wafer(1, 1, ce={"queue_dept": 3})
    with pytest.raises(ws.ConfigError, match="input_queue_depth must be an integer in 2..255"):
        ws.Wafer(1, 1, ce={"input_queue_depth": 1})
