"""The math library as kernel writers use it: data and code that paste into any program,
several calls side by side, registers clobbered only as named, cycles as counted, special
values as IEEE 754 gives them, and clear errors for bad arguments."""

import re

import numpy as np
import pytest

import wafersim as ws
from wafersim.asm import mathlib

F32, F16 = np.float32, np.float16
ROUTINES = mathlib.ROUTINES
# (dtype, compute): fp32; fp16 in fp16 arithmetic; fp16 through fp32
FORMS = [("fp32", "fp32"), ("fp16", "fp16"), ("fp16", "fp32")]
NAN, INF = float("nan"), float("inf")


def exact(name, x):
    with np.errstate(all="ignore"):
        xd = np.asarray(x, dtype=np.float64)
        return {"exp": np.exp(xd), "reciprocal": 1.0 / xd, "rsqrt": 1.0 / np.sqrt(xd),
                "sqrt": np.sqrt(xd),
                "ln": np.log(xd)}[name]


def program(calls, vectors):
    """A program with ``vectors`` (label -> (dtype, n)) and the routines in ``calls``,
    run one after the other in task main."""
    data = [f"{lab}: .space {t}, {n}" for lab, (t, n) in vectors.items()]
    lines = [".data", *data]
    for r in calls:
        lines += r.data
    lines += [".export " + ", ".join(vectors), ".code", ".task main, 40", "main:"]
    for r in calls:
        lines += r.code
    lines += ["        term"]
    return "\n".join(lines) + "\n"


def run(source, inputs):
    pe = ws.pe.LonePE()
    prog = pe.load(ws.asm.assemble(source))
    for lab, values in inputs.items():
        pe.write_memory(prog.symbols[lab].address, values)
    pe.launch("main")
    pe.run()
    return pe, prog


def read(pe, prog, label, dtype, n):
    return pe.read_memory(prog.symbols[label].address, n * np.dtype(dtype).itemsize).view(dtype)


def same_bits(a, b):
    ut = np.uint16 if a.dtype == np.float16 else np.uint32
    return np.array_equal(a.view(ut), b.view(ut))


# ---- the interface --------------------------------------------------------------------------

@pytest.mark.parametrize("name", ROUTINES)
@pytest.mark.parametrize("dtype,compute", FORMS)
def test_data_is_prefixed_and_code_is_straight_line(name, dtype, compute):
    r = ROUTINES[name](dtype, n=6, src="x", dst="y", prefix="q7", dsrs=(3, 5), gprs=("r8", "r9"),
                       compute=compute)
    for line in r.data:
        label = line.split(":")[0].strip()
        assert label == "" or label.startswith("q7_"), line
    code = [c.split(";")[0].strip() for c in r.code]
    code = [c for c in code if c]
    for c in code:
        assert not re.match(r"^[A-Za-z_][\w.]*:", c), f"label in code: {c}"
        mnemonic = c.split()[0]
        assert mnemonic not in ("term", "bt", "bf", "jmp", "jr", "setfpc", ".task"), c
        assert not mnemonic.endswith(".t"), c
        assert {int(k) for k in re.findall(r"(?:S0|S1|D)\[(\d+)\]", c)} <= {3, 5}, c
        assert {int(k) for k in re.findall(r"\br(\d+)\b", c)} <= {8, 9}, c
    assert r.gprs == ("r8", "r9") and r.dsrs == (3, 5)
    assert r.compute == compute and r.n == 6 and r.cycles > 6


