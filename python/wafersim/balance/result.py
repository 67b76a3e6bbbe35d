"""What the balancing pass returns: a pure description of new depths, insertions and load
delays, plus the graph rewritten with them. Only timing and memory change; who feeds whom
(the function the graph computes) stays the same."""

from __future__ import annotations

from dataclasses import dataclass, field

from .graph import InsertedBuffer, PipelineGraph

__all__ = ["BalanceResult"]


@dataclass(frozen=True)
class BalanceResult:
    """The outcome of :func:`~wafersim.balance.balance`.

    * ``depths``: final depth of every buffer; ``tuned``: the depth added to each tuned
      buffer (only those that grew);
    * ``inserted``: the whole buffers added on consumer edges;
    * ``delays``: how many steps each delayed load starts later (only those delayed);
    * ``levels``: every node's level (arrival time in batch steps) in the solution;
    * ``blocks``: memory blocks of every buffer and inserted buffer after balancing;
      ``blocks_before`` / ``blocks_after`` the totals;
    * ``status``: "optimal" or "time_limit" (a full balancing, optimality not proven);
      ``solver``: what found it ("milp", "lp", "lp (cross-check)"); ``seconds``: wall time
      of the solver calls; ``lower_bound``: the best bound on blocks_after the solver proved;
    * ``join_interval``: the predicted initiation interval of every join (steps per batch;
      1 when balanced), certified by the levels;
    * ``notes``: anything the caller should know (e.g. a cross-check that disagreed).
    """

    original: PipelineGraph
    graph: PipelineGraph
    mode: str
    block_bytes: int
    depths: dict[str, int]
    tuned: dict[str, int]
    inserted: tuple[InsertedBuffer, ...]
    delays: dict[str, int]
    levels: dict[str, int]
    blocks: dict[str, int]
    blocks_before: int
    blocks_after: int
    status: str
    solver: str
    seconds: float
    lower_bound: float
    join_interval: dict[str, float]
    notes: tuple[str, ...] = field(default=())

    @property
    def blocks_added(self) -> int:
        """Memory blocks the pass spends."""
        return self.blocks_after - self.blocks_before

    def summary(self) -> str:
        lines = [f"balanced ({self.mode} mode, {self.solver}, {self.status}, "
                 f"{self.seconds * 1e3:.1f} ms): {self.blocks_before} -> {self.blocks_after} "
                 f"blocks (+{self.blocks_added})"]
        for b, t in self.tuned.items():
            lines.append(f"  tune   {b}: depth {self.depths[b] - t} -> {self.depths[b]}")
        for ins in self.inserted:
            lines.append(f"  insert {ins.name}: depth {ins.depth}")
        for s, d in self.delays.items():
            lines.append(f"  delay  load {s} by {d}")
        if len(lines) == 1:
            lines.append("  nothing to change")
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()
