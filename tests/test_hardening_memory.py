"""Host accessors that take an address, a count or a register number check it in C++ and
raise MemoryAccessError (an IndexError): PE memory reads and writes, instruction fetches
(disassemble), code loads, Base, GPRs, DSRs, XDSRs and stride registers, on a LonePE and on
the PEs of a Wafer. Calls that used to crash run in a subprocess, so a crash fails the test
instead of the suite."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import wafersim as ws

LOOP = ".code\n.task main, 40\nmain: jmp main\n"
SMALL = dict(memory_bytes=4096, code_bytes=1024)  # 3072 data bytes, 384 instructions


def _in_subprocess(body: str) -> subprocess.CompletedProcess:
    code = "import numpy as np\nimport wafersim as ws\n" + textwrap.dedent(body) + "\nprint('done')\n"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


def _lone():
    pe = ws.pe.LonePE(**SMALL)
    pe.load(LOOP)
    return pe


def _wafer_pe():
    w = ws.Wafer(1, 2, ce=SMALL)
    w.pe(0, 1).load(LOOP)
    return w.pe(0, 1)


@pytest.mark.parametrize("make", ["ws.pe.LonePE()", "ws.Wafer(1, 1).pe(0, 0)"])
def test_disassemble_outside_instruction_memory_raises_instead_of_crashing(make):
    # Used to read past the end of the PE's memory buffer: SIGSEGV or heap-buffer-overflow.
    out = _in_subprocess(f"""
        pe = {make}
        pe.load(".code\\n.task main, 40\\nmain: jmp main\\n")
        n = pe.config.max_instructions
        for first, count in [(10**6, 3), (0, 10**5), (n - 2, 3), (n, 1), (2**32 - 1, 2)]:
            try:
                pe.disassemble(first, count)
            except ws.MemoryAccessError as e:
                assert "instruction" in str(e) or "first" in str(e), e
            else:
                raise SystemExit(f"no error for disassemble({{first}}, {{count}})")
        for index in (n, n + 1, 10**6, 2**32 - 1):
            try:
                pe._ce.fetch_word(index)  # the core's own check, under the Python one
            except ws.MemoryAccessError as e:
                assert "outside instruction memory" in str(e), e
            else:
                raise SystemExit(f"no error for fetch_word({{index}})")
        assert "jmp" in pe.disassemble(4 * 40, 1) and pe.disassemble(n, 0) == ""
    """)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().endswith("done")


def test_huge_reads_raise_before_allocating_anything():
    out = _in_subprocess("""
        import resource
        if ws._core.build_info()["sanitizers"] == "none":  # ASan reserves far more address space
            resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, 2 * 1024**3))  # 4 GiB would fail
        pe = ws.pe.LonePE()
        w = ws.Wafer(1, 2)
        w.pe(0, 1).load(".data\\nx: .space i16, 4\\n.export x\\n")
        ids = np.array([1], np.uint32)
        for call in (lambda: pe.read_memory(0, 2**32 - 1), lambda: pe._ce.read_memory(1, 2**32 - 1),
                     lambda: w.pe(0, 1).read_memory(0, 2**32 - 1),
                     lambda: w._core.read_memory(ids, 16, 2**32 - 1)):
            try:
                call()
            except ws.MemoryAccessError as e:
                assert "reaches past the end of memory" in str(e), e
            else:
                raise SystemExit("no error")
    """)
    assert out.returncode == 0, out.stderr[-3000:]


@pytest.mark.parametrize("make", [_lone, _wafer_pe])
def test_memory_ranges_that_leave_the_pe_raise_memory_access_error(make):
    pe = make()
    size = pe.config.memory_bytes
    assert pe.read_memory(size - 4, 4).shape == (4,)
    pe.write_memory(size - 2, b"\x01\x02")
    assert pe.read_memory(size - 2, 2).tolist() == [1, 2]
    for addr, n in [(size - 3, 4), (size, 1), (2**32 - 1, 1), (2**32 - 1, 2**32 - 1)]:
        with pytest.raises(ws.MemoryAccessError, match="reaches past the end of memory"):
            pe.read_memory(addr, n)
    for addr, n in [(size - 3, 4), (size, 1), (2**32 - 1, 1), (2**32 - 8, 8)]:
        with pytest.raises(IndexError, match="reaches past the end of memory"):
            pe.write_memory(addr, np.zeros(n, np.uint8))  # MemoryAccessError is an IndexError
    for addr, n in [(-1, 1), (0, -1), (2**32, 1), (0, 2**32)]:
        with pytest.raises(ws.MemoryAccessError, match="must be in 0..4294967295"):
            pe.read_memory(addr, n)
    with pytest.raises(ws.ConfigError, match="address must be an integer"):
        pe.read_memory(1.5, 2)


@pytest.mark.parametrize("make", [_lone, _wafer_pe])
def test_register_numbers_out_of_range_raise_memory_access_error(make):
    pe = make()
    calls = [(lambda: pe.gpr(16), "register must be in 0..15"),
             (lambda: pe.set_gpr(-1, 0), "register must be in 0..15"),
             (lambda: pe.dsr("s0", 12), "DSR must be in 0..11"),
             (lambda: pe.xdsr(1), "XDSR must be in 2..7"),
             (lambda: pe.stride_register(8), "stride register must be in 2..7"),
             # the core's checks, below the Python ones
             (lambda: pe._ce.gpr(16), "GPR 16 does not exist"),
             (lambda: pe._ce.set_dsr("d", 12, 0), "DSR 12 does not exist"),
             (lambda: pe._ce.xdsr(8), "XDSR 8 does not exist"),
             (lambda: pe._ce.set_stride_reg(1, 0), "stride register 1 does not exist")]
    for call, match in calls:
        with pytest.raises(ws.MemoryAccessError, match=match):
            call()
    with pytest.raises(ws.ConfigError, match="DSR kind must be"):
        pe.dsr(0, 1)
    assert pe.gpr(15) == 0 and pe.dsr("d", 11) == 0 and pe.xdsr(7) == 0


def test_code_loads_and_base_check_their_range_without_overflow():
    pe = _lone()
    n = pe.config.max_instructions
    with pytest.raises(ws.ProgramError, match="instruction memory overflow"):
        pe._ce.load_code(n - 1, np.zeros(2, np.uint32))
    with pytest.raises(ws.ProgramError, match="instruction memory overflow"):
        pe._ce.load_code(2**32 - 1, np.zeros(2, np.uint32))
    with pytest.raises(ws.ConfigError, match="leaves no room for the 64 task entries"):
        pe._ce.base = 2**32 - 100  # base + 256 used to wrap around to a small number
    pe._ce.load_code(n - 1, np.zeros(1, np.uint32))


@st.composite
def _access(draw):
    big = st.sampled_from([2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**40, 2**64, -1, -2**63])
    near = st.integers(-8, 4200)
    return draw(st.sampled_from(["read", "write", "disassemble", "gpr", "dsr", "xdsr", "stride"])), \
        draw(st.one_of(near, big)), draw(st.one_of(st.integers(-4, 600), big))


@pytest.mark.parametrize("make", [_lone, _wafer_pe])
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(access=st.lists(_access(), min_size=1, max_size=8))
def test_fuzzed_accessors_succeed_exactly_in_range_and_raise_index_errors_outside(make, access):
    pe = make()
    size, n_ins = pe.config.memory_bytes, pe.config.max_instructions
    for what, a, b in access:
        if what == "read":
            ok = 0 <= a and 0 <= b and a + b <= size
        elif what == "write":
            b = min(max(b, 0), 600)  # bytes written
            ok = 0 <= a and a + b <= size
        elif what == "disassemble":
            ok = 0 <= a <= n_ins and 0 <= b and a + b <= n_ins
        else:
            lo, hi = {"gpr": (0, 15), "dsr": (0, 11), "xdsr": (2, 7), "stride": (2, 7)}[what]
            ok = lo <= a <= hi
        try:
            if what == "read":
                got = pe.read_memory(a, b)
                assert got.shape == (b,) and got.dtype == np.uint8
            elif what == "write":
                pe.write_memory(a, np.full(b, 7, np.uint8))
                assert b == 0 or pe.read_memory(a + b - 1, 1)[0] == 7
            elif what == "disassemble":
                assert len(pe.disassemble(a, b).splitlines()) == b
            elif what == "gpr":
                pe.gpr(a)
            elif what == "dsr":
                pe.dsr("s1", a)
            elif what == "xdsr":
                pe.xdsr(a)
            else:
                pe.stride_register(a)
        except ws.MemoryAccessError:
            assert not ok, (what, a, b)
        else:
            assert ok, (what, a, b)
    # The PE stays usable (writes may have overwritten its code: that is allowed).
    assert len(pe.disassemble(pe.config.max_instructions - 1, 1).splitlines()) == 1
    assert pe.read_memory(0, 4).shape == (4,) and "PE(" in pe.describe_wait()
