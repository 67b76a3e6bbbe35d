"""Wall-clock timing shared by the benchmarks: the best of several runs (the machine may be
shared, and the minimum is the run least disturbed by other work)."""

import time


def best_of(fn, repeat: int = 3) -> float:
    """Seconds of the fastest of ``repeat`` calls of ``fn()``."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


# Code for a benchmark's child process (runs timed in a fresh interpreter): sets `digest`,
# a sha256 of everything a packet-mode wafer `w` delivered, for checking that runs agree.
ARRIVALS_DIGEST = """
a = w.collect()
digest = hashlib.sha256()
for col in (a.row, a.col, a.data, a.arrived, a.hops):
    digest.update(np.ascontiguousarray(col).tobytes())
"""
