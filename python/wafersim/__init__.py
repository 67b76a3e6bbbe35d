"""wafersim: a cycle-level emulator of a wafer-scale dataflow deep-learning accelerator.

This module only re-exports the public names; each concept lives in its own module.
"""

# First: the one door to the C++ core (it starts the core's OpenMP runtime waiting passively).
from . import _extension
from .errors import (
    ConfigError,
    CycleLimitError,
    DeadlockError,
    MemoryAccessError,
    ProgramError,
    RouteError,
    WaferError,
)
from . import numerics
from . import asm
from . import tensor
from .tensor import TensorUnit, TensorUnitConfig
from . import pe
from .defaults import DEFAULTS
from . import layout
from .layout import Rect
from .stats import Arrivals, FabricCounters, LatencyHistogram, PeStats, RunStats
from .wafer import RouterView, Wafer
from .wafer_pes import WaferPE
from . import noc
from . import kernels
from . import switches
from . import presets

# Training (nn, mapping, train) and buffer balancing load on first use: `import wafersim`
# stays as quick as it was for fabric and kernel work. `ws.torch` (the torch front end) is
# left out of __all__: `from wafersim import *` must not shadow a user's `torch`.
_LAZY = {"nn": ("nn", None), "mapping": ("mapping", None), "train": ("train", None),
         "balance": ("balance", None), "optim": ("optim", None), "torch": ("torch", None),
         "map": ("mapping", "map_model"), "Plan": ("mapping", "Plan"),
         "Trainer": ("train", "Trainer"), "History": ("train", "History")}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'wafersim' has no attribute {name!r}")
    import importlib

    module, attr = _LAZY[name]
    mod = importlib.import_module(f".{module}", __name__)
    value = mod if attr is None else getattr(mod, attr)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__version__ = _extension.core.__version__

__all__ = [
    "__version__",
    "DEFAULTS",
    "WaferError",
    "ConfigError",
    "ProgramError",
    "MemoryAccessError",
    "RouteError",
    "DeadlockError",
    "CycleLimitError",
    "numerics",
    "asm",
    "tensor",
    "TensorUnit",
    "TensorUnitConfig",
    "pe",
    "layout",
    "noc",
    "kernels",
    "switches",
    "presets",
    "nn",
    "optim",
    "mapping",
    "map",
    "Plan",
    "train",
    "Trainer",
    "History",
    "balance",
    "Wafer",
    "RouterView",
    "WaferPE",
    "Rect",
    "RunStats",
    "LatencyHistogram",
    "PeStats",
    "Arrivals",
    "FabricCounters",
]
