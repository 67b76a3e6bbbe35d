"""``ws.map(..., cpgd=True, order_log=N)``: the checks of the CPGD options (continuous
propagation, FIG. 27C; program/cpgd.py compiles its bookkeeping, the Trainer runs it with
``algo="cpgd"``), before anything is placed."""

from __future__ import annotations

import numbers

from ..errors import ConfigError
from .placement import branch_blocks, residual_blocks

__all__ = ["check_cpgd", "MAX_ORDER_LOG", "cpgd_bytes"]

#: Entries of the order log per PE (u16 each): a test's worth of updates.
MAX_ORDER_LOG = 4096


def check_cpgd(cpgd, order_log, dense, optimizer_lowering) -> tuple[bool, int]:
    """(cpgd, order_log) checked: ConfigError naming the value and the limit."""
    if not isinstance(cpgd, bool):
        raise ConfigError(f"cpgd must be True or False, got {cpgd!r}")
    if (isinstance(order_log, bool) or not isinstance(order_log, numbers.Integral)
            or not 0 <= order_log <= MAX_ORDER_LOG):
        raise ConfigError(f"order_log must be an integer 0..{MAX_ORDER_LOG} (entries per PE), "
                          f"got {order_log!r}")
    if order_log and not cpgd:
        raise ConfigError("order_log logs the order of CPGD's forward reads and updates: "
                          "it needs cpgd=True")
    if cpgd:
        if residual_blocks(dense) or branch_blocks(dense):
            raise ConfigError("cpgd=True is not supported with Residual or TwoBranch blocks "
                              "(docs/unsupported_functionality.md)")
        if not optimizer_lowering.in_place:
            raise ConfigError(
                f"cpgd=True updates the weights in place as each delta arrives [0617], "
                f"[0625]: it needs plain SGD (ws.optim.SGD without momentum or weight "
                f"decay), got {optimizer_lowering.module!r}")
    return cpgd, int(order_log)


def cpgd_bytes(slots: int, order_log: int, final: bool) -> int:
    """Data bytes the CPGD bookkeeping adds to a PE (program/cpgd.py): counters, a version
    and a histogram bin per slot, the logs, their descriptors."""
    n = 1 + 2 * slots + (2 + order_log if order_log else 0)
    if final and order_log:
        n += 2 + order_log
    return 2 * n + 8 * 4 + 4
