"""Block shapes: what one PE of a block stores, and an automatic choice of (rows, cols)
per layer that fits PE memory and balances the work per PE.

The rules (placement.py): C_l <= R_l and R_{l+1} = C_l. The choice picks R_0 and every
C_l to minimize the largest per-PE block (the slowest pipeline stage [0406]) plus a small
charge per PE (each PE costs emulation time), subject to the memory of a PE.
"""

from __future__ import annotations

import math

from ..errors import ConfigError
from ..nn.sequential import DenseLayer

__all__ = ["pe_data_bytes", "choose_blocks", "DESCRIPTOR_BYTES"]

#: Descriptors, variables and alignment of a PE program (an upper bound).
DESCRIPTOR_BYTES = 512


def pe_data_bytes(nin: int, nout: int, esize: int, slots: int, final: bool, first: bool) -> int:
    """Data bytes a worker (and, if ``final``, finalizer) PE of this size needs."""
    n = nin * (nout + slots) + nin * nout + nout        # W + activation slots, G, fpsum
    if not first:
        n += nin                                        # dpsum
    if final:
        n += nout * (6 + slots)                         # z, bias, gb, a slots, tot, fpr, delta
    return DESCRIPTOR_BYTES + 2 * slots + n * esize


def _max_pe_bytes(d: DenseLayer, r: int, c: int, esize: int, slots: int, first: bool) -> int:
    nin, nout = math.ceil(d.n_in / r), math.ceil(d.n_out / c)
    return pe_data_bytes(nin, nout, esize, slots, True, first)


def choose_blocks(dense: list[DenseLayer], esize: int, slots: int, data_bytes: int,
                  max_rows: int | None = None, pe_charge: float = 8.0) -> list[tuple[int, int]]:
    """(rows, cols) per layer. ConfigError naming the layer when even the largest block
    allowed cannot hold it."""
    limit = max_rows or 64

    def fits(d, r, c, first):
        return _max_pe_bytes(d, r, c, esize, slots, first) <= data_bytes

    n = len(dense)

    def work(i, r, c):
        return math.ceil(dense[i].n_in / r) * math.ceil(dense[i].n_out / c)

    def options(i, rows):
        d = dense[i]
        if rows > d.n_in:
            return []
        cs = range(1, min(rows, d.n_out, limit) + 1)
        return [c for c in cs if fits(d, rows, c, i == 0)
                and (i + 1 == n or c <= dense[i + 1].n_in)]

    # For each bound on the largest per-PE block, the fewest PEs (a small DP over
    # (layer, rows)); the best bound minimizes bound + pe_charge * PEs.
    bounds = sorted({work(i, r, c) for i in range(n) for r in range(1, limit + 1)
                     for c in range(1, min(r, dense[i].n_out) + 1)})
    best, best_cost = None, math.inf
    for bound in bounds:
        if bound >= best_cost:
            break
        memo: dict = {}

        def fewest(i, rows):
            if i == n:
                return 0, []
            key = (i, rows)
            if key not in memo:
                memo[key] = (math.inf, None)
                for c in options(i, rows):
                    if work(i, rows, c) > bound:
                        continue
                    pes, rest = fewest(i + 1, c)
                    if rest is not None and rows * c + pes < memo[key][0]:
                        memo[key] = (rows * c + pes, [(rows, c)] + rest)
            return memo[key]

        for r0 in range(1, min(dense[0].n_in, limit) + 1):
            pes, shape = fewest(0, r0)
            if shape is not None and bound + pe_charge * pes < best_cost:
                best, best_cost = shape, bound + pe_charge * pes
    if best is None:
        d = dense[0]
        raise ConfigError(f"layer 0 (Linear({d.n_in}, {d.n_out})) does not fit: even "
                          f"{min(d.n_in, limit)} x {min(d.n_in, limit, d.n_out)} PEs need more "
                          f"than the {data_bytes} data bytes of a PE; give blocks= or a smaller "
                          "model")
    return best

