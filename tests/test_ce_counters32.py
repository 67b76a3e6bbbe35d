"""A PE keeps its counters by id, color and opcode in 32 bits each, carrying into a high half
past 2^32 (counters32.hpp); those by id and color in rows for the first eight ids it counts,
moving to full arrays at a ninth (id_counters.hpp). The carry is checked against Python's
integers; the programs count many tasks, opcodes and colors, checked against what the
program text says (the assembler writes `li` as `movi` and `term` as `nop.t`; a picked task
starts with a `jmp` to its entry), and a second run reports only its own share."""
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import wafersim as ws
from wafersim import _core

TWO_SOURCE = ["add16", "sub16", "mul16", "and16", "or16", "xor16", "shl16", "shr16", "sar16",
              "faddh", "fsubh", "fmulh", "fmaxh", "fminh"]
ONE_SOURCE = ["mov16", "neg16", "not16", "fabsh", "fnegh"]
ISSUED_AS = {"li": "movi", "term": "nop"}


def issued(lines, tasks):
    """The opcodes `lines` issue, run once each, in tasks started `tasks` times."""
    return dict(Counter(ISSUED_AS.get(line.split()[0], line.split()[0]) for line in lines) +
                Counter({"jmp": tasks}))


@settings(deadline=None, max_examples=200)
@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from(
    [1, 2, 2**31, 2**32 - 1, 2**32, 2**32 + 1, 2**40 + 7, 2**63 - 1])), max_size=12))
def test_counters_are_exact_past_two_to_the_32(adds):
    want = [0] * 4
    for i, n in adds:
        want[i] = (want[i] + n) % 2**64
    assert _core.pe.counters32_sums(adds) == want


@settings(deadline=None, max_examples=300)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 63), st.sampled_from(
    [1, 1, 1, 5, 2**32 - 1, 2**32 + 3, 2**63 - 1])), max_size=40))
def test_counts_by_id_are_exact_before_and_after_a_ninth_id(adds):
    # Up to 40 adds over 64 ids: most lists count more than eight distinct ids, so rows
    # move to the full arrays part-way, with counts and carries on both sides of the move.
    want = [[0] * 64 for _ in range(2)]
    for column, i, n in adds:
        want[column][i] = (want[column][i] + n) % 2**64
    assert [list(col) for col in _core.pe.id_counters_sums(adds)] == want


def test_eight_ids_then_a_ninth_keep_every_count():
    adds = [(c, i, 1 + i + 100 * c) for i in (63, 0, 40, 7, 33, 12, 5, 20) for c in (0, 1)]
    sums = _core.pe.id_counters_sums(adds + [(1, 9, 2**32 + 1), (0, 63, 1)])
    assert sums[0][63] == 65 and sums[1][63] == 164 and sums[1][9] == 2**32 + 1
    assert sum(sums[0]) == sum(1 + i for i in (63, 0, 40, 7, 33, 12, 5, 20)) + 1


def test_a_counter_outside_the_table_is_refused():
    with pytest.raises(ws.ConfigError, match="0..63"):
        _core.pe.id_counters_sums([(0, 64, 1)])
    with pytest.raises(ws.ConfigError, match="column"):
        _core.pe.id_counters_sums([(2, 0, 1)])


def test_twenty_one_opcodes_are_each_counted_as_often_as_they_issue():
    body = ["li r1, 3", "li r2, 5"]
    body += [f"{op} r1, r1, r2" for op in TWO_SOURCE] + [f"{op} r1, r2" for op in ONE_SOURCE]
    body += [f"{op} r1, r1, r2" for op in TWO_SOURCE[:4]]  # the first slots again
    pe = ws.pe.LonePE()
    pe.load(".task t, 20\nt: " + "\n   ".join(body) + "\n   term")
    pe.launch("t")
    s = pe.run()
    want = issued(body + ["term"], tasks=1)
    assert len(want) == 22  # more than the 16 opcode slots
    assert s["instructions"] == want
    assert s["tasks_started"] == {20: 1}


def test_twelve_tasks_are_each_started_and_busy_alike():
    ids = list(range(20, 32))  # more than the eight ids with a row in the record
    tasks = "".join(f".task t{i}, {i}\n" for i in ids)
    code = "".join(f"t{i}: li r1, {i}\n   term\n" for i in ids)
    pe = ws.pe.LonePE()
    pe.load(tasks + code + ".activate " + ", ".join(f"t{i}" for i in ids) + "\n")
    s = pe.run()
    assert s["tasks_started"] == {i: 1 for i in ids}
    busy = s["busy_by_task"]
    assert sorted(busy) == ids and len(set(busy.values())) == 1 and busy[20] > 0
    assert s["instructions"] == issued(["li", "term"] * 12, tasks=12)


def test_wavelets_on_fourteen_colors_are_counted_by_color_and_by_run():
    # Ten colors, then four more: received_by_color past the eight ids with a row, and the
    # second run reports only what came in during it (the wafer subtracts the first run's
    # counts).
    w = ws.Wafer(1, 1)
    w.load("".join(f".task t{c}, {c}\n" for c in range(14)) +
           "".join(f"t{c}: term\n" for c in range(14)))
    for c in range(14):
        w.route(c, [(1, 0), (0, 0)])  # from the south edge's port into the PE
    runs = [{c: 1 + c % 4 for c in range(10)}, {c: 1 + c % 3 for c in range(10, 14)}]
    for sent in runs:
        for c, n in sent.items():
            w.stream((1, 0), c, np.arange(n), dtype="u16")
        s = w.run().pes[(0, 0)]
        assert s["received_by_color"] == sent and s["wavelets_in"] == sum(sent.values())
        assert s["tasks_started"] == sent  # each wavelet starts its color's task
