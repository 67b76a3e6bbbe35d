"""A numpy reference for CPGD (continuous propagation gradient descent, FIG. 27C,
[0624]-[0649]): per-sample SGD in which the forward pass of a sample reads weights that
are some updates behind, because later samples enter before earlier ones have finished
their backward passes.

Two ways to say which weights a forward pass reads:

* :func:`time_step_schedule`: the discrete schedule of the digest's section 5.6 (one
  layer-stage per time step, one new sample per step, at most ``window`` samples in
  flight; the updates of a step precede its forward passes). Layer l (0-based, of L)
  runs the forward pass of the sample that entered at step e at e + l and its backward
  pass (delta, chain and update) at e + 2L - 1 - l, so with a full pipeline the forward
  pass at layer l is 2 (L - 1 - l) updates behind: earlier layers are staler by j = 2 per
  layer, the W_{1,t-k-j} / W_{2,t-k} pattern of [0648].
* :func:`replay_order_log`: the order a wafer run logged (``ws.map(..., cpgd=True,
  order_log=N)``): for every PE, which of its column updates came before which of its
  forward reads, so that the reference reads, element by element, the weights the PE
  held at that moment.

:class:`CpgdReference` trains in the wafer's order of operations (it drives
:class:`~wafersim.reference.training.DeviceOrderMLP`): the forward pass of sample s with
the weights a schedule or a log gives, then its delta and chain passes with the current
weights (every earlier sample's update done: a PE's backward passes run in sample order,
and the delta pass of a delta reads its column before the sample updates it [0645]), in
place. With every forward pass reading the current weights it is SGD, bit for bit.

``dp_weights="forward"`` ([0634], historical parameters): the delta pass of a sample reads
the weights its own forward pass read instead of the current ones (the update is still
to the current weights). Per PE, as the wafer's snapshot defines it
(mapping/program/cpgd_snapshot.py): a row the forward pass read, as it read it; a row it
did not read (a zero input), as stored at the sample's activation closeout there.

``keeps`` (a reverse checkpoint, FIG. 27D, [0615], [0653]-[0655]): per layer, whether it
keeps its inputs; after a sample's forward pass, each segment's discarded activations are
recomputed from its kept layer with the weights a callback gives (by default the current
ones, [0615]: "the most recent weights"), and its backward pass uses them. With
``dp_weights="forward"`` a discarding layer's delta pass reads the weights its recompute
read (the forward pass whose activations the backward pass uses), every row.
:func:`replay_order_log` takes those weights from the log's ``rlog``.

``batch_size`` B > 1 (CPGD with mini-batches, [0636]): every sample accumulates its
gradient into G with the current weights, and the optimizer's step with the mean of the
batch's gradients follows the backward pass of the batch's last sample (the epoch's last
batch may be shorter), as each PE's update task does on the wafer; the forward passes of
the next batch read what a schedule or the log says, which may be from before that step.
"""

from __future__ import annotations

import numpy as np

from .masked import MaskedDeviceOrderMLP
from .training import DeviceOrderMLP

__all__ = ["time_step_schedule", "CpgdReference", "replay_order_log", "batch_ends"]

_f32 = np.float32


def time_step_schedule(n: int, layers: int, window: int) -> dict:
    """The discrete CPGD schedule of ``n`` samples through ``layers`` layers with at most
    ``window`` samples in flight. Returns ``enter`` (n,), ``forward`` and ``backward``
    (layers, n) time steps, ``version`` (layers, n): the updates layer l had completed
    when sample s's forward pass read it, and ``staleness`` = s - version (the updates
    between a sample's forward pass and its own update at that layer). Window 1 is SGD
    (staleness 0)."""
    if window < 1 or layers < 1 or n < 0:
        raise ValueError("need window >= 1, layers >= 1, n >= 0")
    L = layers
    enter = np.zeros(n, np.int64)
    for s in range(1, n):
        e = enter[s - 1] + 1
        if s >= window:             # sample s - window must have left layer 0
            e = max(e, enter[s - window] + 2 * L)
        enter[s] = e
    ls = np.arange(L)[:, None]
    fwd = enter[None, :] + ls
    bwd = enter[None, :] + 2 * L - 1 - ls
    version = np.zeros((L, n), np.int64)
    for l in range(L):
        for s in range(n):
            version[l, s] = int(np.sum(bwd[l, :s] <= fwd[l, s]))
    return {"enter": enter, "forward": fwd, "backward": bwd, "version": version,
            "staleness": np.arange(n)[None, :] - version}


