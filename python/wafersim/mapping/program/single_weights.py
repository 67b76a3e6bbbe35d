"""Single-weight sparsity in a PE's program (mapping/single_weights.py says what is kept
and how it is stored). Every pass is one vector operation over a row's or a column's
records, using the CE's indexed 1D vectors (IX): a look-up of the row or column in its
table writes the count into the descriptors' Length (a store into the descriptor's low
word, then a DSR load) and points r4 (WLI: it moves the index list) at its records.

* forward (``f_act``, activation a_i): fpsum[j] += W[j, i] a_i over row i's records (a
  scatter-add: fpsum indexed by the records' output offsets), then a_i into its slot;
* delta (``b_delta``, delta d_j, and the finalizer's own block pass): DP dpsum[i] +=
  W[j, i] d_j over column j's records (dpsum and the values both indexed), CP W[j, i] +=
  a_i (-lr d_j) (the values and the backward slot's activations both indexed): the
  optimizer's chain-pass lines run unchanged on these descriptors (S0[2], S1[2]; in
  mini-batches G[j, i] += a_i d_j through S0[3]);
* the mini-batch's update: W += G (-lr / b), G = 0 over every kept weight (two vector
  operations over the records, sgd.py);
* the backward slot: ``d_sca`` reads the activations of the backward slot; bp_end copies
  the slot's template ``d_scat{k}`` into it when the slot moves.

Stride registers: SR[2] the column records' value offsets, SR[3] their dpsum offsets,
SR[4] their slot offsets, SR[5] the row records' output offsets.
"""

from __future__ import annotations

from ..registers import I0, O0, ROWB
from ..single_weights import CREC, REC
from .spec import PeSpec

__all__ = ["single_weight_data", "single_main", "single_forward", "single_delta_column",
           "single_own_column", "single_slot_copy"]


def _sca(s: PeSpec, name: str, k: int) -> str:
    return (f"{name}: .dsd mem1d, base=w + {(s.ncols + k) * s.esize}, length=0, stride={CREC}, "
            f"ix=4, wli=1")


def single_weight_data(s: PeSpec) -> tuple[list[str], list[str]]:
    """(declarations, exports): the descriptors, stride words, tables and records."""
    if not s.single:
        return [], []
    lay = s.layout()
    n = max(lay.nnz, 1)
    L = [f"d_sfy:   .dsd mem1d, base=fpsum, length=0, stride={REC}, ix=5, wli=1  ; fpsum[row's js]",
         f"d_sfv:   .dsd mem1d, base=rec, length=0, stride={REC}, wli=1        ; row i's values",
         f"d_sdw:   .dsd mem1d, base=rec, length=0, stride={CREC}, ix=2, wli=1  ; column j's W",
         f"d_scg:   .dsd mem1d, base=rec + 4, length=0, stride={CREC}, ix=2, wli=1  ; and their G",
         f"d_swall: .dsd mem1d, base=rec, length={n}, stride={REC}        ; every kept value",
         f"d_sgall: .dsd mem1d, base=rec + 4, length={n}, stride={REC}    ; and its G",
         _sca(s, "d_sca", 0) + "   ; their inputs' activations (backward slot)"]
    if s.has_dp:
        L.append(f"d_sdx:   .dsd mem1d, base=dpsum, length=0, stride={CREC}, ix=3, wli=1  "
                 f"; dpsum[column j's inputs]")
    if s.slots > 1:
        L += [_sca(s, f"d_scat{k}", k) for k in range(s.slots)]
    L += ["s_scw:   .stride crec", "s_sdx:   .stride crec + 2", "s_sca:   .stride crec + 4",
          f"s_sfy:   .stride rec + {REC - 2}",
          f"rtab:    .space u16, {2 * s.nin}",
          f"ctab:    .space u16, {2 * s.nout}",
          f"rec:     .space u16, {REC // 2 * n}",
          f"crec:    .space u16, {CREC // 2 * n}"]
    return L, ["rec", "rtab", "crec", "ctab"]


def single_main(s: PeSpec) -> list[str]:
    """main: the stride registers that hold the records' index lists."""
    if not s.single:
        return []
    return ["        ldsr SR[2], s_scw", "        ldsr SR[3], s_sdx",
            "        ldsr SR[4], s_sca", "        ldsr SR[5], s_sfy"]


def single_forward(s: PeSpec) -> list[str]:
    """f_act up to the slot store: r4 = the row of input i in ``w`` at its end."""
    return [f"f_act:  sub16 r4, r4, {I0}               ; a_i in r2, i in r4 [0346]: local input",
            "        mov16 r5, r4",
            "        add16 r4, r4, r4",
            "        add16 r4, r4, r4               ; 4 i: row i's entry of rtab",
            "        li r6, rtab",
            "        add16 r6, r6, r4",
            "        mov16 r4, [r6]                 ; row i's first record (wli)",
            "        add16 r6, r6, #2",
            "        mov16 r0, [r6]                 ; its count: the descriptors' Length",
            "        st16 r0, d_sfy",
            "        st16 r0, d_sfv",
            "        lds0wds S0[0], d_sfy",
            "        lds1wds S1[0], d_sfv",
            f"        fmac{s.FX} S0[0], S0[0], S1[0] ; fpsum[j] += W[j, i] a_i, row i's records",
            f"        mul16 r5, r5, {ROWB}",
            "        mov16 r4, r5                   ; row i of w: its activation slots"]


def _column_loads(s: PeSpec, count: str) -> list[str]:
    """Column j's descriptors with Length = ``count`` (r4 = its first record)."""
    L = [f"        st16 {count}, d_sdw",
         f"        st16 {count}, d_sca",
         f"        st16 {count}, d_scg",
         "        lds0wds S0[3], d_scg           ; (mini-batches: G of column j)"]
    if s.has_dp:
        L += [f"        st16 {count}, d_sdx",
              "        lds0wds S0[1], d_sdx",
              "        lds1wds S1[1], d_sdw"]
    return L + ["        lds0wds S0[2], d_sdw", "        lds1wds S1[2], d_sca"]


def single_delta_column(s: PeSpec) -> list[str]:
    """b_delta's first lines: column j's records (r4) and descriptors."""
    return ["b_delta:                                ; delta_j in r2, j in r4",
            f"        sub16 r4, r4, {O0}",
            "        add16 r4, r4, r4",
            "        add16 r4, r4, r4               ; 4 j: column j's entry of ctab",
            "        li r6, ctab",
            "        add16 r6, r6, r4",
            "        mov16 r4, [r6]                 ; column j's first record (wli)",
            "        add16 r6, r6, #2",
            "        mov16 r0, [r6]                 ; its count"] + _column_loads(s, "r0")


def single_own_column(s: PeSpec, j: int, label: str) -> list[str] | None:
    """The finalizer's own pass for local output j: its column's records and descriptors
    (constants here), or None when the column keeps no weight (no DP, no CP)."""
    lay = s.layout()
    if lay.col_count(j) == 0:
        return None
    return [f"{label}: li r4, {lay.col_first(j)}               ; column j's records",
            f"        li r0, {lay.col_count(j)}"] + _column_loads(s, "r0")


def single_slot_copy(s: PeSpec, k: int) -> list[str]:
    """bp_end, the backward slot moved to k: d_sca = d_scat{k} (three u16 words)."""
    L = [f"bpx{k}:  li r6, d_scat{k}"]
    for w in range(3):
        L += ["        mov16 r0, [r6]", f"        st16 r0, d_sca{f' + {2 * w}' if w else ''}"]
        if w < 2:
            L.append("        add16 r6, r6, #2")
    return L + ["        jmp bpd"]