@pytest.mark.parametrize("name", ROUTINES)
def test_only_named_registers_and_descriptor_registers_change(name):
    """Every other GPR, every other S0/S1/D register and the flag keep their values."""
    dsrs, gprs = (2, 7), ("r4", "r5")
    r = ROUTINES[name]("fp32", n=5, src="x", dst="y", prefix="m", dsrs=dsrs, gprs=gprs)
    prelude = ["dd: .dsd mem1d, base=4000, length=3, stride=4"]   # the same in both
    loads = [f"        {op} {reg}[{k}], dd" for k in range(12) if k not in dsrs
             for op, reg in (("lds0wds", "S0"), ("lds1wds", "S1"), ("lddwds", "D"))]
    loads.append("        eq16 r12, r12")                 # sets the flag
    states = []
    for with_routine in (False, True):
        calls = [r] if with_routine else []
        src = program(calls, {"x": ("fp32", 5), "y": ("fp32", 5)})
        src = src.replace(".data\n", ".data\n" + "\n".join(prelude) + "\n", 1)
        src = src.replace("main:\n", "main:\n" + "\n".join(loads) + "\n", 1)
        pe = ws.pe.LonePE()
        prog = pe.load(ws.asm.assemble(src))
        for g in range(16):
            pe.set_gpr(g, 0x1000 + 17 * g)
        pe.write_memory(prog.symbols["x"].address, np.array([1, 2, 3, 4, 5], F32))
        pe.launch("main")
        pe.run()
        states.append(({g: pe.gpr(g) for g in range(16) if f"r{g}" not in gprs},
                       {(k, n): pe.dsr(k, n) for k in ("s0", "s1", "d") for n in range(12)
                        if n not in dsrs}, pe.flag))
    assert states[0] == states[1]
    assert states[1][2] is True


@pytest.mark.parametrize("name", ROUTINES)
@pytest.mark.parametrize("dtype,compute", FORMS)
@pytest.mark.parametrize("n", [1, 5, 64])
def test_measured_cycles_equal_the_count(name, dtype, compute, n):
    """Routine.cycles (counted) equals the cycle counter's difference on a lone PE."""
    x = np.linspace(0.25, 3.0, n).astype(F32 if dtype == "fp32" else F16)
    got = mathlib.run_on_pe(ROUTINES[name], dtype, x, compute=compute)
    assert got.cycles == (got.routine.cycles,)


@pytest.mark.parametrize("name", ROUTINES)
def test_fp16_arithmetic_does_four_elements_per_cycle_0502(name):
    """In fp16 arithmetic every vector operation is 16-bit, 4 elements per cycle [0502]:
    4 elements cost what 1 does, 8 one cycle per operation more. In fp32 arithmetic the
    16-bit operations on the words of fp32 elements still do 4 per cycle (5 and 8 elements
    both take 2 iterations), the fp32 ones 1."""
    c = {n: ROUTINES[name]("fp16", n=n, src="a", dst="b", prefix="p", compute="fp16").cycles
         for n in (1, 4, 8)}
    ops = len(ROUTINES[name]("fp16", n=1, src="a", dst="b", prefix="p", compute="fp16").ops)
    assert c[1] == c[4] and c[8] - c[4] == ops
    r5 = ROUTINES[name]("fp32", n=5, src="a", dst="b", prefix="p")
    r8 = ROUTINES[name]("fp32", n=8, src="a", dst="b", prefix="p")
    fp32_ops = sum(1 for op in r5.ops if op[0].endswith("s"))
    assert 0 < fp32_ops < len(r5.ops)
    assert r8.cycles - r5.cycles == 3 * fp32_ops


def per_element(name, dtype, compute):
    r = {n: ROUTINES[name](dtype, n=n, src="a", dst="b", prefix="p", compute=compute)
         for n in (64, 1024)}
    return (r[1024].cycles - r[64].cycles) / 960


@pytest.mark.parametrize("name", ROUTINES)
def test_docstring_costs_are_current(name):
    """The cycles per element each function's docstring states are what it costs now."""
    doc = " ".join(ROUTINES[name].__doc__.split())
    stated = re.search(r"Cycles per element: ([\d.]+) \(fp32\), ([\d.]+) \(fp16 computed in "
                       r"fp32\), ([\d.]+) \(fp16 in fp16\), plus (\d+) to (\d+)", doc)
    assert stated, doc
    got = [per_element(name, "fp32", "fp32"), per_element(name, "fp16", "fp32"),
           per_element(name, "fp16", "fp16")]
    assert [float(v) for v in stated.groups()[:3]] == got
    fixed = [ROUTINES[name](d, n=1, src="a", dst="b", prefix="p", compute=c).cycles
             for d, c in FORMS]
    assert (int(stated.group(4)), int(stated.group(5))) == (min(fixed), max(fixed))


