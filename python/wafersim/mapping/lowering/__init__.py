"""Lowerings of activations, losses and optimizers onto PE programs (the plug-ins of the
training compiler). Each plug-in file registers itself; importing it here is its
registration line."""

from . import activation, adam, cross_entropy, gelu, leaky_relu, mse, sgd  # noqa: F401  (registration)
from .activation import ActivationLowering
from .loss import LossLowering
from .optimizer import OptimizerLowering
from .registry import (ACTIVATIONS, LOSSES, OPTIMIZERS, activation_for, loss_for,
                       optimizer_for)

__all__ = ["ActivationLowering", "LossLowering", "OptimizerLowering", "activation_for",
           "loss_for", "optimizer_for", "ACTIVATIONS", "LOSSES", "OPTIMIZERS"]
