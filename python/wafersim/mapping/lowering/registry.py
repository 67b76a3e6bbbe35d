"""Registries of the lowerings: the name a ``ws.nn`` activation or loss (or a
``ws.optim`` optimizer) carries -> the class that lowers it onto PE programs. A plug-in
registers itself with a decorator in its own file; ``lowering/__init__.py`` imports every
plug-in file once (the registration line)."""

from __future__ import annotations

from ...errors import ConfigError

__all__ = ["register_activation", "register_loss", "register_optimizer", "activation_for",
           "loss_for", "optimizer_for", "ACTIVATIONS", "LOSSES", "OPTIMIZERS"]

ACTIVATIONS: dict[str, type] = {}
LOSSES: dict[str, type] = {}
OPTIMIZERS: dict[str, type] = {}


def _register(table: dict, what: str):
    def deco(name: str):
        def put(cls):
            if name in table and table[name] is not cls:
                raise ValueError(f"{what} {name!r} is registered twice")
            table[name] = cls
            return cls
        return put
    return deco


register_activation = _register(ACTIVATIONS, "activation")
register_loss = _register(LOSSES, "loss")
register_optimizer = _register(OPTIMIZERS, "optimizer")


def _lookup(table: dict, what: str, name: str, module):
    cls = table.get(name)
    if cls is None:
        known = ", ".join(sorted(table))
        raise ConfigError(f"{what} {name!r} ({module!r}) is not mapped onto the wafer; "
                          f"mapped: {known}")
    return cls(module)


def activation_for(name: str, module=None):
    """The lowering of the activation ``name`` (``module``: the ws.nn layer, for its
    parameters)."""
    return _lookup(ACTIVATIONS, "activation", name, module)


def loss_for(loss):
    return _lookup(LOSSES, "loss", getattr(loss, "name", type(loss).__name__), loss)


def optimizer_for(opt):
    return _lookup(OPTIMIZERS, "optimizer", getattr(opt, "name", type(opt).__name__), opt)
