"""Memory cost of stage buffers: the seed's PMUs become blocks of PE memory.

A buffer of ``depth`` batches of ``bytes_per_batch`` bytes takes

    blocks = ceil(depth * bytes_per_batch / block_bytes)

blocks of ``block_bytes`` each: the resource constraint ``pmu * depth_per_PMU >= depth``
of [0178] with ``depth_per_PMU = block_bytes / bytes_per_batch`` per edge (a batch may span
several blocks). The seed writes ">" for new buffers; we read it as ">=" like the one for
existing buffers, so a buffer of exactly one block's worth costs one block (docs/balance.md).
"""

from __future__ import annotations

from .graph import PipelineGraph

__all__ = ["blocks", "graph_blocks"]


def blocks(depth: int, bytes_per_batch: int, block_bytes: int) -> int:
    """Blocks a buffer of ``depth`` batches needs (0 for an absent buffer)."""
    return -(-depth * bytes_per_batch // block_bytes)


def graph_blocks(graph: PipelineGraph, block_bytes: int) -> int:
    """Blocks every buffer and inserted buffer of ``graph`` needs."""
    total = sum(blocks(b.depth, b.bytes_per_batch, block_bytes) for b in graph.buffers.values())
    total += sum(blocks(i.depth, graph.buffers[i.buffer].bytes_per_batch, block_bytes)
                 for i in graph.inserts.values())
    return total
