"""The fabric colors a mapping uses, by role (docs/training.md, "Colors").

| role | what travels | where |
|---|---|---|
| A0, A1 | activations into a layer's rows (layer l reads A_{l%2}) | rows, west to east |
| P0, P1 | forward partial sums toward a column's finalizer | columns, alternating by hop |
| D | deltas down a column from its finalizer | columns, both ways |
| H0, H1 | delta partial sums west along a row | rows, alternating by hop |
| J0, J1 | a row's delta sums to the previous layer's finalizer (J_{l%2} leaves layer l); the targets into the last layer | rows, east to west |
| S | a residual block's input, from the finalizers before the block to its join | rows, west to east |
| B | dL/dy of a residual block, from its join back to the east end of the block's first layer | rows, east to west |
| X | a two-branch block's input, from the fork through branch f's blocks into both branches' first layers | rows, west to east |
| K | dL/dy of a two-branch block, from its join back to branch f's last finalizers | rows, east to west |
| G | branch g's dL/dx, from the west end of its first layer to the east end of f's first layer | rows, east to west |
| RC | a reverse checkpoint's recompute trigger, from a segment's last layer to its kept layer and every PE between | row 0 both ways, then down each column |

Nine colors, eleven with residual blocks, twelve with two-branch blocks (S serves both
kinds), fourteen with both, whatever the model's size: blocks are disjoint, blocks with a
join cannot touch, and the two-color roles alternate wherever two routes of one role would
meet at a router. The finalizer reads its
P colors with an asynchronous operation that names the color (SC), whose microthread
entry is color & 7 [0362]; the two P colors land on the entries 4 and 7, and the J colors
(read the same way) on entries that no other operation of a finalizer uses.
"""

from __future__ import annotations

from ..errors import ConfigError
from .task_ids import BRANCH_ROLES, COLOR_ROLES, SKIP_ROLES, UT_FOR_J, UT_FREE_FOR_SC, UT_SKIP

__all__ = ["allocate_colors", "mapping_roles", "ROLE_NAMES"]

#: What each color role carries.
ROLE_NAMES = {
    "A0": "activations into even layers", "A1": "activations into odd layers",
    "P0": "forward partial sums", "P1": "forward partial sums",
    "D": "deltas down columns",
    "H0": "delta partial sums", "H1": "delta partial sums",
    "J0": "delta sums / targets to finalizers", "J1": "delta sums / targets to finalizers",
    "S": "skips into a join's FIFO", "B": "residual skip deltas",
    "X": "two-branch inputs", "K": "two-branch dL/dy to branch f", "G": "branch g's dL/dx",
    "Y": "targets into the softmax head", "O": "outputs and loss shares to the host",
    "R0": "softmax reduction", "R1": "softmax reduction", "RB": "softmax result",
    "RC": "recompute triggers (reverse checkpoint)",
}


def mapping_roles(residual: bool = False, branch: bool = False,
                  head: tuple[str, ...] = (), recompute: bool = False) -> tuple[str, ...]:
    """The color roles of a mapping with residual and / or two-branch blocks, and a loss's
    head column (``head``: its roles); ``recompute``: a reverse checkpoint under which some
    layer discards (its trigger, RC)."""
    extra = (SKIP_ROLES if residual else ()) + (BRANCH_ROLES if branch else ())
    return (COLOR_ROLES + tuple(dict.fromkeys(extra)) + tuple(head)
            + (("RC",) if recompute else ()))


def allocate_colors(fabric_colors: int, taken: set[int] = frozenset(),
                    residual: bool = False, branch: bool = False,
                    head: dict | None = None, recompute: bool = False) -> dict[str, int]:
    """Role -> color, the lowest free colors that satisfy the entry rules of P0/P1, J0/J1,
    K and S. ``taken``: colors already routed on routers the mapping will use; ``residual``:
    the model has residual blocks (S and B); ``branch``: two-branch blocks (S, X, K, G);
    ``head``: a loss head's roles, each with the microthread entries (color & 7) its color
    may use or None; ``recompute``: a reverse checkpoint's trigger (RC, a task color).
    ConfigError when the wafer has too few routable colors."""
    free = [c for c in range(fabric_colors) if c not in taken]
    head = dict(head or {})
    roles = mapping_roles(residual, branch, tuple(head), recompute)
    need = len(roles)
    if len(free) < need:
        raise ConfigError(f"the mapping needs {need} routable colors; this wafer has "
                          f"{fabric_colors} ({len(taken)} of them already routed here): "
                          f"use ws.Wafer(..., colors={need + len(taken)}) or more")
    out: dict[str, int] = {}
    for role, entry in (("P0", UT_FREE_FOR_SC[0]), ("P1", UT_FREE_FOR_SC[1])):
        pick = next((c for c in free if c & 7 == entry), None)
        if pick is None:
            raise ConfigError(f"no free color c with c % 8 == {entry} for the partial-sum "
                              f"chain ({role}); this wafer has {fabric_colors} colors")
        out[role] = pick
        free.remove(pick)
    for role in ("J0", "J1") + (("K",) if branch else ()):
        pick = next((c for c in free if c & 7 in UT_FOR_J), None)
        if pick is None:
            raise ConfigError(f"no free color c with c % 8 in {UT_FOR_J} for the delta sums "
                              f"({role}); this wafer has {fabric_colors} colors")
        out[role] = pick
        free.remove(pick)
    if "S" in roles:
        pick = next((c for c in free if c & 7 == UT_SKIP), None)
        if pick is None:
            raise ConfigError(f"no free color c with c % 8 == {UT_SKIP} for the residual skips "
                              f"(S); this wafer has {fabric_colors} colors")
        out["S"] = pick
        free.remove(pick)
    for role, entries in head.items():
        if entries is None:
            continue
        pick = next((c for c in free if c & 7 in entries), None)
        if pick is None:
            raise ConfigError(f"no free color c with c % 8 in {entries} for the loss head's "
                              f"{role}; this wafer has {fabric_colors} colors")
        out[role] = pick
        free.remove(pick)
    for role in roles:
        if role not in out:
            out[role] = free.pop(0)
    return out
