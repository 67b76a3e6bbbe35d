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


_residual_class = None


def _torch_residual():
    """The torch module ``to_torch`` makes of a ``Residual`` (y = f(x) + x)."""
    global _residual_class
    if _residual_class is None:
        nn = _torch().nn

        class WafersimResidual(nn.Module):
            def __init__(self, f):
                super().__init__()
                self.f = f

            def forward(self, x):
                return self.f(x) + x

        _residual_class = WafersimResidual
    return _residual_class


_two_branch_class = None


def _torch_two_branch():
    """The torch module ``to_torch`` makes of a ``TwoBranch`` (y = f(x) + g(x))."""
    global _two_branch_class
    if _two_branch_class is None:
        nn = _torch().nn

        class WafersimTwoBranch(nn.Module):
            def __init__(self, f, g):
                super().__init__()
                self.f = f
                self.g = g

            def forward(self, x):
                return self.f(x) + self.g(x)

        _two_branch_class = WafersimTwoBranch
    return _two_branch_class


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
        elif _residual_class is not None and type(m) is _residual_class:
            layers.append(Residual(from_torch(m.f)))
        elif _two_branch_class is not None and type(m) is _two_branch_class:
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
            mods.append(_torch_residual()(to_torch(layer.f)))
        elif isinstance(layer, TwoBranch):
            mods.append(_torch_two_branch()(to_torch(layer.f), to_torch(layer.g)))
        else:
            mods.append(simple[type(layer)]())
    return nn.Sequential(*mods)
