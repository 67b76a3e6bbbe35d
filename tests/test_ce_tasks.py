"""Tasks and the picker: task initiation [0369]-[0379], activation [0380]-[0388], the
picker's policies [0375], the register writes of a picked wavelet [0346]-[0347], timing."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from ce_bench import REPORT_R2, load_words, run_program, sent

import wafersim as ws


def _bare_pe(**kw):
    pe = ws.pe.LonePE(**kw)
    pe.load(".data\nrep: .dsd fabric_out, color=9, length=1, sw=1\n")  # DSD at address 0
    return pe


def test_data_wavelet_starts_the_task_at_base_plus_color_times_four_0371():
    pe = _bare_pe()
    pe._ce.base = 40
    # Hand-placed code: the entry of color 5 is instruction 40 + 4*5 = 60.
    load_words(pe, 60, ["movi r9, 5", "nop.t"])
    load_words(pe, 40 + 4 * 6, ["movi r9, 6", "nop.t"])
    pe.inject(5, [1.0])
    pe.run()
    assert pe.gpr(9) == 5


def test_control_wavelet_starts_the_task_of_its_low_six_index_bits_0371_0376():
    pe = _bare_pe()
    pe._ce.base = 8
    load_words(pe, 8 + 4 * 5, ["movi r9, 5", "nop.t"])
    load_words(pe, 8 + 4 * 7, ["movi r9, 7", "nop.t"])
    pe.close(5, 0x1C7)  # control wavelet on color 5, index low six bits = 7
    pe.run()
    assert pe.gpr(9) == 7
    pe.close(5, 0xFFC5)  # bits 15:6 all ones, low bits 5
    pe.run()
    assert pe.gpr(9) == 5


def test_picked_wavelet_data_and_index_go_to_the_register_file_0346():
    pe = run_program(".task t, 5\nt: term", inject=[(5, [0xABCD], {"dtype": "u16", "index": 77})])
    assert pe.gpr(2) == 0xABCD and pe.gpr(4) == 77
    dense = run_program(".task t, 5\nt: term",
                        inject=[(5, [0x1111, 0x2222], {"dtype": "u16", "sw": 2})])
    assert dense.gpr(2) == 0x1111 and dense.gpr(3) == 0x2222


def test_activated_task_gets_no_register_data_0347():
    pe = ws.pe.LonePE()
    pe.load(".task t, 20\nt: li r8, 1\n term")
    pe.set_gpr(2, 0x5555)
    pe.set_gpr(4, 0x6666)
    pe.launch("t")
    pe.run()
    assert pe.gpr(8) == 1 and pe.gpr(2) == 0x5555 and pe.gpr(4) == 0x6666


def test_picking_an_activated_id_clears_its_active_bit_0381():
    pe = ws.pe.LonePE()
    pe.load(".task t, 20\nt: addi r8, 1\n term")
    pe.launch("t")
    pe.launch("t")  # a bit, not a counter [0385]
    assert pe.active == {20}
    pe.run()
    assert pe.active == set() and pe.gpr(8) == 1
    assert pe.stats()["tasks_started"] == {20: 1}


def test_picker_takes_the_oldest_wavelet_of_a_queue_0345():
    src = REPORT_R2 + ".task t, 5\nt: lddwds D[0], rep\n mov16.t D[0], r2"
    pe = run_program(src, inject=[(5, [11, 22, 33, 44], {"dtype": "u16"})])
    assert sent(pe) == [11, 22, 33, 44]


def test_task_runs_until_the_terminate_bit_0377():
    pe = run_program(".task t, 1\nt: li r1, 1\n li r2, 2\n nop.t\n li r1, 9\n term", launch="t")
    assert pe.gpr(1) == 1 and pe.gpr(2) == 2
    assert pe.stats()["instructions"].get("movi") == 2


def test_conditional_branch_terminates_only_when_not_taken_0600():
    src = """
    .task t, 1
    t:    li r1, 3
    loop: addi r1, -1
          addi r7, 1
          eq16 r1, #0
          bf.t loop
          li r5, 99
          term
    """
    pe = run_program(src, launch="t")
    assert pe.gpr(7) == 3 and pe.gpr(1) == 0 and pe.gpr(5) == 0


def _queued_then_released(policy):
    """Blocks colors 3 and 5, queues wavelets, then unblocks all at once so that only the
    picker's policy decides the order."""
    src = REPORT_R2 + """
    .task hold, 40
    .task release, 41
    .task t3, 3
    .task t5, 5
    .task close3, 30
    hold:    block 3
             block.t 5
    release: unblock.t #255
    t3:      lddwds D[0], rep
             mov16.t D[0], r2
    t5:      lddwds D[0], rep
             mov16.t D[0], r2
    close3:  li r2, 300
             lddwds D[0], rep
             mov16.t D[0], r2
    """
    pe = ws.pe.LonePE(picker=policy)
    pe.load(src)
    pe.launch("hold")
    pe.run(10)
    pe.inject(3, [31, 32], dtype="u16")
    pe.inject_wavelets(3, [0], index=[30], ctrl=[1])  # closeout: starts task 30
    pe.inject(5, [51, 52, 53], dtype="u16")
    pe.run(40)
    assert pe.input_queue(3) == 3 and pe.input_queue(5) == 3
    pe.launch("release")
    pe.run()
    return sent(pe)


