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
