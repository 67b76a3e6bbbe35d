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
