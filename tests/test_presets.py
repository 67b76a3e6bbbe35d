"""Wafer presets: wafers the size of published systems, and emulated time at their clock."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import wafersim as ws


def test_presets_have_the_published_sizes_memory_and_clock():
    cs2, cs3 = ws.presets.PRESETS["cs2"], ws.presets.PRESETS["cs3"]
    assert (cs2.rows, cs2.cols, cs2.pes) == (757, 996, 753_972)
    assert (cs3.rows, cs3.cols, cs3.pes) == (762, 1172, 893_064)
    assert cs2.memory_bytes == cs3.memory_bytes == 48 * 1024
    assert cs2.clock_hz == cs3.clock_hz == 850e6


def test_a_preset_builds_a_wafer_of_its_size_with_its_memory_and_clock():
    w = ws.Wafer.preset("cs2", threads=1)
    assert (w.rows, w.cols, w.preset_name, w.clock_hz) == (757, 996, "cs2", 850e6)
    assert w.ce_config.memory_bytes == 48 * 1024 and w.threads == 1
    assert w.describe_time(850) == "850 cycles = 1 us at 850 MHz"
    w = ws.Wafer.preset("CS3 ", ce={"memory_bytes": 32 * 1024})   # names are forgiving
    assert (w.rows, w.cols, w.ce_config.memory_bytes) == (762, 1172, 32 * 1024)


@pytest.mark.parametrize("name", ["cs4", "", None, 3])
def test_a_bad_preset_name_lists_the_presets(name):
    with pytest.raises(ws.ConfigError, match=r"there is no wafer preset .*; presets: cs2 "
                                             r"\(757 x 996 = 753,972 PEs, .*cs3 \(762 x 1172"):
        ws.Wafer.preset(name)


def test_a_preset_refuses_another_size_and_bad_options():
    with pytest.raises(ws.ConfigError, match="sets rows; use Wafer"):
        ws.Wafer.preset("cs2", rows=4)
    with pytest.raises(ws.ConfigError, match="ce must be a dict"):
        ws.Wafer.preset("cs2", ce=5)


def test_emulated_time_is_cycles_over_the_clock():
    """4,777 cycles (program 3 over the full wafer) at 850 MHz: 5.62 us."""
    assert ws.presets.cycles_to_seconds(4777, 850e6) == 4777 / 850e6
    assert ws.presets.describe_time(4777, 850e6) == "4,777 cycles = 5.62 us at 850 MHz"
    assert ws.presets.describe_time(0, 850e6) == "0 cycles = 0 ns at 850 MHz"
    assert ws.presets.describe_time(2 * 850_000_000, 850e6) == \
        "1,700,000,000 cycles = 2 s at 850 MHz"
    w = ws.Wafer(1, 2)
    with pytest.raises(ws.ConfigError, match="this wafer has no clock"):
        w.describe_time()
    w.clock_hz = 1e9
    w.route(1, [(0, 0), (0, 1)])
    w.inject((0, 0), 1, 0, cycle=9)
    w.run(max_cycles=7)
    assert w.describe_time() == "7 cycles = 7 ns at 1000 MHz"
    for bad in (0, -1.0, "850", float("inf"), True):
        with pytest.raises(ws.ConfigError, match="clock_hz must be a positive number"):
            w.clock_hz = bad


def test_wafersim_info_lists_the_presets():
    exe = Path(sys.executable).parent / "wafersim"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "wafersim"]
    out = subprocess.run(cmd + ["info"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "cs2" in out.stdout and "757 x 996 = 753,972 PEs, 48 KiB per PE, 850 MHz" in out.stdout
    assert "cs3" in out.stdout and "762 x 1172 = 893,064 PEs" in out.stdout


def _available_gb() -> float:
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 2**20
    return 0.0


@pytest.mark.slow
def test_the_cs2_preset_runs_a_small_kernel_on_every_pe():
    """Every one of the 753,972 PEs loads, receives its 16 values, runs its task once and
    gives the values back (about 11 GB; benchmarks/bench_pe.py --preset reports the memory)."""
    if _available_gb() < 14:
        pytest.skip("needs about 14 GB of available memory")
    w = ws.Wafer.preset("cs2")
    w.load("""
    .data
    .export x
    x: .space u16, 2
    .code
    .task main, 40
    main: movi r1, 1
          term
    """)
    x = np.arange(2 * w.rows * w.cols, dtype=np.uint16).reshape(w.rows, w.cols, 2)
    w.memcpy_h2d("x", x)
    w.launch("main")
    s = w.run()
    assert s.quiescent and len(s.pes) == w.rows * w.cols
    assert np.array_equal(w.memcpy_d2h("x"), x)
    assert all(s.pes[p]["busy_cycles"] > 0 for p in [(0, 0), (756, 995), (400, 500)])
