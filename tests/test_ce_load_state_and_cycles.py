"""Load-time task state (`.block`, `.activate`, host block/unblock), the "no task bound"
error, and the cycle counter a program can read (`rdcyc`; docs/compute_element.md)."""

import numpy as np
import pytest

import wafersim as ws

# Task 5 would count wavelets of color 5 if it ran; `main` receives them with a fabric input
# instead. `.block data5` keeps task 5 from racing `main` for the stream's first wavelets.
RECEIVE = """
.data
buf:  .space u16, 8
din:  .dsd fabric_in, length=8, sw=1, ue=1, sc=1, utid=5, ac=50
dbuf: .dsd mem1d, base=buf, length=8, stride=2
.export buf
.block data5
.activate main
.code
.task main, 40
.task done, 50
.task data5, 5
main:  lds1wds S1[0], din
       lddwds D[0], dbuf
       mov16.t D[0], S1[0]
done:  li r8, 1
       term
data5: addi r9, 1
       term
"""


def test_load_time_block_bit_holds_a_stream_arriving_at_cycle_0_0390():
    w = ws.Wafer(1, 2)
    w.load(RECEIVE, rect=(0, 1))
    w.route(5, [(0, -1), (0, 0), (0, 1)])
    w.stream((0, -1), 5, np.arange(8) + 10, dtype="u16", cycle=0)
    pe = w.pe(0, 1)
    assert pe.blocked == {5} and pe.active == {40}
    w.run()  # no launch: `.activate main` started it
    assert pe.read("buf").tolist() == list(range(10, 18))
    assert pe.gpr(8) == 1 and pe.gpr(9) == 0  # task 5 never ran
    assert pe.stats()["tasks_started"] == {40: 1, 50: 1}


def test_without_the_block_directive_the_data_task_races_for_the_stream():
    w = ws.Wafer(1, 1)
    w.load(RECEIVE.replace(".block data5", ""), rect=(0, 0))
    w.route(5, [(0, -1), (0, 0)])
    w.stream((0, -1), 5, np.arange(16) + 10, dtype="u16", cycle=0)
    w.run()
    assert w.pe(0, 0).gpr(9) > 0  # task 5 took some wavelets before `main` got to read


def test_load_directives_on_a_lone_pe_and_host_block_unblock():
    pe = ws.pe.LonePE()
    pe.load(RECEIVE)
    assert pe.blocked == {5} and pe.active == {40}
    pe.unblock("data5")
    pe.block(7)
    assert pe.blocked == {7}
    with pytest.raises(ws.ConfigError, match="task must be an integer in 0..63"):
        pe.block(64)


def test_wafer_block_and_unblock_over_a_rectangle():
    w = ws.Wafer(2, 2)
    w.load(RECEIVE, rect=(0, 0, 2, 2))
    assert w.unblock("data5", rect=(0, 0, 1, 2)) == 2
    assert [w.pe(r, c).blocked for r in (0, 1) for c in (0, 1)] == [set(), set(), {5}, {5}]
    assert w.block(9) == 4 and w.pe(1, 1).blocked == {5, 9}
    with pytest.raises(ws.ConfigError, match="block: no loaded program has a task 'nope'"):
        w.block("nope")


def test_load_directives_refuse_unknown_tasks_and_bad_ids():
    with pytest.raises(ws.ProgramError, match="unknown symbol 'nope'"):
        ws.asm.assemble(".block nope\n.code\n.task t, 40\nt: term")
    with pytest.raises(ws.ProgramError, match=r"\.activate names a task .* got 64"):
        ws.asm.assemble(".activate 64\n.code\n.task t, 40\nt: term")
    with pytest.raises(ws.ProgramError, match=r"\.filter takes three operands"):
        ws.asm.assemble(".filter 3, 4\n.code\n.task t, 40\nt: term")


def test_data_wavelet_on_a_color_with_no_task_names_color_and_pe_0371():
    w = ws.Wafer(1, 2)
    w.pe(0, 1).load(".code\n.task t, 40\nt: term")
    w.route(6, [(0, -1), (0, 0), (0, 1)])
    w.stream((0, -1), 6, [1], dtype="u16")
    with pytest.raises(ws.ProgramError, match=r"PE\(0,1\): a data wavelet arrived on color 6, and "
                                              r"no task is bound to that color \(its entry, "
                                              r"instruction 24, is empty\)"):
        w.run()


def test_control_wavelet_naming_a_missing_task_says_so_0371():
    pe = ws.pe.LonePE()
    pe.load(".code\n.task t, 40\nt: term")
    pe.close(2, 45)
    with pytest.raises(ws.ProgramError, match=r"a control wavelet names task id 45, and no task is "
                                              "bound to that id"):
        pe.run()


LOOP = """
.code
.task main, 40
main: rdcyc r10
      li r1, 10
loop: addi r1, -1
      eq16 r1, #0
      bf loop
      rdcyc r13
      term
"""


def test_cycle_counter_read_twice_gives_the_elapsed_cycles_of_a_known_loop():
    """One issue per cycle: `li` and ten iterations of three instructions lie between the
    two reads, so the second read is 1 + 1 + 30 cycles after the first."""
    pe = ws.pe.LonePE(trace=True)
    pe.load(LOOP)
    pe.launch("main")
    pe.run()
    first = pe.gpr(10) | pe.gpr(11) << 16 | pe.gpr(12) << 32
    second = pe.gpr(13) | pe.gpr(14) << 16 | pe.gpr(15) << 32
    assert second - first == 32
    ((_, _, start, end),) = pe.stats()["task_spans"]
    # two cycles of task start latency, then the jump at the entry Base + 4 * 40
    assert first == start + 3 and second + 1 == end


def test_cycle_counter_gives_48_bits_in_three_words():
    pe = ws.pe.LonePE()
    pe.load(".code\n.task main, 40\nmain: rdcyc r3\n term")
    pe.run(70_000)  # past the first 16-bit wrap
    pe.launch("main")
    pe.run()
    cycle = pe.gpr(3) | pe.gpr(4) << 16 | pe.gpr(5) << 32
    assert 70_000 < cycle < pe.cycle and pe.gpr(4) == 1


def test_cycle_counter_needs_three_registers():
    with pytest.raises(ws.ProgramError, match=r"rdcyc writes three registers rN\.\.rN\+2: "
                                              r"r0\.\.r13, got r14"):
        ws.asm.assemble(".code\n.task t, 40\nt: rdcyc r14")
    (word,) = ws.asm.assemble(".code\nrdcyc r13").code.values()
    assert ws.asm.disassemble_word(word) == "rdcyc r13"
    assert ws.asm.disassemble_word(word | 1).startswith(".word")  # immediate not 0
