"""Assemblers and disassemblers.

``wafersim.asm.vector``: the 128-bit vector-engine bundles of the tensor unit (seed 002).
"""

from . import vector

__all__ = ["vector"]
