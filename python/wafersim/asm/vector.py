"""Assembler and disassembler of the vector-engine ISA (seed 002, Fig. 7, [0087]-[0093]).

The bundle format is data: every opcode, field position and register file comes from
``vector_isa.json`` next to this module (see docs/vector_isa.md). A program is text, one
instruction per line; a line is a triad of up to three components separated by ``|``, in any
order, each slot at most once (a missing slot is a NOP [0088])::

    DEQ.W RD0 | RELUQ.U8 RB4, RD0, scale=3, shift=8, zp=0 | OUT.B RB4
    LD.W RD2 | FMUL RD1, RD0, RD2
    ADD.S RW3, RW1, 100 @M0        ; immediate source 2; @M0 predicates the write-back
    RELU.F RD1, RD1                ; .F selects fp32 operands for an integer-or-fp opcode
    MASKMOV M1, 0x5555             ; long format, never bundled [0093]

``;`` starts a comment. Registers are RB0-31, RW0-15, RD0-7 (aliases of one another [0062])
and M0-3 (masks). The operand size comes from the registers (RB 8, RW 16, RD 32 bits) or
from the opcode (FADD, FSUB, FMUL, SIGM: fp32). Immediates are integers (``-5``, ``0xFF``) or,
with fp32 operands, floats (``1.5``).

:func:`assemble` returns an ``(n, 2)`` uint64 array of ``[low, high]`` 64-bit words.
"""

from __future__ import annotations

import json
import re
import struct
from functools import lru_cache
from importlib import resources

import numpy as np

from ..errors import ProgramError

__all__ = ["spec", "assemble", "disassemble", "encode_fields", "decode_fields"]

_SIZE_OF_FILE = {"RB": 0, "RW": 1, "RD": 2}
_FILE_OF_SIZE = {0: "RB", 1: "RW", 2: "RD", 3: "RD"}
_BITS_OF_SIZE = {0: 8, 1: 16, 2: 32, 3: 32}
_REG = re.compile(r"^(RB|RW|RD|M)(\d+)$", re.IGNORECASE)


@lru_cache(maxsize=1)
def spec() -> dict:
    """The parsed vector_isa.json (fields, opcodes, register files)."""
    text = resources.files(__package__).joinpath("vector_isa.json").read_text(encoding="utf-8")
    s = json.loads(text)
    s["_fields"] = {f["name"]: (f["lsb"], f["width"]) for f in s["triad_fields"] + s["long_fields"]}
    s["_cfg"] = {b["name"]: (b["lsb"], b["width"]) for b in s["cfg_bits"]}
    s["_counts"] = {rf["name"]: rf["count"] for rf in s["register_files"]}
    for slot in ("load_ops", "alu_ops", "store_ops", "long_ops"):
        s["_" + slot] = {op["mnemonic"]: op for op in s[slot]}
        s["_" + slot + "_by_code"] = {op["opcode"]: op for op in s[slot]}
    return s


# --- bit packing -------------------------------------------------------------------------

def encode_fields(fields: dict[str, int], long_format: bool = False) -> int:
    """Packs named fields (names of vector_isa.json) into a 128-bit integer."""
    s = spec()
    word = (1 << s["format_bit"]) if long_format else 0
    for name, value in fields.items():
        lsb, width = s["_fields"][name]
        if not 0 <= value < (1 << width):
            raise ProgramError(f"field {name}: value {value} does not fit {width} bits")
        word |= value << lsb
    return word


def decode_fields(word: int) -> tuple[bool, dict[str, int]]:
    """Splits a 128-bit integer into its named fields: (is_long, fields)."""
    s = spec()
    is_long = bool((word >> s["format_bit"]) & 1)
    group = s["long_fields"] if is_long else s["triad_fields"]
    return is_long, {f["name"]: (word >> f["lsb"]) & ((1 << f["width"]) - 1) for f in group}


def _words(ints: list[int]) -> np.ndarray:
    out = np.zeros((len(ints), 2), dtype=np.uint64)
    for i, w in enumerate(ints):
        out[i, 0] = w & 0xFFFF_FFFF_FFFF_FFFF
        out[i, 1] = w >> 64
    return out


# --- assembler ---------------------------------------------------------------------------

class _Line:
    def __init__(self, number: int, text: str):
        self.number, self.text = number, text

    def error(self, what: str) -> ProgramError:
        return ProgramError(f"line {self.number}: {what}\n    {self.text.strip()}")


def _register(tok: str, line: _Line, field: str) -> tuple[str, int]:
    m = _REG.match(tok.strip())
    if not m:
        raise line.error(f"{field}: expected a register (RB/RW/RD/M + number), got {tok.strip()!r}")
    file, idx = m.group(1).upper(), int(m.group(2))
    if idx >= spec()["_counts"][file]:
        raise line.error(f"{field}: register {file}{idx} does not exist "
                         f"({file}0-{file}{spec()['_counts'][file] - 1})")
    return file, idx


