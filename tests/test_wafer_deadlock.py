"""Deadlocks and run-time errors of compute elements on a wafer: the watchdog's report names
what each PE runs and waits on [0306] and finds a cycle of waits through PEs and router
queues; the first failing PE's error (lowest id) stops the run, for any thread count."""


import pytest
from deadlock_programs import SEND_THEN_RECEIVE
from repo_scripts import load_script

import wafersim as ws


def _exchange(n_values):
    w = ws.Wafer(1, 2, watchdog=200)
    w.pe(0, 0).load(SEND_THEN_RECEIVE.format(out=1, inp=2).replace("20", str(n_values)))
    w.pe(0, 1).load(SEND_THEN_RECEIVE.format(out=2, inp=1).replace("20", str(n_values)))
    w.route(1, [(0, 0), (0, 1)])
    w.route(2, [(0, 1), (0, 0)])
    w.launch("main")
    return w


def test_a_small_exchange_fits_the_buffers_and_completes():
    w = _exchange(4)
    assert w.run().quiescent


def test_deadlock_report_names_task_pc_ids_queues_and_waits_0306():
    w = _exchange(20)
    with pytest.raises(ws.DeadlockError) as err:
        w.run()
    rep = err.value.report
    assert "PE (0, 0) ramp: compute element: task 40 running at pc" in rep
    assert "in mov16 (" in rep and "waiting: output queue of color 1 is full (dst)" in rep
    assert "blocked ids: 2" in rep and "blocked ids: 1" in rep
    assert "input queues: color 2: 5 (blocked) (stalling the router)" in rep
    assert "output queues: color 1: 6" in rep
    assert "router (0, 1) color 1: 2/2 queued (stalling its sources)" in rep


def test_deadlock_report_finds_the_wait_cycle_through_both_pes():
    w = _exchange(20)
    with pytest.raises(ws.DeadlockError) as err:
        w.run()
    rep = err.value.report
    cycle = rep[rep.index("wait cycle"):].splitlines()[1:]
    assert len(cycle) == 6, rep
    text = "\n".join(cycle)
    assert "PE (0, 0) task 40 pc" in text and "waits to send color 1, which router (0, 0) stalls" in text
    assert "PE (0, 1) task 40 pc" in text and "waits to send color 2, which router (0, 1) stalls" in text
    assert "router (0, 0) color 1 (2/2 queued): its head waits to go E to router (0, 1)" in text
    assert "and PE (0, 1) does not drain its input queue of color 1" in text
    assert "and PE (0, 0) does not drain its input queue of color 2" in text


def test_waiting_for_a_color_nobody_sends_is_reported_as_a_dead_end():
    w = ws.Wafer(1, 2, watchdog=100)
    w.pe(0, 1).load(SEND_THEN_RECEIVE.format(out=1, inp=2).replace("20", "3"))
    w.pe(0, 0).load(".code\n.task main, 40\nmain: term\n")
    w.route(1, [(0, 1), (0, 2)])
    w.route(2, [(0, 0), (0, 1)])   # PE (0, 0) could send color 2, but never does
    w.launch("main")
    with pytest.raises(ws.DeadlockError) as err:
        w.run()
    rep = err.value.report
    assert "no wait cycle; PEs wait for wavelets that nothing will send:" in rep
    assert ("PE (0, 1) task 40 pc" in rep and "src1 waits for color 2: which PE (0, 0) sends "
            "(it is idle or waits on nothing)" in rep)


def test_waiting_for_the_host_names_the_edge_port():
    w = ws.Wafer(1, 1, watchdog=100)
    w.pe(0, 0).load(SEND_THEN_RECEIVE.format(out=1, inp=2).replace("20", "3"))
    w.route(1, [(0, 0), (0, 1)])
    w.route(2, [(0, -1), (0, 0)])
    w.launch("main")
    w.stream((0, -1), 2, [1, 2], dtype="i16")  # one short
    with pytest.raises(ws.DeadlockError) as err:
        w.run()
    assert ("waits for color 2: which the host sends through edge port W of router (0, 0) "
            "(nothing left to inject there)") in err.value.report


def test_fig11_ring_beyond_its_buffering_deadlocks_and_the_report_shows_the_ring_0412():
    mod = load_script("examples/kernels/forward_layer_fig11.py")
    with pytest.raises(ws.DeadlockError) as err:
        mod.run_wafer(20, 200, density=1.0, ring_cols=2)
    rep = err.value.report
    cycle = rep[rep.index("wait cycle"):]
    for pe in mod.ring_layout(2):
        assert f"PE {pe} task" in cycle and "waits to send color" in cycle


FAIL = """
.data
x:    .space i16, 4
bad:  .dsd mem1d, base=32760, length=8, stride=2     ; runs off the 32 KiB of data memory
dx:   .dsd mem1d, base=x, length=8, stride=2
.code
.task main, 40
main: li r1, {delay}
spin: addi r1, -1
      eq16 r1, #0
      bf spin
      lds1wds S1[0], bad
      lddwds D[0], dx
      mov16.t D[0], S1[0]
"""


@pytest.mark.parametrize("threads", [1, 2])
def test_the_first_failing_pe_with_the_lowest_id_is_reported_for_any_thread_count(threads):
    w = ws.Wafer(8, 8, threads=threads)
    w.load(FAIL.format(delay=20), rect=(1, 0, 7, 8))
    w.launch("main")
    with pytest.raises(ws.MemoryAccessError) as err:
        w.run()
    msg = str(err.value)
    assert msg.startswith("PE(1,0) pc ") and "(mov16): src1 address 32768 is outside data memory" in msg
    # A PE that fails earlier is reported even with a higher id.
    w = ws.Wafer(8, 8, threads=threads)
    w.load(FAIL.format(delay=20), rect=(1, 0, 7, 8))
    w.pe(6, 5).load(FAIL.format(delay=3))
    w.launch("main")
    with pytest.raises(ws.MemoryAccessError, match=r"^PE\(6,5\) pc"):
        w.run()
    with pytest.raises(ws.WaferError, match="stopped mid-cycle"):
        w.run()


def test_program_errors_from_the_wafer_name_pe_and_pc():
    w = ws.Wafer(2, 2)
    with pytest.raises(ws.ProgramError, match="line 3: unknown instruction 'bogus'"):
        w.pe(0, 0).load(".code\n.task t, 1\nt: bogus r1\n")
    with pytest.raises(ws.ProgramError, match=r"PE\(1,1\): instruction memory overflow"):
        w.pe(1, 1).load(".code\n.task t, 1\nt: " + "\n".join(["nop"] * 6200))
    w.pe(1, 0).load(".code\n.task main, 40\nmain: jmp 3000\n")
    w.launch("main")
    with pytest.raises(ws.ProgramError, match=r"PE\(1,0\) task 40 pc 3000: illegal instruction"):
        w.run()
