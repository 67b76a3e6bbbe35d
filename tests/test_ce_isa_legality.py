"""What is an instruction: the C++ decoder and the Python disassembler follow the same rules
of the one ISA file (docs/isa.md, "Illegal words"), word for word, and every word they take
assembles back to itself. Operand fields out of range for their operand kind ([0585]-[0603],
[0355]) make a word illegal on both sides; such a word raises ProgramError when executed."""

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wafersim as ws
from wafersim import _core
from wafersim.asm import disassemble_word, encode_line, isa

WORDS = 1 << 20


def _agree(words) -> int:
    """Checks (decoder takes w) == (disassembler lists w as an instruction), and that the
    listed text assembles back to w; returns how many words are instructions."""
    words = np.asarray(words, dtype=np.uint32)
    legal = _core.pe.legal_words(words)
    for w, ok in zip(words.tolist(), legal.tolist()):
        text = disassemble_word(w, pc=500)
        assert ok == (not text.startswith(".word")), (hex(w), text, _core.pe.decode(w)["reason"])
        if ok:
            assert encode_line(text, pc=500) == w, (hex(w), text)
    return int(legal.sum())


def test_bulk_legality_matches_the_one_word_decoder():
    words = np.array([0, 0x1D7F3, 0x28FF7, 0xF4240, encode_line("nop"),
                      encode_line("faddh r1, r1, #1.0"), WORDS - 1, WORDS], dtype=np.uint32)
    legal = _core.pe.legal_words(words)
    assert legal.dtype == np.bool_
    assert legal.tolist() == [_core.pe.decode(int(w))["mnemonic"] != "illegal" for w in words]
    assert legal.tolist() == [False, False, False, False, True, True, False, False]


def test_decoder_and_disassembler_agree_on_a_dense_sample():
    # Every 13th word: 13 is odd and prime to every field width, so each field of each
    # format takes all its values across the sample (about 80,000 words).
    n = _agree(range(5, WORDS, 13))
    assert 20_000 < n < 40_000  # about a third of all words are instructions


@pytest.mark.slow
def test_decoder_and_disassembler_agree_on_every_word():
    # 343,808 words when this test was written, then 814 more with the two instructions
    # the completion-action work added: `filter` (800 words) and `rdcyc` (14). A change
    # of this count means the set of instructions changed: say which in this comment.
    assert _agree(range(WORDS)) == 343_808 + 800 + 14


@st.composite
def _word_with_an_assigned_opcode(draw):
    """A word of an assigned opcode with every other field drawn at random: it probes the
    operand rules (random words mostly hit unassigned opcodes)."""
    op = draw(st.sampled_from(sorted(isa().ops.values(), key=lambda o: o.mnemonic)))
    fam = isa().families[op.family]
    word = fam.put(fam.put(0, "prefix", int(fam.prefix, 2)), "opcode", op.opcode)
    for name, (hi, lo) in fam.fields.items():
        if name not in ("prefix", "opcode"):
            word = fam.put(word, name, draw(st.integers(0, (1 << (hi - lo + 1)) - 1)))
    return word


@settings(max_examples=2000, deadline=None)
@given(_word_with_an_assigned_opcode())
def test_decoder_and_disassembler_agree_on_words_of_assigned_opcodes(word):
    _agree([word])


def _with(text: str, **fields) -> int:
    """The word of `text` with some fields replaced."""
    word = encode_line(text)
    op = isa().ops[text.split()[0].split(".")[0]]
    fam = isa().families[op.family]
    for name, v in fields.items():
        hi, lo = fam.fields[name]
        word = fam.put(word & ~(((1 << (hi - lo + 1)) - 1) << lo), name, v)
    return word