def _is_register(tok: str) -> bool:
    return bool(_REG.match(tok.strip()))


def _immediate(tok: str, size: int, line: _Line) -> int:
    t = tok.strip()
    try:
        if re.fullmatch(r"[+-]?(0x[0-9a-fA-F_]+|0b[01_]+|\d[\d_]*)", t):
            v = int(t, 0)
        elif size == 3:
            v = struct.unpack("<I", struct.pack("<f", float(t)))[0]
        else:
            raise ValueError
    except (ValueError, OverflowError):
        raise line.error(f"immediate: cannot read {t!r} (integers; floats only with fp32 operands)") from None
    if not -(1 << 31) <= v < (1 << 32):
        raise line.error(f"immediate {t} does not fit 32 bits")
    return v & 0xFFFF_FFFF


def _quant_imm(tokens: list[str], line: _Line) -> int:
    if len(tokens) == 1 and "=" not in tokens[0]:
        return _immediate(tokens[0], 2, line)
    vals = {"scale": None, "shift": 0, "zp": 0}
    for t in tokens:
        if "=" not in t:
            raise line.error(f"quantization immediate: expected scale=, shift=, zp=; got {t.strip()!r}")
        k, v = (x.strip() for x in t.split("=", 1))
        if k not in vals:
            raise line.error(f"quantization immediate: unknown key {k!r} (scale, shift, zp)")
        try:
            vals[k] = int(v, 0)
        except ValueError:
            raise line.error(f"quantization immediate: {k}={v!r} is not an integer") from None
    scale, shift, zp = vals["scale"], vals["shift"], vals["zp"]
    if scale is None:
        raise line.error("quantization immediate needs scale=")
    if not -32768 <= scale <= 32767:
        raise line.error(f"quantization scale {scale} is not an int16")
    if not 0 <= shift <= 31:
        raise line.error(f"quantization shift {shift} is not in 0..31")
    if not -128 <= zp <= 127:
        raise line.error(f"quantization zero point {zp} is not an int8")
    return (scale & 0xFFFF) | (shift << 16) | ((zp & 0xFF) << 24)


def _alu(op: dict, fp_suffix: bool, operands: list[str], predicate: bool, line: _Line) -> dict:
    mn, form, sizes, imm_mode = op["mnemonic"], op["form"], op["sizes"], op["imm"]
    f = {"alu_op": op["opcode"], "alu_rd": 0, "alu_rs1": 0, "alu_rs2": 0, "alu_rs3": 0, "alu_imm": 0}
    mask = valid = 0
    expected = {"none": 0, "d": 1, "ds": 2, "dss": 3, "mss": 3, "dsi": 3, "di": 2, "dsss": 4,
                "dssm": 4, "bsq": None}[form]
    if expected is not None and len(operands) != expected:
        raise line.error(f"{mn} takes {expected} operand(s) ({spec()['forms'][form]}), got {len(operands)}")
    if form == "bsq" and len(operands) < 3:
        raise line.error(f"{mn} takes RB destination, source register and a quantization immediate")

    # Size: from the data registers named, or fp32 for fp opcodes / the .F suffix.
    data_regs = []
    if form in ("d", "ds", "dss", "dsi", "di", "dsss", "dssm"):
        data_regs.append(("alu_rd", operands[0]))
    if form in ("ds", "dss", "dsi", "dsss", "dssm", "mss", "bsq"):
        data_regs.append(("alu_rs1", operands[1]))
    if form in ("dss", "mss", "dsss", "dssm") and _is_register(operands[2]):
        data_regs.append(("alu_rs2", operands[2]))
    if form == "dsss":
        data_regs.append(("alu_rs3", operands[3]))
    files = set()
    for field, tok in data_regs:
        file, idx = _register(tok, line, field)
        if file == "M":
            raise line.error(f"{field}: {mn} takes a data register here, not a mask")
        files.add(file)
        f[field] = idx
    if len(files) > 1:
        raise line.error(f"{mn}: operands mix register sizes {sorted(files)}; they must be one size")
    size = _SIZE_OF_FILE[files.pop()] if files else 2
    if sizes == "fp" or fp_suffix:
        if sizes not in ("fp", "num", "any"):
            raise line.error(f"{mn} has no fp32 form")
        if size != 2:
            raise line.error(f"{mn}: fp32 operands live in RD registers")
        size = 3
    if sizes == "int" and size == 3:
        raise line.error(f"{mn} takes integer operands")
    if sizes == "wide" and size not in (1, 2):
        raise line.error(f"{mn}: the source must be RW or RD (16 or 32 bits)")

    if form == "mss":
        file, idx = _register(operands[0], line, "alu_rd")
        if file != "M":
            raise line.error(f"alu_rd: {mn} writes a mask register M0-M3, got {operands[0].strip()}")
        f["alu_rd"] = idx
    if form == "dssm":
        file, idx = _register(operands[3], line, "alu_rs3")
        if file != "M":
            raise line.error(f"alu_rs3: {mn} selects with a mask register M0-M3, got {operands[3].strip()}")
        f["alu_rs3"] = idx
    if form == "bsq":
        file, idx = _register(operands[0], line, "alu_rd")
        if file != "RB":
            raise line.error(f"alu_rd: {mn} writes an 8-bit RB register, got {operands[0].strip()}")
        f["alu_rd"] = idx
        f["alu_imm"] = _quant_imm(operands[2:], line)
        valid = 1

    if form in ("dss", "mss") and not _is_register(operands[2]):
        if imm_mode not in ("optional", "mask"):
            raise line.error(f"{mn} takes no immediate")
        f["alu_imm"] = _immediate(operands[2], size, line)
        valid = 1
        mask = 1 if imm_mode == "mask" else 0
    if form in ("dsi", "di"):
        f["alu_imm"] = _immediate(operands[-1], size, line)
        valid = 1
        if imm_mode == "shift" and f["alu_imm"] >= _BITS_OF_SIZE[size]:
            raise line.error(f"{mn}: shift count {f['alu_imm']} is not below the operand size "
                             f"{_BITS_OF_SIZE[size]}")
    if form == "none":
        if predicate:
            raise line.error("an ALU NOP cannot be predicated")
        size = 0
    cfg = spec()["_cfg"]
    f["alu_cfg"] = ((size << cfg["size"][0]) | (mask << cfg["mask"][0]) |
                    (valid << cfg["imm_valid"][0]) | (int(predicate) << cfg["predicate"][0]))
    return f


