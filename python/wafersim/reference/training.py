"""Plain numpy references for training on the wafer.

* :class:`DeviceOrderMLP` computes forward, delta and chain passes in fp32 with exactly
  the operations, roundings and summation order the mapping documents (docs/training.md,
  "Order of operations"): every fused multiply-add rounded once, partial sums added along
  a column toward its finalizer and along a row toward column 0. It is written from the
  math, without the emulator, so a wafer run must equal it bit for bit.
* :func:`train_numpy` is ordinary per-sample (or mini-batch) gradient descent in float64
  or float32, in the order a textbook writes it, for comparisons with a tolerance.

Both take torch's optimizers: SGD with momentum / Nesterov / weight decay, or Adam
(``adam=dict(betas=..., eps=..., weight_decay=...)``; reference/adam.py).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["fma32", "DeviceOrderMLP", "train_numpy", "mlp_forward", "graph_of"]

_f32, _f64 = np.float32, np.float64


def fma32(a, b, c) -> np.ndarray:
    """a * b + c for float32 arrays with one rounding (to nearest even), like the CE's
    fused multiply-add [0675]. The product is exact in float64; the sum's error term comes
    from TwoSum, and decides the one case float64 -> float32 rounding can get wrong (a
    float64 sum exactly halfway between two floats32)."""
    a64, b64, c64 = (np.asarray(v, dtype=_f32).astype(_f64) for v in (a, b, c))
    p = a64 * b64
    s = p + c64
    bb = s - p
    err = (p - (s - bb)) + (c64 - bb)
    r = s.astype(_f32)
    with np.errstate(invalid="ignore", over="ignore"):
        r64 = r.astype(_f64)
        up = np.nextafter(r, _f32(np.inf))
        down = np.nextafter(r, _f32(-np.inf))
        other = np.where(s > r64, up, down)
        tie = np.isfinite(s) & (s != r64) & (s == (r64 + other.astype(_f64)) / 2) & (err != 0)
        toward = np.where(err > 0, up, down)
        fixed = np.where((toward.astype(_f64) - s) * err > 0, toward, r)
    return np.where(tie, fixed, r).astype(_f32)


def _groups(n: int, k) -> list[tuple[int, int]]:
    """(start, count) of consecutive groups of range(n): ``k`` of array_split's sizes, or
    the sizes ``k`` lists (a smeared layer's portions)."""
    if not isinstance(k, (int, np.integer)):
        starts = np.concatenate([[0], np.cumsum(k)[:-1]]).astype(int)
        return [(int(a), int(b)) for a, b in zip(starts, k)]
    parts = np.array_split(np.arange(n), k)
    return [(int(p[0]), len(p)) for p in parts]


def _count(k) -> int:
    return int(k) if isinstance(k, (int, np.integer)) else len(k)


def _name(act) -> str:
    """An activation given by name ("relu") or as a ws.nn activation (its parameters)."""
    return act if isinstance(act, str) else act.name


def _tanh_ce(u: np.ndarray) -> np.ndarray:
    """The CE's tanh: rounded once from double [0493]."""
    return np.array([v if v == 0 else _f32(math.tanh(float(v))) for v in u], dtype=_f32)


def _gelu_u_t(z: np.ndarray):
    """u and t = tanh(u) of GELU's tanh form, in the order of mapping/lowering/gelu.py."""
    c, k = _f32(np.sqrt(2.0 / np.pi)), _f32(0.044715)
    u = (z * z).astype(_f32)
    u = (u * z).astype(_f32)
    u = (u * k).astype(_f32)
    u = (u + z).astype(_f32)
    u = (u * c).astype(_f32)
    return u, _tanh_ce(u)


def _act(act, z: np.ndarray) -> np.ndarray:
    name = _name(act)
    z = z.astype(_f32)
    if name == "relu":
        return np.where(z > 0, z, _f32(0)).astype(_f32)
    if name == "sigmoid":  # rounded once from double, as the CE does
        return np.array([_f32(1.0 / (1.0 + math.exp(-float(v)))) for v in z], dtype=_f32)
    if name == "tanh":
        return _tanh_ce(z)
    if name == "leaky_relu":   # relu(z) + min(z, 0) * slope, one rounding
        slope = _f32(act.negative_slope)
        return np.where(z > 0, z, (z * slope).astype(_f32)).astype(_f32)
    if name == "gelu":
        _, t = _gelu_u_t(z)
        t = (t + _f32(1)).astype(_f32)
        return ((z * _f32(0.5)).astype(_f32) * t).astype(_f32)
    return z


def _fprime(act, a: np.ndarray, z: np.ndarray | None = None) -> np.ndarray | None:
    """f' from the activations ``a`` (and the inputs ``z`` where the mapping keeps them)."""
    name = _name(act)
    if name == "relu":
        return (a > 0).astype(_f32)
    if name == "sigmoid":
        return ((_f32(1) - a).astype(_f32) * a).astype(_f32)
    if name == "tanh":
        return (_f32(1) - (a * a).astype(_f32)).astype(_f32)
    if name == "leaky_relu":
        slope = _f32(act.negative_slope)
        d = ((z if slope < 0 else a) > 0).astype(_f32)
        return (d + ((_f32(1) - d) * slope).astype(_f32)).astype(_f32)
    if name == "gelu":
        c, k3 = _f32(np.sqrt(2.0 / np.pi)), _f32(3 * 0.044715)
        _, t = _gelu_u_t(z)
        B = (_f32(1) - (t * t).astype(_f32)).astype(_f32)
        A = (t + _f32(1)).astype(_f32)
        C = (z * z).astype(_f32)
        C = ((C * k3).astype(_f32) + _f32(1)).astype(_f32)
        D = (((z * B).astype(_f32) * C).astype(_f32) * c).astype(_f32)
        return ((A + D).astype(_f32) * _f32(0.5)).astype(_f32)
    return None


#: f' as the wafer computes it (public for the other references: reference/checkpoint.py)
fprime = _fprime


def graph_of(dense) -> tuple[dict[int, int], dict[int, int]]:
    """(skips, sources) of a model's dense layers, in the terms the references take.
    Vectors are numbered as ``acts``: 0 the input, k + 1 the output of layer k.
    ``skips``: {join layer: the vector it adds} (a residual adds its first layer's input,
    a two-branch join the output of branch f); ``sources``: {layer: the vector it reads}
    for layers that do not read the previous layer's output (branch g's first layer)."""
    skips, sources = {}, {}
    for j, d in enumerate(dense):
        if d.input_from is not None:
            sources[j] = d.input_from + 1
    for j, d in enumerate(dense):
        if d.skip_from is not None:
            split = next((k for k in range(d.skip_from + 1, j + 1) if k in sources), None)
            skips[j] = d.skip_from if split is None else split
    return skips, sources


def textbook(act, dtype=np.float64):
    """(f(z), f'(z)) of an activation in plain numpy (float64 by default)."""
    name = _name(act)
    if name == "relu":
        return (lambda z: np.maximum(z, 0), lambda z: (z > 0).astype(dtype))
    if name == "sigmoid":
        sig = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
        return (sig, lambda z: sig(z) * (1 - sig(z)))
    if name == "tanh":
        return (np.tanh, lambda z: 1 - np.tanh(z) ** 2)
    if name == "leaky_relu":
        k = act.negative_slope
        return (lambda z: np.where(z > 0, z, k * z), lambda z: np.where(z > 0, 1.0, k).astype(dtype))
    if name == "gelu":
        c, k = np.sqrt(2 / np.pi), 0.044715

        def fprime(z):
            t = np.tanh(c * (z + k * z ** 3))
            return 0.5 * (1 + t) + 0.5 * z * (1 - t * t) * c * (1 + 3 * k * z * z)
        return (lambda z: 0.5 * z * (1 + np.tanh(c * (z + k * z ** 3))), fprime)
    return (lambda z: z, lambda z: np.ones_like(z))


def mlp_forward(params, activations, x, skips=None, sources=None) -> np.ndarray:
    """Float64 forward pass (for tolerance checks). ``skips``: {join layer: vector index}
    and ``sources``: {layer: vector index} as :func:`graph_of` gives them (a residual's
    join adds its first layer's input; a two-branch join adds branch f's output, and
    branch g's first layer reads the fork's output)."""
    skips, sources = skips or {}, sources or {}
    acts = [np.asarray(x, dtype=_f64)]
    for l, ((W, b), name) in enumerate(zip(params, activations)):
        z = acts[sources.get(l, l)] @ np.asarray(W, _f64).T + (0 if b is None else np.asarray(b, _f64))
        a = textbook(name)[0](z)
        if l in skips:
            a = a + acts[skips[l]]
        acts.append(a)
    return acts[-1]


class DeviceOrderMLP:
    """fp32 training in the wafer's order of operations for block shapes ``shapes``
    ((rows, cols) per layer; rows or cols may be the list of group sizes of a smeared
    layer: ((3, 9), 2) is 2 rows holding inputs 0..2 and 3..11). ``params``: (W, b or None) per layer; ``activations``: names;
    ``skips``, ``sources``: the joins and the layers that read the fork, as
    :func:`graph_of` gives them. A residual's join adds the first layer's input to its
    activations (y = f(x) + x), and in the backward pass dL/dy joins the first layer's
    delta sums at the east end of each row, before the row's own sums. A two-branch join
    adds branch f's output (y = f(x) + g(x)); dL/dy is branch f's last layer's delta sums,
    and branch g's dL/dx starts the rows of f's first layer the same way.

    ``adam``: Adam's arguments as torch names them (betas, eps, weight_decay) to train with
    Adam instead of SGD (reference/adam.py).

    ``thresholds``: per layer, the activation threshold of the mapping (seed 001, EC411) or
    None: an activation with |a| <= t is not sent, so the next layer sees 0 there (its
    forward pass skips it, its chain pass multiplies by 0), while the sending layer's f'
    uses the value it computed and kept."""

    def __init__(self, params, activations, shapes, skips=None, sources=None, *,
                 momentum: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False,
                 loss: str = "mse", adam: dict | None = None, thresholds=None):
        self.momentum, self.weight_decay, self.nesterov = momentum, weight_decay, nesterov
        self.loss = loss
        self.skips = dict(skips or {})
        self.sources = dict(sources or {})
        self.W = [np.array(W, dtype=_f32) for W, _ in params]
        self.b = [None if b is None else np.array(b, dtype=_f32) for _, b in params]
        self.act = list(activations)
        self.thresholds = list(thresholds) if thresholds is not None else [None] * len(self.W)
        # (R, C) per layer; R (C) may list the sizes of the input (output) groups of a
        # smeared layer (mapping/smear.py) instead of their number
        self.groups_given = [tuple(s) for s in shapes]
        self.shapes = [(_count(R), _count(C)) for R, C in self.groups_given]
        self.G = [np.zeros_like(W) for W in self.W]
        self.Gb = [None if b is None else np.zeros_like(b) for b in self.b]
        self.gcount = 0
        self.V = [np.zeros_like(W) for W in self.W]
        self.Vb = [None if b is None else np.zeros_like(b) for b in self.b]
        #: layer -> the weights its delta pass reads instead of W (CPGD with the weights of
        #: the sample's own forward pass [0634]: reference/cpgd.py); the update is to W
        self.dp_weights: dict[int, np.ndarray] = {}
        self.adam = None
        if adam is not None:
            from .adam import DeviceOrderAdam

            self.adam = DeviceOrderAdam(self._arrays(self.W, self.b), **adam)

    @staticmethod
    def _arrays(W, b):
        return [x for Wl, bl in zip(W, b) for x in (Wl, bl) if x is not None]

    @property
    def in_place(self) -> bool:
        """Plain SGD updates W delta by delta; momentum, weight decay or Adam accumulate G."""
        return self.adam is None and self.momentum == 0 and self.weight_decay == 0

    # -- forward ---------------------------------------------------------------------------
    def _layer_forward(self, l: int, a_in: np.ndarray) -> np.ndarray:
        W, b = self.W[l], self.b[l]
        R, C = self.shapes[l]
        n_out, n_in = W.shape
        z = np.zeros(n_out, dtype=_f32)
        Rg, Cg = self.groups_given[l]
        for o0, no in _groups(n_out, Cg):
            cols = slice(o0, o0 + no)
            c = _groups(n_out, Cg).index((o0, no))
            psum = []
            for i0, ni in _groups(n_in, Rg):
                s = np.zeros(no, dtype=_f32)
                for i in range(i0, i0 + ni):       # arrival order: ascending index
                    if a_in[i] != 0:               # zeros are never sent [0408]
                        s = fma32(W[cols, i], np.full(no, a_in[i], _f32), s)
                psum.append(s)
            if b is not None:        # the finalizer adds the bias to its own sums first
                psum[c] = (psum[c] + b[cols]).astype(_f32)
            # chain toward the finalizer (row c): from row 0 up, from row R-1 down
            acc = psum[0]
            for r in range(1, c + 1):
                acc = (acc + psum[r]).astype(_f32)
            if c < R - 1:
                high = psum[R - 1]
                for r in range(R - 2, c, -1):
                    high = (high + psum[r]).astype(_f32)
                acc = (high + acc).astype(_f32)
            z[cols] = acc
        self.z[l] = z
        return _act(self.act[l], z)

    def layer_forward(self, l: int, a_in: np.ndarray) -> np.ndarray:
        """The forward pass of layer l alone with the weights ``self.W[l]``, ``self.b[l]``
        hold now (z kept in ``self.z[l]``): its activations (CPGD's reference swaps in the
        weights a forward pass read)."""
        return self._layer_forward(l, a_in)

    def forward(self, x) -> list[np.ndarray]:
        """Activations per layer boundary: [input, layer 0 out, ..., output]. A join's
        activations before the skip is added are kept in ``self.pre[l]`` (its f' needs
        them)."""
        acts = [np.asarray(x, dtype=_f32)]
        self.pre = {}
        self.z = {}
        self.kept = {}
        for l in range(len(self.W)):
            a = self._layer_forward(l, acts[self.sources.get(l, l)])
            if l in self.skips:
                self.pre[l] = a
                a = (a + acts[self.skips[l]]).astype(_f32)
            t = self.thresholds[l]
            if t is not None:       # |a| <= t is not sent (EC411); the layer keeps a
                self.kept[l] = a
                a = np.where(np.abs(a) <= _f32(t), _f32(0), a).astype(_f32)
            acts.append(a)
        return acts

    # -- backward ----------------------------------------------------------------------------
    def _softmax_delta(self, z: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
        """CrossEntropyLoss on the head column (program/softmax_head.py): maximum and sum
        reduced head by head (chain from head 0), exp / reciprocal / ln of the CE math
        library (bit-exact references), delta = p - y, shares sum y (L - z) per head."""
        from ..asm import mathlib

        def lib(fn, v):
            v = np.asarray(v, _f32)
            return fn("fp32", n=len(v), src="s", dst="d", prefix="r").reference(v)

        _, C = self.groups_given[-1]
        groups = _groups(len(z), C)
        y = np.asarray(y, _f32)
        part = None
        for o0, no in groups:
            m = _f32(-np.inf)
            for v in z[o0:o0 + no]:
                m = max(m, v)
            part = m if part is None else max(part, m)
        M = _f32(part)
        e = lib(mathlib.exp, (z - M).astype(_f32))
        part = None
        for o0, no in groups:
            s = _f32(0)
            for v in e[o0:o0 + no]:
                s = _f32(s + v)
            part = s if part is None else _f32(part + s)
        S = np.array([part], _f32)
        p = (e * lib(mathlib.reciprocal, S)[0]).astype(_f32)
        L = _f32(M + lib(mathlib.ln, S)[0])
        t = ((z - L).astype(_f32) * y).astype(_f32)
        loss = 0.0
        for o0, no in groups:
            acc = _f32(0)
            for v in t[o0:o0 + no]:
                acc = _f32(acc + v)
            loss += float(-acc)
        return (p - y).astype(_f32), loss

    def _output_delta(self, a: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
        if self.loss == "cross_entropy":
            return self._softmax_delta(a, y)
        n = len(a)
        invn, twon = _f32(1.0 / n), _f32(2.0 / n)
        _, C = self.groups_given[-1]
        e = (a - np.asarray(y, _f32)).astype(_f32)
        loss = 0.0
        for o0, no in _groups(n, C):
            sq = (e[o0:o0 + no] * e[o0:o0 + no]).astype(_f32)
            acc = _f32(0)
            for v in sq:
                acc = _f32(acc + v)
            loss += float(_f32(acc * invn))
        d = (e * twon).astype(_f32)
        fp = _fprime(self.act[-1], a, self.z.get(len(self.W) - 1))
        if fp is not None:
            d = (d * fp).astype(_f32)
        return d, loss

    def _layer_backward(self, l: int, a_in: np.ndarray, d: np.ndarray, mode: str, lr,
                        skip_grad=None) -> np.ndarray | None:
        """DP and CP of layer l for delta d (its outputs' deltas). Returns the delta sums of
        its inputs (before f'), or None for layer 0. ``skip_grad``: dL/dy of a residual
        block that starts at layer l, the first term of each row's sum."""
        W = self.W[l]
        Wdp = self.dp_weights.get(l, W)
        R, C = self.shapes[l]
        n_out, n_in = W.shape
        neglr = _f32(-lr)
        dps = {}
        Rg, Cg = self.groups_given[l]
        for r, (i0, ni) in enumerate(_groups(n_in, Rg)):
            rows = slice(i0, i0 + ni)
            a = a_in[rows]
            for c, (o0, no) in enumerate(_groups(n_out, Cg)):
                dp = np.zeros(ni, dtype=_f32)
                for j in range(o0, o0 + no):
                    if d[j] == 0:
                        continue
                    dj = np.full(ni, d[j], _f32)
                    if l > 0:
                        dp = fma32(Wdp[j, rows], dj, dp)             # DP [0409]
                    if mode == "sgd":
                        s = np.full(ni, _f32(d[j] * neglr), _f32)
                        W[j, rows] = fma32(a, s, W[j, rows])          # CP, in place [0617]
                    else:
                        self.G[l][j, rows] = fma32(a, dj, self.G[l][j, rows])
                dps[(r, c)] = dp
        if self.b[l] is not None:
            if mode == "sgd":
                self.b[l] = fma32(d, np.full(n_out, neglr, _f32), self.b[l])
            else:
                self.Gb[l] = (self.Gb[l] + d).astype(_f32)
        if l == 0:
            return None
        tot = np.zeros(n_in, dtype=_f32)
        for r, (i0, ni) in enumerate(_groups(n_in, Rg)):
            acc = dps[(r, C - 1)]
            if skip_grad is not None:
                acc = (skip_grad[i0:i0 + ni] + acc).astype(_f32)
            for c in range(C - 2, -1, -1):                          # west along the row
                acc = (acc + dps[(r, c)]).astype(_f32)
            tot[i0:i0 + ni] = acc
        return tot

    def backward(self, acts, y, mode: str = "sgd", lr: float = 0.0):
        """Delta and chain passes for one sample; returns (deltas per layer, loss)."""
        d, loss = self._output_delta(acts[-1], y)
        deltas = [None] * len(self.W)
        dsums = {}          # layer -> the delta sums of its output (before f')
        starts = {}         # layer -> the term that starts each row's delta-sum chain
        for l in range(len(self.W) - 1, -1, -1):
            if l < len(self.W) - 1:
                tot = dsums.pop(l)
                if l in self.skips:             # a join: dL/dy also flows to what it added
                    k = self.skips[l]
                    if k in self.sources:       # two-branch: branch f's last layer
                        dsums[k - 1] = tot
                    else:                       # residual: the first layer's rows
                        starts[k] = tot
                kept = self.kept.get(l, acts[l + 1])
                fp = _fprime(self.act[l], self.pre.get(l, kept), self.z.get(l))
                d = tot if fp is None else (tot * fp).astype(_f32)
            deltas[l] = d
            tot = self._layer_backward(l, acts[self.sources.get(l, l)], d, mode, lr,
                                       starts.pop(l, None))
            if tot is not None:
                if l in self.sources:           # branch g's dL/dx starts f's first layer
                    starts[self.sources[l]] = tot
                else:
                    dsums[l - 1] = tot
        if mode != "sgd":
            self.gcount += 1
        return deltas, loss

    def apply(self, scale) -> None:
        """W += G * scale, b += Gb * scale; G = 0 (a mini-batch's update)."""
        s = _f32(scale)
        for l in range(len(self.W)):
            self.W[l] = fma32(self.G[l], np.full_like(self.G[l], s), self.W[l])
            self.G[l][:] = 0
            if self.b[l] is not None:
                self.b[l] = fma32(self.Gb[l], np.full_like(self.Gb[l], s), self.b[l])
                self.Gb[l][:] = 0
        self.gcount = 0

    def apply_rule(self, scale, lr) -> None:
        """torch's SGD rule with momentum / Nesterov / weight decay, in the mapping's
        order (mapping/lowering/sgd.py): g = G * s; g = fma(W, wd, g); v = fma(v, mu, g);
        W = fma(g + v mu (Nesterov) or v, -lr, W); G = 0."""
        s, mu, wd, nlr = _f32(scale), _f32(self.momentum), _f32(self.weight_decay), _f32(-lr)

        def one(W, G, V):
            g = (G * s).astype(_f32)
            if self.weight_decay > 0:
                g = fma32(W, np.full_like(W, wd), g)
            step = g
            if self.momentum > 0:
                V[...] = fma32(V, np.full_like(V, mu), g)
                step = fma32(V, np.full_like(V, mu), g) if self.nesterov else V
            W[...] = fma32(step, np.full_like(step, nlr), W)
            G[...] = 0

        for l in range(len(self.W)):
            one(self.W[l], self.G[l], self.V[l])
            if self.b[l] is not None:
                one(self.b[l], self.Gb[l], self.Vb[l])
        self.gcount = 0

    def apply_adam(self, scale, lr) -> None:
        """Adam's update in the mapping's order (mapping/lowering/adam.py); G = 0."""
        self.adam.step(self._arrays(self.W, self.b), self._arrays(self.G, self.Gb), scale, lr)
        self.gcount = 0

    def fit(self, X, Y, lr: float, algo: str = "sgd", batch_size: int = 1):
        """Trains on the samples in order; returns (outputs, losses) per sample."""
        outs, losses = [], []
        n = len(X)
        per_delta = algo == "sgd" and self.in_place
        b = 1 if algo == "sgd" else batch_size
        for k in range(n):
            acts = self.forward(X[k])
            outs.append(acts[-1])
            _, loss = self.backward(acts, Y[k], "sgd" if per_delta else "acc", lr)
            losses.append(loss)
            if not per_delta and ((k + 1) % b == 0 or k == n - 1):
                self.end_batch(lr)
        return np.array(outs), np.array(losses)

    def end_batch(self, lr: float) -> None:
        """The end of a mini-batch: the optimizer's step with the mean of its gradients."""
        if self.in_place:
            self.apply(-lr / self.gcount)
        elif self.adam is not None:
            self.apply_adam(1.0 / self.gcount, lr)
        else:
            self.apply_rule(1.0 / self.gcount, lr)

    def params(self):
        return list(zip(self.W, self.b))


def train_numpy(params, activations, X, Y, lr: float, algo: str = "sgd", batch_size: int = 1,
                epochs: int = 1, order=None, dtype=np.float64, skips=None, sources=None, *,
                momentum: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False,
                loss: str = "mse", adam: dict | None = None):
    """Textbook gradient descent with the loss mean((a - y)^2) per sample (or, with
    ``loss="cross_entropy"``, -sum y log softmax(a): gradient softmax(a) - y); mini-batches
    average their gradients; momentum, Nesterov and weight decay as torch.optim.SGD
    applies them, or Adam (``adam``: betas, eps, weight_decay, as torch.optim.Adam's
    update; reference/adam.py). ``order``: per epoch, the sample order (default: as given); ``skips``,
    ``sources``: joins and fork readers as :func:`graph_of` gives them. Returns the
    parameters [(W, b)]."""
    skips, sources = dict(skips or {}), dict(sources or {})
    P = [(np.array(W, dtype), None if b is None else np.array(b, dtype)) for W, b in params]
    X = np.asarray(X, dtype)
    Y = np.asarray(Y, dtype)
    fs = [textbook(act, dtype) for act in activations]
    n = len(X)
    velocity: dict = {}
    if adam is not None:
        from .adam import adam_step
    for ep in range(epochs):
        idx = np.arange(n) if order is None else np.asarray(order[ep])
        for s0 in range(0, n, batch_size if algo != "sgd" else 1):
            batch = idx[s0:s0 + (batch_size if algo != "sgd" else 1)]
            gW = [np.zeros_like(W) for W, _ in P]
            gb = [None if b is None else np.zeros_like(b) for _, b in P]
            for k in batch:
                acts, zs = [X[k]], {}
                for l, (W, b) in enumerate(P):
                    z = zs[l] = W @ acts[sources.get(l, l)] + (0 if b is None else b)
                    a = fs[l][0](z)
                    if l in skips:
                        a = a + acts[skips[l]]
                    acts.append(a)
                a = acts[-1]
                if loss == "cross_entropy":
                    e = np.exp(a - a.max())
                    grads = {len(P): e / e.sum() - Y[k]}
                else:
                    grads = {len(P): (a - Y[k]) * (2.0 / len(a))}   # dL/d(vector), by index
                for l in range(len(P) - 1, -1, -1):
                    g = grads.pop(l + 1)
                    if l in skips:          # the join adds a vector: it gets dL/dy too
                        grads[skips[l]] = grads.get(skips[l], 0) + g
                    d = g * fs[l][1](zs[l])
                    src = sources.get(l, l)
                    gW[l] += np.outer(d, acts[src])
                    if gb[l] is not None:
                        gb[l] += d
                    if src > 0:
                        grads[src] = grads.get(src, 0) + P[l][0].T @ d
            m = len(batch)
            if adam is not None:
                P = adam_step(P, [g / m for g in gW], [None if g is None else g / m for g in gb],
                              velocity, lr, **adam)
                continue
            P = _sgd_step(P, [g / m for g in gW], [None if g is None else g / m for g in gb],
                          velocity, lr, momentum, weight_decay, nesterov)
    return P


def _sgd_step(P, gW, gb, velocity, lr, momentum, weight_decay, nesterov):
    """One torch.optim.SGD step over every parameter (velocity: a dict kept by the caller)."""
    out = []
    for l, (W, b) in enumerate(P):
        new = []
        for k, (p, g) in enumerate(((W, gW[l]), (b, gb[l]))):
            if p is None:
                new.append(None)
                continue
            g = g + weight_decay * p
            if momentum:
                v = velocity[(l, k)] = momentum * velocity.get((l, k), 0) + g
                g = g + momentum * v if nesterov else v
            new.append(p - lr * g)
        out.append(tuple(new))
    return out
