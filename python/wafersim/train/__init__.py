"""Training on the wafer: ``ws.Trainer`` (SGD and mini-batch), the host's streams, and
the statistics of a training run (docs/training.md)."""

from .run_stats import TrainStats
from .trainer import History, Trainer

__all__ = ["Trainer", "History", "TrainStats"]
