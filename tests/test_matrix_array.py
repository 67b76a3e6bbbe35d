"""The matrix array: units (Fig. 10), shadow double buffering, FIFO mode, fast vs cycle mode."""

import numpy as np
import pytest

import wafersim as ws

MA = ws.tensor.MatrixArray


def analytic_cycles(P, K, O, rows, cols, lanes, bias_cycles=0):
    """Cycles of the output-stationary dataflow (docs/tensor.md), computed independently:
    tile k captures at max(start_k + K', last transfer of tile k-1); the next tile starts in
    that capture cycle; its valid rows leave one channel transfer per cycle after it."""
    keff = K + bias_cycles
    start, prev_last, last = 0, None, None
    for p0 in range(0, P, cols):
        vp = min(cols, P - p0)
        for o0 in range(0, O, rows):
            vo = min(rows, O - o0)
            capture = start + keff if prev_last is None else max(start + keff, prev_last)
            last = capture + vo * -(-vp // lanes)
            prev_last, start = last, capture
    return last + 1


def test_two_by_two_convolution_example_on_one_unit_0129():
    ma = MA(rows=1, cols=1)
    d, w = [3, 250, 7, 1], [-2, 5, 127, -128]
    for t in range(4):
        ma.step([d[t]], [w[t]], clear=(t == 0))
    assert ma.accumulators()[0, 0] == sum(a * b for a, b in zip(d, w))
    ma.step(capture=True)
    out = ma.step(shift=True)
    assert out[0] == sum(a * b for a, b in zip(d, w))


def test_outer_product_broadcast_columns_data_rows_weights_0118():
    ma = MA(rows=3, cols=4)
    rng = np.random.default_rng(0)
    D = rng.integers(0, 256, (5, 4))
    W = rng.integers(-128, 128, (5, 3))
    for t in range(5):
        ma.step(D[t], W[t], clear=(t == 0))
    np.testing.assert_array_equal(ma.accumulators(), W.T.astype(np.int64) @ D)


def test_clear_enable_and_accumulate_or_keep_0120_0121():
    ma = MA(rows=1, cols=2)
    ma.step([1, 2], [10], clear=True)
    ma.step([1, 2], [10], enable=False)             # data not valid: accumulator holds
    np.testing.assert_array_equal(ma.accumulators(), [[10, 20]])
    ma.step([1, 2], [10])                           # accumulate and save
    np.testing.assert_array_equal(ma.accumulators(), [[20, 40]])
    ma.step([0, 0], [0], clear=True)                # just clear
    np.testing.assert_array_equal(ma.accumulators(), [[0, 0]])


@pytest.mark.parametrize("seed", range(6))
def test_matmul_equals_numpy_int32_for_random_shapes_0127(seed):
    rng = np.random.default_rng(seed)
    P, K, O = (int(v) for v in rng.integers(1, 250, 3))
    a = rng.integers(0, 256, (P, K), dtype=np.uint8)
    b = rng.integers(-128, 128, (K, O)).astype(np.int8)
    ma = MA()
    got = ma.matmul(a, b)
    np.testing.assert_array_equal(got, a.astype(np.int32) @ b.astype(np.int32))
    assert ma.stats["cycles"] == analytic_cycles(P, K, O, 96, 96, 96)
    assert ma.stats["macs"] == P * K * O


def test_accumulator_wraps_at_32_bits_0120():
    K = 70000                                        # 70000 * 255 * 127 > 2^31
    a = np.full((1, K), 255, dtype=np.uint8)
    b = np.full((K, 1), 127, dtype=np.int8)
    got = MA(rows=4, cols=4).matmul(a, b)
    want = (K * 255 * 127 + 2**31) % 2**32 - 2**31
    assert int(got[0, 0]) == want


def test_signedness_is_configurable_0127():
    a = np.array([[-3, 4]], dtype=np.int8)
    b = np.array([[200], [250]], dtype=np.uint8)
    got = MA(rows=2, cols=2, weight_signed=False, data_signed=True).matmul(a, b)
    assert int(got[0, 0]) == -3 * 200 + 4 * 250


def test_bias_through_the_constant_one_operand_0130():
    rng = np.random.default_rng(5)
    a = rng.integers(0, 256, (20, 9), dtype=np.uint8)
    b = rng.integers(-128, 128, (9, 7)).astype(np.int8)
    bias = np.array([0, 1, -1, 127, -128, 1000, -70000], dtype=np.int32)
    ma = MA(rows=4, cols=8)
    got = ma.matmul(a, b, bias)
    np.testing.assert_array_equal(got, a.astype(np.int32) @ b.astype(np.int32) + bias)
    assert ma.stats["bias_cycles"] == 547            # ceil(70000 / 128)
    assert ma.stats["cycles"] == analytic_cycles(20, 9, 7, 4, 8, 96, bias_cycles=547)
    cyc = MA(rows=4, cols=8)
    np.testing.assert_array_equal(cyc.matmul(a, b, bias, mode="cycle"), got)


@pytest.mark.parametrize("shape", [(5, 3, 2), (17, 11, 9), (30, 2, 13), (8, 40, 8)])
@pytest.mark.parametrize("dims", [(4, 4, 4), (3, 8, 4), (8, 3, 2)])
def test_cycle_mode_equals_fast_mode_values_and_cycles(shape, dims):
    rows, cols, lanes = dims
    P, K, O = shape
    rng = np.random.default_rng(P * K * O)
    a = rng.integers(0, 256, (P, K), dtype=np.uint8)
    b = rng.integers(-128, 128, (K, O)).astype(np.int8)
    fast, cyc = MA(rows, cols, lanes=lanes), MA(rows, cols, lanes=lanes)
    r_fast = fast.matmul(a, b)
    r_cyc = cyc.matmul(a, b, mode="cycle")
    np.testing.assert_array_equal(r_fast, a.astype(np.int32) @ b.astype(np.int32))
    np.testing.assert_array_equal(r_cyc, r_fast)
    assert fast.stats == cyc.stats
    assert fast.stats["cycles"] == analytic_cycles(P, K, O, rows, cols, lanes)


def test_shadow_double_buffering_drains_previous_tile_uncorrupted_0123():
    rows, cols = 96, 96
    rng = np.random.default_rng(11)
    ma = MA(rows, cols)
    D1, W1 = rng.integers(0, 256, (5, cols)), rng.integers(-128, 128, (5, rows))
    D2, W2 = rng.integers(0, 256, (200, cols)), rng.integers(-128, 128, (200, rows))
    for t in range(5):
        ma.step(D1[t], W1[t], clear=(t == 0))
    tile1 = W1.T.astype(np.int64) @ D1
    drained = []
    for t in range(200):                           # tile 2 accumulates while tile 1 drains
        out = ma.step(D2[t], W2[t], clear=(t == 0), capture=(t == 0), shift=(1 <= t <= rows))
        if out is not None:
            drained.append(out)
    assert len(drained) == rows                    # one row per shift, row 0 first
    np.testing.assert_array_equal(np.array(drained), tile1)
    np.testing.assert_array_equal(ma.accumulators(), W2.T.astype(np.int64) @ D2)


def test_fifo_mode_delay_equals_the_depth_0038():
    ma = MA(rows=96, cols=96)
    arrivals = {}
    for t in range(300):
        row = np.full(96, t, dtype=np.uint32) if t in (0, 5, 6, 100) else None
        out = ma.fifo_step(row)
        if out is not None:
            assert (out == out[0]).all()           # the whole row moves in parallel
            arrivals[int(out[0])] = t
    assert arrivals == {0: 96, 5: 101, 6: 102, 100: 196}


def test_fifo_input_formats_and_wide_assembly_0045():
    ma = MA(rows=4, cols=96)
    ma.fifo_step(np.arange(48), fmt="48x2B")
    ma.fifo_step(np.arange(96) * 500, fmt="96x2B")
    ma.fifo_step(np.arange(192) % 16, fmt="192x4b")
    outs = [ma.fifo_step() for _ in range(6)]
    got = [o for o in outs if o is not None]
    np.testing.assert_array_equal(got[0][:48], np.arange(48))
    np.testing.assert_array_equal(got[1], np.arange(96) * 500)
    np.testing.assert_array_equal(got[2], (np.arange(0, 192, 2) % 16) | ((np.arange(1, 192, 2) % 16) << 4))
    with pytest.raises(ws.ConfigError, match="fifo format"):
        ma.fifo_step(np.arange(96), fmt="96x3B")
    # A 4-byte element from four byte loads and shifts, in the vector engine [0045].
    ve = ws.tensor.VectorEngine(lanes=4)
    for byte in (0x11, 0x22, 0x33, 0x44):
        ve.push_row(np.full(4, byte))
    ve.execute("DEQ.W RD0\nDEQ.W RD1\nSHL RD1, RD1, 8\nOR RD0, RD0, RD1\nDEQ.W RD1\nSHL RD1, RD1, 16\n"
               "OR RD0, RD0, RD1\nDEQ.W RD1\nSHL RD1, RD1, 24\nOR RD0, RD0, RD1")
    assert (ve.reg("RD0") == 0x44332211).all()


def test_192x48_agrees_with_96x96_0024():
    rng = np.random.default_rng(2)
    a = rng.integers(0, 256, (300, 77), dtype=np.uint8)
    b = rng.integers(-128, 128, (77, 130)).astype(np.int8)
    square, wide = MA(96, 96), MA(rows=48, cols=192)
    np.testing.assert_array_equal(square.matmul(a, b), wide.matmul(a, b))
    assert wide.stats["cycles"] == analytic_cycles(300, 77, 130, 48, 192, 96)
    assert wide.stats["rows_drained"] == 2 * (130 * 2)  # 192-wide rows take two transfers


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_fp16_and_bf16_accumulate_in_fp32_in_cycle_order(dtype):
    rng = np.random.default_rng(4)
    a = rng.normal(size=(13, 40)).astype(np.float32)
    b = rng.normal(size=(40, 6)).astype(np.float32)
    ma = MA(rows=4, cols=8, dtype=dtype)
    got = ma.matmul(a, b)
    if dtype == "fp16":
        av, bv = a.astype(np.float16).astype(np.float32), b.astype(np.float16).astype(np.float32)
    else:
        from wafersim.tensor._operands import bf16_bits
        av = (bf16_bits(a).astype(np.uint32) << 16).view(np.float32)
        bv = (bf16_bits(b).astype(np.uint32) << 16).view(np.float32)
    want = np.zeros((13, 6), dtype=np.float32)
    for k in range(40):                                # sequential fp32 sums, like the units
        want = (want + np.outer(av[:, k], bv[k]).astype(np.float32)).astype(np.float32)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(MA(rows=4, cols=8, dtype=dtype).matmul(a, b, mode="cycle"), got)


def test_bad_shapes_and_operands_raise_clear_errors():
    ma = MA(rows=4, cols=4)
    with pytest.raises(ws.ConfigError, match="depths differ"):
        ma.matmul(np.zeros((3, 5), np.uint8), np.zeros((4, 2), np.int8))
    with pytest.raises(ws.ConfigError, match="unsigned 8-bit"):
        ma.matmul(np.full((2, 2), 256), np.zeros((2, 2), np.int8))
    with pytest.raises(ws.ConfigError, match="rows must be in 1..1024"):
        MA(rows=0, cols=4)
    with pytest.raises(ws.ConfigError, match="bias must have shape"):
        ma.matmul(np.zeros((2, 2), np.uint8), np.zeros((2, 3), np.int8), bias=np.zeros(2, np.int32))
    with pytest.raises(ws.ConfigError, match="data must have 4"):
        ma.step([1, 2], [1, 2, 3, 4])
