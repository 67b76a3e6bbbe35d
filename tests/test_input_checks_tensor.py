"""The tensor unit checks its configuration in Python: a wrong value raises a ConfigError
naming the parameter and the value, never pybind11's TypeError with its signature dump."""

import numpy as np
import pytest

import wafersim as ws
from wafersim.tensor.matrix_array import MatrixArray
from wafersim.tensor.vector_engine import VectorEngine


@pytest.mark.parametrize("make,param,shown", [
    (lambda: ws.TensorUnit(weight_signed="yes"), "weight_signed", "'yes'"),
    (lambda: ws.TensorUnit(data_signed=None), "data_signed", "None"),
    (lambda: ws.TensorUnit(weight_signed=1), "weight_signed", "1"),
    (lambda: ws.TensorUnit(pipeline=5), "pipeline", "5"),
    (lambda: ws.TensorUnit(pipeline="staggered"), "pipeline", "'staggered'"),
    (lambda: ws.TensorUnit(dtype=np.array(["int8", "fp16"])), "dtype", "array"),
    (lambda: ws.TensorUnit(mode=None), "mode", "None"),
    (lambda: ws.TensorUnit(rows=2.0), "rows", "2.0"),
    (lambda: ws.TensorUnit(5), "config", "int"),
    (lambda: ws.TensorUnit(5, rows=4), "config", "int"),
    (lambda: ws.TensorUnit(rowz=4), "rowz", "rows"),
    (lambda: MatrixArray(4, 4, weight_signed="yes"), "weight_signed", "'yes'"),
    (lambda: VectorEngine(4, pipeline=None), "pipeline", "None"),
])
def test_a_wrong_configuration_names_parameter_and_value(make, param, shown):
    with pytest.raises(ws.ConfigError) as e:
        make()
    message = str(e.value)
    assert param in message and shown in message, message
    assert "Invoked with" not in message and "incompatible" not in message


def test_numpy_booleans_are_flags():
    tu = ws.TensorUnit(rows=4, cols=4, lanes=4, weight_signed=np.bool_(False),
                       data_signed=np.bool_(False))
    a = np.arange(8, dtype=np.uint8).reshape(2, 4)
    b = np.full((4, 3), 200, dtype=np.uint8)                       # 200 fits only unsigned
    assert np.array_equal(tu.matmul(a, b), a.astype(np.int64) @ b.astype(np.int64))
