"""What the balancing pass may do, and how it counts memory."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ConfigError

__all__ = ["BalanceOptions", "MODES", "SOLVERS"]

#: "equal": every pair of paths into a join has the same total depth, load times included
#: (the seed's path buffer depth constraint [0180]); "capacity": every path's capacity
#: covers every other path's latency (enough for full throughput, digest section B).
MODES = ("equal", "capacity")
#: "milp": the level formulation with whole blocks; "lp": the linear model (cost in
#: bytes, no rounding to blocks), exact when every batch fills whole blocks; "auto": the
#: LP where it is exact, else the MIP.
SOLVERS = ("auto", "milp", "lp")


@dataclass(frozen=True)
class BalanceOptions:
    """Options of :func:`~wafersim.balance.balance` (see there)."""

    mode: str = "equal"
    block_bytes: int = 1
    tune: bool = True
    insert: bool = True
    delay_loads: bool = False
    budget: int | None = None
    solver: str = "auto"
    time_limit: float = 60.0
    cross_check: bool = True

    def __post_init__(self):
        if self.mode not in MODES:
            raise ConfigError(f"mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        if self.solver not in SOLVERS:
            raise ConfigError(f"solver must be one of {', '.join(SOLVERS)}, got {self.solver!r}")
        b = self.block_bytes
        if isinstance(b, bool) or not isinstance(b, int) or b < 1:
            raise ConfigError(f"block_bytes must be an integer >= 1, got {b!r}")
        for name in ("tune", "insert", "delay_loads", "cross_check"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"{name} must be True or False, got {getattr(self, name)!r}")
        if self.budget is not None:
            if isinstance(self.budget, bool) or not isinstance(self.budget, int):
                raise ConfigError(f"budget must be an integer number of blocks or None, "
                                  f"got {self.budget!r}")
            if self.budget < 0:
                raise ConfigError(f"budget must be >= 0 blocks, got {self.budget}")
        if not self.time_limit > 0:
            raise ConfigError(f"time_limit must be > 0 seconds, got {self.time_limit!r}")
