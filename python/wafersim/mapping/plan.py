"""``ws.map``: a model compiled onto a wafer, and the ``Plan`` that describes it.

    plan = ws.map(model)                 # wafer sized automatically, blocks chosen to fit
    print(plan.describe())
    print(plan.listing(0, (1, 2)))       # the program of layer 0's PE (1, 2)
    plan.picture()                       # which PEs hold which layer, which colors run where

The plan loads one program per PE (program/), the routes of routes.py and the
model's weights; the wafer is then ready for ``ws.Trainer``.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..asm import Program, assemble, disassemble
from ..errors import ConfigError, ProgramError
from ..nn.sequential import Sequential
from . import task_ids as T
from .activation_threshold import check_activation_threshold
from .runtime_words import C_ATHR, Word
from .runtime_words import by_name as WORD_TABLE
from .block_shapes import pe_data_bytes
from .colors import ROLE_NAMES
from .lowering import loss_for, optimizer_for
from .pe_specs import pe_spec
from .program import PASSES, PeSpec, pe_source
from .placement import LayerBlock, branch_blocks, residual_blocks
from .routes import mapping_routes
from .weight_sparsity import mask_of

__all__ = ["Plan", "DTYPES"]

DTYPES = {"fp32": np.float32, "fp16": np.float16}


class Plan:
    """A model mapped onto a wafer: blocks, colors, routes and one program per PE."""

    def __init__(self, model: Sequential, wafer, blocks: list[LayerBlock], colors: dict,
                 dtype: str, slots: int, skip_depths: dict[int, int] | None = None,
                 loss=None, optimizer=None, activation_thresholds=None, cpgd: bool = False,
                 order_log: int = 0, weight_keep=None, keeps=None,
                 dp_weights: str = "current", weight_single=None):
        self.model = model
        #: the torch model ``model`` was converted from (its parameters follow training)
        self.source_model = None
        #: the loss and the optimizer compiled into the programs (ws.nn / ws.optim objects)
        self.loss = loss
        self.optimizer = optimizer
        self.loss_lowering = loss_for(loss)
        self.optimizer_lowering = optimizer_for(optimizer)
        self.wafer = wafer
        self.layers = blocks
        #: per layer: the threshold of the activations it sends (None: exact zeros skipped,
        #: no threshold word; always None for the output layer) [EC411]
        self.activation_thresholds: list[float | None] = list(
            activation_thresholds or [None] * len(blocks))
        #: per layer: None (dense) or {(r, c): the local outputs whose weights PE (r, c)
        #: stores} (weight sparsity; mapping/weight_sparsity.py)
        self.weight_keep: list[dict | None] = list(weight_keep or [None] * len(blocks))
        #: per layer: None, or its mask (n_out, n_in) of single weights, True = kept
        #: (stored by row and column records; mapping/single_weights.py)
        self.weight_single: list[np.ndarray | None] = list(weight_single or [None] * len(blocks))
        self.colors = colors
        #: per layer: it keeps its forward activations (False: a reverse checkpoint
        #: discards them and recomputes them in the backward pass; mapping/checkpoint.py)
        self.keeps: tuple[bool, ...] = tuple(keeps) if keeps is not None else (True,) * len(blocks)
        self.dtype = dtype
        self.slots = slots
        #: the programs carry CPGD's staleness counters (and an order log of ``order_log``
        #: entries per PE); ``Trainer(algo="cpgd")`` needs them (program/cpgd.py)
        self.cpgd = cpgd
        self.order_log = order_log
        #: which weights a sample's delta pass uses under CPGD [0634]: "current", or
        #: "forward" (a snapshot of W per slot on PEs with a delta pass: cpgd_snapshot.py)
        self.dp_weights = dp_weights
        #: (first, join) layer indices of every block with a join (residual and two-branch)
        self.residuals = residual_blocks([b.dense for b in blocks])
        #: (first, split, join) of every two-branch block: f = first..split-1, g = split..join
        self.branches = branch_blocks([b.dense for b in blocks])
        #: join layer -> skip vectors its finalizers' FIFOs hold
        self.skip_depths = {j: (skip_depths or {}).get(j, 1) for _, j in self.residuals}
        self.specs: dict[tuple[int, int], PeSpec] = {}
        self.programs: dict[tuple[int, int], Program] = {}
        #: the PEs of the loss's head column (CrossEntropyLoss's softmax), if any
        self.heads: list[tuple[int, int]] = (self.loss_lowering.head_points(blocks[-1])
                                             if self.loss_lowering.has_head else [])
        self.routes = mapping_routes(blocks, colors, wafer.cols, self.loss_lowering, self.keeps)
        self._build_programs()

    # ---- structure ------------------------------------------------------------------------
    def pes(self) -> list[tuple[int, int]]:
        """Every PE of the mapping, layer by layer, row-major, then the loss's head."""
        return [p for b in self.layers for p in b.points()] + list(self.heads)

    @property
    def rects(self) -> list[tuple[int, int, int, int]]:
        """Rectangles covering every PE of the mapping (a launch goes to each)."""
        out = [b.rect for b in self.layers]
        if self.heads:
            out.append((self.heads[0][0], self.heads[0][1], len(self.heads), 1))
        return out

    def launch_all(self, task) -> None:
        """Launches ``task`` (a name or local id) on every PE of the mapping."""
        for rect in self.rects:
            self.wafer.launch(task, rect=rect)

    @property
    def output_color(self) -> int:
        """The color the outputs (and loss shares) reach the host on."""
        role = self.loss_lowering.output_role or f"A{len(self.layers) % 2}"
        return self.colors[role]

    @property
    def target_color(self) -> int:
        """The color the host sends the targets on."""
        role = self.loss_lowering.target_role or f"J{len(self.layers) % 2}"
        return self.colors[role]

    def block_of(self, point) -> tuple[LayerBlock, int, int]:
        r, c = point
        for b in self.layers:
            if b.row0 <= r < b.row0 + b.rows and b.col0 <= c < b.col0 + b.cols:
                return b, r - b.row0, c - b.col0
        raise ConfigError(f"PE {tuple(point)} holds no layer of this plan")

    @property
    def input_ports(self) -> list[tuple[int, int]]:
        """Edge ports the inputs enter through: one per row of layer 0 (west edge)."""
        b = self.layers[0]
        return [(b.row0 + r, -1) for r in range(b.rows)]

    @property
    def output_ports(self) -> list[tuple[int, int]]:
        """Edge ports of the output layer's finalizers (east edge): outputs leave and
        targets enter there."""
        b = self.layers[-1]
        return [(b.row0 + c, self.wafer.cols) for c in range(b.cols)]

    @property
    def n_in(self) -> int:
        return self.layers[0].dense.n_in

    @property
    def n_out(self) -> int:
        return self.layers[-1].dense.n_out

    # ---- programs --------------------------------------------------------------------------
    def _spec(self, b: LayerBlock, r: int, c: int) -> PeSpec:
        return pe_spec(self, b, r, c)

    def _build_programs(self) -> None:
        cache: dict[str, Program] = {}
        limit = self.wafer.ce_config.data_bytes
        esize = 4 if self.dtype == "fp32" else 2
        for b in self.layers:
            for r in range(b.rows):
                for c in range(b.cols):
                    spec = self._spec(b, r, c)
                    extra = sum(part.extra_bytes(spec.nin, spec.nout, esize, spec.slots, r == c)
                                for part in spec.lowerings())
                    if spec.snapshot:   # dp_weights="forward": W per slot (cpgd_options.py)
                        extra += spec.nin * spec.ncols * spec.slots * esize
                    if spec.single:     # the records: value, G and index per kept weight
                        extra += (sum(spec.layout().memory_bytes().values())
                                  + 4 * spec.weight_count + 6 * spec.slots)
                    need = pe_data_bytes(spec.nin, spec.nout, esize, spec.in_slots, r == c,
                                         b.index == 0, spec.skip_depth, extra, spec.ncols)
                    if need > limit:
                        raise self._too_big(b, r, c, need, limit)
                    src = pe_source(spec)
                    prog = cache.get(src)
                    if prog is None:
                        try:
                            prog = assemble(src)
                        except ProgramError as e:
                            raise ConfigError(f"layer {b.index}, PE ({r}, {c}) of its "
                                              f"{b.rows} x {b.cols} block: {e}") from None
                        cache[src] = prog
                    if prog.data_bytes > limit:
                        raise self._too_big(b, r, c, prog.data_bytes, limit)
                    if prog.data_end > limit:   # high descriptors need the 15-bit space's end
                        raise ConfigError(
                            f"layer {b.index}, PE ({r}, {c}) of its {b.rows} x {b.cols} block "
                            f"keeps descriptors in the last bytes below {prog.data_end} (its "
                            f"optimizer's or loss's); this wafer's PEs have {limit} data bytes")
                    self.specs[b.at(r, c)] = spec
                    self.programs[b.at(r, c)] = prog
        if self.heads:
            L = len(self.layers)
            sources = self.loss_lowering.head_sources(
                self.layers[-1], self.colors, self.dtype,
                self.wafer.ce_config.input_queue_depth, self.colors[f"A{L % 2}"],
                self.colors[f"J{L % 2}"])
            for p, src in sources.items():
                try:
                    prog = assemble(src)
                except ProgramError as e:
                    raise ConfigError(f"the loss head's PE {p}: {e}") from None
                end = max((a + len(bytes_) for a, bytes_ in prog.data), default=0)
                if end > limit:
                    raise ConfigError(f"the loss head's PE {p} needs {end} data bytes, a PE "
                                      f"has {limit}; use more columns in the output layer")
                self.programs[p] = prog

    def _too_big(self, b: LayerBlock, r: int, c: int, need: int, limit: int) -> ConfigError:
        why = ""
        if self.cpgd:
            # CPGD's window (samples in flight) is bounded by the slots: say how many fit
            from .cpgd_options import cpgd_bytes, snapshot_bytes

            s = self._spec(b, r, c)
            esize = 4 if self.dtype == "fp32" else 2
            extra = sum(p.extra_bytes(s.nin, s.nout, esize, 1, r == c) for p in s.lowerings())
            fits = [k for k in range(1, self.slots + 1)
                    if pe_data_bytes(s.nin, s.nout, esize, k, r == c, b.index == 0, 0, extra)
                    + cpgd_bytes(k, self.order_log, r == c, s.snapshot)
                    + snapshot_bytes(b.index, s.nin, s.ncols, esize, k, self.dp_weights) <= limit]
            snap = (f", of which {s.nin * s.ncols * self.slots * esize} are the delta pass's "
                    f"weight snapshots (dp_weights='forward')" if s.snapshot else "")
            why = snap + (f" (cpgd=True with slots={self.slots}: CPGD's window of samples in "
                          f"flight is at most the slots, and about {max(fits)} fit this layer)"
                          if fits else " (cpgd=True: not even one slot fits this layer)")
        return ConfigError(
            f"layer {b.index} (Linear({b.dense.n_in}, {b.dense.n_out})) does not fit: PE ({r}, "
            f"{c}) of its {b.rows} x {b.cols} block needs {need} data bytes, a PE has {limit}"
            f"{why}; use more PEs (blocks=), fewer slots or dtype='fp16'")

    def pipeline_graph(self):
        """The stage-level pipeline graph of this mapping (``ws.balance``): a stage per
        layer block, a buffer per edge, each residual's skip FIFO at its depth."""
        from ..balance.mapped import model_graph

        return model_graph([b.dense for b in self.layers], self.skip_depths,
                           4 if self.dtype == "fp32" else 2)

    def listing(self, layer: int, pe) -> str:
        """Disassembly of the program of ``layer``'s PE ``pe`` = (row, col) within its block:
        ordinary CE instructions [0581]-[0603]."""
        b = self._layer(layer)
        r, c = self._pe_in(b, pe)
        return disassemble(self.programs[b.at(r, c)])

    def source(self, layer: int, pe) -> str:
        """The assembly text of that PE's program, with comments."""
        b = self._layer(layer)
        r, c = self._pe_in(b, pe)
        return self.programs[b.at(r, c)].source

    def _layer(self, layer) -> LayerBlock:
        if isinstance(layer, bool) or not isinstance(layer, numbers.Integral) or not 0 <= layer < len(self.layers):
            raise ConfigError(f"layer must be 0..{len(self.layers) - 1}, got {layer!r}")
        return self.layers[int(layer)]

    @staticmethod
    def _pe_in(b: LayerBlock, pe) -> tuple[int, int]:
        try:
            r, c = (int(v) for v in pe)
        except (TypeError, ValueError):
            raise ConfigError(f"pe must be a (row, col) pair within the block, got {pe!r}") from None
        if not (0 <= r < b.rows and 0 <= c < b.cols):
            raise ConfigError(f"layer {b.index} has {b.rows} x {b.cols} PEs; ({r}, {c}) is outside")
        return r, c

    def pass_of_pc(self, point) -> np.ndarray:
        """For PE ``point``: the pass (an index into ``PASSES``: forward, delta, chain,
        control) of every instruction address, from the task entries and the pass labels
        of its program."""
        point = tuple(point)
        cache = self.__dict__.setdefault("_pass_cache", {})
        if point not in cache:
            prog, spec = self.programs[point], self.specs.get(point)
            n = self.wafer.ce_config.max_instructions
            m = np.full(n, PASSES.index("control"), np.int8)
            fw, dl, ch = (PASSES.index(k) for k in ("forward", "delta", "chain"))
            tasks = {} if spec is None else {spec.a_in: fw, T.F_CLOSE: fw, T.F_CLOSE_END: fw, T.F_SENT: fw, T.FIN2: fw,
                     T.FIN3: fw, T.TX: fw, T.SK_SENT: fw, T.SK_IN: fw, T.SK_READ: fw, spec.d_col: dl,
                     T.B_CLOSE: dl, T.B_CLOSE_END: dl, T.H_SENT: dl, T.JREAD: dl, T.DFIN: dl,
                     T.DTX: dl, T.B_SENT: dl, T.APPLY: ch}
            if spec is not None and spec.j_in is not None:
                tasks[spec.j_in] = dl
            if spec is not None and spec.skip_in is not None:
                tasks[spec.skip_in] = fw
            for tid, k in tasks.items():
                a = prog.base + 4 * tid
                m[a:a + 4] = k
            marks = sorted((sym.address, name.rsplit("_", 1)[1]) for name, sym in prog.symbols.items()
                           if name.startswith("_pass_") and sym.kind == "code")
            for (a, name), nxt in zip(marks, marks[1:] + [(n, None)]):
                m[a:nxt[0]] = PASSES.index(name)
            cache[point] = m
        return cache[point]

    def code_address(self, point, label: str) -> int:
        return self.programs[tuple(point)].symbols[label].address

    # ---- loading and weights --------------------------------------------------------------
    def load(self) -> None:
        """Programs, routes, weights from the model, and each PE's ``main`` task run."""
        w = self.wafer
        w.ce_profile = True  # busy cycles per instruction: per-pass statistics
        for p, prog in self.programs.items():
            w.pe(*p).load(prog)
        self.routes.apply(w)
        self.write_weights(self.model)
        self._write_thresholds()
        self.launch_all("main")
        w.run()

    def _np(self):
        return DTYPES[self.dtype]

    def write_weights(self, model: Sequential | list) -> None:
        """Copies a model's (or a list of (W, b) pairs') parameters into PE memories, in the
        plan's dtype (fp16 rounds to nearest even)."""
        params = _params(model, self.layers)
        t = self._np()
        for b, (W, bias) in zip(self.layers, params):
            for r in range(b.rows):
                for c in range(b.cols):
                    spec = self.specs[b.at(r, c)]
                    if spec.single:     # the kept weights into the records
                        packed = spec.layout().pack(
                            W[spec.o0:spec.o0 + spec.nout, spec.i0:spec.i0 + spec.nin])
                        for name, words in packed.items():
                            self.wafer.memcpy_h2d(name, words, rect=b.at(r, c))
                    blk = np.zeros((spec.nin, spec.row_bytes // spec.esize), dtype=t)
                    kept = [spec.o0 + j for j in (range(spec.nout) if spec.keep is None else spec.keep)]
                    if spec.single:
                        kept = []
                    blk[:, :len(kept)] = W[kept, spec.i0:spec.i0 + spec.nin].T
                    self.wafer.memcpy_h2d("w", blk.ravel(), rect=b.at(r, c))
                    if r == c and spec.bias:
                        self.wafer.memcpy_h2d("bias", bias[spec.o0:spec.o0 + spec.nout].astype(t),
                                              rect=b.at(r, c))

    def read_weights(self) -> list[tuple[np.ndarray, np.ndarray | None]]:
        """(W, b) per layer, read back from PE memories (float32 arrays)."""
        out = []
        for b in self.layers:
            d = b.dense
            W = np.zeros((d.n_out, d.n_in), dtype=np.float32)
            bias = np.zeros(d.n_out, dtype=np.float32) if d.has_bias else None
            for r in range(b.rows):
                for c in range(b.cols):
                    s = self.specs[b.at(r, c)]
                    raw = self.wafer.memcpy_d2h("w", rect=b.at(r, c)).reshape(
                        s.nin, s.row_bytes // s.esize)
                    kept = [s.o0 + j for j in (range(s.nout) if s.keep is None else s.keep)]
                    if s.single:        # from the records
                        W[s.o0:s.o0 + s.nout, s.i0:s.i0 + s.nin] = s.layout().unpack(
                            self.wafer.memcpy_d2h("rec", rect=b.at(r, c)).ravel())
                    else:
                        W[kept, s.i0:s.i0 + s.nin] = raw[:, :len(kept)].T   # pruned: 0
                    if r == c and s.bias:
                        bias[s.o0:s.o0 + s.nout] = self.wafer.memcpy_d2h("bias", rect=b.at(r, c)).ravel()
            out.append((W, bias))
        return out

    def sync_model(self) -> None:
        """Copies the parameters the PEs hold into the model given to ``ws.map`` (and into
        the torch model it was converted from, if any), as a torch model holds its trained
        parameters."""
        params = self.read_weights()
        for d, (Wt, bias) in zip(self.model.dense_layers(), params):
            d.linear.load_trained(Wt, bias)
        if self.source_model is not None:
            from ..nn.torch_io import copy_parameters_to_torch

            copy_parameters_to_torch(self.source_model, params)

    def pes_with(self, where: str) -> list[tuple[int, int]]:
        """The PEs that hold a runtime word of scope ``where`` (runtime_words.py)."""
        if where in ("all", "layer0", "not layer0"):
            return [p for b in self.layers if (where != "layer0" or b.index == 0)
                    and (where != "not layer0" or b.index > 0) for p in b.points()] + (
                list(self.heads) if where == "all" else [])
        if where == "finalizers":
            return [b.finalizer(c) for b in self.layers for c in range(b.cols)]
        if where == "output finalizers":
            b = self.layers[-1]
            return [b.finalizer(c) for c in range(b.cols)]
        if where == "joins":
            return [p for p, s in self.specs.items() if s.final and s.join]
        raise ConfigError(f"unknown scope of a runtime word: {where!r}")  # pragma: no cover

    def write_word(self, word, value) -> None:
        """Writes runtime word ``word`` (a ``runtime_words.Word`` or its name) into every
        PE that has it: a u16 word as an integer 0..65535, a "value" word in the plan's
        number format. ConfigError when the format cannot hold ``value`` (it would turn
        into inf, or a nonzero value into 0)."""
        w = word if isinstance(word, Word) else WORD_TABLE.get(word)
        if w is None or w.kind == "buffer":
            raise ConfigError(f"{word!r} is not a runtime word of the PE programs")
        if w.kind == "u16":
            if not (isinstance(value, (int, np.integer)) and not isinstance(value, bool)
                    and 0 <= value <= 0xFFFF):
                raise ConfigError(f"runtime word {w.name} holds an integer 0..65535, got {value!r}")
            data = np.array([value], np.uint16)
        else:
            data = np.array([self.representable(w.name, value)], self._np())
        points = {p for p in self.pes_with(w.where) if w.name in self.programs[p].exports}
        for b in self.layers:      # a whole block at once where the word is in all of it
            pts = b.points()
            if all(p in points for p in pts) and len(pts) > 1:
                self.wafer.memcpy_h2d(w.name, data, rect=b.rect)
            else:
                for p in pts:
                    if p in points:
                        self.wafer.memcpy_h2d(w.name, data, rect=p)
        for p in self.heads:
            if p in points:
                self.wafer.memcpy_h2d(w.name, data, rect=p)

    def set_activation_threshold(self, value) -> None:
        """Changes the activation thresholds (EC411) between runs: the same forms as
        ``ws.map(activation_threshold=...)``; every layer mapped with a threshold needs
        one (a number >= 0), a layer mapped without one cannot take one (its program has
        no threshold test: map it with one, 0 for exact zero skipping)."""
        new = check_activation_threshold(value, len(self.layers))
        for k, (old, t) in enumerate(zip(self.activation_thresholds, new)):
            if (old is None) != (t is None):
                raise ConfigError(
                    f"activation_threshold of layer {k}: the layer was mapped "
                    + ("without a threshold; pass activation_threshold= to ws.map" if old is None
                       else f"with one ({old!r}); give it a number >= 0 (0: exact zeros), got None"))
        self._write_thresholds(new)
        self.activation_thresholds = new

    def _write_thresholds(self, values=None) -> None:
        """Writes each layer's threshold into its finalizers' runtime word c_athr, in the
        plan's number format (ConfigError when the format cannot hold it)."""
        values = self.activation_thresholds if values is None else values
        data = {k: np.array([self.representable(f"activation_threshold of layer {k}", t)],
                            self._np()) for k, t in enumerate(values) if t is not None}
        for k, arr in data.items():
            b = self.layers[k]
            for c in range(b.cols):
                self.wafer.memcpy_h2d(C_ATHR.name, arr, rect=b.finalizer(c))

    def representable(self, what: str, value: float) -> float:
        """``value`` if the plan's number format holds it: ConfigError naming ``what``
        and the format's limits when it would overflow to inf or a nonzero value would
        round to 0."""
        v = float(value)
        t = self._np()
        with np.errstate(over="ignore", under="ignore"):
            r = t(v)
        info = np.finfo(t)
        if not np.isfinite(v) or not np.isfinite(r) or (v != 0 and r == 0):
            raise ConfigError(
                f"{what} = {value!r} cannot be held by this plan's {self.dtype} numbers (they "
                f"hold magnitudes from {float(info.smallest_subnormal):.3g} to "
                f"{float(info.max):.6g}); choose another value or map with dtype='fp32'")
        return v

    def weight_masks(self) -> list[np.ndarray]:
        """Per layer: its weight mask (n_out, n_in), True where a weight is stored and
        trained, False where it is pruned (stays 0); all True for a dense layer."""
        return [m.copy() if m is not None else mask_of(b, k)
                for b, k, m in zip(self.layers, self.weight_keep, self.weight_single)]

    # ---- descriptions -----------------------------------------------------------------
    def memory(self) -> dict[tuple[int, int], dict]:
        """Per PE: data bytes used, instructions of its program, and the bytes of forward
        activations it keeps for the backward pass (``activation_bytes``: its activation
        slots, inputs and a finalizer's outputs, as its program lays them out; under a
        reverse checkpoint a discarding layer's inputs and the outputs it takes from its
        finalizers hold one slot: mapping/checkpoint.py)."""
        esize = 4 if self.dtype == "fp32" else 2
        out = {}
        for p, prog in self.programs.items():
            s = self.specs.get(p)
            acts = 0 if s is None else (
                s.nin * s.in_slots + (s.nout * s.out_slots if s.final else 0)) * esize
            out[p] = {"data_bytes": prog.data_bytes, "instructions": prog.instruction_count,
                      "activation_bytes": acts,
                      **_weight_bytes(s, esize),
                      # dp_weights="forward": W per slot, for the delta pass [0634]
                      "snapshot_bytes": (s.nin * s.ncols * s.slots * s.esize
                                         if s is not None and s.snapshot else 0)}
        return out

    def describe(self) -> str:
        w = self.wafer
        lines = [f"Plan: {len(self.layers)} layer(s), {len(self.pes())} PEs on a "
                 f"{w.rows} x {w.cols} wafer, {self.dtype}, up to {self.slots} sample(s) in "
                 "flight per PE"]
        for b in self.layers:
            lines.append("  " + b.describe())
            split = {j: s for _, s, j in self.branches}
            for p, j in self.residuals:
                if j == b.index and j in split:
                    lines.append(f"    joins the two-branch block of layers {p}..{j}: y = f(x) + "
                                 f"g(x) with f = layers {p}..{split[j] - 1}, g = layers "
                                 f"{split[j]}..{j}, both reading layer {p - 1}'s output; a FIFO "
                                 f"of {self.skip_depths[j]} f(x) vector(s) per finalizer")
                elif j == b.index:
                    lines.append(f"    joins the residual block of layers {p}..{j}: y = f(x) + x "
                                 f"with x from layer {p - 1}'s finalizers, a FIFO of "
                                 f"{self.skip_depths[j]} skip vector(s) per finalizer")
            ins, outs = b.in_groups, b.out_groups
            lines.append(f"    PE (r, c) holds W[O_c, I_r]: {len(ins)} input groups of "
                         f"{min(n for _, n in ins)}..{max(n for _, n in ins)}, {len(outs)} output "
                         f"groups of {min(n for _, n in outs)}..{max(n for _, n in outs)}; "
                         f"finalizers on the diagonal")
            if self.weight_keep[b.index] is not None:
                m = mask_of(b, self.weight_keep[b.index])
                lines.append(f"    weights pruned: {100 * (1 - m.mean()):.1f}% (whole PE column "
                             f"segments; {int(m.sum())} of {m.size} stored)")
            if self.weight_single[b.index] is not None:
                m = self.weight_single[b.index]
                lines.append(f"    weights pruned: {100 * (1 - m.mean()):.1f}% (single weights, "
                             f"stored as records with an index each; {int(m.sum())} of {m.size} "
                             f"stored)")
        head = (f"; a softmax head column of {len(self.heads)} PE(s) at {self.heads[0]}.."
                f"{self.heads[-1]}" if self.heads else "")
        lines.append(f"  loss {self.loss!r}{head}; optimizer {self.optimizer!r}")
        mem = self.memory()
        top = max(mem.values(), key=lambda m: m["data_bytes"])
        lines.append(f"  peak PE memory: {top['data_bytes']} of "
                     f"{w.ce_config.data_bytes} data bytes, up to "
                     f"{max(m['instructions'] for m in mem.values())} instructions")
        lines.append("  colors: " + ", ".join(f"{k}={v} ({ROLE_NAMES[k]})"
                                              for k, v in self.colors.items()))
        lines.append(f"  inputs enter at {self.input_ports[0]}..{self.input_ports[-1]} (west edge); "
                     f"outputs leave and targets enter at {self.output_ports[0]}.."
                     f"{self.output_ports[-1]} (east edge)")
        return "\n".join(lines)

    def picture(self, ax=None):
        """Which PEs hold which layer and where each color runs (a matplotlib Figure)."""
        from ..viz.training_plots import plot_placement

        return plot_placement(self, ax=ax)

    def __repr__(self) -> str:
        shapes = ", ".join(f"{b.rows}x{b.cols}" for b in self.layers)
        res = ""
        if self.residuals:
            depths = ", ".join(str(d) for d in self.skip_depths.values())
            res = f", {len(self.residuals)} join(s) with skip depth {depths}"
        return f"Plan({len(self.layers)} layers on {shapes} PEs{res}, {self.dtype})"


def _params(model, blocks) -> list[tuple[np.ndarray, np.ndarray | None]]:
    if isinstance(model, Sequential):
        dense = model.dense_layers()
        params = [(d.linear.weight, d.linear.bias) for d in dense]
    else:
        params = list(model)
    if len(params) != len(blocks):
        raise ConfigError(f"expected parameters for {len(blocks)} layers, got {len(params)}")
    out = []
    for b, (W, bias) in zip(blocks, params):
        W = np.asarray(W, dtype=np.float32)
        if W.shape != (b.dense.n_out, b.dense.n_in):
            raise ConfigError(f"layer {b.index}: weight shape {W.shape}, expected "
                              f"{(b.dense.n_out, b.dense.n_in)}")
        if b.dense.has_bias:
            bias = np.asarray(bias, dtype=np.float32)
            if bias.shape != (b.dense.n_out,):
                raise ConfigError(f"layer {b.index}: bias shape {bias.shape}, expected "
                                  f"({b.dense.n_out},)")
        out.append((W, bias))
    return out


def _weight_bytes(s, esize: int) -> dict:
    """Bytes of a PE's stored weight values and of their index: single weights (records'
    entries and tables: mapping/single_weights.py), pruned segments (the column table),
    dense (none)."""
    if s is None:
        return {"weight_values": 0, "weight_index": 0}
    if s.single:
        return s.layout().memory_bytes()
    return {"weight_values": s.nin * (s.ncols if s.keep is None or s.keep else 0) * esize,
            "weight_index": 2 * s.nout if s.sparse else 0}
