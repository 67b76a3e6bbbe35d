"""Run unchanged by one process or by ``mpiexec -n N``: program 3 and host traffic on a
small wafer; prints one JSON line of everything a user reads (rank 0 only)."""
import hashlib
import json
import sys

import numpy as np

import wafersim as ws
from wafersim import distributed
from wafersim.kernels.matvec import run_grid


def digest(*arrays):
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


out = {}
r = run_grid(6, 4, "fp16", density=0.8, rows=5, seed=3, check=False)
s = r["stats"]
out["grid"] = [s.cycles, s.moves, s.delivered, s.router_cycles, digest(r["y"].view(np.uint16)),
               sorted((str(k), v["instructions"], v["cycles"]) for k, v in s.pes.items())]
# collective: each rank reads its own rows' PE memory, every rank gets the whole array
out["memcpy_d2h"] = digest(r["wafer"].memcpy_d2h("a"))
w = ws.Wafer(7, 5, "mesh+diag")
w.route_tree(3, (0, 0), [(6, 4), (6, 0)], "diag_first")
w.set_sink((6, 4), capacity=1, drain_period=2)
w.inject((0, 0), 3, data=np.arange(40))
s = w.run()
a = w.collect()
out["traffic"] = [s.cycles, s.moves, s.latency.total, digest(a.row, a.col, a.data, a.arrived)]
# a load over a busy PE: every rank raises the first busy PE's error (router order)
w = r["wafer"]
w.launch("main", rect=(3, 1, 2, 1))  # PEs (3, 1) and (4, 1): active, so busy
try:
    w.load(w.pe(0, 1).program, rect=(0, 1, 5, 1))
except ws.ConfigError as e:
    out["busy"] = [str(e), [w.pe(k, 1).program is w.pe(0, 1).program for k in range(5)]]
if sys.argv[1:] == ["deadlock"]:
    w = ws.Wafer(4, 2, watchdog=30)
    w.route(1, path=[(0, 0), (1, 0), (2, 0), (3, 0)])
    w.set_sink((3, 0), capacity=1)
    w.inject((0, 0), 1, data=np.arange(10))
    try:
        w.run()
    except ws.DeadlockError as e:
        out["deadlock"] = e.args[0]
if distributed.rank() == 0:
    print(json.dumps({"size": distributed.size(), **out}))
