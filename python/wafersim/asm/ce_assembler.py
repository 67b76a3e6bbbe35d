"""Assembler for the compute element's 20-bit ISA (syntax in docs/isa.md).

Two passes: the first lays out data (descriptors first, from address 0, so that the
10-bit immediates of the DSR loads reach them [0603]; those after ``.descriptors high`` at
the end of the 15-bit space, which the same immediates reach as negative offsets) and code (the 64 task entries at
Base + 4*id, then the program), the second evaluates operands and encodes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import ProgramError
from .ce_encoder import Encoder, EncodeError, parse_mnemonic, split_args, strip_comment
from .ce_isa import isa
from .descriptors import DescriptorError, pack_dsd, pack_stride, pack_xdsd
from .expressions import ExpressionError, evaluate
from .program import Program, Symbol

__all__ = ["assemble", "encode_line", "ENTRY_SLOTS", "TASK_IDS"]

TASK_IDS = 64
HIGH_END = 0x8000     # the high descriptors end where 15-bit descriptor addresses do [0522]
HIGH_REACH = 1024     # the last bytes that DSR-load immediates reach (negative) [0603]
ENTRY_SLOTS = 4  # instructions per task entry: Base + 4*id [0371]

# Bytes (u8, i8) are for tensor-unit operands; the CE itself reads 16 and 32 bits [0579].
_DATA_TYPES = {".fp16": "<f2", ".fp32": "<f4", ".i16": "<i2", ".u16": "<u2", ".i32": "<i4",
               ".u32": "<u4", ".u8": "u1", ".i8": "i1"}
_SPACE_TYPES = {"fp16": "<f2", "fp32": "<f4", "i16": "<i2", "u16": "<u2", "i32": "<i4",
                "u32": "<u4", "u8": "u1", "i8": "i1"}
_LOAD_SYNTAX = {".block": ".block NAME_OR_ID, ...", ".activate": ".activate NAME_OR_ID, ...",
                ".filter": ".filter COLOR, LOWEST_INDEX, HIGHEST_INDEX"}
_LABEL = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.]*)\s*:(?!:)")


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
    high: bool = False        # a descriptor placed at the end of the 15-bit space


def encode_line(text: str, pc: int = 0, symbols: dict | None = None) -> int:
    """Encodes one instruction line (no labels, no pseudo-instructions) to a 20-bit word."""
    text = strip_comment(text).strip()
    tok, _, rest = text.partition(" ")
    mnemonic, suffixes = parse_mnemonic(tok)
    enc = Encoder(isa(), symbols or {}, {})
    try:
        if mnemonic == ".word":
            return _word_value(enc, rest)
        return enc.encode(mnemonic, suffixes, split_args(rest), pc)
    except EncodeError as e:
        raise ProgramError(f"{e}: {text}") from None


def _word_value(enc: Encoder, rest: str) -> int:
    v = enc.value(rest)
    if not 0 <= v < (1 << 20):
        raise EncodeError(f".word {v} is not a 20-bit value")
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
        self.load_state: list[tuple[int, str, str, list[str]]] = []  # .block/.activate/.filter
        self.base = 0
        self.high = False           # .descriptors high: descriptors go to the high end
        self.high_base: int | None = None

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
            line = strip_comment(raw)
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
            args = split_args(rest)
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
            if op in (".block", ".activate", ".filter"):
                if not args:
                    self.fail(where, f"{op} needs operands: {_LOAD_SYNTAX[op]}")
                self.load_state.append((n, raw, op, args))
                continue
            if op == ".base":
                self.base = int(self.ev(rest, where))
                continue
            if op == ".descriptors":
                if section != "data" or len(args) != 1 or args[0].lower() not in ("low", "high"):
                    self.fail(where, ".descriptors takes low or high, in the data section: "
                                     ".descriptors high")
                self.high = args[0].lower() == "high"
                continue
            if section == "data":
                if op in (".dsd", ".xdsd", ".stride"):
                    kind = "desc"
                elif op in _DATA_TYPES or op in (".space", ".org", ".align"):
                    kind = "data"
                else:
                    self.fail(where, f"{tok!r} is not a data directive (.fp16 .fp32 .i16 .u16 "
                                     ".i32 .u32 .u8 .i8 .space .org .align .dsd .xdsd .stride)")
            else:
                if op.startswith(".") and op != ".word":
                    self.fail(where, f"{tok!r} is not a code directive (.task .export .base "
                                     ".block .activate .filter .word .data .code)")
                kind = "code"
            item = _Item(n, raw, kind, op, args, pending, high=kind == "desc" and self.high)
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
        # Those after `.descriptors high` end at the end of the 15-bit space.
        sizes = {".dsd": 6, ".xdsd": 8, ".stride": 2}
        high = [it for it in self.items if it.kind == "desc" and it.high]
        if high:
            self.high_base = HIGH_END - sum(sizes[it.op] for it in high)
            if self.high_base < HIGH_END - HIGH_REACH:
                self.fail(high[-1], f"the high descriptors take {HIGH_END - self.high_base} "
                                    f"bytes; DSR loads reach the last {HIGH_REACH} [0603]")
        addr, top = 0, self.high_base
        for it in self.items:
            if it.kind != "desc":
                continue
            it.size = sizes[it.op]
            if it.high:
                it.address, top = top, top + it.size
            else:
                it.address, addr = addr, addr + it.size
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
            mnemonic, _ = parse_mnemonic(it.op)
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
        prog = Program(base=self.base, source=self.source, high_base=self.high_base)
        enc = Encoder(self.isa, self.symbols, self.sizes)
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
            except EncodeError as e:
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
        self.apply_load_state(prog)
        prog.symbols = dict(self.syminfo)
        prog.exports = set(prog.tasks)
        for line, name in self.exports:
            if name not in self.syminfo:
                self.fail((line, f".export {name}"), f"cannot export unknown symbol {name!r}")
            prog.exports.add(name)
        return prog

    def apply_load_state(self, prog: Program) -> None:
        """The Block bits, Active bits and input filters a load sets (.block, .activate,
        .filter), so that a program need not race an init task against arriving wavelets."""
        for line, raw, op, args in self.load_state:
            where = (line, raw)
            if op == ".filter":
                if len(args) != 3:
                    self.fail(where, f".filter takes three operands: {_LOAD_SYNTAX[op]}")
                color, lo, hi = (self.ev(a, where) for a in args)
                for name, v, top in (("color", color, 63), ("lowest index", lo, 65535),
                                     ("highest index", hi, 65535)):
                    if not isinstance(v, int) or not 0 <= v <= top:
                        self.fail(where, f".filter {name} must be 0..{top}, got {v}")
                if lo > hi:
                    self.fail(where, f".filter keeps indices {lo}..{hi}: an empty range")
                prog.filters[color] = (lo, hi)
                continue
            ids = prog.blocked if op == ".block" else prog.activated
            for a in args:
                tid = prog.tasks.get(a)
                if tid is None:
                    tid = self.ev(a, where)
                if not isinstance(tid, int) or not 0 <= tid < TASK_IDS:
                    self.fail(where, f"{op} names a task (a .task name) or an id 0..63, got {a}")
                ids.add(tid)

    def values(self, it: _Item) -> bytes:
        (dt,) = it.suffixes
        if it.op == ".space":
            return bytes(it.size)
        vals = [evaluate(a, self.symbols, self.sizes) for a in it.args]
        if dt.kind in "iu":
            info = np.iinfo(dt)
            for a, v in zip(it.args, vals):
                if not isinstance(v, int) or not info.min <= v <= info.max:
                    raise EncodeError(f"{a} is not a {dt.name} value ({info.min}..{info.max})")
        with np.errstate(over="ignore"):
            return np.array(vals, dtype=dt).tobytes()

    def descriptor(self, it: _Item, enc: Encoder) -> bytes:
        if it.op == ".stride":
            if len(it.args) != 1:
                raise EncodeError(".stride takes one value")
            return pack_stride(enc.value(it.args[0])).to_bytes(2, "little")
        if not it.args:
            raise EncodeError(f"{it.op} needs a kind, e.g. {it.op} mem1d, base=x, length=8")
        kind, fields = it.args[0].lower(), {}
        for a in it.args[1:]:
            key, eq, val = a.partition("=")
            if not eq:
                raise EncodeError(f"descriptor field {a!r} must be name=value")
            key = key.strip().lower()
            val = val.strip()
            if key in ("dims", "strides"):
                inner = val.strip("()[] ")
                parts = [p.strip() for p in inner.split(",") if p.strip()]
                fields[key] = [p if (p == "unit" or p.startswith("sr")) else enc.value(p)
                               for p in parts]
            elif key == "ac" and val.lower() == "none":
                fields[key] = "none"  # a completion that does nothing [0503]
            else:
                fields[key] = enc.value(val)
        if it.op == ".dsd":
            return pack_dsd(kind, **fields).to_bytes(6, "little")
        return pack_xdsd(kind, **fields).to_bytes(8, "little")

    def instruction(self, it: _Item, enc: Encoder) -> list[int]:
        mnemonic, suffixes = parse_mnemonic(it.op)
        if mnemonic == ".word":
            return [_word_value(enc, " ".join(it.args))]
        if mnemonic == "li":
            if len(it.args) != 2 or suffixes:
                raise EncodeError("li takes a register and a value: li r3, 1000")
            v = enc.value(it.args[1])
            if not -32768 <= v <= 65535:
                raise EncodeError(f"li value {v} does not fit 16 bits")
            if it.size == 1:
                return [enc.encode("movi", (), [it.args[0], str(v)], it.address)]
            v &= 0xFFFF
            return [enc.encode("movi", (), [it.args[0], str(v & 63)], it.address),
                    enc.encode("movhi", (), [it.args[0], str(v >> 6)], it.address + 1)]
        if mnemonic == "term":
            if it.args:
                raise EncodeError("term takes no operands")
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
    if a.high_base is not None and a.data_end > a.high_base:
        raise ProgramError(f"data ends at byte {a.data_end}, past byte {a.high_base} where "
                           "the descriptors after `.descriptors high` begin")
    return a.emit()
