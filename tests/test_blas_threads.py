"""Numpy's BLAS threads are held at one thread while a run executes, and the user's
setting is back afterwards (also after a failing run)."""

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import wafersim as ws
from wafersim.blas_threads import blas_threads


class _Spy:
    """Stands in for the C++ object: records the BLAS thread counts inside each run call."""

    def __init__(self, inner, methods, fail=False):
        self._inner, self._methods, self._fail = inner, methods, fail
        self.seen = []

    def __getattr__(self, name):
        attr = getattr(self._inner, name)
        if name not in self._methods:
            return attr

        def call(*a, **k):
            self.seen.append(blas_threads())
            if self._fail:
                raise ws.ProgramError("stop")
            return attr(*a, **k)
        return call


@pytest.fixture
def two_blas_threads():
    if not blas_threads():
        pytest.skip("numpy has no BLAS library loaded")
    with threadpool_limits(limits=2, user_api="blas"):
        if max(blas_threads()) < 2:
            pytest.skip("this BLAS library runs one thread at most")
        yield blas_threads()


def test_wafer_run_limits_blas_to_one_thread_and_restores_it(two_blas_threads):
    w = ws.Wafer(2, 2)
    spy = w._core = _Spy(w._core, {"run"})
    w.run(max_cycles=10)
    assert spy.seen == [[1] * len(two_blas_threads)]
    assert blas_threads() == two_blas_threads


def test_lone_pe_run_limits_blas_to_one_thread_and_restores_it(two_blas_threads):
    pe = ws.pe.LonePE()
    spy = pe._pe = _Spy(pe._pe, {"run", "run_until_idle"})
    pe.run(5)
    pe.run()
    assert spy.seen == [[1] * len(two_blas_threads)] * 2
    assert blas_threads() == two_blas_threads


def test_a_failing_run_restores_the_blas_setting(two_blas_threads):
    pe = ws.pe.LonePE()
    pe._pe = _Spy(pe._pe, {"run"}, fail=True)
    with pytest.raises(ws.ProgramError):
        pe.run(5)
    assert blas_threads() == two_blas_threads
    assert np.dot(np.ones(4), np.ones(4)) == 4.0  # BLAS still works afterwards