def batch_ends(n: int, batch_size: int) -> np.ndarray:
    """(n,) bool: which samples of a run of ``n`` end a mini-batch (every
    ``batch_size``-th and the last), as the Trainer marks an epoch."""
    ends = np.zeros(n, bool)
    ends[batch_size - 1::batch_size] = True
    if n:
        ends[-1] = True
    return ends


class CpgdReference:
    """fp32 CPGD in the wafer's order of operations, for a plain MLP (no joins) with block
    shapes ``shapes``; loss "mse" or "cross_entropy"; ``thresholds`` per layer as
    DeviceOrderMLP takes them (activation sparsity, EC411), or None. ``optimizer``:
    DeviceOrderMLP's optimizer arguments (momentum, weight_decay, nesterov, adam); with
    any of them each sample accumulates G and ends with the optimizer's step on every
    weight (a mini-batch of one, as the wafer's update task does per PE).
    ``batch_size`` > 1: CPGD with mini-batches (G accumulates; the step after a batch's
    last sample). ``masks``: per layer a bool (n_out, n_in) array (True = kept) or None,
    as ``Plan.weight_masks()`` gives them (weight sparsity: pruned weights are 0 from the
    start and after every update, ``MaskedDeviceOrderMLP``)."""

    def __init__(self, params, activations, shapes, lr: float, loss: str = "mse",
                 dp_weights: str = "current", thresholds=None, keeps=None,
                 batch_size: int = 1, masks=None, **optimizer):
        if dp_weights not in ("current", "forward"):
            raise ValueError(f"dp_weights must be 'current' or 'forward', got {dp_weights!r}")
        if masks is not None:
            optimizer["masks"] = masks
        self.mlp = (DeviceOrderMLP if masks is None else MaskedDeviceOrderMLP)(
            params, activations, shapes, loss=loss, thresholds=thresholds, **optimizer)
        self.lr = lr
        if int(batch_size) != batch_size or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.batch_size = int(batch_size)
        self.dp_weights = dp_weights
        self.L = len(self.mlp.W)
        self.keeps = [True] * self.L if keeps is None else [bool(k) for k in keeps]
        if len(self.keeps) != self.L or not self.keeps[0]:
            raise ValueError(f"keeps needs one entry per layer ({self.L}), layer 0 kept; "
                             f"got {keeps}")
        #: W and b of every layer after u updates, u = 0 .. samples done
        self.Wh = [[W.copy()] for W in self.mlp.W]
        self.bh = [[None if b is None else b.copy()] for b in self.mlp.b]
        self.inputs: list[list[np.ndarray]] = []     # per sample: each layer's input
        self.deltas: list[list[np.ndarray]] = []     # per sample: each layer's delta
        self.losses: list[float] = []

    def segments(self) -> list[tuple[int, int]]:
        """(kept layer k, m): layers k+1 .. m-1 discard; k recomputes k .. m-2."""
        out, L = [], self.L
        for k in range(L):
            m = k + 1
            while m < L and not self.keeps[m]:
                m += 1
            if self.keeps[k] and m > k + 1:
                out.append((k, m))
        return out

    def _recompute(self, acts, recompute_weights) -> None:
        """A reverse checkpoint: the discarded inputs of each segment's layers k+1 .. m-1,
        recomputed from layer k's stored input with the weights ``recompute_weights``
        gives (z kept for f' as the forward pass keeps it; with a threshold, |a| <= t
        dropped again and a kept for f', as the forward pass does)."""
        m = self.mlp
        for k, end in self.segments():
            a = acts[k]
            for l in range(k, end - 1):
                Wc, bc = m.W[l], m.b[l]
                if recompute_weights is not None:
                    m.W[l], m.b[l] = recompute_weights(self, l, a)
                try:
                    a = m.layer_forward(l, a)
                finally:
                    m.W[l], m.b[l] = Wc, bc
                t = m.thresholds[l]
                if t is not None:
                    m.kept[l] = a
                    a = np.where(np.abs(a) <= _f32(t), _f32(0), a).astype(_f32)
                acts[l + 1] = a

    @property
    def batched(self) -> bool:
        """G accumulates and a step follows each batch (else W changes delta by delta)."""
        return self.batch_size > 1 or not self.mlp.in_place

    def step(self, x, y, forward_weights, unread_weights=None, recompute_weights=None,
             batch_end: bool | None = None) -> float:
        """One sample: ``forward_weights(self, l, a_in)`` -> (W, b) the forward pass of
        layer l reads (``a_in``: the layer's input); with a reverse checkpoint the
        discarded activations recomputed with ``recompute_weights(self, l, a_in)`` -> (W,
        b) (default: the current weights); then delta and chain passes in place.
        With dp_weights="forward" the delta pass reads the forward pass's W, except that
        ``unread_weights(self, l, a_in, W)``, if given, says what it reads in the rows of
        zero inputs; a discarding layer's delta pass reads the weights of its recompute
        (every row: ``recompute_weights`` with every input nonzero). ``batch_end``: whether
        the sample ends its mini-batch (None: every ``batch_size``-th sample of the
        reference). Returns the sample's loss."""
        m = self.mlp
        acts = [np.asarray(x, dtype=_f32)]
        m.pre, m.z, m.kept = {}, {}, {}
        read = []
        for l in range(self.L):
            Wc, bc = m.W[l], m.b[l]
            m.W[l], m.b[l] = forward_weights(self, l, acts[l])
            read.append(m.W[l])
            try:
                a = m.layer_forward(l, acts[l])
            finally:
                m.W[l], m.b[l] = Wc, bc
            t = m.thresholds[l]
            if t is not None:       # |a| <= t is not sent (EC411); the layer keeps a
                m.kept[l] = a
                a = np.where(np.abs(a) <= _f32(t), _f32(0), a).astype(_f32)
            acts.append(a)
        self.inputs.append(acts[:-1])           # what the forward pass sent
        acts = list(acts)
        self._recompute(acts, recompute_weights)
        if self.dp_weights == "forward":
            m.dp_weights = {}
            for l in range(1, self.L):
                if self.keeps[l]:
                    m.dp_weights[l] = (read[l] if unread_weights is None
                                       else unread_weights(self, l, acts[l], read[l]))
                else:       # its recompute's weights [0634], every row
                    m.dp_weights[l] = m.W[l] if recompute_weights is None else \
                        recompute_weights(self, l, np.ones(m.W[l].shape[1], _f32))[0]
        if batch_end is None:
            batch_end = (self.samples + 1) % self.batch_size == 0
        try:
            deltas, loss = m.backward(acts, y, mode="acc" if self.batched else "sgd", lr=self.lr)
        finally:
            m.dp_weights = {}
        if self.batched and batch_end:
            m.end_batch(self.lr)
        for l in range(self.L):
            self.Wh[l].append(m.W[l].copy())
            self.bh[l].append(None if m.b[l] is None else m.b[l].copy())
        self.deltas.append(deltas)
        self.losses.append(loss)
        return loss

    @property
    def samples(self) -> int:
        return len(self.losses)

    def train_versions(self, X, Y, version) -> np.ndarray:
        """Trains on (X, Y) in order; the forward pass of sample s at layer l reads the
        whole layer after ``version[l][s]`` updates (<= s); returns the losses."""
        base = self.samples

        def fw(ref, l, _a):
            v = base + int(version[l][ref.samples - base])
            return ref.Wh[l][v], ref.bh[l][v]
        for x, y, end in zip(X, Y, batch_ends(len(X), self.batch_size)):
            self.step(x, y, fw, batch_end=bool(end))
        return np.array(self.losses[base:])

    def train_sgd(self, X, Y) -> np.ndarray:
        """Every forward pass reads the current weights: SGD."""
        return self.train_versions(X, Y, np.tile(np.arange(len(X)), (self.L, 1)))

    def params(self):
        return [(W.copy(), None if b is None else b.copy()) for W, b in zip(self.mlp.W, self.mlp.b)]


