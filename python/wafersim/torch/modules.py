"""What ``ws.torch`` accepts as a model, checked when wrapping: a ``torch.nn.Sequential``
of Linear layers and the activations whose lowering is registered, with float32
parameters that all train. Each refusal names the module's path (``model[3]``,
``model[2].f[0]``), what is unsupported and what is supported."""

from __future__ import annotations

from ..errors import ConfigError
from ..mapping.lowering import ACTIVATIONS as LOWERED
from ..nn.activations import ACTIVATIONS
from ..nn.torch_support import block_kind

__all__ = ["check_model", "supported_modules", "parameter_path", "last_module"]

#: modules a torch user puts at the end of a classifier, and why the wafer needs none
_HINTS = {"Softmax": "CrossEntropyLoss applies the softmax itself: end the model with its "
                     "Linear layer (the logits)",
          "LogSoftmax": "use CrossEntropyLoss on the logits instead of NLLLoss on "
                        "LogSoftmax: end the model with its Linear layer"}


def _activation_classes() -> dict[str, type]:
    """torch class name -> ws.nn activation class, for the activations the wafer maps."""
    return {cls.torch_name: cls for cls in ACTIVATIONS.values() if cls.name in LOWERED}


def supported_modules() -> str:
    names = []
    for torch_name, cls in sorted(_activation_classes().items()):
        names.append("GELU(approximate='tanh')" if cls.name == "gelu" else torch_name)
    return ("Linear, " + ", ".join(names)
            + " (and the Residual / TwoBranch blocks that ws.nn's to_torch makes)")


def check_model(model, torch) -> None:
    """ConfigError for the first module or parameter of ``model`` the wafer cannot train
    as torch would."""
    nn = torch.nn
    if not isinstance(model, nn.Sequential):
        raise ConfigError(f"model must be a torch.nn.Sequential, got {type(model).__name__}; "
                          f"the wafer maps a Sequential of {supported_modules()}")
    _check_sequential(model, "model", nn)
    for name, p in model.named_parameters():
        where = parameter_path(name)
        if not p.requires_grad:
            raise ConfigError(f"{where} has requires_grad=False: frozen parameters are not "
                              "mapped (the wafer trains every weight and bias of the model)")
        if p.dtype != torch.float32:
            raise ConfigError(f"{where} is {p.dtype}: keep the torch model in float32 (the "
                              "wafer's number format is set by numerics=)")


def _check_sequential(seq, path: str, nn) -> None:
    if type(seq).forward is not nn.Sequential.forward:
        raise ConfigError(f"{path} ({type(seq).__name__}) overrides forward(): only the plain "
                          "torch.nn.Sequential order of modules is mapped")
    activations = _activation_classes()
    known = {cls.torch_name: cls for cls in ACTIVATIONS.values()}
    for i, m in enumerate(seq):
        where = f"{path}[{i}]"
        name = type(m).__name__
        if type(m) is nn.Linear:
            continue
        kind = block_kind(m)
        if kind is not None:
            _check_sequential(m.f, f"{where}.f", nn)
            if kind == "two_branch":
                _check_sequential(m.g, f"{where}.g", nn)
            continue
        if type(m).__module__.startswith("torch.nn") and name in known:
            known[name].from_torch(m, where)            # refuses options it does not map
            if name not in activations:
                raise ConfigError(f"{where} ({name}): this activation has no lowering onto the "
                                  f"wafer in this version; supported: {supported_modules()}")
            continue
        hint = f" ({_HINTS[name]})" if name in _HINTS else ""
        raise ConfigError(f"{where} ({name}) is not supported on the wafer{hint}; supported: "
                          f"{supported_modules()}")


def parameter_path(name: str) -> str:
    """torch's parameter name ("2.f.0.weight") as a path of the model ("model[2].f[0].weight")."""
    out = "model"
    for part in name.split("."):
        out += f"[{part}]" if part.isdigit() else f".{part}"
    return out


def last_module(model) -> tuple[str, object]:
    """(path, module) of the module that computes the model's output."""
    return f"model[{len(model) - 1}]", model[len(model) - 1]
