"""The Trainer's CPGD options (``algo="cpgd"``, ``window``, ``dp_weights``), checked
before any cycle runs (docs/training.md, "CPGD")."""

from __future__ import annotations

import numbers

import numpy as np

from ..errors import ConfigError
from ..mapping.cpgd_options import DP_WEIGHTS

__all__ = ["check_cpgd_trainer", "check_cpgd_batches", "cpgd_stream_end", "DP_WEIGHTS"]


def check_cpgd_trainer(plan, algo: str, window, dp_weights) -> int | None:
    """CPGD's window (samples in flight per PE) for ``algo="cpgd"``, else None.
    ``dp_weights`` None: the plan's (its programs decide which weights the delta pass
    reads: ws.map(..., dp_weights=))."""
    if dp_weights is None:
        dp_weights = plan.dp_weights
    elif not isinstance(dp_weights, str) or dp_weights not in DP_WEIGHTS:
        raise ConfigError(f"dp_weights must be one of {', '.join(DP_WEIGHTS)}, got {dp_weights!r}")
    if algo != "cpgd":
        if window is not None:
            raise ConfigError(f"window= is CPGD's samples in flight: it needs algo='cpgd' "
                              f"(got algo={algo!r})")
        if dp_weights != plan.dp_weights:
            raise ConfigError(f"dp_weights={dp_weights!r} is a CPGD option: it needs algo='cpgd'")
        return None
    if not plan.cpgd:
        raise ConfigError("algo='cpgd' needs a plan mapped for it: ws.map(model, cpgd=True) "
                          "(it compiles the staleness counters)")
    if dp_weights != plan.dp_weights:
        raise ConfigError(
            f"dp_weights={dp_weights!r}: the plan was mapped with dp_weights="
            f"{plan.dp_weights!r}, and its programs decide which weights the delta pass reads "
            "([0634]; 'forward' keeps a snapshot of W per sample in flight): map with "
            f"ws.map(..., cpgd=True, dp_weights={dp_weights!r})")
    if window is None:
        return plan.slots
    if (isinstance(window, bool) or not isinstance(window, numbers.Integral)
            or not 1 <= window <= plan.slots):
        raise ConfigError(
            f"window must be an integer 1..{plan.slots}: each sample in flight needs an "
            f"activation slot on every PE, and the plan was mapped with slots={plan.slots} "
            f"(map with more slots, if they fit PE memory), got {window!r}")
    return int(window)


def check_cpgd_batches(plan, batch_size: int, window: int) -> None:
    """CPGD with mini-batches ([0636]: a batch starts before the one before it has
    completed; "parameter inconsistency within the pipeline is limited to no more than
    one batch boundary"): ConfigError before any cycle runs unless the window keeps every
    forward pass within one batch update of the weights its batch should read, and the
    plan can run batches without draining.

    A sample t reads a PE's weights before the update of batch b (at the end of the
    backward pass of b's last sample s_b there) only while s_b .. t - 1 are all in flight
    there, so t <= s_b + window - 1. A sample of batch b + 2 (t >= s_b + B + 1) can
    therefore miss two updates exactly when window >= B + 2: the window is at most
    batch_size + 1."""
    if batch_size == 1:
        return
    if window > batch_size + 1:
        raise ConfigError(
            f"window={window} with batch_size={batch_size}: CPGD with mini-batches keeps "
            f"the weights a forward pass reads at most one batch update behind ([0636]), "
            f"so at most batch_size + 1 = {batch_size + 1} samples may be in flight per PE "
            f"(a larger window lets a sample of batch b + 2 read the weights from before "
            f"batch b's update); use window <= {batch_size + 1} or a larger batch_size")
    if not all(plan.keeps):
        gone = [i for i, k in enumerate(plan.keeps) if not k]
        raise ConfigError(
            f"algo='cpgd' with batch_size={batch_size}: the plan's reverse checkpoint "
            f"(layers {gone} discard) marks the epoch's last sample to start the last "
            "recomputes, the same mark that ends a mini-batch; CPGD with mini-batches runs "
            "on plans without a reverse checkpoint only (use batch_size=1, or map without "
            "checkpoint=; docs/unsupported_functionality.md)", category="unsupported")


def cpgd_stream_end(n: int) -> np.ndarray:
    """The batch ends of a CPGD epoch of ``n`` samples on a plan with a reverse checkpoint:
    only the last sample. A segment's recompute waits until no forward pass can come
    before it at its PEs (every sample in flight forwarded, or the stream's last one:
    program/recompute.py, ``rc_try``); the mark tells the PEs the stream has ended, so
    the epoch's last recomputes do not wait for samples that never come. In-place updates
    ignore it otherwise (``v_cpm`` = 0), and each PE clears it when the epoch has ended
    there (``stream_done``)."""
    ends = np.zeros(n, bool)
    ends[-1] = True
    return ends
