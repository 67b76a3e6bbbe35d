"""Indexed 1D memory vectors (IX, wafersim's extension beyond the seeds, for weight
sparsity): a 1D DSD whose IX field (bits 44:42, unused in FIG. 21C) names a stride
register SR[IX] holding the address of a u16 index list; element k lies at Base + list[k],
entry k read from SR[IX] + k Stride (+ GPR4 under WLI: WLI moves the list, not Base),
so a list can interleave with the values it indexes. One element per cycle. Checked against numpy gathers and scatters and hand-counted cycles."""

import numpy as np
import pytest
from ce_bench import SINK

import wafersim as ws
from wafersim.asm import pack_dsd, unpack_dsd


def _run(src, writes=(), r4=None):
    pe = ws.pe.LonePE()
    pe.load(src)
    for name, value in writes:
        pe.write(name, value)
    pe.launch("t")
    stats = pe.run()
    return pe, stats


def _gather_program(n_data, n, *, wli=0, r4=0, sr=3, extra=""):
    return f"""
    .data
    vsrc: .dsd mem1d, base=data, length={n}, stride=2, ix={sr}{', wli=1' if wli else ''}
    vdst: .dsd mem1d, base=out, length={n}, stride=2
    lsr:  .stride lst
    data: .space i16, {n_data}
    lst:  .space u16, {n + r4 // 2}
    out:  .space i16, {n}
    .export data, lst, out
    .code
    .task t, 20
    t: ldsr SR[{sr}], lsr
       li r4, {r4}
       lds1wds S1[0], vsrc
       lddwds D[0], vdst{extra}
       mov16.t D[0], S1[0]
    """


def test_gather_reads_base_plus_each_list_entry():
    """mov16 from an indexed vector: out[k] = data[list[k] / 2] (list entries are byte
    offsets), any order and repeats, against numpy fancy indexing."""
    rng = np.random.default_rng(1)
    data = rng.integers(-1000, 1000, 40).astype(np.int16)
    idx = rng.integers(0, 40, 17)
    pe, _ = _run(_gather_program(40, 17),
                 [("data", data), ("lst", (2 * idx).astype(np.uint16))])
    assert np.array_equal(pe.read("out"), data[idx])


def test_wli_moves_the_list_not_base():
    """With WLI and GPR4 = 6 the list is read from SR[IX] + 6: the fourth entry on."""
    data = np.arange(100, 140, dtype=np.int16)
    idx = np.array([9, 8, 7, 5, 3, 1, 0, 2], dtype=np.uint16)
    pe, _ = _run(_gather_program(40, 5, wli=1, r4=6),
                 [("data", data), ("lst", 2 * idx)])
    assert list(pe.read("out")) == list(data[idx[3:]])


def test_scatter_add_fmacs_into_an_indexed_destination():
    """fmacs y[list] = y[list] + w * a (src0 = dst indexed, src1 a plain vector, a in
    GPR3:GPR2): the forward pass of a row of kept weights, exact small integers against
    numpy's np.add.at."""
    rng = np.random.default_rng(2)
    n_out, n = 12, 7
    idx = rng.choice(n_out, n, replace=False)
    w = rng.integers(-8, 8, n).astype(np.float32)
    y0 = rng.integers(-8, 8, n_out).astype(np.float32)
    a = np.float32(3.0)
    src = f"""
    .data
    vy:   .dsd mem1d, base=y, length={n}, stride=2, ix=2
    vw:   .dsd mem1d, base=w, length={n}, stride=4
    lsr:  .stride lst
    y:    .space fp32, {n_out}
    w:    .space fp32, {n}
    lst:  .space u16, {n}
    av:   .fp32 3.0
    .export y, w, lst
    .code
    .task t, 20
    t: ldsr SR[2], lsr
       ld16 r2, av
       ld16 r3, av + 2
       lds0wds S0[0], vy
       lds1wds S1[0], vw
       fmacs.t S0[0], S0[0], S1[0]
    """
    pe, _ = _run(src, [("y", y0), ("w", w), ("lst", (4 * idx).astype(np.uint16))])
    want = y0.astype(np.float64)
    np.add.at(want, idx, w.astype(np.float64) * float(a))
    assert np.array_equal(pe.read("y"), want.astype(np.float32))


def test_an_indexed_operation_takes_one_cycle_per_element():
    """mov16 runs four 16-bit elements a cycle on plain vectors [0502]; with an indexed
    operand it reads one list entry, so one element, a cycle: 32 elements cost 24 more
    cycles than the plain copy (8 iterations against 32)."""
    n = 32
    data = np.arange(n, dtype=np.int16)
    lst = (2 * np.arange(n)).astype(np.uint16)
    plain = _gather_program(n, n).replace("stride=2, ix=3", "stride=2")
    _, s_plain = _run(plain, [("data", data), ("lst", lst)])
    pe, s_ix = _run(_gather_program(n, n), [("data", data), ("lst", lst)])
    assert np.array_equal(pe.read("out"), data)
    assert s_ix["busy_cycles"] - s_plain["busy_cycles"] == n - n // 4


