"""Bulk vector execution (docs/compute_element.md, "Bulk vector execution"): a vector
operation over memory, registers and immediates alone has its elements computed in one loop,
with exactly the memory, registers, cycles, statistics, traces and profiles of the
element-by-element path. ``bulk_vector=False`` keeps the element path, so each test runs the
same program both ways and compares everything the host can see, also between run slices."""

from dataclasses import replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import wafersim as ws
from ce_bench import doubling_program

NAMES = ("x", "y", "z")


def _plain(v):
    """Comparable with ==: arrays become (dtype, list), containers recurse."""
    if isinstance(v, np.ndarray):
        return (str(v.dtype), v.tolist())
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def _look(pe, names=NAMES) -> dict:
    """Everything the host can read about the CE, as plain comparable data (memory first:
    each read must show the elements done so far by itself)."""
    out = {n: pe.read(n).tobytes() for n in names}
    out.update({"cycle": pe.cycle, "stats": _plain(pe.stats()), "flag": pe.flag,
                "gpr": [pe.gpr(i) for i in range(16)],
                "dsr": {k: [pe.dsr(k, i) for i in range(12)] for k in ("s0", "s1", "d")},
                "wait": pe.describe_wait()})
    return out


def _both(run_one):
    """run_one(bulk_vector) -> list of looks; returns both lists, bulk first."""
    return run_one(True), run_one(False)


def _bench(src, bulk, values=None, **kw):
    pe = ws.pe.LonePE(bulk_vector=bulk, trace=True, profile=True, **kw)
    pe.load(src)
    for name, v in (values or {}).items():
        pe.write(name, v)
    return pe


# A long fp16 fmac (SIMD 4: 50 iterations) and a mov over a shifted copy of its source.
LONG = """
.data
x: .space fp16, 256
y: .space fp16, 256
z: .space fp16, 256
dx: .dsd mem1d, base=x, length=200, stride=2
dy: .dsd mem1d, base=y, length=200, stride=2
dz: .dsd mem1d, base=z, length=200, stride=2
.export x, y, z
.code
.task t, 1
t:    li r2, 0x3C00
      lds0wds S0[0], dx
      lds1wds S1[0], dy
      lddwds D[0], dz
      fmach D[0], S0[0], S1[0]
      faddh D[0], S0[0], S1[0]
      term
"""


def _values(seed=0):
    rng = np.random.default_rng(seed)
    return {n: rng.uniform(-2, 2, 256).astype(np.float16) for n in NAMES}


def _looks(pe, step, limit):
    """What the host sees after every ``step`` cycles until the PE is idle (or ``limit``)."""
    looks = []
    while not pe.idle and pe.cycle < limit:
        pe.run(step)
        looks.append(_look(pe))
    return looks


def test_long_operation_gives_the_same_results_cycles_and_statistics_both_ways():
    def one(bulk):
        pe = _bench(LONG, bulk, _values())
        pe.launch("t")
        pe.run()
        return [_look(pe)]

    bulk, element = _both(one)
    assert bulk == element
    # Not vacuous: the operation ran and wrote its result.
    x, y = _values()["x"], _values()["y"]
    assert np.array_equal(np.frombuffer(bulk[0]["z"], np.float16)[:200], (x + y)[:200])


def test_run_sliced_at_every_cycle_of_a_bulk_operation_shows_each_cycles_elements():
    """run(1) again and again: after every cycle the host sees exactly the elements the
    element path has written by then (a bulk operation catches up when looked at)."""

    def one(bulk):
        pe = _bench(LONG, bulk, _values(1))
        pe.launch("t")
        return _looks(pe, 1, 400)

    bulk, element = _both(one)
    assert len(bulk) == len(element) > 100
    assert bulk == element
    # The destination fills up cycle by cycle, four elements per iteration.
    start = _values(1)["z"].view(np.uint16)
    changed = {int(np.count_nonzero(np.frombuffer(k["z"], np.uint16) != start)) for k in bulk}
    assert set(range(4, 200, 4)) <= changed


@settings(deadline=None, max_examples=15)
@given(st.integers(1, 9))
def test_runs_sliced_every_k_cycles_match_the_element_path(k):
    def one(bulk):
        pe = _bench(LONG, bulk, _values(k))
        pe.launch("t")
        return _looks(pe, k, 400)

    bulk, element = _both(one)
    assert bulk == element


