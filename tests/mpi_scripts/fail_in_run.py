"""Under mpiexec: rank 1 alone passes ``run`` a bad argument (``sys.argv[1]``: "argument",
a negative max_cycles; "trace", a trace file in a missing folder) while the other ranks
enter the run and wait in its exchange; the ConfigError, uncaught, must end every rank."""
import sys

import numpy as np

import wafersim as ws
from wafersim import distributed

w = ws.Wafer(4, 2)
w.route(1, path=[(0, 0), (1, 0), (2, 0), (3, 0)])
w.inject((0, 0), 1, data=np.arange(10))
if distributed.rank() != 1:
    w.run()
elif sys.argv[1] == "argument":
    w.run(max_cycles=-1)
else:
    w.run(trace="no-such-folder-here/run.json")
