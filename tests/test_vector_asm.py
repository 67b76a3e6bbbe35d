"""Encoding of 128-bit bundles [0087]-[0093]: round trips, NOPs, long format, bad input."""

import numpy as np
import pytest

import wafersim as ws
from wafersim.asm import vector as vasm

DEC = ws._core.tensor.decode_bundle


def _random_triad(rng):
    s = vasm.spec()
    ld = s["load_ops"][rng.integers(len(s["load_ops"]))]
    st = s["store_ops"][rng.integers(len(s["store_ops"]))]
    regs = {"RB": 32, "RW": 16, "RD": 8, "M": 4}
    ld_txt = "NOP" if ld["reg"] == "none" else f"{ld['mnemonic']} {ld['reg']}{rng.integers(regs[ld['reg']])}"
    st_txt = "NOP" if st["reg"] == "none" else f"{st['mnemonic']} {st['reg']}{rng.integers(regs[st['reg']])}"
    f = rng.choice(["RB", "RW", "RD"])
    r = lambda: f"{f}{rng.integers(regs[f])}"  # noqa: E731
    alu = rng.choice([f"ADD.S {r()}, {r()}, {r()}", f"SUB.U {r()}, {r()}, {rng.integers(0, 100)}",
                      f"AND {r()}, {r()}, 0x{rng.integers(0, 255):x}", f"SEL {r()}, {r()}, {r()}, M{rng.integers(4)}",
                      f"MAD {r()}, {r()}, {r()}, {r()}", f"CMPLT.S M{rng.integers(4)}, {r()}, {r()}",
                      f"SHR.S {r()}, {r()}, {rng.integers(0, 8)}", f"MOVI {r()}, {rng.integers(0, 200)}",
                      f"ABS {r()}, {r()} @M0", "NOP"])
    return f"{ld_txt} | {alu} | {st_txt}"


def test_random_bundles_round_trip_0088():
    rng = np.random.default_rng(7)
    lines = [_random_triad(rng) for _ in range(300)]
    words = vasm.assemble("\n".join(lines))
    again = vasm.assemble(vasm.disassemble(words))
    np.testing.assert_array_equal(words, again)
    for text, (lo, hi) in zip(lines, words):
        d = DEC(int(lo), int(hi))  # the C++ decoder agrees with the Python assembler
        ld = text.split("|")[0].split()
        assert d["load"][0] == ld[0]
        assert int(hi) >> (91 - 64) == 0  # padding [126:91] and F stay zero


def test_field_positions_by_hand():
    (lo, hi), = vasm.assemble("DEQ.W RD3 | ADD.S RD1, RD0, RD2 | ST.W RD1")
    word = int(lo) | (int(hi) << 64)
    assert word & 0xFF == 3 and (word >> 8) & 31 == 3            # DEQ.W RD3
    assert (word >> 13) & 0xFF == 1                               # ADD.S
    assert [(word >> b) & 31 for b in (21, 26, 31, 36)] == [1, 0, 2, 0]
    assert (word >> 41) & 3 == 2                                  # cfg.size = 32
    assert (word >> 78) & 0xFF == 3 and (word >> 86) & 31 == 1    # ST.W RD1


def test_nop_slots_are_noops_fig8_843_853_863():
    ve = ws.tensor.VectorEngine(lanes=4)
    ve.set_reg("RD0", np.array([1, 2, 3, 4]))
    (lo, hi), = vasm.assemble("NOP | NOP | NOP")
    assert lo == 0 and hi == 0
    ve.execute("NOP")
    np.testing.assert_array_equal(ve.reg("RD0"), [1, 2, 3, 4])


def test_mask_move_is_long_format_and_never_bundled_0093():
    (lo, hi), = vasm.assemble("MASKMOV M2, 0xFFFF00000000000000000001")
    d = DEC(int(lo), int(hi))
    assert d["is_long"] and d["mask"] == 2 and hi >> 63 == 1
    with pytest.raises(ws.ProgramError, match="may not be bundled"):
        vasm.assemble("MASKMOV M0, 1 | ADD.S RD0, RD0, RD0")
    ve = ws.tensor.VectorEngine(lanes=96)
    ve.execute("MASKMOV M1, 0x5")
    assert list(np.flatnonzero(ve.mask(1))) == [0, 2]


@pytest.mark.parametrize("text, match", [
    ("FOO RD0", "unknown opcode"),
    ("ADD.S RD9, RD0, RD1", "RD9 does not exist"),
    ("ADD.S RD0, RW0, RD1", "mix register sizes"),
    ("DEQ.W RB0", "ld_reg"),
    ("LD.W RD0 | DEQ.W RD1", "two load"),
    ("FADD RW0, RW1, RW2", "fp32 operands live in RD"),
    ("SHL RB0, RB1, 8", "shift count"),
    ("QNT.U8 RB0, RD0, scale=70000", "int16"),
    ("ABS RD0, RD1, RD2", "takes 2 operand"),
])
def test_assembler_errors_name_the_field(text, match):
    with pytest.raises(ws.ProgramError, match=match) as err:
        vasm.assemble("NOP\n" + text)
    assert "line 2" in str(err.value)


def test_core_decoder_rejects_bad_fields():
    with pytest.raises(ws.ProgramError, match="alu_op: unknown ALU opcode"):
        DEC(0xFF << 13, 0)
    with pytest.raises(ws.ProgramError, match="padding"):
        DEC(0, 1 << 40)
    with pytest.raises(ws.ProgramError, match="ld_reg.*RD9"):
        DEC(3 | (9 << 8), 0)
    with pytest.raises(ws.ProgramError, match="st_op"):
        DEC(0, 0x77 << (78 - 64))
    # FADD with an 8-bit size code
    with pytest.raises(ws.ProgramError, match="alu_cfg.size"):
        DEC(8 << 13, 0)
