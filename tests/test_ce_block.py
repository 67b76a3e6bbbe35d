"""Block / unblock / activate: what a Block bit gates and what it leaves alone
[0389]-[0399], activation by instruction and by events [0381]-[0388]."""

import numpy as np
import pytest
from ce_bench import REPORT_R2, sent

import wafersim as ws

REPORTER = REPORT_R2 + """
.task report5, 5
report5: lddwds D[0], rep
         mov16.t D[0], r2
"""


def _pe(extra: str, **kw):
    pe = ws.pe.LonePE(**kw)
    pe.load(REPORTER + extra)
    return pe


def test_blocked_color_wavelets_stay_queued_and_unblock_releases_them_in_order_0390_0397():
    pe = _pe(".task blk, 40\n.task unb, 41\nblk: block.t 5\nunb: unblock.t 5")
    pe.launch("blk")
    pe.run(10)
    assert pe.blocked == {5}
    pe.inject(5, [1, 2, 3], dtype="u16")
    pe.run(100)
    assert pe.input_queue(5) == 3 and sent(pe) == []  # not selected, not dropped
    assert pe.stats()["tasks_started"] == {40: 1}
    pe.launch("unb")
    pe.run()
    assert pe.blocked == set() and sent(pe) == [1, 2, 3]


def test_backpressure_keeps_working_while_a_color_is_blocked_0389_0329():
    pe = _pe(".task blk, 40\n.task unb, 41\nblk: block.t 5\nunb: unblock.t 5")
    pe.launch("blk")
    pe.run(10)
    values = np.arange(100, 120)
    pe.inject(5, values, dtype="u16")
    pe.run(200)
    # The queue fills to its stall threshold and the producer waits: nothing is lost.
    assert pe.input_queue(5) == 5 and pe._pe.pending_injections(5) == 15
    assert pe._ce.stall_to_router >> 5 & 1
    pe.launch("unb")
    pe.run()
    assert sent(pe) == list(values)
    assert pe.stats()["max_input_occupancy"][5] <= 6


def test_activated_but_blocked_id_is_not_selected_and_stays_active_0390():
    pe = _pe("""
    .task blk, 40
    .task unb, 41
    .task work, 20
    blk:  block.t 20
    unb:  unblock.t 20
    work: li r2, 77
          lddwds D[0], rep
          mov16.t D[0], r2
    """)
    pe.launch("blk")
    pe.run(10)
    pe.launch("work")
    pe.run(100)
    assert pe.active == {20} and sent(pe) == []
    pe.launch("unb")
    pe.run()
    assert pe.active == set() and sent(pe) == [77]


def test_running_task_finishes_after_blocking_its_own_id():
    pe = _pe(".task t, 20\nt: block #20\n li r9, 1\n term")
    pe.launch("t")
    pe.run()
    assert pe.gpr(9) == 1 and pe.blocked == {20}


def test_block_all_and_unblock_all_with_255_0391_0392():
    pe = _pe(".task a, 40\n.task b, 41\na: block.t #255\nb: unblock.t #255")
    pe.launch("a")
    pe.run()
    assert pe.blocked == set(range(64))
    pe.launch("b")  # its own id is blocked too: it waits, activated [0390]
    pe.run(50)
    assert pe.active == {41} and pe.blocked == set(range(64))
    pe2 = _pe(".task a, 40\na: block #255\n unblock.t #255")
    pe2.launch("a")
    pe2.run()
    assert pe2.blocked == set()