def column_version(events, count: int, j: int) -> int:
    """After the first ``count`` of a PE's logged updates (``events``: (sample, columns,
    ...) in the PE's order), the sample count whose weights column ``j`` holds: one past
    the last of them that updated it, 0 if none did."""
    m = 0
    for u, cols, _ in events[:count]:
        if j in cols:
            m = u + 1
    return m


def replay_order_log(ref: CpgdReference, X, Y, blocks, log: dict) -> np.ndarray:
    """Trains ``ref`` on (X, Y) in order, each forward pass reading, element by element,
    the weights the wafer's PE held when it read them, as the order log says
    (``wafersim.train.cpgd_stats.read_order_log``; the log must cover the run, from a
    fresh count: the first ``fit`` epoch of a Trainer, without validation).

    ``blocks``: the plan's ``LayerBlock`` list (rows, cols, finalizer positions, points).
    With ``ref.dp_weights == "forward"`` the log's ``flog`` (per activation closeout of a
    PE with a delta pass: the column updates before it) gives the weights of the rows the
    forward pass did not read.
    A worker's log has an entry per column update (b_delta: the sample's nonzero deltas of
    its columns, ascending, samples in order), a finalizer's one per sample (its own block
    pass, all its columns at once); the entry is the number of f_act tasks (rows of W
    read) before it. A finalizer's ``blog`` entry per sample is the number of bias
    updates before its activation closeout, which adds the bias. With a reverse
    checkpoint (``ref.keeps``), every PE of a segment has an ``rlog`` entry per sample:
    the column updates before its recompute started; the recompute reads, element by
    element, the weights (and a finalizer the bias) after those updates.
    With updates in an update task (an optimizer with state, or ``ref.batch_size`` > 1:
    mini-batches, the epoch's batches as the Trainer cuts them) every PE has one entry per
    update task, at the end of each batch's last sample there, for all of its columns,
    and ``blog`` counts update tasks."""
    olog, blog = log["olog"], log["blog"]
    if ref.samples:
        raise ValueError("replay_order_log needs a fresh reference (the log counts from 0)")
    ends = batch_ends(len(X), ref.batch_size) if ref.batched else np.ones(len(X), bool)
    end_samples = np.flatnonzero(ends)

    def after_updates(v: int) -> int:
        """The sample count whose weights hold after a PE's first v updates (in place:
        one per sample; else one per batch)."""
        return int(end_samples[v - 1]) + 1 if v else 0
    # per PE: events [(sample, columns (global j), f_acts before)], consumed as the
    # samples' deltas become known; f_acts done so far
    events = {p: [] for b in blocks for p in b.points()}
    used = {p: 0 for p in events}
    nact = {p: 0 for p in events}
    shape = {}
    for b in blocks:
        ig, og = b.in_groups, b.out_groups    # a smeared layer's unequal portions too
        for r in range(b.rows):
            for c in range(b.cols):
                shape[b.at(r, c)] = (b.index, ig[r], og[c], r == c, c)

    def forward_weights(rf, l, a_in):
        b = blocks[l]
        s = rf.samples
        Wmix = rf.Wh[l][s].copy()     # entries of zero inputs are never read
        bias = rf.bh[l][s]
        for p in b.points():
            _, (i0, ni), (o0, no), final, c = shape[p]
            ev = events[p]
            k = nact[p]
            for i in range(i0, i0 + ni):
                if a_in[i] == 0:
                    continue
                for j in range(o0, o0 + no):
                    m = 0                   # samples whose update of (j, i) came first
                    for u, cols, before in ev:
                        if before <= k and j in cols:
                            m = u + 1
                    Wmix[j, i] = rf.Wh[l][m][j, i]
                k += 1
            nact[p] = k
            if final and bias is not None:
                v = after_updates(int(blog[p][s]))
                bias = bias.copy()
                bias[o0:o0 + no] = rf.bh[l][v][o0:o0 + no]
        return Wmix, bias

    flog = log.get("flog", {})
    if ref.dp_weights == "forward" and not flog and any(ref.keeps[1:]):
        raise ValueError("dp_weights='forward' needs the log's flog (a plan mapped with "
                         "dp_weights='forward' and order_log)")

    def unread_weights(rf, l, a_in, Wread):
        """Rows of zero inputs: as stored at the sample's activation closeout."""
        b = blocks[l]
        s = rf.samples
        Wdp = Wread.copy()
        for p in b.points():
            _, (i0, ni), (o0, no), _, _ = shape[p]
            f = int(flog[p][s])
            if f > len(events[p]):
                raise AssertionError(f"PE {p}: sample {s}'s activation closeout came after "
                                     f"{f} updates, the replay knows {len(events[p])}")
            rows = [i for i in range(i0, i0 + ni) if a_in[i] == 0]
            for j in range(o0, o0 + no):
                m = column_version(events[p], f, j)
                for i in rows:
                    Wdp[j, i] = rf.Wh[l][m][j, i]
        return Wdp

    rlog = log.get("rlog", {})
    if ref.segments() and not rlog:
        raise ValueError("a reverse checkpoint needs the log's rlog (a plan mapped with "
                         "checkpoint= and order_log)")

    def recompute_weights(rf, l, a_in):
        """The segment's recompute at layer l: what each PE held when it started."""
        b = blocks[l]
        s = rf.samples
        Wr = rf.Wh[l][s].copy()
        bias = rf.bh[l][s]
        for p in b.points():
            _, (i0, ni), (o0, no), final, _ = shape[p]
            c = int(rlog[p][s])
            if c > len(events[p]):
                raise AssertionError(f"PE {p}: sample {s}'s recompute came after {c} "
                                     f"updates, the replay knows {len(events[p])}")
            for j in range(o0, o0 + no):
                m = column_version(events[p], c, j)
                for i in range(i0, i0 + ni):
                    if a_in[i] != 0:
                        Wr[j, i] = rf.Wh[l][m][j, i]
            if final and bias is not None:
                m = events[p][c - 1][0] + 1 if c else 0
                bias = bias.copy()
                bias[o0:o0 + no] = rf.bh[l][m][o0:o0 + no]
        return Wr, bias

    losses = []
    for x, y, end in zip(X, Y, ends):
        s = ref.samples
        losses.append(ref.step(x, y, forward_weights, unread_weights,
                               recompute_weights if ref.segments() else None,
                               batch_end=bool(end)))
        # the sample's updates, now that its deltas are known
        for b in blocks:
            dl = ref.deltas[s][b.index]
            for p in b.points():
                _, _, (o0, no), final, _ = shape[p]
                lg = olog[p]
                if ref.batched:     # the update task: all columns, at each batch's end
                    cols_list = [set(range(o0, o0 + no))] if end else []
                elif final:
                    cols_list = [set(range(o0, o0 + no))]
                else:
                    cols_list = [{j} for j in range(o0, o0 + no) if dl[j] != 0]
                for cols in cols_list:
                    events[p].append((s, cols, int(lg[used[p]])))
                    used[p] += 1
    for p, entries in list(flog.items()) + list(rlog.items()):
        if len(entries) != len(X):
            raise AssertionError(f"PE {p}: the log has {len(entries)} activation closeouts "
                                 f"or recomputes, the replay ran {len(X)} samples")
    for p, n in used.items():
        if n != len(olog[p]):
            raise AssertionError(f"PE {p}: the log has {len(olog[p])} updates, the replay "
                                 f"used {n}")
    return np.array(losses)
