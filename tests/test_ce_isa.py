"""The 20-bit CE instruction set: formats of [0581]-[0603], one data file shared by the C++
decoder and the Python assembler, and the assembler/disassembler round trip."""

import json

import pytest
from repo_scripts import ROOT, load_script
from hypothesis import given, settings
from hypothesis import strategies as st

import wafersim as ws
from wafersim import _core
from wafersim.asm import assemble, disassemble, disassemble_word, encode_line, isa


def _generator():
    return load_script("scripts/gen_ce_isa.py")


def test_generated_header_and_doc_tables_match_the_isa_file():
    gen = _generator()
    data = gen.load(ROOT / "python" / "wafersim" / "asm" / "ce_isa.json")
    assert (ROOT / "src" / "wafersim" / "pe" / "isa_tables.hpp").read_text() == gen.header_text(data)
    doc = (ROOT / "docs" / "isa.md").read_text()
    assert gen.doc_text(data, doc) == doc


def test_installed_isa_file_is_the_repository_one():
    repo = json.loads((ROOT / "python" / "wafersim" / "asm" / "ce_isa.json").read_text())
    assert isa().data == repo


def test_prefix_codes_and_field_budgets_0583_0597_0602():
    """Type prefixes 0 / 10 / 110 / 1110 / 1111 and the field widths of FIG. 25A-C."""
    fams = isa().families
    assert {n: f.prefix for n, f in fams.items()} == {
        "imm": "0", "dst2src": "10", "dst1src": "110", "nodst2src": "1110", "nodst1src": "1111"}

    def width(f, name):
        hi, lo = f.fields[name]
        return hi - lo + 1

    # Opcode widths of TABLE-US-00004 and [0597], [0602].
    assert {n: width(f, "opcode") for n, f in fams.items()} == {
        "imm": 5, "dst2src": 5, "dst1src": 5, "nodst2src": 4, "nodst1src": 4}
    for n in ("dst2src", "dst1src", "nodst2src"):
        assert width(fams[n], "op0") == 4 and width(fams[n], "op1") == 4  # [0585]
        assert width(fams[n], "op1_type") == 2 and width(fams[n], "term") == 1
    assert width(fams["dst2src"], "op0_type") == 2
    assert width(fams["nodst1src"], "imm_high") == 4  # [0598]
    assert width(fams["imm"], "imm_low") == 9 and width(fams["imm"], "imm_high") == 1  # [0601]
    assert "term" not in fams["imm"].fields  # the Immediate format has no Terminate bit
    for f in fams.values():  # every format fills exactly 20 bits, without overlaps
        bits = [b for hi, lo in f.fields.values() for b in range(lo, hi + 1)]
        assert sorted(bits) == list(range(20))


def test_cpp_decoder_agrees_with_the_python_tables():
    spec = isa()
    for op in spec.ops.values():
        fam = spec.families[op.family]
        word = fam.put(fam.put(0, "prefix", int(fam.prefix, 2)), "opcode", op.opcode)
        for i, types in enumerate((op.op0_types, op.op1_types)):  # a type the opcode takes
            if f"op{i}_type" in fam.fields:
                word = fam.put(word, f"op{i}_type", types[0])
        if op.raw.get("reg") in ("x", "sr"):  # X[2]..X[7], SR[2]..SR[7]
            word = fam.put(word, "op0", 2)
        assert _core.pe.decode(word)["mnemonic"] == op.mnemonic
        assert _core.pe.decode(word)["family"] == op.family


def test_unassigned_opcodes_and_the_reserved_bit_decode_as_illegal():
    assert _core.pe.decode(0)["mnemonic"] == "illegal"  # zeroed memory traps
    nop = encode_line("nop")
    assert _core.pe.decode(nop)["mnemonic"] == "nop"
    assert _core.pe.decode(nop | 0b10)["mnemonic"] == "illegal"  # reserved bit of FIG. 25B


@settings(max_examples=3000, deadline=None)
@given(st.integers(min_value=0, max_value=(1 << 20) - 1))
def test_every_word_disassembles_to_text_that_assembles_back(word):
    text = disassemble_word(word, pc=500)
    assert encode_line(text, pc=500) == word
    # The C++ decoder and the disassembler agree on what is an instruction, both ways.
    mnemonic = _core.pe.decode(word)["mnemonic"]
    assert (mnemonic != "illegal") == (not text.startswith(".word")), (hex(word), text)
    if mnemonic != "illegal":
        assert text.split()[0].split(".")[0] == mnemonic


