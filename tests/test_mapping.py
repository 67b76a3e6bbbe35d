"""ws.map: blocks placed west to east [0287], [0406], PE (r, c) holding W[O_c, I_r]
[0400]-[0402], colors and routes, programs that are ordinary CE code."""

import re

import numpy as np
import pytest

import wafersim as ws
from wafersim.asm.ce_isa import isa

pytestmark = pytest.mark.nosanitize


def mlp(*sizes, act=ws.nn.ReLU):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(ws.nn.Linear(sizes[i], sizes[i + 1], seed=i))
        if i < len(sizes) - 2:
            layers.append(act())
    return ws.nn.Sequential(*layers)


def test_layers_are_placed_west_to_east_back_to_back_0406():
    plan = ws.map(mlp(12, 9, 7, 4), blocks=[(4, 3), (3, 2), (2, 2)])
    cols = [(b.col0, b.col0 + b.cols) for b in plan.layers]
    assert cols == [(0, 3), (3, 5), (5, 7)]
    assert all(b.row0 == 0 for b in plan.layers)
    assert plan.wafer.rows == 4 and plan.wafer.cols == 7


def test_pe_holds_weights_of_its_output_and_input_groups_0401():
    """PE (r, c) holds W[O_c, I_r] (stored transposed: one row of outputs per input)."""
    model = mlp(12, 9, 4)
    plan = ws.map(model, blocks=[(4, 3), (3, 2)])
    W = model.dense_layers()[0].linear.weight
    b = plan.layers[0]
    for r, (i0, ni) in enumerate(b.in_groups):
        for c, (o0, no) in enumerate(b.out_groups):
            s = plan.specs[b.at(r, c)]
            raw = plan.wafer.memcpy_d2h("w", rect=b.at(r, c)).reshape(ni, no + s.slots)
            assert np.array_equal(raw[:, :no], W[o0:o0 + no, i0:i0 + ni].T)
    # the bias share of column c lives on its finalizer, PE (c, c)
    bias = model.dense_layers()[0].linear.bias
    for c, (o0, no) in enumerate(b.out_groups):
        got = plan.wafer.memcpy_d2h("bias", rect=b.finalizer(c)).ravel()
        assert np.array_equal(got, bias[o0:o0 + no])


def test_read_weights_round_trip():
    model = mlp(10, 6, 3)
    plan = ws.map(model, blocks=[(3, 2), (2, 2)])
    for (W, b), d in zip(plan.read_weights(), model.dense_layers()):
        assert np.array_equal(W, d.linear.weight) and np.array_equal(b, d.linear.bias)


def test_automatic_blocks_fit_memory_and_the_rules():
    plan = ws.map(mlp(64, 32, 10))
    shapes = [(b.rows, b.cols) for b in plan.layers]
    for i, (r, c) in enumerate(shapes):
        assert c <= r
        if i:
            assert r == shapes[i - 1][1]
    assert max(m["data_bytes"] for m in plan.memory().values()) <= plan.wafer._core.ce_config.data_bytes


def test_automatic_blocks_grow_for_a_large_layer():
    """784 inputs do not fit one PE's 32 KiB of data in fp32 with gradients: the chooser
    spreads the layer over enough PEs."""
    plan = ws.map(mlp(784, 64, 10))
    top = max(m["data_bytes"] for m in plan.memory().values())
    assert top <= 32768
    assert plan.layers[0].rows * plan.layers[0].cols >= 4


def test_colors_are_checked_routes_have_one_source_0302():
    plan = ws.map(mlp(12, 9, 7, 4), blocks=[(4, 3), (3, 2), (2, 2)])
    plan.wafer.check_routes()                   # no dependency cycle, every link consistent
    assert len(set(plan.colors.values())) == 9
    for color, routers in plan.routes.table.items():
        for p, (rx, tx) in routers.items():
            assert len(rx) == 1, (color, p)


def test_colors_avoid_those_already_routed():
    w = ws.Wafer(4, 7)
    w.route(0, [(0, 0), (0, 1)])                # someone else's route on color 0
    plan = ws.map(mlp(12, 9, 7, 4), w, blocks=[(4, 3), (3, 2), (2, 2)])
    assert 0 not in plan.colors.values()


