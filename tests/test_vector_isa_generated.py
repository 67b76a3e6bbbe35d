"""The vector-engine bundle format is data: the committed C++ table and docs tables are
regenerated from vector_isa.json and must match (they cannot drift)."""

from pathlib import Path

from wafersim.asm import vector_isa_gen as gen

ROOT = Path(__file__).resolve().parent.parent


def test_cpp_decoder_table_is_generated_from_the_json():
    spec = gen.load_spec()
    committed = (ROOT / gen.HEADER_RELPATH).read_text(encoding="utf-8")
    assert committed == gen.cpp_header(spec), "run: python -m wafersim.asm.vector_isa_gen"


def test_docs_tables_are_generated_from_the_json():
    spec = gen.load_spec()
    committed = (ROOT / gen.DOCS_RELPATH).read_text(encoding="utf-8")
    assert gen.splice_docs(committed, gen.docs_tables(spec)) == committed
    assert gen.DOCS_BEGIN in committed


def test_field_widths_are_the_patents_0088_0093():
    spec = gen.load_spec()
    widths = {f["name"]: f["width"] for f in spec["triad_fields"]}
    assert widths["ld_op"] == widths["alu_op"] == widths["st_op"] == 8
    assert widths["ld_reg"] == widths["st_reg"] == 5
    assert sum(widths[f"alu_{r}"] for r in ("rd", "rs1", "rs2", "rs3")) == 20
    assert widths["alu_cfg"] == 5 and widths["alu_imm"] == 32
    # No two fields overlap and the padding takes the rest of the 128 bits.
    bits = set()
    for f in spec["triad_fields"]:
        span = set(range(f["lsb"], f["lsb"] + f["width"]))
        assert not bits & span
        bits |= span
    pad = spec["triad_padding"]
    assert bits | set(range(pad["lsb"], pad["lsb"] + pad["width"])) | {spec["format_bit"]} == set(range(128))
