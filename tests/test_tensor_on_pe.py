"""A tensor unit attached to a PE (seed 002 on seed 000's PE, docs/tensor.md "On a
processing element"): compute-element instructions run matrix-array passes over operands
that DSDs describe in PE memory; results go to memory or, as wavelets, to another PE; the
pass runs asynchronously and activates an id when done."""

import numpy as np
import pytest
from repo_scripts import load_script

import wafersim as ws


def _example():
    return load_script("examples/tensor_dense_layer_on_pe.py")


MATMUL = """
.data
xx:   .xdsd mem4d, dims=({K}, {P}), strides=(unit, {xs})
xw:   .xdsd mem4d, dims=({O}, {Kw}), strides=(unit, {ws})
dx:   .dsd mem4d, base=x, dims=({K}, {P}), xdsr=2
dw:   .dsd mem4d, base=w, dims=({O}, {Kw}), xdsr=3
db:   .dsd mem1d, base=b, length={nb}, stride=4
dy:   {dst}
x:    .space {t}, {P} * {K}
w:    .space {t}, {Kw} * {O}
b:    .space i32, {nb}
y:    .space i32, {P} * {O}
.export x, w, b, y
.code
.task main, 40
.task done, 41
main: ldxds X[2], xx
      ldxds X[3], xw
      lds0wds S0[1], dx
      lds1wds S1[1], dw
      lds1wds S1[2], db
      lddwds D[1], dy
      tdone 41
{bias}      tmm.t D[1], S0[1], S1[1]
done: term
"""


def matmul_source(P, K, O, *, dtype="int8", bias=False, Kw=None, nb=None, dst=None):
    eb = 1 if dtype == "int8" else 2
    Kw = K if Kw is None else Kw
    return MATMUL.format(P=P, K=K, O=O, Kw=Kw, xs=K * eb, ws=O * eb, t="u8" if dtype == "int8" else "fp16",
                         nb=O if nb is None else nb, bias="      tbias S1[2]\n" if bias else "",
                         dst=dst or f".dsd mem1d, base=y, length={P * O}, stride=4")


def _int8_pass(P, K, O, seed=0, **kw):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 256, (P, K), dtype=np.uint8)
    wt = rng.integers(-128, 128, (K, O), dtype=np.int8)
    b = rng.integers(-5000, 5000, O, dtype=np.int32)
    w = ws.Wafer(1, 1, tensor_unit=ws.TensorUnitConfig(**kw))
    w.pe(0, 0).load(matmul_source(P, K, O, bias=True))
    w.memcpy_h2d("x", a.ravel(), rect=(0, 0))
    w.memcpy_h2d("w", wt.view(np.uint8).ravel(), rect=(0, 0))
    w.memcpy_h2d("b", b, rect=(0, 0))
    w.launch("main")
    return w, a, wt, b


@pytest.mark.parametrize("P,K,O", [(1, 16, 8), (3, 10, 7), (5, 130, 100)])
def test_tmm_int8_pass_over_dsd_operands_equals_numpy_0118_0127(P, K, O):
    w, a, wt, b = _int8_pass(P, K, O, seed=P + K)
    stats = w.run()
    y = w.pe(0, 0).read("y").reshape(P, O)
    assert np.array_equal(y, a.astype(np.int64) @ wt.astype(np.int64) + b)
    s = stats.pes[(0, 0)]
    assert s["tensor_passes"] == 1 and s["tensor_macs"] == P * K * O
    assert s["tasks_started"] == {40: 1, 41: 1}


def test_the_pass_is_charged_its_array_cycles_and_runs_asynchronously(tmp_path):
    P, K, O = 3, 40, 20
    w, a, wt, b = _int8_pass(P, K, O, rows=16, cols=16, lanes=16)
    stats = w.run(trace=tmp_path / "t.json")
    s = stats.pes[(0, 0)]
    # The same shapes on a standalone unit of the same size (seed 002 timing).
    tu = ws.TensorUnit(rows=16, cols=16, lanes=16)
    tu.matmul(a, wt, b)
    assert s["tensor_cycles"] == tu.stats["cycles"]
    main, done = sorted(s["task_spans"], key=lambda t: t[2])
    # `main` ends with the issuing instruction; the unit works on; the results land at the
    # end of issue + cycles, and the activated `done` is picked the cycle after [0503].
    assert done[2] == main[3] + tu.stats["cycles"] + 1
    assert w.pe(0, 0).idle