def test_docs_table_cycles_are_current():
    """docs/numerics.md's table: ops (words), cycles per element, cycles at n = 1 and
    scratch bytes per element, as the routines have them now."""
    from pathlib import Path
    text = (Path(__file__).parents[1] / "docs" / "numerics.md").read_text()
    rows = re.findall(r"^\| (exp|reciprocal|rsqrt|sqrt|ln) \| (fp32|fp16 \(fp32\)|fp16 \(fp16\)) \| "
                      r"(\d+) \((\d+)\) \| ([\d.]+) \| (\d+) \| [^|]+\| [^|]+\| (\d+) \|", text, re.M)
    assert len(rows) == 15
    for name, form, ops, words, per, n1, scratch in rows:
        dtype, compute = {"fp32": ("fp32", "fp32"), "fp16 (fp32)": ("fp16", "fp32"),
                          "fp16 (fp16)": ("fp16", "fp16")}[form]
        r1 = ROUTINES[name](dtype, n=1, src="a", dst="b", prefix="p", compute=compute)
        assert (int(ops), int(words), int(n1)) == (len(r1.ops), r1.cycles, r1.cycles), name
        assert float(per) == per_element(name, dtype, compute), (name, form)
        assert int(scratch) == r1.scratch_bytes, (name, form)


@pytest.mark.parametrize("dsrs,gprs", [((0,), ("r14", "r15")),
                                       ((9, 10, 11), ("r0", "r1", "r5", "r6")),
                                       (tuple(range(12)), tuple(f"r{i}" for i in range(10)))])
@pytest.mark.parametrize("name", ROUTINES)
def test_any_registers_give_the_same_bits(name, dsrs, gprs):
    """One DSR number or twelve, one register pair or ten registers: the same results
    (only the descriptor loads and constant loads differ)."""
    x = np.array([0.3, 2.0, 7.5, 1e-3, 65.0, -1.0, 0.0, np.inf], F32)
    r = ROUTINES[name]("fp32", n=x.size, src="x", dst="y", prefix="g", dsrs=dsrs, gprs=gprs)
    pe, prog = run(program([r], {"x": ("fp32", x.size), "y": ("fp32", x.size)}), {"x": x})
    assert same_bits(read(pe, prog, "y", F32, x.size), r.reference(x))
    base = ROUTINES[name]("fp32", n=x.size, src="x", dst="y", prefix="g")
    assert abs(r.cycles - base.cycles) < 40


# ---- in programs ------------------------------------------------------------------------------

def test_several_calls_coexist_in_one_program():
    """exp then reciprocal on its result (a softmax's two steps), ln on fp16 data, and a
    second exp under another prefix, in one task: each equals its numpy reference."""
    n = 7
    e0 = mathlib.exp("fp32", n=n, src="z", dst="ez", prefix="e0")
    r0 = mathlib.reciprocal("fp32", n=n, src="ez", dst="rz", prefix="r0")
    l0 = mathlib.ln("fp16", n=n, src="h", dst="lh", prefix="l0")
    e1 = mathlib.exp("fp32", n=n, src="w", dst="w", prefix="e1")
    vectors = {"z": ("fp32", n), "ez": ("fp32", n), "rz": ("fp32", n), "w": ("fp32", n),
               "h": ("fp16", n), "lh": ("fp16", n)}
    z = np.array([-3, -1, 0, 0.5, 1, 2, 10], F32)
    h = np.array([0.1, 0.5, 1, 2, 3, 100, 60000], F16)
    w = np.array([-20, -2, 0, 1e-3, 3, 7, 80], F32)
    pe, prog = run(program([e0, r0, l0, e1], vectors), {"z": z, "h": h, "w": w})
    ez = read(pe, prog, "ez", F32, n)
    assert same_bits(ez, e0.reference(z))
    assert same_bits(read(pe, prog, "rz", F32, n), r0.reference(ez))
    assert same_bits(read(pe, prog, "lh", F16, n), l0.reference(h))
    assert same_bits(read(pe, prog, "w", F32, n), e1.reference(w))
    np.testing.assert_allclose(read(pe, prog, "rz", F32, n), np.exp(-z.astype(float)),
                               rtol=3e-7)
    # the cycles of the task: the routines' counts plus the term
    assert pe.stats()["busy_cycles"] >= e0.cycles + r0.cycles + l0.cycles + e1.cycles


