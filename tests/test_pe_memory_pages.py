"""PE memory by the page (docs/scale.md): a wafer's PE memories live in lazily mapped
arena slots, so untouched pages cost nothing, read as zeros, and a new program starts
from zeroed memory; accesses across page boundaries and the bounds checks behave as
before. Also the packed per-PE run statistics, which must equal the plain ones."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wafersim as ws
from wafersim import _core
from wafersim.ce_access import ce_config

MEMORY = 48 * 1024
PAGE = 4096

CODE_ONLY = """
.code
.task main, 40
main: term
"""

# x and y straddle the first and second page boundaries (4096, 8192)
STRADDLE = """
.data
pad:  .space i16, 2039
x:    .space i16, 8
pad2: .space i16, 2040
y:    .space i16, 8
dx:   .dsd mem1d, base=x, length=8, stride=2
dy:   .dsd mem1d, base=y, length=8, stride=2
.export x, y
.code
.task main, 40
main: lds1wds S1[1], dx
      lddwds D[1], dy
      mov16.t D[1], S1[1]
"""


@pytest.mark.nosanitize  # the sanitizer's shadow memory makes resident sizes meaningless
@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads Linux's VmRSS")
def test_untouched_pe_memory_of_a_large_wafer_is_not_resident():
    # In a subprocess: the measurement sees only this wafer, and a crash fails the test.
    script = textwrap.dedent(f"""
        import wafersim as ws
        def rss():
            for line in open("/proc/self/status"):
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        prog = ws.asm.assemble({CODE_ONLY!r})
        w = ws.Wafer(256, 256)
        before = rss()
        w.load(prog)  # a compute element with 48 KiB of memory on each of 65,536 PEs
        grown = rss() - before
        assert w.pe(255, 255).read_memory(0, 64).sum() == 0
        print(grown)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    grown = int(out.stdout.split()[-1])
    pes = 256 * 256
    # Each PE touches one page of code; a whole 48 KiB memory per PE would be 3 GiB.
    assert grown < pes * MEMORY / 4, f"{grown / pes:.0f} bytes per PE"


def test_untouched_memory_reads_zero_on_a_wafer_and_a_lone_pe():
    prog = ws.asm.assemble(STRADDLE)
    w = ws.Wafer(2, 3)
    w.load(prog)
    pe = ws.pe.LonePE()
    pe.load(prog)
    code_start = MEMORY - 16 * 1024
    for target in (w.pe(1, 2), pe):
        data = target.read_memory(0, code_start)
        written = np.zeros(code_start, bool)  # what the program image put there: descriptors
        for addr, blob in prog.data:
            written[addr:addr + len(blob)] = True
        assert not data[~written].any()
        assert not target.read_memory(code_start + PAGE, 3 * PAGE).any()  # past the code


def test_vector_copy_across_page_boundaries():
    prog = ws.asm.assemble(STRADDLE)
    x, y = prog.exported("x"), prog.exported("y")
    assert x.address < PAGE < x.address + 16 and y.address < 2 * PAGE < y.address + 16
    values = np.arange(1, 9, dtype=np.int16) * 1111
    w = ws.Wafer(1, 2)
    w.load(prog)
    pe = ws.pe.LonePE()
    pe.load(prog)
    for target, run in ((w.pe(0, 1), w.run), (pe, pe.run)):
        target.write("x", values)
        target.launch("main")
        run()
        np.testing.assert_array_equal(target.read("y"), values)


@settings(deadline=None, max_examples=40)
@given(st.lists(st.tuples(st.integers(0, MEMORY - 1), st.binary(min_size=1, max_size=300)),
                min_size=1, max_size=8))
def test_host_writes_and_reads_match_a_flat_model(writes):
    w = ws.Wafer(1, 1)
    w.load(CODE_ONLY)
    target = w.pe(0, 0)
    model = target.read_memory(0, MEMORY).copy()  # zeros but the code
    for addr, data in writes:
        data = data[:MEMORY - addr]
        target.write_memory(addr, data)
        model[addr:addr + len(data)] = np.frombuffer(data, np.uint8)
    np.testing.assert_array_equal(target.read_memory(0, MEMORY), model)


def test_access_past_the_end_is_still_a_memory_access_error():
    w = ws.Wafer(1, 1)
    w.load(CODE_ONLY)
    with pytest.raises(ws.MemoryAccessError):
        w.pe(0, 0).write_memory(MEMORY - 1, b"\x01\x02")
    with pytest.raises(ws.MemoryAccessError):
        w.pe(0, 0).read_memory(MEMORY - 4, 8)


def test_a_new_program_starts_from_zeroed_memory():
    w = ws.Wafer(2, 2)
    w.load(CODE_ONLY)
    w.pe(1, 1).write_memory(PAGE - 3, bytes(range(1, 200)))
    w.pe(1, 1).write_memory(5 * PAGE, b"\xff" * 64)
    w.pe(1, 1).load(CODE_ONLY)
    data = w.pe(1, 1).read_memory(0, MEMORY - 16 * 1024)
    assert not data.any()
    # and after a change of memory size: the old slot is given back, the new one is zero
    w._core.ce_config = ce_config(fabric_colors=w.colors, memory_bytes=40 * 1024)
    w.pe(1, 1).load(CODE_ONLY)
    assert w.pe(1, 1).config.memory_bytes == 40 * 1024
    assert not w.pe(1, 1).read_memory(0, 24 * 1024).any()  # below the code
    w._core.ce_config = ce_config(fabric_colors=w.colors)
    w.pe(1, 1).load(CODE_ONLY)
    assert not w.pe(1, 1).read_memory(0, MEMORY - 16 * 1024).any()


def test_packed_run_statistics_equal_the_plain_ones():
    from wafersim.kernels.matvec import run_grid
    r = run_grid(3, 4, seed=3, check=False)
    w, pes = r["wafer"], r["stats"].pes
    plain = {(int(i) // w.cols, int(i) % w.cols): s for i, s in w._core.ce_run_stats()}
    assert plain.keys() == set(pes)
    for p, s in plain.items():
        assert pes[p] == s
    assert pes.total("element_ops") == sum(s["element_ops"] for s in plain.values()) > 0


def test_packed_counters_are_a_header_and_the_words_low_bytes():
    """The packed form (docs/scale.md, "What one PE costs"): per nonzero counter word a
    16-bit header, its index in bits 11:0 and its byte count - 1 in bits 14:12, then its
    low bytes, little-endian; written here by hand and read back."""
    import struct
    cycles, busy = 2**63 + 5, 200  # words 0 and 1 of the counters: 8 bytes and 1 byte
    packed = (struct.pack("<H", 0 | 7 << 12) + struct.pack("<Q", cycles)
              + struct.pack("<H", 1 | 0 << 12) + bytes([busy]))
    s = _core.ce_stats_unpack(packed)
    assert s["cycles"] == cycles and s["busy_cycles"] == busy and s["stall_cycles"] == 0
    with pytest.raises(ws.ConfigError, match="end inside word 0"):
        _core.ce_stats_unpack(struct.pack("<H", 0 | 2 << 12) + b"\x01\x02")  # 3 bytes said


def test_malformed_packed_statistics_are_a_config_error():
    with pytest.raises(ws.ConfigError):
        _core.ce_stats_unpack(b"\x00" * 7)
    with pytest.raises(ws.ConfigError):
        _core.ce_stats_unpack(b"\xff\xff" + b"\x00" * 8)
