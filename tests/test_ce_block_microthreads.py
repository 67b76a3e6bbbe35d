"""Block and microthreads (docs/compute_element.md, "Block, unblock, activate"): by
default a Block bit gates only what the picker starts [0390], so a blocked id's own
microthreads keep running; ``block_holds_microthreads=True`` takes [0390] literally. Both
idioms of the public programming model, under both readings."""

import numpy as np
import pytest

import wafersim as ws

# The forwarder idiom: the data task of color 5 blocks itself, starts an asynchronous send of
# four values (the wavelet's, then 1, 2, 3) on color 7, and the send's completion unblocks it.
FORWARDER = """
.data
buf:  .u16 0, 1, 2, 3
dbuf: .dsd mem1d, base=buf, length=4, stride=2
dout: .dsd fabric_out, color=7, length=4, sw=1, ue=1, utid=1, unblock=5
.code
.task fwd, 5
fwd:  block 5
      st16 r2, buf
      lds1wds S1[0], dbuf
      lddwds D[0], dout
      mov16.t D[0], S1[0]
"""


def _forwarder_with_a_full_output_queue(**kw):
    pe = ws.pe.LonePE(**kw)
    pe.load(FORWARDER)
    pe.stall_output(7)  # the sink refuses color 7: the second send must wait for room
    pe.inject(5, [10, 20, 30], dtype="u16")
    pe.run(40)
    assert pe.output_queue(7) == 6 and pe.microthreads_in_use == 1 and pe.blocked == {5}
    pe.stall_output(7, False)
    return pe


def test_forwarder_whose_send_waits_for_room_finishes_by_default_0390():
    """Block gates only the picker: the suspended send of the blocked id 5 resumes when the
    output queue drains, and its completion unblocks 5 for the next wavelet [0390], [0503]."""
    pe = _forwarder_with_a_full_output_queue()
    pe.run()
    assert pe.output_values(7, "u16").tolist() == [10, 1, 2, 3, 20, 1, 2, 3, 30, 1, 2, 3]
    assert pe.blocked == set() and pe.stats()["tasks_started"] == {5: 3}


def test_forwarder_deadlocks_under_the_literal_reading_naming_the_held_microthread_0390():
    pe = _forwarder_with_a_full_output_queue(block_holds_microthreads=True)
    with pytest.raises(ws.DeadlockError) as e:
        pe.run(watchdog=200)
    assert ("microthread 1 (task 5, pc 260 mov16, 2 of 4 elements): held: its task id 5 is "
            "blocked (block_holds_microthreads) [0390]") in e.value.report
    assert pe.output_values(7, "u16").tolist() == [10, 1, 2, 3, 20, 1]


# A slow consumer at (0, 1): each wavelet of color 7 runs a task that adds it to r9.
CONSUMER = """
.code
.task take, 7
take: add16 r9, r9, r2
      nop
      nop
      nop
      term
"""


def _forwarding_wafer(holds: bool):
    w = ws.Wafer(1, 2, watchdog=300, ce={"block_holds_microthreads": holds})
    w.pe(0, 0).load(FORWARDER)
    w.pe(0, 1).load(CONSUMER)
    w.route(5, [(0, -1), (0, 0)])
    w.route(7, [(0, 0), (0, 1)])
    w.stream((0, -1), 5, [10, 20, 30, 40, 50, 60], dtype="u16")
    return w


def test_forwarder_on_a_wafer_with_a_slow_consumer_finishes_by_default_0390():
    w = _forwarding_wafer(False)
    w.run()
    assert w.pe(0, 1).gpr(9) == 10 + 20 + 30 + 40 + 50 + 60 + 6 * (1 + 2 + 3)
    assert w.pe(0, 0).stats()["tasks_started"] == {5: 6}


def test_forwarder_on_a_wafer_deadlock_summary_names_held_microthread_and_blocked_id_0390():
    """Under the literal reading the summary names the held microthread and the blocked id,
    not a router queue."""
    w = _forwarding_wafer(True)
    with pytest.raises(ws.DeadlockError) as e:
        w.run()
    summary = e.value.report.split("microthreads held by a blocked id", 1)[1]
    assert ("PE (0, 0) microthread 1 (task 5 pc 260 mov16) is held: its task id 5 is blocked "
            "[0390]") in summary


# The other idiom: block the data task of color 3, then let an asynchronous fabric input
# read color 3 and activate task 50 when it is done.
RECEIVE = """
.data
buf:  .space u16, 8
din:  .dsd fabric_in, length=8, sw=1, ue=1, sc=1, utid=3, ac=50
dbuf: .dsd mem1d, base=buf, length=8, stride=2
.export buf
.code
.task main, 40
.task done, 50
main: block 3
      lds1wds S1[0], din
      lddwds D[0], dbuf
      mov16.t D[0], S1[0]
done: li r8, 1
      term
"""


@pytest.mark.parametrize("holds", [False, True])
def test_fabric_input_of_a_blocked_color_runs_under_both_readings_0390(holds):
    pe = ws.pe.LonePE(block_holds_microthreads=holds)
    pe.load(RECEIVE)
    pe.launch("main")
    pe.run(20)
    assert pe.microthreads_in_use == 1 and pe.blocked == {3}
    pe.inject(3, np.arange(8) * 3, dtype="u16", start=pe.cycle + 5)
    pe.run()
    assert pe.read("buf").tolist() == [0, 3, 6, 9, 12, 15, 18, 21] and pe.gpr(8) == 1
    assert pe.stats()["tasks_started"] == {40: 1, 50: 1}  # no task of color 3 ever ran


def test_block_holds_microthreads_is_a_wafer_ce_option():
    assert ws.Wafer(1, 1, ce={"block_holds_microthreads": True})._core.ce_config \
        .block_holds_microthreads
    assert not ws.Wafer(1, 1)._core.ce_config.block_holds_microthreads
