"""The post-processing unit of seed 002 [0070]: max pooling by kernel, stride and extent."""

from __future__ import annotations

import numpy as np

from .. import _core
from ..errors import ConfigError

__all__ = ["max_pool"]


def max_pool(fmap, kernel: int, stride: int) -> np.ndarray:
    """Max-pools a (channels, height, width) uint8 map as the post-processor does."""
    a = np.asarray(fmap)
    if a.dtype != np.uint8 or a.ndim != 3:
        raise ConfigError(f"max_pool takes a (channels, height, width) uint8 map, got {a.dtype} {a.shape}")
    for name, v in (("kernel", kernel), ("stride", stride)):
        if not isinstance(v, (int, np.integer)):
            raise ConfigError(f"{name} must be an integer, got {v!r}")
    return _core.tensor.max_pool(np.ascontiguousarray(a), int(kernel), int(stride))
