"""Ready-made programs for the wafer's compute elements.

``matvec``: conformance programs 2 and 3 (y = A x + b over a row of PEs, y = A x over a grid).
"""

from . import matvec

__all__ = ["matvec"]
