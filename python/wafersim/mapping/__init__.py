"""Mapping a network onto the wafer: layers as blocks of PEs placed west to east, colors,
routes and one CE program per PE (docs/training.md).

    plan = ws.map(model, wafer=None, blocks=None, dtype="fp32", origin=(0, 0))
"""

from .placement import LayerBlock
from .compile import map_model
from .plan import DTYPES, Plan

__all__ = ["Plan", "LayerBlock", "map_model", "DTYPES"]
