"""``ws.map(..., cpgd=True, order_log=N)``: the checks of the CPGD options (continuous
propagation, FIG. 27C; program/cpgd.py compiles its bookkeeping, the Trainer runs it with
``algo="cpgd"``), before anything is placed."""

from __future__ import annotations

import numbers

from ..errors import ConfigError
from .placement import branch_blocks, residual_blocks

__all__ = ["check_cpgd", "check_dp_weights", "MAX_ORDER_LOG", "cpgd_bytes",
           "recompute_log_bytes", "snapshot_bytes", "DP_WEIGHTS"]

#: Entries of the order log per PE (u16 each): a test's worth of updates.
MAX_ORDER_LOG = 4096

#: Which weights the delta pass of a sample uses [0634]: the ones stored when its deltas
#: arrive ("current"), or those its own forward pass read ("forward": a snapshot per
#: sample in flight on every PE with a delta pass; program/cpgd_snapshot.py).
DP_WEIGHTS = ("current", "forward")


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
    return cpgd, int(order_log)


def check_dp_weights(dp_weights, cpgd: bool, pruning) -> str:
    """``ws.map(..., dp_weights=)`` checked (after check_cpgd)."""
    if not isinstance(dp_weights, str) or dp_weights not in DP_WEIGHTS:
        raise ConfigError(f"dp_weights must be one of {', '.join(DP_WEIGHTS)}, got {dp_weights!r}")
    if dp_weights == "forward":
        if not cpgd:
            raise ConfigError("dp_weights='forward' (the delta pass with the weights of the "
                              "sample's own forward pass [0634]) is a CPGD option: it needs "
                              "cpgd=True")
        if any(p is not None for p in pruning):
            raise ConfigError("dp_weights='forward' is not supported with weight_sparsity "
                              "(docs/unsupported_functionality.md)", category="unsupported")
    return dp_weights


def snapshot_bytes(layer: int, nin: int, ncols: int, esize: int, slots: int,
                   dp_weights: str) -> int:
    """Bytes of the delta pass's weight snapshots on a PE (dp_weights="forward"): a copy
    of the PE's W (nin x ncols) per slot, in every layer that has a delta pass (not layer
    0), and two descriptors per slot."""
    if dp_weights != "forward" or layer == 0:
        return 0
    return slots * (nin * ncols * esize + 2 * 6) + 6


def recompute_log_bytes(order_log: int) -> int:
    """Data bytes the order log adds to a PE of a reverse checkpoint's segment
    (program/cpgd.py: ``v_rnact``, ``v_rcnt``, ``rlog``, its descriptor)."""
    return 2 * (2 + order_log) + 4 if order_log else 0


def cpgd_bytes(slots: int, order_log: int, final: bool, snapshot: bool = False) -> int:
    """Data bytes the CPGD bookkeeping adds to a PE (program/cpgd.py): counters, a version
    and a histogram bin per slot, the logs (with snapshots, one more of the activation
    closeouts: program/cpgd_snapshot.py), their descriptors."""
    n = 1 + 2 * slots + (2 + order_log if order_log else 0)
    if final and order_log:
        n += 2 + order_log
    if snapshot and order_log:
        n += 2 + order_log + 3
    return 2 * n + 8 * 4 + 4
