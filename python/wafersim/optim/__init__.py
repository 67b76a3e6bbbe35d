"""Optimizers for training on the wafer, described as ``torch.optim`` names them; the
mapping lowers each onto the PE programs (``mapping/lowering/``). The update rule is
torch's; its state (velocities) lives in PE memory.

    opt = ws.optim.SGD(lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-4)
    plan = ws.map(model, optimizer=opt)
"""

from .sgd import SGD

__all__ = ["SGD"]
