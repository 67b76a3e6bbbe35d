"""Ways to build a :class:`PipelineGraph` other than by hand: from plain stage and buffer
records (what a mapped model provides), from a dict, and from a small text form.

Text form, one item per line (``#`` starts a comment)::

    load   src            [offset=0] [latency=1]
    stage  s1             [latency=1]
    buffer b1 src -> s1,j depth=2 [bytes=4096] [fixed]
    insert b1 -> j depth=1

Nodes a buffer names without a ``load``/``stage`` line are created: a load if no buffer
feeds them, else a stage of latency 1.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from .._args import bool_arg, items_arg, mapping_arg, show, str_arg
from ..errors import ConfigError
from ..values import is_integer
from .graph import Buffer, InsertedBuffer, Load, PipelineGraph, Stage, check_graph

__all__ = ["from_stages", "from_dict", "from_text", "to_text"]

_NODE_KEYS = {"name", "latency", "offset", "load"}
_BUFFER_KEYS = {"name", "producer", "consumers", "depth", "bytes_per_batch", "tunable"}


def _get(record: Any, key: str, default=None):
    if isinstance(record, Mapping):
        return record.get(key, default)
    return getattr(record, key, default)


def _record_name(record: Any, where: str, key: str) -> str:
    """The ``key`` (a name) of a record: a mapping or an object with that attribute."""
    name = _get(record, key)
    if not isinstance(name, str):
        raise ConfigError(f"{where} must be a record (a dict or an object) whose {key!r} is a "
                          f"name, got {show(record)}")
    return name


def _check_keys(record: Any, allowed: set[str], what: str) -> None:
    if isinstance(record, Mapping):
        unknown = sorted(set(record) - allowed, key=repr)
        if unknown:
            raise ConfigError(f"{what}: unknown key(s) {', '.join(map(repr, unknown))}; "
                              f"expected some of {', '.join(sorted(allowed))}")


def from_stages(stages: Iterable[Any], buffers: Iterable[Any],
                inserts: Iterable[Any] = ()) -> PipelineGraph:
    """The generic builder: a graph from plain records (mappings or objects with attributes).

    This is what a builder "from a mapped model" calls. Such a builder walks the placed
    layer blocks of one section cut and provides:

    * one stage record per layer block: ``name``, ``latency`` (steps from the block
      firing on a batch to its output being readable downstream, at least 1), and
      ``load=True`` plus ``offset`` for the blocks fed straight from the host or off-chip
      memory (the offset is the step before its first batch can enter);
    * one buffer record per block-to-block edge: ``name``, ``producer``, ``consumers``
      (several for a fork such as a residual skip or Q/K/V), ``depth`` (batches its PE
      memory holds today), ``bytes_per_batch`` (bytes of one batch of activations on that
      edge: what sizes its memory blocks) and ``tunable=False`` for memory already placed;
    * the fork and join structure follows from the records: a stage reading several
      buffers is a join (residual add, attention product).

    The pass's ``block_bytes`` is then the bytes of PE memory one block gives to buffering.
    """
    nodes = []
    for k, s in enumerate(items_arg("stages", stages, "stage records")):
        name = _record_name(s, f"stages[{k}]", "name")
        _check_keys(s, _NODE_KEYS, f"stage {show(name)}")
        latency = _get(s, "latency", 1)
        load = _get(s, "load", False)
        if bool_arg(f"load of stage {show(name)}", False if load is None else load):
            nodes.append(Load(name, offset=_get(s, "offset", 0), latency=latency))
        else:
            offset = _get(s, "offset")
            if offset is not None and not (is_integer(offset) and offset == 0):
                raise ConfigError(f"stage {show(name)}: only a load has an offset, got "
                                  f"offset={show(offset)}")
            nodes.append(Stage(name, latency=latency))
    bufs = []
    for k, b in enumerate(items_arg("buffers", buffers, "buffer records")):
        name = _record_name(b, f"buffers[{k}]", "name")
        _check_keys(b, _BUFFER_KEYS, f"buffer {show(name)}")
        if _get(b, "depth") is None:
            raise ConfigError(f"buffer {show(name)} has no depth")
        bufs.append(Buffer(name, _get(b, "producer"), _get(b, "consumers"), _get(b, "depth"),
                           bytes_per_batch=_get(b, "bytes_per_batch", 1),
                           tunable=_get(b, "tunable", True)))
    ins = [InsertedBuffer(_record_name(i, f"inserts[{k}]", "buffer"), _get(i, "consumer"),
                          _get(i, "depth"))
           for k, i in enumerate(items_arg("inserts", inserts, "inserted-buffer records"))]
    return PipelineGraph(nodes, bufs, ins)


def from_dict(spec: Mapping[str, Any]) -> PipelineGraph:
    """A graph from a dict::

        {"loads": {"src": {"offset": 0}},            # or a list of names
         "stages": {"s1": {"latency": 1}, "j": {}},  # or a list of names
         "buffers": {"b1": {"from": "src", "to": ["s1", "j"], "depth": 2,
                            "bytes": 4096, "tunable": True}},
         "inserts": [{"buffer": "b1", "consumer": "j", "depth": 1}]}

    Nodes only named by buffers are created (a load if nothing feeds them, else a stage).
    """
    mapping_arg("spec", spec, "graph sections (loads, stages, buffers, inserts)")
    unknown = sorted(set(spec) - {"loads", "stages", "buffers", "inserts"}, key=repr)
    if unknown:
        raise ConfigError(f"graph spec: unknown key(s) {', '.join(map(repr, unknown))}; "
                          f"expected some of loads, stages, buffers, inserts")

    def named(section: str) -> dict[str, dict]:
        """A section as {name: options}: a dict of them, or a list of names."""
        items = spec.get(section, {})
        if not isinstance(items, Mapping):
            items = {k: None for k in items_arg(f"spec[{section!r}]", items, "names")}
        out = {}
        for k, v in items.items():
            if not isinstance(k, str):
                raise ConfigError(f"spec[{section!r}] names {show(k)}: a name is a string")
            out[k] = dict(mapping_arg(f"spec[{section!r}][{k!r}]", {} if v is None else v,
                                      "options"))
        return out

    stages = [{"name": k, "load": True, **v} for k, v in named("loads").items()]
    stages += [{"name": k, **v} for k, v in named("stages").items()]
    buffers = []
    for name, b in named("buffers").items():
        unknown = sorted(set(b) - {"from", "to", "depth", "bytes", "tunable"})
        if unknown:
            raise ConfigError(f"buffer {name!r}: unknown key(s) {', '.join(map(repr, unknown))}"
                              f"; expected from, to, depth, bytes, tunable")
        buffers.append({"name": name, "producer": b.get("from"), "consumers": b.get("to"),
                        "depth": b.get("depth"), "bytes_per_batch": b.get("bytes", 1),
                        "tunable": b.get("tunable", True)})
    return from_stages(_add_implicit_nodes(stages, buffers), buffers, spec.get("inserts", ()))


def _add_implicit_nodes(stages: list[dict], buffers: list[dict]) -> list[dict]:
    declared = {s["name"] for s in stages}
    fed = {c for b in buffers for c in _as_tuple(b["consumers"])}
    implicit = []
    for b in buffers:
        for v in (b["producer"], *_as_tuple(b["consumers"])):
            if isinstance(v, str) and v and v not in declared:
                declared.add(v)
                implicit.append({"name": v, "load": v not in fed})
    return stages + implicit


def _as_tuple(x) -> tuple:
    """The consumer names of a record (what cannot be read as names is left for
    :class:`Buffer` to refuse)."""
    if isinstance(x, str):
        return (x,)
    try:
        return tuple(c for c in x if isinstance(c, str))
    except TypeError:
        return ()


def _int(text: str, where: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ConfigError(f"{where}: {text!r} is not an integer") from None


def _options(tokens: list[str], allowed: set[str], where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for tok in tokens:
        if tok == "fixed" and "fixed" in allowed:
            out["fixed"] = True
            continue
        key, eq, value = tok.partition("=")
        if not eq or key not in allowed or key == "fixed":
            raise ConfigError(f"{where}: cannot read {tok!r}; expected "
                              f"{', '.join(sorted(k + ('' if k == 'fixed' else '=N') for k in allowed))}")
        out[key] = _int(value, where)
    return out


def from_text(text: str) -> PipelineGraph:
    """A graph from the text form of the module docstring."""
    str_arg("text", text, "the text form of a graph (a str)")
    spec: dict[str, dict] = {"loads": {}, "stages": {}, "buffers": {}}
    inserts = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        where = f"line {lineno} ({line!r})"
        kind, *rest = line.split()
        if kind in ("load", "stage"):
            if not rest:
                raise ConfigError(f"{where}: a {kind} needs a name")
            allowed = {"offset", "latency"} if kind == "load" else {"latency"}
            spec[kind + "s"][rest[0]] = _options(rest[1:], allowed, where)
        elif kind == "buffer":
            if len(rest) >= 2 and rest[1] == "->":
                raise ConfigError(f"{where}: buffer {rest[0]!r} has no producer")
            if len(rest) < 4 or rest[2] != "->":
                raise ConfigError(f"{where}: expected 'buffer NAME PRODUCER -> CONSUMER[,...] "
                                  f"depth=N [bytes=N] [fixed]'")
            name, producer, _, consumers, *opts = rest
            o = _options(opts, {"depth", "bytes", "fixed"}, where)
            if name in spec["buffers"]:
                raise ConfigError(f"{where}: buffer {name!r} is declared twice")
            spec["buffers"][name] = {"from": producer, "to": consumers.split(","),
                                     "depth": o.get("depth"), "bytes": o.get("bytes", 1),
                                     "tunable": not o.get("fixed", False)}
        elif kind == "insert":
            if len(rest) < 3 or rest[1] != "->":
                raise ConfigError(f"{where}: expected 'insert BUFFER -> CONSUMER depth=N'")
            o = _options(rest[3:], {"depth"}, where)
            inserts.append({"buffer": rest[0], "consumer": rest[2], "depth": o.get("depth")})
        else:
            raise ConfigError(f"{where}: a line starts with load, stage, buffer or insert")
    spec["inserts"] = inserts
    return from_dict(spec)


def to_text(graph: PipelineGraph) -> str:
    """The text form of ``graph`` (what :func:`from_text` reads back)."""
    check_graph(graph)
    lines = []
    for v in graph.nodes.values():
        if isinstance(v, Load):
            lines.append(f"load {v.name} offset={v.offset} latency={v.latency}")
        else:
            lines.append(f"stage {v.name} latency={v.latency}")
    for b in graph.buffers.values():
        fixed = "" if b.tunable else " fixed"
        lines.append(f"buffer {b.name} {b.producer} -> {','.join(b.consumers)} "
                     f"depth={b.depth} bytes={b.bytes_per_batch}{fixed}")
    for ins in graph.inserts.values():
        lines.append(f"insert {ins.buffer} -> {ins.consumer} depth={ins.depth}")
    return "\n".join(lines) + "\n"
