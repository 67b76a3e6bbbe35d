// Format conversions: fp16 <-> fp32 (and bf16, fp64 sources) under any rounding mode.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>

#include "wafersim/numerics/float_format.hpp"
#include "wafersim/numerics/fp_control.hpp"
#include "wafersim/numerics/lfsr.hpp"

namespace wafersim::numerics {

inline uint32_t float_bits(float x) { uint32_t b; std::memcpy(&b, &x, 4); return b; }
inline float bits_float(uint32_t b) { float x; std::memcpy(&x, &b, 4); return x; }
inline uint64_t double_bits(double x) { uint64_t b; std::memcpy(&b, &x, 8); return b; }

// Any format to any format. Widening is exact; narrowing rounds once under `ctl`.
uint64_t convert_bits(uint64_t bits, const FloatFormat& from, const FloatFormat& to,
                      const FpControl& ctl, LfsrBank* rng);

// fp16 -> fp32 is exact for every one of the 65,536 patterns.
float fp16_to_fp32(uint16_t h);

// fp32 -> fp16, round to nearest even, IEEE subnormals, no saturation: the default path.
uint16_t fp32_to_fp16_rne(float x);

// fp64 -> fp16, round to nearest even, IEEE subnormals, no saturation (one rounding).
uint16_t fp64_to_fp16_rne(double x);

// Whether `ctl` asks for nothing beyond the default path above.
inline bool is_default_rne(const FpControl& ctl) {
  return ctl.mode == RoundingMode::nearest_even && ctl.subnormals == Subnormals::keep &&
         !ctl.max_sat && !ctl.min_sat;
}

// Element-wise narrowing of whole arrays (in.size() == out.size()).
void round_to_fp16(std::span<const float> in, std::span<uint16_t> out, const FpControl& ctl,
                   LfsrBank* rng);
void round_to_fp16(std::span<const double> in, std::span<uint16_t> out, const FpControl& ctl,
                   LfsrBank* rng);
void fp16_to_fp32(std::span<const uint16_t> in, std::span<float> out);

}  // namespace wafersim::numerics
