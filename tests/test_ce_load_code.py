"""Loading instruction words into a compute element's code memory: three 20-bit words per
64-bit word [0348] (docs/decisions.md, "Memory map"), the top 4 bits of each untouched by
loads. A fresh CE's code memory is zero and is written without being read first
(ce_host.cpp); a CE whose code was written before merges the new words into what is
there. Checked against a model of the packing in numpy."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import wafersim as ws

CODE_BYTES = 2048
MEMORY_BYTES = 8192
DATA_BYTES = MEMORY_BYTES - CODE_BYTES
SLOTS = CODE_BYTES // 8 * 3


def _pe():
    return ws.pe.LonePE(memory_bytes=MEMORY_BYTES, code_bytes=CODE_BYTES)


def _pack(model_words: np.ndarray, top_bits: np.ndarray) -> np.ndarray:
    """The code region's bytes for instruction slots `model_words` and top nibbles."""
    w = model_words.astype(np.uint64).reshape(-1, 3)
    groups = w[:, 0] | (w[:, 1] << np.uint64(20)) | (w[:, 2] << np.uint64(40))
    groups |= top_bits.astype(np.uint64) << np.uint64(60)
    return groups.astype("<u8").view(np.uint8)


loads = st.lists(st.tuples(st.integers(0, SLOTS - 1),
                           st.lists(st.integers(0, 2**20 - 1), min_size=1, max_size=40)),
                 min_size=1, max_size=4)


@settings(max_examples=80, deadline=None)
@given(loads, st.booleans())
def test_words_land_three_to_eight_bytes_fresh_or_over_old_code(batches, dirty_top):
    pe = _pe()
    model = np.zeros(SLOTS, np.uint32)
    top = np.zeros(SLOTS // 3, np.uint8)
    for k, (first, words) in enumerate(batches):
        words = words[:SLOTS - first]
        if k == 1 and dirty_top:  # bits above the three words of each 8 bytes stay as written
            raw = pe.read_memory(DATA_BYTES, CODE_BYTES).copy()
            raw[7::8] |= 0xF0
            pe.write_memory(DATA_BYTES, raw)
            top[:] = 0xF
        pe._ce.load_code(first, np.array(words, np.uint32))
        model[first:first + len(words)] = words
        for i in range(max(0, first - 3), min(SLOTS, first + len(words) + 3)):
            assert pe._ce.fetch_word(i) == model[i]
    assert np.array_equal(pe.read_memory(DATA_BYTES, CODE_BYTES), _pack(model, top))


def test_a_fresh_load_that_starts_inside_eight_bytes_leaves_the_slots_before_it_zero():
    pe = _pe()
    pe._ce.load_code(4, np.array([0xABCDE, 0x12345], np.uint32))  # slots 4 and 5 of 3..5
    got = pe.read_memory(DATA_BYTES + 8, 8).view("<u8")[0]
    assert int(got) == (0xABCDE << 20) | (0x12345 << 40)
    assert [pe._ce.fetch_word(i) for i in range(3, 7)] == [0, 0xABCDE, 0x12345, 0]
