"""Packing and unpacking of data structure descriptors (DSDs, XDSDs, stride registers) with
the layouts of ``ce_isa.json`` (seed 000 [0497]-[0551]).

``pack_dsd("mem1d", base=136, length=10, stride=-2, wli=1)`` gives the 48-bit value a DSR
holds; ``unpack_dsd(raw, role="source")`` names its fields again.
"""

from __future__ import annotations

import numpy as np

from ..errors import ProgramError
from .ce_isa import isa

__all__ = ["pack_dsd", "pack_xdsd", "unpack_dsd", "unpack_xdsd", "pack_stride", "split_dims",
           "dims_length_df", "DSD_KINDS", "XDSD_KINDS", "DescriptorError"]

DSD_KINDS = ("fabric_in", "fabric_out", "mem1d", "mem4d", "circular")
XDSD_KINDS = ("mem4d", "circular")


class DescriptorError(ProgramError, ValueError):
    """A descriptor field or raw value that does not fit its format (a ProgramError)."""


def _integer(name: str, value, bits: int | None = None) -> int:
    """``value`` as an int (``bits``: unsigned and below 2**bits), else DescriptorError."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise DescriptorError(f"{name} must be an integer, got {value!r}")
    if bits is not None and not 0 <= value < (1 << bits):
        raise DescriptorError(f"{name} must be a {bits}-bit value (0..{(1 << bits) - 1}), "
                              f"got {value}")
    return int(value)


def _put(word: int, layout: dict, field: str, value: int) -> int:
    value = _integer(field, int(value) if isinstance(value, (bool, np.bool_)) else value)
    hi, lo = layout["fields"][field]
    width = hi - lo + 1
    if field in layout.get("signed", ()):
        lo_v, hi_v = -(1 << (width - 1)), (1 << (width - 1)) - 1
        if not lo_v <= value <= hi_v:
            raise DescriptorError(f"{field}={value} does not fit a signed {width}-bit field "
                                  f"({lo_v}..{hi_v})")
        value &= (1 << width) - 1
    elif not 0 <= value < (1 << width):
        raise DescriptorError(f"{field}={value} does not fit {width} bits (0..{(1 << width) - 1})")
    mask = ((1 << width) - 1) << lo
    return (word & ~mask) | (value << lo)


def _get(word: int, layout: dict, field: str) -> int:
    hi, lo = layout["fields"][field]
    width = hi - lo + 1
    v = (word >> lo) & ((1 << width) - 1)
    if field in layout.get("signed", ()) and v >> (width - 1):
        v -= 1 << width
    return v


def _sw_code(sw: int) -> int:
    codes = isa().sw_codes
    if sw not in codes:
        raise DescriptorError(f"sw (SIMD width) must be 1, 2 or 4, got {sw}")
    return codes[sw]


def _nibbles(v: int) -> int:
    return max(1, (int(v).bit_length() + 3) // 4)


def dims_length_df(dims) -> tuple[int, int]:
    """Length 2161 and DF 2243 for dimension lengths (first = fastest), with each
    dimension in as few nibbles as its value needs and the last taking the rest [0547]."""
    try:
        dims = [_integer("dims", d) for d in dims]
    except TypeError:  # not iterable
        raise DescriptorError(f"dims must be 1 to 4 non-negative lengths, got {dims!r}") from None
    if not 1 <= len(dims) <= 4 or any(d < 0 for d in dims):
        raise DescriptorError(f"dims must be 1 to 4 non-negative lengths, got {dims}")
    length, df, used = 0, 0, 0
    for i, d in enumerate(dims):
        n = _nibbles(d) if i < len(dims) - 1 else 6 - used
        if n < _nibbles(d) or used + n > 6:
            raise DescriptorError(f"dims {dims} do not fit the six nibbles of Length 2161")
        length |= d << (4 * used)
        used += n
        if i < len(dims) - 1:
            df |= 1 << (used - 1)
    return length, df


def split_dims(length24: int, df: int) -> list[int]:
    """The dimension lengths DF 2243 carves out of Length 2161 [0547]."""
    dims, value, k = [], 0, 0
    for i in range(6):
        value |= ((length24 >> (4 * i)) & 0xF) << (4 * k)
        k += 1
        if i == 5 or (df >> i) & 1:
            dims.append(value)
            value, k = 0, 0
    return dims


def _completion(kind: str, f: dict) -> None:
    """Turns the completion conveniences of a fabric DSD into its AC and CA fields [0503]:
    ``ac=ID`` activates ID, ``unblock=ID`` unblocks ID, ``ac="none"`` does nothing. A
    microthreaded DSD (UE), or a fabric input that ends on a control wavelet (Term), must
    say which: its completion would otherwise activate id 0 silently."""
    actions = isa().data["completion"]["actions"]
    said = [k for k in ("ac", "unblock", "ca") if k in f]
    if len(said) > 1 and not (set(said) == {"ac", "ca"}):
        raise DescriptorError(f"give one completion action: {', '.join(said)}")
    if "unblock" in f:
        f["ac"], f["ca"] = f.pop("unblock"), actions.index("unblock")
    elif isinstance(f.get("ac"), str):
        if f["ac"].lower() != "none":
            raise DescriptorError(f"ac must be an id 0..63 or 'none', got {f['ac']!r}")
        f["ac"], f["ca"] = 0, actions.index("none")
    ends = bool(f.get("ue")) or (kind == "fabric_in" and bool(f.get("term")))
    if ends and not said:
        what = "a microthreaded fabric DSD (ue=1)" if f.get("ue") else "a fabric input with term=1"
        raise DescriptorError(f"{what} must say what its completion does: ac=ID (activate), "
                              "unblock=ID, or ac=none [0503]")


def pack_dsd(kind: str, **f) -> int:
    """A 48-bit DSD. Fields are those of the layout plus conveniences: ``sw`` (1, 2, 4),
    ``index`` (fabric output, 0..63), ``xdsr`` (2..7, for mem4d/circular), ``dims``
    (mem4d: dimension lengths, packed as ``.xdsd mem4d, dims=...`` expects), and for the
    fabric DSDs the completion action: ``ac=ID`` (activate), ``unblock=ID`` or ``ac="none"``
    (required with ``ue=1``, and with ``term=1`` on an input)."""
    if kind not in DSD_KINDS:
        raise DescriptorError(f"unknown DSD kind {kind!r}: use one of {', '.join(DSD_KINDS)}")
    lay = isa().dsd_layouts[kind]
    f = dict(f)
    if kind in ("fabric_in", "fabric_out"):
        _completion(kind, f)
    if kind in ("mem4d", "circular"):
        x = f.pop("xdsr", None)
        if x is None or not 2 <= _integer("xdsr", x) <= 7:
            raise DescriptorError(f"a {kind} DSD names its XDSR: xdsr=2..7 (got {x})")
        f["type"] = int(x)
    elif "type" not in f:
        f["type"] = int(lay["type"])
    if "sw" in f:
        f["sw"] = _sw_code(_integer("sw", f["sw"]))
    if "index" in f:
        idx = _integer("index", f.pop("index"))
        if not 0 <= idx < 64:
            raise DescriptorError(f"index must be 0..63 (Index 2128 has six bits), got {idx}")
        f["index_low"], f["index_high"] = idx & 7, idx >> 3
    if kind == "mem4d":
        if "dims" in f:
            length, _ = dims_length_df(f.pop("dims"))
        else:
            length = _integer("length", f.pop("length", 0))
        if not 0 <= length < (1 << 24):
            raise DescriptorError(f"a 4D length has 24 bits, got {length}")
        f["length_low"], f["length_high"] = length & 0x7FFF, length >> 15
    word = 0
    for name, value in f.items():
        if name not in lay["fields"]:
            raise DescriptorError(f"a {kind} DSD has no field {name!r} (fields: "
                                  f"{', '.join(k for k in lay['fields'] if k != 'type')})")
        word = _put(word, lay, name, value)
    return word


def pack_xdsd(kind: str, **f) -> int:
    """A 51-bit XDSD. ``mem4d`` takes ``dims`` and ``strides`` (one per dimension: "unit",
    a byte count (Stride 2245, one value at most), or "sr2".."sr7"); ``circular`` takes
    ``start``, ``end``, ``fifo``, ``push`` and ``pop`` (colors to activate)."""
    name = {"mem4d": "x4d", "circular": "xcircular"}.get(kind)
    if name is None:
        raise DescriptorError(f"unknown XDSD kind {kind!r}: use mem4d or circular")
    lay = isa().xdsd_layouts[name]
    f = dict(f)
    f["type"] = int(lay["type"])
    if kind == "mem4d":
        if "dims" in f:
            _, f["df"] = dims_length_df(f.pop("dims"))
        strides = f.pop("strides", None)
        if strides is not None:
            long_stride = None
            for i, s in enumerate(list(strides) + ["unit"] * (4 - len(strides))):
                key = f"sel{i + 1}"
                if isinstance(s, str) and s == "unit":
                    f[key] = 0
                elif isinstance(s, str) and s.startswith("sr"):
                    r = int(s[2:]) if s[2:] in ("2", "3", "4", "5", "6", "7") else -1
                    if i == 0 or not 2 <= r <= 7:
                        raise DescriptorError(f"stride {s!r}: stride registers sr2..sr7 serve "
                                              "dimensions 2-4 only [0548]-[0550]")
                    f[key] = r
                else:
                    s = _integer(f"strides[{i}]", s)
                    if long_stride is not None and s != long_stride:
                        raise DescriptorError("only one explicit stride fits Stride 2245; "
                                              "use stride registers (sr2..sr7) for others")
                    long_stride = s
                    f[key] = 1
            if long_stride is not None:
                f["stride"] = long_stride
    else:
        for key, en in (("push", "push_en"), ("pop", "pop_en")):
            if key in f:
                f[f"{key}_color"] = _integer(key, f.pop(key))
                f[en] = 1
    word = 0
    for fname, value in f.items():
        if fname not in lay["fields"]:
            raise DescriptorError(f"a {kind} XDSD has no field {fname!r} (fields: "
                                  f"{', '.join(k for k in lay['fields'] if k != 'type')})")
        word = _put(word, lay, fname, value)
    return word


def pack_stride(value: int) -> int:
    value = _integer("stride", value)
    if not -(1 << 14) <= value < (1 << 14):
        raise DescriptorError(f"a stride register holds a signed 15-bit value, got {value}")
    return value & 0x7FFF


def unpack_dsd(raw: int, role: str = "source", xdsd: int | None = None) -> dict:
    """Names the fields of a 48-bit DSD. A fabric DSD reads as an input (``role="source"``)
    or output (``"dest"``); types 2-7 need the XDSD to tell 4D from circular."""
    raw = _integer("raw", raw, 48)
    if role not in ("source", "dest"):
        raise DescriptorError(f"role must be 'source' or 'dest', got {role!r}")
    if xdsd is not None:
        xdsd = _integer("xdsd", xdsd, 51)
    t = (raw >> isa().data["dsd"]["type_field"][1]) & 7
    if t == 0:
        kind = "fabric_in" if role == "source" else "fabric_out"
    elif t == 1:
        kind = "mem1d"
    else:
        if xdsd is None:
            raise DescriptorError(f"a type-{t} DSD is read with its XDSD (xdsd=...)")
        kind = "circular" if (xdsd >> 50) & 1 else "mem4d"
    lay = isa().dsd_layouts[kind]
    out = {"kind": kind}
    out.update({name: _get(raw, lay, name) for name in lay["fields"]})
    if "sw" in out:
        out["sw"] = isa().data["sw_codes"].get(str(out["sw"]), 0)
    if kind == "mem4d":
        out["length"] = out.pop("length_low") | (out.pop("length_high") << 15)
    if kind == "fabric_out":
        out["index"] = out.pop("index_low") | (out.pop("index_high") << 3)
    if "ca" in out:
        actions = isa().data["completion"]["actions"]
        out["completion"] = actions[out["ca"]] if out["ca"] < len(actions) else "reserved"
    return out


def unpack_xdsd(raw: int) -> dict:
    raw = _integer("raw", raw, 51)
    name = "xcircular" if (raw >> 50) & 1 else "x4d"
    lay = isa().xdsd_layouts[name]
    out = {"kind": "circular" if name == "xcircular" else "mem4d"}
    out.update({n: _get(raw, lay, n) for n in lay["fields"]})
    return out
