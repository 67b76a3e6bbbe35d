"""Weight sparsity in a PE's program (mapping/weight_sparsity.py chooses what is pruned).

A PE (r, c) of a layer keeps, of its outputs O_c, only those whose weights from its inputs
I_r are not pruned: row i of its W holds the kept columns, in output order, then the
activation slots. Pruned weights take no memory and no cycles:

* forward (``f_act``): one fused multiply-add per *run* of consecutive kept outputs,
  fpsum[run] += a_i * W[run, i] (run 0's descriptors stay in S0[0] / S1[0]; each further
  run loads its two descriptors into S0[11] / S1[11] first: two cycles a run);
* delta and chain (``b_delta``): the column table ``wcols`` gives the stored column of
  output j (bytes), or 0xFFFF when j is pruned here: then the task ends at once, with no
  delta-pass and no chain-pass work for j;
* the finalizer's own block pass is unrolled by output: a pruned output emits no DP or CP;
* the update task and the optimizer's state run over the stored columns only.
"""

from __future__ import annotations

from ..registers import I0, O0, ROWB
from .spec import PeSpec

__all__ = ["sparse_weight_data", "forward_runs", "delta_column", "pruned_delta_end", "row_offset",
           "PRUNED"]

#: the column table's entry for an output pruned at this PE
PRUNED = 0xFFFF


def sparse_weight_data(s: PeSpec) -> list[str]:
    """The descriptors of the runs of kept outputs (their partial sums; their weights from
    the second run on, the first being ``d_wrow``), placed after the u16 words within the
    1024 bytes the DSR loads reach, and the column table."""
    if not s.sparse:
        return []
    E = s.esize
    L = []
    for k, (j0, p0, n) in enumerate(s.runs()):
        L.append(f"d_frun{k}: .dsd mem1d, base=fpsum + {j0 * E}, length={n}, stride={E}")
        if k > 0:
            L.append(f"d_wrun{k}: .dsd mem1d, base=w + {p0 * E}, length={n}, stride={E}, wli=1")
    cols = [PRUNED if s.position(j) is None else s.position(j) * E for j in range(s.nout)]
    L.append("wcols:   .u16 " + ", ".join(str(v) for v in cols))
    return L


def forward_runs(s: PeSpec) -> list[str]:
    """f_act's multiply-adds: one per run of kept outputs (r4 = the row of input i)."""
    FX = s.FX
    runs = s.runs()
    if not runs:
        return ["        ; every output of this PE is pruned: no forward-pass work"]
    L = [f"        fmac{FX} S0[0], S0[0], S1[0]      ; fpsum[run 0] += W[run 0, i] * a_i [0408]"]
    for k in range(1, len(runs)):
        L += [f"        lds0wds S0[11], d_frun{k}",
              f"        lds1wds S1[11], d_wrun{k}",
              f"        fmac{FX} S0[11], S0[11], S1[11]   ; the next run of kept outputs"]
    return L


def delta_column(s: PeSpec) -> list[str]:
    """b_delta's first lines at a sparse PE: r4 = the stored column of output j (bytes);
    a pruned j ends the task (no delta-pass or chain-pass work)."""
    return ["b_delta:                                ; delta_j in r2, j in r4",
            f"        sub16 r4, r4, {O0}",
            "        add16 r4, r4, r4               ; the column table has u16 entries",
            "        li r6, wcols",
            "        add16 r6, r6, r4",
            "        mov16 r4, [r6]                 ; stored column of j (bytes), or pruned",
            "        eq16 r4, #-1",
            "        bt bdpr"]


def pruned_delta_end() -> list[str]:
    """Where b_delta goes for a delta whose weights are pruned at this PE."""
    return ["bdpr:   term                           ; weights of j pruned here: nothing to do"]


def row_offset() -> list[str]:
    """f_act's first lines: r4 = the row of input i (as in the dense program)."""
    return [f"f_act:  sub16 r4, r4, {I0}               ; a_i in r2, i in r4 [0346]: local input",
            f"        mul16 r4, r4, {ROWB}               ; its row of W"]
