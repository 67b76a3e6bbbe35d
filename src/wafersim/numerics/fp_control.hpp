// The FP Control Register of seed 000 [0674], [0680]-[0681]: a static rounding mode, a
// static random-number resource, and the flush-to-zero / saturation flags.
#pragma once

#include <cstdint>
#include <string>

#include "wafersim/errors.hpp"

namespace wafersim::numerics {

// The five IEEE 754 modes plus the stochastic mode of [0672] [0680].
enum class RoundingMode : uint8_t {
  nearest_even,
  nearest_away,
  toward_zero,
  toward_positive,
  toward_negative,
  stochastic,
};

// What a subnormal result becomes. [0681] gives FTZ=1 -> zero and FTZ=0 -> minimum normal;
// `keep` (IEEE gradual underflow) is the emulator's default (docs/numerics.md).
enum class Subnormals : uint8_t { keep, flush_to_zero, flush_to_min_normal };

struct FpControl {
  RoundingMode mode = RoundingMode::nearest_even;
  uint8_t rng = 0;               // Static RNG Bits 2925.2: random-number resource to use
  Subnormals subnormals = Subnormals::keep;
  bool max_sat = false;          // Max Sat 2925.4: overflow gives max normal instead of inf
  bool min_sat = false;          // Min Sat 2925.5: underflow gives min normal/subnormal, not 0
  uint8_t stochastic_bits = 3;   // N of [0672]: random bits added below the ULP
  bool stochastic_or_lower = false;  // [0693]: OR the remaining lower bits into the Nth bit
};

// Checks the fields a caller can set out of range (the rng index is checked by the bank).
inline void validate(const FpControl& ctl) {
  if (ctl.stochastic_bits < 1 || ctl.stochastic_bits > 32) {
    throw ConfigError("stochastic_bits (N of [0672]) must be in 1..32, got " +
                      std::to_string(ctl.stochastic_bits));
  }
}

}  // namespace wafersim::numerics