def test_a_second_pass_waits_for_the_unit():
    P, K, O = 2, 8, 8
    src = matmul_source(P, K, O).replace("      tmm.t D[1], S0[1], S1[1]",
                                         "      tmm D[1], S0[1], S1[1]\n      tmm.t D[1], S0[1], S1[1]")
    w = ws.Wafer(1, 1, tensor_unit=True)
    w.pe(0, 0).load(src)
    w.launch("main")
    s = w.run().pes[(0, 0)]
    one = s["tensor_cycles"] // 2
    assert s["tensor_passes"] == 2 and s["stalls"]["tensor_busy"] == one
    assert s["tasks_started"][41] == 2  # each completion activates `done` [0503]


def test_fp16_extension_pass_accumulates_in_fp32_like_numpy():
    P, K, O = 2, 24, 9
    rng = np.random.default_rng(1)
    a = rng.uniform(-2, 2, (P, K)).astype(np.float16)
    wt = rng.uniform(-2, 2, (K, O)).astype(np.float16)
    w = ws.Wafer(1, 1, tensor_unit=ws.TensorUnitConfig(dtype="fp16"))
    w.pe(0, 0).load(matmul_source(P, K, O, dtype="fp16"))
    w.memcpy_h2d("x", a.ravel(), rect=(0, 0))
    w.memcpy_h2d("w", wt.ravel(), rect=(0, 0))
    w.launch("main")
    w.run()
    y = w.pe(0, 0).read("y").view(np.float32).reshape(P, O)
    acc = np.zeros((P, O), np.float32)
    for k in range(K):  # exact products, one fp32 rounding per accumulation step
        acc = (acc + a[:, k:k + 1].astype(np.float32) * wt[k].astype(np.float32)).astype(np.float32)
    assert np.array_equal(y.view(np.uint32), acc.view(np.uint32))


@pytest.mark.parametrize("P,K,O", [(1, 64, 32), (4, 20, 10)])
def test_int8_dense_layer_on_a_pe_reaches_the_next_pe_as_wavelets(P, K, O):
    r = _example().run_int8(P, K, O, seed=O)
    assert np.array_equal(r["y"], r["want"])  # requantized relu(X W + b), O x P, bit exact
    assert r["stats"].pes[(0, 1)]["wavelets_in"] == P * O


@pytest.mark.parametrize("P,K,O", [(1, 32, 16), (3, 40, 12)])
def test_fp16_dense_layer_on_a_pe_reaches_the_next_pe_as_wavelets(P, K, O):
    r = _example().run_fp16(P, K, O, seed=K)
    assert np.array_equal(r["y"].view(np.uint16), r["want"].view(np.uint16))
    assert np.allclose(r["y"].astype(np.float64), r["numpy"], atol=0.05)


def test_tmm_results_as_32_bit_wavelets_to_another_pe():
    P, K, O = 2, 12, 5
    dst = f".dsd fabric_out, color=6, length={P * O}, sw=1"
    rng = np.random.default_rng(3)
    a = rng.integers(0, 256, (P, K), dtype=np.uint8)
    wt = rng.integers(-128, 128, (K, O), dtype=np.int8)
    w = ws.Wafer(1, 2, tensor_unit=True)
    w.pe(0, 0).load(matmul_source(P, K, O, dst=dst))
    w.pe(0, 1).load(f"""
.data
din: .dsd fabric_in, length={P * O}, sw=1, sc=1, utid=6
dy:  .dsd mem1d, base=y, length={P * O}, stride=4
y:   .space i32, {P * O}
.export y
.code
.task main, 40
main: block 6
      lds1wds S1[0], din
      lddwds D[0], dy
      mov32.t D[0], S1[0]
""")
    w.route(6, [(0, 0), (0, 1)])
    w.memcpy_h2d("x", a.ravel(), rect=(0, 0))
    w.memcpy_h2d("w", wt.view(np.uint8).ravel(), rect=(0, 0))
    w.launch("main")
    w.run()
    assert np.array_equal(w.pe(0, 1).read("y").reshape(P, O), a.astype(np.int64) @ wt.astype(np.int64))


