"""User mistakes come back as wafersim errors naming the parameter: values too large for the
C++ core's integer types (which pybind11 used to refuse with a TypeError and a signature
dump), route points that are not (row, col) pairs, malformed descriptors, and trace paths
into missing folders (checked before the run, not after it)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import wafersim as ws

HUGE = [2**31, 2**40, 2**64, -2**63 - 1]
WIDE = [2**63, 2**64, 2**70, -1]  # for parameters whose valid range reaches 2**62 or more


def _lone_pe():
    return ws.pe.LonePE()


# (what, call taking the value, the parameter name the message must give, values to try)
CALLS = [
    ("Wafer queue_depth", lambda v: ws.Wafer(2, 2, queue_depth=v), "queue_depth", HUGE),
    ("Wafer rows", lambda v: ws.Wafer(v, 2), "rows", HUGE),
    ("Wafer cols", lambda v: ws.Wafer(2, v), "cols", HUGE),
    ("Wafer colors", lambda v: ws.Wafer(2, 2, colors=v), "colors", HUGE),
    ("Wafer skip", lambda v: ws.Wafer(2, 2, skip=v), "skip", HUGE),
    ("Wafer priority_split", lambda v: ws.Wafer(2, 2, priority_split=v), "priority_split", HUGE),
    ("Wafer threads", lambda v: ws.Wafer(2, 2, threads=v), "threads", HUGE),
    ("Wafer watchdog", lambda v: ws.Wafer(2, 2, watchdog=v), "watchdog", WIDE),
    ("Wafer cycle_limit", lambda v: ws.Wafer(2, 2, cycle_limit=v), "cycle_limit", WIDE),
    ("Wafer ce rng_seed", lambda v: ws.Wafer(2, 2, ce={"rng_seed": v}), "rng_seed", WIDE[1:]),
    ("Wafer.threads", lambda v: setattr(ws.Wafer(1, 1), "threads", v), "threads", HUGE),
    ("Wafer.watchdog", lambda v: setattr(ws.Wafer(1, 1), "watchdog", v), "watchdog", WIDE),
    ("Wafer.parallel_min_routers", lambda v: setattr(ws.Wafer(1, 1), "parallel_min_routers", v),
     "parallel_min_routers", WIDE),
    ("Wafer.run", lambda v: ws.Wafer(1, 1).run(v), "max_cycles", WIDE),
    ("LonePE rng_seed", lambda v: ws.pe.LonePE(rng_seed=v), "rng_seed", WIDE[1:]),
    ("LonePE position", lambda v: ws.pe.LonePE(position=(v, 0)), "position", HUGE),
    ("LonePE inject data", lambda v: _lone_pe().inject_wavelets(1, [v]), "data", [2**32, 2**40, 2**64, -1]),
    ("LonePE inject index", lambda v: _lone_pe().inject_wavelets(1, [0], index=[v]), "index", HUGE),
    ("TensorUnit sram_bytes", lambda v: ws.TensorUnit(sram_bytes=v), "sram_bytes", HUGE),
    ("TensorUnit rows", lambda v: ws.TensorUnit(rows=v), "rows", HUGE),
    ("TensorUnit input_queue_rows", lambda v: ws.TensorUnit(input_queue_rows=v),
     "input_queue_rows", HUGE),
    ("MatrixArray lanes", lambda v: ws.tensor.MatrixArray(lanes=v), "lanes", HUGE),
    ("VectorEngine lanes", lambda v: ws.tensor.VectorEngine(v), "lanes", HUGE),
    ("VectorEngine read_sram", lambda v: ws.tensor.VectorEngine(4).read_sram(v, 1), "addr", WIDE),
    ("max_pool stride", lambda v: ws.tensor.max_pool(np.zeros((1, 2, 2), np.uint8), 1, v), "stride",
     HUGE),
    ("conv2d padding",
     lambda v: ws.TensorUnit(rows=4, cols=4, lanes=4).conv2d(
         np.zeros((1, 4, 4), np.uint8), np.zeros((4, 1, 1, 1), np.int8), scale=1, shift=0,
         padding=v), "padding", HUGE),
    ("round_fp16 seed", lambda v: ws.numerics.round_fp16(np.ones(2), "stochastic", seed=v), "seed",
     WIDE[1:]),
    ("fma seed", lambda v: ws.numerics.fma(*[np.ones(2, np.float16)] * 3, seed=v), "seed", WIDE[1:]),
    ("LfsrBank seed", lambda v: ws.numerics.LfsrBank(4, v), "seed", WIDE[1:]),
    ("LfsrBank count", lambda v: ws.numerics.LfsrBank(v, 0), "count", HUGE),
    ("traffic seed", lambda v: ws.noc.traffic.bernoulli("uniform", 2, 2, 0.1, 4, seed=v), "seed",
     [-1, 2**64, 2**70]),
    ("pack_stride", lambda v: ws.asm.pack_stride(v), "stride", HUGE),
    ("unpack_dsd", lambda v: ws.asm.unpack_dsd(v), "raw", [2**48, 2**64, -1]),
]


@pytest.mark.parametrize("what, call, name, values", CALLS, ids=[c[0] for c in CALLS])
def test_values_too_large_for_the_core_raise_wafer_errors_naming_the_parameter(what, call, name,
                                                                              values):
    for v in values:
        with pytest.raises(ws.WaferError) as err:
            call(v)
        msg = str(err.value)
        assert name in msg and "incompatible" not in msg, (what, v, msg)


def test_the_examples_of_the_report():
    with pytest.raises(ws.ConfigError, match="queue_depth must be in 1..64"):
        ws.Wafer(4, 4, queue_depth=2**40)
    with pytest.raises(ws.ConfigError, match="rows must be in 1..65536"):
        ws.Wafer(2**31, 2)
    with pytest.raises(ws.ConfigError, match="TensorUnitConfig.sram_bytes"):
        ws.TensorUnit(sram_bytes=2**40)
    with pytest.raises(ws.ConfigError, match="threads must be in 1..1024"):
        ws.Wafer(2, 2, threads=2**40)
    with pytest.raises(ws.ConfigError, match="seed must be a non-negative integer below 2\\*\\*64"):
        ws.numerics.round_fp16(np.ones(2), "stochastic", seed=2**64)


def test_the_core_bounds_thread_counts_too():
    w = ws.Wafer(1, 1)
    with pytest.raises(ws.ConfigError, match="threads must be in 0..1024"):
        w._core.threads = 5000  # would ask OpenMP for 5000 threads


def test_route_points_must_be_row_col_pairs():
    w = ws.Wafer(2, 2)
    with pytest.raises(ws.ConfigError, match=r"path\[0\] must be a \(row, col\) pair of integers, got \(0, 0, 0\)"):
        w.route(3, [(0, 0, 0), (0, 1, 0)])
    with pytest.raises(ws.ConfigError, match=r"path\[1\] must be a \(row, col\) pair of integers"):
        w.route(3, [(0, 0), (0, 1.5)])
    with pytest.raises(ws.ConfigError, match=r"path must be a \(row, col\) point or a list of them, got 7"):
        w.route(3, 7)
    with pytest.raises(ws.ConfigError, match=r"src must be a \(row, col\) pair"):
        ws.layout.path(w.topology, (0, 0, 1), (1, 1))
    with pytest.raises(ws.ConfigError, match=r"dsts\[0\] must be a \(row, col\) pair"):
        w.route_tree(3, (0, 0), [(1, 1, 1)])
    with pytest.raises(ws.ConfigError, match="position must be a"):
        ws.pe.LonePE(position=(0, 0, 0))
    w.route(3, [np.array([0, 0]), (np.int64(0), 1)])  # numpy integers are fine
    assert w.router(0, 1).route(3) == (["W"], ["RAMP"])


def test_descriptor_errors_are_program_errors_and_value_errors():
    for call in (lambda: ws.asm.unpack_dsd(-1), lambda: ws.asm.unpack_dsd(2**48),
                 lambda: ws.asm.unpack_dsd("x"), lambda: ws.asm.unpack_dsd(2 << 45),
                 lambda: ws.asm.unpack_dsd(0, role="sideways"),
                 lambda: ws.asm.unpack_xdsd(2**51), lambda: ws.asm.pack_dsd("mem1d", base="x"),
                 lambda: ws.asm.pack_dsd("mem1d", base=2**40), lambda: ws.asm.pack_stride(2**14),
                 lambda: ws.asm.pack_xdsd("mem4d", dims=[2, 2], strides=["srx"]),
                 lambda: ws.asm.pack_dsd("mem4d", xdsr="3")):
        with pytest.raises(ws.ProgramError) as err:
            call()
        assert isinstance(err.value, ValueError) and err.value.category == "usage"
    raw = ws.asm.pack_dsd("mem1d", base=136, length=10, stride=-2, wli=True)
    assert ws.asm.unpack_dsd(raw)["base"] == 136 and ws.asm.unpack_dsd(np.uint64(raw))["stride"] == -2


def test_a_trace_into_a_missing_folder_is_refused_before_the_run(tmp_path):
    w = ws.Wafer(1, 2)
    w.pe(0, 0).load(".code\n.task main, 40\nmain: nop.t\n")
    w.launch("main")
    for bad, match in [(tmp_path / "missing" / "run.json", "does not exist"),
                       (tmp_path, "is a folder"), (3.5, "must be a file path")]:
        with pytest.raises(ws.ConfigError, match=match):
            w.run(trace=bad)
        assert w.cycle == 0  # nothing ran
    w.run(trace=tmp_path / "run.json")
    assert (tmp_path / "run.json").stat().st_size > 0 and w.cycle > 0

    pe = ws.pe.LonePE(trace=True)
    pe.load(".code\n.task main, 40\nmain: nop.t\n")
    pe.launch("main")
    with pytest.raises(ws.ConfigError, match="does not exist"):
        pe.run(trace=tmp_path / "missing" / "pe.json")
    assert pe.cycle == 0
    with pytest.raises(ws.ConfigError, match="tracing is off"):
        ws.pe.LonePE().run(trace=tmp_path / "pe.json")


_INTS = st.one_of(st.integers(-2**70, 2**70), st.sampled_from([0, 1, 2**31 - 1, 2**31, 2**32,
                                                                2**63, 2**64, -1]))
_OPTIONS = ["rows", "cols", "colors", "queue_depth", "skip", "priority_split", "threads",
            "watchdog", "cycle_limit", "diag_hop_cycles"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(option=st.sampled_from(_OPTIONS), value=_INTS)
def test_fuzzed_wafer_options_either_build_or_raise_config_error(option, value):
    kw = {"rows": 2, "cols": 2, option: value}
    if option in ("rows", "cols") and 0 < value <= 65536:
        kw[option] = min(value, 64)  # a valid size: keep the wafer small
    try:
        w = ws.Wafer(**kw)
    except ws.ConfigError as e:
        assert option.split("_")[0] in str(e) and "incompatible" not in str(e)
    else:
        assert w.rows * w.cols >= 1


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(option=st.sampled_from(["memory_bytes", "code_bytes", "input_queue_depth",
                               "output_queue_depth", "microthreads", "task_start_latency",
                               "rng_seed", "rng_resources", "router_queue_depth"]),
       value=_INTS)
def test_fuzzed_lone_pe_options_either_build_or_raise_config_error(option, value):
    try:
        pe = ws.pe.LonePE(**{option: value})
    except ws.ConfigError as e:
        assert option.split("_")[0] in str(e) and "incompatible" not in str(e)
    else:
        assert pe.config.memory_bytes > pe.config.code_bytes
