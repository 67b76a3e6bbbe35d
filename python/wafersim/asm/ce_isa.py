"""The compute element's instruction set, read from ``ce_isa.json`` (the one source of truth
shared with the C++ decoder, see scripts/gen_ce_isa.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

__all__ = ["ISA", "Family", "OpDef", "isa"]


@dataclass(frozen=True)
class Family:
    name: str
    prefix: str
    fields: dict  # name -> (hi, lo)
    terminate: bool

    def put(self, word: int, field: str, value: int) -> int:
        hi, lo = self.fields[field]
        width = hi - lo + 1
        if not 0 <= value < (1 << width):
            raise ValueError(f"{field}={value} does not fit {width} bits")
        return word | (value << lo)

    def get(self, word: int, field: str) -> int:
        if field not in self.fields:
            return 0
        hi, lo = self.fields[field]
        return (word >> lo) & ((1 << (hi - lo + 1)) - 1)


@dataclass(frozen=True)
class OpDef:
    mnemonic: str
    family: str
    opcode: int
    kind: str
    raw: dict

    @property
    def src(self) -> str | None:
        return self.raw.get("src")

    @property
    def src0(self) -> str | None:
        return self.raw.get("src0", self.raw.get("src"))

    @property
    def dst(self) -> str | None:
        return self.raw.get("dst")

    @property
    def op0_types(self) -> tuple:
        """The operand-0 types the opcode takes (all four unless the ISA file lists some)."""
        return tuple(self.raw.get("op0_types", range(4)))

    @property
    def op1_types(self) -> tuple:
        return tuple(self.raw.get("op1_types", range(4)))


class ISA:
    """Formats, opcodes, immediates and descriptor layouts of the 20-bit CE ISA."""

    def __init__(self, data: dict):
        self.data = data
        self.word_bits = data["word_bits"]
        self.families = {f["name"]: Family(f["name"], f["prefix"],
                                           {k: tuple(v) for k, v in f["fields"].items()},
                                           f["terminate"]) for f in data["families"]}
        self.ops = {o["mnemonic"]: OpDef(o["mnemonic"], o["family"], o["opcode"], o["kind"], o)
                    for o in data["opcodes"]}
        self.by_code = {(o.family, o.opcode): o for o in self.ops.values()}
        imm = data["immediates"]
        self.int_imm = [e["value"] for e in imm["int"]]
        self.fp_imm = [e["value"] for e in imm["fp"]]
        self.dsd_layouts = {lay["name"]: lay for lay in data["dsd"]["layouts"]}
        self.xdsd_layouts = {lay["name"]: lay for lay in data["xdsd"]["layouts"]}
        self.regs = data["registers"]
        self.sw_codes = {int(v): int(k) for k, v in data["sw_codes"].items() if k.isdigit()}
        self.fp_control = data["fp_control"]

    def family_of(self, word: int) -> Family:
        for name in ("imm", "dst2src", "dst1src", "nodst2src", "nodst1src"):
            fam = self.families[name]
            n = len(fam.prefix)
            if (word >> (self.word_bits - n)) == int(fam.prefix, 2):
                return fam
        raise AssertionError("prefix codes cover every word")


@lru_cache(maxsize=1)
def isa() -> ISA:
    text = resources.files("wafersim.asm").joinpath("ce_isa.json").read_text()
    return ISA(json.loads(text))
