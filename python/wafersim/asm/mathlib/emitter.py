"""Writes a routine as CE assembly: vector operations over views of PE memory, with the
descriptors, descriptor-register loads and constants they need, and the cycles they take.

A routine says what to compute (``e.vop("fmuls", t.f, x.f, 0.5)``); the emitter
* gives every view a 1D memory descriptor (``.dsd mem1d``, prefixed label) in ``.data``,
* keeps track of what each descriptor register (S0/S1/D of the numbers it may use) holds,
  loads a descriptor only when it is not there, and picks the operand form (``op S0[i],
  S0[i], src1`` in place, ``op D[i], S0[i], src1`` otherwise: the seed's formats tie src0
  and dst to one register number [0585]),
* turns a constant source into an immediate of the ISA's tables when there is one, else
  into a register (``li``; a 32-bit constant needs an even/odd register pair), reusing a
  register that still holds it,
* counts cycles: one per descriptor load, one or two per ``li``, and one per iteration of a
  vector operation, an iteration being up to the opcode's SIMD width of elements (4 for
  16-bit operations, 1 for fp32 ones and conversions) [0502]; docs/compute_element.md.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

from ...errors import ConfigError
from ..ce_isa import isa

__all__ = ["View", "Buffer", "Emitter", "parse_gprs", "parse_dsrs"]

_GPR = re.compile(r"^r(\d+)$")


@dataclass(frozen=True)
class View:
    """n elements at ``label + offset``, ``stride`` bytes apart."""

    label: str
    offset: int
    stride: int
    name: str = field(compare=False)     # for the descriptor's label; views of the same
                                         # memory are one view whatever their names


@dataclass(frozen=True)
class Buffer:
    """A vector of n elements in PE memory. ``kind`` is fp16, fp32 or i16. ``f`` is the
    whole-element view; ``hi``/``lo`` are the 16-bit words of fp32 elements (for fp16 and
    i16 buffers both ``hi`` and ``f`` are the element itself)."""

    label: str
    kind: str
    name: str

    @property
    def f(self) -> View:
        return View(self.label, 0, 4 if self.kind == "fp32" else 2, self.name)

    @property
    def hi(self) -> View:
        if self.kind == "fp32":
            return View(self.label, 2, 4, self.name + "_hi")
        return self.f

    @property
    def lo(self) -> View:
        if self.kind != "fp32":
            raise ValueError(f"{self.label} ({self.kind}) has no lo word")
        return View(self.label, 0, 4, self.name + "_lo")


def parse_gprs(gprs) -> list[int]:
    """Register numbers of ``gprs`` ("r0", "r1", ...); ConfigError unless they are distinct
    registers r0..r15 that include an even/odd pair (for 32-bit constants)."""
    if isinstance(gprs, str) or not hasattr(gprs, "__iter__"):
        raise ConfigError(f"gprs must be a sequence of register names like ('r0', 'r1'), "
                          f"got {gprs!r}")
    nums = []
    for g in gprs:
        m = _GPR.match(str(g).strip().lower())
        if not m or int(m.group(1)) > 15:
            raise ConfigError(f"gprs: {g!r} is not a register r0..r15")
        nums.append(int(m.group(1)))
    if len(set(nums)) != len(nums):
        raise ConfigError(f"gprs names a register twice: {tuple(gprs)!r}")
    if not any(r % 2 == 0 and r + 1 in nums for r in nums):
        raise ConfigError(f"gprs must include an even/odd pair (e.g. 'r0', 'r1') to hold "
                          f"32-bit constants, got {tuple(gprs)!r}")
    return nums


def parse_dsrs(dsrs) -> list[int]:
    """Descriptor-register numbers 0..11, distinct, at least one."""
    if isinstance(dsrs, (str, bytes)) or not hasattr(dsrs, "__iter__"):
        raise ConfigError(f"dsrs must be a sequence of DSR numbers like (9, 10, 11), got {dsrs!r}")
    nums = []
    for d in dsrs:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or not 0 <= d <= 11:
            raise ConfigError(f"dsrs: {d!r} is not a descriptor-register number 0..11")
        nums.append(int(d))
    if not nums:
        raise ConfigError("dsrs must name at least one descriptor-register number (0..11)")
    if len(set(nums)) != len(nums):
        raise ConfigError(f"dsrs names a register number twice: {tuple(dsrs)!r}")
    return nums


class _RegFile:
    """What the descriptor registers of one kind (S0, S1 or D) hold, least recently used
    first out."""

    def __init__(self, numbers: list[int]):
        self.held: dict[int, View | None] = {n: None for n in numbers}
        self.used: dict[int, int] = {n: -1 for n in numbers}

    def find(self, view: View) -> int | None:
        for n, v in self.held.items():
            if v == view:
                return n
        return None

    def victim(self, avoid=()) -> int:
        free = [n for n in self.held if n not in avoid] or list(self.held)
        return min(free, key=lambda n: self.used[n])


class Emitter:
    def __init__(self, prefix: str, n: int, dsrs, gprs):
        self.prefix = prefix
        self.n = n
        self.dsrs = parse_dsrs(dsrs)
        self.gprs = parse_gprs(gprs)
        self.data: list[str] = []
        self.code: list[str] = []
        self.cycles = 0
        self.scratch_bytes = 0
        self._desc: dict[View, str] = {}
        self._files = {k: _RegFile(self.dsrs) for k in ("s0", "s1", "d")}
        self._reg_value: dict[int, int | None] = {r: None for r in self.gprs}
        self._reg_used: dict[int, int] = {r: -1 for r in self.gprs}
        self._clock = 0
        self._isa = isa()
        self._names: set[str] = set()
        # What the code does, for reference.py: (mnemonic, dst, src0 or None, src1) with
        # src1 a View or the constant as given; scratch buffers: label -> (kind, hi_init).
        self.ops: list[tuple] = []
        self.buffers: dict[str, tuple[str, int | None]] = {}

    # ---- memory -----------------------------------------------------------------------------
    def buffer(self, name: str, kind: str, *, hi_init: int | None = None) -> Buffer:
        """A scratch vector of n elements (zero, or fp32 words whose hi word is ``hi_init``
        and lo word zero, set when the program is loaded)."""
        label = f"{self.prefix}_{name}"
        if label in self._names:
            raise AssertionError(f"buffer {label} declared twice")
        self._names.add(label)
        size = {"fp32": 4, "fp16": 2, "i16": 2}[kind]
        self.scratch_bytes += size * self.n
        self.buffers[label] = (kind, hi_init)
        if hi_init is None:
            self.data.append(f"{label}: .space {'fp32' if kind == 'fp32' else 'u16'}, {self.n}"
                             f"    ; scratch")
        else:
            word = f"{(hi_init & 0xFFFF) << 16:#010x}"
            for i in range(0, self.n, 16):
                lab = f"{label}:" if i == 0 else " " * (len(label) + 1)
                vals = ", ".join([word] * min(16, self.n - i))
                self.data.append(f"{lab} .u32 {vals}")
        return Buffer(label, kind, name)

    def external(self, label: str, kind: str, name: str) -> Buffer:
        """A vector the caller owns (the routine's source or destination)."""
        return Buffer(label, kind, name)

    def _descriptor(self, view: View) -> str:
        if view not in self._desc:
            dl = f"{self.prefix}_d_{view.name}"
            base = view.label if view.offset == 0 else f"{view.label} + {view.offset}"
            self.data.append(f"{dl}: .dsd mem1d, base={base}, length={self.n}, "
                             f"stride={view.stride}")
            self._desc[view] = dl
        return self._desc[view]

    def _load(self, kind: str, number: int, view: View) -> None:
        f = self._files[kind]
        if f.held[number] != view:
            op = {"s0": "lds0wds", "s1": "lds1wds", "d": "lddwds"}[kind]
            reg = {"s0": "S0", "s1": "S1", "d": "D"}[kind]
            self.code.append(f"        {op} {reg}[{number}], {self._descriptor(view)}")
            self.cycles += 1
            f.held[number] = view
        self._clock += 1
        f.used[number] = self._clock

    # ---- constants --------------------------------------------------------------------------
    def _li(self, reg: int, value: int) -> None:
        value &= 0xFFFF
        if self._reg_value[reg] == value:
            return
        signed = value - 0x10000 if value & 0x8000 else value
        text = str(signed) if -512 <= signed <= 511 else f"{value:#06x}"
        self.code.append(f"        li r{reg}, {text}")
        self.cycles += 1 if -512 <= signed <= 511 else 2
        self._reg_value[reg] = value

    def _touch(self, *regs: int) -> None:
        self._clock += 1
        for r in regs:
            self._reg_used[r] = self._clock

    def const16(self, value: int) -> str:
        """A register holding the 16-bit ``value``."""
        value &= 0xFFFF
        for r, v in self._reg_value.items():
            if v == value:
                self._touch(r)
                return f"r{r}"
        r = min(self.gprs, key=lambda g: self._reg_used[g])
        self._li(r, value)
        self._touch(r)
        return f"r{r}"

    def const32(self, bits: int) -> str:
        """An even/odd register pair holding the 32-bit ``bits`` (named by its even one)."""
        lo, hi = bits & 0xFFFF, (bits >> 16) & 0xFFFF
        pairs = [r for r in self.gprs if r % 2 == 0 and r + 1 in self._reg_value]
        for r in pairs:
            if self._reg_value[r] == lo and self._reg_value[r + 1] == hi:
                self._touch(r, r + 1)
                return f"r{r}"
        r = min(pairs, key=lambda p: (max(self._reg_used[p], self._reg_used[p + 1]),
                                      self._reg_value[p] != lo))
        self._li(r, lo)
        self._li(r + 1, hi)
        self._touch(r, r + 1)
        return f"r{r}"

    def _source1(self, mnemonic: str, src1) -> str:
        """The assembly text of source 1: a descriptor register, an immediate or a register."""
        op = self._isa.ops[mnemonic]
        elem = op.src
        if isinstance(src1, View):
            f = self._files["s1"]
            j = f.find(src1)
            if j is None:
                j = f.victim()
            self._load("s1", j, src1)
            return f"S1[{j}]"
        if elem in ("fp16", "fp32"):
            dt = np.float16 if elem == "fp16" else np.float32
            ut = np.uint16 if elem == "fp16" else np.uint32
            bits = int(np.array([src1], dtype=dt).view(ut)[0])
            if float(np.array([bits], dtype=ut).view(dt)[0]) != float(src1) \
                    and not math.isnan(float(src1)):
                raise AssertionError(f"constant {src1!r} is not exact in {elem}")
            for text in self._isa.fp_imm:
                if text in ("prn", "nan", "min_normal", "max_normal", "-min_normal",
                            "-max_normal"):
                    continue
                v = float(text)
                if int(np.array([v], dtype=dt).view(ut)[0]) == bits:
                    return f"#{text}"
            return self.const32(bits) if elem == "fp32" else self.const16(bits)
        value = int(src1) & 0xFFFF
        for imm in self._isa.int_imm:
            if imm != "prn" and int(imm) & 0xFFFF == value:
                return f"#{imm}"
        return self.const16(value)

    # ---- operations -------------------------------------------------------------------------
    def _count(self, mnemonic: str) -> None:
        simd = self._isa.ops[mnemonic].raw.get("simd", 1)
        self.cycles += max(1, math.ceil(self.n / simd))

    def vop(self, mnemonic: str, dst: View, src0: View, src1) -> None:
        """dst = src0 (op) src1, elementwise (two-source, one-destination formats)."""
        self.ops.append((mnemonic, dst, src0, src1))
        s1 = self._source1(mnemonic, src1)
        s0f, df = self._files["s0"], self._files["d"]
        if dst == src0:
            i = s0f.find(src0)
            if i is None:
                i = s0f.victim()
            self._load("s0", i, src0)
            self.code.append(f"        {mnemonic} S0[{i}], S0[{i}], {s1}")
        else:
            both = [k for k in self.dsrs if s0f.held[k] == src0 and df.held[k] == dst]
            one = [k for k in self.dsrs if s0f.held[k] == src0 or df.held[k] == dst]
            if both:
                i = both[0]
            elif one:
                i = one[0]
            else:
                i = min(self.dsrs, key=lambda k: max(s0f.used[k], df.used[k]))
            self._load("s0", i, src0)
            self._load("d", i, dst)
            self.code.append(f"        {mnemonic} D[{i}], S0[{i}], {s1}")
        self._count(mnemonic)

    def vop1(self, mnemonic: str, dst: View, src1) -> None:
        """dst = op(src1), elementwise (one-source, one-destination format)."""
        self.ops.append((mnemonic, dst, None, src1))
        s1 = self._source1(mnemonic, src1)
        df = self._files["d"]
        i = df.find(dst)
        if i is None:
            i = df.victim()
        self._load("d", i, dst)
        self.code.append(f"        {mnemonic} D[{i}], {s1}")
        self._count(mnemonic)

    def comment(self, text: str) -> None:
        self.code.append(f"        ; {text}")

    @property
    def descriptor_bytes(self) -> int:
        return 6 * len(self._desc)
