"""Plain numpy golden models, written independently of the emulator, for tests and users."""

from . import int8_net

__all__ = ["int8_net"]
