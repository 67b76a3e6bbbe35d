"""Torch tensors in and out of a call: the batch ``(x, y)`` as the arrays the Trainer
streams, checked as torch's modules and losses would take them, and the results as
float32 tensors on the device of ``x``."""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError

__all__ = ["as_inputs", "as_targets", "as_tensor"]


def _array(t, what: str, torch) -> np.ndarray:
    if not isinstance(t, torch.Tensor):
        raise ConfigError(f"{what} must be a torch tensor, got {type(t).__name__}")
    t = t.detach().cpu()
    if t.dtype == torch.bfloat16:          # numpy has no bfloat16
        t = t.float()
    return t.numpy()


def as_inputs(x, n_in: int, torch, *, one_sample: bool = False) -> np.ndarray:
    """(samples, n_in) float array of ``x``; ``one_sample`` also takes a single sample of
    shape (n_in,), as a torch model does."""
    X = _array(x, "x", torch)
    shapes = f"(batch, {n_in})" + (f" or ({n_in},)" if one_sample else "")
    if not np.issubdtype(X.dtype, np.floating):
        raise ConfigError(f"x must hold floating-point numbers (as torch.nn.Linear takes), got "
                          f"{x.dtype}")
    if X.ndim == 1 and one_sample:
        X = X[None, :]
    if X.ndim != 2 or X.shape[1] != n_in or X.shape[0] == 0:
        raise ConfigError(f"x must have shape {shapes} with at least one sample, got "
                          f"{tuple(x.shape)}")
    return X


def as_targets(y, loss_name: str, n: int, n_out: int, torch) -> np.ndarray:
    """The targets of a batch of ``n`` samples as the Trainer takes them: (n, n_out) values
    for MSELoss, n class indices for CrossEntropyLoss (their range is checked there)."""
    Y = _array(y, "y", torch)
    if loss_name == "mse":
        if not np.issubdtype(Y.dtype, np.floating) or Y.shape != (n, n_out):
            raise ConfigError(f"y must be floating-point targets of the output's shape ({n}, "
                              f"{n_out}) for MSELoss, got shape {tuple(y.shape)} and dtype "
                              f"{y.dtype} (class indices need CrossEntropyLoss)")
        return Y
    if np.issubdtype(Y.dtype, np.floating):
        raise ConfigError(f"y must be class indices (an integer tensor of shape ({n},)) for "
                          f"CrossEntropyLoss; class probabilities ({y.dtype}) are not mapped")
    if not np.issubdtype(Y.dtype, np.integer) or Y.shape != (n,):
        raise ConfigError(f"y must be {n} class indices (an integer tensor of shape ({n},)) "
                          f"for CrossEntropyLoss, got shape {tuple(y.shape)} and dtype {y.dtype}")
    return Y.astype(np.int64)


def as_tensor(a: np.ndarray, like, torch):
    """A float32 tensor of ``a`` on the device of the tensor ``like``."""
    return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32)).to(like.device)
