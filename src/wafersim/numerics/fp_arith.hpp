// Floating-point arithmetic on raw bit patterns of a format (fp16, bf16, fp32): each
// operation computes the exact result and rounds once [0669]-[0673], so a fused
// multiply-add rounds once and stochastic rounding sees every lower bit. This is the
// reference, in integer arithmetic only; the compute element uses the faster fast_fma.hpp,
// which gives the same bits.
#pragma once

#include <cstdint>

#include "wafersim/numerics/float_format.hpp"
#include "wafersim/numerics/fp_control.hpp"
#include "wafersim/numerics/lfsr.hpp"

namespace wafersim::numerics {

// a * b + c with one rounding.
uint64_t fma_bits(uint64_t a, uint64_t b, uint64_t c, const FloatFormat& f,
                  const FpControl& ctl, LfsrBank* rng);
uint64_t add_bits(uint64_t a, uint64_t b, const FloatFormat& f, const FpControl& ctl,
                  LfsrBank* rng);
uint64_t sub_bits(uint64_t a, uint64_t b, const FloatFormat& f, const FpControl& ctl,
                  LfsrBank* rng);
uint64_t mul_bits(uint64_t a, uint64_t b, const FloatFormat& f, const FpControl& ctl,
                  LfsrBank* rng);

}  // namespace wafersim::numerics
