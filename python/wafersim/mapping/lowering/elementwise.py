"""Element-wise vector arithmetic for the activation lowerings: one CE vector instruction
per line of math, each rounded once, over descriptors of ``nout`` elements (a finalizer's
vectors), with the descriptor registers a finalizer task may use as scratch."""

from __future__ import annotations

from ..program.spec import PeSpec

__all__ = ["vop", "scratch", "keep_input"]


def vop(s: PeSpec, op: str, dst: str, a: str, b: str, note: str = "", reg: int = 9) -> list[str]:
    """dst = a OP b, elementwise: ``op`` an arithmetic mnemonic without its type suffix
    (fadd, fsub, fmul, fmax, fmin); ``a``, ``dst`` descriptor names; ``b`` a descriptor
    name, an immediate (``#1.0``) or ``[r6]`` (memory at the address in r6)."""
    L = [f"        lddwds  D[{reg}], {dst}", f"        lds0wds S0[{reg}], {a}"]
    if b.startswith("#") or b.startswith("["):
        src1 = b
    else:
        L.append(f"        lds1wds S1[{reg}], {b}")
        src1 = f"S1[{reg}]"
    L.append(f"        {op}{s.FX} D[{reg}], S0[{reg}], {src1}" + (f"      ; {note}" if note else ""))
    return L


def scratch(s: PeSpec, prefix: str, count: int) -> tuple[list[str], list[str]]:
    """``count`` scratch vectors of ``nout`` elements: (declarations with descriptors
    d_<prefix><k>, their labels)."""
    E, n = s.esize, s.nout
    L, names = [], []
    for k in range(count):
        name = f"{prefix}{k}"
        L += [f"d_{name}: .dsd mem1d, base={name}, length={n}, stride={E}",
              f"{name}: .space {s.dtype}, {n}"]
        names.append(name)
    return L, names


def keep_input(s: PeSpec) -> tuple[list[str], list[str]]:
    """An activation whose derivative needs z keeps it per slot in ``zin`` (laid out as
    aslots: descriptor d_zin, WLI r4 = the slot's byte offset)."""
    E, n = s.esize, s.nout
    return ([f"d_zin:    .dsd mem1d, base=zin, length={n}, stride={E}, wli=1",
             f"zin:      .space {s.dtype}, {s.slots * n}"], ["zin"])
