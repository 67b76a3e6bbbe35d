"""The two floating-point formats the math library computes in, as the CE's 16-bit integer
operations see them.

A routine takes a float apart with 16-bit integer operations on the 16-bit word that holds
the sign, the exponent and the top of the mantissa: an fp16 element is that word; an fp32
element (little endian) is two words, ``lo`` (mantissa bits 15:0) at the element's address
and ``hi`` (sign, 8-bit exponent, mantissa bits 22:16) two bytes above it. Strided views
(stride 4 bytes) let the 16-bit operations, 4 elements per cycle [0502], work on the ``hi``
or ``lo`` words of an fp32 vector.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["FpFormat", "FP16", "FP32", "FORMATS", "bits_of"]


@dataclass(frozen=True)
class FpFormat:
    name: str            # "fp16" or "fp32"
    nbytes: int          # bytes per element
    exp_bits: int        # width of the exponent field
    man_hi_bits: int     # mantissa bits inside the hi word (10 for fp16, 7 for fp32)
    suffix: str          # mnemonic suffix of its arithmetic: "h" (faddh) or "s" (fadds)

    # ---- fields of the hi word --------------------------------------------------------------
    @property
    def bias(self) -> int:
        return (1 << (self.exp_bits - 1)) - 1

    @property
    def unit(self) -> int:
        """One step of the exponent field in the hi word (1 << mantissa bits there)."""
        return 1 << self.man_hi_bits

    @property
    def exp_mask(self) -> int:
        return ((1 << self.exp_bits) - 1) << self.man_hi_bits

    @property
    def man_mask(self) -> int:
        return self.unit - 1

    @property
    def one(self) -> int:
        """The hi word of 1.0."""
        return self.bias << self.man_hi_bits

    @property
    def qnan(self) -> int:
        """The hi word of the default quiet NaN (the fp32 one has a zero lo word)."""
        return self.exp_mask | (self.unit >> 1)

    @property
    def mantissa_bits(self) -> int:
        return self.man_hi_bits + (16 if self.nbytes == 4 else 0)

    @property
    def emin(self) -> int:
        """The exponent of the smallest normal number."""
        return 1 - self.bias

    @property
    def np_dtype(self):
        return np.float32 if self.nbytes == 4 else np.float16

    @property
    def uint(self):
        return np.uint32 if self.nbytes == 4 else np.uint16

    def op(self, name: str) -> str:
        """The mnemonic of a floating-point operation in this format: op("add") -> fadds."""
        return f"f{name}{self.suffix}"


FP16 = FpFormat("fp16", 2, 5, 10, "h")
FP32 = FpFormat("fp32", 4, 8, 7, "s")
FORMATS = {"fp16": FP16, "fp32": FP32}


def bits_of(value: float, fmt: FpFormat) -> int:
    """The bit pattern of ``value`` rounded to ``fmt`` (round to nearest even)."""
    return int(np.array([value], dtype=fmt.np_dtype).view(fmt.uint)[0])
