"""One PE's block of a layer with single-weight (unstructured) sparsity: the kept weights
stored compressed, and the three passes of SGD over them as CE programs, using the
indexed 1D vectors (IX, wafersim's extension; docs/compute_element.md).

Storage (fp32; all offsets are bytes, so that they serve as list entries directly):

* ``rec``: for every input row i, in order, one record per kept weight W[j, i], in
  increasing j: the value (fp32), in mini-batches its accumulated gradient G (fp32), and
  ``4 j`` (u16), the offset of output j in ``fpsum`` and ``ds``: 6 bytes (SGD) or 10.
  ``rtab`` gives each row's first record (offset in ``rec``) and its count.
* ``crec``: for every output column j, one 4-byte record per kept weight W[j, i], in
  increasing i: the offset of its value in ``rec`` and ``4 i``, the offset of input i in
  ``dx`` and ``xs``; ``ctab`` gives each column's first record and its count.

Per kept weight: 4 bytes of value (and 4 of G) and 6 of index (2 in ``rec``, 4 in
``crec``); per row and column 4 bytes of table. Pruned weights take none and are never
touched.

Passes, each a task started by a wavelet (value in r2:r3, its index in r4 [0346]):

* ``f_act`` (activation x_i): keeps x_i in ``xs``, then fpsum[j] += W[j, i] x_i over row
  i's records: one ``fmacs`` whose destination is indexed by the records' u16 entries
  (a scatter-add) and whose source walks the values (Stride 6).
* ``b_delta`` (delta d_j): keeps d_j in ``ds``, then dx[i] += W[j, i] d_j over column j's
  records: destination and source both indexed (dx by ``4 i``, the values by their offset).
* ``upd`` (launched once the deltas are in): for every row i, W[j, i] += (-lr x_i) d_j over
  row i's records, the deltas gathered by the same u16 entries as the forward pass; in
  mini-batches of b, G[j, i] += x_i d_j instead, and ``apply`` (launched at the batch's
  end) runs W += G (-lr / b), G = 0 over all kept weights: two vector operations.

Each pass sets its descriptors' Length to the row's or column's count (a store into the
descriptor's low word, then a DSR load) and points WLI (r4) at the row's or column's
records; its cost is a fixed overhead per row or column plus one cycle per kept weight.
When every row keeps the same count (``magnitude_mask``), the row passes skip the table:
their descriptors keep that Length and row i's records start at i times the row's bytes.
"""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError

__all__ = ["SparseBlock", "magnitude_mask", "F_ACT", "B_DELTA", "UPD", "APPLY"]

F_ACT, B_DELTA, UPD = 3, 5, 40       # tasks: the activation and delta colors, the update
APPLY = 41                           # the mini-batch update
CREC = 4                             # bytes per column record

SOURCE = """
; one PE's block of an unstructured-sparse layer: {n_out} outputs x {n_in} inputs, {nnz} kept
.data
d_fy:   .dsd mem1d, base=fpsum, length={rl}, stride={REC}, ix=2, wli=1   ; fpsum[list of row i]
d_fv:   .dsd mem1d, base=rec, length={rl}, stride={REC}, wli=1           ; the values of row i
d_fg:   .dsd mem1d, base=rec + 4, length={rl}, stride={REC}, wli=1       ; G of row i
d_ud:   .dsd mem1d, base=ds, length={rl}, stride={REC}, ix=2, wli=1      ; ds[list of row i]
d_aw:   .dsd mem1d, base=rec, length={nnz}, stride={REC}              ; every kept weight
d_ag:   .dsd mem1d, base=rec + 4, length={nnz}, stride={REC}          ; and its G
d_bx:   .dsd mem1d, base=dx, length=0, stride={CREC}, ix=3, wli=1     ; dx[rows of column j]
d_bw:   .dsd mem1d, base=rec, length=0, stride={CREC}, ix=4, wli=1    ; values of column j
d_xs:   .dsd mem1d, base=xs, length=1, stride=4, wli=1
d_ds:   .dsd mem1d, base=ds, length=1, stride=4, wli=1
s_row:  .stride rec + {lofs}         ; the u16 entries of the row records
s_cx:   .stride crec + 2         ; the input offsets of the column records
s_cw:   .stride crec             ; the value offsets of the column records
nlr:    .fp32 {neg_lr}                 ; -lr (SGD), -lr / b (mini-batches)
nin4:   .u16 {nin4}
rtab:   .space u16, {rtab_n}        ; (the tables and xs first: `li` reaches them in one
ctab:   .space u16, {ctab_n}        ;  instruction on blocks of up to 32 x 32)
xs:     .space fp32, {n_in}
fpsum:  .space fp32, {n_out}
dx:     .space fp32, {n_in}
ds:     .space fp32, {n_out}
rec:    .space u16, {rec_n}
crec:   .space u16, {crec_n}
.export fpsum, dx, xs, ds, rtab, ctab, rec, crec, nlr
.activate main

.code
.task main, 20
.task f_act, {F_ACT}
.task b_delta, {B_DELTA}
.task upd, {UPD}
.task apply, {APPLY}

main:   ldsr SR[2], s_row
        ldsr SR[3], s_cx
        ldsr SR[4], s_cw
        lddwds D[5], d_xs
        lddwds D[6], d_ds
{main_rows}        term

f_act:  {f_body}        fmacs.t S0[0], S0[0], S1[0]  ; fpsum[j] += W[j, i] * x_i, j over row i's records

b_delta: mul16 r4, r4, #4           ; d_j in r3:r2, j in r4
        mov32 D[6], r2              ; ds[j] = d_j
        li r6, ctab
        add16 r6, r6, r4
        mov16 r4, [r6]              ; column j's first record
        add16 r6, r6, #2
        mov16 r5, [r6]
        st16 r5, d_bx
        st16 r5, d_bw
        lds0wds S0[1], d_bx
        lds1wds S1[1], d_bw
        fmacs.t S0[1], S0[1], S1[1]  ; dx[i] += W[j, i] * d_j, i over column j's records

upd:    movi r7, 0                  ; 4 i
        ld16 r8, nlr
        ld16 r9, nlr + 2
        ld16 r10, nin4
{u_pre}uloop:  li r6, xs
        add16 r6, r6, r7
        mov32 r2, [r6]              ; x_i
{scale}{u_row}        fmacs S0[2], S0[2], S1[2]   ; {what}, j over row i's records
        add16 r7, r7, #4
        lt16 r7, r10
        bt uloop
        term

apply:  ld16 r2, nlr                ; (mini-batches) -lr / b
        ld16 r3, nlr + 2
        lds0wds S0[3], d_aw
        lds1wds S1[3], d_ag
        fmacs S0[3], S0[3], S1[3]   ; W += G * (-lr / b), every kept weight
        lddwds D[3], d_ag
        mov32.t D[3], #0            ; G = 0
"""
SGD_UPDATE = dict(scale="        fmuls r2, r2, r8            ; -lr * x_i\n", dst="d_fv",
                  what="W[j, i] += d_j * (-lr x_i)")
