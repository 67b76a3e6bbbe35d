"""``ws.torch.training_model``: a torch model, optimizer and loss trained on the wafer,
one optimizer step per call, as PopTorch's training model runs one on an IPU.

    train = ws.torch.training_model(model, optimizer, loss_fn)
    for x, y in batches:
        output, loss = train(x, y)          # forward, backward and step, on the wafer
"""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError
from ..mapping.compile import map_model
from ..nn.torch_support import import_torch
from ..train.checks import as_bool
from ..train.trainer import Trainer
from .losses import ws_loss
from .modules import check_model
from .on_wafer import OnWafer, plan_dtype
from .optimizers import ws_optimizer
from .tensors import as_inputs, as_targets, as_tensor

__all__ = ["training_model", "TrainingModel"]


def training_model(model, optimizer, loss_fn, *, wafer=None, blocks=None, numerics="fp32",
                   sync=True) -> "TrainingModel":
    """Maps ``model`` (a ``torch.nn.Sequential`` of supported modules) onto a wafer to be
    trained with ``optimizer`` (a fresh ``torch.optim.SGD`` over the model's parameters)
    and ``loss_fn`` (``torch.nn.MSELoss()`` or ``torch.nn.CrossEntropyLoss()``).

    * ``wafer``, ``blocks``: as ``ws.map`` (None: sized and chosen automatically).
    * ``numerics``: "fp32", "fp16" or "fp16-sr" (fp16 with stochastic rounding), as
      ``ws.Trainer``.
    * ``sync``: True writes the trained parameters into ``model`` after every call;
      False leaves them on the wafer until ``copy_weights_to_host()`` (saves reading
      every PE's weights back after each step).

    Everything the wafer cannot train as torch would is refused here, never during a
    call: the ConfigError names the module (``model[3]``), option or parameter, and what
    is supported (docs/torch_frontend.md)."""
    torch = import_torch()
    sync = as_bool(sync, "sync")
    dtype = plan_dtype(numerics)
    check_model(model, torch)
    loss = ws_loss(loss_fn, model, torch)
    opt = ws_optimizer(optimizer, model, torch)
    plan = map_model(model, wafer, blocks=blocks, dtype=dtype, loss=loss, optimizer=opt)
    trainer = Trainer(plan, algo="minibatch", numerics=numerics, progress=False)
    return TrainingModel(model, optimizer, loss_fn, plan, trainer, sync, torch)


class TrainingModel(OnWafer):
    """Calling it with a batch ``(x, y)`` of torch tensors trains that batch on the wafer
    as one optimizer step (the mean of the samples' gradients; one sample: one SGD step)
    and returns ``(output, loss)``: the outputs of the step's forward pass (before the
    update, as torch's ``model(x)`` in a training loop) and the mean loss, as ``loss_fn``
    returns it, both float32 tensors computed on the wafer. There is no ``backward()``
    and no ``optimizer.step()`` to call: the call did both. The optimizer's state (the
    velocities) lives in PE memory and carries over from call to call; the torch
    optimizer's own state stays empty.

    ``optimizer.param_groups[...]["lr"]`` is read at every call (an LR scheduler works);
    momentum, nesterov and weight decay are compiled into the PE programs and may not
    change. Attributes: ``model``, ``optimizer``, ``loss_fn``, ``plan``, ``trainer``,
    ``sync``, ``steps`` (calls so far), ``last_cycles``; ``stats()``."""

    def __init__(self, model, optimizer, loss_fn, plan, trainer, sync: bool, torch):
        super().__init__(model, plan, trainer, torch)
        self.optimizer = optimizer
        self.loss_fn = loss_fn
        self.sync = sync
        self.steps = 0

    def __repr__(self) -> str:
        return (f"TrainingModel({self.plan.n_in} -> {self.plan.n_out}, {self.plan.loss!r}, "
                f"{self.plan.optimizer!r}, lr={self.trainer.lr}, numerics="
                f"{self.trainer.numerics!r}, steps={self.steps})")

    def __call__(self, x, y):
        torch = self._torch
        self._follow_optimizer()
        X = as_inputs(x, self.plan.n_in, torch)
        Y = as_targets(y, self.plan.loss.name, X.shape[0], self.plan.n_out, torch)
        self._follow_host()
        out, losses = self._counted(lambda: self.trainer.step(X, Y, sync=False))
        self.steps += 1
        if self.sync:
            self.copy_weights_to_host()
        loss = torch.tensor(float(np.mean(losses)), dtype=torch.float32)
        return as_tensor(out, x, torch), loss.to(x.device)

    def _follow_optimizer(self) -> None:
        """The learning rate the optimizer holds now; ConfigError if a compiled setting
        changed since wrapping."""
        now = ws_optimizer(self.optimizer, self.model, self._torch)
        was = self.plan.optimizer
        for name in ("momentum", "nesterov", "weight_decay"):
            if getattr(now, name) != getattr(was, name):
                raise ConfigError(f"optimizer: {name} changed from {getattr(was, name)!r} to "
                                  f"{getattr(now, name)!r} after wrapping; it is compiled into "
                                  "the PE programs: wrap the model again")
        self.trainer.lr = now.lr
