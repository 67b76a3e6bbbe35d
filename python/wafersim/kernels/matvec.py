"""Conformance programs 2 and 3: a matrix-vector product spread over PEs of a wafer.

Program 2, ``row``: y = A x + b across a row of PEs. PE k holds a block of columns of A.
x is streamed in from the west edge as sparse wavelets (value + column index; only
nonzeros [0408]) and multicast along the row; each PE accumulates the columns it holds
(the others are outside its range and end the task at once). A closeout wavelet after x
starts the `finish` task everywhere [0371], [0419]: the first PE sends its partial sums
east, every other PE adds the incoming partial sums to its own and passes them on
(the psum accumulation across PEs of [0402], [0408]), and the last adds b and sends y out
of the east edge.

Program 3, ``grid``: y = A x on an R x C grid. PE (r, c) holds block (r, c) of A; chunk c
of x enters at the north edge of column c and is broadcast down the column; partial sums
are reduced along each row towards the east edge, which emits block r of y.

Partial sums hop on two colors that alternate with the column, because a color's route at
a router is one Dest set [0318]: a PE receives on one and sends on the other.

The script ``examples/kernels/matvec_wafer.py`` runs them from the command line;
``wafersim demo`` runs program 3.
"""

from __future__ import annotations

import math
import time

import numpy as np

from .. import asm, ce_access
from ..layout import DIR_INDEX
from ..reference import fp_exact
from ..wafer import Wafer

X, Y = 3, 7            # activations in, results out
PSUM = (4, 5)          # partial sums, by the sender's column parity
FINISH = 33            # local id: the closeout's index starts `finish`
MAIN = 40

SOURCE = """
; one PE of y = A x (+ b): a block of {m} rows x {nb} columns, column-major ({t})
.data
lo:     .i16 0                    ; first column of x this PE holds
ncols:  .i16 {nb}                 ; how many it holds
psum:   .space {t}, {m}
a:      .space {t}, {m} * {nb}
bias:   .space {t}, {m}
dpsum:  .dsd mem1d, base=psum, length={m}, stride={es}
dcol:   .dsd mem1d, base=a, length={m}, stride={es}, wli=1     ; column j at a + GPR4
dbias:  .dsd mem1d, base=bias, length={m}, stride={es}
pin:    .dsd fabric_in, length={m}, sw={sw}, sc=1, ch={pin_ch}, utid={pin_ut}
pout:   .dsd fabric_out, color={pout}, length={m}, sw={sw}
yout:   .dsd fabric_out, color={Y}, length={m}, sw={sw}
.export a, bias, psum, lo, ncols

.code
.task main, {MAIN}
.task acc, {X}
.task finish, {FINISH}

main:   lds0wds S0[1], dpsum      ; psum += a[:, j] * x_j, in place
        lddwds  D[1], dpsum
        lds1wds S1[1], dcol
        li r10, {col_bytes}       ; bytes per column
        ld16 r11, lo
        ld16 r12, ncols
{main_role}
        term

acc:    sub16 r4, r4, r11         ; GPR4 = j - lo [0346]
        ltu16 r4, r12             ; one of my columns?
        bt mine
        term
mine:   mul16 r4, r4, r10
        {fmac}.t D[1], S0[1], S1[1]

finish:
{finish_role}
"""

ROLES = {
    # sends its partial sums east
    "first": ("""        lds1wds S1[2], dpsum
        lddwds  D[2], pout""",
              """        {mov}.t D[2], S1[2]"""),
    # adds the incoming partial sums to its own and passes them on
    "middle": ("""        lds0wds S0[2], pin
        lddwds  D[2], pout
        lds1wds S1[2], dpsum
        block {pin_color}                 ; pin is read by `finish`, not by a task""",
               """        {add}.t D[2], S0[2], S1[2]"""),
    # adds the incoming partial sums (and b) and sends y
    "last": ("""        lds0wds S0[3], pin
        lddwds  D[3], {last_dst}
        lds1wds S1[3], dpsum
        lds0wds S0[4], dpsum
        lddwds  D[4], yout
        lds1wds S1[4], dbias
        block {pin_color}""",
             """        {add}{last_term} D[3], S0[3], S1[3]
{bias_line}"""),
    # the whole row: own partial sums (+ b) are y
    "only": ("""        lds0wds S0[4], dpsum
        lddwds  D[4], yout
        lds1wds S1[4], {only_src}""",
             """        {only_op}.t D[4], {only_args}"""),
}


