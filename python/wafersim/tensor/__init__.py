"""The tensor unit of seed 002 (Tesla's vector computational unit): a matrix array of
multiply-accumulate units, a 96-lane vector engine with aliased 8/16/32-bit registers and
128-bit load/ALU/store triads, and a max-pooling post-processor. See docs/tensor.md."""

from .formatter import conv_output_size, format_conv_data, format_conv_weights
from .matrix_array import FIFO_FORMATS, MatrixArray, fifo_row
from .post_processor import max_pool
from .tensor_unit import TensorUnit, TensorUnitConfig, quantize_program
from .vector_engine import VectorEngine

__all__ = [
    "MatrixArray",
    "VectorEngine",
    "TensorUnit",
    "TensorUnitConfig",
    "max_pool",
    "quantize_program",
    "format_conv_data",
    "format_conv_weights",
    "conv_output_size",
    "FIFO_FORMATS",
    "fifo_row",
]