def test_register_and_vector_sources_name_one_all_or_several_ids_0391_0394():
    src = """
    .data
    ids: .u16 7, 9, 33
    dids: .dsd mem1d, base=ids, length=3, stride=2
    .code
    .task a, 40
    .task b, 41
    .task c, 42
    a: li r3, 12
       block r3
       lds1wds S1[1], dids
       block.t S1[1]
    b: block #255
       li r3, 0xFFFF
       activate.t r3
    c: li r3, 100
       block.t r3
    """
    pe = ws.pe.LonePE()
    pe.load(src)
    pe.launch("a")
    pe.run()
    assert pe.blocked == {7, 9, 12, 33}
    pe.launch("b")
    pe.run(50)
    assert pe.active == set(range(64))  # all activated, none runs: all are blocked
    pe2 = ws.pe.LonePE()
    pe2.load(src)
    pe2.launch("c")
    with pytest.raises(ws.ProgramError, match="source value 100 names no id"):
        pe2.run()


def test_blocked_color_is_still_read_by_a_fabric_input_operation():
    """The idiom of the design: block the data task of color c, let an asynchronous
    fabric-input operation read c, and activate a task when it is done."""
    src = """
    .data
    buf:  .space fp16, 8
    din:  .dsd fabric_in, length=8, sw=1, ue=1, sc=1, utid=3, ac=50
    dbuf: .dsd mem1d, base=buf, length=8, stride=2
    .export buf
    .code
    .task main, 40
    .task data3, 3
    .task done, 50
    main:  block 3
           lds1wds S1[0], din
           lddwds D[0], dbuf
           mov16.t D[0], S1[0]
    data3: li r9, 666
           term
    done:  li r8, 1
           term
    """
    pe = ws.pe.LonePE()
    pe.load(src)
    pe.launch("main")
    pe.run(20)
    x = np.linspace(-1, 1, 8).astype(np.float16)
    pe.inject(3, x, start=30)
    pe.run()
    assert np.array_equal(pe.read("buf"), x)
    assert pe.gpr(8) == 1 and pe.gpr(9) == 0  # the blocked data task never ran
    assert pe.stats()["tasks_started"] == {40: 1, 50: 1}


def test_microthreads_of_a_blocked_owner_do_not_resume_under_the_literal_option_0390():
    """block_holds_microthreads=True: [0390] read literally, the owner's block holds them."""
    src = """
    .data
    buf:  .space u16, 4
    din:  .dsd fabric_in, length=4, sw=1, ue=1, sc=1, utid=3, ac=50
    dbuf: .dsd mem1d, base=buf, length=4, stride=2
    .export buf
    .code
    .task main, 40
    .task blk, 41
    .task unb, 42
    .task done, 50
    main: block 3
          lds1wds S1[0], din
          lddwds D[0], dbuf
          mov16.t D[0], S1[0]
    blk:  block.t 40
    unb:  unblock.t 40
    done: li r8, 1
          term
    """
    pe = ws.pe.LonePE(block_holds_microthreads=True)
    pe.load(src)
    pe.launch("main")
    pe.run(20)
    assert pe.microthreads_in_use == 1
    pe.launch("blk")
    pe.run(10)
    pe.inject(3, [1, 2, 3, 4], dtype="u16")
    pe.run(100)
    assert pe.input_queue(3) == 4 and pe.microthreads_in_use == 1  # waiting, not resumed
    assert "its task id 40 is blocked" in pe.describe_wait()
    pe.launch("unb")
    pe.run()
    assert list(pe.read("buf")) == [1, 2, 3, 4] and pe.gpr(8) == 1


def test_activate_instruction_with_immediate_register_and_memory_sources_0382():
    src = """
    .data
    one: .u16 22
    .code
    .task a, 40
    .task t21, 21
    .task t22, 22
    .task t23, 23
    a:   li r5, 21
         activate r5
         activate [one]
         activate.t #23
    t21: addi r9, 1
         term
    t22: addi r10, 1
         term
    t23: addi r11, 1
         term
    """
    pe = ws.pe.LonePE()
    prog = pe.load(src)
    assert prog.symbols["one"].address < 256  # 8-bit memory address [0599]
    pe.launch("a")
    pe.run()
    assert (pe.gpr(9), pe.gpr(10), pe.gpr(11)) == (1, 1, 1)