# One case per kind of word the decoder used to execute and the disassembler listed as
# `.word`: a legal instruction, the fields that break it, and the reason the decoder gives.
CASES = [
    ("lds0wds S0[0], 0", {"op0": 12}, r"lds0wds: operand 0 = 12 names no DSR \(0..11\)"),  # [0355]
    ("ldxds X[2], 0", {"op0": 11}, r"ldxds: operand 0 = 11 names no XDSR \(2..7\)"),
    ("stxds X[7], 0", {"op0": 1}, "names no XDSR"),
    ("stsr SR[2], 0", {"op0": 8}, r"names no stride register \(2..7\)"),
    ("stsr SR[3], 0", {"imm_low": 5}, "the address 5 of a 16-bit memory operand is odd"),  # [0603]
    ("ld16 r1, 0", {"imm_high": 1, "imm_low": 511}, "the address 32767 of a 16-bit"),
    ("faddh r1, r1, [r6]", {"op1": 3}, "operand 1 of type 1 leaves unused"),  # [0591]
    ("faddh r1, r1, S1[0]", {"op1": 12}, "operand 1 = 12 names no DSR"),
    ("faddh S0[0], S0[0], S1[0]", {"op0": 13}, "operand 0 = 13 names no DSR"),  # [0585]
    ("faddh D[0], S0[0], S1[0]", {"op0": 14}, "operand 0 = 14 names no DSR"),
    ("add16 D[5], r5, S1[1]", {"op0": 12}, "operand 0 = 12 names no DSR"),
    ("fadds r2, r2, r4", {"op0": 3}, "operand 0 = 3: a 32-bit register operand is an even pair"),
    ("fadds r2, r2, r4", {"op1": 15}, "operand 1 = 15: a 32-bit register"),
    ("fadds r0, r2, r4", {"op0": 5}, "operand 0 = 5: a 32-bit register"),
    ("mov32 r4, r6", {"op0": 5}, "operand 0 = 5: a 32-bit register"),  # [0589]
    ("fh2s D[0], S1[0]", {"op0": 12}, "operand 0 = 12 names no DSR"),
    ("flts r2, r4", {"op0": 1}, "operand 0 = 1: a 32-bit register"),  # [0587]
    ("lt16 S0[0], S1[0]", {"op0": 15}, "operand 0 = 15 names no DSR"),
    ("block S1[0]", {"op1": 12}, "operand 1 = 12 names no DSR"),  # [0599]
    ("block S1[0]", {"imm_high": 1}, "operand 1 of type 0 leaves unused"),
    ("jr r3", {"imm_high": 2}, "operand 1 of type 2 leaves unused"),
    ("block [0x42]", {"op1": 3}, "the address 67 of a 16-bit memory operand is odd"),
    ("block #0", {"imm_high": 4, "op1": 6}, r"the immediate 70 names no id \(0..63, or 255\)"),  # [0394]
    ("tdone #0", {"imm_high": 15, "op1": 14}, "the immediate 254 names no id"),
    ("bt r1", {"op1_type": 0}, "bt: takes no operand 1 of type 0"),  # [0597]
    ("seedrng r1", {"op1_type": 0}, "takes no operand 1 of type 0"),
    ("tbias S1[0]", {"op1_type": 2}, "tbias: takes no operand 1 of type 2"),
    ("tmm D[1], S0[1], S1[1]", {"op0_type": 2}, "tmm: takes no operand 0 of type 2"),
    ("tlayer D[1], S0[1], S1[1]", {"op1_type": 3}, "tlayer: takes no operand 1 of type 3"),
]


@pytest.mark.parametrize("text,fields,reason", CASES, ids=[c[0] + str(c[1]) for c in CASES])
def test_out_of_range_operand_fields_are_illegal_on_both_sides(text, fields, reason):
    good = encode_line(text)
    assert _core.pe.decode(good)["mnemonic"] == text.split()[0]
    assert encode_line(disassemble_word(good)) == good
    bad = _with(text, **fields)
    d = _core.pe.decode(bad)
    assert d["mnemonic"] == "illegal"
    assert re.search(reason, d["reason"]), d["reason"]
    assert disassemble_word(bad) == f".word {bad:#07x}"


@pytest.mark.parametrize("word", [0x28FF7, 0x1D7F3, 0xF4240])
def test_the_reported_words_are_illegal_on_both_sides(word):
    """stsr with an odd address, ldxds X[11], bt with a vector source."""
    assert _core.pe.decode(word)["mnemonic"] == "illegal"
    assert disassemble_word(word).startswith(".word")


def _run(source, **kw):
    pe = ws.pe.LonePE(**kw)
    pe.load(source)
    pe.launch("t")
    pe.run()
    return pe


def test_executing_an_illegal_operand_raises_program_error_with_the_reason():
    with pytest.raises(ws.ProgramError,
                       match=r"task 1 pc 256: illegal instruction 0x1d7f3 "
                             r"\(ldxds: operand 0 = 11 names no XDSR \(2..7\)\)"):
        _run(".task t, 1\nt: .word 0x1D7F3\n term")
    with pytest.raises(ws.ProgramError, match=r"illegal instruction 0x28ff7 \(stsr: the address"):
        _run(".task t, 1\nt: .word 0x28FF7\n term")


def test_tensor_instructions_with_an_out_of_range_descriptor_are_illegal():
    # tbias S1[13] and tmm D[14], S0[14], S1[1] once read past the 12 DSRs of a set.
    for bad in (_with("tbias S1[0]", op1=13), _with("tmm D[1], S0[1], S1[1]", op0=14)):
        with pytest.raises(ws.ProgramError, match="names no DSR"):
            _run(f".task t, 1\nt: .word {bad}\n term", tensor_unit=True)


@pytest.mark.parametrize("line,message", [
    ("tmm r0, r0, r1", r"tmm takes only D\[n\], S0\[n\] as operand 0"),
    ("tlayer D[1], S0[1], r3", r"tlayer takes only S1\[m\] as operand 1"),
    ("bt S1[0]", "bt takes no vector source"),
    ("tvprog #3", r"tvprog takes a descriptor S1\[n\]"),
    ("activate #64", "activate #64 names no id"),
])
def test_the_assembler_refuses_operand_types_the_isa_file_leaves_out(line, message):
    with pytest.raises(ws.ProgramError, match=message):
        encode_line(line)
