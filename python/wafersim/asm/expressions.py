"""A small, safe expression evaluator for assembler operands: integers, floats, symbols,
arithmetic and a few functions (``fp16(x)``, ``fp32(x)``, ``sizeof(sym)``, ``count(sym)``,
``switch_cmds(adv, nop, rst, ..., switch_only=1)``).
"""

from __future__ import annotations

import ast
import math
import operator
import threading

import numpy as np

__all__ = ["evaluate", "ExpressionError"]


class ExpressionError(ValueError):
    pass


_BIN = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.FloorDiv: operator.floordiv, ast.Div: operator.truediv, ast.Mod: operator.mod,
        ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.BitAnd: operator.and_,
        ast.BitOr: operator.or_, ast.BitXor: operator.xor}
_UN = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert}


def _fp16(x) -> int:
    return int(np.array(float(x), dtype=np.float16).view(np.uint16))


def _fp32(x) -> int:
    return int(np.array(float(x), dtype=np.float32).view(np.uint32))


def _switch_cmds(node: ast.Call, ev) -> int:
    """The 16-bit command word of a control wavelet (wafersim.switches): one command name
    per hop, ``switch_only=`` a flag."""
    from ..switches import COMMANDS, commands_word

    cmds = []
    for a in node.args:
        if not isinstance(a, ast.Name) or a.id.lower() not in COMMANDS:
            raise ExpressionError(f"switch_cmds() takes command names ({', '.join(COMMANDS)}), "
                                  f"got {ast.unparse(a)!r}")
        cmds.append(a.id.lower())
    only = False
    for kw in node.keywords:
        if kw.arg != "switch_only":
            raise ExpressionError("switch_cmds() takes only the keyword switch_only, got "
                                  f"{kw.arg!r}")
        only = bool(ev(kw.value))
    try:
        return commands_word(cmds, switch_only=only)
    except ValueError as e:
        raise ExpressionError(str(e)) from None


# CPython 3.11's parser can fail with "AST constructor recursion depth mismatch" when
# several threads parse at once (scripts that assemble in threads: domains as threads,
# notebooks); one parse at a time avoids it.
_PARSE_LOCK = threading.Lock()


def evaluate(text: str, symbols: dict, sizes: dict | None = None):
    """Evaluates ``text``; names come from ``symbols``; ``sizes`` maps a name to
    (bytes, elements) for sizeof()/count()."""
    sizes = sizes or {}
    try:
        with _PARSE_LOCK:
            tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        raise ExpressionError(f"cannot parse expression {text.strip()!r}") from None

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
                and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in symbols:
                return symbols[node.id]
            if node.id in ("inf", "nan"):
                return math.inf if node.id == "inf" else math.nan
            raise ExpressionError(f"unknown symbol {node.id!r}")
        if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
            return _BIN[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UN:
            return _UN[type(node.op)](ev(node.operand))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "switch_cmds":
            return _switch_cmds(node, ev)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 1:
            fn = node.func.id
            if fn in ("sizeof", "count"):
                arg = node.args[0]
                if not isinstance(arg, ast.Name) or arg.id not in sizes:
                    raise ExpressionError(f"{fn}() takes a data symbol")
                return sizes[arg.id][0 if fn == "sizeof" else 1]
            if fn == "fp16":
                return _fp16(ev(node.args[0]))
            if fn == "fp32":
                return _fp32(ev(node.args[0]))
            raise ExpressionError(f"unknown function {fn!r} (fp16, fp32, sizeof, count, "
                                  "switch_cmds)")
        raise ExpressionError(f"unsupported expression {ast.unparse(node)!r}")

    return ev(tree)
