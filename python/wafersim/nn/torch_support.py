"""PyTorch, imported on demand (it is an optional extra), and the torch modules that stand
for ``Residual`` and ``TwoBranch`` blocks (made once, on first use)."""

from __future__ import annotations

from ..errors import ConfigError

__all__ = ["import_torch", "torch_block", "block_kind"]

_block_classes: dict = {}


def import_torch():
    try:
        import torch
    except ImportError:  # pragma: no cover - depends on the environment
        raise ConfigError("PyTorch is not installed: pip install 'wafersim[torch]'") from None
    return torch


def torch_block(kind: str):
    """The torch module class for a ``Residual`` (kind "residual": y = f(x) + x) or a
    ``TwoBranch`` ("two_branch": y = f(x) + g(x))."""
    if kind not in _block_classes:
        nn = import_torch().nn

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


def block_kind(module) -> str | None:
    """"residual" or "two_branch" for a module ``torch_block`` made, else None."""
    for kind, cls in _block_classes.items():
        if type(module) is cls:
            return kind
    return None
