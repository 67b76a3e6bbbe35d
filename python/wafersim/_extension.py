"""The one door to the C++ core: every module of the package that needs the extension
``wafersim._core`` takes it from here (``from ._extension import core``), and nothing else
imports it. Loading it here also starts its OpenMP runtime with the threads waiting
passively (docs/fabric.md, "Threads on a busy machine").

A parallel phase ends in a barrier, and a cycle has two phases. By default an OpenMP
runtime lets a thread that reaches a barrier spin for a while (libgomp: about 300,000
iterations) before it sleeps. On a machine whose cores are busy with other work, the thread
still computing may not be running at all, and the spinning one burns the time slice it
needs: a 32 x 32 packet-mode run took hundreds of times longer on two threads than on one.
A passive wait (sleep at once, woken by the last thread) costs a few microseconds per
phase when the cores are free and keeps two threads near one thread's speed when they are
not.

The runtimes read their wait policy from the environment once, when they start, so it is
set here around loading the core and starting its runtime, then the environment is put back:
other libraries of the process (and child processes) see the user's settings. A user who
sets OMP_WAIT_POLICY, GOMP_SPINCOUNT or KMP_BLOCKTIME keeps their choice.
"""

from __future__ import annotations

import ctypes
import os
import sys

_USER_KNOBS = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME")


def _gomp_already_loaded() -> bool:
    """Whether another module of the process started GCC's runtime (it then keeps its policy)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        ctypes.CDLL("libgomp.so.1", mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
    except OSError:
        return False
    return True


#: Who chose the OpenMP wait policy of the core: "passive" (wafersim's default), "user"
#: (one of OMP_WAIT_POLICY, GOMP_SPINCOUNT, KMP_BLOCKTIME was set before the import) or
#: "runtime" (the OpenMP runtime was started by another module first, with its own policy).
if any(k in os.environ for k in _USER_KNOBS):
    WAIT_POLICY = "user"
elif _gomp_already_loaded():
    WAIT_POLICY = "runtime"
else:
    WAIT_POLICY = "passive"


def _load_core():
    if WAIT_POLICY != "passive":
        from . import _core
        return _core
    os.environ["OMP_WAIT_POLICY"] = "passive"
    try:
        from . import _core
        # libgomp reads the variable when it is loaded, the LLVM runtime on its first call.
        _core.omp_max_threads()
    finally:
        del os.environ["OMP_WAIT_POLICY"]
    return _core


core = _load_core()
