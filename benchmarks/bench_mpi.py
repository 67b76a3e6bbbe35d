"""One wafer over several MPI processes: program 3 (4 x 4 blocks) on ROWS x COLS PEs, run
by one process or by ``mpiexec -n N python benchmarks/bench_mpi.py ROWS COLS``. Prints (rank
0) the run's wall time, cycles/s, the time each rank spent in the per-cycle exchange
(including waiting for its neighbours), its share of the run, each rank's CPU time in the
run outside the exchange (its own step, which other load on the machine disturbs less
than wall time) and in it (MPICH's waits spin), the run's user and system seconds and
minor page faults per rank, peak memory per rank, and a digest of the
results (which must not depend on N). Compare with the same run under ``WAFERSIM_MPI=0``
or without mpiexec. ``WAFERSIM_MPI_BLOCKS=k`` deals k blocks of rows to each rank (default: blocks of about
12 rows, ``wafersim.domains.auto_blocks``)."""
import hashlib
import json
import resource
import sys
import time

import numpy as np

from wafersim import Wafer, distributed
from wafersim.kernels.matvec import run_grid

rows = int(sys.argv[1]) if len(sys.argv) > 1 else 128
cols = int(sys.argv[2]) if len(sys.argv) > 2 else 996
run_cpu = []
run_usage = []  # (user s, system s, minor page faults) of the run
_run = Wafer.run


def _timed_run(self, *a, **k):  # the CPU time of the run itself
    c0 = time.process_time()
    u0 = resource.getrusage(resource.RUSAGE_SELF)
    try:
        return _run(self, *a, **k)
    finally:
        run_cpu.append(time.process_time() - c0)
        u1 = resource.getrusage(resource.RUSAGE_SELF)
        run_usage.append((u1.ru_utime - u0.ru_utime, u1.ru_stime - u0.ru_stime,
                          u1.ru_minflt - u0.ru_minflt))


Wafer.run = _timed_run
t0 = time.perf_counter()
r = run_grid(cols, 4, "fp16", density=1.0, rows=rows, seed=1, check=False, threads=1)
total = time.perf_counter() - t0
s, w = r["stats"], r["wafer"]
d = w._domain
ex = d.exchange.seconds if d is not None else 0.0
ex_cpu = d.exchange.cpu_seconds if d is not None else 0.0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
mine = {"rank": distributed.rank(), "exchange_s": round(ex, 3),
        "exchange_share": round(ex / r["seconds"], 3),
        "own_cpu_s": round(run_cpu[-1] - ex_cpu, 3), "exchange_cpu_s": round(ex_cpu, 3),
        "run_user_s": round(run_usage[-1][0], 3), "run_sys_s": round(run_usage[-1][1], 3),
        "run_faults": run_usage[-1][2],
        "peak_GiB": round(peak / 2**30, 2)}
every = [mine] if w._domain is None else w._domain.link.allgather_obj(mine)
if distributed.rank() == 0:
    print(json.dumps({"ranks": distributed.size(),
                      "blocks": len(d.blocks) if d is not None else 1, "rows": rows, "cols": cols,
                      "cycles": s.cycles, "run_s": round(r["seconds"], 2),
                      "cycles_per_s": round(s.cycles / r["seconds"], 1),
                      "script_s": round(total, 1), "per_rank": every,
                      "bytes_per_pe": int(max(e["peak_GiB"] for e in every) * 2**30 / (rows * cols)),
                      "digest": hashlib.sha256(r["y"].view(np.uint16).tobytes()).hexdigest()[:16]}))
