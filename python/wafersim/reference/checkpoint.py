"""Reverse checkpoint (RCP) in the wafer's fp32 order of operations: a reference for
seed 000 FIG. 28C-E, [0614]-[0615], [0650]-[0656].

A :class:`CheckpointedMLP` is a :class:`~wafersim.reference.training.DeviceOrderMLP`
(plain chains of dense layers) that trains with a checkpoint policy: per layer, whether it
keeps its inputs (the activations its chain pass needs) from the forward pass to the
backward pass.

* **Forward** ([0651]): every layer computes as without RCP; only the kept layers'
  inputs (and the outputs, which the loss needs) are stored per sample in flight.
* **Backward, first portion** ([0653]): when the backward pass of a sample reaches a
  discarding layer, the nearest kept layer k to the west recomputes the forward pass of
  its segment (layers k .. m-2, m the next kept layer) from its stored inputs, with the
  weights the layers hold *at that moment* ([0615]: "the most recent weights"), into one
  recompute buffer (A 2829).
* **Backward, second portion** ([0655]): the delta and chain passes use the recomputed
  activations.

Under SGD and mini-batch the weights of layers k .. m-2 have not changed between the
sample's forward pass and that moment (the backward pass runs east to west, and a
mini-batch updates at its end), so the recomputed activations equal the discarded ones
and training is bit for bit the same ([0653], [0655]). ``between`` lets a test change the
weights between a sample's forward and backward passes, as continuous propagation does
([0654]): then the recomputation sees the changed weights.

The class also counts the activation elements stored (``peak``: the most at any time;
``held``: summed over layer steps): the samples in flight times the kept boundaries,
plus the recompute buffer; a boundary is released when the backward pass no longer
needs it, with or without RCP.
"""

from __future__ import annotations

import numpy as np

from .training import DeviceOrderMLP, fprime

__all__ = ["CheckpointedMLP"]

_f32 = np.float32


class CheckpointedMLP(DeviceOrderMLP):
    """RCP over a DeviceOrderMLP without skips, branches or thresholds: ``params``,
    ``activations``, ``shapes`` and the keyword arguments as DeviceOrderMLP takes them;
    ``keeps``: per layer, True when it keeps its inputs (layer 0 must)."""

    def __init__(self, params, activations, shapes, keeps, **kwargs):
        super().__init__(params, activations, shapes, **kwargs)
        keeps = tuple(bool(k) for k in keeps)
        if len(keeps) != len(self.W) or not keeps[0]:
            raise ValueError(f"keeps needs one entry per layer ({len(self.W)}), layer 0 kept; "
                             f"got {keeps}")
        if self.skips or self.sources or any(t is not None for t in self.thresholds):
            raise ValueError("CheckpointedMLP takes plain chains of dense layers")
        self.keeps = keeps
        self.live = 0           # activation elements stored now
        self.peak = 0           # the most stored at any time
        self.recomputed = 0     # layer forward passes run again, in all
        self.held = 0           # activation elements held, summed over layer steps

    def _hold(self, n: int) -> None:
        self.live += n
        self.peak = max(self.peak, self.live)

    def _tick(self) -> None:
        """One layer's forward or backward pass of one sample has run: count what is
        held during it (``held``: element-steps, the area of FIG. 27D's storage bars)."""
        self.held += self.live

    # -- forward ------------------------------------------------------------------------------
    def _forward(self, x) -> dict:
        """One sample's forward pass, layer by layer; what its layers store until its
        backward pass: boundary l (layer l's inputs; L: the outputs) -> vector, and z per
        layer where the activation's f' needs it (kept with the layer's outputs). A
        discarded boundary is used by the next layer as it arrives and not stored."""
        L = len(self.W)
        self.z = {}
        keep_b = list(self.keeps) + [True]
        a = np.asarray(x, dtype=_f32)
        stored = {"a": {0: a}, "z": {}}
        self._hold(len(a))
        for l in range(L):
            a = self._layer_forward(l, a)
            if keep_b[l + 1]:
                stored["a"][l + 1] = a
                stored["z"][l] = self.z[l]
                self._hold(len(a))
            self._tick()
        return stored

    # -- backward -----------------------------------------------------------------------------
    def _recompute(self, stored: dict, upto: int, buf: dict) -> None:
        """Boundaries k+1 .. m-1 of the segment that holds boundary ``upto`` (not kept),
        recomputed from the nearest kept boundary k with the current weights (FIG. 28D)."""
        k = upto
        while not self.keeps[k]:
            k -= 1
        m = upto
        while m < len(self.keeps) and not self.keeps[m]:
            m += 1
        a = stored["a"][k]
        for l in range(k, m - 1):
            a = self._layer_forward(l, a)
            self.recomputed += 1
            buf["a"][l + 1] = a
            buf["z"][l] = self.z[l]
            self._hold(len(a))

    def _backward(self, stored: dict, y, mode: str, lr):
        L = len(self.W)
        buf = {"a": {}, "z": {}}

        def act(l):
            if l not in stored["a"] and l not in buf["a"]:
                self._recompute(stored, l, buf)
            return stored["a"].get(l, buf["a"].get(l))

        def z(l):
            return stored["z"].get(l, buf["z"].get(l))

        self.z = {L - 1: z(L - 1)}          # the output delta's f' (where it needs z)
        d, loss = self._output_delta(act(L), y)
        tot = None
        for l in range(L - 1, -1, -1):
            if l < L - 1:
                fp = fprime(self.act[l], act(l + 1), z(l))
                d = tot if fp is None else (tot * fp).astype(_f32)
            tot = self._layer_backward(l, act(l), d, mode, lr)
            self._tick()
            self._release(stored, buf, l + 1)   # no layer west of l needs it
        self._release(stored, buf, 0)
        if mode != "sgd":
            self.gcount += 1
        return loss

    def _release(self, stored: dict, buf: dict, boundary: int) -> None:
        for where in (stored["a"], buf["a"]):
            v = where.pop(boundary, None)
            if v is not None:
                self.live -= len(v)

    # -- training -----------------------------------------------------------------------------
    def fit(self, X, Y, lr: float, algo: str = "sgd", batch_size: int = 1, between=None):
        """Trains on the samples in order, as DeviceOrderMLP.fit; a mini-batch runs all its
        forward passes first (the samples in flight of the wafer's pipeline), then their
        backward passes in order, then the update. ``between(model, k)``: called before the
        backward pass of sample k (``model``: this one). Returns (outputs, losses) per sample."""
        per_delta = algo == "sgd" and self.in_place
        b = 1 if algo == "sgd" else batch_size
        outs, losses = [], []
        n = len(X)
        for s0 in range(0, n, b):
            ks = range(s0, min(s0 + b, n))
            flight = [self._forward(X[k]) for k in ks]
            for k, stored in zip(ks, flight):
                outs.append(stored["a"][len(self.W)])
                if between is not None:
                    between(self, k)
                losses.append(self._backward(stored, Y[k], "sgd" if per_delta else "acc", lr))
            if not per_delta:
                self.end_batch(lr)
        return np.array(outs), np.array(losses)
