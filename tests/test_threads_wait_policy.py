"""The core's OpenMP threads wait passively at the end of a phase unless the user chose a
policy (issue 14, item 7: spinning threads made two threads hundreds of times slower than
one on a busy machine). Not timed: each test checks that the policy is in effect, as the
OpenMP runtime itself reports it at start-up (OMP_DISPLAY_ENV), in a fresh interpreter."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

import wafersim as ws

KNOBS = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME", "OMP_DISPLAY_ENV")


def _python(code: str, **env_vars: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in KNOBS}
    env.update(OMP_DISPLAY_ENV="verbose", **env_vars)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=120)


def _runtime_setting(stderr: str, name: str) -> str | None:
    """A setting as the OpenMP runtime printed it (libgomp: NAME = 'v'; LLVM: NAME='v')."""
    found = re.findall(rf"\b{name}\s*=\s*'([^']*)'", stderr)
    return found[-1] if found else None


REPORT = ("import os, wafersim\n"
          "print(wafersim._extension.WAIT_POLICY, os.environ.get('OMP_WAIT_POLICY'))\n")


def test_core_threads_wait_passively_by_default():
    out = _python(REPORT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["passive", "None"]  # and the environment is put back
    assert _runtime_setting(out.stderr, "OMP_WAIT_POLICY") == "PASSIVE"
    spin = _runtime_setting(out.stderr, "GOMP_SPINCOUNT")  # GCC's runtime: no spinning
    assert spin in (None, "0")


def test_a_wait_policy_the_user_set_is_kept():
    out = _python(REPORT, OMP_WAIT_POLICY="active")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["user", "active"]
    assert _runtime_setting(out.stderr, "OMP_WAIT_POLICY") == "ACTIVE"


def test_a_spin_count_the_user_set_is_kept():
    out = _python(REPORT, GOMP_SPINCOUNT="12345")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["user", "None"]
    spin = _runtime_setting(out.stderr, "GOMP_SPINCOUNT")
    assert spin in (None, "12345")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="GCC's OpenMP runtime")
def test_a_runtime_started_before_wafersim_is_reported_not_changed():
    code = ("import ctypes\n"
            "try:\n"
            "    ctypes.CDLL('libgomp.so.1')\n"
            "except OSError:\n"
            "    print('no-libgomp'); raise SystemExit\n" + REPORT)
    out = _python(code)
    assert out.returncode == 0, out.stderr
    if out.stdout.strip() == "no-libgomp":
        pytest.skip("no libgomp.so.1 on this machine")
    assert out.stdout.split() == ["runtime", "None"]


def test_info_names_the_wait_policy():
    out = _python("from wafersim.cli import main; main(['info'])")
    assert out.returncode == 0, out.stderr
    assert re.search(r"openmp .*threads? wait passively", out.stdout), out.stdout


def test_results_do_not_depend_on_the_thread_count_with_passive_waits():
    tr = ws.noc.bernoulli("uniform", 32, 32, 0.3, 150, seed=3)

    def run(threads):
        w = ws.Wafer(32, 32, "mesh+diag", mode="packets", threads=threads)
        w.inject(tr.src, 0, data=np.arange(len(tr)) & 0xFFFFFFFF, dest=tr.dst, cycle=tr.cycle)
        stats = w.run(150)
        a = w.collect()
        return stats, [a.row, a.col, a.data, a.arrived, a.hops]

    one, arrivals_one = run(1)
    two, arrivals_two = run(2)
    assert one.parallel_phases == 0 and two.parallel_phases > 0
    assert one.delivered == two.delivered > 0
    for x, y in zip(arrivals_one, arrivals_two):
        np.testing.assert_array_equal(x, y)
