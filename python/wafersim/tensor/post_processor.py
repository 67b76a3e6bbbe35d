"""The post-processing unit of seed 002 [0070]: max pooling by kernel, stride and extent."""

from __future__ import annotations

import numpy as np

from .._extension import core
from .._args import INT_MAX, int_arg
from ..errors import ConfigError

__all__ = ["max_pool"]


def max_pool(fmap, kernel: int, stride: int) -> np.ndarray:
    """Max-pools a (channels, height, width) uint8 map as the post-processor does."""
    a = np.asarray(fmap)
    if a.dtype != np.uint8 or a.ndim != 3:
        raise ConfigError(f"max_pool takes a (channels, height, width) uint8 map, got {a.dtype} {a.shape}")
    return core.tensor.max_pool(np.ascontiguousarray(a), int_arg("kernel", kernel, 1, INT_MAX),
                                 int_arg("stride", stride, 1, INT_MAX))
