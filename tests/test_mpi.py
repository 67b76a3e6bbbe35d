"""One wafer over several MPI processes (docs/scale.md): the same script under
``mpiexec -n 2``, ``-n 3`` and ``-n 4`` (over the loopback) prints exactly what one
process prints; a deadlock is raised alike on every rank; a failure on one rank, also a bad argument of
``run`` on one rank only, ends them all (no hang)."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mpi4py", reason="the mpi extra (mpi4py, mpich) is not installed")
_BIN = Path(sys.executable).parent
MPIEXEC = shutil.which("mpiexec", path=str(_BIN)) or shutil.which("mpiexec")
if MPIEXEC is None:
    pytest.skip("no mpiexec (the mpich wheel of the mpi extra puts one beside python)",
                allow_module_level=True)
SCRIPTS = Path(__file__).parent / "mpi_scripts"


def _run(n, script, *args, timeout=180, blocks=None):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    if blocks is not None:
        env["WAFERSIM_MPI_BLOCKS"] = str(blocks)
    cmd = [sys.executable, str(SCRIPTS / script), *args]
    if n > 1:
        cmd = [MPIEXEC, "-n", str(n)] + cmd
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)


@pytest.mark.parametrize("n,blocks", [(2, None), (3, None), (4, None), (2, 4), (3, 2)])
def test_the_same_script_under_mpiexec_prints_what_one_process_prints(n, blocks):
    one = _run(1, "split_wafer.py", "deadlock")
    assert one.returncode == 0, one.stderr
    many = _run(n, "split_wafer.py", "deadlock", blocks=blocks)
    assert many.returncode == 0, many.stderr
    a, b = json.loads(one.stdout), json.loads(many.stdout)
    assert (a.pop("size"), b.pop("size")) == (1, n)
    assert a == b
    assert "deadlock" in a  # raised alike on every rank, with one process's message
    assert a["busy"][0].startswith("PE (3, 1) is still busy")  # the first in router order


@pytest.mark.parametrize("n", [2, 3])
def test_a_failure_on_one_rank_ends_every_rank(n):
    r = _run(n, "fail_on_one.py", timeout=120)  # a hang would raise TimeoutExpired
    assert r.returncode != 0
    assert "rank 1 fails on purpose" in r.stderr


@pytest.mark.parametrize("n,bad", [(2, "argument"), (3, "argument"), (2, "trace")])
def test_a_bad_run_argument_on_one_rank_only_ends_every_rank(n, bad):
    """The other ranks wait in the run's exchange; rank 1's uncaught ConfigError aborts all."""
    r = _run(n, "fail_in_run.py", bad, timeout=120)  # a hang would raise TimeoutExpired
    assert r.returncode != 0
    assert "ConfigError" in r.stderr
    assert ("max_cycles must be in 0.." if bad == "argument" else "does not exist") in r.stderr


def _deadlocks(n, folder, *args):
    """[{message, report}] of each rank of deadlock_report.py run by n processes."""
    folder.mkdir()
    r = _run(n, "deadlock_report.py", str(folder), *args)
    assert r.returncode == 0, r.stderr
    return [json.loads((folder / f"rank{k}.json").read_text()) for k in range(n)]


@pytest.mark.parametrize("n", [2, 3])
def test_a_deadlock_gives_every_rank_one_process_message(n, tmp_path):
    one = _deadlocks(1, tmp_path / "one")[0]["message"]
    assert one.startswith("deadlock: nothing moved for 200 cycles")
    assert "with 12 wavelet(s) queued" in one  # six full queues of depth 2 (rows 0, 1, 2)
    assert [d["message"] for d in _deadlocks(n, tmp_path / "many")] == [one] * n


@pytest.mark.parametrize("n", [2, 3])
def test_a_deadlock_gives_every_rank_one_process_report(n, tmp_path):
    one = _deadlocks(1, tmp_path / "one")[0]["report"]
    # hand-checked: the wait cycle runs through both PEs and the router queues between them
    assert "wait cycle" in one and "PE (0, 0) task 40" in one and "PE (2, 0) task 40" in one
    assert [d["report"] for d in _deadlocks(n, tmp_path / "many")] == [one] * n


@pytest.mark.parametrize("n", [2, 3])
def test_a_switch_moved_on_another_rank_reads_alike_on_every_rank(n, tmp_path):
    """Router (2, 1) waits on the switch of (3, 1), which lies on another rank (2 ranks:
    rows 0-2 and 3-5; 3 ranks: 0-1, 2-3, 4-5) and moved during the run: every rank's
    report quotes the position it moved to, and the switch reads as in one process on
    every rank (Domain.share_switches)."""
    one = _deadlocks(1, tmp_path / "one", "switch")[0]
    assert "its switch on color 6 is in position 1, whose sources are {RAMP}" in one["report"]
    assert one["switch"]["position"] == 1
    assert _deadlocks(n, tmp_path / "many", "switch") == [one] * n


def test_more_ranks_than_rows_is_a_clear_error_on_every_rank():
    code = "import wafersim as ws; ws.Wafer(2, 3)"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    r = subprocess.run([MPIEXEC, "-n", "3", sys.executable, "-c", code], capture_output=True,
                       text=True, timeout=120, env=env)
    assert r.returncode != 0
    assert "2 rows splits into 1..2 domains" in r.stderr


def test_a_bad_blocks_setting_is_a_clear_error_on_every_rank():
    code = "import wafersim as ws; ws.Wafer(8, 3)"
    env = dict(os.environ, OMP_NUM_THREADS="1", WAFERSIM_MPI_BLOCKS="0")
    r = subprocess.run([MPIEXEC, "-n", "2", sys.executable, "-c", code], capture_output=True,
                       text=True, timeout=120, env=env)
    assert r.returncode != 0
    assert r.stderr.count("WAFERSIM_MPI_BLOCKS must be an integer >= 1, got '0'") == 2


@pytest.mark.parametrize("feature", ["switches", "diag2", "loop", "packets"])
def test_links_across_the_cuts_under_mpiexec_print_what_one_process_prints(feature):
    """Runtime switches' holds, 2-cycle diagonal links, loop links and packet mode across
    the cuts between two ranks of 2 blocks of rows each (tests/test_domain_cuts.py runs more
    splits as threads of one process)."""
    one = _run(1, "split_cuts.py", feature)
    assert one.returncode == 0, one.stderr
    many = _run(2, "split_cuts.py", feature, blocks=2)
    assert many.returncode == 0, many.stderr
    a, b = json.loads(one.stdout), json.loads(many.stdout)
    assert (a.pop("size"), b.pop("size")) == (1, 2)
    assert a == b
    if feature == "switches":
        assert a["stencil"][0]  # the stencil's result equals numpy's
