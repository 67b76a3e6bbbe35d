// Many fused multiply-adds at once: out[k] = a[k] * b[k] + c[k] for k < n, each the same
// bits as fast_fma16 / fast_fma32 (and so as the reference fma_bits). Where the host has
// AVX2 and F16C (chosen when the library loads), 8 fp16 or 4 fp32 lanes run together:
// the exact product and the sum rounded to odd as in fast_fma.cpp, then one rounding of
// all lanes by the vector conversion. Lanes the vector code cannot round exactly (an
// infinite, NaN or fp32 subnormal operand, a result the vector conversion cannot take)
// are redone one by one by the scalar fast path; modes and flags it does not cover
// (stochastic, ties away, flush / saturation flags) run every lane one by one, in order,
// so random numbers are drawn as element by element. docs/numerics.md, "Fast paths".
#pragma once

#include <cstddef>
#include <cstdint>

#include "wafersim/numerics/fp_control.hpp"
#include "wafersim/numerics/lfsr.hpp"

namespace wafersim::numerics {

// The builds of the lane loops: `automatic` is the one picked at load time; `simd` needs
// AVX2 and F16C (asking for it elsewhere raises ConfigError), `portable` is the scalar
// fast path lane by lane.
enum class LanesBuild : uint8_t { automatic, portable, simd };

bool host_has_lane_simd();
LanesBuild loaded_lanes_build();  // portable or simd

void fast_fma16_lanes(const uint16_t* a, const uint16_t* b, const uint16_t* c, uint16_t* out,
                      size_t n, const FpControl& ctl, LfsrBank* rng,
                      LanesBuild build = LanesBuild::automatic);
void fast_fma32_lanes(const uint32_t* a, const uint32_t* b, const uint32_t* c, uint32_t* out,
                      size_t n, const FpControl& ctl, LfsrBank* rng,
                      LanesBuild build = LanesBuild::automatic);

}  // namespace wafersim::numerics