def test_destination_overlapping_its_source_is_written_in_element_order():
    """z[i+1] = z[i] + 1 over an overlapping window: each iteration reads its four lanes
    before writing them, so values propagate from one iteration to the next but not
    within one; both paths agree with that model."""
    src = """
    .data
    x: .space i16, 64
    y: .space i16, 64
    z: .space i16, 64
    a: .dsd mem1d, base=z, length=40, stride=2
    b: .dsd mem1d, base=z+2, length=40, stride=2
    one: .dsd mem1d, base=x, length=40, stride=2
    .export x, y, z
    .code
    .task t, 1
    t: lds0wds S0[0], a
       lds1wds S1[0], one
       lddwds D[0], b
       add16.t D[0], S0[0], S1[0]
    """
    vals = {"x": np.ones(64, np.int16), "y": np.zeros(64, np.int16),
            "z": np.arange(64, dtype=np.int16) * 10}

    def one(bulk):
        pe = _bench(src, bulk, vals)
        pe.launch("t")
        pe.run()
        return [_look(pe)]

    bulk, element = _both(one)
    assert bulk == element
    z = vals["z"].copy()
    width = 40 // bulk[0]["stats"]["iterations"]  # the opcode's SIMD width
    assert width > 1
    for first in range(0, 40, width):
        lanes = z[first:first + width] + 1
        z[first + 1:first + 1 + width] = lanes
    assert np.array_equal(np.frombuffer(bulk[0]["z"], np.int16), z)


def test_wavelets_arriving_during_a_bulk_operation_queue_and_start_their_task_after():
    """Wavelets for another task's color arrive while the long operation runs: they are
    queued, counted and backpressured the same way, and their task starts at the same cycle."""
    src = LONG.replace(".task t, 1", ".task t, 1\n.task other, 5").replace(
        "      term\n", "      term\nother: addi r9, 1\n      term\n")

    def one(bulk):
        pe = _bench(src, bulk, _values(2))
        pe.inject_wavelets(5, np.arange(12, dtype=np.uint64), start=20, interval=3)
        pe.launch("t")
        return _looks(pe, 17, 600)

    bulk, element = _both(one)
    assert bulk == element
    assert bulk[-1]["stats"]["tasks_started"][5] == 12 and bulk[-1]["gpr"][9] == 12


def test_a_suspended_microthread_keeps_the_operation_on_the_element_path_with_equal_results():
    """A microthreaded fabric input waits (suspended) while the task runs a memory
    operation; wavelets for it arrive mid-operation, so the microthread interleaves with
    the operation's iterations. Results and cycles match the element path."""
    src = LONG.replace(
        "dz: .dsd mem1d", "din: .dsd fabric_in, length=8, sw=1, ue=1, sc=1, utid=3, ac=50\n"
        "buf: .dsd mem1d, base=y+400, length=8, stride=2\ndz: .dsd mem1d").replace(
        ".task t, 1", ".task t, 1\n.task done, 50").replace(
        "t:    li r2, 0x3C00",
        "t:    block 3\n      lds1wds S1[1], din\n      lddwds D[1], buf\n"
        "      mov16 D[1], S1[1]\n      li r2, 0x3C00").replace(
        "      term\n", "      term\ndone: li r8, 7\n      term\n")

    def one(bulk):
        pe = _bench(src, bulk, _values(3))
        pe.inject(3, np.arange(8, dtype=np.float16), start=30)
        pe.launch("t")
        return _looks(pe, 11, 600)

    bulk, element = _both(one)
    assert bulk == element
    assert bulk[-1]["gpr"][8] == 7
    assert np.array_equal(np.frombuffer(bulk[-1]["y"], np.float16)[200:208], np.arange(8))


def test_host_writes_during_a_bulk_operation_reach_the_iterations_after_them():
    """Between slices the host rewrites source elements not yet read and the index
    register a WLI destination uses: the remaining iterations see the new values."""
    src = LONG.replace("dz: .dsd mem1d, base=z, length=200, stride=2",
                       "dz: .dsd mem1d, base=z, length=100, stride=2, wli=1").replace(
        "length=200", "length=100")

    def one(bulk):
        pe = _bench(src, bulk, _values(4))
        pe.set_gpr(4, 0)
        pe.launch("t")
        looks = []
        pe.run(12)
        looks.append(_look(pe))
        pe.write("x", np.full(256, 3, np.float16))
        pe.set_gpr(4, 100)  # the destination moves on by 50 elements from here
        pe.run(9)
        looks.append(_look(pe))
        pe.run()
        looks.append(_look(pe))
        return looks

    bulk, element = _both(one)
    assert bulk == element
    z = np.frombuffer(bulk[-1]["z"], np.float16)
    assert np.count_nonzero(z[100:150] != 0) > 0