def test_interleaved_list_and_negative_step():
    """Entries interleaved with values (records of an fp32 value and a u16 index, 6
    bytes: Stride 6), and a list walked backwards (Stride -2 from its last entry)."""
    rng = np.random.default_rng(3)
    data = rng.integers(-99, 99, 20).astype(np.int16)
    idx = rng.integers(0, 20, 6)
    rec = np.zeros((6, 3), np.uint16)          # [value lo, value hi, index] per record
    rec[:, 2] = 2 * idx
    src = _gather_program(20, 6).replace("stride=2, ix=3", "stride=6, ix=3")
    src = src.replace("lsr:  .stride lst", "lsr:  .stride lst + 4")
    src = src.replace("lst:  .space u16, 6", "lst:  .space u16, 18")
    pe, _ = _run(src, [("data", data), ("lst", rec.ravel())])
    assert np.array_equal(pe.read("out"), data[idx])
    src = _gather_program(20, 6).replace("stride=2, ix=3", "stride=-2, ix=3")
    src = src.replace("lsr:  .stride lst", "lsr:  .stride lst + 10")
    pe, _ = _run(src, [("data", data), ("lst", (2 * idx).astype(np.uint16))])
    assert np.array_equal(pe.read("out"), data[idx[::-1]])


def test_suspended_scatter_resumes_at_its_list_entry_0609():
    """A microthreaded receive into an indexed destination (the fabric's values scattered
    by a list), stalled after 4 of 12: the destination's Length reads 8 and its Base is
    unchanged (the position is in the list, not Base); resumed, every value lands at its
    list entry, and the descriptor reads as loaded again."""
    n = 12
    idx = np.random.default_rng(4).permutation(20)[:n]
    pe = ws.pe.LonePE()
    pe.load(f"""
    .data
    din:  .dsd fabric_in, length={n}, sw=1, ue=1, sc=1, utid=3, ac=50
    dbuf: .dsd mem1d, base=buf, length={n}, stride=2, ix=5
    lsr:  .stride lst
    buf:  .space fp16, 20
    lst:  .space u16, {n}
    .export buf, lst
    .code
    .task main, 40
    .task done, 50
    main:   block 3
            ldsr SR[5], lsr
            lds1wds S1[0], din
            lddwds D[0], dbuf
            mov16.t D[0], S1[0]
    done:   li r8, 1
            term
    """)
    pe.write("lst", (2 * idx).astype(np.uint16))
    pe.launch("main")
    x = (np.arange(n, dtype=np.float16) + 1) / 4
    pe.inject(3, x[:4])
    pe.run(60)
    base = pe.program.symbols["buf"].address
    dst = unpack_dsd(pe.dsr("d", 0))
    assert pe.stats()["suspensions"] == 1
    assert dst["length"] == n - 4 and dst["base"] == base and dst["ix"] == 5
    pe.inject(3, x[4:], start=pe.cycle + 10)
    pe.run()
    want = np.zeros(20, np.float16)
    want[idx] = x
    assert np.array_equal(pe.read("buf"), want)
    assert unpack_dsd(pe.dsr("d", 0))["length"] == n and pe.gpr(8) == 1


def test_indexed_descriptor_fields_round_trip():
    raw = pack_dsd("mem1d", base=100, length=9, stride=0, ix=5, wli=1)
    f = unpack_dsd(raw)
    assert (f["kind"], f["base"], f["length"], f["ix"], f["wli"]) == ("mem1d", 100, 9, 5, 1)
    assert (raw >> 42) & 7 == 5
    assert unpack_dsd(pack_dsd("mem1d", base=4, length=2, stride=2))["ix"] == 0


@pytest.mark.parametrize("fields,match", [
    ("stride=2, ix=1", r"IX 1 names no stride register"),
    ("stride=3, ix=3", r"Stride must be even, got 3"),
    ("stride=2, ix=3, sa=1", r"SA on an indexed 1D vector"),
])
def test_bad_indexed_descriptors_are_refused(fields, match):
    """IX 1 (no such stride register), an odd list step or SA with an index list: a
    ProgramError naming the field and its value."""
    src = _gather_program(8, 4).replace("stride=2, ix=3", fields)
    with pytest.raises(ws.ProgramError, match=match):
        _run(src, [("lst", np.zeros(4, np.uint16))])


def test_list_entry_beyond_memory_is_a_memory_access_error():
    """An entry that puts an element outside data memory (or an odd address) raises
    MemoryAccessError naming the address, as any vector element does."""
    with pytest.raises(ws.MemoryAccessError, match="address"):
        _run(_gather_program(8, 4), [("lst", np.array([0, 2, 0xFFF0, 4], np.uint16))])
    with pytest.raises(ws.MemoryAccessError):
        _run(_gather_program(8, 4), [("lst", np.array([0, 3, 4, 6], np.uint16))])


def test_indexed_vector_is_not_a_tensor_operand():
    """The tensor unit reads dense matrices: an indexed 1D DSD is refused by name."""
    pe = ws.pe.LonePE(tensor_unit=True)
    with pytest.raises(ws.ProgramError, match=r"indexed 1D vector \(IX\)"):
        pe.load(f"""
        .data
        va:  .dsd mem1d, base=a, length=4, stride=2, ix=2
        vb:  .dsd mem1d, base=a, length=4, stride=1
        vo:  .dsd fabric_out, color={SINK}, length=4, sw=1
        a:   .space i8, 16
        .code
        .task t, 20
        t: lds0wds S0[0], va
           lds1wds S1[0], vb
           lddwds D[0], vo
           tmm.t D[0], S0[0], S1[0]
        """)
        pe.launch("t")
        pe.run()