@pytest.mark.parametrize("name", ROUTINES)
@pytest.mark.parametrize("dtype,compute", FORMS)
def test_dst_may_equal_src(name, dtype, compute):
    npdt = F32 if dtype == "fp32" else F16
    x = np.array([0.3, 1.0, 2.5, -1.0, 0.0, 7.0, 1e-3, np.inf, np.nan], npdt)
    apart = mathlib.run_on_pe(ROUTINES[name], dtype, x, compute=compute)
    inplace = mathlib.run_on_pe(ROUTINES[name], dtype, x, compute=compute, in_place=True)
    assert same_bits(apart.values, inplace.values)
    assert inplace.routine.src == inplace.routine.dst


@pytest.mark.parametrize("name", ROUTINES)
@pytest.mark.parametrize("dtype,compute", FORMS)
@pytest.mark.parametrize("n", [1, 3, 5])
def test_short_vectors_and_lengths_not_a_multiple_of_four(name, dtype, compute, n):
    npdt = F32 if dtype == "fp32" else F16
    x = np.array([1.5, 0.7, 3.25, 0.01, 9.0][:n], npdt)
    got = mathlib.run_on_pe(ROUTINES[name], dtype, x, compute=compute).values
    np.testing.assert_allclose(got.astype(float), exact(name, x),
                               rtol=2e-7 if dtype == "fp32" else 1e-3)


@pytest.mark.parametrize("name", ROUTINES)
def test_a_second_run_on_the_same_pe_gives_the_same_bits(name):
    """Nothing a run leaves in the routine's scratch changes the next run's results."""
    r = ROUTINES[name]("fp32", n=4, src="x", dst="y", prefix="s")
    pe = ws.pe.LonePE()
    prog = pe.load(ws.asm.assemble(program([r], {"x": ("fp32", 4), "y": ("fp32", 4)})))
    results = []
    for x in ([0.5, 2, 3, 1e-40], [7, 0.1, np.inf, -0.0], [0.5, 2, 3, 1e-40]):
        pe.write_memory(prog.symbols["x"].address, np.array(x, F32))
        pe.launch("main")
        pe.run()
        results.append(read(pe, prog, "y", F32, 4).copy())
    assert same_bits(results[0], results[2])
    assert same_bits(results[0], r.reference(np.array([0.5, 2, 3, 1e-40], F32)))


# ---- special values ---------------------------------------------------------------------------

TINY32 = float(np.finfo(F32).smallest_subnormal)
MAX32 = float(np.finfo(F32).max)
SPECIALS = {
    # input: expected result (IEEE 754; NaN: any NaN)
    "exp": [(0.0, 1.0), (-0.0, 1.0), (INF, INF), (-INF, 0.0), (NAN, NAN), (TINY32, 1.0),
            (-TINY32, 1.0), (89.0, INF), (1000.0, INF), (-104.0, 0.0), (-1e30, 0.0)],
    "reciprocal": [(0.0, INF), (-0.0, -INF), (INF, 0.0), (-INF, -0.0), (NAN, NAN),
                   (TINY32, INF), (-TINY32, -INF), (2.0, 0.5), (-4.0, -0.25)],
    "rsqrt": [(0.0, INF), (-0.0, -INF), (INF, 0.0), (-INF, NAN), (-1.0, NAN), (-TINY32, NAN),
              (NAN, NAN), (4.0, 0.5), (0.25, 2.0)],
    "sqrt": [(0.0, 0.0), (-0.0, -0.0), (INF, INF), (-INF, NAN), (-1.0, NAN), (-TINY32, NAN),
             (NAN, NAN), (4.0, 2.0), (0.25, 0.5), (TINY32, None), (MAX32, None)],
    "ln": [(0.0, -INF), (-0.0, -INF), (INF, INF), (-INF, NAN), (-1.0, NAN), (-TINY32, NAN),
           (NAN, NAN), (1.0, 0.0), (TINY32, None), (MAX32, None)],
}


