"""What the balancing pass may do, and how it counts memory."""

from __future__ import annotations

from dataclasses import dataclass

from .._args import bool_arg, choice_arg, int_arg, real_arg
from .graph import MAX_COUNT

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
        choice_arg("mode", self.mode, MODES)
        choice_arg("solver", self.solver, SOLVERS)
        fields = {"block_bytes": int_arg("block_bytes", self.block_bytes, 1, MAX_COUNT),
                  "time_limit": real_arg("time_limit", self.time_limit, 0, lo_open=True,
                                         allow_inf=True, unit="seconds")}
        for name in ("tune", "insert", "delay_loads", "cross_check"):
            fields[name] = bool_arg(name, getattr(self, name))
        fields["budget"] = int_arg("budget", self.budget, 0, none_ok=True)
        for name, value in fields.items():  # numpy scalars become Python ones
            object.__setattr__(self, name, value)
