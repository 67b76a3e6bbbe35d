"""The IR of the balancing pass: one section cut as loads, stages and stage buffers.

A section cut starts and ends at off-chip memory [0128], [0136]. Inside it:

* a :class:`Load` reads batches from off-chip memory, starting after its ``offset`` (its
  load time, [0141]); it has no input buffer;
* a :class:`Stage` computes; it reads one batch from every input buffer and writes one to
  every output buffer, ``latency`` steps later. A stage with several input buffers is a
  *join* [0139]; one whose output buffer has several consumers, or that has several output
  buffers, is a fork. A stage without output buffers writes to off-chip memory;
* a :class:`Buffer` is a stage buffer [0136]: one producer, one or more consumers (a fan-out
  buffer keeps a batch until every consumer has read it), a ``depth`` in batches [0147] and
  the ``bytes_per_batch`` that sizes its memory;
* an :class:`InsertedBuffer` is a whole stage buffer placed on one consumer edge of a
  buffer, at the end of the path closest to that consumer [0187]. The pass creates them; a
  graph may also start with some (they are then fixed).

Everything is immutable: the pass returns a new graph and never touches the one it got.
Balancing runs per section cut; a graph is one cut (do not balance across a trip to
off-chip memory).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable, Mapping

import numpy as np

from .._args import INT_MAX, instance_arg, int_arg, items_arg, mapping_arg, show
from ..errors import ConfigError

__all__ = ["Load", "Stage", "Buffer", "InsertedBuffer", "PipelineGraph", "MAX_COUNT"]

#: The largest depth, offset, latency or byte count the IR takes (a C++ int; the solver
#: works in floats, exact far beyond the products of such numbers that real graphs reach).
MAX_COUNT = INT_MAX


def _plain(obj, *fields: str) -> None:
    """numpy integers and booleans in ``fields`` of a frozen record become Python ones
    (they are welcome as depths and sizes, as they are as coordinates); anything else is
    left for :class:`PipelineGraph` to check and name."""
    for f in fields:
        v = getattr(obj, f)
        if isinstance(v, np.bool_):
            object.__setattr__(obj, f, bool(v))
        elif isinstance(v, np.integer):
            object.__setattr__(obj, f, int(v))


@dataclass(frozen=True)
class Load:
    """A node that reads off-chip memory: its first batch leaves at step ``offset + 1``."""

    name: str
    offset: int = 0
    latency: int = 1

    def __post_init__(self):
        _plain(self, "offset", "latency")


@dataclass(frozen=True)
class Stage:
    """A compute stage: fires once per step at most; its output is readable ``latency``
    steps after it fired (1 = the next step)."""

    name: str
    latency: int = 1

    def __post_init__(self):
        _plain(self, "latency")


@dataclass(frozen=True)
class Buffer:
    """A stage buffer of ``depth`` batches from ``producer`` to ``consumers``.

    ``tunable=False`` keeps its depth as it is (e.g. a buffer whose memory is already
    placed); the pass may still insert buffers on its consumer edges.
    """

    name: str
    producer: str
    consumers: tuple[str, ...]
    depth: int
    bytes_per_batch: int = 1
    tunable: bool = True

    def __post_init__(self):
        c = self.consumers
        if c is None:
            c = ()
        elif isinstance(c, str):
            c = (c,)
        else:
            c = tuple(items_arg(f"consumers of buffer {show(self.name)}", c, "node names"))
        object.__setattr__(self, "consumers", c)
        _plain(self, "depth", "bytes_per_batch", "tunable")


@dataclass(frozen=True)
class InsertedBuffer:
    """A whole stage buffer of ``depth`` batches on the edge ``buffer -> consumer``: extra
    slots that only this consumer's backlog uses."""

    buffer: str
    consumer: str
    depth: int

    def __post_init__(self):
        _plain(self, "depth")

    @property
    def name(self) -> str:
        return f"{self.buffer}>{self.consumer}"


def _positive_int(value, what: str, minimum: int = 1) -> None:
    int_arg(what, value, minimum, MAX_COUNT)


def check_graph(graph) -> "PipelineGraph":
    """``graph`` itself when it is a :class:`PipelineGraph` (ConfigError otherwise)."""
    return instance_arg("graph", graph, PipelineGraph,
                        "a PipelineGraph (from from_text, from_dict, from_stages or by hand)")


def _name_of(value, what: str) -> str:
    """A node name a buffer refers to: a string (checked against the nodes later)."""
    if not isinstance(value, str):
        raise ConfigError(f"{what} must be a node name (a string), got {show(value)}")
    return value


