"""The exception hierarchy: types, bases, categories, and translation from the C++ core."""

import numpy as np
import pytest

import wafersim as ws


def test_hierarchy():
    for cls in (ws.ConfigError, ws.ProgramError, ws.MemoryAccessError, ws.RouteError,
                ws.DeadlockError):
        assert issubclass(cls, ws.WaferError)
    assert issubclass(ws.ConfigError, ValueError)
    assert issubclass(ws.MemoryAccessError, IndexError)


def test_config_error_from_the_core_keeps_message_and_category():
    with pytest.raises(ws.ConfigError) as err:
        ws.numerics.LfsrBank(5, 0)
    assert "got 5" in str(err.value)
    assert err.value.category == "usage"
    with pytest.raises(ValueError):  # also catchable as a ValueError
        ws.numerics.LfsrBank(6, 0)


def test_config_error_from_python_validation():
    with pytest.raises(ws.ConfigError, match="seed must be a non-negative integer"):
        ws.numerics.round_fp16(np.ones(2), "stochastic", seed=-1)


def test_deadlock_error_carries_its_report():
    e = ws.DeadlockError("stuck", report="router (0,0) color 3")
    assert e.report == "router (0,0) color 3" and "color 3" in str(e)


def test_route_error_from_the_core_names_color_router_and_links():
    w = ws.Wafer(3, 1, loop=True)
    for r in range(3):
        w.router(r, 0).set_route(1, rx=["S"], tx=["N"])
    with pytest.raises(ws.RouteError) as err:
        w.run()
    assert err.value.category == "usage"
    assert "color 1" in str(err.value) and "(2, 0) -N-> (0, 0)" in str(err.value)


def test_deadlock_error_from_the_watchdog_carries_a_report():
    w = ws.Wafer(1, 2, watchdog=25)
    w.route(3, path=[(0, 0), (0, 1)])
    w.set_sink((0, 1), capacity=1)
    w.inject((0, 0), 3, data=np.arange(8))
    with pytest.raises(ws.DeadlockError) as err:
        w.run()
    assert isinstance(err.value, ws.WaferError)
    assert "router (0, 0) color 3: 2/2 queued" in err.value.report
    assert err.value.report in str(err.value)


def test_program_error_from_the_wafer_names_the_line_or_the_pe_and_pc():
    w = ws.Wafer(1, 2)
    with pytest.raises(ws.ProgramError, match="line 2: unknown instruction 'frob'") as err:
        w.pe(0, 0).load(".code\nfrob r1\n")
    assert err.value.category == "usage"
    w.pe(0, 1).load(".code\n.task main, 40\nmain: jmp 5000\n")
    w.launch("main")
    with pytest.raises(ws.ProgramError, match=r"PE\(0,1\) task 40 pc 5000: illegal instruction"):
        w.run()


def test_memory_access_error_from_the_wafer_names_pe_pc_and_address():
    w = ws.Wafer(2, 1)
    w.pe(1, 0).load("""
.data
far: .dsd mem1d, base=32766, length=2, stride=2
.code
.task main, 40
main: lds1wds S1[0], far
      mov16.t r1, S1[0]
""")
    w.launch("main")
    with pytest.raises(ws.MemoryAccessError) as err:
        w.run()
    assert str(err.value).startswith("PE(1,0) pc ")
    assert "(mov16): src1 address 32768 is outside data memory [0, 32768)" in str(err.value)
    with pytest.raises(IndexError):  # also catchable as an IndexError
        raise err.value
