"""Data structure descriptors and the D-Seq address generators [0495]-[0551], [0570]-[0579],
and the DSR / XDSR / stride-register loads and stores [0355]."""

import numpy as np
import pytest
from ce_bench import SINK

import wafersim as ws
from wafersim.asm import pack_dsd, pack_xdsd, unpack_dsd
from wafersim.asm.descriptors import dims_length_df, split_dims


def test_1d_vector_example_of_0525():
    """Base 136, WLI with GPR4 = 6, stride -2, length 10: addresses 142, 140, ..., 124."""
    pe = ws.pe.LonePE()
    pe.load(f"""
    .data
    v:   .dsd mem1d, base=136, length=10, stride=-2, wli=1
    out: .dsd fabric_out, color={SINK}, length=10, sw=1
    .code
    .task t, 20
    t: li r4, 6
       lds1wds S1[0], v
       lddwds D[0], out
       mov16.t D[0], S1[0]
    """)
    addresses = np.arange(100, 200, 2)
    pe.write_memory(100, addresses.astype(np.uint16))  # each word holds its own address
    pe.launch("t")
    pe.run()
    assert list(pe.output(SINK)["data"]) == list(range(142, 123, -2))


def test_dimension_format_example_of_0547():
    """DF = 01110: dimensions of nibbles {0,1}, {2}, {3} and {4,5}."""
    length = 0xABCDEF
    assert split_dims(length, 0b01110) == [0xEF, 0xD, 0xC, 0xAB]
    assert split_dims(length, 0) == [length]  # one long dimension
    assert dims_length_df([200, 3, 5]) == (200 | (3 << 8) | (5 << 12), 0b00110)


def test_4d_vector_reads_a_matrix_transposed_0574():
    rows, cols = 3, 5
    m = np.arange(rows * cols, dtype=np.float16).reshape(rows, cols)
    pe = ws.pe.LonePE()
    pe.load(f"""
    .data
    xd:  .xdsd mem4d, dims=({rows}, {cols}), strides=({cols * 2}, unit)
    mat: .space fp16, {rows * cols}
    out: .space fp16, {rows * cols}
    v4:  .dsd mem4d, base=mat, dims=({rows}, {cols}), xdsr=3
    vo:  .dsd mem1d, base=out, length={rows * cols}, stride=2
    .export mat, out
    .code
    .task t, 20
    t: ldxds X[3], xd
       lds1wds S1[0], v4
       lddwds D[0], vo
       mov16.t D[0], S1[0]
    """)
    pe.write("mat", m)
    pe.launch("t")
    pe.run()
    assert np.array_equal(pe.read("out"), m.T.ravel())


def test_4d_strides_from_stride_registers_0549():
    data = np.arange(64, dtype=np.int16)
    pe = ws.pe.LonePE()
    pe.load("""
    .data
    xd:  .xdsd mem4d, dims=(2, 2, 2), strides=(unit, sr2, sr4)
    s2:  .stride 16
    s4:  .stride 64
    arr: .space i16, 64
    out: .space i16, 8
    v4:  .dsd mem4d, base=arr, dims=(2, 2, 2), xdsr=5
    vo:  .dsd mem1d, base=out, length=8, stride=2
    .export arr, out
    .code
    .task t, 20
    t: ldxds X[5], xd
       ldsr SR[2], s2
       ldsr SR[4], s4
       lds1wds S1[0], v4
       lddwds D[0], vo
       mov16.t D[0], S1[0]
    """)
    pe.write("arr", data)
    pe.launch("t")
    pe.run()
    want = [i + 8 * j + 32 * k for k in range(2) for j in range(2) for i in range(2)]
    assert list(pe.read("out")) == want


def test_dsr_loads_use_48_bits_xdsr_51_of_64_and_stride_registers_15_of_16_0355():
    pe = ws.pe.LonePE()
    pe.load("""
    .data
    a: .u16 0x1111, 0x2222, 0x3333, 0x4444, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF
    .code
    .task t, 20
    t: lds0wds S0[3], a
       ldxds X[2], a + 8
       ldsr SR[7], a + 8
       stdwds D[0], a
       term
    """)
    pe.launch("t")
    pe.run()
    assert pe.dsr("s0", 3) == 0x333322221111  # bytes 0..5 of a, little-endian
    assert pe.xdsr(2) == (1 << 51) - 1
    assert pe.stride_register(7) == 0x7FFF
    # Storing a (zero) DDSR writes 48 bits and leaves the next 16 alone.
    assert list(pe.read_memory(0, 8).view(np.uint16)) == [0, 0, 0, 0x4444]


def test_save_address_continues_where_the_last_operation_stopped():
    pe = ws.pe.LonePE()
    pe.load("""
    .data
    src: .u16 1, 2, 3, 4, 5, 6
    dst: .space u16, 6
    ds:  .dsd mem1d, base=src, length=2, stride=2, sa=1
    dd:  .dsd mem1d, base=dst, length=2, stride=2, sa=1
    .export dst
    .code
    .task t, 20
    t: lds1wds S1[0], ds
       lddwds D[0], dd
       mov16 D[0], S1[0]
       mov16 D[0], S1[0]
       mov16.t D[0], S1[0]
    """)
    pe.launch("t")
    pe.run()
    assert list(pe.read("dst")) == [1, 2, 3, 4, 5, 6]
    assert unpack_dsd(pe.dsr("d", 0))["base"] == pe.program.symbols["dst"].address + 12


