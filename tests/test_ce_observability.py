"""What a kernel writer can observe (docs/compute_element.md, "Statistics and traces"): task
spans labelled by what started them, every microthreaded operation, block / unblock /
activate events with their cause, per-color receive counts, and `run(trace=True)` on a
wafer as on a lone PE."""

import json

import numpy as np
import pytest

import wafersim as ws

PROGRAM = """
.data
buf:  .u16 1, 2, 3, 4
dbuf: .dsd mem1d, base=buf, length=4, stride=2
dout: .dsd fabric_out, color=7, length=4, sw=1, ue=1, utid=2, unblock=41
.code
.task main, 40
.task t41, 41
.task data3, 3
.task data5, 5
main:  block 41
       lds1wds S1[0], dbuf
       lddwds D[0], dout
       mov16 D[0], S1[0]
       activate.t 41
t41:   term
data3: term
data5: term
"""


def _traced_pe():
    pe = ws.pe.LonePE(trace=True)
    pe.load(PROGRAM)
    pe.launch("main")
    pe.inject(3, [9], dtype="u16", start=30)
    pe.inject_wavelets(3, [0], index=[41], ctrl=[1], start=40)
    return pe


def test_trace_has_id_events_with_their_cause_and_every_microthread():
    pe = _traced_pe()
    stats = pe.run(trace=True)
    ids = [(change, mask, cause) for change, mask, _, cause in stats["id_events"]]
    assert ids == [("activate", 1 << 40, "host"), ("block", 1 << 41, "instruction"),
                   ("unblock", 1 << 41, "completion"), ("activate", 1 << 41, "instruction")]
    # The send never had to suspend (the output queue had room), yet it is in the trace.
    assert stats["suspensions"] == 0
    ((slot, owner, pc, start, end),) = stats["microthread_spans"]
    assert (slot, owner) == (2, 40) and end - start == 3  # four wavelets, one per cycle
    kinds = {e["cat"] for e in stats["trace"] if e.get("ph") == "X" and e["tid"] == 0}
    assert kinds == {"activation", "data_wavelet", "control_wavelet"}
    instants = [(e["name"], e["cat"]) for e in stats["trace"] if e.get("ph") == "i"]
    assert instants == [("activate main", "host"), ("block t41", "instruction"),
                        ("unblock t41", "completion"), ("activate t41", "instruction")]
    names = [e["name"] for e in stats["trace"] if e.get("ph") == "X" and e["tid"] == 3]
    assert names == ["microthread 2 (task main)"]


def test_per_color_receive_counts():
    pe = _traced_pe()
    pe.inject(5, [1, 2], dtype="u16")
    s = pe.run(200)
    assert s["received_by_color"] == {3: 2, 5: 2} and s["wavelets_in"] == 4


def test_wafer_run_trace_true_returns_the_events_without_writing_a_file(tmp_path):
    w = ws.Wafer(1, 2)
    w.pe(0, 0).load(PROGRAM)
    w.route(7, [(0, 0), (0, 1), (0, 2)])
    w.launch("main")
    stats = w.run(trace=True)
    assert stats.cycles > 0 and isinstance(stats.trace, list)
    assert ("block t41", "instruction") in [(e["name"], e.get("cat")) for e in stats.trace]
    assert not w._core.ce_config.trace  # tracing was on for that run only
    assert w.collect((0, 2)).values("u16", color=7).tolist() == [1, 2, 3, 4]
    assert w.run().trace is None
    w.launch("main")
    path = tmp_path / "run.json"
    stats = w.run(trace=path)
    assert json.loads(path.read_text())["traceEvents"] == stats.trace


def test_wafer_ce_trace_option_records_every_run():
    w = ws.Wafer(1, 2, ce={"trace": True})
    w.pe(0, 0).load(PROGRAM)
    w.route(7, [(0, 0), (0, 1), (0, 2)])
    w.launch("main")
    w.run()
    s = w.pe(0, 0).stats()
    assert [e[0] for e in s["id_events"]] == ["activate", "block", "unblock", "activate"]
    assert len(s["microthread_spans"]) == 1
    assert 'Wafer(ce={"trace": True})' in ws.Wafer.__doc__


def test_lone_pe_run_trace_needs_a_tracing_pe():
    with pytest.raises(ws.ConfigError, match="tracing is off"):
        ws.pe.LonePE().run(trace=True)
    pe = ws.pe.LonePE(trace=True)
    assert "trace" not in pe.run(5)
    assert np.asarray(pe.run(5, trace=True)["trace"]).size >= 3  # the process metadata
