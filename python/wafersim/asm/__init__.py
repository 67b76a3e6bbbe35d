"""Assemblers and disassemblers.

The compute element's 20-bit ISA (seed 000 [0581]-[0603]): :func:`assemble` turns assembly
text (syntax in docs/isa.md) into a :class:`Program`; :func:`disassemble` lists words or a
program; descriptor helpers pack and read DSDs and XDSDs.

``wafersim.asm.vector``: the 128-bit vector-engine bundles of the tensor unit (seed 002).
``wafersim.asm.mathlib``: exp, reciprocal, rsqrt, sqrt and ln as CE instruction sequences
(docs/numerics.md, "Math library").
"""

from . import vector
from .ce_assembler import assemble, encode_line
from .ce_disassembler import disassemble, disassemble_word
from .ce_isa import isa
from .descriptors import pack_dsd, pack_stride, pack_xdsd, unpack_dsd, unpack_xdsd
from .program import Program, Symbol
from . import mathlib

__all__ = [
    "vector",
    "mathlib",
    "assemble",
    "encode_line",
    "disassemble",
    "disassemble_word",
    "isa",
    "pack_dsd",
    "pack_xdsd",
    "pack_stride",
    "unpack_dsd",
    "unpack_xdsd",
    "Program",
    "Symbol",
]
