"""Memory cost of stage buffers: the seed's PMUs become blocks of PE memory.

A buffer of ``depth`` batches of ``bytes_per_batch`` bytes takes

    blocks = ceil(depth * bytes_per_batch / block_bytes)

blocks of ``block_bytes`` each: the resource constraint ``pmu * depth_per_PMU >= depth``
of [0178] with ``depth_per_PMU = block_bytes / bytes_per_batch`` per edge (a batch may span
several blocks). The seed writes ">" for new buffers; we read it as ">=" like the one for
existing buffers, so a buffer of exactly one block's worth costs one block (docs/balance.md).
"""

from __future__ import annotations

from .._args import int_arg
from .graph import MAX_COUNT, PipelineGraph, check_graph

__all__ = ["blocks", "graph_blocks", "block_count"]


def block_count(depth: int, bytes_per_batch: int, block_bytes: int) -> int:
    """:func:`blocks` without the checks, for the pass's inner loops (checked values)."""
    return -(-depth * bytes_per_batch // block_bytes)


def blocks(depth: int, bytes_per_batch: int, block_bytes: int) -> int:
    """Blocks a buffer of ``depth`` batches needs (0 for an absent buffer)."""
    return block_count(int_arg("depth", depth, 0, MAX_COUNT),
                       int_arg("bytes_per_batch", bytes_per_batch, 1, MAX_COUNT),
                       int_arg("block_bytes", block_bytes, 1, MAX_COUNT))


def graph_blocks(graph: PipelineGraph, block_bytes: int) -> int:
    """Blocks every buffer and inserted buffer of ``graph`` needs."""
    check_graph(graph)
    block_bytes = int_arg("block_bytes", block_bytes, 1, MAX_COUNT)
    total = sum(block_count(b.depth, b.bytes_per_batch, block_bytes)
                for b in graph.buffers.values())
    total += sum(block_count(i.depth, graph.buffers[i.buffer].bytes_per_batch, block_bytes)
                 for i in graph.inserts.values())
    return total
