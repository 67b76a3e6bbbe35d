"""Assembler for the compute element's 20-bit ISA (syntax in docs/isa.md).

Two passes: the first lays out data (descriptors first, from address 0, so that the
10-bit immediates of the DSR loads reach them [0603]) and code (the 64 task entries at
Base + 4*id, then the program), the second evaluates operands and encodes.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import ProgramError
from .ce_isa import ISA, isa
from .descriptors import DescriptorError, pack_dsd, pack_stride, pack_xdsd
from .expressions import ExpressionError, evaluate
from .program import Program, Symbol

__all__ = ["assemble", "encode_line", "ENTRY_SLOTS", "TASK_IDS"]

TASK_IDS = 64
ENTRY_SLOTS = 4  # instructions per task entry: Base + 4*id [0371]

_DATA_TYPES = {".fp16": "<f2", ".fp32": "<f4", ".i16": "<i2", ".u16": "<u2", ".i32": "<i4",
               ".u32": "<u4"}
_SPACE_TYPES = {"fp16": "<f2", "fp32": "<f4", "i16": "<i2", "u16": "<u2", "i32": "<i4",
                "u32": "<u4"}
_LABEL = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.]*)\s*:(?!:)")
_REG = re.compile(r"^[rR](\d+)$")
_DSR = re.compile(r"^(S0|S1|D|X|SR)\[(.+)\]$", re.IGNORECASE)
_PCREL = re.compile(r"^pc\s*([+-])\s*(\d+)$", re.IGNORECASE)


class _Err(Exception):
    """An error in one line; assemble() adds the line number and text."""


@dataclass
class _Item:
    line: int
    text: str
    kind: str                 # "data", "desc", "code"
    op: str                   # directive or mnemonic
    args: list[str]
    labels: list[str] = field(default_factory=list)
    address: int = 0          # bytes for data, instruction index for code
    size: int = 0             # bytes for data, instructions for code
    suffixes: tuple = ()


def _split_args(s: str) -> list[str]:
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


def _strip_comment(line: str) -> str:
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
            raise _Err(f"register {t} does not exist (r0..r15)")
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


class _Encoder:
    """Encodes one instruction from its mnemonic, suffixes and operand texts."""

    def __init__(self, spec: ISA, symbols: dict, sizes: dict):
        self.isa = spec
        self.symbols = symbols
        self.sizes = sizes

    def value(self, text: str) -> int:
        try:
            v = evaluate(text, self.symbols, self.sizes)
        except ExpressionError as e:
            raise _Err(str(e)) from None
        if isinstance(v, float):
            if not v.is_integer():
                raise _Err(f"{text!r} is not an integer")
            v = int(v)
        return v

    def reg_index(self, o: _Opnd, lo: int, hi: int, what: str) -> int:
        n = self.value(str(o.value))
        if not lo <= n <= hi:
            raise _Err(f"{what} {o.text} does not exist ({lo}..{hi})")
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
                raise _Err(f"#{text} is not a floating-point immediate") from None
            for i, v in enumerate(self.isa.fp_imm):
                if _is_number(v) and not math.isnan(float(v)) and float(v) == x and math.copysign(1, float(v)) == math.copysign(1, x):
                    return i
            avail = ", ".join(f"#{v}" for v in self.isa.fp_imm)
            raise _Err(f"#{text} is not one of the floating-point immediates ({avail})")
        v = self.value(t)
        for i, c in enumerate(self.isa.int_imm):
            if c != "prn" and (c == v or (c < 0 and c + 65536 == v)):
                return i
        avail = ", ".join(f"#{c}" for c in self.isa.int_imm)
        raise _Err(f"#{text} is not one of the integer immediates ({avail})")

    def encode(self, mnemonic: str, suffixes: tuple, args: list[str], pc: int) -> int:
        spec = self.isa
        if mnemonic not in spec.ops:
            raise _Err(f"unknown instruction {mnemonic!r}")
        op = spec.ops[mnemonic]
        fam = spec.families[op.family]
        term = "t" in suffixes
        force = [s for s in suffixes if s.startswith("o")]
        if term and not fam.terminate:
            raise _Err(f"{mnemonic} (Immediate format) has no Terminate bit [0601]")
        if force and op.family != "dst2src":
            raise _Err(f".{force[0]} selects an operand-0 type of the two/three-source format")
        ops = [_operand(a) for a in args]
        word = fam.put(0, "prefix", int(fam.prefix, 2))
        word = fam.put(word, "opcode", op.opcode)
        f = getattr(self, "_" + op.family)
        fields = f(op, ops, pc, force[0] if force else None)
        for name, v in fields.items():
            word = fam.put(word, name, v)
        if fam.terminate and term:
            word = fam.put(word, "term", 1)
        return word

    def _nargs(self, op, ops, n):
        if len(ops) != n:
            raise _Err(f"{op.mnemonic} takes {n} operand{'s' if n != 1 else ''}, got {len(ops)}")

    def _src1(self, op, o: _Opnd) -> dict:
        if o.kind == "s1":
            return {"op1_type": 0, "op1": self.reg_index(o, 0, 11, "S1DSR")}
        if o.kind == "memgpr":
            if o.value != 6:
                raise _Err(f"memory source {o.text}: only [r6] addresses memory [0591]")
            return {"op1_type": 1, "op1": 0}
        if o.kind == "gpr":
            return {"op1_type": 2, "op1": o.value}
        if o.kind == "imm":
            return {"op1_type": 3, "op1": self.imm_code(o.value, op.src)}
        raise _Err(f"source 1 {o.text} must be S1[n], [r6], a register or #immediate")

    def _check_pair(self, op, o: _Opnd, elem):
        if o.kind == "gpr" and elem in ("fp32", "i32") and (o.value % 2 or o.value > 14):
            raise _Err(f"{op.mnemonic} takes 32-bit registers as even pairs r0, r2, ..., r14; "
                       f"got {o.text}")

    def _dst2src(self, op, ops, pc, force):
        self._nargs(op, ops, 3)
        dst, s0, s1 = ops
        f = self._src1(op, s1)
        for o, e in ((dst, op.dst), (s0, op.src0), (s1, op.src)):
            self._check_pair(op, o, e)
        if force and force != "o3":
            raise _Err(f"unknown suffix .{force}")
        if dst.kind == "s0" and s0.kind == "s0":
            n, m = self.reg_index(dst, 0, 11, "S0DSR"), self.reg_index(s0, 0, 11, "S0DSR")
            if n != m:
                raise _Err(f"destination {dst.text} and source 0 {s0.text} share operand 0: "
                           "use the same number")
            t, r = 0, n
        elif dst.kind == "d" and s0.kind == "s0":
            n, m = self.reg_index(dst, 0, 11, "DDSR"), self.reg_index(s0, 0, 11, "S0DSR")
            if n != m:
                raise _Err(f"destination {dst.text} and source 0 {s0.text} share operand 0: "
                           "use the same number")
            t, r = 1, n
        elif dst.kind == "gpr" and s0.kind == "gpr":
            if force == "o3" or dst.value != s0.value:
                if dst.value != 0:
                    raise _Err(f"with source 0 {s0.text} the destination must be {s0.text} "
                               "(type 2) or r0 (type 3) [0585]")
                if f["op1_type"] == 0:
                    raise _Err("with an S1 vector source the type-3 destination is D[n], not r0")
                t, r = 3, s0.value
            else:
                t, r = 2, s0.value
        elif dst.kind == "d" and s0.kind == "gpr":
            n = self.reg_index(dst, 0, 11, "DDSR")
            if n != s0.value:
                raise _Err(f"destination {dst.text} and source 0 {s0.text} share operand 0: "
                           "use the same number")
            if f["op1_type"] != 0:
                raise _Err("a D[n] destination with a register source 0 needs an S1[n] "
                           "source 1 [0585]")
            t, r = 3, n
        else:
            raise _Err(f"{op.mnemonic} dst, src0: use S0[n], S0[n] / D[n], S0[n] / rN, rN / "
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
            raise _Err(f"destination {dst.text} must be D[n] or a register [0589]")
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
            raise _Err(f"source 0 {s0.text} must be S0[n] or a register [0587]")
        return f

    def _imm8(self, v: int, what: str) -> dict:
        if not 0 <= v <= 255:
            raise _Err(f"{what} {v} does not fit 8 bits (0..255)")
        return {"op1_type": 3, "imm_high": v >> 4, "op1": v & 15}

    def _nodst1src(self, op, ops, pc, force):
        kind = op.kind
        if kind == "nop" and not ops:
            return {"op1_type": 3}
        self._nargs(op, ops, 1)
        (o,) = ops
        if o.kind == "s1":
            if kind not in ("block", "unblock", "activate", "nop"):
                raise _Err(f"{op.mnemonic} takes no vector source")
            return {"op1_type": 0, "op1": self.reg_index(o, 0, 11, "S1DSR")}
        if o.kind == "gpr":
            return {"op1_type": 2, "op1": o.value}
        if o.kind == "mem":
            a = self.value(o.value)
            if not 0 <= a <= 255 or a % 2:
                raise _Err(f"memory source {o.text}: an even 8-bit address (0..254) [0599]")
            return {"op1_type": 1, "imm_high": a >> 4, "op1": a & 15}
        if kind == "branch":
            if o.kind == "pcrel":
                off = o.value
            elif o.kind == "expr":
                off = self.value(o.value) - pc
            else:
                raise _Err(f"branch target {o.text}: a label, pc+n / pc-n, a register or [addr]")
            if not -128 <= off <= 127:
                raise _Err(f"branch target is {off} instructions away; a branch reaches "
                           "-128..127 (use jmp, or jr with a register)")
            return self._imm8(off & 0xFF, "offset")
        if o.kind in ("imm", "expr"):
            v = self.value(o.value)
        else:
            raise _Err(f"{op.mnemonic} source {o.text}: use #imm, a register, [addr] or S1[n]")
        if kind in ("block", "unblock", "activate") and not (0 <= v < 64 or v == 255):
            raise _Err(f"{op.mnemonic} #{v} names no id: use 0..63, or #255 for all ids [0394]")
        return self._imm8(v, "immediate")

    def _imm(self, op, ops, pc, force):
        mode = op.raw["imm"]
        if op.kind == "jump":
            self._nargs(op, ops, 1)
            v = self.value(ops[0].value) if ops[0].kind in ("expr", "imm") else None
            if v is None or not 0 <= v < (1 << 14):
                raise _Err(f"jump target {ops[0].text} must be an instruction index 0..16383")
            return {"imm_high": v >> 13, "op0": (v >> 9) & 15, "imm_low": v & 511}
        self._nargs(op, ops, 2)
        r, a = ops
        reg = op.raw.get("reg")
        if reg is None:
            if r.kind != "gpr":
                raise _Err(f"{op.mnemonic} writes a register r0..r15, got {r.text}")
            n = r.value
        else:
            want = {"s0": "s0", "s1": "s1", "d": "d", "x": "x", "sr": "sr"}[reg]
            if r.kind != want:
                shown = {"s0": "S0[n]", "s1": "S1[n]", "d": "D[n]", "x": "X[n]", "sr": "SR[n]"}
                raise _Err(f"{op.mnemonic} moves {shown[want]}, got {r.text}")
            lo, hi = (2, 7) if want in ("x", "sr") else (0, 11)
            n = self.reg_index(r, lo, hi, {"x": "XDSR", "sr": "stride register"}.get(want, "DSR"))
        if a.kind not in ("expr", "imm"):
            raise _Err(f"{op.mnemonic}: second operand {a.text} must be a value or address")
        v = self.value(a.value)
        if mode == "sext16":
            if not -512 <= v <= 511:
                raise _Err(f"{op.mnemonic} immediate {v} does not fit 10 signed bits "
                           "(-512..511); use li")
            imm = v & 1023
        elif mode == "hi10":
            if not 0 <= v <= 1023:
                raise _Err(f"movhi immediate {v} must be 0..1023 (bits 15:6)")
            imm = v
        else:
            scale = 2 if mode == "addr_x2" else 1
            if v % scale or v % 2:
                raise _Err(f"address {v} must be even")
            s = v // scale
            if 0 <= v < 0x8000 and s >= 512:
                s -= 0x8000 // scale  # the top of the 15-bit space, reached by negative immediates
            if not -512 <= s <= 511:
                reach = 512 * scale
                raise _Err(f"address {v} is out of reach of {op.mnemonic}'s 10-bit immediate "
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


def _parse_mnemonic(tok: str) -> tuple[str, tuple]:
    """'fmach.t' -> ('fmach', ('t',)); directives ('.word') stay whole."""
    tok = tok.lower()
    if tok.startswith("."):
        return tok, ()
    parts = tok.split(".")
    return parts[0], tuple(parts[1:])


def encode_line(text: str, pc: int = 0, symbols: dict | None = None) -> int:
    """Encodes one instruction line (no labels, no pseudo-instructions) to a 20-bit word."""
    text = _strip_comment(text).strip()
    tok, _, rest = text.partition(" ")
    mnemonic, suffixes = _parse_mnemonic(tok)
    enc = _Encoder(isa(), symbols or {}, {})
    try:
        if mnemonic == ".word":
            return _word_value(enc, rest)
        return enc.encode(mnemonic, suffixes, _split_args(rest), pc)
    except _Err as e:
        raise ProgramError(f"{e}: {text}") from None


def _word_value(enc: _Encoder, rest: str) -> int:
    v = enc.value(rest)
    if not 0 <= v < (1 << 20):
        raise _Err(f".word {v} is not a 20-bit value")
    return v


class _Assembler:
    def __init__(self, source: str):
        self.source = source
        self.isa = isa()
        self.items: list[_Item] = []
        self.symbols: dict[str, int] = {}
        self.syminfo: dict[str, Symbol] = {}
        self.sizes: dict[str, tuple[int, int]] = {}
        self.exports: list[tuple[int, str]] = []
        self.tasks: list[tuple[int, str, str]] = []
        self.base = 0

    def fail(self, item_or_line, msg: str):
        if isinstance(item_or_line, _Item):
            line, text = item_or_line.line, item_or_line.text
        else:
            line, text = item_or_line
        raise ProgramError(f"line {line}: {msg}\n    {text.strip()}") from None

    def ev(self, text: str, where):
        try:
            return evaluate(text, self.symbols, self.sizes)
        except ExpressionError as e:
            self.fail(where, str(e))

    # -- pass 1: parse and lay out
    def parse(self):
        section = "code"
        pending: list[str] = []
        for n, raw in enumerate(self.source.splitlines(), start=1):
            line = _strip_comment(raw)
            while True:
                m = _LABEL.match(line)
                if not m:
                    break
                pending.append(m.group(1))
                line = line[m.end():]
            line = line.strip()
            if not line:
                continue
            tok, _, rest = line.partition(" ")
            op = tok.lower()
            args = _split_args(rest)
            where = (n, raw)
            if op in (".data", ".code"):
                section = op[1:]
                if args:
                    self.fail(where, f"{op} takes no operands")
                continue
            if op == ".export":
                self.exports.extend((n, a) for a in args)
                continue
            if op == ".task":
                if len(args) != 2:
                    self.fail(where, ".task takes a name and an id: .task main, 40")
                self.tasks.append((n, args[0], args[1]))
                continue
            if op == ".base":
                self.base = int(self.ev(rest, where))
                continue
            if section == "data":
                if op in (".dsd", ".xdsd", ".stride"):
                    kind = "desc"
                elif op in _DATA_TYPES or op in (".space", ".org", ".align"):
                    kind = "data"
                else:
                    self.fail(where, f"{tok!r} is not a data directive (.fp16 .fp32 .i16 .u16 "
                                     ".i32 .u32 .space .org .align .dsd .xdsd .stride)")
            else:
                if op.startswith(".") and op != ".word":
                    self.fail(where, f"{tok!r} is not a code directive (.task .export .base "
                                     ".word .data .code)")
                kind = "code"
            item = _Item(n, raw, kind, op, args, pending)
            pending = []
            self.items.append(item)
        if pending:
            self.fail((len(self.source.splitlines()), pending[-1]),
                      f"label {pending[-1]!r} labels nothing")

    def define(self, name: str, value: int, where, sym: Symbol):
        if name in self.symbols:
            self.fail(where, f"symbol {name!r} is defined twice")
        self.symbols[name] = value
        self.syminfo[name] = sym

    def layout(self):
        # Descriptors first, from address 0, within reach of the DSR-load immediates.
        addr = 0
        for it in self.items:
            if it.kind != "desc":
                continue
            it.size = {".dsd": 6, ".xdsd": 8, ".stride": 2}[it.op]
            it.address = addr
            addr += it.size
            for lab in it.labels:
                self.define(lab, it.address, (it.line, it.text),
                            Symbol(lab, "data", it.address, np.dtype("<u2"), it.size // 2,
                                   line=it.line))
                self.sizes[lab] = (it.size, it.size // 2)
        for it in self.items:
            if it.kind != "data":
                continue
            where = (it.line, it.text)
            if it.op == ".org":
                addr = int(self.ev(" ".join(it.args), where))
                continue
            if it.op == ".align":
                a = int(self.ev(" ".join(it.args), where))
                addr = (addr + a - 1) // a * a
                continue
            if it.op == ".space":
                if len(it.args) != 2 or it.args[0].lower() not in _SPACE_TYPES:
                    self.fail(where, ".space takes a type and a count: .space fp16, 64")
                dt = np.dtype(_SPACE_TYPES[it.args[0].lower()])
                count = int(self.ev(it.args[1], where))
            else:
                dt = np.dtype(_DATA_TYPES[it.op])
                count = len(it.args)
            align = 4 if dt.itemsize == 4 else 2
            addr = (addr + align - 1) // align * align
            it.address, it.size = addr, count * dt.itemsize
            it.suffixes = (dt,)
            addr += it.size
            for lab in it.labels:
                self.define(lab, it.address, where, Symbol(lab, "data", it.address, dt, count,
                                                           line=it.line))
                self.sizes[lab] = (it.size, count)
        self.data_end = addr
        # Code: the task entries, then the program.
        pc = self.base + TASK_IDS * ENTRY_SLOTS
        for it in self.items:
            if it.kind != "code":
                continue
            mnemonic, _ = _parse_mnemonic(it.op)
            it.size = 1
            if mnemonic == "li":
                it.size = 2
                if len(it.args) == 2:
                    try:
                        v = evaluate(it.args[1], self.symbols, self.sizes)
                        if isinstance(v, int) and -512 <= v <= 511:
                            it.size = 1
                    except ExpressionError:
                        pass
            it.address = pc
            pc += it.size
            for lab in it.labels:
                self.define(lab, it.address, (it.line, it.text),
                            Symbol(lab, "code", it.address, line=it.line))

    # -- pass 2: encode
    def emit(self) -> Program:
        prog = Program(base=self.base, source=self.source)
        enc = _Encoder(self.isa, self.symbols, self.sizes)
        for it in self.items:
            where = (it.line, it.text)
            try:
                if it.kind == "desc":
                    prog.data.append((it.address, self.descriptor(it, enc)))
                elif it.kind == "data" and it.op not in (".org", ".align"):
                    prog.data.append((it.address, self.values(it)))
                elif it.kind == "code":
                    for k, w in enumerate(self.instruction(it, enc)):
                        prog.code[it.address + k] = w
                        prog.lines[it.address + k] = it.line
            except _Err as e:
                self.fail(where, str(e))
            except DescriptorError as e:
                self.fail(where, str(e))
        seen = {}
        for line, name, id_text in self.tasks:
            where = (line, f".task {name}, {id_text}")
            tid = self.ev(id_text, where)
            if not isinstance(tid, int) or not 0 <= tid < TASK_IDS:
                self.fail(where, f"task id must be 0..63, got {id_text}")
            if tid in seen:
                self.fail(where, f"task id {tid} already belongs to task {seen[tid]!r}")
            sym = self.syminfo.get(name)
            if sym is None or sym.kind != "code":
                self.fail(where, f"task {name!r} needs a code label {name}: where it starts")
            seen[tid] = name
            entry = self.base + ENTRY_SLOTS * tid
            prog.code[entry] = enc.encode("jmp", (), [str(sym.address)], entry)
            prog.lines[entry] = line
            prog.tasks[name] = tid
            self.syminfo[name] = Symbol(name, "task", sym.address, task_id=tid, line=sym.line)
        prog.symbols = dict(self.syminfo)
        prog.exports = set(prog.tasks)
        for line, name in self.exports:
            if name not in self.syminfo:
                self.fail((line, f".export {name}"), f"cannot export unknown symbol {name!r}")
            prog.exports.add(name)
        return prog

    def values(self, it: _Item) -> bytes:
        (dt,) = it.suffixes
        if it.op == ".space":
            return bytes(it.size)
        vals = [evaluate(a, self.symbols, self.sizes) for a in it.args]
        if dt.kind in "iu":
            info = np.iinfo(dt)
            for a, v in zip(it.args, vals):
                if not isinstance(v, int) or not info.min <= v <= info.max:
                    raise _Err(f"{a} is not a {dt.name} value ({info.min}..{info.max})")
        with np.errstate(over="ignore"):
            return np.array(vals, dtype=dt).tobytes()

    def descriptor(self, it: _Item, enc: _Encoder) -> bytes:
        if it.op == ".stride":
            if len(it.args) != 1:
                raise _Err(".stride takes one value")
            return pack_stride(enc.value(it.args[0])).to_bytes(2, "little")
        if not it.args:
            raise _Err(f"{it.op} needs a kind, e.g. {it.op} mem1d, base=x, length=8")
        kind, fields = it.args[0].lower(), {}
        for a in it.args[1:]:
            key, eq, val = a.partition("=")
            if not eq:
                raise _Err(f"descriptor field {a!r} must be name=value")
            key = key.strip().lower()
            val = val.strip()
            if key in ("dims", "strides"):
                inner = val.strip("()[] ")
                parts = [p.strip() for p in inner.split(",") if p.strip()]
                fields[key] = [p if (p == "unit" or p.startswith("sr")) else enc.value(p)
                               for p in parts]
            else:
                fields[key] = enc.value(val)
        if it.op == ".dsd":
            return pack_dsd(kind, **fields).to_bytes(6, "little")
        return pack_xdsd(kind, **fields).to_bytes(8, "little")

    def instruction(self, it: _Item, enc: _Encoder) -> list[int]:
        mnemonic, suffixes = _parse_mnemonic(it.op)
        if mnemonic == ".word":
            return [_word_value(enc, " ".join(it.args))]
        if mnemonic == "li":
            if len(it.args) != 2 or suffixes:
                raise _Err("li takes a register and a value: li r3, 1000")
            v = enc.value(it.args[1])
            if not -32768 <= v <= 65535:
                raise _Err(f"li value {v} does not fit 16 bits")
            if it.size == 1:
                return [enc.encode("movi", (), [it.args[0], str(v)], it.address)]
            v &= 0xFFFF
            return [enc.encode("movi", (), [it.args[0], str(v & 63)], it.address),
                    enc.encode("movhi", (), [it.args[0], str(v >> 6)], it.address + 1)]
        if mnemonic == "term":
            if it.args:
                raise _Err("term takes no operands")
            return [enc.encode("nop", ("t",), [], it.address)]
        return [enc.encode(mnemonic, suffixes, it.args, it.address)]


def assemble(source: str) -> Program:
    """Assembles CE assembly text (docs/isa.md) into a :class:`Program`.

    Raises :class:`wafersim.ProgramError` naming the line for any malformed input.
    """
    if not isinstance(source, str):
        raise ProgramError(f"assemble() takes the program text as a str, got {type(source).__name__}")
    a = _Assembler(source)
    a.parse()
    a.layout()
    if a.data_end > 0x8000:
        raise ProgramError(f"data ends at byte {a.data_end}, beyond the 32 KiB that 15-bit "
                           "descriptor addresses reach [0522]")
    return a.emit()
