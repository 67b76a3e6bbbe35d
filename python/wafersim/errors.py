"""The exceptions wafersim raises, from Python and (translated) from its C++ core.

Every error carries a ``category`` saying whose fault it is:

* ``"usage"``: the caller's input, configuration or program is wrong;
* ``"unsupported"``: a feature deliberately not modelled (docs/unsupported_functionality.md);
* ``"unspecified"``: the source documents are silent and wafersim refuses to guess;
* ``"internal"``: an invariant of the emulator broke, please report it.
"""

from __future__ import annotations

__all__ = [
    "WaferError",
    "ConfigError",
    "ProgramError",
    "MemoryAccessError",
    "RouteError",
    "DeadlockError",
    "CycleLimitError",
]


class WaferError(Exception):
    """Base class of every wafersim error."""

    category = "usage"

    def __init__(self, message: str = "", *, category: str | None = None):
        super().__init__(message)
        if category is not None:
            self.category = category


class ConfigError(WaferError, ValueError):
    """A parameter or configuration value out of range or inconsistent."""


class ProgramError(WaferError):
    """A malformed or illegal program, instruction or descriptor."""


class MemoryAccessError(WaferError, IndexError):
    """An access outside a memory, register file or array."""


class RouteError(WaferError):
    """A route that leaves the fabric, conflicts with another or closes a dependency cycle."""


class DeadlockError(WaferError):
    """Wavelets in flight and nothing moved for the watchdog's window.

    ``report`` lists what is stuck and what it waits on.
    """

    def __init__(self, message: str = "", *, category: str | None = None, report: str = ""):
        super().__init__(message, category=category)
        self.report = report

    def __str__(self) -> str:
        base = super().__str__()
        return f"{base}\n{self.report}" if self.report else base


class CycleLimitError(WaferError):
    """A run that did not finish within its cycle limit (a livelock, e.g. a task that loops
    forever): the message names the PEs still running and their pcs."""