@pytest.mark.parametrize("name", ROUTINES)
@pytest.mark.parametrize("dtype,compute", FORMS)
def test_special_values(name, dtype, compute):
    """Zeros, infinities, NaN, negative inputs of rsqrt and ln, overflow and underflow,
    subnormal inputs: the IEEE result (ln of the extremes: the float64 value, rounded)."""
    npdt = F32 if dtype == "fp32" else F16
    cases = [(x, y) for x, y in SPECIALS[name]
             if dtype == "fp32" or abs(x) not in (TINY32, MAX32, 1e30, 1000.0)]
    x = np.array([c[0] for c in cases], npdt)
    got = mathlib.run_on_pe(ROUTINES[name], dtype, x, compute=compute).values
    for xi, (_, want), g in zip(x, cases, got):
        if want is None:
            want = float(npdt(exact(name, float(xi))))
        if np.isnan(want):
            assert np.isnan(g), f"{name}({xi}) = {g}, expected NaN"
        else:
            assert g == want and np.signbit(g) == np.signbit(want), \
                f"{name}({xi!r}) = {g!r}, expected {want!r}"


@pytest.mark.parametrize("dtype,compute", FORMS)
def test_powers_of_two_are_exact(dtype, compute):
    """1/2^k, 1/sqrt(4^k), sqrt(4^k) and ln(1) are exact (the reductions split off the
    exponent exactly and the Newton-Raphson steps land on 1/m = 1); exp(0) = 1."""
    npdt = F32 if dtype == "fp32" else F16
    fi = np.finfo(npdt)
    k = np.arange(fi.minexp, fi.maxexp)                 # normal powers of two
    x = np.ldexp(1.0, k).astype(npdt)
    got = mathlib.run_on_pe(mathlib.reciprocal, dtype, x, compute=compute).values
    np.testing.assert_array_equal(got, (1.0 / x.astype(np.float64)).astype(npdt))
    x4 = np.ldexp(1.0, k[k % 2 == 0]).astype(npdt)
    got = mathlib.run_on_pe(mathlib.rsqrt, dtype, x4, compute=compute).values
    np.testing.assert_array_equal(got, (1.0 / np.sqrt(x4.astype(np.float64))).astype(npdt))
    got = mathlib.run_on_pe(mathlib.sqrt, dtype, x4, compute=compute).values
    np.testing.assert_array_equal(got, np.sqrt(x4.astype(np.float64)).astype(npdt))
    one = np.array([1.0, 0.0], npdt)
    assert mathlib.run_on_pe(mathlib.ln, dtype, one[:1], compute=compute).values[0] == 0.0
    assert mathlib.run_on_pe(mathlib.exp, dtype, one[1:], compute=compute).values[0] == 1.0


def test_nan_payloads_and_signalling_nans_give_nan():
    """NaNs whose payload lies only in the low 16 mantissa bits (a signalling NaN's usual
    form) are NaNs too: the routines look at both words of an fp32 element."""
    bits = np.array([0x7F800001, 0xFF800001, 0x7FA00000, 0x7FC00000, 0xFFFFFFFF], np.uint32)
    x = bits.view(F32)
    for name, fn in ROUTINES.items():
        assert np.isnan(mathlib.run_on_pe(fn, "fp32", x).values).all(), name
    x16 = np.array([0x7C01, 0xFC01, 0x7E00, 0x7FFF], np.uint16).view(F16)
    for name, fn in ROUTINES.items():
        for compute in ("fp16", "fp32"):
            assert np.isnan(mathlib.run_on_pe(fn, "fp16", x16, compute=compute).values).all()


