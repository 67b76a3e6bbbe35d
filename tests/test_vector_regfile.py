"""Register aliasing of Fig. 4B [0062]-[0064]: RD0-7 = RW0-15 = RB0-31, little-endian."""

import numpy as np
import pytest

import wafersim as ws


@pytest.fixture
def ve():
    return ws.tensor.VectorEngine(lanes=96)


def test_aliasing_layout_all_registers_and_lanes_0062_0064(ve):
    rng = np.random.default_rng(1)
    for n in range(8):
        value = rng.integers(0, 2**32, 96, dtype=np.uint64).astype(np.uint32)
        ve.set_reg(f"RD{n}", value)
        for half in range(2):
            np.testing.assert_array_equal(ve.reg(f"RW{2 * n + half}"), (value >> (16 * half)) & 0xFFFF)
        for byte in range(4):
            np.testing.assert_array_equal(ve.reg(f"RB{4 * n + byte}"), (value >> (8 * byte)) & 0xFF)


def test_worked_example_rd1_0064(ve):
    ve.set_reg("RD1", np.full(96, 0x44332211, dtype=np.uint32))
    assert (ve.reg("RW2") == 0x2211).all() and (ve.reg("RW3") == 0x4433).all()
    assert [int(ve.reg(f"RB{k}")[0]) for k in (4, 5, 6, 7)] == [0x11, 0x22, 0x33, 0x44]
    ve.set_reg("RD7", np.full(96, 0xDDCCBBAA, dtype=np.uint32))  # RD7 <-> RW14/15 <-> RB28-31
    assert (ve.reg("RW14") == 0xBBAA).all() and (ve.reg("RW15") == 0xDDCC).all()
    assert [int(ve.reg(f"RB{k}")[95]) for k in range(28, 32)] == [0xAA, 0xBB, 0xCC, 0xDD]


def test_partial_writes_touch_only_their_bytes_0062(ve):
    base = np.arange(96, dtype=np.uint32) * 0x01010101 + 0x80000000
    for n in range(8):
        ve.set_reg(f"RD{n}", base)
    ve.set_reg("RB29", np.full(96, 0xEE))      # byte 1 of RD7
    ve.set_reg("RW3", np.full(96, 0xBEEF))     # bytes 2-3 of RD1
    np.testing.assert_array_equal(ve.reg("RD7"), (base & ~np.uint32(0xFF00)) | 0xEE00)
    np.testing.assert_array_equal(ve.reg("RD1"), (base & 0xFFFF) | 0xBEEF0000)
    for n in (0, 2, 3, 4, 5, 6):
        np.testing.assert_array_equal(ve.reg(f"RD{n}"), base)


def test_partial_write_through_an_alu_instruction(ve):
    ve.set_reg("RD2", np.full(96, 0x11223344, dtype=np.uint32))
    ve.execute("MOVI RB9, 0x7F")               # RB9 = byte 1 of RD2
    assert (ve.reg("RD2") == 0x11227F44).all()


def test_unknown_register_names_are_errors(ve):
    with pytest.raises(ws.MemoryAccessError, match="RB32 does not exist"):
        ve.reg("RB32")
    with pytest.raises(ws.WaferError, match="RW16"):
        ve.reg("RW16")