def _slot_op(mnemonic: str, line: _Line):
    s = spec()
    fp_suffix = False
    name = mnemonic.upper()
    for slot in ("load_ops", "alu_ops", "store_ops", "long_ops"):
        if name in s["_" + slot] and name != "NOP":
            return slot, s["_" + slot][name], False
    if name.endswith(".F") and name[:-2] in s["_alu_ops"]:
        return "alu_ops", s["_alu_ops"][name[:-2]], True
    if name == "NOP":
        return "nop", None, fp_suffix
    raise line.error(f"unknown opcode {mnemonic!r}")


def _assemble_line(line: _Line, text: str) -> int:
    parts = [p.strip() for p in text.split("|")]
    if any(not p for p in parts):
        raise line.error("empty component between '|' separators (write NOP)")
    fields: dict[str, int] = {}
    used: set[str] = set()
    for comp in parts:
        predicate = False
        if comp.upper().endswith("@M0"):
            predicate, comp = True, comp[:-3].strip()
        elif "@" in comp:
            raise line.error("only @M0 predication exists (cfg bit P)")
        head, _, rest = comp.partition(" ")
        operands = [o for o in (x.strip() for x in rest.split(",")) if o] if rest.strip() else []
        slot, op, fp_suffix = _slot_op(head, line)
        if slot == "long_ops":
            if len(parts) > 1:
                raise line.error(f"{op['mnemonic']} may not be bundled [0093]: put it on its own line")
            if len(operands) != 2:
                raise line.error(f"{op['mnemonic']} takes a mask register and a 96-bit immediate")
            file, idx = _register(operands[0], line, "long_mask")
            if file != "M":
                raise line.error(f"long_mask: {op['mnemonic']} writes a mask register M0-M3")
            try:
                imm = int(operands[1], 0)
            except ValueError:
                raise line.error(f"long_imm: cannot read {operands[1]!r}") from None
            if not 0 <= imm < (1 << 96):
                raise line.error("long_imm: the immediate must fit 96 bits")
            return encode_fields({"long_op": op["opcode"], "long_mask": idx, "long_imm": imm}, True)
        if slot == "nop":
            if operands or predicate:
                raise line.error("NOP takes no operands")
            continue
        if predicate and slot != "alu_ops":
            raise line.error("only the ALU component can be predicated (@M0)")
        if slot in used:
            raise line.error(f"two {slot.split('_')[0]} components in one triad")
        used.add(slot)
        if slot == "alu_ops":
            fields.update(_alu(op, fp_suffix, operands, predicate, line))
        else:
            pre = "ld" if slot == "load_ops" else "st"
            fields[pre + "_op"] = op["opcode"]
            if op["reg"] == "none":
                continue
            if len(operands) != 1:
                raise line.error(f"{op['mnemonic']} takes one register operand")
            file, idx = _register(operands[0], line, pre + "_reg")
            if file != op["reg"]:
                raise line.error(f"{pre}_reg: {op['mnemonic']} takes a {op['reg']} register, got "
                                 f"{operands[0].strip()}")
            fields[pre + "_reg"] = idx
    return encode_fields(fields)


