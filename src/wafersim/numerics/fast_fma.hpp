// Fused multiply-add, add, subtract and multiply of fp16 and fp32 values computed with the
// host's floating point: bit for bit what the software routines of fp_arith.hpp return
// (they stay the reference), and several times faster. The sum is formed rounded to odd in
// a wide host format and then rounded once to the target format (round_to_odd.hpp); fp16
// uses the F16C conversion instructions where the host has them, chosen when the library
// loads. Operands that are infinite or NaN, and modes the fast path cannot round exactly,
// go to the reference. docs/numerics.md says which mode takes which path.
#pragma once

#include <cstdint>

#include "wafersim/numerics/float_format.hpp"
#include "wafersim/numerics/fp_control.hpp"
#include "wafersim/numerics/lfsr.hpp"

namespace wafersim::numerics {

// The builds of the fp16 fast path: `automatic` is the one picked at load time.
enum class Fp16Build : uint8_t { automatic, portable, f16c };

bool host_has_f16c();     // whether the F16C build can run here
Fp16Build loaded_fp16_build();  // portable or f16c

// a * b + c with one rounding, as fma_bits. `build` other than automatic is for tests;
// asking for f16c on a host without it raises ConfigError.
uint16_t fast_fma16(uint16_t a, uint16_t b, uint16_t c, const FpControl& ctl, LfsrBank* rng,
                    Fp16Build build = Fp16Build::automatic);
uint32_t fast_fma32(uint32_t a, uint32_t b, uint32_t c, const FpControl& ctl, LfsrBank* rng);

// Any format: fp16 and fp32 take the fast paths above, others (bf16) the reference.
uint64_t fast_fma_bits(uint64_t a, uint64_t b, uint64_t c, const FloatFormat& f,
                       const FpControl& ctl, LfsrBank* rng);
uint64_t fast_add_bits(uint64_t a, uint64_t b, const FloatFormat& f, const FpControl& ctl,
                       LfsrBank* rng);
uint64_t fast_sub_bits(uint64_t a, uint64_t b, const FloatFormat& f, const FpControl& ctl,
                       LfsrBank* rng);
uint64_t fast_mul_bits(uint64_t a, uint64_t b, const FloatFormat& f, const FpControl& ctl,
                       LfsrBank* rng);

}  // namespace wafersim::numerics
