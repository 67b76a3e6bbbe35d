// An exact finite real value, sign * sig * 2^exp, with a 128-bit significand: wide enough
// to hold an fp16/fp32 product and sum before the single rounding of a fused operation.
#pragma once

#include <cstdint>

#include "wafersim/numerics/float_format.hpp"

namespace wafersim::numerics {

__extension__ typedef unsigned __int128 u128;

struct WideValue {
  bool sign = false;
  int exp = 0;
  u128 sig = 0;
  bool sticky = false;  // nonzero bits were dropped below sig's least significant bit

  bool is_exact_zero() const { return sig == 0 && !sticky; }
};

enum class FloatClass : uint8_t { zero, finite, infinite, nan };

// Decodes `bits` of format f; for zero and finite values `out` holds the exact value.
FloatClass decode(uint64_t bits, const FloatFormat& f, WideValue& out);

// Exact product of two finite values (significands of at most 64 bits each).
WideValue multiply(const WideValue& a, const WideValue& b);

// Sum of two exact finite values, exact or with `sticky` set for bits beyond 128.
// Returns an exact zero (sig 0, no sticky) when they cancel; the caller signs that zero.
WideValue add(const WideValue& a, const WideValue& b);

int msb_index(u128 x);  // position of the highest set bit; x must be nonzero

}  // namespace wafersim::numerics
