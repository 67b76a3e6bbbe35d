"""The lean issue path keeps behaviour: instructions are decoded once per load and again
after code memory is written; a compute element whose foreground waits with nothing else to
do only counts its stall, and resumes as soon as something it waits on changes, including a
change the host makes."""

import numpy as np
from wafersim.asm import unpack_dsd

import wafersim as ws
from test_ce_descriptors import _fifo_program

SETS = """
.task t, 1
t:  li r1, {v}
    addi r1, 1
    term
"""


def _code_region(pe):
    n = pe.config.memory_bytes - pe.config.code_bytes
    return n, pe.read_memory(n, pe.config.code_bytes)


def test_a_reloaded_program_runs_its_new_instructions():
    pe = ws.pe.LonePE()
    pe.load(SETS.format(v=5))
    pe.launch("t")
    pe.run()
    assert pe.gpr(1) == 6
    pe.load(SETS.format(v=40))  # the same slots, new words
    pe.launch("t")
    pe.run()
    assert pe.gpr(1) == 41


def test_code_written_as_plain_memory_is_decoded_afresh():
    other = ws.pe.LonePE()
    other.load(SETS.format(v=100))
    addr, code = _code_region(other)
    pe = ws.pe.LonePE()
    pe.load(SETS.format(v=5))
    pe.launch("t")
    pe.run()
    pe.write_memory(addr, code)  # a host memory write over the code region
    pe.launch("t")
    pe.run()
    assert pe.gpr(1) == 101


def test_a_stall_counts_every_cycle_it_waits_on_an_empty_queue():
    pe = ws.pe.LonePE()
    pe.load("""
    .data
    buf: .space fp16, 4
    din: .dsd fabric_in, length=4, sw=1, sc=1, utid=3
    dbuf: .dsd mem1d, base=buf, length=4, stride=2
    .export buf
    .code
    .task t, 40
    t:  block 3
        lds1wds S1[0], din
        lddwds D[0], dbuf
        mov16.t D[0], S1[0]
    """)
    pe.launch("t")
    x = np.arange(1, 5, dtype=np.float16)
    pe.inject(3, x, start=200)
    s = pe.run()
    assert np.array_equal(pe.read("buf"), x)
    # The move issues a few cycles after launch and waits until the first wavelet is
    # accepted (cycle 200): every cycle in between is a counted stall.
    assert 190 <= s["stalls"]["input_empty"] <= 200
    assert s["stall_cycles"] == s["stalls"]["input_empty"]


def test_a_stalled_fifo_read_resumes_when_the_host_fills_the_fifo():
    full = ws.pe.LonePE()  # the descriptors of a full FIFO of the same program
    full.load(_fifo_program(cap=4, push_len=4, pop_len=4))
    full.launch("init")
    full.run()
    full.launch("push")
    full.run()
    pe = ws.pe.LonePE()
    pe.load(_fifo_program(cap=4, push_len=4, pop_len=4))
    pe.launch("init")
    pe.run()
    pe.launch("pop")
    pe.run(40)
    waited = pe.stats()["stalls"]["fifo_empty"]
    assert pe.running_task == 42 and waited > 30
    pe._ce.set_dsr("d", 8, full.dsr("d", 8))  # the write pointer of a full FIFO
    pe.run()
    assert pe.idle and pe.stats()["stalls"]["fifo_empty"] == waited
    r = unpack_dsd(pe.dsr("s1", 8), xdsd=pe.xdsr(2))
    w = unpack_dsd(pe.dsr("d", 8), xdsd=pe.xdsr(2))
    assert (r["base"], r["fw"]) == (w["base"], w["fw"])  # read all four: empty again
