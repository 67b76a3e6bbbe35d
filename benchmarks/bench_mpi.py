"""One wafer over several MPI processes: program 3 (4 x 4 blocks) on ROWS x COLS PEs, run
by one process or by ``mpiexec -n N python benchmarks/bench_mpi.py ROWS COLS``. Prints (rank
0) the run's wall time, cycles/s, the time each rank spent in the per-cycle exchange
(including waiting for its neighbours), its share of the run, peak memory per rank, and a
digest of the results (which must not depend on N). Compare with the same run under
``WAFERSIM_MPI=0`` or without mpiexec."""
import hashlib
import json
import resource
import sys
import time

import numpy as np

from wafersim import distributed
from wafersim.kernels.matvec import run_grid

rows = int(sys.argv[1]) if len(sys.argv) > 1 else 128
cols = int(sys.argv[2]) if len(sys.argv) > 2 else 996
t0 = time.perf_counter()
r = run_grid(cols, 4, "fp16", density=1.0, rows=rows, seed=1, check=False, threads=1)
total = time.perf_counter() - t0
s, w = r["stats"], r["wafer"]
ex = w._domain.exchange.seconds if w._domain is not None else 0.0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
mine = {"rank": distributed.rank(), "exchange_s": round(ex, 3),
        "exchange_share": round(ex / r["seconds"], 3), "peak_GiB": round(peak / 2**30, 2)}
every = [mine] if w._domain is None else w._domain.link.allgather_obj(mine)
if distributed.rank() == 0:
    print(json.dumps({"ranks": distributed.size(), "rows": rows, "cols": cols,
                      "cycles": s.cycles, "run_s": round(r["seconds"], 2),
                      "cycles_per_s": round(s.cycles / r["seconds"], 1),
                      "script_s": round(total, 1), "per_rank": every,
                      "bytes_per_pe": int(max(e["peak_GiB"] for e in every) * 2**30 / (rows * cols)),
                      "digest": hashlib.sha256(r["y"].view(np.uint16).tobytes()).hexdigest()[:16]}))
