// One rounding step from an exact (or sticky-marked) value to a binary format, under the
// rounding modes and flags of the FP Control Register [0670]-[0681].
#pragma once

#include <cstdint>

#include "wafersim/numerics/float_format.hpp"
#include "wafersim/numerics/fp_control.hpp"
#include "wafersim/numerics/lfsr.hpp"
#include "wafersim/numerics/wide_value.hpp"

namespace wafersim::numerics {

// Rounds a nonzero finite value to the bits of format f. `rng` is used only in stochastic
// mode and must then be non-null.
uint64_t round_to_format(const WideValue& v, const FloatFormat& f, const FpControl& ctl,
                         LfsrBank* rng);

// The bits of a signed zero produced by an exact cancellation x + (-x) [IEEE 754 6.3].
inline uint64_t cancellation_zero(const FloatFormat& f, RoundingMode mode) {
  return mode == RoundingMode::toward_negative ? f.sign_mask() : 0;
}

// A NaN keeps its sign and its leading payload bits, so a signalling NaN stays signalling
// (numpy does the same); a payload that falls off entirely becomes 1 to stay a NaN.
// The subnormal settings and Min Sat applied to a finite rounded result (FTZ [0681]).
uint64_t apply_underflow(uint64_t bits, const FloatFormat& f, const FpControl& ctl);

uint64_t convert_nan(uint64_t bits, const FloatFormat& from, const FloatFormat& to);

}  // namespace wafersim::numerics
