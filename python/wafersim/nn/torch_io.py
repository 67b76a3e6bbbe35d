"""Conversion to and from ``torch.nn.Sequential`` (torch is an optional extra). Each
``ws.nn`` layer converts itself (``to_torch``); ``from_torch`` finds the ws.nn class of a
torch module by its class: Linear, the registered activations (``ACTIVATIONS``), and the
residual and two-branch modules ``to_torch`` makes."""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError
from .activations import ACTIVATIONS
from .linear import Linear
from .residual import Residual
from .sequential import Sequential
from .torch_support import block_kind, import_torch
from .two_branch import TwoBranch

__all__ = ["from_torch", "to_torch", "copy_parameters_to_torch", "torch_linears"]


def _supported() -> str:
    names = sorted(cls.torch_name for cls in ACTIVATIONS.values())
    return "Linear, " + ", ".join(names)


def from_torch(model, path: str = "model") -> Sequential:
    """A ``ws.nn.Sequential`` equal to a ``torch.nn.Sequential`` of Linear layers, the
    activations the wafer maps, and the residual and two-branch modules ``to_torch`` makes
    (parameters copied as float32). ConfigError names the module (``path``) it cannot map."""
    torch = import_torch()
    nn = torch.nn
    if not isinstance(model, nn.Sequential):
        raise ConfigError(f"from_torch takes a torch.nn.Sequential, got {type(model).__name__} "
                          f"at {path}")
    by_torch = {cls.torch_name: cls for cls in ACTIVATIONS.values()}
    layers = []
    for i, m in enumerate(model):
        where = f"{path}[{i}]"
        kind = block_kind(m)
        if type(m) is nn.Linear:
            lin = Linear(m.in_features, m.out_features, bias=m.bias is not None, seed=0)
            w = m.weight.detach().cpu().to(torch.float32).numpy()
            b = None if m.bias is None else m.bias.detach().cpu().to(torch.float32).numpy()
            lin.set_parameters(w, b)
            layers.append(lin)
        elif type(m).__module__.startswith("torch.nn") and type(m).__name__ in by_torch:
            layers.append(by_torch[type(m).__name__].from_torch(m, where))
        elif kind == "residual":
            layers.append(Residual(from_torch(m.f, f"{where}.f")))
        elif kind == "two_branch":
            layers.append(TwoBranch(from_torch(m.f, f"{where}.f"), from_torch(m.g, f"{where}.g")))
        else:
            raise ConfigError(f"from_torch: {where} ({type(m).__name__}) is not supported on the "
                              f"wafer; supported: {_supported()}")
    return Sequential(*layers)


def to_torch(model: Sequential):
    """A ``torch.nn.Sequential`` with the same layers and parameters (float32)."""
    return model.to_torch()


def torch_linears(model):
    """The Linear modules of a torch model in mapping order (a block's f before its g)."""
    nn = import_torch().nn
    for m in model:
        if type(m) is nn.Linear:
            yield m
        elif block_kind(m) is not None:
            yield from torch_linears(m.f)
            if hasattr(m, "g"):
                yield from torch_linears(m.g)


def copy_parameters_to_torch(model, params) -> None:
    """Writes (W, b) per mapped layer into the ``torch.nn.Linear`` modules of ``model`` (a
    torch.nn.Sequential as ``from_torch`` takes it), in the order the wafer maps them."""
    torch = import_torch()
    linears = list(torch_linears(model))
    if len(linears) != len(params):
        raise ConfigError(f"the torch model has {len(linears)} Linear layers, the plan "
                          f"{len(params)}")
    with torch.no_grad():
        for m, (W, b) in zip(linears, params):
            m.weight.copy_(torch.from_numpy(np.array(W, dtype=np.float32)).to(m.weight.dtype))
            if b is not None:
                m.bias.copy_(torch.from_numpy(np.array(b, dtype=np.float32)).to(m.bias.dtype))