def program(m: int, nb: int, role: str, column: int, dtype: str = "fp16", bias: bool = True) -> str:
    """The assembly of one PE: ``role`` in first / middle / last / only; ``column`` picks
    the partial-sum colors (receive on the west neighbour's, send on the other)."""
    fp16 = dtype == "fp16"
    es = 2 if fp16 else 4
    pin = PSUM[(column - 1) % 2]
    pout = PSUM[column % 2]
    fmt = dict(m=m, nb=nb, t=dtype, es=es, sw=2 if fp16 else 1, Y=Y, X=X, FINISH=FINISH,
               MAIN=MAIN, pin_ch=pin >> 3, pin_ut=pin & 7, pout=pout, pin_color=pin,
               col_bytes=m * es, fmac="fmach" if fp16 else "fmacs",
               add="faddh" if fp16 else "fadds", mov="mov16" if fp16 else "mov32",
               last_dst="dpsum" if bias else "yout", last_term="" if bias else ".t",
               bias_line=f"        {'faddh' if fp16 else 'fadds'}.t D[4], S0[4], S1[4]" if bias else "",
               only_src="dbias" if bias else "dpsum",
               only_op=("faddh" if fp16 else "fadds") if bias else ("mov16" if fp16 else "mov32"),
               only_args="S0[4], S1[4]" if bias else "S1[4]")
    main_role, finish_role = ROLES[role]
    fmt["main_role"] = main_role.format(**fmt)
    fmt["finish_role"] = finish_role.format(**fmt)
    return SOURCE.format(**fmt)


def _role(c: int, cols: int) -> str:
    return "only" if cols == 1 else "first" if c == 0 else "last" if c == cols - 1 else "middle"


def _row_reference(blocks, x, orders, bias, dtype):
    """Partial sums per PE (its columns' fused multiply-adds in arrival order), added west
    to east, then + b. blocks[k] holds PE k's columns at their indices in x."""
    s = None
    for blk, order in zip(blocks, orders):
        p = fp_exact.fma_chain(blk, x, order, dtype)
        s = p if s is None else np.array([fp_exact.add(u, v, dtype) for u, v in zip(s, p)])
    if bias is not None:
        s = np.array([fp_exact.add(u, v, dtype) for u, v in zip(s, bias)])
    return s


def _load_row_programs(w: Wafer, r: int, m: int, nb: int, dtype: str, bias: bool) -> dict:
    """Loads the programs of row r (one assembly per role and colour parity) and routes its
    partial sums east; returns {column: program}."""
    cols = w.cols
    cache, progs = {}, {}
    for c in range(cols):
        key = (_role(c, cols), c % 2)
        if key not in cache:
            cache[key] = asm.assemble(program(m, nb, key[0], c, dtype, bias))
        progs[c] = w.pe(r, c).load(cache[key])
        if c + 1 < cols:
            w.route(PSUM[c % 2], [(r, c), (r, c + 1)])
    w.route(Y, [(r, cols - 1), (r, cols)])  # y leaves through the east edge port
    return progs


