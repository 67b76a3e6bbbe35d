"""Reading CPGD's bookkeeping out of PE memory (program/cpgd.py): the staleness
histograms each PE kept with CE instructions, and the order log of a plan mapped with
``order_log=N``. The host only reads (and clears) words after a run."""

from __future__ import annotations

import numpy as np

__all__ = ["read_staleness", "clear_cpgd_words", "read_order_log"]


def read_staleness(plan, clear: bool = True) -> dict[int, np.ndarray]:
    """Layer -> (slots,) counts: how many of its PEs' updates were k updates behind the
    weights their forward pass read (summed over the layer's PEs); ``clear`` zeroes the
    PEs' histograms afterwards."""
    w = plan.wafer
    out = {}
    for b in plan.layers:
        h = np.zeros(plan.slots, np.int64)
        for p in b.points():
            h += w.memcpy_d2h("v_shist", rect=p).ravel().astype(np.int64)
        out[b.index] = h
    if clear:
        zero = np.zeros(plan.slots, np.uint16)
        for b in plan.layers:
            w.memcpy_h2d("v_shist", zero, rect=b.rect)
    return out


def clear_cpgd_words(plan) -> None:
    """Counters, histograms and logs back to zero (nothing may be in flight)."""
    w = plan.wafer
    names = ["v_upd", "v_shist"] + (["v_nact", "v_ocnt", "v_bupd", "v_bcnt", "v_fcnt"]
                                    if plan.order_log else [])
    for p in plan.pes():
        if p not in plan.specs:
            continue
        exports = plan.programs[p].exports
        for name in names:
            if name not in exports:
                continue
            n = plan.slots if name == "v_shist" else 1
            w.memcpy_h2d(name, np.zeros(n, np.uint16), rect=p)


def read_order_log(plan) -> dict:
    """The order log (``ws.map(..., cpgd=True, order_log=N)``): {"olog": {pe: entries},
    "blog": {pe: entries}, "full": any log that filled}. ``olog`` of a PE: per column
    update (a worker's b_delta, or a finalizer's own block pass) in order, the number of
    f_act tasks (rows of W read) before it; ``blog`` of a finalizer with a bias: per
    activation closeout, the bias updates before it; ``flog`` of a PE with weight
    snapshots (dp_weights="forward"): per activation closeout, the olog entries before it;
    ``rlog`` of a PE of a reverse checkpoint's segment: per recompute that started there,
    the olog entries before it."""
    w = plan.wafer
    olog, blog, flog, rlog, full = {}, {}, {}, {}, False
    for p, s in plan.specs.items():
        n = int(w.memcpy_d2h("v_ocnt", rect=p).ravel()[0])
        full |= n > plan.order_log
        olog[p] = w.memcpy_d2h("olog", rect=p).ravel()[:min(n, plan.order_log)].astype(np.int64)
        if s.final and s.bias:
            n = int(w.memcpy_d2h("v_bcnt", rect=p).ravel()[0])
            full |= n > plan.order_log
            blog[p] = w.memcpy_d2h("blog", rect=p).ravel()[:min(n, plan.order_log)].astype(np.int64)
        if s.snapshot:
            n = int(w.memcpy_d2h("v_fcnt", rect=p).ravel()[0])
            full |= n > plan.order_log
            flog[p] = w.memcpy_d2h("flog", rect=p).ravel()[:min(n, plan.order_log)].astype(np.int64)
        if s.rc is not None:
            n = int(w.memcpy_d2h("v_rcnt", rect=p).ravel()[0])
            full |= n > plan.order_log
            rlog[p] = w.memcpy_d2h("rlog", rect=p).ravel()[:min(n, plan.order_log)].astype(np.int64)
    return {"olog": olog, "blog": blog, "flog": flog, "rlog": rlog, "full": full}