def _fifo_program(cap, push_len, pop_len):
    return f"""
    .data
    xf:   .xdsd circular, start=buf, end=buf + {2 * cap}, fifo=1
    wr:   .dsd circular, base=buf, length={push_len}, xdsr=2
    rd:   .dsd circular, base=buf, length={pop_len}, xdsr=2
    src:  .u16 {", ".join(str(10 + i) for i in range(push_len))}
    dsrc: .dsd mem1d, base=src, length={push_len}, stride=2
    dst:  .space u16, {pop_len}
    ddst: .dsd mem1d, base=dst, length={pop_len}, stride=2
    buf:  .space u16, {cap}
    .export dst
    .code
    .task init, 40
    .task push, 41
    .task pop, 42
    init: ldxds X[2], xf
          lddwds D[8], wr
          lds1wds S1[8], rd
          term
    push: lds1wds S1[0], dsrc
          mov16.t D[8], S1[0]
    pop:  lddwds D[0], ddst
          mov16.t D[0], S1[8]
    """


def test_fifo_full_and_empty_follow_the_wrap_bit_rule_0541_0542():
    pe = ws.pe.LonePE()
    pe.load(_fifo_program(cap=4, push_len=4, pop_len=4))
    pe.launch("init")
    pe.run()
    w, r = unpack_dsd(pe.dsr("d", 8), xdsd=pe.xdsr(2)), unpack_dsd(pe.dsr("s1", 8), xdsd=pe.xdsr(2))
    assert (w["base"], w["fw"]) == (r["base"], r["fw"])  # equal pointers, equal bits: empty
    pe.launch("push")
    pe.run()
    w = unpack_dsd(pe.dsr("d", 8), xdsd=pe.xdsr(2))
    assert w["base"] == r["base"] and w["fw"] != r["fw"]  # wrapped once: full [0534]
    pe.launch("push")  # writing a full FIFO stalls the (non-microthreaded) CE [0542]
    pe.run(30)
    assert pe.running_task == 41 and pe.stats()["stalls"]["fifo_full"] > 20
    pe2 = ws.pe.LonePE()
    pe2.load(_fifo_program(cap=4, push_len=4, pop_len=4))
    pe2.launch("init")
    pe2.run()
    pe2.launch("pop")  # reading an empty FIFO stalls
    pe2.run(30)
    assert pe2.running_task == 42 and pe2.stats()["stalls"]["fifo_empty"] > 20


def test_fifo_passes_data_in_order_through_wraparound_0538():
    pe = ws.pe.LonePE()
    pe.load(_fifo_program(cap=3, push_len=2, pop_len=2))
    pe.launch("init")
    pe.run()
    got = []
    for _ in range(4):  # 8 elements through a 3-element ring: pointers wrap
        pe.launch("push")
        pe.run()
        pe.launch("pop")
        pe.run()
        got += list(pe.read("dst"))
    assert got == [10, 11] * 4


def test_fifo_descriptors_must_live_in_ddsr_and_s1dsr_8_to_11_0541():
    src = _fifo_program(cap=4, push_len=1, pop_len=1).replace("lddwds D[8], wr", "lddwds D[3], wr")
    src = src.replace("mov16.t D[8], S1[0]", "mov16.t D[3], S1[0]")
    pe = ws.pe.LonePE()
    pe.load(src)
    pe.launch("init")
    pe.launch("push")
    with pytest.raises(ws.ProgramError, match=r"FIFO is written through DDSR8-11.*D\[3\]"):
        pe.run()


def test_fabric_output_index_control_bit_and_simd_packing_0449_0450_0515_0518():
    pe = ws.pe.LonePE()
    pe.load(f"""
    .data
    v:   .u16 1, 2, 3, 4, 5
    dv:  .dsd mem1d, base=v, length=5, stride=2
    o1:  .dsd fabric_out, color={SINK}, length=5, sw=1, index=42
    o2:  .dsd fabric_out, color={SINK}, length=5, sw=2, wli=1
    o4:  .dsd fabric_out, color={SINK}, length=5, sw=4, c=1, index=7
    .code
    .task t, 20
    t: lds1wds S1[0], dv
       lddwds D[0], o1
       mov16 D[0], S1[0]
       li r4, 0xFFC3
       lddwds D[1], o2
       mov16 D[1], S1[0]
       lddwds D[2], o4
       mov16.t D[2], S1[0]
    """)
    pe.launch("t")
    s = pe.run()
    out = pe.output(SINK)
    data, index, ctrl = list(out["data"]), list(out["index"]), list(out["ctrl"])
    # sw=1: one sparse wavelet per element, Index 2128 zero-extended [0518].
    assert data[:5] == [1, 2, 3, 4, 5] and index[:5] == [42] * 5 and not any(ctrl[:5])
    # sw=2: two elements per dense wavelet; index register bits 15:6 all ones -> control [0505].
    assert data[5:8] == [1 | 2 << 16, 3 | 4 << 16, 5] and all(ctrl[5:8]) and index[5] == 0xFFC3
    # sw=4: two wavelets per iteration; C makes control wavelets [0515].
    assert data[8:11] == [1 | 2 << 16, 3 | 4 << 16, 5] and all(ctrl[8:11]) and index[8] == 7
    assert s["iterations"] == 5 + 3 + 2  # one, two and four elements per iteration


