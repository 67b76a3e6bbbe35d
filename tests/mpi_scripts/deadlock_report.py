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

SEND_THEN_RECEIVE = """
.data
x:    .space i16, 20
dx:   .dsd mem1d, base=x, length=20, stride=2
dout: .dsd fabric_out, color={out}, length=20, sw=1
din:  .dsd fabric_in, length=20, sw=1, sc=1, utid={inp}
.code
.task main, 40
main: block {inp}
      lds1wds S1[0], dx
      lddwds D[0], dout
      mov16 D[0], S1[0]
      lddwds D[1], dx
      lds1wds S1[1], din
      mov16.t D[1], S1[1]
"""

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
