"""What a training and an inference model share: the torch model, the Plan and Trainer
that run it on the wafer, the copies of its parameters each way, and statistics.

The torch model's parameters are the truth between calls: before each call, parameters
the user changed since the last copy (by hand, ``load_state_dict``, another wafer model
that wrote its trained weights back) are copied onto the wafer."""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError
from ..nn.torch_io import torch_linears
from ..train.trainer import NUMERICS

__all__ = ["OnWafer", "plan_dtype"]


def plan_dtype(numerics) -> str:
    """The plan's number format for a ``numerics`` option of the Trainer."""
    if not isinstance(numerics, str) or numerics not in NUMERICS:
        raise ConfigError(f"numerics must be one of {', '.join(NUMERICS)}, got {numerics!r}")
    return "fp32" if numerics == "fp32" else "fp16"


class OnWafer:
    """``model``: the torch model; ``plan``, ``trainer``: the ``ws.Plan`` and
    ``ws.Trainer`` that run it; ``last_cycles``: the emulated cycles of the last call."""

    def __init__(self, model, plan, trainer, torch):
        self.model = model
        self.plan = plan
        self.trainer = trainer
        self.last_cycles = 0
        self._torch = torch
        self._copied = self._host_parameters()

    @property
    def wafer(self):
        return self.plan.wafer

    def stats(self):
        """The Trainer's statistics (``ws.train.run_stats.TrainStats``): cycles per sample,
        busy cycles per PE and pass, traffic, memory, the analytic bound."""
        return self.trainer.stats()

    def _host_parameters(self) -> list[tuple[np.ndarray, np.ndarray | None]]:
        def arr(t):
            return None if t is None else t.detach().cpu().numpy().copy()
        return [(arr(m.weight), arr(m.bias)) for m in torch_linears(self.model)]

    def copy_weights_to_device(self) -> None:
        """Writes the torch model's parameters into the PE memories (in the plan's number
        format)."""
        params = self._host_parameters()
        self.plan.write_weights(params)
        for d, (W, b) in zip(self.plan.model.dense_layers(), params):
            d.linear.set_parameters(W, b)
        self._copied = params

    def copy_weights_to_host(self) -> None:
        """Writes the parameters the PEs hold into the torch model."""
        self.plan.sync_model()
        self._copied = self._host_parameters()

    def _follow_host(self) -> None:
        """Copies the torch model's parameters onto the wafer if they changed since the
        last copy either way."""
        now = self._host_parameters()
        same = all(np.array_equal(W, W0) and (b is None or np.array_equal(b, b0))
                   for (W, b), (W0, b0) in zip(now, self._copied))
        if not same:
            self.copy_weights_to_device()

    def _counted(self, run):
        """``run()``, with its emulated cycles kept in ``last_cycles``."""
        c0 = self.wafer.cycle
        out = run()
        self.last_cycles = int(self.wafer.cycle - c0)
        return out
