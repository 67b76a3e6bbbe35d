"""Networks for the wafer: layers, a container, losses and PyTorch interop.

    model = ws.nn.Sequential(ws.nn.Linear(64, 32), ws.nn.ReLU(), ws.nn.Linear(32, 10))
    model = ws.nn.from_torch(torch_model)          # and model.to_torch() back
    block = ws.nn.Residual(ws.nn.Sequential(ws.nn.Linear(32, 32), ws.nn.ReLU(),
                                            ws.nn.Linear(32, 32)))     # y = f(x) + x
    pair = ws.nn.TwoBranch(ws.nn.Linear(32, 32), [ws.nn.Linear(32, 16), ws.nn.ReLU(),
                                                  ws.nn.Linear(16, 32)])  # y = f(x) + g(x)
"""

from .layers import (ACTIVATIONS, Activation, Identity, Linear, Module, ReLU, Sigmoid, Tanh,
                     manual_seed)
from .losses import MSELoss
from .residual import Residual
from .sequential import DenseLayer, Sequential
from .two_branch import TwoBranch
from .torch_io import from_torch, to_torch

__all__ = ["Module", "Linear", "ReLU", "Sigmoid", "Tanh", "Identity", "Activation",
           "Sequential", "Residual", "TwoBranch", "DenseLayer", "MSELoss", "from_torch", "to_torch", "manual_seed",
           "ACTIVATIONS"]
