"""An assembled compute-element program: instruction words, initial data, symbols."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Program", "Symbol"]


@dataclass(frozen=True)
class Symbol:
    """A named location. ``kind`` is ``"data"`` (``address`` in bytes, with ``dtype`` and
    ``count`` elements), ``"code"`` (``address`` = instruction index) or ``"task"`` (a
    code label bound to ``task_id``)."""

    name: str
    kind: str
    address: int
    dtype: np.dtype | None = None
    count: int = 0
    task_id: int | None = None
    line: int = 0

    @property
    def nbytes(self) -> int:
        return 0 if self.dtype is None else self.count * self.dtype.itemsize


@dataclass
class Program:
    """What ``wafersim.asm.assemble`` returns and ``LonePE.load`` takes.

    ``code`` maps instruction index -> 20-bit word, ``data`` lists (byte address, bytes)
    segments, ``symbols`` every label, ``exports`` the names the host may address
    (exported data plus every task), ``tasks`` task name -> id, ``base`` the Base register
    (in instructions). ``high_base``: where the descriptors after ``.descriptors high``
    begin (they end at byte 32768), or None. ``lines`` maps an instruction index to its source line number.
    Loading the program also sets the Block bits of ``blocked``, the Active bits of
    ``activated`` and the input filters ``filters`` (color -> (lowest, highest) index kept),
    from the ``.block``, ``.activate`` and ``.filter`` directives.
    """

    code: dict[int, int] = field(default_factory=dict)
    data: list[tuple[int, bytes]] = field(default_factory=list)
    symbols: dict[str, Symbol] = field(default_factory=dict)
    exports: set[str] = field(default_factory=set)
    tasks: dict[str, int] = field(default_factory=dict)
    base: int = 0
    lines: dict[int, int] = field(default_factory=dict)
    source: str = ""
    blocked: set[int] = field(default_factory=set)
    activated: set[int] = field(default_factory=set)
    filters: dict[int, tuple[int, int]] = field(default_factory=dict)
    high_base: int | None = None

    @property
    def data_bytes(self) -> int:
        """Bytes of data memory the program occupies: from address 0 to the end of its data,
        plus its high descriptors. The memory must reach byte 32768 when it has any
        (``data_end``)."""
        low = max((a + len(b) for a, b in self.data
                   if self.high_base is None or a < self.high_base), default=0)
        return low + (0 if self.high_base is None else 0x8000 - self.high_base)

    @property
    def data_end(self) -> int:
        """The byte after the program's last data: what the data memory must reach."""
        return max((a + len(b) for a, b in self.data), default=0)

    def code_array(self) -> tuple[int, np.ndarray]:
        """(first index, words) covering every instruction, holes filled with 0 (an illegal
        instruction, so a jump into a hole traps)."""
        if not self.code:
            return self.base, np.zeros(0, dtype=np.uint32)
        lo, hi = min(self.code), max(self.code)
        words = np.zeros(hi - lo + 1, dtype=np.uint32)
        for i, w in self.code.items():
            words[i - lo] = w
        return lo, words

    @property
    def instruction_count(self) -> int:
        return len(self.code)

    def symbol(self, name: str) -> Symbol:
        from ..errors import ConfigError

        if name not in self.symbols:
            known = ", ".join(sorted(self.exports)) or "none"
            raise ConfigError(f"unknown symbol {name!r} (exported: {known})")
        return self.symbols[name]

    def exported(self, name: str) -> Symbol:
        from ..errors import ConfigError

        sym = self.symbol(name)
        if name not in self.exports:
            raise ConfigError(f"symbol {name!r} is not exported; add `.export {name}` to the "
                              "program")
        return sym

    def task_id(self, name_or_id) -> int:
        from ..errors import ConfigError

        if isinstance(name_or_id, (int, np.integer)):
            if not 0 <= int(name_or_id) < 64:
                raise ConfigError(f"task id must be 0..63, got {name_or_id}")
            return int(name_or_id)
        if name_or_id not in self.tasks:
            known = ", ".join(sorted(self.tasks)) or "none"
            raise ConfigError(f"unknown task {name_or_id!r} (tasks: {known})")
        return self.tasks[name_or_id]
