"""Disassembler for the compute element's 20-bit ISA. Every 20-bit word disassembles to a
line that assembles back to the same word; words that are not valid instructions print as
``.word 0x.....``."""

from __future__ import annotations

import numpy as np

from ..errors import ProgramError
from .ce_assembler import encode_line
from .ce_isa import isa
from .program import Program

__all__ = ["disassemble", "disassemble_word"]


def _sext(v: int, bits: int) -> int:
    return v - (1 << bits) if v >> (bits - 1) else v


def _src1(op, t: int, n: int) -> str:
    if t == 0:
        return f"S1[{n}]"
    if t == 1:
        return "[r6]"
    if t == 2:
        return f"r{n}"
    table = isa().fp_imm if op.src in ("fp16", "fp32") else isa().int_imm
    return f"#{table[n]}"


def _format(word: int, pc: int) -> str | None:
    spec = isa()
    fam = spec.family_of(word)
    op = spec.by_code.get((fam.name, fam.get(word, "opcode")))
    if op is None:
        return None
    g = lambda f: fam.get(word, f)  # noqa: E731
    sfx = ".t" if fam.terminate and g("term") else ""
    m = op.mnemonic
    if fam.name == "dst2src":
        t, n, s1 = g("op0_type"), g("op0"), _src1(op, g("op1_type"), g("op1"))
        if t == 0:
            return f"{m}{sfx} S0[{n}], S0[{n}], {s1}"
        if t == 1:
            return f"{m}{sfx} D[{n}], S0[{n}], {s1}"
        if t == 2:
            return f"{m}{sfx} r{n}, r{n}, {s1}"
        if g("op1_type") == 0:
            return f"{m}{sfx} D[{n}], r{n}, {s1}"
        force = ".o3" if n == 0 else ""
        return f"{m}{force}{sfx} r0, r{n}, {s1}"
    if fam.name == "dst1src":
        dst = f"D[{g('op0')}]" if g("op0_type") == 0 else f"r{g('op0')}"
        return f"{m}{sfx} {dst}, {_src1(op, g('op1_type'), g('op1'))}"
    if fam.name == "nodst2src":
        s0 = f"S0[{g('op0')}]" if g("op0_type") == 0 else f"r{g('op0')}"
        return f"{m}{sfx} {s0}, {_src1(op, g('op1_type'), g('op1'))}"
    if fam.name == "nodst1src":
        t, imm8 = g("op1_type"), (g("imm_high") << 4) | g("op1")
        if t == 0:
            src = f"S1[{g('op1')}]"
        elif t == 1:
            src = f"[{imm8}]"
        elif t == 2:
            src = f"r{g('op1')}"
        elif op.kind == "branch":
            off = _sext(imm8, 8)
            src = f"pc{'+' if off >= 0 else '-'}{abs(off)}"
        elif op.kind == "nop" and imm8 == 0:
            return f"{m}{sfx}"
        else:
            src = f"#{imm8}"
        return f"{m}{sfx} {src}"
    # Immediate format
    if op.kind == "jump":
        return f"{m} {word & 0x3FFF}"
    imm10 = (g("imm_high") << 9) | g("imm_low")
    n = g("op0")
    reg = op.raw.get("reg")
    dst = {"s0": f"S0[{n}]", "s1": f"S1[{n}]", "d": f"D[{n}]", "x": f"X[{n}]",
           "sr": f"SR[{n}]", "gpr3": f"r{n}", None: f"r{n}"}[reg]
    mode = op.raw["imm"]
    if mode == "zero":
        return f"{m} {dst}"
    if mode == "sext16":
        return f"{m} {dst}, {_sext(imm10, 10)}"
    if mode == "hi10":
        return f"{m} {dst}, {imm10}"
    scale = 2 if mode == "addr_x2" else 1
    return f"{m} {dst}, {(_sext(imm10, 10) * scale) & 0x7FFF}"


def disassemble_word(word: int, pc: int = 0) -> str:
    """One line of assembly for a 20-bit word (``.word`` when it is no valid instruction)."""
    word = int(word)
    if not 0 <= word < (1 << isa().word_bits):
        raise ProgramError(f"{word:#x} is not a 20-bit instruction word")
    text = _format(word, pc)
    if text is not None:
        try:
            if encode_line(text, pc) == word:
                return text
        except ProgramError:
            pass
    return f".word {word:#07x}"


def disassemble(words, first: int = 0, *, addresses: bool = True) -> str:
    """A listing of ``words`` (a sequence of 20-bit words, or a :class:`Program`), one
    instruction per line, prefixed with its instruction index when ``addresses``."""
    names: dict[int, list[str]] = {}
    if isinstance(words, Program):
        prog = words
        items = sorted(prog.code.items())
        for name, tid in prog.tasks.items():
            names.setdefault(prog.base + 4 * tid, []).append(f"task {name} (id {tid}) entry")
        for sym in prog.symbols.values():
            if sym.kind in ("code", "task"):
                names.setdefault(sym.address, []).append(f"{sym.name}:")
    else:
        arr = np.asarray(words, dtype=np.int64).ravel()
        items = [(first + k, int(w)) for k, w in enumerate(arr)]
    lines = []
    for pc, w in items:
        for label in names.get(pc, []):
            lines.append(f"; {label}" if label.startswith("task") else label)
        text = disassemble_word(int(w), pc)
        lines.append(f"{pc:5d}:  {text}" if addresses else f"    {text}")
    return "\n".join(lines)