@pytest.mark.parametrize("line,fields", [
    ("fmach D[4], S0[4], S1[2]", {"op0_type": 1, "op0": 4, "op1_type": 0, "op1": 2}),  # [0586]
    ("faddh S0[3], S0[3], #1.0", {"op0_type": 0, "op0": 3, "op1_type": 3, "op1": 1}),
    ("fadds r2, r2, [r6]", {"op0_type": 2, "op0": 2, "op1_type": 1}),
    ("add16 r0, r5, r7", {"op0_type": 3, "op0": 5, "op1_type": 2, "op1": 7}),
    ("add16 D[5], r5, S1[1]", {"op0_type": 3, "op0": 5, "op1_type": 0, "op1": 1}),
    ("mov16 D[4], S1[0]", {"op0_type": 0, "op0": 4}),  # [0590]
    ("mov16 r3, #prn", {"op0_type": 1, "op0": 3, "op1_type": 3, "op1": 8}),  # [0593]
    ("lt16 S0[4], S1[1]", {"op0_type": 0, "op0": 4}),  # [0588]
    ("activate #63", {"op1_type": 3, "imm_high": 3, "op1": 15}),  # 8-bit immediate [0598]
    ("block [0x42]", {"op1_type": 1, "imm_high": 4, "op1": 2}),
])
def test_operand_encodings_follow_the_operand_tables_0585_0599(line, fields):
    d = _core.pe.decode(encode_line(line))
    for k, v in fields.items():
        assert d[k] == v, (line, k)


def test_immediate_format_concatenations_0603():
    # jmp: Immediate Low, Operand 0 and Immediate High form a 14-bit target.
    d = _core.pe.decode(encode_line("jmp 0x2abc"))
    assert (d["imm_high"] << 13) | (d["op0"] << 9) | d["imm_low"] == 0x2ABC
    # movi: the 10-bit immediate is sign-extended to 16 bits.
    d = _core.pe.decode(encode_line("movi r3, -5"))
    assert d["op0"] == 3 and ((d["imm_high"] << 9) | d["imm_low"]) == (-5) & 1023
    # 48-bit DSR loads address memory with the immediate shifted left one bit.
    d = _core.pe.decode(encode_line("lds0wds S0[2], 1022"))
    assert (d["imm_high"] << 9) | d["imm_low"] == 511


def test_terminate_bit_syntax_and_branch_offsets():
    assert _core.pe.decode(encode_line("faddh.t S0[1], S0[1], S1[1]"))["term"]
    with pytest.raises(ws.ProgramError, match="no Terminate bit"):
        encode_line("movi.t r1, 1")
    w = encode_line("bt pc-3")
    assert disassemble_word(w) == "bt pc-3"


def test_assembler_lays_out_task_entries_at_base_plus_4_times_id_0371():
    prog = assemble("""
        .task a, 0
        .task b, 63
        a:  term
        b:  term
    """)
    first, words = prog.code_array()
    assert prog.code[0] == encode_line(f"jmp {prog.symbols['a'].address}")
    assert prog.code[4 * 63] == encode_line(f"jmp {prog.symbols['b'].address}")
    assert prog.symbols["a"].address == 256  # code follows the 64 x 4 entry slots
    assert prog.tasks == {"a": 0, "b": 63}


def test_descriptors_are_placed_first_within_reach_of_dsr_loads():
    prog = assemble("""
        .data
        big: .space fp16, 2000
        d:   .dsd mem1d, base=big, length=2000, stride=2
        .code
        .task t, 1
        t: lds0wds.t S0[0], d
    """.replace("lds0wds.t", "lds0wds"))
    assert prog.symbols["d"].address == 0
    assert prog.symbols["big"].address >= 6