def test_round_robin_picker_alternates_between_ready_queues_0375():
    assert _queued_then_released("round_robin") == [31, 51, 32, 52, 300, 53]


def test_pick_from_last_stays_on_a_queue_until_its_closeout_0375():
    assert _queued_then_released("pick_from_last") == [31, 32, 300, 51, 52, 53]


def test_further_wavelets_of_the_task_color_are_consumed_as_operands_0374_0510():
    src = """
    .data
    buf: .space u16, 3
    din: .dsd fabric_in, length=3, sw=1
    dbuf: .dsd mem1d, base=buf, length=3, stride=2
    .export buf
    .code
    .task t, 5
    t:  lds1wds S1[0], din
        lddwds D[0], dbuf
        mov16.t D[0], S1[0]
    """
    pe = run_program(src, inject=[(5, [7, 8, 9, 10], {"dtype": "u16"})])
    assert pe.gpr(2) == 7  # the first wavelet started the task
    assert list(pe.read("buf")) == [8, 9, 10]
    assert pe.stats()["tasks_started"] == {5: 1}


@pytest.mark.parametrize("latency", [1, 2, 5])
def test_task_start_latency_and_one_instruction_per_cycle(latency):
    pe = ws.pe.LonePE(task_start_latency=latency)
    pe.load(".task t, 20\nt: li r1, 1\n li r2, 2\n li r3, 3\n term")
    pe.launch("t")
    s = pe.run()
    # The pick, latency-1 more cycles of pipeline fill, then jmp + 3 movi + nop.t.
    assert s["busy_by_task"] == {20: latency + 5}


def test_one_simd_iteration_per_cycle_0502():
    src = """
    .data
    x: .space fp16, 16
    y: .space fp32, 16
    dx: .dsd mem1d, base=x, length=16, stride=2
    dy: .dsd mem1d, base=y, length=16, stride=4
    .code
    .task h, 20
    .task s, 21
    h: lds0wds S0[0], dx
       lds1wds S1[0], dx
       lddwds D[0], dx
       faddh.t D[0], S0[0], S1[0]
    s: lds0wds S0[0], dy
       lds1wds S1[0], dy
       lddwds D[0], dy
       fadds.t D[0], S0[0], S1[0]
    """
    h = run_program(src, launch="h")
    s = run_program(src, launch="s")
    assert h.stats()["iterations"] == 4 and s.stats()["iterations"] == 16  # SIMD 4 vs 1
    assert s.stats()["busy_by_task"][21] - h.stats()["busy_by_task"][20] == 12


def test_launch_by_unknown_name_raises():
    pe = ws.pe.LonePE()
    pe.load(".task t, 1\nt: term")
    with pytest.raises(ws.ConfigError, match="unknown task 'nope'"):
        pe.launch("nope")
    with pytest.raises(ws.ConfigError, match="0..63"):
        pe.launch(64)


def test_trace_records_task_spans(tmp_path):
    pe = ws.pe.LonePE(trace=True)
    pe.load(".task t, 20\nt: li r1, 1\n term")
    pe.launch("t")
    pe.run(trace=tmp_path / "t.json")
    import json

    ev = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    spans = [e for e in ev if e.get("ph") == "X"]
    assert len(spans) == 1 and spans[0]["name"] == "task t" and spans[0]["dur"] == 2 + 3
    assert np.isclose(spans[0]["ts"], 0)


@settings(max_examples=25, deadline=None)
@given(queues=st.sets(st.integers(0, 23), max_size=6),
       acts=st.sets(st.integers(0, 59), max_size=6),
       release=st.integers(0, 59))
def test_round_robin_serves_queues_and_activations_in_position_order_0375(queues, acts,
                                                                          release):
    """The round robin of [0375] over 128 positions (id i's queue at 2 i, its activation at
    2 i + 1): with every candidate waiting at once, tasks start in position order from the
    one after the last pick (the release task's activation), wrapping around."""
    acts = acts - {release}
    assume(release not in queues)
    used = sorted(queues | acts)
    hold = "\n".join(f"         block {i}" for i in used) + "\n         nop.t"
    free = "\n".join(f"         unblock {i}" for i in used) + "\n         nop.t"
    tasks = "\n".join(f".task t{i}, {i}\nt{i}: nop.t" for i in used)
    pe = ws.pe.LonePE(trace=True)
    pe.load(f".task hold, 62\n.task free, {release}\n{tasks}\nhold:\n{hold}\nfree:\n{free}\n")
    pe.launch("hold")
    pe.run(len(used) + 10)
    for q in queues:
        pe.inject(q, [1.0])
    for a in acts:
        pe.launch(a)
    pe.run(40)
    pe.launch("free")
    pe.run()
    started = [(i, how) for i, how, _, _ in pe.stats()["task_spans"]][2:]   # after hold, free
    waiting = [2 * q for q in queues] + [2 * a + 1 for a in acts]
    after = 2 * release + 1
    expect = sorted(waiting, key=lambda p: (p <= after, p))
    assert started == [(p // 2, "activation" if p & 1 else "data_wavelet") for p in expect]
