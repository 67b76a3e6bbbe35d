"""Networks for the wafer: layers, a container, losses and PyTorch interop.

    model = ws.nn.Sequential(ws.nn.Linear(64, 32), ws.nn.ReLU(), ws.nn.Linear(32, 10))
    model = ws.nn.from_torch(torch_model)          # and model.to_torch() back
    block = ws.nn.Residual(ws.nn.Sequential(ws.nn.Linear(32, 32), ws.nn.ReLU(),
                                            ws.nn.Linear(32, 32)))     # y = f(x) + x
    pair = ws.nn.TwoBranch(ws.nn.Linear(32, 32), [ws.nn.Linear(32, 16), ws.nn.ReLU(),
                                                  ws.nn.Linear(16, 32)])  # y = f(x) + g(x)
"""

from .activations import ACTIVATIONS, Activation, Identity, ReLU, Sigmoid, Tanh
from .cross_entropy import CrossEntropyLoss
from .dense import DenseLayer
from .gelu import GELU
from .leaky_relu import LeakyReLU
from .linear import Linear
from .losses import Loss, MSELoss
from .module import Module, manual_seed
from .residual import Residual
from .sequential import Sequential
from .torch_io import from_torch, to_torch
from .two_branch import TwoBranch

__all__ = ["Module", "Linear", "ReLU", "Sigmoid", "Tanh", "Identity", "LeakyReLU", "GELU",
           "Activation", "Sequential", "Residual", "TwoBranch", "DenseLayer", "Loss", "MSELoss",
           "CrossEntropyLoss", "from_torch", "to_torch", "manual_seed", "ACTIVATIONS"]
