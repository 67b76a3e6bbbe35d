"""``ws.torch.inference_model``: a torch model's forward pass computed on the wafer.

    infer = ws.torch.inference_model(model)
    logits = infer(x)                       # as model(x), on the wafer
"""

from __future__ import annotations

from ..mapping.compile import map_model
from ..nn.torch_support import import_torch
from ..train.trainer import Trainer
from .modules import check_model
from .on_wafer import OnWafer, plan_dtype
from .tensors import as_inputs, as_tensor

__all__ = ["inference_model", "InferenceModel"]


def inference_model(model, *, wafer=None, blocks=None, numerics="fp32") -> "InferenceModel":
    """Maps ``model`` (a ``torch.nn.Sequential`` of supported modules) onto a wafer for
    forward passes; ``wafer``, ``blocks`` and ``numerics`` as ``training_model``. The
    model is refused here, naming the module, if the wafer cannot compute it."""
    torch = import_torch()
    dtype = plan_dtype(numerics)
    check_model(model, torch)
    plan = map_model(model, wafer, blocks=blocks, dtype=dtype)
    trainer = Trainer(plan, numerics=numerics, progress=False)
    return InferenceModel(model, plan, trainer, torch)


class InferenceModel(OnWafer):
    """Calling it with ``x`` (a float tensor of shape (batch, inputs), or (inputs,) for one
    sample) returns the model's output computed on the wafer, a float32 tensor on x's
    device. It computes with the torch model's current parameters: those changed since
    the last call (a training model that wrote its weights back, for example) are copied
    onto the wafer first. Attributes: ``model``, ``plan``, ``trainer``, ``last_cycles``;
    ``stats()``."""

    def __repr__(self) -> str:
        return (f"InferenceModel({self.plan.n_in} -> {self.plan.n_out}, numerics="
                f"{self.trainer.numerics!r})")

    def __call__(self, x):
        torch = self._torch
        X = as_inputs(x, self.plan.n_in, torch, one_sample=True)
        self._follow_host()
        out = self._counted(lambda: self.trainer.predict(X))
        return as_tensor(out[0] if x.dim() == 1 else out, x, torch)