BATCH_UPDATE = dict(scale="", dst="d_fg", what="G[j, i] += d_j * x_i")

# Rows of different counts: look the row up in rtab and write its count into the
# descriptors' Length (14 cycles a row with the task's start, in the forward pass).
TABLE_ROWS = dict(main_rows="", f_body="""mul16 r4, r4, #4            ; x_i in r3:r2, i in r4 [0346]
        mov32 D[5], r2              ; xs[i] = x_i (the update needs it)
        li r6, rtab
        add16 r6, r6, r4
        mov16 r4, [r6]              ; row i's first record
        add16 r6, r6, #2
        mov16 r5, [r6]              ; and its count: the Length of both descriptors
        st16 r5, d_fy
        st16 r5, d_fv
        lds0wds S0[0], d_fy
        lds1wds S1[0], d_fv
""", u_pre="", u_row="""        li r6, rtab
        add16 r6, r6, r7
        mov16 r4, [r6]
        add16 r6, r6, #2
        mov16 r5, [r6]
        st16 r5, {dst}
        st16 r5, d_ud
        lds0wds S0[2], {dst}
        lds1wds S1[2], d_ud
""")
# Every row of the same count (magnitude_mask): the descriptors keep that Length and
# row i's records start at i times r11 bytes (8 cycles a row in the forward pass).
EQUAL_ROWS = dict(main_rows="""        li r11, {row_bytes}              ; bytes of one row of records
        lds0wds S0[0], d_fy
        lds1wds S1[0], d_fv
""", f_body="""mov16 r5, r4                ; x_i in r3:r2, i in r4 [0346]
        mul16 r4, r4, #4
        mov32 D[5], r2              ; xs[i] = x_i (the update needs it)
        mul16 r5, r5, r11
        mov16 r4, r5                ; row i's first record
""", u_pre="""        movi r13, 0                 ; row i's first record
        lds0wds S0[2], {dst}
        lds1wds S1[2], d_ud
""", u_row="""        mov16 r4, r13
        add16 r13, r13, r11
""")


def magnitude_mask(W: np.ndarray, pruned: float) -> np.ndarray:
    """Magnitude pruning of single weights, balanced per input row of the block: each
    column W[:, i] keeps its n_out - round(pruned * n_out) weights of largest |w| (ties:
    the lower output first), so that every row of records has the same count and no row
    sets the block's pace dense. True = kept."""
    W = np.asarray(W)
    if W.ndim != 2:
        raise ConfigError(f"W must be a matrix (n_out, n_in), got shape {W.shape}")
    p = float(pruned) if not isinstance(pruned, bool) else float("nan")
    if not 0.0 <= p < 1.0:
        raise ConfigError(f"a pruning fraction must lie in [0, 1), got {pruned!r}")
    n_out = W.shape[0]
    k = int(round(p * n_out))
    order = np.argsort(-np.abs(W.astype(np.float64)), axis=0, kind="stable")
    mask = np.zeros(W.shape, dtype=bool)
    np.put_along_axis(mask, order[:n_out - k], True, axis=0)
    return mask