def assemble(text: str) -> np.ndarray:
    """Assembles vector-engine source into an ``(n, 2)`` uint64 array of bundles."""
    if not isinstance(text, str):
        raise ProgramError(f"assemble takes source text, got {type(text).__name__}")
    out = []
    for number, raw in enumerate(text.splitlines(), start=1):
        body = raw.split(";", 1)[0].strip()
        if body:
            out.append(_assemble_line(_Line(number, raw), body))
    return _words(out)


# --- disassembler ------------------------------------------------------------------------

def _imm_text(v: int, size: int) -> str:
    if size == 3:
        return repr(struct.unpack("<f", struct.pack("<I", v))[0])
    return str(v - (1 << 32) if v >= (1 << 31) else v) if v < 256 or v >= (1 << 31) else hex(v)


def _alu_text(op: dict, f: dict) -> str:
    cfgb = spec()["_cfg"]
    cfg = f["alu_cfg"]
    size = (cfg >> cfgb["size"][0]) & 3
    valid = (cfg >> cfgb["imm_valid"][0]) & 1
    pred = (cfg >> cfgb["predicate"][0]) & 1
    file = _FILE_OF_SIZE[size]
    r = lambda n: f"{file}{f[n]}"  # noqa: E731
    form = op["form"]
    name = op["mnemonic"] + (".F" if size == 3 and op["sizes"] in ("num", "any") else "")
    src2 = _imm_text(f["alu_imm"], size) if valid else None
    ops: list[str] = {
        "none": lambda: [],
        "d": lambda: [r("alu_rd")],
        "ds": lambda: [r("alu_rd"), r("alu_rs1")],
        "dss": lambda: [r("alu_rd"), r("alu_rs1"), src2 or r("alu_rs2")],
        "mss": lambda: [f"M{f['alu_rd']}", r("alu_rs1"), src2 or r("alu_rs2")],
        "dsi": lambda: [r("alu_rd"), r("alu_rs1"), str(f["alu_imm"])],
        "di": lambda: [r("alu_rd"), _imm_text(f["alu_imm"], size)],
        "dsss": lambda: [r("alu_rd"), r("alu_rs1"), r("alu_rs2"), r("alu_rs3")],
        "dssm": lambda: [r("alu_rd"), r("alu_rs1"), r("alu_rs2"), f"M{f['alu_rs3']}"],
        "bsq": lambda: [f"RB{f['alu_rd']}", r("alu_rs1"), _quant_text(f["alu_imm"])],
    }[form]()
    text = name + (" " + ", ".join(ops) if ops else "")
    return text + (" @M0" if pred else "")


def _quant_text(imm: int) -> str:
    scale = imm & 0xFFFF
    scale = scale - 0x10000 if scale >= 0x8000 else scale
    zp = (imm >> 24) & 0xFF
    zp = zp - 0x100 if zp >= 0x80 else zp
    return f"scale={scale}, shift={(imm >> 16) & 31}, zp={zp}"


def disassemble(words) -> str:
    """Text of an ``(n, 2)`` uint64 bundle array; ``assemble(disassemble(w))`` gives ``w``
    back for every well-formed program."""
    s = spec()
    w = np.asarray(words, dtype=np.uint64).reshape(-1, 2)
    lines = []
    for i, (lo, hi) in enumerate(w):
        word = int(lo) | (int(hi) << 64)
        is_long, f = decode_fields(word)
        if is_long:
            op = s["_long_ops_by_code"].get(f["long_op"])
            if op is None:
                raise ProgramError(f"bundle {i}: field long_op: unknown opcode {f['long_op']:#x}")
            lines.append(f"{op['mnemonic']} M{f['long_mask']}, {f['long_imm']:#x}")
            continue
        comps = []
        for key, pre in (("load_ops", "ld"), ("alu_ops", "alu"), ("store_ops", "st")):
            op = s[f"_{key}_by_code"].get(f[pre + "_op"])
            if op is None:
                raise ProgramError(f"bundle {i}: field {pre}_op: unknown opcode {f[pre + '_op']:#x}")
            if key == "alu_ops":
                comps.append(_alu_text(op, f))
            elif op["reg"] == "none":
                comps.append("NOP")
            else:
                comps.append(f"{op['mnemonic']} {op['reg']}{f[pre + '_reg']}")
        lines.append(" | ".join(comps))
    return "\n".join(lines) + ("\n" if lines else "")