def test_high_descriptors_sit_in_the_last_bytes_that_dsr_loads_reach_0603():
    """`.descriptors high` puts the descriptors after it at the end of the 15-bit space,
    which the DSR loads reach as negative immediates [0603]: the first 512 bytes stay free
    for the words ld16 / st16 reach. A PE runs a vector operation through one."""
    prog = assemble("""
        .data
        lo:  .dsd mem1d, base=x, length=4, stride=4
        .descriptors high
        hi:  .dsd mem1d, base=y, length=4, stride=4
        hi2: .dsd mem1d, base=x, length=1, stride=4
        .descriptors low
        w:   .u16 7
        x:   .fp32 1, 2, 3, 4
        y:   .space fp32, 4
        .export y
        .code
        .task t, 1
        t:   lds1wds S1[0], lo
             lddwds  D[1], hi
             mov32   D[1], S1[0]
             ld16 r5, w
             term
    """)
    assert prog.symbols["lo"].address == 0 and prog.symbols["w"].address == 6
    assert (prog.symbols["hi"].address, prog.symbols["hi2"].address) == (32768 - 12, 32768 - 6)
    assert prog.high_base == 32768 - 12 and prog.data_end == 32768
    assert prog.data_bytes == prog.symbols["y"].address + 16 + 12
    pe = ws.pe.LonePE()
    pe.load(prog)
    pe.launch("t")
    pe.run()
    assert list(pe.read("y").ravel()) == [1, 2, 3, 4] and pe.gpr(5) == 7


_MANY = "".join(f"d{k}: .dsd mem1d, base=0, length=1, stride=2\n" for k in range(171))


@pytest.mark.parametrize("source,message", [
    (".data\n.descriptors high\n" + _MANY,
     "the high descriptors take 1026 bytes; DSR loads reach the last 1024"),
    (".data\n.descriptors high\nd: .dsd mem1d, base=0, length=1, stride=2\n"
     ".descriptors low\nx: .space u16, 16382", "data ends at byte 32764, past byte 32762"),
    (".descriptors high\nt: term", ".descriptors takes low or high, in the data section"),
    (".data\n.descriptors middle", ".descriptors takes low or high"),
])
def test_high_descriptor_mistakes_are_program_errors(source, message):
    with pytest.raises(ws.ProgramError, match=message):
        assemble(source)


def test_li_pseudo_instruction_builds_any_16_bit_constant():
    prog = assemble(".task t, 1\nt: li r3, 0xBEEF\n li r4, -7\n term")
    pe = ws.pe.LonePE()
    pe.load(prog)
    pe.launch("t")
    pe.run()
    assert pe.gpr(3) == 0xBEEF and pe.gpr(4) == (-7) & 0xFFFF


@pytest.mark.parametrize("source,message", [
    ("t: fmach D[1], S0[2], S1[0]", "line 1: destination D\\[1\\] and source 0 S0\\[2\\]"),
    ("\n\nt: frobnicate r1", "line 3: unknown instruction 'frobnicate'"),
    ("t: mov16 D[12], S1[0]", "DDSR D\\[12\\] does not exist"),
    ("t: faddh r1, r1, #3.5", "is not one of the floating-point immediates"),
    ("t: block #70", "names no id"),
    (".data\nx: .fp16 1\n.code\nt: lds0wds S0[0], x + 5000", "out of reach"),
    ("t: jmp nowhere", "unknown symbol 'nowhere'"),
    (".task t, 64\nt: term", "task id must be 0..63"),
    (".task t, 3\n.task u, 3\nt: term\nu: term", "task id 3 already belongs"),
    (".data\nx: .i16 70000", "is not a int16 value"),
    (".data\nd: .dsd mem1d, base=0, length=1, stride=300", "stride=300 does not fit a signed 9-bit"),
    (".export nope\nt: term", "cannot export unknown symbol"),
    ("t: fadds r1, r1, r2", "even pairs"),
])
def test_malformed_programs_raise_program_error_with_the_line(source, message):
    with pytest.raises(ws.ProgramError, match=message):
        assemble(source)


def test_disassembly_listing_names_tasks_and_labels():
    prog = assemble(".task main, 40\nmain: li r1, 3\nloop: addi r1, -1\n term")
    text = disassemble(prog)
    assert "task main (id 40) entry" in text and "loop:" in text and "addi r1, -1" in text