class SparseBlock:
    """The compressed storage of a block ``W`` (n_out, n_in) under ``mask`` (True = kept)
    and its program. ``lr``: the learning rate; ``batch``: 1 (SGD: ``upd`` updates W) or
    the mini-batch size b (``upd`` accumulates G, ``apply`` updates W with -lr / b)."""

    def __init__(self, W: np.ndarray, mask: np.ndarray, lr: float, batch: int = 1):
        W = np.asarray(W, dtype=np.float32)
        mask = np.asarray(mask)
        if mask.dtype != np.bool_ or mask.shape != W.shape or W.ndim != 2:
            raise ConfigError(f"the mask must be a bool array of the weights' shape {W.shape}, "
                              f"got {mask.dtype} {mask.shape}")
        self.n_out, self.n_in = W.shape
        if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) or batch < 1:
            raise ConfigError(f"batch must be a positive integer, got {batch!r}")
        self.mask = mask.copy()
        self.lr = float(lr)
        self.batch = int(batch)
        self.rec = 6 if self.batch == 1 else 10     # bytes per row record
        # rows: kept (j, i) in row-major order of W.T; its position is the record number
        self.rows = [np.flatnonzero(mask[:, i]) for i in range(self.n_in)]
        self.cols = [np.flatnonzero(mask[j, :]) for j in range(self.n_out)]
        self.nnz = int(mask.sum())
        first = np.concatenate([[0], np.cumsum([len(r) for r in self.rows])])
        self._pos = {(int(j), i): int(first[i] + k)
                     for i, r in enumerate(self.rows) for k, j in enumerate(r)}
        self._first_row = first
        self.W0 = W

    # ---- storage -----------------------------------------------------------------------
    def memory_bytes(self) -> dict:
        """Bytes of weights and of index per part (tables, lists): the honest count."""
        return {"values": 4 * self.nnz, "gradients": (self.rec - 6) * self.nnz,
                "row_index": 2 * self.nnz,
                "column_records": CREC * self.nnz, "tables": 4 * (self.n_in + self.n_out)}

    def source(self) -> str:
        update = dict(SGD_UPDATE if self.batch == 1 else BATCH_UPDATE)
        counts = {len(r) for r in self.rows}
        equal = len(counts) == 1
        rows = EQUAL_ROWS if equal else TABLE_ROWS
        c = counts.pop() if equal else 0
        fill = dict(dst=update["dst"], row_bytes=c * self.rec)
        text = SOURCE
        for key, part in rows.items():
            text = text.replace("{" + key + "}", part.format(**fill))
        return text.format(
            rl=c, n_out=self.n_out, n_in=self.n_in, nnz=self.nnz, REC=self.rec, CREC=CREC,
            lofs=self.rec - 2, F_ACT=F_ACT, B_DELTA=B_DELTA, UPD=UPD, APPLY=APPLY,
            neg_lr=repr(float(np.float32(-self.lr / self.batch))), nin4=4 * self.n_in,
            rtab_n=2 * self.n_in, ctab_n=2 * self.n_out,
            rec_n=max(1, self.rec // 2 * self.nnz), crec_n=max(1, CREC // 2 * self.nnz),
            **update)

    def write(self, pe) -> None:
        """Fills a loaded PE's tables and records from W."""
        rec = np.zeros((max(self.nnz, 1), self.rec // 2), np.uint16)
        vals = np.array([self.W0[j, i] for i, r in enumerate(self.rows) for j in r],
                        dtype=np.float32)
        js = np.array([j for r in self.rows for j in r], dtype=np.int64)
        if self.nnz:
            rec[:self.nnz, 0:2] = vals.view(np.uint16).reshape(-1, 2)
            rec[:self.nnz, -1] = 4 * js
        rtab = np.array([(self.rec * self._first_row[i], len(r)) for i, r in enumerate(self.rows)],
                        dtype=np.uint16).ravel()
        crec, ctab, n = [], [], 0
        for j, c in enumerate(self.cols):
            ctab.append((CREC * n, len(c)))
            for i in c:
                crec.append((self.rec * self._pos[(j, int(i))], 4 * int(i)))
                n += 1
        pe.write("rec", rec.ravel())
        pe.write("rtab", rtab)
        pe.write("ctab", np.array(ctab, dtype=np.uint16).ravel())
        if crec:
            pe.write("crec", np.array(crec, dtype=np.uint16).ravel())

    def read_weights(self, pe) -> np.ndarray:
        """The dense (n_out, n_in) weights from the PE's records; pruned ones are 0."""
        raw = np.asarray(pe.read("rec"), dtype=np.uint16).reshape(-1, self.rec // 2)
        vals = raw[:self.nnz, 0:2].copy().view(np.float32).ravel()
        W = np.zeros((self.n_out, self.n_in), np.float32)
        for (j, i), p in self._pos.items():
            W[j, i] = vals[p]
        return W
