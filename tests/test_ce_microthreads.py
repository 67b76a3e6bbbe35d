"""Microthreads [0500]-[0503], [0604]-[0610], [0362]-[0363]: a vector operation with a
microthreading fabric operand (UE) suspends on a stall, lets other work run, and resumes
where it stopped; completion or Term activates its AC color."""

import numpy as np
from ce_bench import SINK

import wafersim as ws
from wafersim.asm import unpack_dsd

RECEIVE = """
.data
buf:  .space fp16, {n}
din:  .dsd fabric_in, length={n}, sw=1, ue={ue}, sc=1, utid={utid}, ac=50, term={term}
dbuf: .dsd mem1d, base=buf, length={n}, stride=2
.export buf
.code
.task main, 40
.task other, 41
.task done, 50
.task closer, 60
main:   block 3
        lds1wds S1[0], din
        lddwds D[0], dbuf
        mov16 D[0], S1[0]
        activate.t 41
other:  li r9, 1
        term
done:   li r8, 1
        term
closer: li r7, 1
        term
"""


def _receiver(n=32, ue=1, utid=3, term=0, **kw):
    pe = ws.pe.LonePE(**kw)
    pe.load(RECEIVE.format(n=n, ue=ue, utid=utid, term=term))
    pe.launch("main")
    return pe


def test_suspended_operation_writes_its_progress_back_example_of_0609():
    """32 elements from the fabric into a 1D vector, stalled after 4: both lengths read
    28 and the destination base has advanced by 4 strides."""
    pe = _receiver()
    x = np.arange(32, dtype=np.float16) / 4
    pe.inject(3, x[:4])
    pe.run(60)
    base = pe.program.symbols["buf"].address
    src, dst = unpack_dsd(pe.dsr("s1", 0)), unpack_dsd(pe.dsr("d", 0))
    assert pe.microthreads_in_use == 1 and pe.stats()["suspensions"] == 1
    assert src["length"] == 28 and dst["length"] == 28
    assert dst["base"] == base + 4 * 2
    pe.inject(3, x[4:], start=pe.cycle + 10)
    pe.run()
    assert np.array_equal(pe.read("buf"), x)  # resumed at the stalled element [0607]
    # Done: the descriptors read as the program loaded them, and AC was activated [0503].
    assert unpack_dsd(pe.dsr("d", 0))["base"] == base and unpack_dsd(pe.dsr("s1", 0))["length"] == 32
    assert pe.gpr(8) == 1


def test_other_tasks_run_while_a_microthread_waits_0606():
    pe = _receiver()
    pe.run(40)
    assert pe.gpr(9) == 1 and pe.gpr(8) == 0  # `other` ran; the receive still waits
    pe.inject(3, np.ones(32))
    pe.run()
    assert pe.gpr(8) == 1


def test_without_microthreading_the_ce_stalls_until_data_arrives_0607():
    pe = _receiver(ue=0)
    pe.run(40)
    assert pe.gpr(9) == 0 and pe.running_task == 40 and pe.microthreads_in_use == 0
    assert pe.stats()["stalls"]["input_empty"] > 30
    pe.inject(3, np.ones(32))
    pe.run()
    assert pe.gpr(9) == 1 and pe.gpr(8) == 0  # no UE: completion activates nothing


def test_term_ends_the_operation_on_a_control_wavelet_and_activates_ac_0504():
    pe = _receiver(n=100, term=1)
    x = np.arange(1, 6, dtype=np.float16)
    pe.inject(3, x)
    pe.inject_wavelets(3, [0], index=[60], ctrl=[1], start=10)
    pe.inject(3, [99.0], start=20)
    pe.run(300)
    got = pe.read("buf")
    assert np.array_equal(got[:5], x) and not np.any(got[5:])
    assert pe.gpr(8) == 1 and pe.gpr(7) == 0  # AC ran; the closeout was consumed, not picked
    assert pe.input_queue(3) == 1  # the wavelet after the closeout stays queued


