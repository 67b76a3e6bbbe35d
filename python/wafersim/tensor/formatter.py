"""The data and weight formatters of seed 002 ([0022], [0026], [0118]): they turn a feature
map and a filter bank into the (positions, depth) data stream and (depth, channels) weight
stream the matrix array consumes, one depth step per cycle (im2col order: channel, then
kernel row, then kernel column)."""

from __future__ import annotations

import numpy as np

from .._args import INT_MAX, int_arg
from ..errors import ConfigError

__all__ = ["conv_output_size", "format_conv_data", "format_conv_weights"]


def conv_output_size(size: int, kernel: int, stride: int, padding: int) -> int:
    return (size + 2 * padding - kernel) // stride + 1


def format_conv_data(x: np.ndarray, kernel: tuple[int, int], stride: int = 1, padding: int = 0) -> np.ndarray:
    """(C, H, W) map -> (Ho * Wo, C * kh * kw) data matrix; padding inserts zeros."""
    if x.ndim != 3:
        raise ConfigError(f"a feature map is (channels, height, width), got shape {x.shape}")
    c, h, w = x.shape
    kh, kw = kernel
    stride = int_arg("stride", stride, 1, INT_MAX)
    # Padding beyond kernel - 1 only adds all-zero windows (and memory): refused.
    k = max(kh, kw, 1)
    if isinstance(padding, bool) or not isinstance(padding, (int, np.integer)) or not 0 <= padding < k:
        raise ConfigError(f"padding must be an integer in 0..{k - 1} (below the kernel size), "
                          f"got {padding!r}")
    ho, wo = conv_output_size(h, kh, stride, padding), conv_output_size(w, kw, stride, padding)
    if ho < 1 or wo < 1:
        raise ConfigError(f"a {kh}x{kw} kernel does not fit the {h}x{w} map (padding {padding})")
    xp = np.pad(x, ((0, 0), (padding, padding), (padding, padding))) if padding else x
    s0, s1, s2 = xp.strides
    win = np.lib.stride_tricks.as_strided(
        xp, shape=(ho, wo, c, kh, kw), strides=(s1 * stride, s2 * stride, s0, s1, s2), writeable=False)
    return np.ascontiguousarray(win.reshape(ho * wo, c * kh * kw))


def format_conv_weights(w: np.ndarray) -> np.ndarray:
    """(O, C, kh, kw) filters -> (C * kh * kw, O) weight matrix."""
    if w.ndim != 4:
        raise ConfigError(f"filters are (out_channels, in_channels, kh, kw), got shape {w.shape}")
    return np.ascontiguousarray(w.reshape(w.shape[0], -1).T)
