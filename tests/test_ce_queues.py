"""Input and output queues of the CE: backpressure toward the router [0328]-[0331], output
queues that stall their color when full [0336]-[0338], [0360]-[0361], local colors
[0341], and the on-ramp / off-ramp cycle contract."""

import numpy as np
import pytest
from ce_bench import REPORT_R2, SINK, sent

import wafersim as ws

SENDER = """
.data
src:  .space u16, {n}
dsrc: .dsd mem1d, base=src, length={n}, stride=2
dout: .dsd fabric_out, color={color}, length={n}, sw=1
.export src
.code
.task send, 40
send: lds1wds S1[0], dsrc
      lddwds D[0], dout
      mov16.t D[0], S1[0]
"""


@pytest.mark.parametrize("depth", [6, 8, 3])
def test_input_queue_stalls_its_color_above_capacity_minus_two_0329(depth):
    pe = ws.pe.LonePE(input_queue_depth=depth)
    pe.load(".task blk, 40\nblk: block.t 5")
    pe.launch("blk")
    pe.run(10)
    pe.inject(5, np.arange(20), dtype="u16")
    for _ in range(60):
        pe.run(1)
        n = pe.input_queue(5)
        stalled = bool(pe._ce.stall_to_router >> 5 & 1)
        assert stalled == (n > depth - 2)  # the threshold of [0329]
        assert n <= depth
    # With one cycle of stall latency the queue settles one above the threshold.
    assert pe.input_queue(5) == depth - 1


def test_output_queue_full_stalls_the_instruction_writing_it_0337_0361():
    pe = ws.pe.LonePE()
    pe.load(SENDER.format(n=10, color=SINK))
    values = np.arange(1, 11)
    pe.write("src", values)
    pe.stall_output(SINK)
    pe.launch("send")
    pe.run(50)
    assert pe.output_queue(SINK) == 6 and pe.running_task == 40  # stalled, queue full
    assert pe.stats()["stalls"].get("output_full", 0) > 30
    assert sent(pe) == []
    pe.stall_output(SINK, False)
    pe.run()
    assert sent(pe) == list(values)


def test_at_most_one_wavelet_per_cycle_goes_to_the_on_ramp_0315():
    pe = ws.pe.LonePE()
    pe.load(SENDER.format(n=16, color=SINK))
    pe.write("src", np.arange(16))
    pe.launch("send")
    pe.run()
    cycles = pe.output(SINK)["cycle"]
    assert len(cycles) == 16 and np.all(np.diff(cycles) >= 1)


def test_local_color_wavelets_go_straight_to_our_own_input_queue_0341():
    # Color 30 is local with 24 fabric colors: it never reaches the router.
    src = SENDER.format(n=3, color=30) + REPORT_R2.split(".code")[0].replace(".data", ".data") + """
    .code
    .task local30, 30
    local30: lddwds D[1], rep
             mov16.t D[1], r2
    """
    pe = ws.pe.LonePE(fabric_colors=24)
    pe.load(src)
    pe.write("src", [5, 6, 7])
    pe.launch("send")
    s = pe.run()
    assert sent(pe) == [5, 6, 7]  # each local wavelet started task 30, which reported it
    assert s["wavelets_local"] == 3 and s["wavelets_out"] == 3  # the 3 reports only


def test_local_color_output_waits_while_its_input_queue_is_full():
    pe = ws.pe.LonePE(fabric_colors=24)
    pe.load(SENDER.format(n=10, color=30) + ".task blk, 41\nblk: block.t 30\n")
    pe.write("src", np.arange(10))
    pe.launch("blk")
    pe.run(10)
    pe.launch("send")
    pe.run(60)
    assert pe.input_queue(30) == 6 and pe.running_task == 40
    assert pe.stats()["stalls"].get("local_queue_full", 0) > 20


def test_loopback_colors_return_through_the_router_0092():
    src = SENDER.format(n=4, color=6) + REPORT_R2.split(".code")[0] + """
    .code
    .task back6, 6
    back6: lddwds D[1], rep
           mov16.t D[1], r2
    """
    pe = ws.pe.LonePE(loopback=[6])
    pe.load(src)
    pe.write("src", [9, 8, 7, 6])
    pe.launch("send")
    pe.run()
    assert sent(pe) == [9, 8, 7, 6] and len(pe.output(6)["data"]) == 0


def test_router_stall_holds_wavelets_in_the_output_queue_0338():
    pe = ws.pe.LonePE()
    pe.load(SENDER.format(n=3, color=SINK))
    pe.write("src", [1, 2, 3])
    pe.stall_output(SINK)
    pe.launch("send")
    pe.run(50)  # the task ends; the wavelets wait in the output queue
    assert pe.output_queue(SINK) == 3 and pe.running_task is None and not pe.idle
    pe.stall_output(SINK, False)
    pe.run()
    assert sent(pe) == [1, 2, 3]