def test_exp_overflow_and_underflow_edges():
    """exp rounds once near fp32's ends: the largest finite result, inf past it, the
    smallest subnormal and 0 below half of it."""
    x = np.array([88.72283, 88.7229, -87.33654, -103.27893, -103.9721, -103.97208], F32)
    got = mathlib.run_on_pe(mathlib.exp, "fp32", x).values
    want = np.exp(x.astype(np.float64))
    assert np.isfinite(got[0]) and abs(got[0] / want[0] - 1) < 2e-7
    assert got[1] == INF
    assert got[2] == pytest.approx(want[2], rel=2e-7)
    assert 0 < got[3] < float(np.finfo(F32).tiny)           # subnormal result
    assert got[4] == 0.0 and got[5] == TINY32


@pytest.mark.parametrize("name", ROUTINES)
def test_runs_in_the_default_fp_control_mode_and_leaves_it(name):
    """The routines assume the FP control register's default (round to nearest even,
    subnormals kept, no saturation) and never write it (no setfpc)."""
    r = ROUTINES[name]("fp32", n=3, src="x", dst="y", prefix="f")
    assert not any("setfpc" in line for line in r.code)
    x = np.array([0.5, 3.0, 1e-42], F32)
    pe, prog = run(program([r], {"x": ("fp32", 3), "y": ("fp32", 3)}), {"x": x})
    ctl = pe._ce.fp_control
    assert (str(ctl.mode), str(ctl.subnormals), ctl.max_sat, ctl.min_sat) == \
        ("RoundingMode.nearest_even", "Subnormals.keep", False, False)
    assert same_bits(read(pe, prog, "y", F32, 3), r.reference(x))


# ---- bad arguments -----------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,match", [
    (dict(dtype="bf16"), "dtype must be 'fp16' or 'fp32'"),
    (dict(n=0), "n must be an int in 1..32767"),
    (dict(n=40000), "n must be an int in 1..32767"),
    (dict(n=2.0), "n must be an int"),
    (dict(src="1x"), "src must be an assembly label"),
    (dict(prefix="a b"), "prefix must be an assembly label"),
    (dict(gprs=("r0",)), "even/odd pair"),
    (dict(gprs=("r1", "r2")), "even/odd pair"),
    (dict(gprs=("r0", "r0", "r1")), "names a register twice"),
    (dict(gprs=("r0", "r16")), "'r16' is not a register"),
    (dict(gprs="r0"), "sequence of register names"),
    (dict(dsrs=(12,)), "12 is not a descriptor-register number"),
    (dict(dsrs=()), "at least one"),
    (dict(compute="fp16"), "compute must be 'fp32' for fp32 data"),
    (dict(dtype="fp16", compute="bf16"), "compute must be 'fp16' or 'fp32'"),
    (dict(n=8000), "bytes of scratch"),
])
def test_bad_arguments_raise_config_error(kwargs, match):
    args = dict(dtype="fp32", n=4, src="x", dst="y", prefix="p")
    args.update(kwargs)
    dtype = args.pop("dtype")
    with pytest.raises(ws.ConfigError, match=match):
        mathlib.reciprocal(dtype, **args)


def test_fp16_defaults_to_fp32_arithmetic_and_both_compute_choices_work():
    r = mathlib.exp("fp16", n=3, src="a", dst="b", prefix="p")
    assert r.compute == mathlib.DEFAULT_COMPUTE["exp"]["fp16"] == "fp32"
    assert mathlib.exp("fp16", n=3, src="a", dst="b", prefix="p", compute="fp16").compute == "fp16"


def test_run_on_pe_rejects_bad_input():
    with pytest.raises(ws.ConfigError, match="empty"):
        mathlib.run_on_pe(mathlib.exp, "fp32", [])
    with pytest.raises(ws.ConfigError, match="dtype"):
        mathlib.run_on_pe(mathlib.exp, "fp64", [1.0])
