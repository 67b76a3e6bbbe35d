"""What the host streams in and reads out: samples as wavelets at the edge ports, and the
outputs and losses that come back.

Inputs: for every row r of layer 0 and every sample, the nonzero features of I_r as
sparse wavelets (value, feature index) [0400], [0424], then a closeout whose index starts
the receiving task f_close (or f_close_end when the sample ends a mini-batch) [0411].
Targets: for every finalizer of the output layer, its outputs' targets, dense, one value
per wavelet. Outputs: each output finalizer sends its nonzero activations (value, neuron
index), a closeout per sample and, in training, one wavelet per sample with its share of
the loss (index ``LOSS_INDEX``).
"""

from __future__ import annotations

import numpy as np

from ..mapping import task_ids as T

__all__ = ["encode", "decode", "input_streams", "target_streams", "decode_outputs",
           "completion_cycles"]


def encode(values: np.ndarray, dtype: str) -> np.ndarray:
    """Wavelet data words (uint32) of float values in ``dtype`` ("fp32": all 32 bits;
    "fp16": the low 16 bits)."""
    if dtype == "fp32":
        return np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    return np.ascontiguousarray(values, dtype=np.float16).view(np.uint16).astype(np.uint32)


def decode(words: np.ndarray, dtype: str) -> np.ndarray:
    """Float values of wavelet data words."""
    w = np.asarray(words, dtype=np.uint32)
    if dtype == "fp32":
        return w.view(np.float32)
    return (w & 0xFFFF).astype(np.uint16).view(np.float16)


def input_streams(X: np.ndarray, in_groups, dtype: str, batch_ends: np.ndarray | None = None):
    """Per row of layer 0: (data, index, ctrl) arrays of every sample in order."""
    n = X.shape[0]
    close = np.full(n, T.F_CLOSE, dtype=np.uint16)
    if batch_ends is not None:
        close[batch_ends] = T.F_CLOSE_END
    out = []
    for i0, k in in_groups:
        part = X[:, i0:i0 + k]
        keep = np.concatenate([part != 0, np.ones((n, 1), bool)], axis=1)
        data = np.concatenate([encode(part, dtype).reshape(n, k), np.zeros((n, 1), np.uint32)], axis=1)
        index = np.concatenate([np.broadcast_to(np.arange(i0, i0 + k, dtype=np.uint16), (n, k)),
                                close[:, None]], axis=1)
        ctrl = np.zeros((n, k + 1), bool)
        ctrl[:, k] = True
        out.append((data[keep], index[keep], ctrl[keep]))
    return out


def target_streams(Y: np.ndarray, out_groups, dtype: str):
    """Per output finalizer: the data words of its targets, sample after sample."""
    return [encode(Y[:, o0:o0 + k], dtype).ravel() for o0, k in out_groups]


def completion_cycles(arrivals, ports, color: int, n_samples: int) -> np.ndarray:
    """Per sample, the cycle its last closeout reached one of the output ports (every
    output finalizer sends one per sample, after the sample's outputs)."""
    done = np.zeros(n_samples, dtype=np.int64)
    for (r, _c) in ports:
        m = (arrivals.row == r) & (arrivals.color == color) & arrivals.ctrl
        t = arrivals.arrived[m].astype(np.int64)[:n_samples]
        done[:len(t)] = np.maximum(done[:len(t)], t)
    return done


def decode_outputs(arrivals, ports, color: int, n_samples: int, n_out: int, dtype: str):
    """(outputs (n_samples, n_out) float32, losses (n_samples,) or None, samples complete).

    ``arrivals``: a ``ws.Arrivals`` of the output edge ports; zero outputs were not sent."""
    Y = np.zeros((n_samples, n_out), dtype=np.float32)
    loss = np.zeros(n_samples, dtype=np.float64)
    loss_seen = np.zeros(n_samples, dtype=np.int64)
    done = n_samples
    for (r, c) in ports:
        m = (arrivals.row == r) & (arrivals.color == color)
        ctrl = arrivals.ctrl[m]
        index = arrivals.index[m].astype(np.int64)
        data = arrivals.data[m]
        sample = np.cumsum(ctrl) - ctrl          # closeouts before each wavelet
        is_loss = ~ctrl & (index == T.LOSS_INDEX)
        is_out = ~ctrl & ~is_loss
        done = min(done, int(ctrl.sum()))
        Y[sample[is_out], index[is_out]] = decode(data[is_out], dtype)
        ls = decode(data[is_loss], dtype).astype(np.float64)
        loss[:len(ls)] += ls
        loss_seen[:len(ls)] += 1
    complete_loss = loss_seen == len(ports)
    return Y, (loss if complete_loss.any() else None), done
