"""The whole tensor unit: a quantized int8 network end to end, counters, bad input."""

import numpy as np
import pytest

import wafersim as ws
from wafersim.reference import int8_net as ref


def _net(rng):
    return [
        {"w": rng.integers(-128, 128, (16, 3, 3, 3)).astype(np.int8),
         "bias": rng.integers(-20000, 20000, 16).astype(np.int32), "scale": 5, "shift": 12,
         "pool": (2, 2)},
        {"w": rng.integers(-128, 128, (10, 16, 3, 3)).astype(np.int8),
         "bias": rng.integers(-20000, 20000, 10).astype(np.int32), "scale": 3, "shift": 13,
         "pool": None},
    ]


def _run(tu, x, layers):
    for layer in layers:
        x = tu.conv2d(x, layer["w"], layer["bias"], scale=layer["scale"], shift=layer["shift"],
                      pool=layer["pool"])
    return x


def test_int8_network_is_bit_exact_against_numpy_reference_0027_0070():
    """conv -> ReLU+quantize -> max-pool -> conv -> ReLU+quantize, seed 002's Fig. 5 split."""
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, (3, 20, 20), dtype=np.uint8)
    layers = _net(rng)
    tu = ws.TensorUnit()
    got = _run(tu, x, layers)
    want = ref.forward(x, layers)
    assert got.shape == want.shape == (10, 7, 7)
    np.testing.assert_array_equal(got, want)
    assert 0 < (got > 0).mean() < 1                     # the test exercises both sides of ReLU
    c = tu.counters
    assert c["macs"] == 18 * 18 * 27 * 16 + 7 * 7 * 144 * 10
    assert c["peak_macs"] == c["cycles"] * 96 * 96
    assert c["utilization"] == pytest.approx(c["macs"] / c["peak_macs"])


@pytest.mark.parametrize("dims", [(4, 8, 8), (8, 4, 4), (6, 10, 4)])
def test_cycle_mode_tensor_unit_matches_fast_mode(dims):
    rows, cols, lanes = dims
    rng = np.random.default_rng(1)
    x = rng.integers(0, 256, (2, 9, 9), dtype=np.uint8)
    layers = _net(rng)
    layers[0]["w"] = layers[0]["w"][:, :2]
    layers[1]["w"] = layers[1]["w"][:, :, :2, :2]
    outs, stats = [], []
    for mode in ("fast", "cycle"):
        tu = ws.TensorUnit(rows=rows, cols=cols, lanes=lanes, mode=mode, input_queue_rows=2)
        outs.append(_run(tu, x, layers))
        stats.append(tu.counters)
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[0], ref.forward(x, layers))
    assert stats[0] == stats[1]


def test_slow_vector_program_backpressures_the_array_0032():
    """A 3-triad program per row cannot keep up with one row per cycle: the input queue
    fills, transfers wait, and the counters say why."""
    rng = np.random.default_rng(2)
    a = rng.integers(0, 256, (96, 4), dtype=np.uint8)
    b = rng.integers(-128, 128, (4, 96)).astype(np.int8)
    prog = ("DEQ.W RD0\nADD.S RD0, RD0, 0\n"
            "RELUQ.U8 RB4, RD0, scale=1, shift=6, zp=0 | OUT.B RB4\n")
    tu = ws.TensorUnit(input_queue_rows=2)
    out = tu.layer(a, b, program=prog, extent=(8, 12))
    acc = a.astype(np.int64) @ b.astype(np.int64)
    np.testing.assert_array_equal(out.reshape(96, 96), ref.requantize(acc.T, 1, 6))
    s = tu.stats
    assert s["stalls"]["array_queue_full"] > 0
    assert s["bundles"] == 3 * 96
    # One row per three issue cycles once the queue is full: the engine is the bottleneck.
    assert s["cycles"] >= 2 + 3 * 96 + 3


def test_one_triad_per_row_keeps_up_with_the_drain_0114():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 256, (96, 200), dtype=np.uint8)
    b = rng.integers(-128, 128, (200, 96)).astype(np.int8)
    tu = ws.TensorUnit()
    tu.layer(a, b, program=ws.tensor.quantize_program(1, 10))
    s = tu.stats
    assert s["stalls"]["array_queue_full"] == 0
    # array: 200 MACs, capture, 96 transfers (last in cycle 296); engine: the last triad
    # issues in cycle 297, its S stage is cycle 300; post-processor: 96 x 96 bytes in 96 writes.
    assert s["array_cycles"] == 200 + 1 + 96
    assert s["cycles"] == (296 + 1 + 3) + 1 + 96


def test_layer_errors_name_the_problem():
    tu = ws.TensorUnit(rows=4, cols=4, lanes=4)
    a = np.zeros((8, 3), np.uint8)
    b = np.zeros((3, 4), np.int8)
    with pytest.raises(ws.ConfigError, match="dequeues no row"):
        tu.layer(a, b, program="NOP")
    with pytest.raises(ws.ConfigError, match="OUT.B"):
        tu.layer(a, b, program="DEQ.W RD0")
    with pytest.raises(ws.ConfigError, match="does not cover"):
        tu.layer(a, b, program=ws.tensor.quantize_program(1, 0), extent=(3, 3))
    with pytest.raises(ws.ProgramError, match="bundle 0: field alu_op"):
        tu.load_vector_program(np.array([[0xFF << 13, 0]], dtype=np.uint64))
    with pytest.raises(ws.ConfigError, match="mismatched operand sizes"):
        tu.matmul(np.zeros((2, 3), np.uint8), np.zeros((4, 2), np.int8))
    with pytest.raises(ws.ConfigError, match="mode must be"):
        ws.TensorUnit(mode="turbo")
    with pytest.raises(ws.ConfigError, match="input_queue_rows"):
        ws.TensorUnit(input_queue_rows=0)


def test_post_processor_max_pool_kernel_stride_extent_0070():
    rng = np.random.default_rng(4)
    m = rng.integers(0, 256, (3, 9, 7), dtype=np.uint8)
    for k, s in ((2, 2), (3, 1), (3, 2), (1, 1)):
        np.testing.assert_array_equal(ws.tensor.max_pool(m, k, s), ref.max_pool2d(m, k, s))
    with pytest.raises(ws.ConfigError, match="exceeds the extent"):
        ws.tensor.max_pool(m, 8, 1)


def test_tensor_unit_config_and_matmul_api():
    cfg = ws.TensorUnitConfig(rows=48, cols=192)
    tu = ws.TensorUnit(cfg)
    assert "rows=48" in repr(tu)
    rng = np.random.default_rng(5)
    a = rng.integers(0, 256, (50, 30), dtype=np.uint8)
    b = rng.integers(-128, 128, (30, 20)).astype(np.int8)
    np.testing.assert_array_equal(tu.matmul(a, b), a.astype(np.int32) @ b.astype(np.int32))
    assert tu.stats["cycles"] == 30 + 1 + 20  # one 50-wide row per transfer