def test_listing_is_ordinary_ce_code():
    """Every instruction of every PE program is an opcode of the CE ISA (no training
    opcode), and the disassembler lists them."""
    plan = ws.map(mlp(12, 9, 4), blocks=[(4, 3), (3, 2)])
    mnemonics = {op["mnemonic"] for op in isa().data["opcodes"]}
    tensor = {"tmm", "tlayer", "tbias", "tvprog", "tdone"}
    for (l, pe) in [(0, (0, 0)), (0, (3, 1)), (1, (1, 1)), (1, (0, 1))]:
        text = plan.listing(l, pe)
        assert ".word" not in text
        used = {m.group(1) for m in re.finditer(r"^\s*\d+:\s+([a-z0-9]+)", text, re.M)}
        assert used and used <= mnemonics
        assert not used & tensor
    assert "fmacs" in plan.listing(0, (1, 1))


def test_describe_and_picture():
    plan = ws.map(mlp(12, 9, 4), blocks=[(4, 3), (3, 2)])
    text = plan.describe()
    assert "layer 0: Linear(12, 9) + relu on 4 x 3 PEs" in text
    assert "colors:" in text and "peak PE memory" in text
    fig = plan.picture()
    assert fig.axes


def test_origin_places_the_blocks_elsewhere():
    w = ws.Wafer(6, 9)
    plan = ws.map(mlp(8, 4, 3), w, blocks=[(2, 2), (2, 1)], origin=(2, 3))
    assert plan.layers[0].at(0, 0) == (2, 3)
    tr = ws.Trainer(plan, progress=False)
    x = np.random.default_rng(0).uniform(0, 1, (3, 8)).astype(np.float32)
    np.testing.assert_allclose(tr.predict(x), plan.model(x), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("blocks,match", [
    ([(2, 3), (3, 1)], "at least as many rows as columns"),
    ([(2, 2), (3, 1)], "rows = previous columns"),
    ([(9, 1), (1, 1)], "every PE row needs at least one input"),
    ([(2, 2)], "2 layers"),
    ([(0, 1), (1, 1)], "at least 1 x 1"),
    ("4x4", "pairs"),
])
def test_bad_block_shapes_name_the_layer_and_rule(blocks, match):
    with pytest.raises(ws.ConfigError, match=match):
        ws.map(mlp(8, 4, 3), blocks=blocks)


def test_a_model_too_big_for_pe_memory():
    with pytest.raises(ws.ConfigError, match=r"layer 0 \(Linear\(2000, 900\)\) does not fit"):
        ws.map(mlp(2000, 900, 10), blocks=[(1, 1), (1, 1)])


def test_a_wafer_too_small_for_the_blocks():
    with pytest.raises(ws.ConfigError, match="the wafer is 2 x 2"):
        ws.map(mlp(8, 4, 3), ws.Wafer(2, 2), blocks=[(2, 2), (2, 1)])


def test_too_few_colors():
    with pytest.raises(ws.ConfigError, match="needs 9 routable colors"):
        ws.map(mlp(8, 4, 3), ws.Wafer(2, 3, colors=8), blocks=[(2, 2), (2, 1)])


def test_pes_with_programs_are_not_overwritten():
    w = ws.Wafer(2, 3)
    w.pe(0, 0).load(".code\n.task m, 40\nm: term\n")
    with pytest.raises(ws.ConfigError, match=r"PE \(0, 0\) already has a program"):
        ws.map(mlp(8, 4, 3), w, blocks=[(2, 2), (2, 1)])


def test_unsupported_model_and_dtype():
    with pytest.raises(ws.ConfigError, match="ws.nn.Sequential"):
        ws.map(object())
    with pytest.raises(ws.ConfigError, match="dtype"):
        ws.map(mlp(8, 4, 3), dtype="bf16")
    with pytest.raises(ws.ConfigError, match="slots"):
        ws.map(mlp(8, 4, 3), slots=0)


def test_listing_arguments_are_checked():
    plan = ws.map(mlp(8, 4, 3), blocks=[(2, 2), (2, 1)])
    with pytest.raises(ws.ConfigError, match="layer must be"):
        plan.listing(5, (0, 0))
    with pytest.raises(ws.ConfigError, match="outside"):
        plan.listing(1, (0, 1))