def test_fabric_input_simd_width_two_reads_dense_wavelets_0502():
    pe = ws.pe.LonePE()
    pe.load("""
    .data
    buf: .space fp16, 6
    din: .dsd fabric_in, length=6, sw=2
    db:  .dsd mem1d, base=buf, length=6, stride=2
    .export buf
    .code
    .task t, 5
    t: lds1wds S1[0], din
       lddwds D[0], db
       mov16.t D[0], S1[0]
    """)
    x = np.arange(1, 9, dtype=np.float16)
    pe.inject(5, x, sw=2)  # four dense wavelets; the first starts the task
    pe.run()
    assert np.array_equal(pe.read("buf"), x[2:])


def test_sparse_mode_scatters_by_wavelet_index_0506_0524():
    """US: each element's index drives a WLI memory operand (stride 0 makes a scatter)."""
    pe = ws.pe.LonePE()
    pe.load("""
    .data
    out: .space fp16, 8
    din: .dsd fabric_in, length=3, sw=1, us=1
    dd:  .dsd mem1d, base=out, length=3, stride=0, wli=1
    .export out
    .code
    .task t, 5
    t: lds1wds S1[0], din
       lddwds D[0], dd
       mov16.t D[0], S1[0]
    """)
    pe.inject(5, [0, 1.5, 2.5, 3.5], index=[0, 6, 0, 14])  # byte offsets into `out`
    pe.run()
    want = np.zeros(8, np.float16)
    want[[3, 0, 7]] = [1.5, 2.5, 3.5]
    assert np.array_equal(pe.read("out"), want)


def test_control_wavelet_transform_marks_the_index_register_0505():
    """CX: a closeout read as data sets bits 15:6 of GPR4, so a relay forwarding through a
    WLI output sends it on as a closeout."""
    pe = ws.pe.LonePE()
    pe.load(f"""
    .data
    din:  .dsd fabric_in, length=3, sw=1, cx=1
    dout: .dsd fabric_out, color={SINK}, length=3, sw=1, wli=1
    .code
    .task t, 5
    t: lds1wds S1[0], din
       lddwds D[0], dout
       mov16.t D[0], S1[0]
    """)
    pe.inject_wavelets(5, [0, 10, 20], index=[0, 1, 2])
    pe.inject_wavelets(5, [30], index=[0x1F], ctrl=[1])
    pe.run()
    out = pe.output(SINK)
    assert list(out["ctrl"]) == [False, False, True]
    assert out["index"][2] == 0xFFC0 | 0x1F and pe.gpr(4) == 0xFFDF


def test_pack_and_unpack_descriptors_round_trip():
    raw = pack_dsd("fabric_in", length=100, utid=5, ue=1, sw=4, ac=33, term=1, cx=1, sc=1, ch=2)
    d = unpack_dsd(raw)
    assert (d["length"], d["utid"], d["ue"], d["sw"], d["ac"], d["term"], d["ch"]) == \
        (100, 5, 1, 4, 33, 1, 2)
    raw = pack_dsd("fabric_out", color=63, index=45, c=1, length=9)
    assert unpack_dsd(raw, role="dest")["index"] == 45
    x = pack_xdsd("circular", start=64, end=128, fifo=1, push=12, pop=13)
    assert raw >> 48 == 0 and x >> 51 == 0
    with pytest.raises(ValueError, match="length=40000 does not fit 15 bits"):
        pack_dsd("mem1d", length=40000)


def test_xdsr_and_stride_register_stores_write_what_the_loads_read_0355():
    pe = ws.pe.LonePE()
    pe.load("""
    .data
    xd:  .xdsd circular, start=64, end=128, fifo=1, push=12, pop=13
    s:   .stride -300
    xo:  .space u16, 4
    so:  .space u16, 1
    .export xo, so
    .code
    .task t, 20
    t: ldxds X[6], xd
       ldsr SR[3], s
       stxds X[6], xo
       stsr.t SR[3], so
    """.replace("stsr.t SR[3], so", "stsr SR[3], so\n       term"))
    pe.launch("t")
    pe.run()
    assert int(pe.read("xo").view(np.uint64)[0]) == pack_xdsd("circular", start=64, end=128, fifo=1,
                                                              push=12, pop=13)
    assert int(pe.read("so")[0]) == (-300) & 0x7FFF
    assert pe.stride_register(3) == (-300) & 0x7FFF
