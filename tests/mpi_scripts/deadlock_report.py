"""Run unchanged by one process or by ``mpiexec -n N``: two PEs on rows 0 and 2 each send
20 values to the other before reading any (more than the queues on the way hold), so the
run deadlocks with a wait cycle through every row. With ``switch`` as the second argument
instead: values on column 1 wait below router (3, 1), whose runtime switch a control
wavelet moved to a position that holds them (tests/test_domain_cuts.py, _held_column).
Every rank writes its DeadlockError's message and report, and with ``switch`` the switch
as it reads there, as JSON into ``sys.argv[1]``/rank<k>.json (lines printed by several
ranks at once can interleave)."""
import json
import sys
from pathlib import Path

import numpy as np

import wafersim as ws
from wafersim import distributed

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the tests' shared programs
from deadlock_programs import SEND_THEN_RECEIVE  # noqa: E402

switch = len(sys.argv) > 2 and sys.argv[2] == "switch"
if switch:
    w = ws.Wafer(6, 3, watchdog=100)
    w.route(6, path=[(r, 1) for r in range(6)])
    w.router(3, 1).set_switch(6, [{"rx": ["RAMP"]}])
    w.inject((0, 1), 6, data=np.arange(3))
    w.send_control((0, 1), 6, ["nop", "nop", "nop", "advance"])
    w.inject((0, 1), 6, data=np.arange(3) + 10)
else:
    w = ws.Wafer(3, 2, watchdog=200)
    w.pe(0, 0).load(SEND_THEN_RECEIVE.format(out=1, inp=2))
    w.pe(2, 0).load(SEND_THEN_RECEIVE.format(out=2, inp=1))
    w.route(1, [(0, 0), (1, 0), (2, 0)])
    w.route(2, [(2, 0), (1, 0), (0, 0)])
    w.launch("main")
try:
    w.run()
    out = {"deadlock": None}
except ws.DeadlockError as e:
    out = {"message": e.args[0], "report": e.report}
if switch:
    out["switch"] = w.router(3, 1).switch(6)
Path(sys.argv[1], f"rank{distributed.rank()}.json").write_text(json.dumps(out))
