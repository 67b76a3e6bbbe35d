"""A quantized int8 convolutional network in plain numpy: the golden model of the tensor
unit's layer pipeline (conv -> ReLU + quantize -> max-pool).

Arithmetic: u8 activations x s8 filters summed exactly (int64), plus int32 bias, wrapped to
int32 like a 32-bit accumulator; requantization y = clip(floor((acc * scale + 2^(shift-1)) /
2^shift) + zero_point) to u8 (round half up), after clamping acc at 0 for ReLU.
"""

from __future__ import annotations

import numpy as np

__all__ = ["conv2d", "requantize", "max_pool2d", "forward"]


def conv2d(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None = None, stride: int = 1,
           padding: int = 0) -> np.ndarray:
    """int32 accumulators of a convolution: x (C, H, W) integers, w (O, C, kh, kw)."""
    x = np.asarray(x, dtype=np.int64)
    w = np.asarray(w, dtype=np.int64)
    if padding:
        x = np.pad(x, ((0, 0), (padding, padding), (padding, padding)))
    _, h, wd = x.shape
    o, _, kh, kw = w.shape
    ho, wo = (h - kh) // stride + 1, (wd - kw) // stride + 1
    acc = np.zeros((o, ho, wo), dtype=np.int64)
    for dy in range(kh):
        for dx in range(kw):
            patch = x[:, dy: dy + stride * (ho - 1) + 1: stride, dx: dx + stride * (wo - 1) + 1: stride]
            acc += np.einsum("oc,chw->ohw", w[:, :, dy, dx], patch)
    if bias is not None:
        acc += np.asarray(bias, dtype=np.int64)[:, None, None]
    return ((acc + 2**31) % 2**32 - 2**31).astype(np.int32)


def requantize(acc: np.ndarray, scale: int, shift: int, zero_point: int = 0, *,
               relu: bool = True, signed: bool = False) -> np.ndarray:
    """int32 accumulators -> 8-bit values with round-half-up and saturation."""
    a = np.asarray(acc, dtype=np.int64)
    if relu:
        a = np.maximum(a, 0)
    p = a * scale
    if shift:
        p = np.floor_divide(p + (1 << (shift - 1)), 1 << shift)
    p = p + zero_point
    lo, hi = (-128, 127) if signed else (0, 255)
    return np.clip(p, lo, hi).astype(np.int8 if signed else np.uint8)


def max_pool2d(x: np.ndarray, kernel: int, stride: int) -> np.ndarray:
    """Max pooling of a (C, H, W) map, windows fully inside the map."""
    c, h, w = x.shape
    ho, wo = (h - kernel) // stride + 1, (w - kernel) // stride + 1
    out = np.empty((c, ho, wo), dtype=x.dtype)
    for i in range(ho):
        for j in range(wo):
            win = x[:, i * stride: i * stride + kernel, j * stride: j * stride + kernel]
            out[:, i, j] = win.reshape(c, -1).max(axis=1)
    return out


def forward(x: np.ndarray, layers: list[dict]) -> np.ndarray:
    """Runs layers of dicts: {"w", "bias", "scale", "shift", "zero_point", "stride",
    "padding", "pool": (kernel, stride) or None} on a u8 map."""
    for layer in layers:
        acc = conv2d(x, layer["w"], layer.get("bias"), layer.get("stride", 1), layer.get("padding", 0))
        x = requantize(acc, layer["scale"], layer["shift"], layer.get("zero_point", 0))
        if layer.get("pool"):
            x = max_pool2d(x, *layer["pool"])
    return x
