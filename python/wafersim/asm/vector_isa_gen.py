"""Generates the C++ decoder table and the tables of docs/vector_isa.md from vector_isa.json.

The JSON file is the single source of truth of the vector-engine bundle format; the C++ core
and the documentation are generated from it, the Python assembler reads it at run time.
Run from a source checkout:  python -m wafersim.asm.vector_isa_gen [--root DIR]
(tests/test_vector_isa_generated.py checks that the committed outputs are up to date).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

SPEC_PATH = Path(__file__).with_name("vector_isa.json")
HEADER_RELPATH = Path("src/wafersim/tensor/vector_isa_table.hpp")
DOCS_RELPATH = Path("docs/vector_isa.md")
DOCS_BEGIN = "<!-- BEGIN GENERATED TABLES (python -m wafersim.asm.vector_isa_gen) -->"
DOCS_END = "<!-- END GENERATED TABLES -->"

_CPP_KEYWORDS = {"int", "and", "or", "xor", "not", "none", "optional"}


def load_spec(path: Path = SPEC_PATH) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _ident(name: str) -> str:
    """A C++ enumerator for a JSON key (keywords and std names get a trailing underscore)."""
    name = name.replace(".", "_")
    return name + "_" if name in _CPP_KEYWORDS else name


def _camel(name: str) -> str:
    return "k" + "".join(part.capitalize() for part in name.split("_"))


def _unique(values):
    seen = []
    for v in values:
        if v not in seen:
            seen.append(v)
    return seen


def cpp_header(spec: dict) -> str:
    out = [
        "// GENERATED from python/wafersim/asm/vector_isa.json by",
        "// `python -m wafersim.asm.vector_isa_gen`. Do not edit: edit the JSON and regenerate.",
        "#pragma once",
        "",
        "#include <array>",
        "#include <cstdint>",
        "",
        "namespace wafersim::tensor::isa {",
        "",
        "struct Field {",
        "  int lsb;",
        "  int width;",
        "};",
        "",
        f"inline constexpr int kBundleBits = {spec['width']};",
        f"inline constexpr int kFormatBit = {spec['format_bit']};",
    ]
    for group in ("triad_fields", "long_fields"):
        for fld in spec[group]:
            out.append(f"inline constexpr Field {_camel(fld['name'])}{{{fld['lsb']}, {fld['width']}}};"
                       f"  // {fld['doc']}")
    for pad in ("triad_padding", "long_padding"):
        p = spec[pad]
        out.append(f"inline constexpr Field {_camel(pad)}{{{p['lsb']}, {p['width']}}};")
    for bit in spec["cfg_bits"]:
        out.append(f"inline constexpr Field {_camel('cfg_' + bit['name'])}{{{bit['lsb']}, {bit['width']}}};")
    out.append("")

    files = [rf["name"] for rf in spec["register_files"]]
    out.append("enum class RegFile : uint8_t { none, " + ", ".join(files) + " };")
    counts = ", ".join(f"{{RegFile::{rf['name']}, {rf['count']}}}" for rf in spec["register_files"])
    out.append("struct RegFileCount {\n  RegFile file;\n  int count;\n};")
    out.append(f"inline constexpr std::array<RegFileCount, {len(files)}> kRegFileCounts{{{{{counts}}}}};")

    def enum(name, values):
        out.append(f"enum class {name} : uint8_t {{ " + ", ".join(_ident(v) for v in values) + " };")

    enum("LoadKind", _unique(op["kind"] for op in spec["load_ops"]))
    enum("AluKind", _unique(op["kind"] for op in spec["alu_ops"]))
    enum("StoreKind", _unique(op["kind"] for op in spec["store_ops"]))
    enum("LongKind", _unique(op["kind"] for op in spec["long_ops"]))
    enum("Form", list(spec["forms"]))
    enum("SizeClass", list(spec["size_classes"]))
    enum("ImmMode", list(spec["imm_modes"]))
    out += [
        "",
        "struct LoadOpInfo {\n  uint8_t opcode;\n  const char* mnemonic;\n  LoadKind kind;\n  RegFile reg;\n};",
        "struct AluOpInfo {\n  uint8_t opcode;\n  const char* mnemonic;\n  AluKind kind;\n  Form form;\n"
        "  SizeClass sizes;\n  ImmMode imm;\n};",
        "struct StoreOpInfo {\n  uint8_t opcode;\n  const char* mnemonic;\n  StoreKind kind;\n  RegFile reg;\n};",
        "struct LongOpInfo {\n  uint8_t opcode;\n  const char* mnemonic;\n  LongKind kind;\n};",
        "",
    ]

    def reg(v):
        return "RegFile::" + ("none" if v == "none" else v)

    rows = [f"    {{{op['opcode']}, \"{op['mnemonic']}\", LoadKind::{_ident(op['kind'])}, {reg(op['reg'])}}},"
            for op in spec["load_ops"]]
    out += [f"inline constexpr std::array<LoadOpInfo, {len(rows)}> kLoadOps{{{{", *rows, "}};"]
    rows = [f"    {{{op['opcode']}, \"{op['mnemonic']}\", AluKind::{_ident(op['kind'])}, "
            f"Form::{_ident(op['form'])}, SizeClass::{_ident(op['sizes'])}, ImmMode::{_ident(op['imm'])}}},"
            for op in spec["alu_ops"]]
    out += [f"inline constexpr std::array<AluOpInfo, {len(rows)}> kAluOps{{{{", *rows, "}};"]
    rows = [f"    {{{op['opcode']}, \"{op['mnemonic']}\", StoreKind::{_ident(op['kind'])}, {reg(op['reg'])}}},"
            for op in spec["store_ops"]]
    out += [f"inline constexpr std::array<StoreOpInfo, {len(rows)}> kStoreOps{{{{", *rows, "}};"]
    rows = [f"    {{{op['opcode']}, \"{op['mnemonic']}\", LongKind::{_ident(op['kind'])}}},"
            for op in spec["long_ops"]]
    out += [f"inline constexpr std::array<LongOpInfo, {len(rows)}> kLongOps{{{{", *rows, "}};"]
    out += ["", "}  // namespace wafersim::tensor::isa", ""]
    return "\n".join(out)


def docs_tables(spec: dict) -> str:
    out = [DOCS_BEGIN, "", "### Triad format (bit 127 = 0)", "",
           "| Field | Bits | Width | Meaning |", "|---|---|---|---|"]

    def bits(lsb, width):
        return f"[{lsb + width - 1}:{lsb}]" if width > 1 else f"[{lsb}]"

    for fld in spec["triad_fields"]:
        out.append(f"| `{fld['name']}` | {bits(fld['lsb'], fld['width'])} | {fld['width']} | {fld['doc']} |")
    p = spec["triad_padding"]
    out.append(f"| padding | {bits(p['lsb'], p['width'])} | {p['width']} | must be 0 |")
    out.append(f"| format | [{spec['format_bit']}] | 1 | 0 = triad |")
    out += ["", "### Long format (bit 127 = 1)", "", "| Field | Bits | Width | Meaning |", "|---|---|---|---|"]
    for fld in spec["long_fields"]:
        out.append(f"| `{fld['name']}` | {bits(fld['lsb'], fld['width'])} | {fld['width']} | {fld['doc']} |")
    p = spec["long_padding"]
    out.append(f"| padding | {bits(p['lsb'], p['width'])} | {p['width']} | must be 0 |")
    out.append(f"| format | [{spec['format_bit']}] | 1 | 1 = long |")
    out += ["", "### ALU configuration field (`alu_cfg`)", "", "| Bit | Width | Meaning |", "|---|---|---|"]
    for b in spec["cfg_bits"]:
        out.append(f"| `{b['name']}` {bits(b['lsb'], b['width'])} | {b['width']} | {b['doc']} |")
    out += ["", "### Register files", "", "| Name | Count | Bits per lane | Meaning |", "|---|---|---|---|"]
    for rf in spec["register_files"]:
        out.append(f"| `{rf['name']}` | {rf['count']} | {rf['bits']} | {rf['doc']} |")
    for title, key, cols in (("Load slot", "load_ops", "reg"), ("Store slot", "store_ops", "reg")):
        out += ["", f"### {title}", "", "| Opcode | Mnemonic | Register | Operation |", "|---|---|---|---|"]
        for op in spec[key]:
            out.append(f"| 0x{op['opcode']:02X} | `{op['mnemonic']}` | {op[cols]} | {op['doc']} |")
    out += ["", "### ALU slot", "", "| Opcode | Mnemonic | Operands | Sizes | Immediate | Operation |",
            "|---|---|---|---|---|---|"]
    for op in spec["alu_ops"]:
        out.append(f"| 0x{op['opcode']:02X} | `{op['mnemonic']}` | {op['form']} | {op['sizes']} | "
                   f"{op['imm']} | {op['doc']} |")
    out += ["", "### Long-format operations", "", "| Opcode | Mnemonic | Operation |", "|---|---|---|"]
    for op in spec["long_ops"]:
        out.append(f"| 0x{op['opcode']:02X} | `{op['mnemonic']}` | {op['doc']} |")
    for title, key in (("Operand forms", "forms"), ("Size classes", "size_classes"),
                       ("Immediate modes", "imm_modes")):
        out += ["", f"### {title}", "", "| Name | Meaning |", "|---|---|"]
        for name, doc in spec[key].items():
            out.append(f"| `{name}` | {doc} |")
    out += ["", DOCS_END]
    return "\n".join(out)


def splice_docs(existing: str, tables: str) -> str:
    """Replaces the generated block of docs/vector_isa.md (or appends one)."""
    if DOCS_BEGIN in existing and DOCS_END in existing:
        head = existing[: existing.index(DOCS_BEGIN)]
        tail = existing[existing.index(DOCS_END) + len(DOCS_END):]
        return head + tables + tail
    return existing.rstrip("\n") + "\n\n" + tables + "\n"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--root", type=Path, default=Path.cwd(), help="source checkout to write into")
    args = ap.parse_args(argv)
    spec = load_spec()
    (args.root / HEADER_RELPATH).write_text(cpp_header(spec), encoding="utf-8")
    docs = args.root / DOCS_RELPATH
    old = docs.read_text(encoding="utf-8") if docs.exists() else "# Vector-engine instruction set\n"
    docs.write_text(splice_docs(old, docs_tables(spec)), encoding="utf-8")
    print(f"wrote {HEADER_RELPATH} and the tables of {DOCS_RELPATH}")


if __name__ == "__main__":
    main()
