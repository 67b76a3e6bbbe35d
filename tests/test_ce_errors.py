"""Bad programs and bad host calls raise clear wafersim errors, never crash or return
garbage."""

import numpy as np
import pytest

import wafersim as ws


def _run(source, launch="t", **kw):
    pe = ws.pe.LonePE(**kw)
    pe.load(source)
    pe.launch(launch)
    pe.run()
    return pe


def test_dsd_outside_pe_memory_names_pe_pc_and_address():
    src = """
    .data
    d: .dsd mem1d, base=32000, length=400, stride=2
    .code
    .task t, 1
    t: lds1wds S1[0], d
       mov16.t r1, S1[0]
    """
    with pytest.raises(ws.MemoryAccessError) as e:
        _run(src, position=(3, 4))
    msg = str(e.value)
    assert "PE(3,4)" in msg and "pc 257 (mov16)" in msg and "address 32768" in msg


def test_odd_element_address_is_refused_0579():
    src = """
    .data
    d: .dsd mem1d, base=11, length=1, stride=2
    .code
    .task t, 1
    t: lds1wds S1[0], d
       mov16.t r1, S1[0]
    """
    with pytest.raises(ws.MemoryAccessError, match="address 11 is odd"):
        _run(src)


def test_small_data_memory_bounds_descriptor_addresses():
    src = """
    .data
    d: .dsd mem1d, base=6144, length=1, stride=2
    .code
    .task t, 1
    t: lds1wds S1[0], d
       mov16.t r1, S1[0]
    """
    with pytest.raises(ws.MemoryAccessError, match=r"outside data memory \[0, 6144\)"):
        _run(src, memory_bytes=8192, code_bytes=2048)  # the 8 kB option of [0700]


def test_instruction_memory_overflow():
    body = "\n".join(["  li r1, 1"] * 700)
    with pytest.raises(ws.ProgramError, match="instruction memory overflow"):
        ws.pe.LonePE(memory_bytes=8192, code_bytes=2048).load(f".task t, 1\nt:\n{body}\n  term")


def test_jumping_into_empty_memory_is_an_illegal_instruction():
    with pytest.raises(ws.ProgramError, match=r"pc 1000: illegal instruction 0x0"):
        _run(".task t, 1\nt: jmp 1000")


def test_activating_an_id_without_code_is_an_illegal_instruction():
    with pytest.raises(ws.ProgramError, match=r"task 7 pc 28: illegal instruction"):
        _run(".task t, 1\nt: activate.t 7")


def test_unknown_and_unexported_symbols_and_bad_copies():
    pe = ws.pe.LonePE()
    pe.load(".data\nx: .space fp16, 4\ny: .space i16, 2\n.export x\n.code\n.task t, 1\nt: term")
    with pytest.raises(ws.ConfigError, match="unknown symbol 'z'"):
        pe.write("z", np.zeros(4))
    with pytest.raises(ws.ConfigError, match="'y' is not exported"):
        pe.read("y")
    with pytest.raises(ws.ConfigError, match=r"holds 4 float16 elements, got an array of shape \(3,\)"):
        pe.write("x", np.zeros(3))
    with pytest.raises(ws.ConfigError, match="not exactly representable as float16"):
        pe.write("x", np.array([1.0, 2.0, 3.0, 1e-9]))
    with pytest.raises(ws.ConfigError, match="must be numbers"):
        pe.write("x", np.array(["a", "b", "c", "d"]))
    pe.write("x", [1, 2, 3, 0.5])  # exact values of any real dtype are fine
    assert list(pe.read("x")) == [1, 2, 3, 0.5]
    with pytest.raises(ws.ConfigError, match="is a task, not data"):
        pe.read("t")


def test_host_memory_access_outside_the_pe():
    pe = ws.pe.LonePE()
    with pytest.raises(ws.MemoryAccessError, match="reaches past the end of memory"):
        pe.write_memory(48 * 1024 - 2, np.zeros(4, np.uint8))
    with pytest.raises(ws.MemoryAccessError):
        pe.read_memory(48 * 1024, 1)


def test_bench_configuration_errors():
    with pytest.raises(ws.ConfigError, match="fabric_colors must be an integer in 1..32"):
        ws.pe.LonePE(fabric_colors=40)
    with pytest.raises(ws.ConfigError, match="loopback colors must be fabric colors"):
        ws.pe.LonePE(fabric_colors=24, loopback=[30])
    with pytest.raises(ws.ConfigError, match="picker must be one of"):
        ws.pe.LonePE(picker="lottery")
    with pytest.raises(ws.ConfigError, match="rng_resources must be 1, 2, 4 or 7"):
        ws.pe.LonePE(rng_resources=3)
    with pytest.raises(ws.ConfigError, match="data memory"):
        ws.pe.LonePE(memory_bytes=64 * 1024, code_bytes=8 * 1024)
    pe = ws.pe.LonePE(fabric_colors=24)
    with pytest.raises(ws.ConfigError, match="local colors come only from the CE"):
        pe.inject(30, [1.0])
    with pytest.raises(ws.ConfigError, match="one entry per wavelet"):
        pe.inject(3, [1.0, 2.0], index=[1, 2, 3])
    with pytest.raises(ws.ConfigError, match="no program loaded"):
        pe.read("x")


def test_deadlock_report_names_what_waits_on_what():
    src = """
    .data
    din: .dsd fabric_in, length=4, sw=1
    .code
    .task t, 5
    t: lds1wds S1[0], din
       mov16.t r1, S1[0]
    """
    pe = ws.pe.LonePE()
    pe.load(src)
    pe.inject(5, [1.0, 2.0])
    with pytest.raises(ws.DeadlockError) as e:
        pe.run(watchdog=500)
    report = e.value.report
    assert "task 5 running at pc 257 in mov16 (1 of 4 elements)" in report
    assert "waiting: input queue of color 5 is empty (src1)" in report


def test_unmodelled_descriptor_features_say_so():
    src = """
    .data
    d: .dsd mem1d, base=0, length=1, stride=2, ss=1
    .code
    .task t, 1
    t: lds1wds S1[0], d
       mov16.t r1, S1[0]
    """
    with pytest.raises(ws.ProgramError) as e:
        _run(src)
    assert e.value.category == "unsupported" and "SS (single step)" in str(e.value)


def test_vector_length_mismatch_and_simd_conflicts_are_program_errors():
    src = """
    .data
    a: .dsd mem1d, base=64, length=4, stride=2
    b: .dsd mem1d, base=64, length=5, stride=2
    .code
    .task t, 1
    t: lds1wds S1[0], a
       lddwds D[0], b
       mov16.t D[0], S1[0]
    """
    with pytest.raises(ws.ProgramError, match=r"different lengths \(src1 4, dst 5\)"):
        _run(src)


def test_not_finishing_within_max_cycles_raises_with_a_report():
    pe = ws.pe.LonePE()
    pe.load(".task t, 1\nt: jmp t")
    pe.launch("t")
    with pytest.raises(ws.WaferError, match="did not finish within 500 cycles"):
        pe.run(max_cycles=500)
