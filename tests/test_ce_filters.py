"""Input filters, the "data filter" of [0597] (docs/compute_element.md, "Input filters"): a
per-color index range at the compute element's input; data wavelets outside it are dropped
and counted, control wavelets always pass. Set by the host, by a `.filter` directive at load
time, or by the `filter` instruction."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wafersim as ws

# Receives six wavelets of color 4 into buf (its data task blocked) and then runs `done`.
RECEIVE6 = """
.data
buf:  .space u16, 6
rec:  .u16 0x8004, 3, 8
din:  .dsd fabric_in, length=6, sw=1, ue=1, sc=1, utid=4, ac=50
dbuf: .dsd mem1d, base=buf, length=6, stride=2
.export buf, rec
{extra}
.code
.task main, 40
.task done, 50
.task data4, 4
main: {setup}
      lds1wds S1[0], din
      lddwds D[0], dbuf
      mov16.t D[0], S1[0]
done: li r8, 1
      term
data4: li r7, 1
      term
"""

TWELVE = np.arange(100, 112)  # values 100..111 at indices 0..11


def _run(pe, **inject):
    pe.launch("main")
    pe.inject(4, TWELVE, dtype="u16", index=np.arange(12), start=10, **inject)
    pe.run()
    return pe


def _check_kept_3_to_8(pe):
    assert pe.read("buf").tolist() == [103, 104, 105, 106, 107, 108]
    s = pe.stats()
    assert s["wavelets_filtered"] == 6 and s["filtered_by_color"] == {4: 6}
    assert s["received_by_color"] == {4: 6} and s["wavelets_in"] == 12
    assert pe.gpr(8) == 1 and 4 not in s["tasks_started"]  # nothing reached task 4


def test_host_filter_keeps_indices_3_to_8_of_a_stream_of_twelve_0597():
    pe = ws.pe.LonePE()
    pe.load(RECEIVE6.format(extra="", setup="block 4"))
    pe.set_filter(4, 3, 8)
    assert pe.filter(4) == (3, 8) and pe.filter(5) is None
    _check_kept_3_to_8(_run(pe))


def test_filter_directive_sets_the_filter_at_load_time_0597():
    pe = ws.pe.LonePE()
    pe.load(RECEIVE6.format(extra=".filter 4, 3, 8\n.block data4", setup="nop"))
    assert pe.filter(4) == (3, 8) and pe.blocked == {4}
    _check_kept_3_to_8(_run(pe))


@pytest.mark.parametrize("form", ["memory", "register", "immediate"])
def test_filter_instruction_reads_its_record_from_memory_0597(form):
    """`filter` takes the record's byte address from memory, a register or an immediate."""
    layout = ws.asm.assemble(RECEIVE6.format(extra="ptr: .u16 0", setup="block 4"))
    rec, ptr = layout.symbols["rec"].address, layout.symbols["ptr"].address
    assert rec < 256 and ptr < 256  # reachable by the 8-bit forms
    source = {"memory": f"[{ptr}]", "register": "r5", "immediate": f"#{rec}"}[form]
    pe = ws.pe.LonePE()
    pe.load(RECEIVE6.format(extra=f"ptr: .u16 {rec}",
                            setup=f"block 4\n      li r5, {rec}\n      filter {source}"))
    assert pe.filter(4) is None
    _check_kept_3_to_8(_run(pe))
    assert pe.filter(4) == (3, 8) and pe.stats()["instructions"]["filter"] == 1


def test_filter_record_with_enable_clear_removes_the_filter():
    pe = ws.pe.LonePE()
    pe.load(".data\nrec: .u16 0x0004, 0, 0\n.code\n.task main, 40\nmain: filter.t #0")
    pe.set_filter(4, 1, 2)
    pe.launch("main")
    pe.run()
    assert pe.filter(4) is None


def test_control_wavelets_pass_the_filter():
    pe = ws.pe.LonePE()
    pe.load(".code\n.task c, 44\nc: addi r9, 1\n   term")
    pe.set_filter(2, 10, 20)
    pe.inject_wavelets(2, [0, 0, 0], index=[44, 44, 3], ctrl=[1, 1, 0])
    pe.run()
    assert pe.gpr(9) == 2 and pe.stats()["wavelets_filtered"] == 1


def test_filters_refuse_bad_colors_and_empty_ranges():
    pe = ws.pe.LonePE(fabric_colors=8)
    with pytest.raises(ws.ConfigError, match="color 9 has no input filter"):
        pe.set_filter(9, 0, 1)
    with pytest.raises(ws.ConfigError, match="lowest 5 > highest 4 keeps nothing"):
        pe.set_filter(3, 5, 4)
    with pytest.raises(ws.ProgramError, match=r"\.filter keeps indices 5\.\.4: an empty range"):
        ws.asm.assemble(".filter 3, 5, 4\n.code\n.task t, 40\nt: term")
    pe.load(".data\nrec: .u16 0x8009, 0, 1\n.code\n.task t, 40\nt: filter.t #0")
    pe.launch("t")
    with pytest.raises(ws.ProgramError, match="filter record at 0: word 0 = 0x8009 is not a fabric "
                                              r"color \(0\.\.7\)"):
        pe.run()
    pe = ws.pe.LonePE()
    pe.load(".data\nrec: .u16 0x8001, 9, 1\n.code\n.task t, 40\nt: filter.t #0")
    pe.launch("t")
    with pytest.raises(ws.ProgramError, match=r"keeps indices 9\.\.1, an empty range"):
        pe.run()


def test_filter_on_a_wafer_pe_from_the_host():
    w = ws.Wafer(1, 1)
    w.pe(0, 0).load(RECEIVE6.format(extra="", setup="block 4"))
    w.pe(0, 0).set_filter(4, 3, 8)
    w.route(4, [(0, -1), (0, 0)])
    w.launch("main")
    w.inject((0, -1), 4, TWELVE, index=np.arange(12))
    w.run()
    _check_kept_3_to_8(w.pe(0, 0))


@settings(deadline=None, max_examples=25)
@given(lo=st.integers(0, 40), width=st.integers(0, 40),
       index=st.lists(st.integers(0, 65535) | st.integers(0, 60), min_size=1, max_size=30))
def test_filter_keeps_exactly_the_indices_in_its_range(lo, width, index):
    hi = lo + width
    pe = ws.pe.LonePE()
    pe.load(".code\n.task t, 4\nt: term")  # the wavelets are picked and dropped in turn
    pe.set_filter(4, lo, hi)
    pe.inject_wavelets(4, np.arange(len(index)), index=index)
    s = pe.run()
    kept = sum(lo <= i <= hi for i in index)
    assert s["tasks_started"].get(4, 0) == kept
    assert s["wavelets_filtered"] == len(index) - kept