def _load_grid(w: Wafer, mb: int, nb: int, dtype: str) -> None:
    """Program 3's programs and routes on every PE of the wafer: one load per column (a
    role and colour parity are the same down a column) and each color's routes as one array
    of routers, so that a wafer of a million PEs sets up without a Python step per PE."""
    R, C = w.rows, w.cols
    cache = {}
    for c in range(C):
        key = (_role(c, C), c % 2)
        if key not in cache:
            cache[key] = asm.assemble(program(mb, nb, key[0], c, dtype, bias=False))
        w.load(cache[key], rect=(0, c, R, 1))
    bit = {d: 1 << DIR_INDEX[d] for d in ("N", "S", "E", "W", "RAMP")}
    ids = np.arange(R * C, dtype=np.uint32).reshape(R, C)

    def add(color, routers, dest, src):
        routers = np.asarray(routers, np.int64).ravel()
        full = np.full(routers.shape, 0, np.uint16)
        w.add_routes(color, np.stack([routers // C, routers % C], axis=1),
                     tx=full + np.asarray(dest, np.uint16).ravel(),
                     rx=full + np.asarray(src, np.uint16).ravel())

    for k, color in enumerate(PSUM):  # PE (r, c) sends its partial sums east on PSUM[c % 2]
        senders = ids[:, k:C - 1:2]
        add(color, senders, bit["E"], bit["RAMP"])
        add(color, senders + 1, bit["RAMP"], bit["W"])
    add(Y, ids[:, C - 1], bit["E"], bit["RAMP"])  # y leaves through the east edge port
    # chunk c of x goes down column c [0408]
    below = np.where(np.arange(R) > 0, bit["S"], 0)[:, None]
    add(X, ids, np.broadcast_to(bit["RAMP"] | below, (R, C)), bit["N"])


def run_row(m: int = 16, n: int = 32, pes: int = 4, dtype: str = "fp16", density: float = 0.7,
            seed: int = 0, **wafer_args) -> dict:
    """Program 2 on a 1 x ``pes`` wafer; returns y, the exact reference, numpy's and stats."""
    rng = np.random.default_rng(seed)
    t = np.float16 if dtype == "fp16" else np.float32
    a = rng.uniform(-1, 1, (m, n)).astype(t)
    b = rng.uniform(-1, 1, m).astype(t)
    x = rng.uniform(-1, 1, n).astype(t)
    x[rng.random(n) > density] = 0
    nb = math.ceil(n / pes)
    w = Wafer(1, pes, **wafer_args)
    _load_row_programs(w, 0, m, nb, dtype, bias=True)
    for c in range(pes):  # x multicast along the row [0408]
        w.router(0, c).set_route(X, rx=["W"], tx=["RAMP"] + (["E"] if c + 1 < pes else []))
    cols = [list(range(k * nb, min(n, (k + 1) * nb))) for k in range(pes)]
    blocks = np.zeros((1, pes, m * nb), dtype=t)
    for k, cs in enumerate(cols):
        blk = np.zeros((m, nb), dtype=t)
        blk[:, :len(cs)] = a[:, cs]
        blocks[0, k] = blk.T.ravel()  # column-major: column j is contiguous
    w.memcpy_h2d("a", blocks, rect=(0, 0, 1, pes))
    w.memcpy_h2d("lo", np.array([[[k * nb] for k in range(pes)]]), rect=(0, 0, 1, pes))
    w.memcpy_h2d("ncols", np.array([[[len(cs)] for cs in cols]]), rect=(0, 0, 1, pes))
    w.memcpy_h2d("bias", b, rect=(0, pes - 1))
    w.launch("main")
    nz = np.flatnonzero(x)
    w.stream((0, -1), X, x[nz], dtype=dtype, index=nz)
    w.close((0, -1), X, FINISH)
    stats = w.run()
    y = w.collect((0, pes)).values(dtype, 2 if dtype == "fp16" else 1, color=Y)[:m]
    orders = [[j for j in nz if j in set(cs)] for cs in cols]
    ref = _row_reference([a] * pes, x, orders, b, dtype)
    return {"y": y, "reference": ref, "numpy": a.astype(np.float64) @ x + b, "stats": stats,
            "wafer": w, "nonzero": len(nz)}


def run_grid(size: int = 4, block: int = 16, dtype: str = "fp16", density: float = 1.0,
             seed: int = 0, rows: int | None = None, check: bool = True,
             parallel_min_routers: int | None = None, **wafer_args) -> dict:
    """Program 3 on a ``rows`` x ``size`` grid (rows defaults to size), blocks of
    ``block`` x ``block``; returns y, the exact reference (when ``check``), numpy's, stats
    and the wall time of the run. ``parallel_min_routers`` overrides the wafer's threshold
    for running phases in several threads."""
    R, C = (size if rows is None else rows), size
    mb = nb = block
    rng = np.random.default_rng(seed)
    t = np.float16 if dtype == "fp16" else np.float32
    a = rng.uniform(-1, 1, (R * mb, C * nb)).astype(t)
    x = rng.uniform(-1, 1, C * nb).astype(t)
    x[rng.random(C * nb) > density] = 0
    w = Wafer(R, C, **wafer_args)
    _load_grid(w, mb, nb, dtype)
    blocks = a.reshape(R, mb, C, nb).transpose(0, 2, 3, 1).reshape(R, C, nb * mb)
    w.memcpy_h2d("a", blocks)
    w.launch("main")
    if parallel_min_routers is not None:
        w.parallel_min_routers = parallel_min_routers
    for c in range(C):
        chunk = x[c * nb:(c + 1) * nb]
        nz = np.flatnonzero(chunk)
        w.stream((R, c), X, chunk[nz], dtype=dtype, index=nz)
        w.close((R, c), X, FINISH)
    t0 = time.perf_counter()
    stats = w.run()
    seconds = time.perf_counter() - t0
    got = w.collect()
    sw = 2 if dtype == "fp16" else 1
    y = np.concatenate([_values_at(got, r, dtype, sw)[:mb] for r in range(R)])
    ref = None
    if check:
        orders = [[j for j in range(c * nb, (c + 1) * nb) if x[j] != 0] for c in range(C)]
        ref = np.concatenate([_row_reference([a[r * mb:(r + 1) * mb]] * C, x, orders, None, dtype)
                              for r in range(R)])
    return {"y": y, "reference": ref, "numpy": a.astype(np.float64) @ x, "stats": stats,
            "wafer": w, "seconds": seconds}


def _values_at(got, r: int, dtype: str, sw: int) -> np.ndarray:
    """y values that arrived at the east edge port of row r."""
    keep = (got.row == r) & (got.color == Y) & ~got.ctrl
    return ce_access.decode_values(got.data[keep], dtype, sw)
