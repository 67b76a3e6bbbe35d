"""Optimizers for training on the wafer, described as ``torch.optim`` names them; the
mapping lowers each onto the PE programs (``mapping/lowering/``). The update rule is
torch's; its state (velocities, moments) lives in PE memory.

    opt = ws.optim.SGD(lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-4)
    opt = ws.optim.Adam(lr=1e-3, betas=(0.9, 0.999), eps=1e-8)
    plan = ws.map(model, optimizer=opt)
"""

from .adam import Adam
from .sgd import SGD

__all__ = ["SGD", "Adam", "OPTIMIZERS"]

#: The optimizer classes ``ws.map(optimizer=...)`` takes (each has a lowering registered
#: under its ``name`` in mapping/lowering/).
OPTIMIZERS = (SGD, Adam)
