"""Conversion to and from ``torch.nn.Sequential`` (torch is an optional extra)."""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError
from .layers import Identity, Linear, ReLU, Sigmoid, Tanh
from .residual import Residual
from .sequential import Sequential
from .two_branch import TwoBranch

__all__ = ["from_torch", "to_torch"]


def _torch():
    try:
        import torch
    except ImportError:  # pragma: no cover - depends on the environment
        raise ConfigError("PyTorch is not installed: pip install 'wafersim[torch]'") from None
    return torch


_block_classes: dict = {}


def _torch_block(kind: str):
    """The torch module ``to_torch`` makes of a ``Residual`` (kind "residual": y = f(x) +
    x) or a ``TwoBranch`` ("two_branch": y = f(x) + g(x)); made once, on first use."""
    if kind not in _block_classes:
        nn = _torch().nn

        class WafersimBlock(nn.Module):
            def __init__(self, f, g=None):
                super().__init__()
                self.f = f
                if g is not None:
                    self.g = g

            def forward(self, x):
                return self.f(x) + (self.g(x) if hasattr(self, "g") else x)

        WafersimBlock.__name__ = {"residual": "WafersimResidual",
                                  "two_branch": "WafersimTwoBranch"}[kind]
        _block_classes[kind] = WafersimBlock
    return _block_classes[kind]


def from_torch(model) -> Sequential:
    """A ``ws.nn.Sequential`` equal to a ``torch.nn.Sequential`` of Linear, ReLU, Sigmoid,
    Tanh and Identity layers, and the residual and two-branch modules ``to_torch`` makes (parameters
    copied as float32)."""
    torch = _torch()
    nn = torch.nn
    if not isinstance(model, nn.Sequential):
        raise ConfigError(f"from_torch takes a torch.nn.Sequential, got {type(model).__name__}")
    simple = {nn.ReLU: ReLU, nn.Sigmoid: Sigmoid, nn.Tanh: Tanh, nn.Identity: Identity}
    layers = []
    for i, m in enumerate(model):
        if type(m) is nn.Linear:
            lin = Linear(m.in_features, m.out_features, bias=m.bias is not None, seed=0)
            w = m.weight.detach().cpu().to(torch.float32).numpy()
            b = None if m.bias is None else m.bias.detach().cpu().to(torch.float32).numpy()
            lin.set_parameters(w, b)
            layers.append(lin)
        elif type(m) in simple:
            layers.append(simple[type(m)]())
        elif type(m) is _block_classes.get("residual"):
            layers.append(Residual(from_torch(m.f)))
        elif type(m) is _block_classes.get("two_branch"):
            layers.append(TwoBranch(from_torch(m.f), from_torch(m.g)))
        else:
            raise ConfigError(f"from_torch: layer {i} ({type(m).__name__}) is not supported; "
                              "use Linear, ReLU, Sigmoid, Tanh and Identity")
    return Sequential(*layers)


def to_torch(model: Sequential):
    """A ``torch.nn.Sequential`` with the same layers and parameters (float32)."""
    torch = _torch()
    nn = torch.nn
    simple = {ReLU: nn.ReLU, Sigmoid: nn.Sigmoid, Tanh: nn.Tanh, Identity: nn.Identity}
    mods = []
    for layer in model:
        if isinstance(layer, Linear):
            m = nn.Linear(layer.in_features, layer.out_features, bias=layer.bias is not None)
            with torch.no_grad():
                m.weight.copy_(torch.from_numpy(np.array(layer.weight, dtype=np.float32)))
                if layer.bias is not None:
                    m.bias.copy_(torch.from_numpy(np.array(layer.bias, dtype=np.float32)))
            mods.append(m)
        elif isinstance(layer, Residual):
            mods.append(_torch_block("residual")(to_torch(layer.f)))
        elif isinstance(layer, TwoBranch):
            mods.append(_torch_block("two_branch")(to_torch(layer.f), to_torch(layer.g)))
        else:
            mods.append(simple[type(layer)]())
    return nn.Sequential(*mods)