def test_register_destinations_immediates_and_memory_at_gpr6_match_the_element_path():
    """An fp32 sum into a register pair (one element per iteration), an immediate source,
    memory at GPR6, a 4D source and a comparison: every kind of operand bulk execution
    takes."""
    src = """
    .data
    x: .space fp32, 64
    y: .space fp32, 64
    z: .space fp32, 64
    xd: .xdsd mem4d, dims=(4, 8), strides=(32, unit)
    vx: .dsd mem1d, base=x, length=32, stride=4
    v4: .dsd mem4d, base=y, dims=(4, 8), xdsr=3
    vz: .dsd mem1d, base=z, length=32, stride=4
    .export x, y, z
    .code
    .task t, 1
    t: ldxds X[3], xd
       lds1wds S1[0], vx
       li r10, 0
       li r11, 0
       fadds r10, r10, S1[0]
       lds0wds S0[1], v4
       lddwds D[1], vz
       fmuls D[1], S0[1], #2.0
       li r6, 8
       lds0wds S0[2], vx
       lddwds D[2], vz
       fadds D[2], S0[2], [r6]
       lds0wds S0[0], vx
       lds1wds S1[0], vz
       flts S0[0], S1[0]
       term
    """

    def one(bulk):
        pe = _bench(src, bulk, {n: np.random.default_rng(5).uniform(-1, 1, 64).astype(np.float32)
                                for n in NAMES})
        pe.launch("t")
        return _looks(pe, 5, 1000)

    bulk, element = _both(one)
    assert bulk == element
    assert bulk[-1]["gpr"][10] != 0 or bulk[-1]["gpr"][11] != 0


# ---- random programs ------------------------------------------------------------------------

OPS = {"fp16": ["faddh", "fsubh", "fmulh", "fmach", "fmaxh", "fminh", "fnegh", "fabsh",
                "reluh", "mov16", "fleh", "add16", "tanhh"],
       "fp32": ["fadds", "fsubs", "fmuls", "fmacs", "fmaxs", "fmins", "fnegs", "fabss",
                "relus", "mov32", "flts"]}


@st.composite
def programs(draw):
    dtype = draw(st.sampled_from(["fp16", "fp32"]))
    es = 2 if dtype == "fp16" else 4
    n = draw(st.integers(1, 60))
    lines = [".data"] + [f"{v}: .space {dtype}, 200" for v in NAMES]
    for k in range(4):
        base = draw(st.sampled_from(NAMES))
        stride = es * draw(st.sampled_from([1, 1, 2, -1, 0]))
        off = draw(st.integers(0, 30)) * es + (n - 1) * es * (stride < 0)
        lines.append(f"d{k}: .dsd mem1d, base={base}+{off}, length={n}, stride={stride}")
    mode = draw(st.integers(0, 5))
    lines += [".export x, y, z", ".code", ".task t, 1", f"t: li r9, {mode | (3 << 7)}",
              "  setfpc r9", f"  li r2, {draw(st.integers(0, 0xFFFF))}",
              f"  li r3, {draw(st.integers(0, 0xFFFF))}"]
    for k in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(OPS[dtype]))
        d, s0, s1 = (f"d{draw(st.integers(0, 3))}" for _ in range(3))
        lines += [f"  lds0wds S0[{k % 3}], {s0}", f"  lds1wds S1[{k % 3}], {s1}",
                  f"  lddwds D[{k % 3}], {d}"]
        if op.startswith(("fneg", "fabs", "relu", "mov", "tanh")):
            lines.append(f"  {op} D[{k % 3}], S1[{k % 3}]")
        elif op.startswith(("fle", "flt")):
            lines.append(f"  {op} S0[{k % 3}], S1[{k % 3}]")
        else:
            lines.append(f"  {op} D[{k % 3}], S0[{k % 3}], S1[{k % 3}]")
    lines.append("  term")
    return dtype, "\n".join(lines)


@settings(deadline=None, max_examples=40)
@given(programs(), st.integers(0, 2**32 - 1), st.integers(0, 12))
def test_random_memory_programs_match_the_element_path(prog, seed, step):
    """Random operations over overlapping, reversed and stride-0 memory vectors, in every
    rounding mode (stochastic included), run whole or in slices of `step` cycles."""
    dtype, src = prog
    t = np.float16 if dtype == "fp16" else np.float32
    vals = np.random.default_rng(seed).standard_normal((3, 200)).astype(t)

    def one(bulk):
        pe = _bench(src, bulk, dict(zip(NAMES, vals)), rng_seed=seed)
        pe.launch("t")
        looks = []
        try:
            while not pe.idle and pe.cycle < 3000:
                pe.run(step or None)
                looks.append(_look(pe))
        except ws.WaferError as e:
            looks.append(repr(e))
        return looks

    bulk, element = _both(one)
    assert bulk == element


