"""Block shapes: what one PE of a block stores, and an automatic choice of (rows, cols)
per layer that fits PE memory.

The rules (placement.py): C_l <= R_l and R_{l+1} = C_l. The choice picks R_0 and every
C_l to minimize an estimate of one sample's cycles through all passes (per layer: the
multiply-accumulates of one PE in the forward pass, twice that in the delta and chain
passes of layers after the first, once in layer 0's chain pass, and the finalizer's
per-output work) plus a charge per PE (each PE costs emulation time), subject to the
memory of a PE.
"""

from __future__ import annotations

import math

from ..errors import ConfigError
from ..nn.dense import DenseLayer
from .placement import in_residual

__all__ = ["pe_data_bytes", "choose_blocks", "DESCRIPTOR_BYTES"]

#: Descriptors, variables and alignment of a PE program (an upper bound).
DESCRIPTOR_BYTES = 512


def pe_data_bytes(nin: int, nout: int, esize: int, slots: int, final: bool, first: bool,
                  skip_depth: int = 0, extra: int = 0, stored: int | None = None) -> int:
    """Data bytes a worker (and, if ``final``, finalizer) PE of this size needs;
    ``skip_depth``: the FIFO slots of a residual's join (0: not a join); ``extra``: the
    bytes the lowerings add (an optimizer's velocities, an activation's stored inputs);
    ``stored``: weight columns per row when pruned weights are not stored (None: nout)."""
    sc = nout if stored is None else stored
    n = nin * (sc + slots) + nin * sc + nout            # W + activation slots, G, fpsum
    if not first:
        n += nin                                        # dpsum
    if final:
        n += nout * (6 + slots)                         # z, bias, gb, a slots, tot, fpr, delta
        if skip_depth:
            n += nout * (skip_depth + 1)                # skip FIFO, y
    return DESCRIPTOR_BYTES + 2 * slots + n * esize + extra


def _no_extra(index: int, nin: int, nout: int, final: bool) -> int:
    return 0


def choose_blocks(dense: list[DenseLayer], esize: int, slots: int, data_bytes: int,
                  max_rows: int | None = None, pe_charge: float = 8.0,
                  skip_depth: int = 1, extra=_no_extra,
                  smear: dict | None = None) -> list[tuple[int, int]]:
    """(rows, cols) per layer. ConfigError naming the layer when even the largest block
    allowed cannot hold it. The layers of a residual block get square blocks with the
    rows they receive (placement.py). ``extra(layer, nin, nout, final)``: the bytes the
    lowerings add to such a PE. ``smear``: layer -> the sizes of its input groups
    (smear.py); such a layer gets as many rows, the layer before it as many columns."""
    limit = max_rows or 64
    square = in_residual(dense)
    smear = smear or {}

    def largest(i, r, c):
        """The largest |I_r| and |O_c| of layer i on r x c PEs."""
        d = dense[i]
        nin = max(smear[i]) if i in smear else math.ceil(d.n_in / r)
        nout = max(smear[i + 1]) if i + 1 in smear else math.ceil(d.n_out / c)
        return nin, nout

    def fits(d, r, c, first):
        i = dense.index(d)
        nin, nout = largest(i, r, c)
        need = pe_data_bytes(nin, nout, esize, slots, True, first,
                             skip_depth if d.skip_from is not None else 0,
                             extra(i, nin, nout, True))
        return need <= data_bytes

    n = len(dense)

    def work(i, r, c):
        nin, nout = largest(i, r, c)
        return nin * nout * (2 if i == 0 else 3) // 2 + 12 * nout

    def options(i, rows):
        d = dense[i]
        if rows > d.n_in:
            return []
        cs = [rows] if i in square else range(1, min(rows, d.n_out, limit) + 1)
        if i + 1 in smear:
            cs = [c for c in cs if c == len(smear[i + 1])]
        return [c for c in cs if c <= d.n_out and fits(d, rows, c, i == 0)
                and (i + 1 == n or c <= dense[i + 1].n_in)]

    # The cost is a sum over layers: a DP over (layer, rows) finds the cheapest shapes.
    memo: dict = {}

    def cheapest(i, rows):
        if i == n:
            return 0.0, []
        key = (i, rows)
        if key not in memo:
            memo[key] = (math.inf, None)
            for c in options(i, rows):
                cost, rest = cheapest(i + 1, c)
                cost += work(i, rows, c) + pe_charge * rows * c
                if rest is not None and cost < memo[key][0]:
                    memo[key] = (cost, [(rows, c)] + rest)
        return memo[key]

    best, best_cost = None, math.inf
    firsts = [len(smear[0])] if 0 in smear else range(1, min(dense[0].n_in, limit) + 1)
    for r0 in firsts:
        cost, shape = cheapest(0, r0)
        if shape is not None and cost < best_cost:
            best, best_cost = shape, cost
    if best is None and smear:
        parts = ", ".join(f"layer {k}: {len(v)}" for k, v in sorted(smear.items()))
        raise ConfigError(f"no block shapes fit the smear ({parts} portions, one per PE row): "
                          "a smeared layer's portions are its rows and the previous layer's "
                          "columns, a block needs at least as many rows as columns (so every "
                          "earlier layer needs at least that many rows and inputs), and each PE "
                          f"must fit its {data_bytes} data bytes; give fewer portions or "
                          "blocks=")
    if best is None:
        d = dense[0]
        raise ConfigError(f"layer 0 (Linear({d.n_in}, {d.n_out})) does not fit: even "
                          f"{min(d.n_in, limit)} x {min(d.n_in, limit, d.n_out)} PEs need more "
                          f"than the {data_bytes} data bytes of a PE; give blocks= or a smaller "
                          "model")
    return best