def _operand_texts(draw, op):
    """Draws a valid operand list (as text) for `op`."""
    spec = isa()
    wide = lambda e: e in ("fp32", "i32")  # noqa: E731
    reg = lambda e: f"r{draw(st.sampled_from(range(0, 15, 2)) if wide(e) else st.integers(0, 15))}"  # noqa: E731
    dsr = lambda: draw(st.integers(0, 11))  # noqa: E731

    def src1(e):
        table = spec.fp_imm if e in ("fp16", "fp32") else spec.int_imm
        forms = [f"S1[{dsr()}]", "[r6]", reg(e), f"#{draw(st.sampled_from(table))}"]
        return draw(st.sampled_from([forms[t] for t in op.op1_types]))

    fam = op.family
    if fam == "dst2src":
        n = dsr()
        r = reg(op.src0)
        s1 = src1(op.src)
        forms = [(0, [f"S0[{n}]", f"S0[{n}]", s1]), (1, [f"D[{n}]", f"S0[{n}]", s1]), (2, [r, r, s1])]
        if int(r[1:]) < 12 and 0 in op.op1_types:  # D[n], rn: the DSR and the register share operand 0
            forms.append((3, [f"D[{r[1:]}]", r, f"S1[{dsr()}]"]))
        if not s1.startswith("S1") and not wide(op.dst):
            forms.append((3, ["r0", r, s1]))
        return draw(st.sampled_from([f for t, f in forms if t in op.op0_types]))
    if fam == "dst1src":
        return [draw(st.sampled_from([f"D[{dsr()}]", reg(op.dst)])), src1(op.src)]
    if fam == "nodst2src":
        return [draw(st.sampled_from([f"S0[{dsr()}]", reg(op.src0)])), src1(op.src)]
    if fam == "nodst1src":
        if op.kind == "branch":
            return [draw(st.sampled_from([f"pc+{draw(st.integers(0, 127))}",
                                          f"pc-{draw(st.integers(1, 128))}", reg("i16"),
                                          f"[{2 * draw(st.integers(0, 127))}]"]))]
        if op.op1_types == (0,):  # tbias, tvprog: a descriptor only
            return [f"S1[{dsr()}]"]
        imm = draw(st.integers(0, 63)) if op.kind in ("block", "unblock", "activate") else \
            draw(st.sampled_from([*range(64), 255])) if op.mnemonic == "tdone" else \
            draw(st.integers(0, 255))
        forms = [f"#{imm}", reg("i16"), f"[{2 * draw(st.integers(0, 127))}]"]
        if op.kind in ("block", "unblock", "activate"):
            forms.append(f"S1[{dsr()}]")
        return [draw(st.sampled_from(forms))]
    if op.kind == "jump":
        return [str(draw(st.integers(0, 16383)))]
    regname = {"s0": "S0[{}]", "s1": "S1[{}]", "d": "D[{}]", "x": "X[{}]", "sr": "SR[{}]"}
    mode = op.raw["imm"]
    if mode == "zero":  # rdcyc rN: three registers rN..rN+2, no immediate
        return [f"r{draw(st.integers(0, 13))}"]
    if op.raw.get("reg") in ("x", "sr"):
        first = regname[op.raw["reg"]].format(draw(st.integers(2, 7)))
    elif op.raw.get("reg"):
        first = regname[op.raw["reg"]].format(dsr())
    else:
        first = reg("i16")
    if mode == "sext16":
        v = draw(st.integers(-512, 511))
    elif mode == "hi10":
        v = draw(st.integers(0, 1023))
    else:
        scale = 2 if mode == "addr_x2" else 1
        v = (draw(st.integers(-512, 511)) * scale) & 0x7FFF
        if v % 2:
            v -= 1
    return [first, str(v)]


@st.composite
def _valid_instruction(draw):
    op = draw(st.sampled_from(sorted(isa().ops.values(), key=lambda o: o.mnemonic)))
    args = _operand_texts(draw, op)
    fam = isa().families[op.family]
    sfx = ".t" if fam.terminate and draw(st.booleans()) else ""
    return f"{op.mnemonic}{sfx} " + ", ".join(args)


@settings(max_examples=3000, deadline=None)
@given(_valid_instruction())
def test_every_valid_instruction_round_trips_through_the_disassembler(text):
    word = encode_line(text, pc=1000)
    back = disassemble_word(word, pc=1000)
    assert not back.startswith(".word"), (text, back)
    assert encode_line(back, pc=1000) == word
    assert _core.pe.decode(word)["mnemonic"] == text.split()[0].split(".")[0]
