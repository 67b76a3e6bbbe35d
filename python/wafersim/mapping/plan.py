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
from ..balance.mapped import balanced_skip_depths, check_skip_depth
from ..errors import ConfigError, ProgramError
from ..nn.sequential import DenseLayer, Sequential
from . import task_ids as T
from .block_shapes import choose_blocks, pe_data_bytes
from .colors import ROLE_NAMES, allocate_colors, mapping_roles
from .lowering import activation_for, loss_for, optimizer_for
from .program import PASSES, PeSpec, pe_source
from .placement import LayerBlock, branch_blocks, check_shapes, residual_blocks
from .routes import mapping_routes

__all__ = ["Plan", "map_model", "DTYPES"]

DTYPES = {"fp32": np.float32, "fp16": np.float16}


class Plan:
    """A model mapped onto a wafer: blocks, colors, routes and one program per PE."""

    def __init__(self, model: Sequential, wafer, blocks: list[LayerBlock], colors: dict,
                 dtype: str, slots: int, skip_depths: dict[int, int] | None = None,
                 loss=None, optimizer=None):
        self.model = model
        #: the loss and the optimizer compiled into the programs (ws.nn / ws.optim objects)
        self.loss = loss
        self.optimizer = optimizer
        self.loss_lowering = loss_for(loss)
        self.optimizer_lowering = optimizer_for(optimizer)
        self.wafer = wafer
        self.layers = blocks
        self.colors = colors
        self.dtype = dtype
        self.slots = slots
        #: (first, join) layer indices of every block with a join (residual and two-branch)
        self.residuals = residual_blocks([b.dense for b in blocks])
        #: (first, split, join) of every two-branch block: f = first..split-1, g = split..join
        self.branches = branch_blocks([b.dense for b in blocks])
        #: join layer -> skip vectors its finalizers' FIFOs hold
        self.skip_depths = {j: (skip_depths or {}).get(j, 1) for _, j in self.residuals}
        self.specs: dict[tuple[int, int], PeSpec] = {}
        self.programs: dict[tuple[int, int], Program] = {}
        self.routes = mapping_routes(blocks, colors, wafer.cols)
        self._build_programs()

    # ---- structure ------------------------------------------------------------------------
    def pes(self) -> list[tuple[int, int]]:
        """Every PE of the mapping, layer by layer, row-major."""
        return [p for b in self.layers for p in b.points()]

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
        col = self.colors
        L = len(self.layers)
        d = b.dense
        i0, nin = b.in_groups[r]
        o0, nout = b.out_groups[c]
        if r < c:
            p_out, p_in = col[f"P{r % 2}"], (col[f"P{(r - 1) % 2}"] if r > 0 else None)
        elif r > c:
            p_out = col[f"P{1 - r % 2}"]
            p_in = col[f"P{r % 2}"] if r < b.rows - 1 else None
        else:
            p_out = p_in = None
        if b.index > 0:
            h_out = col[f"H{c % 2}"] if c > 0 else col[f"J{b.index % 2}"]
            h_in = col[f"H{(c + 1) % 2}"] if c < b.cols - 1 else None
        else:
            h_out = h_in = None
        a_in = col[f"A{b.index % 2}"]
        res_only = [(p, j) for p, j in self.residuals
                    if all(j != jj for _, _, jj in self.branches)]
        forks = {p - 1 for p, _, _ in self.branches}
        if any(b.index in (p, s) for p, s, _ in self.branches):
            a_in = col["X"]            # a two-branch block's first layers read the fork
        if c == 0 and any(b.index == s for _, s, _ in self.branches):
            h_out = col["G"]           # branch g's dL/dx, to the east end of f's first layer
        extra = {}
        if r == c:
            extra = dict(a_out=col["X"] if b.index in forks else col[f"A{(b.index + 1) % 2}"],
                         j_in=col[f"J{(b.index + 1) % 2}"],
                         d_send=b.rows > 1,
                         p_low=col[f"P{(c - 1) % 2}"] if c > 0 else None,
                         p_high=col[f"P{c % 2}"] if c < b.rows - 1 else None)
            if any(p - 1 == b.index for p, _ in res_only):
                extra["skip_out"] = col["S"]
            if any(s - 1 == b.index for _, s, _ in self.branches):
                # branch f's last layer: its output goes dense to the join, dL/dy comes back
                extra.update(a_out=None, skip_out=col["S"], j_in=col["K"])
            if any(j == b.index for _, j in res_only):
                extra.update(skip_in=col["S"], skip_depth=self.skip_depths[b.index],
                             skip_back=col["B"])
            if any(j == b.index for _, _, j in self.branches):
                extra.update(skip_in=col["S"], skip_depth=self.skip_depths[b.index],
                             skip_back=col["K"])
        if c == b.cols - 1 and any(p == b.index for p, _ in res_only):
            extra["skip_grad_in"] = col["B"]
        if c == b.cols - 1 and any(p == b.index for p, _, _ in self.branches):
            extra["skip_grad_in"] = col["G"]
        last = b.index == L - 1
        return PeSpec(layer=b.index, last=last, row=r, col=c, rows=b.rows,
                      cols=b.cols, i0=i0, nin=nin, o0=o0, nout=nout,
                      act=activation_for(d.activation, d.act_module),
                      bias=d.has_bias, dtype=self.dtype, slots=self.slots,
                      n_out_layer=d.n_out, qcap=self.wafer._core.ce_config.input_queue_depth,
                      optimizer=self.optimizer_lowering,
                      loss=self.loss_lowering if last and r == c else None,
                      a_in=a_in, d_col=col["D"],
                      p_out=p_out, p_in=p_in, h_out=h_out, h_in=h_in, **extra)

    def _build_programs(self) -> None:
        cache: dict[str, Program] = {}
        limit = self.wafer._core.ce_config.data_bytes
        esize = 4 if self.dtype == "fp32" else 2
        for b in self.layers:
            for r in range(b.rows):
                for c in range(b.cols):
                    spec = self._spec(b, r, c)
                    need = pe_data_bytes(spec.nin, spec.nout, esize, spec.slots, r == c,
                                         b.index == 0, spec.skip_depth)
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
                    end = max((a + len(bytes_) for a, bytes_ in prog.data), default=0)
                    if end > limit:
                        raise self._too_big(b, r, c, end, limit)
                    self.specs[b.at(r, c)] = spec
                    self.programs[b.at(r, c)] = prog

    def _too_big(self, b: LayerBlock, r: int, c: int, need: int, limit: int) -> ConfigError:
        return ConfigError(
            f"layer {b.index} (Linear({b.dense.n_in}, {b.dense.n_out})) does not fit: PE ({r}, "
            f"{c}) of its {b.rows} x {b.cols} block needs {need} data bytes, a PE has {limit}; "
            f"use more PEs (blocks=), fewer slots or dtype='fp16'")

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
            prog, spec = self.programs[point], self.specs[point]
            n = self.wafer._core.ce_config.max_instructions
            m = np.full(n, PASSES.index("control"), np.int8)
            fw, dl, ch = (PASSES.index(k) for k in ("forward", "delta", "chain"))
            tasks = {spec.a_in: fw, T.F_CLOSE: fw, T.F_CLOSE_END: fw, T.F_SENT: fw, T.FIN2: fw,
                     T.FIN3: fw, T.TX: fw, T.SK_SENT: fw, T.SK_IN: fw, T.SK_READ: fw, spec.d_col: dl,
                     T.B_CLOSE: dl, T.B_CLOSE_END: dl, T.H_SENT: dl, T.JREAD: dl, T.DFIN: dl,
                     T.DTX: dl, T.B_SENT: dl, T.APPLY: ch}
            if spec.j_in is not None:
                tasks[spec.j_in] = dl
            if spec.skip_in is not None:
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
        w._core.set_ce_profile(True)  # busy cycles per instruction: per-pass statistics
        for p, prog in self.programs.items():
            w.pe(*p).load(prog)
        self.routes.apply(w)
        self.write_weights(self.model)
        for b in self.layers:
            w.launch("main", rect=b.rect)
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
                    blk = np.zeros((spec.nin, spec.nout + spec.slots), dtype=t)
                    blk[:, :spec.nout] = W[spec.o0:spec.o0 + spec.nout, spec.i0:spec.i0 + spec.nin].T
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
                    raw = self.wafer.memcpy_d2h("w", rect=b.at(r, c)).reshape(s.nin, s.nout + s.slots)
                    W[s.o0:s.o0 + s.nout, s.i0:s.i0 + s.nin] = raw[:, :s.nout].T
                    if r == c and s.bias:
                        bias[s.o0:s.o0 + s.nout] = self.wafer.memcpy_d2h("bias", rect=b.at(r, c)).ravel()
            out.append((W, bias))
        return out

    def set_words(self, name: str, value, *, finalizers_only: bool = False, last_only: bool = False) -> None:
        """Writes one runtime variable of the PE programs (mode, learning rate, ...)."""
        for b in self.layers:
            if last_only and b.index != len(self.layers) - 1:
                continue
            if finalizers_only:
                for c in range(b.cols):
                    self.wafer.memcpy_h2d(name, np.atleast_1d(value), rect=b.finalizer(c))
            else:
                self.wafer.memcpy_h2d(name, np.atleast_1d(value), rect=b.rect)

    # ---- descriptions -----------------------------------------------------------------
    def memory(self) -> dict[tuple[int, int], dict]:
        """Per PE: data bytes used and instructions of its program."""
        out = {}
        for p, prog in self.programs.items():
            end = max((a + len(bb) for a, bb in prog.data), default=0)
            out[p] = {"data_bytes": end, "instructions": prog.instruction_count}
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
        mem = self.memory()
        top = max(mem.values(), key=lambda m: m["data_bytes"])
        lines.append(f"  peak PE memory: {top['data_bytes']} of "
                     f"{w._core.ce_config.data_bytes} data bytes, up to "
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


def _origin(origin) -> tuple[int, int]:
    try:
        r, c = origin
        if any(isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 0 for v in (r, c)):
            raise TypeError
    except (TypeError, ValueError):
        raise ConfigError(f"origin must be a (row, col) pair of non-negative integers, "
                          f"got {origin!r}") from None
    return int(r), int(c)


def map_model(model, wafer=None, *, blocks=None, dtype: str = "fp32", origin=(0, 0),
              slots: int | None = None, skip_depth="balanced", loss=None,
              optimizer=None) -> Plan:
    """Places ``model`` (a ``ws.nn.Sequential`` or a ``torch.nn.Sequential``) onto a wafer.

    * ``wafer``: None sizes one automatically (rows of the first block, columns of all
      blocks, 24 colors); a given wafer must hold the blocks at ``origin``.
    * ``blocks``: (rows, cols) per Linear layer; None chooses shapes that fit PE memory.
      Rules: cols <= rows, and a layer's rows equal the previous layer's cols.
    * ``dtype``: "fp32" or "fp16" (weights, activations, partial sums, deltas).
    * ``slots``: samples a PE can hold in flight (activation slots); default 2 x layers
      (SGD uses one; mini-batches stream up to this many through the pipeline).
    * ``skip_depth``: skip vectors the join of a residual block holds (its FIFO): 1..64,
      a {join layer: depth} dict, or "balanced" (the depth ``ws.balance`` chooses so that
      the join does not stall the pipeline; docs/balance.md, "On the wafer").
    """
    from ..nn.losses import MSELoss
    from ..optim import SGD
    from ..wafer import Wafer

    loss = MSELoss() if loss is None else loss
    optimizer = SGD() if optimizer is None else optimizer
    if not isinstance(model, Sequential):
        if type(model).__module__.startswith("torch"):
            from ..nn.torch_io import from_torch

            model = from_torch(model)
        else:
            raise ConfigError(f"map() takes a ws.nn.Sequential (or torch.nn.Sequential), got "
                              f"{type(model).__name__}")
    if dtype not in DTYPES:
        raise ConfigError(f"dtype must be 'fp32' or 'fp16', got {dtype!r}")
    dense: list[DenseLayer] = model.dense_layers()
    for i, d in enumerate(dense):
        if d.activation not in ("relu", "sigmoid", "tanh", "identity"):
            raise ConfigError(f"layer {i}: activation {d.activation!r} is not mapped")
    if slots is None:
        slots = 2 * len(dense)
    if isinstance(slots, bool) or not isinstance(slots, numbers.Integral) or not 1 <= slots <= 64:
        raise ConfigError(f"slots must be an integer 1..64, got {slots!r}")
    r0, c0 = _origin(origin)
    esize = 4 if dtype == "fp32" else 2
    skip_depths = check_skip_depth(skip_depth, dense)
    if skip_depths == "balanced":
        skip_depths = balanced_skip_depths(dense, esize)
    deepest = max(skip_depths.values(), default=1)
    data_bytes = (wafer._core.ce_config.data_bytes if wafer is not None else 32768)
    if blocks is None:
        shapes = choose_blocks(dense, esize, int(slots), data_bytes,
                               max_rows=(wafer.rows - r0) if wafer is not None else None,
                               skip_depth=deepest)
    else:
        shapes = check_shapes(dense, blocks)
    width = sum(c for _, c in shapes)
    height = shapes[0][0]
    if wafer is None:
        wafer = Wafer(r0 + height, c0 + width)
    else:
        if not isinstance(wafer, Wafer):
            raise ConfigError(f"wafer must be a ws.Wafer or None, got {type(wafer).__name__}")
        if wafer.mode != "colors":
            raise ConfigError("the mapping routes colors: use a Wafer with mode='colors'")
        if r0 + height > wafer.rows or c0 + width > wafer.cols:
            raise ConfigError(f"the blocks need {height} x {width} PEs at origin {(r0, c0)}; the "
                              f"wafer is {wafer.rows} x {wafer.cols}")
    cfg = wafer._core.ce_config
    if cfg.microthreads < 8:
        raise ConfigError(f"the mapping uses 8 microthread entries; this wafer's CEs have "
                          f"{cfg.microthreads}")
    if wafer.colors > T.STAGE_DTX:
        raise ConfigError(f"the mapping stages its sends in local queues {T.STAGE_DTX} and "
                          f"{T.STAGE_TX}, which need a wafer with at most {T.STAGE_DTX} routable "
                          f"colors (this one has {wafer.colors})")
    if cfg.input_queue_depth < 2:
        raise ConfigError("the mapping needs CE input queues of at least 2 entries")
    layer_blocks = []
    col = c0
    for i, (d, (r, c)) in enumerate(zip(dense, shapes)):
        layer_blocks.append(LayerBlock(i, d, r, c, r0, col))
        col += c
    # colors already routed on the routers this mapping will use are not reused
    branch = bool(branch_blocks(dense))
    residual = len(residual_blocks(dense)) > len(branch_blocks(dense))
    roles = mapping_roles(residual, branch)
    probe = mapping_routes(layer_blocks, {k: i for i, k in enumerate(roles)}, wafer.cols)
    taken = set()
    for (r, c) in probe.routers():
        rid = r * wafer.cols + c
        for color in range(wafer.colors):
            dest, src = wafer._core.route(rid, color)
            if dest or src:
                taken.add(color)
    colors = allocate_colors(wafer.colors, taken, residual, branch)
    for p in (p for b in layer_blocks for p in b.points()):
        if wafer.pe(*p).loaded:
            raise ConfigError(f"PE {p} already has a program; map onto free PEs (origin=)")
    plan = Plan(model, wafer, layer_blocks, colors, dtype, int(slots), skip_depths,
                loss=loss, optimizer=optimizer)
    plan.load()
    return plan
