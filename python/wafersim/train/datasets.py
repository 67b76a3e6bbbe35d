"""Data sets for training on the wafer: scikit-learn's bundled digits (8 x 8 images of
handwritten digits, 1797 samples; no download), split the same way every time."""

from __future__ import annotations

import numpy as np

__all__ = ["digits"]


def digits(test_size: float = 0.2, seed: int = 0):
    """(X_train, y_train, X_test, y_test): pixels scaled to [0, 1] (exact in fp16: k / 16),
    labels 0..9, a stratified split seeded by ``seed``."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    X = (X / 16.0).astype(np.float32)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=test_size, random_state=seed,
                                          stratify=y)
    return Xtr, ytr.astype(np.int64), Xte, yte.astype(np.int64)
