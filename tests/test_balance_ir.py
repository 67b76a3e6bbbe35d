"""The IR of the balancing pass (seed 004): builders, text form and bad input."""

import pytest

import wafersim as ws
from wafersim.balance import Buffer, InsertedBuffer, Load, PipelineGraph, Stage, examples

B = ws.balance


def test_balance_is_reachable_as_ws_balance():
    assert ws.balance.balance is B.balance and "balance" in dir(ws)


def test_fig11_graph_has_one_join_and_paths_of_depth_2_and_1_0145_0149():
    g = examples.fig11()
    assert g.joins == ["stage2"] and g.loads == ["stage0"]
    assert B.path_totals(g)["stage2"] == (1, 2)         # Buff 1B vs Buff 1A + Buff 2A
    assert B.unbalanced_joins(g) == ["stage2"]
    assert B.unbalanced_joins(examples.fig11(balanced=True)) == []


def test_builders_by_hand_text_dict_and_records_agree():
    by_hand = examples.fig12()
    text = """
        load dram                  # one off-chip load [0183]
        buffer b1 dram -> J1 depth=5
        buffer b2 dram -> J1,J2 depth=3
        buffer b3 dram -> J2 depth=4
    """
    as_dict = {"loads": ["dram"], "stages": ["J1", "J2"],
               "buffers": {"b1": {"from": "dram", "to": "J1", "depth": 5},
                           "b2": {"from": "dram", "to": ["J1", "J2"], "depth": 3},
                           "b3": {"from": "dram", "to": "J2", "depth": 4}}}
    records = B.from_stages(
        [{"name": "dram", "load": True}, {"name": "J1"}, {"name": "J2"}],
        [{"name": "b1", "producer": "dram", "consumers": ["J1"], "depth": 5},
         {"name": "b2", "producer": "dram", "consumers": ["J1", "J2"], "depth": 3},
         {"name": "b3", "producer": "dram", "consumers": ["J2"], "depth": 4}])
    assert B.from_text(text) == by_hand == B.from_dict(as_dict) == records
    assert B.from_text(by_hand.to_text()) == by_hand


def test_text_form_round_trips_every_field():
    g = PipelineGraph([Load("in", offset=2, latency=3), Stage("a", latency=2), Stage("j")],
                      [Buffer("x", "in", ("a", "j"), 4, bytes_per_batch=96, tunable=False),
                       Buffer("y", "a", ("j",), 1, bytes_per_batch=7)],
                      [InsertedBuffer("x", "j", 2)])
    assert B.from_text(g.to_text()) == g
    assert g.capacity("x", "j") == 6 and g.capacity("x", "a") == 4


@pytest.mark.parametrize("text,needle", [
    ("load a\nbuffer b1 a -> s depth=1\nbuffer b2 s -> t depth=1\nbuffer b3 t -> s depth=1",
     "cycle through node 's': s -> t -> s"),
    ("buffer lonely -> j depth=1", "buffer 'lonely' has no producer"),
    ("load a\nbuffer neg a -> j depth=-2", "buffer 'neg' has a negative depth -2"),
    ("load a\nbuffer empty a -> j depth=0", "depth of buffer 'empty'"),
    ("load a\nbuffer nodepth a -> j", "buffer 'nodepth' has no depth"),
    ("load a\nstage s\nbuffer b a -> j depth=1", "stage 's' has no input buffer"),
    ("load a\nbuffer b a -> a depth=1", "load 'a' reads off-chip memory"),
    ("load a\nbuffer b a -> j depth=1\nbuffer b a -> j depth=2", "buffer 'b' is declared twice"),
    ("load a\nbuffer b a -> j,j depth=1", "buffer 'b' lists a consumer twice"),
    ("load a\nbuffer b a -> j depth=1\ninsert b -> k depth=1", "no buffer 'b' with consumer 'k'"),
    ("load a\nbuffer b a -> j depth=1 colour=3", "cannot read 'colour=3'"),
    ("load a offset=-1\nbuffer b a -> j depth=1", "offset of load 'a'"),
    ("stage s latency=0\nload a\nbuffer b a -> s depth=1", "latency of node 's'"),
    ("frob a", "a line starts with load, stage, buffer or insert"),
])
def test_bad_graphs_raise_a_config_error_naming_the_culprit(text, needle):
    with pytest.raises(ws.ConfigError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        B.from_text(text)


def test_bad_records_name_the_buffer():
    with pytest.raises(ws.ConfigError, match="buffer 'b' has no producer"):
        B.from_dict({"buffers": {"b": {"to": ["j"], "depth": 1}}})
    with pytest.raises(ws.ConfigError, match="buffer 'b' has no consumer"):
        PipelineGraph([Load("a")], [Buffer("b", "a", (), 1)])
    with pytest.raises(ws.ConfigError, match="buffer 'b': consumer 'ghost' is not a node"):
        PipelineGraph([Load("a")], [Buffer("b", "a", ("ghost",), 1)])
    with pytest.raises(ws.ConfigError, match="unknown key"):
        B.from_dict({"buffers": {"b": {"from": "a", "to": "j", "depht": 1}}})
    with pytest.raises(ws.ConfigError, match="bytes_per_batch of buffer 'b'"):
        PipelineGraph([Load("a"), Stage("j")], [Buffer("b", "a", ("j",), 1, bytes_per_batch=0)])


def test_memory_blocks_round_up_per_buffer_and_batches_may_span_blocks_0178():
    assert B.blocks(5, 1, 3) == 2 and B.blocks(6, 1, 3) == 2 and B.blocks(0, 1, 3) == 0
    assert B.blocks(1, 3, 2) == 2                     # a batch larger than a block
    # ">" of [0178] read as ">=": a buffer of exactly one block's worth costs one block
    assert B.blocks(4, 1, 4) == 1
    assert B.graph_blocks(examples.fig12(), 2) == 3 + 2 + 2
