"""The errors of the balancing pass: both are a ConfigError (a ValueError) of the caller's input."""

from __future__ import annotations

from ..errors import ConfigError

__all__ = ["InfeasibleError", "BudgetError"]


class InfeasibleError(ConfigError):
    """No depths, insertions and load delays allowed by the options balance the graph.

    ``node`` is the join (or consumer) where the conflicting paths meet; ``involved`` lists
    the buffers and loads whose constraints contradict each other.
    """

    def __init__(self, message: str, *, node: str, involved: tuple[str, ...] = ()):
        super().__init__(message)
        self.node = node
        self.involved = involved


class BudgetError(ConfigError):
    """The cheapest balancing needs more memory blocks than the budget allows.

    ``needed`` is the smallest number of blocks the pass must add, ``shortfall`` how many
    blocks the budget lacks (``needed - budget``).
    """

    def __init__(self, message: str, *, needed: int, budget: int):
        super().__init__(message)
        self.needed = needed
        self.budget = budget
        self.shortfall = needed - budget