class PipelineGraph:
    """One section cut: loads and stages joined by stage buffers (see the module docstring).

    Build it by hand from :class:`Load`, :class:`Stage`, :class:`Buffer` (and optionally
    :class:`InsertedBuffer`) objects, or with :func:`~wafersim.balance.from_text`,
    :func:`~wafersim.balance.from_dict` or :func:`~wafersim.balance.from_stages`. The
    constructor checks everything and raises :class:`~wafersim.ConfigError` naming the node
    or buffer at fault.
    """

    def __init__(self, nodes: Iterable[Load | Stage], buffers: Iterable[Buffer],
                 inserts: Iterable[InsertedBuffer] = ()):
        nodes = items_arg("nodes", nodes, "Load and Stage objects")
        buffers = items_arg("buffers", buffers, "Buffer objects")
        inserts = items_arg("inserts", inserts, "InsertedBuffer objects")
        if not nodes:
            raise ConfigError("the graph has no nodes: a section cut needs at least one load "
                              "(is the text, dict or list of stages empty?)")
        self.nodes: dict[str, Load | Stage] = {}
        for i, n in enumerate(nodes):
            if not isinstance(n, (Load, Stage)):
                raise ConfigError(f"nodes[{i}] must be a Load or a Stage, got {show(n)}")
            self._check_name(n.name, "node")
            if n.name in self.nodes:
                raise ConfigError(f"node {n.name!r} is declared twice")
            _positive_int(n.latency, f"latency of node {n.name!r}")
            if isinstance(n, Load):
                _positive_int(n.offset, f"offset of load {n.name!r}", 0)
            self.nodes[n.name] = n
        self.buffers: dict[str, Buffer] = {}
        for i, b in enumerate(buffers):
            self._add_buffer(b, i)
        self.inserts: dict[tuple[str, str], InsertedBuffer] = {}
        for i, ins in enumerate(inserts):
            self._add_insert(ins, i)
        self.inputs: dict[str, list[str]] = {v: [] for v in self.nodes}
        self.outputs: dict[str, list[str]] = {v: [] for v in self.nodes}
        for b in self.buffers.values():
            self.outputs[b.producer].append(b.name)
            for c in b.consumers:
                self.inputs[c].append(b.name)
        for v, n in self.nodes.items():
            if isinstance(n, Load) and self.inputs[v]:
                raise ConfigError(f"load {v!r} reads off-chip memory and cannot have input "
                                  f"buffers (it has {', '.join(self.inputs[v])})")
            if isinstance(n, Stage) and not self.inputs[v]:
                raise ConfigError(f"stage {v!r} has no input buffer; a node that reads "
                                  f"off-chip memory is a Load")
        self.order: tuple[str, ...] = self._topological_order()

    # ---- construction checks ------------------------------------------------------------
    @staticmethod
    def _check_name(name, what: str) -> None:
        if not isinstance(name, str) or not name or any(ch.isspace() for ch in name):
            raise ConfigError(f"a {what} name must be a non-empty string without spaces, "
                              f"got {show(name)}")

    def _add_buffer(self, b: Buffer, i: int) -> None:
        if not isinstance(b, Buffer):
            raise ConfigError(f"buffers[{i}] must be a Buffer, got {show(b)}")
        self._check_name(b.name, "buffer")
        if b.name in self.buffers:
            raise ConfigError(f"buffer {b.name!r} is declared twice")
        if b.producer is None or (isinstance(b.producer, str) and not b.producer):
            raise ConfigError(f"buffer {b.name!r} has no producer")
        _name_of(b.producer, f"producer of buffer {b.name!r}")
        if b.producer not in self.nodes:
            raise ConfigError(f"buffer {b.name!r}: producer {b.producer!r} is not a node")
        if not b.consumers:
            raise ConfigError(f"buffer {b.name!r} has no consumer")
        for c in b.consumers:
            _name_of(c, f"a consumer of buffer {b.name!r}")
            if c not in self.nodes:
                raise ConfigError(f"buffer {b.name!r}: consumer {c!r} is not a node")
        if len(set(b.consumers)) != len(b.consumers):
            raise ConfigError(f"buffer {b.name!r} lists a consumer twice: {b.consumers}")
        if isinstance(b.depth, (int, float)) and not isinstance(b.depth, bool) and b.depth < 0:
            raise ConfigError(f"buffer {b.name!r} has a negative depth {b.depth!r}")
        _positive_int(b.depth, f"depth of buffer {b.name!r} (batches)")
        _positive_int(b.bytes_per_batch, f"bytes_per_batch of buffer {b.name!r}")
        if not isinstance(b.tunable, bool):
            raise ConfigError(f"tunable of buffer {b.name!r} must be True or False, got "
                              f"{show(b.tunable)}")
        self.buffers[b.name] = b

    def _add_insert(self, ins: InsertedBuffer, i: int) -> None:
        if not isinstance(ins, InsertedBuffer):
            raise ConfigError(f"inserts[{i}] must be an InsertedBuffer, got {show(ins)}")
        _name_of(ins.buffer, "buffer of an inserted buffer")
        _name_of(ins.consumer, f"consumer of the inserted buffer on {ins.buffer!r}")
        b = self.buffers.get(ins.buffer)
        if b is None or ins.consumer not in b.consumers:
            raise ConfigError(f"inserted buffer {ins.name!r}: there is no buffer {ins.buffer!r} "
                              f"with consumer {ins.consumer!r}")
        if (ins.buffer, ins.consumer) in self.inserts:
            raise ConfigError(f"edge {ins.name!r} has two inserted buffers")
        _positive_int(ins.depth, f"depth of inserted buffer {ins.name!r}")
        self.inserts[(ins.buffer, ins.consumer)] = ins

    def _topological_order(self) -> tuple[str, ...]:
        """Kahn's order, ties in declaration order (deterministic); a cycle is an error."""
        indeg = {v: len(self.inputs[v]) for v in self.nodes}
        ready = [v for v in self.nodes if indeg[v] == 0]
        order: list[str] = []
        while ready:
            u = ready.pop(0)
            order.append(u)
            for b in self.outputs[u]:
                for c in self.buffers[b].consumers:
                    indeg[c] -= 1
                    if indeg[c] == 0:
                        ready.append(c)
        if len(order) < len(self.nodes):
            cycle = self._find_cycle({v for v in self.nodes if indeg[v] > 0})
            raise ConfigError(f"the graph has a cycle through node {cycle[0]!r}: "
                              f"{' -> '.join(cycle + [cycle[0]])} (a section cut is acyclic "
                              f"[0135])")
        return tuple(order)

    def _find_cycle(self, left: set[str]) -> list[str]:
        """A cycle among the nodes Kahn could not order (each has a predecessor in ``left``)."""
        v = min(left, key=list(self.nodes).index)
        seen: list[str] = []
        while v not in seen:  # walk against the data towards a repeat
            seen.append(v)
            v = next(self.buffers[b].producer for b in self.inputs[v]
                     if self.buffers[b].producer in left)
        cycle = seen[seen.index(v):][::-1]  # in data order
        first = min(cycle, key=list(self.nodes).index)
        k = cycle.index(first)
        return cycle[k:] + cycle[:k]

    # ---- queries ------------------------------------------------------------------------
    @property
    def loads(self) -> list[str]:
        return [v for v in self.order if isinstance(self.nodes[v], Load)]

    @property
    def joins(self) -> list[str]:
        """Nodes that read two or more buffers, in topological order."""
        return [v for v in self.order if len(self.inputs[v]) >= 2]

    @property
    def edges(self) -> list[tuple[str, str]]:
        """Every (buffer, consumer) edge, in declaration order."""
        return [(b.name, c) for b in self.buffers.values() for c in b.consumers]

    def producer(self, buffer: str) -> str:
        return self.buffers[buffer].producer

    def latency(self, node: str) -> int:
        return self.nodes[node].latency

    def inserted_depth(self, buffer: str, consumer: str) -> int:
        ins = self.inserts.get((buffer, consumer))
        return 0 if ins is None else ins.depth

    def capacity(self, buffer: str, consumer: str) -> int:
        """Batches the edge holds for this consumer: the buffer's depth plus its inserted
        buffer's."""
        return self.buffers[buffer].depth + self.inserted_depth(buffer, consumer)

    # ---- rewriting ----------------------------------------------------------------------
    def rewritten(self, *, depths: Mapping[str, int] | None = None,
                  inserts: Iterable[InsertedBuffer] = (),
                  offsets: Mapping[str, int] | None = None) -> "PipelineGraph":
        """A new graph with the given buffer depths, extra inserted buffers and load
        offsets; the structure (who feeds whom) stays the same."""
        depths = {} if depths is None else mapping_arg("depths", depths, "buffer -> depth")
        offsets = {} if offsets is None else mapping_arg("offsets", offsets, "load -> offset")
        inserts = items_arg("inserts", inserts, "InsertedBuffer objects")
        for name, given, known, what in (("depths", depths, self.buffers, "buffers"),
                                         ("offsets", offsets, self.loads, "loads")):
            unknown = [k for k in given if k not in known]
            if unknown:
                raise ConfigError(f"{name} names {show(unknown)}, which are not {what} of the "
                                  f"graph ({', '.join(known) or 'none'})")
        inserts = [*self.inserts.values(), *inserts]
        nodes = [replace(n, offset=offsets[n.name]) if n.name in offsets else n
                 for n in self.nodes.values()]
        buffers = [replace(b, depth=depths[b.name]) if b.name in depths else b
                   for b in self.buffers.values()]
        return PipelineGraph(nodes, buffers, inserts)

    def __eq__(self, other) -> bool:
        return (isinstance(other, PipelineGraph) and self.nodes == other.nodes
                and self.buffers == other.buffers and self.inserts == other.inserts)

    def __repr__(self) -> str:
        return (f"PipelineGraph({len(self.nodes)} nodes, {len(self.buffers)} buffers, "
                f"{len(self.joins)} joins)")

    def to_text(self) -> str:
        """The text form :func:`~wafersim.balance.from_text` reads back."""
        from .builders import to_text
        return to_text(self)
