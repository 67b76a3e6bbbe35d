"""Plain numpy golden models, written independently of the emulator, for tests and users."""

from . import fp_exact, int8_net

__all__ = ["fp_exact", "int8_net"]
