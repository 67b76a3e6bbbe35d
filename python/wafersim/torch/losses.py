"""The torch losses ``ws.torch`` maps, checked when wrapping: ``torch.nn.MSELoss()`` and
``torch.nn.CrossEntropyLoss()`` with torch's default options, as the ``ws.nn`` loss the
wafer compiles."""

from __future__ import annotations

from ..errors import ConfigError
from ..mapping.lowering import LOSSES as LOWERED
from ..nn.activations import ACTIVATIONS
from ..nn.cross_entropy import CrossEntropyLoss
from ..nn.losses import MSELoss
from .modules import last_module

__all__ = ["ws_loss", "SUPPORTED_LOSSES"]

SUPPORTED_LOSSES = "torch.nn.MSELoss() and torch.nn.CrossEntropyLoss() with default options"

#: option -> torch's default, per supported loss (the only values the wafer maps)
_DEFAULTS = {"MSELoss": {"reduction": "mean"},
             "CrossEntropyLoss": {"reduction": "mean", "weight": None, "ignore_index": -100,
                                  "label_smoothing": 0.0}}


def ws_loss(loss_fn, model, torch):
    """The ``ws.nn`` loss equal to ``loss_fn``; ConfigError naming the option or the loss
    the wafer does not map."""
    nn = torch.nn
    name = type(loss_fn).__name__
    if type(loss_fn) not in (nn.MSELoss, nn.CrossEntropyLoss):
        what = (f"torch.nn.{name}" if type(loss_fn).__module__.startswith("torch")
                else repr(loss_fn))
        raise ConfigError(f"loss_fn: {what} is not supported on the wafer; supported: "
                          f"{SUPPORTED_LOSSES}")
    for option, default in _DEFAULTS[name].items():
        value = getattr(loss_fn, option, default)
        if not (value is None if default is None else value == default):
            shown = "a tensor" if isinstance(value, torch.Tensor) else repr(value)
            raise ConfigError(f"loss_fn: {name}({option}={shown}) is not mapped onto the wafer; "
                              f"only {option}={default!r} (torch's default)")
    loss = MSELoss() if name == "MSELoss" else CrossEntropyLoss()
    if loss.name not in LOWERED:
        raise ConfigError(f"loss_fn: {name} has no lowering onto the wafer in this version; "
                          f"mapped: {', '.join(sorted(LOWERED))}")
    if name == "CrossEntropyLoss":
        path, last = last_module(model)
        activations = {cls.torch_name: cls.name for cls in ACTIVATIONS.values()}
        if activations.get(type(last).__name__, "identity") != "identity":
            raise ConfigError(f"{path} ({type(last).__name__}) follows the output layer: "
                              "CrossEntropyLoss takes the logits, so the model must end with "
                              "its Linear layer")
    return loss
