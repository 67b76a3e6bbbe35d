"""The torch optimizer ``ws.torch`` maps, checked when wrapping: a fresh
``torch.optim.SGD`` over exactly the model's parameters, one setting of lr, momentum,
nesterov and weight_decay for all of them, as the ``ws.optim.SGD`` the wafer compiles.

Options of ``torch.optim.SGD``, by what the wafer does with them:

* mapped: ``lr`` (a runtime word: a change between calls, by hand or by an LR scheduler,
  takes effect at the next call), ``momentum``, ``nesterov``, ``weight_decay`` (compiled
  into the PE programs);
* ignored: ``foreach`` and ``fused``, which only choose how torch runs the same update
  rule on its own device (a loop, multi-tensor kernels, one fused kernel); the wafer has
  its own implementation of that rule;
* refused: any other option at a value other than torch's default (``dampening``,
  ``maximize``, ``differentiable``, and options later torch versions add).
"""

from __future__ import annotations

import inspect

from ..errors import ConfigError
from ..optim import SGD
from .modules import parameter_path

__all__ = ["ws_optimizer", "MAPPED", "IGNORED", "SUPPORTED_OPTIMIZER", "settings"]

SUPPORTED_OPTIMIZER = "torch.optim.SGD(model.parameters(), lr, momentum, nesterov, weight_decay)"
MAPPED = ("lr", "momentum", "nesterov", "weight_decay")
IGNORED = ("foreach", "fused")


def _defaults(torch) -> dict:
    """SGD's options and torch's defaults, from its signature (so options a later torch
    adds are refused unless left at their defaults)."""
    sig = inspect.signature(torch.optim.SGD.__init__)
    return {k: p.default for k, p in sig.parameters.items()
            if k not in ("self", "params") and p.default is not inspect.Parameter.empty}


def _plain(value):
    """A setting of a group as a Python value (torch allows a one-element tensor lr)."""
    if hasattr(value, "numel") and value.numel() == 1:
        return value.item()
    return value


def settings(optimizer) -> dict:
    """The mapped settings of the optimizer's first group, as Python values."""
    g = optimizer.param_groups[0]
    return {k: _plain(g[k]) for k in MAPPED}


def ws_optimizer(optimizer, model, torch) -> SGD:
    """The ``ws.optim.SGD`` equal to ``optimizer``; ConfigError naming the option, the
    parameter group or the parameter the wafer cannot follow."""
    if type(optimizer) is not torch.optim.SGD:
        name = type(optimizer).__name__
        what = f"torch.optim.{name}" if type(optimizer).__module__.startswith("torch") else name
        raise ConfigError(f"optimizer: {what} is not supported on the wafer; supported: "
                          f"{SUPPORTED_OPTIMIZER}")
    defaults = _defaults(torch)
    groups = optimizer.param_groups
    first = settings(optimizer)
    for k, g in enumerate(groups):
        where = f"optimizer.param_groups[{k}]"
        for option, default in defaults.items():
            if option in MAPPED or option in IGNORED or option not in g:
                continue
            if _plain(g[option]) != default:
                raise ConfigError(f"{where}: {option}={g[option]!r} is not mapped onto the wafer "
                                  f"(only torch's default, {default!r}); supported: "
                                  f"{SUPPORTED_OPTIMIZER}")
        for option in MAPPED:
            if _plain(g[option]) != first[option]:
                raise ConfigError(f"{where}: {option}={_plain(g[option])!r} differs from "
                                  f"param_groups[0]'s {first[option]!r}: per-group settings are "
                                  "not mapped (one setting for every parameter of the model)")
    _check_parameters(optimizer, model)
    try:
        return SGD(lr=first["lr"], momentum=first["momentum"], nesterov=first["nesterov"],
                   weight_decay=first["weight_decay"])
    except ConfigError as e:
        raise ConfigError(f"optimizer: {e}") from None


def _check_parameters(optimizer, model) -> None:
    names = {id(p): name for name, p in model.named_parameters()}
    held = set()
    for k, g in enumerate(optimizer.param_groups):
        for p in g["params"]:
            if id(p) not in names:
                raise ConfigError(f"optimizer.param_groups[{k}] holds a parameter of shape "
                                  f"{tuple(p.shape)} that is not the model's: the optimizer "
                                  "must be over model.parameters()")
            held.add(id(p))
    for pid, name in names.items():
        if pid not in held:
            raise ConfigError(f"{parameter_path(name)} is not in the optimizer: torch would not "
                              "train it, the wafer trains every parameter; pass "
                              "model.parameters() to the optimizer")
    for p, state in optimizer.state.items():
        if any(v is not None for v in state.values()):
            raise ConfigError(f"optimizer: it already holds state ({', '.join(sorted(state))} of "
                              f"{parameter_path(names.get(id(p), '?'))}) from steps taken "
                              "elsewhere; the wafer's velocities start at zero: wrap a fresh "
                              "optimizer")
