"""The host's table of which program each PE has (python/wafersim/program_table.py),
against a plain dict of (row, col) -> program driven by the same random loads."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wafersim as ws
from wafersim.errors import ConfigError
from wafersim.layout import Rect
from wafersim.program_table import ProgramTable

ROWS, COLS = 5, 7


class _Prog:  # any object will do: the table keys programs by identity
    def __init__(self, n):
        self.n = n


rects = st.builds(lambda r, c, h, w: Rect(r, c, min(h, ROWS - r), min(w, COLS - c)),
                  st.integers(0, ROWS - 1), st.integers(0, COLS - 1),
                  st.integers(1, ROWS), st.integers(1, COLS))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(rects, st.integers(0, 40), st.booleans()), min_size=1, max_size=40),
       rects)
def test_table_matches_a_dict_of_points(ops, probe):
    progs = [_Prog(i) for i in range(41)]
    table, ref = ProgramTable(ROWS, COLS), {}
    for rect, which, clear in ops:
        ids = rect.ids(COLS)
        if clear:
            table.clear(ids)
            for p in rect.points():
                ref.pop(p, None)
        else:
            table.set(ids, progs[which])
            for p in rect.points():
                ref[p] = progs[which]
    for r in range(ROWS):
        for c in range(COLS):
            assert table.at(r * COLS + c) is ref.get((r, c))
            assert table.has(r * COLS + c) == ((r, c) in ref)
    assert [divmod(int(i), COLS) for i in table.loaded_ids()] == sorted(ref)
    # programs no PE has are forgotten once the list has grown (41 programs, <= 35 PEs)
    assert len(table.programs) <= 2 * len(set(map(id, ref.values()))) + 16
    pts = probe.points()
    missing = [p for p in pts if p not in ref]
    assert table.first_missing(probe) == (missing[0] if missing else None)
    if not missing:
        want = {}
        for k, p in enumerate(pts):
            want.setdefault(id(ref[p]), (ref[p], []))[1].append(k)
        got = table.groups(probe)
        assert [(prog, ks.tolist()) for prog, ks in got] == list(want.values())
    with_even = table.ids_with(lambda prog: prog.n % 2 == 0)
    assert {id(p): ids.tolist() for p, ids in with_even} == {
        id(prog): sorted(r * COLS + c for (r, c), q in ref.items() if q is prog)
        for prog in set(ref.values()) if prog.n % 2 == 0}


MAIN = ".code\n.task main, 40\nmain: term\n"
OTHER = ".code\n.task other, 41\nother: term\n"


def test_wafer_reports_programs_and_missing_pes_through_the_table():
    w = ws.Wafer(3, 4)
    a = w.load(MAIN, rect=(0, 0, 3, 2))
    b = w.load(OTHER, rect=(1, 2, 2, 2))
    assert w.pe(2, 1).program is a and w.pe(1, 3).program is b and w.pe(0, 3).program is None
    assert w.loaded_pes == [(r, c) for r in range(3) for c in range(4)
                            if c < 2 or (r >= 1 and c >= 2)]
    assert w.launch("main") == 6 and w.launch("other") == 4
    with pytest.raises(ConfigError, match=r"PE \(0, 2\) in rect"):
        w.launch("main", rect=(0, 0, 2, 4))
    w.run()
    a2 = w.load(MAIN, rect=(0, 0, 3, 1))  # replaces a in column 0
    assert w.pe(0, 0).program is a2 and w.pe(0, 1).program is a