def test_bulk_vector_is_a_wafer_ce_option():
    assert not ws.Wafer(1, 1, ce={"bulk_vector": False})._core.ce_config.bulk_vector
    assert ws.Wafer(1, 1)._core.ce_config.bulk_vector
    assert not ws.pe.LonePE(bulk_vector=False).config.bulk_vector


def test_a_wafer_kernel_gives_the_same_results_and_cycles_with_and_without_bulk_vector():
    """A row of PEs each adding two memory vectors and sending the sum on (fabric
    operands go element by element, the memory operation in bulk)."""
    src = """
    .data
    x: .space fp16, 128
    y: .space fp16, 128
    vx: .dsd mem1d, base=x, length=128, stride=2
    vy: .dsd mem1d, base=y, length=128, stride=2
    .export x, y
    .code
    .task t, 1
    t: lds0wds S0[0], vx
       lds1wds S1[0], vy
       lddwds D[0], vy
       faddh.t D[0], S0[0], S1[0]
    """

    def one(bulk):
        w = ws.Wafer(2, 3, ce={"bulk_vector": bulk, "trace": True})
        rng = np.random.default_rng(6)
        out = []
        for r in range(2):
            for c in range(3):
                p = w.pe(r, c)
                p.load(src)
                p.write("x", rng.uniform(-1, 1, 128).astype(np.float16))
                p.write("y", rng.uniform(-1, 1, 128).astype(np.float16))
                p.launch("t")
        res = w.run(max_cycles=5)
        out.append(repr(replace(res, slept_cycles=0)))  # (sleeping is simulator work)
        res = w.run()
        out.append(repr(replace(res, slept_cycles=0)))  # (sleeping is simulator work)
        for r in range(2):
            for c in range(3):
                out.append((w.pe(r, c).read("y").tobytes(), _plain(w.pe(r, c).stats())))
        return out

    bulk, element = _both(one)
    assert bulk == element


def test_a_long_bulk_operation_counts_as_progress_for_the_watchdog():
    """2000 iterations of one operation with a 50-cycle watchdog, on the lone PE and on a
    wafer: each counted cycle is progress, as each iteration is on the element path."""
    src = doubling_program(8000)
    x = np.full(8000, 0.5, np.float16)
    pe = ws.pe.LonePE(memory_bytes=48 * 1024)
    pe.load(src)
    pe.write("x", x)
    pe.launch("t")
    pe.run(watchdog=50)
    assert np.array_equal(pe.read("x"), x * 2) and pe.stats()["iterations"] == 2000
    w = ws.Wafer(1, 1, watchdog=50)
    w.pe(0, 0).load(src)
    w.pe(0, 0).write("x", x)
    w.pe(0, 0).launch("t")
    res = w.run()
    assert res.cycles > 2000 and np.array_equal(w.pe(0, 0).read("x"), x * 2)


def test_wavelets_leave_the_output_queue_at_the_same_cycles_during_a_bulk_operation():
    """Four wavelets wait in an output queue (the sink refuses their color) while the long
    operation runs; the host lets them go mid-operation. They leave one per cycle at the
    same cycles either way (the bench runs no cycle at once while a wavelet waits)."""
    src = LONG.replace("dz: .dsd mem1d", "out: .dsd fabric_out, color=9, length=8, sw=2\n"
                       "d8: .dsd mem1d, base=y, length=8, stride=2\ndz: .dsd mem1d").replace(
        "t:    li r2, 0x3C00", "t:    lds1wds S1[1], d8\n      lddwds D[1], out\n"
        "      mov16 D[1], S1[1]\n      li r2, 0x3C00")

    def one(bulk):
        pe = _bench(src, bulk, _values(7))
        pe.stall_output(9)
        pe.launch("t")
        pe.run(20)
        looks = [_look(pe)]
        pe.stall_output(9, False)
        pe.run()
        looks.append(_look(pe))
        looks.append(_plain(pe.output(9)))
        return looks

    bulk, element = _both(one)
    assert bulk == element
    assert bulk[-1]["cycle"][1] == [20, 21, 22, 23]  # while the fmac runs (to cycle 60 or so)
    assert 0 < bulk[0]["stats"]["iterations"] < 40
