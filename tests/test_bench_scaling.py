"""benchmarks/bench_scaling.py on its smallest runs: each thread count in its own process
gives the same results and cycle count (the script exits non-zero otherwise), and the
table it prints has a speed-up for each thread count. Not timed."""
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_scaling.py"


def test_the_scaling_table_runs_and_every_thread_count_agrees():
    done = subprocess.run([sys.executable, str(BENCH), "--runs", "p3-64,pk-64",
                           "--threads", "1,2", "--repeat", "1"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert out.count("every run gave digest") == 2
    assert "818 cycles" in out and "2000 cycles" in out  # program 3 on 64 x 64; packets
    assert out.count(" 2 threads ") == 2 and out.count("x\n") >= 4


def test_an_unknown_run_is_refused_by_name():
    done = subprocess.run([sys.executable, str(BENCH), "--runs", "p3-65"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "unknown run 'p3-65'" in done.stderr
