"""The cycle loop's own team of threads (src/wafersim/sim/row_team.hpp): phases handed to
threads that spin briefly, then sleep, each taking its own rows first and then what is
left of the others'. Results and cycle counts do not depend on the
thread count or on how long threads spin; the threads end with the wafer and survive a
fork; a bad spin time is refused. Not timed (benchmarks/bench_threads.py times it)."""

import os
import subprocess
import sys

import numpy as np
import pytest

import wafersim as ws
from wafersim.errors import ConfigError

from test_fabric_sim import traffic_wafer


def _digest(w, s):
    a = w.collect()
    return (s.cycles, s.moves, s.delivered, tuple(s.latency_histogram),
            tuple(np.concatenate([a.row, a.col, a.color, a.data, a.arrived]).tolist()))


@pytest.mark.parametrize("mode", ["packets", "colors"])
def test_results_do_not_depend_on_threads_or_spin(mode):
    runs = {}
    # (5 and 4 threads on a 2-core machine: threads lose their chunks' rows to the
    # others all the time, which must not change anything either.)
    for threads, spin in ((1, 50), (2, 0), (2, 50), (3, 2000), (5, 0), (4, 50)):
        w = traffic_wafer(threads, mode)
        w.spin_wait = spin
        assert w.spin_wait == spin
        s = w.run()
        if threads > 1:
            assert s.parallel_phases > 0            # the team ran the phases
        runs[(threads, spin)] = _digest(w, s)
    first = runs[(1, 50)]
    assert all(r == first for r in runs.values())


def test_spin_wait_mistakes_are_refused():
    w = ws.Wafer(4, 4)
    assert w.spin_wait == 50
    for bad in (-1, 1_000_001, 2.5, "50"):
        with pytest.raises(ConfigError, match="spin_wait"):
            w.spin_wait = bad


def _threads_of_this_process() -> int:
    return len(os.listdir("/proc/self/task"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="Linux /proc")
def test_team_threads_end_with_the_wafer():
    import gc

    gc.collect()       # earlier tests' wafers end their teams now, not during this count
    gc.disable()
    try:
        before = _threads_of_this_process()
        w = traffic_wafer(3, "colors")
        w.run()
        assert _threads_of_this_process() == before + 2     # two workers beside the caller
        del w
        gc.collect()
        assert _threads_of_this_process() == before
    finally:
        gc.enable()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_runs_with_threads_of_its_own():
    """A child forked after a two-thread run has none of its parent's worker threads: its
    next parallel run must start new ones, not wait for threads that do not exist."""
    code = (
        "import os, sys\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "from test_fabric_sim import traffic_wafer\n"
        "w = traffic_wafer(2, 'colors')\n"
        "s = w.run(200)\n"
        "assert s.parallel_phases > 0, 'the parent never started its team'\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    s2 = w.run()\n"
        "    os._exit(0 if s2.parallel_phases > 0 else 3)\n"
        "_, status = os.waitpid(pid, 0)\n"
        "w.run()\n"
        "print(os.waitstatus_to_exitcode(status))\n")
    out = subprocess.run([sys.executable, "-c", code, os.path.dirname(__file__)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0"]


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="Linux /proc")
def test_team_threads_block_signals_so_ctrl_c_reaches_python():
    """Signals sent to the process (Ctrl-C) go to the application's threads: the team's
    workers block them all (tests/test_hardening_run.py checks Ctrl-C during runs)."""
    def blocked_masks():
        out = []
        for tid in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{tid}/status") as f:
                blk = next(line.split()[1] for line in f if line.startswith("SigBlk:"))
            out.append(int(blk, 16))
        return out

    before = blocked_masks()
    w = traffic_wafer(3, "colors")
    w.run()
    after = blocked_masks()
    new_full = sum(1 for m in after if m & 0x2) - sum(1 for m in before if m & 0x2)
    assert new_full == 2                           # SIGINT (bit 1) blocked in both workers
    del w
