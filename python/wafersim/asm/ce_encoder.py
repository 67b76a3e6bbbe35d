"""Encoding of one CE instruction from its mnemonic and operand texts (the operand tables
of seed 000 [0585]-[0603]); the assembler and the disassembler's round-trip check use it."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from .ce_isa import ISA
from .expressions import ExpressionError, evaluate

__all__ = ["Encoder", "EncodeError", "split_args", "strip_comment", "parse_mnemonic"]

_REG = re.compile(r"^[rR](\d+)$")
_DSR = re.compile(r"^(S0|S1|D|X|SR)\[(.+)\]$", re.IGNORECASE)
_PCREL = re.compile(r"^pc\s*([+-])\s*(\d+)$", re.IGNORECASE)


# Operand spellings by operand type, for messages on the types an opcode takes.
_OP0_FORMS = {"dst2src": ("S0[n], S0[n]", "D[n], S0[n]", "rN, rN", "D[n], rN / r0, rN"),
              "dst1src": ("D[n]", "rN"), "nodst2src": ("S0[n]", "rN")}
_OP1_FORMS = {"nodst1src": ("S1[n]", "[addr]", "rN", "#imm")}
_MULTI_OP1_FORMS = ("S1[m]", "[r6]", "rN", "#imm")


class EncodeError(Exception):
    """An error in one line; assemble() adds the line number and text."""


def split_args(s: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def strip_comment(line: str) -> str:
    for mark in (";", "//"):
        i = line.find(mark)
        if i >= 0:
            line = line[:i]
    return line.rstrip()


# ---- operands ----------------------------------------------------------------------------

@dataclass
class _Opnd:
    kind: str       # gpr, s0, s1, d, x, sr, mem, imm, pcrel, expr
    value: object   # register number, expression text, offset
    text: str


def _operand(text: str) -> _Opnd:
    t = text.strip()
    m = _REG.match(t)
    if m:
        n = int(m.group(1))
        if n > 15:
            raise EncodeError(f"register {t} does not exist (r0..r15)")
        return _Opnd("gpr", n, t)
    m = _DSR.match(t)
    if m:
        return _Opnd(m.group(1).lower(), m.group(2), t)
    if t.startswith("[") and t.endswith("]"):
        inner = t[1:-1].strip()
        m = _REG.match(inner)
        if m:
            return _Opnd("memgpr", int(m.group(1)), t)
        return _Opnd("mem", inner, t)
    if t.startswith("#"):
        return _Opnd("imm", t[1:].strip(), t)
    m = _PCREL.match(t)
    if m:
        return _Opnd("pcrel", int(m.group(2)) * (1 if m.group(1) == "+" else -1), t)
    return _Opnd("expr", t, t)


class Encoder:
    """Encodes one instruction from its mnemonic, suffixes and operand texts."""

    def __init__(self, spec: ISA, symbols: dict, sizes: dict):
        self.isa = spec
        self.symbols = symbols
        self.sizes = sizes

    def value(self, text: str) -> int:
        try:
            v = evaluate(text, self.symbols, self.sizes)
        except ExpressionError as e:
            raise EncodeError(str(e)) from None
        if isinstance(v, float):
            if not v.is_integer():
                raise EncodeError(f"{text!r} is not an integer")
            v = int(v)
        return v

    def reg_index(self, o: _Opnd, lo: int, hi: int, what: str) -> int:
        n = self.value(str(o.value))
        if not lo <= n <= hi:
            raise EncodeError(f"{what} {o.text} does not exist ({lo}..{hi})")
        return n

    # -- immediates of the multiple-operand formats [0593]-[0594]
    def imm_code(self, text: str, elem: str) -> int:
        t = text.strip().lower()
        if t == "prn":
            return 8
        if elem in ("fp16", "fp32"):
            names = {v.lower(): i for i, v in enumerate(self.isa.fp_imm) if v != "prn"}
            if t in names:  # exact spelling first: "nan", "-0.0", "min_normal", ...
                return names[t]
            try:
                x = float(evaluate(t, {}, {}))
            except (ExpressionError, TypeError):
                raise EncodeError(f"#{text} is not a floating-point immediate") from None
            for i, v in enumerate(self.isa.fp_imm):
                if _is_number(v) and not math.isnan(float(v)) and float(v) == x and math.copysign(1, float(v)) == math.copysign(1, x):
                    return i
            avail = ", ".join(f"#{v}" for v in self.isa.fp_imm)
            raise EncodeError(f"#{text} is not one of the floating-point immediates ({avail})")
        v = self.value(t)
        for i, c in enumerate(self.isa.int_imm):
            if c != "prn" and (c == v or (c < 0 and c + 65536 == v)):
                return i
        avail = ", ".join(f"#{c}" for c in self.isa.int_imm)
        raise EncodeError(f"#{text} is not one of the integer immediates ({avail})")

    def encode(self, mnemonic: str, suffixes: tuple, args: list[str], pc: int) -> int:
        spec = self.isa
        if mnemonic not in spec.ops:
            raise EncodeError(f"unknown instruction {mnemonic!r}")
        op = spec.ops[mnemonic]
        fam = spec.families[op.family]
        term = "t" in suffixes
        force = [s for s in suffixes if s.startswith("o")]
        if term and not fam.terminate:
            raise EncodeError(f"{mnemonic} (Immediate format) has no Terminate bit [0601]")
        if force and op.family != "dst2src":
            raise EncodeError(f".{force[0]} selects an operand-0 type of the two/three-source format")
        ops = [_operand(a) for a in args]
        word = fam.put(0, "prefix", int(fam.prefix, 2))
        word = fam.put(word, "opcode", op.opcode)
        f = getattr(self, "_" + op.family)
        fields = f(op, ops, pc, force[0] if force else None)
        self._check_types(op, fields, args)
        for name, v in fields.items():
            word = fam.put(word, name, v)
        if fam.terminate and term:
            word = fam.put(word, "term", 1)
        return word

    def _nargs(self, op, ops, n):
        if len(ops) != n:
            raise EncodeError(f"{op.mnemonic} takes {n} operand{'s' if n != 1 else ''}, got {len(ops)}")

    def _src1(self, op, o: _Opnd) -> dict:
        if o.kind == "s1":
            return {"op1_type": 0, "op1": self.reg_index(o, 0, 11, "S1DSR")}
        if o.kind == "memgpr":
            if o.value != 6:
                raise EncodeError(f"memory source {o.text}: only [r6] addresses memory [0591]")
            return {"op1_type": 1, "op1": 0}
        if o.kind == "gpr":
            return {"op1_type": 2, "op1": o.value}
        if o.kind == "imm":
            return {"op1_type": 3, "op1": self.imm_code(o.value, op.src)}
        raise EncodeError(f"source 1 {o.text} must be S1[n], [r6], a register or #immediate")

    def _check_types(self, op, fields: dict, args: list[str]):
        """The operand types the ISA file lets the opcode take (op0_types, op1_types)."""
        for i, allowed in enumerate((op.op0_types, op.op1_types)):
            if fields.get(f"op{i}_type", 0) not in allowed:
                names = (_OP0_FORMS if i == 0 else _OP1_FORMS).get(op.family, _MULTI_OP1_FORMS)
                raise EncodeError(f"{op.mnemonic} takes only "
                                  + " or ".join(names[t] for t in allowed)
                                  + f" as operand {i}; got {', '.join(args)}")

    def _check_pair(self, op, o: _Opnd, elem):
        if o.kind == "gpr" and elem in ("fp32", "i32") and (o.value % 2 or o.value > 14):
            raise EncodeError(f"{op.mnemonic} takes 32-bit registers as even pairs r0, r2, ..., r14; "
                       f"got {o.text}")

    def _dst2src(self, op, ops, pc, force):
        self._nargs(op, ops, 3)
        dst, s0, s1 = ops
        f = self._src1(op, s1)
        for o, e in ((dst, op.dst), (s0, op.src0), (s1, op.src)):
            self._check_pair(op, o, e)
        if force and force != "o3":
            raise EncodeError(f"unknown suffix .{force}")
        if dst.kind == "s0" and s0.kind == "s0":
            n, m = self.reg_index(dst, 0, 11, "S0DSR"), self.reg_index(s0, 0, 11, "S0DSR")
            if n != m:
                raise EncodeError(f"destination {dst.text} and source 0 {s0.text} share operand 0: "
                           "use the same number")
            t, r = 0, n
        elif dst.kind == "d" and s0.kind == "s0":
            n, m = self.reg_index(dst, 0, 11, "DDSR"), self.reg_index(s0, 0, 11, "S0DSR")
            if n != m:
                raise EncodeError(f"destination {dst.text} and source 0 {s0.text} share operand 0: "
                           "use the same number")
            t, r = 1, n
        elif dst.kind == "gpr" and s0.kind == "gpr":
            if force == "o3" or dst.value != s0.value:
                if dst.value != 0:
                    raise EncodeError(f"with source 0 {s0.text} the destination must be {s0.text} "
                               "(type 2) or r0 (type 3) [0585]")
                if f["op1_type"] == 0:
                    raise EncodeError("with an S1 vector source the type-3 destination is D[n], not r0")
                t, r = 3, s0.value
            else:
                t, r = 2, s0.value
        elif dst.kind == "d" and s0.kind == "gpr":
            n = self.reg_index(dst, 0, 11, "DDSR")
            if n != s0.value:
                raise EncodeError(f"destination {dst.text} and source 0 {s0.text} share operand 0: "
                           "use the same number")
            if f["op1_type"] != 0:
                raise EncodeError("a D[n] destination with a register source 0 needs an S1[n] "
                           "source 1 [0585]")
            t, r = 3, n
        else:
            raise EncodeError(f"{op.mnemonic} dst, src0: use S0[n], S0[n] / D[n], S0[n] / rN, rN / "
                       f"D[n], rN / r0, rN; got {dst.text}, {s0.text}")
        f.update({"op0_type": t, "op0": r})
        return f

    def _dst1src(self, op, ops, pc, force):
        self._nargs(op, ops, 2)
        dst, s1 = ops
        f = self._src1(op, s1)
        self._check_pair(op, dst, op.dst)
        self._check_pair(op, s1, op.src)
        if dst.kind == "d":
            f.update({"op0_type": 0, "op0": self.reg_index(dst, 0, 11, "DDSR")})
        elif dst.kind == "gpr":
            f.update({"op0_type": 1, "op0": dst.value})
        else:
            raise EncodeError(f"destination {dst.text} must be D[n] or a register [0589]")
        return f

    def _nodst2src(self, op, ops, pc, force):
        self._nargs(op, ops, 2)
        s0, s1 = ops
        f = self._src1(op, s1)
        self._check_pair(op, s0, op.src0)
        self._check_pair(op, s1, op.src)
        if s0.kind == "s0":
            f.update({"op0_type": 0, "op0": self.reg_index(s0, 0, 11, "S0DSR")})
        elif s0.kind == "gpr":
            f.update({"op0_type": 1, "op0": s0.value})
        else:
            raise EncodeError(f"source 0 {s0.text} must be S0[n] or a register [0587]")
        return f

    def _imm8(self, v: int, what: str) -> dict:
        if not 0 <= v <= 255:
            raise EncodeError(f"{what} {v} does not fit 8 bits (0..255)")
        return {"op1_type": 3, "imm_high": v >> 4, "op1": v & 15}

    def _nodst1src(self, op, ops, pc, force):
        kind = op.kind
        if kind == "nop" and not ops:
            return {"op1_type": 3}
        self._nargs(op, ops, 1)
        (o,) = ops
        if o.kind == "s1":
            if 0 not in op.op1_types:
                raise EncodeError(f"{op.mnemonic} takes no vector source")
            return {"op1_type": 0, "op1": self.reg_index(o, 0, 11, "S1DSR")}
        if op.op1_types == (0,):
            raise EncodeError(f"{op.mnemonic} takes a descriptor S1[n], got {o.text}")
        if o.kind == "gpr":
            return {"op1_type": 2, "op1": o.value}
        if o.kind == "mem":
            a = self.value(o.value)
            if not 0 <= a <= 255 or a % 2:
                raise EncodeError(f"memory source {o.text}: an even 8-bit address (0..254) [0599]")
            return {"op1_type": 1, "imm_high": a >> 4, "op1": a & 15}
        if kind == "branch":
            if o.kind == "pcrel":
                off = o.value
            elif o.kind == "expr":
                off = self.value(o.value) - pc
            else:
                raise EncodeError(f"branch target {o.text}: a label, pc+n / pc-n, a register or [addr]")
            if not -128 <= off <= 127:
                raise EncodeError(f"branch target is {off} instructions away; a branch reaches "
                           "-128..127 (use jmp, or jr with a register)")
            return self._imm8(off & 0xFF, "offset")
        if o.kind in ("imm", "expr"):
            v = self.value(o.value)
        else:
            raise EncodeError(f"{op.mnemonic} source {o.text}: use #imm, a register, [addr] or S1[n]")
        cs = self.isa.data["color_set"]
        if op.raw.get("imm") == "ids" and not (0 <= v < cs["ids"] or v == cs["all_imm8"]):
            meaning = "none" if kind == "tensor" else "all ids [0394]"
            raise EncodeError(f"{op.mnemonic} #{v} names no id: use 0..{cs['ids'] - 1}, "
                              f"or #{cs['all_imm8']} for {meaning}")
        return self._imm8(v, "immediate")

    def _imm(self, op, ops, pc, force):
        mode = op.raw["imm"]
        if op.kind == "jump":
            self._nargs(op, ops, 1)
            v = self.value(ops[0].value) if ops[0].kind in ("expr", "imm") else None
            if v is None or not 0 <= v < (1 << 14):
                raise EncodeError(f"jump target {ops[0].text} must be an instruction index 0..16383")
            return {"imm_high": v >> 13, "op0": (v >> 9) & 15, "imm_low": v & 511}
        reg = op.raw.get("reg")
        if mode == "zero":  # rdcyc rN: three registers from rN, no immediate
            self._nargs(op, ops, 1)
            (r,) = ops
            last = self.isa.regs["gprs"] - 3
            if r.kind != "gpr" or (reg == "gpr3" and r.value > last):
                raise EncodeError(f"{op.mnemonic} writes three registers rN..rN+2: r0..r{last}, "
                                  f"got {r.text}")
            return {"op0": r.value, "imm_high": 0, "imm_low": 0}
        self._nargs(op, ops, 2)
        r, a = ops
        if reg is None:
            if r.kind != "gpr":
                raise EncodeError(f"{op.mnemonic} writes a register r0..r15, got {r.text}")
            n = r.value
        else:
            want = {"s0": "s0", "s1": "s1", "d": "d", "x": "x", "sr": "sr"}[reg]
            if r.kind != want:
                shown = {"s0": "S0[n]", "s1": "S1[n]", "d": "D[n]", "x": "X[n]", "sr": "SR[n]"}
                raise EncodeError(f"{op.mnemonic} moves {shown[want]}, got {r.text}")
            lo, hi = (2, 7) if want in ("x", "sr") else (0, 11)
            n = self.reg_index(r, lo, hi, {"x": "XDSR", "sr": "stride register"}.get(want, "DSR"))
        if a.kind not in ("expr", "imm"):
            raise EncodeError(f"{op.mnemonic}: second operand {a.text} must be a value or address")
        v = self.value(a.value)
        if mode == "sext16":
            if not -512 <= v <= 511:
                raise EncodeError(f"{op.mnemonic} immediate {v} does not fit 10 signed bits "
                           "(-512..511); use li")
            imm = v & 1023
        elif mode == "hi10":
            if not 0 <= v <= 1023:
                raise EncodeError(f"movhi immediate {v} must be 0..1023 (bits 15:6)")
            imm = v
        else:
            scale = 2 if mode == "addr_x2" else 1
            if v % scale or v % 2:
                raise EncodeError(f"address {v} must be even")
            s = v // scale
            if 0 <= v < 0x8000 and s >= 512:
                s -= 0x8000 // scale  # the top of the 15-bit space, reached by negative immediates
            if not -512 <= s <= 511:
                reach = 512 * scale
                raise EncodeError(f"address {v} is out of reach of {op.mnemonic}'s 10-bit immediate "
                           f"(the first or last {reach} bytes of the 15-bit space) [0603]: "
                           "place descriptors and scalars near address 0")
            imm = s & 1023
        return {"op0": n, "imm_high": imm >> 9, "imm_low": imm & 511}


def _is_number(v: str) -> bool:
    try:
        float(v)
        return True
    except ValueError:
        return False


def parse_mnemonic(tok: str) -> tuple[str, tuple]:
    """'fmach.t' -> ('fmach', ('t',)); directives ('.word') stay whole."""
    tok = tok.lower()
    if tok.startswith("."):
        return tok, ()
    parts = tok.split(".")
    return parts[0], tuple(parts[1:])
