"""The deadlock report's dead-end summary ("PEs wait for wavelets that nothing will send")
lists a PE whose task or microthread waits on a local color: an id at or above the
fabric-color count, which no router carries [0096], [0306]."""

import pytest

import wafersim as ws


# Reads 4 values from color 25: a local color with the default 24 fabric colors
# (CH = 3, UTID = 1). Nothing sends it. {ue} makes the read a microthread.
READ_LOCAL = """
.data
x:    .space i16, 4
dx:   .dsd mem1d, base=x, length=4, stride=2
din:  .dsd fabric_in, length=4, sw=1, sc=1, ch=3, utid=1{ue}
.code
.task main, 41
.task done, 43
main: lddwds D[0], dx
      lds1wds S1[0], din
      mov16.t D[0], S1[0]
done: term
"""

SUMMARY = "no wait cycle; PEs wait for wavelets that nothing will send:"
LOCAL = ("waits for color 25: a local color, which no router carries: only this PE's own "
         "sends of color 25 fill that queue")


def _deadlock(w):
    with pytest.raises(ws.DeadlockError) as err:
        w.run()
    return err.value.report


@pytest.mark.parametrize("ue,who", [("", "task 41 pc"), (", ue=1, ac=43", "microthread 1 (task 41 pc")])
def test_deadlock_summary_lists_a_pe_waiting_on_a_local_color(ue, who):
    w = ws.Wafer(1, 2, watchdog=100)
    w.pe(0, 1).load(READ_LOCAL.format(ue=ue))
    w.launch("main")
    rep = _deadlock(w)
    summary = rep[rep.index(SUMMARY):].splitlines()
    assert len(summary) == 2, rep
    assert summary[1].startswith(f"  PE (0, 1) {who}") and summary[1].endswith(LOCAL), rep


def test_local_and_fabric_dead_ends_are_listed_together():
    w = ws.Wafer(1, 2, watchdog=100)
    w.pe(0, 0).load(READ_LOCAL.format(ue=""))
    w.pe(0, 1).load(READ_LOCAL.format(ue="").replace("ch=3, utid=1", "ch=0, utid=2"))
    w.route(2, [(0, 0), (0, 1)])  # PE (0, 0) could send color 2, but never does
    w.launch("main")
    rep = _deadlock(w)
    summary = rep[rep.index(SUMMARY):].splitlines()[1:]
    assert len(summary) == 2, rep
    assert summary[0].startswith("  PE (0, 0) task 41") and summary[0].endswith(LOCAL)
    assert summary[1].startswith("  PE (0, 1) task 41") and summary[1].endswith(
        "waits for color 2: which PE (0, 0) sends (it is stuck itself)")
