// Compares the fast arithmetic of fast_fma.hpp with the reference of fp_arith.hpp over
// many operands, in C++ so that sweeping all 2^32 fp16 pairs takes minutes, not days: the
// tests drive it. Stochastic rounding runs both sides on identically seeded LFSR banks and
// also compares the banks' states after every operation (the same number of draws).
#pragma once

#include <cstdint>

#include "wafersim/numerics/fast_fma.hpp"
#include "wafersim/numerics/fast_fma_lanes.hpp"
#include "wafersim/numerics/float_format.hpp"
#include "wafersim/numerics/fp_control.hpp"

namespace wafersim::numerics {

enum class CheckedOp : uint8_t { add, sub, mul, fma };

struct FastCheck {
  uint64_t checked = 0;
  uint64_t mismatches = 0;
  // The first mismatch: operands (c unused by add, sub, mul) and both results.
  uint64_t a = 0, b = 0, c = 0, fast = 0, reference = 0;
};

// fp16 pairs (a, b) = (i >> 16, i & 0xFFFF) for i = first, first + stride, ... < 2^32.
FastCheck check_fp16_pairs(CheckedOp op, const FpControl& ctl, Fp16Build build,
                           uint64_t first, uint64_t stride, uint64_t seed);

// n fused multiply-adds in format f (fp16 or fp32) with operands drawn from `seed`: random
// bit patterns, zeros, subnormals, infinities, NaNs, the largest and smallest exponents,
// short significands whose products fall on midpoints, addends that (nearly) cancel the
// product and addends far below it. `build` applies to fp16.
FastCheck check_random_fma(const FloatFormat& f, const FpControl& ctl, Fp16Build build,
                           uint64_t n, uint64_t seed);

// The same operands through the lane loops (fast_fma_lanes.hpp) of `build`, in runs of
// random length, each element against the reference.
FastCheck check_random_fma_lanes(const FloatFormat& f, const FpControl& ctl, LanesBuild build,
                                 uint64_t n, uint64_t seed);

}  // namespace wafersim::numerics
