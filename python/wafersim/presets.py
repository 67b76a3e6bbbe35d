"""Wafers the size of published wafer-scale systems (``Wafer.preset``), and the clock that
turns their cycle counts into emulated seconds.

The figures are the public ones (docs/scale.md, "Presets", cites them): the PE fabric a
kernel can use on a CS-2 (757 x 996) and a CS-3 (762 x 1172), 48 KiB of memory per PE,
and a clock of 850 MHz. The clock only converts cycles into seconds for printing (as the
vendor's SDK examples do); the emulator counts cycles, and nothing it computes depends on
the clock.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import ConfigError

__all__ = ["Preset", "PRESETS", "preset", "cycles_to_seconds", "describe_time"]


@dataclass(frozen=True)
class Preset:
    """A named wafer: its PE fabric, memory per PE and clock."""

    name: str
    rows: int
    cols: int
    memory_bytes: int    #: per PE
    clock_hz: float      #: for printing time only
    system: str          #: what it stands for

    @property
    def pes(self) -> int:
        return self.rows * self.cols

    def describe(self) -> str:
        return (f"{self.rows} x {self.cols} = {self.pes:,} PEs, {self.memory_bytes // 1024} KiB "
                f"per PE, {self.clock_hz / 1e6:g} MHz ({self.system})")


PRESETS: dict[str, Preset] = {
    "cs2": Preset("cs2", 757, 996, 48 * 1024, 850e6, "CS-2, WSE-2"),
    "cs3": Preset("cs3", 762, 1172, 48 * 1024, 850e6, "CS-3, WSE-3"),
}


def preset(name) -> Preset:
    """The preset called ``name``; ConfigError listing the presets otherwise."""
    if not isinstance(name, str) or name.strip().lower() not in PRESETS:
        names = ", ".join(f"{p.name} ({p.describe()})" for p in PRESETS.values())
        raise ConfigError(f"there is no wafer preset {name!r}; presets: {names}")
    return PRESETS[name.strip().lower()]


def cycles_to_seconds(cycles: int, clock_hz: float) -> float:
    """Emulated seconds that ``cycles`` take at ``clock_hz``."""
    return cycles / clock_hz


def describe_time(cycles: int, clock_hz: float) -> str:
    """``"4,777 cycles = 5.62 us at 850 MHz"``: a cycle count and the emulated time it takes,
    in the unit that reads best."""
    s = cycles_to_seconds(cycles, clock_hz)
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if s >= scale:
            break
    else:
        unit, scale = "ns", 1e-9
    return f"{cycles:,} cycles = {s / scale:.3g} {unit} at {clock_hz / 1e6:g} MHz"
