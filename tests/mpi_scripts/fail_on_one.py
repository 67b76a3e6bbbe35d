"""Under mpiexec: rank 1 fails outside any run (a script bug) while rank 0 runs; the abort
hook must end both, never leave rank 0 waiting in the exchange."""
import numpy as np

import wafersim as ws
from wafersim import distributed

w = ws.Wafer(4, 2)
w.route(1, path=[(0, 0), (1, 0), (2, 0), (3, 0)])
w.inject((0, 0), 1, data=np.arange(10))
if distributed.rank() == 1:
    raise RuntimeError("rank 1 fails on purpose")
w.run()
