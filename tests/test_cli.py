"""The `wafersim` console command."""

import subprocess
import sys
from pathlib import Path

import wafersim as ws


def _command():
    exe = Path(sys.executable).parent / "wafersim"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "wafersim"]


def test_wafersim_info_prints_version_threads_and_defaults():
    out = subprocess.run(_command() + ["info"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert f"wafersim {ws.__version__}" in out.stdout
    assert "thread(s)" in out.stdout
    assert "router_queue_depth" in out.stdout


def test_wafersim_demo_runs():
    out = subprocess.run(_command() + ["demo", "--quick"], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr + out.stdout
    # Each section checks itself against an independent reference (numpy, exact rounding,
    # the patent's hop counts) and the job fails when one does not hold.
    assert "bit-exact against the once-rounded reference: True" in out.stdout
    assert "4 x 4: 7 -> 4 routers; measured on the fabric along the diagonal: 4 cycles" in out.stdout
    assert "equal to numpy int32: True" in out.stdout
    assert out.stdout.rstrip().endswith("all checks hold")