def test_ut_entry_comes_from_utid_and_a_busy_entry_stalls_the_issue_0362():
    src = """
    .data
    a: .space u16, 2
    b: .space u16, 2
    ia: .dsd fabric_in, length=2, sw=1, ue=1, sc=1, utid=3, ac=50
    ib: .dsd fabric_in, length=2, sw=1, ue=1, sc=1, utid=4, ac=51
    ib_same: .dsd fabric_in, length=2, sw=1, ue=1, sc=1, ch=1, utid=3, ac=51
    da: .dsd mem1d, base=a, length=2, stride=2
    db: .dsd mem1d, base=b, length=2, stride=2
    .export a, b
    .code
    .task main, 40
    .task done_a, 50
    .task done_b, 51
    main:   block 3
            block 4
            block 11
            lds1wds S1[0], ia
            lddwds D[0], da
            mov16 D[0], S1[0]
            lds1wds S1[1], {second}
            lddwds D[1], db
            mov16.t D[1], S1[1]
    done_a: addi r8, 1
            term
    done_b: addi r9, 1
            term
    """
    # Distinct UTIDs: both suspend, the task ends at once.
    pe = ws.pe.LonePE()
    pe.load(src.format(second="ib"))
    pe.launch("main")
    pe.run(30)
    assert pe.microthreads_in_use == 2 and pe.running_task is None
    # The same UTID 3 for a source on color 11 (CH 1): the second waits for the entry.
    pe2 = ws.pe.LonePE()
    pe2.load(src.format(second="ib_same"))
    pe2.launch("main")
    pe2.run(30)
    assert pe2.microthreads_in_use == 1 and pe2.running_task == 40
    assert pe2.stats()["stalls"]["ut_slot_busy"] > 10
    pe2.inject(3, [1, 2], dtype="u16")
    pe2.inject(11, [3, 4], dtype="u16")
    pe2.run()
    assert list(pe2.read("a")) == [1, 2] and list(pe2.read("b")) == [3, 4]
    assert pe2.gpr(8) == 1 and pe2.gpr(9) == 1


def test_output_side_microthread_waits_on_a_full_output_queue_0383_0608():
    pe = ws.pe.LonePE()
    pe.load(f"""
    .data
    v:  .u16 1, 2, 3, 4, 5, 6, 7, 8, 9, 10
    dv: .dsd mem1d, base=v, length=10, stride=2
    do: .dsd fabric_out, color={SINK}, length=10, sw=1, ue=1, utid=1, ac=50
    .code
    .task main, 40
    .task done, 50
    main: lds1wds S1[0], dv
          lddwds D[0], do
          mov16.t D[0], S1[0]
    done: li r8, 1
          term
    """)
    pe.stall_output(SINK)
    pe.launch("main")
    pe.run(40)
    assert pe.running_task is None and pe.microthreads_in_use == 1 and pe.output_queue(SINK) == 6
    pe.stall_output(SINK, False)
    pe.run()
    assert list(pe.output(SINK)["data"]) == list(range(1, 11)) and pe.gpr(8) == 1


def test_eight_microthreads_at_once_0362():
    lines = [".data"]
    for k in range(8):
        lines += [f"b{k}: .space u16, 1",
                  f"i{k}: .dsd fabric_in, length=1, sw=1, ue=1, sc=1, utid={k}, ch=1, ac={50 + k}",
                  f"d{k}: .dsd mem1d, base=b{k}, length=1, stride=2", f".export b{k}"]
    lines += [".code", ".task main, 40", "main:", "  block #255", "  unblock 40"]
    for k in range(8):
        lines += [f"  unblock {50 + k}", f"  lds1wds S1[0], i{k}", f"  lddwds D[0], d{k}",
                  "  mov16 D[0], S1[0]"]
    lines += ["  term"]
    for k in range(8):
        lines += [f".task done{k}, {50 + k}", f"done{k}: addi r9, 1", "  term"]
    pe = ws.pe.LonePE()
    pe.load("\n".join(lines))
    pe.launch("main")
    pe.run(100)
    assert pe.microthreads_in_use == 8
    for k in reversed(range(8)):  # colors 8..15 = CH 1, UTID k
        pe.inject(8 + k, [100 + k], dtype="u16", start=pe.cycle + 3 * (8 - k))
    pe.run()
    assert [int(pe.read(f"b{k}")[0]) for k in range(8)] == [100 + k for k in range(8)]
    assert pe.gpr(9) == 8


