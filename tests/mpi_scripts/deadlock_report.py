"""Run unchanged by one process or by ``mpiexec -n N``: two PEs on rows 0 and 2 each send
20 values to the other before reading any (more than the queues on the way hold), so the
run deadlocks with a wait cycle through every row. Every rank writes its DeadlockError's
message and report as JSON into ``sys.argv[1]``/rank<k>.json (lines printed by several
ranks at once can interleave)."""
import json
import sys
from pathlib import Path

import wafersim as ws
from wafersim import distributed

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the tests' shared programs
from deadlock_programs import SEND_THEN_RECEIVE  # noqa: E402

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
Path(sys.argv[1], f"rank{distributed.rank()}.json").write_text(json.dumps(out))
