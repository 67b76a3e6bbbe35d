"""Run unchanged by one process or by ``mpiexec -n N``: traffic over links that cross the
cuts between domains (docs/scale.md): ``switches`` (holds of runtime switches, on host
traffic and on conformance program 10), ``diag2`` (2-cycle diagonal links), ``loop`` (loop
links) or ``packets`` (packet mode). Prints one JSON line of everything a user reads (rank
0 only)."""
import hashlib
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np

import wafersim as ws
from wafersim import distributed

ROOT = Path(__file__).resolve().parents[2]


def digest(*arrays):
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def summary(s, a):
    return [s.cycles, s.moves, s.injected, s.delivered, s.router_cycles, s.latency.total,
            s.latency.max, np.asarray(s.hop_histogram).tolist(),
            digest(a.row, a.col, a.color, a.data, a.ctrl, a.hops, a.injected, a.arrived)]


def traffic(diag_hop_cycles, loop):
    w = ws.Wafer(7, 5, "mesh+diag", queue_depth=2, diag_hop_cycles=diag_hop_cycles, loop=loop)
    w.route_tree(3, (0, 0), [(6, 4), (6, 0)], "diag_first")
    w.route(4, path=[(6, 4), (5, 3), (4, 2), (3, 1), (2, 0)])
    w.set_sink((6, 4), capacity=1, drain_period=2)
    w.inject((0, 0), 3, data=np.arange(40))
    w.inject((6, 4), 4, data=np.arange(20) + 100)
    if loop:
        w.route(5, path=[(4, 2), (5, 2), (6, 2), (0, 2), (1, 2)])
        w.set_sink((1, 2), capacity=1, drain_period=3)
        w.inject((4, 2), 5, data=np.arange(15) + 500)
    return summary(w.run(), w.collect())


def switched_bus():
    c = 6
    w = ws.Wafer(7, 3)
    w.route(c, path=[(r, 1) for r in range(7)])
    for r in (2, 4):
        w.router(r, 1).set_route(c, rx=["RAMP"], tx=["N"])
        w.router(r, 1).set_switch(c, [{"rx": ["S"]}])
    for k, r in enumerate((0, 2, 4)):
        w.inject((r, 1), c, data=np.arange(5) + 100 * k, cycle=3 * k)
        w.send_control((r, 1), c, ["advance"], cycle=3 * k)
    return summary(w.run(), w.collect())


feature = sys.argv[1]
out = {}
if feature == "switches":
    out["bus"] = switched_bus()
    path = ROOT / "examples" / "kernels" / "stencil_bus.py"
    spec = importlib.util.spec_from_file_location("stencil_bus", path)
    stencil = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(stencil)
    r = stencil.run(5, 3, 4, seed=2)
    s = r["stats"]
    out["stencil"] = [bool(np.array_equal(r["y"], r["numpy"])), s.cycles, s.moves,
                      digest(r["y"].view(np.uint16)),
                      sorted((str(k), v["instructions"], v["cycles"]) for k, v in s.pes.items())]
elif feature == "diag2":
    out["traffic"] = traffic(2, False)
elif feature == "packets":
    from wafersim.noc import traffic
    tr = traffic.bernoulli("uniform", 7, 6, 0.12, 100, seed=3)
    for topology, routing, hop in (("mesh", "xy", 1), ("mesh+diag", "diag_first", 2)):
        w = ws.Wafer(7, 6, topology, mode="packets", packet_routing=routing,
                     diag_hop_cycles=hop)
        w.inject(tr.src, 0, data=np.arange(len(tr)), dest=tr.dst, cycle=tr.cycle)
        w.set_sink((3, 2), capacity=1, drain_period=2)
        out[topology] = summary(w.run(), w.collect())
elif feature == "loop":
    out["traffic"] = traffic(1, True)
    out["traffic_diag2"] = traffic(2, True)
if distributed.rank() == 0:
    print(json.dumps({"size": distributed.size(), **out}))
