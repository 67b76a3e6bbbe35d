"""Numpy's BLAS thread pool held at one thread while the emulator runs.

numpy's OpenBLAS starts its worker threads at import; between BLAS calls they spin for a
while before sleeping, and on a machine with few cores they take cycles from the emulator's
own threads. ``Wafer.run`` and ``LonePE.run`` make no BLAS calls, so they run inside
:func:`quiet_blas`, which limits the BLAS libraries to one thread for the duration of the call
and restores the user's setting afterwards (also when the run raises).
"""

from __future__ import annotations

from contextlib import contextmanager

from threadpoolctl import ThreadpoolController

_controller: ThreadpoolController | None = None


def _blas() -> ThreadpoolController:
    # Inspecting the loaded libraries takes milliseconds: do it once, after numpy (and
    # its BLAS) has been imported by the package.
    global _controller
    if _controller is None:
        _controller = ThreadpoolController().select(user_api="blas")
    return _controller


def blas_threads() -> list[int]:
    """The thread count of each loaded BLAS library (what a run leaves in place)."""
    return [lib.num_threads for lib in _blas().lib_controllers]


@contextmanager
def quiet_blas():
    """Limits the BLAS thread pools to one thread inside the block."""
    blas = _blas()
    if all(lib.num_threads <= 1 for lib in blas.lib_controllers):
        yield  # nothing to limit: keep short, repeated runs cheap
        return
    with blas.limit(limits=1):
        yield
