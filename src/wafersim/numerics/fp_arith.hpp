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
// Add, subtract and multiply are one fused multiply-add x * y + z each (so one rounding):
// a + b = a * 1 + b, a - b = a + (-b) (a NaN b keeps its sign), a * b = a * b + (-0)
// (exactly a * b, including the sign of a zero product). The reference's and the fast
// paths' operations all form them here.
struct FmaOperands {
  uint64_t x, y, z;
};
inline FmaOperands add_as_fma(uint64_t a, uint64_t b, const FloatFormat& f) {
  return {a, static_cast<uint64_t>(f.bias()) << f.man_bits, b};
}
inline FmaOperands sub_as_fma(uint64_t a, uint64_t b, const FloatFormat& f) {
  return add_as_fma(a, is_nan(b, f) ? b : (b ^ f.sign_mask()), f);
}
inline FmaOperands mul_as_fma(uint64_t a, uint64_t b, const FloatFormat& f) {
  return {a, b, f.sign_mask()};
}

uint64_t add_bits(uint64_t a, uint64_t b, const FloatFormat& f, const FpControl& ctl,
                  LfsrBank* rng);
uint64_t sub_bits(uint64_t a, uint64_t b, const FloatFormat& f, const FpControl& ctl,
                  LfsrBank* rng);
uint64_t mul_bits(uint64_t a, uint64_t b, const FloatFormat& f, const FpControl& ctl,
                  LfsrBank* rng);

}  // namespace wafersim::numerics