def _fails(src, match, error=ws.ProgramError, tensor_unit=True, **unit):
    w = ws.Wafer(1, 1, tensor_unit=ws.TensorUnitConfig(**unit) if unit else tensor_unit)
    w.pe(0, 0).load(src)
    w.launch("main")
    with pytest.raises(error, match=match) as err:
        w.run()
    return err.value


def test_bad_operand_shapes_raise_program_errors_naming_the_field():
    e = _fails(matmul_source(2, 8, 4, Kw=6), r"PE\(0,0\) pc \d+ \(tmm\): src1 \(weights\) is 6 x 4 "
               r"but src0 \(data\) is 2 x 8: the weights need K = 8 rows")
    assert e.category == "usage"
    _fails(matmul_source(2, 8, 4, bias=True, nb=5), r"the bias \(tbias\) has 5 values; the pass "
           r"has O = 4 output channels")
    _fails(matmul_source(2, 8, 4, dst=".dsd mem1d, base=y, length=7, stride=4"),
           r"dst describes 1 x 7 elements; the pass writes 2 x 4 32-bit results")
    _fails(matmul_source(2, 8, 4, dst=".dsd fabric_out, color=3, length=8, sw=2"),
           r"dst: a tensor result goes one per wavelet: SW must be 1")
    _fails(matmul_source(2, 8, 4, dst=".dsd fabric_out, color=3, length=9, sw=1"),
           r"dst: Length 9 wavelets, but the pass sends 8 results")
    e = _fails(matmul_source(2, 8, 4, dtype="fp16", bias=True), r"modelled for int8 passes only",
               dtype="fp16")
    assert e.category == "unsupported"
    _fails(matmul_source(2, 8, 4), "this PE has no tensor unit", tensor_unit=None)
    _fails(matmul_source(2, 8, 4).replace("tmm.t", "tlayer.t"),
           r"\(tlayer\): no vector program: load one with tvprog first")
    _fails(matmul_source(2, 8, 4).replace("base=x, dims", "base=32760, dims"),
           r"src0 \(data\) element \(1, 0\) at address 32768 is outside data memory",
           error=ws.MemoryAccessError)


def test_a_bad_vector_program_in_pe_memory_names_the_bundle():
    src = """
.data
prog: .u32 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF
dp:   .dsd mem1d, base=prog, length=1, stride=16
dq:   .dsd mem1d, base=prog, length=1, stride=8
.code
.task main, 40
main: lds1wds S1[0], dp
      tvprog.t S1[0]
"""
    _fails(src, r"\(tvprog\): vector program bundle 0")
    _fails(src.replace("S1[0], dp", "S1[0], dq"), r"Stride must be 16 \(bytes per 128-bit bundle\)")


def test_bad_tensor_unit_configurations_are_config_errors():
    with pytest.raises(ws.ConfigError, match="rows"):
        ws.Wafer(1, 1, tensor_unit=ws.TensorUnitConfig(rows=0))
    with pytest.raises(ws.ConfigError, match="dtype"):
        ws.Wafer(1, 1, tensor_unit=ws.TensorUnitConfig(dtype="int4"))
    with pytest.raises(ws.ConfigError, match="TensorUnitConfig"):
        ws.Wafer(1, 1, tensor_unit="big")
    with pytest.raises(ws.ProgramError, match="tdone #70 names no id"):
        ws.asm.assemble(".code\n.task main, 40\nmain: tdone 70\n")
    with pytest.raises(ws.ProgramError, match="tbias takes a descriptor S1"):
        ws.asm.assemble(".code\n.task main, 40\nmain: tbias r3\n")


def test_the_lone_pe_bench_can_hold_a_tensor_unit_too():
    P, K, O = 2, 6, 3
    pe = ws.pe.LonePE(tensor_unit=True)
    pe.load(matmul_source(P, K, O))
    a = np.arange(P * K, dtype=np.uint8)
    wt = (np.arange(K * O) % 7 - 3).astype(np.int8)
    pe.write("x", a)
    pe.write("w", wt.view(np.uint8))
    pe.launch("main")
    pe.run()
    assert np.array_equal(pe.read("y"), (a.reshape(P, K).astype(np.int64) @ wt.reshape(K, O)).ravel())
