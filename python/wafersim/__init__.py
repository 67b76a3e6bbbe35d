"""wafersim: a cycle-level emulator of a wafer-scale dataflow deep-learning accelerator.

This module only re-exports the public names; each concept lives in its own module.
"""

from . import _core
from .errors import (
    ConfigError,
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
from .stats import Arrivals, FabricCounters, PeStats, RunStats
from .wafer import RouterView, Wafer
from .wafer_pes import WaferPE
from . import noc
from . import kernels
from . import nn
from . import mapping
from .mapping import Plan
from .mapping import map_model as map
from . import train
from .train import History, Trainer


__version__ = _core.__version__

__all__ = [
    "__version__",
    "DEFAULTS",
    "WaferError",
    "ConfigError",
    "ProgramError",
    "MemoryAccessError",
    "RouteError",
    "DeadlockError",
    "numerics",
    "asm",
    "tensor",
    "TensorUnit",
    "TensorUnitConfig",
    "pe",
    "layout",
    "noc",
    "kernels",
    "nn",
    "mapping",
    "map",
    "Plan",
    "train",
    "Trainer",
    "History",
    "Wafer",
    "RouterView",
    "WaferPE",
    "Rect",
    "RunStats",
    "PeStats",
    "Arrivals",
    "FabricCounters",
]