def test_microthreads_share_the_issue_slot_with_a_busy_foreground():
    """A ready microthread gets cycles even while a long task runs (round robin)."""
    src = RECEIVE.format(n=16, ue=1, utid=3, term=0).replace(
        "        activate.t 41",
        "        li r1, 200\nspin:   addi r1, -1\n        eq16 r1, #0\n        bf spin\n        term")
    pe = ws.pe.LonePE(trace=True)
    pe.load(src)
    pe.launch("main")
    pe.inject(3, np.ones(16), start=20)
    pe.run()
    s = pe.stats()
    (main_span,) = [t for t in s["task_spans"] if t[0] == 40]
    (ut_span,) = s["microthread_spans"]
    assert ut_span[4] < main_span[3]  # the receive finished while `main` was still spinning


SCATTER = """
.data
buf:  .space fp16, 16
din:  .dsd fabric_in, length=4, sw=1, ue=1, sc=1, utid=3, us=1, ac=50
dsc:  .dsd mem1d, base=buf, length=4, stride=0, wli=1
scale: .dsd mem1d, base=buf, length=4, stride=2
.export buf
.code
.task main, 40
.task poke, 41
.task done, 50
main:   block 3
        lds1wds S1[0], din
        lddwds D[0], dsc
        mov16.t D[0], S1[0]          ; sparse receive: each element to buf + its index (WLI)
poke:   li r4, 7                     ; a task that uses r4 while the receive waits
        li r2, 5
        term
done:   term
"""


def test_a_suspended_operation_keeps_its_own_registers_0609_0610():
    """A suspended operation resumes from its own state [0609], [0610], registers included:
    a task that changes r4 meanwhile does not move the sparse receive's scatter, and the
    receive's index updates (US [0506]) do not reach the task's r4."""
    pe = ws.pe.LonePE()
    pe.load(SCATTER)
    pe.launch("main")
    idx = np.array([0, 6, 2, 10], dtype=np.uint16)       # byte offsets, as WLI uses them
    vals = np.array([1.5, 2.5, 3.5, 4.5], dtype=np.float16)
    pe.inject(3, vals[:2], index=idx[:2])
    pe.run(40)
    assert pe.microthreads_in_use == 1
    pe.launch("poke")
    pe.run(40)
    assert pe.gpr(4) == 7 and pe.gpr(2) == 5               # the task's registers, untouched
    pe.inject(3, vals[2:], index=idx[2:], start=pe.cycle + 5)
    pe.run()
    got = pe.read("buf")
    for i, v in zip(idx, vals):
        assert got[i // 2] == v                              # each element at its own index
    assert pe.gpr(4) == 7


def test_a_register_destination_of_a_microthread_reaches_the_register_file():
    pe = ws.pe.LonePE()
    pe.load("""
    .data
    din: .dsd fabric_in, length=4, sw=1, ue=1, sc=1, utid=3, ac=50
    .code
    .task main, 40
    .task done, 50
    main:   block 3
            movi r5, 0
            lds1wds S1[0], din
            add16.t r5, r5, S1[0]     ; sum of the stream into r5, as a microthread
    done:   term
    """)
    pe.launch("main")
    pe.inject_wavelets(3, [1, 2], start=0)
    pe.inject_wavelets(3, [3, 4], start=60)
    pe.run()
    assert pe.gpr(5) == 10


def test_profile_counts_busy_cycles_per_instruction():
    """CE option profile=True: busy cycles per instruction address; they add up to the busy
    cycles, and a vector operation's iterations count at its address."""
    pe = ws.pe.LonePE(profile=True)
    prog = pe.load("""
    .data
    v: .space fp16, 8
    dv: .dsd mem1d, base=v, length=8, stride=2
    .code
    .task main, 40
    main: lddwds D[0], dv
    op:   mov16 D[0], #1
          term
    """)
    pe.launch("main")
    st = pe.run()
    prof = st["busy_by_pc"]
    assert prof.sum() == st["busy_cycles"]
    assert prof[prog.symbols["op"].address] == 2      # 8 elements, 4 per cycle [0502]
