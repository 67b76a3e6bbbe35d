"""The seed's example graphs, and the small shapes the tests and docs sweep."""

from __future__ import annotations

from .._args import bool_arg, int_arg
from .graph import MAX_COUNT, Buffer, Load, PipelineGraph, Stage
from .random_graphs import MAX_STAGES

__all__ = ["fork_join", "fig11", "fig12", "fig14", "two_loads"]


def fork_join(long: int, short: int) -> PipelineGraph:
    """A load ``fork`` broadcasting to a join over a long path of ``long`` buffers of depth
    1 (with ``long - 1`` stages between them) and a short path of one buffer of depth
    ``short``. Steady interval: max(1, long / short) (digest section 3)."""
    long = int_arg("long", long, 1, MAX_STAGES)
    short = int_arg("short", short, 1, MAX_COUNT)
    nodes = [Load("fork")] + [Stage(f"s{i}") for i in range(1, long)] + [Stage("join")]
    chain = ["fork"] + [f"s{i}" for i in range(1, long)] + ["join"]
    buffers = [Buffer(f"long{i}", chain[i], (chain[i + 1],), 1) for i in range(long)]
    buffers.append(Buffer("short", "fork", ("join",), short))
    return PipelineGraph(nodes, buffers)


def fig11(balanced: bool = False) -> PipelineGraph:
    """FIG. 11A [0145]: Stage 0 forks to Buff 1A -> Stage 1 -> Buff 2A and to Buff 1B;
    (Joining) Stage 2 reads Buff 2A and Buff 1B; every buffer holds one batch.
    ``balanced=True`` gives FIG. 11B: Buff 1B tuned to depth 2 (Buff 1Bal + Buff 2Bal,
    [0153]). Stage 0 is where data from off-chip memory enters, so it is the load."""
    balanced = bool_arg("balanced", balanced)
    return PipelineGraph(
        [Load("stage0"), Stage("stage1"), Stage("stage2")],
        [Buffer("buff1A", "stage0", ("stage1",), 1),
         Buffer("buff2A", "stage1", ("stage2",), 1),
         Buffer("buff1B", "stage0", ("stage2",), 2 if balanced else 1)])


def fig12(bytes_per_batch: int = 1) -> PipelineGraph:
    """FIG. 12 [0161] (and FIG. 14A [0183]): one load feeds buffer b1 (depth 5) and b3
    (depth 4) and the shared buffer b2 (depth 3); join J1 reads b1 and b2, join J2 reads
    b2 and b3."""
    return PipelineGraph(
        [Load("dram"), Stage("J1"), Stage("J2")],
        [Buffer("b1", "dram", ("J1",), 5, bytes_per_batch),
         Buffer("b2", "dram", ("J1", "J2"), 3, bytes_per_batch),
         Buffer("b3", "dram", ("J2",), 4, bytes_per_batch)])


def fig14(bytes_per_batch: int = 1) -> PipelineGraph:
    """FIG. 14A [0183]-[0184]: the same graph as FIG. 12 (depths 5, 3, 4; b2 feeds both
    joins). Sweep the seed's depth_per_PMU with ``balance(..., block_bytes=dpp)``."""
    return fig12(bytes_per_batch)


def two_loads(depth1: int = 5, depth2: int = 3, shared: bool = False) -> PipelineGraph:
    """The load-time example [0177]: paths of total depth 5 and 3 into one join, from two
    independent loads (or, ``shared=True``, from one load feeding both)."""
    depth1 = int_arg("depth1", depth1, 1, MAX_COUNT)
    depth2 = int_arg("depth2", depth2, 1, MAX_COUNT)
    if bool_arg("shared", shared):
        return PipelineGraph([Load("load"), Stage("join")],
                             [Buffer("path1", "load", ("join",), depth1),
                              Buffer("path2", "load", ("join",), depth2)])
    return PipelineGraph([Load("load1"), Load("load2"), Stage("join")],
                         [Buffer("path1", "load1", ("join",), depth1),
                          Buffer("path2", "load2", ("join",), depth2)])
